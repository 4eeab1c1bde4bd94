/* SPDX-License-Identifier: BSD-3-Clause */
/* Muffliato (Cyffers, Even, Bellet, Massoulie, "Muffliato: Peer-to-Peer Privacy Amplification
 * for Decentralized Optimization and Averaging", NeurIPS 2022, arXiv 2206.05091) written as a
 * user algorithm type on libdpdo's public API only (dpdo/algorithm_type.h): local Gaussian noise,
 * then K gossip steps with the network's gossip matrix W. Header-only example code (static
 * functions), shared by examples/muffliato.c and tests/test_muffliato.c; docs/muffliato.md.
 *
 * Two modes:
 *   MUFF_GD       each round every node releases its mean clipped gradient g_i at x_i (noise
 *                 added by the engine), then x <- W^K (x - eta g~) (K gossip steps; the paper's
 *                 Muffliato-GD with simple gossip)
 *   MUFF_AVERAGE  one round: node i releases v_i, the mean over its shard of the per-row
 *                 gradients of its loss at 0 clipped to C (a bounded per-row statistic), and
 *                 x <- W^K v~ approximates the network average of the v_i
 * The engine certifies the local-DP figure from the declaration (Gaussian, sensitivity
 * 2 C / (smallest shard) for the full-shard mean or 2 C / batch, one release per node and
 * round). muff_pndp_* compute the paper's pairwise network-DP figures (Renyi, order alpha). */
#ifndef DPDO_EXAMPLES_MUFFLIATO_H
#define DPDO_EXAMPLES_MUFFLIATO_H

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <dpdo/dpdo.h>

enum { MUFF_GD = 0, MUFF_AVERAGE = 1 };

/* The algorithm's settings (the `user` pointer of the type; must outlive its handles). */
typedef struct muff_config {
    int mode;          /* MUFF_GD or MUFF_AVERAGE */
    int64_t K;         /* gossip steps per round (>= 1) */
    double sens_scale; /* 1: declare the true sensitivity (< 1 only to plant a bug in tests) */
    int64_t batch;     /* GD: rows per round's batch, sampled without replacement (0: the
                          whole shard) */
} muff_config;

typedef struct muff_state {
    int bx;     /* block "x": n x d models */
    double *WK; /* n x n: W^K */
    double C, eta;
    int64_t B; /* batch (0: the whole shard) */
    int64_t *idx;
    double *g; /* n x d gradient rows (one per node: local calls may run on threads) */
} muff_state;

/* c = a b for n x n row-major matrices */
static inline void muff_matmul(const double *a, const double *b, double *c, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
            c[i * n + j] = s;
        }
}

/* out = W^k (n x n); 0 or -1 (no memory) */
static inline int muff_wpow(const double *W, int64_t n, int64_t k, double *out)
{
    double *t = malloc((size_t)(n * n) * sizeof *t);
    if (!t) return -1;
    memset(out, 0, (size_t)(n * n) * sizeof *out);
    for (int64_t i = 0; i < n; i++) out[i * n + i] = 1;
    for (int64_t s = 0; s < k; s++) {
        muff_matmul(out, W, t, n);
        memcpy(out, t, (size_t)(n * n) * sizeof *t);
    }
    free(t);
    return 0;
}

static inline int muff_configure(dpdo_alg_ctx *ctx, void *state, void *user)
{
    muff_state *S = state;
    const muff_config *c = user;
    int64_t n = dpdo_alg_nodes(ctx), d = dpdo_alg_dim(ctx);
    dpdo_network *net = dpdo_alg_network(ctx);
    if (c->K < 1 || (c->mode != MUFF_GD && c->mode != MUFF_AVERAGE)) return 1;
    S->bx = dpdo_alg_block(ctx, "x", n, d);
    if (S->bx < 0) return S->bx;
    double *W = malloc((size_t)(n * n) * sizeof *W);
    S->WK = malloc((size_t)(n * n) * sizeof *S->WK);
    S->g = malloc((size_t)(n * d) * sizeof *S->g);
    int rc = !W || !S->WK || !S->g ? DPDO_E_NOMEM : dpdo_network_get_weights(net, W, n * n);
    if (!rc && muff_wpow(W, n, c->K, S->WK)) rc = DPDO_E_NOMEM;
    free(W);
    return rc;
}

static inline void muff_release(void *state, void *user)
{
    (void)user;
    muff_state *S = state;
    free(S->WK), free(S->idx), free(S->g);
    S->WK = NULL, S->idx = NULL, S->g = NULL;
}

/* The declaration: sensitivity of the mean of m per-row gradients clipped to C under
 * replace-one is 2 C / m; m = the batch, or the smallest shard for the full-shard mean. */
static inline int muff_declare(dpdo_alg_ctx *ctx, void *state, void *user, dpdo_release_decl *decl)
{
    muff_state *S = state;
    const muff_config *c = user;
    double clip, step;
    const dpdo_algorithm_options *o = dpdo_alg_options(ctx);
    if (dpdo_alg_param(ctx, DPDO_PARAM_CLIP, &clip) ||
        dpdo_alg_param(ctx, DPDO_PARAM_STEP_SIZE, &step))
        return 2;
    S->C = isnan(clip) || isinf(clip) ? o->lipschitz : clip;
    S->eta = isnan(step) ? 0.5 : step;
    int64_t m = dpdo_node_samples(dpdo_alg_node(ctx, 0));
    for (int64_t i = 1; i < dpdo_alg_nodes(ctx); i++) {
        int64_t q = dpdo_node_samples(dpdo_alg_node(ctx, i));
        m = q < m ? q : m;
    }
    S->B = c->mode == MUFF_GD && c->batch >= 1 && c->batch < m ? c->batch : 0;
    free(S->idx);
    S->idx = NULL;
    if (S->B) {
        if (!(S->idx = malloc((size_t)(S->B * dpdo_alg_nodes(ctx)) * sizeof *S->idx))) return 3;
        decl->sampling = DPDO_RELEASE_WOR;
        decl->batch = S->B;
        m = S->B;
    }
    decl->mechanism = DPDO_RELEASE_GAUSSIAN;
    decl->sensitivity = c->sens_scale * 2.0 * S->C / (double)m;
    decl->dim = dpdo_alg_dim(ctx);
    decl->per_round = 1;
    decl->participation = 1.0;
    return 0;
}

static inline void muff_init(dpdo_alg_ctx *ctx, void *state, void *user)
{
    (void)user;
    muff_state *S = state;
    for (int64_t i = 0; i < dpdo_alg_nodes(ctx); i++)
        memset(dpdo_alg_next(ctx, S->bx, i), 0, (size_t)dpdo_alg_dim(ctx) * sizeof(double));
}

/* node i: the clipped mean gradient at x_i (at 0 when averaging), released with noise (the
 * released copy is what combine reads) */
static inline int muff_local(dpdo_alg_ctx *ctx, void *state, void *user, int64_t i)
{
    muff_state *S = state;
    const muff_config *c = user;
    int64_t d = dpdo_alg_dim(ctx), m = 0;
    double *g = S->g + i * d;
    if (!dpdo_alg_active(ctx, i)) return 0;
    if (c->mode == MUFF_AVERAGE && dpdo_alg_round(ctx) > 1) return 4; /* one round only */
    const int64_t *idx = NULL;
    if (S->B) {
        int rc = dpdo_alg_sample(ctx, i, S->idx + i * S->B, S->B, &m);
        if (rc) return rc;
        idx = S->idx + i * S->B;
    }
    const double *at = dpdo_alg_state(ctx, S->bx, i);
    if (c->mode == MUFF_AVERAGE) { /* the statistic at 0 */
        memset(g, 0, (size_t)d * sizeof *g);
        at = g;
    }
    int rc = dpdo_node_eval(dpdo_alg_node(ctx, i), at, d, idx, idx ? m : 0, S->C, NULL, g, NULL);
    if (rc) return rc;
    return dpdo_alg_release(ctx, i, g, d); /* g += the engine's noise */
}

/* node i after every node's local: x_i = sum_j (W^K)_ij y_j with the half step
 * y_j = x_j - eta g~_j (GD; x_j for an inactive node) or y_j = g~_j (averaging), from the
 * current state and the round's releases only */
static inline int muff_combine(dpdo_alg_ctx *ctx, void *state, void *user, int64_t i)
{
    const muff_config *c = user;
    muff_state *S = state;
    int64_t n = dpdo_alg_nodes(ctx), d = dpdo_alg_dim(ctx);
    double *out = dpdo_alg_next(ctx, S->bx, i);
    memset(out, 0, (size_t)d * sizeof *out);
    for (int64_t j = 0; j < n; j++) {
        double w = S->WK[i * n + j];
        if (w == 0) continue;
        const double *xj = dpdo_alg_state(ctx, S->bx, j);
        const double *gj = dpdo_alg_released(ctx, j, 0);
        for (int64_t k = 0; k < d; k++) {
            double yj = c->mode == MUFF_AVERAGE ? (gj ? gj[k] : 0.0)
                        : gj                    ? xj[k] - S->eta * gj[k]
                                                : xj[k];
            out[k] += w * yj;
        }
    }
    return 0;
}

static inline void muff_output(const dpdo_alg_ctx *ctx, const void *state, void *user, int64_t i,
                        double *x)
{
    (void)user;
    const muff_state *S = state;
    memcpy(x, dpdo_alg_state(ctx, S->bx, i), (size_t)dpdo_alg_dim(ctx) * sizeof *x);
}

/* The vtable (name "muffliato"). */
static const dpdo_algorithm_vtable MUFF_VTABLE = {
    .struct_size = sizeof(dpdo_algorithm_vtable),
    .name = "muffliato",
    .title = "Muffliato: local Gaussian noise then K gossip steps (Cyffers et al. 2022)",
    .state_size = sizeof(muff_state),
    .needs_network = 1,
    .configure = muff_configure,
    .declare = muff_declare,
    .init = muff_init,
    .local = muff_local,
    .combine = muff_combine,
    .output = muff_output,
    .release = muff_release,
};

/* sum_{s=0}^{S-1} c_s sum_{w in N(v)} f((W^s)_uw) / ||(W^s)_{:,w}||^2 with f(x) = x^2 (squared)
 * or x, c_s = 1 (gd = 0) or S - s (gd = 1); -1 on no memory */
static inline double muff_pndp_sum(const double *W, const unsigned char *nbr, int64_t n, int64_t S,
                                   int64_t u, int64_t v, int squared, int gd)
{
    double *P = malloc((size_t)(n * n) * sizeof *P), *t = malloc((size_t)(n * n) * sizeof *t);
    if (!P || !t) {
        free(P), free(t);
        return -1;
    }
    muff_wpow(W, n, 0, P);
    double total = 0;
    for (int64_t s = 0; s < S; s++) {
        for (int64_t w = 0; w < n; w++) {
            if (!nbr[v * n + w]) continue;
            double col = 0, x = P[u * n + w];
            for (int64_t r = 0; r < n; r++) col += P[r * n + w] * P[r * n + w];
            total += (gd ? (double)(S - s) : 1.0) * (squared ? x * x : x) / col;
        }
        muff_matmul(P, W, t, n);
        memcpy(P, t, (size_t)(n * n) * sizeof *t);
    }
    free(P), free(t);
    return total;
}

/* ---- pairwise network DP (Renyi divergence of order alpha) ------------------------------
 * Gossip averaging (the paper's averaging theorem): node v sees, at every gossip step
 * k = 0..K-1, the value (W^k x~)_w of each neighbour w (x~ = x + N(0, sigma^2 I) per node, once).
 * The part of that message which depends on u's data is (W^k)_uw x_u, with sensitivity
 * Delta |(W^k)_uw|, hidden by Gaussian noise of variance sigma^2 ||(W^k)_{:,w}||^2, so each
 * message is a Gaussian mechanism of Renyi divergence alpha Delta^2 (W^k)_uw^2 /
 * (2 sigma^2 ||(W^k)_{:,w}||^2); composition over the messages v sees gives
 *   eps_{u->v}(alpha) = alpha Delta^2 / (2 sigma^2) sum_{k=0}^{K-1} sum_{w in N(v)}
 *                       (W^k)_uw^2 / ||(W^k)_{:,w}||^2.
 * cap = 1: the sum is capped at 1, the local-DP figure of the one release x~_u (every message is
 * a function of the noisy values x~, so v never learns more than x~_u tells: post-processing);
 * cap = 0: the sum as it stands. W: n x n (symmetric); nbr: adjacency (n x n flags, no self
 * loops). Returns -1 on no memory. */
static inline double muff_pndp_avg(const double *W, const unsigned char *nbr, int64_t n, int64_t K,
                                   int64_t u, int64_t v, double alpha, double Delta, double sigma,
                                   int cap)
{
    double total = muff_pndp_sum(W, nbr, n, K, u, v, 1, 0);
    if (total < 0) return -1;
    if (cap && total > 1) total = 1;
    return alpha * Delta * Delta / (2 * sigma * sigma) * total;
}

/* Muffliato-GD with one gossip step per round (K = 1), T rounds: arXiv 2206.05091, Theorem 11 as
 * corrected after the conference version (the form a public re-implementation evaluates):
 *   eps_{u->v}(alpha) = alpha Delta^2 / (2 sigma^2) min(T, sum_{s=0}^{T-1} (T - s)
 *                       sum_{w in N(v)} (W^s)_uw / ||(W^s)_{:,w}||^2),
 * the min being the local-DP composition of T releases (a neighbour of v sees them all). */
static inline double muff_pndp_gd(const double *W, const unsigned char *nbr, int64_t n, int64_t T,
                                  int64_t u, int64_t v, double alpha, double Delta, double sigma)
{
    double total = muff_pndp_sum(W, nbr, n, T, u, v, 0, 1);
    if (total < 0) return -1;
    if (total > (double)T) total = (double)T;
    return alpha * Delta * Delta / (2 * sigma * sigma) * total;
}

/* The adjacency flags (n x n) of a network from its edge list; NULL on failure (free it). */
static inline unsigned char *muff_adjacency(dpdo_network *net)
{
    int64_t n = dpdo_network_nodes(net), m = dpdo_network_edge_count(net);
    unsigned char *a = calloc((size_t)(n * n), 1);
    int64_t *e = malloc((size_t)(2 * m + 1) * sizeof *e);
    if (!a || !e || dpdo_network_get_edges(net, e, 2 * m)) {
        free(a), free(e);
        return NULL;
    }
    for (int64_t k = 0; k < m; k++) {
        a[e[2 * k] * n + e[2 * k + 1]] = 1;
        a[e[2 * k + 1] * n + e[2 * k]] = 1;
    }
    free(e);
    return a;
}

#endif
