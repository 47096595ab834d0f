/*
 * PTE accessed bits feeding the policies (young_scan_ms > 0).  Hits on a
 * mapped page never reach the fault handler, so CLOCK's reference bit and
 * S3-FIFO's frequency would only see misses (as in the QEMU device's uffd
 * mode, where they run blind).  Every young_scan_ms the worker thread
 * walks the PTEs of every mapping of the device, test-and-clears each
 * accessed bit and reports the young pages to the model with cxlssd_hit()
 * (counted in trapped_hits).  A scan that cleared bits ends with a TLB
 * flush on every CPU (the kernel's ranged flush is not exported to
 * modules): without it a page whose translation stays cached would never
 * be seen young again, which makes CLOCK a FIFO.  The access that retries
 * a fault sets the bit of every page just mapped: that first bit is the
 * miss itself, not a hit, and is cleared without a report (d->fresh).
 *
 * The mappings are found through the address spaces that mapped the device
 * (cxlssd_mms.c): under mmap_read_lock, find_vma() returns only mappings still in
 * the tree, whose page tables cannot go away during the walk.
 */
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/sched/mm.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <asm/tlbflush.h>

#include "cxlssd_kmod.h"

#define YOUNG_BATCH 512u    /* pages per page-table walk */

struct young_walk {
    struct cxlssd_dev *d;
    struct vm_area_struct *vma;
    bool cleared;               /* some bit cleared: flush the TLBs */
    uint32_t n;
    uint64_t pages[YOUNG_BATCH];
};

/* ptep_test_and_clear_young() is not exported to modules; x86's is this
 * atomic bit operation.  Elsewhere the scan finds nothing young. */
static bool test_and_clear_young(pte_t *pte)
{
#ifdef CONFIG_X86
    return pte_young(ptep_get(pte)) &&
           test_and_clear_bit(_PAGE_BIT_ACCESSED, (unsigned long *)&pte->pte);
#else
    return false;
#endif
}

/* Called with the PTE's lock held. */
static int young_pte(pte_t *pte, unsigned long addr, void *data)
{
    struct young_walk *w = data;
    struct vm_area_struct *vma = w->vma;

    uint64_t page = vma->vm_pgoff + ((addr - vma->vm_start) >> PAGE_SHIFT);

    if (pte_present(ptep_get(pte)) && test_and_clear_young(pte)) {
        w->cleared = true;
        if (!test_and_clear_bit(page, w->d->fresh) && w->n < YOUNG_BATCH) {
            w->pages[w->n++] = page;
        }
    }
    return 0;
}

static void scan_vma(struct cxlssd_dev *d, struct vm_area_struct *vma,
                     struct young_walk *w)
{
    unsigned long step = (unsigned long)YOUNG_BATCH << PAGE_SHIFT;

    for (unsigned long a = vma->vm_start; a < vma->vm_end; a += step) {
        unsigned long len = min(step, vma->vm_end - a);

        w->vma = vma;
        w->n = 0;
        apply_to_existing_page_range(vma->vm_mm, a, len, young_pte, w);
        for (uint32_t i = 0; i < w->n; i++) {
            cxlssd_hit(d->model, w->pages[i], false);
        }
        atomic64_add(w->n, &d->young_hits);
    }
}

static void scan_mm(struct cxlssd_dev *d, struct mm_struct *mm,
                    struct young_walk *w)
{
    struct vm_area_struct *vma;
    unsigned long addr = 0;

    mmap_read_lock(mm);
    while ((vma = find_vma(mm, addr)) != NULL) {
        if (cxlssd_vm_is_ours(vma, d)) {
            scan_vma(d, vma, w);
        }
        addr = vma->vm_end;
    }
    mmap_read_unlock(mm);
}

#ifdef CONFIG_X86
static void flush_local_tlb(void *unused)
{
    __flush_tlb_all();
}
#endif

void cxlssd_young_scan(struct cxlssd_dev *d)
{
    struct young_walk *w = kzalloc(sizeof(*w), GFP_KERNEL);

    if (!w) {
        return;
    }
    w->d = d;
    for (int i = 0; i < CXLSSD_MAX_MMS; i++) {
        struct mm_struct *mm = cxlssd_mm_get(d, i);

        if (mm) {
            scan_mm(d, mm, w);
            mmput(mm);
        }
    }
#ifdef CONFIG_X86
    if (w->cleared) {
        on_each_cpu(flush_local_tlb, NULL, 1);
    }
#endif
    atomic64_inc(&d->young_scans);
    kfree(w);
}
