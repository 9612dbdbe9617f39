// Each platform kind of the sim transport, in a process of its own (SimGrid
// loads one platform per process; GoogleTest's threadsafe death-test style
// runs each case's statement in a fresh child): the ping-pong between two
// ranks takes 2(α + nβ) with the α and β that end_to_end() reports for
// them, and rank r sits where the spec says.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <span>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "collbench/transport/sim_transport.h"

namespace collbench {
namespace {

// Simulated seconds of a ping-pong of `bytes` between ranks a and b.
double ping_pong(RankGroup& group, int a, int b, std::size_t bytes) {
  std::vector<std::byte> buffer_a(bytes), buffer_b(bytes);
  double start = 0, end = 0;
  group.run([&](Transport& transport) {
    if (transport.rank() == a) {
      start = group.now(transport);
      transport.wait(transport.isend(buffer_a, b, 0));
      transport.wait(transport.irecv(buffer_a, b, 1));
      end = group.now(transport);
    } else if (transport.rank() == b) {
      transport.wait(transport.irecv(buffer_b, a, 0));
      transport.wait(transport.isend(buffer_b, a, 1));
    }
  });
  return end - start;
}

bool near(double actual, double expected) {
  return std::abs(actual - expected) <= 1e-9 * expected + 1e-15;
}

// In the child: builds the group, checks the ping-pong between ranks 0 and
// `peer` against `alpha` and `beta`, and exits 0 when it agrees.
[[noreturn]] void check_and_exit(const SimParams& params, int peer, double alpha, double beta) {
  auto group = make_sim_rank_group(params);
  const std::size_t bytes = 1 << 20;
  const double seconds = ping_pong(*group, 0, peer, bytes);
  const double expected = 2 * (alpha + static_cast<double>(bytes) * beta);
  if (!near(seconds, expected)) {
    std::cerr << params.platform << ": ping-pong 0<->" << peer << " " << seconds << " s, expected "
              << expected << " s" << std::endl;
    std::exit(1);
  }
  std::exit(0);
}

SimParams platform(std::string spec, int ranks) {
  SimParams params;
  params.platform = std::move(spec);
  params.ranks = ranks;
  params.link_latency = 1e-6;
  params.link_bandwidth = 1e9;
  return params;
}

[[noreturn]] void check_reported(const SimParams& params) {
  auto group = make_sim_rank_group(params);
  const EndToEndLinks links = group->end_to_end();
  group.reset();
  check_and_exit(params, params.ppn, links.alpha, links.beta);
}

// A SimGrid platform file of one zone with full routing, `zone` its
// hosts, links and routes, in the temporary folder; removed when it goes,
// or when the process exits: a death test's child runs the test's body
// again, writes its own file and leaves by exit(), which runs no
// destructor.
class PlatformFile {
 public:
  PlatformFile(const std::string& name, const std::string& zone)
      : path_(std::filesystem::temp_directory_path() /
              (name + "_" + std::to_string(getpid()) + ".xml")) {
    removed_at_exit().push_back(path_);
    std::ofstream(path_) << "<?xml version='1.0'?>\n"
                         << "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                         << "<platform version=\"4.1\">\n  <zone id=\"z\" routing=\"Full\">\n"
                         << zone << "  </zone>\n</platform>\n";
  }
  ~PlatformFile() { std::filesystem::remove(path_); }
  PlatformFile(const PlatformFile&) = delete;
  PlatformFile& operator=(const PlatformFile&) = delete;
  std::string path() const { return path_.string(); }

 private:
  static std::vector<std::filesystem::path>& removed_at_exit() {
    static std::vector<std::filesystem::path> paths;
    // Registered after `paths` is built, so it runs before `paths` goes.
    static const int registered = std::atexit([] {
      std::error_code ignored;
      for (const auto& path : removed_at_exit()) std::filesystem::remove(path, ignored);
    });
    static_cast<void>(registered);
    return paths;
  }

  std::filesystem::path path_;
};

class SimPlatform : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(SimPlatform, StarNeighboursAreTwoLinksApart) {
  EXPECT_EXIT(check_and_exit(platform("star", 4), 1, 2e-6, 1e-9), ::testing::ExitedWithCode(0), "");
}

TEST_F(SimPlatform, TorusFatTreeAndDragonflyAgreeWithTheirRoutes) {
  for (const auto& [spec, ranks] :
       std::vector<std::pair<std::string, int>>{{"torus:2x3", 6},
                                                {"torus:2x2x2", 8},
                                                {"fat-tree:2;4,4;1,2;1,2", 16},
                                                {"dragonfly:2,1;2,1;2,1;2", 16}}) {
    EXPECT_EXIT(check_reported(platform(spec, ranks)), ::testing::ExitedWithCode(0), "") << spec;
  }
}

// In the child: on an 8x4x4 torus (sides that differ), every rank whose
// coordinates differ from rank 0's by one step along one dimension is one
// link away, as the torus forms of Swing assume; exits 0 when all are.
[[noreturn]] void check_torus_coordinates_and_exit() {
  const SimParams params = platform("torus:8x4x4", 128);
  auto group = make_sim_rank_group(params);
  std::vector<int> neighbours;
  group->run([&](Transport& transport) {
    if (transport.rank() != 0) return;
    const std::span<const int> origin = transport.coordinates_of(0);
    for (int rank = 1; rank < transport.size(); ++rank) {
      const std::span<const int> where = transport.coordinates_of(rank);
      int steps = 0;
      for (std::size_t d = 0; d < where.size(); ++d) {
        const int sides[] = {8, 4, 4};
        const int apart = std::abs(where[d] - origin[d]);
        steps += std::min(apart, sides[d] - apart);
      }
      if (steps == 1) neighbours.push_back(rank);
    }
  });
  for (const int rank : neighbours) {
    const double seconds = ping_pong(*group, 0, rank, 8);
    const double one_link = 2 * (params.link_latency + 8 / params.link_bandwidth);
    if (!near(seconds, one_link)) {
      std::cerr << "rank " << rank << " is a coordinate step from rank 0 but its ping-pong takes "
                << seconds << " s, one link's " << one_link << " s" << std::endl;
      std::exit(1);
    }
  }
  std::exit(neighbours.size() == 6 ? 0 : 1);
}

TEST_F(SimPlatform, ATorusCoordinateStepIsOneLink) {
  EXPECT_EXIT(check_torus_coordinates_and_exit(), ::testing::ExitedWithCode(0), "");
}

// CM02 shares a link between flows in inverse proportion to their routes'
// latency (its sharing penalty is the route's latency: SimGrid's
// network_cm02.cpp; docs/sim-sharing.md), not equally: on the star every
// route is as long and the shares are equal, on a fat-tree or a torus a
// flow from farther gets less. Pinned here so that a change of model shows:
// ranks 1 (route latency 2l) and 2 (4l) each send n bytes to rank 0 at
// once through rank 0's link. Weighted 2:1, rank 1's ends at l + 1.5nβ;
// shared equally it would end at 2nβ. Rank 2's ends at 2l + 2nβ either way
// (the link carries 2n from 2l on).
[[noreturn]] void check_latency_weighted_sharing_and_exit(const std::string& path) {
  constexpr double kLatency = 1e-6;  // l
  constexpr double kRate = 1e9;      // 1/β of every link
  SimParams params = platform(path, 3);
  auto group = make_sim_rank_group(params);
  const std::size_t bytes = 1 << 20;
  std::vector<std::vector<std::byte>> buffers(3, std::vector<std::byte>(2 * bytes));
  std::vector<double> ends(3);
  double start = 0;
  group->run([&](Transport& transport) {
    start = group->now(transport);
    auto& mine = buffers[static_cast<std::size_t>(transport.rank())];
    if (transport.rank() == 0) {
      const RequestId receives[] = {transport.irecv(std::span(mine).first(bytes), 1, 0),
                                    transport.irecv(std::span(mine).last(bytes), 2, 0)};
      transport.wait(receives[0]);
      ends[1] = group->now(transport);
      transport.wait(receives[1]);
      ends[2] = group->now(transport);
    } else {
      transport.wait(transport.isend(std::span(mine).first(bytes), 0, 0));
    }
  });
  const double n_beta = static_cast<double>(bytes) / kRate;
  const double near_expected = kLatency + 1.5 * n_beta, far_expected = 2 * kLatency + 2 * n_beta;
  const auto agrees = [](double actual, double expected) {
    return std::abs(actual - expected) <= 1e-6 * expected;
  };
  if (!agrees(ends[1] - start, near_expected) || !agrees(ends[2] - start, far_expected)) {
    std::cerr << "near flow ended at " << ends[1] - start << " s (expected " << near_expected
              << "; shared equally: " << 2 * n_beta << "), far at " << ends[2] - start
              << " s (expected " << far_expected << ")" << std::endl;
    std::exit(1);
  }
  std::exit(0);
}

TEST_F(SimPlatform, FlowsShareALinkInInverseProportionToTheirRoutesLatency) {
  // into0 is rank 0's link; rank 1 reaches it over one more link (2l in all),
  // rank 2 over two more (l + 2l + l = 4l).
  const PlatformFile file("collbench_sim_sharing", R"(    <host id="h0" speed="1Gf"/>
    <host id="h1" speed="1Gf"/>
    <host id="h2" speed="1Gf"/>
    <link id="into0" bandwidth="1GBps" latency="1us"/>
    <link id="from1" bandwidth="1GBps" latency="1us"/>
    <link id="from2a" bandwidth="1GBps" latency="1us"/>
    <link id="from2b" bandwidth="1GBps" latency="2us"/>
    <link id="between" bandwidth="1GBps" latency="1us"/>
    <route src="h1" dst="h0"><link_ctn id="from1"/><link_ctn id="into0"/></route>
    <route src="h2" dst="h0"><link_ctn id="from2a"/><link_ctn id="from2b"/><link_ctn id="into0"/></route>
    <route src="h1" dst="h2"><link_ctn id="between"/></route>
)");
  EXPECT_EXIT(check_latency_weighted_sharing_and_exit(file.path()), ::testing::ExitedWithCode(0),
              "");
}

// What --calibration divides the end-to-end α by, read from the spec alone
// (building a platform checks it against SimGrid's route: the cases above).
TEST(SimPlatformLinks, FirstRouteLinksFromTheSpec) {
  EXPECT_EQ(first_route_links(platform("star", 4)), 2);
  EXPECT_EQ(first_route_links(platform("torus:2x3", 6)), 1);
  EXPECT_EQ(first_route_links(platform("torus:1x4", 4)), 1);
  EXPECT_EQ(first_route_links(platform("fat-tree:2;4,4;1,2;1,2", 16)), 2);
  EXPECT_EQ(first_route_links(platform("fat-tree:2;1,4;1,1;1,1", 4)), 4);
  // Not one number of links of one latency: refused by --calibration.
  EXPECT_EQ(first_route_links(platform("dragonfly:2,1;2,1;2,1;2", 16)), 0);
  EXPECT_EQ(first_route_links(platform("platform.xml", 4)), 0);
  SimParams two_per_node = platform("star", 4);
  two_per_node.ppn = 2;
  EXPECT_EQ(first_route_links(two_per_node), 0);
  EXPECT_THROW(first_route_links(platform("fat-tree:2;4", 4)), std::invalid_argument);
}

// ppn = 2: ranks 0 and 1 share node 0, behind intra links of 0.1 µs and
// 50 GB/s each; rank 2 is on node 1, whose route adds both intra links.
TEST_F(SimPlatform, RanksPerNodeSitBehindIntraNodeLinks) {
  SimParams params = platform("star", 6);
  params.ppn = 2;
  params.intra_latency = 0.1e-6;
  params.intra_bandwidth = 5e10;
  EXPECT_EXIT(check_and_exit(params, 1, 0.2e-6, 1 / 5e10), ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(check_and_exit(params, 2, 2.2e-6, 1e-9), ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(check_reported(params), ::testing::ExitedWithCode(0), "");
}

// Hosts declared c, a, b (not in name order): rank 0 on c, rank 1 on a,
// whose route is the 1 ms link (a then b would take the 3 ms one).
TEST_F(SimPlatform, AnXmlFilesHostsTakeRanksInTheOrderItDeclaresThem) {
  const PlatformFile file("collbench_sim_platform", R"(    <host id="c" speed="1Gf"/>
    <host id="a" speed="1Gf"/>
    <host id="b" speed="1Gf"/>
    <link id="ca" bandwidth="1GBps" latency="1ms"/>
    <link id="cb" bandwidth="1GBps" latency="2ms"/>
    <link id="ab" bandwidth="1GBps" latency="3ms"/>
    <route src="c" dst="a"><link_ctn id="ca"/></route>
    <route src="c" dst="b"><link_ctn id="cb"/></route>
    <route src="a" dst="b"><link_ctn id="ab"/></route>
)");
  SimParams params = platform(file.path(), 3);
  EXPECT_EXIT(check_and_exit(params, 1, 1e-3, 1e-9), ::testing::ExitedWithCode(0), "");
  params.ranks = 2;
  EXPECT_EXIT(
      {
        try {
          make_sim_rank_group(params);
        } catch (const std::invalid_argument& error) {
          std::cerr << error.what() << std::endl;
          std::exit(3);
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(3), "give --ranks 3");
}

}  // namespace
}  // namespace collbench
