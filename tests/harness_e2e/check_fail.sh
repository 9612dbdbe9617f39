#!/usr/bin/env bash
# check_fail: --debug-corrupt-elements: --check reports them, exit 1, in every
# round of --interleave and in an exchange whose messages share slots, not in
# train/none (no exchange); without the connection warm-up the peers-contacted
# check stops the run
# Usage: check_fail.sh COLLBENCH; see common.sh
set -euo pipefail
# shellcheck source=tests/harness_e2e/common.sh
source "$(dirname "$0")/common.sh"

run 3 --algorithms ring,tree --families allreduce --sizes 64B,4KiB --check \
  --debug-corrupt-elements 3 --csv "$work/run.csv" --samples 3 --quiet
[[ $status -eq 1 ]] || fail "exit status $status, expected 1"
grep -q "^collbench: --check found wrong results in 4 benchmarks: allreduce/ring/64 (3 wrong)" \
  "$work/stderr" || { cat "$work/stderr" >&2; fail "no summary of the wrong results"; }
grep -q "ERROR OCCURRED: '--check: 3 wrong elements (first: rank 2, element 0: got" \
  "$work/stdout" || { cat "$work/stdout" >&2; fail "the console does not show the error"; }
check_csv "$work/run.csv" <<'PYTHON'
if len(rows) != 4:
    fail(f"{len(rows)} rows instead of 4")
for row in rows:
    if row["check"] != "wrong" or row["wrong_elements"] != "3" or row["median_us"] != "":
        fail(f"{row['benchmark']}: check={row['check']} wrong={row['wrong_elements']} median={row['median_us']}")
PYTHON
# --interleave rebuilds the algorithm object every round: each round's is
# checked, so each finds the 3 wrong elements (6 in all), and every row
# reports its own round's check.
run 3 --algorithms ring,tree --families allreduce --sizes 64B --check --interleave \
  --benchmark_repetitions=2 --debug-corrupt-elements 3 --csv "$work/rounds.csv" --samples 3 --quiet
[[ $status -eq 1 ]] || fail "--interleave: exit status $status, expected 1"
grep -q "^collbench: --check found wrong results in 2 benchmarks: allreduce/ring/64 (6 wrong), allreduce/tree/64 (6 wrong)" \
  "$work/stderr" || { cat "$work/stderr" >&2; fail "--interleave: not every round was checked"; }
check_csv "$work/rounds.csv" <<'PYTHON'
rounds = sorted((r["benchmark"], r["repetition"]) for r in rows)
if rounds != [(f"allreduce/{a}/64", n) for a in ("ring", "tree") for n in ("0", "1")]:
    fail(f"rows {rounds}")
for row in rows:
    if row["check"] != "wrong" or row["wrong_elements"] != "3":
        fail(f"{row['benchmark']} round {row['repetition']}: check={row['check']} wrong={row['wrong_elements']}")
PYTHON

# An exchange whose messages share slots (every FSDP unit's two
# allgathers, --debug-share-messages-from lowered to 1 KiB): checked
# message by message, right and then with 3 wrong elements on one.
run 3 --algorithms ring --families exchange --dtype bf16 --workload resnet50:fsdp \
  --debug-share-messages-from 1024 --check --csv "$work/shared.csv" --samples 2 --quiet
[[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "shared slots: exit status $status"; }
check_csv "$work/shared.csv" <<'PYTHON'
if len(rows) != 1 or rows[0]["check"] != "ok" or rows[0]["collective"] != "allgather+reduce_scatter":
    fail(f"shared slots: {[(r['benchmark'], r['check'], r['collective']) for r in rows]}")
PYTHON
run 3 --algorithms ring --families exchange --dtype bf16 --workload resnet50:fsdp \
  --debug-share-messages-from 1024 --check --debug-corrupt-elements 3 \
  --csv "$work/shared_wrong.csv" --samples 2 --quiet
[[ $status -eq 1 ]] || fail "shared slots, corrupted: exit status $status, expected 1"
check_csv "$work/shared_wrong.csv" <<'PYTHON'
if len(rows) != 1 or rows[0]["check"] != "wrong" or rows[0]["wrong_elements"] != "3":
    fail(f"shared slots, corrupted: {[(r['check'], r['wrong_elements']) for r in rows]}")
PYTHON
# MoE: skewed dispatches and combines (the combine's input is the expert
# side's p shares, its output the whole vector), every dispatch on one
# slot and every combine on another: right, then with 3 wrong elements.
for corrupt in 0 3; do
  run 3 --algorithms pairwise,mpi --families exchange --dtype bf16 \
    --workload mixtral_8x7b:moe:seq=8:skew=1.2 --debug-share-messages-from 1024 --check \
    --debug-corrupt-elements "$corrupt" --csv "$work/moe_$corrupt.csv" --samples 2 --quiet
  [[ $status -eq $((corrupt > 0 ? 1 : 0)) ]] ||
    { cat "$work/stderr" >&2; fail "moe, $corrupt corrupted: exit status $status"; }
  check_csv "$work/moe_$corrupt.csv" "$corrupt" <<'PYTHON'
corrupt = sys.argv[2]
got = sorted((r["algorithm"], r["check"], r["wrong_elements"], r["collective"]) for r in rows)
verdict = "ok" if corrupt == "0" else "wrong"
if got != [(a, verdict, corrupt, "alltoallv") for a in ("mpi", "pairwise")]:
    fail(f"moe, {corrupt} corrupted: {got}")
PYTHON
done

# train: with the exchange corrupted, train/none (its GEMMs alone, no
# exchange) checks only what it ran and stays ok; train/ring is wrong.
run 2 --families train --workload googlenet:ddp --algorithms ring --train-batch 1 \
  --compute-scale 0.25 --check --debug-corrupt-elements 3 --csv "$work/train_wrong.csv" \
  --samples 2 --quiet
[[ $status -eq 1 ]] || { cat "$work/stderr" >&2; fail "train, corrupted: exit status $status"; }
check_csv "$work/train_wrong.csv" <<'PYTHON'
got = sorted((r["benchmark"].split("/")[0], r["algorithm"], r["check"], r["wrong_elements"])
             for r in rows)
want = [("exchange", "ring", "wrong", "3"), ("train", "none", "ok", "0"),
        ("train", "ring", "wrong", "3")]
if got != want:
    fail(f"train, corrupted: {got}, expected {want}")
PYTHON

# The check that every peer was addressed before timing: without the
# connection warm-up, tree at 4 ranks reaches only its tree neighbours
# (rank 3 only rank 2), and the run must stop before its first timed call.
run 4 --algorithms tree --families allreduce --sizes 64B --debug-skip-connection-warmup \
  --csv "$work/unwarmed.csv" --samples 3 --quiet
[[ $status -ne 0 ]] || fail "no connection warm-up: exit status 0"
grep -q "before timing: the connection warm-up (Runner::connect_every_pair) did not reach them all" \
  "$work/stderr" || { cat "$work/stderr" >&2; fail "no connection warm-up: not refused"; }
echo "PASS ($scenario)"
