#!/usr/bin/python3
"""The performance targets of a scripts/perf.sh folder.

The entry point of collbench_report/perf.py; usage: --help.
"""
import sys

from collbench_report import perf
from collbench_report.cli import run_main

if __name__ == "__main__":
    run_main("perf_report.py", perf.main, sys.argv)
