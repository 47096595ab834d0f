/*
 * cxl-ssd trap hooks: the BQL policy and vCPU identification for misses
 * served on handler threads, errors through error_report(), and the miss
 * path's trace events (trace-events: fault, decision, evict, writeback,
 * GC, prefetch issue/complete, map, miss), for uffd and mmio mode alike.
 *
 * With bql=on a handler takes the BQL before the model decision for a vCPU
 * miss and keeps it through the NAND wait and the mapping, as Cylon's MMIO
 * exit path does.  It never waits for the BQL when the faulting thread
 * holds it (a vCPU in an MMIO callback) and never for a miss of one of
 * QEMU's own threads (the main loop running "xp", block-layer workers doing
 * DMA while the main loop drains them with the BQL held): those threads
 * may be what the BQL holder waits for.  bql_holder_thread_id()
 * comes from qemu-patches/0002.
 *
 * Misses take the BQL in the order they asked for it (a ticket queue in
 * front of it, shared by every cxl-ssd device as the BQL is).  The BQL is
 * a plain mutex: a vCPU that releases it after a miss and misses again
 * takes it straight back, ahead of a thread still waking up in the mutex.
 * With misses served on the vCPU threads (delivery=tlb) one vCPU then
 * served ~25 misses in a row while the other's one miss waited ~400 us:
 * serialised, but only the P99 showed it, not the P50.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "qemu/processor.h"
#include "qemu/timer.h"
#include "hw/core/cpu.h"
#include "cxl_ssd.h"
#include "trace.h"

/*
 * A thread of another process faulting on the window: under KVM, the
 * async-page-fault worker (a kworker running get_user_pages for a vCPU that
 * KVM halted meanwhile).  Its miss is that vCPU's; it holds no QEMU lock and
 * nothing in QEMU waits for it.
 */
static bool cxl_ssd_foreign_thread(pid_t tid)
{
    char path[48];

    snprintf(path, sizeof(path), "/proc/self/task/%d", (int)tid);
    return access(path, F_OK) != 0;
}

/* The misses' queue for the BQL: tickets drawn, and the one whose turn it is. */
static uint64_t cxl_ssd_bql_next, cxl_ssd_bql_serving;

/* Spin this long for a turn before yielding the CPU between checks (the
 * holder may have been preempted). */
#define CXL_SSD_BQL_SPIN_NS 50000

static void cxl_ssd_bql_lock_in_order(void)
{
    uint64_t ticket = qatomic_fetch_inc(&cxl_ssd_bql_next);
    int64_t since = 0;

    while (qatomic_load_acquire(&cxl_ssd_bql_serving) != ticket) {
        if (!since) {
            since = get_clock();
        } else if (get_clock() - since > CXL_SSD_BQL_SPIN_NS) {
            sched_yield();
            continue;
        }
        cpu_relax();
    }
    bql_lock();
}

static void cxl_ssd_bql_unlock_in_order(void)
{
    bql_unlock();
    /* only the holder of the turn moves it on */
    qatomic_store_release(&cxl_ssd_bql_serving,
                          qatomic_read(&cxl_ssd_bql_serving) + 1);
}

static bool cxl_ssd_serialize_begin(void *opaque, pid_t tid)
{
    CXLSSDState *s = opaque;

    /*
     * Only vCPU misses are serialised: those of vCPU threads and those KVM
     * hands to its async-page-fault workers.  QEMU's own threads
     * (block-layer workers doing a device's DMA, the main loop) can fault
     * on the window while the BQL holder waits for them, e.g. a "stop" or
     * a device reset draining in-flight requests: waiting for the BQL on
     * their behalf would deadlock.
     */
    if ((cxl_ssd_vcpu_index(s, tid) < 0 && !cxl_ssd_foreign_thread(tid)) ||
        bql_holder_thread_id() == tid) {
        return false;
    }
    cxl_ssd_bql_lock_in_order();
    return true;
}

static void cxl_ssd_serialize_end(void *opaque)
{
    cxl_ssd_bql_unlock_in_order();
}

static int cxl_ssd_vcpu_index_hook(void *opaque, pid_t tid)
{
    return cxl_ssd_vcpu_index(opaque, tid);
}

static void cxl_ssd_error(void *opaque, const char *msg)
{
    error_report("%s", msg);
}

static void cxl_ssd_trace_fault(void *opaque, uint64_t page, bool write,
                                int32_t tid, int32_t vcpu)
{
    trace_cxl_ssd_fault(page, write, tid, vcpu);
}

static void cxl_ssd_trace_decision(void *opaque, const struct cxlssd_miss *m)
{
    trace_cxl_ssd_decision(m->page, m->outcome, m->deadline_ns, m->nvictims,
                           m->nprefetch);
}

static void cxl_ssd_trace_evict(void *opaque, uint64_t page, bool dirty)
{
    trace_cxl_ssd_evict(page, dirty);
}

static void cxl_ssd_trace_writeback(void *opaque, uint64_t page)
{
    trace_cxl_ssd_writeback(page);
}

static void cxl_ssd_trace_gc(void *opaque, uint64_t page, uint32_t blocks)
{
    trace_cxl_ssd_gc(page, blocks);
}

static void cxl_ssd_trace_prefetch_issue(void *opaque, uint64_t page,
                                         uint64_t deadline_ns)
{
    trace_cxl_ssd_prefetch_issue(page, deadline_ns);
}

static void cxl_ssd_trace_prefetch_complete(void *opaque, uint64_t page)
{
    trace_cxl_ssd_prefetch_complete(page);
}

static void cxl_ssd_trace_map(void *opaque, uint64_t page,
                              uint64_t deadline_ns, uint64_t mapped_ns)
{
    trace_cxl_ssd_map(page, deadline_ns, mapped_ns);
}

static void cxl_ssd_trace_miss(void *opaque, const struct cxlssd_record *rec)
{
    trace_cxl_ssd_miss(rec->page, rec->flags & CXLSSD_REC_WRITE,
                       rec->t_fault_ns, rec->t_deadline_ns, rec->t_mapped_ns);
}

void cxl_ssd_hooks_fill(CXLSSDState *s, struct cxlssd_trap_hooks *hooks)
{
    *hooks = (struct cxlssd_trap_hooks) {
        .opaque = s,
        .serialize_begin = cxl_ssd_serialize_begin,
        .serialize_end = cxl_ssd_serialize_end,
        .vcpu_index = cxl_ssd_vcpu_index_hook,
        .error = cxl_ssd_error,
        .trace = {
            .fault = cxl_ssd_trace_fault,
            .decision = cxl_ssd_trace_decision,
            .evict = cxl_ssd_trace_evict,
            .writeback = cxl_ssd_trace_writeback,
            .gc = cxl_ssd_trace_gc,
            .prefetch_issue = cxl_ssd_trace_prefetch_issue,
            .prefetch_complete = cxl_ssd_trace_prefetch_complete,
            .map = cxl_ssd_trace_map,
            .miss_done = cxl_ssd_trace_miss,
        },
    };
    if (!s->cfg.bql || cxl_ssd_sigbus(s)) {
        /*
         * Nothing to serialise (bql=off): no hook, so no spare handler
         * threads.  Under sigbus, vCPU misses are served in a SIGBUS
         * handler on the vCPU thread, where nothing may take a lock
         * (bql=on is refused at realize); the engine itself skips the
         * error and trace hooks there (trace backends lock): those misses
         * reach the per-miss CSV only.
         */
        hooks->serialize_begin = NULL;
        hooks->serialize_end = NULL;
    }
}

/*
 * vCPU threads exist before -device devices are realized; the snapshot is
 * taken once, under the BQL, and only read afterwards (CPU hotplug is not
 * supported by cxl-ssd).
 */
void cxl_ssd_snapshot_vcpus(CXLSSDState *s)
{
    CPUState *cpu;
    int n = 0;

    CPU_FOREACH(cpu) {
        n = MAX(n, cpu->cpu_index + 1);
    }
    s->vcpu_tids = g_new0(pid_t, n);
    s->nr_vcpus = n;
    CPU_FOREACH(cpu) {
        s->vcpu_tids[cpu->cpu_index] = cpu->thread_id;
    }
}

int cxl_ssd_vcpu_index(CXLSSDState *s, pid_t tid)
{
    int i;

    for (i = 0; i < s->nr_vcpus; i++) {
        if (s->vcpu_tids[i] == tid) {
            return i;
        }
    }
    return -1;
}
