/* SPDX-License-Identifier: BSD-3-Clause */
/* Losses: built-in hinge/logistic/squared (phi kind, evaluated by the data
 * layer's fused kernel dpdo__lin_grad) and user losses of the phi, batch
 * and model kinds. */
#include "../data/vmath_impl.h"
#include "model_impl.h"
#include <float.h>
#include <math.h>
#include <string.h>

/* ---- built-in phi ---------------------------------------------------------
 * Each returns d phi / d margin and stores phi in *loss. */

/* hinge: max(0, 1 - y m); at the kink y m == 1 the subgradient 0 is chosen
 * (the papers leave it open; docs/model.md). 1 - y m > 0 exactly
 * when y m < 1 in floating point, so the choice is exact. */
double dpdo__phi_hinge(const void *ctx, double m, double y, double *loss)
{
    (void)ctx;
    double z = 1.0 - y * m;
    if (z > 0.0) {
        *loss = z;
        return -y;
    }
    *loss = 0.0;
    return 0.0;
}

/* logistic: log(1 + exp(s)), s = -y m, as max(s,0) + log1p(exp(-|s|))
 * (the Fed-PLT paper, Sec. VII); the derivative -y sigma(s) with sigma evaluated from
 * exp(-|s|), so neither overflows for |m| = 1000 or more. */
double dpdo__phi_logistic(const void *ctx, double m, double y, double *loss)
{
    (void)ctx;
    double s = -y * m;
    double e = dpdo__exp_neg(s < 0 ? s : -s); /* in [0, 1]; the batch kernel's exp, bit for bit */
    *loss = (s > 0.0 ? s : 0.0) + dpdo__log1p01(e);
    double sig = (s >= 0.0 ? 1.0 : e) / (1.0 + e);
    return -y * sig;
}

double dpdo__phi_squared(const void *ctx, double m, double y, double *loss)
{
    (void)ctx;
    double r = m - y;
    *loss = 0.5 * r * r;
    return r;
}

static inline double xlogx(double s)
{
    return s > 0.0 ? s * log(s) : 0.0;
}

double dpdo__phi_conjugate(int builtin, double u, double y)
{
    switch (builtin) {
    case DPDO__LOSS_HINGE: {
        double s = -u / y;
        if (s < -1e-15 || s > 1.0 + 1e-15) return INFINITY;
        return -fmin(fmax(s, 0.0), 1.0);
    }
    case DPDO__LOSS_LOGISTIC: {
        double s = -u / y;
        if (s < -1e-15 || s > 1.0 + 1e-15) return INFINITY;
        s = fmin(fmax(s, 0.0), 1.0);
        return xlogx(s) + xlogx(1.0 - s);
    }
    case DPDO__LOSS_SQUARED:
        return 0.5 * u * u + u * y;
    default:
        return NAN;
    }
}

/* built-in type objects: the phi callbacks below only make the type objects
 * complete (the library calls the dpdo__phi_* kernels directly) */
static int bt_hinge(void *user, double m, double y, double *l, double *d)
{
    (void)user;
    *d = dpdo__phi_hinge(NULL, m, y, l);
    return 0;
}
static int bt_logistic(void *user, double m, double y, double *l, double *d)
{
    (void)user;
    *d = dpdo__phi_logistic(NULL, m, y, l);
    return 0;
}
static int bt_squared(void *user, double m, double y, double *l, double *d)
{
    (void)user;
    *d = dpdo__phi_squared(NULL, m, y, l);
    return 0;
}
static int bb_hinge(void *user, double mb, double yb, double *d1, double *d2)
{
    (void)user;
    (void)mb;
    *d1 = yb;
    *d2 = INFINITY;
    return 0;
}
static int bb_logistic(void *user, double mb, double yb, double *d1, double *d2)
{
    (void)user;
    (void)mb;
    *d1 = yb;
    *d2 = 0.25 * yb * yb;
    return 0;
}
static int bb_squared(void *user, double mb, double yb, double *d1, double *d2)
{
    (void)user;
    *d1 = mb + yb;
    *d2 = 1.0;
    return 0;
}

static const dpdo_loss_type builtin_types[DPDO__LOSS_NBUILTIN] = {
    {sizeof(dpdo_loss_type), "hinge", bt_hinge, NULL, NULL, bb_hinge, NULL, NULL},
    {sizeof(dpdo_loss_type), "logistic", bt_logistic, NULL, NULL, bb_logistic, NULL, NULL},
    {sizeof(dpdo_loss_type), "squared", bt_squared, NULL, NULL, bb_squared, NULL, NULL},
};
static const dpdo__phi_fn builtin_phi[DPDO__LOSS_NBUILTIN] = {dpdo__phi_hinge, dpdo__phi_logistic,
                                                              dpdo__phi_squared};

static int builtin_index(const dpdo_loss_type *t)
{
    return dpdo__table_index(builtin_types, sizeof builtin_types[0], DPDO__LOSS_NBUILTIN, t);
}

DPDO_API const dpdo_loss_type *dpdo_loss_type_find(const char *name)
{
    return dpdo__table_find(builtin_types, sizeof builtin_types[0], DPDO__LOSS_NBUILTIN, name);
}

DPDO_API const dpdo_loss_type *dpdo_loss_type_next(const dpdo_loss_type *prev)
{
    return dpdo__table_next(builtin_types, sizeof builtin_types[0], DPDO__LOSS_NBUILTIN, prev);
}

DPDO_API const char *dpdo_loss_type_name(const dpdo_loss_type *type)
{
    return type && type->name ? type->name : "(null)";
}

/* ---- life cycle ------------------------------------------------------------ */

#define HAS(l, field)                                                                              \
    ((l)->tsize >= offsetof(dpdo_loss_type, field) + sizeof((l)->type->field) && (l)->type->field)

DPDO_API int dpdo_loss_create(dpdo_loss **out, const dpdo_loss_type *type, void *user, int64_t dim)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (!type || dim < 1) return DPDO_E_INVAL;
    int b = builtin_index(type);
    int kind = DPDO_LOSS_KIND_PHI;
    if (b >= 0) {
        if (user) return DPDO_E_INVAL;
    } else {
        if (type->struct_size < offsetof(dpdo_loss_type, model) + sizeof(type->model))
            return DPDO_E_VERSION;
        if (!type->name || !type->name[0]) return DPDO_E_INVAL;
        int nk = (type->phi != NULL) + (type->batch != NULL) + (type->model != NULL);
        if (nk != 1) return DPDO_E_INVAL;
        kind = type->phi ? DPDO_LOSS_KIND_PHI
                         : (type->batch ? DPDO_LOSS_KIND_BATCH : DPDO_LOSS_KIND_MODEL);
        b = DPDO__LOSS_USER;
    }
    size_t nbytes;
    if (!dpdo__mul_size((size_t)dim, 2 * sizeof(double), &nbytes)) return DPDO_E_NOMEM;
    struct dpdo_loss *l = dpdo__calloc(1, sizeof *l);
    if (!l) return DPDO_E_NOMEM;
    l->magic = DPDO__MAGIC_LOSS;
    l->scratch = dpdo__alloc(nbytes);
    if (!l->scratch) {
        dpdo__free(l);
        return DPDO_E_NOMEM;
    }
    l->type = type;
    l->builtin = b;
    l->kind = kind;
    l->user = user;
    l->dim = dim;
    l->tsize = type->struct_size;
    *out = l;
    return DPDO_OK;
}

static void loss_free(struct dpdo_loss *loss)
{
    if (loss->builtin == DPDO__LOSS_USER && HAS(loss, release)) loss->type->release(loss->user);
    dpdo__free(loss->scratch);
    dpdo__free(loss);
}

DPDO_API void dpdo_loss_destroy(dpdo_loss *loss)
{
    if (!loss || !DPDO__LIVE(loss, DPDO__MAGIC_LOSS)) return; /* NULL or destroyed */
    DPDO__KILL(loss);
    if (loss->borrowers > 0) {
        loss->doomed = 1; /* freed by the last borrowing node */
        return;
    }
    loss_free(loss);
}

void dpdo__loss_retain(struct dpdo_loss *l)
{
    l->borrowers++;
}

void dpdo__loss_release(struct dpdo_loss *l)
{
    if (l && --l->borrowers == 0 && l->doomed) loss_free(l);
}

DPDO_API const char *dpdo_loss_errmsg(const dpdo_loss *loss)
{
    return loss ? loss->errmsg : DPDO__NULL_TEXT("dpdo_loss_errmsg", "loss");
}
DPDO_API int64_t dpdo_loss_dim(const dpdo_loss *loss)
{
    return loss ? loss->dim : 0;
}
DPDO_API const char *dpdo_loss_name(const dpdo_loss *loss)
{
    return loss ? loss->type->name : "(null)";
}
DPDO_API int dpdo_loss_kind(const dpdo_loss *loss)
{
    return loss ? loss->kind : -1;
}

/* ---- scalar phi ----------------------------------------------------------- */

DPDO_API int dpdo_loss_phi(dpdo_loss *loss, double margin, double label, double *value,
                           double *dloss)
{
    if (!loss) return DPDO_E_INVAL;
    if (loss->kind != DPDO_LOSS_KIND_PHI)
        return dpdo__err(loss->errmsg, DPDO_E_UNSUPPORTED, "loss '%s' is not of the phi kind",
                         loss->type->name);
    if (!isfinite(margin) || !isfinite(label))
        return dpdo__err(loss->errmsg, DPDO_E_INVAL, "margin %g and label %g must be finite",
                         margin, label);
    double l = 0.0, d = 0.0;
    if (loss->builtin >= 0) {
        d = builtin_phi[loss->builtin](NULL, margin, label, &l);
    } else {
        int rc = loss->type->phi(loss->user, margin, label, &l, &d);
        if (rc)
            return dpdo__err(loss->errmsg, DPDO_E_CALLBACK, "loss '%s': phi callback returned %d",
                             loss->type->name, rc);
    }
    if (!isfinite(l) || !isfinite(d))
        return dpdo__err(loss->errmsg, DPDO_E_NUMERIC, "loss '%s': phi(%g, %g) = %g, phi' = %g",
                         loss->type->name, margin, label, l, d);
    if (value) *value = l;
    if (dloss) *dloss = d;
    return DPDO_OK;
}

/* ---- evaluation -------------------------------------------------------------- */

/* Context for user phi callbacks inside the kernel: the first failure is
 * remembered and later samples are skipped (their contribution is void). */
struct user_phi_ctx {
    const struct dpdo_loss *loss;
    int rc;
    double bad_margin, bad_label;
};

static double user_phi(const void *ctx, double m, double y, double *loss)
{
    struct user_phi_ctx *c = (struct user_phi_ctx *)ctx;
    *loss = 0.0;
    if (c->rc) return 0.0;
    double l = 0.0, d = 0.0;
    int rc = c->loss->type->phi(c->loss->user, m, y, &l, &d);
    if (rc) {
        c->rc = rc;
        c->bad_margin = m;
        c->bad_label = y;
        return 0.0;
    }
    *loss = l;
    return d;
}

int dpdo__loss_check_x(const struct dpdo_loss *loss, const struct dpdo_shard *sh, const double *x,
                       int64_t dim, const int64_t *idx, int64_t m, double clip, char *err)
{
    if (!x) return dpdo__err(err, DPDO_E_INVAL, "x is NULL");
    if (dim != loss->dim)
        return dpdo__err(err, DPDO_E_INVAL, "x has dimension %lld, the loss %lld", (long long)dim,
                         (long long)loss->dim);
    if (isnan(clip) || clip < 0.0)
        return dpdo__err(err, DPDO_E_INVAL, "clip bound %g must be >= 0 (0: no clipping)", clip);
    if (loss->kind == DPDO_LOSS_KIND_MODEL) {
        if (idx || m != 0)
            return dpdo__err(err, DPDO_E_UNSUPPORTED,
                             "model-kind loss '%s' evaluates the whole objective only (no "
                             "mini-batches)",
                             loss->type->name);
        if (clip > 0.0)
            return dpdo__err(err, DPDO_E_UNSUPPORTED,
                             "model-kind loss '%s' has no per-sample gradients to clip",
                             loss->type->name);
    } else {
        if (!sh) return dpdo__err(err, DPDO_E_INVAL, "shard is NULL");
        if (loss->kind == DPDO_LOSS_KIND_PHI && sh->parent->d != dim)
            return dpdo__err(err, DPDO_E_INVAL,
                             "x has dimension %lld, the shard's data %lld features", (long long)dim,
                             (long long)sh->parent->d);
        if (!idx && m != 0)
            return dpdo__err(err, DPDO_E_INVAL, "idx is NULL but m = %lld (use m = 0 for all rows)",
                             (long long)m);
        if (idx) {
            if (m < 1)
                return dpdo__err(err, DPDO_E_INVAL, "mini-batch size m = %lld < 1", (long long)m);
            for (int64_t k = 0; k < m; k++)
                if (idx[k] < 0 || idx[k] >= sh->n)
                    return dpdo__err(err, DPDO_E_INVAL,
                                     "idx[%lld] = %lld is not a local sample index in [0, %lld)",
                                     (long long)k, (long long)idx[k], (long long)sh->n);
        }
    }
    size_t bad = dpdo__first_nonfinite(x, (size_t)dim);
    if (bad < (size_t)dim)
        return dpdo__err(err, DPDO_E_INVAL, "x[%zu] is %s", bad, isnan(x[bad]) ? "NaN" : "Inf");
    return DPDO_OK;
}

enum { CHUNK = 256 };

/* tc: the node's transposed copy for a full batch (kernels_l8.c), or NULL */
/* A phi-kind loss's derivative function and its context (NULL for a built-in loss) */
static dpdo__phi_fn phi_of(const struct dpdo_loss *loss, struct user_phi_ctx *uc)
{
    *uc = (struct user_phi_ctx){loss, 0, 0.0, 0.0};
    return loss->builtin >= 0 ? builtin_phi[loss->builtin] : user_phi;
}
#define PHI_CTX(loss, uc) ((loss)->builtin >= 0 ? NULL : (const void *)(uc))

/* The kernels bound |phi'| * ||a|| (with the stored row norm) by their clip argument; the
 * Euclidean norm of the rounded vector phi' * a can exceed that by about (d/2 + 2) ulps, so the
 * bound is shrunk by (d + 8) eps to make every computed per-sample norm <= clip (0: no clip). */
static double clip_bound(double clip, int64_t dim)
{
    return clip == INFINITY ? 0.0 : clip * (1.0 - (double)(dim + 8) * DBL_EPSILON);
}

/* DPDO_E_CALLBACK for a failed user phi callback */
static int phi_cb_err(const struct dpdo_loss *loss, const struct user_phi_ctx *uc, char *err)
{
    return dpdo__err(err, DPDO_E_CALLBACK,
                     "loss '%s': phi callback returned %d (margin %g, label %g)", loss->type->name,
                     uc->rc, uc->bad_margin, uc->bad_label);
}

static int eval_core(const struct dpdo_loss *loss, const struct dpdo_shard *sh,
                     const struct dpdo__tcopy *tc, const double *x, const int64_t *idx, int64_t m,
                     double clip, double *value, double *grad, int64_t *nclipped, double *scratch,
                     char *err, int direct)
{
    const int64_t dim = loss->dim;
    double *acc = direct && grad ? grad : scratch, *tmp = scratch + dim;
    double lsum = 0.0;
    int64_t ncl = 0;
    const char *name = loss->type->name;

    if (loss->kind == DPDO_LOSS_KIND_MODEL) {
        double v = 0.0;
        if (grad)
            memset(acc, 0,
                   (size_t)dim * sizeof *acc); /* defined even if the callback skips entries */
        int rc = loss->type->model(loss->user, x, dim, &v, grad ? acc : NULL);
        if (rc)
            return dpdo__err(err, DPDO_E_CALLBACK, "loss '%s': model callback returned %d", name,
                             rc);
        if (!isfinite(v) || (grad && !dpdo__all_finite(acc, (size_t)dim)))
            return dpdo__err(err, DPDO_E_NUMERIC, "loss '%s': non-finite value or gradient", name);
        if (value) *value = v;
        if (grad && grad != acc) memcpy(grad, acc, (size_t)dim * sizeof *grad);
        if (nclipped) *nclipped = 0;
        return DPDO_OK;
    }

    const int64_t count = idx ? m : sh->n;
    const double inv = 1.0 / (double)count;
    int64_t rows[CHUNK];
    int finite = -1; /* 1/0: the one-row kernel tested the gradient; -1: test it below */
    /* one sampled row of a linear loss other than the built-in logistic (whose kernels have
     * their own path): zeroing, gradient and its finiteness test in one pass (the same bits) */
    if (grad && idx && count == 1 && loss->kind == DPDO_LOSS_KIND_PHI &&
        loss->builtin != DPDO__LOSS_LOGISTIC) {
        struct user_phi_ctx uc;
        dpdo__phi_fn phi = phi_of(loss, &uc);
        double ls = 0.0;
        if (dpdo__lin_grad1(sh->parent, dpdo__shard_row(sh, idx[0]), x, phi, PHI_CTX(loss, &uc),
                            clip_bound(clip, dim), inv, acc, &ls, &ncl, &finite)) {
            lsum += ls;
            if (uc.rc) return phi_cb_err(loss, &uc, err);
            goto done;
        }
    }
    memset(acc, 0, (size_t)dim * sizeof *acc);

    if (loss->kind == DPDO_LOSS_KIND_PHI) {
        const struct dpdo_dataset *ds = sh->parent;
        struct user_phi_ctx uc;
        dpdo__phi_fn phi = phi_of(loss, &uc);
        const void *ctx = PHI_CTX(loss, &uc);
        const double sc = grad ? inv : 0.0; /* scale 0: the kernel skips the axpy */
        const double clipb = clip_bound(clip, dim);
        /* the built-in logistic loss on short dense rows: one vectorised pass (loss values only
         * when asked for) */
        const int logit = loss->builtin == DPDO__LOSS_LOGISTIC;
        if (loss->builtin >= 0 && !idx && dpdo__full8_applies(ds)) {
            /* a full batch of short dense rows, built-in loss: 8 lanes (kernels_l8.c; its own
             * summation order) */
            int kind = DPDO__L8_SQUARED;
            if (logit) kind = DPDO__L8_LOGISTIC;
            if (loss->builtin == DPDO__LOSS_HINGE) kind = DPDO__L8_HINGE;
            dpdo__lin_grad_full8(ds, sh->rows, sh->first, count, tc, kind, x, clipb, sc, acc,
                                 value ? &lsum : NULL, &ncl, -1);
        } else if (!idx && sh->rows) {
            if (!logit || !dpdo__lin_grad_logistic(ds, sh->rows, count, x, clipb, sc, acc,
                                                   value ? &lsum : NULL, &ncl))
                dpdo__lin_grad(ds, sh->rows, count, x, phi, ctx, clipb, sc, acc, &lsum, &ncl);
        } else {
            for (int64_t off = 0; off < count; off += CHUNK) {
                int64_t k = count - off < CHUNK ? count - off : CHUNK;
                for (int64_t j = 0; j < k; j++)
                    rows[j] = dpdo__shard_row(sh, idx ? idx[off + j] : off + j);
                double ls = 0.0;
                int64_t nc = 0;
                if (!logit || !dpdo__lin_grad_logistic(ds, rows, k, x, clipb, sc, acc,
                                                       value ? &ls : NULL, &nc))
                    dpdo__lin_grad(ds, rows, k, x, phi, ctx, clipb, sc, acc, &ls, &nc);
                lsum += ls;
                ncl += nc;
            }
        }
        if (uc.rc) return phi_cb_err(loss, &uc, err);
    } else { /* batch kind */
        if (clip > 0.0 && clip < INFINITY) {
            for (int64_t k = 0; k < count; k++) {
                int64_t r = dpdo__shard_row(sh, idx ? idx[k] : k);
                double ls = 0.0;
                if (grad) memset(tmp, 0, (size_t)dim * sizeof *tmp);
                int rc = loss->type->batch(loss->user, x, dim, &r, 1, &ls, grad ? tmp : NULL);
                if (rc)
                    return dpdo__err(err, DPDO_E_CALLBACK,
                                     "loss '%s': batch callback returned %d (dataset row %lld)",
                                     name, rc, (long long)r);
                lsum += ls;
                if (grad) {
                    double s2 = 0.0;
                    for (int64_t j = 0; j < dim; j++)
                        s2 += tmp[j] * tmp[j];
                    double nrm = sqrt(s2), f = 1.0;
                    if (nrm > clip) {
                        f = clip / nrm;
                        /* make sure the rescaled norm does not exceed clip by rounding */
                        while (f > 0.0) {
                            double t2 = 0.0;
                            for (int64_t j = 0; j < dim; j++)
                                t2 += (tmp[j] * f) * (tmp[j] * f);
                            if (sqrt(t2) <= clip) break;
                            f = nextafter(f, 0.0);
                        }
                        ncl++;
                    } else if (!(nrm == nrm)) {
                        f = 1.0; /* NaN: reported below */
                    }
                    for (int64_t j = 0; j < dim; j++)
                        acc[j] += (tmp[j] * f) * inv;
                }
            }
        } else {
            for (int64_t off = 0; off < count; off += CHUNK) {
                int64_t k = count - off < CHUNK ? count - off : CHUNK;
                for (int64_t j = 0; j < k; j++)
                    rows[j] = dpdo__shard_row(sh, idx ? idx[off + j] : off + j);
                double ls = 0.0;
                int rc = loss->type->batch(loss->user, x, dim, rows, k, &ls, grad ? acc : NULL);
                if (rc)
                    return dpdo__err(err, DPDO_E_CALLBACK,
                                     "loss '%s': batch callback returned %d (rows %lld..)", name,
                                     rc, (long long)rows[0]);
                lsum += ls;
            }
            if (grad)
                for (int64_t j = 0; j < dim; j++)
                    acc[j] *= inv;
        }
    }
done:;
    double v = lsum * inv;
    if (!isfinite(v)) return dpdo__err(err, DPDO_E_NUMERIC, "loss '%s': mean loss is %g", name, v);
    if (grad && (finite == 0 || (finite < 0 && !dpdo__all_finite(acc, (size_t)dim))))
        return dpdo__err(err, DPDO_E_NUMERIC, "loss '%s': gradient is not finite", name);
    if (value) *value = v;
    if (grad && grad != acc) memcpy(grad, acc, (size_t)dim * sizeof *grad);
    if (nclipped) *nclipped = ncl;
    return DPDO_OK;
}

int dpdo__loss_row1_ok(const struct dpdo_loss *loss, const struct dpdo_shard *sh)
{
    return loss->kind == DPDO_LOSS_KIND_PHI && loss->builtin != DPDO__LOSS_LOGISTIC &&
           sh->parent->layout == DPDO__DS_DENSE;
}

int dpdo__loss_row1(const struct dpdo_loss *loss, const struct dpdo_shard *sh, const double *x,
                    int64_t idx0, double clip, double *coef, const double **row, char *err)
{
    const struct dpdo_dataset *ds = sh->parent;
    if (!dpdo__loss_row1_ok(loss, sh)) return 0;
    /* eval_core's steps for a batch of one row (inv = 1) */
    struct user_phi_ctx uc;
    dpdo__phi_fn phi = phi_of(loss, &uc);
    double ls = 0.0;
    int64_t ncl = 0, r = dpdo__shard_row(sh, idx0);
    *coef = dpdo__lin_coef1(ds, r, x, phi, PHI_CTX(loss, &uc), clip_bound(clip, loss->dim), 1.0,
                            &ls, &ncl);
    *row = ds->X + (size_t)r * (size_t)ds->d;
    if (uc.rc) return phi_cb_err(loss, &uc, err);
    if (!isfinite(ls)) /* the mean of one value: ls itself (0 + ls is ls when it is not finite) */
        return dpdo__err(err, DPDO_E_NUMERIC, "loss '%s': mean loss is %g", loss->type->name, ls);
    return 1;
}

int dpdo__loss_err_grad(const struct dpdo_loss *loss, char *err)
{
    return dpdo__err(err, DPDO_E_NUMERIC, "loss '%s': gradient is not finite", loss->type->name);
}

int dpdo__loss_eval(const struct dpdo_loss *loss, const struct dpdo_shard *sh, const double *x,
                    const int64_t *idx, int64_t m, double clip, double *value, double *grad,
                    int64_t *nclipped, double *scratch, char *err)
{
    return eval_core(loss, sh, NULL, x, idx, m, clip, value, grad, nclipped, scratch, err, 0);
}

static int eval_node(struct dpdo_node *nd, const double *x, const int64_t *idx, int64_t m,
                     double clip, double *value, double *grad, int64_t *nclipped, char *err,
                     int direct)
{
    const struct dpdo__tcopy *tc =
        idx ? NULL : atomic_load_explicit(&nd->tcopy, memory_order_acquire);
    return eval_core(nd->loss, nd->shard, tc, x, idx, m, clip, value, grad, nclipped, nd->scratch,
                     err, direct);
}

int dpdo__loss_eval_node(struct dpdo_node *nd, const double *x, const int64_t *idx, int64_t m,
                         double clip, double *value, double *grad, int64_t *nclipped, char *err)
{
    return eval_node(nd, x, idx, m, clip, value, grad, nclipped, err, 0);
}

int dpdo__loss_eval_node_into(struct dpdo_node *nd, const double *x, const int64_t *idx, int64_t m,
                              double clip, double *value, double *grad, int64_t *nclipped,
                              char *err)
{
    return eval_node(nd, x, idx, m, clip, value, grad, nclipped, err, 1);
}

int dpdo__loss_eval_into(const struct dpdo_loss *loss, const struct dpdo_shard *sh, const double *x,
                         const int64_t *idx, int64_t m, double clip, double *value, double *grad,
                         int64_t *nclipped, double *scratch, char *err)
{
    return eval_core(loss, sh, NULL, x, idx, m, clip, value, grad, nclipped, scratch, err, 1);
}

DPDO_API int dpdo_loss_eval(dpdo_loss *loss, dpdo_shard *shard, const double *x, int64_t dim,
                            const int64_t *idx, int64_t m, double clip, double *value, double *grad,
                            int64_t *nclipped)
{
    if (!loss) return DPDO_E_INVAL;
    int rc = dpdo__loss_check_x(loss, shard, x, dim, idx, m, clip, loss->errmsg);
    if (rc) return rc;
    return dpdo__loss_eval(loss, shard, x, idx, m, clip, value, grad, nclipped, loss->scratch,
                           loss->errmsg);
}

int dpdo__loss_constants(struct dpdo_loss *loss, const struct dpdo_shard *sh, double radius,
                         double *lip, double *smooth, char *err)
{
    const char *name = loss->type->name;
    if (isnan(radius) || !(radius > 0.0))
        return dpdo__err(err, DPDO_E_INVAL, "radius %g must be > 0 (may be +Inf)", radius);
    if (loss->kind == DPDO_LOSS_KIND_PHI) {
        if (!sh) return dpdo__err(err, DPDO_E_INVAL, "shard is NULL");
        if (loss->builtin < 0 && !HAS(loss, phi_bounds))
            return dpdo__err(err, DPDO_E_UNSUPPORTED, "loss '%s' has no phi_bounds callback", name);
        const struct dpdo_dataset *ds = sh->parent;
        double R = 0.0, Y = 0.0;
        for (int64_t k = 0; k < sh->n; k++) {
            int64_t r = dpdo__shard_row(sh, k);
            R = fmax(R, ds->row_norm[r]);
            Y = fmax(Y, fabs(ds->y[r]));
        }
        double mb = R == 0.0 ? 0.0 : radius * R;
        double d1 = 0.0, d2 = 0.0;
        int rc = loss->type->phi_bounds(loss->user, mb, Y, &d1, &d2);
        if (rc)
            return dpdo__err(err, DPDO_E_CALLBACK, "loss '%s': phi_bounds callback returned %d",
                             name, rc);
        if (isnan(d1) || isnan(d2) || d1 < 0 || d2 < 0)
            return dpdo__err(err, DPDO_E_NUMERIC, "loss '%s': phi bounds %g, %g are invalid", name,
                             d1, d2);
        *lip = R == 0.0 ? 0.0 : d1 * R;
        *smooth = R == 0.0 ? 0.0 : d2 * R * R;
        return DPDO_OK;
    }
    if (!HAS(loss, constants))
        return dpdo__err(err, DPDO_E_UNSUPPORTED, "loss '%s' has no constants callback", name);
    double a = 0.0, b = 0.0;
    int rc = loss->type->constants(loss->user, &a, &b);
    if (rc)
        return dpdo__err(err, DPDO_E_CALLBACK, "loss '%s': constants callback returned %d", name,
                         rc);
    if (isnan(a) || isnan(b) || a < 0 || b < 0)
        return dpdo__err(err, DPDO_E_NUMERIC, "loss '%s': constants %g, %g are invalid", name, a,
                         b);
    *lip = a;
    *smooth = b;
    return DPDO_OK;
}

DPDO_API int dpdo_loss_lipschitz(dpdo_loss *loss, dpdo_shard *shard, double radius, double *out)
{
    if (!loss) return DPDO_E_INVAL;
    if (!out) return dpdo__err(loss->errmsg, DPDO_E_INVAL, "out is NULL");
    double a, b;
    int rc = dpdo__loss_constants(loss, shard, radius, &a, &b, loss->errmsg);
    if (rc) return rc;
    *out = a;
    return DPDO_OK;
}

DPDO_API int dpdo_loss_smoothness(dpdo_loss *loss, dpdo_shard *shard, double radius, double *out)
{
    if (!loss) return DPDO_E_INVAL;
    if (!out) return dpdo__err(loss->errmsg, DPDO_E_INVAL, "out is NULL");
    double a, b;
    int rc = dpdo__loss_constants(loss, shard, radius, &a, &b, loss->errmsg);
    if (rc) return rc;
    *out = b;
    return DPDO_OK;
}
