/* Out-of-process mode of the native front end.
 *
 * With WHEELSET_FMU_OUT_OF_PROCESS=1 fmi2Instantiate starts a worker: a child
 * Python process (resources/<package>/native_worker.py) that loads this same
 * library and runs the instance in-process there. Every FMI call is forwarded
 * through one shared-memory region: a header (the call and its scalar
 * arguments, sequence numbers for request and response) and a payload (value
 * references, values, strings, FMU state bytes, log messages). Waiting is a
 * short spin, then a futex (Linux) or short sleeps (elsewhere); the parent
 * checks the child is alive while it waits, so a crashed or killed worker is
 * fmi2Error within a few tens of milliseconds, never a hang. Nothing read
 * back from the region is trusted: counts and lengths are checked against the
 * region's size before use, messages go to the host's logger through "%s". */
#ifndef WHEELSET_OUT_OF_PROCESS_H
#define WHEELSET_OUT_OF_PROCESS_H

#include <stddef.h>
#include <stdint.h>

#include "python_runtime.h"

#define OOP_MAGIC 0x57534f50u        /* "WSOP" */
#define OOP_VERSION 1u
#define OOP_REGION_SIZE (16u << 20)   /* virtual; pages are touched only when used */
#define OOP_LOG_SIZE (1u << 20)

typedef struct {
    uint32_t magic, version;
    uint32_t request_seq;            /* written by the parent, then woken */
    uint32_t response_seq;           /* written by the worker when done */
    uint32_t command;                /* OOP_* */
    int32_t status;                  /* fmi2Status of the call (worker) */
    uint32_t count;                  /* n of the call */
    uint32_t flag;                   /* a boolean argument / result */
    double real_args[3];
    uint64_t handle;                 /* FMU state handle (worker's) */
    uint64_t payload_used;           /* bytes of payload in the response */
    uint32_t log_count;              /* messages in the log area */
    uint32_t log_used;
    int32_t worker_pid;
    uint32_t reserved[7];
} oop_header;

#define OOP_HEADER_SPACE 4096u
#define OOP_PAYLOAD_OFFSET OOP_HEADER_SPACE
#define OOP_PAYLOAD_SIZE (OOP_REGION_SIZE - OOP_HEADER_SPACE - OOP_LOG_SIZE)
#define OOP_LOG_OFFSET (OOP_REGION_SIZE - OOP_LOG_SIZE)

enum {
    OOP_HELLO = 1, OOP_INSTANTIATE, OOP_FREE, OOP_SET_DEBUG_LOGGING, OOP_SETUP_EXPERIMENT,
    OOP_ENTER_INIT, OOP_EXIT_INIT, OOP_TERMINATE, OOP_RESET,
    OOP_GET_REAL, OOP_GET_INTEGER, OOP_GET_BOOLEAN, OOP_GET_STRING,
    OOP_SET_REAL, OOP_SET_INTEGER, OOP_SET_BOOLEAN, OOP_SET_STRING,
    OOP_DO_STEP, OOP_GET_REAL_STATUS, OOP_GET_BOOLEAN_STATUS,
    OOP_GET_STATE, OOP_SET_STATE, OOP_FREE_STATE, OOP_SERIALIZE, OOP_DESERIALIZE,
    OOP_EXIT
};

/* frontend_inproc.c: the resource folder of a URI and the Python the build recorded */
int wheelset_resources_and_python(const char *uri, char *resources, size_t resources_size,
                                  python_location *where, char *err, size_t err_size);

/* ---- operating-system part (oop_platform_posix.c, oop_platform_win.c) ---- */
typedef struct oop_region oop_region;    /* the shared region */
typedef struct oop_child oop_child;      /* the worker process */

/* A new shared region of OOP_REGION_SIZE bytes (zeroed), its name in name. */
oop_region *oop_region_create(char *name, size_t name_size, char *err, size_t err_size);
void *oop_region_address(oop_region *r);
void oop_region_unlink(oop_region *r);   /* name removed (the mapping stays) */
void oop_region_destroy(oop_region *r);

/* Start argv[0] with argv (NULL-terminated), extra environment entry env_entry. */
oop_child *oop_child_start(char *const argv[], const char *env_entry, char *err, size_t err_size);
int oop_child_pid(oop_child *c);
/* 1 while running; 0 once it exited (what happened in how, e.g. "killed by signal 9") */
int oop_child_alive(oop_child *c, char *how, size_t how_size);
void oop_child_kill(oop_child *c);       /* kill and reap */
void oop_child_release(oop_child *c);

/* Wait until *word != expected, up to timeout_ms (spin first); 1 if changed. */
int oop_wait_change(volatile uint32_t *word, uint32_t expected, int timeout_ms);
void oop_wake(volatile uint32_t *word);
/* Make the worker's interpreter executable by its owner when an unzipper left
 * it without the permission (zip files keep no mode for most tools): 0, or -1
 * with the reason in err. */
int oop_make_executable(const char *path, char *err, size_t err_size);
/* the path of this shared library (for the worker to load), or -1 */
int oop_library_path(char *out, size_t size);
/* seconds, monotonic */
double oop_now(void);

#endif
