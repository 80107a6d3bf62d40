"""No function of the solver or the FMU is longer than 150 lines (read with
`ast`): a function that does one thing can be read whole. The exception is the
right-hand side, `wheelset_rhs`, whose split into named stages (contact,
normal, creep, assembly) is under way."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LONGEST = 150
FOLDERS = ("solver", "fmu_wheelset/fmu")
EXCEPTIONS = {("solver/dynamics/rhs.py", "wheelset_rhs")}


def long_functions(limit: int = LONGEST) -> list:
    found = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    length = node.end_lineno - node.lineno + 1
                    if length > limit and (rel, node.name) not in EXCEPTIONS:
                        found.append((rel, node.name, length))
    return found


def test_the_scan_finds_long_functions():
    """Without this an empty scan would pass: WheelsetModel.__init__ is over 100."""
    assert ("solver/model/wheelset.py", "__init__") in {
        (rel, name) for rel, name, _ in long_functions(100)}


def test_no_function_over_150_lines():
    assert long_functions() == []
