#!/usr/bin/python3
"""Summary tables of a collbench CSV, as Markdown (readable in a terminal too).

Usage: scripts/summarize.py CSV [CSV...]

Prints, for each (transport, provider, ranks, dtype, op) in the input:
  - per allreduce size: the fastest algorithm, its median time and busbw, and
    every algorithm's median time relative to `mpi` (MPI_Allreduce; < 1 is
    faster than the MPI library);
  - per workload (--workload): the per-iteration exchange time of the model's
    whole gradient for each algorithm, fastest marked;
  - the --check result over all rows.
Repetitions of one benchmark are combined by the median of their median_us.
Algorithms are listed in the order the CSVs list them (collbench's registry
order); any algorithm of the CSVs is listed, whatever its name.
Standard library only (runs with any python3). Bad input: one line on stderr,
exit status 2.
"""

import sys
from collections import defaultdict

from collbench_csv import (MPI_ALGORITHM, InputError, algorithm_order, format_bytes,
                           median_per_key, number, read_rows, run_main)

REQUIRED = ["benchmark", "family", "transport", "provider", "algorithm", "ranks", "dtype", "op",
            "bytes", "workload", "median_us", "busbw_GBps", "check", "wrong_elements"]


def format_time(microseconds):
    if microseconds >= 1e6:
        return f"{microseconds / 1e6:.3g} s"
    if microseconds >= 1e3:
        return f"{microseconds / 1e3:.3g} ms"
    return f"{microseconds:.3g} µs"


def table(header, rows, align):
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    def line(cells):
        return "| " + " | ".join(
            str(c).rjust(w) if a == "r" else str(c).ljust(w) for c, w, a in zip(cells, widths, align)
        ) + " |"
    rule = "|" + "|".join(("-" * (w + 1) + ":") if a == "r" else ("-" * (w + 2))
                          for w, a in zip(widths, align)) + "|"
    return "\n".join([line(header), rule] + [line(r) for r in rows])


def load(paths):
    """Every row of every CSV, its numbers checked (a benchmark that failed
    --check has no statistics: empty median_us and busbw_GBps), and the
    order of their algorithms (collbench_csv.algorithm_order)."""
    rows = []
    in_files = []
    for path in paths:
        in_file = read_rows(path, REQUIRED, "summarize.py")
        in_files.append([row["algorithm"] for row in in_file
                         if row["family"] in ("allreduce", "exchange")])
        for index, row in enumerate(in_file, start=1):
            number(row, "bytes", path, index, whole=True)
            if row["median_us"] != "":
                number(row, "median_us", path, index)
                number(row, "busbw_GBps", path, index)
            if row["wrong_elements"] != "":
                number(row, "wrong_elements", path, index, whole=True)
            rows.append(row)
    if not rows:
        raise InputError(f"{', '.join(paths)}: no rows")
    return rows, algorithm_order(*in_files)


def median_times(rows, key):
    """key(row) -> (median of median_us, median of busbw_GBps) over repetitions;
    a failed --check (no time) is left to the check summary."""
    times = median_per_key(rows, key)
    busbw = median_per_key(rows, key, "busbw_GBps")
    return {k: (t, busbw[k]) for k, t in times.items()}


def summarize(rows, order):
    """The Markdown summary; `order`: every algorithm of `rows`, in the order
    the tables list them."""
    def ordered(names):
        return [name for name in order if name in names]

    out = []
    groups = defaultdict(list)
    for row in rows:
        if row["family"] not in ("allreduce", "exchange"):
            continue
        group = (row["transport"], row["provider"], row["ranks"], row["dtype"], row["op"])
        groups[group].append(row)

    for (transport, provider, ranks, dtype, op), members in sorted(groups.items()):
        where = f"{transport}{'/' + provider if provider else ''}, {ranks} ranks, {dtype} {op}"
        sizes = [r for r in members if r["family"] == "allreduce" and r["workload"] == ""]
        times = median_times(sizes, lambda row: (row["algorithm"], int(float(row["bytes"]))))
        algorithms = ordered({a for a, _ in times})
        if times:
            has_mpi = MPI_ALGORITHM in algorithms
            header = ["size", "fastest", "time", "busbw GB/s"]
            if has_mpi:
                header += [f"{a} / {MPI_ALGORITHM}" for a in algorithms]
            lines = []
            for size in sorted({b for _, b in times}):
                at_size = {a: times[(a, size)] for a in algorithms if (a, size) in times}
                fastest = min(at_size, key=lambda a: at_size[a][0])
                line = [format_bytes(size), fastest, format_time(at_size[fastest][0]),
                        f"{at_size[fastest][1]:.3g}"]
                if has_mpi:
                    reference = at_size.get(MPI_ALGORITHM)
                    line += [f"{at_size[a][0] / reference[0]:.2f}" if a in at_size and reference else "–"
                             for a in algorithms]
                lines.append(line)
            out.append(f"### allreduce, {where}: fastest per size"
                       + (" and time relative to mpi (< 1: faster than MPI_Allreduce)" if has_mpi else ""))
            out.append("")
            out.append(table(header, lines, ["r", "l", "r", "r"] + ["r"] * (len(header) - 4)))
            out.append("")

        exchanges = [r for r in members if r["family"] == "exchange"]
        times = median_times(exchanges, lambda row: (row["algorithm"], row["workload"]))
        if times:
            algorithms = ordered({a for a, _ in times})
            workloads = sorted({w for _, w in times})
            bytes_of = {r["workload"]: int(float(r["bytes"])) for r in exchanges}
            header = ["workload", "gradient"] + algorithms + ["fastest"]
            lines = []
            for workload in workloads:
                per_algorithm = {a: times[(a, workload)][0] for a in algorithms if (a, workload) in times}
                fastest = min(per_algorithm, key=per_algorithm.get)
                lines.append([workload, format_bytes(bytes_of[workload])]
                             + [format_time(per_algorithm[a]) if a in per_algorithm else "–"
                                for a in algorithms] + [fastest])
            out.append(f"### exchange, {where}: one training iteration's gradient, every bucket "
                       "allreduced in order (time per iteration)")
            out.append("")
            out.append(table(header, lines, ["l", "r"] + ["r"] * len(algorithms) + ["l"]))
            out.append("")

    checked = [r for r in rows if r["check"] in ("ok", "wrong")]
    wrong = [r for r in rows if r["check"] == "wrong"]
    if checked:
        elements = sum(int(float(r["wrong_elements"] or 0)) for r in wrong)
        out.append(f"--check: {len(checked) - len(wrong)} of {len(checked)} rows correct"
                   + (f"; {len(wrong)} wrong ({elements} wrong elements): "
                      + ", ".join(sorted({r['benchmark'] for r in wrong})) if wrong else ""))
    else:
        out.append("--check was not used: results are unverified")
    return "\n".join(out)


def main(argv):
    if len(argv) < 2:
        print("summarize.py: no CSV given; usage: summarize.py CSV [CSV...] (see --help)",
              file=sys.stderr)
        return 2
    if argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    print(summarize(*load(argv[1:])))
    return 0


if __name__ == "__main__":
    run_main("summarize.py", main, sys.argv)
