/*
 * The miss service: how every miss of a cxl-ssd device is served, whoever
 * delivered it -- a userfaultfd handler thread, the SIGBUS handler on the
 * faulting thread, QEMU's own access to the window (trap/), the mmio
 * callback on a vCPU thread (cxl_ssd_mmio.c), the host-native tool (through
 * the trap).  One place for the decision, compensation, the NAND wait,
 * mapping, the per-miss record, prefetch completion and the trace hooks;
 * see miss_service.c for the path itself (its other files are listed in
 * miss_service_int.h).
 *
 * What differs between those deliveries is supplied by a substrate: how to
 * map and unmap a page, how to wake a faulter, and which lock to drop while
 * waiting.  Plain C11, no QEMU headers.
 */
#ifndef CXLSSD_MODEL_MISS_SERVICE_H
#define CXLSSD_MODEL_MISS_SERVICE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model.h"
#include "record.h"

struct cxlssd_substrate {
    void *opaque;
    /*
     * Unmap the pages of @n victims (contiguous runs coalesced); the
     * service then calls cxlssd_evict_done() for each.  NULL: nothing is
     * mapped (mmio: residency is the model's page state alone).
     */
    void (*unmap)(void *opaque, const struct cxlssd_victim *v, uint32_t n);
    /*
     * After unmap(), before cxlssd_evict_done(), for a miss's victims only
     * (not for the unmap of a stray mapping): the victims leave host memory
     * (the media store: dirty ones written to the file, then dropped from
     * the memfd).  May be NULL.
     */
    void (*evict)(void *opaque, const struct cxlssd_victim *v, uint32_t n);
    /*
     * Map @page, filled for a write access if @write (else it may be mapped
     * so that the first write traps), and wake its faulters.  Returns 0 if
     * it mapped the page, 1 if it was mapped already, < 0 on an error (the
     * substrate reports it; faulters are woken anyway).  NULL: as unmap.
     */
    int (*map)(void *opaque, uint64_t page, bool write);
    /*
     * Put the data of @page where map() finds it (the media store: read it
     * from the file into the memfd).  Called once the fill is decided,
     * before the NAND wait, whose deadline is absolute: a copy shorter than
     * the wait costs the faulter nothing.  A prefetched page is filled when
     * it completes.  May be NULL (data never moves).
     */
    void (*fill)(void *opaque, uint64_t page);
    /* Wake the faulters of @page, mapped by someone else.  May be NULL. */
    void (*wake)(void *opaque, uint64_t page);
    /*
     * Around every wait of the service (NAND deadline, a page leaving
     * LOADING or EVICTING): drop a lock the caller holds and take it again
     * (mmio with bql=off: the BQL).  wait_begin() returns true if it
     * dropped one; only then is wait_end() called.  May be NULL.
     */
    bool (*wait_begin)(void *opaque);
    void (*wait_end)(void *opaque);
    /*
     * Before the decision for a miss of thread @tid: take a lock that
     * serialises misses (bql=on: the BQL) and return true, or return
     * false.  serialize_end() releases it.  May be NULL.
     */
    bool (*serialize_begin)(void *opaque, pid_t tid);
    void (*serialize_end)(void *opaque);
    /* After a miss was served, before its record is pushed (the trap kicks
     * its background evictor).  May be NULL. */
    void (*after_miss)(void *opaque);
    /*
     * Every access reaches the service, not just faults (mmio): a page
     * found resident is a hit the model counts (cxlssd_hit()), nothing is
     * recorded for it, and a wait for another fill ends in a new decision.
     * Otherwise a resident page is a duplicate fault, resolved by mapping
     * it again (or waking its faulter).
     */
    bool every_access;
};

/*
 * Trace hooks, one per stage a researcher traces; each may be NULL.  Called
 * with the service's trace opaque, never from a signal handler (they may
 * take locks: QEMU's trace backends do), so a miss served in the SIGBUS
 * handler emits none of them; its record still reaches the CSV.
 */
struct cxlssd_miss_trace {
    /* a miss enters the service */
    void (*fault)(void *opaque, uint64_t page, bool write, int32_t tid,
                  int32_t vcpu);
    /* cxlssd_miss() decided (any outcome) */
    void (*decision)(void *opaque, const struct cxlssd_miss *m);
    /* a victim was unmapped (evict_done follows) */
    void (*evict)(void *opaque, uint64_t page, bool dirty);
    /* a dirty victim's writeback was charged on the NAND */
    void (*writeback)(void *opaque, uint64_t page);
    /* those writebacks garbage-collected @blocks victim blocks */
    void (*gc)(void *opaque, uint64_t page, uint32_t blocks);
    void (*prefetch_issue)(void *opaque, uint64_t page, uint64_t deadline_ns);
    void (*prefetch_complete)(void *opaque, uint64_t page);
    /* the missing page was mapped after its NAND wait */
    void (*map)(void *opaque, uint64_t page, uint64_t deadline_ns,
                uint64_t mapped_ns);
    /* a miss is done, with the record pushed for it (not called for the
     * misses record_ab leaves out) */
    void (*miss_done)(void *opaque, const struct cxlssd_record *rec);
};

struct cxlssd_miss_service_config {
    struct cxlssd_substrate substrate;
    struct cxlssd_miss_trace trace;     /* hooks may be NULL */
    void *trace_opaque;
    struct cxlssd_record_ring *ring;    /* receives the records; NULL: none */
    /* once *stop is true, waits end and faulters are woken without a fill;
     * NULL: never */
    const atomic_bool *stop;
    /*
     * Shorten each NAND wait by the delivery time already spent when the
     * model decided (from the request's t_host_fault_ns, else its
     * t_fault_ns), plus compensate_ns, a calibrated constant for what no
     * clock sees; never before the decision ended.
     */
    bool compensate;
    uint64_t compensate_ns;
    /* 0: record every miss; N: only those whose ordinal (count of served
     * misses, from 0) falls in an even run of N (bench/breakdown) */
    uint32_t record_ab;
    /* a wait that ends more than this after its deadline is late: its
     * record is flagged CXLSSD_REC_LATE_WAIT and late_waits counts it */
    uint64_t late_wait_ns;
    /* unmap victims after the page is mapped instead of before the wait */
    bool defer_unmap;
    /*
     * eviction=batch: a fill that finds the model's free frames below its
     * low watermark frees them up to the high one before its own wait
     * (cxlssd_evict_background's victims, one unmap call per batch): no
     * worker thread, and one miss in (high - low) frames pays for the
     * others.  Its record counts the batch in nvictims.  The page being
     * filled is LOADING meanwhile, so the batch never evicts it.
     */
    bool batch_evict;
};

struct cxlssd_miss_request {
    uint64_t page;
    bool write;
    int32_t tid;                /* faulting host thread */
    int32_t vcpu;               /* its vCPU index, -1 if none */
    uint64_t t_fault_ns;        /* when the fault reached the embedder */
    uint64_t t_host_fault_ns;   /* when the kernel took it, 0 = unknown */
    bool in_signal_handler;     /* no trace hooks (see above) */
    /*
     * The thread serving the miss is the accessor and nothing reaches the
     * page but through the model's state (TCG's TLB fill: other vCPUs
     * find it LOADING and wait): map it inside the NAND wait, so the
     * mapping's cost hides in the wait as an unmap's does (t_mapped then
     * precedes t_wait_end).  Not for a faulter another thread serves: the
     * mapping would let it run before the deadline.
     */
    bool map_in_wait;
};

struct cxlssd_miss_service_stats {
    uint64_t duplicate_faults;  /* first decision found no fill to start */
    uint64_t remaps;            /* resident pages that were not mapped */
    uint64_t unclocked_misses;  /* compensated without t_host_fault_ns */
    uint64_t serialize_wait_ns; /* total time in serialize_begin() */
    uint64_t late_waits;        /* waits that overshot by > late_wait_ns */
};

struct cxlssd_miss_service;

/* @cfg is copied.  NULL with a message in @err. */
struct cxlssd_miss_service *
cxlssd_miss_service_new(struct cxlssd_model *model,
                        const struct cxlssd_miss_service_config *cfg,
                        char *err, size_t errlen);
void cxlssd_miss_service_free(struct cxlssd_miss_service *svc);
/* Records go to @ring from now on (NULL: none). */
void cxlssd_miss_service_set_ring(struct cxlssd_miss_service *svc,
                                  struct cxlssd_record_ring *ring);

/* Serve a miss: returns once the page is resident (or the service stops). */
void cxlssd_serve_miss(struct cxlssd_miss_service *svc,
                       const struct cxlssd_miss_request *req);
/* A fault on a page the model holds resident (duplicate, or the mapping
 * was lost): map it again if it is not mapped. */
void cxlssd_serve_resident_fault(struct cxlssd_miss_service *svc,
                                 uint64_t page);
/* Wait until no cxlssd_serve_resident_fault() may still map a page it
 * found CACHED: an evictor that unmapped its victims calls it before it
 * copies their data out to drop them.  Async-signal-safe. */
void cxlssd_wait_resident_remaps(struct cxlssd_miss_service *svc);

/* Complete the prefetches whose deadline is <= @now (cheap when none is
 * due: one atomic load); returns how many.  Not from a signal handler. */
uint32_t cxlssd_complete_prefetches(struct cxlssd_miss_service *svc,
                                    uint64_t now);
/* Earliest pending prefetch deadline, UINT64_MAX if none. */
uint64_t cxlssd_next_prefetch(const struct cxlssd_miss_service *svc);
/* Complete every pending prefetch now, whatever its deadline. */
void cxlssd_complete_all_prefetches(struct cxlssd_miss_service *svc);

void cxlssd_miss_service_get_stats(const struct cxlssd_miss_service *svc,
                                   struct cxlssd_miss_service_stats *out);

#endif
