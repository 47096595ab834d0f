/*
 * The cxl-ssd kernel module: load, unload, parameters, /dev/cxlssdN.
 *
 * Every row of model/props.def is a module parameter named as the QEMU
 * property (insmod cxlssd.ko cache-size=16M policy=clock; "-" and "_" are
 * the same to the kernel's parser), set through cxlssd_config_set() and
 * checked by cxlssd_config_validate(): the same parser and the same
 * messages as -device cxl-ssd.  A bad value fails the load with the
 * message in the kernel log.  Properties of the device's delivery (mode,
 * bql, delivery, handler-threads, handler-cpus, record, dram-latency-ns,
 * compensate*) have no effect here; combinations QEMU refuses are refused
 * alike (see README.md).
 *
 * Module-only parameters: size (device bytes, default 256M, allocated
 * with vmalloc at load), wait_mode (busy or sleep: how a miss waits out
 * its NAND time), instances (how many devices, /dev/cxlssd0..N-1, each
 * with its own backing, model, stats and records) and overrides (per
 * instance, comma-separated: "name=value+name=value" applied after the
 * common parameters; size and every props.def name; empty: none).
 */
#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "cxlssd_kmod.h"

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("cxl-ssd: the cxl-ssd device model as a kernel module");

/* ---- parameters ---- */

/* One charp per property, filled by the kernel's parser (NULL: unset). */
enum {
#define CXLSSD_PROP(K, F, N, D, LO, HI, DESC) CXLSSD_KPARAM_##F,
#include "props.def"
#undef CXLSSD_PROP
    CXLSSD_KPARAM_COUNT
};
static char *cxlssd_kparam[CXLSSD_KPARAM_COUNT];

/* module_param_named() with a name that is not a C identifier (the
 * property names have dashes). */
#define CXLSSD_PROP(K, F, N, D, LO, HI, DESC)                              \
    static const char cxlssd_param_str_##F[] = N;                          \
    static struct kernel_param __moduleparam_const cxlssd_param_##F        \
    __used __section("__param")                                            \
    __aligned(__alignof__(struct kernel_param)) = {                        \
        .name = cxlssd_param_str_##F,                                      \
        .mod = THIS_MODULE,                                                \
        .ops = &param_ops_charp,                                           \
        .perm = VERIFY_OCTAL_PERMISSIONS(0444),                            \
        .level = -1,                                                       \
        .arg = &cxlssd_kparam[CXLSSD_KPARAM_##F],                          \
    };                                                                     \
    MODULE_INFO(parmtype, N ":charp");                                     \
    MODULE_INFO(parm, N ":" DESC);
#include "props.def"
#undef CXLSSD_PROP

static char *param_size = "256M";
module_param_named(size, param_size, charp, 0444);
MODULE_PARM_DESC(size, "device size in bytes (K/M/G suffixes), allocated "
                 "at load (default 256M)");

static char *wait_mode = "busy";
module_param(wait_mode, charp, 0444);
MODULE_PARM_DESC(wait_mode, "how a miss waits out its NAND time: busy "
                 "(spin, as the device's handlers) or sleep (hrtimer)");

static unsigned int young_scan_ms;
module_param(young_scan_ms, uint, 0444);
MODULE_PARM_DESC(young_scan_ms, "every N ms, feed the PTEs' accessed bits "
                 "to the policy (CLOCK reference bit, S3-FIFO frequency) as "
                 "hits; 0 = off, the policies see misses only, as the "
                 "device's uffd mode (0)");

#define CXLSSD_MAX_INSTANCES 8

static unsigned int instances = 1;
module_param(instances, uint, 0444);
MODULE_PARM_DESC(instances, "number of devices, /dev/cxlssd0.."
                 "cxlssd<N-1> (1..8, default 1)");

static char *overrides[CXLSSD_MAX_INSTANCES];
static int noverrides;
module_param_array(overrides, charp, &noverrides, 0444);
MODULE_PARM_DESC(overrides, "per instance, comma-separated: "
                 "name=value+name=value (size or a property), applied over "
                 "the common parameters; empty for none");

static struct cxlssd_dev *cxlssd_devs[CXLSSD_MAX_INSTANCES];
static struct class *cxlssd_class;
static dev_t cxlssd_devt;

static int parse_size(const char *val, struct cxlssd_dev *d)
{
    char *end;
    unsigned long long bytes = memparse(val, &end);

    if (*end || bytes == 0 || bytes % PAGE_SIZE) {
        pr_err("cxlssd: size=%s: want a positive multiple of %lu bytes\n",
               val, PAGE_SIZE);
        return -EINVAL;
    }
    d->size = bytes;
    return 0;
}

/* Instance idx's overrides ("name=value+..."): size first (the defaults
 * depend on it) when @size_only, else every property. */
static int apply_overrides(struct cxlssd_dev *d, unsigned int idx,
                           bool size_only)
{
    char err[256];
    char *list, *cur, *item;
    int r = 0;

    if (idx >= (unsigned int)noverrides || !overrides[idx][0]) {
        return 0;
    }
    list = kstrdup(overrides[idx], GFP_KERNEL);
    if (!list) {
        return -ENOMEM;
    }
    cur = list;
    while (!r && (item = strsep(&cur, "+")) != NULL) {
        char *val = strchr(item, '=');

        if (!val) {
            pr_err("cxlssd: overrides[%u]=%s: want name=value+name=value\n",
                   idx, overrides[idx]);
            r = -EINVAL;
            break;
        }
        *val++ = '\0';
        if (!strcmp(item, "size")) {
            r = size_only ? parse_size(val, d) : 0;
        } else if (!size_only &&
                   cxlssd_config_set(&d->cfg, item, val, err, sizeof(err))) {
            pr_err("cxlssd%u: %s\n", idx, err);
            r = -EINVAL;
        }
    }
    kfree(list);
    return r;
}

static int parse_params(struct cxlssd_dev *d, unsigned int idx)
{
    char err[256];
    unsigned long long bytes;
    int r;

    r = parse_size(param_size, d);
    if (!r) {
        r = apply_overrides(d, idx, true);
    }
    if (r) {
        return r;
    }
    bytes = d->size;
    if (!strcmp(wait_mode, "busy") || !strcmp(wait_mode, "sleep")) {
        cxlssd_kmod_wait_sleep = !strcmp(wait_mode, "sleep");
    } else {
        pr_err("cxlssd: wait_mode=%s: want busy or sleep\n", wait_mode);
        return -EINVAL;
    }
    cxlssd_config_defaults(&d->cfg, bytes);
    for (size_t i = 0; i < CXLSSD_KPARAM_COUNT; i++) {
        if (cxlssd_kparam[i] &&
            cxlssd_config_set(&d->cfg, cxlssd_props[i].name,
                              cxlssd_kparam[i], err, sizeof(err))) {
            pr_err("%s\n", err);
            return -EINVAL;
        }
    }
    r = apply_overrides(d, idx, false);
    if (r) {
        return r;
    }
    if (cxlssd_config_validate(&d->cfg, err, sizeof(err))) {
        pr_err("%s\n", err);
        return -EINVAL;
    }
    if (d->cfg.eviction == CXLSSD_EVICTION_BATCH) {
        pr_err("cxl-ssd: eviction=batch is not offered by the module: "
               "its background worker already unmaps victims in batches, "
               "one TLB flush each (allowed: sync, background)\n");
        return -EINVAL;
    }
    if (d->cfg.page_size != PAGE_SIZE) {
        pr_err("cxl-ssd: page-size=%u: the module maps %lu-byte pages "
               "(allowed: %lu)\n", d->cfg.page_size, PAGE_SIZE, PAGE_SIZE);
        return -EINVAL;
    }
    d->pages = bytes / PAGE_SIZE;
    d->young_scan_ms = young_scan_ms;
    return 0;
}

/* ---- the character device ---- */

static int cxlssd_open(struct inode *inode, struct file *f)
{
    struct cxlssd_dev *d = container_of(inode->i_cdev, struct cxlssd_dev,
                                        cdev);

    /* one mapping for every opener, whatever device node it opened: the
     * first opener's inode's, held until unload */
    mutex_lock(&d->inode_lock);
    if (!d->inode) {
        d->inode = igrab(inode);
    }
    mutex_unlock(&d->inode_lock);
    if (!d->inode) {
        return -ENODEV;
    }
    f->private_data = d;
    f->f_mapping = d->inode->i_mapping;
    return 0;
}

static const struct file_operations cxlssd_fops = {
    .owner = THIS_MODULE,
    .open = cxlssd_open,
    .mmap = cxlssd_vm_mmap,
    .llseek = noop_llseek,
};

/* sysfs: what MIO reads of a devdax device (size, align). */
static ssize_t size_show(struct device *dev, struct device_attribute *a,
                         char *buf)
{
    struct cxlssd_dev *d = dev_get_drvdata(dev);

    return sysfs_emit(buf, "%llu\n", (unsigned long long)d->size);
}
static DEVICE_ATTR_RO(size);

static ssize_t align_show(struct device *dev, struct device_attribute *a,
                          char *buf)
{
    return sysfs_emit(buf, "%lu\n", PAGE_SIZE);
}
static DEVICE_ATTR_RO(align);

static struct attribute *cxlssd_attrs[] = {
    &dev_attr_size.attr,
    &dev_attr_align.attr,
    NULL,
};
ATTRIBUTE_GROUPS(cxlssd);

/* ---- load / unload ---- */

static void cxlssd_dev_free(struct cxlssd_dev *d)
{
    cxlssd_miss_service_free(d->svc);
    cxlssd_model_free(d->model);
    cxlssd_record_ring_free(d->ring);
    cxlssd_mm_untrack_all(d);
    bitmap_free(d->fresh);
    if (d->inode) {
        iput(d->inode);
    }
    cxlssd_config_free_strings(&d->cfg);
    vfree(d->backing);
    kfree(d);
}

static int cxlssd_dev_create(unsigned int idx, struct cxlssd_dev **out)
{
    struct cxlssd_miss_service_config sc;
    struct cxlssd_dev *d;
    char err[256];
    int r;

    d = kzalloc(sizeof(*d), GFP_KERNEL);
    if (!d) {
        return -ENOMEM;
    }
    r = parse_params(d, idx);
    if (r) {
        goto fail;
    }
    r = -ENOMEM;
    d->backing = vmalloc_user(d->size);     /* zeroed */
    if (!d->backing) {
        pr_err("cxlssd%u: cannot allocate size=%llu of backing memory\n",
               idx, (unsigned long long)d->size);
        goto fail;
    }
    if (d->young_scan_ms) {
        d->fresh = bitmap_zalloc(d->pages, GFP_KERNEL);
        if (!d->fresh) {
            goto fail;
        }
    }
    d->model = cxlssd_model_new(&d->cfg, err, sizeof(err));
    if (!d->model) {
        pr_err("%s\n", err);
        r = -EINVAL;
        goto fail;
    }
    d->ring = cxlssd_record_ring_new(d->cfg.record_ring);
    if (!d->ring) {
        goto fail;
    }
    memset(&sc, 0, sizeof(sc));
    cxlssd_vm_substrate(d, &sc.substrate);
    sc.ring = d->ring;
    sc.stop = &d->stop;
    sc.late_wait_ns = d->cfg.late_wait_ns;
    d->svc = cxlssd_miss_service_new(d->model, &sc, err, sizeof(err));
    if (!d->svc) {
        pr_err("%s\n", err);
        goto fail;
    }
    mutex_init(&d->inode_lock);
    spin_lock_init(&d->mms_lock);
    spin_lock_init(&d->faulters_lock);
    *out = d;
    return 0;
fail:
    cxlssd_dev_free(d);
    return r;
}

/* Instance idx: its worker, character device and debugfs files. */
static int cxlssd_instance_add(unsigned int idx)
{
    struct cxlssd_dev *d;
    int r;

    r = cxlssd_dev_create(idx, &d);
    if (r) {
        return r;
    }
    /* the worker first: a fault may come as soon as the node exists */
    r = cxlssd_evictor_start(d);
    if (r) {
        goto fail_dev;
    }
    cdev_init(&d->cdev, &cxlssd_fops);
    d->cdev.owner = THIS_MODULE;
    d->devt = MKDEV(MAJOR(cxlssd_devt), MINOR(cxlssd_devt) + idx);
    r = cdev_add(&d->cdev, d->devt, 1);
    if (r) {
        goto fail_evictor;
    }
    d->device = device_create(cxlssd_class, NULL, d->devt, d, "cxlssd%u",
                              idx);
    if (IS_ERR(d->device)) {
        r = PTR_ERR(d->device);
        goto fail_cdev;
    }
    cxlssd_debugfs_init(d);
    cxlssd_devs[idx] = d;
    pr_info("cxlssd: /dev/cxlssd%u: %llu bytes, %llu cache frames, "
            "policy %s, prefetch %u, wait_mode %s, young_scan_ms %u\n",
            idx, (unsigned long long)d->size,
            (unsigned long long)cxlssd_model_frames(d->model),
            cxlssd_policy_name(d->cfg.policy), d->cfg.prefetch, wait_mode,
            d->young_scan_ms);
    return 0;
fail_cdev:
    cdev_del(&d->cdev);
fail_evictor:
    cxlssd_evictor_stop(d);
fail_dev:
    cxlssd_dev_free(d);
    return r;
}

/* Only when no file is open (the cdev holds the module): no mapping
 * exists and no fault is in flight. */
static void cxlssd_instance_remove(struct cxlssd_dev *d)
{
    atomic_store(&d->stop, true);
    cxlssd_debugfs_exit(d);
    cxlssd_evictor_stop(d);
    cxlssd_complete_all_prefetches(d->svc);
    device_destroy(cxlssd_class, d->devt);
    cdev_del(&d->cdev);
    cxlssd_dev_free(d);
}

static void cxlssd_remove_all(void)
{
    for (int i = CXLSSD_MAX_INSTANCES - 1; i >= 0; i--) {
        if (cxlssd_devs[i]) {
            cxlssd_instance_remove(cxlssd_devs[i]);
            cxlssd_devs[i] = NULL;
        }
    }
    cxlssd_debugfs_root_exit();
    class_destroy(cxlssd_class);
    unregister_chrdev_region(cxlssd_devt, CXLSSD_MAX_INSTANCES);
}

static int __init cxlssd_init(void)
{
    int r;

    if (instances < 1 || instances > CXLSSD_MAX_INSTANCES) {
        pr_err("cxlssd: instances=%u: must be in 1..%d\n", instances,
               CXLSSD_MAX_INSTANCES);
        return -EINVAL;
    }
    if ((unsigned int)noverrides > instances) {
        pr_err("cxlssd: overrides: %d entries for instances=%u\n",
               noverrides, instances);
        return -EINVAL;
    }
    r = alloc_chrdev_region(&cxlssd_devt, 0, CXLSSD_MAX_INSTANCES, "cxlssd");
    if (r) {
        return r;
    }
    cxlssd_class = class_create("cxlssd");
    if (IS_ERR(cxlssd_class)) {
        unregister_chrdev_region(cxlssd_devt, CXLSSD_MAX_INSTANCES);
        return PTR_ERR(cxlssd_class);
    }
    cxlssd_class->dev_groups = cxlssd_groups;
    cxlssd_debugfs_root_init();
    for (unsigned int i = 0; i < instances; i++) {
        r = cxlssd_instance_add(i);
        if (r) {
            cxlssd_remove_all();
            return r;
        }
    }
    return 0;
}

static void __exit cxlssd_exit(void)
{
    cxlssd_remove_all();
}

module_init(cxlssd_init);
module_exit(cxlssd_exit);
