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
 * Serving a fault (page = (addr - base) / page_size):
 *   WP event      cxlssd_mark_dirty(), then UFFDIO_WRITEPROTECT(mode=0)
 *                 on the page, which also wakes the faulter.
 *   MINOR event   [hooks->serialize_begin(tid)] -> cxlssd_miss(now) ->
 *     FILL        unmap victims (MADV_DONTNEED, coalesced); queue
 *                 prefetches; wait until the deadline; UFFDIO_CONTINUE
 *                 (MODE_WP for a clean page when tracking dirty; EEXIST ->
 *                 UFFDIO_WAKE); cxlssd_fill_done().  With defer_unmap the
 *                 victims are unmapped after CONTINUE instead (the record's
 *                 t_unmapped_ns then follows t_mapped_ns).
 *     LOADING     someone else's fill (a duplicate event or a prefetched
 *                 page): wait until the page leaves LOADING, completing due
 *                 prefetches meanwhile; CACHED -> UFFDIO_WAKE, else retry
 *     RESIDENT    duplicate event: UFFDIO_WAKE
 *     EVICTING    spin until the eviction finishes, retry
 *   -> [serialize_end] -> kick background eviction -> push a record.
 * A faulting thread is never left un-woken: every path ends in CONTINUE,
 * WRITEPROTECT(mode=0) or WAKE, including the stop path.
 *
 * Compensation (cfg->compensate): the wait is shortened by the delivery
 * already spent when the model decided, measured per miss from the kernel
 * event that raised the fault (t_host_fault_ns, the trap's host fault
 * clock: a page fault, or the KVM exit) when the clock has it, else from
 * the handler's own t_fault (the thread's first miss; counted as
 * unclocked).  On top of it cfg->compensate_ns, a calibrated constant for
 * what no clock sees before the wait ends (the fault's entry before the
 * tracepoint, the faulting thread's way back after UFFDIO_CONTINUE;
 * bench/breakdown/fig1 calibrates it): the wait
 * ends at deadline_model - (decision_start - t_host_fault) - compensate_ns,
 * never before the decision ended.  Records keep both deadlines
 * (t_deadline_model_ns, t_deadline_ns).
 */
#include <errno.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "trap_int.h"

#ifndef UFFD_PAGEFAULT_FLAG_MINOR
#define UFFD_PAGEFAULT_FLAG_MINOR (1 << 2)
#endif

#define SPIN_YIELD_AFTER_NS 50000ull   /* past the hint: start yielding */
/* Busy delivery spins while faults keep coming; after this long without
 * one it sleeps in poll until the next, so an idle device (a working set
 * that fits the cache) does not take a host CPU from the vCPUs. */
#define BUSY_IDLE_NS 10000000ull
#define SLEEP_MIN_NS 200000ull         /* sleep only if >= 200 us away */
#define SPIN_TAIL_NS 50000ull          /* and spin the last 50 us */

/*
 * Waiting.  The wait until a NAND deadline is the model's
 * cxlssd_wait_until() (model/wait.c, shared with the mmio and host-native
 * paths): busy-wait on CLOCK_MONOTONIC for short waits (a sleep's wake-up
 * latency here is tens of us, more than a whole 6.2 us NAND read); for
 * waits >= 200 us (GC, tPROG queues) clock_nanosleep(TIMER_ABSTIME) until
 * 50 us before the deadline, then spin; never returns early.
 * sleep_coarse() is its sleeping half alone, for loops that spin on a
 * condition (a page leaving LOADING) with a deadline as a hint.
 */
static void sleep_coarse(uint64_t deadline_ns)
{
    uint64_t now = trap_now();
    if (deadline_ns <= now || deadline_ns - now < SLEEP_MIN_NS) {
        return;
    }
    uint64_t wake = deadline_ns - SPIN_TAIL_NS;
    struct timespec ts = {
        .tv_sec = (time_t)(wake / 1000000000ull),
        .tv_nsec = (long)(wake % 1000000000ull),
    };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
           EINTR) {
    }
}

/* Wait until @page leaves LOADING.  @hint is its deadline. */
static void loading_wait(struct cxlssd_trap *t, uint64_t page, uint64_t hint)
{
    for (;;) {
        uint64_t now = trap_now();
        trap_prefetch_service(t, now);
        if (cxlssd_page_state(t->model, page) != CXLSSD_LOADING ||
            atomic_load_explicit(&t->stop, memory_order_relaxed)) {
            return;
        }
        uint64_t next = trap_prefetch_next(t);
        if (hint < next) {
            next = hint;
        }
        if (now < next) {
            sleep_coarse(next);         /* only if far away */
            cxlssd_cpu_relax();
        } else if (now - next > SPIN_YIELD_AFTER_NS) {
            sched_yield();  /* the owner may be preempted (2-CPU hosts) */
        } else {
            cxlssd_cpu_relax();
        }
    }
}

/*
 * EVICTING outcome: the page itself is being evicted (wait until its
 * evict_done), or no frame could be had because every frame of its set is
 * loading or being evicted (the page is NOT_CACHED: back off ~1 us before
 * retrying).  @since is when the retries started: after 50 us, yield the
 * CPU to the threads that will finish those fills/evictions (2-CPU hosts).
 */
static void evicting_wait(struct cxlssd_trap *t, uint64_t page,
                          uint64_t since)
{
    uint64_t start = trap_now();
    for (;;) {
        uint64_t now = trap_now();
        trap_prefetch_service(t, now);
        if (atomic_load_explicit(&t->stop, memory_order_relaxed)) {
            return;
        }
        if (cxlssd_page_state(t->model, page) != CXLSSD_EVICTING &&
            now - start > 1000) {
            return;
        }
        if (now - since > SPIN_YIELD_AFTER_NS) {
            sched_yield();
        } else {
            cxlssd_cpu_relax();
        }
    }
}

static void *handler_main(void *arg);

/*
 * Serialize hook (e.g. the BQL) and deadlock avoidance: a handler blocked
 * in serialize_begin() for a vCPU fault waits for a lock whose holder (say
 * QEMU's main loop serving a monitor `xp` or a DMA) may itself fault on the
 * range; if every handler were blocked that fault would never be read.
 * So when the last free handler enters the hook, a spare handler is
 * started (poll delivery, unpinned).  The hook blocks only for vCPU faults
 * and a vCPU has at most one fault outstanding, so at most (vCPUs + 1)
 * threads are ever needed; spares stay until the trap is freed.
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
            fprintf(stderr, "cxl-ssd trap: spare handler thread: %s\n",
                    strerror(r));
        }
    }
    pthread_mutex_unlock(&t->ctl_lock);
}

/*
 * A fault on a page the model holds resident.  Usually a duplicate: the
 * page was mapped after the fault was raised (two vCPUs, or a prefetch
 * completing), and CONTINUE fails with EEXIST and wakes the faulter.  But
 * if the page table lost the mapping while the model kept the page CACHED,
 * only mapping it again ends the fault (a wake alone would make the faulter
 * fault again, forever).  Had the page been picked for eviction meanwhile,
 * the evictor's unmap may have run before this CONTINUE: unmap again, so
 * a page the model does not hold never stays mapped.
 */
static void remap_resident(struct cxlssd_trap *t, uint64_t page)
{
    bool wp = t->wp && !cxlssd_page_dirty(t->model, page);
    if (trap_uffd_continue(t, page, 1, wp) != 0) {
        return;     /* mapped already (woken), or an error (printed) */
    }
    atomic_fetch_add_explicit(&t->st_remaps, 1, memory_order_relaxed);
    enum cxlssd_page_state s = cxlssd_page_state(t->model, page);
    if (s == CXLSSD_NOT_CACHED || s == CXLSSD_EVICTING) {
        trap_unmap_range(t, page, 1);
    }
}

/*
 * A miss on @page by thread @tid, read by the engine at @t_fault.  @fault:
 * it was raised by a page fault (uffd event, SIGBUS), whose kernel time the
 * host fault clock may have; else the miss starts at @t_fault exactly.
 * Only vCPU threads get a clock buffer when the embedder tells vCPUs apart
 * (QEMU): its other threads that touch the range (I/O workers come and go)
 * are not the guest's timing path and would only use up buffers and fds.
 */
static void handle_miss(struct cxlssd_trap *t, uint64_t page, bool write,
                        pid_t tid, uint64_t t_fault, bool fault)
{
    struct cxlssd_miss m;
    struct cxlssd_record rec;
    memset(&rec, 0, sizeof(rec));
    rec.page = page;
    rec.tid = (int32_t)tid;
    rec.vcpu = t->hooks.vcpu_index ? t->hooks.vcpu_index(t->hooks.opaque, tid)
                                   : -1;
    rec.flags = write ? CXLSSD_REC_WRITE : 0;
    rec.victim_page = UINT64_MAX;
    rec.t_fault_ns = t_fault;
    if (!fault) {
        rec.t_host_fault_ns = t_fault;
    } else if (rec.vcpu >= 0 || !t->hooks.vcpu_index) {
        rec.t_host_fault_ns = trap_fault_clock_read(
            t->fault_clock, tid, (uint64_t)(uintptr_t)t->base +
            page * t->page_size, t_fault);
    }
    uint64_t t_host_fault = rec.t_host_fault_ns;

    bool locked = false;
    if (t->hooks.serialize_begin) {
        uint64_t req = trap_now();
        /* The hook may block (the BQL) behind a thread that is about to
         * fault on this range: never let every handler block in it. */
        if (atomic_fetch_sub(&t->readers, 1) == 1) {
            spawn_spare(t);
        }
        locked = t->hooks.serialize_begin(t->hooks.opaque, tid);
        atomic_fetch_add(&t->readers, 1);
        uint64_t acq = trap_now();
        atomic_fetch_add_explicit(&t->st_bql_wait_ns, acq - req,
                                  memory_order_relaxed);
        if (locked) {
            rec.t_bql_req_ns = req;
            rec.t_bql_acq_ns = acq;
        }
    }

    bool filled = false, waited = false, first = true;
    uint64_t evict_since = 0;
    while (!atomic_load_explicit(&t->stop, memory_order_relaxed)) {
        cxlssd_miss(t->model, page, write, trap_now(), &m);
        if (first && m.outcome != CXLSSD_MISS_FILL) {
            atomic_fetch_add_explicit(&t->st_duplicate, 1,
                                      memory_order_relaxed);
        }
        first = false;
        if (m.outcome == CXLSSD_MISS_FILL) {
            rec.t_decision_start_ns = m.decision_start_ns;
            rec.t_decision_end_ns = m.decision_end_ns;
            if (m.nvictims > 0) {
                rec.nvictims = m.nvictims;
                rec.victim_page = m.victims[0].page;
                for (uint32_t i = 0; i < m.nvictims; i++) {
                    if (m.victims[i].dirty) {
                        rec.flags |= CXLSSD_REC_DIRTY_EVICT;
                    }
                }
                if (!t->cfg.defer_unmap) {
                    trap_unmap_victims(t, m.victims, m.nvictims);
                    rec.t_unmapped_ns = trap_now();
                }
            }
            if (m.nprefetch > 0) {
                rec.flags |= CXLSSD_REC_PREFETCH_ISSUED;
                trap_prefetch_push(t, m.prefetch, m.nprefetch);
            }
            uint64_t deadline = m.deadline_ns;
            if (t->cfg.compensate) {
                uint64_t since = t_host_fault ? t_host_fault : t_fault;
                uint64_t shift = t->cfg.compensate_ns;
                if (m.decision_start_ns > since) {
                    shift += m.decision_start_ns - since;
                }
                if (!t_host_fault) {
                    atomic_fetch_add_explicit(&t->st_unclocked, 1,
                                              memory_order_relaxed);
                }
                deadline = deadline > shift ? deadline - shift : 0;
                if (deadline < m.decision_end_ns) {
                    deadline = m.decision_end_ns;
                }
                if (deadline > m.deadline_ns) {
                    deadline = m.deadline_ns;
                }
                if (deadline < m.deadline_ns) {
                    rec.flags |= CXLSSD_REC_COMPENSATED;
                }
            }
            rec.t_deadline_model_ns = m.deadline_ns;
            rec.t_deadline_ns = deadline;
            rec.t_wait_end_ns = cxlssd_wait_until(deadline);
            bool wp = !write && !cxlssd_page_dirty(t->model, page);
            int r = trap_uffd_continue(t, page, 1, wp);
            rec.t_mapped_ns = trap_now();
            if (r < 0) {
                fprintf(stderr, "cxl-ssd trap: UFFDIO_CONTINUE(page %llu): "
                        "%s\n", (unsigned long long)page, strerror(-r));
            }
            cxlssd_fill_done(t->model, page);
            filled = true;
            if (t->cfg.defer_unmap && m.nvictims > 0) {
                /* the faulter runs again: unmap off its critical path */
                trap_unmap_victims(t, m.victims, m.nvictims);
                rec.t_unmapped_ns = trap_now();
            }
            break;
        } else if (m.outcome == CXLSSD_MISS_LOADING) {
            waited = true;
            rec.flags |= CXLSSD_REC_WAITED_LOADING;
            if (m.prefetch_hit) {
                rec.flags |= CXLSSD_REC_PREFETCH_HIT;
            }
            if (!rec.t_decision_start_ns) {
                rec.t_decision_start_ns = m.decision_start_ns;
                rec.t_decision_end_ns = m.decision_end_ns;
                rec.t_deadline_ns = m.deadline_ns;
                rec.t_deadline_model_ns = m.deadline_ns;
            }
            loading_wait(t, page, m.deadline_ns);
            rec.t_wait_end_ns = trap_now();
            if (cxlssd_page_state(t->model, page) == CXLSSD_CACHED) {
                trap_uffd_wake(t, page, 1);
                rec.t_mapped_ns = trap_now();
                break;
            }
            /* evicted again already (or evicting): retry as a miss */
        } else if (m.outcome == CXLSSD_MISS_RESIDENT) {
            remap_resident(t, page);
            if (waited) {
                rec.t_mapped_ns = trap_now();
            }
            break;
        } else {    /* EVICTING */
            if (!evict_since) {
                evict_since = trap_now();
            }
            evicting_wait(t, page, evict_since);
        }
    }
    if (atomic_load_explicit(&t->stop, memory_order_relaxed) &&
        !filled) {
        trap_uffd_wake(t, page, 1);     /* never leave a faulter blocked */
    }

    if (locked) {
        t->hooks.serialize_end(t->hooks.opaque);
        rec.t_bql_rel_ns = trap_now();
    }
    trap_evict_kick(t);
    if (filled || waited) {
        if (t->cfg.record_ab) {     /* measurement aid, see trap.h */
            uint64_t ord = atomic_fetch_add_explicit(&t->miss_ordinal, 1,
                                                     memory_order_relaxed);
            if ((ord / t->cfg.record_ab) & 1) {
                return;
            }
        }
        if (t->ring) {
            cxlssd_record_push(t->ring, &rec);
        }
        if (t->hooks.miss_done) {
            t->hooks.miss_done(t->hooks.opaque, &rec);
        }
    }
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
        cxlssd_mark_dirty(t->model, page);
        trap_uffd_unprotect(t, page);
        return;
    }
    handle_miss(t, page, (flags & UFFD_PAGEFAULT_FLAG_WRITE) != 0, tid,
                t_fault, true);
}

/*
 * In-thread SIGBUS delivery (CXLSSD_DELIVERY_SIGBUS).
 *
 * The range is registered with UFFD_FEATURE_SIGBUS: the kernel raises
 * SIGBUS on the faulting thread instead of queueing an event, and the
 * handler below serves the miss right there: handle_miss() as for a uffd
 * event (model, unmap, NAND wait, UFFDIO_CONTINUE with DONTWAKE, record),
 * with t_fault_ns = handler entry.  Returning retries the access.  A
 * SIGBUS on a resident (CACHED) page is a write-protect fault (first write
 * to a clean page) if the access was a write, else a fault on a page that
 * another thread mapped meanwhile: retry.  On x86-64 the page-fault error
 * code in the signal frame (REG_ERR bit 1) tells writes from reads; on
 * other architectures every miss is served as a read, and a write then
 * faults once more as a write-protect fault, which marks the page dirty.
 *
 * Why running the engine in a signal handler is safe here: the signal is
 * synchronous and raised only by an access to the registered range, and
 * the engine itself never dereferences the range (it only calls madvise
 * and ioctls, which fail rather than fault).  So the interrupted thread is
 * never inside the model or the engine and holds none of their locks (the
 * model's futex mutex, the FTL mutex, the prefetch and eviction mutexes)
 * when the handler takes them; other threads holding them make the handler
 * wait like any contender.  The caller's contract (trap.h) extends this to
 * its own code: it touches the range only from plain loads and stores,
 * never while holding stdio or malloc locks (MIO's chase and verify loops).
 * The handler calls no stdio or malloc on its normal path (qsort of at most
 * CXLSSD_MAX_VICTIMS entries sorts on the stack; errors are printed with
 * fprintf, which is not async-signal-safe but only on a failed ioctl), and
 * keeps errno.
 *
 * Ranges are found in a small process-wide table (signal handlers are
 * process-wide; this is the engine's only global state).  A detached trap
 * leaves a tombstone (range kept, trap NULL): a signal raised just before
 * the range was unregistered then retries the access instead of going to
 * the previous handler (a live trap covering the address wins; a new trap
 * clears the tombstones it overlaps).  Each slot counts handlers running on it, and
 * detach waits for that count to drop to zero before the trap is freed.
 */
#define TRAP_SIGBUS_SLOTS 16

struct trap_sigbus_slot {
    _Atomic uintptr_t base;
    _Atomic uintptr_t len;
    _Atomic(struct cxlssd_trap *) trap;
    atomic_uint active;
};

static struct trap_sigbus_slot sigbus_slots[TRAP_SIGBUS_SLOTS];
static pthread_mutex_t sigbus_lock = PTHREAD_MUTEX_INITIALIZER;
static bool sigbus_installed;
static struct sigaction sigbus_prev;

static bool sigbus_is_write(void *uctx)
{
#if defined(__x86_64__) && defined(REG_ERR)
    const ucontext_t *uc = uctx;
    return uctx && (uc->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#else
    (void)uctx;
    return false;
#endif
}

static void sigbus_serve(struct cxlssd_trap *t, uintptr_t addr, bool write,
                         uint64_t t_fault)
{
    uint64_t page = (addr - (uintptr_t)t->base) / t->page_size;
    atomic_fetch_add_explicit(&t->st_faults, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&t->st_sigbus, 1, memory_order_relaxed);
    if (atomic_load_explicit(&t->stop, memory_order_relaxed)) {
        return;     /* going away: retry until the range is unregistered */
    }
    if (cxlssd_page_state(t->model, page) == CXLSSD_CACHED) {
        if (write && t->wp) {
            atomic_fetch_add_explicit(&t->st_wp_faults, 1,
                                      memory_order_relaxed);
            cxlssd_mark_dirty(t->model, page);
            trap_uffd_unprotect(t, page);
            /* a SIGBUS does not say whether the page was mapped at all */
            remap_resident(t, page);
        } else {
            atomic_fetch_add_explicit(&t->st_duplicate, 1,
                                      memory_order_relaxed);
            remap_resident(t, page);
        }
        return;
    }
    /* the thread id costs a system call: once per thread */
    static _Thread_local pid_t tid;
    if (!tid) {
        tid = (pid_t)syscall(SYS_gettid);
    }
    handle_miss(t, page, write, tid, t_fault, true);
}

void cxlssd_trap_access(struct cxlssd_trap *t, uint64_t offset,
                        uint64_t len, bool write)
{
    if (!len || offset >= t->len) {
        return;
    }
    uint64_t last = (offset + len - 1 < t->len ? offset + len - 1
                                               : t->len - 1) / t->page_size;
    for (uint64_t page = offset / t->page_size; page <= last; page++) {
        if (atomic_load_explicit(&t->stop, memory_order_relaxed)) {
            return;
        }
        if (cxlssd_page_state(t->model, page) == CXLSSD_CACHED) {
            if (write) {
                cxlssd_mark_dirty(t->model, page);
            }
            continue;
        }
        static _Thread_local pid_t tid;
        if (!tid) {
            tid = (pid_t)syscall(SYS_gettid);
        }
        handle_miss(t, page, write, tid, trap_now(), false);
    }
}

static void sigbus_chain(int sig, siginfo_t *si, void *uctx)
{
    if (sigbus_prev.sa_flags & SA_SIGINFO) {
        if (sigbus_prev.sa_sigaction) {
            sigbus_prev.sa_sigaction(sig, si, uctx);
            return;
        }
    } else if (sigbus_prev.sa_handler != SIG_DFL &&
               sigbus_prev.sa_handler != SIG_IGN) {
        sigbus_prev.sa_handler(sig);
        return;
    }
    /* SIG_DFL (or SIG_IGN, which cannot apply to a fault): restore the
     * default and return; the access faults again and the process dies
     * with SIGBUS as it would have without us. */
    signal(sig, SIG_DFL);
}

static void sigbus_handler(int sig, siginfo_t *si, void *uctx)
{
    int saved_errno = errno;
    uint64_t now = trap_now();
    uintptr_t addr = (uintptr_t)si->si_addr;
    bool tombstone = false;
    for (int i = 0; i < TRAP_SIGBUS_SLOTS; i++) {
        struct trap_sigbus_slot *s = &sigbus_slots[i];
        uintptr_t b = atomic_load(&s->base), l = atomic_load(&s->len);
        if (!l || addr < b || addr - b >= l) {
            continue;
        }
        atomic_fetch_add(&s->active, 1);
        struct cxlssd_trap *t = atomic_load(&s->trap);
        if (t && (uintptr_t)t->base == b) {
            sigbus_serve(t, addr, sigbus_is_write(uctx), now);
            atomic_fetch_sub(&s->active, 1);
            errno = saved_errno;
            return;
        }
        atomic_fetch_sub(&s->active, 1);
        tombstone = true;   /* a live trap may still cover it: go on */
    }
    if (!tombstone) {
        sigbus_chain(sig, si, uctx);
    }
    /* else the range was just unregistered: the access retries */
    errno = saved_errno;
}

int trap_sigbus_attach(struct cxlssd_trap *t, char *err, size_t errlen)
{
    pthread_mutex_lock(&sigbus_lock);
    if (!sigbus_installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = sigbus_handler;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGBUS, &sa, &sigbus_prev) < 0) {
            snprintf(err, errlen, "delivery=sigbus: sigaction(SIGBUS): %s",
                     strerror(errno));
            pthread_mutex_unlock(&sigbus_lock);
            return -1;
        }
        sigbus_installed = true;    /* stays installed: late signals */
    }
    /* Tombstones overlapping the new range go (a signal for the new range
     * must not be taken for a late one of the old); then take a free slot,
     * else a tombstone nobody is running on. */
    uintptr_t nb = (uintptr_t)t->base, nl = (uintptr_t)t->len;
    for (int i = 0; i < TRAP_SIGBUS_SLOTS; i++) {
        struct trap_sigbus_slot *s = &sigbus_slots[i];
        uintptr_t b = atomic_load(&s->base), l = atomic_load(&s->len);
        if (l && !atomic_load(&s->trap) && b < nb + nl && nb < b + l) {
            atomic_store(&s->len, 0);
            while (atomic_load(&s->active)) {
                sched_yield();
            }
        }
    }
    int slot = -1;
    for (int pass = 0; pass < 2 && slot < 0; pass++) {
        for (int i = 0; i < TRAP_SIGBUS_SLOTS; i++) {
            struct trap_sigbus_slot *s = &sigbus_slots[i];
            if (atomic_load(&s->trap) || atomic_load(&s->active)) {
                continue;
            }
            if (pass == 1 || atomic_load(&s->len) == 0) {
                slot = i;
                break;
            }
        }
    }
    if (slot < 0) {
        snprintf(err, errlen, "delivery=sigbus: more than %d traps with "
                 "SIGBUS delivery in one process", TRAP_SIGBUS_SLOTS);
        pthread_mutex_unlock(&sigbus_lock);
        return -1;
    }
    struct trap_sigbus_slot *s = &sigbus_slots[slot];
    atomic_store(&s->len, 0);       /* no match while being rewritten */
    atomic_store(&s->base, (uintptr_t)t->base);
    atomic_store(&s->trap, t);
    atomic_store(&s->len, (uintptr_t)t->len);
    t->sigbus_slot = slot;
    pthread_mutex_unlock(&sigbus_lock);
    return 0;
}

void trap_sigbus_detach(struct cxlssd_trap *t)
{
    if (t->sigbus_slot < 0) {
        return;
    }
    pthread_mutex_lock(&sigbus_lock);
    struct trap_sigbus_slot *s = &sigbus_slots[t->sigbus_slot];
    atomic_store(&s->trap, NULL);   /* tombstone: range kept */
    while (atomic_load(&s->active)) {
        sched_yield();
    }
    t->sigbus_slot = -1;
    pthread_mutex_unlock(&sigbus_lock);
}

static void *handler_main(void *arg)
{
    struct trap_handler *h = arg;
    struct cxlssd_trap *t = h->t;
    bool busy = t->cfg.delivery == CXLSSD_DELIVERY_BUSY && !h->spare;
    uint64_t last_event = trap_now();
    struct uffd_msg msg;

    for (;;) {
        if (atomic_load_explicit(&t->stop, memory_order_relaxed) ||
            trap_park_if_paused(t)) {
            break;
        }
        if (trap_prefetch_next(t) != UINT64_MAX) {
            trap_prefetch_service(t, trap_now());
        }
        ssize_t n = read(t->uffd, &msg, sizeof(msg));
        if (n == (ssize_t)sizeof(msg)) {
            last_event = trap_now();
            handle_msg(t, &msg, last_event);
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && errno != EAGAIN) {
            fprintf(stderr, "cxl-ssd trap: read(userfaultfd): %s\n",
                    strerror(errno));
            /* avoid a hot error loop; keep serving */
            struct timespec ts = { 0, 1000000 };
            nanosleep(&ts, NULL);
            continue;
        }
        if (busy && trap_now() - last_event < BUSY_IDLE_NS) {
            cxlssd_cpu_relax();
            continue;
        }
        struct pollfd pfd[2] = {
            { .fd = t->uffd, .events = POLLIN },
            { .fd = t->stop_efd, .events = POLLIN },
        };
        uint64_t next = trap_prefetch_next(t);
        struct timespec ts, *tsp = NULL;
        if (next != UINT64_MAX) {
            uint64_t now = trap_now();
            uint64_t d = next > now ? next - now : 0;
            ts.tv_sec = (time_t)(d / 1000000000ull);
            ts.tv_nsec = (long)(d % 1000000000ull);
            tsp = &ts;
        }
        if (ppoll(pfd, 2, tsp, NULL) < 0 && errno != EINTR) {
            fprintf(stderr, "cxl-ssd trap: ppoll: %s\n", strerror(errno));
        }
    }
    return NULL;
}

int trap_parse_cpus(const char *list, int *cpus, int max, char *err,
                    size_t errlen)
{
    int n = 0;
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    if (ncpu < 1 || ncpu > CPU_SETSIZE) {
        ncpu = CPU_SETSIZE;
    }
    if (!list || !*list) {
        return 0;
    }
    const char *p = list;
    while (*p) {
        char *end;
        errno = 0;
        long a = strtol(p, &end, 10);
        if (end == p || errno || a < 0) {
            goto bad;
        }
        long b = a;
        p = end;
        if (*p == '-') {
            p++;
            b = strtol(p, &end, 10);
            if (end == p || errno || b < a) {
                goto bad;
            }
            p = end;
        }
        if (b >= ncpu) {
            snprintf(err, errlen, "handler-cpus=\"%s\": CPU %ld does not "
                     "exist (this host has CPUs 0-%ld)", list, b, ncpu - 1);
            return -1;
        }
        for (long c = a; c <= b; c++) {
            if (n >= max) {
                snprintf(err, errlen, "handler-cpus=\"%s\": more than %d "
                         "entries", list, max);
                return -1;
            }
            cpus[n++] = (int)c;
        }
        if (*p == ',') {
            p++;
            if (!*p) {
                goto bad;
            }
        } else if (*p) {
            goto bad;
        }
    }
    return n;
bad:
    snprintf(err, errlen, "handler-cpus=\"%s\": expected a list of CPU "
             "numbers or ranges such as \"0,1\" or \"0-3\"", list);
    return -1;
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
