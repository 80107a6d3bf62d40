"""`wheelset-fmu env`: what a non-Python FMI host needs to load the FMU here.

The FMU's binary (pythonfmu's wrapper) embeds the Python interpreter but is not
linked against libpython: a host that is not itself Python (a C program,
Simulink, Dymola, OpenModelica, a track FE code) must preload libpython so that
its symbols are global (LD_PRELOAD on Linux), and must point the embedded
interpreter at the packages the core needs (numpy, scipy, numba) with
PYTHONPATH. The solver itself travels inside the FMU.
"""
from __future__ import annotations

import json
import os
import shlex
import site
import sys
import sysconfig


def host_environment() -> dict:
    """Paths for a non-Python host: python executable, libpython, site-packages,
    and the environment variables to set (dict name -> value)."""
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    candidates = [sysconfig.get_config_var(k) for k in ("INSTSONAME", "LDLIBRARY")]
    libpython = ""
    for name in candidates:
        if name and os.path.isfile(os.path.join(libdir, name)):
            libpython = os.path.join(libdir, name)
            break
    if not libpython:
        multiarch = sysconfig.get_config_var("MULTIARCH") or ""
        for name in candidates:
            path = os.path.join(libdir, multiarch, name or "")
            if name and os.path.isfile(path):
                libpython = path
                break
    paths = []
    for p in list(site.getsitepackages()) + [site.getusersitepackages()]:
        if os.path.isdir(p) and p not in paths:
            paths.append(p)
    return {
        "python": sys.executable,
        "version": sys.version.split()[0],
        "libpython": libpython,
        "shared_libpython": bool(sysconfig.get_config_var("Py_ENABLE_SHARED")),
        "site_packages": paths,
        "environment": {"LD_PRELOAD": libpython, "PYTHONPATH": os.pathsep.join(paths)},
    }


def register(subparsers):
    parser = subparsers.add_parser(
        "env", help="print what a non-Python FMI host needs (LD_PRELOAD, PYTHONPATH)",
        description="Print the libpython to preload and the PYTHONPATH a non-Python host "
                    "needs to run Wheelset.fmu with this Python installation.")
    parser.add_argument("--shell", action="store_true", help="print only `export` lines")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)


def run(args) -> int:
    env = host_environment()
    if args.json:
        print(json.dumps(env, indent=2))
        return 0
    exports = [f"export {k}={shlex.quote(v)}" for k, v in env["environment"].items()]
    if args.shell:
        print("\n".join(exports))
        return 0
    print(f"python executable : {env['python']} (Python {env['version']})")
    print(f"libpython         : {env['libpython'] or 'NOT FOUND (Python built without --enable-shared?)'}")
    print(f"site-packages     : {os.pathsep.join(env['site_packages'])}")
    print()
    print("A non-Python host (C, Simulink, Modelica tools) loading Wheelset.fmu needs, in its")
    print("environment (Linux; the FMU's binary embeds this Python but does not link libpython):")
    print("\n".join("  " + e for e in exports))
    if not env["shared_libpython"]:
        print("warning: this Python has no shared libpython; use one built with --enable-shared")
    return 0
