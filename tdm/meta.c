/*
 * The calls around the data path (tdm.h): fsync and fdatasync, the calls
 * that move a file's end, the app's own mmap, and the kernel's copy calls
 * that use a description's offset (sendfile, copy_file_range, splice).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdtable.h"
#include "real.h"
#include "tdm.h"

/*
 * Whether fsync can be answered without the kernel: every store the layer
 * made is durable already (MAP_SYNC, written back at each write), and
 * nothing the layer did not make durable changed since the last fsync:
 * the size, a kernel write, a store through the app's own mapping.
 */
static bool durable(struct tdm_desc *d)
{
    struct tdm_inode *ino = d->inode;
    return !d->passthrough && ino->kind == TDM_MAP_SYNC &&
           ino->flush != TDM_FLUSH_NONE && !atomic_load(&ino->app_mapped) &&
           !atomic_load(&ino->size_stale) &&
           atomic_load(&ino->meta_gen) == atomic_load(&ino->synced_gen);
}

static int sync_call(int fd, int (*call)(int))
{
    struct tdm_desc *d = tdm_fd_get(fd);
    if (!d) {
        return call(fd);
    }
    struct tdm_inode *ino = d->inode;
    if (durable(d)) {
        tdm_stats_add(ino->stats, TDM_C_FSYNC_CALLS_SERVED, 1);
        tdm_desc_release(d);
        return 0;
    }
    uint64_t gen = atomic_load(&ino->meta_gen);
    int r = call(fd);
    if (r == 0) {
        uint64_t done = atomic_load(&ino->synced_gen);
        while (done < gen &&
               !atomic_compare_exchange_weak(&ino->synced_gen, &done, gen)) {
        }
    }
    tdm_stats_add(ino->stats, TDM_C_FSYNC_CALLS_PASSED, 1);
    tdm_desc_release(d);
    return r;
}

int tdm_fsync(int fd)
{
    return sync_call(fd, tdm_real.fsync);
}

int tdm_fdatasync(int fd)
{
    return sync_call(fd, tdm_real.fdatasync);
}

/* a call that moves the end, made with the inode's lock exclusive; after
 * it (@rc 0) the size is @len, or the kernel's where @len is -1 */
static void end_moved(struct tdm_inode *ino, int fd, int rc, off_t len)
{
    if (rc) {
        return;
    }
    if (len >= 0) {
        atomic_store(&ino->size, (uint64_t)len);
        atomic_store(&ino->size_stale, false);
    } else {
        tdm_size_refresh(ino, fd);
    }
    atomic_fetch_add(&ino->meta_gen, 1);
}

int tdm_ftruncate(int fd, off_t len)
{
    struct tdm_desc *d = tdm_fd_get(fd);
    if (!d) {
        return tdm_real.ftruncate(fd, len);
    }
    struct tdm_inode *ino = d->inode;
    tdm_rwlock_wrlock(&ino->lock);
    int r = tdm_real.ftruncate(fd, len);
    int e = errno;
    end_moved(ino, fd, r, len);
    tdm_rwlock_unlock(&ino->lock);
    errno = e;
    tdm_desc_release(d);
    return r;
}

int tdm_truncate(const char *path, off_t len)
{
    struct stat st;
    struct tdm_inode *ino = NULL;
    int e = errno;
    if (!stat(path, &st)) {
        ino = tdm_inode_find(st.st_dev, st.st_ino);
    }
    errno = e;
    if (!ino) {
        return tdm_real.truncate(path, len);
    }
    tdm_rwlock_wrlock(&ino->lock);
    int r = tdm_real.truncate(path, len);
    e = errno;
    if (!r) {
        atomic_store(&ino->size, (uint64_t)len);
        atomic_fetch_add(&ino->meta_gen, 1);
    }
    tdm_rwlock_unlock(&ino->lock);
    tdm_inode_put(ino);
    errno = e;
    return r;
}

int tdm_fallocate(int fd, int mode, off_t off, off_t len)
{
    struct tdm_desc *d = tdm_fd_get(fd);
    if (!d) {
        return tdm_real.fallocate(fd, mode, off, len);
    }
    struct tdm_inode *ino = d->inode;
    tdm_rwlock_wrlock(&ino->lock);
    int r = tdm_real.fallocate(fd, mode, off, len);
    int e = errno;
    end_moved(ino, fd, r, -1);
    tdm_rwlock_unlock(&ino->lock);
    errno = e;
    tdm_desc_release(d);
    return r;
}

int tdm_posix_fallocate(int fd, off_t off, off_t len)
{
    struct tdm_desc *d = tdm_fd_get(fd);
    if (!d) {
        return tdm_real.posix_fallocate(fd, off, len);
    }
    struct tdm_inode *ino = d->inode;
    tdm_rwlock_wrlock(&ino->lock);
    int r = tdm_real.posix_fallocate(fd, off, len);
    end_moved(ino, fd, r, -1);
    tdm_rwlock_unlock(&ino->lock);
    tdm_desc_release(d);
    return r;
}

void *tdm_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    struct tdm_desc *d = (flags & MAP_ANONYMOUS) ? NULL : tdm_fd_get(fd);
    if (d) {
        /* the app's stores are made durable by the kernel's fsync only */
        if ((flags & MAP_TYPE) != MAP_PRIVATE && (prot & PROT_WRITE)) {
            atomic_store(&d->inode->app_mapped, true);
        }
        tdm_desc_release(d);
    }
    return tdm_real.mmap(addr, len, prot, flags, fd, off);
}

/*
 * A kernel call that uses the offset of @fd's description (when @uses):
 * the layer's offset handed to the kernel before it and read back after.
 */
struct kept {
    struct tdm_desc *d;
    int fd;
    bool locked;
    int cs;
};

static int keep_begin(struct kept *k, int fd, bool uses, struct tdm_desc *other)
{
    k->fd = fd;
    k->locked = false;
    if (!(k->d = tdm_fd_get(fd)) || !uses || k->d == other ||
        atomic_load(&k->d->kernel_offset)) {
        return 0;
    }
    k->cs = tdm_desc_lock(k->d);
    k->locked = true;
    if (atomic_load(&k->d->kernel_offset)) {
        return 0;
    }
    return tdm_real.lseek(fd, k->d->offset, SEEK_SET) < 0 ? -1 : 0;
}

/* after the call (@r its result; @wrote: this side was written) */
static void keep_end(struct kept *k, bool wrote, ssize_t r)
{
    if (!k->d) {
        return;
    }
    int e = errno;
    tdm_stats_io(k->d->inode->stats, wrote, 0, r);
    if (k->locked) {
        off_t pos = tdm_real.lseek(k->fd, 0, SEEK_CUR);
        if (pos >= 0 && !atomic_load(&k->d->kernel_offset)) {
            k->d->offset = pos;
        }
        tdm_desc_unlock(k->d, k->cs);
    }
    if (wrote && r > 0) {
        tdm_size_kernel_wrote(k->d->inode, -1);
    }
    tdm_desc_put(k->d);
    errno = e;
}

/* the two descriptions locked in address order (no two calls deadlock) */
static int keep_pair(struct kept *a, int fda, bool ua, struct kept *b, int fdb,
                     bool ub)
{
    struct tdm_desc *da = tdm_fd_get(fda), *db = tdm_fd_get(fdb);
    bool a_first = !da || !db || da < db;
    if (da) {
        tdm_desc_put(da);
    }
    if (db) {
        tdm_desc_put(db);
    }
    int rc;
    if (a_first) {
        rc = keep_begin(a, fda, ua, NULL);
        rc |= keep_begin(b, fdb, ub, a->locked ? a->d : NULL);
    } else {
        rc = keep_begin(b, fdb, ub, NULL);
        rc |= keep_begin(a, fda, ua, b->locked ? b->d : NULL);
    }
    return rc;
}

ssize_t tdm_sendfile(int out, int in, off_t *off, size_t n)
{
    struct kept ki, ko;
    ssize_t r = -1;
    if (!keep_pair(&ki, in, off == NULL, &ko, out, true)) {
        r = tdm_real.sendfile(out, in, off, n);
    }
    keep_end(&ki, false, r);
    keep_end(&ko, true, r);
    return r;
}

/* copy_file_range and splice: an offset pointer per side, NULL = the
 * description's */
static ssize_t copy_call(ssize_t (*call)(int, off_t *, int, off_t *, size_t,
                                         unsigned),
                         int in, off_t *in_off, int out, off_t *out_off,
                         size_t n, unsigned flags)
{
    struct kept ki, ko;
    ssize_t r = -1;
    if (!keep_pair(&ki, in, in_off == NULL, &ko, out, out_off == NULL)) {
        r = call(in, in_off, out, out_off, n, flags);
    }
    keep_end(&ki, false, r);
    keep_end(&ko, true, r);
    return r;
}

ssize_t tdm_copy_file_range(int in, off_t *in_off, int out, off_t *out_off,
                            size_t n, unsigned flags)
{
    return copy_call(tdm_real.copy_file_range, in, in_off, out, out_off, n,
                     flags);
}

ssize_t tdm_splice(int in, off_t *in_off, int out, off_t *out_off, size_t n,
                   unsigned flags)
{
    return copy_call(tdm_real.splice, in, in_off, out, out_off, n, flags);
}
