/*
 * crash-writer's pmemobj stream (crash_pmemobj.c): records in a PMDK
 * libpmemobj pool at @path (created with @size bytes if missing), one
 * transaction each; prints the crash_verify / crash_ack / crash_done lines
 * of crash-writer.c.  @rounds_left: pace the appends (crash_pace.h) over
 * the table's free entries; 0: as fast as it can.  Returns 0, or 1 if acknowledged records were lost or
 * torn.
 */
#ifndef CXLSSD_CRASH_PMEMOBJ_H
#define CXLSSD_CRASH_PMEMOBJ_H

#include <stdbool.h>
#include <stdint.h>

int crash_pmemobj_run(const char *stream, const char *path, uint64_t size,
                      uint64_t acked, double seconds, double ack_s,
                      unsigned rounds_left, bool verify_only);

#endif
