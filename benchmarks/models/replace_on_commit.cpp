// See replace_on_commit.h.
#include "replace_on_commit.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace collbench {

ReplaceOnCommit::ReplaceOnCommit(std::string path) : path_(std::move(path)) {
  const std::filesystem::path target(path_);
  // The pid keeps two tools writing the same folder from sharing a temporary.
  temp_path_ =
      (target.parent_path() / fmt::format(".{}.tmp-{}", target.filename().string(), ::getpid()))
          .string();
}

ReplaceOnCommit::~ReplaceOnCommit() {
  if (!committed_) std::remove(temp_path_.c_str());
}

void ReplaceOnCommit::commit() {
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    throw std::runtime_error(
        fmt::format("cannot rename {} to {}: {}", temp_path_, path_, std::strerror(errno)));
  }
  committed_ = true;
}

}  // namespace collbench
