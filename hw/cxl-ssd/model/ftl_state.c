/*
 * The FTL's state as raw memory regions (ftl.h): what the media store
 * saves at a clean shutdown and reads back into a new FTL of the same
 * geometry (model/media_file.c).
 */
#include "ftl_int.h"

void ftl_state_regions(struct ftl *f, struct ftl_region out[FTL_REGIONS])
{
    uint64_t nblocks = (uint64_t)f->luns * f->blocks_per_lun;
    pthread_mutex_lock(&f->lock);
    f->saved = (struct ftl_saved) {
        .logical_pages = f->logical_pages,
        .physical_pages = f->physical_pages,
        .luns = f->luns,
        .blocks_per_lun = f->blocks_per_lun,
        .pages_per_block = f->pages_per_block,
        .cursor = f->cursor,
        .st = f->st,
    };
    pthread_mutex_unlock(&f->lock);
    out[0] = (struct ftl_region) { &f->saved, sizeof(f->saved) };
    out[1] = (struct ftl_region) { f->lun, f->luns * sizeof(*f->lun) };
    out[2] = (struct ftl_region) { f->valid, nblocks * sizeof(*f->valid) };
    out[3] = (struct ftl_region) { f->state, nblocks * sizeof(*f->state) };
    out[4] = (struct ftl_region) { f->free_stacks,
                                   nblocks * sizeof(*f->free_stacks) };
    out[5] = (struct ftl_region) { f->l2p,
                                   f->logical_pages * sizeof(*f->l2p) };
    out[6] = (struct ftl_region) { f->p2l,
                                   f->physical_pages * sizeof(*f->p2l) };
}

bool ftl_state_compatible(const struct ftl *f, const struct ftl_saved *s)
{
    return s->logical_pages == f->logical_pages &&
           s->physical_pages == f->physical_pages && s->luns == f->luns &&
           s->blocks_per_lun == f->blocks_per_lun &&
           s->pages_per_block == f->pages_per_block && s->cursor < f->luns;
}

int ftl_state_loaded(struct ftl *f)
{
    if (!ftl_state_compatible(f, &f->saved)) {
        return -1;
    }
    for (uint32_t l = 0; l < f->luns; l++) {
        struct ftl_lun *L = &f->lun[l];
        if (L->nfree > f->blocks_per_lun ||
            (L->open_block != FTL_NONE &&
             (L->open_block >= f->blocks_per_lun ||
              L->write_ptr >= f->pages_per_block))) {
            return -1;
        }
    }
    pthread_mutex_lock(&f->lock);
    f->cursor = f->saved.cursor;
    f->st = f->saved.st;
    /* a saved p2l is either the exact reverse map or all zero (never
     * built): which one, ftl_check() then verifies */
    f->p2l_built = false;
    for (uint64_t ppa = 0; ppa < f->physical_pages && !f->p2l_built; ppa++) {
        f->p2l_built = f->p2l[ppa] != 0;
    }
    pthread_mutex_unlock(&f->lock);
    return ftl_check(f);
}
