"""A bogie vehicle over four wheelset FMUs: the reference example of coupling
the FMU into a vehicle model, and the stability tool built on it.

The vehicle is the Manchester benchmark vehicle 1 (Iwnicki 1998, "The
Manchester benchmarks for rail vehicle simulation", VSD 30:3-4, 295-313): a
carbody and two bogie frames, rigid bodies with six degrees of freedom each,
joined by the secondary suspension; each bogie frame carries two wheelsets
through the primary suspension (one linear spring-damper triple per axle box).
The wheelsets are four instances of `Wheelset.fmu` (FMI 2.0 co-simulation,
loaded with FMPy's `FMU2Slave`); the master integrates the bodies and the
suspensions and exchanges, at every communication step h, the axle-box forces
(to the FMUs) and the axle-box kinematics (from the FMUs). A Modelica or
Simulink vehicle model couples the FMU in exactly the same way.

The modules, each importing only modules listed before it:
- ``parameters``: the vehicle's data (VehicleParameters), gravity, the rail
  distance, VehicleError.
- ``curve_layout``: the track under the vehicle (CurveLayout: straight, a
  transition, a curve with cant) and its local frames.
- ``bodies``: the master's linear mechanical model (VehicleModel): the
  bodies, the suspension elements, their mass, damping and stiffness.
- ``body_step``: the bodies' communication step (forcing of the track, the
  trapezoidal rule with the wheelsets' interface models, the coupling
  schemes) as one numba function on flat arrays: the master calls it, the
  vehicle-bodies FMU (fmu_wheelset/vehicle_fmu) calls it from C.
- ``fmu_wheelsets``: one wheelset FMU instance through FMPy (FmuWheelset),
  the variables exchanged with it, the extraction of the FMU file.
- ``results``: the recorded time histories (VehicleResult) and the wheel
  results from the FMUs' outputs.
- ``master``: the co-simulation master (VehicleCosim) over body_step.
- ``stability``: linear and nonlinear lateral stability of a bogie and of
  the vehicle.
"""
