"""Contact and dynamics core of the wheelset FMU.

Layers (each only calls the ones above it):
profiles -> track -> geometry -> normal -> creep -> wheelset -> integrate.
SI units everywhere (m, N, s, rad); profile files are in millimetres and are
converted once, when loaded.
"""

from .numba_cache import clear_if_sources_changed as _clear_if_sources_changed

_clear_if_sources_changed()
