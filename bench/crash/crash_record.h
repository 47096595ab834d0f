/*
 * The crash test's record log: sequence-numbered, checksummed records
 * appended one after another from offset 0 of a file or a devdax device.
 *
 *   header (32 B) | payload (len bytes) | pad to 8 B
 *
 * The payload is a function of (stream, seq), so a record that reads
 * back whole is the record that was written, not some other page's data;
 * the CRC covers header and payload, so a torn record (part new, part
 * old or zero) shows.  A scan walks records from offset 0 while their
 * headers are intact and their sequence numbers consecutive.
 */
#ifndef CXLSSD_CRASH_RECORD_H
#define CXLSSD_CRASH_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CRASH_REC_MAGIC 0x52435843u     /* "CXCR" */
#define CRASH_REC_MAX_PAYLOAD 4064u

struct crash_rec_hdr {
    uint32_t magic;
    uint32_t len;           /* payload bytes */
    uint64_t seq;
    uint32_t stream;        /* crash_stream_id() of the stream's name */
    uint32_t crc;           /* crc32c of the header (crc = 0) + payload */
    uint64_t check;         /* crash_rec_check(): a header that is not one */
};

/* What a scan found: records 0..valid-1 whole and in order, then either
 * the end (nothing that parses as a header), a torn record (header whole,
 * CRC wrong) or a foreign one (a header of another stream or sequence). */
struct crash_scan {
    uint64_t valid;         /* consecutive whole records from seq 0 */
    uint64_t whole;         /* whole records, in order or not */
    uint64_t end_off;       /* offset just past the last whole record */
    uint64_t torn;          /* records with a whole header and a bad CRC */
    uint64_t foreign;       /* headers of another stream or sequence */
    uint64_t torn_seq;      /* seq of the first torn record */
};

uint32_t crash_stream_id(const char *name);
uint32_t crash_crc32c(uint32_t crc, const void *buf, size_t len);
/* Payload length of record @seq (deterministic, 8..CRASH_REC_MAX_PAYLOAD). */
uint32_t crash_rec_len(uint32_t stream, uint64_t seq);
/* Bytes the record takes in the log, header and padding included. */
size_t crash_rec_size(uint32_t len);
/* Build record @seq of @stream into @buf (crash_rec_size() bytes). */
void crash_rec_build(void *buf, uint32_t stream, uint64_t seq);
/* Whether @buf holds record @seq of @stream, whole. */
bool crash_rec_whole(const void *buf, uint32_t stream, uint64_t seq);
/* Scan the log in @base[0, @size) of @stream, stopping at @limit
 * records (UINT64_MAX: no limit). */
void crash_scan(const uint8_t *base, uint64_t size, uint32_t stream,
                uint64_t limit, struct crash_scan *out);

#endif
