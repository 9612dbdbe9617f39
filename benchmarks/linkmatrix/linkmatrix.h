// The all-pairs link matrix (collbench-linkmatrix): its measurement schedule
// and the analysis that names slow links and slow hosts.
//
// Schedule. Every unordered pair of hosts is measured once, in the rounds of
// a round-robin tournament (the circle method): within a round the pairs are
// disjoint, so when every host has its own link into a non-blocking switch,
// the pairs of one round share no link and each link is measured alone even
// though the round's pairs run at the same time. On a fabric that is not
// non-blocking, --serial measures one pair at a time.
//
// Analysis. A directed link s→d is limited by s's sending side and d's
// receiving side. A host's sending capacity is its best outgoing link (the
// fastest link shows what its port can do); its receiving capacity its best
// incoming link; its latency its best (lowest) link latency. The reference is
// the median over hosts of each, so that a slow host does not drag the
// reference down however many links it has (the median over links would be
// ambiguous with half the links touching slow hosts). Then:
//   - a host is slow when its sending or receiving capacity is below
//     (1 − bandwidth threshold) × the median;
//   - a host has high latency when its latency is above (1 + latency
//     threshold) × the median host latency;
//   - a link is slow when its bandwidth is below (1 − bandwidth threshold) ×
//     the median link between hosts that are not slow, and has high latency
//     when its latency is above (1 + latency threshold) × the median link
//     between hosts without high latency (all links when none qualifies);
//   - a slow link whose sender or receiver is a slow host is "explained" by
//     it; the others point at the fabric between them (cable, switch port).
// With two hosts there is one link and nothing to compare a host with: both
// hosts get the same verdict.
#pragma once

#include <span>
#include <string>
#include <utility>
#include <vector>

namespace collbench::linkmatrix {

// Rounds of pairs (a, b), a < b, covering each unordered pair of 0..n−1
// exactly once; the pairs of a round are disjoint. n−1 rounds for even n, n
// rounds for odd n (one host sits out each round). Empty for n < 2.
std::vector<std::vector<std::pair<int, int>>> round_robin(int n);

struct LinkMeasurement {
  int src = 0;
  int dst = 0;
  double latency_us = 0;      // half round trip of a small message on this pair
  double bandwidth_GBps = 0;  // one-way, src → dst
};

struct Thresholds {
  double bandwidth = 0.25;  // slow: below (1 − bandwidth) × median
  double latency = 1.0;     // high latency: above (1 + latency) × median
};

struct LinkVerdict {
  bool slow = false;
  bool high_latency = false;
  bool explained = false;  // slow, and its src or dst is a slow host
};

struct HostVerdict {
  double send_GBps = 0;   // best outgoing link
  double recv_GBps = 0;   // best incoming link
  double latency_us = 0;  // best link latency
  bool slow_send = false;
  bool slow_recv = false;
  bool high_latency = false;
  bool slow() const { return slow_send || slow_recv; }
};

struct Analysis {
  double median_send_GBps = 0;
  double median_recv_GBps = 0;
  double median_latency_us = 0;
  double median_link_GBps = 0;        // reference of the link verdicts
  double median_link_latency_us = 0;  // reference of the link verdicts
  std::vector<HostVerdict> hosts;     // one per host 0..n−1
  std::vector<LinkVerdict> links;     // one per measurement, same order
};

// Throws std::invalid_argument when a link names a host outside 0..hosts−1,
// a host has no link, a value is not finite and positive, or a threshold is
// outside [0, 1) for bandwidth or negative for latency.
Analysis analyze(int hosts, std::span<const LinkMeasurement> links, const Thresholds& thresholds);

// Median of the values (mean of the middle two for an even count); 0 when empty.
double median(std::vector<double> values);

}  // namespace collbench::linkmatrix
