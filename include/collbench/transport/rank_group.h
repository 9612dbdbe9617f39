// All ranks of a job in one process: threads over the in-process transport,
// or SimGrid actors over the simulated one. The harness's single-process
// driver (`collbench --transport inproc|sim --ranks N`, no mpirun) runs
// every case through this interface; Google Benchmark's loop stays on the
// calling thread, outside the ranks, because it is not thread-safe.
//
// One call of run() is one step of the job: every rank runs `body` on its
// own transport, concurrently (threads), or interleaved as coroutines
// (actors: no mutex, no thread, no blocking call inside `body`). run()
// returns when every rank's body has returned and rethrows the first
// exception one threw. The ranks' transports (and the tag slots the
// algorithms take from them) persist across calls, so an algorithm object
// built in one call can run in the next.
#pragma once

#include <functional>
#include <string_view>

#include "collbench/transport/transport.h"

namespace collbench {

class RankGroup {
 public:
  virtual ~RankGroup() = default;
  // "inproc" or "sim": the CSV's transport column.
  virtual std::string_view kind() const = 0;
  virtual int size() const = 0;
  virtual void run(const std::function<void(Transport& transport)>& body) = 0;
  // Seconds on this rank's clock, for timing a call inside `body`: the
  // steady clock for threads, the simulated clock for actors. Every rank's
  // body starts at the same simulated instant (an ideal barrier), so the
  // simulated time of a step is the largest (end - start) over ranks.
  virtual double now(Transport& transport) const = 0;
};

}  // namespace collbench
