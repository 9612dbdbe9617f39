// A transport with its sends counted and its waits bounded: the decorators
// of endpoint_decorators.h stacked over any transport (counters, then the
// timeout, then the transport), everything else forwarded to it. What the
// harness, the tools and run_in_process hand out; algorithms see only a
// Transport.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <utility>

#include "collbench/transport/endpoint_decorators.h"
#include "collbench/transport/forwarding_transport.h"

namespace collbench {
namespace detail {
// Holds an owned inner transport in a base listed before ForwardingTransport,
// so that it exists when ForwardingTransport is given it, and outlives it.
struct OwnedTransport {
  std::unique_ptr<Transport> owned;
};
}  // namespace detail

class InstrumentedTransport final : private detail::OwnedTransport, public ForwardingTransport {
 public:
  // Decorates `inner`, which must outlive this.
  explicit InstrumentedTransport(Transport& inner)
      : ForwardingTransport(inner, counters_),
        timeouts_(inner, inner.rank()),
        counters_(timeouts_, inner.size()) {}
  // Decorates `inner` and owns it.
  explicit InstrumentedTransport(std::unique_ptr<Transport> inner)
      : detail::OwnedTransport{std::move(inner)},
        ForwardingTransport(*owned, counters_),
        timeouts_(*owned, owned->rank()),
        counters_(timeouts_, owned->size()) {}

  // The counters (CountingEndpoint).
  std::uint64_t bytes_sent() const { return counters_.bytes_sent(); }
  std::uint64_t messages_sent() const { return counters_.messages_sent(); }
  void reset_counters() { counters_.reset_counters(); }
  std::uint64_t peers_contacted() const { return counters_.peers_contacted(); }

  // The timeout (TimeoutEndpoint): zero, the default, waits forever.
  void set_timeout(std::chrono::milliseconds timeout) { timeouts_.set_timeout(timeout); }
  std::chrono::milliseconds timeout() const { return timeouts_.timeout(); }
  void set_timeout_handler(TimeoutEndpoint::TimeoutHandler handler) {
    timeouts_.set_timeout_handler(std::move(handler));
  }

 private:
  TimeoutEndpoint timeouts_;
  CountingEndpoint counters_;  // wraps timeouts_
};

}  // namespace collbench
