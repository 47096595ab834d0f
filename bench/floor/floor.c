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
 * --pin: the faulting thread on the first CPU of the process's affinity
 * set, the handler thread on the second.
 *
 * Prints one key=value line:
 *   floor: delivery=D pinned=0|1 iters=N pages=P p50_ns= p99_ns= p999_ns=
 *          mean_ns= min_ns= max_ns= faults=
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
          "[--iters N] [--pages P] [--raw FILE]\n"
          "  The bare userfaultfd MINOR round trip (touch, fault, "
          "UFFDIO_CONTINUE) per delivery; one key=value line on stdout.\n"
          "  --iters N   timed faults (default 2000, 10..10000000)\n"
          "  --pages P   pages of the memfd, zapped in one batch after "
          "every pass (default 256, 1..1048576)\n"
          "  --pin       faulter on the first allowed CPU, handler on the "
          "second\n"
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
    int pin = 0, have_delivery = 0;
    long iters = 2000, pages = 256;
    const char *raw = NULL;
    static const struct option lo[] = {
        { "delivery", required_argument, 0, 'd' },
        { "pin", no_argument, 0, 'p' },
        { "iters", required_argument, 0, 'n' },
        { "pages", required_argument, 0, 'P' },
        { "raw", required_argument, 0, 'r' },
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
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return 2;
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
    if (pin) {
        cpu_set_t allowed;
        if (sched_getaffinity(0, sizeof(allowed), &allowed))
            die("sched_getaffinity");
        pin_thread(pthread_self(), &allowed, 0, "faulter");
        if (have_thread)
            pin_thread(th, &allowed, 1, "handler");
    }

    uint64_t *lat = calloc((size_t)iters, sizeof(*lat));
    if (!lat)
        die("calloc");
    /* one untimed pass first: the first fault of each page allocates the
     * view's page tables */
    for (long w = -pages, i = 0; i < iters; w++) {
        long pg = (w < 0 ? w + pages : w) % pages;
        volatile char *p = view + (uint64_t)pg * PAGE;
        if (w >= 0) {
            uint64_t t0 = now_ns();
            if (d == D_TLB)
                touch_mapped(p);
            else
                (void)*p;
            lat[i++] = now_ns() - t0;
        } else if (d == D_TLB) {
            touch_mapped(p);
        } else {
            (void)*p;
        }
        if (pg == pages - 1 && madvise(view, view_len, MADV_DONTNEED))
            die("madvise(MADV_DONTNEED)");
    }
    atomic_store(&stopping, 1);
    if (have_thread)
        pthread_join(th, NULL);

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
    printf("floor: delivery=%s pinned=%d iters=%ld pages=%ld p50_ns=%llu "
           "p99_ns=%llu p999_ns=%llu mean_ns=%.1f min_ns=%llu max_ns=%llu "
           "faults=%llu\n", delivery_names[d], pin, iters, pages,
           (unsigned long long)pct(lat, n, 50),
           (unsigned long long)pct(lat, n, 99),
           (unsigned long long)pct(lat, n, 99.9), (double)(sum / n),
           (unsigned long long)lat[0], (unsigned long long)lat[n - 1],
           (unsigned long long)atomic_load(&served));
    free(lat);
    return 0;
}
