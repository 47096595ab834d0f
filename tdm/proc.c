/*
 * Other processes sharing descriptions (tdm.h).  fork: the child shares
 * every description, and with it the offset, so before it the offsets the
 * layer keeps go to the kernel, which keeps them from then on, in parent
 * and child (pthread_atfork; every layer lock is held across the fork, so
 * the child finds none taken by a thread it does not have).  exec and spawn: the same for what the new
 * image inherits.  pread and pwrite on a shared description are still
 * served: they use no offset.
 */
#include <fcntl.h>
#include <unistd.h>

#include "fdtable.h"
#include "real.h"
#include "tdm.h"

/* hands @d's offset to the kernel for good (the caller holds d->lock) */
static void give_offset(int fd, struct tdm_desc *d)
{
    if (atomic_load(&d->kernel_offset)) {
        return;
    }
    tdm_real.lseek(fd, d->offset, SEEK_SET);
    atomic_store(&d->kernel_offset, true);
    tdm_stats_reason(d->inode->stats, TDM_R_SHARED_OFFSET);
}

static void give_locked(int fd, struct tdm_desc *d, bool cloexec, void *ctx)
{
    (void)cloexec;
    (void)ctx;
    give_offset(fd, d);
}

static void fork_prepare(void)
{
    tdm_fd_lock_all();
    tdm_files_lock_all();
    tdm_stats_lock_all();
    tdm_fd_each(give_locked, NULL);
}

static void fork_parent(void)
{
    tdm_stats_unlock_all();
    tdm_files_unlock_all(false);
    tdm_fd_unlock_all();
}

static void fork_child(void)
{
    tdm_stats_unlock_all();
    tdm_files_unlock_all(true);
    tdm_fd_unlock_all();
    tdm_stats_reset();
}

void tdm_proc_init(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* ctx: whether every description is inherited, FD_CLOEXEC or not */
static void give_inherited(int fd, struct tdm_desc *d, bool cloexec, void *ctx)
{
    bool all = *(bool *)ctx;
    int cs = tdm_desc_lock(d);
    if (all || !cloexec) {
        give_offset(fd, d);
    } else if (!atomic_load(&d->kernel_offset)) {
        /* not inherited, but an exec that fails leaves it consistent */
        tdm_real.lseek(fd, d->offset, SEEK_SET);
    }
    tdm_desc_unlock(d, cs);
}

static void give_all_inherited(bool all)
{
    tdm_fd_lock_all();
    tdm_fd_each(give_inherited, &all);
    tdm_fd_unlock_all();
}

void tdm_before_exec(void)
{
    give_all_inherited(false);
    /* the image that counted them is about to go: its rows now (a failed
     * exec counts on from zero) */
    tdm_write_stats();
    tdm_stats_reset();
}

void tdm_before_spawn(bool all)
{
    give_all_inherited(all);
}
