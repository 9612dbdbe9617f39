#!/usr/bin/env bash
# collbench --transport sim --families train on MODEL:fsdp and MODEL:zero2
# (deterministic, no wall time):
#   1. data: at p = 1..4 every message of one iteration checked (--check,
#      payload on): each reduce-scatter's shard is the sum over the ranks of
#      its block, what DDP's allreduce leaves there, and each gather the
#      ranks' blocks in place;
#   2. messages: the train row sends what the exchange row (the catalog's
#      messages in the catalog's order) sends, byte for byte as the transport
#      counted them, and as many messages as collbench-catalog lists;
#   3. schedule: bert_base:fsdp at p = 2 and 4 on a star with known α, β, γ
#      and an assumed compute rate, the iteration equals the time worked out
#      by hand from the schedule's rules (the forward gathers prefetched
#      behind each block's compute, BACKWARD_PRE in backward, the last
#      reduce-scatters exposed); --no-overlap is compute + communication
#      exactly; zero2 is compute + its buckets' exposed tail + the gather.
# Usage: harness_sim_fsdp_test.sh COLLBENCH COLLBENCH_CATALOG PYTHON
set -euo pipefail
usage="usage: harness_sim_fsdp_test.sh COLLBENCH COLLBENCH_CATALOG PYTHON"
collbench=${1:?$usage}
catalog=${2:?$usage}
python=${3:?$usage}
work=$(mktemp -d "${TMPDIR:-/tmp}/harness_sim_fsdp.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "harness_sim_fsdp: $*" >&2; exit 1; }

# A star's route is two links: α = 2 x 1 us; 10 GB/s is β = 0.1 ns/B; γ 10
# GB/s. One segment per block (a 1 GiB segment), so that a ring step is one
# message: α + block·β.
run() {  # run CSV RANKS ARGS...
  local csv=$1 ranks=$2
  shift 2
  "$collbench" --transport sim --ranks "$ranks" --platform star --link-latency 1us \
    --link-bandwidth 10GBps --gamma 10GBps --algorithms ring --segment 1GiB --csv "$csv" \
    --quiet "$@" \
    >"$work/stdout" 2>"$work/stderr" || { cat "$work/stderr" >&2; fail "collbench $* failed"; }
}
# The data: train alone (its exchange rows would double the bytes moved).
for p in 1 2 3 4; do
  run "$work/check_p$p.csv" "$p" --families train --flops 10T --train-batch 1 --check \
    --workload resnet50:fsdp:f32,resnet50:zero2:f32 --benchmark_filter='^train/'
done
# The times and the bytes, size-only.
for p in 2 4; do
  run "$work/fsdp_p$p.csv" "$p" --families train --workload bert_base:fsdp:f32 --flops 10T \
    --train-batch 32 --no-payload --timeline "$work/timeline_p$p.json"
  run "$work/serial_p$p.csv" "$p" --families exchange,train --flops 10T --train-batch 32 \
    --workload bert_base:fsdp:f32,bert_base:zero2:f32 --no-payload --no-overlap
  run "$work/zero2_p$p.csv" "$p" --families train --workload bert_base:zero2:f32 --flops 10T \
    --train-batch 32 --no-payload
done
for spec in bert_base:fsdp:f32 bert_base:zero2:f32; do
  "$catalog" workload "$spec" --csv >"$work/catalog_${spec//:/_}.csv" ||
    fail "collbench-catalog workload $spec failed"
done

PYTHONPATH="$(dirname "$0")/../scripts" "$python" - "$work" <<'PYTHON'
import csv, json, sys
import collbench_csv
work = sys.argv[1]
columns = ("benchmark", "family", "algorithm", "collective", "workload", "item", "median_us",
           "compute_us", "communication_us", "check", "wrong_elements", "sent_bytes_per_rank",
           "ranks")
rows = lambda name: collbench_csv.read_rows(f"{work}/{name}.csv", columns, "the sim fsdp test")
def one(name, family, algorithm, workload):
    found = [r for r in rows(name) if r["family"] == family and r["algorithm"] == algorithm and
             r["workload"].startswith(workload)]
    if len(found) != 1:
        sys.exit(f"{name}: {len(found)} {family}/{algorithm}/{workload} rows, expected 1")
    return found[0]
def close(a, b, tolerance=1e-6):
    return abs(a - b) <= tolerance * max(abs(a), abs(b))
def catalog(spec):
    with open(f"{work}/catalog_{spec.replace(':', '_')}.csv") as f:
        return list(csv.DictReader(f))

# 1: every message's data checked.
for p in (1, 2, 3, 4):
    for spec, collectives in (("resnet50:fsdp", "allgather+reduce_scatter"),
                              ("resnet50:zero2", "reduce_scatter+allgather")):
        train = one(f"check_p{p}", "train", "ring", spec)
        if train["check"] != "ok" or train["wrong_elements"] != "0":
            sys.exit(f"p={p} {train['benchmark']}: check {train['check']}, "
                     f"{train['wrong_elements']} wrong elements")
        if train["collective"] != collectives:
            sys.exit(f"p={p} {train['benchmark']}: collective {train['collective']}")
print("p=1..4: resnet50 fsdp and zero2 checked")

# 2: the catalog's messages, as many and as many bytes as the transport
# counted for the exchange row (the catalog's own order).
for p in (2, 4):
    for spec in ("bert_base:fsdp", "bert_base:zero2"):
        train = one(f"serial_p{p}", "train", "ring", spec)
        exchange = one(f"serial_p{p}", "exchange", "ring", spec)
        listed = catalog(f"{spec}:f32")
        if train["item"] != f"{len(listed)} messages":
            sys.exit(f"p={p} {train['benchmark']}: item '{train['item']}', the catalog lists "
                     f"{len(listed)} messages")
        if train["sent_bytes_per_rank"] != exchange["sent_bytes_per_rank"] or int(
                train["sent_bytes_per_rank"]) == 0:
            sys.exit(f"p={p} {spec}: train sent {train['sent_bytes_per_rank']} bytes, the "
                     f"exchange {exchange['sent_bytes_per_rank']}")
print("p=2, 4: bert_base fsdp and zero2 send the catalog's messages")

# 3: the schedule's time by hand. Ring on a star: allgather (p-1)(α + n/p·β),
# reduce_scatter that + (p-1)·n/p·γ.
alpha, beta, gamma = 2e-6, 1e-10, 1e-10
def allgather(n, p):
    return (p - 1) * (alpha + n / p * beta)
def reduce_scatter(n, p):
    return allgather(n, p) + (p - 1) * n / p * gamma
messages = catalog("bert_base:fsdp:f32")
unit_bytes = {m["item"].rsplit(" ", 1)[0]: int(m["bytes"]) for m in messages}
blocks = [u for u in unit_bytes if u != "root"]
for p in (2, 4):
    events = json.load(open(f"{work}/timeline_p{p}.json"))["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    none_pid = next(pid for pid, name in names.items() if name.startswith("train/none/"))
    # Each block's and the root's compute per pass, as charged (compute alone).
    spans = {}
    for e in events:
        if e["pid"] != none_pid or e.get("cat") != "compute":
            continue
        direction, layer = e["name"].split(" ", 1)
        unit = next((b for b in blocks if layer.startswith(b + ".")), "root")
        spans[(unit, direction)] = spans.get((unit, direction), 0) + e["dur"] * 1e-6
    a0 = allgather(unit_bytes["root"], p)
    a = [allgather(unit_bytes[b], p) for b in blocks]
    r = [reduce_scatter(unit_bytes[b], p) for b in blocks]
    r0 = reduce_scatter(unit_bytes["root"], p)
    cf = [spans[(b, "forward")] for b in blocks]
    cb = [spans[(b, "backward")] for b in blocks]
    hf, hb = spans[("root", "forward")], spans[("root", "backward")]
    # The closed form holds while each block's forward hides the next
    # gather, and each backward the previous reduce-scatter and the next
    # gather: true at this rate; say so if not.
    n = len(blocks)
    if not all(cf[k] >= a[k + 1] for k in range(n - 1)) or not all(
            cb[k] >= (r[k + 1] if k + 1 < n else 0) + (a[k - 1] if k > 0 else 0)
            for k in range(n)):
        sys.exit(f"p={p}: the compute no longer hides the messages; the hand formula needs it")
    # Forward: the root's gather, then block 0's (prefetched at the start, so
    # waited for right after), then every block back to back, its successor's
    # gather behind it, then the pooler. Backward: the pooler while the last
    # block gathers (prefetched at the start of backward), every block back
    # to back (its predecessor's gather and its successor's reduce-scatter
    # hidden behind it), then block 0's reduce-scatter and the root's exposed.
    expected = (a0 + a[0] + sum(cf) + hf) + (max(hb, a[-1]) + sum(cb) + r[0] + r0)
    # Gathering each block only when it starts (no prefetch) would expose
    # every gather: about this.
    no_prefetch = a0 + sum(a) + sum(cf) + hf + hb + sum(a) + sum(cb) + r[0] + r0
    train = one(f"fsdp_p{p}", "train", "ring", "bert_base:fsdp")
    simulated = float(train["median_us"]) * 1e-6
    if not close(simulated, expected):
        sys.exit(f"p={p} bert_base:fsdp: simulated {simulated * 1e3:.6f} ms, by hand "
                 f"{expected * 1e3:.6f} ms (without the prefetch {no_prefetch * 1e3:.6f} ms)")
    print(f"p={p} bert_base:fsdp: simulated {simulated * 1e3:.4f} ms = by hand "
          f"{expected * 1e3:.4f} ms (no prefetch would be {no_prefetch * 1e3:.4f} ms)")
    for spec in ("bert_base:fsdp", "bert_base:zero2"):
        serial = one(f"serial_p{p}", "train", "ring", spec)
        total = float(serial["compute_us"]) + float(serial["communication_us"])
        if not close(float(serial["median_us"]), total):
            sys.exit(f"p={p} {spec} --no-overlap: {serial['median_us']} us, compute + "
                     f"communication {total} us")
    # zero2: one bucket (bert_base is under 500M elements), reduce-scattered
    # when backprop ends, then the gather: nothing overlaps.
    zero2 = one(f"zero2_p{p}", "train", "ring", "bert_base:zero2")
    whole = sum(unit_bytes.values())
    expected = float(zero2["compute_us"]) * 1e-6 + reduce_scatter(whole, p) + allgather(whole, p)
    if not close(float(zero2["median_us"]) * 1e-6, expected):
        sys.exit(f"p={p} bert_base:zero2: {zero2['median_us']} us, by hand {expected * 1e6} us")
print("bert_base fsdp and zero2: the schedule's times")
PYTHON
echo "harness_sim_fsdp: ok"
