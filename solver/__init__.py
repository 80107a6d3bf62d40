"""Contact and dynamics core of the wheelset FMU.

The solver's parts in layer order, `LAYERS` below: a module imports only
modules of its own part or of a part listed before it (tests/test_layers.py
reads `LAYERS` from this file and holds the code to it; docs/ARCHITECTURE.md
explains the layers). A part is a subpackage (every module below it: a new
module of an existing subpackage needs no entry) or one top-level module.

The solver imports nothing of fmu_wheelset or cosim. SI units everywhere (m, N,
s, rad); profile files are in millimetres and are converted once, when loaded.
"""

# (layer, its parts in order): "__init__" is this package's own file
LAYERS = (
    ("support", ("errors", "numba_cache", "__init__", "data_files", "layout", "codegen",
                 "registry")),
    ("inputs", ("profiles", "track")),
    ("contact geometry", ("contact", "contact.geometry")),
    ("contact forces", ("contact.normal", "contact.creep")),
    ("wheelset dynamics", ("dynamics", "dynamics.integrators")),
    ("model", ("model",)),
    ("uses of the model", ("scenarios", "stability", "contact_modes")),
)

from .numba_cache import clear_if_sources_changed as _clear_if_sources_changed  # noqa: E402

_clear_if_sources_changed()
