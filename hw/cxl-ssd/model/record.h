/*
 * Per-miss records: one row per trapped miss with a CLOCK_MONOTONIC ns
 * timestamp for each stage.  Producers (miss handlers) push into a
 * lock-free multi-producer ring and never block: when the ring is full the
 * record is counted as dropped.  A single consumer drains rows to CSV.
 * A timestamp of 0 means "stage not taken" (e.g. no BQL in bql=off mode).
 */
#ifndef CXLSSD_MODEL_RECORD_H
#define CXLSSD_MODEL_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum cxlssd_record_flags {
    CXLSSD_REC_WRITE = 1u << 0,         /* write access */
    CXLSSD_REC_DIRTY_EVICT = 1u << 1,   /* a victim needed writeback */
    CXLSSD_REC_PREFETCH_ISSUED = 1u << 2, /* this miss issued prefetches */
    CXLSSD_REC_PREFETCH_HIT = 1u << 3,  /* page was prefetched (late hit) */
    CXLSSD_REC_WAITED_LOADING = 1u << 4, /* waited on another fill */
    CXLSSD_REC_COMPENSATED = 1u << 5,   /* NAND wait shortened by delivery */
    CXLSSD_REC_LATE_WAIT = 1u << 6,     /* wait ended > late_wait_ns after
                                         * t_deadline_ns */
};

struct cxlssd_record {
    uint64_t seq;               /* assigned by the ring */
    uint64_t page;
    int32_t tid;                /* faulting thread id (host) */
    int32_t vcpu;               /* vCPU index, -1 if not a vCPU */
    uint32_t flags;
    uint32_t nvictims;
    uint64_t victim_page;       /* first victim, UINT64_MAX if none */
    /* Stage timestamps, CLOCK_MONOTONIC ns (0 = not taken) */
    uint64_t t_fault_ns;        /* fault read by handler / MMIO entry */
    uint64_t t_bql_req_ns;
    uint64_t t_bql_acq_ns;
    uint64_t t_decision_start_ns;
    uint64_t t_decision_end_ns;
    uint64_t t_unmapped_ns;     /* victims unmapped */
    uint64_t t_deadline_ns;     /* modeled NAND completion (after compensation) */
    uint64_t t_deadline_model_ns; /* modeled NAND completion as computed */
    uint64_t t_wait_end_ns;
    uint64_t t_mapped_ns;       /* UFFDIO_CONTINUE returned / access done;
                                 * before t_wait_end for a miss mapped
                                 * inside its wait (map_in_wait: tlb) */
    uint64_t t_bql_rel_ns;
    /* the kernel event that raised the fault (page fault or KVM exit), from
     * the trap's host fault clock; 0 = not measured */
    uint64_t t_host_fault_ns;
};

struct cxlssd_record_ring;

/* @capacity is rounded up to a power of two. */
struct cxlssd_record_ring *cxlssd_record_ring_new(uint32_t capacity);
void cxlssd_record_ring_free(struct cxlssd_record_ring *r);

/* Never blocks.  Returns false (and counts a drop) if the ring is full. */
bool cxlssd_record_push(struct cxlssd_record_ring *r,
                        const struct cxlssd_record *rec);

/* Consumer side: writes every complete record to @out as CSV rows (no
 * header); returns the number written.  One consumer at a time. */
uint64_t cxlssd_record_drain(struct cxlssd_record_ring *r, FILE *out,
                             const char *mode, const char *accel);

/* The CSV header matching cxlssd_record_drain()'s rows. */
void cxlssd_record_write_header(FILE *out);

uint64_t cxlssd_record_written(const struct cxlssd_record_ring *r);
uint64_t cxlssd_record_dropped(const struct cxlssd_record_ring *r);

#endif
