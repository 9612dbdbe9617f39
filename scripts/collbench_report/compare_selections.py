"""Whether two runs chose the same algorithms, within noise.

Usage: compare_selections.py [--out FILE] [--max-flips N] A/selections.csv B/selections.csv

Reads two selections.csv files of collbench-fit (a run's fit/selections.csv)
and, for every selection (collective, transport, provider, placement, dtype,
op, ranks) and size both measured, compares the choices. A size's tie set is
its choice, its `same` (the choice's equivalents: the same exchange) and its
`ties` (other algorithms within noise of the fastest); a **flip** is a size
where one run's choice lies outside the other run's tie set: the two runs
disagree beyond what either run's noise allows. A size has ties when either
run's `ties` is not empty (equivalents are no ties). Prints a Markdown table
of the sizes where the choices differ (flip or within noise) per selection,
then one line: sizes compared, flips, sizes with ties. A selections.csv
without the `same` column (written before it) reads as having none.

Where both files have `mpi_verdict` (the MPI library's default against the
choice; `mpi` is the baseline, not a candidate), one more line: the sizes
where `mpi` was faster than the choice beyond noise in each run, and those
where the runs disagree on it beyond noise (faster in one, slower in the
other).

--max-flips N: exit status 1 when there are more than N flips (a check that
two quiet runs agree). --out FILE writes the text to FILE instead of
standard output (whole or not at all). Bad input (a missing or unreadable
file, missing columns, no size in common): one line on stderr, exit 2.
"""
import argparse

from collbench_report.outputs import refuse_input_as_output, write_whole
from collbench_report.readers import InputError, read_rows
from collbench_report.text import format_bytes

GROUP = ["collective", "transport", "provider", "placement", "dtype", "op", "ranks"]
REQUIRED = GROUP + ["bytes", "chosen", "ties"]


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise InputError(f"{message} (see --help)")


def choices(path):
    """{(group..., bytes): (chosen, tie set, has ties, mpi verdict or None)}
    of the sizes where a choice was made."""
    found = {}
    for row in read_rows(path, REQUIRED, "compare_selections.py"):
        if not row["chosen"]:
            continue
        ties = set(filter(None, row["ties"].split(";")))
        same = set(filter(None, (row.get("same") or "").split(";")))
        found[tuple(row[c] for c in GROUP) + (int(row["bytes"]),)] = (
            row["chosen"], {row["chosen"]} | same | ties, bool(ties), row.get("mpi_verdict"))
    return found


def compare_mpi(first, second):
    """The line on `mpi` against each run's choice, or None when either file
    has no verdicts (written before the column)."""
    common = set(first) & set(second)
    if any(first[k][3] is None or second[k][3] is None for k in common):
        return None
    faster = [sum(run[k][3] == "faster" for k in common) for run in (first, second)]
    opposite = sum({first[k][3], second[k][3]} == {"faster", "slower"} for k in common)
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
        (a, a_ties, a_tied, _), (b, b_ties, b_tied, _) = first[key], second[key]
        tied += a_tied or b_tied
        if a == b:
            continue
        flip = a not in b_ties or b not in a_ties
        flips += flip
        by_group.setdefault(key[:-1], []).append(
            f"| {format_bytes(key[-1])} | {a} | {b} | {'flip' if flip else 'within noise'} |")
    lines = []
    for group, rows in by_group.items():
        collective, transport, provider, placement, dtype, op, ranks = group
        where = f"{transport}{'/' + provider if provider else ''} {placement}".strip()
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
