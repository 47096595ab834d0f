/*
 * The threads phase.  Each part's outcome is deterministic, so the traces
 * of the two runs compare:
 *   separate    4 threads, a description each, random calls on their own
 *               regions of one file; their calls traced in thread order
 *   tiling      4 threads read() one shared description to its end: the
 *               pieces they get are whole, and tile the file once
 *   append      4 threads write() records to one O_APPEND description:
 *               every record whole, once, in each thread's order
 *   shared      the same without O_APPEND: the shared offset hands each
 *               write its own place
 *   growing     a thread appends while 3 others pread near the end through
 *               their own descriptions: what they read is what was written
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ops.h"
#include "tdm_ops.h"
#include "trace.h"

#define THREADS 4
#define REGION (1024 * 1024)
#define WORD sizeof(uint64_t)

struct worker {
    const struct run *run;
    pthread_t tid;
    int id, fd;
    char *log;
    size_t loglen;
    FILE *out;
    uint64_t ok, count;
};

static int open_in(const struct run *run, const char *name, int flags)
{
    char path[4096];
    path_in(run, name, path, sizeof(path));
    return ops.openat(AT_FDCWD, path, flags, 0644);
}

static void *separate(void *arg)
{
    struct worker *w = arg;
    struct rng rng = { w->run->seed * 31 + (uint64_t)w->id };
    static _Thread_local unsigned char buf[65536];
    off_t base = (off_t)w->id * REGION;
    ops.lseek(w->fd, base, SEEK_SET);
    for (int i = 0; i < 300; i++) {
        size_t n = 1 + rng_below(&rng, sizeof(buf) - 1);
        off_t off = base + (off_t)rng_below(&rng, REGION - n);
        long r;
        switch (rng_below(&rng, 5)) {
        case 0:
            memset(buf, 0, n);
            r = ops.pread(w->fd, buf, n, off);
            fprintf(w->out, "pread %lld %zu -> %ld %016llx\n", (long long)off,
                    n, r, (unsigned long long)hash_bytes(HASH_SEED, buf, n));
            break;
        case 1:
            rng_fill(&rng, buf, n);
            r = ops.pwrite(w->fd, buf, n, off);
            fprintf(w->out, "pwrite %lld %zu -> %ld\n", (long long)off, n, r);
            break;
        case 2:
            r = ops.lseek(w->fd, off, SEEK_SET);
            fprintf(w->out, "lseek %lld -> %ld\n", (long long)off, r);
            break;
        case 3:
            /* the offset may be near the region's end: stay inside it */
            memset(buf, 0, n);
            r = ops.lseek(w->fd, 0, SEEK_CUR);
            if (r >= base && r + (long)n <= base + REGION) {
                r = ops.read(w->fd, buf, n);
            }
            fprintf(w->out, "read %zu -> %ld %016llx\n", n, r,
                    (unsigned long long)hash_bytes(HASH_SEED, buf, n));
            break;
        default:
            rng_fill(&rng, buf, n);
            r = ops.lseek(w->fd, 0, SEEK_CUR);
            if (r >= base && r + (long)n <= base + REGION) {
                r = ops.write(w->fd, buf, n);
            }
            fprintf(w->out, "write %zu -> %ld\n", n, r);
            break;
        }
    }
    return NULL;
}

/* every word of the file is its own offset */
static void *tiling(void *arg)
{
    struct worker *w = arg;
    struct rng rng = { (uint64_t)w->id };
    uint64_t buf[1024];
    w->ok = 1;
    for (;;) {
        size_t n = (1 + rng_below(&rng, 1024)) * WORD;
        long r = ops.read(w->fd, buf, n);
        if (r <= 0) {
            w->ok &= r == 0;
            return NULL;
        }
        if (r % (long)WORD || buf[0] % WORD) {
            w->ok = 0;
        }
        for (long i = 1; i < r / (long)WORD; i++) {
            w->ok &= buf[i] == buf[0] + (uint64_t)i * WORD;
        }
        /* the piece, for the tiling check: start and length */
        fprintf(w->out, "%llu %ld\n", (unsigned long long)buf[0], r);
    }
}

struct piece {
    uint64_t start;
    long len;
};

static int by_start(const void *a, const void *b)
{
    const struct piece *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* record: id, seq, length in words, then words seq ^ i */
static void *appender(void *arg)
{
    struct worker *w = arg;
    struct rng rng = { w->run->seed + 7 * (uint64_t)w->id };
    uint64_t rec[512];
    for (uint64_t seq = 0; seq < 200; seq++) {
        uint64_t words = 3 + rng_below(&rng, 500);
        rec[0] = (uint64_t)w->id;
        rec[1] = seq;
        rec[2] = words;
        for (uint64_t i = 3; i < words; i++) {
            rec[i] = seq ^ (i * 0x9e3779b97f4a7c15ull);
        }
        if (ops.write(w->fd, rec, words * WORD) != (long)(words * WORD)) {
            w->ok = 0;
        }
        w->count += words * WORD;
    }
    return NULL;
}

static bool check_records(int fd, off_t size, int threads)
{
    uint64_t next[THREADS] = { 0 }, hdr[3];
    off_t off = 0;
    uint64_t *rec = malloc(512 * WORD);
    bool ok = rec != NULL;
    while (ok && off < size) {
        ok = pread(fd, hdr, sizeof(hdr), off) == sizeof(hdr) &&
             hdr[0] < (uint64_t)threads && hdr[1] == next[hdr[0]] &&
             hdr[2] >= 3 && hdr[2] <= 512 &&
             pread(fd, rec, hdr[2] * WORD, off) == (ssize_t)(hdr[2] * WORD);
        for (uint64_t i = 3; ok && i < hdr[2]; i++) {
            ok = rec[i] == (hdr[1] ^ (i * 0x9e3779b97f4a7c15ull));
        }
        if (ok) {
            next[hdr[0]]++;
            off += (off_t)(hdr[2] * WORD);
        }
    }
    for (int t = 0; ok && t < threads; t++) {
        ok = next[t] == 200;
    }
    free(rec);
    return ok && off == size;
}

static void run_workers(struct worker *w, int n, void *(*fn)(void *))
{
    for (int i = 0; i < n; i++) {
        w[i].out = open_memstream(&w[i].log, &w[i].loglen);
        pthread_create(&w[i].tid, NULL, fn, &w[i]);
    }
    for (int i = 0; i < n; i++) {
        pthread_join(w[i].tid, NULL);
        fclose(w[i].out);
    }
}

static void free_logs(struct worker *w, int n)
{
    for (int i = 0; i < n; i++) {
        free(w[i].log);
        w[i].log = NULL;
    }
}

static void part_separate(const struct run *run)
{
    struct worker w[THREADS] = { 0 };
    int fd = open_in(run, "t_sep", O_RDWR | O_CREAT | O_TRUNC);
    ops.ftruncate(fd, THREADS * REGION);
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker) { .run = run, .id = i,
                                 .fd = open_in(run, "t_sep", O_RDWR) };
    }
    run_workers(w, THREADS, separate);
    for (int i = 0; i < THREADS; i++) {
        for (char *line = strtok(w[i].log, "\n"); line; line = strtok(NULL, "\n")) {
            tr("separate %d %s", i, line);
        }
        ops.close(w[i].fd);
    }
    free_logs(w, THREADS);
    ops.close(fd);
}

static void part_tiling(const struct run *run)
{
    enum { SIZE = 4 * 1024 * 1024 };
    int fd = open_in(run, "t_tile", O_RDWR | O_CREAT | O_TRUNC);
    uint64_t *words = malloc(SIZE);
    for (size_t i = 0; words && i < SIZE / WORD; i++) {
        words[i] = i * WORD;
    }
    bool ok = words && ops.write(fd, words, SIZE) == SIZE &&
              ops.lseek(fd, 0, SEEK_SET) == 0;
    free(words);
    struct worker w[THREADS] = { 0 };
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker) { .run = run, .id = i, .fd = fd };
    }
    run_workers(w, THREADS, tiling);
    size_t cap = SIZE / WORD, n = 0;
    struct piece *p = malloc(cap * sizeof(*p));
    ok = ok && p;
    for (int i = 0; ok && i < THREADS; i++) {
        ok = w[i].ok;
        FILE *in = fmemopen(w[i].log, w[i].loglen, "r");
        unsigned long long start;
        long len;
        while (in && n < cap && fscanf(in, "%llu %ld", &start, &len) == 2) {
            p[n++] = (struct piece) { start, len };
        }
        if (in) {
            fclose(in);
        }
    }
    uint64_t at = 0;
    if (ok) {
        qsort(p, n, sizeof(*p), by_start);
        for (size_t i = 0; ok && i < n; i++) {
            ok = p[i].start == at;
            at += (uint64_t)p[i].len;
        }
    }
    free(p);
    free_logs(w, THREADS);
    tr("tiling pieces whole and tiling the file once: %d (end %llu)", ok,
       (unsigned long long)at);
    ops.close(fd);
}

static void part_records(const struct run *run, bool append)
{
    const char *name = append ? "t_append" : "t_shared";
    int fd = open_in(run, name, O_RDWR | O_CREAT | O_TRUNC |
                                    (append ? O_APPEND : 0));
    struct worker w[THREADS] = { 0 };
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker) { .run = run, .id = i, .fd = fd, .ok = 1 };
    }
    run_workers(w, THREADS, appender);
    uint64_t total = 0;
    bool ok = true;
    for (int i = 0; i < THREADS; i++) {
        total += w[i].count;
        ok &= w[i].ok;
    }
    struct stat st;
    fstat(fd, &st);
    off_t pos = ops.lseek(fd, 0, SEEK_CUR);
    ok = ok && st.st_size == (off_t)total && check_records(fd, st.st_size, THREADS);
    tr("%s records whole, once, in order: %d size=%lld pos=%lld", name, ok,
       (long long)st.st_size, (long long)pos);
    free_logs(w, THREADS);
    ops.close(fd);
}

struct growing {
    const struct run *run;
    _Atomic long end;
    _Atomic bool done;
    _Atomic long bad, reads;
};

/* byte i of the growing file is (i * 7) & 0xff */
static void *grow_reader(void *arg)
{
    struct growing *g = arg;
    int fd = open_in(g->run, "t_grow", O_RDONLY);
    unsigned char buf[8192];
    struct rng rng = { (uint64_t)fd };
    while (!atomic_load(&g->done)) {
        long end = atomic_load(&g->end);
        off_t off = end - (long)rng_below(&rng, 16384);
        off = off < 0 ? 0 : off;
        long r = ops.pread(fd, buf, sizeof(buf), off);
        atomic_fetch_add(&g->reads, 1);
        for (long i = 0; i < r; i++) {
            if (buf[i] != (unsigned char)(((uint64_t)off + (uint64_t)i) * 7)) {
                atomic_fetch_add(&g->bad, 1);
                break;
            }
        }
        long there = end - off < (long)sizeof(buf) ? end - off : (long)sizeof(buf);
        if (r < there) {
            atomic_fetch_add(&g->bad, 1);  /* shorter than what was there */
        }
    }
    ops.close(fd);
    return NULL;
}

static void part_growing(const struct run *run)
{
    int fd = open_in(run, "t_grow", O_RDWR | O_CREAT | O_TRUNC | O_APPEND);
    struct growing g = { .run = run };
    pthread_t readers[3];
    for (int i = 0; i < 3; i++) {
        pthread_create(&readers[i], NULL, grow_reader, &g);
    }
    unsigned char buf[3000];
    bool ok = true;
    for (long end = 0; end < 4 * 1024 * 1024;) {
        for (size_t i = 0; i < sizeof(buf); i++) {
            buf[i] = (unsigned char)(((uint64_t)end + i) * 7);
        }
        ok &= ops.write(fd, buf, sizeof(buf)) == (long)sizeof(buf);
        end += (long)sizeof(buf);
        atomic_store(&g.end, end);
    }
    atomic_store(&g.done, true);
    for (int i = 0; i < 3; i++) {
        pthread_join(readers[i], NULL);
    }
    tr("growing readers saw what the appender wrote: %d", ok && !g.bad);
    ops.close(fd);
}

void phase_threads(const struct run *run)
{
    part_separate(run);
    part_tiling(run);
    part_records(run, true);
    part_records(run, false);
    part_growing(run);
}
