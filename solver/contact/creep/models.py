"""The creep models by name: one registry entry each (solver.registry).

Every model's kernel takes (patch, options) and returns (Fx, Fy, Mz) of the
rail on the wheel in the contact frame: patch a CreepPatch (solver.contact.
creep.inputs), options the float64 vector of its options in their order
(solver.layout N_CREEP_OPTIONS entries, the model's M_CREEP_OPTIONS block of
the parameter vector; unused ones 0). The kernel may assume normal_force,
friction, a and b > 0 and finite input (solver.contact.creep.forces checks).
The entry's options are the FMU's parameters contact.creep.<model>.<option>
(fmu_wheelset/fmu/variables.py) and the keys of WheelsetParameters.creep_options.

A new model: a kernel and its plain-Python reference of that signature, one
CREEP_MODELS.register(...) below (or in the user's code, before
solver.contact.creep.forces is first imported), one test against a published
or independent result (docs/ARCHITECTURE.md, "Adding a model").
"""
from __future__ import annotations

from ...errors import CreepError
from ...layout import N_CREEP_OPTIONS
from ...registry import Entry, Option, Registry
from .fastrip import FASTRIP_DEFAULT_N, fastrip_creep, fastrip_creep_reference
from .fastsim import FASTSIM_DEFAULT_N, fastsim_creep, fastsim_creep_reference
from .kalker import kalker_creep, kalker_creep_reference
from .saturated import POLACH_1999, polach_creep, polach_creep_reference, she_creep, she_creep_reference

CREEP_MODELS = Registry("creep model", max_options=N_CREEP_OPTIONS, error=CreepError)

# grid sizes of the discretised models: 20 x 20 is CONTACT's default for FASTSIM
# and what the validation used; 400 bounds one point's work (400^2 cells)
_CELLS = dict(unit="1", low=1.0, high=400.0, integer=True,
              source="20: CONTACT's default grid (Vollebregt, CONTACT user guide); 400: a bound on the work")

KALKER = CREEP_MODELS.register(Entry(
    "kalker", "Kalker's linear theory", fmi_name="Kalker", kernel=kalker_creep, reference=kalker_creep_reference,
    source="Kalker (1967), On the rolling contact of two elastic bodies in the presence of dry "
           "friction, thesis, TH Delft; coefficients of Kalker (1990), Three-dimensional elastic "
           "bodies in rolling contact, Kluwer"))

SHE = CREEP_MODELS.register(Entry(
    "she", "Shen-Hedrick-Elkins saturation of Kalker's forces", fmi_name="SHE", kernel=she_creep, reference=she_creep_reference,
    source="Shen, Hedrick & Elkins (1983), A comparison of alternative creep force models for "
           "rail vehicle dynamic analysis, Vehicle System Dynamics 12 (suppl.) 79-83"))

POLACH = CREEP_MODELS.register(Entry(
    "polach", "Polach 1999/2005 method", fmi_name="Polach", kernel=polach_creep, reference=polach_creep_reference,
    options=(
        Option("kA", "1", POLACH_1999["kA"], 1e-3, 1.0,
               "reduction of Kalker's coefficient in the area of adhesion",
               source="Polach (2005), Creep forces in simulations of traction vehicles running on "
                      "adhesion limit, Wear 258, 992-1000 (0 < kS <= kA <= 1); 1: Polach (1999)"),
        Option("kS", "1", POLACH_1999["kS"], 1e-3, 1.0,
               "reduction of Kalker's coefficient in the area of slip",
               source="Polach (2005); 1: Polach (1999)"),
        Option("A", "1", POLACH_1999["A"], 0.0, 1.0,
               "ratio of the limit friction at infinite slip velocity to mu0",
               source="Polach (2005): mu = mu0 ((1 - A) exp(-B w) + A); 1: constant friction"),
        Option("B", "s/m", POLACH_1999["B"], 0.0, 100.0,
               "exponential decay of the friction with the slip velocity w",
               source="Polach (2005) (0.6 s/m dry, 0.2 s/m wet); 0: constant friction"),
    ),
    source="Polach (1999), A fast wheel-rail forces calculation computer code, Vehicle System "
           "Dynamics 33 (suppl.) 728-739; Polach (2005), Wear 258, 992-1000"))

FASTSIM = CREEP_MODELS.register(Entry(
    "fastsim", "Kalker's simplified theory, FASTSIM", fmi_name="FASTSIM", kernel=fastsim_creep, reference=fastsim_creep_reference,
    options=(
        Option("nx", default=float(FASTSIM_DEFAULT_N), description="cells along the rolling direction",
               **_CELLS),
        Option("ny", default=float(FASTSIM_DEFAULT_N), description="cells (strips) across", **_CELLS),
        Option("bound", "1", 0.0, 0.0, 1.0, "traction bound: mu times a parabolic (Kalker 1982) "
               "or an elliptic (Hertz) pressure", choices=("parabolic", "elliptic"),
               source="Kalker (1982), A fast algorithm for the simplified theory of rolling "
                      "contact, Vehicle System Dynamics 11, 1-13"),
        Option("grid", "1", 0.0, 0.0, 1.0, "cells: uniform over [-a, a] x [-b, b] (CONTACT's) "
               "or strips each cut into cells of its own length", choices=("uniform", "strips"),
               source="Vollebregt, CONTACT user guide (the uniform grid)"),
    ),
    source="Kalker (1982), Vehicle System Dynamics 11, 1-13"))

FASTRIP = CREEP_MODELS.register(Entry(
    "fastrip", "strip theory with FASTSIM slip direction (Sichani, Enblom & Berg 2016)",
    fmi_name="FaStrip", kernel=fastrip_creep, reference=fastrip_creep_reference,
    options=(
        Option("nx", default=float(FASTRIP_DEFAULT_N), description="cells along the rolling direction",
               **_CELLS),
        Option("ny", default=float(FASTRIP_DEFAULT_N), description="cells across", **_CELLS),
    ),
    source="Sichani, Enblom & Berg (2016), An alternative to FASTSIM for tangential solution of "
           "the wheel-rail contact, Vehicle System Dynamics 54(6), 748-764"))
