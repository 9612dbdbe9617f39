#!/usr/bin/env bash
# The malloc of the executables that run simulations (CMakeLists.txt,
# COLLBENCH_WITH_JEMALLOC): with jemalloc linked in, collbench and
# collbench-sim-speed name it in their run's context, and it is the malloc
# that runs (jemalloc prints its statistics at exit when MALLOC_CONF asks,
# whatever collbench says); without it, they name glibc. Preloaded, tcmalloc
# is named (when installed).
# Usage: sim_malloc_test.sh COLLBENCH SIM_SPEED EXPECTED   (jemalloc or glibc)
set -euo pipefail
collbench=${1:?usage: sim_malloc_test.sh COLLBENCH SIM_SPEED EXPECTED}
sim_speed=${2:?usage: sim_malloc_test.sh COLLBENCH SIM_SPEED EXPECTED}
expected=${3:?usage: sim_malloc_test.sh COLLBENCH SIM_SPEED EXPECTED}
work=$(mktemp -d "${TMPDIR:-/tmp}/sim_malloc.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "sim_malloc: $*" >&2; exit 1; }

MALLOC_CONF=stats_print:true "$collbench" --transport sim --ranks 2 --platform star \
  --link-latency 1us --link-bandwidth 1GBps --families allreduce --algorithms ring --sizes 8B \
  >"$work/collbench.out" 2>"$work/collbench.err" || fail "collbench failed: $(cat "$work/collbench.err")"
MALLOC_CONF=stats_print:true "$sim_speed" --ranks=4 --iterations=1 \
  >"$work/sim_speed.out" 2>"$work/sim_speed.err" || fail "collbench-sim-speed failed: $(cat "$work/sim_speed.err")"
for tool in collbench sim_speed; do
  # The context is on stdout (collbench's display) or stderr (Google
  # Benchmark's own); jemalloc's statistics on stderr.
  said=$(cat "$work/$tool.out" "$work/$tool.err" | sed -n 's/^collbench_malloc: //p')
  [[ $said == "$expected"* ]] || fail "$tool names its malloc '$said', expected $expected"
  if grep -q "jemalloc statistics" "$work/$tool.err"; then ran=jemalloc; else ran=glibc; fi
  [[ $ran == "$expected" ]] || fail "$tool ran on $ran's malloc, expected $expected"
done
# A malloc preloaded ahead of a linked jemalloc is the one that runs, and
# the context names it (jemalloc's mallctl is still there to be found).
tcmalloc=$(ldconfig -p 2>/dev/null | awk '/libtcmalloc_minimal\.so\.4 / {print $NF; exit}')
if [[ -n $tcmalloc ]]; then
  LD_PRELOAD=$tcmalloc "$collbench" --transport sim --ranks 2 --platform star --link-latency 1us \
    --link-bandwidth 1GBps --families allreduce --algorithms ring --sizes 8B \
    >"$work/preloaded.out" 2>"$work/preloaded.err" || fail "collbench under $tcmalloc failed"
  preloaded=$(sed -n "s/^collbench_malloc: //p" "$work/preloaded.out" "$work/preloaded.err")
  [[ $preloaded == libtcmalloc_minimal.so.4 ]] || fail "under LD_PRELOAD=$tcmalloc collbench names '$preloaded'"
else
  echo "sim_malloc: no libtcmalloc_minimal.so.4 to preload (libtcmalloc-minimal4): that case skipped"
fi
echo "sim_malloc: collbench and collbench-sim-speed run on $expected ($said)"
