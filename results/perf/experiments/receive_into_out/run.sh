#!/bin/bash
# Old (staging) against new (receive into out) algorithms, alternating jobs,
# rounds FIRST..LAST, NP=2 bound (alone on the machine; NP=4 in the
# environment: 4 ranks oversubscribed, unbound); each job also measures mpi
# (unchanged) as the in-job reference.
# Usage: run.sh OLD_BUILD NEW_BUILD LAST_ROUND [FIRST_ROUND [ALGORITHMS [DIR]]]
#   ALGORITHMS default ring,recursive_doubling; DIR default jobs
set -euo pipefail
cd "$(dirname "$0")"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PMIX_MCA_gds=hash
algorithms=${5:-ring,recursive_doubling}
dir=${6:-jobs}
np=${NP:-2}
placement=(--bind-to core)
((np > $(nproc))) && placement=(--oversubscribe --bind-to none)
mkdir -p "$dir"
for round in $(seq "${4:-1}" "$3"); do
  for version in old new; do
    build=$1
    [[ $version == new ]] && build=$2
    mpirun -np "$np" "${placement[@]}" "$build/benchmarks/harness/collbench" \
      --algorithms "$algorithms,mpi" --families allreduce \
      --sizes 1MiB,2MiB,4MiB,8MiB,16MiB,64MiB --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --check --csv "$dir/${version}_r$round.csv" --force --quiet >/dev/null
  done
done
