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
 * record names is invalidated (tlb_invalidate_host_page: one TLB slot and
 * the victim entries, checked against the page's host address, so a stale
 * or overwritten record invalidates nothing wrong), and the next access
 * refills through the hook again.  A vCPU invalidates its own entries:
 * another thread (the background evictor, another vCPU's miss) queues the
 * page for it, and the vCPU drains its queue at its next fill of the
 * window.  Taking the vCPU's TLB lock from the evictor instead made the
 * vCPU spin on that lock whenever the evictor was preempted while holding
 * it (ms-long misses on a loaded host).  A full queue falls back to the
 * cross-thread invalidation.
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

/* Pages unmapped by other threads whose TLB entries a vCPU must drop. */
#define CXL_SSD_TLB_PENDING 512

typedef struct CXLSSDTlbPending {
    QemuMutex lock;
    uint32_t n;                     /* under lock (read alone: a hint) */
    uint64_t page[CXL_SSD_TLB_PENDING];
} CXLSSDTlbPending;

struct CXLSSDTlbMap {
    uint64_t mask;                  /* slots per vCPU - 1 */
    int nr_vcpus;
    CXLSSDTlbFill *fills;           /* [vcpu][slot] */
    CXLSSDTlbPending *pending;      /* [vcpu] */
};

static CXLSSDTlbFill *cxl_ssd_tlb_slot(CXLSSDTlbMap *map, int vcpu,
                                       uint64_t page)
{
    return &map->fills[(uint64_t)vcpu * (map->mask + 1) + (page & map->mask)];
}

/* Drop @cpu's entry for @page if the hook saw it fill one. */
static bool cxl_ssd_tlb_drop(CXLSSDState *s, CPUState *cpu, uint64_t page)
{
    CXLSSDTlbFill *f = cxl_ssd_tlb_slot(s->tlb_map, cpu->cpu_index, page);
    uint64_t tag;

    if (qatomic_read(&f->page1) != page + 1) {
        return false;
    }
    tag = qatomic_read(&f->tag);
    tlb_invalidate_host_page(cpu, tag & CXL_SSD_TLB_IDX_MASK,
                             tag & ~CXL_SSD_TLB_IDX_MASK,
                             s->media + page * s->cfg.page_size);
    return true;
}

/*
 * On @cpu's thread: drop the entries other threads queued for it.  Out of
 * line: its 4 KiB copy would cost every fill a stack probe.
 */
static void __attribute__((noinline))
cxl_ssd_tlb_drain_queue(CXLSSDState *s, CPUState *cpu, CXLSSDTlbPending *q)
{
    uint64_t page[CXL_SSD_TLB_PENDING];
    uint32_t i, n;

    if (qemu_mutex_trylock(&q->lock)) {
        return;     /* a producer is at it: next fill */
    }
    n = q->n;
    memcpy(page, q->page, n * sizeof(page[0]));
    qatomic_set(&q->n, 0);
    qemu_mutex_unlock(&q->lock);
    for (i = 0; i < n; i++) {
        cxl_ssd_tlb_drop(s, cpu, page[i]);
    }
}

static inline void cxl_ssd_tlb_drain(CXLSSDState *s, CPUState *cpu)
{
    CXLSSDTlbPending *q = &s->tlb_map->pending[cpu->cpu_index];

    if (qatomic_read(&q->n)) {
        cxl_ssd_tlb_drain_queue(s, cpu, q);
    }
}

static int cxl_ssd_tlb_fill(void *opaque, CPUState *cpu, int mmu_idx,
                            vaddr addr, ram_addr_t offset,
                            MMUAccessType access_type)
{
    CXLSSDState *s = opaque;
    CXLSSDTlbMap *map = s->tlb_map;
    uint64_t off = s->overlay_dpa + offset;
    uint64_t page = off / s->cfg.page_size;
    bool write = access_type == MMU_DATA_STORE;
    bool writable;

    if (cpu->cpu_index < map->nr_vcpus) {
        cxl_ssd_tlb_drain(s, cpu);
    }
    writable = cxlssd_trap_tlb_fill(s->trap, off, write);
    if (cpu->cpu_index < map->nr_vcpus) {
        CXLSSDTlbFill *f = cxl_ssd_tlb_slot(map, cpu->cpu_index, page);
        uint64_t tag = (addr & ~CXL_SSD_TLB_IDX_MASK) | (uint64_t)mmu_idx;

        /* refills of a resident page usually repeat the record */
        if (qatomic_read(&f->tag) != tag || qatomic_read(&f->page1) != page + 1) {
            qatomic_set(&f->tag, tag);
            qatomic_set(&f->page1, page + 1);
        }
    }
    trace_cxl_ssd_tlb_fill(page, write, writable);
    return writable ? 0 : PAGE_WRITE;
}

/* trap hook: pages [first, first + n) of the media were unmapped */
static void cxl_ssd_tlb_unmapped(void *opaque, uint64_t first, uint64_t n)
{
    CXLSSDState *s = opaque;
    CXLSSDTlbMap *map = s->tlb_map;
    uint64_t page, dropped = 0;
    CPUState *cpu;

    CPU_FOREACH(cpu) {
        CXLSSDTlbPending *q;

        if (cpu->cpu_index >= map->nr_vcpus) {
            continue;
        }
        if (cpu == current_cpu) {
            /* a miss of this vCPU evicting: its TLB lock is free */
            for (page = first; page < first + n; page++) {
                dropped += cxl_ssd_tlb_drop(s, cpu, page);
            }
            continue;
        }
        q = &map->pending[cpu->cpu_index];
        qemu_mutex_lock(&q->lock);
        for (page = first; page < first + n; page++) {
            CXLSSDTlbFill *f = cxl_ssd_tlb_slot(map, cpu->cpu_index, page);

            if (qatomic_read(&f->page1) != page + 1) {
                continue;
            }
            if (q->n < CXL_SSD_TLB_PENDING) {
                q->page[q->n] = page;
                qatomic_set(&q->n, q->n + 1);
            } else {
                cxl_ssd_tlb_drop(s, cpu, page);
            }
            dropped++;
        }
        qemu_mutex_unlock(&q->lock);
    }
    trace_cxl_ssd_tlb_invalidate(first, n, dropped);
}

void cxl_ssd_tlb_init(CXLSSDState *s, struct cxlssd_trap_hooks *hooks)
{
    uint64_t slots = pow2ceil(MAX(2 * cxlssd_model_frames(s->model), 64));
    CXLSSDTlbMap *map;
    int i;

    if (!cxl_ssd_tlb(s)) {
        return;
    }
    map = g_new0(CXLSSDTlbMap, 1);
    map->mask = slots - 1;
    map->nr_vcpus = s->nr_vcpus;
    map->fills = g_new0(CXLSSDTlbFill, slots * MAX(s->nr_vcpus, 1));
    map->pending = g_new0(CXLSSDTlbPending, MAX(s->nr_vcpus, 1));
    for (i = 0; i < MAX(s->nr_vcpus, 1); i++) {
        qemu_mutex_init(&map->pending[i].lock);
    }
    s->tlb_map = map;
    hooks->unmapped = cxl_ssd_tlb_unmapped;
}

void cxl_ssd_tlb_free(CXLSSDState *s)
{
    if (s->tlb_map) {
        for (int i = 0; i < MAX(s->tlb_map->nr_vcpus, 1); i++) {
            qemu_mutex_destroy(&s->tlb_map->pending[i].lock);
        }
        g_free(s->tlb_map->pending);
        g_free(s->tlb_map->fills);
        g_free(s->tlb_map);
        s->tlb_map = NULL;
    }
}

void cxl_ssd_tlb_attach(CXLSSDState *s)
{
    qemu_ram_set_tlb_fill(s->overlay.ram_block, cxl_ssd_tlb_fill, s);
}
