#!/usr/bin/python3
"""Median time (us) per mechanism, near (core_handoff_ns <= 100) and far rows,
at 1 and 4 MiB. Usage: summarize.py DIR (with cma_*.csv and none_*.csv)."""
import csv
import glob
import os
import statistics
import sys

ALGORITHMS = ("ring", "tree", "recursive_doubling", "mpi", "sendrecv", "pingpong")
folder = sys.argv[1]
print("mechanism state rows | size: " + " ".join(ALGORITHMS))
for mechanism in ("cma", "none"):
    rows = []
    for path in sorted(glob.glob(os.path.join(folder, f"{mechanism}_*.csv"))):
        with open(path, newline="") as handle:
            rows += list(csv.DictReader(handle))
    timed = [r for r in rows if r["core_handoff_ns"]]
    for state, keep in (("near", lambda ns: ns <= 100), ("far", lambda ns: ns > 100)):
        chosen = [r for r in timed if keep(float(r["core_handoff_ns"]))]
        cells = []
        for size in (1 << 20, 4 << 20):
            times = []
            for algorithm in ALGORITHMS:
                values = [float(r["median_us"]) for r in chosen
                          if r["algorithm"] == algorithm and int(r["bytes"]) == size]
                times.append(f"{statistics.median(values):.0f}" if values else "-")
            cells.append(f"{size >> 20} MiB: " + " ".join(times))
        print(f"{mechanism} {state} {len(chosen)} | " + " | ".join(cells))
