"""Plots of collbench results (matplotlib, Agg backend: no display needed).

Subcommands:
  sweep CSV... --out DIR               time and busbw vs size per algorithm, one PNG per
                                       (collective, transport, provider, ranks, dtype) of the
                                       collectives' size sweeps (allreduce, reduce_scatter,
                                       ...: the rows whose family is their collective),
                                       sweep_<collective>_<transport>_p<ranks>_<dtype>.png
                                       (busbw: the CSV's busbw_GBps, with each collective's
                                       factor; algbw for a CSV without it); a bar chart per
                                       (transport, provider, ranks) of the exchange rows, if any
  fit --predictions CSV --out DIR      collbench-fit's predictions.csv: measured points with
                                       the model lines per algorithm, and relative-error panels:
                                       one PNG per collective (family) and (transport, provider,
                                       placement, dtype, op, ranks), fit_<collective>_<...>.png;
                                       ping-pong (fit_p2p_*) and local reduce (fit_reduce_*)
  scaling CSV --out DIR                collbench-predict's scaling.csv: speedup and efficiency
                                       vs nodes per algorithm, the batch limit p <= B marked,
                                       scaling_<scenario>.png; per model and batch with
                                       measured compute beside linear (--compute-from with
                                       --preset keuper2016), efficiency vs nodes with a line
                                       per scenario and a panel per algorithm,
                                       efficiency_<model>_B<batch>.png
  compute CSV --out DIR                collbench-fit's compute.csv: GFLOP/s of a training
                                       iteration's GEMMs against the batch per rank, one line
                                       per model, the peak GEMM's rate as a horizontal line,
                                       compute_gflops.png
  timeline JSON --out DIR              collbench --timeline's Chrome trace: one iteration per
                                       algorithm, the compute thread's forward and backward
                                       layers above the communication thread's bucket
                                       exchanges and their ready times, one PNG per workload,
                                       timeline_<workload>.png
  check                                exit 0 when this Python imports matplotlib (what
                                       collbench-fit and collbench-predict ask first)

sweep, fit and scaling take --algorithms LISTING, the output of
`collbench --list-algorithms --csv`: algorithms are then listed, and coloured,
in registry order. Without it they follow the order the input lists them (a
collbench CSV and collbench-fit's predictions.csv list them in registry
order; collbench-predict's scaling.csv in its own). The baselines (mpi, mpi_bare,
lower_bound) keep one colour everywhere; an algorithm no listing names is
plotted like the others.

Run with Debian's /usr/bin/python3 (the one with python3-matplotlib). Prints the path of
every PNG written. Bad input (an --out that cannot be written, a missing, binary or
non-UTF-8 file, missing columns, no usable rows, values out of range: the checks of
collbench_csv.py; a size of 0 bytes, which no log axis has; an --out folder where a PNG
would replace an input; no matplotlib) prints one line on stderr and exits with status 2,
before any PNG is written; the PNGs of one command replace the earlier ones together, or none does.
"""

import argparse
import collections
import re

from collbench_report.cli import OptionParser, guarded
from collbench_report.figures import CYCLE, Palette, listing_of, pyplot, save, size_axis, slug
from collbench_report.outputs import ReplaceTogether, writable_folder
from collbench_report.readers import (InputError, collective_order, median_per_key, number,
                                      read_rows, read_timeline, sweep_collective)


# --------------------------------------------------------------------------- sweep

def positive_size(row, path, index):
    """The row's bytes; InputError for 0, which a size axis (logarithmic)
    has no place for and collbench never measures (its smallest size is 1
    byte)."""
    size = number(row, "bytes", path, index, whole=True)
    if size == 0:
        raise InputError(f"{path}: data row {index}: bytes is 0; collbench measures sizes of at "
                         "least 1 byte and a size axis is logarithmic: leave the row out")
    return size


def cmd_sweep(args):
    listing = listing_of(args.algorithms)  # before the data: a bad listing fails at once
    required = ["family", "transport", "provider", "algorithm", "ranks", "dtype", "bytes",
                "median_us"]
    # (collective, transport, provider, ranks, dtype) -> rows
    sweeps = collections.defaultdict(list)
    exchange = collections.defaultdict(list)   # (transport, provider, ranks) -> rows
    in_files = []
    collectives_in_files = []
    for path in args.csv:
        rows = read_rows(path, required, "plot.py sweep")
        # One sequence per collective (and exchange) of each file: the
        # registry order of each collective's algorithms (ring, recursive_halving, mpi).
        by_kind = collections.defaultdict(list)
        for row in rows:
            kind = sweep_collective(row) or (row["family"] if row["family"] == "exchange" else "")
            if kind:
                by_kind[kind].append(row["algorithm"])
        in_files += by_kind.values()
        collectives_in_files.append([sweep_collective(row) for row in rows])
        has_workload = rows and "workload" in rows[0]
        for i, row in enumerate(rows, start=1):
            collective = sweep_collective(row)
            if collective:
                # Workload sizes are scattered, not a sweep: they would make
                # the per-algorithm lines zig-zag. The exchange panel has them.
                if row.get("workload"):
                    continue
                key = (collective, row["transport"], row["provider"],
                       int(number(row, "ranks", path, i)), row["dtype"])
                number(row, "median_us", path, i)  # a row without a time is refused
                if row.get("busbw_GBps", "") != "":
                    number(row, "busbw_GBps", path, i)
                row["size"] = positive_size(row, path, i)
                sweeps[key].append(row)
            elif row["family"] == "exchange":
                label = (row.get("workload") or row.get("model") or "") if has_workload else ""
                key = (row["transport"], row["provider"], int(number(row, "ranks", path, i)))
                number(row, "median_us", path, i)
                row["label"] = label or "exchange"
                exchange[key].append(row)
    if not sweeps and not exchange:
        raise InputError(f"{', '.join(args.csv)}: no collective sweep (allreduce, ...) or "
                         "exchange rows to plot")
    plt, FuncFormatter = pyplot()
    written = []
    collectives = collective_order(*collectives_in_files)
    with ReplaceTogether(args.out, inputs=args.csv) as outputs:
        draw_sweep(plt, FuncFormatter, sweeps, collectives, exchange, Palette(listing, *in_files),
                   outputs, written)
    return written


def bandwidths(rows, sizes_times):
    """(label, [GB/s per (size, time) of `sizes_times`]) of one algorithm's
    `rows`: the bus bandwidth collbench wrote (busbw_GBps: nccl-tests' algbw
    times the collective's factor, 2(p−1)/p for allreduce, (p−1)/p for
    reduce_scatter and allgather), median over repetitions; for a CSV
    without that column, the algorithm bandwidth n/t."""
    if rows and all(row.get("busbw_GBps", "") != "" for row in rows):
        busbw = median_per_key(rows, lambda row: row["size"], "busbw_GBps")
        return "bus bandwidth (GB/s)", [busbw[n] for n, _ in sizes_times]
    return ("algorithm bandwidth (GB/s, n / t: the CSV has no busbw_GBps)",
            [n / (t * 1e-6) / 1e9 for n, t in sizes_times])


def draw_sweep(plt, FuncFormatter, sweeps, collectives, exchange, palette, outputs, written):
    order = {name: i for i, name in enumerate(collectives)}
    for key, rows in sorted(sweeps.items(), key=lambda item: (order[item[0][0]], item[0][1:])):
        collective, transport, provider, ranks, dtype = key
        # The median over repetitions and runs, as collbench-fit aggregates.
        grouped = median_per_key(rows, lambda row: (row["algorithm"], row["size"]))
        fig, (ax_time, ax_bw) = plt.subplots(1, 2, figsize=(12, 4.5))
        bw_label = "bus bandwidth (GB/s)"
        for algorithm in palette.ordered({a for a, _ in grouped}):
            sizes = sorted(n for a, n in grouped if a == algorithm)
            times = [grouped[(algorithm, n)] for n in sizes]
            bw_label, busbw = bandwidths([row for row in rows if row["algorithm"] == algorithm],
                                         list(zip(sizes, times)))
            ax_time.plot(sizes, times, marker=palette.marker(algorithm), ms=3, label=algorithm,
                         color=palette.color(algorithm))
            positive = [(n, b) for n, b in zip(sizes, busbw) if n > 0]
            if positive:
                ax_bw.plot(*zip(*positive), marker=palette.marker(algorithm), ms=3,
                           label=algorithm, color=palette.color(algorithm))
        for ax in (ax_time, ax_bw):
            size_axis(ax, FuncFormatter)
            ax.tick_params(axis="x", labelrotation=45)
            ax.set_xlabel("bytes per rank")
            ax.grid(True, which="both", alpha=0.3)
        ax_time.set_yscale("log")
        ax_time.set_ylabel("time (µs, median)")
        ax_bw.set_ylabel(bw_label)
        ax_time.legend(fontsize=8)
        fig.suptitle(f"{collective} {transport}{' ' + provider if provider else ''}, "
                     f"{ranks} ranks, {dtype}")
        save(fig, outputs, f"sweep_{slug(collective, transport, provider)}_p{ranks}_{dtype}.png",
             written)
        plt.close(fig)
    for (transport, provider, ranks), rows in sorted(exchange.items()):
        grouped = median_per_key(rows, lambda row: (row["label"], row["algorithm"]))
        labels = sorted({l for l, _ in grouped})
        algorithms = palette.ordered({a for _, a in grouped})
        width = 0.8 / len(algorithms)
        fig, ax = plt.subplots(figsize=(max(6, 1.5 * len(labels) * len(algorithms) / 3), 4.5))
        for k, algorithm in enumerate(algorithms):
            xs = [i + k * width for i, l in enumerate(labels) if (l, algorithm) in grouped]
            ys = [grouped[(l, algorithm)] / 1e3 for l in labels
                  if (l, algorithm) in grouped]
            ax.bar(xs, ys, width, label=algorithm, color=palette.color(algorithm))
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(labels))])
        ax.set_xticklabels(labels, rotation=30, ha="right")
        ax.set_ylabel("exchange time per iteration (ms, median)")
        ax.legend(fontsize=8)
        ax.grid(True, axis="y", alpha=0.3)
        fig.suptitle(f"per-iteration exchange {transport}{' ' + provider if provider else ''}, "
                     f"{ranks} ranks")
        save(fig, outputs, f"exchange_{slug(transport, provider)}_p{ranks}.png", written)
        plt.close(fig)


# ----------------------------------------------------------------------------- fit

def cmd_fit(args):
    listing = listing_of(args.algorithms)  # before the data: a bad listing fails at once
    path = args.predictions
    required = ["model", "family", "transport", "provider", "placement", "dtype", "op",
                "algorithm", "ranks", "bytes", "measured_us", "predicted_us", "rel_err"]
    rows = read_rows(path, required, "plot.py fit")
    # figure key -> algorithm -> model -> sorted [(bytes, measured, predicted, rel_err)]
    figures = collections.defaultdict(lambda: collections.defaultdict(lambda: collections.defaultdict(list)))
    for i, row in enumerate(rows, start=1):
        point = (positive_size(row, path, i), number(row, "measured_us", path, i),
                 number(row, "predicted_us", path, i), number(row, "rel_err", path, i))
        family = row["family"]
        if family == "p2p":
            key = ("p2p", row["transport"], row["provider"], row["placement"])
        elif family == "local":  # not "reduce": that is a collective's family too
            key = ("local", row["dtype"], row["op"])
        else:  # collbench-fit writes a collective's name as the family of its rows
            key = (family, row["transport"], row["provider"], row["placement"], row["dtype"],
                   row["op"], int(number(row, "ranks", path, i)))
        algorithm = row["algorithm"]
        if family == "p2p" and algorithm == "sendrecv":
            # Fitted per rank count (all ranks send at once): one curve per p.
            algorithm = f"sendrecv p={int(number(row, 'ranks', path, i))}"
        figures[key][algorithm][row["model"]].append(point)
    if not figures:
        raise InputError(f"{path}: no prediction rows to plot")
    plt, FuncFormatter = pyplot()
    written = []
    with ReplaceTogether(args.out, inputs=[args.predictions]) as outputs:
        # The collectives' rows name the algorithms; p2p and local curves are none.
        by_family = collections.defaultdict(list)  # one sequence per collective
        for row in rows:
            if not is_kernel_figure(row["family"]):
                by_family[row["family"]].append(row["algorithm"])
        palette = Palette(listing, *by_family.values())
        draw_fit(plt, FuncFormatter, figures, palette, outputs, written)
    return written


def is_kernel_figure(key):
    """Whether a fit figure's key (a predictions.csv family, or the figure
    kind) is the ping-pong's or the local kernels' rather than a collective's."""
    return key in ("p2p", "local")


def draw_fit(plt, FuncFormatter, figures, palette, outputs, written):
    styles = {"bottom_up": ("-", "bottom-up"), "top_down": ("--", "top-down fit"),
              "hockney": ("-", "Hockney fit"), "hockney_sendrecv": ("-", "Hockney fit"),
              "reduce_gamma": ("-", "t0 + nγ fit"),
              "bottom_up_by_size": (":", "bottom-up by size")}
    for key, by_algorithm in sorted(figures.items()):
        fig, (ax, ax_err) = plt.subplots(2, 1, figsize=(9, 7.5), sharex=True,
                                         gridspec_kw={"height_ratios": [3, 2]})
        for algorithm in palette.ordered(by_algorithm):
            models = by_algorithm[algorithm]
            c = palette.color(algorithm)
            measured = sorted({(n, m) for points in models.values() for n, m, _, _ in points})
            ax.plot(*zip(*measured), palette.marker(algorithm), ms=4, color=c,
                    label=f"{algorithm} measured")
            for model in ("bottom_up", "bottom_up_by_size", "top_down", "hockney",
                          "hockney_sendrecv", "reduce_gamma"):
                points = sorted(models.get(model, []))
                if not points:
                    continue
                style, name = styles[model]
                ax.plot([p[0] for p in points], [p[2] for p in points], style, color=c, lw=1.2,
                        label=f"{algorithm} {name}")
                ax_err.plot([p[0] for p in points], [100 * p[3] for p in points], style,
                            marker="." if model != "top_down" else "x", ms=5, color=c, lw=0.8,
                            label=f"{algorithm} {name}")
        ax.set_yscale("log")
        ax.set_ylabel("time (µs)")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        ax_err.axhline(0, color="black", lw=0.8)
        ax_err.set_ylabel("relative error (%)\n(predicted − measured) / measured")
        collective = not is_kernel_figure(key[0])
        ax_err.set_xlabel("bytes" + (" per rank" if collective else ""))
        for a in (ax, ax_err):
            size_axis(a, FuncFormatter)
            a.grid(True, which="both", alpha=0.3)
        ax_err.tick_params(axis="x", labelrotation=45)
        if collective:
            family, transport, provider, placement, dtype, op, ranks = key
            title = (f"{family} {transport}{' ' + provider if provider else ''} {placement}, "
                     f"{ranks} ranks, {dtype}{' ' + op if op else ''}: measured (points), "
                     "models (lines)")
            name = f"fit_{slug(family, transport, provider, placement, dtype, op)}_p{ranks}.png"
        elif key[0] == "p2p":
            _, transport, provider, placement = key
            title = f"ping-pong {transport}{' ' + provider if provider else ''} {placement}"
            if any(a.startswith("sendrecv") for a in by_algorithm):
                title += ", and sendrecv (one exchange, every rank busy) per rank count"
            name = f"fit_p2p_{slug(transport, provider, placement)}.png"
        else:
            _, dtype, op = key
            title = f"local reduce {dtype} {op}"
            name = f"fit_reduce_{slug(dtype, op)}.png"
        fig.suptitle(title)
        save(fig, outputs, name, written)
        plt.close(fig)


# ------------------------------------------------------------------------- scaling

def cmd_scaling(args):
    listing = listing_of(args.algorithms)  # before the data: a bad listing fails at once
    path = args.csv
    required = ["scenario", "algorithm", "nodes", "speedup", "efficiency", "within_batch_limit",
                "batch", "scaling", "network"]
    rows = read_rows(path, required, "plot.py scaling")
    if not rows:
        raise InputError(f"{path}: no data rows")
    # The compute comparison needs these; a scaling.csv without them gets
    # the per-scenario figures alone.
    compared = all(c in rows[0] for c in ("model", "compute_model", "compute_s_1node"))
    scenarios = collections.OrderedDict()
    for i, row in enumerate(rows, start=1):
        s = scenarios.setdefault(row["scenario"], {"batch": int(number(row, "batch", path, i)),
                                                   "weak": row["scaling"] == "weak",
                                                   "network": row["network"],
                                                   "curves": collections.defaultdict(list)})
        if compared:
            s.update(model=row["model"], compute_model=row["compute_model"],
                     compute_s=number(row, "compute_s_1node", path, i))
        s["curves"][row["algorithm"]].append((int(number(row, "nodes", path, i)),
                                              number(row, "speedup", path, i),
                                              number(row, "efficiency", path, i),
                                              row["within_batch_limit"] == "1"))
    plt, FuncFormatter = pyplot()
    written = []
    with ReplaceTogether(args.out, inputs=[args.csv]) as outputs:
        palette = Palette(listing, [row["algorithm"] for row in rows])
        # A scenario drawn in a comparison of compute models (its efficiency
        # beside its measured twin's) gets no figure of its own: the
        # comparison and scaling.csv carry it.
        grouped = ({l for labels in comparison_groups(scenarios).values() for l in labels}
                   if compared else set())
        alone = collections.OrderedDict((l, s) for l, s in scenarios.items() if l not in grouped)
        draw_scaling(plt, FuncFormatter, alone, palette, outputs, written)
        if compared:
            draw_compute_comparison(plt, FuncFormatter, scenarios, palette, outputs, written)
    return written


def draw_scaling(plt, FuncFormatter, scenarios, palette, outputs, written):
    for label, s in scenarios.items():
        fig, (ax_s, ax_e) = plt.subplots(1, 2, figsize=(12, 4.5))
        max_nodes = max(point[0] for curve in s["curves"].values() for point in curve)
        for algorithm in palette.ordered(s["curves"]):
            curve = sorted(s["curves"][algorithm])
            ps = [point[0] for point in curve]
            ax_s.plot(ps, [point[1] for point in curve], label=algorithm,
                      color=palette.color(algorithm), marker=palette.marker(algorithm), ms=3)
            ax_e.plot(ps, [100 * point[2] for point in curve], label=algorithm,
                      color=palette.color(algorithm), marker=palette.marker(algorithm), ms=3)
        ax_s.plot([1, max_nodes], [1, max_nodes], ":", color="black", lw=0.8, label="ideal")
        ax_e.axhline(50, color="black", lw=0.8, ls=":", label="50% efficiency")
        if not s["weak"] and s["batch"] < max_nodes:
            mark_batch_limit((ax_s, ax_e), s["batch"], max_nodes)
            ax_s.text(s["batch"], ax_s.get_ylim()[1] * 0.95, f" p = B = {s['batch']}\n"
                      " beyond: < 1 sample/node", color="red", fontsize=8, va="top")
        for ax in (ax_s, ax_e):
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:g}"))
            ax.set_xlabel("nodes p")
            ax.grid(True, which="both", alpha=0.3)
        ax_s.set_yscale("log", base=2)
        ax_s.yaxis.set_major_formatter(FuncFormatter(lambda y, _pos: f"{y:g}"))
        ax_s.set_ylabel("speedup T_iter(1) / T_iter(p)")
        ax_e.set_ylabel("efficiency (%)")
        ax_e.set_ylim(0, 105)
        ax_s.legend(fontsize=8)
        fig.suptitle(f"{label} ({'weak' if s['weak'] else 'strong'} scaling) on {s['network']}")
        save(fig, outputs, f"scaling_{slug(label)}.png", written)
        plt.close(fig)


def mark_batch_limit(axes, batch, max_nodes):
    for ax in axes:
        ax.axvline(batch, color="red", lw=1, ls="--")
        ax.axvspan(batch, max_nodes, color="red", alpha=0.07)


def largest_half_efficiency(curve):
    """The largest p with efficiency >= 50% before it first falls below
    (within the batch limit), as collbench-predict's summary counts it."""
    last = None
    for p, _, e, within in curve:
        if not within:
            break
        if e < 0.5:
            break
        last = (p, e)
    return last


def comparison_groups(scenarios):
    """(model, batch, weak, network) -> its scenarios' labels, for every group
    that has measured compute beside linear compute (a time falling as 1/p)."""
    groups = collections.OrderedDict()
    for label, s in scenarios.items():
        groups.setdefault((s["model"], s["batch"], s["weak"], s["network"]), []).append(label)
    return collections.OrderedDict(
        (key, labels) for key, labels in groups.items()
        if {scenarios[l]["compute_model"] for l in labels} >= {"linear", "measured"})


def comparison_name(model, batch, weak):
    """efficiency_<model>_B<batch>[_node].png: the name collbench-predict's
    keuper2016 README links (keuper2016.cpp, comparison_plot)."""
    return f"efficiency_{slug(model, f'B{batch}', 'node' if weak else '')}.png"


def draw_compute_comparison(plt, FuncFormatter, scenarios, palette, outputs, written):
    """Per model and batch with measured and linear compute: efficiency
    against p, a panel per algorithm, a line per scenario: measured compute
    solid black, the linear twin of a measured one (the same time at B,
    falling as 1/p) dashed black, the other linear ones dashed in colour;
    a dot at each line's largest p with efficiency >= 50%, its value in the
    panel's legend."""
    for (model, batch, weak, network), labels in comparison_groups(scenarios).items():
        algorithms = palette.ordered({a for l in labels for a in scenarios[l]["curves"]})
        fig, axes = plt.subplots(1, len(algorithms), figsize=(4.6 * len(algorithms), 4.2),
                                 sharey=True, squeeze=False)
        axes = axes[0]
        prefix = f"{model} B={batch}{'/node' if weak else ''} "
        max_nodes = max(point[0] for l in labels for curve in scenarios[l]["curves"].values()
                        for point in curve)
        measured_times = {scenarios[l]["compute_s"] for l in labels
                          if scenarios[l]["compute_model"] == "measured"}
        others = iter(CYCLE)
        styles = {}  # label -> (colour, line style, width)
        for label in labels:
            s = scenarios[label]
            if s["compute_model"] == "measured":
                styles[label] = ("black", "-", 2.2)
            elif s["compute_s"] in measured_times:
                styles[label] = ("black", "--", 1.4)
            else:
                styles[label] = (next(others, None), "--", 1.2)
        for ax, algorithm in zip(axes, algorithms):
            for label in labels:
                s = scenarios[label]
                curve = sorted(s["curves"].get(algorithm, []))
                if not curve:
                    continue
                color, style, width = styles[label]
                name = label[len(prefix):] if label.startswith(prefix) else label
                compute = (f"at B/p ({s['compute_s']:.3g} s at B)"
                           if s["compute_model"] == "measured" else f"{s['compute_s']:.3g} s / p")
                half = largest_half_efficiency(curve)
                line, = ax.plot([point[0] for point in curve],
                                [100 * point[2] for point in curve], ls=style, lw=width,
                                color=color,
                                label=f"{name}, {compute}: {format(half[0], 'g') if half else '-'}")
                if half:
                    ax.plot(half[0], 100 * half[1], "o", ms=5, color=line.get_color())
            ax.axhline(50, color="black", lw=0.8, ls=":")
            if not weak and batch < max_nodes:
                mark_batch_limit([ax], batch, max_nodes)
                ax.text(batch, 103, f" p = B = {batch}", color="red", fontsize=8, va="top")
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:g}"))
            ax.set_xlabel("nodes p")
            ax.set_title(algorithm)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16),
                      title="scenario, compute: largest p with E ≥ 50%", title_fontsize=7)
        axes[0].set_ylabel("efficiency (%)")
        axes[0].set_ylim(0, 105)
        fig.suptitle(f"{model} B={batch}{'/node' if weak else ''} "
                     f"({'weak' if weak else 'strong'} scaling) on {network}: constant compute "
                     "falling as 1/p (dashed) and measured at B/p (solid)", fontsize=10)
        save(fig, outputs, comparison_name(model, batch, weak), written)
        plt.close(fig)


# ------------------------------------------------------------------------- compute

def cmd_compute(args):
    path = args.csv
    rows = read_rows(path, ["model", "batch", "gflops", "peak_gflops"], "plot.py compute")
    if not rows:
        raise InputError(f"{path}: no data rows")
    curves = collections.OrderedDict()  # model -> [(batch, GFLOP/s)], in the file's order
    peaks = set()
    for i, row in enumerate(rows, start=1):
        curves.setdefault(row["model"], []).append((number(row, "batch", path, i, whole=True),
                                                    number(row, "gflops", path, i)))
        if row["peak_gflops"] != "":  # empty: the input had no peak row
            peaks.add(number(row, "peak_gflops", path, i))
    plt, FuncFormatter = pyplot()
    written = []
    with ReplaceTogether(args.out, inputs=[args.csv]) as outputs:
        draw_compute(plt, FuncFormatter, curves, peaks, outputs, written)
    return written


def draw_compute(plt, FuncFormatter, curves, peaks, outputs, written):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for model, curve in curves.items():
        curve = sorted(curve)
        ax.plot([b for b, _ in curve], [g for _, g in curve], marker="o", ms=3, label=model)
    for peak in sorted(peaks):
        ax.axhline(peak, color="black", lw=0.8, ls=":", label=f"peak GEMM {peak:.1f} GFLOP/s")
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:g}"))
    ax.set_xlabel("batch per rank (samples)")
    ax.set_ylabel("GFLOP/s of the iteration's GEMMs")
    ax.set_ylim(bottom=0)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.suptitle("Training GEMMs (forward + backward) against the batch per rank")
    save(fig, outputs, "compute_gflops.png", written)
    plt.close(fig)


def cmd_timeline(args):
    per_workload = read_timeline(args.timeline)
    plt, _ = pyplot()
    written = []
    with ReplaceTogether(args.out, inputs=[args.timeline]) as outputs:
        for workload, benchmarks in per_workload.items():
            draw_timeline(plt, workload, benchmarks, outputs, written)
    return written


def draw_timeline(plt, workload, benchmarks, outputs, written):
    """One iteration per algorithm: the compute thread's forward (light) and
    backward (dark) layers, and the communication thread's buckets, each
    from its ready time (a tick) through its exchange."""
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.75 * len(benchmarks)))
    labels = []
    for lane, (algorithm, events) in enumerate(benchmarks):
        y = len(benchmarks) - 1 - lane
        for e in events:
            start, length = float(e["ts"]) / 1e3, float(e.get("dur", 0)) / 1e3
            if e.get("cat") == "compute":
                color = "#c6dbef" if e["name"].startswith("forward ") else "#6baed6"
                ax.broken_barh([(start, length)], (y + 0.05, 0.4), color=color, lw=0)
            elif e.get("cat") == "exchange":
                ax.broken_barh([(start, length)], (y - 0.45, 0.4), color="tab:orange",
                               edgecolor="black", lw=0.4)
            elif e.get("cat") == "ready":
                ax.plot([start, start], [y - 0.45, y - 0.05], color="black", lw=0.8)
        labels.append(algorithm)
    ax.set_yticks(range(len(benchmarks)))
    ax.set_yticklabels(list(reversed(labels)))
    ax.set_xlabel("ms from the iteration's start")
    ax.set_xlim(left=0)
    ax.grid(True, axis="x", alpha=0.3)
    from matplotlib.patches import Patch
    from matplotlib.lines import Line2D
    ax.legend(handles=[Patch(color="#c6dbef", label="forward"),
                       Patch(color="#6baed6", label="backward"),
                       Patch(facecolor="tab:orange", edgecolor="black", label="bucket exchange"),
                       Line2D([], [], color="black", lw=0.8, label="bucket ready")],
              fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=4)
    ax.set_title(f"One training iteration of {workload}: compute (upper) and exchanges (lower)",
                 fontsize=10)
    fig.tight_layout()
    save(fig, outputs, f"timeline_{re.sub(r'[^A-Za-z0-9_.-]', '_', workload)}.png", written)
    plt.close(fig)


ALGORITHMS_HELP = ("the output of collbench --list-algorithms --csv: the algorithms' order and "
                   "colours follow the registry (default: the order the input lists them)")


# Subcommands; another one (e.g. an all-pairs `matrix` heatmap) adds a function above
# and a parser entry here.
def build_parser():
    parser = OptionParser(
        prog="plot.py", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    sub = parser.add_subparsers(dest="command", required=True)
    sweep = sub.add_parser("sweep", help="time and busbw vs size from collbench CSVs")
    sweep.add_argument("csv", nargs="+", help="collbench CSV files (results/README.md)")
    sweep.add_argument("--out", required=True, help="folder for the PNGs (created if missing)")
    sweep.add_argument("--algorithms", metavar="LISTING",
                        help=ALGORITHMS_HELP)
    sweep.set_defaults(run=cmd_sweep)
    fit = sub.add_parser("fit", help="measured vs model from collbench-fit's predictions.csv")
    fit.add_argument("--predictions", required=True, help="predictions.csv of collbench-fit")
    fit.add_argument("--out", required=True, help="folder for the PNGs (created if missing)")
    fit.add_argument("--algorithms", metavar="LISTING",
                        help=ALGORITHMS_HELP)
    fit.set_defaults(run=cmd_fit)
    scaling = sub.add_parser("scaling", help="speedup/efficiency from collbench-predict's CSV")
    scaling.add_argument("csv", help="scaling.csv of collbench-predict")
    scaling.add_argument("--out", required=True, help="folder for the PNGs (created if missing)")
    scaling.add_argument("--algorithms", metavar="LISTING",
                        help=ALGORITHMS_HELP)
    scaling.set_defaults(run=cmd_scaling)
    compute = sub.add_parser("compute", help="GFLOP/s against batch from collbench-fit's "
                             "compute.csv")
    compute.add_argument("csv", help="compute.csv of collbench-fit")
    compute.add_argument("--out", required=True, help="folder for the PNG (created if missing)")
    compute.set_defaults(run=cmd_compute)
    timeline = sub.add_parser("timeline", help="one training iteration per algorithm from "
                              "collbench --timeline's trace")
    timeline.add_argument("timeline", help="the Chrome trace JSON of collbench --timeline")
    timeline.add_argument("--out", required=True, help="folder for the PNGs (created if missing)")
    timeline.set_defaults(run=cmd_timeline)
    check = sub.add_parser("check", help="exit 0 when this Python can plot (imports matplotlib); "
                           "collbench-fit and collbench-predict ask before their work")
    check.set_defaults(run=cmd_check, out=None)
    return parser


def cmd_check(_args):
    pyplot()
    return []


def main(argv):
    def run():
        args = build_parser().parse_args(argv[1:])
        if args.out is not None:
            writable_folder(args.out)  # before reading and drawing
        for path in args.run(args):
            print(path)
        return 0
    # Every error names the subcommand, an option refused while parsing too
    # ("plot.py sweep: --out given twice ..."): the first argument, as
    # plot.py itself takes no option but --help. A full disk while drawing:
    # the PNGs are discarded.
    return guarded(" ".join(["plot.py", *argv[1:2]]), run, "cannot write the plots")
