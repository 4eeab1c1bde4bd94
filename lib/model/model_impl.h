/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal layout of losses, regularizers and nodes, and the helpers the
 * reference solver (and later the algorithms) use. Never installed. */
#ifndef DPDO_MODEL_IMPL_H
#define DPDO_MODEL_IMPL_H

#include "../core/core_impl.h"
#include "../data/data_impl.h"
#include "dpdo/loss.h"
#include "dpdo/node.h"
#include "dpdo/reference.h"
#include "dpdo/regularizer.h"
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* ---- regularizers ------------------------------------------------------ */
enum {
    DPDO__REG_USER = -1,
    DPDO__REG_NONE = 0,
    DPDO__REG_L2,
    DPDO__REG_L1,
    DPDO__REG_EN,
    DPDO__REG_BALL,
    DPDO__REG_BOX,
    DPDO__REG_NCVX,
    DPDO__REG_NBUILTIN
};

struct dpdo_regularizer {
    uint32_t magic; /* DPDO__MAGIC_* while alive, 0 after destroy (core_impl.h) */
    const dpdo_regularizer_type *type;
    int kind;   /* DPDO__REG_* */
    void *user; /* user types: the caller's pointer; built-ins: this handle */
    int64_t dim;
    double p[2];       /* parameters of built-ins */
    size_t tsize;      /* the type's struct_size */
    int64_t borrowers; /* reference solvers borrowing it */
    int doomed;        /* destroy requested while borrowed */
    char errmsg[DPDO__ERRMSG_LEN];
};

/* Fenchel conjugate h*(w) of a built-in convex regularizer (+Inf outside its
 * domain); returns 0 and sets *ok = 0 for types without one (user,
 * fedplt-nonconvex). */
double dpdo__reg_conjugate(const struct dpdo_regularizer *reg, const double *w, int *ok);
/* Largest theta in [0,1] with h*(theta w) finite (1 if always finite). */
double dpdo__reg_dual_scale(const struct dpdo_regularizer *reg, const double *w);
/* value/prox without argument checks (message into err) */
int dpdo__reg_value(struct dpdo_regularizer *reg, const double *x, double *out, char *err);
int dpdo__reg_prox(struct dpdo_regularizer *reg, const double *v, double t, double *out, char *err);
int dpdo__reg_grad(struct dpdo_regularizer *reg, const double *x, double *g, char *err);
double dpdo__reg_modulus_builtin(const struct dpdo_regularizer *reg);
/* The dual-averaging map coordinate by coordinate (regularizer.c): kind NONE = not pointwise (use
 * dpdo_regularizer_da_map); SCALE x = z c; SOFT x = S_tau(z) c; DIV x = -z / c (no regularizer). */
enum { DPDO__PMAP_NONE, DPDO__PMAP_SCALE, DPDO__PMAP_SOFT, DPDO__PMAP_DIV };
typedef struct dpdo__reg_pmap {
    int kind;
    double tau, c;
} dpdo__reg_pmap;
/* reg NULL: no regularizer. Checks kappa, gamma and the modulus as dpdo_regularizer_da_map does;
 * message into err. */
int dpdo__reg_da_pointwise(struct dpdo_regularizer *reg, double kappa, double gamma,
                           dpdo__reg_pmap *pm, char *err);
/* The constants alone (no checks, no callbacks: the same pm as a successful
 * dpdo__reg_da_pointwise with these arguments). */
void dpdo__reg_pmap_of(const struct dpdo_regularizer *reg, double kappa, double gamma,
                       dpdo__reg_pmap *pm);

/* S_tau(v) for tau >= 0, branch-free (max/min instructions, vectorisable): exactly one of
 * v - tau > 0, v + tau < 0 can hold, and the other term is +0, so the value is bit for bit
 * that of the three-way form v > tau ? v - tau : v < -tau ? v + tau : 0. */
static inline double dpdo__soft(double v, double tau)
{
    double a = v - tau, b = v + tau;
    return (a > 0.0 ? a : 0.0) + (b < 0.0 ? b : 0.0);
}

/* The map of one coordinate (NaN for kind NONE): the arithmetic of dpdo_regularizer_da_map. */
static inline double dpdo__reg_pmap_one(const dpdo__reg_pmap *pm, double z)
{
    switch (pm->kind) {
    case DPDO__PMAP_SCALE:
        return z * pm->c;
    case DPDO__PMAP_SOFT:
        return dpdo__soft(z, pm->tau) * pm->c;
    case DPDO__PMAP_DIV:
        return -z / pm->c;
    default:
        return NAN;
    }
}

/* x = map(z) on n coordinates (nothing for kind NONE); always inlined, so that it is vectorised
 * for the target of the loop that calls it (DP-DDA's AVX2 block loops) */
DPDO__ALWAYS_INLINE static inline void dpdo__reg_pmap_apply(const dpdo__reg_pmap *pm,
                                                            const double *restrict z,
                                                            double *restrict x, size_t n)
{
    const double c = pm->c, tau = pm->tau;
    switch (pm->kind) {
    case DPDO__PMAP_SCALE:
        for (size_t j = 0; j < n; j++)
            x[j] = z[j] * c;
        break;
    case DPDO__PMAP_SOFT:
        for (size_t j = 0; j < n; j++)
            x[j] = dpdo__soft(z[j], tau) * c;
        break;
    case DPDO__PMAP_DIV:
        for (size_t j = 0; j < n; j++)
            x[j] = -z[j] / c;
        break;
    default:
        break;
    }
}
/* scalar prox of lambda u^2/(1+u^2): global minimiser (exposed for tests) */
double dpdo__ncvx_prox1(double v, double lambda, double t);

/* ---- losses ------------------------------------------------------------- */
enum {
    DPDO__LOSS_USER = -1,
    DPDO__LOSS_HINGE = 0,
    DPDO__LOSS_LOGISTIC,
    DPDO__LOSS_SQUARED,
    DPDO__LOSS_NBUILTIN
};

struct dpdo_loss {
    uint32_t magic; /* DPDO__MAGIC_* while alive, 0 after destroy (core_impl.h) */
    const dpdo_loss_type *type;
    int builtin; /* DPDO__LOSS_* */
    int kind;    /* DPDO_LOSS_KIND_* */
    void *user;
    int64_t dim;
    size_t tsize;
    double *scratch;   /* 2*dim */
    int64_t borrowers; /* nodes borrowing this loss (core_impl.h, borrowed handles) */
    int doomed;        /* destroy requested while borrowed */
    char errmsg[DPDO__ERRMSG_LEN];
};
/* Borrowing (core_impl.h): retain/release by the borrower; release frees a doomed loss. */
void dpdo__loss_retain(struct dpdo_loss *l);
void dpdo__loss_release(struct dpdo_loss *l);

/* The built-in phi functions in the kernel's signature (ctx unused). */
double dpdo__phi_hinge(const void *ctx, double m, double y, double *loss);
double dpdo__phi_logistic(const void *ctx, double m, double y, double *loss);
double dpdo__phi_squared(const void *ctx, double m, double y, double *loss);
/* Convex conjugate phi*(u; y) of a built-in phi (+Inf outside its domain). */
double dpdo__phi_conjugate(int builtin, double u, double y);

/* The evaluation shared by dpdo_loss_eval and dpdo_node_eval: arguments are
 * already validated except the indices; scratch has 2*dim doubles.
 * `scale` multiplies value and gradient on output (1 for the public mean);
 * outputs written only on success. */
int dpdo__loss_eval(const struct dpdo_loss *loss, const struct dpdo_shard *sh, const double *x,
                    const int64_t *idx, int64_t m, double clip, double *value, double *grad,
                    int64_t *nclipped, double *scratch, char *err);
/* dpdo__loss_eval with the node's transposed copy (if built) for a full batch (idx NULL) of a
 * built-in loss on short dense rows: the same bits as dpdo__loss_eval, faster. */
int dpdo__loss_eval_node(struct dpdo_node *nd, const double *x, const int64_t *idx, int64_t m,
                         double clip, double *value, double *grad, int64_t *nclipped, char *err);
/* The same, accumulating into grad itself (as dpdo__loss_eval_into: grad garbage after a
 * failure); for the local solvers, whose gradient buffer is a workspace. */
int dpdo__loss_eval_node_into(struct dpdo_node *nd, const double *x, const int64_t *idx, int64_t m,
                              double clip, double *value, double *grad, int64_t *nclipped,
                              char *err);
/* Build the node's transposed copy once if it can be used (a built-in loss, a local shard of
 * dense rows with d <= 16): (d + 1) * qp doubles, qp = q rounded up to a multiple of 32. Safe
 * against a concurrent call on the same node (compare-and-swap; the loser frees its copy).
 * DPDO_OK (also when not applicable), DPDO_E_NOMEM. */
int dpdo__node_prepare_full(struct dpdo_node *nd);
/* The same, but the gradient is accumulated in grad itself (no scratch copy): grad must not
 * overlap x or scratch, and it holds garbage after a failure. For the engine's per-round
 * calls, whose output row is scratch anyway (a failed round changes no state). It uses
 * scratch[dim .. 2 dim) only: a caller may keep a d-vector in scratch[0 .. dim) across the call
 * (DP-DDA keeps its noise there). */
int dpdo__loss_eval_into(const struct dpdo_loss *loss, const struct dpdo_shard *sh, const double *x,
                         const int64_t *idx, int64_t m, double clip, double *value, double *grad,
                         int64_t *nclipped, double *scratch, char *err);
/* dpdo__loss_eval_into for one sampled row (idx = {idx0}, m = 1) of a linear loss other than the
 * built-in logistic on dense rows, without forming the gradient: it is 0 + coef * row[k] (k <
 * dim), which the caller forms in a pass of its own and tests for finiteness (a non-finite
 * value: dpdo__loss_err_grad). Returns 1 (coef and row set), 0 for other losses or layouts
 * (nothing done: call dpdo__loss_eval_into), or the error of dpdo__loss_eval_into (message in
 * err). */
int dpdo__loss_row1(const struct dpdo_loss *loss, const struct dpdo_shard *sh, const double *x,
                    int64_t idx0, double clip, double *coef, const double **row, char *err);
/* 1 if dpdo__loss_row1 applies to the loss and the shard's rows */
int dpdo__loss_row1_ok(const struct dpdo_loss *loss, const struct dpdo_shard *sh);
/* DPDO_E_NUMERIC with dpdo__loss_eval_into's message for a non-finite gradient */
int dpdo__loss_err_grad(const struct dpdo_loss *loss, char *err);
int dpdo__loss_check_x(const struct dpdo_loss *loss, const struct dpdo_shard *sh, const double *x,
                       int64_t dim, const int64_t *idx, int64_t m, double clip, char *err);
int dpdo__loss_constants(struct dpdo_loss *loss, const struct dpdo_shard *sh, double radius,
                         double *lip, double *smooth, char *err);

/* ---- nodes -------------------------------------------------------------- */
struct dpdo_node {
    uint32_t magic;           /* DPDO__MAGIC_* while alive, 0 after destroy (core_impl.h) */
    struct dpdo_shard *shard; /* borrowed, may be NULL (model-kind loss) */
    struct dpdo_loss *loss;   /* borrowed */
    double weight;
    int64_t dim;
    double *scratch;     /* 2*dim */
    int64_t remote_rows; /* > 0: a remote node (no shard; data on another process) */
    int64_t borrowers;   /* reference solvers borrowing this node */
    int doomed;          /* destroy requested while borrowed */
    /* transposed copy of the shard's rows for full-batch built-in loss gradients (kernels_l8.c),
     * built by dpdo__node_prepare_full (an algorithm's prepare), NULL until then; published once
     * with compare-and-swap, read with acquire, freed with the node; a cache only: the results
     * are the same bits without it */
    _Atomic(struct dpdo__tcopy *) tcopy;
    char errmsg[DPDO__ERRMSG_LEN];
};
void dpdo__node_retain(struct dpdo_node *nd);
void dpdo__reg_retain(struct dpdo_regularizer *r);
void dpdo__reg_release(struct dpdo_regularizer *r);
void dpdo__node_release(struct dpdo_node *nd);

#endif /* DPDO_MODEL_IMPL_H */
