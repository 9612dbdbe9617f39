"""The table half of compare_osu.sh: collbench's `mpi` rows against OSU's blocking collectives.

Usage: compare_osu_table.py iterations CSV RUN_ID [FAMILY]
       compare_osu_table.py table CSV OSU.txt

iterations: per size, the timed iterations of collbench's `mpi` row of
FAMILY (default allreduce) in run RUN_ID of CSV, one "BYTES ITERATIONS" line
each (what the OSU test's -i is given).
table: a Markdown table per collective and size of CSV's `mpi` rows (one
run per round, run ids ending in -r<round>) and OSU.txt (the OSU tests' -f
output, each job after a "# round <round>: osu_<name> -m SIZE:SIZE ..."
line): the median over rounds of OSU's avg and max and of collbench's
osu_avg_us, mean_us and nccl_avg_us; the median over rounds of collbench
osu_avg_us / OSU avg, "yes" when it is within 10% of 1 or the two are
within 0.05 us (OSU prints two decimals); the median over rounds of
mean_us / OSU max; last, the median over rounds of collbench's slowest call
(max_us), which shows when a round had a call stalled by another process.
"OSU rounds" is OSU's own spread, its slowest round's avg over its fastest's
minus 1: where that exceeds the 10%, the machine moved more between
launches than the tolerance, and a size not within is marked "spread", not
"no" (it cannot be judged at 10% here). A last line counts the three.
OSU's SIZE is collbench's bytes for allreduce, bcast and reduce, and bytes
/ ranks for allgather (each rank's block) and alltoall (what goes to each
rank). Exit status 0 when every size is within, 1 when some is not, 2 on
bad input (one line on stderr).
"""
import math
import re
import statistics
from collections import defaultdict

from collbench_report.readers import InputError, number, read_rows
from collbench_report.text import format_bytes

# What `iterations` reads, and what `table` reads besides.
REQUIRED = ["family", "algorithm", "bytes", "iterations", "run_id"]
TABLE_REQUIRED = REQUIRED + ["ranks", "mean_us", "max_us", "osu_avg_us", "nccl_avg_us"]
TOLERANCE = 0.10
ABSOLUTE_US = 0.05
# OSU's test name -> collbench's family, and whether OSU's -m is each rank's
# block of collbench's vector (bytes = ranks x size).
OSU_FAMILIES = {"allreduce": ("allreduce", False), "allgather": ("allgather", True),
                "bcast": ("broadcast", False), "reduce": ("reduce", False),
                "alltoall": ("alltoall", True)}


def mpi_rows(path, families=None, required=REQUIRED):
    """(row index, row) of the `mpi` rows of a collbench CSV, of `families` (all when None)."""
    rows = read_rows(path, required, "compare_osu_table.py")
    chosen = [(i, r) for i, r in enumerate(rows, start=1)
              if r["algorithm"] == "mpi" and (families is None or r["family"] in families)]
    if not chosen:
        raise InputError(f"{path}: no rows of collbench's mpi "
                         f"{' or '.join(families) if families else 'collectives'}")
    return chosen


def iterations(path, run_id, family="allreduce"):
    found = {}
    for index, row in mpi_rows(path, [family]):
        if row["run_id"] == run_id:
            found[int(number(row, "bytes", path, index, whole=True))] = int(
                number(row, "iterations", path, index, whole=True))
    if not found:
        raise InputError(f"{path}: no mpi {family} rows of run {run_id}")
    return [f"{size} {count}" for size, count in sorted(found.items())]


def collbench_times(path):
    """{(round, family, bytes): (osu_avg_us, mean_us, nccl_avg_us, iterations, max_us, ranks)}."""
    families = [family for family, _ in OSU_FAMILIES.values()]
    times = {}
    for index, row in mpi_rows(path, families, TABLE_REQUIRED):
        match = re.search(r"-r([0-9]+)$", row["run_id"])
        if not match:
            raise InputError(f"{path}: data row {index}: run_id '{row['run_id']}' does not end in -r<round>")
        if not row["osu_avg_us"]:
            raise InputError(f"{path}: data row {index}: no osu_avg_us (run with --sync barrier)")
        size = int(number(row, "bytes", path, index, whole=True))
        times[(int(match.group(1)), row["family"], size)] = (
            number(row, "osu_avg_us", path, index), number(row, "mean_us", path, index),
            number(row, "nccl_avg_us", path, index),
            int(number(row, "iterations", path, index, whole=True)),
            number(row, "max_us", path, index), int(number(row, "ranks", path, index, whole=True)))
    return times


def osu_times(path):
    """{(round, osu name, size): (avg_us, max_us, iterations)} from the OSU tests' -f output."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror}") from error
    except UnicodeDecodeError as error:
        raise InputError(f"{path}: not OSU output (byte {error.start} is not UTF-8)") from error
    times, round_number, name = {}, None, None
    for number_of_line, line in enumerate(lines, start=1):
        marker = re.match(r"# round ([0-9]+): osu_([a-z]+) ", line)
        if marker:
            round_number, name = int(marker.group(1)), marker.group(2)
            if name not in OSU_FAMILIES:
                raise InputError(f"{path}:{number_of_line}: osu_{name} is not one of "
                                 f"osu_{', osu_'.join(OSU_FAMILIES)}")
            continue
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split()
        try:
            size, avg, minimum, maximum, count = int(fields[0]), float(fields[1]), float(
                fields[2]), float(fields[3]), int(fields[4])
        except (ValueError, IndexError) as error:
            raise InputError(f"{path}:{number_of_line}: expected 'size avg min max iterations' "
                             f"(an OSU test's -f), got '{line.strip()}'") from error
        if round_number is None:
            raise InputError(f"{path}:{number_of_line}: a result before any '# round N: osu_NAME' line")
        if not all(math.isfinite(t) and t >= 0 for t in (avg, minimum, maximum)):
            raise InputError(f"{path}:{number_of_line}: latencies must be finite and >= 0, got "
                             f"'{line.strip()}'")
        if not minimum <= avg <= maximum:
            raise InputError(f"{path}:{number_of_line}: expected min <= avg <= max, got "
                             f"'{line.strip()}'")
        if size < 0 or count < 1:
            raise InputError(f"{path}:{number_of_line}: expected a size >= 0 and iterations >= 1, "
                             f"got '{line.strip()}'")
        times[(round_number, name, size)] = (avg, maximum, count)
    if not times:
        raise InputError(f"{path}: no OSU results")
    return times


def within(ours, theirs):
    return abs(ours - theirs) <= max(TOLERANCE * theirs, ABSOLUTE_US)


def verdict(ok, osu_spread):
    """'yes' within, 'spread' not within where OSU's own rounds are further
    apart than the tolerance, 'no' otherwise."""
    if ok:
        return "yes"
    return "spread" if osu_spread > TOLERANCE else "no"


def table(csv_path, osu_path):
    ours, theirs = collbench_times(csv_path), osu_times(osu_path)
    per_case = defaultdict(list)
    for (round_number, name, size), (avg, maximum, osu_count) in sorted(theirs.items()):
        family, blocks = OSU_FAMILIES[name]
        matches = [(key, value) for key, value in ours.items()
                   if key[0] == round_number and key[1] == family
                   and key[2] == size * (value[5] if blocks else 1)]
        if not matches:
            raise InputError(f"{csv_path}: no collbench mpi {family} row for osu_{name} -m {size} "
                             f"in round {round_number}")
        osu_avg, mean, nccl, count, worst, _ = matches[0][1]
        if count != osu_count:
            raise InputError(f"{osu_path}: round {round_number}, osu_{name} {size} bytes: OSU ran "
                             f"{osu_count} iterations, collbench {count}")
        per_case[(name, size, matches[0][0][2])].append(
            (count, avg, maximum, osu_avg, mean, nccl, worst))
    lines = ["| collective | OSU -m | collbench bytes | rounds | iterations | OSU avg µs "
             "| collbench osu_avg_us µs | osu_avg_us / OSU avg | within 10% or 0.05 µs "
             "| OSU max µs | collbench mean_us µs | mean_us / OSU max | collbench nccl_avg_us µs "
             "| collbench max_us µs | OSU rounds |",
             "|---|---:|---:|---:|---:|---:|---:|---:|:---:|---:|---:|---:|---:|---:|---:|"]
    all_within = True
    counts = {"yes": 0, "no": 0, "spread": 0}
    order = list(OSU_FAMILIES)
    for (name, size, bytes_), rounds in sorted(per_case.items(),
                                               key=lambda item: (order.index(item[0][0]), item[0][1])):
        median = lambda column: statistics.median(r[column] for r in rounds)  # noqa: E731
        to_avg = statistics.median(r[3] / r[1] if r[1] > 0 else math.inf for r in rounds)
        to_max = statistics.median(r[4] / r[2] if r[2] > 0 else math.inf for r in rounds)
        ok = statistics.median(1 if within(r[3], r[1]) else 0 for r in rounds) >= 0.5
        all_within &= ok
        fastest = min(r[1] for r in rounds)
        osu_spread = max(r[1] for r in rounds) / fastest - 1 if fastest > 0 else math.inf
        judged = verdict(ok, osu_spread)
        counts[judged] += 1
        lines.append(f"| {name} | {format_bytes(size)} | {format_bytes(bytes_)} | {len(rounds)} "
                     f"| {median(0):.0f} | {median(1):.2f} | {median(3):.2f} | {to_avg:.2f} "
                     f"| {judged} | {median(2):.2f} | {median(4):.2f} | {to_max:.2f} "
                     f"| {median(5):.2f} | {median(6):.0f} | {100 * osu_spread:.0f}% |")
    lines.append("")
    lines.append(f"within 10% or 0.05 µs: {counts['yes']} of {sum(counts.values())} sizes; not "
                 f"within: {counts['no']}; not within, where OSU's own rounds were more than 10% "
                 f"apart: {counts['spread']}")
    return lines, all_within


def main(argv):
    if len(argv) >= 2 and argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(argv) in (4, 5) and argv[1] == "iterations":
        print("\n".join(iterations(*argv[2:])))
        return 0
    if len(argv) == 4 and argv[1] == "table":
        lines, all_within = table(argv[2], argv[3])
        print("\n".join(lines))
        return 0 if all_within else 1
    raise InputError("usage: compare_osu_table.py iterations CSV RUN_ID [FAMILY] | table CSV OSU.txt "
                     "(see --help)")
