/*
 * The media store's life cycle (see media.h): open or create the file,
 * check its geometry, restore a clean file's FTL state or recover an
 * unclean one, start the flusher; close, saving the state for the next
 * start; the statistics.
 */
#include "media_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lazy_array.h"
#include "media_dirty.h"
#include "model.h"

static uint64_t popcount_map(_Atomic uint64_t *map, uint64_t words)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < words; i++) {
        uint64_t w = atomic_load_explicit(&map[i], memory_order_relaxed);
        n += (uint64_t)__builtin_popcountll(w);
    }
    return n;
}

/* A file's id: random, never 0 (0 means "none yet"). */
static uint64_t new_id(void)
{
    uint64_t id = 0;
    if (getrandom(&id, sizeof(id), 0) != (ssize_t)sizeof(id)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        id = (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec ^
             ((uint64_t)getpid() << 40);
    }
    return id ? id : 1;
}

static void media_free(struct cxlssd_media *md)
{
    media_flusher_stop(md);
    media_dirty_close(md->dirty);
    if (md->fd >= 0) {
        close(md->fd);
    }
    lazy_array_free((void *)md->written, md->words * 8);
    lazy_array_free((void *)md->stuck, md->words * 8);
    lazy_array_free((void *)md->touched, md->words * 8);
    lazy_array_free((void *)md->drops, md->words * 16);
    free(md->path);
    free(md);
}

struct cxlssd_media *cxlssd_media_open(const char *path,
                                       struct cxlssd_model *model,
                                       bool page_cache, char *err,
                                       size_t errlen)
{
    const struct cxlssd_config *c = cxlssd_model_config(model);
    struct cxlssd_media *md = calloc(1, sizeof(*md));
    if (!md) {
        snprintf(err, errlen, "media=%s: out of memory", path);
        return NULL;
    }
    md->fd = -1;
    md->fl_efd = -1;
    md->page_cache = page_cache;
    md->model = model;
    md->ftl = cxlssd_model_ftl(model);
    md->pages = cxlssd_model_pages(model);
    md->page_size = c->page_size;
    md->words = (md->pages + 63) / 64;
    md->path = strdup(path);
    md->written = lazy_array_new(md->words * 8);
    md->stuck = lazy_array_new(md->words * 8);
    md->touched = lazy_array_new(md->words * 8);
    md->drops = lazy_array_new(md->words * 16);
    if (!md->path || !md->written || !md->stuck || !md->touched ||
        !md->drops) {
        snprintf(err, errlen, "media=%s: out of memory", path);
        media_free(md);
        return NULL;
    }
    md->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (md->fd < 0) {
        snprintf(err, errlen, "media=%s: cannot open: %s", path,
                 strerror(errno));
        media_free(md);
        return NULL;
    }
    struct stat st;
    if (fstat(md->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "media=%s: not a regular file", path);
        media_free(md);
        return NULL;
    }
    media_header_init(md);
    uint64_t size = md->hdr.meta_off + md->hdr.meta_len;
    if (st.st_size == 0) {
        if (ftruncate(md->fd, (off_t)size) < 0) {
            snprintf(err, errlen, "media=%s: cannot size the sparse file to "
                     "%" PRIu64 " bytes: %s", path, size, strerror(errno));
            media_free(md);
            return NULL;
        }
    } else {
        struct media_header f;
        int r = media_header_read(md->fd, &f);
        if (r < 0) {
            snprintf(err, errlen, "media=%s: cannot read the header: %s",
                     path, strerror(-r));
            media_free(md);
            return NULL;
        }
        if (media_header_check(&f, &md->hdr, path, err, errlen) < 0) {
            media_free(md);
            return NULL;
        }
        md->hdr.clean_closes = f.clean_closes;
        md->hdr.id = f.id;
        if (f.state == MEDIA_CLEAN) {
            r = media_load_meta(md);
            if (r < 0) {
                snprintf(err, errlen, "media=%s: the saved FTL state does "
                         "not load (%s); remove the file to start empty",
                         path, strerror(-r));
                media_free(md);
                return NULL;
            }
            md->restored = true;
        } else {
            media_rebuild_written(md);
            md->recovered = true;
        }
    }
    if (!md->hdr.id) {
        md->hdr.id = new_id();
    }
    /* From here until a clean close the file is "open". */
    int r = media_header_write(md, MEDIA_OPEN);
    if (r < 0) {
        snprintf(err, errlen, "media=%s: cannot write the header: %s", path,
                 strerror(-r));
        media_free(md);
        return NULL;
    }
    /* a new file has nothing written: its bitmap is not read (reading a
     * never-written page can cost one, lazy_array.c) */
    if (md->restored || md->recovered) {
        uint64_t written = popcount_map(md->written, md->words);
        atomic_store(&md->st_written, written);
        for (uint64_t w = 0; w < md->words; w++) {
            uint64_t v = atomic_load_explicit(&md->written[w],
                                              memory_order_relaxed);
            if (v) {
                atomic_store_explicit(&md->touched[w], v,
                                      memory_order_relaxed);
            }
        }
        atomic_store(&md->st_touched, written);
    }
    if (!page_cache) {
        /* drop the metadata just loaded; no readahead: a fill's
         * neighbours would stay in the page cache */
        posix_fadvise(md->fd, 0, 0, POSIX_FADV_DONTNEED);
        posix_fadvise(md->fd, 0, 0, POSIX_FADV_RANDOM);
        r = media_flusher_start(md);
        if (r < 0) {
            snprintf(err, errlen, "media=%s: cannot start the page-cache "
                     "flusher (media-page-cache=off): %s", path,
                     strerror(-r));
            media_free(md);
            return NULL;
        }
    }
    return md;
}

int cxlssd_media_close(struct cxlssd_media *md, bool clean, char *err,
                       size_t errlen)
{
    int r = 0;
    if (!md) {
        return 0;
    }
    if (clean) {
        if (atomic_load(&md->st_stuck)) {
            snprintf(err, errlen, "media=%s: %" PRIu64 " pages could not be "
                     "written back (no space?): the file is left unclean",
                     md->path, (uint64_t)atomic_load(&md->st_stuck));
            r = -1;
        } else {
            md->hdr.clean_closes++;
            media_flusher_stop(md);       /* every queued page on disk first */
            int e = media_save_meta(md);
            if (e == 0) {
                e = media_header_write(md, MEDIA_CLEAN);
            }
            if (e == 0 && !md->page_cache) {
                /* the metadata just saved (clean after its fdatasync) */
                posix_fadvise(md->fd, 0, 0, POSIX_FADV_DONTNEED);
            }
            if (e < 0) {
                snprintf(err, errlen, "media=%s: cannot save the FTL state "
                         "(%s): the file is left unclean", md->path,
                         strerror(-e));
                r = -1;
            }
        }
    }
    media_free(md);
    return r;
}

void cxlssd_media_get_stats(const struct cxlssd_media *md,
                            struct cxlssd_media_stats *out)
{
    memset(out, 0, sizeof(*out));
    out->fills = atomic_load(&md->st_fills);
    out->zero_fills = atomic_load(&md->st_zero_fills);
    out->reused_fills = atomic_load(&md->st_reused);
    out->writebacks = atomic_load(&md->st_writebacks);
    out->writeback_errors = atomic_load(&md->st_errors);
    out->stuck_pages = atomic_load(&md->st_stuck);
    out->touched_pages = atomic_load(&md->st_touched);
    out->written_pages = atomic_load(&md->st_written);
    struct stat st;
    if (fstat(md->fd, &st) == 0) {
        out->file_allocated_bytes = (uint64_t)st.st_blocks * 512;
    }
    out->restored = md->restored;
    out->recovered = md->recovered;
    out->cache_recovered = md->st_cache_recovered;
    out->cache_lost = md->st_cache_lost;
}
