"""Write every built-in profile as a two-column text file in millimetres.

    .venv/bin/python profiles/write_builtin_profiles.py [--out DIR] [--step-mm 0.1]

Each file (`<name>.txt`) has a header comment with the source, the coordinate
convention and the directives `solver.profiles.files.load_profile` reads
(`# kind:`, `# name:`, `# source:`, `# flange_back_to_taping_line_mm:`,
`# corners_mm:`, `# units:`). The points are the built-in profile's grid values.
"""
from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from solver.profiles.builtins import builtin_profile, list_builtin_profiles  # noqa: E402

CONVENTION = {
    "wheel": ("lateral s (mm) from the taping line (nominal rolling circle), positive towards the field "
              "side (the flange is at s < 0); height F(s) (mm) = radius increase, positive = larger radius"),
    "rail": ("lateral u (mm) from the rail-head centreline, positive towards the field side (the gauge face "
             "is at u < 0); height z(u) (mm) up positive, 0 at the crown; rail in its own frame (not inclined)"),
}


def profile_text(name: str, step_m: float) -> str:
    """The file text of one built-in profile."""
    profile = builtin_profile(name, step=step_m)
    lines = [
        f"# {profile.name}: {profile.kind} profile, {profile.lateral.size} points, step {step_m * 1e3:g} mm",
        "# written by profiles/write_builtin_profiles.py from solver/profiles/definitions.py",
        f"# convention: {CONVENTION[profile.kind]}",
        f"# kind: {profile.kind}",
        f"# name: {profile.name}",
        f"# source: {profile.source}",
    ]
    if profile.flange_back_to_taping_line is not None:
        lines.append(f"# flange_back_to_taping_line_mm: {profile.flange_back_to_taping_line * 1e3:g}")
    if profile.corners:
        lines.append("# corners_mm: " + " ".join(f"{c * 1e3:g}" for c in profile.corners))
    lines += ["# units: mm", "# columns: lateral_mm height_mm"]
    for u, h in zip(profile.lateral * 1e3, profile.height * 1e3):
        lines.append(f"{u:.4f} {h:.7f}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=HERE, help="output folder (default: this folder)")
    parser.add_argument("--step-mm", type=float, default=0.1, help="grid step in mm (default 0.1)")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    for name, _kind, _source in list_builtin_profiles(generated_only=True):
        path = os.path.join(args.out, f"{name}.txt")
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(profile_text(name, args.step_mm * 1e-3))
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
