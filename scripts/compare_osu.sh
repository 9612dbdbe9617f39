#!/usr/bin/env bash
# Agreement with a peer: collbench's `mpi` rows (the MPI library's own
# collective) against OSU Micro-Benchmarks' blocking collective tests
# (osu_allreduce, osu_allgather, osu_bcast, osu_reduce, osu_alltoall), which
# time the same calls.
#
# Usage: scripts/compare_osu.sh [--help] [--build DIR] [--out DIR] [--reps R]
#                               [--min-time S] [--warmup W] [--collectives LIST]
#                               OSU_SOURCE_DIR [NP]
#
# OSU_SOURCE_DIR is an OSU Micro-Benchmarks source tree (autotools, with
# configure), unconfigured, in either layout: 5.x (mpi/collective/osu_*.c)
# or 7.x (c/mpi/collective/blocking/osu_*.c). It is built out of tree
# (configure CC=mpicc of the library, then only the tests compared) in --build DIR, never
# inside the source tree nor this repository. NP ranks (default 2) on this
# machine, one core each while NP <= cores. Then, R rounds of, for every
# collective and every SIZE of 8 B, 16 B, .. 16 MiB, one job each:
#   1. collbench --families COLLECTIVE --algorithms mpi --sizes N --check
#      --warmup W --benchmark_min_time=S (Google Benchmark chooses the
#      iteration count: the first that lasts S seconds)
#   2. osu_COLLECTIVE -m SIZE:SIZE -i ITERATIONS -x W -f, with the iteration
#      count collbench used, right after it (7.x: also -T mpi_float, the
#      f32 elements collbench reduces; 5.x reduces floats anyway)
# both under the same mpirun flags, and prints a Markdown table per
# collective and size (the median over the R rounds of each). SIZE is
# OSU's -m; collbench's N is the whole vector (nccl-tests' convention,
# collbench/collectives/collective.h): N = SIZE, but NP x SIZE for
# allgather (SIZE is each rank's block) and alltoall (SIZE goes to each
# rank).
#
# What each times (results/README.md, osu_avg_us): OSU times each rank's
# calls, a barrier after each outside the timing, and reports each rank's
# mean averaged over ranks (avg) and the slowest rank's mean (max).
# collbench's osu_avg_us is that convention, measured in its own timed loop;
# it is judged against OSU's avg: within 10%, or 0.05 us where that is more
# (OSU prints two decimals). collbench's mean_us (the slowest rank per call)
# is shown against OSU's max, and nccl_avg_us beside them.
#
# Options:
#   --build DIR     OSU build folder (default: a temporary folder, removed at
#                   the end); one made before for the same tree is reused
#   --out DIR       also keep collbench.csv, osu.txt (osu_allreduce's output)
#                   and table.md in DIR (created; refused when it holds any)
#   --reps R        rounds (default 3)
#   --min-time S    collbench's --benchmark_min_time per size, seconds (default 0.2)
#   --warmup W      untimed calls before timing, both tools (default 50)
#   --collectives LIST  comma-separated OSU names: allreduce, allgather, bcast,
#                   reduce, alltoall (default allreduce)
#   Every option once: a second value is refused, not silently preferred.
# Environment: BUILD_DIR  collbench's build folder (default: the
# repository's build/; relative paths are relative to the current folder).
# Relative DIRs are relative to the current folder.
# Exit status: 0 every size within 10%, 1 some size is not, 2 bad arguments,
# 3 OSU did not build or a run failed.
set -euo pipefail
caller=$PWD
repository=$(cd "$(dirname "$0")/.." && pwd)
self=$repository/scripts/compare_osu.sh

usage() { sed -n '2,/^set -euo/p' "$self" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() {
  echo "compare_osu.sh: $*" >&2
  exit 2
}
fail() {
  echo "compare_osu.sh: $*" >&2
  exit 3
}
bad() { die "$@"; } # lib_options.sh's name for it
# shellcheck source=SCRIPTDIR/lib_options.sh
source "$repository/scripts/lib_options.sh"
from_caller() { if [[ $1 == /* ]]; then printf '%s' "$1"; else printf '%s/%s' "$caller" "$1"; fi; }
# inside_repository PATH: whether PATH (made absolute, maybe not yet there)
# lies in this repository.
inside_repository() {
  local path=$1
  while [[ ! -e $path && $path != / ]]; do path=$(dirname "$path"); done
  path=$(cd "$path" 2>/dev/null && pwd -P || echo "$path")
  [[ $path == "$(cd "$repository" && pwd -P)" || $path == "$(cd "$repository" && pwd -P)"/* ]]
}

build_dir="" out="" reps=3 min_time=0.2 warmup=50 collectives=allreduce positional=()
# shellcheck disable=SC2034  # read by parse_options
declare -A option_variables=([--build]=build_dir [--out]=out [--reps]=reps [--min-time]=min_time
  [--warmup]=warmup [--collectives]=collectives)
parse_options option_variables "$@"
for argument in "${arguments[@]}"; do
  case $argument in
    -*) die "unknown option '$argument' (see scripts/compare_osu.sh --help)" ;;
    *) positional+=("$argument") ;;
  esac
done
[[ -z $build_dir ]] || build_dir=$(from_caller "$build_dir")
[[ -z $out ]] || out=$(from_caller "$out")

((${#positional[@]} >= 1)) || die "no OSU_SOURCE_DIR given; usage: compare_osu.sh [options] OSU_SOURCE_DIR [NP]"
((${#positional[@]} <= 2)) || die "too many arguments: '${positional[2]}'; usage: compare_osu.sh [options] OSU_SOURCE_DIR [NP]"
source_dir=$(from_caller "${positional[0]}")
np=${positional[1]:-2}
[[ -d $source_dir ]] || die "OSU_SOURCE_DIR $source_dir is not a folder"
# The folder of the blocking collectives' tests: 7.x's, else 5.x's.
layout=""
for candidate in c/mpi/collective/blocking mpi/collective; do
  [[ -f $source_dir/$candidate/osu_allreduce.c ]] && { layout=$candidate; break; }
done
[[ -x $source_dir/configure && -n $layout ]] ||
  die "$source_dir is not an OSU Micro-Benchmarks source tree (no configure, or no osu_allreduce.c in mpi/collective (5.x) or c/mpi/collective/blocking (7.x))"
IFS=, read -r -a osu_names <<<"$collectives"
((${#osu_names[@]} > 0)) || die "--collectives is empty; give some of allreduce, allgather, bcast, reduce, alltoall"
for name in "${osu_names[@]}"; do
  case $name in
    allreduce | allgather | bcast | reduce | alltoall) ;;
    *) die "--collectives: unknown collective '$name'; accepted: allreduce, allgather, bcast, reduce, alltoall" ;;
  esac
  [[ -f $source_dir/$layout/osu_$name.c ]] || die "$source_dir/$layout has no osu_$name.c"
done
[[ ! -e $source_dir/config.status ]] ||
  die "$source_dir is configured in place (config.status); an out-of-tree build needs a clean tree: run 'make distclean' there"
if ! [[ $np =~ ^[1-9][0-9]*$ ]] || ((np < 2)); then
  die "NP '$np' is not a number of ranks >= 2 (osu_allreduce needs two)"
fi
[[ $reps =~ ^[1-9][0-9]*$ ]] || die "--reps '$reps' is not a positive number"
[[ $warmup =~ ^[1-9][0-9]*$ ]] || die "--warmup '$warmup' is not a positive number of calls"
if ! [[ $min_time =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] || [[ $min_time =~ ^[0.]+$ ]]; then
  die "--min-time '$min_time' is not a number of seconds > 0, e.g. 0.2"
fi
if [[ -n $build_dir ]]; then
  [[ ! -e $build_dir || -d $build_dir ]] || die "--build $build_dir is not a folder"
  ! inside_repository "$build_dir" || die "--build $build_dir is inside this repository; build OSU outside it"
fi
if [[ -n $out ]]; then
  [[ ! -e $out || -d $out ]] || die "--out $out is not a folder"
  for file in collbench.csv osu.txt table.md; do
    [[ ! -e $out/$file ]] || die "--out $out already holds $file; remove it or choose another folder"
  done
fi
collbench_build=$repository/build
[[ -z ${BUILD_DIR:-} ]] || collbench_build=$(from_caller "$BUILD_DIR")
collbench=$collbench_build/benchmarks/harness/collbench
[[ -x $collbench ]] ||
  die "no collbench in $collbench_build; build it first (scripts/run.sh, or cmake --build $collbench_build --target collbench_exe)"

# OSU is built with the compiler wrapper of the library collbench links
# (Debian's mpicc.openmpi or mpicc.mpich; elsewhere mpicc), and both run
# under that library's launcher (scripts/mpi_launcher.sh).
# shellcheck source=scripts/mpi_launcher.sh
source "$repository/scripts/mpi_launcher.sh"
mpi_library=$(mpi_library_of "$collbench_build")
mpi_run=$(mpi_launcher_for "$mpi_library") || die "cannot launch $mpi_library jobs (see above)"
mpi_cc=mpicc.$mpi_library mpi_cxx=mpicxx.$mpi_library
command -v "$mpi_cc" >/dev/null || mpi_cc=mpicc mpi_cxx=mpicxx
command -v "$mpi_cc" >/dev/null || die "neither mpicc.$mpi_library nor mpicc found; OSU is built with the MPI's compiler wrapper"

# Everything below writes: the scratch folder holds the runs until the end.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/compare_osu.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
osu_build=${build_dir:-$scratch/osu-build}
mkdir -p "$osu_build"
osu_tests=$osu_build/$layout
missing=()
for name in "${osu_names[@]}"; do [[ -x $osu_tests/osu_$name ]] || missing+=("osu_$name"); done
if ((${#missing[@]} > 0)); then
  echo "compare_osu.sh: building ${missing[*]} in $osu_build" >&2
  if [[ ! -e $osu_build/config.status ]]; then
    (cd "$osu_build" && "$source_dir/configure" CC="$mpi_cc" CXX="$mpi_cxx" >configure.log 2>&1) ||
      { tail -20 "$osu_build/configure.log" >&2; fail "OSU's configure failed; log in $osu_build/configure.log"; }
  fi
  # 7.x's tests link the objects of its c/util folder.
  if [[ -f $osu_build/c/util/Makefile ]]; then
    make -C "$osu_build/c/util" >"$osu_build/make_util.log" 2>&1 ||
      { tail -20 "$osu_build/make_util.log" >&2; fail "building OSU's c/util failed; log in $osu_build/make_util.log"; }
  fi
  make -C "$osu_tests" "${missing[@]}" >"$osu_build/make.log" 2>&1 ||
    { tail -20 "$osu_build/make.log" >&2; fail "building ${missing[*]} failed; log in $osu_build/make.log"; }
fi
# 7.x takes the element type (-T); its default is bytes.
osu_type=()
[[ $layout == c/* ]] && osu_type=(-T mpi_float)

# The same launcher for both: the one of the library collbench's build links
# (scripts/mpi_launcher.sh), never the `mpirun` alternative. A core per rank
# while there are enough (busy-polling ranks that share a core for a moment
# double a microsecond time); Open MPI over shared memory as run.sh's main
# sweep.
bind=core
((np <= $(nproc))) || bind=none
read -ra launch_flags <<<"$(mpi_launch_flags "$mpi_library" "$np" "$bind")"
launcher=("$mpi_run" "${launch_flags[@]}")
if [[ $mpi_library == openmpi ]]; then
  launcher+=(--mca pml ob1 --mca btl "self,vader")
  open_mpi_environment
fi
((np <= $(nproc))) || echo "compare_osu.sh: note: $np ranks on $(nproc) cores, oversubscribed" >&2

csv=$scratch/collbench.csv osu=$scratch/osu.txt
table=$repository/scripts/compare_osu_table.py
stamp=$(date -u +%Y%m%dT%H%M%SZ)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
sizes=()
for ((size = 8; size <= 16 * 1024 * 1024; size *= 2)); do sizes+=("$size"); done
echo "# ${launcher[*]} osu_{${collectives}} (OSU source: $source_dir)" >"$osu"
# Size by size, collbench then OSU right after it with collbench's iteration
# count, so that the two of a pair run seconds apart on a machine whose load
# changes; the rounds repeat the whole list.
for ((round = 1; round <= reps; round++)); do
  run_id=osu-$stamp-r$round
  echo "compare_osu.sh: round $round of $reps: collbench, then OSU, per collective and size" >&2
  for name in "${osu_names[@]}"; do
    family=$name blocks=1
    case $name in
      bcast) family=broadcast ;;
      allgather | alltoall) blocks=$np ;;
    esac
    for size in "${sizes[@]}"; do
      bytes=$((size * blocks))
      # mpirun reads standard input: </dev/null keeps it from taking the script's.
      "${launcher[@]}" "$collbench" --families "$family" --algorithms mpi --sizes "$bytes" --check \
        --warmup "$warmup" --benchmark_min_time="$min_time" --run-id "$run_id" --csv "$csv" \
        --append --quiet </dev/null >"$scratch/collbench.log" 2>&1 ||
        { tail -20 "$scratch/collbench.log" >&2; fail "collbench $family failed at $bytes B in round $round"; }
      iterations=""
      read -r _ iterations < <(/usr/bin/python3 "$table" iterations "$csv" "$run_id" "$family" |
        grep "^$bytes ")
      [[ -n $iterations ]] || fail "no collbench row of $family at $bytes B in round $round ($csv)"
      echo "# round $round: osu_$name -m $size:$size -i $iterations -x $warmup -f ${osu_type[*]}" >>"$osu"
      "${launcher[@]}" "$osu_tests/osu_$name" -m "$size:$size" -i "$iterations" -x "$warmup" -f \
        "${osu_type[@]}" </dev/null >>"$osu" 2>"$scratch/osu.log" ||
        { tail -20 "$scratch/osu.log" >&2; fail "osu_$name failed at $size bytes in round $round"; }
    done
  done
done

status=0
/usr/bin/python3 "$table" table "$csv" "$osu" >"$scratch/table.md" || status=$?
((status <= 1)) || fail "the table could not be made from $csv and $osu"
{
  echo "collbench ($(git -C "$repository" describe --always --dirty 2>/dev/null || echo unknown)) vs" \
    "$(grep -m1 '^# OSU' "$osu" | sed 's/^# //; s/ [A-Z][A-Za-z -]*Test//'), $np ranks, $reps rounds," \
    "--warmup/-x $warmup, --benchmark_min_time=$min_time; load average (1, 5, 15 min)" \
    "$load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after"
  echo
  cat "$scratch/table.md"
} | tee "$scratch/table.with_header.md"
if [[ -n $out ]]; then
  mkdir -p "$out"
  cp "$csv" "$osu" "$out/"
  cp "$scratch/table.with_header.md" "$out/table.md"
  echo "compare_osu.sh: kept collbench.csv, osu.txt and table.md in $out" >&2
fi
exit "$status"
