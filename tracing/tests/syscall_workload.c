/*
 * Known read/write system calls for tracing/tests/test_tdm_syscalls.sh:
 * every kind tdm-syscalls counts, on two files in DIR (one with a comma in
 * its name), through a dup'ed fd too, plus calls it must not count (a
 * pipe, a file opened before tracing: stdin).  Prints what it did as CSV
 * "path,syscall,size_le_bytes,calls,bytes" (one row per call, in order;
 * DIR must not hold a double quote),
 * the rows tdm-syscalls must report once summed over intervals and fds.
 *
 *   syscall_workload DIR
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static char buf[3 * 65536];
static const char *cur_path;

/* the power of two at or above @n (0 for 0, -1 for an error) */
static long size_le(long n)
{
    long p = 1;
    if (n <= 0) {
        return n < 0 ? -1 : 0;
    }
    while (p < n) {
        p *= 2;
    }
    return p;
}

static void done(const char *call, long ret)
{
    if (ret < 0 && errno != EBADF) {
        fprintf(stderr, "%s: %s\n", call, strerror(errno));
        exit(1);
    }
    const char *q = strchr(cur_path, ',') ? "\"" : "";
    printf("%s%s%s,%s,%ld,1,%ld\n", q, cur_path, q, call, size_le(ret),
           ret > 0 ? ret : 0);
}

static int open_in(const char *dir, const char *name, int flags, char *path,
                   size_t size)
{
    snprintf(path, size, "%s/%s", dir, name);
    int fd = openat(AT_FDCWD, path, flags, 0644);
    if (fd < 0) {
        perror(path);
        exit(1);
    }
    return fd;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: syscall_workload DIR\n");
        return 64;
    }
    char a[4096], b[4096];
    int fd = open_in(argv[1], "a.dat", O_RDWR | O_CREAT | O_TRUNC, a, sizeof(a));
    cur_path = a;
    memset(buf, 'x', sizeof(buf));
    for (int i = 0; i < 5; i++) {
        done("write", write(fd, buf, 8192));
    }
    done("pwrite64", pwrite(fd, buf, 1, 50000));
    struct iovec iov[3] = { { buf, 10 }, { buf + 10, 10 }, { buf + 20, 10 } };
    done("writev", writev(fd, iov, 3));
    done("pwritev", pwritev(fd, iov, 2, 100));
    done("pwritev2", pwritev2(fd, iov, 1, 200, 0));
    lseek(fd, 0, SEEK_SET);
    for (int i = 0; i < 3; i++) {
        done("read", read(fd, buf, 4096));
    }
    done("pread64", pread(fd, buf, 100, 0));
    done("pread64", pread(fd, buf, 100, 1 << 20));     /* past the end: 0 */
    struct iovec riov[2] = { { buf, 1000 }, { buf + 1000, 1000 } };
    done("readv", readv(fd, riov, 2));
    done("preadv", preadv(fd, riov, 1, 512));
    done("preadv2", preadv2(fd, riov, 2, 0, 0));
    int dupfd = dup(fd);
    done("read", read(dupfd, buf, 65536 + 1));
    int dup2fd = fcntl(fd, F_DUPFD_CLOEXEC, 100);
    done("pread64", pread(dup2fd, buf, 3000, 0));
    close(fd);
    close(dupfd);
    close(dup2fd);

    int wfd = open_in(argv[1], "b,1.dat", O_WRONLY | O_CREAT | O_TRUNC, b,
                      sizeof(b));
    cur_path = b;
    done("write", write(wfd, buf, 3 * 65536));
    done("read", read(wfd, buf, 10));                  /* EBADF: -1 */
    close(wfd);

    /* not counted: a pipe, and stdin (opened before) */
    int p[2];
    if (pipe(p) || write(p[1], "x", 1) != 1 || read(p[0], buf, 1) != 1) {
        perror("pipe");
        return 1;
    }
    if (read(0, buf, 0) < 0) {
        perror("stdin");
        return 1;
    }
    return 0;
}
