#!/usr/bin/env bash
# collbench --transport sim --families train: one training iteration on the
# simulated cluster, checked at small p (deterministic, no wall time):
#   1. the timeline's rules: with overlap the iteration is shorter than
#      compute + communication (train/none + exchange, the same buckets back
#      to back) and at least each of them; with --no-overlap it is exactly
#      their sum (a dropped bucket or an ignored overlap fails one of these);
#   2. two runs give identical times; sim_compute names the compute's source;
#   3. agreement with collbench-predict (the formula) at p = 2 and 8 on a
#      star, the same measured compute, buckets and α-β-γ, overlap on and
#      off: within 10% (the simulator runs ring's messages, the formula
#      prices them);
#   4. --reuse-buckets on a workload of repeated bucket sizes gives the
#      times of the full simulation.
# Usage: harness_sim_train_test.sh COLLBENCH COLLBENCH_PREDICT GEMM_CSV PYTHON
set -euo pipefail
usage="usage: harness_sim_train_test.sh COLLBENCH COLLBENCH_PREDICT GEMM_CSV PYTHON"
collbench=${1:?$usage}
predict=${2:?$usage}
gemm=${3:?$usage}
python=${4:?$usage}
work=$(mktemp -d "${TMPDIR:-/tmp}/harness_sim_train.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "harness_sim_train: $*" >&2; exit 1; }

# The network of both: a star's route is two links, so α = 2 x 1 us; 100 MB/s
# is 0.8 Gbit/s (slow enough that the exchange is seconds, as the compute
# is); γ 10 GB/s is 0.1 ns/B.
run() {  # run CSV RANKS ARGS...
  local csv=$1 ranks=$2
  shift 2
  "$collbench" --transport sim --ranks "$ranks" --platform star --link-latency 1us \
    --link-bandwidth 100MBps --gamma 10GBps --families exchange,train --algorithms ring \
    --no-payload --csv "$csv" --quiet "$@" \
    >"$work/stdout" 2>"$work/stderr" || { cat "$work/stderr" >&2; fail "collbench $* failed"; }
}
measured=(--compute-from "$gemm" --train-batch 32)
for p in 2 8; do
  run "$work/overlap_p$p.csv" "$p" --workload resnet50:ddp "${measured[@]}"
  run "$work/serial_p$p.csv" "$p" --workload resnet50:ddp "${measured[@]}" --no-overlap
  for overlap in "" --overlap-buckets; do
    "$predict" --model resnet50 --batch 32 --weak --compute-from "$gemm" --exchange ddp \
      $overlap --latency-us 2 --bandwidth-gbps 0.8 --gamma 0.1 --algorithms ring \
      --max-nodes "$p" --out-dir "$work" >/dev/null 2>"$work/stderr" ||
      { cat "$work/stderr" >&2; fail "collbench-predict $overlap failed"; }
    mv "$work/scaling.csv" "$work/predict${overlap:+_overlap}_p$p.csv"
  done
done
run "$work/again_p8.csv" 8 --workload resnet50:ddp "${measured[@]}"
# llama2_7b's buckets repeat sizes (no gemm rows: an assumed rate).
assumed=(--flops 100T --train-batch 1)
run "$work/full_llama.csv" 4 --workload llama2_7b:ddp "${assumed[@]}"
run "$work/reuse_llama.csv" 4 --workload llama2_7b:ddp "${assumed[@]}" --reuse-buckets

PYTHONPATH="$(dirname "$0")/../scripts" "$python" - "$work" <<'PYTHON'
import sys
import collbench_csv
work = sys.argv[1]
columns = ("benchmark", "family", "algorithm", "median_us", "compute_us", "communication_us",
           "exposed_us", "overlap", "sim_compute", "ranks")
rows = lambda name: collbench_csv.read_rows(f"{work}/{name}.csv", columns, "the sim train test")
def train(name):
    found = [r for r in rows(name) if r["family"] == "train" and r["algorithm"] == "ring"]
    if len(found) != 1:
        sys.exit(f"{name}: {len(found)} train/ring rows, expected 1")
    return found[0]

def close(a, b, tolerance):
    return abs(a - b) <= tolerance * max(abs(a), abs(b))

for p in (2, 8):
    on, off = train(f"overlap_p{p}"), train(f"serial_p{p}")
    for row in (on, off):
        if not row["sim_compute"].startswith("measured ") or "32 samples per rank" not in row[
                "sim_compute"]:
            sys.exit(f"p={p}: sim_compute '{row['sim_compute']}'")
    compute, communication = float(on["compute_us"]), float(on["communication_us"])
    iteration, serial = float(on["median_us"]), float(off["median_us"])
    if not close(serial, compute + communication, 1e-6):
        sys.exit(f"p={p} --no-overlap: iteration {serial} us, compute + communication "
                 f"{compute + communication} us: a bucket was dropped or overlapped")
    if not (max(compute, communication) <= iteration < compute + communication - 0.05 *
            communication):
        sys.exit(f"p={p} overlap: iteration {iteration} us, compute {compute}, communication "
                 f"{communication}: the buckets did not overlap the backward pass")
    if not 0 < float(on["overlap"]) <= 1:
        sys.exit(f"p={p}: overlap {on['overlap']}")
    for name, simulated in (("predict", serial), ("predict_overlap", iteration)):
        predicted = [r for r in collbench_csv.read_rows(
            f"{work}/{name}_p{p}.csv", ("nodes", "iteration_s"), "the sim train test")
            if int(r["nodes"]) == p]
        formula = float(predicted[0]["iteration_s"]) * 1e6
        # Against the exchange too: the compute, the same in both, would
        # hide a wrong exchange in the iteration's 10%.
        if not close(simulated, formula, 0.10) or abs(simulated - formula) > 0.1 * communication:
            sys.exit(f"p={p} {name}: simulated {simulated} us, collbench-predict {formula} us: "
                     f"more than 10% apart, or more than 10% of the exchange ({communication} us)")
        print(f"p={p} {name}: simulated {simulated:.1f} us, predicted {formula:.1f} us "
              f"({100 * (simulated / formula - 1):+.2f}%)")
times = lambda name: [(r["benchmark"], r["median_us"]) for r in rows(name)]
if times("overlap_p8") != times("again_p8"):
    sys.exit("two runs gave different times: a simulation must be deterministic")
full, reuse = train("full_llama"), train("reuse_llama")
if "buckets reused" not in reuse["sim_compute"] or "reused" in full["sim_compute"]:
    sys.exit(f"sim_compute: '{full['sim_compute']}', '{reuse['sim_compute']}'")
if not close(float(full["median_us"]), float(reuse["median_us"]), 1e-6):
    sys.exit(f"--reuse-buckets: {reuse['median_us']} us, the full simulation "
             f"{full['median_us']} us")
print(f"llama2_7b p=4: {reuse['sim_compute']}; {reuse['median_us']} us as simulated in full")
PYTHON
echo "harness_sim_train: ok"
