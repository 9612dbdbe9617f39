"""Whether two runs chose the same algorithms, within noise.

Usage: compare_selections.py [--out FILE] [--max-flips N] A/selections.csv B/selections.csv

Reads two selections.csv files of collbench-fit (a run's fit/selections.csv)
and, for every selection (collective, transport, provider, placement, dtype,
op, ranks) and size both measured, compares the chosen exchanges (the
`exchange` column: algorithms that make the same messages are one exchange,
named by its first algorithm). A size's tie set is its choice, its `same`
and its `ties` (other algorithms within noise of the fastest); its exchanges
are `exchange` and `tie_exchanges`. A **flip** is a size where one run's
chosen exchange is not the exchange of any algorithm in the other run's tie
set: the two runs disagree beyond what either run's noise allows, and not
only in which name of one exchange measured fastest. A size has ties when
either run's `ties` is not empty (equivalents are no ties). Prints a
Markdown table of the sizes where the choices differ (flip or within noise)
per selection, then one line: sizes compared, flips, sizes with ties.

Where both files have `mpi_verdict` (the MPI library's default against the
choice; `mpi` is the baseline, not a candidate), one more line: the sizes
where `mpi` was faster than the choice beyond noise in each run, and those
where the runs disagree on it beyond noise (faster in one, slower in the
other).

--max-flips N: exit status 1 when there are more than N flips (a check that
two quiet runs agree). --out FILE writes the text to FILE instead of
standard output (whole or not at all). Bad input (a missing or unreadable
file, missing columns, e.g. a file written before `exchange`, a choice
without its exchange, no size in common, one selection and size in two rows,
one file named twice): one line on stderr, exit 2.

A file with a `platform` column (scripts/sim_sweep.sh's selections.csv: one
selection per simulated platform) has its platform as part of each
selection: its rows are compared with the other file's rows of the same
platform.
"""
import os

from collbench_report.cli import OptionParser
from collbench_report.outputs import refuse_input_as_output, write_whole
from collbench_report.readers import InputError, read_rows
from collbench_report.text import format_bytes

GROUP = ["collective", "transport", "provider", "placement", "dtype", "op", "ranks"]
REQUIRED = GROUP + ["bytes", "chosen", "exchange", "ties", "tie_exchanges"]
# Of a file that holds the selections of several simulated platforms.
PLATFORM = "platform"


class Parser(OptionParser):
    def error(self, message):
        raise InputError(f"{message} (see --help)")


def names(cell):
    return set(filter(None, cell.split(";")))


def choices(path):
    """{(group..., bytes): (chosen, its exchange, the tie set's exchanges,
    has ties, mpi verdict or None)} of the sizes where a choice was made."""
    found = {}
    for row in read_rows(path, REQUIRED, "compare_selections.py"):
        if not row["chosen"]:
            continue
        if not row["exchange"]:
            raise InputError(f"{path}: {row['collective']} at {row['bytes']} B has a choice but "
                             "no exchange")
        key = (row.get(PLATFORM, ""), *(row[c] for c in GROUP), int(row["bytes"]))
        if key in found:
            raise InputError(f"{path}: two rows choose for {row['collective']} at {row['ranks']} "
                             f"ranks and {row['bytes']} B{' on ' + key[0] if key[0] else ''}: one "
                             "run's selections.csv has one")
        found[key] = (
            row["chosen"], row["exchange"], {row["exchange"]} | names(row["tie_exchanges"]),
            bool(names(row["ties"])), row.get("mpi_verdict"))
    return found


def named(chosen, exchange):
    """The choice as the table shows it: "swing_latency (recursive_doubling's
    exchange)" where the exchange's first name is another."""
    return chosen if chosen == exchange else f"{chosen} ({exchange}'s exchange)"


def compare_mpi(first, second):
    """The line on `mpi` against each run's choice, or None when either file
    has no verdicts (written before the column)."""
    common = set(first) & set(second)
    if any(first[k][4] is None or second[k][4] is None for k in common):
        return None
    faster = [sum(run[k][4] == "faster" for k in common) for run in (first, second)]
    opposite = sum({first[k][4], second[k][4]} == {"faster", "slower"} for k in common)
    return (f"mpi faster than the choice beyond noise at {faster[0]} sizes in the first run and "
            f"{faster[1]} in the second; the runs disagree on it beyond noise at {opposite}")


def compare(first, second):
    """(lines of text, flips, sizes compared, sizes with ties in either run)."""
    common = sorted(set(first) & set(second), key=lambda k: (k[:-1], k[-1]))
    if not common:
        raise InputError("the two files have no selection and size in common")
    flips = tied = 0
    by_group = {}
    for key in common:
        (a, a_exchange, a_within_noise, a_tied, _) = first[key]
        (b, b_exchange, b_within_noise, b_tied, _) = second[key]
        tied += a_tied or b_tied
        if a == b:
            continue
        flip = a_exchange not in b_within_noise or b_exchange not in a_within_noise
        flips += flip
        by_group.setdefault(key[:-1], []).append(
            f"| {format_bytes(key[-1])} | {named(a, a_exchange)} | {named(b, b_exchange)} | "
            f"{'flip' if flip else 'within noise'} |")
    lines = []
    for group, rows in by_group.items():
        platform, collective, transport, provider, placement, dtype, op, ranks = group
        where = f"{transport}{'/' + provider if provider else ''} {placement}".strip()
        where += f" on {platform}" if platform else ""
        lines += [f"### {collective}: {where}, {ranks} ranks, {dtype}{' ' + op if op else ''}", "",
                  "| size | first run | second run | |", "|---|---|---|---|", *rows, ""]
    return lines, flips, len(common), tied


def main(argv):
    parser = Parser(prog="compare_selections.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("first", help="a selections.csv of collbench-fit")
    parser.add_argument("second", help="another run's selections.csv")
    parser.add_argument("--out", help="write the text here instead of standard output")
    parser.add_argument("--max-flips", type=int, default=None,
                        help="exit 1 when there are more flips than this")
    args = parser.parse_args(argv[1:])
    if args.max_flips is not None and args.max_flips < 0:
        raise InputError(f"--max-flips {args.max_flips}: expected a count >= 0")
    if args.out:
        refuse_input_as_output(args.out, [args.first, args.second])
    first, second = choices(args.first), choices(args.second)
    if os.path.samefile(args.first, args.second):
        raise InputError(f"{args.first} and {args.second} are one file: a run compared with itself "
                         "has no flips; name two runs' selections.csv")
    lines, flips, compared, tied = compare(first, second)
    lines.append(f"{compared} sizes compared: {flips} flip{'' if flips == 1 else 's'}, "
                 f"{tied} with ties ({100 * tied / compared:.0f}%)")
    mpi = compare_mpi(first, second)
    if mpi:
        lines.append(mpi)
    text = "\n".join(lines) + "\n"
    if args.out:
        write_whole(args.out, text)
    else:
        print(text, end="")
    return 1 if args.max_flips is not None and flips > args.max_flips else 0
