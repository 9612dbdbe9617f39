// The transport interface: what every algorithm sees of the network, an
// Endpoint (endpoint.h: bytes, tags, requests) and a Communicator
// (communicator.h: ranks, nodes, barrier, tag slots, local work) in one.
//
// Implementations are MPI point-to-point (mpi_transport.h), libfabric
// (ofi_transport.h) and an in-process one (inproc_transport.h) whose ranks
// are threads, for tests; each implements only the pure virtuals (kind,
// isend, irecv, wait, test, wait_all, barrier) and what its network needs.
// Byte counters and timeouts are decorators (instrumented_transport.h).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collbench/transport/communicator.h"
#include "collbench/transport/endpoint.h"

namespace collbench {

class Transport : public Endpoint, public Communicator {
 public:
  Transport(int rank, int size) : Communicator(rank, size) {}

  // The transport this one decorates, presenting the same ranks (an
  // InstrumentedTransport's or a test's forwarding transport's inner one);
  // itself when it decorates none. Code that needs one kind of transport
  // (the `mpi` algorithm needs MpiTransport's communicator) looks there.
  // A subgroup is not a decoration: it has ranks of its own.
  virtual Transport& unwrapped() { return *this; }

  // A sub-communicator: `members` (ranks of this transport, this one's
  // among them) as a transport of their own, rank i being members[i]; its
  // traffic, local work and tag slots go through this one, which must
  // outlive it (detail::SubgroupTransport). Throws std::invalid_argument
  // when this rank is not a member.
  std::unique_ptr<Transport> subgroup(std::vector<int> members);
};

// Registers a region for the lifetime of the guard.
class MemoryRegistration {
 public:
  MemoryRegistration() = default;
  MemoryRegistration(Transport& transport, std::span<std::byte> region)
      : transport_(&transport), region_(region) {
    if (!region_.empty()) transport_->register_memory(region_);
  }
  ~MemoryRegistration() { reset(); }
  MemoryRegistration(MemoryRegistration&& other) noexcept { *this = std::move(other); }
  MemoryRegistration& operator=(MemoryRegistration&& other) noexcept {
    if (this != &other) {
      reset();
      transport_ = other.transport_;
      region_ = other.region_;
      other.transport_ = nullptr;
    }
    return *this;
  }
  void reset() {
    if (transport_ != nullptr && !region_.empty()) transport_->deregister_memory(region_);
    transport_ = nullptr;
  }

 private:
  Transport* transport_ = nullptr;
  std::span<std::byte> region_;
};

}  // namespace collbench
