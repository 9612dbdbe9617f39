"""Summary tables of a collbench CSV, as Markdown (readable in a terminal too).

Usage: scripts/summarize.py CSV [CSV...]

Prints, for each (transport, provider, ranks, dtype) in the input:
  - for each collective of the CSVs (allreduce, reduce_scatter, allgather,
    ...: a family that is a collective's name; in the order the CSVs first
    list them) and op: per size, the fastest algorithm, its median time and
    busbw, and every algorithm's median time relative to `mpi` (the MPI
    library's own collective: MPI_Allreduce, ...; < 1 is faster than the MPI
    library);
  - per workload (--workload), for each op: the per-iteration exchange time
    (every message of one training iteration in order: DDP's gradient
    buckets, FSDP's allgathers and reduce_scatters, ...) for each algorithm,
    fastest marked;
then the --check result over all rows.
Repetitions of one benchmark are combined by the median of their median_us.
Collectives and algorithms are listed in the order the CSVs list them
(collbench's registry order); any of the CSVs is listed, whatever its name.
A CSV from before the collective column: its allreduce rows are allreduce's.
Standard library only (runs with any python3). Bad input: one line on stderr,
exit status 2.
"""

from collections import defaultdict

from collbench_report.readers import (MPI_ALGORITHM, InputError, algorithm_order,
                                      collective_order, median_per_key, number, read_rows,
                                      sweep_collective)
from collbench_report.text import format_bytes, format_time, table

REQUIRED = ["benchmark", "family", "transport", "provider", "algorithm", "ranks", "dtype", "op",
            "bytes", "workload", "median_us", "busbw_GBps", "check", "wrong_elements"]


def load(paths):
    """Every row of every CSV, its numbers checked (a benchmark that failed
    --check has no statistics: empty median_us and busbw_GBps); the
    collectives of the size sweeps in the order the CSVs first list them;
    and, per table kind (a collective's name, or "exchange"), the order of
    its algorithms (collbench_csv.algorithm_order)."""
    rows = []
    collectives_in_files = []
    algorithms_in_files = defaultdict(list)  # table kind -> one sequence per file
    for path in paths:
        in_file = read_rows(path, REQUIRED, "summarize.py")
        collectives_in_files.append([sweep_collective(row) for row in in_file])
        by_kind = defaultdict(list)
        for row in in_file:
            kind = table_kind(row)
            if kind:
                by_kind[kind].append(row["algorithm"])
        for kind, names in by_kind.items():
            algorithms_in_files[kind].append(names)
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
    orders = {kind: algorithm_order(*sequences) for kind, sequences in algorithms_in_files.items()}
    return rows, collective_order(*collectives_in_files), orders


EXCHANGE = "exchange"


def table_kind(row):
    """Which table `row` goes into: its collective's size table (the
    collective's name), the exchange table ("exchange"), or none ("")."""
    if row["family"] == EXCHANGE:
        return EXCHANGE
    return sweep_collective(row)


def median_times(rows, key):
    """key(row) -> (median of median_us, median of busbw_GBps) over repetitions;
    a failed --check (no time) is left to the check summary."""
    times = median_per_key(rows, key)
    busbw = median_per_key(rows, key, "busbw_GBps")
    return {k: (t, busbw[k]) for k, t in times.items()}


def where_of(transport, provider, ranks, dtype, op):
    """"mpi, 4 ranks, f32 sum"; no op where nothing is reduced (allgather)."""
    return (f"{transport}{'/' + provider if provider else ''}, {ranks} ranks, {dtype}"
            f"{' ' + op if op else ''}")


def size_table(collective, where, rows, order):
    """The lines of `collective`'s table at `where`: per size of its sweep
    `rows`, the fastest algorithm and every algorithm's time relative to
    mpi's; [] when no row has a time."""
    times = median_times(rows, lambda row: (row["algorithm"], int(float(row["bytes"]))))
    if not times:
        return []
    algorithms = [name for name in order if name in {a for a, _ in times}]
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
    title = f"### {collective}, {where}: fastest per size"
    if has_mpi:
        title += (f" and time relative to {MPI_ALGORITHM} (< 1: faster than the MPI library's "
                  f"own {collective})")
    return [title, "", table(header, lines, ["r", "l", "r", "r"] + ["r"] * (len(header) - 4)), ""]


def exchange_table(where, rows, order):
    """The lines of the exchange table at `where`: per workload, each
    algorithm's time per training iteration; [] when no row has a time."""
    times = median_times(rows, lambda row: (row["algorithm"], row["workload"]))
    if not times:
        return []
    algorithms = [name for name in order if name in {a for a, _ in times}]
    workloads = sorted({w for _, w in times})
    bytes_of = {r["workload"]: int(float(r["bytes"])) for r in rows}
    # A CSV from before the collective column: its exchanges are allreduces.
    collectives_of = {r["workload"]: r.get("collective") or "allreduce" for r in rows}
    header = ["workload", "collectives", "bytes per iteration"] + algorithms + ["fastest"]
    lines = []
    for workload in workloads:
        per_algorithm = {a: times[(a, workload)][0] for a in algorithms if (a, workload) in times}
        fastest = min(per_algorithm, key=per_algorithm.get)
        lines.append([workload, collectives_of[workload], format_bytes(bytes_of[workload])]
                     + [format_time(per_algorithm[a]) if a in per_algorithm else "–"
                        for a in algorithms] + [fastest])
    return [f"### exchange, {where}: one training iteration's messages in order, each by "
            "its collective's algorithm of the column's name (time per iteration)", "",
            table(header, lines, ["l", "l", "r"] + ["r"] * len(algorithms) + ["l"]), ""]


def summarize(rows, collectives, orders):
    """The Markdown summary: per (transport, provider, ranks, dtype), a size
    table per collective (in the order of `collectives`) and op, then the
    exchange table per op; `orders`: each table kind's algorithms, in the
    order the tables list them."""
    out = []
    groups = defaultdict(lambda: defaultdict(list))  # where -> (kind, op) -> rows
    for row in rows:
        kind = table_kind(row)
        if not kind or (kind != EXCHANGE and row["workload"] != ""):
            continue  # a workload's allreduce sizes are the exchange's buckets, not a sweep
        where = (row["transport"], row["provider"], row["ranks"], row["dtype"])
        groups[where][(kind, row["op"])].append(row)

    for where, tables in sorted(groups.items()):
        for kind in collectives + [EXCHANGE]:
            for op in sorted(op for k, op in tables if k == kind):
                members = tables[(kind, op)]
                if kind == EXCHANGE:
                    out += exchange_table(where_of(*where, op), members, orders[kind])
                else:
                    out += size_table(kind, where_of(*where, op), members, orders[kind])

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
        raise InputError("no CSV given; usage: summarize.py CSV [CSV...] (see --help)")
    if argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    print(summarize(*load(argv[1:])))
    return 0
