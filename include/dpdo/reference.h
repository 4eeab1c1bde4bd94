/* SPDX-License-Identifier: BSD-3-Clause */
/* Reference solver: the centralised ground truth x* and F* of a distributed
 * problem, used for suboptimality curves F(x_t) - F*.
 *
 *     F(x) = sum_i omega_i f_i(x) + h(x),   f_i = node i's MEAN loss,
 *
 * with the node weights omega_i chosen by the `weighting` option:
 *   DPDO_WEIGHT_SAMPLES (default)  omega_i = q_i / N: F is the mean over all
 *                                  N = sum q_i samples, (1/N) sum_s loss_s + h;
 *   DPDO_WEIGHT_NODES              omega_i = 1/n: the mean of per-node means
 *                                  (DP-DDA eq. (1)); equals the above when
 *                                  all nodes hold the same number of samples;
 *   DPDO_WEIGHT_NODE_WEIGHTS       omega_i = w_i / sum_j w_j (dpdo_node_weight).
 *
 * Methods (chosen automatically; dpdo_reference_method() names the one used):
 *   "lbfgs"         smooth loss and smooth h: L-BFGS to ||grad F|| <= tol;
 *   "fista"         smooth loss, h with a prox: accelerated proximal gradient
 *                   with backtracking and adaptive restart;
 *   "dual-cd"       hinge loss + "l2": dual coordinate descent (Hsieh et al.
 *                   2008, the LIBLINEAR -s 3 method) on the exact dual;
 *   "dual-cd-ppa"   hinge loss + "elastic-net" with lambda2 > 0: proximal
 *                   point method, each step solved by dual coordinate ascent
 *                   (exact line search); exact dual certificate. Since 0.1.;
 *   "smoothed-fista" hinge with any other h: FISTA on the Nesterov-smoothed
 *                   hinge with continuation (smoothing -> 0).
 * Certificate (dpdo_reference_certificate): a proven upper bound on
 * F(x_returned) - F*: the Fenchel duality gap when the loss has a known
 * conjugate (built-ins) and h does (all built-ins but "fedplt-nonconvex"),
 * ||grad F||^2 / (2 mu) for smooth, mu-strongly convex problems, else NaN
 * (uncertified: user losses, nonconvex h, or no strong convexity and no
 * finite conjugate, e.g. hinge + "none"). The solver stops when the
 * certificate is <= tol * max(1, |F|) (or, for "lbfgs", when ||grad F|| <= tol).
 * See docs/model.md for the exact formulas and tolerances.
 *
 * Thread-safety: per handle; the borrowed nodes must not be used elsewhere
 * during a solve. */
#ifndef DPDO_REFERENCE_H
#define DPDO_REFERENCE_H

#include "export.h"
#include "node.h"
#include "regularizer.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== ADVANCED ZONE: reference solvers (non-private optimum, certificates) ==== */

typedef struct dpdo_reference dpdo_reference;

enum { DPDO_WEIGHT_SAMPLES = 0, DPDO_WEIGHT_NODES = 1, DPDO_WEIGHT_NODE_WEIGHTS = 2 };

typedef struct dpdo_reference_options {
    size_t struct_size;   /* set by dpdo_reference_options_init */
    int32_t weighting;    /* DPDO_WEIGHT_* (default SAMPLES). Since 0.1. */
    double tol;           /* stopping tolerance, see above; 0 (default) = the method's
                             default: 1e-10, or 1e-6 for "smoothed-fista". Since 0.1. */
    int64_t max_iter;     /* iteration cap (default 200000; epochs for dual-cd and
                             dual-cd-ppa). Since 0.1. */
    int32_t lbfgs_memory; /* L-BFGS pairs (default 10). Since 0.1. */
    int64_t reserved[4];  /* must be 0: room for later fields (docs/abi.md). Since 0.2. */
} dpdo_reference_options;

/* Fill defaults; struct_size = sizeof *o as the caller compiled it.
 * Returns DPDO_OK, DPDO_E_INVAL (o NULL),
 * DPDO_E_VERSION (struct_size < sizeof(size_t)); any older (smaller) or newer
 * (larger) struct_size is accepted (docs/abi.md, "Options structs"). Since 0.1. */
DPDO_API int dpdo_reference_options_init(dpdo_reference_options *o, size_t struct_size);

/* Create a solver for n_nodes in [1, 2^31) nodes (the array is copied, the nodes and
 * reg are BORROWED; reg may be NULL = "none"). All nodes and reg must have the
 * same dimension. Allocates all work memory. Returns DPDO_OK, DPDO_E_INVAL
 * (NULL, dimension mismatch, bad option, all weights zero), DPDO_E_VERSION,
 * DPDO_E_NOMEM. *out NULL on failure; the message of an options or
 * dimension failure is left in dpdo_node_errmsg(nodes[0]) (or of the node
 * named). Since 0.1. n_nodes is int64_t: Since 0.2. */
DPDO_API int dpdo_reference_create(dpdo_reference **out, dpdo_node *const *nodes, int64_t n_nodes,
                                   dpdo_regularizer *reg, const dpdo_reference_options *opts);
DPDO_API void dpdo_reference_destroy(dpdo_reference *ref);             /* NULL no-op. Since 0.1. */
DPDO_API const char *dpdo_reference_errmsg(const dpdo_reference *ref); /* never NULL */

/* Solve from x = 0; write x*[dim] and F* = F(x*) (either may be NULL).
 * Returns DPDO_OK (tolerance reached), DPDO_E_NUMERIC (max_iter reached
 * without reaching the tolerance -- x and F are still written and the
 * certificate is available -- or a non-finite value), DPDO_E_INVAL (dim),
 * DPDO_E_CALLBACK (a user callback failed). Since 0.1. */
DPDO_API int dpdo_reference_solve(dpdo_reference *ref, double *x, int64_t dim, double *fstar);
/* F(x) for any x[dim] (for suboptimality curves and comparisons). +Inf when
 * x is outside dom h. Since 0.1. */
DPDO_API int dpdo_reference_objective(dpdo_reference *ref, const double *x, int64_t dim, double *F);
/* After a solve: certified bound on F(x*) - F* (NaN if uncertified),
 * iterations used, and the method's name. Since 0.1. */
DPDO_API double dpdo_reference_certificate(const dpdo_reference *ref);
DPDO_API int64_t dpdo_reference_iterations(const dpdo_reference *ref);
DPDO_API const char *dpdo_reference_method(const dpdo_reference *ref);

#ifdef __cplusplus
}
#endif
#endif /* DPDO_REFERENCE_H */
