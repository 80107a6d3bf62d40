/* Windows part of the out-of-process mode (out_of_process.h): a named,
 * pagefile-backed file mapping (CreateFileMappingA, "Local\" namespace), the
 * worker started with CreateProcessA (a command line quoted by the rules of
 * CommandLineToArgvW, which the MSVC runtime of python.exe follows), liveness
 * from the process handle (WaitForSingleObject / GetExitCodeProcess), a spin
 * then Sleep polling of the sequence words (WaitOnAddress works only inside
 * one process), and GetModuleHandleExA for the library's own path.
 * Cross-compiled by zig (fmu_wheelset/packaging/cross_build.py) and its exports checked
 * here; it has not been run on Windows (no Windows machine in the project's
 * test set-up). */
#define WIN32_LEAN_AND_MEAN
#include "out_of_process.h"

#include <windows.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct oop_region { char name[96]; HANDLE mapping; void *address; };
struct oop_child { HANDLE process; DWORD pid; int reaped; };

double oop_now(void) {
    static LARGE_INTEGER frequency;
    LARGE_INTEGER now;
    if (frequency.QuadPart == 0) QueryPerformanceFrequency(&frequency);
    QueryPerformanceCounter(&now);
    return (double)now.QuadPart / (double)frequency.QuadPart;
}

static void last_error_text(const char *what, char *err, size_t err_size) {
    snprintf(err, err_size, "%s failed (Windows error %lu)", what, (unsigned long)GetLastError());
}

oop_region *oop_region_create(char *name, size_t name_size, char *err, size_t err_size) {
    static unsigned counter = 0;
    oop_region *r = (oop_region *)calloc(1, sizeof *r);
    if (r == NULL) { snprintf(err, err_size, "out of memory"); return NULL; }
    for (int attempt = 0; attempt < 16 && r->mapping == NULL; attempt++) {
        snprintf(r->name, sizeof r->name, "Local\\wheelset-fmu-%lu-%u-%lu",
                 (unsigned long)GetCurrentProcessId(), ++counter,
                 (unsigned long)((unsigned long long)(oop_now() * 1e6) % 1000000ull));
        HANDLE m = CreateFileMappingA(INVALID_HANDLE_VALUE, NULL, PAGE_READWRITE, 0,
                                      (DWORD)OOP_REGION_SIZE, r->name);
        if (m != NULL && GetLastError() == ERROR_ALREADY_EXISTS) { CloseHandle(m); m = NULL; }
        r->mapping = m;
    }
    if (r->mapping == NULL) { last_error_text("CreateFileMapping", err, err_size); free(r); return NULL; }
    r->address = MapViewOfFile(r->mapping, FILE_MAP_ALL_ACCESS, 0, 0, OOP_REGION_SIZE);
    if (r->address == NULL) {
        last_error_text("MapViewOfFile", err, err_size);
        CloseHandle(r->mapping); free(r); return NULL;
    }
    snprintf(name, name_size, "%s", r->name);
    return r;
}

void *oop_region_address(oop_region *r) { return r->address; }

/* a named mapping lives while a handle to it is open: nothing to remove */
void oop_region_unlink(oop_region *r) { (void)r; }

void oop_region_destroy(oop_region *r) {
    if (r == NULL) return;
    if (r->address) UnmapViewOfFile(r->address);
    if (r->mapping) CloseHandle(r->mapping);
    free(r);
}

/* Append one argument to a command line, quoted so that CommandLineToArgvW
 * gives it back unchanged: inside quotes, n backslashes before a quote become
 * 2n + 1, n backslashes at the end 2n. Returns -1 when it does not fit. */
static int append_argument(char *line, size_t size, size_t *used, const char *arg) {
    size_t at = *used;
#define PUT(ch) do { if (at + 1 >= size) return -1; line[at++] = (ch); } while (0)
    if (at > 0) PUT(' ');
    PUT('"');
    for (const char *p = arg; ; p++) {
        size_t backslashes = 0;
        while (*p == '\\') { backslashes++; p++; }
        if (*p == '\0') {
            for (size_t i = 0; i < 2 * backslashes; i++) PUT('\\');
            break;
        }
        if (*p == '"') {
            for (size_t i = 0; i < 2 * backslashes + 1; i++) PUT('\\');
        } else {
            for (size_t i = 0; i < backslashes; i++) PUT('\\');
        }
        PUT(*p);
    }
    PUT('"');
#undef PUT
    line[at] = '\0';
    *used = at;
    return 0;
}

/* The current environment block with env_entry ("KEY=value") replacing any
 * entry of the same key; free() it. NULL when out of memory. */
static char *environment_with(const char *env_entry) {
    char *current = GetEnvironmentStringsA();
    if (current == NULL) return NULL;
    size_t key_len = strchr(env_entry, '=') ? (size_t)(strchr(env_entry, '=') - env_entry) + 1 : 0;
    size_t total = 0;
    for (const char *p = current; *p; p += strlen(p) + 1) total += strlen(p) + 1;
    char *block = (char *)malloc(total + strlen(env_entry) + 2);
    if (block == NULL) { FreeEnvironmentStringsA(current); return NULL; }
    size_t at = 0;
    for (const char *p = current; *p; p += strlen(p) + 1) {
        if (key_len && _strnicmp(p, env_entry, key_len) == 0) continue;
        size_t n = strlen(p) + 1;
        memcpy(block + at, p, n);
        at += n;
    }
    memcpy(block + at, env_entry, strlen(env_entry) + 1);
    at += strlen(env_entry) + 1;
    block[at] = '\0';
    FreeEnvironmentStringsA(current);
    return block;
}

oop_child *oop_child_start(char *const argv[], const char *env_entry, char *err, size_t err_size) {
    size_t size = 1;
    for (size_t i = 0; argv[i]; i++) size += 2 * strlen(argv[i]) + 3;
    char *line = (char *)malloc(size);
    oop_child *c = (oop_child *)calloc(1, sizeof *c);
    char *env = environment_with(env_entry);
    if (line == NULL || c == NULL || env == NULL) {
        free(line); free(c); free(env);
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    size_t used = 0;
    line[0] = '\0';
    for (size_t i = 0; argv[i]; i++)
        if (append_argument(line, size, &used, argv[i]) != 0) {
            free(line); free(c); free(env);
            snprintf(err, err_size, "the worker's command line is too long");
            return NULL;
        }
    STARTUPINFOA startup;
    PROCESS_INFORMATION info;
    memset(&startup, 0, sizeof startup);
    startup.cb = sizeof startup;
    memset(&info, 0, sizeof info);
    BOOL ok = CreateProcessA(argv[0], line, NULL, NULL, FALSE, CREATE_NO_WINDOW, env, NULL,
                             &startup, &info);
    free(line);
    free(env);
    if (!ok) {
        char what[600];
        snprintf(what, sizeof what, "starting %.500s", argv[0]);
        last_error_text(what, err, err_size);
        free(c);
        return NULL;
    }
    CloseHandle(info.hThread);
    c->process = info.hProcess;
    c->pid = info.dwProcessId;
    return c;
}

int oop_child_pid(oop_child *c) { return (int)c->pid; }

int oop_child_alive(oop_child *c, char *how, size_t how_size) {
    if (c->reaped) { if (how_size) snprintf(how, how_size, "exited"); return 0; }
    if (WaitForSingleObject(c->process, 0) == WAIT_TIMEOUT) return 1;
    DWORD code = 0;
    c->reaped = 1;
    if (!GetExitCodeProcess(c->process, &code)) snprintf(how, how_size, "is gone");
    else snprintf(how, how_size, "exited with status %lu", (unsigned long)code);
    return 0;
}

void oop_child_kill(oop_child *c) {
    if (c->reaped) return;
    TerminateProcess(c->process, 1);
    WaitForSingleObject(c->process, 5000);
    c->reaped = 1;
}

void oop_child_release(oop_child *c) {
    if (c == NULL) return;
    if (c->process) CloseHandle(c->process);
    free(c);
}

int oop_wait_change(volatile uint32_t *word, uint32_t expected, int timeout_ms) {
    /* spin ~20 us, then yield up to 2 ms, then 1 ms sleeps (as the POSIX
     * version, without a cross-process futex) */
    double start = oop_now();
    double until = start + timeout_ms * 1e-3;
    for (int i = 0; ; i++) {
        if (InterlockedCompareExchange((volatile LONG *)word, 0, 0) != (LONG)expected) return 1;
        if ((i & 63) == 63) {
            double now = oop_now();
            if (now >= until) break;
            if (now - start > 2e-3) Sleep(1);
            else if (now - start > 20e-6) SwitchToThread();
        }
    }
    return InterlockedCompareExchange((volatile LONG *)word, 0, 0) != (LONG)expected;
}

void oop_wake(volatile uint32_t *word) { (void)word; }   /* the waiter polls */

int oop_library_path(char *out, size_t size) {
    HMODULE module = NULL;
    if (!GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS |
                            GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                            (LPCSTR)(void *)&oop_library_path, &module))
        return -1;
    DWORD n = GetModuleFileNameA(module, out, (DWORD)size);
    return (n == 0 || n >= size) ? -1 : 0;
}

int oop_make_executable(const char *path, char *err, size_t err_size) {
    (void)path; (void)err; (void)err_size;
    return 0;                         /* Windows has no execute permission bit */
}
