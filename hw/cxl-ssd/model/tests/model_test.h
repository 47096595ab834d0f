/*
 * What the model's and the trap engine's tests share: a model made from
 * a configuration, its error reported when it cannot be made.
 * Header-only.
 */
#ifndef CXLSSD_MODEL_TEST_H
#define CXLSSD_MODEL_TEST_H

#include "../model.h"
#include "tap.h"

/* A model from @c; NULL on failure, with the reason as the TAP
 * diagnostic "@what: <error>". */
static inline struct cxlssd_model *test_model_new(const struct cxlssd_config *c,
                                                  const char *what)
{
    char err[256];
    struct cxlssd_model *m = cxlssd_model_new(c, err, sizeof(err));
    if (!m) {
        tap_diag("%s: %s", what, err);
    }
    return m;
}

#endif
