// One benchmark's calls: the --check agreement, warm-up, batch calibration,
// the timed loop and its counters; see families.h.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <span>
#include <stdexcept>

#include "families.h"
#include "load_watch.h"
#include "runner_context.h"
#include "statistics.h"

namespace collbench::harness {

void Runner::check(BenchmarkCase& benchmark_case) {
  each_rank([&](LocalRank& local) { local.check = local.prepared->check(benchmark_case); });

  // Every rank must take the same decision: total the wrong elements and
  // take the first mismatch from the lowest rank that saw one.
  const std::uint64_t total_wrong =
      job_sum([](const LocalRank& local) { return local.check.wrong; },
              "the agreement on the --check result");
  benchmark_case.checked = true;
  benchmark_case.wrong_elements = total_wrong;
  benchmark_case.wrong_elements_all_rounds += total_wrong;
  if (total_wrong == 0) return;
  constexpr const char* kWhat = "the agreement on the --check result";
  int reporter = ranks_;
  for (const LocalRank& local : local_) {
    if (local.check.wrong > 0) reporter = std::min(reporter, local.transport->rank());
  }
  const int first_reporter = group_->min(reporter, kWhat);
  std::string detail;
  if (first_reporter == reporter) {
    detail = fmt::format("rank {}, {}", reporter, local_rank(reporter).check.first_mismatch);
  }
  detail.resize(group_->broadcast_value(detail.size(), first_reporter, kWhat));
  group_->broadcast(std::as_writable_bytes(std::span(detail)), first_reporter, kWhat);
  benchmark_case.check_detail = detail;
}

void Runner::calibrate_batch(BenchmarkCase& benchmark_case) {
  // Rank 0 decides and broadcasts, so every rank agrees. A single call of a
  // tiny kernel is mostly timer overhead, so the first estimate (the fastest
  // of a few single calls) is refined by timing one batch of that size.
  constexpr int kProbes = 3;
  constexpr unsigned long long kMaxCalls = 1 << 22;
  auto batch_for = [&](double seconds_per_call) {
    unsigned long long calls = 1;
    if (rank_ == 0) {
      calls = static_cast<unsigned long long>(
          std::ceil(kBatchSeconds / std::max(seconds_per_call, 1e-10)));
      calls = std::clamp<unsigned long long>(calls, 1, kMaxCalls);
    }
    return group_->broadcast_value(calls, 0, "the agreement on the batch size");
  };
  // The first local rank is rank 0 whenever its time is the one that counts.
  benchmark_case.calls_per_sample = 1;
  double fastest = 0;
  for (int probe = 0; probe < kProbes; ++probe) {
    call_everywhere(benchmark_case, false);
    const double seconds = local_.front().seconds;
    fastest = probe == 0 ? seconds : std::min(fastest, seconds);
  }
  benchmark_case.calls_per_sample = batch_for(fastest);
  if (benchmark_case.calls_per_sample > 1) {
    call_everywhere(benchmark_case, false);
    const double batch_seconds = local_.front().seconds;
    benchmark_case.calls_per_sample =
        batch_for(batch_seconds / static_cast<double>(benchmark_case.calls_per_sample));
  }
}

std::vector<double> Runner::gather_medians() {
  std::vector<double> mine;
  for (LocalRank& local : local_) mine.push_back(summarize(local.own_seconds).median);
  std::vector<double> medians = group_->gather(mine, "the gathering of every rank's median");
  if (rank_ != 0) medians.clear();
  return medians;
}

std::string rank_median_label(const std::vector<double>& medians_seconds) {
  std::string label(kRankMedianLabel);
  for (std::size_t r = 0; r < medians_seconds.size(); ++r) {
    label += fmt::format("{}{:.6g}", r == 0 ? "" : ";", medians_seconds[r] * 1e6);
  }
  return label;
}

// What the timed loop measured, for the counters.
struct Runner::Samples {
  // Per-call seconds of every sample, the slowest rank's (each local
  // rank's own are in its LocalRank), and how often each rank was the
  // slowest.
  std::vector<double> seconds;
  std::vector<std::uint64_t> slowest_counts;
  std::optional<double> handoff_before;
  std::optional<double> handoff_after;
};

void Runner::run_unguarded(benchmark::State& state, BenchmarkCase& benchmark_case, int round) {
  start(benchmark_case, round);
  phase_ = Phase::setup;
  prepare(benchmark_case);
  if (!get_ready(state, benchmark_case, round)) return;
  prepare_windows(benchmark_case);
  Samples samples = time_samples(state, benchmark_case);
  set_counters(state, benchmark_case, samples);
  record_load(state);
}

void Runner::start(const BenchmarkCase& benchmark_case, int round) {
  if (options_.timeout_seconds < 0) {
    for (LocalRank& local : local_) {
      local.transport->set_timeout(
          timeout_milliseconds(default_timeout_seconds(benchmark_case.bytes(), ranks_)));
    }
  }
  if (current_ != std::pair<const BenchmarkCase*, int>{&benchmark_case, round}) {
    current_ = {&benchmark_case, round};
    ++benchmark_index_;
    timed_calls_ = 0;
    if (load_watch_) load_watch_->start();
    if (rank_ == 0) progress_.started(benchmark_case.name);
  }
  if (!connected_) {
    phase_ = Phase::connect;
    if (!options_.debug_skip_connection_warmup && !options_.no_connections) connect_every_pair();
    connected_ = true;
  }
}

bool Runner::get_ready(benchmark::State& state, BenchmarkCase& benchmark_case, int round) {
  // The --check calls are untimed calls of the same algorithm on the same
  // buffers, so they count as the first warm-up calls.
  int warmup_calls = options_.warmup;
  if (options_.check && benchmark_case.checked_round != round) {
    phase_ = Phase::check;
    check(benchmark_case);
    benchmark_case.checked_round = round;
    warmup_calls -= kCheckedCalls;
  }
  if (benchmark_case.wrong_elements > 0) {
    state.SkipWithError(fmt::format("--check: {} wrong elements (first: {})",
                                    benchmark_case.wrong_elements, benchmark_case.check_detail)
                            .c_str());
    return false;
  }
  each_rank([](LocalRank& local) { local.prepared->before_timing(); });
  if (!local_.front().prepared->warmed_up) {
    phase_ = Phase::warmup;
    for (int i = 0; i < warmup_calls; ++i) call_everywhere(benchmark_case, true);
    for (LocalRank& local : local_) local.prepared->warmed_up = true;
  }
  if (benchmark_case.family->batched() && !benchmark_case.calibrated) {
    phase_ = Phase::calibration;
    calibrate_batch(benchmark_case);
    benchmark_case.calibrated = true;
  }
  return true;
}

std::uint64_t Runner::sample_count(const benchmark::State& state,
                                   const BenchmarkCase& benchmark_case) const {
  // At least the floor, and as many as Google Benchmark asks for
  // (max_iterations grows until the samples' total reaches
  // --benchmark_min_time; with --samples main sets that to 0, so its first
  // request, 1, is the last). All of them run in a single KeepRunningBatch
  // step, which then counts samples x calls iterations: Google Benchmark's
  // documented overshoot of a batch, so a request below the floor still
  // gets the floor, and the count reported is the count timed.
  const std::uint64_t calls = benchmark_case.calls_per_sample;
  const auto requested = static_cast<std::uint64_t>(state.max_iterations);
  return std::max<std::uint64_t>(static_cast<std::uint64_t>(options_.sample_floor()),
                                 (requested + calls - 1) / calls);
}

void Runner::expect_every_peer_contacted() const {
  // Every peer has been addressed before the first timed call, so no
  // first contact (where transports set up connections) is timed. A
  // benchmark's own warm-up reaches only the peers its algorithm uses: this
  // holds only because connect_every_pair ran. A simulation has no
  // connections to set up, and skips it (main.cpp).
  if (options_.no_connections) return;
  for (const LocalRank& local : local_) {
    const InstrumentedTransport& transport = *local.transport;
    if (transport.peers_contacted() != static_cast<std::uint64_t>(ranks_ - 1)) {
      throw std::logic_error(fmt::format(
          "rank {} has addressed {} of its {} peers before timing: the connection warm-up "
          "(Runner::connect_every_pair) did not reach them all",
          transport.rank(), transport.peers_contacted(), ranks_ - 1));
    }
  }
}

Runner::Samples Runner::time_samples(benchmark::State& state, const BenchmarkCase& benchmark_case) {
  const std::uint64_t calls = benchmark_case.calls_per_sample;
  const std::uint64_t samples = sample_count(state, benchmark_case);
  // Reserved so that the timed loop allocates nothing.
  Samples measured;
  measured.seconds.reserve(samples);
  for (LocalRank& local : local_) {
    local.own_seconds.clear();
    local.own_seconds.reserve(samples);
    local.transport->reset_counters();
  }
  harness_traffic_ = {};
  measured.slowest_counts.assign(static_cast<std::size_t>(ranks_), 0);
  expect_every_peer_contacted();
  const bool fault = benchmark_index_ == options_.debug_fault_after;
  if (core_handoff_) {
    measured.handoff_before = core_handoff_->measure();
    // The probe holds ranks 0 and 1 for up to its budget while the others go
    // on; with --sync none nothing else lines the ranks up, and that wait
    // would land in the others' first timed call (and in Google Benchmark's
    // choice of the iteration count).
    if (ranks_ > 1) group_->barrier(transport_, "the barrier after the core-distance probe");
  }
  uncounted([&] { agree_on_windows(); });
  phase_ = Phase::timed;
  const std::function<void(LocalRank&)> sample_call = [&](LocalRank& local) {
    if (fault) inject_fault(local.transport->rank());
    if (!benchmark_case.bare) local.context->synchronize();
    local.seconds = local.prepared->call(benchmark_case);
    if (local.late > 0) local.seconds = kLateMarkSeconds + local.late;
  };
  while (state.KeepRunningBatch(static_cast<benchmark::IterationCount>(samples * calls))) {
    for (std::uint64_t sample = 0; sample < samples; ++sample) {
      ++timed_calls_;
      each_rank(sample_call);
      const SecondsOnRank slowest = slowest_call("the reduction of the iteration time");
      if (windows_ && late_start(slowest.seconds)) continue;
      state.SetIterationTime(slowest.seconds);
      measured.seconds.push_back(slowest.seconds / static_cast<double>(calls));
      for (LocalRank& local : local_) {
        local.own_seconds.push_back(local.seconds / static_cast<double>(calls));
      }
      ++measured.slowest_counts[static_cast<std::size_t>(slowest.rank)];
    }
  }
  phase_ = Phase::after;
  if (core_handoff_) measured.handoff_after = core_handoff_->measure();
  if (measured.seconds.empty()) {
    state.SkipWithError(fmt::format("--sync window: every one of the {} samples started late for "
                                    "its window of {:.3g} us (late_starts)",
                                    samples, windows_ ? windows_->window * 1e6 : 0.0)
                            .c_str());
  }
  return measured;
}

void Runner::set_counters(benchmark::State& state, const BenchmarkCase& benchmark_case,
                          Samples& measured) {
  std::vector<double>& seconds = measured.seconds;
  const auto iterations =
      static_cast<double>(seconds.size()) * static_cast<double>(benchmark_case.calls_per_sample);
  // The first local rank's: rank 0's, whose row it is.
  const std::uint64_t sent_bytes = transport_.bytes_sent() - harness_traffic_.bytes;
  const std::uint64_t all_messages = job_sum(
      [&](const LocalRank& local) {
        return local.transport->messages_sent() - harness_traffic_.messages;
      },
      "the sum of the message counts");
  if (seconds.empty()) return;
  const std::vector<double> rank_medians = gather_medians();

  const Summary summary = summarize(seconds);
  const double bytes = static_cast<double>(benchmark_case.bytes());
  const double algbw = summary.median > 0 ? bytes / summary.median / 1e9 : 0;
  auto& counters = state.counters;
  counters["bytes"] = bytes;
  counters["ranks"] = ranks_;
  counters["min_us"] = summary.min * 1e6;
  counters["median_us"] = summary.median * 1e6;
  counters["mean_us"] = summary.mean * 1e6;
  counters["p99_us"] = summary.p99 * 1e6;
  counters["max_us"] = summary.max * 1e6;
  counters["algbw_GBps"] = algbw;
  counters["busbw_GBps"] = algbw * benchmark_case.bus_bandwidth_factor(ranks_);
  counters["wrong_elements"] = static_cast<double>(benchmark_case.wrong_elements);
  counters["calls_per_sample"] = static_cast<double>(benchmark_case.calls_per_sample);
  counters["samples"] = static_cast<double>(seconds.size());
  if (benchmark_case.family->every_rank_timed()) {
    // The rank slowest most often (the lowest of a tie), how often, and
    // every rank's own median (rank 0 has them all): nccl-tests' straggler
    // view, so a sweep names a slow rank without the link matrix.
    const auto& slowest_counts = measured.slowest_counts;
    const auto most = std::max_element(slowest_counts.begin(), slowest_counts.end());
    counters["slowest_rank"] = static_cast<double>(most - slowest_counts.begin());
    counters["slowest_rank_share"] =
        static_cast<double>(*most) / static_cast<double>(seconds.size());
    if (rank_ == 0) state.SetLabel(rank_median_label(rank_medians));
  }
  // The larger of the two probes: a repetition counts as measured with the
  // cores near only if they were near at both ends.
  if (measured.handoff_before && measured.handoff_after) {
    counters["core_handoff_ns"] = std::max(*measured.handoff_before, *measured.handoff_after);
  }
  // The MPI library's own allreduce sends nothing through the transport; a
  // zero there would read as "sent nothing", so the counter is left out.
  const bool through_transport = benchmark_case.family->through_transport();
  if (through_transport && (all_messages > 0 || ranks_ == 1)) {
    counters["sent_bytes_per_rank"] = static_cast<double>(sent_bytes) / iterations;
  }
  set_convention_counters(state, benchmark_case);
}

}  // namespace collbench::harness
