// fib(n) by lesson 09's coroutines, without a cutoff: every call with n >= 2 co_awaits
// when_all of its two halves, each a child Task with a heap frame of its own, so fib(n) makes
// fib_joins(n) when_alls, and each wakes one child as a resume job of the pool. The coroutine
// counterpart of ws::bench::fib (lesson 07's join): bench 9 measures the two against each
// other, ./workshop trace 9 draws it. Leaves are the shared fib_leaf kernel.
#pragma once

#include <cstdint>

#include <ws/bench/kernel.hpp>

#include "09_coroutines/async.hpp"

namespace ws::bench {

inline lesson09::Task<std::uint64_t> fib_by_when_all(lesson09::ThreadPool& pool, std::uint64_t n) {
    if (n < 2) co_return fib_leaf(n);
    auto [x, y] = co_await lesson09::when_all(pool, fib_by_when_all(pool, n - 1),
                                              fib_by_when_all(pool, n - 2));
    co_return x + y;
}

}  // namespace ws::bench
