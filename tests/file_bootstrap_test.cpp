// Tests of the file bootstrap (bootstrap.h): ranks as threads of this
// process, each with its own FileBootstrap on one folder, as separate
// processes would be. Every error case ends well under a second: stale
// files are refused before any wait, and the missing-peer case waits out a
// short timeout.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "collbench/transport/bootstrap.h"
#include "temp_dir.h"

namespace collbench {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// What rank r contributes in round k: lengths differ by rank and round (0
// included), and the bytes include newlines and zeros.
std::string contribution(int rank, int round) {
  std::string bytes(static_cast<std::size_t>((rank * 7 + round * 13) % 40), '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<char>((rank * 31 + round * 17 + static_cast<int>(i)) % 256);
  }
  if (!bytes.empty()) bytes[0] = '\n';
  return bytes;
}

// Runs a job of `ranks` threads doing `rounds` exchanges; every rank
// checks what it got from every other.
void run_job(const std::string& dir, int ranks, int rounds) {
  std::vector<std::thread> threads;
  std::vector<std::string> failures(static_cast<std::size_t>(ranks));
  for (int rank = 0; rank < ranks; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        auto bootstrap = make_file_bootstrap(dir, rank, ranks, milliseconds(20'000));
        if (bootstrap->kind() != "file" || bootstrap->rank() != rank ||
            bootstrap->size() != ranks) {
          failures[static_cast<std::size_t>(rank)] = "wrong kind, rank or size";
          return;
        }
        for (int round = 0; round < rounds; ++round) {
          const std::vector<std::string> all = bootstrap->allgather(contribution(rank, round));
          if (all.size() != static_cast<std::size_t>(ranks)) {
            failures[static_cast<std::size_t>(rank)] = "wrong number of contributions";
            return;
          }
          for (int from = 0; from < ranks; ++from) {
            if (all[static_cast<std::size_t>(from)] != contribution(from, round)) {
              failures[static_cast<std::size_t>(rank)] += "round " + std::to_string(round) +
                                                          ": rank " + std::to_string(from) +
                                                          "'s bytes differ; ";
            }
          }
        }
      } catch (const std::exception& error) {
        failures[static_cast<std::size_t>(rank)] = error.what();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int rank = 0; rank < ranks; ++rank) {
    EXPECT_EQ(failures[static_cast<std::size_t>(rank)], "") << "rank " << rank;
  }
}

TEST(FileBootstrap, AllgatherGivesEveryRankEveryContributionAndCleansUp) {
  testing::TempDir dir("collbench-bootstrap");
  for (const int ranks : {1, 2, 3, 5}) {
    run_job(dir.path(), ranks, 4);
    EXPECT_TRUE(dir.files().empty()) << ranks << " ranks left " << dir.files().front();
  }
  // The folder of a job that finished serves the next one at once.
  run_job(dir.path(), 3, 0);
  run_job(dir.path(), 3, 1);
  EXPECT_TRUE(dir.files().empty());
}

void expect_error(const std::function<void()>& start, const std::vector<std::string>& phrases) {
  try {
    start();
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& error) {
    const std::string text = error.what();
    for (const std::string& phrase : phrases) {
      EXPECT_NE(text.find(phrase), std::string::npos) << "'" << phrase << "' not in: " << text;
    }
  }
}

const std::string kEmptyIt =
    "the folder holds files of another job; empty it or choose another folder";

TEST(FileBootstrap, MissingFolderIsAnError) {
  testing::TempDir dir("collbench-bootstrap");
  const std::string missing = dir.path() + "/not-there";
  expect_error([&] { make_file_bootstrap(missing, 0, 2, milliseconds(5'000)); },
               {"folder '" + missing + "' does not exist"});
}

TEST(FileBootstrap, OwnFileAlreadyThereIsAStaleFolder) {
  testing::TempDir dir("collbench-bootstrap");
  dir.write("rank1.round0", "collbench-bootstrap ranks=2 file=rank1.round0 job=1\n");
  expect_error([&] { make_file_bootstrap(dir.path(), 1, 2, milliseconds(5'000)); },
               {"rank1.round0 exists as this rank starts", kEmptyIt});
  EXPECT_EQ(dir.files().size(), 1u) << "another job's file must be left alone";
}

TEST(FileBootstrap, FileOfAnotherJobSizeIsAStaleFolder) {
  testing::TempDir dir("collbench-bootstrap");
  dir.write("rank1.round0", "collbench-bootstrap ranks=4 file=rank1.round0 job=1\n");
  expect_error([&] { make_file_bootstrap(dir.path(), 0, 2, milliseconds(5'000)); },
               {"rank1.round0 was written by a job of 4 ranks, this one has 2", kEmptyIt});
  EXPECT_EQ(dir.files(), std::vector<std::string>{"rank1.round0"})
      << "the failed rank must remove its own file, and only that";
}

TEST(FileBootstrap, FileOfARankBeyondTheJobIsAStaleFolder) {
  testing::TempDir dir("collbench-bootstrap");
  dir.write("rank2.farewell", "collbench-bootstrap ranks=3 file=rank2.farewell job=1\n");
  expect_error([&] { make_file_bootstrap(dir.path(), 0, 2, milliseconds(5'000)); },
               {"rank2.farewell is of a rank beyond this job's 2", kEmptyIt});
}

TEST(FileBootstrap, NotABootstrapFileIsAStaleFolder) {
  testing::TempDir dir("collbench-bootstrap");
  dir.write("rank1.round0", "something else\n");
  expect_error([&] { make_file_bootstrap(dir.path(), 0, 2, milliseconds(5'000)); },
               {"rank1.round0 is not a bootstrap file", kEmptyIt});
}

// A job that died left rank 1's greeting and first exchange. Rank 0 of a
// new job reads the greeting (nothing tells it apart yet), but rank 1's
// exchange file names another job: an error, not a wrong answer.
TEST(FileBootstrap, FileOfAnotherJobWithTheSameSizeIsAStaleFolder) {
  testing::TempDir dir("collbench-bootstrap");
  dir.write("rank1.round0", "collbench-bootstrap ranks=2 file=rank1.round0 job=1234\n");
  dir.write("rank1.round1", "collbench-bootstrap ranks=2 file=rank1.round1 job=5678\npayload");
  auto bootstrap = make_file_bootstrap(dir.path(), 0, 2, milliseconds(5'000));
  expect_error([&] { bootstrap->allgather("mine"); },
               {"rank1.round1 belongs to another job", kEmptyIt});
  expect_error([&] { bootstrap->allgather("again"); }, {"an earlier exchange failed"});
  bootstrap.reset();
  std::vector<std::string> files = dir.files();
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"rank1.round0", "rank1.round1"}));
}

TEST(FileBootstrap, MissingPeersAreNamedAfterTheTimeout) {
  testing::TempDir dir("collbench-bootstrap");
  expect_error([&] { make_file_bootstrap(dir.path(), 0, 3, milliseconds(150)); },
               {"ranks 1, 2 of 3 did not arrive", "within 150 ms"});
  EXPECT_TRUE(dir.files().empty()) << "rank 0 left " << dir.files().front();

  // A peer that greeted, then died before the first exchange.
  dir.write("rank1.round0", "collbench-bootstrap ranks=2 file=rank1.round0 job=99\n");
  auto bootstrap = make_file_bootstrap(dir.path(), 0, 2, milliseconds(150));
  expect_error([&] { bootstrap->allgather("x"); },
               {"rank 1 of 2 did not arrive (no round1 file) within 150 ms"});
}

TEST(FileBootstrap, RankOutsideTheJobIsRefused) {
  testing::TempDir dir("collbench-bootstrap");
  EXPECT_THROW(make_file_bootstrap(dir.path(), 2, 2, milliseconds(100)), std::invalid_argument);
  EXPECT_THROW(make_file_bootstrap(dir.path(), -1, 2, milliseconds(100)), std::invalid_argument);
  EXPECT_THROW(make_file_bootstrap(dir.path(), 0, 0, milliseconds(100)), std::invalid_argument);
}

}  // namespace
}  // namespace collbench
