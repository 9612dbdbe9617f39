"""The one reader of collbench CSVs for every script, and size labels.

Imported by the report package collbench_report/ (the report scripts run
from this folder, which Python puts first on sys.path). Standard library only.

read_table() and read_rows() apply one set of checks to every CSV they read,
the same checks, in the same order and with the same messages, as
collbench-fit's reader (benchmarks/models/measurements.cpp; the RFC 4180
rules are core/csv.cpp's):
  1. the file: readable, at most MAX_BYTES, no NUL byte (binary data),
     UTF-8 text;
  2. the records: RFC 4180 (quoted fields may hold commas, quotes and line
     breaks; no stray quote), every record with as many fields as the header;
     blank lines are not records;
  3. the header: present, with every column the caller requires;
  4. every value of a column of COLUMN_RULES (the ranges of core/columns.csv),
     where it is not empty (empty: not measured): a finite number in the
     column's range, whole where the column counts something (ranks 'four',
     median_us 'nan' or '-1' are refused wherever they appear, whichever
     columns the script then uses).
Every failure is an InputError: one line naming the file (and the record or
data row and the column), which the scripts print before exiting with
status 2 (run_main).

Algorithm and collective names and their order come from the data, never
from a list typed here: algorithm_order() reads them off the CSVs' algorithm
column, collective_order() off their collective column (sweep_collective():
which rows are a collective's size sweep, also in CSVs from before that
column); median_per_key() is the one aggregation of repetitions every script
uses.
"""
import csv
import math
import os
import re
import stat
import statistics
import sys
from collections import defaultdict

# The largest CSV read into memory, kCsvMaxFileBytes of include/collbench/core/csv.h
# (a full sweep is a few MB).
MAX_BYTES = 256 << 20

# The columns of every CSV the tools write, with their types, units and
# ranges: core/columns.csv, from which collbench's C++ writers and readers
# are generated too (tests/csv_schema_test.py). Found from this file upwards,
# so that the module reads it wherever in the source tree it sits.
def _schema_path():
    folder = os.path.dirname(os.path.abspath(__file__))
    while True:
        candidate = os.path.join(folder, "core", "columns.csv")
        if os.path.isfile(candidate) or os.path.dirname(folder) == folder:
            return candidate
        folder = os.path.dirname(folder)


SCHEMA_PATH = _schema_path()
_RANGE = re.compile(r"(?:(>=|>) (\S+))?(?:(?: and )?<= (\S+))?")


def _read_schema(path):
    """The rows of core/columns.csv as dicts, in file order."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        print(f"collbench_csv: cannot read the column schema {path}: {e.strerror}",
              file=sys.stderr)
        sys.exit(2)


SCHEMA = _read_schema(SCHEMA_PATH)


def columns(file):
    """The header of a CSV of kind `file` of core/columns.csv (collbench,
    models, predictions, selections, compute, scaling, links, hosts,
    listing), in the order the tools write it."""
    return [row["column"] for row in SCHEMA if row["file"] == file]


def rule(row):
    """The COLUMN_RULES value of a core/columns.csv row, None when its range is
    empty (not checked): (whole, lowest, lowest included, unit, highest)."""
    text = row["range"]
    if text == "":
        return None
    match = _RANGE.fullmatch(text) if text != "finite" else None
    if text != "finite" and (not match or not any(match.groups())):
        raise ValueError(f"{SCHEMA_PATH}: {row['file']} {row['column']}: range '{text}'")
    op, lowest, highest = match.groups() if match else (None, None, None)
    return (row["type"] == "integer", float(lowest) if lowest else -math.inf, op != ">",
            row["unit"], float(highest) if highest else math.inf)


def column_rules(*files):
    """column -> rule of every checked column of the CSV kinds `files`; a
    column in several of them must have one rule (ValueError otherwise)."""
    rules = {}
    for row in SCHEMA:
        if row["file"] in files and (value := rule(row)) is not None:
            if rules.setdefault(row["column"], value) != value:
                raise ValueError(f"{SCHEMA_PATH}: column {row['column']} has two rules")
    return rules


# What a value that is not empty must be, in every CSV read_table reads by
# default: collbench's, collbench-fit's predictions.csv (measured_us,
# samples) and collbench-linkmatrix's links CSV (latency_*, bandwidth_*),
# which collbench-fit reads too.
try:
    COLUMN_RULES = column_rules("collbench", "predictions", "links")
except ValueError as e:  # a damaged schema: one line, as for bad input
    print(f"collbench_csv: {e}", file=sys.stderr)
    sys.exit(2)


_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_NUMBER = re.compile(r"-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", re.ASCII)


class InputError(Exception):
    """Bad input: the script prints it on one line and exits with status 2."""


def run_main(program, main, *arguments):
    """Exits with main(*arguments)'s status, or with status 2 after printing an
    InputError that escaped it as one line "PROGRAM: message" on stderr: the
    `__main__` of every script that leaves bad input to this wrapper."""
    try:
        status = main(*arguments)
    except InputError as error:
        print(f"{program}: {error}", file=sys.stderr)
        status = 2
    sys.exit(status)


# The MPI library's own algorithm (implementation "mpi" in
# `collbench --list-algorithms --csv`): the vendor baseline the scripts
# compare the hand-written algorithms with.
MPI_ALGORITHM = "mpi"


def algorithm_order(*sequences):
    """Every algorithm name of `sequences` (each the algorithm column of one
    CSV's rows, in file order), once, in the order collbench runs them.

    collbench writes each size's algorithms in registry order (the order of
    `collbench --list-algorithms`; with --algorithms, the order given), so
    the order in which names first appear in a file is the registry's,
    restricted to what that file ran. The files' orders are merged: a name
    comes after every name that precedes it in some file; ties, and files
    that disagree, go by first appearance over all of them. A name no script
    has heard of is listed like the others, never dropped."""
    first_seen = {}  # name -> position of its first appearance over every file
    preceding = defaultdict(set)  # name -> names some file lists before it
    for sequence in sequences:
        in_file = list(dict.fromkeys(sequence))
        for position, name in enumerate(in_file):
            first_seen.setdefault(name, len(first_seen))
            preceding[name].update(in_file[:position])
    remaining = sorted(first_seen, key=first_seen.get)
    order = []
    while remaining:
        unplaced = set(remaining)
        ready = [name for name in remaining if not preceding[name] & unplaced]
        chosen = ready[0] if ready else remaining[0]  # none ready: the files disagree
        order.append(chosen)
        remaining.remove(chosen)
    return order


# The columns of `collbench --list-algorithms --csv` a script reads.
LISTING_COLUMNS = ("order", "collective", "algorithm", "implementation", "cost_model")


def read_algorithm_listing(path):
    """The algorithm names of `collbench --list-algorithms --csv`'s output in
    PATH, each once, in registry order (its order column): a name that
    several collectives have (ring, mpi) is listed once, so that it keeps one
    colour in every plot, and after every name that precedes it in some
    collective (algorithm_order over the collectives: reduce_scatter's
    recursive_halving before mpi, as in reduce_scatter's own order). After
    read_table's checks; InputError when a (collective, algorithm) pair is
    listed twice or the order is not 1, 2, ..."""
    rows = read_rows(path, LISTING_COLUMNS, "an algorithm listing", rules={})
    if [row["order"] for row in rows] != [str(i) for i in range(1, len(rows) + 1)]:
        raise InputError(f"{path}: the order column is not 1, 2, ... {len(rows)}; expected "
                         "the output of collbench --list-algorithms --csv")
    pairs = [(row["collective"], row["algorithm"]) for row in rows]
    twice = sorted({pair for pair in pairs if pairs.count(pair) > 1})
    if twice:
        listed = ", ".join(f"{algorithm} of {collective}" for collective, algorithm in twice)
        raise InputError(f"{path}: algorithm {listed} listed more than once")
    if not rows:
        raise InputError(f"{path}: no algorithms (only the header)")
    by_collective = defaultdict(list)
    for collective, algorithm in pairs:
        by_collective[collective].append(algorithm)
    return algorithm_order(*by_collective.values())


def collective_of(row):
    """The collective a row's calls are: its collective column (empty for p2p
    and local rows); in a CSV from before that column, allreduce for the
    allreduce and exchange rows, the only collective then."""
    if "collective" in row:
        return row["collective"]
    return "allreduce" if row["family"] in ("allreduce", "exchange") else ""


def sweep_collective(row):
    """The collective whose size sweep `row` is part of (its family is the
    collective's name: reduce_scatter/ring/1024), or "" for every other row
    (exchange, whose calls are allreduces of a workload, p2p, local)."""
    collective = collective_of(row)
    return collective if collective and row["family"] == collective else ""


def collective_order(*sequences):
    """Every collective name of `sequences` (each the sweep_collective of one
    CSV's rows, in file order; empty names are left out), once, in the order
    the files first list them (merged as algorithm_order merges)."""
    return algorithm_order(*([name for name in sequence if name] for sequence in sequences))


def median_per_key(rows, key, column="median_us"):
    """{key(row): median of `column` over the rows with that key}: how every
    script combines the repetitions (and runs) of one benchmark, as
    collbench-fit aggregates. Rows without a time (empty median_us: a
    benchmark that failed --check) are left out; the values are read_rows'
    checked numbers. Keys in order of first appearance."""
    samples = defaultdict(list)
    for row in rows:
        if row["median_us"] == "":
            continue
        samples[key(row)].append(float(row[column]))
    return {k: statistics.median(values) for k, values in samples.items()}


def accepted(rule):
    """'a whole number of ranks >= 1', 'a finite number of µs > 0', ...; an
    infinite bound (a rule of any sign) and an empty unit are left unsaid."""
    whole, lowest, included, unit, highest = _bounds(rule)
    kind = "a whole number" if whole else "a finite number"
    named = [f"of {unit}"] if unit not in ("", "none", "fraction") else []
    bounds = ([] if math.isinf(lowest) else [f"{'>=' if included else '>'} {lowest:g}"]) + (
        [] if math.isinf(highest) else [f"<= {highest:g}"])
    return " ".join([kind] + named + [" and ".join(bounds)]).strip()


def _bounds(rule):
    """A rule with its upper bound (inf where it has none): the rules of other
    scripts may leave it out."""
    return (*rule[:4], rule[4] if len(rule) > 4 else math.inf)


def _text(path, expected="a CSV text file"):
    """The file's text, after the checks of the file (1. above); a leading
    UTF-8 byte order mark is not part of it (as collbench-fit reads).
    `expected`: what the messages say the file should be."""
    # As core/csv.cpp's open_regular: O_NONBLOCK so that a FIFO with no
    # writer cannot hang the script, and nothing but a regular file (a device
    # such as /dev/zero has no end to read to).
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}") from e
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError(f"{path} is not a regular file (a device, pipe or folder); "
                             "name a file")
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(MAX_BYTES + 1)  # bounded also if the file grows meanwhile
    except OSError as e:
        raise InputError(f"cannot read {path}: {e.strerror}") from e
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        raise InputError(f"{path} is larger than the {MAX_BYTES >> 20} MiB collbench reads from "
                         "one CSV (hundreds of thousands of rows); split it, or keep the rows "
                         "you need")
    if b"\0" in data:
        raise InputError(f"{path}: binary data (a NUL byte); expected {expected}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text (byte 0x{data[e.start]:02x}); expected "
                         f"{expected}") from e
    return text[1:] if text.startswith("\ufeff") else text


def read_text(path):
    """The text of a file that is not a CSV (report.py's machine.txt), after
    the same checks of the file (1. above)."""
    return _text(path, expected="a text file")


def _records(text, path):
    """RFC 4180 records as lists of fields, as core/csv.cpp's parse_csv
    splits them (and with its messages)."""
    if '"' not in text:  # the usual case: no field is quoted, and 100x faster
        return [line.split(",") for line in _LINE_BREAK.split(text) if line != ""]
    return _quoted_records(text, path)


def _quoted_records(text, path):
    """_records() character by character, for text with quotes."""
    records, record, field = [], [], []
    quoted = in_quotes = False
    line = record_line = 1
    i, n = 0, len(text)

    def end_field():
        nonlocal quoted
        record.append("".join(field))
        field.clear()
        quoted = False

    def end_record():
        nonlocal record, record_line
        end_field()
        if record != [""]:  # a blank line is not a record
            records.append(record)
        record = []
        record_line = line

    while i < n:
        c = text[i]
        if in_quotes:
            if c == '"':
                if i + 1 < n and text[i + 1] == '"':
                    field.append('"')
                    i += 1
                else:
                    in_quotes = False
            else:
                line += c == "\n"
                field.append(c)
        elif c == '"':
            if field or quoted:
                raise InputError(f"{path}:{line}: stray quote inside an unquoted field")
            in_quotes = quoted = True
        elif c == ",":
            end_field()
        elif c == "\r" and i + 1 < n and text[i + 1] == "\n":
            pass  # the \n ends the record
        elif c in "\r\n":
            line += 1
            end_record()
        elif quoted:
            raise InputError(f"{path}:{line}: text after a closing quote")
        else:
            field.append(c)
        i += 1
    if in_quotes:
        raise InputError(f"{path}:{record_line}: quoted field not terminated before the end of "
                         "the file")
    if field or quoted or record:
        end_record()
    return records


def check_value(path, index, column, text, rule):
    """InputError unless `text`, the value of `column` in data row `index`,
    is in the range of `rule` (a COLUMN_RULES value)."""
    whole, lowest, included, _, highest = _bounds(rule)
    # What std::from_chars reads (Python's float() also takes ' 5', '+5',
    # '1_000'); 'inf' and 'nan' are read, then refused as not finite.
    value = float(text) if _NUMBER.fullmatch(text) else math.nan
    if (not math.isfinite(value) or (whole and value != int(value))
            or (value < lowest if included else value <= lowest) or value > highest):
        raise InputError(f"{path}: data row {index}: {column} is '{text}'; expected "
                         f"{accepted(rule)}")


def read_table(path, required=(), purpose="this script", rules=COLUMN_RULES):
    """(header, rows as dicts) of a CSV after every check above; `required`
    are the columns the caller needs, `purpose` names it in the message.
    `rules`: the value checks (4.), {} for a CSV of another format whose
    columns share a name (collbench-fit's models.csv: ranks is a list)."""
    text = _text(path)
    records = _records(text, path)
    if not records or records[0] == [""]:
        raise InputError(f"{path}: empty file (no header); expected a collbench CSV (see "
                         "results/README.md)")
    if len(records) == 1 and text[-1] not in "\r\n":
        # Every writer ends the header with a line break: this file was cut
        # short, and its header may lack columns or have a column cut.
        raise InputError(f"{path}: the file ends inside its header (no line break after it, "
                         "no rows): a torn or cut-short file; expected a collbench CSV (see "
                         "results/README.md)")
    header = records[0]
    for number_, record in enumerate(records[1:], start=2):
        if len(record) != len(header):
            raise InputError(f"{path}: record {number_} has {len(record)} fields, the header "
                             f"has {len(header)}")
    missing = [c for c in required if c not in header]
    if missing:
        s = "s" if len(missing) > 1 else ""
        raise InputError(f"{path}: missing column{s} {', '.join(missing)} (needed by {purpose})")
    checked = [(i, c) for i, c in enumerate(header) if c in rules]
    rows = []
    for index, record in enumerate(records[1:], start=1):
        for i, column in checked:
            if record[i] != "":
                check_value(path, index, column, record[i], rules[column])
        rows.append(dict(zip(header, record)))
    return header, rows


def read_rows(path, required, purpose, rules=COLUMN_RULES):
    """Rows of a CSV as dicts, after read_table's checks."""
    return read_table(path, required, purpose, rules)[1]


def read_models(path, required, purpose):
    """Rows of collbench-fit's models.csv: the checks of 1.-3.; its ranks is a
    ';' list of the rank counts a fit covers, not a count (no value rules)."""
    return read_table(path, required, purpose, rules={})[1]


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


def option_number(text, option, lowest, highest, unit="", lowest_included=True, whole=False):
    """The value of a command-line option, `text` (or a default given as a
    number), as a float (an int with whole=True): finite and from `lowest`
    (excluded with lowest_included=False) to `highest`; InputError otherwise,
    one line as the C++ tools' (cli_checks.h): "--ring-fraction: expected a
    number > 0 and <= 1, got 'nan'". The one validator of every script's
    numeric options: argparse's type=float takes nan, inf and any sign."""
    value = math.nan
    if isinstance(text, (int, float)):
        value = float(text)
    elif _NUMBER.fullmatch(text):
        value = float(text)
    in_range = (lowest <= value if lowest_included else lowest < value) and value <= highest
    if not math.isfinite(value) or not in_range or (whole and value != int(value)):
        kind = "a whole number" if whole else "a number"
        of = f" of {unit}" if unit else ""
        def shown(limit):  # 1048576, not 1.04858e+06
            return str(int(limit)) if limit == int(limit) else f"{limit:g}"
        limits = (f"from {shown(lowest)} to {shown(highest)}" if lowest_included else
                  f"> {shown(lowest)} and <= {shown(highest)}")
        raise InputError(f"{option}: expected {kind}{of} {limits}, got '{text}'")
    return int(value) if whole else value


def writable_folder(path, option="--out"):
    """InputError unless `path` is a folder this process may write in, or can
    be created as one (its nearest existing ancestor is a writable folder):
    checked before any work, so that a bad --out fails at once instead of
    after the plots or the report are computed. access() also refuses a
    read-only file system, to root too."""
    probe = os.path.abspath(path)
    while not os.path.lexists(probe):
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        raise InputError(f"{option} {path}: {probe} is not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise InputError(f"{option} {path}: cannot write in {probe}")


def same_file(a, b):
    """Whether paths `a` and `b` name one file: the same path once resolved
    (symbolic links followed), or two names of one existing file (a hard
    link); as collbench::names_same_file of include/collbench/core/csv.h."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist
        return False


def refuse_input_as_output(output, inputs, option="--out"):
    """InputError when the output path `output` names one of `inputs`: a tool
    must never replace the file it reads (checked before any work)."""
    for path in inputs:
        if same_file(output, path):
            raise InputError(f"{option} names the input file {path}")


class ReplaceTogether:
    """The output files of one run (plot PNGs, a report) replaced together or
    not at all, as benchmarks/models/replace_on_commit.h does for the C++
    tools: `add(name)` gives the temporary to write `name` to, in `folder`;
    leaving the `with` block normally renames every temporary over its
    destination, leaving it by an exception removes them (and the folder when
    this created it), so a failed run never leaves a partial file or a mix of
    new and earlier outputs. A rename that fails after others puts theirs
    back (kept as hard links until the end). An output that would replace
    one of `inputs` is refused (InputError) when it is added."""

    def __init__(self, folder, inputs=(), option="--out"):
        self.folder = folder
        self.inputs = list(inputs)  # files no output may replace
        self.option = option
        self.created = []
        probe = os.path.abspath(folder)
        while not os.path.lexists(probe):
            self.created.insert(0, probe)
            probe = os.path.dirname(probe)
        self.outputs = []  # (destination, temporary)
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as e:
            raise InputError(f"cannot create the folder {folder}: {e.strerror}") from e

    def add(self, name):
        refuse_input_as_output(os.path.join(self.folder, name), self.inputs, self.option)
        stem, ext = os.path.splitext(name)  # matplotlib picks the format by the extension
        temporary = os.path.join(self.folder, f".{stem}.tmp-{os.getpid()}{ext}")
        self.outputs.append((os.path.join(self.folder, name), temporary))
        return temporary

    def path(self, name):
        return os.path.join(self.folder, name)

    def __enter__(self):
        return self

    def __exit__(self, kind, _value, _traceback):
        if kind is None:
            self.commit()
        else:
            self.discard()
        return False

    def discard(self):
        for _, temporary in self.outputs:
            if os.path.lexists(temporary):
                os.remove(temporary)
        for folder in reversed(self.created):
            try:
                os.rmdir(folder)  # only when empty: nothing but ours was there
            except OSError:
                pass

    def commit(self):
        backups = []
        try:
            for path, _ in self.outputs:
                backup = None
                if os.path.lexists(path):
                    backup = os.path.join(os.path.dirname(path),
                                          f".{os.path.basename(path)}.old-{os.getpid()}")
                    if os.path.lexists(backup):
                        os.remove(backup)
                    os.link(path, backup, follow_symlinks=False)
                backups.append(backup)
            renamed = 0
            try:
                for path, temporary in self.outputs:
                    os.rename(temporary, path)
                    renamed += 1
            except OSError:
                for (path, _), backup in zip(self.outputs[:renamed], backups):
                    if backup is None:
                        os.remove(path)
                    else:
                        os.rename(backup, path)
                raise
        except OSError as e:
            self.discard()
            raise InputError(f"cannot replace the outputs in {self.folder}: {e}; none of them "
                             "was replaced") from e
        finally:
            for backup in backups:
                if backup is not None and os.path.lexists(backup):
                    os.remove(backup)


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
