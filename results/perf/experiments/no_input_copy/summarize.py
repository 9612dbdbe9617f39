#!/usr/bin/python3
"""Old vs new, each algorithm's time divided by ring's in the same job (ring
did not change: this cancels what moves a whole job, such as the vCPUs'
placement), median over the 3 rounds; then new/old of those ratios."""
import csv
import statistics as st

ALGORITHMS = ["tree", "recursive_doubling", "rabenseifner", "ps_central", "ps_sharded"]
SIZES = [1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20]


def load(path):
    times = {}
    for r in csv.DictReader(open(path)):
        times.setdefault((r["algorithm"], int(r["bytes"])), []).append(float(r["median_us"]))
    return {k: st.median(v) for k, v in times.items()}


for np in (2, 4):
    print(f"\nNP={np}: time / ring's time in the same job, old -> new (new/old)\n")
    print("| algorithm | " + " | ".join(f"{s >> 20} MiB" for s in SIZES) + " |")
    print("|---|" + "---|" * len(SIZES))
    runs = {v: [load(f"{v}_np{np}_r{r}.csv") for r in (1, 2, 3)] for v in ("old", "new")}
    for a in ALGORITHMS:
        cells = []
        for s in SIZES:
            old = st.median(x[(a, s)] / x[("ring", s)] for x in runs["old"])
            new = st.median(x[(a, s)] / x[("ring", s)] for x in runs["new"])
            cells.append(f"{old:.2f} -> {new:.2f} ({new / old:.2f})")
        print(f"| {a} | " + " | ".join(cells) + " |")
