"""The main job's report: RUN/report.md, answers first.

Usage: scripts/report.py RUN [--cores N] [--predict COLLBENCH_PREDICT
                             [--scaling-model MODEL]] [--elapsed-seconds S]

RUN is a run folder of scripts/run.sh. report.py reads, and never
re-derives:
  - collbench.csv (the rows: ranks, ranks per host, the exchanges),
  - machine.txt (the cores the rows ran on; --cores N stands in for it, e.g.
    for a run folder made before machine.txt),
  - fit/models.csv and fit/selections.csv (collbench-fit),
  - scaling/scaling.csv, which --predict writes first: collbench-predict
    for MODEL (default resnet50) at a global batch of 256 with DDP buckets
    overlapped with backprop, on links like this run's (its p2p fit), compute
    assumed at 10 TFLOP/s per node (measured compute is issue 19's); its
    console output goes to scaling/predict.txt. Without --predict an
    earlier scaling/ is read, and the section left out when there is none.
report.md opens with the answers:
  1. the network's alpha, beta and gamma with their fit quality;
  2. per collective, the best algorithm per size range (collbench-fit's
     measured selection: an algorithm replaces the previous one only where
     the interquartile ranges over repetitions do not overlap), each
     boundary's margin, and how much faster it is than the MPI library;
  3. the time of one training iteration's exchange per workload;
  4. a scaling prediction for one model;
  in a run with the library's forced algorithms (ompi_*, mpich_* rows), a
  Tuning section after 2: per collective, rank count and size the library's
  default, its best forced algorithm, collbench's best, and, where RUN/tuning/
  has without.csv and with.csv (the default's rows in interleaved launches
  without and with the exported tuning file), the time the file saves;
then the details: the model errors and links to the tables and plots.
Where the rows of a rank count ran with more ranks per host than the host
has cores, the report says so first, and every fit, model error, selection
and prediction made from those rows is marked "not meaningful (ranks share
cores)": a rank waiting for a core is not a cost the models have a term for.
Where other work kept more than 0.10 of a core busy during a benchmark
(collbench.csv's `loaded`), the report opens with a warning naming how much
and which rows, sizes and figures; a quiet run has none.
Every input is checked before anything is written (each file as the CSV
readers check theirs, each value the report uses); then report.md and
scaling/ are replaced together, and a failed prediction replaces an earlier
scaling/ too, so that none passes for this run's. Standard library only.
Bad input: one line on stderr, exit status 2.
"""

import math
import os
import shutil
import subprocess
import tempfile
from collections import defaultdict

from collbench_report.cli import OptionParser
from collbench_report.outputs import ReplaceTogether, replace_folder, writable_folder
from collbench_report.readers import (COLUMN_RULES, MPI_ALGORITHM, InputError, median_per_key,
                                      option_number, read_settings, read_table)
from collbench_report.text import format_bytes, format_time, percent, table

NOT_MEANINGFUL = "not meaningful (ranks share cores)"
ROW_COLUMNS = ["family", "collective", "algorithm", "ranks", "ranks_per_node", "workload",
               "bytes", "median_us", "run_id", "git_rev", "mpi_library"]
MODEL_COLUMNS = ["model", "family", "algorithm", "ranks", "alpha_us", "beta_GBps", "gamma_GBps",
                 "alpha_rel_stderr", "beta_rel_stderr", "gamma_rel_stderr", "r2_log",
                 "median_rel_err", "dtype", "op"]
SELECTION_COLUMNS = ["collective", "transport", "provider", "placement", "dtype", "op",
                     "ranks", "bytes", "chosen", "chosen_median_us", "boundary", "previous",
                     "margin", "gap", "mpi_median_us"]
SCALING_COLUMNS = ["model", "algorithm", "nodes", "speedup", "efficiency", "compute_s_1node",
                   "batch", "network"]
# The values report.py computes with, in collbench_csv.COLUMN_RULES' form
# (whole, lowest, lowest included, unit[, highest]): checked wherever they
# are not empty, so that a damaged file is refused in one line.
ANY = -math.inf
MODEL_RULES = {
    "alpha_us": (False, ANY, True, "µs"),
    "beta_GBps": (False, 0, False, "GB/s"),
    "gamma_GBps": (False, 0, False, "GB/s"),
    "alpha_rel_stderr": (False, 0, True, "the value"),
    "beta_rel_stderr": (False, 0, True, "the value"),
    "gamma_rel_stderr": (False, 0, True, "the value"),
    "r2_log": (False, ANY, True, "", 1),
    "median_rel_err": (False, 0, True, "the value"),
}
SELECTION_RULES = {
    **{column: COLUMN_RULES[column] for column in ("ranks", "bytes")},
    "chosen_median_us": (False, 0, False, "µs"),
    "mpi_median_us": (False, 0, False, "µs"),
    "margin": (False, 0, False, "the value"),
    "gap": (False, 0, False, "the value"),
    "boundary": (True, 0, True, "", 1),
}
SCALING_RULES = {
    "nodes": (True, 1, True, "nodes"),
    "speedup": (False, 0, True, "the value"),
    "efficiency": (False, 0, True, "the value"),
    "compute_s_1node": (False, 0, False, "s"),
    "batch": (False, 0, False, "samples"),
}


def require(rows, columns, path, when=lambda row: True):
    """InputError unless every row for which when(row) holds has `columns`."""
    for index, row in enumerate(rows, start=1):
        if when(row):
            for column in columns:
                if row[column] == "":
                    raise InputError(f"{path}: data row {index}: {column} is empty")


class Machine:
    """The cores the rows ran on and which rank counts shared them."""

    def __init__(self, cores, rows, path):
        self.cores = cores
        # rank count -> the most ranks a host held at that count
        self.per_host = defaultdict(int)
        require(rows, ["ranks", "ranks_per_node"], path)
        for row in rows:
            ranks = int(float(row["ranks"]))
            self.per_host[ranks] = max(self.per_host[ranks], int(float(row["ranks_per_node"])))

    def shared(self, ranks):
        """Whether the rows of `ranks` ranks had more ranks on a host than cores."""
        return self.per_host.get(ranks, ranks) > self.cores

    def shared_in(self, rank_list):
        """The same for a models.csv `ranks` cell: a ';' list of rank counts
        (checked when models.csv is read)."""
        return any(self.shared(int(r)) for r in rank_list.split(";"))

    def oversubscribed(self):
        return sorted(r for r in self.per_host if self.shared(r))


def oversubscription_warning(machine):
    counts = machine.oversubscribed()
    if not counts:
        return []
    described = ", ".join(f"{r} ranks ({machine.per_host[r]} per host)" for r in counts)
    return [f"> **Warning: ranks shared cores.** The rows of {described} ran on hosts of "
            f"{cores_text(machine.cores)}, so ranks took turns on a core and their times "
            "include waiting for it. Every fit, model error, selection and prediction made "
            f"from those rows is marked *{NOT_MEANINGFUL}*. Run with NP={machine.cores} (or "
            "fewer) to give each rank a core.", ""]


# What a loaded row's family feeds in report.md: the figures its times enter.
LOADED_FIGURES = {
    "p2p": "the network's α and β",
    "local": "the network's γ",
    "exchange": "one training iteration's exchange",
    "train": "one training iteration",
}


def load_warning(rows):
    """The warning report.md opens with when other work kept more than 0.10
    of a core busy during any benchmark (collbench.csv's `loaded`): how much,
    and which rows, sizes and figures; nothing for a quiet run, or rows that
    carry no load columns (--transport sim, a CSV from before them)."""
    loaded = [row for row in rows if row.get("loaded") == "yes"]
    if not loaded:
        return []
    measured = [row for row in rows if row.get("loaded") in ("yes", "no")]
    other = [float(row["other_cores"] or 0) for row in loaded]
    steal = max(float(row["steal_cores"] or 0) for row in loaded)
    groups = {}
    for row in loaded:
        what = row["collective"] or row["family"]
        groups.setdefault((what, row["family"]), []).append(row)
    lines = []
    for (what, family), members in sorted(groups.items()):
        algorithms = ", ".join(dict.fromkeys(row["algorithm"] for row in members))
        sizes = sorted({int(float(row["bytes"])) for row in members})
        workloads = sorted({row["workload"] for row in members if row["workload"]})
        where = (", ".join(workloads) if family in ("exchange", "train")
                 else size_span(sizes[0], sizes[-1]) + f" ({len(sizes)} sizes)")
        figure = LOADED_FIGURES.get(family, f"the best {what} algorithm per size and its fit")
        lines.append(f"> - {what} {algorithms}: {where}; in {figure}")
    stolen = f", {steal:.2f} cores stolen by the hypervisor" if steal > 0 else ""
    return [f"> **Warning: the machine was loaded.** Other work kept {min(other):.2f} to "
            f"{max(other):.2f} cores busy{stolen} in {len(loaded)} of the run's {len(measured)} "
            "rows (more than 0.10 of a core during the benchmark: collbench.csv's `loaded`), so "
            "their times are not this machine's quiet ones, nor are the figures made from them:",
            ">",
            *lines, ">",
            "> Run again with nothing else running before trusting those figures.", ""]


def cores_text(count):
    return f"{count} core{'s' if count != 1 else ''}"


def network_section(models, machine):
    """alpha, beta and gamma with their fit quality, one line per fit."""
    lines = []
    for row in models:
        shared = machine.shared_in(row["ranks"])
        quality = (f"R² (log) {float(row['r2_log']):.3f}, median error "
                   f"{percent(row['median_rel_err'])}" if row["r2_log"] else "–")
        if row["family"] == "p2p" and row["alpha_us"] and row["beta_GBps"]:
            what = {"pingpong": "ping-pong (rank 0 and one peer)",
                    "sendrecv": "sendrecv (every rank at once)"}.get(row["algorithm"],
                                                                  row["algorithm"])
            lines.append([what, f"α {float(row['alpha_us']):.3g} µs "
                          f"(±{percent(row['alpha_rel_stderr'])})",
                          f"β {float(row['beta_GBps']):.4g} GB/s "
                          f"(±{percent(row['beta_rel_stderr'])})",
                          quality + (f"; {NOT_MEANINGFUL}" if shared else "")])
        elif row["model"] == "reduce_gamma" and row["gamma_GBps"]:
            lines.append([f"local {row['algorithm']} {row['dtype']} {row['op']}", "",
                          f"γ {float(row['gamma_GBps']):.4g} GB/s "
                          f"(±{percent(row['gamma_rel_stderr'])})",
                          quality + (f"; {NOT_MEANINGFUL}" if shared else "")])
    if not lines:
        return ["## The network", "", "collbench-fit found no p2p or reduce fit in this run.", ""]
    return ["## The network: α, β, γ", "",
            "Fitted by collbench-fit to this run's rows (± the relative standard error; "
            "fit/models.csv).", "",
            table(["measured by", "latency", "rate", "fit quality"], lines,
                  ["l", "r", "r", "l"]), ""]


def size_span(first, last):
    if first == last:
        return format_bytes(first)
    return f"{format_bytes(first)} – {format_bytes(last)}"


def ratio_span(low, high):
    return f"{low:.2f}×" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}–{high:.2f}×"


def selection_ranges(rows):
    """The consecutive sizes of one selection with one chosen algorithm:
    [(first bytes, last bytes, chosen, [selection rows])]."""
    ranges = []
    for row in rows:
        if ranges and ranges[-1][2] == row["chosen"]:
            ranges[-1][1] = row["bytes"]
            ranges[-1][3].append(row)
        else:
            ranges.append([row["bytes"], row["bytes"], row["chosen"], [row]])
    return ranges


def boundary_text(row):
    if row["boundary"] != "1":
        return ""
    return (f"{float(row['margin']):.3f}× faster than {row['previous']} "
            f"(IQRs {float(row['gap']):.3f}× apart)")


def names_in(members, column):
    """The names of a `;`-separated column over a range's rows, in order, once."""
    names = []
    for row in members:
        for name in filter(None, (row.get(column) or "").split(";")):
            if name not in names:
                names.append(name)
    return names


def ties_text(members):
    """The algorithms within noise of the fastest somewhere in the choice's
    range (selections.csv's ties), or "–"."""
    return ", ".join(names_in(members, "ties")) or "–"


def chosen_text(chosen, members, ranks):
    """The choice, with its equivalents within noise somewhere in its range
    (selections.csv's same): "recursive_doubling (= swing_latency at p = 2)"."""
    same = names_in(members, "same")
    return f"{chosen} (= {', '.join(same)} at p = {ranks})" if same else chosen


def plot_links(run, prefixes, ranks):
    """A line of links to RUN's plots whose names start with one of `prefixes`
    at `ranks` ranks, as plot.py names them (sweep_allreduce_mpi_p2_f32.png,
    fit/fit_allreduce_mpi_intra_f32_sum_p2.png, exchange_mpi_p2.png)."""
    found = []
    for folder in ("", "fit"):
        path = os.path.join(run, folder)
        if os.path.isdir(path):
            found += [os.path.join(folder, f) for f in sorted(os.listdir(path))
                      if f.startswith(tuple(prefixes)) and f.endswith(".png")
                      and (f"_p{ranks}_" in f or f.endswith(f"_p{ranks}.png"))]
    return ["Plots: " + ", ".join(f"[{f}]({f})" for f in found), ""] if found else []


def selection_section(run, selections, machine):
    """Per selection: the chosen algorithm per size range, the boundary's
    margin, and the chosen algorithm's speedup over the MPI library's."""
    groups = defaultdict(list)
    for row in selections:
        if not row["chosen"]:
            continue
        row = dict(row)
        row["bytes"] = int(row["bytes"])
        row["chosen_median_us"] = float(row["chosen_median_us"])
        row["mpi_median_us"] = float(row["mpi_median_us"]) if row["mpi_median_us"] else math.nan
        key = (row["collective"], row["transport"], row["provider"], row["placement"],
               row["dtype"], row["op"], int(row["ranks"]))
        groups[key].append(row)
    out = ["## The best algorithm per size, against the MPI library", "",
           "collbench-fit's measured selection (fit/selections.csv): at each size the "
           "first algorithm in table order within noise whose median over repetitions is "
           "within the tie tolerance of the lowest; algorithms with the same cost terms at "
           "this rank count are one choice, named after the first within noise (\"= ...\"). "
           "Within noise: no algorithm's interquartile range, raised by the tie tolerance, "
           "lies wholly below its own. "
           "*tie with*: the other algorithms within noise somewhere in the sizes (a run "
           "choosing one of them instead has not flipped). *vs mpi*: the MPI library's "
           "median over the chosen one's (> 1: faster than the library; < 1: the library's "
           "median is lower). The library's `mpi` is the baseline, not a candidate: the choice "
           "is among collbench's own algorithms, and fit/selections.csv's `mpi_verdict` says "
           "where `mpi` is faster than it beyond noise.", ""]
    if not groups:
        out += ["collbench-fit made no selection from this run's rows.", ""]
    for (collective, transport, provider, placement, dtype, op, ranks), rows in groups.items():
        rows.sort(key=lambda r: r["bytes"])
        shared = machine.shared(ranks)
        lines = []
        for first, last, chosen, members in selection_ranges(rows):
            speedups = [r["mpi_median_us"] / r["chosen_median_us"] for r in members
                        if r["mpi_median_us"] > 0 and r["chosen_median_us"] > 0]
            vs_mpi = ratio_span(min(speedups), max(speedups)) if speedups else "–"
            lines.append([size_span(first, last), chosen_text(chosen, members, ranks),
                          ties_text(members), vs_mpi,
                          boundary_text(members[0])])
        where = f"{transport}{'/' + provider if provider else ''} {placement}".strip()
        title = f"### {collective}: {where}, {ranks} ranks, {dtype}{' ' + op if op else ''}"
        out += [title + (f" — {NOT_MEANINGFUL}" if shared else ""), "",
                table(["sizes", "algorithm", "tie with", "vs mpi", "where it takes over"], lines,
                      ["l", "l", "l", "r", "l"]), ""]
        out += plot_links(run, [f"sweep_{collective}_{transport}_",
                                f"fit_{collective}_{transport}_"], ranks)
    return out


# The rows of the library's own collective with one of its algorithms
# forced (collbench --library-algorithms): Open MPI's and MPICH's.
LIBRARY_ROW_PREFIXES = ("ompi_", "mpich_")


def read_tuning_launches(run):
    """RUN/tuning/without.csv and with.csv: the library's default (mpi) in
    launches without and with the exported tuning file, interleaved; per
    (collective, ranks, bytes) the median over launches of each launch's
    median (by run_id). None when the run has neither."""
    folder = os.path.join(run, "tuning")
    paths = [os.path.join(folder, f"{name}.csv") for name in ("without", "with")]
    if not any(os.path.lexists(path) for path in paths):
        return None
    launches = []
    for path in paths:
        if not os.path.lexists(path):
            raise InputError(f"{path}: missing, while {folder} has its counterpart (the "
                             "with/without comparison needs both)")
        rows = [r for r in read_table(path, ROW_COLUMNS, "report.py")[1]
                if r["algorithm"] == MPI_ALGORITHM and r["median_us"]]
        per_launch = median_per_key(rows, lambda r: (r["family"], int(r["ranks"]),
                                                     int(float(r["bytes"])), r["run_id"]))
        by_point = defaultdict(list)
        for (family, ranks, size, _), median in per_launch.items():
            by_point[(family, ranks, size)].append(median)
        launches.append({key: (sorted(v)[len(v) // 2], len(v)) for key, v in by_point.items()})
    return launches


def tuning_section(run, rows, machine):
    """For a run with the library's forced algorithms: per collective, rank
    count and size, the library's default, its best forced algorithm,
    collbench's best, and what the exported file saves (RUN/tuning/)."""
    if not any(r["algorithm"].startswith(LIBRARY_ROW_PREFIXES) for r in rows):
        return []
    measured = [r for r in rows if r["median_us"] and r["family"] != "exchange"]
    times = median_per_key(measured, lambda r: (r["family"], int(r["ranks"]),
                                                int(float(r["bytes"])), r["algorithm"]))
    per = defaultdict(dict)
    for (family, ranks, size, algorithm), median in times.items():
        per[(family, ranks, size)][algorithm] = median
    launches = read_tuning_launches(run)
    lines = []
    for (family, ranks, size), by_algorithm in sorted(per.items()):
        forced = {a: t for a, t in by_algorithm.items() if a.startswith(LIBRARY_ROW_PREFIXES)}
        if not forced:
            continue
        own = {a: t for a, t in by_algorithm.items()
               if a != MPI_ALGORITHM and a not in forced}
        default = by_algorithm.get(MPI_ALGORITHM)
        best_forced = min(forced, key=forced.get)
        best_own = min(own, key=own.get) if own else None
        saved = "–"
        if launches is not None:
            without, with_file = (launch.get((family, ranks, size)) for launch in launches)
            if without and with_file:
                saved = (f"{format_time(without[0])} → {format_time(with_file[0])} "
                         f"({(without[0] - with_file[0]) / without[0]:+.0%} saved, "
                         f"{min(without[1], with_file[1])} launch pairs)")
        lines.append([family, str(ranks), format_bytes(size),
                      format_time(default) if default else "–",
                      f"{best_forced} {format_time(forced[best_forced])}",
                      f"{best_own} {format_time(own[best_own])}" if best_own else "–",
                      saved, NOT_MEANINGFUL if machine.shared(ranks) else ""])
    tail = (["*file*: the library's default (mpi) without → with the exported tuning file, "
             "median over interleaved launches (RUN/tuning/without.csv, with.csv)."]
            if launches is not None else
            ["*file*: not measured in this run. Export the file (collbench-fit "
             "collbench.csv --export ompi-rules FILE, or mpich-json) and put the default's "
             "rows of interleaved launches without and with it in RUN/tuning/without.csv and "
             "with.csv (results/tuning/README.md has the commands)."])
    return (["## Tuning", "",
             "The MPI library's own collective: its default choice (mpi), its fastest "
             "algorithm forced one by one (ompi_*, mpich_*: --library-algorithms), "
             "collbench's fastest algorithm, medians over repetitions.", "",
             table(["collective", "ranks", "size", "library default", "library's best",
                    "collbench's best", "file", "note"], lines,
                   ["l", "r", "r", "r", "l", "l", "l", "l"]), ""] + tail + [""])


def exchange_section(run, rows, machine):
    """Per workload and rank count: the fastest algorithm's time per iteration
    and the MPI library's."""
    exchanges = [r for r in rows if r["family"] == "exchange" and r["median_us"]]
    if not exchanges:
        return []
    times = median_per_key(exchanges, lambda r: (r["workload"], int(r["ranks"]), r["algorithm"]))
    per = defaultdict(dict)
    for (workload, ranks, algorithm), median in times.items():
        per[(workload, ranks)][algorithm] = median
    bytes_of = {r["workload"]: int(float(r["bytes"])) for r in exchanges}
    lines = []
    for (workload, ranks), by_algorithm in sorted(per.items()):
        fastest = min(by_algorithm, key=by_algorithm.get)
        mpi = by_algorithm.get(MPI_ALGORITHM)
        lines.append([workload, str(ranks), format_bytes(bytes_of[workload]), fastest,
                      format_time(by_algorithm[fastest]),
                      format_time(mpi) if mpi else "–",
                      f"{mpi / by_algorithm[fastest]:.2f}×" if mpi else "–",
                      NOT_MEANINGFUL if machine.shared(ranks) else ""])
    return (["## One training iteration's exchange, per workload", "",
            "Every message of one iteration in order (DDP's buckets, FSDP's allgathers and "
            "reduce_scatters, tensor parallelism's allreduces, MoE's alltoallvs), each by "
            "the algorithm named; median over repetitions (summary.md: every algorithm).", "",
            table(["workload", "ranks", "bytes per iteration", "fastest", "time", "mpi",
                   "mpi / fastest", "note"], lines, ["l", "r", "r", "l", "r", "r", "r", "l"]), ""]
            + [line for ranks in sorted({ranks for _, ranks in per})
               for line in plot_links(run, ["exchange_"], ranks)])


def train_section(run, rows, machine):
    """Per workload and rank count: one training iteration with its exchange
    overlapped (collbench --families train), against the compute alone and
    the exchange alone."""
    trains = [r for r in rows if r["family"] == "train" and r["median_us"]]
    if not trains:
        return []
    key = lambda r: (r["workload"], int(r["ranks"]), r["algorithm"])  # noqa: E731
    iteration = median_per_key(trains, key)
    shares = {column: median_per_key([r for r in trains if r.get(column, "") != ""], key, column)
              for column in ("communication_us", "exposed_us", "overlap")}
    spread = {(r["workload"], int(r["ranks"])): float(r["max_us"]) - float(r["min_us"])
              for r in trains if r["algorithm"] == "none"}
    lines = []
    for (workload, ranks, algorithm), median in iteration.items():
        if algorithm == "none":
            lines.append([workload, str(ranks), "none (compute alone)", format_time(median),
                          "–", "–", "–", NOT_MEANINGFUL if machine.shared(ranks) else ""])
            continue
        communication = shares["communication_us"].get((workload, ranks, algorithm))
        if communication is None:
            continue
        exposed = shares["exposed_us"][(workload, ranks, algorithm)]
        overlap = shares["overlap"][(workload, ranks, algorithm)]
        note = (NOT_MEANINGFUL if machine.shared(ranks) else
                "communication below the compute's spread" if
                communication < spread.get((workload, ranks), 0) else "")
        exposed_text = ("−" if exposed < 0 else "") + format_time(abs(exposed))
        lines.append([workload, str(ranks), algorithm, format_time(median),
                      format_time(communication), exposed_text, f"{overlap:.2f}", note])
    timeline = (["One iteration of each, as Chrome trace JSON (chrome://tracing, Perfetto): "
                 "[timeline.json](timeline.json)"]
                + [f"![{f}]({f})" for f in sorted(os.listdir(run))
                   if f.startswith("timeline_") and f.endswith(".png")] + [""]
                if os.path.exists(os.path.join(run, "timeline.json")) else [])
    return (["## One training iteration: how much of the exchange hides behind backprop", "",
             "collbench --families train: the GEMM layers forward, then backward last layer "
             "first, each DDP bucket allreduced on a communication thread as soon as its "
             "gradients exist; *exposed* is the iteration minus the compute alone "
             "(train/none), *hidden* 1 − exposed / the exchange alone (1: all of it hid; "
             "below 0: exchanging also slowed the compute). Where the exchange alone is "
             "shorter than the compute's own spread over samples, the hidden share is noise.",
             "",
             table(["workload", "ranks", "algorithm", "iteration", "exchange alone", "exposed",
                    "hidden", "note"], lines, ["l", "r", "l", "r", "r", "r", "r", "l"]), ""]
            + timeline)


# The scaling scenario of the report; `--network-from` and `--out-dir` are
# added per run.
PREDICT_FLAGS = ["--batch", "256", "--flops-per-second", "1e13", "--placement", "intra",
                 "--overlap-buckets", "--max-nodes", "256"]


def predict_scaling(run, predict, model):
    """Runs collbench-predict into a new hidden folder of RUN, which replaces
    RUN/scaling/ once the report is written: (folder, None), or (folder, the
    first line of its output) when it failed."""
    folder = tempfile.mkdtemp(prefix=".scaling.", dir=run)
    command = [predict, "--model", model, *PREDICT_FLAGS, "--network-from",
               os.path.join(run, "fit", "models.csv"), "--out-dir", folder]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as error:
        shutil.rmtree(folder)
        raise InputError(f"--predict {predict}: {error.strerror}") from error
    with open(os.path.join(folder, "predict.txt"), "w", encoding="utf-8") as handle:
        handle.write(done.stdout + done.stderr)
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().split("\n")
        return folder, lines[0] or f"exit status {done.returncode}"
    return folder, None


def read_scaling(path):
    """scaling.csv's rows, checked; None when there is no such file."""
    if not os.path.exists(path):
        return None
    rows = read_table(path, SCALING_COLUMNS, "report.py", rules=SCALING_RULES)[1]
    if not rows:
        raise InputError(f"{path}: no rows")
    require(rows, SCALING_COLUMNS, path)
    return rows


def scaling_section(rows, machine, models):
    """Per algorithm: the peak speedup and where efficiency falls below 50%."""
    if rows is None:
        return []
    curves = defaultdict(list)
    for row in rows:
        curves[row["algorithm"]].append((int(row["nodes"]), float(row["speedup"]),
                                         float(row["efficiency"])))
    first = rows[0]
    shared = any(machine.shared_in(m["ranks"]) for m in models if m["family"] == "p2p")
    lines = []
    for algorithm, points in curves.items():
        points.sort()
        peak = max(points, key=lambda p: p[1])
        below = next((p[0] for p in points if p[2] < 0.5), None)
        lines.append([algorithm, f"{peak[1]:.1f} at {peak[0]} nodes",
                      f"from {below} nodes" if below else f"never up to {points[-1][0]} nodes"])
    return ["## How far training scales on such links", "",
            f"collbench-predict (scaling/predict.txt): model {first['model']}, global "
            f"batch {first['batch']}, DDP buckets overlapped with backprop; the network is "
            f"this run's p2p fit (fit/models.csv, {first['network'].split()[-1]}); compute "
            f"{float(first['compute_s_1node']):.3g} s "
            "per iteration on one node, assumed (10 TFLOP/s per node), not measured."
            + (f" The network fit is {NOT_MEANINGFUL}." if shared else ""), "",
            table(["algorithm", "peak speedup", "efficiency below 50%"], lines,
                  ["l", "r", "r"]), ""]


ERROR_MODELS = ("bottom_up", "bottom_up_by_size", "top_down")  # models.csv's, in column order


def model_error_section(models, machine):
    """Median relative error of each algorithm's predictions."""
    errors = defaultdict(dict)
    for row in models:
        if row["model"] in ERROR_MODELS:
            key = (row["family"], row["algorithm"], row["transport"], row["provider"],
                   row["placement"], row["dtype"], row["op"], row["ranks"])
            errors[key][row["model"]] = row["median_rel_err"]
    lines = []
    for key, by_model in errors.items():
        family, algorithm, transport, provider, placement, dtype, op, ranks = key
        shared = machine.shared_in(ranks)
        where = (f"{transport}{'/' + provider if provider else ''} {placement}, "
                 f"{ranks.replace(';', ', ')} ranks, {dtype}{' ' + op if op else ''}")
        lines.append([family, algorithm, where]
                     + [NOT_MEANINGFUL if shared and by_model.get(m) else
                        percent(by_model.get(m, "")) for m in ERROR_MODELS])
    if not lines:
        return []
    return ["### Model errors", "",
            "Median relative error of collbench-fit's predictions against the measured times: "
            "*bottom-up* from the α-β-γ terms above, *by size* pricing each step at the "
            "measured sendrecv and reduce times of its size, *top-down* each algorithm's own "
            "fit (fit/models.csv, fit/predictions.csv).", "",
            table(["collective", "algorithm", "where", "bottom-up", "bottom-up by size",
                   "top-down"], lines, ["l", "l", "l", "r", "r", "r"]), ""]


def detail_links(run, scaling):
    """Links to RUN's files; `scaling`: the folder that is, or is about to
    become, RUN/scaling/."""
    files = sorted(f for f in os.listdir(run)
                   if f.endswith((".png", ".csv", ".md", ".txt", ".json"))
                   and f != "report.md")
    plots = sorted(f for f in os.listdir(os.path.join(run, "fit"))
                   if f.endswith(".png")) if os.path.isdir(os.path.join(run, "fit")) else []
    scaling = [f"scaling/{f}" for f in ("scaling.csv", "predict.txt")
               if os.path.exists(os.path.join(scaling, f))]
    return (["### Files", ""] + [f"- [{f}]({f})" for f in files + scaling]
            + [f"- [fit/{f}](fit/{f})" for f in plots] + [""])


def header(rows, facts, machine, elapsed):
    first = rows[0]
    mode = facts.get("mode", "")
    minutes, seconds = divmod(int(elapsed or 0), 60)
    took = ("" if elapsed is None else
            f"; took {minutes} min {seconds} s" if minutes else f"; took {seconds} s")
    host = facts.get("host", "this host")
    numa = f", {facts['numa_nodes']} NUMA node(s)" if "numa_nodes" in facts else ""
    rank_counts = ", ".join(f"{r} ({machine.per_host[r]} per host)"
                            for r in sorted(machine.per_host))
    return [f"# collbench run {first['run_id']}", "",
            f"{host}: {cores_text(machine.cores)}{numa}; ranks {rank_counts}"
            f"{', bound a core each' if facts.get('binding') == 'core' else ''}. "
            f"{mode.capitalize() + ' run' if mode else 'Run'} of collbench {first['git_rev']} on "
            f"{first['mpi_library']}{took}.", ""]


class Inputs:
    """Every file the report reads, checked before anything is written."""

    def __init__(self, run, cores):
        csv_path = os.path.join(run, "collbench.csv")
        self.rows = read_table(csv_path, ROW_COLUMNS, "report.py")[1]
        if not self.rows:
            raise InputError(f"{csv_path}: no rows")
        runs = list(dict.fromkeys(row["run_id"] for row in self.rows))
        if len(runs) > 1:
            # The header names one run, its revision and MPI library.
            raise InputError(f"{csv_path}: rows of {len(runs)} runs ({', '.join(runs)}); "
                             "report.py reports one run: keep one run's rows (scripts/run.sh "
                             "writes each run into a folder of its own)")
        machine_path = os.path.join(run, "machine.txt")
        self.facts = read_settings(machine_path, ":") if os.path.lexists(machine_path) else {}
        if cores is None:
            if "cores" not in self.facts:
                raise InputError(f"{run}: no machine.txt with 'cores: N'; give --cores N, the "
                                 "cores per host the run had")
            cores = option_number(self.facts["cores"], f"{machine_path}: cores", 1, 1 << 20,
                                  whole=True)
        self.machine = Machine(cores, self.rows, csv_path)
        models_path = os.path.join(run, "fit", "models.csv")
        self.models = read_table(models_path, MODEL_COLUMNS, "report.py", MODEL_RULES)[1]
        for index, row in enumerate(self.models, start=1):
            for count in row["ranks"].split(";"):
                option_number(count, f"{models_path}: data row {index}: ranks", 1, 1e9,
                              whole=True)
        selections_path = os.path.join(run, "fit", "selections.csv")
        self.selections = read_table(selections_path, SELECTION_COLUMNS, "report.py",
                                     SELECTION_RULES)[1]
        require(self.selections, ["ranks", "bytes", "chosen_median_us"], selections_path,
                when=lambda row: row["chosen"] != "")
        require(self.selections, ["previous", "margin", "gap"], selections_path,
                when=lambda row: row["boundary"] == "1")


def report(run, inputs, elapsed, scaling, scaling_rows, predict_failure=None):
    machine = inputs.machine
    return "\n".join(
        header(inputs.rows, inputs.facts, machine, elapsed)
        + oversubscription_warning(machine)
        + load_warning(inputs.rows)
        + network_section(inputs.models, machine)
        + selection_section(run, inputs.selections, machine)
        + tuning_section(run, inputs.rows, machine)
        + exchange_section(run, inputs.rows, machine)
        + train_section(run, inputs.rows, machine)
        + (["## How far training scales on such links", "",
            f"collbench-predict failed: {predict_failure} (scaling/predict.txt)", ""]
           if predict_failure else scaling_section(scaling_rows, machine, inputs.models))
        + ["## Detail", "",
           "summary.md: every algorithm against mpi per size and per workload, the "
           "libfabric comparisons, collbench-fit's brief report.", ""]
        + model_error_section(inputs.models, machine)
        + detail_links(run, scaling))


def main(argv):
    parser = OptionParser(prog="report.py", description=__doc__.split("\n")[0],
                                     epilog="See the top of scripts/collbench_report/report.py.")
    parser.add_argument("run", help="a run folder of scripts/run.sh")
    parser.add_argument("--cores", help="cores per host the run had (default: machine.txt's)")
    parser.add_argument("--predict", help="collbench-predict, to run for the scaling section")
    parser.add_argument("--scaling-model", default="resnet50",
                        help="catalog model of the scaling section (default resnet50)")
    parser.add_argument("--elapsed-seconds", help="how long the run took, for the header")
    args = parser.parse_args(argv[1:])
    if not os.path.isdir(args.run):
        raise InputError(f"{args.run} is not a folder (expected a run folder of scripts/run.sh)")
    cores = (None if args.cores is None
             else option_number(args.cores, "--cores", 1, 1 << 20, whole=True))
    elapsed = (None if args.elapsed_seconds is None
               else option_number(args.elapsed_seconds, "--elapsed-seconds", 0, 1e9))
    inputs = Inputs(args.run, cores)
    writable_folder(args.run, "RUN")
    scaling = os.path.join(args.run, "scaling")
    new_scaling, predict_failure = (predict_scaling(args.run, args.predict, args.scaling_model)
                                    if args.predict else (None, None))
    try:
        scaling_rows = read_scaling(os.path.join(new_scaling or scaling, "scaling.csv"))
        text = report(args.run, inputs, elapsed, new_scaling or scaling, scaling_rows,
                      predict_failure)
        with ReplaceTogether(args.run, inputs=[], option="RUN") as outputs:
            with open(outputs.add("report.md"), "w", encoding="utf-8") as handle:
                handle.write(text + "\n")
            if new_scaling:
                replace_folder(new_scaling, scaling)
    except OSError as error:
        raise InputError(f"cannot write the report in {args.run}: {error}") from error
    finally:
        if new_scaling and os.path.lexists(new_scaling):
            shutil.rmtree(new_scaling)
    print(f"wrote {os.path.join(args.run, 'report.md')}")
    return 0
