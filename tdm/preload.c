/*
 * The LD_PRELOAD library's exports: the C library's names, each handing
 * its call to the layer (tdm.h), or straight to libc where the layer is
 * off or this thread is already inside it.  The 64 names are the same
 * calls on a 64-bit system; the _chk names are what _FORTIFY_SOURCE
 * builds call.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "real.h"
#include "tdm.h"

_Static_assert(sizeof(off_t) == 8, "the layer needs a 64-bit off_t");

#define EXPORT __attribute__((visibility("default")))

#define NEEDS_MODE(flags) \
    (((flags) & O_CREAT) || ((flags) & O_TMPFILE) == O_TMPFILE)

__attribute__((constructor)) static void tdm_start(void)
{
    tdm_init();
}

__attribute__((destructor)) static void tdm_end(void)
{
    tdm_write_stats();
}

/* RET NAME(ARGS): the layer's tdm_NAME(CALL), else libc's REAL(CALL) */
#define WRAP(ret, name, real, args, call)          \
    EXPORT ret name args                            \
    {                                               \
        if (!tdm_enter()) {                         \
            return tdm_real.real call;              \
        }                                           \
        ret r_ = tdm_##real call;                   \
        tdm_leave();                                \
        return r_;                                  \
    }

static int open_common(int dirfd, const char *path, int flags, mode_t mode)
{
    if (!tdm_enter()) {
        return tdm_real.openat(dirfd, path, flags, mode);
    }
    int fd = tdm_openat(dirfd, path, flags, mode);
    tdm_leave();
    return fd;
}

#define OPEN_MODE(flags, mode)              \
    mode_t mode = 0;                        \
    if (NEEDS_MODE(flags)) {                \
        va_list ap;                         \
        va_start(ap, flags);                \
        mode = va_arg(ap, mode_t);          \
        va_end(ap);                         \
    }

EXPORT int open(const char *path, int flags, ...)
{
    OPEN_MODE(flags, mode);
    return open_common(AT_FDCWD, path, flags, mode);
}

EXPORT int open64(const char *path, int flags, ...)
{
    OPEN_MODE(flags, mode);
    return open_common(AT_FDCWD, path, flags, mode);
}

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
    OPEN_MODE(flags, mode);
    return open_common(dirfd, path, flags, mode);
}

EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
    OPEN_MODE(flags, mode);
    return open_common(dirfd, path, flags, mode);
}

EXPORT int creat(const char *path, mode_t mode)
{
    return open_common(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

EXPORT int creat64(const char *path, mode_t mode)
{
    return open_common(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

/* fortified open without a mode: O_CREAT there is a bug glibc reports */
void __chk_fail(void) __attribute__((noreturn));

static int open_2(int dirfd, const char *path, int flags)
{
    if (NEEDS_MODE(flags)) {
        __chk_fail();
    }
    return open_common(dirfd, path, flags, 0);
}

EXPORT int __open_2(const char *path, int flags)
{
    return open_2(AT_FDCWD, path, flags);
}

EXPORT int __open64_2(const char *path, int flags)
{
    return open_2(AT_FDCWD, path, flags);
}

EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
    return open_2(dirfd, path, flags);
}

EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
    return open_2(dirfd, path, flags);
}

WRAP(int, close, close, (int fd), (fd))
WRAP(ssize_t, read, read, (int fd, void *buf, size_t n), (fd, buf, n))
WRAP(ssize_t, pread, pread, (int fd, void *buf, size_t n, off_t off),
     (fd, buf, n, off))
WRAP(ssize_t, pread64, pread, (int fd, void *buf, size_t n, off_t off),
     (fd, buf, n, off))
WRAP(ssize_t, readv, readv, (int fd, const struct iovec *iov, int cnt),
     (fd, iov, cnt))
WRAP(ssize_t, preadv, preadv,
     (int fd, const struct iovec *iov, int cnt, off_t off),
     (fd, iov, cnt, off))
WRAP(ssize_t, preadv64, preadv,
     (int fd, const struct iovec *iov, int cnt, off_t off),
     (fd, iov, cnt, off))
WRAP(ssize_t, preadv2, preadv2,
     (int fd, const struct iovec *iov, int cnt, off_t off, int flags),
     (fd, iov, cnt, off, flags))
WRAP(ssize_t, preadv64v2, preadv2,
     (int fd, const struct iovec *iov, int cnt, off_t off, int flags),
     (fd, iov, cnt, off, flags))
WRAP(ssize_t, write, write, (int fd, const void *buf, size_t n), (fd, buf, n))
WRAP(ssize_t, pwrite, pwrite, (int fd, const void *buf, size_t n, off_t off),
     (fd, buf, n, off))
WRAP(ssize_t, pwrite64, pwrite,
     (int fd, const void *buf, size_t n, off_t off), (fd, buf, n, off))
WRAP(ssize_t, writev, writev, (int fd, const struct iovec *iov, int cnt),
     (fd, iov, cnt))
WRAP(ssize_t, pwritev, pwritev,
     (int fd, const struct iovec *iov, int cnt, off_t off),
     (fd, iov, cnt, off))
WRAP(ssize_t, pwritev64, pwritev,
     (int fd, const struct iovec *iov, int cnt, off_t off),
     (fd, iov, cnt, off))
WRAP(ssize_t, pwritev2, pwritev2,
     (int fd, const struct iovec *iov, int cnt, off_t off, int flags),
     (fd, iov, cnt, off, flags))
WRAP(ssize_t, pwritev64v2, pwritev2,
     (int fd, const struct iovec *iov, int cnt, off_t off, int flags),
     (fd, iov, cnt, off, flags))
WRAP(off_t, lseek, lseek, (int fd, off_t off, int whence), (fd, off, whence))
WRAP(off_t, lseek64, lseek, (int fd, off_t off, int whence),
     (fd, off, whence))
WRAP(int, fsync, fsync, (int fd), (fd))
WRAP(int, fdatasync, fdatasync, (int fd), (fd))
WRAP(int, ftruncate, ftruncate, (int fd, off_t len), (fd, len))
WRAP(int, ftruncate64, ftruncate, (int fd, off_t len), (fd, len))
WRAP(int, truncate, truncate, (const char *path, off_t len), (path, len))
WRAP(int, truncate64, truncate, (const char *path, off_t len), (path, len))
WRAP(int, fallocate, fallocate, (int fd, int mode, off_t off, off_t len),
     (fd, mode, off, len))
WRAP(int, fallocate64, fallocate, (int fd, int mode, off_t off, off_t len),
     (fd, mode, off, len))
WRAP(int, posix_fallocate, posix_fallocate, (int fd, off_t off, off_t len),
     (fd, off, len))
WRAP(int, posix_fallocate64, posix_fallocate, (int fd, off_t off, off_t len),
     (fd, off, len))
WRAP(int, dup, dup, (int fd), (fd))
WRAP(int, dup2, dup2, (int fd, int newfd), (fd, newfd))
WRAP(int, dup3, dup3, (int fd, int newfd, int flags), (fd, newfd, flags))
WRAP(int, close_range, close_range, (unsigned first, unsigned last, int flags),
     (first, last, flags))
WRAP(FILE *, fdopen, fdopen, (int fd, const char *mode), (fd, mode))
WRAP(void *, mmap, mmap,
     (void *addr, size_t len, int prot, int flags, int fd, off_t off),
     (addr, len, prot, flags, fd, off))
WRAP(void *, mmap64, mmap,
     (void *addr, size_t len, int prot, int flags, int fd, off_t off),
     (addr, len, prot, flags, fd, off))
WRAP(ssize_t, sendfile, sendfile, (int out, int in, off_t *off, size_t n),
     (out, in, off, n))
WRAP(ssize_t, sendfile64, sendfile, (int out, int in, off_t *off, size_t n),
     (out, in, off, n))
WRAP(ssize_t, copy_file_range, copy_file_range,
     (int in, off_t *in_off, int out, off_t *out_off, size_t n,
      unsigned flags), (in, in_off, out, out_off, n, flags))
WRAP(ssize_t, splice, splice,
     (int in, off_t *in_off, int out, off_t *out_off, size_t n,
      unsigned flags), (in, in_off, out, out_off, n, flags))
WRAP(int, sigaction, sigaction,
     (int sig, const struct sigaction *act, struct sigaction *old),
     (sig, act, old))
WRAP(sighandler_t, signal, signal, (int sig, sighandler_t handler),
     (sig, handler))

EXPORT void closefrom(int lowfd)
{
    if (!tdm_enter()) {
        tdm_real.closefrom(lowfd);
        return;
    }
    tdm_closefrom(lowfd);
    tdm_leave();
}

static int fcntl_common(int fd, int cmd, void *arg)
{
    if (!tdm_enter()) {
        return tdm_real.fcntl(fd, cmd, arg);
    }
    int r = tdm_fcntl(fd, cmd, arg);
    tdm_leave();
    return r;
}

EXPORT int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return fcntl_common(fd, cmd, arg);
}

EXPORT int fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    return fcntl_common(fd, cmd, arg);
}

EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
    if (n > buflen) {
        __chk_fail();
    }
    return read(fd, buf, n);
}

EXPORT ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off,
                           size_t buflen)
{
    if (n > buflen) {
        __chk_fail();
    }
    return pread(fd, buf, n, off);
}

EXPORT ssize_t __pread64_chk(int fd, void *buf, size_t n, off_t off,
                             size_t buflen)
{
    if (n > buflen) {
        __chk_fail();
    }
    return pread(fd, buf, n, off);
}
