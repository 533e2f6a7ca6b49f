// Lesson 03's queue tests (test_ex1_steal_half.cpp, test_ex2_steal_half_into.cpp): tasks that
// say, by logging their number, which ran and in what order.
#pragma once

#include <vector>

#include "worker_queue.hpp"

namespace lesson03_tests {

// Pushes tasks that append first, first + 1, ..., first + n - 1 to `log` when run.
inline void push_numbered(ws::lesson03::WorkerQueue& q, std::vector<int>& log, int first, int n) {
    for (int i = first; i < first + n; ++i)
        q.push([&log, i] { log.push_back(i); });
}

}  // namespace lesson03_tests
