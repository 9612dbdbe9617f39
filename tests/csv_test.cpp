// CsvWriter and parse_csv: RFC 4180 quoting both ways, refusing to clobber,
// appending only to a matching header and a whole last row, rows on disk as
// soon as written and whole or absent when the disk fills, reading bounded.
#include "collbench/core/csv.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
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

void expect_error(const std::function<void()>& action, const std::string& fragment) {
  try {
    action();
    ADD_FAILURE() << "no error; expected one with: " << fragment;
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
  }
}

TEST_F(CsvFile, AppendRefusesALastLineWithoutNewlineAndLeavesTheFileAlone) {
  { CsvWriter writer(path_, {"a", "b"}); }
  std::ofstream(path_, std::ios::app) << "1,2\n3,";  // a row cut short
  expect_error(
      [&] {
        CsvWriter(path_, {"a", "b"}, ExistingFile::append);
      },
      "cannot append to " + path_ + ": its last line has no newline");
  EXPECT_EQ(slurp(path_), "a,b\n1,2\n3,");
  // A header without its newline is not a header either.
  std::ofstream(path_, std::ios::trunc) << "a,b";
  expect_error(
      [&] {
        CsvWriter(path_, {"a", "b"}, ExistingFile::append);
      },
      "has no complete header line");
  EXPECT_EQ(slurp(path_), "a,b");
}

// A torn row that still ends in a newline: every reader would refuse the
// file once rows are appended after it.
TEST_F(CsvFile, AppendRefusesATornLastRowEndingInANewline) {
  const std::string whole = "a,b,c\n1,2,3\n";
  for (const std::string& torn : {std::string("4,5\n"), std::string("4,5,6,7\n"),
                                  std::string("4,5,\0\0\0\n", 8), std::string("\0\0\0\0\n", 5)}) {
    std::ofstream(path_, std::ios::trunc | std::ios::binary) << whole << torn;
    const std::string before = slurp(path_);
    const std::string fragment =
        torn.find('\0') != std::string::npos
            ? ": its last line has NUL bytes"
            : ": its last line is not a whole row of the header's 3 fields";
    expect_error(
        [&] {
          CsvWriter(path_, {"a", "b", "c"}, ExistingFile::append);
        },
        "cannot append to " + path_ + fragment);
    EXPECT_EQ(slurp(path_), before);
  }
  // Whole last rows are accepted: a plain one, and one with a quoted field that
  // spans lines.
  for (const std::string& tail :
       {std::string(""), std::string("\"x\",\"two\nlines\",\"\"\"q\"\n")}) {
    std::ofstream(path_, std::ios::trunc | std::ios::binary) << whole << tail;
    { CsvWriter appender(path_, {"a", "b", "c"}, ExistingFile::append); }
    EXPECT_EQ(read_csv_file(path_).header.size(), 3u);
  }
}

TEST_F(CsvFile, ARowTheFileSizeLimitCutsShortIsTruncatedAway) {
  // RLIMIT_FSIZE stands in for a full disk: the write that crosses it is
  // short, the next one fails with EFBIG (SIGXFSZ ignored, as collbench
  // does). The file must end in whole rows either way.
  const std::string row_text(100, 'x');
  CsvWriter writer(path_, {"a"});
  writer.write_row({row_text});  // header 2 bytes + 101, 103 in all
  auto* previous = std::signal(SIGXFSZ, SIG_IGN);
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit limit = saved;
  limit.rlim_cur = 150;  // room for 47 more bytes, not a 101-byte row
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  std::string short_write, failed_write;
  try {
    writer.write_row({row_text});
  } catch (const std::runtime_error& error) {
    short_write = error.what();
  }
  const std::string after_short = slurp(path_);
  ASSERT_EQ(truncate(path_.c_str(), 150), 0);  // at the limit: the next write fails outright
  const std::uint64_t padded = std::filesystem::file_size(path_);
  try {
    writer.write_row({row_text});
  } catch (const std::runtime_error& error) {
    failed_write = error.what();
  }
  const std::uint64_t after_failed = std::filesystem::file_size(path_);
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, previous);
  EXPECT_EQ(after_short, "a\n" + row_text + "\n");
  EXPECT_NE(short_write.find("cannot write to " + path_ + ": only 47 of the line's 101 bytes"),
            std::string::npos)
      << short_write;
  EXPECT_NE(short_write.find("the file keeps the whole rows written before"), std::string::npos);
  EXPECT_NE(failed_write.find("cannot write to " + path_ + ": File too large"), std::string::npos)
      << failed_write;
  EXPECT_EQ(after_failed, padded);
}

TEST_F(CsvFile, OnlyRegularFilesAreReadOrWrittenAndWithoutBlocking) {
  for (const auto policy : {ExistingFile::append, ExistingFile::overwrite}) {
    expect_error([&] { CsvWriter("/dev/zero", {"a"}, policy); }, "/dev/zero is not a regular file");
  }
  expect_error([] { read_csv_file("/dev/zero"); }, "/dev/zero is not a regular file");
  // A FIFO nobody writes to would block an open or read for ever.
  ASSERT_EQ(mkfifo(path_.c_str(), 0600), 0);
  expect_error([&] { read_csv_file(path_); }, "is not a regular file");
  expect_error([&] { CsvWriter(path_, {"a"}, ExistingFile::append); }, "is not a regular file");
}

TEST_F(CsvFile, ReadingIsBoundedByTheHeaderAndFileLimits) {
  std::ofstream(path_) << std::string(kCsvMaxHeaderBytes + 1, 'a');  // one endless line
  expect_error([&] { read_csv_file(path_); }, "no header line within its first 1048576 bytes");
  expect_error([&] { CsvWriter(path_, {"a"}, ExistingFile::append); },
               "no header line within its first 1048576 bytes");
  // Sparse: the size is what counts, and it is refused before any read.
  ASSERT_EQ(truncate(path_.c_str(), static_cast<off_t>(kCsvMaxFileBytes) + 1), 0);
  expect_error([&] { read_csv_file(path_); }, "is larger than the 256 MiB collbench reads");
}

TEST_F(CsvFile, TwoSpellingsOfOnePathAreOneFile) {
  const std::filesystem::path file(path_);
  EXPECT_TRUE(names_same_file(path_, (file.parent_path() / "." / file.filename()).string()));
  EXPECT_FALSE(names_same_file(path_, path_ + ".other"));
  const std::string cwd = std::filesystem::current_path().string();
  std::filesystem::current_path(file.parent_path());
  const bool relative = names_same_file(file.filename().string(), "./" + file.filename().string());
  std::filesystem::current_path(cwd);
  EXPECT_TRUE(relative) << "a relative path of a file that does not exist yet";
  { std::ofstream(path_) << "x\n"; }
  const std::string link = path_ + ".link";
  std::filesystem::remove(link);
  std::filesystem::create_hard_link(path_, link);
  EXPECT_TRUE(names_same_file(path_, link));
  std::filesystem::remove(link);
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

// A writer cut short inside the header leaves a line without its break.
TEST(ParseCsv, TellsWhetherTheHeaderLineEnded) {
  EXPECT_TRUE(parse_csv("a,b\n").header_complete);
  EXPECT_TRUE(parse_csv("a,b\r\n").header_complete);
  EXPECT_TRUE(parse_csv("a,b\n1,2").header_complete);
  EXPECT_FALSE(parse_csv("a,b").header_complete);
  EXPECT_FALSE(parse_csv("a,bc,ti").header_complete);
}

}  // namespace
}  // namespace collbench
