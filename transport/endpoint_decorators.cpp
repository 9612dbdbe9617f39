#include "collbench/transport/endpoint_decorators.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>

namespace collbench {

CountingEndpoint::CountingEndpoint(Endpoint& inner, int peers)
    : inner_(inner), contacted_(static_cast<std::size_t>(peers > 0 ? peers : 0), false) {}

RequestId CountingEndpoint::isend(std::span<const std::byte> data, int peer, int tag) {
  const RequestId request = inner_.isend(data, peer, tag);
  note_peer(peer);
  bytes_sent_ += data.size();
  ++messages_sent_;
  return request;
}

RequestId CountingEndpoint::irecv(std::span<std::byte> data, int peer, int tag) {
  const RequestId request = inner_.irecv(data, peer, tag);
  note_peer(peer);
  return request;
}

void CountingEndpoint::note_peer(int peer) {
  // The inner endpoint accepted the post, so the peer is one of the ranks;
  // the bound only guards against an endpoint that checks nothing.
  if (peer < 0 || static_cast<std::size_t>(peer) >= contacted_.size()) return;
  if (!contacted_[static_cast<std::size_t>(peer)]) {
    contacted_[static_cast<std::size_t>(peer)] = true;
    ++peers_contacted_;
  }
}

RequestId TimeoutEndpoint::isend(std::span<const std::byte> data, int peer, int tag) {
  const RequestId request = inner_.isend(data, peer, tag);
  note(request, peer, tag, true);
  return request;
}

RequestId TimeoutEndpoint::irecv(std::span<std::byte> data, int peer, int tag) {
  const RequestId request = inner_.irecv(data, peer, tag);
  note(request, peer, tag, false);
  return request;
}

void TimeoutEndpoint::note(RequestId request, int peer, int tag, bool is_send) {
  // Grows only when more requests are outstanding than ever before, as the
  // endpoints' own pools do.
  if (request >= posted_.size()) posted_.resize(static_cast<std::size_t>(request) + 1);
  posted_[request] = Posted{peer, tag, is_send};
}

void TimeoutEndpoint::wait_all(std::span<const RequestId> requests) {
  if (timeout_.count() == 0) {
    inner_.wait_all(requests);
    return;
  }
  const Clock::time_point deadline = Clock::now() + timeout_;
  if (requests.size() > done_capacity_) {
    done_ = std::make_unique<bool[]>(requests.size());
    done_capacity_ = requests.size();
  }
  const std::span<bool> done(done_.get(), requests.size());
  std::fill(done.begin(), done.end(), false);
  bool finished = false;
  try {
    finished = inner_.wait_until(requests, done, deadline);
  } catch (const TimeoutError& error) {
    // An endpoint that gives a fuller account of what is pending (libfabric's
    // chunks and queues) throws it from its own bounded wait.
    timed_out(error);
  }
  if (!finished) timed_out(requests, done);
}

void TimeoutEndpoint::timed_out(std::span<const RequestId> requests,
                                std::span<const bool> done) const {
  std::string pending;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (done[i] || requests[i] >= posted_.size()) continue;
    const Posted& posted = posted_[requests[i]];
    if (!pending.empty()) pending += ", ";
    pending += fmt::format("{} rank {} tag {}", posted.is_send ? "send to" : "recv from",
                           posted.peer, posted.tag);
  }
  timed_out(TimeoutError(fmt::format("rank {}: timed out after {} ms waiting for: {}", rank_,
                                     timeout_.count(), pending)));
}

void TimeoutEndpoint::timed_out(const TimeoutError& error) const {
  if (timeout_handler_) timeout_handler_(error);
  throw error;
}

}  // namespace collbench
