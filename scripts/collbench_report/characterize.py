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

import argparse
import collections
import glob
import math
import os
import statistics
import sys

from collbench_report.cli import guarded
from collbench_report.figures import pyplot, save
from collbench_report.outputs import ReplaceTogether, writable_folder
from collbench_report.readers import (InputError, algorithm_order, collective_order,
                                      median_per_key, option_number, read_models,
                                      read_optional_settings, read_optional_text, read_rows,
                                      sweep_collective)
from collbench_report.simselection import selection_section
from collbench_report.text import pipe_head, pipe_row, size_label, time_label
from collbench_report.your_model import your_model

# What tbf counts per full TCP segment at MTU 1500 with timestamps (scripts/netsim.sh).
PAYLOAD_PER_FRAME = 1448
FRAME_BYTES = 1514


def number(text, default=math.nan):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return default
    return value if math.isfinite(value) else default


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


def slow_hosts(hosts_csv):
    rows = read_rows(hosts_csv, ["host", "slow"], "slow-hosts")
    return [r["host"] for r in rows if r["slow"] == "yes"]


def cmd_slow_hosts(args):
    for host in slow_hosts(args.hosts_csv):
        print(host)


# --------------------------------------------------------------------------- measurements

class Sweep:
    """The sweep's collective rows (every CSV of OUT/sweep, each row's
    collective its sweep_collective), repetitions combined by median_per_key:
    medians[(collective, transport, algorithm, ranks, bytes)] = median µs;
    collectives in the order the CSVs first list them; algorithms[collective]
    in the order they list its algorithms; busbw_factor[(collective, ranks)]
    = busbw / algbw as the CSV gives it (the scripts know no factor)."""

    def __init__(self, out):
        timed, collectives_in_files, algorithms_in_files = [], [], collections.defaultdict(list)
        self.busbw_factor = {}
        self.providers = collections.defaultdict(set)  # transport -> provider column values
        for path in sorted(glob.glob(os.path.join(out, "sweep", "*.csv"))):
            rows = [r for r in read_rows(path, ["family", "algorithm", "ranks", "bytes",
                                                "median_us"], "report")
                    if sweep_collective(r) and r.get("check") != "wrong"
                    and math.isfinite(number(r["median_us"])) and r["ranks"] and r["bytes"]]
            collectives_in_files.append([sweep_collective(r) for r in rows])
            by_collective = collections.defaultdict(list)
            for r in rows:
                by_collective[sweep_collective(r)].append(r["algorithm"])
                self.providers[r.get("transport", "")].add(r.get("provider", ""))
                algbw, busbw = number(r.get("algbw_GBps")), number(r.get("busbw_GBps"))
                if algbw > 0 and busbw > 0:
                    self.busbw_factor[(sweep_collective(r), int(float(r["ranks"])))] = busbw / algbw
            for collective, names in by_collective.items():
                algorithms_in_files[collective].append(names)
            timed += rows
        self.medians = median_per_key(timed, lambda r: (
            sweep_collective(r), r.get("transport", ""), r["algorithm"], int(float(r["ranks"])),
            int(float(r["bytes"]))))
        self.collectives = collective_order(*collectives_in_files)
        self.algorithms = {c: algorithm_order(*algorithms_in_files[c]) for c in self.collectives}

    def of(self, collective):
        """(transport, algorithm, ranks, bytes) -> median µs of one collective."""
        return {k[1:]: v for k, v in self.medians.items() if k[0] == collective}


def modelled_algorithms(out):
    """(collective, algorithm) of every algorithm collbench-fit priced with its
    own cost terms (models.csv's bottom_up rows, family the collective, terms
    "own"; the MPI library's own algorithm has "lower_bound"), or None without
    fit/models.csv."""
    path = os.path.join(out, "fit", "models.csv")
    if not os.path.exists(path):
        return None
    return {(r["family"], r["algorithm"])
            for r in read_models(path, ["family", "algorithm", "terms"], "the report")
            if r["terms"] == "own"}


def hockney_fits(out):
    path = os.path.join(out, "fit", "models.csv")
    if not os.path.exists(path):
        return []
    return [r for r in read_models(path, ["model", "beta_ns_per_byte"], "the report")
            if r["model"] == "hockney"]


def predictions(out):
    path = os.path.join(out, "fit", "predictions.csv")
    if not os.path.exists(path):
        return []
    return read_rows(path, (), "the report")


def bottom_up_errors(out, min_bytes):
    """(collective, transport, algorithm) -> [(ranks, bytes, measured_us,
    predicted_us, rel_err)]: collbench-fit's bottom-up predictions (Hockney α,
    β of the sendrecv fit at the row's p, else of the ping-pong, and γ of the
    local reduce: its predictions.csv, model bottom_up, family the collective)
    at sizes >= min_bytes, in the file's order."""
    result = collections.defaultdict(list)
    for r in predictions(out):
        if r.get("model") != "bottom_up" or not r.get("family"):
            continue
        b = number(r.get("bytes"))
        measured = number(r.get("measured_us"))
        predicted = number(r.get("predicted_us"))
        if not (b >= min_bytes and measured > 0 and math.isfinite(predicted)):
            continue
        result[(r["family"], r.get("transport", ""), r["algorithm"])].append(
            (int(number(r.get("ranks"), 0)), int(b), measured, predicted,
             (predicted - measured) / measured))
    return result


# --------------------------------------------------------------------------- netsim checks

def netsim_rates(out):
    """host -> configured rate in bits/s, from the netsim hosts file characterize.sh copied."""
    path = os.path.join(out, "netsim_hosts.txt")
    rates = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for number_, line in enumerate(f, start=1):
                parts = line.split()
                if len(parts) >= 5:
                    rate = number(parts[4])
                    if not rate > 0:
                        raise InputError(f"{path}: line {number_}: rate '{parts[4]}' is not a "
                                         "number of bits/s > 0")
                    rates[parts[0]] = rate
    return rates


def netsim_checks(out, bw_tolerance=0.10, ring_fraction=0.85, ps_factor=0.75,
                  prediction_tolerance=0.20, other_prediction_tolerance=0.10,
                  ofi_prediction_tolerance=0.10, min_bytes=2**20, big_bytes=4 * 2**20):
    """[(check, measured, expected, ok)] comparing a netsim run with its
    configuration. The bottom-up error of allreduce's algorithms over the mpi
    transport is held to prediction_tolerance, every other collective's to
    other_prediction_tolerance (issue 18: within 10% at >= 1 MiB), and every
    collective's over the ofi transport to ofi_prediction_tolerance (issue 21:
    within 10%)."""
    env = read_optional_settings(os.path.join(out, "run.env"), "=")
    rates = netsim_rates(out)
    if not rates:
        raise InputError(f"{out}: no netsim_hosts.txt; netsim-check needs a characterize.sh "
                         "folder of a netsim run")
    checks = []
    # 1. The matrix names exactly the hosts configured slower than the median.
    hosts_csv = os.path.join(out, "matrix", "hosts.csv")
    threshold = number(env.get("threshold"), 0.25)
    median_rate = statistics.median(rates.values())
    expected_slow = sorted(h for h, r in rates.items() if r < (1 - threshold) * median_rate)
    if os.path.exists(hosts_csv):
        named = sorted(slow_hosts(hosts_csv))
        links = read_rows(os.path.join(out, "matrix", "links.csv"), ["src", "dst", "slow"], "netsim-check")
        unexplained = [f"{r['src']}->{r['dst']}" for r in links
                       if r["slow"] == "yes" and r.get("explained_by_host") != "yes"]
        checks.append(("matrix: slow hosts named", " ".join(named) or "none",
                       " ".join(expected_slow) or "none", named == expected_slow))
        checks.append(("matrix: slow links not explained by a slow host",
                       " ".join(unexplained) or "none", "none", not unexplained))
        # "No other" host: every slow link has a configured-slow host at one end.
        stray = sorted({f"{r['src']}->{r['dst']}" for r in links if r["slow"] == "yes"
                        and r["src"] not in expected_slow and r["dst"] not in expected_slow})
        checks.append(("matrix: slow links between hosts configured at full rate",
                       " ".join(stray) or "none", "none", not stray))
    sweep = Sweep(out)
    medians = sweep.of("allreduce")
    fits = [r for r in hockney_fits(out) if r.get("placement", "inter") in ("inter", "")]
    if not sweep.medians and not os.path.exists(os.path.join(out, "fit", "models.csv")):
        return checks  # a matrix-only run
    sweep_hosts = env.get("sweep_hosts", "").split()
    sweep_rates = {rates[h] for h in sweep_hosts if h in rates}
    if len(sweep_rates) != 1:
        checks.append(("sweep hosts share one link rate", str(sorted(sweep_rates)), "one rate",
                       False))
        return checks
    # The libfabric provider the ofi rows name: the one asked for (fi_getinfo
    # names a core provider under a utility one, e.g. tcp as "tcp;ofi_rxm").
    asked = env.get("ofi_provider", "")
    if sweep.providers.get("ofi"):
        named = sorted(sweep.providers["ofi"])
        checks.append(("ofi provider, as libfabric names it", " ".join(named) or "none",
                       f"{asked or '(default)'}, with a utility provider or without",
                       not asked or all(n.split(";")[0] == asked.split(";")[0] for n in named)))
    rate_bps = sweep_rates.pop()
    link_Bps = rate_bps / 8
    payload_Bps = link_Bps * PAYLOAD_PER_FRAME / FRAME_BYTES
    # 2. The fitted p2p beta against the configured rate less TCP/IP headers.
    for fit in fits:
        beta_ns = number(fit.get("beta_ns_per_byte"))
        fitted_Bps = 1e9 / beta_ns if beta_ns > 0 else math.nan
        ratio = fitted_Bps / payload_Bps
        checks.append((f"p2p beta ({fit.get('transport', '')}): payload rate 1/beta",
                       f"{fitted_Bps / 1e6:.2f} MB/s ({100 * ratio:.1f}%)",
                       f"{payload_Bps / 1e6:.2f} MB/s ±{100 * bw_tolerance:.0f}% "
                       f"({rate_bps / 1e6:g} Mbit/s × {PAYLOAD_PER_FRAME}/{FRAME_BYTES})",
                       abs(ratio - 1) <= bw_tolerance))
    if not fits:
        checks.append(("p2p beta fitted", "no hockney row in fit/models.csv", "one", False))
    # 3. Ring busbw and ps_central / ring at the largest size >= big_bytes.
    for transport in sorted({k[0] for k in medians}):
        ranks = sorted({k[2] for k in medians if k[0] == transport})
        for p in ranks:
            sizes = [k[3] for k in medians if k[0] == transport and k[2] == p
                     and k[1] == "ring" and k[3] >= big_bytes]
            if not sizes:
                continue
            n = max(sizes)
            ring_us = medians[(transport, "ring", p, n)]
            busbw = n / (ring_us * 1e-6) * 2 * (p - 1) / p
            checks.append((f"{transport} p={p} ring busbw at {size_label(n)}",
                           f"{busbw / 1e6:.2f} MB/s ({100 * busbw / link_Bps:.1f}% of the link)",
                           f">= {100 * ring_fraction:.0f}% of {link_Bps / 1e6:.2f} MB/s",
                           busbw >= ring_fraction * link_Bps))
            ps = medians.get((transport, "ps_central", p, n))
            if ps is not None:
                want = (p - 1) * ps_factor
                checks.append((f"{transport} p={p} ps_central / ring at {size_label(n)}",
                               f"{ps / ring_us:.2f}x", f">= (p-1) × {ps_factor} = {want:.2f}x "
                               f"(model: {p}x)", ps / ring_us >= want))
    # 4. Bottom-up predictions of every modelled algorithm of every collective
    # at every size >= min_bytes: the worst point of each.
    modelled = modelled_algorithms(out)
    if modelled is None:
        checks.append(("fitted models", "no fit/models.csv", "collbench-fit's models.csv",
                       False))
        modelled = set()
    errors = bottom_up_errors(out, min_bytes)
    collectives = algorithm_order(sweep.collectives, [k[0] for k in errors])
    for collective in collectives:
        judged = [(k, points) for k, points in errors.items()
                  if k[0] == collective and (collective, k[2]) in modelled]
        order = algorithm_order(sweep.algorithms.get(collective, []), [k[2] for k, _ in judged])
        for (_, transport, algorithm), points in sorted(judged, key=lambda e: (
                e[0][1], order.index(e[0][2]))):
            if transport == "ofi":
                tolerance = ofi_prediction_tolerance
            elif collective == "allreduce":
                tolerance = prediction_tolerance
            else:
                tolerance = other_prediction_tolerance
            worst = max(points, key=lambda x: abs(x[4]))
            checks.append((f"{transport} {collective} {algorithm}: bottom-up error at >= "
                           f"{size_label(min_bytes)}",
                           f"max {100 * abs(worst[4]):.1f}% (p={worst[0]}, "
                           f"{size_label(worst[1])}; {len(points)} points)",
                           f"<= {100 * tolerance:.0f}%", abs(worst[4]) <= tolerance))
        for algorithm in sweep.algorithms.get(collective, []):
            if (collective, algorithm) in modelled and not any(
                    k[0] == collective and k[2] == algorithm for k in errors):
                checks.append((f"{collective} {algorithm}: bottom-up predictions at >= "
                               f"{size_label(min_bytes)}", "none in fit/predictions.csv", "some",
                               False))
    return checks


def checks_table(checks):
    lines = pipe_head("check", "measured", "expected", "result")
    for name, measured, expected, ok in checks:
        lines.append(pipe_row(name, measured, expected, "pass" if ok else "**FAIL**"))
    return "\n".join(lines)


# netsim-check's options -> the largest sensible value (each is > 0): a
# tolerance of inf or nan would make every check pass, a negative one every
# check fail. ps_central is p x slower than ring in the model, so (p-1) x
# the factor is within it up to a factor of p/(p-1) <= 2.
NETSIM_LIMITS = {"bandwidth_tolerance": 1, "ring_fraction": 1, "ps_factor": 2,
                 "prediction_tolerance": 1, "other_prediction_tolerance": 1,
                 "ofi_prediction_tolerance": 1}


def cmd_netsim_check(args):
    checks = netsim_checks(args.out, args.bandwidth_tolerance, args.ring_fraction,
                           args.ps_factor, args.prediction_tolerance,
                           args.other_prediction_tolerance, args.ofi_prediction_tolerance)
    print(checks_table(checks))
    failed = [c for c in checks if not c[3]]
    if failed:
        print(f"{len(failed)} of {len(checks)} checks failed", file=sys.stderr)
        return 1
    print(f"all {len(checks)} checks passed", file=sys.stderr)
    return 0


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


def two_level_modelled(out):
    """(collective, algorithm) of every algorithm collbench-fit priced over two
    levels (models.csv's bottom_up_two_level rows), or None without
    fit/models.csv."""
    path = os.path.join(out, "fit", "models.csv")
    if not os.path.exists(path):
        return None
    return {(r["family"], r["algorithm"])
            for r in read_models(path, ["model", "family", "algorithm"], "the report")
            if r["model"] == "bottom_up_two_level"}


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
    print(checks_table(checks))
    failed = [c for c in checks if not c[3]]
    print(f"{len(failed)} of {len(checks)} checks failed" if failed
          else f"all {len(checks)} checks passed", file=sys.stderr)
    return 1 if failed else 0


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

    rates = netsim_rates(out)
    if rates:
        lines += ["## Emulated network", "",
                  "Each host is a network namespace with one veth port into a bridge; its link is "
                  "shaped with `tc tbf` in both directions (full duplex). tbf counts each frame "
                  "without preamble, FCS and inter-frame gap: a full TCP segment carries "
                  f"{PAYLOAD_PER_FRAME} B of payload in {FRAME_BYTES} B, so the payload rate is at "
                  f"most {100 * PAYLOAD_PER_FRAME / FRAME_BYTES:.2f}% of the configured rate.", "",
                  *pipe_head("host", "configured rate", "payload rate (max)")]
        for host, bps in rates.items():
            lines.append(pipe_row(host, f"{bps / 1e6:g} Mbit/s",
                                  f"{bps / 8 * PAYLOAD_PER_FRAME / FRAME_BYTES / 1e6:.2f} MB/s"))
        lines.append("")

    # 1. matrix
    summary = read_optional_text(os.path.join(out, "matrix", "summary.txt"))
    if summary:
        lines += ["## 1. Point-to-point matrix", "",
                  "Every pair of hosts, in the rounds of a round-robin tournament: the pairs of a "
                  "round are disjoint, so each link carries one pair's traffic. Latency is the "
                  "half round trip of 8 B (one pair at a time), bandwidth one-way at the matrix "
                  "size. A host's capacity is its best link; slow means below the threshold "
                  "fraction of the median host.", "", "```", summary.strip(), "```", ""]
        for png in ("matrix_bandwidth.png", "matrix_latency.png"):
            if os.path.exists(os.path.join(out, "matrix", png)):
                lines.append(f"![{png}](matrix/{png})")
        lines += ["", "Data: [matrix/links.csv](matrix/links.csv), "
                  "[matrix/hosts.csv](matrix/hosts.csv).", ""]
    elif len(env.get("hosts", "").split()) == 1:
        host = env["hosts"].strip()
        lines += ["## 1. Point-to-point matrix", "",
                  f"Skipped: one host ({host}), so no host pairs to measure. Every sweep below "
                  f"is intra-node ({env.get('ppn', '?')} ranks on {host}): it measures the path "
                  "between ranks that share a host (shared memory or loopback, as the MPI "
                  "stack picks), not a network.", ""]

    # 2. sweep
    sweep = Sweep(out)
    if sweep.medians:
        lines += ["## 2. Collective sweeps", ""]
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
        lines.append("")

    # 3. fit
    fit_report = tool_report(os.path.join(out, "fit", "report.txt"))
    if fit_report:
        lines += ["## 3. Fitted models and selection", "",
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

    lines += simulated_scaling(out)
    lines += selection_section(out)
    lines += your_model(out)

    # checks against the configuration (netsim only)
    if rates:
        checks = netsim_checks(out)
        passed = sum(1 for c in checks if c[3])
        lines += ["## Measurements against the emulated configuration", "",
                  f"{passed} of {len(checks)} checks pass (the checks of the `netsim_e2e` test).",
                  "", checks_table(checks), ""]

    with ReplaceTogether(out) as outputs:
        with open(outputs.add("report.md"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines).rstrip() + "\n")
    print(outputs.path("report.md"))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
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
