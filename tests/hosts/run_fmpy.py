"""Run the wheelset FMU in FMPy (simulate_fmu) for STOP s with steps of 1 ms and
its default parameters and print the given outputs at the end as JSON. Used
with the python of an environment that has FMPy but none of the FMU's packages.

usage: python run_fmpy.py FMU STOP OUTPUT_NAMES_JSON"""
import json
import sys

from fmpy import simulate_fmu

fmu, stop, read = sys.argv[1], float(sys.argv[2]), json.loads(sys.argv[3])
result = simulate_fmu(fmu, stop_time=stop, output_interval=1e-3, output=read)
out = {name: float(result[name][-1]) for name in read}
out["time"] = float(result["time"][-1])
print("RESULT " + json.dumps(out), flush=True)
