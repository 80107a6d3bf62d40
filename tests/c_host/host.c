/* Minimal FMI 2.0 co-simulation host for the wheelset FMU (test of the C API,
 * like a Modelica tool's or Simulink's FMU import: dlopen + the C functions).
 *
 * Loads <unzipdir>/binaries/linux64/Wheelset.so with dlopen (win64: the
 * Wheelset.dll with LoadLibrary), instantiates it,
 * sets parameters/inputs, initialises, does <nsteps> doSteps of <step> s and
 * prints, after the initialisation and after every step, one line
 * "t v1 v2 ..." with the requested Real outputs (%.17g). Then it terminates,
 * frees the instance, dlcloses the library and returns from main.
 *
 * usage: host [options] <unzipdir> <guid> <step> <nsteps> [r:VR=VALUE | s:VR=STRING | o:VR] ...
 *   r:VR=VALUE   fmi2SetReal before initialisation (parameter or input)
 *   s:VR=STRING  fmi2SetString before initialisation
 *   I:VR=N, B:VR=0|1  fmi2SetInteger / fmi2SetBoolean before initialisation
 *   o:VR         a Real output to print
 *   i:VR, b:VR   an Integer / Boolean output read every step (not printed)
 * options:
 *   --name NAME       instance name (default c_host)
 *   --uri FORM        resource URI form: triple (file:///p, default), single (file:/p),
 *                     localhost (file://localhost/p), encoded (file:///p, every
 *                     character but letters, digits and / . - _ percent-encoded)
 *   --nan-test VR     after the steps: take the FMU state, set input VR to NaN,
 *                     expect fmi2Discard with fmi2Terminated false, restore the
 *                     state, set VR back, expect fmi2OK and fmi2Terminated false
 *   --derivative Z:U  after the steps: print "derivative <value>", the
 *                     fmi2GetDirectionalDerivative of Real output Z with respect
 *                     to Real input U (seed 1)
 *   --timing          print no rows; report on stderr the wall and process CPU
 *                     time of the stepping loop (doStep + reading every listed output)
 *   --startup-timing  report on stderr the wall and process CPU time of
 *                     fmi2Instantiate, of the initialization (the setters,
 *                     setup, enter and exit) and of the first doStep with its
 *                     outputs read (a cold start; the FMU already unpacked)
 * Exit status: 0 ok, 2 a call failed (its status is printed on stderr),
 * 3 fmi2Instantiate returned NULL, 4 an expectation of --nan-test failed.
 *
 * No environment set-up: the FMU finds its Python from its resources.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <math.h>
#include <time.h>

/* The few operating-system calls, for Linux (dlopen) and Windows (LoadLibrary;
 * the host cross-built with zig cc for win64 and run under Wine:
 * tests/hosts/windows_by_hand.sh). */
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#define PLATFORM_BINARY "binaries/win64/Wheelset.dll"
#define HOST_PATH_MAX 4096
static void *dlopen(const char *path, int flags) { (void)flags; return (void *)LoadLibraryA(path); }
static void *dlsym(void *lib, const char *name) { return (void *)GetProcAddress((HMODULE)lib, name); }
static int dlclose(void *lib) { return FreeLibrary((HMODULE)lib) ? 0 : -1; }
static const char *dlerror(void) {
    static char text[64];
    snprintf(text, sizeof text, "Windows error %lu", (unsigned long)GetLastError());
    return text;
}
#define RTLD_NOW 0
#define RTLD_LOCAL 0
/* an absolute path with forward slashes (C:/x/y), as the file URI needs it */
static char *realpath(const char *path, char *out) {
    if (_fullpath(out, path, HOST_PATH_MAX) == NULL) return NULL;
    for (char *p = out; *p; p++) if (*p == '\\') *p = '/';
    return out;
}
#undef CLOCK_MONOTONIC
#undef CLOCK_PROCESS_CPUTIME_ID
#define CLOCK_MONOTONIC 1
#define CLOCK_PROCESS_CPUTIME_ID 2
#define clock_gettime host_clock_gettime        /* not winpthreads' (a library more to ship) */
static int host_clock_gettime(int clock, struct timespec *ts) {
    double seconds;
    if (clock == CLOCK_MONOTONIC) {
        LARGE_INTEGER now, frequency;
        QueryPerformanceCounter(&now);
        QueryPerformanceFrequency(&frequency);
        seconds = (double)now.QuadPart / (double)frequency.QuadPart;
    } else {
        FILETIME created, exited, kernel, user;
        GetProcessTimes(GetCurrentProcess(), &created, &exited, &kernel, &user);
        seconds = 1e-7 * ((double)(((unsigned long long)kernel.dwHighDateTime << 32) | kernel.dwLowDateTime) +
                          (double)(((unsigned long long)user.dwHighDateTime << 32) | user.dwLowDateTime));
    }
    ts->tv_sec = (time_t)seconds;
    ts->tv_nsec = (long)((seconds - (double)ts->tv_sec) * 1e9);
    return 0;
}
#else
#include <dlfcn.h>
#include <unistd.h>
#define PLATFORM_BINARY "binaries/linux64/Wheelset.so"
#define HOST_PATH_MAX PATH_MAX
#endif

#include "fmi2FunctionTypes.h"   /* from FMPy's c-code folder (FMI 2.0 standard headers) */

#define MAX_VARS 256

#include "host_logger.h"

static void *sym(void *lib, const char *name) {
    void *f = dlsym(lib, name);
    if (!f) { fprintf(stderr, "missing symbol %s\n", name); exit(2); }
    return f;
}

#define CHECK(call, what) do { fmi2Status st_ = (call); \
    if (st_ > fmi2Warning) { fprintf(stderr, "%s failed with status %d\n", what, (int)st_); return 2; } } while (0)

static void uri_of(const char *dir, const char *form, char *out, size_t size) {
    if (strcmp(form, "single") == 0) { snprintf(out, size, "file:%s/resources", dir); return; }
    if (strcmp(form, "localhost") == 0) { snprintf(out, size, "file://localhost%s/resources", dir); return; }
    if (strcmp(form, "encoded") == 0) {
        char path[HOST_PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/resources", dir);
        size_t n = (size_t)snprintf(out, size, "file://");
        for (const char *p = path; *p && n + 4 < size; p++) {
            unsigned char ch = (unsigned char)*p;
            if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                ch == '/' || ch == '.' || ch == '-' || ch == '_')
                out[n++] = (char)ch;
            else
                n += (size_t)snprintf(out + n, size - n, "%%%02X", ch);
        }
        out[n] = '\0';
        return;
    }
#ifdef _WIN32
    snprintf(out, size, "file:///%s/resources", dir);      /* file:///C:/x/resources */
#else
    snprintf(out, size, "file://%s/resources", dir);
#endif
}

int main(int argc, char **argv) {
    const char *name = "c_host", *uri_form = "triple";
    long nan_vr = -1, derivative_z = -1, derivative_u = -1;
    int first = 1, timing = 0, startup_timing = 0;
    if (argc > 1 && strcmp(argv[1], "--timing") == 0) { timing = 1; argv[1] = argv[0]; argv++; argc--; }
    if (argc > 1 && strcmp(argv[1], "--startup-timing") == 0) {
        startup_timing = 1; argv[1] = argv[0]; argv++; argc--;
    }
    while (first < argc && strncmp(argv[first], "--", 2) == 0 && first + 1 < argc) {
        if (strcmp(argv[first], "--name") == 0) name = argv[first + 1];
        else if (strcmp(argv[first], "--uri") == 0) uri_form = argv[first + 1];
        else if (strcmp(argv[first], "--nan-test") == 0) nan_vr = atol(argv[first + 1]);
        else if (strcmp(argv[first], "--derivative") == 0) {
            if (sscanf(argv[first + 1], "%ld:%ld", &derivative_z, &derivative_u) != 2) {
                fprintf(stderr, "bad --derivative %s (Z:U)\n", argv[first + 1]); return 1;
            }
        }
        else { fprintf(stderr, "unknown option %s\n", argv[first]); return 1; }
        first += 2;
    }
    argc -= first - 1;
    argv += first - 1;
    if (argc < 5) { fprintf(stderr, "usage: host [options] unzipdir guid step nsteps [r:VR=V|s:VR=S|o:VR]...\n"); return 1; }
    const char *dir = argv[1], *guid = argv[2];
    double step = atof(argv[3]);
    long nsteps = atol(argv[4]);

    char absdir[HOST_PATH_MAX], libpath[HOST_PATH_MAX + 64], resources[3 * HOST_PATH_MAX + 64];
    if (!realpath(dir, absdir)) { perror(dir); return 1; }
    snprintf(libpath, sizeof libpath, "%s/" PLATFORM_BINARY, absdir);
    uri_of(absdir, uri_form, resources, sizeof resources);

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
    fmi2GetFMUstateTYPE *get_state = (fmi2GetFMUstateTYPE *)sym(lib, "fmi2GetFMUstate");
    fmi2SetFMUstateTYPE *set_state = (fmi2SetFMUstateTYPE *)sym(lib, "fmi2SetFMUstate");
    fmi2FreeFMUstateTYPE *free_state = (fmi2FreeFMUstateTYPE *)sym(lib, "fmi2FreeFMUstate");
    fmi2GetBooleanStatusTYPE *get_boolean_status = (fmi2GetBooleanStatusTYPE *)sym(lib, "fmi2GetBooleanStatus");

    fmi2CallbackFunctions callbacks = {logger, calloc, free, NULL, NULL};
    fprintf(stderr, "FMI version %s\n", get_version());
    fprintf(stderr, "resource URI %s\n", resources);
    struct timespec s_wall[4], s_cpu[4];      /* before instantiate, after it, after init, after step 1 */
    clock_gettime(CLOCK_MONOTONIC, &s_wall[0]);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &s_cpu[0]);
    fmi2Component c = instantiate(name, fmi2CoSimulation, guid, resources, &callbacks, fmi2False, fmi2True);
    if (!c) { fprintf(stderr, "fmi2Instantiate failed\n"); dlclose(lib); return 3; }
    clock_gettime(CLOCK_MONOTONIC, &s_wall[1]);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &s_cpu[1]);

    fmi2ValueReference out_vr[MAX_VARS], int_vr[MAX_VARS], bool_vr[MAX_VARS];
    size_t n_out = 0, n_int = 0, n_bool = 0;
    fmi2SetIntegerTYPE *set_integer = (fmi2SetIntegerTYPE *)sym(lib, "fmi2SetInteger");
    fmi2SetBooleanTYPE *set_boolean = (fmi2SetBooleanTYPE *)sym(lib, "fmi2SetBoolean");
    fmi2GetIntegerTYPE *get_integer = (fmi2GetIntegerTYPE *)sym(lib, "fmi2GetInteger");
    fmi2GetBooleanTYPE *get_boolean = (fmi2GetBooleanTYPE *)sym(lib, "fmi2GetBoolean");
    for (int i = 5; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "o:", 2) == 0 && n_out < MAX_VARS) {
            out_vr[n_out++] = (fmi2ValueReference)strtoul(a + 2, NULL, 10);
        } else if (strncmp(a, "i:", 2) == 0 && n_int < MAX_VARS) {
            int_vr[n_int++] = (fmi2ValueReference)strtoul(a + 2, NULL, 10);
        } else if (strncmp(a, "b:", 2) == 0 && n_bool < MAX_VARS) {
            bool_vr[n_bool++] = (fmi2ValueReference)strtoul(a + 2, NULL, 10);
        } else if (strncmp(a, "I:", 2) == 0 || strncmp(a, "B:", 2) == 0) {
            const char *eq = strchr(a, '=');
            if (!eq) { fprintf(stderr, "bad argument %s\n", a); return 1; }
            fmi2ValueReference vr = (fmi2ValueReference)strtoul(a + 2, NULL, 10);
            if (a[0] == 'I') {
                fmi2Integer v = (fmi2Integer)atol(eq + 1);
                CHECK(set_integer(c, &vr, 1, &v), "fmi2SetInteger");
            } else {
                fmi2Boolean v = atoi(eq + 1) ? fmi2True : fmi2False;
                CHECK(set_boolean(c, &vr, 1, &v), "fmi2SetBoolean");
            }
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
    clock_gettime(CLOCK_MONOTONIC, &s_wall[2]);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &s_cpu[2]);

    fmi2Real values[MAX_VARS];
    fmi2Integer ints[MAX_VARS];
    fmi2Boolean bools[MAX_VARS];
    double t = 0.0;
    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    for (long k = 0; k <= nsteps; k++) {
        if (k > 0) {
            /* communication points t_k = k * step, as FMPy computes them */
            double t_next = k * step;
            CHECK(do_step(c, t, t_next - t, fmi2True), "fmi2DoStep");
            t = t_next;
        }
        CHECK(get_real(c, out_vr, n_out, values), "fmi2GetReal");
        if (n_int) CHECK(get_integer(c, int_vr, n_int, ints), "fmi2GetInteger");
        if (n_bool) CHECK(get_boolean(c, bool_vr, n_bool, bools), "fmi2GetBoolean");
        if (startup_timing && k == (nsteps > 0 ? 1 : 0)) {
            clock_gettime(CLOCK_MONOTONIC, &s_wall[3]);
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &s_cpu[3]);
#define SECONDS(a, b) ((b).tv_sec - (a).tv_sec + 1e-9 * ((b).tv_nsec - (a).tv_nsec))
            fprintf(stderr, "startup: instantiate %.4f s, initialization %.4f s, first step %.4f s; "
                    "total %.4f s wall, %.4f s CPU\n", SECONDS(s_wall[0], s_wall[1]),
                    SECONDS(s_wall[1], s_wall[2]), SECONDS(s_wall[2], s_wall[3]),
                    SECONDS(s_wall[0], s_wall[3]), SECONDS(s_cpu[0], s_cpu[3]));
        }
        if (timing) continue;
        printf("%.17g", t);
        for (size_t i = 0; i < n_out; i++) printf(" %.17g", values[i]);
        printf("\n");
        fflush(stdout);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    if (timing)
        fprintf(stderr, "stepping %ld steps: %.6f s wall, %.6f s CPU, %zu Real + %zu Integer + %zu Boolean outputs read per step\n",
                nsteps, (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec),
                (c1.tv_sec - c0.tv_sec) + 1e-9 * (c1.tv_nsec - c0.tv_nsec), n_out, n_int, n_bool);
    if (nan_vr >= 0) {
        fmi2ValueReference vr = (fmi2ValueReference)nan_vr;
        fmi2Real saved_input, nan = NAN, before[MAX_VARS], after[MAX_VARS];
        fmi2FMUstate state = NULL;
        fmi2Boolean terminated = fmi2True;
        CHECK(get_real(c, &vr, 1, &saved_input), "fmi2GetReal (input)");
        CHECK(get_real(c, out_vr, n_out, before), "fmi2GetReal");
        CHECK(get_state(c, &state), "fmi2GetFMUstate");
        CHECK(set_real(c, &vr, 1, &nan), "fmi2SetReal (NaN)");
        fmi2Status st = do_step(c, t, step, fmi2True);
        printf("nan-step status %d\n", (int)st);
        if (st != fmi2Discard) { fprintf(stderr, "expected fmi2Discard, got %d\n", (int)st); return 4; }
        CHECK(get_boolean_status(c, fmi2Terminated, &terminated), "fmi2GetBooleanStatus");
        if (terminated) { fprintf(stderr, "fmi2Terminated true after a NaN input\n"); return 4; }
        CHECK(get_real(c, out_vr, n_out, after), "fmi2GetReal");
        if (memcmp(before, after, n_out * sizeof(fmi2Real)) != 0) {
            fprintf(stderr, "the discarded step changed the outputs\n"); return 4;
        }
        CHECK(set_state(c, state), "fmi2SetFMUstate");
        CHECK(set_real(c, &vr, 1, &saved_input), "fmi2SetReal (restored input)");
        st = do_step(c, t, step, fmi2True);
        printf("retry status %d\n", (int)st);
        if (st != fmi2OK) { fprintf(stderr, "expected fmi2OK after the restore, got %d\n", (int)st); return 4; }
        CHECK(get_boolean_status(c, fmi2Terminated, &terminated), "fmi2GetBooleanStatus");
        printf("terminated %d\n", (int)terminated);
        if (terminated) { fprintf(stderr, "fmi2Terminated true after a good step\n"); return 4; }
        CHECK(free_state(c, &state), "fmi2FreeFMUstate");
        t += step;
        CHECK(get_real(c, out_vr, n_out, values), "fmi2GetReal");
        printf("%.17g", t);
        for (size_t i = 0; i < n_out; i++) printf(" %.17g", values[i]);
        printf("\n");
    }
    if (derivative_z >= 0) {
        fmi2GetDirectionalDerivativeTYPE *derivative =
            (fmi2GetDirectionalDerivativeTYPE *)sym(lib, "fmi2GetDirectionalDerivative");
        fmi2ValueReference z = (fmi2ValueReference)derivative_z, u = (fmi2ValueReference)derivative_u;
        fmi2Real seed = 1.0, dz = NAN;
        CHECK(derivative(c, &z, 1, &u, 1, &seed, &dz), "fmi2GetDirectionalDerivative");
        printf("derivative %.17g\n", dz);
    }
    CHECK(terminate(c), "fmi2Terminate");
    free_instance(c);
    fflush(stdout);
    fflush(stderr);
    /* unload and return from main normally: the FMU must neither finalise an
     * interpreter nor leave anything behind that crashes the process's exit */
    if (dlclose(lib) != 0) { fprintf(stderr, "dlclose: %s\n", dlerror()); return 2; }
    return 0;
}
