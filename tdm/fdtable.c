/* fd -> description slots (fdtable.h). */
#include <stdlib.h>

#include "chunk.h"
#include "fdtable.h"

#define CHUNK_BITS 10
#define CHUNK_SLOTS (1u << CHUNK_BITS)
#define TOP_CHUNKS 1024u
#define STRIPES 64u

struct slot {
    _Atomic(struct tdm_desc *) desc;
    _Atomic bool cloexec;
};

static _Atomic(void *) chunks[TOP_CHUNKS];    /* struct slot[CHUNK_SLOTS] */
static pthread_mutex_t stripes[STRIPES] = {
    [0 ... STRIPES - 1] = PTHREAD_MUTEX_INITIALIZER
};

static pthread_mutex_t *stripe(int fd)
{
    return &stripes[(unsigned)fd % STRIPES];
}

/* @fd's slot; made on first use with @make, else NULL where none yet */
static struct slot *slot_of(int fd, bool make)
{
    if (fd < 0 || (unsigned)fd >= TOP_CHUNKS * CHUNK_SLOTS) {
        return NULL;
    }
    _Atomic(void *) *top = &chunks[(unsigned)fd >> CHUNK_BITS];
    struct slot *c = make ? tdm_chunk_get(top, CHUNK_SLOTS, sizeof(*c))
                          : atomic_load_explicit(top, memory_order_acquire);
    return c ? &c[(unsigned)fd & (CHUNK_SLOTS - 1)] : NULL;
}

struct tdm_desc *tdm_fd_get(int fd)
{
    struct slot *s = slot_of(fd, false);
    /* most fds the app uses (sockets, pipes) were never tracked: no lock */
    if (!s || !atomic_load_explicit(&s->desc, memory_order_relaxed)) {
        return NULL;
    }
    pthread_mutex_lock(stripe(fd));
    struct tdm_desc *d = atomic_load_explicit(&s->desc, memory_order_relaxed);
    if (d) {
        tdm_desc_ref(d);
    }
    pthread_mutex_unlock(stripe(fd));
    return d;
}

void tdm_fd_set(int fd, struct tdm_desc *d, bool cloexec)
{
    struct slot *s = slot_of(fd, d != NULL);
    if (!s) {
        if (d) {
            tdm_desc_put(d);
        }
        return;
    }
    pthread_mutex_lock(stripe(fd));
    struct tdm_desc *old = atomic_load_explicit(&s->desc, memory_order_relaxed);
    atomic_store_explicit(&s->desc, d, memory_order_relaxed);
    atomic_store_explicit(&s->cloexec, cloexec, memory_order_relaxed);
    pthread_mutex_unlock(stripe(fd));
    if (old) {
        tdm_desc_put(old);
    }
}

void tdm_fd_set_cloexec(int fd, bool cloexec)
{
    struct slot *s = slot_of(fd, false);
    if (s) {
        atomic_store_explicit(&s->cloexec, cloexec, memory_order_relaxed);
    }
}

void tdm_fd_clear_range(unsigned first, unsigned last)
{
    unsigned max = TOP_CHUNKS * CHUNK_SLOTS - 1;
    for (unsigned fd = first; fd <= last && fd <= max; fd++) {
        if (!atomic_load(&chunks[fd >> CHUNK_BITS])) {
            fd |= CHUNK_SLOTS - 1;  /* a chunk never made holds nothing */
            continue;
        }
        tdm_fd_set((int)fd, NULL, false);
    }
}

void tdm_fd_cloexec_range(unsigned first, unsigned last)
{
    unsigned max = TOP_CHUNKS * CHUNK_SLOTS - 1;
    for (unsigned fd = first; fd <= last && fd <= max; fd++) {
        if (!atomic_load(&chunks[fd >> CHUNK_BITS])) {
            fd |= CHUNK_SLOTS - 1;
            continue;
        }
        tdm_fd_set_cloexec((int)fd, true);
    }
}

void tdm_fd_each(void (*fn)(int fd, struct tdm_desc *d, bool cloexec,
                            void *ctx), void *ctx)
{
    for (unsigned top = 0; top < TOP_CHUNKS; top++) {
        struct slot *c = atomic_load(&chunks[top]);
        for (unsigned i = 0; c && i < CHUNK_SLOTS; i++) {
            struct tdm_desc *d = atomic_load(&c[i].desc);
            if (d) {
                fn((int)(top << CHUNK_BITS | i), d, atomic_load(&c[i].cloexec),
                   ctx);
            }
        }
    }
}

void tdm_fd_lock_all(void)
{
    for (unsigned i = 0; i < STRIPES; i++) {
        pthread_mutex_lock(&stripes[i]);
    }
}

void tdm_fd_unlock_all(void)
{
    for (unsigned i = STRIPES; i-- > 0;) {
        pthread_mutex_unlock(&stripes[i]);
    }
}
