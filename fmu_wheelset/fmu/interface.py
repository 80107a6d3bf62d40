"""The FMU's public interface for the code that drives it from outside: the
sweeps, the validation and the co-simulation masters (cosim/).

What a host-side program needs to know of the FMU besides its model
description: how many contact points per wheel its outputs carry
(`POINTS_PER_WHEEL`) and the FMI start values that make it run with a core
``WheelsetParameters`` (`start_values`). Both `fmu_wheelset` and `cosim` import
it, and it imports nothing of either but the FMU's variable table, so the
import picture runs one way: solver <- fmu_wheelset.fmu <- cosim <- the rest of
fmu_wheelset (tests/test_layers.py). Not bundled in the FMU (it imports the
solver by name).
"""
from __future__ import annotations

import os

from .variables import POINTS_PER_WHEEL, start_values_for

__all__ = ["POINTS_PER_WHEEL", "start_values"]


def start_values(params, fmi_names) -> tuple[dict, list]:
    """FMI start values for WheelsetParameters `params` of an FMU whose variables
    are `fmi_names` (the variable table, fmu_wheelset/fmu/variables.py), and the
    list of what that FMU has no parameter for. A profile or track file named
    relative to the working directory is passed absolute: the FMU looks relative
    names up in its resources only (docs/SECURITY.md)."""
    import solver.model as wheelset
    values, missing = start_values_for(params, wheelset, available=set(fmi_names))
    builtin = {"wheel.profile": wheelset.is_builtin_profile,
               "rail.profile": wheelset.is_builtin_profile,
               "track.scenario": lambda name: name in wheelset.TRACKS.names()}
    for name, is_builtin in builtin.items():
        value = values.get(name)
        if (isinstance(value, str) and not os.path.isabs(value) and not is_builtin(value)
                and os.path.isfile(value)):
            values[name] = os.path.abspath(value)
    return values, missing
