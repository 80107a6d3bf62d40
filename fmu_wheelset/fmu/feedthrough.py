"""The direct feedthrough of the wheelset FMU: its outputs at the current state
with the inputs as they are now (the contact at the current pose against the
rails where the host has just put them: variables.direct_inputs, the
ModelStructure), and fmi2GetDirectionalDerivative by central differences of
them.

``FeedthroughMixin`` is a base class of the slave (``Wheelset``,
fmu_wheelset/fmu/slave.py): its methods use the slave's value array, model and
log. Bundled in the FMU beside the slave (``resources/wheelset_fmu_feedthrough.py``,
or ``feedthrough.py`` in the native front end's package); imports nothing but
NumPy and the FMU's own modules.
"""
from __future__ import annotations

import numpy as np

if __package__:
    from . import adapter
else:
    import wheelset_fmu_adapter as adapter

INPUT_NAMES = adapter.INPUT_NAMES


class FeedthroughMixin:
    """update_feedthrough_outputs and directional_derivative of the slave."""

    def update_feedthrough_outputs(self) -> bool:
        """The outputs at the current state with the inputs as they are now (the
        direct feedthrough of variables.direct_inputs: the contact at the current
        pose against the rails where the host has just put them). False, outputs
        left as they are, before initialization or with a non-finite input (the
        next doStep reports it)."""
        model = self._model
        if model is None or not np.isfinite(self._u).all():
            return False
        model.set_inputs(adapter.core_inputs(self._u, self._input_map, self._core))
        model.rhs(model.state)          # contact search + forces at the current state
        model.refresh_record()
        self._store_outputs()
        return True

    def _feedthrough_scratch(self):
        """Every array update_feedthrough_outputs writes (the core's contact search
        and results, the record, the core's inputs, the running-safety memory and the
        FMU outputs): what directional_derivative saves and puts back bit for bit."""
        a = self._model.arrays
        arrays = [a.inputs, *a.search, a.contact, a.summary, a.deriv, a.search_key, a.record,
                  a.derived, a.safety, self._y]
        if a.table_scratch is not None:
            arrays.extend(a.table_scratch)
        return arrays

    def _derivative_indices(self, name, unknowns, knowns):
        """(output slots, input slots, feedthrough matrix) of value references
        that are all Real outputs / Real inputs, else None with the reason logged."""
        out_slots, in_slots = [], []
        for vr in unknowns:
            entry = self._io_slot.get(vr)
            if entry is None or entry[0] != "Real" or entry[1] < adapter.N_INPUTS:
                self._refuse(f"{name}: value reference {vr} is not a Real output (the unknowns "
                             "of a co-simulation FMU are its outputs)")
                return None
            out_slots.append(entry[1] - adapter.N_INPUTS)
        for vr in knowns:
            entry = self._io_slot.get(vr)
            if entry is None or entry[0] != "Real" or entry[1] >= adapter.N_INPUTS:
                self._refuse(f"{name}: value reference {vr} is not a Real input (the knowns of a "
                             "co-simulation FMU are its inputs)")
                return None
            in_slots.append(entry[1])
        out_index = np.array(out_slots, dtype=np.intp)
        in_index = np.array(in_slots, dtype=np.intp)
        return out_index, in_index, adapter.FEEDTHROUGH[np.ix_(out_index, in_index)]

    def directional_derivative(self, unknowns, knowns, seed):
        """FMI 2.0 fmi2GetDirectionalDerivative (section 2.1.9) for co-simulation:
        dz = (d outputs / d inputs) . seed at the current state and inputs, the
        outputs `unknowns` and the inputs `knowns` given as value references.
        Only the direct feedthrough counts (variables.direct_inputs, the
        ModelStructure dependencies): an output that depends on none of the seeded
        inputs directly has derivative 0; the others are central differences of
        update_feedthrough_outputs along the seed, the step scaled so that no
        input moves by more than its adapter.FD_STEP (a fraction of the contact's
        penetration / creepage: second-order error ~(step/penetration)^2 ~ 1e-4
        relative for Hertz). Nothing of the state changes: every array the
        evaluation writes is put back bit for bit. Returns the list dz, or None
        with the reason logged (fmi2Error)."""
        name = "fmi2GetDirectionalDerivative"
        if self._model is None or not self._initialized:
            self._refuse(f"{name}: the instance is {self._phase}; the wheelset model is built in "
                         "fmi2ExitInitializationMode, no derivative before it")
            return None
        key = ("derivative", tuple(unknowns), tuple(knowns))
        indices = self._index_cache.get(key)
        if indices is None:
            indices = self._derivative_indices(name, key[1], key[2])
            if indices is None:
                return None
            if len(self._index_cache) < 256:      # hosts use a handful of lists
                self._index_cache[key] = indices
        out_index, in_index, feeds = indices
        seed = np.array(seed, dtype=float)
        if seed.shape != (len(in_index),) or not np.isfinite(seed).all():
            self._refuse(f"{name}: the seed dvKnown must be {len(in_index)} finite numbers")
            return None
        u = self._u
        if not np.isfinite(u).all():
            bad = [INPUT_NAMES[j] for j in np.flatnonzero(~np.isfinite(u))]
            self._refuse(f"{name}: input(s) {', '.join(bad)} not finite: no derivative")
            return None
        # outputs fed directly by a seeded input; all others: 0 by the ModelStructure
        fed = feeds[:, seed != 0.0].any(axis=1)
        dz = np.zeros(len(out_index))
        if not fed.any():
            return dz.tolist()
        ratio = float(np.max(np.abs(seed) / adapter.FD_STEP[in_index]))
        eps = 1.0 / ratio
        arrays = self._feedthrough_scratch()
        saved = [a.copy() for a in arrays]
        u_saved = u.copy()
        values = []
        try:
            for sign in (1.0, -1.0):
                u[:] = u_saved
                np.add.at(u, in_index, sign * eps * seed)
                if not self.update_feedthrough_outputs():
                    raise ValueError("the perturbed inputs are not finite")
                values.append(self._y[out_index].copy())
        except Exception as exc:  # noqa: BLE001 - reported, state put back below
            self._refuse(f"{name}: the outputs could not be evaluated about the current state: "
                         f"{type(exc).__name__}: {exc}")
            return None
        finally:
            u[:] = u_saved
            for array, copy in zip(arrays, saved):
                np.copyto(array, copy)
        dz[fed] = ((values[0] - values[1]) / (2.0 * eps))[fed]
        if not np.isfinite(dz).all():
            self._refuse(f"{name}: a derivative is not finite (contact search failed about the "
                         "current state)")
            return None
        return dz.tolist()
