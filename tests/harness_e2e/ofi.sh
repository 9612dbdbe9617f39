#!/usr/bin/env bash
# ofi: --transport ofi on libfabric's shm provider (allreduce, p2p, sendrecv);
# unknown provider
# Usage: ofi.sh COLLBENCH; see common.sh
set -euo pipefail
# shellcheck source=tests/harness_e2e/common.sh
source "$(dirname "$0")/common.sh"

# The hand-written algorithms over libfabric's shared-memory provider; the
# MPI library's allreduce cannot run there and is skipped with a note.
run 3 --transport ofi --ofi-provider shm --sizes 8B,4KiB,1MiB --check --quiet \
  --samples 3 --csv "$work/run.csv"
[[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "exit status $status"; }
grep -qF "collbench: note: skipping allreduce/mpi on 3 ranks (3 sizes, 8 B..1 MiB): needs the mpi transport" \
  "$work/stderr" || { cat "$work/stderr" >&2; fail "no note for the skipped mpi algorithm"; }
# The table's hand-written allreduce algorithms, as --list-algorithms says.
hand_written=$("$collbench" --list-algorithms --csv |
  awk -F, '$2 == "allreduce" && $4 == "hand-written"' | wc -l)
check_csv "$work/run.csv" "$hand_written" <<'PYTHON'
collective = [r for r in rows if r["family"] in ("allreduce", "p2p")]
# 3 sizes of every hand-written allreduce algorithm, 3 ping-pong sizes with 2 peers.
if len(collective) != 3 * int(sys.argv[2]) + 3 * 2:
    fail(f"{len(collective)} allreduce and p2p rows for {sys.argv[2]} hand-written algorithms")
for row in collective:
    if (row["transport"], row["provider"], row["check"]) != ("ofi", "shm", "ok") or not row["libfabric_version"]:
        fail(f"{row['benchmark']}: {row['transport']} {row['provider']} {row['check']} '{row['libfabric_version']}'")
PYTHON
# The sendrecv chain goes through the transport too.
run 3 --transport ofi --ofi-provider shm --families sendrecv --sizes 8B,1MiB --check --quiet \
  --samples 3 --csv "$work/sendrecv.csv"
[[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "sendrecv: exit status $status"; }
check_csv "$work/sendrecv.csv" <<'PYTHON'
if sorted(r["benchmark"] for r in rows) != ["p2p/sendrecv/1048576", "p2p/sendrecv/8"]:
    fail(f"sendrecv over ofi: {[r['benchmark'] for r in rows]}")
for row in rows:
    if (row["transport"], row["provider"], row["algorithm"], row["check"]) != ("ofi", "shm", "sendrecv", "ok"):
        fail(f"{row['benchmark']}: {row['transport']} {row['provider']} {row['algorithm']} {row['check']}")
    if not 0 < float(row["median_us"]) or int(row["sent_bytes_per_rank"]) != int(row["bytes"]):
        fail(f"{row['benchmark']}: median {row['median_us']} sent {row['sent_bytes_per_rank']}")
PYTHON
run 2 --transport ofi --ofi-provider no_such_provider --sizes 8B --csv "$work/bad.csv"
[[ $status -eq 2 ]] || fail "an unknown provider gave status $status"
grep -qF "collbench: --transport ofi --ofi-provider no_such_provider: " "$work/stderr" ||
  { cat "$work/stderr" >&2; fail "the unknown provider is not named"; }
[[ ! -e $work/bad.csv ]] || fail "an output file was created for an unknown provider"
echo "PASS ($scenario)"
