// Lesson 03's out-of-memory tests of WorkerQueue (test_ex2_*out_of_memory.cpp): numbered tasks
// that log when they run and count themselves lost when destroyed unrun, and a steal made with
// this thread's allocations armed to fail (<ws/testing/failing_new.hpp>).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <utility>
#include <vector>

#include <ws/task.hpp>
#include <ws/testing/failing_new.hpp>

#include "worker_queue.hpp"

namespace lesson03_oom {

// What the tasks of a test did: the ids they ran with, and how many were destroyed without ever
// running (a task lost on the way).
struct Record {
    std::vector<int> ran;
    int destroyed_unrun = 0;
};

// A task that logs its id when it runs and counts itself lost if it is destroyed unrun. Small
// and nothrow-movable, so a Task keeps it inline: making one allocates nothing.
class Logged {
  public:
    Logged(Record& record, int id) : record_(&record), id_(id) {}
    Logged(Logged&& other) noexcept
        : record_(std::exchange(other.record_, nullptr)), id_(other.id_) {}
    Logged& operator=(Logged&&) = delete;
    ~Logged() {
        if (record_ != nullptr) ++record_->destroyed_unrun;
    }
    void operator()() { std::exchange(record_, nullptr)->ran.push_back(id_); }

  private:
    Record* record_;
    int id_;
};

inline void push_numbered(ws::lesson03::WorkerQueue& q, Record& record, int first, int n) {
    for (int i = first; i < first + n; ++i)
        q.push(Logged(record, i));
}

// The ids first, first + 1, ..., first + n - 1.
inline std::vector<int> ids(int first, int n) {
    std::vector<int> v;
    for (int i = first; i < first + n; ++i)
        v.push_back(i);
    return v;
}

// Runs the queue's tasks oldest first; returns the ids they logged. (An empty Task queued, a
// moved-from one, throws std::bad_function_call out of the test.)
inline std::vector<int> drain_oldest_first(ws::lesson03::WorkerQueue& q, Record& record) {
    record.ran.clear();
    while (std::optional<ws::Task> task = q.steal_one())
        (*task)();
    return record.ran;
}

// victim.steal_half_into(thief) with this thread's allocations failing after `successes` more;
// whether an exception left it goes into `escaped`.
inline std::size_t steal_with_failure_after(ws::lesson03::WorkerQueue& victim,
                                            ws::lesson03::WorkerQueue& thief,
                                            std::int64_t successes, bool& escaped) {
    {
        // Unarmed first, between two empty queues: an unfinished exercise says so here (its
        // NotImplemented), instead of failing below for lack of memory.
        ws::lesson03::WorkerQueue a, b;
        (void)a.steal_half_into(b);
    }
    struct Disarm {  // also when another exception leaves
        ~Disarm() { ws::testing::disarm_allocation_failures(); }
    } disarm;
    escaped = false;
    ws::testing::fail_allocation_after(successes);
    try {
        return victim.steal_half_into(thief);
    } catch (const std::bad_alloc&) {
        escaped = true;
        return 0;
    }
}

}  // namespace lesson03_oom
