/*
 * cxl-ssd memory backend: which of cxl-type3's memdevs holds the device's
 * media, and whether that backend can do what the device promises.
 *
 * A cxl-ssd carries one kind of capacity: volatile-memdev (a CXL volatile
 * memory device, the default) or persistent-memdev (a CXL persistent
 * memory device with a label storage area, lsa=).  Both in one device
 * would need two trapped ranges and two media files for one model; a VM
 * that wants both gets a volatile and a persistent cxl-ssd side by side.
 *
 * Persistent means the cache survives QEMU's death: every store the guest
 * made lands in the backend's file at once (the cache is that file's page
 * cache), so the backend must be a named file, never a memfd, which dies
 * with the process.  With media=PATH the file holds only the cached pages
 * and the media store keeps a crash-consistent map of the dirty ones
 * (model/media_dirty.c); the next start writes them back before the guest
 * runs.  The labels (lsa=) must outlive QEMU as well.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <sys/vfs.h>
#include <linux/magic.h>
#include "qapi/error.h"
#include "qom/object.h"
#include "exec/ramblock.h"
#include "system/hostmem.h"
#include "cxl_ssd.h"

static const char *cxl_ssd_backend_prop(const CXLSSDState *s)
{
    return s->persistent ? "persistent-memdev" : "volatile-memdev";
}

/* A file that has a name (st_nlink > 0): not a memfd, not unlinked. */
static bool cxl_ssd_fd_named(int fd)
{
    struct stat st;

    return fstat(fd, &st) == 0 && st.st_nlink > 0;
}

/* The fd of @be's RAM block if it is shared and fd-backed, else -1. */
static int cxl_ssd_backend_shared_fd(HostMemoryBackend *be)
{
    MemoryRegion *mr = host_memory_backend_get_memory(be);
    int fd = memory_region_get_fd(mr);

    return fd >= 0 && qemu_ram_is_shared(mr->ram_block) ? fd : -1;
}

bool cxl_ssd_backend_init(CXLSSDState *s, Error **errp)
{
    CXLType3Dev *ct3d = CXL_TYPE3(s);
    HostMemoryBackend *be;
    int fd;

    if (ct3d->hostmem) {
        error_setg(errp, "memdev: cxl-ssd takes volatile-memdev or "
                   "persistent-memdev (memdev is cxl-type3's old name for "
                   "persistent-memdev)");
        return false;
    }
    if (!ct3d->hostvmem == !ct3d->hostpmem) {
        error_setg(errp, "volatile-memdev, persistent-memdev: cxl-ssd "
                   "needs exactly one of them (one kind of capacity per "
                   "device; attach a volatile and a persistent cxl-ssd "
                   "side by side for both)");
        return false;
    }
    s->persistent = ct3d->hostpmem != NULL;
    be = s->persistent ? ct3d->hostpmem : ct3d->hostvmem;
    s->backend = be;
    s->media_size = memory_region_size(host_memory_backend_get_memory(be));

    if (ct3d->lsa == be) {
        /* label writes would land on media page 0, behind the trap */
        error_setg(errp, "lsa: must not be the %s backend",
                   cxl_ssd_backend_prop(s));
        return false;
    }
    if (!s->persistent) {
        return true;
    }
    if (ct3d->sn == ~0ULL || ct3d->sn == 0) {     /* ~0: sn unset */
        /* Linux keys a CXL pmem region's interleave-set cookie on the
         * serial numbers and DPA offsets; with no serial (or 0) and a
         * region at DPA 0 the cookie is 0, and a restarted guest rejects
         * every namespace label as invalid */
        error_setg(errp, "sn: a persistent cxl-ssd needs a serial number "
                   "(sn=N, nonzero, unique per device): Linux keeps its "
                   "namespace labels under it");
        return false;
    }
    if (!ct3d->lsa) {
        error_setg(errp, "lsa: a persistent cxl-ssd needs a label storage "
                   "area (lsa=<memory-backend-file id>, e.g. 1M): Linux "
                   "keeps its namespaces there");
        return false;
    }
    fd = cxl_ssd_backend_shared_fd(ct3d->lsa);
    if (fd < 0 || !cxl_ssd_fd_named(fd)) {
        error_setg(errp, "lsa: the labels of a persistent cxl-ssd must "
                   "outlive QEMU: memory-backend-file,mem-path=FILE,"
                   "share=on");
        return false;
    }
    fd = cxl_ssd_backend_shared_fd(be);
    if (fd < 0 || !cxl_ssd_fd_named(fd)) {
        error_setg(errp, "persistent-memdev: its data must outlive QEMU: "
                   "memory-backend-file,mem-path=FILE,share=on (mode=uffd: "
                   "FILE on tmpfs, e.g. /dev/shm/NAME; a memfd or an "
                   "unshared backend dies with QEMU)");
        return false;
    }
    return true;
}

int cxl_ssd_backend_fd(CXLSSDState *s, uint64_t *fd_offset, Error **errp)
{
    MemoryRegion *mr = host_memory_backend_get_memory(s->backend);
    int fd = cxl_ssd_backend_shared_fd(s->backend);
    struct statfs sfs;

    if (fd < 0) {
        error_setg(errp, "%s: mode=uffd needs a shared, fd-backed memory "
                   "backend (memory-backend-memfd,share=on%s)",
                   cxl_ssd_backend_prop(s),
                   s->persistent ? "; persistent: memory-backend-file,"
                   "mem-path=FILE on tmpfs,share=on" : "");
        return -1;
    }
    /* userfaultfd MINOR mode works on shmem (and hugetlbfs, whose pages
     * are not 4 KiB); a file elsewhere fails only at registration. */
    if (fstatfs(fd, &sfs) == 0 && sfs.f_type != TMPFS_MAGIC) {
        error_setg(errp, "%s: mode=uffd needs shmem: memory-backend-memfd, "
                   "or memory-backend-file with mem-path on tmpfs (e.g. "
                   "/dev/shm), share=on (filesystem type 0x%lx)",
                   cxl_ssd_backend_prop(s), (unsigned long)sfs.f_type);
        return -1;
    }
    *fd_offset = mr->ram_block->fd_offset;
    return fd;
}

char *cxl_ssd_backend_path(CXLSSDState *s)
{
    int fd = cxl_ssd_backend_shared_fd(s->backend);
    g_autofree char *link = g_strdup_printf("/proc/self/fd/%d", fd);

    /* the file's own absolute path, whatever mem-path was relative to */
    return fd < 0 ? NULL : g_file_read_link(link, NULL);
}

const char *cxl_ssd_capacity_name(const CXLSSDState *s)
{
    return s->persistent ? "persistent" : "volatile";
}
