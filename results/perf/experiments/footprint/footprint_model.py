#!/usr/bin/python3
"""jobs/*.csv priced with the working set: like summarize.py, but each
exchange of m bytes costs max(sendrecv(m), m x sendrecv(mF)/mF) and each
byte reduced max(reduce(m)/m, reduce(mF)/mF), where mF = F/2 is the size at
which the input benchmarks (per rank: 2 buffers) touch as much memory per
rank as the allreduce does, F = in + out + workspace = 3n for both
recursive_doubling and ring at p=2 (ring: 2 staging chunks of n/2).
Interpolation log-log between measured sizes, as collbench-fit does."""
import csv
import glob
import math
import statistics

MIB = 1 << 20


def interpolate(curve, size):
    sizes = sorted(curve)
    size = min(max(size, sizes[0]), sizes[-1])
    for low, high in zip(sizes, sizes[1:]):
        if low <= size <= high:
            w = math.log(size / low) / math.log(high / low)
            return math.exp(math.log(curve[low]) + w * math.log(curve[high] / curve[low]))
    return curve[sizes[0]]


per_size = {}
for path in sorted(glob.glob("jobs/job*.csv"), key=lambda p: int(p[8:-4])):
    rows = list(csv.DictReader(open(path)))

    def curve(algorithm):
        values = {}
        for r in rows:
            if r["algorithm"] == algorithm:
                values.setdefault(int(r["bytes"]), []).append(float(r["median_us"]))
        return {b: statistics.median(v) for b, v in values.items()}

    sendrecv, reduce, rd, ring = (curve(a) for a in ("sendrecv", "reduce", "recursive_doubling",
                                                     "ring"))
    for n in sorted(rd):
        near = max(float(r["core_handoff_ns"]) for r in rows if int(r["bytes"]) == n) <= 100
        if not near:
            continue
        mf = 1.5 * n

        def exchange(m):
            return max(interpolate(sendrecv, m), m * interpolate(sendrecv, mf) / mf)

        def reduced(m):
            return m * max(interpolate(reduce, m) / m, interpolate(reduce, mf) / mf)

        rd_model = exchange(n) + reduced(n)
        ring_model = 2 * exchange(n / 2) + reduced(n / 2) if n / 2 >= min(sendrecv) else None
        entry = per_size.setdefault(n, ([], []))
        entry[0].append(rd[n] / rd_model)
        if ring_model:
            entry[1].append(ring[n] / ring_model)

print("near jobs only: measured / working-set model, lowest..median..highest over jobs")
for n, (rd, ring) in sorted(per_size.items()):
    ring_text = (f"ring {min(ring):.2f}..{statistics.median(ring):.2f}..{max(ring):.2f}"
                 if ring else "ring -")
    print(f"{n // MIB:2} MiB ({len(rd)} jobs): rd {min(rd):.2f}..{statistics.median(rd):.2f}.."
          f"{max(rd):.2f}  {ring_text}")
