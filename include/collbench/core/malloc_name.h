#pragma once

#include <string>

namespace collbench {

// The malloc this process runs with, as a run's context records it:
// "jemalloc VERSION" when jemalloc is linked in (it is collbench's on
// simulations: CMakeLists.txt, COLLBENCH_WITH_JEMALLOC), else "glibc". Told
// by the symbol jemalloc exports, not by how collbench was configured, so
// that a preloaded or missing one shows as what it is.
std::string malloc_name();

}  // namespace collbench
