/*
 * mmap of /dev/cxlssdN and the fault path: CXDVirt's operation flow on the
 * project's miss service.
 *
 * The mapping is VM_PFNMAP over the module's vmalloc'd backing: a resident
 * page has a PTE and is accessed at memory speed; a miss enters
 * cxlssd_fault(), which hands it to cxlssd_serve_miss() (the model
 * decides, victims are unmapped, the NAND time is waited out with no lock
 * held, then this file's map callback installs the PTE).  Eviction removes
 * PTEs with unmap_mapping_range() on the device's one address_space, which
 * every open file shares, so it reaches every process.  With track_dirty
 * (the default) a read fault maps the page read-only and the first write
 * takes pfn_mkwrite, which marks the page dirty in the model: dirty state
 * and writeback are exact.  Page states change by compare-and-swap inside
 * the model; faulters on a LOADING page poll its state (no sleep on a
 * lock across the wait).  Pages cannot be pinned: get_user_pages refuses
 * VM_PFNMAP, so no pin can outlive an eviction.
 *
 * Prefetched pages become CACHED without a PTE (no task's mapping is known
 * when they complete); the first touch takes a fault that maps them
 * without a NAND wait (counted as resident_faults).
 */
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/vmalloc.h>

#include "cxlssd_kmod.h"
#include "clock.h"

/* ---- who is faulting ---- */

static void ctx_register(struct cxlssd_dev *d, struct cxlssd_fault_ctx *c)
{
    for (;;) {
        spin_lock(&d->faulters_lock);
        for (int i = 0; i < CXLSSD_MAX_FAULTERS; i++) {
            if (!d->faulters[i]) {
                d->faulters[i] = c;
                spin_unlock(&d->faulters_lock);
                return;
            }
        }
        spin_unlock(&d->faulters_lock);
        cond_resched();     /* more concurrent faulters than slots */
    }
}

static void ctx_unregister(struct cxlssd_dev *d, struct cxlssd_fault_ctx *c)
{
    spin_lock(&d->faulters_lock);
    for (int i = 0; i < CXLSSD_MAX_FAULTERS; i++) {
        if (d->faulters[i] == c) {
            d->faulters[i] = NULL;
        }
    }
    spin_unlock(&d->faulters_lock);
}

static struct cxlssd_fault_ctx *ctx_find(struct cxlssd_dev *d, uint64_t page)
{
    struct cxlssd_fault_ctx *found = NULL;

    spin_lock(&d->faulters_lock);
    for (int i = 0; i < CXLSSD_MAX_FAULTERS; i++) {
        struct cxlssd_fault_ctx *c = d->faulters[i];

        if (c && c->task == current && c->page == page) {
            found = c;
            break;
        }
    }
    spin_unlock(&d->faulters_lock);
    return found;
}

/* ---- substrate ---- */

void cxlssd_vm_unmap_pages(struct cxlssd_dev *d, uint64_t page,
                           uint64_t npages)
{
    if (!d->inode) {
        return;     /* never opened: nothing is mapped */
    }
    unmap_mapping_range(d->inode->i_mapping, (loff_t)page << PAGE_SHIFT,
                        (loff_t)npages << PAGE_SHIFT, 1);
    atomic64_inc(&d->unmap_calls);
    atomic64_add(npages, &d->pages_unmapped);
}

static void sub_unmap(void *opaque, const struct cxlssd_victim *v, uint32_t n)
{
    struct cxlssd_dev *d = opaque;
    uint32_t i = 0;

    while (i < n) {
        uint32_t j = i + 1;

        while (j < n && v[j].page == v[j - 1].page + 1) {
            j++;
        }
        cxlssd_vm_unmap_pages(d, v[i].page, j - i);
        i = j;
    }
}

static int sub_map(void *opaque, uint64_t page, bool write)
{
    struct cxlssd_dev *d = opaque;
    struct cxlssd_fault_ctx *c = ctx_find(d, page);
    struct vm_area_struct *vma;
    unsigned long pfn;
    pgprot_t prot;

    if (!c) {
        return 0;       /* a prefetch: mapped on first touch */
    }
    vma = c->vmf->vma;
    pfn = vmalloc_to_pfn((char *)d->backing + (page << PAGE_SHIFT));
    /* vm_page_prot is read-only under write notification (track_dirty);
     * a write fault maps writable at once, its page filled dirty */
    prot = (write || !d->cfg.track_dirty) ? vm_get_page_prot(vma->vm_flags)
                                          : vma->vm_page_prot;
    c->ret = vmf_insert_pfn_prot(vma, c->vmf->address & PAGE_MASK, pfn,
                                 prot);
    if (c->ret != VM_FAULT_NOPAGE) {
        atomic64_inc(&d->map_errors);
        return -EFAULT;
    }
    if (d->fresh) {
        set_bit(page, d->fresh);
    }
    return 0;
}

static void sub_after_miss(void *opaque)
{
    struct cxlssd_dev *d = opaque;

    /* the worker completes the prefetches this miss queued, on time */
    if (cxlssd_next_prefetch(d->svc) != UINT64_MAX ||
        (d->cfg.eviction == CXLSSD_EVICTION_BACKGROUND &&
         cxlssd_evict_needed(d->model))) {
        cxlssd_evictor_kick(d);
    }
}

void cxlssd_vm_substrate(struct cxlssd_dev *d, struct cxlssd_substrate *s)
{
    memset(s, 0, sizeof(*s));
    s->opaque = d;
    s->unmap = sub_unmap;
    s->map = sub_map;
    s->after_miss = sub_after_miss;
}

/* ---- vm operations ---- */

static vm_fault_t cxlssd_fault(struct vm_fault *vmf)
{
    struct cxlssd_dev *d = vmf->vma->vm_private_data;
    uint64_t t_fault = cxlssd_now_ns();
    uint64_t page = vmf->pgoff;
    bool write = vmf->flags & FAULT_FLAG_WRITE;
    struct cxlssd_fault_ctx c = {
        .task = current, .vmf = vmf, .page = page, .ret = VM_FAULT_NOPAGE,
    };

    if (page >= d->pages) {
        return VM_FAULT_SIGBUS;
    }
    atomic64_inc(&d->faults);
    ctx_register(d, &c);
    if (cxlssd_page_state(d->model, page) == CXLSSD_CACHED) {
        atomic64_inc(&d->resident_faults);
        cxlssd_serve_resident_fault(d->svc, page);
    } else {
        struct cxlssd_miss_request req = {
            .page = page,
            .write = write,
            .tid = task_pid_nr(current),
            .vcpu = -1,
            .t_fault_ns = t_fault,
        };

        cxlssd_serve_miss(d->svc, &req);
    }
    ctx_unregister(d, &c);
    /* NOPAGE also when no PTE was installed here (the page was filled by
     * another task, or evicted again): the access then faults again */
    return c.ret;
}

/* First write to a page mapped read-only: exact dirty state. */
static vm_fault_t cxlssd_pfn_mkwrite(struct vm_fault *vmf)
{
    struct cxlssd_dev *d = vmf->vma->vm_private_data;
    uint64_t page = vmf->pgoff;

    if (page >= d->pages) {
        return VM_FAULT_SIGBUS;
    }
    atomic64_inc(&d->wp_faults);
    if (cxlssd_page_state(d->model, page) != CXLSSD_CACHED) {
        /* being evicted: its PTE goes away; the write faults again */
        return VM_FAULT_NOPAGE;
    }
    cxlssd_mark_dirty(d->model, page);
    return 0;
}

/* A copy of a mapping (fork) has the parent's PTEs: track its mm too. */
static void cxlssd_vm_open(struct vm_area_struct *vma)
{
    cxlssd_mm_track(vma->vm_private_data, vma->vm_mm);
}

static const struct vm_operations_struct cxlssd_vm_ops_wp = {
    .open = cxlssd_vm_open,
    .fault = cxlssd_fault,
    .pfn_mkwrite = cxlssd_pfn_mkwrite,
};

static const struct vm_operations_struct cxlssd_vm_ops_nowp = {
    .open = cxlssd_vm_open,
    .fault = cxlssd_fault,
};

bool cxlssd_vm_is_ours(const struct vm_area_struct *vma,
                       const struct cxlssd_dev *d)
{
    return (vma->vm_ops == &cxlssd_vm_ops_wp ||
            vma->vm_ops == &cxlssd_vm_ops_nowp) &&
           vma->vm_private_data == d;
}

int cxlssd_vm_mmap(struct file *f, struct vm_area_struct *vma)
{
    struct cxlssd_dev *d = f->private_data;
    unsigned long npages = vma_pages(vma);

    if (!(vma->vm_flags & VM_SHARED)) {
        return -EINVAL;     /* like devdax: private mappings make no sense */
    }
    if (vma->vm_pgoff >= d->pages || npages > d->pages - vma->vm_pgoff) {
        return -ENXIO;
    }
    vma->vm_ops = d->cfg.track_dirty ? &cxlssd_vm_ops_wp
                                     : &cxlssd_vm_ops_nowp;
    vma->vm_private_data = d;
    vm_flags_set(vma, VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
    cxlssd_mm_track(d, vma->vm_mm);
    return 0;
}
