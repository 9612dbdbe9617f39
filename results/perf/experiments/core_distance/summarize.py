#!/usr/bin/python3
"""Medians of the logs of run.sh (and of jobs_ring_vs_core_distance.sh),
split by the job's core-to-core latency: near (< 100 ns) or far."""
import statistics as st


def split(rows, latency):
    groups = {"near": [], "far": []}
    for row in rows:
        groups["near" if latency(row) < 100 else "far"].append(row)
    return groups


def median(rows, field):
    return st.median(float(r[field]) for r in rows)


fresh = [line.split() for line in open("sendrecv_fresh.log")]
print("sendrecv_fresh.log (us; sendrecv of 512 KiB, MPI_Allreduce of 1 MiB)")
for mode, rows in split(fresh, lambda r: float(r[2])).items():
    if rows:
        print(f"  {mode}: {len(rows)} jobs, core latency {median(rows, 2):.0f} ns, static "
              f"{median(rows, 6):.1f}, fresh {median(rows, 9):.1f}, MPI_Allreduce {median(rows, 13):.1f}")

phases = [line.split() for line in open("ring_phases.log") if "rank0:" in line]
print("ring_phases.log (us, rank 0; A sendrecv of in's half, B reduction into out, "
      "C sendrecv of the reduced half)")
for mode, rows in split(phases, lambda r: float(r[2])).items():
    if rows:
        print(f"  {mode}: {len(rows)} jobs, core latency {median(rows, 2):.0f} ns, A "
              f"{median(rows, 6):.1f}, B {median(rows, 9):.1f}, C {median(rows, 12):.1f}, total "
              f"{median(rows, 14):.1f}, the same reduction alone {median(rows, 18):.1f}")

jobs = []
for line in open("jobs_ring_vs_core_distance.log"):
    f = line.replace(":", " ").split()
    # hh mm ss job N c2c before after sendrecv a b c mpi a b c ring a b c
    values = {f[i]: [float(x) for x in f[i + 1:i + 4]] for i in range(len(f))
              if f[i] in ("sendrecv", "mpi", "ring")}
    jobs.append((max(float(f[6]), float(f[7])), values))
print("jobs_ring_vs_core_distance.log (collbench, 1 MiB, median of 3 repetitions, us)")
for mode in ("near", "far"):
    rows = [v for lat, v in jobs if (lat < 100) == (mode == "near")]
    if rows:
        print(f"  {mode} ({'both probes < 100 ns' if mode == 'near' else 'a probe >= 100 ns'}): "
              f"{len(rows)} jobs, ring {st.median(st.median(v['ring']) for v in rows):.0f}, "
              f"mpi {st.median(st.median(v['mpi']) for v in rows):.0f}, "
              f"sendrecv {st.median(st.median(v['sendrecv']) for v in rows):.0f}")

# perf.sh sweeps at NP=2 (perf_sweeps/: collbench-fit's predictions of each
# attempt, and the core-distance probes around it): measured / bottom-up by
# size, recursive_doubling against the other five, at 1-2 MiB and 32-64 MiB.
import csv
import glob
import os

print("perf_sweeps/ (NP=2, measured / bottom_up_by_size)")
for path in sorted(glob.glob("perf_sweeps/*_predictions.csv")):
    ratios = {}
    for r in csv.DictReader(open(path)):
        if r["model"] == "bottom_up_by_size" and r["family"] == "allreduce":
            mib = round(float(r["bytes"]) / 2**20)
            ratios.setdefault(r["algorithm"], {})[mib] = (float(r["measured_us"]) /
                                                          float(r["predicted_us"]))
    small = {a: [v[m] for m in (1, 2) if m in v] for a, v in ratios.items()}
    large = [v[m] for v in ratios.values() for m in (32, 64) if m in v]
    others = [x for a, v in small.items() if a != "recursive_doubling" for x in v]
    rd = small.get("recursive_doubling", [])
    print(f"  {os.path.basename(path)}: 1-2 MiB recursive_doubling "
          f"{min(rd):.2f}-{max(rd):.2f}, the other five {min(others):.2f}-{max(others):.2f}; "
          f"32-64 MiB all six {min(large):.2f}-{max(large):.2f}")
