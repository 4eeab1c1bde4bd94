/* SPDX-License-Identifier: BSD-3-Clause */
/* Networks: topologies (degrees, edge counts, connectivity), weight rules
 * (doubly stochastic to 1e-14, formulas checked entrywise), spectral
 * quantities against closed forms (ring, complete, star, circulant via the
 * DFT of the first row, torus), Erdos-Renyi determinism, per-round gossip
 * matrices (spec/dp-dda.md §2.5 invariants and its n = 4 example), sampler
 * marginals by chi-square tests, gossip against a naive dense product, OOM
 * and bad-input paths of every public function. */
#include <math.h>
#include <stdint.h>
#include "dpdo/dpdo.h"
#include "dpdo/network.h"
#include "net/net_impl.h"
#include "harness.h"

#define PI 3.14159265358979323846

/* independent test data generator (splitmix64) */
static uint64_t sm_state = 12345;
static double urand(void)
{
    uint64_t z = (sm_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

static dpdo_network *mk(void)
{
    dpdo_network *net = NULL;
    CHECK_EQ(dpdo_network_create(&net), DPDO_OK);
    return net;
}

static double *dense_w(dpdo_network *net)
{
    int64_t n = dpdo_network_nodes(net);
    double *w = malloc((size_t)(n * n) * sizeof(double));
    CHECK_EQ(dpdo_network_get_weights(net, w, n * n), DPDO_OK);
    return w;
}

/* adjacency from the public queries: a[i*n+j] = 1 if j is a neighbour of i */
static unsigned char *adjacency(dpdo_network *net)
{
    int64_t n = dpdo_network_nodes(net);
    unsigned char *a = calloc((size_t)(n * n), 1);
    int64_t *nb = malloc((size_t)n * sizeof(int64_t)), cnt = -1;
    for (int64_t i = 0; i < n; i++) {
        CHECK_EQ(dpdo_network_neighbors(net, i, nb, n, &cnt), DPDO_OK);
        CHECK_EQ(cnt, dpdo_network_degree(net, i));
        for (int64_t t = 0; t < cnt; t++) {
            if (t) CHECK(nb[t] > nb[t - 1]);
            CHECK(nb[t] != i);
            a[i * n + nb[t]] = 1;
        }
    }
    free(nb);
    return a;
}

/* W symmetric, nonnegative, supported on graph + diagonal, rows and columns
 * summing to 1 within tol. Returns the worst row/column-sum error. */
static double check_stochastic(const double *w, const unsigned char *adj, int64_t n, double tol)
{
    double worst = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double rs = 0.0, cs = 0.0;
        for (int64_t j = 0; j < n; j++) {
            double v = w[i * n + j];
            CHECK(v >= 0.0 && v <= 1.0);
            CHECK(v == w[j * n + i]);
            if (adj && i != j && !adj[i * n + j]) CHECK(v == 0.0);
            rs += v;
            cs += w[j * n + i];
        }
        if (fabs(rs - 1) > worst) worst = fabs(rs - 1);
        if (fabs(cs - 1) > worst) worst = fabs(cs - 1);
    }
    CHECK_MSG(worst <= tol, "row/column sum error %.3g > %.3g", worst, tol);
    return worst;
}

/* BFS connectivity, independent of the library's check */
static int connected(const unsigned char *adj, int64_t n)
{
    unsigned char *seen = calloc((size_t)n, 1);
    int64_t *q = malloc((size_t)n * sizeof(int64_t)), h = 0, t = 0;
    q[t++] = 0;
    seen[0] = 1;
    while (h < t) {
        int64_t i = q[h++];
        for (int64_t j = 0; j < n; j++)
            if (adj[i * n + j] && !seen[j]) {
                seen[j] = 1;
                q[t++] = j;
            }
    }
    free(seen);
    free(q);
    return t == n;
}

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* ---------------------------------------------------------------------- */

static void topology_counts(void)
{
    dpdo_network *net = mk();
    CHECK_EQ(dpdo_network_nodes(net), 0);
    CHECK_EQ(dpdo_network_weight_rule(net), -1);
    for (int64_t n = 1; n <= 9; n++) {
        CHECK_EQ(dpdo_network_set_complete(net, n), DPDO_OK);
        CHECK_EQ(dpdo_network_nodes(net), n);
        CHECK_EQ(dpdo_network_edge_count(net), n * (n - 1) / 2);
        CHECK_EQ(dpdo_network_max_degree(net), n - 1);
        for (int64_t i = 0; i < n; i++) CHECK_EQ(dpdo_network_degree(net, i), n - 1);
    }
    for (int64_t n = 3; n <= 12; n++) {
        CHECK_EQ(dpdo_network_set_ring(net, n), DPDO_OK);
        CHECK_EQ(dpdo_network_edge_count(net), n);
        unsigned char *a = adjacency(net);
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++)
                CHECK_EQ(a[i * n + j], (j == (i + 1) % n || i == (j + 1) % n));
        CHECK(connected(a, n));
        free(a);
    }
    /* circulant n = 20, k = 3 (DO-ADP T-10): 6-regular, 60 edges */
    CHECK_EQ(dpdo_network_set_circulant(net, 20, 3), DPDO_OK);
    CHECK_EQ(dpdo_network_edge_count(net), 60);
    {
        unsigned char *a = adjacency(net);
        for (int64_t i = 0; i < 20; i++) {
            CHECK_EQ(dpdo_network_degree(net, i), 6);
            for (int64_t j = 0; j < 20; j++) {
                int64_t dd = ((j - i) % 20 + 20) % 20;
                int expect = (dd >= 1 && dd <= 3) || (dd >= 17);
                CHECK_EQ(a[i * 20 + j], expect);
            }
        }
        free(a);
        int64_t nb[6], cnt;
        CHECK_EQ(dpdo_network_neighbors(net, 0, nb, 6, &cnt), DPDO_OK);
        int64_t want[6] = {1, 2, 3, 17, 18, 19};
        for (int t = 0; t < 6; t++) CHECK_EQ(nb[t], want[t]);
    }
    /* general circulant n = 11, k = 5 is complete */
    CHECK_EQ(dpdo_network_set_circulant(net, 11, 5), DPDO_OK);
    CHECK_EQ(dpdo_network_edge_count(net), 55);
    /* torus 3 x 4: 4-regular, 24 edges; node (r,c) = 4r + c */
    CHECK_EQ(dpdo_network_set_torus(net, 3, 4), DPDO_OK);
    CHECK_EQ(dpdo_network_edge_count(net), 24);
    {
        unsigned char *a = adjacency(net);
        for (int64_t i = 0; i < 12; i++) {
            CHECK_EQ(dpdo_network_degree(net, i), 4);
            int64_t r = i / 4, c = i % 4;
            CHECK(a[i * 12 + ((r + 1) % 3) * 4 + c]);
            CHECK(a[i * 12 + ((r + 2) % 3) * 4 + c]);
            CHECK(a[i * 12 + r * 4 + (c + 1) % 4]);
            CHECK(a[i * 12 + r * 4 + (c + 3) % 4]);
        }
        CHECK(connected(a, 12));
        free(a);
    }
    /* star: node 0 is the hub */
    CHECK_EQ(dpdo_network_set_star(net, 7), DPDO_OK);
    CHECK_EQ(dpdo_network_edge_count(net), 6);
    CHECK_EQ(dpdo_network_degree(net, 0), 6);
    for (int64_t i = 1; i < 7; i++) CHECK_EQ(dpdo_network_degree(net, i), 1);
    CHECK_EQ(dpdo_network_max_degree(net), 6);
    /* edge list: a path 0-1-2-3 given in mixed orientation */
    int64_t path[] = {1, 0, 2, 1, 2, 3};
    CHECK_EQ(dpdo_network_set_edges(net, 4, path, 3), DPDO_OK);
    int64_t ed[6];
    CHECK_EQ(dpdo_network_get_edges(net, ed, 6), DPDO_OK);
    int64_t want[6] = {0, 1, 1, 2, 2, 3};
    for (int t = 0; t < 6; t++) CHECK_EQ(ed[t], want[t]);
    /* single node */
    CHECK_EQ(dpdo_network_set_edges(net, 1, NULL, 0), DPDO_OK);
    CHECK_EQ(dpdo_network_nodes(net), 1);
    CHECK_EQ(dpdo_network_degree(net, 0), 0);
    dpdo_network_destroy(net);
}

/* Independent formula for each rule, entry by entry, and the 1e-14 test. */
static void weights_rules(void)
{
    dpdo_network *net = mk();
    for (int topo = 0; topo < 7; topo++) {
        switch (topo) {
        case 0: CHECK_EQ(dpdo_network_set_complete(net, 20), DPDO_OK); break;
        case 1: CHECK_EQ(dpdo_network_set_ring(net, 17), DPDO_OK); break;
        case 2: CHECK_EQ(dpdo_network_set_circulant(net, 20, 3), DPDO_OK); break;
        case 3: CHECK_EQ(dpdo_network_set_torus(net, 5, 4), DPDO_OK); break;
        case 4: CHECK_EQ(dpdo_network_set_star(net, 13), DPDO_OK); break;
        case 5: CHECK_EQ(dpdo_network_set_erdos_renyi(net, 40, 0.15, 7, 100), DPDO_OK); break;
        default: {
            int64_t e[] = {0, 1, 1, 2, 2, 3, 3, 0, 0, 2, 3, 4, 4, 5, 5, 6};
            CHECK_EQ(dpdo_network_set_edges(net, 7, e, 8), DPDO_OK);
        }
        }
        int64_t n = dpdo_network_nodes(net), dmax = dpdo_network_max_degree(net);
        unsigned char *a = adjacency(net);
        int64_t *deg = malloc((size_t)n * sizeof(int64_t));
        for (int64_t i = 0; i < n; i++) deg[i] = dpdo_network_degree(net, i);
        for (int rule = 0; rule < 4; rule++) {
            double iota = 0;
            if (rule < 3)
                CHECK_EQ(dpdo_network_set_weights(net, rule == 3 ? 2 : rule, 0.0), DPDO_OK);
            else {
                iota = (double)dmax + 2.5;
                CHECK_EQ(dpdo_network_set_weights(net, DPDO_WEIGHTS_LAPLACIAN, iota), DPDO_OK);
            }
            CHECK_EQ(dpdo_network_weight_rule(net), rule == 3 ? 2 : rule);
            double *w = dense_w(net);
            check_stochastic(w, a, n, 1e-14);
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < n; j++) {
                    if (i == j || !a[i * n + j]) continue;
                    double expect;
                    if (rule == DPDO_WEIGHTS_METROPOLIS)
                        expect = 1.0 / (1.0 + (double)(deg[i] > deg[j] ? deg[i] : deg[j]));
                    else if (rule == DPDO_WEIGHTS_MAX_DEGREE || rule == DPDO_WEIGHTS_LAPLACIAN)
                        expect = 1.0 / (1.0 + (double)dmax);
                    else
                        expect = 1.0 / iota;
                    CHECK_NEAR(w[i * n + j], expect, 1e-16);
                }
            for (int64_t i = 0; i < n; i++) CHECK(w[i * n + i] > 0.0);
            free(w);
        }
        free(deg);
        free(a);
    }
    /* DO-ADP T-10: circulant(20,3), iota = 7: every closed-neighbourhood entry 1/7 */
    CHECK_EQ(dpdo_network_set_circulant(net, 20, 3), DPDO_OK);
    CHECK_EQ(dpdo_network_set_weights(net, DPDO_WEIGHTS_LAPLACIAN, 7.0), DPDO_OK);
    double *w = dense_w(net);
    for (int64_t i = 0; i < 20; i++) {
        CHECK_NEAR(w[i * 20 + i], 1.0 / 7, 1e-15);
        CHECK_NEAR(w[i * 20 + (i + 3) % 20], 1.0 / 7, 1e-15);
    }
    free(w);
    /* iota <= d_max is rejected (w_ii would be <= 0) */
    CHECK_EQ(dpdo_network_set_weights(net, DPDO_WEIGHTS_LAPLACIAN, 6.0), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_network_errmsg(net), "maximum degree 6");
    CHECK_EQ(dpdo_network_set_weights(net, DPDO_WEIGHTS_LAPLACIAN, -1.0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_weights(net, DPDO_WEIGHTS_LAPLACIAN, NAN), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_weights(net, DPDO_WEIGHTS_LAPLACIAN, INFINITY), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_weights(net, 7, 0.0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_weights(net, DPDO_WEIGHTS_CUSTOM, 0.0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_weight_rule(net), DPDO_WEIGHTS_LAPLACIAN); /* unchanged */
    dpdo_network_destroy(net);
}

/* ---- spectra ------------------------------------------------------------ */

static void spectral_ring(void)
{
    dpdo_network *net = mk();
    int nmax = h_quick() ? 20 : 50;
    for (int n = 5; n <= nmax; n++) {
        CHECK_EQ(dpdo_network_set_ring(net, n), DPDO_OK);
        /* MH on a ring: every weight 1/3, a circulant with eigenvalues
         * 1/3 + 2/3 cos(2 pi k / n) */
        double *ref = malloc((size_t)n * sizeof(double)), *eig = malloc((size_t)n * sizeof(double));
        double slem_ref = 0;
        for (int k = 0; k < n; k++) {
            ref[k] = 1.0 / 3 + 2.0 / 3 * cos(2 * PI * k / n);
            if (k > 0 && fabs(ref[k]) > slem_ref) slem_ref = fabs(ref[k]);
        }
        qsort(ref, (size_t)n, sizeof(double), cmp_desc);
        CHECK_EQ(dpdo_network_eigenvalues(net, eig, n), DPDO_OK);
        for (int k = 0; k < n; k++) CHECK_NEAR(eig[k], ref[k], 1e-10);
        double slem = -1, gap = -1;
        CHECK_EQ(dpdo_network_slem(net, &slem), DPDO_OK);
        CHECK_EQ(dpdo_network_spectral_gap(net, &gap), DPDO_OK);
        CHECK_NEAR(slem, slem_ref, 1e-10);
        CHECK_NEAR(gap, 1 - slem_ref, 1e-10);
        free(ref);
        free(eig);
    }
    dpdo_network_destroy(net);
}

static void spectral_complete_star(void)
{
    dpdo_network *net = mk();
    for (int n = 2; n <= 30; n += 7) {
        CHECK_EQ(dpdo_network_set_complete(net, n), DPDO_OK);
        double slem = -1, eig[30];
        CHECK_EQ(dpdo_network_slem(net, &slem), DPDO_OK);
        CHECK_NEAR(slem, 0.0, 1e-10); /* MH: W = J/n */
        CHECK_EQ(dpdo_network_eigenvalues(net, eig, n), DPDO_OK);
        CHECK_NEAR(eig[0], 1.0, 1e-10);
        /* W = I - L/iota, L(K_n) eigenvalues 0, n (n-1 times) */
        double iota = n + 1.5;
        CHECK_EQ(dpdo_network_set_weights(net, DPDO_WEIGHTS_LAPLACIAN, iota), DPDO_OK);
        CHECK_EQ(dpdo_network_slem(net, &slem), DPDO_OK);
        CHECK_NEAR(slem, fabs(1 - n / iota), 1e-10);
    }
    /* star, MH: w_0j = 1/n, w_jj = 1 - 1/n, w_00 = 1/n: eigenvalues
     * {1, 1 - 1/n (n-2 times), 0} (trace and rank argument) */
    for (int n = 3; n <= 40; n += 9) {
        CHECK_EQ(dpdo_network_set_star(net, n), DPDO_OK);
        double eig[40], gap;
        CHECK_EQ(dpdo_network_eigenvalues(net, eig, n), DPDO_OK);
        CHECK_NEAR(eig[0], 1.0, 1e-10);
        for (int k = 1; k < n - 1; k++) CHECK_NEAR(eig[k], 1 - 1.0 / n, 1e-10);
        CHECK_NEAR(eig[n - 1], 0.0, 1e-10);
        CHECK_EQ(dpdo_network_spectral_gap(net, &gap), DPDO_OK);
        CHECK_NEAR(gap, 1.0 / n, 1e-10);
    }
    /* n = 1: documented convention */
    CHECK_EQ(dpdo_network_set_complete(net, 1), DPDO_OK);
    double s = -1, g = -1;
    CHECK_EQ(dpdo_network_slem(net, &s), DPDO_OK);
    CHECK_EQ(dpdo_network_spectral_gap(net, &g), DPDO_OK);
    CHECK(s == 0.0 && g == 1.0);
    dpdo_network_destroy(net);
}

/* circulant eigenvalues = DFT of the first row: lambda_m = sum_j w_0j cos(2 pi j m / n) */
static void check_circulant_dft(dpdo_network *net, int64_t n)
{
    double *w = dense_w(net), *ref = malloc((size_t)n * sizeof(double));
    double *eig = malloc((size_t)n * sizeof(double));
    for (int64_t mm = 0; mm < n; mm++) {
        double s = 0;
        for (int64_t j = 0; j < n; j++) s += w[j] * cos(2 * PI * (double)(j * mm % n) / (double)n);
        ref[mm] = s;
    }
    double slem_ref = 0;
    for (int64_t mm = 1; mm < n; mm++)
        if (fabs(ref[mm]) > slem_ref) slem_ref = fabs(ref[mm]);
    qsort(ref, (size_t)n, sizeof(double), cmp_desc);
    CHECK_EQ(dpdo_network_eigenvalues(net, eig, n), DPDO_OK);
    double worst = 0;
    for (int64_t k = 0; k < n; k++)
        if (fabs(eig[k] - ref[k]) > worst) worst = fabs(eig[k] - ref[k]);
    CHECK_MSG(worst <= 1e-10, "n = %lld: eigenvalue error %.3g", (long long)n, worst);
    double slem;
    CHECK_EQ(dpdo_network_slem(net, &slem), DPDO_OK);
    CHECK_NEAR(slem, slem_ref, 1e-10);
    free(w);
    free(ref);
    free(eig);
}

static void spectral_circulant_torus(void)
{
    dpdo_network *net = mk();
    CHECK_EQ(dpdo_network_set_circulant(net, 20, 3), DPDO_OK);
    check_circulant_dft(net, 20);
    /* DO-ADP spec §4.5 table (6 printed digits): iota = 7 (= MH here), 8, 12 */
    double slem, eig[20];
    CHECK_EQ(dpdo_network_slem(net, &slem), DPDO_OK);
    CHECK_NEAR(slem, 0.813674, 1e-6);
    CHECK_EQ(dpdo_network_eigenvalues(net, eig, 20), DPDO_OK);
    CHECK_NEAR(1 - eig[19], 1.231148, 1e-6); /* phi = ||I - W||_2 */
    CHECK_EQ(dpdo_network_set_weights(net, DPDO_WEIGHTS_LAPLACIAN, 8.0), DPDO_OK);
    check_circulant_dft(net, 20);
    double gap;
    CHECK_EQ(dpdo_network_spectral_gap(net, &gap), DPDO_OK);
    CHECK_NEAR(gap, 0.163035, 1e-6);
    CHECK_EQ(dpdo_network_eigenvalues(net, eig, 20), DPDO_OK);
    CHECK_NEAR(1 - eig[19], 1.077254, 1e-6);
    CHECK_EQ(dpdo_network_set_weights(net, DPDO_WEIGHTS_LAPLACIAN, 12.0), DPDO_OK);
    CHECK_EQ(dpdo_network_spectral_gap(net, &gap), DPDO_OK);
    CHECK_NEAR(gap, 0.108690, 1e-6);
    /* other circulants */
    int64_t cases[][2] = {{31, 2}, {64, 5}, {101, 7}, {240, 3}};
    int nc = h_quick() ? 2 : 4;
    for (int c = 0; c < nc; c++) {
        CHECK_EQ(dpdo_network_set_circulant(net, cases[c][0], cases[c][1]), DPDO_OK);
        check_circulant_dft(net, cases[c][0]);
        CHECK_EQ(dpdo_network_set_weights(net, DPDO_WEIGHTS_LAPLACIAN, 2.0 * (double)cases[c][1] + 3.25),
                 DPDO_OK);
        check_circulant_dft(net, cases[c][0]);
    }
    /* torus r x c, W = I - L/iota: eigenvalues 1 - (4 - 2cos(2 pi a/r) - 2cos(2 pi b/c))/iota */
    int64_t r = 5, cc = 7, n = 35;
    CHECK_EQ(dpdo_network_set_torus(net, r, cc), DPDO_OK);
    CHECK_EQ(dpdo_network_set_weights(net, DPDO_WEIGHTS_LAPLACIAN, 6.0), DPDO_OK);
    double ref[35], ev[35];
    for (int64_t a = 0; a < r; a++)
        for (int64_t b = 0; b < cc; b++)
            ref[a * cc + b] = 1 - (4 - 2 * cos(2 * PI * a / r) - 2 * cos(2 * PI * b / cc)) / 6.0;
    qsort(ref, 35, sizeof(double), cmp_desc);
    CHECK_EQ(dpdo_network_eigenvalues(net, ev, n), DPDO_OK);
    for (int k = 0; k < 35; k++) CHECK_NEAR(ev[k], ref[k], 1e-10);
    dpdo_network_destroy(net);
}

static void spectral_cache(void)
{
    dpdo_network *net = mk();
    CHECK_EQ(dpdo_network_set_ring(net, 10), DPDO_OK);
    double a, b;
    CHECK_EQ(dpdo_network_slem(net, &a), DPDO_OK);
    CHECK_EQ(dpdo_network_slem(net, &b), DPDO_OK);
    CHECK(a == b);
    /* a weight change invalidates the cache */
    CHECK_EQ(dpdo_network_set_weights(net, DPDO_WEIGHTS_LAPLACIAN, 4.0), DPDO_OK);
    CHECK_EQ(dpdo_network_slem(net, &b), DPDO_OK);
    CHECK_NEAR(b, 1 - (2 - 2 * cos(2 * PI / 10)) / 4.0, 1e-12);
    CHECK(a != b);
    CHECK_EQ(dpdo_network_set_ring(net, 12), DPDO_OK);
    CHECK_EQ(dpdo_network_slem(net, &b), DPDO_OK);
    CHECK_NEAR(b, 1.0 / 3 + 2.0 / 3 * cos(2 * PI / 12), 1e-12);
    dpdo_network_destroy(net);
}

/* ---- Erdos-Renyi -------------------------------------------------------- */

static void erdos_renyi(void)
{
    dpdo_network *a = mk(), *b = mk();
    int64_t n = 60;
    double p = 0.1;
    CHECK_EQ(dpdo_network_set_erdos_renyi(a, n, p, 99, 50), DPDO_OK);
    CHECK_EQ(dpdo_network_set_erdos_renyi(b, n, p, 99, 50), DPDO_OK);
    int64_t m = dpdo_network_edge_count(a);
    CHECK_EQ(m, dpdo_network_edge_count(b));
    int64_t *ea = malloc((size_t)(2 * m) * sizeof(int64_t)), *eb = malloc((size_t)(2 * m) * sizeof(int64_t));
    CHECK_EQ(dpdo_network_get_edges(a, ea, 2 * m), DPDO_OK);
    CHECK_EQ(dpdo_network_get_edges(b, eb, 2 * m), DPDO_OK);
    CHECK(memcmp(ea, eb, (size_t)(2 * m) * sizeof(int64_t)) == 0);
    unsigned char *adj = adjacency(a);
    CHECK(connected(adj, n));
    free(adj);
    /* edge count within 5 standard deviations of p * C(n,2) = 177 */
    double mu = p * n * (n - 1) / 2, sd = sqrt(mu * (1 - p));
    CHECK_MSG(fabs((double)m - mu) < 5 * sd, "m = %lld, expected %.1f +- %.1f", (long long)m, mu, sd);
    /* another seed gives another graph */
    CHECK_EQ(dpdo_network_set_erdos_renyi(b, n, p, 100, 50), DPDO_OK);
    int64_t mb = dpdo_network_edge_count(b);
    int same = mb == m;
    if (same) {
        CHECK_EQ(dpdo_network_get_edges(b, eb, 2 * m), DPDO_OK);
        same = memcmp(ea, eb, (size_t)(2 * m) * sizeof(int64_t)) == 0;
    }
    CHECK(!same);
    free(ea);
    free(eb);
    /* below the connectivity threshold: bounded retries, then an error */
    CHECK_EQ(dpdo_network_set_erdos_renyi(b, 200, 0.002, 1, 5), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_network_errmsg(b), "in 5 tries");
    CHECK_EQ(dpdo_network_edge_count(b), mb); /* previous graph kept */
    /* p = 1 is complete; n = 1 trivially connected */
    CHECK_EQ(dpdo_network_set_erdos_renyi(b, 9, 1.0, 3, 1), DPDO_OK);
    CHECK_EQ(dpdo_network_edge_count(b), 36);
    CHECK_EQ(dpdo_network_set_erdos_renyi(b, 1, 0.0, 3, 1), DPDO_OK);
    /* bad input */
    CHECK_EQ(dpdo_network_set_erdos_renyi(NULL, 10, 0.5, 1, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_erdos_renyi(b, 0, 0.5, 1, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_erdos_renyi(b, 10, -0.1, 1, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_erdos_renyi(b, 10, 1.5, 1, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_erdos_renyi(b, 10, NAN, 1, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_erdos_renyi(b, 10, 0.5, 1, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_erdos_renyi(b, 10, 0.0, 1, 10), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_erdos_renyi(b, 100000, 0.5, 1, 1), DPDO_E_INVAL);
    dpdo_network_destroy(a);
    dpdo_network_destroy(b);
}

/* ---- validation of topologies and edge lists --------------------------- */

static void topology_bad_input(void)
{
    dpdo_network *net = mk();
    CHECK_EQ(dpdo_network_set_complete(NULL, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_ring(NULL, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_circulant(NULL, 20, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_torus(NULL, 3, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_star(NULL, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_edges(NULL, 3, NULL, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_complete(net, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_complete(net, -5), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_complete(net, (int64_t)1 << 40), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_ring(net, 2), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_network_errmsg(net), "n >= 3");
    CHECK_EQ(dpdo_network_set_circulant(net, 20, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_circulant(net, 20, 10), DPDO_E_INVAL); /* k too large */
    CHECK_STR_CONTAINS(dpdo_network_errmsg(net), "2k < n");
    CHECK_EQ(dpdo_network_set_circulant(net, 2, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_torus(net, 2, 5), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_torus(net, 5, -1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_torus(net, (int64_t)1 << 20, (int64_t)1 << 20), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_star(net, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_nodes(net), 0); /* nothing installed by failures */

    CHECK_EQ(dpdo_network_set_ring(net, 5), DPDO_OK);
    int64_t self[] = {0, 1, 2, 2};
    CHECK_EQ(dpdo_network_set_edges(net, 3, self, 2), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_network_errmsg(net), "edge 1 (2, 2) is a self-loop");
    int64_t dup[] = {0, 1, 1, 2, 1, 0};
    CHECK_EQ(dpdo_network_set_edges(net, 3, dup, 3), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_network_errmsg(net), "edge 2 (1, 0) duplicates edge 0 (0, 1)");
    int64_t range[] = {0, 1, 1, 3};
    CHECK_EQ(dpdo_network_set_edges(net, 3, range, 2), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_network_errmsg(net), "edge 1 (1, 3): node 3 is out of range");
    int64_t neg[] = {-1, 1};
    CHECK_EQ(dpdo_network_set_edges(net, 3, neg, 1), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_network_errmsg(net), "node -1");
    int64_t disc[] = {0, 1, 1, 2, 3, 4};
    CHECK_EQ(dpdo_network_set_edges(net, 5, disc, 3), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_network_errmsg(net), "node 3 is not reachable from node 0");
    CHECK_STR_CONTAINS(dpdo_network_errmsg(net), "3 of 5 nodes");
    CHECK_EQ(dpdo_network_set_edges(net, 3, NULL, 0), DPDO_E_INVAL); /* 3 isolated nodes */
    CHECK_EQ(dpdo_network_set_edges(net, 3, NULL, 2), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_edges(net, 3, disc, -1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_edges(net, 0, disc, 1), DPDO_E_INVAL);
    int64_t many[8] = {0, 1, 0, 2, 1, 2, 0, 1};
    CHECK_EQ(dpdo_network_set_edges(net, 3, many, 4), DPDO_E_INVAL);
    /* every failure left the ring intact */
    CHECK_EQ(dpdo_network_nodes(net), 5);
    CHECK_EQ(dpdo_network_edge_count(net), 5);
    CHECK_EQ(dpdo_network_weight_rule(net), DPDO_WEIGHTS_METROPOLIS);
    dpdo_network_destroy(net);
}

static void weight_matrix_caller(void)
{
    dpdo_network *net = mk();
    CHECK_EQ(dpdo_network_set_ring(net, 4), DPDO_OK);
    /* lazy ring: w_ii = 1/2, neighbours 1/4 */
    double w[16] = {0};
    for (int i = 0; i < 4; i++) {
        w[i * 4 + i] = 0.5;
        w[i * 4 + (i + 1) % 4] = 0.25;
        w[i * 4 + (i + 3) % 4] = 0.25;
    }
    CHECK_EQ(dpdo_network_set_weight_matrix(net, 4, w, 0), DPDO_OK);
    CHECK_EQ(dpdo_network_weight_rule(net), DPDO_WEIGHTS_CUSTOM);
    double back[16], slem;
    CHECK_EQ(dpdo_network_get_weights(net, back, 16), DPDO_OK);
    CHECK(memcmp(back, w, sizeof w) == 0);
    /* eigenvalues 1/2 + 1/2 cos(2 pi k/4) = 1, 1/2, 0, 1/2 */
    CHECK_EQ(dpdo_network_slem(net, &slem), DPDO_OK);
    CHECK_NEAR(slem, 0.5, 1e-12);
    double bad[16];
#define TRY(i, j, v, frag)                                                 \
    do {                                                                   \
        memcpy(bad, w, sizeof w);                                          \
        bad[(i) * 4 + (j)] = (v);                                          \
        CHECK_EQ(dpdo_network_set_weight_matrix(net, 4, bad, 0), DPDO_E_INVAL); \
        CHECK_STR_CONTAINS(dpdo_network_errmsg(net), frag);                \
    } while (0)
    TRY(1, 2, NAN, "entry (1, 2) = nan is NaN");
    TRY(2, 3, INFINITY, "(2, 3) = inf is infinite");
    TRY(0, 0, -0.5, "entry (0, 0) = -0.5 is negative");
    TRY(0, 2, 0.1, "entry (0, 2) = 0.10000000000000001 is nonzero but (i, j) is not an edge");
    TRY(3, 3, 0.6, "row 3 sums to");
#undef TRY
    /* asymmetric but stochastic rows and columns: a cyclic shift mix */
    memcpy(bad, w, sizeof w);
    bad[0 * 4 + 1] = 0.35, bad[0 * 4 + 3] = 0.15; /* row 0 still sums to 1 */
    bad[1 * 4 + 0] = 0.15, bad[1 * 4 + 2] = 0.35;
    bad[2 * 4 + 1] = 0.15, bad[2 * 4 + 3] = 0.35;
    bad[3 * 4 + 2] = 0.15, bad[3 * 4 + 0] = 0.35;
    CHECK_EQ(dpdo_network_set_weight_matrix(net, 4, bad, 0), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_network_errmsg(net), "not symmetric: entry (0, 1)");
    /* tolerance: 1e-9 off passes with tol 1e-8 and fails with the default */
    memcpy(bad, w, sizeof w);
    bad[0] += 1e-9;
    CHECK_EQ(dpdo_network_set_weight_matrix(net, 4, bad, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_weight_matrix(net, 4, bad, 1e-8), DPDO_OK);
    CHECK_EQ(dpdo_network_set_weight_matrix(net, 4, w, -1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_weight_matrix(net, 4, w, NAN), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_weight_matrix(net, 4, w, 0.5), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_weight_matrix(net, 5, w, 0), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_network_errmsg(net), "network has 4 nodes");
    CHECK_EQ(dpdo_network_set_weight_matrix(net, 4, NULL, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_weight_matrix(net, 0, w, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_weight_matrix(NULL, 4, w, 0), DPDO_E_INVAL);
    dpdo_network_destroy(net);

    /* empty network: the graph becomes the support of W */
    net = mk();
    CHECK_EQ(dpdo_network_set_weight_matrix(net, 4, w, 0), DPDO_OK);
    CHECK_EQ(dpdo_network_nodes(net), 4);
    CHECK_EQ(dpdo_network_edge_count(net), 4);
    CHECK_EQ(dpdo_network_degree(net, 2), 2);
    dpdo_network_destroy(net);
    net = mk();
    double id[9] = {1, 0, 0, 0, 0.5, 0.5, 0, 0.5, 0.5}; /* node 0 isolated */
    CHECK_EQ(dpdo_network_set_weight_matrix(net, 3, id, 0), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_network_errmsg(net), "disconnected");
    CHECK_EQ(dpdo_network_nodes(net), 0);
    dpdo_network_destroy(net);
}

/* ---- gossip --------------------------------------------------------------- */

static void naive(const double *w, const double *x, double *y, int64_t n, int64_t d)
{
    for (int64_t i = 0; i < n; i++)
        for (int64_t c = 0; c < d; c++) {
            double s = 0;
            for (int64_t j = 0; j < n; j++) s += w[i * n + j] * x[j * d + c];
            y[i * d + c] = s;
        }
}

static void gossip_check(dpdo_network *net, int64_t d)
{
    int64_t n = dpdo_network_nodes(net);
    double *x = malloc((size_t)(n * d) * sizeof(double)), *y = malloc((size_t)(n * d) * sizeof(double));
    double *ref = malloc((size_t)(n * d) * sizeof(double)), *w = dense_w(net);
    for (int64_t t = 0; t < n * d; t++) x[t] = 2 * urand() - 1;
    naive(w, x, ref, n, d);
    CHECK_EQ(dpdo_network_gossip(net, x, y, n, d), DPDO_OK);
    double worst = 0;
    for (int64_t t = 0; t < n * d; t++)
        if (fabs(y[t] - ref[t]) > worst) worst = fabs(y[t] - ref[t]);
    CHECK_MSG(worst <= 1e-12, "n = %lld d = %lld path %d: max error %.3g", (long long)n, (long long)d,
              dpdo_network_gossip_path(net), worst);
    /* averages are preserved (column stochasticity): sum_i y_i = sum_i x_i */
    for (int64_t c = 0; c < d; c += 7) {
        double sx = 0, sy = 0;
        for (int64_t i = 0; i < n; i++) sx += x[i * d + c], sy += y[i * d + c];
        CHECK_NEAR(sy, sx, 1e-11);
    }
    free(x);
    free(y);
    free(ref);
    free(w);
}

static void gossip_vs_dense(void)
{
    dpdo_network *net = mk();
    CHECK_EQ(dpdo_network_set_complete(net, 20), DPDO_OK);
    CHECK_EQ(dpdo_network_gossip_path(net), DPDO_GOSSIP_DENSE); /* AUTO: small and dense */
    gossip_check(net, 33);
    CHECK_EQ(dpdo_network_set_gossip_mode(net, DPDO_GOSSIP_SPARSE), DPDO_OK);
    CHECK_EQ(dpdo_network_gossip_path(net), DPDO_GOSSIP_SPARSE);
    gossip_check(net, 33);
    CHECK_EQ(dpdo_network_set_weights(net, DPDO_WEIGHTS_LAPLACIAN, 25.0), DPDO_OK);
    CHECK_EQ(dpdo_network_gossip_path(net), DPDO_GOSSIP_SPARSE); /* mode kept */
    gossip_check(net, 5);
    CHECK_EQ(dpdo_network_set_gossip_mode(net, DPDO_GOSSIP_DENSE), DPDO_OK);
    gossip_check(net, 5);
    CHECK_EQ(dpdo_network_set_circulant(net, 200, 3), DPDO_OK);
    CHECK_EQ(dpdo_network_gossip_path(net), DPDO_GOSSIP_DENSE); /* forced */
    gossip_check(net, 17);
    CHECK_EQ(dpdo_network_set_gossip_mode(net, DPDO_GOSSIP_AUTO), DPDO_OK);
    CHECK_EQ(dpdo_network_gossip_path(net), DPDO_GOSSIP_SPARSE);
    gossip_check(net, 17);
    CHECK_EQ(dpdo_network_set_torus(net, 4, 6), DPDO_OK);
    gossip_check(net, 1);
    CHECK_EQ(dpdo_network_set_star(net, 9), DPDO_OK);
    gossip_check(net, 64);
    CHECK_EQ(dpdo_network_set_erdos_renyi(net, 50, 0.2, 5, 20), DPDO_OK);
    gossip_check(net, 9);
    /* the sparse path is bit-identical to one axpy per stored entry, taken
     * in ascending column order (the documented summation order) */
    {
        CHECK_EQ(dpdo_network_set_gossip_mode(net, DPDO_GOSSIP_SPARSE), DPDO_OK);
        int64_t n = 50, d = 11;
        double *x = malloc(n * d * sizeof(double)), *y = malloc(n * d * sizeof(double));
        double *ref = malloc(n * d * sizeof(double)), *w = dense_w(net);
        unsigned char *adj = adjacency(net);
        for (int64_t t = 0; t < n * d; t++) x[t] = 2 * urand() - 1;
        for (int64_t i = 0; i < n; i++) {
            int first = 1;
            for (int64_t j = 0; j < n; j++) {
                if (j != i && !adj[i * n + j]) continue;
                for (int64_t c = 0; c < d; c++) {
                    double v = w[i * n + j] * x[j * d + c];
                    ref[i * d + c] = first ? v : ref[i * d + c] + v;
                }
                first = 0;
            }
        }
        CHECK_EQ(dpdo_network_gossip(net, x, y, n, d), DPDO_OK);
        CHECK(memcmp(y, ref, n * d * sizeof(double)) == 0);
        free(x), free(y), free(ref), free(w), free(adj);
        CHECK_EQ(dpdo_network_set_gossip_mode(net, DPDO_GOSSIP_AUTO), DPDO_OK);
    }
    CHECK_EQ(dpdo_network_set_complete(net, 1), DPDO_OK);
    gossip_check(net, 3);
    /* bad input */
    double x[40] = {0}, y[40];
    CHECK_EQ(dpdo_network_set_ring(net, 4), DPDO_OK);
    CHECK_EQ(dpdo_network_gossip(NULL, x, y, 4, 10), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_gossip(net, NULL, y, 4, 10), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_gossip(net, x, NULL, 4, 10), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_gossip(net, x, y, 5, 8), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_network_errmsg(net), "n = 5");
    CHECK_EQ(dpdo_network_gossip(net, x, y, 4, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_gossip(net, x, x, 4, 10), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_network_errmsg(net), "overlap");
    CHECK_EQ(dpdo_network_gossip(net, x, x + 5, 4, 5), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_gossip(net, x, x + 20, 4, 5), DPDO_OK);
    CHECK_EQ(dpdo_network_set_gossip_mode(net, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_gossip_mode(NULL, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_circulant(net, 5000, 2), DPDO_OK);
    CHECK_EQ(dpdo_network_set_gossip_mode(net, DPDO_GOSSIP_DENSE), DPDO_E_INVAL);
    dpdo_network_destroy(net);
    net = mk();
    CHECK_EQ(dpdo_network_gossip(net, x, y, 4, 10), DPDO_E_INVAL); /* empty */
    CHECK_EQ(dpdo_network_set_gossip_mode(net, DPDO_GOSSIP_SPARSE), DPDO_OK);
    CHECK_EQ(dpdo_network_set_complete(net, 10), DPDO_OK);
    CHECK_EQ(dpdo_network_gossip_path(net), DPDO_GOSSIP_SPARSE); /* mode remembered */
    dpdo_network_destroy(net);
}

/* ---- per-round matrices ---------------------------------------------------- */

/* spec/dp-dda.md §8 test 12: n = 4, E = {{0,1},{1,2}} */
static void round_spec_example(void)
{
    dpdo_network *net = mk();
    CHECK_EQ(dpdo_network_set_complete(net, 4), DPDO_OK);
    dpdo__round r;
    CHECK_EQ(dpdo__round_init(&r, net, -1), DPDO_OK);
    int64_t e[] = {1, 0, 1, 2};
    char err[DPDO__ERRMSG_LEN];
    CHECK_EQ(dpdo__round_set_edges(&r, e, 2, err), DPDO_OK);
    CHECK_EQ(dpdo__round_weights_from_edges(&r), DPDO_OK);
    double w[16];
    dpdo__round_dense(&r, w);
    double expect[16] = {2.0 / 3, 1.0 / 3, 0, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3, 0,
                         0, 1.0 / 3, 2.0 / 3, 0, 0, 0, 0, 1};
    for (int t = 0; t < 16; t++) CHECK_NEAR(w[t], expect[t], 2e-16);
    CHECK_EQ(r.nactive, 3);
    /* injection errors */
    int64_t bad1[] = {0, 0}, bad2[] = {0, 4}, bad3[] = {0, 1, 1, 0};
    CHECK_EQ(dpdo__round_set_edges(&r, bad1, 1, err), DPDO_E_INVAL);
    CHECK_EQ(dpdo__round_set_edges(&r, bad2, 1, err), DPDO_E_INVAL);
    CHECK_EQ(dpdo__round_set_edges(&r, bad3, 2, err), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(err, "duplicates");
    int64_t act[] = {3, 1};
    CHECK_EQ(dpdo__round_set_active(&r, act, 2, err), DPDO_OK);
    CHECK(r.active[0] == 1 && r.active[1] == 3);
    int64_t actd[] = {2, 2};
    CHECK_EQ(dpdo__round_set_active(&r, actd, 2, err), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(err, "duplicate");
    dpdo__round_free(&r);
    /* a round structure sized for one edge refuses bigger plans */
    dpdo_rng *rng = NULL;
    CHECK_EQ(dpdo_rng_create(&rng, NULL, NULL, 3), DPDO_OK);
    CHECK_EQ(dpdo__round_init(&r, net, 1), DPDO_OK);
    CHECK_EQ(dpdo__round_draw(&r, net, rng, 0, DPDO_ROUND_ALL, 0, 0, err), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(err, "capacity");
    CHECK_EQ(dpdo__round_draw(&r, net, rng, 0, DPDO_ROUND_EDGES, 2, 0, err), DPDO_E_INVAL);
    CHECK_EQ(dpdo__round_draw(&r, net, rng, 0, DPDO_ROUND_MATCHING, 4, 0, err), DPDO_E_INVAL);
    CHECK_EQ(dpdo__round_draw(&r, net, rng, 0, DPDO_ROUND_INDUCED, 4, 0, err), DPDO_E_INVAL);
    CHECK_EQ(dpdo__round_draw(&r, net, rng, 0, DPDO_ROUND_EDGES, 1, 0, err), DPDO_OK);
    CHECK_EQ(dpdo__round_draw(&r, net, rng, 0, DPDO_ROUND_MATCHING, 2, 0, err), DPDO_OK);
    CHECK_EQ(dpdo__round_draw(&r, net, rng, 0, DPDO_ROUND_AVERAGE, 4, 0, err), DPDO_OK);
    CHECK_EQ(dpdo__round_draw(&r, net, rng, 0, 42, 4, 0, err), DPDO_E_INVAL);
    dpdo__round_free(&r);
    dpdo_rng_destroy(rng);
    dpdo_network_destroy(net);
}

/* spec/dp-dda.md §2.5 / §8 test 15 by exact enumeration over K_20 with the
 * injected edge sets: beta^2 = (n dbar - 1)/(n - 1), dbar = E[(W^T W)_ii]
 * averaged over i. One edge: 18/19; two disjoint edges: 17/19; two distinct
 * edges: 3229/3591. */
static void round_beta_enumeration(void)
{
    dpdo_network *net = mk();
    CHECK_EQ(dpdo_network_set_complete(net, 20), DPDO_OK);
    int64_t ed[380];
    CHECK_EQ(dpdo_network_get_edges(net, ed, 380), DPDO_OK);
    dpdo__round r;
    char err[DPDO__ERRMSG_LEN];
    CHECK_EQ(dpdo__round_init(&r, net, -1), DPDO_OK);
    double w[400];
    double s1 = 0, s2 = 0, s2d = 0;
    long c1 = 0, c2 = 0, c2d = 0;
    for (int a = 0; a < 190; a++)
        for (int b = a; b < 190; b++) {
            int64_t e[4] = {ed[2 * a], ed[2 * a + 1], ed[2 * b], ed[2 * b + 1]};
            int k = a == b ? 1 : 2;
            CHECK_EQ(dpdo__round_set_edges(&r, e, k, err), DPDO_OK);
            dpdo__round_weights_from_edges(&r);
            dpdo__round_dense(&r, w);
            double tr = 0; /* trace of W^T W = sum of squares */
            for (int t = 0; t < 400; t++) tr += w[t] * w[t];
            if (k == 1) {
                s1 += tr, c1++;
            } else {
                s2 += tr, c2++;
                if (r.nactive == 4) s2d += tr, c2d++;
            }
        }
    CHECK_EQ(c1, 190);
    CHECK_EQ(c2, 17955);
    CHECK_EQ(c2d, 14535);
    double n = 20;
#define BETA2(sum, cnt) ((n * ((sum) / (cnt) / n) - 1) / (n - 1))
    CHECK_NEAR(BETA2(s1, c1), 18.0 / 19, 1e-12);
    CHECK_NEAR(BETA2(s2d, c2d), 17.0 / 19, 1e-12);
    CHECK_NEAR(BETA2(s2, c2), 3229.0 / 3591, 1e-12);
#undef BETA2
    dpdo__round_free(&r);
    dpdo_network_destroy(net);
}

/* §8 test 13: invariants of every scheme over many draws */
static void round_invariants(void)
{
    dpdo_rng *rng = NULL;
    CHECK_EQ(dpdo_rng_create(&rng, NULL, NULL, 2024), DPDO_OK);
    dpdo_network *k20 = mk(), *circ = mk();
    CHECK_EQ(dpdo_network_set_complete(k20, 20), DPDO_OK);
    CHECK_EQ(dpdo_network_set_circulant(circ, 20, 3), DPDO_OK);
    int rounds = h_quick() ? 200 : 2000;
    struct { dpdo_network *net; int scheme; int64_t count; double p; int amin, amax; } cs[] = {
        {k20, DPDO_ROUND_EDGES, 1, 0, 2, 2},     {k20, DPDO_ROUND_EDGES, 2, 0, 3, 4},
        {k20, DPDO_ROUND_MATCHING, 2, 0, 2, 2},  {k20, DPDO_ROUND_MATCHING, 4, 0, 4, 4},
        {k20, DPDO_ROUND_AVERAGE, 5, 0, 5, 5},   {circ, DPDO_ROUND_INDUCED, 8, 0, 8, 8},
        {circ, DPDO_ROUND_EDGES, 5, 0, 3, 10},   {circ, DPDO_ROUND_MATCHING, 6, 0, 6, 6},
        {circ, DPDO_ROUND_BERNOULLI, 0, 0.3, 0, 20}, {circ, DPDO_ROUND_ALL, 0, 0, 20, 20},
    };
    double w[400];
    int32_t act[20];
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        unsigned char *adj = adjacency(cs[c].net);
        double worst = 0;
        for (int t = 0; t < rounds; t++) {
            CHECK_EQ(dpdo_network_round_matrix(cs[c].net, rng, (uint64_t)t, cs[c].scheme, cs[c].count,
                                               cs[c].p, act, w, 400),
                     DPDO_OK);
            int na = 0;
            for (int i = 0; i < 20; i++) na += act[i];
            CHECK(na >= cs[c].amin && na <= cs[c].amax);
            for (int i = 0; i < 20; i++) {
                double rs = 0, cs_ = 0;
                for (int j = 0; j < 20; j++) {
                    double v = w[i * 20 + j];
                    CHECK(v >= 0 && v <= 1);
                    CHECK(v == w[j * 20 + i]);
                    if (i != j && v != 0) CHECK(act[i] && act[j] && adj[i * 20 + j]);
                    rs += v;
                    cs_ += w[j * 20 + i];
                }
                if (!act[i]) CHECK(w[i * 20 + i] == 1.0); /* row and column e_k */
                if (fabs(rs - 1) > worst) worst = fabs(rs - 1);
                if (fabs(cs_ - 1) > worst) worst = fabs(cs_ - 1);
            }
            if (cs[c].scheme == DPDO_ROUND_MATCHING) /* each pair averages */
                for (int i = 0; i < 20; i++)
                    if (act[i]) CHECK(w[i * 20 + i] == 0.5);
            if (cs[c].scheme == DPDO_ROUND_AVERAGE)
                for (int i = 0; i < 20; i++)
                    for (int j = 0; j < 20; j++)
                        if (act[i] && act[j]) CHECK(w[i * 20 + j] == 1.0 / 5);
        }
        CHECK_MSG(worst <= 1e-15, "case %zu: stochasticity error %.3g", c, worst);
        free(adj);
    }
    /* bad input */
    CHECK_EQ(dpdo_network_round_matrix(NULL, rng, 0, DPDO_ROUND_EDGES, 1, 0, act, w, 400), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_round_matrix(k20, NULL, 0, DPDO_ROUND_EDGES, 1, 0, act, w, 400), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_round_matrix(k20, rng, 0, DPDO_ROUND_EDGES, 1, 0, act, w, 399), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_round_matrix(k20, rng, 0, 9, 1, 0, act, w, 400), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_round_matrix(k20, rng, 0, -1, 1, 0, act, w, 400), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_round_matrix(k20, rng, 0, DPDO_ROUND_EDGES, 0, 0, act, w, 400), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_round_matrix(k20, rng, 0, DPDO_ROUND_EDGES, 191, 0, act, w, 400), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_round_matrix(k20, rng, 0, DPDO_ROUND_MATCHING, 3, 0, act, w, 400), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_network_errmsg(k20), "even");
    CHECK_EQ(dpdo_network_round_matrix(k20, rng, 0, DPDO_ROUND_MATCHING, 22, 0, act, w, 400), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_round_matrix(k20, rng, 0, DPDO_ROUND_AVERAGE, 0, 0, act, w, 400), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_round_matrix(k20, rng, 0, DPDO_ROUND_INDUCED, 21, 0, act, w, 400), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_round_matrix(k20, rng, 0, DPDO_ROUND_BERNOULLI, 0, 1.5, act, w, 400), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_round_matrix(k20, rng, 0, DPDO_ROUND_BERNOULLI, 0, NAN, act, w, 400), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_round_matrix(k20, rng, 0, DPDO_ROUND_EDGES, 1, 0, NULL, NULL, 0), DPDO_OK);
    dpdo_network *empty = mk();
    CHECK_EQ(dpdo_network_round_matrix(empty, rng, 0, DPDO_ROUND_ALL, 0, 0, act, w, 400), DPDO_E_INVAL);
    dpdo__round re;
    CHECK_EQ(dpdo__round_init(&re, empty, -1), DPDO_E_INVAL);
    dpdo__round_free(&re);
    dpdo_network_destroy(empty);
    dpdo_network_destroy(k20);
    dpdo_network_destroy(circ);
    dpdo_rng_destroy(rng);
}

/* Round plans depend only on (seed, round): drawing rounds in another order,
 * or on a fresh structure, gives the same bytes. */
static void round_determinism(void)
{
    dpdo_rng *rng = NULL, *rng2 = NULL;
    CHECK_EQ(dpdo_rng_create(&rng, NULL, NULL, 77), DPDO_OK);
    CHECK_EQ(dpdo_rng_create(&rng2, NULL, NULL, 78), DPDO_OK);
    dpdo_network *net = mk();
    CHECK_EQ(dpdo_network_set_circulant(net, 30, 4), DPDO_OK);
    int schemes[] = {DPDO_ROUND_EDGES, DPDO_ROUND_MATCHING, DPDO_ROUND_INDUCED, DPDO_ROUND_BERNOULLI,
                     DPDO_ROUND_AVERAGE};
    static double wa[10][900], wb[900];
    for (int s = 0; s < 5; s++) {
        for (int t = 0; t < 10; t++)
            CHECK_EQ(dpdo_network_round_matrix(net, rng, (uint64_t)t, schemes[s], 6, 0.4, NULL, wa[t], 900),
                     DPDO_OK);
        int differ = 0;
        for (int t = 9; t >= 0; t--) {
            CHECK_EQ(dpdo_network_round_matrix(net, rng, (uint64_t)t, schemes[s], 6, 0.4, NULL, wb, 900),
                     DPDO_OK);
            CHECK(memcmp(wa[t], wb, sizeof wb) == 0);
            if (t && memcmp(wa[t], wa[t - 1], sizeof wb)) differ = 1;
        }
        CHECK(differ);
        CHECK_EQ(dpdo_network_round_matrix(net, rng2, 3, schemes[s], 6, 0.4, NULL, wb, 900), DPDO_OK);
        CHECK(memcmp(wa[3], wb, sizeof wb) != 0);
    }
    /* the internal structure reused across rounds gives the same plans */
    dpdo__round r;
    char err[DPDO__ERRMSG_LEN];
    CHECK_EQ(dpdo__round_init(&r, net, -1), DPDO_OK);
    for (int t = 0; t < 10; t++)
        CHECK_EQ(dpdo_network_round_matrix(net, rng, (uint64_t)t, DPDO_ROUND_BERNOULLI, 0, 0.4, NULL,
                                           wa[t], 900),
                 DPDO_OK);
    for (int t = 9; t >= 0; t--) {
        CHECK_EQ(dpdo__round_draw(&r, net, rng, (uint64_t)t, DPDO_ROUND_BERNOULLI, 0, 0.4, err), DPDO_OK);
        dpdo__round_dense(&r, wb);
        CHECK(memcmp(wa[t], wb, sizeof wb) == 0);
    }
    dpdo__round_free(&r);
    dpdo_network_destroy(net);
    dpdo_rng_destroy(rng);
    dpdo_rng_destroy(rng2);
}

/* per-round gossip vs the dense product of W^(t); inactive rows untouched */
static void round_gossip(void)
{
    dpdo_rng *rng = NULL;
    CHECK_EQ(dpdo_rng_create(&rng, NULL, NULL, 5), DPDO_OK);
    dpdo_network *net = mk();
    CHECK_EQ(dpdo_network_set_torus(net, 4, 5), DPDO_OK);
    int64_t n = 20, d = 13;
    double x[260], y[260], ref[260], w[400];
    dpdo__round r;
    char err[DPDO__ERRMSG_LEN];
    CHECK_EQ(dpdo__round_init(&r, net, -1), DPDO_OK);
    for (int s = DPDO_ROUND_ALL; s <= DPDO_ROUND_BERNOULLI; s++)
        for (int t = 0; t < 20; t++) {
            for (int k = 0; k < 260; k++) x[k] = 2 * urand() - 1, y[k] = -777.0;
            int64_t cnt = s == DPDO_ROUND_EDGES ? 3 : 6;
            CHECK_EQ(dpdo__round_draw(&r, net, rng, (uint64_t)t, s, cnt, 0.5, err), DPDO_OK);
            dpdo__round_gossip(&r, x, y, d);
            dpdo__round_dense(&r, w);
            naive(w, x, ref, n, d);
            for (int64_t i = 0; i < n; i++)
                for (int64_t c = 0; c < d; c++) {
                    if (r.is_active[i])
                        CHECK_NEAR(y[i * d + c], ref[i * d + c], 1e-12);
                    else
                        CHECK(y[i * d + c] == -777.0);
                }
        }
    /* static gossip restricted to rows */
    int64_t rows[] = {3, 7, 19};
    for (int k = 0; k < 260; k++) y[k] = -1.0;
    dpdo__gossip_rows(net, rows, 3, x, y, d);
    double *wd = dense_w(net);
    naive(wd, x, ref, n, d);
    for (int64_t i = 0; i < n; i++) {
        int in = i == 3 || i == 7 || i == 19;
        for (int64_t c = 0; c < d; c++)
            if (in)
                CHECK_NEAR(y[i * d + c], ref[i * d + c], 1e-12);
            else
                CHECK(y[i * d + c] == -1.0);
    }
    free(wd);
    dpdo__round_free(&r);
    dpdo_network_destroy(net);
    dpdo_rng_destroy(rng);
}

/* ---- chi-square tests of sampler marginals ----------------------------------
 * Fixed seeds make each test deterministic. The thresholds are the upper
 * 1e-6 quantiles of the reference chi-square laws (Wilson-Hilferty
 * approximation), so a correct sampler with an ideal generator fails with
 * probability 1e-6, while a bias of a few percent in one cell over R = 1e4
 * rounds gives a statistic far above them (checked by sensitivity cases). */
static double chi2_crit(double df)
{
    const double z = 4.753424; /* P(N(0,1) > z) = 1e-6 */
    double a = 2.0 / (9.0 * df);
    return df * pow(1 - a + z * sqrt(a), 3);
}

/* Counts c[0..K-1] over R rounds, each cell included with probability p per
 * round and the per-round total fixed (exchangeable cells): the covariance
 * is R p(1-p) K/(K-1) (I - J/K), so (K-1)/(K R p (1-p)) sum (c - Rp)^2 is
 * chi-square with K-1 degrees of freedom. fixed_total = 0: independent
 * cells, statistic sum (c - Rp)^2/(R p (1-p)) with K degrees of freedom. */
static double chi2_stat(const long *c, int K, long R, double p, int fixed_total, double *df)
{
    double X = 0;
    double s = 0;
    for (int k = 0; k < K; k++) s += ((double)c[k] - R * p) * ((double)c[k] - R * p);
    if (fixed_total) {
        *df = K - 1;
        X = s * (K - 1) / ((double)K * R * p * (1 - p));
    } else {
        *df = K;
        X = s / (R * p * (1 - p));
    }
    printf("#   chi-square: X = %.2f, df = %.0f, 1e-6 critical value %.2f\n", X, *df, chi2_crit(*df));
    return X;
}

static void sampler_chi_square(void)
{
    dpdo_rng *rng = NULL;
    CHECK_EQ(dpdo_rng_create(&rng, NULL, NULL, 31337), DPDO_OK);
    dpdo_network *k20 = mk(), *circ = mk();
    CHECK_EQ(dpdo_network_set_complete(k20, 20), DPDO_OK);
    CHECK_EQ(dpdo_network_set_circulant(circ, 20, 3), DPDO_OK);
    long R = h_quick() ? 3000 : 10000;
    dpdo__round r, rc_;
    char err[DPDO__ERRMSG_LEN];
    CHECK_EQ(dpdo__round_init(&r, k20, -1), DPDO_OK);
    CHECK_EQ(dpdo__round_init(&rc_, circ, -1), DPDO_OK);
    long cnt[190];
    double df, X;

    /* uniform b-of-n node sampling, b = 4: inclusion frequency b/n */
    memset(cnt, 0, sizeof cnt);
    for (long t = 0; t < R; t++) {
        CHECK_EQ(dpdo__round_sample_nodes(&r, rng, (uint64_t)t, 4, err), DPDO_OK);
        CHECK_EQ(r.nactive, 4);
        for (int64_t a = 0; a < r.nactive; a++) cnt[r.active[a]]++;
    }
    X = chi2_stat(cnt, 20, R, 0.2, 1, &df);
    CHECK_MSG(X < chi2_crit(df), "b-of-n: X = %.2f, crit %.2f", X, chi2_crit(df));
    /* sensitivity: a sampler that never picks node 19 is rejected */
    long biased[20];
    for (int k = 0; k < 20; k++) biased[k] = k < 19 ? (long)(R * 0.8 / 19 * 4 + 0.5) : 0;
    X = chi2_stat(biased, 20, R, 0.2, 1, &df);
    CHECK(X > chi2_crit(df));

    /* Bernoulli(p = 0.3) per node: independent cells */
    memset(cnt, 0, sizeof cnt);
    for (long t = 0; t < R; t++) {
        CHECK_EQ(dpdo__round_sample_bernoulli(&r, rng, (uint64_t)t, 0.3, err), DPDO_OK);
        for (int64_t a = 0; a < r.nactive; a++) cnt[r.active[a]]++;
    }
    X = chi2_stat(cnt, 20, R, 0.3, 0, &df);
    CHECK_MSG(X < chi2_crit(df), "bernoulli: X = %.2f, crit %.2f", X, chi2_crit(df));

    /* k = 2 distinct edges of K_20 (scheme (a)): each edge with probability 2/190 */
    memset(cnt, 0, sizeof cnt);
    long shared = 0;
    for (long t = 0; t < R; t++) {
        CHECK_EQ(dpdo__round_sample_edges(&r, k20, rng, (uint64_t)t, 2, err), DPDO_OK);
        CHECK_EQ(r.nedges, 2);
        for (int64_t e = 0; e < r.nedges; e++) {
            int64_t a = r.edges[2 * e], b = r.edges[2 * e + 1];
            cnt[a * 20 - a * (a + 1) / 2 + (b - a - 1)]++; /* lexicographic edge index */
        }
        if (r.nactive == 3) shared++;
    }
    X = chi2_stat(cnt, 190, R, 2.0 / 190, 1, &df);
    CHECK_MSG(X < chi2_crit(df), "edges: X = %.2f, crit %.2f", X, chi2_crit(df));
    /* two distinct edges share a node with probability 36/189 = 4/21 (spec §2.5(a)) */
    double ps = 4.0 / 21, se = sqrt(ps * (1 - ps) / R);
    CHECK_MSG(fabs((double)shared / R - ps) < 5 * se, "shared %.4f vs %.4f", (double)shared / R, ps);

    /* random matching b = 4 on K_20 (scheme (b)): each pair matched with
     * probability b/(n(n-1)) = 4/380; node inclusion b/n */
    memset(cnt, 0, sizeof cnt);
    long ncount[20] = {0};
    double diag_sum = 0;
    for (long t = 0; t < R; t++) {
        CHECK_EQ(dpdo__round_sample_matching(&r, k20, rng, (uint64_t)t, 4, err), DPDO_OK);
        CHECK_EQ(r.nedges, 2);
        CHECK_EQ(r.nactive, 4);
        for (int64_t e = 0; e < r.nedges; e++) {
            int64_t a = r.edges[2 * e], b = r.edges[2 * e + 1];
            cnt[a * 20 - a * (a + 1) / 2 + (b - a - 1)]++;
        }
        for (int64_t a = 0; a < r.nactive; a++) ncount[r.active[a]]++;
        diag_sum += 20 - r.nactive * 0.5; /* trace of W^(t) (pairs: w_ii = 1/2) */
    }
    X = chi2_stat(cnt, 190, R, 4.0 / 380, 1, &df);
    CHECK_MSG(X < chi2_crit(df), "matching pairs: X = %.2f, crit %.2f", X, chi2_crit(df));
    X = chi2_stat(ncount, 20, R, 0.2, 1, &df);
    CHECK_MSG(X < chi2_crit(df), "matching nodes: X = %.2f, crit %.2f", X, chi2_crit(df));
    /* spec §8 test 15: E[W^T W]_ii = E[W]_ii = 1 - b/(2n) = 0.9 */
    CHECK_NEAR(diag_sum / (20.0 * R), 0.9, 1e-12);

    /* k = 5 edges of the circulant (60 edges): each with probability 5/60 */
    memset(cnt, 0, sizeof cnt);
    int64_t ed[120];
    CHECK_EQ(dpdo_network_get_edges(circ, ed, 120), DPDO_OK);
    for (long t = 0; t < R; t++) {
        CHECK_EQ(dpdo__round_sample_edges(&rc_, circ, rng, (uint64_t)t, 5, err), DPDO_OK);
        for (int64_t e = 0; e < rc_.nedges; e++)
            for (int q = 0; q < 60; q++)
                if (ed[2 * q] == rc_.edges[2 * e] && ed[2 * q + 1] == rc_.edges[2 * e + 1]) cnt[q]++;
    }
    long tot = 0;
    for (int q = 0; q < 60; q++) tot += cnt[q];
    CHECK_EQ(tot, 5 * R);
    X = chi2_stat(cnt, 60, R, 5.0 / 60, 1, &df);
    CHECK_MSG(X < chi2_crit(df), "circulant edges: X = %.2f, crit %.2f", X, chi2_crit(df));

    /* greedy matching on the circulant: b = 6 always reachable; each node
     * equally often by vertex transitivity */
    long nc2[20] = {0};
    for (long t = 0; t < R; t++) {
        CHECK_EQ(dpdo__round_sample_matching(&rc_, circ, rng, (uint64_t)t, 6, err), DPDO_OK);
        CHECK_EQ(rc_.nactive, 6);
        for (int64_t a = 0; a < rc_.nactive; a++) nc2[rc_.active[a]]++;
    }
    X = chi2_stat(nc2, 20, R, 0.3, 1, &df);
    CHECK_MSG(X < chi2_crit(df), "circulant matching nodes: X = %.2f, crit %.2f", X, chi2_crit(df));

    dpdo__round_free(&r);
    dpdo__round_free(&rc_);
    dpdo_network_destroy(k20);
    dpdo_network_destroy(circ);
    dpdo_rng_destroy(rng);
}

/* ---- life cycle, borrowing, queries on bad input -------------------------- */

static void lifecycle_and_queries(void)
{
    CHECK_EQ(dpdo_network_create(NULL), DPDO_E_INVAL);
    dpdo_network_destroy(NULL);
    CHECK(dpdo_network_errmsg(NULL) != NULL);
    CHECK_EQ(dpdo_network_nodes(NULL), 0);
    CHECK_EQ(dpdo_network_edge_count(NULL), 0);
    CHECK_EQ(dpdo_network_max_degree(NULL), 0);
    CHECK_EQ(dpdo_network_degree(NULL, 0), -1);
    CHECK_EQ(dpdo_network_weight_rule(NULL), -1);
    CHECK_EQ(dpdo_network_gossip_path(NULL), -1);
    dpdo_network *net = mk();
    CHECK(strcmp(dpdo_network_errmsg(net), "") == 0);
    double v, buf[64];
    int64_t ib[64], cnt;
    /* empty network */
    CHECK_EQ(dpdo_network_gossip_path(net), -1);
    CHECK_EQ(dpdo_network_slem(net, &v), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_spectral_gap(net, &v), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_eigenvalues(net, buf, 64), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_get_weights(net, buf, 64), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_weights(net, 0, 0), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_network_errmsg(net), "empty");
    CHECK_EQ(dpdo_network_neighbors(net, 0, ib, 64, &cnt), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_get_edges(net, ib, 0), DPDO_OK);
    /* NULL handles */
    CHECK_EQ(dpdo_network_slem(NULL, &v), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_spectral_gap(NULL, &v), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_eigenvalues(NULL, buf, 64), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_get_weights(NULL, buf, 64), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_get_edges(NULL, ib, 64), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_neighbors(NULL, 0, ib, 64, &cnt), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_set_weights(NULL, 0, 0), DPDO_E_INVAL);
    /* filled network, bad arguments */
    CHECK_EQ(dpdo_network_set_ring(net, 6), DPDO_OK);
    CHECK_EQ(dpdo_network_degree(net, 6), -1);
    CHECK_EQ(dpdo_network_degree(net, -1), -1);
    CHECK_EQ(dpdo_network_slem(net, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_spectral_gap(net, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_eigenvalues(net, NULL, 6), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_eigenvalues(net, buf, 5), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_get_weights(net, NULL, 36), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_get_weights(net, buf, 35), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_get_edges(net, NULL, 12), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_get_edges(net, ib, 11), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_neighbors(net, 6, ib, 64, &cnt), DPDO_E_INVAL);
    CHECK_EQ(dpdo_network_neighbors(net, 0, NULL, 64, &cnt), DPDO_E_INVAL);
    cnt = -1;
    CHECK_EQ(dpdo_network_neighbors(net, 0, ib, 1, &cnt), DPDO_E_INVAL);
    CHECK_EQ(cnt, 2); /* the degree is reported even when cap is too small */
    CHECK_EQ(dpdo_network_neighbors(net, 0, ib, 2, NULL), DPDO_OK);
    CHECK(ib[0] == 1 && ib[1] == 5);
    /* borrowed: changes refused, destroy deferred */
    dpdo__network_retain(net);
    CHECK_EQ(dpdo_network_set_complete(net, 3), DPDO_E_STATE);
    CHECK_STR_CONTAINS(dpdo_network_errmsg(net), "borrowed");
    CHECK_EQ(dpdo_network_set_ring(net, 3), DPDO_E_STATE);
    CHECK_EQ(dpdo_network_set_circulant(net, 9, 2), DPDO_E_STATE);
    CHECK_EQ(dpdo_network_set_torus(net, 3, 3), DPDO_E_STATE);
    CHECK_EQ(dpdo_network_set_star(net, 3), DPDO_E_STATE);
    CHECK_EQ(dpdo_network_set_erdos_renyi(net, 9, 0.5, 1, 9), DPDO_E_STATE);
    CHECK_EQ(dpdo_network_set_edges(net, 2, ib, 0), DPDO_E_STATE);
    CHECK_EQ(dpdo_network_set_weights(net, 0, 0), DPDO_E_STATE);
    double w36[36] = {0};
    CHECK_EQ(dpdo_network_set_weight_matrix(net, 6, w36, 0), DPDO_E_STATE);
    CHECK_EQ(dpdo_network_set_gossip_mode(net, 1), DPDO_E_STATE);
    CHECK_EQ(dpdo_network_slem(net, &v), DPDO_OK); /* reading is fine */
    dpdo_network_destroy(net);                   /* deferred */
    CHECK_EQ(dpdo_network_nodes(net), 6);
    dpdo__network_release(net); /* frees (ASan checks) */
}

/* ---- out of memory: every constructor and filling call -------------------- */

typedef int (*fill_fn)(dpdo_network *net);
static int f_complete(dpdo_network *n) { return dpdo_network_set_complete(n, 12); }
static int f_ring(dpdo_network *n) { return dpdo_network_set_ring(n, 9); }
static int f_circ(dpdo_network *n) { return dpdo_network_set_circulant(n, 20, 3); }
static int f_torus(dpdo_network *n) { return dpdo_network_set_torus(n, 3, 5); }
static int f_star(dpdo_network *n) { return dpdo_network_set_star(n, 8); }
static int f_er(dpdo_network *n) { return dpdo_network_set_erdos_renyi(n, 30, 0.1, 4, 50); }
static int f_edges(dpdo_network *n)
{
    int64_t e[] = {0, 1, 1, 2, 2, 3, 0, 3, 1, 3};
    return dpdo_network_set_edges(n, 4, e, 5);
}
static int f_weights(dpdo_network *n) { return dpdo_network_set_weights(n, DPDO_WEIGHTS_LAPLACIAN, 0); }
static int f_wmat(dpdo_network *n)
{
    double w[25] = {0};
    for (int i = 0; i < 5; i++) w[i * 5 + i] = 0.5, w[i * 5 + (i + 1) % 5] = 0.25, w[i * 5 + (i + 4) % 5] = 0.25;
    return dpdo_network_set_weight_matrix(n, 5, w, 0);
}
static int f_dense(dpdo_network *n) { return dpdo_network_set_gossip_mode(n, DPDO_GOSSIP_DENSE); }
static int f_slem(dpdo_network *n)
{
    double v;
    return dpdo_network_slem(n, &v);
}
static int f_round(dpdo_network *n)
{
    dpdo_rng *rng = NULL;
    int rc = dpdo_rng_create(&rng, NULL, NULL, 1);
    if (rc) return rc;
    double w[25];
    rc = dpdo_network_round_matrix(n, rng, 3, DPDO_ROUND_MATCHING, 2, 0, NULL, w, 25);
    dpdo_rng_destroy(rng);
    return rc;
}

static void oom(void)
{
    /* create */
    for (long k = 0;; k++) {
        dpdo_network *net = (dpdo_network *)&net;
        dpdo__fault_arm(k);
        int rc = dpdo_network_create(&net);
        dpdo__fault_arm(-1);
        if (rc == DPDO_OK) {
            dpdo_network_destroy(net);
            break;
        }
        CHECK_EQ(rc, DPDO_E_NOMEM);
        CHECK(net == NULL);
    }
    /* each filling call, on a network that already holds a ring of 5 (for the
     * weight calls a ring of 5) : NOMEM leaves it intact */
    fill_fn fns[] = {f_complete, f_ring, f_circ, f_torus, f_star, f_er, f_edges, f_weights, f_wmat,
                     f_dense, f_slem, f_round};
    for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++) {
        int ok = 0;
        for (long k = 0; k < 200 && !ok; k++) {
            dpdo_network *net = mk();
            CHECK_EQ(dpdo_network_set_ring(net, 5), DPDO_OK);
            dpdo__fault_arm(k);
            int rc = fns[f](net);
            dpdo__fault_arm(-1);
            if (rc == DPDO_OK) {
                ok = 1;
            } else {
                CHECK_MSG(rc == DPDO_E_NOMEM, "fill %zu, k = %ld: rc %d (%s)", f, k, rc,
                          dpdo_network_errmsg(net));
                CHECK_EQ(dpdo_network_nodes(net), 5);
                CHECK_EQ(dpdo_network_edge_count(net), 5);
                CHECK_EQ(dpdo_network_weight_rule(net), DPDO_WEIGHTS_METROPOLIS);
                double x[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, y[10];
                CHECK_EQ(dpdo_network_gossip(net, x, y, 5, 2), DPDO_OK);
                CHECK_NEAR(y[0], (1 + 3 + 9) / 3.0, 1e-15);
            }
            dpdo_network_destroy(net);
        }
        CHECK_MSG(ok, "fill %zu never succeeded", f);
    }
    /* the internal round structure */
    dpdo_network *net = mk();
    CHECK_EQ(dpdo_network_set_complete(net, 10), DPDO_OK);
    for (long k = 0;; k++) {
        dpdo__round r;
        dpdo__fault_arm(k);
        int rc = dpdo__round_init(&r, net, -1);
        dpdo__fault_arm(-1);
        if (rc == DPDO_OK) {
            dpdo__round_free(&r);
            break;
        }
        CHECK_EQ(rc, DPDO_E_NOMEM);
        CHECK(r.active == NULL && r.wval == NULL);
    }
    dpdo_network_destroy(net);
}

/* hot paths allocate nothing */
static void no_alloc_in_round(void)
{
    dpdo_rng *rng = NULL;
    CHECK_EQ(dpdo_rng_create(&rng, NULL, NULL, 9), DPDO_OK);
    dpdo_network *net = mk();
    CHECK_EQ(dpdo_network_set_circulant(net, 40, 3), DPDO_OK);
    dpdo__round r;
    char err[DPDO__ERRMSG_LEN];
    CHECK_EQ(dpdo__round_init(&r, net, -1), DPDO_OK);
    double *x = calloc(40 * 8, sizeof(double)), *y = calloc(40 * 8, sizeof(double));
    dpdo__fault_arm(0);
    for (int s = DPDO_ROUND_ALL; s <= DPDO_ROUND_BERNOULLI; s++)
        for (int t = 0; t < 5; t++) {
            CHECK_EQ(dpdo__round_draw(&r, net, rng, (uint64_t)t, s, 6, 0.3, err), DPDO_OK);
            dpdo__round_gossip(&r, x, y, 8);
        }
    CHECK_EQ(dpdo_network_gossip(net, x, y, 40, 8), DPDO_OK);
    CHECK(!dpdo__fault_fired());
    dpdo__fault_arm(-1);
    free(x);
    free(y);
    dpdo__round_free(&r);
    dpdo_network_destroy(net);
    dpdo_rng_destroy(rng);
}

int main(void)
{
    RUN(topology_counts);
    RUN(weights_rules);
    RUN(spectral_ring);
    RUN(spectral_complete_star);
    RUN(spectral_circulant_torus);
    RUN(spectral_cache);
    RUN(erdos_renyi);
    RUN(topology_bad_input);
    RUN(weight_matrix_caller);
    RUN(gossip_vs_dense);
    RUN(round_spec_example);
    RUN(round_beta_enumeration);
    RUN(round_invariants);
    RUN(round_determinism);
    RUN(round_gossip);
    RUN(sampler_chi_square);
    RUN(lifecycle_and_queries);
    RUN(oom);
    RUN(no_alloc_in_round);
    return h_finish();
}
