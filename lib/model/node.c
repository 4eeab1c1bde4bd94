/* SPDX-License-Identifier: BSD-3-Clause */
/* Nodes: a borrowed shard + a borrowed loss + a weight, with their own
 * scratch so distinct nodes can be evaluated in parallel. */
#include "model_impl.h"
#include <math.h>
#include <string.h>

DPDO_API int dpdo_node_create(dpdo_node **out, dpdo_shard *shard, dpdo_loss *loss, double weight)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (!loss) return DPDO_E_INVAL;
    if (!isfinite(weight) || !(weight > 0.0))
        return dpdo__err(loss->errmsg, DPDO_E_INVAL, "node weight %g must be finite and > 0",
                         weight);
    if (!shard && loss->kind != DPDO_LOSS_KIND_MODEL)
        return dpdo__err(loss->errmsg, DPDO_E_INVAL,
                         "a node with loss '%s' needs a shard (only model-kind losses may go "
                         "without data)",
                         loss->type->name);
    if (shard) {
        const struct dpdo_dataset *ds = shard->parent;
        if (loss->kind == DPDO_LOSS_KIND_PHI && ds->d != loss->dim)
            return dpdo__err(loss->errmsg, DPDO_E_INVAL,
                             "loss '%s' has dimension %lld but the shard's data has %lld features",
                             loss->type->name, (long long)loss->dim, (long long)ds->d);
        if (loss->builtin == DPDO__LOSS_HINGE || loss->builtin == DPDO__LOSS_LOGISTIC) {
            for (int64_t k = 0; k < shard->n; k++) {
                int64_t r = dpdo__shard_row(shard, k);
                if (ds->y[r] != 1.0 && ds->y[r] != -1.0)
                    return dpdo__err(loss->errmsg, DPDO_E_INVAL,
                                     "dataset row %lld: label %g is not -1 or +1 (the %s loss "
                                     "needs binary labels)",
                                     (long long)r, ds->y[r], loss->type->name);
            }
        }
    }
    size_t nbytes;
    if (!dpdo__mul_size((size_t)loss->dim, 2 * sizeof(double), &nbytes)) return DPDO_E_NOMEM;
    struct dpdo_node *nd = dpdo__calloc(1, sizeof *nd);
    if (!nd) return DPDO_E_NOMEM;
    nd->magic = DPDO__MAGIC_NODE;
    atomic_init(&nd->tcopy, NULL);
    nd->scratch = dpdo__alloc(nbytes);
    if (!nd->scratch) {
        dpdo__free(nd);
        return DPDO_E_NOMEM;
    }
    nd->shard = shard;
    nd->loss = loss;
    nd->weight = weight;
    nd->dim = loss->dim;
    dpdo__loss_retain(loss);
    if (shard) dpdo__shard_retain(shard);
    *out = nd;
    return DPDO_OK;
}

int dpdo__node_prepare_full(struct dpdo_node *nd)
{
    if (!nd->shard || nd->loss->builtin < 0 || nd->loss->kind != DPDO_LOSS_KIND_PHI ||
        atomic_load_explicit(&nd->tcopy, memory_order_acquire))
        return DPDO_OK;
    struct dpdo__tcopy *tc = NULL, *none = NULL;
    int rc = dpdo__tcopy_build(nd->shard, &tc);
    if (rc || !tc) return rc;
    if (!atomic_compare_exchange_strong_explicit(&nd->tcopy, &none, tc, memory_order_acq_rel,
                                                 memory_order_acquire))
        dpdo__tcopy_free(tc); /* another thread published one first */
    return DPDO_OK;
}

static void node_free(struct dpdo_node *node)
{
    dpdo__tcopy_free(atomic_load_explicit(&node->tcopy, memory_order_acquire));
    dpdo__loss_release(node->loss);
    if (node->shard) dpdo__shard_release(node->shard);
    dpdo__free(node->scratch);
    dpdo__free(node);
}

DPDO_API void dpdo_node_destroy(dpdo_node *node)
{
    if (!node || !DPDO__LIVE(node, DPDO__MAGIC_NODE)) return; /* NULL or destroyed */
    DPDO__KILL(node);
    if (node->borrowers > 0) {
        node->doomed = 1; /* freed by the last borrower */
        return;
    }
    node_free(node);
}

void dpdo__node_retain(struct dpdo_node *nd)
{
    nd->borrowers++;
}

void dpdo__node_release(struct dpdo_node *nd)
{
    if (nd && --nd->borrowers == 0 && nd->doomed) node_free(nd);
}

DPDO_API const char *dpdo_node_errmsg(const dpdo_node *node)
{
    return node ? node->errmsg : DPDO__NULL_TEXT("dpdo_node_errmsg", "node");
}
DPDO_API int64_t dpdo_node_samples(const dpdo_node *node)
{
    return !node ? 0 : node->remote_rows > 0 ? node->remote_rows : node->shard ? node->shard->n : 0;
}

DPDO_API int dpdo_node_create_remote(dpdo_node **out, dpdo_loss *loss, int64_t samples,
                                     double weight)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (!loss) return DPDO_E_INVAL;
    if (loss->kind == DPDO_LOSS_KIND_MODEL)
        return dpdo__err(loss->errmsg, DPDO_E_INVAL,
                         "a remote node needs a sample-kind loss ('%s' is model-kind)",
                         loss->type->name);
    if (samples < 1)
        return dpdo__err(loss->errmsg, DPDO_E_INVAL, "a remote node needs samples >= 1 (got %lld)",
                         (long long)samples);
    if (!isfinite(weight) || !(weight > 0.0))
        return dpdo__err(loss->errmsg, DPDO_E_INVAL, "node weight %g must be finite and > 0",
                         weight);
    struct dpdo_node *nd = dpdo__calloc(1, sizeof *nd);
    if (!nd) return DPDO_E_NOMEM;
    nd->magic = DPDO__MAGIC_NODE;
    atomic_init(&nd->tcopy, NULL);
    nd->loss = loss;
    nd->weight = weight;
    nd->dim = loss->dim;
    nd->remote_rows = samples;
    dpdo__loss_retain(loss);
    *out = nd;
    return DPDO_OK;
}

DPDO_API int dpdo_node_is_remote(const dpdo_node *node)
{
    return node && node->remote_rows > 0;
}

#define REMOTE_CHECK(node)                                                                         \
    if ((node)->remote_rows > 0)                                                                   \
    return dpdo__err((node)->errmsg, DPDO_E_STATE,                                                 \
                     "the node is remote: its data is on another process")
DPDO_API int64_t dpdo_node_dim(const dpdo_node *node)
{
    return node ? node->dim : 0;
}
DPDO_API double dpdo_node_weight(const dpdo_node *node)
{
    return node ? node->weight : 0.0;
}
DPDO_API dpdo_shard *dpdo_node_shard(const dpdo_node *node)
{
    return node ? node->shard : NULL;
}
DPDO_API dpdo_loss *dpdo_node_loss(const dpdo_node *node)
{
    return node ? node->loss : NULL;
}

DPDO_API int dpdo_node_eval(dpdo_node *node, const double *x, int64_t dim, const int64_t *idx,
                            int64_t m, double clip, double *value, double *grad, int64_t *nclipped)
{
    if (!node) return DPDO_E_INVAL;
    REMOTE_CHECK(node);
    int rc = dpdo__loss_check_x(node->loss, node->shard, x, dim, idx, m, clip, node->errmsg);
    if (rc) return rc;
    return dpdo__loss_eval_node(node, x, idx, m, clip, value, grad, nclipped, node->errmsg);
}

DPDO_API int dpdo_node_lipschitz(dpdo_node *node, double radius, double *out)
{
    if (!node) return DPDO_E_INVAL;
    if (!out) return dpdo__err(node->errmsg, DPDO_E_INVAL, "out is NULL");
    REMOTE_CHECK(node);
    double a, b;
    int rc = dpdo__loss_constants(node->loss, node->shard, radius, &a, &b, node->errmsg);
    if (rc) return rc;
    *out = a;
    return DPDO_OK;
}

DPDO_API int dpdo_node_smoothness(dpdo_node *node, double radius, double *out)
{
    if (!node) return DPDO_E_INVAL;
    if (!out) return dpdo__err(node->errmsg, DPDO_E_INVAL, "out is NULL");
    REMOTE_CHECK(node);
    double a, b;
    int rc = dpdo__loss_constants(node->loss, node->shard, radius, &a, &b, node->errmsg);
    if (rc) return rc;
    *out = b;
    return DPDO_OK;
}
