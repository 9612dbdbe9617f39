#!/usr/bin/python3
"""scripts/compare_selections.py: a flip is a size where one run's chosen
exchange is not the exchange of any algorithm in the other's tie set (its
choice, its equivalents and its ties); a different choice of one exchange,
or one inside both tie sets, is within noise; equivalents are no ties.

Usage: compare_selections_test.py SOURCE_DIR"""

import os
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.path.abspath(sys.argv.pop(1))
SCRIPT = os.path.join(SOURCE, "scripts", "compare_selections.py")
HEADER = ("collective,transport,provider,placement,dtype,op,ranks,bytes,chosen,exchange,"
          "chosen_median_us,chosen_q1_us,chosen_q3_us,repetitions,lowest_median,lowest_median_us,"
          "boundary,previous,margin,gap,same,ties,tie_exchanges,mpi_median_us,predicted,"
          "predicted_us,fitted,fitted_us")


def selections(rows):
    """selections.csv text: each row (ranks, bytes, chosen, ties) or (ranks,
    bytes, chosen, ties, exchange, tie_exchanges); without the last two every
    algorithm is an exchange of its own."""
    lines = [HEADER]
    for ranks, size, chosen, ties, *exchanges in rows:
        exchange, tie_exchanges = exchanges or (chosen, ties)
        lines.append(f"allreduce,mpi,,intra,f32,sum,{ranks},{size},{chosen},{exchange},2,1.9,2.1,"
                     f"3,{chosen},2,0,,,,,{ties},{tie_exchanges},4,tree,2,tree,2")
    return "\n".join(lines) + "\n"


class CompareSelections(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp(prefix="compare_selections_test.")

    def run_on(self, first, second, *options):
        paths = []
        for name, rows in (("a.csv", first), ("b.csv", second)):
            path = os.path.join(self.folder, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(selections(rows))
            paths.append(path)
        return subprocess.run([sys.executable, SCRIPT, *paths, *options], capture_output=True,
                              text=True, check=False)

    def test_a_choice_inside_the_other_tie_set_is_not_a_flip(self):
        done = self.run_on([(2, 8, "tree", "ring"), (2, 64, "ring", "")],
                           [(2, 8, "ring", "tree"), (2, 64, "ring", "tree")], "--max-flips", "0")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("| 8 B | tree | ring | within noise |", done.stdout)
        self.assertTrue(done.stdout.endswith("2 sizes compared: 0 flips, 2 with ties (100%)\n"),
                        done.stdout)

    def test_one_sided_ties_are_a_flip(self):
        # The first run saw ring within noise of tree; the second did not see
        # tree within noise of ring: the runs disagree beyond the second's noise.
        done = self.run_on([(2, 8, "tree", "ring")], [(2, 8, "ring", "")], "--max-flips", "0")
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertIn("| 8 B | tree | ring | flip |", done.stdout)
        self.assertIn("1 sizes compared: 1 flip, 1 with ties", done.stdout)

    def test_one_exchange_under_two_names_is_no_flip(self):
        # Both runs chose the exchange of recursive doubling; the second saw
        # recursive_doubling itself beaten by swing_latency (its equivalent)
        # and named none of them a tie or `same`.
        done = self.run_on([(2, 8, "recursive_doubling", "")],
                           [(2, 8, "swing_latency", "", "recursive_doubling", "")],
                           "--max-flips", "0")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("| 8 B | recursive_doubling | swing_latency (recursive_doubling's exchange) "
                      "| within noise |", done.stdout)
        self.assertIn("1 sizes compared: 0 flips, 0 with ties (0%)", done.stdout)

    def test_a_tie_counts_by_its_exchange(self):
        # The second run's tie rabenseifner is the ring's exchange at 2 ranks
        # (ring itself beaten there): the first run's ring is within noise.
        done = self.run_on([(2, 8, "ring", "recursive_doubling")],
                           [(2, 8, "recursive_doubling", "rabenseifner", "recursive_doubling",
                             "ring")], "--max-flips", "0")
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("| 8 B | ring | recursive_doubling | within noise |", done.stdout)
        # Without the tie the second run's exchange is beyond noise of ring.
        done = self.run_on([(2, 8, "ring", "recursive_doubling")],
                           [(2, 8, "recursive_doubling", "")], "--max-flips", "0")
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertIn("| 8 B | ring | recursive_doubling | flip |", done.stdout)

    def test_a_choice_without_its_exchange_is_bad_input(self):
        done = self.run_on([(2, 8, "tree", "", "", "")], [(2, 8, "tree", "")])
        self.assertEqual(done.returncode, 2)
        self.assertTrue(done.stderr.endswith("a.csv: allreduce at 8 B has a choice but no "
                                             "exchange\n"), done.stderr)
        self.assertEqual(done.stderr.count("\n"), 1, done.stderr)

    def test_a_file_written_before_the_exchange_column_is_bad_input(self):
        path = os.path.join(self.folder, "old.csv")
        with open(path, "w", encoding="utf-8") as f:
            for line in selections([(2, 8, "tree", "")]).splitlines():
                cells = line.split(",")
                f.write(",".join(cells[:9] + cells[10:]) + "\n")  # no `exchange`
        done = subprocess.run([sys.executable, SCRIPT, path, path], capture_output=True,
                              text=True, check=False)
        self.assertEqual(done.returncode, 2)
        self.assertIn("exchange", done.stderr)
        self.assertEqual(done.stderr.count("\n"), 1, done.stderr)

    def test_ranks_are_selections_of_their_own(self):
        done = self.run_on([(2, 8, "tree", ""), (4, 8, "ring", "")],
                           [(2, 8, "tree", ""), (4, 8, "rabenseifner", "")])
        self.assertEqual(done.returncode, 0)
        self.assertIn("### allreduce: mpi intra, 4 ranks, f32 sum", done.stdout)
        self.assertNotIn("2 ranks", done.stdout)
        self.assertIn("2 sizes compared: 1 flip, 0 with ties (0%)", done.stdout)

    def test_mpi_is_compared_with_the_choice_not_chosen(self):
        # mpi faster than the choice at 8 B in both runs, at 64 B in the
        # first only (within noise in the second), and faster at 512 B in the
        # first but slower in the second: one disagreement beyond noise.
        def with_verdicts(verdicts):
            lines = selections([(2, size, "ring", "") for size in (8, 64, 512)]).splitlines()
            return "\n".join([lines[0] + ",mpi_verdict"] +
                             [line + "," + v for line, v in zip(lines[1:], verdicts)]) + "\n"
        paths = []
        for name, verdicts in (("a.csv", ["faster", "faster", "faster"]),
                               ("b.csv", ["faster", "tie", "slower"])):
            path = os.path.join(self.folder, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(with_verdicts(verdicts))
            paths.append(path)
        done = subprocess.run([sys.executable, SCRIPT, *paths], capture_output=True, text=True,
                              check=False)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue(done.stdout.endswith(
            "3 sizes compared: 0 flips, 0 with ties (0%)\n"
            "mpi faster than the choice beyond noise at 3 sizes in the first run and 1 in the "
            "second; the runs disagree on it beyond noise at 1\n"), done.stdout)

    def test_a_platform_column_keeps_the_platforms_apart(self):
        # sim_sweep.sh's selections.csv: one selection per platform, the
        # platform first. The two runs agree on the star and not on the torus.
        paths = []
        for name, torus in (("a.csv", "ring"), ("b.csv", "bruck")):
            lines = selections([(4, 8, "ring", ""), (4, 8, torus, "")]).splitlines()
            path = os.path.join(self.folder, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(["platform," + lines[0], "star," + lines[1],
                                   "torus," + lines[2]]) + "\n")
            paths.append(path)
        done = subprocess.run([sys.executable, SCRIPT, *paths], capture_output=True, text=True,
                              check=False)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("### allreduce: mpi intra on torus, 4 ranks, f32 sum", done.stdout)
        self.assertIn("| 8 B | ring | bruck | flip |", done.stdout)
        self.assertIn("2 sizes compared: 1 flip, 0 with ties (0%)", done.stdout)

    def test_two_rows_of_one_selection_and_size_are_bad_input(self):
        done = self.run_on([(2, 8, "tree", ""), (2, 8, "ring", "")], [(2, 8, "tree", "")])
        self.assertEqual(done.returncode, 2)
        self.assertTrue(done.stderr.endswith("a.csv: two rows choose for allreduce at 2 ranks and "
                                             "8 B: one run's selections.csv has one\n"),
                        done.stderr)
        self.assertEqual(done.stderr.count("\n"), 1, done.stderr)

    def test_no_size_in_common_is_bad_input(self):
        done = self.run_on([(2, 8, "tree", "")], [(2, 64, "tree", "")])
        self.assertEqual(done.returncode, 2)
        self.assertEqual(done.stderr, "compare_selections.py: the two files have no selection and "
                                      "size in common\n")


if __name__ == "__main__":
    unittest.main(verbosity=2)
