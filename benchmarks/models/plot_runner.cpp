// See plot_runner.h.
#include "plot_runner.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

extern char** environ;

namespace collbench {

std::string default_plot_script() { return COLLBENCH_PLOT_SCRIPT; }
std::string default_python() { return COLLBENCH_PYTHON; }

namespace {

// Where the child's output goes: ours, or /dev/null (the caller says why it
// failed, or prints where the plots went).
enum class Silence { none, stdout_only, stdout_and_stderr };

// The exit status of `python script args...` as a message, empty on success.
std::string plot_failure(const std::string& python, const std::string& script,
                         const std::vector<std::string>& args, Silence silence) {
  std::vector<std::string> argv_strings{python, script};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::string command;
  std::vector<char*> argv;
  for (std::string& arg : argv_strings) {
    command += (command.empty() ? "" : " ") + arg;
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);
  // Our own buffered stdout must reach the terminal before the child's.
  std::fflush(stdout);
  pid_t pid = 0;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (silence != Silence::none) {
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  }
  if (silence == Silence::stdout_and_stderr) {
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  }
  // posix_spawnp: a bare name such as --python python3 is looked up in PATH,
  // as a shell would; a path with a '/' is run as it is.
  const int spawn_error =
      posix_spawnp(&pid, python.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) {
    return fmt::format("cannot run {}: {}", command, std::strerror(spawn_error));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      throw std::runtime_error(fmt::format("waiting for {}: {}", command, std::strerror(errno)));
    }
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  return fmt::format("{} {}", command,
                     WIFEXITED(status) ? fmt::format("exited with status {}", WEXITSTATUS(status))
                                       : fmt::format("was killed by signal {}", WTERMSIG(status)));
}

}  // namespace

void run_plot_script(const std::string& python, const std::string& script,
                     const std::vector<std::string>& args) {
  const std::string failure = plot_failure(python, script, args, Silence::none);
  if (!failure.empty()) throw std::runtime_error("plotting failed: " + failure);
}

void require_plotting(const std::string& python, const std::string& script) {
  const std::string failure = plot_failure(python, script, {"check"}, Silence::stdout_and_stderr);
  if (!failure.empty()) {
    throw std::invalid_argument(
        fmt::format("--python {} cannot plot with --plot-script {} ({}): it needs matplotlib "
                    "(python3-matplotlib) and a collbench scripts/plot.py",
                    python, script, failure));
  }
}

std::vector<std::string> plot_together(ReplaceTogether& outputs, const std::string& folder,
                                       const std::string& python, const std::string& script,
                                       std::vector<std::string> args) {
  namespace fs = std::filesystem;
  const fs::path staging = fs::path(folder) / fmt::format(".plots.tmp-{}", ::getpid());
  std::error_code ignored;
  fs::remove_all(staging, ignored);  // left by a killed run of this pid
  args.insert(args.end(), {"--out", staging.string()});
  const std::string failure = plot_failure(python, script, args, Silence::stdout_only);
  std::vector<std::string> destinations;
  try {
    if (!failure.empty()) throw std::runtime_error("plotting failed: " + failure);
    std::vector<fs::path> drawn;
    for (const fs::directory_entry& entry : fs::directory_iterator(staging)) {
      drawn.push_back(entry.path());
    }
    std::sort(drawn.begin(), drawn.end());
    for (const fs::path& file : drawn) {
      destinations.push_back((fs::path(folder) / file.filename()).string());
      outputs.adopt(file.string(), destinations.back());
    }
  } catch (...) {
    fs::remove_all(staging, ignored);
    throw;
  }
  fs::remove(staging, ignored);
  return destinations;
}

}  // namespace collbench
