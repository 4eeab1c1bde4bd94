/* SPDX-License-Identifier: BSD-3-Clause */
/* Network handle: life cycle, topologies, weight rules, caller matrices and
 * queries. A graph is installed in one transaction (build everything new,
 * then swap), so a failed call leaves the previous network intact. */
#include "net_impl.h"
#include <math.h>
#include <string.h>

/* ---- life cycle ------------------------------------------------------ */

int dpdo_network_create(dpdo_network **out)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    struct dpdo_network *net = dpdo__calloc(1, sizeof *net);
    if (!net) return DPDO_E_NOMEM;
    net->magic = DPDO__MAGIC_NETWORK;
    net->rule = -1;
    net->mode = DPDO_GOSSIP_AUTO;
    net->path = DPDO_GOSSIP_SPARSE;
    *out = net;
    return DPDO_OK;
}

static void free_graph(struct dpdo_network *net)
{
    dpdo__free(net->rowptr);
    dpdo__free(net->col);
    dpdo__free(net->val);
    dpdo__free(net->diag);
    dpdo__free(net->edges);
    dpdo__free(net->wdense);
    dpdo__free(net->eig);
    net->rowptr = net->col = net->diag = net->edges = NULL;
    net->val = net->wdense = net->eig = NULL;
    net->spec_ok = 0;
}

void dpdo_network_destroy(dpdo_network *net)
{
    if (!net || !DPDO__LIVE(net, DPDO__MAGIC_NETWORK)) return; /* NULL or destroyed */
    DPDO__KILL(net);
    if (net->refs > 0) {
        net->destroyed = 1; /* freed by the last dpdo__network_release */
        return;
    }
    free_graph(net);
    dpdo__free(net);
}

void dpdo__network_retain(struct dpdo_network *net)
{
    net->refs++;
}

void dpdo__network_release(struct dpdo_network *net)
{
    if (!net) return;
    if (net->refs > 0) net->refs--;
    if (net->refs == 0 && net->destroyed) {
        free_graph(net);
        dpdo__free(net);
    }
}

const char *dpdo_network_errmsg(const dpdo_network *net)
{
    return !net                                   ? DPDO__NULL_TEXT("dpdo_network_errmsg", "net")
           : DPDO__LIVE(net, DPDO__MAGIC_NETWORK) ? net->errmsg
                                                  : DPDO__DEAD_TEXT("dpdo_network_errmsg", "net");
}

static int check_mutable(struct dpdo_network *net)
{
    if (net->refs > 0)
        return dpdo__err(net->errmsg, DPDO_E_STATE,
                         "network is borrowed by %d algorithm(s); destroy them before changing it",
                         net->refs);
    return DPDO_OK;
}

/* ---- graph transaction ------------------------------------------------- */

/* A graph under construction: CSR + edge list + weights (+ dense copy). */
typedef struct {
    int64_t n, m, dmax;
    int64_t *rowptr, *col, *diag, *edges;
    double *val, *wdense;
    int path;
} gbuild;

static void gb_free(gbuild *g)
{
    dpdo__free(g->rowptr);
    dpdo__free(g->col);
    dpdo__free(g->diag);
    dpdo__free(g->edges);
    dpdo__free(g->val);
    dpdo__free(g->wdense);
    memset(g, 0, sizeof *g);
}

/* Sizes are checked by the callers (n <= INT32_MAX, m <= n(n-1)/2). */
static int64_t row_degree(const int64_t *rowptr, int64_t i)
{
    return rowptr[i + 1] - rowptr[i] - 1;
}

/* Build the CSR of closed neighbourhoods from lexicographically sorted,
 * unique pairs (i < j). Takes ownership of `edges` (also on failure). */
static int gb_csr(gbuild *g, int64_t n, int64_t *edges, int64_t m, char *errbuf)
{
    memset(g, 0, sizeof *g);
    g->n = n;
    g->m = m;
    g->edges = edges;
    size_t nnz = (size_t)n + 2 * (size_t)m;
    g->rowptr = dpdo__calloc((size_t)n + 1, sizeof(int64_t));
    g->diag = dpdo__calloc((size_t)n, sizeof(int64_t));
    g->col = dpdo__alloc_array(nnz, sizeof(int64_t));
    g->val = dpdo__alloc_array(nnz, sizeof(double));
    int64_t *cur = dpdo__alloc_array((size_t)n, sizeof(int64_t));
    if (!g->rowptr || !g->diag || !g->col || !g->val || !cur) {
        dpdo__free(cur);
        gb_free(g);
        return dpdo__err(errbuf, DPDO_E_NOMEM,
                         "out of memory for a graph of %lld nodes and %lld edges", (long long)n,
                         (long long)m);
    }
    /* degree counts: rowptr[i+1] = degree, diag[i] = lower degree */
    for (int64_t e = 0; e < m; e++) {
        g->rowptr[edges[2 * e] + 1]++;
        g->rowptr[edges[2 * e + 1] + 1]++;
        g->diag[edges[2 * e + 1]]++;
    }
    g->dmax = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t deg = g->rowptr[i + 1];
        if (deg > g->dmax) g->dmax = deg;
        g->rowptr[i + 1] = g->rowptr[i] + deg + 1;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t low = g->diag[i];
        g->diag[i] = g->rowptr[i] + low;
        g->col[g->diag[i]] = i;
        cur[i] = g->rowptr[i];
    }
    /* Pairs come in lexicographic order, so row a receives its lower
     * neighbours (pairs (c, a), c < a) in ascending c before any of its own
     * pairs (a, b); both halves are therefore ascending. */
    for (int64_t e = 0; e < m; e++) {
        int64_t a = edges[2 * e], b = edges[2 * e + 1];
        if (cur[a] == g->diag[a]) cur[a]++; /* skip the self slot */
        g->col[cur[a]++] = b;
        g->col[cur[b]++] = a;
    }
    dpdo__free(cur);
    return DPDO_OK;
}

/* Metropolis / max-degree / Laplacian weights into g->val. */
static void gb_rule_weights(gbuild *g, int rule, double iota)
{
    const int64_t *rp = g->rowptr;
    for (int64_t i = 0; i < g->n; i++) {
        int64_t di = row_degree(rp, i);
        double off = 0.0;
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
            int64_t j = g->col[k];
            if (j == i) continue;
            double w;
            if (rule == DPDO_WEIGHTS_METROPOLIS) {
                int64_t dj = row_degree(rp, j);
                w = 1.0 / (1.0 + (double)(di > dj ? di : dj));
            } else if (rule == DPDO_WEIGHTS_MAX_DEGREE) {
                w = 1.0 / (1.0 + (double)g->dmax);
            } else {
                w = 1.0 / iota;
            }
            g->val[k] = w;
            off += w;
        }
        g->val[g->diag[i]] = 1.0 - off;
    }
}

/* Resolve the gossip path; allocate the dense copy when it is DENSE.
 * AUTO: dense when 1 < n <= 1024 and W stores at least 30% of its n^2
 * entries. Measured crossover (bench/bench_network.c and docs/network.md,
 * d = 2000): dgemm does ~4x more useful flops per second than the axpy
 * path, so it wins once the density exceeds ~0.25-0.3, at every n tried
 * (10..256); K_20: 0.05 ms dense vs 0.20 ms sparse. */
static int gb_path(gbuild *g, int mode, char *errbuf)
{
    int64_t n = g->n;
    int64_t nnz = n + 2 * g->m;
    int dense;
    if (mode == DPDO_GOSSIP_DENSE)
        dense = 1;
    else if (mode == DPDO_GOSSIP_SPARSE)
        dense = 0;
    else
        dense = n > 1 && n <= 1024 && 10 * nnz >= 3 * n * n;
    g->path = dense ? DPDO_GOSSIP_DENSE : DPDO_GOSSIP_SPARSE;
    dpdo__free(g->wdense);
    g->wdense = NULL;
    if (!dense) return DPDO_OK;
    g->wdense = dpdo__calloc((size_t)n * (size_t)n, sizeof(double));
    if (!g->wdense)
        return dpdo__err(errbuf, DPDO_E_NOMEM, "out of memory for the dense %lld x %lld W",
                         (long long)n, (long long)n);
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = g->rowptr[i]; k < g->rowptr[i + 1]; k++)
            g->wdense[(size_t)i * (size_t)n + (size_t)g->col[k]] = g->val[k];
    return DPDO_OK;
}

static void install(struct dpdo_network *net, gbuild *g, int rule, double iota)
{
    free_graph(net);
    net->n = g->n;
    net->m = g->m;
    net->dmax = g->dmax;
    net->rowptr = g->rowptr;
    net->col = g->col;
    net->diag = g->diag;
    net->edges = g->edges;
    net->val = g->val;
    net->wdense = g->wdense;
    net->path = g->path;
    net->rule = rule;
    net->iota = iota;
    memset(g, 0, sizeof *g);
    dpdo__err_clear(net->errmsg);
}

/* Connected? BFS from node 0 on the CSR; on failure names an unreachable
 * node and the size of node 0's component. */
static int check_connected(const gbuild *g, char *errbuf)
{
    int64_t n = g->n;
    if (n <= 1) return DPDO_OK;
    int64_t *queue = dpdo__alloc_array((size_t)n, sizeof(int64_t));
    unsigned char *seen = dpdo__calloc((size_t)n, 1);
    if (!queue || !seen) {
        dpdo__free(queue);
        dpdo__free(seen);
        return dpdo__err(errbuf, DPDO_E_NOMEM, "out of memory for the connectivity check");
    }
    int64_t head = 0, tail = 0;
    queue[tail++] = 0;
    seen[0] = 1;
    while (head < tail) {
        int64_t i = queue[head++];
        for (int64_t k = g->rowptr[i]; k < g->rowptr[i + 1]; k++) {
            int64_t j = g->col[k];
            if (!seen[j]) {
                seen[j] = 1;
                queue[tail++] = j;
            }
        }
    }
    int rc = DPDO_OK;
    if (tail < n) {
        int64_t miss = 0;
        while (seen[miss])
            miss++;
        rc = dpdo__err(errbuf, DPDO_E_INVAL,
                       "graph is disconnected: node %lld is not reachable from node 0 "
                       "(node 0's component has %lld of %lld nodes)",
                       (long long)miss, (long long)tail, (long long)n);
    }
    dpdo__free(queue);
    dpdo__free(seen);
    return rc;
}

/* Install sorted unique pairs with Metropolis weights (owns `edges`). */
static int install_pairs(struct dpdo_network *net, int64_t n, int64_t *edges, int64_t m,
                         int check_conn)
{
    gbuild g;
    int rc = gb_csr(&g, n, edges, m, net->errmsg);
    if (rc) return rc;
    if (check_conn && (rc = check_connected(&g, net->errmsg)) != DPDO_OK) {
        gb_free(&g);
        return rc;
    }
    gb_rule_weights(&g, DPDO_WEIGHTS_METROPOLIS, 0.0);
    if ((rc = gb_path(&g, net->mode, net->errmsg)) != DPDO_OK) {
        gb_free(&g);
        return rc;
    }
    install(net, &g, DPDO_WEIGHTS_METROPOLIS, 0.0);
    return DPDO_OK;
}

#define NMAX ((int64_t)1 << 31)

static int check_n(struct dpdo_network *net, const char *what, int64_t n, int64_t nmin)
{
    if (n < nmin)
        return dpdo__err(net->errmsg, DPDO_E_INVAL, "%s: n = %lld, need n >= %lld", what,
                         (long long)n, (long long)nmin);
    if (n >= NMAX)
        return dpdo__err(net->errmsg, DPDO_E_INVAL, "%s: n = %lld is too large (limit 2^31 - 1)",
                         what, (long long)n);
    return DPDO_OK;
}

static int64_t *alloc_pairs(struct dpdo_network *net, int64_t m)
{
    size_t bytes;
    if (m < 0 || !dpdo__mul_size((size_t)m, 2 * sizeof(int64_t), &bytes)) return NULL;
    return dpdo__alloc(bytes ? bytes : 1);
}

static int nomem_pairs(struct dpdo_network *net, int64_t m)
{
    return dpdo__err(net->errmsg, DPDO_E_NOMEM, "out of memory for %lld edges", (long long)m);
}

/* ---- small sort (allocation-free, used for caller edge lists) -------- */

typedef struct {
    int64_t a, b, e; /* a < b, original index e */
} epair;

static int epair_less(const epair *x, const epair *y)
{
    if (x->a != y->a) return x->a < y->a;
    if (x->b != y->b) return x->b < y->b;
    return x->e < y->e;
}

static void epair_sift(epair *v, size_t root, size_t n)
{
    for (;;) {
        size_t c = 2 * root + 1;
        if (c >= n) return;
        if (c + 1 < n && epair_less(&v[c], &v[c + 1])) c++;
        if (!epair_less(&v[root], &v[c])) return;
        epair t = v[root];
        v[root] = v[c];
        v[c] = t;
        root = c;
    }
}

/* Heapsort: O(m log m), no allocation, deterministic. */
static void epair_sort(epair *v, size_t n)
{
    if (n < 2) return;
    for (size_t i = n / 2; i-- > 0;)
        epair_sift(v, i, n);
    for (size_t end = n - 1; end > 0; end--) {
        epair t = v[0];
        v[0] = v[end];
        v[end] = t;
        epair_sift(v, 0, end);
    }
}

/* ---- topologies ------------------------------------------------------- */

int dpdo_network_set_complete(dpdo_network *net, int64_t n)
{
    if (!net) return DPDO_E_INVAL;
    int rc;
    if ((rc = check_mutable(net)) || (rc = check_n(net, "complete graph", n, 1))) return rc;
    int64_t m = n * (n - 1) / 2;
    int64_t *e = alloc_pairs(net, m);
    if (!e) return nomem_pairs(net, m);
    int64_t t = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) {
            e[2 * t] = i;
            e[2 * t + 1] = j;
            t++;
        }
    return install_pairs(net, n, e, m, 0);
}

/* Install a regular "offset" graph after sorting its pairs. */
static int install_unsorted(struct dpdo_network *net, int64_t n, int64_t *e, int64_t m)
{
    epair *v = dpdo__alloc_array(m ? (size_t)m : 1, sizeof *v);
    if (!v) {
        dpdo__free(e);
        return nomem_pairs(net, m);
    }
    for (int64_t t = 0; t < m; t++) {
        int64_t a = e[2 * t], b = e[2 * t + 1];
        v[t].a = a < b ? a : b;
        v[t].b = a < b ? b : a;
        v[t].e = t;
    }
    epair_sort(v, (size_t)m);
    for (int64_t t = 0; t < m; t++) {
        e[2 * t] = v[t].a;
        e[2 * t + 1] = v[t].b;
    }
    dpdo__free(v);
    return install_pairs(net, n, e, m, 0);
}

int dpdo_network_set_ring(dpdo_network *net, int64_t n)
{
    if (!net) return DPDO_E_INVAL;
    int rc;
    if ((rc = check_mutable(net)) || (rc = check_n(net, "ring", n, 3))) return rc;
    int64_t *e = alloc_pairs(net, n);
    if (!e) return nomem_pairs(net, n);
    for (int64_t i = 0; i < n; i++) {
        e[2 * i] = i;
        e[2 * i + 1] = (i + 1) % n;
    }
    return install_unsorted(net, n, e, n);
}

int dpdo_network_set_circulant(dpdo_network *net, int64_t n, int64_t k)
{
    if (!net) return DPDO_E_INVAL;
    int rc;
    if ((rc = check_mutable(net)) || (rc = check_n(net, "circulant graph", n, 3))) return rc;
    if (k < 1 || 2 * k >= n)
        return dpdo__err(net->errmsg, DPDO_E_INVAL,
                         "circulant graph: k = %lld, need 1 <= k and 2k < n = %lld", (long long)k,
                         (long long)n);
    int64_t m = n * k;
    int64_t *e = alloc_pairs(net, m);
    if (!e) return nomem_pairs(net, m);
    int64_t t = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 1; j <= k; j++) {
            e[2 * t] = i;
            e[2 * t + 1] = (i + j) % n;
            t++;
        }
    return install_unsorted(net, n, e, m);
}

int dpdo_network_set_torus(dpdo_network *net, int64_t rows, int64_t cols)
{
    if (!net) return DPDO_E_INVAL;
    int rc;
    if ((rc = check_mutable(net))) return rc;
    if (rows < 3 || cols < 3)
        return dpdo__err(net->errmsg, DPDO_E_INVAL,
                         "torus: %lld x %lld, need rows >= 3 and cols >= 3 (use an edge list for "
                         "smaller grids)",
                         (long long)rows, (long long)cols);
    if (rows >= NMAX || cols >= NMAX || rows * cols >= NMAX)
        return dpdo__err(net->errmsg, DPDO_E_INVAL, "torus: %lld x %lld nodes is too large",
                         (long long)rows, (long long)cols);
    int64_t n = rows * cols, m = 2 * n;
    int64_t *e = alloc_pairs(net, m);
    if (!e) return nomem_pairs(net, m);
    int64_t t = 0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            int64_t i = r * cols + c;
            e[2 * t] = i;
            e[2 * t + 1] = r * cols + (c + 1) % cols;
            t++;
            e[2 * t] = i;
            e[2 * t + 1] = ((r + 1) % rows) * cols + c;
            t++;
        }
    return install_unsorted(net, n, e, m);
}

int dpdo_network_set_star(dpdo_network *net, int64_t n)
{
    if (!net) return DPDO_E_INVAL;
    int rc;
    if ((rc = check_mutable(net)) || (rc = check_n(net, "star", n, 2))) return rc;
    int64_t *e = alloc_pairs(net, n - 1);
    if (!e) return nomem_pairs(net, n - 1);
    for (int64_t i = 1; i < n; i++) {
        e[2 * (i - 1)] = 0;
        e[2 * (i - 1) + 1] = i;
    }
    return install_pairs(net, n, e, n - 1, 0);
}

int dpdo_network_set_edges(dpdo_network *net, int64_t n, const int64_t *edges, int64_t m)
{
    if (!net) return DPDO_E_INVAL;
    int rc;
    if ((rc = check_mutable(net)) || (rc = check_n(net, "edge list", n, 1))) return rc;
    if (m < 0)
        return dpdo__err(net->errmsg, DPDO_E_INVAL, "edge list: m = %lld is negative",
                         (long long)m);
    if (m > 0 && !edges)
        return dpdo__err(net->errmsg, DPDO_E_INVAL, "edge list: edges is NULL but m = %lld",
                         (long long)m);
    if (m > n * (n - 1) / 2)
        return dpdo__err(net->errmsg, DPDO_E_INVAL,
                         "edge list: %lld edges exceed the %lld pairs of %lld nodes, so some "
                         "edge repeats or is a self-loop",
                         (long long)m, (long long)(n * (n - 1) / 2), (long long)n);
    for (int64_t t = 0; t < m; t++) {
        int64_t a = edges[2 * t], b = edges[2 * t + 1];
        if (a < 0 || a >= n || b < 0 || b >= n)
            return dpdo__err(net->errmsg, DPDO_E_INVAL,
                             "edge %lld (%lld, %lld): node %lld is out of range [0, %lld)",
                             (long long)t, (long long)a, (long long)b,
                             (long long)(a < 0 || a >= n ? a : b), (long long)n);
        if (a == b)
            return dpdo__err(net->errmsg, DPDO_E_INVAL,
                             "edge %lld (%lld, %lld) is a self-loop (self weights are implicit)",
                             (long long)t, (long long)a, (long long)b);
    }
    epair *v = dpdo__alloc_array(m ? (size_t)m : 1, sizeof *v);
    int64_t *e = alloc_pairs(net, m);
    if (!v || !e) {
        dpdo__free(v);
        dpdo__free(e);
        return nomem_pairs(net, m);
    }
    for (int64_t t = 0; t < m; t++) {
        int64_t a = edges[2 * t], b = edges[2 * t + 1];
        v[t].a = a < b ? a : b;
        v[t].b = a < b ? b : a;
        v[t].e = t;
    }
    epair_sort(v, (size_t)m);
    for (int64_t t = 1; t < m; t++)
        if (v[t].a == v[t - 1].a && v[t].b == v[t - 1].b) {
            int64_t e0 = v[t - 1].e, e1 = v[t].e; /* e0 < e1 by the sort's tie-break */
            rc = dpdo__err(net->errmsg, DPDO_E_INVAL,
                           "edge %lld (%lld, %lld) duplicates edge %lld (%lld, %lld)",
                           (long long)e1, (long long)edges[2 * e1], (long long)edges[2 * e1 + 1],
                           (long long)e0, (long long)edges[2 * e0], (long long)edges[2 * e0 + 1]);
            dpdo__free(v);
            dpdo__free(e);
            return rc;
        }
    for (int64_t t = 0; t < m; t++) {
        e[2 * t] = v[t].a;
        e[2 * t + 1] = v[t].b;
    }
    dpdo__free(v);
    return install_pairs(net, n, e, m, 1);
}

static int64_t uf_find(int64_t *par, int64_t i)
{
    while (par[i] != i) {
        par[i] = par[par[i]];
        i = par[i];
    }
    return i;
}

int dpdo_network_set_erdos_renyi(dpdo_network *net, int64_t n, double p, uint64_t seed,
                                 int64_t max_tries)
{
    if (!net) return DPDO_E_INVAL;
    int rc;
    if ((rc = check_mutable(net)) || (rc = check_n(net, "Erdos-Renyi graph", n, 1))) return rc;
    if (n > 65536)
        return dpdo__err(net->errmsg, DPDO_E_INVAL,
                         "Erdos-Renyi graph: n = %lld, at most 65536 (O(n^2) draws)", (long long)n);
    if (!(p >= 0.0 && p <= 1.0))
        return dpdo__err(net->errmsg, DPDO_E_INVAL, "Erdos-Renyi graph: p = %g is not in [0, 1]",
                         p);
    if (max_tries < 1)
        return dpdo__err(net->errmsg, DPDO_E_INVAL,
                         "Erdos-Renyi graph: max_tries = %lld, need >= 1", (long long)max_tries);
    if (n > 1 && p == 0.0)
        return dpdo__err(net->errmsg, DPDO_E_INVAL,
                         "Erdos-Renyi graph: p = 0 gives no edges, never connected for n = %lld",
                         (long long)n);
    dpdo_rng *rng = NULL;
    if ((rc = dpdo_rng_create(&rng, NULL, NULL, seed)) != DPDO_OK)
        return dpdo__err(net->errmsg, rc, "Erdos-Renyi graph: cannot create the generator (%s)",
                         dpdo_strerror(rc));
    int64_t pairs = n * (n - 1) / 2;
    double expect = p * (double)pairs;
    int64_t cap = (int64_t)(expect + 4.0 * sqrt(expect + 1.0)) + 16;
    if (cap > pairs) cap = pairs;
    if (cap < 1) cap = 1;
    int64_t *e = alloc_pairs(net, cap);
    int64_t *par = dpdo__alloc_array((size_t)n, sizeof(int64_t));
    if (!e || !par) {
        rc = nomem_pairs(net, cap);
        goto done;
    }
    for (int64_t attempt = 0; attempt < max_tries; attempt++) {
        dpdo__stream s;
        dpdo__stream_open(&s, rng, DPDO__NET_GRAPH_NODE, (uint64_t)attempt, DPDO_PURPOSE_EDGES);
        int64_t m = 0, comps = n;
        for (int64_t i = 0; i < n; i++)
            par[i] = i;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = i + 1; j < n; j++) {
                if (!(dpdo__stream_uniform(&s) < p)) continue;
                if (m == cap) {
                    int64_t ncap = cap * 2 < pairs ? cap * 2 : pairs;
                    int64_t *ne = dpdo__realloc(e, (size_t)ncap * 2 * sizeof(int64_t));
                    if (!ne) {
                        rc = nomem_pairs(net, ncap);
                        goto done;
                    }
                    e = ne;
                    cap = ncap;
                }
                e[2 * m] = i;
                e[2 * m + 1] = j;
                m++;
                int64_t ri = uf_find(par, i), rj = uf_find(par, j);
                if (ri != rj) {
                    par[ri < rj ? rj : ri] = ri < rj ? ri : rj;
                    comps--;
                }
            }
        if ((rc = dpdo__stream_status(&s)) != DPDO_OK) {
            rc = dpdo__err(net->errmsg, rc, "Erdos-Renyi graph: the generator failed");
            goto done;
        }
        if (comps == 1) {
            dpdo__free(par);
            par = NULL;
            dpdo_rng_destroy(rng);
            rng = NULL;
            return install_pairs(net, n, e, m, 0); /* owns e */
        }
    }
    rc = dpdo__err(net->errmsg, DPDO_E_INVAL,
                   "Erdos-Renyi graph: no connected G(n = %lld, p = %g) in %lld tries "
                   "(connectivity needs p above about ln(n)/n = %.3g)",
                   (long long)n, p, (long long)max_tries, log((double)n) / (double)n);
done:
    dpdo__free(e);
    dpdo__free(par);
    dpdo_rng_destroy(rng);
    return rc;
}

/* ---- weights ---------------------------------------------------------- */

static int need_graph(struct dpdo_network *net, const char *what)
{
    if (net->n == 0)
        return dpdo__err(net->errmsg, DPDO_E_INVAL,
                         "%s: the network is empty (set a topology first)", what);
    return DPDO_OK;
}

/* Copy the current graph (without weights) into a build. */
static int gb_copy_graph(gbuild *g, const struct dpdo_network *net, char *errbuf)
{
    memset(g, 0, sizeof *g);
    size_t nnz = (size_t)net->n + 2 * (size_t)net->m;
    g->n = net->n;
    g->m = net->m;
    g->dmax = net->dmax;
    g->rowptr = dpdo__alloc_array((size_t)net->n + 1, sizeof(int64_t));
    g->col = dpdo__alloc_array(nnz, sizeof(int64_t));
    g->diag = dpdo__alloc_array((size_t)net->n, sizeof(int64_t));
    g->edges = dpdo__alloc_array(net->m ? 2 * (size_t)net->m : 1, sizeof(int64_t));
    g->val = dpdo__alloc_array(nnz, sizeof(double));
    if (!g->rowptr || !g->col || !g->diag || !g->edges || !g->val) {
        gb_free(g);
        return dpdo__err(errbuf, DPDO_E_NOMEM, "out of memory for a copy of the graph");
    }
    memcpy(g->rowptr, net->rowptr, ((size_t)net->n + 1) * sizeof(int64_t));
    memcpy(g->col, net->col, nnz * sizeof(int64_t));
    memcpy(g->diag, net->diag, (size_t)net->n * sizeof(int64_t));
    memcpy(g->edges, net->edges, 2 * (size_t)net->m * sizeof(int64_t));
    memcpy(g->val, net->val, nnz * sizeof(double));
    return DPDO_OK;
}

int dpdo_network_set_weights(dpdo_network *net, int rule, double iota)
{
    if (!net) return DPDO_E_INVAL;
    int rc;
    if ((rc = check_mutable(net)) || (rc = need_graph(net, "set_weights"))) return rc;
    if (rule != DPDO_WEIGHTS_METROPOLIS && rule != DPDO_WEIGHTS_MAX_DEGREE &&
        rule != DPDO_WEIGHTS_LAPLACIAN)
        return dpdo__err(net->errmsg, DPDO_E_INVAL,
                         "set_weights: rule = %d is not DPDO_WEIGHTS_METROPOLIS (0), "
                         "_MAX_DEGREE (1) or _LAPLACIAN (2)",
                         rule);
    if (rule == DPDO_WEIGHTS_LAPLACIAN) {
        if (iota == 0.0)
            iota = (double)net->dmax + 1.0;
        else if (!isfinite(iota) || !(iota > (double)net->dmax))
            return dpdo__err(net->errmsg, DPDO_E_INVAL,
                             "set_weights: iota = %g must be finite and exceed the maximum degree "
                             "%lld (else w_ii = 1 - d_i/iota <= 0 at a node of maximum degree)",
                             iota, (long long)net->dmax);
    } else {
        iota = 0.0;
    }
    gbuild g;
    if ((rc = gb_copy_graph(&g, net, net->errmsg))) return rc;
    gb_rule_weights(&g, rule, iota);
    if ((rc = gb_path(&g, net->mode, net->errmsg))) {
        gb_free(&g);
        return rc;
    }
    install(net, &g, rule, iota);
    return DPDO_OK;
}

static int entry_err(struct dpdo_network *net, int64_t i, int64_t j, double v, const char *why)
{
    return dpdo__err(net->errmsg, DPDO_E_INVAL, "weight matrix entry (%lld, %lld) = %.17g %s",
                     (long long)i, (long long)j, v, why);
}

int dpdo_network_set_weight_matrix(dpdo_network *net, int64_t n, const double *w, double tol)
{
    if (!net) return DPDO_E_INVAL;
    int rc;
    if ((rc = check_mutable(net))) return rc;
    if (!w) return dpdo__err(net->errmsg, DPDO_E_INVAL, "weight matrix: w is NULL");
    if (n < 1 || n > DPDO__NET_DENSE_MAX * 4)
        return dpdo__err(net->errmsg, DPDO_E_INVAL, "weight matrix: n = %lld, need 1 <= n <= %d",
                         (long long)n, DPDO__NET_DENSE_MAX * 4);
    if (net->n != 0 && n != net->n)
        return dpdo__err(net->errmsg, DPDO_E_INVAL,
                         "weight matrix: n = %lld but the network has %lld nodes", (long long)n,
                         (long long)net->n);
    if (tol == 0.0) tol = 1e-12;
    if (!(tol > 0.0 && tol <= 1e-3))
        return dpdo__err(net->errmsg, DPDO_E_INVAL, "weight matrix: tol = %g, need 0 < tol <= 1e-3",
                         tol);
    size_t N = (size_t)n;
    /* entries: finite, nonnegative, on the graph */
    for (int64_t i = 0; i < n; i++) {
        const int64_t *c = net->n ? net->col + net->rowptr[i] : NULL;
        const int64_t *cend = net->n ? net->col + net->rowptr[i + 1] : NULL;
        for (int64_t j = 0; j < n; j++) {
            double v = w[(size_t)i * N + (size_t)j];
            if (isnan(v)) return entry_err(net, i, j, v, "is NaN");
            if (!isfinite(v)) return entry_err(net, i, j, v, "is infinite");
            if (v < 0.0) return entry_err(net, i, j, v, "is negative");
            if (net->n) {
                while (c < cend && *c < j)
                    c++;
                int on = (c < cend && *c == j);
                if (!on && v != 0.0)
                    return entry_err(net, i, j, v,
                                     "is nonzero but (i, j) is not an edge of the graph");
            }
        }
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) {
            double a = w[(size_t)i * N + (size_t)j], b = w[(size_t)j * N + (size_t)i];
            if (fabs(a - b) > tol)
                return dpdo__err(net->errmsg, DPDO_E_INVAL,
                                 "weight matrix is not symmetric: entry (%lld, %lld) = %.17g but "
                                 "(%lld, %lld) = %.17g (tol %g)",
                                 (long long)i, (long long)j, a, (long long)j, (long long)i, b, tol);
        }
    for (int64_t i = 0; i < n; i++) {
        double rs = 0.0, cs = 0.0;
        for (int64_t j = 0; j < n; j++) {
            rs += w[(size_t)i * N + (size_t)j];
            cs += w[(size_t)j * N + (size_t)i];
        }
        if (fabs(rs - 1.0) > tol)
            return dpdo__err(net->errmsg, DPDO_E_INVAL,
                             "weight matrix is not stochastic: row %lld sums to %.17g (tol %g)",
                             (long long)i, rs, tol);
        if (fabs(cs - 1.0) > tol)
            return dpdo__err(net->errmsg, DPDO_E_INVAL,
                             "weight matrix is not doubly stochastic: column %lld sums to %.17g "
                             "(tol %g)",
                             (long long)i, cs, tol);
    }
    gbuild g;
    if (net->n) {
        if ((rc = gb_copy_graph(&g, net, net->errmsg))) return rc;
    } else {
        /* graph = support of w */
        int64_t m = 0;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = i + 1; j < n; j++)
                if (w[(size_t)i * N + (size_t)j] > 0.0 || w[(size_t)j * N + (size_t)i] > 0.0) m++;
        int64_t *e = alloc_pairs(net, m);
        if (!e) return nomem_pairs(net, m);
        int64_t t = 0;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = i + 1; j < n; j++)
                if (w[(size_t)i * N + (size_t)j] > 0.0 || w[(size_t)j * N + (size_t)i] > 0.0) {
                    e[2 * t] = i;
                    e[2 * t + 1] = j;
                    t++;
                }
        if ((rc = gb_csr(&g, n, e, m, net->errmsg))) return rc;
        if ((rc = check_connected(&g, net->errmsg))) {
            gb_free(&g);
            return rc;
        }
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = g.rowptr[i]; k < g.rowptr[i + 1]; k++)
            g.val[k] = w[(size_t)i * N + (size_t)g.col[k]];
    if ((rc = gb_path(&g, net->mode, net->errmsg))) {
        gb_free(&g);
        return rc;
    }
    install(net, &g, DPDO_WEIGHTS_CUSTOM, 0.0);
    return DPDO_OK;
}

int dpdo_network_set_gossip_mode(dpdo_network *net, int mode)
{
    if (!net) return DPDO_E_INVAL;
    int rc;
    if ((rc = check_mutable(net))) return rc;
    if (mode != DPDO_GOSSIP_AUTO && mode != DPDO_GOSSIP_SPARSE && mode != DPDO_GOSSIP_DENSE)
        return dpdo__err(net->errmsg, DPDO_E_INVAL,
                         "gossip mode %d is not DPDO_GOSSIP_AUTO (0), _SPARSE (1) or _DENSE (2)",
                         mode);
    if (mode == DPDO_GOSSIP_DENSE && net->n > DPDO__NET_DENSE_MAX)
        return dpdo__err(net->errmsg, DPDO_E_INVAL,
                         "dense gossip needs n <= %d (the network has %lld nodes)",
                         DPDO__NET_DENSE_MAX, (long long)net->n);
    if (net->n == 0) {
        net->mode = mode;
        dpdo__err_clear(net->errmsg);
        return DPDO_OK;
    }
    /* resolve on a scratch build that borrows the CSR */
    gbuild g;
    memset(&g, 0, sizeof g);
    g.n = net->n;
    g.m = net->m;
    g.rowptr = net->rowptr;
    g.col = net->col;
    g.val = net->val;
    rc = gb_path(&g, mode, net->errmsg);
    if (rc) return rc;
    dpdo__free(net->wdense);
    net->wdense = g.wdense;
    net->path = g.path;
    net->mode = mode;
    dpdo__err_clear(net->errmsg);
    return DPDO_OK;
}

/* ---- queries ------------------------------------------------------------ */

int64_t dpdo_network_nodes(const dpdo_network *net)
{
    return net ? net->n : 0;
}
int64_t dpdo_network_edge_count(const dpdo_network *net)
{
    return net ? net->m : 0;
}
int64_t dpdo_network_max_degree(const dpdo_network *net)
{
    return net ? net->dmax : 0;
}
int dpdo_network_weight_rule(const dpdo_network *net)
{
    return net && net->n ? net->rule : -1;
}
int dpdo_network_gossip_path(const dpdo_network *net)
{
    return net && net->n ? net->path : -1;
}

int64_t dpdo_network_degree(const dpdo_network *net, int64_t node)
{
    if (!net || node < 0 || node >= net->n) return -1;
    return row_degree(net->rowptr, node);
}

int dpdo_network_neighbors(dpdo_network *net, int64_t node, int64_t *out, int64_t cap, int64_t *len)
{
    if (!net) return DPDO_E_INVAL;
    if (node < 0 || node >= net->n)
        return dpdo__err(net->errmsg, DPDO_E_INVAL,
                         "neighbors: node %lld is out of range [0, %lld)", (long long)node,
                         (long long)net->n);
    int64_t deg = row_degree(net->rowptr, node);
    if (len) *len = deg;
    if (deg > 0 && !out) return dpdo__err(net->errmsg, DPDO_E_INVAL, "neighbors: out is NULL");
    if (cap < deg)
        return dpdo__err(net->errmsg, DPDO_E_INVAL,
                         "neighbors: cap = %lld is smaller than the degree %lld of node %lld",
                         (long long)cap, (long long)deg, (long long)node);
    int64_t t = 0;
    for (int64_t k = net->rowptr[node]; k < net->rowptr[node + 1]; k++)
        if (net->col[k] != node) out[t++] = net->col[k];
    return DPDO_OK;
}

int dpdo_network_get_edges(dpdo_network *net, int64_t *out, int64_t cap)
{
    if (!net) return DPDO_E_INVAL;
    if (net->m > 0 && !out) return dpdo__err(net->errmsg, DPDO_E_INVAL, "get_edges: out is NULL");
    if (cap < 2 * net->m)
        return dpdo__err(net->errmsg, DPDO_E_INVAL, "get_edges: cap = %lld, need %lld",
                         (long long)cap, (long long)(2 * net->m));
    if (net->m) memcpy(out, net->edges, 2 * (size_t)net->m * sizeof(int64_t));
    return DPDO_OK;
}

int dpdo_network_get_weights(dpdo_network *net, double *out, int64_t cap)
{
    if (!net) return DPDO_E_INVAL;
    int rc;
    if ((rc = need_graph(net, "get_weights"))) return rc;
    if (!out) return dpdo__err(net->errmsg, DPDO_E_INVAL, "get_weights: out is NULL");
    if (cap / net->n < net->n)
        return dpdo__err(net->errmsg, DPDO_E_INVAL, "get_weights: cap = %lld, need n*n = %lld",
                         (long long)cap, (long long)(net->n * net->n));
    size_t N = (size_t)net->n;
    memset(out, 0, N * N * sizeof(double));
    for (int64_t i = 0; i < net->n; i++)
        for (int64_t k = net->rowptr[i]; k < net->rowptr[i + 1]; k++)
            out[(size_t)i * N + (size_t)net->col[k]] = net->val[k];
    return DPDO_OK;
}
