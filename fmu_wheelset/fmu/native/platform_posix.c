/* POSIX implementation of platform.h (Linux, macOS). */
#define _GNU_SOURCE   /* RTLD_DEFAULT */
#include "platform.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

const char platform_path_list_separator = ':';

void *platform_load_library_global(const char *path, char *err, size_t err_size) {
    void *library = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (library == NULL && err_size > 0) {
        const char *reason = dlerror();
        snprintf(err, err_size, "%s", reason ? reason : "unknown dlopen error");
    }
    return library;
}

void *platform_library_symbol(void *library, const char *name) {
    return dlsym(library, name);
}

void *platform_process_symbol(const char *name) {
    return dlsym(RTLD_DEFAULT, name);
}

const char *platform_getenv(const char *name) {
    const char *value = getenv(name);
    return (value != NULL && value[0] != '\0') ? value : NULL;
}

int platform_is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static pthread_mutex_t runtime_mutex = PTHREAD_MUTEX_INITIALIZER;

void platform_runtime_lock(void) {
    pthread_mutex_lock(&runtime_mutex);
}

void platform_runtime_unlock(void) {
    pthread_mutex_unlock(&runtime_mutex);
}
