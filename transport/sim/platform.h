// The simulated platform of a SimParams, built into the process's engine.
// Internal to the sim transport.
#pragma once

#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "collbench/transport/sim_transport.h"

namespace collbench::sim {

struct Platform {
  // The host of each rank slot (ppn consecutive slots per node) and its node.
  std::vector<simgrid::s4u::Host*> slots;
  std::vector<int> node_of_slot;
  int nodes = 0;
  // A torus's: each node's coordinates as SimGrid places it (dimension 0
  // fastest), what Communicator::coordinates_of gives; empty otherwise.
  std::vector<std::vector<int>> coordinates_of_node;
  EndToEndLinks links;  // without the overhead
};

// What identifies a platform: a group of the process must have the first
// one's (SimGrid seals it at the first run).
std::string platform_key(const SimParams& params);

// Throws std::invalid_argument for a malformed spec, or a rank count that
// does not fit it, before anything is built (an XML file is only looked
// for: its hosts are counted when it is loaded).
void check_platform(const SimParams& params);

// Builds the platform of `params` into the engine (which must exist and not
// have run yet). Throws std::invalid_argument for a malformed spec or a rank
// count that does not fit it.
Platform build_platform(const SimParams& params);

}  // namespace collbench::sim
