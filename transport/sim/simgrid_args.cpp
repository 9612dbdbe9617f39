#include "simgrid_args.h"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <string_view>
#include <unordered_set>

#include "platform.h"

namespace collbench::sim {
namespace {

namespace s4u = simgrid::s4u;

// SimGrid dies (SIGABRT or SIGSEGV, with its own message) instead of
// throwing on values its option parser accepts: an unknown network/model,
// contexts/factory or --log setting when the engine starts, a
// network/bandwidth-factor of 0 at the first message, contexts/stack-size:0
// or maxmin/precision:-1 once an actor runs; and a value of `help` prints
// SimGrid's help and exits with status 0. So before the process's engine is
// built, a forked child builds one with the same arguments, a star of two
// nodes with the run's links and one message between them; if the child
// does not get to the end, the run stops here, before any output file
// exists, naming the argument. An exception is no death: the child reports
// success, and the real engine throws it again with its own message.
constexpr int kProbeSimulated = 100;
constexpr int kProbeThrew = 101;
constexpr int kProbeUndelivered = 102;
// Far above a two-node simulation's milliseconds: only a probe that hangs
// (surf/precision:-1) reaches it.
constexpr unsigned kProbeSeconds = 10;

// In the child: never returns.
[[noreturn]] void run_probe(int output, const std::vector<std::string>& args,
                            const SimParams& params) {
  // Inherited handlers (the harness removes its --benchmark_out file on
  // SIGABRT and SIGSEGV) are the parent's business.
  for (int signal = 1; signal < NSIG; ++signal) {
    if (signal != SIGKILL && signal != SIGSTOP) std::signal(signal, SIG_DFL);
  }
  dup2(output, STDOUT_FILENO);
  dup2(output, STDERR_FILENO);
  close(output);
  alarm(kProbeSeconds);
  int status = kProbeSimulated;
  try {
    std::vector<std::string> copies = args;
    std::vector<char*> argv;
    for (std::string& arg : copies) argv.push_back(arg.data());
    argv.push_back(nullptr);
    int argc = static_cast<int>(copies.size());
    // Never destroyed: _exit follows.
    auto* engine = new s4u::Engine(&argc, argv.data());
    SimParams two = params;
    two.ranks = 2;
    two.ppn = 1;
    two.platform = "star";
    two.allow_unused_slots = false;
    const Platform platform = build_platform(two);
    // As the run's engine does (a latency-factor given too is refused then).
    engine->get_netzone_root()->get_network_model()->set_lat_factor_cb(
        [](double, const s4u::Host*, const s4u::Host*, const std::vector<s4u::Link*>&,
           const std::unordered_set<s4u::NetZone*>&) { return 1.0; });
    s4u::Mailbox* box = s4u::Mailbox::by_name("collbench-probe");
    static int payload = 0;
    static bool delivered = false;
    s4u::Actor::create("probe-send", platform.slots[0], [box] { box->put(&payload, 1 << 20); });
    s4u::Actor::create("probe-recv", platform.slots[1], [box] {
      box->get<int>();
      delivered = true;
    });
    // Where SimGrid finds a deadlock (maxmin/concurrency-limit:0), it says
    // so and returns.
    engine->run();
    if (!delivered) status = kProbeUndelivered;
  } catch (const std::exception&) {
    status = kProbeThrew;
  }
  std::fflush(nullptr);
  _exit(status);
}

// How a probe of `args` ended: "" when it simulated its message or threw,
// else how it died and SimGrid's reason, on one line.
std::string probe_death(const std::vector<std::string>& args, const SimParams& params) {
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) {
    throw std::runtime_error(fmt::format("pipe(): {}", std::strerror(errno)));
  }
  // Or what the parent's buffers hold would be written twice.
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child < 0) {
    const int error = errno;
    close(pipe_ends[0]);
    close(pipe_ends[1]);
    throw std::runtime_error(fmt::format("fork(): {}", std::strerror(error)));
  }
  if (child == 0) {
    close(pipe_ends[0]);
    run_probe(pipe_ends[1], args, params);
  }
  close(pipe_ends[1]);
  std::string output;
  char buffer[4096];
  for (;;) {
    const ssize_t got = read(pipe_ends[0], buffer, sizeof buffer);
    if (got == 0 || (got < 0 && errno != EINTR)) break;
    // A --log that lets SimGrid talk may say a lot; its reason comes first.
    if (got > 0 && output.size() < (1 << 16)) output.append(buffer, static_cast<std::size_t>(got));
  }
  close(pipe_ends[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR)
      throw std::runtime_error(fmt::format("waitpid(): {}", std::strerror(errno)));
  }
  if (WIFEXITED(status) &&
      (WEXITSTATUS(status) == kProbeSimulated || WEXITSTATUS(status) == kProbeThrew)) {
    return {};
  }
  // SimGrid's reason is its CRITICAL line, without the time and source
  // position before it; or else the first line it wrote.
  std::string reason;
  std::size_t start = 0;
  while (start < output.size()) {
    std::size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    std::string_view line(output.data() + start, end - start);
    start = end + 1;
    constexpr std::string_view kCritical = "/CRITICAL] ";
    if (const std::size_t at = line.find(kCritical); at != std::string_view::npos) {
      reason = line.substr(at + kCritical.size());
      break;
    }
    if (reason.empty()) reason = line;
  }
  std::string how;
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
    how = fmt::format("SimGrid did not deliver one message between two nodes within {} s",
                      kProbeSeconds);
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == kProbeUndelivered) {
    how = "SimGrid did not deliver one message between two nodes";
  } else if (WIFSIGNALED(status)) {
    // SimGrid's handler may say no more than the signal's name does.
    if (const char* said = strsignal(WTERMSIG(status));
        said != nullptr && (reason == said || reason == std::string(said) + ".")) {
      reason.clear();
    }
    const char* name = sigabbrev_np(WTERMSIG(status));
    how = fmt::format("SimGrid dies of SIG{}", name != nullptr ? name : "?");
  } else {
    how = fmt::format("SimGrid ends the process with status {} before simulating",
                      WEXITSTATUS(status));
  }
  return reason.empty() ? how : fmt::format("{} (\"{}\")", how, reason);
}

}  // namespace

std::string named_simgrid_args(std::span<const std::string> args) {
  std::string named;
  for (const std::string& arg : args) {
    named += fmt::format("{}--simgrid-arg={}", named.empty() ? "" : " ", arg);
  }
  return named;
}

// `ours` and then each of params.simgrid_args, as the engine will get them.
void probe_simgrid_args(const std::vector<std::string>& ours, const SimParams& params) {
  if (params.simgrid_args.empty()) return;
  const auto with = [&ours](std::span<const std::string> theirs) {
    std::vector<std::string> args = ours;
    args.insert(args.end(), theirs.begin(), theirs.end());
    return args;
  };
  const std::string together = probe_death(with(params.simgrid_args), params);
  if (together.empty()) return;
  // Which of them: those that kill the probe alone, else all together.
  std::vector<std::string> culprits;
  std::string why;
  if (params.simgrid_args.size() > 1) {
    for (const std::string& arg : params.simgrid_args) {
      const std::string alone = probe_death(with(std::span(&arg, 1)), params);
      if (alone.empty()) continue;
      culprits.push_back(arg);
      if (why.empty()) why = alone;
    }
  }
  if (culprits.empty()) {
    culprits = params.simgrid_args;
    why = together;
  }
  throw std::invalid_argument(fmt::format("{}: {}; give a value SimGrid accepts or leave it out",
                                          named_simgrid_args(culprits), why));
}

}  // namespace collbench::sim
