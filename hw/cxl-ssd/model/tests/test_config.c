/*
 * Configuration: defaults validate; every bad value is rejected with a
 * message naming the property and its allowed range (never an abort);
 * cxlssd_config_set() parses numbers, suffixes and names; the property
 * table (props.def) documents every property with its default and range,
 * and every range it states is the one validate checks.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "model.h"
#include "tap.h"

#define MiB (1024ull * 1024)
#define GiB (1024 * MiB)

static void check_defaults(uint64_t size)
{
    struct cxlssd_config cfg;
    char err[256] = "";
    cxlssd_config_defaults(&cfg, size);
    int rc = cxlssd_config_validate(&cfg, err, sizeof(err));
    tap_ok(rc == 0, "defaults validate for a %" PRIu64 "-byte device %s",
           size, err);
}

struct bad {
    const char *prop, *value;   /* set with cxlssd_config_set */
    const char *prop2, *value2; /* optional second property */
    const char *expect;         /* substring of the error */
};

static const struct bad bads[] = {
    { "nand-channels", "0", NULL, NULL, "nand-channels=0: must be in 1..256" },
    { "nand-channels", "257", NULL, NULL, "nand-channels=257: must be in 1..256" },
    { "nand-luns", "0", NULL, NULL, "nand-luns=0: must be in 1..256" },
    { "cache-size", "8G", NULL, NULL,
      "cache-size=8589934592: must be at least one page (4096) and at most "
      "the device size (4294967296)" },
    { "cache-size", "100", NULL, NULL, "cache-size=100: must be at least one page" },
    { "cache-size", "6000", NULL, NULL, "cache-size=6000: must be a multiple of page-size" },
    { "prefetch", "100", NULL, NULL, "prefetch=100: must be in 0..64" },
    { "evict-low", "5", "evict-high", "5", "evict-low must be below evict-high" },
    { "evict-high", "0", NULL, NULL, "evict-high=0: must be in 1..100" },
    { "evict-low", "100", "evict-high", "100", "evict-low=100: must be in 0..99" },
    { "over-provisioning", "0", NULL, NULL, "over-provisioning=0: must be in 1..50" },
    { "over-provisioning", "51", NULL, NULL, "over-provisioning=51: must be in 1..50" },
    { "nand-read-ns", "0", NULL, NULL, "nand-read-ns=0: must be in 1..10000000000" },
    { "nand-prog-ns", "0", NULL, NULL, "nand-prog-ns=0: must be in 1..10000000000" },
    { "nand-erase-ns", "0", NULL, NULL, "nand-erase-ns=0: must be in 1..10000000000" },
    { "nand-xfer-ns", "0", NULL, NULL, "nand-xfer-ns=0: must be in 1..10000000000" },
    { "nand-xfer-ns", "11s", NULL, NULL, "nand-xfer-ns=11000000000: must be in 1..10000000000" },
    { "page-size", "8192", NULL, NULL, "page-size=8192: must be 4096 (the host page size" },
    { "page-size", "0", NULL, NULL, "page-size=0: must be 4096" },
    { "cache-ways", "5", NULL, NULL, "cache-ways=5: must divide the number of cache frames (52428)" },
    { "cache-ways", "52429", NULL, NULL, "cache-ways=52429: must be in 0..52428" },
    { "gc-low", "4", "gc-high", "4", "gc-low must be below gc-high" },
    { "gc-low", "1", NULL, NULL, "gc-low=1: must be in 2..1023" },
    { "nand-pages-per-block", "0", NULL, NULL, "nand-pages-per-block=0: must be in 1..65535" },
    { "nand-pages-per-block", "65536", NULL, NULL, "nand-pages-per-block=65536: must be in 1..65535" },
    { "nand-blocks", "10", NULL, NULL, "nand-blocks=10: must be at least" },
    { "nand-blocks", "16777216", "nand-luns", "256",
      "nand geometry: nand-channels=8 x nand-luns=256 x nand-blocks=16777216" },
    { "record-ring", "0", NULL, NULL, "record-ring=0: must be in 16..16777216" },
    { "size", "0", NULL, NULL, "size=0: the device must hold at least 2 pages" },
    { "size", "4096", NULL, NULL, "size=4096: the device must hold at least 2 pages" },
    { "size", "10000", NULL, NULL, "size=10000: must be a multiple of page-size" },
    { "size", "64T", NULL, NULL, "size=70368744177664: at most" },
};

static void check_bad(const struct bad *b)
{
    struct cxlssd_config cfg;
    char err[512] = "";
    cxlssd_config_defaults(&cfg, 4 * GiB);
    int rc = cxlssd_config_set(&cfg, b->prop, b->value, err, sizeof(err));
    if (rc == 0 && b->prop2) {
        rc = cxlssd_config_set(&cfg, b->prop2, b->value2, err, sizeof(err));
    }
    if (rc == 0) {
        rc = cxlssd_config_validate(&cfg, err, sizeof(err));
    }
    bool ok = rc == -1 && strstr(err, b->expect) != NULL;
    tap_ok(ok, "%s=%s%s%s%s rejected: \"%s\"", b->prop, b->value,
           b->prop2 ? " " : "", b->prop2 ? b->prop2 : "",
           b->prop2 ? "=..." : "", err);
    if (!ok) {
        tap_diag("expected message containing \"%s\"", b->expect);
    }
    /* the model refuses it too, with the same message, no abort */
    char err2[512] = "";
    struct cxlssd_model *m = cxlssd_model_new(&cfg, err2, sizeof(err2));
    tap_ok(m == NULL && strcmp(err, err2) == 0,
           "  cxlssd_model_new() refuses it with the same message");
    cxlssd_model_free(m);
}

struct parse {
    const char *prop, *value;
    int rc;
    const char *expect;         /* error substring, or NULL */
};

static const struct parse parses[] = {
    { "policy", "foo", -1, "policy=foo: must be one of fifo, lifo, clock, s3fifo" },
    { "eviction", "lazy", -1, "eviction=lazy: must be one of sync, background" },
    { "cache-size", "-1", -1, "cache-size=-1: must be a non-negative size" },
    { "cache-size", "abc", -1, "cache-size=abc:" },
    { "cache-size", "", -1, "cache-size=:" },
    { "cache-size", "99999999999999999999", -1, "cache-size=99999999999999999999:" },
    { "cache-size", "20000000000G", -1, "cache-size=20000000000G:" },
    { "cache-size", "12X", -1, "cache-size=12X:" },
    { "prefetch", "4294967296", -1, "prefetch=4294967296: must be an integer in 0..4294967295" },
    { "prefetch", "1.5", -1, "prefetch=1.5:" },
    { "prefetch", "-3", -1, "prefetch=-3:" },
    { "nand-read-ns", "3ms", 0, NULL },
    { "nand-read-ns", "3 parsecs", -1, "nand-read-ns=3 parsecs:" },
    { "precondition", "maybe", -1, "precondition=maybe: must be on or off" },
    { "no-such-thing", "1", -1, "no-such-thing: unknown property" },
};

static void check_parse(const struct parse *p)
{
    struct cxlssd_config cfg;
    char err[512] = "";
    cxlssd_config_defaults(&cfg, 4 * GiB);
    int rc = cxlssd_config_set(&cfg, p->prop, p->value, err, sizeof(err));
    bool ok = rc == p->rc && (!p->expect || strstr(err, p->expect));
    tap_ok(ok, "set %s=\"%s\" -> %d \"%s\"", p->prop, p->value, rc, err);
}

int main(void)
{
    check_defaults(2 * 4096);
    check_defaults(256 * MiB);
    check_defaults(4 * GiB);
    check_defaults(1024 * GiB);

    struct cxlssd_config cfg;
    char err[256];
    cxlssd_config_defaults(&cfg, 4 * GiB);
    tap_ok(cfg.page_size == 4096 && cfg.pages_per_block == 256 &&
           cfg.record_ring == 65536 && cfg.evict_low_pct == 2 &&
           cfg.evict_high_pct == 5 && cfg.channels == 8 &&
           cfg.luns_per_channel == 16 && cfg.t_read_ns == 3000 &&
           cfg.t_xfer_ns == 3200 && cfg.op_pct == 7 &&
           cfg.policy == CXLSSD_POLICY_FIFO && cfg.cache_size == 0,
           "default values");
    tap_ok(cxlssd_config_pages(&cfg) == 1048576 &&
           cxlssd_config_cache_frames(&cfg) == 52428,
           "4 GiB: 1 Mi pages, cache 5%% = 52428 frames");

    for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
        check_bad(&bads[i]);
    }
    for (size_t i = 0; i < sizeof(parses) / sizeof(parses[0]); i++) {
        check_parse(&parses[i]);
    }

    /* successful parses */
    cxlssd_config_defaults(&cfg, 4 * GiB);
    bool ok = cxlssd_config_set(&cfg, "cache-size", "64M", err, 256) == 0 &&
              cfg.cache_size == 64 * MiB &&
              cxlssd_config_set(&cfg, "cache-size", "1G", err, 256) == 0 &&
              cfg.cache_size == GiB &&
              cxlssd_config_set(&cfg, "cache-size", "8k", err, 256) == 0 &&
              cfg.cache_size == 8192 &&
              cxlssd_config_set(&cfg, "cache-size", "12288", err, 256) == 0 &&
              cfg.cache_size == 12288 &&
              cxlssd_config_set(&cfg, "cache-size", "2MiB", err, 256) == 0 &&
              cfg.cache_size == 2 * MiB;
    tap_ok(ok, "sizes: 64M, 1G, 8k, 12288, 2MiB");
    ok = cxlssd_config_set(&cfg, "policy", "clock", err, 256) == 0 &&
         cfg.policy == CXLSSD_POLICY_CLOCK &&
         cxlssd_config_set(&cfg, "policy", "S3FIFO", err, 256) == 0 &&
         cfg.policy == CXLSSD_POLICY_S3FIFO &&
         cxlssd_config_set(&cfg, "eviction", "background", err, 256) == 0 &&
         cfg.eviction == CXLSSD_EVICTION_BACKGROUND &&
         cxlssd_config_set(&cfg, "precondition", "on", err, 256) == 0 &&
         cfg.precondition &&
         cxlssd_config_set(&cfg, "nand-read-ns", "3us", err, 256) == 0 &&
         cfg.t_read_ns == 3000 &&
         cxlssd_config_set(&cfg, "prefetch", "8", err, 256) == 0 &&
         cfg.prefetch == 8 &&
         cxlssd_config_set(&cfg, "nand-prog-ns", "0x10", err, 256) == 0 &&
         cfg.t_prog_ns == 16;
    tap_ok(ok, "names, booleans, time suffixes, hex");
    tap_ok(cxlssd_config_validate(&cfg, err, sizeof(err)) == 0,
           "the parsed configuration validates");

    for (int p = 0; p < CXLSSD_POLICY_COUNT; p++) {
        enum cxlssd_policy out;
        ok = cxlssd_policy_from_name(cxlssd_policy_name(p), &out) == 0 &&
             out == (enum cxlssd_policy)p;
        tap_ok(ok, "policy name round trip: %s", cxlssd_policy_name(p));
    }

    /* the property table */
    bool described = cxlssd_nprops >= 30;
    cxlssd_config_defaults(&cfg, 4 * GiB);
    for (size_t i = 0; i < cxlssd_nprops; i++) {
        const struct cxlssd_prop *p = &cxlssd_props[i];
        char d[2048], range[64];

        cxlssd_prop_describe(p, &cfg, d, sizeof(d));
        snprintf(range, sizeof(range), "%" PRIu64 "..%" PRIu64, p->min,
                 p->max);
        if (strcmp(p->name, "size") == 0 || cxlssd_prop_find(p->name) != p) {
            described = false;  /* size comes from the memdev */
            tap_diag("%s: not a device property, or listed twice", p->name);
        }
        if (!strstr(d, "default") ||
            (cxlssd_prop_has_range(p) && !strstr(d, range))) {
            described = false;
            tap_diag("%s: no default or range in \"%s\"", p->name, d);
        }
    }
    tap_ok(described, "%zu properties (size excluded: it comes from the "
           "memdev), each described with its default and range",
           cxlssd_nprops);
    ok = true;
    for (size_t i = 0; i < cxlssd_nprops; i++) {
        struct cxlssd_config c2;
        char e2[256] = "";
        if (cxlssd_props[i].kind == CXLSSD_PROP_STR) {
            continue;           /* any text is a value */
        }
        cxlssd_config_defaults(&c2, 4 * GiB);
        if (cxlssd_config_set(&c2, cxlssd_props[i].name, "zzz", e2,
                              sizeof(e2)) == 0 ||
            strncmp(e2, cxlssd_props[i].name,
                    strlen(cxlssd_props[i].name)) != 0) {
            ok = false;
            tap_diag("%s: \"%s\"", cxlssd_props[i].name, e2);
        }
    }
    tap_ok(ok, "every property in the table is settable and names itself "
           "in its errors");
    ok = true;
    for (size_t i = 0; i < cxlssd_nprops; i++) {
        const struct cxlssd_prop *p = &cxlssd_props[i];
        struct cxlssd_config c2;
        char val[256], range[256], e2[256] = "";

        if (!cxlssd_prop_has_range(p) || p->kind == CXLSSD_PROP_SIZE) {
            continue;
        }
        cxlssd_config_defaults(&c2, 4 * GiB);
        snprintf(val, sizeof(val), "%" PRIu64, p->max + 1);
        snprintf(range, sizeof(range), "%s=%" PRIu64 ": must be in %" PRIu64
                 "..%" PRIu64, p->name, p->max + 1, p->min, p->max);
        if (cxlssd_config_set(&c2, p->name, val, e2, sizeof(e2)) == 0 &&
            (cxlssd_config_validate(&c2, e2, sizeof(e2)) == 0 ||
             strcmp(e2, range) != 0)) {
            ok = false;
            tap_diag("%s=%s: \"%s\"", p->name, val, e2);
        }
    }
    tap_ok(ok, "every range in the table is checked, with its message");
    cxlssd_config_defaults(&cfg, 4 * GiB);
    ok = cxlssd_config_set(&cfg, "handler-cpus", "0-1", err, 256) == 0 &&
         cxlssd_config_set(&cfg, "record", "/tmp/x.csv", err, 256) == 0 &&
         cxlssd_config_set(&cfg, "delivery", "sigbus", err, 256) == 0 &&
         cxlssd_config_set(&cfg, "mode", "mmio", err, 256) == 0 &&
         strcmp(cfg.handler_cpus, "0-1") == 0 &&
         strcmp(cfg.record_path, "/tmp/x.csv") == 0 &&
         cfg.delivery == CXLSSD_DELIVERY_SIGBUS &&
         cfg.mode == CXLSSD_MODE_MMIO &&
         cxlssd_config_set(&cfg, "mode", "MMIO", err, 256) == -1 &&
         strstr(err, "mode=MMIO: must be one of uffd, mmio") &&
         cxlssd_config_set(&cfg, "handler-threads", "65", err, 256) == 0 &&
         cxlssd_config_validate(&cfg, err, sizeof(err)) == -1 &&
         strstr(err, "handler-threads=65: must be in 1..64");
    tap_ok(ok, "device-level properties: strings, enumerations, ranges "
           "(%s)", err);
    cxlssd_config_free_strings(&cfg);

    /* delivery=auto: the default, resolved by the embedder */
    const char *why = NULL;
    cxlssd_config_defaults(&cfg, 4 * GiB);
    ok = cfg.delivery == CXLSSD_DELIVERY_AUTO &&
         cxlssd_config_validate(&cfg, err, sizeof(err)) == 0 &&
         cxlssd_delivery_auto(&cfg, true, &why) == CXLSSD_DELIVERY_TLB &&
         why && strstr(why, "TLB fill") &&
         cxlssd_delivery_auto(&cfg, false, &why) == CXLSSD_DELIVERY_POLL &&
         strstr(why, "delivery=tlb needs");
    cxlssd_config_set(&cfg, "mode", "mmio", err, 256);
    ok = ok && cxlssd_config_validate(&cfg, err, sizeof(err)) == 0 &&
         cxlssd_delivery_auto(&cfg, true, &why) == CXLSSD_DELIVERY_POLL &&
         strstr(why, "mode=mmio") &&
         cxlssd_config_set(&cfg, "delivery", "auto", err, 256) == 0 &&
         cxlssd_config_validate(&cfg, err, sizeof(err)) == -1 &&
         strstr(err, "delivery=auto: needs mode=uffd") &&
         cxlssd_config_set(&cfg, "delivery", "AUTO", err, 256) == -1 &&
         strstr(err, "one of poll, busy, sigbus, tlb, auto");
    tap_ok(ok, "delivery=auto: the default; tlb with an access path, else "
           "poll; mode=mmio: poll, and refused when set (%s)", err);

    /* format */
    char buf[4096];
    cxlssd_config_defaults(&cfg, 4 * GiB);
    int n = cxlssd_config_format(&cfg, buf, sizeof(buf), '\n');
    tap_ok(n > 0 && (size_t)n == strlen(buf) &&
           strstr(buf, "policy=fifo\n") && strstr(buf, "nand-read-ns=3000\n")
           && strstr(buf, "cache-size=0\n"),
           "format with newlines");
    n = cxlssd_config_format(&cfg, buf, sizeof(buf), ',');
    tap_ok(n > 0 && !strchr(buf, '\n') && strstr(buf, ",policy=fifo,") &&
           buf[strlen(buf) - 1] != ',', "format comma-separated");
    char small[16];
    int n2 = cxlssd_config_format(&cfg, small, sizeof(small), ',');
    tap_ok(n2 == n && strlen(small) == sizeof(small) - 1,
           "format truncates safely and returns the full length");
    tap_ok(cxlssd_config_validate(NULL, err, sizeof(err)) == -1,
           "NULL configuration rejected");
    return tap_done();
}
