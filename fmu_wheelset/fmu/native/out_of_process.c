/* The exported FMI 2.0 functions: each instance runs either in-process
 * (frontend_inproc.c, the default) or in a worker process
 * (WHEELSET_FMU_OUT_OF_PROCESS=1; protocol in out_of_process.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "out_of_process.h"
#include "platform.h"

#define IN(name) wheelset_inproc_##name
#define DECLARE(name) name##TYPE wheelset_inproc_##name;
DECLARE(fmi2SetDebugLogging) DECLARE(fmi2Instantiate) DECLARE(fmi2FreeInstance)
DECLARE(fmi2SetupExperiment) DECLARE(fmi2EnterInitializationMode) DECLARE(fmi2ExitInitializationMode)
DECLARE(fmi2Terminate) DECLARE(fmi2Reset) DECLARE(fmi2GetReal) DECLARE(fmi2GetInteger)
DECLARE(fmi2GetBoolean) DECLARE(fmi2GetString) DECLARE(fmi2SetReal) DECLARE(fmi2SetInteger)
DECLARE(fmi2SetBoolean) DECLARE(fmi2SetString) DECLARE(fmi2GetFMUstate) DECLARE(fmi2SetFMUstate)
DECLARE(fmi2FreeFMUstate) DECLARE(fmi2SerializedFMUstateSize) DECLARE(fmi2SerializeFMUstate)
DECLARE(fmi2DeSerializeFMUstate) DECLARE(fmi2GetDirectionalDerivative)
DECLARE(fmi2SetRealInputDerivatives) DECLARE(fmi2GetRealOutputDerivatives) DECLARE(fmi2DoStep)
DECLARE(fmi2CancelStep) DECLARE(fmi2GetStatus) DECLARE(fmi2GetRealStatus) DECLARE(fmi2GetIntegerStatus)
DECLARE(fmi2GetBooleanStatus) DECLARE(fmi2GetStringStatus)

#define HANDLE_MAGIC 0x57534849u      /* "WSHI" */
#define REMOTE_STATE_MAGIC 0x57535253u

typedef struct {
    unsigned magic;
    int remote;                      /* 0: inner is the in-process component */
    void *inner;
    /* worker process */
    fmi2CallbackFunctions callbacks;
    char *instance_name;
    oop_region *region;
    oop_child *child;
    oop_header *header;
    unsigned char *payload;
    unsigned char *log_area;
    int dead;                        /* the worker is gone: every call is fmi2Error */
    double timeout_s;
    char **strings;
    size_t n_strings;
} Handle;

typedef struct { unsigned magic; uint64_t handle; } RemoteState;

static void host_log(Handle *h, fmi2Status status, const char *format, ...) {
    if (h->callbacks.logger == NULL) return;
    char text[2048];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    h->callbacks.logger(h->callbacks.componentEnvironment, h->instance_name, status,
                        status >= fmi2Error ? "logStatusError" : "logAll", "%s", text);
}

/* messages the worker logged: every length checked against the log area */
static void forward_worker_log(Handle *h) {
    uint32_t count = h->header->log_count, used = h->header->log_used;
    if (used > OOP_LOG_SIZE) used = 0;
    size_t at = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t fields[3];             /* status, category length, text length */
        if (at + sizeof fields > used) break;
        memcpy(fields, h->log_area + at, sizeof fields);
        at += sizeof fields;
        if ((size_t)fields[1] > used - at || (size_t)fields[2] > used - at - fields[1]) break;
        char category[64], text[4096];
        size_t cl = fields[1] < sizeof category - 1 ? fields[1] : sizeof category - 1;
        size_t tl = fields[2] < sizeof text - 1 ? fields[2] : sizeof text - 1;
        memcpy(category, h->log_area + at, cl); category[cl] = '\0';
        memcpy(text, h->log_area + at + fields[1], tl); text[tl] = '\0';
        at += fields[1] + fields[2];
        fmi2Status status = fields[0] <= fmi2Pending ? (fmi2Status)fields[0] : fmi2Error;
        if (h->callbacks.logger)
            h->callbacks.logger(h->callbacks.componentEnvironment, h->instance_name, status,
                                category, "%s", text);
    }
    h->header->log_count = 0;
    h->header->log_used = 0;
}

/* One call to the worker: the header and payload are filled by the caller.
 * fmi2Error when the worker is gone, dies or overruns the timeout. */
static fmi2Status call_worker(Handle *h, uint32_t command, const char *function) {
    if (h->dead) {
        host_log(h, fmi2Error, "%s: the worker process is gone (see the earlier message)", function);
        return fmi2Error;
    }
    oop_header *hd = h->header;
    hd->command = command;
    hd->status = fmi2Error;
    uint32_t seq = hd->request_seq + 1;
    if (seq == 0) seq = 1;
    __atomic_store_n(&hd->request_seq, seq, __ATOMIC_RELEASE);
    oop_wake(&hd->request_seq);
    double start = oop_now();
    for (;;) {
        uint32_t seen = __atomic_load_n(&hd->response_seq, __ATOMIC_ACQUIRE);
        if (seen == seq) break;
        if (oop_wait_change(&hd->response_seq, seen, 20)) continue;
        char how[128];
        if (!oop_child_alive(h->child, how, sizeof how)) {
            h->dead = 1;
            host_log(h, fmi2Error, "%s: the worker process (pid %d) %s", function,
                     oop_child_pid(h->child), how);
            return fmi2Error;
        }
        if (oop_now() - start > h->timeout_s) {
            h->dead = 1;
            oop_child_kill(h->child);
            host_log(h, fmi2Error, "%s: the worker process gave no answer in %.0f s "
                     "(WHEELSET_FMU_WORKER_TIMEOUT); it was stopped", function, h->timeout_s);
            return fmi2Error;
        }
    }
    if (hd->log_count) forward_worker_log(h);
    int32_t status = hd->status;
    if (status < fmi2OK || status > fmi2Pending) {
        host_log(h, fmi2Error, "%s: the worker returned the invalid status %d", function, (int)status);
        return fmi2Error;
    }
    return (fmi2Status)status;
}

static void free_strings(Handle *h) {
    for (size_t i = 0; i < h->n_strings; i++) free(h->strings[i]);
    free(h->strings);
    h->strings = NULL;
    h->n_strings = 0;
}

static void release_handle(Handle *h) {
    if (h->remote) {
        if (h->header && !h->dead) {
            h->header->log_count = 0;
            uint32_t seq = h->header->request_seq + 1;
            h->header->command = OOP_EXIT;
            __atomic_store_n(&h->header->request_seq, seq, __ATOMIC_RELEASE);
            oop_wake(&h->header->request_seq);
            double start = oop_now();
            char how[128];
            while (oop_child_alive(h->child, how, sizeof how) && oop_now() - start < 1.0)
                oop_wait_change(&h->header->response_seq, h->header->response_seq, 10);
        }
        if (h->child) { oop_child_kill(h->child); oop_child_release(h->child); }
        oop_region_destroy(h->region);
        free_strings(h);
        free(h->instance_name);
    }
    h->magic = 0;
    free(h);
}

/* Python run by the worker: the recorded site-packages, then this build's
 * package by file location (as the in-process bootstrap), numba's target (the
 * worker is the FMU's own process: fmi2_frontend_python.c's BOOTSTRAP), then its worker. */
static const char *WORKER_BOOT =
    "import importlib, importlib.util, os, site, sys\n"
    "library, region, package, resources, site_dirs = sys.argv[1:6]\n"
    "for d in site_dirs.split(os.pathsep):\n"
    "    if d and os.path.isdir(d): site.addsitedir(d)\n"
    "directory = os.path.join(resources, package)\n"
    "spec = importlib.util.spec_from_file_location(package, os.path.join(directory, '__init__.py'),\n"
    "                                              submodule_search_locations=[directory])\n"
    "module = importlib.util.module_from_spec(spec)\n"
    "sys.modules[package] = module\n"
    "spec.loader.exec_module(module)\n"
    "cache = importlib.import_module(package + '.cache')\n"
    "cache.choose_numba_target(os.path.join(resources, cache.SHIPPED_CACHE_DIR))\n"
    "importlib.import_module(package + '.native_worker').main(library, region)\n";

static int string_into_payload(Handle *h, size_t *at, const char *s) {
    size_t len = strlen(s);
    if (*at + 4 + len > OOP_PAYLOAD_SIZE) return -1;
    uint32_t l = (uint32_t)len;
    memcpy(h->payload + *at, &l, 4);
    memcpy(h->payload + *at + 4, s, len);
    *at += 4 + len;
    return 0;
}

static Handle *start_worker(Handle *h, fmi2String name, fmi2String guid, fmi2String uri,
                            fmi2Boolean logging_on) {
    char err[2048], resources[4096], library[4096], region_name[128];
    python_location where;
    if (wheelset_resources_and_python(uri, resources, sizeof resources, &where, err, sizeof err) != 0) {
        host_log(h, fmi2Error, "fmi2Instantiate: %s", err);
        return NULL;
    }
    char package[128] = "";
    {   /* the package name of this build (resources/wheelset_native.cfg) */
        char path[8192], line[512];
        snprintf(path, sizeof path, "%s/wheelset_native.cfg", resources);
        FILE *f = fopen(path, "r");
        while (f && fgets(line, sizeof line, f))
            if (strncmp(line, "package=", 8) == 0) {
                snprintf(package, sizeof package, "%s", line + 8);
                package[strcspn(package, "\r\n")] = '\0';
            }
        if (f) fclose(f);
    }
    char python[4096];
    const char *override = platform_getenv("WHEELSET_FMU_PYTHON");
    if (where.standalone) {
        /* the FMU's own runtime, never one the environment names */
        snprintf(python, sizeof python, "%s", where.worker);
        if (!platform_is_file(python)) {
            host_log(h, fmi2Error, "fmi2Instantiate: the FMU's runtime has no interpreter %s "
                     "(the FMU's resources are incomplete)", python);
            return NULL;
        }
        if (oop_make_executable(python, err, sizeof err) != 0) {
            host_log(h, fmi2Error, "fmi2Instantiate: %s", err);
            return NULL;
        }
    } else {
#ifdef _WIN32
        if (override) snprintf(python, sizeof python, "%s", override);
        else snprintf(python, sizeof python, "%s\\python.exe", where.home);
#else
        if (override) snprintf(python, sizeof python, "%s", override);
        else snprintf(python, sizeof python, "%s/bin/python%s", where.home, where.python_version);
#endif
        if (!platform_is_file(python)) {
            host_log(h, fmi2Error, "fmi2Instantiate: no Python interpreter %s for the worker process "
                     "(set WHEELSET_FMU_PYTHON)", python);
            return NULL;
        }
    }
    if (oop_library_path(library, sizeof library) != 0) {
        host_log(h, fmi2Error, "fmi2Instantiate: cannot find this library's own path");
        return NULL;
    }
    h->region = oop_region_create(region_name, sizeof region_name, err, sizeof err);
    if (h->region == NULL) {
        host_log(h, fmi2Error, "fmi2Instantiate: no shared memory for the worker: %s", err);
        return NULL;
    }
    unsigned char *base = (unsigned char *)oop_region_address(h->region);
    h->header = (oop_header *)base;
    h->payload = base + OOP_PAYLOAD_OFFSET;
    h->log_area = base + OOP_LOG_OFFSET;
    h->header->magic = OOP_MAGIC;
    h->header->version = OOP_VERSION;
    char *argv[] = {python, "-I", "-c", (char *)WORKER_BOOT, library, region_name, package,
                    resources, where.site_packages, NULL};
    h->child = oop_child_start(argv, "WHEELSET_FMU_OUT_OF_PROCESS=0", err, sizeof err);
    if (h->child == NULL) {
        host_log(h, fmi2Error, "fmi2Instantiate: %s", err);
        return NULL;
    }
    /* the worker answers HELLO once it has mapped the region */
    if (call_worker(h, OOP_HELLO, "fmi2Instantiate") != fmi2OK) return NULL;
    oop_region_unlink(h->region);
    size_t at = 0;
    if (string_into_payload(h, &at, name) || string_into_payload(h, &at, guid ? guid : "") ||
        string_into_payload(h, &at, uri)) {
        host_log(h, fmi2Error, "fmi2Instantiate: arguments too long");
        return NULL;
    }
    h->header->flag = logging_on ? 1 : 0;
    if (call_worker(h, OOP_INSTANTIATE, "fmi2Instantiate") != fmi2OK) return NULL;
    return h;
}

static Handle *handle_of(fmi2Component c) {
    Handle *h = (Handle *)c;
    return (h != NULL && h->magic == HANDLE_MAGIC) ? h : NULL;
}

/* A self-contained FMU in a process that already has a libpython (a Python
 * host such as FMPy, or a C host that loaded one): its runtime would be a
 * second CPython in the process, and the host's own may be another version
 * with other numpy, scipy or numba builds. It therefore runs in a worker
 * process of its own runtime (not when that libpython is the one this library
 * started: later instances in a C host), unless WHEELSET_FMU_OUT_OF_PROCESS=0 asks to
 * join the host's interpreter (which must then be the recorded Python version:
 * the bootstrap checks it and adds the bundled packages only then). */
static int standalone_beside_another_python(const char *uri) {
    char resources[4096], err[2048];
    python_location where;
    if (uri == NULL || platform_process_symbol("Py_IsInitialized") == NULL) return 0;
    if (python_runtime_started_here()) return 0;     /* that libpython is the FMU's own */
    if (wheelset_resources_and_python(uri, resources, sizeof resources, &where, err, sizeof err) != 0)
        return 0;                     /* the in-process path reports the problem */
    return where.standalone;
}

/* ------------------------------------------------------------ FMI functions */
const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String fmuResourceLocation, const fmi2CallbackFunctions *functions,
                              fmi2Boolean visible, fmi2Boolean loggingOn) {
    const char *mode = platform_getenv("WHEELSET_FMU_OUT_OF_PROCESS");
    int remote = mode != NULL && strcmp(mode, "0") != 0;
    if (mode == NULL && standalone_beside_another_python(fmuResourceLocation)) remote = 1;
    Handle *h = (Handle *)calloc(1, sizeof *h);
    if (h == NULL) return NULL;
    h->magic = HANDLE_MAGIC;
    if (!remote) {
        h->inner = IN(fmi2Instantiate)(instanceName, fmuType, fmuGUID, fmuResourceLocation, functions,
                                       visible, loggingOn);
        if (h->inner == NULL) { free(h); return NULL; }
        return h;
    }
    h->remote = 1;
    if (functions == NULL || functions->allocateMemory == NULL || functions->freeMemory == NULL) {
        free(h);
        return NULL;
    }
    h->callbacks = *functions;
    const char *name = instanceName ? instanceName : "";
    h->instance_name = (char *)malloc(strlen(name) + 1);
    if (h->instance_name) memcpy(h->instance_name, name, strlen(name) + 1);
    const char *timeout = platform_getenv("WHEELSET_FMU_WORKER_TIMEOUT");
    h->timeout_s = timeout ? atof(timeout) : 600.0;
    if (!(h->timeout_s > 0)) h->timeout_s = 600.0;
    if (h->instance_name == NULL || instanceName == NULL || fmuType != fmi2CoSimulation ||
        fmuResourceLocation == NULL) {
        if (h->instance_name) host_log(h, fmi2Error, "fmi2Instantiate: %s",
                                       "an instance name, co-simulation and a resource location are required");
        release_handle(h);
        return NULL;
    }
    if (start_worker(h, instanceName, fmuGUID, fmuResourceLocation, loggingOn) == NULL) {
        release_handle(h);
        return NULL;
    }
    if (loggingOn)
        host_log(h, fmi2OK, "the instance runs in the worker process %d (%s)", oop_child_pid(h->child),
                 mode != NULL ? "WHEELSET_FMU_OUT_OF_PROCESS" : "a self-contained FMU beside the "
                 "host's own Python: the FMU's runtime in a process of its own");
    return h;
}

#define UNWRAP(c, h) Handle *h = handle_of(c); if (h == NULL) return fmi2Error;

void fmi2FreeInstance(fmi2Component c) {
    Handle *h = handle_of(c);
    if (h == NULL) return;
    if (!h->remote) IN(fmi2FreeInstance)(h->inner);
    release_handle(h);
}

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cat[]) {
    UNWRAP(c, h);
    if (!h->remote) return IN(fmi2SetDebugLogging)(h->inner, on, n, cat);
    h->header->flag = on ? 1 : 0;
    return call_worker(h, OOP_SET_DEBUG_LOGGING, "fmi2SetDebugLogging");
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean td, fmi2Real tol, fmi2Real start,
                               fmi2Boolean sd, fmi2Real stop) {
    UNWRAP(c, h);
    if (!h->remote) return IN(fmi2SetupExperiment)(h->inner, td, tol, start, sd, stop);
    h->header->flag = (td ? 1u : 0u) | (sd ? 2u : 0u);
    h->header->real_args[0] = tol;
    h->header->real_args[1] = start;
    h->header->real_args[2] = stop;
    return call_worker(h, OOP_SETUP_EXPERIMENT, "fmi2SetupExperiment");
}

#define SIMPLE(fmi, command) \
    fmi2Status fmi(fmi2Component c) { \
        UNWRAP(c, h); \
        if (!h->remote) return IN(fmi)(h->inner); \
        return call_worker(h, command, #fmi); \
    }
SIMPLE(fmi2EnterInitializationMode, OOP_ENTER_INIT)
SIMPLE(fmi2ExitInitializationMode, OOP_EXIT_INIT)
SIMPLE(fmi2Terminate, OOP_TERMINATE)
SIMPLE(fmi2Reset, OOP_RESET)

/* value references then values into the payload */
static fmi2Status put_references(Handle *h, const fmi2ValueReference vr[], size_t n, size_t value_size,
                                 const char *function) {
    if (n > 0 && vr == NULL) { host_log(h, fmi2Error, "%s: NULL value reference array", function); return fmi2Error; }
    if (n > (OOP_PAYLOAD_SIZE - 64) / (sizeof(fmi2ValueReference) + value_size)) {
        host_log(h, fmi2Error, "%s: %zu value references are more than one call can carry", function, n);
        return fmi2Error;
    }
    memcpy(h->payload, vr, n * sizeof(fmi2ValueReference));
    h->header->count = (uint32_t)n;
    return fmi2OK;
}

static size_t values_offset(size_t n) {
    return (n * sizeof(fmi2ValueReference) + 7) & ~(size_t)7;
}

#define GETTER(fmi, type, command) \
    fmi2Status fmi(fmi2Component c, const fmi2ValueReference vr[], size_t n, type value[]) { \
        UNWRAP(c, h); \
        if (!h->remote) return IN(fmi)(h->inner, vr, n, value); \
        if (put_references(h, vr, n, sizeof(type), #fmi) != fmi2OK) return fmi2Error; \
        if (n > 0 && value == NULL) { host_log(h, fmi2Error, "%s: NULL value array", #fmi); return fmi2Error; } \
        fmi2Status s = call_worker(h, command, #fmi); \
        if (s <= fmi2Warning) memcpy(value, h->payload + values_offset(n), n * sizeof(type)); \
        return s; \
    }
#define SETTER(fmi, type, command) \
    fmi2Status fmi(fmi2Component c, const fmi2ValueReference vr[], size_t n, const type value[]) { \
        UNWRAP(c, h); \
        if (!h->remote) return IN(fmi)(h->inner, vr, n, value); \
        if (put_references(h, vr, n, sizeof(type), #fmi) != fmi2OK) return fmi2Error; \
        if (n > 0 && value == NULL) { host_log(h, fmi2Error, "%s: NULL value array", #fmi); return fmi2Error; } \
        memcpy(h->payload + values_offset(n), value, n * sizeof(type)); \
        return call_worker(h, command, #fmi); \
    }
GETTER(fmi2GetReal, fmi2Real, OOP_GET_REAL)
GETTER(fmi2GetInteger, fmi2Integer, OOP_GET_INTEGER)
GETTER(fmi2GetBoolean, fmi2Boolean, OOP_GET_BOOLEAN)
SETTER(fmi2SetReal, fmi2Real, OOP_SET_REAL)
SETTER(fmi2SetInteger, fmi2Integer, OOP_SET_INTEGER)
SETTER(fmi2SetBoolean, fmi2Boolean, OOP_SET_BOOLEAN)

fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2String value[]) {
    UNWRAP(c, h);
    if (!h->remote) return IN(fmi2GetString)(h->inner, vr, n, value);
    if (put_references(h, vr, n, 8, "fmi2GetString") != fmi2OK) return fmi2Error;
    if (n > 0 && value == NULL) { host_log(h, fmi2Error, "fmi2GetString: NULL value array"); return fmi2Error; }
    fmi2Status s = call_worker(h, OOP_GET_STRING, "fmi2GetString");
    if (s > fmi2Warning) return s;
    free_strings(h);
    h->strings = (char **)calloc(n ? n : 1, sizeof(char *));
    if (h->strings == NULL) return fmi2Error;
    size_t at = values_offset(n), end = h->header->payload_used;
    if (end > OOP_PAYLOAD_SIZE) end = 0;
    for (size_t i = 0; i < n; i++) {     /* u32 length + bytes each, checked */
        uint32_t len;
        if (at + 4 > end) { host_log(h, fmi2Error, "fmi2GetString: the worker's answer is malformed"); return fmi2Error; }
        memcpy(&len, h->payload + at, 4);
        if (len > end - at - 4) { host_log(h, fmi2Error, "fmi2GetString: the worker's answer is malformed"); return fmi2Error; }
        char *copy = (char *)malloc((size_t)len + 1);
        if (copy == NULL) return fmi2Error;
        memcpy(copy, h->payload + at + 4, len);
        copy[len] = '\0';
        h->strings[h->n_strings++] = copy;
        value[i] = copy;
        at += 4 + len;
    }
    return s;
}

fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2String value[]) {
    UNWRAP(c, h);
    if (!h->remote) return IN(fmi2SetString)(h->inner, vr, n, value);
    if (put_references(h, vr, n, 8, "fmi2SetString") != fmi2OK) return fmi2Error;
    if (n > 0 && value == NULL) { host_log(h, fmi2Error, "fmi2SetString: NULL value array"); return fmi2Error; }
    size_t at = values_offset(n);
    for (size_t i = 0; i < n; i++) {
        if (value[i] == NULL) { host_log(h, fmi2Error, "fmi2SetString: NULL string for value reference %u", vr[i]); return fmi2Error; }
        if (string_into_payload(h, &at, value[i])) { host_log(h, fmi2Error, "fmi2SetString: strings too long"); return fmi2Error; }
    }
    return call_worker(h, OOP_SET_STRING, "fmi2SetString");
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real dt, fmi2Boolean no_set_prior) {
    UNWRAP(c, h);
    if (!h->remote) return IN(fmi2DoStep)(h->inner, t, dt, no_set_prior);
    h->header->real_args[0] = t;
    h->header->real_args[1] = dt;
    h->header->flag = no_set_prior ? 1 : 0;
    return call_worker(h, OOP_DO_STEP, "fmi2DoStep");
}

fmi2Status fmi2CancelStep(fmi2Component c) {
    UNWRAP(c, h);
    if (!h->remote) return IN(fmi2CancelStep)(h->inner);
    host_log(h, fmi2Error, "fmi2CancelStep: doStep runs synchronously (canRunAsynchronuously=false)");
    return fmi2Error;
}

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *value) {
    UNWRAP(c, h);
    if (!h->remote) return IN(fmi2GetStatus)(h->inner, s, value);
    host_log(h, fmi2Error, "fmi2GetStatus: doStep runs synchronously; no pending status");
    return fmi2Error;
}

fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *value) {
    UNWRAP(c, h);
    if (!h->remote) return IN(fmi2GetRealStatus)(h->inner, s, value);
    if (value == NULL) return fmi2Error;
    h->header->count = (uint32_t)s;
    fmi2Status r = call_worker(h, OOP_GET_REAL_STATUS, "fmi2GetRealStatus");
    if (r <= fmi2Warning) *value = h->header->real_args[0];
    return r;
}

fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *value) {
    UNWRAP(c, h);
    if (!h->remote) return IN(fmi2GetIntegerStatus)(h->inner, s, value);
    host_log(h, fmi2Error, "fmi2GetIntegerStatus: no integer status is defined");
    return fmi2Error;
}

fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value) {
    UNWRAP(c, h);
    if (!h->remote) return IN(fmi2GetBooleanStatus)(h->inner, s, value);
    if (value == NULL) return fmi2Error;
    h->header->count = (uint32_t)s;
    fmi2Status r = call_worker(h, OOP_GET_BOOLEAN_STATUS, "fmi2GetBooleanStatus");
    if (r <= fmi2Warning) *value = h->header->flag ? fmi2True : fmi2False;
    return r;
}

fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *value) {
    UNWRAP(c, h);
    if (!h->remote) return IN(fmi2GetStringStatus)(h->inner, s, value);
    host_log(h, fmi2Error, "fmi2GetStringStatus: no string status (doStep runs synchronously)");
    return fmi2Error;
}

fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                       const fmi2Integer order[], const fmi2Real value[]) {
    UNWRAP(c, h);
    if (!h->remote) return IN(fmi2SetRealInputDerivatives)(h->inner, vr, n, order, value);
    host_log(h, fmi2Error, "fmi2SetRealInputDerivatives: not supported (canInterpolateInputs=false)");
    return fmi2Error;
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                        const fmi2Integer order[], fmi2Real value[]) {
    UNWRAP(c, h);
    if (!h->remote) return IN(fmi2GetRealOutputDerivatives)(h->inner, vr, n, order, value);
    host_log(h, fmi2Error, "fmi2GetRealOutputDerivatives: not supported (maxOutputDerivativeOrder=0)");
    return fmi2Error;
}

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference u[], size_t nu,
                                        const fmi2ValueReference z[], size_t nz, const fmi2Real dv[],
                                        fmi2Real dz[]) {
    UNWRAP(c, h);
    if (!h->remote) return IN(fmi2GetDirectionalDerivative)(h->inner, u, nu, z, nz, dv, dz);
    host_log(h, fmi2Error, "fmi2GetDirectionalDerivative: not available out of process (WHEELSET_FMU_OUT_OF_PROCESS); run the FMU in process for directional derivatives");
    return fmi2Error;
}

/* FMU states: the worker keeps them; the host holds a handle to one */
static RemoteState *remote_state(Handle *h, fmi2FMUstate s, const char *function) {
    RemoteState *r = (RemoteState *)s;
    if (r == NULL || r->magic != REMOTE_STATE_MAGIC) {
        host_log(h, fmi2Error, "%s: not an FMU state of this FMU", function);
        return NULL;
    }
    return r;
}

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *state) {
    UNWRAP(c, h);
    if (!h->remote) return IN(fmi2GetFMUstate)(h->inner, state);
    if (state == NULL) { host_log(h, fmi2Error, "fmi2GetFMUstate: NULL state pointer"); return fmi2Error; }
    RemoteState *r = (RemoteState *)*state;
    h->header->handle = (r != NULL && r->magic == REMOTE_STATE_MAGIC) ? r->handle : 0;
    fmi2Status s = call_worker(h, OOP_GET_STATE, "fmi2GetFMUstate");
    if (s > fmi2Warning) return s;
    if (r == NULL || r->magic != REMOTE_STATE_MAGIC) {
        r = (RemoteState *)calloc(1, sizeof *r);
        if (r == NULL) return fmi2Error;
        r->magic = REMOTE_STATE_MAGIC;
    }
    r->handle = h->header->handle;
    *state = r;
    return s;
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate state) {
    UNWRAP(c, h);
    if (!h->remote) return IN(fmi2SetFMUstate)(h->inner, state);
    RemoteState *r = remote_state(h, state, "fmi2SetFMUstate");
    if (r == NULL) return fmi2Error;
    h->header->handle = r->handle;
    return call_worker(h, OOP_SET_STATE, "fmi2SetFMUstate");
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *state) {
    UNWRAP(c, h);
    if (!h->remote) return IN(fmi2FreeFMUstate)(h->inner, state);
    if (state == NULL || *state == NULL) return fmi2OK;
    RemoteState *r = remote_state(h, *state, "fmi2FreeFMUstate");
    if (r == NULL) return fmi2Error;
    h->header->handle = r->handle;
    fmi2Status s = h->dead ? fmi2OK : call_worker(h, OOP_FREE_STATE, "fmi2FreeFMUstate");
    r->magic = 0;
    free(r);
    *state = NULL;
    return s;
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate state, size_t *size) {
    UNWRAP(c, h);
    if (!h->remote) return IN(fmi2SerializedFMUstateSize)(h->inner, state, size);
    RemoteState *r = remote_state(h, state, "fmi2SerializedFMUstateSize");
    if (r == NULL || size == NULL) return fmi2Error;
    h->header->handle = r->handle;
    fmi2Status s = call_worker(h, OOP_SERIALIZE, "fmi2SerializedFMUstateSize");
    if (s > fmi2Warning) return s;
    if (h->header->payload_used > OOP_PAYLOAD_SIZE) return fmi2Error;
    *size = (size_t)h->header->payload_used;
    return s;
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate state, fmi2Byte out[], size_t size) {
    UNWRAP(c, h);
    if (!h->remote) return IN(fmi2SerializeFMUstate)(h->inner, state, out, size);
    RemoteState *r = remote_state(h, state, "fmi2SerializeFMUstate");
    if (r == NULL) return fmi2Error;
    h->header->handle = r->handle;
    fmi2Status s = call_worker(h, OOP_SERIALIZE, "fmi2SerializeFMUstate");
    if (s > fmi2Warning) return s;
    uint64_t used = h->header->payload_used;
    if (used > OOP_PAYLOAD_SIZE || out == NULL || size < used) {
        host_log(h, fmi2Error, "fmi2SerializeFMUstate: the buffer holds %zu bytes, the state needs %llu",
                 size, (unsigned long long)used);
        return fmi2Error;
    }
    memcpy(out, h->payload, (size_t)used);
    return s;
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte in[], size_t size, fmi2FMUstate *state) {
    UNWRAP(c, h);
    if (!h->remote) return IN(fmi2DeSerializeFMUstate)(h->inner, in, size, state);
    if (in == NULL || state == NULL || size > OOP_PAYLOAD_SIZE) {
        host_log(h, fmi2Error, "fmi2DeSerializeFMUstate: NULL argument or a state larger than %u bytes",
                 (unsigned)OOP_PAYLOAD_SIZE);
        return fmi2Error;
    }
    memcpy(h->payload, in, size);
    h->header->payload_used = size;
    fmi2Status s = call_worker(h, OOP_DESERIALIZE, "fmi2DeSerializeFMUstate");
    if (s > fmi2Warning) return s;
    RemoteState *r = (RemoteState *)calloc(1, sizeof *r);
    if (r == NULL) return fmi2Error;
    r->magic = REMOTE_STATE_MAGIC;
    r->handle = h->header->handle;
    *state = r;
    return s;
}

/* ---------------------------------------------- for the worker (ctypes) */
#if defined _WIN32
#define WORKER_EXPORT __declspec(dllexport)
#else
#define WORKER_EXPORT __attribute__((visibility("default")))
#endif

/* wait for a request after `last`; returns the new sequence number, or 0 on timeout */
WORKER_EXPORT uint32_t wheelset_worker_wait(void *region, uint32_t last, int timeout_ms) {
    oop_header *hd = (oop_header *)region;
    if (__atomic_load_n(&hd->request_seq, __ATOMIC_ACQUIRE) == last)
        oop_wait_change(&hd->request_seq, last, timeout_ms);
    uint32_t now = __atomic_load_n(&hd->request_seq, __ATOMIC_ACQUIRE);
    return now == last ? 0 : now;
}

WORKER_EXPORT void wheelset_worker_done(void *region, uint32_t seq) {
    oop_header *hd = (oop_header *)region;
    __atomic_store_n(&hd->response_seq, seq, __ATOMIC_RELEASE);
    oop_wake(&hd->response_seq);
}

/* the worker's pid of an out-of-process instance (0: in-process), for tests */
WORKER_EXPORT int wheelset_worker_pid(fmi2Component c) {
    Handle *h = handle_of(c);
    return (h != NULL && h->remote && h->child) ? oop_child_pid(h->child) : 0;
}

/* the in-process component inside a handle (the worker calls the
 * wheelset_inproc_* functions through the exported fmi2* with the handle) */
