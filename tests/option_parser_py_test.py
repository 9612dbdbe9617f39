#!/usr/bin/python3
"""scripts/collbench_options.py's OptionParser, the argparse parser of the
Python scripts: a value option given twice is refused (argparse keeps the
last value silently), what is meant to repeat still repeats, and --help says
the rule. The scripts' own refusals are rows of tests/bad_inputs.tsv.

Usage: option_parser_py_test.py SOURCE_DIR"""

import contextlib
import io
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.abspath(sys.argv.pop(1)), "scripts"))
from collbench_csv import InputError  # noqa: E402
from collbench_options import OptionParser  # noqa: E402


def parser():
    result = OptionParser(prog="tool.py")
    result.add_argument("--out")
    result.add_argument("--count", type=int)
    result.add_argument("--input", action="append")
    result.add_argument("--quiet", action="store_true")
    result.add_argument("files", nargs="*")
    return result


class OptionParserTest(unittest.TestCase):
    def refusal(self, arguments, tool=None):
        with self.assertRaises(InputError) as caught:
            (tool or parser()).parse_args(arguments)
        return str(caught.exception)

    def test_a_value_option_given_twice_is_refused_in_the_shell_scripts_words(self):
        self.assertEqual(self.refusal(["--out", "a", "--out", "b"]),
                         "--out given twice ('a' and 'b'); give it once")

    def test_every_spelling_counts(self):
        # --X=V, an abbreviation, and a value that went through type=int.
        self.assertEqual(self.refusal(["--out=a", "--ou", "b"]),
                         "--out given twice ('a' and 'b'); give it once")
        self.assertEqual(self.refusal(["--count", "1", "x.csv", "--count=2"]),
                         "--count given twice ('1' and '2'); give it once")

    def test_what_is_meant_to_repeat_repeats(self):
        args = parser().parse_args(["--input", "a", "--quiet", "--input", "b", "--quiet",
                                    "--out", "o", "x.csv", "y.csv"])
        self.assertEqual((args.input, args.quiet, args.out, args.files),
                         (["a", "b"], True, "o", ["x.csv", "y.csv"]))

    def test_each_parse_starts_afresh_and_leaves_nothing_behind(self):
        tool = parser()
        first = tool.parse_args(["--out", "a"])
        second = tool.parse_args(["--out", "b"])
        self.assertEqual((first.out, second.out), ("a", "b"))
        self.assertEqual(sorted(vars(second)), ["count", "files", "input", "out", "quiet"])

    def test_subcommands_parsers_refuse_too(self):
        tool = OptionParser(prog="tool.py")
        sub = tool.add_subparsers(dest="command", required=True)
        sub.add_parser("draw").add_argument("--out")
        self.assertEqual(tool.parse_args(["draw", "--out", "a"]).out, "a")
        self.assertEqual(self.refusal(["draw", "--out", "a", "--out", "b"], tool),
                         "--out given twice ('a' and 'b'); give it once")

    def test_help_says_the_rule_where_there_is_a_value_option(self):
        rule = "An option that takes a value is taken once: given twice, it is refused."
        repeat = "Those marked repeatable may be given again."
        with_append = " ".join(parser().format_help().split())
        self.assertIn(rule, with_append)
        self.assertIn(repeat, with_append)
        values_only = OptionParser(prog="tool.py", epilog="See the docs.")
        values_only.add_argument("--out")
        text = " ".join(values_only.format_help().split())
        self.assertIn(f"See the docs. {rule}", text)
        self.assertNotIn(repeat, text)
        self.assertEqual(values_only.epilog, "See the docs.")
        flags_only = OptionParser(prog="tool.py")
        flags_only.add_argument("--check", action="store_true")
        self.assertNotIn("taken once", flags_only.format_help())

    def test_argparse_own_errors_are_unchanged(self):
        with contextlib.redirect_stderr(io.StringIO()) as stderr, self.assertRaises(SystemExit):
            parser().parse_args(["--out"])
        self.assertIn("expected one argument", stderr.getvalue())


if __name__ == "__main__":
    unittest.main()
