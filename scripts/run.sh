#!/usr/bin/env bash
# The main job: builds collbench (Release, in build/) when needed, runs the
# default sweep on this machine and summarizes it.
#
# Usage: scripts/run.sh [--help] [--full] [--progress] [--launches N] [-- COLLBENCH_FLAGS...]
#
# Without flags it is the first run: x8 size steps to 4 MiB, one workload,
# no large models and no libfabric sweeps, at most 5 minutes after the build
# on a quiet 2-core machine. --full is the whole sweep below (about 13
# minutes there). --quick, the old name of the first run, is still taken and
# does the same as no flag; with --full it is refused (the two contradict each
# other), as is --launches given twice.
#
# While it runs, a new line at least every 30 s on stderr and in
# RUN/run.log: which pass and benchmark runs, how many are left, the time
# elapsed and an estimate of the time left (collbench --progress-lines 20).
# --progress rewrites one line in place instead (collbench --progress),
# which a log cannot show: run.log then has the passes' lines only.
#
# It says first what this machine offers (cores, NUMA nodes; from /sys) and,
# when NP ranks are more than the cores, that they will share cores: their
# times then include waiting for a core, and report.md marks every fit,
# model error, selection and prediction made from them as not meaningful. By
# default NP gives each rank a core (2 to 4 ranks), and each rank is bound
# to its core (Open MPI --bind-to core, MPICH -bind-to core; none when
# ranks share cores).
#
# The sweep, on NP ranks of this machine, every result checked (--check),
# over MPI's shared memory (Open MPI: pml ob1, btl self,vader), in
# --launches N separate launches of collbench (default 3), three samples in
# all: one round each with N >= 3, otherwise ceil(3/N) interleaved rounds
# each (--benchmark_repetitions --interleave). collbench-fit takes each
# launch's median as one sample, so alpha, beta and the selection of an
# algorithm per size (which weighs the spread over the samples) see how
# much the machine moves between launches: a 2 MiB ping-pong moved from 145
# to 187 us between two launches here, while the repetitions within each
# launch did not overlap the other's. --launches 1 is the old sweep, three
# rounds in one launch:
#   - every collective of collbench (--families collectives: allreduce,
#     reduce_scatter, allgather, broadcast, reduce, alltoall, alltoallv), every algorithm
#     of each and mpi (the MPI library's own: MPI_Allreduce, MPI_Bcast, ...),
#     8 B .. 64 MiB (x2 with --full; by default x8 to 4 MiB)
#   - the exchanges of one training iteration, per message size (in the
#     sweep) and per iteration (a pass of its own, one repetition): resnet50
#     and bert_base with PyTorch DDP buckets (--workload resnet50:ddp
#     --workload bert_base:ddp), gpt2 under FSDP (gpt2:fsdp, allgathers
#     and reduce_scatters per block) and under Megatron tensor parallelism
#     of degree 2 (gpt2:tp=2, allreduces of batch x sequence x hidden),
#     with --full; by default googlenet:ddp alone (27 MB of gradients, a
#     quarter of resnet50's: the exchange and its buckets took half of a
#     first run with resnet50)
#   - on min(NP, cores) ranks, the exchanges alone (one iteration a sample,
#     3 samples, not checked) of two models too large to sweep per size (and
#     to hold on 4 ranks here): llama2_7b under FSDP and mixtral_8x7b's
#     expert parallelism on 4096 tokens, uniform and with a Zipf skew of 1.2
#     (alltoallv dispatches and combines; --full only, LARGE=0 skips them)
#   - one training iteration of the first workload (googlenet:ddp; --full
#     resnet50:ddp) at 2 samples per rank: the GEMM layers
#     forward and backward through OpenBLAS, each DDP bucket allreduced on a
#     communication thread once backprop has made it, by every algorithm
#     (--families train; rows with compute_us, communication_us, exposed_us
#     and overlap), and the compute alone (train/none)
#   - p2p ping-pong between rank 0 and every other rank (the alpha-beta fit),
#     and the sendrecv chain (every rank sending and receiving at once, as in
#     a collective: the alpha-beta the bottom-up predictions use)
#   - the local reduction kernel (gamma) on rank 0 and on every rank at once
#     (reduce_all, the gamma of ranks sharing a node), and memcpy (memory
#     ceiling)
#   - allreduce over raw libfabric too (providers tcp and shm; x4 size steps),
#     when collbench was built with libfabric (RUN_OFI=0 skips it), and, to
#     compare like with like, the same allreduce sweep over MPI on the same
#     fabrics (Open MPI only): btl tcp on loopback, and Open MPI over
#     libfabric itself (pml cm, mtl ofi, providers tcp and shm); --full
#     only
# then prints the summary tables, one per collective (scripts/summarize.py),
# draws the plots, one per collective (scripts/plot.py sweep), compares each
# libfabric sweep with MPI over the same fabric (scripts/compare_transports.py),
# fits the cost models of every collective's algorithms (collbench-fit),
# predicts the scaling of one model's training (collbench-predict) and
# writes report.md (scripts/report.py), whose answers it prints last, with
# how long the run took (README.md: measured times, with the date and how
# busy the machine was).
#
# Output, in results/<run_id>/ under the current folder, or under RESULTS
# (run_id: UTC time and a random suffix):
#   collbench.csv    tidy CSV, one row per benchmark (columns: results/README.md),
#                    MPI over shared memory (mpi_mca: pml=ob1;btl=self,vader)
#   collbench_ofi_<provider>.csv   the allreduce sweep over libfabric
#   collbench_mpi_btl_tcp.csv      the same over MPI, pml ob1, btl self,tcp
#   collbench_mpi_mtl_ofi_<provider>.csv   the same over MPI, pml cm, mtl ofi
#   collbench.json   Google Benchmark's JSON report of the main sweep (its
#                    first launch; launch K's in collbench_launchK.json)
#   console.txt      Google Benchmark's console table; console_<fabric>.txt
#                    the output of each allreduce sweep of a CSV above,
#                    console_exchange.txt the per-iteration exchanges' and
#                    console_large.txt the large models' and console_train.txt
#                    the training iteration's (their rows are in collbench.csv,
#                    not in collbench.json)
#   timeline.json    one training iteration per algorithm as Chrome trace JSON
#                    (chrome://tracing, Perfetto); timeline_<workload>.png draws it
#   run.log          what run.sh and collbench said on stderr: the passes,
#                    the progress lines, notes and warnings
#   report.md        the answers: alpha, beta and gamma with their fit
#                    quality; per collective the best algorithm per size
#                    range, its margin and its speedup over the MPI library;
#                    each workload's exchange per iteration; the scaling of
#                    SCALING_MODEL; then the model errors and links to the rest
#   machine.txt      the machine the rows ran on (cores, NUMA nodes, ranks,
#                    binding, mode), which report.py judges them by
#   scaling/         collbench-predict's scaling.csv and its console output
#                    (predict.txt)
#   summary.md       the summary tables, the fabric comparisons and the
#                    cost-model fit (with each collective's selection lines)
#                    printed at the end
#   sweep_<collective>_mpi_p<NP>_f32.png   time and busbw vs size per
#                    algorithm, one per collective; exchange_mpi_p<NP>.png
#                    the exchange per model
#   fit/             collbench-fit's models.csv, predictions.csv, selections.csv and plots
#                    (fit_<collective>_*.png, fit_p2p_*, fit_reduce_*)
#
# Environment:
#   NP         ranks (default: the cores, at least 2, at most 4)
#   LARGE      1 (default with --full, else 0) to also run the large models'
#              exchanges, 0 to skip
#   RUN_OFI    1 (default with --full, else 0) to also sweep over libfabric
#              and MPI on the same fabrics, 0 to skip
#   SCALING_MODEL  the catalog model of report.md's scaling prediction
#              (default resnet50; collbench-catalog list)
#   RESULTS    folder that receives the run folder (default: results/ in the
#              current folder; a relative path is relative to the current folder)
#   BUILD_DIR  build folder (default: the repository's build/; a relative
#              path is relative to the current folder)
#   JOBS       parallel build jobs (default: the number of cores)
# Flags after `--` go to collbench as they are and come after the defaults,
# so they can add to or override them (Google Benchmark's included), e.g.
#   scripts/run.sh -- --sizes 1KiB:1MiB --benchmark_min_time=0.1
#   NP=8 scripts/run.sh -- --algorithms ring,mpi --dtype bf16
# They go to every sweep. Once it is built, collbench checks them in a dry
# run: bad ones end run.sh with status 2 before a run folder is created.
# See `build/benchmarks/harness/collbench --help` for every flag.
set -euo pipefail
# The script works in the caller's folder, where the run folder goes by
# default; the repository's tools and build/ are named by absolute paths.
caller=$PWD
repository=$(cd "$(dirname "$0")/.." && pwd)
self=$repository/scripts/run.sh

usage() { sed -n '2,/^set -euo/p' "$self" | sed '$d' | sed 's/^# \{0,1\}//'; }

# from_caller PATH: PATH itself when absolute, else under the caller's folder.
from_caller() { if [[ $1 == /* ]]; then printf '%s' "$1"; else printf '%s/%s' "$caller" "$1"; fi; }

# folder_or_absent VARIABLE PATH: refuses a PATH that exists and is not a folder.
folder_or_absent() {
  if [[ -e $2 && ! -d $2 ]]; then
    echo "run.sh: $1 is $2, which is not a folder" >&2
    exit 2
  fi
}

passthrough=()
quick=1
in_place=0
launches=3
while [[ $# -gt 0 ]]; do
  case $1 in
    -h | --help)
      usage
      exit 0
      ;;
    --quick | --full)
      # The two contradict each other: of both, the last one would win.
      if [[ -n ${size_flag:-} && $size_flag != "$1" ]]; then
        echo "run.sh: $size_flag and $1 contradict each other; give one" >&2
        exit 2
      fi
      size_flag=$1
      quick=1
      [[ $1 == --quick ]] || quick=0
      shift
      ;;
    --progress)
      in_place=1
      shift
      ;;
    --launches)
      if [[ $# -lt 2 || ! $2 =~ ^[1-9][0-9]{0,2}$ ]]; then
        echo "run.sh: --launches takes a number of launches from 1 to 999, got '${2-}'" >&2
        exit 2
      fi
      if [[ -n ${launches_given:-} ]]; then
        echo "run.sh: --launches given twice ('$launches_given' and '$2'); give it once" >&2
        exit 2
      fi
      launches_given=$2
      launches=$2
      shift 2
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

source "$repository/scripts/machine.sh"
cores=$(machine_cores)
# A core per rank, 2 ranks at least (a collective needs two) and 4 at most
# (every algorithm of every collective at every size: minutes per rank).
default_np=$((cores < 2 ? 2 : cores > 4 ? 4 : cores))
np=${NP:-$default_np}
if ! [[ $np =~ ^[1-9][0-9]*$ ]]; then
  echo "run.sh: NP='$np' is not a positive number of ranks" >&2
  exit 2
fi
# All NP ranks run on this machine: past a thousand the job only measures
# the scheduler (and a longer number would overflow the shell's arithmetic).
if ((${#np} > 4 || np > 1024)); then
  echo "run.sh: NP=$np ranks on one machine; give at most 1024" >&2
  exit 2
fi
if [[ -n ${RESULTS:-} ]]; then
  results=$(from_caller "$RESULTS")
  folder_or_absent RESULTS "$results"
else
  results=results
  folder_or_absent "RESULTS (unset, so ./results)" "$caller/results"
fi
build=$repository/build
[[ -n ${BUILD_DIR:-} ]] && build=$(from_caller "$BUILD_DIR")
folder_or_absent BUILD_DIR "$build"
jobs=${JOBS:-$(nproc)}
if ! [[ $jobs =~ ^[1-9][0-9]*$ ]]; then
  echo "run.sh: JOBS='$jobs' is not a positive number of build jobs" >&2
  exit 2
fi
# Judged before the build: a typo would otherwise cost minutes, or (RUN_OFI)
# skip its sweeps without a word.
large=${LARGE:-$((1 - quick))}
if [[ $large != 0 && $large != 1 ]]; then
  echo "run.sh: LARGE='$large' must be 1 (run the large models' exchanges) or 0" >&2
  exit 2
fi
want_ofi=${RUN_OFI:-$((1 - quick))}
if [[ $want_ofi != 0 && $want_ofi != 1 ]]; then
  echo "run.sh: RUN_OFI='$want_ofi' must be 1 (sweep over libfabric too) or 0" >&2
  exit 2
fi
scaling_model=${SCALING_MODEL:-resnet50}
# Said first, before anything is built or measured: what sharing cores does to
# the numbers of this run (report.py marks them in report.md).
numa_nodes=$(machine_numa_nodes)
binding=$(machine_binding "$np")
shares_cores=$((np > cores))
echo "run.sh: this machine: $cores cores, $numa_nodes NUMA node(s), 1 host; $np ranks" >&2
if ((shares_cores)); then
  echo "run.sh: warning: $np ranks on $cores cores: ranks share cores (oversubscribed), so" \
    "their times include waiting for a core. report.md will mark the fits, model errors," \
    "algorithm selections and predictions made from them not meaningful; NP=$cores gives" \
    "each rank a core." >&2
fi

"$repository/scripts/setup.sh"
if [[ ! -f $build/CMakeCache.txt ]]; then
  echo "run.sh: configuring $build/ (Release)" >&2
  cmake -S "$repository" -B "$build" -DCMAKE_BUILD_TYPE=Release >"$build.configure.log" 2>&1 ||
    { cat "$build.configure.log" >&2; exit 1; }
  rm -f "$build.configure.log"
fi
echo "run.sh: building collbench, collbench-fit and collbench-predict in $build/" >&2
if ! cmake --build "$build" -j "$jobs" --target collbench_exe collbench-fit collbench-predict >"$build/run.sh-build.log" 2>&1; then
  tail -40 "$build/run.sh-build.log" >&2
  echo "run.sh: the build failed; full log in $build/run.sh-build.log" >&2
  exit 1
fi
collbench=$build/benchmarks/harness/collbench
fit=$build/benchmarks/models/collbench-fit
predict=$build/benchmarks/models/collbench-predict

# The report's scaling model, checked before anything is measured.
if ! refusal=$("$predict" --model "$scaling_model" --batch 256 --compute-seconds 1 \
  --max-nodes 2 2>&1 >/dev/null); then
  echo "run.sh: SCALING_MODEL='$scaling_model': ${refusal#collbench-predict: }" >&2
  exit 2
fi

# The launcher of the library the build links (scripts/mpi_launcher.sh):
# mpirun.openmpi or mpirun.mpich, never the `mpirun` alternative, with that
# library's flags for the ranks and their binding (mpi_launch_flags). Open
# MPI refuses root without its variables. The main sweep and the libfabric
# sweeps (MPI only launches them and exchanges endpoint names) use MPI over
# shared memory, the fabric of ranks on one machine; mpi_flags names the MPI
# fabrics the libfabric sweeps are compared with. MPICH gets no fabric flags
# and no such comparison sweeps (its fabric cannot be chosen here).
# shellcheck source=scripts/mpi_launcher.sh
source "$repository/scripts/mpi_launcher.sh"
mpi_library=$(mpi_library_of "$build")
mpi_run=$(mpi_launcher_for "$mpi_library") || { echo "run.sh: cannot launch: see above" >&2; exit 2; }
read -ra launch_flags <<<"$(mpi_launch_flags "$mpi_library" "$np" "$binding")"
mpirun_base=("$mpi_run" "${launch_flags[@]}")
declare -A mpi_flags=()
fabric=()
if [[ $mpi_library == openmpi ]]; then
  mpi_flags=(
    [btl_vader]="--mca pml ob1 --mca btl self,vader"
    [btl_tcp]="--mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo"
    [mtl_ofi_tcp]="--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tcp"
    [mtl_ofi_shm]="--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include shm"
  )
  read -ra fabric <<<"${mpi_flags[btl_vader]}"
  open_mpi_environment
fi
launcher=("${mpirun_base[@]}" "${fabric[@]}")

# The flags after `--` are collbench's to judge, and it can only once it is
# built: a dry run (--benchmark_list_tests: names only, no output file)
# refuses bad ones before a run folder exists.
# Every collective first, then collbench's other default families; three
# samples in all, so that collbench-fit's selection has a spread (the
# interquartile range over samples) to weigh a crossover against: each
# launch's median is a sample, and a launch of fewer than three runs
# ceil(3/N) interleaved rounds. A launch pays its start-up and its batch
# calibration again: on a loaded machine a one-round launch took 70 s
# where a round within one launch took 39 s (docs/performance.md).
# The first run (no --full): x8 size steps up to 4 MiB and one workload.
if ((quick)); then
  sizes=8B:4MiB:x8
  workloads=(--workload googlenet:ddp)
else
  sizes=8B:64MiB
  workloads=(--workload resnet50:ddp --workload bert_base:ddp --workload gpt2:fsdp
    --workload gpt2:tp=2)
fi
rounds=$(((3 + launches - 1) / launches))
sweep_flags=(--families collectives,p2p,sendrecv,local,reduce_all
  --algorithms all --sizes "$sizes" --check "${workloads[@]}"
  --benchmark_min_time=0.01 --benchmark_repetitions="$rounds" --interleave)
# One training iteration's exchanges of the same workloads, checked, in a
# pass of their own with one repetition: nothing is selected from them, and
# three repetitions of every iteration (637 MiB for gpt2:fsdp) took 183 of
# the main sweep's 451 s here.
exchange_flags=(--families exchange --algorithms all --check "${workloads[@]}"
  --benchmark_min_time=0.01)
# The iterations of the models too large to sweep per size: llama2_7b under
# FSDP (98 messages, 40 GB per iteration) and mixtral_8x7b's expert
# parallelism on a 4096-token sequence, uniform and skewed (128 alltoallvs
# of 64 MiB each): their exchanges only, 3 samples each (--min-samples 3:
# every call outlasts min_time), appended to the main CSV, where the
# summary's per-iteration table shows them, beside the DDP, FSDP and TP
# ones when NP ranks have a core each and in a table of their own rank
# count otherwise. They run on min(NP, cores) ranks: llama2_7b:fsdp's
# buffers take 4-5 GiB per rank, which 4 ranks on this 24 GiB machine do
# not have, and on a core each the times mean what they say. Without
# --check: checking every element of a 40 GB iteration takes minutes per
# call here, and the main sweep checks these algorithms at every size (the
# tests check MoE and FSDP exchanges message by message). LARGE=0 skips
# them.
large_flags=(--families exchange --algorithms all --min-samples 3
  --benchmark_min_time=0.01
  --workload llama2_7b:fsdp --workload mixtral_8x7b:moe:seq=4096
  --workload mixtral_8x7b:moe:seq=4096:skew=1.2)
# One training iteration of the first workload with its exchange overlapped
# (--families train): forward and backward GEMMs at 2 samples per rank,
# every DDP bucket allreduced on a communication thread as soon as backprop
# has made it, by every algorithm; train/none is the compute alone, and the
# pass's own exchange rows (the same buckets back to back, run first) its
# communication alone. Three interleaved rounds: the first round of a
# process ran 20-50% slower here (exchanges and GEMMs alike), and the
# medians over rounds keep it out. One iteration of each goes to
# timeline.json.
train_workload=${workloads[1]}
train_flags=(--families train --algorithms all --check --workload "$train_workload"
  --train-batch 2 --samples 3 --benchmark_repetitions=3 --interleave)
for flags_name in sweep_flags exchange_flags train_flags large_flags; do
  [[ $flags_name == large_flags && $large == 0 ]] && continue
  declare -n dry_flags=$flags_name
  if ((${#passthrough[@]} > 0)) &&
    ! dry_run=$("${launcher[@]}" "$collbench" "${dry_flags[@]}" "${passthrough[@]}" \
      --benchmark_list_tests=true 2>&1 >/dev/null); then
    grep '^collbench: ' <<<"$dry_run" | grep -v '^collbench: note: ' >&2 || echo "$dry_run" >&2
    echo "run.sh: collbench refused the flags after '--' (see $collbench --help)" >&2
    exit 2
  fi
done

run_id=$(date -u +%Y%m%dT%H%M%SZ)-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
out=$results/$run_id
mkdir -p "$out"
# What report.py needs to judge the rows: the cores they ran on (the rows
# say their ranks and ranks per host). key: value, one per line.
cat >"$out/machine.txt" <<EOF
host: $(hostname)
cores: $cores
cpus: $(nproc)
numa_nodes: $numa_nodes
ranks: $np
binding: $binding
mode: $( ((quick)) && echo quick || echo full)
launches: $launches
EOF

# Everything said on stderr from here on goes to run.log too.
exec 2> >(tee -a "$out/run.log" >&2)

# Under mpirun rank 0's stdout is a pseudo-terminal and its stderr a pipe
# whatever this script's are, so colour and progress are decided here: new
# progress lines at least every 20 s (a log shows them; one benchmark can
# run for minutes), or with --progress one line rewritten in place.
display=(--benchmark_color=false)
if ((in_place)); then
  display+=(--progress)
else
  display+=(--progress-lines 20)
fi

# The passes of this run, numbered in their announcements; steps that are
# no collbench pass (plots, fit, report) say they still run every 20 s.
# Not grep -q (see mpirun --version above): collbench writes its --help in
# several blocks, and a SIGPIPE once skipped every libfabric sweep.
run_ofi=0
if ((want_ofi)) &&
  "$collbench" --help 2>/dev/null | grep -- "--transport KIND.*ofi" >/dev/null; then
  run_ofi=1
fi
passes=$((2 + launches + (large == 1) + run_ofi * (2 + ${#mpi_flags[@]} - (${#mpi_flags[@]} > 0))))
pass=0
announce() {
  pass=$((pass + 1))
  echo "run.sh: [pass $pass/$passes, $((SECONDS / 60)):$(printf %02d $((SECONDS % 60))) elapsed] $*" >&2
}
# ticking WHAT COMMAND...: COMMAND, with "WHAT: still running" on stderr every 20 s.
ticking() {
  local what=$1 begun=$SECONDS ticker status=0
  shift
  echo "run.sh: $what" >&2
  # Its stdout is not the caller's: a command substitution would wait for it.
  (while sleep 20; do echo "run.sh: $what: still running ($((SECONDS - begun)) s)" >&2; done) \
    >/dev/null &
  ticker=$!
  "$@" || status=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  return "$status"
}

# min_time 0.01 s gives small messages hundreds of timed samples, and the
# large ones collbench's floor (--min-samples, 10) per repetition: on 2
# cores at NP=2 the main sweep of every collective (three repetitions) took
# 281 to 369 s and the whole job 13 minutes.
# Each launch appends its rows (the launch column tells them apart) and its
# console table; launch 1 writes collbench.json, launch K collbench_launchK.json.
echo "run.sh: run $run_id: ${launcher[*]} $collbench ..." >&2
start=$SECONDS
for ((launch = 1; launch <= launches; launch++)); do
  json=$out/collbench.json
  ((launch == 1)) || json=$out/collbench_launch$launch.json
  sweep=(
    "${sweep_flags[@]}"
    --run-id "$run_id" --csv "$out/collbench.csv"
    --benchmark_out="$json" --benchmark_out_format=json
  )
  ((launch == 1)) || sweep+=(--append)
  announce "the sweep, launch $launch of $launches: every collective and algorithm at $sizes," \
    "p2p, local; $rounds interleaved round(s)"
  ((launches == 1)) || echo "== launch $launch of $launches ==" >>"$out/console.txt"
  if ! "${launcher[@]}" "$collbench" "${sweep[@]}" "${display[@]}" "${passthrough[@]}" \
    >>"$out/console.txt"; then
    echo "run.sh: collbench failed; finished rows are in $out/collbench.csv, its output in $out/console.txt" >&2
    exit 1
  fi
done
echo "run.sh: sweep done in $((SECONDS - start)) s ($launches launch(es))" >&2
# appended_pass WHAT NAME LAUNCHER... -- COLLBENCH_FLAGS...: one more pass of
# this run, its rows appended to collbench.csv, its output in console_NAME.txt.
appended_pass() {
  local what=$1 console=$out/console_$2.txt launch=() start=$SECONDS
  shift 2
  while [[ $1 != -- ]]; do launch+=("$1"); shift; done
  shift
  announce "$what"
  if ! "${launch[@]}" "$collbench" "$@" --run-id "$run_id" --csv "$out/collbench.csv" --append \
    "${display[@]}" "${passthrough[@]}" >"$console"; then
    echo "run.sh: collbench failed on $what; finished rows are in $out/collbench.csv, its output in $console" >&2
    exit 1
  fi
  echo "run.sh: $what: done in $((SECONDS - start)) s" >&2
}

appended_pass "one training iteration's exchanges ($(printf '%s\n' "${workloads[@]}" |
  grep -v '^--workload$' | paste -sd ' '))" exchange "${launcher[@]}" -- "${exchange_flags[@]}"
appended_pass "one training iteration of $train_workload, its exchange overlapped with backprop" \
  train "${launcher[@]}" -- "${train_flags[@]}" --timeline "$out/timeline.json"
if [[ $large == 1 ]]; then
  large_np=$((np < cores ? np : cores))
  read -ra launch_flags <<<"$(mpi_launch_flags "$mpi_library" "$large_np" "$(machine_binding "$large_np")")"
  large_launcher=("$mpi_run" "${launch_flags[@]}" "${fabric[@]}")
  appended_pass "the large models' exchanges (llama2_7b:fsdp, mixtral_8x7b:moe) on $large_np ranks" \
    large "${large_launcher[@]}" -- "${large_flags[@]}"
fi

ticking "the summary tables (summarize.py)" /usr/bin/python3 "$repository/scripts/summarize.py" \
  "$out/collbench.csv" >"$out/summary.md"
echo
cat "$out/summary.md"

plots() {
  /usr/bin/python3 "$repository/scripts/plot.py" sweep "$out/collbench.csv" --out "$out"
  /usr/bin/python3 "$repository/scripts/plot.py" timeline "$out/timeline.json" --out "$out"
}
plot_list=$(ticking "the plots (plot.py)" plots)
echo
echo "Plots:"
sed 's/^/  /' <<<"$plot_list"

# The same algorithms over raw libfabric (tcp and shm here), smaller sweep
# (x4 steps, allreduce only) to stay within the time budget; then the same
# sweep over MPI on the same fabrics, so that each ratio compares two
# protocol stacks on one wire: kernel TCP on loopback (libfabric tcp against
# Open MPI's tcp BTL), libfabric's own providers under both (against Open MPI
# over libfabric: pml cm, mtl ofi) and shared memory (libfabric shm against
# the main sweep's vader BTL). FI_*_IFACE keep tcp on loopback. Each sweep
# writes collbench_<fabric>.csv and console_<fabric>.txt; a failed one is
# reported in its table with the first line of its error output.
declare -A csv_of=() failure_of=()
csv_of[mpi_btl_vader]=$out/collbench.csv

# allreduce_sweep FABRIC LAUNCHER... -- COLLBENCH_FLAGS...
allreduce_sweep() {
  local fabric=$1 console=$out/console_$1.txt csv=$out/collbench_$1.csv launch=() status=0
  shift
  while [[ $1 != -- ]]; do launch+=("$1"); shift; done
  shift
  announce "allreduce over $(label "$fabric")"
  FI_TCP_IFACE=lo FI_SOCKETS_IFACE=lo "${launch[@]}" "$collbench" --families allreduce \
    --algorithms all --sizes 16B:64MiB:x4 --check --run-id "$run_id" --csv "$csv" \
    --benchmark_min_time=0.01 "$@" --benchmark_color=false "${passthrough[@]}" \
    >"$console" 2>"$console.stderr" || status=$?
  if ((status == 0)); then
    csv_of[$fabric]=$csv
  else
    # The first line that says something: not blank, not a rule of dashes,
    # not an Open MPI "[host:pid]" prefix line.
    failure_of[$fabric]=$(grep -v -m1 -E '^[[:space:]]*$|^-+$|^\[' "$console.stderr" || true)
    failure_of[$fabric]=${failure_of[$fabric]:-exit status $status}
    echo "run.sh: the $fabric sweep failed (output in $console): ${failure_of[$fabric]}" >&2
  fi
  cat "$console.stderr" >>"$console"
  rm -f "$console.stderr"
}

# label FABRIC: the fabric as compare_transports.py names it, e.g.
# "ofi/tcp", "mpi (pml cm, mtl ofi, provider tcp)".
label() {
  if [[ $1 == ofi_* ]]; then
    echo "ofi/${1#ofi_}"
    return
  fi
  local flags text="" i
  read -ra flags <<<"${mpi_flags[${1#mpi_}]:-}"
  for ((i = 0; i + 2 < ${#flags[@]}; i += 3)); do # --mca NAME VALUE
    case ${flags[i + 1]} in
      pml | btl | mtl) text+="${text:+, }${flags[i + 1]} ${flags[i + 2]}" ;;
      mtl_ofi_provider_include) text+="${text:+, }provider ${flags[i + 2]}" ;;
    esac
  done
  echo "mpi (${text:-${1#mpi_}})"
}

comparisons=()
if ((run_ofi)); then
  for provider in tcp shm; do
    allreduce_sweep "ofi_$provider" "${launcher[@]}" -- --transport ofi --ofi-provider "$provider"
  done
  comparisons=("ofi_tcp mpi_btl_tcp" "ofi_tcp mpi_mtl_ofi_tcp" "ofi_shm mpi_btl_vader"
    "ofi_shm mpi_mtl_ofi_shm")
  for fabric in btl_tcp mtl_ofi_tcp mtl_ofi_shm; do
    [[ -n ${mpi_flags[$fabric]:-} ]] || continue
    read -ra flags <<<"${mpi_flags[$fabric]}"
    allreduce_sweep "mpi_$fabric" "${mpirun_base[@]}" "${flags[@]}" -- --benchmark_filter=-^allreduce/mpi/
  done
fi
if [[ ${#comparisons[@]} -gt 0 ]]; then
  report="Each libfabric sweep against MPI over the same fabric: the time of every algorithm"
  report+=" over libfabric / over MPI, per size (< 1: faster over libfabric)."$'\n'
  for pair in "${comparisons[@]}"; do
    read -r ofi mpi <<<"$pair"
    report+=$'\n'
    if [[ -z ${mpi_flags[${mpi#mpi_}]:-} ]]; then
      report+="#### collbench $(label "$ofi") vs collbench mpi over ${mpi#mpi_}: not measured, the MPI is not Open MPI"$'\n'
    elif [[ -n ${failure_of[$ofi]:-} || -n ${failure_of[$mpi]:-} ]]; then
      failed=$ofi
      [[ -n ${failure_of[$ofi]:-} ]] || failed=$mpi
      report+="#### collbench $(label "$ofi") vs collbench $(label "$mpi"): not measured, the $failed sweep failed: ${failure_of[$failed]} (console_$failed.txt)"$'\n'
    elif table=$(/usr/bin/python3 "$repository/scripts/compare_transports.py" "${csv_of[$mpi]}" "${csv_of[$ofi]}" 2>&1); then
      report+=$table$'\n'
    else
      report+="#### collbench $(label "$ofi") vs collbench $(label "$mpi"): not compared: $table"$'\n'
    fi
  done
  echo
  echo "$report"
  {
    echo
    echo "### libfabric relative to MPI over the same fabric"
    echo
    echo "$report"
  } >>"$out/summary.md"
fi

fit_report=$(ticking "the cost models (collbench-fit)" "$fit" "$out/collbench.csv" \
  --out-dir "$out/fit" --plot-dir "$out/fit" --brief)
{
  echo
  echo "### cost models: collbench-fit --brief"
  echo
  if ((shares_cores)); then
    echo "Not meaningful (ranks share cores): $np ranks ran on $cores cores, so the model" \
      "errors and selections below include waiting for a core (report.md)."
    echo
  fi
  echo '```'
  echo "$fit_report"
  echo '```'
} >>"$out/summary.md"

# report.md, answers first; it also runs collbench-predict for the scaling
# of SCALING_MODEL on links like this run's (scaling/).
ticking "the report and its scaling prediction (report.py, collbench-predict)" \
  /usr/bin/python3 "$repository/scripts/report.py" "$out" --predict "$predict" \
  --scaling-model "$scaling_model" --elapsed-seconds "$SECONDS"
echo
# The answers: report.md up to its details.
sed -n '1,/^## Detail/p' "$out/report.md" | sed '$d'
took="$((SECONDS % 60)) s"
((SECONDS < 60)) || took="$((SECONDS / 60)) min $took"
echo "run.sh: done in $took; the report is $out/report.md"
