#!/usr/bin/env bash
# workload: --workload googlenet:ddp in f16: per-size rows and exchanges
# Usage: workload.sh COLLBENCH [NP] (ranks, default 2); see common.sh
set -euo pipefail
# shellcheck source=tests/harness_e2e/common.sh
source "$(dirname "$0")/common.sh"

algorithms=$(registry_algorithms)
run "$np" --algorithms all --dtype f16 --workload googlenet:ddp --check --csv "$work/run.csv" \
  --samples 3 --quiet
[[ $status -eq 0 ]] || { cat "$work/stderr" >&2; fail "exit status $status"; }
check_csv "$work/run.csv" "$algorithms" <<'PYTHON'
algorithms = sys.argv[2].split(",")
exchanges = {r["algorithm"]: r for r in rows if r["family"] == "exchange"}
if sorted(exchanges) != sorted(algorithms):
    fail(f"exchange rows for {sorted(exchanges)}")
per_size = [r for r in rows if r["family"] == "allreduce"]
if not per_size or any(r["workload"] != "googlenet:ddp=25MiB" or r["model"] != "googlenet" for r in per_size):
    fail("per-size rows lack the workload and model columns")
if any(r["family"] in ("p2p", "local") for r in rows):
    fail("--workload without --sizes should run only the workload's sizes")
for algorithm, exchange in exchanges.items():
    mine = [r for r in per_size if r["algorithm"] == algorithm]
    messages = int(exchange["item"].split()[0])
    if sum(int(r["multiplicity"]) for r in mine) != messages:
        fail(f"{algorithm}: multiplicities sum to {sum(int(r['multiplicity']) for r in mine)}, "
             f"the exchange has {messages} messages")
    if int(exchange["bytes"]) != sum(int(r["bytes"]) * int(r["multiplicity"]) for r in mine):
        fail(f"{algorithm}: the exchange's bytes are not the sum of its messages")
    if exchange["check"] != "ok" or exchange["dtype"] != "f16":
        fail(f"{algorithm}: {exchange['check']} {exchange['dtype']}")
print(f"{len(exchanges)} exchanges of {messages} messages, {len(per_size)} per-size rows")
PYTHON
echo "PASS ($scenario)"
