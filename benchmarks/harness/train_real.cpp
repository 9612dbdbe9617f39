// The train family's real run (train_family.cpp): the iteration's steps
// (train_plan.cpp) on this rank's core, the messages on a communication
// thread.
//
// GEMMs are the catalog's layers at --train-batch samples per rank, each
// scaled by --compute-scale, on the gemm family's GemmProducts (layers with
// the same products share buffers: the time is the same, the memory is
// not). The exchange's buffers and algorithm objects are the collective
// family's (prepare_messages), so --check checks every message of the
// iteration as the exchange family does (a reduce-scatter's shard against
// the sum over the ranks of that block: what an allreduce leaves there).
//
// Threads: the communication thread makes every transport call of the
// iteration while the main thread computes, and the main thread makes none
// until the thread is idle again, so MPI needs MPI_THREAD_SERIALIZED (main
// asks for it and refuses train benchmarks without it). Its times are
// std::chrono::steady_clock's, not MPI_Wtime's, for the same reason. The
// two threads share the rank's core (one core per rank: --bind-to core),
// so the transport's waits yield it after a few empty polls
// (Transport::set_yield_while_waiting) instead of taking half of it from
// the GEMMs while a bucket waits for a peer that is still computing; the
// MPI library's own allreduce (`mpi`) waits inside MPI as Open MPI does
// (spinning, unless --mca mpi_yield_when_idle 1).
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "collbench/catalog/catalog.h"
#include "families.h"
#include "family.h"
#include "gemm_family.h"
#include "train_plan.h"
#include "train_run.h"

namespace collbench::harness {
namespace {

using Clock = std::chrono::steady_clock;
using StepKind = TrainStep::Kind;

double seconds_between(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

class PreparedTrain final : public PreparedCase {
 public:
  PreparedTrain(const BenchmarkCase& benchmark_case, RunContext& context)
      : context_(context),
        case_(benchmark_case),
        model_(find_model(benchmark_case.model)),
        layer_groups_(gemm_layer_groups(model_)),
        exchange_(prepare_messages(benchmark_case, context)),
        compute_only_(benchmark_case.compute_only),
        library_(is_library_algorithm(*benchmark_case.algorithm)),
        times_(model_.gemm_layers.size(), benchmark_case.message_bytes.size()) {
    const Options& options = context.options();
    for (const DistinctGemm& group : distinct_gemm_layers(model_)) {
      const GemmLayer& layer = model_.gemm_layers[group.layer];
      products_.emplace_back(scaled_products(layer, options.train_batch, options.compute_scale),
                             layer.input_gradient, /*backward=*/true);
      products_.back().fill();
    }
    if (!compute_only_) {
      context.transport().set_yield_while_waiting(true);
      communication_ = std::thread([this] { communicate(); });
    }
  }

  ~PreparedTrain() override {
    if (communication_.joinable()) {
      {
        const std::lock_guard lock(mutex_);
        stopping_ = true;
      }
      work_.notify_one();
      communication_.join();
      context_.transport().set_yield_while_waiting(false);
    }
    if (timed_ && context_.rank() == 0 && !context_.options().timeline_path.empty()) {
      record_timeline(case_, model_, times_);
    }
  }

  // A row checks only what it runs: train/none runs the GEMMs alone, so its
  // check is theirs, not the exchange's.
  CheckResult check(const BenchmarkCase& benchmark_case) override {
    if (!compute_only_) return exchange_->check(benchmark_case);
    CheckResult total;
    for (GemmProducts& products : products_) {
      products.fill();
      products.backward();
      const CheckResult result = products.check(/*backward=*/true);
      total.checked += result.checked;
      total.wrong += result.wrong;
      if (total.first_mismatch.empty()) total.first_mismatch = result.first_mismatch;
    }
    return total;
  }

  double call(const BenchmarkCase& benchmark_case) override {
    if (library_ && !compute_only_) context_.library_call_started(benchmark_case);
    start_ = Clock::now();
    {
      const std::lock_guard lock(mutex_);
      handed_ = 0;
      finished_ = 0;
    }
    for (const TrainStep& step : case_.train_steps) run_step(step);
    if (!compute_only_) wait_until_exchanged(case_.message_bytes.size());
    const Clock::time_point end = Clock::now();
    if (library_ && !compute_only_) context_.library_call_returned();
    times_.end = seconds_between(start_, end);
    timed_ = true;
    return times_.end;
  }

 private:
  double now() const { return seconds_between(start_, Clock::now()); }

  void run_step(const TrainStep& step) {
    switch (step.kind) {
      case StepKind::forward:
        times_.forward_start[step.index] = now();
        products_[layer_groups_[step.index]].forward();
        times_.forward_end[step.index] = now();
        return;
      case StepKind::backward:
        times_.backward_start[step.index] = now();
        products_[layer_groups_[step.index]].backward();
        times_.backward_end[step.index] = now();
        return;
      case StepKind::hand:
        if (compute_only_) return;
        times_.message_ready[step.index] = now();
        {
          const std::lock_guard lock(mutex_);
          handed_ = step.index + 1;
        }
        work_.notify_one();
        return;
      case StepKind::wait:
        if (!compute_only_) wait_until_exchanged(step.index + 1);
        return;
    }
  }

  void wait_until_exchanged(std::size_t count) {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return finished_ >= count || failure_; });
    if (failure_) std::rethrow_exception(failure_);
  }

  // The communication thread: each handed message, in order.
  void communicate() {
    std::unique_lock lock(mutex_);
    for (;;) {
      work_.wait(lock, [&] { return stopping_ || finished_ < handed_; });
      if (stopping_) return;
      const std::size_t message = finished_;
      lock.unlock();
      const double start = now();
      try {
        exchange_->run_message(message);
      } catch (...) {
        lock.lock();
        failure_ = std::current_exception();
        done_.notify_one();
        return;
      }
      const double end = now();
      lock.lock();
      times_.message_start[message] = start;
      times_.message_end[message] = end;
      ++finished_;
      done_.notify_one();
    }
  }

  RunContext& context_;
  const BenchmarkCase case_;
  const Model& model_;
  const std::vector<std::size_t> layer_groups_;
  std::vector<GemmProducts> products_;  // per distinct group of layers
  std::unique_ptr<PreparedMessages> exchange_;
  const bool compute_only_;
  const bool library_;
  IterationTimes times_;
  bool timed_ = false;
  Clock::time_point start_;

  // Between the two threads: messages handed over and finished this call.
  std::mutex mutex_;
  std::condition_variable work_;
  std::condition_variable done_;
  std::size_t handed_ = 0;
  std::size_t finished_ = 0;
  bool stopping_ = false;
  std::exception_ptr failure_;
  // Last: started once everything it reads exists, joined first.
  std::thread communication_;
};

}  // namespace

std::unique_ptr<PreparedCase> prepare_real_train(const BenchmarkCase& benchmark_case,
                                                 RunContext& context) {
  return std::make_unique<PreparedTrain>(benchmark_case, context);
}

}  // namespace collbench::harness
