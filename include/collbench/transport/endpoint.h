// The point-to-point half of a transport: what moves bytes.
//
// As in gloo's transport/, algorithms know only ranks and byte spans:
// two-sided, tagged, non-blocking isend/irecv, and waits.
//
// Matching follows MPI: a receive matches the oldest unmatched send from the
// same peer with the same tag, so messages between one pair with one tag
// arrive in the order they were posted. Zero-length messages are legal.
//
// Requests are small integer handles into a pool owned by the endpoint; the
// pool grows only when more requests are outstanding than ever before, so a
// collective run a second time allocates nothing.
//
// An endpoint itself counts nothing and waits without bound: counters and
// timeouts are decorators that wrap an endpoint (counting_endpoint.h,
// timeout_endpoint.h), assembled by InstrumentedTransport.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>

namespace collbench {

using RequestId = std::uint32_t;

// Largest tag an algorithm may use (MPI guarantees at least 32767).
inline constexpr int kMaxTag = 32767;

// Thrown when a wait exceeds its timeout; the message names the peers and
// tags still pending.
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

class Endpoint {
 public:
  using Clock = std::chrono::steady_clock;

  Endpoint() = default;
  virtual ~Endpoint() = default;
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  virtual RequestId isend(std::span<const std::byte> data, int peer, int tag) = 0;
  virtual RequestId irecv(std::span<std::byte> data, int peer, int tag) = 0;
  // Blocks until the request completes and returns its handle to the pool.
  virtual void wait(RequestId request) = 0;
  // Does not block: drives progress once and says whether the request has
  // completed; when it has, its handle is back in the pool (as MPI_Test),
  // and an error it ended with is thrown. No timeout applies.
  virtual bool test(RequestId request) = 0;
  virtual void wait_all(std::span<const RequestId> requests) = 0;

  // A wait bounded by `deadline`, for the timeout decorator. `done` has one
  // entry per request, false on entry; a request whose entry is set on
  // return has completed and its handle is back in the pool. Returns true
  // when all have, false when the deadline passed first (the others stay
  // outstanding). The default polls test(), reading the clock every 256
  // polls; endpoints that can sleep until a completion override it.
  virtual bool wait_until(std::span<const RequestId> requests, std::span<bool> done,
                          Clock::time_point deadline);

  // Memory-registration hook: algorithms register every buffer they will
  // send from or receive into when they are built. MPI and in-process ignore
  // it; libfabric providers that require FI_MR_LOCAL (verbs) need it.
  virtual void register_memory(std::span<std::byte> region) { (void)region; }
  virtual void deregister_memory(std::span<std::byte> region) { (void)region; }

  // Whether a wait that polls yields its core after kPollsBeforeYield empty
  // polls. The train family sets it while its communication thread shares
  // a rank's core with the compute thread, which spinning would halve;
  // libfabric's waits always yield (they poll to make progress). Decorators
  // pass it on to what they wrap, where the polling happens.
  virtual void set_yield_while_waiting(bool yield) { yield_while_waiting_ = yield; }
  bool yield_while_waiting() const { return yield_while_waiting_; }

 private:
  bool yield_while_waiting_ = false;
};

}  // namespace collbench
