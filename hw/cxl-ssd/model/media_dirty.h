/*
 * The dirty map of a persistent device's cache (persistent-memdev with
 * media=PATH): which pages of the cache file may hold data newer than
 * the media file.  One bit per device page in a small file next to the
 * cache file (CACHE.dirty, on the same tmpfs), mapped shared: a bit is
 * set before its page can be written in the cache (mapped writable,
 * write protection cleared, an MMIO store) and cleared once the page was
 * written back and can no longer be written.  The file's pages are the
 * kernel's, so the map outlives a SIGKILL of QEMU exactly as the cache
 * file does, and dies with it at a host reboot.
 *
 * Layout: a 4 KiB header (magic, version, the media file's id, the cache
 * file's device and inode, pages), then the bitmap.  Userspace only; the kernel module has no media store.
 */
#ifndef CXLSSD_MODEL_MEDIA_DIRTY_H
#define CXLSSD_MODEL_MEDIA_DIRTY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct media_dirty;

/* What a map belongs to: the media file and the cache file. */
struct media_dirty_owner {
    uint64_t media_id;          /* the media file's header id */
    uint64_t cache_dev, cache_ino;
    uint64_t pages;
};

/*
 * Open (or create) @path for @owner.  A map left for another media or
 * cache file is refused, naming @path, so dirty pages are never written
 * into the wrong file or taken from the wrong cache.  Sets *@found: the
 * map existed (its bits are a dirty set to recover).  NULL with a message
 * in @err.
 */
struct media_dirty *media_dirty_open(const char *path,
                                     const struct media_dirty_owner *owner,
                                     bool *found, char *err, size_t errlen);
void media_dirty_close(struct media_dirty *d);

/* Set the bits of pages [@page, @page + @n).  Async-signal-safe. */
void media_dirty_set(struct media_dirty *d, uint64_t page, uint64_t n);
/* Clear @page's bit.  Async-signal-safe. */
void media_dirty_clear(struct media_dirty *d, uint64_t page);
bool media_dirty_test(const struct media_dirty *d, uint64_t page);
/* The first set bit at or after @page, or UINT64_MAX. */
uint64_t media_dirty_next(const struct media_dirty *d, uint64_t page);
/* Clear every bit (the cache was emptied). */
void media_dirty_clear_all(struct media_dirty *d);
uint64_t media_dirty_count(const struct media_dirty *d);

#endif
