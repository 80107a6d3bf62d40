"""Cross-built win64 and darwin64 binaries of the native front end.

`build_fmu.py --platforms all` cross-compiles them with zig cc (package
ziglang). They cannot run here (no Windows or macOS), so these tests read the
files themselves with LIEF: the right format and architecture, every FMI 2.0
co-simulation function exported (a host's loader looks each one up by name;
one missing and the FMU does not load), and no link to a Python runtime (it is
loaded at run time, so the binary must not name python3X.dll or a libpython).
"""
import zipfile

import pytest

from fmu_wheelset.packaging import cross_build
from fmu_wheelset.packaging.cross_build import FMI2_COSIMULATION_FUNCTIONS, exported_functions

pytest.importorskip("lief", reason="LIEF reads the PE/Mach-O files (extra 'cross')")
if cross_build.zig_command() is None:
    pytest.skip("ziglang not installed (extra 'cross')", allow_module_level=True)

EXPECTED = {"linux64": ("Wheelset.so", "ELF"), "win64": ("Wheelset.dll", "PE"),
            "darwin64": ("Wheelset.dylib", "MachO")}

pytestmark = [pytest.mark.cross, pytest.mark.fmu]     # builds the FMU for three platforms


@pytest.fixture(scope="module")
def binaries(tmp_path_factory):
    from conftest import wait_for_zig_warm_up
    from fmu_wheelset.packaging.build import build_fmu
    wait_for_zig_warm_up()      # zig's one-off C runtime build, started with the session
    out = tmp_path_factory.mktemp("cross") / "Wheelset.fmu"
    build_fmu(out, quiet=True, platforms=cross_build.parse_platforms("all"))
    folder = out.parent / "unzipped"
    with zipfile.ZipFile(out) as z:
        names = [n for n in z.namelist() if n.startswith("binaries/")]
        z.extractall(folder)
    return folder, names


def test_all_three_platforms_are_in_the_fmu(binaries):
    folder, names = binaries
    assert sorted(names) == sorted(f"binaries/{p}/{f}" for p, (f, _) in EXPECTED.items())


@pytest.mark.parametrize("platform", sorted(EXPECTED))
def test_every_fmi2_cosimulation_function_is_exported(binaries, platform):
    folder, _ = binaries
    file_name, expected_format = EXPECTED[platform]
    kind, exports, imports = exported_functions(folder / "binaries" / platform / file_name)
    print(f"{platform} ({kind}): {len(exports)} exports: {' '.join(exports)}")
    assert kind == expected_format
    missing = sorted(set(FMI2_COSIMULATION_FUNCTIONS) - set(exports))
    assert missing == [], f"{platform} lacks {missing}"
    # nothing else named fmi2*: a misspelt or extra FMI name would be a bug
    assert sorted(e for e in exports if e.startswith("fmi2")) == sorted(FMI2_COSIMULATION_FUNCTIONS)
    # the Python runtime is loaded at run time, never linked
    assert not [i for i in imports if "python" in i.lower()], imports


def test_the_win64_binary_is_x86_64_and_needs_only_system_dlls(binaries):
    import lief
    folder, _ = binaries
    pe = lief.parse(str(folder / "binaries" / "win64" / "Wheelset.dll"))
    assert pe.header.machine == lief.PE.Header.MACHINE_TYPES.AMD64
    assert pe.header.has_characteristic(lief.PE.Header.CHARACTERISTICS.DLL)
    imports = {lib.name.lower() for lib in pe.imports}
    # KERNEL32 plus the C runtime zig's MinGW target links (msvcrt or api-ms-win-crt-*)
    assert "kernel32.dll" in imports
    assert all(i == "kernel32.dll" or i.startswith(("msvcrt", "api-ms-win-crt", "ucrtbase"))
               for i in imports), imports


def test_the_darwin64_binary_is_an_x86_64_dylib(binaries):
    import lief
    folder, _ = binaries
    macho = lief.parse(str(folder / "binaries" / "darwin64" / "Wheelset.dylib"))
    assert macho.header.cpu_type == lief.MachO.Header.CPU_TYPE.X86_64
    assert macho.header.file_type == lief.MachO.Header.FILE_TYPE.DYLIB
    # its own id is its file name (not a build path); it links only the system library
    own_id = [c.name for c in macho.commands if c.command == lief.MachO.LoadCommand.TYPE.ID_DYLIB]
    assert own_id == ["@rpath/Wheelset.dylib"]
    assert {lib.name for lib in macho.libraries} - set(own_id) == {"/usr/lib/libSystem.B.dylib"}


def test_without_zig_the_build_says_so_in_one_line(tmp_path, monkeypatch, capsys):
    fmu = tmp_path / "x.fmu"
    with zipfile.ZipFile(fmu, "w") as z:
        z.writestr("binaries/linux64/Wheelset.so", b"")
    monkeypatch.setattr(cross_build, "zig_command", lambda: None)
    assert cross_build.add_cross_binaries(fmu, ("linux64", "win64", "darwin64"), "Wheelset") == []
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "zig not available" in err[0] and "linux64 only" in err[0]
    with zipfile.ZipFile(fmu) as z:
        assert z.namelist() == ["binaries/linux64/Wheelset.so"]


def test_unknown_platform_is_refused():
    with pytest.raises(ValueError, match="unknown platform"):
        cross_build.parse_platforms("linux64,win32")
