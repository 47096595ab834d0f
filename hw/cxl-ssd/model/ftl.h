/*
 * Page-mapped FTL over struct nand: logical-to-physical map, writes striped
 * across channels then LUNs, greedy garbage collection per LUN driven by
 * free-block thresholds, write amplification.  Thread-safe: every entry
 * point takes the FTL's own mutex for the computation only (never while a
 * caller waits for a deadline).
 */
#ifndef CXLSSD_MODEL_FTL_H
#define CXLSSD_MODEL_FTL_H

#include <stdbool.h>
#include <stdint.h>
#include "config.h"
#include "nand.h"

struct ftl;

struct ftl_stats {
    uint64_t host_writes;       /* pages written by the host */
    uint64_t nand_writes;       /* pages programmed (host + GC copies) */
    uint64_t gc_runs;           /* victim blocks collected */
    uint64_t gc_pages_moved;
    uint64_t erases;
    uint64_t reads;             /* NAND page reads issued (host + GC) */
    uint64_t zero_page_reads;   /* reads of never-written pages */
};

/* Geometry from @cfg; blocks_per_lun derived when cfg->blocks_per_lun == 0.
 * Returns NULL with @err set if the geometry cannot hold the logical pages. */
struct ftl *ftl_new(const struct cxlssd_config *cfg, char *err, size_t errlen);
void ftl_free(struct ftl *f);

/* Completion time of a read of logical page @lpn issued at @now_ns.
 * A never-written page completes at @now_ns unless cfg->precondition. */
uint64_t ftl_read(struct ftl *f, uint64_t lpn, uint64_t now_ns);

/* Completion time of a write (program) of @lpn issued at @now_ns, including
 * any garbage collection it triggers on the target LUN's timelines.  Never
 * fails: GC always finds space because of over-provisioning. */
uint64_t ftl_write(struct ftl *f, uint64_t lpn, uint64_t now_ns);
/* ftl_write() that also adds to *@gc_runs the victim blocks its garbage
 * collection took (for the miss path's GC trace). */
uint64_t ftl_write_counted(struct ftl *f, uint64_t lpn, uint64_t now_ns,
                           uint32_t *gc_runs);

/* Hint that @lpn's map entry is about to be read: lets the caller overlap
 * that cache miss with its own (no lock, no effect on state). */
void ftl_prefetch(const struct ftl *f, uint64_t lpn);

/* Current physical location of @lpn, or UINT32_MAX if never written. */
cxlssd_ppa ftl_lookup(struct ftl *f, uint64_t lpn);
/*
 * Map @lpn as a write would place it, without its NAND program, counters
 * or GC: for rebuilding an FTL whose state was lost (an unclean media
 * file) from the pages that hold data, as if they had been written in
 * order.  The FTL must be fresh (placement never needs GC then).
 */
void ftl_place(struct ftl *f, uint64_t lpn);

void ftl_get_stats(struct ftl *f, struct ftl_stats *out);
/* Write amplification = nand_writes / host_writes (1.0 when no writes). */
double ftl_waf(struct ftl *f);
uint64_t ftl_channel_busy_ns(struct ftl *f, uint32_t ch);
uint32_t ftl_channels(const struct ftl *f);

/* Bytes of metadata the FTL keeps (map, reverse map, block info). */
uint64_t ftl_metadata_bytes(const struct ftl *f);

/*
 * Persistence: the FTL's whole state as raw memory regions, which the media
 * store (media.h) saves at a clean shutdown and reads back into a new FTL
 * of the same geometry.  Region 0 is a struct ftl_saved (geometry, cursor,
 * counters), filled by ftl_state_regions(); the others are the per-LUN
 * state, block tables and maps.  Only while no other thread uses the FTL.
 */
struct ftl_saved {
    uint64_t logical_pages;
    uint64_t physical_pages;
    uint32_t luns;
    uint32_t blocks_per_lun;
    uint32_t pages_per_block;
    uint32_t cursor;
    struct ftl_stats st;
};
struct ftl_region {
    void *ptr;
    uint64_t len;
};
#define FTL_REGIONS 7
void ftl_state_regions(struct ftl *f, struct ftl_region out[FTL_REGIONS]);
/* Whether @s (a saved region 0) was saved by an FTL of this geometry. */
bool ftl_state_compatible(const struct ftl *f, const struct ftl_saved *s);
/* The regions were overwritten with a saved state: adopt its cursor and
 * counters; 0 if it passes ftl_check(), else -1 (the caller must not use
 * the FTL then). */
int ftl_state_loaded(struct ftl *f);

/* Debug/test: check internal consistency (every mapped lpn's reverse entry
 * points back, or before garbage collection built the reverse map, no two
 * lpns share a ppa; valid counts match).  Returns 0 if consistent. */
int ftl_check(struct ftl *f);

#endif
