#!/usr/bin/env python3
"""Each algorithm's time over one fabric relative to another.

The entry point of collbench_report/compare_transports.py; usage: --help.
"""
import sys

from collbench_report import compare_transports
from collbench_report.cli import run_main

if __name__ == "__main__":
    run_main("compare_transports.py", compare_transports.main, sys.argv)
