#!/usr/bin/python3
"""The main job's report, RUN/report.md.

The entry point of collbench_report/report.py; usage: --help.
"""
import sys

from collbench_report import report
from collbench_report.cli import run_main

if __name__ == "__main__":
    run_main("report.py", report.main, sys.argv)
