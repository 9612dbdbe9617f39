"""Outputs written whole or not at all, and the checks of an output path made
before any work. ReplaceTogether (several files of one command) and the
path checks are collbench_csv.py's, as the C++ tools' (replace_on_commit.h)."""
import os
import shutil
import tempfile

from collbench_csv import (InputError, ReplaceTogether, refuse_input_as_output,
                           same_file, writable_folder)

# What the modules of the package import from here.
__all__ = ["InputError", "ReplaceTogether", "refuse_input_as_output", "replace_folder",
           "same_file", "writable_folder", "write_whole"]


def write_whole(path, text, option="--out"):
    """TEXT into PATH through a temporary file beside it: all of it or nothing."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.")
    except OSError as error:
        raise InputError(f"cannot write {option} {path}: {error.strerror}") from error
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(temporary, path)
    except OSError as error:
        os.unlink(temporary)
        raise InputError(f"cannot write {option} {path}: {error.strerror}") from error


def replace_folder(new, destination):
    """Renames folder `new` over `destination`, whose old contents go."""
    old = None
    if os.path.lexists(destination):
        old = f"{new}.old"
        os.rename(destination, old)
    os.rename(new, destination)
    if old:
        shutil.rmtree(old)
