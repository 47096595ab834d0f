/* Start-up: the environment, the flush instruction, handlers (tdm.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "persist.h"
#include "real.h"
#include "safecopy.h"
#include "stats.h"
#include "tdm.h"

void tdm_proc_init(void);

enum tdm_flush_kind tdm_flush_in_use;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char stats_path[4096], intervals_path[4096];
static bool enabled;
static _Thread_local int depth __attribute__((tls_model("initial-exec")));

static const char *env(const char *name)
{
    return getenv(name);
}

/* a bad setting ends the process before it runs with the wrong layer */
__attribute__((noreturn)) static void fail(const char *msg)
{
    if (tdm_real.write(2, msg, strlen(msg)) >= 0) {
        (void)!tdm_real.write(2, "\n", 1);
    }
    _exit(2);
}

/* @path made absolute in @buf (from the current directory); @path itself
 * if absolute, NULL or too long */
static const char *absolute(const char *path, char *buf, size_t size)
{
    if (path && path[0] != '/' && strlen(path) + 2 < size &&
        getcwd(buf, size - strlen(path) - 1)) {
        strcat(buf, "/");
        strcat(buf, path);
        return buf;
    }
    return path;
}

static void init_once(void)
{
    char err[512];
    tdm_real_init();
    if (tdm_config_parse(&tdm_cfg, env, err, sizeof(err))) {
        fail(err);
    }
    if (!tdm_cfg.enabled) {
        return;
    }
    if (tdm_flush_choose(tdm_cfg.flush, &tdm_flush_in_use)) {
        snprintf(err, sizeof(err),
                 "tdm: TDM_FLUSH=\"%s\": this CPU has no such instruction "
                 "(it has:%s%s%s)", getenv("TDM_FLUSH"),
                 tdm_flush_supported(TDM_FLUSH_CLWB) ? " clwb" : "",
                 tdm_flush_supported(TDM_FLUSH_CLFLUSHOPT) ? " clflushopt" : "",
                 tdm_flush_supported(TDM_FLUSH_CLFLUSH) ? " clflush" : "");
        fail(err);
    }
    /* a relative TDM_STATS (or TDM_STATS_INTERVALS) names a file in the
     * directory the program started in, wherever it is at exit */
    tdm_cfg.stats_path = absolute(tdm_cfg.stats_path, stats_path,
                                  sizeof(stats_path));
    tdm_cfg.intervals_path = absolute(tdm_cfg.intervals_path, intervals_path,
                                      sizeof(intervals_path));
    if (tdm_cfg.intervals_path) {
        tdm_stats_interval_start(tdm_cfg.interval_ms, tdm_cfg.intervals_path);
    }
    tdm_safecopy_install();
    tdm_proc_init();
    enabled = true;
}

void tdm_init(void)
{
    pthread_once(&once, init_once);
}

bool tdm_enter(void)
{
    tdm_init();
    if (!enabled || depth) {
        return false;
    }
    depth++;
    return true;
}

void tdm_leave(void)
{
    depth--;
}

static void cannot_write(const char *path)
{
    char msg[256];
    snprintf(msg, sizeof(msg), "tdm: cannot write the statistics to %s", path);
    if (tdm_real.write(2, msg, strlen(msg)) >= 0) {
        (void)!tdm_real.write(2, "\n", 1);
    }
}

void tdm_write_stats(void)
{
    if (!enabled) {
        return;
    }
    if (tdm_cfg.stats_path &&
        tdm_stats_write(tdm_cfg.stats_path, tdm_flush_name(tdm_flush_in_use))) {
        cannot_write(tdm_cfg.stats_path);
    }
    if (tdm_cfg.intervals_path && tdm_stats_interval_flush()) {
        cannot_write(tdm_cfg.intervals_path);
    }
}

int tdm_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (sig != SIGBUS) {
        return tdm_real.sigaction(sig, act, old);
    }
    return tdm_sigbus_action(act, old);
}

sighandler_t tdm_signal(int sig, sighandler_t handler)
{
    if (sig != SIGBUS) {
        return tdm_real.signal(sig, handler);
    }
    return tdm_sigbus_signal(handler);
}
