"""The errors of the solver: one base class, one subclass per subject.

Every error class of the solver derives from `SolverError` (itself a
ValueError, as each of them was before), so that a caller such as the FMU can
catch all of them in one clause and still tell them apart:

    SolverError
      ProfileError        solver.profiles, solver.profiles.definitions: a malformed or
                          unusable profile (names file and line)
      TrackError          solver.track, solver.track.excitation: a bad track layout,
                          irregularity or rail motion
      GeometryError       solver.contact.geometry: a contact-geometry request that cannot be answered
      NormalContactError  solver.contact.normal: bad input to the normal-contact layer (and normal_exact)
      CreepError          solver.contact.creep, solver.contact.creep.exact_rolling: bad input to the tangential
                          contact (creepages, ellipse, model, grid)
      DataFileError       solver.data_files: an input file that cannot be read safely
      WheelsetError       here: bad wheelset parameters, inputs or calls (solver.model.wheelset)

This module imports nothing of the solver, so that every layer can use it.
"""

import os


class SolverError(ValueError):
    """Base class of the solver's errors on bad input."""


class WheelsetError(SolverError):
    """Bad wheelset parameters or inputs."""


class ProfileError(SolverError):
    """A profile (file or point set) that cannot be used; names the file and line when known."""

    def __init__(self, message: str, path: str | os.PathLike | None = None, line: int | None = None):
        self.path = None if path is None else os.fspath(path)
        self.line = line
        self.reason = message
        where = ""
        if self.path is not None:
            where = f"{self.path}, line {line}: " if line is not None else f"{self.path}: "
        super().__init__(where + message)


class CreepError(SolverError):
    """Bad input to the tangential (creep) contact models."""
