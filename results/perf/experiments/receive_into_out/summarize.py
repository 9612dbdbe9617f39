#!/usr/bin/python3
"""DIR/{old,new}_r<K>.csv (DIR: the argument, default jobs): per size, each
hand-written algorithm's time and
their ratio to mpi in the same job (median over the job's repetitions whose
core_handoff_ns is <= 100 ns, "near"), old against new; then per size the
new/old ratio of those in-job ratios over the rounds where both jobs had
near repetitions of the algorithm and of mpi at that size."""
import csv
import glob
import statistics
import sys

MIB = 1 << 20


def load(path):
    # At 4 ranks on 2 cores ranks 0 and 1 may share one: every row counts.
    rows = [r for r in csv.DictReader(open(path))
            if r["ranks"] != "2" or float(r["core_handoff_ns"]) <= 100]
    times = {}
    for r in rows:
        times.setdefault((r["algorithm"], int(r["bytes"])), []).append(float(r["median_us"]))
    return {k: statistics.median(v) for k, v in times.items()}


folder = sys.argv[1] if len(sys.argv) > 1 else "jobs"
rounds = sorted({p.rsplit("_r", 1)[1][:-4] for p in glob.glob(f"{folder}/*_r*.csv")}, key=int)
change = {}
algorithms = sorted({a for a, _ in load(f"{folder}/old_r{rounds[0]}.csv")} - {"mpi"})
print("round size    | " + " | ".join(f"{a} old/mpi new/mpi" for a in algorithms)
      + "   (near repetitions)")
for k in rounds:
    old = load(f"{folder}/old_r{k}.csv")
    new = load(f"{folder}/new_r{k}.csv")
    for size in sorted({s for _, s in old} | {s for _, s in new}):
        cells = []
        for algorithm in algorithms:
            keys = [(algorithm, size), ("mpi", size)]
            if all(key in old and key in new for key in keys):
                before = old[(algorithm, size)] / old[("mpi", size)]
                after = new[(algorithm, size)] / new[("mpi", size)]
                change.setdefault((algorithm, size), []).append(after / before)
                cells.append(f"{before:8.3f} {after:8.3f}")
            else:
                cells.append("       -        -")
        print(f"{k:5} {size // MIB:2} MiB | " + " | ".join(cells))
print("\nnew/old of (algorithm / mpi), near repetitions: lowest..median..highest over rounds")
for (algorithm, size), values in sorted(change.items()):
    print(f"{algorithm:20} {size // MIB:2} MiB: {min(values):.3f}..{statistics.median(values):.3f}"
          f"..{max(values):.3f} ({len(values)} rounds)")
