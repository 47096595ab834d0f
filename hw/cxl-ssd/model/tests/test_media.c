/*
 * The media store (media.h) without the trap: a 32 GiB model whose
 * metadata stays small when few pages are touched, a sparse file, fills
 * and writebacks through a memfd, the FTL state across close/open, and
 * the refusals (another version, not a media file).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "ftl.h"
#include "media.h"
#include "model.h"
#include "model_test.h"
#include "tap.h"

#define PG 4096ull
#define DEV (32ull << 30)
#define TOUCH 4096u

static char path[PATH_MAX];

static struct cxlssd_model *model(void)
{
    struct cxlssd_config c;
    cxlssd_config_defaults(&c, DEV);
    c.cache_size = 16ull << 20;
    return test_model_new(&c, "model");
}

/* Miss on @n pages from @first, write each (dirty), evict nothing. */
static void touch_pages(struct cxlssd_model *m, uint64_t first, uint64_t n)
{
    struct cxlssd_miss out;
    for (uint64_t p = first; p < first + n; p++) {
        cxlssd_miss(m, p, true, cxlssd_now_ns(), &out);
        for (uint32_t i = 0; i < out.nvictims; i++) {
            cxlssd_evict_done(m, out.victims[i].page);
        }
        if (out.outcome == CXLSSD_MISS_FILL) {
            cxlssd_fill_done(m, p);
        }
    }
}

/* Pages of the file at @p in the page cache (mincore over a mapping). */
static uint64_t cached_pages(const char *p)
{
    int fd = open(p, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        return UINT64_MAX;
    }
    uint64_t n = ((uint64_t)st.st_size + PG - 1) / PG, res = 0;
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    unsigned char *vec = malloc(n);
    if (map == MAP_FAILED || !vec ||
        mincore(map, (size_t)st.st_size, vec) < 0) {
        res = UINT64_MAX;
    } else {
        for (uint64_t i = 0; i < n; i++) {
            res += vec[i] & 1;
        }
    }
    if (map != MAP_FAILED) {
        munmap(map, (size_t)st.st_size);
    }
    free(vec);
    close(fd);
    return res;
}

/*
 * media-page-cache=off: written-back pages reach the disk through the
 * flusher and leave the page cache (at most its 2048-page budget queued),
 * filled pages leave it at once, and a clean close drains the queue: the
 * data reads back after a restart.
 */
static void test_no_page_cache(int memfd)
{
    char p2[PATH_MAX + 8], err[256];
    snprintf(p2, sizeof(p2), "%s-nopc", path);
    unlink(p2);
    struct statfs sfs;
    int fd = open(p2, O_RDWR | O_CREAT, 0600);
    bool tmpfs = fd >= 0 && fstatfs(fd, &sfs) == 0 &&
                 sfs.f_type == TMPFS_MAGIC;
    if (fd >= 0) {
        close(fd);
    }
    if (tmpfs) {
        for (int i = 0; i < 4; i++) {
            tap_ok(1, "page cache off # SKIP %s is on tmpfs (its pages are "
                   "the file, never dropped)", p2);
        }
        unlink(p2);
        return;
    }
    const uint64_t n = 4 * 2048;    /* 4x the flusher's budget */
    struct cxlssd_model *m = model();
    struct cxlssd_media *md = m ? cxlssd_media_open(p2, m, false, err,
                                                    sizeof(err)) : NULL;
    if (!md) {
        for (int i = 0; i < 4; i++) {
            tap_ok(0, "page cache off: open: %s", m ? err : "model");
        }
        cxlssd_model_free(m);
        return;
    }
    uint64_t buf[PG / 8], peak = 0, bad = 0;
    for (uint64_t p = 0; p < n; p++) {
        for (size_t i = 0; i < PG / 8; i++) {
            buf[i] = p * 7 + i;
        }
        pwrite(memfd, buf, PG, (off_t)(p * PG));
        bad += cxlssd_media_writeback(md, p, memfd, p * PG) < 0;
        if (p % 512 == 511) {
            uint64_t c = cached_pages(p2);
            peak = c > peak ? c : peak;
        }
    }
    tap_ok(bad == 0 && peak <= 2048 + 16, "page cache off: %llu pages "
           "written back, at most %llu of the file's pages in the page "
           "cache (budget 2048 + header/metadata)", (unsigned long long)n,
           (unsigned long long)peak);
    tap_eq(cxlssd_media_close(md, true, err, sizeof(err)), 0,
           "page cache off: clean close");
    uint64_t after = cached_pages(p2);
    tap_ok(after <= 16, "page cache off: %llu pages cached after the close",
           (unsigned long long)after);
    cxlssd_model_free(m);

    m = model();
    md = m ? cxlssd_media_open(p2, m, false, err, sizeof(err)) : NULL;
    bad = !md;
    for (uint64_t p = 0; md && p < n; p += 3) {
        fallocate(memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  (off_t)(p * PG), PG);
        bad += cxlssd_media_fill(md, p, memfd, p * PG) < 0;
        pread(memfd, buf, PG, (off_t)(p * PG));
        bad += buf[0] != p * 7 || buf[PG / 8 - 1] != p * 7 + PG / 8 - 1;
    }
    uint64_t c = cached_pages(p2);
    tap_ok(bad == 0 && c <= 16, "page cache off: restart reads every 3rd "
           "page back (%llu bad), %llu pages cached after the fills",
           (unsigned long long)bad, (unsigned long long)c);
    cxlssd_media_close(md, true, err, sizeof(err));
    cxlssd_model_free(m);
    unlink(p2);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof(path), "%s/cxlssd-test-media-%d",
             tmp && *tmp ? tmp : "/tmp", (int)getpid());
    unlink(path);
    char err[256];
    struct cxlssd_model *m = model();
    if (!m) {
        tap_ok(0, "model");
        return tap_done();
    }
    struct cxlssd_media *md = cxlssd_media_open(path, m, true, err,
                                                sizeof(err));
    tap_ok(md != NULL, "open a new %llu-byte media file", DEV);
    if (!md) {
        tap_diag("%s", err);
        return tap_done();
    }
    struct stat st;
    stat(path, &st);
    tap_ok((uint64_t)st.st_size > DEV && (uint64_t)st.st_blocks * 512 <
           (1u << 20), "sparse: %lld bytes, %lld allocated",
           (long long)st.st_size, (long long)st.st_blocks * 512);

    int memfd = memfd_create("test-media", MFD_CLOEXEC);
    ftruncate(memfd, (off_t)DEV);
    /* 4096 pages spread in 4 runs over the device */
    uint64_t firsts[4] = { 0, DEV / PG / 3, DEV / PG / 2, DEV / PG - 1024 };
    uint64_t buf[PG / 8];
    for (int r = 0; r < 4; r++) {
        touch_pages(m, firsts[r], TOUCH / 4);
        for (uint64_t p = firsts[r]; p < firsts[r] + TOUCH / 4; p++) {
            for (size_t i = 0; i < PG / 8; i++) {
                buf[i] = p * 1000 + i;
            }
            pwrite(memfd, buf, PG, (off_t)(p * PG));
            ftl_write(cxlssd_model_ftl(m), p, cxlssd_now_ns());
            if (cxlssd_media_writeback(md, p, memfd, p * PG) < 0) {
                tap_ok(0, "writeback of page %llu", (unsigned long long)p);
            }
        }
    }
    uint64_t meta = cxlssd_media_metadata_bytes(m, md);
    /* the per-page arrays alone would be ~9 B per device page; what is
     * left is per LUN (p2l runs), per block and per cache frame */
#ifdef __SANITIZE_THREAD__
    /* TSan's calloc writes the memory it returns: nothing to measure */
    tap_ok(1, "metadata footprint # SKIP TSan's allocator touches calloc'd "
           "memory");
    (void)meta;
#else
    tap_ok(meta < DEV / PG * 9 / 32, "metadata %llu bytes: %llu per touched "
           "page for %u pages of a %llu-page device (capacity-sized arrays: "
           "%llu bytes)", (unsigned long long)meta,
           (unsigned long long)(meta / TOUCH), TOUCH,
           (unsigned long long)(DEV / PG),
           (unsigned long long)(DEV / PG * 9));
#endif
    struct ftl_stats before;
    ftl_get_stats(cxlssd_model_ftl(m), &before);
    tap_eq(cxlssd_media_close(md, true, err, sizeof(err)), 0, "clean close");
    cxlssd_model_free(m);

    m = model();
    md = cxlssd_media_open(path, m, true, err, sizeof(err));
    struct cxlssd_media_stats ms;
    if (md) {
        cxlssd_media_get_stats(md, &ms);
    }
    tap_ok(md && ms.restored && ms.written_pages == TOUCH,
           "reopen: restored, %u written pages", TOUCH);
    struct ftl_stats after;
    ftl_get_stats(cxlssd_model_ftl(m), &after);
    tap_eq(after.host_writes, before.host_writes, "reopen: host_writes");
    tap_ok(ftl_lookup(cxlssd_model_ftl(m), firsts[2]) != UINT32_MAX &&
           ftl_lookup(cxlssd_model_ftl(m), 5000) == UINT32_MAX,
           "reopen: the FTL maps written pages only");
    int bad = 0;
    if (md) {
        for (int r = 0; r < 4; r++) {
            uint64_t p = firsts[r] + 7;
            fallocate(memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                      (off_t)(p * PG), PG);
            cxlssd_media_fill(md, p, memfd, p * PG);
            pread(memfd, buf, PG, (off_t)(p * PG));
            bad += buf[0] != p * 1000 || buf[PG / 8 - 1] != p * 1000 + PG / 8 - 1;
        }
        uint64_t z = 5000;
        cxlssd_media_fill(md, z, memfd, z * PG);
        pread(memfd, buf, PG, (off_t)(z * PG));
        bad += buf[0] != 0;
        cxlssd_media_get_stats(md, &ms);
        tap_ok(ms.zero_fills == 1 && ms.fills == 4, "fills %llu, zero fills "
               "%llu", (unsigned long long)ms.fills,
               (unsigned long long)ms.zero_fills);
    }
    tap_eq(bad, 0, "reopen: pages read their data, unwritten ones zeros");
    cxlssd_media_close(md, false, err, sizeof(err));    /* left open */
    cxlssd_model_free(m);

    m = model();
    md = cxlssd_media_open(path, m, true, err, sizeof(err));
    if (md) {
        cxlssd_media_get_stats(md, &ms);
    }
    tap_ok(md && ms.recovered && ms.written_pages == TOUCH,
           "unclean file: recovered, written pages rebuilt from extents");
    ftl_get_stats(cxlssd_model_ftl(m), &after);
    tap_eq(after.host_writes, 0, "unclean file: FTL from empty");
    cxlssd_media_close(md, true, err, sizeof(err));
    cxlssd_model_free(m);

    /* another version: refused naming media */
    int fd = open(path, O_RDWR);
    uint32_t v = 99;
    pwrite(fd, &v, sizeof(v), 8);
    close(fd);
    m = model();
    md = cxlssd_media_open(path, m, true, err, sizeof(err));
    tap_ok(!md && strstr(err, "media=") && strstr(err, "version 99"),
           "another version refused: %s", err);
    fd = open(path, O_RDWR);
    pwrite(fd, "NOTMEDIA", 8, 0);
    close(fd);
    md = cxlssd_media_open(path, m, true, err, sizeof(err));
    tap_ok(!md && strstr(err, "not a cxl-ssd media file"),
           "not a media file refused: %s", err);
    cxlssd_model_free(m);
    test_no_page_cache(memfd);
    close(memfd);
    unlink(path);
    return tap_done();
}
