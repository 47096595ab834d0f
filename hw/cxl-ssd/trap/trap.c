/*
 * cxl-ssd trap engine: life cycle (new/free) and names.  The
 * miss path itself is the model's miss service (model/miss_service.c); the
 * trap's files and their jobs are listed in trap_int.h.  Per-miss records
 * go through the model's record_writer.  See trap.h for the interface.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "trap_int.h"

static const char *const delivery_names[CXLSSD_DELIVERY_COUNT] = {
    [CXLSSD_DELIVERY_POLL] = "poll",
    [CXLSSD_DELIVERY_BUSY] = "busy",
};

const char *cxlssd_delivery_name(enum cxlssd_delivery d)
{
    if (d == CXLSSD_DELIVERY_SIGBUS) {
        return "sigbus";
    }
    if (d == CXLSSD_DELIVERY_TLB) {
        return "tlb";
    }
    return (unsigned)d < CXLSSD_DELIVERY_COUNT ? delivery_names[d] : "?";
}

int cxlssd_delivery_from_name_any(const char *name,
                                  enum cxlssd_delivery *out)
{
    if (name && strcmp(name, "sigbus") == 0) {
        *out = CXLSSD_DELIVERY_SIGBUS;
        return 0;
    }
    if (name && strcmp(name, "tlb") == 0) {
        *out = CXLSSD_DELIVERY_TLB;
        return 0;
    }
    return cxlssd_delivery_from_name(name, out);
}

int cxlssd_delivery_from_name(const char *name, enum cxlssd_delivery *out)
{
    for (int i = 0; i < CXLSSD_DELIVERY_COUNT; i++) {
        if (name && strcmp(name, delivery_names[i]) == 0) {
            *out = (enum cxlssd_delivery)i;
            return 0;
        }
    }
    return -1;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static int records_start(struct cxlssd_trap *t, char *err, size_t errlen)
{
    if (!t->record_path || !*t->record_path) {
        return 0;
    }
    const struct cxlssd_config *mc = cxlssd_model_config(t->model);
    t->rec_writer = cxlssd_record_writer_new(
        t->record_path, mc->record_ring ? mc->record_ring : 65536,
        t->mode_name ? t->mode_name : "uffd",
        t->accel_name ? t->accel_name : "native", err, errlen);
    if (!t->rec_writer) {
        return -1;
    }
    t->ring = cxlssd_record_writer_ring(t->rec_writer);
    return 0;
}

static int service_start(struct cxlssd_trap *t, char *err, size_t errlen)
{
    struct cxlssd_miss_service_config sc = {
        .trace = t->hooks.trace,
        .trace_opaque = t->hooks.opaque,
        .ring = t->ring,
        .stop = &t->stop,
        .compensate = t->cfg.compensate,
        .compensate_ns = t->cfg.compensate_ns,
        .record_ab = t->cfg.record_ab,
        .late_wait_ns = t->cfg.late_wait_ns,
        .defer_unmap = t->cfg.defer_unmap,
        .batch_evict = cxlssd_model_config(t->model)->eviction ==
                       CXLSSD_EVICTION_BATCH,
    };
    trap_substrate(t, &sc.substrate);
    if (t->hooks.serialize_begin) {
        sc.substrate.serialize_begin = trap_serialize_begin;
        sc.substrate.serialize_end = trap_serialize_end;
    }
    t->svc = cxlssd_miss_service_new(t->model, &sc, err, errlen);
    return t->svc ? 0 : -1;
}

static void trap_destroy(struct cxlssd_trap *t)
{
    atomic_store(&t->stop, true);
    trap_wake_pollers(t);
    pthread_mutex_lock(&t->ctl_lock);
    pthread_cond_broadcast(&t->ctl_cond);
    pthread_mutex_unlock(&t->ctl_lock);
    trap_handlers_stop(t);
    trap_evict_stop(t);
    /* Prefetched pages still LOADING: map them (needs the registration). */
    if (t->registered && t->svc) {
        cxlssd_complete_all_prefetches(t->svc);
    }
    /* Unregistering wakes any thread still blocked on the range; from now
     * on the mapping behaves as a plain shared mapping of the memfd. */
    trap_uffd_unregister(t);
    /* SIGBUS delivery: no new signal can come from this range now; wait
     * for handlers still running on accessing threads. */
    trap_sigbus_detach(t);
    /* Nothing touches the range through the trap now: write the cache
     * back and close the media file clean. */
    trap_media_close(t);
    if (t->uffd >= 0) {
        close(t->uffd);
    }
    if (t->stop_efd >= 0) {
        close(t->stop_efd);
    }
    /* stops the drain thread, drains the rest, closes the CSV */
    cxlssd_record_writer_free(t->rec_writer);
    t->rec_writer = NULL;
    t->ring = NULL;
    cxlssd_miss_service_free(t->svc);
    trap_fault_clock_free(t->fault_clock);
    pthread_mutex_destroy(&t->ctl_lock);
    pthread_cond_destroy(&t->ctl_cond);
    pthread_mutex_destroy(&t->reset_lock);
    pthread_mutex_destroy(&t->evict_lock);
    pthread_cond_destroy(&t->evict_cond);
    free(t->handler_cpus);
    free(t->record_path);
    free(t->mode_name);
    free(t->accel_name);
    free(t->media_path);
    free(t->media_cache_path);
    free(t);
}

struct cxlssd_trap *cxlssd_trap_new(struct cxlssd_model *model,
                                    void *base, size_t len,
                                    const struct cxlssd_trap_config *cfg,
                                    const struct cxlssd_trap_hooks *hooks,
                                    char *err, size_t errlen)
{
    if (!model || !base || !len || !cfg) {
        snprintf(err, errlen, "cxl-ssd trap: missing model, range or "
                 "configuration");
        return NULL;
    }
    if ((unsigned)cfg->delivery >= CXLSSD_DELIVERY_COUNT &&
        cfg->delivery != CXLSSD_DELIVERY_SIGBUS &&
        cfg->delivery != CXLSSD_DELIVERY_TLB) {
        snprintf(err, errlen, "delivery=%d: must be poll, busy, sigbus or "
                 "tlb",
                 (int)cfg->delivery);
        return NULL;
    }
    if (cfg->keep_clean_mapped && cfg->delivery != CXLSSD_DELIVERY_TLB) {
        snprintf(err, errlen, "keep_clean_mapped: only with delivery=tlb "
                 "(the embedder must drop its own translations)");
        return NULL;
    }
    if (cfg->handler_threads < 1 || cfg->handler_threads > TRAP_MAX_HANDLERS) {
        snprintf(err, errlen, "handler-threads=%u: must be in 1..%d",
                 cfg->handler_threads, TRAP_MAX_HANDLERS);
        return NULL;
    }
    if (hooks && hooks->serialize_begin && !hooks->serialize_end) {
        snprintf(err, errlen, "cxl-ssd trap: serialize_begin without "
                 "serialize_end");
        return NULL;
    }
    const struct cxlssd_config *mc = cxlssd_model_config(model);
    uint64_t ps = mc->page_size;
    long hps = sysconf(_SC_PAGESIZE);
    if (ps == 0 || hps <= 0 || ps % (uint64_t)hps != 0) {
        snprintf(err, errlen, "page-size=%llu: must be a multiple of the "
                 "host page size (%ld)", (unsigned long long)ps, hps);
        return NULL;
    }
    if ((uintptr_t)base % ps != 0 || len % ps != 0) {
        snprintf(err, errlen, "cxl-ssd trap: range [%p, +0x%zx) is not "
                 "aligned to page-size=%llu", base, len,
                 (unsigned long long)ps);
        return NULL;
    }
    if (len / ps > cxlssd_model_pages(model)) {
        snprintf(err, errlen, "cxl-ssd trap: range of %llu pages exceeds the "
                 "model's %llu pages", (unsigned long long)(len / ps),
                 (unsigned long long)cxlssd_model_pages(model));
        return NULL;
    }

    struct cxlssd_trap *t = calloc(1, sizeof(*t));
    if (!t) {
        snprintf(err, errlen, "cxl-ssd trap: out of memory");
        return NULL;
    }
    t->model = model;
    t->base = base;
    t->len = len;
    t->page_size = ps;
    t->npages = len / ps;
    t->cfg = *cfg;
    t->handler_cpus = dup_or_null(cfg->handler_cpus);
    t->record_path = dup_or_null(cfg->record_path);
    t->mode_name = dup_or_null(cfg->mode_name);
    t->accel_name = dup_or_null(cfg->accel_name);
    t->cfg.handler_cpus = t->handler_cpus;
    t->cfg.record_path = t->record_path;
    t->cfg.mode_name = t->mode_name;
    t->cfg.accel_name = t->accel_name;
    if (hooks) {
        t->hooks = *hooks;
    }
    t->background = mc->eviction == CXLSSD_EVICTION_BACKGROUND;
    t->nhandlers = cfg->handler_threads;
    t->parties = t->nhandlers;     /* + the eviction worker, spares */
    atomic_store(&t->readers, t->nhandlers);
    t->uffd = -1;
    t->stop_efd = -1;
    t->memfd = -1;
    t->sigbus = cfg->delivery == CXLSSD_DELIVERY_SIGBUS;
    t->keep_clean = cfg->keep_clean_mapped &&
                    !(cfg->media_path && *cfg->media_path);
    t->sigbus_slot = -1;
    pthread_mutex_init(&t->ctl_lock, NULL);
    pthread_cond_init(&t->ctl_cond, NULL);
    pthread_mutex_init(&t->reset_lock, NULL);
    pthread_mutex_init(&t->evict_lock, NULL);
    pthread_cond_init(&t->evict_cond, NULL);
    snprintf(t->mechanism, sizeof(t->mechanism), "none");

    /* Validate the CPU list before touching the mapping. */
    if (cxlssd_trap_check_cpus(t->handler_cpus, err, errlen) < 0) {
        goto fail;
    }

    t->stop_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (t->stop_efd < 0) {
        snprintf(err, errlen, "cxl-ssd trap: eventfd: %s", strerror(errno));
        goto fail;
    }
    if (cfg->compensate) {
        t->fault_clock = trap_fault_clock_new(ps, err, errlen);
        if (!t->fault_clock) {
            goto fail;
        }
    }
    /* SIGBUS delivery: the miss service and the signal handler must be in
     * place before the range is registered (from then on an access raises
     * SIGBUS). */
    if (trap_media_open(t, err, errlen) < 0 ||
        records_start(t, err, errlen) < 0 ||
        service_start(t, err, errlen) < 0 ||
        (t->sigbus && trap_sigbus_attach(t, err, errlen) < 0) ||
        trap_uffd_open(t, err, errlen) < 0 ||
        trap_uffd_register(t, err, errlen) < 0 ||
        trap_evict_start(t, err, errlen) < 0 ||
        trap_handlers_start(t, err, errlen) < 0) {
        goto fail;
    }
    return t;

fail:
    trap_destroy(t);
    return NULL;
}

void cxlssd_trap_free(struct cxlssd_trap *t)
{
    if (t) {
        trap_destroy(t);
    }
}

bool cxlssd_trap_dirty_tracking(const struct cxlssd_trap *t)
{
    return t->wp;
}

const char *cxlssd_trap_dirty_mechanism(const struct cxlssd_trap *t)
{
    return t->mechanism;
}
