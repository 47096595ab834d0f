/*
 * The model's floating-point results (write amplification, metadata bytes
 * per page), kept apart so that the kernel-module build, which may not use
 * floating point, leaves this file out and uses
 * cxlssd_model_get_counters() instead of cxlssd_model_get_stats().
 */
#include "ftl.h"
#include "model_int.h"

double ftl_waf(struct ftl *f)
{
    struct ftl_stats s;

    ftl_get_stats(f, &s);
    return s.host_writes == 0 ? 1.0 :
        (double)s.nand_writes / (double)s.host_writes;
}

void cxlssd_model_get_stats(struct cxlssd_model *m, struct cxlssd_stats *out)
{
    cxlssd_model_get_counters(m, out);
    out->waf = ftl_waf(m->ftl);
}

double cxlssd_model_metadata_bytes_per_page(const struct cxlssd_model *m)
{
    uint64_t b = cxlssd_model_cache_metadata_bytes(m) +
                 ftl_metadata_bytes(m->ftl);
    return (double)b / (double)m->pages;
}
