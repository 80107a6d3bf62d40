# Two entry points: `make demo` (build the FMU, run a validation scenario through
# FMPy) and `make test`. Both create or reuse the local virtual environment .venv
# and install the project with its dependencies into it.
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python
STAMP   = $(VENV)/.installed-stamp

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,track,cross]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m fmu_wheelset.cli demo --out demo-output

test: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) dist demo-output build *.egg-info
