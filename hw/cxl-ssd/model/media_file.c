/*
 * The media file's format (layout in media.h): the header that names the
 * geometry and the state (open/clean), the metadata a clean close saves
 * (written-page bitmap, FTL state) as sparse regions, and the rebuild of
 * an unclean file's bitmap from its allocated extents.  Also the
 * positional I/O that every part of the store uses.
 */
#include "media_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ftl.h"
#include "model.h"

#define MEDIA_MAGIC "CXLSSDMF"

static inline uint64_t align_up(uint64_t v)
{
    return (v + MEDIA_ALIGN - 1) & ~(MEDIA_ALIGN - 1);
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

/* pwrite (@write) or pread all @len bytes at @off, through EINTR and
 * short transfers; what a read finds past EOF is zeros. */
static int transfer_all(int fd, uint8_t *p, uint64_t len, uint64_t off,
                        bool write)
{
    while (len > 0) {
        ssize_t n = write ? pwrite(fd, p, len, (off_t)off)
                          : pread(fd, p, len, (off_t)off);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -errno;
        }
        if (n == 0 && !write) {
            memset(p, 0, len);
            return 0;
        }
        p += n;
        len -= (uint64_t)n;
        off += (uint64_t)n;
    }
    return 0;
}

int media_write_all(int fd, const void *buf, uint64_t len, uint64_t off)
{
    return transfer_all(fd, (uint8_t *)buf, len, off, true);
}

int media_read_all(int fd, void *buf, uint64_t len, uint64_t off)
{
    return transfer_all(fd, buf, len, off, false);
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
                r = media_write_all(fd, p + done, run, off + done);
            }
        } else {
            r = media_write_all(fd, p + done, run, off + done);
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
        int r = media_read_all(fd, p + ((uint64_t)d - off), stop - (uint64_t)d,
                         (uint64_t)d);
        if (r < 0) {
            return r;
        }
        pos = stop;
    }
    return 0;
}

/* ---- the metadata regions ---- */

/* In file order from meta_off, each at a 4 KiB boundary: the written-page
 * bitmap, then the FTL's (its region 0, a struct ftl_saved, first). */
#define META_REGIONS (1 + FTL_REGIONS)

static void meta_regions(struct cxlssd_media *md,
                         struct ftl_region out[META_REGIONS])
{
    out[0] = (struct ftl_region) { (void *)md->written, md->words * 8 };
    ftl_state_regions(md->ftl, out + 1);
}

static uint64_t meta_len_of(struct cxlssd_media *md)
{
    struct ftl_region rg[META_REGIONS];
    meta_regions(md, rg);
    uint64_t len = 0;
    for (int i = 0; i < META_REGIONS; i++) {
        len += align_up(rg[i].len);
    }
    return len;
}

/* Every region to the file (@save) or from it; 0 or -errno. */
static int meta_transfer(struct cxlssd_media *md, bool save)
{
    struct ftl_region rg[META_REGIONS];
    meta_regions(md, rg);
    uint64_t off = md->hdr.meta_off;
    int r = 0;
    for (int i = 0; i < META_REGIONS && r == 0; i++) {
        r = save ? save_region(md->fd, rg[i].ptr, rg[i].len, off)
                 : load_region(md->fd, rg[i].ptr, rg[i].len, off);
        off += align_up(rg[i].len);
    }
    return r;
}

/* ---- the header ---- */

void media_header_init(struct cxlssd_media *md)
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
int media_header_check(const struct media_header *f,
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

int media_header_write(struct cxlssd_media *md, uint32_t state)
{
    md->hdr.state = state;
    uint8_t buf[MEDIA_ALIGN];
    memset(buf, 0, sizeof(buf));
    memcpy(buf, &md->hdr, sizeof(md->hdr));
    int r = media_write_all(md->fd, buf, sizeof(buf), 0);
    if (r == 0 && fdatasync(md->fd) < 0) {
        r = -errno;
    }
    return r;
}
int media_header_read(int fd, struct media_header *out)
{
    return media_read_all(fd, out, sizeof(*out), 0);
}

/* ---- the saved metadata ---- */

/* Unclean file: a page has data iff the data region is allocated there. */
void media_rebuild_written(struct cxlssd_media *md)
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
            /* the FTL as a fill in page order would have left it: the
             * device is as full as its data (wear and counters from 0) */
            ftl_place(md->ftl, p);
        }
        pos = stop;
    }
}

int media_load_meta(struct cxlssd_media *md)
{
    /* the FTL's region 0 (after the bitmap) first: refuse another FTL's
     * state before reading anything into this one */
    struct ftl_saved sv;
    int r = media_read_all(md->fd, &sv, sizeof(sv), md->hdr.meta_off +
                           align_up(md->words * 8));
    if (r == 0 && !ftl_state_compatible(md->ftl, &sv)) {
        return -EINVAL;
    }
    if (r == 0) {
        r = meta_transfer(md, false);
    }
    if (r == 0 && ftl_state_loaded(md->ftl) < 0) {
        r = -EINVAL;
    }
    return r;
}

int media_save_meta(struct cxlssd_media *md)
{
    int r = meta_transfer(md, true);
    if (r == 0 && fdatasync(md->fd) < 0) {
        r = -errno;
    }
    return r;
}
