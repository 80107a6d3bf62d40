"""Compute the CONTACT reference numbers stored beside this script (run by hand).

    .venv/bin/python tests/data/contact_reference/make_contact_reference.py \
        --contact /work/ext/CONTACT/bin/contact_linux64 --examples /work/ext/CONTACT/examples \
        --workdir /tmp/contact_reference

CONTACT (E.A.H. Vollebregt and J.J. Kalker; Apache-2.0, github.com/eve70a/CONTACT)
is built outside this repository (README.md here says how); none of its code
is in the project. This script writes CONTACT input files of its own (and the
project's S1002 and UIC60 profiles as two-column files), runs CONTACT on them
and on CONTACT's own `fastsim` example, reads the printed results and writes

- normal_s1002_uic60.json: non-Hertzian normal contact, S1002 on UIC60 1:40,
  left wheel at y = 0, 3, 6 mm (tread, tread, flange root), 80 kN vertical;
- spin_moment.json: Kalker's full theory (CONTACT module 3, Hertzian
  ellipse) with spin, from the linear range to full sliding;
- fastrip.json: CONTACT's `fastsim` example: full theory, FASTSIM and
  CONTACT's FaStrip.

Units in the JSON: SI (m, N, Pa, N m, 1/m). Every case keeps the input text
CONTACT ran. Conventions checked here: CONTACT's creepages (CKSI, CETA, CPHI)
and forces (FX, FY, MZ) have the signs of solver.contact.creep (creepages of the wheel
relative to the rail, forces of the rail on the wheel), which its own
fastsim example shows (CETA < 0, CPHI > 0 -> FY < 0 as in
fmu_wheelset/validation/creep_models.py).
"""
from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))

CONTACT_COMMIT = "d431cdbd125084c79bd59df83b4ac4c63c570ac9"   # eve70a/CONTACT, 2025-07-23
SHEAR_MODULUS = 82e9        # CONTACT's examples: G = 82000 N/mm^2, nu = 0.28 (E = 209.92 GPa)
POISSON = 0.28

# --------------------------------------------------------------------------
# S1002 / UIC60: the track of the project's `wheelset-fmu patch` defaults
# --------------------------------------------------------------------------
GAUGE = 1.435
BACK_TO_BACK = 1.360
RADIUS = 0.46
WHEEL_LOAD = 80e3
LATERAL = (0.0, 3e-3, 6e-3)
CELLS = (0.2e-3, 0.1e-3)

MODULE1 = """% {title}
  1 MODULE
 0200100    C-P-B-T-N-F-S   CONFIG, PVTIME, BOUND,  TANG,   NORM,   FORCE,  STRESS
 0022033    V-L-D-C-M-Z-E   VARFRC, FRCLAW, DISCNS, INFLCF, MATER,  ZTRACK, EWHEEL
 0001221    H-G-I-A-O-W-R     HEAT, GAUSEI, IESTIM, MATFIL, OUTPUT, FLOW,   RETURN
    999     100    30    1     1e-6  900000    MAXGS, MAXIN, MAXNR, MAXOUT, EPS, NPOT_MAX
  0.300   0.300                                 FSTAT, FKIN
  0.280   0.280   82000.  82000.                POISS 1,2,  GG 1,2
  {cell:.3f}   {cell:.3f}   1.000   90d   8.0   4.0       DX, DS, DQREL, A_SEP, D_SEP, D_COMB
   0.0   {rail_y:.7f}   0.0   {cant:.10f}      GAUGHT, RAILY0, RAILZ0, CANT
  'UIC60_project.rail'   0     1.0   0.0   -1  RFNAME, MIRRORY, SCALE, SMOOTH, MIRRORZ
     0.0    0.0   0.000   0.0   0.0   0.000     DY, DZ, ROLL, VY, VZ, VROLL
  {fbdist:.3f}  -70.0   {nomrad:.3f}                 FBDIST, FBPOS, NOMRAD
  'S1002_project.wheel'  0     1.0   0.0   -1  WFNAME, MIRRORY, SCALE, SMOOTH, MIRRORZ
  0.0  {y_ws:.4f}  {load:.1f}  {roll:.9e}  0.0  0.0      S, Y, FZ, ROLL, YAW, PITCH
 2000. 0.0    0.0   0.0        0.0  {vpitch:.8f} VS, VY, VZ, VROLL, VYAW, VPITCH

 0 MODULE
"""


def write_profiles(workdir: Path) -> None:
    """The project's S1002 and UIC60 (0.1 mm grid) in CONTACT's canonical form: lateral
    towards the field side, z downwards, mm (wheel z = radius increase F, rail z = -height)."""
    from solver.profiles.builtins import builtin_profile
    wheel = builtin_profile("S1002", step=1e-4)
    rail = builtin_profile("UIC60", step=1e-4)
    with open(workdir / "S1002_project.wheel", "w") as handle:
        for s, f in zip(wheel.lateral * 1e3, wheel.height * 1e3):
            handle.write(f"{s:.4f} {f:.7f}\n")
    with open(workdir / "UIC60_project.rail", "w") as handle:
        for u, z in zip(rail.lateral * 1e3, rail.height * 1e3):
            handle.write(f"{u:.4f} {-z:.7f}\n")


def run_contact(contact: Path, workdir: Path, name: str, text: str) -> str:
    (workdir / f"{name}.inp").write_text(text)
    out = workdir / f"{name}.out"
    if out.exists():
        out.unlink()
    subprocess.run([str(contact), "2", name], cwd=workdir, check=True, capture_output=True, timeout=3600)
    return out.read_text()


def _numbers(line: str):
    return [float(v) for v in line.split()]


def parse_module1(text: str) -> dict:
    """One contact patch of a module-1 case: normal force, approach, peak pressure, elements in
    contact, element sizes, contact reference angle and position (CONTACT's units: mm, N, MPa)."""
    lines = text.splitlines()

    def after(label, offset=1):
        k = next(i for i, line in enumerate(lines) if label in line)
        return lines[k + offset]

    fn, fx, fs, mn = _numbers(after("FN          FX"))[:4]
    _, _, _, approach, pmax = _numbers(after("FN/G      FX/FSTAT/FN"))[:5]
    npot, ncon = _numbers(after("NPOT   NCON"))[:2]
    dx, ds = _numbers(after("DX          DS"))[:2]
    ref = _numbers(after("XCP(TR)     YCP(TR)"))
    return dict(fn=fn, approach_mm=approach, pmax_mpa=pmax, elements=int(ncon), dx_mm=dx, ds_mm=ds,
                angle=ref[3], ycp_rail_mm=ref[4], zcp_rail_mm=ref[5])


def normal_cases(contact: Path, workdir: Path) -> dict:
    from solver.contact.geometry.setup import ContactSetup
    from solver.contact.geometry.points import static_contact
    setup = ContactSetup.from_names("S1002", "UIC60", step=1e-4, gauge=GAUGE, back_to_back=BACK_TO_BACK,
                                    nominal_radius=RADIUS)
    cases = []
    for y in LATERAL:
        sc = static_contact(setup, y)
        for cell in CELLS:
            # CONTACT's track frame: y to the right, z down; the project's left wheel with the
            # wheelset moved by +y to the left is CONTACT's left wheel at Y_WS = -y; a roll that
            # lifts the left wheel is positive in both frames (a rotation about the same x axis)
            text = MODULE1.format(
                title=f"S1002 on UIC60 1:40, left wheel, y = {y * 1e3:g} mm, {WHEEL_LOAD / 1e3:g} kN, "
                      "frictionless (written by make_contact_reference.py)",
                cell=cell * 1e3, rail_y=-setup.rail_centre_y * 1e3, cant=setup.inclination,
                fbdist=BACK_TO_BACK * 1e3, nomrad=RADIUS * 1e3, y_ws=-y * 1e3, load=WHEEL_LOAD,
                roll=sc.roll, vpitch=-2000.0 / (RADIUS * 1e3))
            name = f"normal_y{y * 1e3:g}_c{cell * 1e3:g}".replace(".", "p")
            res = parse_module1(run_contact(contact, workdir, name, text))
            cases.append(dict(
                y=y, cell=cell, roll=sc.roll, rigid_contact_angle=float(sc.points.contact_angle[0, 0]),
                rigid_rail_u=float(sc.points.y_rail[0, 0]),
                normal_force=res["fn"], area=res["elements"] * res["dx_mm"] * res["ds_mm"] * 1e-6,
                peak_pressure=res["pmax_mpa"] * 1e6, approach=res["approach_mm"] * 1e-3,
                elements=res["elements"], dx=res["dx_mm"] * 1e-3, ds=res["ds_mm"] * 1e-3,
                reference_angle=res["angle"], reference_rail_u=-res["ycp_rail_mm"] * 1e-3,
                input=text))
            print(f"normal y = {y * 1e3:g} mm, cell {cell * 1e3:g} mm: area {cases[-1]['area'] * 1e6:.2f} mm^2, "
                  f"p_max {res['pmax_mpa']:.0f} MPa, approach {res['approach_mm'] * 1e3:.2f} um", flush=True)
    return dict(
        description="Non-Hertzian normal contact, S1002 wheel on UIC60 rail 1:40 (the project's built-in "
                    "profiles written at 0.1 mm), gauge 1435 mm, back-to-back 1360 mm, r0 460 mm, left wheel, "
                    "wheelset at y to the left with the project's rigid static roll, 80 kN vertical wheel "
                    "load, frictionless. CONTACT module 1, planar contact (D = 2: the contact reference "
                    "plane at CONTACT's weighted contact angle), half-space influence coefficients (C = 2), "
                    "G = 82 GPa, nu = 0.28 for both bodies, the vertical force prescribed (N = 1).",
        units="SI: m, N, Pa, rad", setup=dict(wheel="S1002", rail="UIC60", gauge=GAUGE, inclination_ratio=40,
                                              back_to_back=BACK_TO_BACK, nominal_radius=RADIUS,
                                              wheel_load=WHEEL_LOAD, shear_modulus=SHEAR_MODULUS,
                                              poisson=POISSON),
        cases=cases)


# --------------------------------------------------------------------------
# LMA / CHN60: the patch across the tread's curvature junction and at the flange root
# --------------------------------------------------------------------------
LMA_BACK_TO_BACK = 1.353
LMA_RADIUS = 0.43
LMA_LOADS = (20e3, 40e3, 60e3, 80e3)
# (a) the rigid contact point runs over s = +10 ... 0 mm of the LMA tread (the 1:40 line, the
# junction with the R450 arc at s = +4.254 mm crossed at y = 2.5-2.75 mm), found with
# solver.contact.geometry.points.static_contact; (b) it runs from the R450 arc over the flange
# root onto the 70 deg flank (contact angle 9.8 deg at 8.5 mm, 26.6 at 9.0, 51 at 9.25,
# 70 at 9.5 mm)
LMA_JUNCTION_Y = (-2.5e-3, -1.0e-3, 0.5e-3, 1.5e-3, 2.25e-3, 2.75e-3, 3.25e-3, 4.0e-3)
LMA_FLANGE_Y = (8.5e-3, 8.75e-3, 9.0e-3, 9.2e-3, 9.4e-3, 9.6e-3)


def write_profile_files(workdir: Path, wheel_name: str, rail_name: str) -> tuple[str, str]:
    """A built-in wheel and rail (0.1 mm grid) in CONTACT's canonical form (as write_profiles)."""
    from solver.profiles.builtins import builtin_profile
    wheel = builtin_profile(wheel_name, step=1e-4)
    rail = builtin_profile(rail_name, step=1e-4)
    names = (f"{wheel_name}_project.wheel", f"{rail_name}_project.rail")
    with open(workdir / names[0], "w") as handle:
        for s, f in zip(wheel.lateral * 1e3, wheel.height * 1e3):
            handle.write(f"{s:.4f} {f:.7f}\n")
    with open(workdir / names[1], "w") as handle:
        for u, z in zip(rail.lateral * 1e3, rail.height * 1e3):
            handle.write(f"{u:.4f} {-z:.7f}\n")
    return names


def _fortran_numbers(line: str):
    """Numbers of a line written by Fortran, whose exponents past 99 lose their E
    (0.725723-310 = 0.725723E-310)."""
    return [float(re.sub(r"(?<=[0-9.])([+-][0-9]{3})$", r"E\1", v)) for v in line.split()]


def parse_patches(text: str, workdir: Path, name: str) -> dict:
    """Every contact patch of a module-1 case (CONTACT's units: mm, N, MPa, rad), its extents
    from the patch's .mat file (the elements with a positive pressure), and the total
    forces on the rail (track frame)."""
    lines = text.splitlines()
    k = next(i for i, line in enumerate(lines) if "TOTAL FORCES ON RAIL" in line)
    fx_tr, fy_tr, fz_tr = _numbers(lines[k + 2])[:3]
    starts = [i for i, line in enumerate(lines) if "DATA FOR CONTACT PATCH" in line]
    patches = []
    for n, start in enumerate(starts):
        block = lines[start:starts[n + 1] if n + 1 < len(starts) else len(lines)]

        def after(label, offset=1):
            j = next(i for i, line in enumerate(block) if label in line)
            return _numbers(block[j + offset])
        ref = after("XCP(TR)     YCP(TR)")
        ref_w = after("XCP(W)      YCP(W)")
        fn = after("FN          FX")[0]
        approach, pmax = after("FN/G      FX/FSTAT/FN")[3:5]
        ncon = int(after("NPOT   NCON")[1])
        mat = (workdir / f"{name}.0001{chr(ord('a') + n)}.mat").read_text().splitlines()
        j = next(i for i, line in enumerate(mat) if line.lstrip().startswith("%   MX"))
        mx, my, xl, yl, dx, dy = _numbers(mat[j + 1])[:6]
        j = next(i for i, line in enumerate(mat) if line.lstrip().startswith("%    I    IGS"))
        rows = np.array([_fortran_numbers(line) for line in mat[j + 1:] if line.strip()])
        inside = rows[:, 4] > 0.0                       # PN > 0 (MU in column 4: format >= 12.2)
        index = rows[inside, 0].astype(int) - 1
        ix, iy = index % int(mx), index // int(mx)
        patches.append(dict(
            normal_force=fn, approach=approach * 1e-3, peak_pressure=pmax * 1e6, elements=ncon,
            contact_angle=ref[3], centre_track_y=ref[1] * 1e-3, centre_track_z=ref[2] * 1e-3,
            centre_rail_u=-ref[4] * 1e-3, centre_wheel_s=-ref_w[1] * 1e-3,
            longitudinal_extent=float((ix.max() - ix.min() + 1) * dx * 1e-3),
            lateral_extent=float((iy.max() - iy.min() + 1) * dy * 1e-3),
            lateral_range=[float((yl + iy.min() * dy) * 1e-3), float((yl + (iy.max() + 1) * dy) * 1e-3)],
            area=float(inside.sum() * dx * dy * 1e-6)))
    return dict(total_lateral_force_on_rail=fy_tr, total_vertical_force_on_rail=fz_tr, patches=patches)


def lma_cases(contact: Path, workdir: Path, fine_loads, progress=None) -> dict:
    from solver.contact.geometry.setup import ContactSetup
    from solver.contact.geometry.points import static_contact
    wheel_file, rail_file = write_profile_files(workdir, "LMA", "CHN60")
    setup = ContactSetup.from_names("LMA", "CHN60", step=1e-4, gauge=GAUGE, back_to_back=LMA_BACK_TO_BACK,
                                    nominal_radius=LMA_RADIUS)
    template = MODULE1.replace("UIC60_project.rail", rail_file).replace("S1002_project.wheel", wheel_file)
    cases = []
    for group, ys in (("junction", LMA_JUNCTION_Y), ("flange_root", LMA_FLANGE_Y)):
        for y in ys:
            sc = static_contact(setup, y)
            pts = sc.points
            rigid = [dict(wheel_s=float(pts.y_wheel[0, k]), rail_u=float(pts.y_rail[0, k]),
                          contact_angle=float(pts.contact_angle[0, k])) for k in range(int(pts.count[0]))]
            for load in LMA_LOADS:
                for cell in CELLS:
                    if cell < 0.2e-3 and load not in fine_loads:
                        continue
                    text = template.format(
                        title=f"LMA on CHN60 1:40, left wheel, y = {y * 1e3:g} mm, {load / 1e3:g} kN, "
                              "frictionless (written by make_contact_reference.py)",
                        cell=cell * 1e3, rail_y=-setup.rail_centre_y * 1e3, cant=setup.inclination,
                        fbdist=LMA_BACK_TO_BACK * 1e3, nomrad=LMA_RADIUS * 1e3, y_ws=-y * 1e3, load=load,
                        roll=sc.roll, vpitch=-2000.0 / (LMA_RADIUS * 1e3))
                    name = f"lma_y{y * 1e3:g}_f{load / 1e3:g}_c{cell * 1e3:g}".replace(".", "p").replace("-", "m")
                    for old in workdir.glob(f"{name}.*.mat"):
                        old.unlink()
                    t0 = time.perf_counter()
                    res = parse_patches(run_contact(contact, workdir, name, text), workdir, name)
                    seconds = time.perf_counter() - t0
                    cases.append(dict(group=group, y=y, wheel_load=load, cell=cell, roll=sc.roll,
                                      rigid_points=rigid, seconds=seconds, **res, input=text))
                    print(f"LMA {group} y = {y * 1e3:g} mm, {load / 1e3:g} kN, cell {cell * 1e3:g} mm: "
                          f"{len(res['patches'])} patch(es) "
                          + "; ".join(f"Fn {p['normal_force'] / 1e3:.2f} kN approach {p['approach'] * 1e6:.2f} um "
                                      f"angle {math.degrees(p['contact_angle']):.2f} deg s {p['centre_wheel_s'] * 1e3:.2f} "
                                      f"mm {p['lateral_extent'] * 1e3:.1f} x {p['longitudinal_extent'] * 1e3:.1f} mm"
                                      for p in res["patches"]) + f" ({seconds:.0f} s)", flush=True)
            if progress is not None:          # the cases so far, should the run be stopped
                progress(cases)
    return lma_result(cases, fine_loads)


def lma_result(cases, fine_loads) -> dict:
    """normal_lma_chn60.json's content around its cases."""
    return dict(
        description="Non-Hertzian frictionless normal contact, the project's LMA wheel on its CHN60 rail 1:40 "
                    "(built-in profiles written at 0.1 mm), gauge 1435 mm, back-to-back 1353 mm, r0 430 mm, left "
                    "wheel, wheelset at y to the left with the project's rigid static roll; (a) 'junction': the "
                    "rigid contact point from s = +10 to 0 mm on the wheel, across the junction of the tread's "
                    "1:40 line and its R450 arc (s = +4.254 mm); (b) 'flange_root': onto the R14/R15 flange root "
                    "and the 70 deg flank; vertical wheel loads 20, 40, 60, 80 kN (the vertical force on the "
                    "rail prescribed). CONTACT module 1, planar contact (D = 2), half-space (C = 2), G = 82 GPa, "
                    "nu = 0.28; 0.2 mm elements everywhere, 0.1 mm at the loads in 'fine_loads'. Per patch: its "
                    "normal force (along the patch normal), approach, peak pressure, contact angle (CONTACT's "
                    "DELTCP, track frame), centre (CONTACT's contact reference point: track y, z; rail u = "
                    "-YCP(R); wheel s = -YCP(W), s from the taping line, + towards the field side as the "
                    "project's profiles), the lateral (along the curved patch) and longitudinal extent of the "
                    "elements with pressure, and its area; per case the total forces of the wheel on the rail "
                    "in the track frame (y to CONTACT's right = the project's -y for the left wheel, z down).",
        units="SI: m, N, Pa, rad, s",
        setup=dict(wheel="LMA", rail="CHN60", gauge=GAUGE, inclination_ratio=40, back_to_back=LMA_BACK_TO_BACK,
                   nominal_radius=LMA_RADIUS, wheel_loads=list(LMA_LOADS), shear_modulus=SHEAR_MODULUS,
                   poisson=POISSON, cells=list(CELLS), fine_loads=sorted(fine_loads),
                   junction_s=4.254e-3),
        cases=cases)


# --------------------------------------------------------------------------
# Module 3: full theory on a Hertzian ellipse with spin
# --------------------------------------------------------------------------
MODULE3 = """% {title}
 3 MODULE
  203100     P-B-T-N-F-S        PVTIME, BOUND , TANG  , NORM , FORCE, STRESS
  022020     L-D-C-M-Z-E        FRCLAW, DISCNS, INFLCF, MATER, RZNORM, EXRHS
 0001221   H-G-I-A-O-W-R  HEAT, GAUSEI, IESTIM, MATFIL, OUTPUT, FLOW, RETURN
   999   500    5    1      1e-7    MAXGS , MAXIN , MAXNR , MAXOUT, EPS
   {fn:.1f}   {xi:.6e}   {eta:.6e}   {phi:.6e}        FN, CKSI, CETA, CPHI
   {mu:.3f}      {mu:.3f}                                 FSTAT, FKIN
   0.000      {dq:.4f}      30000.                     CHI, DQ, VELOC
   0.280      0.280      82000.     82000.          POISS 1,2,  GG 1,2
   -3                                               IPOTCN
   {m}   {m}     {a:.4f}      {b:.4f}      1.100          MX, MY, AA, BB, SCALE

 0 MODULE
"""

# the ellipses of CONTACT's fastsim and tractcurv examples
ELLIPSES = {
    "a/b=2": dict(a=8e-3, b=4e-3, normal_force=82e3, friction=0.3),
    "a/b=0.5": dict(a=6.304e-3, b=12.61e-3, normal_force=106.7e3, friction=0.33),
}
# (label, xi, eta, phi [1/m], elements across the patch); the linear cases on 40, 80 and 160
# elements, extrapolated (Aitken) for the first-order error of the rolling difference
LINEAR_CELLS = (40, 80, 160)
SPIN_CASES = (
    ("linear xi", 1e-6, 0.0, 0.0, LINEAR_CELLS),
    ("linear eta", 0.0, 1e-6, 0.0, LINEAR_CELLS),
    ("linear phi", 0.0, 0.0, 1e-4, LINEAR_CELLS),
    ("full lateral sliding", 0.0, -0.02, 0.0, 40),
    ("full lateral sliding + spin", 0.0, -0.02, 0.625, 40),
    ("full lateral sliding + large spin", 0.0, -0.02, 2.5, 40),
    ("full lateral sliding, eta = -0.1, + spin", 0.0, -0.1, 2.5, 40),
    ("full longitudinal sliding + spin", 0.02, 0.0, 0.625, 40),
    ("partial slip eta + spin", 0.0, -6.25e-4, 0.625, 40),
    ("partial slip eta + spin x2", 0.0, -1.25e-3, 1.25, 40),
    ("pure spin 0.3", 0.0, 0.0, 0.3, 40),
    ("pure spin 1", 0.0, 0.0, 1.0, 40),
    ("pure spin 3", 0.0, 0.0, 3.0, 40),
    ("pure spin 10", 0.0, 0.0, 10.0, 40),
    ("pure spin 30", 0.0, 0.0, 30.0, 40),
    ("pure spin 100", 0.0, 0.0, 100.0, 40),
    ("eta + large spin", 0.0, -2e-3, 10.0, 40),
    ("eta + large spin 2", 0.0, -5e-3, 10.0, 40),
)


def parse_module3(text: str) -> dict:
    lines = text.splitlines()
    k = next(i for i, line in enumerate(lines) if "FN          FX          FY          MZ" in line)
    fn, fx, fy, mz = _numbers(lines[k + 1])[:4]
    k = next(i for i, line in enumerate(lines) if "NPOT   NCON" in line)
    npot, ncon, nadh, nslip = _numbers(lines[k + 1])[:4]
    return dict(fn=fn, fx=fx, fy=fy, mz_nmm=mz, elements=int(ncon), adhesion=int(nadh), slip=int(nslip))


def aitken(f1, f2, f3):
    """Aitken's extrapolation of a sequence on grids refined by 2."""
    d = (f3 - f2) - (f2 - f1)
    return f3 if d == 0.0 else f3 - (f3 - f2) ** 2 / d


def spin_cases(contact: Path, workdir: Path) -> dict:
    cases = []
    for ell_name, ell in ELLIPSES.items():
        for label, xi, eta, phi, cells in SPIN_CASES:
            grids = cells if isinstance(cells, tuple) else (cells,)
            runs = []
            for n in grids:
                m = int(round(n * 1.1))
                dq = 2.0 * ell["a"] * 1e3 * 1.1 / m
                text = MODULE3.format(title=f"{ell_name}: {label}, {n} elements (written by "
                                            "make_contact_reference.py)",
                                      fn=ell["normal_force"], xi=xi, eta=eta, phi=phi * 1e-3, mu=ell["friction"],
                                      dq=dq, m=m, a=ell["a"] * 1e3, b=ell["b"] * 1e3)
                name = re.sub(r"[^A-Za-z0-9]+", "_", f"spin_{ell_name}_{label}_{n}")
                runs.append((n, text, parse_module3(run_contact(contact, workdir, name, text))))
            n, text, res = runs[-1]
            case = dict(ellipse=ell_name, label=label, xi=xi, eta=eta, phi=phi, cells=n,
                        fx=res["fx"], fy=res["fy"], mz=res["mz_nmm"] * 1e-3,
                        adhesion_elements=res["adhesion"], slip_elements=res["slip"], input=text, **ell)
            if len(runs) == 3:
                case["grids"] = [dict(cells=k, fx=r["fx"], fy=r["fy"], mz=r["mz_nmm"] * 1e-3) for k, _, r in runs]
                case["extrapolated"] = {key: aitken(*(g[key] for g in case["grids"])) for key in ("fx", "fy", "mz")}
            cases.append(case)
            mu_n = ell["friction"] * ell["normal_force"]
            print(f"spin {ell_name} {label}: Fx/muN {res['fx'] / mu_n:+.4f} Fy/muN {res['fy'] / mu_n:+.4f} "
                  f"Mz/(muN sqrt(ab)) {res['mz_nmm'] * 1e-3 / (mu_n * math.sqrt(ell['a'] * ell['b'])):+.4f}",
                  flush=True)
    return dict(
        description="Kalker's exact theory of steady rolling (CONTACT module 3, M = 0, T = 3) on a Hertzian "
                    "ellipse with prescribed semi-axes (IPOTCN = -3), Coulomb friction, G = 82 GPa, "
                    "nu = 0.28; 'cells' elements across the ellipse in each direction (MX = MY = 1.1 cells). "
                    "The linear cases on 40, 80 and 160 elements ('grids') with Aitken's extrapolation "
                    "('extrapolated'). Forces of the rail on the wheel, solver.contact.creep's signs; phi in 1/m.",
        units="SI: m, N, N m, 1/m", cases=cases)


def fastrip_cases(contact: Path, workdir: Path, examples: Path) -> dict:
    """CONTACT's own example `fastsim` (its input file is CONTACT's, not copied here)."""
    shutil.copy(examples / "fastsim.inp", workdir / "fastsim.inp")
    subprocess.run([str(contact), "2", "fastsim"], cwd=workdir, check=True, capture_output=True,
                   timeout=3600)
    text = (workdir / "fastsim.out").read_text()
    lines = text.splitlines()
    rows = [i for i, line in enumerate(lines) if "FN          FX          FY          MZ" in line]
    labels = ("full theory, 40 x 40", "FASTSIM parabolic bound, 40 x 40", "FASTSIM elliptic bound, 40 x 40",
              "FaStrip (M = 5), 40 x 40", "FASTSIM parabolic bound, 200 x 200",
              "FASTSIM elliptic bound, 200 x 200", "FaStrip (M = 5), 200 x 200",
              "FASTSIM parabolic bound, 200 x 200, reversed")
    cases = []
    for label, k in zip(labels, rows):
        fn, fx, fy, mz = _numbers(lines[k + 1])[:4]
        cases.append(dict(label=label, fy_over_mu_fn=fy / (0.3 * fn), fy=fy, mz=mz * 1e-3))
        print(f"fastsim example, {label}: Fy/(mu Fn) = {fy / (0.3 * fn):+.4f}", flush=True)
    return dict(description="CONTACT's example examples/fastsim.inp (a = 8 mm, b = 4 mm, Fn = 82 kN, "
                            "G = 82 GPa, nu = 0.28, mu = 0.3, eta = -6.25e-4, phi = 0.625 1/m): its eight "
                            "cases as run here", case=dict(a=8e-3, b=4e-3, normal_force=82e3, friction=0.3,
                                                           xi=0.0, eta=-6.25e-4, phi=0.625),
                cases=cases)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--contact", required=True, type=Path, help="CONTACT executable (contact_linux64)")
    parser.add_argument("--examples", required=True, type=Path, help="CONTACT's examples/ folder")
    parser.add_argument("--workdir", required=True, type=Path, help="scratch folder for CONTACT's files")
    parser.add_argument("--only", choices=("normal", "spin", "fastrip", "lma"), default=None)
    parser.add_argument("--lma-fine-loads", default="20000,40000,60000,80000",
                        help="wheel loads (N, comma-separated) of the LMA cases also run at 0.1 mm")
    args = parser.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    contact = args.contact.resolve()
    (args.workdir / "version.inp").write_text(" 0 MODULE\n")
    subprocess.run([str(contact), "2", "version"], cwd=args.workdir, capture_output=True, timeout=60)
    banner = (args.workdir / "version.out").read_text() if (args.workdir / "version.out").exists() else ""
    match = re.search(r"Version:\s*(.*?)\s*\|", banner)
    meta = dict(program="CONTACT (E.A.H. Vollebregt, J.J. Kalker), Apache-2.0",
                repository="https://github.com/eve70a/CONTACT", commit=CONTACT_COMMIT,
                version=match.group(1) if match else "unknown",
                build="gfortran 12.2 (Debian 12) without MKL and OpenMP, with the source edits listed in README.md here",
                made_by="tests/data/contact_reference/make_contact_reference.py")
    jobs = {"normal": ("normal_s1002_uic60.json", lambda: normal_cases(contact, args.workdir)),
            "spin": ("spin_moment.json", lambda: spin_cases(contact, args.workdir)),
            "fastrip": ("fastrip.json", lambda: fastrip_cases(contact, args.workdir, args.examples)),
            "lma": ("normal_lma_chn60.json",
                    lambda: lma_cases(contact, args.workdir,
                                      {float(v) for v in args.lma_fine_loads.split(",") if v.strip()},
                                      lambda cases: (args.workdir / "lma_partial.json").write_text(
                                          json.dumps(dict(contact=meta, cases=cases), indent=1))))}
    if args.only in (None, "normal"):
        write_profiles(args.workdir)
    for key, (filename, job) in jobs.items():
        if args.only not in (None, key):
            continue
        data = dict(contact=meta, **job())
        (HERE / filename).write_text(json.dumps(data, indent=1) + "\n")
        print(f"wrote {HERE / filename}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
