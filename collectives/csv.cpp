#include "collbench/csv.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace collbench {
namespace {

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

void write_fully(int fd, const std::string& text, const std::string& path) {
  // One write(2) per row: with O_APPEND the kernel places it whole, so a
  // killed run leaves complete rows only (short writes are retried).
  const char* data = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t written = ::write(fd, data, left);
    if (written < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(fmt::format("cannot write to {}: {}", path, std::strerror(errno)));
    }
    data += written;
    left -= static_cast<std::size_t>(written);
  }
}

}  // namespace

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
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC;
  bool write_header = true;
  if (policy == ExistingFile::refuse) flags |= O_EXCL;
  if (policy == ExistingFile::overwrite) flags |= O_TRUNC;
  if (policy == ExistingFile::append && ::access(path_.c_str(), F_OK) == 0) {
    const std::string existing = read_first_line(path_);
    const std::string expected = csv_line(columns_).substr(0, csv_line(columns_).size() - 1);
    if (!existing.empty()) {
      if (existing != expected) {
        throw std::runtime_error(fmt::format(
            "cannot append to {}: its header differs from this version's columns", path_));
      }
      write_header = false;
    }
  }
  fd_ = ::open(path_.c_str(), flags, 0644);
  if (fd_ < 0) {
    if (errno == EEXIST) {
      throw std::runtime_error(fmt::format(
          "{} already exists; choose another path, or pass --append or --force", path_));
    }
    throw std::runtime_error(fmt::format("cannot create {}: {}", path_, std::strerror(errno)));
  }
  if (write_header) write_fully(fd_, csv_line(columns_), path_);
}

CsvWriter::~CsvWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void CsvWriter::write_row(const std::vector<std::string>& fields) {
  if (fields.size() != columns_.size()) {
    throw std::invalid_argument(fmt::format("{}: row has {} fields, the header has {}", path_,
                                            fields.size(), columns_.size()));
  }
  write_fully(fd_, csv_line(fields), path_);
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
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_csv(text.str(), path);
}

}  // namespace collbench
