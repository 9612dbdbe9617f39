// Every collbench executable's exit status says whether its standard output
// was written: see fail_on_unwritten_standard_output.
#pragma once

#include <unistd.h>

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

}  // namespace detail

// Makes the process end with status 1 and a line on stderr naming `program`
// when what it printed on standard output (a table, --help, a listing) could
// not all be written: a full disk, /dev/full, a pipe closed early. Without
// it a tool whose output was lost exits 0, as if the user had it. Call once,
// first thing in main: the check runs at exit, after every return path and
// std::exit (gnulib's close_stdout does the same for the GNU tools). Files
// named by options are written and checked on their own, not here.
inline void fail_on_unwritten_standard_output(const char* program) {
  detail::g_program_for_standard_output = program;
  std::atexit(detail::check_standard_output_at_exit);
}

}  // namespace collbench::cli
