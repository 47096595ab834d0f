/* Validation cases and their table (vcase.h). */
#include "vcase.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "validate.h"

double validate_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) {
        return p;
    }
    size_t cap2 = *cap ? *cap * 2 : 64;
    void *q = realloc(p, cap2 * elem);
    if (!q) {
        fprintf(stderr, "validate: out of memory\n");
        exit(2);
    }
    *cap = cap2;
    return q;
}

void vlist_add(struct vlist *l, enum vcase_kind kind, double bound,
               double model, double reference, const char *ref,
               const char *unit, const char *fmt, ...)
{
    l->c = grow(l->c, &l->cap, l->n + 1, sizeof(*l->c));
    struct vcase *c = &l->c[l->n++];
    memset(c, 0, sizeof(*c));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->name, sizeof(c->name), fmt, ap);
    va_end(ap);
    snprintf(c->ref, sizeof(c->ref), "%s", ref);
    snprintf(c->unit, sizeof(c->unit), "%s", unit);
    c->model = model;
    c->reference = reference;
    c->bound = bound;
    c->kind = kind;
}

void vlist_note(struct vlist *l, const char *fmt, ...)
{
    l->notes = grow(l->notes, &l->capnotes, l->nnotes + 1,
                    sizeof(*l->notes));
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    l->notes[l->nnotes] = strdup(buf);
    if (!l->notes[l->nnotes]) {
        fprintf(stderr, "validate: out of memory\n");
        exit(2);
    }
    l->nnotes++;
}

void vlist_free(struct vlist *l)
{
    for (size_t i = 0; i < l->nnotes; i++) {
        free(l->notes[i]);
    }
    free(l->notes);
    free(l->c);
    memset(l, 0, sizeof(*l));
}

double vcase_error(const struct vcase *c)
{
    return c->model / c->reference - 1.0;
}

bool vcase_ok(const struct vcase *c)
{
    double e = vcase_error(c);
    if (c->kind == VCASE_INFO) {
        return true;
    }
    if (!isfinite(e)) {
        return false;
    }
    if (c->kind == VCASE_CEILING) {
        return e >= -c->bound && e <= VCASE_CEILING_SLACK;
    }
    return fabs(e) <= c->bound;
}

void vcase_bound_text(const struct vcase *c, char *buf, size_t len)
{
    if (c->kind == VCASE_INFO) {
        snprintf(buf, len, "none");
    } else if (c->kind == VCASE_CEILING) {
        snprintf(buf, len, "-%.2f%%..+%.1f%%", c->bound * 100,
                 VCASE_CEILING_SLACK * 100);
    } else {
        snprintf(buf, len, "+-%.2f%%", c->bound * 100);
    }
}

size_t vlist_print(const struct vlist *l, FILE *out)
{
    size_t failed = 0, cases = 0;
    fprintf(out, "%-46s %12s %12s %-6s %-15s %8s %14s %s\n", "case",
            "model", "reference", "unit", "reference_is", "error",
            "bound", "result");
    for (size_t i = 0; i < l->n; i++) {
        const struct vcase *c = &l->c[i];
        char b[32];
        vcase_bound_text(c, b, sizeof(b));
        bool ok = vcase_ok(c);
        cases += c->kind != VCASE_INFO;
        failed += !ok;
        fprintf(out, "%-46s %12.4f %12.4f %-6s %-15s %+7.2f%% %14s %s\n",
                c->name, c->model, c->reference, c->unit, c->ref,
                vcase_error(c) * 100, b,
                c->kind == VCASE_INFO ? "info" : ok ? "ok" : "FAILED");
    }
    if (l->nnotes) {
        fprintf(out, "\nreference inputs:\n");
        for (size_t i = 0; i < l->nnotes; i++) {
            fprintf(out, "  %s\n", l->notes[i]);
        }
    }
    fprintf(out, "\nvalidate_cases=%zu validate_failed=%zu\n", cases, failed);
    return failed;
}
