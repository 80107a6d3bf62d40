"""Functions written from data: the numba dispatch of a registry, the fast step's
unpacking of its block.

numba compiles a branch on an integer id, or a tuple built field by field, only
from source text: it cannot loop over a registry of kernels or a list of fields.
So the few functions whose shape follows a table are written out here from it:
the source is plain Python (`source` returns it, for a reader or a test), built
only from the project's own identifiers and integers (checked: nothing from
outside reaches it), compiled under the file name of the module it belongs to
and run in that module's namespace. numba then compiles and caches it like any
function of that module (its cache index is named by the function's name; a
name that carries a digest of the table keeps a changed table from meeting a
stale cache entry).
"""
from __future__ import annotations

import hashlib
import keyword
import re

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def check_identifier(name: str) -> str:
    """name, if it is a Python identifier (and not a keyword); ValueError otherwise."""
    if not isinstance(name, str) or not _IDENTIFIER.match(name) or keyword.iskeyword(name):
        raise ValueError(f"{name!r} is not an identifier")
    return name


def digest(*parts) -> str:
    """A short digest of the text of parts (for function names that follow a table)."""
    text = "\x1f".join(str(p) for p in parts)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def define(source: str, name: str, namespace: dict):
    """Compile `source` (one top-level def of `name`) as part of the module whose
    globals are `namespace` (its __file__ is the file name numba caches under), run
    it there and return the function."""
    check_identifier(name)
    code = compile(source, namespace["__file__"], "exec")
    exec(code, namespace)       # noqa: S102 - the project's own generated source, see the module docstring
    return namespace[name]
