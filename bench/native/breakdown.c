/*
 * Per-miss breakdown for the native tool: MIO's samples (start timer value
 * and duration of every sample, per thread) joined with the trap's
 * per-miss records (misses.csv, CLOCK_MONOTONIC stage timestamps).
 *
 * A sample of one load that missed contains exactly the record whose
 * t_fault_ns lies in [start, end] on the same thread, so the breakdown is
 * exact per miss, without tracing:
 *
 *   start ........ t_fault ... t_decision_end ... t_unmapped ... t_wait_end
 *     delivery           model            unmap        nand_wait
 *   ... t_mapped ........ end
 *     map          resume
 *
 *   delivery          the load's fault until the handler started: kernel
 *                     fault path + uffd queueing + handler wake-up (poll),
 *                     or + the handler's next read (busy), or signal
 *                     delivery (sigbus); includes half a timer read
 *   model             handler start to the model's decision
 *   unmap             victims unmapped on the miss path (0 without)
 *   nand_wait         until the modeled NAND deadline
 *   map               UFFDIO_CONTINUE until it returned to the handler
 *   resume            the faulting thread running again and finishing the
 *                     load (uffd: wake-up + return from the fault; sigbus:
 *                     return from the handler + retry), plus the rest of
 *                     the timer read
 *
 * TSC samples are converted with a line fitted through two (TSC, CLOCK_
 * MONOTONIC) anchors taken before and after the run.  Each boundary is
 * clamped into [previous boundary, end] before differencing (a faulter
 * woken before UFFDIO_CONTINUE returned to the handler has t_mapped > end:
 * the row is flagged clipped), so the components always sum to the total.
 * Column names: the project's one vocabulary (bench/lib/components.py,
 * NATIVE_COMPONENTS).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../tests/csv_read.h"
#include "native.h"

const char *const native_bd_comp[NATIVE_BD_NCOMP] = {
    "delivery_ns", "model_ns", "unmap_ns", "nand_wait_ns", "map_ns",
    "resume_ns", "total_ns",
};

static inline uint64_t rdtsc_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
    uint32_t lo, hi;
    __asm__ __volatile__("lfence\n\trdtsc\n\tlfence"
                         : "=a"(lo), "=d"(hi) :: "memory");
    return ((uint64_t)hi << 32) | lo;
#else
    return 0;
#endif
}

static inline uint64_t mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The clock read bracketed by two TSC reads, paired with their midpoint;
 * the tightest of a few tries. */
void native_anchor(long double *tsc, long double *mono)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 16; i++) {
        uint64_t a = rdtsc_now();
        uint64_t m = mono_now();
        uint64_t b = rdtsc_now();
        if (b - a < best) {
            best = b - a;
            *tsc = ((long double)a + (long double)b) / 2;
            *mono = (long double)m;
        }
    }
}

uint64_t native_to_mono(const struct native_clock *c, uint64_t ticks)
{
    if (c->clock_timer) {
        return ticks;
    }
    long double v = c->mono0 + ((long double)ticks - c->tsc0) *
                    c->ns_per_tick;
    return v > 0 ? (uint64_t)llroundl(v) : 0;
}

uint64_t native_ticks_to_ns(const struct native_clock *c, uint64_t ticks)
{
    if (c->clock_timer) {
        return ticks;
    }
    return (uint64_t)llroundl((long double)ticks * c->ns_per_tick);
}

enum { R_TID, R_PAGE, R_WRITE, R_WAITED, R_NVICT, R_FAULT, R_DEND, R_UNMAP,
       R_WAITEND, R_MAPPED, R_NCOL };
static const char *const rec_cols[R_NCOL] = {
    "tid", "page", "write", "waited_loading", "nvictims", "t_fault_ns",
    "t_decision_end_ns", "t_unmapped_ns", "t_wait_end_ns", "t_mapped_ns",
};

struct rec {
    uint64_t v[R_NCOL];
};

static int cmp_rec(const void *a, const void *b)
{
    const struct rec *x = a, *y = b;
    if (x->v[R_TID] != y->v[R_TID]) {
        return x->v[R_TID] < y->v[R_TID] ? -1 : 1;
    }
    return x->v[R_FAULT] < y->v[R_FAULT] ? -1 : x->v[R_FAULT] > y->v[R_FAULT];
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Reads the record CSV; returns rows sorted by (tid, t_fault). */
static struct rec *read_records(const char *path, uint64_t *n)
{
    FILE *f = fopen(path, "r");
    *n = 0;
    if (!f) {
        fprintf(stderr, "cxlssd-native: open %s: %s\n", path,
                strerror(errno));
        return NULL;
    }
    char *line = NULL;
    size_t cap = 0;
    int idx[R_NCOL];
    if (getline(&line, &cap, f) < 0) {
        fclose(f);
        free(line);
        return calloc(1, sizeof(struct rec));   /* empty file: no rows */
    }
    csv_header_columns(line, rec_cols, R_NCOL, idx);
    for (int c = 0; c < R_NCOL; c++) {
        if (idx[c] < 0) {
            fprintf(stderr, "cxlssd-native: %s: no column %s\n", path,
                    rec_cols[c]);
            fclose(f);
            free(line);
            return NULL;
        }
    }
    size_t rcap = 1024, rn = 0;
    struct rec *r = malloc(rcap * sizeof(*r));
    while (r && getline(&line, &cap, f) > 0) {
        if (rn == rcap) {
            struct rec *nr = realloc(r, 2 * rcap * sizeof(*r));
            if (!nr) {
                free(r);
                r = NULL;
                break;
            }
            r = nr;
            rcap *= 2;
        }
        struct rec x;
        memset(&x, 0, sizeof(x));
        char *p = line;
        for (int c = 0; p; c++) {
            char *comma = strchr(p, ',');
            for (int k = 0; k < R_NCOL; k++) {
                if (idx[k] == c) {
                    x.v[k] = strtoull(p, NULL, 10);
                }
            }
            p = comma ? comma + 1 : NULL;
        }
        r[rn++] = x;
    }
    fclose(f);
    free(line);
    if (!r) {
        fprintf(stderr, "cxlssd-native: out of memory reading %s\n", path);
        return NULL;
    }
    qsort(r, rn, sizeof(*r), cmp_rec);
    *n = rn;
    return r;
}

struct row {
    uint64_t c[NATIVE_BD_NCOMP];
};

static uint64_t clamp(uint64_t v, uint64_t lo, uint64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static double pctl_sorted(const uint64_t *s, size_t n, double p)
{
    if (!n) {
        return NAN;
    }
    size_t k = (size_t)ceil(p / 100.0 * (double)n);
    if (k < 1) {
        k = 1;
    }
    return (double)s[k - 1];
}

static const double bd_pcts[] = { 50, 90, 99, 99.9 };
#define BD_NPCT (sizeof(bd_pcts) / sizeof(bd_pcts[0]))

static int cmp_row_total(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    uint64_t p = x->c[NATIVE_BD_NCOMP - 1], q = y->c[NATIVE_BD_NCOMP - 1];
    return p < q ? -1 : p > q;
}

static int write_percentiles(const char *path, struct row *rows, size_t n,
                             struct native_bd_result *out)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cxlssd-native: open %s: %s\n", path,
                strerror(errno));
        return -1;
    }
    fputs("kind,percentile,n", f);
    for (int c = 0; c < NATIVE_BD_NCOMP; c++) {
        fprintf(f, ",%s", native_bd_comp[c]);
    }
    fputc('\n', f);
    uint64_t *col = malloc((n ? n : 1) * sizeof(*col));
    if (!col) {
        fclose(f);
        return -1;
    }
    double marg[BD_NPCT][NATIVE_BD_NCOMP];
    for (int c = 0; c < NATIVE_BD_NCOMP; c++) {
        for (size_t i = 0; i < n; i++) {
            col[i] = rows[i].c[c];
        }
        qsort(col, n, sizeof(*col), cmp_u64);
        for (size_t p = 0; p < BD_NPCT; p++) {
            marg[p][c] = pctl_sorted(col, n, bd_pcts[p]);
        }
        out->p50[c] = marg[0][c];
        out->p99[c] = marg[2][c];
        out->p999[c] = marg[3][c];
    }
    free(col);
    for (size_t p = 0; p < BD_NPCT; p++) {
        fprintf(f, "marginal,%g,%zu", bd_pcts[p], n);
        for (int c = 0; c < NATIVE_BD_NCOMP; c++) {
            fprintf(f, ",%.0f", marg[p][c]);
        }
        fputc('\n', f);
    }
    /* at_total: mean of each component over the rows whose total ranks
     * within +-10% of the tail mass above P around the P-th percentile
     * (at least one row); these add up to the row's total (stacked bars). */
    qsort(rows, n, sizeof(*rows), cmp_row_total);
    for (size_t p = 0; p < BD_NPCT && n; p++) {
        double q = bd_pcts[p] / 100.0;
        size_t k = (size_t)ceil(q * (double)n);
        k = k ? k - 1 : 0;
        size_t w = (size_t)floor(0.1 * (1.0 - q) * (double)n);
        size_t lo = k > w ? k - w : 0, hi = k + w < n ? k + w : n - 1;
        double sum[NATIVE_BD_NCOMP] = { 0 };
        for (size_t i = lo; i <= hi; i++) {
            for (int c = 0; c < NATIVE_BD_NCOMP; c++) {
                sum[c] += (double)rows[i].c[c];
            }
        }
        fprintf(f, "at_total,%g,%zu", bd_pcts[p], hi - lo + 1);
        for (int c = 0; c < NATIVE_BD_NCOMP; c++) {
            fprintf(f, ",%.0f", sum[c] / (double)(hi - lo + 1));
        }
        fputc('\n', f);
    }
    int bad = ferror(f);
    if (fclose(f) || bad) {
        fprintf(stderr, "cxlssd-native: write %s failed\n", path);
        return -1;
    }
    return 0;
}

int native_breakdown(const struct native_bd_input *in, const char *dir,
                     struct native_bd_result *out)
{
    memset(out, 0, sizeof(*out));
    uint64_t nrec;
    struct rec *recs = read_records(in->records_csv, &nrec);
    if (!recs) {
        return -1;
    }
    out->records = nrec;
    char path[4096];
    snprintf(path, sizeof(path), "%s/breakdown.csv", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cxlssd-native: open %s: %s\n", path,
                strerror(errno));
        free(recs);
        return -1;
    }
    static char buf[1 << 16];
    setvbuf(f, buf, _IOFBF, sizeof(buf));
    fputs("thread,tid,sample,page,write,waited_loading,nvictims,"
          "t_start_ns,t_fault_ns,t_decision_end_ns,t_unmapped_ns,"
          "t_wait_end_ns,t_mapped_ns,t_end_ns,", f);
    for (int c = 0; c < NATIVE_BD_NCOMP; c++) {
        fprintf(f, "%s,", native_bd_comp[c]);
    }
    fputs("clipped\n", f);

    size_t cap = 1024;
    struct row *rows = malloc(cap * sizeof(*rows));
    if (!rows) {
        fclose(f);
        free(recs);
        return -1;
    }
    for (unsigned t = 0; t < in->threads; t++) {
        uint64_t tid = (uint64_t)(int64_t)in->tids[t];
        /* this thread's records: [r0, r1) in t_fault order */
        uint64_t r0 = 0;
        while (r0 < nrec && recs[r0].v[R_TID] < tid) {
            r0++;
        }
        uint64_t r1 = r0;
        while (r1 < nrec && recs[r1].v[R_TID] == tid) {
            r1++;
        }
        const uint64_t *st = in->starts + (size_t)t * in->samples;
        const uint64_t *du = in->durations + (size_t)t * in->samples;
        const uint64_t n = in->taken ? in->taken[t] : in->samples;
        if (!n) {
            continue;
        }
        uint64_t first = native_to_mono(&in->clk, st[0]);
        uint64_t last = native_to_mono(&in->clk, st[n - 1] + du[n - 1]);
        for (uint64_t r = r0; r < r1; r++) {
            out->records_in_window += recs[r].v[R_FAULT] >= first &&
                                      recs[r].v[R_FAULT] <= last;
        }
        uint64_t r = r0;
        for (uint64_t k = 0; k < n; k++) {
            uint64_t start = native_to_mono(&in->clk, st[k]);
            uint64_t end = native_to_mono(&in->clk, st[k] + du[k]);
            while (r < r1 && recs[r].v[R_FAULT] < start) {
                r++;
            }
            if (r >= r1 || recs[r].v[R_FAULT] > end) {
                out->unmatched_slow +=
                    native_ticks_to_ns(&in->clk, du[k]) >=
                    in->miss_threshold_ns;
                continue;
            }
            const struct rec *x = &recs[r];
            while (r < r1 && recs[r].v[R_FAULT] <= end) {
                r++;        /* further records in this sample: retries */
            }
            uint64_t mapped = x->v[R_MAPPED], waitend = x->v[R_WAITEND];
            uint64_t unmapped = x->v[R_UNMAP];
            if (unmapped && waitend && unmapped > waitend) {
                unmapped = 0;   /* unmapped after the wake: off the path */
            }
            uint64_t raw[6] = { start, x->v[R_FAULT], x->v[R_DEND], unmapped,
                                waitend, mapped };
            uint64_t b[7];
            bool clipped = false;
            b[0] = start;
            for (int i = 1; i < 6; i++) {
                uint64_t v = raw[i] ? raw[i] : b[i - 1];
                b[i] = clamp(v, b[i - 1], end);
                clipped |= raw[i] && b[i] != raw[i];
            }
            b[6] = end;
            struct row rw;
            uint64_t sum = 0;
            for (int c = 0; c < 6; c++) {
                rw.c[c] = b[c + 1] - b[c];
                sum += rw.c[c];
            }
            rw.c[6] = end - start;
            out->sum_errors += sum != rw.c[6];
            out->clipped += clipped;
            if (out->rows == cap) {
                struct row *nr = realloc(rows, 2 * cap * sizeof(*rows));
                if (!nr) {
                    break;
                }
                rows = nr;
                cap *= 2;
            }
            rows[out->rows++] = rw;
            fprintf(f, "%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                    ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%"
                    PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64,
                    t, tid, k, x->v[R_PAGE], x->v[R_WRITE], x->v[R_WAITED],
                    x->v[R_NVICT], start, x->v[R_FAULT], x->v[R_DEND],
                    x->v[R_UNMAP], waitend, mapped, end);
            for (int c = 0; c < NATIVE_BD_NCOMP; c++) {
                fprintf(f, ",%" PRIu64, rw.c[c]);
            }
            fprintf(f, ",%d\n", clipped);
        }
    }
    int bad = ferror(f);
    if (fclose(f) || bad) {
        fprintf(stderr, "cxlssd-native: write %s failed\n", path);
        free(rows);
        free(recs);
        return -1;
    }
    snprintf(path, sizeof(path), "%s/breakdown-percentiles.csv", dir);
    int rc = write_percentiles(path, rows, out->rows, out);
    free(rows);
    free(recs);
    return rc;
}
