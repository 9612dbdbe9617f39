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

#include <unistd.h>

#include <csignal>
#include <string>

namespace collbench::harness {

// The signals that end a process abnormally: reset to their default here,
// and the ones after which remove_if_ended_abnormally removes its file.
inline constexpr int kEndingSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGINT, SIGTERM};

inline void set_process_signals() {
  for (const int signal : kEndingSignals) {
    struct sigaction current {};
    if (sigaction(signal, nullptr, &current) != 0) continue;
    const bool handled = (current.sa_flags & SA_SIGINFO) != 0 ||
                         (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN);
    // An ignored SIGINT/SIGTERM (nohup, a parent's choice) stays ignored.
    if (handled) std::signal(signal, SIG_DFL);
  }
  std::signal(SIGXFSZ, SIG_IGN);
}

// The file this process removes if it ends abnormally: the --benchmark_out
// temporary, which only a complete run renames over its target. Abnormally:
// a signal (a crash here, or mpirun's SIGTERM when another rank called
// MPI_Abort; the handler in place, Open MPI's backtrace or the default, runs
// after the removal), or abort_job() on this rank. Call after MPI_Init,
// whose handlers it chains to.
void remove_if_ended_abnormally(const std::string& path);
// Forgets it (renamed or removed by the normal end).
void keep_file_of_normal_end();
// Ends the whole job from this rank (MPI_Abort, status 1; without MPI,
// every rank in this process: exit status 1), removing that file first.
[[noreturn]] void abort_job();

}  // namespace collbench::harness
