"""Heatmaps, checks and the Markdown report of scripts/characterize.sh.

Subcommands:
  matrix --links CSV --out DIR       bandwidth and latency heatmaps of collbench-linkmatrix's
                                     links CSV (matrix_bandwidth.png, matrix_latency.png)
  slow-hosts --hosts-csv CSV         the hosts the matrix names as slow, one per line
  netsim-check --out DIR [options]   on a characterize.sh folder of a netsim run: compares the
                                     measurements with the configured link rates, and
                                     collbench-fit's bottom-up predictions of every modelled
                                     algorithm of every collective at >= 1 MiB with the
                                     measured times (allreduce within 20%, the others 10%: the
                                     checks of the CTest netsim_e2e test; over the ofi transport
                                     every collective within 10%); prints a table, exit status 1
                                     when a check fails
  side-by-side --out DIR [--out DIR]...
                                     every point the folders' sweeps measured over both mpi and
                                     ofi: both medians and their ratio, a Markdown table per
                                     collective
  two-level --out DIR [--out DIR]... [--speedup X] [--tolerance T]
                                     on characterize.sh folders of several ranks per host
                                     (--ppn, one --map-by each): the flat algorithms against
                                     the hierarchical ones at every size >= 1 MiB, the
                                     largest size's ring / hierarchical (must be >= X, default
                                     1.3) and collbench-fit's two-level bottom-up errors of
                                     every collective's algorithms (within T, default 0.15); a
                                     Markdown table per collective, exit status 1 when a check
                                     fails
  report --out DIR                   OUT/report.md from everything characterize.sh wrote

Run with Debian's /usr/bin/python3 (the one with python3-matplotlib). Bad input (an --out
that cannot be written, a missing, binary or non-UTF-8 file, a missing column, no usable
rows, values out of range: the checks of collbench_csv.py) prints one line on stderr and
exits with status 2, leaving no file; the files of one command replace the earlier ones
together.
"""

import collections
import glob
import math
import os
import statistics

from collbench_report.cli import OptionParser, guarded
from collbench_report.figures import pyplot, save
from collbench_report.measurements import Sweep, bottom_up_errors, number, slow_hosts
from collbench_report.netsim_check import (NETSIM_LIMITS, cmd_netsim_check,
                                           configuration_checks, emulated_network)
from collbench_report.outputs import ReplaceTogether, writable_folder
from collbench_report.readers import (InputError, algorithm_order, median_per_key,
                                      option_number, read_optional_settings, read_optional_text,
                                      read_rows)
from collbench_report.simselection import selection_section
from collbench_report.text import pipe_head, pipe_row, size_label, time_label
from collbench_report.two_level import cmd_two_level
from collbench_report.your_model import your_model


# --------------------------------------------------------------------------- matrix

def load_links(path):
    rows = read_rows(path, ["src", "dst", "latency_us", "bandwidth_GBps", "slow"], "the matrix")
    if not rows:
        raise InputError(f"{path}: no links")
    hosts = []
    for r in rows:
        for h in (r["src"], r["dst"]):
            if h not in hosts:
                hosts.append(h)
    return rows, hosts


def cmd_matrix(args):
    rows, hosts = load_links(args.links)
    with ReplaceTogether(args.out, inputs=[args.links]) as outputs:
        for path in draw_matrix(rows, hosts, outputs):
            print(path)


def draw_matrix(rows, hosts, outputs):
    """matrix_bandwidth.png and matrix_latency.png into `outputs`; their paths."""
    plt, _ = pyplot()
    from matplotlib.patches import Rectangle

    n = len(hosts)
    index = {h: i for i, h in enumerate(hosts)}
    peak = max(number(r["bandwidth_GBps"], 0) for r in rows)
    scale, unit = (1e3, "MB/s") if peak < 1 else (1, "GB/s")
    written = []
    for metric, column, title, fmt_value, cmap in (
        ("bandwidth", "bandwidth_GBps", f"Bandwidth src → dst ({unit})",
         lambda v: f"{v * scale:.3g}", "viridis"),
        ("latency", "latency_us", "Latency, half round trip (µs)", lambda v: f"{v:.3g}",
         "viridis_r"),
    ):
        grid = [[math.nan] * n for _ in range(n)]
        for r in rows:
            grid[index[r["src"]]][index[r["dst"]]] = number(r[column])
        fig, ax = plt.subplots(figsize=(1.2 + 0.75 * n, 1.0 + 0.65 * n))
        shown = [[v * (scale if metric == "bandwidth" else 1) for v in row] for row in grid]
        image = ax.imshow(shown, cmap=cmap)
        fig.colorbar(image, ax=ax, shrink=0.8, label=unit if metric == "bandwidth" else "µs")
        for r in rows:
            i, j = index[r["src"]], index[r["dst"]]
            flagged = r["slow"] == "yes" if metric == "bandwidth" else r.get("high_latency") == "yes"
            # Dark text on light cells, light text on dark ones; red when flagged.
            red, green, blue, _ = image.cmap(image.norm(shown[i][j]))
            light = 0.299 * red + 0.587 * green + 0.114 * blue > 0.5
            ax.text(j, i, fmt_value(grid[i][j]), ha="center", va="center", fontsize=8,
                    color="red" if flagged else ("black" if light else "white"),
                    fontweight="bold" if flagged else None)
            if flagged:
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", lw=2))
        ax.set_xticks(range(n), hosts, rotation=90 if n > 8 else 0)
        ax.set_yticks(range(n), hosts)
        ax.set_xlabel("destination")
        ax.set_ylabel("source")
        ax.set_title(title + ("\nred: slow links" if metric == "bandwidth" else ""), fontsize=10)
        save(fig, outputs, f"matrix_{metric}.png", written)
        plt.close(fig)
    return written


def cmd_slow_hosts(args):
    for host in slow_hosts(args.hosts_csv):
        print(host)


# --------------------------------------------------------------------------- transports

def side_by_side(outs, baseline="mpi", other="ofi", min_bytes=0):
    """Markdown lines: every (collective, algorithm, p, size >= min_bytes) of
    the sweeps of the folders `outs` measured over both transports, with both
    medians (of the repetitions' medians) and other / baseline; per collective
    and p, the median ratio at >= 1 MiB. The folders' sweeps must not measure
    the same point twice."""
    medians, algorithms, collectives = {}, collections.defaultdict(list), []
    for out in outs:
        if not glob.glob(os.path.join(out, "sweep", "*.csv")):
            raise InputError(f"{out}: no sweep/*.csv; side-by-side needs characterize.sh "
                             "folders with a sweep")
        sweep = Sweep(out)
        twice = sorted(set(medians) & set(sweep.medians))
        if twice:
            c, t, a, p, b = twice[0]
            raise InputError(f"{out}: {c} {a} over {t} at p={p}, {size_label(b)} is measured "
                             "in an earlier --out folder too")
        medians.update(sweep.medians)
        collectives = algorithm_order(collectives, sweep.collectives)
        for c in sweep.collectives:
            algorithms[c] = algorithm_order(algorithms[c], sweep.algorithms[c])
    points = sorted({(c, a, p, b) for (c, t, a, p, b) in medians
                     if t == baseline and b >= min_bytes and (c, other, a, p, b) in medians},
                    key=lambda k: (collectives.index(k[0]), algorithms[k[0]].index(k[1]),
                                   k[2], k[3]))
    if not points:
        found = sorted({k[1] for k in medians})
        raise InputError(f"no point measured over both {baseline} and {other} (transports "
                         f"found: {', '.join(found) or 'none'})")
    lines = []
    for collective in [c for c in collectives if any(k[0] == c for k in points)]:
        rows = [k for k in points if k[0] == collective]
        lines += [f"**{collective}**: median time over {baseline} and over {other} on the same "
                  "links", "",
                  *pipe_head("algorithm", "p", "size", f"{baseline} median", f"{other} median",
                             f"{other} / {baseline}")]
        for _, a, p, b in rows:
            t0, t1 = medians[(collective, baseline, a, p, b)], medians[(collective, other, a, p, b)]
            lines.append(pipe_row(a, p, size_label(b), time_label(t0), time_label(t1),
                                  f"{t1 / t0:.2f}"))
        lines.append("")
        for p in sorted({k[2] for k in rows}):
            big = [medians[(collective, other, a, q, b)] / medians[(collective, baseline, a, q, b)]
                   for _, a, q, b in rows if q == p and b >= 2**20]
            if big:
                lines.append(f"- p = {p}: median {other} / {baseline} at >= 1 MiB "
                             f"{statistics.median(big):.2f} over {len(big)} points "
                             f"(range {min(big):.2f}-{max(big):.2f})")
        lines.append("")
    return lines


def cmd_side_by_side(args):
    print("\n".join(side_by_side(args.out, min_bytes=args.min_bytes)).rstrip())
    return 0


# --------------------------------------------------------------------------- report

def tool_report(path):
    """The console report of collbench-fit or collbench-predict in `path`
    ("" without one), less the tool's "wrote PATH" lines, which name files
    of the run's machine."""
    return "\n".join(line for line in read_optional_text(path).splitlines()
                     if not line.startswith("wrote ") and not line.endswith(".png"))


def relative(out, paths):
    return [os.path.relpath(p, out) for p in sorted(paths)]


def sweep_table(collective, transport, p, medians, order, busbw_factor):
    """Markdown lines: one collective's median time (busbw) per algorithm at
    sizes >= 1 MiB (all sizes when none is)."""
    sizes = sorted({k[3] for k in medians if k[0] == transport and k[2] == p})
    big = [s for s in sizes if s >= 2**20] or sizes
    algs = [a for a in order if any(k[0] == transport and k[1] == a and k[2] == p
                                    for k in medians)]
    lines = [f"**{collective}, {transport}, p = {p}**: median time (busbw) per size", "",
             *pipe_head("algorithm", *(size_label(s) for s in big))]
    for a in algs:
        cells = []
        for s in big:
            t = medians.get((transport, a, p, s))
            if t is None:
                cells.append("")
            else:
                busbw = s / (t * 1e-6) * busbw_factor
                cells.append(f"{t / 1e3:.1f} ms ({busbw / 1e6:.2f} MB/s)")
        lines.append(pipe_row(a, *cells))
    return lines + [""]


def bottom_up_tables(errors, sweep):
    """Markdown lines: per (collective, transport, algorithm) the median and
    largest bottom-up error at >= 1 MiB, then every point."""
    if not errors:
        return []
    collectives = algorithm_order(sweep.collectives, [k[0] for k in errors])

    def ordered():
        for collective in collectives:
            keys = [k for k in errors if k[0] == collective]
            order = algorithm_order(sweep.algorithms.get(collective, []), [k[2] for k in keys])
            yield from sorted(keys, key=lambda k: (k[1], order.index(k[2])))

    lines = ["Bottom-up prediction against measurement at sizes >= 1 MiB (collbench-fit's "
             "fit/predictions.csv, model bottom_up):", "",
             *pipe_head("collective", "transport", "algorithm", "points", "median error",
                        "max error")]
    for key in ordered():
        rel = [abs(x[4]) for x in errors[key]]
        lines.append(pipe_row(*key, len(rel), f"{100 * statistics.median(rel):.1f}%",
                              f"{100 * max(rel):.1f}%"))
    lines += ["", "Every point (error: (predicted − measured) / measured):", "",
              *pipe_head("collective", "transport", "algorithm", "p", "size", "predicted",
                         "measured", "error")]
    for key in ordered():
        for ranks, size, measured, predicted, rel in sorted(errors[key]):
            lines.append(pipe_row(*key, ranks, size_label(size), f"{predicted / 1e3:.1f} ms",
                                  f"{measured / 1e3:.1f} ms", f"{100 * rel:+.1f}%"))
    return lines + [""]


def simulated_scaling(out):
    """Markdown lines of the sim step (OUT/sim/allreduce.csv; [] without it):
    per size, each algorithm's simulated time at every p, the fastest of a p
    in bold, and the order at the largest p."""
    path = os.path.join(out, "sim", "allreduce.csv")
    if not os.path.exists(path):
        return []
    rows = read_rows(path, ["algorithm", "ranks", "bytes", "median_us", "sim_platform",
                            "sim_alpha_us", "sim_beta_GBps", "sim_gamma_GBps", "sim_overhead_us",
                            "sim_calibration"], "the report")
    times = median_per_key(rows, lambda r: (r["algorithm"], int(r["ranks"]), int(r["bytes"])))
    if not times:
        raise InputError(f"{path}: no simulated time; rerun characterize.sh --steps sim")
    ranks = sorted({k[1] for k in times})
    order = algorithm_order([r["algorithm"] for r in rows])
    first = rows[0]
    lines = [f"## 4. Simulated scaling: {ranks[-1]} nodes like these", "",
             f"collbench's own allreduce algorithms on a simulated cluster of p nodes "
             f"(p = {', '.join(map(str, ranks))}) on one switch (`--transport sim "
             f"--platform {first['sim_platform']}`, size-only: the same messages and simulated "
             f"times, no byte moved), calibrated by this run's fit ({first['sim_calibration']}): "
             f"α {first['sim_alpha_us']} µs end to end, β {first['sim_beta_GBps']} GB/s, "
             f"γ {first['sim_gamma_GBps']} GB/s, o {first['sim_overhead_us']} µs. A simulated "
             "time is deterministic: one run per case. The switch is ideal (full bisection, "
             "flows share each node's link max-min): a real cluster's tapered or multi-hop "
             "network adds contention this does not show.", ""]
    for size in sorted({k[2] for k in times}):
        lines += [f"**allreduce, {size_label(size)}**: simulated time per algorithm and p "
                  "(the fastest in bold)", "", *pipe_head("algorithm", *(f"p = {p}" for p in ranks))]
        # Ties are common (on one switch several algorithms take the same steps).
        fastest = {p: min(t for (_, q, n), t in times.items() if q == p and n == size)
                   for p in ranks if any(q == p and n == size for (_, q, n) in times)}
        for algorithm in order:
            cells = []
            for p in ranks:
                t = times.get((algorithm, p, size))
                label = "" if t is None else time_label(t)
                cells.append(f"**{label}**" if t is not None and t == fastest[p] else label)
            if any(cells):
                lines.append(pipe_row(algorithm, *cells))
        largest = max(fastest)
        ranked = sorted((t, a) for (a, q, n), t in times.items() if q == largest and n == size)
        lines += ["", f"At p = {largest}: " + ", ".join(
            f"{a} {time_label(t)}" + ("" if i == 0 else f" (×{t / ranked[0][0]:.2f})")
            for i, (t, a) in enumerate(ranked)), ""]
    return lines + ["Data: [sim/allreduce.csv](sim/allreduce.csv).", ""]


def cmd_report(args):
    out = args.out
    env = read_optional_settings(os.path.join(out, "run.env"), "=")
    if not env:
        raise InputError(f"{out}/run.env is missing: not a characterize.sh output folder")
    lines = heading(out, env) + emulated_network(out) + matrix_section(out, env)
    # Read in the report's order, so that of several bad inputs the first
    # section's is named.
    sweep = Sweep(out)
    lines += sweep_section(out, sweep) + fit_section(out, sweep)
    lines += simulated_scaling(out)
    lines += selection_section(out)
    lines += your_model(out)
    lines += configuration_checks(out)
    with ReplaceTogether(out) as outputs:
        with open(outputs.add("report.md"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines).rstrip() + "\n")
    print(outputs.path("report.md"))


def heading(out, env):
    """Markdown lines: the title, the run's settings (run.env) and its wall
    time per step (timings.txt)."""
    lines = []
    title = env.get("title") or "Network characterization"
    lines += [f"# {title}", ""]
    where = {"netsim": f"emulated cluster (scripts/netsim.sh, cluster {env.get('netsim_id')})",
             "hostfile": "hosts of a hostfile", "slurm": "nodes of a Slurm allocation"}
    lines += [
        f"- Hosts: {env.get('hosts', '')} — {where.get(env.get('mode'), env.get('mode', ''))}",
    ]
    if glob.glob(os.path.join(out, "sweep", "*.csv")):
        lines += [
            f"- Sweep on: {env.get('sweep_hosts', '')}, ranks {env.get('ranks', '')}, "
            f"{env.get('ppn', '1')} per host; transports {env.get('transports', '')}"
            + (f" (provider {env['ofi_provider']})" if env.get("ofi_provider") else ""),
            f"- Sizes: allreduce {env.get('sizes', '')}"
            + (f", {env['collectives'].replace(',', ', ')} {env.get('collective_sizes', '')}"
               if env.get("collectives") else "")
            + f", ping-pong {env.get('p2p_sizes', '')}, "
            f"local kernels {env.get('local_sizes', '')}; {env.get('repetitions', '')} "
            f"repetitions, min time {env.get('min_time', '')} s"
            + (f", at least {env['min_samples']} samples each" if env.get("min_samples") else ""),
        ]
    lines += [
        f"- Started {env.get('started_utc', '')}, git {env.get('git_rev', '')}",
        "- Produced by `scripts/characterize.sh`; every number below comes from the CSVs in "
        "this folder.",
        "",
    ]
    timings = read_optional_text(os.path.join(out, "timings.txt")).split("\n")
    timings = [t.split() for t in timings if t.strip()]
    if timings:
        lines += ["- Wall time per step: " + ", ".join(f"{s} {t} s" for s, t in timings), ""]
    return lines


def matrix_section(out, env):
    """Markdown lines of section 1, the point-to-point matrix (matrix/):
    [] without one, unless the run had a single host, which it says."""
    summary = read_optional_text(os.path.join(out, "matrix", "summary.txt"))
    if summary:
        lines = ["## 1. Point-to-point matrix", "",
                 "Every pair of hosts, in the rounds of a round-robin tournament: the pairs of a "
                 "round are disjoint, so each link carries one pair's traffic. Latency is the "
                 "half round trip of 8 B (one pair at a time), bandwidth one-way at the matrix "
                 "size. A host's capacity is its best link; slow means below the threshold "
                 "fraction of the median host.", "", "```", summary.strip(), "```", ""]
        for png in ("matrix_bandwidth.png", "matrix_latency.png"):
            if os.path.exists(os.path.join(out, "matrix", png)):
                lines.append(f"![{png}](matrix/{png})")
        return lines + ["", "Data: [matrix/links.csv](matrix/links.csv), "
                        "[matrix/hosts.csv](matrix/hosts.csv).", ""]
    if len(env.get("hosts", "").split()) == 1:
        host = env["hosts"].strip()
        return ["## 1. Point-to-point matrix", "",
                f"Skipped: one host ({host}), so no host pairs to measure. Every sweep below "
                f"is intra-node ({env.get('ppn', '?')} ranks on {host}): it measures the path "
                "between ranks that share a host (shared memory or loopback, as the MPI "
                "stack picks), not a network.", ""]
    return []


def sweep_section(out, sweep):
    """Markdown lines of section 2, the collective sweeps: a table per
    collective, transport and p, then the sweep's plots; [] without a sweep."""
    if not sweep.medians:
        return []
    lines = ["## 2. Collective sweeps", ""]
    for collective in sweep.collectives:
        medians = sweep.of(collective)
        for transport in sorted({k[0] for k in medians}):
            for p in sorted({k[2] for k in medians if k[0] == transport}):
                lines += sweep_table(collective, transport, p, medians,
                                     sweep.algorithms[collective],
                                     sweep.busbw_factor.get((collective, p), math.nan))
    sweep_pngs = [p for p in glob.glob(os.path.join(out, "plots", "*.png"))
                  if not os.path.basename(p).startswith(("fit", "predict", "scaling"))]
    for png in relative(out, sweep_pngs):
        lines.append(f"![{os.path.basename(png)}]({png})")
    return lines + [""]


def fit_section(out, sweep):
    """Markdown lines of section 3: collbench-fit's report, the bottom-up
    errors, the fit's plots and each collbench-predict report (predict/*);
    [] without fit/report.txt."""
    fit_report = tool_report(os.path.join(out, "fit", "report.txt"))
    if not fit_report:
        return []
    lines = ["## 3. Fitted models and selection", "",
             "`collbench-fit` on every CSV of the sweep: Hockney α, β of the ping-pong, γ of "
             "the reduction kernel, the bottom-up prediction of each algorithm from its own "
             "cost terms, top-down fits, and the selection table.", "", "```",
             fit_report.strip(), "```", ""]
    lines += bottom_up_tables(bottom_up_errors(out, 2**20), sweep)
    fit_pngs = [p for p in glob.glob(os.path.join(out, "plots", "*.png"))
                if os.path.basename(p).startswith("fit")]
    for png in relative(out, fit_pngs):
        lines.append(f"![{os.path.basename(png)}]({png})")
    lines.append("")
    for model_dir in sorted(glob.glob(os.path.join(out, "predict", "*"))):
        model = os.path.basename(model_dir)
        text = tool_report(os.path.join(model_dir, "report.txt"))
        if not text:
            continue
        lines += [f"### Predicted scaling: {model}", "", "```", text.strip(), "```", ""]
        for png in relative(out, glob.glob(os.path.join(model_dir, "*.png"))):
            lines.append(f"![{os.path.basename(png)}]({png})")
        lines.append("")
    return lines


def main(argv):
    parser = OptionParser(prog="characterize_report.py", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("matrix", help="heatmaps of collbench-linkmatrix's links CSV")
    m.add_argument("--links", required=True)
    m.add_argument("--out", required=True)
    s = sub.add_parser("slow-hosts", help="hosts the matrix names as slow")
    s.add_argument("--hosts-csv", required=True)
    c = sub.add_parser("netsim-check", help="measurements against the netsim configuration")
    c.add_argument("--out", required=True)
    # Fractions, checked by option_number (NETSIM_LIMITS) in main: one line, exit 2.
    c.add_argument("--bandwidth-tolerance", default=0.10,
                   help="largest relative error of a measured link rate (> 0, <= 1)")
    c.add_argument("--ring-fraction", default=0.85,
                   help="smallest ring busbw as a fraction of the link rate (> 0, <= 1)")
    c.add_argument("--ps-factor", default=0.75,
                   help="ps_central must be at least (p-1) x this slower than ring (> 0, <= 2)")
    c.add_argument("--prediction-tolerance", default=0.20,
                   help="largest relative error of the fit's bottom-up predictions of "
                   "allreduce over mpi at >= 1 MiB (> 0, <= 1)")
    c.add_argument("--other-prediction-tolerance", default=0.10,
                   help="the same for every other collective (> 0, <= 1; default: issue 18's "
                   "10%%)")
    c.add_argument("--ofi-prediction-tolerance", default=0.10,
                   help="the same for every collective over the ofi transport (> 0, <= 1; "
                   "default: issue 21's 10%%)")
    b = sub.add_parser("side-by-side", help="the times over mpi and over ofi, point by point")
    b.add_argument("--out", required=True, action="append",
                   help="a characterize.sh folder (repeatable; their sweeps together)")
    b.add_argument("--min-bytes", default=0, help="smallest size shown (bytes, default 0)")
    w = sub.add_parser("two-level", help="flat against hierarchical, and the two-level model")
    w.add_argument("--out", required=True, action="append",
                   help="a characterize.sh folder of several ranks per host (repeatable)")
    w.add_argument("--speedup", default=1.3,
                   help="smallest ring / hierarchical at the largest size (> 0, <= 100)")
    w.add_argument("--tolerance", default=0.15,
                   help="largest |error| of a two-level bottom-up prediction (> 0, <= 1)")
    r = sub.add_parser("report", help="OUT/report.md")
    r.add_argument("--out", required=True)
    args = parser.parse_args(argv[1:])
    # A full disk while writing: the outputs are discarded.
    return guarded("characterize_report.py", lambda: run(args),
                   f"cannot write {args.command}'s output")


def run(args):
    """The subcommand of `args`: its exit status (0 unless a check failed)."""
    if args.command in ("matrix", "report"):
        writable_folder(args.out)  # before reading and drawing
    if args.command == "netsim-check":
        for name, highest in NETSIM_LIMITS.items():
            option = "--" + name.replace("_", "-")
            setattr(args, name, option_number(getattr(args, name), option, 0, highest,
                                              lowest_included=False))
    if args.command == "two-level":
        args.speedup = option_number(args.speedup, "--speedup", 0, 100, lowest_included=False)
        args.tolerance = option_number(args.tolerance, "--tolerance", 0, 1,
                                       lowest_included=False)
        return cmd_two_level(args)
    if args.command == "side-by-side":
        args.min_bytes = option_number(args.min_bytes, "--min-bytes", 0, 2**62, "bytes",
                                       whole=True)
        return cmd_side_by_side(args)
    if args.command == "matrix":
        cmd_matrix(args)
    elif args.command == "slow-hosts":
        cmd_slow_hosts(args)
    elif args.command == "netsim-check":
        return cmd_netsim_check(args)
    elif args.command == "report":
        cmd_report(args)
    return 0
