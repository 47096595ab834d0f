/*
 * Trap engine, dirty tracking.  With uffd WP: a read miss maps the page
 * write-protected (clean); the first write raises a WP event that marks it
 * dirty; evicting it then counts a dirty eviction, while a page that was
 * only read evicts clean; a write miss is dirty at once without a WP
 * event.  With track_dirty off: the mechanism says so and a write to a
 * resident clean page is not seen (documented fallback).
 */
#include <pthread.h>

#include "trap_test.h"

#define NPAGES 64
#define FRAMES 8

struct op {
    struct env *e;
    uint64_t page;
    int write;
};

/* Touch from another thread (a fault must not be raised by a thread the
 * test also needs for anything else; any thread works, this mirrors a
 * vCPU). */
static void *touch_fn(void *arg)
{
    struct op *o = arg;
    volatile uint64_t *w = (volatile uint64_t *)(o->e->a + o->page * PG);
    if (o->write) {
        w[1] = 0xd1d1d1d1d1d1d1d1ull ^ o->page;
    } else {
        (void)w[0];
    }
    return NULL;
}

static struct cxlssd_model *model;

static void touch(struct env *e, uint64_t page, int write)
{
    struct op o = { e, page, write };
    pthread_t th;
    pthread_create(&th, NULL, touch_fn, &o);
    pthread_join(th, NULL);
    settle(model, page);
}

static struct cxlssd_trap *start(struct env *e, struct cxlssd_model **mp,
                                 bool track)
{
    char err[256];
    struct cxlssd_config mc;
    test_model_config(&mc, NPAGES, FRAMES);
    mc.policy = CXLSSD_POLICY_FIFO;
    *mp = test_model(&mc);
    model = *mp;
    struct cxlssd_trap_config tc;
    test_trap_config(&tc, CXLSSD_DELIVERY_POLL, 1);
    tc.track_dirty = track;
    struct cxlssd_trap *t = *mp ? cxlssd_trap_new(*mp, e->a, e->len, &tc,
                                                  NULL, err, sizeof(err))
                                : NULL;
    if (!t) {
        tap_diag("trap_new: %s", err);
    }
    return t;
}

int main(void)
{
    struct env e;
    test_start(&e, NPAGES, 60);
    memset(e.b, 0, e.len);

    struct cxlssd_model *m;
    struct cxlssd_trap *t = start(&e, &m, true);
    if (!t) {
        tap_ok(0, "trap with track_dirty");
        return tap_done();
    }
    if (!cxlssd_trap_dirty_tracking(t)) {
        tap_ok(1, "# SKIP uffd WP unavailable: %s",
           cxlssd_trap_dirty_mechanism(t));
    } else {
        struct cxlssd_trap_stats ts0, ts1, ts2;
        struct cxlssd_stats s0, s1;

        touch(&e, 0, 0);
        tap_ok(cxlssd_page_state(m, 0) == CXLSSD_CACHED &&
           !cxlssd_page_dirty(m, 0), "read miss: page 0 resident and clean");
        cxlssd_trap_get_stats(t, &ts0);
        touch(&e, 0, 1);
        cxlssd_trap_get_stats(t, &ts1);
        tap_ok(cxlssd_page_dirty(m, 0), "first write to a clean resident page "
           "marks it dirty");
        tap_ok(ts1.wp_faults == ts0.wp_faults + 1, "exactly one WP fault for it "
           "(%llu)", (unsigned long long)(ts1.wp_faults - ts0.wp_faults));
        touch(&e, 0, 1);
        cxlssd_trap_get_stats(t, &ts2);
        tap_ok(ts2.wp_faults == ts1.wp_faults, "second write: no further fault");
        tap_ok(((volatile uint64_t *)(e.b))[1] == 0xd1d1d1d1d1d1d1d1ull,
           "write visible through the unregistered view");

        touch(&e, 1, 0);    /* read only: stays clean */
        tap_ok(!cxlssd_page_dirty(m, 1), "page 1 only read: clean");
        cxlssd_trap_get_stats(t, &ts0);
        touch(&e, 2, 1);    /* write miss */
        cxlssd_trap_get_stats(t, &ts1);
        tap_ok(cxlssd_page_dirty(m, 2) && ts1.wp_faults == ts0.wp_faults,
           "write miss: dirty without a WP fault");

        /* Evict pages 0 (dirty), 1 (clean), 2 (dirty): FIFO order. */
        cxlssd_model_get_stats(m, &s0);
        for (uint64_t p = 3; p < 3 + FRAMES; p++) {
            touch(&e, p, 0);
        }
        cxlssd_model_get_stats(m, &s1);
        /* victims are unmapped by the eviction worker: let it finish */
        settle(m, 0);
        settle(m, 1);
        settle(m, 2);
        tap_ok(cxlssd_page_state(m, 0) == CXLSSD_NOT_CACHED &&
           cxlssd_page_state(m, 1) == CXLSSD_NOT_CACHED &&
           cxlssd_page_state(m, 2) == CXLSSD_NOT_CACHED,
           "pages 0-2 evicted");
        tap_ok(s1.evictions_dirty - s0.evictions_dirty == 2,
           "two dirty evictions (pages 0 and 2): %llu",
           (unsigned long long)(s1.evictions_dirty - s0.evictions_dirty));
        tap_ok(s1.evictions_clean - s0.evictions_clean == 1,
           "one clean eviction (page 1): %llu",
           (unsigned long long)(s1.evictions_clean - s0.evictions_clean));

        /* Re-read page 0 after its dirty eviction: clean again, the data
         * written before survives, and WP is re-armed. */
        touch(&e, 0, 0);
        tap_ok(!cxlssd_page_dirty(m, 0) &&
           ((volatile uint64_t *)e.a)[1] == 0xd1d1d1d1d1d1d1d1ull,
           "refilled page 0 is clean and keeps its data");
        cxlssd_trap_get_stats(t, &ts0);
        touch(&e, 0, 1);
        cxlssd_trap_get_stats(t, &ts1);
        tap_ok(cxlssd_page_dirty(m, 0) && ts1.wp_faults == ts0.wp_faults + 1,
           "write protection re-armed after refill");
    }
    cxlssd_trap_free(t);
    cxlssd_model_free(m);

    /* Fallback without WP. */
    t = start(&e, &m, false);
    if (!t) {
        tap_ok(0, "trap without track_dirty");
        return tap_done();
    }
    tap_ok(!cxlssd_trap_dirty_tracking(t) &&
       strstr(cxlssd_trap_dirty_mechanism(t), "not seen") != NULL,
       "track_dirty=off: mechanism says so (%s)",
       cxlssd_trap_dirty_mechanism(t));
    touch(&e, 5, 0);
    touch(&e, 5, 1);
    tap_ok(!cxlssd_page_dirty(m, 5), "without WP a write to a resident clean "
       "page is not seen (documented)");
    touch(&e, 6, 1);
    tap_ok(cxlssd_page_dirty(m, 6), "without WP a write miss is dirty");
    cxlssd_trap_free(t);
    cxlssd_model_free(m);
    env_close(&e);
    return tap_done();
}
