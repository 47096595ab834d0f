/*
 * NAND timing model: per-LUN and per-channel busy-until timelines.
 * A read occupies the LUN for tR, then the channel for the transfer; a
 * program occupies the channel for the transfer, then the LUN for tPROG;
 * an erase occupies the LUN for tBERS.  Not thread-safe: the FTL serialises.
 */
#ifndef CXLSSD_MODEL_NAND_H
#define CXLSSD_MODEL_NAND_H

#include <stdint.h>
#include "config.h"

/* Physical page address, decoded by nand_ppa_*(). */
typedef uint32_t cxlssd_ppa;

struct nand;

struct nand *nand_new(const struct cxlssd_config *cfg, uint32_t blocks_per_lun);
void nand_free(struct nand *n);

uint32_t nand_luns(const struct nand *n);          /* channels * luns/channel */
uint32_t nand_blocks_per_lun(const struct nand *n);
uint32_t nand_pages_per_block(const struct nand *n);
uint32_t nand_channel_of_lun(const struct nand *n, uint32_t lun);

/* Page addressing: lun-major, then block, then page within the block. */
cxlssd_ppa nand_ppa(const struct nand *n, uint32_t lun, uint32_t block,
                    uint32_t page);
uint32_t nand_ppa_lun(const struct nand *n, cxlssd_ppa ppa);
uint32_t nand_ppa_block(const struct nand *n, cxlssd_ppa ppa);
uint32_t nand_ppa_page(const struct nand *n, cxlssd_ppa ppa);

/* Each returns the absolute completion time (ns) of an operation issued at
 * @now_ns, and advances the timelines it occupies. */
uint64_t nand_read(struct nand *n, cxlssd_ppa ppa, uint64_t now_ns);
uint64_t nand_program(struct nand *n, cxlssd_ppa ppa, uint64_t now_ns);
uint64_t nand_erase(struct nand *n, uint32_t lun, uint32_t block,
                    uint64_t now_ns);

/* Accumulated busy time of channel @ch, ns. */
uint64_t nand_channel_busy_ns(const struct nand *n, uint32_t ch);
/* Forget all timelines and busy counters (device reset). */
void nand_reset(struct nand *n);

#endif
