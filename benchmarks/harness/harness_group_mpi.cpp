// The harness's collectives for one rank per MPI process; see
// harness_group.h. Each is a non-blocking MPI call on the communicator the
// Runner is given (the harness's own), polled against the transport's
// timeout (a blocking call when the timeout is 0). A rank whose wait times
// out tells the others where it is, over a second communicator kept for
// that, and listens for the ones that also wait; the lowest rank heard from
// reports, and the job ends (MPI_Abort).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "collbench/transport/mpi_transport.h"
#include "harness_group.h"
#include "process_signals.h"

namespace collbench::harness {
namespace {

// On the diagnosis communicator, which carries nothing else.
constexpr int kDiagnosisTag = 1;

class MpiHarnessGroup final : public HarnessGroup {
 public:
  MpiHarnessGroup(InstrumentedTransport& transport, MPI_Comm comm, TimeoutReport report)
      : transport_(transport), report_(std::move(report)), comm_(comm) {
    check_mpi(MPI_Comm_dup(comm, &diagnosis_comm_), "MPI_Comm_dup", "timeout diagnosis");
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &ranks_);
  }
  ~MpiHarnessGroup() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized == 0) MPI_Comm_free(&diagnosis_comm_);
  }
  MpiHarnessGroup(const MpiHarnessGroup&) = delete;
  MpiHarnessGroup& operator=(const MpiHarnessGroup&) = delete;

  void each_rank(const std::function<void(int rank)>& body) override { body(rank_); }
  double now(InstrumentedTransport&) const override { return MPI_Wtime(); }
  bool names_rank_in_errors() const override { return true; }

  void barrier(InstrumentedTransport&, const char* what) override {
    if (timeout().count() == 0) {
      check_mpi(MPI_Barrier(comm_), "MPI_Barrier", "{}", what);
      return;
    }
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier", "{}", what);
    wait_bounded(request, what);
  }
  void sleeping_barrier(InstrumentedTransport&, const char* what) override {
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier", "{}", what);
    wait_bounded(request, what, /*sleeping=*/true);
  }

  SecondsOnRank slowest(SecondsOnRank mine, const char* what) override {
    // MAXLOC (MPI_DOUBLE_INT's layout): the lowest rank of equal times.
    SecondsOnRank slowest;
    allreduce(&mine, &slowest, 1, MPI_DOUBLE_INT, MPI_MAXLOC, what);
    return slowest;
  }
  std::uint64_t sum(std::uint64_t mine, const char* what) override {
    unsigned long long local = mine;
    unsigned long long sum = 0;
    allreduce(&local, &sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, what);
    return sum;
  }
  double sum(double mine, const char* what) override {
    double sum = 0;
    allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, what);
    return sum;
  }
  int min(int mine, const char* what) override {
    int min = 0;
    allreduce(&mine, &min, 1, MPI_INT, MPI_MIN, what);
    return min;
  }
  void broadcast(std::span<std::byte> bytes, int root, const char* what) override {
    const auto count = static_cast<int>(bytes.size());
    if (timeout().count() == 0) {
      check_mpi(MPI_Bcast(bytes.data(), count, MPI_BYTE, root, comm_), "MPI_Bcast", "{}", what);
      return;
    }
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Ibcast(bytes.data(), count, MPI_BYTE, root, comm_, &request), "MPI_Ibcast", "{}",
              what);
    wait_bounded(request, what);
  }
  std::vector<double> gather(std::span<const double> mine, const char* what) override {
    std::vector<double> all(static_cast<std::size_t>(ranks_));
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(
        MPI_Iallgather(mine.data(), 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, comm_, &request),
        "MPI_Iallgather", "{}", what);
    wait_bounded(request, what);
    return all;
  }

  void timed_out(const std::string& detail) override { abort_on_timeout(detail); }

 private:
  std::chrono::milliseconds timeout() const { return transport_.timeout(); }

  void wait_bounded(MPI_Request& request, const char* what, bool sleeping = false) {
    const std::chrono::milliseconds limit = timeout();
    if (limit.count() == 0 && !sleeping) {
      check_mpi(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait", "{}", what);
      return;
    }
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int done = 0;
    for (std::uint64_t polls = 0;; ++polls) {
      check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test", "{}", what);
      if (done != 0) return;
      if (sleeping) std::this_thread::sleep_for(std::chrono::microseconds(20));
      if (limit.count() > 0 && (sleeping || (polls & 255) == 0) &&
          std::chrono::steady_clock::now() > deadline) {
        abort_on_timeout(
            fmt::format("rank {}: timed out after {} ms in {}", rank_, limit.count(), what));
      }
    }
  }

  void allreduce(const void* send, void* receive, int count, MPI_Datatype type, MPI_Op op,
                 const char* what) {
    if (timeout().count() == 0) {
      check_mpi(MPI_Allreduce(send, receive, count, type, op, comm_), "MPI_Allreduce", "{}", what);
      return;
    }
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Iallreduce(send, receive, count, type, op, comm_, &request), "MPI_Iallreduce",
              "{}", what);
    wait_bounded(request, what);
  }

  // What a rank that timed out hears from the others. Its buffers belong to
  // MPI requests that may still complete, so it lives until the job ends.
  struct Listening {
    Whereabouts mine{};
    std::vector<Whereabouts> theirs;
    std::vector<MPI_Request> sends;
    std::vector<MPI_Request> receives;
    std::vector<bool> heard;
  };

  // At a wait that timed out, while the buffers of its pending operations
  // are alive (MPI may write into them while this talks).
  [[noreturn]] void abort_on_timeout(const std::string& detail) {
    Listening listening;
    const Arrivals arrivals = listen_for_waiting_ranks(listening);
    if (arrivals.arrived.front() == rank_) {
      report_.report(arrivals, detail);
    } else {
      // The lowest rank that arrived reports, and its MPI_Abort ends this
      // process too; aborting at the same time would garble mpirun's output.
      std::this_thread::sleep_for(std::chrono::seconds(5));
    }
    abort_job();
  }

  // Tells every other rank where this one waits and hears where the ones
  // that also wait are, for up to a timeout (at most 10 s).
  Arrivals listen_for_waiting_ranks(Listening& listening) {
    const auto ranks = static_cast<std::size_t>(ranks_);
    listening.mine = report_.where();
    // Each rank that timed out tells every other rank where it waits, then
    // listens. A rank that arrived at this call up to one timeout after this
    // one times out up to one timeout after it, so listening that long hears
    // every rank that arrived in time (capped: a hang of 5 minutes need not
    // take 10 to report).
    const auto listen = std::clamp<std::chrono::milliseconds>(timeout(), std::chrono::seconds(1),
                                                              std::chrono::seconds(10));
    listening.theirs.resize(ranks);
    listening.receives.assign(ranks, MPI_REQUEST_NULL);
    for (int r = 0; r < ranks_; ++r) {
      if (r == rank_) continue;
      MPI_Request& send = listening.sends.emplace_back(MPI_REQUEST_NULL);
      MPI_Isend(listening.mine.data(), 3, MPI_LONG_LONG, r, kDiagnosisTag, diagnosis_comm_, &send);
      MPI_Irecv(listening.theirs[static_cast<std::size_t>(r)].data(), 3, MPI_LONG_LONG, r,
                kDiagnosisTag, diagnosis_comm_, &listening.receives[static_cast<std::size_t>(r)]);
    }
    const auto deadline = std::chrono::steady_clock::now() + listen;
    std::vector<bool>& heard = listening.heard;
    heard.assign(ranks, false);
    heard[static_cast<std::size_t>(rank_)] = true;
    for (int waiting = ranks_ - 1; waiting > 0 && std::chrono::steady_clock::now() < deadline;) {
      for (int r = 0; r < ranks_; ++r) {
        int done = 0;
        if (heard[static_cast<std::size_t>(r)]) continue;
        MPI_Test(&listening.receives[static_cast<std::size_t>(r)], &done, MPI_STATUS_IGNORE);
        if (done != 0) {
          heard[static_cast<std::size_t>(r)] = true;
          --waiting;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    Arrivals arrivals;
    for (int r = 0; r < ranks_; ++r) {
      if (!heard[static_cast<std::size_t>(r)]) {
        arrivals.missing.push_back(r);
        continue;
      }
      arrivals.arrived.push_back(r);
      if (r != rank_ && listening.theirs[static_cast<std::size_t>(r)] != listening.mine) {
        arrivals.elsewhere.push_back(r);
      }
    }
    return arrivals;
  }

  InstrumentedTransport& transport_;
  TimeoutReport report_;
  MPI_Comm comm_;  // the harness's own (main's duplicate of MPI_COMM_WORLD)
  MPI_Comm diagnosis_comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int ranks_ = 0;
};

}  // namespace

std::unique_ptr<HarnessGroup> make_mpi_harness_group(InstrumentedTransport& transport,
                                                     MPI_Comm comm, TimeoutReport report) {
  return std::make_unique<MpiHarnessGroup>(transport, comm, std::move(report));
}

}  // namespace collbench::harness
