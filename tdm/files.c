/* Inodes and open file descriptions the layer tracks (core.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "core.h"

#define BUCKETS 256u

static pthread_mutex_t registry = PTHREAD_MUTEX_INITIALIZER;
static struct tdm_inode *buckets[BUCKETS];
static struct tdm_desc *descs;  /* every live description */

static unsigned bucket(dev_t dev, ino_t ino)
{
    return (unsigned)((ino ^ (ino >> 16) ^ dev * 31) % BUCKETS);
}

/* the file's name for the statistics: where /proc says the fd points */
static void name_of(int fd, const char *path, char *out, size_t size)
{
    char link[64];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, out, size - 1);
    if (n <= 0) {
        snprintf(out, size, "%s", path);
        return;
    }
    out[n] = '\0';
}

/* the inode of @st, referenced: found, or made (and mapped through @fd) */
static struct tdm_inode *inode_get(int fd, const struct stat *st, int flags,
                                   const char *path)
{
    unsigned b = bucket(st->st_dev, st->st_ino);
    struct tdm_inode *ino;
    for (ino = buckets[b]; ino; ino = ino->next) {
        if (ino->dev == st->st_dev && ino->ino == st->st_ino) {
            ino->refs++;
            /* another process may have changed the file since; O_TRUNC
             * did: the next call that needs the size asks the kernel */
            atomic_store(&ino->size_stale, true);
            if (ino->kind == TDM_MAP_UNKNOWN) {
                tdm_rwlock_wrlock(&ino->lock);
                tdm_map_first(ino, fd, flags);
                tdm_rwlock_unlock(&ino->lock);
            }
            return ino;
        }
    }
    char name[PATH_MAX];
    name_of(fd, path, name, sizeof(name));
    if (!(ino = calloc(1, sizeof(*ino)))) {
        return NULL;
    }
    ino->dev = st->st_dev;
    ino->ino = st->st_ino;
    ino->size = (uint64_t)st->st_size;
    ino->refs = 1;
    ino->stats = tdm_stats_file(st->st_dev, st->st_ino, name);
    if (tdm_cfg.policy == TDM_POLICY_RECUR) {
        ino->regions = tdm_regions_new();
    }
    if (!ino->stats || (tdm_cfg.policy == TDM_POLICY_RECUR && !ino->regions)) {
        tdm_regions_free(ino->regions);
        free(ino);
        return NULL;
    }
    tdm_map_first(ino, fd, flags);
    ino->next = buckets[b];
    buckets[b] = ino;
    return ino;
}

struct tdm_desc *tdm_desc_open(int fd, const struct stat *st, int flags,
                               const char *path)
{
    struct tdm_desc *d = calloc(1, sizeof(*d));
    if (!d) {
        return NULL;
    }
    pthread_mutex_lock(&registry);
    struct tdm_inode *ino = inode_get(fd, st, flags, path);
    if (!ino) {
        pthread_mutex_unlock(&registry);
        free(d);
        return NULL;
    }
    pthread_mutex_init(&d->lock, NULL);
    d->refs = 1;
    d->flags = flags;
    d->inode = ino;
    /* what other processes did to the file before this open (a kernel
     * write, a size they set) is durable only once the kernel's fsync ran:
     * the first fsync after an open goes to the kernel (tdm_fsync) */
    atomic_fetch_add(&ino->meta_gen, 1);
    /* a file that cannot be mapped: tdm_map_first gave the reason */
    unsigned reason = 0;
    if ((flags & O_ACCMODE) == O_WRONLY || (flags & O_ACCMODE) == O_ACCMODE) {
        reason = TDM_R_WRITE_ONLY;
    } else if (flags & O_DIRECT) {
        reason = TDM_R_O_DIRECT;
    }
    d->passthrough = reason || !tdm_inode_mapped(ino);
    d->kernel_offset = d->passthrough;
    if (reason) {
        tdm_stats_reason(ino->stats, reason);
    }
    tdm_stats_add(ino->stats, TDM_C_OPEN_CALLS, 1);
    d->next = descs;
    if (descs) {
        descs->prev = d;
    }
    descs = d;
    pthread_mutex_unlock(&registry);
    return d;
}

void tdm_desc_ref(struct tdm_desc *d)
{
    atomic_fetch_add_explicit(&d->refs, 1, memory_order_relaxed);
}

void tdm_inode_put(struct tdm_inode *ino)
{
    pthread_mutex_lock(&registry);
    if (--ino->refs) {
        pthread_mutex_unlock(&registry);
        return;
    }
    struct tdm_inode **p = &buckets[bucket(ino->dev, ino->ino)];
    while (*p != ino) {
        p = &(*p)->next;
    }
    *p = ino->next;
    pthread_mutex_unlock(&registry);
    tdm_map_release(ino);
    tdm_regions_free(ino->regions);
    free(ino);
}

void tdm_desc_put(struct tdm_desc *d)
{
    if (atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) != 1) {
        return;
    }
    pthread_mutex_lock(&registry);
    if (d->prev) {
        d->prev->next = d->next;
    } else {
        descs = d->next;
    }
    if (d->next) {
        d->next->prev = d->prev;
    }
    pthread_mutex_unlock(&registry);
    struct tdm_inode *ino = d->inode;
    pthread_mutex_destroy(&d->lock);
    free(d);
    tdm_inode_put(ino);
}

void tdm_desc_release(struct tdm_desc *d)
{
    int e = errno;
    tdm_desc_put(d);
    errno = e;
}

struct tdm_inode *tdm_inode_find(dev_t dev, ino_t ino)
{
    pthread_mutex_lock(&registry);
    struct tdm_inode *i;
    for (i = buckets[bucket(dev, ino)]; i; i = i->next) {
        if (i->dev == dev && i->ino == ino) {
            i->refs++;
            break;
        }
    }
    pthread_mutex_unlock(&registry);
    return i;
}

void tdm_files_lock_all(void)
{
    pthread_mutex_lock(&registry);
    for (struct tdm_desc *d = descs; d; d = d->next) {
        pthread_mutex_lock(&d->lock);
    }
    for (unsigned b = 0; b < BUCKETS; b++) {
        for (struct tdm_inode *i = buckets[b]; i; i = i->next) {
            tdm_rwlock_wrlock(&i->lock);
        }
    }
}

void tdm_files_unlock_all(bool child)
{
    for (unsigned b = 0; b < BUCKETS; b++) {
        for (struct tdm_inode *i = buckets[b]; i; i = i->next) {
            if (child) {
                tdm_rwlock_reset(&i->lock);
            } else {
                tdm_rwlock_unlock(&i->lock);
            }
        }
    }
    for (struct tdm_desc *d = descs; d; d = d->next) {
        pthread_mutex_unlock(&d->lock);
    }
    pthread_mutex_unlock(&registry);
}
