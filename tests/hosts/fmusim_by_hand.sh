#!/bin/sh
# By-hand check of the wheelset FMU in fmusim, the FMI project's reference
# importer (modelica/Reference-FMUs). fmusim is not on the package registries
# and its source is not the project's: this script builds it OUTSIDE the
# repository against Debian's libraries and runs, under an empty environment,
#   1. the FMU with its default parameters (1 s, 1 ms steps), RUNS times,
#   2. the compatibility cases of `wheelset-fmu compat` with their inputs, RUNS times each,
# and compares every run with FMPy's (1e-9 of each signal's largest magnitude)
# and with the cases' references (fmpy.cross_check.validate_result).
# Results: docs/hosts.md.
#
# usage: tests/hosts/fmusim_by_hand.sh REFERENCE_FMUS_CHECKOUT WORK_DIR [RUNS]
#   REFERENCE_FMUS_CHECKOUT  a clone of modelica/Reference-FMUs at tag v0.0.39
#                            (the last release with fmusim/)
#   WORK_DIR                 where fmusim, the FMUs and the outputs go (outside the repo)
# needs: apt-get install zlib1g-dev libxml2-dev libminizip-dev libsundials-dev gcc,
#        and the project's .venv (make .venv/.installed-stamp)
set -eu
SRC=$(cd "$1" && pwd); WORK=$2; RUNS=${3:-10}
ROOT=$(cd "$(dirname "$0")/../.." && pwd); PY=$ROOT/.venv/bin/python
mkdir -p "$WORK"; WORK=$(cd "$WORK" && pwd)
# Debian 12's SUNDIALS is 6.4, whose SUNContext_Create takes a void* communicator
# (7.x: SUNComm, SUN_COMM_NULL); Debian's minizip replaces zlib's contrib copy
F=$SRC/fmusim
gcc -O2 -w -o "$WORK/fmusim" '-DFMUSIM_VERSION="v0.0.39"' -DSUN_COMM_NULL=NULL \
  -I"$F" -I"$SRC/include" -I/usr/include/libxml2 -I/usr/include/minizip \
  "$SRC"/src/FMI.c "$SRC"/src/FMI1.c "$SRC"/src/FMI2.c "$SRC"/src/FMI3.c \
  "$F"/csv.c "$F"/FMIUtil.c "$F"/FMIEuler.c "$F"/FMICVode.c "$F"/FMIModelDescription.c \
  "$F"/FMIRecorder.c "$F"/FMIZip.c "$F"/FMISimulation.c "$F"/FMIStaticInput.c \
  "$F"/FMI1CSSimulation.c "$F"/FMI1MESimulation.c "$F"/FMI2CSSimulation.c "$F"/FMI2MESimulation.c \
  "$F"/FMI3CSSimulation.c "$F"/FMI3MESimulation.c "$F"/fmusim.c "$F"/miniunzip.c \
  "$SRC"/src/structured_variable_name.yy.c "$SRC"/src/structured_variable_name.tab.c \
  -lxml2 -lminizip -lz -lsundials_cvode -lsundials_nvecserial -lm -ldl
"$WORK/fmusim" --version
"$PY" "$ROOT/build_fmu.py" --out "$WORK/Wheelset.fmu" > /dev/null
"$ROOT/.venv/bin/wheelset-fmu" compat "$WORK/compat" > /dev/null
run() {   # run NAME FMU STOP STEP [INPUT]: RUNS runs of fmusim under an empty environment
  name=$1; fmu=$2; stop=$3; step=$4; input=${5:-}
  i=1; clean=0
  while [ "$i" -le "$RUNS" ]; do
    out="$WORK/$name.$i.csv"
    set -- --interface-type cs --stop-time "$stop" --output-interval "$step" --output-file "$out"
    [ -n "$input" ] && set -- "$@" --input-file "$input"
    if env -i PATH=/usr/bin:/bin HOME="$HOME" "$WORK/fmusim" "$@" "$fmu" > "$WORK/$name.$i.log" 2>&1; then
      clean=$((clean + 1))
    else
      echo "$name run $i: exit $? ($(tail -c 300 "$WORK/$name.$i.log"))"
    fi
    i=$((i + 1))
  done
  echo "$name: $clean of $RUNS runs exit 0"
}
run default "$WORK/Wheelset.fmu" 1 0.001
for d in "$WORK"/compat/fmus/2.0/cs/linux64/wheelset-fmu/*/*/; do
  case_name=$(basename "$d")
  stop=$(sed -n 's/^StopTime, *//p' "$d/${case_name}_ref.opt")
  step=$(sed -n 's/^StepSize, *//p' "$d/${case_name}_ref.opt")
  run "$case_name" "$d/$case_name.fmu" "$stop" "$step" "$d/${case_name}_in.csv"
done
"$PY" - "$WORK" "$RUNS" <<'PYEOF'
import glob, os, sys
import numpy as np
import fmpy
from fmpy.cross_check import validate_result
from fmpy.cross_check.validate_vendor_repo import read_csv
work, runs = sys.argv[1], int(sys.argv[2])
def compare(name, reference, label):
    worst, same = 0.0, 0
    for i in range(1, runs + 1):
        path = os.path.join(work, f"{name}.{i}.csv")
        if not os.path.isfile(path):
            continue
        got = read_csv(path)
        problem = validate_result(got, reference, 0.0, float(reference["time"][-1]))
        if problem:
            print(f"{name} run {i}: {problem}")
        rel = 0.0
        for col in reference.dtype.names[1:]:
            if col in got.dtype.names and len(got[col]) == len(reference[col]):
                # relative to the signal's largest magnitude (as tests/test_compat.py)
                a, b = np.asarray(got[col], float), np.asarray(reference[col], float)
                rel = max(rel, float(np.max(np.abs(a - b))) / max(float(np.max(np.abs(b))), 1e-12))
        worst = max(worst, rel)
        same += rel <= 1e-9
    print(f"{name}: {same} of {runs} runs equal to {label} within 1e-9 relative (worst {worst:.2e})")
fmu = os.path.join(work, "Wheelset.fmu")
outputs = [v.name for v in fmpy.read_model_description(fmu).modelVariables
           if v.causality == "output" and v.type == "Real"]
ref = fmpy.simulate_fmu(fmu, stop_time=1.0, output_interval=1e-3, output=outputs)
compare("default", ref, "FMPy")
for d in sorted(glob.glob(os.path.join(work, "compat/fmus/2.0/cs/linux64/wheelset-fmu/*/*/"))):
    name = os.path.basename(os.path.dirname(d))
    compare(name, read_csv(os.path.join(d, f"{name}_ref.csv")), "the reference (FMPy)")
PYEOF
