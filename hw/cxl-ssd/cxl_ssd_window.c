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
 * delivery=sigbus (TCG): the overlay is a RAM *device* region over the
 * registered mapping.  vCPUs still access it directly (TCG TLB), and a miss
 * raises SIGBUS on the vCPU thread, which serves it (trap/sigbus.c).
 * QEMU's own accesses (DMA, monitor, gdbstub) do not use the RAM pointer of
 * a RAM device region: they go through the ops below, which serve a miss in
 * the calling thread and move the data through the backend's own,
 * unregistered mapping.  So no thread other than a vCPU ever gets SIGBUS
 * (QEMU's other threads block it: a blocked synchronous SIGBUS kills the
 * process), and the kernel never copies into the registered range (where
 * a SIGBUS-mode userfaultfd would make it fail with EFAULT).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/units.h"
#include "exec/address-spaces.h"
#include "hw/core/cpu.h"
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

/* in-flight DMA bounce buffers allowed in system memory, delivery=sigbus */
#define CXL_SSD_SIGBUS_DMA_BOUNCE (64 * MiB)

static uint64_t cxl_ssd_overlay_read(void *opaque, hwaddr addr,
                                     unsigned size)
{
    CXLSSDState *s = opaque;
    uint64_t off = s->overlay_dpa + addr;

    if (s->trap) {
        cxlssd_trap_access(s->trap, off, size, false);
    }
    return ldn_he_p(s->media_host + off, size);
}

static void cxl_ssd_overlay_write(void *opaque, hwaddr addr, uint64_t data,
                                  unsigned size)
{
    CXLSSDState *s = opaque;
    uint64_t off = s->overlay_dpa + addr;

    if (s->trap) {
        cxlssd_trap_access(s->trap, off, size, true);
    }
    stn_he_p(s->media_host + off, size, data);
}

static const MemoryRegionOps cxl_ssd_overlay_ops = {
    .read = cxl_ssd_overlay_read,
    .write = cxl_ssd_overlay_write,
    .endianness = DEVICE_HOST_ENDIAN,
    CXL_SSD_WINDOW_ACCESS_SIZES,
};

/* QEMU starts every thread with SIGBUS blocked (only KVM unblocks it). */
static void cxl_ssd_unblock_sigbus(CPUState *cpu, run_on_cpu_data data)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGBUS);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

/*
 * Before the overlay is added: the memory topology change reaches each
 * vCPU as work queued after this, so no vCPU can access the overlay with
 * SIGBUS still blocked.
 */
static void cxl_ssd_unblock_sigbus_on_vcpus(void)
{
    CPUState *cpu;

    CPU_FOREACH(cpu) {
        if (cpu == current_cpu) {
            cxl_ssd_unblock_sigbus(cpu, RUN_ON_CPU_NULL);
        } else {
            async_run_on_cpu(cpu, cxl_ssd_unblock_sigbus, RUN_ON_CPU_NULL);
        }
    }
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
    s->overlay_dpa = d.skip;
    if (cxl_ssd_sigbus(s)) {
        memory_region_init_ram_device_ptr(&s->overlay, OBJECT(s), name, size,
                                          s->media + d.skip);
        /* QEMU's own accesses: through the device, not the RAM pointer */
        s->overlay.ops = &cxl_ssd_overlay_ops;
        s->overlay.opaque = s;
        /*
         * DMA to a RAM device region is bounced, and system memory (the
         * DMA address space of virtio without iommu_platform) allows 4 KiB
         * of bounce buffers in flight by default: a larger virtio request
         * into the window would break the virtio device ("bogus descriptor
         * or out of resources").
         */
        address_space_memory.max_bounce_buffer_size =
            MAX(address_space_memory.max_bounce_buffer_size,
                CXL_SSD_SIGBUS_DMA_BOUNCE);
        cxl_ssd_unblock_sigbus_on_vcpus();
    } else if (s->cfg.mode == CXLSSD_MODE_UFFD) {
        /* Not registered for migration: the data lives in the memdev. */
        memory_region_init_ram_ptr(&s->overlay, OBJECT(s), name, size,
                                   s->media + d.skip);
        if (cxl_ssd_tlb(s)) {
            cxl_ssd_tlb_attach(s);
        }
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
