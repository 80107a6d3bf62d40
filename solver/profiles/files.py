"""Profile files: plain coordinate tables and SIMPACK .prw / .prr files, read safely."""

from __future__ import annotations

import math
import os
import re

import numpy as np

from ..errors import ProfileError
from .profile import (
    DEFAULT_STEP, KINDS, MIN_LATERAL_SPAN_MM, MIN_POINTS, Profile, RAIL, WHEEL, find_corners,
    profile_from_points,
)
from .simpack import SIMPACK_EXTENSIONS, read_simpack


# ---------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------

_DIRECTIVE = re.compile(r"^\s*#\s*([A-Za-z][A-Za-z0-9_ \-]*?)\s*:\s*(.*?)\s*$")
_SEPARATORS = re.compile(r"[\s,;]+")
_KNOWN_DIRECTIVES = ("kind", "name", "source", "flange_back_to_taping_line_mm", "units", "corners_mm",
                     "smoothing_length_mm")
# A directive is a comment line of the exact form `# key: value` with a known
# key and a value of the key's form; any other comment line is free text, e.g.
# "# units: mm. columns: lateral height" (a sentence, not the value `mm`). The
# one-word directives (units, kind) take a single token (checked: "# units: m"
# is refused); the numeric ones (their keys end in _mm: no sentence starts so)
# are checked as numbers.
_ONE_WORD = re.compile(r"^\S+$")
_ONE_WORD_DIRECTIVES = ("units", "kind")
# A wheel file without `flange_back_to_taping_line_mm`: EN 13715 / UIC's 70 mm
# (S1002, LMA, the SIMPACK files' default in load_simpack_profile)
DEFAULT_FLANGE_BACK_MM = 70.0


def load_profile(path, kind: str | None, step: float = DEFAULT_STEP, method: str = "auto",
                 name: str | None = None) -> Profile:
    """Load a two-column profile file in MILLIMETRES (lateral, height) and resample it.

    Lines: `lateral height` separated by whitespace, commas or semicolons;
    `#` starts a comment. Header directives in comment lines (optional):
    `# kind: wheel|rail`, `# name: ...`, `# source: ...`,
    `# flange_back_to_taping_line_mm: 70` (wheels; without it 70 mm, the EN 13715
    / UIC convention), `# units: mm`, `# corners_mm: 30 60` (slope
    discontinuities, each one of the points: the spline is broken there, see
    `resample_profile`), `# smoothing_length_mm: 0.2` (the smoothing spline's
    length, solver.profiles.profile.DEFAULT_SMOOTHING_LENGTH without it). A
    comment line is a directive only in the exact form `# key: value`, with a
    one-word value for units and kind; any other comment is free text.
    `kind` None takes the kind from the header. The coordinate conventions of
    docs/CONVENTIONS.md apply (wheel: s from the taping line, flange at s < 0;
    rail: u from the head centreline, gauge side u < 0, z = 0 at the crown).
    A file written in decreasing lateral order is reversed. Raises
    ProfileError naming the file and line for anything it cannot use.
    A SIMPACK profile (.prw wheel, .prr rail) is read by `load_simpack_profile`
    with its defaults.
    """
    from ..data_files import DataFileError, read_text
    path_str = os.fspath(path)
    if not os.path.exists(path_str):
        raise ProfileError("profile file not found", path_str)
    if os.path.isdir(path_str):
        raise ProfileError("is a directory, not a profile file", path_str)
    if os.path.splitext(path_str)[1].lower() in SIMPACK_EXTENSIONS:
        return load_simpack_profile(path_str, kind, step=step, method=method, name=name)
    try:
        # a regular file of at most 10 MB and 200 000 lines (solver/data_files.py):
        # no hang on a FIFO, no endless read of a device
        lines = read_text(path_str).splitlines()
    except DataFileError as exc:
        raise ProfileError(exc.reason, path_str) from None
    header, lateral, height, line_of = _parse_lines(lines, path_str)
    kind, flange_back, corners_mm, smoothing_length = _header_values(header, kind, path_str)
    x, z = _checked_points(lateral, height, line_of, kind, path_str, len(lines))
    header_name = header.get("name", (None, 0))[0]
    profile_name = name or header_name or os.path.splitext(os.path.basename(path_str))[0]
    source = header.get("source", (None, 0))[0] or f"file {os.path.basename(path_str)}"
    if kind == WHEEL and flange_back is None:
        flange_back = DEFAULT_FLANGE_BACK_MM * 1e-3
        source += f" (flange back {DEFAULT_FLANGE_BACK_MM:g} mm from the taping line: not given, EN 13715)"
    extra = {} if smoothing_length is None else {"smoothing_length": smoothing_length}
    try:
        return profile_from_points(x * 1e-3, z * 1e-3, name=profile_name, kind=kind, source=source,
                                   step=step, method=method, flange_back_to_taping_line=flange_back,
                                   corners=[c * 1e-3 for c in corners_mm], **extra)
    except ProfileError as exc:
        raise ProfileError(exc.reason, path_str) from None
    except ValueError as exc:       # grid too fine for the span (e.g. a file in the wrong unit)
        raise ProfileError(str(exc), path_str) from None


def _parse_lines(lines, path_str):
    """(header directives {key: (text, line)}, lateral mm, height mm, line of
    each point) of a profile file's lines."""
    header: dict[str, tuple[str, int]] = {}
    lateral: list[float] = []
    height: list[float] = []
    line_of: list[int] = []
    for lineno, raw in enumerate(lines, start=1):
        stripped = raw.strip()
        if stripped.startswith("#"):
            match = _DIRECTIVE.match(stripped)
            if match:
                key = re.sub(r"[\s\-]+", "_", match.group(1).strip().lower())
                if key in _ONE_WORD_DIRECTIVES and not _ONE_WORD.match(match.group(2)):
                    continue        # free text that starts like a directive
                if key in _KNOWN_DIRECTIVES:
                    if key in header:
                        raise ProfileError(f"directive {key!r} given twice (first on line {header[key][1]})",
                                           path_str, lineno)
                    header[key] = (match.group(2), lineno)
            continue
        content = stripped.split("#", 1)[0].strip()
        if not content:
            continue
        tokens = [tok for tok in _SEPARATORS.split(content) if tok]
        if len(tokens) != 2:
            raise ProfileError(f"expected 2 columns (lateral, height in mm), found {len(tokens)}",
                               path_str, lineno)
        values = []
        for column, tok in enumerate(tokens, start=1):
            try:
                value = float(tok)
            except ValueError:
                raise ProfileError(f"column {column} is not a number", path_str, lineno) from None
            if not math.isfinite(value):
                raise ProfileError(f"column {column} is not finite (NaN or inf)", path_str, lineno)
            values.append(value)
        lateral.append(values[0])
        height.append(values[1])
        line_of.append(lineno)
    return header, lateral, height, line_of


def _header_values(header, kind, path_str):
    """(kind, flange back to taping line in m or None, corners in mm, smoothing
    length in m or None) from the header directives and the kind the caller
    asked for."""
    if "units" in header:
        units, lineno = header["units"]
        if units.strip().lower() not in ("mm", "millimetre", "millimetres", "millimeter", "millimeters"):
            raise ProfileError("units: profile files are read in millimetres (mm)", path_str, lineno)
    if "kind" in header:
        header_kind, lineno = header["kind"]
        header_kind = header_kind.strip().lower()
        if header_kind not in KINDS:
            raise ProfileError("kind must be 'wheel' or 'rail'", path_str, lineno)
        if kind is not None and kind != header_kind:
            raise ProfileError(f"file says kind {header_kind!r}, caller asked for {kind!r}", path_str, lineno)
        kind = header_kind
    if kind is None:
        raise ProfileError("kind not given (argument or '# kind:' directive)", path_str)
    if kind not in KINDS:
        raise ProfileError(f"kind must be 'wheel' or 'rail', got {kind!r}", path_str)
    flange_back = None
    if "flange_back_to_taping_line_mm" in header:
        text, lineno = header["flange_back_to_taping_line_mm"]
        if kind == RAIL:
            raise ProfileError("flange_back_to_taping_line_mm given for a rail profile", path_str, lineno)
        try:
            fb_mm = float(text)
        except ValueError:
            raise ProfileError("flange_back_to_taping_line_mm: not a number", path_str, lineno) from None
        if not (math.isfinite(fb_mm) and 0.0 < fb_mm < 500.0):
            raise ProfileError(f"flange_back_to_taping_line_mm {fb_mm!r} out of range (0, 500) mm",
                               path_str, lineno)
        flange_back = fb_mm * 1e-3
    smoothing_length = None
    if "smoothing_length_mm" in header:
        text, lineno = header["smoothing_length_mm"]
        try:
            smoothing_mm = float(text)
        except ValueError:
            raise ProfileError("smoothing_length_mm: not a number", path_str, lineno) from None
        if not (math.isfinite(smoothing_mm) and 0.0 < smoothing_mm <= 10.0):
            raise ProfileError(f"smoothing_length_mm {smoothing_mm!r} out of range (0, 10] mm",
                               path_str, lineno)
        smoothing_length = smoothing_mm * 1e-3
    corners_mm: list[float] = []
    if "corners_mm" in header:
        text, lineno = header["corners_mm"]
        try:
            corners_mm = [float(tok) for tok in _SEPARATORS.split(text.strip()) if tok]
        except ValueError:
            raise ProfileError("corners_mm: expected numbers (mm)", path_str, lineno) from None
        if len(corners_mm) > 100 or not all(math.isfinite(c) for c in corners_mm):
            raise ProfileError("corners_mm: at most 100 finite numbers (mm)", path_str, lineno)
    return kind, flange_back, corners_mm, smoothing_length


def _checked_points(lateral, height, line_of, kind, path_str, n_lines):
    """The points (x, z in mm, lateral increasing), checked: enough of them,
    distinct, monotonic, in millimetres, around the origin, a wheel's flange
    on the negative side."""
    if not lateral:
        raise ProfileError("empty profile file: no data points", path_str, max(n_lines, 1))
    if len(lateral) < MIN_POINTS:
        raise ProfileError(f"only {len(lateral)} data points, at least {MIN_POINTS} are needed",
                           path_str, line_of[-1])
    x = np.asarray(lateral)
    z = np.asarray(height)
    first_seen: dict[float, int] = {}
    for value, lineno in zip(lateral, line_of):
        if value in first_seen:
            raise ProfileError(f"duplicate lateral coordinate {value:g} mm (also on line {first_seen[value]})",
                               path_str, lineno)
        first_seen[value] = lineno
    span = float(x.max() - x.min())
    if span < MIN_LATERAL_SPAN_MM:
        raise ProfileError(f"lateral span {span:g} is below {MIN_LATERAL_SPAN_MM:g} mm: the coordinates look "
                           f"like metres; profile files are in millimetres", path_str, line_of[0])
    steps = np.diff(x)
    direction = 1.0 if steps[0] > 0 else -1.0
    reversal = np.flatnonzero(steps * direction < 0)
    if reversal.size:
        k = int(reversal[0]) + 1
        raise ProfileError(f"lateral coordinate {x[k]:g} mm reverses the direction of the preceding points "
                           f"(line {line_of[k - 1]}: {x[k - 1]:g} mm); lateral must be monotonic",
                           path_str, line_of[k])
    if direction < 0:
        x, z = x[::-1], z[::-1]
        line_of = line_of[::-1]
    if not (x[0] <= 0.0 <= x[-1]):
        origin = "taping line (s = 0)" if kind == WHEEL else "rail-head centreline (u = 0)"
        raise ProfileError(f"lateral range [{x[0]:g}, {x[-1]:g}] mm does not contain the {origin}; "
                           f"see docs/CONVENTIONS.md", path_str, line_of[0])
    if kind == WHEEL:
        tip = int(np.argmax(z))
        if x[tip] > 0.0 and z[tip] > z[0] + 5.0:
            raise ProfileError(f"the flange (largest height, at {x[tip]:g} mm) is on the positive side; the wheel "
                               f"convention puts the flange at s < 0 (field side positive)",
                               path_str, line_of[tip])
    return x, z


CROWN_FIT_HALF_WIDTH_MM = 5.0     # the crown of a rail file: a parabola through the points within this of the top


def _monotonic_run(x, around: int):
    """The index range [i0, i1] of the longest run of strictly increasing x through `around`."""
    i0 = around
    while i0 > 0 and x[i0 - 1] < x[i0]:
        i0 -= 1
    i1 = around
    while i1 < x.size - 1 and x[i1 + 1] > x[i1]:
        i1 += 1
    return i0, i1


def load_simpack_profile(path, kind: str | None = None, step: float = DEFAULT_STEP, method: str = "auto",
                         name: str | None = None, *, cant: float = 0.0, mirror_y: bool = False,
                         flange_back_to_taping_line: float = 0.070, source: str | None = None) -> Profile:
    """Load a SIMPACK wheel (.prw) or rail (.prr) profile and resample it.

    The header's processing (units, shift, rotation, bounds, mirroring,
    inversion: solver.profiles.simpack) is applied first; then the processed
    profile is read as a right-hand profile, y towards the field side and z
    down (`mirror_y` flips y for a file drawn the other way):

    - wheel: s = y, F = z; the taping line is the file's y = 0;
      `flange_back_to_taping_line` (m; SIMPACK files do not state it) defaults
      to 70 mm, the EN 13715 / UIC convention of S1002 and LMA.
    - rail: u = y, height = -z. `cant` (rad): the file is drawn already canted
      (inclined) by this angle in the track frame, field side up (the
      Manchester benchmark's UIC60 file: atan(1/40)); it is rotated back into
      the rail's own frame, as the project's rails are (the inclination is a
      parameter of the track set-up, solver.contact.geometry.setup.ContactSetup). The origin
      is then moved to the crown: the vertex of a parabola through the points
      within CROWN_FIT_HALF_WIDTH_MM of the highest point. Points of the head's
      flanks that overhang after this (lateral no longer increasing) are cut
      off at both ends; the profile's source says how many.
    `kind` None takes the kind from the header (header.type); a kind that
    contradicts the header or the extension is an error.
    """
    path_str = os.fspath(path)
    parsed = read_simpack(path_str)
    ext_kind = SIMPACK_EXTENSIONS.get(os.path.splitext(path_str)[1].lower())
    if ext_kind is not None and ext_kind != parsed.kind:
        raise ProfileError(f"header.type says {parsed.kind}, the extension a {ext_kind}", path_str)
    if kind is not None and kind != parsed.kind:
        raise ProfileError(f"file says kind {parsed.kind!r}, caller asked for {kind!r}", path_str)
    if not (isinstance(cant, (int, float)) and math.isfinite(cant) and abs(cant) < 0.2):
        raise ProfileError(f"cant must be an angle below 0.2 rad, got {cant!r}", path_str)
    y = -parsed.y_mm if mirror_y else parsed.y_mm.copy()
    notes = list(parsed.steps) + (["mirrored in y on loading"] if mirror_y else [])
    if parsed.kind == WHEEL:
        lateral, height = y, parsed.z_mm.copy()
        if cant:
            raise ProfileError("cant applies to rail profiles only", path_str)
    else:
        lateral, height = y, -parsed.z_mm
        if cant:
            c, s = math.cos(cant), math.sin(cant)
            lateral, height = lateral * c + height * s, -lateral * s + height * c
            notes.append(f"cant {cant:.6g} rad (1:{1 / math.tan(cant):.4g}) taken out")
    if lateral[0] > lateral[-1]:
        lateral, height = lateral[::-1], height[::-1]
    top = int(np.argmax(height))
    i0, i1 = _monotonic_run(lateral, top)
    if parsed.kind == RAIL:
        if i0 > 0 or i1 < lateral.size - 1:
            notes.append(f"{i0} + {lateral.size - 1 - i1} overhanging flank points cut off "
                         f"(below {-(max(height[i0], height[i1]) - height[top]):.1f} mm)")
        lateral, height = lateral[i0:i1 + 1], height[i0:i1 + 1]
        near = np.abs(lateral - lateral[np.argmax(height)]) <= CROWN_FIT_HALF_WIDTH_MM
        if near.sum() < 3:
            raise ProfileError("too few points near the crown to locate it", path_str)
        a, b, c0 = np.polyfit(lateral[near], height[near], 2)
        if not a < 0:
            raise ProfileError("the top of the rail is not convex: no crown", path_str)
        u0 = -b / (2 * a)
        lateral, height = lateral - u0, height - (c0 - b * b / (4 * a))
        notes.append(f"origin moved to the crown (file y = {u0 if not mirror_y else -u0:.4f} mm)")
    elif i0 > 0 or i1 < lateral.size - 1:
        k = i0 - 1 if i0 > 0 else i1 + 1
        raise ProfileError(f"lateral not monotonic after processing near y = {lateral[k]:.4g} mm", path_str)
    if not (lateral[0] <= 0.0 <= lateral[-1]):
        raise ProfileError(f"lateral range [{lateral[0]:g}, {lateral[-1]:g}] mm does not contain the origin",
                           path_str)
    if parsed.kind == WHEEL:
        tip = int(np.argmax(height))
        if lateral[tip] > 0.0 and height[tip] > height[0] + 5.0:
            raise ProfileError("the flange is on the positive side after processing: the file is drawn "
                               "the other way round (mirror_y=True)", path_str)
    profile_name = name or os.path.splitext(os.path.basename(path_str))[0]
    if source is None:
        source = (f"SIMPACK {parsed.kind} profile file {os.path.basename(path_str)}"
                  + (f" ({parsed.comment})" if parsed.comment else "")
                  + (": " + "; ".join(notes) if notes else ""))
    corners = ()
    if method == "auto":
        # as SIMPACK reads its own file: approx.smooth = 0 (the Manchester
        # benchmark's files) interpolates the points, here by cubic splines broken
        # at the corners found; a positive value smooths them (the project's
        # smoothing spline at its default length: SIMPACK's own scale is not
        # published)
        if float(parsed.settings.get("approx.smooth", 0.0)) > 0.0:
            method = "smoothing"
        else:
            method = "cubic"
            corners = tuple(float(lateral[k]) * 1e-3 for k in find_corners(lateral, height))
    try:
        return profile_from_points(lateral * 1e-3, height * 1e-3, name=profile_name, kind=parsed.kind,
                                   source=source, step=step, method=method, corners=corners,
                                   flange_back_to_taping_line=(flange_back_to_taping_line
                                                               if parsed.kind == WHEEL else None))
    except ProfileError as exc:
        raise ProfileError(exc.reason, path_str) from None
