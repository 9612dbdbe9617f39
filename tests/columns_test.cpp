// core/columns.csv against the C++ that is generated from it: the headers the
// writers write, and the tables core/columns.cmake generates (its parser is
// a regular expression in CMake; this test reads the CSV with collbench's
// RFC 4180 reader and compares every field).
#include "collbench/core/columns.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "collbench/core/csv.h"
#include "collbench/models/compute.h"
#include "collbench/models/fit.h"
#include "collbench/models/predict.h"
#include "options.h"
#include "reporter.h"

namespace collbench {
namespace {

struct Schema {
  CsvTable table = read_csv_file(COLLBENCH_COLUMNS_CSV);

  std::string field(const std::vector<std::string>& row, std::string_view column) const {
    return row.at(static_cast<std::size_t>(table.column(column)));
  }
  std::vector<std::vector<std::string>> rows(std::string_view file) const {
    std::vector<std::vector<std::string>> found;
    for (const auto& row : table.rows) {
      if (field(row, "file") == file) found.push_back(row);
    }
    return found;
  }
  std::vector<std::string> names(std::string_view file) const {
    std::vector<std::string> found;
    for (const auto& row : rows(file)) found.push_back(field(row, "column"));
    return found;
  }
};

TEST(Columns, WritersWriteTheHeadersOfTheSchema) {
  const Schema schema;
  EXPECT_EQ(harness::csv_columns(), schema.names("collbench"));
  EXPECT_EQ(models_csv_columns(), schema.names("models"));
  EXPECT_EQ(predictions_csv_columns(), schema.names("predictions"));
  EXPECT_EQ(selections_csv_columns(), schema.names("selections"));
  EXPECT_EQ(compute_csv_columns(), schema.names("compute"));
  EXPECT_EQ(scaling_csv_columns(), schema.names("scaling"));
  EXPECT_EQ(columns::names(columns::kLinks), schema.names("links"));
  EXPECT_EQ(columns::names(columns::kHosts), schema.names("hosts"));
  const std::string listing = harness::algorithm_listing(true);
  EXPECT_EQ(listing.substr(0, listing.find('\n') + 1), csv_line(schema.names("listing")));
}

// The range text of core/columns.csv as the generated fields.
struct Range {
  bool checked = false;
  double lowest = -columns::kInfinity;
  bool lowest_included = true;
  double highest = columns::kInfinity;
};

Range parse_range(const std::string& text) {
  Range range;
  if (text.empty()) return range;
  range.checked = true;
  if (text == "finite") return range;
  std::string_view rest = text;
  const auto number = [&rest](std::size_t skip) {
    rest.remove_prefix(skip);
    const std::string digits(rest.substr(0, rest.find(' ')));
    rest.remove_prefix(std::min(rest.size(), digits.size()));
    return std::strtod(digits.c_str(), nullptr);
  };
  if (rest.starts_with(">= ")) {
    range.lowest = number(3);
  } else if (rest.starts_with("> ")) {
    range.lowest_included = false;
    range.lowest = number(2);
  }
  if (rest.starts_with(" and ")) rest.remove_prefix(5);
  if (rest.starts_with("<= ")) range.highest = number(3);
  return range;
}

const char* type_name(columns::Type type) {
  switch (type) {
    case columns::Type::text:
      return "text";
    case columns::Type::integer:
      return "integer";
    case columns::Type::number:
      return "number";
    case columns::Type::list:
      return "list";
  }
  return "?";
}

TEST(Columns, GeneratedTablesHoldEveryFieldOfTheSchema) {
  const Schema schema;
  const std::map<std::string, std::span<const columns::Column>> generated = {
      {"collbench", columns::kCollbench},
      {"models", columns::kModels},
      {"predictions", columns::kPredictions},
      {"selections", columns::kSelections},
      {"compute", columns::kCompute},
      {"scaling", columns::kScaling},
      {"simscaling", columns::kSimscaling},
      {"links", columns::kLinks},
      {"hosts", columns::kHosts},
      {"listing", columns::kListing}};
  std::size_t compared = 0;
  for (const auto& row : schema.table.rows) {
    const std::string file = schema.field(row, "file");
    const auto table = generated.find(file);
    ASSERT_NE(table, generated.end()) << file << ": a CSV this test does not know; add it above";
    const auto column = std::find_if(
        table->second.begin(), table->second.end(),
        [&](const columns::Column& c) { return c.name == schema.field(row, "column"); });
    ASSERT_NE(column, table->second.end()) << file << " " << schema.field(row, "column");
    SCOPED_TRACE(file + " " + std::string(column->name));
    EXPECT_EQ(type_name(column->type), schema.field(row, "type"));
    EXPECT_EQ(column->unit, schema.field(row, "unit"));
    const Range range = parse_range(schema.field(row, "range"));
    EXPECT_EQ(column->checked, range.checked);
    EXPECT_EQ(column->lowest, range.lowest);
    EXPECT_EQ(column->lowest_included, range.lowest_included);
    EXPECT_EQ(column->highest, range.highest);
    ++compared;
  }
  std::size_t total = 0;
  for (const auto& [file, table] : generated) total += table.size();
  EXPECT_EQ(compared, total) << "a generated column that core/columns.csv does not have";
}

}  // namespace
}  // namespace collbench
