/* SPDX-License-Identifier: BSD-3-Clause */
/* Copy-out getters (state rows, iterate, output, active flags, counters) and the objective
 * helpers. */
#include "eng_handle.h"
#include <math.h>
#include <string.h>

static int getter_check(const dpdo_algorithm *a, int64_t node, const double *x, int64_t dim,
                        const char *what)
{
    if (!a) return DPDO_E_INVAL;
    char *msg = ((dpdo_algorithm *)a)->errmsg;
    if (!a->e) return dpdo__err(msg, DPDO_E_STATE, "%s: the algorithm is EMPTY", what);
    if (!x) return dpdo__err(msg, DPDO_E_INVAL, "%s: the output buffer is NULL", what);
    if (dim != a->e->d)
        return dpdo__err(msg, DPDO_E_INVAL, "%s: dim = %lld, the algorithm's dimension is %lld",
                         what, (long long)dim, (long long)a->e->d);
    if (node != DPDO_NODE_ALL && (node < 0 || node >= a->e->n))
        return dpdo__err(msg, DPDO_E_INVAL, "%s: node %lld is not in [0, %lld) or DPDO_NODE_ALL",
                         what, (long long)node, (long long)a->e->n);
    return DPDO_OK;
}

static void row_or_mean(const dpdo__block *b, int64_t node, double *x)
{
    size_t d = (size_t)b->cols;
    if (b->rows == 1) node = 0; /* a single public model: every node's iterate */
    if (node >= 0) {
        memcpy(x, b->cur + (size_t)node * d, d * sizeof(double));
        return;
    }
    memcpy(x, b->cur, d * sizeof(double));
    for (int64_t i = 1; i < b->rows; i++) {
        const double *r = b->cur + (size_t)i * d;
        for (size_t k = 0; k < d; k++)
            x[k] += r[k];
    }
    for (size_t k = 0; k < d; k++)
        x[k] /= (double)b->rows;
}

static int algorithm_get_state_body(const dpdo_algorithm *a, const char *name, int64_t node,
                                    double *x, int64_t dim)
{
    const dpdo__block *b = a && a->e && name ? dpdo__eng_find_block(a->e, name) : NULL;
    int one = b && b->rows == 1; /* a coordinator (global) row */
    int rc = getter_check(a, one ? DPDO_NODE_ALL : node, x, dim, "get_state");
    if (rc) return rc;
    if (!b || b->cols != a->e->d) {
        char list[128] = "";
        for (int i = 0; i < a->e->nblk; i++)
            if (a->e->blk[i].name && a->e->blk[i].cols == a->e->d) {
                strncat(list, list[0] ? ", " : "", sizeof list - strlen(list) - 1);
                strncat(list, a->e->blk[i].name, sizeof list - strlen(list) - 1);
            }
        return dpdo__err(((dpdo_algorithm *)a)->errmsg, DPDO_E_INVAL,
                         "get_state: no state named \"%s\" in %s (names: %s)",
                         name ? name : "(null)", a->vt->name, list);
    }
    if (one) {
        if (node != DPDO_NODE_ALL && node != DPDO_NODE_COORDINATOR)
            return dpdo__err(
                ((dpdo_algorithm *)a)->errmsg, DPDO_E_INVAL,
                "get_state: \"%s\" is the coordinator's; use node DPDO_NODE_COORDINATOR", name);
        memcpy(x, b->cur, (size_t)b->cols * sizeof(double));
        return DPDO_OK;
    }
    row_or_mean(b, node, x);
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_get_state(const dpdo_algorithm *a, const char *name, int64_t node,
                                      double *x, int64_t dim)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 0, "dpdo_algorithm_get_state",
                  algorithm_get_state_body(a, name, node, x, dim));
}

static int algorithm_get_iterate_body(const dpdo_algorithm *a, int64_t node, double *x, int64_t dim)
{
    int rc = getter_check(a, node, x, dim, "get_iterate");
    if (rc) return rc;
    row_or_mean(dpdo__eng_find_block(a->e, "x"), node, x);
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_get_iterate(const dpdo_algorithm *a, int64_t node, double *x,
                                        int64_t dim)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 0, "dpdo_algorithm_get_iterate",
                  algorithm_get_iterate_body(a, node, x, dim));
}

void dpdo__eng_output_all(const dpdo__eng *e, double *x)
{
    size_t d = (size_t)e->d;
    e->vt->output(e, e->priv, 0, x);
    for (int64_t i = 1; i < e->n; i++) {
        e->vt->output(e, e->priv, i, e->tmp_a);
        for (size_t k = 0; k < d; k++)
            x[k] += e->tmp_a[k];
    }
    for (size_t k = 0; k < d; k++)
        x[k] /= (double)e->n;
}

static int algorithm_get_output_body(const dpdo_algorithm *a, int64_t node, double *x, int64_t dim)
{
    int rc = getter_check(a, node, x, dim, "get_output");
    if (rc) return rc;
    if (node >= 0)
        a->e->vt->output(a->e, a->e->priv, node, x);
    else
        dpdo__eng_output_all(a->e, x);
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_get_output(const dpdo_algorithm *a, int64_t node, double *x,
                                       int64_t dim)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 0, "dpdo_algorithm_get_output",
                  algorithm_get_output_body(a, node, x, dim));
}

static int algorithm_get_active_body(const dpdo_algorithm *a, int32_t *flags, int64_t n)
{
    if (!a) return DPDO_E_INVAL;
    if (!a->e)
        return dpdo__err(((dpdo_algorithm *)a)->errmsg, DPDO_E_STATE,
                         "get_active: the algorithm is EMPTY");
    if (!flags || n != a->e->n)
        return dpdo__err(((dpdo_algorithm *)a)->errmsg, DPDO_E_INVAL,
                         "get_active: need flags[%lld] (got %s, n = %lld)", (long long)a->e->n,
                         flags ? "a buffer" : "NULL", (long long)n);
    for (int64_t i = 0; i < n; i++)
        flags[i] = a->e->last_active[i];
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_get_active(const dpdo_algorithm *a, int32_t *flags, int64_t n)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 0, "dpdo_algorithm_get_active",
                  algorithm_get_active_body(a, flags, n));
}

static int algorithm_comm_body(const dpdo_algorithm *a, int64_t node, int64_t *messages,
                               int64_t *scalars, int64_t *bytes)
{
    if (!a) return DPDO_E_INVAL;
    if (!a->e)
        return dpdo__err(((dpdo_algorithm *)a)->errmsg, DPDO_E_STATE,
                         "comm: the algorithm is EMPTY");
    const dpdo__eng *e = a->e;
    int64_t v[3] = {0, 0, 0};
    if (node == DPDO_NODE_ALL) {
        for (int64_t i = 0; i <= e->n; i++)
            for (int k = 0; k < 3; k++)
                v[k] += e->comm[i][k];
    } else if (node == DPDO_NODE_COORDINATOR) {
        for (int k = 0; k < 3; k++)
            v[k] = e->comm[e->n][k];
    } else if (node >= 0 && node < e->n) {
        for (int k = 0; k < 3; k++)
            v[k] = e->comm[node][k];
    } else {
        return dpdo__err(
            ((dpdo_algorithm *)a)->errmsg, DPDO_E_INVAL,
            "comm: node %lld is not in [0, %lld), DPDO_NODE_ALL or DPDO_NODE_COORDINATOR",
            (long long)node, (long long)e->n);
    }
    if (messages) *messages = v[0];
    if (scalars) *scalars = v[1];
    if (bytes) *bytes = v[2];
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_comm(const dpdo_algorithm *a, int64_t node, int64_t *messages,
                                 int64_t *scalars, int64_t *bytes)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 0, "dpdo_algorithm_comm",
                  algorithm_comm_body(a, node, messages, scalars, bytes));
}

/* ---- objective helpers ------------------------------------------------------------------- */

static int objective_of(dpdo_algorithm *a, const double *x, double *F)
{
    if (!a->e->ref)
        return dpdo__err(
            a->errmsg, DPDO_E_UNSUPPORTED,
            "objective: some nodes are remote (their data is on other processes): evaluate each "
            "process's nodes with dpdo_node_eval and add the parts");
    int rc = dpdo_reference_objective(a->e->ref, x, a->e->d, F);
    if (rc) return dpdo__err(a->errmsg, rc, "objective: %s", dpdo_reference_errmsg(a->e->ref));
    if (isnan(*F)) return dpdo__err(a->errmsg, DPDO_E_NUMERIC, "objective: the value is NaN");
    return DPDO_OK;
}

static int algorithm_objective_body(dpdo_algorithm *a, int point, int64_t node, double *F)
{
    if (!a || !F) return DPDO_E_INVAL;
    if (!a->e) return dpdo__err(a->errmsg, DPDO_E_STATE, "objective: the algorithm is EMPTY");
    if (point != DPDO_POINT_ITERATE && point != DPDO_POINT_OUTPUT)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "objective: point %d is not a DPDO_POINT_* value",
                         point);
    double *x = a->e->tmp_b;
    int rc = point == DPDO_POINT_ITERATE ? dpdo_algorithm_get_iterate(a, node, x, a->e->d)
                                         : dpdo_algorithm_get_output(a, node, x, a->e->d);
    if (rc) return rc;
    return objective_of(a, x, F);
}

DPDO_API int dpdo_algorithm_objective(dpdo_algorithm *a, int point, int64_t node, double *F)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 0, "dpdo_algorithm_objective",
                  algorithm_objective_body(a, point, node, F));
}

static int algorithm_suboptimality_body(dpdo_algorithm *a, int point, int64_t node, double fstar,
                                        double *gap)
{
    if (!a || !gap) return DPDO_E_INVAL;
    if (!isfinite(fstar))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "suboptimality: fstar = %g is not finite", fstar);
    double F;
    int rc = dpdo_algorithm_objective(a, point, node, &F);
    if (rc) return rc;
    *gap = F - fstar;
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_suboptimality(dpdo_algorithm *a, int point, int64_t node, double fstar,
                                          double *gap)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 0, "dpdo_algorithm_suboptimality",
                  algorithm_suboptimality_body(a, point, node, fstar, gap));
}

static int algorithm_objective_at_body(dpdo_algorithm *a, const double *x, int64_t dim, double *F)
{
    if (!a || !F) return DPDO_E_INVAL;
    int rc = getter_check(a, 0, x, dim, "objective_at");
    if (rc) return rc;
    if (!dpdo__all_finite(x, (size_t)dim))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "objective_at: x[%zu] is not finite",
                         dpdo__first_nonfinite(x, (size_t)dim));
    return objective_of(a, x, F);
}

DPDO_API int dpdo_algorithm_objective_at(dpdo_algorithm *a, const double *x, int64_t dim, double *F)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 0, "dpdo_algorithm_objective_at",
                  algorithm_objective_at_body(a, x, dim, F));
}
