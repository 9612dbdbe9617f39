"""The performance targets of issues 8 and 18, from the files scripts/perf.sh
writes.

Usage: scripts/perf_report.py DIR [--far-ns NS|all] [--all-rows P[,P...]]
       scripts/perf_report.py --select-near NS CSV...
       scripts/perf_report.py --near-shortfall NS REPS CSV...

DIR holds (as scripts/perf.sh leaves them):
  np<P>.csv               collbench: allreduce (all algorithms) and, at the
                          rank counts with a core per rank, every other
                          collective of algorithms.csv, mpi_bare, p2p
                          (ping-pong, and sendrecv when --families had it),
                          local (and reduce_all, every rank reducing at once);
                          --benchmark_repetitions R; one file per P,
                          every attempt of every part of the sweep (one
                          run_id each)
  fit_np<P>_near/         collbench-fit on the rows of np<P>.csv measured with
                          the cores near (below; at the rank counts of
                          --all-rows, fit_np<P>/ instead): predictions.csv (bottom-up
                          rows: by size, the target, and one Hockney line,
                          shown next to it) and models.csv (which alpha, beta
                          each bottom-up prediction used)
  fit_np<P>/              the same on every row, near and far, for comparison
  local_<dtype>.csv       collbench --families local --dtype f16|bf16
  algorithms.csv          collbench --list-algorithms --csv: the collectives
                          judged, and which of their algorithms are
                          hand-written (implementation column) and which is
                          the MPI library's (implementation mpi)
  alloc.txt               tests/alloc_test's output; its last line PASS or FAIL
  core_latency.txt        optional: collbench-core-latency around each attempt,
                          'np=P part=K sizes=S attempt=A before|after cpu_a
                          cpu_b median min max'

"Near": a row whose core_handoff_ns (the cache-line handoff latency between
the cores of ranks 0 and 1, measured by collbench before and after that
repetition's timed loop) is at most --far-ns (default 100; "all": every
row, as perf.sh --far-ns 0 asks). Every target is
judged on near rows: on this VM the host sometimes runs the two vCPUs on
different dies, and an allreduce over shared memory (the MPI library's too)
then takes 3-5x longer while the p2p inputs of the model do not
(docs/performance.md, "The distance between the two cores decides most of
it"). The same ratio over every row is printed next to
it. A CSV without the core_handoff_ns column counts as all near, and so
does every row at the rank counts of --all-rows: oversubscribed sweeps,
whose ranks 0 and 1 may share a core (their handoff then takes a scheduler
time slice, which says nothing about the distance between cores).

Prints Markdown: the target table (per target and rank count the measured
ratio, its spread, pass or miss), then the per-size detail the ratios come
from. Allreduce's targets: ring against mpi at 4..64 MiB, the fastest
hand-written (those collbench-fit prices with their own terms) against mpi
at 8 B..1 KiB, each algorithm against its bottom-up model, the harness's
overhead; then every collective of algorithms.csv (allreduce included) gets
the targets of issue 18, at the rank counts not in --all-rows only: the
fastest hand-written algorithm at each size (lowest near median) against
the MPI library's, busbw ratio >= 1.0 at 4..64 MiB and time ratio <= 1.3 at
8 B..1 KiB (allreduce's is the one above), the worst size judged; a
collective of the listing with no rows in a range is a MISS that says so.
Then the kernels and the allocation test.

A ratio of two benchmarks pairs their rows of the same job (run_id) and
repetition index, both near, and divides the median of one side by the
median of the other; the spread is the lowest..highest ratio of the pairs
(with --interleave a repetition is a round: every benchmark of the job
once, so the two rows of a pair are close in time).

--select-near NS CSV...: prints the rows of the CSVs (one header) whose
core_handoff_ns is at most NS (NS "all": every row, measured or not).
--near-shortfall NS REPS CSV...: prints the sizes (as collbench --sizes,
e.g. 512B,1024B; an empty line when none) at which a benchmark of a
collective's sweep (allreduce/ring/1024, reduce_scatter/mpi/8, ...) or
sendrecv has fewer than min(REPS, 3) near rows in the CSVs.

Standard library only. Bad input (--far-ns or --all-rows given twice too): a
line on stderr, exit status 2.
"""

import csv
import glob
import math
import os
import re
import statistics
import sys

from collbench_report.cli import given_twice
from collbench_report.readers import (LISTING_COLUMNS, MPI_ALGORITHM, InputError,
                                      algorithm_order, option_number, read_models, read_table,
                                      sweep_collective)
from collbench_report.readers import number as csv_number
from collbench_report.text import pipe_head, pipe_row, whole_size_label

MIB = 1 << 20
PREDICTION_COLUMNS = ("model", "family", "algorithm", "ranks", "bytes", "measured_us",
                      "predicted_us")


def fail(message):
    raise InputError(message)


# Columns the targets read from collbench's CSVs (np<P>.csv, local_<dtype>.csv).
RUN_COLUMNS = ("benchmark", "family", "algorithm", "bytes", "repetition", "median_us")


def read_run(path):
    """(header, rows) of a collbench CSV after collbench_csv.py's checks, every
    row with its bytes."""
    header, rows = read_table(path, RUN_COLUMNS, "perf_report.py")
    for index, row in enumerate(rows, start=1):
        csv_number(row, "bytes", path, index, whole=True)
    return header, rows


def read_rows(path):
    return read_run(path)[1]


def read_predictions(path):
    """Rows of collbench-fit's predictions.csv, checked."""
    return read_table(path, PREDICTION_COLUMNS, "perf_report.py")[1]


def handoff_ns(row):
    """The row's core_handoff_ns, 0 when the CSV has no such column (counted
    as near), inf when the column is empty (not measured: counted as far)."""
    if "core_handoff_ns" not in row:
        return 0.0
    text = row["core_handoff_ns"]
    try:
        return float(text) if text else math.inf
    except ValueError:
        fail(f"core_handoff_ns '{text}' of {row.get('benchmark')} is not a number")


def near_rows(rows, far_ns):
    return [r for r in rows if handoff_ns(r) <= far_ns]


def time_index(rows):
    """(collective, algorithm, bytes) -> {(run_id, repetition): median_us}
    (the family for rows of no collective's sweep: p2p, local), over
    the timed per-size rows (workload rows left out): read once, looked up by
    every target."""
    index = {}
    for r in rows:
        if r["median_us"] and not r.get("workload"):
            benchmark = (sweep_collective(r) or r["family"], r["algorithm"], whole(r["bytes"]))
            index.setdefault(benchmark, {})[(r.get("run_id", ""), whole(r["repetition"] or 0))] = (
                float(r["median_us"]))
    return index


def times(index, algorithm, size, collective="allreduce"):
    """(run_id, repetition) -> median_us of each of the benchmark's rows."""
    return index.get((collective, algorithm, size), {})


def median_of(values):
    return statistics.median(values.values())


def paired(numerator, denominator):
    """(ratio of the medians, lowest pair ratio, highest, pairs) over the rows
    present on both sides (same job, same repetition), or None."""
    keys = sorted(numerator.keys() & denominator.keys())
    if not keys:
        return None
    ratios = [numerator[k] / denominator[k] for k in keys]
    return (statistics.median(numerator[k] for k in keys) /
            statistics.median(denominator[k] for k in keys), min(ratios), max(ratios), len(keys))


def fmt_ratio(value):
    return "n/a" if value is None else f"{value[0]:.3f}"


def fmt_spread(value):
    return "n/a" if value is None else f"{value[1]:.3f}..{value[2]:.3f}"


def worst_text(worst, missing, name_at=None):
    """The table's ratio: the worst size's (and its algorithm's, at name_at),
    or the sizes that had no near pair to judge."""
    if missing:
        return f"no near pair at {', '.join(missing)}"
    if worst is None:
        return None
    named = f", {worst[name_at]}" if name_at is not None else ""
    return f"{worst[0]:.3f} ({whole_size_label(worst[4])}{named})"


def fmt_all(value, pairs_near):
    """The table's last column: the ratio over every pair, near or far."""
    if value is None:
        return "n/a"
    return f"{value[0]:.3f} ({pairs_near} of {value[3]} pairs near)"


def bottom_up_sources(fit_folder, p):
    """algorithm -> True when its bottom-up prediction at p ranks took alpha, beta
    from the sendrecv fit at p ranks (collbench-fit's note says so), False for
    the ping-pong; and the text comparing the two fits' beta, or ""."""
    path = os.path.join(fit_folder, "models.csv")
    if not os.path.exists(path):
        return {}, ""
    rows = read_models(path, ("model", "algorithm", "ranks", "note", "beta_GBps"), "perf_report.py")
    sources = {}
    for r in rows:
        if r["model"] == "bottom_up" and str(p) in r["ranks"].split(";"):
            sources[r["algorithm"]] = "sendrecv fit at" in r["note"]
    ping_pong = [r for r in rows if r["model"] == "hockney" and r["beta_GBps"]]
    exchange = [r for r in rows if r["model"] == "hockney_sendrecv" and r["ranks"] == str(p)
                and r["beta_GBps"]]
    comparison = ""
    if ping_pong and exchange:
        ratio = float(ping_pong[0]["beta_GBps"]) / float(exchange[0]["beta_GBps"])
        comparison = (f"beta: sendrecv at {p} ranks {float(exchange[0]['beta_GBps']):.3f} GB/s, "
                      f"ping-pong {float(ping_pong[0]['beta_GBps']):.3f} GB/s "
                      f"(sendrecv beta = {ratio:.2f} x ping-pong beta)")
    return sources, comparison


def modelled_algorithms(fit_folder):
    """The allreduce algorithms collbench-fit priced with their own cost terms
    in FIT_FOLDER/models.csv (terms "own": the hand-written ones; the MPI
    library's own algorithm has "lower_bound"), or None without the file."""
    path = os.path.join(fit_folder, "models.csv")
    if not os.path.exists(path):
        return None
    return {r["algorithm"] for r in read_models(path, ("family", "algorithm", "terms"),
                                                "perf_report.py")
            if r["family"] == "allreduce" and r["terms"] == "own"}


def model_ratios(rows, model, p):
    """algorithm -> [(measured / predicted, size)] at >= 1 MiB and p ranks,
    sorted by size, from collbench-fit's predictions.csv rows of `model` (a
    bottom-up model: only algorithms with their own cost terms have one)."""
    by_algorithm = {}
    for r in rows:
        if (r["model"] == model and r["family"] == "allreduce"
                and float(r["bytes"]) >= MIB and int(float(r["ranks"])) == p
                and r["measured_us"] and r["predicted_us"]):
            # The fit prints bytes with 6 significant digits; the sizes here
            # are powers of two.
            size = 1 << round(math.log2(float(r["bytes"])))
            by_algorithm.setdefault(r["algorithm"], []).append(
                (float(r["measured_us"]) / float(r["predicted_us"]), size))
    return {a: sorted(v, key=lambda x: x[1]) for a, v in by_algorithm.items()}


def in_order(names, order):
    """`names` in `order` (collbench_csv.algorithm_order of the run), any name
    the order lacks after them by name: none is dropped."""
    return [a for a in order if a in names] + sorted(set(names) - set(order))


def ratio_table(by_algorithm, order):
    """Markdown lines: one row per algorithm (in `order`), one column per size."""
    sizes = sorted({b for v in by_algorithm.values() for _, b in v})
    lines = pipe_head("algorithm", *(whole_size_label(s) for s in sizes))
    for algorithm in in_order(by_algorithm, order):
        if algorithm in by_algorithm:
            ratio_at = {b: r for r, b in by_algorithm[algorithm]}
            lines.append(pipe_row(algorithm, *(f"{ratio_at[s]:.2f}" if s in ratio_at else "-"
                                               for s in sizes)))
    return lines


def core_probes(folder):
    """core_latency.txt as (np, part, sizes, attempt, when, cpus, median, min,
    max) tuples, one per probe and CPU pair; [] when there is none."""
    path = os.path.join(folder, "core_latency.txt")
    if not os.path.exists(path):
        return []
    probes = []
    with open(path) as handle:
        for text in handle:
            fields = text.split()
            if len(fields) != 10 or not fields[0].startswith("np="):
                continue
            value = [f.split("=", 1)[1] for f in fields[:4]]
            probes.append((int(value[0]), int(value[1]), value[2], int(value[3]), fields[4],
                           f"{fields[5]},{fields[6]}", float(fields[7]), fields[8], fields[9]))
    return probes


def core_latency(folder):
    """Markdown lines listing every probe of core_latency.txt, or []."""
    probes = core_probes(folder)
    if not probes:
        return []
    lines = ["\n### Core-to-core latency around each attempt (collbench-core-latency, "
             "all CPU pairs)\n",
             *pipe_head("ranks", "part (sizes)", "attempt", "probe", "cpus",
                        "one-way ns (median)", "min..max")]
    for np, part, sizes, attempt, when, cpus, median, low, high in probes:
        lines.append(pipe_row(np, f"{part} ({sizes})", attempt, when, cpus, f"{median:.1f}",
                              f"{low}..{high}"))
    return lines


def jobs_table(rows, far_ns):
    """Markdown lines: per job (run_id) of a sweep, its sizes and how many of
    its rows were near, with the range of core_handoff_ns."""
    jobs = {}
    for r in rows:
        jobs.setdefault(r.get("run_id", ""), []).append(r)
    lines = pipe_head("job (run_id)", "sizes", "rows near / all", "core_handoff_ns min..max")
    for run_id, job in jobs.items():
        sizes = sorted({whole(r["bytes"]) for r in job})
        handoffs = [handoff_ns(r) for r in job]
        near = sum(h <= far_ns for h in handoffs)
        span = f"{whole_size_label(sizes[0])}..{whole_size_label(sizes[-1])}"
        lines.append(pipe_row(run_id, span, f"{near} / {len(job)}",
                              f"{min(handoffs):.0f}..{max(handoffs):.0f}"))
    return lines


def sizes_of(rows, collective="allreduce"):
    """The sizes of the collective's sweep rows."""
    return sorted({whole(r["bytes"]) for r in rows if sweep_collective(r) == collective})


def select_near(far_ns, paths):
    """--select-near: the near rows of the CSVs, under one header, on stdout."""
    tables = [read_run(path) for path in paths]  # every file checked before a line is printed
    header = tables[0][0]
    for path, (columns, _) in zip(paths, tables):
        if columns != header:
            fail(f"{path}: its columns differ from those of {paths[0]}")
    writer = csv.DictWriter(sys.stdout, fieldnames=header, lineterminator="\n")
    writer.writeheader()
    for _, rows in tables:
        writer.writerows(near_rows(rows, far_ns))


def near_shortfall(far_ns, reps, paths):
    """--near-shortfall: the sizes at which a benchmark of a collective's
    sweep (every collective the targets judge on near rows) or sendrecv has
    fewer than min(reps, 3) near rows in the CSVs, as a --sizes list."""
    count = {}
    for path in paths:
        for r in read_rows(path):
            if sweep_collective(r) or (r["family"] == "p2p" and r["algorithm"] == "sendrecv"):
                key = (r["benchmark"], whole(r["bytes"]))
                count[key] = count.get(key, 0) + (handoff_ns(r) <= far_ns)
    short = sorted({size for (_, size), n in count.items() if n < min(reps, 3)})
    print(",".join(f"{size}B" for size in short))


class SizeTarget:
    """A target that pits the fastest hand-written algorithm of a collective
    at each size of a range against the MPI library's: its worst size is
    judged. `speed`: the ratio is baseline time / hand-written time (busbw
    ratio, worse when lower) and must be >= limit; else hand-written time /
    baseline time (worse when higher), <= limit."""

    def __init__(self, ratio, low, high, sizes_text, speed, limit):
        self.ratio, self.low, self.high, self.sizes_text = ratio, low, high, sizes_text
        self.speed, self.limit = speed, limit
        self.goal = f"{'>=' if speed else '<='} {limit}"

    def target(self, collective):
        """The table's target text; a collective's name first unless empty."""
        return (f"{collective}: " if collective else "") + \
            f"{self.ratio}, worst size {self.sizes_text}"

    def pair(self, hand_written, baseline):
        """paired() of the two benchmarks' times, the target's way up."""
        return paired(baseline, hand_written) if self.speed else paired(hand_written, baseline)

    def worse(self, a, b):
        return a < b if self.speed else a > b

    def passes(self, ratio):
        return ratio >= self.limit if self.speed else ratio <= self.limit


LARGE = SizeTarget("fastest hand-written busbw / mpi busbw", 4 * MIB, 64 * MIB, "4..64 MiB",
                   speed=True, limit=1.0)
SMALL = SizeTarget("fastest hand-written time / mpi time", 8, 1024, "8 B..1 KiB", speed=False,
                   limit=1.3)


def fastest_against_baseline(near_index, all_index, collective, hand_written, baseline, sizes,
                             spec):
    """Per size: the hand-written algorithm with the lowest near median, paired
    with `baseline` (spec's ratio). Returns the detail lines, the worst near
    value (paired()'s tuple + (size, algorithm)), the worst over all rows and
    the sizes that had no near pair."""
    lines = pipe_head("size", "fastest", "its median us", f"{baseline} median us", "ratio",
                      "spread", "all rows")
    worst = worst_all = None
    missing = []
    for size in sizes:
        candidates = [(median_of(times(near_index, a, size, collective)), a)
                      for a in hand_written if times(near_index, a, size, collective)]
        base = times(near_index, baseline, size, collective)
        if not candidates or not base:
            lines.append(f"| {whole_size_label(size)} | no near rows | | | | | |")
            missing.append(whole_size_label(size))
            continue
        best = min(candidates)[1]
        value, every = (spec.pair(times(index, best, size, collective),
                                  times(index, baseline, size, collective))
                        for index in (near_index, all_index))
        if every is not None and (worst_all is None or spec.worse(every[0], worst_all[0])):
            worst_all = every
        if value is None:
            lines.append(f"| {whole_size_label(size)} | {best} | no near pair | | | | |")
            missing.append(whole_size_label(size))
            continue
        lines.append(f"| {whole_size_label(size)} | {best} | {min(candidates)[0]:.2f} | "
                     f"{median_of(base):.2f} | {fmt_ratio(value)} | {fmt_spread(value)} | "
                     f"{fmt_all(every, value[3])} |")
        if worst is None or spec.worse(value[0], worst[0]):
            worst = value + (size, best)
    return lines, worst, worst_all, missing


def target_row(spec, collective, p, worst, worst_all, missing):
    """The target table's row of fastest_against_baseline's result."""
    return (spec.target(collective), p, worst_text(worst, missing, 5),
            fmt_spread(None if missing else worst), spec.goal,
            worst is not None and not missing and spec.passes(worst[0]),
            worst_all and f"{worst_all[0]:.3f}")


LISTING = "algorithms.csv"


def read_listing(folder):
    """FOLDER/algorithms.csv (collbench --list-algorithms --csv, as perf.sh
    saves it) as {collective: (hand-written algorithms, the MPI library's
    algorithm or None)} in registry order; None without the file."""
    path = os.path.join(folder, LISTING)
    if not os.path.exists(path):
        return None
    listing = {}
    for r in read_table(path, LISTING_COLUMNS, "perf_report.py", rules={})[1]:
        hand_written, baseline = listing.setdefault(r["collective"], ([], []))
        if r["implementation"] == "hand-written":
            hand_written.append(r["algorithm"])
        elif r["implementation"] == MPI_ALGORITHM:
            baseline.append(r["algorithm"])
    return {c: (h, b[0] if b else None) for c, (h, b) in listing.items()}


def unjudged_reason(collective, hand_written, baseline, sizes, spec, p):
    """Why a collective's target cannot be judged at p ranks, or None."""
    if baseline is None:
        return f"no {collective} algorithm of implementation {MPI_ALGORITHM} in {LISTING}"
    if not hand_written:
        return f"no hand-written {collective} algorithm in {LISTING}"
    if not sizes:
        return f"no {collective} rows at {spec.sizes_text} in np{p}.csv"
    return None


def collective_targets(listing, all_rows, near_index, all_index, p, detail):
    """Table rows of every collective of the listing at p ranks: fastest
    hand-written against the MPI library's at 4..64 MiB (LARGE) and at 8 B..1
    KiB (SMALL; allreduce's is target 2, from the fit's hand-written
    algorithms); their per-size tables go to `detail`. A collective, size
    range or baseline the run lacks is a MISS that says so."""
    if listing is None:
        return [("every collective: fastest hand-written vs mpi", p, "n/a",
                 f"no {LISTING} (collbench --list-algorithms --csv)", "", False, "")]
    rows = []
    for collective, (hand_written, baseline) in listing.items():
        for spec in (LARGE,) if collective == "allreduce" else (LARGE, SMALL):
            sizes = [s for s in sizes_of(all_rows, collective) if spec.low <= s <= spec.high]
            reason = unjudged_reason(collective, hand_written, baseline, sizes, spec, p)
            if reason:
                rows.append((spec.target(collective), p, "n/a", reason, spec.goal, False, ""))
                continue
            detail.append(f"\n### p = {p}: {collective}: {spec.ratio}, {spec.sizes_text}\n")
            lines, worst, worst_all, missing = fastest_against_baseline(
                near_index, all_index, collective, hand_written, baseline, sizes, spec)
            detail.extend(lines)
            rows.append(target_row(spec, collective, p, worst, worst_all, missing))
    return rows


def whole(text):
    """A whole number of a row that read_rows checked (COLUMN_RULES: whole)."""
    return int(float(text))


# Thresholds in ns (a second: far above any hand-off) and counts.
MAX_NS = 1e9
MAX_COUNT = 1 << 20


def number(text, what, whole=False):
    """An option's value through collbench_csv.option_number: a count from 1
    to MAX_COUNT (whole) or a threshold from 0 to MAX_NS ns."""
    return option_number(text, what, 1 if whole else 0, MAX_COUNT if whole else MAX_NS,
                         unit="" if whole else "ns", whole=whole)


def near_threshold(text, what):
    """NS of --select-near and --near-shortfall: "all" takes every row."""
    return math.inf if text == "all" else number(text, what)


def main(argv):
    arguments = argv[1:]
    if not arguments or arguments[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if arguments else 2
    if arguments[0] == "--select-near":
        if len(arguments) < 3:
            fail("--select-near needs NS and at least one CSV")
        select_near(near_threshold(arguments[1], "--select-near"), arguments[2:])
        return
    if arguments[0] == "--near-shortfall":
        if len(arguments) < 4:
            fail("--near-shortfall needs NS, REPS and at least one CSV")
        near_shortfall(near_threshold(arguments[1], "--near-shortfall"),
                       number(arguments[2], "REPS", whole=True), arguments[3:])
        return
    far_ns = 100.0
    all_rows_at = set()
    folder = arguments[0]
    if folder.startswith("-"):
        fail(f"unexpected argument {folder}: the first is DIR (see --help)")
    options = arguments[1:]
    given = {}
    while options:
        if len(options) < 2 or options[0] not in ("--far-ns", "--all-rows"):
            fail(f"unexpected arguments {' '.join(options)} (see --help)")
        if options[0] in given:
            raise given_twice(options[0], given[options[0]], options[1])
        given[options[0]] = options[1]
        if options[0] == "--far-ns":
            far_ns = near_threshold(options[1], "--far-ns")
        else:
            all_rows_at |= {number(p, "--all-rows", whole=True) for p in options[1].split(",")}
        options = options[2:]
    if not os.path.isdir(folder):
        fail(f"{folder} is not a folder")
    runs = {}
    for path in sorted(glob.glob(os.path.join(folder, "np*.csv"))):
        match = re.fullmatch(r"np(\d+)\.csv", os.path.basename(path))
        if match:
            runs[int(match.group(1))] = read_rows(path)
    if not runs:
        fail(f"no np<P>.csv in {folder}")
    listing = read_listing(folder)

    near = "cores at any distance" if far_ns == math.inf else f"cores <= {far_ns:g} ns apart"
    table = []  # (target, ranks, ratio text, spread text, goal, pass, all-rows text)
    detail = [f"Ratios from rows measured with the {near} (core_handoff_ns); the "
              "same over all rows, near and far, in the last column."]
    if all_rows_at:
        detail.append(f"At {', '.join(map(str, sorted(all_rows_at)))} ranks every row counts "
                      "(oversubscribed: ranks 0 and 1 may share a core).")

    for p, all_rows in runs.items():
        rows = all_rows if p in all_rows_at else near_rows(all_rows, far_ns)
        near_index, all_index = time_index(rows), time_index(all_rows)
        order = algorithm_order([r["algorithm"] for r in all_rows if r["family"] == "allreduce"])
        every_row = p in all_rows_at or far_ns == math.inf
        near_fit = os.path.join(folder, f"fit_np{p}" if every_row else f"fit_np{p}_near")
        # Which algorithms are hand-written is the fit's to say: those it gave
        # cost terms of their own, in either fit of this p.
        fits = [modelled_algorithms(os.path.join(folder, f"fit_np{p}{tail}"))
                for tail in ("_near", "")]
        modelled = None if fits == [None, None] else set().union(*(f for f in fits if f))
        detail.append(f"\n### p = {p}: jobs of the sweep\n")
        detail.extend(jobs_table(all_rows, far_ns))

        # 1. ring busbw >= mpi at 4..64 MiB. busbw ratio = time ratio mpi/ring.
        worst = None
        worst_all = None
        missing = []  # sizes without a near pair
        detail.append(f"\n### p = {p}: ring vs mpi, busbw ratio (ring/mpi), 4 MiB .. 64 MiB\n")
        detail += pipe_head("size", "ring median us", "mpi median us", "ratio", "spread",
                            "all rows")
        for size in [s for s in sizes_of(all_rows) if 4 * MIB <= s <= 64 * MIB]:
            value = paired(times(near_index, MPI_ALGORITHM, size), times(near_index, "ring", size))
            every = paired(times(all_index, MPI_ALGORITHM, size), times(all_index, "ring", size))
            if every is not None and (worst_all is None or every[0] < worst_all[0]):
                worst_all = every
            if value is None:
                detail.append(f"| {whole_size_label(size)} | - | - | no near pair | | "
                              f"{fmt_all(every, 0)} |")
                missing.append(whole_size_label(size))
                continue
            detail.append(pipe_row(whole_size_label(size),
                                   f"{median_of(times(near_index, 'ring', size)):.1f}",
                                   f"{median_of(times(near_index, MPI_ALGORITHM, size)):.1f}",
                                   fmt_ratio(value), fmt_spread(value),
                                   fmt_all(every, value[3])))
            if worst is None or value[0] < worst[0]:
                worst = value + (size,)
        table.append(("ring busbw / mpi busbw, worst size 4..64 MiB", p,
                      worst_text(worst, missing), fmt_spread(None if missing else worst), ">= 1.0",
                      worst is not None and not missing and worst[0] >= 1.0,
                      worst_all and f"{worst_all[0]:.3f}"))

        # 2. fastest hand-written at 8 B .. 1 KiB <= 1.3x mpi.
        small_sizes = [s for s in sizes_of(all_rows) if 8 <= s <= 1024 and modelled is not None]
        detail.append(f"\n### p = {p}: fastest hand-written vs mpi, time ratio, 8 B .. 1 KiB\n")
        lines, worst, worst_all, missing = fastest_against_baseline(
            near_index, all_index, "allreduce", in_order(modelled or (), order), MPI_ALGORITHM,
            small_sizes, SMALL)
        detail.extend(lines)
        if modelled is None:
            table.append((SMALL.target(""), p, "n/a",
                          f"no fit_np{p}_near/models.csv or fit_np{p}/models.csv",
                          SMALL.goal, False, ""))
        else:
            table.append(target_row(SMALL, "", p, worst, worst_all, missing))

        # The collectives' own targets (issue 18), from the binary's listing:
        # at rank counts with a core per rank only.
        if p not in all_rows_at:
            table.extend(collective_targets(listing, all_rows, near_index, all_index, p, detail))

        # 3. measured / bottom-up prediction within 1.25x at >= 1 MiB: the
        # by-size prediction (sendrecv and reduce times at the algorithm's
        # message size) from the near rows is the target; the same from all
        # rows, and the one-line Hockney prediction, are shown next to it.
        predictions = os.path.join(near_fit, "predictions.csv")
        predictions_all = os.path.join(folder, f"fit_np{p}", "predictions.csv")
        by_size_all = {}
        if os.path.exists(predictions_all):
            by_size_all = model_ratios(read_predictions(predictions_all),
                                       "bottom_up_by_size", p)
        if os.path.exists(predictions):
            prediction_rows = read_predictions(predictions)
            by_size = model_ratios(prediction_rows, "bottom_up_by_size", p)
            line = model_ratios(prediction_rows, "bottom_up", p)
            sources, comparison = bottom_up_sources(near_fit, p)
            detail.append(f"\n### p = {p}: measured / bottom-up by size (each exchange at the "
                          "sendrecv time and each byte reduced at the reduce rate measured at "
                          "the algorithm's mean message size, every rank reducing at once "
                          "(local/reduce_all) for ring, recursive_doubling, rabenseifner and "
                          "ps_sharded, rank 0 alone for tree and ps_central, when the run has "
                          f"reduce_all rows; this run, this p; rows with the "
                          f"{near}), sizes >= 1 MiB\n")
            detail.extend(ratio_table(by_size, order))
            detail.append("\nThe same from every row, near and far:\n")
            detail.extend(ratio_table(by_size_all, order))
            origin = ("alpha, beta from sendrecv at this p" if sources and all(sources.values())
                      else "alpha, beta from the ping-pong" if not any(sources.values())
                      else "alpha, beta from sendrecv or ping-pong, per algorithm")
            detail.append(f"\nFor comparison, one Hockney line through every size ({origin}; "
                          "near rows):\n")
            if comparison:
                detail.append(comparison + "\n")
            detail.extend(ratio_table(line, order))
            for algorithm in in_order(by_size, order):
                if algorithm not in by_size:
                    continue
                points = by_size[algorithm]
                off = max(points, key=lambda x: max(x[0], 1 / x[0]))
                every = by_size_all.get(algorithm)
                every_off = every and max(every, key=lambda x: max(x[0], 1 / x[0]))
                table.append((f"{algorithm}: measured / bottom-up model by size, worst size "
                              ">= 1 MiB", p, f"{off[0]:.3f} ({whole_size_label(off[1])})",
                              f"{min(r for r, _ in points):.3f}..{max(r for r, _ in points):.3f}"
                              " over sizes", "0.8..1.25", 1 / 1.25 <= off[0] <= 1.25,
                              every_off and
                              f"{every_off[0]:.3f} ({whole_size_label(every_off[1])})"))
            if not by_size:
                table.append(("measured / bottom-up model by size", p, "n/a",
                              "no bottom_up_by_size rows", "", False, ""))
        else:
            table.append(("measured / bottom-up model", p, "n/a",
                          f"no {os.path.relpath(predictions, folder)}", "", False, ""))

        # 6. mpi at 8 B vs the bare MPI_Allreduce loop.
        value = paired(times(near_index, "mpi", 8), times(near_index, "mpi_bare", 8))
        every = paired(times(all_index, "mpi", 8), times(all_index, "mpi_bare", 8))
        table.append(("harness overhead: mpi / mpi_bare time at 8 B", p, fmt_ratio(value),
                      fmt_spread(value), "0.9..1.1",
                      value is not None and abs(value[0] - 1) <= 0.10,
                      fmt_all(every, value[3] if value else 0)))

    # 4. reduction kernel vs memcpy at 64 MiB (bytes of the vector per second):
    # one process's loop, which the core distance does not touch: every row.
    kernel_files = [(min(runs), runs[min(runs)])]
    for dtype in ("f16", "bf16"):
        path = os.path.join(folder, f"local_{dtype}.csv")
        if os.path.exists(path):
            kernel_files.append((dtype, read_rows(path)))
    for _, rows in kernel_files:
        reduce_rows = [r for r in rows if r["family"] == "local" and r["algorithm"] == "reduce"]
        if not reduce_rows:
            continue
        dtype = reduce_rows[0]["dtype"]
        kernels = time_index(reduce_rows + [r for r in rows if r["algorithm"] == "memcpy"])
        value = paired(times(kernels, "memcpy", 64 * MIB, "local"),
                       times(kernels, "reduce", 64 * MIB, "local"))
        threshold = 0.8 if dtype in ("f32", "f64") else 0.5
        table.append((f"reduce {dtype} (dst += src) rate / memcpy rate at 64 MiB", 1,
                      fmt_ratio(value), fmt_spread(value), f">= {threshold}",
                      value is not None and value[0] >= threshold, "(all rows)"))

    # 5. the allocation test.
    alloc = os.path.join(folder, "alloc.txt")
    if os.path.exists(alloc):
        with open(alloc) as handle:
            lines = handle.read().strip().splitlines()
        ok = bool(lines) and lines[-1].strip() == "PASS"
        table.append(("timed call allocates nothing (tests/alloc_test, inproc + mpi NP 2)", 2,
                      "0 operator new" if ok else "allocations seen", "", "== 0", ok, ""))

    print("\n".join(pipe_head("target", "ranks", f"measured ratio ({near})", "spread", "goal",
                              "result", "all rows, near and far")))
    for target, p, ratio, spread, goal, ok, every in table:
        print(pipe_row(target, p, ratio or "n/a", spread, goal, "pass" if ok else "MISS",
                       every or "n/a"))
    print("\n".join(detail + core_latency(folder)))
