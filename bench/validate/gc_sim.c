/* Independent greedy-GC simulation (gc_sim.h). */
#include "gc_sim.h"

#include <math.h>
#include <stdlib.h>

#include "rng.h"
#include "traffic.h"

#define NONE UINT32_MAX

enum { FREE, OPEN, CLOSED };

struct sim_lun {
    uint32_t open, fill;        /* open block (NONE), its next page */
    uint32_t *free;             /* stack of free blocks */
    uint32_t nfree;
};

struct sim {
    const struct gc_sim_params *p;
    uint32_t *where;            /* lpn -> global page (NONE: unwritten) */
    uint32_t *owner;            /* global page -> lpn (NONE: free/stale) */
    uint32_t *valid;            /* global block -> valid pages */
    uint8_t *state;             /* global block */
    struct sim_lun *lun;
    uint32_t cursor;
    uint64_t programs;
};

static uint32_t gblock(const struct sim *s, uint32_t lun, uint32_t blk)
{
    return lun * s->p->blocks_per_lun + blk;
}

/* A page of @lun's open block for a write; NONE if the LUN has no room
 * (a host write may not take the last free block). */
static uint32_t take_page(struct sim *s, uint32_t lun, bool host)
{
    struct sim_lun *L = &s->lun[lun];
    if (L->open == NONE) {
        if (L->nfree == 0 || (host && L->nfree == 1)) {
            return NONE;
        }
        L->open = L->free[--L->nfree];
        L->fill = 0;
        s->state[gblock(s, lun, L->open)] = OPEN;
    }
    uint32_t g = gblock(s, lun, L->open);
    uint32_t page = g * s->p->b + L->fill;
    if (++L->fill == s->p->b) {
        s->state[g] = CLOSED;
        L->open = NONE;
    }
    return page;
}

static void place(struct sim *s, uint32_t lpn, uint32_t page)
{
    uint32_t old = s->where[lpn];
    if (old != NONE) {
        s->owner[old] = NONE;
        s->valid[old / s->p->b]--;
    }
    s->where[lpn] = page;
    s->owner[page] = lpn;
    s->valid[page / s->p->b]++;
    s->programs++;
}

/* Collect @lun's closed block with the fewest valid pages; false if none
 * would give space. */
static bool collect_one(struct sim *s, uint32_t lun)
{
    uint32_t b = s->p->b, victim = NONE, least = b;
    for (uint32_t k = 0; k < s->p->blocks_per_lun; k++) {
        uint32_t g = gblock(s, lun, k);
        if (s->state[g] == CLOSED && s->valid[g] < least) {
            least = s->valid[g];
            victim = k;
        }
    }
    if (victim == NONE) {
        return false;
    }
    uint32_t g = gblock(s, lun, victim);
    for (uint32_t i = 0; i < b && s->valid[g] > 0; i++) {
        uint32_t lpn = s->owner[g * b + i];
        if (lpn != NONE) {
            place(s, lpn, take_page(s, lun, false));
        }
    }
    s->state[g] = FREE;
    s->lun[lun].free[s->lun[lun].nfree++] = victim;
    return true;
}

static uint64_t free_pages(const struct sim *s, uint32_t lun)
{
    const struct sim_lun *L = &s->lun[lun];
    return (uint64_t)L->nfree * s->p->b +
           (L->open == NONE ? 0 : s->p->b - L->fill);
}

static void host_write(struct sim *s, uint32_t lpn)
{
    const struct gc_sim_params *p = s->p;
    uint32_t lun = s->cursor;
    for (uint32_t tries = 0; tries < p->luns; tries++) {
        if (p->continuous) {
            while (free_pages(s, lun) < (uint64_t)p->gc_high * p->b &&
                   collect_one(s, lun)) {
            }
        } else if (s->lun[lun].nfree < p->gc_low) {
            while (s->lun[lun].nfree < p->gc_high && collect_one(s, lun)) {
            }
        }
        uint32_t page = take_page(s, lun, true);
        if (page != NONE) {
            place(s, lpn, page);
            s->cursor = (lun + 1) % p->luns;
            return;
        }
        lun = (lun + 1) % p->luns;
    }
}

static void sim_free(struct sim *s)
{
    if (s->lun) {
        for (uint32_t l = 0; l < s->p->luns; l++) {
            free(s->lun[l].free);
        }
    }
    free(s->lun);
    free(s->where);
    free(s->owner);
    free(s->valid);
    free(s->state);
}

double gc_sim_waf(const struct gc_sim_params *p)
{
    uint64_t blocks = (uint64_t)p->luns * p->blocks_per_lun;
    struct sim s = { .p = p };
    s.where = malloc(p->pages * sizeof(*s.where));
    s.owner = malloc(blocks * p->b * sizeof(*s.owner));
    s.valid = calloc(blocks, sizeof(*s.valid));
    s.state = calloc(blocks, 1);
    s.lun = calloc(p->luns, sizeof(*s.lun));
    bool ok = s.where && s.owner && s.valid && s.state && s.lun;
    for (uint32_t l = 0; ok && l < p->luns; l++) {
        struct sim_lun *L = &s.lun[l];
        L->open = NONE;
        L->free = malloc(p->blocks_per_lun * sizeof(*L->free));
        ok = L->free != NULL;
        for (uint32_t k = 0; ok && k < p->blocks_per_lun; k++) {
            L->free[k] = p->blocks_per_lun - 1 - k;     /* block 0 first */
        }
        L->nfree = p->blocks_per_lun;
    }
    if (!ok) {
        sim_free(&s);
        return NAN;
    }
    for (uint64_t i = 0; i < p->pages; i++) {
        s.where[i] = NONE;
    }
    for (uint64_t i = 0; i < blocks * p->b; i++) {
        s.owner[i] = NONE;
    }
    struct rng g = { p->seed };
    struct traffic t = { p->pages, p->r, p->f };
    for (uint64_t lpn = 0; lpn < p->pages; lpn++) {
        host_write(&s, (uint32_t)lpn);
    }
    for (uint64_t i = 0; i < (uint64_t)(p->warm * p->pages); i++) {
        host_write(&s, (uint32_t)traffic_next(&g, &t));
    }
    uint64_t before = s.programs, n = (uint64_t)(p->window * p->pages);
    for (uint64_t i = 0; i < n; i++) {
        host_write(&s, (uint32_t)traffic_next(&g, &t));
    }
    double waf = (double)(s.programs - before) / (double)n;
    sim_free(&s);
    return waf;
}
