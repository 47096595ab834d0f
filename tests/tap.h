/*
 * The one TAP producer for the project's C tests (model, trap, MIO,
 * tracing).  Header-only: each test is a single translation unit and
 * includes it once.
 *
 *   tap_ok(cond, fmt, ...)   "ok N - what" or "not ok N - what"; returns cond
 *   tap_eq(got, want, what)  tap_ok(got == want), and both values if not
 *   tap_diag(fmt, ...)       "# ..." comment line
 *   tap_skip_all(why)        "1..0 # SKIP why", exit status 0
 *   tap_done()               the plan "1..N"; the exit status for main()
 *
 * Every line is flushed, so a test that crashes or hangs leaves what it
 * reported so far in its log (tests/run counts the lines).
 */
#ifndef CXLSSD_TAP_H
#define CXLSSD_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int tap_n, tap_failed;

__attribute__((format(printf, 2, 3), unused))
static bool tap_ok(bool cond, const char *fmt, ...)
{
    va_list ap;
    printf("%s %d - ", cond ? "ok" : "not ok", ++tap_n);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    if (!cond) {
        tap_failed++;
    }
    return cond;
}

__attribute__((unused))
static bool tap_eq(uint64_t got, uint64_t want, const char *what)
{
    if (!tap_ok(got == want, "%s", what)) {
        printf("#   got %" PRIu64 ", want %" PRIu64 "\n", got, want);
        fflush(stdout);
        return false;
    }
    return true;
}

__attribute__((format(printf, 1, 2), unused))
static void tap_diag(const char *fmt, ...)
{
    va_list ap;
    printf("# ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

__attribute__((noreturn, unused))
static void tap_skip_all(const char *why)
{
    printf("1..0 # SKIP %s\n", why);
    fflush(stdout);
    exit(0);
}

__attribute__((unused))
static int tap_done(void)
{
    printf("1..%d\n", tap_n);
    fflush(stdout);
    return tap_failed ? 1 : 0;
}

#endif
