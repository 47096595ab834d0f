/*
 * Per-interval rows of the statistics (stats.h): intervals are aligned to
 * multiples of the interval on CLOCK_MONOTONIC (the clock of bpftrace's
 * nsecs in the same system), so every process's rows and a bpftrace
 * script's seconds share their boundaries.  The first call of a new
 * interval claims it (CAS on the index) and appends what each file
 * counted since the last row; the counters stay the per-file atomics, and
 * the only locks taken are the list's and the append's, once per
 * interval.  A call racing with the claim may land in the neighbouring
 * interval's row.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "stats.h"

const char tdm_stats_interval_header[] =
    "t_ns,interval_ns,pid,path,dev,inode,read_calls_served,"
    "read_calls_passed,read_bytes_served,read_bytes_passed,"
    "write_calls_served,write_calls_passed,write_bytes_served,"
    "write_bytes_passed,"
    "read_calls_le_512_bytes,read_calls_le_1024_bytes,"
    "read_calls_le_2048_bytes,read_calls_le_4096_bytes,"
    "read_calls_le_8192_bytes,read_calls_le_16384_bytes,"
    "read_calls_le_32768_bytes,read_calls_le_65536_bytes,"
    "read_calls_le_131072_bytes,read_calls_le_262144_bytes,"
    "read_calls_le_524288_bytes,read_calls_le_1048576_bytes,"
    "read_calls_gt_1048576_bytes,"
    "write_calls_le_512_bytes,write_calls_le_1024_bytes,"
    "write_calls_le_2048_bytes,write_calls_le_4096_bytes,"
    "write_calls_le_8192_bytes,write_calls_le_16384_bytes,"
    "write_calls_le_32768_bytes,write_calls_le_65536_bytes,"
    "write_calls_le_131072_bytes,write_calls_le_262144_bytes,"
    "write_calls_le_524288_bytes,write_calls_le_1048576_bytes,"
    "write_calls_gt_1048576_bytes";

/* the interval row's counters, in the header's order */
static const enum tdm_counter row_counters[] = {
    TDM_C_READ_CALLS_SERVED, TDM_C_READ_CALLS_PASSED,
    TDM_C_READ_BYTES_SERVED, TDM_C_READ_BYTES_PASSED,
    TDM_C_WRITE_CALLS_SERVED, TDM_C_WRITE_CALLS_PASSED,
    TDM_C_WRITE_BYTES_SERVED, TDM_C_WRITE_BYTES_PASSED,
};
#define NROW (sizeof(row_counters) / sizeof(row_counters[0]))

uint64_t tdm_stats_interval_ns;
_Atomic uint64_t tdm_stats_interval_cur;
static const char *path_template;

void tdm_stats_interval_start(uint64_t interval_ms, const char *template)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    path_template = template;
    tdm_stats_interval_ns = interval_ms * 1000000u;
    atomic_store(&tdm_stats_interval_cur,
                 ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) /
                     tdm_stats_interval_ns);
}

/*
 * A row: the path quoted (a name under PATH_MAX, files.c), its numbers of
 * at most 20 digits and a comma each, and the newline.  Rows are formatted
 * into a static buffer, under the list's lock, and never allocate: they
 * are written on the read/write path, and a forked child must not find an
 * allocator's lock taken by a thread it does not have (glibc's malloc
 * takes care of that; others, ASan's among them, do not).
 */
#define ROW_NUMBERS (5 + NROW + 2 * TDM_SIZE_BUCKETS)
#define ROW_MAX (2 * PATH_MAX + 3 + ROW_NUMBERS * 21 + 1)
static char rows[4 * ROW_MAX];

/* formats into rows at @len; the caller left ROW_MAX free */
__attribute__((format(printf, 2, 3)))
static void put(size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(rows + *len, sizeof(rows) - *len, fmt, ap);
    va_end(ap);
    *len += n > 0 ? (size_t)n : 0;
}

/* @f's row of what it counted since the last one, at rows + @len */
static void put_row(size_t *len, struct tdm_stats_file *f, uint64_t idx)
{
    uint64_t now[NROW], sizes[2][TDM_SIZE_BUCKETS], any = 0;
    for (size_t i = 0; i < NROW; i++) {
        now[i] = atomic_load(&f->c[row_counters[i]]);
        any |= now[i] - f->c_reported[row_counters[i]];
    }
    for (int w = 0; w < 2; w++) {
        for (int b = 0; b < TDM_SIZE_BUCKETS; b++) {
            sizes[w][b] = atomic_load(&f->sizes[w][b]);
            any |= sizes[w][b] - f->sizes_reported[w][b];
        }
    }
    if (!any) {
        return;
    }
    put(len, "%" PRIu64 ",%" PRIu64 ",%ld,", idx * tdm_stats_interval_ns,
        tdm_stats_interval_ns, (long)getpid());
    *len = (size_t)(tdm_stats_field(rows + *len, f->path) - rows);
    put(len, ",%ju,%ju", (uintmax_t)f->dev, (uintmax_t)f->ino);
    for (size_t i = 0; i < NROW; i++) {
        put(len, ",%" PRIu64, now[i] - f->c_reported[row_counters[i]]);
        f->c_reported[row_counters[i]] = now[i];
    }
    for (int w = 0; w < 2; w++) {
        for (int b = 0; b < TDM_SIZE_BUCKETS; b++) {
            put(len, ",%" PRIu64, sizes[w][b] - f->sizes_reported[w][b]);
            f->sizes_reported[w][b] = sizes[w][b];
        }
    }
    put(len, "\n");
}

/* appends the counts since the last rows, as interval @idx's */
static int write_interval(uint64_t idx)
{
    size_t len = 0;
    int rc = 0;
    for (struct tdm_stats_file *f = tdm_stats_lock(); f; f = f->next) {
        if (sizeof(rows) - len < ROW_MAX) {
            rc |= tdm_stats_append(path_template, tdm_stats_interval_header,
                                   rows, len);
            len = 0;
        }
        put_row(&len, f, idx);
    }
    if (len) {
        rc |= tdm_stats_append(path_template, tdm_stats_interval_header,
                               rows, len);
    }
    tdm_stats_unlock();
    return rc;
}

void tdm_stats_interval_next(uint64_t idx)
{
    uint64_t old = atomic_load(&tdm_stats_interval_cur);
    /* the first call past the interval claims it; the others count on */
    if (idx > old &&
        atomic_compare_exchange_strong(&tdm_stats_interval_cur, &old, idx)) {
        /* the call being counted may have failed: its errno stays */
        int saved = errno;
        write_interval(old);
        errno = saved;
    }
}

int tdm_stats_interval_flush(void)
{
    if (!tdm_stats_interval_ns) {
        return 0;
    }
    return write_interval(atomic_load(&tdm_stats_interval_cur));
}
