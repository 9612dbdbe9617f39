// Preloaded (LD_PRELOAD) into a collbench that must not initialize MPI
// (`--transport inproc`, tests/harness_e2e/inproc.sh): these take the
// place of the MPI library's MPI_Init and MPI_Init_thread, and end the
// process with a status of their own and a line saying who called, so a run
// that initializes MPI fails instead of passing as an MPI singleton.
#include <cstdio>
#include <cstdlib>

namespace {

[[noreturn]] void refuse(const char* function) {
  std::fprintf(stderr, "mpi_init_forbidden: %s was called\n", function);
  std::fflush(stderr);
  std::_Exit(97);
}

}  // namespace

// Declared as the MPI standard does; <mpi.h> is left out so that nothing
// here depends on (or conflicts with) one MPI library's header.
extern "C" int MPI_Init(int* /*argc*/, char*** /*argv*/) { refuse("MPI_Init"); }

extern "C" int MPI_Init_thread(int* /*argc*/, char*** /*argv*/, int /*required*/,
                               int* /*provided*/) {
  refuse("MPI_Init_thread");
}
