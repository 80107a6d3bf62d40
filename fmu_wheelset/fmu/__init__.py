"""The FMU itself: the table of variables, the model description, the pythonfmu
slave and what the FMU bundles beside it (the native bridge and worker, the
state format, the solver cache, the presets), and the C front end (native/).

The modules the FMU bundles import only each other, relatively or under their
bundled names (docs/ARCHITECTURE.md); this package imports nothing."""
