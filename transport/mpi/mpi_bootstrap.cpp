#include "collbench/transport/mpi_bootstrap.h"

#include <fmt/format.h>

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "collbench/transport/mpi_transport.h"  // check_mpi

namespace collbench {
namespace {

class MpiBootstrap final : public Bootstrap {
 public:
  explicit MpiBootstrap(MPI_Comm comm) : comm_(comm) {
    check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  }

  std::string_view kind() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::vector<std::string> allgather(std::string_view mine) override {
    // Lengths go as 64-bit, and every rank checks the total before the
    // second call, so a contribution too large for MPI's int counts makes
    // every rank throw rather than one throw and the others wait.
    const long long length = static_cast<long long>(mine.size());
    std::vector<long long> lengths(static_cast<std::size_t>(size_));
    check_mpi(MPI_Allgather(&length, 1, MPI_LONG_LONG, lengths.data(), 1, MPI_LONG_LONG, comm_),
              "MPI_Allgather");
    std::vector<int> counts(lengths.size());
    std::vector<int> offsets(lengths.size());
    long long total = 0;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      if (lengths[r] > INT_MAX - total) {
        throw std::runtime_error(fmt::format(
            "MPI bootstrap: the ranks' contributions exceed {} bytes in all (rank {} gives {})",
            INT_MAX, r, lengths[r]));
      }
      counts[r] = static_cast<int>(lengths[r]);
      offsets[r] = static_cast<int>(total);
      total += lengths[r];
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    check_mpi(MPI_Allgatherv(mine.data(), static_cast<int>(length), MPI_BYTE, all.data(),
                             counts.data(), offsets.data(), MPI_BYTE, comm_),
              "MPI_Allgatherv");
    std::vector<std::string> result;
    result.reserve(lengths.size());
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      result.push_back(
          all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(counts[r])));
    }
    return result;
  }

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 0;
};

}  // namespace

std::unique_ptr<Bootstrap> make_mpi_bootstrap(MPI_Comm comm) {
  return std::make_unique<MpiBootstrap>(comm);
}

}  // namespace collbench
