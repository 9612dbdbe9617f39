#!/usr/bin/env bash
# keuper_sim.sh: Keuper & Pfreundt's strong-scaling scenarios (results/paper/)
# by simulation, beside the paper's setting and collbench-predict.
#
# For each scenario of collbench-predict --preset keuper2016 with measured
# compute (its scaling.csv: the model, the global batch B, the network) and
# each algorithm, runs scripts/scale.sh MODEL:total --modes strong
# --global-batch B --no-overlap on the preset's network (a star): the whole
# gradient as one allreduce per iteration after the backward pass, each
# rank's compute measured on this machine's GEMMs at B/p samples, p = 1, 2,
# 4, ... up to B (the batch limit). Writes OUT/simulated.csv (the
# `simscaling` columns of results/README.md, every scenario and algorithm)
# and OUT/simulated.png (speedup against p per model: simulated, and
# collbench-predict's with the same compute, and the paper's Table I CPU
# compute falling as 1/p); prints where each simulated curve peaks and why
# it stops there.
#
# Usage: keuper_sim.sh [options]
# Options:
#   --paper FILE        collbench-predict --preset keuper2016 --compute-from's scaling.csv
#                       (default: results/paper/scaling.csv)
#   --out-dir DIR       where simulated.csv and simulated.png go (default: results/paper/simulated)
#   --build DIR         build folder (default: $COLLBENCH_BUILD, else build/ of this checkout)
#   --compute-from FILE harness CSV with gemm rows (default: results/gemm/gemm.csv)
#   --algorithms LIST   allreduce algorithms (default: ring,tree,ps_central)
#   --python PATH       Python with matplotlib (default: /usr/bin/python3)
#   -h, --help          this text
# Exit status: 0 done, 2 bad input (one line on stderr), 1 a tool failed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_dir=$(dirname "$here")
usage() { sed -n '2,/^# Exit status/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
bad() { echo "keuper_sim.sh: $*" >&2; exit 2; }

paper=$source_dir/results/paper/scaling.csv
out_dir=$source_dir/results/paper/simulated
build=${COLLBENCH_BUILD:-$source_dir/build}
compute_from=$source_dir/results/gemm/gemm.csv
algorithms=ring,tree,ps_central
python=/usr/bin/python3
# shellcheck source=SCRIPTDIR/lib_options.sh
source "$here/lib_options.sh"
# shellcheck disable=SC2034  # read by parse_options
declare -A option_variables=([--paper]=paper [--out-dir]=out_dir [--build]=build
  [--compute-from]=compute_from [--algorithms]=algorithms [--python]=python)
parse_options option_variables "$@"
((${#arguments[@]} == 0)) || bad "unknown argument ${arguments[0]} (see --help)"
[[ -f $paper ]] || bad "--paper $paper: no such file"
[[ -f $compute_from ]] || bad "--compute-from $compute_from: no such file"
algorithm_list=()
for algorithm in ${algorithms//,/ }; do
  [[ " ${algorithm_list[*]} " != *" $algorithm "* ]] || bad "--algorithms: '$algorithm' given twice"
  algorithm_list+=("$algorithm")
done
((${#algorithm_list[@]} > 0)) || bad "--algorithms '$algorithms' names no algorithm"
# The scenarios with measured compute: model, batch, network.
scenarios=$(PYTHONPATH=$here python3 - "$paper" <<'PYTHON'
import sys
import collbench_csv
rows = collbench_csv.read_rows(sys.argv[1], ("model", "batch", "compute_model", "network",
                                             "scaling"), "keuper_sim.sh", {})
seen = []
for r in rows:
    key = (r["model"], r["batch"], r["network"])
    if r["compute_model"] == "measured" and r["scaling"] == "strong" and key not in seen:
        seen.append(key)
if not seen:
    sys.exit(f"keuper_sim.sh: {sys.argv[1]}: no strong-scaling scenario with measured compute "
             "(make it with collbench-predict --preset keuper2016 --compute-from FILE)")
for key in seen:
    print(*key)
PYTHON
) || bad "--paper $paper is not collbench-predict's scaling.csv of --preset keuper2016 --compute-from"
make_out_dir "$out_dir"
work=$(mktemp -d "${TMPDIR:-/tmp}/keuper_sim.XXXXXX")
trap 'rm -rf "$work"; unmake_out_dir' EXIT

while read -r model batch network; do
  ranks=""
  for ((p = 2; p <= batch; p *= 2)); do ranks+=${ranks:+,}$p; done
  for algorithm in "${algorithm_list[@]}"; do
    # scale.sh judges the rest (a bad algorithm, a missing tool): its own
    # line on stderr and its exit status.
    "$here/scale.sh" "$model:total" --build "$build" --network "$network" \
      --compute-from "$compute_from" --algorithm "$algorithm" --modes strong \
      --global-batch "$batch" --no-overlap --ranks "$ranks" --python "$python" \
      --out-dir "$work/$model.$algorithm" | sed 's/^/  /'
  done
done <<<"$scenarios"

PYTHONPATH=$here "$python" - "$work" "$paper" "$out_dir" <<'PYTHON'
import csv
import glob
import os
import shutil
import sys
import collbench_csv
work, paper, out = sys.argv[1:]
columns = collbench_csv.columns("simscaling")
rows = []
for path in sorted(glob.glob(f"{work}/*/scale_*.csv")):
    rows += collbench_csv.read_rows(path, columns, "keuper_sim.sh", {})
paper_rows = collbench_csv.read_rows(paper, ("scenario", "model", "batch", "compute_model",
                                             "algorithm", "nodes", "speedup"), "keuper_sim.sh", {})
with open(f"{work}/simulated.csv", "w", encoding="utf-8", newline="") as f:
    writer = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
models = list(dict.fromkeys(r["workload"].split(":")[0] for r in rows))
algorithms = list(dict.fromkeys(r["algorithm"] for r in rows))
colours = {a: f"C{i}" for i, a in enumerate(algorithms)}
figure, axes = plt.subplots(1, len(models), figsize=(6.5 * len(models), 5), squeeze=False)
for axis, model in zip(axes[0], models):
    batch = None
    for algorithm in algorithms:
        mine = [r for r in rows if r["workload"].startswith(model + ":") and
                r["algorithm"] == algorithm]
        ranks = [int(r["ranks"]) for r in mine]
        batch = round(max(int(r["ranks"]) * float(r["samples_per_rank"]) for r in mine))
        axis.plot(ranks, [float(r["simulated_speedup"]) for r in mine], "o-",
                  color=colours[algorithm], label=f"{algorithm}: simulated")
        axis.plot(ranks, [float(r["predicted_speedup"]) for r in mine], "--",
                  color=colours[algorithm], label=f"{algorithm}: collbench-predict")
        # The paper's setting: Table I's CPU time for B, falling as 1/p.
        table_i = [r for r in paper_rows if r["scenario"] == f"{model} B={batch} CPU" and
                   r["algorithm"] == algorithm and int(r["nodes"]) <= batch]
        if table_i:
            axis.plot([int(r["nodes"]) for r in table_i], [float(r["speedup"]) for r in table_i],
                      ":", color=colours[algorithm], label=f"{algorithm}: paper (Table I CPU)")
    axis.plot([1, batch], [1, batch], color="grey", linewidth=0.8, label="ideal")
    axis.axvline(batch, color="grey", linestyle="-.", linewidth=0.8)
    axis.text(batch, 1, " p = B", color="grey", rotation=90, va="bottom", ha="right")
    axis.set_xscale("log", base=2)
    axis.set_yscale("log", base=2)
    axis.set_xlabel("nodes p (one rank each)")
    axis.set_ylabel("speedup over one node")
    axis.set_title(f"{model}, B = {batch}, strong scaling, whole gradient, no overlap")
    axis.grid(True, which="both", alpha=0.3)
    axis.legend(fontsize=7)
figure.tight_layout()
figure.savefig(f"{work}/simulated.png", dpi=110)
# Both replaced together: copies beside their targets, then renamed.
for name in ("simulated.csv", "simulated.png"):
    shutil.copyfile(f"{work}/{name}", f"{out}/{name}.partial")
for name in ("simulated.csv", "simulated.png"):
    os.replace(f"{out}/{name}.partial", f"{out}/{name}")
print(f"keuper_sim.sh: wrote {out}/simulated.csv and {out}/simulated.png")
for model in models:
    for algorithm in algorithms:
        mine = [r for r in rows if r["workload"].startswith(model + ":") and
                r["algorithm"] == algorithm]
        peak = max(mine, key=lambda r: float(r["simulated_speedup"]))
        last = mine[-1]
        why = ("the batch limit (p = B, still rising)" if peak is last else
               "the exchange: beyond it T_exchange(p) grows faster than T_compute(B/p) falls")
        half = [int(r["ranks"]) for r in mine if float(r["simulated_efficiency"]) >= 0.5]
        print(f"{model} {algorithm}: simulated speedup peaks at p = {peak['ranks']} "
              f"(S = {float(peak['simulated_speedup']):.2f}; predicted S there "
              f"{float(peak['predicted_speedup']):.2f}), largest p with E >= 50%: "
              f"{max(half)}; stops by {why}")
PYTHON
