/*
 * The miss service with fake substrates (one thread, no userfaultfd):
 * a mapping substrate (as the trap's) maps each fill after its NAND wait
 * (inside it for a miss the accessor serves itself, map_in_wait),
 * unmaps victims before it, maps duplicates again only when asked, and
 * records every fill; compensation shortens the wait by the delivery
 * already spent, never below the decision's end; prefetches complete at
 * their deadlines through the same map; record_ab leaves out alternate
 * runs; a fill whose wait ends more than late_wait_ns past its deadline
 * is flagged and counted late.  An every-access substrate (as mmio's)
 * counts a resident page as a hit with no record, and every wait is
 * bracketed by wait_begin/end.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "miss_service.h"
#include "model.h"
#include "tap.h"

#define PAGES 64
#define FRAMES 4
#define LATE_WAIT_NS 20000

struct fake {
    unsigned maps, map_writes, unmaps, unmapped, wakes, waits, wait_ends;
    int map_result;
    uint64_t map_ns;                    /* when map() was last called */
    long map_sleep_ns;                  /* map() takes this long */
};

static struct cxlssd_record last;      /* from the miss_done trace hook */
/* fills flagged late, and fills whose flag disagrees with their overshoot */
static unsigned late_flagged, late_mismatch;

static void capture(void *o, const struct cxlssd_record *rec)
{
    (void)o;
    last = *rec;
    if (!(rec->flags & CXLSSD_REC_WAITED_LOADING)) {
        bool late = rec->t_wait_end_ns - rec->t_deadline_ns > LATE_WAIT_NS;
        late_flagged += !!(rec->flags & CXLSSD_REC_LATE_WAIT);
        late_mismatch += late != !!(rec->flags & CXLSSD_REC_LATE_WAIT);
    }
}

static int fake_map(void *o, uint64_t page, bool write)
{
    struct fake *f = o;
    (void)page;
    f->maps++;
    f->map_writes += write;
    f->map_ns = cxlssd_now_ns();
    if (f->map_sleep_ns) {
        struct timespec ts = { .tv_nsec = f->map_sleep_ns };
        nanosleep(&ts, NULL);
    }
    return f->map_result;
}

static void fake_unmap(void *o, const struct cxlssd_victim *v, uint32_t n)
{
    struct fake *f = o;
    (void)v;
    f->unmaps++;
    f->unmapped += n;
}

static void fake_wake(void *o, uint64_t page)
{
    struct fake *f = o;
    (void)page;
    f->wakes++;
}

static bool fake_wait_begin(void *o)
{
    struct fake *f = o;
    f->waits++;
    return true;
}

static void fake_wait_end(void *o)
{
    struct fake *f = o;
    f->wait_ends++;
}

/* A small model, a record ring, a fake substrate and the service. */
struct fixture {
    struct cxlssd_model *m;
    struct cxlssd_record_ring *ring;
    struct fake f;
    struct cxlssd_miss_service *s;
};

static bool setup(struct fixture *x, const char *what, uint32_t prefetch,
                  bool every, bool compensate, uint32_t ab)
{
    struct cxlssd_config mc;
    char err[256] = "";
    memset(x, 0, sizeof(*x));
    late_flagged = late_mismatch = 0;
    cxlssd_config_defaults(&mc, PAGES * 4096);
    mc.cache_size = FRAMES * 4096;
    mc.prefetch = prefetch;
    mc.precondition = true;             /* every read takes tR + xfer */
    mc.t_read_ns = 100000;              /* far above a (sanitized) decision */
    x->m = cxlssd_model_new(&mc, err, sizeof(err));
    x->ring = cxlssd_record_ring_new(64);
    struct cxlssd_miss_service_config cfg = {
        .substrate = { .opaque = &x->f, .every_access = every },
        .trace = { .miss_done = capture },
        .ring = x->ring,
        .compensate = compensate,
        .compensate_ns = 500,
        .record_ab = ab,
        .late_wait_ns = LATE_WAIT_NS,
    };
    if (every) {
        cfg.substrate.wait_begin = fake_wait_begin;
        cfg.substrate.wait_end = fake_wait_end;
    } else {
        cfg.substrate.map = fake_map;
        cfg.substrate.unmap = fake_unmap;
        cfg.substrate.wake = fake_wake;
    }
    if (x->m) {
        x->s = cxlssd_miss_service_new(x->m, &cfg, err, sizeof(err));
    }
    return tap_ok(x->s != NULL, "%s: service created %s", what, err);
}

static void teardown(struct fixture *x)
{
    if (x->s) {
        cxlssd_complete_all_prefetches(x->s);
    }
    cxlssd_miss_service_free(x->s);
    cxlssd_record_ring_free(x->ring);
    cxlssd_model_free(x->m);
}

static void serve(struct cxlssd_miss_service *s, uint64_t page, bool write,
                  uint64_t host_fault_ago)
{
    uint64_t now = cxlssd_now_ns();
    struct cxlssd_miss_request req = {
        .page = page,
        .write = write,
        .vcpu = -1,
        .t_fault_ns = now,
        .t_host_fault_ns = host_fault_ago ? now - host_fault_ago : 0,
    };
    cxlssd_serve_miss(s, &req);
}

/* Records written so far (drained to /dev/null). */
static uint64_t records(struct cxlssd_record_ring *ring)
{
    FILE *null = fopen("/dev/null", "w");
    cxlssd_record_drain(ring, null, "test", "native");
    fclose(null);
    return cxlssd_record_written(ring);
}

static void mapping_substrate(struct fixture *x)
{
    struct cxlssd_model *m = x->m;
    struct cxlssd_miss_service *s = x->s;
    struct fake *f = &x->f;
    serve(s, 3, true, 0);
    tap_ok(f->maps == 1 && f->map_writes == 1 && f->unmaps == 0 &&
           cxlssd_page_state(m, 3) == CXLSSD_CACHED && records(x->ring) == 1 &&
           f->map_ns >= last.t_wait_end_ns,
           "a fill maps the page once (as a write) after its NAND wait, no "
           "victim, one record");

    f->map_result = 1;                   /* "mapped already" */
    serve(s, 3, false, 0);
    struct cxlssd_miss_service_stats st;
    cxlssd_miss_service_get_stats(s, &st);
    tap_ok(f->maps == 2 && st.duplicate_faults == 1 && st.remaps == 0 &&
           records(x->ring) == 1,
           "a duplicate fault maps again (found mapped), no record");
    f->map_result = 0;
    cxlssd_serve_resident_fault(s, 3);
    cxlssd_miss_service_get_stats(s, &st);
    tap_ok(st.remaps == 1, "a resident page found unmapped is a remap");

    for (uint64_t p = 10; p < 10 + FRAMES; p++) {
        serve(s, p, false, 0);
    }
    struct cxlssd_stats ms;
    cxlssd_model_get_stats(m, &ms);
    uint64_t victims = ms.evictions_clean + ms.evictions_dirty;
    tap_ok(victims == 1 && f->unmaps == 1 && f->unmapped == 1 &&
           cxlssd_page_state(m, 3) == CXLSSD_NOT_CACHED &&
           ms.evictions_dirty == 1 && last.nvictims == 1 &&
           last.victim_page == 3 && last.t_unmapped_ns >= last.t_decision_end_ns
           && (last.flags & CXLSSD_REC_DIRTY_EVICT),
           "the fill past the cache unmaps its victim (page 3, dirty) before "
           "its wait, and records it");
    /* a resident fault whose page was evicted after its caller looked:
     * no map (an evictor may be copying the page out), a wake instead */
    unsigned maps0 = f->maps, wakes0 = f->wakes;
    cxlssd_miss_service_get_stats(s, &st);
    uint64_t remaps = st.remaps;
    cxlssd_serve_resident_fault(s, 3);
    cxlssd_wait_resident_remaps(s);
    cxlssd_miss_service_get_stats(s, &st);
    tap_ok(f->maps == maps0 && f->wakes == wakes0 + 1 && st.remaps == remaps,
           "a resident fault on a page no longer cached wakes the faulter "
           "and maps nothing (maps %u -> %u, wakes %u -> %u)", maps0, f->maps,
           wakes0, f->wakes);

    /* the accessor serves its own miss (TCG's TLB fill): mapped in the wait */
    struct cxlssd_miss_request own = {
        .page = 40, .vcpu = 0, .t_fault_ns = cxlssd_now_ns(),
        .map_in_wait = true,
    };
    unsigned maps = f->maps;
    cxlssd_serve_miss(s, &own);
    tap_ok(f->maps == maps + 1 && f->map_ns < last.t_deadline_ns &&
           last.t_mapped_ns <= last.t_wait_end_ns &&
           last.t_wait_end_ns >= last.t_deadline_ns &&
           cxlssd_page_state(m, 40) == CXLSSD_CACHED,
           "map_in_wait: the page is mapped before the NAND deadline, the "
           "wait still ends at it, then the page is resident");

    /* a mapping that overruns the deadline (t_read is 100 us) ends late */
    f->map_sleep_ns = 400000;
    own.page = 41;
    own.t_fault_ns = cxlssd_now_ns();
    cxlssd_serve_miss(s, &own);
    f->map_sleep_ns = 0;
    cxlssd_miss_service_get_stats(s, &st);
    tap_ok((last.flags & CXLSSD_REC_LATE_WAIT) &&
           last.t_wait_end_ns - last.t_deadline_ns >= 250000 &&
           st.late_waits == late_flagged && late_mismatch == 0,
           "a wait that ends %llu ns past its deadline is late "
           "(late-wait-ns %d); late_waits %llu = flagged records %u, every "
           "fill's flag agrees with its overshoot (%u disagree)",
           (unsigned long long)(last.t_wait_end_ns - last.t_deadline_ns),
           LATE_WAIT_NS, (unsigned long long)st.late_waits, late_flagged,
           late_mismatch);
}

/*
 * serve() on @page, @page + 8, ... until the decision ended with room
 * left before the model's deadline to shorten the wait (at most 5 tries):
 * a thread preempted in its decision for longer than tR (a TSan build on a
 * loaded host once was) has nothing to compensate.  Returns the misses
 * served.
 */
static unsigned serve_with_room(struct cxlssd_miss_service *s, uint64_t page,
                                uint64_t host_fault_ago)
{
    unsigned n = 0;
    do {
        serve(s, page + 8 * n, false, host_fault_ago);
        n++;
    } while (n < 5 && last.t_decision_end_ns + host_fault_ago + 500 >=
                      last.t_deadline_model_ns);
    return n;
}

/* Compensation: t_deadline = model deadline - (decision start - host
 * fault) - compensate_ns, never before the decision's end. */
static void compensation(struct fixture *x)
{
    struct cxlssd_miss_service *s = x->s;
    unsigned served = serve_with_room(s, 5, 2000);
    struct cxlssd_record r = last;
    uint64_t measured = r.t_decision_start_ns - r.t_host_fault_ns;
    uint64_t want = r.t_deadline_model_ns - measured - 500;
    if (want < r.t_decision_end_ns) {
        want = r.t_decision_end_ns;
    }
    tap_ok((r.flags & CXLSSD_REC_COMPENSATED) && measured >= 2000 &&
           r.t_deadline_ns == want && r.t_wait_end_ns >= r.t_deadline_ns &&
           r.t_mapped_ns >= r.t_wait_end_ns,
           "wait shortened by the delivery measured from the host fault "
           "plus compensate-ns (%llu ns earlier)",
           (unsigned long long)(r.t_deadline_model_ns - r.t_deadline_ns));
    unsigned unclocked = serve_with_room(s, 6, 0); /* no host fault time */
    struct cxlssd_miss_service_stats st;
    cxlssd_miss_service_get_stats(s, &st);
    tap_ok(records(x->ring) == served + unclocked &&
           st.unclocked_misses == unclocked &&
           last.t_deadline_ns >= last.t_decision_end_ns &&
           last.t_deadline_ns < last.t_deadline_model_ns,
           "a miss without a host fault time is compensated from t_fault "
           "and counts as unclocked");
}

static void prefetches_and_ab(struct fixture *x)
{
    struct cxlssd_model *m = x->m;
    struct cxlssd_miss_service *s = x->s;
    struct fake *f = &x->f;
    serve(s, 20, false, 0);
    uint64_t next = cxlssd_next_prefetch(s);
    tap_ok(next != UINT64_MAX && f->maps == 1 &&
           cxlssd_page_state(m, 21) == CXLSSD_LOADING,
           "prefetches queued, still LOADING");
    uint32_t done = cxlssd_complete_prefetches(s, next + 1000000000ull);
    tap_ok(done == 2 && f->maps == 3 && f->map_writes == 0 &&
           cxlssd_page_state(m, 21) == CXLSSD_CACHED &&
           cxlssd_page_state(m, 22) == CXLSSD_CACHED &&
           cxlssd_next_prefetch(s) == UINT64_MAX,
           "due prefetches mapped (read-only) and CACHED");
    serve(s, 40, false, 0);             /* ordinal 1: left out */
    serve(s, 50, false, 0);             /* ordinal 2: recorded */
    tap_ok(records(x->ring) == 2, "record_ab=1 records misses 0 and 2 only");
}

static void every_access_substrate(struct fixture *x)
{
    struct cxlssd_model *m = x->m;
    struct cxlssd_miss_service *s = x->s;
    struct fake *f = &x->f;
    serve(s, 7, false, 0);
    tap_ok(cxlssd_page_state(m, 7) == CXLSSD_CACHED && records(x->ring) == 1 &&
           f->waits == 1 && f->wait_ends == 1,
           "a fill waits once between wait_begin and wait_end, one record");
    struct cxlssd_stats before, after;
    cxlssd_model_get_stats(m, &before);
    serve(s, 7, true, 0);
    cxlssd_model_get_stats(m, &after);
    tap_ok(after.trapped_hits == before.trapped_hits + 1 &&
           after.write_hits == before.write_hits + 1 && records(x->ring) == 1,
           "a resident page is a (write) hit, not recorded");
}

/* Run @body on a fresh fixture (see setup() for the parameters). */
static void run(void (*body)(struct fixture *), const char *what,
                uint32_t prefetch, bool every, bool compensate, uint32_t ab)
{
    struct fixture x;
    if (setup(&x, what, prefetch, every, compensate, ab)) {
        body(&x);
    }
    teardown(&x);
}

int main(void)
{
    run(mapping_substrate, "mapping substrate", 0, false, false, 0);
    run(compensation, "compensation", 0, false, true, 0);
    run(prefetches_and_ab, "prefetch", 2, false, false, 1);
    run(every_access_substrate, "every-access substrate", 0, true, false, 0);
    return tap_done();
}
