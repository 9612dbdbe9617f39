#include "collbench/transport/transport_factory.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>

#include "collbench/transport/mpi_bootstrap.h"
#include "collbench/transport/mpi_transport.h"
#ifdef COLLBENCH_HAVE_OFI
#include "collbench/transport/ofi_transport.h"
#endif

namespace collbench {

std::vector<std::string> transport_kinds() {
#ifdef COLLBENCH_HAVE_OFI
  return {"mpi", "ofi"};
#else
  return {"mpi"};
#endif
}

std::unique_ptr<InstrumentedTransport> make_transport(const TransportOptions& options) {
  if (options.kind == "mpi") {
    return std::make_unique<InstrumentedTransport>(std::make_unique<MpiTransport>(options.comm));
  }
#ifdef COLLBENCH_HAVE_OFI
  if (options.kind == "ofi") {
    // The bootstrap only serves the constructor's exchange of names.
    const std::unique_ptr<Bootstrap> bootstrap = make_mpi_bootstrap(options.comm);
    return std::make_unique<InstrumentedTransport>(
        std::make_unique<OfiTransport>(*bootstrap, options.ofi_provider));
  }
#else
  if (options.kind == "ofi") {
    throw std::invalid_argument(
        "transport 'ofi': this build has no libfabric support (install libfabric-dev and "
        "reconfigure with -DCOLLBENCH_WITH_OFI=ON); accepted: mpi");
  }
#endif
  throw std::invalid_argument(fmt::format("unknown transport '{}'; accepted: {}", options.kind,
                                          fmt::join(transport_kinds(), ", ")));
}

}  // namespace collbench
