"""Wheel and rail profiles.

profile      the Profile object and its resampling
files        profile files (coordinate tables, SIMPACK .prw / .prr) read safely
simpack      the SIMPACK profile format
definitions  the analytic curves of the built-in profiles, each constant with its source
builtins     the built-in profiles by name
data/        profile files shipped with the solver (the Manchester benchmark's)
"""
