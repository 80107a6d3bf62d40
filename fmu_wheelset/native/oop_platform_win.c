/* Windows part of the out-of-process mode (out_of_process.h): NOT YET
 * IMPLEMENTED (issue 17). Every function fails cleanly, so on win64
 * WHEELSET_FMU_OUT_OF_PROCESS=1 makes fmi2Instantiate return NULL with the
 * reason logged; the in-process mode is unaffected. A full version would use
 * CreateFileMappingW (named), CreateProcessW, WaitForSingleObject on the
 * process handle and WaitOnAddress-free polling of the sequence words. */
#define WIN32_LEAN_AND_MEAN
#include "out_of_process.h"

#include <windows.h>
#include <stdio.h>

oop_region *oop_region_create(char *name, size_t name_size, char *err, size_t err_size) {
    (void)name; (void)name_size;
    snprintf(err, err_size, "the out-of-process mode is not implemented on Windows yet");
    return NULL;
}
void *oop_region_address(oop_region *r) { (void)r; return NULL; }
void oop_region_unlink(oop_region *r) { (void)r; }
void oop_region_destroy(oop_region *r) { (void)r; }
oop_child *oop_child_start(char *const argv[], const char *env_entry, char *err, size_t err_size) {
    (void)argv; (void)env_entry;
    snprintf(err, err_size, "the out-of-process mode is not implemented on Windows yet");
    return NULL;
}
int oop_child_pid(oop_child *c) { (void)c; return 0; }
int oop_child_alive(oop_child *c, char *how, size_t how_size) { (void)c; snprintf(how, how_size, "not started"); return 0; }
void oop_child_kill(oop_child *c) { (void)c; }
void oop_child_release(oop_child *c) { (void)c; }
int oop_wait_change(volatile uint32_t *word, uint32_t expected, int timeout_ms) {
    ULONGLONG until = GetTickCount64() + (ULONGLONG)timeout_ms;
    while (GetTickCount64() < until) {
        if (*word != expected) return 1;
        Sleep(0);
    }
    return *word != expected;
}
void oop_wake(volatile uint32_t *word) { (void)word; }
int oop_library_path(char *out, size_t size) { (void)out; (void)size; return -1; }
double oop_now(void) { return (double)GetTickCount64() * 1e-3; }
