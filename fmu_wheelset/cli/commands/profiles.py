"""`wheelset-fmu profiles`: list the built-in wheel and rail profiles, or check a profile file.

  wheelset-fmu profiles                       # name, kind, lateral range, source
  wheelset-fmu profiles --check profiles/CHN60.txt --kind rail --step 0.1
  wheelset-fmu profiles --check solver/profiles/data/manchester/MBench_UIC60_v3.prr --cant 40
                                              # a SIMPACK rail drawn canted 1:40

With --check the file is loaded and summarised: the project's two-column text
in mm (profiles/README.md) or a SIMPACK wheel (.prw) or rail (.prr) profile
(its header's units, shift, rotation, bounds, mirroring and inversion applied;
--cant and --mirror-y for what a SIMPACK header does not say). --kind wheel or
rail: the kind it must be, default its '# kind:' line. A file that cannot be
used prints the reason (file and line) and returns 2.
"""
from __future__ import annotations

import argparse
import sys
import textwrap


def register(subparsers) -> None:
    p = subparsers.add_parser("profiles", help="list the built-in profiles (or check a profile file)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", metavar="FILE", default=None, help="load and summarise a profile file (mm)")
    p.add_argument("--kind", choices=("wheel", "rail"), default=None,
                   help="kind of the checked file (default: its '# kind:' directive)")
    from fmu_wheelset.cli.args import number
    p.add_argument("--step", type=number(0.01, 1.0, unit="mm"), default=0.1,
                   help="resampling step, mm (default 0.1)")
    p.add_argument("--method", choices=("auto", "cubic", "akima", "pchip"), default="auto",
                   help="resampling spline for --check (default auto)")
    p.add_argument("--cant", type=number(0.0, 1000.0, unit="1:n"), default=0.0,
                   help="SIMPACK rail drawn canted 1:n in the track frame (e.g. 40): taken out "
                        "(default 0: not canted)")
    p.add_argument("--mirror-y", action="store_true",
                   help="SIMPACK file drawn with the field side at negative y: flip it")
    p.set_defaults(func=run)


def _describe(profile) -> str:
    extra = ""
    if profile.flange_back_to_taping_line is not None:
        extra = f", flange back {profile.flange_back_to_taping_line * 1e3:g} mm from the taping line"
    return (f"{profile.name} ({profile.kind}): lateral {profile.lateral_min * 1e3:g} .. "
            f"{profile.lateral_max * 1e3:g} mm, height {profile.height.min() * 1e3:.3f} .. "
            f"{profile.height.max() * 1e3:.3f} mm, {profile.lateral.size} points at "
            f"{profile.step * 1e3:g} mm, {profile.method} spline{extra}")


def run(args) -> int:
    import math
    import os

    from solver.profiles.builtins import BUILTIN_ALIASES, builtin_profile, list_builtin_profiles
    from solver.profiles.simpack import SIMPACK_EXTENSIONS
    from solver.errors import ProfileError
    from solver.profiles.files import load_profile, load_simpack_profile

    if args.check:
        try:
            if os.path.splitext(args.check)[1].lower() in SIMPACK_EXTENSIONS:
                cant = math.atan(1.0 / args.cant) if args.cant > 0 else 0.0
                profile = load_simpack_profile(args.check, args.kind, step=args.step * 1e-3,
                                               method=args.method, cant=cant, mirror_y=args.mirror_y)
            elif args.cant or args.mirror_y:
                print("wheelset-fmu profiles: error: --cant and --mirror-y apply to SIMPACK files "
                      "(.prw, .prr)", file=sys.stderr)
                return 2
            else:
                profile = load_profile(args.check, args.kind, step=args.step * 1e-3, method=args.method)
        except (ProfileError, ValueError) as exc:
            print(f"wheelset-fmu profiles: error: {' '.join(str(exc).split())}", file=sys.stderr)
            return 2
        print(_describe(profile))
        print(f"  source: {profile.source}")
        return 0

    aliases = {}
    for alias, target in BUILTIN_ALIASES.items():
        aliases.setdefault(target, []).append(alias)
    for name, kind, source in list_builtin_profiles():
        profile = builtin_profile(name, step=args.step * 1e-3)
        alias = f" (alias {', '.join(aliases[name])})" if name in aliases else ""
        print(f"{name}{alias}  {kind}  {profile.lateral_min * 1e3:g} .. {profile.lateral_max * 1e3:g} mm")
        print(textwrap.fill(source, width=100, initial_indent="    ", subsequent_indent="    "))
    return 0
