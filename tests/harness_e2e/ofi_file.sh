#!/usr/bin/env bash
# ofi_file: --transport ofi --bootstrap file:DIR --rank R --ranks 2 on
# libfabric's shm provider, two processes started by hand with MPI_Init made
# fatal: checked rows of ofi/shm on 2 ranks whose sent bytes are the
# algorithm's alone (the harness's own messages kept out), DIR empty after; a
# stale DIR is exit 2 naming the file, at once
# Usage: COLLBENCH_FORBID_MPI_INIT=LIB ofi_file.sh COLLBENCH; see common.sh
set -euo pipefail
# shellcheck source=tests/harness_e2e/common.sh
source "$(dirname "$0")/common.sh"

forbid=${COLLBENCH_FORBID_MPI_INIT:?set COLLBENCH_FORBID_MPI_INIT to the mpi_init_forbidden library}
folder=$work/meet
mkdir "$folder"
args=(--transport ofi --ofi-provider shm --bootstrap "file:$folder" --ranks 2 --families allreduce,p2p
      --algorithms ring,tree --sizes 1KiB,1MiB --check --samples 3 --quiet --timeout 60)
LD_PRELOAD=$forbid timeout 120 "$collbench" "${args[@]}" --rank 1 >"$work/rank1.out" 2>&1 &
rank1=$!
set +e
LD_PRELOAD=$forbid timeout 120 "$collbench" "${args[@]}" --rank 0 --csv "$work/run.csv" \
  >"$work/stdout" 2>"$work/stderr"
status=$?
wait "$rank1"
status1=$?
set -e
[[ $status -eq 0 && $status1 -eq 0 ]] ||
  { cat "$work/stderr" "$work/rank1.out" >&2; fail "exit status $status (rank 1: $status1)"; }
[[ -z $(ls -A "$folder") ]] || fail "the bootstrap folder is not empty: $(ls -A "$folder")"
check_csv "$work/run.csv" <<'PYTHON'
expected = {f"allreduce/{a}/{n}" for a in ("ring", "tree") for n in (1024, 1 << 20)}
expected |= {f"p2p/pingpong/{n}/peer:1" for n in (1024, 1 << 20)}
if sorted(row["benchmark"] for row in rows) != sorted(expected):
    fail(f"rows {[row['benchmark'] for row in rows]}")
for row in rows:
    got = (row["transport"], row["ranks"], row["check"], row["mpi_library"])
    if got != ("ofi", "2", "ok", "") or "shm" not in row["provider"]:
        fail(f"{row['benchmark']}: {got}, provider {row['provider']}")
    # ring and tree at p = 2 send the vector once, the ping-pong its message:
    # the harness's own barriers and reductions over the transport do not count.
    if int(row["sent_bytes_per_rank"]) != int(row["bytes"]):
        fail(f"{row['benchmark']}: {row['sent_bytes_per_rank']} bytes sent for {row['bytes']}")
print("ofi over a file bootstrap, no MPI:", len(rows), "rows")
PYTHON
# The slowest rank's time, reduced over the transport: rank 1 sleeps.
slow=(--transport ofi --ofi-provider shm --bootstrap "file:$folder" --ranks 2 --families allreduce
      --algorithms ring --sizes 1KiB --samples 3 --quiet --timeout 60 --debug-slow-rank 1
      --debug-slow-us 50000)
LD_PRELOAD=$forbid timeout 120 "$collbench" "${slow[@]}" --rank 1 >"$work/rank1.out" 2>&1 &
rank1=$!
set +e
LD_PRELOAD=$forbid timeout 120 "$collbench" "${slow[@]}" --rank 0 --csv "$work/slow.csv" \
  >"$work/stdout" 2>"$work/stderr"
status=$?
wait "$rank1"
status1=$?
set -e
[[ $status -eq 0 && $status1 -eq 0 ]] ||
  { cat "$work/stderr" "$work/rank1.out" >&2; fail "slow rank: exit status $status (rank 1: $status1)"; }
check_csv "$work/slow.csv" <<'PYTHON'
row = rows[0]
if float(row["min_us"]) < 50000 or row["slowest_rank"] != "1":
    fail(f"slow rank 1: min {row['min_us']} us, slowest rank {row['slowest_rank']}")
PYTHON
# The check's agreement over the transport: rank 1's 3 corrupt elements
# fail the run on both ranks, and rank 0 names them.
corrupt=(--transport ofi --ofi-provider shm --bootstrap "file:$folder" --ranks 2 --families allreduce
         --algorithms ring --sizes 64B --check --debug-corrupt-elements 3 --samples 1 --quiet
         --timeout 60)
LD_PRELOAD=$forbid timeout 120 "$collbench" "${corrupt[@]}" --rank 1 >"$work/rank1.out" 2>&1 &
rank1=$!
set +e
LD_PRELOAD=$forbid timeout 120 "$collbench" "${corrupt[@]}" --rank 0 >"$work/stdout" 2>"$work/stderr"
status=$?
wait "$rank1"
status1=$?
set -e
[[ $status -eq 1 && $status1 -eq 1 ]] ||
  { cat "$work/stderr" "$work/rank1.out" >&2; fail "corrupt elements: exit status $status (rank 1: $status1), expected 1"; }
grep -q "^collbench: --check found wrong results in 1 benchmark: allreduce/ring/64 (3 wrong)" \
  "$work/stderr" && grep -q "first: rank 1, element 0: got" "$work/stdout" ||
  { cat "$work/stderr" "$work/stdout" >&2; fail "corrupt elements: rank 1's not named"; }

# A folder left by another job is refused at once, not waited on.
stale=$work/stale
mkdir "$stale"
echo "another job" >"$stale/rank0.round0"
set +e
LD_PRELOAD=$forbid timeout 60 "$collbench" --transport ofi --bootstrap "file:$stale" --rank 0 \
  --ranks 2 --csv "$work/stale.csv" >"$work/stdout" 2>"$work/stderr"
status=$?
set -e
[[ $status -eq 2 ]] && grep -q "rank0.round0 exists as this rank starts" "$work/stderr" ||
  { cat "$work/stderr" >&2; fail "stale folder: exit status $status"; }
[[ ! -e $work/stale.csv ]] || fail "stale folder: a CSV was created"
echo "PASS ($scenario)"
