/*
 * The read and write calls on a fd (tdm.h): the description's offset kept
 * by the layer under its lock, as the kernel keeps f_pos (a read or write
 * on a shared description is atomic with respect to the offset).
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "fdtable.h"
#include "real.h"
#include "rw.h"
#include "tdm.h"

/*
 * O_APPEND: the kernel appends (it alone knows the end for certain), and
 * its offset, which it moves to the end of what it wrote, is read back.
 */
static ssize_t append(struct tdm_desc *d, int fd, const struct tdm_io *io)
{
    tdm_stats_reason(d->inode->stats, TDM_R_EXTEND);
    ssize_t r = tdm_kernel_write(d, fd, io, TDM_KERNEL_OFFSET);
    if (r > 0) {
        int e = errno;
        off_t pos = tdm_real.lseek(fd, 0, SEEK_CUR);
        if (pos >= 0) {
            d->offset = pos;
            tdm_size_kernel_wrote(d->inode, pos);
        }
        errno = e;
    }
    return r;
}

static ssize_t kernel_offset_io(struct tdm_desc *d, int fd,
                                const struct tdm_io *io, bool write)
{
    return write ? tdm_kernel_write(d, fd, io, TDM_KERNEL_OFFSET)
                 : tdm_kernel_read(d, fd, io, TDM_KERNEL_OFFSET);
}

/* read, readv (@write false), write and writev */
static ssize_t offset_io(int fd, const struct tdm_io *io, bool write)
{
    struct tdm_desc *d = tdm_fd_get(fd);
    if (!d) {
        return tdm_real_io(fd, io, TDM_KERNEL_OFFSET, write);
    }
    ssize_t r;
    if (atomic_load(&d->kernel_offset)) {
        r = kernel_offset_io(d, fd, io, write);
    } else {
        int cs = tdm_desc_lock(d);
        if (atomic_load(&d->kernel_offset)) {
            r = kernel_offset_io(d, fd, io, write);
        } else if (write && (atomic_load(&d->flags) & O_APPEND)) {
            tdm_rwlock_rdlock(&d->inode->lock);
            r = append(d, fd, io);
            int e = errno;
            tdm_rwlock_unlock(&d->inode->lock);
            errno = e;
        } else if ((r = write ? tdm_rw_write(d, fd, io, d->offset)
                              : tdm_rw_read(d, fd, io, d->offset)) > 0) {
            d->offset += r;
        }
        tdm_desc_unlock(d, cs);
    }
    tdm_desc_release(d);
    return r;
}

/* pread, preadv (@write false), pwrite and pwritev */
static ssize_t positional_io(int fd, const struct tdm_io *io, off_t off,
                             bool write)
{
    struct tdm_desc *d = tdm_fd_get(fd);
    if (!d) {
        return tdm_real_io(fd, io, &(int64_t) { off }, write);
    }
    ssize_t r;
    if (!write) {
        r = tdm_rw_read(d, fd, io, off);
    } else if (atomic_load(&d->flags) & O_APPEND) {
        /* Linux appends a pwrite on an O_APPEND fd, whatever @off says */
        tdm_stats_reason(d->inode->stats, TDM_R_EXTEND);
        r = tdm_kernel_write(d, fd, io, &(int64_t) { off });
    } else {
        r = tdm_rw_write(d, fd, io, off);
    }
    tdm_desc_release(d);
    return r;
}

ssize_t tdm_read(int fd, void *buf, size_t n)
{
    struct iovec v = { buf, n };
    return offset_io(fd, &(struct tdm_io) { &v, 1, false }, false);
}

ssize_t tdm_readv(int fd, const struct iovec *iov, int cnt)
{
    return offset_io(fd, &(struct tdm_io) { iov, cnt, true }, false);
}

ssize_t tdm_pread(int fd, void *buf, size_t n, off_t off)
{
    struct iovec v = { buf, n };
    return positional_io(fd, &(struct tdm_io) { &v, 1, false }, off, false);
}

ssize_t tdm_preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
    return positional_io(fd, &(struct tdm_io) { iov, cnt, true }, off, false);
}

ssize_t tdm_write(int fd, const void *buf, size_t n)
{
    struct iovec v = { (void *)buf, n };
    return offset_io(fd, &(struct tdm_io) { &v, 1, false }, true);
}

ssize_t tdm_writev(int fd, const struct iovec *iov, int cnt)
{
    return offset_io(fd, &(struct tdm_io) { iov, cnt, true }, true);
}

ssize_t tdm_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    struct iovec v = { (void *)buf, n };
    return positional_io(fd, &(struct tdm_io) { &v, 1, false }, off, true);
}

ssize_t tdm_pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    return positional_io(fd, &(struct tdm_io) { iov, cnt, true }, off, true);
}

/*
 * preadv2/pwritev2: without flags readv/writev at offset -1, else
 * preadv/pwritev.  With flags (RWF_*: the kernel's own behaviours) they
 * pass through; at offset -1 they use the description's offset, handed to
 * the kernel for the call and read back after it.
 */
static ssize_t rwv2(int fd, const struct iovec *iov, int cnt, off_t off,
                    int flags, bool write)
{
    if (flags == 0) {
        const struct tdm_io io = { iov, cnt, true };
        return off == -1 ? offset_io(fd, &io, write)
                         : positional_io(fd, &io, off, write);
    }
    struct tdm_desc *d = tdm_fd_get(fd);
    ssize_t (*call)(int, const struct iovec *, int, off_t, int) =
        write ? tdm_real.pwritev2 : tdm_real.preadv2;
    if (!d) {
        return call(fd, iov, cnt, off, flags);
    }
    ssize_t r;
    int cs = tdm_desc_lock(d);
    bool keep = off == -1 && !atomic_load(&d->kernel_offset);
    if (keep && tdm_real.lseek(fd, d->offset, SEEK_SET) < 0) {
        r = -1;
    } else {
        r = call(fd, iov, cnt, off, flags);
        int e = errno;
        if (keep) {
            off_t pos = tdm_real.lseek(fd, 0, SEEK_CUR);
            if (pos >= 0) {
                d->offset = pos;
            }
        }
        errno = e;
    }
    tdm_desc_unlock(d, cs);
    if (write && r > 0) {
        tdm_size_kernel_wrote(d->inode, -1);
    }
    tdm_stats_io(d->inode->stats, write, 0, r);
    tdm_desc_release(d);
    return r;
}

ssize_t tdm_preadv2(int fd, const struct iovec *iov, int cnt, off_t off,
                    int flags)
{
    return rwv2(fd, iov, cnt, off, flags, false);
}

ssize_t tdm_pwritev2(int fd, const struct iovec *iov, int cnt, off_t off,
                     int flags)
{
    return rwv2(fd, iov, cnt, off, flags, true);
}

off_t tdm_lseek(int fd, off_t off, int whence)
{
    struct tdm_desc *d = tdm_fd_get(fd);
    if (!d) {
        return tdm_real.lseek(fd, off, whence);
    }
    off_t r;
    int cs = tdm_desc_lock(d);
    if (atomic_load(&d->kernel_offset)) {
        r = tdm_real.lseek(fd, off, whence);
    } else if (whence == SEEK_CUR && off == 0) {
        r = d->offset;
    } else {
        /* the kernel checks the new offset (negative, past the
         * filesystem's largest file); SEEK_END, SEEK_DATA and SEEK_HOLE
         * need its view of the file */
        if (whence == SEEK_CUR) {
            off = (off_t)((uint64_t)d->offset + (uint64_t)off);
            whence = SEEK_SET;
        }
        if ((r = tdm_real.lseek(fd, off, whence)) >= 0) {
            d->offset = r;
        }
    }
    tdm_desc_unlock(d, cs);
    tdm_desc_release(d);
    return r;
}
