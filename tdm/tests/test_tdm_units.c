/*
 * The layer's parts on their own: the settings (every variable, good and
 * bad values, the messages), the flush instruction against the CPU's
 * flags in /proc/cpuinfo, the policies' decisions (recur's windows and
 * regions), the inode lock under contention, the fd table, the
 * statistics CSV (header, quoting, appending rows).  Built plain and
 * under ASan/UBSan and TSan.
 */
#include <inttypes.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "fdtable.h"
#include "persist.h"
#include "policy.h"
#include "real.h"
#include "rwlock.h"
#include "stats.h"
#include "tap.h"

static const char *const *env_table;

static const char *table_get(const char *name)
{
    for (const char *const *e = env_table; e && *e; e += 2) {
        if (!strcmp(e[0], name)) {
            return e[1];
        }
    }
    return NULL;
}

static int parse(const char *const *table, struct tdm_config *cfg, char *err,
                 size_t size)
{
    env_table = table;
    err[0] = '\0';
    return tdm_config_parse(cfg, table_get, err, size);
}

static void check_config(void)
{
    struct tdm_config c;
    char err[512];
    tap_ok(parse((const char *const[]) { NULL }, &c, err, sizeof(err)) == 0 &&
               c.enabled && c.policy == TDM_POLICY_ALL && !c.allow_nondax &&
               c.flush == TDM_FLUSH_REQ_AUTO && !c.stats_path &&
               c.recur_bytes == 64 * 1024 && c.recur_window_ms == 1000,
           "defaults: on, policy all, no test switch, flush auto, no stats");
    tap_ok(parse((const char *const[]) { "TDM", "off", "TDM_POLICY", "bad", NULL },
                 &c, err, sizeof(err)) == 0 && !c.enabled,
           "TDM=off: off, and nothing else is read");
    tap_ok(parse((const char *const[]) { "TDM_POLICY", "size:2M", NULL }, &c,
                 err, sizeof(err)) == 0 && c.policy == TDM_POLICY_SIZE &&
               c.size_min == 2 * 1024 * 1024, "size:2M = 2097152 bytes");
    tap_ok(parse((const char *const[]) { "TDM_POLICY", "size:0", NULL }, &c,
                 err, sizeof(err)) == 0 && c.size_min == 0, "size:0 = every file");
    tap_ok(parse((const char *const[]) { "TDM_POLICY", "recur:1G:250", NULL },
                 &c, err, sizeof(err)) == 0 && c.policy == TDM_POLICY_RECUR &&
               c.recur_bytes == 1ull << 30 && c.recur_window_ms == 250,
           "recur:1G:250");
    tap_ok(parse((const char *const[]) { "TDM_POLICY", "recur", "TDM_STATS",
                                         "/x/%p.csv", "TDM_ALLOW_NONDAX", "1",
                                         "TDM_FLUSH", "clflush", NULL },
                 &c, err, sizeof(err)) == 0 && c.recur_bytes == 64 * 1024 &&
               c.allow_nondax && c.flush == TDM_FLUSH_REQ_CLFLUSH &&
               !strcmp(c.stats_path, "/x/%p.csv"),
           "recur with its defaults, the switch, clflush, a stats path");
    tap_ok(parse((const char *const[]) { NULL }, &c, err, sizeof(err)) == 0 &&
               !c.intervals_path && c.interval_ms == 1000,
           "no interval rows by default (interval 1000 ms once asked for)");
    tap_ok(parse((const char *const[]) { "TDM_STATS_INTERVALS", "iv-%p.csv",
                                         "TDM_STATS_INTERVAL_MS", "250", NULL },
                 &c, err, sizeof(err)) == 0 &&
               !strcmp(c.intervals_path, "iv-%p.csv") && c.interval_ms == 250,
           "TDM_STATS_INTERVALS with TDM_STATS_INTERVAL_MS=250");
    static const char *const bads[][3] = {
        { "TDM", "yes", "TDM=\"yes\": expected on, off, 1 or 0" },
        { "TDM_POLICY", "most", "TDM_POLICY=\"most\": expected all, size:BYTES" },
        { "TDM_POLICY", "size:", "TDM_POLICY=\"size:\"" },
        { "TDM_POLICY", "size:-1", "TDM_POLICY=\"size:-1\"" },
        { "TDM_POLICY", "size:1T", "TDM_POLICY=\"size:1T\"" },
        { "TDM_POLICY", "size:1KB", "TDM_POLICY=\"size:1KB\"" },
        { "TDM_POLICY", "size:99999999999999999999", "TDM_POLICY=\"size:9999" },
        { "TDM_POLICY", "size:17179869184G", "TDM_POLICY=\"size:17179869184G\"" },
        { "TDM_POLICY", "recurs", "TDM_POLICY=\"recurs\"" },
        { "TDM_POLICY", "recur:0", "TDM_POLICY=\"recur:0\"" },
        { "TDM_POLICY", "recur:4K:0", "WINDOW_MS: 1..86400000" },
        { "TDM_POLICY", "recur:4K:86400001", "TDM_POLICY=\"recur:4K:86400001\"" },
        { "TDM_POLICY", "recur:4K:1K", "TDM_POLICY=\"recur:4K:1K\"" },
        { "TDM_ALLOW_NONDAX", "true", "TDM_ALLOW_NONDAX=\"true\": expected 0 or 1" },
        { "TDM_FLUSH", "sfence", "TDM_FLUSH=\"sfence\": expected auto, clwb" },
        { "TDM_STATS_INTERVAL_MS", "0", "expected 1..3600000 (milliseconds)" },
        { "TDM_STATS_INTERVAL_MS", "3600001", "TDM_STATS_INTERVAL_MS=\"3600001\"" },
        { "TDM_STATS_INTERVAL_MS", "1s", "TDM_STATS_INTERVAL_MS=\"1s\"" },
        { "TDM_STATS_INTERVAL_MS", "100", "needs TDM_STATS_INTERVALS=PATH" },
    };
    for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
        const char *table[] = { bads[i][0], bads[i][1], NULL };
        int rc = parse(table, &c, err, sizeof(err));
        if (!tap_ok(rc == -1 && strstr(err, bads[i][2]),
                    "%s=%s refused, the message names it", bads[i][0],
                    bads[i][1])) {
            tap_diag("message: %s", err);
        }
    }
}

/* the CPU's flags line says whether it has @flag */
static bool cpu_has(const char *flag)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    bool has = false;
    while (f && !has && fgets(line, sizeof(line), f)) {
        if (!strncmp(line, "flags", 5)) {
            for (char *w = strtok(line, " \t\n"); w; w = strtok(NULL, " \t\n")) {
                has |= !strcmp(w, flag);
            }
            break;
        }
    }
    if (f) {
        fclose(f);
    }
    return has;
}

static void check_flush(void)
{
#if defined(__x86_64__)
    static const struct {
        enum tdm_flush_kind kind;
        const char *flag;
    } kinds[] = {
        { TDM_FLUSH_CLWB, "clwb" },
        { TDM_FLUSH_CLFLUSHOPT, "clflushopt" },
        { TDM_FLUSH_CLFLUSH, "clflush" },
    };
    enum tdm_flush_kind best = TDM_FLUSH_NONE;
    for (size_t i = 0; i < 3; i++) {
        bool has = cpu_has(kinds[i].flag);
        tap_ok(tdm_flush_supported(kinds[i].kind) == has,
               "CPUID and /proc/cpuinfo agree on %s (%s)", kinds[i].flag,
               has ? "present" : "absent");
        if (has && best == TDM_FLUSH_NONE) {
            best = kinds[i].kind;
        }
        if (has) {
            static char line[4096];
            memset(line, 1, sizeof(line));
            tdm_flush_range(kinds[i].kind, line + 3, sizeof(line) - 70);
            tap_ok(line[100] == 1, "%s over a buffer runs and keeps its data",
                   kinds[i].flag);
        }
    }
    enum tdm_flush_kind got;
    int rc = tdm_flush_choose(TDM_FLUSH_REQ_AUTO, &got);
    tap_ok(rc == 0 && got == best, "auto chooses the best the CPU has: %s",
           tdm_flush_name(got));
    tap_ok(tdm_flush_choose(TDM_FLUSH_REQ_NONE, &got) == 0 &&
               got == TDM_FLUSH_NONE, "none is always there");
    if (!cpu_has("clwb")) {
        tap_ok(tdm_flush_choose(TDM_FLUSH_REQ_CLWB, &got) == -1,
               "clwb asked for on a CPU without it is refused");
    }
#else
    enum tdm_flush_kind got;
    tap_ok(tdm_flush_choose(TDM_FLUSH_REQ_AUTO, &got) == 0 &&
               got == TDM_FLUSH_NONE, "no flush instruction off x86");
#endif
}

static void check_policy(void)
{
    struct tdm_config c = { .policy = TDM_POLICY_ALL };
    unsigned hot;
    tap_ok(tdm_policy_serves(&c, NULL, 0, 0, 1, true, &hot), "all serves");
    c = (struct tdm_config) { .policy = TDM_POLICY_SIZE, .size_min = 1000 };
    tap_ok(!tdm_policy_serves(&c, NULL, 999, 0, 1, true, &hot) &&
               tdm_policy_serves(&c, NULL, 1000, 0, 1, false, &hot),
           "size:1000 serves files of 1000 bytes and more");
    c = (struct tdm_config) { .policy = TDM_POLICY_RECUR, .recur_bytes = 8192,
                              .recur_window_ms = 60000 };
    struct tdm_regions *r = tdm_regions_new();
    const uint64_t mib2 = 1u << TDM_REGION_SHIFT;
    bool first = tdm_policy_serves(&c, r, 0, 0, 4096, true, &hot);
    bool again = tdm_policy_serves(&c, r, 0, 0, 4096, true, &hot);
    tap_ok(!first && !again && hot == 0,
           "recur:8K: a page read twice (4 KiB re-read) is not enough");
    bool third = tdm_policy_serves(&c, r, 0, 0, 4096, true, &hot);
    tap_ok(third && hot == 1, "the third read (8 KiB re-read) maps region 0");
    tap_ok(tdm_policy_serves(&c, r, 0, 4096, 4096, false, &hot) && hot == 0,
           "writes to region 0 are served from then on");
    tap_ok(!tdm_policy_serves(&c, r, 0, mib2, 4096, false, &hot),
           "writes to region 1 are not (its reads never recurred)");
    tap_ok(!tdm_policy_serves(&c, r, 0, mib2 - 4096, 8192, true, &hot),
           "a read across regions 0 and 1 is served only if both are");
    for (int i = 0; i < 4; i++) {
        tdm_policy_serves(&c, r, 0, mib2 + 8192 * (uint64_t)i, 64 * 1024, true, &hot);
    }
    tap_ok(tdm_policy_serves(&c, r, 0, mib2 - 4096, 8192, true, &hot),
           "reads of region 1 overlapping each other map it too");
    tap_ok(!tdm_policy_serves(&c, r, 0, 4096ull << 30, 4096, true, &hot) &&
               !tdm_policy_serves(&c, r, 0, 4096ull << 30, 4096, true, &hot) &&
               !tdm_policy_serves(&c, r, 0, 4096ull << 30, 4096, true, &hot),
           "regions past 2 TiB are never served");
    tdm_regions_free(r);

    c.recur_window_ms = 1;
    r = tdm_regions_new();
    for (int i = 0; i < 3; i++) {
        tdm_policy_serves(&c, r, 0, 0, 4096, true, &hot);
        usleep(20000);
    }
    tap_ok(!tdm_policy_serves(&c, r, 0, 0, 4096, false, &hot),
           "recur:8K:1: reads 20 ms apart fall in separate windows: not mapped");
    tdm_regions_free(r);
}

struct contended {
    struct tdm_rwlock lock;
    long shared, bad;
    _Atomic int readers;
};

static void *rw_worker(void *arg)
{
    struct contended *c = arg;
    for (int i = 0; i < 20000; i++) {
        if (i % 16 == 0) {
            tdm_rwlock_wrlock(&c->lock);
            if (atomic_load(&c->readers)) {
                c->bad++;
            }
            c->shared++;
            tdm_rwlock_unlock(&c->lock);
        } else {
            tdm_rwlock_rdlock(&c->lock);
            atomic_fetch_add(&c->readers, 1);
            long v = c->shared;
            (void)v;
            atomic_fetch_sub(&c->readers, 1);
            tdm_rwlock_unlock(&c->lock);
        }
    }
    return NULL;
}

static void check_rwlock(void)
{
    struct contended c = { 0 };
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        pthread_create(&t[i], NULL, rw_worker, &c);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
    }
    tap_ok(c.shared == 4 * 1250 && c.bad == 0 && atomic_load(&c.lock.state) == 0,
           "inode lock: 4 threads, writers exclusive, none lost (%ld), free after",
           c.shared);
}

static void check_fdtable(void)
{
    struct tdm_inode ino = { 0 };
    struct tdm_desc *d = calloc(1, sizeof(*d));
    pthread_mutex_init(&d->lock, NULL);
    d->inode = &ino;
    d->refs = 3;  /* two slots, and this test's */
    tdm_fd_set(5, d, false);
    tdm_fd_set(70000, d, true);
    struct tdm_desc *got = tdm_fd_get(70000);
    tap_ok(got == d && d->refs == 4, "a slot in a second chunk gives its description, referenced");
    atomic_fetch_sub(&d->refs, 1);
    tap_ok(!tdm_fd_get(6) && !tdm_fd_get(-1) && !tdm_fd_get(1 << 20),
           "untracked, negative and out-of-range fds have none");
    tdm_fd_clear_range(0, ~0u);
    tap_ok(!tdm_fd_get(5) && !tdm_fd_get(70000) && d->refs == 1,
           "clearing every fd drops both slots' references");
    pthread_mutex_destroy(&d->lock);
    free(d);
}

static void check_stats(void)
{
    char dir[] = "/tmp/tdm-units.XXXXXX", path[256], tmpl[256];
    if (!mkdtemp(dir)) {
        tap_ok(false, "a temporary directory");
        return;
    }
    snprintf(tmpl, sizeof(tmpl), "%s/s-%%p.csv", dir);
    snprintf(path, sizeof(path), "%s/s-%ld.csv", dir, (long)getpid());
    struct tdm_stats_file *f = tdm_stats_file(1, 2, "/a,b\"c");
    tap_ok(f && tdm_stats_file(1, 2, "/a,b\"c") == f, "one row per file");
    tdm_stats_io(f, 0, 1, 4096);
    tdm_stats_io(f, 1, 0, -1);
    tdm_stats_reason(f, TDM_R_POLICY | TDM_R_EXTEND);
    tdm_stats_write(tmpl, "clwb");
    tdm_stats_write(tmpl, "clwb");
    FILE *in = fopen(path, "r");
    char line[1024], header[1024] = "", row[1024] = "";
    int n = 0;
    while (in && fgets(line, sizeof(line), in)) {
        if (n == 0) {
            snprintf(header, sizeof(header), "%s", line);
        } else if (n == 1) {
            snprintf(row, sizeof(row), "%s", line);
        }
        n++;
    }
    if (in) {
        fclose(in);
    }
    tap_ok(n == 3 && !strncmp(header, tdm_stats_header, strlen(tdm_stats_header)),
           "%%p is the pid; the header once, then each write's rows (%d lines)", n);
    char want[256];
    snprintf(want, sizeof(want),
             "%ld,\"/a,b\"\"c\",1,2,unknown,policy|extend,clwb,0,1,0,4096,0,0,1,0,0,",
             (long)getpid());
    tap_ok(!strncmp(row, want, strlen(want)), "the row: quoted path, reasons, counts");
    tap_diag("row: %s", row);
    tdm_stats_reset();
    unlink(path);
    tdm_stats_write(tmpl, "clwb");
    tap_ok(access(path, F_OK) != 0, "rows without a count are not written");
    rmdir(dir);
}

/* the lines of @path (at most @max, each at most 2048 bytes) */
static int read_lines(const char *path, char lines[][2048], int max)
{
    FILE *in = fopen(path, "r");
    int n = 0;
    while (in && n < max && fgets(lines[n], sizeof(lines[n]), in)) {
        n++;
    }
    if (in) {
        fclose(in);
    }
    return n;
}

static void check_intervals(void)
{
    static const ssize_t rets[] = { -1, 0, 512, 513, 1024, 1025, 1 << 20,
                                    (1 << 20) + 1, 1l << 40 };
    static const unsigned want[] = { 0, 0, 0, 1, 1, 2, 11, 12, 12 };
    bool good = true;
    for (size_t i = 0; i < sizeof(rets) / sizeof(rets[0]); i++) {
        good &= tdm_stats_size_bucket(rets[i]) == want[i];
    }
    tap_ok(good, "size buckets: <= 512 (0 and errors too), powers of two, > 1 MiB");
    char dir[] = "/tmp/tdm-units.XXXXXX", tmpl[256];
    if (!mkdtemp(dir)) {
        tap_ok(false, "a temporary directory");
        return;
    }
    char lines[4][2048], want1[512], want2[512];
    snprintf(tmpl, sizeof(tmpl), "%s/iv.csv", dir);
    tdm_stats_interval_start(1000, tmpl);
    uint64_t idx = atomic_load(&tdm_stats_interval_cur);
    struct tdm_stats_file *f = tdm_stats_file(3, 4, "/iv");
    tdm_stats_io(f, 0, 1, 4096);
    tdm_stats_io(f, 0, 0, 513);
    tdm_stats_io(f, 1, 1, 2000000);
    /* a call 5 intervals later claims the interval and writes its row */
    tdm_stats_interval_next(idx + 5);
    tdm_stats_interval_next(idx + 4);
    tdm_stats_io(f, 1, 0, 10);
    tdm_stats_interval_flush();
    /* a failed call's errno survives the row it claims, written or not */
    snprintf(want1, sizeof(want1), "%s/none/iv.csv", dir);
    tdm_stats_interval_start(1000, want1);
    tdm_stats_io(f, 0, 0, -1);
    errno = EINVAL;
    tdm_stats_interval_next(atomic_load(&tdm_stats_interval_cur) + 1);
    tap_ok(errno == EINVAL, "the errno of the call that claims an interval stays");
    tdm_stats_interval_ns = 0;
    int n = read_lines(tmpl, lines, 4);
    tap_ok(n == 3 && !strncmp(lines[0], tdm_stats_interval_header,
                              strlen(tdm_stats_interval_header)),
           "the header once, one row per interval with calls (%d lines)", n);
    snprintf(want1, sizeof(want1),
             "%" PRIu64 ",1000000000,%ld,/iv,3,4,1,1,4096,513,1,0,2000000,0,"
             "0,1,0,1,0,0,0,0,0,0,0,0,0,"
             "0,0,0,0,0,0,0,0,0,0,0,0,1\n",
             idx * 1000000000u, (long)getpid());
    snprintf(want2, sizeof(want2),
             "%" PRIu64 ",1000000000,%ld,/iv,3,4,0,0,0,0,0,1,0,10,"
             "0,0,0,0,0,0,0,0,0,0,0,0,0,"
             "1,0,0,0,0,0,0,0,0,0,0,0,0\n",
             (idx + 5) * 1000000000u, (long)getpid());
    tap_ok(n == 3 && !strcmp(lines[1], want1),
           "the first interval's row: its start, served and passed calls and "
           "bytes, the size buckets");
    tap_diag("row: %s", n > 1 ? lines[1] : "");
    tap_ok(n == 3 && !strcmp(lines[2], want2),
           "the row at exit: only what came after, in the claimed interval");
    tap_diag("row: %s", n > 2 ? lines[2] : "");
    tdm_stats_reset();
    unlink(tmpl);
    rmdir(dir);
}

int main(void)
{
    tdm_real_init();
    check_config();
    check_flush();
    check_policy();
    check_rwlock();
    check_fdtable();
    check_stats();
    check_intervals();
    return tap_done();
}
