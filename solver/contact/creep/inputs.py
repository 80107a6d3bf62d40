"""Checks of the creep models' inputs."""

from __future__ import annotations

import math

from ...errors import CreepError


def _check_poisson(poisson):
    if not (math.isfinite(poisson) and 0.0 <= poisson <= 0.5):
        raise CreepError(f"poisson must be in [0, 0.5], got {poisson!r}")


def _check_finite(**values):
    for name, v in values.items():
        if not math.isfinite(v):
            raise CreepError(f"{name} must be finite, got {v!r}")
