// What the train family's two runs share, the real one (train_real.cpp)
// and the simulated one (train_sim.cpp), and hand the family
// (train_family.cpp). Private to the train family's files.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "collbench/catalog/catalog.h"
#include "families.h"
#include "family.h"

namespace collbench::harness {

// One iteration as the timeline records it: seconds from its start.
struct IterationTimes {
  explicit IterationTimes(std::size_t layers = 0, std::size_t messages = 0)
      : forward_start(layers),
        forward_end(layers),
        backward_start(layers),
        backward_end(layers),
        message_ready(messages),
        message_start(messages),
        message_end(messages) {}
  std::vector<double> forward_start;  // per layer, forward order
  std::vector<double> forward_end;
  std::vector<double> backward_start;
  std::vector<double> backward_end;
  std::vector<double> message_ready;  // per message, when handed over
  std::vector<double> message_start;
  std::vector<double> message_end;
  double end = 0;
};

// --timeline (on rank 0): the timed iteration `times` of `benchmark_case`,
// replacing an earlier round's.
void record_timeline(const BenchmarkCase& benchmark_case, const Model& model,
                     const IterationTimes& times);

// The iteration on this rank's cores: GEMMs, and a communication thread.
std::unique_ptr<PreparedCase> prepare_real_train(const BenchmarkCase& benchmark_case,
                                                 RunContext& context);
#ifdef COLLBENCH_HAVE_SIMGRID
// The iteration on the simulated clock; null when `context`'s transport
// does not simulate compute.
std::unique_ptr<PreparedCase> prepare_sim_train(const BenchmarkCase& benchmark_case,
                                                RunContext& context);
#endif

}  // namespace collbench::harness
