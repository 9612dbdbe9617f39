// The job as main.cpp starts it; see world.h.
#include "world.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "collbench/transport/mpi_transport.h"

namespace collbench::harness {

std::string executable_digest() {
  std::FILE* file = std::fopen("/proc/self/exe", "rb");
  if (file == nullptr) return "unknown";
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  std::array<unsigned char, 1 << 16> chunk{};
  std::size_t got = 0;
  while ((got = std::fread(chunk.data(), 1, chunk.size(), file)) > 0) {
    for (std::size_t i = 0; i < got; ++i) {
      hash = (hash ^ chunk[i]) * 0x100000001b3ULL;
    }
  }
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  return failed ? "unknown" : fmt::format("{:016x}", hash);
}

bool all_ranks_ok(const World& world, const std::string& error) {
  if (world.bootstrap) {
    const std::vector<std::string> errors = world.bootstrap->allgather(error);
    const auto first =
        std::find_if(errors.begin(), errors.end(), [](const auto& e) { return !e.empty(); });
    if (first == errors.end()) return true;
    if (first - errors.begin() == world.rank) fmt::print(stderr, "collbench: {}\n", error);
    return false;
  }
  if (!world.mpi) {
    if (!error.empty() && world.rank == 0) fmt::print(stderr, "collbench: {}\n", error);
    return error.empty();
  }
  int mine = error.empty() ? world.size : world.rank;
  int first = world.size;
  check_mpi(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, world.comm), "MPI_Allreduce",
            "error agreement");
  if (first == world.size) return true;
  if (world.rank == first) {
    fmt::print(stderr, "collbench: {}\n", error);
    std::fflush(stderr);
  }
  return false;
}

std::string compare_configurations(const World& world,
                                   const std::vector<std::pair<std::string, std::string>>& fields) {
  // Unit and record separators cannot appear in command-line text.
  std::string serialized;
  for (const auto& [name, value] : fields) serialized += name + '\x1f' + value + '\x1e';
  if (world.bootstrap) {
    return configuration_difference(serialized, world.bootstrap->allgather(serialized), world);
  }
  if (!world.mpi) return {};  // one process: one configuration
  int length = static_cast<int>(serialized.size());
  std::vector<int> lengths(static_cast<std::size_t>(world.size));
  check_mpi(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, world.comm),
            "MPI_Gather", "configuration lengths");
  std::vector<int> offsets(static_cast<std::size_t>(world.size), 0);
  for (std::size_t r = 1; r < offsets.size(); ++r) offsets[r] = offsets[r - 1] + lengths[r - 1];
  std::string all(world.rank == 0 ? static_cast<std::size_t>(offsets.back() + lengths.back()) : 0,
                  '\0');
  check_mpi(MPI_Gatherv(serialized.data(), length, MPI_CHAR, all.data(), lengths.data(),
                        offsets.data(), MPI_CHAR, 0, world.comm),
            "MPI_Gatherv", "configurations");
  std::vector<std::string> by_rank;
  for (std::size_t r = 0; world.rank == 0 && r < offsets.size(); ++r) {
    by_rank.push_back(
        all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  }
  return configuration_difference(serialized, by_rank, world);
}

std::string configuration_difference(const std::string& serialized,
                                     const std::vector<std::string>& by_rank, const World& world) {
  std::string difference;
  if (world.rank == 0) {
    auto parse = [](std::string_view text) {
      std::map<std::string, std::string> map;
      while (!text.empty()) {
        const auto end = text.find('\x1e');
        const std::string_view record = text.substr(0, end);
        const auto separator = record.find('\x1f');
        map[std::string(record.substr(0, separator))] = std::string(record.substr(separator + 1));
        text.remove_prefix(end + 1);
      }
      return map;
    };
    const auto reference = parse(serialized);
    for (int r = 1; r < world.size && difference.empty(); ++r) {
      const auto theirs = parse(by_rank[static_cast<std::size_t>(r)]);
      std::set<std::string> names;
      for (const auto& entry : reference) names.insert(entry.first);
      for (const auto& entry : theirs) names.insert(entry.first);
      for (const std::string& name : names) {
        const auto ours = reference.find(name);
        const auto other = theirs.find(name);
        const std::string a = ours == reference.end() ? "(not given)" : '"' + ours->second + '"';
        const std::string b = other == theirs.end() ? "(not given)" : '"' + other->second + '"';
        if (a != b) {
          const bool build = name.starts_with("collbench ");
          difference = fmt::format(
              "ranks were started with different {}: {} is {} on rank 0 but {} on rank {}; "
              "every rank must {}",
              build ? "builds" : "options", name, a, b, r,
              build ? "run the same collbench executable" : "get the same arguments");
          break;
        }
      }
    }
  }
  return difference;
}

std::uint64_t agreed_memory_limit(const World& world, const RunMetadata& metadata) {
  // 90%: the MPI library, the page cache it may need and the OS keep some.
  const std::uint64_t available = node_available_memory();
  unsigned long long mine =
      available == 0 ? ULLONG_MAX
                     : available / static_cast<std::uint64_t>(metadata.ranks_on_my_node) / 10 * 9;
  unsigned long long limit = mine;
  if (world.bootstrap) {
    for (const std::string& theirs : world.bootstrap->allgather(std::to_string(mine))) {
      limit = std::min(limit, std::stoull(theirs));
    }
  } else if (world.mpi) {
    check_mpi(MPI_Allreduce(&mine, &limit, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, world.comm),
              "MPI_Allreduce", "memory limit");
  }
  return limit == ULLONG_MAX ? 0 : limit;
}

std::string launch_problem(const World& world, const std::string& what) {
  for (const char* variable : kLauncherRankVariables) {
    if (std::getenv(variable) == nullptr) continue;
    return fmt::format(
        "{} and cannot start under mpirun or srun ({} is set); start collbench "
        "without them",
        what, variable);
  }
  if (world.mpi) return fmt::format("{}: start collbench without mpirun and without MPI", what);
  return {};
}

void open_bootstrap(World& world, const Options& options) {
  try {
    world.bootstrap = make_file_bootstrap(options.bootstrap_folder(), options.rank, options.ranks,
                                          start_up_timeout(options, options.ranks));
  } catch (const std::exception& failure) {
    throw UsageError(fmt::format("--bootstrap {} (rank {} of {}): {}", options.bootstrap,
                                 options.rank, options.ranks, failure.what()));
  }
  world.rank = options.rank;
  world.size = options.ranks;
}

std::string requested(int argc, char** argv, std::string_view option, std::string_view fallback) {
  std::string value(fallback);
  const std::string with_equals = std::string(option) + "=";
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (arg == option && i + 1 < argc) value = argv[++i];
    if (arg.starts_with(with_equals)) value = arg.substr(with_equals.size());
  }
  return value;
}

}  // namespace collbench::harness
