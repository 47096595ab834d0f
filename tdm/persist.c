/* Cache-line write-back for durable stores (persist.h). */
#include <stdint.h>

#include "persist.h"

#if defined(__x86_64__)
#include <cpuid.h>

#define CACHE_LINE 64u

bool tdm_flush_supported(enum tdm_flush_kind kind)
{
    unsigned a, b, c, d;
    switch (kind) {
    case TDM_FLUSH_NONE:
        return true;
    case TDM_FLUSH_CLFLUSH:
        return __get_cpuid(1, &a, &b, &c, &d) && (d & (1u << 19));
    case TDM_FLUSH_CLFLUSHOPT:
        return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 23));
    case TDM_FLUSH_CLWB:
        return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 24));
    }
    return false;
}

void tdm_flush_range(enum tdm_flush_kind kind, const void *p, size_t n)
{
    if (kind == TDM_FLUSH_NONE || n == 0) {
        return;
    }
    uintptr_t line = (uintptr_t)p & ~(uintptr_t)(CACHE_LINE - 1);
    uintptr_t end = (uintptr_t)p + n;
    switch (kind) {
    case TDM_FLUSH_CLWB:
        for (; line < end; line += CACHE_LINE) {
            __asm__ volatile("clwb %0" : "+m"(*(volatile char *)line));
        }
        break;
    case TDM_FLUSH_CLFLUSHOPT:
        for (; line < end; line += CACHE_LINE) {
            __asm__ volatile("clflushopt %0" : "+m"(*(volatile char *)line));
        }
        break;
    default:
        for (; line < end; line += CACHE_LINE) {
            __asm__ volatile("clflush %0" : "+m"(*(volatile char *)line));
        }
        break;
    }
    __asm__ volatile("sfence" ::: "memory");
}

#else

bool tdm_flush_supported(enum tdm_flush_kind kind)
{
    return kind == TDM_FLUSH_NONE;
}

void tdm_flush_range(enum tdm_flush_kind kind, const void *p, size_t n)
{
    (void)kind;
    (void)p;
    (void)n;
}

#endif

int tdm_flush_choose(enum tdm_flush_req req, enum tdm_flush_kind *kind)
{
    static const enum tdm_flush_kind named[] = {
        [TDM_FLUSH_REQ_CLWB] = TDM_FLUSH_CLWB,
        [TDM_FLUSH_REQ_CLFLUSHOPT] = TDM_FLUSH_CLFLUSHOPT,
        [TDM_FLUSH_REQ_CLFLUSH] = TDM_FLUSH_CLFLUSH,
        [TDM_FLUSH_REQ_NONE] = TDM_FLUSH_NONE,
    };
    if (req != TDM_FLUSH_REQ_AUTO) {
        *kind = named[req];
        return tdm_flush_supported(*kind) ? 0 : -1;
    }
    static const enum tdm_flush_kind best_first[] = {
        TDM_FLUSH_CLWB, TDM_FLUSH_CLFLUSHOPT, TDM_FLUSH_CLFLUSH,
    };
    for (size_t i = 0; i < sizeof(best_first) / sizeof(best_first[0]); i++) {
        if (tdm_flush_supported(best_first[i])) {
            *kind = best_first[i];
            return 0;
        }
    }
    *kind = TDM_FLUSH_NONE;
    return 0;
}

const char *tdm_flush_name(enum tdm_flush_kind kind)
{
    switch (kind) {
    case TDM_FLUSH_CLWB:
        return "clwb";
    case TDM_FLUSH_CLFLUSHOPT:
        return "clflushopt";
    case TDM_FLUSH_CLFLUSH:
        return "clflush";
    case TDM_FLUSH_NONE:
        break;
    }
    return "none";
}
