"""Argument types and the error convention of the `wheelset-fmu` command
(issue 18 item 12, docs/SECURITY.md).

Every user mistake ends in ONE line on stderr, ``wheelset-fmu <command>:
error: <what and the allowed range>``, and exit status 2 (argparse's
convention), never a Python traceback:

* values are checked when the arguments are parsed, by the types here
  (`number`: a finite number inside a range, the range named in the message;
  `output_file` / `output_dir`: the folder exists, or can be made, and is
  writable, checked before any work is done; `input_file`: an existing
  regular file);
* what can only be found while running (an unknown profile, a malformed TOML
  file, a sweep plan out of its bounds) raises an error that `run_command`
  turns into the same one line (exit 2); any other exception is a bug of the
  program: one line too, exit 1 (set WHEELSET_FMU_DEBUG=1 for the traceback).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Callable, Optional

ERRORS_OF_USE = (ValueError, OSError, KeyError, LookupError)   # bad input, file problems


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``prog: error: message`` (no usage block)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def number(lo: Optional[float] = None, hi: Optional[float] = None, *, lo_open: bool = False,
           hi_open: bool = False, unit: str = "", integer: bool = False) -> Callable[[str], float]:
    """An argparse type: a finite number in [lo, hi] (an end open if *_open)."""
    interval = (("(" if lo_open else "[") + ("-inf" if lo is None else f"{lo:g}") + ", "
                + ("inf" if hi is None else f"{hi:g}") + (")" if hi_open else "]")
                + (f" {unit}" if unit else ""))

    def parse(text: str):
        try:
            value = int(text) if integer else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not {'an integer' if integer else 'a number'} (allowed: {interval})") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text} is not finite (allowed: {interval})")
        too_low = lo is not None and (value <= lo if lo_open else value < lo)
        too_high = hi is not None and (value >= hi if hi_open else value > hi)
        if too_low or too_high:
            raise argparse.ArgumentTypeError(f"{value:g} is outside the allowed {interval}")
        return value

    parse.__name__ = "integer" if integer else "number"     # argparse names the type in messages
    return parse


def _writable_folder(folder: str, may_create: bool = True) -> Optional[str]:
    """None if files can be written in `folder` (existing, or creatable if
    `may_create`), else why not."""
    probe = os.path.abspath(folder or ".")
    if not may_create and not os.path.exists(probe):
        return f"no folder {probe}"
    while not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if not os.path.isdir(probe):
        return f"{probe} is not a folder"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"{probe} is not writable"
    return None


def output_file(suffix: Optional[str] = None, may_create: bool = False) -> Callable[[str], str]:
    """An argparse type: a file that can be written (its folder exists and is
    writable; not a folder itself; the suffix if given)."""

    def parse(text: str) -> str:
        if not text:
            raise argparse.ArgumentTypeError("empty file name")
        if suffix and not text.lower().endswith(suffix):
            raise argparse.ArgumentTypeError(f"{text}: the file must end in {suffix}")
        if os.path.isdir(text):
            raise argparse.ArgumentTypeError(f"{text} is a folder, not a file")
        if os.path.exists(text) and not os.access(text, os.W_OK):
            raise argparse.ArgumentTypeError(f"{text} is not writable")
        problem = _writable_folder(os.path.dirname(text), may_create=may_create)
        if problem:
            raise argparse.ArgumentTypeError(f"cannot write {text}: {problem}")
        return text

    parse.__name__ = "output file"
    return parse


def output_dir(text: str) -> str:
    """An argparse type: a folder that exists and is writable, or can be made."""
    if not text:
        raise argparse.ArgumentTypeError("empty folder name")
    if os.path.exists(text) and not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text} exists and is not a folder")
    problem = _writable_folder(text)
    if problem:
        raise argparse.ArgumentTypeError(f"cannot write in {text}: {problem}")
    return text


output_dir.__name__ = "output folder"


def input_file(text: str) -> str:
    """An argparse type: an existing regular file."""
    if not os.path.exists(text):
        raise argparse.ArgumentTypeError(f"{text}: no such file")
    if not os.path.isfile(text):
        raise argparse.ArgumentTypeError(f"{text} is not a regular file")
    return text


input_file.__name__ = "input file"


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 500 else text[:497] + "..."


def run_command(prog: str, func, args) -> int:
    """Run a subcommand; an error becomes one line on stderr (exit 2 for a
    mistake of use, 1 for anything else, 130 for Ctrl-C)."""
    try:
        return int(func(args) or 0)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except ERRORS_OF_USE as exc:
        if os.environ.get("WHEELSET_FMU_DEBUG"):
            raise
        print(f"{prog}: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - a bug: still one line, the traceback on request
        if os.environ.get("WHEELSET_FMU_DEBUG"):
            raise
        print(f"{prog}: internal error: {type(exc).__name__}: {one_line(exc)} "
              "(WHEELSET_FMU_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 1
