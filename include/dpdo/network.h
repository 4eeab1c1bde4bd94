/* SPDX-License-Identifier: BSD-3-Clause */
/* Networks: an undirected communication graph on n nodes (numbered 0..n-1),
 * a symmetric doubly stochastic weight (gossip, mixing) matrix W supported on
 * the graph plus the diagonal, its spectral quantities, per-round random
 * gossip matrices, and gossip application Y = W X to n x d row-major state
 * blocks. See docs/network.md for formulas and measured costs.
 *
 * Life cycle ("allocate small, then fill", as dpdo_dataset):
 * dpdo_network_create() makes an empty handle; one topology call
 * (set_complete, set_ring, set_circulant, set_torus, set_star,
 * set_erdos_renyi, set_edges) gives it a graph and Metropolis-Hastings
 * weights; set_weights / set_weight_matrix replace the weights. A failed
 * call leaves the handle as it was and explains itself in
 * dpdo_network_errmsg(). While an algorithm borrows the network, calls that
 * change it return DPDO_E_STATE.
 *
 * Storage is sparse (CSR over closed neighbourhoods), so one gossip round
 * costs O((edges + n) * d). Thread-safety: per handle (one thread at a time;
 * the spectral getters fill a cache inside the handle). */
#ifndef DPDO_NETWORK_H
#define DPDO_NETWORK_H

#include "export.h"
#include "rng.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== CORE ZONE: networks: create and choose a topology ==== */

typedef struct dpdo_network dpdo_network;

/* Weight rules for dpdo_network_set_weights(). Pinned values. */
enum {
    DPDO_WEIGHTS_METROPOLIS = 0, /* w_ij = 1/(1+max(d_i,d_j)) on edges (the default) */
    DPDO_WEIGHTS_MAX_DEGREE = 1, /* w_ij = 1/(1+d_max) on edges */
    DPDO_WEIGHTS_LAPLACIAN = 2,  /* W = I - L/iota, iota > d_max (0 = d_max+1) */
    DPDO_WEIGHTS_CUSTOM = 3 /* reported by dpdo_network_weight_rule() after set_weight_matrix */
};

/* Gossip paths for dpdo_network_set_gossip_mode(). Pinned values. */
enum {
    DPDO_GOSSIP_AUTO = 0,   /* dense when 1 < n <= 1024 and >= 30% of W is stored, else sparse */
    DPDO_GOSSIP_SPARSE = 1, /* one axpy per stored entry: O((edges + n) d) */
    DPDO_GOSSIP_DENSE = 2   /* one BLIS dgemm with the dense n x n W (n <= 4096) */
};

/* Per-round random gossip schemes (docs/design/notes/dp-dda.md §2.5), for
 * dpdo_network_round_matrix() and the algorithms' options. Pinned values. */
enum {
    DPDO_ROUND_ALL = 0, /* every node active, the static W (docs/design/notes/dp-dda.md §2.5(e)) */
    DPDO_ROUND_EDGES =
        1,                   /* `count` distinct graph edges, uniformly; active = endpoints;
                                Metropolis weights on the sampled subgraph (docs/design/notes/dp-dda.md §2.5(a)) */
    DPDO_ROUND_MATCHING = 2, /* uniform random matching of `count` nodes (count even); each
                                pair averages (docs/design/notes/dp-dda.md §2.5(b)) */
    DPDO_ROUND_AVERAGE = 3,  /* `count` uniform active nodes, full averaging among them,
                                w_ij = 1/count (docs/design/notes/dp-dda.md §2.5(c)) */
    DPDO_ROUND_INDUCED =
        4,                   /* `count` uniform active nodes, Metropolis weights on the
                                induced subgraph of the network (docs/design/notes/dp-dda.md §2.5(d)) */
    DPDO_ROUND_BERNOULLI = 5 /* each node active independently with probability p;
                                Metropolis weights on the induced subgraph */
};

/* Create an empty network (0 nodes). *out is NULL on failure. Returns
 * DPDO_OK, DPDO_E_INVAL (out NULL), DPDO_E_NOMEM. Thread-safe. Since 0.1. */
DPDO_API int dpdo_network_create(dpdo_network **out);

/* Destroy; NULL is a no-op. If an algorithm still borrows the network the
 * memory is released when the last borrower lets go. Since 0.1. */
DPDO_API void dpdo_network_destroy(dpdo_network *net);

/* The message about the last failed call on this handle ("" if none; a
 * "dpdo_network_errmsg: net is NULL" for NULL). Never NULL. Since 0.1. */
DPDO_API const char *dpdo_network_errmsg(const dpdo_network *net);

/* ---- topologies -------------------------------------------------------
 * Each replaces the graph and sets Metropolis-Hastings weights. Returns
 * DPDO_OK, DPDO_E_INVAL (NULL net, bad size, message says which),
 * DPDO_E_NOMEM, DPDO_E_STATE (network borrowed). Since 0.1. */

/* Complete graph K_n, n >= 1 (n(n-1)/2 edges). Since 0.1. */
DPDO_API int dpdo_network_set_complete(dpdo_network *net, int64_t n);
/* Ring (cycle) i ~ i+1 mod n, n >= 3 (n edges, 2-regular). Since 0.1. */
DPDO_API int dpdo_network_set_ring(dpdo_network *net, int64_t n);
/* Circulant graph: i ~ (i +- j) mod n for j = 1..k, with 1 <= k and 2k < n
 * (so the graph is 2k-regular with n*k edges; DO-ADP uses n = 20, k = 3). Since 0.1. */
DPDO_API int dpdo_network_set_circulant(dpdo_network *net, int64_t n, int64_t k);
/* 2-D torus of rows x cols nodes, node (r, c) = r*cols + c, neighbours
 * (r+-1 mod rows, c) and (r, c+-1 mod cols); rows, cols >= 3 (4-regular,
 * 2*rows*cols edges). Since 0.1. */
DPDO_API int dpdo_network_set_torus(dpdo_network *net, int64_t rows, int64_t cols);
/* Star: node 0 is the coordinator (federated server), joined to nodes
 * 1..n-1; n >= 2 (n-1 edges). Since 0.1. */
DPDO_API int dpdo_network_set_star(dpdo_network *net, int64_t n);
/* Connected Erdos-Renyi G(n, p): each of the n(n-1)/2 pairs i < j is an
 * edge independently with probability p, drawn in lexicographic pair order
 * from the stream (seed, node = UINT64_MAX - 1, round = attempt, purpose =
 * DPDO_PURPOSE_EDGES) of the default generator (a node id no per-round plan
 * uses). A disconnected draw is
 * discarded and the next attempt drawn, up to max_tries attempts (>= 1);
 * then DPDO_E_INVAL ("no connected graph in N tries"). n >= 1,
 * p in [0, 1] (p = 0 only for n = 1). Same arguments give the same graph. Since 0.1. */
DPDO_API int dpdo_network_set_erdos_renyi(dpdo_network *net, int64_t n, double p, uint64_t seed,
                                          int64_t max_tries);
/* Graph from an edge list: edges[2e], edges[2e+1] are the endpoints of edge
 * e (0 <= e < m), 0-based, either order. Copied. Validated: no endpoint
 * outside [0, n), no self-loop, no duplicate (in either orientation), and
 * the graph must be connected; the errmsg names the offending edge or an
 * unreachable node and the size of node 0's component. n >= 1, m >= 0
 * (edges may be NULL when m = 0). Since 0.1. */
DPDO_API int dpdo_network_set_edges(dpdo_network *net, int64_t n, const int64_t *edges, int64_t m);

/* ==== ADVANCED ZONE: gossip weights, queries, spectral quantities, gossip ==== */

/* ---- weights ----------------------------------------------------------
 * Replace W by a rule (DPDO_WEIGHTS_METROPOLIS, _MAX_DEGREE, _LAPLACIAN;
 * `iota` is read only by _LAPLACIAN: 0 means d_max + 1, else it must be
 * finite and > d_max so that every w_ii = 1 - d_i/iota > 0). Returns
 * DPDO_OK, DPDO_E_INVAL (NULL, empty network, unknown rule, bad iota),
 * DPDO_E_NOMEM, DPDO_E_STATE. Since 0.1. */
DPDO_API int dpdo_network_set_weights(dpdo_network *net, int rule, double iota);

/* Replace W by a caller's dense n x n row-major matrix w (copied). It must be
 * finite, nonnegative, symmetric (|w_ij - w_ji| <= tol) and stochastic
 * (|sum_j w_ij - 1| <= tol for every row); tol in (0, 1e-3], or 0 for the
 * default 1e-12. If the network has a graph, n must equal its node count and
 * w_ij must be 0 for every non-edge i != j. If the network is empty, its graph
 * becomes the support of w (pairs with w_ij > 0), which must be connected.
 * The errmsg names the first offending entry ("entry (2, 5) = -0.1 is
 * negative"). Stored as given. Returns DPDO_OK, DPDO_E_INVAL, DPDO_E_NOMEM,
 * DPDO_E_STATE. Since 0.1. */
DPDO_API int dpdo_network_set_weight_matrix(dpdo_network *net, int64_t n, const double *w,
                                            double tol);

/* Choose the gossip path (DPDO_GOSSIP_*). DENSE needs n <= 4096 and
 * allocates the n x n matrix here. Returns DPDO_OK, DPDO_E_INVAL,
 * DPDO_E_NOMEM, DPDO_E_STATE. Since 0.1. */
DPDO_API int dpdo_network_set_gossip_mode(dpdo_network *net, int mode);

/* ---- queries (0 / -1 for NULL or empty networks) -------------------------
 * Since 0.1. */
DPDO_API int64_t dpdo_network_nodes(const dpdo_network *net);                /* n */
DPDO_API int64_t dpdo_network_edge_count(const dpdo_network *net);           /* undirected edges */
DPDO_API int64_t dpdo_network_degree(const dpdo_network *net, int64_t node); /* -1 if bad */
DPDO_API int64_t dpdo_network_max_degree(const dpdo_network *net);
DPDO_API int dpdo_network_weight_rule(const dpdo_network *net); /* DPDO_WEIGHTS_*, -1 if empty */
/* The gossip path gossip calls take now (DENSE or SPARSE; AUTO resolved). Since 0.1. */
DPDO_API int dpdo_network_gossip_path(const dpdo_network *net);

/* Copy the neighbours of `node` (ascending, excluding node) into out[cap].
 * *len (may be NULL) receives the degree, the number of entries written or
 * needed, even when cap is too small (then DPDO_E_INVAL). Here as everywhere
 * in the API, `cap` is the capacity of an output buffer and `len` a number of
 * elements (of an input array, or written/needed through a pointer).
 * Returns DPDO_OK or DPDO_E_INVAL. Since 0.1. */
DPDO_API int dpdo_network_neighbors(dpdo_network *net, int64_t node, int64_t *out, int64_t cap,
                                    int64_t *len);
/* Copy the edge list (pairs i < j in lexicographic order) into
 * out[cap], cap >= 2 * edge_count. Returns DPDO_OK or DPDO_E_INVAL. Since 0.1. */
DPDO_API int dpdo_network_get_edges(dpdo_network *net, int64_t *out, int64_t cap);
/* Copy W as a dense n x n row-major matrix into out[cap], cap >= n*n. Since 0.1. */
DPDO_API int dpdo_network_get_weights(dpdo_network *net, double *out, int64_t cap);

/* ---- spectral quantities -------------------------------------------------
 * Computed once per W (cached until W changes) from all eigenvalues of the
 * dense symmetric W with LAPACK dsyevd; O(n^3) time, O(n^2) memory.
 * slem = max(|lambda_2|, |lambda_n|), the second-largest eigenvalue modulus;
 * gap = 1 - slem; eigenvalues are written in descending order into
 * out[cap], cap >= n. For n = 1: slem = 0, gap = 1. Returns DPDO_OK,
 * DPDO_E_INVAL (NULL, empty, cap too small), DPDO_E_NOMEM, DPDO_E_NUMERIC
 * (LAPACK failed). Since 0.1. */
DPDO_API int dpdo_network_slem(dpdo_network *net, double *slem);
DPDO_API int dpdo_network_spectral_gap(dpdo_network *net, double *gap);
DPDO_API int dpdo_network_eigenvalues(dpdo_network *net, double *out, int64_t cap);

/* ---- gossip ------------------------------------------------------------
 * y = W x for an n x d row-major block x (n = node count, d >= 1), written
 * into y (n x d). x and y must not overlap. Allocation-free. The values of x
 * are not checked (this is a per-round call): NaN/Inf propagate to y. The
 * path (sparse axpys or dense dgemm) is dpdo_network_gossip_path(). Returns DPDO_OK
 * or DPDO_E_INVAL (NULL, n mismatch, d < 1, overlap). Since 0.1. */
DPDO_API int dpdo_network_gossip(dpdo_network *net, const double *x, double *y, int64_t n,
                                 int64_t d);

/* The per-round random gossip matrix of round `round` under `scheme`
 * (DPDO_ROUND_*), drawn from rng's streams exactly as the algorithms draw it
 * (docs/network.md lists the streams). `count` is k for EDGES and b for
 * MATCHING/AVERAGE/INDUCED (ignored otherwise); p is read by BERNOULLI.
 * Writes active[n] (1 = active, 0 = inactive; may be NULL) and the dense
 * n x n matrix into w[wcap] (may be NULL; else wcap >= n*n). Allocates
 * scratch (not a hot-path call). Returns DPDO_OK, DPDO_E_INVAL, DPDO_E_NOMEM,
 * DPDO_E_CALLBACK (custom generator failed). Since 0.1. */
DPDO_API int dpdo_network_round_matrix(dpdo_network *net, dpdo_rng *rng, uint64_t round, int scheme,
                                       int64_t count, double p, int32_t *active, double *w,
                                       int64_t wcap);

#ifdef __cplusplus
}
#endif
#endif /* DPDO_NETWORK_H */
