// The run's output files; see output_files.h.
#include "output_files.h"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include "collbench/core/csv.h"
#include "train_family.h"

namespace collbench::harness {

std::string csv_path_problem(const Options& options) {
  namespace fs = std::filesystem;
  const fs::path path(options.csv_path);
  const fs::path directory = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (!fs::is_directory(directory)) {
    return fmt::format("--csv {}: the folder {} does not exist", options.csv_path,
                       directory.string());
  }
  if (fs::is_directory(path)) {
    return fmt::format("--csv {}: is a folder; name a file (e.g. {})", options.csv_path,
                       (path / "run.csv").string());
  }
  return {};
}

std::string benchmark_out_problem(const std::vector<std::string>& args, const Options& options) {
  namespace fs = std::filesystem;
  bool given = false;
  for (const std::string& arg : args) {
    if (arg.rfind("--benchmark_out=", 0) != 0) continue;
    given = true;
    const fs::path path(arg.substr(16));
    const fs::path directory = path.has_parent_path() ? path.parent_path() : fs::path(".");
    if (path.empty() || !fs::is_directory(directory) || access(directory.c_str(), W_OK) != 0) {
      return fmt::format("{}: cannot write a file there (folder missing or not writable)", arg);
    }
    std::error_code status_error;
    const fs::file_status status = fs::status(path, status_error);
    if (!fs::exists(status)) continue;
    if (!fs::is_regular_file(status)) {
      return fmt::format("{}: {} is not a regular file (a device, pipe or folder); name a file",
                         arg, path.string());
    }
    if (options.append) {
      return fmt::format(
          "{}: {} already exists and Google Benchmark cannot append to it; name another path, "
          "or drop --append and pass --force to overwrite it",
          arg, path.string());
    }
    if (!options.force) {
      return fmt::format("{}: {} already exists; choose another path, or pass --force", arg,
                         path.string());
    }
  }
  if (options.force && !given && options.csv_path.empty() && options.timeline_path.empty()) {
    return "--force needs --csv PATH, --benchmark_out=PATH or --timeline PATH";
  }
  return {};
}

std::string benchmark_out_path(const std::vector<std::string>& args) {
  std::string path;
  for (const std::string& arg : args) {
    if (arg.rfind("--benchmark_out=", 0) == 0) path = arg.substr(16);
  }
  return path;
}

std::string partial_benchmark_out(const std::string& path) {
  return fmt::format("{}.collbench-partial-{}", path, ::getpid());
}

bool benchmark_out_complete(const std::string& path, const std::string& format) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return false;
  std::array<char, 2> tail{};
  const bool read = std::fseek(file, -2, SEEK_END) == 0 && std::fread(tail.data(), 1, 2, file) == 2;
  std::fclose(file);
  if (!read || tail[1] != '\n') return false;
  return format != "json" || tail[0] == '}';
}

std::string finish_benchmark_out(const std::string& target, const std::string& format) {
  const std::string partial = partial_benchmark_out(target);
  if (!std::filesystem::exists(partial)) return {};
  if (!benchmark_out_complete(partial, format)) {
    std::remove(partial.c_str());
    return fmt::format(
        "--benchmark_out={}: the report was cut short (the file system is full, or the file "
        "reached the size limit of ulimit -f); no file written",
        target);
  }
  if (std::rename(partial.c_str(), target.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(partial.c_str());
    return fmt::format("--benchmark_out={}: cannot rename the finished report into place: {}",
                       target, reason);
  }
  return {};
}

std::string timeline_problem(const Options& options) {
  namespace fs = std::filesystem;
  if (options.timeline_path.empty()) return {};
  const fs::path path(options.timeline_path);
  const fs::path directory = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (!fs::is_directory(directory) || access(directory.c_str(), W_OK) != 0) {
    return fmt::format("--timeline {}: cannot write a file there (folder missing or not writable)",
                       options.timeline_path);
  }
  std::error_code status_error;
  const fs::file_status status = fs::status(path, status_error);
  if (!fs::exists(status)) return {};
  if (!fs::is_regular_file(status)) {
    return fmt::format("--timeline {}: not a regular file (a device, pipe or folder); name a file",
                       options.timeline_path);
  }
  if (!options.force) {
    return fmt::format("--timeline {}: already exists; choose another path, or pass --force",
                       options.timeline_path);
  }
  return {};
}

std::string write_timeline(const Options& options) {
  if (options.timeline_path.empty()) return {};
  const std::string json = chrome_trace_json(take_train_timelines());
  const std::string partial =
      fmt::format("{}.collbench-partial-{}", options.timeline_path, ::getpid());
  std::FILE* file = std::fopen(partial.c_str(), "wb");
  const bool written =
      file != nullptr && std::fwrite(json.data(), 1, json.size(), file) == json.size();
  const bool closed = file != nullptr && std::fclose(file) == 0;
  if (!written || !closed || std::rename(partial.c_str(), options.timeline_path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(partial.c_str());
    return fmt::format("--timeline {}: cannot write the timeline ({}); no file written",
                       options.timeline_path, reason);
  }
  return {};
}

std::string shared_output_problem(const Options& options, const std::vector<std::string>& args) {
  const std::pair<std::string, std::string> outputs[] = {
      {"--csv " + options.csv_path, options.csv_path},
      {"--benchmark_out=" + benchmark_out_path(args), benchmark_out_path(args)},
      {"--timeline " + options.timeline_path, options.timeline_path}};
  for (auto a = std::begin(outputs); a != std::end(outputs); ++a) {
    for (auto b = a + 1; b != std::end(outputs); ++b) {
      if (a->second.empty() || b->second.empty() || !names_same_file(a->second, b->second)) {
        continue;
      }
      return fmt::format("{} and {} name the same file; each output needs its own path", a->first,
                         b->first);
    }
  }
  return {};
}

BenchmarkOut benchmark_out_of(const std::vector<std::string>& args) {
  BenchmarkOut out;
  out.target = benchmark_out_path(args);
  for (const std::string& arg : args) {
    if (arg.rfind("--benchmark_out_format=", 0) == 0) out.format = arg.substr(23);
  }
  return out;
}

}  // namespace collbench::harness
