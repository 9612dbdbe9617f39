#include "collbench/core/csv.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace collbench {
namespace {

[[noreturn]] void fail_errno(const std::string& what, const std::string& path, int error) {
  throw std::runtime_error(fmt::format("cannot {} {}: {}", what, path, std::strerror(error)));
}

// What the file behind `fd` is; throws unless it is a regular file. A device
// (/dev/zero), pipe or folder has no end to read to and cannot be truncated
// back after a failed write, which both reading and writing here rely on.
struct stat regular_file_status(int fd, const std::string& path) {
  struct stat status {};
  if (::fstat(fd, &status) != 0) fail_errno("inspect", path, errno);
  if (!S_ISREG(status.st_mode)) {
    throw std::runtime_error(
        fmt::format("{} is not a regular file (a device, pipe or folder); name a file", path));
  }
  return status;
}

// Opens `path` without blocking on a FIFO that has no other end (O_NONBLOCK
// has no effect on a regular file) and refuses anything but a regular file.
int open_regular(const std::string& path, int flags, const char* what) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd < 0) {
    if (errno == EEXIST) {
      throw std::runtime_error(
          fmt::format("{} already exists; choose another path, or pass --append or --force", path));
    }
    fail_errno(what, path, errno);
  }
  try {
    regular_file_status(fd, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  return fd;
}

// Reads up to `limit` bytes from `offset` on, fewer at the end of the file;
// the buffer grows with what is read, not with the limit.
std::string read_at_most(int fd, std::uint64_t offset, std::size_t limit, const std::string& path) {
  constexpr std::size_t kChunk = std::size_t{1} << 16;
  std::string text;
  while (text.size() < limit) {
    const std::size_t got = text.size();
    const std::size_t want = std::min(kChunk, limit - got);
    text.resize(got + want);
    const ssize_t n = ::pread(fd, text.data() + got, want, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) {
      text.resize(got);
      continue;
    }
    if (n < 0) fail_errno("read", path, errno);
    text.resize(got + static_cast<std::size_t>(n));
    if (n == 0) break;
  }
  return text;
}

// The header line of an existing, non-empty CSV file, without its line end.
// Reads at most kCsvMaxHeaderBytes, so a file that is not a CSV (one endless
// line) is refused instead of read to its end.
std::string read_header_line(int fd, const std::string& path) {
  const std::string head = read_at_most(fd, 0, kCsvMaxHeaderBytes, path);
  const auto newline = head.find('\n');
  if (newline == std::string::npos) {
    throw std::runtime_error(
        head.size() < kCsvMaxHeaderBytes
            ? fmt::format("cannot append to {}: it has no complete header line (no newline)", path)
            : fmt::format("cannot append to {}: no header line within its first {} bytes; it is "
                          "not a collbench CSV",
                          path, kCsvMaxHeaderBytes));
  }
  std::string line = head.substr(0, newline);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

}  // namespace

bool names_same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ignored;
  // Absolute first: weakly_canonical leaves a relative path whose first
  // part does not exist relative, so "run.csv" and "./run.csv" would differ.
  const auto resolved = [&](const std::string& path) {
    return fs::weakly_canonical(fs::absolute(path, ignored), ignored);
  };
  if (resolved(a) == resolved(b)) return true;
  return fs::equivalent(a, b, ignored);  // false unless both exist
}

std::string csv_escape(std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string quoted = "\"";
  for (char c : field) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line += ',';
    line += csv_escape(fields[i]);
  }
  line += '\n';
  return line;
}

CsvWriter::CsvWriter(std::string path, std::vector<std::string> columns, ExistingFile policy)
    : path_(std::move(path)), columns_(std::move(columns)) {
  if (columns_.empty()) throw std::invalid_argument("CsvWriter: no columns");
  const std::string header = csv_line(columns_);
  if (policy == ExistingFile::append) {
    created_ = ::access(path_.c_str(), F_OK) != 0;
    fd_ = open_regular(path_, O_RDWR | O_CREAT | O_APPEND, "open");
    try {
      check_append_target(header);
    } catch (...) {
      ::close(fd_);
      fd_ = -1;
      throw;
    }
    if (regular_file_status(fd_, path_).st_size > 0) return;
  } else {
    // An existing device or pipe is refused before O_TRUNC reaches it.
    struct stat existing {};
    if (policy == ExistingFile::overwrite && ::stat(path_.c_str(), &existing) == 0 &&
        !S_ISREG(existing.st_mode)) {
      throw std::runtime_error(
          fmt::format("{} is not a regular file (a device, pipe or folder); name a file", path_));
    }
    const int exclusive = policy == ExistingFile::refuse ? O_EXCL : O_TRUNC;
    fd_ = open_regular(path_, O_WRONLY | O_CREAT | O_APPEND | exclusive, "create");
    created_ = policy == ExistingFile::refuse;
  }
  try {
    write_line(header);
  } catch (...) {
    // A file this writer created and could not even give a header is not
    // left behind.
    ::close(fd_);
    fd_ = -1;
    if (created_) ::unlink(path_.c_str());
    throw;
  }
}

void CsvWriter::check_append_target(const std::string& header) const {
  const std::uint64_t size = static_cast<std::uint64_t>(regular_file_status(fd_, path_).st_size);
  if (size == 0) return;
  const std::string expected = header.substr(0, header.size() - 1);
  if (read_header_line(fd_, path_) != expected) {
    throw std::runtime_error(
        fmt::format("cannot append to {}: its header differs from this version's columns", path_));
  }
  // Refused rather than repaired: a last line without its newline is a row
  // cut short (by a full disk, or a writer older than this one) or a hand
  // edit, and only the user can tell which to keep.
  if (read_at_most(fd_, size - 1, 1, path_) != "\n") {
    throw std::runtime_error(fmt::format(
        "cannot append to {}: its last line has no newline (a torn row, or an edit); appending "
        "is refused rather than glued onto it: delete that line, or end it with a newline if it "
        "is a whole row",
        path_));
  }
  check_last_row(size);
}

namespace {
// Whether `line` is one CSV record of `fields` fields.
bool is_record_of(std::string_view line, std::size_t fields) {
  try {
    const CsvTable table = parse_csv(line, "last line");
    return table.rows.empty() && table.header.size() == fields;
  } catch (const std::runtime_error&) {
    return false;
  }
}
}  // namespace

// A row cut short and then ended by a newline (a torn write followed by
// another writer's newline, or a block of NUL bytes a crash left) would make
// every reader refuse the file after this run's rows are added: refused
// here, before anything is appended. Reads at most kLastRowMaxBytes from the
// end; a quoted field may span lines, so the candidate record grows back a
// line at a time while it has an odd number of quotes (no whole record has).
// Each line is scanned once and the candidate parsed once, at the first even
// count: linear, where re-scanning every candidate was quadratic in the
// lines of a torn quoted field.
void CsvWriter::check_last_row(std::uint64_t size) const {
  constexpr std::uint64_t kLastRowMaxBytes = std::uint64_t{1} << 20;
  const std::uint64_t start = size > kLastRowMaxBytes ? size - kLastRowMaxBytes : 0;
  std::string tail = read_at_most(fd_, start, static_cast<std::size_t>(size - start), path_);
  tail.pop_back();  // the final newline, checked by the caller
  std::size_t begin = tail.size();
  std::size_t quotes = 0;
  while (true) {
    const std::size_t line_end = begin;
    const std::size_t previous = begin == 0 ? std::string::npos : tail.rfind('\n', begin - 1);
    begin = previous == std::string::npos ? 0 : previous + 1;
    const std::string_view line = std::string_view(tail).substr(begin, line_end - begin);
    if (line.find('\0') != std::string_view::npos) {
      throw std::runtime_error(fmt::format(
          "cannot append to {}: its last line has NUL bytes (a torn write); delete that line",
          path_));
    }
    quotes += static_cast<std::size_t>(std::count(line.begin(), line.end(), '"'));
    if (quotes % 2 == 0) {
      const std::string_view candidate = std::string_view(tail).substr(begin);
      if (candidate.empty() || is_record_of(candidate, columns_.size())) return;
      break;
    }
    if (previous == std::string::npos) break;
    begin = previous;
  }
  throw std::runtime_error(fmt::format(
      "cannot append to {}: its last line is not a whole row of the header's {} fields (a torn "
      "row); delete or complete that line",
      path_, columns_.size()));
}

CsvWriter::~CsvWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void CsvWriter::write_row(const std::vector<std::string>& fields) {
  if (fields.size() != columns_.size()) {
    throw std::invalid_argument(fmt::format("{}: row has {} fields, the header has {}", path_,
                                            fields.size(), columns_.size()));
  }
  write_line(csv_line(fields));
}

void CsvWriter::write_line(const std::string& line) {
  // One write(2) of the whole line, O_APPEND: a run killed around it leaves
  // the line whole or absent. A write the disk or the file-size limit cuts
  // short is not continued (the rest would fail too, or raise SIGXFSZ): the
  // file is truncated back to where the line began and the error raised.
  const off_t before = regular_file_status(fd_, path_).st_size;
  ssize_t written = -1;
  do {
    written = ::write(fd_, line.data(), line.size());
  } while (written < 0 && errno == EINTR);
  if (written == static_cast<ssize_t>(line.size())) return;
  const std::string reason =
      written < 0 ? std::string(std::strerror(errno))
                  : fmt::format(
                        "only {} of the line's {} bytes fit (the file system is full, or "
                        "the file reached the size limit of ulimit -f)",
                        written, line.size());
  const bool restored = ::ftruncate(fd_, before) == 0;
  throw std::runtime_error(fmt::format(
      "cannot write to {}: {}; {}", path_, reason,
      restored ? "the file keeps the whole rows written before"
               : fmt::format("truncating the partial line away failed too ({}), so its last line "
                             "is torn",
                             std::strerror(errno))));
}

int CsvTable::column(std::string_view name) const {
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

CsvTable parse_csv(std::string_view text, std::string_view source) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool in_quotes = false;
  bool field_was_quoted = false;
  std::size_t line = 1;
  std::size_t record_line = 1;
  auto end_field = [&] {
    record.push_back(std::move(field));
    field.clear();
    field_was_quoted = false;
  };
  auto end_record = [&] {
    end_field();
    // A blank line is not a record (files often end with one).
    if (!(record.size() == 1 && record[0].empty())) records.push_back(std::move(record));
    record.clear();
    record_line = line;
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    switch (c) {
      case '"':
        if (!field.empty() || field_was_quoted) {
          throw std::runtime_error(
              fmt::format("{}:{}: stray quote inside an unquoted field", source, line));
        }
        in_quotes = true;
        field_was_quoted = true;
        break;
      case ',':
        end_field();
        break;
      case '\r':
        if (i + 1 < text.size() && text[i + 1] == '\n') break;
        ++line;
        end_record();
        break;
      case '\n':
        ++line;
        end_record();
        break;
      default:
        if (field_was_quoted) {
          throw std::runtime_error(fmt::format("{}:{}: text after a closing quote", source, line));
        }
        field += c;
    }
  }
  if (in_quotes) {
    throw std::runtime_error(fmt::format(
        "{}:{}: quoted field not terminated before the end of the file", source, record_line));
  }
  if (!field.empty() || field_was_quoted || !record.empty()) end_record();

  CsvTable table;
  if (records.empty()) return table;
  table.header = std::move(records.front());
  table.header_complete = records.size() > 1 || text.back() == '\n' || text.back() == '\r';
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != table.header.size()) {
      throw std::runtime_error(fmt::format("{}: record {} has {} fields, the header has {}", source,
                                           r + 1, records[r].size(), table.header.size()));
    }
    table.rows.push_back(std::move(records[r]));
  }
  return table;
}

CsvTable read_csv_file(const std::string& path) {
  const int fd = open_regular(path, O_RDONLY, "open");
  const auto too_large = [&] {
    ::close(fd);
    return std::runtime_error(fmt::format(
        "{} is larger than the {} MiB collbench reads from one CSV (hundreds of thousands of "
        "rows); split it, or keep the rows you need",
        path, kCsvMaxFileBytes >> 20));
  };
  if (static_cast<std::uint64_t>(regular_file_status(fd, path).st_size) > kCsvMaxFileBytes) {
    throw too_large();
  }
  std::string text;
  try {
    // At most one byte past the limit: a file that grows while it is read,
    // or one whose size says 0 (/proc), is bounded too.
    text = read_at_most(fd, 0, kCsvMaxFileBytes + 1, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (text.size() > kCsvMaxFileBytes) throw too_large();
  ::close(fd);
  if (text.size() > kCsvMaxHeaderBytes && text.find('\n') > kCsvMaxHeaderBytes) {
    throw std::runtime_error(
        fmt::format("{}: no header line within its first {} bytes; it is not a CSV file", path,
                    kCsvMaxHeaderBytes));
  }
  return parse_csv(text, path);
}

}  // namespace collbench
