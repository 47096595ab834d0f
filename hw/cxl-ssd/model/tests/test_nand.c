/*
 * NAND timing model tests (TAP).  Defaults: 8 channels x 16 LUNs,
 * tR 3000, tPROG 100000, tBERS 1000000, transfer 3200 ns.
 * LUN index = channel + 8 * way, so LUNs 0, 8, 16 share channel 0.
 * Documented rule (nand.c): a read keeps its LUN busy until its transfer
 * ends; a program transfers (once the LUN is idle) and then programs.
 */
#include <inttypes.h>
#include <stdio.h>

#include "config.h"
#include "nand.h"
#include "nand_test_config.h"
#include "tap.h"

/* Page 0 of block 0 of @lun. */
static cxlssd_ppa P(struct nand *n, uint32_t lun)
{
    return nand_ppa(n, lun, 0, 0);
}

int main(void)
{
    struct cxlssd_config cfg;
    nand_test_config(&cfg, 1ull << 30);

    struct nand *n = nand_new(&cfg, 40);
    tap_ok(n != NULL, "nand_new at defaults");
    if (!n) {
        return 1;
    }
    tap_eq(nand_luns(n), 128, "8 channels x 16 LUNs = 128 LUNs");
    tap_ok(nand_channel_of_lun(n, 0) == 0 && nand_channel_of_lun(n, 1) == 1 &&
           nand_channel_of_lun(n, 8) == 0 && nand_channel_of_lun(n, 127) == 7,
           "LUN index = channel + channels * way");
    cxlssd_ppa a = nand_ppa(n, 77, 39, 255);
    tap_ok(nand_ppa_lun(n, a) == 77 && nand_ppa_block(n, a) == 39 &&
           nand_ppa_page(n, a) == 255, "ppa encode/decode round trip");
    tap_eq(nand_ppa(n, 1, 0, 0), 40 * 256,
           "ppa is LUN-major, then block, page");

    /* tR 0..3000, transfer 3000..6200. */
    tap_eq(nand_read(n, P(n, 0), 0), 6200, "single read = tR + xfer = 6200 ns");
    nand_reset(n);

    /* Same LUN: first 0..3000 tR, 3000..6200 xfer, LUN busy to 6200;
     * second starts 6200, tR to 9200, xfer 9200..12400. */
    tap_eq(nand_read(n, P(n, 0), 0), 6200, "same LUN: first read 6200");
    tap_eq(nand_read(n, nand_ppa(n, 0, 3, 7), 0), 12400,
           "same LUN: second read serialises, 6200 + 6200 = 12400");
    nand_reset(n);

    tap_eq(nand_read(n, P(n, 0), 0), 6200, "channel 0 read 6200");
    tap_eq(nand_read(n, P(n, 1), 0), 6200, "channel 1 read overlaps: 6200");
    nand_reset(n);

    /* LUNs 0 and 8 share channel 0: both tR 0..3000; transfers 3000..6200
     * then 6200..9400. */
    tap_eq(nand_read(n, P(n, 0), 0), 6200, "same channel, LUN 0: 6200");
    tap_eq(nand_read(n, P(n, 8), 0), 9400,
           "same channel, LUN 8: tR overlaps, transfer waits: 9400");
    /* LUN 16 issued at 1000: tR 1000..4000, channel free at 9400. */
    tap_eq(nand_read(n, P(n, 16), 1000), 12600,
           "transfer waits for its channel: 9400 + 3200 = 12600");
    tap_eq(nand_channel_busy_ns(n, 0), 3 * 3200,
           "channel 0 busy = 3 transfers");
    tap_eq(nand_channel_busy_ns(n, 1), 0, "channel 1 idle");
    nand_reset(n);

    tap_eq(nand_program(n, P(n, 0), 0), 103200,
           "program = xfer 3200 + tPROG 100000 = 103200");
    /* LUN 0 busy until 103200: tR 103200..106200, xfer ..109400. */
    tap_eq(nand_read(n, nand_ppa(n, 0, 1, 0), 10), 109400,
           "read after a program on the same LUN waits for it: 109400");
    tap_eq(nand_channel_busy_ns(n, 0), 6400,
           "channel busy: program + read xfer");
    nand_reset(n);

    tap_eq(nand_erase(n, 5, 2, 0), 1000000, "erase = tBERS 1000000");
    nand_reset(n);

    /* Channel gaps: LUN 0 erases until 1e6, so its read transfers at
     * 1003000..1006200; LUN 8 (same channel) read at 0 uses the idle
     * channel at 3000..6200 instead of queueing behind it. */
    nand_erase(n, 0, 0, 0);
    tap_eq(nand_read(n, P(n, 0), 0), 1006200, "read behind an erase: 1006200");
    tap_eq(nand_read(n, P(n, 8), 0), 6200,
           "other LUN on the channel uses the idle gap before it: 6200");
    /* Channel 0 now has 3000..6200; a program on LUN 16 at 7000 takes
     * 7000..10200; a read on LUN 24 at 0 (tR to 3000) cannot fit in
     * 6200..7000 and goes to 10200..13400. */
    nand_program(n, P(n, 16), 7000);
    tap_eq(nand_read(n, P(n, 24), 0), 13400,
           "a too-small gap is skipped: 10200 + 3200 = 13400");

    nand_free(n);

    /* Random mix on 2 channels x 3 LUNs with a slowly advancing clock:
     * no two transfers on a channel overlap, every read transfers after
     * its tR, and every op on a LUN starts after the previous one ended. */
    cfg.channels = 2;
    cfg.luns_per_channel = 3;
    n = nand_new(&cfg, 4);
    enum { NOPS = 3000 };
    static uint64_t xs[NOPS], xe[NOPS];
    static uint32_t xc[NOPS];
    uint32_t nx = 0;
    uint64_t lun_end[6] = {0};
    uint64_t now = 0, busy = 0;
    uint32_t seed = 12345;
    int order_ok = 1, earliest_ok = 1;
    for (int i = 0; i < NOPS; i++) {
        seed = seed * 1103515245u + 12345u;
        uint32_t r = seed >> 8;
        uint32_t lun = r % 6, op = (r / 6) % 20;
        now += (r / 120) % 4000;
        cxlssd_ppa p = nand_ppa(n, lun, r % 4, 0);
        uint64_t prev = lun_end[lun] > now ? lun_end[lun] : now;
        if (op == 0) {
            uint64_t d = nand_erase(n, lun, 0, now);
            order_ok &= d == prev + cfg.t_erase_ns;
            lun_end[lun] = d;
            continue;
        }
        /* Reference: earliest start >= t not overlapping earlier transfers
         * on this channel (brute force). */
        uint64_t t = op < 5 ? prev : prev + cfg.t_read_ns, want = t;
        for (int moved = 1; moved;) {
            moved = 0;
            for (uint32_t j = 0; j < nx; j++) {
                if (xc[j] == lun % 2 && xs[j] < want + cfg.t_xfer_ns &&
                    want < xe[j]) {
                    want = xe[j];
                    moved = 1;
                }
            }
        }
        uint64_t d, s;
        if (op < 5) {
            d = nand_program(n, p, now);
            s = d - cfg.t_prog_ns - cfg.t_xfer_ns;
            order_ok &= s >= prev;
        } else {
            d = nand_read(n, p, now);
            s = d - cfg.t_xfer_ns;
            order_ok &= s >= prev + cfg.t_read_ns;
        }
        if (s != want && earliest_ok) {
            printf("# op %d: transfer at %" PRIu64 ", earliest idle %" PRIu64
                   "\n", i, s, want);
            earliest_ok = 0;
        }
        lun_end[lun] = d;
        xs[nx] = s;
        xe[nx] = s + cfg.t_xfer_ns;
        xc[nx] = lun % 2;
        nx++;
        busy += xc[nx - 1] == 0 ? cfg.t_xfer_ns : 0;
    }
    int overlap = 0;
    for (uint32_t i = 0; i < nx; i++) {
        for (uint32_t j = i + 1; j < nx; j++) {
            if (xc[i] == xc[j] && xs[i] < xe[j] && xs[j] < xe[i]) {
                if (!overlap) {
                    printf("# overlap [%" PRIu64 ",%" PRIu64 ") [%" PRIu64
                           ",%" PRIu64 ")\n", xs[i], xe[i], xs[j], xe[j]);
                }
                overlap++;
            }
        }
    }
    tap_ok(overlap == 0 && nand_channel_busy_ns(n, 0) == busy,
           "random mix: no overlapping transfers on a channel, busy adds up");
    tap_ok(order_ok, "random mix: LUN operations in order, reads after tR");
    tap_ok(earliest_ok,
           "random mix: every transfer takes the earliest idle slot");
    nand_free(n);
    return tap_done();
}
