#!/usr/bin/env bash
# What the harness says about a simulated run, against the platform it was
# given (collbench --transport sim, one process, MPI_Init fatal):
#   1. collbench-fit on a simulated sweep (p2p at p=2, recursive doubling at
#      p=5,6,8, whose bytes and reduced bytes are not proportional across p,
#      so γ separates from β) recovers the star's end-to-end α, β and γ
#      within 2%;
#   2. size-only mode runs a case whose buffers would not fit in memory (the
#      planner's memory check is for real-data mode only);
#   3. --ppn 2: the CSV's nodes and ranks_per_node are the platform's;
#   4. --calibration on a star, fat-trees whose first two nodes meet at the
#      first and at the second level, and a 3-D torus: the fit's end-to-end
#      α is split over the links between the first two nodes, so the CSV's α
#      is the fit's and a simulated ping-pong between them takes α + nβ of
#      the fit; one with nodes k times as many links apart takes kα + nβ.
# Usage: sim_harness_truth_test.sh COLLBENCH COLLBENCH_FIT PYTHON MODELS_CSV
set -euo pipefail
usage="usage: sim_harness_truth_test.sh COLLBENCH COLLBENCH_FIT PYTHON MODELS_CSV"
collbench=${1:?$usage}
fit=${2:?$usage}
python=${3:?$usage}
models=${4:?$usage}
forbid=${COLLBENCH_FORBID_MPI_INIT:?set COLLBENCH_FORBID_MPI_INIT to the mpi_init_forbidden library}
work=$(mktemp -d "${TMPDIR:-/tmp}/sim_harness_truth.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "sim_harness_truth: $*" >&2; exit 1; }

run() {  # run CSV ARGS...
  local csv=$1
  shift
  LD_PRELOAD=$forbid "$collbench" --transport sim --csv "$csv" --quiet "$@" >"$work/stdout" \
    2>"$work/stderr" || { cat "$work/stderr" >&2; fail "collbench $* failed"; }
}

# 1. α = 2 links of 1 µs, β = 1/10 GB/s, γ = 1/5 GB/s.
star=(--platform star --link-latency 1us --link-bandwidth 10GBps --gamma 5GBps --no-payload)
sizes=8B,1KiB,64KiB,1MiB,16MiB
run "$work/p2p.csv" "${star[@]}" --ranks 2 --families p2p --sizes "$sizes"
for p in 5 6 8; do
  run "$work/allreduce_$p.csv" "${star[@]}" --ranks "$p" --families allreduce \
    --algorithms recursive_doubling --sizes "$sizes"
done
"$fit" --out-dir "$work/fit" "$work"/p2p.csv "$work"/allreduce_*.csv >"$work/fit.log" 2>&1 ||
  { cat "$work/fit.log" >&2; fail "collbench-fit failed"; }

# 2. 256 GiB per rank: refused in real-data mode (tests/bad_inputs.tsv), run here.
run "$work/size_only.csv" --ranks 2 --families broadcast --algorithms binomial --sizes 256GiB \
  --no-payload
# 3.
run "$work/ppn.csv" --ranks 6 --ppn 2 --families p2p --sizes 8B
# 4.
calibrated=("star 2" "fat-tree:2;4,2;1,2;1,1 8" "fat-tree:2;1,4;1,1;1,1 4" "torus:2x2x2 8")
for case in "${calibrated[@]}"; do
  read -r platform ranks <<<"$case"
  run "$work/calibrated_${platform//[:;,]/_}.csv" --ranks "$ranks" --platform "$platform" \
    --calibration "$models" --families p2p --sizes 8B,1MiB
done

PYTHONPATH="$(dirname "$0")/../scripts" "$python" - "$work" "$models" <<'PYTHON'
import csv
import sys
import collbench_csv
work, models = sys.argv[1], sys.argv[2]

def close(what, got, want, tolerance):
    if abs(got - want) > tolerance * abs(want):
        sys.exit(f"{what}: {got:.6g}, expected {want:.6g} within {tolerance:.1%}")

fits = list(csv.DictReader(open(f"{work}/fit/models.csv")))
def fitted(model, algorithm):
    rows = [r for r in fits if r["model"] == model and r["algorithm"] == algorithm]
    if len(rows) != 1:
        sys.exit(f"models.csv has {len(rows)} {model} rows of {algorithm}, expected 1")
    return rows[0]
pingpong = fitted("hockney", "pingpong")
close("ping-pong α (us)", float(pingpong["alpha_us"]), 2.0, 0.02)
close("ping-pong β (ns/B)", float(pingpong["beta_ns_per_byte"]), 0.1, 0.02)
top_down = fitted("top_down", "recursive_doubling")
if top_down["gamma_source"] != "fitted":
    sys.exit(f"recursive doubling's γ is {top_down['gamma_source']}, not fitted: {top_down['note']}")
close("recursive doubling's α (us)", float(top_down["alpha_us"]), 2.0, 0.02)
close("recursive doubling's β (ns/B)", float(top_down["beta_ns_per_byte"]), 0.1, 0.02)
close("recursive doubling's γ (ns/B)", float(top_down["gamma_ns_per_byte"]), 0.2, 0.02)

columns = ("benchmark", "bytes", "median_us", "nodes", "ranks_per_node", "sim_payload",
           "sim_alpha_us", "sim_beta_GBps", "sim_calibration")
size_only = collbench_csv.read_rows(f"{work}/size_only.csv", columns, "the sim test")
if [(r["bytes"], r["sim_payload"]) for r in size_only] != [(str(256 << 30), "size-only")]:
    sys.exit(f"size-only run: {[(r['bytes'], r['sim_payload']) for r in size_only]}")

for row in collbench_csv.read_rows(f"{work}/ppn.csv", columns, "the sim test"):
    if (row["nodes"], row["ranks_per_node"]) != ("3", "2"):
        sys.exit(f"--ranks 6 --ppn 2: nodes {row['nodes']}, ranks_per_node {row['ranks_per_node']}")

network = [r for r in csv.DictReader(open(models))
           if r["model"] == "hockney" and r["family"] == "p2p" and r["algorithm"] == "pingpong"]
alpha, beta = float(network[0]["alpha_us"]), float(network[0]["beta_ns_per_byte"])
# Per platform, peer: how many times the first route's links lie between
# rank 0 and that peer (2 fat-tree levels; torus hops).
apart = {"star": {1: 1}, "fat-tree:2;4,2;1,2;1,1": {1: 1, 3: 1, 4: 2, 7: 2},
         "fat-tree:2;1,4;1,1;1,1": {1: 1, 3: 1}, "torus:2x2x2": {1: 1, 3: 2, 7: 3}}
for platform, peers in apart.items():
    name = platform.replace(":", "_").replace(";", "_").replace(",", "_")
    rows = collbench_csv.read_rows(f"{work}/calibrated_{name}.csv", columns, "the sim test")
    seen = set()
    for row in rows:
        close(f"{platform}: calibrated CSV α (us)", float(row["sim_alpha_us"]), alpha, 1e-3)
        close(f"{platform}: calibrated CSV β (ns/B)", 1 / float(row["sim_beta_GBps"]), beta, 1e-3)
        peer = int(row["benchmark"].rsplit("peer:", 1)[1])
        if peer not in peers:
            continue
        n = int(row["bytes"])
        close(f"{platform}: calibrated ping-pong with rank {peer} of {n} B (us)",
              float(row["median_us"]), peers[peer] * alpha + n * beta * 1e-3, 0.01)
        seen.add(peer)
    if seen != set(peers):
        sys.exit(f"{platform}: no ping-pong rows with ranks {sorted(set(peers) - seen)}")
PYTHON
echo "sim_harness_truth: fit recovers α, β, γ within 2%; size-only skips the memory check; ppn metadata; calibration splits α on a star, fat-trees and a torus"
