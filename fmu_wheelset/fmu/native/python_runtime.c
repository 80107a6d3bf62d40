/* Dynamic CPython runtime of the native front end (see python_runtime.h). */
#include "python_runtime.h"
#include "platform.h"

#include <stdio.h>
#include <string.h>
#include <wchar.h>

python_api py;

static int runtime_ready = 0;
static int runtime_joined = 0;

/* start-up only (not in python_api: never used after python_runtime_start) */
typedef int (*IsInitialized_t)(void);
typedef void (*InitializeEx_t)(int);
typedef void (*SetPythonHome_t)(const wchar_t *);
typedef wchar_t *(*DecodeLocale_t)(const char *, size_t *);
typedef void *(*SaveThread_t)(void);

#define PY_FILE_INPUT 257   /* Py_file_input, fixed by CPython's API */

/* Python run once in a fresh interpreter we started: the recorded
 * site-packages of the build environment first after the standard library
 * (as a virtual environment orders them), .pth files processed. Data are
 * passed in `site_dirs`, never formatted into code. */
static const char *EMBED_SETUP =
    "import os, site, sys\n"
    "before = list(sys.path)\n"
    "for d in site_dirs:\n"
    "    if os.path.isdir(d):\n"
    "        site.addsitedir(d)\n"
    "added = [p for p in sys.path if p not in before]\n"
    "stdlib = [p for p in before if 'site-packages' not in p and 'dist-packages' not in p]\n"
    "sys.path[:] = stdlib + added + [p for p in before if p not in stdlib]\n";

static void *lookup(void *library, const char *name) {
    return library ? platform_library_symbol(library, name) : platform_process_symbol(name);
}

static int bind_api(void *library, char *err, size_t err_size) {
#define BIND(field, symbol) do { \
        *(void **)(&py.field) = lookup(library, symbol); \
        if (py.field == NULL) { snprintf(err, err_size, "the Python runtime has no symbol %s", symbol); return -1; } \
    } while (0)
    BIND(IncRef, "Py_IncRef");
    BIND(DecRef, "Py_DecRef");
    BIND(ImportModule, "PyImport_ImportModule");
    BIND(GetAttrString, "PyObject_GetAttrString");
    BIND(CallObject, "PyObject_CallObject");
    BIND(CallFunctionObjArgs, "PyObject_CallFunctionObjArgs");
    BIND(UnicodeFromString, "PyUnicode_FromString");
    BIND(UnicodeDecodeFSDefault, "PyUnicode_DecodeFSDefault");
    BIND(UnicodeAsUTF8, "PyUnicode_AsUTF8");
    BIND(LongFromLong, "PyLong_FromLong");
    BIND(LongFromUnsignedLong, "PyLong_FromUnsignedLong");
    BIND(LongAsLong, "PyLong_AsLong");
    BIND(LongAsVoidPtr, "PyLong_AsVoidPtr");
    BIND(FloatFromDouble, "PyFloat_FromDouble");
    BIND(FloatAsDouble, "PyFloat_AsDouble");
    BIND(BytesFromStringAndSize, "PyBytes_FromStringAndSize");
    BIND(BytesAsStringAndSize, "PyBytes_AsStringAndSize");
    BIND(ObjectStr, "PyObject_Str");
    BIND(ErrOccurred, "PyErr_Occurred");
    BIND(ErrFetch, "PyErr_Fetch");
    BIND(ErrClear, "PyErr_Clear");
    BIND(DictNew, "PyDict_New");
    BIND(DictSetItemString, "PyDict_SetItemString");
    BIND(DictGetItemString, "PyDict_GetItemString");
    BIND(EvalGetBuiltins, "PyEval_GetBuiltins");
    BIND(RunString, "PyRun_String");
    BIND(TupleNew, "PyTuple_New");
    BIND(TupleSetItem, "PyTuple_SetItem");
    BIND(TupleGetItem, "PyTuple_GetItem");
    BIND(TupleSize, "PyTuple_Size");
    BIND(GILStateEnsure, "PyGILState_Ensure");
    BIND(GILStateRelease, "PyGILState_Release");
    BIND(GetVersion, "Py_GetVersion");
    BIND(None, "_Py_NoneStruct");
#undef BIND
    return 0;
}

void python_error_text(char *buf, size_t size) {
    PyObject *type = NULL, *value = NULL, *trace = NULL;
    if (size == 0) return;
    buf[0] = '\0';
    if (py.ErrOccurred() == NULL) { snprintf(buf, size, "unknown Python error"); return; }
    py.ErrFetch(&type, &value, &trace);
    PyObject *what = value ? value : type;
    PyObject *text = what ? py.ObjectStr(what) : NULL;
    PyObject *type_name = type ? py.GetAttrString(type, "__name__") : NULL;
    const char *name = type_name ? py.UnicodeAsUTF8(type_name) : NULL;
    const char *message = text ? py.UnicodeAsUTF8(text) : NULL;
    snprintf(buf, size, "%s: %s", name ? name : "Python error", message ? message : "");
    if (text) py.DecRef(text);
    if (type_name) py.DecRef(type_name);
    if (type) py.DecRef(type);
    if (value) py.DecRef(value);
    if (trace) py.DecRef(trace);
    py.ErrClear();
}

static int add_site_packages(const char *list, char *err, size_t err_size) {
    /* site_dirs = [each entry of the list] */
    PyObject *globals = py.DictNew();
    PyObject *dirs = NULL, *code_result = NULL;
    int rc = -1;
    if (!globals) goto done;
    py.DictSetItemString(globals, "__builtins__", py.EvalGetBuiltins());
    {
        /* count the entries, then build a tuple of str */
        size_t n = 0;
        const char *p = list;
        while (*p) { const char *q = strchr(p, platform_path_list_separator); n++; if (!q) break; p = q + 1; }
        if (list[0] == '\0') n = 0;
        dirs = py.TupleNew((py_ssize_t)n);
        if (!dirs) goto done;
        p = list;
        for (size_t i = 0; i < n; i++) {
            const char *q = strchr(p, platform_path_list_separator);
            size_t len = q ? (size_t)(q - p) : strlen(p);
            char one[4096];
            if (len >= sizeof one) len = sizeof one - 1;
            memcpy(one, p, len);
            one[len] = '\0';
            PyObject *item = py.UnicodeDecodeFSDefault(one);
            if (!item) goto done;
            py.TupleSetItem(dirs, (py_ssize_t)i, item);   /* steals item */
            p = q ? q + 1 : p + len;
        }
    }
    if (py.DictSetItemString(globals, "site_dirs", dirs) != 0) goto done;
    code_result = py.RunString(EMBED_SETUP, PY_FILE_INPUT, globals, globals);
    if (!code_result) goto done;
    rc = 0;
done:
    if (rc != 0) {
        char reason[1024];
        python_error_text(reason, sizeof reason);
        snprintf(err, err_size, "cannot add the recorded site-packages to the interpreter: %s", reason);
    }
    if (code_result) py.DecRef(code_result);
    if (dirs) py.DecRef(dirs);
    if (globals) py.DecRef(globals);
    return rc;
}

/* A self-contained FMU's libraries that its modules need beyond the base
 * system (libffi for ctypes): loaded by path before libpython, so that the
 * dynamic linker finds them already loaded (by their soname) when an
 * extension module needs them. `list`: absolute paths, one per line. */
static int preload_libraries(const char *list, char *err, size_t err_size) {
    const char *p = list;
    while (*p) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char path[4096], reason[1024];
        if (len >= sizeof path) len = sizeof path - 1;
        memcpy(path, p, len);
        path[len] = '\0';
        if (platform_load_library_global(path, reason, sizeof reason) == NULL) {
            snprintf(err, err_size, "cannot load the FMU's bundled library %s: %s", path, reason);
            return -1;
        }
        p = end ? end + 1 : p + len;
    }
    return 0;
}

/* The self-contained runtime starts isolated, as `python -I`: the host's
 * PYTHONPATH, PYTHONHOME, PYTHONSTARTUP, ... and the user's site-packages are
 * ignored, so that it imports only from the FMU's own resources. CPython's
 * legacy configuration flags (read by Py_InitializeEx; CPython 3.8-3.13). */
static int isolate(void *library, char *err, size_t err_size) {
    static const char *flags[] = {"Py_IsolatedFlag", "Py_IgnoreEnvironmentFlag", "Py_NoUserSiteDirectory"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        int *flag = (int *)lookup(library, flags[i]);
        if (flag == NULL) {
            snprintf(err, err_size, "the FMU's Python runtime has no %s: it cannot be started isolated",
                     flags[i]);
            return -1;
        }
        *flag = 1;
    }
    return 0;
}

static int start_runtime(const python_location *where, int *joined, char *err, size_t err_size) {
    if (runtime_ready) { *joined = runtime_joined; return 0; }
    IsInitialized_t is_initialized = (IsInitialized_t)platform_process_symbol("Py_IsInitialized");
    if (is_initialized != NULL && is_initialized()) {
        /* the host runs Python (FMPy): join its interpreter, use its modules */
        if (bind_api(NULL, err, err_size) != 0) return -1;
        runtime_ready = 1;
        runtime_joined = *joined = 1;
        return 0;
    }
    void *library = NULL;
    if (is_initialized != NULL) {
        library = NULL;      /* a libpython is loaded but not started: start that one */
    } else {
        if (where->libpython[0] == '\0') {
            snprintf(err, err_size, "no Python runtime recorded (resources/wheelset_native.cfg) "
                     "and none given in WHEELSET_FMU_LIBPYTHON");
            return -1;
        }
        if (!platform_is_file(where->libpython)) {
            snprintf(err, err_size, "the Python runtime %s does not exist (recorded at build time; "
                     "set WHEELSET_FMU_LIBPYTHON to the libpython%s of the Python installation "
                     "that has the FMU's dependencies, and WHEELSET_FMU_PYTHONHOME and "
                     "WHEELSET_FMU_SITE_PACKAGES if it moved)", where->libpython,
                     where->python_version);
            return -1;
        }
        char reason[1024];
        if (where->standalone && preload_libraries(where->preload, err, err_size) != 0) return -1;
        library = platform_load_library_global(where->libpython, reason, sizeof reason);
        if (library == NULL) {
            snprintf(err, err_size, "cannot load the Python runtime %s: %s (%s)", where->libpython, reason,
                     where->standalone ? "the FMU's own runtime is for Linux x86-64"
                                       : "recorded at build time, perhaps on another platform: set "
                                         "WHEELSET_FMU_LIBPYTHON to this machine's libpython or pythonXY.dll, "
                                         "and WHEELSET_FMU_PYTHONHOME and WHEELSET_FMU_SITE_PACKAGES, or "
                                         "build the FMU on this platform");
            return -1;
        }
        is_initialized = (IsInitialized_t)platform_library_symbol(library, "Py_IsInitialized");
    }
    if (bind_api(library, err, err_size) != 0) return -1;
    const char *version = py.GetVersion();
    if (where->python_version[0] != '\0' &&
        (strncmp(version, where->python_version, strlen(where->python_version)) != 0 ||
         (version[strlen(where->python_version)] != '.' && version[strlen(where->python_version)] != ' '))) {
        snprintf(err, err_size, "the Python runtime %s is version %.20s, the FMU was built for Python %s",
                 where->libpython, version, where->python_version);
        return -1;
    }
    InitializeEx_t initialize = (InitializeEx_t)lookup(library, "Py_InitializeEx");
    SetPythonHome_t set_home = (SetPythonHome_t)lookup(library, "Py_SetPythonHome");
    DecodeLocale_t decode = (DecodeLocale_t)lookup(library, "Py_DecodeLocale");
    SaveThread_t save_thread = (SaveThread_t)lookup(library, "PyEval_SaveThread");
    if (!initialize || !save_thread || !is_initialized) {
        snprintf(err, err_size, "the Python runtime %s lacks Py_InitializeEx/PyEval_SaveThread",
                 where->libpython);
        return -1;
    }
    if (where->standalone && isolate(library, err, err_size) != 0) return -1;
    if (where->home[0] != '\0' && set_home && decode) {
        /* kept for the interpreter's lifetime (CPython keeps the pointer) */
        static wchar_t *home = NULL;
        home = decode(where->home, NULL);
        if (home) set_home(home);
    }
    initialize(0);                   /* 0: leave the host's signal handlers alone */
    if (!is_initialized()) {
        snprintf(err, err_size, "the Python runtime %s did not start (home %s)", where->libpython, where->home);
        return -1;
    }
    if (add_site_packages(where->site_packages, err, err_size) != 0) {
        save_thread();
        return -1;
    }
    /* release the GIL: every FMI call takes it with PyGILState_Ensure, from
     * whichever thread the host calls. Never finalised (a host may unload the
     * FMU while other code still runs Python; CPython cannot restart). */
    save_thread();
    runtime_ready = 1;
    runtime_joined = *joined = 0;
    return 0;
}

/* Under the process-wide lock: without it two threads' first fmi2Instantiate
 * both start the interpreter ("Fatal Python error: pyinit_core_reconfigure",
 * SIGSEGV) or both write the function table of a joined runtime. */
int python_runtime_start(const python_location *where, int *joined, char *err, size_t err_size) {
    platform_runtime_lock();
    int rc = start_runtime(where, joined, err, err_size);
    platform_runtime_unlock();
    return rc;
}

int python_runtime_started_here(void) {
    platform_runtime_lock();
    int here = runtime_ready && !runtime_joined;
    platform_runtime_unlock();
    return here;
}

int python_enter(void) {
    return py.GILStateEnsure();
}

void python_leave(int token) {
    py.GILStateRelease(token);
}
