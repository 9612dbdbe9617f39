// libFuzzer target: the RFC 4180 reader behind collbench-fit. Malformed text
// must give std::runtime_error; a parsed table written back with csv_line
// must parse to the same table.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "collbench/core/csv.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  collbench::CsvTable table;
  try {
    table = collbench::parse_csv(text, "fuzz");
  } catch (const std::runtime_error&) {
    return 0;
  }
  if (table.header.empty()) return 0;
  // A header of one empty field writes as a blank line, which the reader
  // skips by design; nothing to compare then.
  if (table.header.size() == 1 && table.header[0].empty()) return 0;
  std::string written = collbench::csv_line(table.header);
  for (const auto& row : table.rows) {
    if (row.size() == 1 && row[0].empty()) return 0;
    written += collbench::csv_line(row);
  }
  const collbench::CsvTable again = collbench::parse_csv(written, "rewritten");
  if (again.header != table.header || again.rows != table.rows) __builtin_trap();
  return 0;
}
