"""Time of each allreduce algorithm over one fabric relative to another.

Usage: compare_transports.py [--out FILE] BASELINE.csv OTHER.csv [OTHER.csv ...]

BASELINE.csv holds collbench rows of one fabric, e.g. the mpi transport over
Open MPI's tcp BTL; every OTHER.csv is compared with it, e.g. the ofi
transport over libfabric's tcp provider. A fabric is the row's transport and
provider and, for the mpi transport, its mpi_mca column (the Open MPI
pml/btl/mtl the job asked for; CSVs without the column say "not recorded").
Takes the allreduce rows of the size sweep (family allreduce, empty workload
column; the rows of other collectives, as the main sweep's reduce_scatter and
allgather, are left out: the libfabric sweeps it compares run allreduce
alone) whose check did not fail, the median of median_us over repetitions per
(fabric, ranks, algorithm, bytes), and prints a Markdown table per fabric of
OTHER and rank count, headed by both fabrics: rows are sizes, columns are the
algorithms both ran (in the order the CSVs list them), cells are `time over OTHER's fabric / time over
BASELINE's` (below 1: faster than over the baseline). `mpi` (MPI_Allreduce)
is a column only when both fabrics are MPI's.

--out FILE writes the tables to FILE instead of standard output (whole or
not at all). Bad input (a missing, unreadable or binary file, missing
columns, a time that is not a number > 0, a baseline of several fabrics, no
rows in common, --out given twice): one line on stderr, exit status 2.
"""
import os
import statistics
import sys
from collections import defaultdict

from collbench_report.cli import OptionParser
from collbench_report.outputs import refuse_input_as_output, write_whole
from collbench_report.readers import (InputError, algorithm_order, median_per_key, number,
                                      read_rows)
from collbench_report.text import format_bytes

REQUIRED = ["family", "transport", "provider", "ranks", "algorithm", "bytes", "median_us",
            "workload"]
# The Open MPI parameters of the mpi_mca column, as they read in a label.
MCA_WORDS = {"mtl_ofi_provider_include": "provider"}


class Parser(OptionParser):
    def error(self, message):
        raise InputError(f"{message} (see --help)")


def fabric(row, has_mca):
    """A row's fabric as a label: "ofi/tcp;ofi_rxm", "mpi (pml ob1, btl self,tcp)"."""
    if row["transport"] != "mpi":
        return row["transport"] + (f"/{row['provider']}" if row["provider"] else "")
    if not has_mca:
        return "mpi (fabric not recorded)"
    if not row["mpi_mca"]:
        return "mpi (Open MPI's default pml/btl)"
    parts = [item.partition("=") for item in row["mpi_mca"].split(";")]
    return "mpi (" + ", ".join(f"{MCA_WORDS.get(key, key)} {value}" for key, _, value in parts) + ")"


def medians(path):
    """{(fabric, ranks, algorithm, bytes): median of median_us over repetitions},
    and the file's algorithms in the order it lists them."""
    rows = read_rows(path, REQUIRED, "compare_transports.py")
    has_mca = bool(rows) and "mpi_mca" in rows[0]
    sweep = []
    for index, row in enumerate(rows, start=1):
        if row["family"] != "allreduce" or row["workload"] or row["median_us"] == "":
            continue
        size = int(number(row, "bytes", path, index, whole=True))
        ranks = int(number(row, "ranks", path, index, whole=True))
        row["key"] = (fabric(row, has_mca), ranks, row["algorithm"], size)
        sweep.append(row)
    if not sweep:
        raise InputError(f"{path}: no allreduce rows of a size sweep (empty workload) with a time")
    return median_per_key(sweep, lambda row: row["key"]), [row["algorithm"] for row in sweep]


def baseline_of(path):
    """{(ranks, algorithm, bytes): time}, the fabric of the one-fabric BASELINE
    and its algorithms in file order."""
    times, algorithms = medians(path)
    fabrics = sorted({key[0] for key in times})
    if len(fabrics) > 1:
        raise InputError(f"{path}: the baseline holds {len(fabrics)} fabrics ({'; '.join(fabrics)}); "
                         "give one fabric per baseline CSV")
    return fabrics[0], {key[1:]: t for key, t in times.items()}, algorithms


def report(base_path, base_fabric, base, base_algorithms, path):
    """The Markdown tables of one OTHER.csv against the baseline; algorithms
    in the order both files list them (collbench_csv.algorithm_order)."""
    groups = defaultdict(dict)
    times, algorithms_in_file = medians(path)
    order = algorithm_order(base_algorithms, algorithms_in_file)
    for (other_fabric, ranks, algorithm, size), t in times.items():
        if other_fabric != base_fabric and (ranks, algorithm, size) in base:
            groups[(other_fabric, ranks)][(algorithm, size)] = t / base[(ranks, algorithm, size)]
    if not groups:
        raise InputError(f"{path}: no allreduce rows of another fabric than {base_path}'s "
                         f"({base_fabric}) with the same ranks, algorithm and size")
    lines = []
    for (other_fabric, ranks), ratios in sorted(groups.items()):
        algorithms = [a for a in order if any(k[0] == a for k in ratios)]
        sizes = sorted({k[1] for k in ratios})
        lines += [f"#### collbench {other_fabric} vs collbench {base_fabric}, {ranks} ranks: "
                  f"time over {other_fabric} / time over {base_fabric}", "",
                  "| bytes | " + " | ".join(algorithms) + " |",
                  "|---:|" + "---:|" * len(algorithms)]
        for size in sizes:
            cells = [f"{ratios[(a, size)]:.2f}" if (a, size) in ratios else "" for a in algorithms]
            lines.append(f"| {format_bytes(size)} | " + " | ".join(cells) + " |")
        points = f"{len(ratios)} point{'s' if len(ratios) > 1 else ''}"
        lines += ["", f"median ratio {statistics.median(ratios.values()):.2f} over {points} "
                  f"(< 1: faster over {other_fabric})", ""]
    return lines


def main(argv):
    parser = Parser(prog="compare_transports.py", add_help=False)
    parser.add_argument("-h", "--help", action="store_true")
    parser.add_argument("--out")
    parser.add_argument("csvs", nargs="*")
    args = parser.parse_args(argv[1:])
    if args.help:
        print(__doc__.strip())
        return 0
    if len(args.csvs) < 2:
        raise InputError("needs the baseline CSV and at least one other; usage: compare_transports.py "
                         "[--out FILE] BASELINE.csv OTHER.csv [OTHER.csv ...] (see --help)")
    if args.out is not None and os.path.isdir(args.out):
        raise InputError(f"--out {args.out} is a folder; give a file name")
    if args.out is not None:
        refuse_input_as_output(args.out, args.csvs)
    base_fabric, base, base_algorithms = baseline_of(args.csvs[0])
    lines = []
    for path in args.csvs[1:]:
        lines += report(args.csvs[0], base_fabric, base, base_algorithms, path)
    text = "\n".join(lines).rstrip("\n") + "\n"
    if args.out is None:
        sys.stdout.write(text)
    else:
        write_whole(args.out, text)
    return 0
