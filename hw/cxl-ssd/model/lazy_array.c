/*
 * Lazy arrays in userspace (lazy_array.h): their own mapping, so that a
 * large block is never taken from (and zeroed in) malloc's heap, and
 * zeroing is MADV_DONTNEED, not a loop.  A loop that reads every entry
 * first would cost memory too: reading a never-written page of anonymous
 * memory maps the shared zero page on most kernels, but some allocate a
 * page for it (seen on a 6.18 host: a 32 GiB device's state array became
 * 8 MiB resident at every reset).
 */
#include "lazy_array.h"

#include <string.h>
#include <sys/mman.h>

void *lazy_array_new(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void lazy_array_free(void *p, size_t bytes)
{
    if (p) {
        munmap(p, bytes);
    }
}

void lazy_array_zero(void *p, size_t bytes)
{
    if (madvise(p, bytes, MADV_DONTNEED) < 0) {
        memset(p, 0, bytes);
    }
}
