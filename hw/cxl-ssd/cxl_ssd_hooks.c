/*
 * cxl-ssd trap hooks: the BQL policy and vCPU identification for misses
 * served on handler threads.
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
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "hw/core/cpu.h"
#include "cxl_ssd.h"
#include "trace.h"

static bool cxl_ssd_serialize_begin(void *opaque, pid_t tid)
{
    CXLSSDState *s = opaque;

    /*
     * Only vCPU misses are serialised.  QEMU's own threads (block-layer
     * workers doing a device's DMA, the main loop) can fault on the window
     * while the BQL holder waits for them, e.g. a "stop" or a device reset
     * draining in-flight requests: waiting for the BQL on their behalf
     * would deadlock.
     */
    if (cxl_ssd_vcpu_index(s, tid) < 0 ||
        bql_holder_thread_id() == tid) {
        return false;
    }
    bql_lock();
    return true;
}

static void cxl_ssd_serialize_end(void *opaque)
{
    bql_unlock();
}

static int cxl_ssd_vcpu_index_hook(void *opaque, pid_t tid)
{
    return cxl_ssd_vcpu_index(opaque, tid);
}

static void cxl_ssd_miss_done(void *opaque, const struct cxlssd_record *rec)
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
        .miss_done = cxl_ssd_miss_done,
    };
    if (!s->bql) {
        /* nothing to serialise: no hook, so no spare handler threads */
        hooks->serialize_begin = NULL;
        hooks->serialize_end = NULL;
    }
    if (cxl_ssd_sigbus(s)) {
        /*
         * vCPU misses are served in a SIGBUS handler on the vCPU thread:
         * nothing there may take a lock (bql=on is refused at realize, and
         * trace backends lock), so no serialisation and no miss trace event
         * (the per-miss CSV still has every miss).
         */
        hooks->serialize_begin = NULL;
        hooks->serialize_end = NULL;
        hooks->miss_done = NULL;
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
