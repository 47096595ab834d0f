/* The test's calls as the C library's (ops.h). */
#include <fcntl.h>
#include <unistd.h>

#include "ops.h"

static int do_openat(int dirfd, const char *path, int flags, mode_t mode)
{
    return openat(dirfd, path, flags, mode);
}

static int do_fcntl(int fd, int cmd, long arg)
{
    return fcntl(fd, cmd, arg);
}

const struct ops ops = {
    .name = "libc", .openat = do_openat, .creat = creat, .close = close,
    .read = read, .pread = pread, .readv = readv, .preadv = preadv,
    .write = write, .pwrite = pwrite, .writev = writev, .pwritev = pwritev,
    .lseek = lseek, .fsync = fsync, .fdatasync = fdatasync,
    .ftruncate = ftruncate, .dup = dup, .dup2 = dup2, .dup3 = dup3,
    .fcntl = do_fcntl, .posix_spawn = posix_spawn,
};

void ops_init(void)
{
}
