// collbench --transport sim: the flags that describe the simulated
// cluster (platform, links, γ, o, payload), and the SimParams they make,
// from the flags or from a collbench-fit models.csv (--calibration).
#pragma once

#include <string>
#include <vector>

#include "collbench/core/dtype.h"
#include "collbench/transport/rank_group.h"

#ifdef COLLBENCH_HAVE_SIMGRID
#include "collbench/transport/sim_transport.h"
#endif

// Only the name: CLI11 costs each file that includes it ~10 CPU s to compile,
// and every harness file includes this header through options.h.
namespace CLI {
class App;
}

namespace collbench::harness {

// As given on the command line; units are required (the sim transport
// parses them strictly).
struct SimFlags {
  std::string platform = "star";
  int ppn = 1;
  std::string link_latency = "1us";
  std::string link_bandwidth = "10GBps";
  std::string intra_latency = "100ns";
  std::string intra_bandwidth = "50GBps";
  std::string gamma = "10GBps";  // kDefaultGammaSecondsPerByte's rate (collbench-predict's)
  std::string memory_rate = "0";
  std::string overhead = "0s";
  bool no_payload = false;
  std::string calibration;  // a models.csv of collbench-fit
  std::vector<std::string> simgrid_args;
  // --families train: where each rank's simulated compute comes from (the
  // gemm rows of a harness CSV, or an assumed FLOP/s rate; one of them),
  // the global batch of strong scaling (0: --train-batch per rank), whether
  // buckets wait for the whole backward pass, and whether a bucket of a
  // size already exchanged reuses that exchange's simulated time.
  std::string compute_from;
  std::string flops;
  int global_batch = 0;
  bool no_overlap = false;
  bool reuse_buckets = false;
  // The flags given (for refusing them with another transport).
  std::vector<std::string> given;
};

void add_sim_options(CLI::App& app, SimFlags& flags);

struct RunMetadata;
// With `group` a simulation's: the CSV's sim_* columns, from the params the
// group was built with, and the simulated nodes (--ppn ranks each) in place
// of this host. Nothing otherwise.
void describe_simulation(const RankGroup& group, const SimFlags& flags, RunMetadata& metadata);

#ifdef COLLBENCH_HAVE_SIMGRID
// What the run's platform is made of; throws std::invalid_argument with one
// sentence naming the flag to fix (bad units, a calibration file that
// cannot give α and β). `note` says where each value came from.
SimParams sim_params(const SimFlags& flags, int ranks, DType dtype, std::string& note);
#endif

}  // namespace collbench::harness
