/*
 * userfaultfd setup for the trap engine: open (syscall, or /dev/userfaultfd
 * when the syscall is denied), feature probing, MINOR (+WP) registration,
 * and the ioctls used on the miss path.
 *
 * With a media store (media.c) the range is registered MISSING as well:
 * a non-resident page is a hole in the memfd.
 *
 * Never UFFD_USER_MODE_ONLY: faults raised from kernel paths (KVM's
 * get_user_pages, QEMU's read() into guest memory) must be delivered too.
 *
 * Write-protect tracking on shmem needs UFFD_FEATURE_WP_HUGETLBFS_SHMEM (to
 * register MODE_WP on a shmem VMA) and UFFDIO_CONTINUE_MODE_WP (to map a
 * clean page read-only; no feature bit, Linux >= 6.3): it is probed once at
 * start-up by mapping page 0 with MODE_WP and unmapping it again.  If either
 * is missing, tracking degrades to "a page filled by a write fault is
 * dirty" and the mechanism string says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "trap_int.h"

/* Newer than Debian 12's linux-libc-dev (6.1). */
#ifndef UFFDIO_CONTINUE_MODE_WP
#define UFFDIO_CONTINUE_MODE_WP ((__u64)1 << 1)
#endif
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)
#endif

static int uffd_new_fd(bool *via_dev)
{
    int flags = O_CLOEXEC | O_NONBLOCK;
    int fd = (int)syscall(SYS_userfaultfd, flags);
    *via_dev = false;
    if (fd >= 0) {
        return fd;
    }
    int e = errno;
    int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
    if (dev < 0) {
        errno = e;
        return -1;
    }
    fd = ioctl(dev, USERFAULTFD_IOC_NEW, flags);
    e = errno;
    close(dev);
    if (fd < 0) {
        errno = e;
        return -1;
    }
    *via_dev = true;
    return fd;
}

/* Add feature @bit, named @name, to *@want if the kernel offers it (in
 * @have); else -1 with a message naming the property @prop needs it. */
static int need_feature(uint64_t have, uint64_t bit, const char *name,
                        const char *prop, uint64_t *want, char *err,
                        size_t errlen)
{
    if (!(have & bit)) {
        snprintf(err, errlen, "%s: kernel lacks %s (features 0x%llx)", prop,
                 name, (unsigned long long)have);
        return -1;
    }
    *want |= bit;
    return 0;
}

int trap_uffd_open(struct cxlssd_trap *t, char *err, size_t errlen)
{
    bool via_dev;
    /* Probe: an API handshake with features=0 reports what is supported.
     * The handshake can be done once per fd, so probe on a throwaway fd. */
    int fd = uffd_new_fd(&via_dev);
    if (fd < 0) {
        snprintf(err, errlen, "userfaultfd: %s (need root or "
                 "vm.unprivileged_userfaultfd=1 or /dev/userfaultfd access)",
                 strerror(errno));
        return -1;
    }
    struct uffdio_api api = { .api = UFFD_API, .features = 0 };
    if (ioctl(fd, UFFDIO_API, &api) < 0) {
        snprintf(err, errlen, "userfaultfd: UFFDIO_API: %s", strerror(errno));
        close(fd);
        return -1;
    }
    close(fd);
    t->probe.supported = api.features;
    t->probe.via_dev = via_dev;
    if (!(api.features & UFFD_FEATURE_MINOR_SHMEM)) {
        snprintf(err, errlen, "userfaultfd: kernel lacks "
                 "UFFD_FEATURE_MINOR_SHMEM (features 0x%llx; need Linux >= "
                 "5.14)", (unsigned long long)api.features);
        return -1;
    }

    uint64_t want = UFFD_FEATURE_MINOR_SHMEM;
    /* media: non-resident pages are holes in the memfd, MISSING faults */
    if (t->media &&
        need_feature(api.features, UFFD_FEATURE_MISSING_SHMEM,
                     "UFFD_FEATURE_MISSING_SHMEM", "media", &want, err,
                     errlen) < 0) {
        return -1;
    }
    if (api.features & UFFD_FEATURE_THREAD_ID) {
        want |= UFFD_FEATURE_THREAD_ID;
    }
    if (t->sigbus &&
        need_feature(api.features, UFFD_FEATURE_SIGBUS, "UFFD_FEATURE_SIGBUS",
                     "delivery=sigbus", &want, err, errlen) < 0) {
        return -1;
    }
    t->wp = false;
    if (t->cfg.track_dirty) {
        if ((api.features & UFFD_FEATURE_WP_HUGETLBFS_SHMEM) &&
            (api.features & UFFD_FEATURE_PAGEFAULT_FLAG_WP)) {
            want |= UFFD_FEATURE_WP_HUGETLBFS_SHMEM |
                    UFFD_FEATURE_PAGEFAULT_FLAG_WP;
            t->wp = true;   /* confirmed by the registration probe */
        } else {
            snprintf(t->mechanism, sizeof(t->mechanism),
                     "write-miss only: uffd WP on shmem unavailable (kernel "
                     "features 0x%llx lack WP_HUGETLBFS_SHMEM); a page filled "
                     "by a write fault is dirty, writes to resident clean "
                     "pages are not seen",
                     (unsigned long long)api.features);
        }
    }

    fd = uffd_new_fd(&via_dev);
    if (fd < 0) {
        snprintf(err, errlen, "userfaultfd: %s", strerror(errno));
        return -1;
    }
    api.api = UFFD_API;
    api.features = want;
    if (ioctl(fd, UFFDIO_API, &api) < 0) {
        snprintf(err, errlen, "userfaultfd: UFFDIO_API(features=0x%llx): %s",
                 (unsigned long long)want, strerror(errno));
        close(fd);
        return -1;
    }
    t->probe.enabled = want;
    t->uffd = fd;
    return 0;
}

static int do_register(struct cxlssd_trap *t, bool wp)
{
    struct uffdio_register reg;
    memset(&reg, 0, sizeof(reg));
    reg.range.start = (uint64_t)(uintptr_t)t->base;
    reg.range.len = t->len;
    reg.mode = UFFDIO_REGISTER_MODE_MINOR;
    if (t->media) {
        reg.mode |= UFFDIO_REGISTER_MODE_MISSING;
    }
    if (wp) {
        reg.mode |= UFFDIO_REGISTER_MODE_WP;
    }
    if (ioctl(t->uffd, UFFDIO_REGISTER, &reg) < 0) {
        return -errno;
    }
    if (!(reg.ioctls & ((uint64_t)1 << _UFFDIO_CONTINUE))) {
        return -ENOTSUP;
    }
    if (wp && !(reg.ioctls & ((uint64_t)1 << _UFFDIO_WRITEPROTECT))) {
        return -ENOTSUP;
    }
    return 0;
}

/* Map page 0 with CONTINUE_MODE_WP and unmap it: proves the kernel accepts
 * the mode (no feature bit announces it).  With a media store the memfd
 * holds no page yet: page 0 is allocated for the probe and punched out
 * again (the file keeps its data). */
static int probe_continue_wp(struct cxlssd_trap *t)
{
    bool alloc = t->media &&
        fallocate(t->memfd, 0, (off_t)t->memfd_off, (off_t)t->page_size) == 0;
    struct uffdio_continue c;
    memset(&c, 0, sizeof(c));
    c.range.start = (uint64_t)(uintptr_t)t->base;
    c.range.len = t->page_size;
    c.mode = UFFDIO_CONTINUE_MODE_WP | UFFDIO_CONTINUE_MODE_DONTWAKE;
    int r = 0;
    if (ioctl(t->uffd, UFFDIO_CONTINUE, &c) < 0 && errno != EEXIST) {
        r = -errno;
    }
    madvise(t->base, t->page_size, MADV_DONTNEED);
    if (alloc) {
        fallocate(t->memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  (off_t)t->memfd_off, (off_t)t->page_size);
    }
    return r;
}

int trap_uffd_register(struct cxlssd_trap *t, char *err, size_t errlen)
{
    int r;
    if (t->wp) {
        r = do_register(t, true);
        if (r == 0) {
            /* Pages must be unmapped for the probe's CONTINUE to apply. */
            madvise(t->base, t->len, MADV_DONTNEED);
            r = probe_continue_wp(t);
            if (r == 0) {
                snprintf(t->mechanism, sizeof(t->mechanism),
                         "uffd-wp: clean pages mapped with "
                         "UFFDIO_CONTINUE_MODE_WP; the first write traps "
                         "(features 0x%llx)",
                         (unsigned long long)t->probe.supported);
                t->registered = true;
                return 0;
            }
            struct uffdio_range rg = {
                .start = (uint64_t)(uintptr_t)t->base, .len = t->len };
            ioctl(t->uffd, UFFDIO_UNREGISTER, &rg);
            snprintf(t->mechanism, sizeof(t->mechanism),
                     "write-miss only: UFFDIO_CONTINUE_MODE_WP rejected (%s; "
                     "needs Linux >= 6.3); a page filled by a write fault is "
                     "dirty, writes to resident clean pages are not seen",
                     strerror(-r));
        } else {
            snprintf(t->mechanism, sizeof(t->mechanism),
                     "write-miss only: MINOR+WP registration failed (%s); a "
                     "page filled by a write fault is dirty, writes to "
                     "resident clean pages are not seen", strerror(-r));
        }
        t->wp = false;
    }
    r = do_register(t, false);
    if (r < 0) {
        snprintf(err, errlen, "userfaultfd: UFFDIO_REGISTER MINOR on "
                 "[%p, +0x%zx): %s (the range must be a MAP_SHARED mapping of "
                 "a memfd/shmem file)", (void *)t->base, t->len,
                 strerror(-r));
        return -1;
    }
    if (!t->cfg.track_dirty) {
        snprintf(t->mechanism, sizeof(t->mechanism),
                 "off (track-dirty=off): a page filled by a write fault is "
                 "dirty, writes to resident clean pages are not seen");
    }
    t->registered = true;
    madvise(t->base, t->len, MADV_DONTNEED);
    return 0;
}

void trap_uffd_unregister(struct cxlssd_trap *t)
{
    if (!t->registered) {
        return;
    }
    struct uffdio_range rg = {
        .start = (uint64_t)(uintptr_t)t->base, .len = t->len };
    if (ioctl(t->uffd, UFFDIO_UNREGISTER, &rg) < 0) {
        trap_error(t, "UFFDIO_UNREGISTER: %s", strerror(errno));
    }
    t->registered = false;
}

void trap_uffd_wake(struct cxlssd_trap *t, uint64_t page, uint64_t n)
{
    if (t->sigbus || trap_in_access_path()) {
        return;     /* nobody sleeps on the range: the faulter retries */
    }
    struct uffdio_range rg = {
        .start = (uint64_t)(uintptr_t)(t->base + page * t->page_size),
        .len = n * t->page_size };
    ioctl(t->uffd, UFFDIO_WAKE, &rg);
    atomic_fetch_add_explicit(&t->st_wakes, 1, memory_order_relaxed);
}

int trap_uffd_continue(struct cxlssd_trap *t, uint64_t page, uint64_t n,
                       bool wp)
{
    struct uffdio_continue c;
    memset(&c, 0, sizeof(c));
    c.range.start = (uint64_t)(uintptr_t)(t->base + page * t->page_size);
    c.range.len = n * t->page_size;
    c.mode = (wp && t->wp) ? UFFDIO_CONTINUE_MODE_WP : 0;
    if (!(c.mode & UFFDIO_CONTINUE_MODE_WP)) {
        trap_media_note_writable(t, page, n);   /* before any store */
    }
    if (t->sigbus || trap_in_access_path()) {
        c.mode |= UFFDIO_CONTINUE_MODE_DONTWAKE;    /* nobody to wake */
    }
    for (;;) {
        if (ioctl(t->uffd, UFFDIO_CONTINUE, &c) == 0) {
            return 0;
        }
        int e = errno;
        if (e == EAGAIN && c.mapped > 0 &&
            (uint64_t)c.mapped < c.range.len) {
            /* partial: continue with the rest */
            c.range.start += (uint64_t)c.mapped;
            c.range.len -= (uint64_t)c.mapped;
            c.mapped = 0;
            continue;
        }
        if (e == EAGAIN) {
            continue;   /* mm changing under us (e.g. remap): retry */
        }
        if (e == EEXIST) {
            /* Already mapped (with keep_clean: a page evicted clean),
             * write-protected if it was clean: a write miss must clear
             * that.  CONTINUE woke nobody; in the access path nobody
             * sleeps on the page. */
            if (t->keep_clean && t->wp && !wp) {
                for (uint64_t i = 0; i < n; i++) {
                    trap_uffd_unprotect(t, page + i);
                }
            }
            if (!trap_in_access_path()) {
                trap_uffd_wake(t, page, n);
            }
            return 1;
        }
        /* Never leave a faulter blocked. */
        trap_uffd_wake(t, page, n);
        return -e;
    }
}

void trap_uffd_unprotect(struct cxlssd_trap *t, uint64_t page)
{
    struct uffdio_writeprotect wp;
    memset(&wp, 0, sizeof(wp));
    wp.range.start = (uint64_t)(uintptr_t)(t->base + page * t->page_size);
    wp.range.len = t->page_size;
    wp.mode = t->sigbus || trap_in_access_path()
              ? UFFDIO_WRITEPROTECT_MODE_DONTWAKE
              : 0;    /* clear WP and wake */
    trap_media_note_writable(t, page, 1);       /* before any store */
    if (ioctl(t->uffd, UFFDIO_WRITEPROTECT, &wp) < 0) {
        trap_uffd_wake(t, page, 1);
    }
}
