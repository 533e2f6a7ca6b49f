// Uses lesson 04's Chase-Lev deque and pool from a project that pulled the workshop in with
// add_subdirectory() (see CMakeLists.txt next to this file). Exits nonzero on a wrong result.
#include <atomic>
#include <cstdio>
#include <optional>

#include "chase_lev_deque.hpp"
#include "thread_pool.hpp"

namespace {

bool deque_works() {
    ws::lesson04::ChaseLevDeque<int> deque(2);  // small, so the pushes below make it grow
    for (int i = 1; i <= 5; ++i)
        deque.push(i);
    const std::optional<int> newest = deque.pop();  // the owner takes the newest
    auto oldest = deque.steal();                    // a thief takes the oldest
    if (!newest || *newest != 5) return false;
    if (!oldest.is_success() || oldest.value() != 1) return false;
    return deque.size() == 3;
}

bool pool_works() {
    // Ten tasks from outside, each spawning ten children onto its worker's deque (where the
    // other worker can steal them); wait_idle waits for all 110.
    std::atomic<int> ran{0};
    ws::lesson04::ThreadPool pool(2);
    for (int i = 0; i < 10; ++i) {
        pool.spawn([&pool, &ran] {
            for (int j = 0; j < 10; ++j)
                pool.spawn([&ran] { ran.fetch_add(1); });
            ran.fetch_add(1);
        });
    }
    pool.wait_idle();
    return ran.load() == 110;
}

}  // namespace

int main() {
    const bool deque_ok = deque_works();
    const bool pool_ok = pool_works();
    std::printf("ws subproject: lesson 04 deque %s, pool %s\n", deque_ok ? "ok" : "WRONG",
                pool_ok ? "ok" : "WRONG");
    return deque_ok && pool_ok ? 0 : 1;
}
