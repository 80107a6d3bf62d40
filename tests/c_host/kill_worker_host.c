/* C host for the out-of-process mode: runs the FMU with
 * WHEELSET_FMU_OUT_OF_PROCESS=1 set by the caller, kills the worker process
 * with SIGKILL after <nsteps> steps and checks that the next fmi2DoStep is
 * fmi2Error within 1 s and every later call fmi2Error; then frees the
 * instance, dlcloses and returns from main.
 *
 * usage: kill_worker_host <unzipdir> <guid> <step> <nsteps>
 * prints "killed worker <pid>; fmi2DoStep -> <status> after <ms> ms"
 * exit: 0 as expected, 2 a call failed before the kill, 3 instantiate failed,
 * 4 the kill was not reported as fmi2Error within 1 s. */
#include <dlfcn.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fmi2FunctionTypes.h"

#include "host_logger.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

#define SYM(type, name) type *name##_f = (type *)dlsym(lib, #name); \
    if (!name##_f) { fprintf(stderr, "missing %s\n", #name); return 2; }

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: %s unzipdir guid step nsteps\n", argv[0]); return 2; }
    char path[4096], uri[4200];
    snprintf(path, sizeof path, "%s/binaries/linux64/Wheelset.so", argv[1]);
    snprintf(uri, sizeof uri, "file://%s/resources", argv[1]);
    double h = atof(argv[3]);
    int n = atoi(argv[4]);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 2; }
    SYM(fmi2InstantiateTYPE, fmi2Instantiate)
    SYM(fmi2SetupExperimentTYPE, fmi2SetupExperiment)
    SYM(fmi2EnterInitializationModeTYPE, fmi2EnterInitializationMode)
    SYM(fmi2ExitInitializationModeTYPE, fmi2ExitInitializationMode)
    SYM(fmi2DoStepTYPE, fmi2DoStep)
    SYM(fmi2GetRealTYPE, fmi2GetReal)
    SYM(fmi2FreeInstanceTYPE, fmi2FreeInstance)
    int (*worker_pid)(fmi2Component) = (int (*)(fmi2Component))dlsym(lib, "wheelset_worker_pid");
    if (!worker_pid) { fprintf(stderr, "missing wheelset_worker_pid\n"); return 2; }
    fmi2CallbackFunctions cb = {logger, calloc, free, NULL, NULL};
    fmi2Component c = fmi2Instantiate_f("killed", fmi2CoSimulation, argv[2], uri, &cb, fmi2False, fmi2False);
    if (!c) return 3;
    if (fmi2SetupExperiment_f(c, fmi2False, 0, 0, fmi2False, 0) > fmi2Warning ||
        fmi2EnterInitializationMode_f(c) > fmi2Warning || fmi2ExitInitializationMode_f(c) > fmi2Warning)
        return 2;
    double t = 0;
    for (int i = 0; i < n; i++, t += h)
        if (fmi2DoStep_f(c, t, h, fmi2True) > fmi2Warning) { fprintf(stderr, "step %d failed\n", i); return 2; }
    int pid = worker_pid(c);
    if (pid <= 0) { fprintf(stderr, "not out of process (set WHEELSET_FMU_OUT_OF_PROCESS=1)\n"); return 2; }
    kill(pid, SIGKILL);
    double start = now();
    fmi2Status s = fmi2DoStep_f(c, t, h, fmi2True);
    double elapsed = now() - start;
    fmi2ValueReference vr = 75;
    double value;
    fmi2Status later = fmi2GetReal_f(c, &vr, 1, &value);
    printf("killed worker %d; fmi2DoStep -> %d after %.1f ms; fmi2GetReal then -> %d\n",
           pid, (int)s, elapsed * 1e3, (int)later);
    fmi2FreeInstance_f(c);
    dlclose(lib);
    return (s == fmi2Error && later == fmi2Error && elapsed < 1.0) ? 0 : 4;
}
