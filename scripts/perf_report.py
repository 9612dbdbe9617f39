#!/usr/bin/python3
"""The issue-8 performance targets, from the files scripts/perf.sh writes.

Usage: scripts/perf_report.py DIR

DIR holds (as scripts/perf.sh leaves them):
  np<P>.csv               collbench: allreduce (all algorithms), mpi_bare, p2p
                          (ping-pong, and sendrecv when --families had it),
                          local; --benchmark_repetitions R; one file per P
  fit_np<P>/predictions.csv   collbench-fit on np<P>.csv (bottom-up rows: by
                          size, the target, and one Hockney line, shown next to it)
  fit_np<P>/models.csv    the same run's fits: which alpha, beta each bottom-up
                          prediction used (sendrecv at P ranks, or ping-pong)
  local_<dtype>.csv       collbench --families local --dtype f16|bf16
  alloc.txt               tests/alloc_test's output; its last line PASS or FAIL
  core_latency.txt        optional: collbench-core-latency around each part of
                          a sweep, 'np=P part=K sizes=S attempt=A before|after
                          cpu_a cpu_b median min max'; np<P>_part<K>_far<A>.csv
                          is an attempt perf.sh measured again

Prints Markdown: the target table (per target and rank count the measured
ratio, its spread, pass or miss), then the per-size detail the ratios come
from. Ratios use, per benchmark, the median over repetitions of each
repetition's median_us; the spread is the lowest..highest ratio of the
repetitions paired by index (Google Benchmark runs one benchmark's
repetitions back to back, so pairing by index is pairing in time order).
Standard library only. Bad input: a line on stderr, exit status 2.
"""

import csv
import glob
import math
import os
import re
import statistics
import sys

MIB = 1 << 20
HAND_WRITTEN = ["ring", "tree", "recursive_doubling", "rabenseifner", "ps_central", "ps_sharded"]


def fail(message):
    print(f"perf_report.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_rows(path):
    try:
        with open(path, newline="") as handle:
            return list(csv.DictReader(handle))
    except OSError as error:
        fail(f"cannot read {path}: {error}")


def times(rows, algorithm, size, family="allreduce"):
    """median_us of every repetition, in repetition order."""
    picked = [r for r in rows if r["family"] == family and r["algorithm"] == algorithm
              and int(r["bytes"]) == size and r["median_us"] and not r.get("workload")]
    picked.sort(key=lambda r: int(r["repetition"] or 0))
    return [float(r["median_us"]) for r in picked]


def paired(numerator, denominator):
    n = min(len(numerator), len(denominator))
    if n == 0:
        return None
    ratios = [numerator[i] / denominator[i] for i in range(n)]
    return statistics.median(numerator) / statistics.median(denominator), min(ratios), max(ratios)


def fmt_ratio(value):
    return "n/a" if value is None else f"{value[0]:.3f}"


def fmt_spread(value):
    return "n/a" if value is None else f"{value[1]:.3f}..{value[2]:.3f}"


def bottom_up_sources(folder, p):
    """algorithm -> True when its bottom-up prediction at p ranks took alpha, beta
    from the sendrecv fit at p ranks (collbench-fit's note says so), False for
    the ping-pong; and the text comparing the two fits' beta, or ""."""
    path = os.path.join(folder, f"fit_np{p}", "models.csv")
    if not os.path.exists(path):
        return {}, ""
    rows = read_rows(path)
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


def model_ratios(rows, model, p):
    """algorithm -> [(measured / predicted, size)] at >= 1 MiB and p ranks,
    sorted by size, from collbench-fit's predictions.csv rows of `model`."""
    by_algorithm = {}
    for r in rows:
        if (r["model"] == model and r["family"] == "allreduce" and r["algorithm"] in HAND_WRITTEN
                and float(r["bytes"]) >= MIB and int(float(r["ranks"])) == p
                and r["measured_us"] and r["predicted_us"]):
            # The fit prints bytes with 6 significant digits; the sizes here
            # are powers of two.
            size = 1 << round(math.log2(float(r["bytes"])))
            by_algorithm.setdefault(r["algorithm"], []).append(
                (float(r["measured_us"]) / float(r["predicted_us"]), size))
    return {a: sorted(v, key=lambda x: x[1]) for a, v in by_algorithm.items()}


def ratio_table(by_algorithm):
    """Markdown lines: one row per algorithm, one column per size."""
    sizes = sorted({b for v in by_algorithm.values() for _, b in v})
    lines = ["| algorithm | " + " | ".join(human(s) for s in sizes) + " |",
             "|---|" + "---|" * len(sizes)]
    for algorithm in HAND_WRITTEN:
        if algorithm in by_algorithm:
            ratio_at = {b: r for r, b in by_algorithm[algorithm]}
            lines.append(f"| {algorithm} | " + " | ".join(
                f"{ratio_at[s]:.2f}" if s in ratio_at else "-" for s in sizes) + " |")
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


def kept_core_distance(folder, p):
    """The largest one-way latency (ns) probed around the parts of the sweep at
    p ranks that np<p>.csv holds (the last attempt of each part), or None."""
    last = {}
    for np, part, _, attempt, _, _, median, _, _ in core_probes(folder):
        if np == p:
            if part not in last or attempt > last[part][0]:
                last[part] = (attempt, [])
            if attempt == last[part][0]:
                last[part][1].append(median)
    return max(max(v) for _, v in last.values()) if last else None


def core_latency(folder):
    """Markdown lines listing every probe of core_latency.txt, or []."""
    probes = core_probes(folder)
    if not probes:
        return []
    lines = ["\n### Core-to-core latency around each part of the sweeps "
             "(collbench-core-latency)\n",
             "| ranks | part (sizes) | attempt | probe | cpus | one-way ns (median) | min..max "
             "| kept |",
             "|---|---|---|---|---|---|---|---|"]
    for np, part, sizes, attempt, when, cpus, median, low, high in probes:
        # perf.sh renames a part it measures again to np<P>_part<K>_far<A>.csv.
        far = f"np{np}_part{part}_far{attempt}.csv"
        kept = f"no: {far}" if os.path.exists(os.path.join(folder, far)) else "yes"
        lines.append(f"| {np} | {part} ({sizes}) | {attempt} | {when} | {cpus} | {median:.1f} | "
                     f"{low}..{high} | {kept} |")
    return lines


def sizes_of(rows, family="allreduce"):
    return sorted({int(r["bytes"]) for r in rows if r["family"] == family})


def human(size):
    for unit, scale in (("MiB", MIB), ("KiB", 1024)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) == 2 else 2)
    folder = sys.argv[1]
    runs = {}
    for path in sorted(glob.glob(os.path.join(folder, "np*.csv"))):
        match = re.fullmatch(r"np(\d+)\.csv", os.path.basename(path))
        if match:
            runs[int(match.group(1))] = read_rows(path)
    if not runs:
        fail(f"no np<P>.csv in {folder}")

    table = []  # (target, ranks, ratio text, spread text, threshold, pass)
    detail = []

    for p, rows in runs.items():
        # 1. ring busbw >= mpi at 4..64 MiB. busbw ratio = time ratio mpi/ring.
        worst = None
        detail.append(f"\n### p = {p}: ring vs mpi, busbw ratio (ring/mpi), 4 MiB .. 64 MiB\n")
        detail.append("| size | ring median us | mpi median us | ratio | spread |")
        detail.append("|---|---|---|---|---|")
        for size in [s for s in sizes_of(rows) if 4 * MIB <= s <= 64 * MIB]:
            value = paired(times(rows, "mpi", size), times(rows, "ring", size))
            if value is None:
                continue
            detail.append(f"| {human(size)} | {statistics.median(times(rows, 'ring', size)):.1f} | "
                          f"{statistics.median(times(rows, 'mpi', size)):.1f} | "
                          f"{fmt_ratio(value)} | {fmt_spread(value)} |")
            if worst is None or value[0] < worst[0]:
                worst = value + (size,)
        table.append(("ring busbw / mpi busbw, worst size 4..64 MiB", p,
                      worst and f"{worst[0]:.3f} ({human(worst[3])})", fmt_spread(worst),
                      ">= 1.0", worst is not None and worst[0] >= 1.0))

        # 2. fastest hand-written at 8 B .. 1 KiB <= 1.3x mpi.
        worst = None
        detail.append(f"\n### p = {p}: fastest hand-written vs mpi, time ratio, 8 B .. 1 KiB\n")
        detail.append("| size | fastest | its median us | mpi median us | ratio | spread |")
        detail.append("|---|---|---|---|---|---|")
        for size in [s for s in sizes_of(rows) if 8 <= s <= 1024]:
            candidates = [(statistics.median(times(rows, a, size)), a) for a in HAND_WRITTEN
                          if times(rows, a, size)]
            if not candidates or not times(rows, "mpi", size):
                continue
            best = min(candidates)[1]
            value = paired(times(rows, best, size), times(rows, "mpi", size))
            detail.append(f"| {human(size)} | {best} | {min(candidates)[0]:.2f} | "
                          f"{statistics.median(times(rows, 'mpi', size)):.2f} | "
                          f"{fmt_ratio(value)} | {fmt_spread(value)} |")
            if worst is None or value[0] > worst[0]:
                worst = value + (size, best)
        table.append(("fastest hand-written time / mpi time, worst size 8 B..1 KiB", p,
                      worst and f"{worst[0]:.3f} ({human(worst[3])}, {worst[4]})",
                      fmt_spread(worst), "<= 1.3", worst is not None and worst[0] <= 1.3))

        # 3. measured / bottom-up prediction within 1.25x at >= 1 MiB: the
        # by-size prediction (sendrecv and reduce times at the algorithm's
        # message size) is the target; the one-line Hockney prediction is
        # shown next to it.
        predictions = os.path.join(folder, f"fit_np{p}", "predictions.csv")
        if os.path.exists(predictions):
            prediction_rows = read_rows(predictions)
            by_size = model_ratios(prediction_rows, "bottom_up_by_size", p)
            line = model_ratios(prediction_rows, "bottom_up", p)
            sources, comparison = bottom_up_sources(folder, p)
            detail.append(f"\n### p = {p}: measured / bottom-up by size (each exchange at the "
                          "sendrecv time and each byte reduced at the reduce rate measured at "
                          "the algorithm's mean message size, this run, this p), sizes >= 1 MiB\n")
            detail.extend(ratio_table(by_size))
            origin = ("alpha, beta from sendrecv at this p" if sources and all(sources.values())
                      else "alpha, beta from the ping-pong" if not any(sources.values())
                      else "alpha, beta from sendrecv or ping-pong, per algorithm")
            detail.append(f"\nFor comparison, one Hockney line through every size ({origin}):\n")
            if comparison:
                detail.append(comparison + "\n")
            detail.extend(ratio_table(line))
            distance = kept_core_distance(folder, p)
            where = "" if distance is None else f" (cores {distance:.0f} ns apart)"
            for algorithm in HAND_WRITTEN:
                if algorithm not in by_size:
                    continue
                points = by_size[algorithm]
                off = max(points, key=lambda x: max(x[0], 1 / x[0]))
                table.append((f"{algorithm}: measured / bottom-up model by size, worst size >= 1 MiB"
                              f"{where}",
                              p, f"{off[0]:.3f} ({human(off[1])})",
                              f"{min(r for r, _ in points):.3f}..{max(r for r, _ in points):.3f}"
                              " over sizes", "0.8..1.25", 1 / 1.25 <= off[0] <= 1.25))
            if not by_size:
                table.append(("measured / bottom-up model by size", p, "n/a",
                              "no bottom_up_by_size rows", "", False))
        else:
            table.append(("measured / bottom-up model", p, "n/a", "no predictions.csv", "", False))

        # 6. mpi at 8 B vs the bare MPI_Allreduce loop.
        value = paired(times(rows, "mpi", 8), times(rows, "mpi_bare", 8))
        table.append(("harness overhead: mpi / mpi_bare time at 8 B", p, fmt_ratio(value),
                      fmt_spread(value), "0.9..1.1",
                      value is not None and abs(value[0] - 1) <= 0.10))

    # 4. reduction kernel vs memcpy at 64 MiB (bytes of the vector per second).
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
        value = paired(times(rows, "memcpy", 64 * MIB, "local"),
                       times(rows, "reduce", 64 * MIB, "local"))
        threshold = 0.8 if dtype in ("f32", "f64") else 0.5
        table.append((f"reduce {dtype} (dst += src) rate / memcpy rate at 64 MiB", 1,
                      fmt_ratio(value), fmt_spread(value), f">= {threshold}",
                      value is not None and value[0] >= threshold))

    # 5. the allocation test.
    alloc = os.path.join(folder, "alloc.txt")
    if os.path.exists(alloc):
        with open(alloc) as handle:
            lines = handle.read().strip().splitlines()
        ok = bool(lines) and lines[-1].strip() == "PASS"
        table.append(("timed call allocates nothing (tests/alloc_test, inproc + mpi NP 2)", 2,
                      "0 operator new" if ok else "allocations seen", "", "== 0", ok))

    print("| target | ranks | measured ratio | spread | goal | result |")
    print("|---|---|---|---|---|---|")
    for target, p, ratio, spread, goal, ok in table:
        print(f"| {target} | {p} | {ratio or 'n/a'} | {spread} | {goal} | "
              f"{'pass' if ok else 'MISS'} |")
    print("\n".join(detail + core_latency(folder)))


if __name__ == "__main__":
    main()
