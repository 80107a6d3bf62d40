"""The wheelset model: the Python object around the kernels, its parameters and
outputs. This package's names are the model's public interface, the one the
FMU (fmu_wheelset/fmu/) and the co-simulation masters use.

parameters  WheelsetParameters and the names of the models
outputs     the names of the output record, the inputs, a step's result, the output views
wheelset    WheelsetModel
fast_step   the FMU's whole communication step compiled for the C front end
"""
from .outputs import (RECORD_INDEX, StepResult, WheelsetInputs, WheelsetOutputs, bad_input_error,
                      named_outputs)
from .parameters import (CONTACT_GEOMETRY_NAMES, CONTACT_MODEL_NAMES, CREEP_MODEL_NAMES,
                         INTEGRATOR_NAMES, MAX_SUBSTEPS_LIMIT, WheelsetParameters, resolve_source)
from .wheelset import WheelsetModel

__all__ = ["RECORD_INDEX", "StepResult", "WheelsetInputs", "WheelsetOutputs", "bad_input_error",
           "named_outputs", "CONTACT_GEOMETRY_NAMES", "CONTACT_MODEL_NAMES", "CREEP_MODEL_NAMES",
           "INTEGRATOR_NAMES", "MAX_SUBSTEPS_LIMIT", "WheelsetParameters", "resolve_source",
           "WheelsetModel"]
