/*
 * Host memory the model's metadata occupies (media.h,
 * cxlssd_media_metadata_bytes): the fixed tables by size, the lazy ones
 * (page states, FTL maps, the media store's bitmaps) by the pages this
 * process really has for them.
 */
#include "media_int.h"

#include <fcntl.h>
#include <unistd.h>

#include "ftl.h"
#include "model.h"

/*
 * Bytes of [p, p + len) this process has its own pages for (whole host
 * pages): /proc/self/pagemap's "present" and "exclusively mapped" bits.
 * Not mincore(): a read of untouched calloc'd memory maps the shared zero
 * page, which mincore() counts but costs no memory.
 */
static uint64_t resident_bytes(const void *p, uint64_t len)
{
    long hps = sysconf(_SC_PAGESIZE);
    if (!p || !len || hps <= 0) {
        return 0;
    }
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return len;     /* cannot tell: count it all */
    }
    uint64_t first = (uintptr_t)p / (uint64_t)hps;
    uint64_t last = ((uintptr_t)p + len - 1) / (uint64_t)hps;
    uint64_t res = 0, ent[512];
    for (uint64_t v = first; v <= last;) {
        uint64_t n = last - v + 1 < 512 ? last - v + 1 : 512;
        ssize_t r = pread(fd, ent, n * 8, (off_t)(v * 8));
        if (r <= 0) {
            res = len / (uint64_t)hps + 1;
            break;
        }
        n = (uint64_t)r / 8;
        for (uint64_t k = 0; k < n; k++) {
            res += (ent[k] >> 63 & 1) && (ent[k] >> 56 & 1);
        }
        v += n;
    }
    close(fd);
    res *= (uint64_t)hps;
    return res < len ? res : len;
}

uint64_t cxlssd_media_metadata_bytes(struct cxlssd_model *model,
                                     const struct cxlssd_media *md)
{
    const void *lazy[2];
    uint64_t lazy_len[2];
    uint32_t nlazy = cxlssd_model_lazy_arrays(model, lazy, lazy_len);
    /* the cache engine's tables: the fixed ones (frames, sets, the LOADING
     * table's hot part) by size, the lazy ones by what is resident */
    uint64_t b = cxlssd_model_cache_metadata_bytes(model);
    for (uint32_t i = 0; i < nlazy; i++) {
        b -= lazy_len[i];
        b += resident_bytes(lazy[i], lazy_len[i]);
    }
    struct ftl_region rg[FTL_REGIONS];
    struct ftl *f = cxlssd_model_ftl(model);
    ftl_state_regions(f, rg);
    for (int i = 0; i < FTL_REGIONS; i++) {
        b += i < 2 ? rg[i].len : resident_bytes(rg[i].ptr, rg[i].len);
    }
    if (md) {
        b += sizeof(*md);
        b += resident_bytes((const void *)md->written, md->words * 8);
        b += resident_bytes((const void *)md->stuck, md->words * 8);
        b += resident_bytes((const void *)md->touched, md->words * 8);
        b += resident_bytes((const void *)md->drops, md->words * 16);
    }
    return b;
}
