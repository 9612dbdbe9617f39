// Tidy CSV, RFC 4180: the one format every collbench tool writes and reads.
//
// CsvWriter creates its file exclusively (an existing file is an error unless
// the caller asked to append or overwrite), writes the header once, and
// flushes every row as it is written, so a run that dies keeps every
// finished row and never a torn one (a row is one write(2) of a whole line).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace collbench {

enum class ExistingFile { refuse, append, overwrite };

class CsvWriter {
 public:
  // Throws std::runtime_error naming the path when it cannot be created, or
  // when it exists and policy is refuse. With append, the existing header
  // must equal `columns`.
  CsvWriter(std::string path, std::vector<std::string> columns,
            ExistingFile policy = ExistingFile::refuse);
  ~CsvWriter();
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;

  const std::vector<std::string>& columns() const { return columns_; }
  const std::string& path() const { return path_; }
  // Writes one row; it must have exactly columns().size() fields.
  void write_row(const std::vector<std::string>& fields);

 private:
  std::string path_;
  std::vector<std::string> columns_;
  int fd_ = -1;
};

// Quotes a field when it contains a comma, quote, CR or LF.
std::string csv_escape(std::string_view field);
// Joins escaped fields with commas and ends the line with "\n".
std::string csv_line(const std::vector<std::string>& fields);

struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  // Index of `column` in header, or -1.
  int column(std::string_view name) const;
};

// Parses RFC 4180 text (quoted fields with embedded commas, quotes and
// newlines; CRLF or LF). Throws std::runtime_error with `source` and the line
// number on malformed input (unterminated quote, ragged row).
CsvTable parse_csv(std::string_view text, std::string_view source = "<csv>");
// Reads and parses a file; the error names the path.
CsvTable read_csv_file(const std::string& path);

}  // namespace collbench
