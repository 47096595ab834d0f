/*
 * cxl-ssd trap engine: internal state shared by the trap's source files.
 * Not part of the interface (see trap.h).  No globals anywhere: every piece
 * of state lives in struct cxlssd_trap so several traps per process work.
 */
#ifndef CXLSSD_TRAP_INT_H
#define CXLSSD_TRAP_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "trap.h"
#include "../model/record_writer.h"
#include "../model/wait.h"

/* Spin-wait pause hint. */
static inline void cxlssd_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* CLOCK_MONOTONIC ns: the model's clock (cxlssd_now_ns) without a call. */
static inline uint64_t trap_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- uffd.c: userfaultfd setup and ioctls ---- */
struct trap_uffd_probe {
    uint64_t supported;     /* UFFDIO_API features offered by the kernel */
    uint64_t enabled;       /* features requested and granted */
    bool via_dev;           /* opened through /dev/userfaultfd */
};
int trap_uffd_open(struct cxlssd_trap *t, char *err, size_t errlen);
int trap_uffd_register(struct cxlssd_trap *t, char *err, size_t errlen);
void trap_uffd_unregister(struct cxlssd_trap *t);
/* Map [page, page+n) from the page cache; @wp maps read-only-for-tracking.
 * Returns 0 if it mapped them, 1 if they were mapped already (EEXIST: the
 * faulters are woken), or -errno. */
int trap_uffd_continue(struct cxlssd_trap *t, uint64_t page, uint64_t n,
                       bool wp);
void trap_uffd_wake(struct cxlssd_trap *t, uint64_t page, uint64_t n);
/* Clear write protection on a mapped page (wakes the faulter). */
void trap_uffd_unprotect(struct cxlssd_trap *t, uint64_t page);


/* ---- evict.c ---- */
/* MADV_DONTNEED [first, first+n) of the registered mapping. */
void trap_unmap_range(struct cxlssd_trap *t, uint64_t first, uint64_t n);
/* Unmap @n victims (coalescing contiguous pages), then evict_done each. */
void trap_unmap_victims(struct cxlssd_trap *t, const struct cxlssd_victim *v,
                        uint32_t n);
int trap_evict_start(struct cxlssd_trap *t, char *err, size_t errlen);
void trap_evict_stop(struct cxlssd_trap *t);
/* Called by handlers after a miss: wakes the worker if below low water. */
void trap_evict_kick(struct cxlssd_trap *t);

/* ---- prefetch.c ---- */
int trap_prefetch_init(struct cxlssd_trap *t, char *err, size_t errlen);
void trap_prefetch_destroy(struct cxlssd_trap *t);
void trap_prefetch_push(struct cxlssd_trap *t, const struct cxlssd_prefetch *p,
                        uint32_t n);
/* Complete every queued prefetch whose deadline <= @now.  Cheap when none
 * is due (one atomic load).  Returns the number completed. */
uint32_t trap_prefetch_service(struct cxlssd_trap *t, uint64_t now);
/* Earliest queued deadline, UINT64_MAX if none. */
uint64_t trap_prefetch_next(struct cxlssd_trap *t);
/* Map and complete everything queued now, regardless of deadlines. */
void trap_prefetch_flush(struct cxlssd_trap *t);

/* ---- handler.c ---- */
int trap_handlers_start(struct cxlssd_trap *t, char *err, size_t errlen);
void trap_handlers_stop(struct cxlssd_trap *t);
int trap_parse_cpus(const char *list, int *cpus, int max, char *err,
                    size_t errlen);

/* ---- handler.c: in-thread SIGBUS delivery (CXLSSD_DELIVERY_SIGBUS) ----
 * attach: install the process-wide handler (once) and publish the range;
 * detach (after unregistering): unpublish and wait for running handlers. */
int trap_sigbus_attach(struct cxlssd_trap *t, char *err, size_t errlen);
void trap_sigbus_detach(struct cxlssd_trap *t);

/* ---- fault_clock.c: when the kernel took a thread's fault ---- */
struct trap_fault_clock;
/* Checks the tracepoints and the permission to sample them; NULL with a
 * message in @err.  @page_size: granularity of the address match. */
struct trap_fault_clock *trap_fault_clock_new(size_t page_size, char *err,
                                              size_t errlen);
void trap_fault_clock_free(struct trap_fault_clock *c);
/* CLOCK_MONOTONIC ns of the kernel event (page fault at @addr's page, or
 * KVM exit) that raised @tid's current fault, no later than @not_after_ns;
 * 0 if unknown (the thread's first miss opens its buffer). */
uint64_t trap_fault_clock_read(struct trap_fault_clock *c, pid_t tid,
                               uint64_t addr, uint64_t not_after_ns);

/* ---- quiesce (trap.c): handlers/worker park here while paused ---- */
/* Returns true if the caller should exit (stop requested). */
bool trap_park_if_paused(struct cxlssd_trap *t);

#define TRAP_MAX_HANDLERS 64
#define TRAP_MAX_CPUS 1024

struct trap_handler {
    struct cxlssd_trap *t;
    pthread_t thread;
    int index;
    int cpu;                /* -1 = not pinned */
    bool spare;             /* started on demand; always poll delivery */
    bool started;
};

struct trap_pf_entry {
    uint64_t deadline_ns;
    uint64_t page;
};

struct cxlssd_trap {
    struct cxlssd_model *model;
    char *base;
    size_t len;
    uint64_t npages;
    uint64_t page_size;

    /* configuration (strings copied) */
    struct cxlssd_trap_config cfg;
    char *handler_cpus;
    char *record_path;
    char *mode_name;
    char *accel_name;
    struct cxlssd_trap_hooks hooks;
    bool background;        /* model eviction == background */

    /* userfaultfd */
    int uffd;
    int stop_efd;           /* eventfd: readable = wake pollers (stop/pause) */
    struct trap_uffd_probe probe;
    bool registered;
    bool wp;                /* write-protect tracking active */
    bool sigbus;            /* CXLSSD_DELIVERY_SIGBUS: in-thread delivery */
    int sigbus_slot;        /* index in handler.c's range table, -1 = none */
    char mechanism[256];

    /* threads: handlers[0, nhandlers) configured, then spares up to
     * nthreads (under ctl_lock) */
    uint32_t nhandlers;
    uint32_t nthreads;
    struct trap_handler handlers[TRAP_MAX_HANDLERS];
    atomic_uint readers;    /* handlers not inside serialize_begin() */
    atomic_bool stop;

    /* quiesce for reset */
    pthread_mutex_t ctl_lock;
    pthread_cond_t ctl_cond;
    atomic_bool pause_req;
    uint32_t parked;        /* under ctl_lock */
    uint32_t parties;       /* threads that must park: handlers + worker */
    pthread_mutex_t reset_lock;

    /* background eviction worker (model eviction=background) */
    pthread_t evict_thread;
    bool evict_started;
    pthread_mutex_t evict_lock;
    pthread_cond_t evict_cond;
    atomic_bool evict_kicked;

    /* prefetch completion queue: min-heap on deadline */
    pthread_mutex_t pf_lock;
    struct trap_pf_entry *pf_heap;
    uint32_t pf_len, pf_cap;
    _Atomic uint64_t pf_next;   /* earliest deadline, UINT64_MAX if empty */

    /* per-miss records: ring + low-priority CSV drain thread (model's
     * record_writer); NULL when record_path is unset */
    struct cxlssd_record_writer *rec_writer;
    struct cxlssd_record_ring *ring;

    /* compensate: per-miss host fault times; NULL otherwise */
    struct trap_fault_clock *fault_clock;

    /* statistics */
    _Atomic uint64_t st_faults;
    _Atomic uint64_t st_wp_faults;
    _Atomic uint64_t st_duplicate;
    _Atomic uint64_t st_wakes;
    _Atomic uint64_t st_madvise;
    _Atomic uint64_t st_unmapped;
    _Atomic uint64_t st_bql_wait_ns;
    _Atomic uint64_t miss_ordinal;      /* served misses (cfg.record_ab) */
    _Atomic uint64_t st_sigbus;
    _Atomic uint64_t st_remaps;
    _Atomic uint64_t st_unclocked;      /* compensated without host time */
};

#endif
