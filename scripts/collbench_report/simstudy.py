"""The simulated studies of scripts/sim_sweep.sh (results/sim/README.md):
figures and the numbers the README quotes, from the CSVs of one sweep.

Usage: sim_study.py DIR [--out DIR2] [--tree-ring TREE,RING] [--swing FORMS --rivals LIST]
  DIR holds any of scale.csv, tree_ring.csv, swing.csv (collbench CSVs of
  --transport sim) and selections.csv (collbench-fit's, from scale.csv, with
  the platform as first column). The algorithms compared are named by the
  caller (scripts/sim_sweep.sh, which chose what ran): --tree-ring the
  challenger and the one it is compared with in tree_ring.csv, --swing the
  forms whose best is compared with each of --rivals in swing.csv.
  Writes into DIR2 (default DIR) scale.png (busbw against p: a row per
  collective and size, a column per platform) and crossovers.png (double
  binary tree over ring against size per p; the best Swing form over ring,
  recursive doubling and Rabenseifner against size per torus), those whose
  CSV is there, replaced together; prints on stdout, as Markdown, where the
  best algorithm changes with p, the size below which the tree beats ring,
  each Swing form's time ratios and the selection table.

Run with Debian's /usr/bin/python3 (python3-matplotlib). Bad input (no CSV of
a study in DIR, missing columns, an --out that cannot be written, no
matplotlib) prints one line on stderr and exits with status 2, before any PNG
is written.
"""

import argparse
import collections
import math
import os

from collbench_report.cli import OptionParser, guarded
from collbench_report.figures import Palette, pyplot, save, size_axis
from collbench_report.outputs import ReplaceTogether
from collbench_report.readers import InputError, number, read_rows
from collbench_csv import format_bytes

STUDIES = ("scale", "tree_ring", "swing")
COLUMNS = ("collective", "algorithm", "ranks", "bytes", "median_us", "busbw_GBps",
           "sim_platform")


def platform_kind(spec):
    """star, fat-tree, torus3d or torus2d: the study's name of a platform."""
    if spec.startswith("torus:"):
        return f"torus{spec.count('x') + 1}d"
    return spec.split(":")[0]


def read_points(path):
    """{(kind, collective, bytes): {algorithm: {ranks: (time_us, busbw)}}}."""
    rows = read_rows(path, COLUMNS, "sim_study.py")
    points = collections.defaultdict(lambda: collections.defaultdict(dict))
    for index, row in enumerate(rows, start=1):
        key = (platform_kind(row["sim_platform"]), row["collective"],
               int(number(row, "bytes", path, index, whole=True)))
        ranks = int(number(row, "ranks", path, index, whole=True))
        points[key][row["algorithm"]][ranks] = (number(row, "median_us", path, index),
                                                number(row, "busbw_GBps", path, index))
    if not points:
        raise InputError(f"{path}: no rows")
    return points


def best_by_ranks(curves):
    """[(ranks, fastest algorithm, its time)] over the ranks any curve has."""
    ranks = sorted({p for curve in curves.values() for p in curve})
    best = []
    for p in ranks:
        name = min((n for n in curves if p in curves[n]), key=lambda n: curves[n][p][0])
        best.append((p, name, curves[name][p][0]))
    return best


def runs(best):
    """'ring p=2..8, rabenseifner p=16..1024': the runs of one winner."""
    parts, start = [], 0
    for i in range(1, len(best) + 1):
        if i == len(best) or best[i][1] != best[start][1]:
            first, last = best[start][0], best[i - 1][0]
            span = f"p={first}" if first == last else f"p={first}..{last}"
            parts.append(f"{best[start][1]} {span}")
            start = i
    return ", ".join(parts)


def scale_text(points):
    lines = ["## Fastest algorithm against p (scale.csv)", ""]
    for (kind, collective, size), curves in sorted(points.items()):
        lines.append(f"- {kind}, {collective}, {format_bytes(size)}: {runs(best_by_ranks(curves))}")
    return lines


def tree_ring_rows(points, pair):
    """[(ranks, size, challenger/other time ratio)] where both ran."""
    rows = []
    for (_kind, _collective, size), curves in points.items():
        tree, ring = curves.get(pair[0], {}), curves.get(pair[1], {})
        for p in sorted(set(tree) & set(ring)):
            rows.append((p, size, tree[p][0] / ring[p][0]))
    return sorted(rows)


def tree_ring_text(rows, pair):
    lines = [f"## {pair[0]} against {pair[1]} (tree_ring.csv)", "",
             f"| p | {pair[0]} / {pair[1]} time at each size | the size below which "
             f"{pair[0]} wins |",
             "|---|---|---|"]
    by_ranks = collections.defaultdict(list)
    for p, size, ratio in rows:
        by_ranks[p].append((size, ratio))
    for p, cells in sorted(by_ranks.items()):
        ratios = ", ".join(f"{format_bytes(s)} {r:.2f}" for s, r in cells)
        lines.append(f"| {p} | {ratios} | {crossing(cells)} |")
    return lines


def crossing(cells):
    """Where a ratio curve [(size, ratio)] first rises through 1, interpolated
    on log-log axes: '≈ 3.4 KiB (between 1 KiB and 4 KiB)'; 'below S' or
    'none measured' when it never crosses inside the sizes."""
    if cells[0][1] >= 1:
        return f"below {format_bytes(cells[0][0])}"
    for (s0, r0), (s1, r1) in zip(cells, cells[1:]):
        if r0 < 1 <= r1:
            at = math.exp(math.log(s0) + math.log(s1 / s0) * -math.log(r0) / math.log(r1 / r0))
            return f"≈ {format_bytes(round(at))} (between {format_bytes(s0)} and {format_bytes(s1)})"
    return f"none up to {format_bytes(cells[-1][0])}"


def swing_rows(points, forms_named, rivals):
    """[(ranks, size, rival, form, form/rival time ratio)] of every form."""
    rows = []
    for (_kind, _collective, size), curves in points.items():
        for p in sorted({p for c in curves.values() for p in c}):
            for form in (n for n in forms_named if p in curves.get(n, {})):
                for rival in rivals:
                    if p in curves.get(rival, {}):
                        rows.append((p, size, rival, form,
                                     curves[form][p][0] / curves[rival][p][0]))
    return sorted(rows)


def swing_text(rows, rivals):
    lines = ["## " + " and ".join(sorted({r[3] for r in rows})) + " against "
             + ", ".join(rivals) + " on 2-D tori (swing.csv): time ratios", "",
             "| p (torus) | size | form | " + " | ".join(f"/ {r}" for r in rivals) + " |",
             "|---|---|---|" + "---|" * len(rivals)]
    cells = collections.defaultdict(dict)
    for p, size, rival, form, ratio in rows:
        cells[(p, size, form)][rival] = ratio
    for (p, size, form), ratios in sorted(cells.items()):
        side = int(round(p ** 0.5))
        shown = [f"{ratios[r]:.2f}" if r in ratios else "–" for r in rivals]
        lines.append(f"| {p} ({side}x{side}) | {format_bytes(size)} | {form} | "
                     + " | ".join(shown) + " |")
    return lines


def selection_text(path):
    """Per platform, collective and p: the chosen algorithm at each size."""
    rows = read_rows(path, ("platform", "collective", "ranks", "bytes", "chosen"), "sim_study.py",
                     rules={})
    lines = ["## Selection (selections.csv: collbench-fit's choice per platform, collective, p "
             "and size)", "", "| platform | collective | p | size: choice |", "|---|---|---|---|"]
    cells = collections.defaultdict(list)
    for row in rows:
        cells[(row["platform"], row["collective"], int(row["ranks"]))].append(
            (int(float(row["bytes"])), row["chosen"] or "none"))
    for (kind, collective, p), choices in sorted(cells.items()):
        text = ", ".join(f"{format_bytes(s)}: {c}" for s, c in sorted(choices))
        lines.append(f"| {kind} | {collective} | {p} | {text} |")
    return lines


def draw_scale(plt, points, palette, outputs, written):
    kinds = [k for k in ("star", "fat-tree", "torus3d") if any(key[0] == k for key in points)]
    panels = sorted({(c, s) for (_k, c, s) in points},
                    key=lambda cs: (cs[0] != "allreduce", cs[0], cs[1]))
    fig, axes = plt.subplots(len(panels), len(kinds), figsize=(5 * len(kinds), 3.4 * len(panels)),
                             squeeze=False)
    for row, (collective, size) in enumerate(panels):
        for column, kind in enumerate(kinds):
            axis = axes[row][column]
            for name in palette.ordered(points.get((kind, collective, size), {}).keys()):
                curve = points[(kind, collective, size)][name]
                ranks = sorted(curve)
                axis.plot(ranks, [curve[p][1] for p in ranks], label=name, color=palette.color(name),
                          marker=palette.marker(name), markersize=4)
            axis.set_xscale("log", base=2)
            axis.set_yscale("log")
            axis.set_title(f"{collective} {format_bytes(size)}, {kind}", fontsize=9)
            axis.set_xlabel("ranks p")
            axis.set_ylabel("busbw (GB/s)")
            axis.grid(True, which="both", alpha=0.3)
            if axis.lines:
                axis.legend(fontsize=6)
    fig.tight_layout()
    save(fig, outputs, "scale.png", written)
    plt.close(fig)


def draw_crossovers(plt, FuncFormatter, tree_ring, swing, names, outputs,  # noqa: N803
                    written):
    count = (tree_ring is not None) + (swing is not None)
    fig, axes = plt.subplots(1, count, figsize=(6.5 * count, 4.5), squeeze=False)
    axis_iter = iter(axes[0])
    if tree_ring is not None:
        axis = next(axis_iter)
        by_ranks = collections.defaultdict(list)
        for p, size, ratio in tree_ring:
            by_ranks[p].append((size, ratio))
        for p, cells in sorted(by_ranks.items()):
            axis.plot([s for s, _ in cells], [r for _, r in cells], marker="o", label=f"p={p}")
        axis.axhline(1, color="black", linewidth=0.8)
        size_axis(axis, FuncFormatter)
        axis.set_yscale("log")
        pair = names["tree_ring"]
        axis.set_ylabel(f"{pair[0]} / {pair[1]} time (< 1: {pair[0]} wins)")
        axis.set_title(f"fat-tree 2:1: {pair[0]} against {pair[1]}", fontsize=9)
        axis.legend(fontsize=7)
        axis.grid(True, which="both", alpha=0.3)
    if swing is not None:
        axis = next(axis_iter)
        best = {}
        for p, size, rival, _form, ratio in swing:
            best[(p, rival, size)] = min(ratio, best.get((p, rival, size), math.inf))
        curves = collections.defaultdict(list)
        for (p, rival, size), ratio in sorted(best.items()):
            curves[(p, rival)].append((size, ratio))
        styles = dict(zip(names["rivals"], ("-", "--", ":", "-.")))
        colors = {}
        for (p, rival), cells in sorted(curves.items()):
            color = colors.setdefault(p, f"C{len(colors)}")
            side = int(round(p ** 0.5))
            axis.plot([s for s, _ in cells], [r for _, r in cells], linestyle=styles[rival],
                      color=color, marker="o", markersize=3, label=f"{side}x{side} / {rival}")
        axis.axhline(1, color="black", linewidth=0.8)
        size_axis(axis, FuncFormatter)
        axis.set_yscale("log")
        axis.set_ylabel("best of " + ", ".join(names["swing"]) + " / rival time (< 1: it wins)")
        axis.set_title("2-D tori, ranks in row-major order", fontsize=9)
        axis.legend(fontsize=6, ncol=2)
        axis.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    save(fig, outputs, "crossovers.png", written)
    plt.close(fig)


def names_of(text, option, count=None):
    """The algorithm names of a comma-separated option, or [] without it."""
    names = [n for n in (text or "").split(",") if n]
    if text is not None and (not names or (count and len(names) != count)):
        raise InputError(f"{option} {text}: give {count or 'some'} comma-separated algorithm names")
    return names


def run(args):
    data = {s: os.path.join(args.dir, f"{s}.csv") for s in STUDIES}
    data = {s: p for s, p in data.items() if os.path.isfile(p)}
    if not data:
        raise InputError(f"{args.dir}: none of {', '.join(s + '.csv' for s in STUDIES)}")
    points = {s: read_points(p) for s, p in data.items()}
    selections = os.path.join(args.dir, "selections.csv")
    lines = []
    if "scale" in points:
        lines += scale_text(points["scale"]) + [""]
    names = {"tree_ring": names_of(args.tree_ring, "--tree-ring", 2),
             "swing": names_of(args.swing, "--swing"), "rivals": names_of(args.rivals, "--rivals")}
    tree_ring = swing = None
    if "tree_ring" in points:
        if not names["tree_ring"]:
            raise InputError("tree_ring.csv needs --tree-ring TREE,RING")
        tree_ring = tree_ring_rows(points["tree_ring"], names["tree_ring"])
        lines += tree_ring_text(tree_ring, names["tree_ring"]) + [""]
    if "swing" in points:
        if not names["swing"] or not names["rivals"]:
            raise InputError("swing.csv needs --swing FORMS and --rivals LIST")
        swing = swing_rows(points["swing"], names["swing"], names["rivals"])
        lines += swing_text(swing, names["rivals"]) + [""]
    if os.path.isfile(selections):
        lines += selection_text(selections) + [""]
    plt, FuncFormatter = pyplot()  # noqa: N806
    written = []
    with ReplaceTogether(args.out or args.dir, inputs=list(data.values())) as outputs:
        if "scale" in points:
            seen = [a for curves in points["scale"].values() for a in curves]
            draw_scale(plt, points["scale"], Palette([], seen), outputs, written)
        if tree_ring is not None or swing is not None:
            draw_crossovers(plt, FuncFormatter, tree_ring, swing, names, outputs, written)
    print("\n".join(lines))
    for path in written:
        print(path)
    return 0


def main(argv):
    parser = OptionParser(prog="sim_study.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir", help="the folder of scripts/sim_sweep.sh's CSVs")
    parser.add_argument("--out", help="folder for the PNGs (default: DIR)")
    parser.add_argument("--tree-ring", help="TREE,RING: tree_ring.csv's challenger and the other")
    parser.add_argument("--swing", help="the forms whose best swing.csv compares")
    parser.add_argument("--rivals", help="what swing.csv compares them with")
    args = parser.parse_args(argv[1:])
    return guarded("sim_study.py", lambda: run(args), "cannot write the figures")
