"""Run one compatibility case (wheelset-fmu compat) in libcosim: the FMU from 0
to STOP with communication steps of STEP (libcosim's fixed-step algorithm),
its inputs from the case's _in.csv (linear between rows, set through an
override manipulator before each step, as FMPy sets them), every variable read
after every step by a last-value observer; writes time and the OUTPUTS after
each step as CSV.

usage: python run_libcosim_case.py FMU IN_CSV STOP STEP OUTPUTS_JSON OUT_CSV"""
import csv
import json
import sys

import numpy as np
from fmpy import read_model_description
from libcosimpy.CosimExecution import CosimExecution
from libcosimpy.CosimManipulator import CosimManipulator
from libcosimpy.CosimObserver import CosimObserver
from libcosimpy.CosimSlave import CosimLocalSlave

fmu, in_csv, stop, step, outputs, out_csv = sys.argv[1:]
stop, step, outputs = float(stop), float(step), json.loads(outputs)
by = {v.name: v for v in read_model_description(fmu).modelVariables}
table = np.genfromtxt(in_csv, delimiter=",", names=True, deletechars="")
names = table.dtype.names[1:]
execution = CosimExecution.from_step_size(step_size=int(round(step * 1e9)))
index = execution.add_local_slave(local_slave=CosimLocalSlave(fmu_path=fmu, instance_name="wheelset"))
observer = CosimObserver.create_last_value()
execution.add_observer(observer=observer)
override = CosimManipulator.create_override()
execution.add_manipulator(manipulator=override)
refs = [by[n].valueReference for n in names]


def inputs_at(t):
    return [float(np.interp(t, table["time"], table[n])) for n in names]


for vr, x in zip(refs, inputs_at(0.0)):
    execution.real_initial_value(index, vr, x)
rows = []
n = int(round(stop / step))
for k in range(n):
    override.slave_real_values(index, refs, inputs_at(k * step))
    assert execution.step(), f"libcosim step {k} failed"
    # every variable of the FMU through the observer (Strings included)
    for kind, get in (("Real", observer.last_real_values), ("Integer", observer.last_integer_values),
                      ("Boolean", observer.last_boolean_values), ("String", observer.last_string_values)):
        get(index, [v.valueReference for v in by.values() if v.type == kind])
    rows.append([(k + 1) * step] + observer.last_real_values(index, [by[o].valueReference
                                                                    for o in outputs]))
with open(out_csv, "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["time", *outputs])
    for row in rows:
        w.writerow([format(float(x), ".17g") for x in row])
print("DONE", len(rows), flush=True)
