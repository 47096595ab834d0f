/*
 * crash-writer's pmemobj stream: records kept by PMDK's libpmemobj, one
 * object per record, appended to the root object's table in a
 * transaction each.  A record counts as durable once its transaction
 * committed.  Verification opens the pool (libpmemobj replays or rolls
 * back an interrupted transaction) and checks every record the table
 * holds; the job runs Debian's `pmempool check` on the pool first.
 */
#include <errno.h>
#include <inttypes.h>
#include <libpmemobj.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crash_pace.h"
#include "crash_pmemobj.h"
#include "crash_record.h"

#define LAYOUT "cxlssd-crash"
#define MAX_RECORDS (1u << 16)

struct crash_root {
    uint64_t count;
    PMEMoid recs[MAX_RECORDS];
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static PMEMobjpool *open_pool(const char *path, uint64_t size)
{
    PMEMobjpool *pop = access(path, F_OK) == 0
        ? pmemobj_open(path, LAYOUT)
        : pmemobj_create(path, LAYOUT, size, 0644);
    if (!pop) {
        fprintf(stderr, "crash-writer: pmemobj pool %s: %s\n", path,
                pmemobj_errormsg());
        exit(2);
    }
    return pop;
}

/* Records 0..count-1 of the table: how many are whole. */
static uint64_t verify(const struct crash_root *root, uint32_t id,
                       uint64_t acked, uint64_t *torn)
{
    uint64_t whole = 0, n = root->count < MAX_RECORDS ? root->count
                                                        : MAX_RECORDS;
    *torn = 0;
    for (uint64_t s = 0; s < n && s < acked; s++) {
        const void *p = pmemobj_direct(root->recs[s]);
        if (p && pmemobj_alloc_usable_size(root->recs[s]) >=
                     crash_rec_size(crash_rec_len(id, s)) &&
            crash_rec_whole(p, id, s)) {
            whole++;
        } else {
            (*torn)++;
        }
    }
    return whole;
}

static int append(PMEMobjpool *pop, struct crash_root *root, uint32_t id,
                  uint64_t seq, uint8_t *buf)
{
    size_t rs = crash_rec_size(crash_rec_len(id, seq));
    int rc = 0;

    crash_rec_build(buf, id, seq);
    TX_BEGIN(pop) {
        PMEMoid o = pmemobj_tx_alloc(rs, 1);
        memcpy(pmemobj_direct(o), buf, rs);
        pmemobj_tx_add_range_direct(&root->recs[seq], sizeof(PMEMoid));
        pmemobj_tx_add_range_direct(&root->count, sizeof(root->count));
        root->recs[seq] = o;
        root->count = seq + 1;
    } TX_ONABORT {
        rc = -1;
    } TX_END
    return rc;
}

int crash_pmemobj_run(const char *stream, const char *path, uint64_t size,
                      uint64_t acked, double seconds, double ack_s,
                      unsigned rounds_left, bool verify_only)
{
    static uint8_t buf[sizeof(struct crash_rec_hdr) +
                       CRASH_REC_MAX_PAYLOAD + 8];
    uint32_t id = crash_stream_id(stream);
    PMEMobjpool *pop = open_pool(path, size);
    PMEMoid roid = pmemobj_root(pop, sizeof(struct crash_root));
    struct crash_root *root = pmemobj_direct(roid);
    const char *reason = "time";

    if (!root) {
        fprintf(stderr, "crash-writer: %s: no root object: %s\n", path,
                pmemobj_errormsg());
        exit(2);
    }
    uint64_t torn, whole = verify(root, id, acked, &torn);
    uint64_t lost = acked - whole - torn;
    uint64_t seq = root->count, first = seq;
    printf("crash_verify stream=%s kind=pmemobj acked=%" PRIu64 " valid=%"
           PRIu64 " whole=%" PRIu64 " lost=%" PRIu64 " torn=%" PRIu64
           " foreign=0\n", stream, acked, root->count, whole, lost, torn);
    fflush(stdout);
    if (!verify_only) {
        double start = now_s(), last_ack = 0;
        struct crash_pace pace = crash_pace_new(
            start, seconds, seq < MAX_RECORDS ? MAX_RECORDS - seq : 0,
            rounds_left);
        for (;;) {
            double t = now_s();
            if (t - last_ack >= ack_s) {
                printf("crash_ack stream=%s seq=%" PRIu64 "\n", stream, seq);
                fflush(stdout);
                last_ack = t;
            }
            if (seconds > 0 && t - start >= seconds) {
                break;
            }
            if (!crash_pace_next(&pace, seq - first, t)) {
                reason = "share";
                break;
            }
            if (seq >= MAX_RECORDS || append(pop, root, id, seq, buf) < 0) {
                reason = "full";
                break;
            }
            seq++;
        }
        printf("crash_ack stream=%s seq=%" PRIu64 "\n", stream, seq);
        printf("crash_done stream=%s records=%" PRIu64 " bytes=0 reason=%s "
               "flush=pmemobj_tx\n", stream, seq - first, reason);
        fflush(stdout);
    }
    pmemobj_close(pop);
    return lost || torn ? 1 : 0;
}
