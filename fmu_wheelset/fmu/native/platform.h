/* The only operating-system calls of the native FMI front end.
 *
 * platform_posix.c implements them for Linux and macOS; a platform_windows.c
 * (LoadLibraryW, GetProcAddress, ...) is all another OS needs.
 * Everything else in fmu_wheelset/fmu/native is portable C99. */
#ifndef WHEELSET_PLATFORM_H
#define WHEELSET_PLATFORM_H

#include <stddef.h>

/* Separator of a list of directories in one environment variable (':' or ';'). */
extern const char platform_path_list_separator;

/* A shared library loaded with its symbols visible to the libraries it loads
 * later (RTLD_GLOBAL: CPython's extension modules need the interpreter's
 * symbols). NULL on failure, with the reason in err (err_size bytes). */
void *platform_load_library_global(const char *path, char *err, size_t err_size);

/* A symbol of a library from platform_load_library_global, or NULL. */
void *platform_library_symbol(void *library, const char *name);

/* A symbol already loaded in the process (the host's own interpreter when the
 * host is itself Python), or NULL. */
void *platform_process_symbol(const char *name);

/* The value of an environment variable, or NULL when unset or empty. */
const char *platform_getenv(const char *name);

/* 1 if path names an existing regular file, else 0. */
int platform_is_file(const char *path);

/* One process-wide lock, statically initialised (usable before anything else
 * runs): held around the start of the Python runtime, which two host threads
 * may ask for at the same time with their first fmi2Instantiate. */
void platform_runtime_lock(void);
void platform_runtime_unlock(void);

#endif
