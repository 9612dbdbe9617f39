// A fresh folder under the system's temporary directory for one test,
// removed with everything in it when the test ends.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace collbench::testing {

class TempDir {
 public:
  // `prefix` names the folder (prefix-XXXXXX), to tell whose it is.
  explicit TempDir(const std::string& prefix = "collbench") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // The names of the files in it.
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(path_)) {
      names.push_back(entry.path().filename().string());
    }
    return names;
  }
  void write(const std::string& name, const std::string& content) const {
    std::ofstream(std::filesystem::path(path_) / name, std::ios::binary) << content;
  }

 private:
  std::string path_;
};

}  // namespace collbench::testing
