/*
 * The crash test's record log (crash_record.c): what the guest's verifier
 * counts as whole, torn, lost and foreign, on logs damaged the ways a
 * crash can damage them.
 */
#include <stdlib.h>
#include <string.h>

#include "crash_record.h"
#include "tap.h"

#define LOG_BYTES (1u << 20)

/* A log of @n records of @stream in @buf; returns its length. */
static uint64_t build_log(uint8_t *buf, uint32_t stream, uint64_t n,
                          uint64_t *offs)
{
    uint64_t off = 0;
    for (uint64_t s = 0; s < n; s++) {
        offs[s] = off;
        crash_rec_build(buf + off, stream, s);
        off += crash_rec_size(crash_rec_len(stream, s));
    }
    return off;
}

int main(void)
{
    uint8_t *buf = calloc(1, LOG_BYTES);
    uint64_t offs[400];
    uint32_t a = crash_stream_id("a"), b = crash_stream_id("b");
    struct crash_scan sc;

    tap_ok(a != b && a && b, "stream ids differ and are nonzero");
    tap_eq(crash_crc32c(0, "123456789", 9), 0xe3069283u,
           "crc32c check value of \"123456789\"");
    uint32_t lmin = UINT32_MAX, lmax = 0;
    for (uint64_t s = 0; s < 10000; s++) {
        uint32_t l = crash_rec_len(a, s);
        lmin = l < lmin ? l : lmin;
        lmax = l > lmax ? l : lmax;
    }
    tap_ok(lmin >= 8 && lmax <= CRASH_REC_MAX_PAYLOAD && lmax > 2048,
           "payload lengths vary over 8..%u (%u..%u)",
           CRASH_REC_MAX_PAYLOAD, lmin, lmax);

    uint64_t len = build_log(buf, a, 300, offs);
    tap_ok(len < LOG_BYTES, "300 records fit the test log (%llu bytes)",
           (unsigned long long)len);
    crash_scan(buf, LOG_BYTES, a, UINT64_MAX, &sc);
    tap_eq(sc.valid, 300, "intact log: every record valid");
    tap_eq(sc.whole, 300, "intact log: every record whole");
    tap_eq(sc.end_off, len, "intact log: end just past the last record");
    tap_eq(sc.torn + sc.foreign, 0, "intact log: nothing torn or foreign");
    crash_scan(buf, LOG_BYTES, a, 120, &sc);
    tap_eq(sc.whole, 120, "a limit stops the scan at that many records");

    /* a crash mid-record: its second half still holds older bytes */
    uint64_t mid = offs[200] + 48;
    memset(buf + mid, 0x5a, 16);
    crash_scan(buf, LOG_BYTES, a, UINT64_MAX, &sc);
    tap_eq(sc.valid, 200, "torn record 200: the valid prefix ends before it");
    tap_eq(sc.torn, 1, "torn record 200: counted torn");
    tap_eq(sc.torn_seq, 200, "torn record 200: its sequence number");
    tap_eq(sc.whole, 299, "torn record 200: the 99 after it still whole");
    tap_eq(sc.end_off, offs[200], "torn record 200: writing resumes there");
    crash_rec_build(buf + offs[200], a, 200);

    /* the tail of an unacknowledged append: a header and zeros */
    memset(buf + offs[250] + sizeof(struct crash_rec_hdr), 0,
           len - offs[250] - sizeof(struct crash_rec_hdr));
    crash_scan(buf, LOG_BYTES, a, 250, &sc);
    tap_eq(sc.whole, 250, "acknowledged prefix of 250 whole");
    tap_eq(sc.torn, 0, "nothing torn among the acknowledged 250");
    crash_scan(buf, LOG_BYTES, a, UINT64_MAX, &sc);
    tap_eq(sc.torn, 1, "the zeroed tail record is torn (after the acks)");
    tap_eq(sc.valid, 250, "the valid prefix ends at the zeroed tail");

    /* another page's data where a record should be */
    build_log(buf, a, 300, offs);
    crash_rec_build(buf + offs[100], b, 100);
    crash_scan(buf, LOG_BYTES, a, UINT64_MAX, &sc);
    tap_eq(sc.foreign, 1, "another stream's record: foreign");
    tap_eq(sc.valid, 100, "another stream's record ends the valid prefix");
    build_log(buf, a, 300, offs);
    memmove(buf + offs[150], buf + offs[151],
            crash_rec_size(crash_rec_len(a, 151)));
    crash_scan(buf, LOG_BYTES, a, UINT64_MAX, &sc);
    tap_eq(sc.foreign, 1, "record 151 where 150 belongs: foreign");
    tap_eq(sc.valid, 150, "out-of-sequence record ends the valid prefix");

    /* a payload that checksums but is not this record's */
    build_log(buf, a, 10, offs);
    buf[offs[5] + sizeof(struct crash_rec_hdr)] ^= 1;
    crash_scan(buf, LOG_BYTES, a, UINT64_MAX, &sc);
    tap_eq(sc.torn, 1, "one flipped payload bit: torn");

    /* an empty log and one cut short by the size given */
    memset(buf, 0, LOG_BYTES);
    crash_scan(buf, LOG_BYTES, a, UINT64_MAX, &sc);
    tap_eq(sc.valid + sc.whole + sc.torn + sc.foreign, 0, "zeros: no records");
    len = build_log(buf, a, 10, offs);
    crash_scan(buf, len - 1, a, UINT64_MAX, &sc);
    tap_eq(sc.valid, 9, "a log cut one byte short: its last record absent");
    crash_scan(NULL, 0, a, UINT64_MAX, &sc);
    tap_eq(sc.valid, 0, "an empty file: no records");
    free(buf);
    return tap_done();
}
