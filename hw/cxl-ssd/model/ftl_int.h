/*
 * Internal to the FTL (ftl*.c): its state and the accessors its files
 * share.  Not part of the interface (see ftl.h).  ftl.c keeps the map,
 * allocation, garbage collection and the timing entry points (layout and
 * rules at its top), ftl_check.c the consistency check, ftl_state.c the
 * state the media store saves and restores.
 */
#ifndef CXLSSD_MODEL_FTL_INT_H
#define CXLSSD_MODEL_FTL_INT_H

#include <pthread.h>

#include "ftl.h"

#define FTL_NONE UINT32_MAX

enum { BLK_FREE = 0, BLK_OPEN = 1, BLK_CLOSED = 2 };

struct ftl_lun {
    uint32_t open_block;    /* FTL_NONE when no block is open */
    uint32_t write_ptr;     /* next page in the open block */
    uint32_t nfree;         /* entries in the free stack, which is
                             * free_stacks[lun * blocks_per_lun ...] */
};

struct ftl {
    pthread_mutex_t lock;
    struct nand *nand;
    uint64_t logical_pages;
    uint32_t luns;
    uint32_t channels;
    uint32_t blocks_per_lun;
    uint32_t pages_per_block;
    uint64_t physical_pages;
    uint32_t gc_low;        /* effective thresholds, >= 2 */
    uint32_t gc_high;
    bool precondition;
    uint32_t cursor;        /* next LUN for host writes */

    uint32_t *l2p;          /* [logical_pages], ppa + 1 */
    uint32_t *p2l;          /* [physical_pages], lpn + 1; kept only once
                             * p2l_built (all zero before) */
    bool p2l_built;
    uint32_t *valid;        /* [luns * blocks_per_lun] */
    uint8_t *state;         /* [luns * blocks_per_lun] */
    uint32_t *free_stacks;  /* [luns * blocks_per_lun] */
    struct ftl_lun *lun;    /* [luns] */

    struct ftl_stats st;
    struct ftl_saved saved; /* ftl_state_regions() / ftl_state_loaded() */
};

/* The maps store their value + 1, so that none (FTL_NONE) is 0. */
static inline uint32_t l2p_get(const struct ftl *f, uint64_t lpn)
{
    return f->l2p[lpn] - 1u;
}

static inline uint32_t p2l_get(const struct ftl *f, uint64_t ppa)
{
    return f->p2l[ppa] - 1u;
}

static inline uint32_t *free_stack(struct ftl *f, uint32_t lun)
{
    return f->free_stacks + (uint64_t)lun * f->blocks_per_lun;
}

static inline uint64_t blk_index(const struct ftl *f, uint32_t lun,
                                 uint32_t block)
{
    return (uint64_t)lun * f->blocks_per_lun + block;
}

#endif
