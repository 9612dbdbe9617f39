// The libfabric transport with no MPI at all: the test forks and execs
// itself as N ranks (not mpirun), which meet through a FileBootstrap in a
// fresh folder and run a ping-pong (with wait and with test) and a ring
// exchange, checking every byte. Each child exits 0 (passed), 1 (failed,
// with a line on stderr) or 77 (provider not on this node: the test skips,
// saying so).
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collbench/transport/bootstrap.h"
#include "collbench/transport/instrumented_transport.h"
#include "collbench/transport/ofi_transport.h"
#include "temp_dir.h"

namespace collbench {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr int kSkipExitCode = 77;
constexpr milliseconds kChildTimeout{30'000};
// The parent kills children still running after this (a hang must fail
// the test, not CTest's timeout).
constexpr std::chrono::seconds kJobTimeout{150};

std::byte pattern(int from, int to, int round, std::size_t index) {
  return static_cast<std::byte>((from * 59 + to * 17 + round * 101 + index * 7 + (index >> 8)) &
                                0xff);
}

// Counts mismatches and says the first on stderr.
class Checker {
 public:
  explicit Checker(int rank) : rank_(rank) {}
  void check(std::span<const std::byte> data, int from, int round, const char* what) {
    for (std::size_t i = 0; i < data.size(); ++i) {
      if (data[i] != pattern(from, rank_, round, i)) {
        std::fprintf(stderr, "rank %d: %s from rank %d, round %d, %zu bytes: byte %zu differs\n",
                     rank_, what, from, round, data.size(), i);
        ++failures_;
        return;
      }
    }
  }
  int failures() const { return failures_; }

 private:
  int rank_;
  int failures_ = 0;
};

void fill(std::span<std::byte> data, int from, int to, int round) {
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = pattern(from, to, round, i);
}

const std::vector<std::size_t> kSizes = {0, 1, 8, 4097, 65536, (1 << 20) + 3};

int run_rank(const std::string& dir, int rank, int ranks, const std::string& provider) {
  const std::unique_ptr<Bootstrap> bootstrap = make_file_bootstrap(dir, rank, ranks, kChildTimeout);
  OfiOptions options;
  options.setup_timeout = kChildTimeout;
  std::unique_ptr<InstrumentedTransport> transport;
  try {
    transport = std::make_unique<InstrumentedTransport>(
        std::make_unique<OfiTransport>(*bootstrap, provider, options));
  } catch (const OfiProviderUnavailable& error) {
    if (rank == 0) std::printf("SKIPPED: %s\n", error.what());
    return kSkipExitCode;
  }
  transport->set_timeout(kChildTimeout);
  Checker checker(rank);
  std::vector<std::byte> send((1 << 20) + 3), recv((1 << 20) + 3);
  MemoryRegistration send_registration(*transport, send);
  MemoryRegistration recv_registration(*transport, recv);

  // Ping-pong between rank 0 and every other rank, waiting with wait() in
  // round 0 and polling test() in round 1.
  for (int round = 0; round < 2; ++round) {
    auto complete = [&](RequestId request) {
      if (round == 0) {
        transport->wait(request);
      } else {
        while (!transport->test(request)) {
        }
      }
    };
    for (int partner = 1; partner < ranks; ++partner) {
      for (const std::size_t size : kSizes) {
        const std::span<std::byte> out = std::span(send).first(size);
        const std::span<std::byte> in = std::span(recv).first(size);
        if (rank == 0) {
          fill(out, 0, partner, round);
          complete(transport->isend(out, partner, 1));
          complete(transport->irecv(in, partner, 1));
          checker.check(in, partner, round, "pong");
        } else if (rank == partner) {
          complete(transport->irecv(in, 0, 1));
          checker.check(in, 0, round, "ping");
          fill(out, rank, 0, round);
          complete(transport->isend(out, 0, 1));
        }
      }
    }
  }
  transport->barrier();

  // Ring: every rank sends to the next and receives from the previous, all
  // at once, several rounds with one tag.
  const int next = (rank + 1) % ranks;
  const int previous = (rank + ranks - 1) % ranks;
  for (int round = 2; round < 6; ++round) {
    for (const std::size_t size : kSizes) {
      fill(std::span(send).first(size), rank, next, round);
      const RequestId requests[2] = {transport->irecv(std::span(recv).first(size), previous, 2),
                                     transport->isend(std::span(send).first(size), next, 2)};
      transport->wait_all(requests);
      checker.check(std::span(recv).first(size), previous, round, "ring");
    }
  }
  transport->barrier();

  // The bootstrap still serves after the transport has used it.
  const std::vector<std::string> ranks_seen = bootstrap->allgather(std::to_string(rank));
  for (int r = 0; r < ranks; ++r) {
    if (ranks_seen[static_cast<std::size_t>(r)] != std::to_string(r)) {
      std::fprintf(stderr, "rank %d: bootstrap allgather gave '%s' for rank %d\n", rank,
                   ranks_seen[static_cast<std::size_t>(r)].c_str(), r);
      return 1;
    }
  }
  return checker.failures() == 0 ? 0 : 1;
}

struct Job {
  std::string provider;
  int ranks;
};

class OfiWithoutMpi : public ::testing::TestWithParam<Job> {};

TEST_P(OfiWithoutMpi, RanksMeetThroughAFolderAndExchangeData) {
  const Job job = GetParam();
  testing::TempDir dir("collbench-ofi");
  // tcp would otherwise take the first interface libfabric lists.
  setenv("FI_TCP_IFACE", "lo", 0);
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  std::vector<pid_t> children;
  for (int rank = 0; rank < job.ranks; ++rank) {
    const std::string rank_text = std::to_string(rank);
    const std::string ranks_text = std::to_string(job.ranks);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0) << std::strerror(errno);
    if (pid == 0) {
      execl(self.c_str(), self.c_str(), "--rank", rank_text.c_str(), "--ranks", ranks_text.c_str(),
            "--dir", dir.path().c_str(), "--provider", job.provider.c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    children.push_back(pid);
  }
  std::vector<int> statuses(children.size(), -1);
  std::size_t running = children.size();
  const auto deadline = std::chrono::steady_clock::now() + kJobTimeout;
  while (running > 0) {
    for (std::size_t i = 0; i < children.size(); ++i) {
      int status = 0;
      if (statuses[i] == -1 && waitpid(children[i], &status, WNOHANG) == children[i]) {
        statuses[i] = status;
        --running;
      }
    }
    if (running > 0 && std::chrono::steady_clock::now() > deadline) {
      for (std::size_t i = 0; i < children.size(); ++i) {
        if (statuses[i] == -1) {
          kill(children[i], SIGKILL);
          waitpid(children[i], &statuses[i], 0);
          ADD_FAILURE() << "rank " << i << " still running after " << kJobTimeout.count()
                        << " s: killed";
        }
      }
      return;
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  int skipped = 0;
  for (std::size_t i = 0; i < children.size(); ++i) {
    const int status = statuses[i];
    if (WIFEXITED(status) && WEXITSTATUS(status) == kSkipExitCode) {
      ++skipped;
    } else {
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
          << "rank " << i << ": "
          << (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                : "killed by signal " + std::to_string(WTERMSIG(status)));
    }
  }
  if (skipped == job.ranks) {
    GTEST_SKIP() << "libfabric provider " << job.provider << " absent on this node";
  }
  EXPECT_EQ(skipped, 0) << "some ranks found the provider, others did not";
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    left.push_back(entry.path().filename().string());
  }
  EXPECT_TRUE(left.empty()) << "the job left " << left.size() << " files, e.g. " << left.front();
}

INSTANTIATE_TEST_SUITE_P(Providers, OfiWithoutMpi,
                         ::testing::Values(Job{"shm", 2}, Job{"shm", 3}, Job{"tcp;ofi_rxm", 2},
                                           Job{"tcp;ofi_rxm", 3}),
                         [](const ::testing::TestParamInfo<Job>& param) {
                           std::string name =
                               param.param.provider.substr(0, param.param.provider.find(';'));
                           return name + "_np" + std::to_string(param.param.ranks);
                         });

}  // namespace
}  // namespace collbench

// As a child: --rank R --ranks N --dir DIR --provider P.
int main(int argc, char** argv) {
  if (argc == 9 && std::strcmp(argv[1], "--rank") == 0) {
    try {
      return collbench::run_rank(argv[6], std::atoi(argv[2]), std::atoi(argv[4]), argv[8]);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "rank %s: %s\n", argv[2], error.what());
      return 1;
    }
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
