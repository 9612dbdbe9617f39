#!/bin/bash
# JOBS identical collbench jobs at NP=2 (bound, alone on the machine):
# recursive_doubling and ring allreduce, sendrecv and local reduce at
# 1, 2, 4, 8 and 16 MiB, 3 repetitions each -> jobs/job<K>.csv.
# Usage: jobs.sh BUILD_DIR JOBS
set -euo pipefail
cd "$(dirname "$0")"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PMIX_MCA_gds=hash
mkdir -p jobs
for k in $(seq "$2"); do
  mpirun -np 2 --bind-to core "$1/benchmarks/harness/collbench" \
    --algorithms recursive_doubling,ring --families allreduce,sendrecv,local \
    --sizes 1MiB,2MiB,4MiB,8MiB,16MiB --benchmark_repetitions=3 --benchmark_min_time=0.05 \
    --csv "jobs/job$k.csv" --force --quiet >/dev/null
done
