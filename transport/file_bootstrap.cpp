// The file bootstrap: ranks meet in a folder they all can read (see
// make_file_bootstrap in bootstrap.h for the protocol and its clean-up).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>

#include "collbench/transport/bootstrap.h"

namespace collbench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kMagic = "collbench-bootstrap";
constexpr std::string_view kFarewell = "farewell";

// Poll the folder every millisecond at first, backing off to this: peers
// that arrive together are seen at once, and a long wait does not hammer
// a shared file system.
constexpr std::chrono::milliseconds kLongestPoll{20};

std::uint64_t random_nonce() {
  std::random_device device;
  std::uint64_t nonce = (std::uint64_t{device()} << 32) ^ device();
  // Also the pid and the clock, in case random_device is deterministic.
  nonce ^= static_cast<std::uint64_t>(::getpid()) * 0x9e3779b97f4a7c15ULL;
  nonce ^= static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
  return nonce;
}

// A file's name: rank<R>.round<K> or rank<R>.farewell.
std::string file_name(int rank, std::string_view suffix) {
  return fmt::format("rank{}.{}", rank, suffix);
}

// The rank of a bootstrap file's name, or nothing for other names
// (temporary files start with a dot and are not matched either).
std::optional<int> rank_of_file(std::string_view name) {
  if (!name.starts_with("rank")) return std::nullopt;
  int rank = 0;
  const char* begin = name.data() + 4;
  const auto [end, error] = std::from_chars(begin, name.data() + name.size(), rank);
  if (error != std::errc() || end == begin || *end != '.') return std::nullopt;
  const std::string_view suffix(end + 1,
                                static_cast<std::size_t>(name.data() + name.size() - end - 1));
  if (suffix != kFarewell && !suffix.starts_with("round")) return std::nullopt;
  return rank;
}

class FileBootstrap final : public Bootstrap {
 public:
  FileBootstrap(std::string dir, int rank, int ranks, std::chrono::milliseconds timeout)
      : dir_(std::move(dir)), rank_(rank), ranks_(ranks), timeout_(timeout) {
    if (ranks < 1 || rank < 0 || rank >= ranks) {
      throw std::invalid_argument(fmt::format(
          "file bootstrap: rank {} of {} ranks: expected 0 <= rank < ranks", rank, ranks));
    }
    std::error_code error;
    if (dir_.empty() || !fs::is_directory(dir_, error)) {
      throw std::runtime_error(fmt::format(
          "file bootstrap: folder '{}' does not exist: create it, on a file system every rank "
          "can read, before starting the ranks",
          dir_));
    }
    refuse_stale_folder();
    // Round 0: the greeting. Each rank's random number is in the job field
    // of its file; the job's identity is made of all of them.
    const std::uint64_t nonce = random_nonce();
    write_file(round_name(0), nonce, {});
    try {
      const std::vector<File> greetings = gather(round_name(0), all_ranks(), /*check_job=*/false);
      std::uint64_t job = 0xcbf29ce484222325ULL;  // FNV-1a over the numbers in rank order
      for (const File& greeting : greetings) {
        for (int byte = 0; byte < 8; ++byte) {
          job = (job ^ ((greeting.job >> (8 * byte)) & 0xff)) * 0x100000001b3ULL;
        }
      }
      job_ = job;
    } catch (...) {
      remove_own_files();
      throw;
    }
  }

  ~FileBootstrap() override {
    if (failed_) {
      // The others may never come: no farewell, just what is ours.
      remove_own_files();
      return;
    }
    try {
      if (rank_ != 0) {
        // Rank 0 removes this file once every rank has said farewell: then
        // all of this rank's files are gone, and DIR can be reused.
        write_file(std::string(kFarewell), job_, {});
        const fs::path farewell = path(file_name(rank_, kFarewell));
        const auto deadline = Clock::now() + timeout_;
        for (auto pause = std::chrono::milliseconds(1); fs::exists(farewell);
             pause = std::min(2 * pause, kLongestPoll)) {
          if (Clock::now() > deadline) {
            std::fprintf(stderr,
                         "file bootstrap: rank %d: rank 0 did not acknowledge the end of the job "
                         "within %lld ms: files remain in %s; empty it before the next job\n",
                         rank_, static_cast<long long>(timeout_.count()), dir_.c_str());
            return;
          }
          std::this_thread::sleep_for(pause);
        }
        return;
      }
      std::vector<int> others;
      for (int r = 1; r < ranks_; ++r) others.push_back(r);
      gather(std::string(kFarewell), others, /*check_job=*/true);
      // Every rank has read the last round: its files go, then the
      // farewells, whose removal tells each rank that all of its files are.
      for (int r = 0; r < ranks_; ++r) remove(file_name(r, round_name(round_)));
      for (int r = 1; r < ranks_; ++r) remove(file_name(r, kFarewell));
    } catch (const std::exception& error) {
      std::fprintf(stderr, "%s; files remain in %s: empty it before the next job\n", error.what(),
                   dir_.c_str());
    }
  }

  std::string_view kind() const override { return "file"; }
  int rank() const override { return rank_; }
  int size() const override { return ranks_; }

  std::vector<std::string> allgather(std::string_view mine) override {
    if (failed_) {
      throw std::runtime_error(
          fmt::format("file bootstrap in {}: an earlier exchange failed on this rank", dir_));
    }
    ++round_;
    std::vector<File> files;
    try {
      write_file(round_name(round_), job_, mine);
      files = gather(round_name(round_), all_ranks(), /*check_job=*/true);
    } catch (...) {
      failed_ = true;
      throw;
    }
    // Every rank has written this round, so every rank has read the last.
    remove(file_name(rank_, round_name(round_ - 1)));
    std::vector<std::string> result;
    result.reserve(files.size());
    for (File& file : files) result.push_back(std::move(file.payload));
    return result;
  }

 private:
  struct File {
    std::uint64_t job = 0;
    std::string payload;
  };

  static std::string round_name(std::uint64_t round) { return fmt::format("round{}", round); }

  fs::path path(const std::string& name) const { return fs::path(dir_) / name; }

  std::vector<int> all_ranks() const {
    std::vector<int> ranks(static_cast<std::size_t>(ranks_));
    for (int r = 0; r < ranks_; ++r) ranks[static_cast<std::size_t>(r)] = r;
    return ranks;
  }

  std::string stale(const std::string& name, std::string_view why) const {
    return fmt::format(
        "file bootstrap: {} {}: the folder holds files of another job; empty it or choose "
        "another folder",
        path(name).string(), why);
  }

  // A file of this rank already here, or of a rank this job does not have,
  // was left by another job (one that failed, or is still running).
  void refuse_stale_folder() const {
    std::error_code error;
    for (fs::directory_iterator it(dir_, error), end; !error && it != end; it.increment(error)) {
      const std::string name = it->path().filename().string();
      const std::optional<int> rank = rank_of_file(name);
      if (!rank) continue;
      if (*rank == rank_) throw std::runtime_error(stale(name, "exists as this rank starts"));
      if (*rank >= ranks_) {
        throw std::runtime_error(
            stale(name, fmt::format("is of a rank beyond this job's {}", ranks_)));
      }
    }
    if (error) {
      throw std::runtime_error(
          fmt::format("file bootstrap: cannot list folder {}: {}", dir_, error.message()));
    }
  }

  // Written under a temporary name and renamed, so readers never see it
  // half-written.
  void write_file(const std::string& suffix, std::uint64_t job, std::string_view payload) const {
    const std::string name = file_name(rank_, suffix);
    const fs::path final_path = path(name);
    const fs::path temporary = path(fmt::format(".{}.{}.tmp", name, ::getpid()));
    {
      std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
      out << fmt::format("{} ranks={} file={} job={:016x}\n", kMagic, ranks_, name, job);
      out.write(payload.data(), static_cast<std::streamsize>(payload.size()));
      out.close();
      if (!out) {
        const int saved = errno;
        std::error_code ignored;
        fs::remove(temporary, ignored);
        throw std::runtime_error(fmt::format("file bootstrap: cannot write {}: {}",
                                             temporary.string(), std::strerror(saved)));
      }
    }
    std::error_code error;
    fs::rename(temporary, final_path, error);
    if (error) {
      fs::remove(temporary, error);
      throw std::runtime_error(fmt::format("file bootstrap: cannot rename {} to {}: {}",
                                           temporary.string(), final_path.string(),
                                           error.message()));
    }
  }

  // Rank `rank`'s file `suffix`, or nothing while it is not there.
  std::optional<File> read_file(int rank, const std::string& suffix, bool check_job) const {
    const std::string name = file_name(rank, suffix);
    std::ifstream in(path(name), std::ios::binary);
    if (!in) return std::nullopt;
    std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t end_of_header = content.find('\n');
    const std::string_view header = std::string_view(content).substr(0, end_of_header);
    int ranks = 0;
    unsigned long long job = 0;
    char file[64] = {};
    const std::string format = fmt::format("{} ranks=%d file=%63s job=%llx", kMagic);
    if (end_of_header == std::string::npos ||
        std::sscanf(std::string(header).c_str(), format.c_str(), &ranks, file, &job) != 3 ||
        name != file) {
      throw std::runtime_error(stale(name, "is not a bootstrap file of this kind"));
    }
    if (ranks != ranks_) {
      throw std::runtime_error(stale(
          name, fmt::format("was written by a job of {} ranks, this one has {}", ranks, ranks_)));
    }
    if (check_job && job != job_) {
      throw std::runtime_error(stale(name, "belongs to another job (it greeted other ranks)"));
    }
    return File{job, content.substr(end_of_header + 1)};
  }

  // Waits for the files `suffix` of `ranks`, bounded by the timeout;
  // returns them in the order of `ranks`.
  std::vector<File> gather(const std::string& suffix, const std::vector<int>& ranks,
                           bool check_job) const {
    std::vector<std::optional<File>> files(ranks.size());
    const auto deadline = Clock::now() + timeout_;
    for (auto pause = std::chrono::milliseconds(1);; pause = std::min(2 * pause, kLongestPoll)) {
      std::vector<int> missing;
      for (std::size_t i = 0; i < ranks.size(); ++i) {
        if (!files[i]) files[i] = read_file(ranks[i], suffix, check_job);
        if (!files[i]) missing.push_back(ranks[i]);
      }
      if (missing.empty()) break;
      if (Clock::now() > deadline) {
        std::string names;
        for (const int r : missing) names += fmt::format("{}{}", names.empty() ? "" : ", ", r);
        throw std::runtime_error(fmt::format(
            "file bootstrap in {}: rank{} {} of {} did not arrive (no {} file) within {} ms: "
            "not started, failed, or given another folder",
            dir_, missing.size() > 1 ? "s" : "", names, ranks_, suffix, timeout_.count()));
      }
      std::this_thread::sleep_for(pause);
    }
    std::vector<File> result;
    result.reserve(files.size());
    for (std::optional<File>& file : files) result.push_back(std::move(*file));
    return result;
  }

  void remove(const std::string& name) const {
    std::error_code ignored;
    fs::remove(path(name), ignored);
  }

  void remove_own_files() const {
    remove(file_name(rank_, round_name(round_)));
    if (round_ > 0) remove(file_name(rank_, round_name(round_ - 1)));
    remove(file_name(rank_, kFarewell));
  }

  const std::string dir_;
  const int rank_;
  const int ranks_;
  const std::chrono::milliseconds timeout_;
  std::uint64_t job_ = 0;
  std::uint64_t round_ = 0;  // of the last file written
  bool failed_ = false;
};

}  // namespace

std::unique_ptr<Bootstrap> make_file_bootstrap(const std::string& dir, int rank, int ranks,
                                               std::chrono::milliseconds timeout) {
  return std::make_unique<FileBootstrap>(dir, rank, ranks, timeout);
}

}  // namespace collbench
