"""Markdown tables and the number formats of the reports."""
from collbench_csv import format_bytes, size_label


# What the modules of the package import from here.
__all__ = ["format_bytes", "format_time", "percent", "pipe_head", "pipe_row", "size_label",
           "table", "time_label", "whole_size_label"]


def table(header, rows, align):
    """A Markdown table padded to its columns' widths, readable in a terminal
    too; `align`: "l" or "r" per column."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    def line(cells):
        return "| " + " | ".join(
            str(c).rjust(w) if a == "r" else str(c).ljust(w) for c, w, a in zip(cells, widths, align)
        ) + " |"
    rule = "|" + "|".join(("-" * (w + 1) + ":") if a == "r" else ("-" * (w + 2))
                          for w, a in zip(widths, align)) + "|"
    return "\n".join([line(header), rule] + [line(r) for r in rows])


def pipe_row(*cells):
    """One line of an unpadded Markdown table: "| a | b |"."""
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def pipe_head(*columns):
    """The header and rule lines of an unpadded Markdown table."""
    return [pipe_row(*columns), "|" + "---|" * len(columns)]


def format_time(microseconds):
    """Three significant digits in µs, ms or s: 1234.5 -> "1.23 ms"."""
    if microseconds >= 1e6:
        return f"{microseconds / 1e6:.3g} s"
    if microseconds >= 1e3:
        return f"{microseconds / 1e3:.3g} ms"
    return f"{microseconds:.3g} µs"


def time_label(us):
    """Fixed decimals in µs or ms (a column of similar times): "1.50 ms", "12.3 µs"."""
    return f"{us / 1e3:.2f} ms" if us >= 1e3 else f"{us:.1f} µs"


def whole_size_label(size):
    """A size in the largest unit up to MiB that divides it: 4194304 ->
    "4 MiB", 1536 -> "1536 B" (format_bytes: "1.5 KiB")."""
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def percent(fraction_text):
    """A fraction as a CSV holds it, in percent: "0.0123" -> "1.2%"; "" -> "–"."""
    return f"{float(fraction_text) * 100:.1f}%" if fraction_text else "–"
