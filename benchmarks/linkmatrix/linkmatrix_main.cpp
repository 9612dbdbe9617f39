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
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cli_checks.h"
#include "collbench/catalog/sizes.h"
#include "collbench/core/columns.h"
#include "collbench/core/csv.h"
#include "collbench/transport/mpi_transport.h"
#include "collbench/transport/transport_factory.h"
#include "linkmatrix.h"
#include "metadata.h"
#include "options.h"
#include "process_signals.h"
#include "standard_output.h"

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

using Rounds = std::vector<std::vector<std::pair<int, int>>>;

// The add_*_options functions are called in the order --help lists them.

void add_measurement_options(CLI::App& app, Options& options) {
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
}

void add_verdict_and_output_options(CLI::App& app, Options& options) {
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
  app.add_option("--run-id", options.run_id,
                 "Run identifier for the CSV (default: a fresh one); letters, digits, '.', '_' "
                 "and '-', as collbench's")
      ->type_name("ID");
}

// Checked before anything is measured, so that a run of many minutes does
// not end in a file it cannot write: each folder exists, an existing file
// only with --force, and the two CSVs are two files.
void check_output_paths(const Options& options) {
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
}

// What CLI11 cannot check on its own: the byte sizes (parsed into
// options.size and options.latency_size), the transport and the output
// paths. Throws std::invalid_argument with the message to show.
void check_options(Options& options) {
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
  harness::validate_run_id(options.run_id);
  check_output_paths(options);
}

// Parses and checks the command line into `options`; rank 0 prints the help
// or the one-line error. Returns the exit status when the run ends here
// (help, bad arguments), nothing when it goes on.
std::optional<int> parse_command_line(int rank, int argc, char** argv, Options& options) {
  CLI::App app{
      "collbench-linkmatrix: all-pairs point-to-point latency and bandwidth between the hosts "
      "of an MPI job, with the slow hosts and links named.\nLaunch with mpirun/srun, one or "
      "more ranks per host; the lowest rank on each host speaks for it.",
      "collbench-linkmatrix"};
  app.get_formatter()->column_width(34);
  add_measurement_options(app, options);
  add_verdict_and_output_options(app, options);
  std::string usage_error;
  try {
    app.parse(argc, argv);
    check_options(options);
  } catch (const CLI::Success&) {
    if (rank == 0) std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& error) {
    usage_error = error.what();
  } catch (const std::invalid_argument& error) {
    usage_error = error.what();
  } catch (const harness::UsageError& error) {
    usage_error = error.what();
  }
  if (usage_error.empty()) return std::nullopt;
  if (rank == 0) fmt::print(stderr, "collbench-linkmatrix: {}\n", usage_error);
  return kUsageStatus;
}

// The matrix's rows: with --unit host, the hosts in first-seen order, each
// spoken for by its lowest rank; with --unit rank, every rank.
std::vector<Unit> find_units(const Options& options, const harness::RunMetadata& metadata,
                             int size) {
  std::vector<Unit> units;
  if (options.unit == "rank") {
    for (int r = 0; r < size; ++r) {
      units.push_back({fmt::format("rank{}", r), r});
    }
    return units;
  }
  for (int r = 0; r < size; ++r) {
    const std::string& host = metadata.rank_hosts[static_cast<std::size_t>(r)];
    if (std::none_of(units.begin(), units.end(), [&](const Unit& u) { return u.name == host; })) {
      units.push_back({host, r});
    }
  }
  return units;
}

// The index of the unit `rank` speaks for, or -1.
int unit_of(const std::vector<Unit>& units, int rank) {
  for (std::size_t u = 0; u < units.size(); ++u) {
    if (units[u].rank == rank) return static_cast<int>(u);
  }
  return -1;
}

std::unique_ptr<InstrumentedTransport> open_transport(const Options& options) {
  TransportOptions transport_options;
  transport_options.kind = options.transport;
  transport_options.ofi_provider = options.ofi_provider;
  std::unique_ptr<InstrumentedTransport> transport = make_transport(transport_options);
  transport->set_timeout(harness::timeout_milliseconds(options.timeout_seconds));
  return transport;
}

// This rank's side of the measurements: who it is and how it talks.
struct Participant {
  const Options& options;
  const std::vector<Unit>& units;
  Transport& transport;
  int rank = 0;      // in MPI_COMM_WORLD
  int my_unit = -1;  // -1: this rank speaks for no unit and only waits at the barriers

  int rank_of(int unit) const { return units[static_cast<std::size_t>(unit)].rank; }
};

// The transfers' buffers, allocated and registered only on the ranks that
// speak for a unit. Built in place: the registrations refer to the vectors.
struct Buffers {
  Buffers(Transport& transport, const Options& options, bool speaks_for_a_unit) : ack(kAckBytes) {
    if (speaks_for_a_unit) {
      data.assign(options.size, std::byte{0x5a});
      small.assign(std::max<std::uint64_t>(options.latency_size, 1), std::byte{0});
      data_registration = MemoryRegistration(transport, data);
      ack_registration = MemoryRegistration(transport, ack);
      small_registration = MemoryRegistration(transport, small);
    }
    latency_message = std::span<std::byte>(small.data(), options.latency_size);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;

  std::vector<std::byte> data, ack, small;
  MemoryRegistration data_registration, ack_registration, small_registration;
  std::span<std::byte> latency_message;  // --latency-size bytes of `small`
};

// The results, one n x n matrix each, row = source unit. Each cell is filled
// by exactly one rank, then summed onto rank 0.
struct Matrices {
  explicit Matrices(int units)
      : n(units),
        latency_us(static_cast<std::size_t>(n * n), 0.0),
        bandwidth_GBps(latency_us.size(), 0.0),
        bandwidth_min_GBps(latency_us.size(), 0.0),
        bandwidth_max_GBps(latency_us.size(), 0.0),
        round(latency_us.size(), 0.0) {}
  std::size_t cell(int a, int b) const { return static_cast<std::size_t>(a * n + b); }

  int n;
  std::vector<double> latency_us, bandwidth_GBps, bandwidth_min_GBps, bandwidth_max_GBps, round;
};

void report_progress(int rank, const std::string& text) {
  if (rank == 0) {
    fmt::print(stderr, "collbench-linkmatrix: {}\n", text);
    std::fflush(stderr);
  }
}

// The latency between this rank's unit and `peer` in one pass. The lower
// rank timed it and shares it, so that both sides know it: the bandwidth
// sender subtracts it.
double pair_latency(const Participant& me, int peer, std::span<std::byte> message) {
  const int peer_rank = me.rank_of(peer);
  double seconds =
      measure_latency(me.transport, peer_rank, message, std::min(20, me.options.latency_iterations),
                      me.options.latency_iterations);
  double shared = 0;
  if (me.rank < peer_rank) {
    me.transport.wait(me.transport.isend(std::as_writable_bytes(std::span<double>(&seconds, 1)),
                                         peer_rank, kTagAck));
    shared = seconds;
  } else {
    me.transport.wait(me.transport.irecv(std::as_writable_bytes(std::span<double>(&shared, 1)),
                                         peer_rank, kTagAck));
  }
  return shared;
}

// Latency, one pair at a time, in --latency-passes passes over all pairs: a
// pair's latency is the lowest of its per-pass medians, so a burst of load
// from elsewhere on a host during one pass does not decide it. Returns this
// rank's latencies in seconds, by peer unit.
std::map<int, double> measure_latencies(const Participant& me, const Rounds& rounds,
                                        std::span<std::byte> message, Matrices& matrices) {
  std::map<int, double> my_latency_s;
  for (int pass = 0; pass < me.options.latency_passes; ++pass) {
    for (const auto& round : rounds) {
      for (const auto& [a, b] : round) {
        if (me.my_unit == a || me.my_unit == b) {
          const int peer = me.my_unit == a ? b : a;
          const double shared = pair_latency(me, peer, message);
          const auto known = my_latency_s.find(peer);
          if (known == my_latency_s.end() || shared < known->second) my_latency_s[peer] = shared;
          if (me.my_unit == a) {
            matrices.latency_us[matrices.cell(a, b)] = matrices.latency_us[matrices.cell(b, a)] =
                my_latency_s[peer] * 1e6;
          }
        }
        quiet_barrier(MPI_COMM_WORLD);
      }
    }
  }
  return my_latency_s;
}

// The bandwidth of the link src -> dst in round `round`, this rank being one
// end; the sender fills the link's cells.
void measure_link_bandwidth(const Participant& me, int src, int dst, std::size_t round,
                            Buffers& buffers, const std::map<int, double>& my_latency_s,
                            Matrices& matrices) {
  const int peer = me.my_unit == src ? dst : src;
  const BandwidthSamples samples =
      measure_bandwidth(me.transport, me.rank_of(src), me.rank_of(dst), buffers.data, buffers.ack,
                        me.options.iterations, my_latency_s.at(peer));
  if (me.my_unit != src) return;
  const double bytes = static_cast<double>(me.options.size);
  const std::size_t cell = matrices.cell(src, dst);
  matrices.bandwidth_GBps[cell] = bytes / samples.median_s / 1e9;
  matrices.bandwidth_min_GBps[cell] = bytes / samples.max_s / 1e9;
  matrices.bandwidth_max_GBps[cell] = bytes / samples.min_s / 1e9;
  matrices.round[cell] = static_cast<double>(round);
}

// Bandwidth, round by round, one direction at a time: the pairs of a round
// together, or with --serial one pair after the other.
void measure_bandwidths(const Participant& me, const Rounds& rounds, Buffers& buffers,
                        const std::map<int, double>& my_latency_s, Matrices& matrices) {
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    for (const bool forward : {true, false}) {
      const std::size_t groups = me.options.serial ? rounds[r].size() : 1;
      for (std::size_t g = 0; g < groups; ++g) {
        for (std::size_t k = 0; k < rounds[r].size(); ++k) {
          if (me.options.serial && k != g) continue;
          const auto [a, b] = rounds[r][k];
          const int src = forward ? a : b;
          const int dst = forward ? b : a;
          if (me.my_unit == src || me.my_unit == dst) {
            measure_link_bandwidth(me, src, dst, r, buffers, my_latency_s, matrices);
          }
        }
        quiet_barrier(MPI_COMM_WORLD);
      }
    }
    report_progress(me.rank, fmt::format("round {}/{} done", r + 1, rounds.size()));
  }
}

// This rank's cells of every matrix: all of them on rank 0 afterwards.
Matrices measure(const Participant& me, Buffers& buffers) {
  const int n = static_cast<int>(me.units.size());
  const Rounds rounds = round_robin(n);
  Matrices matrices(n);
  report_progress(
      me.rank, fmt::format("{} hosts, {} pairs in {} rounds; latency at {} B, bandwidth at {}", n,
                           n * (n - 1) / 2, rounds.size(), me.options.latency_size,
                           format_bytes(me.options.size)));
  const std::map<int, double> my_latency_s =
      measure_latencies(me, rounds, buffers.latency_message, matrices);
  report_progress(me.rank, "latencies measured; bandwidth next");
  measure_bandwidths(me, rounds, buffers, my_latency_s, matrices);
  return matrices;
}

void sum_onto_rank_zero(Matrices& matrices) {
  for (std::vector<double>* matrix :
       {&matrices.latency_us, &matrices.bandwidth_GBps, &matrices.bandwidth_min_GBps,
        &matrices.bandwidth_max_GBps, &matrices.round}) {
    std::vector<double> sum(matrix->size(), 0.0);
    check_mpi(MPI_Reduce(matrix->data(), sum.data(), static_cast<int>(sum.size()), MPI_DOUBLE,
                         MPI_SUM, 0, MPI_COMM_WORLD),
              "MPI_Reduce", "link matrix");
    *matrix = std::move(sum);
  }
}

// Every directed pair, by source then destination.
std::vector<LinkMeasurement> directed_links(const Matrices& matrices) {
  std::vector<LinkMeasurement> links;
  for (int s = 0; s < matrices.n; ++s) {
    for (int d = 0; d < matrices.n; ++d) {
      if (s != d) {
        links.push_back({s, d, matrices.latency_us[matrices.cell(s, d)],
                         matrices.bandwidth_GBps[matrices.cell(s, d)]});
      }
    }
  }
  return links;
}

// What rank 0 reports: the measured links, their verdicts, and how and where
// they were measured.
struct Report {
  const Participant& me;
  const Matrices& matrices;
  const harness::RunMetadata& metadata;
  std::vector<LinkMeasurement> links;  // directed_links' order
  Analysis analysis;                   // analysis.links[i] is links[i]'s verdict

  const std::string& name(int unit) const { return me.units[static_cast<std::size_t>(unit)].name; }
};

std::string yes_no(bool value) { return value ? "yes" : "no"; }

ExistingFile existing_file_policy(const Options& options) {
  return options.force ? ExistingFile::overwrite : ExistingFile::refuse;
}

void write_links_csv(const Report& report) {
  const Options& options = report.me.options;
  const std::string utc = harness::utc_now_iso8601();
  CsvWriter csv(options.csv_path, columns::names(columns::kLinks), existing_file_policy(options));
  for (std::size_t i = 0; i < report.links.size(); ++i) {
    const LinkMeasurement& link = report.links[i];
    const LinkVerdict& verdict = report.analysis.links[i];
    const std::size_t cell = report.matrices.cell(link.src, link.dst);
    csv.write_row({report.name(link.src),
                   report.name(link.dst),
                   std::to_string(report.me.rank_of(link.src)),
                   std::to_string(report.me.rank_of(link.dst)),
                   format_fixed(report.matrices.round[cell], 0),
                   std::to_string(options.latency_size),
                   format_fixed(link.latency_us, 3),
                   std::to_string(options.size),
                   format_fixed(link.bandwidth_GBps, 6),
                   format_fixed(report.matrices.bandwidth_min_GBps[cell], 6),
                   format_fixed(report.matrices.bandwidth_max_GBps[cell], 6),
                   std::to_string(options.iterations),
                   yes_no(verdict.slow),
                   yes_no(verdict.high_latency),
                   yes_no(verdict.explained),
                   std::string(report.me.transport.kind()),
                   report.me.transport.provider(),
                   options.serial ? "serial" : "rounds",
                   report.metadata.run_id,
                   utc,
                   report.metadata.git_revision,
                   report.metadata.mpi_library});
  }
}

void write_hosts_csv(const Report& report) {
  const Options& options = report.me.options;
  const Analysis& analysis = report.analysis;
  CsvWriter csv(options.hosts_csv_path, columns::names(columns::kHosts),
                existing_file_policy(options));
  for (int u = 0; u < report.matrices.n; ++u) {
    const HostVerdict& host = analysis.hosts[static_cast<std::size_t>(u)];
    csv.write_row(
        {report.name(u), std::to_string(report.me.rank_of(u)), format_fixed(host.send_GBps, 6),
         format_fixed(host.recv_GBps, 6), format_fixed(host.latency_us, 3), yes_no(host.slow_send),
         yes_no(host.slow_recv), yes_no(host.slow()), yes_no(host.high_latency),
         format_fixed(analysis.median_send_GBps, 6), format_fixed(analysis.median_recv_GBps, 6),
         format_fixed(analysis.median_latency_us, 3), format_fixed(options.bandwidth_threshold, 3),
         format_fixed(options.latency_threshold, 3), report.metadata.run_id});
  }
}

// The names of the hosts or links with each verdict, for the summary lines.
struct Flagged {
  std::vector<std::string> slow, high_latency;
};

void print_medians(const Report& report) {
  const Options& options = report.me.options;
  const Analysis& analysis = report.analysis;
  fmt::print("link matrix: {} hosts ({}), {} links, {} B latency, {} bandwidth, {} transport\n",
             report.matrices.n, options.unit == "rank" ? "one per rank" : "by hostname",
             report.links.size(), options.latency_size, format_bytes(options.size),
             report.me.transport.kind());
  fmt::print("median host (best link): send {:.4f} GB/s, receive {:.4f} GB/s, latency {:.1f} us\n",
             analysis.median_send_GBps, analysis.median_recv_GBps, analysis.median_latency_us);
  fmt::print("median link: {:.4f} GB/s, latency {:.1f} us\n", analysis.median_link_GBps,
             analysis.median_link_latency_us);
}

// One line per slow or high-latency host, with how far it is from the median.
Flagged print_host_verdicts(const Report& report) {
  const Analysis& analysis = report.analysis;
  Flagged flagged;
  for (int u = 0; u < report.matrices.n; ++u) {
    const HostVerdict& host = analysis.hosts[static_cast<std::size_t>(u)];
    const std::string& name = report.name(u);
    if (host.slow()) {
      flagged.slow.push_back(name);
      fmt::print(
          "slow host {}: best send {:.4f} GB/s ({:.0f}% of the median), best receive {:.4f} GB/s "
          "({:.0f}%)\n",
          name, host.send_GBps, 100 * host.send_GBps / analysis.median_send_GBps, host.recv_GBps,
          100 * host.recv_GBps / analysis.median_recv_GBps);
    }
    if (host.high_latency) {
      flagged.high_latency.push_back(name);
      fmt::print("high-latency host {}: best {:.1f} us ({:.1f}x the median)\n", name,
                 host.latency_us, host.latency_us / analysis.median_latency_us);
    }
  }
  return flagged;
}

// One line per slow link that no slow host at either end explains.
Flagged print_link_verdicts(const Report& report) {
  Flagged flagged;
  for (std::size_t i = 0; i < report.links.size(); ++i) {
    const LinkMeasurement& link = report.links[i];
    const LinkVerdict& verdict = report.analysis.links[i];
    const std::string name = fmt::format("{}->{}", report.name(link.src), report.name(link.dst));
    if (verdict.slow && !verdict.explained) {
      flagged.slow.push_back(name);
      fmt::print("slow link {}: {:.4f} GB/s, though neither end is a slow host\n", name,
                 link.bandwidth_GBps);
    }
    if (verdict.high_latency) flagged.high_latency.push_back(name);
  }
  return flagged;
}

std::string names_or_none(const std::vector<std::string>& names) {
  return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, " "));
}

void print_summary(const Options& options, const Flagged& hosts, const Flagged& links) {
  fmt::print("slow hosts (bandwidth < {:.0f}% of the median): {}\n",
             100 * (1 - options.bandwidth_threshold), names_or_none(hosts.slow));
  fmt::print(
      "slow links (bandwidth < {:.0f}% of the median link) not explained by a slow host: {}\n",
      100 * (1 - options.bandwidth_threshold), names_or_none(links.slow));
  fmt::print("high-latency hosts (latency > {:.1f}x the median): {}\n",
             1 + options.latency_threshold, names_or_none(hosts.high_latency));
  fmt::print("high-latency links (latency > {:.1f}x the median link): {}\n",
             1 + options.latency_threshold, names_or_none(links.high_latency));
}

// On rank 0: the verdicts, the CSVs asked for and the slow hosts and links by name.
void report_results(const Participant& me, const Matrices& matrices,
                    const harness::RunMetadata& metadata) {
  Report report{me, matrices, metadata, directed_links(matrices), {}};
  report.analysis =
      analyze(matrices.n, report.links,
              Thresholds{me.options.bandwidth_threshold, me.options.latency_threshold});
  if (!me.options.csv_path.empty()) write_links_csv(report);
  if (!me.options.hosts_csv_path.empty()) write_hosts_csv(report);
  print_medians(report);
  const Flagged hosts = print_host_verdicts(report);
  const Flagged links = print_link_verdicts(report);
  print_summary(me.options, hosts, links);
  std::fflush(stdout);
}

int run(int argc, char** argv) {
  int rank = 0, size = 1;
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
  Options options;
  if (const std::optional<int> status = parse_command_line(rank, argc, argv, options)) {
    return *status;
  }

  const harness::RunMetadata metadata =
      harness::gather_metadata(MPI_COMM_WORLD, options.run_id, options.transport == "ofi");
  const std::vector<Unit> units = find_units(options, metadata, size);
  if (units.size() < 2) {
    if (rank == 0) {
      fmt::print(stderr,
                 "collbench-linkmatrix: all {} ranks run on one host ({}); a link matrix needs "
                 "ranks on at least 2 hosts (or --unit rank to pair ranks)\n",
                 size, metadata.hosts);
    }
    return kUsageStatus;
  }

  const std::unique_ptr<InstrumentedTransport> transport = open_transport(options);
  const Participant me{options, units, *transport, rank, unit_of(units, rank)};
  Buffers buffers(*transport, options, me.my_unit >= 0);
  Matrices matrices = measure(me, buffers);
  sum_onto_rank_zero(matrices);
  if (rank == 0) report_results(me, matrices, metadata);
  return 0;
}

}  // namespace
}  // namespace collbench::linkmatrix

int main(int argc, char** argv) {
  collbench::cli::fail_on_unwritten_standard_output("collbench-linkmatrix");
  collbench::harness::set_process_signals();
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    status = collbench::linkmatrix::run(argc, argv);
  } catch (const std::exception& error) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    // Errors that already name their rank (a transport's timeout) say it once.
    const std::string what = error.what();
    const std::string prefix = fmt::format("rank {}: ", rank);
    fmt::print(stderr, "collbench-linkmatrix: {}{}\n", what.starts_with(prefix) ? "" : prefix,
               what);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}
