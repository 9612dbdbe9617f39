#!/usr/bin/env bash
# Open MPI's vader with its default single-copy mechanism (cma: the receiver
# copies straight from the sender's pages) against none (copy in and out
# through shared-memory fragments), alternated, 2 jobs each, NP=2 bound,
# every algorithm, sendrecv, ping-pong and the reduce benchmarks at
# 256 KiB..4 MiB in rounds. Then summarize.py.
# Usage: run.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PMIX_MCA_gds=hash
for i in 1 2; do
  for mech in cma none; do
    mpirun -np 2 --bind-to core --oversubscribe --mca btl self,vader,tcp \
      --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
      --mca btl_vader_single_copy_mechanism "$mech" \
      "$1"/benchmarks/harness/collbench --families allreduce,p2p,sendrecv,local,reduce_all \
      --algorithms all --sizes 256KiB:4MiB --csv "$here/${mech}_$i.csv" \
      --benchmark_repetitions=5 --interleave --benchmark_min_time=0.05 --quiet \
      --run-id "${mech}_$i" >/dev/null
  done
done
/usr/bin/python3 "$here/summarize.py" "$here" | tee "$here/summary.txt"
