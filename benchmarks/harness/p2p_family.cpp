// The point-to-point families (family.h), over the selected transport; both
// are "p2p" in the CSV, told apart by the algorithm column.
//
//   p2p/pingpong/<bytes>/peer:<r>   half round trip rank 0 <-> rank r, as OSU's
//                                   latency loop; only rank 0's time counts,
//                                   and the other ranks wait in a sleeping poll
//   p2p/sendrecv/<bytes>            (--families sendrecv) every rank sends to
//                                   r+1 and receives from r-1 at once (IMB
//                                   Sendrecv): β when every rank is busy, so
//                                   the time is the slowest rank's
//
// A sample is a batch of calls back to back (calls_per_sample, calibrated by
// the Runner). Each rank sends a byte pattern of its own (check_data.h), so
// --check tells what arrived from whom.
#include <fmt/format.h>

#include <array>

#include "aligned_buffer.h"
#include "check_data.h"
#include "families.h"
#include "family.h"
#include "metadata.h"
#include "planner.h"

namespace collbench::harness {
namespace {

constexpr int kPingPongTag = 7;
constexpr int kSendrecvTag = 8;

// What this rank sends (its pattern) and where it receives.
class PreparedP2p : public PreparedCase {
 public:
  PreparedP2p(const BenchmarkCase& benchmark_case, RunContext& context)
      : context_(context),
        transport_(context.transport()),
        rank_(context.rank()),
        ranks_(context.ranks()),
        send_(benchmark_case.message_bytes.front()),
        receive_(benchmark_case.message_bytes.front()) {
    fill_bytes(send_.span(), rank_);
  }

 protected:
  RunContext& context_;
  Transport& transport_;
  const int rank_;
  const int ranks_;
  AlignedBuffer send_;
  AlignedBuffer receive_;
};

class PreparedPingPong final : public PreparedP2p {
 public:
  using PreparedP2p::PreparedP2p;
  static constexpr bool kEveryRankTimed = false;

  CheckResult check(const BenchmarkCase& benchmark_case) override {
    poison(receive_.span());
    context_.synchronize();
    call(benchmark_case);
    if (rank_ == 0) return check_bytes(receive_.span(), benchmark_case.peer);
    if (rank_ == benchmark_case.peer) return check_bytes(receive_.span(), 0);
    return {};
  }

  double call(const BenchmarkCase& benchmark_case) override {
    // Round trips back to back, as OSU's latency loop: each send waits for
    // the previous reply, so nothing overlaps and half the time of one
    // round trip is one message's latency plus transfer.
    double half_round_trips = 0;
    const int peer = benchmark_case.peer;
    const std::uint64_t round_trips = benchmark_case.calls_per_sample;
    if (rank_ == 0) {
      const double start = context_.now();
      for (std::uint64_t i = 0; i < round_trips; ++i) {
        const RequestId receive = transport_.irecv(receive_.span(), peer, kPingPongTag);
        const RequestId send = transport_.isend(send_.span(), peer, kPingPongTag);
        transport_.wait(send);
        transport_.wait(receive);
      }
      half_round_trips = (context_.now() - start) / 2;
    } else if (rank_ == peer) {
      for (std::uint64_t i = 0; i < round_trips; ++i) {
        transport_.wait(transport_.irecv(receive_.span(), 0, kPingPongTag));
        transport_.wait(transport_.isend(send_.span(), 0, kPingPongTag));
      }
    }
    context_.wait_for_all_ranks_sleeping();
    return half_round_trips;
  }
};

class PreparedSendrecv final : public PreparedP2p {
 public:
  using PreparedP2p::PreparedP2p;
  static constexpr bool kEveryRankTimed = true;

  CheckResult check(const BenchmarkCase& benchmark_case) override {
    // What a rank received must be its left neighbour's pattern.
    poison(receive_.span());
    context_.synchronize();
    call(benchmark_case);
    return check_bytes(receive_.span(), (rank_ + ranks_ - 1) % ranks_);
  }

  double call(const BenchmarkCase& benchmark_case) override {
    // Intel MPI Benchmarks' Sendrecv: the ranks form a periodic chain and
    // every rank receives from r-1 while it sends to r+1 (at p = 2 a
    // bidirectional exchange), repeated back to back. Unlike the
    // ping-pong, every rank moves data at the same time, as in an
    // allreduce step, so its beta includes what the ranks share (memory
    // bandwidth, cores, a node's NIC) and the ping-pong's does not.
    const int right = (rank_ + 1) % ranks_;
    const int left = (rank_ + ranks_ - 1) % ranks_;
    const std::uint64_t exchanges = benchmark_case.calls_per_sample;
    const double start = context_.now();
    for (std::uint64_t i = 0; i < exchanges; ++i) {
      const std::array<RequestId, 2> requests = {
          transport_.irecv(receive_.span(), left, kSendrecvTag),
          transport_.isend(send_.span(), right, kSendrecvTag)};
      transport_.wait_all(requests);
    }
    return context_.now() - start;
  }
};

template <typename Prepared>
class P2pFamily final : public FamilyRunner {
 public:
  explicit P2pFamily(const char* algorithm) : algorithm_(algorithm) {}
  std::string family_column(const BenchmarkCase&) const override { return "p2p"; }
  std::string algorithm_column(const BenchmarkCase&) const override { return algorithm_; }
  std::unique_ptr<PreparedCase> prepare(const BenchmarkCase& benchmark_case,
                                        RunContext& context) const override {
    return std::make_unique<Prepared>(benchmark_case, context);
  }
  // The ping-pong's time is rank 0's; the chain's the slowest rank's.
  bool every_rank_timed() const override { return Prepared::kEveryRankTimed; }
  std::string placement(const BenchmarkCase& benchmark_case,
                        const RunMetadata& metadata) const override {
    return Prepared::kEveryRankTimed ? metadata.chain_placement()
                                     : metadata.placement(0, benchmark_case.peer);
  }

 private:
  const char* algorithm_;
};

}  // namespace

const FamilyRunner& pingpong_family() {
  static const P2pFamily<PreparedPingPong> family("pingpong");
  return family;
}

const FamilyRunner& sendrecv_family() {
  static const P2pFamily<PreparedSendrecv> family("sendrecv");
  return family;
}

// Planning (planner.h).

namespace {

// p2p/pingpong/<bytes>/peer:<r>: rank 0 with every other rank.
void add_pingpongs(Planner& planner, const std::vector<std::uint64_t>& sizes) {
  if (planner.ranks() < 2) {
    planner.note("skipping p2p/pingpong: it needs at least 2 ranks");
    return;
  }
  for (const std::uint64_t bytes : sizes) {
    for (int peer = 1; peer < planner.ranks(); ++peer) {
      BenchmarkCase entry;
      entry.name = fmt::format("p2p/pingpong/{}/peer:{}", bytes, peer);
      entry.family = &pingpong_family();
      entry.message_bytes = {bytes};
      entry.peer = peer;
      planner.add(std::move(entry));
    }
  }
}

// p2p/sendrecv/<bytes>: the periodic chain.
void add_sendrecvs(Planner& planner, const std::vector<std::uint64_t>& sizes) {
  if (planner.ranks() < 2) {
    planner.note("skipping p2p/sendrecv: it needs at least 2 ranks");
    return;
  }
  for (const std::uint64_t bytes : sizes) {
    BenchmarkCase entry;
    entry.name = fmt::format("p2p/sendrecv/{}", bytes);
    entry.family = &sendrecv_family();
    entry.message_bytes = {bytes};
    planner.add(std::move(entry));
  }
}

void plan_p2p_cases(Planner& planner, const PlanInputs& inputs) {
  if (planner.options().has_family("p2p")) add_pingpongs(planner, inputs.sizes);
  if (planner.options().has_family("sendrecv")) add_sendrecvs(planner, inputs.sizes);
}

std::vector<FamilyName> p2p_family_names() {
  return {{.name = "p2p", .in_default_list = true}, {.name = "sendrecv"}};
}

}  // namespace

extern const FamilyEntry kP2pFamilies;
const FamilyEntry kP2pFamilies = {
    .names = p2p_family_names,
    .plan = plan_p2p_cases,
    .help = R"(  p2p/pingpong/<bytes>/peer:<r>            half round trip between rank 0 and rank r
  p2p/sendrecv/<bytes>                     (--families sendrecv) every rank sends <bytes> to rank
                                           r+1 and receives <bytes> from rank r-1 at once, as Intel
                                           MPI Benchmarks' Sendrecv: one exchange (slowest rank)
)",
};

}  // namespace collbench::harness
