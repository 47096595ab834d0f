/*
 * cxl-ssd: CXL-SSD emulation as a subclass of cxl-type3.
 *
 * Topology, mailbox, HDM decoders and CDAT stay cxl-type3's.  This file
 * owns the properties, realize/exit and reset; the window overlay lives in
 * cxl_ssd_window.c, the MMIO path in cxl_ssd_mmio.c, the miss path of uffd
 * mode in trap/ and every timing/cache decision in model/.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <sys/vfs.h>
#include <linux/magic.h>
#include "qemu/error-report.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "qemu/accel.h"
#include "exec/ramblock.h"
#include "hw/qdev-properties.h"
#include "system/hostmem.h"
#include "system/system.h"
#include "system/tcg.h"
#include "cxl_ssd.h"
#include "trace.h"

struct CXLSSDClass {
    CXLType3Class parent_class;
    void (*parent_realize)(PCIDevice *pci_dev, Error **errp);
    void (*parent_exit)(PCIDevice *pci_dev);
    ResettablePhases parent_phases;
};

#define CXL_SSD_MAX_HANDLER_THREADS 64

static bool cxl_ssd_parse_options(CXLSSDState *s, uint64_t device_size,
                                  Error **errp)
{
    char err[256];
    long phys_pages = sysconf(_SC_PHYS_PAGES);
    long page_size = sysconf(_SC_PAGESIZE);

    s->cfg.device_size = device_size;
    if (s->policy &&
        cxlssd_config_set(&s->cfg, "policy", s->policy, err, sizeof(err))) {
        error_setg(errp, "%s", err);
        return false;
    }
    if (s->eviction &&
        cxlssd_config_set(&s->cfg, "eviction", s->eviction, err,
                          sizeof(err))) {
        error_setg(errp, "%s", err);
        return false;
    }
    if (cxlssd_config_validate(&s->cfg, err, sizeof(err))) {
        error_setg(errp, "%s", err);
        return false;
    }

    if (!s->mode_name || !strcmp(s->mode_name, "uffd")) {
        s->mode = CXL_SSD_MODE_UFFD;
    } else if (!strcmp(s->mode_name, "mmio")) {
        s->mode = CXL_SSD_MODE_MMIO;
    } else {
        error_setg(errp, "mode=%s: must be one of uffd, mmio", s->mode_name);
        return false;
    }
    if (s->handler_threads < 1 ||
        s->handler_threads > CXL_SSD_MAX_HANDLER_THREADS) {
        error_setg(errp, "handler-threads=%" PRIu32 ": must be in 1..%d",
                   s->handler_threads, CXL_SSD_MAX_HANDLER_THREADS);
        return false;
    }
    if (s->compensate_ns > 10000000) {
        error_setg(errp, "compensate-ns=%" PRIu64 ": must be in 0..10000000",
                   s->compensate_ns);
        return false;
    }
    if (s->dram_latency_ns > 1000000) {
        error_setg(errp, "dram-latency-ns=%" PRIu64 ": must be in 0..1000000",
                   s->dram_latency_ns);
        return false;
    }
    /* uffd-only options: bad values are errors in mmio mode too. */
    if (cxlssd_delivery_from_name_any(s->delivery ? s->delivery : "poll",
                                      &s->delivery_mode)) {
        error_setg(errp, "delivery=%s: must be one of poll, busy, sigbus",
                   s->delivery);
        return false;
    }
    if (cxl_ssd_sigbus(s)) {
        /* Under KVM a vCPU's access faults inside KVM_RUN, where a
         * SIGBUS-mode userfaultfd makes KVM fail the run, not signal. */
        if (!tcg_enabled()) {
            error_setg(errp, "delivery=sigbus: needs -accel tcg (under %s "
                       "a vCPU's miss is not raised as a signal); use poll "
                       "or busy", current_accel_name());
            return false;
        }
        /* The miss runs in a signal handler on the vCPU thread, which
         * must not wait for a lock. */
        if (s->bql) {
            error_setg(errp, "bql=on: not supported with delivery=sigbus "
                       "(the vCPU serves its miss in a signal handler); "
                       "use bql=off or delivery=poll|busy");
            return false;
        }
    }
    if (cxlssd_trap_check_cpus(s->handler_cpus, err, sizeof(err)) < 0) {
        error_setg(errp, "%s", err);
        return false;
    }
    /* uffd mode keeps every media page in the page cache (fallocate at
     * realize): a memdev larger than the host's RAM would end in the OOM
     * killer, not in an error. */
    if (s->mode == CXL_SSD_MODE_UFFD && phys_pages > 0 && page_size > 0 &&
        device_size > (uint64_t)phys_pages * (uint64_t)page_size) {
        error_setg(errp, "volatile-memdev: size %" PRIu64 " exceeds this "
                   "host's RAM (%" PRIu64 " bytes); mode=uffd keeps the "
                   "whole media in the memory backend's page cache",
                   device_size, (uint64_t)phys_pages * (uint64_t)page_size);
        return false;
    }
    return true;
}

/* The media must be shmem (memfd) so that userfaultfd MINOR faults work and
 * a second mapping of the same pages can be registered. */
static int cxl_ssd_media_fd(CXLSSDState *s, MemoryRegion *vmr,
                            uint64_t *fd_offset, Error **errp)
{
    int fd = memory_region_get_fd(vmr);

    struct statfs sfs;

    if (fd < 0 || !qemu_ram_is_shared(vmr->ram_block)) {
        error_setg(errp, "volatile-memdev: mode=uffd needs a shared, "
                   "fd-backed memory backend "
                   "(memory-backend-memfd,share=on)");
        return -1;
    }
    /* userfaultfd MINOR mode works on shmem (and hugetlbfs, whose pages
     * are not 4 KiB); a file elsewhere fails only at registration. */
    if (fstatfs(fd, &sfs) == 0 && sfs.f_type != TMPFS_MAGIC) {
        error_setg(errp, "volatile-memdev: mode=uffd needs shmem: "
                   "memory-backend-memfd, or memory-backend-file with "
                   "mem-path on tmpfs (e.g. /dev/shm), share=on "
                   "(filesystem type 0x%lx)", (unsigned long)sfs.f_type);
        return -1;
    }
    *fd_offset = vmr->ram_block->fd_offset;
    return fd;
}

static bool cxl_ssd_start_uffd(CXLSSDState *s, MemoryRegion *vmr,
                               Error **errp)
{
    struct cxlssd_trap_config tcfg = {
        .handler_threads = s->handler_threads,
        .handler_cpus = s->handler_cpus ? s->handler_cpus : "",
        .compensate = s->compensate,
        .compensate_ns = s->compensate_ns,
        .record_ab = s->record_ab,
        .track_dirty = s->track_dirty,
        .record_path = s->record_path,
        .mode_name = "uffd",
        .accel_name = s->accel,
    };
    struct cxlssd_trap_hooks hooks;
    uint64_t fd_offset;
    char err[256];
    void *media;
    int fd;

    tcfg.delivery = s->delivery_mode;
    fd = cxl_ssd_media_fd(s, vmr, &fd_offset, errp);
    if (fd < 0) {
        return false;
    }
    /* Every page must be in the page cache before MINOR faults can fire;
     * doing it here keeps the cost off the vCPU thread at commit. */
    if (fallocate(fd, 0, fd_offset, s->media_size)) {
        error_setg_errno(errp, errno, "volatile-memdev: cannot allocate "
                         "%" PRIu64 " bytes", s->media_size);
        return false;
    }
    media = mmap(NULL, s->media_size, PROT_READ | PROT_WRITE, MAP_SHARED,
                 fd, fd_offset);
    if (media == MAP_FAILED) {
        error_setg_errno(errp, errno, "cannot map the media a second time");
        return false;
    }
    s->media = media;

    cxl_ssd_hooks_fill(s, &hooks);
    s->trap = cxlssd_trap_new(s->model, s->media, s->media_size, &tcfg,
                              &hooks, err, sizeof(err));
    if (!s->trap) {
        error_setg(errp, "%s", err);
        munmap(s->media, s->media_size);
        s->media = NULL;
        return false;
    }
    return true;
}

static void cxl_ssd_release(CXLSSDState *s)
{
    cxl_ssd_window_unmap(s);
    if (s->trap) {
        cxlssd_trap_free(s->trap);
        s->trap = NULL;
        munmap(s->media, s->media_size);
    }
    cxl_ssd_mmio_free(s);
    s->media = NULL;
    if (s->model) {
        cxlssd_model_free(s->model);
        s->model = NULL;
    }
    g_free(s->vcpu_tids);
    s->vcpu_tids = NULL;
}

/*
 * QEMU exits (quit, SIGTERM, guest power-off) without unrealizing devices.
 * By the time exit notifiers run the vCPUs are stopped and the block layer
 * is drained: stop the miss handlers and write out the per-miss records,
 * so the CSV ends with whole rows instead of whatever the exit-time stdio
 * flush caught mid-write.  The mappings stay: a late access by any other
 * thread finds plain memory (the range is no longer registered).
 */
static void cxl_ssd_exit_notify(Notifier *n, void *data)
{
    CXLSSDState *s = container_of(n, CXLSSDState, exit_notifier);

    if (s->trap) {
        cxlssd_trap_free(s->trap);
        s->trap = NULL;     /* media stays mapped until the process ends */
    }
    cxl_ssd_mmio_close_records(s);
}

static void cxl_ssd_realize(PCIDevice *pci_dev, Error **errp)
{
    ERRP_GUARD();
    CXLSSDState *s = CXL_SSD(pci_dev);
    CXLSSDClass *sc = CXL_SSD_GET_CLASS(s);
    CXLType3Dev *ct3d = CXL_TYPE3(pci_dev);
    MemoryRegion *vmr;
    char err[256];

    if (!ct3d->hostvmem || ct3d->hostmem || ct3d->hostpmem) {
        error_setg(errp, "volatile-memdev: cxl-ssd needs exactly one "
                   "volatile memory backend (memdev and persistent-memdev "
                   "are not supported)");
        return;
    }
    if (ct3d->lsa == ct3d->hostvmem) {
        /* label writes would land on media page 0, behind the trap */
        error_setg(errp, "lsa: must not be the volatile-memdev backend");
        return;
    }
    vmr = host_memory_backend_get_memory(ct3d->hostvmem);
    s->media_size = memory_region_size(vmr);
    if (!cxl_ssd_parse_options(s, s->media_size, errp)) {
        return;
    }

    sc->parent_realize(pci_dev, errp);
    if (*errp) {
        return;
    }

    s->accel = current_accel_name();
    s->model = cxlssd_model_new(&s->cfg, err, sizeof(err));
    if (!s->model) {
        error_setg(errp, "%s", err);
        goto fail;
    }
    cxl_ssd_snapshot_vcpus(s);
    s->media_host = memory_region_get_ram_ptr(vmr);
    if (s->mode == CXL_SSD_MODE_UFFD) {
        if (!cxl_ssd_start_uffd(s, vmr, errp)) {
            goto fail;
        }
    } else {
        s->media = s->media_host;
        if (!cxl_ssd_mmio_init(s, errp)) {
            goto fail;
        }
    }
    cxl_ssd_window_init(s);
    s->exit_notifier.notify = cxl_ssd_exit_notify;
    qemu_add_exit_notifier(&s->exit_notifier);
    trace_cxl_ssd_realize(s->mode_name ? s->mode_name : "uffd",
                          s->media_size, cxlssd_model_frames(s->model));
    return;

fail:
    cxl_ssd_release(s);
    sc->parent_exit(pci_dev);
}

static void cxl_ssd_exit(PCIDevice *pci_dev)
{
    CXLSSDState *s = CXL_SSD(pci_dev);

    if (s->exit_notifier.notify) {
        qemu_remove_exit_notifier(&s->exit_notifier);
        s->exit_notifier.notify = NULL;
    }
    cxl_ssd_release(s);
    CXL_SSD_GET_CLASS(s)->parent_exit(pci_dev);
}

/* Reset drops the overlay and forgets residency: after a reset the guest
 * sees an uncommitted decoder, and a later commit starts with a cold cache
 * over the same data. */
static void cxl_ssd_reset_hold(Object *obj, ResetType type)
{
    CXLSSDState *s = CXL_SSD(obj);
    CXLSSDClass *sc = CXL_SSD_GET_CLASS(s);

    if (sc->parent_phases.hold) {
        sc->parent_phases.hold(obj, type);
    }
    cxl_ssd_window_unmap(s);
    if (s->trap) {
        cxlssd_trap_reset(s->trap);
    } else if (s->model) {
        cxlssd_model_reset_residency(s->model);
    }
    trace_cxl_ssd_reset();
}

static const Property cxl_ssd_props[] = {
    DEFINE_PROP_STRING("mode", CXLSSDState, mode_name),
    DEFINE_PROP_BOOL("bql", CXLSSDState, bql, false),
    DEFINE_PROP_STRING("delivery", CXLSSDState, delivery),
    DEFINE_PROP_UINT32("handler-threads", CXLSSDState, handler_threads, 1),
    DEFINE_PROP_STRING("handler-cpus", CXLSSDState, handler_cpus),
    DEFINE_PROP_BOOL("compensate", CXLSSDState, compensate, false),
    DEFINE_PROP_UINT64("compensate-ns", CXLSSDState, compensate_ns, 0),
    DEFINE_PROP_BOOL("track-dirty", CXLSSDState, track_dirty, true),
    DEFINE_PROP_STRING("record", CXLSSDState, record_path),
    DEFINE_PROP_UINT32("record-ab", CXLSSDState, record_ab, 0),
    DEFINE_PROP_UINT64("dram-latency-ns", CXLSSDState, dram_latency_ns, 0),

    DEFINE_PROP_SIZE("cache-size", CXLSSDState, cfg.cache_size, 0),
    DEFINE_PROP_UINT32("page-size", CXLSSDState, cfg.page_size,
                       CXLSSD_DEFAULT_PAGE_SIZE),
    DEFINE_PROP_STRING("policy", CXLSSDState, policy),
    DEFINE_PROP_UINT32("cache-ways", CXLSSDState, cfg.cache_ways, 0),
    DEFINE_PROP_UINT32("prefetch", CXLSSDState, cfg.prefetch,
                       CXLSSD_DEFAULT_PREFETCH),
    DEFINE_PROP_STRING("eviction", CXLSSDState, eviction),
    DEFINE_PROP_UINT32("evict-low", CXLSSDState, cfg.evict_low_pct,
                       CXLSSD_DEFAULT_EVICT_LOW_PCT),
    DEFINE_PROP_UINT32("evict-high", CXLSSDState, cfg.evict_high_pct,
                       CXLSSD_DEFAULT_EVICT_HIGH_PCT),
    DEFINE_PROP_UINT32("nand-channels", CXLSSDState, cfg.channels,
                       CXLSSD_DEFAULT_CHANNELS),
    DEFINE_PROP_UINT32("nand-luns", CXLSSDState, cfg.luns_per_channel,
                       CXLSSD_DEFAULT_LUNS),
    DEFINE_PROP_UINT32("nand-blocks", CXLSSDState, cfg.blocks_per_lun, 0),
    DEFINE_PROP_UINT32("nand-pages-per-block", CXLSSDState,
                       cfg.pages_per_block, CXLSSD_DEFAULT_PAGES_PER_BLOCK),
    DEFINE_PROP_UINT64("nand-read-ns", CXLSSDState, cfg.t_read_ns,
                       CXLSSD_DEFAULT_T_READ_NS),
    DEFINE_PROP_UINT64("nand-prog-ns", CXLSSDState, cfg.t_prog_ns,
                       CXLSSD_DEFAULT_T_PROG_NS),
    DEFINE_PROP_UINT64("nand-erase-ns", CXLSSDState, cfg.t_erase_ns,
                       CXLSSD_DEFAULT_T_ERASE_NS),
    DEFINE_PROP_UINT64("nand-xfer-ns", CXLSSDState, cfg.t_xfer_ns,
                       CXLSSD_DEFAULT_T_XFER_NS),
    DEFINE_PROP_UINT32("over-provisioning", CXLSSDState, cfg.op_pct,
                       CXLSSD_DEFAULT_OP_PCT),
    DEFINE_PROP_UINT32("gc-low", CXLSSDState, cfg.gc_low_blocks,
                       CXLSSD_DEFAULT_GC_LOW_BLOCKS),
    DEFINE_PROP_UINT32("gc-high", CXLSSDState, cfg.gc_high_blocks,
                       CXLSSD_DEFAULT_GC_HIGH_BLOCKS),
    DEFINE_PROP_BOOL("precondition", CXLSSDState, cfg.precondition, false),
    DEFINE_PROP_UINT32("record-ring", CXLSSDState, cfg.record_ring,
                       CXLSSD_DEFAULT_RECORD_RING),
};

/* Descriptions of the device-level properties; the model's own come from
 * cxlssd_props[] so the native tool documents them identically. */
static const struct {
    const char *name;
    const char *description;
} cxl_ssd_glue_props[] = {
    { "mode", "uffd (default): resident pages mapped directly, misses "
      "trapped with userfaultfd; mmio: every access through the MMIO path "
      "(stock cxl-type3 route, Cylon-like exits)" },
    { "bql", "serve vCPU misses holding the BQL, NAND wait included "
      "(reproduces Cylon's serialisation); default off" },
    { "delivery", "uffd miss delivery: poll (handler sleeps in poll, "
      "default), busy (handler busy-polls the userfaultfd while faults "
      "keep coming, sleeping after 10 ms without one) or sigbus "
      "(TCG only, bql=off: the faulting vCPU serves its own miss in a "
      "SIGBUS handler; QEMU's own accesses to the window go through the "
      "device and DMA into it is bounced: PCI devices with their own DMA "
      "address space may need x-max-bounce-buffer-size)" },
    { "handler-threads", "uffd handler threads, 1..64 (default 1)" },
    { "handler-cpus", "host CPUs for handler threads, e.g. \"0,1\" "
      "(default: not pinned)" },
    { "compensate", "shorten each miss's NAND wait by the delivery time "
      "already spent since the host fault (uffd: measured per miss from "
      "perf samples of the kernel's page fault / kvm_exit tracepoints, "
      "needs CAP_PERFMON; mmio: from the access callback), so observed "
      "latency tracks the configured latency (default off)" },
    { "compensate-ns", "with compensate=on: calibrated time no clock sees "
      "before the wait ends (fault entry before the tracepoint, wake -> "
      "vCPU running; mmio: TCG's exit and return), subtracted from every "
      "NAND wait on top of the measured part, 0..10000000 ns (default 0; "
      "bench/breakdown/fig1 calibrates it)" },
    { "track-dirty", "detect first writes to resident pages with "
      "userfaultfd write-protect, for exact dirty state (default on)" },
    { "record", "path of the per-miss CSV (default: no records)" },
    { "record-ab", "measurement aid for the cost of recording: record only "
      "alternate runs of N served misses (misses 0..N-1 recorded, N..2N-1 "
      "not, ...); 0 = every miss (default)" },
    { "dram-latency-ns", "mmio mode: time charged to an access to a resident "
      "page, 0..1000000 ns (default 0)" },
};

static void cxl_ssd_class_init(ObjectClass *oc, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(oc);
    ResettableClass *rc = RESETTABLE_CLASS(oc);
    CXLSSDClass *sc = CXL_SSD_CLASS(oc);
    size_t i;

    sc->parent_realize = pc->realize;
    sc->parent_exit = pc->exit;
    pc->realize = cxl_ssd_realize;
    pc->exit = cxl_ssd_exit;
    resettable_class_set_parent_phases(rc, NULL, cxl_ssd_reset_hold, NULL,
                                       &sc->parent_phases);

    dc->desc = "CXL-SSD: CXL Type-3 memory with a DRAM cache in front of "
               "modeled NAND";
    device_class_set_props(dc, cxl_ssd_props);
    for (i = 0; i < ARRAY_SIZE(cxl_ssd_glue_props); i++) {
        object_class_property_set_description(oc, cxl_ssd_glue_props[i].name,
                                        cxl_ssd_glue_props[i].description);
    }
    for (i = 0; i < cxlssd_nprops; i++) {
        object_class_property_set_description(oc, cxlssd_props[i].name,
                                              cxlssd_props[i].description);
    }
    cxl_ssd_stats_class_init(oc);
}

static const TypeInfo cxl_ssd_info = {
    .name = TYPE_CXL_SSD,
    .parent = TYPE_CXL_TYPE3,
    .class_size = sizeof(CXLSSDClass),
    .class_init = cxl_ssd_class_init,
    .instance_size = sizeof(CXLSSDState),
};

static void cxl_ssd_register_types(void)
{
    type_register_static(&cxl_ssd_info);
}

type_init(cxl_ssd_register_types)
