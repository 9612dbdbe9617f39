#!/usr/bin/env bash
# characterize.sh: characterize a cluster's network for collective communication.
#
#   1. matrix   all-pairs point-to-point matrix (collbench-linkmatrix, first of --transports):
#               latency at 8 B and bandwidth at --matrix-size per directed host pair, pairs in
#               round-robin rounds so each link is measured alone; CSVs, heatmap PNGs, slow
#               hosts/links by name
#   2. sweep    collbench: p2p ping-pong between 2 hosts, the local reduce/memcpy kernels
#               on one rank, then the allreduce sweep over --algorithms, the sweep of the
#               other --collectives (--collective-sizes) and a sendrecv ring (every rank
#               sending at once, --p2p-sizes) at p = 2, 4, 8, ..., P ranks (and P), per
#               --transports
#   3. fit      collbench-fit on everything (alpha, beta, gamma; bottom-up predictions, with
#               --ppn 2+ over two levels, the network's alpha, beta from the matrix;
#               selection table), collbench-predict for --predict models on the fitted network
#   4. sim      with --sim-nodes N, "on N nodes like these": the allreduce --algorithms on a
#               simulated star of N nodes (collbench --transport sim, size-only) calibrated
#               by the fit's models.csv, at p = 2, 4, 8, ..., N (and N); OUT/sim/allreduce.csv
#               and collbench-fit's selection from it, OUT/sim/selections.csv;
#               with --sim-workload, "your model on N nodes like these": one training
#               iteration per workload at the same p (scripts/scale.sh, weak scaling);
#               OUT/sim/scale_<workload>.csv
#   5. report   OUT/report.md with the PNGs (and the simulated scaling of step 4)
#
# Usage: characterize.sh --out DIR [where] [options]
# Where the hosts are (one of; default: --slurm inside a Slurm allocation):
#   --netsim ID           hosts of scripts/netsim.sh cluster ID ('auto': the only one)
#   --hostfile FILE       OpenMPI hostfile (one host per line; 'slots=' is ignored, see --ppn)
#   --slurm               the nodes of this Slurm allocation ($SLURM_JOB_NODELIST); ranks
#                         start as --launcher says
# One host is enough with --ppn 2 or more: the matrix step is skipped (no host pairs), every
# sweep runs intra-node, and the report says so.
# Options:
#   --out DIR             output folder (created; an existing non-empty one is refused
#                         unless --force)
#   --build DIR           build folder with the collbench tools (default: $COLLBENCH_BUILD, else
#                         build/ of this checkout, else the tools on PATH)
#   --ppn K               ranks per host for the sweep (default 1; the matrix uses 1)
#   --map-by slot|node    with --ppn K > 1, how ranks sit on the hosts: slot (default) ranks
#                         0..K-1 on the first host (mpirun --map-by slot, srun
#                         --distribution=block), node round robin (--map-by node, cyclic);
#                         the CSVs' map_by column records what the job got
#   --ranks LIST          rank counts of the sweep (default 2,4,8,...,P and P; P = hosts x ppn)
#   --algorithms LIST     collbench --algorithms (default: all)
#   --collectives LIST    collectives to sweep beside allreduce, comma-separated (collbench
#                         --families), 'all' (default: every collective of the build's
#                         `collbench --list-algorithms`) or 'none'
#   --collective-sizes SIZES  sizes of the --collectives sweep (default: --sizes)
#   --transports LIST     comma-separated: mpi, ofi (default: mpi)
#   --ofi-provider NAME   libfabric provider for ofi (e.g. verbs, 'tcp;ofi_rxm')
#   --sizes SIZES         allreduce sizes (default: 8B:64MiB:x4)
#   --p2p-sizes SIZES     ping-pong and sendrecv sizes (default: 8B:64MiB:x4)
#   --local-sizes SIZES   local reduce and memcpy sizes (default: 4KiB:64MiB:x4)
#   --repetitions N       Google Benchmark repetitions (default: 3)
#   --min-time S          --benchmark_min_time in seconds (default: 0.2)
#   --min-samples N       collbench --min-samples: timed samples per repetition at least
#                         (default: collbench's, 10); a call longer than --min-time / N
#                         gets exactly N
#   --check               validate every collective's result once before timing it
#   --matrix-size SIZE    bandwidth transfer of the matrix (default: 4MiB)
#   --matrix-iterations N timed transfers per link (default: 5)
#   --threshold T         slow when below (1 - T) x the median host's bandwidth (default: 0.25)
#   --exclude-slow        run steps 2-3 without the hosts the matrix names as slow
#   --hosts LIST          use only these hosts, in this order (comma-separated)
#   --predict LIST        collbench-predict runs, MODEL:BATCH:SECONDS (compute seconds per
#                         iteration of BATCH samples on one node), comma-separated
#                         (default: alexnet:256:0.2,googlenet:32:0.36,resnet50:256:0.8)
#   --max-nodes N         largest p of the predictions (default: 64)
#   --sim-nodes N         the node count of step 4's simulated cluster, 2 to 4096 (default:
#                         none, step 4 skipped); one rank per node, needs a build with SimGrid
#   --sim-sizes SIZES     step 4's allreduce sizes (default: 32KiB,512KiB); a size runs at p
#                         only while p x size <= 2 GiB (the algorithms' workspaces are
#                         allocated even in size-only mode)
#   --sim-workload LIST   step 4's training workloads, MODEL:EXCHANGE as scripts/scale.sh
#                         --help names them (MODEL alone: MODEL:ddp), comma-separated or
#                         repeated (default: none). Each runs scale.sh --modes weak (its
#                         batch per rank, algorithm and overlap by default)
#                         --communication-alone on the star calibrated by the fit, at p = 1
#                         (the speedup's base), 2, 4, ..., N. resnet50 from this machine's
#                         GEMMs: 19 s of CPU at p = 256 (9 s without the exchange alone;
#                         measured on a loaded machine, load average 8). Needs one compute
#                         source:
#   --sim-flops RATE      an assumed rate, FLOP/s per rank (SI prefix: 10T), or
#   --sim-compute-from FILE  a harness CSV with gemm rows of the model (results/gemm/gemm.csv:
#                         this machine's GEMMs)
#   --sim-global-batch B  with --sim-workload, strong scaling too (scale.sh --modes weak,strong
#                         --global-batch B): the global batch of B samples split over p, p up
#                         to B (default: none, weak scaling only)
#   --steps LIST          steps to run (default: matrix,sweep,fit,sim,report); a later step
#                         reads an earlier step's files from OUT
#   --mpirun-args "ARGS"  extra mpirun arguments (hostfile/Slurm modes), split on spaces,
#                         e.g. "--mca pml ucx" or "--mca btl self,vader,tcp"
#   --launcher NAME       how --slurm starts ranks: srun (srun --mpi=pmix: Slurm's PMIx plugin
#                         starts them, as users do on the cluster), mpirun (mpirun inside the
#                         allocation), auto (default: srun where `srun --mpi=list` names pmix,
#                         else mpirun)
#   --srun-args "ARGS"    extra srun arguments (--launcher srun), split on spaces, e.g.
#                         "--cpu-bind=cores"; MPI settings go in OMPI_MCA_* variables then
#   --title TEXT          title of the report
#   --force               write into an existing non-empty OUT
#   -h, --help            this text
# Every option once (but --sim-workload); one of --netsim, --hostfile, --slurm.
# Exit status: 0 done, 1 a step failed, 2 bad arguments (every argument is checked,
# by the tool it is for where it is a tool's, before anything is measured or created).
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_dir=$(cd "$script_dir/.." && pwd)

die() {
  echo "characterize.sh: $*" >&2
  exit 2
}
fail() {
  echo "characterize.sh: $*" >&2
  exit 1
}
log() { echo "characterize.sh: $*" >&2; }
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

out="" mode="" netsim_id="" hostfile="" build="${COLLBENCH_BUILD:-}" ppn=1 map_by=slot ranks_list=""
algorithms=all transports=mpi ofi_provider="" sizes="8B:64MiB:x4" p2p_sizes="8B:64MiB:x4"
local_sizes="4KiB:64MiB:x4" collectives=all collective_sizes="" min_samples=""
repetitions=3 min_time=0.2 check=0 matrix_size=4MiB matrix_iterations=5 threshold=0.25
exclude_slow=0 hosts_filter="" predict="alexnet:256:0.2,googlenet:32:0.36,resnet50:256:0.8"
max_nodes=64 steps="matrix,sweep,fit,sim,report" mpirun_args="" title="" force=0
launcher=auto srun_args="" sim_nodes="" sim_sizes="32KiB,512KiB" steps_given=0
sim_workloads="" sim_flops="" sim_compute_from="" sim_workload_items=() sim_global_batch=""

# need_value OPTION ARGS...: OPTION's value is there, not empty, and the
# first one given (of a repeated option one value would be dropped); only
# --sim-workload adds up.
declare -A given=()
need_value() {
  [[ $# -ge 2 && -n $2 ]] || die "$1 needs a value (see --help)"
  [[ $1 == --sim-workload || -z ${given["$1"]+set} ]] ||
    die "$1 given twice ('${given["$1"]}' and '$2'); give it once"
  given["$1"]=$2
}
while [[ $# -gt 0 ]]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --out) need_value "$@"; out=$2; shift 2 ;;
    --netsim) need_value "$@"; mode=netsim; netsim_id=$2; shift 2 ;;
    --hostfile) need_value "$@"; mode=hostfile; hostfile=$2; shift 2 ;;
    --slurm) mode=slurm; given[--slurm]=set; shift ;;
    --build) need_value "$@"; build=$2; shift 2 ;;
    --ppn) need_value "$@"; ppn=$2; shift 2 ;;
    --map-by) need_value "$@"; map_by=$2; shift 2 ;;
    --ranks) need_value "$@"; ranks_list=$2; shift 2 ;;
    --algorithms) need_value "$@"; algorithms=$2; shift 2 ;;
    --collectives) need_value "$@"; collectives=$2; shift 2 ;;
    --collective-sizes) need_value "$@"; collective_sizes=$2; shift 2 ;;
    --min-samples) need_value "$@"; min_samples=$2; shift 2 ;;
    --transports) need_value "$@"; transports=$2; shift 2 ;;
    --ofi-provider) need_value "$@"; ofi_provider=$2; shift 2 ;;
    --sizes) need_value "$@"; sizes=$2; shift 2 ;;
    --p2p-sizes) need_value "$@"; p2p_sizes=$2; shift 2 ;;
    --local-sizes) need_value "$@"; local_sizes=$2; shift 2 ;;
    --repetitions) need_value "$@"; repetitions=$2; shift 2 ;;
    --min-time) need_value "$@"; min_time=$2; shift 2 ;;
    --check) check=1; shift ;;
    --matrix-size) need_value "$@"; matrix_size=$2; shift 2 ;;
    --matrix-iterations) need_value "$@"; matrix_iterations=$2; shift 2 ;;
    --threshold) need_value "$@"; threshold=$2; shift 2 ;;
    --exclude-slow) exclude_slow=1; shift ;;
    --hosts) need_value "$@"; hosts_filter=$2; shift 2 ;;
    --predict) need_value "$@"; predict=$2; shift 2 ;;
    --max-nodes) need_value "$@"; max_nodes=$2; shift 2 ;;
    --sim-nodes) need_value "$@"; sim_nodes=$2; shift 2 ;;
    --sim-sizes) need_value "$@"; sim_sizes=$2; shift 2 ;;
    --sim-workload) need_value "$@"; sim_workloads+=${sim_workloads:+,}$2; shift 2 ;;
    --sim-flops) need_value "$@"; sim_flops=$2; shift 2 ;;
    --sim-compute-from) need_value "$@"; sim_compute_from=$2; shift 2 ;;
    --sim-global-batch) need_value "$@"; sim_global_batch=$2; shift 2 ;;
    --steps) need_value "$@"; steps=$2; steps_given=1; shift 2 ;;
    --mpirun-args) need_value "$@"; mpirun_args=$2; shift 2 ;;
    --launcher) need_value "$@"; launcher=$2; shift 2 ;;
    --srun-args) need_value "$@"; srun_args=$2; shift 2 ;;
    --title) need_value "$@"; title=$2; shift 2 ;;
    --force) force=1; shift ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

# ---------------------------------------------------------------- validation
[[ -n $out ]] || die "--out DIR is required (see --help)"
where=()
for option in --netsim --hostfile --slurm; do [[ -z ${given[$option]+set} ]] || where+=("$option"); done
((${#where[@]} <= 1)) || die "${where[0]} and ${where[1]} each say where the hosts are; give one"
# Not 08 (bash's arithmetic reads a leading 0 as octal) nor beyond 9 digits
# (it wraps past 2^63: 18446744073709551618 is 2).
is_uint() { [[ $1 =~ ^(0|[1-9][0-9]{0,8})$ ]]; }
is_uint "$ppn" && ((ppn >= 1)) || die "--ppn must be a whole number >= 1"
[[ $map_by == slot || $map_by == node ]] || die "--map-by must be slot or node, got '$map_by'"
is_uint "$repetitions" && ((repetitions >= 1)) || die "--repetitions must be a whole number >= 1"
[[ -z $min_samples ]] || { is_uint "$min_samples" && ((min_samples >= 1)); } ||
  die "--min-samples must be a whole number >= 1"
is_uint "$matrix_iterations" && ((matrix_iterations >= 1)) || die "--matrix-iterations must be >= 1"
is_uint "$max_nodes" && ((max_nodes >= 2)) || die "--max-nodes must be a whole number >= 2"
[[ $min_time =~ ^[0-9]*\.?[0-9]+$ ]] || die "--min-time must be seconds, e.g. 0.2"
[[ $threshold =~ ^0?\.[0-9]+$ ]] || die "--threshold must be a fraction in (0, 1), e.g. 0.25"
declare -A want_step=()
IFS=, read -ra step_items <<<"$steps"
for s in "${step_items[@]}"; do
  case $s in
    matrix | sweep | fit | sim | report) want_step[$s]=1 ;;
    *) die "unknown step '$s' in --steps; accepted: matrix, sweep, fit, sim, report" ;;
  esac
done
[[ -z $sim_nodes ]] || { is_uint "$sim_nodes" && ((sim_nodes >= 2 && sim_nodes <= 4096)); } ||
  die "--sim-nodes must be a whole number of nodes from 2 to 4096, got '$sim_nodes'"
if [[ -n $sim_workloads ]]; then
  [[ -n $sim_nodes ]] || die "--sim-workload needs --sim-nodes N (the simulated cluster's node count)"
  [[ -n $sim_flops || -n $sim_compute_from ]] ||
    die "--sim-workload needs --sim-flops RATE or --sim-compute-from FILE: a network characterization measures no compute, so say where the model's compute comes from"
  [[ -z $sim_flops || -z $sim_compute_from ]] || die "give --sim-flops or --sim-compute-from, not both"
  [[ -z $sim_compute_from ]] || sim_compute_from=$(realpath -m -- "$sim_compute_from")
  IFS=, read -ra sim_workload_list <<<"$sim_workloads"
  for w in "${sim_workload_list[@]}"; do
    [[ $w == *:* ]] || w=$w:ddp
    [[ " ${sim_workload_items[*]} " != *" $w "* ]] || die "--sim-workload names $w twice"
    sim_workload_items+=("$w")
  done
elif [[ -n $sim_flops || -n $sim_compute_from ]]; then
  die "--sim-flops and --sim-compute-from are the compute of --sim-workload's model; give --sim-workload MODEL too"
fi
if [[ -n $sim_global_batch ]]; then
  [[ -n $sim_workloads ]] || die "--sim-global-batch needs --sim-workload MODEL (the model to scale)"
  is_uint "$sim_global_batch" && ((sim_global_batch >= 1 && sim_global_batch <= 1048576)) ||
    die "--sim-global-batch must be a whole number of samples from 1 to 1048576, got '$sim_global_batch'"
fi
if [[ -z $sim_nodes && -n ${want_step[sim]:-} ]]; then
  ((steps_given)) && die "--steps sim needs --sim-nodes N (the simulated cluster's node count)"
  unset 'want_step[sim]'
fi
# A run that measures (matrix or sweep) needs the hosts and writes run.env; a
# run that only fits or reports works on an earlier run's files.
measuring=0
[[ -n ${want_step[matrix]:-} || -n ${want_step[sweep]:-} ]] && measuring=1
if [[ -z $mode ]] && ((measuring)); then
  [[ -n ${SLURM_JOB_NODELIST:-} ]] || die "say where the hosts are: --netsim ID, --hostfile FILE or --slurm (inside an allocation)"
  mode=slurm
fi
case $launcher in
  auto | srun | mpirun) ;;
  *) die "--launcher $launcher; accepted: auto, srun, mpirun" ;;
esac
if [[ $mode != slurm ]]; then
  [[ $launcher == auto ]] || die "--launcher $launcher is for --slurm (the other modes start ranks with mpirun)"
  [[ -z $srun_args ]] || die "--srun-args is for --slurm with --launcher srun"
  launcher=mpirun
fi
[[ $launcher == mpirun && -n $srun_args ]] && die "--srun-args needs --launcher srun (the launcher is mpirun)"
[[ $launcher == srun && -n $mpirun_args ]] &&
  die "--mpirun-args is for mpirun; with --launcher srun pass srun's arguments in --srun-args and MPI settings as OMPI_MCA_* variables"
IFS=, read -ra transport_items <<<"$transports"
for t in "${transport_items[@]}"; do
  [[ $t == mpi || $t == ofi ]] || die "unknown transport '$t' in --transports; accepted: mpi, ofi"
done
IFS=, read -ra predict_items <<<"$predict"
for spec in "${predict_items[@]}"; do
  [[ $spec =~ ^[a-z0-9_]+:[0-9]+:[0-9]*\.?[0-9]+$ ]] ||
    die "bad --predict item '$spec'; MODEL:BATCH:SECONDS, e.g. resnet50:256:0.8"
done
if [[ -n $ranks_list ]]; then
  IFS=, read -ra rank_items <<<"$ranks_list"
  for r in "${rank_items[@]}"; do
    is_uint "$r" && ((r >= 2)) || die "bad rank count '$r' in --ranks; whole numbers >= 2"
  done
fi
if [[ -n $ofi_provider && ,$transports, != *,ofi,* ]]; then
  die "--ofi-provider '$ofi_provider' needs ofi in --transports (got '$transports')"
fi
# The nearest folder of --out that exists must be one this script may write in.
writable=$(realpath -m -- "$out")
while [[ ! -e $writable ]]; do writable=$(dirname "$writable"); done
[[ -d $writable ]] || die "--out $out: $writable is not a folder"
[[ -w $writable && -x $writable ]] || die "--out $out: cannot write in $writable"

# ---------------------------------------------------------------- tools
python=/usr/bin/python3
[[ -x $python ]] || python=$(command -v python3) || die "needs python3 with matplotlib (Debian python3-matplotlib)"
if [[ -z $build && -d $repo_dir/build ]]; then build=$repo_dir/build; fi
if [[ -n $build ]]; then
  [[ -d $build ]] || die "--build $build is not a folder"
  build=$(cd "$build" && pwd)
fi
tool() { # tool NAME SUBDIR: path of a collbench tool
  local name=$1 sub=$2
  if [[ -n $build ]]; then
    [[ -x $build/$sub/$name ]] || fail "$build/$sub/$name not found; build it (cmake --build $build --target $name) or pass --build DIR"
    echo "$build/$sub/$name"
  else
    command -v "$name" || fail "$name is not on PATH; pass --build DIR (a collbench build folder)"
  fi
}
collbench=$(tool collbench benchmarks/harness)
linkmatrix=$(tool collbench-linkmatrix benchmarks/linkmatrix)
fit=$(tool collbench-fit benchmarks/models)
predict_tool=$(tool collbench-predict benchmarks/models)
report_py=$script_dir/characterize_report.py
plot_py=$script_dir/plot.py

# Every value a step passes to a tool is that tool's to judge, and it judges
# it now, before anything is measured (a step that fails on it would do so
# after minutes of measuring): collbench, collbench-linkmatrix and
# collbench-predict run as one lone rank, or without MPI, on the values as
# the steps pass them, and their usage errors (exit 2) stop the run. Which
# algorithms, transports and providers exist is the build's to say, not a list
# here. A machine where a lone rank cannot start is left to the measurements
# to report.
# usage_error COMMAND...: the first line of COMMAND's usage error, or nothing.
usage_error() {
  local message status=0
  message=$("$@" 2>&1 >/dev/null) || status=$?
  ((status == 2)) && grep -m1 -E '^collbench(-[a-z]+)?: ' <<<"$message"
  return 0
}
# Sizes: a dry run of one rank (names only, no output file).
check_sizes() { # check_sizes OPTION VALUE [COLLBENCH ARGS, default: --algorithms ring]
  local error args=("${@:3}")
  ((${#args[@]})) || args=(--algorithms ring)
  error=$(usage_error "$collbench" --families allreduce "${args[@]}" --sizes "$2" \
    --benchmark_list_tests=true)
  [[ -z $error ]] || die "$1 $2: $(sed 's/^collbench: \(--sizes: \)\{0,1\}//' <<<"$error")"
}
check_sizes --sizes "$sizes"
[[ -n $collective_sizes ]] || collective_sizes=$sizes
check_sizes --collective-sizes "$collective_sizes"
check_sizes --p2p-sizes "$p2p_sizes"
check_sizes --local-sizes "$local_sizes"
# Algorithms, transports and the provider: the sweep's allreduce dry run.
for t in "${transport_items[@]}"; do
  provider_flag=()
  [[ $t == ofi && -n $ofi_provider ]] && provider_flag=(--ofi-provider "$ofi_provider")
  error=$(usage_error "$collbench" --families allreduce --algorithms "$algorithms" --transport "$t" \
    "${provider_flag[@]}" --sizes 8B --benchmark_list_tests=true)
  [[ -z $error ]] || die "$error"
done
# The other collectives: the build's own list (its listing's collective
# column, in registry order) for 'all', and what the names are checked against.
known_collectives=$("$collbench" --list-algorithms --csv |
  awk -F, 'NR > 1 && !seen[$2]++ { printf "%s%s", sep, $2; sep = "," }') ||
  fail "collbench --list-algorithms --csv failed"
others=$(tr , '\n' <<<"$known_collectives" | grep -vx allreduce | paste -sd,) || others=""
case $collectives in
  none) collective_families="" ;;
  all) collective_families=$others ;;
  *)
    collective_families=$collectives
    IFS=, read -ra collective_items <<<"$collectives"
    for c in "${collective_items[@]}"; do
      [[ $c != allreduce ]] || die "--collectives $collectives: allreduce is always swept (at --sizes); list the others"
      [[ ,$known_collectives, == *,$c,* ]] ||
        die "--collectives $collectives: '$c' is not a collective of this build; accepted: all, none, or some of ${others//,/, }"
    done
    ;;
esac
if [[ -n $collective_families ]]; then
  error=$(usage_error "$collbench" --families "$collective_families" --algorithms "$algorithms" \
    --sizes 8B --benchmark_list_tests=true)
  [[ -z $error ]] || die "--collectives $collectives: $error"
fi
# scale_usage_error WORKLOAD: dies with scale.sh's usage error for WORKLOAD
# (e.g. an exchange collbench-predict does not price), found by its one-rank
# run on a preset network (a few CPU seconds, before anything is measured).
scale_usage_error() {
  local work status=0 message
  [[ -n $build ]] || die "--sim-workload needs --build DIR: scale.sh runs a build folder's collbench and collbench-predict"
  work=$(mktemp -d "${TMPDIR:-/tmp}/characterize_scale.XXXXXX")
  message=$("$script_dir/scale.sh" "$1" --build "$build" --network fdr --ranks 1 --modes weak \
    "${compute_flag[@]}" --python "$python" --out-dir "$work" 2>&1 >/dev/null) || status=$?
  rm -rf "$work"
  ((status != 2)) || die "--sim-workload $1: $(grep -m1 '^scale.sh: ' <<<"$message")"
}
# The simulation: a build without SimGrid, or algorithms it cannot run at
# --sim-nodes, is refused now; its calibration is the fit's, checked when
# the fit exists.
sim_calibration=fit/models.csv
if [[ -n ${want_step[sim]:-} ]]; then
  # At collbench's default sizes first, so that a refusal here is the nodes'.
  sim_case=(--transport sim --no-payload --platform star --ranks "$sim_nodes")
  error=$(usage_error "$collbench" "${sim_case[@]}" --families allreduce --algorithms "$algorithms" \
    --benchmark_list_tests=true)
  [[ -z $error ]] || die "--sim-nodes $sim_nodes: $error"
  # Size-only, as the step runs them: no memory (MemAvailable) to check.
  check_sizes --sim-sizes "$sim_sizes" "${sim_case[@]}" --algorithms "$algorithms"
  # --sim-sizes in bytes, as collbench expands them (its case names end in the size).
  sim_bytes=$("$collbench" "${sim_case[@]}" --families allreduce --algorithms ring \
    --sizes "$sim_sizes" --benchmark_list_tests=true 2>/dev/null |
    sed -n 's|^allreduce/ring/\([0-9]*\).*|\1|p' | sort -nu) || sim_bytes=""
  [[ -n $sim_bytes ]] || fail "collbench did not list the --sim-sizes $sim_sizes"
  (($(head -1 <<<"$sim_bytes") * 2 <= 2147483648)) ||
    die "--sim-sizes $sim_sizes: every size x 2 nodes is above 2 GiB, the sim step's bound (see --help)"
  # Each workload: its model, rate or GEMM rows are collbench's to judge, its
  # exchange scale.sh's (the exchanges collbench-predict prices).
  compute_flag=(--flops "$sim_flops")
  [[ -z $sim_compute_from ]] || compute_flag=(--compute-from "$sim_compute_from")
  for w in "${sim_workload_items[@]}"; do
    error=$(usage_error "$collbench" --transport sim --no-payload --platform star --ranks "$sim_nodes" \
      --families train --workload "$w" "${compute_flag[@]}" --benchmark_list_tests=true)
    [[ -z $error ]] || die "--sim-workload $w: $error"
    scale_usage_error "$w"
  done
  [[ -n ${want_step[fit]:-} || -f $out/$sim_calibration ]] ||
    die "$out/$sim_calibration is missing: the sim step is calibrated by the fit; run the fit step first"
fi
# The matrix's options: a lone rank with valid ones is refused only for being
# alone on its host.
matrix_transport=(--transport "${transport_items[0]}")
[[ ${transport_items[0]} == ofi && -n $ofi_provider ]] && matrix_transport+=(--ofi-provider "$ofi_provider")
error=$(usage_error "$linkmatrix" "${matrix_transport[@]}" --size "$matrix_size" \
  --iterations "$matrix_iterations" --bandwidth-threshold "$threshold")
if [[ -n $error && $error != *"a link matrix needs ranks on at least 2 hosts"* ]]; then
  die "--matrix-size $matrix_size: $error"
fi
# Every prediction, on a preset network (milliseconds; no MPI).
for spec in "${predict_items[@]}"; do
  IFS=: read -r model batch seconds <<<"$spec"
  error=$(usage_error "$predict_tool" --network fdr --algorithms ring --model "$model" \
    --batch "$batch" --compute-seconds "$seconds" --max-nodes "$max_nodes")
  [[ -z $error ]] || die "--predict $spec: $error"
done

# ---------------------------------------------------------------- hosts and launch
hosts=()
if ((measuring)); then
  case $mode in
    netsim)
      netsim=$script_dir/netsim.sh
      if [[ $netsim_id == auto ]]; then
        netsim_id=$(NETSIM_ID="" "$netsim" list | awk -F: 'NR == 1 { print $1 } END { if (NR != 1) exit 1 }') ||
          die "--netsim auto needs exactly one netsim cluster (netsim.sh list)"
      fi
      [[ -f /run/collbench-netsim/$netsim_id/hosts ]] || die "no netsim cluster '$netsim_id' (scripts/netsim.sh list)"
      mapfile -t hosts < <(awk '{ print $1 }' "/run/collbench-netsim/$netsim_id/hosts")
      ;;
    hostfile)
      [[ -r $hostfile ]] || die "cannot read hostfile '$hostfile'"
      mapfile -t hosts < <(sed 's/#.*//' "$hostfile" | awk 'NF { print $1 }' | awk '!seen[$0]++')
      ;;
    slurm)
      [[ -n ${SLURM_JOB_NODELIST:-} ]] || die "--slurm needs a Slurm allocation (SLURM_JOB_NODELIST is unset)"
      command -v scontrol >/dev/null || die "--slurm needs scontrol"
      mapfile -t hosts < <(scontrol show hostnames "$SLURM_JOB_NODELIST")
      # srun --mpi=pmix where Slurm has the PMIx plugin (OpenMPI 4.1 talks PMIx to it), else
      # mpirun inside the allocation (it starts its daemons through Slurm).
      mpi_plugins=""
      if [[ $launcher != mpirun ]] && command -v srun >/dev/null; then
        mpi_plugins=$(srun --mpi=list 2>&1 | awk '/^[ \t]/ { printf "%s%s", sep, $1; sep = ", " }') || mpi_plugins=""
      fi
      has_pmix=0
      [[ ,${mpi_plugins// /}, == *,pmix,* ]] && has_pmix=1
      if [[ $launcher == auto ]]; then
        launcher=mpirun
        ((has_pmix)) && launcher=srun
      fi
      if [[ $launcher == srun ]]; then
        ((has_pmix)) || die "--launcher srun needs Slurm's pmix MPI plugin; srun --mpi=list names: ${mpi_plugins:-nothing} (use --launcher mpirun)"
        [[ -z $mpirun_args ]] || die "--mpirun-args is for mpirun; with --launcher srun pass srun's arguments in --srun-args and MPI settings as OMPI_MCA_* variables"
      else
        [[ -z $srun_args ]] || die "--srun-args needs --launcher srun (the launcher is mpirun)"
      fi
      log "ranks start with $launcher${mpi_plugins:+ (srun --mpi=list: $mpi_plugins)}"
      ;;
  esac
  if [[ -n $hosts_filter ]]; then
    IFS=, read -ra wanted <<<"$hosts_filter"
    declare -A listed=()
    for h in "${wanted[@]}"; do
      printf '%s\n' "${hosts[@]}" | grep -qxF "$h" || die "--hosts: '$h' is not one of: ${hosts[*]}"
      [[ -z ${listed[$h]:-} ]] || die "--hosts: '$h' is listed twice"
      listed[$h]=1
    done
    hosts=("${wanted[@]}")
  fi
  ((${#hosts[@]} >= 2 || (${#hosts[@]} == 1 && ppn >= 2))) ||
    die "needs at least 2 hosts; got ${#hosts[@]} (${hosts[*]:-none}); one host needs --ppn 2 or more (an intra-node sweep)"
  ((${#hosts[@]} >= 2 || !exclude_slow)) ||
    die "--exclude-slow needs the link matrix, and one host (${hosts[*]}) has no host pairs"
  # --ranks against the hosts now; --exclude-slow may leave fewer after the
  # matrix, which is checked again then.
  check_ranks() { # check_ranks HOSTS
    local r
    for r in "${rank_items[@]}"; do
      ((r <= $1 * ppn)) || die "--ranks $r exceeds $1 hosts x $ppn ranks per host"
      ((r % ppn == 0)) || die "--ranks $r is not a multiple of --ppn $ppn"
    done
  }
  [[ -z $ranks_list ]] || check_ranks "${#hosts[@]}"
fi
read -ra extra_mpirun <<<"$mpirun_args"
# Open MPI's launcher by name (its --host/--map-by flags below; the `mpirun`
# alternative may be MPICH's): scripts/mpi_launcher.sh.
# shellcheck source=scripts/mpi_launcher.sh
source "$script_dir/mpi_launcher.sh"
mpirun_openmpi=mpirun.openmpi
if [[ $mode != netsim && $launcher == mpirun ]]; then
  mpirun_openmpi=$(mpi_launcher_for openmpi) || die "the hostfile and slurm modes launch with Open MPI's mpirun (--launcher mpirun)"
fi
read -ra extra_srun <<<"$srun_args"
# launch PPN HOST... -- COMMAND...: one job of PPN ranks on each HOST.
launch() {
  local k=$1 list=() spec=""
  shift
  while [[ $1 != -- ]]; do
    list+=("$1")
    shift
  done
  shift
  local np=$((k * ${#list[@]})) h
  for h in "${list[@]}"; do spec+="${spec:+,}$h:$k"; done
  case $mode in
    netsim)
      "$netsim" mpirun --id "$netsim_id" --ppn "$k" -- -np "$np" --host "$spec" --map-by "$map_by" \
        "${extra_mpirun[@]}" "$@"
      ;;
    hostfile | slurm)
      if [[ $launcher == srun ]]; then
        # A job step of K tasks on each listed node, in blocks (--map-by slot) or
        # round robin (--map-by node); one failing rank ends the step.
        local distribution=block
        [[ $map_by == node ]] && distribution=cyclic
        srun --mpi=pmix --nodes="${#list[@]}" --ntasks="$np" --ntasks-per-node="$k" \
          --nodelist="$(IFS=,; echo "${list[*]}")" --distribution="$distribution" --kill-on-bad-exit=1 \
          "${extra_srun[@]}" "$@"
      else
        "$mpirun_openmpi" -np "$np" --host "$spec" --map-by "$map_by" "${extra_mpirun[@]}" "$@"
      fi
      ;;
  esac
}

# ---------------------------------------------------------------- output folder
if [[ -d $out && -n $(ls -A "$out" 2>/dev/null) && $force -eq 0 && -n ${want_step[matrix]:-} ]]; then
  die "--out $out exists and is not empty; pass --force to write into it"
fi
# run.env describes the measurements: written by a run that measures, kept by
# one that only fits or reports on an earlier run's files (checked before
# anything is created).
((measuring)) || [[ -f $out/run.env ]] || die "$out/run.env is missing: run the matrix or sweep step first"
# Root passes -w where mkdir still fails (/proc): its error, once, not per folder.
error=$(mkdir -p "$out"/{matrix,sweep,fit,predict,plots,logs} 2>&1) ||
  die "--out $out: cannot create it (${error%%$'\n'*})"
out=$(cd "$out" && pwd)
run_env=$out/run.env
((measuring)) || run_env=/dev/null
{
  echo "mode=$mode"
  echo "netsim_id=$netsim_id"
  echo "hosts=${hosts[*]}"
  echo "ppn=$ppn"
  echo "map_by=$map_by"
  echo "launcher=$launcher"
  echo "transports=$transports"
  echo "ofi_provider=$ofi_provider"
  echo "algorithms=$algorithms"
  echo "collectives=$collective_families"
  echo "collective_sizes=$collective_sizes"
  echo "sizes=$sizes"
  echo "p2p_sizes=$p2p_sizes"
  echo "local_sizes=$local_sizes"
  echo "repetitions=$repetitions"
  echo "min_time=$min_time"
  echo "min_samples=$min_samples"
  echo "threshold=$threshold"
  echo "exclude_slow=$exclude_slow"
  echo "predict=$predict"
  echo "title=$title"
  echo "git_rev=$(git -C "$repo_dir" describe --always --dirty 2>/dev/null || echo unknown)"
  echo "started_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$run_env"
if ((measuring)) && [[ $mode == netsim ]]; then
  cp "/run/collbench-netsim/$netsim_id/hosts" "$out/netsim_hosts.txt"
fi
start_seconds=$SECONDS
[[ -n ${want_step[matrix]:-} ]] && : >"$out/timings.txt"
step_time() { echo "$1 $((SECONDS - $2))" >>"$out/timings.txt"; }

# ---------------------------------------------------------------- 1. matrix
if [[ -n ${want_step[matrix]:-} ]] && ((${#hosts[@]} == 1)); then
  log "1/5 matrix: skipped: one host (${hosts[0]}), no host pairs to measure; the sweep runs intra-node ($ppn ranks on ${hosts[0]})"
elif [[ -n ${want_step[matrix]:-} ]]; then
  log "1/5 matrix: ${#hosts[@]} hosts (${hosts[*]})"
  t0=$SECONDS
  launch 1 "${hosts[@]}" -- "$linkmatrix" "${matrix_transport[@]}" --size "$matrix_size" \
    --iterations "$matrix_iterations" \
    --bandwidth-threshold "$threshold" --csv "$out/matrix/links.csv" \
    --hosts-csv "$out/matrix/hosts.csv" --force >"$out/matrix/summary.txt" 2>"$out/logs/matrix.log" ||
    fail "the link matrix failed; see $out/logs/matrix.log"
  cat "$out/matrix/summary.txt" >&2
  "$python" "$report_py" matrix --links "$out/matrix/links.csv" --out "$out/matrix" >/dev/null ||
    fail "the matrix heatmaps failed"
  step_time matrix "$t0"
fi

# Hosts for the sweep: all, or without the slow ones.
if ((measuring)); then
  sweep_hosts=("${hosts[@]}")
  if ((exclude_slow)); then
    [[ -f $out/matrix/hosts.csv ]] || die "--exclude-slow needs the matrix step's $out/matrix/hosts.csv"
    mapfile -t slow < <("$python" "$report_py" slow-hosts --hosts-csv "$out/matrix/hosts.csv")
    if ((${#slow[@]} > 0)); then
      sweep_hosts=()
      for h in "${hosts[@]}"; do
        printf '%s\n' "${slow[@]}" | grep -qxF "$h" || sweep_hosts+=("$h")
      done
      log "excluding slow hosts: ${slow[*]}; sweeping on ${sweep_hosts[*]}"
      ((${#sweep_hosts[@]} >= 2)) || fail "fewer than 2 hosts are left without the slow ones"
    fi
  fi
  echo "sweep_hosts=${sweep_hosts[*]}" >>"$run_env"
  max_ranks=$((${#sweep_hosts[@]} * ppn))
  if [[ -z $ranks_list ]]; then
    rank_items=()
    for ((r = 2; r <= max_ranks; r *= 2)); do rank_items+=("$r"); done
    ((rank_items[-1] == max_ranks)) || rank_items+=("$max_ranks")
  fi
  check_ranks "${#sweep_hosts[@]}"
  echo "ranks=${rank_items[*]}" >>"$run_env"
fi

# ---------------------------------------------------------------- 2. sweep
common_flags() { # common_flags TRANSPORT
  local t=$1
  local flags=(--transport "$t" --benchmark_min_time="$min_time" --benchmark_repetitions="$repetitions"
    --benchmark_color=false --quiet)
  [[ -n $min_samples ]] && flags+=(--min-samples "$min_samples")
  [[ $t == ofi && -n $ofi_provider ]] && flags+=(--ofi-provider "$ofi_provider")
  printf '%s\n' "${flags[@]}"
}
if [[ -n ${want_step[sweep]:-} ]]; then
  t0=$SECONDS
  # The reduction kernel (gamma) and memcpy on one rank of the first host: no
  # network, so nothing waits for other ranks between samples.
  log "2/5 sweep: local reduce and memcpy kernels on ${sweep_hosts[0]}"
  rm -f "$out/sweep/local.csv"
  mapfile -t flags < <(common_flags mpi)
  launch 1 "${sweep_hosts[0]}" -- "$collbench" --families local --sizes "$local_sizes" "${flags[@]}" \
    --csv "$out/sweep/local.csv" >"$out/logs/local.log" 2>&1 ||
    fail "collbench local failed; see $out/logs/local.log"
  for t in "${transport_items[@]}"; do
    mapfile -t flags < <(common_flags "$t")
    # Ping-pong (rank 0 with every other rank: intra-host with --ppn > 1, and
    # inter-host) on the first 2 hosts.
    log "2/5 sweep: p2p ping-pong, transport $t, hosts ${sweep_hosts[*]:0:2}"
    csv=$out/sweep/p2p_$t.csv
    rm -f "$csv"
    launch "$ppn" "${sweep_hosts[@]:0:2}" -- "$collbench" --families p2p --sizes "$p2p_sizes" \
      "${flags[@]}" --csv "$csv" >"$out/logs/p2p_$t.log" 2>&1 ||
      fail "collbench p2p failed; see $out/logs/p2p_$t.log"
    for p in "${rank_items[@]}"; do
      nodes=$((p / ppn))
      log "2/5 sweep: allreduce p=$p ($nodes hosts), transport $t, algorithms $algorithms"
      csv=$out/sweep/allreduce_${t}_p$p.csv
      rm -f "$csv"
      check_flag=()
      ((check)) && check_flag=(--check)
      launch "$ppn" "${sweep_hosts[@]:0:nodes}" -- "$collbench" --families allreduce \
        --algorithms "$algorithms" --sizes "$sizes" "${flags[@]}" "${check_flag[@]}" --csv "$csv" \
        >"$out/logs/allreduce_${t}_p$p.log" 2>&1 ||
        fail "collbench allreduce p=$p failed; see $out/logs/allreduce_${t}_p$p.log"
      # The other collectives in one job (one start-up), their rows in the
      # collbench order: collective by collective, size by size.
      if [[ -n $collective_families ]]; then
        log "2/5 sweep: $collective_families p=$p ($nodes hosts), transport $t"
        csv=$out/sweep/collectives_${t}_p$p.csv
        rm -f "$csv"
        launch "$ppn" "${sweep_hosts[@]:0:nodes}" -- "$collbench" --families "$collective_families" \
          --algorithms "$algorithms" --sizes "$collective_sizes" "${flags[@]}" "${check_flag[@]}" \
          --csv "$csv" >"$out/logs/collectives_${t}_p$p.log" 2>&1 ||
          fail "collbench $collective_families p=$p failed; see $out/logs/collectives_${t}_p$p.log"
      fi
      # Every rank sending to its right neighbour while it receives from its
      # left, at the ping-pong's sizes: the beta an allreduce step gets with
      # all p ranks on the network at once (collbench-fit predicts bottom-up
      # at p from it; shared NICs and switches show here, not in a ping-pong).
      log "2/5 sweep: sendrecv p=$p ($nodes hosts), transport $t"
      csv=$out/sweep/sendrecv_${t}_p$p.csv
      rm -f "$csv"
      launch "$ppn" "${sweep_hosts[@]:0:nodes}" -- "$collbench" --families sendrecv \
        --sizes "$p2p_sizes" "${flags[@]}" --csv "$csv" >"$out/logs/sendrecv_${t}_p$p.log" 2>&1 ||
        fail "collbench sendrecv p=$p failed; see $out/logs/sendrecv_${t}_p$p.log"
    done
  done
  step_time sweep "$t0"
fi

# ---------------------------------------------------------------- 3. fit and predict
# Run from inside OUT with relative paths, so that the files name each other
# the same wherever the folder is moved.
if [[ -n ${want_step[fit]:-} ]]; then
  t0=$SECONDS
  mapfile -t csvs < <(cd "$out" && find sweep -name '*.csv' | sort)
  ((${#csvs[@]} > 0)) || fail "no sweep CSVs in $out/sweep; run the sweep step first"
  # The link matrix prices the network level of the two-level predictions
  # (several ranks per host); collbench-fit reads its links CSV too.
  matrix_csv=()
  [[ -f $out/matrix/links.csv ]] && matrix_csv=(matrix/links.csv)
  log "3/5 fit: collbench-fit on ${#csvs[@]} CSVs${matrix_csv:+ and the link matrix}"
  (cd "$out" && "$fit" "${csvs[@]}" "${matrix_csv[@]}" --out-dir fit --plot-dir plots --python "$python" \
    --plot-script "$plot_py" >fit/report.txt 2>logs/fit.log) ||
    fail "collbench-fit failed: $(cat "$out/logs/fit.log")"
  (cd "$out" && "$python" "$plot_py" sweep "${csvs[@]}" --out plots >logs/plot_sweep.log) ||
    fail "scripts/plot.py sweep failed"
  transport_flag=()
  ((${#transport_items[@]} > 1)) && transport_flag=(--transport "${transport_items[0]}")
  for spec in "${predict_items[@]}"; do
    IFS=: read -r model batch seconds <<<"$spec"
    log "3/5 predict: $model, batch $batch, $seconds s compute per iteration on one node"
    mkdir -p "$out/predict/$model"
    (cd "$out" && "$predict_tool" --network-from fit/models.csv "${transport_flag[@]}" \
      --model "$model" --batch "$batch" --compute-seconds "$seconds" --max-nodes "$max_nodes" \
      --out-dir "predict/$model" --plot --python "$python" --plot-script "$plot_py" \
      >"predict/$model/report.txt" 2>"logs/predict_$model.log") ||
      fail "collbench-predict $model failed: $(cat "$out/logs/predict_$model.log")"
  done
  step_time fit "$t0"
fi

# ---------------------------------------------------------------- 4. simulated scaling
# N nodes like these: one switch (a star), each link half the fitted α (a
# route crosses two), bandwidth 1/β, reductions at the fitted γ (collbench
# --calibration does the conversion and writes it in the CSV). From inside
# OUT, so that the CSV names its calibration fit/models.csv wherever OUT moves.
if [[ -n ${want_step[sim]:-} ]]; then
  t0=$SECONDS
  [[ -f $out/$sim_calibration ]] || fail "$out/$sim_calibration is missing: run the fit step first"
  sim_ranks=()
  for ((r = 2; r < sim_nodes; r *= 2)); do sim_ranks+=("$r"); done
  sim_ranks+=("$sim_nodes")
  mkdir -p "$out/sim"
  partial=$out/sim/.allreduce.csv.partial
  rm -f "$partial"
  for p in "${sim_ranks[@]}"; do
    # Sizes whose p x n stays within 2 GiB: the algorithms' workspaces (about
    # n per rank) are allocated in size-only mode too.
    fitting=$(awk -v p="$p" '$1 * p <= 2147483648 { printf "%s%sB", sep, $1; sep = "," }' <<<"$sim_bytes")
    if [[ -z $fitting ]]; then
      log "4/5 sim: p=$p skipped: every --sim-sizes size x $p is above 2 GiB"
      continue
    fi
    log "4/5 sim: allreduce on a simulated star of $p nodes, sizes $fitting, algorithms $algorithms"
    append=()
    [[ -f $partial ]] && append=(--append)
    (cd "$out" && "$collbench" --transport sim --no-payload --platform star --ranks "$p" \
      --calibration "$sim_calibration" --families allreduce --algorithms "$algorithms" \
      --sizes "$fitting" --quiet --csv "${partial#"$out"/}" "${append[@]}" \
      >"logs/sim_p$p.log" 2>&1) || {
      rm -f "$partial"
      fail "the simulation at p=$p failed; see $out/logs/sim_p$p.log"
    }
  done
  [[ -f $partial ]] || fail "the sim step simulated nothing: every --sim-sizes size x 2 is above 2 GiB"
  # The best algorithm per size and p: collbench-fit's selection, as in
  # sim_sweep.sh's selection study (a simulated time has no noise: tolerance 0).
  rm -rf "$out/sim/.fit.partial"
  "$fit" --brief --tie-tolerance 0 --out-dir "$out/sim/.fit.partial" "$partial" >"$out/logs/sim_fit.log" 2>&1 || {
    rm -rf "$out/sim/.fit.partial" "$partial"
    fail "collbench-fit on the simulated allreduce failed; see $out/logs/sim_fit.log"
  }
  mv -f "$out/sim/.fit.partial/selections.csv" "$out/sim/selections.csv"
  rm -rf "$out/sim/.fit.partial"
  mv -f "$partial" "$out/sim/allreduce.csv"
  echo "sim_nodes=$sim_nodes" >"$out/sim/run.env"
  echo "sim_sizes=$sim_sizes" >>"$out/sim/run.env"
  # Your model on these nodes: scale.sh, weak scaling (the compute per rank
  # the same at every p, so what grows is the exchange), strong scaling with
  # a global batch. Its files of an earlier run's workloads go first: the
  # report shows every scale_*.csv.
  rm -f "$out"/sim/scale_*.csv "$out"/sim/scale_*.png
  scale_ranks=$(IFS=,; echo "${sim_ranks[*]}")
  scale_modes=(--modes weak)
  [[ -z $sim_global_batch ]] || scale_modes=(--modes weak,strong --global-batch "$sim_global_batch")
  for w in "${sim_workload_items[@]}"; do
    log "4/5 sim: $w, one training iteration on a simulated star of p = 1, ${scale_ranks//,/, } nodes"
    # scale.sh's line per p, with the step's prefix.
    (cd "$out" && "$script_dir/scale.sh" "$w" --build "$build" --calibration "$sim_calibration" \
      --ranks "$scale_ranks" "${scale_modes[@]}" --communication-alone "${compute_flag[@]}" \
      --python "$python" --out-dir sim 2>"logs/scale_${w//:/_}.log" |
      sed -n 's/^scale.sh: \(\(weak\|strong\) p=\)/characterize.sh: 4\/5 sim: '"$w"' \1/p' >&2) ||
      fail "scale.sh $w failed; see $out/logs/scale_${w//:/_}.log"
  done
  step_time sim "$t0"
fi

# ---------------------------------------------------------------- 5. report
if [[ -n ${want_step[report]:-} ]]; then
  log "5/5 report"
  "$python" "$report_py" report --out "$out" >/dev/null || fail "the report failed"
  log "report: $out/report.md ($((SECONDS - start_seconds)) s)"
fi
