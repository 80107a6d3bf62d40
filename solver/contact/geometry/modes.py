"""The contact models and contact geometry modes by name (solver.registry).

CONTACT_MODELS: how many contact points a wheel has; the id is the model
vector's M_MULTIPOINT flag (0 the deepest point alone, 1 up to MAX_POINTS).
GEOMETRY_MODES: how the full contact search finds the points; "table" has a
builder, the shared contact table of a set-up (solver.contact.geometry.table).
Both modes give the same points (the table to rounding).
"""
from __future__ import annotations

from ...errors import WheelsetError
from ...registry import Entry, Registry
from .table import shared_contact_table

CONTACT_MODELS = Registry("contact model", error=WheelsetError)
SINGLE_POINT = CONTACT_MODELS.register(Entry(
    "single", "one contact point per wheel, the deepest, carrying the wheel's whole normal load",
    fmi_name="SinglePoint"))
MULTIPOINT = CONTACT_MODELS.register(Entry(
    "multipoint", "up to three contact points per wheel (trace-line extremum detection, Ren & "
    "Jin 2010), each carrying its share of the load (solver.contact.normal.load_sharing)",
    fmi_name="Multipoint",
    source="Ren & Jin (2010), Vehicle System Dynamics 48(suppl.), 173-189: trace line and the "
           "multipoint criteria e_d, e_k"))

GEOMETRY_MODES = Registry("contact geometry mode", error=WheelsetError)
ONLINE = GEOMETRY_MODES.register(Entry(
    "online", "the profiles scanned (between scans the minima of the last scan re-located: "
    "the same points)", fmi_name="Online"))
TABLE = GEOMETRY_MODES.register(Entry(
    "table", "contact point sets precomputed at initialisation (solver.contact.geometry.table), "
    "the same points", fmi_name="Table", builder=shared_contact_table))
