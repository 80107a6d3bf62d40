"""The vehicle's nonlinear critical speed from runs of the SSP system in
libcosim (libcosimpy): the same push, the same verdict on the leading
wheelset's lateral motion and the same bisection as the project master's
study (cosim.vehicle.stability.hunting_run, bisect_critical_speed), only the
master is libcosim running the five FMUs of `wheelset-fmu system vehicle`."""
from __future__ import annotations

import os
import tempfile
import zipfile

import numpy as np


def libcosim_hunting_run(folder: str, speed: float, push: float = 30e3, push_time: float = 0.05,
                         duration: float = 3.0, window: float = 0.5, threshold: float = 0.1,
                         sustain: float = 0.9, every: int = 5):
    """One libcosim run of the extracted archive `folder` (benchmark case, the
    speed set on the bodies and every wheelset, the push on the leading
    wheelset): a cosim.vehicle.stability.HuntingRun. A step an FMU refuses
    (the wheelset derails) ends the run and counts as hunting."""
    from fmpy import read_model_description
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    from libcosimpy.CosimObserver import CosimObserver

    from cosim.vehicle.stability import HuntingRun, hunting_verdict
    log_output_level(CosimLogLevel.ERROR)
    wheelset = {v.name: v.valueReference for v in read_model_description(
        os.path.join(folder, "resources", "Wheelset.fmu")).modelVariables}
    bodies = {v.name: v.valueReference for v in read_model_description(
        os.path.join(folder, "resources", "VehicleBodies.fmu")).modelVariables}
    execution = CosimExecution.from_ssp_file(os.path.join(folder, "SystemStructure.ssd"))
    index = {name: execution.slave_index_from_instance_name(name)
             for name in ("bodies", "wheelset1", "wheelset2", "wheelset3", "wheelset4")}
    for name, value in (("vehicle.speed", speed), ("push.force", push), ("push.duration", push_time)):
        execution.real_initial_value(index["bodies"], bodies[name], float(value))
    for j in range(1, 5):
        execution.real_initial_value(index[f"wheelset{j}"], wheelset["wheelset.speed"], float(speed))
    observer = CosimObserver.create_last_value()
    execution.add_observer(observer=observer)
    h = 1e-3
    n_steps = int(round(duration / h))
    t, y = [0.0], [0.0]
    for n in range(1, n_steps + 1, every):
        if not execution.step(every):
            return HuntingRun(float(speed), np.inf, True, float("nan"), np.array(t), np.array(y),
                              f"libcosim stopped at t = {t[-1]:.3f} s (an FMU refused a step)")
        t.append((n + every - 1) * h)
        y.append(observer.last_real_values(index["wheelset1"], [wheelset["wheelset.y"]])[0])
    return hunting_verdict(speed, np.array(t), np.array(y), push_time, window, threshold, sustain)


def libcosim_critical_speed(ssp, v_min: float, v_max: float, tolerance: float = 1.0, progress=None,
                            **run_options):
    """(CriticalSpeed, runs) of the system in libcosim (bisection as the
    project master's nonlinear_critical_speed)."""
    from cosim.vehicle.stability import bisect_critical_speed
    folder = tempfile.mkdtemp(prefix="vehicle-ssp-")
    with zipfile.ZipFile(ssp) as z:
        z.extractall(folder)
    runs = []

    def run(v):
        r = libcosim_hunting_run(folder, v, **run_options)
        runs.append(r)
        if progress:
            progress(r)
        return r
    return bisect_critical_speed(run, v_min, v_max, tolerance), runs
