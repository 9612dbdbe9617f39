// What the train family's planning (train_plan.cpp) hands its runs
// (train_real.cpp, train_sim.cpp) and its registration (train_family.cpp).
// Private to the train family's files.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collbench/catalog/catalog.h"
#include "collbench/catalog/workload.h"
#ifdef COLLBENCH_HAVE_SIMGRID
#include "collbench/models/compute.h"
#endif
#include "planner.h"

namespace collbench::harness {

// A layer's products at `batch` samples shrunk by `scale`, as one forward
// product (GemmLayer::at_batch with the batch in m or count).
GemmShape scaled_products(const GemmLayer& layer, int batch, double scale);

// The train cases of `workloads`, in the planner's order.
void plan_train_cases(Planner& planner, const std::vector<Workload>& workloads);

#ifdef COLLBENCH_HAVE_SIMGRID
// One rank's simulated compute of a workload's iteration.
struct SimCompute {
  std::vector<PassSeconds> layers;  // per GEMM layer, forward order
  std::string source;               // the sim_compute column
};

// Per workload: filled by plan_train_cases on the main thread before any
// actor runs, then only read (by actors, which share one OS thread).
std::map<std::string, SimCompute>& sim_computes();
#endif

}  // namespace collbench::harness
