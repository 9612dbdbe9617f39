#!/usr/bin/python3
"""Summary tables of collbench CSVs, as Markdown.

The entry point of collbench_report/summary.py; usage: --help.
"""
import sys

from collbench_report import summary
from collbench_report.cli import run_main

if __name__ == "__main__":
    run_main("summarize.py", summary.main, sys.argv)
