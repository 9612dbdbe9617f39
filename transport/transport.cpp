#include "collbench/transport/transport.h"

#include <fmt/format.h>
#include <sched.h>

#include <cstring>
#include <utility>

#include "collbench/core/reduce.h"

namespace collbench {

bool Endpoint::wait_until(std::span<const RequestId> requests, std::span<bool> done,
                          Clock::time_point deadline) {
  std::size_t remaining = requests.size();
  for (std::size_t i = 0; i < requests.size(); ++i) remaining -= done[i] ? 1 : 0;
  for (std::uint64_t polls = 0; remaining > 0; ++polls) {
    for (std::size_t i = 0; i < requests.size(); ++i) {
      if (!done[i] && test(requests[i])) {
        done[i] = true;
        --remaining;
      }
    }
    if (remaining == 0) break;
    if (yield_while_waiting() && polls >= kPollsBeforeYield) sched_yield();
    // The clock costs about as much as a poll: read it rarely.
    if ((polls & 255) == 0 && Clock::now() > deadline) return false;
  }
  return true;
}

void Communicator::check_peer_and_tag(int peer, int tag) const {
  if (peer < 0 || peer >= size_) {
    throw std::invalid_argument(
        fmt::format("rank {}: peer {} out of range [0, {})", rank_, peer, size_));
  }
  if (tag < 0 || tag > kMaxTag) {
    throw std::invalid_argument(
        fmt::format("rank {}: tag {} out of range [0, {}]", rank_, tag, kMaxTag));
  }
}

void Communicator::set_nodes(std::vector<int> node_of_rank) {
  if (node_of_rank.size() != static_cast<std::size_t>(size_)) {
    throw std::invalid_argument(
        fmt::format("set_nodes: {} node ids for {} ranks", node_of_rank.size(), size_));
  }
  nodes_ = std::move(node_of_rank);
}

void Communicator::set_coordinates(std::vector<std::vector<int>> coordinates_of_rank) {
  if (coordinates_of_rank.size() != static_cast<std::size_t>(size_)) {
    throw std::invalid_argument(fmt::format("set_coordinates: coordinates of {} ranks for {} ranks",
                                            coordinates_of_rank.size(), size_));
  }
  for (const std::vector<int>& coordinates : coordinates_of_rank) {
    if (coordinates.size() != coordinates_of_rank.front().size()) {
      throw std::invalid_argument(
          fmt::format("set_coordinates: ranks with {} and {} coordinates; every rank needs as many",
                      coordinates_of_rank.front().size(), coordinates.size()));
    }
  }
  coordinates_ = std::move(coordinates_of_rank);
}

std::span<const int> Communicator::coordinates_of(int rank) const {
  if (coordinates_.empty()) return {};
  return coordinates_.at(static_cast<std::size_t>(rank));
}

void Communicator::reduce(DType dtype, ReduceOp op, void* dst, const void* src, std::size_t count) {
  reduce_inplace(dtype, op, dst, src, count);
}

void Communicator::reduce_into(DType dtype, ReduceOp op, void* dst, const void* first,
                               const void* second, std::size_t count) {
  collbench::reduce_into(dtype, op, dst, first, second, count);
}

void Communicator::scale_for_average(DType dtype, void* data, std::size_t count, int ranks) {
  collbench::scale_for_average(dtype, data, count, ranks);
}

void Communicator::copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes > 0) std::memmove(dst, src, bytes);
}

}  // namespace collbench
