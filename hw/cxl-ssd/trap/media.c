/*
 * The trap's media store (cfg.media_path, see trap.h and model/media.h):
 * the memfd behind the registered range holds only the resident pages.
 *
 *   miss      fill: the page's data into the memfd (pread from the file,
 *             or a zeroed shmem page for a never-written one), called by
 *             the miss service before the NAND wait; then UFFDIO_CONTINUE
 *             maps it as before.  A non-resident page is a hole in the
 *             memfd, so its fault is a MISSING event (uffd.c registers
 *             both modes); a MINOR one only if some other mapping put a
 *             page there.
 *   eviction  after MADV_DONTNEED (no more writes through the range, once
 *             no resident fault may still remap a victim: model/
 *             miss_resident.c, cxlssd_serve_resident_fault): a
 *             dirty page (or any page without write-protect tracking, or
 *             one whose earlier writeback failed) is written to the file,
 *             then the page is punched out of the memfd
 *             (FALLOC_FL_PUNCH_HOLE) and leaves host memory; a miss's
 *             own victims are punched after the miss (the faulter runs
 *             again first), a refill before that reuses the page.  A failed
 *             writeback (out of space) keeps the page in the memfd, never
 *             drops data, and is reported once per page.
 *   reset     every cached page written back (if needed) and dropped: the
 *   / exit    cache starts cold; at exit the file is then closed clean
 *             (FTL state saved).
 * Everything on the miss path is async-signal-safe (SIGBUS delivery).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "trap_int.h"
#include "../model/ftl.h"

static inline uint64_t memfd_off(const struct cxlssd_trap *t, uint64_t page)
{
    return t->memfd_off + page * t->page_size;
}

int trap_media_open(struct cxlssd_trap *t, char *err, size_t errlen)
{
    if (!t->cfg.media_path || !*t->cfg.media_path) {
        return 0;
    }
    if (t->cfg.media_memfd < 0) {
        snprintf(err, errlen, "media=%s: the trap needs the memfd behind "
                 "the range", t->cfg.media_path);
        return -1;
    }
    t->media_path = strdup(t->cfg.media_path);
    t->cfg.media_path = t->media_path;
    t->memfd = t->cfg.media_memfd;
    t->memfd_off = t->cfg.media_memfd_offset;
    t->media = cxlssd_media_open(t->cfg.media_path, t->model,
                                 cxlssd_model_config(t->model)->
                                     media_page_cache, err, errlen);
    if (!t->media) {
        return -1;
    }
    if (t->cfg.media_cache_path && *t->cfg.media_cache_path) {
        t->media_cache_path = strdup(t->cfg.media_cache_path);
        t->cfg.media_cache_path = t->media_cache_path;
        return cxlssd_media_attach_cache(t->media, t->memfd, t->memfd_off,
                                         t->media_cache_path, err, errlen);
    }
    /* a named memfd may hold pages of an earlier run: the cache starts
     * empty (a hole is a non-resident page) */
    if (fallocate(t->memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  (off_t)t->memfd_off, (off_t)t->len) < 0) {
        snprintf(err, errlen, "media=%s: cannot empty the memory backend: "
                 "%s", t->cfg.media_path, strerror(errno));
        return -1;
    }
    return 0;
}

void trap_media_note_writable(struct cxlssd_trap *t, uint64_t page,
                              uint64_t n)
{
    cxlssd_media_note_writable(t->media, page, n);
}

void trap_media_fill(struct cxlssd_trap *t, uint64_t page)
{
    int r = cxlssd_media_fill(t->media, page, t->memfd, memfd_off(t, page));
    if (r < 0) {
        trap_error(t, "media=%s: cannot fill page %llu into host memory: "
                   "%s", t->cfg.media_path, (unsigned long long)page,
                   strerror(-r));
    }
}

static void drop(struct cxlssd_trap *t, uint64_t page)
{
    if (fallocate(t->memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  (off_t)memfd_off(t, page), (off_t)t->page_size) < 0) {
        trap_error(t, "media: cannot drop page %llu from the memfd: %s",
                   (unsigned long long)page, strerror(errno));
    }
}

/* Write @page back if its data is not (or not certainly) in the file;
 * false if that failed (the page must stay in the memfd). */
static bool write_back(struct cxlssd_trap *t, uint64_t page, bool dirty)
{
    bool stuck = cxlssd_media_stuck(t->media, page);
    /* the victim's bit now, after its unmap: a write may have landed
     * since it was chosen clean (model.c, cxlssd_mark_dirty); and a
     * persistent cache's mark (any page mapped writable) */
    dirty = dirty || cxlssd_page_dirty(t->model, page) ||
            cxlssd_media_cache_dirty(t->media, page);
    if (!dirty && t->wp && !stuck) {
        return true;    /* clean: the file has it (or it is all zeros) */
    }
    int r = cxlssd_media_writeback(t->media, page, t->memfd,
                                   memfd_off(t, page));
    if (r < 0) {
        /* one line for the 1st, 2nd, 4th, 8th... failure: no flood */
        uint64_t n = atomic_fetch_add(&t->media_failures, 1) + 1;
        if ((n & (n - 1)) == 0) {
            trap_error(t, "media=%s: writeback of page %llu failed: %s; "
                       "the page stays in host memory and is written at "
                       "its next eviction (%llu failed writebacks so far)",
                       t->cfg.media_path, (unsigned long long)page,
                       strerror(-r), (unsigned long long)n);
        }
        if (!stuck && t->hooks.media_error && !trap_in_signal_handler()) {
            t->hooks.media_error(t->hooks.opaque, page, -r);
        }
        return false;
    }
    return true;
}

void trap_media_evict(struct cxlssd_trap *t, const struct cxlssd_victim *v,
                      uint32_t n)
{
    /* no resident fault's remap of a victim left: its data is final */
    cxlssd_wait_resident_remaps(t->svc);
    for (uint32_t i = 0; i < n; i++) {
        if (write_back(t, v[i].page, v[i].dirty)) {
            drop(t, v[i].page);
        }
    }
}

/*
 * The miss path's victims: written back now (before evict_done, so a
 * refill reads the new data), punched after the miss (trap_media_drops):
 * a punch of a shmem page costs ~3 us, more than half of a 6.2 us NAND
 * read.  Per thread: a miss and its after_miss run on one thread (the
 * SIGBUS handler included, which cannot nest: it never touches the range).
 */
#define DEFERRED_MAX (2 * CXLSSD_MAX_VICTIMS)
static __thread uint64_t deferred[DEFERRED_MAX];
static __thread uint32_t ndeferred;

void trap_media_evict_deferred(struct cxlssd_trap *t,
                               const struct cxlssd_victim *v, uint32_t n)
{
    cxlssd_wait_resident_remaps(t->svc);
    for (uint32_t i = 0; i < n; i++) {
        if (!write_back(t, v[i].page, v[i].dirty)) {
            continue;
        }
        if (ndeferred == DEFERRED_MAX) {
            drop(t, v[i].page);
            continue;
        }
        cxlssd_media_defer_drop(t->media, v[i].page);
        deferred[ndeferred++] = v[i].page;
    }
}

void trap_media_drops(struct cxlssd_trap *t)
{
    for (uint32_t i = 0; i < ndeferred; i++) {
        if (cxlssd_media_claim_drop(t->media, deferred[i])) {
            drop(t, deferred[i]);
            cxlssd_media_drop_done(t->media, deferred[i]);
        }
    }
    ndeferred = 0;
}

void trap_media_flush(struct cxlssd_trap *t, bool drop_pages)
{
    for (uint64_t p = 0; p < t->npages; p++) {
        if (cxlssd_page_state(t->model, p) == CXLSSD_NOT_CACHED) {
            continue;
        }
        bool dirty = cxlssd_page_dirty(t->model, p);
        if (dirty) {
            /* a real writeback now: the FTL counts it (WAF, GC) */
            ftl_write(cxlssd_model_ftl(t->model), p, cxlssd_now_ns());
        }
        if (write_back(t, p, dirty) && drop_pages) {
            drop(t, p);
        }
    }
}

void trap_media_close(struct cxlssd_trap *t)
{
    if (!t->media) {
        return;
    }
    char err[256];
    trap_media_flush(t, false);
    if (cxlssd_media_close(t->media, true, err, sizeof(err)) < 0) {
        trap_error(t, "%s", err);
    }
    t->media = NULL;
}

bool cxlssd_trap_media_stats(struct cxlssd_trap *t,
                             struct cxlssd_media_stats *out)
{
    if (!t->media) {
        return false;
    }
    cxlssd_media_get_stats(t->media, out);
    return true;
}

uint64_t cxlssd_trap_metadata_bytes(struct cxlssd_trap *t)
{
    return cxlssd_media_metadata_bytes(t->model, t->media);
}
