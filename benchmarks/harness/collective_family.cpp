// The collective family (family.h): a collective of collbench/collectives/collective.h,
// planned, prepared, called and checked through its CollectiveInfo.
//
//   <collective>/<algorithm>/<bytes>[/<workload>]   one call of one algorithm
//                                                   on one message
//   exchange/<algorithm>/<workload>                 one call on each message of
//                                                   one training iteration, in
//                                                   order, each by its
//                                                   collective's algorithm of
//                                                   that name
//   allreduce/mpi_bare/<bytes>                      MPI_Allreduce on `mpi`'s
//                                                   buffers, directly
//
// Every rank runs an algorithm object on message buffers laid out as the
// collective says (input_block, output_block), and every rank's time counts.
// A benchmark whose messages are those of the previous one (another
// algorithm at the same size, or on the same workload) keeps its buffers,
// whose inputs no algorithm writes, and only builds its algorithm: for a
// 110M-parameter model that saves allocating, page-touching and filling
// 880 MB per rank for every algorithm.
//
// --check: two calls from inputs of two generations (kCheckedCalls), the
// first from poisoned outputs; a rank reports the worse of the two.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "aligned_buffer.h"
#include "collbench/transport/mpi_transport.h"
#include "families.h"
#include "family.h"
#include "planner.h"

namespace collbench::harness {
namespace {

// Generation of the inputs the timed calls run on when --check is off.
constexpr std::uint64_t kUncheckedGeneration = 0;

class PreparedCollective final : public PreparedMessages {
 public:
  PreparedCollective(const BenchmarkCase& benchmark_case, RunContext& context)
      : context_(context),
        options_(context.options()),
        transport_(context.transport()),
        rank_(context.rank()),
        ranks_(context.ranks()),
        collective_(*benchmark_case.collective),
        message_collectives_(benchmark_case.message_collectives) {
    const std::size_t element_bytes = dtype_size(options_.dtype);
    const bool payload = !options_.sim.no_payload;
    // messages_ holds the distinct slots; sequence_ the slot of each call.
    const std::vector<std::size_t> slots = benchmark_case.message_slots();
    std::vector<std::size_t> slot_of_message(slots.size());
    for (std::size_t k = 0; k < slots.size(); ++k) {
      if (slots[k] != k) {
        sequence_.push_back(slot_of_message[slots[k]]);
        continue;
      }
      slot_of_message[k] = messages_.size();
      sequence_.push_back(messages_.size());
      message_indices_.push_back(k);
      Message& message = messages_.emplace_back();
      message.collective = &benchmark_case.collective_of(k);
      message.spec.dtype = options_.dtype;
      message.spec.op = options_.op;
      message.spec.count = benchmark_case.message_bytes[k] / element_bytes;
      message.spec.routing = benchmark_case.routing_of(k);
      message.spec.segment_bytes = options_.segment_bytes;
      const std::size_t in_bytes =
          message.collective->input_block(message.spec, ranks_, rank_).count * element_bytes;
      const std::size_t out_bytes =
          message.collective->output_block(message.spec, ranks_, rank_).count * element_bytes;
      // Size-only simulation reads and writes no byte of them.
      message.in = payload ? AlignedBuffer(in_bytes) : AlignedBuffer::untouched(in_bytes);
      message.out = payload ? AlignedBuffer(out_bytes) : AlignedBuffer::untouched(out_bytes);
    }
    if (payload) fill_inputs(CheckPattern(ranks_, kUncheckedGeneration));
    build_algorithms(benchmark_case);
  }

  bool adopt(const BenchmarkCase& next) override {
    // A train case has compute of its own (train_family.cpp).
    const bool messages_only =
        next.family == &collective_family() || next.family == &exchange_family();
    if (!messages_only || next.collective != &collective_ ||
        next.message_collectives != message_collectives_ ||
        next.message_bytes != owner->message_bytes ||
        next.message_routings != owner->message_routings) {
      return false;
    }
    for (Message& message : messages_) message.algorithm.reset();
    build_algorithms(next);
    return true;
  }

  // Only the first call starts from poisoned outputs: the second finds
  // the first's results there, and must overwrite every one of them. A
  // rank reports the worse of its two calls.
  CheckResult check(const BenchmarkCase& benchmark_case) override {
    for (Message& message : messages_) poison(message.out.span());
    CheckResult worse;
    for (int call_number = 1; call_number <= kCheckedCalls; ++call_number) {
      const CheckPattern pattern(ranks_, static_cast<std::uint64_t>(call_number));
      // --debug-corrupt-elements in the second call only: harness_check_fail
      // then fails if --check ever goes back to one call, which misses a
      // stale buffer.
      CheckResult result = checked_call(benchmark_case, pattern, call_number == 2);
      if (result.wrong > worse.wrong) worse = std::move(result);
    }
    return worse;
  }

  std::size_t message_count() const override { return sequence_.size(); }
  void run_message(std::size_t index) override { messages_[sequence_[index]].algorithm->run(); }

  double call(const BenchmarkCase& benchmark_case) override {
    if (benchmark_case.bare) return call_bare(benchmark_case);
    const bool library = is_library_algorithm(*benchmark_case.algorithm);
    if (library) context_.library_call_started(benchmark_case);
    const double start = context_.now();
    for (const std::size_t slot : sequence_) messages_[slot].algorithm->run();
    if (rank_ == options_.debug_slow_rank && options_.debug_slow_us > 0) {
      std::this_thread::sleep_for(
          std::chrono::duration<double, std::micro>(options_.debug_slow_us));
    }
    const double elapsed = context_.now() - start;
    if (library) context_.library_call_returned();
    return elapsed;
  }

 private:
  struct Message {
    const CollectiveInfo* collective = nullptr;
    CollectiveSpec spec;  // the run's dtype and op, the message's count and routing
    AlignedBuffer in;
    AlignedBuffer out;
    // Declared after its buffers so that it is destroyed (and deregisters
    // them) first.
    std::unique_ptr<Collective> algorithm;
  };

  void build_algorithms(const BenchmarkCase& benchmark_case) {
    for (std::size_t slot = 0; slot < messages_.size(); ++slot) {
      Message& message = messages_[slot];
      message.algorithm =
          benchmark_case.algorithm_of(message_indices_[slot])
              .build(transport_, message.spec, message.in.span(), message.out.span());
    }
  }

  // allreduce/mpi_bare: MPI_Allreduce on the first message's buffers.
  double call_bare(const BenchmarkCase& benchmark_case) {
    Message& message = messages_.front();
    const bool f32 = options_.dtype == DType::f32;
    const MPI_Op op = options_.op == ReduceOp::min   ? MPI_MIN
                      : options_.op == ReduceOp::max ? MPI_MAX
                                                     : MPI_SUM;
    context_.library_call_started(benchmark_case);
    const double start = context_.now();
    const int rc = MPI_Allreduce(message.in.data(), message.out.data(),
                                 static_cast<int>(message.in.size() / dtype_size(options_.dtype)),
                                 f32 ? MPI_FLOAT : MPI_DOUBLE, op, context_.library_comm());
    const double elapsed = context_.now() - start;
    context_.library_call_returned();
    check_mpi(rc, "MPI_Allreduce", "mpi_bare");
    return elapsed;
  }

  // The inputs of the timed calls: each slot's, from its first message's
  // global indices (those of an exchange continue each other's).
  void fill_inputs(const CheckPattern& pattern) {
    std::uint64_t first_index = 0;
    for (Message& message : messages_) {
      fill_input(*message.collective, pattern, message.spec, rank_, first_index, message.in.span());
      first_index += input_index_span(*message.collective, message.spec, ranks_);
    }
  }

  // One checked call: each message of the sequence filled, run and checked
  // in turn. Message k's elements continue the global indices of message
  // k − 1, so a message delivered in place of another is wrong; and a
  // message on a shared slot is checked on its own output, from inputs the
  // slot's previous use did not have, so what that use left behind is
  // wrong too.
  CheckResult checked_call(const BenchmarkCase& benchmark_case, const CheckPattern& pattern,
                           bool corrupting) {
    const bool library = is_library_algorithm(*benchmark_case.algorithm);
    std::uint64_t corrupt_left = corrupting ? options_.debug_corrupt_elements : 0;
    CheckResult total;
    std::uint64_t first_index = 0;
    for (std::size_t k = 0; k < sequence_.size(); ++k) {
      Message& message = messages_[sequence_[k]];
      fill_input(*message.collective, pattern, message.spec, rank_, first_index, message.in.span());
      context_.synchronize();
      if (benchmark_case.bare) {
        call_bare(benchmark_case);
      } else {
        if (library) context_.library_call_started(benchmark_case);
        message.algorithm->run();
        if (library) context_.library_call_returned();
      }
      if (rank_ == last_rank_with_output(message)) corrupt(message, corrupt_left);
      const CheckResult part = message.collective->check_output(pattern, message.spec, rank_,
                                                                first_index, message.out.span());
      if (part.wrong > 0 && total.wrong == 0) {
        total.first_mismatch =
            (sequence_.size() > 1 ? fmt::format("message {}, ", k) : std::string()) +
            part.first_mismatch;
      }
      total.wrong += part.wrong;
      total.checked += part.checked;
      first_index += input_index_span(*message.collective, message.spec, ranks_);
    }
    return total;
  }

  // The rank --debug-corrupt-elements corrupts: the last, unless it
  // receives nothing (a reduce's output is the root's only).
  int last_rank_with_output(const Message& message) const {
    for (int rank = ranks_ - 1; rank > 0; --rank) {
      if (message.collective->output_block(message.spec, ranks_, rank).count > 0) return rank;
    }
    return 0;
  }

  // Testing aid (--debug-corrupt-elements): as many elements as are `left`
  // of the message's output, each made wrong by adding 1.
  void corrupt(Message& message, std::uint64_t& left) const {
    const std::size_t count = message.out.size() / dtype_size(options_.dtype);
    for (std::size_t i = 0; i < count && left > 0; ++i, --left) {
      const double value = load_element(options_.dtype, message.out.data(), i);
      store_element(options_.dtype, message.out.data(), i, value + 1);
    }
  }

  RunContext& context_;
  const Options& options_;
  Transport& transport_;
  const int rank_;
  const int ranks_;
  const CollectiveInfo& collective_;
  const std::vector<const CollectiveInfo*> message_collectives_;
  // The distinct messages (BenchmarkCase::message_slots), each with its
  // first message's index; the slot each call of the sequence runs on.
  std::vector<Message> messages_;
  std::vector<std::size_t> message_indices_;
  std::vector<std::size_t> sequence_;
};

class CollectiveFamily final : public FamilyRunner {
 public:
  explicit CollectiveFamily(bool exchange) : exchange_(exchange) {}
  std::string family_column(const BenchmarkCase& benchmark_case) const override {
    return exchange_ ? "exchange" : std::string(benchmark_case.collective->name);
  }
  std::string algorithm_column(const BenchmarkCase& benchmark_case) const override {
    return benchmark_case.bare ? "mpi_bare" : std::string(benchmark_case.algorithm->name);
  }
  std::unique_ptr<PreparedCase> prepare(const BenchmarkCase& benchmark_case,
                                        RunContext& context) const override {
    return std::make_unique<PreparedCollective>(benchmark_case, context);
  }
  // Every call of a collective is a sample of its own.
  bool batched() const override { return false; }
  bool has_dtype() const override { return true; }

 private:
  const bool exchange_;
};

}  // namespace

std::unique_ptr<PreparedMessages> prepare_messages(const BenchmarkCase& benchmark_case,
                                                   RunContext& context) {
  return std::make_unique<PreparedCollective>(benchmark_case, context);
}

const FamilyRunner& collective_family() {
  static const CollectiveFamily family(/*exchange=*/false);
  return family;
}

const FamilyRunner& exchange_family() {
  static const CollectiveFamily family(/*exchange=*/true);
  return family;
}

// ---------------------------------------------------------------------------
// Planning (planner.h).

namespace {

BenchmarkCase collective_case(const CollectiveInfo& collective, const AlgorithmInfo& algorithm) {
  BenchmarkCase entry;
  entry.family = &collective_family();
  entry.collective = &collective;
  entry.algorithm = &algorithm;
  return entry;
}

// mpi_bare needs the mpi transport and MPI's own datatypes and operations
// (no user-defined op).
bool bare_allreduce_possible(const Planner& planner) {
  const Options& options = planner.options();
  return planner.transport_kind() == "mpi" &&
         (options.dtype == DType::f32 || options.dtype == DType::f64) &&
         options.op != ReduceOp::avg;
}

// Size-major, as nccl-tests' tables: every algorithm at one size, then the
// next size. Consecutive benchmarks then share their buffers (see
// PreparedCollective::adopt), and the console output compares algorithms
// per size. With `bare`, allreduce/mpi_bare/<bytes> after each size's
// algorithms (with_algorithms false: only those).
void add_collective_sizes(Planner& planner, const CollectiveInfo& collective,
                          const std::vector<std::uint64_t>& sizes, bool with_algorithms,
                          bool bare) {
  std::vector<const AlgorithmInfo*> algorithms;
  if (with_algorithms) algorithms = planner.selected(collective);
  for (const std::uint64_t bytes : sizes) {
    for (const AlgorithmInfo* algorithm : algorithms) {
      if (!planner.runnable(collective, *algorithm, bytes)) continue;
      BenchmarkCase entry = collective_case(collective, *algorithm);
      entry.name = fmt::format("{}/{}/{}", collective.name, algorithm->name, bytes);
      entry.message_bytes = {bytes};
      planner.add(std::move(entry));
    }
    if (bare) {
      // Not an algorithm --algorithms names: what it cannot run is a note.
      const AlgorithmInfo& library = *collective.find_algorithm(kMpiLibraryAlgorithm);
      const std::string reason = library.unsupported_reason(
          planner.transport_kind(), planner.ranks(), bytes / planner.element_bytes());
      if (!reason.empty()) {
        planner.skip(fmt::format("{}/mpi_bare", collective.name), reason, bytes);
        continue;
      }
      BenchmarkCase entry = collective_case(collective, library);
      entry.name = fmt::format("{}/mpi_bare/{}", collective.name, bytes);
      entry.message_bytes = {bytes};
      entry.bare = true;
      planner.add(std::move(entry));
    }
  }
}

// A workload's message in the run's --dtype: fsdp, zero2, tp and moe messages
// are bf16 (or f32) whatever --dtype is, so their bytes may not be a whole
// number of its elements; such a size is left out with a note.
bool whole_elements(Planner& planner, const std::string& name, std::uint64_t bytes) {
  if (bytes % planner.element_bytes() == 0) return true;
  planner.skip(name,
               fmt::format("not a whole number of {} elements; run with the workload's dtype",
                           planner.dtype_name()),
               bytes);
  return false;
}

// An alltoallv message's token routing (the default for every other).
TokenRouting routing_of(const Message& message) {
  return {message.routing_skew, message.routing_returns};
}

// Each message's routing, or none when every one is the default.
std::vector<TokenRouting> routings_unless_default(const std::vector<TokenRouting>& routings) {
  const bool all_default = std::all_of(routings.begin(), routings.end(),
                                       [](const TokenRouting& r) { return r == TokenRouting{}; });
  return all_default ? std::vector<TokenRouting>{} : routings;
}

// <collective>/<algorithm>/<bytes>/<workload>: every distinct size of the
// workload's messages that this collective carries (none: no benchmark).
void add_workload_sizes(Planner& planner, const CollectiveInfo& collective,
                        const std::vector<Workload>& workloads) {
  const std::vector<const AlgorithmInfo*> algorithms = planner.selected(collective);
  for (const Workload& workload : workloads) {
    for (const Message& message : workload.distinct) {
      if (message.collective != collective.name) continue;
      if (!whole_elements(planner, fmt::format("{}/{}", collective.name, workload.spec),
                          message.bytes)) {
        continue;
      }
      for (const AlgorithmInfo* algorithm : algorithms) {
        if (!planner.runnable(collective, *algorithm, message.bytes, routing_of(message))) {
          continue;
        }
        BenchmarkCase entry = collective_case(collective, *algorithm);
        entry.name = fmt::format("{}/{}/{}/{}", collective.name, algorithm->name, message.bytes,
                                 workload.spec);
        entry.message_bytes = {message.bytes};
        entry.message_routings = routings_unless_default({routing_of(message)});
        entry.workload = workload.spec;
        entry.model = workload.model;
        entry.item = message.item;
        entry.multiplicity = message.multiplicity;
        planner.add(std::move(entry));
      }
    }
  }
}

// The collectives of a workload's iteration, in order of first use.
std::vector<const CollectiveInfo*> collectives_of(const Workload& workload) {
  std::vector<const CollectiveInfo*> used;
  for (const Message& message : workload.sequence) {
    const CollectiveInfo* collective = find_collective(message.collective);
    if (std::find(used.begin(), used.end(), collective) == used.end()) used.push_back(collective);
  }
  return used;
}

}  // namespace

std::vector<const AlgorithmInfo*> common_algorithms(
    Planner& planner, const std::vector<const CollectiveInfo*>& used) {
  std::vector<const AlgorithmInfo*> common = planner.selected(*used.front());
  for (std::size_t k = 1; k < used.size(); ++k) {
    const std::vector<const AlgorithmInfo*> theirs = planner.selected(*used[k]);
    std::erase_if(common, [&](const AlgorithmInfo* algorithm) {
      return std::none_of(theirs.begin(), theirs.end(), [&](const AlgorithmInfo* other) {
        return other->name == algorithm->name;
      });
    });
  }
  return common;
}

namespace {

// exchange/<algorithm>/<workload> for one algorithm name, added unless a
// message's collective cannot run its algorithm of that name (a note).
void add_exchange(Planner& planner, const Workload& workload,
                  const std::vector<const CollectiveInfo*>& used, const AlgorithmInfo& algorithm) {
  BenchmarkCase entry = collective_case(*used.front(), algorithm);
  entry.name = fmt::format("exchange/{}/{}", algorithm.name, workload.spec);
  entry.family = &exchange_family();
  entry.workload = workload.spec;
  entry.model = workload.model;
  entry.item = fmt::format("{} messages", workload.sequence.size());
  entry.multiplicity = 1;
  entry.shared_message_bytes = planner.options().debug_share_messages_from;
  const bool mixed = used.size() > 1;
  std::vector<TokenRouting> routings;
  bool all_runnable = true;
  for (const Message& message : workload.sequence) {
    const CollectiveInfo& collective = *find_collective(message.collective);
    all_runnable = planner.runnable(collective, *collective.find_algorithm(algorithm.name),
                                    message.bytes, routing_of(message)) &&
                   all_runnable;
    entry.message_bytes.push_back(message.bytes);
    routings.push_back(routing_of(message));
    if (mixed) entry.message_collectives.push_back(&collective);
  }
  entry.message_routings = routings_unless_default(routings);
  if (all_runnable) planner.add(std::move(entry));
}

// exchange/<algorithm>/<workload>: one iteration's messages in order, each
// by its collective's algorithm of that name, for every name all its
// collectives have (none: a note).
void add_exchanges(Planner& planner, const std::vector<Workload>& workloads) {
  for (const Workload& workload : workloads) {
    if (workload.sequence.empty()) continue;
    bool whole = true;
    for (const Message& message : workload.sequence) {
      whole = whole_elements(planner, fmt::format("exchange/{}", workload.spec), message.bytes) &&
              whole;
    }
    if (!whole) continue;
    const std::vector<const CollectiveInfo*> used = collectives_of(workload);
    const std::vector<const AlgorithmInfo*> algorithms = common_algorithms(planner, used);
    if (algorithms.empty()) {
      planner.note(fmt::format(
          "skipping exchange/{}: no selected algorithm name is one of every collective it uses",
          workload.spec));
    }
    for (const AlgorithmInfo* algorithm : algorithms) {
      add_exchange(planner, workload, used, *algorithm);
    }
  }
}

// Every collective of the table (--families <collective>), each
// collective's workload sizes, mpi_bare, exchange.
void plan_collective_cases(Planner& planner, const PlanInputs& inputs) {
  const std::vector<std::uint64_t>& sizes = inputs.sizes;
  const std::vector<Workload>& workloads = inputs.workloads;
  const Options& options = planner.options();
  const CollectiveInfo& allreduce = *find_collective("allreduce");
  const bool bare_asked = options.has_family("mpi_bare");
  const bool bare = bare_asked && bare_allreduce_possible(planner);
  if (bare_asked && !bare) {
    planner.note(
        "skipping allreduce/mpi_bare: it needs the mpi transport, f32 or f64, "
        "and sum, min or max");
  }
  for (const CollectiveInfo& collective : collectives()) {
    const bool with_algorithms = options.has_family(std::string(collective.name));
    const bool bare_here = &collective == &allreduce && bare;
    if (with_algorithms || bare_here) {
      add_collective_sizes(planner, collective, sizes, with_algorithms, bare_here);
    }
    if (with_algorithms) add_workload_sizes(planner, collective, workloads);
  }
  // train's rows need the exchange's, its communication alone.
  if (options.has_family("exchange") || options.has_family("train")) {
    add_exchanges(planner, workloads);
  }
}

std::vector<FamilyName> collective_family_names() {
  std::vector<FamilyName> names;
  for (const CollectiveInfo& collective : collectives()) {
    names.push_back({.name = collective.name, .in_default_list = collective.name == "allreduce"});
  }
  names.push_back(
      {.name = "exchange", .in_default_list = true, .condition = "only with --workload"});
  names.push_back({.name = "mpi_bare", .refusal = [](const SingleProcessTransport&) {
                     return std::string_view(
                         "it calls the MPI library's MPI_Allreduce, and a single-process run has "
                         "no MPI; run it under mpirun with --transport mpi");
                   }});
  return names;
}

}  // namespace

extern const FamilyEntry kCollectiveFamilies;
const FamilyEntry kCollectiveFamilies = {
    .names = collective_family_names,
    .plan = plan_collective_cases,
    .help =
        R"(  <collective>/<algorithm>/<bytes>         one call of a collective on a vector of <bytes>, the
                                           whole vector (nccl-tests' size convention; each
                                           collective's inputs and outputs are in the table
                                           of include/collbench/collectives/collective.h)
  <collective>/<algorithm>/<bytes>/<workload>
                                           one call of a message size that a --workload sends
                                           with that collective
  exchange/<algorithm>/<workload>          one training iteration of a --workload: every
                                           message in order, each by its collective's
                                           algorithm of that name
  allreduce/mpi_bare/<bytes>               (--families mpi_bare) MPI_Allreduce in a bare loop, no
                                           barrier, no algorithm object: the harness-overhead
                                           reference for allreduce/mpi (f32/f64; sum, min, max)
)",
};

}  // namespace collbench::harness
