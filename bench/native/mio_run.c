/*
 * cxlssd-native: MIO (bench/mio, linked in) on the emulated region, in
 * threads of this process, with the user's MIO options and the output
 * files of a VM point.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../mio/mio.h"
#include "native.h"

#define MAX_MIO_ARGS 256

static void slurp_to(FILE *out, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        return;
    }
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
        fwrite(buf, 1, n, out);
    }
    fclose(f);
    fflush(out);
}

/* With @baseline (--ram-baseline), MIO also chases that region, sample by
 * sample interleaved with @map (--baseline named "memfd"; files mio-ram-*).
 * stdout goes to OUT/mio-dax.out (and mio-ram.out with a baseline) and is
 * copied to ours afterwards. */
int native_run_mio(const struct native_opts *o, char *map, uint64_t len,
                   bool want_samples, char *baseline, uint64_t baseline_len,
                   struct native_mio_run *res)
{
    static const char *const tag = "dax";   /* output file names */
    memset(res, 0, sizeof(*res));
    char *argv[MAX_MIO_ARGS];
    char files[8][4096], cache[32];
    int argc = 0;
    argv[argc++] = "mio";
    snprintf(cache, sizeof(cache), "%" PRIu64,
             cxlssd_config_cache_frames(&o->mc) * o->mc.page_size);
    bool has_cache = false;
    for (int i = 0; i < o->mio_argc; i++) {
        has_cache |= !strncmp(o->mio_argv[i], "--cache-bytes", 13);
    }
    if (!has_cache) {
        argv[argc++] = "--cache-bytes";
        argv[argc++] = cache;
    }
    if (o->mio_argc + 26 > MAX_MIO_ARGS) {
        fprintf(stderr, "cxlssd-native: too many MIO options\n");
        return -1;
    }
    for (int i = 0; i < o->mio_argc; i++) {
        argv[argc++] = o->mio_argv[i];
    }
    if (baseline) {
        argv[argc++] = "--baseline";
        argv[argc++] = "memfd";     /* only names embed.baseline_map */
    }
    if (o->out) {
        static const char *const kinds[4] = { "summary", "cdf", "hist",
                                              "raw" };
        static const char *const flags[2][4] = {
            { "--summary-csv", "--cdf", "--hist", "--raw" },
            { "--baseline-summary-csv", "--baseline-cdf", "--baseline-hist",
              "--baseline-raw" },
        };
        for (int b = 0; b < (baseline ? 2 : 1); b++) {
            for (int k = 0; k < 4; k++) {
                char *f = files[b * 4 + k];
                snprintf(f, sizeof(files[0]), "%s/mio-%s-%s.csv", o->out,
                         b ? "ram" : tag, kinds[k]);
                argv[argc++] = (char *)flags[b][k];
                argv[argc++] = f;
            }
        }
    }
    argv[argc] = NULL;

    struct mio_config cfg;
    int rc = mio_parse_args(argc, argv, &cfg);
    if (rc >= 0) {
        mio_free_config(&cfg);
        return rc == 0 ? -2 : -1;   /* --help inside MIO options */
    }
    /* getopt_long permutes argv; the user's strings are untouched */
    cfg.target = "cxl-ssd-native";
    struct mio_embed emb;
    memset(&emb, 0, sizeof(emb));
    emb.map = map;
    emb.len = len;
    emb.baseline_map = baseline;
    emb.baseline_len = baseline_len;
    res->verify = cfg.verify;
    res->threads = cfg.threads;
    res->samples = cfg.samples;
    res->loads = cfg.loads_per_sample;
    if (want_samples && !cfg.verify) {
        size_t n = (size_t)cfg.samples * cfg.threads;
        res->starts = calloc(n, sizeof(uint64_t));
        res->durations = calloc(n, sizeof(uint64_t));
        res->tids = calloc(cfg.threads, sizeof(int));
        res->taken = calloc(cfg.threads, sizeof(uint64_t));
        if (!res->starts || !res->durations || !res->tids || !res->taken) {
            fprintf(stderr, "cxlssd-native: out of memory for samples\n");
            mio_free_config(&cfg);
            return -1;
        }
        emb.starts = res->starts;
        emb.samples = res->durations;
        emb.tids = res->tids;
        emb.taken = res->taken;
    }
    cfg.embed = &emb;

    int saved = -1;
    char outpath[4096];
    if (o->out) {
        snprintf(outpath, sizeof(outpath), "%s/mio-%s.out", o->out, tag);
        int fd = open(outpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                      0644);
        fflush(stdout);
        saved = fd >= 0 ? dup(1) : -1;
        if (saved >= 0) {
            dup2(fd, 1);
        }
        if (fd >= 0) {
            close(fd);
        }
    }
    long double tsc0, mono0, tsc1, mono1;
    native_anchor(&tsc0, &mono0);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    rc = cfg.verify ? mio_run_verify(&cfg) : mio_run_chase(&cfg);
    clock_gettime(CLOCK_MONOTONIC, &b);
    native_anchor(&tsc1, &mono1);
    fflush(stdout);
    if (saved >= 0) {
        dup2(saved, 1);
        close(saved);
        slurp_to(stdout, outpath);
    }
    if (o->out && baseline) {   /* one run: the baseline's .out is the same */
        char rampath[4096];
        snprintf(rampath, sizeof(rampath), "%s/mio-ram.out", o->out);
        unlink(rampath);
        if (link(outpath, rampath) < 0) {
            fprintf(stderr, "cxlssd-native: link %s: %s\n", rampath,
                    strerror(errno));
        }
    }
    res->elapsed_s = (double)(b.tv_sec - a.tv_sec) +
                     (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
    res->clk.clock_timer = emb.clock_timer;
    res->clk.tsc0 = tsc0;
    res->clk.mono0 = mono0;
    res->clk.ns_per_tick = tsc1 > tsc0 ? (mono1 - mono0) / (tsc1 - tsc0)
                                       : (long double)emb.ns_per_tick;
    res->rc = rc;
    mio_free_config(&cfg);
    return 0;
}

void native_mio_run_free(struct native_mio_run *r)
{
    free(r->starts);
    free(r->durations);
    free(r->tids);
    free(r->taken);
}
