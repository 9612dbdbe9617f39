// The group half of a transport: who the ranks are and what they share.
//
// Rank and size, where ranks run (nodes and, where the platform has them,
// topology coordinates), a barrier, the tag slots algorithms take, and the
// hook every reduction and local copy of an algorithm passes through.
// Sub-communicators are views of one (detail::SubgroupTransport). The bytes
// themselves move through an Endpoint (endpoint.h); a Transport
// (transport.h) is both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/core/dtype.h"
#include "collbench/transport/endpoint.h"

namespace collbench {

// The collectives' tags come in slots (gloo's): every algorithm object takes
// the next slot of kTagsPerSlot consecutive tags when it is built, so that no
// two algorithm objects share a tag and a late message of one can never match
// a receive of another. Every rank builds the same algorithms in the same
// order on its transport, so the slots agree without a message. Tags below
// kFirstSlotTag are for point-to-point users (the harness, tests).
inline constexpr int kFirstSlotTag = 1024;
// The tag of a subgroup's barrier messages (SubgroupTransport::barrier),
// below the slots so that no algorithm's message can match one.
inline constexpr int kSubgroupBarrierTag = kFirstSlotTag - 1;
inline constexpr int kTagsPerSlot = 8;
inline constexpr int kTagSlots = (kMaxTag + 1 - kFirstSlotTag) / kTagsPerSlot;

class Communicator {
 public:
  Communicator(int rank, int size) : rank_(rank), size_(size) {}
  virtual ~Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // "mpi", "inproc" or "ofi": the CSV's transport column.
  virtual std::string_view kind() const = 0;
  // libfabric provider name ("tcp;ofi_rxm", "shm", ...); empty otherwise.
  virtual std::string provider() const { return {}; }

  // Synchronizes all ranks of this communicator.
  virtual void barrier() = 0;

  // The node each rank runs on, by rank (small ids; equal = one node): what
  // the hierarchical algorithms group ranks by. The harness sets it from
  // the ranks' hostnames; until then every rank is a node of its own.
  // Throws std::invalid_argument unless there is one entry per rank.
  void set_nodes(std::vector<int> node_of_rank);
  int node_of(int rank) const {
    return nodes_.empty() ? rank : nodes_.at(static_cast<std::size_t>(rank));
  }
  // Each rank's coordinates in the platform's topology (a torus position,
  // a dragonfly's group/router/port), by rank; empty when unknown, which is
  // the default. Throws std::invalid_argument unless there is one entry per
  // rank, all of one length.
  void set_coordinates(std::vector<std::vector<int>> coordinates_of_rank);
  std::span<const int> coordinates_of(int rank) const;

  // The first tag of the next slot (see kFirstSlotTag); slots wrap after
  // kTagSlots, by when the slot's earlier owner has long finished. Virtual
  // for views of a transport (a subgroup's), whose algorithms must take
  // their slots from the transport they share.
  virtual int take_tag_slot() {
    const auto slot = static_cast<int>(slots_taken_++ % kTagSlots);
    return kFirstSlotTag + slot * kTagsPerSlot;
  }

  // Local work: every reduction and every copy between an algorithm's
  // buffers passes through these, so that a simulated transport can charge
  // it as time (n·γ, a copy's memory time) beside or instead of doing it;
  // the real transports do it directly (the defaults: collbench's kernels,
  // memcpy). Views of a transport (a subgroup's) hand it to their parent.
  // dst = op(dst, src), `count` elements.
  virtual void reduce(DType dtype, ReduceOp op, void* dst, const void* src, std::size_t count);
  // dst = op(first, second), operands in this order.
  virtual void reduce_into(DType dtype, ReduceOp op, void* dst, const void* first,
                           const void* second, std::size_t count);
  // avg's division of `count` elements by `ranks`.
  virtual void scale_for_average(DType dtype, void* data, std::size_t count, int ranks);
  // `bytes` from src to dst (they may overlap).
  virtual void copy(void* dst, const void* src, std::size_t bytes);

  // Throws std::invalid_argument unless 0 <= peer < size() and
  // 0 <= tag <= kMaxTag: every isend and irecv starts here.
  void check_peer_and_tag(int peer, int tag) const;

 protected:
  // For a view that presents the same ranks as `other` (a decorator).
  void copy_placement_from(const Communicator& other) {
    nodes_ = other.nodes_;
    coordinates_ = other.coordinates_;
  }

 private:
  int rank_;
  int size_;
  std::uint64_t slots_taken_ = 0;
  std::vector<int> nodes_;                     // empty: one node per rank
  std::vector<std::vector<int>> coordinates_;  // empty: unknown
};

}  // namespace collbench
