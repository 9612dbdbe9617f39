#pragma once

#include <string>

namespace collbench {

// The malloc this process runs with, as a run's context records it:
// "jemalloc VERSION" when jemalloc's serves malloc (it is collbench's on
// simulations: CMakeLists.txt, COLLBENCH_WITH_JEMALLOC), "glibc" when
// glibc's does, else the file name of the library whose malloc runs (a
// preloaded libtcmalloc_minimal.so.4). Told by the symbols that run, not by
// how collbench was configured, so that a preloaded or missing one shows as
// what it is.
std::string malloc_name();

}  // namespace collbench
