/*
 * cxlssd-native's command line.  Every device property of the table
 * (hw/cxl-ssd/model/props.def) is accepted as --device NAME=VALUE and as
 * --NAME VALUE, parsed by the model's cxlssd_config_set(), so names,
 * defaults, ranges and messages are the QEMU device's; --help lists them
 * from the same table.  What has no native meaning is refused here.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"

#define DEFAULT_SIZE (256ull << 20)     /* boot-guest's --mem-size default */
/* Measured on this project's host with bench/native/delivery-probe
 * (README.md): a busy-polling handler thread has the smallest median miss
 * latency here; sigbus and poll are options. */
#define DEFAULT_DELIVERY CXLSSD_DELIVERY_BUSY

static void native_defaults(struct cxlssd_config *mc)
{
    cxlssd_config_defaults(mc, DEFAULT_SIZE);
    mc->delivery = DEFAULT_DELIVERY;
}

static void usage(FILE *f)
{
    struct cxlssd_config defaults;
    char line[2048];

    native_defaults(&defaults);
    fprintf(f,
"usage: cxlssd-native [options] [-- MIO-OPTIONS...]\n"
"Emulated CXL-SSD region inside this process (memfd + userfaultfd MINOR +\n"
"the cxl-ssd model and trap engine), with MIO running natively on it.\n"
"\n"
"  --device P=V[,P=V...]  cxl-ssd properties, same names and defaults as\n"
"                    -device cxl-ssd (repeatable; \",,\" is a literal comma)\n"
"  --NAME VALUE      the same for one property (--cache-size 8M)\n"
"  --size N          device size (the memdev size; default 256M); also\n"
"                    --device size=N\n"
"  --delivery poll|busy|sigbus|auto   miss delivery (default %s: fastest\n"
"                    here, bench/native/delivery-probe; auto is the same)\n"
"  --handler-threads N   handler threads (default 1)\n"
"  --record FILE     per-miss CSV (default OUT/misses.csv with --out)\n"
"  --out DIR         results folder (created): the files of a VM point\n"
"  --ram-baseline    also chase plain memory (a second memfd, no trap) in\n"
"                    the same MIO run, samples interleaved with the\n"
"                    device's (mio --baseline; mio-ram-*.csv)\n"
"  --no-breakdown    skip breakdown.csv\n"
"  --quiet           no informational lines on stderr\n"
"  --help            this text and the device properties\n"
"\n"
"MIO options (bench/mio, `mio --help`) follow `--`; --target is ignored\n"
"(MIO runs on the region); --wss-ratio uses the device's cache size unless\n"
"--cache-bytes is given; with --out the output files are set.\n"
"Prints MIO's lines, then `native:` and `native-breakdown:` key=value\n"
"lines.  Exit status: MIO's (0 ok, 1 verify mismatches, ...), 4 on a\n"
"setup error, 2 on a usage error.\n"
"\n"
"Device properties (defaults are this tool's):\n",
            cxlssd_enum_name(CXLSSD_PROP_DELIVERY, DEFAULT_DELIVERY));
    for (size_t i = 0; i < cxlssd_nprops; i++) {
        cxlssd_prop_describe(&cxlssd_props[i], &defaults, line, sizeof(line));
        fprintf(f, "  %-22s %s\n", cxlssd_props[i].name, line);
    }
    fputs("\nNatively mode is uffd only and bql off only (they belong to "
          "QEMU's MMIO path\nand BQL), so mode=mmio's dram-latency-ns is "
          "refused as in QEMU's mode=uffd;\nsize is the memdev's size in "
          "QEMU.\n", f);
}

/* One property, as -device cxl-ssd would take it. */
static int set_prop(struct native_opts *o, const char *name,
                    const char *value)
{
    char err[256];

    if (cxlssd_config_set(&o->mc, name, value, err, sizeof(err)) < 0) {
        fprintf(stderr, "cxlssd-native: %s\n", err);
        return -1;
    }
    return 0;
}

/* "a=1,b=x,,y" (QEMU option syntax: ",," is a comma). */
static int parse_device(struct native_opts *o, const char *arg)
{
    size_t used = strlen(o->device_args);
    snprintf(o->device_args + used, sizeof(o->device_args) - used, "%s%s",
             used ? "," : "", arg);
    char *s = strdup(arg);
    if (!s) {
        return -1;
    }
    char *p = s;
    int rc = 0;
    while (*p && rc == 0) {
        char *item = p, *w = p;
        while (*p) {
            if (*p == ',' && p[1] == ',') {
                *w++ = ',';
                p += 2;
            } else if (*p == ',') {
                p++;
                break;
            } else {
                *w++ = *p++;
            }
        }
        *w = '\0';
        char *eq = strchr(item, '=');
        if (!eq) {
            fprintf(stderr, "cxlssd-native: --device %s: expected "
                    "name=value\n", item);
            rc = -1;
            break;
        }
        *eq = '\0';
        rc = set_prop(o, item, eq + 1);
    }
    free(s);
    return rc;
}

/* What the table allows but only QEMU has. */
static int check_native(const struct cxlssd_config *mc)
{
    if (mc->mode != CXLSSD_MODE_UFFD) {
        fprintf(stderr, "cxlssd-native: mode=%s: only uffd exists natively "
                "(mmio is QEMU's MMIO exit path)\n",
                cxlssd_enum_name(CXLSSD_PROP_MODE, mc->mode));
        return -1;
    }
    if (mc->bql) {
        fprintf(stderr, "cxlssd-native: bql=on: there is no BQL outside "
                "QEMU\n");
        return -1;
    }
    if (mc->delivery == CXLSSD_DELIVERY_TLB) {
        fprintf(stderr, "cxlssd-native: delivery=tlb: only QEMU under TCG "
                "has a TLB fill to serve misses in; use poll, busy or "
                "sigbus\n");
        return -1;
    }
    return 0;
}

/* --out's record file, before validate: properties that need a record
 * file (record-ab) see it. */
static int default_record(struct native_opts *o)
{
    char path[4096];

    if (!o->out || o->mc.record_path) {
        return 0;
    }
    snprintf(path, sizeof(path), "%s/misses.csv", o->out);
    o->mc.record_path = strdup(path);
    return o->mc.record_path ? 0 : -1;
}

enum { O_DEVICE = 256, O_SIZE, O_OUT, O_RAM, O_NOBD, O_QUIET, O_HELP,
       O_PROP /* + row index */ };

int native_parse_opts(int argc, char **argv, struct native_opts *o)
{
    static const struct option fixed[] = {
        { "device", required_argument, 0, O_DEVICE },
        { "size", required_argument, 0, O_SIZE },
        { "out", required_argument, 0, O_OUT },
        { "ram-baseline", no_argument, 0, O_RAM },
        { "no-breakdown", no_argument, 0, O_NOBD },
        { "quiet", no_argument, 0, O_QUIET },
        { "help", no_argument, 0, O_HELP },
    };
    const size_t nfixed = sizeof(fixed) / sizeof(fixed[0]);
    struct option *lo = calloc(nfixed + cxlssd_nprops + 1, sizeof(*lo));
    int c, rc = -1;

    if (!lo) {
        return 4;
    }
    memcpy(lo, fixed, sizeof(fixed));
    for (size_t i = 0; i < cxlssd_nprops; i++) {
        lo[nfixed + i] = (struct option) {
            cxlssd_props[i].name, required_argument, 0, O_PROP + (int)i,
        };
    }
    memset(o, 0, sizeof(*o));
    native_defaults(&o->mc);
    opterr = 0;
    while (rc < 0 && (c = getopt_long(argc, argv, "+h", lo, NULL)) != -1) {
        switch (c) {
        case O_DEVICE:
            rc = parse_device(o, optarg) < 0 ? 2 : -1;
            break;
        case O_SIZE:
            rc = set_prop(o, "size", optarg) < 0 ? 2 : -1;
            break;
        case O_OUT: o->out = optarg; break;
        case O_RAM: o->ram_baseline = true; break;
        case O_NOBD: o->no_breakdown = true; break;
        case O_QUIET: o->quiet = true; break;
        case 'h':
        case O_HELP:
            usage(stdout);
            rc = 0;
            break;
        default:
            if (c >= O_PROP && c < O_PROP + (int)cxlssd_nprops) {
                rc = set_prop(o, cxlssd_props[c - O_PROP].name, optarg) < 0
                     ? 2 : -1;
                break;
            }
            fprintf(stderr, "cxlssd-native: unknown or incomplete option "
                    "'%s' (--help)\n", argv[optind - 1]);
            rc = 2;
        }
    }
    free(lo);
    if (rc < 0 && check_native(&o->mc) < 0) {
        rc = 2;
    }
    /* no accelerator here to choose by: auto is the default delivery */
    if (rc < 0 && o->mc.delivery == CXLSSD_DELIVERY_AUTO) {
        o->mc.delivery = DEFAULT_DELIVERY;
    }
    if (rc < 0 && default_record(o) < 0) {
        rc = 4;
    }
    o->mio_argc = argc - optind;
    o->mio_argv = argv + optind;
    return rc;
}
