// MPI point-to-point transport: MPI_Isend/MPI_Irecv/MPI_Test* on a
// communicator duplicated from the one given, so that collbench's traffic can
// never match anyone else's. Every MPI return code is checked and turned
// into an exception naming the call, the peer and the tag. A bounded wait
// (InstrumentedTransport's timeout) polls MPI_Testall: MPI_Waitall cannot be
// bounded.
#pragma once

#include <fmt/format.h>
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collbench/transport/transport.h"

namespace collbench {

class MpiTransport final : public Transport {
 public:
  // MPI counts are int: a message larger than this goes as one element of a
  // derived datatype (whole blocks of this size, then the rest).
  static constexpr std::size_t kLargestPlainMessage = INT32_MAX;

  // Duplicates `comm`; MPI must be initialized and stay so while this lives.
  // `largest_plain_message` below the default is for tests, which take the
  // derived-datatype path with small messages.
  explicit MpiTransport(MPI_Comm comm = MPI_COMM_WORLD,
                        std::size_t largest_plain_message = kLargestPlainMessage);
  ~MpiTransport() override;

  std::string_view kind() const override { return "mpi"; }
  RequestId isend(std::span<const std::byte> data, int peer, int tag) override;
  RequestId irecv(std::span<std::byte> data, int peer, int tag) override;
  void wait(RequestId request) override;
  bool test(RequestId request) override;
  void wait_all(std::span<const RequestId> requests) override;
  // Polls MPI_Testall (one progress call per poll, whatever the number of
  // requests), reading the clock every 256 polls, as MPI's bounded wait did
  // before the timeout became a decorator. The default, MPI_Test on each
  // request in turn, made the ring allreduce of 16 MiB at 2 ranks 10-15%
  // slower than before in two interleaved runs (an A/A control of the same
  // binary: within 5-8%); with MPI_Testall every case is within the A/A
  // spread (collbench, ring and tree at 8 B, 64 KiB, 16 MiB, on a shared
  // 2-core machine under load).
  bool wait_until(std::span<const RequestId> requests, std::span<bool> done,
                  Clock::time_point deadline) override;
  void barrier() override;

  // The duplicated communicator: the `mpi` algorithm calls MPI_Allreduce on it.
  MPI_Comm comm() const { return comm_; }

 private:
  RequestId acquire();
  void release(RequestId request);

  // The datatype and count a message of `bytes` goes as; *derived is set
  // when the type was made for it (free it once posted).
  MPI_Datatype message_type(std::size_t bytes, int* count, bool* derived) const;

  const std::size_t largest_plain_message_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::vector<MPI_Request> requests_;
  std::vector<RequestId> free_;
  std::vector<MPI_Request> scratch_;  // wait_all's gathered requests
};

// Throws std::runtime_error "MPI_Xxx failed: <error string> (rc=N, <context>)".
[[noreturn]] void throw_mpi_error(int rc, const char* call, std::string_view context);

// Checks an MPI return code. The context is a format string and its
// arguments, formatted only when the call failed: a check in a timed region
// costs one comparison and never allocates.
inline void check_mpi(int rc, const char* call) {
  if (rc != MPI_SUCCESS) [[unlikely]]
    throw_mpi_error(rc, call, {});
}
template <typename... Args>
void check_mpi(int rc, const char* call, fmt::format_string<Args...> context, Args&&... args) {
  if (rc != MPI_SUCCESS) [[unlikely]] {
    throw_mpi_error(rc, call, fmt::format(context, std::forward<Args>(args)...));
  }
}

}  // namespace collbench
