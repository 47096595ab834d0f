/*
 * Per-miss record ring: header, row format, drop counting when full, and
 * pushes from several threads while a consumer drains concurrently (every
 * record written exactly once or counted as dropped).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "record_producers.h"
#include "tap.h"

#define PRODUCERS 4
#define PER_PRODUCER 20000

static const char *const header =
    "seq,page,tid,vcpu,mode,accel,write,dirty_evict,prefetch_issued,"
    "prefetch_hit,waited_loading,compensated,late_wait,nvictims,"
    "victim_page,"
    "t_fault_ns,t_bql_req_ns,t_bql_acq_ns,t_decision_start_ns,"
    "t_decision_end_ns,t_unmapped_ns,t_deadline_ns,t_deadline_model_ns,"
    "t_wait_end_ns,t_mapped_ns,t_bql_rel_ns,t_host_fault_ns\n";

static int count_fields(const char *line)
{
    int n = 1;
    for (; *line && *line != '\n'; line++) {
        n += *line == ',';
    }
    return n;
}

static char *slurp(FILE *f)
{
    long len = ftell(f);
    char *buf = malloc((size_t)len + 1);
    rewind(f);
    size_t got = fread(buf, 1, (size_t)len, f);
    buf[got] = '\0';
    return buf;
}

int main(void)
{
    /* header */
    FILE *f = tmpfile();
    cxlssd_record_write_header(f);
    char *h = slurp(f);
    fclose(f);
    tap_ok(strcmp(h, header) == 0, "CSV header with units in column names");
    tap_ok(count_fields(h) == 27, "27 columns");
    free(h);

    /* row format */
    struct cxlssd_record_ring *r = cxlssd_record_ring_new(100);
    struct cxlssd_record rec = { 0 };
    rec.page = 42;
    rec.tid = 1234;
    rec.vcpu = -1;
    rec.flags = CXLSSD_REC_WRITE | CXLSSD_REC_DIRTY_EVICT |
                CXLSSD_REC_WAITED_LOADING;
    rec.nvictims = 1;
    rec.victim_page = 7;
    rec.t_fault_ns = 1000;
    rec.t_decision_start_ns = 1100;
    rec.t_bql_rel_ns = 9999;
    rec.t_host_fault_ns = 900;
    tap_ok(cxlssd_record_push(r, &rec), "push");
    rec.nvictims = 0;
    rec.victim_page = UINT64_MAX;
    rec.flags = CXLSSD_REC_PREFETCH_ISSUED | CXLSSD_REC_PREFETCH_HIT |
                CXLSSD_REC_COMPENSATED | CXLSSD_REC_LATE_WAIT;
    cxlssd_record_push(r, &rec);
    f = tmpfile();
    uint64_t n = cxlssd_record_drain(r, f, "uffd", "tcg");
    char *rows = slurp(f);
    fclose(f);
    tap_ok(n == 2, "drain wrote 2 rows");
    tap_ok(strcmp(rows,
                  "0,42,1234,-1,uffd,tcg,1,1,0,0,1,0,0,1,7,1000,0,0,1100,0,"
                  "0,0,0,0,0,9999,900\n"
                  "1,42,1234,-1,uffd,tcg,0,0,1,1,0,1,1,0,,1000,0,0,1100,0,"
                  "0,0,0,0,0,9999,900\n") == 0,
           "rows: seq, flags as 0/1, empty victim_page when none:\n%s", rows);
    free(rows);
    tap_ok(cxlssd_record_drain(r, NULL, "x", "y") == 0, "ring empty again");

    /* every field at its extremes, against printf's formatting */
    struct cxlssd_record big = { 0 };
    big.page = UINT64_MAX - 1;
    big.tid = INT32_MIN;
    big.vcpu = INT32_MAX;
    big.flags = ~0u;
    big.nvictims = UINT32_MAX;
    big.victim_page = UINT64_MAX - 1;
    uint64_t *ts[12] = {
        &big.t_fault_ns, &big.t_bql_req_ns, &big.t_bql_acq_ns,
        &big.t_decision_start_ns, &big.t_decision_end_ns, &big.t_unmapped_ns,
        &big.t_deadline_ns, &big.t_deadline_model_ns, &big.t_wait_end_ns,
        &big.t_mapped_ns, &big.t_bql_rel_ns, &big.t_host_fault_ns,
    };
    for (int i = 0; i < 12; i++) {
        *ts[i] = i % 2 ? UINT64_MAX : (uint64_t)i * 1000000007ull;
    }
    cxlssd_record_push(r, &big);
    f = tmpfile();
    cxlssd_record_drain(r, f, "a-long-mode-name", "");
    rows = slurp(f);
    fclose(f);
    char want[1024];
    int w = snprintf(want, sizeof(want),
                     "%" PRIu64 ",%" PRIu64 ",%" PRId32 ",%" PRId32
                     ",a-long-mode-name,,1,1,1,1,1,1,1,%" PRIu32 ",%" PRIu64,
                     (uint64_t)2, big.page, big.tid, big.vcpu, big.nvictims,
                     big.victim_page);
    for (int i = 0; i < 12; i++) {
        w += snprintf(want + w, sizeof(want) - (size_t)w, ",%" PRIu64, *ts[i]);
    }
    snprintf(want + w, sizeof(want) - (size_t)w, "\n");
    if (!tap_ok(strcmp(rows, want) == 0,
                "every field at its extremes formatted as printf does")) {
        tap_diag("got:  %s", rows);
        tap_diag("want: %s", want);
    }
    free(rows);
    cxlssd_record_ring_free(r);

    /* full ring: drops counted, push never blocks */
    r = cxlssd_record_ring_new(16);
    int okc = 0;
    for (int i = 0; i < 20; i++) {
        rec.page = (uint64_t)i;
        okc += cxlssd_record_push(r, &rec);
    }
    tap_ok(okc == 16 && cxlssd_record_dropped(r) == 4,
           "16-entry ring: 16 pushed, 4 dropped (%d, %" PRIu64 ")", okc,
           cxlssd_record_dropped(r));
    f = tmpfile();
    n = cxlssd_record_drain(r, f, "m", "a");
    rows = slurp(f);
    fclose(f);
    tap_ok(n == 16 && cxlssd_record_written(r) == 16 &&
           strncmp(rows, "0,0,", 4) == 0,
           "drain returns the 16 oldest, in order");
    free(rows);
    tap_ok(cxlssd_record_push(r, &rec), "room again after draining");
    cxlssd_record_ring_free(r);

    /* concurrent producers + consumer */
    struct record_producers s;
    record_producers_init(&s, cxlssd_record_ring_new(1024), PRODUCERS,
                          PER_PRODUCER);
    pthread_t th[PRODUCERS];
    struct record_producer p[PRODUCERS];
    record_producers_start(&s, PRODUCERS, p, th);
    f = tmpfile();
    uint64_t drained = 0;
    while (atomic_load(&s.producers_left) > 0) {
        drained += cxlssd_record_drain(s.ring, f, "uffd", "kvm");
    }
    for (int i = 0; i < PRODUCERS; i++) {
        pthread_join(th[i], NULL);
    }
    drained += cxlssd_record_drain(s.ring, f, "uffd", "kvm");
    uint64_t dropped = cxlssd_record_dropped(s.ring);
    tap_ok(drained == atomic_load(&s.pushed_ok) &&
           drained + dropped == (uint64_t)PRODUCERS * PER_PRODUCER,
           "%d threads x %d: %" PRIu64 " written + %" PRIu64 " dropped",
           PRODUCERS, PER_PRODUCER, drained, dropped);

    /* every written record exactly once, each producer's in push order,
     * sequence numbers strictly increasing */
    rows = slurp(f);
    fclose(f);
    uint8_t *seen = calloc((size_t)PRODUCERS * PER_PRODUCER, 1);
    int64_t last[PRODUCERS];
    for (int i = 0; i < PRODUCERS; i++) {
        last[i] = -1;
    }
    bool unique = true, ordered = true, fields = true;
    uint64_t lines = 0, prev_seq = 0;
    for (char *line = strtok(rows, "\n"); line; line = strtok(NULL, "\n")) {
        uint64_t seq, page;
        if (count_fields(line) != 27 ||
            sscanf(line, "%" SCNu64 ",%" SCNu64, &seq, &page) != 2) {
            fields = false;
            continue;
        }
        int id = (int)(page / 1000000);
        uint64_t i = page % 1000000;
        if (id >= PRODUCERS || i >= PER_PRODUCER) {
            fields = false;
            continue;
        }
        if (seen[(size_t)id * PER_PRODUCER + i]++) {
            unique = false;
        }
        if ((int64_t)i <= last[id] || (lines && seq <= prev_seq)) {
            ordered = false;
        }
        last[id] = (int64_t)i;
        prev_seq = seq;
        lines++;
    }
    tap_ok(fields && lines == drained, "%" PRIu64 " well-formed rows", lines);
    tap_ok(unique, "no record written twice");
    tap_ok(ordered, "per-thread order and sequence numbers preserved");
    free(seen);
    free(rows);
    cxlssd_record_ring_free(s.ring);
    return tap_done();
}
