/*
 * The cxl-ssd kernel module: the project's model (hw/cxl-ssd/model) behind
 * a character device applications mmap like devdax.  The backing memory
 * holds every page's data; the model decides which pages are resident
 * (mapped) and how long each miss takes.
 *
 *   cxlssd_main.c     module parameters (props.def), load/unload, the
 *                     character device and its sysfs attributes
 *   cxlssd_vm.c       mmap, the fault path and the miss service substrate
 *   cxlssd_evictor.c  background eviction and prefetch completion thread
 *   cxlssd_mms.c      the address spaces that map the device; batched
 *                     eviction unmaps (one TLB flush per batch)
 *   cxlssd_young.c    PTE accessed bits -> CLOCK/S3-FIFO (young_scan_ms)
 *   cxlssd_debugfs.c  stats (the names of `qom-get stats`) and records
 *   kmod_wait.c       deadline waits (wait_mode=busy|sleep)
 *   kport_lib.c, kport/  the model's libc on kernel APIs
 *
 * Kernel headers come first in every file of the module: the model's
 * headers pull in kport/stdatomic.h, whose macros must not meet kernel
 * headers included later.
 */
#ifndef CXLSSD_KMOD_H
#define CXLSSD_KMOD_H

#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>

#include "config.h"
#include "miss_service.h"
#include "model.h"
#include "record.h"

/* A fault being served: the map callback installs the PTE only for the
 * faulting task's own page (prefetched pages are mapped on first touch). */
struct cxlssd_fault_ctx {
    struct task_struct *task;
    struct vm_fault *vmf;
    uint64_t page;
    vm_fault_t ret;
};

#define CXLSSD_MAX_FAULTERS 64
#define CXLSSD_MAX_MMS 32

struct cxlssd_dev {
    struct cxlssd_config cfg;
    uint64_t size;              /* bytes */
    uint64_t pages;
    void *backing;              /* vmalloc: every page's data */
    struct cxlssd_model *model;
    struct cxlssd_miss_service *svc;
    struct cxlssd_record_ring *ring;
    atomic_bool stop;

    /* every mapping of the device is in this inode's address_space (all
     * opens share it, so one unmap_mapping_range reaches every process) */
    struct inode *inode;
    struct mutex inode_lock;

    spinlock_t faulters_lock;
    struct cxlssd_fault_ctx *faulters[CXLSSD_MAX_FAULTERS];

    /* the address spaces that mapped the device (cxlssd_mms.c); overflow:
     * some are not in mms[] */
    spinlock_t mms_lock;
    struct mm_struct *mms[CXLSSD_MAX_MMS];
    bool mms_overflow;
    /* accessed-bit scan (cxlssd_young.c), every young_scan_ms */
    unsigned int young_scan_ms;
    unsigned long *fresh;       /* mapped, accessed bit not yet scanned */
    uint64_t young_last_ns;
    atomic64_t young_hits, young_scans;

    struct task_struct *evictor;
    wait_queue_head_t evictor_wq;
    bool evictor_kick;

    /* counters of the module's own path (stats file) */
    atomic64_t faults, wp_faults, pages_unmapped, unmap_calls,
        resident_faults, map_errors, zap_batches;

    dev_t devt;
    struct cdev cdev;
    struct device *device;
    struct dentry *debugfs_dev;     /* cxlssd/cxlssdN */
    FILE records_buf;           /* records file: drained text, read up
                                 * to records_off */
    size_t records_off;
    struct mutex records_lock;
    bool records_header_done;
};

extern bool cxlssd_kmod_wait_sleep;

/* cxlssd_vm.c */
int cxlssd_vm_mmap(struct file *f, struct vm_area_struct *vma);
void cxlssd_vm_substrate(struct cxlssd_dev *d, struct cxlssd_substrate *s);
void cxlssd_vm_unmap_pages(struct cxlssd_dev *d, uint64_t page,
                           uint64_t npages);
bool cxlssd_vm_is_ours(const struct vm_area_struct *vma,
                       const struct cxlssd_dev *d);

/* cxlssd_mms.c */
void cxlssd_mm_track(struct cxlssd_dev *d, struct mm_struct *mm);
void cxlssd_mm_untrack_all(struct cxlssd_dev *d);
/* slot i's mm with mmget held (mmput it), or NULL */
struct mm_struct *cxlssd_mm_get(struct cxlssd_dev *d, int i);
/* unmap n victims with one TLB flush per mm; false: not done, unmap them
 * with cxlssd_vm_unmap_pages */
bool cxlssd_mms_zap(struct cxlssd_dev *d, const struct cxlssd_victim *v,
                    uint32_t n);

/* cxlssd_young.c */
void cxlssd_young_scan(struct cxlssd_dev *d);

/* cxlssd_evictor.c */
int cxlssd_evictor_start(struct cxlssd_dev *d);
void cxlssd_evictor_stop(struct cxlssd_dev *d);
void cxlssd_evictor_kick(struct cxlssd_dev *d);

/* cxlssd_debugfs.c: the cxlssd/ folder, then one per instance */
void cxlssd_debugfs_root_init(void);
void cxlssd_debugfs_root_exit(void);
void cxlssd_debugfs_init(struct cxlssd_dev *d);
void cxlssd_debugfs_exit(struct cxlssd_dev *d);

#endif
