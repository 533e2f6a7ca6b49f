// Tests of the timeline recorder (<ws/trace.hpp>): lanes written by their own worker only,
// nothing recorded unless a recorder is installed and the build traces, a full lane drops and
// counts, and the Chrome trace output.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <ws/trace.hpp>

void traced_hooks_record_a_task(std::size_t worker);  // trace_hooks_on.cpp
void traced_hooks_record_a_steal(std::size_t worker, int victim, int& stolen);

namespace {

using ws::trace::What;

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

struct Installed {
    explicit Installed(ws::trace::Recorder& r) { ws::trace::install(&r); }
    ~Installed() {
        ws::trace::install(nullptr);
        ws::trace::attach_worker(0);  // detaches this thread: nothing is installed
    }
};

TEST(Trace, EachWorkerWritesItsOwnLaneInTimeOrder) {
    ws::trace::Recorder recorder(4, 4096);
    Installed installed(recorder);
    std::vector<std::thread> workers;
    for (std::size_t w = 0; w < 4; ++w) {
        workers.emplace_back([w] {
            ws::trace::attach_worker(w);
            for (int i = 0; i < 1000; ++i) {
                ws::trace::record(What::task_begin);
                ws::trace::record(What::steal, static_cast<int>((w + 1) % 4), i % 3);
                ws::trace::record(What::task_end);
            }
        });
    }
    for (auto& t : workers)
        t.join();
    for (std::size_t w = 0; w < 4; ++w) {
        const auto& lane = recorder.lane(w);
        ASSERT_EQ(lane.size(), 3000u) << "worker " << w;
        EXPECT_EQ(lane.dropped(), 0u);
        EXPECT_TRUE(std::is_sorted(lane.begin(), lane.end(),
                                   [](const auto& x, const auto& y) { return x.ns < y.ns; }));
        EXPECT_EQ(lane.begin()[1].what, What::steal);
        EXPECT_EQ(lane.begin()[1].a, static_cast<int>((w + 1) % 4)) << "the victim";
    }
}

TEST(Trace, AFullLaneDropsAndCountsInsteadOfGrowing) {
    ws::trace::Recorder recorder(1, 10);
    Installed installed(recorder);
    ws::trace::attach_worker(0);
    for (int i = 0; i < 25; ++i)
        ws::trace::record(What::task_begin);
    EXPECT_EQ(recorder.lane(0).size(), 10u);
    EXPECT_EQ(recorder.lane(0).dropped(), 15u);
}

TEST(Trace, NothingIsRecordedWithoutARecorderOrOutsideATraceBuild) {
    ws::trace::Recorder recorder(2, 16);
    ws::trace::attach_worker(0);  // nothing installed yet: no lane
    ws::trace::record(What::task_begin);
    {
        Installed installed(recorder);
        ws::trace::attach_worker(5);  // a worker the recorder has no lane for
        ws::trace::record(What::task_begin);
        ws::trace::attach_worker(1);
        WS_TRACE_EVENT(task_begin);  // this file is not a trace build: the hook is empty
        EXPECT_EQ(recorder.lane(0).size() + recorder.lane(1).size(), 0u);
        traced_hooks_record_a_task(1);  // the same hooks, compiled with WS_TRACE=1
        EXPECT_EQ(recorder.lane(1).size(), 2u);
    }
}

TEST(Trace, ATraceLocalIsComputedInTraceBuildsOnly) {
    int evaluated = 0;
    WS_TRACE_LOCAL(unused, ++evaluated);  // this file is not a trace build: not even evaluated
    EXPECT_EQ(evaluated, 0);
    ws::trace::Recorder recorder(2, 16);
    Installed installed(recorder);
    int stolen = 5;
    traced_hooks_record_a_steal(1, 0, stolen);  // compiled with WS_TRACE=1
    EXPECT_EQ(stolen, 8);
    ASSERT_EQ(recorder.lane(1).size(), 1u);
    const ws::trace::Event& e = recorder.lane(1).begin()[0];
    EXPECT_EQ(e.what, What::steal);
    EXPECT_EQ(e.a, 0) << "the victim";
    EXPECT_EQ(e.b, 3) << "the count after, less the count before";
}

// The events' clock is the processor's counter, converted with a rate the recorder measures:
// a wrong rate (ticks taken for nanoseconds) would stretch every slice about threefold.
TEST(Trace, EventTimesAreNanosecondsOfTheSteadyClock) {
    using Clock = std::chrono::steady_clock;
    ws::trace::Recorder recorder(1, 16);
    Installed installed(recorder);
    ws::trace::attach_worker(0);
    const auto start = Clock::now();
    ws::trace::record(What::task_begin);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ws::trace::record(What::task_end);
    const auto elapsed = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
    const auto recorded =
        static_cast<double>(recorder.lane(0).begin()[1].ns - recorder.lane(0).begin()[0].ns);
    // 1 % for the rate's error, which is a few parts per million.
    EXPECT_GE(recorded, 50e6 * 0.99) << "the task slept for 50 ms";
    EXPECT_LE(recorded, elapsed * 1.01) << "steady_clock saw " << elapsed << " ns";
    EXPECT_GE(recorder.now_ns(), recorder.lane(0).begin()[1].ns);
}

TEST(Trace, TheChromeTraceHasALanePerWorkerAndBalancedSlices) {
    ws::trace::Recorder recorder(2, 64);
    Installed installed(recorder);
    ws::trace::attach_worker(1);
    ws::trace::record(What::task_begin);
    ws::trace::record(What::help_begin);
    ws::trace::record(What::steal, 0, 3);
    ws::trace::record(What::help_end);
    ws::trace::record(What::task_end);
    ws::trace::record(What::injector_take, -1, 2);
    ws::trace::record(What::park);
    ws::trace::record(What::wake);
    std::ostringstream out;
    ws::trace::write_chrome_trace(out, recorder);
    const std::string json = out.str();
    EXPECT_EQ(json.front(), '{');
    EXPECT_EQ(count(json, R"("name":"thread_name")"), 2u);
    EXPECT_EQ(count(json, R"("ph":"B")"), 3u);
    EXPECT_EQ(count(json, R"("ph":"E")"), 3u);
    EXPECT_NE(json.find(R"("args":{"victim":0,"got":3})"), std::string::npos) << json;
    EXPECT_NE(json.find(R"("name":"injector","ph":"i","pid":1,"tid":1)"), std::string::npos)
        << json;
    EXPECT_NE(json.find(R"("dropped":[0,0])"), std::string::npos) << json;
}

}  // namespace
