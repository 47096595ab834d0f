/*
 * Combinations: a property the user set that has no effect given the
 * others is refused by cxlssd_config_validate(), naming both properties;
 * the same property left at its default (or set to a value only by code,
 * without a mark) is not; what makes it act (the other property) makes it
 * accepted; values are checked before combinations; the two documented
 * exceptions (background eviction in mode=mmio, record-ring without
 * record) are accepted.
 */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "model.h"
#include "tap.h"

#define SIZE (64ull << 20)

/* defaults, then "a=1,b=2" through cxlssd_config_set(); 0 or -1 */
static int configure(struct cxlssd_config *cfg, const char *props,
                     char *err, size_t errlen)
{
    char buf[512];
    char *save = NULL;

    cxlssd_config_defaults(cfg, SIZE);
    snprintf(buf, sizeof(buf), "%s", props);
    for (char *kv = strtok_r(buf, ",", &save); kv;
         kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');

        if (!eq) {
            snprintf(err, errlen, "test: %s: no '='", kv);
            return -1;
        }
        *eq = '\0';
        if (cxlssd_config_set(cfg, kv, eq + 1, err, errlen) < 0) {
            return -1;
        }
    }
    return 0;
}

/* The message of validate for @props ("" when it validates). */
static int validate(const char *props, char *err, size_t errlen)
{
    struct cxlssd_config cfg;
    int rc;

    err[0] = '\0';
    rc = configure(&cfg, props, err, errlen);
    if (rc == 0) {
        rc = cxlssd_config_validate(&cfg, err, errlen);
    }
    cxlssd_config_free_strings(&cfg);
    return rc;
}

struct rule {
    const char *set;            /* refused alone (on the defaults) */
    const char *other;          /* the property it needs, named */
    const char *with;           /* with this it acts: accepted */
};

static const struct rule rules[] = {
    { "media-page-cache=off", "media=PATH", "media=/tmp/m.img" },
    { "media-page-cache=on", "media=PATH", "media=/tmp/m.img" },
    { "media=,media-page-cache=off", "media=PATH", "media=/tmp/m.img" },
    { "record-ab=200", "record=PATH", "record=/tmp/r.csv" },
    { "record=,record-ab=0", "record=PATH", "record=/tmp/r.csv" },
    { "dram-latency-ns=100", "mode=mmio", "mode=mmio" },
    { "mode=uffd,dram-latency-ns=0", "mode=mmio", "mode=mmio" },
    { "compensate-ns=1000", "compensate=on", "compensate=on" },
    { "compensate=off,compensate-ns=0", "compensate=on", "compensate=on" },
    { "evict-low=4", "eviction=background", "eviction=background" },
    { "eviction=sync,evict-high=20", "eviction=background",
      "eviction=background" },
    { "mode=mmio,delivery=poll", "mode=uffd", "mode=uffd" },
    { "mode=mmio,delivery=sigbus", "mode=uffd", "mode=uffd" },
    { "mode=mmio,delivery=tlb", "mode=uffd", "mode=uffd" },
    { "mode=mmio,handler-threads=2", "mode=uffd", "mode=uffd" },
    { "mode=mmio,handler-cpus=0", "mode=uffd", "mode=uffd" },
    { "mode=mmio,track-dirty=off", "mode=uffd", "mode=uffd" },
    { "mode=mmio,track-dirty=on", "mode=uffd", "mode=uffd" },
    { "nand-blocks=64,over-provisioning=10", "nand-blocks=0",
      "nand-blocks=0" },
};

static void check_rule(const struct rule *r)
{
    char err[512], err2[512], props[512], name[64];
    const char *last = strrchr(r->set, ',');
    struct cxlssd_config cfg;
    struct cxlssd_model *m;

    /* the refused property is the last one of r->set */
    snprintf(name, sizeof(name), "%s", last ? last + 1 : r->set);
    *strchr(name, '=') = '\0';
    int rc = validate(r->set, err, sizeof(err));
    tap_ok(rc == -1 && strncmp(err, name, strlen(name)) == 0 &&
           strstr(err, r->other) &&
           strstr(err, "drop ") && strstr(err, " or set "),
           "%s refused naming %s and %s: \"%s\"", r->set, name, r->other,
           err);

    snprintf(props, sizeof(props), "%s,%s", r->set, r->with);
    rc = validate(props, err2, sizeof(err2));
    tap_ok(rc == 0, "  with %s it acts: accepted %s", r->with, err2);

    /* the model refuses it too, with the same message */
    if (configure(&cfg, r->set, err2, sizeof(err2)) == 0) {
        m = cxlssd_model_new(&cfg, err2, sizeof(err2));
        tap_ok(m == NULL && strcmp(err, err2) == 0,
               "  cxlssd_model_new() refuses it with the same message");
        cxlssd_model_free(m);
    } else {
        tap_ok(false, "  %s: %s", r->set, err2);
    }
    cxlssd_config_free_strings(&cfg);
}

/* Accepted, though some of them have no effect (config_validate.c says why). */
static const char *const accepted[] = {
    "mode=mmio,eviction=background",
    "mode=mmio,eviction=background,evict-low=10,evict-high=20",
    "record-ring=16",
    "mode=mmio,dram-latency-ns=100,compensate=on,compensate-ns=10",
    "mode=uffd,delivery=sigbus,handler-threads=2,handler-cpus=0,"
    "track-dirty=off",
    "mode=mmio,media=/tmp/m.img,media-page-cache=off",
    "nand-blocks=0,over-provisioning=10",
    "nand-blocks=64",
    "record=/tmp/r.csv,record-ab=200",
};

/*
 * Every row alone, set to its default's text: refused exactly for the
 * rows whose rule the defaults (mode=uffd, compensate=off, no record, no
 * media, eviction=sync, nand-blocks=0) do not satisfy; in mode=mmio the
 * uffd-only rows instead.  A row added to props.def shows up here.
 */
static void check_every_row(const char *mode, const char *const *refused,
                            const char *label)
{
    bool ok = true;

    for (size_t i = 0; i < cxlssd_nprops; i++) {
        const struct cxlssd_prop *p = &cxlssd_props[i];
        struct cxlssd_config def;
        char val[64], props[256], err[512];
        bool want = false;

        for (const char *const *r = refused; *r; r++) {
            want = want || strcmp(*r, p->name) == 0;
        }
        if (strcmp(p->name, "mode") == 0) {
            continue;
        }
        cxlssd_config_defaults(&def, SIZE);
        cxlssd_prop_format(p, &def, val, sizeof(val));
        snprintf(props, sizeof(props), "%s%s=%s", mode, p->name, val);
        int rc = validate(props, err, sizeof(err));
        if ((rc == -1) != want ||
            (want && strncmp(err, p->name, strlen(p->name)) != 0)) {
            ok = false;
            tap_diag("%s: %s (expected %s)", props, rc ? err : "accepted",
                     want ? "refused" : "accepted");
        }
    }
    tap_ok(ok, "every row set alone to its default (%s): refused exactly "
           "where it has no effect", label);
}

int main(void)
{
    struct cxlssd_config cfg;
    char err[512];

    for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
        check_rule(&rules[i]);
    }
    for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++) {
        int rc = validate(accepted[i], err, sizeof(err));
        tap_ok(rc == 0, "accepted: %s %s", accepted[i], err);
    }

    static const char *const uffd_refused[] = {
        "dram-latency-ns", "compensate-ns", "record-ab", "media-page-cache",
        "evict-low", "evict-high", NULL,
    };
    static const char *const mmio_refused[] = {
        "delivery", "handler-threads", "handler-cpus", "track-dirty",
        "compensate-ns", "record-ab", "media-page-cache", "evict-low",
        "evict-high", NULL,
    };
    check_every_row("", uffd_refused, "mode=uffd");
    check_every_row("mode=mmio,", mmio_refused, "mode=mmio");

    /* values first: a value error is reported as such */
    validate("evict-low=100", err, sizeof(err));
    tap_ok(strcmp(err, "evict-low=100: must be in 0..99") == 0,
           "a bad value is reported before a combination: \"%s\"", err);
    validate("evict-low=5,evict-high=5", err, sizeof(err));
    tap_ok(strstr(err, "evict-low must be below evict-high") != NULL,
           "so is an order between values: \"%s\"", err);

    /* what counts is the mark, not the value */
    cxlssd_config_defaults(&cfg, SIZE);
    cfg.media_page_cache = false;
    cfg.dram_latency_ns = 100;
    cfg.record_ab = 3;
    tap_ok(cxlssd_config_validate(&cfg, err, sizeof(err)) == 0,
           "values stored without a mark (code, not the user) validate %s",
           err);
    tap_ok(configure(&cfg, "media-page-cache=on", err, sizeof(err)) == 0 &&
           cxlssd_prop_is_set(&cxlssd_props[CXLSSD_ROW_media_page_cache],
                              &cfg) &&
           !cxlssd_prop_is_set(&cxlssd_props[CXLSSD_ROW_media_path], &cfg) &&
           cxlssd_config_validate(&cfg, err, sizeof(err)) == -1,
           "cxlssd_config_set() marks what it sets, also the default value "
           "of a boolean that defaults to on: \"%s\"", err);
    cxlssd_prop_mark_set(&cxlssd_props[CXLSSD_ROW_media_page_cache], &cfg,
                         false);
    tap_ok(cxlssd_config_validate(&cfg, err, sizeof(err)) == 0,
           "unmarked again (a front end storing its default), it "
           "validates %s", err);
    configure(&cfg, "record-ab=1,dram-latency-ns=1", err, sizeof(err));
    cxlssd_config_defaults(&cfg, SIZE);
    bool none = true;
    for (size_t i = 0; i < cxlssd_nprops; i++) {
        none = none && !cxlssd_prop_is_set(&cxlssd_props[i], &cfg);
    }
    tap_ok(none, "cxlssd_config_defaults() clears every mark");
    tap_ok(configure(&cfg, "record-ab=abc", err, sizeof(err)) == -1 &&
           !cxlssd_prop_is_set(&cxlssd_props[CXLSSD_ROW_record_ab], &cfg),
           "a value that does not parse leaves no mark");
    return tap_done();
}
