"""What the figures share: matplotlib found and set up, each algorithm's
colour and place in a legend, axes of sizes, a figure saved into the
outputs of a command (ReplaceTogether)."""
import re
import sys

from collbench_csv import (MPI_ALGORITHM, InputError, algorithm_order, read_algorithm_listing,
                           size_label)

# The baselines' colours, the same in every figure: the MPI library's own
# allreduce, its bare loop (--families mpi_bare) and collbench-predict's
# lower bound.
BASELINE_COLORS = {MPI_ALGORITHM: "tab:gray", "mpi_bare": "tab:olive", "lower_bound": "black"}
# Every other algorithm takes the next of these in the palette's order (the
# listing's, or the data's): matplotlib's tab10 without the baselines' grey
# and olive.
CYCLE = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink",
         "tab:cyan"]
# The marker of an algorithm's points: the next one each time the colours
# come round again, so that no two algorithms share a (colour, marker) pair
# (allreduce alone has more algorithms than CYCLE has colours).
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
DPI = 110


class Palette:
    """The order and colour of a command's algorithms: those of --algorithms
    (collbench --list-algorithms --csv) when given, then those of the data in
    the order the files list them (collbench_csv.algorithm_order). A curve
    that is no algorithm (pingpong, reduce) keeps matplotlib's colour and
    comes after the algorithms, by name."""

    def __init__(self, listing, *sequences):
        self.order = algorithm_order(listing, *sequences)
        others = [name for name in self.order if name not in BASELINE_COLORS]
        self.colors = {name: CYCLE[i % len(CYCLE)] for i, name in enumerate(others)}
        self.colors.update(BASELINE_COLORS)
        self.markers = {name: MARKERS[(i // len(CYCLE)) % len(MARKERS)]
                        for i, name in enumerate(others)}

    def ordered(self, names):
        return ([name for name in self.order if name in names]
                + sorted(set(names) - set(self.order)))

    def color(self, name):
        return self.colors.get(name)

    def marker(self, name):
        return self.markers.get(name, MARKERS[0])


def listing_of(path):
    """The algorithm names of an --algorithms LISTING, or none without one."""
    return read_algorithm_listing(path) if path else []


def slug(*parts):
    """A file name's part from labels: the non-empty ones joined by _, '='
    dropped, anything else unsafe in a name as _."""
    text = "_".join(p for p in parts if p != "")
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text.replace("=", "")).strip("_")


def pyplot():
    """(matplotlib.pyplot, FuncFormatter) on the Agg backend (no display);
    InputError when this Python has no matplotlib. Imported late: input
    errors should not wait for matplotlib."""
    try:
        import matplotlib
    except ImportError as e:
        raise InputError(f"matplotlib is not importable by {sys.executable}; install "
                         "python3-matplotlib") from e

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    return plt, FuncFormatter


def size_axis(axis, FuncFormatter, scale="log"):  # noqa: N803  (matplotlib's class)
    """An x axis of sizes in bytes: log base 2, labelled 1 KiB, 2 MiB, ..."""
    axis.set_xscale(scale, base=2)
    axis.xaxis.set_major_formatter(FuncFormatter(size_label))


def save(fig, outputs, name, written):
    """Draws `fig` into the temporary of `name` of `outputs` (a
    ReplaceTogether: the PNGs of one command replace the earlier ones
    together when it succeeds) and appends its final path to `written`."""
    fig.savefig(outputs.add(name), dpi=DPI, bbox_inches="tight")
    written.append(outputs.path(name))
