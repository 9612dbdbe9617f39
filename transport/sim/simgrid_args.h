// The --simgrid-arg values of a run, tried before its engine is built.
// Internal to the sim transport.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "collbench/transport/sim_transport.h"

namespace collbench::sim {

// Throws std::invalid_argument naming the arguments of params.simgrid_args
// that SimGrid dies on (after `ours`, the transport's own), and how; see
// simgrid_args.cpp.
void probe_simgrid_args(const std::vector<std::string>& ours, const SimParams& params);

// "--simgrid-arg=A --simgrid-arg=B", for a message.
std::string named_simgrid_args(std::span<const std::string> args);

}  // namespace collbench::sim
