"""Building the FMU: the model's files staged and zipped with pythonfmu, the
native front end compiled (build.py), cross-compiled for win64 and darwin64
(cross_build.py), and a self-contained Python runtime bundled (standalone.py).
Nothing here is bundled in the FMU."""
