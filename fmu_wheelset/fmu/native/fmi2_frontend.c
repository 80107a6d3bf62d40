/* Native FMI 2.0 co-simulation front end of the wheelset FMU.
 *
 * This library is binaries/<platform>/<modelIdentifier>.<so|dll|dylib> of the
 * FMU. It owns everything an FMI host talks to: the state machine of the
 * FMI 2.0 standard (section 4.2.4; a call outside its states is fmi2Error with
 * the reason logged), the argument checks, the logger (every message passed
 * as "%s"), the resource URI, and the getters/setters, which read and write
 * the slave's value buffer (one double per value reference, a NumPy array
 * whose data pointer the Python side hands over) without calling Python.
 *
 * The physics is Python (fmu_wheelset/fmu/slave.py, the numba core), imported
 * from resources/<package>/ under this build's own package name
 * (wheelset_fmu_<hash>), with sys.path left alone. The Python runtime is
 * loaded dynamically (python_runtime.c): the host's interpreter when it has
 * one, else the libpython recorded in resources/wheelset_native.cfg at build
 * time. Python is called for strings, initialization and FMU states. fmi2DoStep
 * calls the fast step first when the bridge provides it (fmu_wheelset/fmu/
 * native_bridge.py: a numba cfunc doing the whole accepted step on the arrays
 * of a block of addresses, solver/fast_step.py; no Python, no interpreter
 * lock); any step it does not accept -- it then leaves everything as it was --
 * runs the Python do_step, which recomputes it and reports. Everything
 * OS-specific is in platform_*.c. Three sections are files of their own that
 * this one includes (one translation unit): where the Python is and how it is
 * loaded (fmi2_frontend_python.c), the getters and setters
 * (fmi2_frontend_values.c) and the FMU states (fmi2_frontend_states.c).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "platform.h"
#include "python_runtime.h"

#define TABLE_COLUMNS 4
#define CONFIG_FILE "wheelset_native.cfg"
#define MESSAGE_SIZE 2048

/* bridge status word (fmu_wheelset/fmu/native_bridge.py) */
#define BRIDGE_STATUS_MASK 0xff
#define BRIDGE_MESSAGES 0x100
#define BRIDGE_TERMINAL 0x200

/* variable table columns (native_bridge.variable_table) */
enum { KIND_REAL = 0, KIND_INTEGER = 1, KIND_BOOLEAN = 2, KIND_STRING = 3 };
enum { CAUSALITY_PARAMETER = 0, CAUSALITY_INPUT = 1, CAUSALITY_OUTPUT = 2 };

typedef enum {
    STATE_INSTANTIATED = 1 << 0,
    STATE_INITIALIZATION = 1 << 1,
    STATE_STEP_COMPLETE = 1 << 2,
    STATE_STEP_FAILED = 1 << 3,      /* the model cannot go on (derailment) */
    STATE_TERMINATED = 1 << 4,
    STATE_ERROR = 1 << 5
} fmu_state;

static const char *state_name(fmu_state s) {
    switch (s) {
    case STATE_INSTANTIATED: return "instantiated";
    case STATE_INITIALIZATION: return "initialization mode";
    case STATE_STEP_COMPLETE: return "step complete";
    case STATE_STEP_FAILED: return "step failed (the model cannot go on)";
    case STATE_TERMINATED: return "terminated";
    case STATE_ERROR: return "error";
    }
    return "?";
}

#define ANY_STATE (STATE_INSTANTIATED | STATE_INITIALIZATION | STATE_STEP_COMPLETE | \
                   STATE_STEP_FAILED | STATE_TERMINATED | STATE_ERROR)
#define GET_STATES (STATE_INITIALIZATION | STATE_STEP_COMPLETE | STATE_STEP_FAILED | \
                    STATE_TERMINATED | STATE_ERROR)
#define SET_STATES (STATE_INSTANTIATED | STATE_INITIALIZATION | STATE_STEP_COMPLETE)

/* the fast step (solver/fast_step.py): FAST_STEP_ACCEPTED, or the Python step must run */
typedef int (*fast_step_function)(double t, double h, const long long *block);
#define FAST_STEP_ACCEPTED 1

typedef struct {
    char *instance_name;
    fmi2CallbackFunctions callbacks;
    int logging_on;
    fmu_state state;
    int terminated;
    double time;                     /* last successful communication point */
    PyObject *instance;              /* native_bridge.Instance */
    PyObject *do_step;               /* its bound do_step */
    double *values;                  /* instance.values: one double per value reference */
    const int *table;                /* instance.table: (n, 4) int32 kind, causality, tunable,
                                        direct feedthrough */
    const double *limits;            /* instance.limits: (n, 2) declared min, max */
    unsigned char *host_set;         /* instance.host_set: 1 where the host set a parameter
                                        (a preset leaves those alone) */
    int outputs_stale;               /* a feedthrough input changed since the outputs were made */
    size_t n_variables;
    char **strings;                  /* what the last fmi2GetString returned */
    size_t n_strings;
    fast_step_function fast_step;    /* NULL: every doStep through Python */
    const long long *fast_block;     /* its arrays' addresses (owned by the bridge) */
} Component;

#define STATE_MAGIC 0x57534653u      /* "WSFS" */
typedef struct {
    unsigned magic;
    PyObject *python_state;
    fmu_state state;
    int terminated;
    double time;
    char *blob;                      /* serialised form, made on request */
    size_t blob_size;
} SavedState;


/* ------------------------------------------------------------------ logging */
static void log_message(Component *c, fmi2Status status, const char *category,
                        const char *format, ...) {
    if (c == NULL || c->callbacks.logger == NULL) return;
    if (status <= fmi2OK && !c->logging_on) return;
    char text[MESSAGE_SIZE];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    /* the text goes as an argument, never as the format */
    c->callbacks.logger(c->callbacks.componentEnvironment, c->instance_name, status,
                        category, "%s", text);
}

static const char *category_of(fmi2Status status) {
    switch (status) {
    case fmi2OK: return "logStatusOK";
    case fmi2Warning: return "logStatusWarning";
    case fmi2Discard: return "logStatusDiscard";
    case fmi2Error: return "logStatusError";
    case fmi2Fatal: return "logStatusFatal";
    default: return "logAll";
    }
}

#define ERROR_RETURN(c, ...) do { log_message((c), fmi2Error, "logStatusError", __VA_ARGS__); \
                                  return fmi2Error; } while (0)

static int allowed(Component *c, int states, const char *function) {
    if (c->state & states) return 1;
    log_message(c, fmi2Error, "logStatusError", "%s is not allowed in state '%s' (FMI 2.0 state machine)",
                function, state_name(c->state));
    return 0;
}

/* ------------------------------------------------------- Python helpers */
static void drain_messages(Component *c) {
    PyObject *take = py.GetAttrString(c->instance, "take_messages");
    PyObject *messages = take ? py.CallObject(take, NULL) : NULL;
    if (take) py.DecRef(take);
    if (messages == NULL) { py.ErrClear(); return; }
    py_ssize_t n = py.TupleSize(messages);
    for (py_ssize_t i = 0; i < n; i++) {
        PyObject *m = py.TupleGetItem(messages, i);           /* borrowed */
        long status = py.LongAsLong(py.TupleGetItem(m, 0));
        const char *category = py.UnicodeAsUTF8(py.TupleGetItem(m, 1));
        const char *text = py.UnicodeAsUTF8(py.TupleGetItem(m, 2));
        if (status < fmi2OK || status > fmi2Fatal) status = fmi2Error;
        log_message(c, (fmi2Status)status, category ? category : category_of((fmi2Status)status),
                    "%s", text ? text : "(message not representable)");
    }
    py.ErrClear();
    py.DecRef(messages);
}

/* status word of a bridge call's result (NULL: an exception, logged) */
static long bridge_result(Component *c, PyObject *result, const char *function) {
    if (result == NULL) {
        char reason[MESSAGE_SIZE - 128];
        python_error_text(reason, sizeof reason);
        log_message(c, fmi2Error, "logStatusError", "%s: %s", function, reason);
        return fmi2Error;
    }
    long word = py.LongAsLong(result);
    py.DecRef(result);
    if (word == -1 && py.ErrOccurred()) {
        py.ErrClear();
        log_message(c, fmi2Error, "logStatusError", "%s: the Python side returned no status", function);
        return fmi2Error;
    }
    if (word & BRIDGE_MESSAGES) drain_messages(c);
    return word;
}

static long call_method(Component *c, const char *method, PyObject *a, PyObject *b) {
    PyObject *f = py.GetAttrString(c->instance, method);
    PyObject *result = NULL;
    if (f != NULL) {
        result = py.CallFunctionObjArgs(f, a, b, NULL);
        py.DecRef(f);
    }
    return bridge_result(c, result, method);
}

/* The fast step after a call that built, restored or dropped the model (the
 * bridge's fast_step_address / fast_block_address; 0: none). GIL held. */
static void attach_fast_step(Component *c) {
    c->fast_step = NULL;
    c->fast_block = NULL;
    PyObject *address = py.GetAttrString(c->instance, "fast_step_address");
    PyObject *block = py.GetAttrString(c->instance, "fast_block_address");
    void *f = address ? py.LongAsVoidPtr(address) : NULL;
    void *b = block ? py.LongAsVoidPtr(block) : NULL;
    if (address) py.DecRef(address);
    if (block) py.DecRef(block);
    if (py.ErrOccurred()) {
        py.ErrClear();
        log_message(c, fmi2Warning, "logStatusWarning", "fast doStep unavailable (the bridge "
                    "gave no address): every fmi2DoStep runs the Python step");
        return;
    }
    if (f != NULL && b != NULL) {
        /* a data pointer to a function pointer: what numba's cfunc.address is */
        memcpy(&c->fast_step, &f, sizeof f);
        c->fast_block = (const long long *)b;
    }
}

#include "fmi2_frontend_python.c"   /* resource location, configuration, loading the bridge */

/* ----------------------------------------------------------- FMI functions */
const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component component, fmi2Boolean on, size_t n, const fmi2String categories[]) {
    Component *c = (Component *)component;
    (void)n; (void)categories;
    if (c == NULL) return fmi2Error;
    c->logging_on = on ? 1 : 0;
    return fmi2OK;
}

static void free_strings(Component *c) {
    for (size_t i = 0; i < c->n_strings; i++) c->callbacks.freeMemory(c->strings[i]);
    if (c->strings) c->callbacks.freeMemory(c->strings);
    c->strings = NULL;
    c->n_strings = 0;
}

static void release_component(Component *c) {
    if (c->instance != NULL || c->do_step != NULL) {
        int gil = python_enter();
        if (c->do_step) py.DecRef(c->do_step);
        if (c->instance) py.DecRef(c->instance);
        python_leave(gil);
    }
    free_strings(c);
    if (c->instance_name) c->callbacks.freeMemory(c->instance_name);
    fmi2CallbackFreeMemory release = c->callbacks.freeMemory;
    release(c);
}

static int attach_buffers(Component *c, char *err, size_t err_size) {
    PyObject *values = py.GetAttrString(c->instance, "values_address");
    PyObject *table = py.GetAttrString(c->instance, "table_address");
    PyObject *count = py.GetAttrString(c->instance, "n_variables");
    PyObject *limits = py.GetAttrString(c->instance, "limits_address");
    PyObject *host_set = py.GetAttrString(c->instance, "host_set_address");
    int ok = values && table && count && limits && host_set;
    if (ok) {
        c->values = (double *)py.LongAsVoidPtr(values);
        c->table = (const int *)py.LongAsVoidPtr(table);
        c->limits = (const double *)py.LongAsVoidPtr(limits);
        c->host_set = (unsigned char *)py.LongAsVoidPtr(host_set);
        c->n_variables = (size_t)py.LongAsLong(count);
        ok = c->values != NULL && c->table != NULL && c->limits != NULL && c->host_set != NULL &&
             py.ErrOccurred() == NULL;
    }
    if (values) py.DecRef(values);
    if (table) py.DecRef(table);
    if (limits) py.DecRef(limits);
    if (host_set) py.DecRef(host_set);
    if (count) py.DecRef(count);
    if (!ok) {
        char reason[512];
        python_error_text(reason, sizeof reason);
        snprintf(err, err_size, "the Python instance has no value buffer: %s", reason);
        return -1;
    }
    c->do_step = py.GetAttrString(c->instance, "do_step");
    if (c->do_step == NULL) {
        char reason[512];
        python_error_text(reason, sizeof reason);
        snprintf(err, err_size, "the Python instance has no do_step: %s", reason);
        return -1;
    }
    return 0;
}

/* Python's cyclic garbage collector paused while an instance is made (the
 * first one imports numpy, scipy, numba and the solver: many objects made and
 * none freed, so its 300 passes find nothing; measured: fmi2Instantiate's CPU
 * time 0.78 s instead of 0.89 s, median of 6) and initialized. Returns the gc
 * module when it paused it (NULL otherwise), for gc_resume, which switches it
 * back on. GIL held. */
static PyObject *gc_pause(void) {
    PyObject *gc = py.ImportModule("gc");
    PyObject *enabled = gc ? py.GetAttrString(gc, "isenabled") : NULL;
    PyObject *state = enabled ? py.CallObject(enabled, NULL) : NULL;
    int was_on = state != NULL && py.LongAsLong(state) == 1;
    PyObject *disable = was_on ? py.GetAttrString(gc, "disable") : NULL;
    PyObject *done = disable ? py.CallObject(disable, NULL) : NULL;
    if (enabled) py.DecRef(enabled);
    if (state) py.DecRef(state);
    if (disable) py.DecRef(disable);
    if (done) py.DecRef(done);
    py.ErrClear();
    if (done == NULL && gc != NULL) { py.DecRef(gc); gc = NULL; }
    return gc;
}

static void gc_resume(PyObject *gc) {
    if (gc == NULL) return;
    PyObject *enable = py.GetAttrString(gc, "enable");
    PyObject *done = enable ? py.CallObject(enable, NULL) : NULL;
    if (enable) py.DecRef(enable);
    if (done) py.DecRef(done);
    py.ErrClear();
    py.DecRef(gc);
}

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String fmuResourceLocation, const fmi2CallbackFunctions *functions,
                              fmi2Boolean visible, fmi2Boolean loggingOn) {
    (void)visible;
    if (functions == NULL || functions->allocateMemory == NULL || functions->freeMemory == NULL)
        return NULL;
    /* a temporary component to log through until the real one exists */
    Component temp;
    memset(&temp, 0, sizeof temp);
    temp.callbacks = *functions;
    temp.instance_name = (char *)(instanceName ? instanceName : "?");
    temp.logging_on = 1;
    char err[MESSAGE_SIZE - 64];

    if (instanceName == NULL || instanceName[0] == '\0') {
        log_message(&temp, fmi2Error, "logStatusError", "fmi2Instantiate: an instance name is required");
        return NULL;
    }
    if (fmuType != fmi2CoSimulation) {
        log_message(&temp, fmi2Error, "logStatusError",
                    "fmi2Instantiate: this FMU supports co-simulation only (fmuType %d)", (int)fmuType);
        return NULL;
    }
    char resources[4096];
    Config cfg;
    if (resource_directory(fmuResourceLocation, resources, sizeof resources, err, sizeof err) != 0 ||
        read_config(resources, &cfg, err, sizeof err) != 0) {
        log_message(&temp, fmi2Error, "logStatusError", "fmi2Instantiate: %s", err);
        return NULL;
    }
    if (fmuGUID == NULL || strcmp(fmuGUID, cfg.guid) != 0) {
        log_message(&temp, fmi2Error, "logStatusError",
                    "fmi2Instantiate: GUID %s does not match this FMU's %s (a modelDescription.xml "
                    "of another build?)", fmuGUID ? fmuGUID : "(none)", cfg.guid);
        return NULL;
    }
    int joined = 0;
    if (python_runtime_start(&cfg.python, &joined, err, sizeof err) != 0) {
        log_message(&temp, fmi2Error, "logStatusError", "fmi2Instantiate: %s", err);
        return NULL;
    }

    Component *c = (Component *)functions->allocateMemory(1, sizeof(Component));
    if (c == NULL) {
        log_message(&temp, fmi2Error, "logStatusError", "fmi2Instantiate: out of memory");
        return NULL;
    }
    memset(c, 0, sizeof *c);
    c->callbacks = *functions;
    c->logging_on = loggingOn ? 1 : 0;
    c->state = STATE_INSTANTIATED;
    size_t name_len = strlen(instanceName);
    c->instance_name = (char *)functions->allocateMemory(name_len + 1, 1);
    if (c->instance_name == NULL) { functions->freeMemory(c); return NULL; }
    memcpy(c->instance_name, instanceName, name_len + 1);

    int gil = python_enter();
    PyObject *gc = gc_pause();
    PyObject *bridge = import_bridge(cfg.package, resources, &cfg.python, joined, err, sizeof err);
    if (bridge != NULL) {
        PyObject *create = py.GetAttrString(bridge, "create");
        PyObject *name = py.UnicodeFromString(instanceName);
        PyObject *where = py.UnicodeDecodeFSDefault(resources);
        if (create && name && where)
            c->instance = py.CallFunctionObjArgs(create, name, where, NULL);
        if (create) py.DecRef(create);
        if (name) py.DecRef(name);
        if (where) py.DecRef(where);
        py.DecRef(bridge);
        if (c->instance == NULL) {
            char reason[MESSAGE_SIZE - 256];
            python_error_text(reason, sizeof reason);
            snprintf(err, sizeof err, "cannot create the slave: %s", reason);
        } else if (attach_buffers(c, err, sizeof err) != 0) {
            py.DecRef(c->instance);
            c->instance = NULL;
            if (c->do_step) { py.DecRef(c->do_step); c->do_step = NULL; }
        }
    }
    gc_resume(gc);
    python_leave(gil);
    if (c->instance == NULL) {
        log_message(&temp, fmi2Error, "logStatusError", "fmi2Instantiate: %s", err);
        release_component(c);
        return NULL;
    }
    log_message(c, fmi2OK, "logAll", "instantiated (%s Python %s, package %s)",
                joined ? "joined the host's" : "embedded", cfg.python.python_version, cfg.package);
    return c;
}

void fmi2FreeInstance(fmi2Component component) {
    Component *c = (Component *)component;
    if (c == NULL) return;
    release_component(c);
}

fmi2Status fmi2SetupExperiment(fmi2Component component, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                               fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime) {
    Component *c = (Component *)component;
    (void)toleranceDefined; (void)tolerance;
    if (c == NULL) return fmi2Error;
    if (!allowed(c, STATE_INSTANTIATED, "fmi2SetupExperiment")) return fmi2Error;
    /* the slave checks the times (finite start, stop >= start): a refused setup
     * is fmi2Error and fmi2ExitInitializationMode fails until a valid one */
    int gil = python_enter();
    PyObject *t = py.FloatFromDouble(startTime);
    PyObject *stop = stopTimeDefined ? py.FloatFromDouble(stopTime) : NULL;
    long word = (t && (stop || !stopTimeDefined)) ? call_method(c, "setup_experiment", t, stop)
                                                  : fmi2Error;
    if (t) py.DecRef(t);
    if (stop) py.DecRef(stop);
    python_leave(gil);
    if ((word & BRIDGE_STATUS_MASK) == fmi2OK) c->time = startTime;
    return (fmi2Status)(word & BRIDGE_STATUS_MASK);
}

fmi2Status fmi2EnterInitializationMode(fmi2Component component) {
    Component *c = (Component *)component;
    if (c == NULL) return fmi2Error;
    if (!allowed(c, STATE_INSTANTIATED, "fmi2EnterInitializationMode")) return fmi2Error;
    c->state = STATE_INITIALIZATION;
    return fmi2OK;
}

fmi2Status fmi2ExitInitializationMode(fmi2Component component) {
    Component *c = (Component *)component;
    if (c == NULL) return fmi2Error;
    if (!allowed(c, STATE_INITIALIZATION, "fmi2ExitInitializationMode")) return fmi2Error;
    int gil = python_enter();
    PyObject *gc = gc_pause();       /* numba loads the model's compiled kernels here */
    long word = call_method(c, "exit_initialization_mode", NULL, NULL);
    attach_fast_step(c);
    gc_resume(gc);
    python_leave(gil);
    fmi2Status status = (fmi2Status)(word & BRIDGE_STATUS_MASK);
    if (status > fmi2Warning) {
        c->state = STATE_ERROR;
        return fmi2Error;
    }
    c->state = STATE_STEP_COMPLETE;
    c->terminated = 0;
    return status;
}

fmi2Status fmi2Terminate(fmi2Component component) {
    Component *c = (Component *)component;
    if (c == NULL) return fmi2Error;
    if (!allowed(c, STATE_STEP_COMPLETE | STATE_STEP_FAILED, "fmi2Terminate")) return fmi2Error;
    c->state = STATE_TERMINATED;
    return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component component) {
    Component *c = (Component *)component;
    if (c == NULL) return fmi2Error;
    int gil = python_enter();
    long word = call_method(c, "reset", NULL, NULL);
    attach_fast_step(c);
    python_leave(gil);
    fmi2Status status = (fmi2Status)(word & BRIDGE_STATUS_MASK);
    if (status > fmi2Warning) { c->state = STATE_ERROR; return fmi2Error; }
    c->state = STATE_INSTANTIATED;
    c->terminated = 0;
    c->time = 0.0;
    return fmi2OK;
}

#include "fmi2_frontend_values.c"   /* get / set */

/* ----------------------------------------------------------- stepping */
fmi2Status fmi2DoStep(fmi2Component component, fmi2Real currentCommunicationPoint,
                      fmi2Real communicationStepSize, fmi2Boolean noSetFMUStatePriorToCurrentPoint) {
    Component *c = (Component *)component;
    (void)noSetFMUStatePriorToCurrentPoint;
    if (c == NULL) return fmi2Error;
    if (c->state == STATE_STEP_FAILED)
        ERROR_RETURN(c, "fmi2DoStep: the model cannot go on (%s); restore a state with "
                     "fmi2SetFMUstate or fmi2Reset", "see the previous messages");
    if (!allowed(c, STATE_STEP_COMPLETE, "fmi2DoStep")) return fmi2Error;
    if (!(communicationStepSize > 0.0 && isfinite(communicationStepSize)))
        ERROR_RETURN(c, "fmi2DoStep: communication step size %g must be positive and finite",
                     communicationStepSize);
    if (!isfinite(currentCommunicationPoint))
        ERROR_RETURN(c, "fmi2DoStep: communication point %g is not finite", currentCommunicationPoint);
    if (c->fast_step != NULL) {
        int code = c->fast_step(currentCommunicationPoint, communicationStepSize, c->fast_block);
        if (code == FAST_STEP_ACCEPTED) {
            c->outputs_stale = 0;
            c->time = currentCommunicationPoint + communicationStepSize;
            return fmi2OK;
        }
        /* not a clean step (state as before): the Python step recomputes and reports */
        log_message(c, fmi2OK, "logAll", "fmi2DoStep at t = %.17g s: the fast step handed the "
                    "step to Python (code %d, solver/fast_step.py FALLBACK_*)",
                    currentCommunicationPoint, code);
    }
    int gil = python_enter();
    PyObject *t = py.FloatFromDouble(currentCommunicationPoint);
    PyObject *h = py.FloatFromDouble(communicationStepSize);
    PyObject *result = (t && h) ? py.CallFunctionObjArgs(c->do_step, t, h, NULL) : NULL;
    if (t) py.DecRef(t);
    if (h) py.DecRef(h);
    long word = bridge_result(c, result, "fmi2DoStep");
    python_leave(gil);
    c->outputs_stale = 0;
    fmi2Status status = (fmi2Status)(word & BRIDGE_STATUS_MASK);
    if (status <= fmi2Warning) {
        c->time = currentCommunicationPoint + communicationStepSize;
    } else if (word & BRIDGE_TERMINAL) {
        c->terminated = 1;
        c->state = STATE_STEP_FAILED;
    }
    return status;
}

fmi2Status fmi2CancelStep(fmi2Component component) {
    Component *c = (Component *)component;
    if (c == NULL) return fmi2Error;
    ERROR_RETURN(c, "fmi2CancelStep: doStep runs synchronously (canRunAsynchronuously=false)");
}

fmi2Status fmi2GetStatus(fmi2Component component, const fmi2StatusKind s, fmi2Status *value) {
    Component *c = (Component *)component;
    (void)s; (void)value;
    if (c == NULL) return fmi2Error;
    ERROR_RETURN(c, "fmi2GetStatus: doStep runs synchronously; no pending status");
}

fmi2Status fmi2GetRealStatus(fmi2Component component, const fmi2StatusKind s, fmi2Real *value) {
    Component *c = (Component *)component;
    if (c == NULL) return fmi2Error;
    if (s == fmi2LastSuccessfulTime && value != NULL) { *value = c->time; return fmi2OK; }
    ERROR_RETURN(c, "fmi2GetRealStatus: only fmi2LastSuccessfulTime is available");
}

fmi2Status fmi2GetIntegerStatus(fmi2Component component, const fmi2StatusKind s, fmi2Integer *value) {
    Component *c = (Component *)component;
    (void)s; (void)value;
    if (c == NULL) return fmi2Error;
    ERROR_RETURN(c, "fmi2GetIntegerStatus: no integer status is defined");
}

fmi2Status fmi2GetBooleanStatus(fmi2Component component, const fmi2StatusKind s, fmi2Boolean *value) {
    Component *c = (Component *)component;
    if (c == NULL) return fmi2Error;
    if (s == fmi2Terminated && value != NULL) {
        *value = c->terminated ? fmi2True : fmi2False;
        return fmi2OK;
    }
    ERROR_RETURN(c, "fmi2GetBooleanStatus: only fmi2Terminated is available");
}

fmi2Status fmi2GetStringStatus(fmi2Component component, const fmi2StatusKind s, fmi2String *value) {
    Component *c = (Component *)component;
    (void)s; (void)value;
    if (c == NULL) return fmi2Error;
    ERROR_RETURN(c, "fmi2GetStringStatus: no string status (doStep runs synchronously)");
}

fmi2Status fmi2SetRealInputDerivatives(fmi2Component component, const fmi2ValueReference vr[], size_t n,
                                       const fmi2Integer order[], const fmi2Real value[]) {
    Component *c = (Component *)component;
    (void)vr; (void)n; (void)order; (void)value;
    if (c == NULL) return fmi2Error;
    ERROR_RETURN(c, "fmi2SetRealInputDerivatives: not supported (canInterpolateInputs=false)");
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component component, const fmi2ValueReference vr[], size_t n,
                                        const fmi2Integer order[], fmi2Real value[]) {
    Component *c = (Component *)component;
    (void)vr; (void)n; (void)order; (void)value;
    if (c == NULL) return fmi2Error;
    ERROR_RETURN(c, "fmi2GetRealOutputDerivatives: not supported (maxOutputDerivativeOrder=0)");
}

/* value reference vr is a Real of the causality wanted (the table's columns) */
static int real_of_causality(Component *c, fmi2ValueReference vr, int causality) {
    if ((size_t)vr >= c->n_variables) return 0;
    const int *row = c->table + TABLE_COLUMNS * (size_t)vr;
    return row[0] == KIND_REAL && row[1] == causality;
}

/* A tuple of n Python ints (vr) or floats (values); NULL on failure. GIL held. */
static PyObject *tuple_of(const fmi2ValueReference *vr, const fmi2Real *values, size_t n) {
    PyObject *t = py.TupleNew((py_ssize_t)n);
    if (t == NULL) return NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *item = vr ? py.LongFromUnsignedLong((unsigned long)vr[i]) : py.FloatFromDouble(values[i]);
        if (item == NULL || py.TupleSetItem(t, (py_ssize_t)i, item) != 0) { py.DecRef(t); return NULL; }
    }
    return t;
}

/* FMI 2.0 section 2.1.9 (co-simulation: the unknowns z are outputs, the knowns u
 * inputs; allowed where fmi2GetReal is, table of section 4.2.4). The derivative of
 * the directly fed-through outputs at the current state, by the slave
 * (slave.directional_derivative: central differences of the feedthrough outputs,
 * the state and the values put back bit for bit). */
fmi2Status fmi2GetDirectionalDerivative(fmi2Component component, const fmi2ValueReference z[], size_t nz,
                                        const fmi2ValueReference u[], size_t nu, const fmi2Real dv[],
                                        fmi2Real dz[]) {
    /* z = vUnknown_ref (nUnknown), u = vKnown_ref (nKnown), dv = dvKnown, dz = dvUnknown */
    static const char *name = "fmi2GetDirectionalDerivative";
    Component *c = (Component *)component;
    if (c == NULL) return fmi2Error;
    if (!allowed(c, GET_STATES, name)) return fmi2Error;
    if ((nu > 0 && (u == NULL || dv == NULL)) || (nz > 0 && (z == NULL || dz == NULL)))
        ERROR_RETURN(c, "%s: NULL array argument", name);
    for (size_t i = 0; i < nu; i++)
        if (!real_of_causality(c, u[i], CAUSALITY_INPUT))
            ERROR_RETURN(c, "%s: vKnown_ref[%zu] = %u is not a Real input", name, i,
                         (unsigned)u[i]);
    for (size_t i = 0; i < nz; i++)
        if (!real_of_causality(c, z[i], CAUSALITY_OUTPUT))
            ERROR_RETURN(c, "%s: vUnknown_ref[%zu] = %u is not a Real output", name, i, (unsigned)z[i]);
    for (size_t i = 0; i < nu; i++)
        if (!isfinite(dv[i])) ERROR_RETURN(c, "%s: dvKnown[%zu] is not finite", name, i);
    if (nz == 0) return fmi2OK;
    int gil = python_enter();
    PyObject *zt = tuple_of(z, NULL, nz), *ut = tuple_of(u, NULL, nu), *dt = tuple_of(NULL, dv, nu);
    PyObject *f = py.GetAttrString(c->instance, "directional_derivative");
    PyObject *result = (zt && ut && dt && f) ? py.CallFunctionObjArgs(f, zt, ut, dt, NULL) : NULL;
    if (zt) py.DecRef(zt);
    if (ut) py.DecRef(ut);
    if (dt) py.DecRef(dt);
    if (f) py.DecRef(f);
    if (result == NULL) {
        char reason[MESSAGE_SIZE - 128];
        python_error_text(reason, sizeof reason);
        python_leave(gil);
        ERROR_RETURN(c, "%s: %s", name, reason);
    }
    /* (status word, tuple of nz floats) */
    long word = fmi2Error;
    PyObject *values = NULL;
    if (py.TupleSize(result) == 2) {
        PyObject *w = py.TupleGetItem(result, 0);          /* borrowed */
        word = w ? py.LongAsLong(w) : fmi2Error;
        values = py.TupleGetItem(result, 1);
    }
    if (py.ErrOccurred()) { py.ErrClear(); word = fmi2Error; values = NULL; }
    if (word & BRIDGE_MESSAGES) drain_messages(c);
    fmi2Status status = (fmi2Status)(word & BRIDGE_STATUS_MASK);
    int ok = status <= fmi2Warning && values != NULL && py.TupleSize(values) == (py_ssize_t)nz;
    for (size_t i = 0; ok && i < nz; i++) {
        double x = py.FloatAsDouble(py.TupleGetItem(values, (py_ssize_t)i));
        if (py.ErrOccurred() || !isfinite(x)) { py.ErrClear(); ok = 0; break; }
        dz[i] = x;
    }
    py.DecRef(result);
    python_leave(gil);
    if (!ok) {
        if (status <= fmi2Warning)
            ERROR_RETURN(c, "%s: the Python side returned no derivative", name);
        return fmi2Error;     /* the reason was logged by the slave */
    }
    return status;
}

#include "fmi2_frontend_states.c"   /* FMU states */
