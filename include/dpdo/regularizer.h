/* SPDX-License-Identifier: BSD-3-Clause */
/* Regularizers h(x): the composite part of F(x) = f(x) + h(x).
 *
 * Built-in types (dpdo_regularizer_type_find(name)), with the parameters
 * passed to dpdo_regularizer_create() in `params`:
 *   "none"              h = 0                                  params: -
 *   "l2"                h = lambda/2 ||x||^2                   params: {lambda >= 0}
 *   "l1"                h = lambda ||x||_1                     params: {lambda >= 0}
 *   "elastic-net"       h = lambda1 ||x||_1 + lambda2/2 ||x||^2  params: {lambda1 >= 0, lambda2 >=
 * 0} "l2-ball"           h = indicator{ ||x||_2 <= r }          params: {r > 0} "box" h =
 * indicator{ lo <= x_j <= hi for all j }  params: {lo, hi}, lo <= hi (lo may be -Inf, hi +Inf)
 *   "fedplt-nonconvex"  h = lambda sum_j x_j^2 / (1 + x_j^2)  params: {lambda >= 0}
 *                       (Fed-PLT Sec. VII; nonconvex, (lambda/2)-weakly convex)
 * Exact formulas for every prox and dual-averaging map are in docs/model.md.
 *
 * User types fill a dpdo_regularizer_type; every callback takes `void *user`
 * first and returns 0 on success; any other value makes the calling function
 * return DPDO_E_CALLBACK with the code quoted in dpdo_regularizer_errmsg().
 *
 * Thread-safety: a regularizer handle is read-only after creation except for
 * its error message; concurrent calls on one handle are safe only if no call
 * fails (the message buffer is shared) and the user callbacks are thread-safe.
 * Type objects and dpdo_regularizer_type_* lookups are thread-safe. */
#ifndef DPDO_REGULARIZER_H
#define DPDO_REGULARIZER_H

#include "export.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== ADVANCED ZONE: regularizers (built-in and user types) ==== */

typedef struct dpdo_regularizer dpdo_regularizer;

/* A regularizer type. Fields may only be appended; the library reads a field
 * only if struct_size covers it. */
typedef struct dpdo_regularizer_type {
    size_t struct_size; /* sizeof(dpdo_regularizer_type) as the caller compiled it (required) */
    const char *name;   /* required, non-empty */
    /* required: *out = h(x) (+Inf allowed: outside the domain) */
    int (*value)(void *user, const double *x, int64_t dim, double *out);
    /* optional: g = grad h(x); NULL means h is not differentiable */
    int (*grad)(void *user, const double *x, int64_t dim, double *g);
    /* optional: out = argmin_u h(u) + ||u - v||^2 / (2t), t > 0; out may alias v */
    int (*prox)(void *user, const double *v, int64_t dim, double t, double *out);
    /* optional: *mu = strong-convexity modulus (negative: weakly convex); NULL means 0 */
    int (*modulus)(void *user, double *mu);
    /* optional: runs exactly once, at dpdo_regularizer_destroy */
    void (*release)(void *user);
} dpdo_regularizer_type;

/* Built-in type by name ("none", "l2", "l1", "elastic-net", "l2-ball", "box",
 * "fedplt-nonconvex"); NULL if unknown or name is NULL. Thread-safe. Since 0.1. */
DPDO_API const dpdo_regularizer_type *dpdo_regularizer_type_find(const char *name);
/* Iterate over the built-in types: next(NULL) is the first, NULL after the
 * last (or for a type that is not built in). Thread-safe. Since 0.1. */
DPDO_API const dpdo_regularizer_type *dpdo_regularizer_type_next(const dpdo_regularizer_type *prev);
/* The type's name ("(null)" for NULL). Since 0.1. */
DPDO_API const char *dpdo_regularizer_type_name(const dpdo_regularizer_type *type);

/* Create a regularizer on R^dim in *out (NULL on failure).
 * Built-in type: `user` must be NULL; params[0..nparams-1] as listed above
 * (copied; nparams must match exactly). User type: params must be NULL and
 * nparams 0; `user` is passed to every callback, and ownership of it moves
 * to the handle on success only (release() runs at destroy, never on a
 * failed create). The type object is borrowed and must outlive the handle.
 * Returns DPDO_OK, DPDO_E_INVAL (NULL out/type, dim < 1, wrong nparams, NaN or
 * out-of-range parameter: lambda < 0, r <= 0, lo > hi; user type without
 * name or value callback), DPDO_E_VERSION (type struct_size too small),
 * DPDO_E_NOMEM. No handle exists on failure, so there is no message.
 * Since 0.1. */
DPDO_API int dpdo_regularizer_create(dpdo_regularizer **out, const dpdo_regularizer_type *type,
                                     void *user, int64_t dim, const double *params,
                                     int64_t nparams);
/* Destroy; runs release(user) for user types. NULL is a no-op. If reference
 * solvers still borrow it, the free (and release) is deferred until the last
 * of them is destroyed (docs/abi.md, "Destroying a borrowed handle").
 * Since 0.1. Deferred: Since 0.2. */
DPDO_API void dpdo_regularizer_destroy(dpdo_regularizer *reg);
/* Message about the last failure ("" if none; "dpdo_regularizer_errmsg: reg is NULL"
 * for NULL).
 * Never NULL. Since 0.1. */
DPDO_API const char *dpdo_regularizer_errmsg(const dpdo_regularizer *reg);
/* Dimension (0 for NULL) and type name ("(null)" for NULL). Since 0.1. */
DPDO_API int64_t dpdo_regularizer_dim(const dpdo_regularizer *reg);
DPDO_API const char *dpdo_regularizer_name(const dpdo_regularizer *reg);

/* *out = h(x); +Inf for an indicator outside its set (the l2-ball accepts
 * ||x|| <= r (1 + 8 eps) so that projections count as inside). x has dim
 * finite entries. Returns DPDO_OK, DPDO_E_INVAL (NULL, dim mismatch,
 * non-finite x), DPDO_E_CALLBACK. Since 0.1. */
DPDO_API int dpdo_regularizer_value(dpdo_regularizer *reg, const double *x, int64_t dim,
                                    double *out);
/* g[dim] = grad h(x) where h is differentiable everywhere ("none", "l2",
 * "fedplt-nonconvex", "elastic-net" with lambda1 = 0, "l1" with lambda = 0,
 * user types with a grad callback); else DPDO_E_UNSUPPORTED. Other returns
 * as dpdo_regularizer_value. Since 0.1. */
DPDO_API int dpdo_regularizer_grad(dpdo_regularizer *reg, const double *x, int64_t dim, double *g);
/* out[dim] = prox_{t h}(v) = argmin_u h(u) + ||u - v||^2 / (2 t), t > 0
 * finite; out may alias v. For "fedplt-nonconvex" the global minimiser of
 * the (possibly nonconvex) scalar problems is returned (ties: the smaller
 * |u|). Returns DPDO_OK, DPDO_E_INVAL (NULL, dim, non-finite v, t <= 0),
 * DPDO_E_UNSUPPORTED (user type without prox), DPDO_E_CALLBACK,
 * DPDO_E_NUMERIC (a callback produced a non-finite value). Since 0.1. */
DPDO_API int dpdo_regularizer_prox(dpdo_regularizer *reg, const double *v, int64_t dim, double t,
                                   double *out);
/* *mu = strong-convexity modulus: lambda ("l2"), lambda2 ("elastic-net"),
 * -lambda/2 ("fedplt-nonconvex": negative = weakly convex), 0 otherwise, or
 * the user callback's value (0 without one). Since 0.1. */
DPDO_API int dpdo_regularizer_modulus(dpdo_regularizer *reg, double *mu);

/* Dual-averaging primal map (DP-DDA, docs/design/notes/dp-dda.md §2.6, paper eq. (6)):
 *     x = argmin_u { <z, u> + kappa h(u) + (gamma / 2) ||u||^2 },
 * with kappa = iota A_{t+1} and gamma = gamma_{t+1} in the paper's symbols.
 * Closed forms: l2 x = -z/(kappa lambda + gamma); l1 x = -S_{kappa lambda}(z)/gamma;
 * elastic-net x = -S_{kappa lambda1}(z)/(kappa lambda2 + gamma); l2-ball and
 * box x = Proj(-z/gamma); none x = -z/gamma; otherwise (gamma > 0)
 * x = prox_{(kappa/gamma) h}(-z/gamma). Requires kappa >= 0, gamma >= 0 finite,
 * and gamma > 0 unless kappa*mu > 0 with mu the modulus ("l2", "elastic-net"
 * with lambda2 > 0); otherwise the argmin may not exist or not be unique:
 * DPDO_E_INVAL (e.g. "l1" with gamma = 0, docs/design/notes/dp-dda.md §2.6). x may alias z.
 * Returns as dpdo_regularizer_prox. Since 0.1. */
DPDO_API int dpdo_regularizer_da_map(dpdo_regularizer *reg, const double *z, int64_t dim,
                                     double kappa, double gamma, double *x);

#ifdef __cplusplus
}
#endif
#endif /* DPDO_REGULARIZER_H */
