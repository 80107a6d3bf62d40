/* Minimal FMI 2.0 co-simulation host for the wheelset FMU (test of the C API).
 *
 * Loads <unzipdir>/binaries/linux64/Wheelset.so with dlopen, instantiates it,
 * sets parameters/inputs, initialises, does <nsteps> doSteps of <step> s and
 * prints, after the initialisation and after every step, one line
 * "t v1 v2 ..." with the requested Real outputs (%.17g).
 *
 * usage: host <unzipdir> <guid> <step> <nsteps> [r:VR=VALUE | s:VR=STRING | o:VR] ...
 *   r:VR=VALUE   fmi2SetReal before initialisation (parameter or input)
 *   s:VR=STRING  fmi2SetString before initialisation
 *   o:VR         a Real output to print
 * Exit status: 0 ok, 2 a call failed (its status is printed on stderr).
 *
 * Run with the environment printed by `wheelset-fmu env` (LD_PRELOAD of
 * libpython, PYTHONPATH with numpy/scipy/numba).
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <unistd.h>

#include "fmi2FunctionTypes.h"   /* from FMPy's c-code folder (FMI 2.0 standard headers) */

#define MAX_VARS 256

static void logger(fmi2ComponentEnvironment env, fmi2String instance, fmi2Status status,
                   fmi2String category, fmi2String message, ...) {
    (void)env;
    char buf[4096];
    va_list ap;
    va_start(ap, message);
    vsnprintf(buf, sizeof buf, message, ap);
    va_end(ap);
    fprintf(stderr, "[%s] status=%d %s: %s\n", instance, (int)status, category ? category : "", buf);
}

static void *sym(void *lib, const char *name) {
    void *f = dlsym(lib, name);
    if (!f) { fprintf(stderr, "missing symbol %s\n", name); exit(2); }
    return f;
}

#define CHECK(call, what) do { fmi2Status st_ = (call); \
    if (st_ > fmi2Warning) { fprintf(stderr, "%s failed with status %d\n", what, (int)st_); return 2; } } while (0)

int main(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: %s unzipdir guid step nsteps [r:VR=V|s:VR=S|o:VR]...\n", argv[0]); return 1; }
    const char *dir = argv[1], *guid = argv[2];
    double step = atof(argv[3]);
    long nsteps = atol(argv[4]);

    char absdir[PATH_MAX], libpath[PATH_MAX + 64], resources[PATH_MAX + 64];
    if (!realpath(dir, absdir)) { perror(dir); return 1; }
    snprintf(libpath, sizeof libpath, "%s/binaries/linux64/Wheelset.so", absdir);
    snprintf(resources, sizeof resources, "file://%s/resources", absdir);

    void *lib = dlopen(libpath, RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 2; }

    fmi2InstantiateTYPE *instantiate = (fmi2InstantiateTYPE *)sym(lib, "fmi2Instantiate");
    fmi2SetupExperimentTYPE *setup = (fmi2SetupExperimentTYPE *)sym(lib, "fmi2SetupExperiment");
    fmi2EnterInitializationModeTYPE *enter = (fmi2EnterInitializationModeTYPE *)sym(lib, "fmi2EnterInitializationMode");
    fmi2ExitInitializationModeTYPE *exit_init = (fmi2ExitInitializationModeTYPE *)sym(lib, "fmi2ExitInitializationMode");
    fmi2SetRealTYPE *set_real = (fmi2SetRealTYPE *)sym(lib, "fmi2SetReal");
    fmi2SetStringTYPE *set_string = (fmi2SetStringTYPE *)sym(lib, "fmi2SetString");
    fmi2GetRealTYPE *get_real = (fmi2GetRealTYPE *)sym(lib, "fmi2GetReal");
    fmi2DoStepTYPE *do_step = (fmi2DoStepTYPE *)sym(lib, "fmi2DoStep");
    fmi2TerminateTYPE *terminate = (fmi2TerminateTYPE *)sym(lib, "fmi2Terminate");
    fmi2FreeInstanceTYPE *free_instance = (fmi2FreeInstanceTYPE *)sym(lib, "fmi2FreeInstance");
    fmi2GetVersionTYPE *get_version = (fmi2GetVersionTYPE *)sym(lib, "fmi2GetVersion");

    fmi2CallbackFunctions callbacks = {logger, calloc, free, NULL, NULL};
    fprintf(stderr, "FMI version %s\n", get_version());
    fmi2Component c = instantiate("c_host", fmi2CoSimulation, guid, resources, &callbacks, fmi2False, fmi2True);
    if (!c) { fprintf(stderr, "fmi2Instantiate failed\n"); return 2; }

    fmi2ValueReference out_vr[MAX_VARS];
    size_t n_out = 0;
    for (int i = 5; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "o:", 2) == 0 && n_out < MAX_VARS) {
            out_vr[n_out++] = (fmi2ValueReference)strtoul(a + 2, NULL, 10);
        } else if (strncmp(a, "r:", 2) == 0 || strncmp(a, "s:", 2) == 0) {
            const char *eq = strchr(a, '=');
            if (!eq) { fprintf(stderr, "bad argument %s\n", a); return 1; }
            fmi2ValueReference vr = (fmi2ValueReference)strtoul(a + 2, NULL, 10);
            if (a[0] == 'r') {
                fmi2Real v = atof(eq + 1);
                CHECK(set_real(c, &vr, 1, &v), "fmi2SetReal");
            } else {
                fmi2String v = eq + 1;
                CHECK(set_string(c, &vr, 1, &v), "fmi2SetString");
            }
        } else {
            fprintf(stderr, "bad argument %s\n", a); return 1;
        }
    }
    CHECK(setup(c, fmi2False, 0.0, 0.0, fmi2False, 0.0), "fmi2SetupExperiment");
    CHECK(enter(c), "fmi2EnterInitializationMode");
    CHECK(exit_init(c), "fmi2ExitInitializationMode");

    fmi2Real values[MAX_VARS];
    double t = 0.0;
    for (long k = 0; k <= nsteps; k++) {
        if (k > 0) {
            /* communication points t_k = k * step, as FMPy computes them */
            double t_next = k * step;
            CHECK(do_step(c, t, t_next - t, fmi2True), "fmi2DoStep");
            t = t_next;
        }
        CHECK(get_real(c, out_vr, n_out, values), "fmi2GetReal");
        printf("%.17g", t);
        for (size_t i = 0; i < n_out; i++) printf(" %.17g", values[i]);
        printf("\n");
        fflush(stdout);
    }
    CHECK(terminate(c), "fmi2Terminate");
    free_instance(c);
    fflush(stdout);
    fflush(stderr);
    /* Leave without running the library destructors: pythonfmu finalises the
     * embedded interpreter (Py_FinalizeEx) when the library is unloaded at exit,
     * and scipy's extension modules can crash there (seen with scipy 1.x,
     * _uarray). All results are written; skip that. */
    _exit(0);
}
