/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal: what the algorithm layer (lib/alg/model_from_algorithm.c, lib/alg/train.c) needs
 * of the model files (model_file.c, model layer). */
#ifndef DPDO_MODEL_FILE_IMPL_H
#define DPDO_MODEL_FILE_IMPL_H

#include "dpdo/model_file.h"
#include <stdint.h>

/* The provenance of a model built from a run in this process. Names become tokens (characters
 * outside [A-Za-z0-9._+-] become '_'); regularizer NULL = "none"; a non-finite parameter is
 * written 0. The privacy figure (eps, delta) is kept when eps is not NaN, eps >= 0 and
 * 0 <= delta < 1 (accountant NULL or "" is written "none"); otherwise the model is "not
 * private" (epsilon +inf, delta 0, accountant "none"). */
typedef struct {
    int64_t dim, rounds;
    const char *algorithm, *loss, *regularizer, *accountant;
    double rp[2], eps, delta;
} dpdo__model_record;

/* Fill m with x[r->dim] (TAKEN: freed by m later, or here on failure) and the record r; the
 * integrity is DPDO_MODEL_INTEGRITY_LOCAL. Returns DPDO_OK, DPDO_E_INVAL, DPDO_E_NUMERIC (a
 * non-finite entry: "the output's entry k is not finite") with the message in err. */
int dpdo__model_fill(dpdo_model *m, double *x, const dpdo__model_record *r, char *err);

/* Fill m with the binary runs runs[0..nruns) of one training: their vectors one after the other
 * (nruns = 1 for labels +1/-1 or ncls = 2 class ids, nruns = ncls >= 3 for one-vs-rest), the class
 * ids cls[ncls] (copied; 0: none), the node count, and as privacy the SUM of the runs' epsilons
 * and deltas (basic composition: every example is in every run; "composition basic" when
 * nruns > 1). The loss, regularizer, algorithm and accountant come from runs[0] (accountant
 * "mixed" when the runs' differ), the rounds are the largest. Returns DPDO_OK, DPDO_E_INVAL,
 * DPDO_E_NOMEM with the message in err. */
int dpdo__model_combine(dpdo_model *m, dpdo_model *const *runs, int64_t nruns, const int32_t *cls,
                        int64_t ncls, int64_t nodes, char *err);

/* Replace the weight vector of a one-vector model m by x[dim] (dim = the model's). Returns
 * DPDO_OK, DPDO_E_INVAL, DPDO_E_NUMERIC (a non-finite value) with the message in err. */
int dpdo__model_set_x(dpdo_model *m, const double *x, int64_t dim, char *err);

/* The entry of a public call on m from another file (dpdo_train): takes m's busy guard
 * (DPDO_E_MISUSE when busy), then fails with rc and "what: why" in m's message when rc != 0,
 * else returns fn(m, m's message buffer, ctx). DPDO_E_INVAL for a NULL or dead m. */
int dpdo__model_locked(dpdo_model *m, const char *what, int rc, const char *why,
                       int (*fn)(dpdo_model *, char *, void *), void *ctx);

#endif
