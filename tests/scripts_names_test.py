#!/usr/bin/python3
"""Algorithm and collective names in the scripts come from the data, not
from lists typed into them: collbench_csv's algorithm_order() and
median_per_key(), every script given a CSV with an algorithm no script has
heard of (it must be reported, never dropped), a CSV of every collective
(allreduce, reduce_scatter, allgather: a table and a plot each, in the
order of the data; the allreduce-only scripts unchanged by the others' rows),
and `collbench --list-algorithms --csv` read as the scripts read it.

Usage: scripts_names_test.py SOURCE_DIR [COLLBENCH [COLLBENCH_FIT]]
(COLLBENCH: the collbench executable; without it the listing test is
skipped. Runs it as an MPI singleton. COLLBENCH_FIT: collbench-fit; without
it the fit-plot test of the collectives is skipped.)"""

import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else
                         os.path.join(os.path.dirname(__file__), ".."))
COLLBENCH = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else None
COLLBENCH_FIT = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else None
SCRIPTS = os.path.join(SOURCE, "scripts")
sys.path.insert(0, SCRIPTS)
PYTHON = "/usr/bin/python3"  # the one with matplotlib (plot.py)
# scripts/run.sh's main CSV of every collective at NP=4 (run 20261202T102746Z-f2cace).
REFERENCE_RUN = os.path.join(SOURCE, "tests", "report_oversubscribed.csv")
NETSIM_RUN = os.path.join(SOURCE, "results", "netsim", "uniform")
# 2 netsim hosts x 2 ranks placed by slot (characterize.sh --ppn 2 --map-by slot): the
# by_slot run of results/netsim/two_level/ (git show f1c7a0e:results/netsim/two_level/by_slot/...),
# its run.env and its allreduce ring and hierarchical rows (sweep, fit), the rows TwoLevelTest reads.
TWO_LEVEL_RUN = os.path.join(SOURCE, "tests", "two_level_by_slot")
# A real run of every collective: mpirun -np 4 collbench --families
# allreduce,reduce_scatter,allgather,p2p,local,exchange --workload resnet50:ddp
# --sizes 8B:1MiB:x8 --samples 3 --warmup 1 --check (MPI over shared memory).
COLLECTIVES_RUN = os.path.join(SOURCE, "tests", "scripts_collectives.csv")
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


def copy_run(source, out):
    """A copy of the characterize.sh run `source` of results/, its sweep as
    characterize.sh writes it: results/ keeps each run's sweep as one
    sweep/all.csv, here split back into the per-job files the tests edit
    (sweep/allreduce_<transport>_p<p>.csv, collectives_<transport>_p<p>.csv,
    the point-to-point and local rows in one more)."""
    shutil.copytree(source, out)
    merged = os.path.join(out, "sweep", "all.csv")
    files = {}
    for row in read(merged):
        family = row["family"]
        if family in ("p2p", "local"):
            name = "p2p_and_local.csv"
        elif family == "allreduce":
            name = f"allreduce_{row['transport']}_p{row['ranks']}.csv"
        else:
            name = f"collectives_{row['transport']}_p{row['ranks']}.csv"
        files.setdefault(name, []).append(row)
    os.remove(merged)
    for name, rows in files.items():
        write(os.path.join(out, "sweep", name), rows)


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
        # The first table of each heading that names it: allreduce's (only
        # allreduce has a tree), in its place among the other algorithms.
        # (The large models' exchanges at 2 ranks, without a tree, come first.)
        headers = {}
        for cells in map(table_cells, result.stdout.splitlines()):
            if cells and (MADE_UP in cells or f"{MADE_UP} / mpi" in cells):
                headers.setdefault(cells[0], cells)
        self.assertEqual(sorted(headers), ["size", "workload"], result.stdout)
        self.assertEqual(headers["size"][4:7],
                         ["ring / mpi", f"{MADE_UP} / mpi", "recursive_doubling / mpi"])
        self.assertEqual(headers["workload"][3:6], ["ring", MADE_UP, "recursive_doubling"])

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
        self.assertTrue(os.path.exists(os.path.join(self.dir, "plots",
                                                    "sweep_allreduce_mpi_p4_f32.png")))

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
        copy_run(NETSIM_RUN, out)
        for folder in ("sweep", "fit"):
            for name in os.listdir(os.path.join(out, folder)):
                path = os.path.join(out, folder, name)
                if name.endswith(".csv"):
                    write(path, renamed(read(path), "tree", MADE_UP))
        result = run("characterize_report.py", "netsim-check", "--out", out)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn(f"| mpi allreduce {MADE_UP}: bottom-up error at >= 1 MiB | max 5.1% (p=2, "
                      "4 MiB; 6 points) | <= 20% | pass |", result.stdout)
        self.assertIn("all 14 checks passed", result.stdout + result.stderr)
        result = run("characterize_report.py", "report", "--out", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(out, "report.md"), encoding="utf-8") as handle:
            report = handle.read()
        self.assertIn(f"| {MADE_UP} | ", report)


LISTING_HEADER = ("order,collective,algorithm,implementation,cost_model,reduces_on_every_rank,"
                  "summary")


class AlgorithmListingTest(unittest.TestCase):
    """read_algorithm_listing on listings written here: one name in several
    collectives is one name; a (collective, algorithm) pair twice is refused."""

    def listing(self, *lines):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        path = os.path.join(folder.name, "algorithms.csv")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("\n".join((LISTING_HEADER,) + lines) + "\n")
        return path

    def test_a_name_of_several_collectives_is_listed_once_in_every_collectives_order(self):
        from collbench_csv import read_algorithm_listing
        path = self.listing("1,allreduce,ring,hand-written,yes,yes,a",
                            "2,allreduce,tree,hand-written,yes,no,b",
                            "3,allreduce,mpi,mpi,no,no,c",
                            "4,reduce_scatter,ring,hand-written,yes,yes,d",
                            f"5,reduce_scatter,{MADE_UP},hand-written,yes,yes,e",
                            "6,reduce_scatter,mpi,mpi,no,no,f",
                            "7,allgather,ring,hand-written,yes,no,g")
        self.assertEqual(read_algorithm_listing(path), ["ring", "tree", MADE_UP, "mpi"])

    def test_a_pair_listed_twice_is_refused(self):
        from collbench_csv import InputError, read_algorithm_listing
        path = self.listing("1,allreduce,ring,hand-written,yes,yes,a",
                            "2,allgather,ring,hand-written,yes,no,b",
                            "3,allgather,mpi,mpi,no,no,c",
                            "4,allgather,ring,hand-written,yes,no,d")
        with self.assertRaisesRegex(InputError,
                                    "algorithm ring of allgather listed more than once"):
            read_algorithm_listing(path)

    def test_a_listing_without_the_collective_column_is_refused(self):
        from collbench_csv import InputError, read_algorithm_listing
        path = self.listing()
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("order,algorithm,implementation,cost_model\n1,ring,hand-written,yes\n")
        with self.assertRaisesRegex(InputError, "missing column collective"):
            read_algorithm_listing(path)


def sweep_tables(summary):
    """[(title, header cells)] of summarize.py's tables, in print order."""
    lines = summary.splitlines()
    return [(line, table_cells(lines[i + 2])) for i, line in enumerate(lines)
            if line.startswith("### ")]


class CollectivesTest(unittest.TestCase):
    """A real run of allreduce, reduce_scatter and allgather (COLLECTIVES_RUN)."""

    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.dir = self.folder.name
        self.rows = read(COLLECTIVES_RUN)

    def tearDown(self):
        self.folder.cleanup()

    def csv(self, name, rows):
        path = os.path.join(self.dir, name)
        write(path, rows)
        return path

    def test_summarize_has_a_table_per_collective_in_the_order_of_the_data(self):
        result = run("summarize.py", COLLECTIVES_RUN)
        self.assertEqual(result.returncode, 0, result.stderr)
        tables = sweep_tables(result.stdout)
        self.assertEqual([title.split(",")[0] for title, _ in tables],
                         ["### allreduce", "### reduce_scatter", "### allgather", "### exchange"])
        self.assertTrue(tables[1][0].startswith("### reduce_scatter, mpi, 4 ranks, f32 sum: "
                                                "fastest per size and time relative to mpi"))
        # allgather reduces nothing: no op in its title.
        self.assertTrue(tables[2][0].startswith("### allgather, mpi, 4 ranks, f32: fastest"))
        self.assertEqual(tables[1][1][4:], ["ring / mpi", "recursive_halving / mpi", "mpi / mpi"])
        self.assertEqual(tables[2][1][4:], ["ring / mpi", "recursive_doubling / mpi", "mpi / mpi"])
        self.assertEqual(tables[0][1][4:], [f"{a} / mpi" for a in (
            "ring", "tree", "recursive_doubling", "rabenseifner", "ps_central", "ps_sharded",
            "mpi")])
        # Every size of each sweep is a line of its table (8 B .. 256 KiB, x8).
        for collective, (title, _) in zip(("allreduce", "reduce_scatter", "allgather"), tables):
            block = result.stdout.split(title)[1].split("###")[0]
            self.assertEqual([cells[0] for cells in map(table_cells, block.splitlines())
                              if cells][2:],
                             ["8 B", "64 B", "512 B", "4 KiB", "32 KiB", "256 KiB"], collective)
        self.assertIn("--check: 150 of 150 rows correct", result.stdout)

    def test_summarize_follows_the_file_order_of_the_collectives(self):
        first = [r for r in self.rows if r["family"] == "allgather"]
        path = self.csv("allgather_first.csv",
                        first + [r for r in self.rows if r["family"] != "allgather"])
        result = run("summarize.py", path)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual([title.split(",")[0] for title, _ in sweep_tables(result.stdout)],
                         ["### allgather", "### allreduce", "### reduce_scatter", "### exchange"])

    def test_summarize_of_a_csv_without_the_collective_column(self):
        """A CSV from before the collective column: its allreduce rows are
        allreduce's table, as they were, and exchange stays."""
        old = [{k: v for k, v in r.items() if k != "collective"} for r in self.rows
               if r["family"] not in ("reduce_scatter", "allgather")]
        result = run("summarize.py", self.csv("old.csv", old))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual([title.split(",")[0] for title, _ in sweep_tables(result.stdout)],
                         ["### allreduce", "### exchange"])
        with_column = run("summarize.py", self.csv("new.csv", [
            r for r in self.rows if r["family"] not in ("reduce_scatter", "allgather")]))
        self.assertEqual(result.stdout, with_column.stdout)

    def test_plot_sweep_draws_each_collective(self):
        out = os.path.join(self.dir, "plots")
        result = run("plot.py", "sweep", COLLECTIVES_RUN, "--out", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.split(), [os.path.join(out, name) for name in (
            "sweep_allreduce_mpi_p4_f32.png", "sweep_reduce_scatter_mpi_p4_f32.png",
            "sweep_allgather_mpi_p4_f32.png", "exchange_mpi_p4.png")])

    def test_plot_sweep_takes_busbw_from_the_csv(self):
        """busbw is the CSV's (the collective's factor: (p−1)/p for
        reduce_scatter), never allreduce's 2(p−1)/p applied to every row."""
        from collbench_report import plot
        [row] = [dict(r, size=float(r["bytes"])) for r in self.rows
                 if r["benchmark"] == "reduce_scatter/ring/262144"]
        time = float(row["median_us"])
        label, busbw = plot.bandwidths([row], [(262144.0, time)])
        self.assertEqual(label, "bus bandwidth (GB/s)")
        self.assertEqual(busbw, [float(row["busbw_GBps"])])
        algbw = 262144 / (time * 1e-6) / 1e9
        self.assertAlmostEqual(busbw[0] / algbw, 3 / 4, places=3)
        # Without the column: the algorithm bandwidth, said so.
        del row["busbw_GBps"]
        label, bandwidth = plot.bandwidths([row], [(262144.0, time)])
        self.assertIn("algorithm bandwidth", label)
        self.assertAlmostEqual(bandwidth[0], algbw)

    @unittest.skipIf(COLLBENCH_FIT is None, "no collbench-fit executable given")
    def test_plot_fit_draws_each_collective(self):
        fit = os.path.join(self.dir, "fit")
        fitted = subprocess.run([COLLBENCH_FIT, COLLECTIVES_RUN, "--out-dir", fit, "--brief"],
                                capture_output=True, text=True)
        self.assertEqual(fitted.returncode, 0, fitted.stderr)
        for collective, op in (("allreduce", " sum"), ("reduce_scatter", " sum"),
                               ("allgather", " -")):
            self.assertRegex(fitted.stdout, rf"\nselection {collective} mpi intra f32{op} "
                                            r"ranks=4 measured: ")
        out = os.path.join(self.dir, "plots")
        result = run("plot.py", "fit", "--predictions", os.path.join(fit, "predictions.csv"),
                     "--out", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(sorted(os.path.basename(p) for p in result.stdout.split()), [
            "fit_allgather_mpi_intra_f32_p4.png", "fit_allreduce_mpi_intra_f32_sum_p4.png",
            "fit_p2p_mpi_intra.png", "fit_reduce_f32_sum.png",
            "fit_reduce_scatter_mpi_intra_f32_sum_p4.png"])

    def test_plot_fit_tells_the_reduce_collective_from_the_reduce_kernel(self):
        # A collective named like the local kernel: both figures, apart
        # (plot.py once took the collective's rows for the kernel's).
        rows = []
        for row in self.rows:
            if row["family"] in ("p2p", "local"):
                rows.append(row)
            elif (row["family"] == "allreduce" and not row["workload"]
                  and row["algorithm"] in ("tree", "mpi")):
                algorithm = "binomial" if row["algorithm"] == "tree" else "mpi"
                rows.append(dict(row, family="reduce", collective="reduce", algorithm=algorithm,
                                 benchmark=f"reduce/{algorithm}/{row['bytes']}"))
        fit = os.path.join(self.dir, "fit")
        fitted = subprocess.run([COLLBENCH_FIT, self.csv("reduce.csv", rows), "--out-dir", fit,
                                 "--brief"], capture_output=True, text=True)
        self.assertEqual(fitted.returncode, 0, fitted.stderr)
        out = os.path.join(self.dir, "plots")
        result = run("plot.py", "fit", "--predictions", os.path.join(fit, "predictions.csv"),
                     "--out", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(sorted(os.path.basename(p) for p in result.stdout.split()), [
            "fit_p2p_mpi_intra.png", "fit_reduce_f32_sum.png",
            "fit_reduce_mpi_intra_f32_sum_p4.png"])

    def allreduce_only(self):
        """The run without its reduce_scatter and allgather rows."""
        return [r for r in self.rows if r["family"] not in ("reduce_scatter", "allgather")]

    def test_compare_transports_is_allreduce_only(self):
        def compared(rows):
            other = [dict(r, transport="inproc") for r in rows]
            return run("compare_transports.py", self.csv("base.csv", rows),
                       self.csv("other.csv", other))
        every, allreduce = compared(self.rows), compared(self.allreduce_only())
        self.assertEqual(every.returncode, 0, every.stderr)
        self.assertEqual(every.stdout, allreduce.stdout)
        self.assertIn("| bytes | ring | tree | recursive_doubling |", every.stdout)

    @unittest.skipIf(COLLBENCH_FIT is None, "no collbench-fit executable given")
    def test_perf_report_is_allreduce_only(self):
        def reported(rows, name):
            folder = os.path.join(self.dir, name)
            os.mkdir(folder)
            write(os.path.join(folder, "np4.csv"), rows)
            # The fit (fit_np4: --all-rows 4) says which algorithms are hand-written.
            fitted = subprocess.run([COLLBENCH_FIT, os.path.join(folder, "np4.csv"), "--out-dir",
                                     os.path.join(folder, "fit_np4")], capture_output=True,
                                    text=True)
            self.assertEqual(fitted.returncode, 0, fitted.stderr)
            return run("perf_report.py", folder, "--all-rows", "4")
        every, allreduce = reported(self.rows, "every"), reported(self.allreduce_only(), "ar")
        self.assertEqual(every.returncode, 0, every.stderr)
        # Only the table of the sweep's jobs (its rows, near and all) counts
        # the other rows.
        job = f"| {self.rows[0]['run_id']} |"
        def without_jobs(text):
            return [line for line in text.splitlines() if not line.startswith(job)]
        self.assertEqual(without_jobs(every.stdout), without_jobs(allreduce.stdout))
        self.assertNotEqual(every.stdout, allreduce.stdout)
        # The fastest hand-written allreduce per small size, from its own rows.
        self.assertRegex(every.stdout, r"\n\| 8 B \| [a-z_]+ \| [0-9.]+ \| [0-9.]+ \|")

    def test_compare_osu_table_is_allreduce_only(self):
        run_id = self.rows[0]["run_id"]
        every = run("compare_osu_table.py", "iterations", COLLECTIVES_RUN, run_id)
        allreduce = run("compare_osu_table.py", "iterations",
                        self.csv("ar.csv", self.allreduce_only()), run_id)
        self.assertEqual(every.returncode, 0, every.stderr)
        self.assertEqual(every.stdout, allreduce.stdout)
        sizes = {r["bytes"] for r in self.rows if r["benchmark"].startswith("allreduce/mpi/")}
        self.assertEqual(len(every.stdout.splitlines()), len(sizes))

    def netsim_with(self, collective, error, allreduce_error=None):
        """The netsim run with `collective`'s ring beside allreduce's: its rows
        are allreduce ring's (sweep/collectives_mpi_p*.csv, as characterize.sh
        writes them; models.csv's bottom_up rows), its bottom-up predictions
        `error` off the measured times (predicted = (1 + error) × measured),
        one point (p=4, 4 MiB) `allreduce_error` off when given, the same for
        allreduce ring's prediction there."""
        out = os.path.join(self.dir, f"netsim_{len(os.listdir(self.dir))}")
        copy_run(NETSIM_RUN, out)
        ring = dict(algorithm="ring", family=collective, collective=collective)
        for p in (2, 4):
            rows = [dict(row, **ring, benchmark=row["benchmark"].replace("allreduce",
                                                                           collective))
                    for row in read(os.path.join(out, "sweep", f"allreduce_mpi_p{p}.csv"))
                    if row["algorithm"] == "ring"]
            write(os.path.join(out, "sweep", f"collectives_mpi_p{p}.csv"), rows)
        path = os.path.join(out, "fit", "models.csv")
        rows = read(path)
        write(path, rows + [dict(row, family=collective) for row in rows
                            if row["model"] == "bottom_up" and row["algorithm"] == "ring"])
        path = os.path.join(out, "fit", "predictions.csv")
        rows = read(path)
        added = []
        for row in rows:
            if row["model"] != "bottom_up" or row["algorithm"] != "ring":
                continue
            off = error
            if allreduce_error is not None and (int(row["ranks"]), float(row["bytes"])) == (
                    4, float(f"{4 * MIB:g}")):  # collbench-fit writes bytes as %g
                off = allreduce_error
                row["predicted_us"] = f"{(1 + off) * float(row['measured_us']):g}"
            added.append(dict(row, family=collective,
                              predicted_us=f"{(1 + off) * float(row['measured_us']):g}",
                              rel_err=f"{off:g}"))
        write(path, rows + added)
        return out

    def checked(self, *arguments):
        return run("characterize_report.py", "netsim-check", "--out",
                   self.netsim_with(*arguments))

    def test_characterize_netsim_check_bounds_every_collective_at_10_percent(self):
        """A collective's bottom-up error is held to 10% at every size >= 1
        MiB, allreduce's to its 20%: a prediction 15% off (at one point) fails
        reduce_scatter's check and passes allreduce's."""
        within = self.checked("reduce_scatter", 0.09)
        self.assertEqual(within.returncode, 0, within.stdout + within.stderr)
        self.assertRegex(within.stdout, r"\| mpi reduce_scatter ring: bottom-up error at >= 1 MiB "
                         r"\| max 9\.0% \(p=\d, \d+ MiB; 6 points\) \| <= 10% \| pass \|")
        self.assertIn("all 15 checks passed", within.stderr)
        mutant = self.checked("reduce_scatter", 0.09, 0.15)
        self.assertEqual(mutant.returncode, 1, mutant.stdout + mutant.stderr)
        self.assertIn("| mpi reduce_scatter ring: bottom-up error at >= 1 MiB | max 15.0% (p=4, "
                      "4 MiB; 6 points) | <= 10% | **FAIL** |", mutant.stdout)
        self.assertIn("| mpi allreduce ring: bottom-up error at >= 1 MiB | max 15.0% (p=4, "
                      "4 MiB; 6 points) | <= 20% | pass |", mutant.stdout)
        self.assertIn("1 of 15 checks failed", mutant.stderr)
        below = self.checked("allgather", -0.15)
        self.assertEqual(below.returncode, 1, below.stdout + below.stderr)
        self.assertRegex(below.stdout, r"\| mpi allgather ring: bottom-up error at >= 1 MiB "
                         r"\| max 15\.0% \(p=\d, \d+ MiB; 6 points\) \| <= 10% \| \*\*FAIL\*\* \|")

    def test_characterize_netsim_check_fails_a_modelled_algorithm_without_predictions(self):
        """A modelled algorithm of the sweep whose predictions are missing
        fails its check instead of being left out."""
        out = self.netsim_with("broadcast", 0.0)
        path = os.path.join(out, "fit", "predictions.csv")
        write(path, [row for row in read(path) if row["family"] != "broadcast"])
        result = run("characterize_report.py", "netsim-check", "--out", out)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("| broadcast ring: bottom-up predictions at >= 1 MiB | none in "
                      "fit/predictions.csv | some | **FAIL** |", result.stdout)

    def test_characterize_report_tables_every_collective(self):
        """report.md has a sweep table and the bottom-up errors point by point
        for every collective of the sweep."""
        out = self.netsim_with("allgather", 0.05)
        result = run("characterize_report.py", "report", "--out", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(out, "report.md"), encoding="utf-8") as handle:
            report = handle.read()
        self.assertIn("**allgather, mpi, p = 4**: median time (busbw) per size", report)
        self.assertIn("| allgather | mpi | ring | 6 | 5.0% | 5.0% |", report)
        self.assertIn("| allgather | mpi | ring | 4 | 16 MiB | 1147.9 ms | 1093.3 ms | +5.0% |",
                      report)
        self.assertIn("| allreduce | mpi | ring | 4 | 16 MiB | 1114.3 ms | 1093.3 ms | +1.9% |",
                      report)


class TwoLevelTest(unittest.TestCase):
    """characterize_report.py two-level on a copy of the 2x2 by-slot run
    (TWO_LEVEL_RUN), its allreduce ring and hierarchical rows only (the
    measured run's other algorithms may miss by chance), with a
    reduce_scatter beside them made of those rows (as netsim_with
    makes one): every collective's two-level errors are judged, the
    allreduce speedup too."""

    LABEL = "by_slot (map-by slot, 2 ranks per host, hosts h0 h1)"

    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.dir = self.folder.name

    def tearDown(self):
        self.folder.cleanup()

    def with_reduce_scatter(self, error, one_point_error=None, slower_hierarchical=1.0):
        """The copy; reduce_scatter's predictions `error` off its measured
        times, hierarchical's at p=4, 4 MiB `one_point_error` off when given;
        allreduce hierarchical's times × `slower_hierarchical`."""
        out = os.path.join(self.dir, str(len(os.listdir(self.dir))), "by_slot")
        copy_run(TWO_LEVEL_RUN, out)
        sweep = os.path.join(out, "sweep")
        for name in os.listdir(sweep):
            if name.startswith("collectives_"):
                os.remove(os.path.join(sweep, name))
        copied = ("ring", "hierarchical")
        reduce_scatter = dict(family="reduce_scatter", collective="reduce_scatter")
        path = os.path.join(sweep, "allreduce_mpi_p4.csv")
        rows = [row for row in read(path) if row["algorithm"] in copied]
        write(os.path.join(sweep, "collectives_mpi_p4.csv"),
              [dict(row, **reduce_scatter,
                    benchmark=row["benchmark"].replace("allreduce", "reduce_scatter"))
               for row in rows if row["algorithm"] in copied])
        for row in rows:
            if row["algorithm"] == "hierarchical":
                row["median_us"] = f"{float(row['median_us']) * slower_hierarchical:g}"
        write(path, rows)
        path = os.path.join(out, "fit", "models.csv")
        rows = [row for row in read(path)
                if row["family"] == "allreduce" and row["algorithm"] in copied]
        write(path, rows + [dict(row, family="reduce_scatter") for row in rows
                            if row["model"] == "bottom_up_two_level" and row["algorithm"] in copied])
        path = os.path.join(out, "fit", "predictions.csv")
        rows = [row for row in read(path)
                if row["family"] == "allreduce" and row["algorithm"] in copied]
        added = []
        for row in rows:
            if row["model"] != "bottom_up_two_level" or row["algorithm"] not in copied:
                continue
            off = error
            if one_point_error is not None and row["algorithm"] == "hierarchical" and (
                    int(row["ranks"]), float(row["bytes"])) == (4, float(4 * MIB)):
                off = one_point_error
            added.append(dict(row, family="reduce_scatter",
                              predicted_us=f"{(1 + off) * float(row['measured_us']):g}",
                              rel_err=f"{off:g}"))
        write(path, rows + added)
        return out

    def two_level(self, out):
        return run("characterize_report.py", "two-level", "--out", out)

    def test_every_collective_is_tabled_and_judged(self):
        result = self.two_level(self.with_reduce_scatter(0.05))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn(f"**{self.LABEL}**: allreduce median time", result.stdout)
        self.assertIn(f"**{self.LABEL}**: reduce_scatter median time", result.stdout)
        for algorithm in ("ring", "hierarchical"):
            self.assertIn(f"| {self.LABEL}: reduce_scatter {algorithm} two-level bottom-up error at "
                          ">= 1 MiB | max 5.0% (p=4, 16 MiB; 3 points) | <= 15% | pass |",
                          result.stdout)
        self.assertRegex(result.stdout, rf"\| {re.escape(self.LABEL)}: mpi p=4 ring / hierarchical "
                         r"at 16 MiB \| 1\.\d\dx \(.*\) \| >= 1\.30x \| pass \|")

    def test_one_point_off_fails_its_collective(self):
        result = self.two_level(self.with_reduce_scatter(0.05, one_point_error=-0.2))
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn(f"| {self.LABEL}: reduce_scatter hierarchical two-level bottom-up error at "
                      ">= 1 MiB | max 20.0% (p=4, 4 MiB; 3 points) | <= 15% | **FAIL** |",
                      result.stdout)
        self.assertIn(f"| {self.LABEL}: reduce_scatter ring two-level bottom-up error at "
                      ">= 1 MiB | max 5.0% (p=4, 16 MiB; 3 points) | <= 15% | pass |",
                      result.stdout)

    def test_a_modelled_algorithm_without_predictions_fails(self):
        out = self.with_reduce_scatter(0.05)
        path = os.path.join(out, "fit", "predictions.csv")
        write(path, [row for row in read(path)
                     if (row["family"], row["algorithm"]) != ("reduce_scatter", "hierarchical")])
        result = self.two_level(out)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn(f"| {self.LABEL}: reduce_scatter hierarchical two-level bottom-up error at "
                      ">= 1 MiB | none in fit/predictions.csv | some | **FAIL** |", result.stdout)

    def test_a_slower_hierarchical_fails_the_speedup(self):
        result = self.two_level(self.with_reduce_scatter(0.05, slower_hierarchical=1.5))
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertRegex(result.stdout, rf"\| {re.escape(self.LABEL)}: mpi p=4 ring / hierarchical "
                         r"at 16 MiB \| 0\.\d\dx \(.*\) \| >= 1\.30x \| \*\*FAIL\*\* \|")


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
            _, rows = read_table(path, ("order", "collective", "algorithm", "implementation",
                                        "cost_model", "reduces_on_every_rank", "summary"),
                                 "this test")
            self.assertEqual(len(names), len(set(names)))
            self.assertEqual(set(row["algorithm"] for row in rows), set(names))
            # Each collective's algorithms come in its own order among the names.
            collectives = list(dict.fromkeys(row["collective"] for row in rows))
            self.assertGreater(len(collectives), 1)
            for collective in collectives:
                own = [row["algorithm"] for row in rows if row["collective"] == collective]
                self.assertEqual([name for name in names if name in own], own)
            for row in rows:
                self.assertIn(row["implementation"], ("hand-written", "mpi"))
                # collbench-fit fits its own cost terms exactly to the hand-written ones.
                self.assertEqual(row["cost_model"],
                                 "yes" if row["implementation"] == "hand-written" else "no")
                self.assertTrue(row["summary"])
            # The names are those the harness accepts: its --help lists each.
            help_text = subprocess.run([COLLBENCH, "--help"], capture_output=True,
                                       text=True).stdout
            # Each library's forced algorithms (ompi_*, mpich_*) share one line per
            # collective.
            for name in names:
                prefix = next((p for p in ("ompi_", "mpich_") if name.startswith(p)), None)
                if prefix:
                    self.assertRegex(help_text, rf"\n +{prefix}\* +.*\b{name}\b")
                else:
                    self.assertRegex(help_text, rf"\n +{name} +")
            # plot.py takes the listing.
            result = run("plot.py", "sweep", REFERENCE_RUN, "--out", os.path.join(folder, "p"),
                         "--algorithms", path)
            self.assertEqual(result.returncode, 0, result.stderr)
            # Every algorithm of the listing is drawn in a (colour, marker)
            # pair of its own, though they outnumber the colours.
            from collbench_report.figures import CYCLE, Palette
            palette = Palette(names)
            self.assertGreater(len(names), len(CYCLE))
            styles = [(palette.color(name), palette.marker(name)) for name in names]
            self.assertEqual(len(styles), len(set(styles)))


class CompareOsuTest(unittest.TestCase):
    """compare_osu_table.py's verdict: within 10% (or 0.05 us), else
    "spread" where OSU's own rounds are further apart than 10%, else "no"."""

    def test_verdict(self):
        from collbench_report.compare_osu import verdict
        self.assertEqual(verdict(True, 0.5), "yes")
        self.assertEqual(verdict(False, 0.11), "spread")
        self.assertEqual(verdict(False, 0.10), "no")

    def test_the_committed_comparison_counts_every_size_once(self):
        folder = os.path.join(SOURCE, "results", "osu")
        result = run("compare_osu_table.py", "table", os.path.join(folder, "collbench.csv"),
                     os.path.join(folder, "osu.txt"))
        self.assertIn(result.returncode, (0, 1), result.stderr)
        rows = [line.split("|") for line in result.stdout.splitlines()
                if re.match(r"\| [a-z]+ \| \d", line)]
        verdicts = [row[9].strip() for row in rows]
        self.assertTrue(set(verdicts) <= {"yes", "no", "spread"}, verdicts)
        for row, judged in zip(rows, verdicts):
            spread = float(row[15].strip().rstrip("%"))
            if judged == "spread":
                self.assertGreater(spread, 10)
        counts = re.search(r"within 10% or 0.05 µs: (\d+) of (\d+) sizes; not within: (\d+); "
                           r"not within, where OSU's own rounds were more than 10% apart: (\d+)",
                           result.stdout)
        self.assertIsNotNone(counts, result.stdout)
        yes, total, no, spread = map(int, counts.groups())
        self.assertEqual(total, len(rows))
        self.assertEqual((yes, no, spread), (verdicts.count("yes"), verdicts.count("no"),
                                             verdicts.count("spread")))
        self.assertEqual(result.returncode, 0 if yes == total else 1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
