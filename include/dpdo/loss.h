/* SPDX-License-Identifier: BSD-3-Clause */
/* Losses: the per-sample terms of a node's local objective
 *     f(x) = (1/m) sum_{k in batch} l(x; sample k)        (a MEAN, not a sum).
 *
 * A loss type is one of three kinds, chosen by which callback it sets:
 *   phi   linear model: l(x; a, y) = phi(<a, x>, y); the library computes the
 *         margins from the shard's rows and applies phi. The built-ins are of
 *         this kind (labels must be -1/+1 for hinge and logistic):
 *           "hinge"     phi(m, y) = max(0, 1 - y m); subgradient -y if y m < 1,
 *                       else 0 (so 0 at the kink y m = 1, docs/design/notes/dp-dda.md §2.7)
 *           "logistic"  phi(m, y) = log(1 + exp(-y m)), evaluated as
 *                       max(s, 0) + log1p(exp(-|s|)), s = -y m (finite for any margin)
 *           "squared"   phi(m, y) = (m - y)^2 / 2
 *   batch per-sample / mini-batch callback for any model (the dimension may
 *         differ from the feature count): gets dataset row indices of the
 *         node's own samples and returns the SUM of their losses and
 *         gradients; the library forms the mean and clips.
 *   model model-level callback: parameters in, the node's whole local
 *         objective and its gradient out (arbitrary, nonconvex models). No
 *         mini-batches and no per-sample clipping.
 * Every callback takes `void *user` first and returns 0 on success; any other
 * value makes the calling function return DPDO_E_CALLBACK with the code
 * quoted in the handle's message (e.g. "loss 'mine': phi callback returned 7
 * (dataset row 12)"). Callbacks must not call back into the same handle.
 *
 * Thread-safety: dpdo_loss_eval uses scratch memory inside the loss handle,
 * so one loss handle is used by one thread at a time. Nodes (dpdo/node.h)
 * keep their own scratch: several nodes may share one loss and be evaluated
 * concurrently if the loss's callbacks are thread-safe. */
#ifndef DPDO_LOSS_H
#define DPDO_LOSS_H

#include "dataset.h"
#include "export.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== CORE ZONE: losses by name (user loss types: advanced) ==== */

typedef struct dpdo_loss dpdo_loss;

/* A loss type: exactly one of phi, batch, model must be set. Fields may only
 * be appended; a field is read only if struct_size covers it. */
typedef struct dpdo_loss_type {
    size_t struct_size; /* sizeof(dpdo_loss_type) as the caller compiled it (required) */
    const char *name;   /* required, non-empty */
    /* phi kind: *loss = phi(margin, label), *dloss = d phi / d margin */
    int (*phi)(void *user, double margin, double label, double *loss, double *dloss);
    /* batch kind: for the m dataset rows rows[0..m-1]: *loss_sum = sum of the
     * losses at x; if grad_acc != NULL, ADD the sum of their gradients
     * (dim entries) into grad_acc. May be called several times per evaluation
     * (rows arrive in chunks; m = 1 per call when clipping). */
    int (*batch)(void *user, const double *x, int64_t dim, const int64_t *rows, int64_t m,
                 double *loss_sum, double *grad_acc);
    /* model kind: *value = f(x); if grad != NULL, grad[dim] = grad f(x) */
    int (*model)(void *user, const double *x, int64_t dim, double *value, double *grad);
    /* optional, phi kind: bounds over |margin| <= margin_bound, |label| <=
     * label_bound: *dphi_max >= sup |phi'|, *d2phi_max >= sup phi'' (+Inf allowed) */
    int (*phi_bounds)(void *user, double margin_bound, double label_bound, double *dphi_max,
                      double *d2phi_max);
    /* optional, batch/model kinds: Lipschitz and smoothness constants of one
     * sample's loss (batch) or of f (model); +Inf allowed */
    int (*constants)(void *user, double *lipschitz, double *smoothness);
    /* optional: runs exactly once, at dpdo_loss_destroy */
    void (*release)(void *user);
} dpdo_loss_type;

/* Built-in type by name ("hinge", "logistic", "squared"); NULL if unknown.
 * Thread-safe. Since 0.1. */
DPDO_API const dpdo_loss_type *dpdo_loss_type_find(const char *name);
/* Iterate the built-ins: next(NULL) is the first; NULL after the last.
 * Since 0.1. */
DPDO_API const dpdo_loss_type *dpdo_loss_type_next(const dpdo_loss_type *prev);
/* The type's name ("(null)" for NULL). Since 0.1. */
DPDO_API const char *dpdo_loss_type_name(const dpdo_loss_type *type);

/* Create a loss for models with `dim` parameters in *out (NULL on failure).
 * For the phi kind (and the built-ins) dim must equal the feature count of
 * the shards it is used with. `user` goes to every callback (built-ins:
 * must be NULL); its ownership moves to the handle on success only (release
 * runs at destroy, never on a failed create). The type is borrowed.
 * Allocates 2*dim doubles of scratch. Returns DPDO_OK, DPDO_E_INVAL (NULL,
 * dim < 1, not exactly one of phi/batch/model, empty name), DPDO_E_VERSION
 * (struct_size too small), DPDO_E_NOMEM. Since 0.1. */
DPDO_API int dpdo_loss_create(dpdo_loss **out, const dpdo_loss_type *type, void *user, int64_t dim);
/* Destroy; runs release(user) once. NULL is a no-op. If nodes still borrow
 * the loss, the free (and release) is deferred until the last of them is
 * destroyed; the caller must not use `loss` any more (docs/abi.md,
 * "Destroying a borrowed handle"). Since 0.1. Deferred: Since 0.2. */
DPDO_API void dpdo_loss_destroy(dpdo_loss *loss);
/* Last failure message; never NULL ("dpdo_loss_errmsg: loss is NULL"
 * for NULL). Since 0.1. */
DPDO_API const char *dpdo_loss_errmsg(const dpdo_loss *loss);
DPDO_API int64_t dpdo_loss_dim(const dpdo_loss *loss);      /* 0 for NULL. Since 0.1. */
DPDO_API const char *dpdo_loss_name(const dpdo_loss *loss); /* "(null)" for NULL. Since 0.1. */
/* DPDO_LOSS_KIND_PHI / _BATCH / _MODEL, or -1 for NULL. Since 0.1. */
enum { DPDO_LOSS_KIND_PHI = 0, DPDO_LOSS_KIND_BATCH = 1, DPDO_LOSS_KIND_MODEL = 2 };
DPDO_API int dpdo_loss_kind(const dpdo_loss *loss); /* Since 0.1. */

/* ==== ADVANCED ZONE: evaluating a loss ==== */

/* Scalar phi(margin, label) and its derivative (phi kind only; else
 * DPDO_E_UNSUPPORTED). loss or dloss may be NULL. Returns DPDO_OK,
 * DPDO_E_INVAL (NULL loss, non-finite margin or label), DPDO_E_CALLBACK,
 * DPDO_E_NUMERIC (non-finite result). Since 0.1. */
DPDO_API int dpdo_loss_phi(dpdo_loss *loss, double margin, double label, double *value,
                           double *dloss);

/* Mean loss and mean gradient over samples of `shard` at x[dim]:
 *   idx == NULL, m == 0: all shard rows (the shard's local objective);
 *   idx != NULL, m >= 1: the shard-local rows idx[0..m-1] (0-based, in
 *   [0, dpdo_shard_rows(shard)); repeats allowed): a mini-batch, or one
 *   sample with m = 1.
 * value = (1/m) sum_k l_k(x) and grad[dim] = (1/m) sum_k clip(grad l_k(x)),
 * where clip > 0 rescales each per-sample gradient to L2 norm <= clip
 * (each clipped one is counted in *nclipped) and clip == 0 disables it.
 * value, grad, nclipped may each be NULL. For the model kind, shard may be
 * NULL and only idx == NULL, m == 0, clip == 0 are supported. Outputs are
 * written only on success. Returns DPDO_OK, DPDO_E_INVAL (NULL loss/x, shard
 * NULL for phi/batch kinds, dim mismatch with the loss or the shard's
 * features, index out of range (named), non-finite x, clip < 0 or NaN),
 * DPDO_E_UNSUPPORTED (model kind with a mini-batch or clipping),
 * DPDO_E_CALLBACK, DPDO_E_NUMERIC (non-finite loss or gradient).
 * Thread-safety: per loss handle. Since 0.1. */
DPDO_API int dpdo_loss_eval(dpdo_loss *loss, dpdo_shard *shard, const double *x, int64_t dim,
                            const int64_t *idx, int64_t m, double clip, double *value, double *grad,
                            int64_t *nclipped);

/* Lipschitz constant L (every per-sample gradient has norm <= L) and
 * smoothness constant (every per-sample gradient is that-Lipschitz) of the
 * loss on the shard's samples, for parameters with ||x||_2 <= radius
 * (radius > 0, may be +Inf). Phi kind: with R = max row norm over the
 * shard and Y = max |label|: L = dphi_max(radius R, Y) * R and smoothness
 * d2phi_max * R^2. Built-ins: hinge L = R (for labels +-1), smoothness +Inf
 * (nonsmooth); logistic L = R, smoothness R^2/4; squared L = (radius R + Y) R
 * (+Inf for radius = +Inf), smoothness R^2. Batch/model kinds: the
 * constants callback (radius ignored; DPDO_E_UNSUPPORTED without one).
 * Returns DPDO_OK, DPDO_E_INVAL (NULL, radius <= 0 or NaN, shard NULL for the
 * phi kind), DPDO_E_UNSUPPORTED, DPDO_E_CALLBACK. Since 0.1. */
DPDO_API int dpdo_loss_lipschitz(dpdo_loss *loss, dpdo_shard *shard, double radius, double *out);
DPDO_API int dpdo_loss_smoothness(dpdo_loss *loss, dpdo_shard *shard, double radius, double *out);

#ifdef __cplusplus
}
#endif
#endif /* DPDO_LOSS_H */
