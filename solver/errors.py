"""The errors of the solver: one base class, one subclass per subject.

Every error class of the solver derives from `SolverError` (itself a
ValueError, as each of them was before), so that a caller such as the FMU can
catch all of them in one clause and still tell them apart (solver.creep,
solver.geometry_analysis and solver.profile_definitions still raise plain
ValueError for bad arguments):

    SolverError
      ProfileError        solver.profiles: a malformed or unusable profile (names file and line)
      TrackError          solver.track, solver.track_excitation: a bad track layout,
                          irregularity or rail motion
      GeometryError       solver.geometry: a contact-geometry request that cannot be answered
      NormalContactError  solver.normal: bad input to the normal-contact layer (and normal_exact)
      DataFileError       solver.data_files: an input file that cannot be read safely
      WheelsetError       here: bad wheelset parameters, inputs or calls (solver.wheelset)

This module imports nothing, so that every layer can use it.
"""


class SolverError(ValueError):
    """Base class of the solver's errors on bad input."""


class WheelsetError(SolverError):
    """Bad wheelset parameters or inputs."""
