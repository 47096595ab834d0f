/* TDM_POLICY's decisions and the recur counters (policy.h). */
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "chunk.h"
#include "policy.h"

#define PAGE_SHIFT 12
#define REGION_PAGES (1u << (TDM_REGION_SHIFT - PAGE_SHIFT))
#define REGION_WORDS (REGION_PAGES / 64)
#define CHUNK_REGIONS 1024u
#define TOP_CHUNKS 1024u

struct region {
    _Atomic uint64_t seen[REGION_WORDS];  /* pages read in this window */
    _Atomic uint64_t recur_bytes;
    _Atomic uint64_t window;              /* the window seen[] counts */
    _Atomic bool hot;
};

struct tdm_regions {
    _Atomic(void *) chunk[TOP_CHUNKS];    /* struct region[CHUNK_REGIONS] */
};

struct tdm_regions *tdm_regions_new(void)
{
    return calloc(1, sizeof(struct tdm_regions));
}

void tdm_regions_free(struct tdm_regions *r)
{
    if (!r) {
        return;
    }
    for (unsigned i = 0; i < TOP_CHUNKS; i++) {
        free(atomic_load(&r->chunk[i]));
    }
    free(r);
}

/* region @idx, its chunk made on first use; NULL past the table or OOM */
static struct region *region_at(struct tdm_regions *r, uint64_t idx)
{
    if (idx >= (uint64_t)TOP_CHUNKS * CHUNK_REGIONS) {
        return NULL;
    }
    struct region *c = tdm_chunk_get(&r->chunk[idx / CHUNK_REGIONS],
                                     CHUNK_REGIONS, sizeof(*c));
    return c ? &c[idx % CHUNK_REGIONS] : NULL;
}

static uint64_t window_now(const struct tdm_config *cfg)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    uint64_t ms = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
    return ms / cfg->recur_window_ms + 1;  /* 0: never counted */
}

/*
 * Counts a read of pages [first, last] of @g; true when the region is
 * served.  A new window clears the pages seen (racing readers may lose a
 * few counts: the policy is a heuristic).
 */
static bool count_read(const struct tdm_config *cfg, struct region *g,
                       unsigned first, unsigned last, uint64_t window)
{
    uint64_t w = atomic_load_explicit(&g->window, memory_order_relaxed);
    if (w != window &&
        atomic_compare_exchange_strong(&g->window, &w, window)) {
        for (unsigned i = 0; i < REGION_WORDS; i++) {
            atomic_store_explicit(&g->seen[i], 0, memory_order_relaxed);
        }
        atomic_store_explicit(&g->recur_bytes, 0, memory_order_relaxed);
    }
    uint64_t again = 0;
    for (unsigned word = first / 64; word <= last / 64; word++) {
        unsigned lo = word == first / 64 ? first % 64 : 0;
        unsigned hi = word == last / 64 ? last % 64 : 63;
        uint64_t mask = (hi == 63 ? ~0ull : (1ull << (hi + 1)) - 1) &
                        ~((1ull << lo) - 1);
        uint64_t old = atomic_fetch_or_explicit(&g->seen[word], mask,
                                                memory_order_relaxed);
        again += (uint64_t)__builtin_popcountll(old & mask) << PAGE_SHIFT;
    }
    if (!again) {
        return false;
    }
    uint64_t total = atomic_fetch_add_explicit(&g->recur_bytes, again,
                                               memory_order_relaxed) + again;
    return total >= cfg->recur_bytes;
}

static bool recur_serves(const struct tdm_config *cfg, struct tdm_regions *r,
                         uint64_t off, uint64_t len, bool read,
                         unsigned *became_hot)
{
    uint64_t last_byte = off + len - 1;
    uint64_t window = read ? window_now(cfg) : 0;
    bool all_hot = true;
    for (uint64_t idx = off >> TDM_REGION_SHIFT;
         idx <= last_byte >> TDM_REGION_SHIFT; idx++) {
        struct region *g = region_at(r, idx);
        if (!g) {
            return false;
        }
        if (atomic_load_explicit(&g->hot, memory_order_relaxed)) {
            continue;
        }
        uint64_t base = idx << TDM_REGION_SHIFT;
        uint64_t lo = off > base ? off - base : 0;
        uint64_t hi = last_byte - base < (1ull << TDM_REGION_SHIFT)
                          ? last_byte - base
                          : (1ull << TDM_REGION_SHIFT) - 1;
        bool cold = true;
        if (read && count_read(cfg, g, (unsigned)(lo >> PAGE_SHIFT),
                               (unsigned)(hi >> PAGE_SHIFT), window)) {
            bool was = false;
            if (atomic_compare_exchange_strong(&g->hot, &was, true)) {
                ++*became_hot;
            }
            cold = false;
        }
        if (cold) {
            all_hot = false;
        }
    }
    return all_hot;
}

bool tdm_policy_serves(const struct tdm_config *cfg, struct tdm_regions *r,
                       uint64_t size, uint64_t off, uint64_t len, bool read,
                       unsigned *became_hot)
{
    *became_hot = 0;
    switch (cfg->policy) {
    case TDM_POLICY_ALL:
        return true;
    case TDM_POLICY_SIZE:
        return size >= cfg->size_min;
    case TDM_POLICY_RECUR:
        return r && len && recur_serves(cfg, r, off, len, read, became_hot);
    }
    return false;
}
