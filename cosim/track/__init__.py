"""The flexible track: a ballasted track in OpenSeesPy (both rails as beams on
discrete rail pads, sleepers and ballast, loaded by moving wheel forces), two
engines that step it in time, and the fixed-step Gauss-Seidel master that
couples the wheelset FMU (through FMPy) with it.

The modules, each importing only modules listed before it:
- ``parameters``: rail sections (UIC60, CHN60) and the track's data
  (TrackParameters), TrackModelError.
- ``fe_model``: the OpenSees model (TrackModel): building it, a moving load
  distributed by the element shape functions, static analysis, the element
  matrices; importing OpenSeesPy.
- ``analytic``: closed-form references (pinned-pinned frequencies of a rail
  span, the Winkler beam).
- ``newmark_kernel``: the numba kernels of the assembled engine.
- ``engines``: the two time-stepping engines (AssembledTrack, OpenSeesTrack)
  and make_track.
- ``options``: the master's options (CosimOptions), its result (CosimResult)
  and CosimError.
- ``rail_loads``: the loads of the wheels on the rail axes from the FMU's
  outputs.
- ``wheelset_fmu``: the wheelset FMU through FMPy (WheelsetFMU) and its
  probes of the contact's stiffness and damping.
- ``master``: the coupling loop (run_track_cosim).
"""
