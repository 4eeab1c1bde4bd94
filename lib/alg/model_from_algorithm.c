/* SPDX-License-Identifier: BSD-3-Clause */
/* dpdo_model_from_algorithm (include/dpdo/model_file.h): the part of model files that needs a
 * run -- its averaged output, loss, regularizer, name, round and rigorous privacy figure --
 * handed to the model layer (lib/model/model_file.c) through dpdo__model_fill. */
#include "../engine/engine_impl.h"
#include "../model/model_file_impl.h"
#include "../model/model_impl.h"
#include <math.h>

static int from_algorithm(dpdo_model *m, char *err, void *ctx)
{
    dpdo_algorithm *alg = ctx;
    if (!alg) return dpdo__err(err, DPDO_E_INVAL, "algorithm is NULL");
    dpdo__eng *e = dpdo__algorithm_eng(alg);
    if (!e || e->n < 1 || e->d < 1)
        return dpdo__err(err, DPDO_E_STATE, "the algorithm is not set up (EMPTY)");
    if (e->d > DPDO_MODEL_MAX_DIM)
        return dpdo__err(err, DPDO_E_INVAL, "dimension %lld exceeds DPDO_MODEL_MAX_DIM",
                         (long long)e->d);
    double *x = dpdo__alloc_array((size_t)e->d, sizeof(double));
    if (!x) return dpdo__err(err, DPDO_E_NOMEM, "out of memory for %lld values", (long long)e->d);
    int rc = dpdo_algorithm_get_output(alg, DPDO_NODE_ALL, x, e->d);
    if (rc) {
        dpdo__free(x);
        return dpdo__err(err, rc, "cannot read the algorithm's output: %s",
                         dpdo_algorithm_errmsg(alg));
    }
    dpdo__model_record r = {0};
    r.dim = e->d;
    r.rounds = dpdo_algorithm_round(alg);
    r.algorithm = dpdo_algorithm_name(alg);
    r.loss = dpdo_loss_name(e->nodes[0]->loss);
    if (e->reg) {
        r.regularizer = dpdo_regularizer_name(e->reg);
        r.rp[0] = e->reg->p[0];
        r.rp[1] = e->reg->p[1];
    }
    r.eps = NAN;
    if (e->acc && dpdo_algorithm_privacy(alg, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &r.eps,
                                         &r.delta, NULL) == DPDO_OK)
        r.accountant = dpdo_algorithm_privacy_source(alg, DPDO_PRIVACY_RIGOROUS);
    return dpdo__model_fill(m, x, &r, err);
}

DPDO_API int dpdo_model_from_algorithm(dpdo_model *m, dpdo_algorithm *alg)
{
    return dpdo__model_locked(m, "dpdo_model_from_algorithm", DPDO_OK, NULL, from_algorithm, alg);
}
