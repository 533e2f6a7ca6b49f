// Vector clocks: how the explorer knows which events happen before which.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

namespace ws::model::detail {

// The most threads one scenario may have, its main thread included.
inline constexpr int kMaxThreads = 8;

// Each thread numbers its events 1, 2, 3, ... A clock says, for every thread u, how many of u's
// events come before the point it describes: event k of u is before it iff k <= at[u]
// (0: none). Events of one thread are in program order, so a prefix is all a clock needs.
struct Clock {
    std::array<std::uint32_t, kMaxThreads> at{};

    void join(const Clock& other) noexcept {
        for (int u = 0; u < kMaxThreads; ++u)
            at[u] = std::max(at[u], other.at[u]);
    }
    bool includes(int thread, std::uint32_t event) const noexcept { return event <= at[thread]; }
    bool empty() const noexcept {
        return std::all_of(at.begin(), at.end(), [](std::uint32_t e) { return e == 0; });
    }
};

}  // namespace ws::model::detail
