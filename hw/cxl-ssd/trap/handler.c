/*
 * Handler threads: deliver userfaultfd events and serve them.
 *
 * Delivery (cfg->delivery):
 *   POLL  sleep in ppoll() on the uffd and the trap's eventfd; the timeout
 *         is bounded by the earliest queued prefetch deadline.
 *   BUSY  spin on a non-blocking read() that returns EAGAIN, with a pause
 *         hint; no sleep/wake-up on the delivery path (costs a CPU).
 * Events are read one at a time so that one slow fill never holds a batch
 * of other faults behind it; with several handler threads each takes the
 * next event.
 *
 * Serving an event (page = (addr - base) / page_size):
 *   WP event      cxlssd_mark_dirty(), then UFFDIO_WRITEPROTECT(mode=0)
 *                 on the page, which also wakes the faulter.
 *   MINOR event   a miss: trap_serve_miss() (serve.c) hands it to the miss
 *                 service (model/miss_service.c), whose top comment is the
 *                 whole miss path.
 * A faulting thread is never left un-woken: every path ends in CONTINUE,
 * WRITEPROTECT(mode=0) or WAKE, including the stop path.
 */
#include <errno.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trap_int.h"

/* Busy delivery spins while faults keep coming; after this long without
 * one it sleeps in poll until the next, so an idle device (a working set
 * that fits the cache) does not take a host CPU from the vCPUs. */
#define BUSY_IDLE_NS 10000000ull

static void *handler_main(void *arg);

/* Set on handler threads: only they count in t->readers. */
static _Thread_local bool handler_thread;

/*
 * Serialize hook (e.g. the BQL) and deadlock avoidance: a handler blocked
 * in serialize_begin() for a vCPU fault waits for a lock whose holder (say
 * QEMU's main loop serving a monitor `xp` or a DMA) may itself fault on the
 * range; if every handler were blocked that fault would never be read.
 * So when the last free handler enters the hook, a spare handler is
 * started (poll delivery, unpinned).  The hook blocks only for vCPU faults,
 * about one per vCPU; but a signal (a TCG kick, SIG_IPI) can wake a vCPU
 * out of its fault, which it then takes again: a second event while the
 * first is still in the hook.  Spares stay until the trap is freed, up to
 * TRAP_MAX_HANDLERS threads in all.
 */
static void spawn_spare(struct cxlssd_trap *t)
{
    pthread_mutex_lock(&t->ctl_lock);
    if (t->nthreads < TRAP_MAX_HANDLERS && !atomic_load(&t->stop)) {
        struct trap_handler *h = &t->handlers[t->nthreads];
        h->t = t;
        h->index = (int)t->nthreads;
        h->cpu = -1;
        h->spare = true;
        atomic_fetch_add(&t->readers, 1);
        int r = pthread_create(&h->thread, NULL, handler_main, h);
        if (r == 0) {
            char name[16];
            snprintf(name, sizeof(name), "cxlssd-trap%u",
                     t->nthreads % 100u);
            pthread_setname_np(h->thread, name);
            h->started = true;
            t->nthreads++;
            t->parties++;
        } else {
            atomic_fetch_sub(&t->readers, 1);
            trap_error(t, "spare handler thread: %s", strerror(r));
        }
    }
    pthread_mutex_unlock(&t->ctl_lock);
}

bool trap_serialize_begin(void *trap, pid_t tid)
{
    struct cxlssd_trap *t = trap;
    /* Another thread serving its own miss (access-path delivery, QEMU's
     * own access) blocks no handler. */
    if (!handler_thread) {
        return t->hooks.serialize_begin(t->hooks.opaque, tid);
    }
    /* The hook may block (the BQL) behind a thread that is about to fault
     * on this range: never let every handler block in it. */
    if (atomic_fetch_sub(&t->readers, 1) == 1) {
        spawn_spare(t);
    }
    bool locked = t->hooks.serialize_begin(t->hooks.opaque, tid);
    atomic_fetch_add(&t->readers, 1);
    return locked;
}

void trap_serialize_end(void *trap)
{
    struct cxlssd_trap *t = trap;
    t->hooks.serialize_end(t->hooks.opaque);
}

static void handle_msg(struct cxlssd_trap *t, const struct uffd_msg *msg,
                       uint64_t t_fault)
{
    if (msg->event != UFFD_EVENT_PAGEFAULT) {
        return;
    }
    atomic_fetch_add_explicit(&t->st_faults, 1, memory_order_relaxed);
    uint64_t addr = msg->arg.pagefault.address;
    uint64_t base = (uint64_t)(uintptr_t)t->base;
    if (addr < base || addr >= base + t->len) {
        return;     /* not ours (cannot happen: one range per uffd) */
    }
    uint64_t page = (addr - base) / t->page_size;
    uint64_t flags = msg->arg.pagefault.flags;
    pid_t tid = (t->probe.enabled & UFFD_FEATURE_THREAD_ID)
                ? (pid_t)msg->arg.pagefault.feat.ptid : 0;

    if (flags & UFFD_PAGEFAULT_FLAG_WP) {
        atomic_fetch_add_explicit(&t->st_wp_faults, 1, memory_order_relaxed);
        enum cxlssd_page_state s = cxlssd_page_state(t->model, page);
        if (t->keep_clean &&
            (s == CXLSSD_NOT_CACHED || s == CXLSSD_EVICTING)) {
            /* A store to a page evicted clean and left mapped: a write
             * miss (it clears the protection and wakes the writer). */
            atomic_fetch_add_explicit(&t->st_host_route, 1,
                                      memory_order_relaxed);
            trap_serve_miss(t, page, true, tid, t_fault, true);
            return;
        }
        if (t->keep_clean && !cxlssd_mark_dirty_resident(t->model, page)) {
            /* chosen as a victim (clean, so it may stay mapped) since the
             * state was read: unprotecting it now would let the store
             * land after its writeback */
            atomic_fetch_add_explicit(&t->st_host_route, 1,
                                      memory_order_relaxed);
            trap_serve_miss(t, page, true, tid, t_fault, true);
            return;
        }
        if (!t->keep_clean) {
            cxlssd_mark_dirty(t->model, page);
        }
        trap_uffd_unprotect(t, page);
        return;
    }
    atomic_fetch_add_explicit(&t->st_host_route, 1, memory_order_relaxed);
    trap_serve_miss(t, page, (flags & UFFD_PAGEFAULT_FLAG_WRITE) != 0, tid,
                    t_fault, true);
}

static void *handler_main(void *arg)
{
    struct trap_handler *h = arg;
    struct cxlssd_trap *t = h->t;
    bool busy = t->cfg.delivery == CXLSSD_DELIVERY_BUSY && !h->spare;
    uint64_t last_event = cxlssd_now_ns();
    struct uffd_msg msg;

    handler_thread = true;
    for (;;) {
        if (atomic_load_explicit(&t->stop, memory_order_relaxed) ||
            trap_park_if_paused(t)) {
            break;
        }
        if (cxlssd_next_prefetch(t->svc) != UINT64_MAX) {
            cxlssd_complete_prefetches(t->svc, cxlssd_now_ns());
        }
        ssize_t n = read(t->uffd, &msg, sizeof(msg));
        if (n == (ssize_t)sizeof(msg)) {
            last_event = cxlssd_now_ns();
            handle_msg(t, &msg, last_event);
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && errno != EAGAIN) {
            trap_error(t, "read(userfaultfd): %s", strerror(errno));
            /* avoid a hot error loop; keep serving */
            struct timespec ts = { 0, 1000000 };
            nanosleep(&ts, NULL);
            continue;
        }
        if (busy && cxlssd_now_ns() - last_event < BUSY_IDLE_NS) {
            cxlssd_cpu_relax();
            continue;
        }
        struct pollfd pfd[2] = {
            { .fd = t->uffd, .events = POLLIN },
            { .fd = t->stop_efd, .events = POLLIN },
        };
        uint64_t next = cxlssd_next_prefetch(t->svc);
        struct timespec ts, *tsp = NULL;
        if (next != UINT64_MAX) {
            uint64_t now = cxlssd_now_ns();
            uint64_t d = next > now ? next - now : 0;
            ts.tv_sec = (time_t)(d / 1000000000ull);
            ts.tv_nsec = (long)(d % 1000000000ull);
            tsp = &ts;
        }
        if (ppoll(pfd, 2, tsp, NULL) < 0 && errno != EINTR) {
            trap_error(t, "ppoll: %s", strerror(errno));
        }
    }
    return NULL;
}

int trap_handlers_start(struct cxlssd_trap *t, char *err, size_t errlen)
{
    static const int max = TRAP_MAX_CPUS;
    int *cpus = calloc(max, sizeof(int));
    if (!cpus) {
        snprintf(err, errlen, "cxl-ssd trap: out of memory");
        return -1;
    }
    int ncpus = trap_parse_cpus(t->handler_cpus, cpus, max, err, errlen);
    if (ncpus < 0) {
        free(cpus);
        return -1;
    }
    for (uint32_t i = 0; i < t->nhandlers; i++) {
        struct trap_handler *h = &t->handlers[i];
        h->t = t;
        h->index = (int)i;
        h->cpu = ncpus > 0 ? cpus[i % (uint32_t)ncpus] : -1;
        h->spare = false;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        if (h->cpu >= 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(h->cpu, &set);
            pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
        }
        int r = pthread_create(&h->thread, &attr, handler_main, h);
        pthread_attr_destroy(&attr);
        if (r != 0) {
            if (h->cpu >= 0 && r == EINVAL) {
                snprintf(err, errlen, "handler-cpus=\"%s\": cannot pin a "
                         "handler thread to CPU %d (not in this process's "
                         "allowed CPUs?)", t->handler_cpus, h->cpu);
            } else {
                snprintf(err, errlen, "cxl-ssd trap: handler thread: %s",
                         strerror(r));
            }
            free(cpus);
            return -1;
        }
        char name[16];
        snprintf(name, sizeof(name), "cxlssd-trap%u", i % 100u);
        pthread_setname_np(h->thread, name);
        h->started = true;
        pthread_mutex_lock(&t->ctl_lock);
        t->nthreads = i + 1;
        pthread_mutex_unlock(&t->ctl_lock);
    }
    free(cpus);
    return 0;
}

void trap_handlers_stop(struct cxlssd_trap *t)
{
    /* t->stop set (so no spare starts any more) and the eventfd written
     * by the caller */
    pthread_mutex_lock(&t->ctl_lock);
    uint32_t n = t->nthreads;
    pthread_mutex_unlock(&t->ctl_lock);
    for (uint32_t i = 0; i < n; i++) {
        if (t->handlers[i].started) {
            pthread_join(t->handlers[i].thread, NULL);
            t->handlers[i].started = false;
        }
    }
}

