/*
 * cxl-ssd mmio mode: every guest access to the window exits to the device's
 * MMIO callbacks on the vCPU thread, as the stock cxl-type3 route (and
 * Cylon's EPT-misconfig exits) do.  Hits are charged dram-latency-ns; misses
 * run the same model as uffd mode and wait for the NAND deadline.  The data
 * is read and written through the memdev's own mapping.
 *
 * TCG and KVM dispatch MMIO holding the BQL.  With bql=off the BQL is
 * dropped for the NAND wait only (the decision is made under it), so misses
 * on different vCPUs overlap; with bql=on it is kept, serialising every
 * miss and stalling the main loop as Cylon does.
 *
 * Prefetched pages have no mapping to install: they become resident when
 * their deadline has passed, checked on every access.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/thread.h"
#include "qapi/error.h"
#include "model/record_writer.h"
#include "model/wait.h"
#include "cxl_ssd.h"
#include "trace.h"

struct CXLSSDMmio {
    uint64_t dpa_base;              /* media offset of the overlay */
    struct cxlssd_record_writer *records;

    QemuMutex pf_lock;              /* protects the pending prefetches */
    GArray *pf_pending;             /* struct cxlssd_prefetch */

    uint64_t bql_wait_ns;           /* qatomic: re-taking the BQL after a
                                     * NAND wait (bql=off) */
    uint64_t miss_ordinal;          /* qatomic: served misses (record-ab) */
};

bool cxl_ssd_mmio_init(CXLSSDState *s, Error **errp)
{
    CXLSSDMmio *m = g_new0(CXLSSDMmio, 1);
    char err[256];

    qemu_mutex_init(&m->pf_lock);
    m->pf_pending = g_array_new(false, false, sizeof(struct cxlssd_prefetch));
    s->mmio = m;
    if (s->record_path && *s->record_path) {
        m->records = cxlssd_record_writer_new(s->record_path,
                                              s->cfg.record_ring, "mmio",
                                              s->accel, err, sizeof(err));
        if (!m->records) {
            error_setg(errp, "%s", err);
            return false;
        }
    }
    return true;
}

void cxl_ssd_mmio_free(CXLSSDState *s)
{
    CXLSSDMmio *m = s->mmio;

    if (!m) {
        return;
    }
    cxlssd_record_writer_free(m->records);
    g_array_free(m->pf_pending, true);
    qemu_mutex_destroy(&m->pf_lock);
    g_free(m);
    s->mmio = NULL;
}

/* QEMU is exiting (vCPUs stopped): write out and close the per-miss CSV. */
void cxl_ssd_mmio_close_records(CXLSSDState *s)
{
    CXLSSDMmio *m = s->mmio;

    if (m && m->records) {
        cxlssd_record_writer_free(m->records);
        m->records = NULL;
    }
}

static void cxl_ssd_mmio_complete_prefetches(CXLSSDState *s, uint64_t now)
{
    CXLSSDMmio *m = s->mmio;
    guint i = 0;

    qemu_mutex_lock(&m->pf_lock);
    while (i < m->pf_pending->len) {
        struct cxlssd_prefetch *p = &g_array_index(m->pf_pending,
                                                   struct cxlssd_prefetch, i);
        if (p->deadline_ns <= now) {
            cxlssd_fill_done(s->model, p->page);
            g_array_remove_index_fast(m->pf_pending, i);
        } else {
            i++;
        }
    }
    qemu_mutex_unlock(&m->pf_lock);
}

/* Wait for @deadline, without the BQL unless bql=on.  Returns when the
 * wait ended (before re-taking the BQL; that wait is counted in the
 * stats' bql_wait_ns). */
static uint64_t cxl_ssd_mmio_wait(CXLSSDState *s, uint64_t deadline)
{
    uint64_t now;

    if (s->bql || !bql_locked()) {
        return cxlssd_wait_until(deadline);
    }
    bql_unlock();
    now = cxlssd_wait_until(deadline);
    bql_lock();
    qatomic_add(&s->mmio->bql_wait_ns, cxlssd_now_ns() - now);
    return now;
}

void cxl_ssd_mmio_get_stats(CXLSSDState *s, uint64_t *bql_wait_ns,
                            uint64_t *records_written,
                            uint64_t *records_dropped)
{
    CXLSSDMmio *m = s->mmio;
    struct cxlssd_record_ring *ring =
        m->records ? cxlssd_record_writer_ring(m->records) : NULL;

    *bql_wait_ns = qatomic_read(&m->bql_wait_ns);
    *records_written = cxlssd_record_written(ring);
    *records_dropped = cxlssd_record_dropped(ring);
}

static void cxl_ssd_mmio_miss(CXLSSDState *s, uint64_t page, bool write)
{
    CXLSSDMmio *m = s->mmio;
    struct cxlssd_miss miss;
    struct cxlssd_record rec = {
        .page = page,
        .tid = qemu_get_thread_id(),
        .victim_page = UINT64_MAX,
        .flags = write ? CXLSSD_REC_WRITE : 0,
    };
    uint32_t i;

    rec.vcpu = cxl_ssd_vcpu_index(s, rec.tid);
    rec.t_fault_ns = cxlssd_now_ns();
    for (;;) {
        cxlssd_miss(s->model, page, write, cxlssd_now_ns(), &miss);
        if (miss.outcome == CXLSSD_MISS_FILL) {
            break;
        }
        if (miss.outcome == CXLSSD_MISS_RESIDENT) {
            cxlssd_hit(s->model, page, write);
            return;
        }
        if (miss.outcome == CXLSSD_MISS_LOADING) {
            /* A prefetch (or another vCPU's fill) is in flight. */
            rec.flags |= CXLSSD_REC_WAITED_LOADING;
            cxl_ssd_mmio_wait(s, miss.deadline_ns);
            cxl_ssd_mmio_complete_prefetches(s, cxlssd_now_ns());
        }
    }

    rec.t_decision_start_ns = miss.decision_start_ns;
    rec.t_decision_end_ns = miss.decision_end_ns;
    rec.nvictims = miss.nvictims;
    for (i = 0; i < miss.nvictims; i++) {
        if (miss.victims[i].dirty) {
            rec.flags |= CXLSSD_REC_DIRTY_EVICT;
        }
        cxlssd_evict_done(s->model, miss.victims[i].page);
    }
    if (miss.nvictims) {
        rec.victim_page = miss.victims[0].page;
    }
    rec.t_unmapped_ns = cxlssd_now_ns();
    if (miss.nprefetch) {
        rec.flags |= CXLSSD_REC_PREFETCH_ISSUED;
        qemu_mutex_lock(&m->pf_lock);
        g_array_append_vals(m->pf_pending, miss.prefetch, miss.nprefetch);
        qemu_mutex_unlock(&m->pf_lock);
    }

    rec.t_deadline_model_ns = miss.deadline_ns;
    rec.t_deadline_ns = miss.deadline_ns;
    if (s->compensate) {
        /* Measured: (decision start - callback entry); calibrated:
         * compensate-ns (TCG's exit before the callback and the return to
         * the guest).  Never before the decision ended. */
        uint64_t shift = miss.decision_start_ns - rec.t_fault_ns +
                         s->compensate_ns;
        rec.t_deadline_ns = miss.deadline_ns > shift ?
                            miss.deadline_ns - shift : 0;
        rec.t_deadline_ns = MAX(rec.t_deadline_ns, miss.decision_end_ns);
        rec.t_deadline_ns = MIN(rec.t_deadline_ns, miss.deadline_ns);
        if (rec.t_deadline_ns < miss.deadline_ns) {
            rec.flags |= CXLSSD_REC_COMPENSATED;
        }
    }
    rec.t_wait_end_ns = cxl_ssd_mmio_wait(s, rec.t_deadline_ns);
    cxlssd_fill_done(s->model, page);
    rec.t_mapped_ns = cxlssd_now_ns();
    if (s->record_ab &&         /* measurement aid: alternate runs of N */
        (qatomic_fetch_inc(&m->miss_ordinal) / s->record_ab) & 1) {
        return;
    }
    if (m->records) {
        cxlssd_record_push(cxlssd_record_writer_ring(m->records), &rec);
    }
    trace_cxl_ssd_miss(page, write, rec.t_fault_ns, rec.t_deadline_ns,
                       rec.t_mapped_ns);
}

static void cxl_ssd_mmio_access(CXLSSDState *s, hwaddr addr, bool write)
{
    uint64_t page = (s->mmio->dpa_base + addr) / s->cfg.page_size;
    uint64_t now = cxlssd_now_ns();

    cxl_ssd_mmio_complete_prefetches(s, now);
    if (cxlssd_hit(s->model, page, write)) {
        if (s->dram_latency_ns) {
            cxlssd_wait_until(now + s->dram_latency_ns);
        }
        return;
    }
    cxl_ssd_mmio_miss(s, page, write);
}

static MemTxResult cxl_ssd_mmio_read(void *opaque, hwaddr addr,
                                     uint64_t *data, unsigned size,
                                     MemTxAttrs attrs)
{
    CXLSSDState *s = opaque;

    cxl_ssd_mmio_access(s, addr, false);
    *data = ldn_le_p(s->media + s->mmio->dpa_base + addr, size);
    return MEMTX_OK;
}

static MemTxResult cxl_ssd_mmio_write(void *opaque, hwaddr addr,
                                      uint64_t data, unsigned size,
                                      MemTxAttrs attrs)
{
    CXLSSDState *s = opaque;

    cxl_ssd_mmio_access(s, addr, true);
    stn_le_p(s->media + s->mmio->dpa_base + addr, size, data);
    return MEMTX_OK;
}

/* Accesses are split into aligned pieces of up to 8 bytes, so a piece
 * never straddles two pages. */
static const MemoryRegionOps cxl_ssd_mmio_ops = {
    .read_with_attrs = cxl_ssd_mmio_read,
    .write_with_attrs = cxl_ssd_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = false,
    },
};

void cxl_ssd_mmio_init_overlay(CXLSSDState *s, uint64_t dpa, uint64_t size)
{
    g_autofree char *name = g_strdup_printf("cxl-ssd-mmio:%s",
                                DEVICE(s)->id ? DEVICE(s)->id : "anon");

    s->mmio->dpa_base = dpa;
    memory_region_init_io(&s->overlay, OBJECT(s), &cxl_ssd_mmio_ops, s,
                          name, size);
    /*
     * With bql=off a miss drops the BQL for its NAND wait while its
     * callback is still running; QEMU's per-device re-entrancy guard would
     * then refuse every other vCPU's access to the window ("Blocked
     * re-entrant IO": reads return 0, writes are lost).  The callbacks are
     * safe to run concurrently (the model is thread-safe, the prefetch
     * list has its own lock) and never access the window themselves.
     */
    s->overlay.disable_reentrancy_guard = true;
}
