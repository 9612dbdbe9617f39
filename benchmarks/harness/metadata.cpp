// Run metadata: hosts, versions, run id; see metadata.h.
#include "metadata.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>

#include "collbench/transport/mpi_transport.h"
#ifdef COLLBENCH_HAVE_OFI
#include "collbench/transport/ofi_transport.h"
#endif

namespace collbench::harness {

std::string RunMetadata::map_by() const {
  const auto placed = [this](auto node_of) {
    for (std::size_t rank = 0; rank < rank_nodes.size(); ++rank) {
      if (rank_nodes[rank] != node_of(static_cast<int>(rank))) return false;
    }
    return true;
  };
  const bool even = ranks == nodes * ranks_per_node;
  if (even && placed([this](int rank) { return rank / ranks_per_node; })) return "slot";
  if (even && placed([this](int rank) { return rank % nodes; })) return "node";
  return "other";
}

std::string RunMetadata::placement(int rank_a, int rank_b) const {
  return rank_hosts.at(static_cast<std::size_t>(rank_a)) ==
                 rank_hosts.at(static_cast<std::size_t>(rank_b))
             ? "intra"
             : "inter";
}

std::string RunMetadata::chain_placement() const {
  const int count = static_cast<int>(rank_hosts.size());
  for (int rank = 0; rank < count; ++rank) {
    if (placement(rank, (rank + 1) % count) == "inter") return "inter";
  }
  return "intra";
}

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text.data();
}

std::string make_run_id() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::array<char, 32> stamp{};
  std::strftime(stamp.data(), stamp.size(), "%Y%m%dT%H%M%SZ", &utc);
  std::random_device entropy;
  return fmt::format("{}-{:06x}", stamp.data(), entropy() & 0xFFFFFFu);
}

std::string open_mpi_transport_selection() {
  std::string selection;
  for (const char* name : {"pml", "btl", "mtl", "mtl_ofi_provider_include"}) {
    const char* value = std::getenv(fmt::format("OMPI_MCA_{}", name).c_str());
    if (value == nullptr || *value == '\0') continue;
    selection += fmt::format("{}{}={}", selection.empty() ? "" : ";", name, value);
  }
  return selection;
}

std::uint64_t node_available_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream fields(line.substr(13));
      std::uint64_t kibibytes = 0;
      fields >> kibibytes;
      return kibibytes * 1024;
    }
  }
  return 0;
}

namespace {

// Nodes, ranks per node and this rank's node mates, from every rank's host.
void place_ranks(RunMetadata& metadata, std::vector<std::string> rank_hosts, int rank) {
  std::vector<std::string> distinct;
  std::vector<int> per_host;
  for (std::string& host : rank_hosts) {
    auto found = std::find(distinct.begin(), distinct.end(), host);
    if (found == distinct.end()) {
      distinct.push_back(host);
      per_host.push_back(1);
    } else {
      ++per_host[static_cast<std::size_t>(found - distinct.begin())];
    }
    metadata.rank_nodes.push_back(
        static_cast<int>(std::find(distinct.begin(), distinct.end(), host) - distinct.begin()));
    metadata.rank_hosts.push_back(std::move(host));
  }
  metadata.ranks = static_cast<int>(metadata.rank_hosts.size());
  metadata.nodes = static_cast<int>(distinct.size());
  metadata.ranks_per_node = *std::max_element(per_host.begin(), per_host.end());
  const auto mine = std::find(distinct.begin(), distinct.end(),
                              metadata.rank_hosts[static_cast<std::size_t>(rank)]);
  metadata.ranks_on_my_node = per_host[static_cast<std::size_t>(mine - distinct.begin())];
  for (const std::string& host : distinct) {
    metadata.hosts += (metadata.hosts.empty() ? "" : ";") + host;
  }
}

std::string host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) name = {};
  return name.data();
}

}  // namespace

RunMetadata gather_metadata(MPI_Comm comm, const std::string& requested_run_id, bool uses_ofi) {
  RunMetadata metadata;
  int rank = 0;
  int ranks = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &ranks), "MPI_Comm_size");
  metadata.git_revision = build_git_revision();

  // Run id and launch: rank 0's, so that all rows of all ranks' view agree.
  const auto rank_zeros = [&](const std::string& text, const char* what) {
    std::array<char, 128> buffer{};
    if (rank == 0) text.copy(buffer.data(), buffer.size() - 1);
    check_mpi(MPI_Bcast(buffer.data(), static_cast<int>(buffer.size()), MPI_CHAR, 0, comm),
              "MPI_Bcast", "{}", what);
    return std::string(buffer.data());
  };
  metadata.run_id =
      rank_zeros(requested_run_id.empty() ? make_run_id() : requested_run_id, "run id");
  metadata.launch = rank_zeros(make_run_id(), "launch");

  // Hostnames of every rank: nodes, ranks per node and p2p placement.
  std::array<char, MPI_MAX_PROCESSOR_NAME> name{};
  int length = 0;
  check_mpi(MPI_Get_processor_name(name.data(), &length), "MPI_Get_processor_name");
  std::vector<char> all_names(static_cast<std::size_t>(ranks) * name.size());
  check_mpi(MPI_Allgather(name.data(), static_cast<int>(name.size()), MPI_CHAR, all_names.data(),
                          static_cast<int>(name.size()), MPI_CHAR, comm),
            "MPI_Allgather", "hostnames");
  std::vector<std::string> rank_hosts;
  for (int r = 0; r < ranks; ++r) {
    rank_hosts.emplace_back(all_names.data() + static_cast<std::size_t>(r) * name.size());
  }
  place_ranks(metadata, std::move(rank_hosts), rank);

  std::array<char, MPI_MAX_LIBRARY_VERSION_STRING> library{};
  check_mpi(MPI_Get_library_version(library.data(), &length), "MPI_Get_library_version");
  // Open MPI counts the terminating NUL in `length`; the text ends at the
  // first NUL or line break either way.
  metadata.mpi_library = library.data();
  metadata.mpi_library = metadata.mpi_library.substr(0, metadata.mpi_library.find_first_of("\r\n"));
  while (!metadata.mpi_library.empty() &&
         (metadata.mpi_library.back() == ' ' || metadata.mpi_library.back() == ',')) {
    metadata.mpi_library.pop_back();
  }

  metadata.mpi_mca = open_mpi_transport_selection();

#ifdef COLLBENCH_HAVE_OFI
  if (uses_ofi) metadata.libfabric_version = ofi_library_version();
#else
  (void)uses_ofi;
#endif
  return metadata;
}

RunMetadata bootstrap_metadata(Bootstrap& bootstrap, const std::string& requested_run_id) {
  RunMetadata metadata;
  metadata.git_revision = build_git_revision();
  const std::string id = requested_run_id.empty() ? make_run_id() : requested_run_id;
  metadata.run_id = bootstrap.allgather(id).front();
  metadata.launch = bootstrap.allgather(make_run_id()).front();
  place_ranks(metadata, bootstrap.allgather(host_name()), bootstrap.rank());
#ifdef COLLBENCH_HAVE_OFI
  metadata.libfabric_version = ofi_library_version();
#endif
  return metadata;
}

RunMetadata local_metadata(int ranks, const std::string& requested_run_id) {
  RunMetadata metadata;
  metadata.git_revision = build_git_revision();
  metadata.run_id = requested_run_id.empty() ? make_run_id() : requested_run_id;
  metadata.launch = make_run_id();
  metadata.hosts = host_name();
  metadata.ranks = ranks;
  metadata.nodes = 1;
  metadata.ranks_per_node = ranks;
  metadata.ranks_on_my_node = ranks;
  metadata.rank_hosts.assign(static_cast<std::size_t>(ranks), metadata.hosts);
  metadata.rank_nodes.assign(static_cast<std::size_t>(ranks), 0);
  return metadata;
}

}  // namespace collbench::harness
