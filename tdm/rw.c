/* Positional reads and writes, served or passed to the kernel (rw.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>

#include "config.h"
#include "real.h"
#include "rw.h"
#include "safecopy.h"

/*
 * The total of @io where the layer can serve it: a count the kernel
 * would not cap, reject or fail on; false sends the call to the kernel.
 */
static bool io_total(const struct tdm_io *io, size_t *total)
{
    if (io->cnt < 0 || io->cnt > IOV_MAX) {
        return false;
    }
    size_t sum = 0;
    for (int i = 0; i < io->cnt; i++) {
        if (io->iov[i].iov_len > (size_t)TDM_MAX_RW ||
            sum + io->iov[i].iov_len > (size_t)TDM_MAX_RW) {
            return false;
        }
        sum += io->iov[i].iov_len;
    }
    *total = sum;
    return true;
}

ssize_t tdm_real_io(int fd, const struct tdm_io *io, const int64_t *at,
                    bool write)
{
    if (io->vec) {
        if (write) {
            return at ? tdm_real.pwritev(fd, io->iov, io->cnt, *at)
                      : tdm_real.writev(fd, io->iov, io->cnt);
        }
        return at ? tdm_real.preadv(fd, io->iov, io->cnt, *at)
                  : tdm_real.readv(fd, io->iov, io->cnt);
    }
    void *buf = io->iov[0].iov_base;
    size_t n = io->iov[0].iov_len;
    if (write) {
        return at ? tdm_real.pwrite(fd, buf, n, *at)
                  : tdm_real.write(fd, buf, n);
    }
    return at ? tdm_real.pread(fd, buf, n, *at) : tdm_real.read(fd, buf, n);
}

ssize_t tdm_kernel_read(struct tdm_desc *d, int fd, const struct tdm_io *io,
                        const int64_t *at)
{
    ssize_t r = tdm_real_io(fd, io, at, false);
    tdm_stats_io(d->inode->stats, 0, 0, r);
    return r;
}

ssize_t tdm_kernel_write(struct tdm_desc *d, int fd, const struct tdm_io *io,
                         const int64_t *at)
{
    int64_t off = at ? *at : 0;
    ssize_t r = tdm_real_io(fd, io, at, true);
    if (r > 0) {
        /* where the data went: known for a positional write, unless
         * O_APPEND made the kernel append it */
        bool known = at && !(atomic_load(&d->flags) & O_APPEND);
        tdm_size_kernel_wrote(d->inode, known ? off + r : -1);
    }
    tdm_stats_io(d->inode->stats, 1, 0, r);
    return r;
}

/* inode->lock shared -> exclusive -> shared (what it guards may change) */
static void relock_exclusive(struct tdm_inode *ino)
{
    tdm_rwlock_unlock(&ino->lock);
    tdm_rwlock_wrlock(&ino->lock);
}

static void relock_shared(struct tdm_inode *ino)
{
    tdm_rwlock_unlock(&ino->lock);
    tdm_rwlock_rdlock(&ino->lock);
}

/* a copy that took SIGBUS: the file shrank under it (or the media failed) */
static void after_sigbus(struct tdm_inode *ino, int fd)
{
    tdm_rwlock_wrlock(&ino->lock);
    tdm_size_refresh(ino, fd);
    tdm_rwlock_unlock(&ino->lock);
    tdm_stats_add(ino->stats, TDM_C_SIGBUS_RECOVERIES, 1);
}

static bool policy_serves(struct tdm_inode *ino, uint64_t off, uint64_t len,
                          bool read)
{
    unsigned hot;
    bool yes = tdm_policy_serves(&tdm_cfg, ino->regions,
                                 atomic_load(&ino->size), off, len, read, &hot);
    if (hot) {
        tdm_stats_add(ino->stats, TDM_C_HOT_REGIONS, hot);
    }
    if (!yes) {
        tdm_stats_reason(ino->stats, TDM_R_POLICY);
    }
    return yes;
}

static bool passes(struct tdm_desc *d, const struct tdm_io *io, int64_t off,
                   size_t *total)
{
    if (d->passthrough || (atomic_load(&d->flags) & O_DIRECT)) {
        return true;
    }
    if (!io_total(io, total) || off < 0 || (uint64_t)off + *total > INT64_MAX) {
        tdm_stats_reason(d->inode->stats, TDM_R_ARGS);
        return true;
    }
    return false;
}

ssize_t tdm_rw_read(struct tdm_desc *d, int fd, const struct tdm_io *io,
                    int64_t off)
{
    struct tdm_inode *ino = d->inode;
    size_t total;
    if (passes(d, io, off, &total)) {
        return tdm_kernel_read(d, fd, io, &off);
    }
    if (total == 0) {
        tdm_stats_io(ino->stats, 0, 1, 0);
        return 0;
    }
    tdm_rwlock_rdlock(&ino->lock);
    /* a read that reaches the end asks the kernel where the end is now:
     * another process may have written past it */
    if (atomic_load(&ino->size_stale) ||
        (uint64_t)off + total > atomic_load(&ino->size)) {
        relock_exclusive(ino);
        tdm_size_refresh(ino, fd);
        relock_shared(ino);
    }
    uint64_t size = atomic_load(&ino->size);
    if ((uint64_t)off >= size) {
        tdm_rwlock_unlock(&ino->lock);
        tdm_stats_io(ino->stats, 0, 1, 0);
        return 0;
    }
    size_t len = total < size - (uint64_t)off ? total : size - (uint64_t)off;
    if (!policy_serves(ino, (uint64_t)off, len, true)) {
        tdm_rwlock_unlock(&ino->lock);
        return tdm_kernel_read(d, fd, io, &off);
    }
    if ((uint64_t)off + len > ino->map_len) {
        relock_exclusive(ino);
        tdm_map_cover(ino, fd, atomic_load(&d->flags), (uint64_t)off + len,
                      false);
        relock_shared(ino);
        size = atomic_load(&ino->size);
        len = (uint64_t)off >= size ? 0
              : total < size - (uint64_t)off ? total : size - (uint64_t)off;
        if (len == 0 || (uint64_t)off + len > ino->map_len) {
            tdm_rwlock_unlock(&ino->lock);
            return tdm_kernel_read(d, fd, io, &off);
        }
    }
    bool ok = tdm_copy_out(io->iov, io->cnt, ino->map + off, len);
    tdm_rwlock_unlock(&ino->lock);
    if (!ok) {
        after_sigbus(ino, fd);
        return tdm_kernel_read(d, fd, io, &off);
    }
    tdm_stats_io(ino->stats, 0, 1, (ssize_t)len);
    return (ssize_t)len;
}

/* the kernel's write, with inode->lock shared held (the size it keeps) */
static ssize_t kernel_write_locked(struct tdm_desc *d, int fd,
                                   const struct tdm_io *io, int64_t off,
                                   unsigned reason)
{
    if (reason) {
        tdm_stats_reason(d->inode->stats, reason);
    }
    ssize_t r = tdm_kernel_write(d, fd, io, &off);
    int e = errno;
    tdm_rwlock_unlock(&d->inode->lock);
    errno = e;
    return r;
}

ssize_t tdm_rw_write(struct tdm_desc *d, int fd, const struct tdm_io *io,
                     int64_t off)
{
    struct tdm_inode *ino = d->inode;
    int flags = atomic_load(&d->flags);
    size_t total;
    if (passes(d, io, off, &total) || (flags & O_ACCMODE) != O_RDWR) {
        tdm_rwlock_rdlock(&ino->lock);
        return kernel_write_locked(d, fd, io, off, 0);
    }
    if ((flags & (O_SYNC | O_DSYNC)) &&
        (ino->kind != TDM_MAP_SYNC || ino->flush == TDM_FLUSH_NONE)) {
        /* the kernel makes such a write durable before it returns */
        tdm_rwlock_rdlock(&ino->lock);
        return kernel_write_locked(d, fd, io, off, TDM_R_SYNC_WRITE);
    }
    if (total == 0) {
        tdm_stats_io(ino->stats, 1, 1, 0);
        return 0;
    }
    tdm_rwlock_rdlock(&ino->lock);
    if (atomic_load(&ino->size_stale)) {
        relock_exclusive(ino);
        tdm_size_refresh(ino, fd);
        relock_shared(ino);
    }
    uint64_t end = (uint64_t)off + total;
    /* past the end: the kernel moves the end (one call either way) */
    if (end > atomic_load(&ino->size)) {
        return kernel_write_locked(d, fd, io, off, TDM_R_EXTEND);
    }
    if (!policy_serves(ino, (uint64_t)off, total, false)) {
        return kernel_write_locked(d, fd, io, off, 0);
    }
    if (end > ino->map_len || !ino->map_writable) {
        relock_exclusive(ino);
        tdm_map_cover(ino, fd, flags, end, true);
        relock_shared(ino);
        if (end > atomic_load(&ino->size)) {
            return kernel_write_locked(d, fd, io, off, TDM_R_EXTEND);
        }
        if (end > ino->map_len || !ino->map_writable) {
            return kernel_write_locked(d, fd, io, off, TDM_R_MMAP_FAILED);
        }
    }
    bool ok = tdm_copy_in(ino->map + off, io->iov, io->cnt, total, ino->flush);
    tdm_rwlock_unlock(&ino->lock);
    if (!ok) {
        after_sigbus(ino, fd);
        tdm_rwlock_rdlock(&ino->lock);
        return kernel_write_locked(d, fd, io, off, 0);
    }
    tdm_stats_io(ino->stats, 1, 1, (ssize_t)total);
    return (ssize_t)total;
}
