/* SPDX-License-Identifier: BSD-3-Clause */
/* Message compressors (spec do-adp.md §2.6-2.8, oracles T-12, T-12b):
 * Top_k against a full comparison sort written here (|x| descending, index
 * ascending), on random, tied, zero, subnormal/huge and last-bit-different
 * inputs; the tie rule; exactly k pairs when x has fewer non-zeros; Lemma 7
 * ||S(x) - x||^2 <= (1 - k/d)||x||^2 with its equality case; S(S(x)) = S(x).
 * Rand_k and Bernoulli: the stream contract (same indices as
 * dpdo_rng_subset / u < k/d from dpdo_rng_uniform on stream (node, round,
 * COMPRESSION)), marginal inclusion probability k/d (per coordinate within
 * 4.5 SE and a chi-square), uniformity over all subsets, E C(x) = (k/d) x,
 * E||C(x) - x||^2 = (1 - k/d)||x||^2 (4 SE), Bernoulli count mean k and
 * pairwise independence. Determinism, ascending indices, identity, user
 * types (good, failing, invalid output), bad input for every public
 * function, out-of-memory at create, no allocation inside apply, and a
 * timing line for Top_k at d = 2000.
 *
 * Fixed seeds throughout; a 4-SE tolerance fails a correct implementation
 * with probability ~6e-5 per check for a random seed. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dpdo/dpdo.h"
#include "dpdo/compressor.h"
#include "dpdo/rng.h"
#include "core/core_impl.h"
#include "net/compress_impl.h"
#include "harness.h"

/* ---- helpers -------------------------------------------------------------- */

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}
static double urand(uint64_t *s) { return ((double)lcg(s) + 0.5) * 0x1.0p-53; }
static double nrand(uint64_t *s)
{
    return sqrt(-2.0 * log(urand(s))) * cos(6.283185307179586 * urand(s));
}

static dpdo_rng *mk_rng(uint64_t seed)
{
    dpdo_rng *r = NULL;
    CHECK_EQ(dpdo_rng_create(&r, NULL, NULL, seed), DPDO_OK);
    return r;
}

static dpdo_compressor *mk(const char *name, int64_t d, int64_t k)
{
    dpdo_compressor *c = NULL;
    CHECK_EQ(dpdo_compressor_create(&c, dpdo_compressor_type_find(name), NULL, d), DPDO_OK);
    if (c && k != d) CHECK_EQ(dpdo_compressor_set_k(c, k), DPDO_OK);
    return c;
}

/* Reference Top_k: full comparison sort of the indices by (|x| desc, index asc). */
static const double *g_ref_x;
static int cmp_ref(const void *a, const void *b)
{
    int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
    double u = fabs(g_ref_x[i]), v = fabs(g_ref_x[j]);
    if (u != v) return u > v ? -1 : 1;
    return (i > j) - (i < j);
}
static int cmp_i64(const void *a, const void *b)
{
    int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
    return (i > j) - (i < j);
}
/* sel[k] = the reference Top_k indices, ascending. */
static void ref_topk(const double *x, int64_t d, int64_t k, int64_t *sel)
{
    int64_t *ord = malloc((size_t)d * sizeof *ord);
    for (int64_t l = 0; l < d; l++) ord[l] = l;
    g_ref_x = x;
    qsort(ord, (size_t)d, sizeof *ord, cmp_ref);
    memcpy(sel, ord, (size_t)k * sizeof *sel);
    qsort(sel, (size_t)k, sizeof *sel, cmp_i64);
    free(ord);
}

static int ascending(const int64_t *idx, int64_t n, int64_t d)
{
    for (int64_t j = 0; j < n; j++) {
        if (idx[j] < 0 || idx[j] >= d) return 0;
        if (j > 0 && idx[j] <= idx[j - 1]) return 0;
    }
    return 1;
}

/* ||C(x) - x||^2 for a sparse C(x). */
static double resid2(const double *x, int64_t d, const int64_t *idx, const double *val, int64_t n)
{
    double s = 0.0;
    int64_t j = 0;
    for (int64_t l = 0; l < d; l++) {
        double c = 0.0;
        if (j < n && idx[j] == l) c = val[j++];
        s += (c - x[l]) * (c - x[l]);
    }
    return s;
}
static double norm2(const double *x, int64_t d)
{
    double s = 0.0;
    for (int64_t l = 0; l < d; l++) s += x[l] * x[l];
    return s;
}

/* Fill x[d] with one of several families. */
static void fill(double *x, int64_t d, int family, uint64_t *s)
{
    for (int64_t l = 0; l < d; l++) {
        switch (family) {
        case 0: x[l] = nrand(s); break;                                   /* Gaussian */
        case 1: x[l] = (double)((int64_t)(lcg(s) % 7) - 3); break;        /* many ties, zeros */
        case 2: x[l] = (lcg(s) & 1) ? 1.5 : -1.5; break;                  /* equal magnitudes */
        case 3: x[l] = (lcg(s) % 4 == 0) ? nrand(s) : 0.0; break;         /* sparse */
        case 4: {                                                         /* wide exponents */
            int e = (int)(lcg(s) % 2100) - 1074;
            x[l] = ldexp((lcg(s) & 1) ? 1.0 : -1.0, e) * (1.0 + urand(s));
            if (!isfinite(x[l])) x[l] = 1e300;
            break;
        }
        case 5: x[l] = (lcg(s) & 1 ? 1.0 : -1.0) * (double)(lcg(s) % 4) * 4.9406564584124654e-324;
            break;                                                        /* subnormal ties */
        default: {                                           /* last-bit differences */
            double v = 1.0;
            for (uint64_t t = lcg(s) % 12; t > 0; t--) v = nextafter(v, 2.0);
            x[l] = (lcg(s) & 1) ? v : -v;
            break;
        }
        }
    }
    if (family == 3 && d > 2) x[1] = -0.0; /* a negative zero */
}

/* ---- types ---------------------------------------------------------------- */

static void types_lookup(void)
{
    const char *names[] = {"identity", "top-k", "rand-k", "bernoulli"};
    int i = 0;
    for (const dpdo_compressor_type *t = dpdo_compressor_type_next(NULL); t;
         t = dpdo_compressor_type_next(t), i++) {
        CHECK(i < 4);
        if (i >= 4) break;
        CHECK(strcmp(dpdo_compressor_type_name(t), names[i]) == 0);
        CHECK(dpdo_compressor_type_find(names[i]) == t);
    }
    CHECK_EQ(i, 4);
    CHECK(dpdo_compressor_type_find("topk") == NULL);
    CHECK(dpdo_compressor_type_find(NULL) == NULL);
    CHECK(strcmp(dpdo_compressor_type_name(NULL), "(null)") == 0);
    dpdo_compressor *c = mk("top-k", 10, 3);
    CHECK(strcmp(dpdo_compressor_name(c), "top-k") == 0);
    CHECK_EQ(dpdo_compressor_dim(c), 10);
    CHECK_EQ(dpdo_compressor_k(c), 3);
    CHECK_EQ(dpdo_compressor_capacity(c), 3);
    CHECK(strcmp(dpdo_compressor_errmsg(c), "") == 0);
    dpdo_compressor_destroy(c);
    /* defaults: k = dim; capacities */
    const int64_t cap3[4] = {10, 3, 3, 10};
    for (i = 0; i < 4; i++) {
        c = mk(names[i], 10, 10);
        CHECK_EQ(dpdo_compressor_k(c), 10);
        CHECK_EQ(dpdo_compressor_capacity(c), 10);
        if (i > 0) {
            CHECK_EQ(dpdo_compressor_set_k(c, 3), DPDO_OK);
            CHECK_EQ(dpdo_compressor_capacity(c), cap3[i]);
        }
        CHECK_EQ(dpdo_compressor_is_deterministic(c), i < 2);
        dpdo_compressor_destroy(c);
    }
}

/* ---- Top_k ------------------------------------------------------------------ */

static void topk_vs_sort(void)
{
    uint64_t s = 77;
    const int64_t dims[] = {1, 2, 3, 7, 50, 257, 1000, 2000};
    int reps = h_quick() ? 3 : 12;
    for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++) {
        int64_t d = dims[di];
        double *x = malloc((size_t)d * sizeof *x), *val = malloc((size_t)d * sizeof *val);
        int64_t *idx = malloc((size_t)d * sizeof *idx), *ref = malloc((size_t)d * sizeof *ref);
        dpdo_compressor *c = mk("top-k", d, d);
        for (int fam = 0; fam <= 6; fam++) {
            for (int r = 0; r < reps; r++) {
                fill(x, d, fam, &s);
                int64_t ks[4] = {1, d / 3 + 1, d - 1 > 0 ? d - 1 : 1, d};
                for (int ki = 0; ki < 4; ki++) {
                    int64_t k = ks[ki] > d ? d : ks[ki];
                    CHECK_EQ(dpdo_compressor_set_k(c, k), DPDO_OK);
                    int64_t cnt = -1;
                    int rc = dpdo_compressor_apply(c, x, d, NULL, 0, 0, idx, val, d, &cnt);
                    CHECK_EQ(rc, DPDO_OK);
                    CHECK_EQ(cnt, k);
                    ref_topk(x, d, k, ref);
                    int same = cnt == k && memcmp(idx, ref, (size_t)k * sizeof *idx) == 0;
                    CHECK_MSG(same, "d %lld family %d k %lld rep %d: selection differs from sort",
                              (long long)d, fam, (long long)k, r);
                    int vals = 1;
                    for (int64_t j = 0; j < cnt; j++)
                        if (memcmp(&val[j], &x[idx[j]], sizeof(double)) != 0) vals = 0;
                    CHECK_MSG(vals, "values are not the input values (no scaling)");
                    CHECK(ascending(idx, cnt, d));
                    /* every unselected |x_l| <= every selected |x_m| */
                    double minsel = INFINITY;
                    for (int64_t j = 0; j < cnt; j++) minsel = fmin(minsel, fabs(val[j]));
                    int64_t j = 0;
                    int dom = 1;
                    for (int64_t l = 0; l < d; l++) {
                        if (j < cnt && idx[j] == l) { j++; continue; }
                        if (fabs(x[l]) > minsel) dom = 0;
                    }
                    CHECK(dom);
                }
                if (h_case_failed > 5) break;
            }
        }
        dpdo_compressor_destroy(c);
        free(x); free(val); free(idx); free(ref);
    }
}

/* Long vectors (the vector and sampled paths of the selection, d >= 1024) against the sort:
 * mixtures of scales (like DO-ADP's residuals: many coordinates just synchronised, the rest
 * grown), uniforms (few exponents: the k-th key lies inside one exponent), Gaussians, and k at
 * several quantiles, many seeds. */
static void topk_long_vs_sort(void)
{
    uint64_t s = 4242;
    const int64_t dims[] = {1024, 2000, 4099};
    int reps = h_quick() ? 4 : 16;
    for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++) {
        int64_t d = dims[di];
        double *x = malloc((size_t)d * sizeof *x), *val = malloc((size_t)d * sizeof *val);
        int64_t *idx = malloc((size_t)d * sizeof *idx), *ref = malloc((size_t)d * sizeof *ref);
        dpdo_compressor *c = mk("top-k", d, d);
        for (int fam = 0; fam < 5; fam++)
            for (int r = 0; r < reps; r++) {
                for (int64_t l = 0; l < d; l++) {
                    double g = nrand(&s);
                    x[l] = fam == 0 ? (lcg(&s) % 10 < 7 ? 1e-6 : 1.0) * g
                         : fam == 1 ? urand(&s) - 0.5
                         : fam == 2 ? g
                         : fam == 3 ? (lcg(&s) % 10 < 3 ? 1e-9 : 1.0) * (1.0 + 0.01 * urand(&s))
                                    : 0.5 + urand(&s); /* the median near 1: keys 0x3fe.. | 0x3ff.. */
                }
                const double qs[5] = {0.01, 0.1, 0.3, 0.5, 0.9};
                for (int qi = 0; qi < 5; qi++) {
                    int64_t k = (int64_t)(qs[qi] * (double)d) + (int64_t)(lcg(&s) % 7);
                    CHECK_EQ(dpdo_compressor_set_k(c, k), DPDO_OK);
                    int64_t cnt = -1;
                    CHECK_EQ(dpdo_compressor_apply(c, x, d, NULL, 0, 0, idx, val, d, &cnt), DPDO_OK);
                    ref_topk(x, d, k, ref);
                    CHECK_MSG(cnt == k && memcmp(idx, ref, (size_t)k * sizeof *idx) == 0,
                              "d %lld family %d k %lld rep %d: selection differs from sort",
                              (long long)d, fam, (long long)k, r);
                }
                if (h_case_failed > 5) break;
            }
        dpdo_compressor_destroy(c);
        free(x), free(val), free(idx), free(ref);
    }
}

static void topk_ties(void)
{
    const double x[6] = {1.0, -1.0, 1.0, 2.0, -2.0, 0.0};
    const int64_t want[5][5] = {{3}, {3, 4}, {0, 3, 4}, {0, 1, 3, 4}, {0, 1, 2, 3, 4}};
    dpdo_compressor *c = mk("top-k", 6, 6);
    for (int64_t k = 1; k <= 5; k++) {
        int64_t idx[6], cnt;
        double val[6];
        CHECK_EQ(dpdo_compressor_set_k(c, k), DPDO_OK);
        CHECK_EQ(dpdo_compressor_apply(c, x, 6, NULL, 0, 0, idx, val, 6, &cnt), DPDO_OK);
        CHECK_EQ(cnt, k);
        for (int64_t j = 0; j < k; j++) CHECK_EQ(idx[j], want[k - 1][j]);
    }
    dpdo_compressor_destroy(c);
    /* -3 and 3 tie in magnitude: the lower index wins, the value keeps its sign */
    const double y[4] = {0.5, -3.0, 3.0, 0.25};
    int64_t idx[4], cnt;
    double val[4];
    c = mk("top-k", 4, 1);
    CHECK_EQ(dpdo_compressor_apply(c, y, 4, NULL, 0, 0, idx, val, 1, &cnt), DPDO_OK);
    CHECK_EQ(cnt, 1);
    CHECK_EQ(idx[0], 1);
    CHECK(val[0] == -3.0);
    dpdo_compressor_destroy(c);
}

static void topk_few_nonzeros(void)
{
    double x[10] = {0};
    x[7] = -2.0;
    x[3] = 0.5;
    dpdo_compressor *c = mk("top-k", 10, 5);
    int64_t idx[5], cnt;
    double val[5];
    CHECK_EQ(dpdo_compressor_apply(c, x, 10, NULL, 0, 0, idx, val, 5, &cnt), DPDO_OK);
    CHECK_EQ(cnt, 5); /* accounting stays k per message */
    const int64_t want[5] = {0, 1, 2, 3, 7};
    for (int j = 0; j < 5; j++) CHECK_EQ(idx[j], want[j]);
    CHECK(val[3] == 0.5 && val[4] == -2.0 && val[0] == 0.0);
    /* all zeros */
    memset(x, 0, sizeof x);
    CHECK_EQ(dpdo_compressor_apply(c, x, 10, NULL, 0, 0, idx, val, 5, &cnt), DPDO_OK);
    CHECK_EQ(cnt, 5);
    for (int j = 0; j < 5; j++) CHECK_EQ(idx[j], j);
    dpdo_compressor_destroy(c);
}

static void topk_contraction(void)
{
    uint64_t s = 2024;
    int reps = h_quick() ? 200 : 2000;
    int64_t worst_ok = 1;
    for (int r = 0; r < reps; r++) {
        int64_t d = 1 + (int64_t)(lcg(&s) % 300), k = 1 + (int64_t)(lcg(&s) % (uint64_t)d);
        double x[300], val[300], full[300];
        int64_t idx[300], cnt;
        fill(x, d, r % 7, &s);
        if (!isfinite(norm2(x, d))) /* squares overflow: scale down (any vector will do) */
            for (int64_t l = 0; l < d; l++) x[l] = ldexp(x[l], -600);
        dpdo_compressor *c = mk("top-k", d, k);
        CHECK_EQ(dpdo_compressor_apply(c, x, d, NULL, 0, 0, idx, val, k, &cnt), DPDO_OK);
        double lhs = resid2(x, d, idx, val, cnt), rhs = (1.0 - (double)k / (double)d) * norm2(x, d);
        if (!(lhs <= rhs * (1.0 + 1e-12) + 1e-300)) {
            if (worst_ok)
                printf("# Lemma 7: rep %d family %d d %lld k %lld: %.17g > %.17g\n", r, r % 7,
                       (long long)d, (long long)k, lhs, rhs);
            worst_ok = 0;
        }
        /* S(S(x)) = S(x) */
        memset(full, 0, sizeof full);
        for (int64_t j = 0; j < cnt; j++) full[idx[j]] = val[j];
        int64_t idx2[300], cnt2;
        double val2[300];
        CHECK_EQ(dpdo_compressor_apply(c, full, d, NULL, 0, 0, idx2, val2, k, &cnt2), DPDO_OK);
        double r2 = resid2(full, d, idx2, val2, cnt2);
        CHECK(r2 == 0.0);
        dpdo_compressor_destroy(c);
    }
    CHECK_MSG(worst_ok, "Lemma 7 violated on some vector");
    /* equality case: equal magnitudes give exactly (1 - k/d)||x||^2 */
    double x[12], val[12];
    int64_t idx[12], cnt;
    for (int l = 0; l < 12; l++) x[l] = (l % 3) ? 0.75 : -0.75;
    for (int64_t k = 1; k <= 12; k++) {
        dpdo_compressor *c = mk("top-k", 12, k);
        CHECK_EQ(dpdo_compressor_apply(c, x, 12, NULL, 0, 0, idx, val, k, &cnt), DPDO_OK);
        CHECK_NEAR(resid2(x, 12, idx, val, cnt), (1.0 - k / 12.0) * norm2(x, 12), 1e-15);
        for (int64_t j = 0; j < k; j++) CHECK_EQ(idx[j], j); /* all tied: the first k */
        double delta = -1;
        CHECK_EQ(dpdo_compressor_contraction(c, &delta), DPDO_OK);
        CHECK(delta == (double)k / 12.0);
        dpdo_compressor_destroy(c);
    }
}

/* k = d is the identity; identity type output */
static void identity_and_full(void)
{
    uint64_t s = 5;
    double x[33], val[33];
    int64_t idx[33], cnt;
    fill(x, 33, 0, &s);
    const char *names[] = {"identity", "top-k", "rand-k", "bernoulli"};
    dpdo_rng *rng = mk_rng(9);
    for (int i = 0; i < 4; i++) {
        dpdo_compressor *c = mk(names[i], 33, 33);
        CHECK_EQ(dpdo_compressor_apply(c, x, 33, rng, 4, 8, idx, val, 33, &cnt), DPDO_OK);
        CHECK_EQ(cnt, 33);
        for (int l = 0; l < 33; l++) CHECK(idx[l] == l && val[l] == x[l]);
        double delta = 0;
        CHECK_EQ(dpdo_compressor_contraction(c, &delta), DPDO_OK);
        CHECK(delta == 1.0);
        dpdo_compressor_destroy(c);
    }
    dpdo_compressor *c = mk("identity", 33, 33);
    CHECK_EQ(dpdo_compressor_set_k(c, 32), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_compressor_errmsg(c), "identity");
    CHECK_EQ(dpdo_compressor_k(c), 33);
    CHECK_EQ(dpdo_compressor_set_k(c, 33), DPDO_OK);
    /* rng ignored by the deterministic types: NULL works */
    CHECK_EQ(dpdo_compressor_apply(c, x, 33, NULL, 0, 0, idx, val, 33, &cnt), DPDO_OK);
    dpdo_compressor_destroy(c);
    dpdo_rng_destroy(rng);
}

/* ---- Rand_k and Bernoulli ---------------------------------------------------- */

static void randk_stream_contract(void)
{
    dpdo_rng *rng = mk_rng(31);
    uint64_t s = 8;
    const int64_t d = 97, k = 13;
    double x[97], val[97];
    int64_t idx[97], ref[97], cnt;
    fill(x, d, 0, &s);
    dpdo_compressor *c = mk("rand-k", d, k);
    for (uint64_t round = 0; round < 50; round++) {
        uint64_t node = round % 7;
        CHECK_EQ(dpdo_compressor_apply(c, x, d, rng, node, round, idx, val, k, &cnt), DPDO_OK);
        CHECK_EQ(cnt, k);
        CHECK(ascending(idx, cnt, d));
        CHECK_EQ(dpdo_rng_subset(rng, node, round, DPDO_PURPOSE_COMPRESSION, d, k, ref), DPDO_OK);
        CHECK(memcmp(idx, ref, (size_t)k * sizeof *idx) == 0);
        for (int64_t j = 0; j < k; j++) CHECK(val[j] == x[idx[j]]);
    }
    dpdo_compressor_destroy(c);
    /* bernoulli: kept exactly where u_l < k/d, u the stream's uniforms from offset 0 */
    c = mk("bernoulli", d, k);
    double u[97];
    for (uint64_t round = 0; round < 50; round++) {
        CHECK_EQ(dpdo_compressor_apply(c, x, d, rng, 3, round, idx, val, d, &cnt), DPDO_OK);
        CHECK(ascending(idx, cnt, d));
        CHECK_EQ(dpdo_rng_uniform(rng, 3, round, DPDO_PURPOSE_COMPRESSION, 0, u, d), DPDO_OK);
        int64_t j = 0;
        int ok = 1;
        for (int64_t l = 0; l < d; l++) {
            if (u[l] < (double)k / (double)d) {
                if (j >= cnt || idx[j] != l || val[j] != x[l]) ok = 0;
                j++;
            }
        }
        CHECK(ok && j == cnt);
    }
    dpdo_compressor_destroy(c);
    dpdo_rng_destroy(rng);
}

/* Monte-Carlo: inclusion probabilities, chi-square, E C(x), E||C(x)-x||^2. */
static void sparsifier_stats(const char *name)
{
    const int64_t d = 20, k = 6;
    const double p = (double)k / (double)d;
    const int64_t N = h_quick() ? 20000 : 100000;
    dpdo_rng *rng = mk_rng(4242);
    dpdo_compressor *c = mk(name, d, k);
    uint64_t s = 99;
    double x[20], val[20], sumc[20] = {0};
    int64_t idx[20], cnt, incl[20] = {0}, pair01 = 0, pair5_17 = 0;
    fill(x, d, 0, &s);
    x[4] = 0.0;
    const double nx = norm2(x, d);
    double sr = 0, sr2 = 0, scnt = 0;
    for (int64_t t = 0; t < N; t++) {
        CHECK_EQ(dpdo_compressor_apply(c, x, d, rng, 1, (uint64_t)t, idx, val, d, &cnt), DPDO_OK);
        int in[20] = {0};
        for (int64_t j = 0; j < cnt; j++) {
            in[idx[j]] = 1;
            incl[idx[j]]++;
            sumc[idx[j]] += val[j];
        }
        pair01 += in[0] && in[1];
        pair5_17 += in[5] && in[17];
        double r = resid2(x, d, idx, val, cnt) / nx;
        sr += r;
        sr2 += r * r;
        scnt += (double)cnt;
    }
    double se1 = sqrt((double)N * p * (1 - p)), chi = 0;
    for (int l = 0; l < 20; l++) {
        double dev = (double)incl[l] - (double)N * p;
        CHECK_MSG(fabs(dev) <= 4.5 * se1, "%s: coordinate %d kept %lld times, expected %.0f +- %.0f",
                  name, l, (long long)incl[l], N * p, se1);
        chi += dev * dev / (se1 * se1);
        /* E C(x)_l = p x_l: mean of the kept values, 4.5 SE */
        double mean = sumc[l] / (double)N, se = fabs(x[l]) * sqrt(p * (1 - p) / (double)N);
        CHECK_MSG(fabs(mean - p * x[l]) <= 4.5 * se + 1e-15, "%s: E C(x)_%d = %g vs %g", name, l,
                  mean, p * x[l]);
    }
    /* rand-k: counts sum to N k, so ~ chi2(d - 1); bernoulli ~ chi2(d) */
    double dof = strcmp(name, "rand-k") == 0 ? 19.0 : 20.0;
    CHECK_MSG(chi <= dof + 4.0 * sqrt(2.0 * dof), "%s: chi-square %g with %g dof", name, chi, dof);
    /* E||C(x)-x||^2 / ||x||^2 = 1 - k/d */
    double mr = sr / (double)N, sdr = sqrt((sr2 / (double)N - mr * mr) / (double)N);
    CHECK_MSG(fabs(mr - (1 - p)) <= 4.0 * sdr, "%s: contraction %g vs %g (SE %g)", name, mr, 1 - p,
              sdr);
    /* pairs: rand-k P = k(k-1)/(d(d-1)), bernoulli p^2 (independence) */
    double pp = strcmp(name, "rand-k") == 0 ? (double)(k * (k - 1)) / (double)(d * (d - 1)) : p * p;
    double sep = sqrt((double)N * pp * (1 - pp));
    CHECK_MSG(fabs((double)pair01 - N * pp) <= 4.5 * sep, "%s: pair (0,1) %lld vs %g", name,
              (long long)pair01, N * pp);
    CHECK_MSG(fabs((double)pair5_17 - N * pp) <= 4.5 * sep, "%s: pair (5,17) %lld vs %g", name,
              (long long)pair5_17, N * pp);
    /* count: rand-k exactly k (checked per call in the contract test); bernoulli mean k */
    double mc = scnt / (double)N;
    if (strcmp(name, "bernoulli") == 0) {
        double sec = sqrt((double)d * p * (1 - p) / (double)N);
        CHECK_MSG(fabs(mc - (double)k) <= 4.0 * sec, "bernoulli mean count %g vs %lld", mc,
                  (long long)k);
    } else {
        CHECK(mc == (double)k);
    }
    double delta = 0;
    CHECK_EQ(dpdo_compressor_contraction(c, &delta), DPDO_OK);
    CHECK_REL(delta, p, 1e-15);
    dpdo_compressor_destroy(c);
    dpdo_rng_destroy(rng);
}
static void randk_stats(void) { sparsifier_stats("rand-k"); }
static void bernoulli_stats(void) { sparsifier_stats("bernoulli"); }

/* Rand_k is uniform over all C(5,2) = 10 subsets: chi-square with 9 dof. */
static void randk_subset_uniform(void)
{
    const int64_t N = h_quick() ? 20000 : 100000;
    dpdo_rng *rng = mk_rng(7);
    dpdo_compressor *c = mk("rand-k", 5, 2);
    double x[5] = {1, 2, 3, 4, 5}, val[2];
    int64_t idx[2], cnt, freq[25] = {0};
    for (int64_t t = 0; t < N; t++) {
        CHECK_EQ(dpdo_compressor_apply(c, x, 5, rng, 0, (uint64_t)t, idx, val, 2, &cnt), DPDO_OK);
        freq[idx[0] * 5 + idx[1]]++;
    }
    double e = (double)N / 10.0, chi = 0;
    int nonempty = 0;
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++) {
            if (a < b) {
                chi += ((double)freq[a * 5 + b] - e) * ((double)freq[a * 5 + b] - e) / e;
                nonempty++;
            } else {
                CHECK_EQ(freq[a * 5 + b], 0);
            }
        }
    CHECK_EQ(nonempty, 10);
    CHECK_MSG(chi <= 9.0 + 4.0 * sqrt(18.0), "subset chi-square %g (9 dof)", chi);
    dpdo_compressor_destroy(c);
    dpdo_rng_destroy(rng);
}

static void determinism(void)
{
    const char *names[] = {"identity", "top-k", "rand-k", "bernoulli"};
    uint64_t s = 1;
    double x[300];
    fill(x, 300, 0, &s);
    for (int i = 0; i < 4; i++) {
        int64_t idx[2][300], cnt[2];
        double val[2][300];
        for (int rep = 0; rep < 2; rep++) {
            dpdo_rng *rng = mk_rng(555); /* a fresh generator, same seed */
            dpdo_compressor *c = mk(names[i], 300, i == 0 ? 300 : 90);
            memset(idx[rep], 0, sizeof idx[rep]);
            memset(val[rep], 0, sizeof val[rep]);
            CHECK_EQ(dpdo_compressor_apply(c, x, 300, rng, 11, 12, idx[rep], val[rep], 300,
                                           &cnt[rep]), DPDO_OK);
            dpdo_compressor_destroy(c);
            dpdo_rng_destroy(rng);
        }
        CHECK_EQ(cnt[0], cnt[1]);
        CHECK(memcmp(idx[0], idx[1], sizeof idx[0]) == 0);
        CHECK(memcmp(val[0], val[1], sizeof val[0]) == 0);
    }
    /* different rounds / nodes / seeds give different random subsets */
    dpdo_rng *r1 = mk_rng(1), *r2 = mk_rng(2);
    dpdo_compressor *c = mk("rand-k", 300, 30);
    int64_t a[30], b[30], cc[30], dd[30], cnt;
    double v[30];
    CHECK_EQ(dpdo_compressor_apply(c, x, 300, r1, 0, 0, a, v, 30, &cnt), DPDO_OK);
    CHECK_EQ(dpdo_compressor_apply(c, x, 300, r1, 0, 1, b, v, 30, &cnt), DPDO_OK);
    CHECK_EQ(dpdo_compressor_apply(c, x, 300, r1, 1, 0, cc, v, 30, &cnt), DPDO_OK);
    CHECK_EQ(dpdo_compressor_apply(c, x, 300, r2, 0, 0, dd, v, 30, &cnt), DPDO_OK);
    CHECK(memcmp(a, b, sizeof a) != 0);
    CHECK(memcmp(a, cc, sizeof a) != 0);
    CHECK(memcmp(a, dd, sizeof a) != 0);
    /* the selection does not depend on x (drawn independently of the data) */
    double y[300];
    fill(y, 300, 4, &s);
    CHECK_EQ(dpdo_compressor_apply(c, y, 300, r1, 0, 0, b, v, 30, &cnt), DPDO_OK);
    CHECK(memcmp(a, b, sizeof a) == 0);
    dpdo_compressor_destroy(c);
    dpdo_rng_destroy(r1);
    dpdo_rng_destroy(r2);
}

/* A custom rng type whose callback fails: rand-k / bernoulli report it. */
static int bad_blocks(void *user, const uint32_t key[4], const uint32_t ctr[4], uint64_t nb,
                      uint32_t *out)
{
    (void)user; (void)key; (void)ctr;
    memset(out, 0, (size_t)nb * 16);
    return 9;
}

static void rng_failure(void)
{
    dpdo_rng_type bt = {sizeof bt, "bad", bad_blocks, NULL};
    dpdo_rng *rng = NULL;
    CHECK_EQ(dpdo_rng_create_custom(&rng, &bt, NULL, 1), DPDO_OK);
    const char *names[] = {"rand-k", "bernoulli"};
    double x[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, val[10];
    int64_t idx[10], cnt = 5;
    for (int i = 0; i < 2; i++) {
        dpdo_compressor *c = mk(names[i], 10, 3);
        CHECK_EQ(dpdo_compressor_apply(c, x, 10, rng, 0, 0, idx, val, 10, &cnt), DPDO_E_CALLBACK);
        CHECK_EQ(cnt, 0);
        CHECK_STR_CONTAINS(dpdo_compressor_errmsg(c), "9");
        dpdo_compressor_destroy(c);
    }
    dpdo_rng_destroy(rng);
}

/* ---- user types ------------------------------------------------------------- */

struct ucomp {
    int mode;     /* 0 ok (keep every coordinate with index = round mod 2), 1 fail(7), 2..6 bad output */
    int released;
    int calls;
    int contraction_mode; /* 0: delta 0, 1: returns 5, 2: NaN, 3: 1.5 */
};

static int u_compress(void *user, const double *x, int64_t dim, int64_t k, const dpdo_rng *rng,
                      uint64_t node_id, uint64_t round, int64_t *idx, double *val, int64_t cap,
                      int64_t *count)
{
    struct ucomp *u = user;
    (void)k; (void)rng; (void)node_id;
    u->calls++;
    if (u->mode == 1) return 7;
    int64_t m = 0;
    for (int64_t l = (int64_t)(round % 2); l < dim && m < cap; l += 2) {
        idx[m] = l;
        val[m] = x[l];
        m++;
    }
    switch (u->mode) {
    case 2: if (m >= 2) { int64_t t = idx[0]; idx[0] = idx[1]; idx[1] = t; } break;
    case 3: idx[m - 1] = dim; break;
    case 4: m = cap + 1; break;
    case 5: val[0] = NAN; break;
    case 6: m = -1; break;
    default: break;
    }
    *count = m;
    return 0;
}
static int u_contraction(void *user, int64_t dim, int64_t k, double *delta)
{
    struct ucomp *u = user;
    (void)dim; (void)k;
    switch (u->contraction_mode) {
    case 1: return 5;
    case 2: *delta = NAN; return 0;
    case 3: *delta = 1.5; return 0;
    default: *delta = 0.0; return 0;
    }
}
static void u_release(void *user) { ((struct ucomp *)user)->released++; }

/* A user Rand_k through the public rng API (const cast, as documented). */
static int u_randk(void *user, const double *x, int64_t dim, int64_t k, const dpdo_rng *rng,
                   uint64_t node_id, uint64_t round, int64_t *idx, double *val, int64_t cap,
                   int64_t *count)
{
    (void)user; (void)cap;
    int rc = dpdo_rng_subset(rng, node_id, round, DPDO_PURPOSE_COMPRESSION, dim, k, idx);
    if (rc) return 100 - rc;
    for (int64_t j = 0; j < k; j++) val[j] = x[idx[j]];
    *count = k;
    return 0;
}

static void user_types(void)
{
    struct ucomp u = {0, 0, 0, 0};
    dpdo_compressor_type ut = {sizeof ut, "every-other", u_compress, u_contraction, u_release};
    dpdo_compressor *c = NULL;
    CHECK_EQ(dpdo_compressor_create(&c, &ut, &u, 9), DPDO_OK);
    CHECK(strcmp(dpdo_compressor_name(c), "every-other") == 0);
    CHECK(dpdo_compressor_type_next(&ut) == NULL);
    CHECK_EQ(dpdo_compressor_capacity(c), 9);
    CHECK_EQ(dpdo_compressor_is_deterministic(c), 0);
    CHECK_EQ(dpdo_compressor_set_k(c, 4), DPDO_OK);
    CHECK_EQ(dpdo_compressor_capacity(c), 9);
    double x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, val[9];
    int64_t idx[9], cnt;
    CHECK_EQ(dpdo_compressor_apply(c, x, 9, NULL, 0, 3, idx, val, 9, &cnt), DPDO_OK);
    CHECK_EQ(cnt, 4);
    for (int j = 0; j < 4; j++) CHECK(idx[j] == 2 * j + 1 && val[j] == x[2 * j + 1]);
    double delta = -1;
    CHECK_EQ(dpdo_compressor_contraction(c, &delta), DPDO_OK);
    CHECK(delta == 0.0);
    /* failing and invalid outputs */
    const char *frag[7] = {"", "returned 7", "ascending", "outside [0, 9)", "count = 10",
                           "non-finite", "count = -1"};
    for (int mode = 1; mode <= 6; mode++) {
        u.mode = mode;
        cnt = 3;
        CHECK_EQ(dpdo_compressor_apply(c, x, 9, NULL, 0, 0, idx, val, 9, &cnt), DPDO_E_CALLBACK);
        CHECK_EQ(cnt, 0);
        CHECK_STR_CONTAINS(dpdo_compressor_errmsg(c), frag[mode]);
        CHECK_STR_CONTAINS(dpdo_compressor_errmsg(c), "every-other");
        char err[DPDO__ERRMSG_LEN];
        CHECK_EQ(dpdo__compressor_apply(c, x, NULL, 0, 0, idx, val, &cnt, err), DPDO_E_CALLBACK);
        CHECK_STR_CONTAINS(err, frag[mode]);
    }
    u.mode = 0;
    /* contraction failures */
    const int crc[4] = {DPDO_OK, DPDO_E_CALLBACK, DPDO_E_NUMERIC, DPDO_E_NUMERIC};
    for (int m = 1; m <= 3; m++) {
        u.contraction_mode = m;
        delta = 0.25;
        CHECK_EQ(dpdo_compressor_contraction(c, &delta), crc[m]);
        CHECK(delta == 0.25);
    }
    CHECK_STR_CONTAINS(dpdo_compressor_errmsg(c), "1.5");
    CHECK_EQ(u.released, 0);
    dpdo_compressor_destroy(c);
    CHECK_EQ(u.released, 1);

    /* without a contraction callback, and with the struct_size stopping before it */
    dpdo_compressor_type nt = {offsetof(dpdo_compressor_type, contraction), "short", u_compress,
                               u_contraction, u_release};
    struct ucomp u2 = {0, 0, 0, 0};
    CHECK_EQ(dpdo_compressor_create(&c, &nt, &u2, 4), DPDO_OK);
    CHECK_EQ(dpdo_compressor_contraction(c, &delta), DPDO_E_UNSUPPORTED);
    dpdo_compressor_destroy(c);
    CHECK_EQ(u2.released, 0); /* release is beyond struct_size: never read */

    /* a user Rand_k through the public API equals the built-in */
    dpdo_compressor_type rt = {sizeof rt, "my-rand-k", u_randk, NULL, NULL};
    dpdo_compressor *c1 = NULL, *c2 = mk("rand-k", 50, 7);
    CHECK_EQ(dpdo_compressor_create(&c1, &rt, NULL, 50), DPDO_OK);
    CHECK_EQ(dpdo_compressor_set_k(c1, 7), DPDO_OK);
    dpdo_rng *rng = mk_rng(3);
    uint64_t s = 3;
    double y[50], v1[50], v2[50];
    int64_t i1[50], i2[50], n1, n2;
    fill(y, 50, 0, &s);
    for (uint64_t t = 0; t < 20; t++) {
        CHECK_EQ(dpdo_compressor_apply(c1, y, 50, rng, 2, t, i1, v1, 50, &n1), DPDO_OK);
        CHECK_EQ(dpdo_compressor_apply(c2, y, 50, rng, 2, t, i2, v2, 7, &n2), DPDO_OK);
        CHECK(n1 == 7 && n2 == 7);
        CHECK(memcmp(i1, i2, 7 * sizeof *i1) == 0 && memcmp(v1, v2, 7 * sizeof *v1) == 0);
    }
    /* the callback's rng failure (rng NULL) comes back as its code */
    CHECK_EQ(dpdo_compressor_apply(c1, y, 50, NULL, 2, 0, i1, v1, 50, &n1), DPDO_E_CALLBACK);
    CHECK_STR_CONTAINS(dpdo_compressor_errmsg(c1), "returned 101");
    dpdo_rng_destroy(rng);
    dpdo_compressor_destroy(c1);
    dpdo_compressor_destroy(c2);
}

/* ---- bad input ------------------------------------------------------------- */

static void bad_create(void)
{
    const dpdo_compressor_type *tk = dpdo_compressor_type_find("top-k");
    dpdo_compressor *c = (dpdo_compressor *)&c;
    CHECK_EQ(dpdo_compressor_create(NULL, tk, NULL, 5), DPDO_E_INVAL);
    CHECK_EQ(dpdo_compressor_create(&c, NULL, NULL, 5), DPDO_E_INVAL);
    CHECK(c == NULL);
    c = (dpdo_compressor *)&c;
    CHECK_EQ(dpdo_compressor_create(&c, tk, NULL, 0), DPDO_E_INVAL);
    CHECK(c == NULL);
    CHECK_EQ(dpdo_compressor_create(&c, tk, NULL, -3), DPDO_E_INVAL);
    int dummy = 0;
    CHECK_EQ(dpdo_compressor_create(&c, tk, &dummy, 5), DPDO_E_INVAL);
    CHECK_EQ(dpdo_compressor_create(&c, tk, NULL, INT64_MAX), DPDO_E_NOMEM);
    CHECK(c == NULL);
    struct ucomp u = {0, 0, 0, 0};
    dpdo_compressor_type t1 = {offsetof(dpdo_compressor_type, compress), "x", u_compress, NULL, u_release};
    CHECK_EQ(dpdo_compressor_create(&c, &t1, &u, 5), DPDO_E_VERSION);
    dpdo_compressor_type t2 = {sizeof t2, NULL, u_compress, NULL, u_release};
    CHECK_EQ(dpdo_compressor_create(&c, &t2, &u, 5), DPDO_E_INVAL);
    dpdo_compressor_type t3 = {sizeof t3, "", u_compress, NULL, u_release};
    CHECK_EQ(dpdo_compressor_create(&c, &t3, &u, 5), DPDO_E_INVAL);
    dpdo_compressor_type t4 = {sizeof t4, "x", NULL, NULL, u_release};
    CHECK_EQ(dpdo_compressor_create(&c, &t4, &u, 5), DPDO_E_INVAL);
    dpdo_compressor_type t5 = *tk; /* a copy of a built-in */
    CHECK_EQ(dpdo_compressor_create(&c, &t5, NULL, 5), DPDO_E_INVAL);
    CHECK(c == NULL);
    CHECK_EQ(u.released, 0); /* failed creates never release */
    dpdo_compressor_destroy(NULL);
}

static void bad_accessors(void)
{
    CHECK(strcmp(dpdo_compressor_errmsg(NULL), "dpdo_compressor_errmsg: c is NULL") == 0);
    CHECK(strcmp(dpdo_compressor_name(NULL), "(null)") == 0);
    CHECK_EQ(dpdo_compressor_dim(NULL), 0);
    CHECK_EQ(dpdo_compressor_k(NULL), 0);
    CHECK_EQ(dpdo_compressor_capacity(NULL), 0);
    CHECK_EQ(dpdo_compressor_is_deterministic(NULL), 0);
    CHECK_EQ(dpdo_compressor_set_k(NULL, 1), DPDO_E_INVAL);
    double delta = 0.5;
    CHECK_EQ(dpdo_compressor_contraction(NULL, &delta), DPDO_E_INVAL);
    const char *names[] = {"identity", "top-k", "rand-k", "bernoulli"};
    for (int i = 0; i < 4; i++) {
        dpdo_compressor *c = mk(names[i], 8, 8);
        if (i > 0) CHECK_EQ(dpdo_compressor_set_k(c, 3), DPDO_OK);
        int64_t kk = dpdo_compressor_k(c);
        CHECK_EQ(dpdo_compressor_set_k(c, 0), DPDO_E_INVAL);
        CHECK_STR_CONTAINS(dpdo_compressor_errmsg(c), "k = 0");
        CHECK_EQ(dpdo_compressor_set_k(c, -1), DPDO_E_INVAL);
        CHECK_EQ(dpdo_compressor_set_k(c, 9), DPDO_E_INVAL);
        CHECK_STR_CONTAINS(dpdo_compressor_errmsg(c), "k = 9");
        CHECK_EQ(dpdo_compressor_k(c), kk);
        CHECK_EQ(dpdo_compressor_contraction(c, NULL), DPDO_E_INVAL);
        dpdo_compressor_destroy(c);
    }
}

static void bad_apply(void)
{
    const char *names[] = {"identity", "top-k", "rand-k", "bernoulli"};
    dpdo_rng *rng = mk_rng(1);
    double x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, val[16];
    int64_t idx[16], cnt;
    CHECK_EQ(dpdo_compressor_apply(NULL, x, 8, rng, 0, 0, idx, val, 8, &cnt), DPDO_E_INVAL);
    for (int i = 0; i < 4; i++) {
        dpdo_compressor *c = mk(names[i], 8, i == 0 ? 8 : 3);
        int64_t cap = dpdo_compressor_capacity(c);
#define BAD(call, frag)                                                          \
    do {                                                                         \
        cnt = 77;                                                                \
        CHECK_EQ(call, DPDO_E_INVAL);                                            \
        CHECK_EQ(cnt, 0);                                                        \
        CHECK_STR_CONTAINS(dpdo_compressor_errmsg(c), frag);                     \
    } while (0)
        BAD(dpdo_compressor_apply(c, NULL, 8, rng, 0, 0, idx, val, cap, &cnt), "x is NULL");
        BAD(dpdo_compressor_apply(c, x, 8, rng, 0, 0, NULL, val, cap, &cnt), "idx is NULL");
        BAD(dpdo_compressor_apply(c, x, 8, rng, 0, 0, idx, NULL, cap, &cnt), "val is NULL");
        CHECK_EQ(dpdo_compressor_apply(c, x, 8, rng, 0, 0, idx, val, cap, NULL), DPDO_E_INVAL);
        BAD(dpdo_compressor_apply(c, x, 7, rng, 0, 0, idx, val, cap, &cnt), "dim = 7");
        BAD(dpdo_compressor_apply(c, x, 9, rng, 0, 0, idx, val, cap, &cnt), "dim = 9");
        BAD(dpdo_compressor_apply(c, x, 8, rng, 0, 0, idx, val, cap - 1, &cnt), "cap");
        BAD(dpdo_compressor_apply(c, x, 8, rng, 0, 0, idx, x + 2, cap, &cnt), "overlaps");
        x[5] = NAN;
        BAD(dpdo_compressor_apply(c, x, 8, rng, 0, 0, idx, val, cap, &cnt), "x[5]");
        x[5] = -INFINITY;
        BAD(dpdo_compressor_apply(c, x, 8, rng, 0, 0, idx, val, cap, &cnt), "x[5]");
        x[5] = 6;
        BAD(dpdo_compressor_apply(c, x, 8, rng, UINT64_C(1) << 32, 0, idx, val, cap, &cnt), "node");
        BAD(dpdo_compressor_apply(c, x, 8, rng, 0, UINT64_C(1) << 48, idx, val, cap, &cnt), "round");
        if (i >= 2)
            BAD(dpdo_compressor_apply(c, x, 8, NULL, 0, 0, idx, val, cap, &cnt), "rng");
        /* the internal entry checks the rng too */
        char err[DPDO__ERRMSG_LEN];
        if (i >= 2) {
            CHECK_EQ(dpdo__compressor_apply(c, x, NULL, 0, 0, idx, val, &cnt, err), DPDO_E_INVAL);
            CHECK_STR_CONTAINS(err, "rng");
        }
        /* still works after the errors; a larger cap is fine */
        CHECK_EQ(dpdo_compressor_apply(c, x, 8, rng, 0, 0, idx, val, 16, &cnt), DPDO_OK);
        CHECK_EQ(dpdo__compressor_apply(c, x, rng, (UINT64_C(1) << 32) - 1,
                                        (UINT64_C(1) << 48) - 1, idx, val, &cnt, NULL), DPDO_OK);
#undef BAD
        dpdo_compressor_destroy(c);
    }
    dpdo_rng_destroy(rng);
}

/* ---- memory ---------------------------------------------------------------- */

static void oom_create(void)
{
    for (const dpdo_compressor_type *t = dpdo_compressor_type_next(NULL); t;
         t = dpdo_compressor_type_next(t)) {
        int ok = 0;
        for (long k = 0; k < 20 && !ok; k++) {
            dpdo_compressor *c = (dpdo_compressor *)&k;
            dpdo__fault_arm(k);
            int rc = dpdo_compressor_create(&c, t, NULL, 100);
            int fired = dpdo__fault_fired();
            dpdo__fault_arm(-1);
            if (rc == DPDO_OK) {
                ok = 1;
                CHECK(c != NULL && !fired);
                dpdo_compressor_destroy(c);
            } else {
                CHECK_EQ(rc, DPDO_E_NOMEM);
                CHECK(c == NULL);
            }
        }
        CHECK_MSG(ok, "%s: create never succeeded", t->name);
    }
    struct ucomp u = {0, 0, 0, 0};
    dpdo_compressor_type ut = {sizeof ut, "u", u_compress, NULL, u_release};
    int ok = 0;
    for (long k = 0; k < 20 && !ok; k++) {
        dpdo_compressor *c = NULL;
        dpdo__fault_arm(k);
        int rc = dpdo_compressor_create(&c, &ut, &u, 5);
        dpdo__fault_arm(-1);
        if (rc == DPDO_OK) {
            ok = 1;
            dpdo_compressor_destroy(c);
        } else {
            CHECK_EQ(rc, DPDO_E_NOMEM);
            CHECK_EQ(u.released, 0);
        }
    }
    CHECK(ok);
    CHECK_EQ(u.released, 1);
}

static void no_alloc_in_apply(void)
{
    const char *names[] = {"identity", "top-k", "rand-k", "bernoulli"};
    dpdo_rng *rng = mk_rng(2);
    uint64_t s = 4;
    double x[500], val[500];
    int64_t idx[500], cnt;
    fill(x, 500, 0, &s);
    struct ucomp u = {0, 0, 0, 0};
    dpdo_compressor_type ut = {sizeof ut, "u", u_compress, u_contraction, u_release};
    for (int i = 0; i < 5; i++) {
        dpdo_compressor *c = NULL;
        if (i < 4) c = mk(names[i], 500, i == 0 ? 500 : 150);
        else CHECK_EQ(dpdo_compressor_create(&c, &ut, &u, 500), DPDO_OK);
        char err[DPDO__ERRMSG_LEN];
        double delta;
        dpdo__fault_arm(0);
        int rc1 = dpdo_compressor_apply(c, x, 500, rng, 1, 2, idx, val, 500, &cnt);
        int rc2 = dpdo__compressor_apply(c, x, rng, 1, 3, idx, val, &cnt, err);
        int rc3 = dpdo_compressor_contraction(c, &delta);
        int rc4 = dpdo_compressor_set_k(c, i == 0 ? 500 : 100);
        long n = dpdo__fault_allocs();
        dpdo__fault_arm(-1);
        CHECK_MSG(rc1 == 0 && rc2 == 0 && rc3 == 0 && rc4 == 0, "%s: %d %d %d %d", names[i < 4 ? i : 0],
                  rc1, rc2, rc3, rc4);
        CHECK_MSG(n == 0, "%ld allocations in apply", n);
        dpdo_compressor_destroy(c);
    }
    dpdo_rng_destroy(rng);
}

/* ---- timing ------------------------------------------------------------------ */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void topk_timing(void)
{
    const int64_t dims[2] = {2000, 200000};
    uint64_t s = 6;
    for (int di = 0; di < 2; di++) {
        int64_t d = dims[di], k = (3 * d) / 10;
        double *x = malloc((size_t)d * sizeof *x), *val = malloc((size_t)k * sizeof *val);
        int64_t *idx = malloc((size_t)k * sizeof *idx), cnt;
        fill(x, d, 0, &s);
        dpdo_compressor *c = mk("top-k", d, k);
        int reps = (int)((h_quick() ? 2e6 : 4e7) / (double)d);
        for (int fam = 0; fam < 3; fam += 2) { /* Gaussian; all magnitudes equal */
            fill(x, d, fam, &s);
            double t0 = now();
            for (int r = 0; r < reps; r++) {
                if (fam == 0) x[r % d] += 1e-3; /* vary the input between calls */
                CHECK_EQ(dpdo_compressor_apply(c, x, d, NULL, 0, 0, idx, val, k, &cnt), DPDO_OK);
            }
            double t = (now() - t0) / reps;
            printf("# top-k d = %lld k = %lld (%s): %.2f us per call, %.2f ns per coordinate\n",
                   (long long)d, (long long)k, fam ? "equal magnitudes" : "gaussian", 1e6 * t,
                   1e9 * t / (double)d);
        }
        dpdo_compressor_destroy(c);
        free(x); free(val); free(idx);
    }
}

int main(void)
{
    RUN(types_lookup);
    RUN(topk_vs_sort);
    RUN(topk_long_vs_sort);
    RUN(topk_ties);
    RUN(topk_few_nonzeros);
    RUN(topk_contraction);
    RUN(identity_and_full);
    RUN(randk_stream_contract);
    RUN(randk_stats);
    RUN(bernoulli_stats);
    RUN(randk_subset_uniform);
    RUN(determinism);
    RUN(rng_failure);
    RUN(user_types);
    RUN(bad_create);
    RUN(bad_accessors);
    RUN(bad_apply);
    RUN(oom_create);
    RUN(no_alloc_in_apply);
    RUN(topk_timing);
    return h_finish();
}
