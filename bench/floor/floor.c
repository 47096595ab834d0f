/*
 * cxlssd-floor: the bare userfaultfd round trip, the floor under every
 * cxl-ssd miss.  Nothing of the device is on the path: a loop touches a
 * page of a shmem memfd whose page-cache page exists but is not mapped in
 * the registered view (a MINOR fault) and the fault is resolved with
 * UFFDIO_CONTINUE, by
 *   poll    a handler thread sleeping in poll() on the uffd
 *   busy    a handler thread spinning on a non-blocking read() of the uffd
 *   sigbus  the faulting thread itself, in its SIGBUS handler
 *           (UFFD_FEATURE_SIGBUS: no event, no wake)
 *   tlb     no fault at all: the accessing thread maps the page with
 *           UFFDIO_CONTINUE (DONTWAKE) before it touches it, as cxl-ssd's
 *           delivery=tlb does in TCG's TLB fill (the host part of that
 *           path; TCG's own slow path is not in it)
 * Each timed access is one fault; the pages are zapped again (MADV_DONTNEED
 * on the view) in one batch after every pass, outside the timed accesses.
 * --threads T: T faulting threads, each on its own slice of the pages,
 * timing from a common barrier (the handler thread serves them all).
 * --evict-each: the floor of a miss at capacity, where every miss evicts
 * one page: each timed access is preceded, inside the timed interval, by
 * the unmap of the thread's previous page (one single-page MADV_DONTNEED,
 * as a device at eviction=sync unmaps its victim), and --wait-ns W spins
 * until W ns after the interval's start before the access (the NAND wait
 * the unmap hides in).  With another thread of the process running, an
 * unmap costs a TLB shootdown IPI round trip to its CPU: what two threads
 * pay per miss on a host, whatever the device does.
 * --evict-batch B: a miss at capacity under eviction=batch: every B-th
 * timed access is preceded, inside its timed interval, by the unmap of the
 * B pages the thread touched before it, in one process_madvise call of B
 * single-page vectors (as the device unmaps a batch of scattered victims,
 * trap/evict.c; B madvise calls where the kernel has no
 * process_madvise(MADV_DONTNEED)); --wait-ns W spins each access's wait.
 * Whether the kernel flushes the TLB once per call or once per vector is
 * what the unmap's time with other threads running shows.
 * --random: each thread visits its pages in one fixed random cyclic order
 * (a seeded shuffle) instead of in address order, as MIO's random chase
 * does; with --pages as many as the chase's working set, the floor then
 * pays the same page-table walks and cold page-cache lookups as the
 * device's misses (the kernel's part of a miss grows with the footprint).
 * --pin: faulting thread t on the t-th CPU of the process's affinity
 * set, the handler thread on the next.
 *
 * Prints one key=value line:
 *   floor: delivery=D pinned=0|1 threads=T evict_each=0|1 wait_ns=W
 *          iters=N pages=P p50_ns= p99_ns= p999_ns= mean_ns= min_ns=
 *          max_ns= faults= unmap_p50_ns= evict_batch=B unmaps=
 *          order=address|random
 * (iters per thread; the percentiles over every thread's accesses;
 * unmap_p50_ns: the P50 of the timed unmaps, --evict-each's or
 * --evict-batch's, 0 without; unmaps: how many there were).
 * Exit status 0, 2 on a usage error, 4 when userfaultfd is not usable.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096ul

enum delivery { D_POLL, D_BUSY, D_SIGBUS, D_TLB };
static const char *const delivery_names[] = { "poll", "busy", "sigbus",
                                              "tlb" };

static int uffd = -1;
static char *view;
static uint64_t view_len;
static _Atomic int stopping;
static _Atomic uint64_t served;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "cxlssd-floor: %s: %s\n", what, strerror(errno));
    exit(4);
}

static int do_continue(uint64_t addr, int dontwake)
{
    struct uffdio_continue c = {
        .range = { .start = addr & ~(PAGE - 1), .len = PAGE },
        .mode = dontwake ? UFFDIO_CONTINUE_MODE_DONTWAKE : 0,
    };
    if (ioctl(uffd, UFFDIO_CONTINUE, &c) == 0 || errno == EEXIST)
        return 0;
    return -1;
}

static void serve_msg(const struct uffd_msg *m)
{
    if (m->event != UFFD_EVENT_PAGEFAULT)
        return;
    if (do_continue(m->arg.pagefault.address, 0))
        die("UFFDIO_CONTINUE");
    atomic_fetch_add_explicit(&served, 1, memory_order_relaxed);
}

static void *handler_poll(void *arg)
{
    (void)arg;
    struct pollfd p = { .fd = uffd, .events = POLLIN };
    while (!atomic_load(&stopping)) {
        if (poll(&p, 1, 50) <= 0)
            continue;
        struct uffd_msg m;
        if (read(uffd, &m, sizeof(m)) == (ssize_t)sizeof(m))
            serve_msg(&m);
    }
    return NULL;
}

static void *handler_busy(void *arg)
{
    (void)arg;
    while (!atomic_load_explicit(&stopping, memory_order_relaxed)) {
        struct uffd_msg m;
        if (read(uffd, &m, sizeof(m)) == (ssize_t)sizeof(m))
            serve_msg(&m);
        else
            __builtin_ia32_pause();
    }
    return NULL;
}

static void on_sigbus(int sig, siginfo_t *si, void *uctx)
{
    (void)sig;
    (void)uctx;
    uint64_t a = (uint64_t)(uintptr_t)si->si_addr;
    if (a < (uint64_t)(uintptr_t)view ||
        a >= (uint64_t)(uintptr_t)view + view_len || do_continue(a, 1)) {
        signal(SIGBUS, SIG_DFL);        /* not ours: the default action */
        return;
    }
    atomic_fetch_add_explicit(&served, 1, memory_order_relaxed);
}

/* tlb: map the page, then touch it (no fault). */
static void touch_mapped(volatile char *p)
{
    if (do_continue((uint64_t)(uintptr_t)p, 1))
        die("UFFDIO_CONTINUE");
    atomic_fetch_add_explicit(&served, 1, memory_order_relaxed);
    (void)*p;
}

/* The @nth CPU (modulo their count) of @set, or -1. */
static int nth_cpu(const cpu_set_t *set, int nth)
{
    int count = CPU_COUNT(set);
    if (count <= 0)
        return -1;
    nth %= count;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, set) && nth-- == 0)
            return c;
    return -1;
}

static void pin_thread(pthread_t th, const cpu_set_t *allowed, int nth,
                       const char *who)
{
    int cpu = nth_cpu(allowed, nth);
    cpu_set_t one;
    CPU_ZERO(&one);
    if (cpu >= 0)
        CPU_SET(cpu, &one);
    if (cpu < 0 || pthread_setaffinity_np(th, sizeof(one), &one))
        fprintf(stderr, "cxlssd-floor: warning: pinning the %s failed\n",
                who);
}

/* One faulting thread's share: its own slice of the view. */
struct worker {
    pthread_t th;
    enum delivery d;
    char *base;
    long pages, iters;
    long *order;                    /* the pass's page order, pages long */
    int evict_each;
    long evict_batch;
    uint64_t wait_ns;
    uint64_t *lat;                  /* per timed access */
    uint64_t *unmap;                /* per timed unmap, nunmap of them */
    long nunmap;
};

static pthread_barrier_t timed_start;

static void zap(char *p, uint64_t len)
{
    if (madvise(p, len, MADV_DONTNEED))
        die("madvise(MADV_DONTNEED)");
}

#define MAX_BATCH 64
#define PIDFD_SELF_PROCESS (-10001)     /* linux/pidfd.h, 6.14+ */

static int self_pidfd = -1;
static _Atomic int no_process_madvise;

/* @n single-page vectors in one process_madvise(MADV_DONTNEED); madvise
 * per page where the kernel refuses it. */
static void zap_batch(char *const *pages, long n)
{
    struct iovec iov[MAX_BATCH];
    for (long i = 0; i < n; i++)
        iov[i] = (struct iovec){ .iov_base = pages[i], .iov_len = PAGE };
    if (!atomic_load(&no_process_madvise)) {
        long r = syscall(SYS_process_madvise, self_pidfd, iov, (size_t)n,
                         MADV_DONTNEED, 0u);
        if (r == (long)(n * PAGE))
            return;
        if (r >= 0 || (errno != EINVAL && errno != ENOSYS &&
                       errno != EBADF && errno != EPERM))
            die("process_madvise(MADV_DONTNEED)");
        atomic_store(&no_process_madvise, 1);
    }
    for (long i = 0; i < n; i++)
        zap(pages[i], PAGE);
}

static void touch(enum delivery d, volatile char *p)
{
    if (d == D_TLB)
        touch_mapped(p);
    else
        (void)*p;
}

/* One untimed pass first (the first fault of each page allocates the
 * view's page tables), then the timed accesses from the common barrier. */
static void *fault_loop(void *arg)
{
    struct worker *w = arg;
    char *prev = NULL;
    char *touched[MAX_BATCH];
    long ntouched = 0;
    for (long k = -w->pages, i = 0; i < w->iters; k++) {
        long slot = (k < 0 ? k + w->pages : k) % w->pages;
        char *p = w->base + (uint64_t)w->order[slot] * PAGE;
        if (k == 0)
            pthread_barrier_wait(&timed_start);
        uint64_t t0 = now_ns();
        int unmapped = 0;
        if (w->evict_each && prev) {
            zap(prev, PAGE);
            unmapped = 1;
        } else if (w->evict_batch && ntouched == w->evict_batch) {
            zap_batch(touched, ntouched);
            ntouched = 0;
            unmapped = 1;
        }
        uint64_t t1 = now_ns();
        if (w->evict_each || w->evict_batch) {
            while (now_ns() - t0 < w->wait_ns)
                __builtin_ia32_pause();
        }
        if (unmapped && k >= 0)
            w->unmap[w->nunmap++] = t1 - t0;
        touch(w->d, p);
        if (k >= 0)
            w->lat[i++] = now_ns() - t0;
        prev = p;
        if (w->evict_batch)
            touched[ntouched++] = p;
        else if (!w->evict_each && slot == w->pages - 1)
            zap(w->base, (uint64_t)w->pages * PAGE);
    }
    return NULL;
}

/* 0..n-1 in address order, or shuffled (Fisher-Yates, xorshift64 seeded
 * by @seed: the same order every run). */
static long *page_order(long n, int shuffle, uint64_t seed)
{
    long *o = malloc((size_t)n * sizeof(*o));
    if (!o)
        die("malloc");
    for (long i = 0; i < n; i++)
        o[i] = i;
    uint64_t x = seed * 0x9e3779b97f4a7c15ull | 1;
    for (long i = n - 1; shuffle && i > 0; i--) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        long j = (long)(x % (uint64_t)(i + 1)), tmp = o[i];
        o[i] = o[j];
        o[j] = tmp;
    }
    return o;
}

static void *handler_start(void *arg)
{
    enum delivery d = *(enum delivery *)arg;
    return d == D_POLL ? handler_poll(NULL) : handler_busy(NULL);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static uint64_t pct(const uint64_t *s, uint64_t n, double p)
{
    uint64_t r = (uint64_t)(p / 100.0 * (double)n + 0.999999);
    return s[(r ? r : 1) - 1];
}

static void usage(FILE *f)
{
    fputs("usage: cxlssd-floor --delivery poll|busy|sigbus|tlb [--pin] "
          "[--iters N] [--pages P] [--threads T] [--evict-each] "
          "[--evict-batch B] [--wait-ns W] [--random] [--raw FILE]\n"
          "  The bare userfaultfd MINOR round trip (touch, fault, "
          "UFFDIO_CONTINUE) per delivery; one key=value line on stdout.\n"
          "  --iters N   timed faults per thread (default 2000, "
          "10..10000000)\n"
          "  --pages P   pages of the memfd, split between the threads, each "
          "slice zapped in one batch after every pass (default 256, "
          "1..1048576)\n"
          "  --threads T faulting threads (default 1, 1..64)\n"
          "  --evict-each  unmap the previous page (one MADV_DONTNEED) "
          "inside each timed access, instead of the batch\n"
          "  --evict-batch B  every B-th access unmaps the B pages "
          "touched before it (one process_madvise of B single-page "
          "vectors) inside its timed access, instead of the pass's batch "
          "(2..64)\n"
          "  --wait-ns W with --evict-each or --evict-batch: spin until W "
          "ns into each timed access before the touch (default 0, "
          "0..1000000)\n"
          "  --random    visit each thread's pages in one fixed random "
          "order (as a random chase), not in address order\n"
          "  --pin       faulter t on the t-th allowed CPU, handler on the "
          "next\n"
          "  --raw FILE  every fault's latency (latency_ns)\n", f);
}

static long parse_num(const char *opt, const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) {
        fprintf(stderr, "cxlssd-floor: %s=%s: must be an integer in "
                "%ld..%ld\n", opt, s, lo, hi);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    enum delivery d = D_BUSY;
    int pin = 0, have_delivery = 0, evict_each = 0, shuffle = 0;
    long iters = 2000, pages = 256, threads = 1, wait_ns = 0, evict_batch = 0;
    const char *raw = NULL;
    static const struct option lo[] = {
        { "delivery", required_argument, 0, 'd' },
        { "pin", no_argument, 0, 'p' },
        { "iters", required_argument, 0, 'n' },
        { "pages", required_argument, 0, 'P' },
        { "raw", required_argument, 0, 'r' },
        { "threads", required_argument, 0, 't' },
        { "evict-each", no_argument, 0, 'e' },
        { "evict-batch", required_argument, 0, 'b' },
        { "wait-ns", required_argument, 0, 'w' },
        { "random", no_argument, 0, 'R' },
        { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    int c;
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (c) {
        case 'd':
            have_delivery = 0;
            for (int i = 0; i < 4; i++)
                if (!strcmp(optarg, delivery_names[i])) {
                    d = (enum delivery)i;
                    have_delivery = 1;
                }
            if (!have_delivery) {
                fprintf(stderr, "cxlssd-floor: delivery=%s: must be one of "
                        "poll, busy, sigbus, tlb\n", optarg);
                return 2;
            }
            break;
        case 'p': pin = 1; break;
        case 'n': iters = parse_num("iters", optarg, 10, 10000000); break;
        case 'P': pages = parse_num("pages", optarg, 1, 1048576); break;
        case 'r': raw = optarg; break;
        case 't': threads = parse_num("threads", optarg, 1, 64); break;
        case 'e': evict_each = 1; break;
        case 'R': shuffle = 1; break;
        case 'b':
            evict_batch = parse_num("evict-batch", optarg, 2, MAX_BATCH);
            break;
        case 'w': wait_ns = parse_num("wait-ns", optarg, 0, 1000000); break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return 2;
    }
    if (evict_each && evict_batch) {
        fprintf(stderr, "cxlssd-floor: --evict-each and --evict-batch "
                "exclude each other\n");
        return 2;
    }
    /* --evict-each unmaps the page before the one it touches; every page
     * --evict-batch touches is unmapped within its next B accesses */
    long per_thread = evict_each ? 2 : evict_batch ? evict_batch + 1 : 1;
    if (pages < per_thread * threads) {
        fprintf(stderr, "cxlssd-floor: pages=%ld: must be at least %ld per "
                "thread (threads=%ld%s)\n", pages, per_thread, threads,
                evict_each ? ", --evict-each" :
                evict_batch ? ", --evict-batch" : "");
        return 2;
    }
    if (wait_ns && !evict_each && !evict_batch) {
        fprintf(stderr, "cxlssd-floor: wait-ns=%ld: needs --evict-each or "
                "--evict-batch\n", wait_ns);
        return 2;
    }
    if (evict_batch) {
        self_pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0u);
        if (self_pidfd < 0)
            self_pidfd = PIDFD_SELF_PROCESS;
    }

    view_len = (uint64_t)pages * PAGE;
    int mfd = memfd_create("cxlssd-floor", MFD_CLOEXEC);
    if (mfd < 0 || ftruncate(mfd, (off_t)view_len))
        die("memfd");
    char *fill = mmap(NULL, view_len, PROT_READ | PROT_WRITE, MAP_SHARED,
                      mfd, 0);
    view = mmap(NULL, view_len, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    if (fill == MAP_FAILED || view == MAP_FAILED)
        die("mmap");
    for (uint64_t o = 0; o < view_len; o += PAGE)
        fill[o] = (char)(o / PAGE);         /* page-cache pages exist */

    /* non-blocking for poll too: a wake-up without an event must not
     * leave the handler in read() at the end */
    uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    if (uffd < 0)
        die("userfaultfd");
    struct uffdio_api api = {
        .api = UFFD_API,
        .features = UFFD_FEATURE_MINOR_SHMEM |
                    /* tlb: a fault would be a bug; SIGBUS kills loudly */
                    (d == D_SIGBUS || d == D_TLB ? UFFD_FEATURE_SIGBUS : 0),
    };
    if (ioctl(uffd, UFFDIO_API, &api))
        die("UFFDIO_API (MINOR_SHMEM)");
    struct uffdio_register reg = {
        .range = { .start = (uint64_t)(uintptr_t)view, .len = view_len },
        .mode = UFFDIO_REGISTER_MODE_MINOR,
    };
    if (ioctl(uffd, UFFDIO_REGISTER, &reg))
        die("UFFDIO_REGISTER (MINOR)");

    pthread_t th;
    int have_thread = 0;
    if (d == D_TLB) {
        /* nothing serves faults: the loop maps each page itself */
    } else if (d == D_SIGBUS) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = on_sigbus;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGBUS, &sa, NULL))
            die("sigaction");
    } else {
        if (pthread_create(&th, NULL, handler_start, &d))
            die("pthread_create");
        have_thread = 1;
    }
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof(allowed), &allowed))
        die("sched_getaffinity");

    struct worker *w = calloc((size_t)threads, sizeof(*w));
    uint64_t *lat = calloc((size_t)(iters * threads), sizeof(*lat));
    uint64_t *unmap = calloc((size_t)(iters * threads), sizeof(*unmap));
    if (!w || !lat || !unmap)
        die("calloc");
    if (pthread_barrier_init(&timed_start, NULL, (unsigned)threads))
        die("pthread_barrier_init");
    long slice = pages / threads;
    for (long t = 0; t < threads; t++) {
        w[t] = (struct worker){
            .d = d, .base = view + (uint64_t)(t * slice) * PAGE,
            .pages = slice, .iters = iters, .evict_each = evict_each,
            .order = page_order(slice, shuffle, (uint64_t)t + 1),
            .evict_batch = evict_batch,
            .wait_ns = (uint64_t)wait_ns, .lat = lat + t * iters,
            .unmap = unmap + t * iters,
        };
        if (pthread_create(&w[t].th, NULL, fault_loop, &w[t]))
            die("pthread_create");
        if (pin)
            pin_thread(w[t].th, &allowed, (int)t, "faulter");
    }
    if (pin && have_thread)
        pin_thread(th, &allowed, (int)threads, "handler");
    for (long t = 0; t < threads; t++)
        pthread_join(w[t].th, NULL);
    atomic_store(&stopping, 1);
    if (have_thread)
        pthread_join(th, NULL);
    iters *= threads;

    if (raw) {
        FILE *f = fopen(raw, "w");
        if (!f)
            die(raw);
        fputs("latency_ns\n", f);
        for (long i = 0; i < iters; i++)
            fprintf(f, "%llu\n", (unsigned long long)lat[i]);
        if (fclose(f))
            die(raw);
    }
    long double sum = 0;
    for (long i = 0; i < iters; i++)
        sum += lat[i];
    qsort(lat, (size_t)iters, sizeof(*lat), cmp_u64);
    uint64_t n = (uint64_t)iters;
    uint64_t nunmap = 0;            /* every thread's unmaps, packed */
    for (long t = 0; t < threads; t++) {
        memmove(unmap + nunmap, w[t].unmap, (size_t)w[t].nunmap *
                sizeof(*unmap));
        nunmap += (uint64_t)w[t].nunmap;
    }
    qsort(unmap, (size_t)nunmap, sizeof(*unmap), cmp_u64);
    printf("floor: delivery=%s pinned=%d threads=%ld evict_each=%d "
           "wait_ns=%ld iters=%ld pages=%ld p50_ns=%llu p99_ns=%llu "
           "p999_ns=%llu mean_ns=%.1f min_ns=%llu max_ns=%llu faults=%llu "
           "unmap_p50_ns=%llu evict_batch=%ld unmaps=%llu order=%s\n",
           delivery_names[d], pin, threads,
           evict_each, wait_ns, iters / threads, pages,
           (unsigned long long)pct(lat, n, 50),
           (unsigned long long)pct(lat, n, 99),
           (unsigned long long)pct(lat, n, 99.9), (double)(sum / n),
           (unsigned long long)lat[0], (unsigned long long)lat[n - 1],
           (unsigned long long)atomic_load(&served),
           (unsigned long long)(nunmap ? pct(unmap, nunmap, 50) : 0),
           evict_batch, (unsigned long long)nunmap,
           shuffle ? "random" : "address");
    for (long t = 0; t < threads; t++)
        free(w[t].order);
    free(unmap);
    free(lat);
    free(w);
    return 0;
}
