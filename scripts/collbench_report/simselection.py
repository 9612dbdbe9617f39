"""The report's "best algorithm on N nodes like these": collbench-fit's
selection from characterize.sh's simulated allreduce sweep
(OUT/sim/selections.csv, written by the sim step from OUT/sim/allreduce.csv).

The choice is collbench-fit's, as in scripts/sim_sweep.sh's selection
study; this module only lays it out as a table of size against p.
"""

import collections
import os

from collbench_report.readers import InputError, read_rows
from collbench_report.text import pipe_head, pipe_row, size_label, time_label

SELECTIONS = os.path.join("sim", "selections.csv")


def read_choices(path):
    """(bytes, p) -> the selections.csv row of allreduce's choice there."""
    rows = read_rows(path, ("collective", "ranks", "bytes", "chosen", "chosen_median_us", "same",
                            "ties"), "the report", rules={})
    choices = {(int(float(r["bytes"])), int(r["ranks"])): r
               for r in rows if r["collective"] == "allreduce" and r["chosen"]}
    if not choices:
        raise InputError(f"{path}: no allreduce choice; rerun characterize.sh --steps sim")
    return choices


def cell(row):
    """The chosen algorithm, its simulated time, and the others that take
    the same steps or the same time (a simulation has no noise: a tie is equal
    times)."""
    text = f"{row['chosen']} ({time_label(float(row['chosen_median_us']))})"
    others = [name for column in ("same", "ties") for name in row[column].split(";") if name]
    return text + (f", = {', '.join(others)}" if others else "")


def selection_section(out):
    """Markdown lines of the table of OUT/sim/selections.csv ([] without it)."""
    path = os.path.join(out, SELECTIONS)
    if not os.path.exists(path):
        return []
    choices = read_choices(path)
    ranks = sorted({p for _, p in choices})
    by_size = collections.defaultdict(dict)
    for (size, p), row in choices.items():
        by_size[size][p] = row
    lines = [f"### The best allreduce algorithm per size on 2 to {ranks[-1]} nodes like these", "",
             "collbench-fit's selection from the simulated times above (sim/selections.csv, at "
             "tie tolerance 0: a simulated time has no noise, so the lowest time wins): per size "
             "and p the fastest algorithm and its time; \"=\" names the others that take the "
             "same steps or the same time.", "",
             *pipe_head("size", *(f"p = {p}" for p in ranks))]
    for size in sorted(by_size):
        lines.append(pipe_row(size_label(size),
                              *(cell(by_size[size][p]) if p in by_size[size] else "–"
                                for p in ranks)))
    return lines + ["", f"Data: [{SELECTIONS}]({SELECTIONS}).", ""]
