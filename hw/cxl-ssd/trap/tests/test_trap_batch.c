/*
 * Trap engine, eviction=batch: the miss that finds the free frames below
 * the low watermark frees them up to the high one itself, on its own path
 * before its NAND wait, and the other misses evict nothing.
 *
 * One thread reads NPAGES pages in order over a FIFO cache of FRAMES
 * frames (watermarks 25% / 75%: batches of ~32 victims) with each delivery
 * that runs the miss on a thread of ours (sigbus: the faulter itself; poll:
 * the handler thread), then again at eviction=sync and background, which
 * must fail the batch checks (sync: one victim a miss; background: the
 * worker's victims are in no miss's record):
 *  - the data read back is right, through the registered view;
 *  - an eviction worker thread ("cxlssd-evict") exists only at background;
 *  - unmap calls are few: evicted pages / madvise calls >= 8;
 *  - the records say which miss paid: rows with nvictims >= 8 have
 *    t_unmapped_ns between t_decision_end_ns and t_wait_end_ns, and they
 *    are at most one in 8 rows.
 * The livelock of a batch run after the map (with prefetch 4 and two
 * threads writing, it evicted the page its miss had just mapped, and the
 * faulter's retry faulted again, for ever) is test_trap_sigbus's: its
 * data path runs every eviction, batch included.
 */
#include <dirent.h>

#include "trap_test.h"

#define NPAGES 512
#define FRAMES 64

/* Whether a thread of this process is named @name. */
static bool thread_named(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    bool found = false;
    struct dirent *de;
    while (d && !found && (de = readdir(d)) != NULL) {
        char path[300], comm[64] = "";
        if (de->d_name[0] == '.') {
            continue;
        }
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fgets(comm, sizeof(comm), f)) {
                comm[strcspn(comm, "\n")] = '\0';
            }
            fclose(f);
        }
        found = strcmp(comm, name) == 0;
    }
    if (d) {
        closedir(d);
    }
    return found;
}

/* The index of column @name in the CSV header @line, or -1. */
static int column(const char *line, const char *name)
{
    size_t n = strlen(name);
    int idx = 0;
    for (const char *c = line; *c; idx++) {
        if (strncmp(c, name, n) == 0 && (c[n] == ',' || c[n] == '\n' ||
                                         c[n] == '\0')) {
            return idx;
        }
        c = strchr(c, ',');
        if (!c) {
            break;
        }
        c++;
    }
    return -1;
}

static uint64_t field(const char *line, int idx)
{
    const char *c = line;
    for (int i = 0; i < idx && c; i++) {
        c = strchr(c, ',');
        c = c ? c + 1 : NULL;
    }
    return c ? strtoull(c, NULL, 10) : 0;
}

struct batch_rows {
    uint64_t rows, batches, batch_in_wait;
};

static struct batch_rows read_records(const char *path)
{
    struct batch_rows r = { 0 };
    FILE *f = fopen(path, "r");
    char line[2048];
    int nv = -1, tu = -1, td = -1, tw = -1;
    if (f && fgets(line, sizeof(line), f)) {
        nv = column(line, "nvictims");
        tu = column(line, "t_unmapped_ns");
        td = column(line, "t_decision_end_ns");
        tw = column(line, "t_wait_end_ns");
    }
    while (f && nv >= 0 && tu >= 0 && td >= 0 && tw >= 0 &&
           fgets(line, sizeof(line), f)) {
        r.rows++;
        if (field(line, nv) >= 8) {
            uint64_t u = field(line, tu);
            r.batches++;
            r.batch_in_wait += u >= field(line, td) && u <= field(line, tw);
        }
    }
    if (f) {
        fclose(f);
    }
    return r;
}

static void one(struct env *e, enum cxlssd_delivery d,
                enum cxlssd_eviction ev)
{
    char name[96], rec[96];
    snprintf(name, sizeof(name), "%s eviction=%s", cxlssd_delivery_name(d),
             cxlssd_eviction_name(ev));
    snprintf(rec, sizeof(rec), "/tmp/cxlssd-trap-batch-%d.csv",
             (int)getpid());
    struct cxlssd_config mc;
    test_model_config(&mc, NPAGES, FRAMES);
    mc.policy = CXLSSD_POLICY_FIFO;
    mc.eviction = ev;
    mc.evict_low_pct = 25;
    mc.evict_high_pct = 75;
    struct cxlssd_model *m = test_model(&mc);
    if (!m) {
        tap_ok(0, "%s: model", name);
        return;
    }
    uint64_t seed = 0xba7c + (uint64_t)d * 3 + ev;
    fill_pattern(e->b, NPAGES, seed);
    struct cxlssd_trap *t = recorded_trap_new(m, e, d, rec, name);
    if (!t) {
        return;
    }
    uint64_t bad = 0;
    for (int pass = 0; pass < 2; pass++) {
        bad += check_pages(e->a, NPAGES, seed);
    }
    bool worker = thread_named("cxlssd-evict");
    struct cxlssd_stats s;
    struct cxlssd_trap_stats ts;
    finish_trap(t, m, &s, &ts);
    struct batch_rows r = read_records(rec);
    unlink(rec);
    cxlssd_model_free(m);

    uint64_t evicted = s.evictions_clean + s.evictions_dirty;
    bool batched = ts.madvise_calls > 0 &&
                   evicted >= 8 * ts.madvise_calls &&
                   r.batches > 0 && r.batch_in_wait == r.batches &&
                   8 * r.batches <= r.rows;
    bool want = ev == CXLSSD_EVICTION_BATCH;
    tap_ok(bad == 0 && worker == (ev == CXLSSD_EVICTION_BACKGROUND) &&
       evicted > NPAGES && batched == want,
       "%s: %s; mismatches=%llu worker=%d evicted=%llu madvise_calls=%llu "
       "record rows=%llu, of them with >= 8 victims %llu (%llu unmapped "
       "between decision and wait end)", name,
       want ? "victims freed in batches by the misses"
            : "no miss frees a batch (batch checks fail)",
       (unsigned long long)bad, worker, (unsigned long long)evicted,
       (unsigned long long)ts.madvise_calls, (unsigned long long)r.rows,
       (unsigned long long)r.batches, (unsigned long long)r.batch_in_wait);
}

int main(void)
{
    struct env e;
    test_start(&e, NPAGES, 120);
    struct cxlssd_config c;
    char err[256] = "";
    cxlssd_config_defaults(&c, NPAGES * PG);
    tap_ok(cxlssd_config_set(&c, "eviction", "batch", err, sizeof(err)) == 0 &&
       c.eviction == CXLSSD_EVICTION_BATCH &&
       strcmp(cxlssd_eviction_name(CXLSSD_EVICTION_BATCH), "batch") == 0,
       "eviction=batch parses and is named batch %s", err);
    const enum cxlssd_delivery ds[] = { CXLSSD_DELIVERY_SIGBUS,
                                        CXLSSD_DELIVERY_POLL };
    for (size_t i = 0; i < sizeof(ds) / sizeof(ds[0]); i++) {
        one(&e, ds[i], CXLSSD_EVICTION_BATCH);
        one(&e, ds[i], CXLSSD_EVICTION_SYNC);
        one(&e, ds[i], CXLSSD_EVICTION_BACKGROUND);
    }
    env_close(&e);
    return tap_done();
}
