// The train family's names and timeline (train_family.cpp) and its
// sim_compute column (train_plan.cpp), for main and the reporter.
#pragma once

#include <string>
#include <vector>

namespace collbench::harness {

// The algorithm column of train/none/<workload>: the exchange switched off.
inline constexpr const char* kComputeOnlyAlgorithm = "none";

// One timed iteration of a train benchmark on rank 0, microseconds from its
// start: the compute thread's layers, and per message (a DDP bucket, an
// FSDP unit's gather) its ready time and its exchange on the communication
// thread.
struct TrainTimeline {
  struct Span {
    std::string name;  // "forward conv1", "backward fc"
    double start_us = 0;
    double duration_us = 0;
  };
  struct Bucket {
    std::string name;         // "bucket 3", "layer2 forward"
    std::string ready_after;  // the pass it was handed after, e.g. "backward conv1"; "" first
    double ready_us = 0;
    double start_us = 0;
    double end_us = 0;
  };
  std::string benchmark;
  double iteration_us = 0;  // the call, start to its last exchange's end
  std::vector<Span> compute;
  std::vector<Bucket> buckets;  // empty for train/none
};

struct BenchmarkCase;
// A train row's sim_compute column: where its simulated compute came from
// (--transport sim); empty otherwise.
std::string simulated_compute_source(const BenchmarkCase& benchmark_case);

// The last timed iteration of every train benchmark that ran on this rank
// with --timeline (of its last round under --interleave), in the order they
// first finished; emptied.
std::vector<TrainTimeline> take_train_timelines();
// Chrome's trace event format (chrome://tracing, Perfetto): one process
// per benchmark, thread 0 the compute, thread 1 the communication, thread 2
// the whole iteration; "X" events for layers, exchanges and the iteration,
// "i" events for the ready times.
std::string chrome_trace_json(const std::vector<TrainTimeline>& timelines);

}  // namespace collbench::harness
