/*
 * The processes phase:
 *   fork     the child reads and writes through a description it shares
 *            with its parent (where the parent's reads left the offset),
 *            and the parent goes on from where the child left it
 *   busy     forks while a thread is in pread/pwrite on the same file (the
 *            layer's locks across fork); the child grows the file
 *   spawn    posix_spawn'd child reads from an inherited description
 *   shrink   the file truncated behind the layer (a raw syscall): reads
 *            past the new end (SIGBUS in the mapping) give what the
 *            kernel gives, a write past it extends the file again
 *   grow     the file extended behind the layer: a read at the old end
 *            sees the new data
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ops.h"
#include "tdm_ops.h"
#include "trace.h"

extern char **environ;

static int open_in(const struct run *run, const char *name, int flags)
{
    char path[4096];
    path_in(run, name, path, sizeof(path));
    return ops.openat(AT_FDCWD, path, flags, 0644);
}

static void fill(int fd, size_t size, uint64_t seed)
{
    struct rng rng = { seed };
    unsigned char buf[65536];
    for (size_t off = 0; off < size; off += sizeof(buf)) {
        rng_fill(&rng, buf, sizeof(buf));
        ops.pwrite(fd, buf, sizeof(buf), (off_t)off);
    }
}

static uint64_t hash_read(int fd, size_t n, long *r)
{
    unsigned char buf[8192] = { 0 };
    *r = ops.read(fd, buf, n < sizeof(buf) ? n : sizeof(buf));
    return hash_bytes(HASH_SEED, buf, sizeof(buf));
}

static void part_fork(const struct run *run)
{
    int fd = open_in(run, "p_fork", O_RDWR | O_CREAT | O_TRUNC);
    fill(fd, 1 << 20, run->seed);
    long r;
    uint64_t h = hash_read(fd, 1000, &r);
    tr("fork parent read %ld %016llx", r, (unsigned long long)h);
    fflush(trace_out);
    pid_t pid = fork();
    if (pid == 0) {
        h = hash_read(fd, 500, &r);
        tr("fork child read %ld %016llx", r, (unsigned long long)h);
        tr("fork child pos %lld", (long long)ops.lseek(fd, 0, SEEK_CUR));
        tr("fork child write %ld", (long)ops.write(fd, "child", 5));
        tr("fork child pwrite %ld", (long)ops.pwrite(fd, "CHILD", 5, 3 << 20));
        fflush(trace_out);
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    /* the child's lines went to the same trace, numbered from its copy */
    trace_lines += 4;
    tr("fork child status %d", status);
    tr("fork parent pos %lld", (long long)ops.lseek(fd, 0, SEEK_CUR));
    h = hash_read(fd, 100, &r);
    tr("fork parent read %ld %016llx", r, (unsigned long long)h);
    unsigned char tail[5] = { 0 };
    r = ops.pread(fd, tail, 5, 3 << 20);
    tr("fork parent pread past the old end %ld %.5s", r, tail);
    tr("fork parent write %ld pos %lld", (long)ops.write(fd, "parent", 6),
       (long long)ops.lseek(fd, 0, SEEK_CUR));
    ops.close(fd);
}

struct busy {
    int fd;
    _Atomic bool stop;
};

/* page k of the busy file holds bytes k: the thread rewrites the same */
static void *busy_io(void *arg)
{
    struct busy *b = arg;
    unsigned char buf[4096];
    for (unsigned i = 0; !atomic_load(&b->stop); i++) {
        off_t off = (off_t)(i % 256) * 4096;
        if (i & 1) {
            memset(buf, (int)(off >> 12), sizeof(buf));
            ops.pwrite(b->fd, buf, sizeof(buf), off);
        } else {
            ops.pread(b->fd, buf, sizeof(buf), off);
        }
    }
    return NULL;
}

static void part_busy(const struct run *run)
{
    struct busy b = { .fd = open_in(run, "p_busy", O_RDWR | O_CREAT | O_TRUNC) };
    unsigned char page[4096];
    for (int k = 0; k < 256; k++) {
        memset(page, k, sizeof(page));
        ops.pwrite(b.fd, page, sizeof(page), (off_t)k * 4096);
    }
    pthread_t t;
    pthread_create(&t, NULL, busy_io, &b);
    int ok = 0;
    for (int i = 0; i < 8; i++) {
        fflush(trace_out);
        pid_t pid = fork();
        if (pid == 0) {
            /* the child's own calls on the file the thread was using */
            unsigned char buf[4096];
            int fd = open_in(run, "p_busy", O_RDWR);
            bool good = ops.pread(fd, buf, sizeof(buf), 8192) == sizeof(buf) &&
                        ops.pwrite(b.fd, buf, sizeof(buf), (2 << 20) + i * 4096) ==
                            sizeof(buf) &&
                        ops.ftruncate(fd, (3 << 20) + i) == 0 &&
                        ops.close(fd) == 0;
            _exit(good ? 0 : 1);
        }
        int status = -1;
        waitpid(pid, &status, 0);
        ok += status == 0;
    }
    atomic_store(&b.stop, true);
    pthread_join(t, NULL);
    struct stat st;
    fstat(b.fd, &st);
    unsigned char buf[4096];
    long r = ops.pread(b.fd, buf, sizeof(buf), (2 << 20) + 7 * 4096);
    tr("busy forks whose child did its calls: %d of 8; size %lld; pread %ld",
       ok, (long long)st.st_size, r);
    r = ops.pread(b.fd, buf, sizeof(buf), (3 << 20) + 4);
    tr("busy pread at the children's end %ld", r);
    ops.close(b.fd);
}

int child_read(int fd, long n)
{
    long r;
    uint64_t h = hash_read(fd, (size_t)n, &r);
    printf("child read %ld %016llx pos %lld\n", r, (unsigned long long)h,
           (long long)ops.lseek(fd, 0, SEEK_CUR));
    return 0;
}

static void part_spawn(const struct run *run)
{
    int fd = open_in(run, "p_spawn", O_RDWR | O_CREAT | O_TRUNC);
    fill(fd, 1 << 20, run->seed + 2);
    long r;
    uint64_t h = hash_read(fd, 777, &r);
    tr("spawn parent read %ld %016llx", r, (unsigned long long)h);
    int pipefd[2];
    char fdarg[16], line[256] = "";
    if (pipe(pipefd)) {
        tr("spawn: no pipe");
        return;
    }
    snprintf(fdarg, sizeof(fdarg), "%d", fd);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
    char *argv[] = { (char *)run->self, "--child-read", fdarg, "100", NULL };
    pid_t pid;
    int rc = ops.posix_spawn(&pid, run->self, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[1]);
    FILE *in = fdopen(pipefd[0], "r");
    if (rc == 0 && in && fgets(line, sizeof(line), in)) {
        line[strcspn(line, "\n")] = '\0';
    }
    if (in) {
        fclose(in);
    }
    int status = -1;
    if (rc == 0) {
        waitpid(pid, &status, 0);
    }
    tr("spawn rc %d status %d: %s", rc, status, line);
    tr("spawn parent pos %lld", (long long)ops.lseek(fd, 0, SEEK_CUR));
    ops.close(fd);
}

/* the raw syscalls: the layer never sees them */
static int raw_open(const struct run *run, const char *name)
{
    char path[4096];
    path_in(run, name, path, sizeof(path));
    return (int)syscall(SYS_openat, AT_FDCWD, path, O_RDWR);
}

static void part_shrink_grow(const struct run *run)
{
    int fd = open_in(run, "p_shrink", O_RDWR | O_CREAT | O_TRUNC);
    fill(fd, 1 << 20, run->seed + 3);
    unsigned char buf[4096];
    long r = ops.pread(fd, buf, sizeof(buf), 4096);
    tr("shrink pread before %ld %016llx", r,
       (unsigned long long)hash_bytes(HASH_SEED, buf, sizeof(buf)));
    int raw = raw_open(run, "p_shrink");
    tr("shrink raw ftruncate %ld", syscall(SYS_ftruncate, raw, 10000));
    memset(buf, 0, sizeof(buf));
    r = ops.pread(fd, buf, sizeof(buf), 500000);
    tr("shrink pread past the new end %ld", r);
    r = ops.pread(fd, buf, sizeof(buf), 8192);
    tr("shrink pread across the new end %ld %016llx", r,
       (unsigned long long)hash_bytes(HASH_SEED, buf, sizeof(buf)));
    memset(buf, 'w', sizeof(buf));
    r = ops.pwrite(fd, buf, sizeof(buf), 600000);
    struct stat st;
    fstat(fd, &st);
    tr("shrink pwrite past the new end %ld size %lld", r, (long long)st.st_size);
    /* now grown behind the layer */
    memset(buf, 'g', sizeof(buf));
    tr("grow raw pwrite %ld", syscall(SYS_pwrite64, raw, buf, sizeof(buf), 700000));
    memset(buf, 0, sizeof(buf));
    r = ops.pread(fd, buf, sizeof(buf), 698000);
    tr("grow pread at the old end %ld %016llx", r,
       (unsigned long long)hash_bytes(HASH_SEED, buf, sizeof(buf)));
    tr("grow lseek end %lld", (long long)ops.lseek(fd, 0, SEEK_END));
    close(raw);
    ops.close(fd);
}

void phase_procs(const struct run *run)
{
    part_fork(run);
    part_busy(run);
    part_spawn(run);
    part_shrink_grow(run);
}
