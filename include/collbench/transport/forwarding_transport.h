// A transport that hands every call to another: the base of decorators,
// which override the few calls they change. The Communicator's calls go to
// `inner`; the Endpoint's to `endpoint`, which is `inner` itself or a chain
// of endpoint decorators ending there (InstrumentedTransport's counters and
// timeout). Placement (nodes, coordinates) is copied from `inner` when built
// and then the decorator's own, as set_nodes on it says.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "collbench/transport/transport.h"

namespace collbench {

class ForwardingTransport : public Transport {
 public:
  explicit ForwardingTransport(Transport& inner) : ForwardingTransport(inner, inner) {}
  ForwardingTransport(Transport& inner, Endpoint& endpoint)
      : Transport(inner.rank(), inner.size()), inner_(inner), endpoint_(endpoint) {
    copy_placement_from(inner);
  }

  Transport& inner() const { return inner_; }
  Transport& unwrapped() override { return inner_.unwrapped(); }

  // Endpoint
  RequestId isend(std::span<const std::byte> data, int peer, int tag) override {
    return endpoint_.isend(data, peer, tag);
  }
  RequestId irecv(std::span<std::byte> data, int peer, int tag) override {
    return endpoint_.irecv(data, peer, tag);
  }
  void wait(RequestId request) override { endpoint_.wait(request); }
  bool test(RequestId request) override { return endpoint_.test(request); }
  void wait_all(std::span<const RequestId> requests) override { endpoint_.wait_all(requests); }
  bool wait_until(std::span<const RequestId> requests, std::span<bool> done,
                  Clock::time_point deadline) override {
    return endpoint_.wait_until(requests, done, deadline);
  }
  void register_memory(std::span<std::byte> region) override { endpoint_.register_memory(region); }
  void deregister_memory(std::span<std::byte> region) override {
    endpoint_.deregister_memory(region);
  }
  void set_yield_while_waiting(bool yield) override {
    Endpoint::set_yield_while_waiting(yield);
    endpoint_.set_yield_while_waiting(yield);
  }

  // Communicator
  std::string_view kind() const override { return inner_.kind(); }
  std::string provider() const override { return inner_.provider(); }
  void barrier() override { inner_.barrier(); }
  int take_tag_slot() override { return inner_.take_tag_slot(); }
  void reduce(DType dtype, ReduceOp op, void* dst, const void* src, std::size_t count) override {
    inner_.reduce(dtype, op, dst, src, count);
  }
  void reduce_into(DType dtype, ReduceOp op, void* dst, const void* first, const void* second,
                   std::size_t count) override {
    inner_.reduce_into(dtype, op, dst, first, second, count);
  }
  void scale_for_average(DType dtype, void* data, std::size_t count, int ranks) override {
    inner_.scale_for_average(dtype, data, count, ranks);
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    inner_.copy(dst, src, bytes);
  }

 private:
  Transport& inner_;
  Endpoint& endpoint_;
};

}  // namespace collbench
