"""What a characterize.sh folder measured, as characterize's subcommands read
it: the sweep's medians, collbench-fit's models and bottom-up predictions,
the matrix's slow hosts; and the checks the subcommands make of them, as a
table and an exit status.

Used by characterize, netsim_check and two_level; bad input is an InputError.
"""

import collections
import glob
import math
import os
import sys

from collbench_report.readers import (algorithm_order, collective_order, median_per_key,
                                      read_models, read_rows, sweep_collective)
from collbench_report.text import pipe_head, pipe_row


def number(text, default=math.nan):
    """`text` as a finite float, `default` when it is not one (an optional or
    empty cell; readers.number refuses those instead)."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        return default
    return value if math.isfinite(value) else default


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


def fitted_algorithms(out, column, value):
    """(collective, algorithm) of the rows of OUT/fit/models.csv whose `column`
    is `value`, or None without that file."""
    path = os.path.join(out, "fit", "models.csv")
    if not os.path.exists(path):
        return None
    return {(r["family"], r["algorithm"])
            for r in read_models(path, [column, "family", "algorithm"], "the report")
            if r[column] == value}


def modelled_algorithms(out):
    """(collective, algorithm) of every algorithm collbench-fit priced with its
    own cost terms (models.csv's bottom_up rows, family the collective, terms
    "own"; the MPI library's own algorithm has "lower_bound"), or None without
    fit/models.csv."""
    return fitted_algorithms(out, "terms", "own")


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
    # What bottom_up_errors and two_level read of every row.
    return read_rows(path, ["model", "family", "algorithm", "ranks", "bytes", "measured_us",
                            "predicted_us", "rel_err"], "the report")


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


def slow_hosts(hosts_csv):
    """The hosts collbench-linkmatrix's hosts CSV names as slow, in its order."""
    rows = read_rows(hosts_csv, ["host", "slow"], "slow-hosts")
    return [r["host"] for r in rows if r["slow"] == "yes"]


def checks_table(checks):
    """A Markdown table of checks, each (check, measured, expected, ok)."""
    lines = pipe_head("check", "measured", "expected", "result")
    for name, measured, expected, ok in checks:
        lines.append(pipe_row(name, measured, expected, "pass" if ok else "**FAIL**"))
    return "\n".join(lines)


def print_checks(checks):
    """The checks' table on stdout, how many failed on stderr; the exit
    status of a command that checks: 1 when one failed, else 0."""
    print(checks_table(checks))
    failed = [c for c in checks if not c[3]]
    print(f"{len(failed)} of {len(checks)} checks failed" if failed
          else f"all {len(checks)} checks passed", file=sys.stderr)
    return 1 if failed else 0
