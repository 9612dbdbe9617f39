// Local work (reductions, copies between an algorithm's buffers) passes
// through the transport's hook (Transport::reduce, reduce_into,
// scale_for_average, copy), where a simulated transport charges it as time.
// Shown three ways: no algorithm source calls a kernel or memcpy itself; an
// algorithm whose hook does nothing delivers wrong results (the work really
// happens there); and the bytes each rank reduces through the hook are the
// reduce_bytes of the algorithm's cost() (the simulator charges exactly the
// model's γ term).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/collectives/collective.h"
#include "collbench/transport/forwarding_transport.h"
#include "collbench/transport/inproc_transport.h"
#include "collective_case.h"

namespace collbench {
namespace {

// A transport that forwards communication to another and keeps a ledger of
// the local work passed to it; with do_work false it does none of it.
class LocalWorkLedger final : public ForwardingTransport {
 public:
  LocalWorkLedger(Transport& inner, bool do_work) : ForwardingTransport(inner), do_work_(do_work) {}

  void reduce(DType dtype, ReduceOp op, void* dst, const void* src, std::size_t count) override {
    reduced_bytes += count * dtype_size(dtype);
    if (do_work_) Transport::reduce(dtype, op, dst, src, count);
  }
  void reduce_into(DType dtype, ReduceOp op, void* dst, const void* first, const void* second,
                   std::size_t count) override {
    reduced_bytes += count * dtype_size(dtype);
    if (do_work_) Transport::reduce_into(dtype, op, dst, first, second, count);
  }
  void scale_for_average(DType dtype, void* data, std::size_t count, int ranks) override {
    scaled_bytes += count * dtype_size(dtype);
    if (do_work_) Transport::scale_for_average(dtype, data, count, ranks);
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    copied_bytes += bytes;
    if (do_work_) Transport::copy(dst, src, bytes);
  }

  std::uint64_t reduced_bytes = 0;
  std::uint64_t scaled_bytes = 0;
  std::uint64_t copied_bytes = 0;

 private:
  bool do_work_;
};

struct RankLedger {
  std::uint64_t reduced_bytes = 0;
  std::uint64_t copied_bytes = 0;
  std::uint64_t wrong = 0;
};

// Runs `algorithm` on `ranks` in-process ranks through ledgers; by rank.
std::vector<RankLedger> run_through_ledgers(const CollectiveInfo& collective,
                                            const AlgorithmInfo& algorithm, int ranks,
                                            std::size_t count, bool do_work) {
  std::vector<RankLedger> ledgers(static_cast<std::size_t>(ranks));
  run_in_process(ranks, [&](Transport& transport) {
    LocalWorkLedger ledger(transport, do_work);
    const std::uint64_t wrong = testing::run_checked_calls(
        ledger, collective, algorithm, count, DType::f32, ReduceOp::sum, /*in_place=*/false);
    // Each rank writes its own entry: no two threads share one.
    auto& entry = ledgers[static_cast<std::size_t>(transport.rank())];
    // Two calls ran: the ledger holds both.
    entry = {ledger.reduced_bytes / 2, ledger.copied_bytes / 2, wrong};
  });
  return ledgers;
}

template <typename Visit>
void for_each_hand_written(Visit&& visit) {
  for (const CollectiveInfo& collective : collectives()) {
    for (const AlgorithmInfo& algorithm : collective.algorithms) {
      if (algorithm.name == kMpiLibraryAlgorithm) continue;
      visit(collective, algorithm);
    }
  }
}

// Whether a line of code calls a kernel or copies memory itself: one of the
// names, then "(", not a member of something (transport_.reduce_into) nor
// part of a longer name (copy_bytes). (No std::regex: GCC 12 warns inside it
// under the sanitizers.)
bool calls_around_the_hook(const std::string& code) {
  static constexpr std::string_view kNames[] = {"memcpy",           "memmove",     "copy_n",
                                                "std::copy",        "reduce_into", "reduce_inplace",
                                                "scale_for_average"};
  for (const std::string_view name : kNames) {
    const std::string call = std::string(name) + "(";
    for (auto at = code.find(call); at != std::string::npos; at = code.find(call, at + 1)) {
      const char before = at == 0 ? ' ' : code[at - 1];
      const bool member_or_longer =
          before == '_' || before == '.' || before == '>' || (before >= 'a' && before <= 'z');
      if (!member_or_longer) return true;
    }
  }
  return false;
}

// The algorithms' sources, read as text: none calls a kernel or copies
// memory around the hook (CollectiveBase's reduce, reduce_ordered,
// copy_bytes and finish_average are the only ways, and they go through the
// transport). The MPI library's builds (collectives/mpi/) run the library.
TEST(LocalWork, NoAlgorithmSourceBypassesTheHook) {
  std::vector<std::string> offenders;
  int files = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(COLLBENCH_SOURCE_DIR "/collectives")) {
    const auto& path = entry.path();
    if (path.extension() != ".cpp" && path.extension() != ".h") continue;
    if (path.parent_path().filename() == "mpi") continue;
    ++files;
    std::ifstream file(path);
    std::string line;
    for (int number = 1; std::getline(file, line); ++number) {
      const auto comment = line.find("//");
      const std::string code = line.substr(0, comment);
      if (calls_around_the_hook(code)) {
        offenders.push_back(path.string() + ":" + std::to_string(number) + ": " + line);
      }
    }
  }
  EXPECT_GT(files, 30);
  std::ostringstream list;
  for (const auto& offender : offenders) list << "\n  " << offender;
  EXPECT_TRUE(offenders.empty()) << "local work outside the transport's hook:" << list.str();
}

// With a hook that does nothing, every algorithm that reduces, or copies,
// through it delivers wrong results: the work happens there and nowhere
// else.
TEST(LocalWork, AlgorithmsDoTheirWorkThroughTheHook) {
  int reducing = 0;
  for_each_hand_written([&](const CollectiveInfo& collective, const AlgorithmInfo& algorithm) {
    for (const int ranks : {3, 4}) {
      const std::size_t count = 96;
      if (!algorithm.unsupported_reason("inproc", ranks, count).empty()) continue;
      const auto done = run_through_ledgers(collective, algorithm, ranks, count, true);
      const auto skipped = run_through_ledgers(collective, algorithm, ranks, count, false);
      std::uint64_t wrong_done = 0, wrong_skipped = 0, reduced = 0, copied = 0;
      for (int rank = 0; rank < ranks; ++rank) {
        wrong_done += done[static_cast<std::size_t>(rank)].wrong;
        wrong_skipped += skipped[static_cast<std::size_t>(rank)].wrong;
        reduced += done[static_cast<std::size_t>(rank)].reduced_bytes;
        copied += done[static_cast<std::size_t>(rank)].copied_bytes;
      }
      const std::string which = std::string(collective.name) + "/" + std::string(algorithm.name) +
                                " p=" + std::to_string(ranks);
      EXPECT_EQ(wrong_done, 0u) << which;
      if (collective.reduces) {
        ++reducing;
        EXPECT_GT(reduced, 0u) << which << " reduced nothing through the hook";
      }
      if (reduced + copied > 0) {
        EXPECT_GT(wrong_skipped, 0u)
            << which << " delivered right results with a hook that does no work";
      }
    }
  });
  EXPECT_GT(reducing, 20);
}

// At p = 2^k and p | n, the most any rank reduces through the hook is the
// reduce_bytes of the algorithm's cost(): what a simulation charges as n·γ
// is the model's γ term.
TEST(LocalWork, ReducedBytesAreTheCostModels) {
  for_each_hand_written([&](const CollectiveInfo& collective, const AlgorithmInfo& algorithm) {
    if (!collective.reduces) return;
    // The double binary tree's γ term is its critical path's: each level
    // reduces after the level below has, so the levels' reductions add up
    // (more than any one rank reduces; sim_truth_test checks it).
    if (algorithm.name == "double_binary_tree") return;
    for (const int ranks : {2, 4, 8}) {
      const std::size_t count = 1024;
      if (!algorithm.unsupported_reason("inproc", ranks, count).empty()) continue;
      const auto ledgers = run_through_ledgers(collective, algorithm, ranks, count, true);
      std::uint64_t most = 0;
      for (const RankLedger& ledger : ledgers) most = std::max(most, ledger.reduced_bytes);
      const double bytes = static_cast<double>(count * dtype_size(DType::f32));
      EXPECT_DOUBLE_EQ(static_cast<double>(most), algorithm.cost(ranks, bytes).reduce_bytes)
          << collective.name << "/" << algorithm.name << " p=" << ranks;
    }
  });
}

}  // namespace
}  // namespace collbench
