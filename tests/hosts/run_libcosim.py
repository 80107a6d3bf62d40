"""Run the wheelset FMU in libcosim (libcosimpy) for 1 s with the given start
values (every parameter) and print the requested outputs as JSON.

usage: python run_libcosim.py FMU VALUES_JSON OUTPUT_NAMES_JSON"""
import json, sys
from fmpy import read_model_description
from libcosimpy.CosimExecution import CosimExecution
from libcosimpy.CosimSlave import CosimLocalSlave
from libcosimpy.CosimObserver import CosimObserver
fmu, values, read = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
md = read_model_description(fmu)
by = {v.name: v for v in md.modelVariables}
execution = CosimExecution.from_step_size(step_size=int(1e6))
slave = CosimLocalSlave(fmu_path=fmu, instance_name="wheelset")
index = execution.add_local_slave(local_slave=slave)
observer = CosimObserver.create_last_value()
execution.add_observer(observer=observer)
for name, value in values.items():
    v = by[name]
    set_initial = {"Real": execution.real_initial_value, "Integer": execution.integer_initial_value,
                   "Boolean": execution.boolean_initial_value, "String": execution.string_initial_value}[v.type]
    ok = set_initial(index, v.valueReference, {"Real": float, "Integer": int, "Boolean": bool, "String": str}[v.type](value))
    assert ok is not False, name
assert execution.simulate_until(target_time=int(1e9)), "simulate_until failed"
out = {}
for name in read:
    v = by[name]
    get = {"Real": observer.last_real_values, "Integer": observer.last_integer_values,
           "Boolean": observer.last_boolean_values, "String": observer.last_string_values}[v.type]
    value = get(index, [v.valueReference])[0]
    # libcosimpy hands Strings over as the C bytes; FMI strings are UTF-8
    out[name] = value.decode("utf-8") if isinstance(value, bytes) else value
print("RESULT " + json.dumps(out), flush=True)
