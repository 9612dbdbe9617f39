#include "collbench/transport.h"

#include <fmt/format.h>

namespace collbench {

void Transport::check_peer_and_tag(int peer, int tag) const {
  if (peer < 0 || peer >= size_) {
    throw std::invalid_argument(
        fmt::format("rank {}: peer {} out of range [0, {})", rank_, peer, size_));
  }
  if (tag < 0 || tag > kMaxTag) {
    throw std::invalid_argument(
        fmt::format("rank {}: tag {} out of range [0, {}]", rank_, tag, kMaxTag));
  }
}

}  // namespace collbench
