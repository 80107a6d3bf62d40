/* The FMU states: fmi2GetFMUstate, fmi2SetFMUstate, fmi2FreeFMUstate and
 * their serialized form (the slave's format, fmu_wheelset/fmu/fmu_state.py).
 * Part of fmi2_frontend.c, which includes it: one translation unit, with its
 * static functions and types. */
/* ----------------------------------------------------------- FMU states */
static void free_saved(Component *c, SavedState *s) {
    if (s == NULL) return;
    if (s->python_state) {
        int gil = python_enter();
        py.DecRef(s->python_state);
        python_leave(gil);
    }
    if (s->blob) c->callbacks.freeMemory(s->blob);
    s->magic = 0;
    c->callbacks.freeMemory(s);
}

static SavedState *saved_of(Component *c, fmi2FMUstate state, const char *function) {
    SavedState *s = (SavedState *)state;
    if (s == NULL || s->magic != STATE_MAGIC) {
        log_message(c, fmi2Error, "logStatusError", "%s: not an FMU state of this FMU", function);
        return NULL;
    }
    return s;
}

fmi2Status fmi2GetFMUstate(fmi2Component component, fmi2FMUstate *state) {
    Component *c = (Component *)component;
    if (c == NULL) return fmi2Error;
    if (!allowed(c, ANY_STATE, "fmi2GetFMUstate")) return fmi2Error;
    if (state == NULL) ERROR_RETURN(c, "fmi2GetFMUstate: NULL state pointer");
    int gil = python_enter();
    PyObject *get = py.GetAttrString(c->instance, "get_state");
    PyObject *snapshot = get ? py.CallObject(get, NULL) : NULL;
    if (get) py.DecRef(get);
    if (snapshot == NULL) {
        char reason[1024];
        python_error_text(reason, sizeof reason);
        python_leave(gil);
        ERROR_RETURN(c, "fmi2GetFMUstate: %s", reason);
    }
    python_leave(gil);
    SavedState *s = (SavedState *)*state;
    if (s != NULL && s->magic == STATE_MAGIC) {       /* overwrite the given state */
        gil = python_enter();
        py.DecRef(s->python_state);
        python_leave(gil);
        if (s->blob) { c->callbacks.freeMemory(s->blob); s->blob = NULL; s->blob_size = 0; }
    } else {
        s = (SavedState *)c->callbacks.allocateMemory(1, sizeof(SavedState));
        if (s == NULL) {
            gil = python_enter(); py.DecRef(snapshot); python_leave(gil);
            ERROR_RETURN(c, "fmi2GetFMUstate: out of memory");
        }
        memset(s, 0, sizeof *s);
        s->magic = STATE_MAGIC;
    }
    s->python_state = snapshot;
    s->state = c->state;
    s->terminated = c->terminated;
    s->time = c->time;
    *state = s;
    return fmi2OK;
}

fmi2Status fmi2SetFMUstate(fmi2Component component, fmi2FMUstate state) {
    Component *c = (Component *)component;
    if (c == NULL) return fmi2Error;
    if (!allowed(c, ANY_STATE, "fmi2SetFMUstate")) return fmi2Error;
    SavedState *s = saved_of(c, state, "fmi2SetFMUstate");
    if (s == NULL) return fmi2Error;
    int gil = python_enter();
    long word = call_method(c, "set_state", s->python_state, NULL);
    attach_fast_step(c);
    python_leave(gil);
    fmi2Status status = (fmi2Status)(word & BRIDGE_STATUS_MASK);
    if (status > fmi2Warning) return fmi2Error;
    c->state = s->state;
    c->terminated = s->terminated;
    c->time = s->time;
    if (!isfinite(c->time)) {
        gil = python_enter();
        PyObject *f = py.GetAttrString(c->instance, "current_time");
        PyObject *t = f ? py.CallObject(f, NULL) : NULL;
        c->time = t ? py.FloatAsDouble(t) : 0.0;
        if (!t) py.ErrClear();
        if (t) py.DecRef(t);
        if (f) py.DecRef(f);
        python_leave(gil);
    }
    c->outputs_stale = 0;
    return fmi2OK;
}

fmi2Status fmi2FreeFMUstate(fmi2Component component, fmi2FMUstate *state) {
    Component *c = (Component *)component;
    if (c == NULL) return fmi2Error;
    if (state == NULL || *state == NULL) return fmi2OK;
    SavedState *s = saved_of(c, *state, "fmi2FreeFMUstate");
    if (s == NULL) return fmi2Error;
    free_saved(c, s);
    *state = NULL;
    return fmi2OK;
}

/* The serialized form is the slave's own format (fmu_wheelset/fmu/fmu_state.py:
 * versioned JSON, parsed and checked field by field on restore, never executed). */
static fmi2Status make_blob(Component *c, SavedState *s, const char *function) {
    if (s->blob != NULL) return fmi2OK;
    int gil = python_enter();
    PyObject *serialize = py.GetAttrString(c->instance, "serialize");
    PyObject *bytes = serialize ? py.CallFunctionObjArgs(serialize, s->python_state, NULL) : NULL;
    if (serialize) py.DecRef(serialize);
    char *data = NULL;
    py_ssize_t size = 0;
    if (bytes == NULL || py.BytesAsStringAndSize(bytes, &data, &size) != 0) {
        char reason[1024];
        python_error_text(reason, sizeof reason);
        if (bytes) py.DecRef(bytes);
        python_leave(gil);
        ERROR_RETURN(c, "%s: %s", function, reason);
    }
    s->blob = (char *)c->callbacks.allocateMemory((size_t)size + 1, 1);
    if (s->blob != NULL) {
        memcpy(s->blob, data, (size_t)size);
        s->blob_size = (size_t)size;
    }
    py.DecRef(bytes);
    python_leave(gil);
    if (s->blob == NULL) ERROR_RETURN(c, "%s: out of memory", function);
    return fmi2OK;
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component component, fmi2FMUstate state, size_t *size) {
    Component *c = (Component *)component;
    if (c == NULL) return fmi2Error;
    SavedState *s = saved_of(c, state, "fmi2SerializedFMUstateSize");
    if (s == NULL || size == NULL) return fmi2Error;
    if (make_blob(c, s, "fmi2SerializedFMUstateSize") != fmi2OK) return fmi2Error;
    *size = s->blob_size;
    return fmi2OK;
}

fmi2Status fmi2SerializeFMUstate(fmi2Component component, fmi2FMUstate state, fmi2Byte serialized[], size_t size) {
    Component *c = (Component *)component;
    if (c == NULL) return fmi2Error;
    SavedState *s = saved_of(c, state, "fmi2SerializeFMUstate");
    if (s == NULL) return fmi2Error;
    if (make_blob(c, s, "fmi2SerializeFMUstate") != fmi2OK) return fmi2Error;
    if (serialized == NULL || size < s->blob_size)
        ERROR_RETURN(c, "fmi2SerializeFMUstate: the buffer holds %zu bytes, the state needs %zu",
                     size, s->blob_size);
    memcpy(serialized, s->blob, s->blob_size);
    return fmi2OK;
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component component, const fmi2Byte serialized[], size_t size,
                                   fmi2FMUstate *state) {
    Component *c = (Component *)component;
    if (c == NULL) return fmi2Error;
    if (serialized == NULL || state == NULL)
        ERROR_RETURN(c, "fmi2DeSerializeFMUstate: NULL argument");
    /* parsed and checked by Python, field by field and against this instance
     * (everything fmi2SetFMUstate checks): (status word, snapshot or None) */
    int gil = python_enter();
    PyObject *bytes = py.BytesFromStringAndSize(serialized, (py_ssize_t)size);
    PyObject *deserialize = py.GetAttrString(c->instance, "deserialize");
    PyObject *result = (bytes && deserialize) ? py.CallFunctionObjArgs(deserialize, bytes, NULL) : NULL;
    if (bytes) py.DecRef(bytes);
    if (deserialize) py.DecRef(deserialize);
    if (result == NULL) {
        char reason[1024];
        python_error_text(reason, sizeof reason);
        python_leave(gil);
        ERROR_RETURN(c, "fmi2DeSerializeFMUstate: %s", reason);
    }
    long word = fmi2Error;
    PyObject *snapshot = NULL;
    if (py.TupleSize(result) == 2) {
        PyObject *w = py.TupleGetItem(result, 0);          /* borrowed */
        word = w ? py.LongAsLong(w) : fmi2Error;
        snapshot = py.TupleGetItem(result, 1);
    }
    if (py.ErrOccurred()) { py.ErrClear(); word = fmi2Error; snapshot = NULL; }
    if (word & BRIDGE_MESSAGES) drain_messages(c);
    if ((word & BRIDGE_STATUS_MASK) > fmi2Warning || snapshot == NULL || snapshot == py.None) {
        py.DecRef(result);
        python_leave(gil);
        return fmi2Error;            /* the reason was logged by the slave */
    }
    py.IncRef(snapshot);
    py.DecRef(result);
    python_leave(gil);
    SavedState *s = (SavedState *)c->callbacks.allocateMemory(1, sizeof(SavedState));
    if (s == NULL) {
        gil = python_enter(); py.DecRef(snapshot); python_leave(gil);
        ERROR_RETURN(c, "fmi2DeSerializeFMUstate: out of memory");
    }
    memset(s, 0, sizeof *s);
    s->magic = STATE_MAGIC;
    s->python_state = snapshot;
    /* a serialized state is always of an initialized instance (the slave refuses
     * any other): it restores to 'step complete', the model able to go on */
    s->state = STATE_STEP_COMPLETE;
    s->terminated = 0;
    s->time = NAN;                   /* taken from the slave after the restore */
    *state = s;
    return fmi2OK;
}
