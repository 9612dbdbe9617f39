#!/usr/bin/python3
"""Algorithm names in the scripts come from the data, not from lists typed
into them: collbench_csv's algorithm_order() and median_per_key(), every
script given a CSV with an algorithm no script has heard of (it must be
reported, never dropped), and `collbench --list-algorithms --csv` read as the
scripts read it.

Usage: scripts_names_test.py SOURCE_DIR [COLLBENCH]
(COLLBENCH: the collbench executable; without it the listing test is
skipped. Runs it as an MPI singleton.)"""

import csv
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else
                         os.path.join(os.path.dirname(__file__), ".."))
COLLBENCH = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else None
SCRIPTS = os.path.join(SOURCE, "scripts")
sys.path.insert(0, SCRIPTS)
PYTHON = "/usr/bin/python3"  # the one with matplotlib (plot.py)
REFERENCE_RUN = os.path.join(SOURCE, "results", "20261201T104736Z-0cad5b", "collbench.csv")
NETSIM_RUN = os.path.join(SOURCE, "results", "netsim", "uniform")
# No script, and no registry, knows this name.
MADE_UP = "made_up_allreduce"
MIB = 1 << 20


def read(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def write(path, rows, columns=None):
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns or list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def renamed(rows, old, new):
    """`rows` with algorithm `old` called `new` (benchmark names too)."""
    out = []
    for row in rows:
        row = dict(row)
        if row.get("algorithm") == old:
            row["algorithm"] = new
            if "benchmark" in row:
                row["benchmark"] = row["benchmark"].replace(f"/{old}/", f"/{new}/")
        out.append(row)
    return out


def table_cells(line):
    """The cells of a Markdown table line, stripped; [] for other lines."""
    if not line.startswith("|"):
        return []
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def run(script, *arguments):
    return subprocess.run([PYTHON, os.path.join(SCRIPTS, script), *arguments],
                          capture_output=True, text=True, cwd=tempfile.gettempdir())


class AlgorithmOrderTest(unittest.TestCase):
    def test_first_appearance_merged_over_files(self):
        from collbench_csv import algorithm_order
        self.assertEqual(algorithm_order(["ring", "tree", "ring", "mpi"]), ["ring", "tree", "mpi"])
        # Each file ran a part of the registry: ring and tree both before mpi.
        self.assertEqual(algorithm_order(["ring", "mpi"], ["tree", "mpi"]), ["ring", "tree", "mpi"])
        self.assertEqual(algorithm_order(["tree", "mpi"], ["ring", "tree"]), ["ring", "tree", "mpi"])
        # An unknown name is listed where the data puts it, once.
        self.assertEqual(algorithm_order(["ring", MADE_UP, "mpi"], [MADE_UP]),
                         ["ring", MADE_UP, "mpi"])
        # Files that disagree (--algorithms in two orders): every name, once.
        self.assertEqual(sorted(algorithm_order(["a", "b"], ["b", "a"])), ["a", "b"])
        self.assertEqual(algorithm_order(), [])

    def test_median_per_key_leaves_out_rows_without_a_time(self):
        from collbench_csv import median_per_key
        rows = [{"algorithm": "ring", "median_us": "3"}, {"algorithm": "ring", "median_us": "1"},
                {"algorithm": "ring", "median_us": "2"}, {"algorithm": "tree", "median_us": ""},
                {"algorithm": "tree", "median_us": "5"}, {"algorithm": "mpi", "median_us": ""}]
        self.assertEqual(median_per_key(rows, lambda r: r["algorithm"]), {"ring": 2, "tree": 5})


class MadeUpAlgorithmTest(unittest.TestCase):
    """A CSV whose tree rows are renamed to an algorithm no script knows."""

    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.dir = self.folder.name
        self.csv = os.path.join(self.dir, "run.csv")
        write(self.csv, renamed(read(REFERENCE_RUN), "tree", MADE_UP))

    def tearDown(self):
        self.folder.cleanup()

    def test_summarize_reports_it_in_its_place(self):
        result = run("summarize.py", self.csv)
        self.assertEqual(result.returncode, 0, result.stderr)
        headers = {cells[0]: cells for cells in map(table_cells, result.stdout.splitlines())
                   if cells}
        self.assertEqual(headers["size"][4:7],
                         ["ring / mpi", f"{MADE_UP} / mpi", "recursive_doubling / mpi"])
        self.assertEqual(headers["workload"][2:5], ["ring", MADE_UP, "recursive_doubling"])

    def test_compare_transports_reports_it(self):
        other = os.path.join(self.dir, "other.csv")
        rows = read(self.csv)
        for row in rows:
            row["transport"] = "inproc"
        write(other, rows)
        result = run("compare_transports.py", self.csv, other)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(f"| bytes | ring | {MADE_UP} | recursive_doubling |", result.stdout)

    def test_plot_sweep_plots_it(self):
        result = run("plot.py", "sweep", self.csv, "--out", os.path.join(self.dir, "plots"))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(os.path.exists(os.path.join(self.dir, "plots", "sweep_mpi_p4_f32.png")))

    def test_perf_report_counts_it_as_hand_written_when_the_fit_models_it(self):
        """np2.csv with the made-up algorithm and mpi at 8 B and 1 MiB, a fit
        that gave it cost terms of its own: it is the fastest hand-written at
        8 B and has its bottom-up target."""
        columns = ["benchmark", "family", "algorithm", "bytes", "repetition", "median_us",
                   "run_id", "workload"]
        rows = []
        for size in (8, MIB):
            for repetition in range(3):
                for algorithm, us in ((MADE_UP, 10 * (1 + size / MIB)), ("mpi", 11)):
                    rows.append({"benchmark": f"allreduce/{algorithm}/{size}",
                                 "family": "allreduce", "algorithm": algorithm, "bytes": size,
                                 "repetition": repetition, "median_us": us, "run_id": "job",
                                 "workload": ""})
        write(os.path.join(self.dir, "np2.csv"), rows, columns)
        fit = os.path.join(self.dir, "fit_np2_near")
        os.mkdir(fit)
        write(os.path.join(fit, "models.csv"),
              [{"model": "bottom_up_by_size", "family": "allreduce", "algorithm": MADE_UP,
                "terms": "own", "ranks": 2, "note": "", "beta_GBps": ""},
               {"model": "top_down", "family": "allreduce", "algorithm": "mpi",
                "terms": "lower_bound", "ranks": 2, "note": "", "beta_GBps": ""}])
        write(os.path.join(fit, "predictions.csv"),
              [{"model": "bottom_up_by_size", "family": "allreduce", "algorithm": MADE_UP,
                "ranks": 2, "bytes": MIB, "measured_us": 20, "predicted_us": 19}])
        result = run("perf_report.py", self.dir)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(f"| 8 B | {MADE_UP} | 10.00 | 11.00 |", result.stdout)
        self.assertIn(f"| {MADE_UP}: measured / bottom-up model by size, worst size >= 1 MiB | 2 "
                      "| 1.053 (1 MiB) |", result.stdout)
        self.assertIn(f"| {MADE_UP} | 1.05 |", result.stdout)

    def test_characterize_netsim_check_judges_its_model(self):
        """The netsim run with tree renamed everywhere (sweep, fit): its
        bottom-up error is checked, as tree's was."""
        out = os.path.join(self.dir, "netsim")
        shutil.copytree(NETSIM_RUN, out)
        for folder in ("sweep", "fit"):
            for name in os.listdir(os.path.join(out, folder)):
                path = os.path.join(out, folder, name)
                if name.endswith(".csv"):
                    write(path, renamed(read(path), "tree", MADE_UP))
        result = run("characterize_report.py", "netsim-check", "--out", out)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn(f"| mpi {MADE_UP}: bottom-up error at >= 1 MiB | max 5.1% (p=2, 4 MiB; "
                      "6 points) | <= 20% | pass |", result.stdout)
        self.assertIn("all 14 checks passed", result.stdout + result.stderr)
        result = run("characterize_report.py", "report", "--out", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(out, "report.md"), encoding="utf-8") as handle:
            report = handle.read()
        self.assertIn(f"| {MADE_UP} | ", report)


@unittest.skipIf(COLLBENCH is None, "no collbench executable given")
class ListAlgorithmsTest(unittest.TestCase):
    def test_the_listing_reads_as_scripts_read_it(self):
        from collbench_csv import read_algorithm_listing, read_table
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "algorithms.csv")
            with open(path, "w", encoding="utf-8") as handle:
                listed = subprocess.run([COLLBENCH, "--list-algorithms", "--csv"], stdout=handle,
                                        stderr=subprocess.PIPE, text=True, cwd=folder)
            self.assertEqual(listed.returncode, 0, listed.stderr)
            self.assertEqual(sorted(os.listdir(folder)), ["algorithms.csv"])  # nothing else
            names = read_algorithm_listing(path)
            _, rows = read_table(path, ("order", "algorithm", "implementation", "cost_model",
                                        "reduces_on_every_rank", "summary"), "this test")
            self.assertEqual(len(names), len(set(names)))
            self.assertEqual([row["algorithm"] for row in rows], names)
            for row in rows:
                self.assertIn(row["implementation"], ("hand-written", "mpi"))
                # collbench-fit fits its own cost terms exactly to the hand-written ones.
                self.assertEqual(row["cost_model"],
                                 "yes" if row["implementation"] == "hand-written" else "no")
                self.assertTrue(row["summary"])
            # The names are those the harness accepts: its --help lists each.
            help_text = subprocess.run([COLLBENCH, "--help"], capture_output=True,
                                       text=True).stdout
            for name in names:
                self.assertRegex(help_text, rf"\n  {name} +")
            # plot.py takes the listing.
            result = run("plot.py", "sweep", REFERENCE_RUN, "--out", os.path.join(folder, "p"),
                         "--algorithms", path)
            self.assertEqual(result.returncode, 0, result.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
