"""The FMI 2.0 co-simulation state table and the declared ranges, walked by a
hypothesis state machine over the FMI calls.

The expected behaviour is written here from the standard (FMI 2.0.x,
section 4.2.4, "State Machine of Calling Sequence from Master to Slave"), not
from the FMU's code: each call is allowed only in the states of that table; a
call outside them, or a value outside its declared min/max, must be refused
with a message logged at fmi2Error and must change nothing the host can see.

| call | allowed in |
|---|---|
| fmi2SetupExperiment | instantiated |
| fmi2EnterInitializationMode | instantiated |
| fmi2ExitInitializationMode | initializationMode |
| fmi2DoStep | stepComplete |
| fmi2Terminate | stepComplete |
| fmi2SetReal (input) | instantiated, initializationMode, stepComplete |
| fmi2SetReal (fixed parameter) | instantiated, initializationMode |
| fmi2SetReal (output) | never |

A failed fmi2ExitInitializationMode (a parameter or start time refused) puts the
instance in the error state, where only get, reset and free are allowed.

Deviation documented in docs/limits_and_failures.md: a discarded step leaves
the instance in stepComplete (the host may change its inputs and retry, or
roll back), not in stepFailed.

Statuses (the project's native C front end, fmu_wheelset/fmu/native/, the
default build; the pythonfmu 0.7.0 fallback of `--pythonfmu-binary` returns
fmi2OK from every call but fmi2DoStep and is not what is tested here): a call
outside its states is fmi2Error, "<function> is not allowed in state '<state>'"
(the C state machine), the instance unchanged; a set outside the declared range
is fmi2Error naming the variable, value and range, and the value is kept (a
bad input makes the next fmi2DoStep fmi2Discard, a bad parameter or start time
makes fmi2ExitInitializationMode fmi2Error), so that a host that ignores the
error cannot go on with an old value; fmi2DoStep refused for an input or an
output outside its declared range is fmi2Discard, the state unchanged
(FMI 2.0 section 4.2.3: the step can be retried with other inputs).
"""
from __future__ import annotations

import math

import pytest

fmpy = pytest.importorskip("fmpy")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, settings, strategies as st  # noqa: E402
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule  # noqa: E402

from test_security_state import Host  # noqa: E402  (one logger for all instances)

DISCARD, ERROR = 2, 3
H = 1e-3
BOX = "axlebox.left.force.z"          # declared [-1e6, 1e6] N
CANT = "track.cant_angle"             # declared [-0.5, 0.5] rad
MASS = "wheelset.mass"                # declared [1, 1e5] kg
WATCHED = ["wheelset.y", "wheelset.z", "wheel.left.Q", "wheelset.distance"]


@pytest.fixture(scope="module")
def unzipped(wheelset_fmu_unzipped):
    return wheelset_fmu_unzipped


@pytest.fixture(scope="module")
def md(unzipped):
    return fmpy.read_model_description(unzipped)


def errors_since(h, n):
    return [m for status, *_, m in h.messages[n:] if status >= ERROR]


class FmiCalls(RuleBasedStateMachine):
    md = None
    unzipped = None

    def __init__(self):
        super().__init__()
        self.h = Host(self.md, self.unzipped, "machine", initialize=False)
        self.h.s.setInteger([self.h.vr["contact.creep_model"], self.h.vr["contact.model"]], [0, 0])
        self.state = "instantiated"
        self.bad_setup = self.bad_parameter = False
        self.bad_input = set()
        self.t = 0.0

    def teardown(self):
        self.h.s.freeInstance()

    # -- helpers ---------------------------------------------------------------
    def outputs(self):
        """The watched outputs, None in instantiated (FMI 2.0: no fmi2GetReal
        before fmi2EnterInitializationMode)."""
        if self.state == "instantiated":
            return None
        return self.h.s.getReal([self.h.vr[n] for n in WATCHED])

    def call(self, allowed, valid, function, *args, refused_for_state=None, **kwargs):
        """Run an FMI call; assert it returns fmi2Error with an error logged iff it
        is not allowed or not valid (fmi2OK and nothing logged otherwise), and that
        a refused call changed no output."""
        before = self.outputs()
        n = len(self.h.messages)
        status = 0
        try:
            function(*args, **kwargs)
        except fmpy.fmi1.FMICallException as exc:
            status = exc.status
        errors = errors_since(self.h, n)
        if allowed and valid:
            assert status == 0 and not errors, (function.__name__, self.state, status, errors)
        else:
            assert status == ERROR, (function.__name__, self.state, status, errors)
            assert errors, f"{function.__name__} in {self.state}: nothing logged"
            if refused_for_state is None:
                refused_for_state = not allowed
            if refused_for_state:
                assert "is not allowed in state" in " ".join(errors), errors
            assert self.outputs() == before
        return errors

    # -- rules -------------------------------------------------------------------
    @initialize(start=st.sampled_from(["instantiated", "initializationMode", "stepComplete",
                                       "stepComplete", "terminated"]))
    def start_in(self, start):
        """Begin each run in one of the table's states, reached by valid calls (so
        that every state is explored, not only the first few calls)."""
        path = ["instantiated", "initializationMode", "stepComplete", "terminated"]
        for step in path[1:path.index(start) + 1]:
            if step == "initializationMode":
                self.setup_experiment(0.0)
                self.enter_initialization()
            elif step == "stepComplete":
                self.exit_initialization()
                self.do_step()
            else:
                self.terminate()
        assert self.state == start

    @rule(start=st.sampled_from([0.0, 0.0, math.nan, math.inf]))
    def setup_experiment(self, start):
        allowed = self.state == "instantiated"
        valid = math.isfinite(start)
        self.call(allowed, valid, self.h.s.setupExperiment, startTime=start)
        if allowed:
            self.bad_setup = not valid

    @rule()
    def enter_initialization(self):
        allowed = self.state == "instantiated"
        self.call(allowed, True, self.h.s.enterInitializationMode)
        if allowed:
            self.state = "initializationMode"

    @rule()
    def exit_initialization(self):
        allowed = self.state == "initializationMode"
        # an input outside its declared range is refused at initialization too
        succeeds = allowed and not (self.bad_setup or self.bad_parameter or self.bad_input)
        self.call(allowed, succeeds, self.h.s.exitInitializationMode)
        if allowed:
            self.state = "stepComplete" if succeeds else "error"

    @rule()
    def do_step(self):
        allowed = self.state == "stepComplete"
        valid = not self.bad_input
        before = self.outputs()
        n = len(self.h.messages)
        status = 0
        try:
            self.h.s.doStep(currentCommunicationPoint=self.t, communicationStepSize=H)
        except fmpy.fmi1.FMICallException as exc:
            status = exc.status
        errors = errors_since(self.h, n)
        if allowed and valid:
            assert status == 0 and not errors, (status, errors)
            self.t += H
        elif allowed:           # an input outside its declared range: fmi2Discard
            assert status == DISCARD and errors, (self.state, status, errors)
            assert "declared range" in " ".join(errors)
            assert self.outputs() == before
        else:                   # outside the state table: fmi2Error
            assert status == ERROR and errors, (self.state, status, errors)
            assert "fmi2DoStep is not allowed in state" in " ".join(errors), errors
            assert self.outputs() == before

    @rule()
    def terminate(self):
        allowed = self.state == "stepComplete"
        self.call(allowed, True, self.h.s.terminate)
        if allowed:
            self.state = "terminated"

    @rule(name=st.sampled_from([BOX, CANT]), value=st.sampled_from(
        [-6.0e4, 0.0, 2.0e7, 6.0, -0.4]))
    def set_input(self, name, value):
        var = {v.name: v for v in self.md.modelVariables}[name]
        allowed = self.state in ("instantiated", "initializationMode", "stepComplete")
        valid = float(var.min) <= value <= float(var.max)
        # the axle-box load on both sides (one side loaded alone lifts the other
        # wheel: there is no static equilibrium to initialize from)
        names = [BOX, BOX.replace("left", "right")] if name == BOX else [name]
        self.call(allowed, valid, self.h.s.setReal, [self.h.vr[n] for n in names],
                  [value] * len(names))
        if allowed:
            (self.bad_input.discard if valid else self.bad_input.add)(name)

    @rule(value=st.sampled_from([1813.0, -5.0, 2.0e5]))
    def set_parameter(self, value):
        allowed = self.state in ("instantiated", "initializationMode")
        valid = 1.0 <= value <= 1.0e5
        in_setter_states = self.state in ("instantiated", "initializationMode", "stepComplete")
        errors = self.call(allowed, valid, self.h.s.setReal, [self.h.vr[MASS]], [value],
                           refused_for_state=not in_setter_states)
        if in_setter_states and not allowed:      # a fixed parameter after initialization
            assert "(wheelset.mass) is a fixed parameter" in " ".join(errors), errors
        if allowed:
            self.bad_parameter = not valid

    @rule(name=st.sampled_from(WATCHED))
    def set_output(self, name):
        """Never valid: refused for the state outside the setters' states, else for
        the causality (an output cannot be set)."""
        allowed = self.state in ("instantiated", "initializationMode", "stepComplete")
        errors = self.call(allowed, False, self.h.s.setReal, [self.h.vr[name]], [123.0],
                           refused_for_state=False)
        if allowed:
            assert f"({name}) is an output" in " ".join(errors), errors
        else:
            assert "is not allowed in state" in " ".join(errors), errors

    @invariant()
    def outputs_finite(self):
        outputs = self.outputs()
        if outputs is not None and self.state != "error":
            assert all(math.isfinite(x) for x in outputs), (self.state, outputs)


def test_fmi_state_table(md, unzipped):
    from hypothesis.stateful import run_state_machine_as_test
    FmiCalls.md, FmiCalls.unzipped = md, unzipped
    run_state_machine_as_test(FmiCalls, settings=settings(
        max_examples=60, stateful_step_count=15, deadline=None,
        suppress_health_check=list(HealthCheck)))


# ---------------------------------------------------------------------------
# the cases of the threat model (docs/SECURITY.md), one by one
# ---------------------------------------------------------------------------
@pytest.fixture
def host(md, unzipped):
    h = Host(md, unzipped, "fmi")
    yield h
    h.s.freeInstance()


def test_second_exit_initialization_keeps_the_state(host, md, unzipped):
    host.step(3)
    before = host.observe()
    n = len(host.messages)
    with pytest.raises(fmpy.fmi1.FMICallException) as info:
        host.s.exitInitializationMode()
    assert info.value.status == ERROR
    assert "fmi2ExitInitializationMode is not allowed in state 'step complete'" in \
        " ".join(errors_since(host, n))
    assert host.observe() == before
    reference = Host(md, unzipped, "reference")
    try:
        reference.step(5)
        host.step(2)
        assert host.observe() == reference.observe()
    finally:
        reference.s.freeInstance()


def test_do_step_after_terminate_refused(host):
    """FMI 2.0 state table: fmi2DoStep is not allowed in terminated: fmi2Error."""
    host.step(1)
    before = host.observe()
    host.s.terminate()
    n = len(host.messages)
    with pytest.raises(fmpy.fmi1.FMICallException) as info:
        host.s.doStep(currentCommunicationPoint=host.t, communicationStepSize=H)
    assert info.value.status == ERROR
    assert "fmi2DoStep is not allowed in state 'terminated'" in " ".join(errors_since(host, n))
    assert host.observe() == before


@pytest.mark.parametrize("start, stop", [(math.nan, None), (math.inf, None), (0.0, -1.0)])
def test_setup_experiment_refused(md, unzipped, start, stop):
    h = Host(md, unzipped, "setup", initialize=False)
    try:
        n = len(h.messages)
        kwargs = {"startTime": start} if stop is None else {"startTime": start, "stopTime": stop}
        with pytest.raises(fmpy.fmi1.FMICallException) as info:
            h.s.setupExperiment(**kwargs)
        assert info.value.status == ERROR
        assert "fmi2SetupExperiment refused" in " ".join(errors_since(h, n))
        h.s.enterInitializationMode()
        n = len(h.messages)
        with pytest.raises(fmpy.fmi1.FMICallException) as info:
            h.s.exitInitializationMode()
        assert info.value.status == ERROR
        assert "initialization failed: " in " ".join(errors_since(h, n))
        with pytest.raises(fmpy.fmi1.FMICallException) as info:
            h.step()
        assert info.value.status == ERROR
        assert "fmi2DoStep is not allowed in state 'error'" in " ".join(errors_since(h, n))
    finally:
        h.s.freeInstance()


def test_set_real_on_an_output_refused(host):
    host.step(1)
    before = host.observe()
    n = len(host.messages)
    with pytest.raises(fmpy.fmi1.FMICallException) as info:
        host.s.setReal([host.vr["wheelset.y"]], [0.5])
    assert info.value.status == ERROR
    assert "(wheelset.y) is an output" in " ".join(errors_since(host, n))
    assert host.observe() == before


def test_cant_outside_its_range_refused_not_wrapped(md, unzipped):
    """cant 6 rad (declared [-0.5, 0.5]) used to wrap around to 6 - 2 pi."""
    h = Host(md, unzipped, "cant", initialize=False)
    try:
        h.s.setBoolean([h.vr["track.cant_from_input"]], [True])
        h.initialize()
        h.step(1)
        n = len(h.messages)
        before = h.observe()
        with pytest.raises(fmpy.fmi1.FMICallException) as info:
            h.s.setReal([h.vr[CANT]], [6.0])
        assert info.value.status == ERROR
        text = " ".join(errors_since(h, n))
        assert "track.cant_angle = 6.0 outside [-0.5, 0.5] rad" in text, text
        # the value is kept (not wrapped): the next step is discarded, state unchanged
        with pytest.raises(fmpy.fmi1.FMICallException) as info:
            h.step()
        assert info.value.status == DISCARD
        assert "outside their declared range" in " ".join(errors_since(h, n))
        assert h.observe() == before
        h.s.setReal([h.vr[CANT]], [0.0])
        h.step()
    finally:
        h.s.freeInstance()


def test_parameter_outside_its_range_refused_at_set(md, unzipped):
    h = Host(md, unzipped, "mass", initialize=False)
    try:
        n = len(h.messages)
        with pytest.raises(fmpy.fmi1.FMICallException) as info:
            h.s.setReal([h.vr[MASS]], [-5.0])
        assert info.value.status == ERROR
        assert "wheelset.mass = -5.0 is outside its declared range [1, 100000] kg" in \
            " ".join(errors_since(h, n))
        # the value is kept: initialization fails with the same reason
        h.s.setupExperiment(startTime=0.0)
        h.s.enterInitializationMode()
        n = len(h.messages)
        with pytest.raises(fmpy.fmi1.FMICallException) as info:
            h.s.exitInitializationMode()
        assert info.value.status == ERROR
        assert "wheelset.mass" in " ".join(errors_since(h, n))
    finally:
        h.s.freeInstance()


@pytest.mark.parametrize("poisson", [0.0, 0.28, 0.499])
def test_every_declared_poisson_ratio_is_accepted(md, unzipped, poisson):
    """Poisson's ratio: the declared range is what the core accepts (0.5 used to be
    declared legal and then refused)."""
    var = {v.name: v for v in md.modelVariables}["material.poisson_ratio"]
    assert float(var.min) == 0.0 and float(var.max) == 0.499
    h = Host(md, unzipped, "poisson", initialize=False)
    try:
        h.s.setReal([h.vr["material.poisson_ratio"]], [poisson])
        n = len(h.messages)
        h.initialize()
        assert not errors_since(h, n)
        h.step()
    finally:
        h.s.freeInstance()


# ---------------------------------------------------------------------------
# outputs stay within their declared ranges (item 7)
# ---------------------------------------------------------------------------
def _assert_outputs_within_declaration(h, md):
    reals = [v for v in md.modelVariables if v.causality == "output" and v.type == "Real"]
    values = h.s.getReal([v.valueReference for v in reals])
    for v, x in zip(reals, values):
        lo = -math.inf if v.min is None else float(v.min)
        hi = math.inf if v.max is None else float(v.max)
        assert lo <= x <= hi, f"{v.name} = {x} outside [{lo}, {hi}]"


def test_output_leaving_its_range_discards_the_step(md, unzipped):
    """A driving torque of 1e5 N m (declared up to 1e6) accelerates the wheelset
    against the frame moving at wheelset.speed until its longitudinal
    displacement reaches the declared 10 m (after ~0.94 s): that step is
    discarded with the output, its value and its range named; every output read
    before stays within its declaration."""
    h = Host(md, unzipped, "range", params={"contact.model": 0}, initialize=False)
    try:
        h.initialize()
        h.s.setReal([h.vr["axle.torque"]], [1.0e5])
        n = len(h.messages)
        with pytest.raises(fmpy.fmi1.FMICallException) as info:
            for _ in range(1500):
                h.step()
                _assert_outputs_within_declaration(h, md)
        assert info.value.status == DISCARD
        before = h.s.getReal([h.vr["wheelset.x"]])[0]
        text = " ".join(errors_since(h, n))
        assert "wheelset.x = 10.0" in text and "outside [-10, 10] m" in text, text
        assert 9.9 < before <= 10.0                       # the state of the step before
        _assert_outputs_within_declaration(h, md)
        # nothing changed: the same step is refused again with the same numbers
        n = len(h.messages)
        with pytest.raises(fmpy.fmi1.FMICallException) as info:
            h.step()
        assert info.value.status == DISCARD
        assert " ".join(errors_since(h, n)) == text
    finally:
        h.s.freeInstance()
