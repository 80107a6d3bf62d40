/* fmi2Get* and fmi2Set*: the value references checked, the values read from
 * and written to the slave's value buffer (strings through Python), the
 * declared ranges of inputs and parameters. Part of fmi2_frontend.c, which
 * includes it: one translation unit, with its static functions and types. */
/* ----------------------------------------------------------- get / set */
/* "123 (wheelset.mass)": a value reference with its name, for messages (error
 * paths only: asks Python) */
static const char *describe_reference(Component *c, fmi2ValueReference vr, char *buf, size_t size) {
    snprintf(buf, size, "%u", vr);
    if (c->instance == NULL || vr >= c->n_variables) return buf;
    int gil = python_enter();
    PyObject *f = py.GetAttrString(c->instance, "variable_name");
    PyObject *ref = py.LongFromUnsignedLong(vr);
    PyObject *name = (f && ref) ? py.CallFunctionObjArgs(f, ref, NULL) : NULL;
    const char *text = name ? py.UnicodeAsUTF8(name) : NULL;
    if (text) snprintf(buf, size, "%u (%s)", vr, text);
    else py.ErrClear();
    if (name) py.DecRef(name);
    if (ref) py.DecRef(ref);
    if (f) py.DecRef(f);
    python_leave(gil);
    return buf;
}

static int check_references(Component *c, const char *function, const fmi2ValueReference vr[],
                            size_t n, int kind, int setting) {
    static const char *kind_names[] = {"Real", "Integer", "Boolean", "String"};
    if (n > 0 && vr == NULL) {
        log_message(c, fmi2Error, "logStatusError", "%s: NULL value reference array", function);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (vr[i] >= c->n_variables) {
            log_message(c, fmi2Error, "logStatusError", "%s: unknown value reference %u", function, vr[i]);
            return 0;
        }
        const int *row = c->table + TABLE_COLUMNS * (size_t)vr[i];
        char who[256];
        if (row[0] != kind) {
            log_message(c, fmi2Error, "logStatusError", "%s: value reference %s is a %s variable, not %s",
                        function, describe_reference(c, vr[i], who, sizeof who), kind_names[row[0] & 3],
                        kind_names[kind]);
            return 0;
        }
        if (!setting) continue;
        if (row[1] == CAUSALITY_OUTPUT) {
            log_message(c, fmi2Error, "logStatusError", "%s: value reference %s is an output "
                        "(calculated by the FMU); it cannot be set", function,
                        describe_reference(c, vr[i], who, sizeof who));
            return 0;
        }
        if (row[1] == CAUSALITY_PARAMETER && c->state == STATE_STEP_COMPLETE && !row[2]) {
            log_message(c, fmi2Error, "logStatusError", "%s: value reference %s is a fixed parameter; "
                        "it cannot be changed after initialization", function,
                        describe_reference(c, vr[i], who, sizeof who));
            return 0;
        }
    }
    return 1;
}

/* Outputs with direct feedthrough after the host changed an input they depend
 * on (since the last doStep): recomputed once, by Python, before they are read. */
static void refresh_outputs(Component *c, const fmi2ValueReference vr[], size_t n) {
    if (!c->outputs_stale) return;
    for (size_t i = 0; i < n; i++) {
        const int *row = c->table + TABLE_COLUMNS * (size_t)vr[i];
        if (row[1] == CAUSALITY_OUTPUT && row[3]) {
            int gil = python_enter();
            call_method(c, "update_outputs", NULL, NULL);
            python_leave(gil);
            c->outputs_stale = 0;
            return;
        }
    }
}

/* The parameters among vr were set by the host: a preset chosen later leaves them. */
static void note_host_set(Component *c, const fmi2ValueReference vr[], size_t n) {
    for (size_t i = 0; i < n; i++)
        if (c->table[TABLE_COLUMNS * (size_t)vr[i] + 1] == CAUSALITY_PARAMETER) c->host_set[vr[i]] = 1;
}

static void note_inputs(Component *c, const fmi2ValueReference vr[], size_t n, const double *new_values) {
    if (c->state != STATE_STEP_COMPLETE) return;
    for (size_t i = 0; i < n; i++) {
        const int *row = c->table + TABLE_COLUMNS * (size_t)vr[i];
        if (row[1] == CAUSALITY_INPUT && row[3] && !(c->values[vr[i]] == new_values[i])) {
            c->outputs_stale = 1;
            return;
        }
    }
}

/* Declared ranges, checked on every set (docs/SECURITY.md): a parameter must lie in
 * [min, max] (NaN refused too); an input that is finite must lie in it (a
 * non-finite input is kept silently: the next doStep discards it, naming it).
 * The values are written anyway (docs/limits_and_failures.md: a bad input makes
 * the next fmi2DoStep discard, a bad parameter makes fmi2ExitInitializationMode
 * fail, so a host that ignores the fmi2Error cannot go on with an old value);
 * each value out of range is logged with its name, value and range. */
static int outside_declared_range(Component *c, fmi2ValueReference vr, double value) {
    const int *row = c->table + TABLE_COLUMNS * (size_t)vr;
    double lo = c->limits[2 * (size_t)vr], hi = c->limits[2 * (size_t)vr + 1];
    if (row[1] == CAUSALITY_PARAMETER) return !(value >= lo && value <= hi);
    if (row[1] == CAUSALITY_INPUT) return isfinite(value) && (value < lo || value > hi);
    return 0;
}

static fmi2Status check_ranges(Component *c, const char *function, const fmi2ValueReference vr[],
                               size_t n) {
    fmi2Status status = fmi2OK;
    for (size_t i = 0; i < n; i++) {
        double value = c->values[vr[i]];
        if (!outside_declared_range(c, vr[i], value)) continue;
        status = fmi2Error;
        int gil = python_enter();
        PyObject *f = py.GetAttrString(c->instance, "range_refusal");
        PyObject *ref = py.LongFromUnsignedLong(vr[i]);
        PyObject *x = py.FloatFromDouble(value);
        PyObject *text = (f && ref && x) ? py.CallFunctionObjArgs(f, ref, x, NULL) : NULL;
        const char *message = text ? py.UnicodeAsUTF8(text) : NULL;
        if (message) {
            log_message(c, fmi2Error, "logStatusError", "%s", message);
        } else {
            py.ErrClear();
            log_message(c, fmi2Error, "logStatusError", "%s: value reference %u = %g is outside "
                        "its declared range [%g, %g]", function, vr[i], value,
                        c->limits[2 * (size_t)vr[i]], c->limits[2 * (size_t)vr[i] + 1]);
        }
        if (text) py.DecRef(text);
        if (x) py.DecRef(x);
        if (ref) py.DecRef(ref);
        if (f) py.DecRef(f);
        python_leave(gil);
    }
    return status;
}

fmi2Status fmi2GetReal(fmi2Component component, const fmi2ValueReference vr[], size_t n, fmi2Real value[]) {
    Component *c = (Component *)component;
    if (c == NULL) return fmi2Error;
    if (!allowed(c, GET_STATES, "fmi2GetReal")) return fmi2Error;
    if (!check_references(c, "fmi2GetReal", vr, n, KIND_REAL, 0)) return fmi2Error;
    if (n > 0 && value == NULL) ERROR_RETURN(c, "fmi2GetReal: NULL value array");
    refresh_outputs(c, vr, n);
    for (size_t i = 0; i < n; i++) value[i] = c->values[vr[i]];
    return fmi2OK;
}

fmi2Status fmi2GetInteger(fmi2Component component, const fmi2ValueReference vr[], size_t n, fmi2Integer value[]) {
    Component *c = (Component *)component;
    if (c == NULL) return fmi2Error;
    if (!allowed(c, GET_STATES, "fmi2GetInteger")) return fmi2Error;
    if (!check_references(c, "fmi2GetInteger", vr, n, KIND_INTEGER, 0)) return fmi2Error;
    if (n > 0 && value == NULL) ERROR_RETURN(c, "fmi2GetInteger: NULL value array");
    refresh_outputs(c, vr, n);
    for (size_t i = 0; i < n; i++) value[i] = (fmi2Integer)c->values[vr[i]];
    return fmi2OK;
}

fmi2Status fmi2GetBoolean(fmi2Component component, const fmi2ValueReference vr[], size_t n, fmi2Boolean value[]) {
    Component *c = (Component *)component;
    if (c == NULL) return fmi2Error;
    if (!allowed(c, GET_STATES, "fmi2GetBoolean")) return fmi2Error;
    if (!check_references(c, "fmi2GetBoolean", vr, n, KIND_BOOLEAN, 0)) return fmi2Error;
    if (n > 0 && value == NULL) ERROR_RETURN(c, "fmi2GetBoolean: NULL value array");
    refresh_outputs(c, vr, n);
    for (size_t i = 0; i < n; i++) value[i] = c->values[vr[i]] != 0.0 ? fmi2True : fmi2False;
    return fmi2OK;
}

fmi2Status fmi2GetString(fmi2Component component, const fmi2ValueReference vr[], size_t n, fmi2String value[]) {
    Component *c = (Component *)component;
    if (c == NULL) return fmi2Error;
    if (!allowed(c, GET_STATES, "fmi2GetString")) return fmi2Error;
    if (!check_references(c, "fmi2GetString", vr, n, KIND_STRING, 0)) return fmi2Error;
    if (n > 0 && value == NULL) ERROR_RETURN(c, "fmi2GetString: NULL value array");
    free_strings(c);
    if (n == 0) return fmi2OK;
    c->strings = (char **)c->callbacks.allocateMemory(n, sizeof(char *));
    if (c->strings == NULL) ERROR_RETURN(c, "fmi2GetString: out of memory");
    fmi2Status status = fmi2OK;
    int gil = python_enter();
    PyObject *get = py.GetAttrString(c->instance, "get_string");
    for (size_t i = 0; i < n && status == fmi2OK; i++) {
        PyObject *ref = py.LongFromUnsignedLong(vr[i]);
        PyObject *text = (get && ref) ? py.CallFunctionObjArgs(get, ref, NULL) : NULL;
        if (ref) py.DecRef(ref);
        const char *utf8 = text ? py.UnicodeAsUTF8(text) : NULL;
        if (utf8 == NULL) {
            char reason[1024];
            python_error_text(reason, sizeof reason);
            log_message(c, fmi2Error, "logStatusError", "fmi2GetString: %s", reason);
            status = fmi2Error;
        } else {
            size_t len = strlen(utf8);
            char *copy = (char *)c->callbacks.allocateMemory(len + 1, 1);
            if (copy) {
                memcpy(copy, utf8, len + 1);
                c->strings[c->n_strings++] = copy;
                value[i] = copy;
            } else {
                status = fmi2Error;
            }
        }
        if (text) py.DecRef(text);
    }
    if (get) py.DecRef(get);
    python_leave(gil);
    return status;
}

fmi2Status fmi2SetReal(fmi2Component component, const fmi2ValueReference vr[], size_t n, const fmi2Real value[]) {
    Component *c = (Component *)component;
    if (c == NULL) return fmi2Error;
    if (!allowed(c, SET_STATES, "fmi2SetReal")) return fmi2Error;
    if (!check_references(c, "fmi2SetReal", vr, n, KIND_REAL, 1)) return fmi2Error;
    if (n > 0 && value == NULL) ERROR_RETURN(c, "fmi2SetReal: NULL value array");
    /* a non-finite input is kept: the next doStep reports it (fmi2Discard) */
    note_inputs(c, vr, n, value);
    note_host_set(c, vr, n);
    for (size_t i = 0; i < n; i++) c->values[vr[i]] = value[i];
    return check_ranges(c, "fmi2SetReal", vr, n);
}

fmi2Status fmi2SetInteger(fmi2Component component, const fmi2ValueReference vr[], size_t n, const fmi2Integer value[]) {
    Component *c = (Component *)component;
    if (c == NULL) return fmi2Error;
    if (!allowed(c, SET_STATES, "fmi2SetInteger")) return fmi2Error;
    if (!check_references(c, "fmi2SetInteger", vr, n, KIND_INTEGER, 1)) return fmi2Error;
    if (n > 0 && value == NULL) ERROR_RETURN(c, "fmi2SetInteger: NULL value array");
    note_host_set(c, vr, n);
    for (size_t i = 0; i < n; i++) c->values[vr[i]] = (double)value[i];
    return check_ranges(c, "fmi2SetInteger", vr, n);
}

fmi2Status fmi2SetBoolean(fmi2Component component, const fmi2ValueReference vr[], size_t n, const fmi2Boolean value[]) {
    Component *c = (Component *)component;
    if (c == NULL) return fmi2Error;
    if (!allowed(c, SET_STATES, "fmi2SetBoolean")) return fmi2Error;
    if (!check_references(c, "fmi2SetBoolean", vr, n, KIND_BOOLEAN, 1)) return fmi2Error;
    if (n > 0 && value == NULL) ERROR_RETURN(c, "fmi2SetBoolean: NULL value array");
    note_host_set(c, vr, n);
    for (size_t i = 0; i < n; i++) c->values[vr[i]] = value[i] ? 1.0 : 0.0;
    return fmi2OK;
}

fmi2Status fmi2SetString(fmi2Component component, const fmi2ValueReference vr[], size_t n, const fmi2String value[]) {
    Component *c = (Component *)component;
    if (c == NULL) return fmi2Error;
    if (!allowed(c, SET_STATES, "fmi2SetString")) return fmi2Error;
    if (!check_references(c, "fmi2SetString", vr, n, KIND_STRING, 1)) return fmi2Error;
    if (n > 0 && value == NULL) ERROR_RETURN(c, "fmi2SetString: NULL value array");
    for (size_t i = 0; i < n; i++)
        if (value[i] == NULL) ERROR_RETURN(c, "fmi2SetString: NULL string for value reference %u", vr[i]);
    long word = fmi2OK;
    int gil = python_enter();
    for (size_t i = 0; i < n && (word & BRIDGE_STATUS_MASK) <= fmi2Warning; i++) {
        PyObject *ref = py.LongFromUnsignedLong(vr[i]);
        PyObject *text = py.UnicodeFromString(value[i]);
        if (ref && text) {
            word = call_method(c, "set_string", ref, text);
        } else {
            char reason[512];
            python_error_text(reason, sizeof reason);
            log_message(c, fmi2Error, "logStatusError", "fmi2SetString: value reference %u: %s", vr[i], reason);
            word = fmi2Error;
        }
        if (ref) py.DecRef(ref);
        if (text) py.DecRef(text);
    }
    python_leave(gil);
    return (fmi2Status)(word & BRIDGE_STATUS_MASK);
}
