"""Which FMI parameter of the FMU (fmu_wheelset/slave.py) carries which
solver.wheelset.WheelsetParameters field: one table for everything that drives
the FMU from core parameters (sweeps, the validation suite, the tests)."""

REAL_PARAMETERS = {
    "gauge": "track.gauge", "rail_inclination": "rail.inclination",
    "back_to_back": "wheelset.back_to_back", "nominal_radius": "wheel.nominal_rolling_radius",
    "mass": "wheelset.mass", "inertia_roll": "wheelset.inertia.x",
    "inertia_spin": "wheelset.inertia.y", "inertia_yaw": "wheelset.inertia.z",
    "young": "material.youngs_modulus", "poisson": "material.poisson_ratio",
    "friction": "contact.friction_coefficient", "separation_min": "contact.multipoint.min_separation",
    "slope_difference_min": "contact.multipoint.min_slope_difference",
    "contact_damping": "contact.damping", "max_penetration": "contact.max_penetration",
    "lift_tolerance": "contact.lift_tolerance", "speed": "wheelset.speed",
    "internal_step": "solver.internal_step", "axle_box_semi_spacing": "wheelset.axle_box_semi_spacing",
    "suspended_mass": "suspension.suspended_mass", "initial_lateral": "wheelset.initial_lateral",
    "initial_yaw": "wheelset.initial_yaw",
}
STRING_PARAMETERS = {"wheel_profile": "wheel.profile", "rail_profile": "rail.profile",
                     "track": "track.scenario"}
BOOLEAN_PARAMETERS = {"bogie": "suspension.builtin"}
SCALAR_PARAMETERS = {**REAL_PARAMETERS, **STRING_PARAMETERS, **BOOLEAN_PARAMETERS}
ENUM_PARAMETERS = {"creep_model": ("contact.creep_model", ("kalker", "she", "polach", "fastsim")),
                   "contact_model": ("contact.model", ("single", "multipoint")),
                   "integrator": ("solver.integrator", ("rk4", "semi-implicit"))}
VECTOR_PARAMETERS = {"suspension_stiffness": tuple(f"suspension.stiffness.{a}" for a in "xyz"),
                     "suspension_damping": tuple(f"suspension.damping.{a}" for a in "xyz")}
