// OfiTransport itself: construction over a Bootstrap, destruction, and
// the Transport operations (isend, irecv, wait, test, barrier) over the
// progress engine.
#include <sched.h>

#include <algorithm>
#include <exception>

#include "ofi_state.h"

namespace collbench {

RequestId OfiTransport::State::acquire_request() {
  if (free_requests.empty()) {
    requests.emplace_back();
    free_requests.reserve(requests.capacity());
    return static_cast<RequestId>(requests.size() - 1);
  }
  const RequestId id = free_requests.back();
  free_requests.pop_back();
  return id;
}

void OfiTransport::State::release_request(RequestId id) {
  Request& request = requests[id];
  if (!request.active) return;  // listed twice in one wait_all
  request.active = false;
  request.error.clear();
  free_requests.push_back(id);
}

void OfiTransport::State::check_active(RequestId id) const {
  if (id >= requests.size() || !requests[id].active) {
    throw std::invalid_argument(
        fmt::format("rank {}: request {} is not outstanding (already waited for?)", rank, id));
  }
}

// Polls until every request in `ids` has finished, bounded by `timeout`
// (zero: no bound). `what` names the waiter in the timeout message.
void OfiTransport::State::progress_until_finished(std::span<const RequestId> ids,
                                                  std::chrono::milliseconds timeout,
                                                  std::string_view what) {
  const bool bounded = timeout.count() > 0;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::size_t first_unfinished = 0;
  unsigned idle_polls = 0;
  for (std::uint64_t polls = 1;; ++polls) {
    while (first_unfinished < ids.size() && requests[ids[first_unfinished]].finished()) {
      ++first_unfinished;
    }
    if (first_unfinished == ids.size()) return;
    if (progress()) {
      idle_polls = 0;
    } else if (++idle_polls > kPollsBeforeYield) {
      sched_yield();
    }
    // The clock costs about as much as a poll of shm: read it rarely.
    if (bounded && polls % 256 == 0 && std::chrono::steady_clock::now() > deadline) {
      throw_timeout(ids, timeout, what);
    }
  }
}

void OfiTransport::State::throw_timeout(std::span<const RequestId> ids,
                                        std::chrono::milliseconds timeout, std::string_view what) {
  constexpr std::size_t kListed = 16;
  std::string pending;
  std::size_t listed = 0;
  std::size_t unlisted = 0;
  for (const RequestId id : ids) {
    const Request& request = requests[id];
    if (request.finished()) continue;
    if (listed == kListed) {
      ++unlisted;
      continue;
    }
    if (listed++ > 0) pending += ", ";
    pending += describe(request);
    if (request.split()) {
      pending += fmt::format(" ({} of {} chunks posted, {} completed, {} of {} clear-to-sends {})",
                             request.chunks_posted, request.chunks_total, request.chunks_completed,
                             request.clear_completed, request.windows,
                             request.is_send ? "received" : "sent");
    } else if (request.chunks_posted < request.chunks_total) {
      pending += " (not yet posted: the provider pushed back)";
    }
  }
  if (unlisted > 0) pending += fmt::format(" and {} more", unlisted);
  pending += fmt::format("; {} libfabric operations in flight", outstanding_operations);
  throw TimeoutError(fmt::format("rank {}: {} timed out after {} ms (provider {}) waiting for: {}",
                                 rank, what, timeout.count(), info->fabric_attr->prov_name,
                                 pending));
}

// Releases the finished requests and rethrows the first error among them.
void OfiTransport::State::finish(std::span<const RequestId> ids) {
  const std::string* first_error = nullptr;
  for (const RequestId id : ids) {
    if (first_error == nullptr && requests[id].active && !requests[id].error.empty()) {
      first_error = &requests[id].error;
    }
  }
  if (first_error == nullptr) {
    for (const RequestId id : ids) release_request(id);
    return;
  }
  std::runtime_error error(fmt::format("rank {}: {}", rank, *first_error));
  for (const RequestId id : ids) release_request(id);
  throw error;
}

void OfiTransport::State::wait_all(std::span<const RequestId> ids,
                                   std::chrono::milliseconds timeout, std::string_view what) {
  for (const RequestId id : ids) check_active(id);
  progress_until_finished(ids, timeout, what);
  finish(ids);
}

// Dissemination barrier (Hensgen, Finkel & Manber) over zero-length
// messages with internal tags, so that it drives libfabric progress while
// it waits, which MPI_Barrier would not.
void OfiTransport::State::barrier(std::chrono::milliseconds timeout) {
  int round = 0;
  for (int distance = 1; distance < size; distance *= 2, ++round) {
    const int to = (rank + distance) % size;
    const int from = (rank - distance + size) % size;
    const RequestId ids[2] = {start(nullptr, 0, nullptr, from, kInternalTag + round, false),
                              start(nullptr, 0, nullptr, to, kInternalTag + round, true)};
    wait_all(ids, timeout, "barrier");
  }
}

namespace {

// What each rank tells the others when the transport opens, in one
// exchange: whether it opened the provider, and if so what the others must
// agree with and its endpoint name. Integers go little-endian, so ranks on
// machines of different byte order still agree.
enum Outcome : char { kOpened = '0', kUnavailable = '1', kFailed = '2' };

struct Greeting {
  Outcome outcome = kOpened;
  std::string failure;   // outcome != kOpened
  std::string provider;  // as fi_getinfo named it
  std::uint64_t chunk_size = 0;
  std::uint64_t chunk_window = 0;
  std::string endpoint_name;  // opaque bytes of a provider-defined length
};

void put_u64(std::string& out, std::uint64_t value) {
  for (int byte = 0; byte < 8; ++byte) out += static_cast<char>((value >> (8 * byte)) & 0xff);
}

std::uint64_t get_u64(std::string_view in, std::size_t at) {
  std::uint64_t value = 0;
  for (int byte = 0; byte < 8; ++byte) {
    value |= std::uint64_t{static_cast<unsigned char>(in[at + static_cast<std::size_t>(byte)])}
             << (8 * byte);
  }
  return value;
}

std::string encode(const Greeting& greeting) {
  std::string out(1, greeting.outcome);
  if (greeting.outcome != kOpened) return out + greeting.failure;
  put_u64(out, greeting.chunk_size);
  put_u64(out, greeting.chunk_window);
  put_u64(out, greeting.provider.size());
  return out + greeting.provider + greeting.endpoint_name;
}

Greeting decode(std::string_view in, int rank) {
  Greeting greeting;
  constexpr std::size_t kFixed = 1 + 3 * 8;
  const bool known = !in.empty() && (in[0] == kOpened || in[0] == kUnavailable || in[0] == kFailed);
  if (!known ||
      (in[0] == kOpened && (in.size() < kFixed || get_u64(in, 17) > in.size() - kFixed))) {
    throw std::runtime_error(
        fmt::format("rank {} sent a malformed OFI greeting of {} bytes through the bootstrap", rank,
                    in.size()));
  }
  greeting.outcome = static_cast<Outcome>(in[0]);
  if (greeting.outcome != kOpened) {
    greeting.failure = in.substr(1);
    return greeting;
  }
  greeting.chunk_size = get_u64(in, 1);
  greeting.chunk_window = get_u64(in, 9);
  const std::size_t provider_length = get_u64(in, 17);
  greeting.provider = in.substr(kFixed, provider_length);
  greeting.endpoint_name = in.substr(kFixed + provider_length);
  return greeting;
}

}  // namespace

OfiTransport::OfiTransport(Bootstrap& bootstrap, std::string provider_name, OfiOptions options)
    : Transport(bootstrap.rank(), bootstrap.size()), state_(std::make_unique<State>()) {
  State& state = *state_;
  state.rank = rank();
  state.size = size();
  state.options = options;

  // Opening can fail on one rank only (a provider missing on one node): the
  // one exchange carries the outcome, so every rank throws if any failed
  // and none waits for a name that will never come.
  Greeting mine;
  try {
    state.open(provider_name);
    mine.provider = state.info->fabric_attr->prov_name;
    mine.chunk_size = state.chunk_size;
    mine.chunk_window = state.chunk_window;
    const std::vector<char> name = state.endpoint_name();
    mine.endpoint_name.assign(name.begin(), name.end());
  } catch (const OfiProviderUnavailable& error) {
    mine.outcome = kUnavailable;
    mine.failure = error.what();
  } catch (const std::exception& error) {
    mine.outcome = kFailed;
    mine.failure = error.what();
  }
  const std::vector<std::string> received = bootstrap.allgather(encode(mine));
  std::vector<Greeting> greetings;
  greetings.reserve(received.size());
  for (std::size_t r = 0; r < received.size(); ++r) {
    greetings.push_back(decode(received[r], static_cast<int>(r)));
  }
  const auto worst =
      std::max_element(greetings.begin(), greetings.end(),
                       [](const Greeting& a, const Greeting& b) { return a.outcome < b.outcome; });
  if (worst->outcome != kOpened) {
    const std::string failure =
        mine.outcome != kOpened
            ? mine.failure
            : fmt::format("rank {} could not open libfabric provider '{}': {}",
                          worst - greetings.begin(), provider_name, worst->failure);
    if (worst->outcome == kUnavailable) throw OfiProviderUnavailable(failure);
    throw std::runtime_error(failure);
  }

  // Every rank must have chosen the same provider and split messages the
  // same way, or chunks would not line up.
  std::uint64_t chunk_min = mine.chunk_size;
  std::uint64_t chunk_max = mine.chunk_size;
  std::uint64_t window_min = mine.chunk_window;
  for (int r = 0; r < size(); ++r) {
    const Greeting& other = greetings[static_cast<std::size_t>(r)];
    if (other.provider != mine.provider) {
      throw std::runtime_error(
          fmt::format("ranks chose different libfabric providers: rank {} '{}', rank {} '{}'",
                      rank(), mine.provider, r, other.provider));
    }
    chunk_min = std::min(chunk_min, other.chunk_size);
    chunk_max = std::max(chunk_max, other.chunk_size);
    window_min = std::min(window_min, other.chunk_window);
  }
  if (chunk_min != chunk_max) {
    throw std::runtime_error(
        fmt::format("ranks split messages at different sizes (from {} to {} bytes): set "
                    "COLLBENCH_OFI_MAX_MSG the same on every rank",
                    chunk_min, chunk_max));
  }
  state.chunk_window = static_cast<std::size_t>(window_min);

  // fi_av_insert takes the names back to back, all of one length.
  std::vector<char> names;
  for (const Greeting& other : greetings) {
    if (other.endpoint_name.size() != mine.endpoint_name.size()) {
      throw std::runtime_error(fmt::format(
          "endpoint names differ in length across ranks ({} and {} bytes) for provider {}",
          mine.endpoint_name.size(), other.endpoint_name.size(), mine.provider));
    }
    names.insert(names.end(), other.endpoint_name.begin(), other.endpoint_name.end());
  }
  state.insert_peers(names, mine.endpoint_name.size());

  // A first exchange over the fabric itself: a provider that cannot reach
  // the peers fails here, with a message, instead of in the first benchmark.
  state.barrier(state.options.setup_timeout);
}

OfiTransport::~OfiTransport() {
  State& state = *state_;
  // With requests still outstanding (a wait timed out and was abandoned)
  // or an exception unwinding, the peers may never arrive: just close.
  const bool quiet = std::none_of(state.requests.begin(), state.requests.end(),
                                  [](const State::Request& r) { return r.active; });
  if (state.ep != nullptr && quiet && std::uncaught_exceptions() == 0) {
    try {
      state.barrier(state.options.setup_timeout);
    } catch (...) {
      // A peer gone or late: closing is all that is left to do.
    }
  }
}

std::string OfiTransport::provider() const { return state_->info->fabric_attr->prov_name; }

RequestId OfiTransport::isend(std::span<const std::byte> data, int peer, int tag) {
  check_peer_and_tag(peer, tag);
  void* desc = state_->lookup_desc(data.data(), data.size());
  // The provider only reads a send buffer; fi_tsend's pointer is const.
  const RequestId id =
      state_->start(const_cast<std::byte*>(data.data()), data.size(), desc, peer, tag, true);
  return id;
}

RequestId OfiTransport::irecv(std::span<std::byte> data, int peer, int tag) {
  check_peer_and_tag(peer, tag);
  void* desc = state_->lookup_desc(data.data(), data.size());
  return state_->start(data.data(), data.size(), desc, peer, tag, false);
}

void OfiTransport::wait(RequestId request) {
  state_->wait_all(std::span<const RequestId>(&request, 1), std::chrono::milliseconds(0), "wait");
}

void OfiTransport::wait_all(std::span<const RequestId> requests) {
  state_->wait_all(requests, std::chrono::milliseconds(0), "wait_all");
}

bool OfiTransport::wait_until(std::span<const RequestId> requests, std::span<bool> done,
                              Clock::time_point deadline) {
  // At least a millisecond: zero would mean no bound.
  const auto left = std::max(std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()),
                             std::chrono::milliseconds(1));
  state_->wait_all(requests, left, "wait");
  std::fill(done.begin(), done.end(), true);
  return true;
}

bool OfiTransport::test(RequestId request) {
  state_->check_active(request);
  state_->progress();
  if (!state_->requests[request].finished()) return false;
  state_->finish(std::span<const RequestId>(&request, 1));
  return true;
}

void OfiTransport::barrier() { state_->barrier(state_->options.setup_timeout); }

std::size_t OfiTransport::max_message_size() const { return state_->chunk_size; }
std::size_t OfiTransport::inject_size() const { return state_->inject_limit; }
bool OfiTransport::requires_memory_registration() const { return state_->registration_required; }
bool OfiTransport::manual_progress() const {
  return state_->info->domain_attr->data_progress == FI_PROGRESS_MANUAL;
}
std::uint64_t OfiTransport::operations_posted() const { return state_->operations_posted; }
std::size_t OfiTransport::receive_queue_size() const { return state_->info->rx_attr->size; }

}  // namespace collbench
