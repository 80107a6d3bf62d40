"""The wheelset FMU: pythonfmu slave, build helpers and the command line."""
