/*
 * The flusher (media-page-cache=off).  The file's data I/O is buffered, so
 * a fill from a page still in the page cache costs a copy, not a disk read
 * (media-page-cache=on, the default: the kernel keeps and reclaims those
 * pages as it likes).  With media-page-cache=off the kernel's copies are
 * not kept: a filled page lives in the memfd now, so its (clean)
 * page-cache copy is dropped at once (POSIX_FADV_DONTNEED; readahead is
 * off, POSIX_FADV_RANDOM, so a fill reads only its page).  A written
 * page's copy is dirty and cannot be dropped before the disk has it, and
 * waiting for the disk on the fault path would put disk latency into
 * misses: so a writeback only queues the page for this thread, which
 * writes queued pages to disk (sync_file_range, waiting) and then drops
 * them.  The queue holds at most FLUSH_BUDGET pages: a writeback that
 * finds it full waits for the flusher (back-pressure, only when the disk
 * is slower than the eviction rate), so host memory holds the cache plus
 * at most FLUSH_BUDGET pages of the file.  A miss on an evicted page then
 * pays the disk's read latency.  Close drains the queue before the
 * metadata is saved.
 */
#include "media_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define FLUSH_BATCH 64u         /* pages the flusher starts at once */

/* Queue the page just written at file offset @off for the flusher; waits
 * while FLUSH_BUDGET pages are queued.  Async-signal-safe. */
void media_flush_queue(struct cxlssd_media *md, uint64_t off)
{
    uint64_t t = atomic_fetch_add(&md->fl_head, 1);
    while (t - atomic_load(&md->fl_tail) >= FLUSH_BUDGET) {
        struct timespec ts = { 0, 20000 };
        nanosleep(&ts, NULL);   /* the disk is behind: back-pressure */
    }
    atomic_store(&md->fl_ring[t % FLUSH_BUDGET], off + 1);
    if (atomic_exchange(&md->fl_sleeping, false)) {
        uint64_t one = 1;
        (void)!write(md->fl_efd, &one, sizeof(one));
    }
}

/* The flusher: takes queued pages in ticket order, writes them to disk and
 * drops them from the page cache; exits when stopped and drained. */
static void *flusher_main(void *arg)
{
    struct cxlssd_media *md = arg;
    uint64_t offs[FLUSH_BATCH];
    uint64_t t = atomic_load(&md->fl_tail);
    for (;;) {
        uint32_t n = 0;
        while (n < FLUSH_BATCH) {
            uint64_t v = atomic_load(&md->fl_ring[t % FLUSH_BUDGET]);
            if (!v) {
                break;  /* empty, or its writer is between ticket and store */
            }
            atomic_store(&md->fl_ring[t % FLUSH_BUDGET], 0);
            offs[n++] = v - 1;
            t++;
        }
        if (n == 0) {
            if (atomic_load(&md->fl_stop) && atomic_load(&md->fl_head) == t) {
                return NULL;
            }
            atomic_store(&md->fl_sleeping, true);
            if (!atomic_load(&md->fl_ring[t % FLUSH_BUDGET]) &&
                !atomic_load(&md->fl_stop)) {
                uint64_t c;
                (void)!read(md->fl_efd, &c, sizeof(c));
            }
            atomic_store(&md->fl_sleeping, false);
            continue;
        }
        for (uint32_t i = 0; i < n; i++) {
            sync_file_range(md->fd, (off_t)offs[i], md->page_size,
                            SYNC_FILE_RANGE_WRITE);
        }
        for (uint32_t i = 0; i < n; i++) {
            sync_file_range(md->fd, (off_t)offs[i], md->page_size,
                            SYNC_FILE_RANGE_WAIT_BEFORE |
                            SYNC_FILE_RANGE_WRITE |
                            SYNC_FILE_RANGE_WAIT_AFTER);
            posix_fadvise(md->fd, (off_t)offs[i], md->page_size,
                          POSIX_FADV_DONTNEED);
        }
        atomic_store(&md->fl_tail, t);
    }
}

int media_flusher_start(struct cxlssd_media *md)
{
    md->fl_efd = eventfd(0, EFD_CLOEXEC);
    if (md->fl_efd < 0) {
        return -errno;
    }
    /* the flusher takes none of the process's signals (SIGBUS delivery,
     * QEMU's own) */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int r = pthread_create(&md->fl_thread, NULL, flusher_main, md);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (r != 0) {
        close(md->fl_efd);
        md->fl_efd = -1;
        return -r;
    }
    return 0;
}

/* Drain the queue and end the flusher (no writeback may run meanwhile). */
void media_flusher_stop(struct cxlssd_media *md)
{
    if (md->fl_efd < 0) {
        return;
    }
    atomic_store(&md->fl_stop, true);
    uint64_t one = 1;
    (void)!write(md->fl_efd, &one, sizeof(one));
    pthread_join(md->fl_thread, NULL);
    close(md->fl_efd);
    md->fl_efd = -1;
}
