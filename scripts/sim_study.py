#!/usr/bin/python3
"""Figures and numbers of scripts/sim_sweep.sh's simulated studies.

The entry point of collbench_report/simstudy.py; usage: --help.
"""
import sys

from collbench_report import simstudy
from collbench_report.cli import run_main

if __name__ == "__main__":
    run_main("sim_study.py", simstudy.main, sys.argv)
