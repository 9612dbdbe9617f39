#!/bin/bash
# Old (staging) against new (receive into out) ring and recursive_doubling,
# alternating jobs, ROUNDS rounds, NP=2 bound (alone on the machine); each
# job also measures mpi (unchanged) as the in-job reference.
# Usage: run.sh OLD_BUILD NEW_BUILD LAST_ROUND [FIRST_ROUND]
set -euo pipefail
cd "$(dirname "$0")"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PMIX_MCA_gds=hash
mkdir -p jobs
for round in $(seq "${4:-1}" "$3"); do
  for version in old new; do
    build=$1
    [[ $version == new ]] && build=$2
    mpirun -np 2 --bind-to core "$build/benchmarks/harness/collbench" \
      --algorithms ring,recursive_doubling,mpi --families allreduce \
      --sizes 1MiB,2MiB,4MiB,8MiB,16MiB,64MiB --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --check --csv "jobs/${version}_r$round.csv" --force --quiet >/dev/null
  done
done
