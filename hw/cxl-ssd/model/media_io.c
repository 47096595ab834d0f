/*
 * The media store's miss path (rules in media.h): fill a missing page into
 * the memfd, write a dirty victim back, and the deferred drop of an
 * evicted page that a fill may still reuse.  Async-signal-safe: no
 * allocation, no locks (the SIGBUS handler serves misses too).
 */
#include "media_int.h"
#include "media_dirty.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

/* Deferred drops: 32 pages per word, bit 2i pending, 2i+1 being punched. */
#define DROP_PENDING 1ull
#define DROP_PUNCHING 2ull

static inline _Atomic uint64_t *drop_word(struct cxlssd_media *md,
                                          uint64_t page, unsigned *shift)
{
    *shift = (unsigned)(page % 32) * 2;
    return &md->drops[page / 32];
}

void cxlssd_media_defer_drop(struct cxlssd_media *md, uint64_t page)
{
    unsigned sh;
    _Atomic uint64_t *w = drop_word(md, page, &sh);
    atomic_fetch_or_explicit(w, DROP_PENDING << sh, memory_order_acq_rel);
}

bool cxlssd_media_claim_drop(struct cxlssd_media *md, uint64_t page)
{
    unsigned sh;
    _Atomic uint64_t *w = drop_word(md, page, &sh);
    uint64_t v = atomic_load_explicit(w, memory_order_acquire);
    while (v & (DROP_PENDING << sh)) {
        uint64_t nv = (v & ~(DROP_PENDING << sh)) | (DROP_PUNCHING << sh);
        if (atomic_compare_exchange_weak_explicit(w, &v, nv,
                                                  memory_order_acq_rel,
                                                  memory_order_acquire)) {
            return true;
        }
    }
    return false;
}

void cxlssd_media_drop_done(struct cxlssd_media *md, uint64_t page)
{
    unsigned sh;
    _Atomic uint64_t *w = drop_word(md, page, &sh);
    atomic_fetch_and_explicit(w, ~(DROP_PUNCHING << sh),
                              memory_order_acq_rel);
}

/* A fill's view of a deferred drop: true if the memfd page is still there
 * (drop cancelled); waits while a claimed punch runs. */
static bool reuse_undropped(struct cxlssd_media *md, uint64_t page)
{
    unsigned sh;
    _Atomic uint64_t *w = drop_word(md, page, &sh);
    uint64_t v = atomic_load_explicit(w, memory_order_acquire);
    for (;;) {
        if (v & (DROP_PENDING << sh)) {
            if (atomic_compare_exchange_weak_explicit(
                    w, &v, v & ~(DROP_PENDING << sh), memory_order_acq_rel,
                    memory_order_acquire)) {
                return true;
            }
        } else if (v & (DROP_PUNCHING << sh)) {
            v = atomic_load_explicit(w, memory_order_acquire);  /* short */
        } else {
            return false;
        }
    }
}

static void touch(struct cxlssd_media *md, uint64_t page)
{
    if (!bit_set(md->touched, page)) {
        atomic_fetch_add_explicit(&md->st_touched, 1, memory_order_relaxed);
    }
}

int cxlssd_media_fill(struct cxlssd_media *md, uint64_t page, int memfd,
                      uint64_t memfd_off)
{
    if (page >= md->pages) {
        return -EINVAL;
    }
    touch(md, page);
    if (reuse_undropped(md, page)) {
        atomic_fetch_add_explicit(&md->st_reused, 1, memory_order_relaxed);
        return 0;       /* evicted, not yet dropped: still in the memfd */
    }
    if (bit_get(md->stuck, page)) {
        return 0;       /* its data never left the memfd */
    }
    if (!bit_get(md->written, page)) {
        atomic_fetch_add_explicit(&md->st_zero_fills, 1,
                                  memory_order_relaxed);
        /* allocates zeroed shmem pages; keeps a page already there */
        return fallocate(memfd, 0, (off_t)memfd_off, md->page_size) < 0
               ? -errno : 0;
    }
    uint8_t buf[MEDIA_CHUNK];
    uint64_t src = md->hdr.data_off + page * md->page_size;
    for (uint32_t o = 0; o < md->page_size; o += MEDIA_CHUNK) {
        int r = media_read_all(md->fd, buf, MEDIA_CHUNK, src + o);
        if (r == 0) {
            r = media_write_all(memfd, buf, MEDIA_CHUNK, memfd_off + o);
        }
        if (r < 0) {
            return r;
        }
    }
    atomic_fetch_add_explicit(&md->st_fills, 1, memory_order_relaxed);
    if (!md->page_cache) {
        posix_fadvise(md->fd, (off_t)src, md->page_size,
                      POSIX_FADV_DONTNEED);
    }
    return 0;
}

int cxlssd_media_writeback(struct cxlssd_media *md, uint64_t page, int memfd,
                           uint64_t memfd_off)
{
    if (page >= md->pages) {
        return -EINVAL;
    }
    uint64_t dst = md->hdr.data_off + page * md->page_size;
    int r = 0;
    /* Reserve the blocks first: out of space fails before a byte changes,
     * so the file never holds a half-written page. */
    if (fallocate(md->fd, 0, (off_t)dst, md->page_size) < 0 &&
        errno != EOPNOTSUPP) {
        r = -errno;
    }
    uint8_t buf[MEDIA_CHUNK];
    for (uint32_t o = 0; r == 0 && o < md->page_size; o += MEDIA_CHUNK) {
        r = media_read_all(memfd, buf, MEDIA_CHUNK, memfd_off + o);
        if (r == 0) {
            r = media_write_all(md->fd, buf, MEDIA_CHUNK, dst + o);
        }
    }
    if (r < 0) {
        atomic_fetch_add_explicit(&md->st_errors, 1, memory_order_relaxed);
        if (!bit_set(md->stuck, page)) {
            atomic_fetch_add_explicit(&md->st_stuck, 1, memory_order_relaxed);
        }
        return r;
    }
    touch(md, page);
    if (!bit_set(md->written, page)) {
        atomic_fetch_add_explicit(&md->st_written, 1, memory_order_relaxed);
    }
    if (bit_clear(md->stuck, page)) {
        atomic_fetch_sub_explicit(&md->st_stuck, 1, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&md->st_writebacks, 1, memory_order_relaxed);
    if (md->dirty) {
        /* the file has it now (its page cache outlives the process) */
        media_dirty_clear(md->dirty, page);
    }
    if (!md->page_cache) {
        media_flush_queue(md, dst);
    }
    return 0;
}

bool cxlssd_media_stuck(const struct cxlssd_media *md, uint64_t page)
{
    return page < md->pages && bit_get(md->stuck, page);
}
