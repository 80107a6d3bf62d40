"""What a run of the track master takes and gives: its options (CosimOptions),
its recorded time histories and timings (CosimResult), and the error of a run
that cannot go on (CosimError)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

from .parameters import TrackParameters


class CosimError(RuntimeError):
    """The co-simulation could not go on (FMU error or discard, track failure)."""


@dataclass
class CosimOptions:
    step: float = 1e-3                  # s, communication step
    duration: float = 1.0               # s
    order: str = "fmu-first"            # or "track-first"
    extrapolation: str = "none"         # or "linear"
    engine: str = "assembled"           # or "opensees" (ops.analyze each step)
    start_position: float = 15.0        # m, wheel position on the track model at t = 0
    window_margin: float = 20.0         # m: shift the model when less than this is ahead
    track: TrackParameters = field(default_factory=TrackParameters)
    fmu_parameters: Mapping[str, object] = field(default_factory=dict)
    rigid_track: bool = False           # True: no track (rail inputs zero), same master
    interface_jacobian: bool = True     # implicit contact linearisation in the track step
    jacobian_every: int = 10            # steps between two probes of the FMU's sensitivity
    jacobian_perturbation: float = 1e-6  # m
    jacobian_probe_step: float = 1e-6   # s, the short step of the probes ("step" method)
    jacobian_method: str = "derivative"  # fmi2GetDirectionalDerivative; "step": perturbed doSteps
    output_every: int = 1               # record every n-th step
    static_start: bool = False          # True: the track starts statically deflected

    def __post_init__(self):
        if self.order not in ("fmu-first", "track-first"):
            raise ValueError(f"order must be 'fmu-first' or 'track-first', got {self.order!r}")
        if self.jacobian_method not in ("derivative", "step"):
            raise ValueError(f"jacobian_method must be 'derivative' or 'step', got "
                             f"{self.jacobian_method!r}")
        if self.extrapolation not in ("none", "linear"):
            raise ValueError(f"extrapolation must be 'none' or 'linear', got {self.extrapolation!r}")
        if not (math.isfinite(self.step) and self.step > 0):
            raise ValueError(f"step must be positive, got {self.step!r}")
        if not (math.isfinite(self.duration) and self.duration > 0):
            raise ValueError(f"duration must be positive, got {self.duration!r}")


@dataclass
class CosimResult:
    columns: dict                        # name -> array over the recorded steps
    wall_fmu: float                      # s spent in the FMU's steps (set/doStep/get, probes)
    wall_track: float                    # s spent stepping the track model (window shifts included)
    wall_total: float                    # s for the whole run (set-ups included)
    steps: int
    options: CosimOptions
    window_shifts: int = 0
    wall_track_setup: float = 0.0        # s building the track (OpenSees matrices, factor, kernels)
    wall_fmu_setup: float = 0.0          # s loading, instantiating and initialising the FMU
    wall_master_setup: float = 0.0       # s the master's tables and first calls before the loop

    @property
    def simulated(self) -> float:
        return self.steps * self.options.step

    @property
    def real_time_factor(self) -> float:
        return self.simulated / max(self.wall_total, 1e-12)
