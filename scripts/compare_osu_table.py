#!/usr/bin/env python3
"""collbench's MPI_Allreduce against osu_allreduce, as a table.

The entry point of collbench_report/compare_osu.py; usage: --help.
"""
import sys

from collbench_report import compare_osu
from collbench_report.cli import run_main

if __name__ == "__main__":
    run_main("compare_osu_table.py", compare_osu.main, sys.argv)
