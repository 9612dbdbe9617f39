// The local families (family.h): a kernel on two buffers, dst and src,
// nothing through the transport; all three are "local" in the CSV (transport
// "local"), told apart by the algorithm column.
//
//   local/reduce/<dtype>/<bytes>       reduce_inplace(dst, src) on rank 0
//   local/reduce_all/<dtype>/<bytes>   (--families reduce_all) the same on
//                                      every rank at once
//   local/memcpy/<bytes>               memcpy(dst, src) on rank 0
//
// On rank 0 alone, only rank 0's time counts, and the other ranks wait in a
// sleeping poll instead of MPI's busy wait so that, oversubscribed, they do
// not steal rank 0's core: local/reduce then measures the kernel on an
// otherwise idle node, which is what gamma means in the cost model.
// reduce_all keeps every rank busy on purpose, as every rank reduces in a
// step of ring, recursive doubling, Rabenseifner or the sharded parameter
// server: ranks on one node then share its caches and memory bandwidth,
// which rank 0 alone has to itself; its time is the slowest rank's.
//
// A sample is a batch of calls back to back (calls_per_sample, calibrated by
// the Runner), since one call of a small kernel takes nanoseconds.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstring>

#include "aligned_buffer.h"
#include "check_data.h"
#include "collbench/core/reduce.h"
#include "families.h"
#include "family.h"
#include "local_kernel.h"
#include "planner.h"
#include "single_process.h"

namespace collbench::harness {
namespace {

// dst and src, the kernels' two buffers.
class PreparedLocal : public LocalKernelCase {
 public:
  PreparedLocal(const BenchmarkCase& benchmark_case, RunContext& context, bool every_rank)
      : LocalKernelCase(context, every_rank),
        dst_(benchmark_case.message_bytes.front()),
        src_(benchmark_case.message_bytes.front()) {}

 protected:
  AlignedBuffer dst_;
  AlignedBuffer src_;
};

class PreparedReduce final : public PreparedLocal {
 public:
  using PreparedLocal::PreparedLocal;
  static constexpr bool kHasDtype = true;

  CheckResult check(const BenchmarkCase& /*benchmark_case*/) override {
    // dst and src are ranks 0 and 1 of a two-rank reduction; one kernel
    // call combines them, avg like sum (the division is the collective's).
    const CheckPattern pattern(2, 1);
    pattern.fill(options_.dtype, 0, 0, dst_.span());
    pattern.fill(options_.dtype, 1, 0, src_.span());
    context_.synchronize();
    run_calls(1);
    if (!runs_kernel()) return {};
    const ReduceOp combine = options_.op == ReduceOp::avg ? ReduceOp::sum : options_.op;
    return pattern.check_reduced(options_.dtype, combine, 0, dst_.span());
  }

  void before_timing() override {
    // Adding zeros keeps dst bounded however many iterations run (the check
    // left small integers in it), so timing never meets overflow or
    // subnormals.
    std::memset(src_.data(), 0, src_.size());
  }

  double call(const BenchmarkCase& benchmark_case) override {
    return run_calls(benchmark_case.calls_per_sample);
  }

 private:
  double run_calls(std::uint64_t calls) {
    const std::size_t count = dst_.size() / dtype_size(options_.dtype);
    return time_calls(calls, [&] {
      reduce_inplace(options_.dtype, options_.op, dst_.data(), src_.data(), count);
    });
  }
};

class PreparedMemcpy final : public PreparedLocal {
 public:
  using PreparedLocal::PreparedLocal;
  static constexpr bool kHasDtype = false;

  CheckResult check(const BenchmarkCase& /*benchmark_case*/) override {
    fill_bytes(src_.span(), 0);
    poison(dst_.span());
    context_.synchronize();
    run_calls(1);
    if (!runs_kernel()) return {};
    return check_bytes(dst_.span(), 0);
  }

  double call(const BenchmarkCase& benchmark_case) override {
    return run_calls(benchmark_case.calls_per_sample);
  }

 private:
  double run_calls(std::uint64_t calls) {
    const std::size_t bytes = dst_.size();
    return time_calls(calls, [&] { std::memcpy(dst_.data(), src_.data(), bytes); });
  }
};

template <typename Prepared>
class LocalFamily final : public FamilyRunner {
 public:
  LocalFamily(const char* algorithm, bool every_rank)
      : algorithm_(algorithm), every_rank_(every_rank) {}
  std::string family_column(const BenchmarkCase&) const override { return "local"; }
  std::string algorithm_column(const BenchmarkCase&) const override { return algorithm_; }
  std::unique_ptr<PreparedCase> prepare(const BenchmarkCase& benchmark_case,
                                        RunContext& context) const override {
    return std::make_unique<Prepared>(benchmark_case, context, every_rank_);
  }
  bool every_rank_timed() const override { return every_rank_; }
  bool through_transport() const override { return false; }
  bool has_dtype() const override { return Prepared::kHasDtype; }

 private:
  const char* algorithm_;
  const bool every_rank_;
};

}  // namespace

const FamilyRunner& local_reduce_family() {
  static const LocalFamily<PreparedReduce> family("reduce", /*every_rank=*/false);
  return family;
}

const FamilyRunner& local_reduce_all_family() {
  static const LocalFamily<PreparedReduce> family("reduce_all", /*every_rank=*/true);
  return family;
}

const FamilyRunner& local_memcpy_family() {
  static const LocalFamily<PreparedMemcpy> family("memcpy", /*every_rank=*/false);
  return family;
}

// Planning (planner.h).

namespace {

// One local/<kernel>/<bytes> benchmark of `family` per size.
void add_local(Planner& planner, const std::string& kernel, const FamilyRunner& family,
               const std::vector<std::uint64_t>& sizes) {
  for (const std::uint64_t bytes : sizes) {
    BenchmarkCase entry;
    entry.name = fmt::format("local/{}/{}", kernel, bytes);
    entry.family = &family;
    entry.message_bytes = {bytes};
    planner.add(std::move(entry));
  }
}

void plan_local_cases(Planner& planner, const PlanInputs& inputs) {
  const Options& options = planner.options();
  if (options.has_family("local")) {
    add_local(planner, "reduce/" + planner.dtype_name(), local_reduce_family(), inputs.sizes);
    add_local(planner, "memcpy", local_memcpy_family(), inputs.sizes);
  }
  if (options.has_family("reduce_all")) {
    add_local(planner, "reduce_all/" + planner.dtype_name(), local_reduce_all_family(),
              inputs.sizes);
  }
}

// Their kernels run on this machine's CPU, outside a simulated clock.
std::string_view refused_where_simulated(const SingleProcessTransport& transport) {
  return transport.deterministic
             ? "its kernels run on this machine's CPU, which the simulated clock does not see; "
               "the simulation charges reductions at --gamma instead"
             : "";
}

std::vector<FamilyName> local_family_names() {
  return {{.name = "local", .in_default_list = true, .refusal = refused_where_simulated},
          {.name = "reduce_all", .refusal = refused_where_simulated}};
}

}  // namespace

extern const FamilyEntry kLocalFamilies;
const FamilyEntry kLocalFamilies = {
    .names = local_family_names,
    .plan = plan_local_cases,
    .help =
        R"(  local/reduce/<dtype>/<bytes>             the reduction kernel alone, on rank 0 (gamma)
  local/reduce_all/<dtype>/<bytes>         (--families reduce_all) the same kernel on every rank
                                           at once, as in an allreduce step: the gamma of ranks
                                           that share a node's caches and memory (slowest rank)
  local/memcpy/<bytes>                     memcpy on rank 0: this node's memory-bandwidth ceiling
)",
};

}  // namespace collbench::harness
