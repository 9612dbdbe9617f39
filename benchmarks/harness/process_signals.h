// Signal dispositions the MPI executables (collbench, collbench-linkmatrix)
// set first thing in main, before MPI_Init.
//
// libinfinipath (pulled in by libfabric's psm providers) installs handlers
// for SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGINT and SIGTERM when it is
// loaded, before main: they write "<program>.80s-<pid>,<host>.btr" into the
// working folder and exit(1). A crashed or interrupted process then leaves a
// file behind and reports status 1 instead of its signal (139, 130, ...),
// and in an MPI singleton Open MPI does not install its own handler over
// theirs. Back to the default here, so the signal ends the process as the
// signal, and under mpirun Open MPI still installs its handler (a backtrace
// on stderr, then the signal again) in MPI_Init.
//
// SIGXFSZ is ignored: a write past the file-size limit (ulimit -f) then
// fails with EFBIG, which CsvWriter reports and truncates away, instead of
// killing the process.
#pragma once

#include <csignal>

namespace collbench::harness {

inline void set_process_signals() {
  for (const int signal : {SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGINT, SIGTERM}) {
    struct sigaction current {};
    if (sigaction(signal, nullptr, &current) != 0) continue;
    const bool handled = (current.sa_flags & SA_SIGINFO) != 0 ||
                         (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN);
    // An ignored SIGINT/SIGTERM (nohup, a parent's choice) stays ignored.
    if (handled) std::signal(signal, SIG_DFL);
  }
  std::signal(SIGXFSZ, SIG_IGN);
}

}  // namespace collbench::harness
