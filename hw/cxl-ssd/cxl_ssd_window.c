/*
 * cxl-ssd window overlay: when the guest commits HDM decoder 0, map a region
 * over the fixed memory window at the decoder's HPA so that guest accesses
 * reach the cxl-ssd media directly (uffd mode: RAM, resident pages at memory
 * speed) or through the device's own MMIO callbacks (mmio mode), instead of
 * the stock cfmws_ops -> cxl_type3_read/write route.  Uncommit and reset
 * remove it.
 *
 * cxl-type3's commit handler is static, so the device wraps the component
 * register write handler and compares the COMMITTED bit before and after.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "exec/address-spaces.h"
#include "hw/cxl/cxl_component.h"
#include "cxl_ssd.h"
#include "trace.h"

struct CXLSSDDecoder {
    uint64_t base;
    uint64_t size;
    uint64_t skip;
    bool committed;
    int iw;
};

static void cxl_ssd_read_decoder(CXLSSDState *s, int which,
                                 struct CXLSSDDecoder *d)
{
    int inc = R_CXL_HDM_DECODER1_BASE_LO - R_CXL_HDM_DECODER0_BASE_LO;
    uint32_t *regs = CXL_TYPE3(s)->cxl_cstate.crb.cache_mem_registers;
    uint32_t *r = regs + which * inc;
    uint32_t ctrl = ldl_le_p(r + R_CXL_HDM_DECODER0_CTRL);

    d->base = ((uint64_t)ldl_le_p(r + R_CXL_HDM_DECODER0_BASE_HI) << 32) |
              (ldl_le_p(r + R_CXL_HDM_DECODER0_BASE_LO) & 0xf0000000);
    d->size = ((uint64_t)ldl_le_p(r + R_CXL_HDM_DECODER0_SIZE_HI) << 32) |
              (ldl_le_p(r + R_CXL_HDM_DECODER0_SIZE_LO) & 0xf0000000);
    d->skip = ((uint64_t)ldl_le_p(r + R_CXL_HDM_DECODER0_DPA_SKIP_HI) << 32) |
              (ldl_le_p(r + R_CXL_HDM_DECODER0_DPA_SKIP_LO) & 0xf0000000);
    d->committed = FIELD_EX32(ctrl, CXL_HDM_DECODER0_CTRL, COMMITTED);
    d->iw = FIELD_EX32(ctrl, CXL_HDM_DECODER0_CTRL, IW);
}

static void cxl_ssd_window_map(CXLSSDState *s)
{
    struct CXLSSDDecoder d;
    g_autofree char *name = NULL;
    uint64_t size;

    cxl_ssd_read_decoder(s, 0, &d);
    if (d.iw != 0) {
        /* The overlay maps DPA linearly; interleaved HPAs are not. */
        warn_report("cxl-ssd: decoder 0 is interleaved (IW=%d); accesses "
                    "take the stock cxl-type3 path and are not modeled",
                    d.iw);
        return;
    }
    if (d.skip >= s->media_size) {
        warn_report("cxl-ssd: decoder 0 skips past the media; not modeled");
        return;
    }
    size = MIN(d.size, s->media_size - d.skip);

    name = g_strdup_printf("cxl-ssd-overlay:%s",
                           DEVICE(s)->id ? DEVICE(s)->id : "anon");
    if (s->mode == CXL_SSD_MODE_UFFD) {
        /* Not registered for migration: the data lives in the memdev. */
        memory_region_init_ram_ptr(&s->overlay, OBJECT(s), name, size,
                                   s->media + d.skip);
    } else {
        cxl_ssd_mmio_init_overlay(s, d.skip, size);
    }
    memory_region_add_subregion_overlap(get_system_memory(), d.base,
                                        &s->overlay, 1);
    s->overlay_mapped = true;
    s->overlay_hpa = d.base;
    trace_cxl_ssd_window_map(d.base, size, d.skip);
}

void cxl_ssd_window_unmap(CXLSSDState *s)
{
    if (!s->overlay_mapped) {
        return;
    }
    memory_region_del_subregion(get_system_memory(), &s->overlay);
    object_unparent(OBJECT(&s->overlay));
    s->overlay_mapped = false;
    trace_cxl_ssd_window_unmap(s->overlay_hpa);
}

static void cxl_ssd_reg_write(void *opaque, hwaddr offset, uint64_t value,
                              unsigned size)
{
    CXLComponentState *cstate = opaque;
    CXLSSDState *s = CXL_SSD(container_of(cstate, CXLType3Dev, cxl_cstate));
    struct CXLSSDDecoder before, after;

    cxl_ssd_read_decoder(s, 0, &before);
    s->parent_reg_write(opaque, offset, value, size);
    cxl_ssd_read_decoder(s, 0, &after);

    if (!before.committed && after.committed) {
        cxl_ssd_window_map(s);
    } else if (before.committed && !after.committed) {
        /*
         * Residency is per media page, whatever HPA maps it, so it stays
         * valid.  Resetting it here could also wait for a handler that
         * waits for the BQL this vCPU holds.
         */
        cxl_ssd_window_unmap(s);
    }
}

void cxl_ssd_window_init(CXLSSDState *s)
{
    ComponentRegisters *regs = &CXL_TYPE3(s)->cxl_cstate.crb;

    s->parent_reg_write = regs->special_ops->write;
    regs->special_ops->write = cxl_ssd_reg_write;
}
