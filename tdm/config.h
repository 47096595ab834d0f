/*
 * The layer's settings, from the environment (README "Environment"):
 *
 *   TDM=on|off                  off: every call goes straight to libc
 *   TDM_POLICY=all|size:BYTES|recur[:BYTES[:WINDOW_MS]]
 *   TDM_ALLOW_NONDAX=0|1        test only: map files without MAP_SYNC
 *   TDM_FLUSH=auto|clwb|clflushopt|clflush|none
 *   TDM_STATS=PATH              the statistics CSV, "%p" = the pid
 *   TDM_STATS_INTERVALS=PATH    the per-interval CSV, "%p" = the pid
 *   TDM_STATS_INTERVAL_MS=1..3600000  its interval (1000; needs the path)
 */
#ifndef TDM_CONFIG_H
#define TDM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum tdm_policy_kind { TDM_POLICY_ALL, TDM_POLICY_SIZE, TDM_POLICY_RECUR };

/* the flush instruction asked for (persist.h says which the CPU has) */
enum tdm_flush_req {
    TDM_FLUSH_REQ_AUTO, TDM_FLUSH_REQ_CLWB, TDM_FLUSH_REQ_CLFLUSHOPT,
    TDM_FLUSH_REQ_CLFLUSH, TDM_FLUSH_REQ_NONE,
};

struct tdm_config {
    bool enabled;
    enum tdm_policy_kind policy;
    uint64_t size_min;          /* size: files of at least this many bytes */
    uint64_t recur_bytes;       /* recur: re-read bytes that map a region */
    uint64_t recur_window_ms;   /* recur: the window those bytes count in */
    bool allow_nondax;
    enum tdm_flush_req flush;
    const char *stats_path;     /* NULL: no statistics file */
    const char *intervals_path; /* NULL: no per-interval rows */
    uint64_t interval_ms;       /* their interval */
};

#define TDM_RECUR_BYTES_DEFAULT (64u * 1024)
#define TDM_RECUR_WINDOW_MS_DEFAULT 1000u
#define TDM_INTERVAL_MS_DEFAULT 1000u
#define TDM_INTERVAL_MS_MAX 3600000u

extern struct tdm_config tdm_cfg;

/*
 * Reads the settings through @get (getenv, or a test's table) into @cfg.
 * Returns 0, or -1 with a message in @err naming the variable, the value
 * and what it may be.
 */
int tdm_config_parse(struct tdm_config *cfg, const char *(*get)(const char *),
                     char *err, size_t errlen);

#endif
