/*
 * TAP: the short validation (validate.h, VALIDATE_SHORT; `validate
 * --short` prints the same cases as a table): one test per case, which
 * fails when the model's error against the reference exceeds the case's
 * bound.  Informational rows (no bound) and the reference inputs are
 * diagnostics; validate_cases= and validate_failed= close the log.
 */
#include "validate.h"

#include "tap.h"

int main(void)
{
    struct vlist l = { 0 };
    size_t cases = 0, failed = 0;
    validate_nand(&l, VALIDATE_SHORT);
    validate_cache(&l, VALIDATE_SHORT);
    validate_gc(&l, VALIDATE_SHORT);
    for (size_t i = 0; i < l.n; i++) {
        const struct vcase *c = &l.c[i];
        char b[32];
        vcase_bound_text(c, b, sizeof(b));
        if (c->kind == VCASE_INFO) {
            tap_diag("%s vs %s: model %.4f reference %.4f error %+.2f%% "
                     "(no bound)", c->name, c->ref, c->model, c->reference,
                     vcase_error(c) * 100);
            continue;
        }
        cases++;
        failed += !tap_ok(vcase_ok(c), "%s vs %s: model %.4f reference %.4f "
                          "%s error %+.2f%% bound %s", c->name, c->ref,
                          c->model, c->reference, c->unit,
                          vcase_error(c) * 100, b);
    }
    for (size_t i = 0; i < l.nnotes; i++) {
        tap_diag("%s", l.notes[i]);
    }
    printf("validate_cases=%zu\nvalidate_failed=%zu\n", cases, failed);
    vlist_free(&l);
    return tap_done();
}
