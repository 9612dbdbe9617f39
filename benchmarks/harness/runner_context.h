// What the Runner lends the families (family.h), one per local rank; its
// methods are in runner.cpp. Private to the Runner's files.
#pragma once

#include "families.h"

namespace collbench::harness {

class Runner::Context final : public RunContext {
 public:
  Context(Runner& runner, InstrumentedTransport& transport);
  const Options& options() const override;
  Transport& transport() const override;
  int rank() const override;
  int ranks() const override;
  void synchronize() override;
  void wait_for_all_ranks_sleeping() override;
  void library_call_started(const BenchmarkCase& benchmark_case) override;
  void library_call_returned() override;
  MPI_Comm library_comm() const override;
  double now() const override;

 private:
  Runner& runner_;
  InstrumentedTransport& transport_;
};

}  // namespace collbench::harness
