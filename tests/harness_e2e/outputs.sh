#!/usr/bin/env bash
# outputs: repetitions (back to back, or in rounds with --interleave),
# --benchmark_out JSON, --append and --force
# Usage: outputs.sh COLLBENCH; see common.sh
set -euo pipefail
# shellcheck source=tests/harness_e2e/common.sh
source "$(dirname "$0")/common.sh"

args=(--algorithms ring,mpi --families allreduce,local --sizes 256B,8KiB --quiet
  --samples 3 --benchmark_repetitions=2)
run 2 "${args[@]}" --csv "$work/run.csv" --benchmark_out="$work/run.json" \
  --benchmark_out_format=json
[[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "exit status $status"; }
"$python" - "$work/run.json" <<'PYTHON' || fail "JSON output"
import json, sys
report = json.load(open(sys.argv[1]))
runs = [b for b in report["benchmarks"] if b["run_type"] == "iteration"]
aggregates = [b for b in report["benchmarks"] if b["run_type"] == "aggregate"]
if len(runs) != 16 or not aggregates:
    sys.exit(f"{len(runs)} iteration runs, {len(aggregates)} aggregates")
if any("median_us" not in b or "busbw_GBps" not in b for b in runs):
    sys.exit("counters missing from the JSON")
# The core handoff counter is absent where its probe timed out (load).
if not any("core_handoff_ns" in b for b in runs):
    sys.exit("core_handoff_ns missing from every JSON run")
if report["context"].get("collbench_ranks") != "2":
    sys.exit("run metadata missing from the JSON context")
PYTHON
check_csv "$work/run.csv" <<'PYTHON'
from collections import Counter
per_benchmark = Counter((r["benchmark"], r["repetition"]) for r in rows)
if len(rows) != 16 or set(per_benchmark.values()) != {1} or {r["repetition"] for r in rows} != {"0", "1"}:
    fail(f"{len(rows)} rows: {per_benchmark}")
# Without --interleave a benchmark's repetitions run back to back.
order = list(dict.fromkeys(r["benchmark"] for r in rows))
if [(r["benchmark"], r["repetition"]) for r in rows] != [(b, str(k)) for b in order for k in (0, 1)]:
    fail(f"repetitions not back to back: {[(r['benchmark'], r['repetition']) for r in rows]}")
# Two ranks on one node, one core each at most: every repetition has its
# own core-to-core handoff latency, in ns.
handoffs = [r["core_handoff_ns"] for r in rows]
if not any(handoffs) or not all(1 <= float(h) <= 1e9 for h in handoffs if h):
    fail(f"core_handoff_ns {handoffs}")
PYTHON
run 2 "${args[@]}" --csv "$work/run.csv"
[[ $status -eq 2 ]] || fail "an existing CSV was not refused (status $status)"
grep -q "use --append or --force" "$work/stderr" || fail "refusal does not say what to do"
run 2 "${args[@]}" --csv "$work/run.csv" --append
[[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "--append: exit status $status"; }
check_csv "$work/run.csv" <<'PYTHON'
if len(rows) != 32 or len({r["run_id"] for r in rows}) != 2:
    fail(f"--append: {len(rows)} rows from {len({r['run_id'] for r in rows})} runs")
PYTHON
run 2 "${args[@]}" --csv "$work/run.csv" --force --benchmark_filter='^allreduce/mpi/'
[[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "--force: exit status $status"; }
check_csv "$work/run.csv" <<'PYTHON'
names = sorted({r["benchmark"] for r in rows})
if len(rows) != 4 or names != ["allreduce/mpi/256", "allreduce/mpi/8192"]:
    fail(f"--force with a filter: {len(rows)} rows of {names}")
PYTHON
# --interleave: rounds of every benchmark once, numbered in the CSV;
# Google Benchmark sees one repetition per registration (no aggregates).
run 2 "${args[@]}" --interleave --benchmark_repetitions=3 --csv "$work/rounds.csv" \
  --benchmark_out="$work/rounds.json" --benchmark_out_format=json
[[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "--interleave: exit status $status"; }
check_csv "$work/rounds.csv" <<'PYTHON'
order = list(dict.fromkeys(r["benchmark"] for r in rows))
got = [(r["benchmark"], r["repetition"]) for r in rows]
if len(order) != 8 or got != [(b, str(k)) for k in (0, 1, 2) for b in order]:
    fail(f"--interleave: rows are not rounds of all 8 benchmarks: {got}")
if not all(r["median_us"] and float(r["median_us"]) > 0 for r in rows):
    fail("--interleave: a row without a time")
PYTHON
"$python" - "$work/rounds.json" <<'PYTHON' || fail "--interleave JSON output"
import json, sys
report = json.load(open(sys.argv[1]))
kinds = [b["run_type"] for b in report["benchmarks"]]
names = {b["name"] for b in report["benchmarks"]}
if kinds != ["iteration"] * 24 or not all(n.endswith("/repeats:1/manual_time") for n in names):
    sys.exit(f"{len(kinds)} runs ({set(kinds)}), names {sorted(names)[:2]}")
PYTHON
run 2 "${args[@]}" --interleave --benchmark_repetitions=3 --csv "$work/rounds.csv" --force \
  --benchmark_filter='^allreduce/mpi/'
[[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "--interleave filter: exit $status"; }
check_csv "$work/rounds.csv" <<'PYTHON'
got = [(r["benchmark"], r["repetition"]) for r in rows]
want = [(f"allreduce/mpi/{n}", str(k)) for k in (0, 1, 2) for n in (256, 8192)]
if got != want:
    fail(f"--interleave with a filter: {got}")
PYTHON
echo "PASS ($scenario)"
