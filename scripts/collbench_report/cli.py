"""How a command reads its options and how it ends: the one parser of the
scripts' options (OptionParser: a value option given twice is bad input),
bad input (InputError) and a failed write (OSError) each as one line on
stderr and exit status 2, never a traceback."""
import sys

from collbench_csv import InputError, run_main
from collbench_options import OptionParser, given_twice


# What the modules of the package import from here.
__all__ = ["InputError", "OptionParser", "given_twice", "guarded", "run_main"]


def guarded(program, action, cannot_write):
    """action()'s status; 2 after printing "PROGRAM: message" for an
    InputError, "PROGRAM: CANNOT_WRITE: error" for an OSError (a full disk
    while writing: the outputs were discarded). For commands whose program
    name holds the subcommand, known only after parsing."""
    try:
        return action()
    except InputError as error:
        print(f"{program}: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"{program}: {cannot_write}: {error}", file=sys.stderr)
        return 2
