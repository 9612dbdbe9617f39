// CsvWriter and parse_csv: RFC 4180 quoting both ways, refusing to clobber,
// appending only to a matching header, rows on disk as soon as written.
#include "collbench/csv.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace collbench {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class CsvFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("collbench_csv_test_" + std::to_string(::getpid()) + ".csv"))
                .string();
    std::filesystem::remove(path_);
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_;
};

TEST(CsvEscape, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(csv_escape("plain"), "plain");
  EXPECT_EQ(csv_escape("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_escape("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_escape("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_escape(""), "");
}

TEST_F(CsvFile, RowsAreOnDiskAsSoonAsWrittenAndRoundTrip) {
  {
    CsvWriter writer(path_, {"name", "hosts", "value"});
    writer.write_row({"ring", "node1;node2", "1.5"});
    // No close, no flush call: a run killed here must still have the row.
    EXPECT_EQ(slurp(path_), "name,hosts,value\nring,node1;node2,1.5\n");
    writer.write_row({"with,comma", "quote\"d", "multi\nline"});
  }
  const CsvTable table = read_csv_file(path_);
  ASSERT_EQ(table.header, (std::vector<std::string>{"name", "hosts", "value"}));
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[1], (std::vector<std::string>{"with,comma", "quote\"d", "multi\nline"}));
  EXPECT_EQ(table.column("value"), 2);
  EXPECT_EQ(table.column("missing"), -1);
}

TEST_F(CsvFile, ExistingFileIsRefusedUnlessAskedFor) {
  { CsvWriter writer(path_, {"a", "b"}); }
  try {
    CsvWriter again(path_, {"a", "b"});
    FAIL() << "an existing file was opened without --append/--force";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("already exists"), std::string::npos);
  }
  {
    CsvWriter appender(path_, {"a", "b"}, ExistingFile::append);
    appender.write_row({"1", "2"});
  }
  EXPECT_EQ(slurp(path_), "a,b\n1,2\n");
  EXPECT_THROW(CsvWriter(path_, {"a", "c"}, ExistingFile::append), std::runtime_error);
  { CsvWriter overwriter(path_, {"x"}, ExistingFile::overwrite); }
  EXPECT_EQ(slurp(path_), "x\n");
}

TEST_F(CsvFile, RowWidthMustMatchTheHeader) {
  CsvWriter writer(path_, {"a", "b"});
  EXPECT_THROW(writer.write_row({"only one"}), std::invalid_argument);
}

TEST(ParseCsv, AcceptsCrlfAndTrailingBlankLine) {
  const CsvTable table = parse_csv("a,b\r\n1,\"x,y\"\r\n\r\n");
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0][1], "x,y");
}

TEST(ParseCsv, MalformedInputNamesTheSourceAndLine) {
  try {
    parse_csv("a,b\n1,\"open\n", "runs.csv");
    FAIL();
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("runs.csv:2"), std::string::npos) << error.what();
  }
  EXPECT_THROW(parse_csv("a,b\n1,2,3\n"), std::runtime_error);
  EXPECT_THROW(parse_csv("a,b\n1,x\"y\n"), std::runtime_error);
  EXPECT_TRUE(parse_csv("").header.empty());
}

}  // namespace
}  // namespace collbench
