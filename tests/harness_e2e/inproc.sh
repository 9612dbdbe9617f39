#!/usr/bin/env bash
# inproc: --transport inproc --ranks NP, started alone with MPI_Init made
# fatal (COLLBENCH_FORBID_MPI_INIT preloaded): ring and tree checked, the CSV
# read back by scripts/collbench_csv.py with the rank count, transport and
# host right; a slow rank sets the time and is named; --check's wrong
# elements; the single-process refusals (mpi_bare, train, gemm, --ranks under
# mpi, under a launcher) exit 2
# Usage: COLLBENCH_FORBID_MPI_INIT=LIB inproc.sh COLLBENCH [NP] (ranks, default
# 2); see common.sh
set -euo pipefail
# shellcheck source=tests/harness_e2e/common.sh
source "$(dirname "$0")/common.sh"

forbid=${COLLBENCH_FORBID_MPI_INIT:?set COLLBENCH_FORBID_MPI_INIT to the mpi_init_forbidden library}
alone() {  # alone ARGS...: collbench without mpirun, MPI_Init fatal
  set +e
  LD_PRELOAD=$forbid "$collbench" --transport inproc "$@" >"$work/stdout" 2>"$work/stderr"
  status=$?
  set -e
}
# The preloaded MPI_Init is the one collbench would call: an MPI run dies.
set +e
LD_PRELOAD=$forbid "$collbench" --families allreduce --algorithms ring --sizes 8B --samples 1 \
  >"$work/stdout" 2>"$work/stderr"
mpi_status=$?
set -e
[[ $mpi_status -eq 97 ]] && grep -q "mpi_init_forbidden: MPI_Init" "$work/stderr" ||
  fail "the preloaded MPI_Init does not stop an MPI run (status $mpi_status): the test proves nothing"

alone --ranks "$np" --algorithms ring,tree --sizes 1KiB,1MiB --check --csv "$work/run.csv" \
  --samples 3 --quiet
[[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "exit status $status"; }
PYTHONPATH="$(dirname "$0")/../../scripts" "$python" - "$work/run.csv" "$np" "$(hostname)" <<'PYTHON' ||
import sys
import collbench_csv
path, ranks, host = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = collbench_csv.read_rows(path, ("benchmark", "transport", "ranks", "hosts"), "the inproc test")
expected = set()
for size in (1024, 1 << 20):
    expected |= {f"allreduce/{a}/{size}" for a in ("ring", "tree")}
    expected |= {f"p2p/pingpong/{size}/peer:{peer}" for peer in range(1, ranks)}
    expected |= {f"local/reduce/f32/{size}", f"local/memcpy/{size}"}
names = sorted(row["benchmark"] for row in rows)
if names != sorted(expected):
    sys.exit(f"rows {names}, expected {sorted(expected)}")
for row in rows:
    name = row["benchmark"]
    local = row["family"] == "local"
    got = (row["transport"], row["ranks"], row["nodes"], row["ranks_per_node"], row["hosts"],
           row["mpi_library"], row["mpi_mca"], row["check"], row["wrong_elements"])
    want = ("local" if local else "inproc", str(ranks), "1", str(ranks), host, "", "", "ok", "0")
    if got != want:
        sys.exit(f"{name}: {got}, expected {want}")
    if row["family"] == "allreduce" and len(row["rank_median_us"].split(";")) != ranks:
        sys.exit(f"{name}: rank medians {row['rank_median_us']} for {ranks} ranks")
    # The ranks' sends are counted (the Runner instruments the group's
    # transports): the ring's 2(p-1) blocks of n/p per call.
    if name.startswith("allreduce/ring/"):
        size = int(row["bytes"])
        if row["sent_bytes_per_rank"] != str(2 * (ranks - 1) * size // ranks):
            sys.exit(f"{name}: sent_bytes_per_rank {row['sent_bytes_per_rank']}")
print(f"{len(rows)} rows of {ranks} ranks in one process, MPI never initialized")
PYTHON
  fail "CSV check of $work/run.csv failed"

# --transport=KIND is read as CLI11 reads it, before MPI would start.
set +e
LD_PRELOAD=$forbid "$collbench" --transport=inproc --ranks 2 --families allreduce \
  --algorithms ring --sizes 8B --samples 1 --quiet >"$work/stdout" 2>"$work/stderr"
status=$?
set -e
[[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "--transport=inproc: exit status $status"; }

# --families barrier: the transport's own barrier and the dissemination
# one over its messages, every rank's time, no bytes, nothing to check.
alone --ranks "$np" --families barrier --check --samples 3 --quiet --csv "$work/barrier.csv"
[[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "barrier: exit status $status"; }
check_csv "$work/barrier.csv" "$np" <<'PYTHON'
ranks = int(sys.argv[2])
got = sorted((r["benchmark"], r["family"], r["algorithm"], r["transport"], r["bytes"], r["check"],
              r["samples"], r["calls_per_sample"]) for r in rows)
want = [("barrier/communicator", "barrier", "communicator", "inproc", "0", "ok", "3", "1"),
        ("barrier/dissemination", "barrier", "dissemination", "inproc", "0", "ok", "3", "1")]
if got != want:
    fail(f"barrier rows {got}, expected {want}")
for row in rows:
    if float(row["median_us"]) <= 0 or len(row["rank_median_us"].split(";")) != ranks:
        fail(f"{row['benchmark']}: median {row['median_us']}, rank medians {row['rank_median_us']}")
# The dissemination barrier's empty messages go through the counted endpoint;
# the threads' shared barrier sends none.
sent = {r["algorithm"]: r["sent_bytes_per_rank"] for r in rows}
if sent != {"communicator": "", "dissemination": "0"}:
    fail(f"sent_bytes_per_rank {sent}")
PYTHON

# The slowest rank sets every sample's time (its sleep is in the minimum),
# and is named.
delay_us=50000
slow=$((np - 1))
alone --ranks "$np" --families allreduce --algorithms ring --sizes 1KiB --samples 5 --quiet \
  --debug-slow-rank "$slow" --debug-slow-us "$delay_us" --csv "$work/slow.csv"
[[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "slow rank: exit status $status"; }
check_csv "$work/slow.csv" "$delay_us" "$slow" <<'PYTHON'
delay, slow = float(sys.argv[2]), int(sys.argv[3])
row = rows[0]
medians = [float(m) for m in row["rank_median_us"].split(";")]
if len(rows) != 1 or float(row["min_us"]) < delay or int(row["slowest_rank"]) != slow \
        or medians[slow] < delay:
    fail(f"slow rank {slow}: min {row['min_us']} us, slowest {row['slowest_rank']}, medians {medians}")
PYTHON

# Wrong elements of every rank count: the last rank's are corrupted.
alone --ranks "$np" --families allreduce --algorithms ring,tree --sizes 64B --check \
  --debug-corrupt-elements 3 --samples 1 --quiet --csv "$work/wrong.csv"
[[ $status -eq 1 ]] || { cat "$work/stderr" >&2; fail "--check with corrupt elements: exit status $status, expected 1"; }
grep -q "^collbench: --check found wrong results in 2 benchmarks: allreduce/ring/64 (3 wrong)" \
  "$work/stderr" || { cat "$work/stderr" >&2; fail "no summary of the wrong results"; }
grep -q "first: rank $((np - 1)), element 0: got" "$work/stdout" ||
  { cat "$work/stdout" >&2; fail "the first wrong element is not the last rank's"; }

# Refused, each with one line and status 2, and no file.
refused() {  # refused FRAGMENT ARGS...
  local fragment=$1
  shift
  set +e
  LD_PRELOAD=$forbid "$@" --csv "$work/refused.csv" >"$work/stdout" 2>"$work/stderr"
  status=$?
  set -e
  [[ $status -eq 2 && $(wc -l <"$work/stderr") -eq 1 ]] && grep -qF -- "$fragment" "$work/stderr" ||
    { cat "$work/stderr" >&2; fail "$* : status $status, expected 2 and one line with '$fragment'"; }
  [[ ! -e $work/refused.csv ]] || fail "$* : left $work/refused.csv"
}
refused "--transport inproc runs every rank in this process and needs --ranks N" \
  "$collbench" --transport inproc
refused "--families mpi_bare cannot run with --transport inproc: it calls the MPI library" \
  "$collbench" --transport inproc --ranks 2 --families mpi_bare
refused "--families train cannot run with --transport inproc" \
  "$collbench" --transport inproc --ranks 2 --families train --workload googlenet:ddp
refused "--families gemm cannot run with --transport inproc" \
  "$collbench" --transport inproc --ranks 2 --families gemm
refused "cannot start under mpirun or srun (OMPI_COMM_WORLD_RANK is set)" \
  env OMPI_COMM_WORLD_RANK=0 "$collbench" --transport inproc --ranks 2
echo "PASS ($scenario)"
