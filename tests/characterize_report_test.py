#!/usr/bin/python3
"""scripts/characterize_report.py report: the section "Your model on N nodes
like these" from the sim step's scale_<workload>.csv (tests/characterize_report,
a hand-made weak-scaling run of 1, 2, 4 and 8 ranks whose efficiency falls
under 50% at 8): the heading names the compute source, each p's row has the
iteration times, the exposed communication (the time less p = 1's) and the
efficiency worked out here from the times, and one sentence says where
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


class YourModel(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="characterize_report_test.")
        self.out = os.path.join(self.folder, "run")
        shutil.copytree(FIXTURE, self.out)
        with open(os.path.join(self.out, CSV), encoding="utf-8") as f:
            self.rows = list(csv.DictReader(f))

    def tearDown(self):
        shutil.rmtree(self.folder)

    def report(self):
        subprocess.run(["/usr/bin/python3", SCRIPT, "report", "--out", self.out], check=True,
                       stdout=subprocess.DEVNULL)
        with open(os.path.join(self.out, "report.md"), encoding="utf-8") as f:
            return f.read()

    def write(self, rows):
        with open(os.path.join(self.out, CSV), "w", encoding="utf-8", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(self.rows[0]), lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)

    def section(self, text, nodes):
        heading = (f"## Your model on {nodes} nodes like these: resnet50:ddp, compute assumed "
                   "1e+13 FLOP/s per rank, 32 samples per rank\n")
        self.assertIn(heading, text)
        return text.split(heading)[1]

    def test_rows_from_the_times(self):
        section = self.section(self.report(), 8)
        cells = {line.strip("| ").split(" | ")[0]: line.strip("| ").split(" | ")
                 for line in section.splitlines() if line.startswith("| ") and "---" not in line}
        times = {int(r["ranks"]): (float(r["simulated_iteration_s"]),
                                   float(r["predicted_iteration_s"])) for r in self.rows}
        self.assertEqual(sorted(k for k in cells if k != "p"), ["2", "4", "8"])
        for p in (2, 4, 8):
            simulated, predicted = times[p]
            # Weak scaling: the speedup p T(1) / T(p), the efficiency T(1) / T(p).
            efficiency = [times[1][i] / times[p][i] for i in (0, 1)]
            row = cells[str(p)]
            self.assertEqual(row[1], f"{simulated:.3g} s")
            self.assertEqual(row[2], f"{predicted:.3g} s")
            self.assertEqual(row[5], f"{p * efficiency[0]:.1f} ({p * efficiency[1]:.1f})")
            self.assertEqual(row[6], f"{100 * efficiency[0]:.0f}% ({100 * efficiency[1]:.0f}%)")
            exposed = (simulated - times[1][0]) * 1e3
            self.assertEqual(row[4].split(" (")[0], f"{exposed:.3g} ms" if exposed < 1e3
                             else f"{exposed / 1e3:.3g} s")

    def test_where_efficiency_falls_under_half(self):
        self.assertIn("Efficiency falls under 50% at p = 8 (40%)", self.section(self.report(), 8))

    def test_efficiency_that_stays_above_half(self):
        self.write([r for r in self.rows if int(r["ranks"]) <= 4])
        self.assertIn("Efficiency does not fall under 50% up to p = 4 (62%",
                      self.section(self.report(), 4))

    def test_refuses_a_csv_without_its_base(self):
        self.write(self.rows[1:])
        run = subprocess.run(["/usr/bin/python3", SCRIPT, "report", "--out", self.out],
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 2)
        self.assertIn("no weak-scaling row at p = 1", run.stderr)
        self.assertEqual(len(run.stderr.strip().splitlines()), 1)
        self.assertFalse(os.path.exists(os.path.join(self.out, "report.md")))


class SimulatedSelection(unittest.TestCase):
    """The table "The best allreduce algorithm per size" from sim/selections.csv
    (collbench-fit --tie-tolerance 0 on the fixture's sim/allreduce.csv, as
    characterize.sh's sim step runs it): each cell is the algorithm with the
    lowest simulated time in sim/allreduce.csv, whichever collbench-fit wrote."""

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
