// See plot_runner.h.
#include "plot_runner.h"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace collbench {

std::string default_plot_script() { return COLLBENCH_PLOT_SCRIPT; }
std::string default_python() { return COLLBENCH_PYTHON; }

void run_plot_script(const std::string& python, const std::string& script,
                     const std::vector<std::string>& args) {
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
  const int spawn_error = posix_spawn(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ);
  if (spawn_error != 0) {
    throw std::runtime_error(fmt::format("cannot run {}: {}", command, std::strerror(spawn_error)));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      throw std::runtime_error(fmt::format("waiting for {}: {}", command, std::strerror(errno)));
    }
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(
        fmt::format("plotting failed: {} {}", command,
                    WIFEXITED(status) ? fmt::format("exited with status {}", WEXITSTATUS(status))
                                      : fmt::format("was killed by signal {}", WTERMSIG(status))));
  }
}

}  // namespace collbench
