"""The wheelset model: the Python object around the kernels, its parameters and
outputs. This package's names are the model's public interface, the one the
FMU (fmu_wheelset/fmu/) and the co-simulation masters use.

parameters  WheelsetParameters and the names of the models
outputs     the names of the output record, the inputs, a step's result, the output views
wheelset    WheelsetModel
fast_step   the FMU's whole communication step compiled for the C front end

A host of the model (fmu_wheelset/fmu/) takes everything it needs from this
package: besides the names below, the array layout (`layout`), the compiled
step (`fast_step`), the built-in profiles' and tracks' names, track files and
the rail excitation's rule.
"""
from .. import layout
from ..profiles.builtins import is_builtin_profile
from ..track import excitation
from ..track.alignment import load_track
from ..track.builtins import TRACKS, builtin_track
from ..track.sections import DEFAULT_RAIL_DISTANCE, TrackError
from . import fast_step
from .outputs import (RECORD_INDEX, StepResult, WheelsetInputs, WheelsetOutputs, bad_input_error,
                      named_outputs)
from .parameters import (CONTACT_GEOMETRY_NAMES, CONTACT_MODEL_NAMES, CREEP_MODEL_NAMES,
                         INTEGRATOR_NAMES, MAX_SUBSTEPS_LIMIT, TRACK_MODEL_NAMES, WheelsetParameters,
                         resolve_source)
from .wheelset import ModelArrays, WheelsetModel

__all__ = ["RECORD_INDEX", "StepResult", "WheelsetInputs", "WheelsetOutputs", "bad_input_error",
           "named_outputs", "CONTACT_GEOMETRY_NAMES", "CONTACT_MODEL_NAMES", "CREEP_MODEL_NAMES",
           "INTEGRATOR_NAMES", "MAX_SUBSTEPS_LIMIT", "TRACK_MODEL_NAMES", "WheelsetParameters", "resolve_source",
           "ModelArrays", "WheelsetModel", "layout", "fast_step", "is_builtin_profile",
           "excitation", "load_track", "TRACKS", "builtin_track", "DEFAULT_RAIL_DISTANCE",
           "TrackError"]
