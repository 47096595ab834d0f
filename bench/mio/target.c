/* target.c: map the memory MIO chases.
 *
 *   anon      private anonymous memory
 *   devdax    /dev/daxX.Y: MAP_SHARED, length rounded up to the device
 *             alignment (2 MiB) and never beyond the device size (sysfs or
 *             --target-size); --offset must be aligned too
 *   FILE      MAP_SHARED mapping of a regular file (extended if short) or a
 *             block device
 *
 * --baseline opens a second region the same way (offset 0), or takes the
 * embedding caller's pre-mapped one.
 */
#include "mio.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

const char *mio_target_kind_name(enum mio_target_kind k)
{
    switch (k) {
    case MIO_TGT_ANON: return "anon";
    case MIO_TGT_DEVDAX: return "devdax";
    case MIO_TGT_EMBED: return "embedded";
    default: return "file";
    }
}

uint64_t mio_map_length(uint64_t need, uint64_t align, uint64_t dev_size)
{
    if (!align)
        align = MIO_PAGE;
    if (need > UINT64_MAX - align)
        return 0;
    uint64_t len = (need + align - 1) / align * align;
    if (dev_size && len > dev_size)
        return 0;
    return len;
}

static int read_sysfs_u64(const char *path, uint64_t *out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    unsigned long long v;
    int ok = fscanf(f, "%llu", &v) == 1;
    fclose(f);
    if (!ok)
        return -1;
    *out = v;
    return 0;
}

/* Size and alignment of a dax character device from sysfs. */
static int devdax_sysfs(const char *path, const struct stat *st,
                        uint64_t *size, uint64_t *align)
{
    char p[512];
    unsigned ma = major(st->st_rdev), mi = minor(st->st_rdev);
    *align = MIO_DAX_ALIGN;
    snprintf(p, sizeof(p), "/sys/dev/char/%u:%u/align", ma, mi);
    uint64_t a;
    if (!read_sysfs_u64(p, &a) && a >= MIO_PAGE && !(a & (a - 1)))
        *align = a;
    snprintf(p, sizeof(p), "/sys/dev/char/%u:%u/size", ma, mi);
    if (!read_sysfs_u64(p, size))
        return 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(p, sizeof(p), "/sys/bus/dax/devices/%s/size", base);
    return read_sysfs_u64(p, size);
}

static int is_devdax(const char *path, const struct stat *st)
{
    if (!S_ISCHR(st->st_mode))
        return 0;
    char p[128], link[512];
    snprintf(p, sizeof(p), "/sys/dev/char/%u:%u/subsystem",
             major(st->st_rdev), minor(st->st_rdev));
    ssize_t n = readlink(p, link, sizeof(link) - 1);
    if (n > 0) {
        link[n] = 0;
        const char *b = strrchr(link, '/');
        /* cxlssd: the kernel module's /dev/cxlssdN (hw/cxl-ssd/kmod),
         * which has the same size/align attributes */
        if (b && (!strcmp(b + 1, "dax") || !strcmp(b + 1, "cxlssd")))
            return 1;
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return !strncmp(base, "dax", 3);
}

static void apply_thp(const struct mio_config *cfg, void *p, uint64_t len)
{
    int adv;
    if (cfg->thp == MIO_THP_NEVER)
        adv = MADV_NOHUGEPAGE;
    else if (cfg->thp == MIO_THP_ALWAYS)
        adv = MADV_HUGEPAGE;
    else
        return;
    if (madvise(p, len, adv) && !cfg->quiet)
        fprintf(stderr, "mio: warning: madvise(%s): %s\n",
                adv == MADV_HUGEPAGE ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE",
                strerror(errno));
}

/* The embedding caller's region (bench/native): @need bytes from
 * @offset of [@map, @map + @len); @what names it in errors. */
static int embed_open(struct mio_target *t, char *map, uint64_t len,
                      uint64_t need, uint64_t offset, const char *what)
{
    t->kind = MIO_TGT_EMBED;
    t->align = MIO_PAGE;
    t->map_len = mio_map_length(need, t->align, len);
    if (!t->map_len || offset > len - t->map_len) {
        fprintf(stderr, "mio: working set %llu bytes (+offset %llu) does "
                "not fit the %llu-byte %s\n", (unsigned long long)need,
                (unsigned long long)offset, (unsigned long long)len, what);
        return -1;
    }
    t->dev_size = len;
    t->map = map + offset;
    return 0;
}

int mio_target_open(const struct mio_config *cfg, uint64_t need,
                    struct mio_target *t)
{
    memset(t, 0, sizeof(*t));
    t->fd = -1;
    if (cfg->embed)
        return embed_open(t, cfg->embed->map, cfg->embed->len, need,
                          cfg->offset, "region");
    if (!strcmp(cfg->target, "anon")) {
        t->kind = MIO_TGT_ANON;
        t->align = MIO_PAGE;
        t->map_len = mio_map_length(need, t->align, 0);
        void *m = mmap(NULL, t->map_len, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) {
            fprintf(stderr, "mio: mmap anon %llu bytes: %s\n",
                    (unsigned long long)t->map_len, strerror(errno));
            return -1;
        }
        t->map = m;
        apply_thp(cfg, m, t->map_len);
        return 0;
    }

    /* A missing FILE is created, but never under /dev: a missing
     * /dev/dax0.0 (driver not bound) must not turn into a file on tmpfs. */
    int fd = open(cfg->target, O_RDWR | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && strncmp(cfg->target, "/dev/", 5))
        fd = open(cfg->target, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        fprintf(stderr, "mio: open %s: %s\n", cfg->target, strerror(errno));
        return -1;
    }
    t->fd = fd;
    struct stat st;
    if (fstat(fd, &st)) {
        fprintf(stderr, "mio: stat %s: %s\n", cfg->target, strerror(errno));
        goto fail;
    }
    uint64_t size = 0;
    if (is_devdax(cfg->target, &st)) {
        t->kind = MIO_TGT_DEVDAX;
        if (devdax_sysfs(cfg->target, &st, &size, &t->align) &&
            !cfg->target_size) {
            fprintf(stderr, "mio: %s: cannot read the device size from "
                    "sysfs; give --target-size\n", cfg->target);
            goto fail;
        }
    } else if (S_ISBLK(st.st_mode)) {
        t->kind = MIO_TGT_FILE;
        t->align = MIO_PAGE;
        if (ioctl(fd, BLKGETSIZE64, &size)) {
            fprintf(stderr, "mio: BLKGETSIZE64 %s: %s\n", cfg->target,
                    strerror(errno));
            goto fail;
        }
    } else if (S_ISREG(st.st_mode)) {
        t->kind = MIO_TGT_FILE;
        t->align = MIO_PAGE;
        size = (uint64_t)st.st_size;
    } else {
        fprintf(stderr, "mio: %s: not a devdax device, block device or "
                "regular file\n", cfg->target);
        goto fail;
    }
    if (cfg->target_size)
        size = cfg->target_size;
    if (cfg->offset % t->align) {
        fprintf(stderr, "mio: --offset %llu is not a multiple of the "
                "mapping alignment %llu\n", (unsigned long long)cfg->offset,
                (unsigned long long)t->align);
        goto fail;
    }
    if (S_ISREG(st.st_mode)) {
        uint64_t end = cfg->offset + mio_map_length(need, t->align, 0);
        if ((uint64_t)st.st_size < end) {
            if (ftruncate(fd, (off_t)end)) {
                fprintf(stderr, "mio: extend %s to %llu: %s\n", cfg->target,
                        (unsigned long long)end, strerror(errno));
                goto fail;
            }
            if (size < end)
                size = end;
        }
    }
    t->dev_size = size;
    if (cfg->offset >= size) {
        fprintf(stderr, "mio: --offset %llu beyond %s size %llu\n",
                (unsigned long long)cfg->offset, cfg->target,
                (unsigned long long)size);
        goto fail;
    }
    t->map_len = mio_map_length(need, t->align, size - cfg->offset);
    if (!t->map_len) {
        fprintf(stderr, "mio: working set %llu bytes (+offset %llu) does "
                "not fit %s (%llu bytes)\n", (unsigned long long)need,
                (unsigned long long)cfg->offset, cfg->target,
                (unsigned long long)size);
        goto fail;
    }
    void *m = mmap(NULL, t->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                   (off_t)cfg->offset);
    if (m == MAP_FAILED) {
        fprintf(stderr, "mio: mmap %s len %llu offset %llu: %s\n",
                cfg->target, (unsigned long long)t->map_len,
                (unsigned long long)cfg->offset, strerror(errno));
        goto fail;
    }
    t->map = m;
    if (t->kind == MIO_TGT_FILE)
        apply_thp(cfg, m, t->map_len);
    return 0;
fail:
    close(fd);
    t->fd = -1;
    return -1;
}

int mio_baseline_open(const struct mio_config *cfg, uint64_t need,
                      struct mio_target *t)
{
    const struct mio_embed *e = cfg->embed;
    if (e && e->baseline_map) {
        memset(t, 0, sizeof(*t));
        t->fd = -1;
        return embed_open(t, e->baseline_map, e->baseline_len, need, 0,
                          "baseline region");
    }
    struct mio_config c = *cfg;     /* opened like a target, at offset 0 */
    c.target = cfg->baseline;
    c.target_size = 0;
    c.offset = 0;
    c.embed = NULL;
    return mio_target_open(&c, need, t);
}

void mio_target_close(struct mio_target *t)
{
    if (t->map && t->kind != MIO_TGT_EMBED)
        munmap(t->map, t->map_len);
    if (t->fd >= 0)
        close(t->fd);
    t->map = NULL;
    t->fd = -1;
}
