/*
 * cxl-ssd trap engine: internal state shared by the trap's source files.
 * Not part of the interface (see trap.h).  Every piece of state lives in
 * struct cxlssd_trap so several traps per process work, except what the
 * SIGBUS signal handler forces (a signal handler is process-wide): the
 * range table and the per-thread "in the handler" flag of sigbus.c,
 * documented there.
 *
 * Files, one job each (a file calls only files listed after it):
 *   trap.c        life cycle (new/free), names
 *   trap_stats.c  statistics
 *   handler.c     handler threads: read uffd events, serialisation hook
 *   sigbus.c      in-thread SIGBUS delivery, QEMU's own accesses
 *   tlb.c         access-path delivery (the embedder's TLB fill)
 *   serve.c       a fault -> a request for the miss service
 *                 (model/miss_service.c), and the uffd substrate it uses
 *   evict.c       unmapping, the background eviction worker
 *   media.c       the media store: fills, writebacks, flush at reset/exit
 *   quiesce.c     pausing every thread for a reset; cxlssd_trap_reset()
 *   uffd.c        userfaultfd setup and ioctls
 *   fault_clock.c when the kernel took a thread's fault
 *   cpus.c        handler-cpus lists
 *   error.c       error messages through the embedder's hook
 * (handler.c's serialisation hooks reach serve.c's substrate through
 * trap.c, which builds the miss service.)
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
#include "../model/clock.h"
#include "../model/media.h"
#include "../model/miss_service.h"
#include "../model/record_writer.h"
#include "../model/relax.h"


/* ---- error.c ---- */
/* Report an error (printf format, no newline) through hooks.error, or to
 * stderr with write(2) if there is no hook or we are in the SIGBUS
 * handler (the hook may not be async-signal-safe). */
void trap_error(struct cxlssd_trap *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Whether the calling thread runs the SIGBUS handler (set by sigbus.c
 * around serving a signal; returns the previous value). */
bool trap_set_in_signal_handler(bool in);
bool trap_in_signal_handler(void);
/* The calling thread's id (one system call per thread). */
pid_t trap_thread_id(void);

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

/* ---- cpus.c ---- */
/* Parse a handler-cpus list into @cpus (at most @max); returns the count
 * (0 for NULL or ""), or -1 with a message naming handler-cpus. */
int trap_parse_cpus(const char *list, int *cpus, int max, char *err,
                    size_t errlen);

/* ---- media.c: the media store behind the memfd (trap.h) ---- */
int trap_media_open(struct cxlssd_trap *t, char *err, size_t errlen);
/* Pages [@page, @page + @n) become writable in the memfd: a persistent
 * cache marks them first (model/media.h).  Async-signal-safe. */
void trap_media_note_writable(struct cxlssd_trap *t, uint64_t page,
                              uint64_t n);

/* Write back every dirty cached page; @drop: punch them out of the memfd
 * too (reset).  Only while no fill or eviction runs. */
void trap_media_flush(struct cxlssd_trap *t, bool drop);
/* Flush and close (clean). */
void trap_media_close(struct cxlssd_trap *t);
/* Fill @page into the memfd (before its NAND wait). */
void trap_media_fill(struct cxlssd_trap *t, uint64_t page);
/* @n victims leave host memory: dirty ones written back, then punched. */
void trap_media_evict(struct cxlssd_trap *t, const struct cxlssd_victim *v,
                      uint32_t n);
/* The same for a miss's victims, punched by trap_media_drops() after the
 * miss (on the same thread). */
void trap_media_evict_deferred(struct cxlssd_trap *t,
                               const struct cxlssd_victim *v, uint32_t n);
void trap_media_drops(struct cxlssd_trap *t);

/* ---- quiesce.c: handlers/worker park here while paused ---- */
/* Returns true if the caller should exit (stop requested). */
bool trap_park_if_paused(struct cxlssd_trap *t);
/* Wake every thread sleeping in poll() (stop or pause). */
void trap_wake_pollers(struct cxlssd_trap *t);

/* ---- evict.c ---- */
/* MADV_DONTNEED [first, first+n) of the registered mapping. */
void trap_unmap_range(struct cxlssd_trap *t, uint64_t first, uint64_t n);
/* Unmap the pages of @n victims, coalescing contiguous pages (the caller
 * then calls cxlssd_evict_done() for each). */
void trap_unmap_victims(struct cxlssd_trap *t, const struct cxlssd_victim *v,
                        uint32_t n);
int trap_evict_start(struct cxlssd_trap *t, char *err, size_t errlen);
void trap_evict_stop(struct cxlssd_trap *t);
/* Called after a miss: wakes the worker if below low water. */
void trap_evict_kick(struct cxlssd_trap *t);

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

/* ---- serve.c ---- */
/* The substrate the miss service uses for this trap's mapping; the
 * serialisation hooks are handler.c's. */
void trap_substrate(struct cxlssd_trap *t, struct cxlssd_substrate *sub);
/*
 * A miss on @page by thread @tid, read by the engine at @t_fault (in the
 * SIGBUS handler if trap_in_signal_handler()).  @fault:
 * it was raised by a page fault (uffd event, SIGBUS), whose kernel time the
 * host fault clock may have; else the miss starts at @t_fault exactly.
 */
void trap_serve_miss(struct cxlssd_trap *t, uint64_t page, bool write,
                     pid_t tid, uint64_t t_fault, bool fault);

/* ---- sigbus.c: in-thread SIGBUS delivery (CXLSSD_DELIVERY_SIGBUS) ----
 * attach: install the process-wide handler (once) and publish the range;
 * detach (after unregistering): unpublish and wait for running handlers. */
int trap_sigbus_attach(struct cxlssd_trap *t, char *err, size_t errlen);
void trap_sigbus_detach(struct cxlssd_trap *t);

/* ---- tlb.c: access-path delivery (CXLSSD_DELIVERY_TLB) ---- */
/* Whether the calling thread serves a miss in cxlssd_trap_tlb_fill():
 * nobody sleeps on its page, so mapping it wakes nobody. */
bool trap_in_access_path(void);

/* ---- handler.c ---- */
int trap_handlers_start(struct cxlssd_trap *t, char *err, size_t errlen);
void trap_handlers_stop(struct cxlssd_trap *t);
/* serialize_begin/end for the miss service: hooks.serialize_* plus the
 * spare handler that keeps one handler free to read events. */
bool trap_serialize_begin(void *trap, pid_t tid);
void trap_serialize_end(void *trap);

#define TRAP_MAX_HANDLERS CXLSSD_MAX_HANDLER_THREADS  /* model/config.h */
#define TRAP_MAX_CPUS 1024

struct trap_handler {
    struct cxlssd_trap *t;
    pthread_t thread;
    int index;
    int cpu;                /* -1 = not pinned */
    bool spare;             /* started on demand; always poll delivery */
    bool started;
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
    bool keep_clean;        /* cfg.keep_clean_mapped, no media store */

    /* userfaultfd */
    int uffd;
    int stop_efd;           /* eventfd: readable = wake pollers (stop/pause) */
    struct trap_uffd_probe probe;
    bool registered;
    bool wp;                /* write-protect tracking active */
    bool sigbus;            /* CXLSSD_DELIVERY_SIGBUS: in-thread delivery */
    int sigbus_slot;        /* index in sigbus.c's range table, -1 = none */
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

    /* the miss path (decision, wait, map, records, prefetches) */
    struct cxlssd_miss_service *svc;

    /* per-miss records: ring + low-priority CSV drain thread (model's
     * record_writer); NULL when record_path is unset */
    struct cxlssd_record_writer *rec_writer;
    struct cxlssd_record_ring *ring;

    /* media store (cfg.media_path set); NULL otherwise */
    struct cxlssd_media *media;
    char *media_path;
    char *media_cache_path;     /* persistent cache (trap.h), or NULL */
    int memfd;
    uint64_t memfd_off;
    _Atomic uint64_t media_failures;    /* writebacks that failed */

    /* compensate: per-miss host fault times; NULL otherwise */
    struct trap_fault_clock *fault_clock;

    /* the kernel refused a batched process_madvise: one madvise per run
     * from then on (evict.c) */
    _Atomic bool madvise_per_run;

    /* statistics */
    _Atomic uint64_t st_faults;
    _Atomic uint64_t st_wp_faults;
    _Atomic uint64_t st_duplicate;      /* + the miss service's */
    _Atomic uint64_t st_wakes;
    _Atomic uint64_t st_madvise;
    _Atomic uint64_t st_unmapped;
    _Atomic uint64_t st_sigbus;
    _Atomic uint64_t st_tlb_fill;       /* tlb.c: misses served */
    _Atomic uint64_t st_host_route;     /* MINOR/MISSING events read */
    _Atomic uint64_t st_tlb_inval;      /* hooks.unmapped calls */
    _Atomic uint64_t st_kept_mapped;    /* clean victims left mapped */
};

#endif
