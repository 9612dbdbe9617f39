// The link matrix's schedule and verdicts (benchmarks/linkmatrix/linkmatrix.h).
#include "linkmatrix.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

namespace collbench::linkmatrix {
namespace {

TEST(RoundRobin, EveryPairOnceAndRoundsAreMatchings) {
  for (int n = 2; n <= 17; ++n) {
    const auto rounds = round_robin(n);
    EXPECT_EQ(rounds.size(), static_cast<std::size_t>(n % 2 == 0 ? n - 1 : n)) << "n=" << n;
    std::set<std::pair<int, int>> seen;
    for (const auto& round : rounds) {
      std::set<int> busy;
      for (const auto& [a, b] : round) {
        EXPECT_LT(a, b);
        EXPECT_GE(a, 0);
        EXPECT_LT(b, n);
        EXPECT_TRUE(busy.insert(a).second) << "host " << a << " twice in a round, n=" << n;
        EXPECT_TRUE(busy.insert(b).second) << "host " << b << " twice in a round, n=" << n;
        EXPECT_TRUE(seen.insert({a, b}).second) << a << "-" << b << " twice, n=" << n;
      }
      // A perfect matching for even n; one host sits out for odd n.
      EXPECT_EQ(busy.size(), static_cast<std::size_t>(n % 2 == 0 ? n : n - 1));
    }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(n * (n - 1) / 2));
  }
  EXPECT_TRUE(round_robin(1).empty());
  EXPECT_TRUE(round_robin(0).empty());
}

// All directed links of n hosts; a link's bandwidth is the smaller of its
// ends' rates, its latency the larger of theirs.
std::vector<LinkMeasurement> links_of(const std::vector<double>& rate,
                                      const std::vector<double>& latency) {
  std::vector<LinkMeasurement> links;
  const int n = static_cast<int>(rate.size());
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      if (s == d) continue;
      links.push_back(
          {s, d,
           std::max(latency[static_cast<std::size_t>(s)], latency[static_cast<std::size_t>(d)]),
           std::min(rate[static_cast<std::size_t>(s)], rate[static_cast<std::size_t>(d)])});
    }
  }
  return links;
}

TEST(Analyze, NamesTheSlowHostAndNoOther) {
  // 4 hosts, host 3 at a quarter of the rate: half of the 12 links touch it,
  // which a median over links could not resolve.
  const auto links = links_of({25, 25, 25, 6.25}, {10, 10, 10, 12});
  const Analysis a = analyze(4, links, {});
  EXPECT_DOUBLE_EQ(a.median_send_GBps, 25);
  for (int h = 0; h < 3; ++h) EXPECT_FALSE(a.hosts[static_cast<std::size_t>(h)].slow()) << h;
  EXPECT_TRUE(a.hosts[3].slow_send);
  EXPECT_TRUE(a.hosts[3].slow_recv);
  for (std::size_t i = 0; i < links.size(); ++i) {
    const bool touches = links[i].src == 3 || links[i].dst == 3;
    EXPECT_EQ(a.links[i].slow, touches);
    EXPECT_EQ(a.links[i].explained, touches);
    EXPECT_FALSE(a.links[i].high_latency);
  }
}

TEST(Analyze, TwoSlowHostsOfFive) {
  const auto links = links_of({10, 10, 10, 2, 3}, {1, 1, 1, 1, 1});
  const Analysis a = analyze(5, links, {});
  EXPECT_FALSE(a.hosts[0].slow());
  EXPECT_TRUE(a.hosts[3].slow());
  EXPECT_TRUE(a.hosts[4].slow());
}

TEST(Analyze, SlowLinkBetweenGoodHostsIsNotExplained) {
  auto links = links_of({10, 10, 10, 10}, {2, 2, 2, 2});
  for (auto& link : links) {
    if ((link.src == 1 && link.dst == 2) || (link.src == 2 && link.dst == 1)) {
      link.bandwidth_GBps = 4;
      link.latency_us = 9;
    }
  }
  const Analysis a = analyze(4, links, {});
  for (const HostVerdict& host : a.hosts) {
    EXPECT_FALSE(host.slow());
    EXPECT_FALSE(host.high_latency);
  }
  int slow = 0;
  for (std::size_t i = 0; i < links.size(); ++i) {
    if (a.links[i].slow) {
      ++slow;
      EXPECT_FALSE(a.links[i].explained);
      EXPECT_TRUE(a.links[i].high_latency);
    }
  }
  EXPECT_EQ(slow, 2);
}

TEST(Analyze, HighLatencyHost) {
  const auto links = links_of({10, 10, 10, 10}, {2, 2, 2, 7});
  const Analysis a = analyze(4, links, {0.25, 1.0});
  EXPECT_TRUE(a.hosts[3].high_latency);
  EXPECT_FALSE(a.hosts[0].high_latency);
  EXPECT_FALSE(a.hosts[3].slow());
}

TEST(Analyze, UniformClusterFlagsNothingWithinTheThreshold) {
  auto links = links_of({10, 10, 10, 10}, {2, 2, 2, 2});
  for (std::size_t i = 0; i < links.size(); ++i) {
    links[i].bandwidth_GBps *= 1 - 0.02 * static_cast<double>(i % 5);  // up to 8% low
  }
  const Analysis a = analyze(4, links, {});
  for (const HostVerdict& host : a.hosts) EXPECT_FALSE(host.slow());
  for (const LinkVerdict& link : a.links) EXPECT_FALSE(link.slow);
}

TEST(Analyze, RejectsBadInput) {
  const auto links = links_of({1, 1, 1}, {1, 1, 1});
  EXPECT_THROW(analyze(1, links, {}), std::invalid_argument);
  EXPECT_THROW(analyze(3, links, {1.5, 1.0}), std::invalid_argument);
  EXPECT_THROW(analyze(3, links, {0.25, -1}), std::invalid_argument);
  auto bad = links;
  bad[0].bandwidth_GBps = 0;
  EXPECT_THROW(analyze(3, bad, {}), std::invalid_argument);
  bad = links;
  bad[0].dst = 7;
  EXPECT_THROW(analyze(3, bad, {}), std::invalid_argument);
  // Host 2 never sends.
  std::vector<LinkMeasurement> partial;
  for (const auto& link : links) {
    if (link.src != 2) partial.push_back(link);
  }
  EXPECT_THROW(analyze(3, partial, {}), std::invalid_argument);
}

TEST(Median, OddEvenEmpty) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 2, 3}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0);
}

}  // namespace
}  // namespace collbench::linkmatrix
