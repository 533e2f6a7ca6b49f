// WS_SANITIZER_ALLOCATOR is defined when the tests are built with AddressSanitizer or
// ThreadSanitizer (g++ says so with __SANITIZE_*__, clang with __has_feature). Their runtimes
// bring an allocator of their own: it defines operator new itself (so a test must not replace
// it), and under a memory limit it reports and aborts instead of throwing std::bad_alloc.
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define WS_SANITIZER_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define WS_SANITIZER_ALLOCATOR 1
#endif
#endif
