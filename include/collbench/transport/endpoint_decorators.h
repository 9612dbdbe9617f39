// Decorators of an Endpoint: what the harness measures and bounds around
// any transport's point-to-point operations, written once instead of in
// every transport. InstrumentedTransport (instrumented_transport.h) stacks
// them over a transport: counters, then the timeout, then the transport.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "collbench/transport/endpoint.h"

namespace collbench {

// Payload bytes and messages sent, and the distinct peers addressed.
class CountingEndpoint final : public Endpoint {
 public:
  // `peers`: the size of the communicator whose ranks the peers are.
  CountingEndpoint(Endpoint& inner, int peers);

  RequestId isend(std::span<const std::byte> data, int peer, int tag) override;
  RequestId irecv(std::span<std::byte> data, int peer, int tag) override;
  void wait(RequestId request) override { inner_.wait(request); }
  bool test(RequestId request) override { return inner_.test(request); }
  void wait_all(std::span<const RequestId> requests) override { inner_.wait_all(requests); }
  bool wait_until(std::span<const RequestId> requests, std::span<bool> done,
                  Clock::time_point deadline) override {
    return inner_.wait_until(requests, done, deadline);
  }
  void register_memory(std::span<std::byte> region) override { inner_.register_memory(region); }
  void deregister_memory(std::span<std::byte> region) override { inner_.deregister_memory(region); }
  void set_yield_while_waiting(bool yield) override {
    Endpoint::set_yield_while_waiting(yield);
    inner_.set_yield_while_waiting(yield);
  }

  // Payload bytes and messages this rank has sent since the last reset: the
  // harness reports what an algorithm really puts on the wire.
  std::uint64_t bytes_sent() const { return bytes_sent_; }
  std::uint64_t messages_sent() const { return messages_sent_; }
  void reset_counters() {
    bytes_sent_ = 0;
    messages_sent_ = 0;
  }
  // Distinct peers this rank has posted a send to or a receive from since
  // it was built (never reset): the harness checks that its connection
  // warm-up reached them all before timing, so that no first contact, where
  // transports set up connections, lands in a timed call. A post the inner
  // endpoint refused (a bad peer) is not counted.
  std::uint64_t peers_contacted() const { return peers_contacted_; }

 private:
  void note_peer(int peer);

  Endpoint& inner_;
  std::uint64_t bytes_sent_ = 0;
  std::uint64_t messages_sent_ = 0;
  std::vector<bool> contacted_;  // by peer
  std::uint64_t peers_contacted_ = 0;
};

// Bounds every wait and wait_all by a timeout (zero: none, the inner
// endpoint's own unbounded wait). A bounded wait is the inner endpoint's
// wait_until, which polls test() unless the endpoint can sleep until a
// completion; the timeout then names the peers and tags still pending.
// test() and the barrier are not bounded here.
class TimeoutEndpoint final : public Endpoint {
 public:
  // `rank`: the caller's, for the timeout's message.
  TimeoutEndpoint(Endpoint& inner, int rank) : inner_(inner), rank_(rank) {}

  RequestId isend(std::span<const std::byte> data, int peer, int tag) override;
  RequestId irecv(std::span<std::byte> data, int peer, int tag) override;
  void wait(RequestId request) override { wait_all(std::span<const RequestId>(&request, 1)); }
  bool test(RequestId request) override { return inner_.test(request); }
  void wait_all(std::span<const RequestId> requests) override;
  bool wait_until(std::span<const RequestId> requests, std::span<bool> done,
                  Clock::time_point deadline) override {
    return inner_.wait_until(requests, done, deadline);
  }
  void register_memory(std::span<std::byte> region) override { inner_.register_memory(region); }
  void deregister_memory(std::span<std::byte> region) override { inner_.deregister_memory(region); }
  void set_yield_while_waiting(bool yield) override {
    Endpoint::set_yield_while_waiting(yield);
    inner_.set_yield_while_waiting(yield);
  }

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

 private:
  struct Posted {
    int peer = -1;
    int tag = -1;
    bool is_send = false;
  };
  void note(RequestId request, int peer, int tag, bool is_send);
  [[noreturn]] void timed_out(std::span<const RequestId> requests,
                              std::span<const bool> done) const;
  [[noreturn]] void timed_out(const TimeoutError& error) const;

  Endpoint& inner_;
  const int rank_;
  std::chrono::milliseconds timeout_{0};
  TimeoutHandler timeout_handler_;
  std::vector<Posted> posted_;  // by request, for the timeout's message
  // wait_all's completion flags; grown, never shrunk, so that a bounded
  // wait in a timed loop allocates nothing.
  std::unique_ptr<bool[]> done_;
  std::size_t done_capacity_ = 0;
};

}  // namespace collbench
