"""The track.

sections    track sections (straight, transition, curve) and the checks of their values
alignment   the Track: curvature, cant and position along the distance travelled
files       track files (TOML, CSV)
builtins    the built-in tracks of the scenarios
excitation  track irregularities and rail motion
"""
