/*
 * The random phase: a seeded sequence of opens (every access mode, O_CREAT,
 * O_TRUNC, O_APPEND, O_EXCL, O_CLOEXEC, O_DIRECT, O_SYNC, O_PATH; through
 * a directory fd or a path), dups of every kind, reads and writes of every
 * flavour at random sizes and offsets (past the end, past the layer's
 * mapping, negative), lseek with every whence, ftruncate shrinking and
 * growing, fsync, fcntl flags, and calls on bad fds.  Each call's result
 * goes to the trace.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ops.h"
#include "tdm_ops.h"
#include "trace.h"

#define MiB (1024l * 1024)
#define MAX_FDS 12
#define GUARD 32

static const char *const names[] = { "f0", "f1", "f2", "nx/f" };

struct state {
    const struct run *run;
    struct rng rng;
    int fds[MAX_FDS];
    int nfds;
    unsigned char *buf;     /* reads and writes, up to BUF_MAX + GUARD */
};

#define BUF_MAX (3 * MiB)

static uint64_t below(struct state *s, uint64_t n)
{
    return rng_below(&s->rng, n);
}

static size_t rand_len(struct state *s)
{
    uint64_t u = below(s, 100);
    if (u < 5) {
        return 0;
    }
    if (u < 30) {
        return 1 + below(s, 64);
    }
    if (u < 70) {
        return 1 + below(s, 8192);
    }
    if (u < 97) {
        return 1 + below(s, 256 * 1024);
    }
    return 1 + below(s, BUF_MAX);
}

static off_t size_of(int fd)
{
    struct stat st;
    return fstat(fd, &st) ? 0 : st.st_size;
}

/* in the file, past its end, past the layer's 64 MiB mapping, negative */
static off_t rand_off(struct state *s, int fd)
{
    off_t size = size_of(fd);
    uint64_t u = below(s, 100);
    if (u < 3) {
        return -(off_t)(1 + below(s, 100));
    }
    if (u < 6) {
        return 64 * MiB - 8192 + (off_t)below(s, 72 * MiB);
    }
    if (u < 85) {
        return (off_t)below(s, (uint64_t)(size + size / 4 + 8193));
    }
    return size + (off_t)below(s, MiB);
}

/* a pool fd, or now and then one that is not open */
static int pick_fd(struct state *s)
{
    if (!s->nfds || below(s, 100) < 4) {
        return 900 + (int)below(s, 50);
    }
    return s->fds[below(s, (uint64_t)s->nfds)];
}

static void pool_add(struct state *s, int fd)
{
    for (int i = 0; i < s->nfds; i++) {
        if (s->fds[i] == fd) {
            return;
        }
    }
    if (s->nfds < MAX_FDS) {
        s->fds[s->nfds++] = fd;
    }
}

static void pool_remove(struct state *s, int fd)
{
    for (int i = 0; i < s->nfds; i++) {
        if (s->fds[i] == fd) {
            s->fds[i] = s->fds[--s->nfds];
            return;
        }
    }
}

static void do_open(struct state *s)
{
    static const int acc[] = { O_RDONLY, O_WRONLY, O_RDWR, O_RDWR, O_RDWR };
    int flags = acc[below(s, 5)];
    if (below(s, 10) < 7) {
        flags |= O_CREAT;
        if (below(s, 100) < 5) {
            flags |= O_EXCL;
        }
    }
    /* each flag with its chance in percent, drawn in this order */
    static const struct { int flag; unsigned pct; } extra[] = {
        { O_TRUNC, 4 }, { O_APPEND, 15 }, { O_CLOEXEC, 30 }, { O_DIRECT, 3 },
    };
    for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
        if (below(s, 100) < extra[i].pct) {
            flags |= extra[i].flag;
        }
    }
    if (below(s, 100) < 4) {
        flags |= below(s, 2) ? O_SYNC : O_DSYNC;
    }
    if (below(s, 100) < 2) {
        flags = O_PATH;
    }
    const char *name = names[below(s, 100) < 8 ? 3 : below(s, 3)];
    char path[4096], res[64];
    int fd;
    bool via_dir = below(s, 2);
    if (below(s, 100) < 5) {
        path_in(s->run, name, path, sizeof(path));
        fd = ops.creat(path, 0644);
        tr("creat %s %s", name, result(fd, errno, res, sizeof(res)));
    } else {
        if (via_dir) {
            snprintf(path, sizeof(path), "%s", name);
        } else {
            path_in(s->run, name, path, sizeof(path));
        }
        fd = ops.openat(via_dir ? s->run->dirfd : AT_FDCWD, path, flags, 0644);
        tr("open %s flags=%#x dirfd=%d %s", name, flags, via_dir,
           result(fd, errno, res, sizeof(res)));
    }
    if (fd >= 0) {
        pool_add(s, fd);
    }
}

static void do_close(struct state *s)
{
    int fd = pick_fd(s);
    char res[64];
    int r = ops.close(fd);
    tr("close %d %s", fd, result(r, errno, res, sizeof(res)));
    if (r == 0) {
        pool_remove(s, fd);
    }
}

static void do_dup(struct state *s)
{
    int fd = pick_fd(s), r, kind = (int)below(s, 5);
    int target = below(s, 2) && s->nfds ? s->fds[below(s, (uint64_t)s->nfds)]
                                        : 40 + (int)below(s, 8);
    char res[64];
    if (s->nfds >= MAX_FDS && kind != 1 && kind != 2) {
        kind = 1;  /* onto a pool fd: the pool does not grow */
        target = s->nfds ? s->fds[0] : target;
    }
    switch (kind) {
    case 0:
        r = ops.dup(fd);
        break;
    case 1:
        r = ops.dup2(fd, target);
        break;
    case 2:
        r = ops.dup3(fd, below(s, 8) ? target : fd, below(s, 2) ? O_CLOEXEC : 0);
        break;
    case 3:
        r = ops.fcntl(fd, F_DUPFD, 30);
        break;
    default:
        r = ops.fcntl(fd, F_DUPFD_CLOEXEC, 30);
        break;
    }
    tr("dup%d %d %d %s", kind, fd, target, result(r, errno, res, sizeof(res)));
    if (r >= 0) {
        pool_add(s, r);
    }
}

static void trace_read(const char *what, int fd, size_t n, off_t off, long r,
                       int err, const unsigned char *buf, size_t span)
{
    char res[64];
    tr("%s %d n=%zu off=%lld %s hash=%016llx", what, fd, n, (long long)off,
       result(r, err, res, sizeof(res)),
       (unsigned long long)hash_bytes(HASH_SEED, buf, span));
}

/* up to 5 buffers in s->buf with a guard after each; @n the total */
static int make_iov(struct state *s, struct iovec *iov, size_t n)
{
    int cnt = 1 + (int)below(s, 5);
    unsigned char *p = s->buf;
    for (int i = 0; i < cnt; i++) {
        size_t len = i == cnt - 1 ? n : below(s, n + 1);
        iov[i] = (struct iovec) { p, len };
        p += len + GUARD;
        n -= len;
    }
    return cnt;
}

/* @kind 0..3: read, pread, readv, preadv, or with @write the writes */
static long rw_call(int kind, bool write, int fd, unsigned char *buf,
                    size_t n, const struct iovec *iov, int cnt, off_t off)
{
    switch (kind) {
    case 0:
        return write ? ops.write(fd, buf, n) : ops.read(fd, buf, n);
    case 1:
        return write ? ops.pwrite(fd, buf, n, off)
                     : ops.pread(fd, buf, n, off);
    case 2:
        return write ? ops.writev(fd, iov, cnt) : ops.readv(fd, iov, cnt);
    default:
        return write ? ops.pwritev(fd, iov, cnt, off)
                     : ops.preadv(fd, iov, cnt, off);
    }
}

/* One read or write call (rw_call) at a random fd, length and offset:
 * what a read finds is hashed into the trace, a write writes random
 * bytes. */
static void do_rw(struct state *s, int kind, bool write)
{
    int fd = pick_fd(s);
    size_t n = rand_len(s);
    off_t off = kind & 1 ? rand_off(s, fd) : 0;
    struct iovec iov[5];
    int cnt = kind >= 2 ? make_iov(s, iov, n) : 0;
    size_t span = n + (size_t)(cnt ? cnt : 1) * GUARD;
    if (write) {
        rng_fill(&s->rng, s->buf, span);
    } else {
        memset(s->buf, 0xa5, span);
    }
    long r = rw_call(kind, write, fd, s->buf, n, iov, cnt, off);
    static const char *const what[2][4] = {
        { "read", "pread", "readv", "preadv" },
        { "write", "pwrite", "writev", "pwritev" },
    };
    if (!write) {
        trace_read(what[0][kind], fd, n, off, r, errno, s->buf, span);
        return;
    }
    char res[64];
    tr("%s %d n=%zu off=%lld %s", what[1][kind], fd, n, (long long)off,
       result(r, errno, res, sizeof(res)));
}

static void do_lseek(struct state *s)
{
    int fd = pick_fd(s);
    static const int whences[] = { SEEK_SET, SEEK_CUR, SEEK_END, SEEK_DATA,
                                   SEEK_HOLE, 7 };
    int whence = whences[below(s, 6)];
    if (!s->run->seek_holes && (whence == SEEK_DATA || whence == SEEK_HOLE)) {
        whence = SEEK_END;
    }
    off_t off = whence == SEEK_SET || whence == SEEK_DATA || whence == SEEK_HOLE
                    ? rand_off(s, fd)
                    : (off_t)below(s, 2 * MiB) - MiB;
    bool huge = below(s, 100) < 3;
    if (huge) {
        off = INT64_MAX - (off_t)below(s, 10);
    }
    char res[64];
    off_t r = ops.lseek(fd, off, whence);
    tr("lseek %d %lld whence=%d %s", fd, (long long)off, whence,
       result(r, errno, res, sizeof(res)));
    if (huge && r > 0) {
        /* where tmpfs allows it: back, before a write there makes an
         * exabyte file the final check cannot read */
        r = ops.lseek(fd, 0, SEEK_SET);
        tr("lseek back %d %s", fd, result(r, errno, res, sizeof(res)));
    }
}

static void do_truncate(struct state *s)
{
    int fd = pick_fd(s);
    off_t size = size_of(fd);
    off_t len = below(s, 100) < 4 ? -1 : (off_t)below(s, (uint64_t)(size + size / 2 + 4097));
    char res[64];
    int r = ops.ftruncate(fd, len);
    tr("ftruncate %d %lld %s", fd, (long long)len,
       result(r, errno, res, sizeof(res)));
}

static void do_misc(struct state *s)
{
    int fd = pick_fd(s), r;
    char res[64];
    struct stat st;
    switch (below(s, 7)) {
    case 0:
        r = below(s, 2) ? ops.fsync(fd) : ops.fdatasync(fd);
        tr("fsync %d %s", fd, result(r, errno, res, sizeof(res)));
        break;
    case 1:
        r = ops.fcntl(fd, F_GETFL, 0);
        tr("getfl %d %s", fd, result(r, errno, res, sizeof(res)));
        break;
    case 2: {
        int fl = ops.fcntl(fd, F_GETFL, 0);
        long want = fl < 0 ? O_APPEND : (fl ^ O_APPEND) | (below(s, 8) ? 0 : O_NONBLOCK);
        r = ops.fcntl(fd, F_SETFL, want);
        tr("setfl %d %#lx %s", fd, want, result(r, errno, res, sizeof(res)));
        break;
    }
    case 3:
        r = ops.fcntl(fd, F_SETFD, below(s, 2) ? FD_CLOEXEC : 0);
        tr("setfd %d %s", fd, result(r, errno, res, sizeof(res)));
        r = ops.fcntl(fd, F_GETFD, 0);
        tr("getfd %d %s", fd, result(r, errno, res, sizeof(res)));
        break;
    case 4:
        r = fstat(fd, &st);
        tr("fstat %d %s size=%lld", fd, result(r, errno, res, sizeof(res)),
           r ? -1ll : (long long)st.st_size);
        break;
    default: {
        off_t pos = ops.lseek(fd, 0, SEEK_CUR);
        tr("pos %d %s", fd, result(pos, errno, res, sizeof(res)));
        break;
    }
    }
}

void phase_random(const struct run *run)
{
    struct state s = { .run = run, .rng = { run->seed } };
    if (!(s.buf = malloc(BUF_MAX + 6 * GUARD))) {
        tr("random: no memory");
        return;
    }
    for (unsigned i = 0; i < run->calls; i++) {
        uint64_t u = below(&s, 100);
        if (u < 7 && s.nfds < MAX_FDS) {
            do_open(&s);
        } else if (u < 11 || (u < 7 && s.nfds >= MAX_FDS)) {
            do_close(&s);
        } else if (u < 15) {
            do_dup(&s);
        } else if (u < 45) {
            do_rw(&s, (int)below(&s, 4), false);
        } else if (u < 72) {
            do_rw(&s, (int)below(&s, 4), true);
        } else if (u < 82) {
            do_lseek(&s);
        } else if (u < 85) {
            do_truncate(&s);
        } else {
            do_misc(&s);
        }
    }
    for (int i = 0; i < s.nfds; i++) {
        char res[64];
        int r = ops.close(s.fds[i]);
        tr("close %d %s", s.fds[i], result(r, errno, res, sizeof(res)));
    }
    free(s.buf);
}

void phase_seek(const struct run *run)
{
    char path[4096], res[64];
    path_in(run, "s_dense", path, sizeof(path));
    int fd = ops.openat(AT_FDCWD, path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    struct state s = { .run = run, .rng = { run->seed + 11 } };
    static unsigned char buf[65536];
    for (int i = 0; i < 40; i++) {
        rng_fill(&s.rng, buf, sizeof(buf));
        ops.write(fd, buf, sizeof(buf) - (i == 39 ? 1000 : 0));
    }
    for (int i = 0; i < 60; i++) {
        int whence = below(&s, 2) ? SEEK_DATA : SEEK_HOLE;
        off_t off = (off_t)below(&s, 3 * MiB) - 8192;
        off_t r = ops.lseek(fd, off, whence);
        tr("seek %lld whence=%d %s", (long long)off, whence,
           result(r, errno, res, sizeof(res)));
        long n = ops.read(fd, buf, 100);
        tr("seek read %s %016llx", result(n, errno, res, sizeof(res)),
           (unsigned long long)hash_bytes(HASH_SEED, buf, n > 0 ? (size_t)n : 0));
    }
    ops.close(fd);
}
