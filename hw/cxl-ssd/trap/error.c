/*
 * Error messages of the trap engine.  They go to the embedder's hook
 * (hooks.error: QEMU's glue passes error_report), or, without a hook (the
 * native tool, tests) and always inside the SIGBUS handler, straight to
 * stderr with write(2), which takes no lock.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "trap_int.h"

/*
 * Set by sigbus.c while the calling thread serves a SIGBUS: per-thread
 * state forced by the signal handler (it cannot be passed down through
 * the substrate's callbacks, which the miss service calls).
 */
static _Thread_local bool in_signal_handler;

bool trap_set_in_signal_handler(bool in)
{
    bool was = in_signal_handler;
    in_signal_handler = in;
    return was;
}

bool trap_in_signal_handler(void)
{
    return in_signal_handler;
}

pid_t trap_thread_id(void)
{
    static _Thread_local pid_t tid;
    if (!tid) {
        tid = (pid_t)syscall(SYS_gettid);
    }
    return tid;
}

void trap_error(struct cxlssd_trap *t, const char *fmt, ...)
{
    char msg[320];
    int n = snprintf(msg, sizeof(msg), "cxl-ssd trap: ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
    va_end(ap);
    if (t->hooks.error && !trap_in_signal_handler()) {
        t->hooks.error(t->hooks.opaque, msg);
        return;
    }
    size_t len = strlen(msg);
    if (len == sizeof(msg) - 1) {
        len--;                  /* truncated: room for the newline */
    }
    msg[len++] = '\n';
    ssize_t r = write(STDERR_FILENO, msg, len);
    (void)r;                    /* nowhere left to report a failure */
}
