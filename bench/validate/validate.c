/*
 * `make validate`: the model library against published analytic models
 * and independent reference simulations (docs/validation.md).
 *
 *   validate [--short] [gc] [nand] [cache]
 *
 * Runs the named groups (all three by default) and prints one row per
 * case (model, reference, relative error, bound), the reference inputs,
 * then validate_cases=N validate_failed=M and validate_wall_s=S.  Exit
 * status 1 if a case is outside its bound.  --short runs the version
 * that `make test` runs (test_validate.c).
 */
#include "validate.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: validate [--short] [gc] [nand] [cache]\n");
}

int main(int argc, char **argv)
{
    enum vlevel level = VALIDATE_FULL;
    bool gc = false, nand = false, cache = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--short")) {
            level = VALIDATE_SHORT;
        } else if (!strcmp(argv[i], "gc")) {
            gc = true;
        } else if (!strcmp(argv[i], "nand")) {
            nand = true;
        } else if (!strcmp(argv[i], "cache")) {
            cache = true;
        } else if (!strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "validate: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (!gc && !nand && !cache) {
        gc = nand = cache = true;
    }
    double t0 = validate_now_s();
    struct vlist l = { 0 };
    if (nand) {
        validate_nand(&l, level);
    }
    if (cache) {
        validate_cache(&l, level);
    }
    if (gc) {
        validate_gc(&l, level);
    }
    size_t failed = vlist_print(&l, stdout);
    printf("validate_wall_s=%.1f\n", validate_now_s() - t0);
    vlist_free(&l);
    return failed ? 1 : 0;
}
