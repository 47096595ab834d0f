/*
 * The layer's entry points: one per wrapped call, with the call's own
 * arguments, return value and errno.  preload.c exports them under the
 * C library's names; the sanitizer tests call them directly.
 */
#ifndef TDM_TDM_H
#define TDM_TDM_H

#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>

/* reads the environment once; the first wrapped call does it too */
void tdm_init(void);

/*
 * Whether this call may go through the layer: it is on (TDM), and this
 * thread is not already inside it (a signal handler's call, say, goes
 * straight to libc).  Pair with tdm_leave().
 */
bool tdm_enter(void);
void tdm_leave(void);

/* at exit: the statistics (TDM_STATS) */
void tdm_write_stats(void);

int tdm_openat(int dirfd, const char *path, int flags, mode_t mode);
int tdm_close(int fd);
ssize_t tdm_read(int fd, void *buf, size_t n);
ssize_t tdm_pread(int fd, void *buf, size_t n, off_t off);
ssize_t tdm_readv(int fd, const struct iovec *iov, int cnt);
ssize_t tdm_preadv(int fd, const struct iovec *iov, int cnt, off_t off);
ssize_t tdm_preadv2(int fd, const struct iovec *iov, int cnt, off_t off,
                    int flags);
ssize_t tdm_write(int fd, const void *buf, size_t n);
ssize_t tdm_pwrite(int fd, const void *buf, size_t n, off_t off);
ssize_t tdm_writev(int fd, const struct iovec *iov, int cnt);
ssize_t tdm_pwritev(int fd, const struct iovec *iov, int cnt, off_t off);
ssize_t tdm_pwritev2(int fd, const struct iovec *iov, int cnt, off_t off,
                     int flags);
off_t tdm_lseek(int fd, off_t off, int whence);
int tdm_fsync(int fd);
int tdm_fdatasync(int fd);
int tdm_ftruncate(int fd, off_t len);
int tdm_truncate(const char *path, off_t len);
int tdm_fallocate(int fd, int mode, off_t off, off_t len);
int tdm_posix_fallocate(int fd, off_t off, off_t len);
int tdm_dup(int fd);
int tdm_dup2(int fd, int newfd);
int tdm_dup3(int fd, int newfd, int flags);
int tdm_fcntl(int fd, int cmd, void *arg);
int tdm_close_range(unsigned first, unsigned last, int flags);
void tdm_closefrom(int lowfd);
FILE *tdm_fdopen(int fd, const char *mode);
void *tdm_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
ssize_t tdm_sendfile(int out, int in, off_t *off, size_t n);
ssize_t tdm_copy_file_range(int in, off_t *in_off, int out, off_t *out_off,
                            size_t n, unsigned flags);
ssize_t tdm_splice(int in, off_t *in_off, int out, off_t *out_off, size_t n,
                   unsigned flags);

/*
 * Before exec: every offset the layer keeps is handed to the kernel, and
 * descriptions an exec'd image inherits (no FD_CLOEXEC) keep it there (the
 * image shares them, or, after vfork, the parent does).
 */
void tdm_before_exec(void);
/* before spawning a child (posix_spawn, system, popen): the same; with
 * file actions (@all) every description, since they may dup any fd */
void tdm_before_spawn(bool all);

/* SIGBUS's disposition as the app sees it (safecopy.h) */
int tdm_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
sighandler_t tdm_signal(int sig, sighandler_t handler);

#endif
