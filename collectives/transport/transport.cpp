#include "collbench/transport/transport.h"

#include <fmt/format.h>

#include <utility>

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

void Transport::timed_out(const TimeoutError& error) const {
  if (timeout_handler_) timeout_handler_(error);
  throw error;
}

}  // namespace collbench
