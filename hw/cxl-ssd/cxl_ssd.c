/*
 * cxl-ssd: CXL-SSD emulation as a subclass of cxl-type3.
 *
 * Topology, mailbox, HDM decoders and CDAT stay cxl-type3's.  This file
 * owns realize/exit and reset; the properties live in cxl_ssd_props.c
 * (from model/props.def), the window overlay in cxl_ssd_window.c, the MMIO
 * path in cxl_ssd_mmio.c, the miss path of uffd mode in trap/ and every
 * timing/cache decision in model/.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/accel.h"
#include "exec/ramblock.h"
#include "migration/blocker.h"
#include "system/hostmem.h"
#include "system/system.h"
#include "cxl_ssd.h"
#include "trace.h"

struct CXLSSDClass {
    CXLType3Class parent_class;
    void (*parent_realize)(PCIDevice *pci_dev, Error **errp);
    void (*parent_exit)(PCIDevice *pci_dev);
    ResettablePhases parent_phases;
};

/* The error line came through the trap's error hook. */
static void cxl_ssd_media_error(void *opaque, uint64_t page, int err)
{
    trace_cxl_ssd_media_writeback_error(page, err);
}

static bool cxl_ssd_start_uffd(CXLSSDState *s, Error **errp)
{
    struct cxlssd_trap_config tcfg = {
        .delivery = s->cfg.delivery,
        .handler_threads = s->cfg.handler_threads,
        .handler_cpus = s->cfg.handler_cpus ? s->cfg.handler_cpus : "",
        .compensate = s->cfg.compensate,
        .compensate_ns = s->cfg.compensate_ns,
        .record_ab = s->cfg.record_ab,
        .late_wait_ns = s->cfg.late_wait_ns,
        .track_dirty = s->cfg.track_dirty,
        .record_path = s->cfg.record_path,
        /* TCG's TLB entries are dropped exactly (cxl_ssd_tlb.c) */
        .keep_clean_mapped = cxl_ssd_tlb(s),
        .mode_name = "uffd",
        .accel_name = s->accel,
    };
    struct cxlssd_trap_hooks hooks;
    g_autofree char *cache_path = NULL;
    uint64_t fd_offset;
    char err[512];
    void *media;
    int fd;

    fd = cxl_ssd_backend_fd(s, &fd_offset, errp);
    if (fd < 0) {
        return false;
    }
    if (s->cfg.media_path && *s->cfg.media_path) {
        /* The file holds the data; the memfd only the cached pages. */
        tcfg.media_path = s->cfg.media_path;
        tcfg.media_memfd = fd;
        tcfg.media_memfd_offset = fd_offset;
        if (s->persistent) {
            /* the backend is the cache, and outlives QEMU with its map */
            cache_path = cxl_ssd_backend_path(s);
            tcfg.media_cache_path = cache_path;
        }
    } else if (fallocate(fd, 0, fd_offset, s->media_size)) {
        /* Every page must be in the page cache before MINOR faults can
         * fire; doing it here keeps the cost off the vCPU thread at
         * commit. */
        error_setg_errno(errp, errno, "%s: cannot allocate %" PRIu64
                         " bytes", s->persistent ? "persistent-memdev" :
                         "volatile-memdev", s->media_size);
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
    cxl_ssd_tlb_init(s, &hooks);
    hooks.media_error = cxl_ssd_media_error;
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
    migrate_del_blocker(&s->migration_blocker);
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
    cxl_ssd_tlb_free(s);
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
    cxl_ssd_mmio_media_close(s);
}

static void cxl_ssd_realize(PCIDevice *pci_dev, Error **errp)
{
    ERRP_GUARD();
    CXLSSDState *s = CXL_SSD(pci_dev);
    CXLSSDClass *sc = CXL_SSD_GET_CLASS(s);
    char err[256];

    if (!cxl_ssd_backend_init(s, errp)) {
        return;
    }
    if (!cxl_ssd_check_options(s, s->media_size, errp)) {
        return;
    }

    sc->parent_realize(pci_dev, errp);
    if (*errp) {
        return;
    }

    s->accel = current_accel_name();
    error_setg(&s->migration_blocker, "cxl-ssd%s%s: not migratable: the "
               "cache model's state (residency, NAND timelines, FTL) lives "
               "outside guest RAM", DEVICE(s)->id ? " " : "",
               DEVICE(s)->id ? DEVICE(s)->id : "");
    if (migrate_add_blocker(&s->migration_blocker, errp) < 0) {
        goto fail;
    }
    s->model = cxlssd_model_new(&s->cfg, err, sizeof(err));
    if (!s->model) {
        error_setg(errp, "%s", err);
        goto fail;
    }
    cxl_ssd_snapshot_vcpus(s);
    s->media_host =
        memory_region_get_ram_ptr(host_memory_backend_get_memory(s->backend));
    if (s->cfg.mode == CXLSSD_MODE_UFFD) {
        if (!cxl_ssd_start_uffd(s, errp)) {
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
    trace_cxl_ssd_realize(cxlssd_enum_name(CXLSSD_PROP_MODE, s->cfg.mode),
                          s->media_size, cxlssd_model_frames(s->model),
                          cxl_ssd_capacity_name(s));
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
        cxl_ssd_mmio_media_flush(s, true);
        cxlssd_model_reset_residency(s->model);
    }
    trace_cxl_ssd_reset();
}

static char *cxl_ssd_get_capacity(Object *obj, Error **errp)
{
    return g_strdup(cxl_ssd_capacity_name(CXL_SSD(obj)));
}

static void cxl_ssd_class_init(ObjectClass *oc, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);
    PCIDeviceClass *pc = PCI_DEVICE_CLASS(oc);
    ResettableClass *rc = RESETTABLE_CLASS(oc);
    CXLSSDClass *sc = CXL_SSD_CLASS(oc);

    sc->parent_realize = pc->realize;
    sc->parent_exit = pc->exit;
    pc->realize = cxl_ssd_realize;
    pc->exit = cxl_ssd_exit;
    resettable_class_set_parent_phases(rc, NULL, cxl_ssd_reset_hold, NULL,
                                       &sc->parent_phases);

    dc->desc = "CXL-SSD: CXL Type-3 memory with a DRAM cache in front of "
               "modeled NAND";
    cxl_ssd_props_class_init(oc);
    cxl_ssd_stats_class_init(oc);
    object_class_property_add_str(oc, "capacity", cxl_ssd_get_capacity,
                                  NULL);
    object_class_property_set_description(oc, "capacity",
        "read-only, once realized: volatile (volatile-memdev) or persistent "
        "(persistent-memdev with lsa=: a CXL persistent memory device "
        "whose cache survives QEMU's death)");
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
