// Builds the transport named on the command line. MPI must be initialized:
// it is the launcher for every transport, and the out-of-band channel that
// libfabric uses to exchange endpoint names.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/transport/instrumented_transport.h"

namespace collbench {

struct TransportOptions {
  std::string kind = "mpi";  // "mpi" or "ofi"
  // libfabric provider ("tcp", "shm", "sockets", "verbs", ...); empty: FI_PROVIDER or the default.
  std::string ofi_provider;
  MPI_Comm comm = MPI_COMM_WORLD;
};

// Transport kinds this build offers ("mpi", and "ofi" when built with libfabric).
std::vector<std::string> transport_kinds();

// Throws std::invalid_argument naming the accepted kinds for an unknown kind,
// std::runtime_error when the transport cannot be opened (e.g. no such provider).
// The transport comes instrumented: counters, and no timeout until one is set.
std::unique_ptr<InstrumentedTransport> make_transport(const TransportOptions& options);

}  // namespace collbench
