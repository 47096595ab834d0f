/*
 * The address spaces that map the device, and batched eviction unmaps.
 *
 * Every mm that maps the device is remembered (mmap, and vm_ops->open for
 * the copies fork makes), at most CXLSSD_MAX_MMS, each held with mmgrab
 * until unload or until it exits.  The accessed-bit scan (cxlssd_young.c)
 * walks them, and so does the background evictor's batched unmap:
 *
 * unmap_mapping_range() flushes the TLBs once per call, and with the
 * victims scattered over the cache that is one synchronous flush IPI per
 * evicted page to every other CPU running the process.  Under TCG on a
 * loaded host each IPI waits for the other vCPU's host thread to run, so
 * a second thread's misses took milliseconds.  cxlssd_mms_zap() instead
 * clears the PTEs of a whole batch of victims in every mm and then flushes
 * each mm's CPUs once.  The PTEs are special (vmf_insert_pfn: no rmap, no
 * page refcount, no RSS counter), so clearing them under the PTE lock is
 * the whole unmap.  It gives up (the caller falls back to
 * unmap_mapping_range) when an mm could not be tracked, when an mm has
 * MMU notifiers (they are not callable from modules), and when an
 * mmap_lock is not free at once: a faulter holding it may be waiting for
 * this very eviction.
 */
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <asm/tlbflush.h>

#include "cxlssd_kmod.h"

void cxlssd_mm_track(struct cxlssd_dev *d, struct mm_struct *mm)
{
    int free_slot = -1;

    spin_lock(&d->mms_lock);
    for (int i = 0; i < CXLSSD_MAX_MMS; i++) {
        if (d->mms[i] == mm) {
            spin_unlock(&d->mms_lock);
            return;
        }
        if (!d->mms[i] && free_slot < 0) {
            free_slot = i;
        }
    }
    if (free_slot >= 0) {
        mmgrab(mm);
        d->mms[free_slot] = mm;
    } else {
        d->mms_overflow = true;
    }
    spin_unlock(&d->mms_lock);
    if (free_slot < 0) {
        pr_warn_once("cxlssd: more than %d address spaces map the device: "
                     "their accessed bits are not scanned and evictions "
                     "unmap page by page\n", CXLSSD_MAX_MMS);
    }
}

void cxlssd_mm_untrack_all(struct cxlssd_dev *d)
{
    for (int i = 0; i < CXLSSD_MAX_MMS; i++) {
        if (d->mms[i]) {
            mmdrop(d->mms[i]);
            d->mms[i] = NULL;
        }
    }
}

struct mm_struct *cxlssd_mm_get(struct cxlssd_dev *d, int i)
{
    struct mm_struct *mm, *dead = NULL;

    spin_lock(&d->mms_lock);
    mm = d->mms[i];
    if (mm && !mmget_not_zero(mm)) {
        dead = mm;          /* exited: forget it */
        d->mms[i] = NULL;
        mm = NULL;
    }
    spin_unlock(&d->mms_lock);
    if (dead) {
        mmdrop(dead);
    }
    return mm;
}

/* ---- batched unmap ---- */

#ifdef CONFIG_X86
struct zap_walk {
    struct mm_struct *mm;
    bool cleared;
};

/* Called with the PTE's lock held. */
static int zap_pte(pte_t *pte, unsigned long addr, void *data)
{
    struct zap_walk *w = data;

    if (pte_present(ptep_get(pte))) {
        ptep_get_and_clear(w->mm, addr, pte);
        w->cleared = true;
    }
    return 0;
}

static void flush_local_tlb(void *unused)
{
    __flush_tlb_all();
}

/* One mm: clear the victims' PTEs in each of its mappings of the device,
 * then one flush on the CPUs that may cache its translations. */
static bool zap_mm(struct cxlssd_dev *d, struct mm_struct *mm,
                   const struct cxlssd_victim *v, uint32_t n)
{
    struct zap_walk w = { .mm = mm };
    struct vm_area_struct *vma;
    unsigned long addr = 0;

    if (mm_has_notifiers(mm) || !mmap_read_trylock(mm)) {
        return false;
    }
    while ((vma = find_vma(mm, addr)) != NULL) {
        if (cxlssd_vm_is_ours(vma, d)) {
            for (uint32_t i = 0; i < n; i++) {
                uint64_t page = v[i].page;

                if (page >= vma->vm_pgoff &&
                    page - vma->vm_pgoff < vma_pages(vma)) {
                    apply_to_existing_page_range(
                        mm, vma->vm_start +
                            ((page - vma->vm_pgoff) << PAGE_SHIFT),
                        PAGE_SIZE, zap_pte, &w);
                }
            }
        }
        addr = vma->vm_end;
    }
    if (w.cleared) {
        /* x86 leaves a CPU in mm_cpumask until a flush finds it running
         * another mm, so the mask covers every CPU that may cache these
         * translations; __flush_tlb_all drops them for every PCID */
        on_each_cpu_mask(mm_cpumask(mm), flush_local_tlb, NULL, true);
    }
    mmap_read_unlock(mm);
    return true;
}

bool cxlssd_mms_zap(struct cxlssd_dev *d, const struct cxlssd_victim *v,
                    uint32_t n)
{
    bool ok = !READ_ONCE(d->mms_overflow);

    for (int i = 0; i < CXLSSD_MAX_MMS && ok; i++) {
        struct mm_struct *mm = cxlssd_mm_get(d, i);

        if (mm) {
            ok = zap_mm(d, mm, v, n);
            mmput(mm);
        }
    }
    if (ok) {
        atomic64_inc(&d->zap_batches);
        atomic64_add(n, &d->pages_unmapped);
    }
    return ok;
}
#else
/* the mm_cpumask rule and the local flush used above are x86's */
bool cxlssd_mms_zap(struct cxlssd_dev *d, const struct cxlssd_victim *v,
                    uint32_t n)
{
    return false;
}
#endif
