// The transport interface: what every algorithm sees of the network.
//
// As in gloo's transport/, algorithms know only ranks and byte spans:
// two-sided, tagged, non-blocking isend/irecv, and waits. Implementations are
// MPI point-to-point (mpi_transport.h), libfabric (ofi_transport.h) and an
// in-process one (inproc_transport.h) whose ranks are threads, for tests.
//
// Matching follows MPI: a receive matches the oldest unmatched send from the
// same peer with the same tag, so messages between one pair with one tag
// arrive in the order they were posted. Zero-length messages are legal.
//
// Requests are small integer handles into a pool owned by the transport; the
// pool grows only when more requests are outstanding than ever before, so a
// collective run a second time allocates nothing.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collbench/core/dtype.h"

namespace collbench {

using RequestId = std::uint32_t;

// Largest tag an algorithm may use (MPI guarantees at least 32767).
inline constexpr int kMaxTag = 32767;

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

// Thrown when a wait exceeds the transport's timeout; the message names the
// peers and tags still pending.
class TimeoutError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Empty polls after which a waiting rank yields its core between polls:
// with more ranks than cores (the tests run 5 ranks on 2 cores) spinning
// starves the peer it waits for until the scheduler's time slice ends. On
// this shared 2-core machine shm's 8-byte ping-pong took 3 us yielding
// after 32 empty polls, 50 us spinning 50 us first, and 0.5 to 260 us
// never yielding, depending on the other load; on a dedicated core
// sched_yield returns at once.
inline constexpr unsigned kPollsBeforeYield = 32;

class Transport {
 public:
  Transport(int rank, int size)
      : rank_(rank),
        size_(size),
        contacted_(static_cast<std::size_t>(size > 0 ? size : 0), false) {}
  virtual ~Transport() = default;
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // "mpi", "inproc" or "ofi": the CSV's transport column.
  virtual std::string_view kind() const = 0;
  // libfabric provider name ("tcp;ofi_rxm", "shm", ...); empty otherwise.
  virtual std::string provider() const { return {}; }

  virtual RequestId isend(std::span<const std::byte> data, int peer, int tag) = 0;
  virtual RequestId irecv(std::span<std::byte> data, int peer, int tag) = 0;
  // Blocks until the request completes and returns its handle to the pool.
  virtual void wait(RequestId request) = 0;
  // Does not block: drives progress once and says whether the request has
  // completed; when it has, its handle is back in the pool (as MPI_Test),
  // and an error it ended with is thrown. No timeout applies.
  virtual bool test(RequestId request) = 0;
  virtual void wait_all(std::span<const RequestId> requests) = 0;
  // Synchronizes all ranks of this transport.
  virtual void barrier() = 0;

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

  // Memory-registration hook: algorithms register every buffer they will
  // send from or receive into when they are built. MPI and in-process ignore
  // it; libfabric providers that require FI_MR_LOCAL (verbs) need it.
  virtual void register_memory(std::span<std::byte> region) { (void)region; }
  virtual void deregister_memory(std::span<std::byte> region) { (void)region; }

  // Whether a wait that polls yields its core after kPollsBeforeYield empty
  // polls. The train family sets it while its communication thread shares
  // a rank's core with the compute thread, which spinning would halve;
  // libfabric's waits always yield (they poll to make progress).
  void set_yield_while_waiting(bool yield) { yield_while_waiting_ = yield; }
  bool yield_while_waiting() const { return yield_while_waiting_; }

  // Bound on every blocking wait; zero means wait forever.
  void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  // Called by a wait that timed out, at the wait, before it throws the
  // TimeoutError it is given. Why at the wait: the operations still pending
  // write into their callers' buffers whenever the library makes progress,
  // and unwinding frees those buffers; a handler that reports over MPI and
  // ends the job (the harness's) must run while they are alive. Without a
  // handler, or if it returns, the wait throws.
  using TimeoutHandler = std::function<void(const TimeoutError&)>;
  void set_timeout_handler(TimeoutHandler handler) { timeout_handler_ = std::move(handler); }

  // Payload bytes and messages this rank has sent since the last reset: the
  // harness reports what an algorithm really puts on the wire.
  std::uint64_t bytes_sent() const { return bytes_sent_; }
  std::uint64_t messages_sent() const { return messages_sent_; }
  void reset_counters() {
    bytes_sent_ = 0;
    messages_sent_ = 0;
  }
  // The node each rank runs on, by rank (small ids; equal = one node): what
  // the hierarchical algorithms group ranks by. The harness sets it from
  // the ranks' hostnames; until then every rank is a node of its own.
  // Throws std::invalid_argument unless there is one entry per rank.
  void set_nodes(std::vector<int> node_of_rank);
  int node_of(int rank) const {
    return nodes_.empty() ? rank : nodes_.at(static_cast<std::size_t>(rank));
  }
  // The first tag of the next slot (see kFirstSlotTag); slots wrap after
  // kTagSlots, by when the slot's earlier owner has long finished. Virtual
  // for views of a transport (a subgroup's), whose algorithms must take
  // their slots from the transport they share.
  virtual int take_tag_slot() {
    const auto slot = static_cast<int>(slots_taken_++ % kTagSlots);
    return kFirstSlotTag + slot * kTagsPerSlot;
  }
  // Distinct peers this rank has posted a send to or a receive from since
  // it was built (never reset): the harness checks that its connection
  // warm-up reached them all before timing, so that no first contact, where
  // transports set up connections, lands in a timed call.
  std::uint64_t peers_contacted() const { return peers_contacted_; }

 protected:
  void count_send(std::size_t bytes) {
    bytes_sent_ += bytes;
    ++messages_sent_;
  }
  // Every isend and irecv starts here. Throws std::invalid_argument unless
  // 0 <= peer < size() and 0 <= tag <= kMaxTag; counts a peer not addressed
  // before (peers_contacted).
  void check_and_note_peer(int peer, int tag);
  // Every timed-out wait ends here: the handler, then the throw.
  [[noreturn]] void timed_out(const TimeoutError& error) const;
  // For transports whose waits throw TimeoutError below the public call:
  // runs the wait and sends its timeout through timed_out, above the frames
  // that threw (which may hold a lock).
  template <typename Wait>
  void routing_timeouts(Wait&& wait) const {
    try {
      std::forward<Wait>(wait)();
    } catch (const TimeoutError& error) {
      timed_out(error);
    }
  }

 private:
  int rank_;
  int size_;
  bool yield_while_waiting_ = false;
  std::chrono::milliseconds timeout_{0};
  TimeoutHandler timeout_handler_;
  std::uint64_t bytes_sent_ = 0;
  std::uint64_t messages_sent_ = 0;
  std::vector<bool> contacted_;  // by peer
  std::uint64_t peers_contacted_ = 0;
  std::uint64_t slots_taken_ = 0;
  std::vector<int> nodes_;  // empty: one node per rank
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
