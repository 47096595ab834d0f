/*
 * The crash test's record format (crash_record.h): build, checksum, scan.
 */
#include "crash_record.h"

#include <string.h>

static uint64_t splitmix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint32_t crash_stream_id(const char *name)
{
    uint32_t h = 2166136261u;     /* FNV-1a */
    for (; *name; name++) {
        h = (h ^ (uint8_t)*name) * 16777619u;
    }
    return h ? h : 1;
}

uint32_t crash_crc32c(uint32_t crc, const void *buf, size_t len)
{
    static uint32_t table[256];
    const uint8_t *p = buf;

    if (!table[1]) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) {
                c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
            }
            table[i] = c;
        }
    }
    crc = ~crc;
    while (len--) {
        crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
    }
    return ~crc;
}

uint32_t crash_rec_len(uint32_t stream, uint64_t seq)
{
    return 8 + (uint32_t)(splitmix(((uint64_t)stream << 32) ^ seq) %
                          (CRASH_REC_MAX_PAYLOAD - 7));
}

size_t crash_rec_size(uint32_t len)
{
    return sizeof(struct crash_rec_hdr) + ((len + 7u) & ~7u);
}

static uint64_t rec_check(uint32_t stream, uint64_t seq, uint32_t len)
{
    return splitmix(seq ^ ((uint64_t)stream << 20) ^ ((uint64_t)len << 48));
}

static void payload(uint8_t *p, uint32_t stream, uint64_t seq, uint32_t len)
{
    uint64_t s = ((uint64_t)stream << 32) ^ (seq * 0x100000001b3ULL);
    for (uint32_t i = 0; i < len; i += 8) {
        uint64_t w = splitmix(s + i);
        memcpy(p + i, &w, len - i < 8 ? len - i : 8);
    }
}

static uint32_t rec_crc(const struct crash_rec_hdr *h, const uint8_t *pl)
{
    struct crash_rec_hdr c = *h;
    c.crc = 0;
    return crash_crc32c(crash_crc32c(0, &c, sizeof(c)), pl, h->len);
}

void crash_rec_build(void *buf, uint32_t stream, uint64_t seq)
{
    struct crash_rec_hdr h = {
        .magic = CRASH_REC_MAGIC,
        .len = crash_rec_len(stream, seq),
        .seq = seq,
        .stream = stream,
    };
    uint8_t *pl = (uint8_t *)buf + sizeof(h);
    size_t size = crash_rec_size(h.len);

    h.check = rec_check(stream, seq, h.len);
    memset(pl, 0, size - sizeof(h));
    payload(pl, stream, seq, h.len);
    h.crc = rec_crc(&h, pl);
    memcpy(buf, &h, sizeof(h));
}

bool crash_rec_whole(const void *buf, uint32_t stream, uint64_t seq)
{
    uint8_t want[CRASH_REC_MAX_PAYLOAD + 8];
    struct crash_rec_hdr h;

    memcpy(&h, buf, sizeof(h));
    if (h.magic != CRASH_REC_MAGIC || h.stream != stream || h.seq != seq ||
        h.len != crash_rec_len(stream, seq) ||
        h.check != rec_check(stream, seq, h.len)) {
        return false;
    }
    payload(want, stream, seq, h.len);
    const uint8_t *pl = (const uint8_t *)buf + sizeof(h);
    return rec_crc(&h, pl) == h.crc && memcmp(pl, want, h.len) == 0;
}

void crash_scan(const uint8_t *base, uint64_t size, uint32_t stream,
                uint64_t limit, struct crash_scan *out)
{
    uint8_t want[CRASH_REC_MAX_PAYLOAD + 8];
    uint64_t off = 0, seq = 0;
    bool in_order = true;

    memset(out, 0, sizeof(*out));
    while (seq < limit && off + sizeof(struct crash_rec_hdr) <= size) {
        struct crash_rec_hdr h;
        memcpy(&h, base + off, sizeof(h));
        if (h.magic != CRASH_REC_MAGIC || h.len > CRASH_REC_MAX_PAYLOAD ||
            h.check != rec_check(h.stream, h.seq, h.len)) {
            break;      /* not a header: the end of the log */
        }
        if (h.stream != stream || h.seq != seq ||
            h.len != crash_rec_len(stream, seq)) {
            out->foreign++;
            break;
        }
        size_t rs = crash_rec_size(h.len);
        if (off + rs > size) {
            break;
        }
        const uint8_t *pl = base + off + sizeof(h);
        payload(want, stream, seq, h.len);
        if (rec_crc(&h, pl) != h.crc || memcmp(pl, want, h.len) != 0) {
            if (!out->torn) {
                out->torn_seq = seq;
            }
            out->torn++;
            in_order = false;
        } else {
            out->whole++;
            if (in_order) {
                out->valid = seq + 1;
                out->end_off = off + rs;
            }
        }
        off += rs;
        seq++;
    }
}
