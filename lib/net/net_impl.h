/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal network API for the engine and the algorithms: the handle layout,
 * borrowing, static gossip, and the per-round samplers / random gossip
 * matrices of docs/design/notes/dp-dda.md §2.5. Everything called from step() (the
 * dpdo__round_* samplers and dpdo__gossip*) is allocation-free once
 * dpdo__round_init() has run. Never installed. */
#ifndef DPDO_NET_IMPL_H
#define DPDO_NET_IMPL_H

#include "../core/core_impl.h"
#include "../rng/rng_impl.h"
#include "dpdo/network.h"
#include <stddef.h>
#include <stdint.h>

/* Stream node id of draws that belong to no node (the round's edges,
 * matchings and b-of-n active sets): every process computes the same plan. */
#define DPDO__NET_GLOBAL_NODE UINT64_MAX
/* Stream node id of random graph construction (Erdos-Renyi attempts), kept
 * apart from the per-round plans so that a graph and the rounds run on it
 * with the same seed never share a stream. */
#define DPDO__NET_GRAPH_NODE (UINT64_MAX - 1)

/* Largest n for the dense gossip path / dense weight copies. */
#define DPDO__NET_DENSE_MAX 4096

struct dpdo_network {
    uint32_t magic; /* DPDO__MAGIC_* while alive, 0 after destroy (core_impl.h) */
    int64_t n;      /* nodes; 0 = empty */
    int64_t m;      /* undirected edges */
    int64_t dmax;   /* maximum degree */
    /* CSR over closed neighbourhoods: row i holds its neighbours and i itself,
     * columns ascending; val = W entries. nnz = n + 2m. */
    int64_t *rowptr; /* n+1 */
    int64_t *col;    /* nnz */
    double *val;     /* nnz */
    int64_t *diag;   /* n: position of (i,i) in col/val */
    int64_t *edges;  /* 2m: endpoints (i<j), lexicographic */
    int rule;        /* DPDO_WEIGHTS_* */
    double iota;     /* the iota used by LAPLACIAN */
    int mode;        /* DPDO_GOSSIP_* as requested */
    int path;        /* resolved: DPDO_GOSSIP_SPARSE or _DENSE */
    double *wdense;  /* n*n copy of W when path == DENSE (or NULL) */
    /* spectral cache */
    int spec_ok;
    double *eig; /* n eigenvalues, descending */
    double slem;
    int refs;      /* borrowers (algorithms) */
    int destroyed; /* destroy requested while borrowed */
    char errmsg[DPDO__ERRMSG_LEN];
};

/* Borrowing: an algorithm retains the network at create and releases it at
 * destroy; while refs > 0, calls that change the graph or W return
 * DPDO_E_STATE, and dpdo_network_destroy defers the free to the last release. */
void dpdo__network_retain(struct dpdo_network *net);
void dpdo__network_release(struct dpdo_network *net);

/* Static gossip y = W x over all rows (x, y: n x d row-major, no overlap),
 * using the network's resolved path. No checks, no allocation. */
void dpdo__gossip(const struct dpdo_network *net, const double *x, double *y, int64_t d);
/* Same, but only rows rows[0..nrows-1] of y are written (sparse path). */
void dpdo__gossip_rows(const struct dpdo_network *net, const int64_t *rows, int64_t nrows,
                       const double *x, double *y, int64_t d);

/* ---- per-round structure -----------------------------------------------
 * One round's active set, its edge set E_t and the Metropolis gossip matrix
 * W^(t) of docs/design/notes/dp-dda.md §2.5, stored sparsely for the active rows only.
 * Inactive node k has row and column e_k (docs/design/notes/dp-dda.md §2.4 step 2), which is
 * implicit: gossip over a round touches active rows only. */
typedef struct dpdo__round {
    int64_t n, m;      /* copied from the network at init */
    int64_t cap_edges; /* max |E_t| this struct can hold */
    /* outputs of the last sampler */
    int64_t nactive;
    int64_t *active;          /* nactive nodes, ascending */
    unsigned char *is_active; /* n flags */
    int64_t nedges;
    int64_t *edges;   /* 2*nedges endpoints (i<j) of E_t */
    int full_average; /* 1: W^(t) = (1/b) 1 1^T on the active set (scheme (c)) */
    /* W^(t) rows of active nodes: row r (node active[r]) is
     * wptr[r]..wptr[r+1]-1 of (wcol, wval), self entry first. */
    int64_t *wptr; /* n+1 */
    int64_t *wcol; /* n + 2*cap_edges */
    double *wval;
    /* scratch */
    int64_t *deg;   /* n: degrees within E_t (zero between rounds) */
    int64_t *perm;  /* max(n, m): identity between rounds (partial Fisher-Yates) */
    int64_t *swaps; /* max(n, m): swap log to restore perm */
    int64_t *pos;   /* n: row of each active node in wptr, -1 if inactive */
} dpdo__round;

/* Allocate a round structure for `net` able to hold up to max_edges edges
 * in E_t (max_edges < 0: as many as the scheme can produce, i.e. m; for
 * DPDO_ROUND_AVERAGE none are stored). Returns DPDO_OK, DPDO_E_INVAL (empty
 * network) or DPDO_E_NOMEM; on failure r is left freeable (all NULL). */
int dpdo__round_init(dpdo__round *r, const struct dpdo_network *net, int64_t max_edges);
void dpdo__round_free(dpdo__round *r);

/* Samplers. Each fills r->active/is_active (and r->edges where it says)
 * from stream (seed, node, round, purpose) as documented in docs/network.md;
 * none allocates. They return DPDO_OK, DPDO_E_INVAL (bad count/p, message in
 * errbuf), or DPDO_E_CALLBACK (custom generator failure).
 *   nodes:     uniform b-subset of {0..n-1}; stream (GLOBAL, round, ACTIVATION),
 *              dpdo__stream_subset.
 *   bernoulli: node i active iff the first uniform of stream (i, round,
 *              ACTIVATION) is < p (each node its own stream).
 *   edges:     k distinct edges, uniform k-subset of the m edges (edge index
 *              order of dpdo_network_get_edges); stream (GLOBAL, round, EDGES);
 *              active = endpoints; E_t = the sampled edges.
 *   matching:  b nodes (b even) in a uniformly random matching; on a complete
 *              graph: partial Fisher-Yates of b nodes with dpdo__stream_below on
 *              stream (GLOBAL, round, EDGES), pairs (v0,v1), (v2,v3), ...
 *              (docs/design/notes/dp-dda.md §2.5(b)); otherwise greedy over a random edge order
 * (same stream), stopping at b/2 pairs or when the edges run out. */
int dpdo__round_sample_nodes(dpdo__round *r, const struct dpdo_rng *rng, uint64_t round, int64_t b,
                             char *errbuf);
int dpdo__round_sample_bernoulli(dpdo__round *r, const struct dpdo_rng *rng, uint64_t round,
                                 double p, char *errbuf);
int dpdo__round_sample_edges(dpdo__round *r, const struct dpdo_network *net,
                             const struct dpdo_rng *rng, uint64_t round, int64_t k, char *errbuf);
int dpdo__round_sample_matching(dpdo__round *r, const struct dpdo_network *net,
                                const struct dpdo_rng *rng, uint64_t round, int64_t b,
                                char *errbuf);

/* Injection (docs/design/notes/dp-dda.md §2.9): set the active set or the edge set directly.
 * set_active: nodes[0..b-1] distinct, in range (any order).
 * set_edges:  k pairs; active = endpoints. Returns DPDO_OK or DPDO_E_INVAL. */
int dpdo__round_set_active(dpdo__round *r, const int64_t *nodes, int64_t b, char *errbuf);
int dpdo__round_set_edges(dpdo__round *r, const int64_t *edges, int64_t k, char *errbuf);

/* Build W^(t) from the current state (docs/design/notes/dp-dda.md §2.5):
 *   from_edges:  Metropolis weights on E_t = r->edges (after sample_edges,
 *                sample_matching or set_edges).
 *   induced:     E_t = E(G) restricted to the active set, Metropolis weights
 *                (scheme (d)); needs cap_edges large enough (m suffices).
 *   average:     w_ij = 1/b on the active set (scheme (c)), kept implicit.
 * Return DPDO_OK or DPDO_E_INVAL (capacity). */
int dpdo__round_weights_from_edges(dpdo__round *r);
int dpdo__round_weights_induced(dpdo__round *r, const struct dpdo_network *net, char *errbuf);
void dpdo__round_weights_average(dpdo__round *r);

/* One full round of a scheme (DPDO_ROUND_EDGES ... _BERNOULLI): sampler +
 * weights. DPDO_ROUND_ALL marks every node active with the static W. */
int dpdo__round_draw(dpdo__round *r, const struct dpdo_network *net, const struct dpdo_rng *rng,
                     uint64_t round, int scheme, int64_t count, double p, char *errbuf);

/* y_i = sum_j W^(t)_ij x_j for every active i (x, y: n x d row-major, no
 * overlap); rows of inactive nodes in y are not touched. For DPDO_ROUND_ALL
 * rounds the caller uses dpdo__gossip. Allocation-free. */
void dpdo__round_gossip(const dpdo__round *r, const double *x, double *y, int64_t d);

/* Write W^(t) densely (n x n; inactive rows e_k). */
void dpdo__round_dense(const dpdo__round *r, double *w);

#endif /* DPDO_NET_IMPL_H */
