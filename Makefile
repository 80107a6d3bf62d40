# Entry points: `make demo` (build the FMU, run a validation scenario through
# FMPy), `make test` (the whole suite) and `make test-fast` (everything but the
# tests marked fmu, cross, cosim or slow: the markers are in pyproject.toml).
# Each creates or reuses the local virtual environment .venv and installs the
# project with its dependencies into it.
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
STAMP   = $(VENV)/.installed-stamp

.PHONY: demo test test-fast bench generate clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,track,cross]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m fmu_wheelset.cli demo --out demo-output

test: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider

test-fast: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider -m "not slow and not fmu and not cross and not cosim"

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
