/*
 * The miss service: the one path every cxl-ssd miss takes (see
 * miss_service.h for who calls it).  Top to bottom:
 *
 *   cxlssd_serve_miss(request)
 *     [serialize_begin: the BQL with bql=on]
 *     until served (or stopping):
 *       cxlssd_miss(now): the model decides
 *       FILL      this miss owns the fill (serve_fill):
 *                 unmap the victims, evict_done each (their writebacks and
 *                 any GC were charged by the decision); queue the
 *                 prefetches; compensate the deadline; wait for it; map
 *                 the page (map_in_wait: before the wait); fill_done.
 *                 With batch_evict a fill that crosses the low watermark
 *                 also frees frames up to the high one, after its own
 *                 victims (evict_batch).
 *                 With defer_unmap the victims are unmapped after the map
 *                 instead (t_unmapped then follows t_mapped).
 *       LOADING   someone else's fill (a duplicate fault, or a prefetched
 *                 page): wait until the page leaves LOADING, completing
 *                 due prefetches meanwhile; CACHED -> wake the faulter,
 *                 else decide again.  (every_access: always decide again.)
 *       RESIDENT  a duplicate fault: map the page again if its mapping was
 *                 lost, else just wake the faulter.  (every_access: a hit.)
 *       EVICTING  wait until the eviction finishes (or ~1 us when no frame
 *                 of the set can be had), decide again.
 *     stopping without a fill: wake the faulter (never left blocked)
 *     [serialize_end] -> after_miss -> record (ring, miss_done trace)
 *
 * Every wait goes through wait_begin/wait_end, so a substrate that holds a
 * lock another filler needs (mmio's BQL) drops it while waiting.
 *
 * Compensation (cfg.compensate): the wait is shortened by the delivery
 * already spent when the model decided, measured from the kernel event
 * that raised the fault (t_host_fault_ns, the trap's host fault clock) when
 * known, else from the embedder's own t_fault_ns (counted as unclocked),
 * plus cfg.compensate_ns, a calibrated constant for what no clock sees
 * before the wait ends (the fault's entry before the tracepoint, the
 * faulting thread's way back; bench/breakdown/fig1 calibrates it): the
 * wait ends at deadline_model - (decision_start - t_host_fault) -
 * compensate_ns, never before the decision ended.  Records keep both
 * deadlines (t_deadline_model_ns, t_deadline_ns).
 *
 * Prefetches: cxlssd_miss() hands back pages now LOADING on the caller's
 * behalf, each with its own deadline.  They wait in one queue per device
 * (prefetch_queue.c); any thread serving misses completes the due ones
 * (map, fill_done), and the trap's sleeping handlers bound their sleep by
 * the earliest deadline.  An access to a still-LOADING prefetched page
 * takes the LOADING path.
 */
#include "miss_service.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prefetch_queue.h"
#include "relax.h"
#include "wait.h"

#define SPIN_YIELD_AFTER_NS 50000ull   /* past the hint: start yielding */
#define EVICTING_BACKOFF_NS 1000ull
#define PREFETCH_BATCH 32

struct cxlssd_miss_service {
    struct cxlssd_model *model;
    struct cxlssd_miss_service_config cfg;
    const struct cxlssd_substrate *sub;     /* &cfg.substrate */
    _Atomic(struct cxlssd_record_ring *) ring;  /* cfg.ring, or as set */
    struct cxlssd_prefetch_queue *prefetches;
    _Atomic uint64_t ordinal;           /* served misses (cfg.record_ab) */
    _Atomic uint64_t st_duplicate, st_remaps, st_unclocked,
        st_serialize_wait_ns;
    _Atomic uint32_t resident_remaps;   /* cxlssd_serve_resident_fault()s
                                         * between their state check and
                                         * their last unmap */
};

/* Trace hook @hook of the service, unless @quiet (in a signal handler). */
#define TRACE(svc, quiet, hook, ...)                                    \
    do {                                                                \
        if ((svc)->cfg.trace.hook && !(quiet)) {                        \
            (svc)->cfg.trace.hook((svc)->cfg.trace_opaque, __VA_ARGS__); \
        }                                                               \
    } while (0)

/* CLOCK_MONOTONIC ns (cxlssd_now_ns() without the call). */
static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline bool stopping(const struct cxlssd_miss_service *svc)
{
    return svc->cfg.stop &&
           atomic_load_explicit(svc->cfg.stop, memory_order_relaxed);
}

static inline void count(_Atomic uint64_t *c, uint64_t v)
{
    atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

/* The steps of a miss, in the order it takes them. */
static bool serialize_begin(struct cxlssd_miss_service *svc, pid_t tid,
                            struct cxlssd_record *rec);
static void serve_fill(struct cxlssd_miss_service *svc,
                       const struct cxlssd_miss_request *req,
                       const struct cxlssd_miss *m, struct cxlssd_record *rec);
static void wait_while_loading(struct cxlssd_miss_service *svc,
                               uint64_t page, uint64_t hint, bool quiet);
static void wait_while_evicting(struct cxlssd_miss_service *svc,
                                uint64_t page, uint64_t since, bool quiet);
static void record(struct cxlssd_miss_service *svc,
                   const struct cxlssd_record *rec, bool quiet);

/* Around a wait: the substrate drops its lock (returns whether it did). */
static bool wait_begin(struct cxlssd_miss_service *svc)
{
    return svc->sub->wait_begin && svc->sub->wait_begin(svc->sub->opaque);
}

static void wait_end(struct cxlssd_miss_service *svc, bool dropped)
{
    if (dropped) {
        svc->sub->wait_end(svc->sub->opaque);
    }
}

static void wake(struct cxlssd_miss_service *svc, uint64_t page)
{
    if (svc->sub->wake) {
        svc->sub->wake(svc->sub->opaque, page);
    }
}

void cxlssd_serve_miss(struct cxlssd_miss_service *svc,
                       const struct cxlssd_miss_request *req)
{
    const uint64_t page = req->page;
    const bool quiet = req->in_signal_handler;
    struct cxlssd_record rec;
    memset(&rec, 0, sizeof(rec));
    rec.page = page;
    rec.tid = req->tid;
    rec.vcpu = req->vcpu;
    rec.flags = req->write ? CXLSSD_REC_WRITE : 0;
    rec.victim_page = UINT64_MAX;
    rec.t_fault_ns = req->t_fault_ns;
    rec.t_host_fault_ns = req->t_host_fault_ns;
    TRACE(svc, quiet, fault, page, req->write, req->tid, req->vcpu);

    bool locked = serialize_begin(svc, req->tid, &rec);
    bool filled = false, waited = false, hit = false, done = false;
    bool first = true;
    uint64_t evict_since = 0;
    struct cxlssd_miss m;
    while (!done && !stopping(svc)) {
        cxlssd_miss(svc->model, page, req->write, now_ns(), &m);
        TRACE(svc, quiet, decision, &m);
        if (first && m.outcome != CXLSSD_MISS_FILL) {
            count(&svc->st_duplicate, 1);
        }
        first = false;
        switch (m.outcome) {
        case CXLSSD_MISS_FILL:
            serve_fill(svc, req, &m, &rec);
            filled = done = true;
            break;
        case CXLSSD_MISS_LOADING:
            waited = true;
            rec.flags |= CXLSSD_REC_WAITED_LOADING;
            if (m.prefetch_hit) {
                rec.flags |= CXLSSD_REC_PREFETCH_HIT;
            }
            if (!rec.t_decision_start_ns) {
                rec.t_decision_start_ns = m.decision_start_ns;
                rec.t_decision_end_ns = m.decision_end_ns;
                rec.t_deadline_ns = m.deadline_ns;
                rec.t_deadline_model_ns = m.deadline_ns;
            }
            wait_while_loading(svc, page, m.deadline_ns, quiet);
            rec.t_wait_end_ns = now_ns();
            if (!svc->sub->every_access &&
                cxlssd_page_state(svc->model, page) == CXLSSD_CACHED) {
                wake(svc, page);
                rec.t_mapped_ns = now_ns();
                done = true;
            }
            /* else evicted again already (or evicting): decide again */
            break;
        case CXLSSD_MISS_RESIDENT:
            if (svc->sub->every_access) {
                cxlssd_hit(svc->model, page, req->write);
                hit = true;
            } else {
                cxlssd_serve_resident_fault(svc, page);
                if (waited) {
                    rec.t_mapped_ns = now_ns();
                }
            }
            done = true;
            break;
        case CXLSSD_MISS_EVICTING:
            if (!evict_since) {
                evict_since = now_ns();
            }
            wait_while_evicting(svc, page, evict_since, quiet);
            break;
        }
    }
    if (!filled && stopping(svc)) {
        wake(svc, page);        /* never leave a faulter blocked */
    }
    if (locked) {
        svc->sub->serialize_end(svc->sub->opaque);
        rec.t_bql_rel_ns = now_ns();
    }
    if (svc->sub->after_miss) {
        svc->sub->after_miss(svc->sub->opaque);
    }
    if (filled || (waited && !hit)) {
        record(svc, &rec, quiet);
    }
}

/* Serialisation hook (bql=on); its wait is counted, and recorded if it
 * took the lock. */
static bool serialize_begin(struct cxlssd_miss_service *svc, pid_t tid,
                            struct cxlssd_record *rec)
{
    if (!svc->sub->serialize_begin) {
        return false;
    }
    uint64_t req = now_ns();
    bool locked = svc->sub->serialize_begin(svc->sub->opaque, tid);
    uint64_t acq = now_ns();
    count(&svc->st_serialize_wait_ns, acq - req);
    if (locked) {
        rec->t_bql_req_ns = req;
        rec->t_bql_acq_ns = acq;
    }
    return locked;
}

static void unmap_victims(struct cxlssd_miss_service *svc,
                          const struct cxlssd_victim *v, uint32_t n,
                          bool quiet)
{
    if (svc->sub->unmap) {
        svc->sub->unmap(svc->sub->opaque, v, n);
    }
    if (svc->sub->evict) {
        svc->sub->evict(svc->sub->opaque, v, n);
    }
    for (uint32_t i = 0; i < n; i++) {
        cxlssd_evict_done(svc->model, v[i].page);
        TRACE(svc, quiet, evict, v[i].page, v[i].dirty);
    }
}

static void queue_prefetches(struct cxlssd_miss_service *svc,
                             const struct cxlssd_prefetch *p, uint32_t n,
                             bool quiet);

#define BATCH_VICTIMS 32    /* victims per unmap call of a batch (stack) */

/* batch_evict: free frames up to the high watermark once the low one is
 * crossed, on this miss's path; the record counts them. */
static void evict_batch(struct cxlssd_miss_service *svc,
                        struct cxlssd_record *rec, bool quiet)
{
    struct cxlssd_victim v[BATCH_VICTIMS];
    uint32_t n;

    if (!svc->cfg.batch_evict || !cxlssd_evict_needed(svc->model)) {
        return;
    }
    while (!stopping(svc) &&
           (n = cxlssd_evict_background(svc->model, now_ns(), v,
                                        BATCH_VICTIMS)) > 0) {
        if (rec->victim_page == UINT64_MAX) {
            rec->victim_page = v[0].page;
        }
        for (uint32_t i = 0; i < n; i++) {
            if (v[i].dirty) {
                rec->flags |= CXLSSD_REC_DIRTY_EVICT;
                TRACE(svc, quiet, writeback, v[i].page);
            }
        }
        unmap_victims(svc, v, n, quiet);
        rec->nvictims += n;
        rec->t_unmapped_ns = now_ns();
    }
}

/* The wait's end under compensation (see the top of this file). */
static uint64_t compensated_deadline(struct cxlssd_miss_service *svc,
                                     const struct cxlssd_miss_request *req,
                                     const struct cxlssd_miss *m,
                                     struct cxlssd_record *rec)
{
    uint64_t deadline = m->deadline_ns;
    if (!svc->cfg.compensate) {
        return deadline;
    }
    uint64_t since = req->t_host_fault_ns ? req->t_host_fault_ns
                                          : req->t_fault_ns;
    uint64_t shift = svc->cfg.compensate_ns;
    if (m->decision_start_ns > since) {
        shift += m->decision_start_ns - since;
    }
    if (!req->t_host_fault_ns) {
        count(&svc->st_unclocked, 1);
    }
    deadline = deadline > shift ? deadline - shift : 0;
    if (deadline < m->decision_end_ns) {
        deadline = m->decision_end_ns;
    }
    if (deadline > m->deadline_ns) {
        deadline = m->deadline_ns;
    }
    if (deadline < m->deadline_ns) {
        rec->flags |= CXLSSD_REC_COMPENSATED;
    }
    return deadline;
}

/* Wait for @deadline without the substrate's lock; returns when the wait
 * ended (before that lock is taken again). */
static uint64_t wait_for(struct cxlssd_miss_service *svc, uint64_t deadline)
{
    bool dropped = wait_begin(svc);
    uint64_t end = cxlssd_wait_until(deadline);
    wait_end(svc, dropped);
    return end;
}

static void map_page(struct cxlssd_miss_service *svc,
                     const struct cxlssd_miss_request *req)
{
    if (svc->sub->map) {
        svc->sub->map(svc->sub->opaque, req->page, req->write);
    }
}

static void serve_fill(struct cxlssd_miss_service *svc,
                       const struct cxlssd_miss_request *req,
                       const struct cxlssd_miss *m, struct cxlssd_record *rec)
{
    const bool quiet = req->in_signal_handler;
    rec->t_decision_start_ns = m->decision_start_ns;
    rec->t_decision_end_ns = m->decision_end_ns;
    if (m->nvictims > 0) {
        rec->nvictims = m->nvictims;
        rec->victim_page = m->victims[0].page;
        for (uint32_t i = 0; i < m->nvictims; i++) {
            if (m->victims[i].dirty) {
                rec->flags |= CXLSSD_REC_DIRTY_EVICT;
                TRACE(svc, quiet, writeback, m->victims[i].page);
            }
        }
        if (m->gc_runs) {
            TRACE(svc, quiet, gc, req->page, m->gc_runs);
        }
        if (!svc->cfg.defer_unmap) {
            unmap_victims(svc, m->victims, m->nvictims, quiet);
            rec->t_unmapped_ns = now_ns();
        }
    }
    evict_batch(svc, rec, quiet);
    if (m->nprefetch > 0) {
        rec->flags |= CXLSSD_REC_PREFETCH_ISSUED;
        queue_prefetches(svc, m->prefetch, m->nprefetch, quiet);
    }
    if (svc->sub->fill) {
        svc->sub->fill(svc->sub->opaque, req->page);  /* inside the wait */
    }
    uint64_t deadline = compensated_deadline(svc, req, m, rec);
    rec->t_deadline_model_ns = m->deadline_ns;
    rec->t_deadline_ns = deadline;
    if (req->map_in_wait) {
        map_page(svc, req);
        rec->t_mapped_ns = now_ns();
        rec->t_wait_end_ns = wait_for(svc, deadline);
    } else {
        rec->t_wait_end_ns = wait_for(svc, deadline);
        map_page(svc, req);
        rec->t_mapped_ns = now_ns();
    }
    cxlssd_fill_done(svc->model, req->page);
    TRACE(svc, quiet, map, req->page, deadline, rec->t_mapped_ns);
    if (svc->cfg.defer_unmap && m->nvictims > 0) {
        /* the faulter runs again: unmap off its critical path */
        unmap_victims(svc, m->victims, m->nvictims, quiet);
        rec->t_unmapped_ns = now_ns();
    }
}

/* ---- prefetch completion ---- */

static void complete_prefetch(struct cxlssd_miss_service *svc, uint64_t page,
                              bool quiet)
{
    if (svc->sub->fill) {
        svc->sub->fill(svc->sub->opaque, page);
    }
    if (svc->sub->map) {
        svc->sub->map(svc->sub->opaque, page, false);
    }
    cxlssd_fill_done(svc->model, page);
    TRACE(svc, quiet, prefetch_complete, page);
}

static void queue_prefetches(struct cxlssd_miss_service *svc,
                             const struct cxlssd_prefetch *p, uint32_t n,
                             bool quiet)
{
    uint64_t overflow[CXLSSD_MAX_PREFETCH];
    for (uint32_t i = 0; i < n; i++) {
        TRACE(svc, quiet, prefetch_issue, p[i].page, p[i].deadline_ns);
    }
    uint32_t nover = cxlssd_prefetch_queue_push(svc->prefetches, p, n,
                                                overflow);
    for (uint32_t i = 0; i < nover; i++) {
        complete_prefetch(svc, overflow[i], quiet);
    }
}

static uint32_t complete_queued(struct cxlssd_miss_service *svc, uint64_t now,
                                bool all, bool quiet)
{
    uint32_t done = 0;
    for (;;) {
        uint64_t pages[PREFETCH_BATCH];
        uint32_t n = cxlssd_prefetch_queue_pop_due(svc->prefetches, now, all,
                                                   pages, PREFETCH_BATCH);
        for (uint32_t i = 0; i < n; i++) {
            complete_prefetch(svc, pages[i], quiet);
        }
        done += n;
        if (n < PREFETCH_BATCH) {
            return done;
        }
    }
}

static uint32_t complete_due(struct cxlssd_miss_service *svc, uint64_t now,
                             bool quiet)
{
    if (now < cxlssd_prefetch_queue_next(svc->prefetches)) {
        return 0;
    }
    return complete_queued(svc, now, false, quiet);
}

uint32_t cxlssd_complete_prefetches(struct cxlssd_miss_service *svc,
                                    uint64_t now)
{
    return complete_due(svc, now, false);
}

uint64_t cxlssd_next_prefetch(const struct cxlssd_miss_service *svc)
{
    return cxlssd_prefetch_queue_next(svc->prefetches);
}

void cxlssd_complete_all_prefetches(struct cxlssd_miss_service *svc)
{
    complete_queued(svc, 0, true, false);
}

/* ---- waiting on another thread's fill or eviction ---- */

/* Until @page leaves LOADING; @hint is its deadline. */
static void wait_while_loading(struct cxlssd_miss_service *svc,
                               uint64_t page, uint64_t hint, bool quiet)
{
    bool dropped = wait_begin(svc);
    for (;;) {
        uint64_t now = now_ns();
        complete_due(svc, now, quiet);
        if (cxlssd_page_state(svc->model, page) != CXLSSD_LOADING ||
            stopping(svc)) {
            break;
        }
        uint64_t next = cxlssd_next_prefetch(svc);
        if (hint < next) {
            next = hint;
        }
        if (now < next) {
            cxlssd_sleep_coarse(next);      /* only if far away */
            cxlssd_cpu_relax();
        } else if (now - next > SPIN_YIELD_AFTER_NS) {
            sched_yield();  /* the owner may be preempted (2-CPU hosts) */
        } else {
            cxlssd_cpu_relax();
        }
    }
    wait_end(svc, dropped);
}

/*
 * EVICTING outcome: the page itself is being evicted (wait until its
 * evict_done), or no frame could be had because every frame of its set is
 * loading or being evicted (the page is NOT_CACHED: back off ~1 us before
 * deciding again).  @since is when the retries started: after 50 us, yield
 * the CPU to the threads that will finish those fills and evictions.
 */
static void wait_while_evicting(struct cxlssd_miss_service *svc,
                                uint64_t page, uint64_t since, bool quiet)
{
    bool dropped = wait_begin(svc);
    uint64_t start = now_ns();
    for (;;) {
        uint64_t now = now_ns();
        complete_due(svc, now, quiet);
        if (stopping(svc) ||
            (cxlssd_page_state(svc->model, page) != CXLSSD_EVICTING &&
             now - start > EVICTING_BACKOFF_NS)) {
            break;
        }
        if (now - since > SPIN_YIELD_AFTER_NS) {
            sched_yield();
        } else {
            cxlssd_cpu_relax();
        }
    }
    wait_end(svc, dropped);
}

/*
 * A fault on a page the model holds resident.  Usually a duplicate: the
 * page was mapped after the fault was raised (two vCPUs, or a prefetch
 * completing), and the map finds it mapped and wakes the faulter.  But if
 * the page table lost the mapping while the model kept the page CACHED,
 * only mapping it again ends the fault (a wake alone would make the
 * faulter fault again, forever).
 *
 * The page may be picked for eviction at any point of this.  A page that
 * is no longer CACHED when the count below is up is not mapped: the
 * faulter is woken and faults again, into the miss path.  One picked after
 * that check may have had its evictor's unmap run before this map: it is
 * unmapped again, so a page the model does not hold never stays mapped.
 * Until then the faulter may write through the new mapping, so an
 * evictor that copies the page's data out and then drops it (the media
 * store) waits for the count to fall first (cxlssd_wait_resident_remaps):
 * a write landing between its copy and its drop would be lost.  The count
 * and the state are read seq_cst on both sides (the evictor changes the
 * state before its unmap, and reads the count after it).
 */
void cxlssd_serve_resident_fault(struct cxlssd_miss_service *svc,
                                 uint64_t page)
{
    if (!svc->sub->map) {
        return;
    }
    atomic_fetch_add(&svc->resident_remaps, 1);
    if (cxlssd_page_state(svc->model, page) != CXLSSD_CACHED) {
        atomic_fetch_sub_explicit(&svc->resident_remaps, 1,
                                  memory_order_seq_cst);
        wake(svc, page);
        return;
    }
    if (svc->sub->map(svc->sub->opaque, page, false) == 0) {
        count(&svc->st_remaps, 1);
        enum cxlssd_page_state s = cxlssd_page_state(svc->model, page);
        if ((s == CXLSSD_NOT_CACHED || s == CXLSSD_EVICTING) &&
            svc->sub->unmap) {
            struct cxlssd_victim v = { .page = page };
            svc->sub->unmap(svc->sub->opaque, &v, 1);
        }
    }   /* else mapped already (woken), or an error (reported) */
    atomic_fetch_sub_explicit(&svc->resident_remaps, 1,
                              memory_order_seq_cst);
}

void cxlssd_wait_resident_remaps(struct cxlssd_miss_service *svc)
{
    while (atomic_load(&svc->resident_remaps) != 0) {
        cxlssd_cpu_relax();
    }
}

/* Push the record unless record_ab leaves it out (measurement aid). */
static void record(struct cxlssd_miss_service *svc,
                   const struct cxlssd_record *rec, bool quiet)
{
    if (svc->cfg.record_ab) {
        uint64_t ord = atomic_fetch_add_explicit(&svc->ordinal, 1,
                                                 memory_order_relaxed);
        if ((ord / svc->cfg.record_ab) & 1) {
            return;
        }
    }
    struct cxlssd_record_ring *ring = atomic_load_explicit(
        &svc->ring, memory_order_acquire);
    if (ring) {
        cxlssd_record_push(ring, rec);
    }
    TRACE(svc, quiet, miss_done, rec);
}

/* ---- life cycle ---- */

struct cxlssd_miss_service *
cxlssd_miss_service_new(struct cxlssd_model *model,
                        const struct cxlssd_miss_service_config *cfg,
                        char *err, size_t errlen)
{
    /* a LOADING page holds a frame: at most this many are queued */
    uint64_t cap = cxlssd_model_frames(model);
    if (cap > cxlssd_model_pages(model)) {
        cap = cxlssd_model_pages(model);
    }
    cap += CXLSSD_MAX_PREFETCH;
    struct cxlssd_miss_service *svc = calloc(1, sizeof(*svc));
    if (svc) {
        svc->prefetches = cxlssd_prefetch_queue_new(
            cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap);
    }
    if (!svc || !svc->prefetches) {
        snprintf(err, errlen, "cxl-ssd: out of memory (miss service)");
        free(svc);
        return NULL;
    }
    svc->model = model;
    svc->cfg = *cfg;
    svc->sub = &svc->cfg.substrate;
    atomic_init(&svc->ring, cfg->ring);
    return svc;
}

void cxlssd_miss_service_free(struct cxlssd_miss_service *svc)
{
    if (!svc) {
        return;
    }
    cxlssd_prefetch_queue_free(svc->prefetches);
    free(svc);
}

void cxlssd_miss_service_set_ring(struct cxlssd_miss_service *svc,
                                  struct cxlssd_record_ring *ring)
{
    atomic_store_explicit(&svc->ring, ring, memory_order_release);
}

void cxlssd_miss_service_get_stats(const struct cxlssd_miss_service *svc,
                                   struct cxlssd_miss_service_stats *out)
{
    memset(out, 0, sizeof(*out));
    out->duplicate_faults = atomic_load(&svc->st_duplicate);
    out->remaps = atomic_load(&svc->st_remaps);
    out->unclocked_misses = atomic_load(&svc->st_unclocked);
    out->serialize_wait_ns = atomic_load(&svc->st_serialize_wait_ns);
}
