/*
 * cxl-ssd device model: DRAM cache (page states, frames, policy, prefetch,
 * dirty state) in front of the FTL/NAND model.  Plain C11, no QEMU headers.
 *
 * The model never sleeps and never touches guest memory: it decides and
 * returns deadlines; the glue (QEMU device or host-native tool) maps and
 * unmaps pages and waits.  Page states change only by atomic CAS:
 *
 *   NOT_CACHED --miss/prefetch--> LOADING --fill_done--> CACHED
 *   CACHED --victim chosen--> EVICTING --evict_done--> NOT_CACHED
 *
 * A LOADING page is never chosen as a victim.  All entry points are
 * thread-safe; internal locks are held only for the decision itself.
 */
#ifndef CXLSSD_MODEL_MODEL_H
#define CXLSSD_MODEL_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "clock.h"
#include "config.h"

enum cxlssd_page_state {
    CXLSSD_NOT_CACHED = 0,
    CXLSSD_LOADING = 1,
    CXLSSD_CACHED = 2,
    CXLSSD_EVICTING = 3,
};

/* Upper bound on victims one miss can produce (the page + its prefetches). */
#define CXLSSD_MAX_PREFETCH 64
#define CXLSSD_MAX_VICTIMS (1 + CXLSSD_MAX_PREFETCH)

enum cxlssd_miss_outcome {
    CXLSSD_MISS_FILL,       /* caller owns the fill: unmap victims, wait
                             * until deadline_ns, map the page, fill_done() */
    CXLSSD_MISS_LOADING,    /* another fill is in flight: wait until the page
                             * leaves LOADING (deadline_ns is its deadline),
                             * then retry */
    CXLSSD_MISS_RESIDENT,   /* already CACHED: nothing to load (e.g. a
                             * duplicate fault); just wake the faulter */
    CXLSSD_MISS_EVICTING,   /* being evicted right now: retry shortly.
                             * Also returned (page left NOT_CACHED) when
                             * every frame of its set is LOADING or
                             * EVICTING, so no frame can be had yet */
};

struct cxlssd_victim {
    uint64_t page;
    bool dirty;             /* writeback charged on the NAND */
};

struct cxlssd_prefetch {
    uint64_t page;
    uint64_t deadline_ns;   /* its own NAND read completion */
};

struct cxlssd_miss {
    enum cxlssd_miss_outcome outcome;
    uint64_t page;
    bool write;
    uint64_t decision_start_ns; /* when the model started: the @now_ns
                                 * passed to cxlssd_miss() (pass
                                 * cxlssd_now_ns() read just before) */
    uint64_t decision_end_ns;
    uint64_t deadline_ns;       /* NAND completion of this page's read */
    uint32_t nvictims;          /* pages the caller must unmap, then call
                                 * cxlssd_evict_done() for each */
    struct cxlssd_victim victims[CXLSSD_MAX_VICTIMS];
    uint32_t nprefetch;         /* pages now LOADING on the caller's behalf:
                                 * map each at its deadline, fill_done() */
    struct cxlssd_prefetch prefetch[CXLSSD_MAX_PREFETCH];
    bool prefetch_hit;          /* LOADING outcome: the fill in flight was a
                                 * prefetch (a late prefetch hit) */
    uint32_t gc_runs;           /* FILL: victim blocks garbage-collected by
                                 * the writebacks of its dirty victims */
};

struct cxlssd_stats {
    uint64_t misses;            /* fills started for a demand access */
    uint64_t loading_waits;     /* accesses that waited for someone's fill */
    uint64_t trapped_hits;      /* cxlssd_hit() calls */
    uint64_t write_hits;        /* first writes to clean resident pages */
    uint64_t evictions_clean;
    uint64_t evictions_dirty;
    uint64_t prefetch_issued;
    uint64_t prefetch_used;     /* accessed before eviction */
    uint64_t prefetch_late;     /* accessed while still LOADING */
    uint64_t resident_pages;    /* LOADING + CACHED + EVICTING now */
    uint64_t free_frames;
    /* FTL / NAND */
    uint64_t gc_runs;
    uint64_t gc_pages_moved;
    uint64_t erases;
    uint64_t nand_reads;
    uint64_t nand_writes;
    uint64_t host_writes;
    double waf;
    uint32_t channels;
    uint64_t channel_busy_ns[256];
};

struct cxlssd_model;

/* Returns NULL with a message in @err on bad configuration. */
struct cxlssd_model *cxlssd_model_new(const struct cxlssd_config *cfg,
                                      char *err, size_t errlen);
void cxlssd_model_free(struct cxlssd_model *m);
const struct cxlssd_config *cxlssd_model_config(const struct cxlssd_model *m);

/* Every page NOT_CACHED, all frames free, FTL and statistics kept (the
 * data is kept too).  Caller guarantees no fill or eviction is in flight. */
void cxlssd_model_reset_residency(struct cxlssd_model *m);

/*
 * An access to a non-resident (from the glue's point of view) page.
 * @now_ns is CLOCK_MONOTONIC.  Fills @out; see enum cxlssd_miss_outcome.
 * In synchronous eviction mode, or when no frame is free, victims are chosen
 * here (CACHED -> EVICTING) and their writeback is charged.
 */
void cxlssd_miss(struct cxlssd_model *m, uint64_t page, bool write,
                 uint64_t now_ns, struct cxlssd_miss *out);

/* Victim @page has been unmapped by the glue: EVICTING -> NOT_CACHED and
 * its frame becomes free (or passes to the fill that evicted it). */
void cxlssd_evict_done(struct cxlssd_model *m, uint64_t page);

/* @page has been mapped: LOADING -> CACHED. */
void cxlssd_fill_done(struct cxlssd_model *m, uint64_t page);

/* A trapped access to a resident page (mmio mode, or a sampled accessed
 * bit): informs CLOCK/S3-FIFO, counts a trapped hit, marks dirty on write.
 * Returns false if the page is not CACHED (caller treats it as a miss). */
bool cxlssd_hit(struct cxlssd_model *m, uint64_t page, bool write);

/* First write to a clean resident page (uffd write-protect fault). */
void cxlssd_mark_dirty(struct cxlssd_model *m, uint64_t page);
/*
 * The same, only while the page is CACHED (one CAS against the victim
 * choice): false if it was chosen as a victim meanwhile, and the caller
 * serves the store as a write miss instead.  For a page a victim may leave
 * mapped (keep_clean_mapped): granting the store to an EVICTING page there
 * would let it land after the page's writeback.
 */
bool cxlssd_mark_dirty_resident(struct cxlssd_model *m, uint64_t page);

/*
 * Background eviction: if free frames are below the low watermark, choose
 * up to @max victims (CACHED -> EVICTING, writeback charged at @now_ns)
 * until the high watermark would be reached.  Returns the number chosen;
 * the caller unmaps them and calls cxlssd_evict_done() for each.
 */
uint32_t cxlssd_evict_background(struct cxlssd_model *m, uint64_t now_ns,
                                 struct cxlssd_victim *victims, uint32_t max);
/* True when free frames are below the low watermark. */
bool cxlssd_evict_needed(const struct cxlssd_model *m);

enum cxlssd_page_state cxlssd_page_state(const struct cxlssd_model *m,
                                         uint64_t page);
bool cxlssd_page_dirty(const struct cxlssd_model *m, uint64_t page);
uint64_t cxlssd_model_pages(const struct cxlssd_model *m);
uint64_t cxlssd_model_frames(const struct cxlssd_model *m);

/* Every statistic but the floating-point ones (waf stays 0): for callers
 * that may not use floating point, such as the kernel module. */
void cxlssd_model_get_counters(struct cxlssd_model *m,
                               struct cxlssd_stats *out);
/* All statistics (model_ratios.c). */
void cxlssd_model_get_stats(struct cxlssd_model *m, struct cxlssd_stats *out);
/* Metadata bytes per device page (cache + FTL), for the 16 B budget. */
double cxlssd_model_metadata_bytes_per_page(const struct cxlssd_model *m);
/* Bytes of metadata the cache engine alone keeps (without the FTL's). */
uint64_t cxlssd_model_cache_metadata_bytes(const struct cxlssd_model *m);
/* The cache engine's arrays that are calloc'd and only touched where used
 * (the per-page state, one byte per device page; the LOADING table's
 * overflow part), for measuring their footprint: fills @p[i], @len[i] and
 * returns how many (at most 2). */
uint32_t cxlssd_model_lazy_arrays(const struct cxlssd_model *m,
                                  const void *p[2], uint64_t len[2]);
/* The model's FTL (for tests and statistics; thread-safe, see ftl.h). */
struct ftl;
struct ftl *cxlssd_model_ftl(struct cxlssd_model *m);

#endif
