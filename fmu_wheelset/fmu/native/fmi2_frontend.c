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
 * OS-specific is in platform_*.c.
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

/* ---------------------------------------------------- resource location */
static int hex_value(char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* The directory of a file URI (RFC 8089): file:///p, file:/p, file://localhost/p,
 * percent-encoded octets; a plain absolute path is taken as it is. On Windows
 * file:///C:/p gives C:/p. 0, or -1 with the reason in err. */
static int resource_directory(const char *uri, char *out, size_t size, char *err, size_t err_size) {
    const char *p = uri;
    if (uri == NULL || uri[0] == '\0') {
        snprintf(err, err_size, "no fmuResourceLocation given");
        return -1;
    }
    if (strncmp(p, "file:", 5) == 0) {
        p += 5;
        if (strncmp(p, "//", 2) == 0) {
            p += 2;                                   /* authority */
            if (strncmp(p, "localhost/", 10) == 0) p += 9;
            else if (*p != '/') {
                snprintf(err, err_size, "fmuResourceLocation %s names a remote host; only local "
                         "file URIs are supported", uri);
                return -1;
            }
        }
        if (*p != '/') {
            snprintf(err, err_size, "fmuResourceLocation %s is not an absolute file URI", uri);
            return -1;
        }
    } else if (strstr(uri, "://") != NULL) {
        snprintf(err, err_size, "fmuResourceLocation %s is not a file URI", uri);
        return -1;
    }
    size_t n = 0;
    for (; *p; p++) {
        char ch = *p;
        if (ch == '%') {
            int hi = hex_value(p[1]), lo = hi >= 0 ? hex_value(p[2]) : -1;
            if (hi < 0 || lo < 0) {
                snprintf(err, err_size, "fmuResourceLocation %s has a bad percent-encoding", uri);
                return -1;
            }
            ch = (char)(hi * 16 + lo);
            p += 2;
            if (ch == '\0') {
                snprintf(err, err_size, "fmuResourceLocation %s encodes a NUL character", uri);
                return -1;
            }
        }
        if (n + 1 >= size) {
            snprintf(err, err_size, "fmuResourceLocation is too long");
            return -1;
        }
        out[n++] = ch;
    }
    out[n] = '\0';
    /* "/C:/x" -> "C:/x" (Windows drive letters) */
    if (n >= 3 && out[0] == '/' && out[2] == ':' &&
        ((out[1] >= 'A' && out[1] <= 'Z') || (out[1] >= 'a' && out[1] <= 'z'))) {
        memmove(out, out + 1, n);
        n--;
    }
    while (n > 1 && (out[n - 1] == '/' || out[n - 1] == '\\')) out[--n] = '\0';
    return 0;
}

/* ------------------------------------------------------------- configuration */
typedef struct {
    char guid[128];
    char package[128];
    python_location python;
} Config;

static void copy_value(char *dst, size_t size, const char *src) {
    snprintf(dst, size, "%s", src);
}

/* A path of the self-contained runtime as recorded: relative, no "..", no
 * backslash, no colon or semicolon (list separators), at most 1024 characters. */
static int safe_relative(const char *p) {
    if (p[0] == '\0' || p[0] == '/' || strlen(p) > 1024) return 0;
    for (const char *q = p; *q; q++)
        if (*q == '\\' || *q == ':' || *q == ';' || (unsigned char)*q < 32) return 0;
    for (const char *q = p; q != NULL; q = strchr(q, '/')) {
        if (*q == '/') q++;
        if (q[0] == '.' && q[1] == '.' && (q[2] == '/' || q[2] == '\0')) return 0;
    }
    return 1;
}

/* One recorded path of the runtime, made absolute: <resources>/<runtime>/<relative>. */
static int runtime_path(char *out, size_t size, const char *resources, const char *runtime,
                        const char *relative, const char *what, const char *cfg_path,
                        char *err, size_t err_size) {
    if (!safe_relative(relative)) {
        snprintf(err, err_size, "%s: the runtime's %s path is not a plain relative path", cfg_path, what);
        return -1;
    }
    int n = strcmp(relative, ".") == 0 ? snprintf(out, size, "%s/%s", resources, runtime)
                                       : snprintf(out, size, "%s/%s/%s", resources, runtime, relative);
    if (n < 0 || (size_t)n >= size) {
        snprintf(err, err_size, "the path of the FMU's resources is too long");
        return -1;
    }
    return 0;
}

/* A self-contained FMU: every path of the interpreter record points into the
 * FMU's own resources/<runtime>/ (never to the build machine, never to what
 * the environment names: WHEELSET_FMU_LIBPYTHON, WHEELSET_FMU_PYTHONHOME and
 * WHEELSET_FMU_SITE_PACKAGES are ignored; docs/SECURITY.md). */
static int standalone_paths(const char *resources, const char *runtime, python_location *where,
                            const char *cfg_path, char *err, size_t err_size) {
    for (const char *q = runtime; *q; q++)
        if (!((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_')) runtime = "";
    if (runtime[0] == '\0') {
        snprintf(err, err_size, "%s: a self-contained FMU must name its runtime folder (letters, "
                 "digits, '_')", cfg_path);
        return -1;
    }
    python_location rel = *where;
    if (runtime_path(where->libpython, sizeof where->libpython, resources, runtime, rel.libpython,
                     "libpython", cfg_path, err, err_size) != 0 ||
        runtime_path(where->home, sizeof where->home, resources, runtime, rel.home,
                     "home", cfg_path, err, err_size) != 0 ||
        runtime_path(where->site_packages, sizeof where->site_packages, resources, runtime,
                     rel.site_packages, "site-packages", cfg_path, err, err_size) != 0 ||
        runtime_path(where->worker, sizeof where->worker, resources, runtime, rel.worker,
                     "worker", cfg_path, err, err_size) != 0)
        return -1;
    /* the preload list: relative paths separated by ',' */
    where->preload[0] = '\0';
    size_t used = 0;
    const char *p = rel.preload;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char one[1100], full[4096];
        if (len == 0 || len >= sizeof one) {
            snprintf(err, err_size, "%s: a bad preload entry", cfg_path);
            return -1;
        }
        memcpy(one, p, len);
        one[len] = '\0';
        if (runtime_path(full, sizeof full, resources, runtime, one, "preload", cfg_path, err, err_size) != 0)
            return -1;
        int n = snprintf(where->preload + used, sizeof where->preload - used, "%s%s",
                         used ? "\n" : "", full);
        if (n < 0 || (size_t)n >= sizeof where->preload - used) {
            snprintf(err, err_size, "%s: the preload list is too long", cfg_path);
            return -1;
        }
        used += (size_t)n;
        p = comma ? comma + 1 : p + len;
    }
    return 0;
}

/* resources/wheelset_native.cfg: "key=value" lines (parsed, never executed) */
static int read_config(const char *resources, Config *cfg, char *err, size_t err_size) {
    char path[8192];
    memset(cfg, 0, sizeof *cfg);
    snprintf(path, sizeof path, "%s/%s", resources, CONFIG_FILE);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, err_size, "cannot read %s (the FMU's resources are incomplete or the "
                 "fmuResourceLocation is wrong)", path);
        return -1;
    }
    char line[8192];
    char runtime[128] = "";
    while (fgets(line, sizeof line, f) != NULL) {
        size_t len = strlen(line);
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        if (line[0] == '#' || line[0] == '\0') continue;
        char *eq = strchr(line, '=');
        if (eq == NULL) continue;
        *eq = '\0';
        const char *key = line, *value = eq + 1;
        if (strcmp(key, "guid") == 0) copy_value(cfg->guid, sizeof cfg->guid, value);
        else if (strcmp(key, "package") == 0) copy_value(cfg->package, sizeof cfg->package, value);
        else if (strcmp(key, "libpython") == 0) copy_value(cfg->python.libpython, sizeof cfg->python.libpython, value);
        else if (strcmp(key, "home") == 0) copy_value(cfg->python.home, sizeof cfg->python.home, value);
        else if (strcmp(key, "site_packages") == 0) copy_value(cfg->python.site_packages, sizeof cfg->python.site_packages, value);
        else if (strcmp(key, "python_version") == 0) copy_value(cfg->python.python_version, sizeof cfg->python.python_version, value);
        else if (strcmp(key, "standalone") == 0) cfg->python.standalone = strcmp(value, "1") == 0;
        else if (strcmp(key, "runtime") == 0) copy_value(runtime, sizeof runtime, value);
        else if (strcmp(key, "worker") == 0) copy_value(cfg->python.worker, sizeof cfg->python.worker, value);
        else if (strcmp(key, "preload") == 0) copy_value(cfg->python.preload, sizeof cfg->python.preload, value);
    }
    fclose(f);
    if (cfg->package[0] == '\0' || cfg->guid[0] == '\0') {
        snprintf(err, err_size, "%s names no package or GUID", path);
        return -1;
    }
    for (const char *q = cfg->package; *q; q++) {
        if (!((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_')) {
            snprintf(err, err_size, "%s: bad package name", path);
            return -1;
        }
    }
    if (cfg->python.standalone) return standalone_paths(resources, runtime, &cfg->python, path, err, err_size);
    /* a moved installation: the environment overrides what the build recorded */
    const char *v;
    if ((v = platform_getenv("WHEELSET_FMU_LIBPYTHON")) != NULL) copy_value(cfg->python.libpython, sizeof cfg->python.libpython, v);
    if ((v = platform_getenv("WHEELSET_FMU_PYTHONHOME")) != NULL) copy_value(cfg->python.home, sizeof cfg->python.home, v);
    if ((v = platform_getenv("WHEELSET_FMU_SITE_PACKAGES")) != NULL) copy_value(cfg->python.site_packages, sizeof cfg->python.site_packages, v);
    return 0;
}

/* Python run once per library load: imports this build's package by file
 * location (never through sys.path); arguments arrive as objects.
 *
 * Before the first import, the packages the FMU needs (REQUIRED) must be
 * importable. In a host's own interpreter (FMPy in a plain `pip install fmpy`
 * environment) that lacks some, the site-packages recorded at build time are
 * appended to the END of sys.path (the host's own packages keep precedence;
 * no .pth file is run) when the host runs the recorded Python version, and the
 * missing packages are imported once to prove it. What still fails is an
 * ImportError naming each missing package, where it was looked for, and the
 * remedies: WHEELSET_FMU_OUT_OF_PROCESS=1 (the FMU in its own worker Python)
 * or installing the packages into the host's environment.
 *
 * Two host threads doing their first fmi2Instantiate at once load the bridge
 * one after the other (a lock): numba's modules import each other, and two
 * threads importing them at once can see a partly initialised module.
 *
 * In an interpreter the FMU started itself (not joined) numba's target is
 * chosen before numba is imported (cache.choose_numba_target: this CPU when
 * it is the build machine's, else a generic x86-64, whose shipped cache fits
 * any x86-64 CPU). */
static const char *BOOTSTRAP =
    "import importlib, importlib.util, os, sys\n"
    "REQUIRED = ('numpy', 'scipy', 'numba')\n"
    "checked = []\n"
    "def require_packages(site_dirs, version, joined):\n"
    "    if checked:\n"
    "        return\n"
    "    missing = [m for m in REQUIRED if importlib.util.find_spec(m) is None]\n"
    "    here = '%d.%d' % sys.version_info[:2]\n"
    "    dirs = [d for d in site_dirs.split(os.pathsep) if d]\n"
    "    if missing and joined and here == version:\n"
    "        added = [d for d in dirs if os.path.isdir(d) and d not in sys.path]\n"
    "        sys.path.extend(added)\n"
    "        importlib.invalidate_caches()\n"
    "    problems = []\n"
    "    for m in missing:\n"
    "        try:\n"
    "            importlib.import_module(m)\n"
    "        except Exception as exc:\n"
    "            problems.append(f'{m} ({type(exc).__name__}: {exc})')\n"
    "    if problems:\n"
    "        where = 'the host\\'s Python ' + here if joined else 'the embedded Python ' + here\n"
    "        looked = ', '.join(dirs) or 'none recorded'\n"
    "        if joined and here != version:\n"
    "            looked += f' (not used: recorded for Python {version})'\n"
    "        raise ImportError(f'{where} lacks the package(s) the FMU needs: ' + '; '.join(problems)\n"
    "                          + f'. Looked in its sys.path and in the recorded site-packages ({looked}). '\n"
    "                          'Run the FMU in its own worker process with WHEELSET_FMU_OUT_OF_PROCESS=1, '\n"
    "                          'install numpy, scipy and numba into the host\\'s Python, or set '\n"
    "                          'WHEELSET_FMU_SITE_PACKAGES to where they are')\n"
    "    checked.append(True)\n"
    "import threading\n"
    "loading = threading.RLock()\n"
    "def load_bridge(name, resources, site_dirs, version, joined):\n"
    "    with loading:\n"
    "        return load_bridge_once(name, resources, site_dirs, version, joined)\n"
    "def load_bridge_once(name, resources, site_dirs, version, joined):\n"
    "    require_packages(site_dirs, version, joined)\n"
    "    package = sys.modules.get(name)\n"
    "    if package is None:\n"
    "        directory = os.path.join(resources, name)\n"
    "        spec = importlib.util.spec_from_file_location(\n"
    "            name, os.path.join(directory, '__init__.py'),\n"
    "            submodule_search_locations=[directory])\n"
    "        if spec is None:\n"
    "            raise ImportError(f'no package {name} in {resources}')\n"
    "        package = importlib.util.module_from_spec(spec)\n"
    "        sys.modules[name] = package\n"
    "        try:\n"
    "            spec.loader.exec_module(package)\n"
    "        except BaseException:\n"
    "            del sys.modules[name]\n"
    "            raise\n"
    "        if not joined:\n"
    "            cache = importlib.import_module(name + '.cache')\n"
    "            cache.choose_numba_target(os.path.join(resources, cache.SHIPPED_CACHE_DIR))\n"
    "    return importlib.import_module(name + '.native_bridge')\n";

static PyObject *load_bridge_function = NULL;

static PyObject *import_bridge(const char *package, const char *resources, const python_location *where_python,
                               int joined, char *err, size_t err_size) {
    if (load_bridge_function == NULL) {
        PyObject *globals = py.DictNew();
        if (globals == NULL) goto failed;
        py.DictSetItemString(globals, "__builtins__", py.EvalGetBuiltins());
        PyObject *r = py.RunString(BOOTSTRAP, 257, globals, globals);
        if (r == NULL) { py.DecRef(globals); goto failed; }
        py.DecRef(r);
        load_bridge_function = py.DictGetItemString(globals, "load_bridge");   /* borrowed */
        if (load_bridge_function) py.IncRef(load_bridge_function);
        py.DecRef(globals);
        if (load_bridge_function == NULL) goto failed;
    }
    PyObject *name = py.UnicodeFromString(package);
    PyObject *where = py.UnicodeDecodeFSDefault(resources);
    PyObject *site_dirs = py.UnicodeDecodeFSDefault(where_python->site_packages);
    PyObject *version = py.UnicodeFromString(where_python->python_version);
    PyObject *is_joined = py.LongFromLong(joined);
    PyObject *module = (name && where && site_dirs && version && is_joined)
        ? py.CallFunctionObjArgs(load_bridge_function, name, where, site_dirs, version, is_joined, NULL)
        : NULL;
    if (name) py.DecRef(name);
    if (where) py.DecRef(where);
    if (site_dirs) py.DecRef(site_dirs);
    if (version) py.DecRef(version);
    if (is_joined) py.DecRef(is_joined);
    if (module != NULL) return module;
failed: {
        char reason[MESSAGE_SIZE - 256];
        python_error_text(reason, sizeof reason);
        snprintf(err, err_size, "cannot import the FMU's Python code (%s in %s): %s",
                 package, resources, reason);
    }
    return NULL;
}

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
