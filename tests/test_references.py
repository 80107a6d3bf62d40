"""Every module the code's comments and docstrings name exists.

A comment that names a module that was moved or merged sends the next reader
the wrong way. Read as text (nothing imported), in the project's Python files
(solver, fmu_wheelset, cosim, tests, benchmarks, examples): each path
``solver/.../x.py`` (or under fmu_wheelset/, cosim/, tests/, benchmarks/)
must be a file, and each dotted name ``solver.a.b`` (or fmu_wheelset.,
cosim.) must be a module, or a module and then a name that module defines at
its top level (a function, class, constant or import; ``U_`` names a family:
some name that begins so). Not module names: the FMU's variables
(``solver.integrator`` is a parameter) and dunder attributes.
"""
from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("solver", "fmu_wheelset", "cosim")
FOLDERS = PACKAGES + ("tests", "benchmarks", "examples")
# names in code the tests write, not references: (file, name)
NOT_REFERENCES = {
    # the source of a foreign package named `solver` that the test puts first on
    # sys.path, and the flag it reads from it
    ("tests/test_native_fmu.py", "solver.FOREIGN"),
}
PATH = re.compile(r"(?<![\w/.-])((?:solver|fmu_wheelset|cosim|tests|benchmarks|examples)"
                  r"(?:/[\w.-]+)*/[\w-]+\.(?:py|c|h|md|toml|txt|json))\b")
DOTTED = re.compile(r"(?<![\w./-])((?:solver|fmu_wheelset|cosim)(?:\.[A-Za-z_]\w*)+)")


def module_path(name: str) -> Path | None:
    base = ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@lru_cache(maxsize=None)
def top_level_names(path: Path) -> frozenset:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for n in ast.walk(target):
                    if isinstance(n, ast.Name):
                        names.add(n.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.If) or isinstance(node, ast.Try):
            for sub in ast.walk(node):
                if isinstance(sub, (ast.Import, ast.ImportFrom)):
                    names.update((a.asname or a.name).split(".")[0] for a in sub.names)
                elif isinstance(sub, (ast.FunctionDef, ast.ClassDef)):
                    names.add(sub.name)
    return frozenset(names)


def dotted_exists(name: str) -> bool:
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        path = module_path(".".join(parts[:n]))
        if path is not None:
            if n == len(parts) or (parts[n].startswith("__") and parts[n].endswith("__")):
                return True
            if parts[n].endswith("_"):       # a family of names (U_*)
                return any(t.startswith(parts[n]) for t in top_level_names(path))
            return parts[n] in top_level_names(path)
    return False


def fmu_variable_names() -> frozenset:
    from fmu_wheelset.fmu.variables import TABLE
    return frozenset(v.name for v in TABLE)


def comment_text(path: Path) -> str:
    """The comments and string literals of a Python file (docstrings among them)."""
    import io
    import tokenize
    out = []
    with open(path, "rb") as f:
        for tok in tokenize.tokenize(f.readline):
            if tok.type in (tokenize.COMMENT, tokenize.STRING):
                out.append(tok.string)
    return "\n".join(out)


def stale_references() -> list:
    found = []
    variables = fmu_variable_names()
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel == "tests/test_references.py":      # its own examples
                continue
            text = comment_text(path)
            for ref in PATH.findall(text):
                if not (ROOT / ref).exists():
                    found.append(f"{rel}: {ref}")
            for ref in DOTTED.findall(text):
                ref = ref.rstrip(".")
                if (ref not in variables and (rel, ref) not in NOT_REFERENCES
                        and not dotted_exists(ref)):
                    found.append(f"{rel}: {ref}")
    return sorted(set(found))


def test_the_checker_finds_a_stale_name():
    assert not dotted_exists("solver.fast_step")             # moved to solver.model
    assert dotted_exists("solver.model.fast_step.fmu_outputs")
    assert dotted_exists("solver.layout.MAX_POINTS")
    assert PATH.findall("see fmu_wheelset/slave.py and solver/layout.py") == [
        "fmu_wheelset/slave.py", "solver/layout.py"]


def test_every_module_named_in_a_comment_or_docstring_exists():
    assert stale_references() == []
