"""Parameter sweeps of the FMU: the sweep file, its cases, their runs on Dask
and the summary (sweep.py), and the checks of a whole plan before any case
runs (plan.py). Nothing here is bundled in the FMU."""
