// In-process transport: ranks are threads of one process, exchanging through
// mailboxes in shared memory, as gloo's tests spawn ranks. It lets unit tests
// cover 1..16 ranks in milliseconds without mpirun.
//
// A send completes when a matching receive has copied its data (rendezvous),
// so a test that forgets a receive hangs here exactly as it would under MPI
// with large messages — until the timeout, which then names the pending peers
// (run_in_process's InstrumentedTransport).
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "collbench/transport/instrumented_transport.h"
#include "collbench/transport/rank_group.h"
#include "collbench/transport/transport.h"

namespace collbench {

class InProcessWorld;

class InProcessTransport final : public Transport {
 public:
  InProcessTransport(std::shared_ptr<InProcessWorld> world, int rank);
  ~InProcessTransport() override;

  std::string_view kind() const override { return "inproc"; }
  RequestId isend(std::span<const std::byte> data, int peer, int tag) override;
  RequestId irecv(std::span<std::byte> data, int peer, int tag) override;
  void wait(RequestId request) override;
  bool test(RequestId request) override;
  void wait_all(std::span<const RequestId> requests) override;
  // Sleeps until a completion instead of polling.
  bool wait_until(std::span<const RequestId> requests, std::span<bool> done,
                  Clock::time_point deadline) override;
  // Bounded by the world's timeout (run_in_process's), throwing TimeoutError.
  void barrier() override;

 private:
  std::shared_ptr<InProcessWorld> world_;
};

// Runs `body` on `ranks` threads, each with its own transport, instrumented
// (counters, and waits and barriers bounded by `timeout`). Rethrows the first exception any rank
// threw (after all threads have ended; the others are woken up and fail too).
void run_in_process(int ranks, const std::function<void(InstrumentedTransport&)>& body,
                    std::chrono::milliseconds timeout = std::chrono::seconds(60));

// `ranks` threads, each with its transport, that live as long as the group
// and run one body per RankGroup::run call (the harness's single-process
// driver: spawning threads for every sample would cost more than the call
// it times). A body that throws ends the world as run_in_process does: the
// other ranks' waits fail at once, and every later run() throws. The
// transports are bare: `timeout` bounds their barriers only, and whoever
// needs counters or bounded waits wraps each in an InstrumentedTransport
// (the harness's Runner does).
std::unique_ptr<RankGroup> make_inproc_rank_group(
    int ranks, std::chrono::milliseconds timeout = std::chrono::seconds(60));

}  // namespace collbench
