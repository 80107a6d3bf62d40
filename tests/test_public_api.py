"""No module uses a private attribute of the FMU's instance, its two front ends
or the wheelset model outside the module that defines it.

The FMU instance (fmu_wheelset/fmu/instance.py FmuInstance), pythonfmu's slave
(slave.py Wheelset), the native bridge (native_bridge.py Instance) and the
core's model (solver/model/wheelset.py WheelsetModel) are used through their
public methods only, so each can change inside without its users changing.
Read with `ast` (nothing imported): every `<something>._name` in the project's
code, tests and benchmarks where `_name` is a private member of one of these
classes and `<something>` is not the class's own `self` or `cls`.

pythonfmu's slave protocol names its hooks with a leading underscore
(`Fmi2Slave._get_fmu_state`, ...): those are pythonfmu's public interface to a
slave, not the slave's privates, and may be called (tests drive the slave the
way pythonfmu does).
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OWNERS = {  # module file -> the classes whose privates stay in it
    "fmu_wheelset/fmu/instance.py": ("FmuInstance",),
    "fmu_wheelset/fmu/slave.py": ("Wheelset",),
    "fmu_wheelset/fmu/native_bridge.py": ("Instance", "MemoryState"),
    "solver/model/wheelset.py": ("WheelsetModel",),
}
SEARCHED = ("solver", "fmu_wheelset", "cosim", "tests", "benchmarks")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def pythonfmu_protocol() -> set:
    """The underscore names pythonfmu's Fmi2Slave defines (its hooks)."""
    import pythonfmu.fmi2slave as base
    tree = ast.parse(Path(base.__file__).read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef) and _private(node.name)}


def private_members(path: Path, classes) -> set:
    """The private names a class defines: methods, class attributes and the
    attributes its methods assign on self."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.ClassDef) and node.name in classes):
            continue
        for item in ast.walk(node):
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and _private(item.name):
                found.add(item.name)
            elif (isinstance(item, ast.Attribute) and isinstance(item.ctx, ast.Store)
                  and isinstance(item.value, ast.Name) and item.value.id == "self"
                  and _private(item.attr)):
                found.add(item.attr)
            elif isinstance(item, ast.Constant) and isinstance(item.value, str) \
                    and _private(item.value) and item.value.isidentifier():
                found.add(item.value)        # __slots__ entries
    return found


def uses_outside(privates: dict) -> list:
    wrong = []
    for folder in SEARCHED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            foreign = set().union(*(names for owner, names in privates.items() if owner != rel))
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Attribute) and node.attr in foreign
                        and not (isinstance(node.value, ast.Name)
                                 and node.value.id in ("self", "cls"))):
                    wrong.append(f"{rel}:{node.lineno} .{node.attr}")
    return wrong


def test_the_checker_sees_a_private_use():
    """Without this an empty scan would pass: a use of a private member in some
    other module's source is found."""
    privates = {"fmu_wheelset/fmu/instance.py": {"_host_values"}}
    tree = ast.parse("def f(fmu):\n    return fmu._host_values\n")
    assert any(isinstance(n, ast.Attribute) and n.attr in privates["fmu_wheelset/fmu/instance.py"]
               for n in ast.walk(tree))
    members = private_members(ROOT / "fmu_wheelset/fmu/instance.py", ("FmuInstance",))
    assert {"_host_values", "_initialize_model", "_restore_state"} <= members


def test_no_private_member_of_the_instance_the_front_ends_or_the_model_is_used_elsewhere():
    protocol = pythonfmu_protocol()
    privates = {owner: private_members(ROOT / owner, classes) - protocol
                for owner, classes in OWNERS.items()}
    assert all(privates.values())
    assert uses_outside(privates) == []
