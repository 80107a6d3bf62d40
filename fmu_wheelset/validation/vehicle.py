"""The Manchester benchmark vehicle 1 over four wheelset FMUs (cosim/vehicle/master.py):
static wheel loads, stability below and above the critical speed, steady
curving balance (R = 1200 m and 600 m with cant, two cant deficiencies each);
and the stability tool (cosim/vehicle/stability.py): the linear critical speed of a
two-axle bogie against an independent linear model written here, the linear
and nonlinear (through the FMU) critical speeds of the whole vehicle.

The vehicle runs always go through the FMU (the vehicle host couples FMU
instances; there is no core backend for it). S1002/UIC60 1:40, Polach, 1 ms
communication steps.

The independent bogie model (`reference_bogie_eigenvalues`): the two-axle
bogie of Wickens (1965; A. H. Wickens, "The dynamic stability of railway
vehicle wheelsets and bogies having profiled wheels", Int. J. Solids Struct.
1, 319-341; the form of Iwnicki (ed.), Handbook of Railway Vehicle Dynamics,
2006, ch. 8): wheelsets in lateral displacement and yaw, the frame in lateral
displacement and yaw, linear creep (f11, f22 per wheel, no spin), primary
lateral and yaw stiffness and damping, the secondary to a fixed carbody. Two
refinements the tool's 3-D wheelset has and the plain textbook model leaves
out are derived here from the contact geometry (contact angle delta0, its
change with y, the wheelset's roll per lateral displacement sigma, from
solver.contact.geometry.points.static_contact): the lateral creepage is taken in the
inclined contact plane (the lateral velocity projected, cos delta0; the
contact point's velocity from the roll rate sigma y' (r0 cos delta0 + l0 sin
delta0); the trace-line slip of a yawed cone, -psi / cos delta0), and the roll
moment of the lateral creep forces, which act at the rails, shifts load
between the wheels whose inclined normals then add to the lateral force:
factor cos delta0 + sin delta0 (r0 cos delta0 + l0 sin delta0) / (l0 cos
delta0 - r0 sin delta0). The gravitational stiffness is (W/2) d(tan delta_L -
tan delta_R)/dy. Without the two refinements the model gives a critical speed
19 % lower (the row says so)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from fmu_wheelset.validation.common import CaseResult, Row, figure, fmu_path, save, write_csv

# the bogie of the stability check: cone 0.15 on UIC60 1:40, Kalker with given
# coefficients (no spin), no gyroscopic moments; the frame's centre of mass and
# the secondary springs at axle height, so that the frame's roll and the lateral
# motion do not couple (the textbook model has no roll)
BOGIE_F11, BOGIE_F22 = 8.0e6, 7.0e6


def bogie_check_parameters():
    from cosim.vehicle.parameters import VehicleParameters
    from solver.model.parameters import WheelsetParameters
    vehicle = VehicleParameters(bogie_height=0.46, secondary_height=0.46)
    wheelset = WheelsetParameters(wheel_profile="cone:0.15", creep_model="kalker",
                                  creep_coefficients=(BOGIE_F11, BOGIE_F22, 1e-9, 1e-9), gyroscopic=False,
                                  track_model="prescribed", hunt_crossley=0.0)
    return vehicle, wheelset


def bogie_geometry(vehicle, wheelset, dy=1e-5):
    """`contact_geometry_terms` of the vehicle's wheelsets under their static load."""
    from cosim.vehicle.parameters import GRAVITY
    from cosim.vehicle.stability import wheelset_parameters
    load = (vehicle.carbody_mass / 4 + vehicle.bogie_mass / 2 + vehicle.wheelset_mass) * GRAVITY
    return contact_geometry_terms(wheelset_parameters(vehicle, wheelset), load, dy)


def contact_geometry_terms(p, load, dy=1e-5):
    """The contact-geometry quantities of the reference models (rigid static
    contact of WheelsetParameters `p`): conicity lambda, rolling radius r0, half
    distance of the contact points l0, contact angle delta0 at y = 0, roll per
    lateral displacement sigma, and the gravitational stiffness kg (N/m) under
    the wheelset's normal load `load` (N)."""
    from solver.contact.geometry.setup import ContactSetup
    from solver.contact.geometry.points import static_contact
    setup = ContactSetup.from_names(p.wheel_profile, p.rail_profile, inclination=p.rail_inclination,
                                    gauge=p.gauge, back_to_back=p.back_to_back, nominal_radius=p.nominal_radius)
    centre, plus, minus = (static_contact(setup, y, epsilon=0.0) for y in (0.0, dy, -dy))
    pts = centre.points

    def tan_difference(sc):
        return math.tan(sc.points.contact_angle[0, 0]) - math.tan(sc.points.contact_angle[1, 0])
    return {
        "conicity": (plus.rolling_radius_difference - minus.rolling_radius_difference) / (4 * dy),
        "r0": float(pts.rolling_radius[0, 0]),
        "l0": float(pts.position[0, 0, 1] - pts.position[1, 0, 1]) / 2,
        "delta0": float(abs(pts.contact_angle[0, 0])),
        "sigma": (plus.roll - minus.roll) / (2 * dy),
        "kg": load / 2 * (tan_difference(plus) - tan_difference(minus)) / (2 * dy),
    }


def lateral_creep_terms(f22, g, refined=True):
    """(lateral creep damping times V, lateral creep force per yaw angle) of a
    wheelset, N: the plain textbook 2 f22 for both, or with the two refinements
    of the module docstring."""
    if not refined:
        return 2 * f22, 2 * f22
    lam, r0, l0, d0, sigma = (g[k] for k in ("conicity", "r0", "l0", "delta0", "sigma"))
    cd, sd = math.cos(d0), math.sin(d0)
    transfer = cd + sd * (r0 * cd + l0 * sd) / (l0 * cd - r0 * sd)
    return transfer * 2 * f22 * (cd + sigma * (r0 * cd + l0 * sd)), transfer * 2 * f22 / cd


def reference_wheelset_eigenvalues(params, f11, f22, g, speed, refined=True):
    """Eigenvalues of Wickens' single suspended wheelset (the same equations
    with the frame on the track centreline): states y, psi and their rates;
    the built-in suspension of WheelsetParameters `params` (kx, ky, cx, cy per
    box at +-axle_box_semi_spacing)."""
    m, jz, b = params.mass, params.inertia_yaw, params.axle_box_semi_spacing
    kx, ky = params.suspension_stiffness[:2]
    cx, cy = params.suspension_damping[:2]
    lam, r0, l0, kg = (g[k] for k in ("conicity", "r0", "l0", "kg"))
    lateral_damping, lateral_yaw = lateral_creep_terms(f22, g, refined)
    mass = np.diag([m, jz])
    k = np.array([[2 * ky + kg, -lateral_yaw], [2 * f11 * l0 * lam / r0, 2 * kx * b * b]])
    c = np.diag([2 * cy + lateral_damping / speed, 2 * cx * b * b + 2 * f11 * l0 * l0 / speed])
    a_mat = np.block([[np.zeros((2, 2)), np.eye(2)],
                      [-np.linalg.solve(mass, k), -np.linalg.solve(mass, c)]])
    return np.linalg.eigvals(a_mat)


def reference_bogie_eigenvalues(vehicle, f11, f22, g, speed, refined=True):
    """Eigenvalues of the two-axle bogie on a fixed carbody (module docstring);
    states y1, psi1, y2, psi2, y_frame, psi_frame and their rates."""
    m, jz = vehicle.wheelset_mass, vehicle.wheelset_inertia[2]
    mb, jbz = vehicle.bogie_mass, vehicle.bogie_inertia[2]
    a, b, ds = vehicle.semi_wheelbase, vehicle.primary_semi_spacing, vehicle.secondary_semi_spacing
    kx, ky = vehicle.primary_stiffness[:2]
    cx, cy = vehicle.primary_damping[:2]
    ksx, ksy = vehicle.secondary_stiffness[:2]
    csx, csy = vehicle.secondary_damping[:2]
    lam, r0, l0, kg = (g[k] for k in ("conicity", "r0", "l0", "kg"))
    lateral_damping, lateral_yaw = lateral_creep_terms(f22, g, refined)
    mass = np.diag([m, jz, m, jz, mb, jbz])
    k = np.zeros((6, 6))
    c = np.zeros((6, 6))
    for i, ai in enumerate((a, -a)):
        iy, ip = 2 * i, 2 * i + 1
        c[iy, iy] += lateral_damping / speed
        k[iy, ip] -= lateral_yaw
        k[iy, iy] += kg
        c[ip, ip] += 2 * f11 * l0 * l0 / speed
        k[ip, iy] += 2 * f11 * l0 * lam / r0
        d = np.zeros(6)
        d[iy], d[4], d[5] = 1.0, -1.0, -ai            # primary lateral: y_i - (y_frame + a_i psi_frame)
        k += 2 * ky * np.outer(d, d)
        c += 2 * cy * np.outer(d, d)
        d = np.zeros(6)
        d[ip], d[5] = 1.0, -1.0                       # primary yaw: psi_i - psi_frame, arm b
        k += 2 * kx * b * b * np.outer(d, d)
        c += 2 * cx * b * b * np.outer(d, d)
    k[4, 4] += 2 * ksy
    c[4, 4] += 2 * csy
    k[5, 5] += 2 * ksx * ds * ds
    c[5, 5] += 2 * csx * ds * ds
    a_mat = np.block([[np.zeros((6, 6)), np.eye(6)],
                      [-np.linalg.solve(mass, k), -np.linalg.solve(mass, c)]])
    return np.linalg.eigvals(a_mat)


def reference_critical_speed(vehicle, f11, f22, g, refined=True, v_lo=10.0, v_hi=300.0):
    """(speed m/s, frequency Hz) where the reference bogie's least stable
    eigenvalue crosses zero (bisection to 1e-4 m/s)."""
    return critical_speed_of(lambda v: reference_bogie_eigenvalues(vehicle, f11, f22, g, v, refined),
                             v_lo, v_hi)


def critical_speed_of(eigenvalues_at, v_lo=10.0, v_hi=300.0):
    """(speed m/s, frequency Hz) where the least stable of `eigenvalues_at(v)`
    crosses zero (bisection to 1e-4 m/s)."""
    def unstable(v):
        return max(eigenvalues_at(v).real) > 0
    lo, hi = v_lo, v_hi
    if unstable(lo) or not unstable(hi):
        raise ValueError(f"the reference model's critical speed is not in [{v_lo:g}, {v_hi:g}] m/s")
    while hi - lo > 1e-4:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if unstable(mid) else (mid, hi)
    w = eigenvalues_at(hi)
    return 0.5 * (lo + hi), float(abs(w[np.argmax(w.real)].imag)) / (2 * math.pi)


CURVES = ((1200.0, 0.10, 0.05), (1200.0, 0.10, 0.10), (600.0, 0.15, 0.05), (600.0, 0.15, 0.10))
CURVE_DURATION, CURVE_AVERAGE_FROM = 12.0, 8.0


def case_vehicle(out, backend="fmu") -> CaseResult:
    from cosim.vehicle.curve_layout import CurveLayout
    from cosim.vehicle.master import VehicleCosim
    from cosim.vehicle.parameters import GRAVITY, RAIL_DISTANCE
    out = Path(out)
    fmu = str(fmu_path(out))
    name = "9 vehicle (4 FMUs)"
    rows = []
    notes = ["always the FMU: the vehicle host couples four FMU instances"
             + ("" if backend == "fmu" else f" (backend {backend!r} asked)")]
    with VehicleCosim(fmu, speed=30.0, record_every=5) as vc:
        straight = vc.run(1.0)
        share = vc.p.static_wheel_load()
    dev = float(np.abs(straight.wheel_load / share - 1.0).max())
    rows.append(Row(name, "straight track: largest |Q / static share - 1| (8 wheels, 1 s)",
                    "0 (static equilibrium, no load step)", dev * 100, "%", 0.0, 0.5, "fmu"))
    push = (0, 30e3, 0.05)
    histories = {}
    for speed, hunts in ((30.0, False), (70.0, True)):
        with VehicleCosim(fmu, speed=speed, perturbation=push, record_every=5) as vc:
            r = vc.run(2.5)
        y = r.lateral[:, 0]
        first, last = np.abs(y[r.time <= 0.5]).max(), np.abs(y[r.time >= r.time[-1] - 0.5]).max()
        ratio = float(last / first)
        histories[speed] = r
        rows.append(Row(name, f"30 kN push at {speed:g} m/s: last/first lateral amplitude of "
                              f"wheelset 1", "hunts (> 0.3)" if hunts else "decays (< 0.02)",
                        ratio, "1", float("nan"), float("nan"), "fmu",
                        passed=(ratio > 0.3) if hunts else (ratio < 0.02)))
    curve_rows = []
    for radius, cant, deficiency in CURVES:
        speed = math.sqrt((deficiency + cant) * GRAVITY * radius / RAIL_DISTANCE)
        layout = CurveLayout(radius=radius, cant=cant, straight=5.0, transition=40.0)
        with VehicleCosim(fmu, speed=speed, layout=layout, record_every=20) as vc:
            r = vc.run(CURVE_DURATION, average_from=CURVE_AVERAGE_FROM)
            p = vc.p
            couple = vc.secondary_yaw_couple(r)
        mass = p.carbody_mass / 2 + p.bogie_mass + 2 * p.wheelset_mass
        c = layout.full_cant_angle
        required = mass * (speed ** 2 / radius * math.cos(c) + GRAVITY * math.sin(c))
        textbook = mass * (speed ** 2 / radius - GRAVITY * cant / RAIL_DISTANCE)
        sampled = r.mean_bogie_lateral_force()
        momentum = r.mean_bogie_lateral_force(from_momentum=True)
        label = f"R {radius:g} m, h {cant * 1e3:g} mm, D {deficiency * 1e3:g} mm ({speed * 3.6:.0f} km/h)"
        for b in range(2):
            rows.append(Row(name, f"{label}: bogie {b + 1} sum of lateral rail forces / "
                                  f"m(V^2/R cos c - g sin c) (mean {CURVE_AVERAGE_FROM:g}-"
                                  f"{CURVE_DURATION:g} s)", f"1 (textbook m(V^2/R - g h/s) = "
                                  f"{textbook / required:.4f})", float(sampled[b] / required), "1",
                            1.0, 0.01, "fmu",
                            note=f"from the wheelsets' momentum: {momentum[b] / required:.4f}; "
                                 f"of it the carbody's secondary yaw couple {couple[b]:+.0f} N "
                                 f"({100 * couple[b] / required:+.2f} %)"))
            rows.append(Row(name, f"{label}: bogie {b + 1}, the same with the carbody's secondary "
                                  "yaw couple taken out (cosim.vehicle.master.VehicleCosim.secondary_yaw_couple)", "1",
                            float((sampled[b] - couple[b]) / required), "1", 1.0, 0.01, "fmu",
                            note="like with like: the textbook per-bogie balance has no carbody "
                                 "yaw couple; the couple comes from the bogie frames' yaw "
                                 "relative to the carbody on the secondary longitudinal springs"))
        rows.append(Row(name, f"{label}: whole vehicle, sum of lateral rail forces / "
                              "M(V^2/R cos c - g sin c)", "1", float(sampled.sum() / (2 * required)),
                        "1", 1.0, 0.01, "fmu",
                        note="per bogie the secondary yaw stiffness moves load between the "
                             "bogies: the bogie frames' yaw moments on the carbody are balanced by "
                             "a lateral force couple (+ leading, - trailing), which the sum over "
                             "the vehicle does not see"))
        m = r.mean
        lead_ok = all(m["lateral"][j] < 0 and m["yaw"][j] < 0 for j in (0, 2))
        rows.append(Row(name, f"{label}: leading wheelsets towards the outer rail, yawed "
                              "outwards (y < 0, yaw < 0 in a left curve)",
                        "y < 0, positive angle of attack",
                        float(m["yaw"][0] * 1e3), "mrad (yaw 1)", float("nan"), float("nan"),
                        "fmu", passed=lead_ok,
                        note=f"y = {m['lateral'][0] * 1e3:.2f} / {m['lateral'][2] * 1e3:.2f} mm"))
        curve_rows.append([radius, cant, deficiency, speed]
                          + list(m["lateral"]) + list(m["yaw"])
                          + list(m["derailment_quotient"].ravel()) + list(m["wear_number"].ravel())
                          + list(sampled / required) + list(momentum / required))
    names = (["radius_m", "cant_m", "deficiency_m", "speed_m_s"]
             + [f"y{j + 1}_m" for j in range(4)] + [f"yaw{j + 1}_rad" for j in range(4)]
             + [f"YQ{j + 1}_{s}" for j in range(4) for s in ("left", "right")]
             + [f"wear{j + 1}_{s}_N" for j in range(4) for s in ("left", "right")]
             + ["bogie1_balance", "bogie2_balance", "bogie1_balance_momentum",
                "bogie2_balance_momentum"])
    table = np.array(curve_rows)
    csv = write_csv({n: table[:, k] for k, n in enumerate(names)}, out / "vehicle_curves.csv")
    fig, ax = figure(2, 1, size=(7.5, 5.5))
    for speed, r in histories.items():
        ax[0, 0].plot(r.time, r.lateral[:, 0] * 1e3, label=f"{speed:g} m/s")
    ax[0, 0].set_ylabel("wheelset 1 y (mm)")
    ax[0, 0].set_xlabel("time (s)")
    ax[0, 0].legend(fontsize=7)
    ax[0, 0].set_title("30 kN lateral push for 50 ms on the leading wheelset", fontsize=9)
    x = np.arange(len(CURVES))
    ax[1, 0].bar(x - 0.2, table[:, -4], 0.4, label="bogie 1")
    ax[1, 0].bar(x + 0.2, table[:, -3], 0.4, label="bogie 2")
    ax[1, 0].axhline(1.0, color="k", lw=0.8)
    ax[1, 0].axhspan(0.99, 1.01, color="C2", alpha=0.15, label="tolerance +-1 %")
    ax[1, 0].set_ylim(0.95, 1.05)
    ax[1, 0].set_xticks(x, [f"R{r:g} D{d * 1e3:g}" for r, _, d in CURVES], fontsize=7)
    ax[1, 0].set_ylabel("rail forces / m a_nc")
    ax[1, 0].set_title("curving balance per bogie in left curves (outer rail: the right one): "
                       "sum of lateral rail forces / m a_nc", fontsize=9)
    ax[1, 0].legend(fontsize=7)
    fig.suptitle("Manchester benchmark vehicle 1 over four wheelset FMUs (backend: FMU (FMPy))",
                 fontsize=8)
    figs = [("Vehicle over four FMUs: stability and the curving balance per bogie [FMU (FMPy)]",
             save(fig, out / "vehicle.png"))]
    stability_rows, stability_notes = _stability_rows(name, fmu)
    rows += stability_rows
    notes += stability_notes
    return CaseResult("vehicle", "Manchester benchmark vehicle 1 over four wheelset FMUs; stability tool",
                      rows, figs, [csv], "fmu", notes)


WHY_BOGIE = ("1 %: the figure asked of an independent model under identical assumptions (the "
             "tool's extra terms off: no gyroscopic moments, the rigid track, no contact damping); "
             "the reference leaves out the wheelsets' vertical and roll dynamics (roll taken "
             "quasi-static), the primary vertical springs' share of the load transfer and the "
             "rolling radius change of the roll")


def _stability_rows(name, fmu):
    from cosim.vehicle import stability as vstab
    from cosim.vehicle.parameters import VehicleParameters
    from solver.model.parameters import WheelsetParameters
    rows = []
    vehicle, wheelset = bogie_check_parameters()
    g = bogie_geometry(vehicle, wheelset)
    ref, ref_f = reference_critical_speed(vehicle, BOGIE_F11, BOGIE_F22, g)
    plain, _ = reference_critical_speed(vehicle, BOGIE_F11, BOGIE_F22, g, refined=False)
    tool = vstab.linear_critical_speed(vehicle, wheelset, 40.0, 140.0, scan=6, tolerance=0.02,
                                       fixed_carbody=True)
    rows.append(Row(name, "bogie (carbody fixed) linear critical speed, cone 0.15 / UIC60 1:40, Kalker "
                          "f11 8 MN, f22 7 MN, no spin, no gyroscopic terms, rigid track, no contact "
                          "damping",
                    f"independent linear model: {ref:.2f} m/s", tool.speed, "m/s", ref, 0.01 * ref,
                    "core", why=WHY_BOGIE,
                    note=f"hunting {tool.frequency:.3f} Hz (reference {ref_f:.3f} Hz); the plain textbook "
                         f"model (no contact-plane creepage, no load transfer): {plain:.2f} m/s; "
                         f"conicity {g['conicity']:.4f}, delta0 {math.degrees(g['delta0']):.2f} deg"))
    gyro = vstab.linear_critical_speed(vehicle, dataclasses_replace(wheelset, gyroscopic=True), 40.0,
                                       140.0, scan=6, tolerance=0.05, fixed_carbody=True)
    rows.append(Row(name, "the same bogie with the gyroscopic moments", "(no reference)", gyro.speed, "m/s",
                    float("nan"), float("nan"), "core", compared=False,
                    why="not compared: the reference has no gyroscopic terms; shows their effect",
                    note=f"{(gyro.speed / tool.speed - 1) * 100:+.1f} % from without"))
    for label, changes in (("the lumped rail bodies", dict(track_model="lumped")),
                           ("Hunt & Crossley's contact damping", dict(hunt_crossley=0.2)),
                           ("the default interface (all three terms)",
                            dict(gyroscopic=True, track_model="lumped", hunt_crossley=0.2))):
        term = vstab.linear_critical_speed(vehicle, dataclasses_replace(wheelset, **changes), 5.0,
                                           140.0, scan=8, tolerance=0.05, fixed_carbody=True)
        rows.append(Row(name, f"the same bogie with {label}", "(no reference)", term.speed, "m/s",
                        float("nan"), float("nan"), "core", compared=False,
                        why="not compared: shows the term's effect (no damping added by hand; "
                            "the scan starts at 5 m/s)",
                        note=f"{(term.speed / tool.speed - 1) * 100:+.1f} % from without, "
                             f"hunting {term.frequency:.2f} Hz"))
    manchester = VehicleParameters()
    s1002 = WheelsetParameters()
    conicity = vstab.profile_pair_conicity(vstab.wheelset_parameters(manchester, s1002))
    linear = vstab.linear_critical_speed(manchester, s1002, 40.0, 140.0, scan=6, tolerance=0.1)
    rows.append(Row(name, "Manchester vehicle, S1002 / UIC60 1:40, Polach: linear critical speed",
                    "(no published value)", linear.speed, "m/s", float("nan"), float("nan"), "core",
                    compared=False, why="not compared: no published figure for this model",
                    note=f"{linear.frequency:.2f} Hz; equivalent conicity {conicity['linear']:.4f} linear, "
                         f"{conicity['en15302']:.4f} at 3 mm (EN 15302)"))
    crit, runs = vstab.nonlinear_critical_speed(fmu, manchester, s1002, 40.0, 100.0, tolerance=2.0)
    rows.append(Row(name, "Manchester vehicle: nonlinear critical speed (30 kN push, bisection on "
                          "runs over four FMUs)", f"below the linear {linear.speed:.1f} m/s",
                    crit.speed, "m/s", float("nan"), float("nan"), "fmu",
                    passed=bool(crit.speed < linear.speed),
                    why="criterion: the conicity of S1002/UIC60 grows with the amplitude (EN 15302: "
                        f"{conicity['linear']:.3f} linear, {conicity['en15302']:.3f} at 3 mm), so a large "
                        "push hunts below the linear critical speed",
                    note=f"bracket {crit.bracket[0]:.1f}-{crit.bracket[1]:.1f} m/s, {len(runs)} runs, "
                         f"limit cycle {crit.frequency:.2f} Hz"))
    return rows, ["stability: cosim/vehicle/stability.py (linear: the wheelset core linearised, VehicleModel's "
                  "matrices; nonlinear: VehicleCosim runs through the FMU)"]


def dataclasses_replace(obj, **changes):
    import dataclasses
    return dataclasses.replace(obj, **changes)
