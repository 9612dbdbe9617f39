// Tidy CSV, RFC 4180: the one format every collbench tool writes and reads.
//
// CsvWriter creates its file exclusively (an existing file is an error unless
// the caller asked to append or overwrite), writes the header once, and
// flushes every row as it is written, so a run that dies keeps every
// finished row and never a torn one: a row is one write(2) of a whole line,
// and a write cut short (full disk, file-size limit) is truncated away
// before the error is raised. Appending refuses a file whose last line has
// no newline instead of gluing a row onto it.
//
// Reading is bounded: only regular files (not /dev/zero, a pipe or a
// folder), a header line within kCsvMaxHeaderBytes, a whole file within
// kCsvMaxFileBytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace collbench {

enum class ExistingFile { refuse, append, overwrite };

// The longest header line read (a collbench header is under 1 KiB).
inline constexpr std::size_t kCsvMaxHeaderBytes = std::size_t{1} << 20;
// The largest CSV file read_csv_file reads into memory: hundreds of
// thousands of collbench rows, far beyond a sweep's, and small enough that
// parsing it fits in the memory of any machine collbench runs on.
inline constexpr std::size_t kCsvMaxFileBytes = std::size_t{256} << 20;

class CsvWriter {
 public:
  // Throws std::runtime_error naming the path when it cannot be created, is
  // not a regular file, or exists and policy is refuse. With append, the
  // existing header must equal `columns` and the file must end with a
  // newline (else it is refused, not repaired: see csv.cpp).
  CsvWriter(std::string path, std::vector<std::string> columns,
            ExistingFile policy = ExistingFile::refuse);
  ~CsvWriter();
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;

  const std::vector<std::string>& columns() const { return columns_; }
  const std::string& path() const { return path_; }
  // Writes one row; it must have exactly columns().size() fields. On a
  // failed or short write the file is truncated back to its rows before and
  // std::runtime_error names the file and the error.
  void write_row(const std::vector<std::string>& fields);

 private:
  void check_append_target(const std::string& header) const;
  void check_last_row(std::uint64_t size) const;
  void write_line(const std::string& line);

  std::string path_;
  std::vector<std::string> columns_;
  int fd_ = -1;
  bool created_ = false;  // this writer created the file (removed if its header fails)
};

// Whether paths `a` and `b` name one file (the same path once resolved, or
// links to one existing file): two outputs must never share one.
bool names_same_file(const std::string& a, const std::string& b);

// Quotes a field when it contains a comma, quote, CR or LF.
std::string csv_escape(std::string_view field);
// Joins escaped fields with commas and ends the line with "\n".
std::string csv_line(const std::vector<std::string>& fields);

struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  // Whether the header line ended with a line break; a file cut short while
  // its header was being written has none (and no rows).
  bool header_complete = true;
  // Index of `column` in header, or -1.
  int column(std::string_view name) const;
};

// Parses RFC 4180 text (quoted fields with embedded commas, quotes and
// newlines; CRLF or LF). Throws std::runtime_error with `source` and the line
// number on malformed input (unterminated quote, ragged row).
CsvTable parse_csv(std::string_view text, std::string_view source = "<csv>");
// Reads and parses a regular file of at most kCsvMaxFileBytes; the error
// names the path.
CsvTable read_csv_file(const std::string& path);

}  // namespace collbench
