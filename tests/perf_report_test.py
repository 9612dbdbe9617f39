#!/usr/bin/python3
"""Tests of scripts/perf_report.py on a synthetic perf.sh folder: ratios are
made from rows with the cores near (core_handoff_ns <= --far-ns), paired by
job and repetition; far rows only show in the all-rows column; --all-rows,
--select-near and --near-shortfall; every collective of algorithms.csv gets
its fastest-hand-written-against-mpi targets. Usage: perf_report_test.py
SOURCE_DIR"""

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
COLUMNS = ["benchmark", "family", "collective", "algorithm", "bytes", "repetition", "median_us",
           "run_id", "workload", "core_handoff_ns", "dtype"]
COLLECTIVES = ("allreduce", "reduce_scatter", "allgather", "broadcast", "reduce")


def row(algorithm, size, repetition, median_us, handoff, run_id="job1", family="allreduce"):
    return {"benchmark": f"{family}/{algorithm}/{size}", "family": family,
            "collective": family if family in COLLECTIVES + ("alltoall",) else "",
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


# collbench --list-algorithms --csv, as perf.sh saves it (algorithms.csv): a
# collective no script names (alltoall) is judged like the others.
LISTING = """order,collective,algorithm,implementation,cost_model,reduces_on_every_rank,summary
1,allreduce,ring,hand-written,yes,yes,"ring, pipelined"
2,allreduce,mpi,mpi,no,no,MPI_Allreduce
3,reduce_scatter,ring,hand-written,yes,yes,ring
4,reduce_scatter,recursive_halving,hand-written,yes,yes,halving
5,reduce_scatter,mpi,mpi,no,no,MPI_Reduce_scatter_block
6,alltoall,pairwise,hand-written,yes,no,pairwise
7,alltoall,mpi,mpi,no,no,MPI_Alltoall
"""


def collective_sweep(ring_at_8mib):
    """reduce_scatter and alltoall rows at 8 B and 8 MiB, 3 near repetitions,
    mpi taking 1.0 and 100 us. reduce_scatter: ring takes 1.2 us at 8 B and
    ring_at_8mib us at 8 MiB, recursive_halving always 2x mpi (never the
    fastest); alltoall's pairwise 0.9 and 80 us. allreduce (ring, mpi) and its
    mpi_bare, faster than anything, must not count as hand-written."""
    rows = []
    for repetition in range(3):
        for size, base in ((8, 1.0), (8 * MIB, 100.0)):
            rows += [row("mpi", size, repetition, base, 30, family="reduce_scatter"),
                     row("ring", size, repetition, 1.2 * base if size == 8 else ring_at_8mib, 30,
                         family="reduce_scatter"),
                     row("recursive_halving", size, repetition, 2 * base, 30,
                         family="reduce_scatter"),
                     row("mpi", size, repetition, base, 30, family="alltoall"),
                     row("pairwise", size, repetition, 0.9 * base if size == 8 else 80, 30,
                         family="alltoall"),
                     row("ring", size, repetition, base, 30),
                     row("mpi", size, repetition, base, 30),
                     row("mpi_bare", size, repetition, base / 10, 30)]
    return rows


def write_listing(folder):
    with open(os.path.join(folder, "algorithms.csv"), "w") as handle:
        handle.write(LISTING)


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

    def collective_report(self, ring_at_8mib, *options):
        write(os.path.join(self.dir, "np2.csv"), collective_sweep(ring_at_8mib))
        write_listing(self.dir)
        result = run(self.dir, *options)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result.stdout

    def test_each_collective_of_the_listing_is_judged_at_large_and_small_sizes(self):
        output = self.collective_report(90.0)
        large = target_row(output, "reduce_scatter: fastest hand-written busbw / mpi busbw, "
                           "worst size 4..64 MiB", 2)
        self.assertEqual(large[2:6], ["1.111 (8 MiB, ring)", "1.111..1.111", ">= 1.0", "pass"])
        small = target_row(output, "reduce_scatter: fastest hand-written time / mpi time, "
                           "worst size 8 B..1 KiB", 2)
        self.assertEqual(small[2:6], ["1.200 (8 B, ring)", "1.200..1.200", "<= 1.3", "pass"])
        # alltoall is in the listing, not in the script: judged all the same.
        large = target_row(output, "alltoall: fastest hand-written busbw / mpi busbw, "
                           "worst size 4..64 MiB", 2)
        self.assertEqual(large[2], "1.250 (8 MiB, pairwise)")
        small = target_row(output, "alltoall: fastest hand-written time / mpi time, "
                           "worst size 8 B..1 KiB", 2)
        self.assertEqual(small[2], "0.900 (8 B, pairwise)")
        # allreduce: hand-written is ring only (mpi_bare is no algorithm of
        # the listing); its small-message target stays the fit's (target 2).
        large = target_row(output, "allreduce: fastest hand-written busbw / mpi busbw, "
                           "worst size 4..64 MiB", 2)
        self.assertEqual(large[2], "1.000 (8 MiB, ring)")
        self.assertNotIn("allreduce: fastest hand-written time", output)

    def test_a_hand_written_algorithm_10_percent_slower_than_mpi_is_a_miss(self):
        # Mutant: the fastest reduce_scatter at 8 MiB takes 110 us to mpi's 100.
        cells = target_row(self.collective_report(110.0), "reduce_scatter: fastest hand-written "
                           "busbw / mpi busbw, worst size 4..64 MiB", 2)
        self.assertEqual(cells[2], "0.909 (8 MiB, ring)")
        self.assertEqual(cells[5], "MISS")

    def test_small_messages_more_than_1_3x_mpi_are_a_miss(self):
        rows = [r if not (r["family"] == "reduce_scatter" and r["algorithm"] == "ring"
                          and r["bytes"] == 8) else dict(r, median_us=1.4)
                for r in collective_sweep(90.0)]
        write(os.path.join(self.dir, "np2.csv"), rows)
        write_listing(self.dir)
        cells = target_row(run(self.dir).stdout, "reduce_scatter: fastest hand-written time / "
                           "mpi time, worst size 8 B..1 KiB", 2)
        self.assertEqual(cells[2], "1.400 (8 B, ring)")
        self.assertEqual(cells[5], "MISS")

    def test_a_collective_without_rows_or_listing_is_a_miss_that_says_so(self):
        rows = [r for r in collective_sweep(90.0) if r["family"] != "alltoall"]
        write(os.path.join(self.dir, "np2.csv"), rows)
        write_listing(self.dir)
        output = run(self.dir).stdout
        cells = target_row(output, "alltoall: fastest hand-written busbw / mpi busbw, worst size "
                           "4..64 MiB", 2)
        self.assertEqual(cells[2:4], ["n/a", "no alltoall rows at 4..64 MiB in np2.csv"])
        self.assertEqual(cells[5], "MISS")
        os.remove(os.path.join(self.dir, "algorithms.csv"))
        cells = target_row(run(self.dir).stdout, "every collective: fastest hand-written vs mpi", 2)
        self.assertEqual(cells[3], "no algorithms.csv (collbench --list-algorithms --csv)")
        self.assertEqual(cells[5], "MISS")

    def test_oversubscribed_rank_counts_judge_no_collective_target(self):
        output = self.collective_report(110.0, "--all-rows", "2")
        self.assertNotIn("reduce_scatter: fastest", output)
        self.assertNotIn("every collective", output)

    def test_near_shortfall_counts_every_collective(self):
        path = os.path.join(self.dir, "np2_part1_a1.csv")
        rows = collective_sweep(90.0)
        for r in rows:  # only reduce_scatter's mpi at 8 MiB is far
            if r["family"] == "reduce_scatter" and r["algorithm"] == "mpi" and r["bytes"] > 8:
                r["core_handoff_ns"] = 250
        write(path, rows)
        self.assertEqual(run("--near-shortfall", "100", "3", path).stdout, "8388608B\n")

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
