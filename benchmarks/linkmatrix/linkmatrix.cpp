#include "linkmatrix.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace collbench::linkmatrix {

std::vector<std::vector<std::pair<int, int>>> round_robin(int n) {
  std::vector<std::vector<std::pair<int, int>>> rounds;
  if (n < 2) return rounds;
  // Circle method: seat m (even) players around a table, player m−1 fixed,
  // the others rotating one seat per round; seat i plays seat m−1−i. With an
  // odd n the extra seat m−1 is a bye.
  const int m = n % 2 == 0 ? n : n + 1;
  std::vector<int> seats(static_cast<std::size_t>(m));
  for (int i = 0; i < m; ++i) seats[static_cast<std::size_t>(i)] = i;
  for (int round = 0; round < m - 1; ++round) {
    std::vector<std::pair<int, int>> pairs;
    for (int i = 0; i < m / 2; ++i) {
      const int a = seats[static_cast<std::size_t>(i)];
      const int b = seats[static_cast<std::size_t>(m - 1 - i)];
      if (a >= n || b >= n) continue;  // the bye
      pairs.emplace_back(std::min(a, b), std::max(a, b));
    }
    std::sort(pairs.begin(), pairs.end());
    rounds.push_back(std::move(pairs));
    // Rotate every seat but the last one step.
    std::rotate(seats.begin(), seats.begin() + (m - 2), seats.begin() + (m - 1));
  }
  return rounds;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

Analysis analyze(int hosts, std::span<const LinkMeasurement> links, const Thresholds& thresholds) {
  if (hosts < 2) {
    throw std::invalid_argument(fmt::format("link analysis needs at least 2 hosts, got {}", hosts));
  }
  if (!(thresholds.bandwidth >= 0 && thresholds.bandwidth < 1)) {
    throw std::invalid_argument(
        fmt::format("bandwidth threshold {} is outside [0, 1): it is the fraction below the median",
                    thresholds.bandwidth));
  }
  if (!(thresholds.latency >= 0) || !std::isfinite(thresholds.latency)) {
    throw std::invalid_argument(
        fmt::format("latency threshold {} must be >= 0: it is the fraction above the median",
                    thresholds.latency));
  }
  Analysis result;
  result.hosts.resize(static_cast<std::size_t>(hosts));
  std::vector<bool> has_out(static_cast<std::size_t>(hosts)), has_in(has_out.size());
  for (const LinkMeasurement& link : links) {
    if (link.src < 0 || link.src >= hosts || link.dst < 0 || link.dst >= hosts ||
        link.src == link.dst) {
      throw std::invalid_argument(fmt::format("link {}->{} is not a pair of distinct hosts 0..{}",
                                              link.src, link.dst, hosts - 1));
    }
    if (!(std::isfinite(link.latency_us) && link.latency_us > 0 &&
          std::isfinite(link.bandwidth_GBps) && link.bandwidth_GBps > 0)) {
      throw std::invalid_argument(
          fmt::format("link {}->{}: latency {} us and bandwidth {} GB/s must be positive numbers",
                      link.src, link.dst, link.latency_us, link.bandwidth_GBps));
    }
    HostVerdict& src = result.hosts[static_cast<std::size_t>(link.src)];
    HostVerdict& dst = result.hosts[static_cast<std::size_t>(link.dst)];
    src.send_GBps = std::max(src.send_GBps, link.bandwidth_GBps);
    dst.recv_GBps = std::max(dst.recv_GBps, link.bandwidth_GBps);
    for (HostVerdict* host : {&src, &dst}) {
      host->latency_us =
          host->latency_us == 0 ? link.latency_us : std::min(host->latency_us, link.latency_us);
    }
    has_out[static_cast<std::size_t>(link.src)] = true;
    has_in[static_cast<std::size_t>(link.dst)] = true;
  }
  for (int h = 0; h < hosts; ++h) {
    if (!has_out[static_cast<std::size_t>(h)] || !has_in[static_cast<std::size_t>(h)]) {
      throw std::invalid_argument(
          fmt::format("host {} has no measured {} link", h,
                      has_out[static_cast<std::size_t>(h)] ? "incoming" : "outgoing"));
    }
  }
  std::vector<double> send, recv, latency;
  for (const HostVerdict& host : result.hosts) {
    send.push_back(host.send_GBps);
    recv.push_back(host.recv_GBps);
    latency.push_back(host.latency_us);
  }
  result.median_send_GBps = median(send);
  result.median_recv_GBps = median(recv);
  result.median_latency_us = median(latency);
  const double keep = 1 - thresholds.bandwidth;
  const double latency_limit = (1 + thresholds.latency) * result.median_latency_us;
  for (HostVerdict& host : result.hosts) {
    host.slow_send = host.send_GBps < keep * result.median_send_GBps;
    host.slow_recv = host.recv_GBps < keep * result.median_recv_GBps;
    host.high_latency = host.latency_us > latency_limit;
  }
  // Links are compared with the median link among those between hosts that
  // are not themselves flagged (all links when every link touches one): a
  // host's best link is an optimistic reference for an ordinary link.
  const auto link_reference = [&](auto flagged, auto value) {
    std::vector<double> clean, all;
    for (const LinkMeasurement& link : links) {
      all.push_back(value(link));
      if (!flagged(result.hosts[static_cast<std::size_t>(link.src)]) &&
          !flagged(result.hosts[static_cast<std::size_t>(link.dst)])) {
        clean.push_back(value(link));
      }
    }
    return median(clean.empty() ? all : clean);
  };
  result.median_link_GBps =
      link_reference([](const HostVerdict& h) { return h.slow(); },
                     [](const LinkMeasurement& l) { return l.bandwidth_GBps; });
  result.median_link_latency_us =
      link_reference([](const HostVerdict& h) { return h.high_latency; },
                     [](const LinkMeasurement& l) { return l.latency_us; });
  for (const LinkMeasurement& link : links) {
    LinkVerdict verdict;
    verdict.slow = link.bandwidth_GBps < keep * result.median_link_GBps;
    verdict.high_latency =
        link.latency_us > (1 + thresholds.latency) * result.median_link_latency_us;
    verdict.explained = verdict.slow && (result.hosts[static_cast<std::size_t>(link.src)].slow() ||
                                         result.hosts[static_cast<std::size_t>(link.dst)].slow());
    result.links.push_back(verdict);
  }
  return result;
}

}  // namespace collbench::linkmatrix
