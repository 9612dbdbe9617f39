// Timing conventions other tools use, measured in the same run as the
// harness's own (each call after a barrier, the slowest rank's time), so
// that a row compares with the tool a reader knows (results/README.md
// defines each column by what it times):
//
//   osu_avg_us   OSU Micro-Benchmarks (osu_allreduce and the other blocking
//                collectives): each rank times each of its calls, a barrier
//                between calls outside the timing; each rank's mean, then
//                the mean over ranks (OSU's "Avg Latency"). The harness's
//                timed loop under --sync barrier is that loop, so this is
//                every rank's mean of its own per-call times, averaged.
//   nccl_avg_us  nccl-tests: after a barrier, kNcclBatchCalls calls back to
//                back timed as one, divided by their count, then the mean
//                over ranks (nccl-tests' default -a 1 reports the average);
//                one batch after the timed loop; none on a simulated
//                transport (Options::no_nccl_batch).
#pragma once

namespace collbench::harness {

// nccl-tests' default iteration count (-n 20).
inline constexpr int kNcclBatchCalls = 20;

}  // namespace collbench::harness
