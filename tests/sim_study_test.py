#!/usr/bin/python3
"""scripts/collbench_report/simstudy.py's numbers, on made-up curves: where
a ratio crosses 1 (log-log interpolation, the edges), the runs of the
fastest algorithm against p, and the Swing ratios of every form.

Usage: sim_study_test.py SOURCE_DIR
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.abspath(sys.argv.pop(1)), "scripts"))
from collbench_report import simstudy  # noqa: E402


class Crossing(unittest.TestCase):
    def test_interpolated_on_log_axes(self):
        # ratio 0.5 at 1 KiB, 2 at 4 KiB: 1 halfway on log axes, at 2 KiB.
        self.assertEqual(simstudy.crossing([(1024, 0.5), (4096, 2.0)]),
                         "≈ 2 KiB (between 1 KiB and 4 KiB)")

    def test_uneven_sides(self):
        # ratio 0.25 at 1 KiB, 2 at 8 KiB: 2/3 of the way, at 4 KiB.
        self.assertEqual(simstudy.crossing([(1024, 0.25), (8192, 2.0)]),
                         "≈ 4 KiB (between 1 KiB and 8 KiB)")

    def test_never_or_always(self):
        self.assertEqual(simstudy.crossing([(1024, 1.5), (4096, 2.0)]), "below 1 KiB")
        self.assertEqual(simstudy.crossing([(1024, 0.5), (4096, 0.9)]), "none up to 4 KiB")


class Fastest(unittest.TestCase):
    CURVES = {"a": {2: (1.0, 0), 4: (5.0, 0), 8: (9.0, 0)},
              "b": {2: (2.0, 0), 4: (3.0, 0), 8: (4.0, 0), 16: (8.0, 0)}}

    def test_best_and_runs(self):
        best = simstudy.best_by_ranks(self.CURVES)
        self.assertEqual([(p, name) for p, name, _ in best], [(2, "a"), (4, "b"), (8, "b"),
                                                               (16, "b")])
        self.assertEqual(simstudy.runs(best), "a p=2, b p=4..16")


class Swing(unittest.TestCase):
    def test_every_form_against_every_rival(self):
        points = {("torus2d", "allreduce", 1024): {
            "f1": {64: (1.0, 0)}, "f2": {64: (4.0, 0)}, "r1": {64: (2.0, 0)},
            "r2": {64: (8.0, 0), 256: (1.0, 0)}}}
        rows = simstudy.swing_rows(points, ["f1", "f2"], ["r1", "r2"])
        self.assertEqual(rows, [(64, 1024, "r1", "f1", 0.5), (64, 1024, "r1", "f2", 2.0),
                                (64, 1024, "r2", "f1", 0.125), (64, 1024, "r2", "f2", 0.5)])


if __name__ == "__main__":
    unittest.main()
