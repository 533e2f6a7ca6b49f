// The contenders that are not lessons, behind the same spawn/wait_idle interface as a pool.
#pragma once

#include <utility>

#if defined(WS_HAVE_TBB)
#include <oneapi/tbb/task_group.h>
#endif

namespace ws::bench {

// Runs every task at once on the calling thread: the sequential baseline. spawn_tree on it is
// a depth-first recursion; flat_spawn a plain loop.
struct Sequential {
    template <typename F>
    void spawn(F&& f) {
        std::forward<F>(f)();
    }
    void wait_idle() {}
};

#if defined(WS_HAVE_TBB)
// oneTBB's task_group: run() from anywhere, wait() helps with the work.
struct TbbTaskGroup {
    oneapi::tbb::task_group group;
    template <typename F>
    void spawn(F&& f) {
        group.run(std::forward<F>(f));
    }
    void wait_idle() { group.wait(); }
};
#endif

}  // namespace ws::bench
