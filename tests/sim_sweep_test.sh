#!/usr/bin/env bash
# scripts/sim_sweep.sh --quick: every study at p <= 8, then the shape of what
# it wrote:
#   1. scale.csv has one row per (platform, p, collective, algorithm, size):
#      star and the fat-tree at p = 2, 4, 8, the 3-D torus at 4, 8; the four
#      collectives; every hand-written algorithm of each (collbench
#      --list-algorithms --csv; the hierarchical ones run as one rank per
#      node), at both quick sizes;
#   2. tree_ring.csv has ring and double_binary_tree at each size,
#      tree_segments.csv the tree at 1 MiB with 64 and 128 KiB segments,
#      swing.csv the four Swing forms and their three rivals on the 2x2 torus;
#   3. every simulated row took its links from the default calibration,
#      named by its path in the repository, and has its α on every platform;
#   4. selections.csv, scale.png and crossovers.png exist, and the crossovers
#      the script prints name a winner;
#   5. bad arguments exit 2 with one line and leave no file;
#   6. --studies selection alone reselects from the folder's scale.csv: the
#      same selections.csv as the run with scale.
# Usage: sim_sweep_test.sh REPOSITORY BUILD
set -euo pipefail
repository=${1:?usage: sim_sweep_test.sh REPOSITORY BUILD}
build=${2:?usage: sim_sweep_test.sh REPOSITORY BUILD}
work=$(mktemp -d "${TMPDIR:-/tmp}/sim_sweep.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "sim_sweep_test: $*" >&2; exit 1; }
sweep="$repository/scripts/sim_sweep.sh"

for bad in "--max-ranks 3" "--max-ranks-quadratic 0" "--max-ranks-all-at-once 6" "--studies scale,nope" "--studies selection" \
  "--max-total-bytes 1e9" "--tree-segments 64KiB" "--calibration $work/none.csv" "--frobnicate"; do
  # shellcheck disable=SC2086
  if "$sweep" --out "$work/bad" --build "$build" --quick $bad 2>"$work/err" >/dev/null; then
    fail "accepted $bad"
  else
    status=$?
  fi
  [[ $status == 2 ]] || fail "$bad: exit $status, expected 2"
  [[ $(wc -l <"$work/err") == 1 ]] || fail "$bad: not one line: $(cat "$work/err")"
  [[ ! -e $work/bad || -z $(ls -A "$work/bad") ]] || fail "$bad: left files in --out"
done
"$sweep" --out "$work/bad" 2>"$work/err" --build "$work/nowhere" && fail "accepted a build without collbench"
[[ $(wc -l <"$work/err") == 1 ]] || fail "--build: not one line"

"$sweep" --out "$work/out" --build "$build" --quick >"$work/stdout" 2>"$work/stderr" ||
  { cat "$work/stderr" >&2; fail "--quick failed"; }
for file in scale.csv tree_ring.csv tree_segments.csv swing.csv selections.csv scale.png \
  crossovers.png; do
  [[ -s $work/out/$file ]] || fail "no $file"
done
for file in "$work"/out/* "$work"/out/.[!.]*; do
  [[ -e $file ]] || continue
  case ${file##*/} in
    scale.csv | tree_ring.csv | tree_segments.csv | swing.csv | selections.csv | scale.png | \
      crossovers.png) ;;
    *) fail "unexpected file ${file##*/} in --out" ;;
  esac
done
grep -q "^study scale: [0-9]* s wall" "$work/stderr" || fail "no wall time of study scale"
cp "$work/out/selections.csv" "$work/selections_with_scale.csv"
rm "$work/out/selections.csv"
"$sweep" --out "$work/out" --build "$build" --studies selection >/dev/null 2>"$work/err" ||
  { cat "$work/err" >&2; fail "--studies selection alone failed"; }
cmp -s "$work/out/selections.csv" "$work/selections_with_scale.csv" ||
  fail "--studies selection alone chose otherwise than the run with scale"
grep -q "^- star, allreduce, 4 KiB: " "$work/stdout" || fail "no crossover line: $(head "$work/stdout")"

"$build/benchmarks/harness/collbench" --list-algorithms --csv >"$work/listing.csv"
PYTHONPATH="$repository/scripts" /usr/bin/python3 - "$work" <<'PYTHON'
import collections
import sys
import collbench_csv

work = sys.argv[1]
listing = collbench_csv.read_rows(f"{work}/listing.csv", ("collective", "algorithm",
                                  "implementation"), "the sim_sweep test", rules={})
collectives = ("allreduce", "reduce_scatter", "allgather", "alltoall")
expected = {c: {r["algorithm"] for r in listing if r["collective"] == c
                and r["implementation"] == "hand-written"} for c in collectives}
columns = ("collective", "algorithm", "ranks", "bytes", "sim_platform", "sim_payload", "median_us",
           "sim_calibration", "sim_alpha_us")
scale = collbench_csv.read_rows(f"{work}/out/scale.csv", columns, "the sim_sweep test")
cells = collections.Counter()
for row in scale:
    kind = row["sim_platform"].split(":")[0]
    if row["sim_payload"] != "size-only" or float(row["median_us"]) <= 0:
        sys.exit(f"scale.csv: {row}")
    cells[(kind, int(row["ranks"]), row["collective"], row["algorithm"], int(row["bytes"]))] += 1
shape = {("star", p) for p in (2, 4, 8)} | {("fat-tree", p) for p in (2, 4, 8)} | \
    {("torus", p) for p in (4, 8)}
want = collections.Counter({(k, p, c, a, n): 1 for k, p in shape for c in collectives
                            for a in expected[c] for n in (4096, 65536)})
if cells != want:
    sys.exit(f"scale.csv: missing {sorted(set(want) - set(cells))[:5]}, "
             f"extra or repeated {sorted((+(cells - want)).keys())[:5]}")
tree_ring = collbench_csv.read_rows(f"{work}/out/tree_ring.csv", columns, "the sim_sweep test")
got = sorted((r["algorithm"], int(r["ranks"]), int(r["bytes"])) for r in tree_ring)
if got != sorted((a, 4, n) for a in ("ring", "double_binary_tree") for n in (1024, 1048576)):
    sys.exit(f"tree_ring.csv: {got}")
segments = collbench_csv.read_rows(f"{work}/out/tree_segments.csv", columns + ("segment_bytes",),
                                   "the sim_sweep test")
got = sorted((r["algorithm"], int(r["segment_bytes"]), int(r["bytes"])) for r in segments)
if got != [("double_binary_tree", s, 1048576) for s in (65536, 131072)]:
    sys.exit(f"tree_segments.csv: {got}")
swing = collbench_csv.read_rows(f"{work}/out/swing.csv", columns, "the sim_sweep test")
links = {(r["sim_calibration"], r["sim_alpha_us"]) for r in scale + tree_ring + segments + swing}
if len(links) != 1 or next(iter(links))[0] != "results/netsim/uniform/fit/models.csv":
    sys.exit(f"calibrations and α of the rows: {sorted(links)}")
got = sorted((r["algorithm"], r["sim_platform"], int(r["bytes"])) for r in swing)
if got != sorted((a, "torus:2x2", 32768) for a in ("swing_latency", "swing_bandwidth",
                                                    "swing_latency_torus", "swing_bandwidth_torus",
                                                    "ring", "recursive_doubling", "rabenseifner")):
    sys.exit(f"swing.csv: {got}")
PYTHON
