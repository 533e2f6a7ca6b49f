// ws::Task: a move-only, type-erased `void()` callable.
//
// Small callables (up to kInlineSize bytes, nothrow-movable) live inside the Task itself, so
// spawning a lambda with a few captures allocates nothing. Larger ones go to the heap.
#pragma once

#include <cstddef>
#include <functional>
#include <new>
#include <type_traits>
#include <utility>

namespace ws {

class Task {
  public:
    // Four pointers of captures inline: a Task is one 64-byte cache line.
    static constexpr std::size_t kInlineSize = 48;

    Task() noexcept = default;

    // Any callable converts: the Task stores a D = std::decay_t<F> and calls it as an lvalue
    // with no arguments. A Task itself is excluded, so that moving a Task picks the move
    // constructor below and copying one finds the deleted copy constructor, not this template.
    template <typename F>
    Task(F&& f)  // NOLINT(google-explicit-constructor): any callable converts, like std::function
        requires(!std::is_same_v<std::decay_t<F>, Task> && std::is_invocable_v<std::decay_t<F>&>) {
        using D = std::decay_t<F>;
        if constexpr (fits_inline<D>()) {
            ::new (static_cast<void*>(storage_)) D(std::forward<F>(f));
            ops_ = &kInlineOps<D>;
        } else {
            *reinterpret_cast<D**>(storage_) = new D(std::forward<F>(f));
            ops_ = &kHeapOps<D>;
        }
    }

    Task(Task&& other) noexcept : ops_(other.ops_) {
        if (ops_ != nullptr) {
            ops_->move(other.storage_, storage_);
            other.ops_ = nullptr;
        }
    }

    Task& operator=(Task&& other) noexcept {
        if (this != &other) {
            reset();
            if (other.ops_ != nullptr) {
                other.ops_->move(other.storage_, storage_);
                ops_ = std::exchange(other.ops_, nullptr);
            }
        }
        return *this;
    }

    Task(const Task&) = delete;
    Task& operator=(const Task&) = delete;

    ~Task() { reset(); }

    explicit operator bool() const noexcept { return ops_ != nullptr; }

    // Runs the callable. Calling an empty Task throws std::bad_function_call.
    void operator()() {
        if (ops_ == nullptr) throw std::bad_function_call{};
        ops_->invoke(storage_);
    }

    void reset() noexcept {
        if (ops_ != nullptr) {
            ops_->destroy(storage_);
            ops_ = nullptr;
        }
    }

    // True when a callable of type F is stored without a heap allocation.
    template <typename F>
    static constexpr bool fits_inline() noexcept {
        return sizeof(F) <= kInlineSize && alignof(F) <= alignof(std::max_align_t) &&
               std::is_nothrow_move_constructible_v<F>;
    }

  private:
    struct Ops {
        void (*invoke)(void* self);
        void (*move)(void* from, void* to) noexcept;  // leaves `from` destroyed
        void (*destroy)(void* self) noexcept;
    };

    template <typename D>
    static constexpr Ops kInlineOps{
        [](void* self) { (*std::launder(static_cast<D*>(self)))(); },
        [](void* from, void* to) noexcept {
            D* src = std::launder(static_cast<D*>(from));
            ::new (to) D(std::move(*src));
            src->~D();
        },
        [](void* self) noexcept { std::launder(static_cast<D*>(self))->~D(); },
    };

    template <typename D>
    static constexpr Ops kHeapOps{
        [](void* self) { (**static_cast<D**>(self))(); },
        [](void* from, void* to) noexcept { *static_cast<D**>(to) = *static_cast<D**>(from); },
        [](void* self) noexcept { delete *static_cast<D**>(self); },
    };

    alignas(std::max_align_t) unsigned char storage_[kInlineSize];
    const Ops* ops_ = nullptr;
};

}  // namespace ws
