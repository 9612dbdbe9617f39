#!/usr/bin/env bash
# The main job: builds collbench (Release, in build/) when needed, runs the
# default sweep on this machine and summarizes it.
#
# Usage: scripts/run.sh [--help] [-- COLLBENCH_FLAGS...]
#
# The sweep, on NP ranks of this machine (more ranks than cores is fine: the
# run is oversubscribed), every result checked (--check):
#   - allreduce, every algorithm and mpi (MPI_Allreduce), 8 B .. 64 MiB (x2)
#   - the gradient exchange of resnet50 and bert_base with PyTorch DDP buckets
#     (--workload resnet50:ddp --workload bert_base:ddp), per bucket size and
#     per training iteration
#   - p2p ping-pong between rank 0 and every other rank (the alpha-beta fit)
#   - the local reduction kernel (gamma) and memcpy (memory ceiling)
#   - allreduce over raw libfabric too (providers tcp and shm; x4 size steps),
#     when collbench was built with libfabric (RUN_OFI=0 skips it)
# then prints the summary table (scripts/summarize.py), draws the plots
# (scripts/plot.py sweep) and fits the cost models (collbench-fit --brief).
#
# Output, in results/<run_id>/ (run_id: UTC time and a random suffix):
#   collbench.csv    tidy CSV, one row per benchmark (columns: results/README.md)
#   collbench_ofi_<provider>.csv   the allreduce sweep over libfabric
#   collbench.json   Google Benchmark's JSON report of the same runs
#   console.txt      Google Benchmark's console table
#   summary.md       the summary tables and the cost-model fit printed at the end
#   *.png            time and busbw vs size per algorithm; exchange per model
#   fit/             collbench-fit's models.csv, predictions.csv and plots
#
# Environment:
#   NP         ranks (default 4)
#   RUN_OFI    1 (default) to also sweep over libfabric tcp and shm, 0 to skip
#   RESULTS    folder that receives the run folder (default results)
#   BUILD_DIR  build folder (default build)
#   JOBS       parallel build jobs (default: the number of cores)
# Flags after `--` go to collbench as they are and come after the defaults,
# so they can add to or override them (Google Benchmark's included), e.g.
#   scripts/run.sh -- --sizes 1KiB:1MiB --benchmark_min_time=0.1
#   NP=8 scripts/run.sh -- --algorithms ring,mpi --dtype bf16
# Once it is built, collbench checks them in a dry run: bad ones end run.sh
# with status 2 before a run folder is created.
# See `build/benchmarks/harness/collbench --help` for every flag.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

passthrough=()
while [[ $# -gt 0 ]]; do
  case $1 in
    -h | --help)
      usage
      exit 0
      ;;
    --)
      shift
      passthrough=("$@")
      break
      ;;
    *)
      echo "run.sh: unknown argument '$1'; collbench flags go after '--' (see scripts/run.sh --help)" >&2
      exit 2
      ;;
  esac
done

np=${NP:-4}
if ! [[ $np =~ ^[1-9][0-9]*$ ]]; then
  echo "run.sh: NP='$np' is not a positive number of ranks" >&2
  exit 2
fi
results=${RESULTS:-results}
build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}
if ! [[ $jobs =~ ^[1-9][0-9]*$ ]]; then
  echo "run.sh: JOBS='$jobs' is not a positive number of build jobs" >&2
  exit 2
fi

scripts/setup.sh
if [[ ! -f $build/CMakeCache.txt ]]; then
  echo "run.sh: configuring $build/ (Release)" >&2
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >"$build.configure.log" 2>&1 ||
    { cat "$build.configure.log" >&2; exit 1; }
  rm -f "$build.configure.log"
fi
echo "run.sh: building collbench and collbench-fit in $build/" >&2
if ! cmake --build "$build" -j "$jobs" --target collbench_exe collbench-fit >"$build/run.sh-build.log" 2>&1; then
  tail -40 "$build/run.sh-build.log" >&2
  echo "run.sh: the build failed; full log in $build/run.sh-build.log" >&2
  exit 1
fi
collbench=$build/benchmarks/harness/collbench
fit=$build/benchmarks/models/collbench-fit

# Open MPI refuses root without these, and more ranks than cores without
# --oversubscribe; on one machine its shared-memory and loopback transports
# are the ones to use. Other MPIs get a plain mpiexec.
launcher=(mpiexec -n "$np")
if mpirun --version 2>/dev/null | grep -q "Open MPI"; then
  launcher=(mpirun -np "$np" --oversubscribe --bind-to none --mca btl self,vader,tcp
    --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo)
  export PMIX_MCA_gds=hash
  if [[ $(id -u) -eq 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  fi
fi

# The flags after `--` are collbench's to judge, and it can only once it is
# built: a dry run (--benchmark_list_tests: names only, no output file)
# refuses bad ones before a run folder exists.
sweep_flags=(--algorithms all --sizes 8B:64MiB --check --workload resnet50:ddp
  --workload bert_base:ddp --benchmark_min_time=0.01)
if ((${#passthrough[@]} > 0)) &&
  ! dry_run=$("${launcher[@]}" "$collbench" "${sweep_flags[@]}" "${passthrough[@]}" \
    --benchmark_list_tests=true 2>&1 >/dev/null); then
  grep '^collbench: ' <<<"$dry_run" | grep -v '^collbench: note: ' >&2 || echo "$dry_run" >&2
  echo "run.sh: collbench refused the flags after '--' (see $collbench --help)" >&2
  exit 2
fi

run_id=$(date -u +%Y%m%dT%H%M%SZ)-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
out=$results/$run_id
mkdir -p "$out"

# Under mpirun rank 0's stdout is a pseudo-terminal and its stderr a pipe
# whatever this script's are, so colour and progress are decided here.
display=(--benchmark_color=false)
[[ -t 2 ]] && display+=(--progress)

# min_time 0.01 s gives small messages hundreds of timed iterations and the
# large ones at least one; with the buffers of a size shared by all
# algorithms this keeps the whole sweep within about two minutes on 2 cores.
sweep=(
  "${sweep_flags[@]}"
  --run-id "$run_id" --csv "$out/collbench.csv"
  --benchmark_out="$out/collbench.json" --benchmark_out_format=json
)
echo "run.sh: run $run_id: ${launcher[*]} $collbench ..." >&2
start=$SECONDS
if ! "${launcher[@]}" "$collbench" "${sweep[@]}" "${display[@]}" "${passthrough[@]}" \
  >"$out/console.txt"; then
  echo "run.sh: collbench failed; finished rows are in $out/collbench.csv, its output in $out/console.txt" >&2
  exit 1
fi
echo "run.sh: sweep done in $((SECONDS - start)) s" >&2

echo
/usr/bin/python3 scripts/summarize.py "$out/collbench.csv" | tee "$out/summary.md"

echo
echo "Plots:"
/usr/bin/python3 scripts/plot.py sweep "$out/collbench.csv" --out "$out" | sed 's/^/  /'

# The same algorithms over raw libfabric (tcp and shm here), smaller sweep
# (x4 steps, allreduce only) to stay within the time budget; MPI is still the
# launcher and the out-of-band channel. FI_*_IFACE keep tcp on loopback.
ofi_csvs=()
if [[ ${RUN_OFI:-1} == 1 ]] && "$collbench" --help 2>/dev/null | grep -q -- "--transport KIND.*ofi"; then
  for provider in tcp shm; do
    csv=$out/collbench_ofi_${provider}.csv
    echo "run.sh: allreduce over libfabric provider $provider" >&2
    if FI_TCP_IFACE=lo FI_SOCKETS_IFACE=lo "${launcher[@]}" \
      "$collbench" --transport ofi --ofi-provider "$provider" --families allreduce \
      --algorithms all --sizes 16B:64MiB:x4 --check --run-id "$run_id" --csv "$csv" \
      --benchmark_min_time=0.01 "${display[@]}" "${passthrough[@]}" >"$out/console_ofi_${provider}.txt"; then
      ofi_csvs+=("$csv")
    else
      echo "run.sh: the OFI $provider sweep failed (output in $out/console_ofi_${provider}.txt); the MPI results stand" >&2
    fi
  done
fi
if [[ ${#ofi_csvs[@]} -gt 0 ]]; then
  echo
  echo "libfabric vs MPI (per algorithm and size, time over OFI / time over MPI):"
  ofi_report=$(/usr/bin/python3 scripts/compare_transports.py "$out/collbench.csv" "${ofi_csvs[@]}")
  echo "$ofi_report"
  {
    echo
    echo "### libfabric transport relative to MPI"
    echo
    echo "$ofi_report"
  } >>"$out/summary.md"
fi

echo
echo "Cost models (collbench-fit --brief; full report in $out/fit/):"
fit_report=$("$fit" "$out/collbench.csv" --out-dir "$out/fit" --plot-dir "$out/fit" --brief)
echo "$fit_report"
{
  echo
  echo "### cost models: collbench-fit --brief"
  echo
  echo '```'
  echo "$fit_report"
  echo '```'
} >>"$out/summary.md"

echo
echo "run.sh: results in $out/"
