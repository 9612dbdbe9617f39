#!/usr/bin/python3
"""Two ways of pricing an allreduce from the same collbench CSV, printed as
measured / predicted per algorithm at 1..64 MiB.

  by size   (collbench-fit's bottom_up_by_size, recomputed here): each of the
            algorithm's messages at the sendrecv time measured at its mean
            message size m = bytes/messages, each byte reduced at the reduce
            rate measured at m (log-log interpolation).
  footprint each message at alpha (sendrecv at 8 B) plus its bytes at the
            per-byte sendrecv rate measured at the whole vector n, and each
            byte reduced at the reduce rate at n: the rates of buffers as
            large as the allreduce's own, whatever its message size.

Usage: variants.py NP_CSV P   (e.g. np2.csv of run 20261130T130455Z, in git history at 691491d, and 2)
"""
import csv
import math
import statistics
import sys

ALGORITHMS = ["ring", "tree", "recursive_doubling", "rabenseifner", "ps_central", "ps_sharded"]


def terms(algorithm, p, n):
    """(messages, bytes, reduce_bytes) of the algorithm's cost(), p a power of two."""
    lg = int(math.log2(p))
    share = (p - 1) / p
    return {"ring": (2 * (p - 1), 2 * share * n, share * n),
            "rabenseifner": (2 * lg, 2 * share * n, share * n),
            "recursive_doubling": (lg, lg * n, lg * n),
            "tree": (2 * lg, 2 * lg * n, lg * n),
            "ps_central": (2 * (p - 1), 2 * (p - 1) * n, (p - 1) * n),
            "ps_sharded": (2 * (p - 1), 2 * share * n, share * n)}[algorithm]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    p = int(sys.argv[2])
    times = {}
    for r in csv.DictReader(open(sys.argv[1])):
        if r["median_us"]:
            times.setdefault((r["algorithm"], int(r["bytes"])), []).append(float(r["median_us"]))
    median = {k: statistics.median(v) for k, v in times.items()}

    def interpolate(algorithm, x):
        points = sorted((b, t) for (a, b), t in median.items() if a == algorithm)
        for (b0, t0), (b1, t1) in zip(points, points[1:]):
            if b0 <= x <= b1:
                w = math.log(x / b0) / math.log(b1 / b0)
                return math.exp(math.log(t0) + w * math.log(t1 / t0))
        raise SystemExit(f"{algorithm} not measured around {x:.0f} B")

    alpha = median[("sendrecv", 8)]
    sizes = [1 << k for k in range(20, 27)]
    print(f"P={p}, measured / predicted at " + " ".join(f"{n >> 20}M" for n in sizes))
    for a in ALGORITHMS:
        by_size, footprint = [], []
        for n in sizes:
            messages, sent, reduced = terms(a, p, n)
            m = sent / messages
            measured = median[(a, n)]
            by_size.append(measured / (messages * interpolate("sendrecv", m) +
                                       reduced * interpolate("reduce", m) / m))
            footprint.append(measured / (messages * alpha +
                                         sent * (median[("sendrecv", n)] - alpha) / n +
                                         reduced * median[("reduce", n)] / n))
        print(f"{a:19} by size " + " ".join(f"{x:.2f}" for x in by_size) +
              " | footprint " + " ".join(f"{x:.2f}" for x in footprint))


if __name__ == "__main__":
    main()
