"""The report section "Your model on N nodes like these" (scripts/characterize.sh
--sim-workload): one section per scale_<workload>.csv of the sim step
(scripts/scale.sh's `simscaling` columns), a table per scaling mode in the CSV
(weak, then strong) with the simulated and the formula's iteration time, exposed
communication, overlap fraction, speedup and efficiency per p, and where the
simulated efficiency falls under 50%.

Used by collbench_report.characterize's report; bad input is an InputError.
"""

import glob
import os

from collbench_report.readers import InputError, read_rows
from collbench_report.text import pipe_head, pipe_row
from collbench_csv import column_rules, columns

# scripts/scale.sh's CSV (results/README.md, `simscaling`).
SIMSCALING_COLUMNS = columns("simscaling")

# The modes in the order the section shows them: weak is characterize.sh's
# default, strong only with --sim-global-batch.
MODES = ("weak", "strong")


def your_model(out):
    """Markdown lines of every scale_<workload>.csv of the sim step ([] without one)."""
    return [line for path in sorted(glob.glob(os.path.join(out, "sim", "scale_*.csv")))
            for line in workload_scaling(path)]


def workload_scaling(path):
    """Markdown lines of one scale.sh CSV: the heading, then each mode's table."""
    rows = read_rows(path, SIMSCALING_COLUMNS, "the report", column_rules("simscaling"))
    by_mode = {mode: mode_rows(path, rows, mode) for mode in MODES
               if any(r["mode"] == mode for r in rows)}
    if not by_mode:
        raise InputError(f"{path}: no row; rerun characterize.sh --steps sim")
    first = next(iter(by_mode.values()))[1]
    # The compute source without the per-p batch and the note on reused buckets.
    compute = first["compute"].split("; ")[0].split(", ")[0]
    nodes = max(int(r["ranks"]) for r in rows)
    lines = [f"## Your model on {nodes} nodes like these: {first['workload']}, "
             f"compute {compute}", "",
             f"One training iteration of {first['workload']} per p, simulated (`scripts/scale.sh`: "
             f"`collbench --transport sim --families train`, every bucket's {first['algorithm']} "
             f"allreduce run message by message, overlap {first['overlap']}) on a "
             f"{first['platform']} of p nodes calibrated by this run's fit, beside "
             "`collbench-predict`'s formula for the same iteration. Exposed communication: the "
             "iteration less the same iteration's compute alone; overlap: the fraction of the "
             "exchange (its buckets back to back, alone) hidden behind the backward pass.", ""]
    for mode, mine in by_mode.items():
        lines += mode_table(mode, mine)
    png = os.path.splitext(path)[0] + ".png"
    name = os.path.basename(png)
    if os.path.exists(png):
        lines += [f"![{name}](sim/{name})", ""]
    return lines + [f"Data: [sim/{os.path.basename(path)}](sim/{os.path.basename(path)}).", ""]


def mode_rows(path, rows, mode):
    """The rows of one mode by p, from p = 1 (the speedup's base) and at
    least one above it."""
    mine = sorted((r for r in rows if r["mode"] == mode), key=lambda r: int(r["ranks"]))
    if mine[0]["ranks"] != "1":
        raise InputError(f"{path}: no {mode}-scaling row at p = 1 (the speedup's base); rerun "
                         "characterize.sh --steps sim")
    if len(mine) == 1:
        raise InputError(f"{path}: no {mode}-scaling row above p = 1; rerun characterize.sh "
                         "--steps sim")
    return mine


def mode_table(mode, rows):
    """Markdown lines of one mode: what it keeps fixed, the table of p > 1,
    where efficiency falls under 50%."""
    base, scaled = rows[0], rows[1:]
    if mode == "weak":
        what = (f"### Weak scaling: {base['samples_per_rank']} samples per rank at every p\n\n"
                "Each rank's compute is the same as at p = 1 "
                f"({time_s_label(float(base['simulated_iteration_s']))}); what grows is the "
                "exchange.")
    else:
        batch = round(float(base["samples_per_rank"]))
        what = (f"### Strong scaling: a global batch of {batch} samples split over p\n\n"
                f"Each rank computes {batch}/p samples "
                f"({time_s_label(float(base['simulated_iteration_s']))} at p = 1), so its "
                "compute shrinks with p while the exchange does not: the exposed share grows. "
                "p beyond the batch is not run (a rank cannot hold less than one sample).")
    lines = [what, "", *pipe_head("p", "samples per rank", "simulated iteration", "formula's",
                                  "simulated / formula − 1", "exposed communication (formula's)",
                                  "overlap (formula's)", "speedup (formula's)",
                                  "efficiency (formula's)")]
    for r in scaled:
        lines.append(pipe_row(
            r["ranks"], f"{float(r['samples_per_rank']):g}",
            time_s_label(float(r["simulated_iteration_s"])),
            time_s_label(float(r["predicted_iteration_s"])),
            f"{100 * float(r['simulated_vs_predicted']):+.2f}%",
            f"{time_s_label(float(r['simulated_exposed_s']))} "
            f"({time_s_label(float(r['predicted_exposed_s']))})",
            f"{fraction_label(r['simulated_overlap'])} ({fraction_label(r['predicted_overlap'])})",
            f"{float(r['simulated_speedup']):.1f} ({float(r['predicted_speedup']):.1f})",
            f"{100 * float(r['simulated_efficiency']):.0f}% "
            f"({100 * float(r['predicted_efficiency']):.0f}%)"))
    return lines + ["", half_efficiency(mode, scaled), ""]


def half_efficiency(mode, rows):
    """The sentence on the first p whose simulated efficiency is under 50%,
    or that none is."""
    # Weak: T(p) > 2 T(1) is exposed communication beyond the compute; strong
    # compares with p = 1's whole batch, whose GEMMs may run faster per sample.
    meaning = ("each rank spends more of an iteration waiting on the exchange than computing"
               if mode == "weak" else "p nodes do less than half of p times one node's work")
    for r in rows:
        if float(r["simulated_efficiency"]) < 0.5:
            return (f"Efficiency falls under 50% at p = {r['ranks']} "
                    f"({100 * float(r['simulated_efficiency']):.0f}%): from there on {meaning}.")
    last = rows[-1]
    return (f"Efficiency does not fall under 50% up to p = {last['ranks']} "
            f"({100 * float(last['simulated_efficiency']):.0f}% there).")


def fraction_label(text):
    """An overlap fraction with two decimals; "–" where the CSV has none
    (scale.sh without --communication-alone)."""
    return f"{float(text):.2f}" if text else "–"


def time_s_label(seconds):
    """Seconds with three significant digits, in ms below one second."""
    return f"{seconds:.3g} s" if abs(seconds) >= 1 else f"{seconds * 1e3:.3g} ms"
