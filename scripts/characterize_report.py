#!/usr/bin/python3
"""Heatmaps, checks and the report of scripts/characterize.sh.

The entry point of collbench_report/characterize.py; usage: --help.
"""
import sys

from collbench_report import characterize
from collbench_report.cli import run_main

if __name__ == "__main__":
    run_main("characterize_report.py", characterize.main, sys.argv)
