#include "collbench/transport/mpi_transport.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <stdexcept>

namespace collbench {
namespace {

int comm_rank(MPI_Comm comm) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  return rank;
}

int comm_size(MPI_Comm comm) {
  int size = 0;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  return size;
}

}  // namespace

void throw_mpi_error(int rc, const char* call, std::string_view context) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw std::runtime_error(fmt::format("{} failed: {} (rc={}{}{})", call, text, rc,
                                       context.empty() ? "" : ", ", context));
}

MpiTransport::MpiTransport(MPI_Comm comm, std::size_t largest_plain_message)
    : Transport(comm_rank(comm), comm_size(comm)),
      largest_plain_message_(
          std::clamp<std::size_t>(largest_plain_message, 1, kLargestPlainMessage)) {
  check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
  // Errors come back as return codes we turn into exceptions, instead of
  // MPI's default of aborting the whole job without saying where.
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  requests_.reserve(64);
  free_.reserve(64);
  scratch_.reserve(64);
}

MpiTransport::~MpiTransport() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) {
    for (std::size_t i = 0; i < requests_.size(); ++i) {
      if (requests_[i] != MPI_REQUEST_NULL) {
        MPI_Cancel(&requests_[i]);
        MPI_Request_free(&requests_[i]);
      }
    }
    MPI_Comm_free(&comm_);
  }
}

RequestId MpiTransport::acquire() {
  RequestId id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<RequestId>(requests_.size());
    requests_.push_back(MPI_REQUEST_NULL);
    free_.reserve(requests_.capacity());
    scratch_.reserve(requests_.capacity());
  }
  return id;
}

void MpiTransport::release(RequestId request) {
  requests_[request] = MPI_REQUEST_NULL;
  free_.push_back(request);
}

MPI_Datatype MpiTransport::message_type(std::size_t bytes, int* count, bool* derived) const {
  *derived = bytes > largest_plain_message_;
  if (!*derived) {
    *count = static_cast<int>(bytes);
    return MPI_BYTE;
  }
  // One element of {blocks × block, rest bytes}: the same byte signature as
  // `bytes` MPI_BYTEs, so either side may use either.
  const std::size_t block_bytes = largest_plain_message_;
  const std::size_t blocks = bytes / block_bytes;
  const std::size_t rest = bytes % block_bytes;
  if (blocks > kLargestPlainMessage) {
    throw std::invalid_argument(fmt::format("a message of {} bytes is too large for MPI", bytes));
  }
  MPI_Datatype block = MPI_DATATYPE_NULL;
  check_mpi(MPI_Type_contiguous(static_cast<int>(block_bytes), MPI_BYTE, &block),
            "MPI_Type_contiguous");
  const std::array<int, 2> lengths = {static_cast<int>(blocks), static_cast<int>(rest)};
  const std::array<MPI_Aint, 2> displacements = {0, static_cast<MPI_Aint>(blocks * block_bytes)};
  const std::array<MPI_Datatype, 2> types = {block, MPI_BYTE};
  MPI_Datatype message = MPI_DATATYPE_NULL;
  check_mpi(MPI_Type_create_struct(rest > 0 ? 2 : 1, lengths.data(), displacements.data(),
                                   types.data(), &message),
            "MPI_Type_create_struct");
  check_mpi(MPI_Type_commit(&message), "MPI_Type_commit");
  // Types built from it keep what they need.
  check_mpi(MPI_Type_free(&block), "MPI_Type_free");
  *count = 1;
  return message;
}

RequestId MpiTransport::isend(std::span<const std::byte> data, int peer, int tag) {
  check_peer_and_tag(peer, tag);
  int count = 0;
  bool derived = false;
  MPI_Datatype type = message_type(data.size(), &count, &derived);
  const RequestId id = acquire();
  check_mpi(MPI_Isend(data.data(), count, type, peer, tag, comm_, &requests_[id]), "MPI_Isend",
            "peer {}, tag {}, {} bytes", peer, tag, data.size());
  // A pending operation keeps the type it was posted with.
  if (derived) check_mpi(MPI_Type_free(&type), "MPI_Type_free");
  return id;
}

RequestId MpiTransport::irecv(std::span<std::byte> data, int peer, int tag) {
  check_peer_and_tag(peer, tag);
  int count = 0;
  bool derived = false;
  MPI_Datatype type = message_type(data.size(), &count, &derived);
  const RequestId id = acquire();
  check_mpi(MPI_Irecv(data.data(), count, type, peer, tag, comm_, &requests_[id]), "MPI_Irecv",
            "peer {}, tag {}, {} bytes", peer, tag, data.size());
  if (derived) check_mpi(MPI_Type_free(&type), "MPI_Type_free");
  return id;
}

void MpiTransport::wait(RequestId request) { wait_all(std::span<const RequestId>(&request, 1)); }

bool MpiTransport::test(RequestId request) {
  int done = 0;
  check_mpi(MPI_Test(&requests_[request], &done, MPI_STATUS_IGNORE), "MPI_Test", "rank {}",
            this->rank());
  if (done) release(request);
  return done != 0;
}

void MpiTransport::wait_all(std::span<const RequestId> requests) {
  scratch_.clear();
  for (RequestId id : requests) scratch_.push_back(requests_[id]);
  const int count = static_cast<int>(scratch_.size());
  check_mpi(MPI_Waitall(count, scratch_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall",
            "rank {}, {} requests", this->rank(), count);
  for (RequestId id : requests) release(id);
}

bool MpiTransport::wait_until(std::span<const RequestId> requests, std::span<bool> done,
                              Clock::time_point deadline) {
  scratch_.clear();
  for (RequestId id : requests) scratch_.push_back(requests_[id]);
  const int count = static_cast<int>(scratch_.size());
  int all_done = 0;
  for (std::uint64_t polls = 0;; ++polls) {
    check_mpi(MPI_Testall(count, scratch_.data(), &all_done, MPI_STATUSES_IGNORE), "MPI_Testall",
              "rank {}, {} requests", this->rank(), count);
    if (all_done) break;
    if (yield_while_waiting() && polls >= kPollsBeforeYield) sched_yield();
    // MPI_Testall completes none of the requests unless it completes all.
    if ((polls & 255) == 0 && Clock::now() > deadline) return false;
  }
  for (RequestId id : requests) release(id);
  std::fill(done.begin(), done.end(), true);
  return true;
}

void MpiTransport::barrier() { check_mpi(MPI_Barrier(comm_), "MPI_Barrier"); }

}  // namespace collbench
