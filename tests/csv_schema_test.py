"""core/columns.csv, the one place of the columns of every CSV the tools
write, against every other place that names them:

  - the file itself: its header, a known type, a unit, a range the readers
    understand (only on numbers), a meaning, no column twice in one CSV;
  - the documentation: every column table of the READMEs is the one
    scripts/column_tables.py generates from it (--check);
  - the scripts' reader: scripts/collbench_csv.py's COLUMN_RULES are the
    ranges of the collbench, predictions and links CSVs, parsed here again;
  - the C++ sources: no header typed by hand where the generated tables
    (core/columns.cmake) should be used.
The C++ writers' headers and the generated tables are compared with the
file by tests/columns_test.cpp.

Usage: csv_schema_test.py SOURCE_DIR
"""
import csv
import math
import os
import re
import subprocess
import sys

TYPES = ("text", "integer", "number", "list")
RANGE = re.compile(r"(?:(>=|>) (-?\d+(?:\.\d+)?(?:e[-+]?\d+)?))?"
                   r"(?:(?: and )?<= (-?\d+(?:\.\d+)?(?:e[-+]?\d+)?))?")


def expected_rule(row):
    """The rule a range means, parsed independently of collbench_csv.py."""
    if row["range"] == "":
        return None
    if row["range"] == "finite":
        return (row["type"] == "integer", -math.inf, True, row["unit"], math.inf)
    op, lowest, highest = RANGE.fullmatch(row["range"]).groups()
    return (row["type"] == "integer", float(lowest) if lowest else -math.inf, op != ">",
            row["unit"], float(highest) if highest else math.inf)


def check_schema(rows, problems):
    seen = set()
    for line, row in enumerate(rows, start=2):
        where = f"core/columns.csv:{line}: {row['file']} {row['column']}"
        if (row["file"], row["column"]) in seen:
            problems.append(f"{where}: listed twice")
        seen.add((row["file"], row["column"]))
        if row["type"] not in TYPES:
            problems.append(f"{where}: type '{row['type']}' is none of {', '.join(TYPES)}")
        if not row["unit"]:
            problems.append(f"{where}: no unit ('none' for text)")
        if not row["meaning"]:
            problems.append(f"{where}: no meaning")
        text = row["range"]
        if text and text != "finite" and not (RANGE.fullmatch(text) and any(
                RANGE.fullmatch(text).groups())):
            problems.append(f"{where}: range '{text}' is not understood")
        if text and row["type"] not in ("integer", "number"):
            problems.append(f"{where}: a range on a {row['type']} column")


def check_docs(source, problems):
    run = subprocess.run([sys.executable, os.path.join(source, "scripts", "column_tables.py"),
                          "--check", source], capture_output=True, text=True)
    if run.returncode != 0:
        problems.append("the READMEs' column tables:\n" + run.stdout + run.stderr)


def check_reader(source, rows, problems):
    sys.path.insert(0, os.path.join(source, "scripts"))
    import collbench_csv  # noqa: E402
    expected = {}
    for row in rows:
        if row["file"] in ("collbench", "predictions", "links") and expected_rule(row):
            expected[row["column"]] = expected_rule(row)
    actual = {column: collbench_csv._bounds(rule)
              for column, rule in collbench_csv.COLUMN_RULES.items()}
    for column in sorted(expected.keys() | actual.keys()):
        if expected.get(column) != actual.get(column):
            problems.append(f"collbench_csv.COLUMN_RULES[{column}] is {actual.get(column)}; "
                            f"core/columns.csv says {expected.get(column)}")
    for file in dict.fromkeys(row["file"] for row in rows):
        if collbench_csv.columns(file) != [r["column"] for r in rows if r["file"] == file]:
            problems.append(f"collbench_csv.columns('{file}') differs from core/columns.csv")


def check_cpp(source, rows, problems):
    """A list of string literals holding most of one CSV's columns (three
    quarters, at least five) is a header typed by hand; a reader's list of
    the few columns it requires is not."""
    headers = {}
    for row in rows:
        headers.setdefault(row["file"], set()).add(row["column"])
    literal_lists = re.compile(r'"\w+"(?:\s*,\s*"\w+"){4,}')
    for folder in ("benchmarks", "collectives", "core", "include"):
        for root, _, files in os.walk(os.path.join(source, folder)):
            for name in sorted(files):
                if not name.endswith((".cpp", ".h")):
                    continue
                path = os.path.join(root, name)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                for match in literal_lists.finditer(text):
                    names = set(re.findall(r'"(\w+)"', match.group(0)))
                    typed = [(len(names & header) / len(header), file)
                             for file, header in headers.items()
                             if len(names & header) >= max(5, 0.75 * len(header))]
                    if typed:
                        problems.append(f"{os.path.relpath(path, source)}: the columns of the "
                                        f"{max(typed)[1]} CSV typed by hand; use "
                                        "collbench/core/columns.h (core/columns.csv)")


def main(argv):
    source = argv[1]
    with open(os.path.join(source, "core", "columns.csv"), encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != ["file", "column", "type", "unit", "range", "values", "meaning"]:
            print(f"core/columns.csv: header {reader.fieldnames}")
            return 1
        rows = list(reader)
    problems = []
    check_schema(rows, problems)
    check_docs(source, problems)
    if not problems:  # the reader refuses a damaged schema at import
        check_reader(source, rows, problems)
    check_cpp(source, rows, problems)
    for problem in problems:
        print(problem)
    if not problems:
        files = len(dict.fromkeys(row["file"] for row in rows))
        print(f"{len(rows)} columns of {files} CSVs: the READMEs, collbench_csv.py and the C++ "
              "sources agree with core/columns.csv")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
