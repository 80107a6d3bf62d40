"""The contract for adding a model (docs/ARCHITECTURE.md, "Adding a model") holds:
a creep model and an integrator added through their registries alone -- a
kernel and one register() call each, no other file touched -- are dispatched
by the compiled right-hand side and step, validated by WheelsetParameters,
and declared by the FMU (its enumeration items and the creep model's option
parameter).

The toy models run in a subprocess with a numba cache of its own
(NUMBA_CACHE_DIR): the solver's shipped cache must not learn them, and the
registry refuses entries of a user's own without one.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

TOY = textwrap.dedent('''
    import json, sys
    import numpy as np
    from numba import njit

    from solver.registry import Entry, Option
    from solver.contact.creep.models import CREEP_MODELS

    # a viscous toy creep law: F = -k N (xi, eta), no spin moment (k an option)
    @njit(cache=True)
    def viscous_creep(patch, options):
        k = options[0]
        return -k * patch.normal_force * patch.xi, -k * patch.normal_force * patch.eta, 0.0

    def viscous_creep_reference(patch, options):
        return viscous_creep.py_func(patch, options)

    CREEP_MODELS.register(Entry(
        "viscous", "toy viscous creep law", fmi_name="Viscous", kernel=viscous_creep,
        reference=viscous_creep_reference,
        options=(Option("k", "1", 300.0, 0.0, 1.0e4, "creep force per unit creepage and load"),)))

    # registered creep models first: importing the integrators generates the creep dispatch
    from solver.dynamics.integrators.methods import INTEGRATORS
    from solver.dynamics.integrators.stages import full_rhs, track_at, update_rhs
    from solver.layout import M_SPEED, N_STATE

    # Heun's method (explicit trapezoidal rule, second order), fixed steps
    @njit(cache=True)
    def integrate_heun(state, step, data, inputs, step_inputs, contact):
        key = data.search_key
        k1, k2, tmp = data.stages[0], data.stages[1], data.stages[2]
        n_rhs = 0
        track = track_at(data, step.distance, inputs)
        for sub in range(step.n_sub):
            track = track_at(data, step.distance + data.model[M_SPEED] * step.dt * sub, inputs)
            full_rhs(state, track, data.model, step_inputs, contact, k1, key, bool(False))
            for j in range(N_STATE):
                tmp[j] = state[j] + step.dt * k1[j]
            update_rhs(tmp, track, data.model, step_inputs, contact, k2, key)
            for j in range(N_STATE):
                state[j] += 0.5 * step.dt * (k1[j] + k2[j])
            n_rhs += 2
        full_rhs(state, track, data.model, step_inputs, contact, k1, key, bool(True))
        return n_rhs + 1

    INTEGRATORS.register(Entry("heun", "toy: Heun's method, fixed steps", fmi_name="Heun",
                               kernel=integrate_heun),
                         adaptive=False, order=2, stability_limit=2.0)

    from solver.contact.creep.forces import creep_forces
    from solver.model import WheelsetModel, WheelsetParameters
    from fmu_wheelset.fmu import registry_declarations

    out = {}
    out["creep"] = creep_forces("viscous", 1e-3, -2e-3, 0.0, 6e-3, 4e-3, 5e4, 0.3, 8e10, 0.28,
                                20.0, {"k": 250.0})
    try:
        creep_forces("viscous", 1e-3, 0.0, 0.0, 6e-3, 4e-3, 5e4, 0.3, 8e10, 0.28, 20.0,
                     {"k": -1.0})
    except ValueError as exc:
        out["refused"] = str(exc)

    def run(**kw):
        # the loaded wheelset of the convergence cases, released 2 mm off the
        # centreline, on the rigid track (the lumped rail bodies' modes, 5.5e4 1/s,
        # keep a second-order method pre-asymptotic at these steps: 2.8 measured)
        params = WheelsetParameters(bogie=True, frame_on_centreline=True, suspended_mass=12400.0,
                                    initial_lateral=0.002, track_model="prescribed",
                                    **kw)
        model = WheelsetModel(params)
        model.initialize()
        ys = []
        for _ in range(100):              # 0.1 s in 1 ms steps
            result = model.advance(1e-3)
            assert result.status == "ok", result.message
            ys.append(model.state[1])
        return np.array(ys), model

    y_heun, m = run(integrator="heun", internal_step=2.5e-5)
    y_rk4, _ = run(integrator="rk4", internal_step=2.5e-5)
    y_heun2, _ = run(integrator="heun", internal_step=1.25e-5)
    out["heun_vs_rk4"] = float(np.abs(y_heun - y_rk4).max())
    out["heun2_vs_rk4"] = float(np.abs(y_heun2 - y_rk4).max())
    y_vis, mv = run(creep_model="viscous", creep_options={"k": 300.0})
    out["viscous_finite"] = bool(np.isfinite(y_vis).all())
    out["viscous_y"] = float(y_vis[-1])
    out["stable_step"] = m.stable_internal_step()
    decl = registry_declarations.declarations()
    out["fmu_creep_items"] = [item for item in decl["ENUMERATIONS"]["CreepModel"][1]]
    out["fmu_integrators"] = [item for item in decl["ENUMERATIONS"]["Integrator"][1]]
    out["fmu_options"] = [o[:6] for o in decl["CREEP_OPTIONS"] if o[0] == "viscous"]
    out["names"] = [list(CREEP_MODELS.names()), list(INTEGRATORS.names())]
    print("RESULT " + json.dumps(out))
''')


@pytest.mark.slow
def test_a_toy_creep_model_and_a_toy_integrator_through_the_registries_alone(tmp_path):
    script = tmp_path / "toy_models.py"
    script.write_text(TOY, encoding="utf-8")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba_cache"),
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")][-1]
    out = json.loads(line[len("RESULT "):])
    # the kernel through the generated dispatch: F = -k N xi, -k N eta (exact)
    fx, fy, mz = out["creep"]
    assert fx == pytest.approx(-250.0 * 5e4 * 1e-3, rel=1e-15)
    assert fy == pytest.approx(250.0 * 5e4 * 2e-3, rel=1e-15) and mz == 0.0
    # its option's declared range is checked
    assert "k" in out["refused"] and "range" in out["refused"]
    # the toy integrator in the compiled step: Heun is of second order, so against
    # RK4 at the same steps its difference falls by about 4 when the step halves
    # (a ratio between 3 and 5: the order, measured on 0.1 s of the loaded wheelset)
    ratio = out["heun_vs_rk4"] / out["heun2_vs_rk4"]
    assert 3.0 < ratio < 5.0, out
    assert out["heun_vs_rk4"] < 1e-6                      # and close to it at all: < 1 um of y
    assert out["viscous_finite"]
    # its facts reach the model (the stable step of a fixed-step method)
    assert out["stable_step"] <= 2.5e-5
    # the FMU declares both: enumeration items with their ids, the option parameter
    assert out["fmu_creep_items"][-1] == ["viscous", "Viscous", "toy viscous creep law"]
    assert out["fmu_integrators"][-1] == ["heun", "Heun", "toy: Heun's method, fixed steps"]
    assert out["fmu_options"] == [["viscous", "k", "1", 300.0, 0.0, 1.0e4]]
    assert out["names"][0][-1] == "viscous" and out["names"][1][-1] == "heun"


def test_an_entry_of_ones_own_needs_a_numba_cache_of_its_own(tmp_path):
    """Without NUMBA_CACHE_DIR the registry refuses a user's entry when the
    dispatch is generated (the cached kernels that call it would not know it)."""
    script = tmp_path / "no_cache.py"
    script.write_text(textwrap.dedent('''
        from numba import njit
        from solver.registry import Entry
        from solver.contact.creep.models import CREEP_MODELS
        @njit
        def nothing(patch, options):
            return 0.0, 0.0, 0.0
        CREEP_MODELS.register(Entry("nothing", "no force", kernel=nothing))
        try:
            import solver.contact.creep.forces
        except ValueError as exc:
            print("REFUSED", exc)
    '''), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "REFUSED" in done.stdout and "NUMBA_CACHE_DIR" in done.stdout


def test_an_entry_registered_after_the_dispatch_was_generated_is_refused():
    """A model registered once its kernels' dispatch exists would never be reached."""
    from solver.contact.creep import forces  # noqa: F401 - generates the creep dispatch
    from solver.contact.creep.models import CREEP_MODELS
    from solver.registry import Entry, RegistryError
    with pytest.raises(RegistryError, match="register it before"):
        CREEP_MODELS.register(Entry("late", "too late", kernel=forces.creep_forces_kernel))


def test_a_model_with_options_needs_fmi_structured_names():
    """The FMU names a parameter contact.creep.<model>.<option> after each option:
    a hyphenated model name ("linear-saturated", the issue's first try) is not an
    FMI 2.0 structured name (section 2.2.9) and is refused with the reason; the
    same model without options, and an underscore, are fine."""
    from solver.registry import Entry, Option, Registry, RegistryError
    cap = Option("cap", "1", 1.0, 0.0, 10.0, "a cap")
    models = Registry("creep model", max_options=3)
    with pytest.raises(RegistryError, match="FMI 2.0 structured-name"):
        models.register(Entry("linear-saturated", "x", options=(cap,)))
    models.register(Entry("linear_saturated", "x", options=(cap,)))
    models.register(Entry("no-options", "x"))
    assert models.names() == ("linear_saturated", "no-options")
