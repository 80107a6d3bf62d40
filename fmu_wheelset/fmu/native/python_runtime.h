/* The CPython runtime, loaded dynamically (no link to libpython).
 *
 * The front end uses a handful of functions of CPython's stable C API, looked
 * up by name at run time: in the host process when it already runs an
 * interpreter (FMPy is Python: the FMU joins it), else in the libpython
 * recorded at build time (or named by WHEELSET_FMU_LIBPYTHON), which is then
 * initialised once and never finalised. Every call into Python holds the GIL
 * through python_enter()/python_leave(). */
#ifndef WHEELSET_PYTHON_RUNTIME_H
#define WHEELSET_PYTHON_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

typedef struct _object PyObject;     /* opaque: never dereferenced here */
typedef intptr_t py_ssize_t;

typedef struct {
    void (*IncRef)(PyObject *);
    void (*DecRef)(PyObject *);
    PyObject *(*ImportModule)(const char *);
    PyObject *(*GetAttrString)(PyObject *, const char *);
    PyObject *(*CallObject)(PyObject *, PyObject *);
    PyObject *(*CallFunctionObjArgs)(PyObject *, ...);
    PyObject *(*UnicodeFromString)(const char *);
    PyObject *(*UnicodeDecodeFSDefault)(const char *);
    const char *(*UnicodeAsUTF8)(PyObject *);
    PyObject *(*LongFromLong)(long);
    PyObject *(*LongFromUnsignedLong)(unsigned long);
    long (*LongAsLong)(PyObject *);
    void *(*LongAsVoidPtr)(PyObject *);
    PyObject *(*FloatFromDouble)(double);
    double (*FloatAsDouble)(PyObject *);
    PyObject *(*BytesFromStringAndSize)(const char *, py_ssize_t);
    int (*BytesAsStringAndSize)(PyObject *, char **, py_ssize_t *);
    PyObject *(*ObjectStr)(PyObject *);
    PyObject *(*ErrOccurred)(void);
    void (*ErrFetch)(PyObject **, PyObject **, PyObject **);
    void (*ErrClear)(void);
    PyObject *(*DictNew)(void);
    int (*DictSetItemString)(PyObject *, const char *, PyObject *);
    PyObject *(*DictGetItemString)(PyObject *, const char *);
    PyObject *(*EvalGetBuiltins)(void);
    PyObject *(*RunString)(const char *, int, PyObject *, PyObject *);
    PyObject *(*TupleNew)(py_ssize_t);
    int (*TupleSetItem)(PyObject *, py_ssize_t, PyObject *);
    PyObject *(*TupleGetItem)(PyObject *, py_ssize_t);
    py_ssize_t (*TupleSize)(PyObject *);
    int (*GILStateEnsure)(void);
    void (*GILStateRelease)(int);
    const char *(*GetVersion)(void);
    PyObject *None;                  /* &_Py_NoneStruct */
} python_api;

extern python_api py;

/* What the build recorded (resources/wheelset_native.cfg), after the
 * environment overrides. A self-contained FMU (standalone) carries its own
 * runtime in its resources: every path then points into it (resolved from the
 * record's relative paths), the environment overrides are ignored and the
 * interpreter is started isolated. */
typedef struct {
    char libpython[4096];
    char home[4096];                 /* sys.base_prefix of the build interpreter */
    char site_packages[8192];        /* list, platform_path_list_separator */
    char python_version[32];         /* "3.11" */
    int standalone;                  /* 1: the runtime is the FMU's own */
    char worker[4096];               /* standalone: the runtime's interpreter executable */
    char preload[8192];              /* standalone: libraries loaded before libpython (list) */
} python_location;

/* Make the runtime usable (idempotent and thread-safe: two threads may call
 * it at once, with their first fmi2Instantiate; the second waits for the first
 * to start the interpreter, then joins it). Returns 0, or -1 with the reason
 * in err. `joined` tells whether the host's own interpreter is used. */
int python_runtime_start(const python_location *where, int *joined, char *err, size_t err_size);

/* 1 when this library started the interpreter of the process itself (not a
 * host's joined): a later instance of a self-contained FMU stays in it. */
int python_runtime_started_here(void);

/* GIL around every use of `py`. */
int python_enter(void);
void python_leave(int token);

/* The pending Python exception as text (and cleared), into buf. */
void python_error_text(char *buf, size_t size);

#endif
