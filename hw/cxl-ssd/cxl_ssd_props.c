/*
 * cxl-ssd properties: QEMU's view of the property table (model/props.def).
 * Every row becomes a qdev property on CXLSSDState.cfg with the table's
 * default; its help text is the row's description and range; enumerations
 * (mode, delivery, policy, eviction) are parsed when set, with the table's
 * names and messages.  Every setter marks its row as set by the user
 * (-device, -global, QMP), unless it only stores the default when the
 * object is created, so that the model's combination rules refuse what
 * the user set but would have no effect.  Ranges and combinations are
 * checked at realize by the model's cxlssd_config_validate(), as in the
 * native tool; this file adds only what needs QEMU or the host
 * (accelerator, BQL, host CPUs and RAM), and turns delivery=auto into the
 * delivery the accelerator allows.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qemu/accel.h"
#include "hw/qdev-properties.h"
#include "system/tcg.h"
#include "cxl_ssd.h"
#include "trace.h"

static const struct cxlssd_prop *cxl_ssd_row(const Property *prop)
{
    const struct cxlssd_prop *row = cxlssd_prop_find(prop->name);

    assert(row);
    return row;
}

static void cxl_ssd_get_enum(Object *obj, Visitor *v, const char *name,
                             void *opaque, Error **errp)
{
    char buf[64];
    char *str = buf;

    cxlssd_prop_format(cxl_ssd_row(opaque), &CXL_SSD(obj)->cfg, buf,
                       sizeof(buf));
    visit_type_str(v, name, &str, errp);
}

static void cxl_ssd_set_enum(Object *obj, Visitor *v, const char *name,
                             void *opaque, Error **errp)
{
    const Property *prop = opaque;
    g_autofree char *str = NULL;
    char err[256];

    if (!visit_type_str(v, name, &str, errp)) {
        return;
    }
    if (cxlssd_config_set(&CXL_SSD(obj)->cfg, prop->name, str, err,
                          sizeof(err))) {
        error_setg(errp, "%s", err);
    }
}

static void cxl_ssd_set_default_enum(ObjectProperty *op, const Property *prop)
{
    object_property_set_default_str(op,
        cxlssd_enum_name(cxl_ssd_row(prop)->kind, prop->defval.i));
}

static const PropertyInfo cxl_ssd_prop_enum = {
    .type = "str",
    .get = cxl_ssd_get_enum,
    .set = cxl_ssd_set_enum,
    .set_default_value = cxl_ssd_set_default_enum,
};

#define CXL_SSD_PROP_U32(n, f, d)  DEFINE_PROP_UINT32(n, CXLSSDState, f, d)
#define CXL_SSD_PROP_TIME(n, f, d) DEFINE_PROP_UINT64(n, CXLSSDState, f, d)
#define CXL_SSD_PROP_SIZE(n, f, d) DEFINE_PROP_SIZE(n, CXLSSDState, f, d)
#define CXL_SSD_PROP_BOOL(n, f, d) DEFINE_PROP_BOOL(n, CXLSSDState, f, d)
#define CXL_SSD_PROP_STR(n, f, d)  DEFINE_PROP_STRING(n, CXLSSDState, f)
#define CXL_SSD_PROP_ENUM(n, f, d, type) \
    DEFINE_PROP_SIGNED(n, CXLSSDState, f, d, cxl_ssd_prop_enum, type)
#define CXL_SSD_PROP_MODE(n, f, d) \
    CXL_SSD_PROP_ENUM(n, f, d, CXLSSD_CTYPE_MODE)
#define CXL_SSD_PROP_DELIVERY(n, f, d) \
    CXL_SSD_PROP_ENUM(n, f, d, CXLSSD_CTYPE_DELIVERY)
#define CXL_SSD_PROP_POLICY(n, f, d) \
    CXL_SSD_PROP_ENUM(n, f, d, CXLSSD_CTYPE_POLICY)
#define CXL_SSD_PROP_EVICTION(n, f, d) \
    CXL_SSD_PROP_ENUM(n, f, d, CXLSSD_CTYPE_EVICTION)

static const Property cxl_ssd_props[] = {
#define CXLSSD_PROP(K, F, N, D, LO, HI, DESC) CXL_SSD_PROP_##K(N, cfg.F, D),
#include "model/props.def"
#undef CXLSSD_PROP
};

/* qdev's setter and default initialiser of each row, which the marking
 * ones below wrap */
static ObjectPropertyAccessor *cxl_ssd_qdev_set[CXLSSD_NPROPS];
static ObjectPropertyInit *cxl_ssd_qdev_init[CXLSSD_NPROPS];

/* cxl_ssd_props[i] is the qdev property of cxlssd_props[i] */
static size_t cxl_ssd_row_index(const void *opaque)
{
    return (const Property *)opaque - cxl_ssd_props;
}

static void cxl_ssd_set_marked(Object *obj, Visitor *v, const char *name,
                               void *opaque, Error **errp)
{
    ERRP_GUARD();
    size_t i = cxl_ssd_row_index(opaque);

    cxl_ssd_qdev_set[i](obj, v, name, opaque, errp);
    if (!*errp) {
        cxlssd_prop_mark_set(&cxlssd_props[i], &CXL_SSD(obj)->cfg, true);
    }
}

/* The default goes through the setter too: it does not count as set. */
static void cxl_ssd_init_unmarked(Object *obj, ObjectProperty *op)
{
    size_t i = cxl_ssd_row_index(op->opaque);

    cxl_ssd_qdev_init[i](obj, op);
    cxlssd_prop_mark_set(&cxlssd_props[i], &CXL_SSD(obj)->cfg, false);
}

void cxl_ssd_props_class_init(ObjectClass *oc)
{
    char desc[2048];
    size_t i;

    device_class_set_props(DEVICE_CLASS(oc), cxl_ssd_props);
    for (i = 0; i < cxlssd_nprops; i++) {
        ObjectProperty *op = object_class_property_find(oc,
                                                        cxlssd_props[i].name);

        assert(op && op->set && op->opaque == &cxl_ssd_props[i]);
        cxl_ssd_qdev_set[i] = op->set;
        op->set = cxl_ssd_set_marked;
        if (op->init) {
            cxl_ssd_qdev_init[i] = op->init;
            op->init = cxl_ssd_init_unmarked;
        }
        /* QEMU's help appends the default */
        cxlssd_prop_describe(&cxlssd_props[i], NULL, desc, sizeof(desc));
        object_class_property_set_description(oc, cxlssd_props[i].name,
                                              desc);
    }
}

static bool cxl_ssd_has_media(CXLSSDState *s)
{
    return s->cfg.media_path && *s->cfg.media_path;
}

bool cxl_ssd_check_options(CXLSSDState *s, uint64_t device_size,
                           Error **errp)
{
    char err[256];
    uint64_t cache;
    long phys_pages = sysconf(_SC_PHYS_PAGES);
    uint64_t host_ram = phys_pages > 0 ?
        (uint64_t)phys_pages * qemu_real_host_page_size() : 0;

    s->cfg.device_size = device_size;
    if (cxlssd_config_validate(&s->cfg, err, sizeof(err))) {
        error_setg(errp, "%s", err);
        return false;
    }
    /* From here on, and in what the device reports, the delivery it
     * runs: auto never picks what the checks below refuse. */
    if (s->cfg.delivery == CXLSSD_DELIVERY_AUTO) {
        const char *why;

        s->cfg.delivery = cxlssd_delivery_auto(&s->cfg, tcg_enabled(), &why);
        trace_cxl_ssd_delivery_auto(
            cxlssd_enum_name(CXLSSD_PROP_DELIVERY, s->cfg.delivery),
            current_accel_name(), why);
    }
    if (cxl_ssd_sigbus(s)) {
        /* Under KVM a vCPU's access faults inside KVM_RUN, where a
         * SIGBUS-mode userfaultfd makes KVM fail the run, not signal. */
        if (!tcg_enabled()) {
            error_setg(errp, "delivery=sigbus: needs -accel tcg (under %s "
                       "a vCPU's miss is not raised as a signal); use poll "
                       "or busy", current_accel_name());
            return false;
        }
        /* The miss runs in a signal handler on the vCPU thread, which
         * must not wait for a lock. */
        if (s->cfg.bql) {
            error_setg(errp, "bql=on: not supported with delivery=sigbus "
                       "(the vCPU serves its miss in a signal handler); "
                       "use bql=off or delivery=poll|busy");
            return false;
        }
    }
    if (s->cfg.delivery == CXLSSD_DELIVERY_TLB) {
        /* The hook is in TCG's TLB fill; KVM maps the window itself. */
        if (!tcg_enabled()) {
            error_setg(errp, "delivery=tlb: needs -accel tcg (under %s "
                       "vCPUs reach the window without TCG's TLB); use "
                       "poll or busy", current_accel_name());
            return false;
        }
    }
    if (cxlssd_trap_check_cpus(s->cfg.handler_cpus, err, sizeof(err)) < 0) {
        error_setg(errp, "%s", err);
        return false;
    }
    /* The cache is host memory whatever holds the rest. */
    cache = cxlssd_config_cache_frames(&s->cfg) * s->cfg.page_size;
    if (host_ram && cache > host_ram) {
        error_setg(errp, "cache-size: %" PRIu64 " bytes exceeds this host's "
                   "RAM (%" PRIu64 " bytes)", cache, host_ram);
        return false;
    }
    /* Without media, uffd mode keeps every media page in the page cache
     * (fallocate at realize): a memdev larger than the host's RAM would
     * end in the OOM killer, not in an error. */
    if (s->cfg.mode == CXLSSD_MODE_UFFD && !cxl_ssd_has_media(s) &&
        host_ram && device_size > host_ram) {
        error_setg(errp, "%s: size %" PRIu64 " exceeds this "
                   "host's RAM (%" PRIu64 " bytes); mode=uffd keeps the "
                   "whole media in the memory backend's page cache unless "
                   "media=PATH puts it in a file",
                   s->persistent ? "persistent-memdev" : "volatile-memdev",
                   device_size, host_ram);
        return false;
    }
    return true;
}
