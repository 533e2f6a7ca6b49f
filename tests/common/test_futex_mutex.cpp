// Tests of ws::FutexMutex: mutual exclusion under contention, and a contended waiter that
// sleeps in the kernel instead of spinning.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include <ws/futex_mutex.hpp>
#include <ws/testing/harness.hpp>
#include <ws/testing/wait.hpp>

namespace {

// More threads than cores, each holding the lock briefly, many times: the contended path
// (sleep, wake, hand over) runs again and again. A plain counter under the lock must come out
// exact, and ThreadSanitizer reports any increment the lock failed to order.
TEST(FutexMutex, NoTwoThreadsHoldItAtOnce) {
    constexpr int kThreads = 6;
    constexpr int kRounds = 20'000;
    ws::FutexMutex mutex;
    std::uint64_t counter = 0;  // guarded by mutex: deliberately not atomic
    int inside = 0;             // guarded by mutex: more than 1 means two owners
    int max_inside = 0;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < kRounds; ++i) {
                std::lock_guard lock(mutex);
                ++inside;
                max_inside = std::max(max_inside, inside);
                ++counter;
                if (i % 64 == 0) std::this_thread::yield();  // be preempted holding it, too
                --inside;
            }
        });
    }
    for (auto& t : threads)
        t.join();
    EXPECT_EQ(counter, std::uint64_t{kThreads} * kRounds) << "an increment was lost";
    EXPECT_EQ(max_inside, 1) << "two threads held the lock at once";
}

// A thread that finds the lock taken sleeps until it is released: the process burns next to no
// CPU meanwhile, and the unlock wakes it.
TEST(FutexMutex, AWaiterSleepsAndTheUnlockWakesIt) {
    ws::FutexMutex mutex;
    mutex.lock();
    std::atomic<bool> waiting{false}, acquired{false};
    std::thread waiter([&] {
        waiting.store(true);
        std::lock_guard lock(mutex);
        acquired.store(true);
    });
    ASSERT_TRUE(
        ws::testing::wait_until([&] { return waiting.load(); }, std::chrono::milliseconds(5000)));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let it reach the futex
    const double cpu0 = ws::testing::process_cpu_seconds();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const double used = ws::testing::process_cpu_seconds() - cpu0;
    EXPECT_FALSE(acquired.load()) << "the waiter took a lock that was held";
    // A spinning waiter would use the whole 300 ms of one core; a sleeping one a few system
    // calls. A third of that leaves room for a sanitizer's own threads, and none for spinning.
    EXPECT_LT(used, 0.1) << "the waiter used " << used * 1e3
                         << " ms of CPU in 300 ms: it spins instead of sleeping";
    mutex.unlock();
    waiter.join();  // hangs (the watchdog reports it) if the unlock did not wake the waiter
    EXPECT_TRUE(acquired.load());
}

}  // namespace
