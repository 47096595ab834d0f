/*
 * crash-writer: the guest side of the crash test (bench/crash/README.md).
 * Verifies a record log (crash_record.h) against the number of records the
 * host saw acknowledged, then appends records to it, acknowledging each
 * only once its flush has returned, until killed, full or out of time.
 *
 *   crash-writer STREAM KIND PATH ACKED [--size BYTES] [--seconds S]
 *                [--ack-ms MS] [--rounds-left R] [--verify-only]
 *
 * KIND says how a record is made durable:
 *   fsync    PATH is a file on a DAX filesystem: write(2) with O_APPEND,
 *            then fsync(2)
 *   pwrite   PATH is a file on a DAX filesystem, preallocated to --size
 *            (posix_fallocate, fsync): pwrite(2) of the record in place,
 *            then fdatasync(2) (odd records) or fsync(2) (even ones); the
 *            log is read back with pread(2).  Ordinary calls only, so an
 *            LD_PRELOAD layer can serve them (tdm/README.md)
 *   mapsync  PATH is a file on a DAX filesystem, preallocated to --size and
 *            mapped MAP_SHARED_VALIDATE | MAP_SYNC: memcpy, then libpmem's
 *            pmem_persist()
 *   devdax   PATH is a devdax device (--size: bytes of it to use, default
 *            all): memcpy, then a cache-line flush (clwb, clflushopt or
 *            clflush, whichever the CPU has) of every line and sfence
 *   pmemobj  PATH is a PMDK libpmemobj pool (created with --size if
 *            missing): one object per record, added in a transaction
 *            (crash_pmemobj.c)
 *
 * Output, one line each (the host reads them off the console):
 *   crash_verify stream= kind= acked= valid= whole= lost= torn= foreign=
 *            (lost, torn: among the ACKED first records)
 *   crash_ack stream= seq=N      records 0..N-1 are durable (every --ack-ms)
 *   crash_done stream= records= bytes= reason=full|time|share|error
 *            (share: this run's 1/R of the room left, --rounds-left R,
 *            paced over --seconds: crash_pace.h)
 * Exit status: 0, 1 if records the host saw acknowledged were lost or torn,
 * 2 on usage or setup errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libpmem.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "crash_pace.h"
#include "crash_pmemobj.h"
#include "crash_record.h"

#define DEVDAX_ALIGN (2ull << 20)

enum kind { KIND_FSYNC, KIND_PWRITE, KIND_MAPSYNC, KIND_DEVDAX, KIND_PMEMOBJ,
            NKINDS };
static const char *const kind_names[] = { "fsync", "pwrite", "mapsync",
                                          "devdax", "pmemobj" };
/* what makes a record durable, for crash_done's flush= */
static const char *const kind_flush[] = { "fsync", "fdatasync_fsync",
                                          "pmem_persist", NULL, NULL };

struct writer {
    const char *stream, *path;
    enum kind kind;
    uint32_t id;
    uint64_t acked, size;
    double seconds, ack_s;
    unsigned rounds_left;       /* --rounds-left: pace (crash_pace.h) */
    bool verify_only;
    int fd;
    uint8_t *map;           /* the whole log: mapped (mapsync, devdax,
                             * fsync) or read (pwrite) */
};

static void die(const char *what)
{
    fprintf(stderr, "crash-writer: %s: %s\n", what, strerror(errno));
    exit(2);
}

/* A byte count with an optional K, M or G suffix. */
static uint64_t parse_size(const char *s)
{
    char *end;
    uint64_t v = strtoull(s, &end, 0);
    switch (*end) {
    case 'G': v <<= 10; /* fall through */
    case 'M': v <<= 10; /* fall through */
    case 'K': v <<= 10; end++; break;
    }
    if (end == s || *end) {
        fprintf(stderr, "crash-writer: bad size '%s'\n", s);
        exit(2);
    }
    return v;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- flushing a devdax mapping: the instruction the CPU has ---- */

static enum { FL_CLWB, FL_CLFLUSHOPT, FL_CLFLUSH } flush_insn;
static const char *const flush_names[] = { "clwb", "clflushopt", "clflush" };

static void flush_detect(void)
{
    unsigned a = 7, b, c = 0, d;
    __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
    flush_insn = b & (1u << 24) ? FL_CLWB :
                 b & (1u << 23) ? FL_CLFLUSHOPT : FL_CLFLUSH;
}

static void flush_range(const void *p, size_t len)
{
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)63, end = (uintptr_t)p + len;
    for (; a < end; a += 64) {
        char *line = (char *)a;
        switch (flush_insn) {
        case FL_CLWB:
            __asm__ volatile("clwb %0" : "+m"(*line));
            break;
        case FL_CLFLUSHOPT:
            __asm__ volatile("clflushopt %0" : "+m"(*line));
            break;
        case FL_CLFLUSH:
            __asm__ volatile("clflush %0" : "+m"(*line));
            break;
        }
    }
    __asm__ volatile("sfence" ::: "memory");
}

/* ---- opening the log ---- */

/* mapsync, pwrite: the file's blocks allocated (and their metadata
 * durable) to --size before the first record */
static void preallocate(struct writer *w, const struct stat *st)
{
    if (!w->size) {
        errno = EINVAL;
        die("mapsync and pwrite need --size");
    }
    if ((uint64_t)st->st_size >= w->size) {
        return;
    }
    int e = posix_fallocate(w->fd, 0, (off_t)w->size);
    if (e || fsync(w->fd) < 0) {
        errno = e ? e : errno;
        die("preallocating the log");
    }
}

/* pwrite: read the whole log with pread(2) */
static uint8_t *read_log(struct writer *w)
{
    uint8_t *buf = calloc(1, w->size);
    uint64_t off = 0;
    ssize_t r = 1;
    if (!buf) {
        die("allocating the log's copy");
    }
    while (off < w->size && r > 0) {
        uint64_t n = w->size - off < (1u << 20) ? w->size - off : 1u << 20;
        r = pread(w->fd, buf + off, n, (off_t)off);
        if (r < 0) {
            die("reading the log");
        }
        off += (uint64_t)r;
    }
    return buf;
}

static uint64_t devdax_size(const char *path)
{
    const char *name = strrchr(path, '/');
    char sys[128];
    unsigned long long v = 0;
    snprintf(sys, sizeof(sys), "/sys/bus/dax/devices/%s/size",
             name ? name + 1 : path);
    FILE *f = fopen(sys, "r");
    if (!f || fscanf(f, "%llu", &v) != 1) {
        die(sys);
    }
    fclose(f);
    return v;
}

static void open_log(struct writer *w)
{
    struct stat st;
    w->fd = open(w->path, O_RDWR | O_CREAT | (w->kind == KIND_FSYNC ?
                 O_APPEND : 0), 0644);
    if (w->fd < 0 || fstat(w->fd, &st) < 0) {
        die(w->path);
    }
    if (w->kind == KIND_DEVDAX) {
        uint64_t dev = devdax_size(w->path);
        w->size = w->size ? w->size : dev;
        w->size = (w->size + DEVDAX_ALIGN - 1) & ~(DEVDAX_ALIGN - 1);
        if (w->size > dev) {
            errno = ENOSPC;
            die("--size is larger than the devdax device");
        }
        w->map = mmap(NULL, w->size, PROT_READ | PROT_WRITE, MAP_SHARED,
                      w->fd, 0);
    } else if (w->kind == KIND_PWRITE) {
        preallocate(w, &st);
        w->map = read_log(w);
    } else if (w->kind == KIND_MAPSYNC) {
        /* a MAP_SYNC store into preallocated blocks never needs a later
         * fsync */
        preallocate(w, &st);
        w->map = mmap(NULL, w->size, PROT_READ | PROT_WRITE,
                      MAP_SHARED_VALIDATE | MAP_SYNC, w->fd, 0);
    } else {
        w->size = (uint64_t)st.st_size;
        w->map = w->size ? mmap(NULL, w->size, PROT_READ, MAP_SHARED,
                                w->fd, 0) : NULL;
    }
    if (w->map == MAP_FAILED) {
        die(w->kind == KIND_MAPSYNC ? "mmap MAP_SYNC (is it a DAX "
            "filesystem?)" : "mmap");
    }
}

/* ---- verify, then append ---- */

static int verify(struct writer *w, struct crash_scan *sc)
{
    crash_scan(w->map, w->size, w->id, UINT64_MAX, sc);
    struct crash_scan acked;
    crash_scan(w->map, w->size, w->id, w->acked, &acked);
    uint64_t lost = w->acked - acked.whole - acked.torn;
    printf("crash_verify stream=%s kind=%s acked=%" PRIu64 " valid=%" PRIu64
           " whole=%" PRIu64 " lost=%" PRIu64 " torn=%" PRIu64 " foreign=%"
           PRIu64 "\n", w->stream, kind_names[w->kind], w->acked,
           sc->valid, sc->whole, lost, acked.torn, acked.foreign);
    fflush(stdout);
    return lost || acked.torn ? 1 : 0;
}

/* Append one record at @off; false when the log is full. */
static bool append(struct writer *w, uint8_t *buf, uint64_t seq,
                   uint64_t *off)
{
    size_t rs = crash_rec_size(crash_rec_len(w->id, seq));
    crash_rec_build(buf, w->id, seq);
    if (w->kind != KIND_FSYNC && *off + rs > w->size) {
        return false;
    }
    switch (w->kind) {
    case KIND_FSYNC:
        if (write(w->fd, buf, rs) != (ssize_t)rs || fsync(w->fd) < 0) {
            die("write + fsync");
        }
        break;
    case KIND_PWRITE:
        if (pwrite(w->fd, buf, rs, (off_t)*off) != (ssize_t)rs ||
            (seq & 1 ? fdatasync(w->fd) : fsync(w->fd)) < 0) {
            die("pwrite + fdatasync/fsync");
        }
        break;
    case KIND_MAPSYNC:
        memcpy(w->map + *off, buf, rs);
        pmem_persist(w->map + *off, rs);
        break;
    default:
        memcpy(w->map + *off, buf, rs);
        flush_range(w->map + *off, rs);
    }
    *off += rs;
    return true;
}

static void write_log(struct writer *w, const struct crash_scan *sc)
{
    static uint8_t buf[sizeof(struct crash_rec_hdr) +
                       CRASH_REC_MAX_PAYLOAD + 8];
    uint64_t seq = sc->valid, off = sc->end_off, first = seq;
    double start = now_s(), last_ack = 0;
    const char *reason = "time";
    /* an fsync log grows with its file: no room to share */
    struct crash_pace pace = crash_pace_new(
        start, w->seconds, w->size > off ? w->size - off : 0,
        w->kind == KIND_FSYNC ? 0 : w->rounds_left);

    if (w->kind == KIND_FSYNC) {
        /* drop a torn or unacknowledged tail, then append after it */
        if (ftruncate(w->fd, (off_t)off) < 0 || fsync(w->fd) < 0) {
            die("truncating the log to its last whole record");
        }
        if (w->map) {
            munmap(w->map, w->size);
            w->map = NULL;
        }
    } else if (w->kind == KIND_PWRITE) {
        /* records go in by pwrite from here on; the copy was for verify */
        free(w->map);
        w->map = NULL;
    }
    for (;;) {
        double t = now_s();
        if (t - last_ack >= w->ack_s) {
            printf("crash_ack stream=%s seq=%" PRIu64 "\n", w->stream, seq);
            fflush(stdout);
            last_ack = t;
        }
        if (w->seconds > 0 && t - start >= w->seconds) {
            break;
        }
        if (!crash_pace_next(&pace, off - sc->end_off, t)) {
            reason = "share";
            break;
        }
        if (!append(w, buf, seq, &off)) {
            reason = "full";
            break;
        }
        seq++;
    }
    printf("crash_ack stream=%s seq=%" PRIu64 "\n", w->stream, seq);
    printf("crash_done stream=%s records=%" PRIu64 " bytes=%" PRIu64
           " reason=%s flush=%s\n", w->stream, seq - first, off - sc->end_off,
           reason, w->kind == KIND_DEVDAX ? flush_names[flush_insn] :
           kind_flush[w->kind]);
    fflush(stdout);
}

static void usage(void)
{
    fprintf(stderr, "usage: crash-writer STREAM "
            "fsync|pwrite|mapsync|devdax|pmemobj PATH ACKED [--size BYTES] "
            "[--seconds S] [--ack-ms MS] [--rounds-left R] [--verify-only]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    struct writer w = { .ack_s = 0.02 };
    struct crash_scan sc;
    int k;

    if (argc < 5) {
        usage();
    }
    w.stream = argv[1];
    w.path = argv[3];
    w.acked = parse_size(argv[4]);
    for (k = 0; k < NKINDS && strcmp(argv[2], kind_names[k]); k++) {
    }
    if (k == NKINDS) {
        usage();
    }
    w.kind = (enum kind)k;
    for (int i = 5; i < argc; i++) {
        if (!strcmp(argv[i], "--verify-only")) {
            w.verify_only = true;
        } else if (i + 1 < argc && !strcmp(argv[i], "--size")) {
            w.size = parse_size(argv[++i]);
        } else if (i + 1 < argc && !strcmp(argv[i], "--seconds")) {
            w.seconds = atof(argv[++i]);
        } else if (i + 1 < argc && !strcmp(argv[i], "--ack-ms")) {
            w.ack_s = atof(argv[++i]) / 1000;
        } else if (i + 1 < argc && !strcmp(argv[i], "--rounds-left")) {
            w.rounds_left = (unsigned)atoi(argv[++i]);
        } else {
            usage();
        }
    }
    if (w.kind == KIND_PMEMOBJ) {
        return crash_pmemobj_run(w.stream, w.path, w.size ? w.size : 64 << 20,
                                 w.acked, w.seconds, w.ack_s, w.rounds_left,
                                 w.verify_only);
    }
    w.id = crash_stream_id(w.stream);
    flush_detect();
    open_log(&w);
    int rc = verify(&w, &sc);
    if (!w.verify_only) {
        write_log(&w, &sc);
    }
    return rc;
}
