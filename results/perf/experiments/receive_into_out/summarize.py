#!/usr/bin/python3
"""jobs/{old,new}_r<K>.csv: per size, ring and recursive_doubling time and
their ratio to mpi in the same job (median over the job's repetitions whose
core_handoff_ns is <= 100 ns, "near"), old against new; then per size the
new/old ratio of those in-job ratios over the rounds where both jobs had
near repetitions of the algorithm and of mpi at that size."""
import csv
import glob
import statistics

MIB = 1 << 20


def load(path):
    rows = [r for r in csv.DictReader(open(path)) if float(r["core_handoff_ns"]) <= 100]
    times = {}
    for r in rows:
        times.setdefault((r["algorithm"], int(r["bytes"])), []).append(float(r["median_us"]))
    return {k: statistics.median(v) for k, v in times.items()}


rounds = sorted({p.split("_r")[1][:-4] for p in glob.glob("jobs/*_r*.csv")}, key=int)
change = {}
print("round size    | ring old/mpi  new/mpi | rd old/mpi  new/mpi   (near repetitions)")
for k in rounds:
    old = load(f"jobs/old_r{k}.csv")
    new = load(f"jobs/new_r{k}.csv")
    for size in sorted({s for _, s in old} | {s for _, s in new}):
        cells = []
        for algorithm in ("ring", "recursive_doubling"):
            keys = [(algorithm, size), ("mpi", size)]
            if all(key in old and key in new for key in keys):
                before = old[(algorithm, size)] / old[("mpi", size)]
                after = new[(algorithm, size)] / new[("mpi", size)]
                change.setdefault((algorithm, size), []).append(after / before)
                cells.append(f"{before:8.3f} {after:8.3f}")
            else:
                cells.append("       -        -")
        print(f"{k:5} {size // MIB:2} MiB | {cells[0]} | {cells[1]}")
print("\nnew/old of (algorithm / mpi), near repetitions: lowest..median..highest over rounds")
for (algorithm, size), values in sorted(change.items()):
    print(f"{algorithm:20} {size // MIB:2} MiB: {min(values):.3f}..{statistics.median(values):.3f}"
          f"..{max(values):.3f} ({len(values)} rounds)")
