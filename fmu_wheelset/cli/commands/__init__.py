"""Subcommands of `wheelset-fmu`.

Each module here defines `register(subparsers)`, which adds one or more
subcommands and sets `func` on each parser to the callable that runs it
(taking the parsed arguments and returning the exit code).
"""
