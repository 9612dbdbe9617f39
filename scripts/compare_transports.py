#!/usr/bin/env python3
"""Time of each algorithm over other transports relative to the MPI transport.

Usage: compare_transports.py MPI.csv OTHER.csv [OTHER.csv ...]

Reads collbench CSVs (stdlib csv only), takes the allreduce rows of the
power-of-two sweep (empty workload column), the median of median_us over
repetitions per (transport, provider, ranks, algorithm, bytes), and prints a
Markdown table per other transport/provider: rows are sizes, columns are
algorithms, cells are `time over that transport / time over MPI` (below 1:
faster than over MPI). Exit status 2 with one message on bad input.
"""
import statistics
import sys
from collections import defaultdict

from collbench_csv import InputError, format_bytes, number, read_rows

REQUIRED = ["family", "transport", "provider", "ranks", "algorithm", "bytes", "median_us",
            "workload"]
ORDER = ["ring", "tree", "recursive_doubling", "rabenseifner", "ps_central", "ps_sharded"]


def medians(path):
    samples = defaultdict(list)
    for index, row in enumerate(read_rows(path, REQUIRED, "compare_transports.py"), start=1):
        if row["family"] != "allreduce" or row["workload"] or row["median_us"] == "":
            continue
        size = int(number(row, "bytes", path, index, whole=True))
        key = (row["transport"], row["provider"], row["ranks"], row["algorithm"], size)
        samples[key].append(number(row, "median_us", path, index))
    return {key: statistics.median(values) for key, values in samples.items()}


def main(argv):
    if len(argv) >= 2 and argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(argv) < 3:
        raise InputError("needs the MPI CSV and at least one other; usage: compare_transports.py "
                         "MPI.csv OTHER.csv [OTHER.csv ...] (see --help)")
    baseline = medians(argv[1])
    mpi = {(ranks, algorithm, size): t for (transport, _, ranks, algorithm, size), t in baseline.items()
           if transport == "mpi"}
    if not mpi:
        raise InputError(f"{argv[1]}: no allreduce rows over the mpi transport")
    for path in argv[2:]:
        other = medians(path)
        groups = defaultdict(dict)
        for (transport, provider, ranks, algorithm, size), t in other.items():
            if transport == "mpi" or (ranks, algorithm, size) not in mpi:
                continue
            groups[(transport, provider, ranks)][(algorithm, size)] = t / mpi[(ranks, algorithm, size)]
        if not groups:
            raise InputError(f"{path}: no allreduce rows that match {argv[1]} (same ranks, algorithm, size)")
        for (transport, provider, ranks), ratios in sorted(groups.items()):
            algorithms = [a for a in ORDER if any(k[0] == a for k in ratios)]
            sizes = sorted({k[1] for k in ratios})
            print(f"#### {transport} ({provider}), {ranks} ranks: time relative to the mpi transport")
            print()
            print("| bytes | " + " | ".join(algorithms) + " |")
            print("|---:|" + "---:|" * len(algorithms))
            for size in sizes:
                cells = [f"{ratios[(a, size)]:.2f}" if (a, size) in ratios else "" for a in algorithms]
                print(f"| {format_bytes(size)} | " + " | ".join(cells) + " |")
            all_ratios = list(ratios.values())
            print()
            print(f"median ratio {statistics.median(all_ratios):.2f} over {len(all_ratios)} points")
            print()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except InputError as error:
        print(f"compare_transports.py: {error}", file=sys.stderr)
        sys.exit(2)
