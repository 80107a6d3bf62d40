"""Creep models against published full-theory values and against CONTACT's FaStrip.

References, all from the open-source CONTACT program (E.A.H. Vollebregt; its
example `fastsim` as run here by tests/data/contact_reference/
make_contact_reference.py, stored in fastrip.json there, equal to its own
examples/fastsim.ref_out; and examples/tractcurv.ref_out):

- the FASTSIM reference case (a = 8, b = 4 mm, Fn = 82 kN, G = 82 GPa,
  nu = 0.28, mu = 0.3, eta = -6.25e-4, phi = 0.625 1/m): full theory
  Fy/(mu Fn) = -0.6073 (40 x 40 cells in the ellipse); CONTACT's own FaStrip
  (its modified variant M = 5) -0.6435 on the same cells, -0.6443 on
  200 x 200. The FaStrip rows compare with CONTACT's FaStrip: the method's
  own +5.9 % against the full theory on this case is its limit, not a target
  (reported);
- a full-theory longitudinal creep curve (Hertz a = 6.304, b = 12.61 mm,
  Fn = 106.7 kN, mu = 0.33, G = 82 GPa, nu = 0.28; Coulomb friction).

The sweep against the project's own exact solver (solver/contact/creep/exact_rolling.py:
lateral creepage, spin, lateral creepage + spin) costs ~15 min of CPU and is
not part of the suite: `python -m fmu_wheelset.validation.creep_models`
prints it (docs/validation.md gives the measured table).
"""
from __future__ import annotations

import math
import sys
import time

from pathlib import Path

from fmu_wheelset.validation.common import CaseResult, Row, figure, save

# CONTACT's FASTSIM reference case (SI units)
CASE = dict(a=8e-3, b=4e-3, normal_force=82e3, friction=0.3, shear_modulus=82e9, poisson=0.28)
CASE_CREEP = (0.0, -6.25e-4, 0.625)


def contact_fastsim_example() -> dict:
    """CONTACT's results on its `fastsim` example, by label (tests/data/contact_reference/fastrip.json)."""
    from fmu_wheelset.validation.contact_mechanics import load_reference
    return {c["label"]: c for c in load_reference("fastrip.json")["cases"]}


# CONTACT tractcurv.ref_out, first series: (xi, Fx/(mu Fn)), full theory
CURVE_CASE = dict(a=6.304e-3, b=12.61e-3, normal_force=106.7e3, friction=0.33,
                  shear_modulus=82e9, poisson=0.28)
CURVE = ((4e-4, -0.2588), (8e-4, -0.4742), (1.2e-3, -0.6482), (1.6e-3, -0.7831),
         (2.0e-3, -0.8816), (2.4e-3, -0.9467), (2.8e-3, -0.9832), (3.2e-3, -0.9976))


def _ratio(model, creep, case, options=None, component=1):
    from solver.contact.creep.forces import creep_forces
    xi, eta, phi = creep
    f = creep_forces(model, xi, eta, phi, case["a"], case["b"], case["normal_force"],
                     case["friction"], case["shear_modulus"], case["poisson"], 0.0, options)
    return f[component] / (case["friction"] * case["normal_force"])


def case_creep_models(out=None, backend="core") -> CaseResult:
    name = "10 creep models vs full theory"
    contact = contact_fastsim_example()
    full_theory = contact["full theory, 40 x 40"]["fy_over_mu_fn"]
    contact_fastrip = contact["FaStrip (M = 5), 40 x 40"]
    contact_fastrip_fine = contact["FaStrip (M = 5), 200 x 200"]
    rows = []
    why_fastrip = ("1.5 %: CONTACT's variant (M = 5) differs in its FASTSIM pass (blended flexibilities, "
                   "implicit Euler), which sets only the slip-zone direction")
    fastrip = _ratio("fastrip", CASE_CREEP, CASE)
    rows.append(Row(name, "FaStrip Fy/(mu Fn), CONTACT's FASTSIM case, 20 x 20 (default)",
                    f"{contact_fastrip['fy_over_mu_fn']:.4f} (CONTACT's FaStrip, 40 x 40)", fastrip, "-",
                    contact_fastrip["fy_over_mu_fn"], 0.015 * abs(contact_fastrip["fy_over_mu_fn"]), "core",
                    why=why_fastrip, note=f"{(fastrip / contact_fastrip['fy_over_mu_fn'] - 1) * 100:+.1f} %"))
    fastrip40 = _ratio("fastrip", CASE_CREEP, CASE, {"nx": 40, "ny": 40})
    rows.append(Row(name, "FaStrip Fy/(mu Fn), CONTACT's FASTSIM case, 40 x 40",
                    f"{contact_fastrip['fy_over_mu_fn']:.4f} (CONTACT's FaStrip, same cells)", fastrip40, "-",
                    contact_fastrip["fy_over_mu_fn"], 0.015 * abs(contact_fastrip["fy_over_mu_fn"]), "core",
                    why=why_fastrip,
                    note=f"{(fastrip40 / contact_fastrip['fy_over_mu_fn'] - 1) * 100:+.1f} %"))
    fastrip200 = _ratio("fastrip", CASE_CREEP, CASE, {"nx": 200, "ny": 200})
    rows.append(Row(name, "FaStrip Fy/(mu Fn), CONTACT's FASTSIM case, 200 x 200",
                    f"{contact_fastrip_fine['fy_over_mu_fn']:.4f} (CONTACT's FaStrip, same cells)", fastrip200,
                    "-", contact_fastrip_fine["fy_over_mu_fn"], 0.01 * abs(contact_fastrip_fine["fy_over_mu_fn"]),
                    "core", why="1 %: as at 40 x 40, the discretisations converged (both within 0.3 % of "
                                "their 40 x 40 values)",
                    note=f"{(fastrip200 / contact_fastrip_fine['fy_over_mu_fn'] - 1) * 100:+.1f} %"))
    mz200 = _ratio("fastrip", CASE_CREEP, CASE, {"nx": 200, "ny": 200}, component=2) * CASE["friction"] * \
        CASE["normal_force"]
    rows.append(Row(name, "FaStrip Mz, CONTACT's FASTSIM case, 200 x 200",
                    f"{contact_fastrip_fine['mz']:.4g} N m (CONTACT's FaStrip, same cells)", mz200, "N m",
                    contact_fastrip_fine["mz"], 0.02 * abs(contact_fastrip_fine["mz"]), "core",
                    why="2 %: the spin moment weighs the slip-zone direction (where the variants differ) "
                        "more than the force",
                    note=f"{(mz200 / contact_fastrip_fine['mz'] - 1) * 100:+.1f} %"))
    rows.append(Row(name, "FaStrip Fy/(mu Fn) against the full theory, CONTACT's FASTSIM case, 20 x 20",
                    f"{full_theory:.4f} (full theory, CONTACT)", fastrip, "-", full_theory, float("nan"), "core",
                    compared=False,
                    why="reported, not a target: the published method's own difference, CONTACT's FaStrip "
                        f"{(contact_fastrip['fy_over_mu_fn'] / full_theory - 1) * 100:+.1f} %; the normalised "
                        "spin phi' = -1.003 sits at the edge of the strip theory's range",
                    note=f"{(fastrip / full_theory - 1) * 100:+.1f} % from the full theory"))
    fastsim = _ratio("fastsim", CASE_CREEP, CASE)
    rows.append(Row(name, "FASTSIM Fy/(mu Fn), CONTACT's FASTSIM case, 20 x 20 (default)",
                    "-0.61 ... -0.64 (CONTACT's FASTSIM by mesh)", fastsim, "-", -0.625, 0.015,
                    "core", why="the published FASTSIM band (Kalker's L1/L2/L3, parabolic bound)",
                    note=f"{(fastsim / full_theory - 1) * 100:+.1f} % from the full theory"))
    for model in ("fastrip", "fastsim"):
        worst, at = 0.0, 0.0
        for xi, ref in CURVE:
            dev = _ratio(model, (xi, 0.0, 0.0), CURVE_CASE, component=0) / ref - 1.0
            if abs(dev) > abs(worst):
                worst, at = dev, xi
        label = "FaStrip" if model == "fastrip" else "FASTSIM"
        rows.append(Row(name, f"{label} longitudinal creep curve vs full theory: largest deviation "
                              f"(xi = 4e-4 ... 3.2e-3)", "0 (CONTACT full theory, a/b = 0.5)",
                        worst * 100, "%", 0.0, 5.0, "core", compared=(model == "fastrip"),
                        why=("5 %: the accuracy asked of FaStrip across the sweep; the reference's own "
                             "discretisation is ~2 % (its xi = 1e-5 value is 2.4 % above Kalker's "
                             "linear theory)") if model == "fastrip" else
                            "shown for comparison with FaStrip (not a FASTSIM requirement)",
                        note=f"at xi = {at:g}"))
    figures = [] if out is None else [plot_creep(Path(out) / "creep_models.png", fastrip,
                                                   fastrip40, fastsim, full_theory,
                                                   contact_fastrip["fy_over_mu_fn"])]
    return CaseResult("creep_models", "Creep models against published full-theory values",
                      rows, figures, [], "core",
                      ["CONTACT's example fastsim as run here (tests/data/contact_reference/fastrip.json), "
                       "its tractcurv.ref_out; the sweep against solver/contact/creep/exact_rolling.py: python -m "
                       "fmu_wheelset.validation.creep_models"])


def plot_creep(path, fastrip, fastrip40, fastsim, full_theory, contact_fastrip):
    """(caption, path): CONTACT's longitudinal full-theory curve against FaStrip
    and FASTSIM; the FASTSIM reference case's lateral force, every value of the
    table against the full theory and its tolerance."""
    import numpy as np
    fig, ax = figure(1, 2, size=(10.5, 4.2))
    xi = np.linspace(0.0, 3.6e-3, 37)
    for model, label in (("fastrip", "FaStrip (this core)"), ("fastsim", "FASTSIM (this core)")):
        ax[0, 0].plot(xi * 1e3, [-_ratio(model, (x, 0.0, 0.0), CURVE_CASE, component=0) for x in xi],
                      label=label)
    ax[0, 0].plot([x * 1e3 for x, _ in CURVE], [-f for _, f in CURVE], "ko", ms=4,
                  label="full theory (CONTACT tractcurv)")
    ax[0, 0].set_xlabel("longitudinal creepage xi (1e-3)")
    ax[0, 0].set_ylabel("-Fx / (mu Fn)")
    ax[0, 0].set_title("longitudinal creep curve, a/b = 0.5, 106.7 kN, mu 0.33", fontsize=9)
    ax[0, 0].legend(fontsize=7)
    values = (("full theory (CONTACT)", full_theory), ("FaStrip 40x40 (CONTACT)", contact_fastrip),
              ("FaStrip 20x20 (this core)", fastrip), ("FaStrip 40x40 (this core)", fastrip40),
              ("FASTSIM 20x20 (this core)", fastsim))
    for k, (label, value) in enumerate(values):
        ax[0, 1].plot([value], [k], "o", color="k" if "CONTACT" in label else "C0")
    ax[0, 1].axvspan(full_theory * 1.02, full_theory * 0.98, color="C2", alpha=0.25,
                     label="full theory +- 2 % (FaStrip's target)")
    ax[0, 1].axvspan(-0.64, -0.61, color="0.6", alpha=0.25, label="published FASTSIM band")
    ax[0, 1].set_yticks(range(len(values)), [label for label, _ in values], fontsize=7)
    ax[0, 1].set_xlabel("Fy / (mu Fn)")
    ax[0, 1].set_title("CONTACT's FASTSIM case: a 8, b 4 mm, 82 kN, eta -6.25e-4, phi 0.625/m",
                       fontsize=8)
    ax[0, 1].legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2)
    fig.suptitle("Creep models against CONTACT's full theory (backend: core)", fontsize=9)
    return ("Creep models: CONTACT's longitudinal full-theory curve against FaStrip and FASTSIM; "
            "the lateral force of CONTACT's FASTSIM case against the full theory [core]",
            save(fig, path))


# ---------------------------------------------------------------------------
# Sweep against the project's exact solver (not in the suite: ~15 min CPU)
# ---------------------------------------------------------------------------

SWEEP = (("eta", 0.0, -2.5e-4, 0.0), ("eta", 0.0, -1e-3, 0.0), ("eta", 0.0, -4e-3, 0.0),
         ("phi", 0.0, 0.0, 0.625), ("phi", 0.0, 0.0, 2.5),
         ("eta+phi", 0.0, -3.125e-4, 0.3125), ("eta+phi", 0.0, -6.25e-4, 0.625),
         ("eta+phi", 0.0, -1.25e-3, 1.25))


def aitken(f1, f2, f3):
    """Aitken's extrapolation of a sequence on grids refined by 2: f3 - (f3-f2)^2/((f3-f2)-(f2-f1))."""
    d = (f3 - f2) - (f2 - f1)
    return f3 if abs(d) <= 1e-12 * abs(f3) else f3 - (f3 - f2) ** 2 / d


def exact_sweep(points=SWEEP, stream=sys.stdout):
    """FaStrip and FASTSIM (default grids) against solver.contact.creep.exact_rolling on CONTACT's
    ellipse, Fy extrapolated by Aitken over 16, 32, 64 cells along x (16 across;
    the reference case gives -0.612, CONTACT -0.6074). Returns rows of
    (kind, xi, eta, phi, exact Fy/(mu Fn), FaStrip, FASTSIM, cpu s)."""
    from solver.contact.creep.exact_rolling import exact_rolling
    mu_n = CASE["friction"] * CASE["normal_force"]
    out = []
    for kind, xi, eta, phi in points:
        t0 = time.process_time()
        fy = [exact_rolling(xi, eta, phi, CASE["a"], CASE["b"], CASE["normal_force"],
                            CASE["friction"], CASE["shear_modulus"], CASE["poisson"], mx, 16).fy
              for mx in (16, 32, 64)]
        exact = aitken(*fy) / mu_n
        fr = _ratio("fastrip", (xi, eta, phi), CASE)
        fs = _ratio("fastsim", (xi, eta, phi), CASE)
        row = (kind, xi, eta, phi, exact, fr, fs, time.process_time() - t0)
        out.append(row)
        if stream is not None:
            print(f"{kind:8s} eta={eta:+.3e} phi={phi:6.3f}: exact {exact:+.4f}  FaStrip {fr:+.4f} "
                  f"({(fr / exact - 1) * 100:+.1f} %)  FASTSIM {fs:+.4f} ({(fs / exact - 1) * 100:+.1f} %)"
                  f"  [{row[-1]:.0f} s CPU]", file=stream, flush=True)
    return out


if __name__ == "__main__":
    exact_sweep()
