/* SPDX-License-Identifier: BSD-3-Clause */
/* The reference solver's evaluations (reference_impl.h): the objective, its smooth part and
 * gradient, and the duality-gap certificate of linear models with built-in losses (the
 * weak-duality argument at the top of reference.c). */
#include "reference_impl.h"
#include <float.h>
#include <math.h>
#include <string.h>

/* ---- evaluation helpers ------------------------------------------------------ */

/* Nesterov-smoothed hinge with parameter mu (ctx points to mu):
 * phi_mu(m) = max_{s in [0,1]} s (1 - y m) - mu s^2 / 2; derivative -y s*. */
static double phi_shinge(const void *ctx, double m, double y, double *loss)
{
    double mu = *(const double *)ctx;
    double z = 1.0 - y * m;
    if (z <= 0.0) {
        *loss = 0.0;
        return 0.0;
    }
    if (z >= mu) {
        *loss = z - 0.5 * mu;
        return -y;
    }
    *loss = z * z / (2.0 * mu);
    return -y * (z / mu);
}

enum { CH = 256 };

/* kernel over all rows of a shard: grad += scale * sum_k phi'(..) a_k; returns sum of losses */
static double shard_pass(const struct dpdo_shard *sh, const double *x, dpdo__phi_fn phi,
                         const void *ctx, double scale, double *grad)
{
    double lsum = 0.0;
    if (sh->rows) {
        dpdo__lin_grad(sh->parent, sh->rows, sh->n, x, phi, ctx, 0.0, scale, grad, &lsum, NULL);
        return lsum;
    }
    int64_t rows[CH];
    for (int64_t off = 0; off < sh->n; off += CH) {
        int64_t k = sh->n - off < CH ? sh->n - off : CH;
        for (int64_t j = 0; j < k; j++)
            rows[j] = sh->first + off + j;
        double ls = 0.0;
        dpdo__lin_grad(sh->parent, rows, k, x, phi, ctx, 0.0, scale, grad, &ls, NULL);
        lsum += ls;
    }
    return lsum;
}

/* f(x) = sum_i omega_i f_i(x) (hinge smoothed with mu_s if mu_s > 0); g may be NULL. */
int dpdo__ref_f_eval(struct dpdo_reference *r, const double *x, double mu_s, double *f, double *g)
{
    const int64_t d = r->dim;
    double *t = wv(r, 6);
    double fs = 0.0;
    if (g) memset(g, 0, (size_t)d * sizeof *g);
    for (int32_t i = 0; i < r->n; i++) {
        struct dpdo_node *nd = r->nodes[i];
        double w = r->omega[i];
        if (w == 0.0) continue;
        if (mu_s > 0.0 && is_builtin_phi(nd) && nd->loss->builtin == DPDO__LOSS_HINGE) {
            double c = w / (double)nd->shard->n;
            fs += c * shard_pass(nd->shard, x, phi_shinge, &mu_s, g ? c : 0.0, g ? g : t);
            continue;
        }
        double v = 0.0;
        int rc = dpdo__loss_eval(nd->loss, nd->shard, x, NULL, 0, 0.0, &v, g ? t : NULL, NULL,
                                 nd->scratch, r->errmsg);
        if (rc) return rc;
        fs += w * v;
        if (g)
            for (int64_t j = 0; j < d; j++)
                g[j] += w * t[j];
    }
    if (!isfinite(fs)) return dpdo__err(r->errmsg, DPDO_E_NUMERIC, "objective is not finite");
    *f = fs;
    return DPDO_OK;
}

/* F = f + h (true losses) */
int dpdo__ref_F_eval(struct dpdo_reference *r, const double *x, double *F)
{
    double f, h;
    int rc = dpdo__ref_f_eval(r, x, 0.0, &f, NULL);
    if (rc) return rc;
    rc = dpdo__reg_value(r->reg, x, &h, r->errmsg);
    if (rc) return rc;
    *F = f + h;
    return DPDO_OK;
}

/* Duality gap at x (see the file comment). mu_s > 0: hinge dual point from
 * its smoothing. Returns +Inf if no finite bound is available. */
struct gap_ctx {
    int builtin;
    double theta, mu_s;
    double primal; /* sum of true losses over the pass */
};

static double phi_gap(const void *vctx, double m, double y, double *conj)
{
    struct gap_ctx *c = (struct gap_ctx *)vctx; /* the kernel passes ctx through untouched */
    double l, u;
    switch (c->builtin) {
    case DPDO__LOSS_HINGE: {
        u = dpdo__phi_hinge(NULL, m, y, &l);
        if (c->mu_s > 0.0) {
            double dummy;
            u = phi_shinge(&c->mu_s, m, y, &dummy);
        }
        break;
    }
    case DPDO__LOSS_LOGISTIC:
        u = dpdo__phi_logistic(NULL, m, y, &l);
        break;
    default:
        u = dpdo__phi_squared(NULL, m, y, &l);
        break;
    }
    c->primal += l;
    u *= c->theta;
    *conj = dpdo__phi_conjugate(c->builtin, u, y);
    return u;
}

double dpdo__ref_gap_at(struct dpdo_reference *r, const double *x, double mu_s)
{
    if (!r->gap_ok) return INFINITY;
    const int64_t d = r->dim;
    double *v = wv(r, 5), *t = wv(r, 6);
    double primal = 0.0, conj = 0.0;
    memset(v, 0, (size_t)d * sizeof *v);
    for (int32_t i = 0; i < r->n; i++) {
        struct dpdo_node *nd = r->nodes[i];
        double c = r->omega[i] / (double)nd->shard->n;
        struct gap_ctx gc = {nd->loss->builtin, 1.0, mu_s, 0.0};
        conj += c * shard_pass(nd->shard, x, phi_gap, &gc, c, v);
        primal += c * gc.primal;
    }
    for (int64_t j = 0; j < d; j++)
        t[j] = -v[j];
    double theta = dpdo__reg_dual_scale(r->reg, t);
    if (theta < 1.0) {
        conj = 0.0;
        memset(v, 0, (size_t)d * sizeof *v);
        for (int32_t i = 0; i < r->n; i++) {
            struct dpdo_node *nd = r->nodes[i];
            double c = r->omega[i] / (double)nd->shard->n;
            struct gap_ctx gc = {nd->loss->builtin, theta, mu_s, 0.0};
            conj += c * shard_pass(nd->shard, x, phi_gap, &gc, c, v);
        }
        for (int64_t j = 0; j < d; j++)
            t[j] = -v[j];
    }
    int ok = 0;
    double hs = dpdo__reg_conjugate(r->reg, t, &ok);
    double hx = 0.0;
    if (!ok || dpdo__reg_value(r->reg, x, &hx, NULL) != DPDO_OK) return INFINITY;
    double gap = primal + hx + conj + hs;
    if (isnan(gap)) return INFINITY;
    return gap < 0.0 ? 0.0 : gap;
}

double dpdo__ref_nrm(const double *v, int64_t n)
{
    double s = 0.0;
    for (int64_t j = 0; j < n; j++)
        s += v[j] * v[j];
    return sqrt(s);
}

double dpdo__ref_dot(const double *a, const double *b, int64_t n)
{
    double s = 0.0;
    for (int64_t j = 0; j < n; j++)
        s += a[j] * b[j];
    return s;
}
