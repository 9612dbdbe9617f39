// How ranks find each other before any transport exists: the out-of-band
// channel a transport uses to exchange its addresses (libfabric's endpoint
// names) and agree on its settings. MPI is one way (mpi_bootstrap.h); a
// folder every rank can read is another, with no MPI at all.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace collbench {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual std::string_view kind() const = 0;  // "mpi", "file", ...
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Collective over all ranks: every rank passes its bytes (any length, may differ by rank) and
  // gets every rank's, by rank. Throws std::runtime_error (naming what is missing) on
  // failure/timeout.
  virtual std::vector<std::string> allgather(std::string_view mine) = 0;
};

// Every rank writes its contribution to DIR and waits (bounded by `timeout`) for the others'.
//
// Rank R's contribution to the k-th exchange is the file DIR/rank<R>.round<k>,
// written under a temporary name and renamed, so a reader sees it whole or
// not at all. Round 0 is a greeting made by the constructor: each rank draws
// a random number, and the job's identity is a hash of all of them; every
// later file carries that identity, so a file left by another job is told
// apart from this job's. Errors (std::runtime_error, one sentence each):
// DIR missing; DIR holding files of another job (a file of this rank already
// there at start, a file of a rank >= `ranks`, a file declaring another job
// size or another job's identity): "empty DIR or choose another"; ranks that
// did not arrive within `timeout`, named.
//
// Clean-up: each rank removes its file of round k-1 once it has read all of
// round k (everyone has then read round k-1). At destruction ranks other
// than 0 write a farewell file and wait for rank 0 to remove it; rank 0
// waits for every farewell, removes the last round's files and then the
// farewells. A rank's destructor therefore returns only once all of its
// files are gone, and DIR is empty after a job that finished, ready for the
// next one. After an exchange failed, a rank only removes its own files (the
// others may never come); when a rank waits in vain in its destructor it
// leaves its files and says so on stderr, and the next job in DIR will be
// told to empty it.
std::unique_ptr<Bootstrap> make_file_bootstrap(const std::string& dir, int rank, int ranks,
                                               std::chrono::milliseconds timeout);

}  // namespace collbench
