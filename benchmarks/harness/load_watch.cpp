// The load a case did not make; see load_watch.h.
#include "load_watch.h"

#include <stdexcept>

#include "families.h"

namespace collbench::harness {
namespace {

// Shares are whole numbers (the job sums them as integers); a millionth of
// a tick keeps the division by the ranks of a node exact enough.
constexpr std::uint64_t kShareScale = 1'000'000;

std::uint64_t ticks_of(std::uint64_t shares) { return (shares + kShareScale / 2) / kShareScale; }

}  // namespace

LoadWatch::LoadWatch(int ranks_on_node, int ranks_in_process, LoadSources sources)
    : ranks_on_node_(ranks_on_node),
      ranks_in_process_(ranks_in_process),
      sources_(std::move(sources)) {
  if (ranks_on_node < 1 || ranks_in_process < 1) {
    throw std::invalid_argument("LoadWatch: a node and a process hold at least one rank");
  }
}

std::optional<LoadReading> LoadWatch::read() {
  try {
    return LoadReading{sources_.node(), sources_.process_ticks()};
  } catch (const std::runtime_error&) {
    return std::nullopt;  // not Linux: the rows get no load columns
  }
}

void LoadWatch::start() { started_ = read(); }

LoadShares LoadWatch::share() {
  LoadShares shares;
  const std::optional<LoadReading> now = read();
  const bool ordered = now && started_ && now->node.cpus == started_->node.cpus &&
                       now->node.busy >= started_->node.busy &&
                       now->node.idle >= started_->node.idle &&
                       now->node.steal >= started_->node.steal &&
                       now->node.context_switches >= started_->node.context_switches &&
                       now->job_ticks >= started_->job_ticks;
  if (!ordered) {
    shares.values[LoadShares::unreadable] = 1;
    return shares;
  }
  const NodeCpuTimes& a = now->node;
  const NodeCpuTimes& b = started_->node;
  const auto node_share = [&](std::uint64_t delta) {
    return delta * kShareScale / static_cast<std::uint64_t>(ranks_on_node_);
  };
  shares.values[LoadShares::busy] = node_share(a.busy - b.busy);
  shares.values[LoadShares::idle] = node_share(a.idle - b.idle);
  shares.values[LoadShares::steal] = node_share(a.steal - b.steal);
  shares.values[LoadShares::cpus] = node_share(static_cast<std::uint64_t>(a.cpus));
  shares.values[LoadShares::context_switches] = node_share(a.context_switches - b.context_switches);
  shares.values[LoadShares::job] = (now->job_ticks - started_->job_ticks) * kShareScale /
                                   static_cast<std::uint64_t>(ranks_in_process_);
  return shares;
}

std::optional<OtherLoad> job_load(const LoadShares& sums, double ticks_per_second) {
  const auto& v = sums.values;
  const auto cpus = ticks_of(v[LoadShares::cpus]);
  if (v[LoadShares::unreadable] > 0 || cpus == 0) return std::nullopt;
  LoadReading before, after;
  before.node.cpus = after.node.cpus = static_cast<int>(cpus);
  after.node.busy = ticks_of(v[LoadShares::busy]);
  after.node.idle = ticks_of(v[LoadShares::idle]);
  after.node.steal = ticks_of(v[LoadShares::steal]);
  after.node.context_switches = ticks_of(v[LoadShares::context_switches]);
  after.job_ticks = ticks_of(v[LoadShares::job]);
  const OtherLoad load = other_load(before, after, ticks_per_second);
  if (load.seconds <= 0) return std::nullopt;
  return load;
}

void set_load_counters(benchmark::UserCounters& counters, const OtherLoad& load) {
  counters["load_seconds"] = load.seconds;
  counters["other_cores"] = load.other_cores;
  counters["steal_cores"] = load.steal_cores;
  counters["context_switches_per_s"] = load.context_switches_per_second;
  counters["loaded"] = load.loaded ? 1 : 0;
}

// The Runner's part (families.h), here so that the Runner's file only
// starts the watch and asks for the load.
void Runner::watch_load(int ranks_on_my_node) {
  load_watch_ = std::make_unique<LoadWatch>(ranks_on_my_node, static_cast<int>(local_.size()));
}

void Runner::record_load(benchmark::State& state) {
  if (!load_watch_) return;
  const LoadShares mine = load_watch_->share();
  LoadShares sums;
  for (std::size_t field = 0; field < sums.values.size(); ++field) {
    sums.values[field] = job_sum([&](const LocalRank&) { return mine.values[field]; },
                                 "the sum of the load readings");
  }
  if (const std::optional<OtherLoad> load = job_load(sums, load_watch_->ticks_per_second())) {
    set_load_counters(state.counters, *load);
  }
}

}  // namespace collbench::harness
