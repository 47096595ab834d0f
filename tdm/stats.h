/*
 * Per-file counters, kept for the process's life (a file closed and
 * opened again adds to the same row), written at exit to TDM_STATS as CSV
 * (README "Statistics"): one row per file, appended under an flock so the
 * processes of one run (forks, children that inherit LD_PRELOAD) can share
 * one file; a process that tracked no file writes nothing.
 */
#ifndef TDM_STATS_H
#define TDM_STATS_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

enum tdm_counter {
    TDM_C_OPEN_CALLS,
    TDM_C_READ_CALLS_SERVED,
    TDM_C_READ_CALLS_PASSED,
    TDM_C_READ_BYTES_SERVED,
    TDM_C_READ_BYTES_PASSED,
    TDM_C_WRITE_CALLS_SERVED,
    TDM_C_WRITE_CALLS_PASSED,
    TDM_C_WRITE_BYTES_SERVED,
    TDM_C_WRITE_BYTES_PASSED,
    TDM_C_FSYNC_CALLS_SERVED,
    TDM_C_FSYNC_CALLS_PASSED,
    TDM_C_MAP_CALLS,
    TDM_C_EOF_FSTAT_CALLS,
    TDM_C_SIGBUS_RECOVERIES,
    TDM_C_HOT_REGIONS,
    TDM_C_COUNT
};

/* how the file is mapped (the last state seen) */
enum tdm_map_kind {
    TDM_MAP_UNKNOWN,    /* not mapped yet: opened write-only so far */
    TDM_MAP_SYNC,       /* MAP_SHARED_VALIDATE | MAP_SYNC: a DAX file */
    TDM_MAP_SHARED,     /* plain MAP_SHARED (TDM_ALLOW_NONDAX=1) */
    TDM_MAP_NONE,       /* cannot be mapped: every call passes through */
};

/* why calls on the file passed through; a set, printed joined by '|' */
enum tdm_reason {
    TDM_R_NOT_DAX = 1u << 0,        /* mmap refused MAP_SYNC */
    TDM_R_MMAP_FAILED = 1u << 1,    /* mmap failed otherwise */
    TDM_R_O_DIRECT = 1u << 2,
    TDM_R_WRITE_ONLY = 1u << 3,     /* a write-only description */
    TDM_R_POLICY = 1u << 4,         /* TDM_POLICY did not choose the range */
    TDM_R_EXTEND = 1u << 5,         /* a write past the end (or O_APPEND) */
    TDM_R_SHARED_OFFSET = 1u << 6,  /* offset shared with another process */
    TDM_R_SYNC_WRITE = 1u << 7,     /* O_SYNC/O_DSYNC without MAP_SYNC */
    TDM_R_ARGS = 1u << 8,           /* arguments the kernel must judge */
};

/*
 * Read and write calls by the bytes they moved (the return value; 0 and
 * errors in the first): <= 512, <= 1 KiB, ... <= 1 MiB, > 1 MiB.
 */
#define TDM_SIZE_MIN_SHIFT 9
#define TDM_SIZE_BUCKETS 13

struct tdm_stats_file {
    dev_t dev;
    ino_t ino;
    char *path;
    _Atomic uint64_t c[TDM_C_COUNT];
    _Atomic uint64_t sizes[2][TDM_SIZE_BUCKETS];    /* [write][bucket] */
    _Atomic unsigned reasons;
    _Atomic int map;
    /* what the last interval row counted (stats_interval.c, under the
     * list's lock) */
    uint64_t c_reported[TDM_C_COUNT];
    uint64_t sizes_reported[2][TDM_SIZE_BUCKETS];
    struct tdm_stats_file *next;
};

/* the row of (@dev, @ino, @path), made on first use; NULL without memory */
struct tdm_stats_file *tdm_stats_file(dev_t dev, ino_t ino, const char *path);

static inline void tdm_stats_add(struct tdm_stats_file *f, enum tdm_counter c,
                                 uint64_t v)
{
    atomic_fetch_add_explicit(&f->c[c], v, memory_order_relaxed);
}

static inline void tdm_stats_reason(struct tdm_stats_file *f, unsigned r)
{
    if (!(atomic_load_explicit(&f->reasons, memory_order_relaxed) & r)) {
        atomic_fetch_or_explicit(&f->reasons, r, memory_order_relaxed);
    }
}

/* the size bucket of a call that returned @ret */
unsigned tdm_stats_size_bucket(ssize_t ret);

/* a read or write call's outcome: @ret is its return value */
void tdm_stats_io(struct tdm_stats_file *f, int write, int served,
                  ssize_t ret);

/* zero every counter: a forked child counts only its own calls */
void tdm_stats_reset(void);

/* the list of rows, under its lock */
struct tdm_stats_file *tdm_stats_lock(void);
void tdm_stats_unlock(void);

/*
 * The list's lock and the one appends take, held across fork by proc.c:
 * a child never finds them taken by a thread it does not have, nor a
 * statistics file's flock held by a description it inherited.
 */
void tdm_stats_lock_all(void);
void tdm_stats_unlock_all(void);

/*
 * @s as a CSV field at @dst, quoted where it holds a comma, a quote or a
 * line break: at most 2 * strlen(@s) + 2 bytes and a NUL.  Returns the
 * NUL's address.  No allocation: interval rows are written on the
 * read/write path.
 */
char *tdm_stats_field(char *dst, const char *s);

/*
 * Appends @len bytes of @rows to @path_template ("%p" = pid) under an
 * flock, @header (without its newline) first when the file is empty.
 * Returns 0 or -1 (errno).
 */
int tdm_stats_append(const char *path_template, const char *header,
                     const char *rows, size_t len);

/*
 * Per-interval rows (stats_interval.c, README "Statistics"): from now on
 * each read/write call checks the CLOCK_MONOTONIC interval of
 * @interval_ms it falls in, and the first call of a new interval appends
 * the previous one's counts to @path_template (no thread of its own, no
 * lock on the calls' path but that append's).
 */
void tdm_stats_interval_start(uint64_t interval_ms, const char *path_template);

/* the interval in ns (0: off), the index of the one being counted */
extern uint64_t tdm_stats_interval_ns;
extern _Atomic uint64_t tdm_stats_interval_cur;

/* a call in interval @idx, past the one being counted */
void tdm_stats_interval_next(uint64_t idx);

static inline void tdm_stats_interval_tick(void)
{
    if (tdm_stats_interval_ns) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t idx = ((uint64_t)ts.tv_sec * 1000000000u +
                        (uint64_t)ts.tv_nsec) / tdm_stats_interval_ns;
        if (idx != atomic_load_explicit(&tdm_stats_interval_cur,
                                        memory_order_relaxed)) {
            tdm_stats_interval_next(idx);
        }
    }
}

/* appends the current interval's counts (at exit and before exec) */
int tdm_stats_interval_flush(void);

/* the interval CSV's header row, without the newline */
extern const char tdm_stats_interval_header[];

/*
 * Appends the rows to @path_template ("%p" = pid); @flush names the flush
 * instruction in use.  Returns 0 or -1 (errno).
 */
int tdm_stats_write(const char *path_template, const char *flush);

/* the CSV's header row, without the newline */
extern const char tdm_stats_header[];

#endif
