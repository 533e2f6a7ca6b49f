// ws::PoolStats: counters a pool reports through stats(). Lessons fill in the counters that
// their idea introduces; the others stay zero.
#pragma once

#include <cstdint>
#include <numeric>
#include <vector>

namespace ws {

struct PoolStats {
    std::vector<std::uint64_t> executed_per_worker;  // tasks run by each worker
    std::uint64_t steals = 0;          // successful steal operations (a batch counts once)
    std::uint64_t steal_attempts = 0;  // steal operations tried, successful or not
    std::uint64_t stolen_tasks = 0;    // tasks moved by steals, batches included
    std::uint64_t injector_takes = 0;  // takes from the global injector
    std::uint64_t parks = 0;           // times a worker went to sleep
    std::uint64_t wakeups = 0;         // times a sleeping worker was woken

    std::uint64_t executed() const {
        return std::accumulate(executed_per_worker.begin(), executed_per_worker.end(),
                               std::uint64_t{0});
    }
};

}  // namespace ws
