#pragma once

namespace collbench::harness {

// Simulations run on jemalloc when the build found it (CMakeLists.txt,
// COLLBENCH_WITH_JEMALLOC): SimGrid makes about 27 heap objects per
// simulated message, and on glibc's malloc a ring allreduce at p = 4096
// takes a third more CPU. The real transports keep the system's malloc,
// as the programs they stand for do: linked in, jemalloc moved their times
// by -14% to +6% (results/sim/README.md, "Speed of the simulation"). So a
// sim run that is not on jemalloc runs itself again with it preloaded
// (kept in LD_PRELOAD before what was there); if it cannot, it goes on with
// the system's malloc, which the run's context line `collbench_malloc`
// then names. Call first thing in main, with main's argv.
void rerun_simulation_on_jemalloc(int argc, char** argv);

}  // namespace collbench::harness
