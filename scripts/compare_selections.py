#!/usr/bin/env python3
"""Whether two runs chose the same algorithms, within noise.

The entry point of collbench_report/compare_selections.py; usage: --help.
"""
import sys

from collbench_report import compare_selections
from collbench_report.cli import run_main

if __name__ == "__main__":
    run_main("compare_selections.py", compare_selections.main, sys.argv)
