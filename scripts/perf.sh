#!/usr/bin/env bash
# The performance targets of issues 8 and 18, measured in one go on this machine.
#
# Usage: scripts/perf.sh [--help] [--out DIR] [--reps R] [--min-time S]
#                        [--far-ns NS] [--attempts N] [--quick]
#
# Steps (every collbench run side by side: all algorithms at a size, then the
# next size, with --benchmark_repetitions R in rounds, --interleave: every
# benchmark once per round):
#   1. tests/alloc_test under mpirun -np 2: operator new calls in run() of
#      every algorithm after one warm-up call, in-process and MPI transports
#   2. for NP in 2 4: collbench --families
#      COLLECTIVES,mpi_bare,p2p,sendrecv,local,reduce_all --algorithms all
#      --check, where COLLECTIVES is every collective of the binary
#      (collbench --list-algorithms --csv, saved as DIR/algorithms.csv:
#      allreduce, reduce_scatter, allgather, broadcast, reduce, ...) at NP 2,
#      and allreduce alone at NP 4 (and at any NP above the cores): four
#      ranks on two cores are oversubscribed here, which no speed or model
#      target of the other collectives is judged on, and would double the
#      run; sizes 8B:1KiB and 64KiB:64MiB in five parts
#      (8B:1KiB 64KiB:512KiB 1MiB:4MiB 8MiB:16MiB 32MiB:64MiB), one job each,
#      every collective in the same job, so that each ratio pairs rows of
#      one job and round
#      (ranks bound to a core each when NP <= cores, unbound when
#      oversubscribed). Every row carries core_handoff_ns: how far apart the
#      cores of ranks 0 and 1 were during that repetition (on a VM the host can
#      move the vCPUs to different dies mid-run; an allreduce then takes 3-5x
#      longer at 1-16 MiB while sendrecv does not, see docs/performance.md).
#      A part's sizes at which a benchmark of a collective or sendrecv has
#      fewer than min(R, 3) repetitions with the cores at most --far-ns apart
#      ("near") are measured again (every family and algorithm at those sizes,
#      so that ratios still pair benchmarks of one job), up to --attempts jobs
#      per part; not when NP > cores, where ranks 0 and 1 may share a core and
#      every row counts as near.
#      DIR/np<NP>.csv holds every job of every part (run_id tells them
#      apart). collbench-fit on its near rows (perf_report.py --select-near)
#      and on all of them -> DIR/fit_np<NP>_near (not when every row counts
#      as near) and DIR/fit_np<NP>
#      (bottom-up predictions from the sweep's p2p/sendrecv at NP ranks, every
#      rank sending at once as in an allreduce, and its local/reduce_all at NP
#      ranks for the algorithms whose ranks all reduce at once, rank 0's
#      local/reduce for tree and ps_central: by size,
#      each exchange and reduction priced at the algorithm's message size and
#      each byte at the rate at the vector size where that is slower, 64 KiB
#      and up so that n/p of 1 MiB is measured; and one Hockney line for
#      comparison).
#      collbench-core-latency runs before and after each job on the first
#      min(NP, cores) CPUs -> DIR/core_latency.txt (every CPU pair, which
#      core_handoff_ns, ranks 0 and 1 only, does not cover at NP > 2).
#   3. collbench --families local --sizes 64MiB --dtype f16 and bf16 (NP 2)
#      -> DIR/local_<dtype>.csv
#   4. scripts/perf_report.py DIR: the target table (ratio, spread, pass or
#      MISS) and the per-size detail, printed and saved as DIR/table.md;
#      per collective of algorithms.csv at NP 2, the fastest hand-written
#      algorithm against the MPI library's (busbw >= 1.0 at 4..64 MiB, time
#      <= 1.3x at 8 B..1 KiB; perf_report.py --help)
#
# Run time (defaults): the reference run of results/perf/ (allreduce alone)
# took 13 min: NP 2 6 min (one pass of the five parts 3.2 min, plus parts
# measured again), NP 4 5.7 min, the rest 1.5 min. A benchmark repetition
# costs 0.1-0.3 s whatever the collective (the min-time, --check, barriers),
# and NP 2 now runs 27 benchmarks per size instead of 13 (31 with an alltoall
# of four algorithms): NP 2 takes 2.1-2.4x, 12-14 min, and the whole run about
# 20 min on a quiet machine; more when the cores are often far apart and
# parts are measured again (up to --attempts jobs each). --quick --reps 1
# --min-time 0.01 took 110 s on a loaded machine.
#
# Options:
#   --out DIR        output folder (default results/perf/<UTC time> in the
#                    current folder; a relative DIR is from the current
#                    folder); an existing non-empty folder is refused
#   --reps R         Google Benchmark repetitions per benchmark (default 5)
#   --min-time S     --benchmark_min_time per repetition in seconds (default 0.05)
#   --far-ns NS      one-way core-to-core latency above which a repetition
#                    counts as far (default 100; cores on one die here take
#                    25-50 ns, on different dies 160-330); the report judges
#                    the targets on near rows and shows all rows next to them;
#                    0: every row counts as near, no part is measured again
#   --attempts N     jobs per part at most (default 5)
#   --quick          a check that everything runs end to end, not a
#                    measurement: NP 2 only, two parts (8B,1KiB and
#                    4MiB,8MiB), the rest as without it; with --reps 1
#                    --min-time 0.01 a few minutes
#   Every option once: a second value is refused, not silently preferred.
# Environment:
#   BUILD_DIR   build folder (default build/ of the repository; a relative one
#               is from the current folder; configured Release when missing)
#   JOBS        parallel build jobs (default: the number of cores)
#   MPIRUN_LOCK a file every mpirun of the run waits for under flock(1), one
#               job at a time (on machines where Open MPI start-ups that
#               overlap crash, e.g. /tmp/collbench-mpirun.lock); unset: none
set -euo pipefail
# Paths given by the caller and the default output folder are from the
# caller's folder; the build folder and the tools are the repository's,
# where the script works.
caller_dir=$PWD
cd "$(dirname "$0")/.."
self=$PWD/scripts/perf.sh

# from_caller PATH: PATH as the caller meant it, absolute.
from_caller() { if [[ $1 == /* ]]; then printf '%s\n' "$1"; else printf '%s\n' "$caller_dir/$1"; fi; }

usage() { sed -n '2,/^set -euo/p' "$self" | sed '$d' | sed 's/^# \{0,1\}//'; }

die() {
  echo "perf.sh: $*" >&2
  exit 2
}
bad() { die "$@"; } # lib_options.sh's name for it
# shellcheck source=SCRIPTDIR/lib_options.sh
source "$PWD/scripts/lib_options.sh"

out=""
reps=5
min_time=0.05
far_ns=100
attempts=5
quick=0
# shellcheck disable=SC2034  # read by parse_options
declare -A option_variables=([--out]=out [--reps]=reps [--min-time]=min_time [--far-ns]=far_ns
  [--attempts]=attempts)
parse_options option_variables "$@"
for argument in "${arguments[@]}"; do
  case $argument in
    --quick) quick=1 ;;
    *) die "unknown argument '$argument' (see scripts/perf.sh --help)" ;;
  esac
done
[[ $reps =~ ^[1-9][0-9]*$ ]] || die "--reps '$reps' is not a positive number"
[[ $min_time =~ ^[0-9]*\.?[0-9]+$ ]] || die "--min-time '$min_time' is not a number of seconds, e.g. 0.05"
[[ $far_ns =~ ^[0-9]+$ ]] || die "--far-ns '$far_ns' is not a whole number of nanoseconds, e.g. 100"
[[ $attempts =~ ^[1-9][0-9]*$ ]] || die "--attempts '$attempts' is not a positive number"
jobs=${JOBS:-$(nproc)}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "JOBS='$jobs' is not a positive number of build jobs"
if [[ -n ${MPIRUN_LOCK:-} ]]; then
  command -v flock >/dev/null || die "MPIRUN_LOCK is set but flock (util-linux) is not installed"
  MPIRUN_LOCK=$(from_caller "$MPIRUN_LOCK")
  if [[ -e $MPIRUN_LOCK ]]; then
    [[ -f $MPIRUN_LOCK && -r $MPIRUN_LOCK ]] || die "MPIRUN_LOCK=$MPIRUN_LOCK is not a readable file"
  elif [[ ! -d $(dirname "$MPIRUN_LOCK") || ! -w $(dirname "$MPIRUN_LOCK") ]]; then
    die "MPIRUN_LOCK=$MPIRUN_LOCK does not exist and cannot be created there"
  fi
fi
if [[ -n $out ]]; then
  out=$(from_caller "$out") out_name="--out $out"
else
  out=$caller_dir/results/perf/$(date -u +%Y%m%dT%H%M%SZ) out_name="$out (the default; choose another with --out)"
fi
# The nearest folder that exists must be one this script may write in.
writable=$out
while [[ ! -e $writable ]]; do writable=$(dirname "$writable"); done
[[ -d $writable ]] || die "$out_name: $writable is not a folder"
[[ -w $writable && -x $writable ]] || die "$out_name: cannot write in $writable"
if [[ -d $out && -n $(ls -A "$out") ]]; then die "$out_name exists and is not empty"; fi
build=build
[[ -z ${BUILD_DIR:-} ]] || build=$(from_caller "$BUILD_DIR")
mkdir -p "$out"

if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >"$out/configure.log" 2>&1 ||
    { cat "$out/configure.log" >&2; exit 1; }
fi
echo "perf.sh: building collbench, collbench-fit, collbench-core-latency and alloc_test in $build/" >&2
if ! cmake --build "$build" -j "$jobs" --target collbench_exe collbench-fit \
  collbench-core-latency alloc_test \
  >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log" >&2
  exit 1
fi
rm -f "$out/build.log" "$out/configure.log"
collbench=$build/benchmarks/harness/collbench
fit=$build/benchmarks/models/collbench-fit
core_latency=$build/benchmarks/corelatency/collbench-core-latency
# The collectives are the binary's (its table, collectives/registry.cpp):
# algorithms.csv is also how perf_report.py tells hand-written algorithms
# from the MPI library's.
"$collbench" --list-algorithms --csv >"$out/algorithms.csv"
collectives=$(tail -n +2 "$out/algorithms.csv" | cut -d, -f2 | awk '!seen[$0]++' | paste -sd,)
[[ -n $collectives ]] || die "$collbench --list-algorithms --csv listed no collective"

# Open MPI's launcher by name (scripts/mpi_launcher.sh): the flags below are
# its own, so a build against MPICH is refused.
# shellcheck source=scripts/mpi_launcher.sh
source scripts/mpi_launcher.sh
[[ $(mpi_library_of "$build") == openmpi ]] ||
  die "$build links MPICH; perf.sh's runs use Open MPI's flags (configure a build with -DCOLLBENCH_MPI=openmpi)"
mpirun_openmpi=$(mpi_launcher_for openmpi) || exit 2
open_mpi_environment
# launch ARGS...: mpirun.openmpi ARGS, under flock "$MPIRUN_LOCK" when that is set (on
# machines where overlapping Open MPI start-ups crash, every launcher takes
# the same lock; held for one job, not for the whole run).
launch() {
  if [[ -n ${MPIRUN_LOCK:-} ]]; then
    flock "$MPIRUN_LOCK" "$mpirun_openmpi" "$@"
  else
    "$mpirun_openmpi" "$@"
  fi
}
mpirun_flags=(--oversubscribe --mca btl self,vader,tcp
  --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo)
# The cores ranks may run on, and the binding of NP ranks (scripts/machine.sh).
source scripts/machine.sh
cores=$(machine_cores)
# --interleave: repetition k of every benchmark of a job runs in round k, so
# the rows the report pairs (same job, same repetition) are 0-2 s apart and
# mostly see the cores in the same state; back to back, recursive_doubling's
# and mpi's at 8 B..1 KiB were 2-5 s apart and more often paired a near row
# with a far one.
common=(--check --quiet --interleave --benchmark_repetitions="$reps"
  --benchmark_min_time="$min_time" --benchmark_color=false)

echo "perf.sh: allocation test (mpirun -np 2 alloc_test)" >&2
if launch -np 2 --bind-to "$(machine_binding 2)" "${mpirun_flags[@]}" "$build/tests/alloc_test" >"$out/alloc.txt" 2>&1; then
  echo PASS >>"$out/alloc.txt"
else
  echo FAIL >>"$out/alloc.txt"
fi

# The sweep runs in parts of a few sizes each (under a minute at NP=2), each
# bracketed by core-distance probes: the cores move on a scale of seconds to
# minutes, so probes around one long sweep say little about its middle.
# --quick: the two ends of the small-message range and two sizes of the large
# one, NP 2 only.
parts=(8B:1KiB 64KiB:512KiB 1MiB:4MiB 8MiB:16MiB 32MiB:64MiB)
nps=(2 4)
if ((quick)); then parts=("8B,1KiB" "4MiB,8MiB") nps=(2); fi

# probe NP PART ATTEMPT WHEN SIZES: one line per CPU pair in core_latency.txt
# ('np=NP part=K sizes=S attempt=A WHEN cpu_a cpu_b median min max'); prints
# the largest median of the pairs (ns, rounded down).
probe() {
  local cpus n
  n=$(($1 < cores ? $1 : cores))
  if ((n < 2)); then
    echo 0  # one CPU: no pair to measure
    return
  fi
  cpus=$(seq -s, 0 $((n - 1)))
  "$core_latency" --cpus "$cpus" --repetitions 3 --round-trips 20000 | tail -n +2 |
    sed "s/^/np=$1 part=$2 sizes=$5 attempt=$3 $4 /" |
    tee -a "$out/core_latency.txt" | awk '{ if ($8 > worst) worst = $8 } END { printf "%d\n", worst }'
}

report=scripts/perf_report.py
all_rows=()  # rank counts whose rows all count as near (oversubscribed)
for np in "${nps[@]}"; do
  # Every collective with a core per rank; allreduce alone (the model's
  # sweep, as before issue 18) when oversubscribed, where the report judges
  # no collective's target of issue 18 (--all-rows).
  families=allreduce,mpi_bare,p2p,sendrecv,local,reduce_all
  if ((np <= cores)); then families=$collectives,mpi_bare,p2p,sendrecv,local,reduce_all; fi
  near_ns=$far_ns
  if ((far_ns == 0 || np > cores)); then near_ns=all; fi
  # Oversubscribed: every row counts, and no collective target is judged.
  if ((np > cores)); then all_rows+=("$np"); fi
  for part in $(seq 1 ${#parts[@]}); do
    sizes=${parts[$part - 1]}
    for ((attempt = 1; ; attempt++)); do
      name=np${np}_part${part}_a$attempt
      echo "perf.sh: NP=$np sizes $sizes (part $part of ${#parts[@]}), attempt $attempt" >&2
      start=$SECONDS
      before=$(probe "$np" "$part" "$attempt" before "$sizes")
      launch -np "$np" --bind-to "$(machine_binding "$np")" "${mpirun_flags[@]}" "$collbench" \
        --families "$families" --algorithms all \
        --sizes "$sizes" --csv "$out/$name.csv" "${common[@]}" >"$out/console_$name.txt"
      after=$(probe "$np" "$part" "$attempt" after "$sizes")
      # The sizes still short of near repetitions, over every job of the part.
      sizes=$(/usr/bin/python3 "$report" --near-shortfall "$near_ns" "$reps" \
        "$out"/np"$np"_part"$part"_a*.csv)
      echo "perf.sh: done in $((SECONDS - start)) s; cores ${before} ns apart before, ${after} ns" \
        "after; short of $((reps < 3 ? reps : 3)) near repetitions: ${sizes:-none}" >&2
      if [[ -z $sizes ]] || ((attempt >= attempts)); then break; fi
      echo "perf.sh: measuring $sizes again (every family and algorithm at those sizes)" >&2
    done
  done
  # np<NP>.csv: every job under one header.
  jobs_csv=("$out"/np"$np"_part*_a*.csv)
  {
    head -n 1 "${jobs_csv[0]}"
    for file in "${jobs_csv[@]}"; do tail -n +2 "$file"; done
  } >"$out/np$np.csv"
  rm "${jobs_csv[@]}"
  "$fit" "$out/np$np.csv" --out-dir "$out/fit_np$np" --brief >"$out/fit_np$np.txt"
  # Where every row counts as near, that fit is the near one too.
  if [[ $near_ns != all ]]; then
    # The near rows only feed the fit: perf_report.py --select-near makes them again.
    near_csv=$out/np${np}_near.csv
    /usr/bin/python3 "$report" --select-near "$near_ns" "$out/np$np.csv" >"$near_csv"
    if ! "$fit" "$near_csv" --out-dir "$out/fit_np${np}_near" --brief \
      >"$out/fit_np${np}_near.txt" 2>&1; then
      echo "perf.sh: collbench-fit on the near rows of NP=$np failed (too few?):" >&2
      cat "$out/fit_np${np}_near.txt" >&2
    fi
    rm "$near_csv"
  fi
done

for dtype in f16 bf16; do
  echo "perf.sh: local kernels, $dtype" >&2
  launch -np 2 --bind-to "$(machine_binding 2)" "${mpirun_flags[@]}" "$collbench" --families local --dtype "$dtype" \
    --sizes 64MiB --csv "$out/local_$dtype.csv" "${common[@]}" >"$out/console_local_$dtype.txt"
done

report_options=(--far-ns "$( ((far_ns == 0)) && echo all || echo "$far_ns")")
if ((${#all_rows[@]} > 0)); then report_options+=(--all-rows "$(IFS=,; echo "${all_rows[*]}")"); fi
/usr/bin/python3 "$report" "$out" "${report_options[@]}" | tee "$out/table.md"
echo "perf.sh: everything in $out/" >&2
