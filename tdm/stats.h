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
#include <sys/types.h>

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

struct tdm_stats_file {
    dev_t dev;
    ino_t ino;
    char *path;
    _Atomic uint64_t c[TDM_C_COUNT];
    _Atomic unsigned reasons;
    _Atomic int map;
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

/* a read or write call's outcome: @ret is its return value */
void tdm_stats_io(struct tdm_stats_file *f, int write, int served,
                  ssize_t ret);

/* zero every counter: a forked child counts only its own calls */
void tdm_stats_reset(void);

/*
 * Appends the rows to @path_template ("%p" = pid); @flush names the flush
 * instruction in use.  Returns 0 or -1 (errno).
 */
int tdm_stats_write(const char *path_template, const char *flush);

/* the CSV's header row, without the newline */
extern const char tdm_stats_header[];

#endif
