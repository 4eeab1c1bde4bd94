/* SPDX-License-Identifier: BSD-3-Clause */
/* Nodes: one participant of a distributed problem = its private data shard +
 * a loss (+ an optional positive weight). Its local objective is the MEAN
 * loss over its own samples, f_i(x) = (1/q_i) sum_{k < q_i} l(x; sample k);
 * nodes may hold different sample counts q_i. Algorithms activate nodes,
 * sample from them and account privacy per node.
 *
 * Thread-safety: a node keeps its own scratch memory, so distinct nodes may
 * be evaluated concurrently (even when they share a loss or a dataset) as
 * long as the loss's user callbacks are thread-safe; one node is used by one
 * thread at a time. */
#ifndef DPDO_NODE_H
#define DPDO_NODE_H

#include "dataset.h"
#include "export.h"
#include "loss.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== CORE ZONE: nodes: a shard and a loss ==== */

typedef struct dpdo_node dpdo_node;

/* Create a node in *out (NULL on failure). shard and loss are BORROWED and
 * must outlive the node; shard may be NULL only for a model-kind loss
 * (then the node has 0 samples). The node's dimension is the loss's; for
 * phi-kind losses it must equal the shard's feature count. Built-in hinge
 * and logistic losses require every label of the shard to be -1 or +1
 * (checked once here; the message names the row). weight must be finite and
 * > 0 (use 1 by default); it is used by DPDO_WEIGHT_NODE_WEIGHTS in the
 * reference solver and by algorithms that weight nodes. Allocates 2*dim
 * doubles of scratch. Returns DPDO_OK, DPDO_E_INVAL (NULL out/loss, shard NULL
 * for a phi/batch loss, dimension mismatch, non-binary label, bad weight;
 * the message is left in dpdo_loss_errmsg(loss), since no node exists),
 * DPDO_E_NOMEM. Since 0.1. */
DPDO_API int dpdo_node_create(dpdo_node **out, dpdo_shard *shard, dpdo_loss *loss, double weight);

/* ==== ADVANCED ZONE: remote nodes (distributed runs) ==== */

/* A node whose data lives in another process of a distributed run
 * (dpdo/transport.h): it has a loss (for the dimension and kind) and a sample
 * count, but no shard. An algorithm only computes for the nodes its process
 * hosts, so a remote node's data is never needed; dpdo_node_eval and the
 * constant queries on it return DPDO_E_STATE. samples >= 1; weight as in
 * dpdo_node_create. Returns DPDO_OK, DPDO_E_INVAL (message in
 * dpdo_loss_errmsg(loss)), DPDO_E_NOMEM. Since 0.1. */
DPDO_API int dpdo_node_create_remote(dpdo_node **out, dpdo_loss *loss, int64_t samples,
                                     double weight);
/* 1 for a node made by dpdo_node_create_remote, else 0. Since 0.1. */
DPDO_API int dpdo_node_is_remote(const dpdo_node *node);

/* ==== CORE ZONE: nodes: destroy and query ==== */

/* Destroy; NULL is a no-op. Lets go of the borrowed shard and loss (frees
 * them if they were destroyed while borrowed). If reference solvers still
 * borrow the node, the free is deferred until the last of them is destroyed
 * (docs/abi.md, "Destroying a borrowed handle"). Since 0.1. Deferred: Since 0.2. */
DPDO_API void dpdo_node_destroy(dpdo_node *node);
/* Last failure message; never NULL ("dpdo_node_errmsg: node is NULL"
 * for NULL). Since 0.1. */
DPDO_API const char *dpdo_node_errmsg(const dpdo_node *node);
/* Sample count q_i (0 for NULL or shard-less nodes), dimension (0 for NULL),
 * weight (0 for NULL). Since 0.1. */
DPDO_API int64_t dpdo_node_samples(const dpdo_node *node);
DPDO_API int64_t dpdo_node_dim(const dpdo_node *node);
DPDO_API double dpdo_node_weight(const dpdo_node *node);
/* Borrowed pointers to the node's shard (may be NULL) and loss. Since 0.1. */
DPDO_API dpdo_shard *dpdo_node_shard(const dpdo_node *node);
DPDO_API dpdo_loss *dpdo_node_loss(const dpdo_node *node);

/* Local objective at x[dim]: same contract as dpdo_loss_eval (mean over all
 * samples when idx == NULL and m == 0, or over the local mini-batch idx[0..m-1];
 * per-sample clipping to L2 norm clip when clip > 0, clipped count in
 * *nclipped), using the node's own scratch. Errors are described in
 * dpdo_node_errmsg(). Outputs are written only on success. Since 0.1. */
DPDO_API int dpdo_node_eval(dpdo_node *node, const double *x, int64_t dim, const int64_t *idx,
                            int64_t m, double clip, double *value, double *grad, int64_t *nclipped);

/* Per-sample Lipschitz and smoothness constants on this node's data (see
 * dpdo_loss_lipschitz; radius bounds ||x||). Since 0.1. */
DPDO_API int dpdo_node_lipschitz(dpdo_node *node, double radius, double *out);
DPDO_API int dpdo_node_smoothness(dpdo_node *node, double radius, double *out);

#ifdef __cplusplus
}
#endif
#endif /* DPDO_NODE_H */
