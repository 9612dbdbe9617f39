// The run's metadata that every CSV row carries: run id, git revision,
// hosts, nodes, ranks per node, MPI library and libfabric versions, and the
// Open MPI components the job asked for.
//
// Gathered once, collectively, before the first benchmark; rank 0 makes the
// run id and broadcasts it so that every rank (and every row) agrees.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collbench/transport/bootstrap.h"

namespace collbench::harness {

struct RunMetadata {
  std::string run_id;
  // One per start of collbench (one mpirun), made by rank 0 like a run id:
  // run.sh gives every launch of a run the same run_id, and the fit needs to
  // tell the launches apart (a launch's offset is shared by all its rows).
  std::string launch;
  std::string git_revision;
  std::vector<std::string> rank_hosts;  // hostname of every rank, by rank
  std::vector<int> rank_nodes;          // node of every rank: its host's index in `hosts`
  std::string hosts;                    // distinct hostnames, ';'-separated, first-seen order
  int ranks = 0;
  int nodes = 0;
  int ranks_per_node = 0;  // ranks on the most populated host
  int ranks_on_my_node = 0;
  std::string mpi_library;        // first line of MPI_Get_library_version
  std::string libfabric_version;  // fi_version() when the OFI transport is used
  std::string mpi_mca;            // open_mpi_transport_selection() of rank 0
  // --transport sim: the CSV's sim_* columns, as written (empty otherwise).
  struct Simulation {
    std::string platform, network, payload, alpha_us, beta_GBps, gamma_GBps, overhead_us,
        calibration;
  } simulation;

  // How the ranks are placed on the nodes: "slot" (ranks 0..K−1 on the
  // first node, OpenMPI's --map-by slot; also any job of one node, or one
  // rank per node), "node" (round robin, rank r on node r mod N: --map-by
  // node) or "other".
  std::string map_by() const;
  // "intra" when ranks a and b share a host, "inter" otherwise.
  std::string placement(int rank_a, int rank_b) const;
  // The periodic chain of p2p/sendrecv (rank r sends to r+1 mod p): "inter"
  // when any rank's right neighbour is on another host, else "intra". One
  // link that crosses hosts sets the pace of every exchange.
  std::string chain_placement() const;
};

// Collective over `comm`. `requested_run_id` empty: rank 0 makes one.
RunMetadata gather_metadata(MPI_Comm comm, const std::string& requested_run_id, bool uses_ofi);
// A job of `ranks` ranks that all run in this process, on this host, without
// MPI (no MPI library, no MCA selection).
RunMetadata local_metadata(int ranks, const std::string& requested_run_id);
// Collective over the bootstrap's ranks, without MPI (rank 0's run id, every
// rank's host); the libfabric version, the only transport it serves.
RunMetadata bootstrap_metadata(Bootstrap& bootstrap, const std::string& requested_run_id);

// "20250101T120000Z-3f9a1c": UTC time to the second, then 24 random bits so
// that two runs started in the same second differ.
std::string make_run_id();

// Current UTC time as ISO 8601, e.g. "2025-01-01T12:00:00Z".
std::string utc_now_iso8601();

// `git describe --always --dirty` of the source tree when collbench was built.
const char* build_git_revision();

// The Open MPI MCA parameters that choose MPI's point-to-point path (pml,
// btl, mtl, mtl_ofi_provider_include) as this process's environment has them
// (`mpirun --mca NAME VALUE` exports OMPI_MCA_NAME to every rank), e.g.
// "pml=ob1;btl=self,tcp"; empty when none is set. What the job asked for, so
// that rows of one fabric are told from another's; Open MPI does not report
// what it selected.
std::string open_mpi_transport_selection();

// MemAvailable of this node in bytes (/proc/meminfo); 0 when unknown.
std::uint64_t node_available_memory();

}  // namespace collbench::harness
