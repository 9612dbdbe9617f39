#!/usr/bin/python3
"""scripts/characterize_report.py report: the section "Your model on N nodes
like these" from the sim step's scale_<workload>.csv (tests/characterize_report,
a hand-made run of 1, 2, 4 and 8 ranks in both modes: weak at 32 samples per
rank, strong with a global batch of 64, each mode's efficiency under 50% at 8):
the heading names the compute source; a table per mode (weak, then strong)
whose rows have that mode's iteration times, samples per rank, exposed
communication and overlap as the CSV gives them (in strong scaling the exposed
time is not T(p) - T(1), which is negative there), and the speedup and
efficiency worked out here from the times; one sentence per mode says where
efficiency falls under 50%, or that it does not. And the table of the best
allreduce algorithm per size and p from sim/selections.csv (the fixture's
sim/allreduce.csv: collbench --transport sim --no-payload --platform star
--calibration fit/models.csv, results/netsim/uniform's, at p = 2, 4, 8 of
ring, recursive_doubling, rabenseifner, double_binary_tree and tree, 1 KiB and
1 MiB; its selections.csv: collbench-fit --tie-tolerance 0 on it).

Usage: characterize_report_test.py SOURCE_DIR"""

import csv
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.path.abspath(sys.argv.pop(1))
SCRIPT = os.path.join(SOURCE, "scripts", "characterize_report.py")
FIXTURE = os.path.join(SOURCE, "tests", "characterize_report")
CSV = os.path.join("sim", "scale_resnet50_ddp.csv")


class FixtureReport(unittest.TestCase):
    """A copy of the fixture in a temporary folder, and its report."""

    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="characterize_report_test.")
        self.out = os.path.join(self.folder, "run")
        shutil.copytree(FIXTURE, self.out)

    def tearDown(self):
        shutil.rmtree(self.folder)

    def report(self):
        subprocess.run(["/usr/bin/python3", SCRIPT, "report", "--out", self.out], check=True,
                       stdout=subprocess.DEVNULL)
        with open(os.path.join(self.out, "report.md"), encoding="utf-8") as f:
            return f.read()


class YourModel(FixtureReport):
    def setUp(self):
        super().setUp()
        with open(os.path.join(self.out, CSV), encoding="utf-8") as f:
            self.rows = list(csv.DictReader(f))

    def write(self, rows):
        with open(os.path.join(self.out, CSV), "w", encoding="utf-8", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(self.rows[0]), lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)

    def section(self, text, nodes):
        heading = (f"## Your model on {nodes} nodes like these: resnet50:ddp, compute assumed "
                   "1e+13 FLOP/s per rank\n")
        self.assertIn(heading, text)
        return text.split(heading)[1]

    def modes(self, section):
        """Each mode's part of the section, by its heading."""
        self.assertIn("### Weak scaling: 32 samples per rank at every p\n", section)
        weak = section.split("### Weak scaling")[1]
        if "### Strong scaling" not in weak:
            return {"weak": weak}
        weak, strong = weak.split("### Strong scaling")
        self.assertTrue(strong.startswith(": a global batch of 64 samples split over p\n"))
        return {"weak": weak, "strong": strong}

    def table(self, part):
        """The mode's table as {p: {column: cell}}."""
        lines = [line.strip("| ").split(" | ") for line in part.splitlines()
                 if line.startswith("| ") and "---" not in line]
        return {cells[0]: dict(zip(lines[0], cells)) for cells in lines[1:]}

    def test_rows_from_the_csv_per_mode(self):
        modes = self.modes(self.section(self.report(), 8))
        self.assertEqual(sorted(modes), ["strong", "weak"])
        for mode, part in modes.items():
            mine = {int(r["ranks"]): r for r in self.rows if r["mode"] == mode}
            cells = self.table(part)
            self.assertEqual(sorted(cells), ["2", "4", "8"], mode)
            times = {p: (float(r["simulated_iteration_s"]), float(r["predicted_iteration_s"]))
                     for p, r in mine.items()}
            for p in (2, 4, 8):
                row, r = cells[str(p)], mine[p]
                # speedup T(1) / T(p), times p in weak scaling; efficiency speedup / p.
                speedup = [(p if mode == "weak" else 1) * times[1][i] / times[p][i]
                           for i in (0, 1)]
                self.assertEqual(row["samples per rank"], f"{float(r['samples_per_rank']):g}")
                self.assertEqual(row["simulated iteration"], label(times[p][0]))
                self.assertEqual(row["formula's"], label(times[p][1]))
                self.assertEqual(row["exposed communication (formula's)"],
                                 f"{label(float(r['simulated_exposed_s']))} "
                                 f"({label(float(r['predicted_exposed_s']))})")
                self.assertEqual(row["overlap (formula's)"],
                                 f"{float(r['simulated_overlap']):.2f} "
                                 f"({float(r['predicted_overlap']):.2f})")
                self.assertEqual(row["speedup (formula's)"],
                                 f"{speedup[0]:.1f} ({speedup[1]:.1f})")
                self.assertEqual(row["efficiency (formula's)"],
                                 f"{100 * speedup[0] / p:.0f}% ({100 * speedup[1] / p:.0f}%)")

    def test_where_efficiency_falls_under_half(self):
        modes = self.modes(self.section(self.report(), 8))
        self.assertIn("Efficiency falls under 50% at p = 8 (40%)", modes["weak"])
        self.assertIn("Efficiency falls under 50% at p = 8 (33%)", modes["strong"])

    def test_weak_only_and_above_half(self):
        """characterize.sh without --sim-global-batch: weak rows only."""
        self.write([r for r in self.rows if r["mode"] == "weak" and int(r["ranks"]) <= 4])
        modes = self.modes(self.section(self.report(), 4))
        self.assertEqual(list(modes), ["weak"])
        self.assertIn("Efficiency does not fall under 50% up to p = 4 (62%", modes["weak"])

    def test_overlap_not_simulated(self):
        """scale.sh without --communication-alone: no simulated overlap."""
        self.write([dict(r, simulated_overlap="") for r in self.rows])
        cells = self.table(self.modes(self.section(self.report(), 8))["strong"])
        self.assertEqual(cells["2"]["overlap (formula's)"], "– (0.65)")

    def test_refuses_a_csv_without_its_base(self):
        for mode in ("weak", "strong"):
            self.write([r for r in self.rows if r["mode"] != mode or r["ranks"] != "1"])
            run = subprocess.run(["/usr/bin/python3", SCRIPT, "report", "--out", self.out],
                                 capture_output=True, text=True)
            self.assertEqual(run.returncode, 2)
            self.assertIn(f"no {mode}-scaling row at p = 1", run.stderr)
            self.assertEqual(len(run.stderr.strip().splitlines()), 1)
            self.assertFalse(os.path.exists(os.path.join(self.out, "report.md")))


def label(seconds):
    """The report's time: three significant digits, in ms below one second."""
    return f"{seconds:.3g} s" if abs(seconds) >= 1 else f"{seconds * 1e3:.3g} ms"


class SimulatedSelection(FixtureReport):
    """The table "The best allreduce algorithm per size" from sim/selections.csv
    (collbench-fit --tie-tolerance 0 on the fixture's sim/allreduce.csv, as
    characterize.sh's sim step runs it): each cell is the algorithm with the
    lowest simulated time in sim/allreduce.csv, whichever collbench-fit wrote."""

    def table(self):
        heading = "### The best allreduce algorithm per size on 2 to 8 nodes like these\n"
        text = self.report()
        self.assertIn(heading, text)
        section = text.split(heading)[1].split("\nData:")[0]
        lines = [line.strip("| ").split(" | ") for line in section.splitlines()
                 if line.startswith("| ")]
        self.assertEqual(lines[0], ["size", "p = 2", "p = 4", "p = 8"])
        return {(row[0], p): row[i + 1] for row in lines[1:] for i, p in enumerate((2, 4, 8))}

    def test_each_cell_is_the_fastest(self):
        with open(os.path.join(self.out, "sim", "allreduce.csv"), encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        fastest = {}
        for r in rows:
            key = ({1024: "1 KiB", 1048576: "1 MiB"}[int(r["bytes"])], int(r["ranks"]))
            if key not in fastest or float(r["median_us"]) < fastest[key][0]:
                fastest[key] = (float(r["median_us"]), r["algorithm"])
        cells = self.table()
        self.assertEqual(sorted(cells), sorted(fastest))
        # Two different choices, so that a table of one name everywhere fails.
        self.assertGreater(len({a for _, a in fastest.values()}), 1)
        for key, (us, algorithm) in fastest.items():
            label = f"{us / 1e3:.2f} ms" if us >= 1e3 else f"{us:.1f} µs"
            self.assertTrue(cells[key].startswith(f"{algorithm} ({label})"), (key, cells[key]))

    def test_no_section_without_selections(self):
        os.remove(os.path.join(self.out, "sim", "selections.csv"))
        self.assertNotIn("### The best allreduce algorithm", self.report())


if __name__ == "__main__":
    unittest.main()
