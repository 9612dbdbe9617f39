// The harness's collectives when every rank is in this process: the values
// are all here, so the reductions are the process's own; see harness_group.h.
#include "harness_group.h"

namespace collbench::harness {
namespace {

class InProcessHarnessGroup final : public HarnessGroup {
 public:
  explicit InProcessHarnessGroup(RankGroup& group) : group_(group) {}

  void each_rank(const std::function<void(int rank)>& body) override {
    group_.run([&](Transport& transport) { body(transport.rank()); });
  }
  double now(InstrumentedTransport& rank) const override { return group_.now(rank.inner()); }
  bool names_rank_in_errors() const override { return false; }

  // The in-process transport's barrier sleeps while it waits.
  void barrier(InstrumentedTransport& rank, const char*) override { rank.barrier(); }
  void sleeping_barrier(InstrumentedTransport& rank, const char*) override { rank.barrier(); }

  SecondsOnRank slowest(SecondsOnRank mine, const char*) override { return mine; }
  std::uint64_t sum(std::uint64_t mine, const char*) override { return mine; }
  double sum(double mine, const char*) override { return mine; }
  int min(int mine, const char*) override { return mine; }
  void broadcast(std::span<std::byte>, int, const char*) override {}
  std::vector<double> gather(std::span<const double> mine, const char*) override {
    return {mine.begin(), mine.end()};
  }
  void timed_out(const std::string&) override {}

 private:
  RankGroup& group_;
};

}  // namespace

std::unique_ptr<HarnessGroup> make_in_process_harness_group(RankGroup& group) {
  return std::make_unique<InProcessHarnessGroup>(group);
}

}  // namespace collbench::harness
