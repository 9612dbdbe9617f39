#!/usr/bin/python3
"""scripts/collbench_csv.py's ReplaceTogether, as tests/replace_together_test.cpp
tests the C++ one: outputs replaced together or not at all. The hard case is
a rename that fails after another one succeeded: the earlier outputs must be
put back, so the folder holds the previous run's files only.

Usage: replace_together_py_test.py SOURCE_DIR"""

import os
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.join(os.path.abspath(sys.argv.pop(1)), "scripts"))
import collbench_csv  # noqa: E402


def write(path, text):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


class ReplaceTogetherTest(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.mkdtemp()
        for name in ("a.csv", "b.csv"):
            write(os.path.join(self.folder, name), f"old {name}\n")

    def write_new(self, outputs):
        for name in ("a.csv", "b.csv"):
            write(outputs.add(name), f"new {name}\n")

    def test_both_replaced_and_nothing_else_left(self):
        with collbench_csv.ReplaceTogether(self.folder) as outputs:
            self.write_new(outputs)
        self.assertEqual(read(os.path.join(self.folder, "a.csv")), "new a.csv\n")
        self.assertEqual(read(os.path.join(self.folder, "b.csv")), "new b.csv\n")
        self.assertEqual(sorted(os.listdir(self.folder)), ["a.csv", "b.csv"])

    def test_a_failed_rename_puts_back_the_outputs_already_renamed(self):
        real_rename = os.rename

        def rename_of_b_fails(source, destination):
            # b.csv's temporary is renamed after a.csv's: a.csv is new by then.
            if os.path.basename(source).startswith(".b.tmp-"):
                raise OSError(28, "No space left on device")
            return real_rename(source, destination)

        with mock.patch("os.rename", side_effect=rename_of_b_fails):
            with self.assertRaises(collbench_csv.InputError) as raised:
                with collbench_csv.ReplaceTogether(self.folder) as outputs:
                    self.write_new(outputs)
        self.assertIn("none of them was replaced", str(raised.exception))
        self.assertEqual(read(os.path.join(self.folder, "a.csv")), "old a.csv\n")
        self.assertEqual(read(os.path.join(self.folder, "b.csv")), "old b.csv\n")
        self.assertEqual(sorted(os.listdir(self.folder)), ["a.csv", "b.csv"])

    def test_an_exception_while_writing_replaces_nothing(self):
        with self.assertRaises(RuntimeError):
            with collbench_csv.ReplaceTogether(self.folder) as outputs:
                write(outputs.add("a.csv"), "new a.csv\n")
                raise RuntimeError("the plot failed")
        self.assertEqual(read(os.path.join(self.folder, "a.csv")), "old a.csv\n")
        self.assertEqual(sorted(os.listdir(self.folder)), ["a.csv", "b.csv"])


if __name__ == "__main__":
    unittest.main()
