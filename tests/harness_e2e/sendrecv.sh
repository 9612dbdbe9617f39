#!/usr/bin/env bash
# sendrecv: --families sendrecv,reduce_all,allreduce: one p2p/sendrecv and one
# local/reduce_all row per size, checked, with sane times; no sendrecv on 1
# rank
# Usage: sendrecv.sh COLLBENCH [NP] (ranks, default 2); see common.sh
set -euo pipefail
# shellcheck source=tests/harness_e2e/common.sh
source "$(dirname "$0")/common.sh"

sizes=4B,1028B,64KiB,4MiB
run "$np" --families sendrecv,reduce_all,allreduce --algorithms ring,mpi --sizes "$sizes" --check \
  --csv "$work/run.csv" --samples 3 --quiet
[[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "exit status $status"; }
check_csv "$work/run.csv" "$np" <<'PYTHON'
ranks = int(sys.argv[2])
sizes = [4, 1028, 64 << 10, 4 << 20]
exchanges = {int(r["bytes"]): r for r in rows if r["benchmark"].startswith("p2p/sendrecv/")}
names = sorted(r["benchmark"] for r in rows)
expected = sorted([f"p2p/sendrecv/{n}" for n in sizes] +
                  [f"local/reduce_all/f32/{n}" for n in sizes] +
                  [f"allreduce/{a}/{n}" for a in ("ring", "mpi") for n in sizes])
if names != expected:
    fail(f"benchmarks {names}, expected {expected}")
# The reduction on every rank at once: --check compares every rank's result,
# so a rank that skipped the kernel would count wrong elements.
reductions = {int(r["bytes"]): r for r in rows if r["benchmark"].startswith("local/reduce_all/")}
for size, row in sorted(reductions.items()):
    got = (row["family"], row["algorithm"], row["transport"], row["dtype"], row["op"], row["ranks"],
           row["check"], row["wrong_elements"], row["sent_bytes_per_rank"])
    if got != ("local", "reduce_all", "local", "f32", "sum", str(ranks), "ok", "0", ""):
        fail(f"{row['benchmark']}: {got}")
    if int(row["calls_per_sample"]) < 1 or not 0 < float(row["median_us"]) < 1e6:
        fail(f"{row['benchmark']}: {row['calls_per_sample']} calls, {row['median_us']} us")
if float(reductions[4 << 20]["median_us"]) <= float(reductions[4]["median_us"]):
    fail("local/reduce_all at 4 MiB is not slower than at 4 B")
for size, row in sorted(exchanges.items()):
    name = row["benchmark"]
    if (row["family"], row["algorithm"], row["peer"], row["dtype"]) != ("p2p", "sendrecv", "", ""):
        fail(f"{name}: family {row['family']} algorithm {row['algorithm']} peer '{row['peer']}' "
             f"dtype '{row['dtype']}'")
    if row["placement"] != "intra" or int(row["ranks"]) != ranks:
        fail(f"{name}: placement {row['placement']}, ranks {row['ranks']}")
    if row["check"] != "ok" or row["wrong_elements"] != "0":
        fail(f"{name}: check={row['check']} wrong={row['wrong_elements']}")
    stats = [float(row[c]) for c in ("min_us", "median_us", "mean_us", "p99_us", "max_us")]
    if not (0 < stats[0] <= stats[1] <= stats[3] <= stats[4] and stats[0] <= stats[2] <= stats[4]):
        fail(f"{name}: statistics out of order {stats}")
    if int(row["calls_per_sample"]) < 1 or int(row["sent_bytes_per_rank"]) != size:
        fail(f"{name}: calls_per_sample {row['calls_per_sample']}, sent {row['sent_bytes_per_rank']}")
    algbw = float(row["algbw_GBps"])
    if not (math.isclose(algbw, size / (stats[1] * 1e-6) / 1e9, rel_tol=1e-3)
            and math.isclose(float(row["busbw_GBps"]), algbw, rel_tol=1e-3)):
        fail(f"{name}: algbw {algbw} busbw {row['busbw_GBps']}, expected bytes / median for both")
    # Shared memory on one host: far below 1000 GB/s, and a call is never a
    # whole second.
    if not (algbw < 1000 and stats[1] < 1e6):
        fail(f"{name}: {stats[1]} us, {algbw} GB/s")
# 4 MiB takes longer than 4 B: the loop moves the bytes.
if float(exchanges[4 << 20]["median_us"]) <= float(exchanges[4]["median_us"]):
    fail(f"4 MiB ({exchanges[4 << 20]['median_us']} us) not slower than 4 B "
         f"({exchanges[4]['median_us']} us)")
if any(r["check"] != "ok" for r in rows):
    fail("an allreduce row failed its check")
print(", ".join(f"sendrecv {n} B: {float(r['median_us']):.2f} us" for n, r in sorted(exchanges.items())))
PYTHON
# One rank has no neighbour: a note, and here nothing else to run.
run 0 --families sendrecv --sizes 8B --csv "$work/alone.csv"
[[ $status -eq 2 ]] || fail "sendrecv on 1 rank: exit status $status"
grep -qF "skipping p2p/sendrecv: it needs at least 2 ranks" "$work/stderr" ||
  { cat "$work/stderr" >&2; fail "no note for sendrecv on 1 rank"; }
echo "PASS ($scenario)"
