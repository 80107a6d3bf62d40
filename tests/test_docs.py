"""The README and the user guide (docs/) cannot rot: every Python block runs,
every `wheelset-fmu` line of a shell block is a valid command line, the
variables reference is the variable table's, the README stays short and the
project cites nothing outside itself.

A block that cannot run here (a `make` or `cc` line, MATLAB, a Modelica tool's
script) starts with a visible comment `not run by the tests: <why>`; it is
reported as skipped under that name. `text` and `toml` blocks are data, not
code.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
MARKER = "not run by the tests"
DATA = ("text", "toml")
SHELL = ("", "sh", "bash", "console", "shell")


def blocks(page: Path):
    """(first line number, language, text) of each fenced block of a page."""
    found, lang, start, lines = [], None, 0, []
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
        fence = re.match(r"^```\s*([\w-]*)\s*$", line)
        if fence and lang is None:
            lang, start, lines = fence.group(1).lower(), number + 1, []
        elif line.startswith("```") and lang is not None:
            found.append((start, lang, "\n".join(lines) + "\n"))
            lang = None
        elif lang is not None:
            lines.append(line)
    assert lang is None, f"{page.name}: a code block is not closed"
    return found


def marked(text: str) -> bool:
    first = next((line for line in text.splitlines() if line.strip()), "")
    return MARKER in first


def _id(page, start):
    return f"{page.relative_to(ROOT)}:{start}"


ALL = [(page, start, lang, text) for page in PAGES for start, lang, text in blocks(page)]
PYTHON_PAGES = sorted({page for page, _, lang, text in ALL
                       if lang in ("python", "py") and not marked(text)})


def test_readme_is_short_and_every_page_is_listed():
    """<= 300 lines for users; every page of docs/ is in the guide's index."""
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 300
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page.name != "README.md":
            assert f"({page.name})" in index, page.name


def test_the_project_cites_nothing_outside_itself():
    """What the code cites lives in the repository (docs/references.md): no
    project file refers to the shared folder beside the checkout."""
    pattern = re.compile(r"\.\./shared|/work/shared|shared/(DESIGN|REFERENCES)\.md")
    offenders = []
    for folder in ("solver", "fmu_wheelset", "cosim", "tests", "benchmarks", "docs"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".md", ".c", ".h", ".toml") and path.is_file():
                if pattern.search(path.read_text(encoding="utf-8", errors="replace")):
                    offenders.append(str(path.relative_to(ROOT)))
    for path in (ROOT / "README.md", ROOT / "CHANGELOG.md"):
        if pattern.search(path.read_text(encoding="utf-8")):
            offenders.append(path.name)
    assert offenders == [] or offenders == ["tests/test_docs.py"], offenders


def test_variables_reference_is_the_variable_table():
    """docs/variables.md is generated from fmu_wheelset/fmu/variables.py; regenerate
    with `wheelset-fmu variables --markdown --out docs/variables.md`."""
    from fmu_wheelset.cli.commands.variables import markdown
    from fmu_wheelset.fmu import variables
    page = (ROOT / "docs" / "variables.md").read_text(encoding="utf-8")
    assert page == markdown(), "docs/variables.md is out of date: regenerate it"
    for var in variables.VARIABLES:
        assert f"`{var.name}`" in page


NOT_RUN = [a for a in ALL if a[2] not in DATA and (a[2] not in ("python", "py") or marked(a[3]))]


@pytest.mark.parametrize("page, start, lang, text", NOT_RUN, ids=[_id(a[0], a[1]) for a in NOT_RUN])
def test_shell_block_is_valid_or_marked(page, start, lang, text):
    """Each `wheelset-fmu` line of a shell block parses with the command's own
    parser; any other command, and any block of another language, needs the
    block's marker (it is then skipped, by name)."""
    if marked(text):
        pytest.skip(f"{_id(page, start)}: {text.strip().splitlines()[0].lstrip('#/%- ').strip()}")
    assert lang in SHELL, f"{_id(page, start)}: a {lang} block needs the marker '{MARKER}'"
    from fmu_wheelset.cli.main import build_parser
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        assert line.startswith("wheelset-fmu "), \
            f"{_id(page, start)}: '{line}' is not a wheelset-fmu line: mark the block '{MARKER}'"
        args = shlex.split(line, comments=True)[1:]
        parsed = build_parser().parse_args(args)       # SystemExit(2) on a mistake
        assert getattr(parsed, "func", None), line


@pytest.mark.parametrize("page", PYTHON_PAGES, ids=[str(p.relative_to(ROOT)) for p in PYTHON_PAGES])
def test_python_blocks_of_the_page_run(page, wheelset_fmu, tmp_path):
    """A page's Python blocks, in order, in one new process, from a folder where
    `make demo` has put the FMU (demo-output/fmu/Wheelset.fmu). A failing block
    is named by its page and line."""
    (tmp_path / "demo-output" / "fmu").mkdir(parents=True)
    os.symlink(wheelset_fmu, tmp_path / "demo-output" / "fmu" / "Wheelset.fmu")
    code = [(start, text) for p, start, lang, text in ALL
            if p == page and lang in ("python", "py") and not marked(text)]
    script = tmp_path / "blocks.py"
    script.write_text(
        "import sys\nnamespace = {'__name__': '__main__'}\n"
        + "".join(f"print('--- block {_id(page, start)}', flush=True)\n"
                  f"exec(compile({text!r}, {_id(page, start)!r}, 'exec'), namespace)\n"
                  for start, text in code), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.stdout.count("--- block") == len(code)
    # where the page says what a block prints ("It prints `...`" right after it),
    # the block prints exactly that: a figure in the text cannot go stale
    printed = {}
    for part in proc.stdout.split("--- block ")[1:]:
        name, _, out = part.partition("\n")
        printed[name.strip()] = out
    for start, claim in printed_claims(page):
        assert claim in printed[_id(page, start)], \
            f"{_id(page, start)}: the page says it prints '{claim}'; it printed " \
            f"'{printed[_id(page, start)].strip()}'"


def printed_claims(page: Path):
    """(block's first line, text) for each block whose next paragraph begins
    'It prints `text`'."""
    lines = page.read_text(encoding="utf-8").splitlines()
    claims = []
    for start, lang, text in blocks(page):
        end = start + len(text.splitlines())          # the closing fence's index
        after = "\n".join(lines[end + 1:end + 3]).strip()
        found = re.match(r"It prints `([^`]+)`", after)
        if found and lang in ("python", "py") and not marked(text):
            claims.append((start, found.group(1)))
    return claims


def test_the_printed_claims_are_found():
    """The README's and the running guide's FMPy quick starts say what they print."""
    assert printed_claims(ROOT / "README.md") and printed_claims(ROOT / "docs" / "running.md")


def test_readme_figures_are_current():
    """Every measured figure of the README sits in a span that docs/figures.py
    recomputes (the variable counts, the command list, the validation run that
    docs/validation.md holds, the stored set-up timings) or finds in the docs
    page it names: none may differ (`python docs/figures.py` rewrites them)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.count("<!-- figure:") >= 20
    proc = subprocess.run([sys.executable, str(ROOT / "docs" / "figures.py"), "--check"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
