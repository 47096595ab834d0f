/*
 * NAND read timing (nand.h through ftl_read()) against the closed form of
 * the modeled timelines.  A read holds its LUN for tR and then for its
 * page's transfer on the LUN's channel, so with streams of dependent
 * reads (each issued when the previous one completes), s_L of them per
 * LUN and s_C per channel, placed symmetrically, the steady state is the
 * slower of the two resources:
 *     latency = max(s_L (tR + xfer), s_C xfer),  throughput = q / latency
 * (the cycle time of the max-plus system: a LUN serves its s_L streams
 * back to back, a channel its s_C transfers).  Queue depth 1 on an idle
 * device: tR + xfer.  A burst of n reads issued at once to n idle LUNs of
 * one channel finishes its transfers one after the other: mean latency
 * tR + (n + 1) / 2 xfer.
 *
 * Pages are never written; precondition=on gives every read the LUN a
 * sequential fill would have used (lpn mod luns, ftl.h), which places the
 * streams.
 */
#include "validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "ftl.h"
#include "heap.h"
#include "rng.h"

enum placement {
    ONE_LUN,        /* every stream on LUN 0 */
    ONE_CHANNEL,    /* stream i on the i-th LUN of channel 0 */
    STRIPED,        /* stream i on LUN i mod luns (channels alternate) */
    RANDOM,         /* a random page for every read */
};

struct rd_case {
    const char *name;
    enum placement where;
    uint32_t streams;
};

struct rd_dev {
    struct ftl *f;
    uint32_t channels, luns;
    uint64_t pages;
    uint64_t t_read, t_xfer;
    uint64_t now;               /* after every read issued so far */
    struct rng g;
};

/* Issue at @t; keeps d->now past every completion, so that each case
 * starts on an idle device. */
static uint64_t rd_read(struct rd_dev *d, uint64_t page, uint64_t t)
{
    uint64_t done = ftl_read(d->f, page, t);
    d->now = done > d->now ? done : d->now;
    return done;
}

static uint32_t stream_lun(const struct rd_dev *d, enum placement where,
                           uint32_t i)
{
    switch (where) {
    case ONE_LUN:
        return 0;
    case ONE_CHANNEL:
        return i * d->channels;
    default:
        return i % d->luns;
    }
}

/* The k-th page of a stream, on its LUN. */
static uint64_t stream_page(struct rd_dev *d, enum placement where,
                            uint32_t i, uint64_t k)
{
    if (where == RANDOM) {
        return rng_below(&d->g, d->pages);
    }
    uint64_t per_lun = d->pages / d->luns;
    return stream_lun(d, where, i) + (uint64_t)d->luns * (k % per_lun);
}

/* Streams per LUN and per channel of a symmetric placement. */
static void contention(const struct rd_dev *d, const struct rd_case *c,
                       double *s_lun, double *s_chan)
{
    switch (c->where) {
    case ONE_LUN:
        *s_lun = *s_chan = c->streams;
        break;
    case ONE_CHANNEL:
        *s_lun = 1;
        *s_chan = c->streams;
        break;
    default:
        *s_lun = ceil((double)c->streams / d->luns);
        *s_chan = ceil((double)c->streams / d->channels);
        break;
    }
}

static void run_closed_loop(struct vlist *l, struct rd_dev *d,
                            const struct rd_case *c, uint64_t reads)
{
    struct heap h;
    uint64_t *issued = calloc(c->streams, sizeof(*issued));
    uint64_t *count = calloc(c->streams, sizeof(*count));
    if (!heap_init(&h, c->streams) || !issued || !count) {
        fprintf(stderr, "validate: out of memory\n");
        exit(2);
    }
    uint64_t t0 = d->now + 1000000;
    for (uint32_t i = 0; i < c->streams; i++) {
        issued[i] = t0;
        heap_push(&h, rd_read(d, stream_page(d, c->where, i, 0), t0), i);
    }
    uint64_t warm = reads / 5, measured = 0, first = 0, lastt = 0;
    double lat_sum = 0;
    for (uint64_t k = 0; k < reads; k++) {
        struct heap_item it = heap_pop(&h);
        if (k >= warm) {
            if (measured == 0) {
                first = it.t;
            }
            measured++;
            lat_sum += (double)(it.t - issued[it.id]);
            lastt = it.t;
        }
        issued[it.id] = it.t;
        uint64_t page = stream_page(d, c->where, it.id, ++count[it.id]);
        heap_push(&h, rd_read(d, page, it.t), it.id);
    }
    heap_free(&h);
    free(issued);
    free(count);

    double s_lun, s_chan;
    contention(d, c, &s_lun, &s_chan);
    double ref_lat = fmax(s_lun * (double)(d->t_read + d->t_xfer),
                          s_chan * (double)d->t_xfer);
    double lat = lat_sum / measured;
    bool idle = c->streams == 1;
    double bound = idle ? 0.01 : 0.05;
    vlist_add(l, VCASE_BOTH, bound, lat / 1000, ref_lat / 1000,
              "closed-form", "us", "nand rd %s qd=%u latency", c->name,
              c->streams);
    if (c->where != RANDOM) {
        double thr = (double)(measured - 1) / (double)(lastt - first);
        vlist_add(l, VCASE_BOTH, bound, thr * 1e6, c->streams / ref_lat * 1e6,
                  "closed-form", "kop/s", "nand rd %s qd=%u throughput",
                  c->name, c->streams);
    }
}

/* Bursts of @n reads at once, one per LUN of channel 0, the LUNs idle. */
static void run_burst(struct vlist *l, struct rd_dev *d, uint32_t n,
                      uint32_t bursts)
{
    double lat_sum = 0;
    for (uint32_t b = 0; b < bursts; b++) {
        uint64_t t = d->now + 100000;
        for (uint32_t i = 0; i < n; i++) {
            uint64_t done = rd_read(d, stream_page(d, ONE_CHANNEL, i, b), t);
            lat_sum += (double)(done - t);
        }
    }
    double ref = (double)d->t_read + (n + 1) / 2.0 * (double)d->t_xfer;
    vlist_add(l, VCASE_BOTH, 0.05, lat_sum / ((double)n * bursts) / 1000,
              ref / 1000, "closed-form", "us",
              "nand rd burst 1chan n=%u mean latency", n);
}

void validate_nand(struct vlist *l, enum vlevel level)
{
    static const struct rd_case cases[] = {
        { "1lun", ONE_LUN, 1 },
        { "random", RANDOM, 1 },
        { "1lun", ONE_LUN, 2 },
        { "1lun", ONE_LUN, 8 },
        { "1lun", ONE_LUN, 32 },
        { "1chan", ONE_CHANNEL, 2 },
        { "1chan", ONE_CHANNEL, 4 },
        { "1chan", ONE_CHANNEL, 16 },
        { "striped", STRIPED, 8 },
        { "striped", STRIPED, 32 },
        { "striped", STRIPED, 128 },
        { "striped", STRIPED, 256 },
    };
    double t_start = validate_now_s();
    struct cxlssd_config cfg;
    cxlssd_config_defaults(&cfg, 262144ull * 4096);
    cfg.precondition = true;
    char err[512];
    struct rd_dev d = { 0 };
    d.f = ftl_new(&cfg, err, sizeof(err));
    if (!d.f) {
        fprintf(stderr, "validate: %s\n", err);
        exit(2);
    }
    d.channels = cfg.channels;
    d.luns = cfg.channels * cfg.luns_per_channel;
    d.pages = 262144;
    d.t_read = cfg.t_read_ns;
    d.t_xfer = cfg.t_xfer_ns;
    d.g.s = 7;
    uint64_t per_stream = level == VALIDATE_FULL ? 4000 : 500;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t reads = per_stream * cases[i].streams;
        run_closed_loop(l, &d, &cases[i], reads < 20000 ? 20000 : reads);
    }
    run_burst(l, &d, 16, level == VALIDATE_FULL ? 2000 : 200);
    vlist_note(l, "nand: nand-read-ns=%llu nand-xfer-ns=%llu, %u channels x "
               "%u LUNs", (unsigned long long)cfg.t_read_ns,
               (unsigned long long)cfg.t_xfer_ns, cfg.channels,
               cfg.luns_per_channel);
    ftl_free(d.f);
    fprintf(stderr, "validate: nand %.1f s\n", validate_now_s() - t_start);
}
