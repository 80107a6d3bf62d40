"""The lumped rail bodies under the wheels: the default track of the wheelset model.

Each rail, under its wheel, is a body with three degrees of freedom at the rail
head's reference point (the rail profile's origin: lateral and vertical
displacement, roll about +x), on the spring-damper supports that stand for the
rail's bending, the pads, the sleepers and the ballast (solver.dynamics.rhs
rail_body_accelerations): M q'' + C q' + K q = F. Their parameters are those
of the finite-element ballasted track of cosim/track (the data set of Zhai,
Wang & Cai 2009, "Fundamentals of vehicle-track coupled dynamics", Vehicle
System Dynamics 47(11) 1349-1376: CHN60 rails as Timoshenko beams on rail pads
of 78 MN/m and 50 kN s/m, half-sleepers of 125.5 kg on ballast of 180 MN/m and
58.8 kN s/m, 0.6 m apart), reduced to the point under the wheel: K the
static point stiffness (the mean of over a sleeper and mid-span), M and C
fitted to the point receptance through the first resonance of each direction
(tests/data/lumped_track/: how, and the fit's error; docs/flexible_track.md).

The rails may also be prescribed (TRACK_MODEL_NAMES "prescribed"): they then
move only as the rail inputs say, rigid while those are zero (the published
rigid-track comparisons), or as a host's own track model moves them (a track
finite-element code coupled through the FMU's rail inputs, cosim/track).
"""

from __future__ import annotations

from typing import NamedTuple

from ..errors import WheelsetError
from ..registry import Entry, Registry

# the track models, in the order of their ids (M_TRACK_MODEL)
TRACK_MODELS = Registry("track model", error=WheelsetError)
PRESCRIBED = TRACK_MODELS.register(Entry(
    "prescribed", "the rails move only as the rail inputs say: rigid while they are zero (the "
    "published rigid-track comparisons), or as a host's track model moves them (a track "
    "finite-element code coupled through the rail inputs)", fmi_name="Prescribed"))
LUMPED = TRACK_MODELS.register(Entry(
    "lumped", "a rail body under each wheel (lateral, vertical, roll) on the spring-damper "
    "supports of the ballasted track (rail.lumped.*), the rail inputs moving its base",
    fmi_name="Lumped",
    source="the finite-element ballasted track of cosim/track with the data of Zhai, Wang & Cai "
           "(2009), Vehicle System Dynamics 47(11), 1349-1376, reduced to the point under the "
           "wheel (tests/data/lumped_track)"))
TRACK_MODEL_NAMES = TRACK_MODELS.names()


class LumpedRails(NamedTuple):
    """One rail body's parameters (both rails alike), SI units, track frame, at
    the rail head's reference point; each matrix as (lateral, vertical, roll,
    lateral-roll)."""

    mass: tuple          # kg, kg, kg m^2, kg m
    stiffness: tuple     # N/m, N/m, N m/rad, N/rad
    damping: tuple       # N s/m, N s/m, N m s/rad, N s/rad
    source: str


# tests/data/lumped_track/lumped_track.json, configuration "CHN60/timoshenko"
# (made by make_lumped_track.py from cosim/track's FE model at commit 6ec911d;
# tests/test_lumped_track.py holds these numbers equal to the file): the stiffness
# the bay average of the FE's static point flexibility at the crown (the mean a
# rolling wheel sees over a sleeper bay: within 0.2 % vertical, 0.5 % lateral,
# 1.3 % roll of the FE's moving-load deflection), the mass and damping the one-
# body fit of the mean point receptance over 0-300 Hz (its error there: |H| up to
# -40 % vertical at 148 Hz, -33 % lateral at 77 Hz, -28 % roll at 134 Hz, where
# the FE's sleepers move against the rail; a moving 20 kN vertical load at 50 Hz
# and 100 km/h deflects it 3 % less than the FE track, at 100 Hz 19 % less).
# The rail rolls about its axis, 95 mm below the crown: hence the couplings.
ZHAI_2009 = LumpedRails(
    mass=(35.2634279809584, 66.84877634599215, 0.46142543157949917, 3.3500256581910475),
    stiffness=(37058954.2632651, 124192306.20865887, 782129.3319316283, 3520600.655010184),
    damping=(82260.88420403711, 109008.09457819263, 1089.6712656122866, 7814.783999383524),
    source="cosim/track's finite-element ballasted track (Zhai, Wang & Cai 2009 data, CHN60 "
           "Timoshenko rails) at the rail crown: stiffness the bay-average point stiffness, mass "
           "and damping the one-body fit of its point receptance over 0-300 Hz "
           "(tests/data/lumped_track)")
