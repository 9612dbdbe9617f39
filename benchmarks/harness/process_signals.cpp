#include "process_signals.h"

#include <mpi.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace collbench::harness {
namespace {

// Written before the handlers can run and read only by them and
// remove_file_of_abnormal_end: a fixed buffer, since a handler may not
// allocate.
char g_path[PATH_MAX] = {};
struct sigaction g_previous[NSIG] = {};

// Async-signal-safe.
void remove_file_of_abnormal_end() {
  if (g_path[0] != '\0') ::unlink(g_path);
  g_path[0] = '\0';
}

void on_ending_signal(int signal, siginfo_t* info, void* context) {
  remove_file_of_abnormal_end();
  const struct sigaction& previous = g_previous[signal];
  if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(signal, info, context);
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN &&
             previous.sa_handler != nullptr) {
    previous.sa_handler(signal);
  }
  // The previous handler returned, or there was none: end as the signal.
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

}  // namespace

void remove_if_ended_abnormally(const std::string& path) {
  if (path.size() >= sizeof g_path) {
    throw std::invalid_argument("the --benchmark_out path is longer than PATH_MAX");
  }
  std::memcpy(g_path, path.c_str(), path.size() + 1);
  for (const int signal : kEndingSignals) {
    struct sigaction current {};
    if (sigaction(signal, nullptr, &current) != 0) continue;
    // An ignored SIGINT/SIGTERM (nohup, a parent's choice) stays ignored.
    if ((current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_IGN) continue;
    struct sigaction ours {};
    ours.sa_sigaction = on_ending_signal;
    ours.sa_flags = SA_SIGINFO | SA_RESETHAND;
    sigemptyset(&ours.sa_mask);
    sigaction(signal, &ours, &g_previous[signal]);
  }
}

void keep_file_of_normal_end() { g_path[0] = '\0'; }

void abort_job() {
  remove_file_of_abnormal_end();
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  // Without MPI (every rank in this process) the job is this process.
  if (initialized == 0 || finalized != 0) std::_Exit(1);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // MPI_Abort does not return
}

}  // namespace collbench::harness
