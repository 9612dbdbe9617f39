"""The CSV column rules are written twice, once per language: COLUMN_RULES in
scripts/collbench_csv.py and kColumnRules in benchmarks/models/measurements.cpp.
This test reads both and fails on any difference (a column in one only, or
another whole / lowest / included / unit / highest), so that collbench-fit
and the scripts never disagree on what a valid row is.

Usage: column_rules_agree_test.py SOURCE_DIR
"""
import math
import os
import re
import sys


def cpp_rules(path):
    text = open(path, encoding="utf-8").read()
    block = re.search(r"kColumnRules\[\] = \{(.*?)\n\};", text, re.S)
    if not block:
        sys.exit(f"{path}: no kColumnRules table")
    rules = {}
    entry = re.compile(r'\{"(\w+)", (true|false), ([-\d.e+]+), (true|false), "([^"]*)"'
                       r'(?:, ([-\d.e+]+))?\}')
    for m in entry.finditer(block.group(1)):
        column, whole, lowest, included, unit, highest = m.groups()
        rules[column] = (whole == "true", float(lowest), included == "true", unit,
                         float(highest) if highest else math.inf)
    return rules


def main(argv):
    source = argv[1]
    sys.path.insert(0, os.path.join(source, "scripts"))
    import collbench_csv  # noqa: E402
    python = {column: collbench_csv._bounds(rule)
              for column, rule in collbench_csv.COLUMN_RULES.items()}
    python = {c: (bool(w), float(lo), bool(inc), unit, float(hi))
              for c, (w, lo, inc, unit, hi) in python.items()}
    cpp = cpp_rules(os.path.join(source, "benchmarks", "models", "measurements.cpp"))
    problems = [f"{c}: only in COLUMN_RULES" for c in python.keys() - cpp.keys()]
    problems += [f"{c}: only in kColumnRules" for c in cpp.keys() - python.keys()]
    problems += [f"{c}: COLUMN_RULES {python[c]} vs kColumnRules {cpp[c]}"
                 for c in sorted(python.keys() & cpp.keys()) if python[c] != cpp[c]]
    if len(cpp) < 20:
        problems.append(f"read only {len(cpp)} kColumnRules entries; the parser is out of date")
    for problem in sorted(problems):
        print(problem)
    if not problems:
        print(f"{len(cpp)} column rules, the same in both tables")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
