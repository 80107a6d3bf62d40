"""Run the vehicle system (an SSP archive of `wheelset-fmu system vehicle`) in a
real co-simulation master and print what the wheelsets gave, as JSON.

usage: python run_vehicle_system.py MASTER SSP CASE DURATION EVERY [PUSH_FORCE PUSH_TIME]
MASTER: libcosim-ssp (libcosimpy from the case's .ssd), libcosim-osp (libcosimpy
from the case's OspSystemStructure*.xml), ecos (ecospy from the .ssp, the case's
parameter set by name). Every EVERY steps of 1 ms: time, each wheelset's
wheel.{left,right}.{Q,Y}, wheelset.y and the leading bogie's lateral box force.
The optional push (N, s) overrides the bodies' push.force and push.duration."""
import json
import os
import sys
import tempfile
import time
import zipfile

from fmpy import read_model_description

master, ssp, case, duration, every = sys.argv[1:6]
duration, every = float(duration), int(every)
push = tuple(float(x) for x in sys.argv[6:8]) if len(sys.argv) > 7 else None
OUTPUTS = ["wheel.left.Q", "wheel.right.Q", "wheel.left.Y", "wheel.right.Y", "wheelset.y"]
WHEELSETS = [f"wheelset{j}" for j in range(1, 5)]
h = 1e-3
n_steps = int(round(duration / h))
folder = tempfile.mkdtemp(prefix="vehicle-system-")
with zipfile.ZipFile(ssp) as z:
    z.extractall(folder)
wheelset_vr = {v.name: v.valueReference
               for v in read_model_description(os.path.join(folder, "resources", "Wheelset.fmu")).modelVariables}
bodies_vr = {v.name: v.valueReference
             for v in read_model_description(os.path.join(folder, "resources", "VehicleBodies.fmu")).modelVariables}
rows = []
wall = 0.0
if master.startswith("libcosim"):
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    from libcosimpy.CosimObserver import CosimObserver
    log_output_level(CosimLogLevel.ERROR)
    suffix = "" if case == "benchmark" else f"-{case}"
    if master == "libcosim-ssp":
        execution = CosimExecution.from_ssp_file(os.path.join(folder, f"SystemStructure{suffix}.ssd"))
    else:
        execution = CosimExecution.from_osp_config_file(os.path.join(folder, f"OspSystemStructure{suffix}.xml"))
    index = {name: execution.slave_index_from_instance_name(name) for name in WHEELSETS + ["bodies"]}
    if push is not None:
        execution.real_initial_value(index["bodies"], bodies_vr["push.force"], push[0])
        execution.real_initial_value(index["bodies"], bodies_vr["push.duration"], push[1])
    observer = CosimObserver.create_last_value()
    execution.add_observer(observer=observer)
    refs = [wheelset_vr[n] for n in OUTPUTS]

    def sample(t):
        row = [t]
        for name in WHEELSETS:
            row += list(observer.last_real_values(index[name], refs))
        rows.append(row)
    t0 = time.perf_counter()
    assert execution.step(1), "the first step failed"
    for n in range(1, n_steps + 1):
        if n % every == 0 or n == 1:
            sample(n * h)
        if n < n_steps:
            assert execution.step(1), f"step {n} failed"
    wall = time.perf_counter() - t0
elif master == "ecos":
    import ctypes
    ctypes.CDLL(os.path.join(sys.prefix, "lib", "libtbb.so.12"), mode=ctypes.RTLD_GLOBAL)
    from ecospy.EcosSimulation import EcosSimulation
    with EcosSimulation(ssp_path=folder, step_size=h) as sim:
        sim.init(parameter_set=case)
        if push is not None:
            sim.set_real("bodies::push.force", push[0])
            sim.set_real("bodies::push.duration", push[1])
        t0 = time.perf_counter()
        for n in range(1, n_steps + 1):
            sim.step(1)
            if n % every == 0 or n == 1:
                row = [n * h]
                for name in WHEELSETS:
                    row += [sim.get_real(f"{name}::{o}") for o in OUTPUTS]
                rows.append(row)
        wall = time.perf_counter() - t0
        sim.terminate()
else:
    raise SystemExit(f"unknown master {master}")
print("RESULT " + json.dumps({"rows": rows, "outputs": OUTPUTS, "wall": wall, "steps": n_steps}),
      flush=True)
