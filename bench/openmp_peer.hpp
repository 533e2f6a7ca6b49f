// The OpenMP contender: the same workloads written with OpenMP tasks (compiled in its own
// translation unit with the compiler's OpenMP flags). Only built when OpenMP is found.
#pragma once

#include <cstdint>

namespace ws::bench::openmp {

void flat_spawn(std::uint64_t n);
void spawn_tree(unsigned depth);
void imbalanced_from_one(std::uint64_t n, std::uint64_t unit);

}  // namespace ws::bench::openmp
