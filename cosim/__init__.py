"""Host-side co-simulation masters around the wheelset FMU.

- ``cosim.vehicle``: the Manchester benchmark vehicle 1 (carbody, two bogie
  frames, primary and secondary suspensions) over four wheelset FMU instances,
  linearly implicit coupling with an interface model of each wheelset; the
  lateral stability of a bogie and of the vehicle.
- ``cosim.track``: a ballasted track (both rails as beams on discrete pads,
  sleepers and ballast) built in OpenSeesPy, with a moving point load
  distributed by the element shape functions, its two time-stepping engines,
  and the fixed-step Gauss-Seidel master that couples the wheelset FMU
  (through FMPy) with that track, step by step.
- ``cosim.fmpy_host``: setting an FMU variable of any type through FMPy.
"""
