/* POSIX part of the out-of-process mode (out_of_process.h): shm_open region,
 * posix_spawn child, waitpid liveness, futex wait on Linux (short sleeps
 * elsewhere), dladdr for the library's own path. */
#define _GNU_SOURCE
#include "out_of_process.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#endif

extern char **environ;

struct oop_region { char name[64]; void *address; int linked; };
struct oop_child { pid_t pid; int reaped; };

double oop_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

oop_region *oop_region_create(char *name, size_t name_size, char *err, size_t err_size) {
    static unsigned counter = 0;
    oop_region *r = (oop_region *)calloc(1, sizeof *r);
    if (r == NULL) { snprintf(err, err_size, "out of memory"); return NULL; }
    int fd = -1;
    for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
        snprintf(r->name, sizeof r->name, "/wheelset-fmu-%ld-%u-%ld", (long)getpid(), ++counter,
                 (long)(oop_now() * 1e6) % 1000000);
        fd = shm_open(r->name, O_RDWR | O_CREAT | O_EXCL, 0600);
    }
    if (fd < 0) { snprintf(err, err_size, "shm_open: %s", strerror(errno)); free(r); return NULL; }
    if (ftruncate(fd, (off_t)OOP_REGION_SIZE) != 0) {
        snprintf(err, err_size, "ftruncate of the shared region: %s", strerror(errno));
        close(fd); shm_unlink(r->name); free(r); return NULL;
    }
    r->address = mmap(NULL, OOP_REGION_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (r->address == MAP_FAILED) {
        snprintf(err, err_size, "mmap of the shared region: %s", strerror(errno));
        shm_unlink(r->name); free(r); return NULL;
    }
    r->linked = 1;
    snprintf(name, name_size, "%s", r->name);
    return r;
}

void *oop_region_address(oop_region *r) { return r->address; }

void oop_region_unlink(oop_region *r) {
    if (r->linked) { shm_unlink(r->name); r->linked = 0; }
}

void oop_region_destroy(oop_region *r) {
    if (r == NULL) return;
    oop_region_unlink(r);
    munmap(r->address, OOP_REGION_SIZE);
    free(r);
}

oop_child *oop_child_start(char *const argv[], const char *env_entry, char *err, size_t err_size) {
    size_t n = 0;
    while (environ[n]) n++;
    char **env = (char **)calloc(n + 2, sizeof(char *));
    oop_child *c = (oop_child *)calloc(1, sizeof *c);
    if (env == NULL || c == NULL) { free(env); free(c); snprintf(err, err_size, "out of memory"); return NULL; }
    size_t k = 0;
    size_t key_len = strchr(env_entry, '=') ? (size_t)(strchr(env_entry, '=') - env_entry) + 1 : 0;
    for (size_t i = 0; i < n; i++)
        if (key_len == 0 || strncmp(environ[i], env_entry, key_len) != 0) env[k++] = environ[i];
    env[k++] = (char *)env_entry;
    env[k] = NULL;
    int rc = posix_spawn(&c->pid, argv[0], NULL, NULL, argv, env);
    free(env);
    if (rc != 0) {
        snprintf(err, err_size, "cannot start %s: %s", argv[0], strerror(rc));
        free(c);
        return NULL;
    }
    return c;
}

int oop_child_pid(oop_child *c) { return (int)c->pid; }

int oop_child_alive(oop_child *c, char *how, size_t how_size) {
    if (c->reaped) { if (how_size) snprintf(how, how_size, "exited"); return 0; }
    int status = 0;
    pid_t r = waitpid(c->pid, &status, WNOHANG);
    if (r == 0) return 1;
    c->reaped = 1;
    if (r < 0) snprintf(how, how_size, "is gone (%s)", strerror(errno));
    else if (WIFSIGNALED(status)) snprintf(how, how_size, "was killed by signal %d", WTERMSIG(status));
    else snprintf(how, how_size, "exited with status %d", WEXITSTATUS(status));
    return 0;
}

void oop_child_kill(oop_child *c) {
    if (c->reaped) return;
    kill(c->pid, SIGKILL);
    int status;
    while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR) {}
    c->reaped = 1;
}

void oop_child_release(oop_child *c) { free(c); }

int oop_wait_change(volatile uint32_t *word, uint32_t expected, int timeout_ms) {
    /* spin ~20 us, then yield the processor up to 2 ms (a doStep of the core
     * takes 30-200 us: the answer usually comes in this phase, without the
     * wake-up latency of a sleep), then sleep on the word */
    double start = oop_now();
    for (int i = 0; ; i++) {
        if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != expected) return 1;
        if ((i & 63) == 63) {
            double waited = oop_now() - start;
            if (waited > 2e-3 || waited * 1e3 > timeout_ms) break;
            if (waited > 20e-6) sched_yield();
        }
    }
#ifdef __linux__
    struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, expected, &ts, NULL, 0);
#else
    double until = start + timeout_ms * 1e-3;
    while (oop_now() < until) {
        if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != expected) return 1;
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
    }
#endif
    return __atomic_load_n(word, __ATOMIC_ACQUIRE) != expected;
}

void oop_wake(volatile uint32_t *word) {
#ifdef __linux__
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, 1, NULL, NULL, 0);
#else
    (void)word;
#endif
}

int oop_library_path(char *out, size_t size) {
    Dl_info info;
    if (dladdr((void *)&oop_library_path, &info) == 0 || info.dli_fname == NULL) return -1;
    snprintf(out, size, "%s", info.dli_fname);
    return 0;
}

int oop_make_executable(const char *path, char *err, size_t err_size) {
    struct stat st;
    if (access(path, X_OK) == 0) return 0;
    if (stat(path, &st) != 0 || chmod(path, (st.st_mode & 07777) | S_IXUSR) != 0 || access(path, X_OK) != 0) {
        snprintf(err, err_size, "the FMU's runtime interpreter %s is not executable and cannot be "
                 "made so (%s)", path, strerror(errno));
        return -1;
    }
    return 0;
}
