"""The integrators by name: one registry entry each (solver.registry).

Every integrator's kernel integrates one communication step:
    integrate(state, step, data, inputs, step_inputs, contact) -> RHS evaluations
(solver.dynamics.integrators.stages: the arguments, the helpers its stages
use and the codes it returns). The step's end is a full RHS with record True.

Facts of an entry:
    adaptive          True: the step size follows an error estimate under
                      model[M_TOLERANCE]; the internal step is its largest step
    stability_limit   a fixed-step method's largest stable step, in creep time
                      constants of the wheelset (WheelsetModel.stable_internal_step);
                      None for an adaptive one
    order             the order of the method (of its solution, for a pair)
An integrator that keeps memory from one host step to the next (as the
Rosenbrock method its Jacobian) needs a field of StepData for it
(solver.layout.STEP_DATA_FIELDS) and a place in the model's state
(WheelsetModel.get_state): that is more than a registry entry.

A new integrator: its kernel, one INTEGRATORS.register(...) (before
solver.dynamics.integrators.step is first imported), one test
(docs/ARCHITECTURE.md, "Adding a model").
"""
from __future__ import annotations

from ...errors import WheelsetError
from ...registry import Entry, Registry
from .embedded import integrate_rk23, integrate_rk45
from .fixed import integrate_rk4, integrate_semi_implicit
from .rosenbrock import integrate_rosenbrock

INTEGRATORS = Registry("integrator", error=WheelsetError)

RK4 = INTEGRATORS.register(Entry(
    "rk4", "classical Runge-Kutta, 4th order", fmi_name="RK4", kernel=integrate_rk4,
    source="the classical Runge-Kutta method (Hairer, Norsett & Wanner, Solving ODE I, II.1)"),
    adaptive=False, order=4,
    # RK4's stability interval on the negative real axis is 2.785 (Hairer, Norsett &
    # Wanner, Solving ODE I, IV.2): the creep damping's real eigenvalue -1/tau
    stability_limit=2.785)

SEMI_IMPLICIT = INTEGRATORS.register(Entry(
    "semi-implicit", "semi-implicit (symplectic) Euler", fmi_name="SemiImplicit",
    kernel=integrate_semi_implicit,
    source="the symplectic Euler method (Hairer, Lubich & Wanner, Geometric Numerical "
           "Integration, VI.3)"),
    adaptive=False, order=1,
    stability_limit=2.0)        # explicit Euler's interval on the negative real axis

RK23 = INTEGRATORS.register(Entry(
    "rk23", "adaptive Bogacki-Shampine 3(2) under solver.tolerance", fmi_name="RK23Adaptive",
    kernel=integrate_rk23,
    source="Bogacki & Shampine (1989), A 3(2) pair of Runge-Kutta formulas, Appl. Math. "
           "Lett. 2(4), 321-325"),
    adaptive=True, order=3, stability_limit=None)

RK45 = INTEGRATORS.register(Entry(
    "rk45", "adaptive Dormand-Prince 5(4) under solver.tolerance", fmi_name="RK45Adaptive",
    kernel=integrate_rk45,
    source="Dormand & Prince (1980), A family of embedded Runge-Kutta formulae, J. Comput. "
           "Appl. Math. 6(1), 19-26"),
    adaptive=True, order=5, stability_limit=None)

ROSENBROCK = INTEGRATORS.register(Entry(
    "rosenbrock", "adaptive linearly implicit W-method 2(3) (Shampine-Reichelt) under "
    "solver.tolerance", fmi_name="RosenbrockAdaptive", kernel=integrate_rosenbrock,
    source="Shampine & Reichelt (1997), The MATLAB ODE suite, SIAM J. Sci. Comput. 18(1), "
           "1-22 (ode23s, after Wolfbrandt)"),
    adaptive=True, order=2, stability_limit=None)


def adaptive_integrators() -> tuple:
    """The names of the adaptive integrators."""
    return tuple(e.name for e in INTEGRATORS if e.facts["adaptive"])
