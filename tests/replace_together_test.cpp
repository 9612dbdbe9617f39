// ReplaceTogether (benchmarks/models/replace_on_commit.h): the outputs of one
// run replace the earlier ones all together or not at all, whichever step
// fails, and nothing of theirs is left behind.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>

#include "replace_on_commit.h"

namespace collbench {
namespace {

namespace fs = std::filesystem;

class ReplaceTogetherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::path(::testing::TempDir()) /
              ("replace_together_" + std::to_string(::getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(folder_);
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }

  std::string in_folder(const std::string& name) const { return (folder_ / name).string(); }
  static void write(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }
  static std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  // Every name in the folder, hidden ones (temporaries, backups) included.
  std::set<std::string> names() const {
    std::set<std::string> found;
    for (const auto& entry : fs::directory_iterator(folder_)) {
      found.insert(entry.path().filename().string());
    }
    return found;
  }

  fs::path folder_;
};

TEST_F(ReplaceTogetherTest, CommitReplacesEveryOutputAndLeavesNothingElse) {
  write(in_folder("a.csv"), "old a");
  {
    ReplaceTogether outputs(folder_.string());
    write(outputs.add("a.csv"), "new a");
    write(outputs.add("b.csv"), "new b");
    EXPECT_EQ(read(in_folder("a.csv")), "old a");  // nothing replaced before commit()
    outputs.commit();
  }
  EXPECT_EQ(read(in_folder("a.csv")), "new a");
  EXPECT_EQ(read(in_folder("b.csv")), "new b");
  EXPECT_EQ(names(), (std::set<std::string>{"a.csv", "b.csv"}));
}

// A write that fails (a full disk) throws before commit(): every destination
// keeps its content, and the temporaries go.
TEST_F(ReplaceTogetherTest, OutputsNeverCommittedLeaveEveryDestinationAsItWas) {
  write(in_folder("a.csv"), "old a");
  write(in_folder("b.csv"), "old b");
  try {
    ReplaceTogether outputs(folder_.string());
    write(outputs.add("a.csv"), "new a");
    write(outputs.add("b.csv"), "new b, cut sh");
    throw std::runtime_error("cannot write: No space left on device");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(read(in_folder("a.csv")), "old a");
  EXPECT_EQ(read(in_folder("b.csv")), "old b");
  EXPECT_EQ(names(), (std::set<std::string>{"a.csv", "b.csv"}));
}

TEST_F(ReplaceTogetherTest, AFolderCreatedForOutputsNeverCommittedIsRemoved) {
  const fs::path nested = folder_ / "run" / "fit";
  {
    ReplaceTogether outputs(nested.string());
    EXPECT_TRUE(fs::is_directory(nested));
    write(outputs.add("a.csv"), "new a");
  }
  EXPECT_TRUE(names().empty());
}

// A rename that fails after others succeeded (here: b's temporary was never
// written) puts back what the earlier ones replaced, and removes what had
// not existed.
TEST_F(ReplaceTogetherTest, AFailedRenameRestoresTheOutputsAlreadyRenamed) {
  write(in_folder("a.csv"), "old a");
  write(in_folder("c.csv"), "old c");
  {
    ReplaceTogether outputs(folder_.string());
    write(outputs.add("new.csv"), "new");
    write(outputs.add("a.csv"), "new a");
    outputs.add("b.csv");
    write(outputs.add("c.csv"), "new c");
    EXPECT_THROW(outputs.commit(), std::runtime_error);
  }
  EXPECT_EQ(read(in_folder("a.csv")), "old a");
  EXPECT_EQ(read(in_folder("c.csv")), "old c");
  EXPECT_EQ(names(), (std::set<std::string>{"a.csv", "c.csv"}));
}

// A destination that cannot be replaced (a folder) fails before any rename.
TEST_F(ReplaceTogetherTest, ADestinationThatIsAFolderFailsBeforeAnyRename) {
  write(in_folder("a.csv"), "old a");
  fs::create_directory(in_folder("b.csv"));
  {
    ReplaceTogether outputs(folder_.string());
    write(outputs.add("a.csv"), "new a");
    write(outputs.add("b.csv"), "new b");
    try {
      outputs.commit();
      ADD_FAILURE() << "commit() over a folder succeeded";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("b.csv"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(read(in_folder("a.csv")), "old a");
  EXPECT_TRUE(fs::is_directory(in_folder("b.csv")));
  EXPECT_EQ(names(), (std::set<std::string>{"a.csv", "b.csv"}));
}

TEST(RequireWritableFolder, RefusesAFileOnTheWayAndAcceptsAFolderToCreate) {
  const std::string file =
      ::testing::TempDir() + "/require_writable_" + std::to_string(::getpid()) + ".txt";
  std::ofstream(file) << "x";
  try {
    require_writable_folder(file + "/fit", "--out-dir");
    ADD_FAILURE() << "a path under a file was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "--out-dir " + file +
                                         "/fit: " + fs::absolute(file).lexically_normal().string() +
                                         " is not a folder");
  }
  EXPECT_NO_THROW(require_writable_folder(::testing::TempDir() + "/not/yet/there", "--out-dir"));
  fs::remove(file);
}

}  // namespace
}  // namespace collbench
