"""Everything around the solver: the FMU itself (fmu/), its build (packaging/),
the `wheelset-fmu` command line (cli/), parameter sweeps (sweeps/), the
validation suite (validation/) and the figures (plots.py)."""
