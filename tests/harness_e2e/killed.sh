#!/usr/bin/env bash
# killed: a run killed midway keeps every finished row, none torn
# Usage: killed.sh COLLBENCH; see common.sh
set -euo pipefail
# shellcheck source=tests/harness_e2e/common.sh
source "$(dirname "$0")/common.sh"

# Without --quiet and off a terminal, no progress either: stderr stays clean.
# 300 samples of each of 140 benchmarks up to 4 MiB: far longer than the
# few rows it takes to kill it.
"${mpirun[@]}" -np 2 "$collbench" --algorithms all --sizes 8B:4MiB --families allreduce \
  --samples 300 --csv "$work/run.csv" >"$work/stdout" 2>"$work/stderr" &
mpirun_pid=$!
for _ in $(seq 1 600); do
  [[ -f $work/run.csv && $(wc -l <"$work/run.csv") -ge 6 ]] && break
  sleep 0.1
done
kill -TERM "$mpirun_pid"
wait "$mpirun_pid" || true
check_csv "$work/run.csv" <<'PYTHON'
if not 5 <= len(rows) < 7 * 20:
    fail(f"{len(rows)} rows survived the kill")
if any(r["median_us"] == "" for r in rows):
    fail("a surviving row is incomplete")
print(f"{len(rows)} complete rows survived")
PYTHON
if grep -q $'\r' "$work/stderr"; then fail "progress line written to a file"; fi
echo "PASS ($scenario)"
