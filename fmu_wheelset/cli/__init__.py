"""The `wheelset-fmu` command line: the parser and entry point (main.py), the
argument types, input checks and error convention (args.py) and one module per
subcommand (commands/). `python -m fmu_wheelset.cli` runs it (__main__.py)."""
