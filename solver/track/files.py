"""Track files: the text forms of numbers in TOML and CSV, and a checked CSV reader."""

from __future__ import annotations

import csv
import math

from .sections import TrackError, finite_float


def toml_string(x: str) -> str:
    return '"' + str(x).replace("\\", "\\\\").replace('"', '\\"') + '"'


def toml_number(x: float) -> str:
    if x == math.inf:
        return "inf"
    return repr(float(x))


def csv_number(x: float) -> str:
    return "inf" if x == math.inf else repr(float(x))


def read_csv(path: str):
    """Header (lower-case names), data rows with line numbers, '# key = value' metadata."""
    from ..data_files import DataFileError, read_text
    try:
        # a regular UTF-8 file within the size and line caps (solver/data_files.py)
        lines = read_text(path).splitlines()
    except DataFileError as exc:
        raise TrackError(f"{path}: {exc.reason}") from None
    meta, header, rows = {}, None, []
    for lineno, line in enumerate(lines, start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            body = stripped[1:].strip()
            if "=" in body:
                key, _, val = body.partition("=")
                key = key.strip()
                if key == "name":
                    meta["name"] = val.strip()
                elif key == "rail_distance_m":
                    meta["rail_distance_m"] = finite_float(
                        val.strip(), f"{path}: line {lineno}: rail_distance_m")
            continue
        cells = next(csv.reader([line]))
        if header is None:
            header = [c.strip().lower() for c in cells]
            if len(set(header)) != len(header):
                raise TrackError(f"{path}: line {lineno}: duplicate column names")
            continue
        if len(cells) != len(header):
            raise TrackError(f"{path}: line {lineno}: {len(cells)} values for "
                             f"{len(header)} columns")
        rows.append((lineno, cells))
    if header is None:
        raise TrackError(f"{path}: empty file (no header row)")
    if not rows:
        raise TrackError(f"{path}: no data rows")
    return header, rows, meta


def check_columns(header, allowed, required):
    unknown = [i + 1 for i, c in enumerate(header) if c not in allowed]
    if unknown:
        # the names are not quoted: the header may be a line of any file
        raise TrackError(f"unknown column(s) at position(s) {unknown} (allowed: {sorted(allowed)})")
    for r in required:
        if r not in header:
            raise TrackError(f"missing column '{r}'")
