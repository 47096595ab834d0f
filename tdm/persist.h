/*
 * Making stores to a MAP_SYNC mapping durable: write back the cache lines
 * they touched (clwb, else clflushopt, else clflush; CPUID says which the
 * CPU has), then sfence.  On a machine without them (not x86) only
 * TDM_FLUSH_NONE exists and fsync always calls the kernel.
 */
#ifndef TDM_PERSIST_H
#define TDM_PERSIST_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

enum tdm_flush_kind {
    TDM_FLUSH_NONE, TDM_FLUSH_CLFLUSH, TDM_FLUSH_CLFLUSHOPT, TDM_FLUSH_CLWB,
};

/* the instruction this process uses (TDM_FLUSH, else the best there is) */
extern enum tdm_flush_kind tdm_flush_in_use;

/* what this CPU has */
bool tdm_flush_supported(enum tdm_flush_kind kind);

/*
 * The instruction for @req: auto = the best the CPU has.  Returns -1 where
 * @req names one the CPU lacks.
 */
int tdm_flush_choose(enum tdm_flush_req req, enum tdm_flush_kind *kind);

const char *tdm_flush_name(enum tdm_flush_kind kind);

/* write back every line of [p, p + n) with @kind, then sfence */
void tdm_flush_range(enum tdm_flush_kind kind, const void *p, size_t n);

#endif
