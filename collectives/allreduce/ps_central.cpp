// ps_central — a central parameter server on rank 0.
//
//   Push: every worker (rank ≥ 1) sends its whole gradient to rank 0.
//   Reduce: rank 0 reduces the p−1 gradients into its own, in rank order
//     as they arrive (later arrivals are still in flight meanwhile).
//   Pull: rank 0 sends the result to every worker.
// The server's link carries everything: p−1 vectors in, p−1 out, so it
// is the bottleneck as p grows — Keuper & Pfreundt's point about central
// parameter servers.
//
// Out of place, worker 1's push lands straight in out (unwritten until its
// reduction, the first) and is reduced there: a server of one worker touches
// in and out only.
//
// Cost (p ranks, n bytes): 2(p−1)α + 2(p−1)·nβ + (p−1)·nγ.
#include "algorithm_common.h"

namespace collbench {
namespace {

// This algorithm's tags: offsets in its slot (CollectiveBase::tag).
enum Tag : int { kPushTag, kPullTag };

class PsCentralAllreduce final : public detail::AllreduceBase {
 public:
  PsCentralAllreduce(Transport& transport, const CollectiveSpec& spec,
                     std::span<const std::byte> in, std::span<std::byte> out)
      : AllreduceBase(transport, spec, in, out) {
    if (rank_ == 0 && ranks_ > 1) {
      // One slot per worker so every push can land at once, as a real
      // server's receive buffers would.
      gradients_ = allocate_workspace(spec.count * static_cast<std::size_t>(ranks_ - 1));
    }
    requests_.reserve(static_cast<std::size_t>(ranks_));
  }

  void run() override {
    const std::size_t count = spec_.count;
    if (rank_ != 0) {
      // Push from `in`, and only then receive into `out`: they may be the same buffer.
      transport_.wait(send(in_, count, 0, tag(kPushTag)));
      transport_.wait(recv(out_, count, 0, tag(kPullTag)));
      return;
    }
    for (int worker = 1; worker < ranks_; ++worker) {
      requests_.push_back(recv(arrival(worker), count, worker, tag(kPushTag)));
    }
    // No copy of in to out: the first reduction writes out = in op worker 1's.
    const std::byte* mine = in_;
    for (int worker = 1; worker < ranks_; ++worker) {
      transport_.wait(requests_[static_cast<std::size_t>(worker - 1)]);
      reduce_ordered(out_, mine, arrival(worker), count);
      mine = out_;
    }
    if (mine != out_) copy_input_to_output();  // one rank: nothing to reduce
    requests_.clear();
    finish_average({0, count});
    for (int worker = 1; worker < ranks_; ++worker) {
      requests_.push_back(send(out_, count, worker, tag(kPullTag)));
    }
    wait_all(requests_);
  }

 private:
  std::byte* slot(int worker) {
    return gradients_ + bytes(spec_.count) * static_cast<std::size_t>(worker - 1);
  }
  // Where worker's push lands: out for worker 1 when out is not the input.
  std::byte* arrival(int worker) { return worker == 1 && !in_place() ? out_ : slot(worker); }

  std::byte* gradients_ = nullptr;
  std::vector<RequestId> requests_;
};

CostTerms ps_central_cost(const Layout& layout, double n) {
  const int p = layout.ranks();
  CostTerms terms;
  detail::add_steps(terms, layout, 1, n, [](int rank) -> std::vector<int> {
    if (rank == 0) return {};
    return {0};
  });
  detail::add_steps(terms, layout, 1, n, [p](int rank) {
    std::vector<int> workers;
    if (rank == 0) {
      for (int worker = 1; worker < p; ++worker) workers.push_back(worker);
    }
    return workers;
  });
  terms.reduce_bytes = (p - 1) * n;
  return terms;
}

std::size_t ps_central_workspace(int p, std::size_t n) {
  return n * static_cast<std::size_t>(std::max(p - 1, 0));
}

}  // namespace

extern const AlgorithmInfo kPsCentralAllreduce = {
    "ps_central",
    "parameter server on rank 0: all push, rank 0 reduces, all pull; server link bound",
    detail::common_unsupported_reason,
    detail::flat_cost<ps_central_cost>,
    /*reduces_on_every_rank=*/false,  // the server alone
    ps_central_workspace,
    detail::build_as<PsCentralAllreduce>,
    ps_central_cost,
};

}  // namespace collbench
