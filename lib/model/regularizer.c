/* SPDX-License-Identifier: BSD-3-Clause */
/* Regularizers: value, gradient, prox, modulus, the DP-DDA dual-averaging
 * map (the DP-DDA paper, eq. (6)) and the conjugates the reference
 * solver's duality gap needs. Built-ins are ordinary type objects whose
 * `user` is the handle itself (so they prove the extension point works). */
#include "model_impl.h"
#include <float.h>
#include <math.h>
#include <string.h>

/* ---- small vector helpers ------------------------------------------------ */

/* ||v||_2 without overflow or harmful underflow (scaled two-pass). */
static double nrm2(const double *v, int64_t n)
{
    double amax = 0.0;
    for (int64_t j = 0; j < n; j++) {
        double a = fabs(v[j]);
        if (a > amax) amax = a;
    }
    if (amax == 0.0 || !isfinite(amax)) return amax;
    double s = 0.0;
    if (amax > 1e150 || amax < 1e-150) {
        double inv = 1.0 / amax;
        for (int64_t j = 0; j < n; j++) {
            double t = v[j] * inv;
            s += t * t;
        }
        return amax * sqrt(s);
    }
    for (int64_t j = 0; j < n; j++)
        s += v[j] * v[j];
    return sqrt(s);
}

static inline double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

/* out = v * r / ||v|| if ||v|| > r, rounded so that ||out|| <= r(1+8eps) holds. */
static void proj_ball(const double *v, int64_t n, double r, double *out)
{
    double nv = nrm2(v, n);
    if (nv <= r) {
        if (out != v) memcpy(out, v, (size_t)n * sizeof *v);
        return;
    }
    double s = r / nv;
    for (int64_t j = 0; j < n; j++)
        out[j] = v[j] * s;
}

/* ---- fedplt-nonconvex: scalar prox of lambda u^2/(1+u^2) ---------------
 * phi(u) = lambda u^2/(1+u^2) + (u - a)^2/(2t), a = |v| >= 0. The minimiser
 * lies in [0, a] (h is even and increasing in |u|). With s = u^2,
 *   phi'(u)  = 2 lambda u / (1+s)^2 + (u - a)/t,
 *   phi''(u) = lambda (2 - 6 s)/(1+s)^3 + 1/t.
 * r''(u) = (2-6s)/(1+s)^3 decreases on [0,1] (to its minimum -1/2 at u = 1)
 * and increases on [1, inf) towards 0 (its derivative is 24u(s-1)/(1+s)^4).
 * So if 1/t >= lambda/2, phi' is increasing: one stationary point. Otherwise
 * phi'' has one zero p in (0,1) and one q in (1,inf), phi' increases on
 * [0,p], decreases on [p,q], increases on [q,inf): at most two local minima
 * (one per increasing piece) — the zeros of phi'' are the roots of the cubic
 * (1+s)^3 = lambda t (6s - 2) in s = u^2. We find every local minimum by a
 * safeguarded Newton/bisection on each increasing piece and keep the one
 * with the smaller phi (ties: smaller u). */
static inline double ncvx_d1(double u, double a, double lambda, double t)
{
    double s = u * u;
    double q = 1.0 + s;
    return 2.0 * lambda * u / (q * q) + (u - a) / t;
}

static inline double ncvx_d2(double u, double lambda, double t)
{
    double s = u * u;
    double r2;
    if (s > 1e100)
        r2 = -6.0 / (s * s);
    else {
        double q = 1.0 + s;
        r2 = (2.0 - 6.0 * s) / (q * q * q);
    }
    return lambda * r2 + 1.0 / t;
}

static inline double ncvx_obj(double u, double a, double lambda, double t)
{
    double s = u * u;
    double h = s > 1e300 ? lambda : lambda * s / (1.0 + s);
    double d = u - a;
    return h + d * d / (2.0 * t);
}

/* Root of the increasing function phi' on [lo, hi] with phi'(lo) <= 0 <= phi'(hi). */
static double ncvx_root(double lo, double hi, double a, double lambda, double t)
{
    double u = 0.5 * (lo + hi);
    for (int it = 0; it < 400; it++) {
        double g = ncvx_d1(u, a, lambda, t);
        if (g == 0.0) return u;
        if (g < 0.0)
            lo = u;
        else
            hi = u;
        double h2 = ncvx_d2(u, lambda, t);
        double un = (h2 > 0.0) ? u - g / h2 : NAN;
        if (!(un > lo && un < hi)) un = 0.5 * (lo + hi);
        if (un == u || hi - lo <= 2.0 * DBL_EPSILON * fmax(fabs(hi), DBL_MIN)) {
            u = un;
            break;
        }
        u = un;
    }
    return u;
}

/* Zero of phi'' on [lo,hi] where phi'' is monotone; `incr` says its direction. */
static double ncvx_d2_zero(double lo, double hi, int incr, double lambda, double t)
{
    for (int it = 0; it < 200; it++) {
        double mid = 0.5 * (lo + hi);
        if (mid <= lo || mid >= hi) break;
        double v = ncvx_d2(mid, lambda, t);
        if ((v < 0.0) == (incr != 0))
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

double dpdo__ncvx_prox1(double v, double lambda, double t)
{
    if (lambda == 0.0 || v == 0.0) return v;
    double a = fabs(v);
    double best;
    if (1.0 / t >= 0.5 * lambda) {
        best = ncvx_root(0.0, a, a, lambda, t);
    } else {
        double p = ncvx_d2_zero(0.0, 1.0, 0, lambda, t);
        double Q = 2.0;
        while (ncvx_d2(Q, lambda, t) <= 0.0 && Q < 1e300)
            Q *= 2.0;
        double q = ncvx_d2_zero(1.0, Q, 1, lambda, t);
        /* candidates: a root on [0, min(p,a)] and one on [q, a] (if q < a) */
        double cand[2];
        int nc = 0;
        double e1 = fmin(p, a);
        if (ncvx_d1(e1, a, lambda, t) >= 0.0) cand[nc++] = ncvx_root(0.0, e1, a, lambda, t);
        if (q < a && ncvx_d1(q, a, lambda, t) <= 0.0) cand[nc++] = ncvx_root(q, a, a, lambda, t);
        if (nc == 0) {
            /* cannot happen mathematically (phi'(0) < 0 < phi'(a) makes some
             * increasing piece cross zero); be safe with bisection on [0,a] */
            cand[nc++] = ncvx_root(0.0, a, a, lambda, t);
        }
        best = cand[0];
        if (nc == 2) {
            double f0 = ncvx_obj(cand[0], a, lambda, t), f1 = ncvx_obj(cand[1], a, lambda, t);
            if (f1 < f0) best = cand[1];
        }
    }
    return v < 0 ? -best : best;
}

/* ---- built-in callbacks (user == the handle) ------------------------------ */

static int b_value(void *user, const double *x, int64_t n, double *out)
{
    const struct dpdo_regularizer *r = user;
    double s = 0.0;
    switch (r->kind) {
    case DPDO__REG_NONE:
        break;
    case DPDO__REG_L2: {
        double nx = nrm2(x, n);
        s = 0.5 * r->p[0] * nx * nx;
        break;
    }
    case DPDO__REG_L1:
        for (int64_t j = 0; j < n; j++)
            s += fabs(x[j]);
        s *= r->p[0];
        break;
    case DPDO__REG_EN: {
        double a = 0.0;
        for (int64_t j = 0; j < n; j++)
            a += fabs(x[j]);
        double nx = nrm2(x, n);
        s = r->p[0] * a + 0.5 * r->p[1] * nx * nx;
        break;
    }
    case DPDO__REG_BALL:
        s = nrm2(x, n) <= r->p[0] * (1.0 + 8.0 * DBL_EPSILON) ? 0.0 : INFINITY;
        break;
    case DPDO__REG_BOX:
        for (int64_t j = 0; j < n; j++)
            if (x[j] < r->p[0] || x[j] > r->p[1]) s = INFINITY;
        break;
    case DPDO__REG_NCVX:
        for (int64_t j = 0; j < n; j++) {
            double q = x[j] * x[j];
            s += q > 1e300 ? 1.0 : q / (1.0 + q);
        }
        s *= r->p[0];
        break;
    }
    *out = s;
    return 0;
}

static int b_grad(void *user, const double *x, int64_t n, double *g)
{
    const struct dpdo_regularizer *r = user;
    switch (r->kind) {
    case DPDO__REG_NONE:
        for (int64_t j = 0; j < n; j++)
            g[j] = 0.0;
        break;
    case DPDO__REG_L2:
        for (int64_t j = 0; j < n; j++)
            g[j] = r->p[0] * x[j];
        break;
    case DPDO__REG_L1: /* only with lambda == 0 (checked by the caller) */
        for (int64_t j = 0; j < n; j++)
            g[j] = 0.0;
        break;
    case DPDO__REG_EN: /* only with lambda1 == 0 */
        for (int64_t j = 0; j < n; j++)
            g[j] = r->p[1] * x[j];
        break;
    case DPDO__REG_NCVX:
        for (int64_t j = 0; j < n; j++) {
            double q = 1.0 + x[j] * x[j];
            g[j] = r->p[0] * 2.0 * x[j] / (q * q);
        }
        break;
    default:
        return 1;
    }
    return 0;
}

static int b_prox(void *user, const double *v, int64_t n, double t, double *out)
{
    const struct dpdo_regularizer *r = user;
    switch (r->kind) {
    case DPDO__REG_NONE:
        if (out != v) memcpy(out, v, (size_t)n * sizeof *v);
        break;
    case DPDO__REG_L2: {
        double c = 1.0 / (1.0 + t * r->p[0]);
        for (int64_t j = 0; j < n; j++)
            out[j] = v[j] * c;
        break;
    }
    case DPDO__REG_L1: {
        double tau = t * r->p[0];
        for (int64_t j = 0; j < n; j++)
            out[j] = dpdo__soft(v[j], tau);
        break;
    }
    case DPDO__REG_EN: {
        double tau = t * r->p[0], c = 1.0 / (1.0 + t * r->p[1]);
        for (int64_t j = 0; j < n; j++)
            out[j] = dpdo__soft(v[j], tau) * c;
        break;
    }
    case DPDO__REG_BALL:
        proj_ball(v, n, r->p[0], out);
        break;
    case DPDO__REG_BOX:
        for (int64_t j = 0; j < n; j++)
            out[j] = clampd(v[j], r->p[0], r->p[1]);
        break;
    case DPDO__REG_NCVX:
        for (int64_t j = 0; j < n; j++)
            out[j] = dpdo__ncvx_prox1(v[j], r->p[0], t);
        break;
    default:
        return 1;
    }
    return 0;
}

double dpdo__reg_modulus_builtin(const struct dpdo_regularizer *r)
{
    switch (r->kind) {
    case DPDO__REG_L2:
        return r->p[0];
    case DPDO__REG_EN:
        return r->p[1];
    case DPDO__REG_NCVX:
        return -0.5 * r->p[0];
    default:
        return 0.0;
    }
}

static int b_modulus(void *user, double *mu)
{
    *mu = dpdo__reg_modulus_builtin(user);
    return 0;
}

#define BTYPE(nm)                                                                                  \
    {                                                                                              \
        sizeof(dpdo_regularizer_type), nm, b_value, b_grad, b_prox, b_modulus, NULL                \
    }
static const dpdo_regularizer_type builtin_types[DPDO__REG_NBUILTIN] = {BTYPE("none"),
                                                                        BTYPE("l2"),
                                                                        BTYPE("l1"),
                                                                        BTYPE("elastic-net"),
                                                                        BTYPE("l2-ball"),
                                                                        BTYPE("box"),
                                                                        BTYPE("fedplt-nonconvex")};
static const int builtin_nparams[DPDO__REG_NBUILTIN] = {0, 1, 1, 2, 1, 2, 1};

static int builtin_index(const dpdo_regularizer_type *t)
{
    return dpdo__table_index(builtin_types, sizeof builtin_types[0], DPDO__REG_NBUILTIN, t);
}

DPDO_API const dpdo_regularizer_type *dpdo_regularizer_type_find(const char *name)
{
    return dpdo__table_find(builtin_types, sizeof builtin_types[0], DPDO__REG_NBUILTIN, name);
}

DPDO_API const dpdo_regularizer_type *dpdo_regularizer_type_next(const dpdo_regularizer_type *prev)
{
    return dpdo__table_next(builtin_types, sizeof builtin_types[0], DPDO__REG_NBUILTIN, prev);
}

DPDO_API const char *dpdo_regularizer_type_name(const dpdo_regularizer_type *type)
{
    return type && type->name ? type->name : "(null)";
}

/* ---- life cycle ---------------------------------------------------------- */

static int check_params(int kind, const double *p, char *err)
{
    for (int k = 0; k < builtin_nparams[kind]; k++)
        if (isnan(p[k])) return dpdo__err(err, DPDO_E_INVAL, "parameter %d is NaN", k);
    switch (kind) {
    case DPDO__REG_L2:
    case DPDO__REG_L1:
    case DPDO__REG_NCVX:
        if (!isfinite(p[0]) || p[0] < 0)
            return dpdo__err(err, DPDO_E_INVAL, "lambda %g must be finite and >= 0", p[0]);
        break;
    case DPDO__REG_EN:
        for (int k = 0; k < 2; k++)
            if (!isfinite(p[k]) || p[k] < 0)
                return dpdo__err(err, DPDO_E_INVAL, "lambda%d %g must be finite and >= 0", k + 1,
                                 p[k]);
        break;
    case DPDO__REG_BALL:
        if (!isfinite(p[0]) || p[0] <= 0)
            return dpdo__err(err, DPDO_E_INVAL, "radius %g must be finite and > 0", p[0]);
        break;
    case DPDO__REG_BOX:
        if (p[0] > p[1])
            return dpdo__err(err, DPDO_E_INVAL, "box lower bound %g exceeds upper bound %g", p[0],
                             p[1]);
        if (p[0] == INFINITY || p[1] == -INFINITY)
            return dpdo__err(err, DPDO_E_INVAL, "box [%g, %g] is empty", p[0], p[1]);
        break;
    default:
        break;
    }
    return DPDO_OK;
}

DPDO_API int dpdo_regularizer_create(dpdo_regularizer **out, const dpdo_regularizer_type *type,
                                     void *user, int64_t dim, const double *params, int64_t nparams)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (!type) return DPDO_E_INVAL;
    if (dim < 1) return DPDO_E_INVAL;
    int kind = builtin_index(type);
    double p[2] = {0.0, 0.0};
    if (kind >= 0) {
        if (user) return DPDO_E_INVAL;
        if (nparams != builtin_nparams[kind] || (nparams > 0 && !params)) return DPDO_E_INVAL;
        for (int64_t k = 0; k < nparams; k++)
            p[k] = params[k];
        if (check_params(kind, p, NULL) != DPDO_OK) return DPDO_E_INVAL;
    } else {
        if (type->struct_size < offsetof(dpdo_regularizer_type, value) + sizeof(type->value))
            return DPDO_E_VERSION;
        if (!type->name || !type->name[0] || !type->value || params || nparams != 0)
            return DPDO_E_INVAL;
        kind = DPDO__REG_USER;
    }
    struct dpdo_regularizer *r = dpdo__calloc(1, sizeof *r);
    if (!r) return DPDO_E_NOMEM;
    r->magic = DPDO__MAGIC_REGULARIZER;
    r->type = type;
    r->kind = kind;
    r->dim = dim;
    r->p[0] = p[0];
    r->p[1] = p[1];
    r->tsize = type->struct_size;
    r->user = kind == DPDO__REG_USER ? user : (void *)r;
    *out = r;
    return DPDO_OK;
}

#define HAS(r, field)                                                                              \
    ((r)->tsize >= offsetof(dpdo_regularizer_type, field) + sizeof((r)->type->field) &&            \
     (r)->type->field)

static void reg_free(struct dpdo_regularizer *reg)
{
    if (reg->kind == DPDO__REG_USER && HAS(reg, release)) reg->type->release(reg->user);
    dpdo__free(reg);
}

DPDO_API void dpdo_regularizer_destroy(dpdo_regularizer *reg)
{
    if (!reg || !DPDO__LIVE(reg, DPDO__MAGIC_REGULARIZER)) return; /* NULL or destroyed */
    DPDO__KILL(reg);
    if (reg->borrowers > 0) {
        reg->doomed = 1; /* freed by the last borrower */
        return;
    }
    reg_free(reg);
}

void dpdo__reg_retain(struct dpdo_regularizer *r)
{
    r->borrowers++;
}

void dpdo__reg_release(struct dpdo_regularizer *r)
{
    if (r && --r->borrowers == 0 && r->doomed) reg_free(r);
}

DPDO_API const char *dpdo_regularizer_errmsg(const dpdo_regularizer *reg)
{
    return reg ? reg->errmsg : DPDO__NULL_TEXT("dpdo_regularizer_errmsg", "reg");
}

DPDO_API int64_t dpdo_regularizer_dim(const dpdo_regularizer *reg)
{
    return reg ? reg->dim : 0;
}

DPDO_API const char *dpdo_regularizer_name(const dpdo_regularizer *reg)
{
    return reg ? reg->type->name : "(null)";
}

/* ---- evaluation ------------------------------------------------------------ */

static int check_vec(struct dpdo_regularizer *r, const double *x, int64_t dim, const char *what)
{
    if (!x) return dpdo__err(r->errmsg, DPDO_E_INVAL, "%s is NULL", what);
    if (dim != r->dim)
        return dpdo__err(r->errmsg, DPDO_E_INVAL, "%s has dimension %lld, the regularizer %lld",
                         what, (long long)dim, (long long)r->dim);
    size_t k = dpdo__first_nonfinite(x, (size_t)dim);
    if (k < (size_t)dim)
        return dpdo__err(r->errmsg, DPDO_E_INVAL, "%s[%zu] is %s", what, k,
                         isnan(x[k]) ? "NaN" : "Inf");
    return DPDO_OK;
}

static int cb_fail(struct dpdo_regularizer *r, char *err, const char *cb, int code)
{
    return dpdo__err(err, DPDO_E_CALLBACK, "regularizer '%s': %s callback returned %d",
                     r->type->name, cb, code);
}

int dpdo__reg_value(struct dpdo_regularizer *r, const double *x, double *out, char *err)
{
    double v = 0.0;
    int rc = r->type->value(r->user, x, r->dim, &v);
    if (rc) return cb_fail(r, err, "value", rc);
    if (isnan(v) || v == -INFINITY)
        return dpdo__err(err, DPDO_E_NUMERIC, "regularizer '%s': value is %g", r->type->name, v);
    *out = v;
    return DPDO_OK;
}

int dpdo__reg_grad(struct dpdo_regularizer *r, const double *x, double *g, char *err)
{
    int smooth = 0;
    if (r->kind == DPDO__REG_USER)
        smooth = HAS(r, grad);
    else
        smooth = r->kind == DPDO__REG_NONE || r->kind == DPDO__REG_L2 ||
                 r->kind == DPDO__REG_NCVX || (r->kind == DPDO__REG_L1 && r->p[0] == 0.0) ||
                 (r->kind == DPDO__REG_EN && r->p[0] == 0.0);
    if (!smooth)
        return dpdo__err(err, DPDO_E_UNSUPPORTED, "regularizer '%s' is not differentiable",
                         r->type->name);
    int rc = r->type->grad(r->user, x, r->dim, g);
    if (rc) return cb_fail(r, err, "grad", rc);
    if (!dpdo__all_finite(g, (size_t)r->dim))
        return dpdo__err(err, DPDO_E_NUMERIC, "regularizer '%s': gradient is not finite",
                         r->type->name);
    return DPDO_OK;
}

int dpdo__reg_prox(struct dpdo_regularizer *r, const double *v, double t, double *out, char *err)
{
    if (r->kind == DPDO__REG_USER && !HAS(r, prox))
        return dpdo__err(err, DPDO_E_UNSUPPORTED, "regularizer '%s' has no prox callback",
                         r->type->name);
    int rc = r->type->prox(r->user, v, r->dim, t, out);
    if (rc) return cb_fail(r, err, "prox", rc);
    if (!dpdo__all_finite(out, (size_t)r->dim))
        return dpdo__err(err, DPDO_E_NUMERIC, "regularizer '%s': prox output is not finite",
                         r->type->name);
    return DPDO_OK;
}

DPDO_API int dpdo_regularizer_value(dpdo_regularizer *reg, const double *x, int64_t dim,
                                    double *out)
{
    if (!reg) return DPDO_E_INVAL;
    if (!out) return dpdo__err(reg->errmsg, DPDO_E_INVAL, "out is NULL");
    int rc = check_vec(reg, x, dim, "x");
    if (rc) return rc;
    return dpdo__reg_value(reg, x, out, reg->errmsg);
}

DPDO_API int dpdo_regularizer_grad(dpdo_regularizer *reg, const double *x, int64_t dim, double *g)
{
    if (!reg) return DPDO_E_INVAL;
    if (!g) return dpdo__err(reg->errmsg, DPDO_E_INVAL, "g is NULL");
    int rc = check_vec(reg, x, dim, "x");
    if (rc) return rc;
    return dpdo__reg_grad(reg, x, g, reg->errmsg);
}

DPDO_API int dpdo_regularizer_prox(dpdo_regularizer *reg, const double *v, int64_t dim, double t,
                                   double *out)
{
    if (!reg) return DPDO_E_INVAL;
    if (!out) return dpdo__err(reg->errmsg, DPDO_E_INVAL, "out is NULL");
    int rc = check_vec(reg, v, dim, "v");
    if (rc) return rc;
    if (!(t > 0.0) || !isfinite(t))
        return dpdo__err(reg->errmsg, DPDO_E_INVAL, "prox parameter t = %g must be finite and > 0",
                         t);
    return dpdo__reg_prox(reg, v, t, out, reg->errmsg);
}

static int modulus(struct dpdo_regularizer *r, double *mu, char *err)
{
    if (r->kind != DPDO__REG_USER) {
        *mu = dpdo__reg_modulus_builtin(r);
        return DPDO_OK;
    }
    double m = 0.0;
    if (HAS(r, modulus)) {
        int rc = r->type->modulus(r->user, &m);
        if (rc) return cb_fail(r, err, "modulus", rc);
        if (!isfinite(m))
            return dpdo__err(err, DPDO_E_NUMERIC, "regularizer '%s': modulus is %g", r->type->name,
                             m);
    }
    *mu = m;
    return DPDO_OK;
}

DPDO_API int dpdo_regularizer_modulus(dpdo_regularizer *reg, double *mu)
{
    if (!reg) return DPDO_E_INVAL;
    if (!mu) return dpdo__err(reg->errmsg, DPDO_E_INVAL, "mu is NULL");
    return modulus(reg, mu, reg->errmsg);
}

/* The dual-averaging map's parameters checked as dpdo_regularizer_da_map checks them (without
 * scanning z), and, for the built-in maps that act coordinate by coordinate, its constants: the
 * caller then applies dpdo__reg_pmap_apply to blocks of z in the pass that produced them (DP-DDA's
 * combine), with the same arithmetic as dpdo_regularizer_da_map. pm->kind
 * DPDO__PMAP_NONE means: call dpdo_regularizer_da_map on the whole vector. */
/* kappa, gamma and the modulus as the dual-averaging map needs them (message into err) */
static int da_args(struct dpdo_regularizer *reg, double kappa, double gamma, char *err)
{
    if (!isfinite(kappa) || kappa < 0)
        return dpdo__err(err, DPDO_E_INVAL, "kappa = %g must be finite and >= 0", kappa);
    if (!isfinite(gamma) || gamma < 0)
        return dpdo__err(err, DPDO_E_INVAL, "gamma = %g must be finite and >= 0", gamma);
    double mu;
    int rc = modulus(reg, &mu, err);
    if (rc) return rc;
    if (!(gamma > 0.0) && !(kappa * mu > 0.0))
        return dpdo__err(err, DPDO_E_INVAL,
                         "dual-averaging map of '%s' with gamma = 0 needs kappa * modulus > 0 "
                         "(kappa = %g, modulus = %g): the argmin is not unique or does not exist",
                         reg->type->name, kappa, mu);
    return DPDO_OK;
}

int dpdo__reg_da_pointwise(struct dpdo_regularizer *reg, double kappa, double gamma,
                           dpdo__reg_pmap *pm, char *err)
{
    pm->kind = DPDO__PMAP_NONE;
    pm->tau = 0.0;
    pm->c = 0.0;
    if (!reg) { /* no regularizer: x = -z / gamma (a non-finite x is the caller's to find) */
        pm->kind = DPDO__PMAP_DIV;
        pm->c = gamma;
        return DPDO_OK;
    }
    int rc = da_args(reg, kappa, gamma, err);
    if (!rc) dpdo__reg_pmap_of(reg, kappa, gamma, pm);
    return rc;
}

void dpdo__reg_pmap_of(const struct dpdo_regularizer *reg, double kappa, double gamma,
                       dpdo__reg_pmap *pm)
{
    pm->kind = DPDO__PMAP_NONE;
    pm->tau = 0.0;
    pm->c = 0.0;
    if (!reg) {
        pm->kind = DPDO__PMAP_DIV;
        pm->c = gamma;
        return;
    }
    const double *p = reg->p;
    switch (reg->kind) {
    case DPDO__REG_NONE:
        pm->kind = DPDO__PMAP_SCALE, pm->c = -1.0 / gamma;
        break;
    case DPDO__REG_L2:
        pm->kind = DPDO__PMAP_SCALE, pm->c = -1.0 / (kappa * p[0] + gamma);
        break;
    case DPDO__REG_L1:
        pm->kind = DPDO__PMAP_SOFT, pm->tau = kappa * p[0], pm->c = -1.0 / gamma;
        break;
    case DPDO__REG_EN:
        pm->kind = DPDO__PMAP_SOFT, pm->tau = kappa * p[0], pm->c = -1.0 / (kappa * p[1] + gamma);
        break;
    default:
        break;
    }
}

/* The DP-DDA paper, eq. (6): x = argmin <z,x> + kappa h(x) + gamma/2 ||x||^2. */
DPDO_API int dpdo_regularizer_da_map(dpdo_regularizer *reg, const double *z, int64_t dim,
                                     double kappa, double gamma, double *x)
{
    if (!reg) return DPDO_E_INVAL;
    if (!x) return dpdo__err(reg->errmsg, DPDO_E_INVAL, "x is NULL");
    int rc = check_vec(reg, z, dim, "z");
    if (!rc) rc = da_args(reg, kappa, gamma, reg->errmsg);
    if (rc) return rc;
    const int64_t n = dim;
    const double *p = reg->p;
    switch (reg->kind) {
    case DPDO__REG_NONE: {
        double c = -1.0 / gamma;
        for (int64_t j = 0; j < n; j++)
            x[j] = z[j] * c;
        return DPDO_OK;
    }
    case DPDO__REG_L2: { /* x = -z / (kappa lambda + gamma) */
        double c = -1.0 / (kappa * p[0] + gamma);
        for (int64_t j = 0; j < n; j++)
            x[j] = z[j] * c;
        return DPDO_OK;
    }
    case DPDO__REG_L1: { /* x_k = -S_{kappa lambda}(z_k) / gamma */
        double tau = kappa * p[0], c = -1.0 / gamma;
        for (int64_t j = 0; j < n; j++)
            x[j] = dpdo__soft(z[j], tau) * c;
        return DPDO_OK;
    }
    case DPDO__REG_EN: { /* x_k = -S_{kappa lambda1}(z_k) / (kappa lambda2 + gamma) */
        double tau = kappa * p[0], c = -1.0 / (kappa * p[1] + gamma);
        for (int64_t j = 0; j < n; j++)
            x[j] = dpdo__soft(z[j], tau) * c;
        return DPDO_OK;
    }
    case DPDO__REG_BALL: { /* x = Proj_ball(-z / gamma) */
        double c = -1.0 / gamma;
        for (int64_t j = 0; j < n; j++)
            x[j] = z[j] * c;
        proj_ball(x, n, p[0], x);
        return DPDO_OK;
    }
    case DPDO__REG_BOX: {
        double c = -1.0 / gamma;
        for (int64_t j = 0; j < n; j++)
            x[j] = clampd(z[j] * c, p[0], p[1]);
        return DPDO_OK;
    }
    default: { /* gamma > 0 here: x = prox_{(kappa/gamma) h}(-z/gamma) */
        double c = -1.0 / gamma;
        if (kappa == 0.0) {
            for (int64_t j = 0; j < n; j++)
                x[j] = z[j] * c;
            return DPDO_OK;
        }
        for (int64_t j = 0; j < n; j++)
            x[j] = z[j] * c;
        return dpdo__reg_prox(reg, x, kappa / gamma, x, reg->errmsg);
    }
    }
}

/* ---- conjugates for duality gaps ------------------------------------------ */

double dpdo__reg_conjugate(const struct dpdo_regularizer *r, const double *w, int *ok)
{
    const int64_t n = r->dim;
    const double *p = r->p;
    *ok = 1;
    switch (r->kind) {
    case DPDO__REG_NONE:
        for (int64_t j = 0; j < n; j++)
            if (w[j] != 0.0) return INFINITY;
        return 0.0;
    case DPDO__REG_L2:
        if (p[0] == 0.0) {
            for (int64_t j = 0; j < n; j++)
                if (w[j] != 0.0) return INFINITY;
            return 0.0;
        } else {
            double nw = nrm2(w, n);
            return nw * nw / (2.0 * p[0]);
        }
    case DPDO__REG_L1:
        for (int64_t j = 0; j < n; j++)
            if (fabs(w[j]) > p[0] * (1.0 + 4.0 * DBL_EPSILON)) return INFINITY;
        return 0.0;
    case DPDO__REG_EN: {
        double s = 0.0;
        for (int64_t j = 0; j < n; j++) {
            double e = fabs(w[j]) - p[0];
            if (e > 0 && !(p[1] == 0.0 && e <= 4.0 * DBL_EPSILON * p[0])) {
                if (p[1] == 0.0) return INFINITY;
                s += e * e;
            }
        }
        return p[1] > 0 ? s / (2.0 * p[1]) : 0.0;
    }
    case DPDO__REG_BALL:
        return p[0] * nrm2(w, n);
    case DPDO__REG_BOX: {
        double s = 0.0;
        for (int64_t j = 0; j < n; j++) {
            if (w[j] > 0)
                s += p[1] * w[j];
            else if (w[j] < 0)
                s += p[0] * w[j];
        }
        return s;
    }
    default:
        *ok = 0;
        return 0.0;
    }
}

double dpdo__reg_dual_scale(const struct dpdo_regularizer *r, const double *w)
{
    const int64_t n = r->dim;
    double amax = 0.0;
    for (int64_t j = 0; j < n; j++)
        amax = fmax(amax, fabs(w[j]));
    switch (r->kind) {
    case DPDO__REG_NONE:
        return amax == 0.0 ? 1.0 : 0.0;
    case DPDO__REG_L2:
        return (r->p[0] > 0 || amax == 0.0) ? 1.0 : 0.0;
    case DPDO__REG_L1:
        return amax <= r->p[0] ? 1.0 : r->p[0] / amax;
    case DPDO__REG_EN:
        if (r->p[1] > 0) return 1.0;
        return amax <= r->p[0] ? 1.0 : r->p[0] / amax;
    case DPDO__REG_BOX: {
        for (int64_t j = 0; j < n; j++)
            if ((w[j] > 0 && isinf(r->p[1])) || (w[j] < 0 && isinf(r->p[0]))) return 0.0;
        return 1.0;
    }
    default:
        return 1.0;
    }
}
