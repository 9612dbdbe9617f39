#!/usr/bin/env bash
# sim_sweep.sh: collbench's own algorithms on simulated clusters of up to 4096
# ranks (collbench --transport sim, size-only), calibrated from a collbench-fit
# models.csv (default: the emulated cluster's, results/netsim/uniform/fit), and
# the studies of results/sim/README.md drawn from them.
#
# Usage: scripts/sim_sweep.sh --out DIR [options]
#   --out DIR              folder for the CSVs and PNGs (created); they replace
#                          the folder's earlier ones together at the end, or none does
#   --studies LIST         comma-separated, of: scale (busbw against p of every
#                          allreduce algorithm, reduce_scatter, allgather and alltoall
#                          on a star, a 2:1 tapered fat-tree and a 3-D torus),
#                          tree_ring (double binary tree against ring on the fat-tree:
#                          the size below which the tree wins, per p), swing (Swing
#                          against ring, recursive doubling and Rabenseifner on 2-D
#                          tori), selection (collbench-fit's best algorithm per
#                          collective, size and p, from scale's CSV: this run's, or
#                          without scale DIR/scale.csv) (default: all four)
#   --max-ranks N          largest p of the algorithms that send O(p log p) messages
#                          or fewer (default: 4096; a power of two >= 2)
#   --max-ranks-quadratic N
#                          largest p of those that send O(p^2) messages (ring, pairwise,
#                          hierarchical, and those of --max-ranks-all-at-once; default:
#                          1024): at about 150k simulated messages per CPU second at
#                          p = 1024 and 73k at 4096 (on jemalloc, results/sim/README.md
#                          "Speed of the simulation"), ring at p = 4096 alone takes
#                          8-15 CPU-minutes per case
#   --max-ranks-all-at-once N
#                          largest p of the O(p^2) ones that post their p - 1 messages
#                          at once (linear alltoall, the sharded parameter server;
#                          default: 64 or --max-ranks-quadratic if smaller; at most
#                          --max-ranks-quadratic): with p^2 transfers in flight at once
#                          they cost far more than the others at large p, about 13x per
#                          doubling of p: on the star and the 2:1 fat-tree about 40 CPU s a
#                          case at p = 512 and 9-10 CPU-minutes at 1024; on the 3-D torus
#                          more (at p = 128 the sharded server's one 64 KiB case took over
#                          2 CPU-minutes, unfinished; the other 44 cases there, 6.2 CPU s
#                          in all). results/sim/ runs them to 1024 by hand
#   --max-total-bytes B    largest p·n of a case, in bytes (default: 2147483648):
#                          a bound on the run's time, not its memory (size-only
#                          mode touches neither buffers nor workspaces)
#   --tree-segments LIST   comma-separated --segment sizes in bytes at which tree_ring
#                          also runs the double binary tree alone, from 256 KiB up and
#                          where ring runs, into tree_segments.csv (default:
#                          65536,131072; 'none': not run)
#   --calibration FILE     collbench-fit models.csv giving α, β, γ (default:
#                          results/netsim/uniform/fit/models.csv)
#   --build DIR            the build folder with collbench and collbench-fit (default: build)
#   --quick                a grid small enough for a test: p 2..8, two sizes or one, star and
#                          the smallest tori; the same files
#   -h, --help             this text
# Every option once: a second value is refused, not silently preferred.
#
# Writes DIR/scale.csv, tree_ring.csv, tree_segments.csv, swing.csv (collbench's CSV, results/README.md),
# selections.csv (collbench-fit's), and through scripts/sim_study.py the PNGs and,
# on stdout, the crossovers and ratios in numbers. Prints a progress line at
# least every 20 s and each study's wall time. Bad arguments: one line on stderr,
# exit 2. A failed simulation: exit 1, DIR untouched. The CSVs are moved into DIR
# before the figures are drawn, so that a failed figure keeps the simulations.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repository=$(dirname "$script_dir")

die() {
  echo "sim_sweep.sh: $*" >&2
  exit 2
}
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }
bad() { die "$@"; } # lib_options.sh's name for it
# shellcheck source=SCRIPTDIR/lib_options.sh
source "$script_dir/lib_options.sh"
power_of_two() { [[ $1 =~ ^[1-9][0-9]{0,8}$ ]] && (($1 >= 2 && ($1 & ($1 - 1)) == 0)); }

out=""
studies="scale,tree_ring,swing,selection"
max_ranks=4096
max_quadratic=1024
max_all_at_once=""
max_total=2147483648
tree_segments=65536,131072
calibration="$repository/results/netsim/uniform/fit/models.csv"
build="$repository/build"
quick=0
# shellcheck disable=SC2034  # read by parse_options
declare -A option_variables=([--out]=out [--studies]=studies [--max-ranks]=max_ranks
  [--max-ranks-quadratic]=max_quadratic [--max-ranks-all-at-once]=max_all_at_once
  [--max-total-bytes]=max_total [--tree-segments]=tree_segments [--calibration]=calibration
  [--build]=build)
parse_options option_variables "$@"
for argument in "${arguments[@]}"; do
  case $argument in
    --quick) quick=1 ;;
    *) die "unknown argument '$argument' (see --help)" ;;
  esac
done
[[ -n $out ]] || die "--out DIR is required (see --help)"
power_of_two "$max_ranks" || die "--max-ranks $max_ranks: give a power of two >= 2"
power_of_two "$max_quadratic" || die "--max-ranks-quadratic $max_quadratic: give a power of two >= 2"
[[ -n $max_all_at_once ]] || max_all_at_once=$((max_quadratic < 64 ? max_quadratic : 64))
power_of_two "$max_all_at_once" || die "--max-ranks-all-at-once $max_all_at_once: give a power of two >= 2"
((max_all_at_once <= max_quadratic)) || die "--max-ranks-all-at-once $max_all_at_once is above --max-ranks-quadratic $max_quadratic (all at once is the costlier kind of O(p^2))"
[[ $max_total =~ ^[1-9][0-9]{0,17}$ ]] || die "--max-total-bytes $max_total: give a positive whole number of bytes"
[[ $tree_segments == none || $tree_segments =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] ||
  die "--tree-segments $tree_segments: give comma-separated positive whole numbers of bytes, or none"
[[ -f $calibration && -r $calibration ]] || die "--calibration $calibration: no such readable file"
calibration=$(cd "$(dirname "$calibration")" && pwd)/$(basename "$calibration")
calibration=${calibration#"$repository"/}
build_folder=$(cd "$build" 2>/dev/null && pwd) || die "--build $build: no such folder"
build=$build_folder
collbench="$build/benchmarks/harness/collbench"
fit="$build/benchmarks/models/collbench-fit"
[[ -x $collbench && -x $fit ]] ||
  die "--build $build: no collbench and collbench-fit there (cmake -DCOLLBENCH_WITH_SIMGRID=ON, build both)"
# collbench judges each segment now, not when tree_ring reaches it after the scale study.
if [[ $tree_segments != none ]]; then
  for segment in ${tree_segments//,/ }; do
    error=$("$collbench" --families allreduce --segment "$segment" --benchmark_list_tests=true 2>&1 >/dev/null) ||
      die "--tree-segments $tree_segments: ${error%%$'\n'*}"
  done
fi
declare -A wanted=()
IFS=, read -ra study_list <<<"$studies"
for study in "${study_list[@]}"; do
  case $study in
    scale | tree_ring | swing | selection) wanted[$study]=1 ;;
    *) die "--studies: unknown study '$study' (scale, tree_ring, swing, selection)" ;;
  esac
done
# selection alone reselects from the folder's scale.csv (the fit takes seconds,
# the scale study hours).
[[ -z ${wanted[selection]:-} || -n ${wanted[scale]:-} || -f $out/scale.csv ]] ||
  die "--studies: selection needs scale, in this run or as $out/scale.csv"
mkdir -p "$out" 2>/dev/null && [[ -w $out ]] || die "--out $out: cannot create or write that folder"
if ((quick)); then
  max_ranks=$((max_ranks < 8 ? max_ranks : 8))
  max_quadratic=$((max_quadratic < 8 ? max_quadratic : 8))
  max_all_at_once=$((max_all_at_once < 8 ? max_all_at_once : 8))
fi

work=$(cd "$(mktemp -d "$out/.sim_sweep.XXXXXX")" && pwd)
child=""
cleanup() {
  [[ -n $child ]] && kill "$child" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The algorithms that send O(p log p) messages or fewer in all, named once:
# beyond --max-ranks-quadratic only these run (--algorithms takes one list for
# every collective; a collective runs those of its own).
readonly LOG_ALGORITHMS=tree,recursive_doubling,rabenseifner,ps_central,double_binary_tree,swing_latency,swing_bandwidth,swing_latency_torus,swing_bandwidth_torus,recursive_halving,bruck
# Those of O(p^2) messages that post p - 1 at once, bounded by --max-ranks-all-at-once.
readonly ALL_AT_ONCE=linear,ps_sharded
readonly SCALE_FAMILIES=allreduce,reduce_scatter,allgather,alltoall
# The comparisons of the studies tree_ring (the challenger first) and swing
# (its forms, and the rivals of each), given to sim_study.py as they ran.
readonly TREE_RING=double_binary_tree,ring
readonly SWING_FORMS=swing_latency,swing_bandwidth,swing_latency_torus,swing_bandwidth_torus
readonly SWING_RIVALS=ring,recursive_doubling,rabenseifner

# run LABEL CSV collbench-args...: one collbench run appended to CSV, with a
# progress line every 20 s while it runs.
run() {
  local label=$1 csv=$2
  shift 2
  local append=()
  [[ -f $csv ]] && append=(--append)
  local start=$SECONDS
  # From the repository, so that the CSVs name a calibration inside it by
  # its path there, as a clone has it.
  (cd "$repository" && exec "$collbench" --transport sim --no-payload --quiet --csv "$csv" \
    "${append[@]}" "$@" >"$work/log" 2>&1) &
  child=$!
  local next=$((start + 20))
  while kill -0 "$child" 2>/dev/null; do
    sleep 1
    if ((SECONDS >= next)); then
      echo "  ... $label: $((SECONDS - start)) s" >&2
      next=$((SECONDS + 20))
    fi
  done
  if ! wait "$child"; then
    child=""
    echo "sim_sweep.sh: $label failed:" >&2
    tail -5 "$work/log" >&2
    exit 1
  fi
  child=""
  echo "  $label: $((SECONDS - start)) s" >&2
}

# A value of the first row of a collbench CSV.
column() {
  /usr/bin/python3 -c 'import csv, sys; print(next(csv.DictReader(open(sys.argv[1])))[sys.argv[2]])' "$1" "$2"
}

# α, β, γ of the calibration, as collbench reads them (a star of 2 nodes).
# Every platform takes --calibration itself: collbench splits the end-to-end
# α over the links between its first two nodes, so that their ping-pong
# measures it; farther nodes cross more links.
run "calibration" "$work/calibration.csv" --ranks 2 --platform star --calibration "$calibration" \
  --families p2p --sizes 8B
alpha_us=$(column "$work/calibration.csv" sim_alpha_us)
beta_GBps=$(column "$work/calibration.csv" sim_beta_GBps)
gamma_GBps=$(column "$work/calibration.csv" sim_gamma_GBps)

# Platforms of p nodes. fat-tree: 2 levels, k = min(p, 32) nodes per leaf
# switch, k/2 spines each linked once to every leaf: 2:1 tapered. torus3d:
# the most cubic power-of-two box (SimGrid aborts on torus:2x1x1, so p >= 4).
platform() {
  local kind=$1 p=$2
  case $kind in
    star) echo star ;;
    fat-tree)
      local k=$((p < 32 ? p : 32))
      echo "fat-tree:2;$k,$((p / k));1,$((k / 2 > 1 ? k / 2 : 1));1,1" ;;
    torus3d)
      local d=(1 1 1) i=0 rest=$p
      while ((rest > 1)); do
        d[i]=$((d[i] * 2))
        rest=$((rest / 2))
        i=$(((i + 1) % 3))
      done
      echo "torus:${d[0]}x${d[1]}x${d[2]}" ;;
  esac
}
echo "calibration $calibration: α $alpha_us us end to end, β $beta_GBps GB/s, γ $gamma_GBps GB/s, o 0" >&2

# Sizes (bytes) of a case at p ranks: those with p·n <= --max-total-bytes.
sizes_at() {
  local p=$1 list=() n
  shift
  for n in "$@"; do ((p * n <= max_total)) && list+=("$n")
  done
  local IFS=,
  echo "${list[*]}"
}
# The scale study's algorithms at p ranks: all; beyond --max-ranks-all-at-once
# collbench's hand-written ones but ALL_AT_ONCE; beyond --max-ranks-quadratic
# LOG_ALGORITHMS.
algorithms_at() {
  if (($1 <= max_all_at_once)); then
    echo all
  elif (($1 <= max_quadratic)); then
    "$collbench" --list-algorithms --csv | /usr/bin/python3 -c '
import csv, sys
skip = sys.argv[1].split(",")
families = sys.argv[2].split(",")
names = {r["algorithm"] for r in csv.DictReader(sys.stdin)
         if r["implementation"] == "hand-written" and r["collective"] in families
         and r["algorithm"] not in skip}
print(",".join(sorted(names)))' "$ALL_AT_ONCE" "$SCALE_FAMILIES"
  else
    echo "$LOG_ALGORITHMS"
  fi
}
# The algorithms of LIST that run at p ranks: all, or beyond
# --max-ranks-quadratic those of LOG_ALGORITHMS.
bounded() {
  local candidates=$1 name names kept=()
  (($2 <= max_quadratic)) && { echo "$candidates"; return; }
  IFS=, read -ra names <<<"$candidates"
  for name in "${names[@]}"; do [[ ,$LOG_ALGORITHMS, == *,$name,* ]] && kept+=("$name"); done
  local IFS=,
  echo "${kept[*]}"
}
ranks_from() {
  local p=$1
  while ((p <= max_ranks)); do
    echo "$p"
    p=$((p * $2))
  done
}

study_time() { echo "study $1: $2 s wall" >&2; }

if [[ -n ${wanted[scale]:-} ]]; then
  start=$SECONDS
  sizes=(65536 1048576 16777216)
  ((quick)) && sizes=(4096 65536)
  # p outside, so that the platforms advance together.
  for p in $(ranks_from 2 2); do
    for kind in star fat-tree torus3d; do
      [[ $kind == torus3d && $p == 2 ]] && continue
      s=$(sizes_at "$p" "${sizes[@]}")
      [[ -n $s ]] || continue
      run "scale $kind p=$p" "$work/scale.csv" --ranks "$p" --platform "$(platform "$kind" "$p")" \
        --calibration "$calibration" --families "$SCALE_FAMILIES" \
        --algorithms "$(algorithms_at "$p")" --sizes "$s"
    done
  done
  study_time scale $((SECONDS - start))
fi

if [[ -n ${wanted[tree_ring]:-} ]]; then
  start=$SECONDS
  sizes=(1024 4096 16384 65536 262144 1048576 4194304 16777216 67108864)
  first=16
  ((quick)) && sizes=(1024 1048576) && first=4
  for p in $(ranks_from $first 4); do
    algorithms=$(bounded "$TREE_RING" "$p")
    s=$(sizes_at "$p" "${sizes[@]}")
    [[ -n $s ]] || continue
    run "tree_ring p=$p" "$work/tree_ring.csv" --ranks "$p" --platform "$(platform fat-tree "$p")" \
      --calibration "$calibration" --families allreduce --algorithms "$algorithms" --sizes "$s"
    # Smaller segments, where ring runs too: whether the tree pipelines to
    # ring's bandwidth.
    [[ $tree_segments != none ]] && ((p <= max_quadratic)) || continue
    large=$(sizes_at "$p" $(for n in "${sizes[@]}"; do ((n >= 262144)) && echo "$n"; done))
    [[ -n $large ]] || continue
    IFS=, read -ra segment_list <<<"$tree_segments"
    for segment in "${segment_list[@]}"; do
      run "tree_ring p=$p segment $segment" "$work/tree_segments.csv" --ranks "$p" \
        --platform "$(platform fat-tree "$p")" --calibration "$calibration" --families allreduce \
        --algorithms "${TREE_RING%%,*}" --segment "$segment" --sizes "$large"
    done
  done
  study_time tree_ring $((SECONDS - start))
fi

if [[ -n ${wanted[swing]:-} ]]; then
  start=$SECONDS
  sizes=(32768 131072 524288 2097152 8388608 33554432 67108864)
  sides=(8 16 32)
  ((quick)) && sizes=(32768) && sides=(2)
  for side in "${sides[@]}"; do
    p=$((side * side))
    ((p <= max_ranks)) || continue
    algorithms=$(bounded "$SWING_FORMS,$SWING_RIVALS" "$p")
    s=$(sizes_at "$p" "${sizes[@]}")
    [[ -n $s ]] || continue
    run "swing ${side}x$side" "$work/swing.csv" --ranks "$p" --platform "torus:${side}x$side" \
      --calibration "$calibration" --families allreduce --algorithms "$algorithms" --sizes "$s"
  done
  study_time swing $((SECONDS - start))
fi

# collbench-fit groups a selection by collective and p, not by platform: it
# selects from each platform's rows alone, and selections.csv is its
# selections.csv of every platform with the platform's kind as first column.
if [[ -n ${wanted[selection]:-} ]]; then
  start=$SECONDS
  mkdir "$work/fit"
  sweep_csv=$work/scale.csv
  [[ -n ${wanted[scale]:-} ]] || sweep_csv=$out/scale.csv
  /usr/bin/python3 - "$sweep_csv" "$work/fit" <<'PYTHON'
import csv, sys
with open(sys.argv[1], newline="") as source:
    reader = csv.DictReader(source)
    files, writers = {}, {}
    for row in reader:
        kind = row["sim_platform"].split(":")[0]
        if kind not in writers:
            files[kind] = open(f"{sys.argv[2]}/{kind}.csv", "w", newline="")
            writers[kind] = csv.DictWriter(files[kind], reader.fieldnames, lineterminator="\n")
            writers[kind].writeheader()
        writers[kind].writerow(row)
    for file in files.values():
        file.close()
PYTHON
  for sweep in "$work"/fit/*.csv; do
    kind=$(basename "$sweep" .csv)
    # A simulation does not drift between runs: no tie tolerance, the lowest time.
    "$fit" --brief --tie-tolerance 0 --out-dir "$work/fit/$kind" "$sweep" >"$work/fit.log" 2>&1 ||
      { echo "sim_sweep.sh: collbench-fit on the $kind rows failed:" >&2; tail -5 "$work/fit.log" >&2; exit 1; }
    if [[ ! -f $work/selections.csv ]]; then
      sed -n '1s/^/platform,/p' "$work/fit/$kind/selections.csv" >"$work/selections.csv"
    fi
    sed -n "2,\$s/^/$kind,/p" "$work/fit/$kind/selections.csv" >>"$work/selections.csv"
  done
  rm -rf "$work/fit"
  study_time selection $((SECONDS - start))
fi

rm -f "$work"/calibration.csv "$work"/log "$work"/fit.log
compgen -G "$work/*" >/dev/null || die "--studies $studies: no case within --max-ranks $max_ranks and --max-total-bytes $max_total"
# The CSVs together first: hours of simulation are kept even if a figure fails.
for file in "$work"/*; do mv -f "$file" "$out/"; done
/usr/bin/python3 "$script_dir/sim_study.py" "$out" --tree-ring "$TREE_RING" --swing "$SWING_FORMS" \
  --rivals "$SWING_RIVALS"
