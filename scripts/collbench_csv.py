"""What every collbench script needs to read collbench CSVs and print sizes.

Imported by plot.py, summarize.py, compare_transports.py and
characterize_report.py (they run from this folder, which Python puts first
on sys.path). Standard library only.
"""
import csv
import math


class InputError(Exception):
    """Bad input: the script prints it on one line and exits with status 2."""


def read_rows(path, required, purpose):
    """Rows of a CSV as dicts, after checking that it exists, has a header and
    every required column; `purpose` names the command in the message."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames
            rows = list(reader)
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}") from e
    except csv.Error as e:
        raise InputError(f"{path}: malformed CSV: {e}") from e
    if not header:
        raise InputError(f"{path}: empty file; {purpose} needs a CSV with a header")
    missing = [c for c in required if c not in header]
    if missing:
        s = "s" if len(missing) > 1 else ""
        raise InputError(f"{path}: missing column{s} {', '.join(missing)} (needed by {purpose})")
    return rows


def number(row, column, path, index, whole=False):
    """The value of `column` in data row `index` (1 = first) of `path` as a
    finite float (a whole one with whole=True); InputError naming the file, row
    and column otherwise (empty, text, nan, inf)."""
    text = row[column]
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value) or (whole and value != int(value)):
        expected = "a whole number" if whole else "a finite number"
        raise InputError(f"{path}: data row {index}: {column} is '{text}'; expected {expected}")
    return value


def size_label(n, _pos=None):
    """Axis and report label: 1536 -> "1.5 KiB" (matplotlib tick formatter signature)."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n:g} B"


def format_bytes(size):
    """Table cell: 8 -> "8 B", 1536 -> "1.5 KiB", 2**26 -> "64 MiB" (as collbench's format_bytes)."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.2f}".rstrip("0").rstrip(".") + " " + unit
    return f"{size} B"
