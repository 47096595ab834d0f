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
 *                 any GC were charged by the decision; miss_evict.c);
 *                 queue the prefetches (miss_prefetch.c); compensate the
 *                 deadline; wait for it; map the page (map_in_wait: before
 *                 the wait); fill_done.
 *                 With batch_evict a fill that crosses the low watermark
 *                 also frees frames up to the high one, after its own
 *                 victims (miss_evict_batch).
 *                 With defer_unmap the victims are unmapped after the map
 *                 instead (t_unmapped then follows t_mapped).
 *       LOADING   someone else's fill (a duplicate fault, or a prefetched
 *                 page): wait until the page leaves LOADING (miss_wait.c),
 *                 completing due prefetches meanwhile; CACHED -> wake the
 *                 faulter, else decide again.  (every_access: always
 *                 decide again.)
 *       RESIDENT  a duplicate fault: map the page again if its mapping was
 *                 lost, else just wake the faulter (miss_resident.c).
 *                 (every_access: a hit.)
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
 * Prefetches (miss_prefetch.c): pages cxlssd_miss() made LOADING on the
 * caller's behalf wait in one queue per device; whoever serves misses
 * completes the due ones.  The other steps' files are listed in
 * miss_service_int.h.
 */
#include "miss_service_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wait.h"

/* The steps of a miss that this file takes, in their order (the others
 * are in miss_service_int.h). */
static bool serialize_begin(struct cxlssd_miss_service *svc, pid_t tid,
                            struct cxlssd_record *rec);
static void serve_fill(struct cxlssd_miss_service *svc,
                       const struct cxlssd_miss_request *req,
                       const struct cxlssd_miss *m, struct cxlssd_record *rec);
static void record(struct cxlssd_miss_service *svc,
                   const struct cxlssd_record *rec, bool quiet);

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
            miss_wait_while_loading(svc, page, m.deadline_ns, quiet);
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
            miss_wait_while_evicting(svc, page, evict_since, quiet);
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
        miss_record_victims(svc, rec, m->victims, m->nvictims, quiet);
        if (m->gc_runs) {
            TRACE(svc, quiet, gc, req->page, m->gc_runs);
        }
        if (!svc->cfg.defer_unmap) {
            miss_unmap_victims(svc, m->victims, m->nvictims, quiet);
            rec->t_unmapped_ns = now_ns();
        }
    }
    miss_evict_batch(svc, rec, quiet);
    if (m->nprefetch > 0) {
        rec->flags |= CXLSSD_REC_PREFETCH_ISSUED;
        miss_queue_prefetches(svc, m->prefetch, m->nprefetch, quiet);
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
    if (rec->t_wait_end_ns - deadline > svc->cfg.late_wait_ns) {
        rec->flags |= CXLSSD_REC_LATE_WAIT;
        count(&svc->st_late_waits, 1);
    }
    cxlssd_fill_done(svc->model, req->page);
    TRACE(svc, quiet, map, req->page, deadline, rec->t_mapped_ns);
    if (svc->cfg.defer_unmap && m->nvictims > 0) {
        /* the faulter runs again: unmap off its critical path */
        miss_unmap_victims(svc, m->victims, m->nvictims, quiet);
        rec->t_unmapped_ns = now_ns();
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
    out->late_waits = atomic_load(&svc->st_late_waits);
}
