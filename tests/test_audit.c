/* SPDX-License-Identifier: BSD-3-Clause */
/* The privacy auditor (dpdo/audit.h): its statistics against independent computations, a smoke
 * audit, and the weakening hooks of the test build (the audit must say VIOLATION when the
 * mechanism draws half the noise or releases twice the sensitivity it is charged for). A few
 * seconds; DPDO_AUDIT_FULL=1 adds longer runs. */
#include <float.h>
#include <stdint.h>
#include "harness.h"
#include "dpdo/dpdo.h"
#include "audit/audit_impl.h"
#include "engine/engine_impl.h"

/* DPDO_TEST_QUICK (make check-asan, check-valgrind): few runs; the statistical power checks
 * (VIOLATION found, bounds near the claim) are skipped, the pipelines still run */
static int quick(void)
{
    return getenv("DPDO_TEST_QUICK") != NULL;
}

/* P[Bin(n, p) = k] by direct products, for small n */
static double pmf(int n, int k, double p)
{
    double c = 1;
    for (int j = 1; j <= k; j++) c = c * (double)(n - k + j) / (double)j;
    return c * pow(p, k) * pow(1 - p, n - k);
}
static double tail_ge(int n, int k, double p)
{
    double s = 0;
    for (int j = k; j <= n; j++) s += pmf(n, j, p);
    return s;
}
static double cdf_le(int n, int k, double p)
{
    double s = 0;
    for (int j = 0; j <= k; j++) s += pmf(n, j, p);
    return s;
}

static void test_incbeta_against_binomial_sums(void)
{
    const int ns[] = {1, 5, 17, 60};
    const double ps[] = {0.01, 0.3, 0.77, 0.999};
    double worst = 0;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            for (int k = 0; k <= ns[a]; k++) {
                double want = tail_ge(ns[a], k, ps[b]), got = dpdo__binom_sf(k, ns[a], ps[b]);
                double err = fabs(got - want) / (want > 1e-300 ? want : 1);
                if (want > 1e-280 && err > worst) worst = err;
            }
    CHECK_MSG(worst < 1e-11, "largest relative error of I_p(k, n-k+1) against the binomial sum: %g", worst);
    CHECK(isnan(dpdo__incbeta(0.5, 0, 1)));
    CHECK(isnan(dpdo__incbeta(1.5, 1, 1)));
    CHECK_NEAR(dpdo__incbeta(0.25, 1, 1), 0.25, 1e-15); /* uniform */
}

/* the root is right to a few ulps: I just below x is <= p, just above x >= p (relative slack
 * 1e-9 in the smaller tail); where I is well conditioned, I(x) = p to 1e-7 relative */
static void test_incbeta_inverse_roundtrip(void)
{
    const double as[] = {0.5, 1, 3, 50, 1e4, 1e6}, bs[] = {1, 7, 2e3, 5e5};
    const double ps[] = {1e-12, 1e-3, 0.025, 0.5, 0.975, 1 - 1e-9};
    double worst = 0;
    int bad = 0;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 6; k++) {
                double p = ps[k], a = as[i], b = bs[j], x = dpdo__incbeta_inv(p, a, b);
                CHECK(x > 0 && x < 1);
                double h = 8 * DBL_EPSILON * x, slack = 1e-9 * fmin(p, 1 - p);
                double below = dpdo__incbeta(x - h, a, b), above = dpdo__incbeta(fmin(x + h, 1), a, b);
                if (!(below <= p + slack && above >= p - slack)) {
                    bad++;
                    printf("#   a %g b %g p %g: x %.17g brackets %.17g %.17g\n", a, b, p, x, below, above);
                }
                if (fabs(above - below) < 1e-9 * fmin(p, 1 - p)) { /* well conditioned at this x */
                    double back = dpdo__incbeta(x, a, b), err = fabs(back - p) / fmin(p, 1 - p);
                    if (err > worst) worst = err;
                }
            }
    CHECK_EQ(bad, 0);
    CHECK_MSG(worst < 1e-7, "worst relative round-trip error %g", worst);
    CHECK(isnan(dpdo__incbeta_inv(0.5, -1, 1)));
    CHECK(dpdo__incbeta_inv(0, 2, 3) == 0 && dpdo__incbeta_inv(1, 2, 3) == 1);
}

static void test_clopper_pearson_exact(void)
{
    double lo, up;
    /* closed forms at the ends */
    CHECK_EQ(dpdo_audit_clopper_pearson(0, 200, 0.95, &lo, &up), DPDO_OK);
    CHECK_NEAR(lo, 0, 0);
    CHECK_NEAR(up, 1 - pow(0.05, 1.0 / 200), 1e-12);
    CHECK_EQ(dpdo_audit_clopper_pearson(200, 200, 0.95, &lo, &up), DPDO_OK);
    CHECK_NEAR(lo, pow(0.05, 1.0 / 200), 1e-12);
    CHECK_NEAR(up, 1, 0);
    /* defining equations by direct binomial sums */
    for (int k = 1; k < 40; k += 3) {
        CHECK_EQ(dpdo_audit_clopper_pearson(k, 40, 0.9, &lo, &up), DPDO_OK);
        CHECK_NEAR(tail_ge(40, k, lo), 0.1, 1e-9);
        CHECK_NEAR(cdf_le(40, k, up), 0.1, 1e-9);
        CHECK(lo < (double)k / 40 && up > (double)k / 40);
    }
    /* exact coverage: for p on a grid, P[upper(K) < p] <= alpha, and close to it somewhere */
    double ub[41], lb[41], worst_up = 0, worst_lo = 0;
    for (int k = 0; k <= 40; k++) dpdo_audit_clopper_pearson(k, 40, 0.95, &lb[k], &ub[k]);
    for (int g = 1; g < 400; g++) {
        double p = g / 400.0, miss_up = 0, miss_lo = 0;
        for (int k = 0; k <= 40; k++) {
            if (ub[k] < p) miss_up += pmf(40, k, p);
            if (lb[k] > p) miss_lo += pmf(40, k, p);
        }
        worst_up = fmax(worst_up, miss_up), worst_lo = fmax(worst_lo, miss_lo);
    }
    CHECK_MSG(worst_up <= 0.05 + 1e-12 && worst_up > 0.03, "upper bound misses %g", worst_up);
    CHECK_MSG(worst_lo <= 0.05 + 1e-12 && worst_lo > 0.03, "lower bound misses %g", worst_lo);
    CHECK_EQ(dpdo_audit_clopper_pearson(5, 4, 0.95, &lo, &up), DPDO_E_INVAL);
    CHECK_EQ(dpdo_audit_clopper_pearson(1, 4, 1.0, &lo, &up), DPDO_E_INVAL);
    CHECK_EQ(dpdo_audit_clopper_pearson(1, 4, 0.9, NULL, NULL), DPDO_E_INVAL);
}

static void test_epsilon_from_counts(void)
{
    double e;
    /* a perfect test on n runs: TPR_lo = (alpha/2)^(1/n), FPR_hi = 1 - (alpha/2)^(1/n) */
    int64_t n = 1000;
    CHECK_EQ(dpdo_audit_epsilon_from_counts(n, n, 0, n, 0.0, 0.95, &e), DPDO_OK);
    double t = pow(0.025, 1.0 / (double)n);
    CHECK_NEAR(e, log(t / (1 - t)), 1e-9);
    CHECK(e > 5.5 && e < 6.5); /* what 1000 runs can show at most */
    double e2;
    CHECK_EQ(dpdo_audit_epsilon_from_counts(n, n, 0, n, 1e-3, 0.95, &e2), DPDO_OK);
    CHECK_NEAR(e2, log((t - 1e-3) / (1 - t)), 1e-9);
    /* a coin-flip test shows nothing; the mirrored test (TNR/FNR) is seen too */
    CHECK_EQ(dpdo_audit_epsilon_from_counts(500, 1000, 500, 1000, 1e-5, 0.95, &e), DPDO_OK);
    CHECK_NEAR(e, 0, 0);
    CHECK_EQ(dpdo_audit_epsilon_from_counts(1000, 1000, 900, 1000, 1e-5, 0.95, &e), DPDO_OK);
    CHECK(e > 1.5); /* TNR 0.1 vs FNR 0: log(TNR_lo / FNR_hi) */
    CHECK_EQ(dpdo_audit_epsilon_from_counts(3, 2, 0, 2, 0, 0.95, &e), DPDO_E_INVAL);
}

static void test_one_run_bound(void)
{
    double *scr = malloc(201 * sizeof *scr), e;
    /* delta = 0: the p-value is the binomial tail at q = e^eps/(1+e^eps) */
    for (int v = 100; v <= 200; v += 25) {
        double q = 1 / (1 + exp(-0.7));
        CHECK_NEAR(dpdo__one_run_pvalue(1000, 200, v, 0.7, 0.0, scr), tail_ge(200, v, q), 1e-12);
    }
    /* all r guesses right, delta = 0: q^r = alpha */
    CHECK_EQ(dpdo_audit_one_run_epsilon(1000, 100, 100, 0.0, 0.95, &e), DPDO_OK);
    double q = pow(0.05, 1.0 / 100);
    CHECK_NEAR(e, log(q / (1 - q)), 1e-9);
    /* delta > 0 only lowers it; fewer right guesses too; half right shows nothing */
    double ed, ev, eh;
    CHECK_EQ(dpdo_audit_one_run_epsilon(1000, 100, 100, 1e-5, 0.95, &ed), DPDO_OK);
    CHECK_EQ(dpdo_audit_one_run_epsilon(1000, 100, 90, 0.0, 0.95, &ev), DPDO_OK);
    CHECK_EQ(dpdo_audit_one_run_epsilon(1000, 100, 50, 0.0, 0.95, &eh), DPDO_OK);
    CHECK(ed < e && ed > 0.5 * e);
    CHECK(ev < e && ev > 0.5);
    CHECK_NEAR(eh, 0, 0);
    /* at the bound's eps the p-value equals alpha */
    CHECK_NEAR(dpdo__one_run_pvalue(1000, 100, 100, ed, 1e-5, scr), 0.05, 1e-6);
    CHECK_EQ(dpdo_audit_one_run_epsilon(10, 20, 5, 0, 0.95, &e), DPDO_E_INVAL);
    free(scr);
}

static void opts(dpdo_algorithm_options *ao, dpdo_audit_options *o, double eps, int64_t T, int64_t runs, uint64_t seed)
{
    dpdo_algorithm_options_init(ao, sizeof *ao);
    ao->epsilon = eps;
    ao->max_rounds = T;
    dpdo_audit_options_init(o, sizeof *o);
    o->runs = runs;
    o->seed = seed;
    o->randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    o->accountant = "exact"; /* one unsampled release: the claimed epsilon is the true one */
    o->method = DPDO_AUDIT_RELEASE; /* the threshold test alone, at the adversary's node */
    o->single_node = 1;
}

static int run_audit(const char *alg, const dpdo_algorithm_options *ao, const dpdo_audit_options *o, uint32_t weaken,
                     int key, double val, dpdo_audit_result *r)
{
    dpdo_audit *a = NULL;
    CHECK_EQ(dpdo_audit_create(&a), DPDO_OK);
    int rc = dpdo_audit_setup(a, dpdo_algorithm_type_find(alg), ao, o);
    if (!rc && key) rc = dpdo_audit_set_param(a, key, val);
    if (!rc) rc = dpdo__audit_set_weaken(a, weaken);
    r->struct_size = sizeof *r;
    if (!rc) rc = dpdo_audit_run(a, r);
    if (rc) printf("#   %s: %s\n", alg, dpdo_audit_errmsg(a));
    dpdo_audit_destroy(a);
    return rc;
}

/* dpdo_audit_eps_laplace_lower: (1) exact values on a constructed sample: the median ranks from
 * exact binomial sums (here), the deviation sums by hand, the chi-square quantile from the
 * tables (0.01 quantile of chi-square(120) = 86.923); (2) Laplace releases with a known epsilon
 * (shift 1, scale 1: epsilon = 1): a large sample's bound is below 1 and within 10 % of it, and
 * over 200 small samples at confidence 0.95 the bound exceeds 1 at most 20 times (an exceedance
 * rate of 5 % gives more than 20 with probability 0.001) */
static double laplace_draw(uint64_t *st)
{
    double u = h_urand(st) - 0.5;
    return u < 0 ? log(1 + 2 * u) : -log(1 - 2 * u);
}

static void test_laplace_lower(void)
{
    double s1[30], s0[30], eps = -1;
    for (int i = 0; i < 30; i++) s1[i] = 129 - i, s0[i] = i; /* unsorted on purpose */
    /* the rank: the largest c with P[Bin(30, 1/2) <= c - 1] <= a/2, a = 0.03/3 */
    double cum = 0, term = pow(0.5, 30);
    int c = 0;
    for (int j = 0; j < 15; j++) {
        cum += term;
        if (cum > 0.005) break;
        c = j + 1;
        term *= (double)(30 - j) / (double)(j + 1);
    }
    CHECK_EQ(c, 8); /* P[Bin <= 7] = 0.00261, P[Bin <= 8] = 0.00806 */
    double l1 = 100 + c - 1, u0 = 30 - c; /* v1(8) = 107, v0(23) = 22 */
    double dev = 0;
    for (int i = 0; i < 30; i++) dev += fabs(i - (c - 1.0)); /* 281, the same at either end */
    double want = (l1 - u0) * 86.923 / (2 * 2 * dev);
    CHECK_EQ(dpdo_audit_eps_laplace_lower(s1, 30, s0, 30, 0.97, &eps), DPDO_OK);
    CHECK_REL(eps, want, 1e-3);
    printf("# constructed sample: %.6f (tables: %.6f)\n", eps, want);
    CHECK_EQ(dpdo_audit_eps_laplace_lower(s0, 30, s1, 30, 0.97, &eps), DPDO_OK);
    CHECK_EQ(eps, 0); /* the shift the other way */
    double k1[30], k0[30];
    for (int i = 0; i < 30; i++) k1[i] = 1, k0[i] = 0;
    CHECK_EQ(dpdo_audit_eps_laplace_lower(k1, 30, k0, 30, 0.95, &eps), DPDO_OK);
    CHECK(isinf(eps) && eps > 0);
    CHECK_EQ(dpdo_audit_eps_laplace_lower(NULL, 30, k0, 30, 0.95, &eps), DPDO_E_INVAL);
    CHECK_EQ(dpdo_audit_eps_laplace_lower(k1, 29, k0, 30, 0.95, &eps), DPDO_E_INVAL);
    CHECK_EQ(dpdo_audit_eps_laplace_lower(k1, 30, k0, 30, 1.0, &eps), DPDO_E_INVAL);
    k1[3] = NAN;
    CHECK_EQ(dpdo_audit_eps_laplace_lower(k1, 30, k0, 30, 0.95, &eps), DPDO_E_INVAL);
    /* Laplace releases, epsilon = 1 */
    uint64_t st = 0x1a9;
    enum { BIG = 20000, SMALL = 100, REPS = 200 };
    static double b1[BIG], b0[BIG];
    for (int i = 0; i < BIG; i++) b1[i] = 1 + laplace_draw(&st), b0[i] = laplace_draw(&st);
    CHECK_EQ(dpdo_audit_eps_laplace_lower(b1, BIG, b0, BIG, 0.95, &eps), DPDO_OK);
    CHECK_MSG(eps <= 1 && eps >= 0.9, "n = %d: bound %g for epsilon 1", BIG, eps);
    printf("# Laplace, epsilon 1, n = %d: lower bound %.4f\n", BIG, eps);
    int over = 0;
    double sum = 0;
    for (int r = 0; r < REPS; r++) {
        for (int i = 0; i < SMALL; i++) b1[i] = 1 + laplace_draw(&st), b0[i] = laplace_draw(&st);
        CHECK_EQ(dpdo_audit_eps_laplace_lower(b1, SMALL, b0, SMALL, 0.95, &eps), DPDO_OK);
        over += eps > 1, sum += eps;
    }
    CHECK_MSG(over <= 20, "%d of %d bounds above the true epsilon 1", over, REPS);
    printf("# Laplace, epsilon 1, n = %d: %d of %d bounds above 1, mean bound %.3f\n", SMALL, over, REPS,
           sum / REPS);
}

/* The Laplace white box's statistic (audit_laplace.c) on a process with a known epsilon: two
 * nodes, three rounds, d = 4; in round t node i releases x = (xi_0 + xi_1)/2 of the previous
 * round + a shift + Lap(1) on every coordinate, the shift +-h (D1, D0) at node 0 in rounds 1 and
 * 2, none otherwise. Node 0's summed pure epsilon is 2 rounds x 4 coordinates x 2h = 2 (h =
 * 1/8); node 1's is 0 (it carries the shift of the earlier releases, which the prediction
 * removes). (1) At 3e4 runs the bound is <= 2 and within 12 % of it over 3 seeds, the release of
 * round 0 is left out (8 coordinates kept of 12), node 1's bound is 0; (2) over 200 audits of
 * 2000 runs at confidence 0.95 the bound exceeds 2 at most 20 times (5 % gives more than 20 with
 * probability 0.001); (3) a release without noise that moves with the canary: infinite, or above
 * 1e6 (its residual keeps the rounding of the fitted prediction). */
static void laplace_process(uint64_t *st, int64_t R, double h, double b1, double *X, int y)
{
    enum { D = 4, F = 24 };
    for (int64_t r = 0; r < R; r++) {
        double *x = X + r * F, prev[2][D] = {{0}};
        for (int t = 0; t < 3; t++)
            for (int i = 0; i < 2; i++) {
                double *v = x + (2 * t + i) * D;
                for (int k = 0; k < D; k++) {
                    double sh = i == 0 && t >= 1 ? (y ? h : -h) : 0;
                    double b = i == 0 && t == 1 ? b1 : 1.0;
                    v[k] = 0.5 * (prev[0][k] + prev[1][k]) + sh + b * laplace_draw(st);
                }
                if (i == 1)
                    for (int k = 0; k < D; k++) prev[0][k] = v[k - D], prev[1][k] = v[k];
            }
    }
}

static void test_laplace_white(void)
{
    enum { D = 4, F = 24, BIG = 30000, SMALL = 2000, REPS = 200 };
    int64_t rel[F], own[F];
    for (int k = 0; k < F; k++) rel[k] = k / D, own[k] = (k / D) % 2;
    double *X1 = malloc(sizeof(double) * BIG * F), *X0 = malloc(sizeof(double) * BIG * F);
    CHECK(X1 && X0);
    if (!X1 || !X0) return;
    uint64_t st = 0x1a9c;
    double eps = -1, sum = 0;
    int64_t kept = -1, nrel = -1;
    int seeds = quick() ? 1 : 3;
    for (int s = 0; s < seeds; s++) {
        laplace_process(&st, BIG, 0.125, 1, X1, 1);
        laplace_process(&st, BIG, 0.125, 1, X0, 0);
        CHECK_EQ(dpdo__audit_laplace_lower(X1, X0, BIG, F, rel, own, 0, BIG / 2, 0.95, &eps, &kept, &nrel),
                 DPDO_OK);
        CHECK_EQ(kept, 8);
        CHECK_EQ(nrel, 3);
        CHECK_MSG(eps <= 2, "seed %d: bound %g above the true epsilon 2", s, eps);
        sum += eps;
        printf("# known process, epsilon 2, %d runs: bound %.4f\n", BIG, eps);
        double e1 = -1;
        CHECK_EQ(dpdo__audit_laplace_lower(X1, X0, BIG, F, rel, own, 1, BIG / 2, 0.95, &e1, &kept, &nrel),
                 DPDO_OK);
        CHECK_MSG(e1 < 0.05, "node 1 (epsilon 0): bound %g", e1);
    }
    if (!quick()) CHECK_MSG(sum / seeds >= 0.88 * 2, "mean bound %g < 0.88 of 2", sum / seeds);
    int over = 0;
    double s2 = 0;
    for (int r = 0; r < (quick() ? 10 : REPS); r++) {
        laplace_process(&st, SMALL, 0.125, 1, X1, 1);
        laplace_process(&st, SMALL, 0.125, 1, X0, 0);
        CHECK_EQ(dpdo__audit_laplace_lower(X1, X0, SMALL, F, rel, own, 0, SMALL / 2, 0.95, &eps, &kept,
                                           &nrel),
                 DPDO_OK);
        over += eps > 2, s2 += eps;
    }
    CHECK_MSG(over <= 20, "%d of %d bounds above the true epsilon 2", over, REPS);
    printf("# known process, epsilon 2, %d runs: %d of %d bounds above 2, mean %.3f\n", SMALL, over,
           quick() ? 10 : REPS, s2 / (quick() ? 10 : REPS));
    laplace_process(&st, SMALL, 0.125, 0, X1, 1); /* round 1 of node 0 without noise */
    laplace_process(&st, SMALL, 0.125, 0, X0, 0);
    CHECK_EQ(dpdo__audit_laplace_lower(X1, X0, SMALL, F, rel, own, 0, SMALL / 2, 0.95, &eps, &kept, &nrel),
             DPDO_OK);
    CHECK_MSG(eps > 1e6, "no noise: bound %g", eps); /* infinite, or the prediction's rounding over b */
    printf("# known process, a release without noise: bound %g\n", eps);
    free(X1), free(X0);
}

static void test_api_errors(void)
{
    dpdo_audit *a = NULL;
    dpdo_audit_result r;
    r.struct_size = sizeof r;
    CHECK_EQ(dpdo_audit_create(NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_audit_create(&a), DPDO_OK);
    CHECK_EQ(dpdo_audit_run(a, &r), DPDO_E_INVAL);
    CHECK(strstr(dpdo_audit_errmsg(a), "setup") != NULL);
    CHECK_EQ(dpdo_audit_set_param(a, DPDO_PARAM_BATCH, 2), DPDO_E_INVAL);
    dpdo_audit_options o;
    dpdo_audit_options_init(&o, sizeof o);
    o.runs = 3;
    CHECK_EQ(dpdo_audit_setup(a, dpdo_algorithm_type_find("dp-dda"), NULL, &o), DPDO_E_INVAL);
    CHECK(strstr(dpdo_audit_errmsg(a), "runs = 3") != NULL);
    dpdo_audit_options_init(&o, sizeof o);
    o.neighbour = DPDO_AUDIT_REMOVE; /* needs rows >= 2 */
    CHECK_EQ(dpdo_audit_setup(a, dpdo_algorithm_type_find("dp-dda"), NULL, &o), DPDO_E_INVAL);
    dpdo_audit_options_init(&o, sizeof o);
    o.accountant = "nope";
    CHECK_EQ(dpdo_audit_setup(a, dpdo_algorithm_type_find("dp-dda"), NULL, &o), DPDO_E_INVAL);
    CHECK(strstr(dpdo_audit_errmsg(a), "nope") != NULL);
    CHECK_EQ(dpdo_audit_setup(a, NULL, NULL, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_audit_setup(a, dpdo_algorithm_type_find("dp-dda"), NULL, NULL), DPDO_OK);
    CHECK_EQ(dpdo_audit_set_param(a, 99999, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_audit_set_param(a, DPDO_PARAM_STEP_SIZE, NAN), DPDO_E_INVAL);
    r.struct_size = 8;
    CHECK_EQ(dpdo_audit_run(a, &r), DPDO_E_VERSION);
    /* a parameter the algorithm does not take fails the run with its name */
    CHECK_EQ(dpdo_audit_set_param(a, DPDO_PARAM_FED_EPOCHS, 1), DPDO_OK);
    r.struct_size = sizeof r;
    CHECK(dpdo_audit_run(a, &r) < 0);
    CHECK(strstr(dpdo_audit_errmsg(a), "fed-epochs") != NULL);
    dpdo_audit_destroy(a);
    dpdo_audit_destroy(NULL);
    CHECK(strcmp(dpdo_audit_errmsg(NULL), "dpdo_audit_errmsg: a is NULL") == 0);
    CHECK(strcmp(dpdo_audit_verdict_name(DPDO_AUDIT_VIOLATION), "VIOLATION") == 0);
}

/* No false alarm, and power: DP-DDA, one release, the claimed epsilon exact (epsilon 2). Over
 * three seeds the bound stays below the claim and above what a blind test could show. */
static void test_release_smoke(void)
{
    dpdo_algorithm_options ao;
    dpdo_audit_options o;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        opts(&ao, &o, 2.0, 1, quick() ? 500 : 20000, seed);
        dpdo_audit_result r;
        CHECK_EQ(run_audit("dp-dda", &ao, &o, 0, 0, 0, &r), DPDO_OK);
        CHECK_NEAR(r.eps_claimed, 2.0, 1e-6);
        CHECK_EQ(r.verdict, DPDO_AUDIT_CONSISTENT);
        CHECK_MSG((quick() || r.eps_lower > 0.5) && r.eps_lower < 2.0, "seed %llu: eps_lower %g",
                  (unsigned long long)seed, r.eps_lower);
        CHECK_EQ(r.runs, 2 * o.runs);
        CHECK_EQ(r.rounds, 1);
    }
    /* the final model only, and removal instead of replacement, on DO-ADP (3 rounds, rdp) */
    opts(&ao, &o, 4.0, 3, quick() ? 200 : 5000, 7);
    o.accountant = NULL;
    o.view = DPDO_AUDIT_VIEW_MODEL;
    o.rows = 2;
    o.neighbour = DPDO_AUDIT_REMOVE;
    dpdo_audit_result r;
    CHECK_EQ(run_audit("do-adp", &ao, &o, 0, 0, 0, &r), DPDO_OK);
    CHECK_EQ(r.features, 1);
    CHECK(r.verdict == DPDO_AUDIT_CONSISTENT && r.eps_lower <= r.eps_claimed);
}

/* The hooks: half the noise (DP-DDA, Fed-PLT) and twice the sensitivity (DO-ADP) while the
 * ledger is charged as before. True epsilon ~4.4 against a claim of 2. */
static void test_weakened_violations(void)
{
    int64_t runs = getenv("DPDO_AUDIT_FULL") ? 1000000 : quick() ? 300 : 200000;
    struct {
        const char *alg;
        uint32_t bits;
        int key;
        double val;
    } cases[] = {{"dp-dda", DPDO__WEAKEN_SIGMA_HALF, 0, 0},
                 {"fed-plt", DPDO__WEAKEN_SIGMA_HALF, DPDO_PARAM_FED_EPOCHS, 1},
                 {"do-adp", DPDO__WEAKEN_SENS_DOUBLE, 0, 0}};
    for (int c = 0; c < 3; c++) {
        dpdo_algorithm_options ao;
        dpdo_audit_options o;
        opts(&ao, &o, 2.0, 1, runs, 11 + (uint64_t)c);
        dpdo_audit_result r;
        CHECK_EQ(run_audit(cases[c].alg, &ao, &o, cases[c].bits, cases[c].key, cases[c].val, &r), DPDO_OK);
        CHECK_MSG(quick() || (r.verdict == DPDO_AUDIT_VIOLATION && r.eps_lower > 2.3),
                  "%s weakened: eps_lower %g, claimed %g", cases[c].alg, r.eps_lower, r.eps_claimed);
        printf("# %s weakened (bits %u): eps_lower %.3f > claimed %.3f: %s\n", cases[c].alg, cases[c].bits,
               r.eps_lower, r.eps_claimed, dpdo_audit_verdict_name(r.verdict));
    }
}

/* The old DP-WOR-SGD pass-boundary accounting (DPDO__WEAKEN_WOR_PASS, branch calib): the local
 * model was not reset at a pass boundary, so Local steps of earlier passes reached the next
 * Global release and one row entered a release several times while each pass was charged once.
 * The canary node holds one row (one step per pass), 6 passes, the "random" Local/Global policy
 * (public: public seed 2 gives the canary node Local passes followed by Global ones). If the
 * hook changes nothing on a build the test says "pending" instead of passing vacuously. */
static void test_wor_pass_hook(void)
{
    dpdo_algorithm_options ao;
    dpdo_audit_options o;
    opts(&ao, &o, 2.0, 1000, 200, 21);
    ao.seed = 2;
    o.policy = "random";
    dpdo_audit *a = NULL;
    CHECK_EQ(dpdo_audit_create(&a), DPDO_OK);
    CHECK_EQ(dpdo__audit_set_weaken(a, DPDO__WEAKEN_WOR_PASS), DPDO_OK); /* the hook exists */
    dpdo_audit_destroy(a);
    /* does the hook change the run? the same keys with and without it */
    dpdo_audit_result r0, r1;
    CHECK_EQ(run_audit("dp-wor-sgd", &ao, &o, 0, DPDO_PARAM_WOR_PASSES, 6, &r0), DPDO_OK);
    CHECK_EQ(run_audit("dp-wor-sgd", &ao, &o, DPDO__WEAKEN_WOR_PASS, DPDO_PARAM_WOR_PASSES, 6, &r1), DPDO_OK);
    int effect = r0.eps_claimed != r1.eps_claimed || r0.rounds != r1.rounds || r0.threshold != r1.threshold ||
                 r0.tpr != r1.tpr || r0.fpr != r1.fpr || r0.eps_lower != r1.eps_lower;
    if (!effect) {
        printf("# pending: DPDO__WEAKEN_WOR_PASS has no effect on this build (implemented by branch calib); "
               "the VIOLATION check runs once it does\n");
        return;
    }
    o.runs = getenv("DPDO_AUDIT_FULL") ? 200000 : quick() ? 300 : 50000;
    CHECK_EQ(run_audit("dp-wor-sgd", &ao, &o, DPDO__WEAKEN_WOR_PASS, DPDO_PARAM_WOR_PASSES, 6, &r1), DPDO_OK);
    CHECK_MSG(quick() || (r1.verdict == DPDO_AUDIT_VIOLATION && r1.eps_lower > 1.3 * r1.eps_claimed),
              "old pass accounting: eps_lower %g, claimed %g", r1.eps_lower, r1.eps_claimed);
    CHECK_EQ(run_audit("dp-wor-sgd", &ao, &o, 0, DPDO_PARAM_WOR_PASSES, 6, &r0), DPDO_OK);
    CHECK_MSG(r0.verdict == DPDO_AUDIT_CONSISTENT, "fixed accounting: eps_lower %g, claimed %g", r0.eps_lower,
              r0.eps_claimed);
    CHECK_NEAR(r0.eps_claimed, r1.eps_claimed, 0); /* the same charges: only the releases differ */
    printf("# dp-wor-sgd old pass accounting: eps_lower %.3f > claimed %.3f: %s; fixed: %.3f (%s)\n", r1.eps_lower,
           r1.eps_claimed, dpdo_audit_verdict_name(r1.verdict), r0.eps_lower, dpdo_audit_verdict_name(r0.verdict));
}

/* DP-DDA's Theorem 1 used below T_min (paper noise, 200 nodes, one round): the paper claims
 * eps ~0.44 at delta ~0.5; the audit shows far more at that delta. The rigorous figure holds. */
static void test_paper_bound_violated(void)
{
    dpdo_algorithm_options ao;
    dpdo_audit_options o;
    opts(&ao, &o, 0.5, 1, quick() ? 1000 : 20000, 5);
    o.accountant = NULL;
    o.nodes = 200;
    ao.noise_mode = DPDO_NOISE_PAPER;
    dpdo_audit_result r;
    CHECK_EQ(run_audit("dp-dda", &ao, &o, 0, 0, 0, &r), DPDO_OK);
    CHECK_EQ(r.paper_valid, 0);
    CHECK(r.eps_paper < 0.5 && r.delta_paper > 0.4 && r.delta_paper < 0.6);
    CHECK_MSG(r.paper_verdict == DPDO_AUDIT_VIOLATION && r.eps_lower_paper > 3 * r.eps_paper,
              "paper eps %g at delta %g, audit %g", r.eps_paper, r.delta_paper, r.eps_lower_paper);
    CHECK_EQ(r.verdict, DPDO_AUDIT_CONSISTENT);
    CHECK(r.eps_lower <= r.eps_claimed);
}

/* One run, 1000 canaries: consistent unweakened; with half the noise it already shows more
 * than the claim (epsilon 2 exact, one full-batch release). */
static void test_one_run(void)
{
    for (int w = 0; w < 2; w++) {
        dpdo_algorithm_options ao;
        dpdo_audit_options o;
        opts(&ao, &o, 2.0, 1, 100, 31 + (uint64_t)w);
        o.method = DPDO_AUDIT_ONE_RUN;
        o.canaries = 1000;
        dpdo_audit_result r;
        CHECK_EQ(run_audit("dp-dda", &ao, &o, w ? DPDO__WEAKEN_SIGMA_HALF : 0, 0, 0, &r), DPDO_OK);
        CHECK_EQ(r.runs, 2);
        CHECK_EQ(r.canaries, 1000);
        CHECK(r.guesses >= 20 && r.correct > r.guesses / 2);
        if (!w) CHECK_MSG(r.verdict == DPDO_AUDIT_CONSISTENT && r.eps_lower > 0.2, "one run: %g", r.eps_lower);
        else
            printf("# one run, half noise: eps_lower %.3f vs claimed %.3f (%lld of %lld right)\n", r.eps_lower,
                   r.eps_claimed, (long long)r.correct, (long long)r.guesses);
        if (w) CHECK(r.eps_lower > 1.2);
    }
}

static int count_progress(int64_t done, int64_t total, void *user)
{
    int64_t *c = user;
    c[0]++;
    c[1] = done, c[2] = total;
    return c[3] && done >= c[3];
}

static void test_progress_and_cancel(void)
{
    dpdo_algorithm_options ao;
    dpdo_audit_options o;
    opts(&ao, &o, 2.0, 2, 50, 3);
    dpdo_audit *a = NULL;
    CHECK_EQ(dpdo_audit_create(&a), DPDO_OK);
    CHECK_EQ(dpdo_audit_setup(a, dpdo_algorithm_type_find("dp-dda"), &ao, &o), DPDO_OK);
    int64_t c[4] = {0, 0, 0, 0};
    CHECK_EQ(dpdo_audit_set_progress(a, count_progress, c), DPDO_OK);
    dpdo_audit_result r;
    r.struct_size = sizeof r;
    CHECK_EQ(dpdo_audit_run(a, &r), DPDO_OK);
    CHECK_EQ(c[0], 50);
    CHECK_EQ(c[1], 100);
    CHECK_EQ(c[2], 100);
    c[0] = 0, c[3] = 40;
    CHECK_EQ(dpdo_audit_run(a, &r), DPDO_E_CANCELED);
    CHECK_EQ(c[0], 20);
    CHECK(strstr(dpdo_audit_errmsg(a), "canceled") != NULL);
    /* reproducible mode: the same audit twice gives the same bound */
    c[3] = 0;
    dpdo_audit_result r2;
    r2.struct_size = sizeof r2;
    CHECK_EQ(dpdo_audit_run(a, &r), DPDO_OK);
    CHECK_EQ(dpdo_audit_run(a, &r2), DPDO_OK);
    CHECK(r.eps_lower == r2.eps_lower && r.threshold == r2.threshold);
    dpdo_audit_destroy(a);
}

/* Out of memory at every allocation of a small audit (both methods): DPDO_E_NOMEM or success,
 * never a crash or a leak (the leak check runs under make check-asan / check-valgrind). */
static void test_out_of_memory(void)
{
    for (int method = 0; method < 2; method++) {
        dpdo_algorithm_options ao;
        dpdo_audit_options o;
        opts(&ao, &o, 2.0, 1, 20, 3);
        o.method = method;
        o.canaries = 10;
        int done = 0, nomem = 0;
        for (long k = 0; k < 5000 && !done; k++) {
            dpdo_audit *a = NULL;
            dpdo__fault_arm(k);
            int rc = dpdo_audit_create(&a);
            if (!rc) rc = dpdo_audit_setup(a, dpdo_algorithm_type_find("dp-dda"), &ao, &o);
            dpdo_audit_result r;
            r.struct_size = sizeof r;
            if (!rc) rc = dpdo_audit_run(a, &r);
            int fired = dpdo__fault_fired();
            dpdo__fault_arm(-1);
            if (rc == DPDO_OK && !fired) done = 1;
            else if (rc == DPDO_E_NOMEM) nomem++;
            else CHECK_MSG(rc == DPDO_OK, "method %d, allocation %ld: rc %d (%s)", method, k, rc, dpdo_audit_errmsg(a));
            dpdo_audit_destroy(a);
        }
        CHECK(done);
        CHECK(nomem > 20);
    }
}

/* The fast path (keys written where the engine reads them, one prepare) gives bit for bit the
 * audit of the public path (dpdo_algorithm_set_node_secret and a new prepare every run). */
static void test_fast_keys_equal_public_keys(void)
{
    dpdo_algorithm_options ao;
    dpdo_audit_options o;
    /* the two key paths must give the same scores run by run; make check compares 30 runs (each
     * run's scores enter the threshold, tpr and fpr), make check-long 100 */
    opts(&ao, &o, 2.0, 3, h_long() ? 100 : 30, 41);
    o.accountant = NULL;
    dpdo_audit_result r[2];
    for (int k = 0; k < 2; k++) {
        dpdo_audit *a = NULL;
        CHECK_EQ(dpdo_audit_create(&a), DPDO_OK);
        CHECK_EQ(dpdo_audit_setup(a, dpdo_algorithm_type_find("do-adp"), &ao, &o), DPDO_OK);
        CHECK_EQ(dpdo__audit_set_public_keys(a, k), DPDO_OK);
        r[k].struct_size = sizeof r[k];
        CHECK_EQ(dpdo_audit_run(a, &r[k]), DPDO_OK);
        dpdo_audit_destroy(a);
    }
    CHECK(r[0].threshold == r[1].threshold && r[0].tpr == r[1].tpr && r[0].fpr == r[1].fpr);
    CHECK(r[0].eps_lower == r[1].eps_lower && r[0].eps_claimed == r[1].eps_claimed);
    /* and the runs depend on the audit seed (its data and keys): another seed, another threshold */
    dpdo_audit_result r2;
    opts(&ao, &o, 2.0, 3, h_long() ? 100 : 30, 42);
    o.accountant = NULL;
    CHECK_EQ(run_audit("do-adp", &ao, &o, 0, 0, 0, &r2), DPDO_OK);
    CHECK(r2.threshold != r[0].threshold);
}

/* Every registered private type (its fixture: not a non-private baseline, noise drawn by the
 * engine's mechanism, not inside a local solver) passes a short release audit at its claimed
 * epsilon 2 over one round: the run works through the auditor and the lower bound stays below
 * the claim (a type whose release were weaker than its accounting would show a VIOLATION, as
 * test_weakened_violations shows for planted bugs). */
static void test_every_private_type(void)
{
    int n = 0;
    for (const dpdo_algorithm_type *t = dpdo_algorithm_type_next(NULL); t; t = dpdo_algorithm_type_next(t)) {
        const char *tn = dpdo_algorithm_type_name(t);
        const dpdo__fixture *f = t->vt->fixture;
        if (f && (f->nonprivate || f->noise_in_solver)) continue;
        dpdo_algorithm_options ao;
        dpdo_audit_options o;
        opts(&ao, &o, 2.0, 1, quick() ? 100 : 400, 11);
        o.accountant = NULL; /* the type's own accounting (sampled releases) */
        dpdo_audit_result r;
        int rc = run_audit(tn, &ao, &o, 0, 0, 0, &r);
        CHECK_MSG(rc == DPDO_OK, "%s: audit run: %d", tn, rc);
        if (rc) continue;
        CHECK_MSG(r.verdict != DPDO_AUDIT_VIOLATION && r.eps_lower <= r.eps_claimed,
                  "%s: eps_lower %g, claimed %g, verdict %s", tn, r.eps_lower, r.eps_claimed,
                  dpdo_audit_verdict_name(r.verdict));
        printf("# %-16s eps_lower %.3f, claimed %.3f: %s\n", tn, r.eps_lower, r.eps_claimed,
               dpdo_audit_verdict_name(r.verdict));
        n++;
    }
    CHECK(n >= 7);
}

int main(void)
{
    RUN(test_incbeta_against_binomial_sums);
    RUN(test_incbeta_inverse_roundtrip);
    RUN(test_clopper_pearson_exact);
    RUN(test_epsilon_from_counts);
    RUN(test_one_run_bound);
    RUN(test_laplace_lower);
    RUN(test_laplace_white);
    RUN(test_api_errors);
    RUN(test_release_smoke);
    RUN(test_weakened_violations);
    RUN(test_wor_pass_hook);
    RUN(test_paper_bound_violated);
    RUN(test_one_run);
    RUN(test_progress_and_cancel);
    RUN(test_out_of_memory);
    RUN(test_fast_keys_equal_public_keys);
    RUN(test_every_private_type);
    return h_finish();
}
