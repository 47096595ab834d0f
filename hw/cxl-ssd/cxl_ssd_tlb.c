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
 * Where the entries are: the hook records, per vCPU, the guest virtual
 * page and MMU index of each page's last fill, in a direct-mapped table
 * indexed by media page (twice the cache's frames, so resident pages
 * rarely collide).  When the trap unmaps pages (eviction), the entry each
 * record names is invalidated on its vCPU (tlb_invalidate_host_page: one
 * TLB slot and the victim entries, checked against the page's host
 * address, so a stale or overwritten record invalidates nothing wrong),
 * and the next access refills through the hook again.
 *
 * Anything that still reaches an unmapped page through the host mapping
 * -- QEMU's own accesses (DMA, monitor `xp`, gdbstub, dumps, page-table
 * walks), an entry whose record was overwritten or that was used between
 * the unmap and its invalidation -- faults on the host and is served by
 * the poll handler thread: correct, counted in the stat host_route_misses.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "exec/page-protection.h"
#include "exec/ram-tlb-fill.h"
#include "hw/core/cpu.h"
#include "cxl_ssd.h"
#include "trace.h"

/* One vCPU's last fill of a media page: the page + 1 (0: none) and the
 * guest virtual page (page-aligned: the hook gets the page) with the MMU
 * index in its low bits (x86 pages are 4 KiB; TCG has <= 16 MMU indexes). */
#define CXL_SSD_TLB_IDX_MASK 0xfffull

typedef struct CXLSSDTlbFill {
    uint64_t page1;
    uint64_t tag;
} CXLSSDTlbFill;

struct CXLSSDTlbMap {
    uint64_t mask;                  /* slots per vCPU - 1 */
    int nr_vcpus;
    CXLSSDTlbFill *fills;           /* [vcpu][slot] */
};

static int cxl_ssd_tlb_fill(void *opaque, CPUState *cpu, int mmu_idx,
                            vaddr addr, ram_addr_t offset,
                            MMUAccessType access_type)
{
    CXLSSDState *s = opaque;
    CXLSSDTlbMap *map = s->tlb_map;
    uint64_t off = s->overlay_dpa + offset;
    uint64_t page = off / s->cfg.page_size;
    bool write = access_type == MMU_DATA_STORE;
    bool writable = cxlssd_trap_tlb_fill(s->trap, off, write);

    if (cpu->cpu_index < map->nr_vcpus) {
        CXLSSDTlbFill *f = &map->fills[(uint64_t)cpu->cpu_index *
                                       (map->mask + 1) + (page & map->mask)];

        qatomic_set(&f->tag, (addr & ~CXL_SSD_TLB_IDX_MASK) | (uint64_t)mmu_idx);
        qatomic_set(&f->page1, page + 1);
    }
    trace_cxl_ssd_tlb_fill(page, write, writable);
    return writable ? 0 : PAGE_WRITE;
}

/* trap hook: pages [first, first + n) of the media were unmapped */
static void cxl_ssd_tlb_unmapped(void *opaque, uint64_t first, uint64_t n)
{
    CXLSSDState *s = opaque;
    CXLSSDTlbMap *map = s->tlb_map;
    uint64_t ps = s->cfg.page_size, page, dropped = 0;
    CPUState *cpu;

    CPU_FOREACH(cpu) {
        CXLSSDTlbFill *fills;

        if (cpu->cpu_index >= map->nr_vcpus) {
            continue;
        }
        fills = &map->fills[(uint64_t)cpu->cpu_index * (map->mask + 1)];
        for (page = first; page < first + n; page++) {
            CXLSSDTlbFill *f = &fills[page & map->mask];
            uint64_t tag;

            if (qatomic_read(&f->page1) != page + 1) {
                continue;
            }
            tag = qatomic_read(&f->tag);
            tlb_invalidate_host_page(cpu, tag & CXL_SSD_TLB_IDX_MASK,
                                     tag & ~CXL_SSD_TLB_IDX_MASK,
                                     s->media + page * ps);
            dropped++;
        }
    }
    trace_cxl_ssd_tlb_invalidate(first, n, dropped);
}

void cxl_ssd_tlb_init(CXLSSDState *s, struct cxlssd_trap_hooks *hooks)
{
    uint64_t slots = pow2ceil(MAX(2 * cxlssd_model_frames(s->model), 64));
    CXLSSDTlbMap *map;

    if (!cxl_ssd_tlb(s)) {
        return;
    }
    map = g_new0(CXLSSDTlbMap, 1);
    map->mask = slots - 1;
    map->nr_vcpus = s->nr_vcpus;
    map->fills = g_new0(CXLSSDTlbFill, slots * MAX(s->nr_vcpus, 1));
    s->tlb_map = map;
    hooks->unmapped = cxl_ssd_tlb_unmapped;
}

void cxl_ssd_tlb_free(CXLSSDState *s)
{
    if (s->tlb_map) {
        g_free(s->tlb_map->fills);
        g_free(s->tlb_map);
        s->tlb_map = NULL;
    }
}

void cxl_ssd_tlb_attach(CXLSSDState *s)
{
    qemu_ram_set_tlb_fill(s->overlay.ram_block, cxl_ssd_tlb_fill, s);
}
