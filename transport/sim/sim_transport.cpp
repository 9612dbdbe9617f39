// The sim transport (sim_transport.h): matching, simulated transfers and
// charged local work, on the actors of the process's one SimGrid engine.
//
// Actors are coroutines of one OS thread, so the matching state below is
// shared by every rank without a lock: an actor runs alone until it makes a
// simcall (a sleep, starting a communication, a suspend, a resume), where
// others may run. Starting a transfer is one: a matched pair is marked
// `starting` first, so that its waiters sleep until it is running.
#include "collbench/transport/sim_transport.h"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <exception>
#include <memory_resource>
#include <new>
#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>
#include <string>
#include <unordered_map>

#include "platform.h"

namespace collbench {
namespace {

namespace s4u = simgrid::s4u;

// A test() that finds its request incomplete lets this much simulated time
// pass: a rank that polls would otherwise keep the clock from advancing.
constexpr double kTestPollSeconds = 1e-7;

struct Handle {
  int rank;
  RequestId id;
};

constexpr RequestId kNoRequest = ~RequestId{0};

enum class Stage { unmatched, starting, running };

// A rank holds one per pending request: p - 1 receives and as many sends at
// once in ring's allgather, so its size counts p^2 times (72 bytes; with
// its error as a string it was 112).
struct Operation {
  const std::byte* send_data = nullptr;
  std::byte* recv_data = nullptr;
  std::size_t bytes = 0;
  // Running: the transfer, or null for one that failed (error) or carries
  // no byte, which is over at `arrival`. (SimGrid 3.32 does not start a
  // host-to-host communication of 0 bytes until it is waited for, and then
  // once per waiter: two flows, one of which stays on the links.)
  s4u::CommPtr comm;
  double arrival = 0;
  // With a comm: the other side's operation, which holds the same comm
  // until one of the two waits sees it complete.
  Handle partner{-1, kNoRequest};
  int peer = -1;
  int tag = -1;
  // Unmatched: the next younger operation of its queue (SimWorld::Unmatched).
  RequestId next = kNoRequest;
  // 0, or 1 + the index of its failure's message in SimWorld::errors_.
  std::uint32_t error = 0;
  bool is_send = false;
  Stage stage = Stage::unmatched;
};
static_assert(sizeof(Operation) <= 72, "an Operation counts p^2 times");

struct RankState {
  std::vector<Operation> operations;
  std::vector<RequestId> free;
  s4u::Actor* actor = nullptr;  // while run() runs
  bool suspended = false;       // waits for a match (resume it on one)
};

}  // namespace

// The ranks' operations and the unmatched ones, for one group.
class SimWorld {
 public:
  SimWorld(const SimParams& params, const sim::Platform& platform)
      : params_(params), platform_(platform), ranks_(static_cast<std::size_t>(params.ranks)) {}

  const SimParams& params() const { return params_; }
  int size() const { return params_.ranks; }
  std::uint64_t messages() const { return messages_; }
  void set_actor(int rank, s4u::Actor* actor) { state(rank).actor = actor; }

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
    op.send_data = send_data;
    op.recv_data = recv_data;
    op.bytes = bytes;
    op.peer = peer;
    op.tag = tag;
    op.is_send = is_send;
    if (is_send) ++messages_;
    // At any time a (destination, source, tag) has unmatched sends or
    // unmatched receives, never both: a new operation either matches the
    // oldest of the other kind or queues behind its own kind. MPI's order.
    const int destination = is_send ? peer : rank;
    const int source = is_send ? rank : peer;
    const std::uint64_t key = (static_cast<std::uint64_t>(destination) << 40) |
                              (static_cast<std::uint64_t>(source) << 16) |
                              static_cast<std::uint64_t>(tag);
    const auto [found, added] = unmatched_.try_emplace(key, Unmatched{is_send, id, id});
    if (added) return id;
    Unmatched& queue = found->second;
    if (queue.sends == is_send) {
      self.operations[queue.youngest].next = id;
      queue.youngest = id;
      return id;
    }
    // A queue's operations are all sends of `source` or all receives of
    // `destination`: all of one rank, the other side of this one.
    const Handle theirs{is_send ? destination : source, queue.oldest};
    queue.oldest = operation(theirs).next;
    if (queue.oldest == kNoRequest) unmatched_.erase(found);
    const Handle mine{rank, id};
    match(is_send ? mine : theirs, is_send ? theirs : mine);
    return id;
  }

  // Blocks the calling actor until every request has completed, charges o
  // for each receive among them, releases them and throws the first error.
  void wait_all(int rank, std::span<const RequestId> requests) {
    RankState& self = state(rank);
    const auto all_running = [&] {
      for (const RequestId id : requests) {
        if (self.operations[id].stage != Stage::running) return false;
      }
      return true;
    };
    while (!all_running()) {
      self.suspended = true;
      s4u::this_actor::suspend();
    }
    int receives = 0;
    for (const RequestId id : requests) {
      // Only this rank adds operations of its own, so `self.operations`
      // does not move while others run during the wait.
      if (const s4u::CommPtr comm = self.operations[id].comm) {
        // Not comm->wait(): SimGrid 3.32 starts an endless sleep on the
        // waiter's CPU beside each wait (to learn of host failures, which
        // are not simulated here) and, when both sides of a host-to-host
        // comm wait while it runs, keeps the first one's for ever: an LMM
        // variable and 0.4 KB per message. A wait for any of one comm
        // starts none. (A test() may have seen it finish already.)
        if (comm->get_state() != s4u::Activity::State::FINISHED) s4u::Comm::wait_any({comm});
        forget(self.operations[id]);
      } else if (self.operations[id].arrival > s4u::Engine::get_clock()) {
        s4u::this_actor::sleep_until(self.operations[id].arrival);
      }
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

  bool test(int rank, RequestId request) {
    const Operation& op = state(rank).operations[request];
    // Held here: the partner's wait may drop op's during the test (a simcall).
    const s4u::CommPtr comm = op.comm;
    const bool over = op.stage == Stage::running &&
                      (comm ? comm->test() : op.arrival <= s4u::Engine::get_clock());
    if (!over) {
      s4u::this_actor::sleep_for(kTestPollSeconds);
      return false;
    }
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
        if (op.peer < 0 || op.stage != Stage::unmatched || listed >= 8) continue;
        pending += fmt::format("{}rank {} {} rank {} tag {}", listed++ > 0 ? ", " : "", rank,
                               op.is_send ? "sends to" : "receives from", op.peer, op.tag);
      }
      self.operations.clear();
      self.free.clear();
      self.suspended = false;
      self.actor = nullptr;
    }
    unmatched_.clear();
    errors_.clear();
    return pending.empty() ? "nothing unmatched" : pending;
  }

 private:
  // A queue threaded through its operations' `next`, so that queuing
  // allocates nothing; the map's nodes come from a pool, reused as queues
  // empty and new ones start (a node per queue was a malloc per message).
  struct Unmatched {
    bool sends = false;
    RequestId oldest = kNoRequest;
    RequestId youngest = kNoRequest;
  };

  RankState& state(int rank) { return ranks_[static_cast<std::size_t>(rank)]; }

  Operation& operation(Handle handle) { return state(handle.rank).operations[handle.id]; }

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
    s4u::Host* from = platform_.slots[static_cast<std::size_t>(send.rank)];
    s4u::Host* to = platform_.slots[static_cast<std::size_t>(recv.rank)];
    s4u::CommPtr comm;
    double arrival = s4u::Engine::get_clock();
    if (bytes == 0) {
      std::vector<s4u::Link*> links;
      double latency = 0;
      from->route_to(to, links, &latency);
      arrival += latency;
    } else if (send_op.error == 0) {
      send_op.stage = recv_op.stage = Stage::starting;
      comm = s4u::Comm::sendto_async(from, to, bytes);  // a simcall: references may dangle
    }
    for (const auto& [handle, partner] : {std::pair{send, recv}, std::pair{recv, send}}) {
      Operation& op = operation(handle);
      op.comm = comm;
      op.arrival = arrival;
      op.stage = Stage::running;
      op.partner = partner;
    }
    wake(send.rank);
    wake(recv.rank);
  }

  // A completed transfer is over at its arrival, now: both sides drop the
  // comm, so that SimGrid frees it when the first side's wait returns, not
  // when the second's does (ring's allgather waits for its p - 1 sends only
  // at the phase's end: p^2 finished comms alive). Only while an operation
  // holds a comm is its partner sure to exist.
  void forget(Operation& op) {
    if (!op.comm) return;  // both waited, and the partner's returned first
    for (Operation* side : {&op, &operation(op.partner)}) {
      side->comm = nullptr;
      side->arrival = s4u::Engine::get_clock();
    }
  }

  void wake(int rank) {
    RankState& waiter = state(rank);
    if (!waiter.suspended) return;
    waiter.suspended = false;
    waiter.actor->resume();
  }

  static void release(RankState& self, RequestId id) {
    self.operations[id] = Operation{};
    self.free.push_back(id);
  }

  const SimParams params_;
  const sim::Platform& platform_;
  std::vector<RankState> ranks_;
  std::pmr::unsynchronized_pool_resource pool_;
  std::pmr::unordered_map<std::uint64_t, Unmatched> unmatched_{&pool_};
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
  args.insert(args.end(), params.simgrid_args.begin(), params.simgrid_args.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  self.engine = std::make_unique<s4u::Engine>(&argc, argv.data());
  self.platform = sim::build_platform(params);
  self.platform_key = key;
  return self.platform;
}

class SimGroup final : public SimRankGroup {
 public:
  SimGroup(const SimParams& params, const sim::Platform& platform)
      : world_(params, platform), platform_(platform) {
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
    s4u::Engine::get_instance()->run();
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
