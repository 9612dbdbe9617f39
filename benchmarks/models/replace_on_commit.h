// An output file that appears complete or not at all.
//
// Writers write to a temporary file in the destination's folder (so that the
// final rename(2) stays on one file system and is atomic); commit() renames
// it over the destination. If commit() is never reached — an exception on the
// way — the destructor removes the temporary, and the destination is untouched.
#pragma once

#include <string>

namespace collbench {

class ReplaceOnCommit {
 public:
  explicit ReplaceOnCommit(std::string path);
  ~ReplaceOnCommit();
  ReplaceOnCommit(const ReplaceOnCommit&) = delete;
  ReplaceOnCommit& operator=(const ReplaceOnCommit&) = delete;

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_path_; }
  // Renames the temporary file over path(); throws std::runtime_error naming
  // both paths when that fails.
  void commit();

 private:
  std::string path_;
  std::string temp_path_;
  bool committed_ = false;
};

}  // namespace collbench
