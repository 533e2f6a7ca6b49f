// register_peers(): adds the sequential, oneTBB and OpenMP contenders (where available) to the
// benchmark binary it is linked into.
#pragma once

namespace ws::bench {
void register_peers();
}  // namespace ws::bench
