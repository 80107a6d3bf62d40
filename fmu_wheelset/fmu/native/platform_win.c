/* Windows implementation of platform.h (win64, cross-compiled with zig cc).
 * Paths arrive as UTF-8 and are converted to UTF-16 for the wide
 * Win32 calls. Built and its exports checked here, not run (no Windows host). */
#define WIN32_LEAN_AND_MEAN
#include "platform.h"

#include <windows.h>
#define PSAPI_VERSION 2   /* K32EnumProcessModules from kernel32: no psapi.lib */
#include <psapi.h>
#include <stdio.h>
#include <stdlib.h>

const char platform_path_list_separator = ';';

/* UTF-8 -> newly allocated UTF-16 (free()), or NULL */
static wchar_t *wide_of(const char *utf8) {
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8, -1, NULL, 0);
    if (n <= 0) return NULL;
    wchar_t *w = (wchar_t *)malloc((size_t)n * sizeof(wchar_t));
    if (w == NULL) return NULL;
    if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8, -1, w, n) != n) { free(w); return NULL; }
    return w;
}

static void windows_error_text(DWORD code, char *err, size_t err_size) {
    char text[512];
    DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code,
                             0, text, (DWORD)sizeof text, NULL);
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' ')) text[--n] = '\0';
    snprintf(err, err_size, "Windows error %lu: %s", (unsigned long)code, n > 0 ? text : "(no text)");
}

void *platform_load_library_global(const char *path, char *err, size_t err_size) {
    /* Windows resolves symbols per module: there is no RTLD_GLOBAL. CPython's
     * extension modules link python3X.dll by name and find this one loaded.
     * LOAD_WITH_ALTERED_SEARCH_PATH: the DLL's own folder is searched for its
     * dependencies (vcruntime, python3.dll), as python.exe would. */
    wchar_t *wide = wide_of(path);
    if (wide == NULL) {
        if (err_size > 0) snprintf(err, err_size, "the path is not valid UTF-8");
        return NULL;
    }
    HMODULE library = LoadLibraryExW(wide, NULL, LOAD_WITH_ALTERED_SEARCH_PATH);
    DWORD code = GetLastError();
    free(wide);
    if (library == NULL && err_size > 0) windows_error_text(code, err, err_size);
    return (void *)library;
}

void *platform_library_symbol(void *library, const char *name) {
    return (void *)GetProcAddress((HMODULE)library, name);
}

/* dlsym(RTLD_DEFAULT) has no Windows equivalent: look through every module of
 * the process (the host's python3X.dll when the host is Python). */
void *platform_process_symbol(const char *name) {
    HMODULE modules[1024];
    DWORD needed = 0;
    if (!K32EnumProcessModules(GetCurrentProcess(), modules, (DWORD)sizeof modules, &needed))
        return NULL;
    size_t count = needed / sizeof(HMODULE);
    if (count > sizeof modules / sizeof modules[0]) count = sizeof modules / sizeof modules[0];
    for (size_t i = 0; i < count; i++) {
        FARPROC f = GetProcAddress(modules[i], name);
        if (f != NULL) return (void *)f;
    }
    return NULL;
}

const char *platform_getenv(const char *name) {
    /* getenv (the C runtime's ANSI copy of the environment) is enough for the
     * ASCII names used here; values are returned as the C runtime holds them. */
    const char *value = getenv(name);
    return (value != NULL && value[0] != '\0') ? value : NULL;
}

int platform_is_file(const char *path) {
    wchar_t *wide = wide_of(path);
    if (wide == NULL) return 0;
    DWORD attributes = GetFileAttributesW(wide);
    free(wide);
    return attributes != INVALID_FILE_ATTRIBUTES && !(attributes & FILE_ATTRIBUTE_DIRECTORY);
}

static SRWLOCK runtime_lock = SRWLOCK_INIT;

void platform_runtime_lock(void) {
    AcquireSRWLockExclusive(&runtime_lock);
}

void platform_runtime_unlock(void) {
    ReleaseSRWLockExclusive(&runtime_lock);
}
