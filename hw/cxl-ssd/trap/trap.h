/*
 * cxl-ssd trap engine: serves misses on a memfd-backed mapping through
 * userfaultfd MINOR faults, using the device model for every decision.
 * Plain C11 + Linux, no QEMU headers: the QEMU device and the host-native
 * tool both use it.  Residency is whether a page is mapped in the
 * registered mapping; data never moves (the memfd's page cache holds it).
 *
 *   fault -> request -> the miss service (model/miss_service.c:
 *   [serialize hook, e.g. BQL] -> cxlssd_miss() -> MADV_DONTNEED victims
 *   -> wait until the NAND deadline -> UFFDIO_CONTINUE -> record)
 */
#ifndef CXLSSD_TRAP_H
#define CXLSSD_TRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../model/miss_service.h"
#include "../model/model.h"
#include "../model/record.h"

/*
 * enum cxlssd_delivery (poll, busy, sigbus) is in model/config.h with the
 * other property values.  CXLSSD_DELIVERY_SIGBUS, in-thread delivery (the
 * native tool; the QEMU device under TCG, see cxl_ssd_window.c): the range is
 * registered with UFFD_FEATURE_SIGBUS, the faulting thread gets SIGBUS
 * and serves its own miss in the engine's signal handler (model, unmap,
 * NAND wait, UFFDIO_CONTINUE), then the access retries.  The closest
 * user-space analogue of a synchronous kernel fault path.  Rules:
 *  - threads touching the range must have SIGBUS unblocked;
 *  - the range may only be touched by user-mode code that holds no lock
 *    the handler takes (model/trap locks, stdio, malloc): a plain load
 *    or store in the application, as in MIO.  Kernel accesses (read()
 *    into the range, get_user_pages) to a non-resident page fail with
 *    EFAULT instead of waiting;
 *  - one process-wide SIGBUS handler is installed by the first such
 *    trap (addresses outside every SIGBUS trap go to the previous
 *    handler, or kill the process as SIG_DFL would);
 *  - cxlssd_trap_reset() does not quiesce accessing threads: stop them
 *    first.
 * Handler threads still run (poll mode) to complete prefetches at their
 * deadlines.  Not offered by cxlssd_delivery_from_name().
 *
 * CXLSSD_DELIVERY_TLB, access-path delivery (the QEMU device under TCG):
 * registration and handler threads exactly as POLL, plus
 * cxlssd_trap_tlb_fill(), which the embedder calls on the accessing
 * thread before it lets that thread reach a page through a cached
 * translation (TCG's TLB fill): a non-resident page is served there as a
 * miss (UFFDIO_CONTINUE without a wake).  The embedder drops its cached
 * translations of unmapped pages in the unmapped() hook.  Whatever still
 * faults on the host (an access through a translation that was not
 * dropped yet, any other thread) is served by the handler threads as in
 * POLL; with keep_clean_mapped (below) a victim evicted clean stays
 * mapped, so only stores fault there.  Not offered by
 * cxlssd_delivery_from_name().
 */

struct cxlssd_trap_hooks {
    void *opaque;
    /*
     * Called on a handler thread before the model decision for a fault
     * raised by host thread @tid.  Returns true if it took a lock that
     * serialize_end() must release (the BQL for vCPU threads with bql=on).
     * Must never block on a lock held by @tid itself.  May be NULL.
     * Blocking on a lock held by another thread that then faults on the
     * range is safe: the engine starts a spare handler when the last free
     * one enters this hook.
     */
    bool (*serialize_begin)(void *opaque, pid_t tid);
    void (*serialize_end)(void *opaque);
    /* vCPU index of host thread @tid, or -1.  May be NULL. */
    int (*vcpu_index)(void *opaque, pid_t tid);
    /*
     * An error the engine cannot return (a failed ioctl or madvise on the
     * miss path, a thread that could not start): @msg is one line, no
     * newline.  NULL, and always inside the SIGBUS handler: written to
     * stderr with write(2).
     */
    void (*error)(void *opaque, const char *msg);
    /* A writeback to the media store failed with @err (errno, e.g.
     * ENOSPC), after error() reported it; once per page until it
     * succeeds.  May be NULL; never called in the SIGBUS handler (like
     * the trace hooks; the error line and the counter still are). */
    void (*media_error)(void *opaque, uint64_t page, int err);
    /*
     * Pages [@first, @first + @n) of the range were unmapped (eviction,
     * reset), on whichever thread unmapped them: CXLSSD_DELIVERY_TLB drops
     * the accessors' cached translations of them here.  May be NULL;
     * never called in the SIGBUS handler.
     */
    void (*unmapped)(void *opaque, uint64_t first, uint64_t n);
    /*
     * Trace hooks of the miss path (fault, decision, evict, writeback, GC,
     * prefetch issue/complete, map, miss done with its record), called with
     * @opaque; each may be NULL.  None is called inside the SIGBUS handler
     * (they may take locks); see model/miss_service.h.
     */
    struct cxlssd_miss_trace trace;
};

struct cxlssd_trap_config {
    enum cxlssd_delivery delivery;
    uint32_t handler_threads;   /* >= 1 */
    const char *handler_cpus;   /* "0,1" or "" (no pinning) */
    /*
     * Shorten each miss's NAND wait by the delivery time already spent
     * since the kernel took the fault, measured per miss with the host
     * fault clock (perf samples of the fault tracepoints, fault_clock.c);
     * cxlssd_trap_new() fails if that clock cannot be opened.
     */
    bool compensate;
    /*
     * With compensate: a calibrated, constant part that no clock sees
     * before the wait ends (the fault's entry before the tracepoint fires;
     * UFFDIO_CONTINUE -> the faulting thread runs the access again),
     * subtracted on top of the measured part.
     */
    uint64_t compensate_ns;
    /*
     * Measurement aid (bench/breakdown: the cost of recording, paired
     * within one run): 0 = record every miss; N = record only the misses
     * whose ordinal (count of served misses, from 0) falls in an even run
     * of N, i.e. misses 0..N-1 recorded, N..2N-1 not, ...
     */
    uint32_t record_ab;
    uint64_t late_wait_ns;      /* a wait this far past its deadline is
                                 * late (the miss service's late_wait_ns) */
    bool track_dirty;           /* uffd write-protect for first writes */
    const char *record_path;    /* per-miss CSV, NULL/"" = off */
    const char *mode_name;      /* written into records: "uffd" */
    const char *accel_name;     /* written into records: "tcg"/"kvm"/"native" */
    /*
     * false (default): a miss unmaps its victims before waiting for NAND;
     * the deadline is absolute, so an unmap shorter than the NAND read
     * costs the faulter nothing, and residency is exact.
     * true: unmap them after the faulter was woken (off its critical
     * path); a victim stays mapped (EVICTING) until then, and accesses to
     * it in that window are hits the model does not see.  Only useful
     * where MADV_DONTNEED costs more than a NAND read and does not disturb
     * the running faulter (on the shadow-paging project hosts it does:
     * ~45 us either way, see trap/tests/test_trap_latency.c).
     */
    bool defer_unmap;
    /*
     * CXLSSD_DELIVERY_TLB only (cxlssd_trap_new() refuses it otherwise),
     * for an embedder that reaches the range only through translations it
     * drops itself in the unmapped() hook, at once or before the accessor
     * next runs guest code (the QEMU device: TCG's TLB).  A victim that is
     * clean when it is unmapped then stays mapped on the host: no
     * MADV_DONTNEED, so no TLB shootdown IPI to the other CPUs running the
     * process (10-30 us each on the machines measured, on the faulter's
     * path or on the evictor's, interrupting the vCPUs).  The unmapped()
     * hook is still called.  Dirty victims are unmapped as before, so a
     * page mapped again clean is write-protected afresh.  The price: an
     * access that does not come through the embedder's translations (in
     * QEMU: DMA, monitor, gdbstub, dumps) to a page evicted clean reads
     * the memfd's data, which is the page's data, without a miss; a store
     * there still write-protect faults and is served as a write miss.
     * Ignored with a media store (its evictions drop pages from the
     * memfd).
     */
    bool keep_clean_mapped;
    /*
     * The media store (model/media.h, property media=PATH); NULL or "" =
     * off: the memfd holds every page (the embedder fallocates it).  On:
     * the trap opens the file (loading a clean file's FTL state into the
     * model, which must be fresh) and the memfd holds only resident pages:
     * the range is registered MISSING as well as MINOR, a miss fills its
     * page into the memfd from the file (zeros if never written) before
     * the NAND wait, an evicted page is written to the file if dirty and
     * punched out of the memfd.  Reset and cxlssd_trap_free() write every
     * dirty cached page back; free also saves the FTL state and marks the
     * file clean.
     */
    const char *media_path;
    int media_memfd;            /* the memfd mapped at @base ... */
    uint64_t media_memfd_offset;    /* ... from this byte of it */
    /*
     * With a media store: NULL or "" for a volatile device (the memfd's
     * pages from any earlier use are dropped at start-up); else the path
     * of the memfd, a named file on tmpfs that outlives the process, as
     * a persistent device's cache: the store keeps a crash-consistent map
     * of its dirty pages next to it and writes back what a crash left
     * before the trap starts (cxlssd_media_attach_cache(), model/media.h).
     */
    const char *media_cache_path;
};

struct cxlssd_trap;

/*
 * Register [@base, @base + @len) (a MAP_SHARED mapping of @memfd, whose
 * pages are already allocated) with userfaultfd MINOR (+WP if
 * track_dirty and the kernel supports it), unmap every page and start the
 * handler (and background eviction) threads.  @model must cover @len.
 * Returns NULL with a message in @err.
 */
struct cxlssd_trap *cxlssd_trap_new(struct cxlssd_model *model,
                                    void *base, size_t len,
                                    const struct cxlssd_trap_config *cfg,
                                    const struct cxlssd_trap_hooks *hooks,
                                    char *err, size_t errlen);

/* Stop threads, unregister, flush records.  Safe on a running trap. */
void cxlssd_trap_free(struct cxlssd_trap *t);

/* Quiesce handlers, unmap every page, reset model residency, resume.
 * Used at device reset and HDM uncommit.  Faults raised meanwhile stay
 * queued and are served after the resume.  Waits for every handler to
 * finish its current event: must not be called while holding a lock that
 * serialize_begin() may be blocked on for a pending fault (with QEMU, vCPUs
 * are stopped first, which drains their faults). */
void cxlssd_trap_reset(struct cxlssd_trap *t);

/*
 * An access to [@offset, @offset + @len) of the range made through another
 * mapping of the same memfd (SIGBUS delivery: QEMU's own reads and writes
 * of the window).  Each page that is not resident is served as a miss in
 * the calling thread (model, NAND wait, mapping, record), as if the thread
 * had faulted; a write marks the pages dirty.  The data itself is the
 * caller's to move.
 */
void cxlssd_trap_access(struct cxlssd_trap *t, uint64_t offset,
                        uint64_t len, bool write);

/*
 * CXLSSD_DELIVERY_TLB: the calling thread is about to reach the page at
 * @offset through a cached translation, for a store if @write.  A
 * non-resident page is served as a miss right here (model, NAND wait,
 * UFFDIO_CONTINUE with DONTWAKE, record; bql hook as for a fault); a store
 * marks the page dirty (clearing its write protection).  Returns true if
 * the translation may allow stores, false for a clean page under dirty
 * tracking (the first store must come back here).
 */
bool cxlssd_trap_tlb_fill(struct cxlssd_trap *t, uint64_t offset,
                          bool write);

/* True if dirty tracking (uffd WP on this mapping) is active. */
bool cxlssd_trap_dirty_tracking(const struct cxlssd_trap *t);
/* Human-readable mechanism description for manifests. */
const char *cxlssd_trap_dirty_mechanism(const struct cxlssd_trap *t);

struct cxlssd_trap_stats {
    uint64_t faults;            /* uffd events read */
    uint64_t wp_faults;
    uint64_t duplicate_faults;  /* page already resident or loading */
    uint64_t wakes;             /* UFFDIO_WAKE issued */
    uint64_t madvise_calls;
    uint64_t pages_unmapped;
    uint64_t bql_wait_ns;       /* total time in serialize_begin */
    uint64_t records_written;
    uint64_t records_dropped;
    uint64_t sigbus_faults;     /* SIGBUS delivery: signals served */
    uint64_t tlb_fill_misses;   /* access-path delivery: misses served by
                                 * cxlssd_trap_tlb_fill() */
    uint64_t host_route_misses; /* MINOR/MISSING uffd events read */
    uint64_t tlb_invalidations; /* unmapped() hook calls */
    uint64_t victims_kept_mapped;   /* cfg.keep_clean_mapped: clean victims
                                     * left mapped on the host */
    uint64_t remaps;            /* faults on pages the model holds resident
                                 * that were not mapped: mapped again */
    uint64_t unclocked_misses;  /* compensated from the handler's own
                                 * clock: no host fault time (a thread's
                                 * first miss) */
    uint64_t late_waits;        /* NAND waits that ended > late_wait_ns
                                 * after their deadline */
    /* media store (cfg.media_path; all 0 without): see model/media.h */
    uint64_t media_fills;
    uint64_t media_zero_fills;
    uint64_t media_writebacks;
    uint64_t media_writeback_errors;
    uint64_t media_stuck_pages;
    uint64_t media_touched_pages;
    uint64_t media_file_allocated_bytes;
    uint64_t media_restored;    /* 1: FTL state from a clean shutdown */
    uint64_t media_recovered;   /* 1: file found unclean (SIGKILL) */
    uint64_t media_cache_recovered; /* persistent cache: pages a crash
                                     * left, written back at the start */
    uint64_t media_cache_lost;  /* persistent cache: marked pages the
                                 * cache file no longer held */
    uint64_t metadata_bytes;    /* model + media metadata in host memory */
    uint64_t metadata_bytes_per_touched_page;   /* rounded */
};
void cxlssd_trap_get_stats(struct cxlssd_trap *t, struct cxlssd_trap_stats *out);

/* With a media store: its statistics and true; else false. */
struct cxlssd_media_stats;
bool cxlssd_trap_media_stats(struct cxlssd_trap *t,
                             struct cxlssd_media_stats *out);
/* The media_* and metadata_* fields of @out from a media store's stats
 * (the trap's own, or mmio mode's store). */
void cxlssd_trap_stats_set_media(struct cxlssd_trap_stats *out,
                                 const struct cxlssd_media_stats *ms,
                                 uint64_t metadata_bytes);
/* Host memory of the model's metadata now (model/media.h). */
uint64_t cxlssd_trap_metadata_bytes(struct cxlssd_trap *t);

const char *cxlssd_delivery_name(enum cxlssd_delivery d);
/* "poll" or "busy" (handler-thread delivery). */
int cxlssd_delivery_from_name(const char *name, enum cxlssd_delivery *out);
/* Also "sigbus" (in-thread delivery). */
int cxlssd_delivery_from_name_any(const char *name,
                                  enum cxlssd_delivery *out);
/* Check a handler-cpus list ("0,1", "0-3", NULL or "" = no pinning)
 * against this host's CPUs.  Returns the number of CPUs listed, or -1 with
 * a message naming handler-cpus in @err. */
int cxlssd_trap_check_cpus(const char *list, char *err, size_t errlen);

#endif
