/*
 * Internal to the media store (media_*.c): its state and what its files
 * share.  Not part of the interface (see media.h).  Files, one job each:
 *
 *   media_store.c      open and close (the life cycle), statistics
 *   media_file.c       the file's format: header, the metadata saved at a
 *                      clean close, recovery of an unclean file; the
 *                      positional I/O every part uses
 *   media_io.c         the miss path: fill, writeback, deferred drops
 *   media_flusher.c    media-page-cache=off: the thread that writes
 *                      written-back pages to disk and drops them
 *   media_footprint.c  host memory the model's metadata occupies
 *   media_cache.c      a persistent device's cache: its dirty map, the
 *                      writeback of what a crash left in it
 *
 * The written-page and stuck-page bitmaps are lazy arrays at one bit per
 * page, only ever set bit by bit, so for a large device only the 4 KiB
 * pages of them that writes reach become resident (96 GiB of 4 KiB pages:
 * 3 MiB of address space each, a few KiB resident for a small working
 * set).  Bits are set with atomic or, so fills and writebacks on many
 * threads (and in the SIGBUS handler) need no lock.
 */
#ifndef CXLSSD_MODEL_MEDIA_INT_H
#define CXLSSD_MODEL_MEDIA_INT_H

#include <stdatomic.h>
#include <pthread.h>

#include "media.h"

#define MEDIA_ALIGN 4096ull
#define MEDIA_CHUNK 4096u       /* bytes moved per pread/pwrite */
#define FLUSH_BUDGET 2048u      /* written pages queued for the flusher
                                 * (8 MiB of 4 KiB pages) at most */

enum { MEDIA_OPEN = 1, MEDIA_CLEAN = 2 };

/* The file's first 4 KiB (media_file.c). */
struct media_header {
    char magic[8];
    uint32_t version;
    uint32_t page_size;
    uint64_t device_size;
    uint32_t channels;
    uint32_t luns_per_channel;
    uint32_t blocks_per_lun;    /* the FTL's, derived or configured */
    uint32_t pages_per_block;
    uint64_t data_off;
    uint64_t meta_off;
    uint64_t meta_len;
    uint32_t state;
    uint32_t pad;
    uint64_t clean_closes;
    uint64_t id;                /* random, at creation: binds the cache's
                                 * dirty map to this file (media_cache.c);
                                 * 0 in files written before it, which get
                                 * one at their next open */
};

struct cxlssd_media {
    int fd;
    char *path;
    struct cxlssd_model *model;
    struct ftl *ftl;
    struct media_header hdr;
    uint64_t pages;
    uint32_t page_size;
    _Atomic uint64_t *written;  /* [words]: data in the file */
    _Atomic uint64_t *stuck;    /* [words]: data only in the memfd */
    _Atomic uint64_t *touched;  /* [words]: ever filled or written */
    _Atomic uint64_t *drops;    /* [2 * words]: 2 bits per page, DROP_* */
    uint64_t words;
    _Atomic uint64_t st_fills, st_zero_fills, st_writebacks, st_errors,
        st_stuck, st_touched, st_written, st_reused;
    /* flusher queue (media-page-cache=off): file offset + 1 of each
     * written page (0 = slot empty), slot = ticket % FLUSH_BUDGET; writers
     * take tickets from fl_head, the flusher advances fl_tail once the
     * pages are on disk and dropped */
    _Atomic uint64_t fl_ring[FLUSH_BUDGET];
    _Atomic uint64_t fl_head, fl_tail;
    _Atomic bool fl_sleeping, fl_stop;
    int fl_efd;                 /* wakes the flusher; -1 = no flusher */
    pthread_t fl_thread;
    bool restored, recovered;
    bool page_cache;
    /* a persistent device's cache (media_cache.c), else NULL */
    struct media_dirty *dirty;
    uint64_t st_cache_recovered, st_cache_lost;
};

static inline bool bit_get(_Atomic uint64_t *map, uint64_t i)
{
    return (atomic_load_explicit(&map[i / 64], memory_order_acquire) >>
            (i % 64)) & 1;
}

/* Returns the bit's previous value. */
static inline bool bit_set(_Atomic uint64_t *map, uint64_t i)
{
    uint64_t b = 1ull << (i % 64);
    if (atomic_load_explicit(&map[i / 64], memory_order_relaxed) & b) {
        return true;    /* read first: no store to an untouched word */
    }
    return atomic_fetch_or_explicit(&map[i / 64], b,
                                    memory_order_acq_rel) & b;
}

static inline bool bit_clear(_Atomic uint64_t *map, uint64_t i)
{
    uint64_t b = 1ull << (i % 64);
    if (!(atomic_load_explicit(&map[i / 64], memory_order_relaxed) & b)) {
        return false;
    }
    return atomic_fetch_and_explicit(&map[i / 64], ~b,
                                     memory_order_acq_rel) & b;
}

/* ---- media_file.c ---- */

/* pread/pwrite all of [off, off + len), retrying on EINTR (a read past
 * the end gives zeros).  0 or -errno.  Async-signal-safe. */
int media_read_all(int fd, void *buf, uint64_t len, uint64_t off);
int media_write_all(int fd, const void *buf, uint64_t len, uint64_t off);
/* md->hdr for this device's geometry (state and clean_closes zero). */
void media_header_init(struct cxlssd_media *md);
/* The header at the start of the file @fd. */
int media_header_read(int fd, struct media_header *out);
/* The file's header @f against this device's @want: 0, or -1 with a
 * message naming the property in @err. */
int media_header_check(const struct media_header *f,
                       const struct media_header *want, const char *path,
                       char *err, size_t errlen);
/* md->hdr with @state (MEDIA_OPEN/MEDIA_CLEAN) to the file, on disk. */
int media_header_write(struct cxlssd_media *md, uint32_t state);
/* The written-page bitmap and the FTL state saved at a clean close: into
 * md->written and the FTL (-EINVAL: another FTL's, or inconsistent), or
 * from them to the file (on disk when it returns 0). */
int media_load_meta(struct cxlssd_media *md);
int media_save_meta(struct cxlssd_media *md);
/* An unclean file: a page has data iff the data region is allocated
 * there (sets md->written, and maps those pages in the fresh FTL). */
void media_rebuild_written(struct cxlssd_media *md);

/* ---- media_flusher.c ---- */

/* Start the flusher thread; 0 or -errno. */
int media_flusher_start(struct cxlssd_media *md);
/* Drain the queue and end the flusher (no writeback may run meanwhile);
 * nothing if none runs. */
void media_flusher_stop(struct cxlssd_media *md);
/* Queue the page just written at file offset @off for the flusher; waits
 * while FLUSH_BUDGET pages are queued.  Async-signal-safe. */
void media_flush_queue(struct cxlssd_media *md, uint64_t off);

#endif
