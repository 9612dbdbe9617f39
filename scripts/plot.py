#!/usr/bin/python3
"""Plots of collbench results (matplotlib).

The entry point of collbench_report/plot.py; usage: --help.
"""
import sys

from collbench_report import plot
from collbench_report.cli import run_main

if __name__ == "__main__":
    run_main("plot.py", plot.main, sys.argv)
