/*
 * debugfs files of the device, /sys/kernel/debug/cxlssd/cxlssdN/:
 *   stats    one "name=value" line per row of stats.def, the names of the
 *            QEMU device's `qom-get stats` (waf in fixed point, 3 decimals:
 *            no floating point in the kernel; channel_busy_ns a comma list;
 *            delivery rows with the module's meaning: faults = fault
 *            handler calls, wp_faults = pfn_mkwrite calls, madvise_calls =
 *            unmap_mapping_range calls, wakes and sigbus_faults 0), then
 *            the module's own kmod_* counters (faults on pages resident
 *            without a PTE, map errors, accessed-bit scans and hits,
 *            batched unmaps of background eviction)
 *   records  the per-miss CSV (model/record.c's schema and writer):
 *            reading drains the ring; the header comes first once
 *   config   the effective properties, "name=value" per line
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "cxlssd_kmod.h"

/* The delivery/service rows of stats.def, as the module counts them. */
struct cxlssd_kmod_stats {
#define CXLSSD_STAT(K, S, F, DESC) CXLSSD_KSTAT_FIELD_##S(F)
#define CXLSSD_KSTAT_FIELD_MODEL(F)
#define CXLSSD_KSTAT_FIELD_TRAP(F) uint64_t F;
#define CXLSSD_KSTAT_FIELD_SERVICE(F) uint64_t F;
#include "stats.def"
#undef CXLSSD_STAT
};

static void kmod_stats(struct cxlssd_dev *d, struct cxlssd_kmod_stats *k)
{
    struct cxlssd_miss_service_stats ss;

    cxlssd_miss_service_get_stats(d->svc, &ss);
    memset(k, 0, sizeof(*k));
    k->faults = atomic64_read(&d->faults);
    k->wp_faults = atomic64_read(&d->wp_faults);
    k->duplicate_faults = ss.duplicate_faults;
    k->remaps = ss.remaps;
    k->unclocked_misses = ss.unclocked_misses;
    k->late_waits = ss.late_waits;
    k->madvise_calls = atomic64_read(&d->unmap_calls);
    k->pages_unmapped = atomic64_read(&d->pages_unmapped);
    k->bql_wait_ns = ss.serialize_wait_ns;
    k->records_written = cxlssd_record_written(d->ring);
    k->records_dropped = cxlssd_record_dropped(d->ring);
}

static void show_waf(struct seq_file *s, const struct cxlssd_stats *st)
{
    uint64_t milli = st->host_writes == 0 ? 1000 :
        div64_u64(st->nand_writes * 1000, st->host_writes);

    seq_printf(s, "waf=%llu.%03llu\n", div_u64(milli, 1000),
               milli % 1000);
}

static int stats_show(struct seq_file *s, void *unused)
{
    struct cxlssd_dev *d = s->private;
    struct cxlssd_stats *st = kzalloc(sizeof(*st), GFP_KERNEL);
    struct cxlssd_kmod_stats k;

    if (!st) {
        return -ENOMEM;
    }
    cxlssd_model_get_counters(d->model, st);
    kmod_stats(d, &k);
#define CXLSSD_STAT(K, S, F, DESC) CXLSSD_KSTAT_SHOW_##K##_##S(F);
#define CXLSSD_KSTAT_SHOW_U64_MODEL(F) \
    seq_printf(s, #F "=%llu\n", (unsigned long long)st->F)
#define CXLSSD_KSTAT_SHOW_U64_TRAP(F) \
    seq_printf(s, #F "=%llu\n", (unsigned long long)k.F)
#define CXLSSD_KSTAT_SHOW_U64_SERVICE(F) CXLSSD_KSTAT_SHOW_U64_TRAP(F)
#define CXLSSD_KSTAT_SHOW_F64_MODEL(F) show_waf(s, st)
#define CXLSSD_KSTAT_SHOW_CHANNELS_MODEL(F)                               \
    do {                                                                  \
        seq_puts(s, #F "=");                                              \
        for (uint32_t i = 0; i < st->channels; i++) {                     \
            seq_printf(s, "%s%llu", i ? "," : "",                         \
                       (unsigned long long)st->F[i]);                     \
        }                                                                 \
        seq_putc(s, '\n');                                                \
    } while (0)
#include "stats.def"
#undef CXLSSD_STAT
    /* the module's own counters */
    seq_printf(s, "kmod_resident_faults=%lld\nkmod_map_errors=%lld\n"
               "kmod_young_scans=%lld\nkmod_young_hits=%lld\n"
               "kmod_zap_batches=%lld\n",
               atomic64_read(&d->resident_faults),
               atomic64_read(&d->map_errors),
               atomic64_read(&d->young_scans),
               atomic64_read(&d->young_hits),
               atomic64_read(&d->zap_batches));
    kfree(st);
    return 0;
}
DEFINE_SHOW_ATTRIBUTE(stats);

static int config_show(struct seq_file *s, void *unused)
{
    struct cxlssd_dev *d = s->private;
    char *buf = kvmalloc(8192, GFP_KERNEL);

    if (!buf) {
        return -ENOMEM;
    }
    cxlssd_config_format(&d->cfg, buf, 8192, '\n');
    seq_printf(s, "%s\n", buf);
    kvfree(buf);
    return 0;
}
DEFINE_SHOW_ATTRIBUTE(config);

static ssize_t records_read(struct file *f, char __user *ubuf, size_t len,
                            loff_t *ppos)
{
    struct cxlssd_dev *d = f->private_data;
    FILE *b = &d->records_buf;
    ssize_t ret;
    size_t n;

    mutex_lock(&d->records_lock);
    if (!d->records_header_done) {
        cxlssd_record_write_header(b);
        d->records_header_done = true;
    }
    if (d->records_off == b->len) {
        b->len = 0;
        d->records_off = 0;
        cxlssd_record_drain(d->ring, b, "kmod", "native");
    }
    ret = b->failed ? -ENOMEM : 0;
    if (!ret) {
        n = min(len, b->len - d->records_off);
        if (copy_to_user(ubuf, b->buf + d->records_off, n)) {
            ret = -EFAULT;
        } else {
            d->records_off += n;
            *ppos += n;
            ret = n;
        }
    }
    b->failed = false;
    mutex_unlock(&d->records_lock);
    return ret;
}

static const struct file_operations records_fops = {
    .owner = THIS_MODULE,
    .open = simple_open,
    .read = records_read,
    .llseek = noop_llseek,
};

static struct dentry *cxlssd_debugfs_root;

void cxlssd_debugfs_root_init(void)
{
    cxlssd_debugfs_root = debugfs_create_dir("cxlssd", NULL);
}

void cxlssd_debugfs_root_exit(void)
{
    debugfs_remove_recursive(cxlssd_debugfs_root);
    cxlssd_debugfs_root = NULL;
}

void cxlssd_debugfs_init(struct cxlssd_dev *d)
{
    mutex_init(&d->records_lock);
    d->debugfs_dev = debugfs_create_dir(dev_name(d->device),
                                        cxlssd_debugfs_root);
    debugfs_create_file("stats", 0444, d->debugfs_dev, d, &stats_fops);
    debugfs_create_file("config", 0444, d->debugfs_dev, d, &config_fops);
    debugfs_create_file("records", 0400, d->debugfs_dev, d, &records_fops);
}

void cxlssd_debugfs_exit(struct cxlssd_dev *d)
{
    debugfs_remove_recursive(d->debugfs_dev);
    cxlssd_kfile_release(&d->records_buf);
}
