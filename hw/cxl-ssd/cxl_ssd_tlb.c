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
 * rarely collide).  A fill that replaces a record (another page in the
 * slot, or the same page at another virtual page or MMU index) first
 * invalidates the entry the old record names, so every entry of the
 * window a vCPU holds has its record.  When the trap evicts pages, the
 * entry each record names is invalidated (tlb_invalidate_host_page: one
 * TLB slot and the victim entries, checked against the page's host
 * address, so a stale record invalidates nothing wrong), and the next
 * access refills through the hook again.  A vCPU invalidates its own
 * entries: another thread (the background evictor, another vCPU's miss)
 * queues the page for it, and the vCPU drains its queue at its next fill
 * of the window (a missing vCPU: within microseconds).  A queue still
 * pending after CXL_SSD_TLB_KICK_NS (a vCPU that only hits) is drained by
 * a kick from a main-loop timer (async_run_on_cpu).  Kicking at once
 * instead made every eviction batch send each vCPU out of its translated
 * code to take the BQL, which with bql=on waited behind the other vCPU's
 * misses (and lost the plain mutex to it many times in a row): the
 * 2-thread runs' overlap_fraction fell from 0.94-1.00 to 0.59-0.87.
 * Taking the vCPU's TLB lock from the evictor made the vCPU spin on that
 * lock whenever the evictor was preempted while holding it (ms-long
 * misses on a loaded host).  A full queue falls back to the cross-thread
 * invalidation.
 *
 * As the vCPUs reach the window only through entries dropped that way
 * (a vCPU that fills nothing for a millisecond may hit a page evicted
 * meanwhile until its kick), the trap leaves a victim that is clean mapped
 * on the host
 * (keep_clean_mapped, trap.h): no MADV_DONTNEED, so no TLB shootdown IPI
 * to the CPUs running QEMU's other threads, which on the machines measured
 * cost 10-30 us per eviction, on a miss's path or, from the background
 * evictor, in the middle of the vCPUs' NAND waits.  Dirty victims are
 * unmapped.  QEMU's own accesses (DMA, monitor `xp`, gdbstub, dumps,
 * page-table walks) to a page evicted clean read its data from the memfd
 * without a miss; to a page never mapped or evicted dirty they fault on
 * the host and are served by the poll handler thread, as is a store to a
 * page evicted clean (its write protection): correct data either way,
 * counted in the stat host_route_misses when a miss.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/timer.h"
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
/* A queue its vCPU has not drained by a fill after this long: kicked. */
#define CXL_SSD_TLB_KICK_NS (1000 * SCALE_US)

typedef struct CXLSSDTlbPending {
    QemuMutex lock;
    uint32_t n;                     /* under lock (read alone: a hint) */
    bool kicked;                    /* under lock: a drain is queued */
    int64_t since_ns;               /* under lock: when n became > 0 */
    uint64_t page[CXL_SSD_TLB_PENDING];
} CXLSSDTlbPending;

struct CXLSSDTlbMap {
    uint64_t mask;                  /* slots per vCPU - 1 */
    int nr_vcpus;
    CXLSSDTlbFill *fills;           /* [vcpu][slot] */
    CXLSSDTlbPending *pending;      /* [vcpu] */
    QEMUTimer *kick_timer;          /* QEMU_CLOCK_REALTIME, main loop */
    bool kick_armed;                /* atomic: kick_timer is pending */
};

static CXLSSDTlbFill *cxl_ssd_tlb_slot(CXLSSDTlbMap *map, int vcpu,
                                       uint64_t page)
{
    return &map->fills[(uint64_t)vcpu * (map->mask + 1) + (page & map->mask)];
}

static void cxl_ssd_tlb_invalidate(CXLSSDState *s, CPUState *cpu,
                                   uint64_t page, uint64_t tag)
{
    tlb_invalidate_host_page(cpu, tag & CXL_SSD_TLB_IDX_MASK,
                             tag & ~CXL_SSD_TLB_IDX_MASK,
                             s->media + page * s->cfg.page_size);
}

/* Drop @cpu's entry for @page if the hook saw it fill one. */
static bool cxl_ssd_tlb_drop(CXLSSDState *s, CPUState *cpu, uint64_t page)
{
    CXLSSDTlbFill *f = cxl_ssd_tlb_slot(s->tlb_map, cpu->cpu_index, page);

    if (qatomic_read(&f->page1) != page + 1) {
        return false;
    }
    cxl_ssd_tlb_invalidate(s, cpu, page, qatomic_read(&f->tag));
    return true;
}

/*
 * On @cpu's thread: drop the entries other threads queued for it; from a
 * fill, not if a producer holds the queue (@wait false: the kick that
 * producer sends drains it).  Out of line: its 4 KiB copy would cost
 * every fill a stack probe.
 */
static void __attribute__((noinline))
cxl_ssd_tlb_drain_queue(CXLSSDState *s, CPUState *cpu, CXLSSDTlbPending *q,
                        bool wait)
{
    uint64_t page[CXL_SSD_TLB_PENDING];
    uint32_t i, n;

    if (wait) {
        qemu_mutex_lock(&q->lock);
    } else if (qemu_mutex_trylock(&q->lock)) {
        return;
    }
    n = q->n;
    memcpy(page, q->page, n * sizeof(page[0]));
    qatomic_set(&q->n, 0);
    q->kicked = false;
    qemu_mutex_unlock(&q->lock);
    for (i = 0; i < n; i++) {
        cxl_ssd_tlb_drop(s, cpu, page[i]);
    }
}

static inline void cxl_ssd_tlb_drain(CXLSSDState *s, CPUState *cpu)
{
    CXLSSDTlbPending *q = &s->tlb_map->pending[cpu->cpu_index];

    if (qatomic_read(&q->n)) {
        cxl_ssd_tlb_drain_queue(s, cpu, q, false);
    }
}

/* async_run_on_cpu work: the vCPU drains the queue that kicked it. */
static void cxl_ssd_tlb_kicked(CPUState *cpu, run_on_cpu_data data)
{
    CXLSSDState *s = data.host_ptr;

    cxl_ssd_tlb_drain_queue(s, cpu, &s->tlb_map->pending[cpu->cpu_index],
                            true);
}

static void cxl_ssd_tlb_arm_kick(CXLSSDTlbMap *map, int64_t when_ns)
{
    if (!qatomic_xchg(&map->kick_armed, true)) {
        timer_mod_ns(map->kick_timer, when_ns);
    }
}

/* kick_timer: kick the vCPUs whose queue waited CXL_SSD_TLB_KICK_NS. */
static void cxl_ssd_tlb_kick_late(void *opaque)
{
    CXLSSDState *s = opaque;
    CXLSSDTlbMap *map = s->tlb_map;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_REALTIME), next = INT64_MAX;
    CPUState *cpu;

    qatomic_set(&map->kick_armed, false);
    CPU_FOREACH(cpu) {
        CXLSSDTlbPending *q;
        bool kick = false;

        if (cpu->cpu_index >= map->nr_vcpus) {
            continue;
        }
        q = &map->pending[cpu->cpu_index];
        qemu_mutex_lock(&q->lock);
        if (q->n && !q->kicked) {
            if (now - q->since_ns >= CXL_SSD_TLB_KICK_NS) {
                kick = q->kicked = true;
            } else {
                next = MIN(next, q->since_ns + CXL_SSD_TLB_KICK_NS);
            }
        }
        qemu_mutex_unlock(&q->lock);
        if (kick) {
            async_run_on_cpu(cpu, cxl_ssd_tlb_kicked, RUN_ON_CPU_HOST_PTR(s));
        }
    }
    if (next != INT64_MAX) {
        cxl_ssd_tlb_arm_kick(map, next);
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

        uint64_t old1 = qatomic_read(&f->page1);
        uint64_t old_tag = qatomic_read(&f->tag);

        /* refills of a resident page usually repeat the record */
        if (old_tag != tag || old1 != page + 1) {
            if (old1) {
                /* the entry it named would have no record left */
                cxl_ssd_tlb_invalidate(s, cpu, old1 - 1, old_tag);
            }
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
    int64_t queued_ns = 0;
    CPUState *cpu;

    CPU_FOREACH(cpu) {
        CXLSSDTlbPending *q;
        bool was_empty;

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
        was_empty = q->n == 0;
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
        if (was_empty && q->n) {
            if (!queued_ns) {
                queued_ns = qemu_clock_get_ns(QEMU_CLOCK_REALTIME);
            }
            q->since_ns = queued_ns;
        }
        qemu_mutex_unlock(&q->lock);
    }
    if (queued_ns) {
        cxl_ssd_tlb_arm_kick(map, queued_ns + CXL_SSD_TLB_KICK_NS);
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
    map->kick_timer = timer_new_ns(QEMU_CLOCK_REALTIME, cxl_ssd_tlb_kick_late,
                                   s);
    s->tlb_map = map;
    hooks->unmapped = cxl_ssd_tlb_unmapped;
}

void cxl_ssd_tlb_free(CXLSSDState *s)
{
    if (s->tlb_map) {
        timer_free(s->tlb_map->kick_timer);
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
