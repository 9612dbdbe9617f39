// Preloaded (LD_PRELOAD) to show which process images loaded it: each one
// appends a line to the file that COLLBENCH_PRELOAD_MARKER names. A
// collbench that runs itself again (--transport sim on jemalloc,
// benchmarks/harness/simulation_malloc.h) writes two lines when the rerun
// kept the caller's preload, one when it dropped it (tests/sim_malloc_test.sh).
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace {

__attribute__((constructor)) void mark_this_image() {
  const char* path = std::getenv("COLLBENCH_PRELOAD_MARKER");
  if (path == nullptr) return;
  const int file = ::open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (file < 0) return;
  constexpr const char kLine[] = "loaded\n";
  // A short write shows as a missing line, which the test reports.
  (void)!::write(file, kLine, std::strlen(kLine));
  ::close(file);
}

}  // namespace
