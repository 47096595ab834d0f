/* The environment variables, parsed and checked (config.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

struct tdm_config tdm_cfg;

/*
 * A decimal number of @len characters at @s; with @suffixes also "64K",
 * "2M", "1G" (binary multiples).  False on anything else.
 */
static bool parse_number(const char *s, size_t len, bool suffixes,
                         uint64_t *out)
{
    char buf[32];
    if (len == 0 || len >= sizeof(buf)) {
        return false;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (buf[0] < '0' || buf[0] > '9') {
        return false;
    }
    char *end;
    errno = 0;
    uint64_t v = strtoull(buf, &end, 10);
    if (errno) {
        return false;
    }
    unsigned shift = 0;
    switch (suffixes ? *end : *end ? '?' : '\0') {
    case '\0':
        break;
    case 'K': case 'k':
        shift = 10;
        break;
    case 'M': case 'm':
        shift = 20;
        break;
    case 'G': case 'g':
        shift = 30;
        break;
    default:
        return false;
    }
    if (*end && end[1]) {
        return false;
    }
    if (shift && v > (UINT64_MAX >> shift)) {
        return false;
    }
    *out = v << shift;
    return true;
}

static int bad(char *err, size_t errlen, const char *var, const char *val,
               const char *allowed)
{
    snprintf(err, errlen, "tdm: %s=\"%s\": %s", var, val, allowed);
    return -1;
}

static int parse_policy(struct tdm_config *cfg, const char *v, char *err,
                        size_t errlen)
{
    static const char allowed[] =
        "expected all, size:BYTES or recur[:BYTES[:WINDOW_MS]] (BYTES: a "
        "number with an optional K, M or G suffix, recur's at least 1; "
        "WINDOW_MS: 1..86400000)";
    if (!strcmp(v, "all")) {
        cfg->policy = TDM_POLICY_ALL;
        return 0;
    }
    if (!strncmp(v, "size:", 5)) {
        cfg->policy = TDM_POLICY_SIZE;
        if (!parse_number(v + 5, strlen(v + 5), true, &cfg->size_min)) {
            return bad(err, errlen, "TDM_POLICY", v, allowed);
        }
        return 0;
    }
    if (strncmp(v, "recur", 5) || (v[5] && v[5] != ':')) {
        return bad(err, errlen, "TDM_POLICY", v, allowed);
    }
    cfg->policy = TDM_POLICY_RECUR;
    if (!v[5]) {
        return 0;
    }
    const char *bytes = v + 6, *colon = strchr(bytes, ':');
    size_t blen = colon ? (size_t)(colon - bytes) : strlen(bytes);
    if (!parse_number(bytes, blen, true, &cfg->recur_bytes) || !cfg->recur_bytes) {
        return bad(err, errlen, "TDM_POLICY", v, allowed);
    }
    if (colon) {
        uint64_t ms;
        if (!parse_number(colon + 1, strlen(colon + 1), false, &ms) || !ms ||
            ms > 86400000u) {
            return bad(err, errlen, "TDM_POLICY", v, allowed);
        }
        cfg->recur_window_ms = ms;
    }
    return 0;
}

/* TDM_STATS_INTERVALS and TDM_STATS_INTERVAL_MS (the interval needs the
 * path: a lone interval would be a run without the rows it asked for) */
static int parse_intervals(struct tdm_config *cfg,
                           const char *(*get)(const char *), char *err,
                           size_t errlen)
{
    const char *v = get("TDM_STATS_INTERVALS");
    cfg->intervals_path = v && *v ? v : NULL;
    v = get("TDM_STATS_INTERVAL_MS");
    if (!v || !*v) {
        return 0;
    }
    uint64_t ms;
    if (!parse_number(v, strlen(v), false, &ms) || !ms ||
        ms > TDM_INTERVAL_MS_MAX) {
        return bad(err, errlen, "TDM_STATS_INTERVAL_MS", v,
                   "expected 1..3600000 (milliseconds)");
    }
    if (!cfg->intervals_path) {
        return bad(err, errlen, "TDM_STATS_INTERVAL_MS", v,
                   "needs TDM_STATS_INTERVALS=PATH (where the rows go)");
    }
    cfg->interval_ms = ms;
    return 0;
}

int tdm_config_parse(struct tdm_config *cfg, const char *(*get)(const char *),
                     char *err, size_t errlen)
{
    *cfg = (struct tdm_config) {
        .enabled = true,
        .policy = TDM_POLICY_ALL,
        .recur_bytes = TDM_RECUR_BYTES_DEFAULT,
        .recur_window_ms = TDM_RECUR_WINDOW_MS_DEFAULT,
        .flush = TDM_FLUSH_REQ_AUTO,
        .interval_ms = TDM_INTERVAL_MS_DEFAULT,
    };
    const char *v = get("TDM");
    if (v && *v) {
        if (!strcmp(v, "off") || !strcmp(v, "0")) {
            cfg->enabled = false;
            return 0;
        }
        if (strcmp(v, "on") && strcmp(v, "1")) {
            return bad(err, errlen, "TDM", v, "expected on, off, 1 or 0");
        }
    }
    v = get("TDM_POLICY");
    if (v && *v && parse_policy(cfg, v, err, errlen)) {
        return -1;
    }
    v = get("TDM_ALLOW_NONDAX");
    if (v && *v) {
        if (strcmp(v, "1") && strcmp(v, "0")) {
            return bad(err, errlen, "TDM_ALLOW_NONDAX", v, "expected 0 or 1");
        }
        cfg->allow_nondax = v[0] == '1';
    }
    v = get("TDM_FLUSH");
    if (v && *v) {
        static const char *const names[] = {
            [TDM_FLUSH_REQ_AUTO] = "auto",
            [TDM_FLUSH_REQ_CLWB] = "clwb",
            [TDM_FLUSH_REQ_CLFLUSHOPT] = "clflushopt",
            [TDM_FLUSH_REQ_CLFLUSH] = "clflush",
            [TDM_FLUSH_REQ_NONE] = "none",
        };
        size_t i;
        for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
            if (!strcmp(v, names[i])) {
                break;
            }
        }
        if (i == sizeof(names) / sizeof(names[0])) {
            return bad(err, errlen, "TDM_FLUSH", v,
                       "expected auto, clwb, clflushopt, clflush or none");
        }
        cfg->flush = (enum tdm_flush_req)i;
    }
    v = get("TDM_STATS");
    cfg->stats_path = v && *v ? v : NULL;
    return parse_intervals(cfg, get, err, errlen);
}
