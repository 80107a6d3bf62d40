"""Profile files in the industry's formats: SIMPACK wheel (.prw) and rail (.prr) profiles.

A SIMPACK profile file is plain text: `!` starts a comment; sections
`header.begin` ... `header.end` and `spline.begin` ... `spline.end` hold
`key = value` lines; `point.begin` ... `point.end` (inside the spline section)
holds the points, `y z [weight]` per line. The header's `type` says 0 = rail,
1 = wheel. The spline section describes how the points are to be processed;
the steps are numbered in the files themselves and applied in that order
(the same order as CONTACT's reader, eve70a/CONTACT matlab/read_simpack.m):

  1 point.dist.min   drop a point whose y is within this distance of the last
                     point kept (0: keep all)
  2 shift.y/shift.z  add to y and z
  3 rotate           rotate (y, z) by this angle (unit: units.ang.f, user
                     angle per rad): y' = y cos a - z sin a, z' = y sin a + z cos a
  4 bound.y.min/max  drop the points outside [min, max] (only if min < max);
    bound.z.min/max  clamp z to [min, max] (only if min < max)
  5 mirror.y/.z      1: y -> -y, z -> -z
  6 inversion        1: reverse the order of the points
  7 units.len.f      the file's length unit per metre (1000: mm); every
                     length of the file (points, shifts, bounds) is in it

After processing, y is lateral and z points DOWN. The project reads the
processed profile as CONTACT and the Manchester benchmark's files do (the
profile of a right wheel or rail, y towards the field side): wheel s = y (the
flange at s < 0), F = z (radius increase); rail u = y (the gauge face at
u < 0), height = -z. `mirror_y` flips y once more for a file drawn the other
way round. The spline smoothing (`approx.smooth`) decides how the points are
resampled (solver.profiles.files.load_simpack_profile: 0 interpolates them,
more smooths them by the project's smoothing spline); the weights are not used.

Nothing in the file is executed or used as a format: keys are matched against
the known names, values parsed as numbers.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import ProfileError


SIMPACK_EXTENSIONS = {".prw": "wheel", ".prr": "rail"}

# key -> kind of value; keys not listed are read and ignored
_HEADER_KEYS = {"version": "int", "type": "int"}
_SPLINE_KEYS = {
    "approx.smooth": "real", "file": "str", "file.mtime": "real", "comment": "str", "type": "int",
    "point.dist.min": "real", "shift.y": "real", "shift.z": "real", "rotate": "real",
    "bound.y.min": "real", "bound.y.max": "real", "bound.z.min": "real", "bound.z.max": "real",
    "mirror.y": "int", "mirror.z": "int", "inversion": "int", "units.len": "str",
    "units.ang": "str", "units.len.f": "real", "units.ang.f": "real",
}
_KEY_VALUE = re.compile(r"^([A-Za-z][A-Za-z0-9_.]*)\s*=\s*(.*)$")
MAX_POINTS = 100_000


@dataclass
class SimpackProfile:
    """The processed points of a SIMPACK profile: y (lateral) and z (down), mm."""
    kind: str                      # "wheel" or "rail"
    y_mm: np.ndarray
    z_mm: np.ndarray
    comment: str = ""
    settings: dict = field(default_factory=dict)   # the spline section's values as read
    steps: list = field(default_factory=list)      # what the processing did (text)


def _value(kind: str, text: str, path: str, lineno: int, key: str):
    text = text.strip()
    if kind == "str":
        if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            text = text[1:-1]
        return text
    try:
        value = float(text)
    except ValueError:
        raise ProfileError(f"{key}: {text[:40]!r} is not a number", path, lineno) from None
    if not math.isfinite(value):
        raise ProfileError(f"{key}: not finite", path, lineno)
    if kind == "int":
        if value != int(value):
            raise ProfileError(f"{key}: an integer is expected", path, lineno)
        return int(value)
    return value


def read_simpack(path, text: str | None = None) -> SimpackProfile:
    """Parse and process a SIMPACK .prw / .prr file (see the module docstring).

    `text`: the file's content if already read (the caller reads it safely,
    solver.data_files.read_text). Raises ProfileError naming the file and line.
    """
    path = os.fspath(path)
    if text is None:
        from ..data_files import DataFileError, read_text
        try:
            text = read_text(path)
        except DataFileError as exc:
            raise ProfileError(exc.reason, path) from None
    section = []                          # stack of open sections
    header: dict = {}
    spline: dict = {}
    points: list[tuple[float, float]] = []
    point_lines: list[int] = []
    seen_point_block = False
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("!", 1)[0].strip()
        if not line:
            continue
        lowered = line.lower()
        if lowered.endswith(".begin") and "=" not in line:
            name = lowered[:-len(".begin")].strip()
            expected = {(): "header", ("spline",): "point"}.get(tuple(section))
            if not section and name in ("header", "spline"):
                section.append(name)
            elif name == "point" and tuple(section) == ("spline",):
                if seen_point_block:
                    raise ProfileError("a second point.begin block", path, lineno)
                section.append(name)
                seen_point_block = True
            else:
                raise ProfileError(f"unexpected section {name!r}"
                                   + (f" (expected {expected!r})" if expected else ""), path, lineno)
            continue
        if lowered.endswith(".end") and "=" not in line:
            name = lowered[:-len(".end")].strip()
            if not section or section[-1] != name:
                raise ProfileError(f"{name}.end without a matching {name}.begin", path, lineno)
            section.pop()
            continue
        if section == ["spline", "point"]:
            tokens = line.replace(",", " ").split()
            if len(tokens) not in (2, 3):
                raise ProfileError(f"expected 2 or 3 columns (y z [weight]), found {len(tokens)}",
                                   path, lineno)
            try:
                y, z = float(tokens[0]), float(tokens[1])
            except ValueError:
                raise ProfileError("a point coordinate is not a number", path, lineno) from None
            if not (math.isfinite(y) and math.isfinite(z)):
                raise ProfileError("a point coordinate is not finite", path, lineno)
            points.append((y, z))
            point_lines.append(lineno)
            if len(points) > MAX_POINTS:
                raise ProfileError(f"more than {MAX_POINTS} points", path, lineno)
            continue
        match = _KEY_VALUE.match(line)
        if not match or not section:
            raise ProfileError("expected 'key = value' inside header or spline, or a section line",
                               path, lineno)
        key = match.group(1).lower()
        known = _HEADER_KEYS if section == ["header"] else _SPLINE_KEYS
        target = header if section == ["header"] else spline
        if key in known:
            if key in target:
                raise ProfileError(f"{key} given twice", path, lineno)
            target[key] = (_value(known[key], match.group(2), path, lineno, key), lineno)
    if section:
        raise ProfileError(f"section {section[-1]!r} not closed (no {section[-1]}.end)", path)
    if "type" not in header:
        raise ProfileError("no header.type (0 = rail, 1 = wheel): is this a SIMPACK profile file?", path)
    type_value, lineno = header["type"]
    if type_value not in (0, 1):
        raise ProfileError(f"header.type must be 0 (rail) or 1 (wheel), got {type_value}", path, lineno)
    kind = "wheel" if type_value == 1 else "rail"
    if not points:
        raise ProfileError("no points (point.begin ... point.end)", path)
    if "units.len.f" not in spline:
        raise ProfileError("units.len.f missing: the file does not state its length unit "
                           "(1000 = mm, 1 = m)", path)
    values = {key: v for key, (v, _) in spline.items()}
    unit_factor = values["units.len.f"]
    if not unit_factor > 0:
        raise ProfileError("units.len.f must be > 0", path, spline["units.len.f"][1])
    angle_factor = values.get("units.ang.f", 1.0)
    if not angle_factor > 0:
        raise ProfileError("units.ang.f must be > 0", path, spline["units.ang.f"][1])
    for key in ("mirror.y", "mirror.z", "inversion"):
        if values.get(key, 0) not in (0, 1):
            raise ProfileError(f"{key} must be 0 or 1", path, spline[key][1])
    y = np.array([p[0] for p in points])
    z = np.array([p[1] for p in points])
    steps = []
    # 1 minimum point distance (in y, from the last point kept)
    dist = values.get("point.dist.min", 0.0)
    if dist > 1e-12:
        keep = [0]
        for i in range(1, y.size):
            if abs(y[keep[-1]] - y[i]) > dist:
                keep.append(i)
        if len(keep) < y.size:
            steps.append(f"point.dist.min dropped {y.size - len(keep)} points")
        y, z = y[keep], z[keep]
    # 2 shift
    if values.get("shift.y", 0.0) or values.get("shift.z", 0.0):
        y = y + values.get("shift.y", 0.0)
        z = z + values.get("shift.z", 0.0)
        steps.append(f"shifted by ({values.get('shift.y', 0.0):g}, {values.get('shift.z', 0.0):g})")
    # 3 rotation about x
    angle = values.get("rotate", 0.0) / angle_factor
    if angle:
        c, s = math.cos(angle), math.sin(angle)
        y, z = y * c - z * s, y * s + z * c
        steps.append(f"rotated by {angle:.6g} rad")
    # 4 bounds
    y_lo, y_hi = values.get("bound.y.min", 1.0), values.get("bound.y.max", 0.0)
    if y_lo < y_hi:
        inside = (y >= y_lo) & (y <= y_hi)
        if not inside.all():
            steps.append(f"bound.y dropped {int((~inside).sum())} points")
        y, z = y[inside], z[inside]
    z_lo, z_hi = values.get("bound.z.min", 1.0), values.get("bound.z.max", 0.0)
    if z_lo < z_hi:
        z = np.clip(z, z_lo, z_hi)
    # 5 mirroring, 6 inversion
    if values.get("mirror.y", 0) == 1:
        y = -y
        steps.append("mirror.y")
    if values.get("mirror.z", 0) == 1:
        z = -z
        steps.append("mirror.z")
    if values.get("inversion", 0) == 1:
        y, z = y[::-1], z[::-1]
        steps.append("inversion")
    # 7 units
    y = 1000.0 * y / unit_factor
    z = 1000.0 * z / unit_factor
    if unit_factor != 1000.0:
        steps.append(f"units.len.f {unit_factor:g}: converted to mm")
    if y.size < 4:
        raise ProfileError(f"only {y.size} points left after processing", path)
    return SimpackProfile(kind, y, z, str(values.get("comment", "")), values, steps)
