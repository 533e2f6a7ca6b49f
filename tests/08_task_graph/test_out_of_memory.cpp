// Lesson 08: a ready node whose push runs out of memory. pool.push throws std::bad_alloc when a
// worker's deque must grow and cannot; the node is ready all the same, so start() (exercise 1)
// and release_successors() (exercise 2) must still run it, exactly once, and the run ends as
// any run does: run() returns, or rethrows a node's exception (exercise 4). The tests of
// start() are in suite Lesson08Ex4: they run a graph a second time (exercise 3).
//
// Deterministic: a node's task turns on refuse_allocations() for its own worker thread, and
// every operator new that thread makes then throws std::bad_alloc, until a later node turns it
// off. On a pool of one worker whose deque starts with room for kRoom jobs, the first kRoom
// pushes fit and every later one needs a growth, which fails: which nodes are pushed and which
// must run at once is known in advance.
//
// How an allocation is refused: <ws/testing/failing_new.hpp> (ld --wrap of operator new, set by
// ws_fail_allocations_on_demand in the root CMakeLists.txt), which works in the plain build
// and under both sanitizers.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include <ws/testing/failing_new.hpp>
#include <ws/testing/thread_state.hpp>
#include <ws/testing/wait.hpp>

#include "exercises.hpp"
#include "helpers.hpp"

namespace {

using lesson08_test::Node;
using lesson08_test::TaskGraph;
using ws::lesson08::Config;
using ws::lesson08::ThreadPool;

constexpr std::size_t kRoom = 4;   // the deque's first capacity
constexpr std::size_t kWide = 64;  // nodes released at once: kWide - kRoom pushes fail

using ws::testing::refuse_allocations;  // for the calling thread (a worker: a node's task)

std::uint64_t refused_so_far() {
    return ws::testing::failed_allocations();
}

struct NodeFailed {};  // thrown by a node; allocates nothing

// A graph, the pool of one worker with a deque of kRoom slots that runs it, and the nodes' run
// counts (kept without allocating: the tasks run while allocations are refused).
struct RefusedRun {
    explicit RefusedRun(std::size_t nodes) : runs(nodes) {}

    TaskGraph graph;  // first: destroyed after the pool, which may still hold its nodes
    ThreadPool pool{Config{.num_workers = 1, .local_queue_capacity = kRoom}};
    std::vector<std::atomic<int>> runs;
    std::atomic<int> early{0};  // nodes that started before a predecessor had finished
    std::atomic<bool> threw_bad_alloc{false}, threw_node_failed{false}, threw_other{false};
    // Set once run() has returned; and by the probe (run_refusing_allocations) if it ran first.
    std::atomic<bool> run_returned{false}, waits_after_its_last_node{false};

    void ran(std::size_t i) { runs[i].fetch_add(1, std::memory_order_relaxed); }
    int runs_of(std::size_t i) const { return runs[i].load(std::memory_order_relaxed); }
    void expect_done(std::size_t i) {
        if (runs_of(i) != 1) early.fetch_add(1, std::memory_order_relaxed);
    }
    // How many of the nodes [begin, end) ran other than once, and more than once.
    std::size_t not_once(std::size_t begin, std::size_t end) const {
        return count_nodes(begin, end, [](int r) { return r != 1; });
    }
    std::size_t more_than_once(std::size_t begin, std::size_t end) const {
        return count_nodes(begin, end, [](int r) { return r > 1; });
    }
    void forget_runs() {
        for (auto& r : runs)
            r.store(0);
    }
    // The cycle check allocates: run once on another pool, the graph is not checked again.
    void check_for_cycles_once() {
        ThreadPool other(1);
        try {
            ws::lesson08::run(other, graph);
        } catch (const NodeFailed&) {
        }
        forget_runs();
    }
    // run(pool, graph) from a task of the pool that refuses allocations, so that start()'s
    // pushes beyond the deque's kRoom slots fail; what it threw is recorded.
    // With `probe`, a task goes first onto the worker's deque, under the nodes (it takes one of
    // the kRoom slots). The only worker pops it last, so it reaches it, helping inside run(), only
    // once every node in the deque has run; a run() whose last node has finished has returned by
    // then. One that still waits never returns (nothing is left to count down): the probe says
    // so at once, and returns_within stops waiting.
    void run_refusing_allocations(bool probe = false) {
        lesson08_test::on_worker(pool, [this, probe] {
            if (probe) {
                pool.spawn([this] {  // allocates nothing when it runs: allocations are refused
                    if (!run_returned.load()) waits_after_its_last_node = true;
                });
            }
            refuse_allocations(true);
            try {
                ws::lesson08::run(pool, graph);
            } catch (const std::bad_alloc&) {
                threw_bad_alloc = true;
            } catch (const NodeFailed&) {
                threw_node_failed = true;
            } catch (...) {
                threw_other = true;
            }
            run_returned = true;
            refuse_allocations(false);
        });
    }
    // Of what run_refusing_allocations recorded: run() let no std::bad_alloc out, nor anything
    // but a node's exception.
    void expect_no_bad_alloc_got_out() const {
        EXPECT_FALSE(threw_bad_alloc.load())
            << "run() threw the push's std::bad_alloc: a ready source whose push fails must run "
               "right there (start may not throw while the sources pushed before it run)";
        EXPECT_FALSE(threw_other.load()) << "run() threw something that is not a node's exception";
    }

  private:
    template <typename Pred>
    std::size_t count_nodes(std::size_t begin, std::size_t end, Pred pred) const {
        std::size_t n = 0;
        for (std::size_t i = begin; i < end; ++i)
            n += pred(runs_of(i));
        return n;
    }
};

// f(setup) on a thread of its own; false if it has not returned within 5 s (scaled), or if the
// probe saw the run wait after its last node first; then `setup` is leaked: the run that hangs
// still uses it. (A node whose push failed and that is then dropped leaves the run waiting for
// ever.) Once it has returned, at least one allocation must have been refused meanwhile, or the
// test proves nothing.
template <typename F>
bool returns_within(std::unique_ptr<RefusedRun>& setup, F f) {
    const std::uint64_t refused_before = refused_so_far();
    RefusedRun* s = setup.get();
    ws::testing::DetachedCall call([s, f] { f(*s); });
    const bool returned = call.wait_for(std::chrono::seconds(5 * ws::testing::slowdown()),
                                        [s] { return s->waits_after_its_last_node.load(); });
    if (!returned) {
        (void)setup.release();
        return false;
    }
    EXPECT_GT(refused_so_far(), refused_before)
        << "no push was refused: the test did not reach the out-of-memory path";
    return true;
}

// The graph's second run, from a task of the pool that refuses allocations, so that start()'s
// pushes beyond the deque's kRoom slots fail (the first run, on another pool, checked the graph
// for cycles, which allocates); as returns_within.
bool second_run_refusing_allocations_returns(std::unique_ptr<RefusedRun>& setup,
                                             bool probe = false) {
    setup->check_for_cycles_once();
    return returns_within(setup, [probe](RefusedRun& x) { x.run_refusing_allocations(probe); });
}

}  // namespace

// start() (exercise 1): kWide independent nodes; start's pushes beyond the deque's first kRoom
// fail. In suite Lesson08Ex4, an error, because the failing run is the graph's second (the
// first checked for cycles, which allocates): it needs exercise 3's reset.
TEST(Lesson08Ex4, ASourceWhosePushRunsOutOfMemoryStillRunsOnce) {
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    auto setup = std::make_unique<RefusedRun>(kWide);
    RefusedRun* s = setup.get();
    for (std::size_t i = 0; i < kWide; ++i)
        s->graph.emplace([s, i] { s->ran(i); });
    ASSERT_TRUE(second_run_refusing_allocations_returns(setup, /*probe=*/true))
        << (s->waits_after_its_last_node.load()
                ? "every source in the deque has run, yet run() still waits: did the sources run "
                  "at once (their push failed) count down before pending_ held this run's count?"
                : "run() did not return: a source whose push failed was dropped?");
    s->expect_no_bad_alloc_got_out();
    EXPECT_EQ(s->not_once(0, kWide), 0u) << "sources that did not run exactly once";
}

// start() (exercise 1) while a source it pushed already runs: the loop must push only the nodes
// that have no predecessor (not those whose counter it finds at zero), and must not set a
// counter that a node it pushed may already have decremented. Forced: on a pool of two workers,
// `a` (a source, first in the graph), kWide more sources, then `b`, a's successor. start's pushes
// beyond the deque's kRoom slots fail, so the first source it must run at once runs inside
// start's loop, on the worker that runs run(); it holds the loop until the other worker has
// stolen `a` (the oldest job there), run it and then run `b` — or, if `b` was not released, has
// gone to sleep. Only then does the loop reach `b`. In suite Lesson08Ex4: the failing run is the
// graph's second (the first, on another pool, checked for cycles, which allocates).
TEST(Lesson08Ex4, ANodeReleasedWhileStartStillPushesRunsOnce) {
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    struct Setup {
        TaskGraph graph;  // first: destroyed after the pool, which may still hold its nodes
        ThreadPool pool{Config{.num_workers = 2, .local_queue_capacity = kRoom}};
        std::atomic<int> a_runs{0}, b_runs{0}, source_runs{0};
        std::atomic<ws::testing::ThreadId> a_worker{0};
        std::atomic<bool> armed{false};  // the second run: the first source on `starter` holds
        std::atomic<ws::testing::ThreadId> starter{0};  // the worker that runs run()
        std::atomic<bool> first_on_starter{true};
        std::atomic<std::uint64_t> refused_before{0};
        std::atomic<bool> held{false};  // the hold happened: inside start's loop, until b ran
        // The hold saw a's worker asleep, `b` not run: nothing will release it any more.
        std::atomic<bool> b_abandoned{false};
        std::atomic<bool> threw{false};
    };
    auto setup = std::make_unique<Setup>();
    Setup* s = setup.get();
    Node a = s->graph.emplace([s] {
        s->a_worker = ws::testing::current_thread_id();
        s->a_runs.fetch_add(1);
    });
    for (std::size_t i = 0; i < kWide; ++i) {
        s->graph.emplace([s] {  // allocates nothing unless it holds: allocations may be refused
            s->source_runs.fetch_add(1);
            if (!s->armed.load() || ws::testing::current_thread_id() != s->starter.load() ||
                !s->first_on_starter.exchange(false))
                return;
            // The first source on run()'s worker runs inside start's loop if a push has failed
            // (it is the node of that push); otherwise after the loop, and nothing is forced.
            const bool in_start = refused_so_far() > s->refused_before.load();
            refuse_allocations(false);  // reading /proc allocates
            const auto bound = std::chrono::seconds(5) * ws::testing::slowdown();
            const auto b_ran = [s] { return s->b_runs.load() != 0; };
            ws::testing::wait_until([&] { return b_ran() || s->a_runs.load() != 0; }, bound);
            const bool asleep = ws::testing::wait_until_all(
                {s->a_worker.load()},
                [&](ws::testing::ThreadId tid) { return b_ran() || ws::testing::asleep(tid); },
                bound);
            s->held = in_start && b_ran();
            s->b_abandoned = asleep && !b_ran();
            refuse_allocations(true);
        });
    }
    Node b = s->graph.emplace([s] { s->b_runs.fetch_add(1); });
    a.precede(b);
    {
        ThreadPool other(1);                 // not s->pool, whose deque would grow
        ws::lesson08::run(other, s->graph);  // checks for cycles (allocates)
    }
    ASSERT_EQ(s->b_runs.load(), 1);
    s->a_runs = 0;
    s->b_runs = 0;
    s->source_runs = 0;
    s->refused_before = refused_so_far();
    s->armed = true;

    ws::testing::DetachedCall call([s] {
        lesson08_test::on_worker(s->pool, [s] {
            s->starter = ws::testing::current_thread_id();
            refuse_allocations(true);
            try {
                ws::lesson08::run(s->pool, s->graph);
            } catch (...) {
                s->threw = true;
            }
            refuse_allocations(false);
        });
    });
    // A `b` run twice, or never, is the failure; the run may then never return.
    const bool returned = call.wait_for(std::chrono::seconds(10 * ws::testing::slowdown()), [s] {
        return s->b_runs.load() > 1 || s->b_abandoned.load();
    });
    if (!returned) (void)setup.release();  // the run that hangs still uses it
    EXPECT_LE(s->b_runs.load(), 1)
        << "a's successor ran twice: released by `a`, it ran on the other worker, and start() "
           "pushed it again, having found its counter at zero. start() must push only the nodes "
           "that have no predecessor";
    EXPECT_FALSE(s->b_abandoned.load())
        << "a's successor was never released: `a` ran on the other worker while start() still "
           "pushed, and its decrement was lost (did start() set the counters as it pushed? they "
           "must all be set before the first push)";
    ASSERT_TRUE(returned) << "run() did not return";
    EXPECT_FALSE(s->threw.load()) << "run() threw";
    EXPECT_EQ(s->a_runs.load(), 1);
    EXPECT_EQ(s->b_runs.load(), 1);
    EXPECT_EQ(s->source_runs.load(), static_cast<int>(kWide));
    EXPECT_TRUE(s->held.load())
        << "no source held start's loop until `b` had run: the test proves nothing this time";
}

// release_successors(): a source before kWide middles before a sink. The source's task refuses
// allocations, so its release pushes only kRoom middles and must run the others at once; the
// sink's task stops refusing. (A std::bad_alloc out of a node's Job ends the process.)
TEST(Lesson08Ex2, ASuccessorWhosePushRunsOutOfMemoryStillRunsOnce) {
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    auto setup =
        std::make_unique<RefusedRun>(kWide + 2);  // 0: source, 1..kWide: middles, then sink
    RefusedRun* s = setup.get();
    constexpr std::size_t kSink = kWide + 1;
    Node source = s->graph.emplace([s] {
        s->ran(0);
        refuse_allocations(true);
    });
    Node sink = s->graph.emplace([s] {
        refuse_allocations(false);
        for (std::size_t i = 1; i <= kWide; ++i)
            s->expect_done(i);
        s->ran(kSink);
    });
    for (std::size_t i = 1; i <= kWide; ++i) {
        Node middle = s->graph.emplace([s, i] {
            s->expect_done(0);
            s->ran(i);
        });
        source.precede(middle);
        middle.precede(sink);
    }

    ASSERT_TRUE(returns_within(setup, [](RefusedRun& x) {
        ws::lesson08::run(x.pool, x.graph);
        lesson08_test::on_worker(x.pool, [] { refuse_allocations(false); });  // if the sink did not
    })) << "run() did not return: a successor whose push failed was dropped?";
    EXPECT_EQ(s->not_once(0, kWide + 2), 0u) << "nodes that did not run exactly once";
    EXPECT_EQ(s->early.load(), 0) << "nodes that started before a predecessor had finished";

    // Nothing of the failure remains: the graph runs again, and the deque can grow now.
    ws::lesson08::run(s->pool, s->graph);
    for (std::size_t i = 0; i < kWide + 2; ++i)
        EXPECT_EQ(s->runs_of(i), 2) << "node " << i << " in the second run";
}

// A node run at once because its push failed, and which throws: the run ends as any failed run
// does: kWide sources before a sink, and one of the sources start() must run at once throws. One
// worker: the sources pushed before it have not started, so they are skipped, as are the
// sources after it and the sink; none runs twice, and run() rethrows the node's exception.
TEST(Lesson08Ex4, ANodeRunAtOnceAfterAFailedPushThatThrowsEndsTheRunAsAnyFailure) {
    WS_SKIP_UNLESS_ALLOCATIONS_CAN_FAIL();
    auto setup = std::make_unique<RefusedRun>(kWide + 1);
    RefusedRun* s = setup.get();
    constexpr std::size_t kThrower = kRoom + 5;  // among the sources start() must run at once
    Node sink = s->graph.emplace([s] { s->ran(kWide); });
    for (std::size_t i = 0; i < kWide; ++i) {
        s->graph
            .emplace([s, i] {
                s->ran(i);
                if (i == kThrower) throw NodeFailed{};
            })
            .precede(sink);
    }
    ASSERT_TRUE(second_run_refusing_allocations_returns(setup)) << "run() did not return";
    EXPECT_TRUE(s->threw_node_failed.load())
        << "run() did not rethrow the exception of the node it ran at once";
    s->expect_no_bad_alloc_got_out();
    EXPECT_EQ(s->more_than_once(0, kWide + 1), 0u) << "nodes that ran more than once";
    EXPECT_EQ(s->runs_of(kThrower), 1);
    EXPECT_EQ(s->runs_of(kWide), 0) << "the sink ran after a source had failed";
    for (std::size_t i = 0; i < kWide; ++i) {
        if (i == kThrower) continue;
        const bool before_the_failure = i >= kRoom && i < kThrower;
        EXPECT_EQ(s->runs_of(i), before_the_failure ? 1 : 0)
            << "source " << i
            << (before_the_failure ? ", run at once before the failure,"
                                   : ", not started before the failure,");
    }
}
