// Every collbench executable's exit status says whether its standard output
// was written: see fail_on_unwritten_standard_output.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace collbench::cli {

namespace detail {

// Set once, before the handler is registered; read only by it.
inline const char* g_program_for_standard_output = "collbench";

inline void check_standard_output_at_exit() {
  // std::cout is flushed by its own static destructor only after the atexit
  // handlers have run: flush it here to see its errors.
  std::cout.flush();
  const bool written = !std::cout.fail() && std::fflush(stdout) == 0 && std::ferror(stdout) == 0;
  if (written) return;
  std::fprintf(stderr,
               "%s: could not write all of standard output (a full disk or a closed pipe?): "
               "what it shows is incomplete\n",
               g_program_for_standard_output);
  // exit() keeps the status it was given: flush what the other streams hold,
  // as exit() would, and end with the status of a failed run.
  std::fflush(nullptr);
  ::_exit(1);
}

// A standard stream closed by the caller (... >&-) leaves its descriptor
// free for the next file opened: a --benchmark_out, a CSV, an --out-dir
// file then got descriptor 1 and what was meant for standard output (Google
// Benchmark's display, a summary) was written into it. It goes to /dev/null
// instead, as the caller asked for no output there.
inline void open_closed_standard_streams() {
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int null = open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);
    // The lowest free descriptor: fd itself, as the lower ones are open.
    if (null != -1 && null != fd) close(null);
  }
}

}  // namespace detail

// Makes the process end with status 1 and a line on stderr naming `program`
// when what it printed on standard output (a table, --help, a listing) could
// not all be written: a full disk, /dev/full, a pipe closed early. Without
// it a tool whose output was lost exits 0, as if the user had it. Call once,
// first thing in main: the check runs at exit, after every return path and
// std::exit (gnulib's close_stdout does the same for the GNU tools). Files
// named by options are written and checked on their own, not here; a
// standard stream the caller closed is reopened on /dev/null first, so that
// none of them takes its descriptor.
inline void fail_on_unwritten_standard_output(const char* program) {
  detail::open_closed_standard_streams();
  detail::g_program_for_standard_output = program;
  std::atexit(detail::check_standard_output_at_exit);
}

}  // namespace collbench::cli
