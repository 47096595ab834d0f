/*
 * A QEMU-less stand-in for the device, for the tracing end-to-end test:
 * a memfd mapping registered with the project's trap engine (userfaultfd
 * MINOR, handler threads, device model, per-miss CSV records in the
 * device's schema), and "vCPU" threads that load from non-resident pages.
 *
 *   uffd_workload --records R.csv --touches T.csv --info I.txt
 *                 [--pages N] [--frames F] [--misses K] [--threads W]
 *                 [--delivery poll|busy] [--bql] [--gap-us U]
 *                 [--defer-unmap]
 *
 * Each worker touches pages of its own slice cyclically; the slices are
 * larger than the cache, so every touch misses.  T.csv has one row per
 * touch: tid,page,t_pre_ns,t_post_ns (CLOCK_MONOTONIC read just before the
 * load and just after it returned), so host events can be checked against
 * the process's own clock.  I.txt: base=, len=, page_size=, pid=.
 * --bql serialises misses with a mutex through the trap's serialize hooks
 * (records then carry t_bql_req/acq/rel) while a "main loop" thread holds
 * it for 20 us every 100 us, as the BQL would be.  Victims are
 * unmapped on the miss path before the NAND wait (the device's default);
 * --defer-unmap: after the faulter was woken (t_unmapped > t_mapped).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "trap.h"

#define PG 4096u

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin_until(uint64_t t)
{
    while (now_ns() < t) {
    }
}

struct touch {
    int32_t tid;
    uint64_t page;
    uint64_t t_pre, t_post;
};

struct worker {
    pthread_t th;
    unsigned char *base;
    uint64_t first_page, npages, misses, gap_ns;
    struct touch *log;
    volatile uint64_t sink;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    int32_t tid = (int32_t)syscall(SYS_gettid);
    uint64_t sum = 0;
    for (uint64_t i = 0; i < w->misses; i++) {
        /* stride 7 over the slice: no sequential pattern, still cyclic */
        uint64_t page = w->first_page + (i * 7) % w->npages;
        volatile uint64_t *p = (volatile uint64_t *)(w->base + page * PG);
        uint64_t t0 = now_ns();
        sum += *p;
        uint64_t t1 = now_ns();
        w->log[i] = (struct touch){ tid, page, t0, t1 };
        if (w->gap_ns) {
            spin_until(t1 + w->gap_ns);
        }
    }
    w->sink = sum;
    return NULL;
}

static pthread_mutex_t bql = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool stop_main;

static bool ser_begin(void *opaque, pid_t tid)
{
    (void)opaque;
    (void)tid;
    pthread_mutex_lock(&bql);
    return true;
}

static void ser_end(void *opaque)
{
    (void)opaque;
    pthread_mutex_unlock(&bql);
}

static void *main_loop(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop_main)) {
        pthread_mutex_lock(&bql);
        spin_until(now_ns() + 20000);
        pthread_mutex_unlock(&bql);
        usleep(100);
    }
    return NULL;
}

static void usage(void)
{
    fprintf(stderr, "usage: uffd_workload --records R.csv --touches T.csv "
            "--info I.txt [--pages N] [--frames F] [--misses K] "
            "[--threads W] [--delivery poll|busy] [--bql] [--gap-us U] "
            "[--defer-unmap]\n");
    exit(64);
}

int main(int argc, char **argv)
{
    const char *records = NULL, *touches = NULL, *info = NULL;
    const char *delivery = "poll";
    uint64_t npages = 512, frames = 32, misses = 400, gap_us = 50;
    unsigned nthreads = 1;
    bool use_bql = false, defer_unmap = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--bql")) {
            use_bql = true;
            continue;
        }
        if (!strcmp(a, "--defer-unmap")) {
            defer_unmap = true;
            continue;
        }
        if (!v) {
            usage();
        }
        i++;
        if (!strcmp(a, "--records")) records = v;
        else if (!strcmp(a, "--touches")) touches = v;
        else if (!strcmp(a, "--info")) info = v;
        else if (!strcmp(a, "--delivery")) delivery = v;
        else if (!strcmp(a, "--pages")) npages = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--frames")) frames = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--misses")) misses = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--threads")) nthreads = (unsigned)atoi(v);
        else if (!strcmp(a, "--gap-us")) gap_us = strtoull(v, NULL, 0);
        else usage();
    }
    if (!records || !touches || !info || nthreads < 1 || nthreads > 16 ||
        npages / nthreads <= frames) {
        usage();
    }

    size_t len = npages * PG;
    int fd = memfd_create("cxlssd-trace-e2e", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)len) < 0 ||
        fallocate(fd, 0, 0, (off_t)len) < 0) {
        perror("memfd");
        return 1;
    }
    unsigned char *base = mmap(NULL, len, PROT_READ | PROT_WRITE,
                               MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        perror("mmap");
        return 1;
    }

    struct cxlssd_config mc;
    cxlssd_config_defaults(&mc, len);
    mc.cache_size = frames * PG;
    mc.t_prog_ns = 10000;
    mc.t_erase_ns = 50000;
    mc.precondition = true;     /* every first read costs tR + xfer */
    char err[256];
    struct cxlssd_model *model = cxlssd_model_new(&mc, err, sizeof(err));
    if (!model) {
        fprintf(stderr, "model: %s\n", err);
        return 1;
    }
    struct cxlssd_trap_config tc;
    memset(&tc, 0, sizeof(tc));
    if (cxlssd_delivery_from_name(delivery, &tc.delivery) < 0) {
        usage();
    }
    tc.handler_threads = 1;
    tc.handler_cpus = "";
    tc.record_path = records;
    tc.mode_name = "uffd";
    tc.accel_name = "native";
    tc.defer_unmap = defer_unmap;
    struct cxlssd_trap_hooks hooks;
    memset(&hooks, 0, sizeof(hooks));
    if (use_bql) {
        hooks.serialize_begin = ser_begin;
        hooks.serialize_end = ser_end;
    }
    struct cxlssd_trap *trap = cxlssd_trap_new(model, base, len, &tc, &hooks,
                                               err, sizeof(err));
    if (!trap) {
        fprintf(stderr, "trap: %s\n", err);
        return 1;
    }

    FILE *fi = fopen(info, "w");
    if (!fi) {
        perror(info);
        return 1;
    }
    fprintf(fi, "base=0x%" PRIxPTR "\nlen=%zu\npage_size=%u\npid=%d\n",
            (uintptr_t)base, len, PG, (int)getpid());
    fclose(fi);

    pthread_t mt;
    if (use_bql) {
        pthread_create(&mt, NULL, main_loop, NULL);
    }
    struct worker *w = calloc(nthreads, sizeof(*w));
    uint64_t slice = npages / nthreads;
    for (unsigned i = 0; i < nthreads; i++) {
        w[i].base = base;
        w[i].first_page = i * slice;
        w[i].npages = slice;
        w[i].misses = misses;
        w[i].gap_ns = gap_us * 1000;
        w[i].log = calloc(misses, sizeof(struct touch));
        pthread_create(&w[i].th, NULL, worker_main, &w[i]);
    }
    for (unsigned i = 0; i < nthreads; i++) {
        pthread_join(w[i].th, NULL);
    }
    if (use_bql) {
        atomic_store(&stop_main, true);
        pthread_join(mt, NULL);
    }
    struct cxlssd_trap_stats st;
    cxlssd_trap_get_stats(trap, &st);
    cxlssd_trap_free(trap);     /* flushes the records */

    FILE *ft = fopen(touches, "w");
    if (!ft) {
        perror(touches);
        return 1;
    }
    fprintf(ft, "tid,page,t_pre_ns,t_post_ns\n");
    for (unsigned i = 0; i < nthreads; i++) {
        for (uint64_t k = 0; k < misses; k++) {
            struct touch *t = &w[i].log[k];
            fprintf(ft, "%d,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", t->tid,
                    t->page, t->t_pre, t->t_post);
        }
        free(w[i].log);
    }
    fclose(ft);
    printf("workload: %u threads x %" PRIu64 " touches, faults=%" PRIu64
           " duplicates=%" PRIu64 " records=%" PRIu64 " dropped=%" PRIu64 "\n",
           nthreads, misses, st.faults, st.duplicate_faults,
           st.records_written, st.records_dropped);
    free(w);
    cxlssd_model_free(model);
    munmap(base, len);
    close(fd);
    return 0;
}
