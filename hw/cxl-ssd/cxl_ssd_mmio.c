/*
 * cxl-ssd mmio mode: every guest access to the window exits to the device's
 * MMIO callbacks on the vCPU thread, as the stock cxl-type3 route (and
 * Cylon's EPT-misconfig exits) do.  Hits are charged dram-latency-ns; misses
 * run the same model as uffd mode and wait for the NAND deadline.  The data
 * is read and written through the memdev's own mapping.
 *
 * TCG and KVM dispatch MMIO holding the BQL.  With bql=off the BQL is
 * dropped for the waits only (the decision is made under it), so misses
 * on different vCPUs overlap; with bql=on it is kept, serialising every
 * miss and stalling the main loop as Cylon does.
 *
 * A miss is served by the model's miss service (model/miss_service.c), as
 * in uffd mode.  Prefetched pages have no mapping to install: they become
 * resident when their deadline has passed, checked on every access.
 *
 * media=PATH (model/media.h): the memfd holds only resident pages, as in
 * uffd mode: a fill reads the page from the file into the memfd before the
 * NAND wait, an evicted page is written back if dirty (every write
 * reaches the model here: the dirty state is exact) and punched out of the
 * memfd.  Decisions, evictions and the data access all run under the BQL
 * (only waits drop it), so no access reads a page being punched.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/thread.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "exec/ramblock.h"
#include "system/hostmem.h"
#include "model/media.h"
#include "model/miss_service.h"
#include "model/record_writer.h"
#include "trace.h"
#include "model/wait.h"
#include "cxl_ssd.h"

struct CXLSSDMmio {
    uint64_t dpa_base;              /* media offset of the overlay */
    struct cxlssd_record_writer *records;
    struct cxlssd_miss_service *service;
    uint64_t bql_wait_ns;           /* qatomic: re-taking the BQL after a
                                     * wait (bql=off) */
    struct cxlssd_media *media;     /* media=PATH, else NULL */
    int memfd;
    uint64_t memfd_off;
    uint64_t media_failures;
};

static uint64_t cxl_ssd_mmio_memfd_off(CXLSSDState *s, uint64_t page)
{
    return s->mmio->memfd_off + page * s->cfg.page_size;
}

static void cxl_ssd_mmio_fill(void *opaque, uint64_t page)
{
    CXLSSDState *s = opaque;
    int r = cxlssd_media_fill(s->mmio->media, page, s->mmio->memfd,
                              cxl_ssd_mmio_memfd_off(s, page));

    if (r < 0) {
        error_report("cxl-ssd: media=%s: cannot fill page %" PRIu64 ": %s",
                     s->cfg.media_path, page, strerror(-r));
    }
}

/* Write @page back if needed and drop it from the memfd; false if the
 * writeback failed (it stays). */
static bool cxl_ssd_mmio_media_evict(CXLSSDState *s, uint64_t page,
                                     bool dirty)
{
    CXLSSDMmio *m = s->mmio;
    int r;

    if (dirty || cxlssd_page_dirty(s->model, page) ||
        cxlssd_media_stuck(m->media, page) ||
        cxlssd_media_cache_dirty(m->media, page)) {
        r = cxlssd_media_writeback(m->media, page, m->memfd,
                                   cxl_ssd_mmio_memfd_off(s, page));
        if (r < 0) {
            m->media_failures++;
            if (!(m->media_failures & (m->media_failures - 1))) {
                error_report("cxl-ssd: media=%s: writeback of page %" PRIu64
                             " failed: %s; the page stays in host memory "
                             "(%" PRIu64 " failed writebacks so far)",
                             s->cfg.media_path, page, strerror(-r),
                             m->media_failures);
            }
            trace_cxl_ssd_media_writeback_error(page, -r);
            return false;
        }
    }
    if (fallocate(m->memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  cxl_ssd_mmio_memfd_off(s, page), s->cfg.page_size) < 0) {
        error_report("cxl-ssd: media: cannot drop page %" PRIu64 ": %s",
                     page, strerror(errno));
    }
    return true;
}

static void cxl_ssd_mmio_evict(void *opaque, const struct cxlssd_victim *v,
                               uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        cxl_ssd_mmio_media_evict(opaque, v[i].page, v[i].dirty);
    }
}

void cxl_ssd_mmio_media_flush(CXLSSDState *s, bool drop)
{
    CXLSSDMmio *m = s->mmio;
    uint64_t pages = cxlssd_model_pages(s->model), p;

    if (!m || !m->media) {
        return;
    }
    cxlssd_complete_all_prefetches(m->service);
    for (p = 0; p < pages; p++) {
        if (cxlssd_page_state(s->model, p) == CXLSSD_NOT_CACHED) {
            continue;
        }
        if (drop) {
            cxl_ssd_mmio_media_evict(s, p, false);
        } else if (cxlssd_page_dirty(s->model, p) ||
                   cxlssd_media_stuck(m->media, p) ||
                   cxlssd_media_cache_dirty(m->media, p)) {
            cxlssd_media_writeback(m->media, p, m->memfd,
                                   cxl_ssd_mmio_memfd_off(s, p));
        }
    }
}

/* The memdev as the media store's cache: a persistent device's outlives
 * QEMU (what a crash left is written back now); a volatile one starts
 * empty (a named file may hold an earlier run's pages). */
static bool cxl_ssd_mmio_media_cache(CXLSSDState *s, char *err, size_t len)
{
    CXLSSDMmio *m = s->mmio;
    g_autofree char *path = NULL;

    if (s->persistent) {
        path = cxl_ssd_backend_path(s);
        return cxlssd_media_attach_cache(m->media, m->memfd, m->memfd_off,
                                         path, err, len) == 0;
    }
    if (fallocate(m->memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  m->memfd_off, s->media_size) < 0) {
        snprintf(err, len, "media=%s: cannot empty the memory backend: %s",
                 s->cfg.media_path, strerror(errno));
        return false;
    }
    return true;
}

void cxl_ssd_mmio_media_close(CXLSSDState *s)
{
    CXLSSDMmio *m = s->mmio;
    char err[256];

    if (!m || !m->media) {
        return;
    }
    cxl_ssd_mmio_media_flush(s, false);
    if (cxlssd_media_close(m->media, true, err, sizeof(err)) < 0) {
        error_report("cxl-ssd: %s", err);
    }
    m->media = NULL;
}

/*
 * The substrate of the miss service for mmio: nothing to map or unmap (a
 * page is resident when the model says so), every access reaches the
 * service, and with bql=off every wait (the NAND deadline, another vCPU's
 * fill) runs without the BQL, which that vCPU needs to complete its fill.
 */
static bool cxl_ssd_mmio_wait_begin(void *opaque)
{
    CXLSSDState *s = opaque;

    if (s->cfg.bql || !bql_locked()) {
        return false;
    }
    bql_unlock();
    return true;
}

static void cxl_ssd_mmio_wait_end(void *opaque)
{
    CXLSSDState *s = opaque;
    uint64_t start = cxlssd_now_ns();

    bql_lock();
    qatomic_add(&s->mmio->bql_wait_ns, cxlssd_now_ns() - start);
}

bool cxl_ssd_mmio_init(CXLSSDState *s, Error **errp)
{
    CXLSSDMmio *m = g_new0(CXLSSDMmio, 1);
    struct cxlssd_miss_service_config cfg = {
        .substrate = {
            .opaque = s,
            .wait_begin = cxl_ssd_mmio_wait_begin,
            .wait_end = cxl_ssd_mmio_wait_end,
            .every_access = true,
        },
        .compensate = s->cfg.compensate,
        .compensate_ns = s->cfg.compensate_ns,
        .record_ab = s->cfg.record_ab,
        .late_wait_ns = s->cfg.late_wait_ns,
    };
    struct cxlssd_trap_hooks hooks;
    char err[512];

    s->mmio = m;
    if (s->cfg.media_path && *s->cfg.media_path) {
        MemoryRegion *vmr = host_memory_backend_get_memory(s->backend);

        m->memfd = memory_region_get_fd(vmr);
        if (m->memfd < 0 || !qemu_ram_is_shared(vmr->ram_block)) {
            error_setg(errp, "media: needs a shared, fd-backed memory "
                       "backend (memory-backend-memfd,share=on)");
            return false;
        }
        m->memfd_off = vmr->ram_block->fd_offset;
        m->media = cxlssd_media_open(s->cfg.media_path, s->model,
                                     s->cfg.media_page_cache, err,
                                     sizeof(err));
        if (!m->media || !cxl_ssd_mmio_media_cache(s, err, sizeof(err))) {
            error_setg(errp, "%s", err);
            return false;
        }
        cfg.substrate.fill = cxl_ssd_mmio_fill;
        cfg.substrate.evict = cxl_ssd_mmio_evict;
    }
    if (s->cfg.record_path && *s->cfg.record_path) {
        m->records = cxlssd_record_writer_new(s->cfg.record_path,
                                              s->cfg.record_ring, "mmio",
                                              s->accel, err, sizeof(err));
        if (!m->records) {
            error_setg(errp, "%s", err);
            return false;
        }
        cfg.ring = cxlssd_record_writer_ring(m->records);
    }
    cxl_ssd_hooks_fill(s, &hooks);
    cfg.trace = hooks.trace;
    cfg.trace_opaque = hooks.opaque;
    m->service = cxlssd_miss_service_new(s->model, &cfg, err, sizeof(err));
    if (!m->service) {
        error_setg(errp, "%s", err);
        return false;
    }
    return true;
}

void cxl_ssd_mmio_free(CXLSSDState *s)
{
    CXLSSDMmio *m = s->mmio;

    if (!m) {
        return;
    }
    cxl_ssd_mmio_media_close(s);
    cxlssd_miss_service_free(m->service);
    cxlssd_record_writer_free(m->records);
    g_free(m);
    s->mmio = NULL;
}

/* QEMU is exiting (vCPUs stopped): write out and close the per-miss CSV. */
void cxl_ssd_mmio_close_records(CXLSSDState *s)
{
    CXLSSDMmio *m = s->mmio;

    if (m && m->records) {
        if (m->service) {
            cxlssd_miss_service_set_ring(m->service, NULL);
        }
        cxlssd_record_writer_free(m->records);
        m->records = NULL;
    }
}

bool cxl_ssd_mmio_get_stats(CXLSSDState *s, struct cxlssd_trap_stats *ts)
{
    CXLSSDMmio *m = s->mmio;
    struct cxlssd_record_ring *ring =
        m->records ? cxlssd_record_writer_ring(m->records) : NULL;
    struct cxlssd_media_stats ms;
    struct cxlssd_miss_service_stats ss;

    cxlssd_miss_service_get_stats(m->service, &ss);
    ts->late_waits = ss.late_waits;
    ts->bql_wait_ns = qatomic_read(&m->bql_wait_ns);
    /* the counters cover every record pushed so far, not the last drain */
    cxlssd_record_writer_sync(m->records);
    ts->records_written = cxlssd_record_written(ring);
    ts->records_dropped = cxlssd_record_dropped(ring);
    if (!m->media) {
        return false;
    }
    cxlssd_media_get_stats(m->media, &ms);
    cxlssd_trap_stats_set_media(ts, &ms,
                                cxlssd_media_metadata_bytes(s->model, m->media));
    return true;
}

static void cxl_ssd_mmio_access(CXLSSDState *s, hwaddr addr, bool write)
{
    uint64_t page = (s->mmio->dpa_base + addr) / s->cfg.page_size;
    uint64_t now = cxlssd_now_ns();
    struct cxlssd_miss_request req = {
        .page = page,
        .write = write,
    };

    cxlssd_complete_prefetches(s->mmio->service, now);
    if (cxlssd_hit(s->model, page, write)) {
        if (s->cfg.dram_latency_ns) {
            cxlssd_wait_until(now + s->cfg.dram_latency_ns);
        }
        return;
    }
    /* The miss starts at this callback: no earlier clock sees it. */
    req.tid = qemu_get_thread_id();
    req.vcpu = cxl_ssd_vcpu_index(s, req.tid);
    req.t_fault_ns = cxlssd_now_ns();
    cxlssd_serve_miss(s->mmio->service, &req);
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
    /* a persistent cache marks the page before the store lands */
    cxlssd_media_note_writable(s->mmio->media,
                               (s->mmio->dpa_base + addr) / s->cfg.page_size,
                               1);
    stn_le_p(s->media + s->mmio->dpa_base + addr, size, data);
    return MEMTX_OK;
}

static const MemoryRegionOps cxl_ssd_mmio_ops = {
    .read_with_attrs = cxl_ssd_mmio_read,
    .write_with_attrs = cxl_ssd_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    CXL_SSD_WINDOW_ACCESS_SIZES,
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
     * safe to run concurrently (the model and the miss service are
     * thread-safe) and never access the window themselves.
     */
    s->overlay.disable_reentrancy_guard = true;
}
