// collbench-linkmatrix: the all-pairs point-to-point matrix of a cluster.
//
// Launched under mpirun/srun with one or more ranks per host; the lowest rank
// on each host speaks for it (--unit rank: every rank is its own "host", for
// tests on one machine). For every pair of hosts it measures
//   - latency: the half round trip of a --latency-size message (median of
//     --latency-iterations; the lowest such median of --latency-passes passes
//     over all pairs), one pair at a time while every other rank sleeps;
//   - bandwidth, each direction: --size bytes sent one way and a small
//     acknowledgement back; the one-way time is that round trip minus the
//     pair's latency, bandwidth = size / one-way time (median of
//     --iterations after one warm-up transfer).
// Bandwidth pairs run in the rounds of a round-robin tournament (see
// linkmatrix.h): the pairs of a round are disjoint and run concurrently, so
// each link carries one pair's traffic; --serial runs one pair at a time.
//
// Rank 0 writes the links CSV (--csv) and the hosts CSV (--hosts-csv), and
// prints the slow hosts and links by name. Exit status: 0 measured (whatever
// the verdicts), 1 a measurement failed, 2 bad arguments.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cli_checks.h"
#include "collbench/csv.h"
#include "collbench/mpi_transport.h"
#include "collbench/sizes.h"
#include "collbench/transport_factory.h"
#include "linkmatrix.h"
#include "metadata.h"
#include "options.h"
#include "process_signals.h"

namespace collbench::linkmatrix {
namespace {

constexpr int kUsageStatus = 2;
constexpr int kTagLatency = 101;
constexpr int kTagData = 102;
constexpr int kTagAck = 103;
constexpr std::size_t kAckBytes = 8;

struct Options {
  std::string size_text = "4MiB";
  std::string latency_size_text = "8B";
  std::uint64_t size = 0;
  std::uint64_t latency_size = 0;
  int iterations = 5;
  int latency_iterations = 200;
  int latency_passes = 3;
  bool serial = false;
  std::string unit = "host";
  std::string transport = "mpi";
  std::string ofi_provider;
  double bandwidth_threshold = 0.25;
  double latency_threshold = 1.0;
  double timeout_seconds = 300;
  std::string csv_path;
  std::string hosts_csv_path;
  bool force = false;
  std::string run_id;
};

// Ranks wait here without spinning: on a machine whose cores the hosts share
// (an emulated cluster), a rank that busy-polls in MPI_Barrier would steal
// the CPU of the pair being measured.
void quiet_barrier(MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(comm, &request), "MPI_Ibarrier");
  int done = 0;
  while (true) {
    check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test", "quiet barrier");
    if (done) return;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Half round trips of `bytes` between this rank and `peer`; the lower rank
// of the pair times them. Returns the median in seconds (0 on the other side).
double measure_latency(Transport& transport, int peer, std::span<std::byte> buffer, int warmup,
                       int iterations) {
  const bool timer = transport.rank() < peer;
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(iterations));
  for (int i = 0; i < warmup + iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (timer) {
      transport.wait(transport.isend(buffer, peer, kTagLatency));
      transport.wait(transport.irecv(buffer, peer, kTagLatency));
    } else {
      transport.wait(transport.irecv(buffer, peer, kTagLatency));
      transport.wait(transport.isend(buffer, peer, kTagLatency));
    }
    if (timer && i >= warmup) samples.push_back(seconds_since(start) / 2);
  }
  return timer ? median(samples) : 0;
}

struct BandwidthSamples {
  double median_s = 0, min_s = 0, max_s = 0;
};

// One-way transfers of `data` from `sender` to `receiver` (one of them is this
// rank), each acknowledged; the sender times them. `latency_s` (the pair's
// half round trip) is subtracted for the acknowledgement.
BandwidthSamples measure_bandwidth(Transport& transport, int sender, int receiver,
                                   std::span<std::byte> data, std::span<std::byte> ack,
                                   int iterations, double latency_s) {
  const bool sending = transport.rank() == sender;
  std::vector<double> samples;
  for (int i = 0; i < 1 + iterations; ++i) {  // one warm-up transfer
    const auto start = std::chrono::steady_clock::now();
    if (sending) {
      const RequestId ack_request = transport.irecv(ack, receiver, kTagAck);
      transport.wait(transport.isend(data, receiver, kTagData));
      transport.wait(ack_request);
      if (i > 0) samples.push_back(std::max(seconds_since(start) - latency_s, 1e-9));
    } else {
      transport.wait(transport.irecv(data, sender, kTagData));
      transport.wait(transport.isend(ack, sender, kTagAck));
    }
  }
  BandwidthSamples result;
  if (sending) {
    result.median_s = median(samples);
    result.min_s = *std::min_element(samples.begin(), samples.end());
    result.max_s = *std::max_element(samples.begin(), samples.end());
  }
  return result;
}

std::string format_fixed(double value, int digits) { return fmt::format("{:.{}f}", value, digits); }

struct Unit {
  std::string name;
  int rank = 0;
};

int run(int argc, char** argv) {
  int rank = 0, size = 1;
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");

  Options options;
  CLI::App app{
      "collbench-linkmatrix: all-pairs point-to-point latency and bandwidth between the hosts "
      "of an MPI job, with the slow hosts and links named.\nLaunch with mpirun/srun, one or "
      "more ranks per host; the lowest rank on each host speaks for it.",
      "collbench-linkmatrix"};
  app.get_formatter()->column_width(34);
  app.add_option("--size", options.size_text,
                 "Bytes per bandwidth transfer (default: 4MiB; units as collbench --sizes)")
      ->type_name("SIZE");
  app.add_option("--latency-size", options.latency_size_text,
                 "Bytes of the latency ping-pong (default: 8B)")
      ->type_name("SIZE");
  app.add_option("--iterations", options.iterations,
                 "Timed transfers per direction and pair, after one warm-up (default: 5)")
      ->check(cli::whole_number(1, 1000000, "transfers"));
  app.add_option("--latency-iterations", options.latency_iterations,
                 "Timed round trips per pair for the latency (default: 200, at most 1000000; "
                 "each is kept in memory)")
      ->check(cli::whole_number(1, 1000000, "round trips"));
  app.add_option("--latency-passes", options.latency_passes,
                 "Passes over all pairs for the latency; a pair's latency is its lowest "
                 "per-pass median (default: 3)")
      ->check(cli::whole_number(1, 1000, "passes"));
  app.add_flag("--serial", options.serial,
               "Measure bandwidth one pair at a time instead of a round's disjoint pairs "
               "together (for fabrics that are not non-blocking)");
  app.add_option("--unit", options.unit,
                 "What a matrix row is: 'host' (default; ranks grouped by hostname) or 'rank' "
                 "(every rank, e.g. to test on one machine)")
      ->check(CLI::IsMember({"host", "rank"}));
  app.add_option(
         "--transport", options.transport,
         fmt::format("Transport (default: mpi); one of {}", fmt::join(transport_kinds(), ", ")))
      ->type_name("KIND");
  app.add_option("--ofi-provider", options.ofi_provider,
                 "libfabric provider for --transport ofi (default: FI_PROVIDER or the first)")
      ->type_name("NAME");
  app.add_option("--bandwidth-threshold", options.bandwidth_threshold,
                 "A host or link is slow when its bandwidth is below (1 - T) x the median host's "
                 "(default: 0.25)")
      ->check(cli::number_at_least(0, false, "", 0.999));
  app.add_option("--latency-threshold", options.latency_threshold,
                 "A host or link has high latency when its latency is above (1 + T) x the median "
                 "host's (default: 1.0, i.e. twice; at most 1000)")
      ->check(cli::number_at_least(0, false, "", 1000));
  app.add_option("--timeout", options.timeout_seconds,
                 "Seconds a transfer may block before the run fails naming the peer (default: "
                 "300; whole milliseconds, at least 1; 0 waits forever)")
      ->check(cli::timeout_seconds());
  app.add_option("--csv", options.csv_path,
                 "Links CSV: one row per directed pair (src, dst, latency, bandwidth, verdicts)")
      ->type_name("PATH")
      ->check(collbench::cli::path());
  app.add_option("--hosts-csv", options.hosts_csv_path,
                 "Hosts CSV: one row per host (best send/receive bandwidth, latency, verdicts); "
                 "a file other than --csv's")
      ->type_name("PATH")
      ->check(collbench::cli::path());
  app.add_flag("--force", options.force, "Overwrite existing CSV files");
  app.add_option("--run-id", options.run_id, "Run identifier for the CSV (default: a fresh one)")
      ->type_name("ID");

  std::string usage_error;
  try {
    app.parse(argc, argv);
    options.size = parse_byte_size(options.size_text);
    options.latency_size = parse_byte_size(options.latency_size_text);
    if (options.size < kAckBytes) {
      throw std::invalid_argument(
          fmt::format("--size {} is below {} bytes", options.size_text, kAckBytes));
    }
    if (options.size > (1ULL << 31) - 1 || options.latency_size > (1ULL << 31) - 1) {
      throw std::invalid_argument("--size and --latency-size must be below 2 GiB");
    }
    const auto kinds = transport_kinds();
    if (std::find(kinds.begin(), kinds.end(), options.transport) == kinds.end()) {
      throw std::invalid_argument(
          fmt::format("--transport {}: accepted: {}", options.transport, fmt::join(kinds, ", ")));
    }
    for (const std::string* path : {&options.csv_path, &options.hosts_csv_path}) {
      if (path->empty()) continue;
      const std::filesystem::path file(*path);
      const auto folder = file.has_parent_path() ? file.parent_path() : ".";
      if (!std::filesystem::is_directory(folder)) {
        throw std::invalid_argument(
            fmt::format("{}: the folder {} does not exist", *path, folder.string()));
      }
      if (!options.force && std::filesystem::exists(file)) {
        throw std::invalid_argument(fmt::format("{} exists; pass --force to overwrite", *path));
      }
    }
    if (!options.csv_path.empty() && !options.hosts_csv_path.empty() &&
        names_same_file(options.csv_path, options.hosts_csv_path)) {
      throw std::invalid_argument(fmt::format(
          "--csv {} and --hosts-csv {} name the same file; each output needs its own path",
          options.csv_path, options.hosts_csv_path));
    }
  } catch (const CLI::Success&) {
    if (rank == 0) std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& error) {
    usage_error = error.what();
  } catch (const std::invalid_argument& error) {
    usage_error = error.what();
  }
  if (!usage_error.empty()) {
    if (rank == 0) fmt::print(stderr, "collbench-linkmatrix: {}\n", usage_error);
    return kUsageStatus;
  }

  const harness::RunMetadata metadata =
      harness::gather_metadata(MPI_COMM_WORLD, options.run_id, options.transport == "ofi");
  // Units: hosts in first-seen order, each spoken for by its lowest rank.
  std::vector<Unit> units;
  if (options.unit == "rank") {
    for (int r = 0; r < size; ++r) {
      units.push_back({fmt::format("rank{}", r), r});
    }
  } else {
    for (int r = 0; r < size; ++r) {
      const std::string& host = metadata.rank_hosts[static_cast<std::size_t>(r)];
      if (std::none_of(units.begin(), units.end(), [&](const Unit& u) { return u.name == host; })) {
        units.push_back({host, r});
      }
    }
  }
  const int n = static_cast<int>(units.size());
  if (n < 2) {
    if (rank == 0) {
      fmt::print(stderr,
                 "collbench-linkmatrix: all {} ranks run on one host ({}); a link matrix needs "
                 "ranks on at least 2 hosts (or --unit rank to pair ranks)\n",
                 size, metadata.hosts);
    }
    return kUsageStatus;
  }
  int my_unit = -1;
  for (int u = 0; u < n; ++u) {
    if (units[static_cast<std::size_t>(u)].rank == rank) my_unit = u;
  }

  TransportOptions transport_options;
  transport_options.kind = options.transport;
  transport_options.ofi_provider = options.ofi_provider;
  std::unique_ptr<Transport> transport = make_transport(transport_options);
  transport->set_timeout(harness::timeout_milliseconds(options.timeout_seconds));

  std::vector<std::byte> data, ack(kAckBytes), small;
  MemoryRegistration data_registration, ack_registration, small_registration;
  if (my_unit >= 0) {
    data.assign(options.size, std::byte{0x5a});
    small.assign(std::max<std::uint64_t>(options.latency_size, 1), std::byte{0});
    data_registration = MemoryRegistration(*transport, data);
    ack_registration = MemoryRegistration(*transport, ack);
    small_registration = MemoryRegistration(*transport, small);
  }
  const std::span<std::byte> small_span(small.data(), options.latency_size);

  const auto rounds = round_robin(n);
  const auto cell = [n](int a, int b) { return static_cast<std::size_t>(a * n + b); };
  // Each cell is filled by exactly one rank, then summed onto rank 0.
  std::vector<double> latency(static_cast<std::size_t>(n * n), 0.0);
  std::vector<double> bw_median(latency.size(), 0.0), bw_min(latency.size(), 0.0),
      bw_max(latency.size(), 0.0), round_of(latency.size(), 0.0);
  const auto rank_of = [&](int u) { return units[static_cast<std::size_t>(u)].rank; };
  const auto progress = [&](const std::string& text) {
    if (rank == 0) {
      fmt::print(stderr, "collbench-linkmatrix: {}\n", text);
      std::fflush(stderr);
    }
  };

  progress(fmt::format("{} hosts, {} pairs in {} rounds; latency at {} B, bandwidth at {}", n,
                       n * (n - 1) / 2, rounds.size(), options.latency_size,
                       format_bytes(options.size)));
  // Latency, one pair at a time, in --latency-passes passes over all pairs: a
  // pair's latency is the lowest of its per-pass medians, so a burst of load
  // from elsewhere on a host during one pass does not decide it. Both sides of
  // a pair learn its latency: the bandwidth sender subtracts it.
  std::map<int, double> my_latency_s;  // by peer unit
  for (int pass = 0; pass < options.latency_passes; ++pass) {
    for (const auto& round : rounds) {
      for (const auto& [a, b] : round) {
        if (my_unit == a || my_unit == b) {
          const int peer = my_unit == a ? b : a;
          double seconds =
              measure_latency(*transport, rank_of(peer), small_span,
                              std::min(20, options.latency_iterations), options.latency_iterations);
          // The lower rank timed it; share it with the other side.
          double shared = 0;
          if (rank < rank_of(peer)) {
            transport->wait(transport->isend(std::as_writable_bytes(std::span<double>(&seconds, 1)),
                                             rank_of(peer), kTagAck));
            shared = seconds;
          } else {
            transport->wait(transport->irecv(std::as_writable_bytes(std::span<double>(&shared, 1)),
                                             rank_of(peer), kTagAck));
          }
          const auto known = my_latency_s.find(peer);
          if (known == my_latency_s.end() || shared < known->second) my_latency_s[peer] = shared;
          if (my_unit == a) {
            latency[cell(a, b)] = latency[cell(b, a)] = my_latency_s[peer] * 1e6;
          }
        }
        quiet_barrier(MPI_COMM_WORLD);
      }
    }
  }
  progress("latencies measured; bandwidth next");

  // Bandwidth, round by round, one direction at a time.
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    for (const bool forward : {true, false}) {
      const std::size_t groups = options.serial ? rounds[r].size() : 1;
      for (std::size_t g = 0; g < groups; ++g) {
        for (std::size_t k = 0; k < rounds[r].size(); ++k) {
          if (options.serial && k != g) continue;
          const auto [a, b] = rounds[r][k];
          const int src = forward ? a : b;
          const int dst = forward ? b : a;
          if (my_unit != src && my_unit != dst) continue;
          const int peer = my_unit == src ? dst : src;
          const BandwidthSamples samples =
              measure_bandwidth(*transport, rank_of(src), rank_of(dst), data, ack,
                                options.iterations, my_latency_s.at(peer));
          if (my_unit == src) {
            const double bytes = static_cast<double>(options.size);
            bw_median[cell(src, dst)] = bytes / samples.median_s / 1e9;
            bw_min[cell(src, dst)] = bytes / samples.max_s / 1e9;
            bw_max[cell(src, dst)] = bytes / samples.min_s / 1e9;
            round_of[cell(src, dst)] = static_cast<double>(r);
          }
        }
        quiet_barrier(MPI_COMM_WORLD);
      }
    }
    progress(fmt::format("round {}/{} done", r + 1, rounds.size()));
  }

  for (std::vector<double>* matrix : {&latency, &bw_median, &bw_min, &bw_max, &round_of}) {
    std::vector<double> sum(matrix->size(), 0.0);
    check_mpi(MPI_Reduce(matrix->data(), sum.data(), static_cast<int>(sum.size()), MPI_DOUBLE,
                         MPI_SUM, 0, MPI_COMM_WORLD),
              "MPI_Reduce", "link matrix");
    *matrix = std::move(sum);
  }
  if (rank != 0) return 0;

  std::vector<LinkMeasurement> links;
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      if (s != d) links.push_back({s, d, latency[cell(s, d)], bw_median[cell(s, d)]});
    }
  }
  const Analysis analysis =
      analyze(n, links, Thresholds{options.bandwidth_threshold, options.latency_threshold});
  const std::string utc = harness::utc_now_iso8601();
  const auto yes_no = [](bool value) { return std::string(value ? "yes" : "no"); };
  const ExistingFile policy = options.force ? ExistingFile::overwrite : ExistingFile::refuse;
  if (!options.csv_path.empty()) {
    CsvWriter csv(options.csv_path,
                  {"src",
                   "dst",
                   "src_rank",
                   "dst_rank",
                   "round",
                   "latency_bytes",
                   "latency_us",
                   "bandwidth_bytes",
                   "bandwidth_GBps",
                   "bandwidth_min_GBps",
                   "bandwidth_max_GBps",
                   "iterations",
                   "slow",
                   "high_latency",
                   "explained_by_host",
                   "transport",
                   "provider",
                   "mode",
                   "run_id",
                   "utc_time",
                   "git_rev",
                   "mpi_library"},
                  policy);
    for (std::size_t i = 0; i < links.size(); ++i) {
      const LinkMeasurement& link = links[i];
      const LinkVerdict& verdict = analysis.links[i];
      csv.write_row({units[static_cast<std::size_t>(link.src)].name,
                     units[static_cast<std::size_t>(link.dst)].name,
                     std::to_string(rank_of(link.src)),
                     std::to_string(rank_of(link.dst)),
                     format_fixed(round_of[cell(link.src, link.dst)], 0),
                     std::to_string(options.latency_size),
                     format_fixed(link.latency_us, 3),
                     std::to_string(options.size),
                     format_fixed(link.bandwidth_GBps, 6),
                     format_fixed(bw_min[cell(link.src, link.dst)], 6),
                     format_fixed(bw_max[cell(link.src, link.dst)], 6),
                     std::to_string(options.iterations),
                     yes_no(verdict.slow),
                     yes_no(verdict.high_latency),
                     yes_no(verdict.explained),
                     std::string(transport->kind()),
                     transport->provider(),
                     options.serial ? "serial" : "rounds",
                     metadata.run_id,
                     utc,
                     metadata.git_revision,
                     metadata.mpi_library});
    }
  }
  if (!options.hosts_csv_path.empty()) {
    CsvWriter csv(options.hosts_csv_path,
                  {"host", "rank", "send_GBps", "recv_GBps", "latency_us", "slow_send", "slow_recv",
                   "slow", "high_latency", "median_send_GBps", "median_recv_GBps",
                   "median_latency_us", "bandwidth_threshold", "latency_threshold", "run_id"},
                  policy);
    for (int u = 0; u < n; ++u) {
      const HostVerdict& host = analysis.hosts[static_cast<std::size_t>(u)];
      csv.write_row({units[static_cast<std::size_t>(u)].name, std::to_string(rank_of(u)),
                     format_fixed(host.send_GBps, 6), format_fixed(host.recv_GBps, 6),
                     format_fixed(host.latency_us, 3), yes_no(host.slow_send),
                     yes_no(host.slow_recv), yes_no(host.slow()), yes_no(host.high_latency),
                     format_fixed(analysis.median_send_GBps, 6),
                     format_fixed(analysis.median_recv_GBps, 6),
                     format_fixed(analysis.median_latency_us, 3),
                     format_fixed(options.bandwidth_threshold, 3),
                     format_fixed(options.latency_threshold, 3), metadata.run_id});
    }
  }

  // The verdicts, by name.
  fmt::print("link matrix: {} hosts ({}), {} links, {} B latency, {} bandwidth, {} transport\n", n,
             options.unit == "rank" ? "one per rank" : "by hostname", links.size(),
             options.latency_size, format_bytes(options.size), transport->kind());
  fmt::print("median host (best link): send {:.4f} GB/s, receive {:.4f} GB/s, latency {:.1f} us\n",
             analysis.median_send_GBps, analysis.median_recv_GBps, analysis.median_latency_us);
  fmt::print("median link: {:.4f} GB/s, latency {:.1f} us\n", analysis.median_link_GBps,
             analysis.median_link_latency_us);
  std::vector<std::string> slow_hosts, latency_hosts;
  for (int u = 0; u < n; ++u) {
    const HostVerdict& host = analysis.hosts[static_cast<std::size_t>(u)];
    const std::string& name = units[static_cast<std::size_t>(u)].name;
    if (host.slow()) {
      slow_hosts.push_back(name);
      fmt::print(
          "slow host {}: best send {:.4f} GB/s ({:.0f}% of the median), best receive {:.4f} GB/s "
          "({:.0f}%)\n",
          name, host.send_GBps, 100 * host.send_GBps / analysis.median_send_GBps, host.recv_GBps,
          100 * host.recv_GBps / analysis.median_recv_GBps);
    }
    if (host.high_latency) {
      latency_hosts.push_back(name);
      fmt::print("high-latency host {}: best {:.1f} us ({:.1f}x the median)\n", name,
                 host.latency_us, host.latency_us / analysis.median_latency_us);
    }
  }
  std::vector<std::string> slow_links, latency_links;
  for (std::size_t i = 0; i < links.size(); ++i) {
    const std::string name =
        fmt::format("{}->{}", units[static_cast<std::size_t>(links[i].src)].name,
                    units[static_cast<std::size_t>(links[i].dst)].name);
    if (analysis.links[i].slow && !analysis.links[i].explained) {
      slow_links.push_back(name);
      fmt::print("slow link {}: {:.4f} GB/s, though neither end is a slow host\n", name,
                 links[i].bandwidth_GBps);
    }
    if (analysis.links[i].high_latency) latency_links.push_back(name);
  }
  const auto list = [](const std::vector<std::string>& names) {
    return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, " "));
  };
  fmt::print("slow hosts (bandwidth < {:.0f}% of the median): {}\n",
             100 * (1 - options.bandwidth_threshold), list(slow_hosts));
  fmt::print(
      "slow links (bandwidth < {:.0f}% of the median link) not explained by a slow host: {}\n",
      100 * (1 - options.bandwidth_threshold), list(slow_links));
  fmt::print("high-latency hosts (latency > {:.1f}x the median): {}\n",
             1 + options.latency_threshold, list(latency_hosts));
  fmt::print("high-latency links (latency > {:.1f}x the median link): {}\n",
             1 + options.latency_threshold, list(latency_links));
  std::fflush(stdout);
  return 0;
}

}  // namespace
}  // namespace collbench::linkmatrix

int main(int argc, char** argv) {
  collbench::harness::set_process_signals();
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    status = collbench::linkmatrix::run(argc, argv);
  } catch (const std::exception& error) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fmt::print(stderr, "collbench-linkmatrix: rank {}: {}\n", rank, error.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}
