/*
 * The validation suite: each runner drives the model library directly,
 * computes its references and appends its cases to a list (vcase.h).
 * VALIDATE_SHORT is the version `make test` runs (seconds), VALIDATE_FULL
 * the one `make validate` prints (minutes).
 */
#ifndef CXLSSD_VALIDATE_H
#define CXLSSD_VALIDATE_H

#include "vcase.h"

enum vlevel {
    VALIDATE_SHORT,
    VALIDATE_FULL,
};

/* Steady-state write amplification (uniform, hot/cold) and sustained
 * random-write throughput (gc_cases.c). */
void validate_gc(struct vlist *l, enum vlevel level);
/* NAND read latency and throughput against queue depth (nand_cases.c). */
void validate_nand(struct vlist *l, enum vlevel level);
/* Miss ratios of the cache policies on Zipf traces (cache_cases.c). */
void validate_cache(struct vlist *l, enum vlevel level);

/* Seconds on CLOCK_MONOTONIC, for the progress lines on stderr. */
double validate_now_s(void);

#endif
