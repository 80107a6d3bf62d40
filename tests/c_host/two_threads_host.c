/* FMI 2.0 host that instantiates the wheelset FMU from two threads at once,
 * as the process's very first fmi2Instantiate calls (FMI 2.0 section 2.1.5
 * allows different instances in different threads).
 *
 * Loads <unzipdir>/binaries/linux64/Wheelset.so, starts two threads that meet
 * at a barrier and then call fmi2Instantiate at the same moment: the first
 * use of the library in the process, so both race to start its embedded
 * Python. With <nsteps> > 0 each thread then initialises its own instance and
 * does <nsteps> doSteps of 1 ms (the two run at the same time too), and prints
 * "thread <k> <wheelset.distance> <wheelset.y> <wheel.left.Q>" (%.17g) read
 * after the last step; with 0 it frees the instance at once.
 *
 * usage: two_threads_host <unzipdir> <guid> <nsteps> <vr distance> <vr y> <vr Q>
 * Exit status: 0 both threads clean, 2 an FMI call failed, 3 fmi2Instantiate
 * returned NULL in a thread. A crash of the process is what the test looks for.
 * No environment set-up: the FMU finds its Python from its resources.
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2FunctionTypes.h"   /* from FMPy's c-code folder (FMI 2.0 standard headers) */

#define HOST_LOG_MIN_STATUS fmi2Warning
#include "host_logger.h"

static struct {
    fmi2InstantiateTYPE *instantiate;
    fmi2SetupExperimentTYPE *setup;
    fmi2EnterInitializationModeTYPE *enter;
    fmi2ExitInitializationModeTYPE *exit_init;
    fmi2DoStepTYPE *do_step;
    fmi2GetRealTYPE *get_real;
    fmi2TerminateTYPE *terminate;
    fmi2FreeInstanceTYPE *free_instance;
} fmi;

static const char *guid;
static char resources[PATH_MAX + 64];
static long nsteps;
static fmi2ValueReference read_vr[3];
static pthread_barrier_t start_together;

typedef struct { int index; int exit_code; double read[3]; } Job;

static void *run(void *arg) {
    Job *job = (Job *)arg;
    char name[32];
    snprintf(name, sizeof name, "thread%d", job->index);
    fmi2CallbackFunctions callbacks = {logger, calloc, free, NULL, NULL};
    pthread_barrier_wait(&start_together);
    fmi2Component c = fmi.instantiate(name, fmi2CoSimulation, guid, resources, &callbacks,
                                      fmi2False, fmi2False);
    if (c == NULL) { job->exit_code = 3; return NULL; }
    job->exit_code = 2;
    if (nsteps > 0) {
        if (fmi.setup(c, fmi2False, 0.0, 0.0, fmi2False, 0.0) > fmi2Warning) goto done;
        if (fmi.enter(c) > fmi2Warning || fmi.exit_init(c) > fmi2Warning) goto done;
        for (long k = 1; k <= nsteps; k++)
            if (fmi.do_step(c, (k - 1) * 1e-3, 1e-3, fmi2True) > fmi2Warning) goto done;
        if (fmi.get_real(c, read_vr, 3, job->read) > fmi2Warning) goto done;
        if (fmi.terminate(c) > fmi2Warning) goto done;
    }
    job->exit_code = 0;
done:
    fmi.free_instance(c);
    return NULL;
}

static void *sym(void *lib, const char *name) {
    void *f = dlsym(lib, name);
    if (!f) { fprintf(stderr, "missing symbol %s\n", name); exit(2); }
    return f;
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: two_threads_host unzipdir guid nsteps vr_distance vr_y vr_Q\n");
        return 1;
    }
    char absdir[PATH_MAX], libpath[PATH_MAX + 64];
    if (!realpath(argv[1], absdir)) { perror(argv[1]); return 1; }
    guid = argv[2];
    nsteps = atol(argv[3]);
    for (int i = 0; i < 3; i++) read_vr[i] = (fmi2ValueReference)strtoul(argv[4 + i], NULL, 10);
    snprintf(libpath, sizeof libpath, "%s/binaries/linux64/Wheelset.so", absdir);
    snprintf(resources, sizeof resources, "file://%s/resources", absdir);
    void *lib = dlopen(libpath, RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 2; }
    fmi.instantiate = (fmi2InstantiateTYPE *)sym(lib, "fmi2Instantiate");
    fmi.setup = (fmi2SetupExperimentTYPE *)sym(lib, "fmi2SetupExperiment");
    fmi.enter = (fmi2EnterInitializationModeTYPE *)sym(lib, "fmi2EnterInitializationMode");
    fmi.exit_init = (fmi2ExitInitializationModeTYPE *)sym(lib, "fmi2ExitInitializationMode");
    fmi.do_step = (fmi2DoStepTYPE *)sym(lib, "fmi2DoStep");
    fmi.get_real = (fmi2GetRealTYPE *)sym(lib, "fmi2GetReal");
    fmi.terminate = (fmi2TerminateTYPE *)sym(lib, "fmi2Terminate");
    fmi.free_instance = (fmi2FreeInstanceTYPE *)sym(lib, "fmi2FreeInstance");

    pthread_barrier_init(&start_together, NULL, 2);
    pthread_t threads[2];
    Job jobs[2] = {{0, 1, {0}}, {1, 1, {0}}};
    for (int k = 0; k < 2; k++) pthread_create(&threads[k], NULL, run, &jobs[k]);
    for (int k = 0; k < 2; k++) pthread_join(threads[k], NULL);
    pthread_barrier_destroy(&start_together);
    int code = 0;
    for (int k = 0; k < 2; k++) {
        if (jobs[k].exit_code > code) code = jobs[k].exit_code;
        if (jobs[k].exit_code == 0 && nsteps > 0)
            printf("thread %d %.17g %.17g %.17g\n", k, jobs[k].read[0], jobs[k].read[1], jobs[k].read[2]);
    }
    fflush(stdout);
    if (dlclose(lib) != 0) { fprintf(stderr, "dlclose: %s\n", dlerror()); return 2; }
    return code;
}
