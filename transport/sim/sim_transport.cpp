// The sim transport (sim_transport.h): matching, simulated transfers and
// charged local work, on the actors of the process's one SimGrid engine.
//
// Actors are coroutines of one OS thread, so the matching state below is
// shared by every rank without a lock: an actor runs alone until it makes a
// simcall (a sleep, starting or waiting for a communication), where others
// may run.
//
// Why mailbox comms and not host-to-host ones (Comm::sendto_async): in
// SimGrid 3.32 Comm::sendto_init() detaches every comm it makes
// (src/s4u/s4u_Comm.cpp:146-152), CommImpl::detach() appends it to the
// maestro's activities_ list (src/kernel/activity/CommImpl.cpp:112-117) and
// CommImpl::finish() removes it with activities_.remove(this) (:545-546), a
// scan of every transfer in flight in the whole simulation at the end of
// each one: 22-37% of the CPU at p = 4096. A mailbox comm is not detached:
// isend and irecv put it on the list of the actor it is for (:270-273,
// :342) and finish() takes it off the list of the actor whose wait it
// answers (:574). Those lists must stay short too, so a pair of comms is
// started only at collbench's match (or, if an earlier pair from the same
// rank to the same rank is still running, when it ends: SimWorld::lane_key),
// both halves by the rank that matches
// (ring's allgather posts its p - 1 receives at once: posted then, they
// would make each rank's list p long), and finished comms are reaped early
// (SimWorld::reap).
#include "collbench/transport/sim_transport.h"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <new>
#include <simgrid/Exception.hpp>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u.hpp>
#include <simgrid/simix.hpp>
#include <string>
#include <unordered_set>
#include <xbt/config.hpp>

#include "flat_map.h"
#include "platform.h"
#include "simgrid_args.h"

namespace collbench {
namespace {

namespace s4u = simgrid::s4u;

// A test() that finds its request not done costs no simulated time, but a
// rank that keeps polling keeps the instant from ending (the engine runs
// every actor that can run before it moves the clock): so after this many
// empty polls at one instant, a poll lets kTestPollSeconds pass.
constexpr unsigned kEmptyPollsPerInstant = 32;
constexpr double kTestPollSeconds = 1e-7;

// SimGrid 3.32 has what a comm started for another actor needs, its
// match function (the filter a mailbox applies before pairing a send with a
// receive) and the actor it is for, but no setter: the fields are private
// ("FIXME: expose these elements in the API", s4u/Comm.hpp; its static
// Comm::send/recv take them, but block). An explicit instantiation may name
// a private member, so these templates hand out pointers to them, here.
using MatchFun = std::function<bool(void*, void*, simgrid::kernel::activity::CommImpl*)>;
using ActorImpl = simgrid::kernel::actor::ActorImpl;
struct CommMatchFun {
  using type = MatchFun s4u::Comm::*;
  friend type member(CommMatchFun);
};
struct CommSender {
  using type = ActorImpl* s4u::Comm::*;
  friend type member(CommSender);
};
struct CommReceiver {
  using type = ActorImpl* s4u::Comm::*;
  friend type member(CommReceiver);
};
template <typename Field, typename Field::type Member>
struct Expose {
  friend typename Field::type member(Field) { return Member; }
};
template struct Expose<CommMatchFun, &s4u::Comm::match_fun_>;
template struct Expose<CommSender, &s4u::Comm::sender_>;
template struct Expose<CommReceiver, &s4u::Comm::receiver_>;

struct Handle {
  int rank;
  RequestId id;
  bool operator==(const Handle&) const = default;
};

constexpr RequestId kNoRequest = ~RequestId{0};

// A pair that waited on its lane (SimWorld::lane_done) and is starting now:
// SimGrid finds its latency factor among these (SimWorld::latency_factor)
// when the second of its comms starts, in a later simcall. Told apart by
// hosts and size only: two lanes between one pair of nodes starting pairs
// of one size at once (--ppn > 1) may swap theirs, which are then alike.
struct LaneStart {
  const s4u::Host* source;
  const s4u::Host* destination;
  double bytes;
  double matched_at;
};

// The smallest latency factor of a comm. SimGrid's CM02 shares a link
// among comms in inverse proportion to their routes' latencies, but a comm
// that starts with no latency at all gets a sharing penalty of 1 where the
// others have about 1e-6 (s), and so a millionth of every link it shares:
// it starves until they end. A millionth of the latency keeps it on the
// latency path, which then gives it its route's penalty, as every comm,
// for a picosecond of delay.
constexpr double kLeastLatencyFactor = 1e-6;

// A rank holds one per pending request: p - 1 receives and as many sends at
// once in ring's allgather, so its size counts p^2 times (48 bytes, 2 GiB
// less than 64 would take at p = 4096; with its error as a string it was
// 112).
struct Operation {
  union {
    const std::byte* send_data = nullptr;  // a send's, until its match
    std::byte* recv_data;                  // a receive's, until its match
    double matched_at;                     // a send's, while its pair waits on its lane
  };
  std::size_t bytes = 0;
  // Matched: this side's SimGrid comm on the destination's mailbox (null
  // again once reaped); SimGrid pairs it with `partner`'s only.
  s4u::CommPtr comm;
  // Matched: the other side's operation, at rank `peer` (a receive names
  // its source).
  RequestId partner = kNoRequest;
  int peer = -1;
  int tag = -1;
  // Unmatched: the next younger operation of its queue (SimWorld::Unmatched).
  RequestId next = kNoRequest;
  // 0, or 1 + the index of its failure's message in SimWorld::errors_.
  std::uint32_t error = 0;
  bool is_send = false;
  bool matched = false;
  bool started = false;  // its pair's comms are running (from the match on)
  // The partner's wait has returned: the comm is over, and this rank may
  // take it off its actor's list before its own wait (SimWorld::reap).
  bool partner_done = false;
};
static_assert(sizeof(Operation) <= 48, "an Operation counts p^2 times");

Handle partner_of(const Operation& op) { return Handle{op.peer, op.partner}; }

struct RankState {
  std::vector<Operation> operations;
  std::vector<RequestId> free;
  std::vector<RequestId> reapable;  // partner_done, perhaps waited for since
  ActorImpl* actor = nullptr;       // while run() runs
  s4u::Host* host = nullptr;
  // A wait for a request whose comms have not started blocks on this. (Not
  // this_actor::suspend(): a transfer that starts while its receiver's
  // actor is suspended is suspended with it, CommImpl.cpp:166-182.)
  s4u::SemaphorePtr matched = s4u::Semaphore::create(0);
  bool blocked = false;
  // test()'s empty polls at the instant of the last one.
  unsigned empty_polls = 0;
  double last_empty_poll = -1;
  // The comm of a wait for a running one, in the vector that SimGrid's
  // wait_any takes (kept, so that a wait allocates no vector of its own).
  std::vector<s4u::ActivityPtr> waiting;
};

}  // namespace

// The ranks' operations and the unmatched ones, for one group.
class SimWorld {
 public:
  explicit SimWorld(const SimParams& params)
      : params_(params), ranks_(static_cast<std::size_t>(params.ranks)) {
    // Named by rank, so that every group of the process shares them: they
    // live as long as the engine, p of them.
    for (int rank = 0; rank < params.ranks; ++rank) {
      mailboxes_.push_back(s4u::Mailbox::by_name(sim_mailbox_name(rank)));
    }
  }

  const SimParams& params() const { return params_; }
  int size() const { return params_.ranks; }

  // SimGrid's latency factor of every comm (one callback per engine, set
  // by load()): 1, but for a pair that waited on its lane the part of the
  // route's latency not yet spent since its match (0 when it waited
  // longer): on a real link the latency of consecutive messages overlaps,
  // only their bytes queue.
  static double latency_factor(double bytes, const s4u::Host* source, const s4u::Host* destination,
                               const std::vector<s4u::Link*>& links,
                               const std::unordered_set<s4u::NetZone*>& /*zones*/) {
    return running_ == nullptr ? 1
                               : running_->lane_latency_factor(bytes, source, destination, links);
  }
  // Makes `world` the one whose group runs (the engine runs one at a time),
  // for SimGrid's callback, until its end.
  class RunningWorld {
   public:
    explicit RunningWorld(SimWorld& world) { running_ = &world; }
    ~RunningWorld() { running_ = nullptr; }
    RunningWorld(const RunningWorld&) = delete;
    RunningWorld& operator=(const RunningWorld&) = delete;
  };
  std::uint64_t messages() const { return messages_; }

  void set_actor(int rank, s4u::Actor* actor) {
    state(rank).actor = actor->get_impl();
    state(rank).host = actor->get_host();
  }

  RequestId post(int rank, bool is_send, const std::byte* send_data, std::byte* recv_data,
                 std::size_t bytes, int peer, int tag) {
    RankState& self = state(rank);
    RequestId id;
    if (!self.free.empty()) {
      id = self.free.back();
      self.free.pop_back();
    } else {
      id = static_cast<RequestId>(self.operations.size());
      self.operations.emplace_back();
    }
    Operation& op = self.operations[id];
    op = Operation{};
    if (is_send) {
      op.send_data = send_data;
    } else {
      op.recv_data = recv_data;
    }
    op.bytes = bytes;
    op.peer = peer;
    op.tag = tag;
    op.is_send = is_send;
    if (is_send) ++messages_;
    match_or_queue(Handle{rank, id});
    reap(rank);
    return id;
  }

  // Blocks the calling actor until every request has completed, charges o
  // for each receive among them, releases them and throws the first error.
  void wait_all(int rank, std::span<const RequestId> requests) {
    reap(rank);
    RankState& self = state(rank);
    int receives = 0;
    for (const RequestId id : requests) {
      // Only this rank adds operations of its own, so `self.operations`
      // does not move while others run during the wait.
      while (!self.operations[id].started) {
        if (self.operations[id].matched && finish_lane_ahead(rank, id)) continue;
        self.blocked = true;
        self.matched->acquire();
      }
      // Waited for even when a test() saw it finish: only a wait takes the
      // comm off this actor's list (ActivityImpl::test answers no simcall).
      if (self.operations[id].comm) {
        wait_for_comm(rank, self.operations[id].comm, self.operations[id].partner_done);
        lane_done(Handle{rank, id});
      }
      tell_partner(Handle{rank, id});
      if (!self.operations[id].is_send) ++receives;
    }
    if (params_.overhead > 0 && receives > 0) {
      s4u::this_actor::sleep_for(params_.overhead * receives);
    }
    std::uint32_t error = 0;
    for (const RequestId id : requests) {
      if (error == 0) error = self.operations[id].error;
      release(self, id);
    }
    if (error != 0) throw std::runtime_error(fmt::format("rank {}: {}", rank, errors_[error - 1]));
  }

  // Never blocks (Endpoint::test): a request not matched yet, or matched
  // but queued on its lane, is not done; a running comm is asked once; a
  // done one is finished as a wait finishes it (no simulated time passes
  // then either, but o for a receive).
  bool test(int rank, RequestId request) {
    const std::vector<Operation>& operations = state(rank).operations;
    // Its lane's running pair may have ended with nobody waiting for it:
    // then the next pair starts here, as a wait would start it.
    if (!operations[request].started && operations[request].matched) {
      finish_lane_ahead(rank, request, true);
    }
    if (!operations[request].started) return empty_poll(rank);
    // Held here: test() is a simcall, during which this rank's operations
    // cannot move but the copy keeps the comm whatever happens.
    // (Null: reaped, so over.)
    const s4u::CommPtr comm = operations[request].comm;
    if (comm && !comm->test()) return empty_poll(rank);
    wait_all(rank, std::span<const RequestId>(&request, 1));
    return true;
  }

  // What is still pending, for a deadlock's message; then forgets it all so
  // that the group can run again.
  std::string pending_and_reset() {
    std::string pending;
    int listed = 0;
    for (int rank = 0; rank < size(); ++rank) {
      RankState& self = state(rank);
      for (std::size_t id = 0; id < self.operations.size(); ++id) {
        const Operation& op = self.operations[id];
        if (op.peer < 0 || op.matched || listed >= 8) continue;
        pending += fmt::format("{}rank {} {} rank {} tag {}", listed++ > 0 ? ", " : "", rank,
                               op.is_send ? "sends to" : "receives from", op.peer, op.tag);
      }
      self.operations.clear();
      self.free.clear();
      self.reapable.clear();
      self.actor = nullptr;
      self.blocked = false;
      self.matched = s4u::Semaphore::create(0);
      self.empty_polls = 0;
    }
    unmatched_.clear();
    lanes_.clear();
    lane_starts_.clear();
    errors_.clear();
    return pending.empty() ? "nothing unmatched" : pending;
  }

 private:
  // A queue threaded through its operations' `next`, so that queuing
  // allocates nothing (the map's slots are reused as queues empty and new
  // ones start: a node per queue was a malloc per message).
  struct Unmatched {
    bool sends = false;
    RequestId oldest = kNoRequest;
    RequestId youngest = kNoRequest;
  };
  // The matched pairs from one rank to another (see lane_key): the one
  // running, and those waiting for it, threaded through their sends' `next`.
  struct Lane {
    Handle send{-1, kNoRequest};
    Handle recv{-1, kNoRequest};
    Handle first_waiting{-1, kNoRequest};
    Handle last_waiting{-1, kNoRequest};
  };

  // SimGrid's latency factor of every comm: 1, but for a pair that waited
  // on its lane the part of the route's latency not yet spent since its
  // match (kLeastLatencyFactor when it waited longer): on a real link the
  // latency of consecutive messages overlaps, only their bytes queue.
  double lane_latency_factor(double bytes, const s4u::Host* source, const s4u::Host* destination,
                             const std::vector<s4u::Link*>& links) {
    const auto found =
        std::find_if(lane_starts_.begin(), lane_starts_.end(), [&](const LaneStart& start) {
          return start.source == source && start.destination == destination && start.bytes == bytes;
        });
    if (found == lane_starts_.end()) return 1;
    double latency = 0;
    for (const s4u::Link* link : links) latency += link->get_latency();
    const double since_match = s4u::Engine::get_clock() - found->matched_at;
    lane_starts_.erase(found);
    return latency > 0 ? std::max(kLeastLatencyFactor, 1 - since_match / latency) : 1;
  }

  // SimGrid's match function, asked both ways when a comm meets another of
  // the opposite kind on a mailbox: true for the two halves of one pair,
  // whose data is the pair's number (never reused). Both halves start in
  // one simcall, so no other half of collbench's waits there; what it keeps
  // out is a comm of other code of the process on the mailbox
  // (sim_mailbox_name), which a mailbox's FIFO order alone would pair.
  static bool same_pair(void* mine, void* theirs, simgrid::kernel::activity::CommImpl*) {
    return mine == theirs;
  }

  RankState& state(int rank) { return ranks_[static_cast<std::size_t>(rank)]; }

  Operation& operation(Handle handle) { return state(handle.rank).operations[handle.id]; }

  // At any time a (destination, source, tag) has unmatched sends or
  // unmatched receives, never both: a new operation either matches the
  // oldest of the other kind or queues behind its own kind. MPI's order.
  void match_or_queue(Handle mine) {
    Operation& op = operation(mine);
    const int destination = op.is_send ? op.peer : mine.rank;
    const int source = op.is_send ? mine.rank : op.peer;
    const std::uint64_t key = (static_cast<std::uint64_t>(destination) << 40) |
                              (static_cast<std::uint64_t>(source) << 16) |
                              static_cast<std::uint64_t>(op.tag);
    const auto [found, added] =
        unmatched_.try_emplace(key, Unmatched{op.is_send, mine.id, mine.id});
    if (added) return;
    Unmatched& queue = *found;
    if (queue.sends == op.is_send) {
      state(mine.rank).operations[queue.youngest].next = mine.id;
      queue.youngest = mine.id;
      return;
    }
    // A queue's operations are all sends of `source` or all receives of
    // `destination`: all of one rank, the other side of this one.
    const Handle theirs{op.is_send ? destination : source, queue.oldest};
    queue.oldest = operation(theirs).next;
    if (queue.oldest == kNoRequest) unmatched_.erase(key);
    match(op.is_send ? mine : theirs, op.is_send ? theirs : mine);
  }

  void match(Handle send, Handle recv) {
    Operation& send_op = operation(send);
    Operation& recv_op = operation(recv);
    const std::size_t bytes = send_op.bytes;
    if (bytes > recv_op.bytes) {
      errors_.push_back(fmt::format(
          "message truncated: rank {} sent {} bytes with tag {} to rank {}, whose receive holds "
          "{} bytes",
          send.rank, bytes, send_op.tag, recv.rank, recv_op.bytes));
      send_op.error = recv_op.error = static_cast<std::uint32_t>(errors_.size());
    } else if (params_.payload && bytes > 0) {
      // The data moves now, the time later: MPI forbids touching either
      // buffer until the wait, so no rank can tell the difference.
      std::memcpy(recv_op.recv_data, send_op.send_data, bytes);
    }
    send_op.partner = recv.id;
    recv_op.partner = send.id;
    send_op.matched = recv_op.matched = true;
    send_op.next = kNoRequest;  // it may still name its unmatched queue's next
    const auto [found, added] = lanes_.try_emplace(lane_key(send.rank, recv.rank), Lane{});
    Lane& lane = *found;
    if (added) {
      start(lane, send, recv);
    } else {
      send_op.matched_at = s4u::Engine::get_clock();
      if (lane.last_waiting.id == kNoRequest) {
        lane.first_waiting = send;
      } else {
        operation(lane.last_waiting).next = send.id;
      }
      lane.last_waiting = send;
    }
  }

  // Why one comm at a time from a rank to a rank (a lane): SimGrid shares a
  // link's bandwidth evenly among the comms on it, so comms started together
  // from one rank to the same rank would all finish late together, the
  // oldest (the one the receiver needs first) as late as the youngest. A
  // real sender's messages to one peer leave in order (one connection, one
  // queue pair). In a ring whose ranks are out of step (the train family's
  // exchanges back to back, each rank starting a bucket when its previous
  // ended), a rank ahead has many segments for its neighbour at once; shared
  // evenly they delayed every step, 4x a ring allreduce's cost at p = 256
  // (results/sim/train/README.md, Agreement).
  static std::uint64_t lane_key(int source, int destination) {
    return (static_cast<std::uint64_t>(source) << 32) | static_cast<std::uint32_t>(destination);
  }

  // After `mine`'s comm has been waited for: if it was its lane's, the
  // lane's next pair starts.
  void lane_done(Handle mine) {
    const Operation& op = operation(mine);
    const std::uint64_t key =
        op.is_send ? lane_key(mine.rank, op.peer) : lane_key(op.peer, mine.rank);
    Lane* const found = lanes_.find(key);
    if (found == nullptr) return;
    Lane& lane = *found;
    if (!(lane.send == mine) && !(lane.recv == mine)) return;
    if (lane.first_waiting.id == kNoRequest) {
      lanes_.erase(key);
      return;
    }
    const Handle send = lane.first_waiting;
    Operation& send_op = operation(send);
    lane.first_waiting =
        send_op.next == kNoRequest ? Handle{-1, kNoRequest} : Handle{send.rank, send_op.next};
    if (lane.first_waiting.id == kNoRequest) lane.last_waiting = lane.first_waiting;
    send_op.next = kNoRequest;
    // Its bytes may leave as the last byte of the one before left, a
    // route's latency before that one's end (now), unless matched later.
    lane_starts_.push_back({state(send.rank).host, state(send_op.peer).host,
                            static_cast<double>(send_op.bytes), send_op.matched_at});
    send_op.send_data = nullptr;
    start(lane, send, partner_of(send_op));
  }

  // A wait for a pair queued on its lane finishes the lane's running pair
  // (this rank is one of its ends) instead of waiting for someone to:
  // false if there is none to finish here, or (`only_if_over`, for a test)
  // if it is still running.
  bool finish_lane_ahead(int rank, RequestId id, bool only_if_over = false) {
    const Operation& op = operation(Handle{rank, id});
    const Lane* const found =
        lanes_.find(op.is_send ? lane_key(rank, op.peer) : lane_key(op.peer, rank));
    if (found == nullptr) return false;
    const Handle ahead = found->send.rank == rank ? found->send : found->recv;
    if (only_if_over) {
      // A simcall: `found` and `op` may dangle; `ahead`'s comm is this
      // rank's, which only this rank takes away.
      const s4u::CommPtr running = operation(ahead).comm;
      if (!running || !running->test()) return false;
    }
    const s4u::CommPtr comm = std::move(operation(ahead).comm);
    if (!comm) return false;
    wait_for_comm(rank, comm, only_if_over);  // a simcall: `found` and `op` may dangle
    lane_done(ahead);
    tell_partner(ahead);
    return true;
  }

  // Starts the pair's two comms on the receiver's mailbox, each for its own
  // rank's actor (its host is the transfer's end), wherever this runs: the
  // transfer starts now, at the match or at its lane's turn, from the
  // sender's host to the receiver's. SimGrid copies the pair's number (the payload moved above);
  // a receive needs somewhere to put it.
  void start(Lane& lane, Handle send, Handle recv) {
    lane.send = send;
    lane.recv = recv;
    void* const pair = reinterpret_cast<void*>(static_cast<std::uintptr_t>(++pairs_));
    s4u::Mailbox* box = mailboxes_[static_cast<std::size_t>(recv.rank)];
    const s4u::CommPtr put = box->put_init(pair, operation(send).bytes);
    const s4u::CommPtr get = box->get_init()->set_dst_data(&sink_, sizeof(sink_));
    (*put).*member(CommSender{}) = state(send.rank).actor;
    (*get).*member(CommReceiver{}) = state(recv.rank).actor;
    for (const s4u::CommPtr& comm : {put, get}) {
      comm->set_data(pair);
      (*comm).*member(CommMatchFun{}) = &SimWorld::same_pair;
    }
    // One simcall for both starts and the wakes: inside it the maestro
    // runs each s4u call directly (simcall_answered's fast path), where
    // three separate ones cost an actor's context switch each.
    simgrid::kernel::actor::simcall_answered([&] {
      put->start();
      get->start();
      for (const auto& [side, comm] : {std::pair{send, put}, std::pair{recv, get}}) {
        operation(side).comm = comm;
        operation(side).started = true;
        wake(side.rank);
      }
    });
  }

  void wake(int rank) {
    RankState& waiter = state(rank);
    if (!waiter.blocked) return;
    waiter.blocked = false;
    waiter.matched->release();
  }

  // test()'s answer for a request not done: false, after a yield, so that
  // the actors that can run at this instant run (the one a receive waits
  // for may be about to send); see kEmptyPollsPerInstant.
  bool empty_poll(int rank) {
    RankState& self = state(rank);
    const double now = s4u::Engine::get_clock();
    if (now != self.last_empty_poll) {
      self.last_empty_poll = now;
      self.empty_polls = 0;
    }
    if (++self.empty_polls < kEmptyPollsPerInstant) {
      s4u::this_actor::yield();
    } else {
      self.empty_polls = 0;
      s4u::this_actor::sleep_for(kTestPollSeconds);
    }
    return false;
  }

  // Ring's allgather waits for its p - 1 sends only at the phase's end. If
  // their comms lived until then, each rank's actor list would hold p of
  // them, p^2 comms in all (GiBs at p = 4096), and each wait would scan its
  // rank's p. So a comm whose other side has been waited for is waited for
  // (it is over: no simulated time passes) and dropped at its rank's next
  // post or wait; its operation stays until the algorithm's own wait.
  void reap(int rank) {
    RankState& self = state(rank);
    while (!self.reapable.empty()) {
      Operation& op = self.operations[self.reapable.back()];
      self.reapable.pop_back();
      if (!op.partner_done || !op.comm) continue;
      const s4u::CommPtr comm = std::move(op.comm);
      wait_for_comm(rank, comm, true);  // a simcall: `op` may not be this slot's any more
    }
  }

  // Not comm->wait() while the comm runs: SimGrid 3.32 starts a sleep on
  // the waiter's CPU beside each such wait (to learn of host failures,
  // which are not simulated here); a wait for any of one comm starts none.
  // Over (its partner has waited), a wait starts no sleep either, and spares
  // wait_any's three vectors.
  void wait_for_comm(int rank, const s4u::CommPtr& comm, bool over) {
    if (over) {
      comm->wait();
      return;
    }
    std::vector<s4u::ActivityPtr>& one = state(rank).waiting;
    one.assign(1, comm);
    s4u::Activity::wait_any(one);
    one.clear();  // not to keep the comm alive
  }

  // After `mine`'s wait: its partner, if not waited for yet, may reap.
  void tell_partner(Handle mine) {
    const Operation& op = operation(mine);
    if (!op.matched) return;
    const Handle partner = partner_of(op);
    Operation& other = operation(partner);
    // A released partner's slot may hold another operation by now.
    if (!other.matched || other.peer != mine.rank || other.partner != mine.id || !other.comm) {
      return;
    }
    other.partner_done = true;
    state(partner.rank).reapable.push_back(partner.id);
  }

  static void release(RankState& self, RequestId id) {
    self.operations[id] = Operation{};
    self.free.push_back(id);
  }

  static inline std::uint64_t pairs_ = 0;  // of the process
  static inline void* sink_ = nullptr;
  static inline SimWorld* running_ = nullptr;

  const SimParams params_;
  std::vector<RankState> ranks_;
  std::vector<s4u::Mailbox*> mailboxes_;
  sim::FlatMap<Unmatched> unmatched_;
  sim::FlatMap<Lane> lanes_;
  std::vector<LaneStart> lane_starts_;
  std::uint64_t messages_ = 0;
  std::vector<std::string> errors_;  // the failed messages' (a failure ends the run)
};

namespace {

class SimTransport final : public Transport, public SimulatedCompute {
 public:
  SimTransport(SimWorld& world, int rank) : Transport(rank, world.size()), world_(world) {}

  std::string_view kind() const override { return "sim"; }

  RequestId isend(std::span<const std::byte> data, int peer, int tag) override {
    check_peer_and_tag(peer, tag);
    charge(world_.params().overhead);
    return world_.post(rank(), true, data.data(), nullptr, data.size(), peer, tag);
  }
  RequestId irecv(std::span<std::byte> data, int peer, int tag) override {
    check_peer_and_tag(peer, tag);
    return world_.post(rank(), false, nullptr, data.data(), data.size(), peer, tag);
  }
  void wait(RequestId request) override {
    world_.wait_all(rank(), std::span<const RequestId>(&request, 1));
  }
  bool test(RequestId request) override { return world_.test(rank(), request); }
  void wait_all(std::span<const RequestId> requests) override { world_.wait_all(rank(), requests); }
  // The deadline is ignored: a wait on an actor must suspend it (polling
  // test() would never let simulated time advance), and no wait can hang,
  // since when no actor can go on the engine returns and run() names the
  // deadlock. A wall-clock bound would only cut a long simulation short.
  bool wait_until(std::span<const RequestId> requests, std::span<bool> done,
                  Clock::time_point /*deadline*/) override {
    world_.wait_all(rank(), requests);
    std::fill(done.begin(), done.end(), true);
    return true;
  }
  // Ideal: every rank leaves at the instant the last one arrives (SimGrid's
  // barrier costs no simulated time).
  void barrier() override { barrier_->wait(); }
  void set_barrier(s4u::BarrierPtr barrier) { barrier_ = std::move(barrier); }

  void reduce(DType dtype, ReduceOp op, void* dst, const void* src, std::size_t count) override {
    if (world_.params().payload) Transport::reduce(dtype, op, dst, src, count);
    charge_bytes(count * dtype_size(dtype), world_.params().gamma_rate);
  }
  void reduce_into(DType dtype, ReduceOp op, void* dst, const void* first, const void* second,
                   std::size_t count) override {
    if (world_.params().payload) Transport::reduce_into(dtype, op, dst, first, second, count);
    charge_bytes(count * dtype_size(dtype), world_.params().gamma_rate);
  }
  // A pass over memory, like a copy: not a reduction of two operands.
  void scale_for_average(DType dtype, void* data, std::size_t count, int ranks) override {
    if (world_.params().payload) Transport::scale_for_average(dtype, data, count, ranks);
    charge_bytes(count * dtype_size(dtype), world_.params().memory_rate);
  }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    if (world_.params().payload) Transport::copy(dst, src, bytes);
    charge_bytes(bytes, world_.params().memory_rate);
  }
  bool size_only() const override { return !world_.params().payload; }
  void compute(double seconds) override {
    if (!(seconds >= 0) || !std::isfinite(seconds)) {
      throw std::invalid_argument(fmt::format("rank {}: compute of {} s", rank(), seconds));
    }
    charge(seconds);
  }

 private:
  static void charge(double seconds) {
    if (seconds > 0) s4u::this_actor::sleep_for(seconds);
  }
  static void charge_bytes(std::size_t bytes, double rate) {
    if (rate > 0) charge(static_cast<double>(bytes) / rate);
  }

  SimWorld& world_;
  s4u::BarrierPtr barrier_;
};

// The process's engine and the platform loaded into it.
struct Process {
  std::unique_ptr<s4u::Engine> engine;
  std::string platform_key;
  sim::Platform platform;
};

Process& process() {
  static Process instance;
  return instance;
}

void check(const SimParams& params) {
  const auto fail = [](std::string message) { throw std::invalid_argument(std::move(message)); };
  if (params.ranks < 1) fail(fmt::format("--ranks {}: give at least 1 rank", params.ranks));
  if (params.ppn < 1) fail(fmt::format("--ppn {}: give at least 1 rank per node", params.ppn));
  if (!(params.link_latency >= 0) || !(params.intra_latency >= 0)) {
    fail("a latency is negative: give 0s or more");
  }
  if (!(params.link_bandwidth > 0) || !(params.intra_bandwidth > 0)) {
    fail("a link bandwidth is not positive: give a rate above 0");
  }
  if (!(params.gamma_rate >= 0) || !(params.memory_rate >= 0) || !(params.overhead >= 0)) {
    fail("gamma, the memory rate and the overhead cannot be negative: give 0 or more");
  }
  // SimGrid 3.32's ns-3 binding knows only hosts joined by one-hop links and
  // aborts the process (SIGABRT) on every platform built here.
  constexpr std::string_view kModel = "--cfg=network/model:";
  for (const std::string& arg : params.simgrid_args) {
    if (!arg.starts_with(kModel)) continue;
    std::string model;
    for (const char c : std::string_view(arg).substr(kModel.size())) {
      if (c != '-') model += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (model == "ns3") {
      fail(fmt::format(
          "--simgrid-arg={}: SimGrid 3.32's ns-3 model aborts on collbench's platforms (\"Element "
          "node1 is unknown to ns-3\"); leave network/model to collbench (CM02, README "
          "\"Simulated networks\")",
          arg));
    }
  }
}

sim::Platform& load(const SimParams& params) {
  Process& self = process();
  const std::string key = sim::platform_key(params);
  if (self.engine) {
    if (key != self.platform_key) {
      throw std::invalid_argument(fmt::format(
          "this process simulates platform '{}' already and cannot load '{}': run one platform "
          "per process",
          self.platform_key, key));
    }
    if (static_cast<std::size_t>(params.ranks) > self.platform.slots.size() ||
        (!params.allow_unused_slots &&
         static_cast<std::size_t>(params.ranks) != self.platform.slots.size())) {
      throw std::invalid_argument(fmt::format("{} ranks do not match platform '{}' of {} slots",
                                              params.ranks, params.platform,
                                              self.platform.slots.size()));
    }
    return self.platform;
  }
  sim::check_platform(params);
  // Ours first, so that the caller's arguments can override them. The
  // model is set before the platform exists, as SimGrid requires.
  std::vector<std::string> args = {"collbench", "--log=root.thresh:critical",
                                   "--cfg=network/model:CM02", "--cfg=network/crosstraffic:0",
                                   "--cfg=network/TCP-gamma:0"};
  sim::probe_simgrid_args(args, params);
  args.insert(args.end(), params.simgrid_args.begin(), params.simgrid_args.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  try {
    self.engine = std::make_unique<s4u::Engine>(&argc, argv.data());
  } catch (const std::exception& refusal) {
    // Ours it takes: only the caller's can be refused ("not a boolean"
    // names neither the argument nor its key).
    if (params.simgrid_args.empty()) throw;
    throw std::invalid_argument(fmt::format("{}: SimGrid refuses it: {}",
                                            sim::named_simgrid_args(params.simgrid_args),
                                            refusal.what()));
  }
  // SimWorld's state has no locks: its actors must run one at a time (any
  // spelling of the setting, or several --cfg settings in one argument, ends here).
  if (const int threads = simgrid::config::get_value<int>("contexts/nthreads"); threads != 1) {
    throw std::invalid_argument(fmt::format(
        "{}: contexts/nthreads is {}; the sim transport runs its actors in one thread (its "
        "state has no locks), leave it out",
        sim::named_simgrid_args(params.simgrid_args), threads));
  }
  self.platform = sim::build_platform(params);
  self.platform_key = key;
  try {
    self.engine->get_netzone_root()->get_network_model()->set_lat_factor_cb(
        SimWorld::latency_factor);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(
        "--simgrid-arg=--cfg=network/latency-factor: collbench sets the latency of each message "
        "itself (consecutive messages to one rank overlap their latency); leave it out");
  } catch (const std::exception& refusal) {
    // host/model:ptask_L07's network model has no latency factor at all.
    if (params.simgrid_args.empty()) throw;
    throw std::invalid_argument(fmt::format("{}: SimGrid refuses it: {}",
                                            sim::named_simgrid_args(params.simgrid_args),
                                            refusal.what()));
  }
  return self.platform;
}

class SimGroup final : public SimRankGroup {
 public:
  SimGroup(const SimParams& params, const sim::Platform& platform)
      : world_(params), platform_(platform) {
    const std::vector<int> nodes(platform.node_of_slot.begin(),
                                 platform.node_of_slot.begin() + params.ranks);
    std::vector<std::vector<int>> coordinates;
    if (!platform.coordinates_of_node.empty()) {
      for (const int node : nodes) {
        coordinates.push_back(platform.coordinates_of_node[static_cast<std::size_t>(node)]);
      }
    }
    for (int rank = 0; rank < params.ranks; ++rank) {
      transports_.push_back(std::make_unique<SimTransport>(world_, rank));
      transports_.back()->set_nodes(nodes);
      if (!coordinates.empty()) transports_.back()->set_coordinates(coordinates);
    }
  }

  std::string_view kind() const override { return "sim"; }
  int size() const override { return world_.size(); }
  double now(Transport& /*transport*/) const override { return s4u::Engine::get_clock(); }
  std::uint64_t messages() const override { return world_.messages(); }
  const SimParams& params() const override { return world_.params(); }

  EndToEndLinks end_to_end() const override {
    EndToEndLinks links = platform_.links;
    const double o = 2 * world_.params().overhead;
    if (links.beta > 0) links.alpha += o;
    if (links.intra_beta > 0) links.intra_alpha += o;
    return links;
  }

  void run(const std::function<void(Transport& transport)>& body) override {
    const s4u::BarrierPtr barrier = s4u::Barrier::create(static_cast<unsigned>(size()));
    std::exception_ptr first_error;
    int finished = 0;
    for (int rank = 0; rank < size(); ++rank) {
      SimTransport& transport = *transports_[static_cast<std::size_t>(rank)];
      transport.set_barrier(barrier);
      s4u::Actor::create(fmt::format("rank{}", rank),
                         platform_.slots[static_cast<std::size_t>(rank)], [&, rank] {
                           world_.set_actor(rank, s4u::Actor::self());
                           try {
                             body(transport);
                             ++finished;
                           } catch (const simgrid::ForcefulKillException&) {
                             throw;  // SimGrid unwinding a killed actor
                           } catch (...) {
                             if (!first_error) first_error = std::current_exception();
                             s4u::Actor::kill_all();
                           }
                         });
    }
    {
      const SimWorld::RunningWorld running(world_);
      s4u::Engine::get_instance()->run();
    }
    for (auto& transport : transports_) transport->set_barrier(nullptr);
    if (first_error) {
      world_.pending_and_reset();
      std::rethrow_exception(first_error);
    }
    if (finished != size()) {
      const std::string pending = world_.pending_and_reset();
      throw std::runtime_error(
          fmt::format("simulation deadlocked: {} of {} ranks never returned; unmatched: {}",
                      size() - finished, size(), pending));
    }
  }

 private:
  SimWorld world_;
  const sim::Platform& platform_;
  std::vector<std::unique_ptr<SimTransport>> transports_;
};

}  // namespace

std::string sim_mailbox_name(int rank) { return fmt::format("collbench-rank{}", rank); }

std::unique_ptr<SimRankGroup> make_sim_rank_group(const SimParams& params) {
  check(params);
  const sim::Platform& platform = load(params);
  return std::make_unique<SimGroup>(params, platform);
}

UntouchedBuffer::UntouchedBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (data == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<std::byte*>(data);
}

UntouchedBuffer::~UntouchedBuffer() {
  if (data_ != nullptr) munmap(data_, bytes_);
}

}  // namespace collbench
