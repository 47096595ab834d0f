/*
 * A persistent device's cache (media.h, cxlssd_media_attach_cache): the
 * dirty map that makes the cache file crash-consistent, and the start-up
 * writeback of what a crash left in it.
 *
 * Invariant: a page whose copy in the cache file may differ from the
 * media file has its mark set.  The embedder sets it before the page can
 * be written (note_writable); a writeback clears it only after the data
 * is in the file, and only where nothing can write the page meanwhile
 * (it is unmapped, or every writer is stopped).  So after a SIGKILL at any
 * moment, the marked pages the cache file holds are all the cached data
 * the file lacks, each page whole (a store lands in the cache file, which
 * is the kernel's), and writing them back restores every store the guest
 * made.  A page being filled is never marked (a fill copies the file's
 * data in before the page is mapped), so a torn fill is never written
 * back.
 */
#include "media_int.h"
#include "ftl.h"
#include "media_dirty.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether the cache file holds a page at @off (not a hole). */
static bool cache_holds(int memfd, uint64_t off)
{
    off_t d = lseek(memfd, (off_t)off, SEEK_DATA);
    return d >= 0 && (uint64_t)d == off;
}

struct recovery {
    uint64_t written, lost, failed;
    int err;                    /* errno of the last failed writeback */
};

/* Write back every marked page the cache holds. */
static void recover(struct cxlssd_media *md, int memfd, uint64_t memfd_off,
                    struct recovery *rc)
{
    memset(rc, 0, sizeof(*rc));
    for (uint64_t p = media_dirty_next(md->dirty, 0); p != UINT64_MAX;
         p = media_dirty_next(md->dirty, p + 1)) {
        uint64_t off = memfd_off + p * md->page_size;
        if (!cache_holds(memfd, off)) {
            /* the cache file lost it (recreated, a host reboot): the
             * media file keeps the page's last written-back data */
            rc->lost++;
            media_dirty_clear(md->dirty, p);
            continue;
        }
        int r = cxlssd_media_writeback(md, p, memfd, off);
        if (r < 0) {
            rc->err = -r;
            rc->failed++;
            continue;
        }
        rc->written++;
        /* in the FTL too, unless an unclean file's rebuild mapped it
         * already; before the guest runs, so no NAND time is charged */
        if (ftl_lookup(md->ftl, p) == UINT32_MAX) {
            ftl_place(md->ftl, p);
        }
    }
}

int cxlssd_media_attach_cache(struct cxlssd_media *md, int memfd,
                              uint64_t memfd_off, const char *cache_path,
                              char *err, size_t errlen)
{
    char map_path[4096];
    struct stat st;
    bool found;

    if (fstat(memfd, &st) < 0) {
        snprintf(err, errlen, "%s: cannot stat the cache file: %s",
                 cache_path, strerror(errno));
        return -1;
    }
    struct media_dirty_owner owner = {
        .media_id = md->hdr.id,
        .cache_dev = (uint64_t)st.st_dev,
        .cache_ino = (uint64_t)st.st_ino,
        .pages = md->pages,
    };
    snprintf(map_path, sizeof(map_path), "%s.dirty", cache_path);
    md->dirty = media_dirty_open(map_path, &owner, &found, err, errlen);
    if (!md->dirty) {
        return -1;
    }
    if (found) {
        struct recovery rc;
        recover(md, memfd, memfd_off, &rc);
        if (rc.failed) {
            snprintf(err, errlen, "media=%s: %" PRIu64 " dirty pages of the "
                     "persistent cache %s could not be written back (%s): "
                     "they stay there and in %s; free space and start "
                     "again", md->path, rc.failed, cache_path,
                     strerror(rc.err), map_path);
            return -1;
        }
        if (rc.written && fdatasync(md->fd) < 0) {
            snprintf(err, errlen, "media=%s: cannot sync the %" PRIu64
                     " pages written back from the persistent cache: %s",
                     md->path, rc.written, strerror(errno));
            return -1;
        }
        md->st_cache_recovered = rc.written;
        md->st_cache_lost = rc.lost;
    }
    /* the cache starts cold: empty map first, then the pages (a kill in
     * between leaves written-back pages in the cache, which the next
     * start drops again) */
    media_dirty_clear_all(md->dirty);
    if (fallocate(memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  (off_t)memfd_off, (off_t)(md->pages * md->page_size)) < 0) {
        snprintf(err, errlen, "%s: cannot empty the cache file: %s",
                 cache_path, strerror(errno));
        return -1;
    }
    return 0;
}

void cxlssd_media_note_writable(struct cxlssd_media *md, uint64_t page,
                                uint64_t n)
{
    if (md && md->dirty) {
        media_dirty_set(md->dirty, page, n);
    }
}

bool cxlssd_media_cache_dirty(const struct cxlssd_media *md, uint64_t page)
{
    return md && md->dirty && media_dirty_test(md->dirty, page);
}
