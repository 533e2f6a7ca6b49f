// The test harness every lesson's tests link against (ws_test_main provides main()).
//
// - Each exercise registers its name and the most likely cause of a hang with WS_EXERCISE.
// - A watchdog fails any test that runs past its deadline, naming the exercise and that cause,
//   instead of letting the run hang.
// - An exception escaping a worker thread (std::terminate) is reported with the test's name and
//   the exception's message: for starter code, that names the unfinished exercise.
// - test_seed() gives a test a seed (WS_SEED overrides it) that is printed if the test fails.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace ws::testing {

struct ExerciseInfo {
    std::string suite;         // the GoogleTest suite, e.g. "Lesson01Ex2"
    std::string title;         // e.g. "lesson 01, exercise 2 (wait_idle)"
    std::string likely_cause;  // what to look at when a test of this exercise hangs
};

// Registers an exercise; returns true so it can initialise a static.
bool register_exercise(ExerciseInfo info);

#define WS_EXERCISE(suite, title, likely_cause)                         \
    [[maybe_unused]] static const bool ws_exercise_registered_##suite = \
        ::ws::testing::register_exercise({#suite, title, likely_cause})

// How much slower than a plain build this build runs (sanitizers slow everything down).
int slowdown() noexcept;

// Replaces the current test's watchdog deadline (default: 30 s times slowdown()).
void set_deadline(std::chrono::milliseconds from_now);

// The deadline of an interleaving-explorer test. The explorer runs each cooperative thread on an
// OS thread and hands the CPU from one to the next at every step, so on a loaded machine every
// step waits for a core: a test of 2 s on a quiet machine took over 30 s beside four busy
// processes on two cores. Still a hang detector, not a bound on the exploration.
inline void set_explorer_deadline() {
    set_deadline(std::chrono::minutes(5) * slowdown());
}

// A seed for this test: WS_SEED from the environment if set, otherwise a fresh random one.
// Printed with a rerun command if the test fails.
std::uint64_t test_seed();

}  // namespace ws::testing

// Skips the test because this machine or build lacks what it needs (a kernel facility, a
// permission), not because of the code under test: `./workshop test` reports it as not run
// here, without failing, and grading leaves it out of the exercise's total (with a note),
// instead of treating it as a test the learner's code did not pass. The tool recognises the
// message's first words, so keep them. Use GTEST_SKIP itself for any other skip.
#define WS_SKIP_NOT_AVAILABLE_HERE(why) GTEST_SKIP() << "not available here: " << why
