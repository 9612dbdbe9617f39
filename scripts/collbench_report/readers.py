"""The files the reports read. Every collbench CSV goes through
collbench_csv.py, the one CSV reader (its checks, messages and column rules:
see there); the other inputs through the same file checks (read_text)."""
import collections
import json
import os

from collbench_csv import (COLUMN_RULES, LISTING_COLUMNS, MPI_ALGORITHM, InputError,
                           algorithm_order, collective_of, collective_order, median_per_key,
                           number, option_number, read_algorithm_listing, read_models, read_rows,
                           read_table, read_text, sweep_collective)

# What the modules of the package import from here.
__all__ = ["COLUMN_RULES", "LISTING_COLUMNS", "MPI_ALGORITHM", "InputError", "algorithm_order",
           "collective_of", "collective_order", "median_per_key", "number",
           "option_number", "read_algorithm_listing", "read_models",
           "read_optional_settings", "read_optional_text", "read_rows", "read_settings",
           "read_table", "read_text", "read_timeline", "sweep_collective"]


def read_settings(path, separator, strict=True):
    """A file of `key<separator>value` lines (machine.txt's "cores: 4",
    run.env's "ranks=4") as a dict, read as read_text reads. strict: a line
    without the separator, or a key given twice, is an InputError; otherwise
    such a line is skipped and the last value of a key kept. Blank lines are
    skipped."""
    settings = {}
    for number_, line in enumerate(read_text(path).split("\n"), start=1):
        if strict and not line.strip():
            continue
        key, found, value = line.partition(separator)
        if strict:
            key, value = key.strip(), value.strip()
            if not found:
                raise InputError(f"{path}: line {number_} is not 'key{separator} value'")
            if key in settings:
                raise InputError(f"{path}: line {number_}: '{key}' given twice")
        elif not key.rstrip("\r"):
            continue
        else:
            value = value.rstrip("\r")
        settings[key] = value
    return settings


def read_optional_settings(path, separator):
    """read_settings(strict=False) of `path`, {} when there is no such file."""
    return read_settings(path, separator, strict=False) if os.path.exists(path) else {}


def read_optional_text(path):
    """The text of `path` (read_text's checks), "" when there is no such file:
    the optional parts of a characterize.sh folder (timings.txt, summaries)."""
    return read_text(path) if os.path.exists(path) else ""


def read_timeline(path):
    """{workload: [(benchmark, events)]} of collbench --timeline's Chrome trace,
    benchmarks in file order; checked before anything is drawn."""
    try:
        trace = json.loads(read_text(path))
        events = trace["traceEvents"]
        names = {e["pid"]: e["args"]["name"] for e in events if e.get("name") == "process_name"}
        per_workload = collections.OrderedDict()
        for pid, name in names.items():
            parts = name.split("/")
            if len(parts) != 3 or parts[0] != "train":
                raise InputError(f"{path}: process '{name}' is not a train/<algorithm>/<workload>")
            mine = [e for e in events if e["pid"] == pid and e["ph"] in ("X", "i")]
            for e in mine:
                if not (float(e["ts"]) >= 0 and float(e.get("dur", 0)) >= 0):
                    raise InputError(f"{path}: {name}: event {e['name']} has a negative time")
            # An algorithm twice (traces of older builds kept every round): the last.
            benchmarks = per_workload.setdefault(parts[2], [])
            benchmarks[:] = [b for b in benchmarks if b[0] != parts[1]]
            benchmarks.append((parts[1], mine))
    except (ValueError, KeyError, TypeError) as e:
        raise InputError(f"{path}: not collbench's --timeline trace ({e})") from e
    if not per_workload:
        raise InputError(f"{path}: no train benchmark in the trace")
    return per_workload
