#include "collbench/transport/subgroup_transport.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <memory>
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
  check_peer_and_tag(peer, tag);
  return parent_.isend(data, members_[static_cast<std::size_t>(peer)], tag);
}

RequestId SubgroupTransport::irecv(std::span<std::byte> data, int peer, int tag) {
  check_peer_and_tag(peer, tag);
  return parent_.irecv(data, members_[static_cast<std::size_t>(peer)], tag);
}

void SubgroupTransport::barrier() {
  // Round k: tell the member 2^k ahead, hear from the one 2^k behind; after
  // ⌈lg n⌉ rounds every member has heard, transitively, from all of them.
  const int members = size();
  for (int distance = 1; distance < members; distance *= 2) {
    const int ahead = (rank() + distance) % members;
    const int behind = (rank() - distance + members) % members;
    const std::array<RequestId, 2> requests = {irecv({}, behind, kSubgroupBarrierTag),
                                               isend({}, ahead, kSubgroupBarrierTag)};
    wait_all(requests);
  }
}

}  // namespace collbench::detail

namespace collbench {

std::unique_ptr<Transport> Transport::subgroup(std::vector<int> members) {
  return std::make_unique<detail::SubgroupTransport>(*this, std::move(members));
}

}  // namespace collbench
