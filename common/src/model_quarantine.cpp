// Freed memory stays allocated until the execution ends, so that no new atomic can be born at
// the address of a destroyed one while the execution runs: an access through a dangling
// pointer then always finds the dead atomic in the side table ("use after free") instead of a
// new one at the same address.
//
// It replaces the global operator delete of the test programs that link ws_model. The memory
// came from the default operator new, i.e. malloc (or aligned_alloc), so free() releases it.
// Under AddressSanitizer and ThreadSanitizer the runtime owns operator new and delete (a
// program must not replace them); AddressSanitizer has a quarantine of its own, and under
// ThreadSanitizer an address reused within one execution can hide a use after free in that
// one execution (other schedules still show it).
#include <cstddef>
#include <cstdlib>
#include <new>

#include <ws/testing/sanitizer.hpp>

#include "ws/model/detail/execution.hpp"

#if !defined(WS_SANITIZER_ALLOCATOR)

namespace {

void release(void* memory) noexcept {
    if (memory == nullptr) return;
    if (auto* execution = ws::model::detail::Execution::current()) {
        execution->quarantine(memory);
    } else {
        std::free(memory);
    }
}

}  // namespace

void operator delete(void* p) noexcept {
    release(p);
}
void operator delete[](void* p) noexcept {
    release(p);
}
void operator delete(void* p, std::size_t) noexcept {
    release(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    release(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
    release(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
    release(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
    release(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
    release(p);
}

#endif
