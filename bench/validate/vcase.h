/*
 * Validation cases: one figure of the model against a reference figure,
 * with the bound its relative error must stay within.  The case runners
 * (validate.h) append to a list; validate.c prints it as a table,
 * test_validate.c as TAP.
 */
#ifndef CXLSSD_VALIDATE_VCASE_H
#define CXLSSD_VALIDATE_VCASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum vcase_kind {
    VCASE_BOTH,         /* |model / reference - 1| <= bound */
    VCASE_CEILING,      /* the reference is an upper bound the model must
                         * not pass: -bound <= error <= VCASE_CEILING_SLACK */
    VCASE_INFO,         /* no bound: the reference models something the
                         * model deliberately does differently (the row
                         * shows by how much; docs/validation.md says
                         * why) */
};

/* What a ceiling may be passed by: the measurement window's edges (one
 * request more or less in a window of hundreds of thousands). */
#define VCASE_CEILING_SLACK 0.001

struct vcase {
    char name[64];
    char ref[20];               /* which reference */
    char unit[8];
    double model, reference;
    double bound;               /* relative */
    enum vcase_kind kind;
};

struct vlist {
    struct vcase *c;
    size_t n, cap;
    char **notes;               /* reference inputs, printed after the table */
    size_t nnotes, capnotes;
};

void vlist_add(struct vlist *l, enum vcase_kind kind, double bound,
               double model, double reference, const char *ref,
               const char *unit, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));
void vlist_note(struct vlist *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void vlist_free(struct vlist *l);

double vcase_error(const struct vcase *c);      /* model / reference - 1 */
bool vcase_ok(const struct vcase *c);
/* "+-2.00%", "-5.00%..+0.1%" or "none" */
void vcase_bound_text(const struct vcase *c, char *buf, size_t len);

/* The table, the notes and the line validate_cases=N validate_failed=M
 * (informational rows are not cases); returns the failed count. */
size_t vlist_print(const struct vlist *l, FILE *out);

#endif
