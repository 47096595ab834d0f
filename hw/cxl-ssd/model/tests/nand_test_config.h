/*
 * The NAND and FTL tests' configuration: the defaults filled in by hand,
 * independent of config.c (whose own defaults test_ftl checks against
 * these timings): 8 channels x 16 LUNs, 256 pages per block, tR 3000,
 * tPROG 100000, tBERS 1000000, transfer 3200 ns, 7% over-provisioning,
 * GC from 2 up to 4 free blocks.  Header-only.
 */
#ifndef CXLSSD_NAND_TEST_CONFIG_H
#define CXLSSD_NAND_TEST_CONFIG_H

#include "config.h"

static inline void nand_test_config(struct cxlssd_config *c,
                                    uint64_t device_size)
{
    *c = (struct cxlssd_config) {
        .device_size = device_size, .page_size = 4096,
        .channels = 8, .luns_per_channel = 16, .pages_per_block = 256,
        .t_read_ns = 3000, .t_prog_ns = 100000, .t_erase_ns = 1000000,
        .t_xfer_ns = 3200,
        .op_pct = 7, .gc_low_blocks = 2, .gc_high_blocks = 4,
        .record_ring = 65536,
    };
}

#endif
