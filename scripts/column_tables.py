#!/usr/bin/env python3
"""The column tables of the READMEs, generated from core/columns.csv.

Every Markdown file of the source tree may hold blocks

    <!-- columns FILE: generated from core/columns.csv by scripts/column_tables.py -->
    | column | type | unit / values | meaning |
    ...
    <!-- end columns -->

where FILE is a CSV kind of core/columns.csv (collbench, models, links,
...). This script rewrites each block's table from the CSV; with --check it
changes nothing and exits with status 1 naming every block that differs
(CTest runs it so: a README edited by hand, or a column added to the CSV
without regenerating, fails). Every kind must have a block somewhere, and a
block must name a kind the CSV has. Standard library only.

Usage: column_tables.py [--check] [SOURCE_DIR]   (default: this script's ../)
"""
import argparse
import csv
import difflib
import os
import re
import sys

BEGIN = re.compile(r"<!-- columns (\w+): generated from core/columns\.csv by "
                   r"scripts/column_tables\.py -->\n")
END = "<!-- end columns -->"
HEADER = "| column | type | unit / values | meaning |\n|---|---|---|---|\n"


def read_schema(source):
    path = os.path.join(source, "core", "columns.csv")
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def cell(text):
    return text.replace("|", "\\|")


def table(rows):
    """The Markdown table of one CSV kind's rows, in the order written."""
    lines = [HEADER]
    for row in rows:
        kind = (f"finite {row['type']}" if row["range"] == "finite" else
                row["type"] + (f" {row['range']}" if row["range"] else ""))
        unit = "" if row["unit"] == "none" else row["unit"]
        values = "; ".join(part for part in (unit, row["values"]) if part)
        lines.append(f"| `{row['column']}` | {cell(kind)} | {cell(values)} | "
                     f"{cell(row['meaning'])} |\n")
    return "".join(lines)


def markdown_files(source):
    for folder, subfolders, files in os.walk(source):
        subfolders[:] = sorted(d for d in subfolders
                               if not d.startswith((".", "build")) and d != "node_modules")
        for name in sorted(files):
            if name.endswith(".md"):
                yield os.path.join(folder, name)


def regenerate(text, tables, where, problems, seen):
    """`text` with every block's table replaced by its kind's."""
    out, position = [], 0
    for begin in BEGIN.finditer(text):
        kind = begin.group(1)
        end = text.find(END, begin.end())
        if end < 0:
            problems.append(f"{where}: the block of {kind} has no '{END}'")
            return text
        if kind not in tables:
            problems.append(f"{where}: block of '{kind}', which core/columns.csv does not have")
            return text
        seen.add(kind)
        out += [text[position:begin.end()], tables[kind]]
        position = end
    return "".join(out) + text[position:]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 when a table differs from core/columns.csv")
    parser.add_argument("source", nargs="?",
                        default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    args = parser.parse_args(argv)
    rows = read_schema(args.source)
    kinds = list(dict.fromkeys(row["file"] for row in rows))
    tables = {kind: table([row for row in rows if row["file"] == kind]) for kind in kinds}
    problems, seen, stale = [], set(), []
    for path in markdown_files(args.source):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        where = os.path.relpath(path, args.source)
        new = regenerate(text, tables, where, problems, seen)
        if new == text:
            continue
        stale.append(where)
        if args.check:
            diff = difflib.unified_diff(text.splitlines(), new.splitlines(), where,
                                        "from core/columns.csv", n=0, lineterm="")
            print("\n".join(list(diff)[:12]))
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
    problems += [f"no README has a table of the {kind} CSV (a block '<!-- columns {kind}: "
                 "...')" for kind in kinds if kind not in seen]
    for problem in problems:
        print(problem)
    if args.check:
        for where in stale:
            print(f"{where}: a column table differs from core/columns.csv; run "
                  "scripts/column_tables.py")
        if not problems and not stale:
            print(f"{len(rows)} columns of {len(kinds)} CSVs, every table as core/columns.csv")
        return 1 if problems or stale else 0
    for where in stale:
        print(f"rewrote {where}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
