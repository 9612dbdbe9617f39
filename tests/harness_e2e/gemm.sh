#!/usr/bin/env bash
# gemm: --families gemm: the peak first, then every distinct layer of alexnet
# per batch and pass, checked, with rate and efficiency that follow from flops
# and the medians
# Usage: gemm.sh COLLBENCH; see common.sh
set -euo pipefail
# shellcheck source=tests/harness_e2e/common.sh
source "$(dirname "$0")/common.sh"

run 2 --families gemm --gemm-models alexnet --gemm-batches 1,2 --check --samples 2 \
  --csv "$work/gemm.csv"
[[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "exit status $status"; }
check_csv "$work/gemm.csv" <<'PYTHON'
if rows[0]["benchmark"] != "local/gemm/peak/2048" or rows[0]["pass"] != "peak":
    fail(f"the first row is {rows[0]['benchmark']}, not the peak")
peak = float(rows[0]["gflops"])
groups = {}
for row in rows:
    name = row["benchmark"]
    if row["check"] != "ok" or row["family"] != "local" or row["algorithm"] != "gemm":
        fail(f"{name}: check {row['check']}, family {row['family']}")
    if "OpenBLAS" not in row["blas"] or "OPENBLAS_CORETYPE=" not in row["blas"]:
        fail(f"{name}: blas column {row['blas']!r}")
    flops, median, gflops = float(row["flops"]), float(row["median_us"]), float(row["gflops"])
    if abs(gflops - flops / median / 1e3) > 1e-4 * gflops:
        fail(f"{name}: {gflops} GFLOP/s is not {flops} FLOP in {median} us")
    if abs(float(row["efficiency"]) - gflops / peak) > 1e-3 * gflops / peak + 1e-4:
        fail(f"{name}: efficiency {row['efficiency']} is not {gflops} / {peak}")
    if row["pass"] == "peak":
        continue
    if row["model"] != "alexnet" or not name.startswith(f"local/gemm/alexnet/{row['batch']}/{row['pass']}/"):
        fail(f"{name}: model {row['model']}, batch {row['batch']}, pass {row['pass']}")
    key = (row["batch"], row["pass"])
    groups[key] = groups.get(key, 0) + int(row["multiplicity"])
# AlexNet: 5 convolutions and 3 linear layers, at 2 batches, forward and backward.
if groups != {(b, p): 8 for b in ("1", "2") for p in ("forward", "backward")}:
    fail(f"layers per batch and pass: {groups}")
PYTHON
echo "PASS ($scenario)"
