# Entry points: `make demo` (build the FMU, run the validation suite through
# FMPy), `make fmu` (only the FMU, for this machine), `make test` (the whole
# suite) and `make test-fast` (everything but the tests marked fmu, cross, cosim
# or slow: the markers are in pyproject.toml). Each creates or reuses the local
# virtual environment .venv and installs the project with its dependencies into
# it; every step says what it does (pip lists the packages as it goes).
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
# the demo's packages (the core, FMPy, the OpenSees track), then the tests' and the
# cross-builds' (real FMI hosts, zig cc: another 0.6 GB)
DEMO_STAMP = $(VENV)/.demo-stamp
STAMP   = $(VENV)/.installed-stamp

.PHONY: demo fmu test test-fast bench generate clean

$(DEMO_STAMP): pyproject.toml
	@echo "== .venv: the virtual environment, the project and what the demo needs (pip lists each package)"
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade --progress-bar off pip
	$(PY) -m pip install --progress-bar off -e '.[track]'
	touch $(DEMO_STAMP)

$(STAMP): $(DEMO_STAMP) pyproject.toml
	@echo "== .venv: what the tests and the cross-builds need (pip lists each package)"
	$(PY) -m pip install --progress-bar off -e '.[test,track,cross]'
	touch $(STAMP)

demo: $(DEMO_STAMP)
	$(PY) -m fmu_wheelset.cli demo --out demo-output

# the FMU alone, with the numba cache of this machine's CPU (`wheelset-fmu build`
# without --numba-targets also ships the generic one, for other machines)
fmu: $(DEMO_STAMP)
	$(PY) -m fmu_wheelset.cli build --out dist/Wheelset.fmu --numba-targets build-cpu

# two workers (pytest-xdist), each test file in one of them (its module fixtures once)
test: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider -n 2 --dist loadfile

test-fast: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider -n 2 --dist loadfile -m "not slow and not fmu and not cross and not cosim"

# the files written from the registries and the variable table (a new model or
# built-in profile: its module, its registration line, then this): the FMU's
# declarations with the new variables' value references, docs/variables.md, the
# built-in profiles written out under profiles/
generate: $(STAMP)
	$(PY) -m fmu_wheelset.fmu.registry_declarations
	$(PY) -m fmu_wheelset.cli variables --markdown --out docs/variables.md
	$(PY) profiles/write_builtin_profiles.py

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) dist demo-output build *.egg-info
