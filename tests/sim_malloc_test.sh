#!/usr/bin/env bash
# The malloc of simulations (CMakeLists.txt, COLLBENCH_WITH_JEMALLOC): with
# jemalloc found, collbench --transport sim (run again with it preloaded,
# benchmarks/harness/simulation_malloc.h) and collbench-sim-speed (linked)
# name it in their run's context, and it is the malloc that runs (jemalloc
# prints its statistics at exit when MALLOC_CONF asks, whatever collbench
# says); without it, they name glibc. A run on a real transport (inproc
# here) keeps glibc's either way, and a preloaded library (the tests'
# MPI_Init guard, a marker library) stays preloaded, in the rerun too. A malloc the caller preloads (tcmalloc,
# when installed) is the one that runs, and is named.
# Usage: sim_malloc_test.sh COLLBENCH SIM_SPEED EXPECTED   (jemalloc or glibc)
set -euo pipefail
collbench=${1:?usage: sim_malloc_test.sh COLLBENCH SIM_SPEED EXPECTED}
sim_speed=${2:?usage: sim_malloc_test.sh COLLBENCH SIM_SPEED EXPECTED}
expected=${3:?usage: sim_malloc_test.sh COLLBENCH SIM_SPEED EXPECTED}
# shellcheck source=tests/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
scratch_dir sim_malloc
work=$scratch
# A preload that is not there is only a warning of the loader's: the cases
# below would pass without it, or fail without saying why.
for library in ${COLLBENCH_FORBID_MPI_INIT:-} ${COLLBENCH_PRELOAD_MARKER_LIBRARY:-}; do
  [[ -r $library ]] || fail "$library is not built (build every target, not just collbench)"
done

MALLOC_CONF=stats_print:true "$collbench" --transport sim --ranks 2 --platform star \
  --link-latency 1us --link-bandwidth 1GBps --families allreduce --algorithms ring --sizes 8B \
  >"$work/collbench.out" 2>"$work/collbench.err" || fail "collbench failed: $(cat "$work/collbench.err")"
MALLOC_CONF=stats_print:true "$collbench" --transport inproc --ranks 2 --families allreduce \
  --algorithms ring --sizes 8B >"$work/inproc.out" 2>"$work/inproc.err" ||
  fail "collbench --transport inproc failed: $(cat "$work/inproc.err")"
MALLOC_CONF=stats_print:true "$sim_speed" --ranks=4 --iterations=1 \
  >"$work/sim_speed.out" 2>"$work/sim_speed.err" || fail "collbench-sim-speed failed: $(cat "$work/sim_speed.err")"
# The context is on stdout (collbench's display) or stderr (Google
# Benchmark's own); jemalloc's statistics on stderr.
check() { # run wanted
  local said ran
  said=$(cat "$work/$1.out" "$work/$1.err" | sed -n 's/^collbench_malloc: //p')
  [[ $said == "$2"* ]] || fail "$1 names its malloc '$said', expected $2"
  if grep -q "jemalloc statistics" "$work/$1.err"; then ran=jemalloc; else ran=glibc; fi
  [[ $ran == "$2" ]] || fail "$1 ran on $ran's malloc, expected $2"
}
check collbench "$expected"
check sim_speed "$expected"
check inproc glibc
# Beside a preload of the caller's own (the tests' MPI_Init guard) too.
if [[ -n ${COLLBENCH_FORBID_MPI_INIT:-} ]]; then
  LD_PRELOAD=$COLLBENCH_FORBID_MPI_INIT MALLOC_CONF=stats_print:true "$collbench" --transport sim \
    --ranks 2 --platform star --link-latency 1us --link-bandwidth 1GBps --families allreduce \
    --algorithms ring --sizes 8B >"$work/preloaded.out" 2>"$work/preloaded.err" ||
    fail "collbench with a preload failed: $(cat "$work/preloaded.err")"
  check preloaded "$expected"
fi
# The caller's preload is in the rerun too, not only in the process that
# started it: a library that marks every image that loads it (two lines
# with a rerun on jemalloc, one without).
if [[ -n ${COLLBENCH_PRELOAD_MARKER_LIBRARY:-} ]]; then
  LD_PRELOAD=$COLLBENCH_PRELOAD_MARKER_LIBRARY COLLBENCH_PRELOAD_MARKER=$work/marker \
    MALLOC_CONF=stats_print:true "$collbench" --transport sim --ranks 2 --platform star \
    --link-latency 1us --link-bandwidth 1GBps --families allreduce --algorithms ring --sizes 8B \
    >"$work/marked.out" 2>"$work/marked.err" || fail "collbench with the marker failed: $(cat "$work/marked.err")"
  check marked "$expected"
  images=$(wc -l <"$work/marker")
  wanted=1
  [[ $expected == glibc ]] || wanted=2
  ((images == wanted)) ||
    fail "the caller's LD_PRELOAD was loaded by $images process image(s), expected $wanted (the rerun dropped it?)"
fi
# A malloc preloaded ahead of jemalloc is the one that runs, and the
# context names it (jemalloc's mallctl is still there to be found).
# awk reads to the end: leaving early would kill ldconfig with SIGPIPE
# now and then, and pipefail would end this script without a word.
tcmalloc=$(ldconfig -p 2>/dev/null | awk '/libtcmalloc_minimal\.so\.4 / && !found {print $NF; found = 1}')
if [[ -n $tcmalloc ]]; then
  LD_PRELOAD=$tcmalloc "$collbench" --transport sim --ranks 2 --platform star --link-latency 1us \
    --link-bandwidth 1GBps --families allreduce --algorithms ring --sizes 8B \
    >"$work/tcmalloc.out" 2>"$work/tcmalloc.err" || fail "collbench under $tcmalloc failed"
  named=$(sed -n "s/^collbench_malloc: //p" "$work/tcmalloc.out" "$work/tcmalloc.err")
  [[ $named == libtcmalloc_minimal.so.4 ]] || fail "under LD_PRELOAD=$tcmalloc collbench names '$named'"
else
  echo "sim_malloc: no libtcmalloc_minimal.so.4 to preload (libtcmalloc-minimal4): that case skipped"
fi
echo "sim_malloc: simulations run on $expected, collbench --transport inproc on glibc"
