/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-round randomness and random gossip matrices (docs/design/notes/dp-dda.md §2.4
 * step 1-2 and docs/design/notes/dp-dda.md §2.5). Every draw comes from a counter-based stream
 * keyed by (seed, node, round, purpose), so a round's plan does not depend on which rounds were
 * drawn before or in what order. Nothing here allocates after dpdo__round_init(). */
#include "net_impl.h"
#include <math.h>
#include <string.h>

int dpdo__round_init(dpdo__round *r, const struct dpdo_network *net, int64_t max_edges)
{
    memset(r, 0, sizeof *r);
    if (net->n < 1) return DPDO_E_INVAL;
    int64_t n = net->n, m = net->m;
    int64_t cap = max_edges < 0 ? m : max_edges;
    int64_t big = n > m ? n : m;
    r->n = n;
    r->m = m;
    r->cap_edges = cap;
    r->active = dpdo__alloc_array((size_t)n, sizeof(int64_t));
    r->is_active = dpdo__calloc((size_t)n, 1);
    r->edges = dpdo__alloc_array(cap ? 2 * (size_t)cap : 1, sizeof(int64_t));
    r->wptr = dpdo__calloc((size_t)n + 1, sizeof(int64_t));
    r->wcol = dpdo__alloc_array((size_t)n + 2 * (size_t)cap, sizeof(int64_t));
    r->wval = dpdo__alloc_array((size_t)n + 2 * (size_t)cap, sizeof(double));
    r->deg = dpdo__calloc((size_t)n, sizeof(int64_t));
    r->perm = dpdo__alloc_array((size_t)big, sizeof(int64_t));
    r->swaps = dpdo__alloc_array((size_t)big, sizeof(int64_t));
    r->pos = dpdo__alloc_array((size_t)n, sizeof(int64_t));
    if (!r->active || !r->is_active || !r->edges || !r->wptr || !r->wcol || !r->wval || !r->deg ||
        !r->perm || !r->swaps || !r->pos) {
        dpdo__round_free(r);
        return DPDO_E_NOMEM;
    }
    for (int64_t i = 0; i < big; i++)
        r->perm[i] = i;
    for (int64_t i = 0; i < n; i++)
        r->pos[i] = -1;
    return DPDO_OK;
}

void dpdo__round_free(dpdo__round *r)
{
    if (!r) return;
    dpdo__free(r->active);
    dpdo__free(r->is_active);
    dpdo__free(r->edges);
    dpdo__free(r->wptr);
    dpdo__free(r->wcol);
    dpdo__free(r->wval);
    dpdo__free(r->deg);
    dpdo__free(r->perm);
    dpdo__free(r->swaps);
    dpdo__free(r->pos);
    memset(r, 0, sizeof *r);
}

/* Forget the previous round: O(previous active count). */
static void clear(dpdo__round *r)
{
    for (int64_t t = 0; t < r->nactive; t++) {
        r->is_active[r->active[t]] = 0;
        r->pos[r->active[t]] = -1;
    }
    r->nactive = 0;
    r->nedges = 0;
    r->full_average = 0;
    r->wptr[0] = 0;
}

/* Shell sort (Ciura gaps), in place, allocation-free. */
static void sort_i64(int64_t *v, int64_t n)
{
    static const int64_t gaps[] = {701, 301, 132, 57, 23, 10, 4, 1};
    for (int g = 0; g < 8; g++) {
        int64_t h = gaps[g];
        for (int64_t i = h; i < n; i++) {
            int64_t t = v[i], j = i;
            while (j >= h && v[j - h] > t) {
                v[j] = v[j - h];
                j -= h;
            }
            v[j] = t;
        }
    }
}

static void mark(dpdo__round *r, int64_t i)
{
    if (!r->is_active[i]) {
        r->is_active[i] = 1;
        r->active[r->nactive++] = i;
    }
}

static void add_edge(dpdo__round *r, int64_t a, int64_t b)
{
    r->edges[2 * r->nedges] = a < b ? a : b;
    r->edges[2 * r->nedges + 1] = a < b ? b : a;
    r->nedges++;
    mark(r, a);
    mark(r, b);
}

static int stream_fail(const dpdo__stream *s, char *errbuf, const char *what)
{
    int st = dpdo__stream_status(s);
    if (st == DPDO_OK) return DPDO_OK;
    return dpdo__err(errbuf, st, "%s: the random generator failed (status %d)", what, st);
}

int dpdo__round_sample_nodes(dpdo__round *r, const struct dpdo_rng *rng, uint64_t round, int64_t b,
                             char *errbuf)
{
    if (b < 1 || b > r->n)
        return dpdo__err(errbuf, DPDO_E_INVAL, "node sampling: b = %lld, need 1 <= b <= n = %lld",
                         (long long)b, (long long)r->n);
    clear(r);
    /* docs/design/notes/dp-dda.md §2.4 step 1 (Def. 2): uniform over all C(n, b) subsets */
    dpdo__stream s;
    dpdo__stream_open(&s, rng, DPDO__NET_GLOBAL_NODE, round, DPDO_PURPOSE_ACTIVATION);
    dpdo__stream_subset(&s, r->n, b, r->active);
    r->nactive = b;
    for (int64_t t = 0; t < b; t++)
        r->is_active[r->active[t]] = 1;
    return stream_fail(&s, errbuf, "node sampling");
}

int dpdo__round_sample_bernoulli(dpdo__round *r, const struct dpdo_rng *rng, uint64_t round,
                                 double p, char *errbuf)
{
    if (!(p >= 0.0 && p <= 1.0))
        return dpdo__err(errbuf, DPDO_E_INVAL, "Bernoulli activation: p = %g is not in [0, 1]", p);
    clear(r);
    /* Each node decides from its own stream (i, round, ACTIVATION): its
     * first uniform u in (0,1) and active iff u < p. A process hosting node
     * i can therefore decide i's activation without the others. */
    for (int64_t i = 0; i < r->n; i++) {
        dpdo__stream s;
        dpdo__stream_open(&s, rng, (uint64_t)i, round, DPDO_PURPOSE_ACTIVATION);
        double u = dpdo__stream_uniform(&s);
        int rc = stream_fail(&s, errbuf, "Bernoulli activation");
        if (rc) {
            clear(r);
            return rc;
        }
        if (u < p) {
            r->is_active[i] = 1;
            r->active[r->nactive++] = i;
        }
    }
    return DPDO_OK;
}

int dpdo__round_sample_edges(dpdo__round *r, const struct dpdo_network *net,
                             const struct dpdo_rng *rng, uint64_t round, int64_t k, char *errbuf)
{
    if (k < 1 || k > r->m)
        return dpdo__err(errbuf, DPDO_E_INVAL, "edge sampling: k = %lld, need 1 <= k <= m = %lld",
                         (long long)k, (long long)r->m);
    if (k > r->cap_edges)
        return dpdo__err(errbuf, DPDO_E_INVAL,
                         "edge sampling: k = %lld exceeds the round capacity %lld", (long long)k,
                         (long long)r->cap_edges);
    clear(r);
    /* docs/design/notes/dp-dda.md §2.5(a): k distinct edges, uniform over all k-subsets of E */
    dpdo__stream s;
    dpdo__stream_open(&s, rng, DPDO__NET_GLOBAL_NODE, round, DPDO_PURPOSE_EDGES);
    dpdo__stream_subset(&s, r->m, k, r->swaps);
    for (int64_t t = 0; t < k; t++) {
        int64_t e = r->swaps[t];
        add_edge(r, net->edges[2 * e], net->edges[2 * e + 1]);
    }
    sort_i64(r->active, r->nactive);
    int rc = stream_fail(&s, errbuf, "edge sampling");
    if (rc) clear(r);
    return rc;
}

int dpdo__round_sample_matching(dpdo__round *r, const struct dpdo_network *net,
                                const struct dpdo_rng *rng, uint64_t round, int64_t b, char *errbuf)
{
    if (b < 2 || b > r->n || b % 2)
        return dpdo__err(errbuf, DPDO_E_INVAL,
                         "random matching: b = %lld, need an even b with 2 <= b <= n = %lld",
                         (long long)b, (long long)r->n);
    if (b / 2 > r->cap_edges)
        return dpdo__err(errbuf, DPDO_E_INVAL,
                         "random matching: b/2 = %lld pairs exceed the round capacity %lld",
                         (long long)(b / 2), (long long)r->cap_edges);
    clear(r);
    dpdo__stream s;
    dpdo__stream_open(&s, rng, DPDO__NET_GLOBAL_NODE, round, DPDO_PURPOSE_EDGES);
    int64_t steps = 0;
    if (r->m == r->n * (r->n - 1) / 2) {
        /* docs/design/notes/dp-dda.md §2.5(b): partial Fisher-Yates draw of b nodes, consecutive
         * draws paired; a uniformly random b/2-matching of K_n. */
        for (int64_t t = 0; t < b; t++) {
            int64_t j = t + (int64_t)dpdo__stream_below(&s, (uint64_t)(r->n - t));
            int64_t tmp = r->perm[t];
            r->perm[t] = r->perm[j];
            r->perm[j] = tmp;
            r->swaps[t] = j;
        }
        steps = b;
        for (int64_t t = 0; t < b; t += 2)
            add_edge(r, r->perm[t], r->perm[t + 1]);
    } else {
        /* General graph: scan the edges in a uniformly random order (lazy
         * Fisher-Yates over edge indices) and keep each edge disjoint from
         * those kept so far, until b/2 pairs or the edges run out. */
        int64_t pairs = 0;
        while (pairs < b / 2 && steps < r->m) {
            int64_t t = steps;
            int64_t j = t + (int64_t)dpdo__stream_below(&s, (uint64_t)(r->m - t));
            int64_t tmp = r->perm[t];
            r->perm[t] = r->perm[j];
            r->perm[j] = tmp;
            r->swaps[t] = j;
            steps++;
            int64_t e = r->perm[t];
            int64_t u = net->edges[2 * e], v = net->edges[2 * e + 1];
            if (!r->is_active[u] && !r->is_active[v]) {
                add_edge(r, u, v);
                pairs++;
            }
        }
    }
    /* undo the swaps so perm is the identity again (call-order independence) */
    for (int64_t t = steps; t-- > 0;) {
        int64_t j = r->swaps[t], tmp = r->perm[t];
        r->perm[t] = r->perm[j];
        r->perm[j] = tmp;
    }
    sort_i64(r->active, r->nactive);
    int rc = stream_fail(&s, errbuf, "random matching");
    if (rc) clear(r);
    return rc;
}

int dpdo__round_set_active(dpdo__round *r, const int64_t *nodes, int64_t b, char *errbuf)
{
    if (b < 0 || b > r->n || (b > 0 && !nodes))
        return dpdo__err(errbuf, DPDO_E_INVAL, "active set: b = %lld, need 0 <= b <= n = %lld",
                         (long long)b, (long long)r->n);
    clear(r);
    for (int64_t t = 0; t < b; t++) {
        int64_t i = nodes[t];
        if (i < 0 || i >= r->n || r->is_active[i]) {
            clear(r);
            return dpdo__err(errbuf, DPDO_E_INVAL, "active set: entry %lld (node %lld) is %s",
                             (long long)t, (long long)i,
                             i < 0 || i >= r->n ? "out of range" : "a duplicate");
        }
        mark(r, i);
    }
    sort_i64(r->active, r->nactive);
    return DPDO_OK;
}

int dpdo__round_set_edges(dpdo__round *r, const int64_t *edges, int64_t k, char *errbuf)
{
    if (k < 0 || k > r->cap_edges || (k > 0 && !edges))
        return dpdo__err(errbuf, DPDO_E_INVAL, "edge set: k = %lld, need 0 <= k <= %lld",
                         (long long)k, (long long)r->cap_edges);
    for (int64_t t = 0; t < k; t++) {
        int64_t a = edges[2 * t], b = edges[2 * t + 1];
        if (a < 0 || a >= r->n || b < 0 || b >= r->n || a == b)
            return dpdo__err(errbuf, DPDO_E_INVAL, "edge set: edge %lld (%lld, %lld) is %s",
                             (long long)t, (long long)a, (long long)b,
                             a == b ? "a self-loop" : "out of range");
        for (int64_t u = 0; u < t; u++) {
            int64_t c = edges[2 * u], e = edges[2 * u + 1];
            if ((c == a && e == b) || (c == b && e == a))
                return dpdo__err(errbuf, DPDO_E_INVAL, "edge set: edge %lld duplicates edge %lld",
                                 (long long)t, (long long)u);
        }
    }
    clear(r);
    for (int64_t t = 0; t < k; t++)
        add_edge(r, edges[2 * t], edges[2 * t + 1]);
    sort_i64(r->active, r->nactive);
    return DPDO_OK;
}

int dpdo__round_weights_from_edges(dpdo__round *r)
{
    /* docs/design/notes/dp-dda.md §2.5, Metropolis weights on G_t = (N^(t), E_t) with
     * degrees counted within E_t [Xiao-Boyd-Kim]:
     *   w_ij = 1/(1 + max(deg_i, deg_j)) for {i,j} in E_t,
     *   w_ii = 1 - sum_j w_ij,  w_ij = 0 otherwise.
     * Inactive nodes (degree 0) keep row/column e_k (docs/design/notes/dp-dda.md §2.4 step 2),
     * implicitly. */
    r->full_average = 0;
    for (int64_t e = 0; e < r->nedges; e++) {
        r->deg[r->edges[2 * e]]++;
        r->deg[r->edges[2 * e + 1]]++;
    }
    int64_t *cur = r->swaps; /* nactive <= n <= size of swaps */
    r->wptr[0] = 0;
    for (int64_t t = 0; t < r->nactive; t++) {
        int64_t i = r->active[t];
        r->pos[i] = t;
        r->wptr[t + 1] = r->wptr[t] + 1 + r->deg[i];
        r->wcol[r->wptr[t]] = i; /* self entry first */
        cur[t] = r->wptr[t] + 1;
    }
    for (int64_t e = 0; e < r->nedges; e++) {
        int64_t a = r->edges[2 * e], b = r->edges[2 * e + 1];
        int64_t da = r->deg[a], db = r->deg[b];
        double w = 1.0 / (1.0 + (double)(da > db ? da : db));
        int64_t ra = r->pos[a], rb = r->pos[b];
        r->wcol[cur[ra]] = b;
        r->wval[cur[ra]++] = w;
        r->wcol[cur[rb]] = a;
        r->wval[cur[rb]++] = w;
    }
    for (int64_t t = 0; t < r->nactive; t++) {
        double off = 0.0;
        for (int64_t k = r->wptr[t] + 1; k < r->wptr[t + 1]; k++)
            off += r->wval[k];
        r->wval[r->wptr[t]] = 1.0 - off;
    }
    for (int64_t e = 0; e < r->nedges; e++) {
        r->deg[r->edges[2 * e]] = 0;
        r->deg[r->edges[2 * e + 1]] = 0;
    }
    return DPDO_OK;
}

int dpdo__round_weights_induced(dpdo__round *r, const struct dpdo_network *net, char *errbuf)
{
    /* docs/design/notes/dp-dda.md §2.5(d): E_t = E(G) restricted to the active set */
    r->nedges = 0;
    for (int64_t t = 0; t < r->nactive; t++) {
        int64_t i = r->active[t];
        for (int64_t k = net->rowptr[i]; k < net->rowptr[i + 1]; k++) {
            int64_t j = net->col[k];
            if (j <= i || !r->is_active[j]) continue;
            if (r->nedges == r->cap_edges)
                return dpdo__err(errbuf, DPDO_E_INVAL,
                                 "induced subgraph: more than %lld edges (round capacity)",
                                 (long long)r->cap_edges);
            r->edges[2 * r->nedges] = i;
            r->edges[2 * r->nedges + 1] = j;
            r->nedges++;
        }
    }
    return dpdo__round_weights_from_edges(r);
}

void dpdo__round_weights_average(dpdo__round *r)
{
    /* docs/design/notes/dp-dda.md §2.5(c): E_t = complete graph on the active set, so the
     * Metropolis weights are w_ij = 1/b for all active i, j; stored implicitly. */
    r->nedges = 0;
    r->full_average = 1;
}

static int round_all(dpdo__round *r, const struct dpdo_network *net, char *errbuf)
{
    if (r->cap_edges < net->m)
        return dpdo__err(errbuf, DPDO_E_INVAL, "static round: %lld edges exceed the capacity %lld",
                         (long long)net->m, (long long)r->cap_edges);
    clear(r);
    for (int64_t i = 0; i < r->n; i++) {
        r->active[i] = i;
        r->is_active[i] = 1;
        r->pos[i] = i;
    }
    r->nactive = r->n;
    size_t nnz = (size_t)net->rowptr[net->n];
    memcpy(r->wptr, net->rowptr, ((size_t)r->n + 1) * sizeof(int64_t));
    memcpy(r->wcol, net->col, nnz * sizeof(int64_t));
    memcpy(r->wval, net->val, nnz * sizeof(double));
    return DPDO_OK;
}

int dpdo__round_draw(dpdo__round *r, const struct dpdo_network *net, const struct dpdo_rng *rng,
                     uint64_t round, int scheme, int64_t count, double p, char *errbuf)
{
    int rc;
    switch (scheme) {
    case DPDO_ROUND_ALL:
        return round_all(r, net, errbuf);
    case DPDO_ROUND_EDGES:
        if ((rc = dpdo__round_sample_edges(r, net, rng, round, count, errbuf))) return rc;
        return dpdo__round_weights_from_edges(r);
    case DPDO_ROUND_MATCHING:
        if ((rc = dpdo__round_sample_matching(r, net, rng, round, count, errbuf))) return rc;
        return dpdo__round_weights_from_edges(r);
    case DPDO_ROUND_AVERAGE:
        if ((rc = dpdo__round_sample_nodes(r, rng, round, count, errbuf))) return rc;
        dpdo__round_weights_average(r);
        return DPDO_OK;
    case DPDO_ROUND_INDUCED:
        if ((rc = dpdo__round_sample_nodes(r, rng, round, count, errbuf))) return rc;
        return dpdo__round_weights_induced(r, net, errbuf);
    case DPDO_ROUND_BERNOULLI:
        if ((rc = dpdo__round_sample_bernoulli(r, rng, round, p, errbuf))) return rc;
        return dpdo__round_weights_induced(r, net, errbuf);
    default:
        return dpdo__err(errbuf, DPDO_E_INVAL, "round scheme %d is not a DPDO_ROUND_* value",
                         scheme);
    }
}

void dpdo__round_dense(const dpdo__round *r, double *w)
{
    size_t N = (size_t)r->n;
    memset(w, 0, N * N * sizeof(double));
    for (int64_t i = 0; i < r->n; i++)
        if (!r->is_active[i]) w[(size_t)i * N + (size_t)i] = 1.0;
    if (r->full_average) {
        double v = 1.0 / (double)r->nactive;
        for (int64_t a = 0; a < r->nactive; a++)
            for (int64_t b = 0; b < r->nactive; b++)
                w[(size_t)r->active[a] * N + (size_t)r->active[b]] = v;
        return;
    }
    for (int64_t t = 0; t < r->nactive; t++) {
        size_t i = (size_t)r->active[t];
        for (int64_t k = r->wptr[t]; k < r->wptr[t + 1]; k++)
            w[i * N + (size_t)r->wcol[k]] += r->wval[k];
    }
}

int dpdo_network_round_matrix(dpdo_network *net, dpdo_rng *rng, uint64_t round, int scheme,
                              int64_t count, double p, int32_t *active, double *w, int64_t wcap)
{
    if (!net) return DPDO_E_INVAL;
    if (net->n == 0)
        return dpdo__err(net->errmsg, DPDO_E_INVAL, "round_matrix: the network is empty");
    if (!rng) return dpdo__err(net->errmsg, DPDO_E_INVAL, "round_matrix: rng is NULL");
    if (w && wcap / net->n < net->n)
        return dpdo__err(net->errmsg, DPDO_E_INVAL, "round_matrix: wcap = %lld, need n*n = %lld",
                         (long long)wcap, (long long)(net->n * net->n));
    if (scheme < DPDO_ROUND_ALL || scheme > DPDO_ROUND_BERNOULLI)
        return dpdo__err(net->errmsg, DPDO_E_INVAL,
                         "round_matrix: scheme %d is not a DPDO_ROUND_* value", scheme);
    dpdo__round r;
    int rc = dpdo__round_init(&r, net, -1);
    if (rc) return dpdo__err(net->errmsg, rc, "round_matrix: out of memory");
    rc = dpdo__round_draw(&r, net, rng, round, scheme, count, p, net->errmsg);
    if (rc == DPDO_OK) {
        if (active)
            for (int64_t i = 0; i < net->n; i++)
                active[i] = r.is_active[i];
        if (w) dpdo__round_dense(&r, w);
        dpdo__err_clear(net->errmsg);
    }
    dpdo__round_free(&r);
    return rc;
}
