#include "single_process.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "collbench/transport/inproc_transport.h"
#include "family_registry.h"
#ifdef COLLBENCH_HAVE_SIMGRID
#include "collbench/transport/sim_transport.h"
#endif

namespace collbench::harness {
namespace {

// Every rank a thread: each is a stack and a share of the cores.
constexpr int kMaxInProcessRanks = 1024;

std::unique_ptr<RankGroup> make_inproc_group(const Options& options) {
  // Bounds the barriers; the Runner bounds the waits (Runner::LocalRank).
  std::unique_ptr<RankGroup> group =
      make_inproc_rank_group(options.ranks, start_up_timeout(options, options.ranks));
  // Threads of one process share its node, as ranks of one host do under
  // mpirun (the hierarchical algorithms group by node).
  const std::vector<int> one_node(static_cast<std::size_t>(options.ranks), 0);
  group->run([&](Transport& transport) { transport.set_nodes(one_node); });
  return group;
}

#ifdef COLLBENCH_HAVE_SIMGRID
std::unique_ptr<RankGroup> make_sim_group(const Options& options) {
  std::string note;
  auto group = make_sim_rank_group(sim_params(options.sim, options.ranks, options.dtype, note));
  // The CSV names the file only; how its α became per-link latency is here.
  if (!options.sim.calibration.empty() && !options.quiet) {
    fmt::print(stderr, "collbench: {}\n", note);
  }
  return group;
}
#endif

constexpr SingleProcessTransport kTransports[] = {
    {"inproc", kMaxInProcessRanks, "", make_inproc_group},
#ifdef COLLBENCH_HAVE_SIMGRID
    {"sim", kMaxSimRanks,
     "a simulated case is deterministic: it runs once, and its time is the simulated time of "
     "that call",
     make_sim_group, true},
#endif
};

}  // namespace

std::span<const SingleProcessTransport> single_process_transports() { return kTransports; }

const SingleProcessTransport* find_single_process_transport(std::string_view kind) {
  const auto found = std::find_if(std::begin(kTransports), std::end(kTransports),
                                  [&](const SingleProcessTransport& t) { return t.kind == kind; });
  return found == std::end(kTransports) ? nullptr : &*found;
}

void validate_single_process(
    Options& options, const std::vector<std::pair<std::string, std::string>>& benchmark_flags) {
  const SingleProcessTransport* transport = find_single_process_transport(options.transport);
  if (!options.sim.given.empty() && options.transport != "sim") {
    throw UsageError(
        fmt::format("{} describes the simulated cluster of --transport sim; with "
                    "--transport {} leave it out",
                    options.sim.given.front(), options.transport));
  }
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
    const SingleProcessTransport& transport_entry, Options& options,
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
  for (const FamilyName& family : family_names()) {
    const std::string_view why = family.refusal ? family.refusal(*transport) : "";
    if (why.empty()) continue;
    if (!options.families_given) {
      std::erase(options.families, std::string(family.name));
      continue;
    }
    if (options.has_family(std::string(family.name))) {
      throw UsageError(fmt::format("--families {} cannot run with --transport {}: {}", family.name,
                                   transport->kind, why));
    }
  }
  if (options.debug_stuck_rank >= 0) {
    throw UsageError(fmt::format(
        "--debug-stuck-rank tests the hang protection across the processes of an MPI job; "
        "with --transport {} a rank that never returns cannot be ended apart from the others",
        transport->kind));
  }
  if (!options.sim.calibration.empty()) {
    for (const char* replaced : {"--link-latency", "--link-bandwidth", "--gamma"}) {
      if (std::find(options.sim.given.begin(), options.sim.given.end(), replaced) !=
          options.sim.given.end()) {
        throw UsageError(
            fmt::format("{} and --calibration both set the network; give one", replaced));
      }
    }
  }
  for (const char* intra_flag : {"--intra-latency", "--intra-bandwidth"}) {
    if (options.sim.ppn == 1 && std::find(options.sim.given.begin(), options.sim.given.end(),
                                          intra_flag) != options.sim.given.end()) {
      throw UsageError(fmt::format(
          "{} describes the links between ranks of a node; with --ppn 1 there are none: add "
          "--ppn K (K > 1) or leave it out",
          intra_flag));
    }
  }
  for (const char* train_flag :
       {"--compute-from", "--flops", "--global-batch", "--no-overlap", "--reuse-buckets"}) {
    if (std::find(options.sim.given.begin(), options.sim.given.end(), train_flag) !=
            options.sim.given.end() &&
        !options.has_family("train")) {
      throw UsageError(
          fmt::format("{} only acts on --families train; add train to --families", train_flag));
    }
  }
  if (options.sim.no_payload && options.check) {
    throw UsageError(
        "--check needs the payload: size-only mode (--no-payload) moves no byte; leave out one "
        "of them");
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
  if (transport->deterministic) {
    // One call per case: its time is the same every time; and no
    // connections to set up.
    options.samples = 1;
    options.min_samples = 1;
    options.warmup = 0;
    options.no_connections = true;
    options.no_nccl_batch = true;
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
