/*
 * cxl-ssd: a CXL Type-3 memory device whose media is a DRAM cache in front
 * of NAND, modeled by hw/cxl-ssd/model and trapped by hw/cxl-ssd/trap.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_CXL_SSD_H
#define HW_CXL_SSD_H

#include "hw/cxl/cxl_device.h"
#include "model/config.h"
#include "model/model.h"
#include "model/record.h"
#include "trap/trap.h"

#define TYPE_CXL_SSD "cxl-ssd"
OBJECT_DECLARE_TYPE(CXLSSDState, CXLSSDClass, CXL_SSD)

typedef struct CXLSSDMmio CXLSSDMmio;
typedef struct CXLSSDTlbMap CXLSSDTlbMap;

struct CXLSSDState {
    CXLType3Dev parent_obj;

    /*
     * Every property, model and device-level alike, is a field of cfg
     * named in model/props.def (s->cfg.bql, s->cfg.compensate,
     * s->cfg.record_path, s->cfg.mode, s->cfg.delivery, ...); QEMU's
     * properties are made from that table in cxl_ssd_props.c.
     */
    struct cxlssd_config cfg;

    /* Realized state */
    struct cxlssd_model *model;
    struct cxlssd_trap *trap;       /* uffd mode */
    CXLSSDMmio *mmio;               /* mmio mode */
    CXLSSDTlbMap *tlb_map;          /* delivery=tlb: where TLB entries are */
    uint8_t *media;                 /* uffd: registered mapping of the memfd;
                                     * mmio: the backend's own mapping */
    uint8_t *media_host;            /* the backend's own mapping (never
                                     * registered with userfaultfd) */
    uint64_t media_size;
    HostMemoryBackend *backend;     /* volatile-memdev or persistent-memdev */
    bool persistent;                /* persistent-memdev: a CXL pmem device */
    const char *accel;

    /* Window overlay, present while HDM decoder 0 is committed */
    MemoryRegion overlay;
    bool overlay_mapped;
    hwaddr overlay_hpa;
    uint64_t overlay_dpa;           /* media offset of the overlay */

    /* Host thread ids of the vCPUs, indexed by cpu_index (snapshot at
     * commit, read by handler threads without the BQL) */
    int nr_vcpus;
    pid_t *vcpu_tids;

    /* stops the trap and flushes records when QEMU exits */
    Notifier exit_notifier;
    /* the model's state lives outside guest RAM */
    Error *migration_blocker;

    void (*parent_reg_write)(void *opaque, hwaddr offset, uint64_t value,
                             unsigned size);
};

/* Access sizes of the window's MemoryRegionOps (mmio mode, and QEMU's own
 * accesses under delivery=sigbus): 1..8 bytes; the memory core splits
 * unaligned accesses into aligned pieces, so none straddles two pages. */
#define CXL_SSD_WINDOW_ACCESS_SIZES                                     \
    .valid = { .min_access_size = 1, .max_access_size = 8,              \
               .unaligned = true },                                     \
    .impl = { .min_access_size = 1, .max_access_size = 8,               \
              .unaligned = false }

/* uffd mode with in-thread (SIGBUS) miss delivery */
static inline bool cxl_ssd_sigbus(const CXLSSDState *s)
{
    return s->cfg.mode == CXLSSD_MODE_UFFD &&
           s->cfg.delivery == CXLSSD_DELIVERY_SIGBUS;
}

/* uffd mode with access-path (TCG TLB fill) miss delivery */
static inline bool cxl_ssd_tlb(const CXLSSDState *s)
{
    return s->cfg.mode == CXLSSD_MODE_UFFD &&
           s->cfg.delivery == CXLSSD_DELIVERY_TLB;
}

/* cxl_ssd_backend.c: the memdev holding the media (volatile or
 * persistent) and its checks; fd and mem-path of that backend */
bool cxl_ssd_backend_init(CXLSSDState *s, Error **errp);
int cxl_ssd_backend_fd(CXLSSDState *s, uint64_t *fd_offset, Error **errp);
/* The absolute path of the backend's file (g_free it); NULL if none. */
char *cxl_ssd_backend_path(CXLSSDState *s);
const char *cxl_ssd_capacity_name(const CXLSSDState *s);

/* cxl_ssd_tlb.c: delivery=tlb; init (after the model and the vCPU
 * snapshot) adds the trap's unmapped hook, attach puts the TLB-fill hook on
 * the overlay's RAM block */
void cxl_ssd_tlb_init(CXLSSDState *s, struct cxlssd_trap_hooks *hooks);
void cxl_ssd_tlb_free(CXLSSDState *s);
void cxl_ssd_tlb_attach(CXLSSDState *s);

/* cxl_ssd_window.c: HDM commit tracking and the overlay */
void cxl_ssd_window_init(CXLSSDState *s);
void cxl_ssd_window_unmap(CXLSSDState *s);

/* cxl_ssd_mmio.c */
bool cxl_ssd_mmio_init(CXLSSDState *s, Error **errp);
void cxl_ssd_mmio_free(CXLSSDState *s);
void cxl_ssd_mmio_close_records(CXLSSDState *s);
/* media=PATH: write dirty cached pages back (@drop: and drop them from the
 * memfd, at reset); close: flush, save the FTL state, mark the file clean */
void cxl_ssd_mmio_media_flush(CXLSSDState *s, bool drop);
void cxl_ssd_mmio_media_close(CXLSSDState *s);
void cxl_ssd_mmio_init_overlay(CXLSSDState *s, uint64_t dpa, uint64_t size);
/* The trap-struct counters mmio mode has: BQL wait (re-acquiring it
 * after a NAND wait, bql=off), records; media_* and metadata_* with
 * media=PATH.  Returns true if the media rows are filled in. */
bool cxl_ssd_mmio_get_stats(CXLSSDState *s, struct cxlssd_trap_stats *ts);

/* cxl_ssd_hooks.c: BQL policy and vCPU identification for the trap */
void cxl_ssd_hooks_fill(CXLSSDState *s, struct cxlssd_trap_hooks *hooks);
void cxl_ssd_snapshot_vcpus(CXLSSDState *s);
int cxl_ssd_vcpu_index(CXLSSDState *s, pid_t tid);

/* cxl_ssd_props.c: properties from model/props.def, realize-time checks */
void cxl_ssd_props_class_init(ObjectClass *oc);
bool cxl_ssd_check_options(CXLSSDState *s, uint64_t device_size,
                           Error **errp);

/* cxl_ssd_stats.c */
void cxl_ssd_stats_class_init(ObjectClass *oc);

#endif
