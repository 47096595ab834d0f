/*
 * The calls the test programs make, through one table: ops_libc.c gives
 * the C library's names (which LD_PRELOAD=libtdm.so turns into the
 * layer's), ops_engine.c the layer's entry points linked in directly (the
 * sanitizer builds).  Every other call (fstat, the trace's stdio) is the
 * C library's in both.
 */
#ifndef TDM_TEST_OPS_H
#define TDM_TEST_OPS_H

#include <spawn.h>
#include <sys/types.h>
#include <sys/uio.h>

struct ops {
    const char *name;
    int (*openat)(int dirfd, const char *path, int flags, mode_t mode);
    int (*creat)(const char *path, mode_t mode);
    int (*close)(int fd);
    ssize_t (*read)(int fd, void *buf, size_t n);
    ssize_t (*pread)(int fd, void *buf, size_t n, off_t off);
    ssize_t (*readv)(int fd, const struct iovec *iov, int cnt);
    ssize_t (*preadv)(int fd, const struct iovec *iov, int cnt, off_t off);
    ssize_t (*write)(int fd, const void *buf, size_t n);
    ssize_t (*pwrite)(int fd, const void *buf, size_t n, off_t off);
    ssize_t (*writev)(int fd, const struct iovec *iov, int cnt);
    ssize_t (*pwritev)(int fd, const struct iovec *iov, int cnt, off_t off);
    off_t (*lseek)(int fd, off_t off, int whence);
    int (*fsync)(int fd);
    int (*fdatasync)(int fd);
    int (*ftruncate)(int fd, off_t len);
    int (*dup)(int fd);
    int (*dup2)(int fd, int newfd);
    int (*dup3)(int fd, int newfd, int flags);
    int (*fcntl)(int fd, int cmd, long arg);
    int (*posix_spawn)(pid_t *pid, const char *path,
                       const posix_spawn_file_actions_t *fa,
                       const posix_spawnattr_t *attr, char *const argv[],
                       char *const envp[]);
};

extern const struct ops ops;

/* before the first call (the engine reads its settings) */
void ops_init(void);

#endif
