"""characterize's two-level (issue 21): on characterize.sh folders of several
ranks per host, the flat algorithms against the hierarchical ones at every
size >= 1 MiB, allreduce's ring / hierarchical at the largest size, and
collbench-fit's two-level bottom-up errors (models.csv's and
predictions.csv's bottom_up_two_level rows) of every collective's
algorithms.

Used by characterize's two-level; bad input is an InputError.
"""

import math
import os

from collbench_report.measurements import (Sweep, fitted_algorithms, number, predictions,
                                           print_checks)
from collbench_report.readers import InputError, read_optional_settings
from collbench_report.text import pipe_head, pipe_row, size_label, time_label


def two_level_modelled(out):
    """(collective, algorithm) of every algorithm collbench-fit priced over two
    levels (models.csv's bottom_up_two_level rows), or None without
    fit/models.csv."""
    return fitted_algorithms(out, "model", "bottom_up_two_level")


def two_level(outs, speedup=1.3, tolerance=0.15, min_bytes=2**20):
    """(Markdown lines, checks) of the folders `outs` (issue 21): per folder
    and collective, the medians at >= min_bytes with each point's
    bottom_up_two_level error; allreduce's ring / hierarchical at the largest
    size (>= speedup); and for every algorithm the sweep measured and
    collbench-fit priced over two levels, its largest |error| at >= min_bytes
    (<= tolerance; an algorithm priced without a prediction there fails)."""
    lines, checks = [], []
    for out in outs:
        env = read_optional_settings(os.path.join(out, "run.env"), "=")
        if not number(env.get("ppn"), 0) > 1:
            raise InputError(f"{out}: run.env says ppn={env.get('ppn', '(none)')}; two-level "
                             "needs a characterize.sh folder of several ranks per host (--ppn K "
                             "> 1)")
        label = f"{os.path.basename(os.path.normpath(out))} (map-by {env.get('map_by', '?')}, " \
                f"{env.get('ppn', '?')} ranks per host, hosts {env.get('hosts', '?')})"
        sweep = Sweep(out)
        points = {k: v for k, v in sweep.medians.items() if k[4] >= min_bytes}
        if not any(k[0] == "allreduce" for k in points):
            raise InputError(f"{out}: no allreduce rows at >= {size_label(min_bytes)} in sweep/")
        errors = {(r["family"], r["algorithm"], int(number(r["ranks"])), int(number(r["bytes"]))):
                  number(r["rel_err"]) for r in predictions(out)
                  if r.get("model") == "bottom_up_two_level"}
        for collective in [c for c in sweep.collectives if any(k[0] == c for k in points)]:
            lines += two_level_table(label, collective, sweep.algorithms[collective],
                                     {k: v for k, v in points.items() if k[0] == collective},
                                     errors)
        checks += two_level_speedup(label, points, speedup)
        modelled = two_level_modelled(out) or set()
        measured = {(k[0], k[2]) for k in points}
        if not modelled & measured:
            checks.append((f"{label}: two-level bottom-up predictions", "none in fit/models.csv",
                           "one per modelled algorithm", False))
        for collective in sweep.collectives:
            for a in sweep.algorithms[collective]:
                if (collective, a) not in modelled or (collective, a) not in measured:
                    continue
                mine = [(abs(e), p, b) for (c, name, p, b), e in errors.items()
                        if (c, name) == (collective, a) and b >= min_bytes and math.isfinite(e)]
                name = f"{label}: {collective} {a} two-level bottom-up error at >= " \
                       f"{size_label(min_bytes)}"
                if not mine:
                    checks.append((name, "none in fit/predictions.csv", "some", False))
                    continue
                worst = max(mine)
                checks.append((name, f"max {worst[0]:.1%} (p={worst[1]}, {size_label(worst[2])}; "
                               f"{len(mine)} points)", f"<= {tolerance:.0%}", worst[0] <= tolerance))
    return lines, checks


def two_level_table(label, collective, order, points, errors):
    """Markdown lines: one collective's medians and two-level errors."""
    lines = [f"**{label}**: {collective} median time, and the two-level bottom-up error", "",
             *pipe_head("algorithm", "transport", "p", "size", "median", "predicted error")]
    for (c, t, a, p, b) in sorted(points, key=lambda k: (k[1], k[3], k[4], order.index(k[2]))):
        error = errors.get((c, a, p, b))
        shown = f"{error:+.1%}" if error is not None and math.isfinite(error) else "-"
        lines.append(pipe_row(a, t, p, size_label(b), time_label(points[(c, t, a, p, b)]),
                              shown))
    return lines + [""]


def two_level_speedup(label, points, speedup):
    """Checks: allreduce's ring / hierarchical at the largest size of each
    transport and rank count."""
    checks = []
    for (t, p) in sorted({(k[1], k[3]) for k in points if k[0] == "allreduce"}):
        largest = max(k[4] for k in points if k[0] == "allreduce" and k[1] == t and k[3] == p)
        ring = points.get(("allreduce", t, "ring", p, largest))
        hier = points.get(("allreduce", t, "hierarchical", p, largest))
        if ring and hier:
            checks.append((f"{label}: {t} p={p} ring / hierarchical at {size_label(largest)}",
                           f"{ring / hier:.2f}x ({time_label(ring)} / {time_label(hier)})",
                           f">= {speedup:.2f}x", ring / hier >= speedup))
    return checks


def cmd_two_level(args):
    lines, checks = two_level(args.out, args.speedup, args.tolerance)
    print("\n".join(lines).rstrip())
    print()
    return print_checks(checks)
