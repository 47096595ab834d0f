/*
 * The layer's state: what the kernel keeps per inode and per open file
 * description, mirrored for the files the layer tracks.
 *
 * Locks, in the order they nest (fork's prepare handler takes them all):
 *   fd table stripes    fdtable.c; held only to read or swap a slot, or
 *                       by fork, exec and spawn to walk the table
 *   registry (files.c)  opens and last closes; never on the data path
 *   desc->lock          the file offset: read/write/lseek on a description
 *   inode->lock         shared by data copies and size-keeping calls,
 *                       exclusive for what moves the file's end backwards
 *                       or replaces the mapping (ftruncate, remap, fstat)
 */
#ifndef TDM_CORE_H
#define TDM_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "persist.h"
#include "policy.h"
#include "rwlock.h"
#include "stats.h"

/* the kernel's cap on one read or write (MAX_RW_COUNT) */
#define TDM_MAX_RW 0x7ffff000L

struct tdm_inode {
    dev_t dev;
    ino_t ino;
    struct tdm_rwlock lock;
    /* the file's size as the layer knows it; size_stale: the kernel
     * changed it in a way the layer could not follow, fstat before use */
    _Atomic uint64_t size;
    _Atomic bool size_stale;
    /* under lock: the mapping (a reservation past the end) */
    enum tdm_map_kind kind;
    char *map;
    uint64_t map_len;
    bool map_writable;
    enum tdm_flush_kind flush;       /* for stores through the mapping */
    /* metadata changes (size, kernel writes) and the last one fsync'ed */
    _Atomic uint64_t meta_gen, synced_gen;
    _Atomic bool app_mapped;         /* the app mapped it writable itself */
    struct tdm_regions *regions;     /* TDM_POLICY=recur */
    struct tdm_stats_file *stats;
    int refs;                        /* descriptions; under the registry */
    struct tdm_inode *next;          /* registry hash chain */
};

struct tdm_desc {
    _Atomic int refs;                /* fd slots and calls in flight */
    pthread_mutex_t lock;
    int64_t offset;                  /* under lock, unless kernel_offset */
    _Atomic int flags;               /* open flags (F_SETFL changes some) */
    /* the kernel keeps the offset (shared with another process, a stdio
     * stream, O_DIRECT): offset-moving calls pass through */
    _Atomic bool kernel_offset;
    /* every call passes through (fixed at open: write-only, O_DIRECT,
     * a file that cannot be mapped) */
    bool passthrough;
    struct tdm_inode *inode;
    struct tdm_desc *prev, *next;    /* registry list */
};

/* files.c: inodes and descriptions */

/*
 * The description for a new fd on a regular file (@st its fstat), opened
 * with @flags; @fd maps the file where the inode is new.  NULL where the
 * layer has no memory for it (the fd is then untracked).
 */
struct tdm_desc *tdm_desc_open(int fd, const struct stat *st, int flags,
                               const char *path);
void tdm_desc_ref(struct tdm_desc *d);
void tdm_desc_put(struct tdm_desc *d);

/*
 * The description's lock, with cancellation off while it is held (the
 * kernel calls made under it are cancellation points); returns the
 * cancel state for tdm_desc_unlock.
 */
static inline int tdm_desc_lock(struct tdm_desc *d)
{
    int cs;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
    pthread_mutex_lock(&d->lock);
    return cs;
}

static inline void tdm_desc_unlock(struct tdm_desc *d, int cs)
{
    pthread_mutex_unlock(&d->lock);
    pthread_setcancelstate(cs, NULL);
}

/* tdm_desc_put at the end of a call: the call's errno survives it */
void tdm_desc_release(struct tdm_desc *d);

/* the inode the layer tracks for (@dev, @ino), referenced; or NULL */
struct tdm_inode *tdm_inode_find(dev_t dev, ino_t ino);
void tdm_inode_put(struct tdm_inode *ino);

/* fork: take every lock; release them (parent, and child) */
void tdm_files_lock_all(void);
void tdm_files_unlock_all(bool child);

/* mapping.c: the inode's mapping; called with inode->lock exclusive */

/*
 * Maps @fd (open with @flags) for the first time: decides the inode's kind
 * (sync, shared under TDM_ALLOW_NONDAX, none).
 */
void tdm_map_first(struct tdm_inode *ino, int fd, int flags);

/*
 * Makes the mapping cover [0, @end) (and writable if @write) through @fd,
 * open with @fd_flags; returns 0, or -1 where it cannot (the call then
 * passes through).
 */
int tdm_map_cover(struct tdm_inode *ino, int fd, int fd_flags, uint64_t end,
                  bool write);

void tdm_map_release(struct tdm_inode *ino);

/* sizes */

/* inode->size from fstat(@fd); with inode->lock exclusive */
void tdm_size_refresh(struct tdm_inode *ino, int fd);

/* after a kernel write that ended at @end (or -1: unknown) */
void tdm_size_kernel_wrote(struct tdm_inode *ino, int64_t end);

static inline bool tdm_inode_mapped(const struct tdm_inode *ino)
{
    return ino->kind == TDM_MAP_SYNC || ino->kind == TDM_MAP_SHARED;
}

#endif
