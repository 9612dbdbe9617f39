#include "collbench/transport/inproc_transport.h"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace collbench {

// One mutex guards all mailboxes: tests need correctness and clear failures,
// not speed. Data is copied outside the lock so that large messages between
// different pairs still move in parallel.
class InProcessWorld {
 public:
  InProcessWorld(int size, std::chrono::milliseconds timeout)
      : ranks_(static_cast<std::size_t>(size)), timeout_(timeout) {}

  int size() const { return static_cast<int>(ranks_.size()); }
  std::chrono::milliseconds timeout() const { return timeout_; }

  RequestId post(int rank, bool is_send, const std::byte* send_data, std::byte* recv_data,
                 std::size_t bytes, int peer, int tag) {
    std::unique_lock lock(mutex_);
    throw_if_aborted(rank);
    RankState& self = state(rank);
    RequestId id;
    if (!self.free.empty()) {
      id = self.free.back();
      self.free.pop_back();
    } else {
      id = static_cast<RequestId>(self.operations.size());
      self.operations.emplace_back();
    }
    self.operations[id] = Operation{send_data, recv_data, bytes, peer, tag, is_send, false, {}};
    const Handle mine{rank, id};

    // A send looks for a receive already posted at its destination; a
    // receive looks for a send that arrived before it. Oldest first, which
    // gives MPI's non-overtaking order between one pair and one tag.
    std::deque<Handle>& candidates = is_send ? state(peer).posted_receives : self.unexpected_sends;
    for (auto it = candidates.begin(); it != candidates.end(); ++it) {
      // A posted receive names its source; an unexpected send is keyed by its sender.
      const int source = is_send ? operation(*it).peer : it->rank;
      if (source != (is_send ? rank : peer) || operation(*it).tag != tag) continue;
      const Handle theirs = *it;
      candidates.erase(it);
      const Handle send = is_send ? mine : theirs;
      const Handle recv = is_send ? theirs : mine;
      const Operation& send_op = operation(send);
      const Operation& recv_op = operation(recv);
      if (send_op.bytes > recv_op.bytes) {
        const std::string error = fmt::format(
            "message truncated: rank {} sent {} bytes with tag {} to rank {}, whose receive "
            "holds {} bytes",
            send.rank, send_op.bytes, tag, recv.rank, recv_op.bytes);
        complete(send, error);
        complete(recv, error);
        return id;
      }
      const std::byte* from = send_op.send_data;
      std::byte* to = recv_op.recv_data;
      const std::size_t length = send_op.bytes;
      // Operations live in vectors that other threads may grow, so only
      // handles, never references, survive the unlocked copy.
      lock.unlock();
      if (length > 0) std::memcpy(to, from, length);
      lock.lock();
      complete(send, {});
      complete(recv, {});
      return id;
    }
    (is_send ? state(peer).unexpected_sends : self.posted_receives).push_back(mine);
    return id;
  }

  // Waits for every request, until `deadline` if there is one. On time:
  // releases them all (throwing the first error) and returns true. Past
  // the deadline: releases those that completed, marks them in `done`, and
  // returns false.
  bool wait_all(int rank, std::span<const RequestId> requests,
                const Endpoint::Clock::time_point* deadline, std::span<bool> done) {
    std::unique_lock lock(mutex_);
    RankState& self = state(rank);
    auto all_done = [&] {
      for (RequestId id : requests) {
        if (!self.operations[id].done) return false;
      }
      return true;
    };
    auto finished = [&] { return aborted_ || all_done(); };
    if (deadline != nullptr) {
      if (!changed_.wait_until(lock, *deadline, finished)) {
        for (std::size_t i = 0; i < requests.size(); ++i) {
          Operation& op = self.operations[requests[i]];
          if (!op.done || done[i]) continue;
          done[i] = true;
          release(self, requests[i]);
        }
        return false;
      }
    } else {
      changed_.wait(lock, finished);
    }
    if (!all_done()) throw_if_aborted(rank);
    std::string error;
    for (RequestId id : requests) {
      if (error.empty()) error = self.operations[id].error;
      release(self, id);
    }
    if (!error.empty()) throw std::runtime_error(fmt::format("rank {}: {}", rank, error));
    return true;
  }

  // Whether `request` has completed; if so it is released (and its error
  // thrown), as wait_all releases.
  bool test(int rank, RequestId request) {
    std::unique_lock lock(mutex_);
    throw_if_aborted(rank);
    RankState& self = state(rank);
    Operation& op = self.operations[request];
    if (!op.done) return false;
    const std::string error = op.error;
    release(self, request);
    if (!error.empty()) throw std::runtime_error(fmt::format("rank {}: {}", rank, error));
    return true;
  }

  void barrier(int rank, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    throw_if_aborted(rank);
    const std::uint64_t generation = barrier_generation_;
    if (++barrier_arrived_ == size()) {
      barrier_arrived_ = 0;
      ++barrier_generation_;
      changed_.notify_all();
      return;
    }
    auto released = [&] { return aborted_ || barrier_generation_ != generation; };
    if (timeout.count() > 0) {
      if (!changed_.wait_for(lock, timeout, released)) {
        throw TimeoutError(fmt::format("rank {}: barrier timed out after {} ms ({} of {} arrived)",
                                       rank, timeout.count(), barrier_arrived_, size()));
      }
    } else {
      changed_.wait(lock, released);
    }
    if (barrier_generation_ == generation) throw_if_aborted(rank);
  }

  // Wakes every waiting rank so that one failure ends the whole world
  // instead of leaving the others blocked until their timeout.
  void abort() {
    std::lock_guard lock(mutex_);
    aborted_ = true;
    changed_.notify_all();
  }

 private:
  struct Operation {
    const std::byte* send_data = nullptr;
    std::byte* recv_data = nullptr;
    std::size_t bytes = 0;
    int peer = -1;
    int tag = -1;
    bool is_send = false;
    bool done = false;
    std::string error;
  };
  struct Handle {
    int rank;
    RequestId id;
  };
  struct RankState {
    std::vector<Operation> operations;
    std::vector<RequestId> free;
    std::deque<Handle> unexpected_sends;  // sends to this rank not yet received
    std::deque<Handle> posted_receives;   // receives of this rank not yet matched
  };

  RankState& state(int rank) { return ranks_[static_cast<std::size_t>(rank)]; }
  static void release(RankState& self, RequestId id) {
    self.operations[id] = Operation{};
    self.free.push_back(id);
  }
  Operation& operation(Handle handle) { return state(handle.rank).operations[handle.id]; }
  void complete(Handle handle, const std::string& error) {
    Operation& op = operation(handle);
    op.done = true;
    op.error = error;
    changed_.notify_all();
  }
  void throw_if_aborted(int rank) const {
    if (aborted_) {
      throw std::runtime_error(fmt::format("rank {}: aborted because another rank failed", rank));
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<RankState> ranks_;
  std::chrono::milliseconds timeout_;
  bool aborted_ = false;
  int barrier_arrived_ = 0;
  std::uint64_t barrier_generation_ = 0;
};

InProcessTransport::InProcessTransport(std::shared_ptr<InProcessWorld> world, int rank)
    : Transport(rank, world->size()), world_(std::move(world)) {}

InProcessTransport::~InProcessTransport() = default;

RequestId InProcessTransport::isend(std::span<const std::byte> data, int peer, int tag) {
  check_peer_and_tag(peer, tag);
  return world_->post(rank(), true, data.data(), nullptr, data.size(), peer, tag);
}

RequestId InProcessTransport::irecv(std::span<std::byte> data, int peer, int tag) {
  check_peer_and_tag(peer, tag);
  return world_->post(rank(), false, nullptr, data.data(), data.size(), peer, tag);
}

void InProcessTransport::wait(RequestId request) {
  world_->wait_all(rank(), std::span<const RequestId>(&request, 1), nullptr, {});
}

bool InProcessTransport::test(RequestId request) { return world_->test(rank(), request); }

void InProcessTransport::wait_all(std::span<const RequestId> requests) {
  world_->wait_all(rank(), requests, nullptr, {});
}

bool InProcessTransport::wait_until(std::span<const RequestId> requests, std::span<bool> done,
                                    Clock::time_point deadline) {
  return world_->wait_all(rank(), requests, &deadline, done);
}

void InProcessTransport::barrier() { world_->barrier(rank(), world_->timeout()); }

void run_in_process(int ranks, const std::function<void(InstrumentedTransport&)>& body,
                    std::chrono::milliseconds timeout) {
  if (ranks < 1) throw std::invalid_argument(fmt::format("run_in_process: {} ranks", ranks));
  auto world = std::make_shared<InProcessWorld>(ranks, timeout);
  std::mutex first_error_mutex;
  std::exception_ptr first_error;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(ranks));
  for (int rank = 0; rank < ranks; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        InProcessTransport inproc(world, rank);
        InstrumentedTransport transport(inproc);
        transport.set_timeout(timeout);
        body(transport);
      } catch (...) {
        {
          std::lock_guard lock(first_error_mutex);
          if (!first_error) first_error = std::current_exception();
        }
        world->abort();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  if (first_error) std::rethrow_exception(first_error);
}

namespace {

class InProcessRankGroup final : public RankGroup {
 public:
  InProcessRankGroup(int ranks, std::chrono::milliseconds timeout)
      : world_(std::make_shared<InProcessWorld>(ranks, timeout)) {
    // Every transport exists before any thread runs, so a body never waits
    // for a peer that is still being built.
    for (int rank = 0; rank < ranks; ++rank) {
      transports_.push_back(std::make_unique<InProcessTransport>(world_, rank));
    }
    threads_.reserve(static_cast<std::size_t>(ranks));
    try {
      for (int rank = 0; rank < ranks; ++rank) threads_.emplace_back([this, rank] { serve(rank); });
    } catch (...) {
      stop();  // the threads started so far; the thread limit was reached
      throw;
    }
  }

  ~InProcessRankGroup() override { stop(); }

  std::string_view kind() const override { return "inproc"; }
  int size() const override { return static_cast<int>(transports_.size()); }

  void run(const std::function<void(Transport& transport)>& body) override {
    std::unique_lock lock(mutex_);
    body_ = &body;
    first_error_ = nullptr;
    running_ = size();
    ++generation_;
    work_.notify_all();
    done_.wait(lock, [this] { return running_ == 0; });
    body_ = nullptr;
    if (first_error_) std::rethrow_exception(first_error_);
  }

  double now(Transport& /*transport*/) const override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

 private:
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    work_.notify_all();
    for (std::thread& thread : threads_) thread.join();
  }

  void serve(int rank) {
    std::uint64_t seen = 0;
    while (true) {
      const std::function<void(Transport&)>* body = nullptr;
      {
        std::unique_lock lock(mutex_);
        work_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
        body = body_;
      }
      try {
        (*body)(*transports_[static_cast<std::size_t>(rank)]);
      } catch (...) {
        // Kept before the others are woken: theirs ("aborted because
        // another rank failed") must not take its place.
        {
          std::lock_guard lock(mutex_);
          if (!first_error_) first_error_ = std::current_exception();
        }
        world_->abort();
      }
      std::lock_guard lock(mutex_);
      if (--running_ == 0) done_.notify_one();
    }
  }

  std::shared_ptr<InProcessWorld> world_;
  std::vector<std::unique_ptr<InProcessTransport>> transports_;
  std::mutex mutex_;
  std::condition_variable work_;  // a new generation, or stopping
  std::condition_variable done_;  // running_ reached 0
  const std::function<void(Transport&)>* body_ = nullptr;
  std::uint64_t generation_ = 0;
  int running_ = 0;
  bool stopping_ = false;
  std::exception_ptr first_error_;
  std::vector<std::thread> threads_;  // last: they start once the rest exists
};

}  // namespace

std::unique_ptr<RankGroup> make_inproc_rank_group(int ranks, std::chrono::milliseconds timeout) {
  if (ranks < 1)
    throw std::invalid_argument(fmt::format("make_inproc_rank_group: {} ranks", ranks));
  return std::make_unique<InProcessRankGroup>(ranks, timeout);
}

}  // namespace collbench
