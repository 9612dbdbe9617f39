// See replace_on_commit.h.
#include "replace_on_commit.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "collbench/core/csv.h"

namespace collbench {
namespace {

namespace fs = std::filesystem;

// "a/b/" and "a/b" alike: the folder itself, not an empty last component.
fs::path folder_path(const std::string& folder) {
  fs::path path = fs::path(folder.empty() ? "." : folder).lexically_normal();
  if (path.filename().empty() && path.has_parent_path()) path = path.parent_path();
  return path;
}

bool exists_or_dangles(const fs::path& path) {
  std::error_code error;
  return fs::symlink_status(path, error).type() != fs::file_type::not_found;
}

// The pid keeps two tools writing the same folder from sharing a temporary.
std::string hidden_name(const fs::path& folder, const std::string& name, const char* kind) {
  return (folder / fmt::format(".{}.{}-{}", name, kind, ::getpid())).string();
}

}  // namespace

ReplaceTogether::ReplaceTogether(const std::string& folder) {
  const fs::path path = folder_path(folder);
  folder_ = path.string();
  for (fs::path missing = path; !missing.empty() && !exists_or_dangles(missing);
       missing = missing.parent_path()) {
    created_folders_.insert(created_folders_.begin(), missing.string());
    if (missing == missing.parent_path()) break;
  }
  std::error_code error;
  fs::create_directories(path, error);
  if (error) {
    throw std::runtime_error(
        fmt::format("cannot create the folder {}: {}", folder_, error.message()));
  }
}

ReplaceTogether::~ReplaceTogether() {
  if (committed_) return;
  for (const Output& output : outputs_) std::remove(output.temp_path.c_str());
  std::error_code ignored;
  for (auto folder = created_folders_.rbegin(); folder != created_folders_.rend(); ++folder) {
    fs::remove(*folder, ignored);  // only when empty: nothing but ours was there
  }
}

std::string ReplaceTogether::add(const std::string& name) {
  const fs::path folder(folder_);
  outputs_.push_back({(folder / name).string(), hidden_name(folder, name, "tmp"), ""});
  return outputs_.back().temp_path;
}

void ReplaceTogether::adopt(const std::string& staged, const std::string& destination) {
  const fs::path path(destination);
  const std::string temp = hidden_name(path.parent_path(), path.filename().string(), "tmp");
  if (std::rename(staged.c_str(), temp.c_str()) != 0) {
    throw std::runtime_error(
        fmt::format("cannot move {} to {}: {}", staged, temp, std::strerror(errno)));
  }
  outputs_.push_back({destination, temp, ""});
}

std::string ReplaceTogether::path(const std::string& name) const {
  return (fs::path(folder_) / name).string();
}

void ReplaceTogether::roll_back(std::size_t renamed) {
  for (std::size_t i = 0; i < renamed; ++i) {
    const Output& output = outputs_[i];
    if (output.backup_path.empty()) {
      std::remove(output.path.c_str());
    } else {
      std::rename(output.backup_path.c_str(), output.path.c_str());
    }
  }
}

void ReplaceTogether::commit() {
  const auto remove_backups = [this] {
    for (const Output& output : outputs_) {
      if (!output.backup_path.empty()) std::remove(output.backup_path.c_str());
    }
  };
  // A second name for every destination that exists, before any rename.
  for (Output& output : outputs_) {
    if (!exists_or_dangles(output.path)) continue;
    // Beside its destination, which an adopted output may have outside folder_.
    const fs::path destination(output.path);
    const std::string backup =
        hidden_name(destination.parent_path(), destination.filename().string(), "old");
    std::remove(backup.c_str());  // left by a killed run of this pid
    if (::link(output.path.c_str(), backup.c_str()) != 0) {
      const int error = errno;
      remove_backups();
      throw std::runtime_error(
          fmt::format("cannot replace {}: {}", output.path, std::strerror(error)));
    }
    output.backup_path = backup;
  }
  for (std::size_t i = 0; i < outputs_.size(); ++i) {
    const Output& output = outputs_[i];
    if (std::rename(output.temp_path.c_str(), output.path.c_str()) != 0) {
      const int error = errno;
      roll_back(i);
      remove_backups();
      throw std::runtime_error(fmt::format("cannot rename {} to {}: {}", output.temp_path,
                                           output.path, std::strerror(error)));
    }
  }
  remove_backups();
  committed_ = true;
}

void require_writable_folder(const std::string& folder, const std::string& option) {
  fs::path probe = fs::absolute(folder_path(folder));
  while (!exists_or_dangles(probe) && probe.has_parent_path() && probe != probe.parent_path()) {
    probe = probe.parent_path();
  }
  std::error_code error;
  if (!fs::is_directory(probe, error)) {
    throw std::invalid_argument(
        fmt::format("{} {}: {} is not a folder", option, folder, probe.string()));
  }
  // access() also refuses a read-only file system, to root too.
  if (::access(probe.c_str(), W_OK | X_OK) != 0) {
    throw std::invalid_argument(fmt::format("{} {}: cannot write in {}: {}", option, folder,
                                            probe.string(), std::strerror(errno)));
  }
}

void require_outputs_not_inputs(const std::string& folder, const std::vector<std::string>& outputs,
                                const std::vector<std::string>& inputs, const std::string& option) {
  for (const std::string& name : outputs) {
    const std::string output = (folder_path(folder) / name).string();
    for (const std::string& input : inputs) {
      if (names_same_file(output, input)) {
        throw std::invalid_argument(fmt::format("{} names the input file {}", option, input));
      }
    }
  }
}

}  // namespace collbench
