/*
 * What the layer serves through a file's mapping (TDM_POLICY):
 *
 *   all          every read and write within the file
 *   size:BYTES   calls on files of at least BYTES bytes (the size now)
 *   recur        2 MiB regions whose reads recur: a region is served once
 *                BYTES (default 64 KiB) of its reads, counted in 4 KiB
 *                pages, re-read pages already read in the same window of
 *                WINDOW_MS (default 1000) milliseconds; from then on for
 *                as long as the file stays open.  A call is served when
 *                every region it touches is.
 */
#ifndef TDM_POLICY_H
#define TDM_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

#define TDM_REGION_SHIFT 21

/* one file's recur counters; regions past 2 TiB are never served */
struct tdm_regions;

struct tdm_regions *tdm_regions_new(void);
void tdm_regions_free(struct tdm_regions *r);

/*
 * Whether a call on [off, off + len) of a file of @size bytes is served;
 * a read (@read) is counted first.  *@became_hot is set to the number of
 * regions this call made served.
 */
bool tdm_policy_serves(const struct tdm_config *cfg, struct tdm_regions *r,
                       uint64_t size, uint64_t off, uint64_t len, bool read,
                       unsigned *became_hot);

#endif
