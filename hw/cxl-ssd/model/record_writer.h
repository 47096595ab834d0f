/*
 * A record ring plus the low-priority thread that drains it to a CSV file
 * every ~100 ms (header written once; the rest drained when freed).  Used
 * by every miss path (uffd trap, mmio mode, host-native tool) so they all
 * write the same schema.
 */
#ifndef CXLSSD_MODEL_RECORD_WRITER_H
#define CXLSSD_MODEL_RECORD_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include "record.h"

struct cxlssd_record_writer;

/* Returns NULL with a message in @err (naming "record" or "record-ring"). */
struct cxlssd_record_writer *
cxlssd_record_writer_new(const char *path, uint32_t ring_capacity,
                         const char *mode, const char *accel,
                         char *err, size_t errlen);
struct cxlssd_record_ring *
cxlssd_record_writer_ring(struct cxlssd_record_writer *w);
/*
 * Drains the ring into the file now, on the caller's thread, so counters
 * read right after (records_written) cover every record pushed before.
 */
void cxlssd_record_writer_sync(struct cxlssd_record_writer *w);
/* Stops the thread, drains what is left, closes the file. */
void cxlssd_record_writer_free(struct cxlssd_record_writer *w);

#endif
