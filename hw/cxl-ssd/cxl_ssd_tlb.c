/*
 * cxl-ssd delivery=tlb (TCG): misses served in the vCPU's access path.
 *
 * The overlay stays an ordinary RAM region over the registered mapping
 * (as for poll/busy), with a TLB-fill hook on its RAM block
 * (qemu-patches/0003): TCG calls it on the vCPU thread before it installs
 * a RAM TLB entry for a page of the overlay.  A non-resident page is
 * served there (trap/tlb.c: the miss service, UFFDIO_CONTINUE without a
 * wake, bql=on taking the BQL as for any vCPU miss), so the access that
 * follows finds the page mapped: no host fault, no signal, no thread
 * switch.  Resident pages keep their RAM entries and run at guest-memory
 * speed.  A clean page's entry gets no write permission under dirty
 * tracking, so the first store refills and marks it dirty here.
 *
 * When the trap unmaps pages (eviction), the vCPUs' TLB entries that
 * still point at them are dropped (tlb_invalidate_host_range, every vCPU),
 * so the next access refills through the hook again.  Anything that still
 * reaches an unmapped page through the host mapping -- QEMU's own accesses
 * (DMA, monitor `xp`, gdbstub, dumps, page-table walks), an entry used in
 * the window between the unmap and its invalidation -- faults on the host
 * and is served by the poll handler thread: correct, counted in the stat
 * host_route_misses.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "exec/page-protection.h"
#include "exec/ramblock.h"
#include "exec/ram-tlb-fill.h"
#include "hw/core/cpu.h"
#include "cxl_ssd.h"
#include "trace.h"

static int cxl_ssd_tlb_fill(void *opaque, ram_addr_t offset,
                            MMUAccessType access_type)
{
    CXLSSDState *s = opaque;
    uint64_t off = s->overlay_dpa + offset;
    bool write = access_type == MMU_DATA_STORE;
    bool writable = cxlssd_trap_tlb_fill(s->trap, off, write);

    trace_cxl_ssd_tlb_fill(off / s->cfg.page_size, write, writable);
    return writable ? 0 : PAGE_WRITE;
}

/* trap hook: pages [first, first + n) of the media were unmapped */
static void cxl_ssd_tlb_unmapped(void *opaque, uint64_t first, uint64_t n)
{
    CXLSSDState *s = opaque;
    uint64_t ps = s->cfg.page_size;
    CPUState *cpu;

    CPU_FOREACH(cpu) {
        tlb_invalidate_host_range(cpu, s->media + first * ps, n * ps);
    }
    trace_cxl_ssd_tlb_invalidate(first, n);
}

void cxl_ssd_tlb_hooks(CXLSSDState *s, struct cxlssd_trap_hooks *hooks)
{
    if (cxl_ssd_tlb(s)) {
        hooks->unmapped = cxl_ssd_tlb_unmapped;
    }
}

void cxl_ssd_tlb_attach(CXLSSDState *s)
{
    qemu_ram_set_tlb_fill(s->overlay.ram_block, cxl_ssd_tlb_fill, s);
}
