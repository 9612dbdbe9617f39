#!/usr/bin/python3
"""scripts/report.py, the main job's report, on the pipeline run.sh runs
after measuring: collbench-fit, then report.py (which runs collbench-predict).

- A recorded run with oversubscription (tests/report_oversubscribed.csv:
  scripts/run.sh at NP=4 on 2 cores, its large models on 2 ranks): the
  warning comes first, and every model error, selection and prediction from
  the 4-rank rows is marked not meaningful, the 2-rank exchanges are not.
- The same rows on hosts with enough cores: no warning, no mark.
- A hand-made selections.csv: size ranges, speedups over mpi and boundary
  margins with known answers.
- Load columns written into the recorded rows: a quiet run has no warning;
  a run with loaded rows opens with one naming how much, which rows and
  sizes, and which figures they feed.
- Bad input: exit status 2, one line, no report.md.

Usage: report_test.py SOURCE_DIR COLLBENCH_FIT COLLBENCH_PREDICT"""

import csv
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.path.abspath(sys.argv.pop(1))
COLLBENCH_FIT = os.path.abspath(sys.argv.pop(1))
COLLBENCH_PREDICT = os.path.abspath(sys.argv.pop(1))
sys.path.insert(0, os.path.join(SOURCE, "scripts"))
from collbench_report.report import NOT_MEANINGFUL  # noqa: E402  (the path is set just above)
from collbench_report.text import format_time  # noqa: E402

PYTHON = "/usr/bin/python3"
REPORT = os.path.join(SOURCE, "scripts", "report.py")
RECORDED = os.path.join(SOURCE, "tests", "report_oversubscribed.csv")


def cells(line):
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def table_after(text, heading):
    """The data rows (cells) of the first Markdown table after `heading`."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("|"):
            rows.append(cells(line))
        elif rows:
            break
    return rows[2:] if rows and set(rows[1][0]) <= set("-:") else rows[1:]


def section(text, heading):
    """The text from `heading` to the next heading of the same level."""
    level = heading.split(" ")[0] + " "
    start = text.index(heading)
    end = text.find("\n" + level, start + len(heading))
    return text[start:end if end >= 0 else len(text)]


def run_report(folder, *arguments):
    return subprocess.run([PYTHON, REPORT, folder, *arguments], capture_output=True, text=True)


class RecordedRun(unittest.TestCase):
    """The pipeline on the recorded 4-ranks-on-2-cores CSV, once per core count."""

    reports = {}

    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.mkdtemp(prefix="report_test.")
        shutil.copy(RECORDED, os.path.join(cls.folder, "collbench.csv"))
        fit = subprocess.run([COLLBENCH_FIT, os.path.join(cls.folder, "collbench.csv"),
                              "--out-dir", os.path.join(cls.folder, "fit")],
                             capture_output=True, text=True)
        assert fit.returncode == 0, fit.stderr
        for cores in (2, 4):
            with open(os.path.join(cls.folder, "machine.txt"), "w", encoding="utf-8") as f:
                f.write(f"host: recorded\ncores: {cores}\ncpus: {cores}\nnuma_nodes: 1\n"
                        "ranks: 4\nbinding: none\nmode: full\n")
            done = run_report(cls.folder, "--predict", COLLBENCH_PREDICT,
                              "--elapsed-seconds", "578")
            assert done.returncode == 0, done.stderr
            with open(os.path.join(cls.folder, "report.md"), encoding="utf-8") as f:
                cls.reports[cores] = f.read()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.folder)

    def test_the_warning_comes_first(self):
        text = self.reports[2]
        self.assertLess(text.index("**Warning: ranks shared cores.**"),
                        text.index("## The network"))
        self.assertIn("The rows of 4 ranks (4 per host) ran on hosts of 2 cores", text)
        self.assertIn("took 9 min 38 s", text.split("\n")[2])

    def test_every_selection_from_shared_cores_is_marked(self):
        titles = [line for line in self.reports[2].split("\n") if line.startswith("### ")
                  and ": mpi intra, " in line]
        self.assertEqual(len(titles), 7, titles)  # every collective of the run
        for title in titles:
            self.assertTrue(title.endswith(NOT_MEANINGFUL), title)

    def test_every_model_error_from_shared_cores_is_marked(self):
        rows = table_after(self.reports[2], "### Model errors")
        self.assertEqual(len(rows), 28)  # every algorithm of every collective with a fit
        for collective, algorithm, where, bottom_up, by_size, top_down in rows:
            self.assertEqual(where, "mpi intra, 4 ranks, f32" + (" sum" if collective in (
                "allreduce", "reduce_scatter", "reduce") else ""))
            for cell in (bottom_up, by_size):
                self.assertIn(cell, (NOT_MEANINGFUL, "–"), (collective, algorithm))
            self.assertEqual(top_down, NOT_MEANINGFUL)
        self.assertTrue(any(row[3] == NOT_MEANINGFUL for row in rows))
        # The recorded run has no sendrecv rows, so no by-size prediction.
        self.assertEqual({row[4] for row in rows}, {"–"})

    def test_the_network_and_the_scaling_from_shared_cores_are_marked(self):
        for row in table_after(self.reports[2], "## The network"):
            self.assertTrue(row[3].endswith(NOT_MEANINGFUL), row)
        scaling = section(self.reports[2], "## How far training scales")
        self.assertIn(NOT_MEANINGFUL, scaling)
        self.assertIn("model resnet50", scaling)
        # A row per algorithm collbench-predict priced (every allreduce algorithm
        # with a cost model of its own: the algorithm table says which).
        with open(os.path.join(self.folder, "scaling", "scaling.csv"), encoding="utf-8") as f:
            predicted = {row["algorithm"] for row in csv.DictReader(f)}
        self.assertGreaterEqual(len(predicted), 11)
        self.assertEqual(len(table_after(scaling, "## How far")), len(predicted))
        # The prediction of this report, linked though it lands in scaling/ after the report.
        self.assertIn("\n- [scaling/scaling.csv](scaling/scaling.csv)\n", self.reports[2])

    def test_only_the_exchanges_that_shared_cores_are_marked(self):
        rows = table_after(self.reports[2], "## One training iteration")
        by_ranks = {ranks: [row[-1] for row in rows if row[1] == ranks] for ranks in ("2", "4")}
        self.assertEqual(len(by_ranks["2"]), 3)  # llama2_7b:fsdp and mixtral, two skews
        self.assertEqual(len(by_ranks["4"]), 4)  # resnet50, bert_base, gpt2 fsdp and tp
        self.assertEqual(set(by_ranks["2"]), {""})
        self.assertEqual(set(by_ranks["4"]), {NOT_MEANINGFUL})

    def test_with_a_core_per_rank_nothing_is_marked(self):
        text = self.reports[4]
        self.assertNotIn("Warning", text)
        self.assertNotIn(NOT_MEANINGFUL, text)
        rows = table_after(text, "### Model errors")
        self.assertTrue(all(row[3] == "–" or row[3].endswith("%") for row in rows))
        self.assertTrue(any(row[3].endswith("%") for row in rows))
        self.assertTrue(all(row[5].endswith("%") for row in rows))


# A selection of four sizes: tree below 1 KiB, ring from 1 KiB, where ring's
# q3 lies below tree's q1; rabenseifner, the same exchange at 2 ranks, within
# noise of ring at 1 KiB.
SELECTIONS = """collective,transport,provider,placement,dtype,op,ranks,bytes,chosen,chosen_median_us,chosen_q1_us,chosen_q3_us,repetitions,lowest_median,lowest_median_us,boundary,previous,margin,gap,same,ties,mpi_median_us,predicted,predicted_us,fitted,fitted_us
allreduce,mpi,,intra,f32,sum,2,8,tree,2,1.9,2.1,3,tree,2,0,,,,,,4,tree,2,tree,2
allreduce,mpi,,intra,f32,sum,2,64,tree,2.5,2.4,2.6,3,ring,2.4,0,,,,,ring,3,tree,2,tree,2
allreduce,mpi,,intra,f32,sum,2,1024,ring,10,9,11,3,ring,10,1,tree,2,1.5,rabenseifner,,12,ring,9,ring,9
allreduce,mpi,,intra,f32,sum,2,1048576,ring,100,99,101,3,ring,100,0,,,,,,200,ring,90,ring,90
"""
MODELS = """model,family,transport,provider,placement,dtype,op,algorithm,terms,ranks,points,min_bytes,max_bytes,alpha_us,beta_ns_per_byte,beta_GBps,gamma_ns_per_byte,gamma_GBps,gamma_source,alpha_rel_stderr,beta_rel_stderr,gamma_rel_stderr,r2_log,median_rel_err,max_rel_err,note,sources
hockney,p2p,mpi,,intra,,,pingpong,alpha+n*beta,2,8,8,1048576,0.5,0.1,10,,,,0.1,0.2,,0.99,0.05,0.1,,x
"""


def write_fit(folder):
    """FOLDER/fit/ with the hand-made selections.csv and models.csv above."""
    os.mkdir(os.path.join(folder, "fit"))
    for name, text in (("selections.csv", SELECTIONS), ("models.csv", MODELS)):
        with open(os.path.join(folder, "fit", name), "w", encoding="utf-8") as f:
            f.write(text)


class HandMadeSelection(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="report_test.")
        with open(RECORDED, encoding="utf-8") as f:
            header, first = f.readline(), f.readline()
        with open(os.path.join(self.folder, "collbench.csv"), "w", encoding="utf-8") as f:
            f.write(header + first.replace(",4,4,1,", ",2,2,1,", 1))
        write_fit(self.folder)
        # plot.py's names: the 2-rank allreduce plots are linked, the 4-rank one not.
        for plot in ("sweep_allreduce_mpi_p2_f32.png", "sweep_allreduce_mpi_p4_f32.png",
                     "fit/fit_allreduce_mpi_intra_f32_sum_p2.png"):
            open(os.path.join(self.folder, plot), "w", encoding="utf-8").close()

    def tearDown(self):
        shutil.rmtree(self.folder)

    def test_ranges_speedups_and_margins(self):
        done = run_report(self.folder, "--cores", "2")
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(os.path.join(self.folder, "report.md"), encoding="utf-8") as f:
            text = f.read()
        self.assertEqual(table_after(text, "### allreduce: mpi intra, 2 ranks, f32 sum"), [
            ["8 B – 64 B", "tree", "ring", "1.20–2.00×", ""],
            ["1 KiB – 1 MiB", "ring (= rabenseifner at p = 2)", "–", "1.20–2.00×",
             "2.000× faster than tree (IQRs 1.500× apart)"],
        ])
        self.assertEqual(table_after(text, "## The network"), [
            ["ping-pong (rank 0 and one peer)", "α 0.5 µs (±10.0%)", "β 10 GB/s (±20.0%)",
             "R² (log) 0.990, median error 5.0%"]])
        self.assertIn("\nPlots: [sweep_allreduce_mpi_p2_f32.png](sweep_allreduce_mpi_p2_f32.png), "
                      "[fit/fit_allreduce_mpi_intra_f32_sum_p2.png]"
                      "(fit/fit_allreduce_mpi_intra_f32_sum_p2.png)\n", text)
        self.assertNotIn("How far training scales", text)  # no scaling/ and no --predict

    def test_each_placement_is_a_selection_of_its_own(self):
        inter = "".join(line.replace(",intra,", ",inter,").replace(",tree,", ",ring,")
                        for line in SELECTIONS.splitlines(keepends=True)[1:])
        with open(os.path.join(self.folder, "fit", "selections.csv"), "a", encoding="utf-8") as f:
            f.write(inter)
        done = run_report(self.folder, "--cores", "2")
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(os.path.join(self.folder, "report.md"), encoding="utf-8") as f:
            text = f.read()
        self.assertEqual(len(table_after(text, "### allreduce: mpi intra, 2 ranks, f32 sum")), 2)
        self.assertEqual([row[:2] for row in
                          table_after(text, "### allreduce: mpi inter, 2 ranks, f32 sum")],
                         [["8 B – 1 MiB", "ring (= rabenseifner at p = 2)"]])


class TrainIteration(unittest.TestCase):
    """Hand-made train rows (collbench --families train): the iteration, the
    exchange alone, what was exposed and hidden, and where the exchange is
    too short to tell from the compute's noise."""

    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="report_test.")
        with open(RECORDED, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            columns = reader.fieldnames + ["compute_us", "communication_us", "exposed_us",
                                           "overlap"]
            template = next(r for r in reader if r["ranks"] == "2")
        workload = "googlenet:ddp=25MiB"

        def row(algorithm, median, spread, **shares):
            made = dict(template, family="train", algorithm=algorithm, workload=workload,
                        benchmark=f"train/{algorithm}/{workload}", median_us=str(median),
                        min_us=str(median - spread / 2), max_us=str(median + spread / 2))
            made.update({k: str(v) for k, v in shares.items()})
            return made
        rows = [row("none", 1000, 20, compute_us=1000),
                row("ring", 1100, 30, compute_us=1000, communication_us=400, exposed_us=100,
                    overlap=0.75),
                row("tree", 995, 30, compute_us=1000, communication_us=5, exposed_us=-5,
                    overlap=2)]
        with open(os.path.join(self.folder, "collbench.csv"), "w", newline="",
                  encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=columns, restval="")
            writer.writeheader()
            writer.writerows(rows)
        write_fit(self.folder)
        with open(os.path.join(self.folder, "timeline.json"), "w", encoding="utf-8") as f:
            f.write('{"traceEvents": []}')

    def tearDown(self):
        shutil.rmtree(self.folder)

    def test_exposed_and_hidden_per_algorithm(self):
        done = run_report(self.folder, "--cores", "2")
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(os.path.join(self.folder, "report.md"), encoding="utf-8") as f:
            text = f.read()
        rows = table_after(text, "## One training iteration: how much")
        self.assertEqual(
            [row[2:] for row in rows],
            [["none (compute alone)", "1 ms", "–", "–", "–", ""],
             ["ring", "1.1 ms", "400 µs", "100 µs", "0.75", ""],
             ["tree", "995 µs", "5 µs", "−5 µs", "2.00", "communication below the compute's spread"]])
        self.assertIn("[timeline.json](timeline.json)", section(text, "## One training iteration: how"))
        # Four ranks on these 2 cores: marked.
        edit_csv(os.path.join(self.folder, "collbench.csv"),
                 lambda rows: [r.update(ranks="4", ranks_per_node="4") for r in rows])
        done = run_report(self.folder, "--cores", "2")
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(os.path.join(self.folder, "report.md"), encoding="utf-8") as f:
            rows = table_after(f.read(), "## One training iteration: how much")
        self.assertEqual({row[-1] for row in rows}, {NOT_MEANINGFUL})


def rows_like_recorded(changes):
    """The recorded CSV's header and its first row, once per dict of
    `changes` (column: value), as CSV text."""
    with open(RECORDED, encoding="utf-8") as f:
        reader = csv.DictReader(f)
        first = next(reader)
        columns = reader.fieldnames
    out = [",".join(columns)]
    for change in changes:
        row = {**first, "ranks": "2", "ranks_per_node": "2", **change}
        out.append(",".join(f'"{row[c]}"' if "," in row[c] else row[c] for c in columns))
    return "\n".join(out) + "\n"


class TuningSection(unittest.TestCase):
    """A run with the library's forced algorithms: the Tuning section's
    default, library's best, collbench's best and the file's saving."""

    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="report_test.")
        points = [("ring", 5.0), ("tree", 9.0), ("mpi", 10.0), ("ompi_ring", 8.0),
                  ("ompi_basic_linear", 4.0)]
        with open(os.path.join(self.folder, "collbench.csv"), "w", encoding="utf-8") as f:
            f.write(rows_like_recorded({"algorithm": a, "bytes": "1024", "median_us": str(t)}
                                       for a, t in points))
        write_fit(self.folder)

    def tearDown(self):
        shutil.rmtree(self.folder)

    def launches(self, name, medians):
        os.makedirs(os.path.join(self.folder, "tuning"), exist_ok=True)
        with open(os.path.join(self.folder, "tuning", f"{name}.csv"), "w", encoding="utf-8") as f:
            f.write(rows_like_recorded({"algorithm": "mpi", "bytes": "1024", "median_us": str(t),
                                        "run_id": f"{name}{i}"} for i, t in enumerate(medians)))

    def report(self):
        done = run_report(self.folder, "--cores", "2")
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(os.path.join(self.folder, "report.md"), encoding="utf-8") as f:
            return f.read()

    def test_without_the_file_measured(self):
        text = self.report()
        self.assertEqual(table_after(text, "## Tuning"), [
            ["allreduce", "2", "1 KiB", format_time(10.0), f"ompi_basic_linear {format_time(4.0)}",
             f"ring {format_time(5.0)}", "–", ""]])
        self.assertIn("*file*: not measured in this run", section(text, "## Tuning"))

    def test_with_and_without_the_file(self):
        self.launches("without", [12.0, 10.0, 11.0])
        self.launches("with", [6.0, 7.0, 5.5])
        rows = table_after(self.report(), "## Tuning")
        self.assertEqual(rows[0][6],
                         f"{format_time(11.0)} → {format_time(6.0)} (+45% saved, 3 launch pairs)")

    def test_one_side_missing_is_refused(self):
        self.launches("without", [12.0])
        done = run_report(self.folder, "--cores", "2")
        self.assertEqual(done.returncode, 2)
        self.assertIn("with.csv: missing", done.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.folder, "report.md")))

    def test_no_section_without_forced_rows(self):
        with open(os.path.join(self.folder, "collbench.csv"), encoding="utf-8") as f:
            kept = [line for line in f if ",ompi_" not in line]
        with open(os.path.join(self.folder, "collbench.csv"), "w", encoding="utf-8") as f:
            f.writelines(kept)
        self.assertNotIn("## Tuning", self.report())


def edit_csv(path, change):
    """Rewrites the CSV at `path` with change(rows) applied (rows as dicts)."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        columns, rows = reader.fieldnames, list(reader)
    change(rows)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


class LoadWarning(unittest.TestCase):
    """The recorded rows with load columns written in (as collbench's load
    watch writes them): quiet, and with a CPU hog during allreduce ring up
    to 1 KiB and every ping-pong."""

    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.mkdtemp(prefix="report_test.")
        cls.csv = os.path.join(cls.folder, "collbench.csv")
        shutil.copy(RECORDED, cls.csv)
        fit = subprocess.run([COLLBENCH_FIT, cls.csv, "--out-dir", os.path.join(cls.folder, "fit")],
                             capture_output=True, text=True)
        assert fit.returncode == 0, fit.stderr
        with open(os.path.join(cls.folder, "machine.txt"), "w", encoding="utf-8") as f:
            f.write("cores: 4\n")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.folder)

    def report_with(self, load_of):
        """report.md of the recorded rows whose (loaded, other_cores) are load_of(row)."""
        with open(RECORDED, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            columns = reader.fieldnames + ["load_seconds", "other_cores", "steal_cores",
                                           "context_switches_per_s", "loaded"]
            rows = list(reader)
        for row in rows:
            row["loaded"], row["other_cores"] = load_of(row)
            row.update(load_seconds="2.00", steal_cores="0.000", context_switches_per_s="900")
        with open(self.csv, "w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=columns)
            writer.writeheader()
            writer.writerows(rows)
        done = run_report(self.folder)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(os.path.join(self.folder, "report.md"), encoding="utf-8") as f:
            return f.read(), len(rows)

    def test_a_quiet_run_has_no_warning(self):
        text, _ = self.report_with(lambda row: ("no", "0.020"))
        self.assertNotIn("Warning", text)
        self.assertNotIn("loaded", text)

    def test_a_loaded_run_says_how_much_and_where_first(self):
        def hog(row):
            if row["family"] == "p2p":
                return "yes", "0.900"
            if row["algorithm"] == "ring" and row["family"] == "allreduce" and \
                    int(row["bytes"]) <= 1024:
                return "yes", "0.650"
            return "no", "0.080"
        text, count = self.report_with(hog)
        self.assertLess(text.index("**Warning: the machine was loaded.**"),
                        text.index("## The network"))
        # 72 ping-pong rows, allreduce ring's at 8 sizes.
        self.assertIn(f"Other work kept 0.65 to 0.90 cores busy in 80 of the run's {count} rows",
                      text)
        self.assertIn("> - allreduce ring: 8 B – 1 KiB (8 sizes); in the best allreduce "
                      "algorithm per size and its fit\n", text)
        self.assertIn("> - p2p pingpong: 8 B – ", text)
        self.assertIn("; in the network's α and β\n", text)
        self.assertNotIn("> - allreduce tree", text)


class BadInput(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="report_test.")
        shutil.copy(RECORDED, os.path.join(self.folder, "collbench.csv"))

    def tearDown(self):
        shutil.rmtree(self.folder)

    def path(self, *names):
        return os.path.join(self.folder, *names)

    def fit(self):
        subprocess.run([COLLBENCH_FIT, self.path("collbench.csv"), "--out-dir", self.path("fit")],
                       capture_output=True, check=True)
        with open(self.path("machine.txt"), "w", encoding="utf-8") as f:
            f.write("cores: 2\n")

    def refused(self, message, *arguments, folder=None):
        done = run_report(folder or self.folder, *arguments)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertEqual(done.stderr.count("\n"), 1, done.stderr)
        self.assertIn(message, done.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.folder, "report.md")))

    def test_no_machine_description(self):
        self.refused("no machine.txt with 'cores: N'; give --cores N")

    def test_no_fit(self):
        self.refused("fit/models.csv", "--cores", "2")

    def test_zero_cores(self):
        self.refused("--cores: expected a whole number from 1", "--cores", "0")

    def test_not_a_folder(self):
        self.refused("is not a folder", folder=os.path.join(self.folder, "collbench.csv"))

    def test_a_machine_description_that_is_no_regular_file(self):
        self.fit()
        os.remove(self.path("machine.txt"))
        os.mkfifo(self.path("machine.txt"))  # would block a plain open()
        self.refused("machine.txt is not a regular file")

    def test_a_machine_description_with_two_core_counts(self):
        self.fit()
        with open(self.path("machine.txt"), "a", encoding="utf-8") as f:
            f.write("cores: 8\n")
        self.refused("machine.txt: line 2: 'cores' given twice")

    def test_rows_without_ranks_per_host(self):
        self.fit()
        edit_csv(self.path("collbench.csv"), lambda rows: rows[5].update(ranks_per_node=""))
        self.refused("collbench.csv: data row 6: ranks_per_node is empty")

    def first_boundary_with_margin(self, margin):
        self.fit()
        def damage(rows):
            next(r for r in rows if r["boundary"] == "1")["margin"] = margin
        edit_csv(self.path("fit", "selections.csv"), damage)

    def test_a_boundary_without_its_margin(self):
        self.first_boundary_with_margin("")
        self.refused("selections.csv: data row")

    def test_a_margin_that_is_not_a_number(self):
        self.first_boundary_with_margin("nan")
        self.refused("margin is 'nan'")

    def test_a_fit_of_no_rank_count(self):
        self.fit()
        edit_csv(self.path("fit", "models.csv"), lambda rows: rows[0].update(ranks="abc"))
        self.refused("models.csv: data row 1: ranks: expected a whole number")

    def test_a_scaling_table_without_rows(self):
        self.fit()
        os.mkdir(self.path("scaling"))
        with open(self.path("scaling", "scaling.csv"), "w", encoding="utf-8") as f:
            f.write(",".join(["scenario", "model", "algorithm", "nodes", "speedup", "efficiency",
                              "compute_s_1node", "batch", "network"]) + "\n")
        self.refused("scaling.csv: no rows")

    def test_bad_input_leaves_the_earlier_scaling_as_it_was(self):
        self.fit()
        os.mkdir(self.path("scaling"))
        with open(self.path("scaling", "predict.txt"), "w", encoding="utf-8") as f:
            f.write("earlier\n")
        edit_csv(self.path("fit", "selections.csv"), lambda rows: rows[0].update(bytes="-8"))
        self.refused("bytes is '-8'", "--predict", COLLBENCH_PREDICT)
        with open(self.path("scaling", "predict.txt"), encoding="utf-8") as f:
            self.assertEqual(f.read(), "earlier\n")
        self.assertEqual([f for f in os.listdir(self.folder) if f.startswith(".")], [])

    def test_a_predictor_that_fails_is_reported_and_its_stale_output_goes(self):
        self.fit()
        done = run_report(self.folder, "--predict", COLLBENCH_PREDICT)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue(os.path.exists(self.path("scaling", "scaling.csv")))
        done = run_report(self.folder, "--predict", "/bin/false")
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(self.path("report.md"), encoding="utf-8") as f:
            text = f.read()
        self.assertIn("collbench-predict failed: exit status 1", text)
        self.assertNotIn("peak speedup", text)
        # The earlier prediction is not left to pass for this run's.
        self.assertEqual(os.listdir(self.path("scaling")), ["predict.txt"])
        self.assertEqual([f for f in os.listdir(self.folder) if f.startswith(".")], [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
