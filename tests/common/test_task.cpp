// Tests of the shared types in common/: ws::Task and ws::Steal<T>.
#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include <ws/steal.hpp>
#include <ws/task.hpp>

namespace {

struct CountsLife {
    int* alive;
    explicit CountsLife(int* a) : alive(a) { ++*alive; }
    CountsLife(const CountsLife& o) : alive(o.alive) { ++*alive; }
    CountsLife(CountsLife&& o) noexcept : alive(o.alive) { ++*alive; }
    ~CountsLife() { --*alive; }
};

}  // namespace

TEST(Task, RunsACapturingLambda) {
    int x = 0;
    ws::Task t([&x] { x = 7; });
    ASSERT_TRUE(t);
    t();
    EXPECT_EQ(x, 7);
}

TEST(Task, SmallCapturesAreInlineAndLargeOnesOnTheHeap) {
    auto small = [a = 1, b = 2.0, p = static_cast<void*>(nullptr)] { (void)a, (void)b, (void)p; };
    auto large = [arr = std::array<char, 200>{}] { (void)arr; };
    EXPECT_TRUE(ws::Task::fits_inline<decltype(small)>());
    EXPECT_FALSE(ws::Task::fits_inline<decltype(large)>());
    EXPECT_EQ(sizeof(ws::Task), 64u) << "a Task should be one cache line";
}

TEST(Task, HoldsMoveOnlyCaptures) {
    auto p = std::make_unique<std::string>("moved");
    std::string out;
    ws::Task t([&out, p = std::move(p)] { out = *p; });
    ws::Task u = std::move(t);
    EXPECT_FALSE(t);  // NOLINT(bugprone-use-after-move): moved-from is documented empty
    u();
    EXPECT_EQ(out, "moved");
}

TEST(Task, DestroysItsCallableExactlyOnce) {
    int alive = 0;
    {
        ws::Task inline_task([c = CountsLife(&alive)] { (void)c; });
        ws::Task heap_task(
            [c = CountsLife(&alive), pad = std::array<char, 128>{}] { (void)c, (void)pad; });
        EXPECT_EQ(alive, 2);
        ws::Task moved = std::move(inline_task);
        ws::Task moved2 = std::move(heap_task);
        EXPECT_EQ(alive, 2);
        moved = std::move(moved2);  // the inline callable is destroyed here
        EXPECT_EQ(alive, 1);
    }
    EXPECT_EQ(alive, 0);
}

TEST(Task, CallingAnEmptyTaskThrows) {
    ws::Task t;
    EXPECT_FALSE(t);
    EXPECT_THROW(t(), std::bad_function_call);
}

TEST(Steal, ThreeOutcomes) {
    auto e = ws::Steal<int>::empty();
    auto r = ws::Steal<int>::retry();
    auto s = ws::Steal<int>::success(5);
    EXPECT_TRUE(e.is_empty() && !e.is_retry() && !e.is_success());
    EXPECT_TRUE(r.is_retry() && !r.is_empty() && !r.is_success());
    ASSERT_TRUE(s.is_success());
    EXPECT_EQ(s.value(), 5);
}

TEST(Steal, CarriesMoveOnlyValues) {
    auto s = ws::Steal<std::unique_ptr<int>>::success(std::make_unique<int>(3));
    std::unique_ptr<int> v = std::move(s).value();
    EXPECT_EQ(*v, 3);
}
