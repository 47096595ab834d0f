/*
 * Calls that make, copy and drop fds (tdm.h): the fd table follows them,
 * so dup'ed fds share one description (and its offset) as in the kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdtable.h"
#include "real.h"
#include "tdm.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1u << 2)
#endif

/* a new fd from an open: tracked if it is a regular file */
static void track(int fd, int flags, const char *path)
{
    struct stat st;
    struct tdm_desc *d = NULL;
    if (!fstat(fd, &st) && S_ISREG(st.st_mode)) {
        d = tdm_desc_open(fd, &st, flags, path);
    }
    /* also drops what a slot kept for an fd closed behind the layer */
    tdm_fd_set(fd, d, flags & O_CLOEXEC);
}

int tdm_openat(int dirfd, const char *path, int flags, mode_t mode)
{
    int fd = tdm_real.openat(dirfd, path, flags, mode);
    if (fd >= 0) {
        int e = errno;
        if (flags & O_PATH) {
            tdm_fd_set(fd, NULL, false);
        } else {
            track(fd, flags, path);
        }
        errno = e;
    }
    return fd;
}

int tdm_close(int fd)
{
    tdm_fd_set(fd, NULL, false);
    return tdm_real.close(fd);
}

/* after a call that made @newfd a copy of @fd (@d: fd's, referenced) */
static int copied(struct tdm_desc *d, int newfd, bool cloexec)
{
    int e = errno;
    if (newfd >= 0) {
        tdm_fd_set(newfd, d, cloexec);
    } else if (d) {
        tdm_desc_put(d);
    }
    errno = e;
    return newfd;
}

int tdm_dup(int fd)
{
    struct tdm_desc *d = tdm_fd_get(fd);
    return copied(d, tdm_real.dup(fd), false);
}

int tdm_dup2(int fd, int newfd)
{
    struct tdm_desc *d = tdm_fd_get(fd);
    int r = tdm_real.dup2(fd, newfd);
    if (r >= 0 && fd == newfd) {
        /* nothing changed (and FD_CLOEXEC stays) */
        if (d) {
            tdm_desc_release(d);
        }
        return r;
    }
    return copied(d, r, false);
}

int tdm_dup3(int fd, int newfd, int flags)
{
    struct tdm_desc *d = tdm_fd_get(fd);
    return copied(d, tdm_real.dup3(fd, newfd, flags), flags & O_CLOEXEC);
}

/* the flags F_SETFL changes (the kernel's SETFL_MASK) */
#define SETFL_MASK (O_APPEND | O_NONBLOCK | O_NDELAY | O_ASYNC | O_DIRECT | \
                    O_NOATIME)

static int setfl(struct tdm_desc *d, int fd, int flags)
{
    int cs = tdm_desc_lock(d);
    int r = tdm_real.fcntl(fd, F_SETFL, flags);
    int e = errno;
    if (r == 0) {
        int now = (atomic_load(&d->flags) & ~SETFL_MASK) | (flags & SETFL_MASK);
        atomic_store(&d->flags, now);
        if ((now & O_DIRECT) && !atomic_load(&d->kernel_offset)) {
            /* O_DIRECT's alignment rules are the kernel's to judge */
            tdm_real.lseek(fd, d->offset, SEEK_SET);
            atomic_store(&d->kernel_offset, true);
            tdm_stats_reason(d->inode->stats, TDM_R_O_DIRECT);
        }
    }
    tdm_desc_unlock(d, cs);
    errno = e;
    return r;
}

/* record locks: l_whence SEEK_CUR means the description's offset */
static int lock_call(struct tdm_desc *d, int fd, int cmd, void *arg)
{
    int cs = tdm_desc_lock(d);
    int r = -1;
    if (atomic_load(&d->kernel_offset) ||
        tdm_real.lseek(fd, d->offset, SEEK_SET) >= 0) {
        r = tdm_real.fcntl(fd, cmd, arg);
    }
    tdm_desc_unlock(d, cs);
    return r;
}

int tdm_fcntl(int fd, int cmd, void *arg)
{
    struct tdm_desc *d;
    int r;
    switch (cmd) {
    case F_DUPFD:
    case F_DUPFD_CLOEXEC:
        d = tdm_fd_get(fd);
        return copied(d, tdm_real.fcntl(fd, cmd, arg), cmd == F_DUPFD_CLOEXEC);
    case F_SETFD:
        r = tdm_real.fcntl(fd, cmd, arg);
        if (r == 0) {
            tdm_fd_set_cloexec(fd, (long)arg & FD_CLOEXEC);
        }
        return r;
    case F_SETFL:
    case F_GETLK:
    case F_SETLK:
    case F_SETLKW:
    case F_OFD_GETLK:
    case F_OFD_SETLK:
    case F_OFD_SETLKW:
        if (!(d = tdm_fd_get(fd))) {
            return tdm_real.fcntl(fd, cmd, arg);
        }
        r = cmd == F_SETFL ? setfl(d, fd, (int)(long)arg)
                           : lock_call(d, fd, cmd, arg);
        tdm_desc_release(d);
        return r;
    }
    return tdm_real.fcntl(fd, cmd, arg);
}

int tdm_close_range(unsigned first, unsigned last, int flags)
{
    int r = tdm_real.close_range(first, last, flags);
    if (r == 0) {
        int e = errno;
        if (flags & CLOSE_RANGE_CLOEXEC) {
            tdm_fd_cloexec_range(first, last);
        } else {
            tdm_fd_clear_range(first, last);
        }
        errno = e;
    }
    return r;
}

void tdm_closefrom(int lowfd)
{
    tdm_real.closefrom(lowfd);
    int e = errno;
    if (lowfd >= 0) {
        tdm_fd_clear_range((unsigned)lowfd, ~0u);
    }
    errno = e;
}

/*
 * A stdio stream reads and writes through the kernel's offset (and
 * fclose closes the fd behind the layer): the description hands its
 * offset to the kernel for good and this fd is no longer tracked.
 */
FILE *tdm_fdopen(int fd, const char *mode)
{
    struct tdm_desc *d = tdm_fd_get(fd);
    if (d) {
        int e = errno;
        int cs = tdm_desc_lock(d);
        if (!atomic_load(&d->kernel_offset)) {
            tdm_real.lseek(fd, d->offset, SEEK_SET);
            atomic_store(&d->kernel_offset, true);
            tdm_stats_reason(d->inode->stats, TDM_R_SHARED_OFFSET);
        }
        tdm_desc_unlock(d, cs);
        tdm_fd_set(fd, NULL, false);
        tdm_desc_put(d);
        errno = e;
    }
    return tdm_real.fdopen(fd, mode);
}
