"""Run the wheelset FMU in Ecos (ecospy) for 1 s with the given parameter set
(every parameter) and print the requested outputs (and the end time) as JSON.

usage: python run_ecos.py FMU VALUES_JSON OUTPUT_NAMES_JSON"""
import json, sys
from fmpy import read_model_description
import ctypes, os
# ecospy 0.7 needs libtbb.so.12, which the PyPI package tbb installs into <prefix>/lib (not on
# the loader path): load it first so that libecosc.so finds it
ctypes.CDLL(os.path.join(sys.prefix, "lib", "libtbb.so.12"), mode=ctypes.RTLD_GLOBAL)
from ecospy.EcosSimulation import EcosSimulation
from ecospy.EcosSimulationStructure import EcosSimulationStructure
fmu, values, read = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
by = {v.name: v for v in read_model_description(fmu).modelVariables}
cast = {"Real": float, "Integer": int, "Boolean": bool, "String": str}
with EcosSimulationStructure() as structure:
    structure.add_model("wheelset", fmu)
    structure.add_parameter_set("initial", {f"wheelset::{k}": cast[by[k].type](v) for k, v in values.items()})
    with EcosSimulation(structure=structure, step_size=1e-3) as sim:
        sim.init(parameter_set="initial")
        sim.step_until(1.0)
        getter = {"Real": sim.get_real, "Integer": sim.get_integer, "Boolean": sim.get_bool,
                  "String": sim.get_string}
        out = {name: getter[by[name].type](f"wheelset::{name}") for name in read}
        out["time"] = sim.get_time()
        sim.terminate()
print("RESULT " + json.dumps(out), flush=True)
