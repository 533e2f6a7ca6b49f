// Atomic<T>'s hooks and Thread: forward to the calling model thread's execution.
#include <stdexcept>
#include <string>
#include <utility>

#include "ws/model/detail/execution.hpp"
#include "ws/model/detail/hooks.hpp"
#include "ws/model/explore.hpp"

namespace ws::model {

namespace detail {

bool in_model_thread() noexcept {
    return Execution::current() != nullptr;
}

void atomic_created(const void* atomic, Bits initial, Format format, const Where& where) noexcept {
    Execution::current()->created(atomic, initial, format, where);
}

void atomic_destroyed(const void* atomic) noexcept {
    Execution::current()->destroyed(atomic);
}

Bits atomic_load(const void* atomic, std::memory_order order, const Where& where) noexcept {
    return Execution::current()->load(atomic, order, where);
}

void atomic_store(const void* atomic, Bits value, std::memory_order order,
                  const Where& where) noexcept {
    Execution::current()->store(atomic, value, order, where);
}

Bits atomic_rmw(const void* atomic, const char* name, Apply apply, Bits operand,
                std::memory_order order, const Where& where) noexcept {
    return Execution::current()->read_modify_write(atomic, name, apply, operand, order, where);
}

bool atomic_compare_exchange(const void* atomic, Bits& expected, Bits desired, bool /*weak*/,
                             std::memory_order success, std::memory_order failure,
                             const Where& where) noexcept {
    // compare_exchange_weak's spurious failures are not modelled: it is the strong one.
    return Execution::current()->compare_exchange(atomic, expected, desired, success, failure,
                                                  where);
}

}  // namespace detail

namespace {

detail::Execution& execution(const char* what) {
    detail::Execution* e = detail::Execution::current();
    if (e == nullptr) {
        throw std::logic_error(std::string("ws::model::") + what +
                               " is only for the threads of a scenario inside explore()");
    }
    return *e;
}

}  // namespace

Thread::Thread(std::function<void()> body) : id_(execution("Thread").spawn(std::move(body))) {}

Thread::~Thread() {
    if (!joined_) join();
}

void Thread::join() {
    if (joined_) throw std::logic_error("ws::model::Thread::join: joined already");
    joined_ = true;
    execution("Thread::join").join(id_);
}

void check(bool ok, std::string_view what) {
    execution("check").check(ok, what);
}

}  // namespace ws::model
