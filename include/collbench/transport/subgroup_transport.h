// A subgroup of a transport's ranks seen as a transport of its own, so that
// a hierarchical algorithm can run the flat algorithms on the ranks of one
// node, or on one rank of every node: rank i of the subgroup is member i of
// the parent. Sends, receives, waits and memory registration go to the
// parent (whose counters, timeout and yielding apply when it is an
// InstrumentedTransport), and so do local work
// (reductions, copies) and tag slots:
// the subgroup's algorithms take theirs from the parent's sequence, which
// every rank advances in the same order, so no two algorithm objects on the
// parent ever share a tag. Internal to the library.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/transport/transport.h"

namespace collbench::detail {

class SubgroupTransport final : public Transport {
 public:
  // `members`: parent ranks in subgroup order, the parent's own rank among them.
  SubgroupTransport(Transport& parent, std::vector<int> members);

  std::string_view kind() const override { return parent_.kind(); }
  std::string provider() const override { return parent_.provider(); }
  RequestId isend(std::span<const std::byte> data, int peer, int tag) override;
  RequestId irecv(std::span<std::byte> data, int peer, int tag) override;
  void wait(RequestId request) override { parent_.wait(request); }
  bool test(RequestId request) override { return parent_.test(request); }
  void wait_all(std::span<const RequestId> requests) override { parent_.wait_all(requests); }
  bool wait_until(std::span<const RequestId> requests, std::span<bool> done,
                  Clock::time_point deadline) override {
    return parent_.wait_until(requests, done, deadline);
  }
  void set_yield_while_waiting(bool yield) override {
    Transport::set_yield_while_waiting(yield);
    parent_.set_yield_while_waiting(yield);
  }
  // A barrier of the subgroup's members alone (the parent's would need
  // every parent rank): a dissemination barrier, ⌈lg n⌉ rounds of empty
  // messages over the parent with kSubgroupBarrierTag. Two subgroups sharing
  // a pair of ranks must not be in a barrier at once.
  void barrier() override;
  void register_memory(std::span<std::byte> region) override { parent_.register_memory(region); }
  void deregister_memory(std::span<std::byte> region) override {
    parent_.deregister_memory(region);
  }
  int take_tag_slot() override { return parent_.take_tag_slot(); }
  void reduce(DType dtype, ReduceOp op, void* dst, const void* src, std::size_t count) override {
    parent_.reduce(dtype, op, dst, src, count);
  }
  void reduce_into(DType dtype, ReduceOp op, void* dst, const void* first, const void* second,
                   std::size_t count) override {
    parent_.reduce_into(dtype, op, dst, first, second, count);
  }
  void scale_for_average(DType dtype, void* data, std::size_t count, int ranks) override {
    parent_.scale_for_average(dtype, data, count, ranks);
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    parent_.copy(dst, src, bytes);
  }

 private:
  Transport& parent_;
  std::vector<int> members_;
};

}  // namespace collbench::detail
