/*
 * Record writer: cxlssd_record_writer_sync() drains on the caller's thread
 * (records_written covers every push before it, without waiting for the
 * writer thread's period), and sync callers racing the writer thread and
 * producers never write a record twice or lose one.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record_producers.h"
#include "record_writer.h"
#include "tap.h"

#define PRODUCERS 3
#define PER_PRODUCER 20000

struct shared {
    struct cxlssd_record_writer *w;
    struct record_producers p;
};

static void push_one(struct cxlssd_record_ring *ring, uint64_t page)
{
    struct cxlssd_record rec = { 0 };

    rec.page = page;
    rec.vcpu = -1;
    rec.victim_page = UINT64_MAX;
    rec.t_fault_ns = page + 1;
    cxlssd_record_push(ring, &rec);
}

static void *syncer_main(void *arg)
{
    struct shared *s = arg;
    while (atomic_load(&s->p.producers_left) > 0) {
        cxlssd_record_writer_sync(s->w);
    }
    return NULL;
}

/* Data rows of @path (header excluded), each page seen at most once. */
static uint64_t count_rows(const char *path, bool *unique)
{
    FILE *f = fopen(path, "r");
    uint8_t *seen = calloc((size_t)PRODUCERS * 1000000, 1);
    char line[1024];
    uint64_t rows = 0;

    *unique = f && seen;
    if (!*unique) {
        goto out;
    }
    if (!fgets(line, sizeof(line), f)) {
        *unique = false;
        goto out;
    }
    while (fgets(line, sizeof(line), f)) {
        uint64_t seq, page;
        if (sscanf(line, "%" SCNu64 ",%" SCNu64, &seq, &page) != 2 ||
            page >= (uint64_t)PRODUCERS * 1000000 || seen[page]++) {
            *unique = false;
        }
        rows++;
    }
out:
    if (f) {
        fclose(f);
    }
    free(seen);
    return rows;
}

int main(void)
{
    char dir[] = "/tmp/test_record_writer.XXXXXX";
    char path[sizeof(dir) + 16];
    char err[256];
    bool unique;

    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(path, sizeof(path), "%s/r.csv", dir);

    /* sync: written right away, far sooner than the thread's 100 ms */
    struct cxlssd_record_writer *w =
        cxlssd_record_writer_new(path, 8192, "uffd", "tcg", err, sizeof(err));
    tap_ok(w != NULL, "writer created (%s)", w ? "ok" : err);
    if (!w) {
        return tap_done();
    }
    struct cxlssd_record_ring *ring = cxlssd_record_writer_ring(w);
    for (uint64_t i = 0; i < 3000; i++) {
        push_one(ring, i);
    }
    cxlssd_record_writer_sync(w);
    tap_ok(cxlssd_record_written(ring) == 3000,
           "after sync, records_written covers every push (%" PRIu64
           " of 3000)", cxlssd_record_written(ring));
    tap_ok(count_rows(path, &unique) == 3000 && unique,
           "and the file holds those 3000 rows already");
    cxlssd_record_writer_free(w);

    /* producers, the writer thread and a sync caller, all at once */
    struct shared s;
    s.w = cxlssd_record_writer_new(path, 1024, "uffd", "tcg", err,
                                   sizeof(err));
    tap_ok(s.w != NULL, "second writer created");
    if (!s.w) {
        return tap_done();
    }
    record_producers_init(&s.p, cxlssd_record_writer_ring(s.w), PRODUCERS,
                          PER_PRODUCER);
    pthread_t th[PRODUCERS], syncer;
    struct record_producer p[PRODUCERS];
    pthread_create(&syncer, NULL, syncer_main, &s);
    record_producers_start(&s.p, PRODUCERS, p, th);
    for (int i = 0; i < PRODUCERS; i++) {
        pthread_join(th[i], NULL);
    }
    pthread_join(syncer, NULL);
    cxlssd_record_writer_sync(s.w);
    uint64_t pushed = atomic_load(&s.p.pushed_ok);
    uint64_t dropped = cxlssd_record_dropped(s.p.ring);
    tap_ok(cxlssd_record_written(s.p.ring) == pushed &&
           pushed + dropped == (uint64_t)PRODUCERS * PER_PRODUCER,
           "%d producers x %d: %" PRIu64 " written + %" PRIu64 " dropped",
           PRODUCERS, PER_PRODUCER, cxlssd_record_written(s.p.ring), dropped);
    cxlssd_record_writer_free(s.w);
    uint64_t rows = count_rows(path, &unique);
    tap_ok(rows == pushed && unique,
           "file: %" PRIu64 " rows, each record once", rows);

    unlink(path);
    rmdir(dir);
    return tap_done();
}
