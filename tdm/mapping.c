/*
 * The inode's mapping (core.h): one MAP_SHARED mapping of the whole file
 * and a reservation past its end (twice the size, at least 64 MiB, at most
 * 1 GiB past it), so a file that grows is still covered; a call past the
 * reservation replaces the mapping by a larger one.  DAX files are mapped
 * MAP_SHARED_VALIDATE | MAP_SYNC: the filesystem then makes the metadata
 * of every block a store faults in durable before the store proceeds.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "config.h"
#include "core.h"
#include "mapsync.h"
#include "real.h"

#define MiB (1024ull * 1024)
#define RESERVE_MIN (64 * MiB)
#define RESERVE_MAX_EXTRA (1024 * MiB)
#define ALIGN (2 * MiB)

static uint64_t reservation(uint64_t need)
{
    uint64_t len = need < RESERVE_MAX_EXTRA ? 2 * need : need + RESERVE_MAX_EXTRA;
    if (len < RESERVE_MIN) {
        len = RESERVE_MIN;
    }
    return (len + ALIGN - 1) & ~(ALIGN - 1);
}

static bool readable(int flags)
{
    return (flags & O_ACCMODE) == O_RDONLY || (flags & O_ACCMODE) == O_RDWR;
}

static int map(struct tdm_inode *ino, int fd, uint64_t len, bool write,
               enum tdm_map_kind kind)
{
    int prot = PROT_READ | (write ? PROT_WRITE : 0);
    int flags = kind == TDM_MAP_SYNC ? MAP_SHARED_VALIDATE | MAP_SYNC
                                     : MAP_SHARED;
    void *p = tdm_real.mmap(NULL, len, prot, flags, fd, 0);
    if (p == MAP_FAILED) {
        return -1;
    }
    if (ino->map) {
        munmap(ino->map, ino->map_len);
    }
    ino->map = p;
    ino->map_len = len;
    ino->map_writable = write;
    tdm_stats_add(ino->stats, TDM_C_MAP_CALLS, 1);
    return 0;
}

void tdm_map_first(struct tdm_inode *ino, int fd, int flags)
{
    if (!readable(flags)) {
        ino->kind = TDM_MAP_UNKNOWN;  /* mmap needs a readable fd */
        atomic_store(&ino->stats->map, ino->kind);
        return;
    }
    int e = errno;
    bool write = (flags & O_ACCMODE) == O_RDWR;
    uint64_t len = reservation(atomic_load(&ino->size));
    ino->kind = TDM_MAP_SYNC;
    if (map(ino, fd, len, write, TDM_MAP_SYNC)) {
        if (errno == EOPNOTSUPP && tdm_cfg.allow_nondax) {
            ino->kind = TDM_MAP_SHARED;
        } else {
            tdm_stats_reason(ino->stats, errno == EOPNOTSUPP
                                             ? TDM_R_NOT_DAX
                                             : TDM_R_MMAP_FAILED);
            ino->kind = TDM_MAP_NONE;
        }
        if (ino->kind == TDM_MAP_SHARED && map(ino, fd, len, write, ino->kind)) {
            tdm_stats_reason(ino->stats, TDM_R_MMAP_FAILED);
            ino->kind = TDM_MAP_NONE;
        }
    }
    /* stores to a DAX mapping are written back as they are made; a test
     * can ask for the instructions on any mapping (TDM_FLUSH) */
    ino->flush = ino->kind == TDM_MAP_SYNC || tdm_cfg.flush != TDM_FLUSH_REQ_AUTO
                     ? tdm_flush_in_use : TDM_FLUSH_NONE;
    atomic_store(&ino->stats->map, ino->kind);
    errno = e;
}

int tdm_map_cover(struct tdm_inode *ino, int fd, int fd_flags, uint64_t end,
                  bool write)
{
    if (!tdm_inode_mapped(ino)) {
        return -1;
    }
    if (end <= ino->map_len && (!write || ino->map_writable)) {
        return 0;
    }
    int e = errno;
    uint64_t len = end <= ino->map_len ? ino->map_len : reservation(end);
    /* a read through a read-only fd may give up the mapping's writability:
     * the next write through a read-write fd maps it writable again */
    bool fd_writable = (fd_flags & O_ACCMODE) == O_RDWR;
    int rc = map(ino, fd, len, write || (ino->map_writable && fd_writable),
                 ino->kind);
    errno = e;
    return rc;
}

void tdm_map_release(struct tdm_inode *ino)
{
    if (ino->map) {
        munmap(ino->map, ino->map_len);
        ino->map = NULL;
    }
}

void tdm_size_refresh(struct tdm_inode *ino, int fd)
{
    struct stat st;
    int e = errno;
    if (!fstat(fd, &st)) {
        atomic_store(&ino->size, (uint64_t)st.st_size);
        atomic_store(&ino->size_stale, false);
    }
    tdm_stats_add(ino->stats, TDM_C_EOF_FSTAT_CALLS, 1);
    errno = e;
}

void tdm_size_kernel_wrote(struct tdm_inode *ino, int64_t end)
{
    atomic_fetch_add(&ino->meta_gen, 1);
    if (end < 0) {
        atomic_store(&ino->size_stale, true);
        return;
    }
    uint64_t cur = atomic_load(&ino->size);
    while (cur < (uint64_t)end &&
           !atomic_compare_exchange_weak(&ino->size, &cur, (uint64_t)end)) {
    }
}
