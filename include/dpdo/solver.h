/* SPDX-License-Identifier: BSD-3-Clause */
/* Local solvers: approximate proximal steps on one node (Fed-PLT,
 * docs/design/notes/fed-plt.md §3). A solver starts from the warm start w = x (in/out) and runs
 * `epochs` steps (N_e) on the local Peaceman-Rachford objective
 *
 *     d(w) = f(w) + ||w - v||^2 / (2 rho),
 *
 * where f is the node's MEAN loss over its own samples (dpdo_node_eval with
 * idx == NULL: no regularizer), v the point the algorithm hands the node and
 * rho > 0 the penalty. Its exact minimiser is prox_{rho f}(v).
 * With mu_d = lambda_lo + 1/rho and L_d = lambda_hi + 1/rho (the strong
 * convexity and smoothness moduli of d when f is lambda_lo-strongly convex
 * and lambda_hi-smooth):
 *
 *   "gd"               w <- w - gamma (grad f(w) + (w - v)/rho)          (eq. 11)
 *                      default gamma* = 2/(lambda_hi + lambda_lo + 2/rho)
 *   "agd"              Nesterov with constant step 1/L_d and momentum
 *                      beta = (sqrt L_d - sqrt mu_d)/(sqrt L_d + sqrt mu_d);
 *                      the output is the extrapolated point w^{N_e}      (eq. 12)
 *   "sgd"              gd with grad f replaced by the mean over a fresh
 *                      uniform mini-batch (without replacement) per step;
 *                      the prox part (w - v)/rho stays exact
 *   "noisy-gd"         gd plus sqrt(2 gamma) tau g, g ~ N(0, I), at every
 *                      step including the last                            (eq. 13)
 *                      default gamma = 1/(lambda_hi + 1/rho) (DP preset)
 *   "exact-quadratic"  the exact prox for the built-in "squared" loss:
 *                      w = (I + rho A)^{-1}(v - rho b), A = (1/q) sum a a^T,
 *                      b = -(1/q) sum y a (Cholesky, LAPACK dposv); epochs ignored
 *
 * Formulas, defaults, contraction constants and the RNG stream layout are in
 * docs/solver.md.
 *
 * User solver types fill a dpdo_solver_type and pass it to
 * dpdo_solver_create(); their callbacks take `void *user` first and return 0
 * on success; any other value makes the calling function return
 * DPDO_E_CALLBACK with the code quoted in dpdo_solver_errmsg().
 *
 * Thread-safety: a solver handle owns scratch memory, so one handle is used
 * by one thread at a time (create one per thread or per node). Type objects
 * and the dpdo_solver_type_* lookups are thread-safe. */
#ifndef DPDO_SOLVER_H
#define DPDO_SOLVER_H

#include "export.h"
#include "node.h"
#include "rng.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== ADVANCED ZONE: local solvers (built-in and user types) ==== */

typedef struct dpdo_solver dpdo_solver;

/* A local-solver type. Fields may only be appended; the library reads a
 * field only if struct_size covers it. The contract a user solver should
 * meet for the Fed-PLT theory to apply (warm start, contraction toward the
 * exact prox, i.i.d. errors, DP accountability) is docs/solver.md §1. */
typedef struct dpdo_solver_type {
    size_t struct_size; /* sizeof(dpdo_solver_type) as the caller compiled it (required) */
    const char *name;   /* required, non-empty */
    /* required: run `epochs` steps from the warm start w[dim] (overwritten
     * with the result) on d(w) above; randomness only from rng streams
     * (node_id, round, DPDO_PURPOSE_SAMPLE or DPDO_PURPOSE_NOISE; rng may be
     * NULL if the caller has none); 0 = success, anything else ->
     * DPDO_E_CALLBACK with the code in the message. The node may be
     * evaluated with dpdo_node_eval(). */
    int (*run)(void *user, dpdo_node *node, const double *v, int64_t dim, double rho,
               int64_t epochs, const dpdo_rng *rng, uint64_t node_id, uint64_t round, double *w);
    /* optional: contraction factor c(epochs) toward prox_{rho f}(v) (
     * docs/design/notes/fed-plt.md §3.6 R2) for f in F(lambda_lo, lambda_hi) (NaN = unknown); NULL
     * = unknown */
    int (*contraction)(void *user, double rho, int64_t epochs, double lambda_lo, double lambda_hi,
                       double *c);
    /* optional: runs exactly once, at dpdo_solver_destroy */
    void (*release)(void *user);
} dpdo_solver_type;

/* Built-in type by name ("gd", "agd", "sgd", "noisy-gd", "exact-quadratic");
 * NULL if unknown or name is NULL. Built-in type objects are opaque: use them
 * only through a solver handle. Thread-safe. Since 0.1. */
DPDO_API const dpdo_solver_type *dpdo_solver_type_find(const char *name);
/* Iterate over the built-in types: next(NULL) is the first, NULL after the
 * last (or for a type that is not built in). Thread-safe. Since 0.1. */
DPDO_API const dpdo_solver_type *dpdo_solver_type_next(const dpdo_solver_type *prev);
/* The type's name ("(null)" for NULL). Thread-safe. Since 0.1. */
DPDO_API const char *dpdo_solver_type_name(const dpdo_solver_type *t);

/* Create a solver for models with `dim` parameters in *out (NULL on
 * failure). Allocates all scratch for dim here (3*dim doubles; plus
 * dim*dim + dim for "exact-quadratic"; plus `batch` indices for "sgd"), so
 * runs allocate nothing. Parameters start at their defaults (see
 * dpdo_solver_set). Built-in type: `user` must be NULL. User type: `user` is
 * passed to every callback; its ownership moves to the handle on success
 * only (release runs at destroy, never on a failed create). The type object
 * is borrowed and must outlive the handle.
 * Returns DPDO_OK, DPDO_E_INVAL (NULL out/type, dim < 1, user != NULL for a
 * built-in, user type without name or run; "exact-quadratic" with dim >
 * INT32_MAX), DPDO_E_VERSION (user type's struct_size does not cover run),
 * DPDO_E_NOMEM. No handle exists on failure, so there is no message.
 * Since 0.1. */
DPDO_API int dpdo_solver_create(dpdo_solver **out, const dpdo_solver_type *type, void *user,
                                int64_t dim);
/* Destroy; runs release(user) once for user types. NULL is a no-op. If an
 * algorithm still borrows it (dpdo_algorithm_set_*), the free (and release)
 * is deferred until the algorithm lets go (docs/abi.md). Since 0.1.
 * Deferred: Since 0.2. */
DPDO_API void dpdo_solver_destroy(dpdo_solver *s);
/* Message about the last failure ("" if none; "dpdo_solver_errmsg: s is NULL" for NULL).
 * Never NULL; valid until the next call on the handle. Since 0.1. */
DPDO_API const char *dpdo_solver_errmsg(const dpdo_solver *s);
/* The type's name ("(null)" for NULL). Since 0.1. */
DPDO_API const char *dpdo_solver_name(const dpdo_solver *s);
/* The dimension given at create (0 for NULL). Since 0.1. */
DPDO_API int64_t dpdo_solver_dim(const dpdo_solver *s);

/* Set a named parameter (copied into the handle):
 *   "step"       gamma; NaN = auto (the default): gd/sgd gamma* =
 *                2/(lambda_hi + lambda_lo + 2/rho) (lambda_lo unknown counts
 *                as 0), noisy-gd 1/(lambda_hi + 1/rho); otherwise finite > 0.
 *                Checked at run against 2/L_d when lambda_hi is known.
 *                gd, sgd, noisy-gd only (agd always uses 1/L_d).
 *   "lambda_lo"  strong-convexity modulus of f (finite, or NaN = unknown, the default)
 *   "lambda_hi"  smoothness modulus of f (finite >= 0, or NaN = unknown, the default)
 *                Both are needed by agd, the auto steps (lambda_hi) and
 *                dpdo_solver_contraction. Every type accepts them.
 *   "tau"        noise scale of noisy-gd, finite >= 0 (default 0 = plain gd)
 *   "clip"       per-sample gradient clip norm, finite >= 0, 0 = off (the
 *                default); gd, sgd, noisy-gd: use clip = L/2 for the
 *                sensitivity L of the Fed-PLT paper's Assumption 3.
 *   "batch"      sgd mini-batch size, an integer in [1, 2^31) (default 1);
 *                reallocates the index buffer (E_NOMEM possible, the old
 *                value is kept then). Must be <= the node's sample count at run.
 *   "l2"         ridge weight r >= 0 (default 0): the local objective becomes
 *                f(w) + (r/2)|w|^2 + |w - v|^2/(2 rho), so a per-sample loss
 *                plus a common (r/2)|w|^2 (Fed-PLT's eps_reg) runs through a
 *                built-in loss; lambda_lo/lambda_hi then describe f + (r/2)|w|^2.
 *                Data-independent, so never clipped; 0 gives exactly the
 *                operations of 0.1. gd, agd, sgd, noisy-gd. Since 0.2.
 * Returns DPDO_OK, DPDO_E_INVAL (NULL s/param, unknown name, value out of
 * range), DPDO_E_UNSUPPORTED (parameter not used by this type, e.g. "tau"
 * on gd, so it is never silently ignored), DPDO_E_NOMEM. Not thread-safe on
 * one handle. Since 0.1. */
DPDO_API int dpdo_solver_set(dpdo_solver *s, const char *param, double value);
/* *value = the parameter's current value (NaN for auto/unknown), for every
 * name above on every type. Returns DPDO_OK, DPDO_E_INVAL (NULL, unknown
 * name). Since 0.1. */
DPDO_API int dpdo_solver_get(const dpdo_solver *s, const char *param, double *value);

/* Run the solver: w[dim] (in: warm start x, out: the result) after `epochs`
 * steps on d(w) = f(w) + ||w - v||^2/(2 rho) for the node's f. v[dim] is
 * borrowed; w must not alias v. rng (borrowed, may be NULL for gd, agd,
 * exact-quadratic and noisy-gd with tau = 0) feeds sgd from stream
 * (node_id, round, DPDO_PURPOSE_SAMPLE) and noisy-gd from stream
 * (node_id, round, DPDO_PURPOSE_NOISE), each consumed sequentially over the
 * steps; nothing else is random. epochs = 0 leaves w unchanged (except for
 * exact-quadratic, which ignores epochs). On failure w is unchanged.
 * Allocates nothing.
 * Returns DPDO_OK, DPDO_E_INVAL (NULL s/node/v/w, dim differs from the
 * solver's or the node's, rho <= 0 or not finite, epochs < 0, NaN/Inf in v
 * or w, step outside (0, 2/L_d) when lambda_hi is known, auto step with
 * lambda_hi unknown, agd with lambda_lo or lambda_hi unknown or mu_d <= 0,
 * lambda_lo > lambda_hi, rng NULL when needed, stream ids out of range,
 * sgd batch larger than the node's sample count), DPDO_E_UNSUPPORTED
 * (exact-quadratic on a loss other than the built-in "squared"; sgd or
 * clipping with a model-kind loss), DPDO_E_CALLBACK (user solver, loss or
 * rng callback failed), DPDO_E_NUMERIC (non-finite gradient or result, e.g.
 * divergence with an unchecked step; Cholesky failure). Thread-safety: per
 * handle and per node. Since 0.1. */
DPDO_API int dpdo_solver_run(dpdo_solver *s, dpdo_node *node, const double *v, int64_t dim,
                             double rho, int64_t epochs, const dpdo_rng *rng, uint64_t node_id,
                             uint64_t round, double *w);

/* *c = contraction factor c(epochs) toward prox_{rho f}(v) (docs/design/notes/fed-plt.md §3.6 R2):
 * ||X(x; v) - prox|| <= c ||x - prox|| for every x, for f in
 * F(lambda_lo, lambda_hi) with the handle's "lambda_lo"/"lambda_hi":
 *   gd, sgd, noisy-gd: chi^epochs, chi = max(|1 - gamma mu_d|, |1 - gamma L_d|)
 *                      (sgd, noisy-gd: for the mean map, i.e. without the
 *                      sampling/noise error, which is additive);
 *   agd:               sqrt(1 + kappa) (1 - 1/sqrt kappa)^(epochs/2),
 *                      kappa = L_d/mu_d (the corrected constant of docs/design/notes/fed-plt.md
 * §3.2; 0 for kappa = 1, 1 for epochs = 0); exact-quadratic:   0; user types:        the
 * contraction callback (gets the lambdas, NaN if unknown). Returns DPDO_OK, DPDO_E_INVAL (NULL, rho
 * <= 0 or not finite, epochs < 0, lambda needed but unknown, lambda_lo > lambda_hi, bad step),
 * DPDO_E_UNSUPPORTED (user type without a contraction callback),
 * DPDO_E_CALLBACK, DPDO_E_NUMERIC (callback gave NaN or a negative value).
 * Since 0.1. */
DPDO_API int dpdo_solver_contraction(dpdo_solver *s, double rho, int64_t epochs, double *c);

/* 1 if the solver is covered by the noisy-GD privacy accounting of docs/design/notes/fed-plt.md §4
 * (docs/design/notes/fed-plt.md §3.6 R5): only "noisy-gd" with tau > 0; 0 otherwise (and for NULL,
 * and for every user type). Since 0.1. */
DPDO_API int dpdo_solver_dp_accountable(const dpdo_solver *s);

#ifdef __cplusplus
}
#endif
#endif /* DPDO_SOLVER_H */
