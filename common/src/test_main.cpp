// main() for every lesson's tests: installs the watchdog, the terminate reporter and the seed
// reporter described in ws/testing/harness.hpp.
#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <typeinfo>

#include "ws/not_implemented.hpp"
#include "ws/testing/harness.hpp"

namespace ws::testing {
namespace {

using Clock = std::chrono::steady_clock;

std::map<std::string, ExerciseInfo>& exercises() {
    static std::map<std::string, ExerciseInfo> registry;
    return registry;
}

std::string current_test_name() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    if (info == nullptr) return "(outside any test)";
    return std::string(info->test_suite_name()) + "." + info->name();
}

const ExerciseInfo* current_exercise() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    if (info == nullptr) return nullptr;
    auto it = exercises().find(info->test_suite_name());
    return it == exercises().end() ? nullptr : &it->second;
}

std::string exercise_title() {
    const ExerciseInfo* ex = current_exercise();
    return ex ? ex->title : std::string("this test");
}

// One thread that sleeps until the running test's deadline; if the test is still running
// then, it reports and ends the process (CTest runs each test in a process of its own).
class Watchdog {
  public:
    Watchdog() : thread_([this] { run(); }) {}

    void arm(Clock::duration budget) {
        std::lock_guard lock(mutex_);
        test_ = current_test_name();
        title_ = exercise_title();
        const ExerciseInfo* ex = current_exercise();
        cause_ = ex ? ex->likely_cause : std::string();
        const std::string suite = test_.substr(0, test_.find('.'));
        const auto ex_at = suite.rfind("Ex");
        later_exercise_ = ex_at != std::string::npos && suite.substr(ex_at + 2) != "1";
        budget_ = budget;
        deadline_ = Clock::now() + budget;
        cv_.notify_one();
    }

    void disarm() {
        std::lock_guard lock(mutex_);
        deadline_.reset();
        cv_.notify_one();
    }

    // Ends the thread once the tests are over. Why it matters: ThreadSanitizer's runtime sleeps
    // a second at exit whenever another thread is still alive (its atexit_sleep_ms), which cost
    // every sanitized test process a second of doing nothing.
    void stop() {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
            cv_.notify_one();
        }
        thread_.join();
    }

  private:
    void run() {
        std::unique_lock lock(mutex_);
        for (;;) {
            if (stopping_) {
                return;
            } else if (!deadline_) {
                cv_.wait(lock);
            } else if (cv_.wait_until(lock, *deadline_) == std::cv_status::timeout && deadline_ &&
                       Clock::now() >= *deadline_) {
                const auto secs = std::chrono::duration_cast<std::chrono::seconds>(budget_);
                std::fprintf(stderr,
                             "\n[watchdog] %s did not finish within %lld s: it hangs.\n"
                             "[watchdog] exercise: %s\n"
                             "[watchdog] likely cause: %s\n",
                             test_.c_str(), static_cast<long long>(secs.count()), title_.c_str(),
                             cause_.empty() ? "a thread waits for something that never happens"
                                            : cause_.c_str());
                // A test of exercise K runs the code of exercises 1..K-1 too, and a hang there
                // (a missing notify, say) shows up here: the cause above may not be the one.
                if (later_exercise_) {
                    std::fprintf(stderr,
                                 "[watchdog] this test also runs the code of the lesson's "
                                 "earlier exercises: if one of them fails too, fix it "
                                 "first\n");
                }
                std::fflush(stderr);
                std::_Exit(3);
            }
        }
    }

    std::mutex mutex_;
    std::condition_variable cv_;
    std::optional<Clock::time_point> deadline_;
    Clock::duration budget_{};
    std::string test_, title_, cause_;
    bool later_exercise_ = false;  // the running test belongs to exercise 2 or later
    bool stopping_ = false;
    std::thread thread_;  // last: it starts in the constructor and uses the members above
};

Watchdog& watchdog() {
    static Watchdog* dog = new Watchdog;  // never destroyed: main() stops its thread instead
    return *dog;
}

std::optional<std::uint64_t>& seed_of_current_test() {
    static std::optional<std::uint64_t> seed;
    return seed;
}

class HarnessListener : public ::testing::EmptyTestEventListener {
    void OnTestStart(const ::testing::TestInfo&) override {
        seed_of_current_test().reset();
        watchdog().arm(std::chrono::seconds(30) * slowdown());
    }
    void OnTestEnd(const ::testing::TestInfo& info) override {
        watchdog().disarm();
        if (info.result()->Failed()) {
            std::fprintf(stderr, "[exercise] %s.%s checks %s\n", info.test_suite_name(),
                         info.name(), exercise_title().c_str());
        }
        if (info.result()->Failed() && seed_of_current_test()) {
            std::fprintf(stderr, "[seed] this run used seed %llu; rerun it with WS_SEED=%llu\n",
                         static_cast<unsigned long long>(*seed_of_current_test()),
                         static_cast<unsigned long long>(*seed_of_current_test()));
        }
    }
};

[[noreturn]] void report_terminate() {
    std::string what = "an unknown exception";
    bool not_implemented = false;
    if (auto ep = std::current_exception()) {
        try {
            std::rethrow_exception(ep);
        } catch (const ws::NotImplemented& e) {
            what = e.what();
            not_implemented = true;
        } catch (const std::exception& e) {
            what = std::string(typeid(e).name()) + ": " + e.what();
        } catch (...) {
        }
    } else {
        what =
            "no exception (std::terminate was called directly, e.g. a joinable std::thread "
            "was destroyed)";
    }
    std::fprintf(stderr,
                 "\n[terminate] %s (%s) ended the process.\n"
                 "[terminate] uncaught on some thread: %s\n%s",
                 current_test_name().c_str(), exercise_title().c_str(), what.c_str(),
                 not_implemented ? "[terminate] finish that exercise first.\n"
                                 : "[terminate] an exception escaped a thread (a worker?) or a "
                                   "destructor.\n");
    std::fflush(stderr);
    std::_Exit(4);
}

}  // namespace

bool register_exercise(ExerciseInfo info) {
    auto key = info.suite;
    exercises()[key] = std::move(info);
    return true;
}

int slowdown() noexcept {
#if defined(__SANITIZE_THREAD__)
    return 6;
#elif defined(__SANITIZE_ADDRESS__)
    return 3;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
    return 6;
#elif __has_feature(address_sanitizer)
    return 3;
#else
    return 1;
#endif
#else
    return 1;
#endif
}

void set_deadline(std::chrono::milliseconds from_now) {
    watchdog().arm(from_now);
}

std::uint64_t test_seed() {
    auto& seed = seed_of_current_test();
    if (!seed) {
        if (const char* env = std::getenv("WS_SEED"); env != nullptr && *env != '\0') {
            seed = std::strtoull(env, nullptr, 10);
        } else {
            std::random_device rd;
            seed = (std::uint64_t{rd()} << 32) ^ rd();
        }
        ::testing::Test::RecordProperty("seed", std::to_string(*seed));
    }
    return *seed;
}

}  // namespace ws::testing

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    std::set_terminate(ws::testing::report_terminate);
    ::testing::UnitTest::GetInstance()->listeners().Append(new ws::testing::HarnessListener);
    const int status = RUN_ALL_TESTS();
    ws::testing::watchdog().stop();
    return status;
}
