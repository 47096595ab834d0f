/*
 * The media store: a device's data in a sparse file, so that capacity is a
 * property of disk, not of host memory (property media=PATH).  Userspace
 * only (file I/O); the kernel module leaves media_*.c out.  Its files and
 * their jobs are listed in media_int.h.
 *
 * File layout (all offsets multiples of 4 KiB):
 *   [0, 4 KiB)            header: magic, version, geometry, state
 *   [data_off, +device)   logical page p at data_off + p * page-size;
 *                         never-written pages are holes
 *   [meta_off, +meta_len) saved at a clean shutdown: the written-page
 *                         bitmap and the FTL's state (ftl.h), zero 4 KiB
 *                         runs left as holes
 * Data sits at its logical page's own offset, so a page always reads its
 * last written-back data (a writeback reserves the page's blocks with
 * fallocate before it writes, so running out of space fails before any
 * byte changes), never another page's.
 *
 * State: the header says "open" from start-up until a clean close rewrote
 * the metadata and then the header ("clean").  A file found open (QEMU was
 * killed) keeps its data; the written-page bitmap is rebuilt from the
 * file's allocated extents and the FTL maps those pages as a fill in page
 * order would (ftl_place(): as full as the data; wear, GC history and
 * counters from 0).  A persistent device's cache, if any, is written back
 * next (cxlssd_media_attach_cache()).
 *
 * The cache side (which pages are in host memory) is the caller's: the
 * trap fills the memfd page of a miss from here (fill) and writes a dirty
 * victim back (writeback) before punching it out of the memfd.
 */
#ifndef CXLSSD_MODEL_MEDIA_H
#define CXLSSD_MODEL_MEDIA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cxlssd_model;
struct cxlssd_media;

#define CXLSSD_MEDIA_VERSION 1

struct cxlssd_media_stats {
    uint64_t fills;             /* pages read from the file */
    uint64_t zero_fills;        /* never-written pages: zeros, no file I/O */
    uint64_t reused_fills;      /* evicted pages refilled before their drop:
                                 * still in the memfd, no I/O */
    uint64_t writebacks;        /* dirty pages written to the file */
    uint64_t writeback_errors;  /* failed writebacks (e.g. ENOSPC): the
                                 * page stayed in host memory */
    uint64_t stuck_pages;       /* pages held in host memory for that */
    uint64_t touched_pages;     /* pages ever filled or written */
    uint64_t written_pages;     /* pages that have data in the file */
    uint64_t file_allocated_bytes;  /* st_blocks * 512 of the file */
    bool restored;              /* FTL state came from a clean shutdown */
    bool recovered;             /* the file was found open (unclean) */
    uint64_t cache_recovered;   /* dirty pages a crash left in a persistent
                                 * cache, written back at the start */
    uint64_t cache_lost;        /* dirty map bits whose page the cache file
                                 * no longer held (a host reboot) */
};

/*
 * Open (or create, sparse) the media file at @path for @model's geometry
 * (@page_cache: leave the file's pages in the page cache; without, a
 * flusher thread writes written-back pages to disk and drops them, see
 * media_flusher.c);
 * a clean file's FTL state is loaded into @model's FTL, which must not be
 * in use yet.  NULL with a message naming the property in @err (media, or
 * the geometry property that differs from the file's).
 */
struct cxlssd_media *cxlssd_media_open(const char *path,
                                       struct cxlssd_model *model,
                                       bool page_cache, char *err,
                                       size_t errlen);
/*
 * Close: with @clean, save the bitmap and the FTL state and mark the file
 * clean (no fill or writeback may run meanwhile; dirty cached pages must
 * have been written back); without, leave it open (as a crash would).
 * Returns 0, or -1 with a message in @err (the file then stays open: the
 * next start recovers it).  Frees @md either way.
 */
int cxlssd_media_close(struct cxlssd_media *md, bool clean, char *err,
                       size_t errlen);

/*
 * Put @page's data into the memfd @memfd at byte @memfd_off: read from the
 * file, zeros (allocated, no file I/O) if never written, nothing if the
 * page is held there after a failed writeback.  Async-signal-safe (no
 * allocation, no locks).  0 or -errno.
 */
int cxlssd_media_fill(struct cxlssd_media *md, uint64_t page, int memfd,
                      uint64_t memfd_off);
/*
 * Write @page from the memfd to the file.  0: written (the caller may drop
 * it from the memfd); -errno: nothing changed in the file, the page is
 * marked stuck (it must stay in the memfd; the next writeback retries).
 * Async-signal-safe.
 */
int cxlssd_media_writeback(struct cxlssd_media *md, uint64_t page, int memfd,
                           uint64_t memfd_off);
/*
 * Deferred drop of an evicted page from the memfd (the miss path punches
 * its victims after the faulter runs again): defer_drop() marks @page
 * (evicted, its data in the file); claim_drop() returns true if the caller
 * may punch it now (then drop_done() after the punch), false if a fill
 * reused the memfd page meanwhile (cxlssd_media_fill() then does no I/O:
 * the memfd still holds the page's data).  A fill waits while a claimed
 * punch runs.  Async-signal-safe.
 */
void cxlssd_media_defer_drop(struct cxlssd_media *md, uint64_t page);
bool cxlssd_media_claim_drop(struct cxlssd_media *md, uint64_t page);
void cxlssd_media_drop_done(struct cxlssd_media *md, uint64_t page);

/*
 * A persistent device's cache (persistent-memdev with media=PATH): the
 * memfd is a named file that outlives QEMU (@cache_path, on tmpfs), and a
 * dirty map next to it (@cache_path.dirty, media_dirty.h) marks the pages
 * its copy may hold newer data for.  Attach at start-up, before any miss:
 * every marked page the cache file holds is written back (what a SIGKILL
 * left), the file is synced, then the cache and the map are emptied.
 * From then on the embedder calls note_writable() before a page can be
 * written in the cache (mapped writable, write protection cleared, a
 * store through another mapping) and a writeback clears the page's mark.
 * 0, or -1 with a message in @err (a map of another media or cache file,
 * or dirty pages that could not be written back: they stay in the cache
 * and the map for the next start).
 */
int cxlssd_media_attach_cache(struct cxlssd_media *md, int memfd,
                              uint64_t memfd_off, const char *cache_path,
                              char *err, size_t errlen);
/* Pages [@page, @page + @n) may be written in the cache from now on.
 * Nothing without an attached cache.  Async-signal-safe. */
void cxlssd_media_note_writable(struct cxlssd_media *md, uint64_t page,
                                uint64_t n);
/* Whether the cache's copy of @page may be newer than the file's (its
 * mark is set); false without an attached cache. */
bool cxlssd_media_cache_dirty(const struct cxlssd_media *md, uint64_t page);

/* Whether @page must be written back on eviction even if clean (its data
 * is only in the memfd after a failed writeback). */
bool cxlssd_media_stuck(const struct cxlssd_media *md, uint64_t page);

void cxlssd_media_get_stats(const struct cxlssd_media *md,
                            struct cxlssd_media_stats *out);

/*
 * Host memory the model's metadata occupies now: the resident part of the
 * page-state array and FTL maps (pages of their own in /proc/self/pagemap),
 * plus the fixed-size tables, plus
 * the media store's own bitmaps.  @md may be NULL.
 */
uint64_t cxlssd_media_metadata_bytes(struct cxlssd_model *model,
                                     const struct cxlssd_media *md);

#endif
