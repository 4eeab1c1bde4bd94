/* SPDX-License-Identifier: BSD-3-Clause */
/* Local solvers for Fed-PLT (the Fed-PLT paper, Sec. IV-B; docs/solver.md): gradient descent (eq.
 * 11), Nesterov AGD (eq. 12), mini-batch SGD, noisy GD (eq. 13) and the exact prox of the squared
 * loss, plus user types. All scratch is allocated at create (and at set("batch")); runs allocate
 * nothing. */
#include "../model/model_impl.h"
#include "../rng/rng_impl.h"
#include "solver_impl.h"
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Reference LAPACK (Fortran, 32-bit integers on Debian). Declared here, never
 * in a public header; the trailing size_t is the hidden length of the
 * character argument (gfortran ABI). */
extern void dposv_(const char *uplo, const int *n, const int *nrhs, double *a, const int *lda,
                   double *b, const int *ldb, int *info, size_t uplo_len);

/* ---- built-in type objects ----------------------------------------------- */

/* Built-ins are ordinary type objects whose `user` is the handle itself. */
static int builtin_run(void *user, dpdo_node *node, const double *v, int64_t dim, double rho,
                       int64_t epochs, const dpdo_rng *rng, uint64_t node_id, uint64_t round,
                       double *w)
{
    struct dpdo_solver *s = user;
    (void)dim;
    if (!s) return 1;
    int rc = dpdo__solver_run(s, node, v, rho, epochs, rng, node_id, round, w, s->errmsg);
    return rc == DPDO_OK ? 0 : (rc < 0 ? -rc : rc);
}

static int builtin_contraction(void *user, double rho, int64_t epochs, double lambda_lo,
                               double lambda_hi, double *c)
{
    struct dpdo_solver *s = user;
    (void)lambda_lo;
    (void)lambda_hi;
    if (!s) return 1;
    int rc = dpdo_solver_contraction(s, rho, epochs, c);
    return rc == DPDO_OK ? 0 : (rc < 0 ? -rc : rc);
}

#define BUILTIN(nm)                                                                                \
    {                                                                                              \
        sizeof(dpdo_solver_type), nm, builtin_run, builtin_contraction, NULL                       \
    }
static const dpdo_solver_type builtin_types[DPDO__SOLVER_NBUILTIN] = {
    BUILTIN("gd"), BUILTIN("agd"), BUILTIN("sgd"), BUILTIN("noisy-gd"), BUILTIN("exact-quadratic"),
};
#undef BUILTIN

static int builtin_index(const dpdo_solver_type *t)
{
    return dpdo__table_index(builtin_types, sizeof builtin_types[0], DPDO__SOLVER_NBUILTIN, t);
}

DPDO_API const dpdo_solver_type *dpdo_solver_type_find(const char *name)
{
    return dpdo__table_find(builtin_types, sizeof builtin_types[0], DPDO__SOLVER_NBUILTIN, name);
}

DPDO_API const dpdo_solver_type *dpdo_solver_type_next(const dpdo_solver_type *prev)
{
    return dpdo__table_next(builtin_types, sizeof builtin_types[0], DPDO__SOLVER_NBUILTIN, prev);
}

DPDO_API const char *dpdo_solver_type_name(const dpdo_solver_type *t)
{
    return t && t->name ? t->name : "(null)";
}

/* ---- life cycle ------------------------------------------------------------ */

#define HAS(s, field)                                                                              \
    ((s)->tsize >= offsetof(dpdo_solver_type, field) + sizeof((s)->type->field) && (s)->type->field)

DPDO_API int dpdo_solver_create(dpdo_solver **out, const dpdo_solver_type *type, void *user,
                                int64_t dim)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (!type || dim < 1) return DPDO_E_INVAL;
    int kind = builtin_index(type);
    if (kind >= 0) {
        if (user) return DPDO_E_INVAL;
    } else {
        if (type->struct_size < offsetof(dpdo_solver_type, run) + sizeof(type->run))
            return DPDO_E_VERSION;
        if (!type->name || !type->name[0] || !type->run) return DPDO_E_INVAL;
        if (type->run == builtin_run) return DPDO_E_INVAL; /* a copy of a built-in type */
        kind = DPDO__SOLVER_USER;
    }
    if (kind == DPDO__SOLVER_EXACT_QUAD && dim > INT32_MAX) return DPDO_E_INVAL;
    size_t nbuf;
    if (!dpdo__mul_size((size_t)dim, 3, &nbuf)) return DPDO_E_NOMEM;
    struct dpdo_solver *s = dpdo__calloc(1, sizeof *s);
    if (!s) return DPDO_E_NOMEM;
    s->magic = DPDO__MAGIC_SOLVER;
    s->buf = dpdo__alloc_array(nbuf, sizeof(double));
    if (!s->buf) goto nomem;
    if (kind == DPDO__SOLVER_EXACT_QUAD) {
        size_t nm;
        if (!dpdo__mul_size((size_t)dim, (size_t)dim, &nm)) goto nomem;
        s->mat = dpdo__alloc_array(nm, sizeof(double));
        if (!s->mat) goto nomem;
    }
    if (kind == DPDO__SOLVER_SGD) {
        s->idx = dpdo__alloc_array(1, sizeof(int64_t));
        if (!s->idx) goto nomem;
    }
    s->type = type;
    s->kind = kind;
    s->user = kind == DPDO__SOLVER_USER ? user : s;
    s->tsize = type->struct_size;
    s->dim = dim;
    s->step = NAN;
    s->lambda_lo = NAN;
    s->lambda_hi = NAN;
    s->tau = 0.0;
    s->clip = 0.0;
    s->batch = 1;
    *out = s;
    return DPDO_OK;
nomem:
    dpdo__free(s->idx);
    dpdo__free(s->mat);
    dpdo__free(s->buf);
    dpdo__free(s);
    return DPDO_E_NOMEM;
}

static void solver_free(dpdo_solver *s);

DPDO_API void dpdo_solver_destroy(dpdo_solver *s)
{
    if (!s || !DPDO__LIVE(s, DPDO__MAGIC_SOLVER)) return; /* NULL or destroyed */
    DPDO__KILL(s);
    if (s->borrowers > 0) {
        s->doomed = 1; /* freed by the last borrowing algorithm */
        return;
    }
    solver_free(s);
}

void dpdo__solver_retain(struct dpdo_solver *s)
{
    s->borrowers++;
}

void dpdo__solver_release(struct dpdo_solver *s)
{
    if (s && --s->borrowers == 0 && s->doomed) solver_free(s);
}

static void solver_free(dpdo_solver *s)
{
    if (s->kind == DPDO__SOLVER_USER && HAS(s, release)) s->type->release(s->user);
    dpdo__free(s->idx);
    dpdo__free(s->mat);
    dpdo__free(s->buf);
    dpdo__free(s);
}

DPDO_API const char *dpdo_solver_errmsg(const dpdo_solver *s)
{
    return s ? s->errmsg : DPDO__NULL_TEXT("dpdo_solver_errmsg", "s");
}
DPDO_API const char *dpdo_solver_name(const dpdo_solver *s)
{
    return s ? s->type->name : "(null)";
}
DPDO_API int64_t dpdo_solver_dim(const dpdo_solver *s)
{
    return s ? s->dim : 0;
}

DPDO_API int dpdo_solver_dp_accountable(const dpdo_solver *s)
{
    return s && s->kind == DPDO__SOLVER_NOISY_GD && s->tau > 0.0;
}

int dpdo__solver_is_noisy_gd(const struct dpdo_solver *s)
{
    return s && s->kind == DPDO__SOLVER_NOISY_GD;
}

int dpdo__solver_concurrent(const struct dpdo_solver *s)
{
    return s && (s->kind == DPDO__SOLVER_GD || s->kind == DPDO__SOLVER_AGD ||
                 s->kind == DPDO__SOLVER_NOISY_GD);
}

/* ---- parameters ---------------------------------------------------------- */

static int is_gd_family(int kind)
{
    return kind == DPDO__SOLVER_GD || kind == DPDO__SOLVER_SGD || kind == DPDO__SOLVER_NOISY_GD;
}

DPDO_API int dpdo_solver_set(dpdo_solver *s, const char *param, double value)
{
    if (!s) return DPDO_E_INVAL;
    if (!param) return dpdo__err(s->errmsg, DPDO_E_INVAL, "parameter name is NULL");
    const char *tn = s->type->name;
    if (strcmp(param, "lambda_lo") == 0) {
        if (!isnan(value) && !isfinite(value))
            return dpdo__err(s->errmsg, DPDO_E_INVAL,
                             "lambda_lo = %g must be finite (or NaN = unknown)", value);
        s->lambda_lo = value;
        return DPDO_OK;
    }
    if (strcmp(param, "lambda_hi") == 0) {
        if (!isnan(value) && !(isfinite(value) && value >= 0.0))
            return dpdo__err(s->errmsg, DPDO_E_INVAL,
                             "lambda_hi = %g must be finite and >= 0 (or NaN = unknown)", value);
        s->lambda_hi = value;
        return DPDO_OK;
    }
    if (strcmp(param, "step") == 0) {
        if (!is_gd_family(s->kind))
            return dpdo__err(s->errmsg, DPDO_E_UNSUPPORTED,
                             "solver '%s' has no \"step\" parameter (agd always uses 1/L_d)", tn);
        if (!isnan(value) && !(isfinite(value) && value > 0.0))
            return dpdo__err(s->errmsg, DPDO_E_INVAL,
                             "step = %g must be finite and > 0 (or NaN = auto)", value);
        s->step = value;
        return DPDO_OK;
    }
    if (strcmp(param, "tau") == 0) {
        if (s->kind != DPDO__SOLVER_NOISY_GD)
            return dpdo__err(s->errmsg, DPDO_E_UNSUPPORTED,
                             "solver '%s' has no \"tau\" parameter (only noisy-gd adds noise)", tn);
        if (!(isfinite(value) && value >= 0.0))
            return dpdo__err(s->errmsg, DPDO_E_INVAL, "tau = %g must be finite and >= 0", value);
        s->tau = value;
        return DPDO_OK;
    }
    if (strcmp(param, "clip") == 0) {
        if (!is_gd_family(s->kind))
            return dpdo__err(s->errmsg, DPDO_E_UNSUPPORTED,
                             "solver '%s' has no \"clip\" parameter (gd, sgd, noisy-gd only)", tn);
        if (!(isfinite(value) && value >= 0.0))
            return dpdo__err(s->errmsg, DPDO_E_INVAL, "clip = %g must be finite and >= 0 (0 = off)",
                             value);
        s->clip = value;
        return DPDO_OK;
    }
    if (strcmp(param, "l2") == 0) {
        if (!is_gd_family(s->kind) && s->kind != DPDO__SOLVER_AGD)
            return dpdo__err(s->errmsg, DPDO_E_UNSUPPORTED,
                             "solver '%s' has no \"l2\" parameter (gd, agd, sgd, noisy-gd only)",
                             tn);
        if (!(isfinite(value) && value >= 0.0))
            return dpdo__err(s->errmsg, DPDO_E_INVAL, "l2 = %g must be finite and >= 0", value);
        s->l2 = value;
        return DPDO_OK;
    }
    if (strcmp(param, "batch") == 0) {
        if (s->kind != DPDO__SOLVER_SGD)
            return dpdo__err(s->errmsg, DPDO_E_UNSUPPORTED,
                             "solver '%s' has no \"batch\" parameter (sgd only)", tn);
        if (!(value >= 1.0 && value < 2147483648.0 && value == floor(value)))
            return dpdo__err(s->errmsg, DPDO_E_INVAL, "batch = %g must be an integer in [1, 2^31)",
                             value);
        int64_t b = (int64_t)value;
        if (b != s->batch) {
            int64_t *p = dpdo__alloc_array((size_t)b, sizeof *p);
            if (!p)
                return dpdo__err(s->errmsg, DPDO_E_NOMEM, "batch %lld: out of memory",
                                 (long long)b);
            dpdo__free(s->idx);
            s->idx = p;
            s->batch = b;
        }
        return DPDO_OK;
    }
    return dpdo__err(s->errmsg, DPDO_E_INVAL,
                     "unknown parameter \"%s\" (step, lambda_lo, lambda_hi, tau, clip, batch, l2)",
                     param);
}

DPDO_API int dpdo_solver_get(const dpdo_solver *s, const char *param, double *value)
{
    if (!s || !param || !value) return DPDO_E_INVAL;
    if (strcmp(param, "step") == 0)
        *value = s->step;
    else if (strcmp(param, "lambda_lo") == 0)
        *value = s->lambda_lo;
    else if (strcmp(param, "lambda_hi") == 0)
        *value = s->lambda_hi;
    else if (strcmp(param, "tau") == 0)
        *value = s->tau;
    else if (strcmp(param, "clip") == 0)
        *value = s->clip;
    else if (strcmp(param, "batch") == 0)
        *value = (double)s->batch;
    else if (strcmp(param, "l2") == 0)
        *value = s->l2;
    else
        return DPDO_E_INVAL;
    return DPDO_OK;
}

/* ---- checks and steps ------------------------------------------------------ */

double dpdo__solver_step(const struct dpdo_solver *s, double rho)
{
    switch (s->kind) {
    case DPDO__SOLVER_GD:
    case DPDO__SOLVER_SGD: {
        if (!isnan(s->step)) return s->step;
        double lo = isnan(s->lambda_lo) ? 0.0 : s->lambda_lo;
        return 2.0 / (s->lambda_hi + lo + 2.0 / rho); /* NaN if lambda_hi unknown */
    }
    case DPDO__SOLVER_NOISY_GD:
        if (!isnan(s->step)) return s->step;
        return 1.0 / (s->lambda_hi + 1.0 / rho);
    case DPDO__SOLVER_AGD:
        return 1.0 / (s->lambda_hi + 1.0 / rho);
    default:
        return NAN;
    }
}

int dpdo__solver_check(const struct dpdo_solver *s, const struct dpdo_node *node, double rho,
                       char *err)
{
    if (s->kind == DPDO__SOLVER_USER) return DPDO_OK;
    const char *tn = s->type->name;
    const double llo = s->lambda_lo, lhi = s->lambda_hi;
    if (!isnan(llo) && !isnan(lhi) && llo > lhi)
        return dpdo__err(err, DPDO_E_INVAL, "solver '%s': lambda_lo = %g > lambda_hi = %g", tn, llo,
                         lhi);
    const struct dpdo_loss *loss = node ? node->loss : NULL;
    if (is_gd_family(s->kind)) {
        double g = dpdo__solver_step(s, rho);
        if (isnan(g))
            return dpdo__err(err, DPDO_E_INVAL,
                             "solver '%s': the step is auto (NaN) but lambda_hi is unknown; set "
                             "\"lambda_hi\" or \"step\"",
                             tn);
        if (!isnan(lhi)) {
            double bound = 2.0 / (lhi + 1.0 / rho);
            if (!(g > 0.0 && g < bound))
                return dpdo__err(err, DPDO_E_INVAL,
                                 "solver '%s': step %.17g is outside (0, 2/L_d) = (0, %.17g), "
                                 "L_d = lambda_hi + 1/rho = %g",
                                 tn, g, bound, lhi + 1.0 / rho);
        }
        if (loss && loss->kind == DPDO_LOSS_KIND_MODEL) {
            if (s->clip > 0.0)
                return dpdo__err(err, DPDO_E_UNSUPPORTED,
                                 "solver '%s': model-kind loss '%s' has no per-sample gradients "
                                 "to clip",
                                 tn, loss->type->name);
            if (s->kind == DPDO__SOLVER_SGD)
                return dpdo__err(err, DPDO_E_UNSUPPORTED,
                                 "solver 'sgd': model-kind loss '%s' has no mini-batches",
                                 loss->type->name);
        }
        if (node && s->kind == DPDO__SOLVER_SGD) {
            int64_t q = node->shard ? node->shard->n : 0;
            if (s->batch > q)
                return dpdo__err(err, DPDO_E_INVAL,
                                 "solver 'sgd': batch %lld exceeds the node's %lld samples",
                                 (long long)s->batch, (long long)q);
        }
    } else if (s->kind == DPDO__SOLVER_AGD) {
        if (isnan(llo) || isnan(lhi))
            return dpdo__err(err, DPDO_E_INVAL,
                             "solver 'agd' needs \"lambda_lo\" and \"lambda_hi\" (eq. 12)");
        if (!(llo + 1.0 / rho > 0.0))
            return dpdo__err(err, DPDO_E_INVAL,
                             "solver 'agd': mu_d = lambda_lo + 1/rho = %g must be > 0",
                             llo + 1.0 / rho);
    } else if (s->kind == DPDO__SOLVER_EXACT_QUAD) {
        if (loss && loss->builtin != DPDO__LOSS_SQUARED)
            return dpdo__err(err, DPDO_E_UNSUPPORTED,
                             "solver 'exact-quadratic' supports only the built-in \"squared\" "
                             "loss, not '%s'",
                             loss->type->name);
    }
    return DPDO_OK;
}

/* ---- the built-in methods -------------------------------------------------- */

static inline int grad_f(const struct dpdo_solver *s, struct dpdo_node *nd, const double *w,
                         const int64_t *idx, int64_t m, double *g, char *err)
{
    /* g is the run's workspace (a failed run restores w from its backup): accumulate in place */
    return dpdo__loss_eval_node_into(nd, w, idx, m, s->clip, NULL, g, NULL, err);
}

static int stream_failed(const dpdo__stream *st, const char *tn, char *err)
{
    if (dpdo__stream_status(st) == DPDO_OK) return 0;
    dpdo__err(err, DPDO_E_CALLBACK, "solver '%s': rng callback returned %d", tn,
              dpdo__stream_cb_code(st));
    return 1;
}

/* The gradient step on a short model (Fed-PLT's d = 5) element by element: the gradient was just
 * written a double at a time (the 8-lane kernel's lane trees), and a 16-byte load of two such
 * stores cannot be forwarded from the store buffer: the vectorised loop waited ~20 cycles per
 * pair. The same operations per element as the loop in run_gd, so the same bits. */
#if defined(__GNUC__) && !defined(__clang__)
#define GD_SCALAR __attribute__((optimize("no-tree-vectorize")))
#else
#define GD_SCALAR
#endif
GD_SCALAR static void gd_update_short(double *w, const double *g, const double *v, double gamma,
                                      double irho, int64_t n)
{
    for (int64_t j = 0; j < n; j++)
        w[j] = w[j] - gamma * (g[j] + (w[j] - v[j]) * irho);
}

/* gd, sgd and noisy-gd share this loop, so noisy-gd with tau = 0 performs the
 * very same floating-point operations as gd (no draw at all). */
static int run_gd(struct dpdo_solver *s, struct dpdo_node *nd, const double *v, double rho,
                  int64_t epochs, const struct dpdo_rng *rng, uint64_t node_id, uint64_t round,
                  double grid_sens, double grid_eta, double *w, double *buf, char *err)
{
    const int64_t n = s->dim;
    const double gamma = dpdo__solver_step(s, rho), irho = 1.0 / rho;
    double *g = buf;
    const int sgd = s->kind == DPDO__SOLVER_SGD;
    const int noisy = s->kind == DPDO__SOLVER_NOISY_GD && s->tau > 0.0;
    const double scale = noisy ? sqrt(2.0 * gamma) * s->tau : 0.0;
    const int64_t q = sgd ? nd->shard->n : 0;
    dpdo__stream st;
    if (sgd)
        dpdo__stream_open(&st, rng, node_id, round, DPDO_PURPOSE_SAMPLE);
    else if (noisy)
        dpdo__stream_open(&st, rng, node_id, round, DPDO_PURPOSE_NOISE);
    /* secure runs (grid_sens > 0): every step's iterate is rounded to a power-of-two grid and
     * gets exact discrete Gaussian noise, as the engine's releases (docs/privacy.md section 11) */
    double gg = 0;
    uint64_t gS = 0;
    if (noisy && grid_sens > 0) {
        int rc = dpdo__grid_choose(scale, grid_sens, (size_t)n, grid_eta, 0, &gg, &gS, err);
        if (rc) return rc;
    }
    for (int64_t l = 0; l < epochs; l++) {
        int rc;
        if (sgd) {
            dpdo__stream_subset(&st, q, s->batch, s->idx);
            if (stream_failed(&st, s->type->name, err)) return DPDO_E_CALLBACK;
            rc = grad_f(s, nd, w, s->idx, s->batch, g, err);
        } else {
            rc = grad_f(s, nd, w, NULL, 0, g, err);
        }
        if (rc) return rc;
        if (s->l2 >
            0.0) /* the ridge term's gradient joins f's (0: the very same operations as before) */
            for (int64_t j = 0; j < n; j++)
                g[j] += s->l2 * w[j];
        if (n <= 16)
            gd_update_short(w, g, v, gamma, irho, n);
        else
            for (int64_t j = 0; j < n; j++)
                w[j] = w[j] - gamma * (g[j] + (w[j] - v[j]) * irho);
        if (noisy && gS > 0) {
            if ((rc = dpdo__grid_add_dgauss(&st, gS, gg, w, (size_t)n, err))) return rc;
        } else if (noisy) {
            dpdo__stream_add_normals(&st, scale, w, (size_t)n);
            if (stream_failed(&st, s->type->name, err)) return DPDO_E_CALLBACK;
        }
        if (noisy && s->tap) s->tap(s->tap_user, node_id, w, (size_t)n, gg);
    }
    return DPDO_OK;
}

/* Nesterov, the Fed-PLT paper eq. (12): u^{l+1} = w^l - grad d(w^l)/L_d,
 * w^{l+1} = u^{l+1} + beta (u^{l+1} - u^l), u^0 = w^0; output w^{N_e}. */
static int run_agd(struct dpdo_solver *s, struct dpdo_node *nd, const double *v, double rho,
                   int64_t epochs, double *w, double *buf, char *err)
{
    const int64_t n = s->dim;
    const double irho = 1.0 / rho;
    const double Ld = s->lambda_hi + irho, mud = s->lambda_lo + irho;
    const double step = 1.0 / Ld;
    const double sL = sqrt(Ld), sm = sqrt(mud);
    const double beta = (sL - sm) / (sL + sm);
    double *g = buf, *u = buf + n;
    memcpy(u, w, (size_t)n * sizeof *u);
    for (int64_t l = 0; l < epochs; l++) {
        int rc = grad_f(s, nd, w, NULL, 0, g, err);
        if (rc) return rc;
        if (s->l2 > 0.0)
            for (int64_t j = 0; j < n; j++)
                g[j] += s->l2 * w[j];
        for (int64_t j = 0; j < n; j++) {
            double un = w[j] - step * (g[j] + (w[j] - v[j]) * irho);
            w[j] = un + beta * (un - u[j]);
            u[j] = un;
        }
    }
    return DPDO_OK;
}

/* Exact prox of f(x) = (1/q) sum (a.x - y)^2 / 2 (docs/solver.md):
 * (I + rho A) x = v - rho b = v + (rho/q) sum y a, A = (1/q) sum a a^T. */
static int run_exact(struct dpdo_solver *s, struct dpdo_node *nd, const double *v, double rho,
                     double *w, char *err)
{
    const int64_t n = s->dim;
    const struct dpdo_shard *sh = nd->shard;
    const struct dpdo_dataset *ds = sh->parent;
    const int64_t q = sh->n;
    double *a = s->buf, *ya = s->buf + n, *M = s->mat;
    memset(M, 0, (size_t)n * (size_t)n * sizeof *M);
    memset(ya, 0, (size_t)n * sizeof *ya);
    for (int64_t k = 0; k < q; k++) {
        int64_t r = dpdo__shard_row(sh, k);
        memset(a, 0, (size_t)n * sizeof *a);
        dpdo__row_axpy(ds, r, 1.0, a);
        const double y = ds->y[r];
        for (int64_t c = 0; c < n; c++) {
            const double ac = a[c];
            ya[c] += y * ac;
            if (ac == 0.0) continue;
            double *col = M + c * n; /* column-major: column c, rows c..n-1 (lower) */
            for (int64_t i = c; i < n; i++)
                col[i] += ac * a[i];
        }
    }
    const double sc = rho / (double)q;
    for (int64_t c = 0; c < n; c++) {
        double *col = M + c * n;
        for (int64_t i = c; i < n; i++)
            col[i] *= sc;
        col[c] += 1.0;
        w[c] = v[c] + sc * ya[c];
    }
    int in = (int)n, one = 1, info = 0;
    dposv_("L", &in, &one, M, &in, w, &in, &info, 1);
    if (info != 0)
        return dpdo__err(err, DPDO_E_NUMERIC,
                         "solver 'exact-quadratic': Cholesky of I + rho A failed (dposv info %d)",
                         info);
    return DPDO_OK;
}

int dpdo__solver_run(struct dpdo_solver *s, struct dpdo_node *node, const double *v, double rho,
                     int64_t epochs, const struct dpdo_rng *rng, uint64_t node_id, uint64_t round,
                     double *w, char *err)
{
    return dpdo__solver_run_ws(s, node, v, rho, epochs, rng, node_id, round, 0.0, 0.0, w, NULL,
                               err);
}

int dpdo__solver_run_grid(struct dpdo_solver *s, struct dpdo_node *node, const double *v,
                          double rho, int64_t epochs, const struct dpdo_rng *rng, uint64_t node_id,
                          uint64_t round, double grid_sens, double grid_eta, double *w, char *err)
{
    return dpdo__solver_run_ws(s, node, v, rho, epochs, rng, node_id, round, grid_sens, grid_eta, w,
                               NULL, err);
}

int dpdo__solver_run_ws(struct dpdo_solver *s, struct dpdo_node *node, const double *v, double rho,
                        int64_t epochs, const struct dpdo_rng *rng, uint64_t node_id,
                        uint64_t round, double grid_sens, double grid_eta, double *w, double *ws,
                        char *err)
{
    if (grid_sens > 0 && !(isfinite(grid_sens) && grid_eta > 0 && grid_eta < 1))
        return dpdo__err(err, DPDO_E_INVAL, "solver: grid sensitivity %g / eta %g", grid_sens,
                         grid_eta);
    double *buf = ws ? ws : s->buf;
    int rc = dpdo__solver_check(s, node, rho, err);
    if (rc) return rc;
    const int64_t n = s->dim;
    const char *tn = s->type->name;
    if (s->kind != DPDO__SOLVER_EXACT_QUAD && s->kind != DPDO__SOLVER_USER && epochs == 0)
        return DPDO_OK;
    if (s->kind == DPDO__SOLVER_SGD || (s->kind == DPDO__SOLVER_NOISY_GD && s->tau > 0.0)) {
        if (!rng) return dpdo__err(err, DPDO_E_INVAL, "solver '%s' needs an rng (it is NULL)", tn);
        rc = dpdo__stream_ids_check(
            node_id, round, s->kind == DPDO__SOLVER_SGD ? DPDO_PURPOSE_SAMPLE : DPDO_PURPOSE_NOISE,
            err);
        if (rc) return rc;
    }
    double *backup = buf + 2 * n;
    memcpy(backup, w, (size_t)n * sizeof *w);
    switch (s->kind) {
    case DPDO__SOLVER_USER: {
        int cb = s->type->run(s->user, node, v, n, rho, epochs, rng, node_id, round, w);
        rc = cb ? dpdo__err(err, DPDO_E_CALLBACK, "solver '%s': run callback returned %d", tn, cb)
                : DPDO_OK;
        break;
    }
    case DPDO__SOLVER_AGD:
        rc = run_agd(s, node, v, rho, epochs, w, buf, err);
        break;
    case DPDO__SOLVER_EXACT_QUAD:
        rc = run_exact(s, node, v, rho, w, err);
        break;
    default:
        rc = run_gd(s, node, v, rho, epochs, rng, node_id, round, grid_sens, grid_eta, w, buf, err);
        break;
    }
    if (rc == DPDO_OK) {
        size_t bad = dpdo__first_nonfinite(w, (size_t)n);
        if (bad < (size_t)n)
            rc = dpdo__err(err, DPDO_E_NUMERIC,
                           "solver '%s': result w[%zu] is %s (diverged? check the step and "
                           "lambda_hi)",
                           tn, bad, isnan(w[bad]) ? "NaN" : "Inf");
    }
    if (rc) memcpy(w, backup, (size_t)n * sizeof *w);
    return rc;
}

/* ---- public run and contraction -------------------------------------------- */

DPDO_API int dpdo_solver_run(dpdo_solver *s, dpdo_node *node, const double *v, int64_t dim,
                             double rho, int64_t epochs, const dpdo_rng *rng, uint64_t node_id,
                             uint64_t round, double *w)
{
    if (!s) return DPDO_E_INVAL;
    if (!node) return dpdo__err(s->errmsg, DPDO_E_INVAL, "node is NULL");
    if (!v || !w) return dpdo__err(s->errmsg, DPDO_E_INVAL, "%s is NULL", v ? "w" : "v");
    if (v == w) return dpdo__err(s->errmsg, DPDO_E_INVAL, "w must not alias v");
    if (dim != s->dim)
        return dpdo__err(s->errmsg, DPDO_E_INVAL, "dim %lld differs from the solver's %lld",
                         (long long)dim, (long long)s->dim);
    if (node->dim != s->dim)
        return dpdo__err(s->errmsg, DPDO_E_INVAL, "the node has dimension %lld, the solver %lld",
                         (long long)node->dim, (long long)s->dim);
    if (!(isfinite(rho) && rho > 0.0))
        return dpdo__err(s->errmsg, DPDO_E_INVAL, "rho = %g must be finite and > 0", rho);
    if (epochs < 0)
        return dpdo__err(s->errmsg, DPDO_E_INVAL, "epochs = %lld must be >= 0", (long long)epochs);
    size_t bad = dpdo__first_nonfinite(v, (size_t)dim);
    if (bad < (size_t)dim)
        return dpdo__err(s->errmsg, DPDO_E_INVAL, "v[%zu] is %s", bad,
                         isnan(v[bad]) ? "NaN" : "Inf");
    bad = dpdo__first_nonfinite(w, (size_t)dim);
    if (bad < (size_t)dim)
        return dpdo__err(s->errmsg, DPDO_E_INVAL, "w[%zu] (the warm start) is %s", bad,
                         isnan(w[bad]) ? "NaN" : "Inf");
    return dpdo__solver_run(s, node, v, rho, epochs, rng, node_id, round, w, s->errmsg);
}

DPDO_API int dpdo_solver_contraction(dpdo_solver *s, double rho, int64_t epochs, double *c)
{
    if (!s) return DPDO_E_INVAL;
    if (!c) return dpdo__err(s->errmsg, DPDO_E_INVAL, "c is NULL");
    if (!(isfinite(rho) && rho > 0.0))
        return dpdo__err(s->errmsg, DPDO_E_INVAL, "rho = %g must be finite and > 0", rho);
    if (epochs < 0)
        return dpdo__err(s->errmsg, DPDO_E_INVAL, "epochs = %lld must be >= 0", (long long)epochs);
    const char *tn = s->type->name;
    if (s->kind == DPDO__SOLVER_USER) {
        if (!HAS(s, contraction))
            return dpdo__err(s->errmsg, DPDO_E_UNSUPPORTED,
                             "solver '%s' has no contraction callback", tn);
        double cc = NAN;
        int cb = s->type->contraction(s->user, rho, epochs, s->lambda_lo, s->lambda_hi, &cc);
        if (cb)
            return dpdo__err(s->errmsg, DPDO_E_CALLBACK,
                             "solver '%s': contraction callback returned %d", tn, cb);
        if (!(cc >= 0.0))
            return dpdo__err(s->errmsg, DPDO_E_NUMERIC,
                             "solver '%s': contraction callback gave %g (must be >= 0)", tn, cc);
        *c = cc;
        return DPDO_OK;
    }
    if (s->kind == DPDO__SOLVER_EXACT_QUAD) {
        *c = 0.0;
        return DPDO_OK;
    }
    if (isnan(s->lambda_lo) || isnan(s->lambda_hi))
        return dpdo__err(s->errmsg, DPDO_E_INVAL,
                         "solver '%s': the contraction factor needs \"lambda_lo\" and "
                         "\"lambda_hi\"",
                         tn);
    int rc = dpdo__solver_check(s, NULL, rho, s->errmsg);
    if (rc) return rc;
    const double irho = 1.0 / rho;
    const double mud = s->lambda_lo + irho, Ld = s->lambda_hi + irho;
    if (s->kind == DPDO__SOLVER_AGD) {
        if (epochs == 0) {
            *c = 1.0;
            return DPDO_OK;
        }
        double kappa = Ld / mud;
        if (!(kappa > 1.0)) {
            *c = 0.0; /* kappa = 1: one step with beta = 0 lands on the minimiser */
            return DPDO_OK;
        }
        *c = sqrt(1.0 + kappa) * pow(1.0 - 1.0 / sqrt(kappa), 0.5 * (double)epochs);
        return DPDO_OK;
    }
    const double gamma = dpdo__solver_step(s, rho);
    const double chi = fmax(fabs(1.0 - gamma * mud), fabs(1.0 - gamma * Ld));
    *c = pow(chi, (double)epochs);
    return DPDO_OK;
}
