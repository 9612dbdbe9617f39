#include "collbench/transport/subgroup_transport.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace collbench::detail {
namespace {

int position_of(const std::vector<int>& members, int rank) {
  const auto found = std::find(members.begin(), members.end(), rank);
  if (found == members.end()) {
    throw std::invalid_argument(
        fmt::format("subgroup {} does not contain this rank ({})", fmt::join(members, ","), rank));
  }
  return static_cast<int>(found - members.begin());
}

}  // namespace

SubgroupTransport::SubgroupTransport(Transport& parent, std::vector<int> members)
    : Transport(position_of(members, parent.rank()), static_cast<int>(members.size())),
      parent_(parent),
      members_(std::move(members)) {}

RequestId SubgroupTransport::isend(std::span<const std::byte> data, int peer, int tag) {
  check_and_note_peer(peer, tag);
  return parent_.isend(data, members_[static_cast<std::size_t>(peer)], tag);
}

RequestId SubgroupTransport::irecv(std::span<std::byte> data, int peer, int tag) {
  check_and_note_peer(peer, tag);
  return parent_.irecv(data, members_[static_cast<std::size_t>(peer)], tag);
}

void SubgroupTransport::barrier() {
  throw std::logic_error("SubgroupTransport::barrier: a subgroup has no barrier of its own");
}

}  // namespace collbench::detail
