/*
 * The persistent cache's dirty map (media_dirty.h): a bitmap in a shared
 * mapping of a file next to the cache.  Bits change with atomic or/and on
 * the mapping, which is the file itself: a bit set is in the file the
 * moment the store retires, whatever happens to the process next.
 */
#include "media_dirty.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIRTY_MAGIC "CXLSSDDM"
#define DIRTY_VERSION 1u
#define DIRTY_HDR 4096ull

struct dirty_header {
    char magic[8];
    uint32_t version;
    uint32_t pad;
    struct media_dirty_owner owner;
};

struct media_dirty {
    int fd;
    _Atomic uint64_t *map;
    uint64_t words, map_len;
};

static uint64_t map_len_of(uint64_t words)
{
    return (words * 8 + DIRTY_HDR - 1) & ~(DIRTY_HDR - 1);
}

static int header_rw(int fd, struct dirty_header *h, bool write)
{
    ssize_t n = write ? pwrite(fd, h, sizeof(*h), 0)
                      : pread(fd, h, sizeof(*h), 0);
    return n == (ssize_t)sizeof(*h) ? 0 : -1;
}

struct media_dirty *media_dirty_open(const char *path,
                                     const struct media_dirty_owner *owner,
                                     bool *found, char *err, size_t errlen)
{
    struct media_dirty *d = calloc(1, sizeof(*d));
    struct dirty_header h;
    struct stat st;

    if (!d) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    d->words = (owner->pages + 63) / 64;
    d->map_len = map_len_of(d->words);
    d->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (d->fd < 0 || fstat(d->fd, &st) < 0) {
        snprintf(err, errlen, "%s (the persistent cache's dirty map): "
                 "cannot open: %s", path, strerror(errno));
        goto fail;
    }
    *found = st.st_size > 0;
    if (*found) {
        if (header_rw(d->fd, &h, false) < 0 ||
            memcmp(h.magic, DIRTY_MAGIC, 8) || h.version != DIRTY_VERSION) {
            snprintf(err, errlen, "%s: not a cxl-ssd dirty map: remove it "
                     "(or name another persistent-memdev file)", path);
            goto fail;
        }
        if (h.owner.media_id != owner->media_id ||
            h.owner.pages != owner->pages) {
            snprintf(err, errlen, "%s: the dirty map of another media file "
                     "(id %016" PRIx64 ", %" PRIu64 " pages; this one: id "
                     "%016" PRIx64 ", %" PRIu64 " pages): start with that "
                     "media file to write its cached pages back, or remove "
                     "the cache file and %s to discard them", path,
                     h.owner.media_id, h.owner.pages, owner->media_id,
                     owner->pages, path);
            goto fail;
        }
        if (h.owner.cache_dev != owner->cache_dev ||
            h.owner.cache_ino != owner->cache_ino) {
            snprintf(err, errlen, "%s: the dirty map of another cache file "
                     "(inode %" PRIu64 ", this one %" PRIu64 "): the pages "
                     "it marks are not in this file; remove %s to discard "
                     "them", path, h.owner.cache_ino, owner->cache_ino,
                     path);
            goto fail;
        }
    } else {
        memset(&h, 0, sizeof(h));
        memcpy(h.magic, DIRTY_MAGIC, 8);
        h.version = DIRTY_VERSION;
        h.owner = *owner;
        if (ftruncate(d->fd, (off_t)(DIRTY_HDR + d->map_len)) < 0 ||
            header_rw(d->fd, &h, true) < 0) {
            snprintf(err, errlen, "%s: cannot create the dirty map: %s",
                     path, strerror(errno));
            goto fail;
        }
    }
    d->map = mmap(NULL, d->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
                  d->fd, DIRTY_HDR);
    if (d->map == MAP_FAILED) {
        d->map = NULL;
        snprintf(err, errlen, "%s: cannot map the dirty map: %s", path,
                 strerror(errno));
        goto fail;
    }
    return d;
fail:
    media_dirty_close(d);
    return NULL;
}

void media_dirty_close(struct media_dirty *d)
{
    if (!d) {
        return;
    }
    if (d->map) {
        munmap((void *)d->map, d->map_len);
    }
    if (d->fd >= 0) {
        close(d->fd);
    }
    free(d);
}

void media_dirty_set(struct media_dirty *d, uint64_t page, uint64_t n)
{
    for (uint64_t p = page; p < page + n && p / 64 < d->words; p++) {
        uint64_t b = 1ull << (p % 64);
        if (!(atomic_load_explicit(&d->map[p / 64], memory_order_relaxed) &
              b)) {
            atomic_fetch_or_explicit(&d->map[p / 64], b,
                                     memory_order_seq_cst);
        }
    }
}

void media_dirty_clear(struct media_dirty *d, uint64_t page)
{
    uint64_t b = 1ull << (page % 64);
    if (page / 64 < d->words &&
        (atomic_load_explicit(&d->map[page / 64], memory_order_relaxed) &
         b)) {
        atomic_fetch_and_explicit(&d->map[page / 64], ~b,
                                  memory_order_seq_cst);
    }
}

bool media_dirty_test(const struct media_dirty *d, uint64_t page)
{
    return page / 64 < d->words &&
           (atomic_load_explicit(&d->map[page / 64], memory_order_acquire) >>
            (page % 64)) & 1;
}

uint64_t media_dirty_next(const struct media_dirty *d, uint64_t page)
{
    for (uint64_t w = page / 64; w < d->words; w++) {
        uint64_t v = atomic_load_explicit(&d->map[w], memory_order_acquire);
        if (w == page / 64) {
            v &= ~0ull << (page % 64);
        }
        if (v) {
            return w * 64 + (uint64_t)__builtin_ctzll(v);
        }
    }
    return UINT64_MAX;
}

void media_dirty_clear_all(struct media_dirty *d)
{
    /* a hole reads as zeros through the mapping, and frees the pages */
    if (fallocate(d->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  (off_t)DIRTY_HDR, (off_t)d->map_len) < 0) {
        for (uint64_t w = 0; w < d->words; w++) {
            atomic_store_explicit(&d->map[w], 0, memory_order_relaxed);
        }
    }
}

uint64_t media_dirty_count(const struct media_dirty *d)
{
    uint64_t n = 0;
    for (uint64_t w = 0; w < d->words; w++) {
        n += (uint64_t)__builtin_popcountll(
            atomic_load_explicit(&d->map[w], memory_order_relaxed));
    }
    return n;
}
