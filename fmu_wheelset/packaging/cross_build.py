"""Cross-built binaries of the native FMI front end: win64 and
darwin64 beside the linux64 library that fmu_wheelset/packaging/build.py compiles with
the system C compiler.

The cross compiler is ``zig cc`` from the ``ziglang`` package on PyPI
(``python -m ziglang cc -target ...``): one self-contained toolchain that
ships the C library headers of every target. The binaries load the Python
runtime at run time like the linux64 one (LoadLibrary/GetProcAddress on
Windows: platform_win.c; dlopen on macOS: platform_posix.c), so no Python of
the target is needed to build them. They are built and their exports checked
here (tests/test_cross_binaries.py), not run: there is no Windows or macOS
machine to run them on.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NATIVE_DIR = ROOT / "fmu_wheelset" / "fmu" / "native"
COMMON_SOURCES = ("frontend_inproc.c", "out_of_process.c", "python_runtime.c")

# FMI 2.0 platform folder -> (zig target, platform source, file suffix, extra flags)
CROSS_TARGETS = {
    "win64": ("x86_64-windows-gnu", ("platform_win.c", "oop_platform_win.c"), ".dll", []),
    "darwin64": ("x86_64-macos", ("platform_posix.c", "oop_platform_posix.c"), ".dylib",
                 ["-fPIC", "-fvisibility=hidden"]),
}
ALL_PLATFORMS = ("linux64", *CROSS_TARGETS)

# every function of the FMI 2.0 co-simulation C API (FMI 2.0.x standard,
# section 2.1 common functions and 4.2 co-simulation functions)
FMI2_COSIMULATION_FUNCTIONS = (
    "fmi2GetTypesPlatform", "fmi2GetVersion", "fmi2SetDebugLogging", "fmi2Instantiate",
    "fmi2FreeInstance", "fmi2SetupExperiment", "fmi2EnterInitializationMode",
    "fmi2ExitInitializationMode", "fmi2Terminate", "fmi2Reset", "fmi2GetReal",
    "fmi2GetInteger", "fmi2GetBoolean", "fmi2GetString", "fmi2SetReal", "fmi2SetInteger",
    "fmi2SetBoolean", "fmi2SetString", "fmi2GetFMUstate", "fmi2SetFMUstate",
    "fmi2FreeFMUstate", "fmi2SerializedFMUstateSize", "fmi2SerializeFMUstate",
    "fmi2DeSerializeFMUstate", "fmi2GetDirectionalDerivative",
    "fmi2SetRealInputDerivatives", "fmi2GetRealOutputDerivatives", "fmi2DoStep",
    "fmi2CancelStep", "fmi2GetStatus", "fmi2GetRealStatus", "fmi2GetIntegerStatus",
    "fmi2GetBooleanStatus", "fmi2GetStringStatus",
)


def parse_platforms(text: str) -> tuple[str, ...]:
    """'all' or a comma list of linux64, win64, darwin64 (linux64 always first)."""
    names = ALL_PLATFORMS if text.strip() == "all" else tuple(
        p.strip() for p in text.split(",") if p.strip())
    unknown = [p for p in names if p not in ALL_PLATFORMS]
    if unknown:
        raise ValueError(f"unknown platform(s) {', '.join(unknown)}; choose from "
                         f"{', '.join(ALL_PLATFORMS)} or all")
    return ("linux64", *[p for p in CROSS_TARGETS if p in names])


def zig_command() -> list[str] | None:
    """[python, -m, ziglang] when the ziglang package is installed, else None."""
    try:
        import ziglang  # noqa: F401
    except ImportError:
        return None
    return [sys.executable, "-m", "ziglang"]


def fmi_include_dir() -> Path:
    import fmpy
    return Path(fmpy.__file__).parent / "c-code"     # the FMI 2.0 standard headers


def cross_compile(platform: str, target: Path, zig: list[str]) -> None:
    """Compile the front end for ``platform`` (win64, darwin64) into ``target``."""
    triple, platform_source, _suffix, flags = CROSS_TARGETS[platform]
    sources = [str(NATIVE_DIR / f) for f in (*COMMON_SOURCES, *platform_source)]
    if platform == "darwin64":
        # the dylib's own id (LC_ID_DYLIB): its file name, not the build's temporary path
        flags = [*flags, f"-Wl,-install_name,@rpath/{target.name}"]
    cmd = [*zig, "cc", "-target", triple, "-std=c99", "-O2", "-shared", *flags,
           f"-I{fmi_include_dir()}", "-o", str(target), *sources]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or not target.is_file():
        raise RuntimeError(f"cross-compiling the native FMI front end for {platform} failed "
                           f"({' '.join(cmd)}):\n" + proc.stderr[-4000:])


def add_cross_binaries(fmu: Path, platforms, model_identifier: str, quiet: bool = False) -> list[str]:
    """Add binaries/<platform>/<id>.<dll|dylib> to ``fmu`` for each cross
    platform in ``platforms``; returns the platforms added. Without zig it says
    so in one line and adds none (the FMU keeps linux64 only)."""
    wanted = [p for p in platforms if p in CROSS_TARGETS]
    if not wanted:
        return []
    zig = zig_command()
    if zig is None:
        print(f"zig not available (pip install ziglang): built linux64 only, not {', '.join(wanted)}",
              file=sys.stderr)
        return []
    added = []
    with tempfile.TemporaryDirectory(prefix="wheelset_cross_") as tmp:
        built = {}
        for platform in wanted:
            suffix = CROSS_TARGETS[platform][2]
            (Path(tmp) / platform).mkdir()
            library = Path(tmp) / platform / f"{model_identifier}{suffix}"
            cross_compile(platform, library, zig)
            built[platform] = library
        with zipfile.ZipFile(fmu, "a", zipfile.ZIP_DEFLATED) as z:
            present = set(z.namelist())
            for platform, library in built.items():
                name = f"binaries/{platform}/{model_identifier}{CROSS_TARGETS[platform][2]}"
                if name in present:
                    raise RuntimeError(f"{fmu} already has {name}")
                z.write(library, name)
                added.append(platform)
    return added


def exported_functions(path: str | Path) -> tuple[str, list[str], list[str]]:
    """(format, exported function names, imported libraries) of a PE (.dll),
    Mach-O (.dylib) or ELF (.so) file, read with LIEF. Mach-O's leading
    underscore of C symbols is removed."""
    import lief
    binary = lief.parse(str(path))
    if binary is None:
        raise ValueError(f"{path} is not a PE, Mach-O or ELF file LIEF can read")
    kind = {lief.Binary.FORMATS.PE: "PE", lief.Binary.FORMATS.MACHO: "MachO",
            lief.Binary.FORMATS.ELF: "ELF"}.get(binary.format, str(binary.format))
    names = []
    for function in binary.exported_functions:
        name = function.name
        if kind == "MachO" and name.startswith("_"):
            name = name[1:]
        names.append(name)
    if kind == "PE":
        imports = [lib.name for lib in binary.imports]
    else:
        imports = list(binary.libraries)
    return kind, sorted(set(names)), [str(i) for i in imports]
