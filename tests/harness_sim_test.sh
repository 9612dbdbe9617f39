#!/usr/bin/env bash
# collbench --transport sim: the harness on the simulated transport, in one
# process without MPI (MPI_Init made fatal by the preloaded library).
#   1. every allreduce algorithm of the table (but mpi) at p = 8 on a star,
#      --check: every row ok, one sample, the sim_* columns as given;
#   2. two runs give identical time columns (a simulation is deterministic),
#      and no nccl-tests batch runs after the one call (nccl_avg_us empty,
#      osu_avg_us there);
#   3. ring's time is its cost formula on the star's end-to-end α, β and γ
#      within 1%, and size-only mode (--no-payload) gives the same times;
#   4. ring's bytes sent per rank, as the harness counts them, are 2(p-1)n/p;
#   5. --segment reaches the algorithms and the CSV: segment_bytes is the
#      default (524288) without it, 65536 with --segment 64KiB, and the
#      double binary tree's 1 MiB time (one 512 KiB segment per tree by
#      default) moves.
#   6. --families barrier: the dissemination barrier alone (the simulator's
#      own is ideal), lg p rounds of one α each.
#   7. on torus:4x4, swing_bandwidth_torus passes --check and is faster than
#      the 1-D swing_bandwidth (the transport's coordinates reach it);
#   8. both torus forms pass --check on tori with sides that are no power of
#      two (6x6, 4x6, 3x5, 3x2x2: folded), 8 B and 64 KiB;
#   9. --simgrid-arg values SimGrid accepts (a log threshold, CM02's own
#      model and bandwidth factor) get past the transport's probe of them
#      and leave ring's times as they were.
#  10. a standard stream the caller closed: the display does not land in the
#      CSV (the first file opened, on the free descriptor), and with stdout
#      and stderr closed a refused --simgrid-arg still ends with status 2.
# Usage: harness_sim_test.sh COLLBENCH PYTHON
set -euo pipefail
collbench=${1:?usage: harness_sim_test.sh COLLBENCH PYTHON}
python=${2:?usage: harness_sim_test.sh COLLBENCH PYTHON}
forbid=${COLLBENCH_FORBID_MPI_INIT:?set COLLBENCH_FORBID_MPI_INIT to the mpi_init_forbidden library}
work=$(mktemp -d "${TMPDIR:-/tmp}/harness_sim.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "harness_sim: $*" >&2; exit 1; }

algorithms=$("$collbench" --list-algorithms --csv | awk -F, '$2 == "allreduce" && $4 != "mpi" {printf "%s%s", sep, $3; sep=","}')
[[ -n $algorithms ]] || fail "no allreduce algorithm listed"
run() {  # run CSV ARGS...
  local csv=$1
  shift
  LD_PRELOAD=$forbid "$collbench" --transport sim --ranks 8 --platform star --link-latency 1us \
    --link-bandwidth 10GBps --gamma 5GBps --families allreduce --sizes 8B,64KiB,1MiB \
    --csv "$csv" --quiet "$@" >"$work/stdout" 2>"$work/stderr" ||
    { cat "$work/stderr" >&2; fail "collbench $* failed"; }
}
run "$work/first.csv" --algorithms "$algorithms" --check
run "$work/second.csv" --algorithms "$algorithms" --check
run "$work/size_only.csv" --algorithms ring --no-payload
run "$work/segment.csv" --algorithms double_binary_tree --segment 64KiB
run "$work/barrier.csv" --families barrier
run "$work/simgrid_args.csv" --algorithms ring --simgrid-arg=--log=root.thresh:critical \
  --simgrid-arg=--cfg=network/model:CM02 --simgrid-arg=--cfg=network/bandwidth-factor:1
# The torus forms on a torus, where the transport gives coordinates.
LD_PRELOAD=$forbid "$collbench" --transport sim --ranks 16 --platform torus:4x4 \
  --link-latency 1us --link-bandwidth 10GBps --gamma 5GBps --families allreduce \
  --algorithms swing_bandwidth,swing_bandwidth_torus --sizes 64KiB --check --csv "$work/torus.csv" \
  --quiet >"$work/stdout" 2>"$work/stderr" || { cat "$work/stderr" >&2; fail "collbench on torus:4x4 failed"; }
for shape in 6x6 4x6 3x5 3x2x2; do
  LD_PRELOAD=$forbid "$collbench" --transport sim --ranks $(($(tr x '*' <<<"$shape"))) \
    --platform "torus:$shape" --link-latency 1us --link-bandwidth 10GBps --gamma 5GBps \
    --families allreduce --algorithms swing_latency_torus,swing_bandwidth_torus --sizes 8B,64KiB \
    --check --csv "$work/folded.csv" $([[ -f $work/folded.csv ]] && echo --append) --quiet \
    >"$work/stdout" 2>"$work/stderr" || { cat "$work/stderr" >&2; fail "collbench on torus:$shape failed"; }
done

LD_PRELOAD=$forbid "$collbench" --transport sim --ranks 2 --families p2p --sizes 8B \
  --csv "$work/closed.csv" >&- 2>"$work/stderr" || { cat "$work/stderr" >&2; fail "collbench >&- failed"; }
stray=$(awk -F, 'NR > 1 && $2 != "p2p"' "$work/closed.csv" | head -3)
[[ -z $stray ]] || fail "with stdout closed, the CSV holds: $stray"
status=0
LD_PRELOAD=$forbid "$collbench" --transport sim --ranks 2 --families p2p --sizes 8B \
  --csv "$work/refused.csv" --simgrid-arg=--log=bogus >&- 2>&- || status=$?
[[ $status == 2 ]] || fail "a refused --simgrid-arg with stdout and stderr closed: status $status, expected 2"
PYTHONPATH="$(dirname "$0")/../scripts" "$python" - "$work" "$algorithms" <<'PYTHON'
import sys
import collbench_csv
work, algorithms = sys.argv[1], sys.argv[2].split(",")
columns = ("benchmark", "algorithm", "bytes", "median_us", "min_us", "max_us", "samples", "check",
           "transport", "sim_platform", "sim_payload", "sim_alpha_us", "sim_beta_GBps",
           "sim_gamma_GBps", "sent_bytes_per_rank", "segment_bytes", "osu_avg_us", "nccl_avg_us")
first = collbench_csv.read_rows(f"{work}/first.csv", columns, "the sim test")
second = collbench_csv.read_rows(f"{work}/second.csv", columns, "the sim test")
size_only = collbench_csv.read_rows(f"{work}/size_only.csv", columns, "the sim test")
if sorted({r["algorithm"] for r in first}) != sorted(algorithms):
    sys.exit(f"algorithms {sorted({r['algorithm'] for r in first})}, expected {sorted(algorithms)}")
for row in first:
    got = (row["transport"], row["samples"], row["check"], row["sim_platform"], row["sim_payload"],
           row["sim_alpha_us"], row["sim_beta_GBps"], row["sim_gamma_GBps"])
    if got != ("sim", "1", "ok", "star", "real", "2", "10", "5"):
        sys.exit(f"{row['benchmark']}: {got}")
times = lambda rows: {r["benchmark"]: (r["median_us"], r["min_us"], r["max_us"]) for r in rows}
if times(first) != times(second):
    sys.exit("two runs gave different times: a simulation must be deterministic")
# The batch would simulate each case 20 more times.
if {r["nccl_avg_us"] for r in first} != {""} or "" in {r["osu_avg_us"] for r in first}:
    sys.exit(f"nccl_avg_us {sorted({r['nccl_avg_us'] for r in first})[:3]}: the nccl-tests batch ran "
             "on the simulated transport (or osu_avg_us is missing)")
# ring on a star: 2(p-1) steps of alpha + n/p beta, (p-1) n/p gamma.
p, alpha, beta, gamma = 8, 2e-6, 1 / 10e9, 1 / 5e9
for row in first:
    if row["algorithm"] != "ring":
        continue
    n = int(row["bytes"])
    cost = 2 * (p - 1) * alpha + 2 * (p - 1) / p * n * beta + (p - 1) / p * n * gamma
    got = float(row["median_us"]) * 1e-6
    if abs(got - cost) > 0.01 * cost:
        sys.exit(f"{row['benchmark']}: {got * 1e6:.4f} us simulated, {cost * 1e6:.4f} us by the formula")
    # The sends are counted: 2(p-1) blocks of n/p where p divides the f32 elements.
    if n % (4 * p) == 0 and row["sent_bytes_per_rank"] != str(2 * (p - 1) * n // p):
        sys.exit(f"{row['benchmark']}: sent_bytes_per_rank {row['sent_bytes_per_rank']}")
ring = {k: v for k, v in times(first).items() if "/ring/" in k}
if times(size_only) != ring:
    sys.exit(f"size-only times {times(size_only)} differ from the real ones {ring}")
simgrid_args = collbench_csv.read_rows(f"{work}/simgrid_args.csv", columns, "the sim test")
if times(simgrid_args) != ring:
    sys.exit(f"with --simgrid-arg values SimGrid accepts, times {times(simgrid_args)} differ from {ring}")
if {r["sim_payload"] for r in size_only} != {"size-only"}:
    sys.exit("size-only rows do not say so")
segmented = collbench_csv.read_rows(f"{work}/segment.csv", columns, "the sim test")
if {r["segment_bytes"] for r in first} != {"524288"}:
    sys.exit(f"segment_bytes without --segment: {sorted({r['segment_bytes'] for r in first})}")
if {r["segment_bytes"] for r in segmented} != {"65536"}:
    sys.exit(f"segment_bytes with --segment 64KiB: {sorted({r['segment_bytes'] for r in segmented})}")
fine = {r["bytes"]: r["median_us"] for r in segmented}
coarse = {r["bytes"]: r["median_us"] for r in first if r["algorithm"] == "double_binary_tree"}
if fine["1048576"] == coarse["1048576"]:
    sys.exit(f"double_binary_tree at 1 MiB took {fine['1048576']} us with 64 KiB segments and "
             "with the default: --segment did not reach it")
torus = {r["algorithm"]: r for r in collbench_csv.read_rows(f"{work}/torus.csv", columns, "the sim test")}
if {r["check"] for r in torus.values()} != {"ok"}:
    sys.exit(f"on torus:4x4: checks {[(a, r['check']) for a, r in torus.items()]}")
# One Swing per dimension, all ports busy, beats the 1-D form over the rank order.
if not float(torus["swing_bandwidth_torus"]["median_us"]) < float(torus["swing_bandwidth"]["median_us"]):
    sys.exit(f"on torus:4x4 swing_bandwidth_torus took {torus['swing_bandwidth_torus']['median_us']} us, "
             f"not less than swing_bandwidth's {torus['swing_bandwidth']['median_us']} us")
folded = collbench_csv.read_rows(f"{work}/folded.csv", columns, "the sim test")
got = sorted((r["sim_platform"], r["algorithm"], r["bytes"], r["check"]) for r in folded)
expected = sorted((f"torus:{shape}", form, size, "ok") for shape in ("6x6", "4x6", "3x5", "3x2x2")
                  for form in ("swing_latency_torus", "swing_bandwidth_torus") for size in ("8", "65536"))
if got != expected:
    sys.exit(f"on the folded tori: {got}, expected {expected}")
barrier = collbench_csv.read_rows(f"{work}/barrier.csv", columns, "the sim test")
if [r["benchmark"] for r in barrier] != ["barrier/dissemination"]:
    sys.exit(f"barrier rows {[r['benchmark'] for r in barrier]}, expected barrier/dissemination")
# lg 8 = 3 rounds, each an empty message over one route (alpha).
got = float(barrier[0]["median_us"]) * 1e-6
if abs(got - 3 * alpha) > 0.01 * 3 * alpha:
    sys.exit(f"barrier/dissemination: {got * 1e6:.4f} us simulated, 3 alpha = {3 * alpha * 1e6:.4f} us")
PYTHON
echo "harness_sim: $(echo "$algorithms" | tr ',' ' ' | wc -w) algorithms checked at p=8, deterministic, ring on its formula, size-only equal, --segment reaches the tree, the barrier lg p alpha, the torus form faster on a torus and checked on folded tori, valid --simgrid-arg values kept, closed standard streams kept out of the CSV"
