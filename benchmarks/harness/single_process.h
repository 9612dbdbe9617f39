// The transports whose ranks all run in this one process:
// `collbench --transport KIND --ranks N`, with no mpirun and without
// MPI_Init. Each makes a RankGroup of N ranks, which the Runner drives from
// Google Benchmark's thread (families.h). This table is where a transport
// of that kind plugs in; what it accepts of the command line is its own.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collbench/transport/rank_group.h"
#include "options.h"

namespace collbench::harness {

struct SingleProcessTransport {
  std::string_view kind;  // --transport KIND, and the CSV's transport column
  int max_ranks = 1;
  // Why the flags of kSamplingFlags are refused; empty: they are accepted.
  std::string_view sampling_refusal;
  std::unique_ptr<RankGroup> (*make_group)(const Options& options);
  // A simulation: every case is deterministic and runs once (one sample, no
  // warm-up, no connection warm-up: there are no connections to set up),
  // and what runs outside the transport is not on its clock.
  bool deterministic = false;
};

std::span<const SingleProcessTransport> single_process_transports();
// Null when `kind` is not one (the MPI-launched transports).
const SingleProcessTransport* find_single_process_transport(std::string_view kind);
// Their kinds, comma-separated, for help texts and errors.
std::string single_process_transport_names();

// Checks `options` against its transport's table entry, if it has one: the
// rank count, the families it cannot run (FamilyName::refusal; those of the
// default list, not asked for, are left out instead) and, with the Google
// Benchmark flags given (benchmark_run_flags), the sampling flags; then sets
// a deterministic one's sampling (one sample, no warm-up, no connection
// warm-up). Throws UsageError.
void validate_single_process(
    Options& options, const std::vector<std::pair<std::string, std::string>>& benchmark_flags);
// The same against `transport`'s entry, which options.transport names.
void validate_single_process(
    const SingleProcessTransport& transport, Options& options,
    const std::vector<std::pair<std::string, std::string>>& benchmark_flags);

}  // namespace collbench::harness
