#!/usr/bin/env bash
# Three rounds: the core-to-core handoff latency, then per size the median
# time of one reduction alone on CPU 0 and of two at once (CPUs 0 and 1).
# Usage: run.sh BUILD_DIR (for collbench-core-latency)
set -euo pipefail
here=$(dirname "$0")
gcc -O3 -march=x86-64-v2 "$here/concurrent_reduce.c" -o /tmp/concurrent_reduce
for round in 1 2 3; do
  echo "round $round: handoff $("$1"/benchmarks/corelatency/collbench-core-latency --cpus 0,1 \
    --repetitions 3 --round-trips 20000 | tail -1)"
  for bytes in 1048576 4194304 8388608 16777216 33554432 67108864; do
    alone=$(taskset -c 0 /tmp/concurrent_reduce "$bytes" 100 | cut -d' ' -f2)
    both=$( (taskset -c 0 /tmp/concurrent_reduce "$bytes" 100 &
      taskset -c 1 /tmp/concurrent_reduce "$bytes" 100
      wait) | cut -d' ' -f2 | tr '\n' ' ')
    echo "$bytes alone_us $alone both_us $both"
  done
done
