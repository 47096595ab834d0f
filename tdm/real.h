/*
 * The calls the layer wraps, as the next library provides them: libc under
 * LD_PRELOAD (real_next.c, dlsym(RTLD_NEXT)), or libc itself where the
 * engine is linked into a program directly (real_direct.c: the sanitizer
 * tests).  The engine never calls a wrapped name directly: inside the
 * preloaded library that name is the wrapper itself.
 */
#ifndef TDM_REAL_H
#define TDM_REAL_H

#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>

struct tdm_real {
    int (*openat)(int dirfd, const char *path, int flags, ...);
    int (*close)(int fd);
    ssize_t (*read)(int fd, void *buf, size_t n);
    ssize_t (*pread)(int fd, void *buf, size_t n, off_t off);
    ssize_t (*readv)(int fd, const struct iovec *iov, int cnt);
    ssize_t (*preadv)(int fd, const struct iovec *iov, int cnt, off_t off);
    ssize_t (*preadv2)(int fd, const struct iovec *iov, int cnt, off_t off,
                       int flags);
    ssize_t (*write)(int fd, const void *buf, size_t n);
    ssize_t (*pwrite)(int fd, const void *buf, size_t n, off_t off);
    ssize_t (*writev)(int fd, const struct iovec *iov, int cnt);
    ssize_t (*pwritev)(int fd, const struct iovec *iov, int cnt, off_t off);
    ssize_t (*pwritev2)(int fd, const struct iovec *iov, int cnt, off_t off,
                        int flags);
    off_t (*lseek)(int fd, off_t off, int whence);
    int (*fsync)(int fd);
    int (*fdatasync)(int fd);
    int (*ftruncate)(int fd, off_t len);
    int (*truncate)(const char *path, off_t len);
    int (*fallocate)(int fd, int mode, off_t off, off_t len);
    int (*posix_fallocate)(int fd, off_t off, off_t len);
    int (*dup)(int fd);
    int (*dup2)(int fd, int newfd);
    int (*dup3)(int fd, int newfd, int flags);
    int (*fcntl)(int fd, int cmd, ...);
    int (*close_range)(unsigned first, unsigned last, int flags);
    void (*closefrom)(int lowfd);
    FILE *(*fdopen)(int fd, const char *mode);
    void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd,
                  off_t off);
    ssize_t (*sendfile)(int out, int in, off_t *off, size_t n);
    ssize_t (*copy_file_range)(int in, off_t *in_off, int out, off_t *out_off,
                               size_t n, unsigned flags);
    ssize_t (*splice)(int in, off_t *in_off, int out, off_t *out_off,
                      size_t n, unsigned flags);
    int (*execve)(const char *path, char *const argv[], char *const envp[]);
    int (*execv)(const char *path, char *const argv[]);
    int (*execvp)(const char *file, char *const argv[]);
    int (*execvpe)(const char *file, char *const argv[], char *const envp[]);
    int (*fexecve)(int fd, char *const argv[], char *const envp[]);
    int (*posix_spawn)(pid_t *pid, const char *path,
                       const posix_spawn_file_actions_t *fa,
                       const posix_spawnattr_t *attr, char *const argv[],
                       char *const envp[]);
    int (*posix_spawnp)(pid_t *pid, const char *file,
                        const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *attr, char *const argv[],
                        char *const envp[]);
    int (*system)(const char *cmd);
    FILE *(*popen)(const char *cmd, const char *type);
    int (*sigaction)(int sig, const struct sigaction *act,
                     struct sigaction *old);
    sighandler_t (*signal)(int sig, sighandler_t handler);
};

extern struct tdm_real tdm_real;

/* Fills tdm_real; a call it cannot find ends the process with a message. */
void tdm_real_init(void);

#endif
