"""Contact and dynamics core of the wheelset FMU.

The modules in layer order; a module imports only modules listed before it
(tests/test_layers.py holds this order, docs/ARCHITECTURE.md explains it):

    support            errors, numba_cache, this package, data_files
    inputs             profile_definitions, profile_formats, profiles, track,
                       track_excitation
    contact geometry   geometry, geometry_table, geometry_analysis
    contact forces     normal, normal_exact, creep, exact_rolling
    wheelset dynamics  dynamics, derailment, integrate, fast_step
    model              wheelset
    uses of the model  scenarios, stability

The solver imports nothing of fmu_wheelset or cosim. SI units everywhere (m, N,
s, rad); profile files are in millimetres and are converted once, when loaded.
"""

from .numba_cache import clear_if_sources_changed as _clear_if_sources_changed

_clear_if_sources_changed()
