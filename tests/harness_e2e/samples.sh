#!/usr/bin/env bash
# samples: the sample floor (--min-samples, default 10) where min_time would
# give fewer, and --samples N exactly, whatever min_time
# Usage: samples.sh COLLBENCH [NP] (ranks, default 2); see common.sh
set -euo pipefail
# shellcheck source=tests/harness_e2e/common.sh
source "$(dirname "$0")/common.sh"

# The floor holds where Google Benchmark's time rule would stop sooner:
# with --benchmark_min_time=0 it takes its first call, which runs the
# floor (1 sample without it). --samples fixes the count even where
# min_time asks for far more (5 s for each of the 8 rows, in 2 repetitions).
common=(--algorithms ring --families allreduce,p2p,local --sizes 64B,64KiB --quiet)
run "$np" "${common[@]}" --benchmark_min_time=0 --csv "$work/default.csv"
[[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "default floor: exit status $status"; }
run "$np" "${common[@]}" --benchmark_min_time=0 --min-samples 7 --csv "$work/floor.csv"
[[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "--min-samples: exit status $status"; }
run "$np" "${common[@]}" --benchmark_min_time=5 --samples 4 --benchmark_repetitions=2 \
  --csv "$work/fixed.csv"
[[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "--samples: exit status $status"; }
for expected in default:10 floor:7 fixed:4; do
  check_csv "$work/${expected%%:*}.csv" "${expected##*:}" "$np" <<'PYTHON'
samples, ranks = sys.argv[2], int(sys.argv[3])
kinds = {r["algorithm"] for r in rows}
if kinds != {"ring", "pingpong", "reduce", "memcpy"}:
    fail(f"algorithms {sorted(kinds)}")
for row in rows:
    got = (row["samples"], row["min_samples"])
    if got != (samples, samples) or int(row["iterations"]) != int(samples) * int(row["calls_per_sample"]):
        fail(f"{row['benchmark']} rep {row['repetition']}: samples and floor {got}, "
             f"{row['iterations']} iterations of {row['calls_per_sample']} calls, expected {samples} samples")
print(f"{len(rows)} rows of {samples} samples each")
PYTHON
done
# --interleave checks every round, after calibration has batched many
# kernel calls into a sample: the check still makes one call (a local
# reduce summed src into dst thousands of times, and failed from round 2).
run "$np" --families local,reduce_all --sizes 64B,64KiB --check --interleave \
  --benchmark_repetitions=3 --quiet --csv "$work/interleaved.csv"
[[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "--check --interleave: exit status $status"; }
check_csv "$work/interleaved.csv" <<'PYTHON'
rounds = {r["repetition"] for r in rows}
batched = [r for r in rows if int(r["calls_per_sample"]) > 1]
if len(rounds) != 3 or not batched:
    fail(f"rounds {sorted(rounds)}, {len(batched)} rows of batched calls: not what this tests")
for row in rows:
    if row["check"] != "ok":
        fail(f"{row['benchmark']} round {row['repetition']}: check {row['check']}")
print(f"{len(rows)} local rows in 3 rounds, every one checked ok")
PYTHON
echo "PASS ($scenario)"
