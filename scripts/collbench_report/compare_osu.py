"""The table half of compare_osu.sh: collbench's MPI_Allreduce against osu_allreduce.

Usage: compare_osu_table.py iterations CSV RUN_ID
       compare_osu_table.py table CSV OSU.txt

iterations: per size, the timed iterations of collbench's `mpi` allreduce in
run RUN_ID of CSV, one "BYTES ITERATIONS" line each (what osu_allreduce -i
is given).
table: a Markdown table per size of CSV's `mpi` allreduce rows (one run per
round, run ids ending in -r<round>) and OSU.txt (osu_allreduce -f output, each
job after a "# round <round>: ..." line): the median over rounds of OSU's avg
and max and of collbench's mean_us, and the median over rounds of
collbench mean_us / OSU max and / OSU avg; "yes" when the first is within
15% of 1; last, the median over rounds of collbench's slowest call (max_us),
which shows when a round had a call stalled by another process (a mean of
tens of thousands of 1 µs calls moves by 0.5 µs for one 20 ms stall). Exit status 0 when every size is, 1 when some is not, 2 on bad
input (one line on stderr).
"""
import math
import re
import statistics
from collections import defaultdict

from collbench_report.readers import InputError, number, read_rows
from collbench_report.text import format_bytes

REQUIRED = ["family", "algorithm", "bytes", "iterations", "mean_us", "max_us", "run_id"]
TOLERANCE = 0.15


def mpi_rows(path):
    """(row index, row) of the `mpi` allreduce rows of a collbench CSV."""
    rows = read_rows(path, REQUIRED, "compare_osu_table.py")
    chosen = [(i, r) for i, r in enumerate(rows, start=1)
              if r["family"] == "allreduce" and r["algorithm"] == "mpi"]
    if not chosen:
        raise InputError(f"{path}: no rows of collbench's mpi allreduce")
    return chosen


def iterations(path, run_id):
    found = {}
    for index, row in mpi_rows(path):
        if row["run_id"] == run_id:
            found[int(number(row, "bytes", path, index, whole=True))] = int(
                number(row, "iterations", path, index, whole=True))
    if not found:
        raise InputError(f"{path}: no mpi allreduce rows of run {run_id}")
    return [f"{size} {count}" for size, count in sorted(found.items())]


def collbench_times(path):
    """{(round, bytes): (mean_us, iterations, max_us)}."""
    times = {}
    for index, row in mpi_rows(path):
        match = re.search(r"-r([0-9]+)$", row["run_id"])
        if not match:
            raise InputError(f"{path}: data row {index}: run_id '{row['run_id']}' does not end in -r<round>")
        mean = number(row, "mean_us", path, index)  # read_rows checked it is > 0
        size = int(number(row, "bytes", path, index, whole=True))
        times[(int(match.group(1)), size)] = (mean, int(number(row, "iterations", path, index, whole=True)),
                                              number(row, "max_us", path, index))
    return times


def osu_times(path):
    """{(round, bytes): (avg_us, max_us, iterations)} from osu_allreduce -f output."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror}") from error
    except UnicodeDecodeError as error:
        raise InputError(f"{path}: not osu_allreduce output (byte {error.start} is not UTF-8)") from error
    times, round_number = {}, None
    for number_of_line, line in enumerate(lines, start=1):
        marker = re.match(r"# round ([0-9]+):", line)
        if marker:
            round_number = int(marker.group(1))
            continue
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split()
        try:
            size, avg, minimum, maximum, count = int(fields[0]), float(fields[1]), float(
                fields[2]), float(fields[3]), int(fields[4])
        except (ValueError, IndexError) as error:
            raise InputError(f"{path}:{number_of_line}: expected 'size avg min max iterations' "
                             f"(osu_allreduce -f), got '{line.strip()}'") from error
        if round_number is None:
            raise InputError(f"{path}:{number_of_line}: a result before any '# round N:' line")
        if not all(math.isfinite(t) and t > 0 for t in (avg, minimum, maximum)):
            raise InputError(f"{path}:{number_of_line}: latencies must be finite and > 0, got "
                             f"'{line.strip()}'")
        if not minimum <= avg <= maximum:
            raise InputError(f"{path}:{number_of_line}: expected min <= avg <= max, got "
                             f"'{line.strip()}'")
        if size < 0 or count < 1:
            raise InputError(f"{path}:{number_of_line}: expected a size >= 0 and iterations >= 1, "
                             f"got '{line.strip()}'")
        times[(round_number, size)] = (avg, maximum, count)
    if not times:
        raise InputError(f"{path}: no osu_allreduce results")
    return times


def table(csv_path, osu_path):
    ours, theirs = collbench_times(csv_path), osu_times(osu_path)
    per_size = defaultdict(list)
    for key in sorted(ours):
        if key not in theirs:
            raise InputError(f"{osu_path}: no osu_allreduce result for round {key[0]}, {key[1]} bytes")
        (mean, count, worst), (avg, maximum, osu_count) = ours[key], theirs[key]
        if count != osu_count:
            raise InputError(f"{osu_path}: round {key[0]}, {key[1]} bytes: osu_allreduce ran "
                             f"{osu_count} iterations, collbench {count}")
        per_size[key[1]].append((count, avg, maximum, mean, worst))
    lines = ["| size | rounds | iterations | OSU avg µs | OSU max µs | collbench mean_us µs "
             "| collbench / OSU max | collbench / OSU avg | within 15% | collbench max_us µs |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|:---:|---:|"]
    all_within = True
    for size, rounds in sorted(per_size.items()):
        median = lambda column: statistics.median(r[column] for r in rounds)  # noqa: E731
        to_max = statistics.median(r[3] / r[2] for r in rounds)
        to_avg = statistics.median(r[3] / r[1] for r in rounds)
        within = abs(to_max - 1) <= TOLERANCE
        all_within &= within
        lines.append(f"| {format_bytes(size)} | {len(rounds)} | {median(0):.0f} | {median(1):.2f} | "
                     f"{median(2):.2f} | {median(3):.2f} | {to_max:.2f} | {to_avg:.2f} | "
                     f"{'yes' if within else 'no'} | {median(4):.0f} |")
    return lines, all_within


def main(argv):
    if len(argv) >= 2 and argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(argv) == 4 and argv[1] == "iterations":
        print("\n".join(iterations(argv[2], argv[3])))
        return 0
    if len(argv) == 4 and argv[1] == "table":
        lines, all_within = table(argv[2], argv[3])
        print("\n".join(lines))
        return 0 if all_within else 1
    raise InputError("usage: compare_osu_table.py iterations CSV RUN_ID | table CSV OSU.txt (see --help)")
