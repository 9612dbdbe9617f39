// The job as main.cpp starts it: whether MPI runs, this process's rank and
// the job's size, how a run without MPI may start, and the agreements every
// rank reaches before the first benchmark (errors, configurations, memory).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collbench/transport/bootstrap.h"
#include "metadata.h"
#include "options.h"

namespace collbench::harness {

// What a launcher (Open MPI's mpirun, a PMIx one such as srun, MPICH's
// hydra) sets in each process it starts: the process's rank in the job.
inline constexpr const char* kLauncherRankVariables[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK",
                                                         "PMI_RANK"};

struct World {
  // False: every rank runs in this process, and MPI is not initialized;
  // `size` is then --ranks, known once the options are parsed.
  bool mpi = true;
  MPI_Comm comm = MPI_COMM_NULL;  // the harness's own: barriers, timing, agreement
  int rank = 0;
  int size = 1;
  // What MPI_Init_thread provided: the train family's communication thread
  // needs MPI_THREAD_SERIALIZED (train_real.cpp).
  int thread_level = MPI_THREAD_SINGLE;
  // Without MPI, one rank per process (--bootstrap file:DIR): how the ranks
  // agree, once the options have said how to find each other.
  std::unique_ptr<Bootstrap> bootstrap;
};

// FNV-1a (64 bit) of this process's executable file, in hex; "unknown" when it
// cannot be read (no /proc). Cheap enough at start-up: a few MB read once.
std::string executable_digest();

// True when no rank reports an error. Otherwise the lowest rank that has one
// prints it; all ranks parse the same arguments, so that is rank 0 unless
// the ranks disagree.
bool all_ranks_ok(const World& world, const std::string& error);

// Gathers every rank's configuration on rank 0 and compares it with rank
// 0's; the first difference is reported with the option's name and both
// values.
std::string compare_configurations(const World& world,
                                   const std::vector<std::pair<std::string, std::string>>& fields);

// On rank 0: the first difference between its configuration and another
// rank's (`by_rank`, serialized as compare_configurations does); empty
// elsewhere or when they all agree.
std::string configuration_difference(const std::string& serialized,
                                     const std::vector<std::string>& by_rank, const World& world);

std::uint64_t agreed_memory_limit(const World& world, const RunMetadata& metadata);

// Why a run started without MPI (`what` says how it starts its ranks)
// cannot start here: under a launcher (its variables, as rank 0 of the job
// sees them), or in an MPI process all the same (the argument scan of main
// missed it).
std::string launch_problem(const World& world, const std::string& what);

// --bootstrap file:DIR: this process is --rank of --ranks, and meets the
// others in DIR (bounded by --timeout, or the default of a benchmark of no
// bytes). Throws UsageError naming what is wrong (DIR missing, left by
// another job, ranks that did not come).
void open_bootstrap(World& world, const Options& options);

// The value of `option` on the command line, read before anything else
// (CLI11 parses later, after MPI_Init when MPI is needed): the last one
// given, as CLI11 takes it; "mpi" when none is.
std::string requested(int argc, char** argv, std::string_view option,
                      std::string_view fallback = "mpi");

}  // namespace collbench::harness
