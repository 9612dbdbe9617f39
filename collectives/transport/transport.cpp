#include "collbench/transport/transport.h"

#include <fmt/format.h>

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

void Transport::timed_out(const TimeoutError& error) const {
  if (timeout_handler_) timeout_handler_(error);
  throw error;
}

}  // namespace collbench
