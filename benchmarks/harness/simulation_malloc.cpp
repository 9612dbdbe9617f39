#include "simulation_malloc.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "collbench/core/malloc_name.h"
#include "world.h"

namespace collbench::harness {

void rerun_simulation_on_jemalloc(int argc, char** argv) {
#ifdef COLLBENCH_JEMALLOC_LIBRARY
  // Set in the run again, so that a preload that did not take (the
  // library gone since the build) cannot loop.
  constexpr const char* kRerun = "COLLBENCH_SIMULATION_MALLOC_RERUN";
  if (requested(argc, argv, "--transport") != "sim" || std::getenv(kRerun) != nullptr ||
      malloc_name() != "glibc" || access(COLLBENCH_JEMALLOC_LIBRARY, R_OK) != 0) {
    return;
  }
  const char* before = std::getenv("LD_PRELOAD");
  std::string preload = COLLBENCH_JEMALLOC_LIBRARY;
  if (before != nullptr && *before != '\0') preload += std::string(":") + before;
  const std::string kept = before != nullptr ? before : "";
  setenv("LD_PRELOAD", preload.c_str(), 1);
  setenv(kRerun, "1", 1);
  execv("/proc/self/exe", argv);
  // Still here: go on as before.
  if (before != nullptr) {
    setenv("LD_PRELOAD", kept.c_str(), 1);
  } else {
    unsetenv("LD_PRELOAD");
  }
  unsetenv(kRerun);
#else
  (void)argc;
  (void)argv;
#endif
}

}  // namespace collbench::harness
