#!/usr/bin/env bash
# characterize.sh's "on N nodes like these" (--sim-nodes N, the sim step) on
# a copy of results/netsim/uniform, whose run.env and fit/models.csv stand
# for a run that has just measured: `--steps sim,report --sim-nodes 6`.
#   1. sim/allreduce.csv has every allreduce algorithm of the build at
#      p = 2, 4, 6 (the powers of two below N, then N) and both --sim-sizes,
#      on a star calibrated by fit/models.csv (its α, β, γ in the CSV);
#   2. report.md's section "4. Simulated scaling: 6 nodes like these" has a
#      row per algorithm with the CSV's times, the fastest of each p (and
#      any equal to it) in bold;
#   3. sim/selections.csv (collbench-fit's) chooses the fastest algorithm of
#      each p and size, and report.md's table of the best algorithm names it;
#   4. a second run gives the same time columns (a simulation is
#      deterministic; nothing here depends on wall time);
#   5. --sim-workload resnet50 --sim-flops 10T: sim/scale_resnet50_ddp.csv
#      (scripts/scale.sh, weak scaling) at p = 1, 2, 4, 6, and report.md's
#      section "Your model on 6 nodes like these" naming the assumed rate
#      (the section's text: characterize_report_test.py); the second run,
#      with --sim-global-batch 4, strong scaling too at p = 1, 2, 4 (none
#      beyond the batch) and the section's strong-scaling table.
# Usage: characterize_sim_test.sh REPOSITORY BUILD
set -euo pipefail
repository=${1:?usage: characterize_sim_test.sh REPOSITORY BUILD}
build=${2:?usage: characterize_sim_test.sh REPOSITORY BUILD}
work=$(mktemp -d "${TMPDIR:-/tmp}/characterize_sim.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "characterize_sim_test: $*" >&2; exit 1; }

simulate() { # simulate OUT [ARGS]: the sim and report steps on a fresh copy of the netsim run
  local out=$1
  shift
  cp -r "$repository/results/netsim/uniform" "$out"
  "$repository/scripts/characterize.sh" --out "$out" --build "$build" --steps sim,report \
    --sim-nodes 6 --sim-sizes 4KiB,256KiB --sim-workload resnet50 --sim-flops 10T "$@" \
    >"$out.log" 2>&1 || { cat "$out.log" >&2; fail "characterize.sh failed"; }
}
simulate "$work/first"
simulate "$work/second" --sim-global-batch 4

"$build/benchmarks/harness/collbench" --list-algorithms --csv >"$work/listing.csv"
PYTHONPATH="$repository/scripts" /usr/bin/python3 - "$work" <<'PYTHON'
import sys
import collbench_csv

work = sys.argv[1]
def fail(message):
    sys.exit(f"characterize_sim_test: {message}")

listing = collbench_csv.read_rows(f"{work}/listing.csv", ("collective", "algorithm", "implementation"),
                                  "the test")
expected = {r["algorithm"] for r in listing
            if r["collective"] == "allreduce" and r["implementation"] == "hand-written"}
columns = ("algorithm", "ranks", "bytes", "median_us", "sim_platform", "sim_alpha_us",
           "sim_beta_GBps", "sim_gamma_GBps", "sim_calibration", "sim_payload")
rows = collbench_csv.read_rows(f"{work}/first/sim/allreduce.csv", columns, "the test")
cases = {(r["algorithm"], int(r["ranks"]), int(r["bytes"])) for r in rows}
want = {(a, p, n) for a in expected for p in (2, 4, 6) for n in (4096, 262144)}
if cases != want:
    fail(f"sim/allreduce.csv: missing {sorted(want - cases)[:5]}, extra {sorted(cases - want)[:5]}")
for r in rows:
    if (r["sim_platform"], r["sim_calibration"], r["sim_payload"]) != ("star", "fit/models.csv",
                                                                       "size-only"):
        fail(f"not a size-only star calibrated by fit/models.csv: {r['sim_platform']}, "
             f"{r['sim_calibration']}, {r['sim_payload']}")
# The fit's network level: α of the inter-node ping-pong, β of its bandwidth.
models = collbench_csv.read_models(f"{work}/first/fit/models.csv", ("model", "alpha_us",
                                                                     "beta_GBps"), "the test")
hockney = next(m for m in models if m["model"] == "hockney")
for column, fitted in (("sim_alpha_us", hockney["alpha_us"]), ("sim_beta_GBps", hockney["beta_GBps"])):
    if abs(float(rows[0][column]) / float(fitted) - 1) > 1e-3:
        fail(f"{column} {rows[0][column]} is not the fit's {fitted}")

second = collbench_csv.read_rows(f"{work}/second/sim/allreduce.csv", columns, "the test")
times = lambda rs: [(r["algorithm"], r["ranks"], r["bytes"], r["median_us"]) for r in rs]
if times(rows) != times(second):
    fail("two runs gave different simulated times")

report = open(f"{work}/first/report.md", encoding="utf-8").read()
if "## 4. Simulated scaling: 6 nodes like these" not in report:
    fail("report.md has no simulated scaling section")
section = report.split("## 4. Simulated scaling")[1]
label = lambda us: f"{us / 1e3:.2f} ms" if us >= 1e3 else f"{us:.1f} µs"
for n, size in ((4096, "4 KiB"), (262144, "256 KiB")):
    table = section.split(f"**allreduce, {size}**")[1].split("\n\n")[1].splitlines()
    if table[0] != "| algorithm | p = 2 | p = 4 | p = 6 |":
        fail(f"{size}: header {table[0]!r}")
    cells = {line.split(" | ")[0].lstrip("| "): line.strip("| ").split(" | ")[1:] for line in table[2:]}
    if set(cells) != expected:
        fail(f"{size}: rows {sorted(cells)}")
    for i, p in enumerate((2, 4, 6)):
        at = {a: float(r["median_us"]) for r in rows for a in [r["algorithm"]]
              if int(r["ranks"]) == p and int(r["bytes"]) == n}
        for a, t in at.items():
            shown = f"**{label(t)}**" if t == min(at.values()) else label(t)
            if cells[a][i] != shown:
                fail(f"{size}, p = {p}, {a}: {cells[a][i]!r}, the CSV says {shown!r}")

# sim/selections.csv: collbench-fit's choice at each p and size is the lowest
# time of sim/allreduce.csv, and the report's table names it.
selections = collbench_csv.read_rows(f"{work}/first/sim/selections.csv",
                                     ("collective", "ranks", "bytes", "chosen"), "the test", {})
chosen = {(int(r["ranks"]), int(r["bytes"])): r["chosen"] for r in selections}
if set(chosen) != {(p, n) for _, p, n in cases}:
    fail(f"sim/selections.csv: choices at {sorted(chosen)}")
for (p, n), name in chosen.items():
    at = {r["algorithm"]: float(r["median_us"]) for r in rows
          if int(r["ranks"]) == p and int(r["bytes"]) == n}
    if at[name] != min(at.values()):
        fail(f"sim/selections.csv: p = {p}, {n} B: {name} ({at[name]} us) is not the fastest "
             f"({min(at.values())} us)")
best = report.split("### The best allreduce algorithm per size on 2 to 6 nodes like these")
if len(best) != 2:
    fail("report.md has no table of the best algorithm")
for n, size in ((4096, "4 KiB"), (262144, "256 KiB")):
    row = next(line for line in best[1].splitlines() if line.startswith(f"| {size} |"))
    if [c.split(" (")[0] for c in row.strip("| ").split(" | ")[1:]] != [chosen[(p, n)]
                                                                       for p in (2, 4, 6)]:
        fail(f"report.md's best algorithm at {size}: {row!r}")

scale = collbench_csv.read_rows(f"{work}/first/sim/scale_resnet50_ddp.csv", ("mode", "ranks"),
                                "the test", {})
if [(r["mode"], r["ranks"]) for r in scale] != [("weak", p) for p in ("1", "2", "4", "6")]:
    fail(f"sim/scale_resnet50_ddp.csv: {[(r['mode'], r['ranks']) for r in scale]}")
if ("## Your model on 6 nodes like these: resnet50:ddp, compute assumed 1e+13 FLOP/s per rank"
        not in report):
    fail("report.md has no section on resnet50:ddp with its assumed compute")
if "### Strong scaling" in report:
    fail("report.md has a strong-scaling table without --sim-global-batch")
scale = collbench_csv.read_rows(f"{work}/second/sim/scale_resnet50_ddp.csv", ("mode", "ranks"),
                                "the test", {})
expected = [("strong", p) for p in ("1", "2", "4")] + [("weak", p) for p in ("1", "2", "4", "6")]
if sorted((r["mode"], r["ranks"]) for r in scale) != expected:
    fail(f"--sim-global-batch 4: {[(r['mode'], r['ranks']) for r in scale]}")
second_report = open(f"{work}/second/report.md", encoding="utf-8").read()
if "### Strong scaling: a global batch of 4 samples split over p" not in second_report:
    fail("report.md has no strong-scaling table with --sim-global-batch 4")
PYTHON
echo "characterize_sim_test: passed"
