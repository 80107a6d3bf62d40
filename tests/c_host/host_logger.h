/* The C hosts' fmi2CallbackLogger: each message on stderr as
 * "[instance] status=N category: text"; messages below HOST_LOG_MIN_STATUS
 * (default fmi2OK: all) are dropped. Include after fmi2FunctionTypes.h. */
#ifndef HOST_LOGGER_H
#define HOST_LOGGER_H

#include <stdarg.h>
#include <stdio.h>

#ifndef HOST_LOG_MIN_STATUS
#define HOST_LOG_MIN_STATUS fmi2OK
#endif

static void logger(fmi2ComponentEnvironment env, fmi2String instance, fmi2Status status,
                   fmi2String category, fmi2String message, ...) {
    (void)env;
    if (status < HOST_LOG_MIN_STATUS) return;
    char buf[4096];
    va_list ap;
    va_start(ap, message);
    vsnprintf(buf, sizeof buf, message, ap);
    va_end(ap);
    fprintf(stderr, "[%s] status=%d %s: %s\n", instance, (int)status, category ? category : "", buf);
}

#endif
