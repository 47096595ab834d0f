/*
 * The media store's file I/O (see media.h for the layout and the rules).
 *
 * The written-page and stuck-page bitmaps are calloc'd at one bit per page
 * and only ever set bit by bit, so for a large device only the 4 KiB pages
 * of them that writes reach become resident (96 GiB of 4 KiB pages: 3 MiB
 * of address space each, a few KiB resident for a small working set).
 * Bits are set with atomic or, so fills and writebacks on many threads
 * (and in the SIGBUS handler) need no lock.
 *
 * Page cache: the file's data I/O is buffered, so a fill from a page still
 * in the page cache costs a copy, not a disk read (media-page-cache=on,
 * the default: the kernel keeps and reclaims those pages as it likes).
 * With media-page-cache=off the kernel's copies are not kept: a filled
 * page lives in the memfd now, so its (clean) page-cache copy is dropped at
 * once (POSIX_FADV_DONTNEED; readahead is off, POSIX_FADV_RANDOM, so a fill
 * reads only its page).  A written page's copy is dirty and cannot be
 * dropped before the disk has it, and waiting for the disk on the fault
 * path would put disk latency into misses: so a writeback only queues the
 * page for the flusher thread, which writes queued pages to disk
 * (sync_file_range, waiting) and then drops them.  The queue holds at most
 * FLUSH_BUDGET pages: a writeback that finds it full waits for the flusher
 * (back-pressure, only when the disk is slower than the eviction rate), so
 * host memory holds the cache plus at most FLUSH_BUDGET pages of the file.
 * A miss on an evicted page then pays the disk's read latency.  Close
 * drains the queue before the metadata is saved.
 */
#include "media.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ftl.h"
#include "lazy_array.h"
#include "model.h"

#define MEDIA_MAGIC "CXLSSDMF"
#define MEDIA_ALIGN 4096ull
#define MEDIA_CHUNK 4096u       /* bytes moved per pread/pwrite */
#define FLUSH_BUDGET 2048u      /* written pages queued for the flusher
                                 * (8 MiB of 4 KiB pages) at most */
#define FLUSH_BATCH 64u         /* pages the flusher starts at once */

enum { MEDIA_OPEN = 1, MEDIA_CLEAN = 2 };

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
};

static inline uint64_t align_up(uint64_t v)
{
    return (v + MEDIA_ALIGN - 1) & ~(MEDIA_ALIGN - 1);
}

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

static uint64_t popcount_map(_Atomic uint64_t *map, uint64_t words)
{
    uint64_t n = 0;
    for (uint64_t i = 0; i < words; i++) {
        uint64_t w = atomic_load_explicit(&map[i], memory_order_relaxed);
        n += (uint64_t)__builtin_popcountll(w);
    }
    return n;
}

/* ---- whole-region I/O, sparse: zero 4 KiB runs are holes ---- */

static bool chunk_zero(const uint8_t *p, uint64_t n)
{
    const uint64_t *w = (const uint64_t *)(const void *)p;
    for (uint64_t i = 0; i < n / 8; i++) {
        if (w[i]) {
            return false;
        }
    }
    for (uint64_t i = n & ~7ull; i < n; i++) {
        if (p[i]) {
            return false;
        }
    }
    return true;
}

static int write_all(int fd, const void *buf, uint64_t len, uint64_t off)
{
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t w = pwrite(fd, p, len, (off_t)off);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -errno;
        }
        p += w;
        len -= (uint64_t)w;
        off += (uint64_t)w;
    }
    return 0;
}

static int read_all(int fd, void *buf, uint64_t len, uint64_t off)
{
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t r = pread(fd, p, len, (off_t)off);
        if (r < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -errno;
        }
        if (r == 0) {
            memset(p, 0, len);      /* past EOF: zeros */
            return 0;
        }
        p += r;
        len -= (uint64_t)r;
        off += (uint64_t)r;
    }
    return 0;
}

/* Write @len bytes of @buf at @off: runs of zero 4 KiB chunks become
 * holes, so a mostly-empty map costs neither disk nor (when it is read
 * back) memory. */
static int save_region(int fd, const void *buf, uint64_t len, uint64_t off)
{
    const uint8_t *p = buf;
    for (uint64_t done = 0; done < len;) {
        uint64_t n = len - done < MEDIA_ALIGN ? len - done : MEDIA_ALIGN;
        bool zero = chunk_zero(p + done, n);
        uint64_t run = n;
        while (done + run < len) {
            uint64_t m = len - done - run < MEDIA_ALIGN ? len - done - run
                                                        : MEDIA_ALIGN;
            if (chunk_zero(p + done + run, m) != zero) {
                break;
            }
            run += m;
        }
        int r;
        if (zero) {
            r = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                          (off_t)(off + done), (off_t)run) < 0 ? -errno : 0;
            if (r == -EOPNOTSUPP) {
                r = write_all(fd, p + done, run, off + done);
            }
        } else {
            r = write_all(fd, p + done, run, off + done);
        }
        if (r < 0) {
            return r;
        }
        done += run;
    }
    return 0;
}

/* Read a region saved by save_region(): only the file's data extents are
 * read, so the buffer's pages under holes stay untouched (zero). */
static int load_region(int fd, void *buf, uint64_t len, uint64_t off)
{
    uint8_t *p = buf;
    uint64_t pos = off, end = off + len;
    while (pos < end) {
        off_t d = lseek(fd, (off_t)pos, SEEK_DATA);
        if (d < 0) {
            return errno == ENXIO ? 0 : -errno;     /* rest is a hole */
        }
        if ((uint64_t)d >= end) {
            return 0;
        }
        off_t h = lseek(fd, d, SEEK_HOLE);
        uint64_t stop = h < 0 || (uint64_t)h > end ? end : (uint64_t)h;
        int r = read_all(fd, p + ((uint64_t)d - off), stop - (uint64_t)d,
                         (uint64_t)d);
        if (r < 0) {
            return r;
        }
        pos = stop;
    }
    return 0;
}

/* ---- open / close ---- */

static uint64_t meta_len_of(struct cxlssd_media *md)
{
    struct ftl_region rg[FTL_REGIONS];
    ftl_state_regions(md->ftl, rg);
    uint64_t len = align_up(md->words * 8);
    for (int i = 0; i < FTL_REGIONS; i++) {
        len += align_up(rg[i].len);
    }
    return len;
}

static void header_init(struct cxlssd_media *md)
{
    const struct cxlssd_config *c = cxlssd_model_config(md->model);
    struct ftl_region rg[FTL_REGIONS];
    ftl_state_regions(md->ftl, rg);
    const struct ftl_saved *sv = rg[0].ptr;
    struct media_header *h = &md->hdr;
    memset(h, 0, sizeof(*h));
    memcpy(h->magic, MEDIA_MAGIC, 8);
    h->version = CXLSSD_MEDIA_VERSION;
    h->page_size = md->page_size;
    h->device_size = md->pages * md->page_size;
    h->channels = c->channels;
    h->luns_per_channel = c->luns_per_channel;
    h->blocks_per_lun = sv->blocks_per_lun;
    h->pages_per_block = sv->pages_per_block;
    h->data_off = MEDIA_ALIGN;
    h->meta_off = h->data_off + align_up(h->device_size);
    h->meta_len = meta_len_of(md);
}

/* The file's header against this device's: 0, or -1 naming the property. */
static int header_check(const struct media_header *f,
                        const struct media_header *want, const char *path,
                        char *err, size_t errlen)
{
    if (memcmp(f->magic, MEDIA_MAGIC, 8) != 0) {
        snprintf(err, errlen, "media=%s: not a cxl-ssd media file (no "
                 "header); remove it or name another file", path);
        return -1;
    }
    if (f->version != CXLSSD_MEDIA_VERSION) {
        snprintf(err, errlen, "media=%s: media file version %u, this "
                 "cxl-ssd reads version %u", path, f->version,
                 CXLSSD_MEDIA_VERSION);
        return -1;
    }
#define GEOM(field, prop, fmt)                                           \
    if (f->field != want->field) {                                       \
        snprintf(err, errlen, "%s: the media file media=%s holds a "     \
                 "device with %s=" fmt ", this device has " fmt          \
                 " (same geometry needed to reuse the file)", prop,      \
                 path, prop, f->field, want->field);                     \
        return -1;                                                       \
    }
    GEOM(device_size, "volatile-memdev size", "%" PRIu64)
    GEOM(page_size, "page-size", "%u")
    GEOM(channels, "nand-channels", "%u")
    GEOM(luns_per_channel, "nand-luns", "%u")
    GEOM(pages_per_block, "nand-pages-per-block", "%u")
    GEOM(blocks_per_lun, "nand-blocks (or over-provisioning)", "%u")
#undef GEOM
    if (f->data_off != want->data_off || f->meta_off != want->meta_off ||
        f->meta_len != want->meta_len) {
        snprintf(err, errlen, "media=%s: media file layout differs from "
                 "this device's (same geometry, other layout): remove it",
                 path);
        return -1;
    }
    return 0;
}

static int header_write(struct cxlssd_media *md, uint32_t state)
{
    md->hdr.state = state;
    uint8_t buf[MEDIA_ALIGN];
    memset(buf, 0, sizeof(buf));
    memcpy(buf, &md->hdr, sizeof(md->hdr));
    int r = write_all(md->fd, buf, sizeof(buf), 0);
    if (r == 0 && fdatasync(md->fd) < 0) {
        r = -errno;
    }
    return r;
}

/* Unclean file: a page has data iff the data region is allocated there. */
static void rebuild_written(struct cxlssd_media *md)
{
    uint64_t base = md->hdr.data_off, end = base + md->hdr.device_size;
    uint64_t pos = base;
    while (pos < end) {
        off_t d = lseek(md->fd, (off_t)pos, SEEK_DATA);
        if (d < 0 || (uint64_t)d >= end) {
            break;
        }
        off_t h = lseek(md->fd, d, SEEK_HOLE);
        uint64_t stop = h < 0 || (uint64_t)h > end ? end : (uint64_t)h;
        for (uint64_t p = ((uint64_t)d - base) / md->page_size;
             p < (stop - base + md->page_size - 1) / md->page_size; p++) {
            bit_set(md->written, p);
        }
        pos = stop;
    }
}

static int load_meta(struct cxlssd_media *md)
{
    struct ftl_region rg[FTL_REGIONS];
    ftl_state_regions(md->ftl, rg);
    uint64_t off = md->hdr.meta_off;
    int r = load_region(md->fd, (void *)md->written, md->words * 8, off);
    off += align_up(md->words * 8);
    /* region 0 first: refuse another FTL's state before reading the rest */
    struct ftl_saved sv;
    if (r == 0) {
        r = read_all(md->fd, &sv, sizeof(sv), off);
    }
    if (r == 0 && !ftl_state_compatible(md->ftl, &sv)) {
        return -EINVAL;
    }
    for (int i = 0; i < FTL_REGIONS && r == 0; i++) {
        r = load_region(md->fd, rg[i].ptr, rg[i].len, off);
        off += align_up(rg[i].len);
    }
    if (r == 0 && ftl_state_loaded(md->ftl) < 0) {
        r = -EINVAL;
    }
    return r;
}

static int save_meta(struct cxlssd_media *md)
{
    struct ftl_region rg[FTL_REGIONS];
    ftl_state_regions(md->ftl, rg);
    uint64_t off = md->hdr.meta_off;
    int r = save_region(md->fd, (const void *)md->written, md->words * 8,
                        off);
    off += align_up(md->words * 8);
    for (int i = 0; i < FTL_REGIONS && r == 0; i++) {
        r = save_region(md->fd, rg[i].ptr, rg[i].len, off);
        off += align_up(rg[i].len);
    }
    if (r == 0 && fdatasync(md->fd) < 0) {
        r = -errno;
    }
    return r;
}

static int flusher_start(struct cxlssd_media *md);
static void flusher_stop(struct cxlssd_media *md);

static void media_free(struct cxlssd_media *md)
{
    flusher_stop(md);
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
    header_init(md);
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
        int r = read_all(md->fd, &f, sizeof(f), 0);
        if (r < 0) {
            snprintf(err, errlen, "media=%s: cannot read the header: %s",
                     path, strerror(-r));
            media_free(md);
            return NULL;
        }
        if (header_check(&f, &md->hdr, path, err, errlen) < 0) {
            media_free(md);
            return NULL;
        }
        md->hdr.clean_closes = f.clean_closes;
        if (f.state == MEDIA_CLEAN) {
            r = load_meta(md);
            if (r < 0) {
                snprintf(err, errlen, "media=%s: the saved FTL state does "
                         "not load (%s); remove the file to start empty",
                         path, strerror(-r));
                media_free(md);
                return NULL;
            }
            md->restored = true;
        } else {
            rebuild_written(md);
            md->recovered = true;
        }
    }
    /* From here until a clean close the file is "open". */
    int r = header_write(md, MEDIA_OPEN);
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
        r = flusher_start(md);
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
            flusher_stop(md);       /* every queued page on disk first */
            int e = save_meta(md);
            if (e == 0) {
                e = header_write(md, MEDIA_CLEAN);
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

/* ---- the miss path (async-signal-safe) ---- */

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
        int r = read_all(md->fd, buf, MEDIA_CHUNK, src + o);
        if (r == 0) {
            r = write_all(memfd, buf, MEDIA_CHUNK, memfd_off + o);
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

/* Queue the page just written at file offset @off for the flusher; waits
 * while FLUSH_BUDGET pages are queued.  Async-signal-safe. */
static void flush_queue(struct cxlssd_media *md, uint64_t off)
{
    uint64_t t = atomic_fetch_add(&md->fl_head, 1);
    while (t - atomic_load(&md->fl_tail) >= FLUSH_BUDGET) {
        struct timespec ts = { 0, 20000 };
        nanosleep(&ts, NULL);   /* the disk is behind: back-pressure */
    }
    atomic_store(&md->fl_ring[t % FLUSH_BUDGET], off + 1);
    if (atomic_exchange(&md->fl_sleeping, false)) {
        uint64_t one = 1;
        (void)!write(md->fl_efd, &one, sizeof(one));
    }
}

/* The flusher: takes queued pages in ticket order, writes them to disk and
 * drops them from the page cache; exits when stopped and drained. */
static void *flusher_main(void *arg)
{
    struct cxlssd_media *md = arg;
    uint64_t offs[FLUSH_BATCH];
    uint64_t t = atomic_load(&md->fl_tail);
    for (;;) {
        uint32_t n = 0;
        while (n < FLUSH_BATCH) {
            uint64_t v = atomic_load(&md->fl_ring[t % FLUSH_BUDGET]);
            if (!v) {
                break;  /* empty, or its writer is between ticket and store */
            }
            atomic_store(&md->fl_ring[t % FLUSH_BUDGET], 0);
            offs[n++] = v - 1;
            t++;
        }
        if (n == 0) {
            if (atomic_load(&md->fl_stop) && atomic_load(&md->fl_head) == t) {
                return NULL;
            }
            atomic_store(&md->fl_sleeping, true);
            if (!atomic_load(&md->fl_ring[t % FLUSH_BUDGET]) &&
                !atomic_load(&md->fl_stop)) {
                uint64_t c;
                (void)!read(md->fl_efd, &c, sizeof(c));
            }
            atomic_store(&md->fl_sleeping, false);
            continue;
        }
        for (uint32_t i = 0; i < n; i++) {
            sync_file_range(md->fd, (off_t)offs[i], md->page_size,
                            SYNC_FILE_RANGE_WRITE);
        }
        for (uint32_t i = 0; i < n; i++) {
            sync_file_range(md->fd, (off_t)offs[i], md->page_size,
                            SYNC_FILE_RANGE_WAIT_BEFORE |
                            SYNC_FILE_RANGE_WRITE |
                            SYNC_FILE_RANGE_WAIT_AFTER);
            posix_fadvise(md->fd, (off_t)offs[i], md->page_size,
                          POSIX_FADV_DONTNEED);
        }
        atomic_store(&md->fl_tail, t);
    }
}

static int flusher_start(struct cxlssd_media *md)
{
    md->fl_efd = eventfd(0, EFD_CLOEXEC);
    if (md->fl_efd < 0) {
        return -errno;
    }
    /* the flusher takes none of the process's signals (SIGBUS delivery,
     * QEMU's own) */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int r = pthread_create(&md->fl_thread, NULL, flusher_main, md);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (r != 0) {
        close(md->fl_efd);
        md->fl_efd = -1;
        return -r;
    }
    return 0;
}

/* Drain the queue and end the flusher (no writeback may run meanwhile). */
static void flusher_stop(struct cxlssd_media *md)
{
    if (md->fl_efd < 0) {
        return;
    }
    atomic_store(&md->fl_stop, true);
    uint64_t one = 1;
    (void)!write(md->fl_efd, &one, sizeof(one));
    pthread_join(md->fl_thread, NULL);
    close(md->fl_efd);
    md->fl_efd = -1;
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
        r = read_all(memfd, buf, MEDIA_CHUNK, memfd_off + o);
        if (r == 0) {
            r = write_all(md->fd, buf, MEDIA_CHUNK, dst + o);
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
    if (!md->page_cache) {
        flush_queue(md, dst);
    }
    return 0;
}

bool cxlssd_media_stuck(const struct cxlssd_media *md, uint64_t page)
{
    return page < md->pages && bit_get(md->stuck, page);
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
}

/* ---- metadata footprint ---- */

/*
 * Bytes of [p, p + len) this process has its own pages for (whole host
 * pages): /proc/self/pagemap's "present" and "exclusively mapped" bits.
 * Not mincore(): a read of untouched calloc'd memory maps the shared zero
 * page, which mincore() counts but costs no memory.
 */
static uint64_t resident_bytes(const void *p, uint64_t len)
{
    long hps = sysconf(_SC_PAGESIZE);
    if (!p || !len || hps <= 0) {
        return 0;
    }
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return len;     /* cannot tell: count it all */
    }
    uint64_t first = (uintptr_t)p / (uint64_t)hps;
    uint64_t last = ((uintptr_t)p + len - 1) / (uint64_t)hps;
    uint64_t res = 0, ent[512];
    for (uint64_t v = first; v <= last;) {
        uint64_t n = last - v + 1 < 512 ? last - v + 1 : 512;
        ssize_t r = pread(fd, ent, n * 8, (off_t)(v * 8));
        if (r <= 0) {
            res = len / (uint64_t)hps + 1;
            break;
        }
        n = (uint64_t)r / 8;
        for (uint64_t k = 0; k < n; k++) {
            res += (ent[k] >> 63 & 1) && (ent[k] >> 56 & 1);
        }
        v += n;
    }
    close(fd);
    res *= (uint64_t)hps;
    return res < len ? res : len;
}

uint64_t cxlssd_media_metadata_bytes(struct cxlssd_model *model,
                                     const struct cxlssd_media *md)
{
    const void *lazy[2];
    uint64_t lazy_len[2];
    uint32_t nlazy = cxlssd_model_lazy_arrays(model, lazy, lazy_len);
    /* the cache engine's tables: the fixed ones (frames, sets, the LOADING
     * table's hot part) by size, the lazy ones by what is resident */
    uint64_t b = cxlssd_model_cache_metadata_bytes(model);
    for (uint32_t i = 0; i < nlazy; i++) {
        b -= lazy_len[i];
        b += resident_bytes(lazy[i], lazy_len[i]);
    }
    struct ftl_region rg[FTL_REGIONS];
    struct ftl *f = cxlssd_model_ftl(model);
    ftl_state_regions(f, rg);
    for (int i = 0; i < FTL_REGIONS; i++) {
        b += i < 2 ? rg[i].len : resident_bytes(rg[i].ptr, rg[i].len);
    }
    if (md) {
        b += sizeof(*md);
        b += resident_bytes((const void *)md->written, md->words * 8);
        b += resident_bytes((const void *)md->stuck, md->words * 8);
        b += resident_bytes((const void *)md->touched, md->words * 8);
        b += resident_bytes((const void *)md->drops, md->words * 16);
    }
    return b;
}
