#!/usr/bin/env bash
# full: all algorithms, --check, odd sizes, p2p and local: exit 0, every
# expected row exactly once, zero wrong elements
# Usage: full.sh COLLBENCH [NP] (ranks, default 2); see common.sh
set -euo pipefail
# shellcheck source=tests/harness_e2e/common.sh
source "$(dirname "$0")/common.sh"

sizes=4B,12B,1028B,65540B,1MiB
algorithms=$(registry_algorithms)
run "$np" --algorithms all --sizes "$sizes" --check --csv "$work/run.csv" \
  --samples 3 --quiet
[[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "exit status $status"; }
check_csv "$work/run.csv" "$np" "$algorithms" <<'PYTHON'
ranks = int(sys.argv[2])
algorithms = sys.argv[3].split(",")
sizes = [4, 12, 1028, 65540, 1 << 20]
expected = set()
for size in sizes:
    expected |= {f"allreduce/{a}/{size}" for a in algorithms}
    expected |= {f"p2p/pingpong/{size}/peer:{peer}" for peer in range(1, ranks)}
    expected |= {f"local/reduce/f32/{size}", f"local/memcpy/{size}"}
names = [row["benchmark"] for row in rows]
if sorted(names) != sorted(expected):
    fail(f"missing {sorted(expected - set(names))}, unexpected {sorted(set(names) - expected)}, "
         f"{len(names)} rows for {len(expected)} benchmarks")
for row in rows:
    name = row["benchmark"]
    if row["check"] != "ok" or row["wrong_elements"] != "0":
        fail(f"{name}: check={row['check']} wrong={row['wrong_elements']}")
    if int(row["ranks"]) != ranks or row["run_id"] == "" or row["git_rev"] == "":
        fail(f"{name}: metadata {row['ranks']} {row['run_id']} {row['git_rev']}")
    stats = [float(row[c]) for c in ("min_us", "median_us", "mean_us", "p99_us", "max_us")]
    if not (0 < stats[0] <= stats[1] <= stats[3] <= stats[4] and stats[0] <= stats[2] <= stats[4]):
        fail(f"{name}: statistics out of order {stats}")
    # --samples 3: exactly 3 samples, each of calls_per_sample calls.
    if (row["samples"], row["min_samples"]) != ("3", "3") or \
            int(row["iterations"]) != 3 * int(row["calls_per_sample"]):
        fail(f"{name}: {row['samples']} samples (floor {row['min_samples']}), "
             f"{row['iterations']} iterations of {row['calls_per_sample']} calls per sample")
    # Per-rank times where every rank's time counts; rank 0's alone in the
    # ping-pong and the local kernels, which name no straggler.
    per_rank = (row["slowest_rank"], row["slowest_rank_share"], row["rank_median_us"])
    if row["algorithm"] in ("pingpong", "reduce", "memcpy"):
        if per_rank != ("", "", ""):
            fail(f"{name}: per-rank columns {per_rank} where only rank 0's time counts")
    else:
        medians = [float(m) for m in row["rank_median_us"].split(";")]
        share = float(row["slowest_rank_share"])
        # Of 3 samples, the rank slowest most often was so in 1, 2 or 3.
        if not (0 <= int(row["slowest_rank"]) < ranks and 1 / 3 - 1e-3 <= share <= 1
                and len(medians) == ranks and all(m > 0 for m in medians)):
            fail(f"{name}: per-rank columns {per_rank}")
        # Each sample is the slowest rank's time, so no rank's median exceeds
        # the median of the samples.
        if max(medians) > float(row["median_us"]) * (1 + 1e-5):
            fail(f"{name}: a rank's median {max(medians)} above the samples' {row['median_us']}")
    bytes_ = int(row["bytes"])
    algbw = float(row["algbw_GBps"])
    if not math.isclose(algbw, bytes_ / (float(row["median_us"]) * 1e-6) / 1e9, rel_tol=1e-3):
        fail(f"{name}: algbw {algbw} is not bytes / median")
    factor = 2 * (ranks - 1) / ranks if row["family"] == "allreduce" else 1
    if not math.isclose(float(row["busbw_GBps"]), algbw * factor, rel_tol=1e-3):
        fail(f"{name}: busbw {row['busbw_GBps']} is not algbw x {factor}")
    if row["family"] == "p2p":
        if row["placement"] != "intra" or int(row["sent_bytes_per_rank"]) != bytes_:
            fail(f"{name}: placement {row['placement']} sent {row['sent_bytes_per_rank']}")
    if row["algorithm"] == "ring":
        # The bandwidth-optimal ring sends 2(p-1)/p of the vector per rank,
        # give or take the uneven split of an odd count into p chunks.
        ideal = 2 * (ranks - 1) / ranks * bytes_
        if abs(int(row["sent_bytes_per_rank"]) - ideal) > 2 * (ranks - 1) * 4:
            fail(f"{name}: ring sent {row['sent_bytes_per_rank']} bytes, ideal {ideal}")
    if row["algorithm"] == "mpi" and row["sent_bytes_per_rank"] != "":
        fail(f"{name}: MPI's own traffic is not seen by the transport, yet sent bytes are given")
    # Ranks 0 and 1 share this node: every repetition says how far apart
    # their cores were (empty allowed only when ranks outnumber the cores,
    # where the probe's 20 ms may pass before a round trip completes).
    # A probe whose 20 ms pass without a round trip (a loaded machine) leaves
    # it empty: a value must be a latency, and a run of ranks no more than
    # the cores must have at least one (below), whatever the load.
    handoff = row["core_handoff_ns"]
    if ranks == 1 and handoff != "":
        fail(f"{name}: core_handoff_ns '{handoff}' on one rank")
    if handoff != "" and not 1 <= float(handoff) <= 1e9:
        fail(f"{name}: core_handoff_ns '{handoff}' is not a latency in ns")
if 2 <= ranks <= os.cpu_count() and all(row["core_handoff_ns"] == "" for row in rows):
    fail("core_handoff_ns is empty in every row, though ranks 0 and 1 share this node")
if "," not in rows[0]["mpi_library"]:
    fail("the MPI library field lost its commas (quoting)")
print(f"{len(rows)} rows, all checked ok on {ranks} ranks")
PYTHON
echo "PASS ($scenario)"
