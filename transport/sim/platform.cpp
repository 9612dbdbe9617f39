// Platforms from a spec string: a star, SimGrid's fat-tree, torus and
// dragonfly clusters, or a platform XML file. Every link is split-duplex
// (SimGrid's SPLITDUPLEX: the two directions do not share bandwidth). With
// ppn > 1 a node is a star zone of its ppn hosts, each behind its own
// intra-node link to the node's router, the node's gateway to the network.
#include "platform.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <functional>
#include <limits>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <stdexcept>

namespace collbench::sim {
namespace {

namespace s4u = simgrid::s4u;
using simgrid::kernel::routing::NetPoint;
using Direction = s4u::LinkInRoute::Direction;

constexpr double kHostSpeed = 1e9;  // flop/s; nothing computes on the hosts

constexpr std::string_view kSpecs =
    "star, star:N, fat-tree:L;D1,...;U1,...;C1,..., torus:AxB, torus:AxBxC, "
    "dragonfly:G,g;C,c;R,r;N or a SimGrid platform XML file";

[[noreturn]] void bad_spec(std::string_view spec, std::string_view why) {
  throw std::invalid_argument(fmt::format("platform '{}': {}; write one of {}", spec, why, kSpecs));
}

unsigned positive(std::string_view spec, std::string_view text) {
  unsigned value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value == 0) {
    bad_spec(spec, fmt::format("'{}' is not a positive integer", text));
  }
  return value;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (;;) {
    const auto at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

std::vector<unsigned> positives(std::string_view spec, std::string_view text, char separator) {
  std::vector<unsigned> values;
  for (const std::string_view part : split(text, separator)) values.push_back(positive(spec, part));
  return values;
}

// Builds the node of index `id` in `zone` and fills its rank slots; returns
// its netpoint and gateway (null for a single host).
class NodeMaker {
 public:
  NodeMaker(const SimParams& params, Platform& platform) : params_(params), platform_(platform) {}

  std::pair<NetPoint*, NetPoint*> make(s4u::NetZone* zone, unsigned long id) {
    const std::string name = fmt::format("node{}", id);
    const int node = static_cast<int>(id);
    if (params_.ppn == 1) {
      s4u::Host* host = zone->create_host(name, kHostSpeed)->seal();
      place(static_cast<std::size_t>(id), host, node);
      return {host->get_netpoint(), nullptr};
    }
    s4u::NetZone* inside = s4u::create_star_zone(name);
    inside->set_parent(zone);
    NetPoint* router = inside->create_router(name + "-switch");
    inside->add_route(router, nullptr, nullptr, nullptr, {}, true);
    for (int local = 0; local < params_.ppn; ++local) {
      const std::string host_name = fmt::format("{}-{}", name, local);
      s4u::Host* host = inside->create_host(host_name, kHostSpeed)->seal();
      s4u::Link* link =
          inside->create_split_duplex_link(host_name + "-intra", params_.intra_bandwidth)
              ->set_latency(params_.intra_latency)
              ->seal();
      inside->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, {{link, Direction::UP}},
                        true);
      place(id * static_cast<std::size_t>(params_.ppn) + static_cast<std::size_t>(local), host,
            node);
    }
    inside->seal();
    return {inside->get_netpoint(), router};
  }

  // `torus_sides` (a torus's): record each node's coordinates as SimGrid
  // routes them, the first dimension varying fastest
  // (TorusZone::rankId_to_coords). SimGrid 3.32 hands the callback the
  // last dimension fastest (ClusterBase::index_to_dims): on a torus whose
  // sides differ, a node one step away along a dimension there is not a
  // neighbour (torus:8x4x4: node 4, "(0,1,0)", is 4 hops from node 0).
  s4u::ClusterCallbacks callbacks(std::vector<unsigned long> torus_sides = {}) {
    if (!torus_sides.empty()) {
      platform_.coordinates_of_node.resize(static_cast<std::size_t>(platform_.nodes));
    }
    return s4u::ClusterCallbacks([this, torus_sides](s4u::NetZone* zone,
                                                     const std::vector<unsigned long>& /*where*/,
                                                     unsigned long id) {
      if (!torus_sides.empty()) {
        auto& coordinates = platform_.coordinates_of_node.at(id);
        coordinates.clear();
        unsigned long rest = id;
        for (const unsigned long side : torus_sides) {
          coordinates.push_back(static_cast<int>(rest % side));
          rest /= side;
        }
      }
      return make(zone, id);
    });
  }

 private:
  void place(std::size_t slot, s4u::Host* host, int node) {
    platform_.slots.at(slot) = host;
    platform_.node_of_slot.at(slot) = node;
  }
  const SimParams& params_;
  Platform& platform_;
};

void reserve_slots(Platform& platform, int nodes, int ppn) {
  platform.nodes = nodes;
  const auto slots = static_cast<std::size_t>(nodes) * static_cast<std::size_t>(ppn);
  platform.slots.assign(slots, nullptr);
  platform.node_of_slot.assign(slots, 0);
}

// A spec parsed, before anything is built: a malformed one or a rank count
// that does not fit leaves the engine without a platform.
struct Shape {
  std::string_view kind;  // star, fat-tree, torus, dragonfly
  int nodes = 0;
  std::vector<unsigned> numbers;  // torus: dimensions; dragonfly: g, gl, c, cl, r, rl, n
  std::vector<unsigned> tree[3];  // fat-tree: down, up, link counts
};

Shape parse_shape(const SimParams& params, std::string_view spec, std::string_view kind,
                  std::string_view shape_text) {
  Shape shape;
  shape.kind = kind;
  unsigned long nodes = 1;
  if (kind == "star") {
    if (shape_text.empty()) {
      if (params.ranks % params.ppn != 0) {
        bad_spec(spec, fmt::format("{} ranks are not a whole number of nodes of {} ranks (--ppn)",
                                   params.ranks, params.ppn));
      }
      nodes = static_cast<unsigned long>(params.ranks / params.ppn);
    } else {
      nodes = positive(spec, shape_text);
    }
  } else if (kind == "fat-tree") {
    const auto parts = split(shape_text, ';');
    if (parts.size() != 4) bad_spec(spec, "a fat-tree has 4 parts separated by ';'");
    const unsigned levels = positive(spec, parts[0]);
    for (int i = 0; i < 3; ++i) {
      shape.tree[i] = positives(spec, parts[static_cast<std::size_t>(i) + 1], ',');
      if (shape.tree[i].size() != levels) {
        bad_spec(spec,
                 fmt::format("each list of a {}-level fat-tree has {} numbers", levels, levels));
      }
    }
    for (const unsigned d : shape.tree[0]) nodes *= d;
  } else if (kind == "torus") {
    shape.numbers = positives(spec, shape_text, 'x');
    if (shape.numbers.size() < 2 || shape.numbers.size() > 3) {
      bad_spec(spec, "a torus has 2 or 3 dimensions");
    }
    // Probed in child processes: 1x1, 4x1x1, 1x3x1, 1x1x2 abort ("Link
    // 'torus_link_from_0_to_0_UP' declared several times"); 4x1, 2x2x1 run.
    if (std::count(shape.numbers.begin(), shape.numbers.end(), 1u) > 1) {
      bad_spec(spec,
               "SimGrid 3.32 aborts on a torus with more than one dimension of size 1; leave "
               "those dimensions out (torus:4x1x1 is torus:4x1)");
    }
    for (const unsigned d : shape.numbers) nodes *= d;
  } else {
    const auto parts = split(shape_text, ';');
    if (parts.size() != 4) bad_spec(spec, "a dragonfly has 4 parts separated by ';'");
    for (int i = 0; i < 3; ++i) {
      const auto pair = positives(spec, parts[static_cast<std::size_t>(i)], ',');
      if (pair.size() != 2) bad_spec(spec, "groups, chassis and routers are pairs 'count,links'");
      shape.numbers.insert(shape.numbers.end(), pair.begin(), pair.end());
      nodes *= pair[0];
    }
    shape.numbers.push_back(positive(spec, parts[3]));
    nodes *= shape.numbers.back();
    // Probed in child processes: 2,1;1,1;1,1;1, 3,1;..., 2,2;..., 5,3;...
    // crash (segfault, or a double free at 4,1;1,1;1,1;4) as soon as a
    // message crosses groups; 2 routers or chassis per group run.
    if (shape.numbers[0] > 1 && shape.numbers[2] * shape.numbers[4] == 1) {
      bad_spec(spec,
               "SimGrid 3.32 crashes on a dragonfly of several groups with one router each; give "
               "each group at least 2 chassis or 2 routers");
    }
  }
  if (nodes > 1u << 20) bad_spec(spec, fmt::format("{} nodes are more than 2^20", nodes));
  shape.nodes = static_cast<int>(nodes);
  return shape;
}

void build_shape(const SimParams& params, const Shape& shape, Platform& platform) {
  reserve_slots(platform, shape.nodes, params.ppn);
  NodeMaker maker(params, platform);
  const auto policy = s4u::Link::SharingPolicy::SPLITDUPLEX;
  const double bw = params.link_bandwidth;
  const double lat = params.link_latency;
  if (shape.kind == "star") {
    s4u::NetZone* star = s4u::create_star_zone("star");
    for (int node = 0; node < shape.nodes; ++node) {
      const auto [netpoint, gateway] = maker.make(star, static_cast<unsigned long>(node));
      s4u::Link* link =
          star->create_split_duplex_link(fmt::format("link{}", node), bw)->set_latency(lat)->seal();
      star->add_route(netpoint, nullptr, gateway, nullptr, {{link, Direction::UP}}, true);
    }
    star->seal();
  } else if (shape.kind == "fat-tree") {
    const auto levels = static_cast<unsigned>(shape.tree[0].size());
    s4u::create_fatTree_zone(
        "fat-tree", nullptr,
        s4u::FatTreeParams(levels, shape.tree[0], shape.tree[1], shape.tree[2]), maker.callbacks(),
        bw, lat, policy)
        ->seal();
  } else if (shape.kind == "torus") {
    s4u::create_torus_zone("torus", nullptr, {shape.numbers.begin(), shape.numbers.end()},
                           maker.callbacks({shape.numbers.begin(), shape.numbers.end()}), bw, lat,
                           policy)
        ->seal();
  } else {
    const auto& n = shape.numbers;
    s4u::create_dragonfly_zone("dragonfly", nullptr,
                               s4u::DragonflyParams({n[0], n[1]}, {n[2], n[3]}, {n[4], n[5]}, n[6]),
                               maker.callbacks(), bw, lat, policy)
        ->seal();
  }
}

void check_ranks(const SimParams& params, int nodes) {
  const int slots = nodes * params.ppn;
  if (params.ranks > slots || (!params.allow_unused_slots && params.ranks != slots)) {
    throw std::invalid_argument(fmt::format(
        "{} ranks do not match platform '{}' of {} nodes x {} ranks per node (--ppn): give "
        "--ranks {}",
        params.ranks, params.platform, nodes, params.ppn, slots));
  }
}

// Hosts in the order the file declares them (the engine lists them by name).
void load_xml(const SimParams& params, Platform& platform) {
  s4u::Engine& engine = *s4u::Engine::get_instance();
  try {
    engine.load_platform(params.platform);
  } catch (const std::exception& error) {
    bad_spec(params.platform, fmt::format("SimGrid could not load it ({})", error.what()));
  }
  std::vector<s4u::Host*> hosts = engine.get_all_hosts();
  std::sort(hosts.begin(), hosts.end(), [](const s4u::Host* a, const s4u::Host* b) {
    return a->get_netpoint()->id() < b->get_netpoint()->id();
  });
  reserve_slots(platform, static_cast<int>(hosts.size()), params.ppn);
  for (std::size_t slot = 0; slot < platform.slots.size(); ++slot) {
    const std::size_t node = slot / static_cast<std::size_t>(params.ppn);
    platform.slots[slot] = hosts[node];
    platform.node_of_slot[slot] = static_cast<int>(node);
  }
}

// Latency and narrowest bandwidth of the route between two slots' hosts;
// returns its number of links.
std::size_t route(const s4u::Host* from, const s4u::Host* to, double& alpha, double& beta) {
  std::vector<s4u::Link*> links;
  alpha = 0;
  from->route_to(to, links, &alpha);
  double narrowest = std::numeric_limits<double>::infinity();
  for (const s4u::Link* link : links) narrowest = std::min(narrowest, link->get_bandwidth());
  beta = links.empty() ? 0 : 1 / narrowest;
  return links.size();
}

}  // namespace

std::string platform_key(const SimParams& params) {
  const bool sized_by_ranks = params.platform == "star";
  return fmt::format("{} ppn={} link={}s,{}Bps intra={}s,{}Bps{}", params.platform, params.ppn,
                     params.link_latency, params.link_bandwidth, params.intra_latency,
                     params.intra_bandwidth,
                     sized_by_ranks ? fmt::format(" nodes={}", params.ranks / params.ppn) : "");
}

namespace {

bool generated(std::string_view kind) {
  return kind == "star" || kind == "fat-tree" || kind == "torus" || kind == "dragonfly";
}

// The kind and shape of a generated platform's spec, checked.
std::pair<std::string_view, std::string_view> kind_and_shape(std::string_view spec) {
  const auto colon = spec.find(':');
  const std::string_view kind = spec.substr(0, colon);
  const std::string_view shape = colon == std::string_view::npos ? "" : spec.substr(colon + 1);
  if (generated(kind) && shape.empty() && (kind != "star" || colon != std::string_view::npos)) {
    bad_spec(spec, fmt::format("'{}' needs its shape after ':'", kind));
  }
  return {kind, shape};
}

}  // namespace

void check_platform(const SimParams& params) {
  const auto [kind, shape] = kind_and_shape(params.platform);
  if (generated(kind)) {
    check_ranks(params, parse_shape(params, params.platform, kind, shape).nodes);
  } else if (!std::filesystem::is_regular_file(params.platform)) {
    bad_spec(params.platform, "no such file, and not a platform this build knows");
  }
}

Platform build_platform(const SimParams& params) {
  Platform platform;
  const auto [kind, shape] = kind_and_shape(params.platform);
  if (generated(kind)) {
    build_shape(params, parse_shape(params, params.platform, kind, shape), platform);
  } else {
    load_xml(params, platform);
    check_ranks(params, platform.nodes);
  }
  if (platform.nodes > 1) {
    const std::size_t links =
        route(platform.slots[0], platform.slots[static_cast<std::size_t>(params.ppn)],
              platform.links.alpha, platform.links.beta);
    // --calibration divides α by the count read from the spec.
    const int expected = first_route_links(params);
    if (expected != 0 && links != static_cast<std::size_t>(expected)) {
      throw std::logic_error(fmt::format(
          "platform '{}': SimGrid routes its first two nodes over {} links, first_route_links "
          "says {}",
          params.platform, links, expected));
    }
  }
  if (params.ppn > 1) {
    route(platform.slots[0], platform.slots[1], platform.links.intra_alpha,
          platform.links.intra_beta);
  }
  return platform;
}

}  // namespace collbench::sim

namespace collbench {

int first_route_links(const SimParams& params) {
  const auto [kind, shape_text] = sim::kind_and_shape(params.platform);
  if (!sim::generated(kind) || kind == "dragonfly" || params.ppn != 1) return 0;
  const sim::Shape shape = sim::parse_shape(params, params.platform, kind, shape_text);
  if (kind == "star") return 2;
  if (kind == "torus") return 1;
  // Nodes 0 and 1 meet in the lowest level whose switches have two nodes
  // or more below them; the route climbs to it and back down.
  unsigned long below = 1;
  const std::vector<unsigned>& down = shape.tree[0];
  for (std::size_t level = 0; level < down.size(); ++level) {
    below *= down[level];
    if (below >= 2) return 2 * static_cast<int>(level + 1);
  }
  return 0;  // a single node: no route
}

}  // namespace collbench
