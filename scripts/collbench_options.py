"""The one parser of the scripts' options: OptionParser, argparse's parser
with one rule more (a value option given twice is bad input), and
given_twice, that rule's error for the scripts that parse by hand. Its
errors are collbench_csv's InputError, which every script prints as one
line and exit status 2 (run_main). Standard library only."""
import argparse

from collbench_csv import InputError


def given_twice(option, first, second):
    """The InputError of a value option given twice, in lib_options.sh's
    words (parse_options): of the two values one would be dropped silently,
    hiding the user's mistake. For the scripts that parse by hand; argparse's
    go through OptionParser."""
    return InputError(f"{option} given twice ('{first}' and '{second}'); give it once")


# The namespace attribute where OptionParser keeps, during one parse, the
# value options given so far and their values.
_GIVEN = "_collbench_options_given"


class _StoreOnce(argparse._StoreAction):
    """argparse's "store" (the action of an option that takes a value), but
    a second occurrence raises given_twice instead of replacing the first
    value. Positionals store as before: argparse calls them once."""

    def __call__(self, parser, namespace, values, option_string=None):
        if self.option_strings:
            given = getattr(namespace, _GIVEN)
            shown = " ".join(map(str, values)) if isinstance(values, list) else str(values)
            if self.dest in given:  # named by its long form, whatever was typed (--ou)
                raise given_twice(max(self.option_strings, key=len), given[self.dest], shown)
            given[self.dest] = shown
        super().__call__(parser, namespace, values, option_string)


class OptionParser(argparse.ArgumentParser):
    """The argparse parser of every script: an option that takes a value
    (action "store", argparse's default) given twice is refused with
    given_twice's InputError, which the script prints as its other bad input
    (one line, exit status 2). Options meant to repeat say so with
    action="append"; flags (store_true) given twice stay harmless. Its
    subcommands' parsers (add_subparsers) are OptionParsers too, and --help
    says the rule after the epilog."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)

    def parse_known_args(self, args=None, namespace=None):
        # Afresh for every parse; a subcommand's parser parses into a namespace
        # of its own, which argparse then copies into its parent's: removed at
        # the end, the record never shows in the options the script reads.
        namespace = argparse.Namespace() if namespace is None else namespace
        setattr(namespace, _GIVEN, {})
        try:
            return super().parse_known_args(args, namespace)
        finally:
            delattr(namespace, _GIVEN)

    def format_help(self):
        if not any(isinstance(action, _StoreOnce) and action.option_strings
                   for action in self._actions):
            return super().format_help()
        rule = "An option that takes a value is taken once: given twice, it is refused."
        if any(isinstance(action, argparse._AppendAction) for action in self._actions):
            rule += " Those marked repeatable may be given again."
        epilog = self.epilog
        self.epilog = f"{epilog}\n\n{rule}" if epilog else rule
        try:
            return super().format_help()
        finally:
            self.epilog = epilog
