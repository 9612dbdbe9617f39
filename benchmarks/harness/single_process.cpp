#include "single_process.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "collbench/transport/inproc_transport.h"

namespace collbench::harness {
namespace {

// What no transport of one process can run: without MPI, and with every
// rank a thread (or an actor) of this process.
constexpr std::array kWithoutMpiRefusals = {
    Refusal{"mpi_bare",
            "it calls the MPI library's MPI_Allreduce, and a single-process run has "
            "no MPI; run it under mpirun with --transport mpi"},
    Refusal{"train",
            "each rank's iteration runs its GEMMs beside a communication thread, and "
            "in one process every rank's compute would share this process's cores, "
            "which times no real training step; run it under mpirun"},
    Refusal{"gemm",
            "its GEMMs run on rank 0 alone, which no transport takes part in; run it "
            "with --transport mpi (one rank is enough)"},
};

// Every rank a thread: each is a stack and a share of the cores.
constexpr int kMaxInProcessRanks = 1024;

std::unique_ptr<RankGroup> make_inproc_group(const Options& options) {
  // The Runner sets each benchmark's own timeout before it runs.
  const double seconds = options.timeout_seconds < 0 ? default_timeout_seconds(0, options.ranks)
                                                     : options.timeout_seconds;
  std::unique_ptr<RankGroup> group =
      make_inproc_rank_group(options.ranks, timeout_milliseconds(seconds));
  // Threads of one process share its node, as ranks of one host do under
  // mpirun (the hierarchical algorithms group by node).
  const std::vector<int> one_node(static_cast<std::size_t>(options.ranks), 0);
  group->run([&](Transport& transport) { transport.set_nodes(one_node); });
  return group;
}

constexpr std::array kTransports = {
    SingleProcessTransport{"inproc", kMaxInProcessRanks, "", kWithoutMpiRefusals,
                           make_inproc_group},
    // --transport sim plugs in here: its RankGroup from make_sim_rank_group
    // (collbench/transport/sim_transport.h), a sampling_refusal saying that a
    // simulated case is deterministic and runs once, and its own refusals.
};

}  // namespace

std::span<const SingleProcessTransport> single_process_transports() { return kTransports; }

const SingleProcessTransport* find_single_process_transport(std::string_view kind) {
  const auto found = std::find_if(kTransports.begin(), kTransports.end(),
                                  [&](const SingleProcessTransport& t) { return t.kind == kind; });
  return found == kTransports.end() ? nullptr : &*found;
}

void validate_single_process(
    const Options& options,
    const std::vector<std::pair<std::string, std::string>>& benchmark_flags) {
  const SingleProcessTransport* transport = find_single_process_transport(options.transport);
  if (transport == nullptr) {
    if (options.ranks > 0 && options.bootstrap_folder().empty()) {
      throw UsageError(
          fmt::format("--ranks {} is for a transport whose ranks run in this process ({}) or "
                      "for --bootstrap {}DIR; with --transport {} the launcher sets the rank "
                      "count (mpirun -np N)",
                      options.ranks, single_process_transport_names(), kFileBootstrapPrefix,
                      options.transport));
    }
    return;
  }
  validate_single_process(*transport, options, benchmark_flags);
}

void validate_single_process(
    const SingleProcessTransport& transport_entry, const Options& options,
    const std::vector<std::pair<std::string, std::string>>& benchmark_flags) {
  const SingleProcessTransport* transport = &transport_entry;
  if (options.ranks == 0) {
    throw UsageError(fmt::format(
        "--transport {} runs every rank in this process and needs --ranks N to say how many",
        transport->kind));
  }
  if (options.ranks > transport->max_ranks) {
    throw UsageError(fmt::format("--ranks {}: --transport {} runs at most {} ranks", options.ranks,
                                 transport->kind, transport->max_ranks));
  }
  for (const Refusal& refusal : transport->refused_families) {
    if (options.has_family(std::string(refusal.name))) {
      throw UsageError(fmt::format("--families {} cannot run with --transport {}: {}", refusal.name,
                                   transport->kind, refusal.why));
    }
  }
  if (options.debug_stuck_rank >= 0) {
    throw UsageError(fmt::format(
        "--debug-stuck-rank tests the hang protection across the processes of an MPI job; "
        "with --transport {} a rank that never returns cannot be ended apart from the others",
        transport->kind));
  }
  if (!transport->sampling_refusal.empty()) {
    std::vector<std::string> given = options.sampling_flags_given;
    for (const auto& flag : benchmark_flags) {
      for (const char* name : kSamplingFlags) {
        if (flag.first == name) given.push_back(flag.first);
      }
    }
    if (!given.empty()) {
      throw UsageError(fmt::format("{} cannot be used with --transport {}: {}", given.front(),
                                   transport->kind, transport->sampling_refusal));
    }
  }
}

std::string single_process_transport_names() {
  std::string names;
  for (const SingleProcessTransport& transport : kTransports) {
    names += (names.empty() ? "" : ", ") + std::string(transport.kind);
  }
  return names;
}

}  // namespace collbench::harness
