#include "collbench/transport/transport.h"

#include <fmt/format.h>

#include <cstring>
#include <utility>

#include "collbench/core/reduce.h"

namespace collbench {

void Transport::check_and_note_peer(int peer, int tag) {
  if (peer < 0 || peer >= size_) {
    throw std::invalid_argument(
        fmt::format("rank {}: peer {} out of range [0, {})", rank_, peer, size_));
  }
  if (tag < 0 || tag > kMaxTag) {
    throw std::invalid_argument(
        fmt::format("rank {}: tag {} out of range [0, {}]", rank_, tag, kMaxTag));
  }
  if (!contacted_[static_cast<std::size_t>(peer)]) {
    contacted_[static_cast<std::size_t>(peer)] = true;
    ++peers_contacted_;
  }
}

void Transport::set_nodes(std::vector<int> node_of_rank) {
  if (node_of_rank.size() != static_cast<std::size_t>(size_)) {
    throw std::invalid_argument(
        fmt::format("set_nodes: {} node ids for {} ranks", node_of_rank.size(), size_));
  }
  nodes_ = std::move(node_of_rank);
}

void Transport::reduce(DType dtype, ReduceOp op, void* dst, const void* src, std::size_t count) {
  reduce_inplace(dtype, op, dst, src, count);
}

void Transport::reduce_into(DType dtype, ReduceOp op, void* dst, const void* first,
                            const void* second, std::size_t count) {
  collbench::reduce_into(dtype, op, dst, first, second, count);
}

void Transport::scale_for_average(DType dtype, void* data, std::size_t count, int ranks) {
  collbench::scale_for_average(dtype, data, count, ranks);
}

void Transport::copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes > 0) std::memmove(dst, src, bytes);
}

void Transport::timed_out(const TimeoutError& error) const {
  if (timeout_handler_) timeout_handler_(error);
  throw error;
}

}  // namespace collbench
