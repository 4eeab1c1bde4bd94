/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target for the model-file parser (dpdo_model_parse, the same code
 * as dpdo_model_load after reading the file). On success the invariants are
 * checked (dimension in [1, DPDO_MODEL_MAX_DIM], finite x, names non-empty,
 * epsilon >= 0, delta in [0, 1)) and the model predicts on a small dataset
 * with finite results; on failure the status must be DPDO_E_FORMAT or
 * DPDO_E_NOMEM and the handle must keep its previous model. Corpus:
 * tests/fuzz/corpus_model. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "dpdo/dataset.h"
#include "dpdo/model_file.h"
#include "dpdo/status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dpdo_model *m = NULL;
    if (dpdo_model_create(&m) != DPDO_OK) return 0;
    static const double x0[2] = {0.5, -2};
    if (dpdo_model_set(m, x0, 2, "logistic", "seed") != DPDO_OK) abort();
    int rc = dpdo_model_parse(m, (const char *)data, size, "fuzz");
    if (rc == DPDO_OK) {
        int64_t d = dpdo_model_dim(m);
        if (d < 1 || d > DPDO_MODEL_MAX_DIM) abort();
        double *x = malloc((size_t)d * sizeof *x);
        if (!x || dpdo_model_get_x(m, x, d) != DPDO_OK) abort();
        for (int64_t j = 0; j < d; j++)
            if (!isfinite(x[j])) abort();
        free(x);
        double eps = -1, delta = -1;
        if (dpdo_model_privacy(m, &eps, &delta) != DPDO_OK || !(eps >= 0) || !(delta >= 0 && delta < 1))
            abort();
        const char *f[5] = {"loss", "regularizer", "algorithm", "accountant", "library"};
        for (int k = 0; k < 5; k++)
            if (!*dpdo_model_text(m, f[k])) abort();
        dpdo_dataset *ds = NULL;
        double X[2] = {1, -1}, y[2] = {1, -1}, out[2];
        if (dpdo_dataset_create(&ds) == DPDO_OK && dpdo_dataset_set_dense(ds, 2, 1, X, y, DPDO_COPY) == DPDO_OK) {
            if (dpdo_model_predict(m, ds, DPDO_PREDICT_MARGIN, out, 2) != DPDO_OK) abort();
            if (!isfinite(out[0]) || !isfinite(out[1])) abort();
            rc = dpdo_model_predict(m, ds, DPDO_PREDICT_PROBABILITY, out, 2);
            if (rc == DPDO_OK && !(out[0] >= 0 && out[0] <= 1)) abort();
            if (rc != DPDO_OK && rc != DPDO_E_UNSUPPORTED) abort();
        }
        dpdo_dataset_destroy(ds);
    } else {
        if (rc != DPDO_E_FORMAT && rc != DPDO_E_NOMEM) abort();
        double x[2];
        if (dpdo_model_get_x(m, x, 2) != DPDO_OK || x[0] != 0.5 || x[1] != -2) abort();
    }
    dpdo_model_destroy(m);
    return 0;
}
