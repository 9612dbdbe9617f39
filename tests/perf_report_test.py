#!/usr/bin/python3
"""Tests of scripts/perf_report.py on a synthetic perf.sh folder: ratios are
made from rows with the cores near (core_handoff_ns <= --far-ns), paired by
job and repetition; far rows only show in the all-rows column; --all-rows,
--select-near and --near-shortfall. Usage: perf_report_test.py SOURCE_DIR"""

import csv
import io
import os
import subprocess
import sys
import tempfile
import unittest

SOURCE = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
REPORT = os.path.join(SOURCE, "scripts", "perf_report.py")
MIB = 1 << 20
COLUMNS = ["benchmark", "family", "algorithm", "bytes", "repetition", "median_us", "run_id",
           "workload", "core_handoff_ns", "dtype"]


def row(algorithm, size, repetition, median_us, handoff, run_id="job1", family="allreduce"):
    return {"benchmark": f"{family}/{algorithm}/{size}", "family": family,
            "algorithm": algorithm, "bytes": size, "repetition": repetition,
            "median_us": median_us, "run_id": run_id, "workload": "",
            "core_handoff_ns": handoff, "dtype": "f32"}


def sweep():
    """ring and mpi at 4 MiB: two jobs of 3 repetitions. Near rows (30 ns):
    mpi/ring = 120/100 = 1.2; far rows (250 ns): 200/400 = 0.5."""
    rows = []
    for job, handoffs in (("job1", [30, 250, 30]), ("job2", [250, 40, 250])):
        for repetition, handoff in enumerate(handoffs):
            near = handoff < 100
            rows.append(row("ring", 4 * MIB, repetition, 100 if near else 400, handoff, job))
            rows.append(row("mpi", 4 * MIB, repetition, 120 if near else 200, handoff, job))
    return rows


def write(path, rows):
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def run(*arguments):
    return subprocess.run([sys.executable, REPORT, *arguments], capture_output=True, text=True)


def target_row(output, target, ranks):
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 7 and cells[0] == target and cells[1] == str(ranks):
            return cells
    raise AssertionError(f"no row for {target} at {ranks} ranks in:\n{output}")


class PerfReportTest(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.dir = self.folder.name

    def tearDown(self):
        self.folder.cleanup()

    def test_targets_are_judged_on_near_pairs_only(self):
        write(os.path.join(self.dir, "np2.csv"), sweep())
        result = run(self.dir, "--far-ns", "100")
        self.assertEqual(result.returncode, 0, result.stderr)
        cells = target_row(result.stdout, "ring busbw / mpi busbw, worst size 4..64 MiB", 2)
        self.assertEqual(cells[2], "1.200 (4 MiB)")
        self.assertEqual(cells[5], "pass")
        # Over all 6 pairs: medians of mpi 160 and ring 250.
        self.assertEqual(cells[6], "0.640")
        self.assertIn("1.200 | 1.200..1.200 | 0.640 (3 of 6 pairs near)", result.stdout)

    def test_all_rows_counts_every_row_at_those_rank_counts(self):
        write(os.path.join(self.dir, "np2.csv"), sweep())
        result = run(self.dir, "--far-ns", "100", "--all-rows", "2")
        self.assertEqual(result.returncode, 0, result.stderr)
        cells = target_row(result.stdout, "ring busbw / mpi busbw, worst size 4..64 MiB", 2)
        self.assertEqual(cells[2], "0.640 (4 MiB)")
        self.assertEqual(cells[5], "MISS")

    def test_a_size_without_near_pairs_is_a_miss_that_says_so(self):
        write(os.path.join(self.dir, "np2.csv"), [r for r in sweep() if r["core_handoff_ns"] > 100])
        result = run(self.dir)
        cells = target_row(result.stdout, "ring busbw / mpi busbw, worst size 4..64 MiB", 2)
        self.assertEqual(cells[2], "no near pair at 4 MiB")
        self.assertEqual(cells[3], "n/a")  # no spread of pairs that do not exist
        self.assertEqual(cells[5], "MISS")

    def test_rows_without_the_column_count_as_near(self):
        rows = sweep()
        for r in rows:
            del r["core_handoff_ns"]
        with open(os.path.join(self.dir, "np2.csv"), "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=[c for c in COLUMNS if c != "core_handoff_ns"])
            writer.writeheader()
            writer.writerows(rows)
        cells = target_row(run(self.dir).stdout, "ring busbw / mpi busbw, worst size 4..64 MiB", 2)
        self.assertEqual(cells[2], "0.640 (4 MiB)")

    def test_select_near_and_near_shortfall(self):
        path = os.path.join(self.dir, "np2_part1_a1.csv")
        write(path, sweep())
        selected = run("--select-near", "100", path)
        self.assertEqual(selected.returncode, 0, selected.stderr)
        kept = list(csv.DictReader(io.StringIO(selected.stdout)))
        self.assertEqual(len(kept), 6)
        self.assertTrue(all(float(r["core_handoff_ns"]) < 100 for r in kept))
        # ring and mpi have 3 near rows each: none short of min(5, 3); with a
        # threshold of 35 ns they have 2 each, both short, at 4 MiB.
        self.assertEqual(run("--near-shortfall", "100", "5", path).stdout, "\n")
        self.assertEqual(run("--near-shortfall", "35", "5", path).stdout, "4194304B\n")
        # With another size that has enough near rows, only 4 MiB is named.
        write(path, sweep() + [row(a, 8, k, 1.0, 30) for a in ("ring", "mpi") for k in range(3)])
        self.assertEqual(run("--near-shortfall", "35", "5", path).stdout, "4194304B\n")
        # "all" takes every row, also those the probe could not measure.
        unmeasured = sweep()
        for r in unmeasured:
            r["core_handoff_ns"] = ""
        write(path, unmeasured)
        self.assertEqual(run("--near-shortfall", "35", "5", path).stdout, "4194304B\n")
        self.assertEqual(run("--near-shortfall", "all", "5", path).stdout, "\n")
        everything = run("--select-near", "all", path)
        self.assertEqual(len(list(csv.DictReader(io.StringIO(everything.stdout)))), 12)

    def test_bad_input_exits_2_with_a_message(self):
        for arguments, message in (
                ([os.path.join(self.dir, "missing")], "is not a folder"),
                ([self.dir], "no np<P>.csv"),
                ([self.dir, "--far-ns", "-1"], "--far-ns: expected a number of ns from 0 to 1000000000, "
                 "got '-1'"),
                ([self.dir, "--far-ns", "nan"], "--far-ns: expected a number of ns from 0 to"),
                ([self.dir, "--far-ns", "inf"], "--far-ns: expected a number of ns from 0 to"),
                ([self.dir, "--all-rows", "2,1.5"], "--all-rows: expected a whole number from 1 "
                 "to 1048576, got '1.5'"),
                (["--select-near", "1e400", "f.csv"], "--select-near: expected a number of ns"),
                ([self.dir, "--bogus", "1"], "unexpected arguments --bogus 1"),
                (["--select-near", "100"], "--select-near needs NS and at least one CSV"),
                (["--near-shortfall", "100", "x", "f.csv"], "REPS: expected a whole number from 1 to "
                 "1048576, got 'x'")):
            result = run(*arguments)
            self.assertEqual(result.returncode, 2, arguments)
            self.assertIn(message, result.stderr)
            self.assertNotIn("Traceback", result.stderr)

    def test_bad_csv_is_refused_before_anything_is_printed(self):
        """--select-near checks every CSV before it prints a row; the report
        refuses a bad value (the checks of collbench_csv.py) in any row."""
        good = os.path.join(self.dir, "good.csv")
        write(good, sweep())
        bad = os.path.join(self.dir, "bad.csv")
        rows = sweep()
        rows[3]["median_us"] = "-120"
        write(bad, rows)
        selected = run("--select-near", "100", good, bad)
        self.assertEqual(selected.returncode, 2)
        self.assertEqual(selected.stdout, "")
        self.assertIn("bad.csv: data row 4: median_us is '-120'; expected a finite number of µs > 0",
                      selected.stderr)
        write(os.path.join(self.dir, "np2.csv"), rows)
        report = run(self.dir)
        self.assertEqual(report.returncode, 2)
        self.assertIn("np2.csv: data row 4: median_us is '-120'", report.stderr)
        self.assertNotIn("Traceback", report.stderr)


if __name__ == "__main__":
    unittest.main()
