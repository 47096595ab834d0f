/*
 * In-thread SIGBUS delivery (CXLSSD_DELIVERY_SIGBUS), and QEMU's own
 * accesses to the range in that mode (cxlssd_trap_access()).
 *
 * The range is registered with UFFD_FEATURE_SIGBUS: the kernel raises
 * SIGBUS on the faulting thread instead of queueing an event, and the
 * handler below serves the miss right there: the miss service as for a
 * uffd event (model, unmap, NAND wait, UFFDIO_CONTINUE with DONTWAKE,
 * record; no trace hooks),
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
 * CXLSSD_MAX_VICTIMS entries sorts on the stack; an error on a failed
 * ioctl is formatted with vsnprintf and written with write(2), bypassing
 * the embedder's error hook), and keeps errno.
 *
 * Process-wide state, forced by the signal handler being process-wide (the
 * engine's only globals): the range table below and the saved previous
 * handler; error.c keeps the per-thread flag that tells trap_error() and
 * the miss service that the thread is inside the handler (no hooks that
 * may lock).
 *
 * A detached trap leaves a tombstone in the table (range kept, trap
 * NULL): a signal raised just before the range was unregistered then
 * retries the access instead of going to the previous handler (a live
 * trap covering the address wins; a new trap clears the tombstones it
 * overlaps).  Each slot counts handlers running on it, and detach waits
 * for that count to drop to zero before the trap is freed.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "trap_int.h"

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
            cxlssd_serve_resident_fault(t->svc, page);
        } else {
            atomic_fetch_add_explicit(&t->st_duplicate, 1,
                                      memory_order_relaxed);
            cxlssd_serve_resident_fault(t->svc, page);
        }
        return;
    }
    trap_serve_miss(t, page, write, trap_thread_id(), t_fault, true);
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
                /* the caller stores through another mapping */
                trap_media_note_writable(t, page, 1);
                cxlssd_mark_dirty(t->model, page);
            }
            continue;
        }
        trap_serve_miss(t, page, write, trap_thread_id(), cxlssd_now_ns(), false);
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
    uint64_t now = cxlssd_now_ns();
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
            bool outer = trap_set_in_signal_handler(true);
            sigbus_serve(t, addr, sigbus_is_write(uctx), now);
            trap_set_in_signal_handler(outer);
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

