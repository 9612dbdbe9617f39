#!/usr/bin/env bash
# Old (f469734: every algorithm but ring copies in to out first) and new
# (no copy) collbench alternated, 3 rounds, NP 2 (bound) and 4; each job's
# core-to-core latency probed before and after (cores.txt).
# Usage: run.sh OLD_COLLBENCH NEW_COLLBENCH CORE_LATENCY
set -euo pipefail
cd "$(dirname "$0")"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PMIX_MCA_gds=hash
flags=(--oversubscribe --mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo)
: >cores.txt
for round in 1 2 3; do
  for np in 2 4; do
    bind=core; ((np > $(nproc))) && bind=none
    for version in old new; do
      binary=$1; [[ $version == new ]] && binary=$2
      before=$("$3" --cpus 0,1 --repetitions 3 --round-trips 20000 | awk 'NR==2{print $3}')
      mpirun -np "$np" --bind-to "$bind" "${flags[@]}" "$binary" --families allreduce \
        --algorithms tree,recursive_doubling,rabenseifner,ps_central,ps_sharded,ring \
        --sizes 1MiB:16MiB --check --quiet --benchmark_repetitions=3 \
        --benchmark_min_time=0.05 --csv "${version}_np${np}_r$round.csv" >/dev/null
      after=$("$3" --cpus 0,1 --repetitions 3 --round-trips 20000 | awk 'NR==2{print $3}')
      echo "$version np=$np round=$round cores_ns_before=$before after=$after" | tee -a cores.txt
    done
  done
done
