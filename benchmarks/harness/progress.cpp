// Progress line on stderr; see progress.h.
#include "progress.h"

#include <fmt/format.h>

#include <cstdio>

namespace collbench::harness {

void Progress::started(const std::string& name) {
  ++started_;
  if (!enabled_) return;
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start_)
          .count();
  const std::size_t left = total_ > started_ ? total_ - started_ : 0;
  // \r and "erase to end of line" rewrite the line in place.
  fmt::print(stderr, "\r\033[K[{}/{}] {}  ({} left, {}:{:02} elapsed)", started_, total_, name,
             left, elapsed / 60, elapsed % 60);
  std::fflush(stderr);
  line_shown_ = true;
}

void Progress::clear() {
  if (!line_shown_) return;
  fmt::print(stderr, "\r\033[K");
  std::fflush(stderr);
  line_shown_ = false;
}

}  // namespace collbench::harness
