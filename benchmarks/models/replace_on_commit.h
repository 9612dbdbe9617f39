// The output files of one run, replaced together or not at all.
//
// A tool that writes several files (collbench-fit: models.csv and
// predictions.csv; collbench-predict: scaling.csv and README.md) must never
// leave a folder where some are new and some are left from an earlier run:
// that mix reads as one consistent result and is not one. So every output is
// written to a temporary in its destination's folder (the final rename(2)
// stays on one file system), and only when all are written are they renamed
// over their destinations. A write that fails — a full disk, a file size
// limit — fails before any rename, and the destructor removes the
// temporaries: every destination keeps its previous content. A rename is
// not expected to fail once the temporaries exist (it needs no space), but
// if one does, the destinations already renamed get their previous content
// back (kept as a hard link until the end) or are removed when they had
// none.
#pragma once

#include <string>
#include <vector>

namespace collbench {

class ReplaceTogether {
 public:
  // `folder` holds every output; it is created when missing, and removed
  // again (with every folder created for it) when the outputs are never
  // committed.
  explicit ReplaceTogether(const std::string& folder);
  ~ReplaceTogether();
  ReplaceTogether(const ReplaceTogether&) = delete;
  ReplaceTogether& operator=(const ReplaceTogether&) = delete;

  // Registers the output `name` (a file name in the folder) and returns the
  // path of the temporary to write it to.
  std::string add(const std::string& name);
  // Registers the output `destination` (any path on the file system of
  // `staged`), whose content is the finished file `staged`: moved to a
  // temporary beside `destination` now, renamed over it at commit with the
  // others. Throws std::runtime_error when the move fails.
  void adopt(const std::string& staged, const std::string& destination);
  // The destination of `name`.
  std::string path(const std::string& name) const;
  // Renames every temporary over its destination; throws
  // std::runtime_error (every destination as before) when that fails.
  void commit();

 private:
  struct Output {
    std::string path;
    std::string temp_path;
    std::string backup_path;  // empty: the destination did not exist
  };
  void roll_back(std::size_t renamed);

  std::string folder_;
  std::vector<std::string> created_folders_;  // outermost first
  std::vector<Output> outputs_;
  bool committed_ = false;
};

// Throws std::invalid_argument naming `option` unless `folder` is a folder
// this process may write in, or can be created as one (its nearest existing
// ancestor is a writable folder): checked before any work, so that a bad
// output folder fails at once rather than after the work is done.
void require_writable_folder(const std::string& folder, const std::string& option);

// Throws std::invalid_argument ("OPTION names the input file X") when an
// output `folder`/NAME, for a NAME of `outputs`, is one of the `inputs`
// (collbench::names_same_file): a tool must never replace what it reads, so
// this is checked before any work.
void require_outputs_not_inputs(const std::string& folder, const std::vector<std::string>& outputs,
                                const std::vector<std::string>& inputs, const std::string& option);

}  // namespace collbench
