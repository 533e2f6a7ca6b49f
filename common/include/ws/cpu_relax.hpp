// ws::cpu_relax(): the pause inside a spin-wait.
#pragma once

namespace ws {

// Tells the core (and a hyper-thread sibling) that this thread is waiting: on x86 `pause`
// saves power and avoids the memory-order mis-speculation when the awaited store arrives.
// Elsewhere it does nothing, and a spin loop still works.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

}  // namespace ws
