// The simulated transport: ranks are SimGrid (S4U) actors on a simulated
// platform, all in this process, so that collbench's own algorithm objects
// run at rank counts this machine cannot host.
//
// One simgrid::s4u::Engine per process, built by the first
// make_sim_rank_group: its clock never resets and its platform, once loaded,
// cannot change (SimGrid seals it at the first run), so every later group of
// the process must describe the same platform.
//
// Messages: isend/irecv match inside collbench, as MPI does (the oldest
// unmatched send of the same source and tag first), in queues keyed by
// (destination, source, tag) that hold only what is unmatched. At the
// match, the rank that matched starts both halves of a SimGrid
// communication of the message's size on the receiver's mailbox (one per
// rank, for as long as the engine lives), each for its own rank's actor, so
// that the transfer runs from the sender's host to the receiver's from the
// match on (rendezvous, as every transfer of the in-process transport). A receive
// shorter than the message fails both requests. Messages from one rank to
// another follow each other as on one connection: a pair matched while an
// earlier one of the same two ranks runs starts when that one ends, with
// only what is left of the route's latency since its match (the latencies
// of consecutive messages overlap, their bytes queue). test() never blocks:
// a request not matched, queued on its lane or still running is not done,
// and asking costs no simulated time unless a rank keeps polling at one
// instant (sim_transport.cpp, kEmptyPollsPerInstant).
//
// Time charged, all of it simulated (real time spent never counts):
//   - per message, LogGP's o on the sending actor before the send leaves and
//     on the receiving actor when its wait sees the receive complete;
//   - reductions (reduce, reduce_into): bytes / gamma_rate (the model's γ
//     term, n·γ); scale_for_average and copies: bytes / memory_rate. A rate
//     of 0 charges nothing.
//   - compute (SimulatedCompute::compute): the seconds given, on the
//     calling actor (the train family's layers).
// The network model is CM02 without cross-traffic, split-duplex links and
// no TCP window (make_sim_rank_group sets it before the platform is built),
// so that a message of n bytes alone on a route costs exactly
// latency + n / bandwidth of the route, and flows share bandwidth max-min.
//
// Size-only mode (payload = false): the same messages and times, but no
// byte is copied or reduced. Nothing then reads or writes the buffers the
// algorithms are given, so they may be address space that was never touched:
// allocate_untouched() maps anonymous memory without reserving swap, whose
// pages the kernel only backs when written, so that p·n need not fit in RAM.
// The algorithms' own workspaces are left untouched too
// (SimulatedCompute::size_only), so they are address space only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/transport/rank_group.h"

namespace collbench {

// Strict unit parsing (std::invalid_argument naming the fix on bad input):
// a number and a unit, no space, SI prefixes. Latency: s, ms, us, ns.
double parse_latency(std::string_view text);
// Bandwidth, in bytes per second: Bps, kBps, MBps, GBps (bytes) or bps,
// kbps, Mbps, Gbps (bits), as SimGrid writes them; must be positive.
double parse_bandwidth(std::string_view text);
// A rate of bytes per second as above, or "0" (nothing charged).
double parse_rate_or_zero(std::string_view text);
// A compute rate, FLOP/s: a number with an optional SI prefix (k, M, G, T,
// P, E), e.g. 10T or 2.5e12; must be positive.
double parse_flops(std::string_view text);

// The most ranks one simulation takes. Actors are coroutines of one thread:
// a simulated rank costs a stack and its buffers, not a core.
constexpr int kMaxSimRanks = 1 << 20;

struct SimParams {
  int ranks = 1;
  // "star" or "star:N" (N nodes on one switch; "star" has ranks / ppn),
  // "fat-tree:L;D1,..;U1,..;C1,.." (SimGrid's string), "torus:AxB" or
  // "torus:AxBxC", "dragonfly:G,g;C,c;R,r;N" (SimGrid's string), or the path
  // of a SimGrid platform XML file (ranks placed on its hosts in the order
  // the file declares them, ppn ranks per host sharing it).
  std::string platform = "star";
  int ppn = 1;                   // ranks per node, behind an intra-node link each
  double link_latency = 1e-6;    // s, per link of the generated platforms
  double link_bandwidth = 1e10;  // bytes/s, per link
  double intra_latency = 1e-7;   // s, per intra-node link (ppn > 1)
  double intra_bandwidth = 5e10;
  double gamma_rate = 0;   // reduced bytes per second; 0: reductions are free
  double memory_rate = 0;  // copied bytes per second; 0: copies are free
  double overhead = 0;     // o, s per message on each side
  bool payload = true;     // false: size-only mode
  // Whether `ranks` may be fewer than the platform's nodes × ppn (the group
  // then uses the first slots): tests of many p on one platform. Otherwise
  // they must be equal, as a user's command line must.
  bool allow_unused_slots = false;
  // Passed to SimGrid as they are ("--cfg=...", "--log=..."), after ours:
  // SimGrid's log is silenced (critical only) unless one of these says
  // otherwise.
  std::vector<std::string> simgrid_args;
};

// What a ping-pong between the first ranks of two nodes would measure:
// α = the route's latency + 2o, β = 1 / the route's narrowest link; and
// inside one node (ppn > 1; zeros otherwise).
struct EndToEndLinks {
  double alpha = 0, beta = 0;
  double intra_alpha = 0, intra_beta = 0;
};

class SimRankGroup : public RankGroup {
 public:
  // The network model, as the CSV records it.
  static constexpr std::string_view kNetworkModel = "CM02,crosstraffic=0,splitduplex,no-tcp-gamma";
  virtual EndToEndLinks end_to_end() const = 0;
  // What it was built from.
  virtual const SimParams& params() const = 0;
  // Messages the simulated ranks have sent since the group was built.
  virtual std::uint64_t messages() const = 0;
};

// What a simulated rank has and a real one has not: compute that is not
// done but charged, `seconds` on this rank's simulated clock (the train
// family's layers). The sim transport's ranks implement it; find it with
// dynamic_cast on Transport::unwrapped(). Throws std::invalid_argument for
// a negative or non-finite time.
class SimulatedCompute {
 public:
  virtual void compute(double seconds) = 0;
  // Size-only mode: no message, reduction or copy reads or writes a buffer,
  // so an algorithm's workspace needs no memory behind it.
  virtual bool size_only() const = 0;

 protected:
  ~SimulatedCompute() = default;
};

// Links on the route between the first two nodes of `params`' platform,
// whose latencies add up to the α a ping-pong between them measures (less
// 2o), all of one --link-latency: 2 on a star (each node's own), 2·l on a
// fat-tree whose first two nodes meet at level l, 1 on a torus (neighbours
// in its first dimension). Read from the spec, before anything is built;
// building the platform checks it against SimGrid's route. 0 where it is not
// one number of links of one latency: a dragonfly, an XML file, ppn > 1
// (the route adds two intra-node links). Throws std::invalid_argument for a
// malformed spec.
int first_route_links(const SimParams& params);

// Builds (the first time, with the platform) or reuses the process's
// engine. Throws std::invalid_argument for bad parameters or a platform
// other than the one already loaded, with one sentence saying what to fix;
// the first time, simgrid_args that SimGrid dies on (it aborts rather than
// throws on many values it parses) are found in a forked child first.
std::unique_ptr<SimRankGroup> make_sim_rank_group(const SimParams& params);

// The SimGrid mailbox on which rank `rank`'s incoming messages pair, one
// per rank for the engine's life, shared by every group of the process
// (so another comm put there must never pair with collbench's).
std::string sim_mailbox_name(int rank);

// `bytes` of anonymous memory that is never backed until written (see
// size-only mode above); unmapped when the returned object goes away.
class UntouchedBuffer {
 public:
  explicit UntouchedBuffer(std::size_t bytes);
  ~UntouchedBuffer();
  UntouchedBuffer(const UntouchedBuffer&) = delete;
  UntouchedBuffer& operator=(const UntouchedBuffer&) = delete;
  std::span<std::byte> span() const { return {data_, bytes_}; }

 private:
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace collbench
