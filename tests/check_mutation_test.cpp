// The proof that the check (collbench/core/check.h) catches wrong answers: it is
// run against deliberately broken collectives, and every one must fail it.
//
// 1. Broken algorithms, at p = 2..9 and 16, every op and dtype:
//    - the real library algorithms over a fault-injecting transport that, on
//      one rank, shifts one received message by one element (an off-by-one
//      chunk), drops one received payload (a skipped step: the buffer keeps
//      what it held, e.g. the previous call's data) or delivers another
//      peer's payload instead (a wrong peer);
//    - a test-only allreduce that never reduces (a binomial broadcast of rank
//      0's input), which the old period-3 inputs passed at p = 4 and 7.
//    The faulted call is the second call of a built algorithm, on inputs of a
//    new generation, over the first call's output.
// 2. Output mutants of every algorithm that runs in process (from the
//    registry), from its real output: a missing rank, a duplicated rank, a
//    chunk one element and one block off, the previous call's result, one
//    rank's input, all zeros.
//
// Element counts: 1000 and 3p + 1. With 1000 every block any algorithm sends
// at p ≤ 16 has ≥ 62 elements, so it holds every rank's turn as min and max
// owner (check.h): a missing contribution is visible to min and max too, and
// a shift of ≥ 62 elements meets a change of M or m (two values in three
// differ) with certainty in practice; everything is asserted there. At 3p + 1
// the blocks have 3 or 4 elements, and some mutants become equivalent: their
// output is bit-identical to the right one, which no check can see. For min
// and max, a message of a few elements that is shifted, or replaced by
// another rank's, only changes the result where it carried an extreme that
// nothing else supplies; and for every op a 3-element block may equal its
// shifted neighbour (at p = 3 a sum takes one of 7 values). So at 3p + 1 the
// transport shift and wrong peer are asserted for sum and avg, the dropped
// payload for every op, and the output mutants except the block shifts, for
// every op: a missing, doubled or substituted rank changes at least one of
// every p consecutive elements by construction (check.h), and 3p + 1 ≥ p; a
// rank's input, the previous call's result and all zeros differ at most
// elements (for min and max, at all but one in p).
// Fault-free reference: the real algorithms pass the same check on the same
// inputs (asserted before the output mutants are derived), and a fault that
// changes no byte of any message is not counted as fired.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

#include "collbench/collectives/algorithm.h"
#include "collbench/collectives/collective.h"
#include "collbench/core/check.h"
#include "collbench/core/reduce.h"
#include "collbench/transport/forwarding_transport.h"
#include "collbench/transport/inproc_transport.h"

namespace collbench {
namespace {

constexpr int kRankCounts[] = {2, 3, 4, 5, 6, 7, 8, 9, 16};

std::vector<std::size_t> element_counts(int p) {
  return {1000, static_cast<std::size_t>(3 * p + 1)};
}

bool quick() { return std::getenv("COLLBENCH_QUICK_TESTS") != nullptr; }

const CollectiveInfo& allreduce() { return *find_collective("allreduce"); }

// (collective, algorithm)
using Algorithm = std::pair<const CollectiveInfo*, const AlgorithmInfo*>;

// Every algorithm of `collective` that runs on the in-process transport.
std::vector<const AlgorithmInfo*> inproc_algorithms(const CollectiveInfo& collective) {
  std::vector<const AlgorithmInfo*> list;
  for (const AlgorithmInfo& info : collective.algorithms) {
    if (info.unsupported_reason("inproc", 2, 1).empty()) list.push_back(&info);
  }
  return list;
}

std::vector<Algorithm> every_inproc_algorithm() {
  std::vector<Algorithm> list;
  for (const CollectiveInfo& collective : collectives()) {
    for (const AlgorithmInfo* info : inproc_algorithms(collective)) {
      list.emplace_back(&collective, info);
    }
  }
  return list;
}

// --- the fault-injecting transport --------------------------------------------

enum class Fault { shift_one_element, drop_payload, wrong_peer };

std::string_view fault_name(Fault fault) {
  switch (fault) {
    case Fault::shift_one_element:
      return "shift_one_element";
    case Fault::drop_payload:
      return "drop_payload";
    case Fault::wrong_peer:
      return "wrong_peer";
  }
  return "";
}

// Forwards to the in-process transport and, once armed, damages one received
// message: the first one from the `target`-th receive on (in posting order)
// where the damage changes the bytes the algorithm gets. A fault that would
// leave the bytes as they are is no fault, so it moves to the next message.
// Matching is never disturbed (the message is still received from the peer
// the algorithm asked for), so a faulted algorithm runs to its end.
class FaultyTransport final : public ForwardingTransport {
 public:
  explicit FaultyTransport(Transport& inner) : ForwardingTransport(inner) {}

  // Arms the fault for the next call; `element_bytes` is the dtype's size.
  void arm(Fault fault, std::size_t element_bytes, std::size_t target) {
    fault_ = fault;
    element_bytes_ = element_bytes;
    target_ = target;
    armed_ = true;
    fired_ = false;
    receives_ = 0;
    history_.clear();
  }
  // Counts receives for the next call without damaging any.
  void start_counting() {
    armed_ = false;
    fired_ = false;
    receives_ = 0;
    history_.clear();
  }
  std::size_t receives() const { return receives_; }
  // wrong_peer: the receives of the armed call that had another peer's
  // payload (or this rank's own) to be handed instead, fired or not.
  std::size_t candidates() const { return candidates_; }
  bool fired() const { return fired_; }

  RequestId isend(std::span<const std::byte> data, int peer, int tag) override {
    // What this rank sent is a payload from "another peer" (itself) for any
    // message it receives.
    if (armed_) history_.push_back({rank(), {data.begin(), data.end()}});
    return inner().isend(data, peer, tag);
  }

  RequestId irecv(std::span<std::byte> data, int peer, int tag) override {
    const std::size_t index = receives_++;
    Pending pending{data, peer, {}};
    if (armed_ && !fired_ && index >= target_ && fault_ == Fault::drop_payload) {
      // Received into a scratch buffer that is then thrown away.
      pending.scratch.resize(data.size());
      const RequestId request = inner().irecv(pending.scratch, peer, tag);
      pending_[request] = std::move(pending);
      return request;
    }
    const RequestId request = inner().irecv(data, peer, tag);
    if (armed_) pending_[request] = std::move(pending);
    return request;
  }

  void wait(RequestId request) override {
    inner().wait(request);
    completed(request);
  }
  bool test(RequestId request) override {
    const bool done = inner().test(request);
    if (done) completed(request);
    return done;
  }
  void wait_all(std::span<const RequestId> requests) override {
    inner().wait_all(requests);
    for (const RequestId request : requests) completed(request);
  }

 private:
  struct Pending {
    std::span<std::byte> data;
    int peer;
    std::vector<std::byte> scratch;  // drop_payload: where the payload went
  };
  struct Payload {
    int source;
    std::vector<std::byte> bytes;
  };

  void completed(RequestId request) {
    const auto found = pending_.find(request);
    if (found == pending_.end()) return;
    Pending pending = std::move(found->second);
    pending_.erase(found);
    std::span<std::byte> data = pending.data;
    if (!pending.scratch.empty()) {
      // drop_payload: keep the buffer as it was, unless that is the payload
      // (or another message was dropped already).
      if (fired_ || std::equal(data.begin(), data.end(), pending.scratch.begin())) {
        std::copy(pending.scratch.begin(), pending.scratch.end(), data.begin());
      } else {
        fired_ = true;
      }
    } else if (!fired_ && fault_ == Fault::shift_one_element && data.size() >= 2 * element_bytes_) {
      // Element k gets element k + 1's value; the last one the first's.
      std::vector<std::byte> before(data.begin(), data.end());
      std::rotate(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(element_bytes_),
                  data.end());
      fired_ = !std::equal(data.begin(), data.end(), before.begin());
    } else if (!fired_ && fault_ == Fault::wrong_peer && !data.empty()) {
      // The most recent payload from a rank other than the sender, repeated
      // to the message's length.
      for (auto payload = history_.rbegin(); payload != history_.rend(); ++payload) {
        if (payload->source == pending.peer || payload->bytes.empty()) continue;
        ++candidates_;
        std::vector<std::byte> replacement(data.size());
        for (std::size_t k = 0; k < data.size(); ++k) {
          replacement[k] = payload->bytes[k % payload->bytes.size()];
        }
        if (!std::equal(data.begin(), data.end(), replacement.begin())) {
          std::copy(replacement.begin(), replacement.end(), data.begin());
          fired_ = true;
        }
        break;
      }
    }
    history_.push_back({pending.peer, {data.begin(), data.end()}});
  }

  Fault fault_ = Fault::drop_payload;
  std::size_t element_bytes_ = 1;
  std::size_t target_ = 0;
  bool armed_ = false;
  bool fired_ = false;
  std::size_t receives_ = 0;
  std::map<RequestId, Pending> pending_;
  std::vector<Payload> history_;
  std::size_t candidates_ = 0;
};

struct Case {
  DType dtype;
  ReduceOp op;
  std::size_t count;
  TokenRouting routing{};  // alltoallv's
};

CollectiveSpec spec_of(const Case& c) { return {c.dtype, c.op, c.count, 0, c.routing}; }

std::vector<Case> all_cases(int p) {
  std::vector<Case> cases;
  for (const std::size_t count : element_counts(p)) {
    for (const DType dtype : kAllDTypes) {
      for (const ReduceOp op : kAllReduceOps) cases.push_back({dtype, op, count});
    }
  }
  return cases;
}

// The routings an alltoallv is also tried with: skewed, both directions
// (the expert side's p shares then differ by rank).
const TokenRouting kSkewedRoutings[] = {{1.2, false}, {1.2, true}};

// all_cases, and for alltoallv the skewed routings too (one op: nothing is
// reduced).
std::vector<Case> cases_of(const CollectiveInfo& collective, int p) {
  std::vector<Case> cases = all_cases(p);
  if (collective.name != "alltoallv") return cases;
  const std::size_t uniform = cases.size();
  for (const TokenRouting& routing : kSkewedRoutings) {
    for (std::size_t c = 0; c < uniform; ++c) {
      if (cases[c].op != ReduceOp::sum) continue;
      Case routed = cases[c];
      routed.routing = routing;
      cases.push_back(routed);
    }
  }
  return cases;
}

std::string describe(const Case& c) {
  const std::string routing =
      c.routing == TokenRouting{}
          ? std::string()
          : fmt::format(" skew={}{}", c.routing.skew, c.routing.returns ? " returning" : "");
  return fmt::format("count={} {} {}{}", c.count, to_string(c.dtype), to_string(c.op), routing);
}

// Wrong elements over all ranks of the second call, with `victim` faulted
// in it, for every case; whether the fault fired; and, for a wrong peer,
// whether any receive of the victim had another payload to be handed
// instead (none: every message came from its one parent before this rank
// sent or heard anything else, and a wrong peer cannot happen to it).
struct FaultOutcome {
  std::vector<std::uint64_t> wrong;
  std::vector<int> fired;
  std::vector<int> no_candidate;
};

FaultOutcome run_faulted(const CollectiveInfo& collective, const AlgorithmInfo& algorithm, int p,
                         int victim, Fault fault, const std::vector<Case>& cases) {
  std::vector<std::atomic<std::uint64_t>> wrong(cases.size());
  std::vector<int> fired(cases.size());
  std::vector<int> no_candidate(cases.size());
  run_in_process(
      p,
      [&](Transport& inner) {
        FaultyTransport transport(inner);
        const bool is_victim = inner.rank() == victim;
        const int rank = inner.rank();
        for (std::size_t c = 0; c < cases.size(); ++c) {
          const Case& k = cases[c];
          const std::size_t element_bytes = dtype_size(k.dtype);
          const CollectiveSpec spec = spec_of(k);
          std::vector<std::byte> in(collective.input_block(spec, p, rank).count * element_bytes);
          std::vector<std::byte> out(collective.output_block(spec, p, rank).count * element_bytes);
          poison(out);
          auto call = algorithm.build(transport, spec, in, out);
          // First call: clean, counting the victim's receives.
          transport.start_counting();
          fill_input(collective, CheckPattern(p, 1), spec, rank, 0, in);
          call->run();
          // Second call: new inputs, the fault in the middle of the call.
          if (is_victim) transport.arm(fault, element_bytes, transport.receives() / 2);
          const CheckPattern pattern(p, 2);
          fill_input(collective, pattern, spec, rank, 0, in);
          call->run();
          if (is_victim) {
            fired[c] = transport.fired() ? 1 : 0;
            no_candidate[c] = transport.candidates() == 0 ? 1 : 0;
          }
          transport.start_counting();
          wrong[c] += collective.check_output(pattern, spec, rank, 0, out).wrong;
        }
      },
      std::chrono::seconds(30));
  FaultOutcome outcome;
  for (auto& w : wrong) outcome.wrong.push_back(w.load());
  outcome.fired = fired;
  outcome.no_candidate = no_candidate;
  return outcome;
}

class TransportFaults : public ::testing::TestWithParam<std::tuple<Fault, Algorithm>> {};

// At 3p + 1 elements a shifted or wrong message of min or max may leave the
// result bit-identical (see the top): those are asserted at 1000 only. And
// a lost contribution to min or max shows only where its rank owns the
// extreme, in every p consecutive elements: where a rank's output is a block
// of fewer (reduce_scatter at 3p + 1), it may not show at all.
bool must_be_caught(Fault fault, const Case& c, const CollectiveInfo& collective, int p) {
  const bool extreme = collective.reduces && (c.op == ReduceOp::min || c.op == ReduceOp::max);
  const bool every_owner_in_each_output =
      collective.output_block(spec_of(c), p, p - 1).count >= static_cast<std::size_t>(p);
  return (c.count >= 1000 || fault == Fault::drop_payload || !extreme) &&
         (!extreme || every_owner_in_each_output);
}

TEST_P(TransportFaults, CaughtAtEveryRankCountOpAndDtype) {
  const Fault fault = std::get<0>(GetParam());
  const auto [collective, algorithm] = std::get<1>(GetParam());
  for (const int p : kRankCounts) {
    if (quick() && p != 3 && p != 16) continue;
    const std::vector<Case> cases = cases_of(*collective, p);
    std::vector<int> fired(cases.size());
    std::vector<int> no_candidate(cases.size(), 1);
    // Rank 0 (the tree's root, the central server) at even p, the last rank
    // (a leaf of the tree, a client of the server) at odd p; both at p = 2,
    // where a wrong peer cannot fire on the tree's root (nothing but its
    // one child's message to deliver instead). Where the fault fired on
    // neither in some case (a rooted collective's root receives nothing in
    // a broadcast, a leaf nothing in a reduce), the other end and the
    // middle rank too.
    std::vector<int> victims = {p % 2 == 0 ? 0 : p - 1};
    if (p == 2) victims.push_back(1);
    const std::size_t first_fallback = victims.size();
    for (const int fallback : {p % 2 == 0 ? p - 1 : 0, p / 2}) {
      if (std::find(victims.begin(), victims.end(), fallback) == victims.end()) {
        victims.push_back(fallback);
      }
    }
    const auto all_fired = [&] {
      return std::all_of(fired.begin(), fired.end(), [](int count) { return count > 0; });
    };
    for (std::size_t next = 0; next < victims.size(); ++next) {
      if (next >= first_fallback && all_fired()) break;
      const int victim = victims[next];
      const FaultOutcome outcome = run_faulted(*collective, *algorithm, p, victim, fault, cases);
      for (std::size_t c = 0; c < cases.size(); ++c) {
        no_candidate[c] &= outcome.no_candidate[c];
        if (outcome.fired[c] == 0) continue;
        ++fired[c];
        if (!must_be_caught(fault, cases[c], *collective, p)) continue;
        EXPECT_GT(outcome.wrong[c], 0u)
            << fmt::format("{} {} p={} victim {} {} {}: not caught", collective->name,
                           algorithm->name, p, victim, fault_name(fault), describe(cases[c]));
      }
    }
    for (std::size_t c = 0; c < cases.size(); ++c) {
      // A broadcast's tree or one-segment chain, a reduce's tree at p = 2:
      // every message a victim got came first, from its one parent.
      if (fault == Fault::wrong_peer && no_candidate[c] == 1) continue;
      EXPECT_GT(fired[c], 0) << fmt::format("{} {} p={} {} {}: the fault never changed a message",
                                            collective->name, algorithm->name, p, fault_name(fault),
                                            describe(cases[c]));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Mutation, TransportFaults,
    ::testing::Combine(::testing::Values(Fault::shift_one_element, Fault::drop_payload,
                                         Fault::wrong_peer),
                       ::testing::ValuesIn(every_inproc_algorithm())),
    [](const ::testing::TestParamInfo<TransportFaults::ParamType>& param_info) {
      const Algorithm& algorithm = std::get<1>(param_info.param);
      return fmt::format("{}_{}_{}", fault_name(std::get<0>(param_info.param)),
                         algorithm.first->name, algorithm.second->name);
    });

// --- an allreduce that never reduces --------------------------------------------

// Binomial broadcast of rank 0's input: every rank ends with rank 0's input,
// as a tree whose reduce phase forgot to reduce would leave it.
class NeverReduces final : public Collective {
 public:
  NeverReduces(Transport& transport, std::span<const std::byte> in, std::span<std::byte> out)
      : transport_(transport), in_(in), out_(out) {}
  void run() override {
    const int rank = transport_.rank();
    const int p = transport_.size();
    if (rank == 0) std::copy(in_.begin(), in_.end(), out_.begin());
    for (int distance = 1; distance < p; distance <<= 1) {
      if (rank < distance && rank + distance < p) {
        transport_.wait(transport_.isend(out_, rank + distance, 300));
      } else if (rank >= distance && rank < 2 * distance) {
        transport_.wait(transport_.irecv(out_, rank - distance, 300));
      }
    }
  }

 private:
  Transport& transport_;
  std::span<const std::byte> in_;
  std::span<std::byte> out_;
};

TEST(MutationNeverReduces, CaughtAtEveryRankCountOpAndDtype) {
  for (const int p : kRankCounts) {
    const std::vector<Case> cases = all_cases(p);
    std::vector<std::atomic<std::uint64_t>> wrong(cases.size());
    run_in_process(p, [&](Transport& transport) {
      for (std::size_t c = 0; c < cases.size(); ++c) {
        const Case& k = cases[c];
        std::vector<std::byte> in(k.count * dtype_size(k.dtype));
        std::vector<std::byte> out(in.size());
        poison(out);
        const CheckPattern pattern(p, 1);
        pattern.fill(k.dtype, transport.rank(), 0, in);
        NeverReduces(transport, in, out).run();
        wrong[c] += pattern.check_reduced(k.dtype, k.op, 0, out).wrong;
      }
    });
    for (std::size_t c = 0; c < cases.size(); ++c) {
      EXPECT_GT(wrong[c].load(), 0u) << "p=" << p << " " << describe(cases[c]);
    }
  }
}

// --- output mutants --------------------------------------------------------------

// Every rank's input of one case.
std::vector<std::vector<std::byte>> inputs_of(const CheckPattern& pattern, const Case& k) {
  std::vector<std::vector<std::byte>> inputs(static_cast<std::size_t>(pattern.ranks()));
  for (int r = 0; r < pattern.ranks(); ++r) {
    auto& input = inputs[static_cast<std::size_t>(r)];
    input.resize(k.count * dtype_size(k.dtype));
    pattern.fill(k.dtype, r, 0, input);
  }
  return inputs;
}

// Reductions of every rank's input but one, from prefix and suffix
// reductions: O(p) vector reductions for all p. avg combines like sum here;
// finish() divides by p, as an algorithm that lost or doubled a rank would.
class PartialReductions {
 public:
  PartialReductions(const std::vector<std::vector<std::byte>>& inputs, const Case& k)
      : inputs_(inputs), k_(k), combine_(k.op == ReduceOp::avg ? ReduceOp::sum : k.op) {
    const std::size_t p = inputs.size();
    prefix_.resize(p + 1);  // prefix_[r]: ranks 0..r−1
    suffix_.resize(p + 1);  // suffix_[r]: ranks r..p−1
    prefix_[1] = inputs.front();
    for (std::size_t r = 1; r < p; ++r) prefix_[r + 1] = combined(prefix_[r], inputs[r]);
    suffix_[p - 1] = inputs.back();
    for (std::size_t r = p - 1; r-- > 0;) suffix_[r] = combined(suffix_[r + 1], inputs[r]);
  }
  // Every rank but `missing`, plus `extra` (−1: none).
  std::vector<std::byte> without(int missing, int extra) const {
    const auto m = static_cast<std::size_t>(missing);
    const std::size_t p = inputs_.size();
    std::vector<std::byte> result = m == 0       ? suffix_[1]
                                    : m + 1 == p ? prefix_[m]
                                                 : combined(prefix_[m], suffix_[m + 1]);
    if (extra >= 0) result = combined(result, inputs_[static_cast<std::size_t>(extra)]);
    return finish(std::move(result));
  }
  // Every rank, plus another copy of `extra`.
  std::vector<std::byte> with_extra(int extra) const {
    return finish(combined(prefix_.back(), inputs_[static_cast<std::size_t>(extra)]));
  }

 private:
  std::vector<std::byte> combined(const std::vector<std::byte>& a,
                                  const std::vector<std::byte>& b) const {
    std::vector<std::byte> result = a;
    reduce_inplace(k_.dtype, combine_, result.data(), b.data(), k_.count);
    return result;
  }
  std::vector<std::byte> finish(std::vector<std::byte> result) const {
    if (k_.op == ReduceOp::avg) {
      scale_for_average(k_.dtype, result.data(), k_.count, static_cast<int>(inputs_.size()));
    }
    return result;
  }

  const std::vector<std::vector<std::byte>>& inputs_;
  Case k_;
  ReduceOp combine_;
  std::vector<std::vector<std::byte>> prefix_;
  std::vector<std::vector<std::byte>> suffix_;
};

// Block `index` of `count` elements in `parts` (the first count % parts one
// larger), as the block algorithms split a vector.
std::pair<std::size_t, std::size_t> block(std::size_t count, int parts, int index) {
  const auto n = static_cast<std::size_t>(parts);
  const auto i = static_cast<std::size_t>(index);
  const std::size_t base = count / n;
  const std::size_t extra = count % n;
  return {i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

struct Mutant {
  std::string name;
  std::vector<std::byte> output;
  // Caught unless equivalent by nature at small counts (see the top).
  bool must_be_caught;
};

// The mutants of `real` (the algorithm's output of generation `pattern`),
// with `previous` its output of the call before.
std::vector<Mutant> output_mutants(const CheckPattern& pattern, const Case& k,
                                   const std::vector<std::byte>& real,
                                   const std::vector<std::byte>& previous) {
  const int p = pattern.ranks();
  const std::size_t element_bytes = dtype_size(k.dtype);
  const bool extreme = k.op == ReduceOp::min || k.op == ReduceOp::max;
  const bool large = k.count >= 1000;
  const std::vector<std::vector<std::byte>> inputs = inputs_of(pattern, k);
  std::vector<Mutant> mutants;
  const PartialReductions partial(inputs, k);
  for (int r = 0; r < p; ++r) {
    mutants.push_back({fmt::format("rank {} missing", r), partial.without(r, -1), true});
    // x counted twice in place of its neighbour, the effect of a wrong peer.
    mutants.push_back({fmt::format("rank {} in place of rank {}", r, (r + 1) % p),
                       partial.without((r + 1) % p, r), true});
    // An extra copy changes no min or max (min(x, x) = x): a right answer.
    if (!extreme) mutants.push_back({fmt::format("rank {} twice", r), partial.with_extra(r), true});
    mutants.push_back(
        {fmt::format("rank {}'s input", r), inputs[static_cast<std::size_t>(r)], true});
  }
  for (int b = 0; b < p; ++b) {
    const auto [offset, length] = block(k.count, p, b);
    if (length == 0) continue;
    // The block holds the elements one later (one earlier for the last).
    std::vector<std::byte> shifted = real;
    const std::size_t source = offset + length < k.count ? offset + 1 : offset - 1;
    std::memcpy(shifted.data() + offset * element_bytes, real.data() + source * element_bytes,
                length * element_bytes);
    mutants.push_back({fmt::format("block {} one element off", b), shifted, large});
    // The block holds the next block's data.
    const auto [next_offset, next_length] = block(k.count, p, (b + 1) % p);
    std::vector<std::byte> swapped = real;
    std::memcpy(swapped.data() + offset * element_bytes, real.data() + next_offset * element_bytes,
                std::min(length, next_length) * element_bytes);
    mutants.push_back({fmt::format("block {} holds block {}", b, (b + 1) % p), swapped, large});
  }
  mutants.push_back({"the previous call's result", previous, true});
  mutants.push_back({"all zeros", std::vector<std::byte>(real.size()), true});
  return mutants;
}

class OutputMutants : public ::testing::TestWithParam<int> {};

TEST_P(OutputMutants, EveryAlgorithmOpAndDtype) {
  const int p = GetParam();
  if (quick() && p != 3 && p != 16) GTEST_SKIP() << "COLLBENCH_QUICK_TESTS: p = 3 and 16 only";
  const std::vector<Case> cases = all_cases(p);
  for (const AlgorithmInfo* algorithm : inproc_algorithms(allreduce())) {
    // Rank 0's outputs of both calls, per case.
    std::vector<std::vector<std::byte>> first(cases.size());
    std::vector<std::vector<std::byte>> second(cases.size());
    std::vector<std::atomic<std::uint64_t>> wrong(cases.size());
    run_in_process(p, [&](Transport& transport) {
      for (std::size_t c = 0; c < cases.size(); ++c) {
        const Case& k = cases[c];
        std::vector<std::byte> in(k.count * dtype_size(k.dtype));
        std::vector<std::byte> out(in.size());
        poison(out);
        auto allreduce = algorithm->build(transport, {k.dtype, k.op, k.count, 0, {}}, in, out);
        for (const std::uint64_t generation : {1, 2}) {
          const CheckPattern pattern(p, generation);
          pattern.fill(k.dtype, transport.rank(), 0, in);
          allreduce->run();
          wrong[c] += pattern.check_reduced(k.dtype, k.op, 0, out).wrong;
          if (transport.rank() == 0) (generation == 1 ? first : second)[c] = out;
        }
      }
    });
    for (std::size_t c = 0; c < cases.size(); ++c) {
      const Case& k = cases[c];
      const std::string what = fmt::format("{} p={} {}", algorithm->name, p, describe(k));
      ASSERT_EQ(wrong[c].load(), 0u) << what << ": the real algorithm fails the check";
      const CheckPattern pattern(p, 2);
      for (const Mutant& mutant : output_mutants(pattern, k, second[c], first[c])) {
        if (!mutant.must_be_caught) continue;
        EXPECT_GT(pattern.check_reduced(k.dtype, k.op, 0, mutant.output).wrong, 0u)
            << what << ": " << mutant.name << " passes";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Mutation, OutputMutants, ::testing::ValuesIn(kRankCounts),
                         [](const ::testing::TestParamInfo<int>& param_info) {
                           return fmt::format("p{}", param_info.param);
                         });

// --- the block checks of reduce_scatter, allgather and alltoall, broken outputs ---

// The rank whose input block `block` of a non-reducing collective's output
// is: the root's for broadcast, block b's owner for allgather.
int source_of_block(const CollectiveInfo& collective, int block) {
  return collective.name == "broadcast" ? kRootRank : block;
}

// alltoall's and alltoallv's layouts: the blocks every rank sends every
// other, from the collective.h functions for each.
bool exchanges_blocks(const CollectiveInfo& collective) {
  return collective.name == "alltoall" || collective.name == "alltoallv";
}
Block sent_block(const CollectiveInfo& collective, const Case& k, int p, int from, int to) {
  return collective.name == "alltoall" ? alltoall_send_block(k.count, p, from, to)
                                       : alltoallv_send_block(spec_of(k), p, from, to);
}
Block received_block(const CollectiveInfo& collective, const Case& k, int p, int at, int from) {
  return collective.name == "alltoall" ? alltoall_receive_block(k.count, p, at, from)
                                       : alltoallv_receive_block(spec_of(k), p, at, from);
}

// What rank `rank` must receive, built from the pattern directly: its block
// of the reduction (reduce_scatter; the whole at reduce's root), every
// block from the rank it comes from (allgather, broadcast), every rank's
// block of input for it (alltoall).
std::vector<std::byte> expected_output(const CollectiveInfo& collective,
                                       const CheckPattern& pattern, const Case& k, int rank) {
  const int p = pattern.ranks();
  const std::size_t element_bytes = dtype_size(k.dtype);
  const Block mine = collective.output_block(spec_of(k), p, rank);
  std::vector<std::byte> output(mine.count * element_bytes);
  if (collective.reduces) {
    for (std::size_t i = 0; i < mine.count; ++i) {
      store_element(k.dtype, output.data(), i, pattern.expected(k.dtype, k.op, mine.offset + i));
    }
    return output;
  }
  if (exchanges_blocks(collective)) {
    // Each sender's block for this rank, from the sender's input.
    for (int sender = 0; sender < p; ++sender) {
      const Block place = received_block(collective, k, p, rank, sender);
      pattern.fill(
          k.dtype, sender, sent_block(collective, k, p, sender, rank).offset,
          std::span(output).subspan(place.offset * element_bytes, place.count * element_bytes));
    }
    return output;
  }
  for (int b = 0; b < p; ++b) {
    const Block block = partition(k.count, p, b);
    pattern.fill(
        k.dtype, source_of_block(collective, b), block.offset,
        std::span(output).subspan(block.offset * element_bytes, block.count * element_bytes));
  }
  return output;
}

// alltoall: one block of rank `rank`'s output wrong, for every sender. Its
// blocks hold count/p elements, so at 3p + 1 a block has 3 or 4: another
// rank's (or call's) values, ±1 but where a rank owns the extreme, then
// match all of them by chance in a few percent of the blocks (at p = 16,
// f16 and bf16 seen); only a block that was never written is asserted
// there, the rest at 1000 elements (blocks of ≥ 62).
void add_alltoall_block_mutants(const CollectiveInfo& collective, const CheckPattern& pattern,
                                const CheckPattern& previous, const Case& k, int rank,
                                const std::vector<std::byte>& real, std::vector<Mutant>& mutants) {
  const int p = pattern.ranks();
  const std::size_t element_bytes = dtype_size(k.dtype);
  const bool large = k.count >= 1000;
  for (int sender = 0; sender < p; ++sender) {
    const Block place = received_block(collective, k, p, rank, sender);
    if (place.count == 0) continue;
    const auto at = [&](std::vector<std::byte>& output, Block block) {
      return std::span(output).subspan(block.offset * element_bytes, block.count * element_bytes);
    };
    const std::uint64_t sent_offset = sent_block(collective, k, p, sender, rank).offset;
    const int other = (sender + 1) % p;
    // Another rank's data where this sender's belongs (the same elements of
    // its input: the wrong peer).
    std::vector<std::byte> wrong_sender = real;
    pattern.fill(k.dtype, other, sent_offset, at(wrong_sender, place));
    mutants.push_back({fmt::format("the block from rank {} sent by rank {}", sender, other),
                       wrong_sender, large});
    // The right sender, the wrong block of its input: the one it sends the
    // next rank (an offset one rank off).
    const int next = (rank + 1) % p;
    std::vector<std::byte> wrong_block = real;
    pattern.fill(k.dtype, sender, sent_block(collective, k, p, sender, next).offset,
                 at(wrong_block, place));
    mutants.push_back({fmt::format("rank {}'s block for rank {} in place of its block for rank {}",
                                   sender, next, rank),
                       wrong_block, p > 1 && large});
    // The sender's block one element off (its input from one later).
    std::vector<std::byte> off_by_one = real;
    pattern.fill(k.dtype, sender, sent_offset + 1, at(off_by_one, place));
    mutants.push_back(
        {fmt::format("the block from rank {} one element off", sender), off_by_one, large});
    std::vector<std::byte> stale = real;
    previous.fill(k.dtype, sender, sent_offset, at(stale, place));
    mutants.push_back(
        {fmt::format("the block from rank {} of the previous call", sender), stale, large});
    std::vector<std::byte> missing = real;
    poison(at(missing, place));
    mutants.push_back(
        {fmt::format("the block from rank {} never received", sender), missing, true});
    // Two senders' blocks swapped (as many elements as the smaller holds).
    const Block other_place = received_block(collective, k, p, rank, other);
    if (other != sender && other_place.count > 0) {
      std::vector<std::byte> swapped = real;
      const std::size_t elements = std::min(place.count, other_place.count);
      std::swap_ranges(
          at(swapped, place).begin(),
          at(swapped, place).begin() + static_cast<std::ptrdiff_t>(elements * element_bytes),
          at(swapped, other_place).begin());
      mutants.push_back(
          {fmt::format("the blocks from ranks {} and {} swapped", sender, other), swapped, large});
    }
  }
}

// Broken variants of one rank's correct output (generation 2) that the
// reduce_scatter, allgather, broadcast, reduce and alltoall checks must
// reject: the faults of an algorithm that placed, forgot, repeated or never
// reduced a block. Ranks with no output (a reduce's non-roots) have nothing
// to break.
class BlockCheckMutants : public ::testing::TestWithParam<std::string> {};

TEST_P(BlockCheckMutants, CaughtAtEveryRankCountOpAndDtype) {
  const CollectiveInfo& collective = *find_collective(GetParam());
  for (const int p : kRankCounts) {
    for (const Case& k : cases_of(collective, p)) {
      // An allgather only moves bytes: one op stands for all.
      if (!collective.reduces && k.op != ReduceOp::sum) continue;
      const std::size_t element_bytes = dtype_size(k.dtype);
      const bool extreme = collective.reduces && (k.op == ReduceOp::min || k.op == ReduceOp::max);
      const bool large = k.count >= 1000;
      const CheckPattern pattern(p, 2);
      const CheckPattern previous(p, 1);
      const std::vector<std::vector<std::byte>> inputs = inputs_of(pattern, k);
      const PartialReductions partial(inputs, k);
      for (const int rank : {0, p / 2, p - 1}) {
        const std::string what =
            fmt::format("{} p={} rank {} {}", collective.name, p, rank, describe(k));
        const Block mine = collective.output_block(spec_of(k), p, rank);
        if (mine.count == 0) continue;  // a reduce's non-root
        const std::vector<std::byte> real = expected_output(collective, pattern, k, rank);
        const auto check = [&](const std::vector<std::byte>& output) {
          return collective.check_output(pattern, spec_of(k), rank, 0, output).wrong;
        };
        ASSERT_EQ(check(real), 0u) << what << ": the expected output fails the check";
        std::vector<Mutant> mutants;
        mutants.push_back(
            {"the previous call's output", expected_output(collective, previous, k, rank), true});
        mutants.push_back({"all zeros", std::vector<std::byte>(real.size()), true});
        if (mine.count >= 2) {
          std::vector<std::byte> shifted = real;
          std::rotate(shifted.begin(), shifted.begin() + static_cast<std::ptrdiff_t>(element_bytes),
                      shifted.end());
          mutants.push_back({"one element off", shifted, large});
        }
        if (collective.reduces) {
          // reduce_scatter: this rank's block of something else.
          const auto block_of = [&](const std::vector<std::byte>& whole, Block block) {
            const auto begin =
                whole.begin() + static_cast<std::ptrdiff_t>(block.offset * element_bytes);
            return std::vector<std::byte>(
                begin, begin + static_cast<std::ptrdiff_t>(mine.count * element_bytes));
          };
          mutants.push_back({"its own input, never reduced",
                             block_of(inputs[static_cast<std::size_t>(rank)], mine), true});
          for (int r = 0; r < p; ++r) {
            mutants.push_back({fmt::format("rank {} missing", r),
                               block_of(partial.without(r, -1), mine), large || !extreme});
          }
          const Block next = partition(k.count, p, (rank + 1) % p);
          if (next.count >= mine.count && mine.count > 0) {
            std::vector<std::byte> next_result(k.count * element_bytes);
            for (std::size_t i = 0; i < k.count; ++i) {
              store_element(k.dtype, next_result.data(), i, pattern.expected(k.dtype, k.op, i));
            }
            mutants.push_back({"the next rank's block", block_of(next_result, next), large});
          }
        } else if (exchanges_blocks(collective)) {
          add_alltoall_block_mutants(collective, pattern, previous, k, rank, real, mutants);
        } else {
          if (collective.name == "broadcast" && rank != kRootRank) {
            // A broadcast that never reached this rank: its own data.
            std::vector<std::byte> own(real.size());
            pattern.fill(k.dtype, rank, 0, own);
            mutants.push_back({"its own data", own, true});
          }
          // allgather, broadcast: one block wrong.
          for (int b = 0; b < p; ++b) {
            const Block block = partition(k.count, p, b);
            if (block.count == 0) continue;
            const auto place = [&](std::vector<std::byte>& output) {
              return std::span(output).subspan(block.offset * element_bytes,
                                               block.count * element_bytes);
            };
            const int source = source_of_block(collective, b);
            const int other = (source + 1) % p;
            std::vector<std::byte> other_rank = real;
            pattern.fill(k.dtype, other, block.offset, place(other_rank));
            mutants.push_back({fmt::format("block {} from rank {}", b, other), other_rank, true});
            std::vector<std::byte> stale = real;
            previous.fill(k.dtype, source, block.offset, place(stale));
            mutants.push_back({fmt::format("block {} from the previous call", b), stale, true});
            std::vector<std::byte> missing = real;
            poison(place(missing));
            mutants.push_back({fmt::format("block {} never received", b), missing, true});
            const Block next = partition(k.count, p, (b + 1) % p);
            std::vector<std::byte> misplaced = real;
            std::memcpy(place(misplaced).data(), real.data() + next.offset * element_bytes,
                        std::min(block.count, next.count) * element_bytes);
            mutants.push_back(
                {fmt::format("block {} holds block {}", b, (b + 1) % p), misplaced, large});
          }
        }
        for (const Mutant& mutant : mutants) {
          if (!mutant.must_be_caught) continue;
          EXPECT_GT(check(mutant.output), 0u) << what << ": " << mutant.name << " passes";
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Mutation, BlockCheckMutants,
                         ::testing::Values("reduce_scatter", "allgather", "broadcast", "reduce",
                                           "alltoall", "alltoallv"),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           return param_info.param;
                         });

}  // namespace
}  // namespace collbench
