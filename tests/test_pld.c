/* SPDX-License-Identifier: BSD-3-Clause */
/* The pld and auto accountants and the Gaussian-specific without-replacement
 * RDP bound: closed forms (analytic Gaussian, Laplace), the without-
 * replacement dominating pair against direct numerical integration of the
 * hockey-stick divergence of every configuration, the pmf-based construction
 * for discrete noise, published reference values of dp_accounting, the
 * forward differences against quadrature, calibration and the guard with
 * pld/auto, bad input and out-of-memory paths. */
#include <math.h>
#include <stdint.h>
#include "dpdo/dpdo.h"
#include "dpdo/accountant.h"
#include "core/core_impl.h"
#include "privacy/privacy_impl.h"
#include "harness.h"

/* one-node ledger with T releases of one event; returns the accountant */
typedef struct run {
    dpdo_sampling *s;
    dpdo_event *ev;
    dpdo_ledger *l;
    dpdo_accountant *a;
} run;

static void run_open(run *r, const char *type, int kind, double q, int64_t n, int64_t m, int laplace, double sigma,
                     int64_t T, double h)
{
    memset(r, 0, sizeof *r);
    CHECK_EQ(dpdo_sampling_create(&r->s), DPDO_OK);
    if (kind == DPDO_SAMPLING_POISSON) CHECK_EQ(dpdo_sampling_set_poisson(r->s, q), DPDO_OK);
    if (kind == DPDO_SAMPLING_WOR) CHECK_EQ(dpdo_sampling_set_wor(r->s, n, m), DPDO_OK);
    CHECK_EQ(dpdo_event_create(&r->ev), DPDO_OK);
    if (laplace)
        CHECK_EQ(dpdo_event_set_laplace(r->ev, r->s, 1.0, sigma), DPDO_OK);
    else
        CHECK_EQ(dpdo_event_set_gaussian(r->ev, r->s, 1.0, sigma), DPDO_OK);
    CHECK_EQ(dpdo_ledger_create(&r->l, 1), DPDO_OK);
    if (T > 0) CHECK_EQ(dpdo_ledger_charge(r->l, r->ev, T, NULL, -1), DPDO_OK);
    dpdo_accountant_options o;
    dpdo_accountant_options_init(&o, sizeof o);
    if (h > 0) o.pld_interval = h;
    CHECK_EQ(dpdo_accountant_create(&r->a, dpdo_accountant_type_find(type), NULL, r->l, &o), DPDO_OK);
}

static void run_close(run *r)
{
    dpdo_accountant_destroy(r->a);
    dpdo_ledger_destroy(r->l);
    dpdo_event_destroy(r->ev);
    dpdo_sampling_destroy(r->s);
}

static double Phi(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }
static double npdf(double x) { return exp(-0.5 * x * x) / sqrt(2.0 * M_PI); }

/* ---- closed forms ----------------------------------------------------------------- */

/* The interval [lower, upper] of the pld accountant contains the exact
 * epsilon of T unsampled Gaussian releases (analytic Gaussian, Balle-Wang),
 * at several noise levels, deltas and discretisations; the upper bound is
 * close (connect the dots is exact at the grid points). */
static void gaussian_interval_contains_exact(void)
{
    const double sig[] = {0.5, 1.0, 5.0, 20.0};
    const double dl[] = {1e-3, 1e-6, 1e-10};
    const int64_t Ts[] = {1, 10};
    const double hs[] = {1e-4, 1e-3};
    for (int i = 0; i < 4; i++)
        for (int t = 0; t < 2; t++)
            for (int k = 0; k < 2; k++) {
                run r;
                run_open(&r, "pld", DPDO_SAMPLING_NONE, 1, 0, 0, 0, sig[i], Ts[t], hs[k]);
                for (int j = 0; j < 3; j++) {
                    double lo, hi, ex;
                    CHECK_EQ(dpdo_accountant_epsilon_bounds(r.a, -1, dl[j], &lo, &hi), DPDO_OK);
                    CHECK_EQ(dpdo_gaussian_epsilon(sqrt((double)Ts[t]) / sig[i], dl[j], &ex), DPDO_OK);
                    CHECK_MSG(lo <= ex && ex <= hi * (1 + 1e-12), "sigma %g T %lld delta %g h %g: exact %.10g not in [%.10g, %.10g]",
                              sig[i], (long long)Ts[t], dl[j], hs[k], ex, lo, hi);
                    /* magnitudes: the upper bound is within 2h of exact, the interval narrower than 20 sqrt(T) h */
                    CHECK_MSG(hi - ex <= 2 * hs[k] + 1e-9, "upper %.10g vs exact %.10g", hi, ex);
                    CHECK_MSG(hi - lo <= 20 * sqrt((double)Ts[t]) * hs[k] + 1e-12, "interval [%g, %g]", lo, hi);
                    double d;
                    CHECK_EQ(dpdo_accountant_delta(r.a, -1, hi, &d), DPDO_OK);
                    /* the delta query composes with its own tilt (pld.c): another proven bound,
                     * within 1e-4 of the one the epsilon query met */
                    CHECK_MSG(d <= dl[j] * (1 + 1e-4) && d >= dl[j] * 0.5, "delta(eps_hi) = %g for %g", d, dl[j]);
                }
                CHECK_STR_CONTAINS(dpdo_accountant_source(r.a), "pld");
                run_close(&r);
            }
}

/* Laplace without sampling: delta(eps) = 1 - e^{(eps - 1/lambda)/2} exactly;
 * the pld delta is an upper bound within the discretisation */
static void laplace_closed_form(void)
{
    const double lam[] = {0.5, 1.0, 4.0};
    for (int i = 0; i < 3; i++) {
        run r;
        run_open(&r, "pld", DPDO_SAMPLING_NONE, 1, 0, 0, 1, lam[i], 1, 1e-4);
        for (double e = 0.0; e < 1.0 / lam[i]; e += 0.1 / lam[i]) {
            double d, ex = -expm1((e - 1.0 / lam[i]) / 2.0);
            CHECK_EQ(dpdo_accountant_delta(r.a, -1, e, &d), DPDO_OK);
            CHECK_MSG(d >= ex * (1 - 1e-9) && d <= ex + 1e-4, "lambda %g eps %g: %g vs %g", lam[i], e, d, ex);
        }
        double d;
        CHECK_EQ(dpdo_accountant_delta(r.a, -1, 1.0 / lam[i] + 1e-3, &d), DPDO_OK);
        CHECK(d < 1e-12); /* beyond the largest loss (and its grid point): only the FFT allowance */
        run_close(&r);
    }
}

/* ---- without replacement: the dominating pair ------------------------------------------- */

/* hockey-stick divergence H_{e^eps}(P || Q) of P = (1-g) N(u0) + g N(u1),
 * Q = (1-g) N(u0) + g N(u2) (unit variance), 1-D, by a fine midpoint rule */
static double hs_1d(double g, double u0, double u1, double u2, double eps)
{
    const double lo = -12.0 + fmin(u0, fmin(u1, u2)), hi = 12.0 + fmax(u0, fmax(u1, u2));
    const int n = 60000;
    double dx = (hi - lo) / n, s = 0.0, c = exp(eps);
    for (int i = 0; i < n; i++) {
        double x = lo + (i + 0.5) * dx;
        double p = (1 - g) * npdf(x - u0) + g * npdf(x - u1);
        double q = (1 - g) * npdf(x - u0) + g * npdf(x - u2);
        if (p > c * q) s += p - c * q;
    }
    return s * dx;
}

/* 2-D: u0 = (0,0), u1 = (mu,0), u2 = (mu/2, mu sqrt3/2): all pairwise distances mu */
static double hs_2d_equilateral(double g, double mu, double eps, int swap)
{
    const int n = 500;
    const double lo = -8.0, hi = 8.0 + mu, dx = (hi - lo) / n, c = exp(eps);
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        double x = lo + (i + 0.5) * dx;
        double a0 = npdf(x), a1 = npdf(x - mu), a2 = npdf(x - mu / 2);
        for (int j = 0; j < n; j++) {
            double y = lo + (j + 0.5) * dx;
            double b0 = npdf(y), b2 = npdf(y - mu * sqrt(3.0) / 2);
            double p = (1 - g) * a0 * b0 + g * a1 * b0, q = (1 - g) * a0 * b0 + g * a2 * b2;
            if (swap) {
                double t = p;
                p = q;
                q = t;
            }
            if (p > c * q) s += p - c * q;
        }
    }
    return s * dx * dx;
}

/* For sampling m of n without replacement, replace-one: every configuration
 * of (the released value without the changed row u0, with it u1, with its
 * replacement u2), pairwise distances <= Delta, in both orders, has a
 * hockey-stick divergence <= the pld's delta (one release), and the remove
 * configuration attains it: the pair is dominating and tight. */
static void wor_dominating_pair(void)
{
    const double gs[] = {0.01, 0.1, 0.5};
    const double mus[] = {0.5, 1.0, 2.0};
    const double es[] = {0.05, 0.3, 1.0};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            run r;
            run_open(&r, "pld", DPDO_SAMPLING_WOR, 0, 1000, (int64_t)(gs[i] * 1000), 0, 1.0 / mus[j], 1, 1e-4);
            for (int k = 0; k < 3; k++) {
                double d;
                CHECK_EQ(dpdo_accountant_delta(r.a, -1, es[k], &d), DPDO_OK);
                double mu = mus[j], g = gs[i];
                double cfg[][3] = {{0, mu, 0}, {0, 0, mu}, {mu / 2, 0, mu}, {0, mu / 2, -mu / 2}, {mu, 0, mu / 2}};
                double worst = 0.0;
                for (int c = 0; c < 5; c++)
                    for (int sw = 0; sw < 2; sw++) {
                        double v = sw ? hs_1d(g, cfg[c][0], cfg[c][2], cfg[c][1], es[k])
                                      : hs_1d(g, cfg[c][0], cfg[c][1], cfg[c][2], es[k]);
                        CHECK_MSG(v <= d * (1 + 1e-6) + 1e-12, "g %g mu %g eps %g cfg %d swap %d: %.10g > pld %.10g", g, mu,
                                  es[k], c, sw, v, d);
                        if (v > worst) worst = v;
                    }
                /* tight: the remove configuration attains it (up to the discretisation) */
                CHECK_MSG(worst >= d * (1 - 2e-3) - 1e-12, "g %g mu %g eps %g: worst %.10g, pld %.10g", g, mu, es[k], worst, d);
                if (j == 1 && k == 1) { /* 2-D equilateral configuration, both orders */
                    double v0 = hs_2d_equilateral(g, mu, es[k], 0), v1 = hs_2d_equilateral(g, mu, es[k], 1);
                    CHECK_MSG(v0 <= d * (1 + 1e-4) + 1e-10 && v1 <= d * (1 + 1e-4) + 1e-10, "2-D: %g %g vs %g", v0, v1, d);
                }
            }
            run_close(&r);
        }
}

/* The without-replacement pld is below the RDP figure and above Poisson's
 * with the same rate in the large-composition regime (sanity of magnitudes),
 * and m = n equals the unsampled Gaussian */
static void wor_magnitudes(void)
{
    run r1, r2, r3;
    run_open(&r1, "pld", DPDO_SAMPLING_WOR, 0, 60000, 600, 0, 1.0, 1000, 0);
    run_open(&r2, "rdp", DPDO_SAMPLING_WOR, 0, 60000, 600, 0, 1.0, 1000, 0);
    double e1, e2;
    CHECK_EQ(dpdo_accountant_epsilon(r1.a, -1, 1e-5, &e1, NULL), DPDO_OK);
    CHECK_EQ(dpdo_accountant_epsilon(r2.a, -1, 1e-5, &e2, NULL), DPDO_OK);
    CHECK_MSG(e1 < e2 && e1 > 0.3 * e2, "pld %g rdp %g", e1, e2);
    run_close(&r1);
    run_close(&r2);
    run_open(&r3, "pld", DPDO_SAMPLING_WOR, 0, 50, 50, 0, 3.0, 20, 1e-4);
    double e3, ex;
    CHECK_EQ(dpdo_accountant_epsilon(r3.a, -1, 1e-6, &e3, NULL), DPDO_OK);
    dpdo_gaussian_epsilon(sqrt(20.0) / 3.0, 1e-6, &ex);
    CHECK_MSG(e3 >= ex && e3 - ex < 1e-3, "%g vs exact %g", e3, ex);
    run_close(&r3);
}

/* ---- small delta against 60-digit exact values ---------------------------------------------- */

/* The upper end is a proven bound at every delta it answers, and the lower end too: unsampled
 * Gaussians composed T times (sensitivity 1, noise sigma) against eps(delta) of the Gaussian with
 * mu = sqrt(T) / sigma, and Poisson-subsampled pairs (one release, the remove and add pairs'
 * closed forms), each computed to 60 digits with mpmath by scripts/pld-exact-values.py (printed
 * here to 17). Before the proven bound, the upper ends were 224.741632, 1567.11983 and 36.27229:
 * below the exact values. */
static void pld_small_delta_exact(void)
{
    struct {
        int samp;
        double q, sigma, h, delta, exact;
        int64_t T;
    } ref[] = {
        {DPDO_SAMPLING_NONE, 1, 2.0, 1e-3, 1e-10, 224.74172299610703, 1000},
        {DPDO_SAMPLING_NONE, 1, 2.0, 1e-3, 1e-10, 1567.1258274830273, 10000},
        {DPDO_SAMPLING_NONE, 1, 8.0, 1e-4, 1e-13, 36.297162608474631, 1000},
        {DPDO_SAMPLING_NONE, 1, 8.0, 1e-3, 1e-13, 36.297162608474631, 1000},
        /* Poisson pairs, one release: the larger of the remove and add directions' epsilons */
        {DPDO_SAMPLING_POISSON, 0.5, 0.5, 1e-3, 1e-10, 13.362782522754719, 1},
        {DPDO_SAMPLING_POISSON, 0.5, 0.5, 1e-4, 1e-10, 13.362782522754719, 1},
        {DPDO_SAMPLING_POISSON, 0.01, 0.25, 1e-3, 1e-13, 29.632943821056745, 1},
    };
    for (size_t i = 0; i < sizeof ref / sizeof *ref; i++) {
        run r;
        run_open(&r, "pld", ref[i].samp, ref[i].q, 0, 0, 0, ref[i].sigma, ref[i].T, ref[i].h);
        double lo = NAN, hi = NAN;
        int rc = dpdo_accountant_epsilon_bounds(r.a, -1, ref[i].delta, &lo, &hi);
        CHECK_MSG(rc == DPDO_OK, "case %zu: %s", i, dpdo_accountant_errmsg(r.a));
        printf("# sigma %g q %g T %lld delta %g h %g: [%.9f, %.9f], exact %.9f\n", ref[i].sigma, ref[i].q,
               (long long)ref[i].T, ref[i].delta, ref[i].h, lo, hi, ref[i].exact);
        CHECK_MSG(hi >= ref[i].exact && lo <= ref[i].exact, "case %zu: exact %.12g not in [%.12g, %.12g]", i,
                  ref[i].exact, lo, hi);
        /* magnitude: the bound is not vacuous (within 30 bins plus the fine-grain slack) */
        CHECK_MSG(hi - ref[i].exact <= 30 * ref[i].h + 1e-3 * ref[i].exact, "case %zu: %.12g vs %.12g", i, hi,
                  ref[i].exact);
        /* auto (the smallest of rdp's and pld's figures) answers above the exact value too */
        run_open(&r, "auto", ref[i].samp, ref[i].q, 0, 0, 0, ref[i].sigma, ref[i].T, ref[i].h);
        double ea = NAN;
        CHECK_EQ(dpdo_accountant_epsilon(r.a, -1, ref[i].delta, &ea, NULL), DPDO_OK);
        /* unsampled ledgers: auto's figure is the exact accountant's closed-form root solved in
         * double precision (a relative error of a few units of 1e-16 either side, measured here);
         * pld's everywhere else */
        const char *src = dpdo_accountant_source(r.a);
        double slack = strcmp(src, "exact") == 0 ? 64 * 0x1p-53 * ref[i].exact : 0.0;
        CHECK_MSG(ea >= ref[i].exact - slack, "case %zu: auto (%s) %.17g below exact %.17g", i, src, ea,
                  ref[i].exact);
        run_close(&r);
    }
}

/* Intervals at different intervals h must agree (each contains the exact value): Poisson
 * q = 0.99, sigma = 8, T = 1000, delta = 1e-13, where the upper end at h = 1e-4 (35.8280) was
 * below the lower end at h = 1e-5 (35.8915), and auto's figure at delta in [1e-13, 1e-10] for
 * this sampled ledger lies inside every interval's upper end's reach (it is one of them or rdp's). */
static void pld_intervals_agree(void)
{
    static const double hs[] = {1e-3, 1e-4, 1e-5};
    static const double dls[] = {1e-13, 1e-10};
    for (size_t j = 0; j < sizeof dls / sizeof *dls; j++) {
        double maxlo = 0.0, minhi = INFINITY;
        for (size_t k = 0; k < sizeof hs / sizeof *hs; k++) {
            run r;
            run_open(&r, "pld", DPDO_SAMPLING_POISSON, 0.99, 0, 0, 0, 8.0, 1000, hs[k]);
            double lo = NAN, hi = NAN;
            int rc = dpdo_accountant_epsilon_bounds(r.a, -1, dls[j], &lo, &hi);
            CHECK_MSG(rc == DPDO_OK, "h %g: %s", hs[k], dpdo_accountant_errmsg(r.a));
            printf("# q 0.99 sigma 8 T 1000 delta %g h %g: [%.6f, %.6f]\n", dls[j], hs[k], lo, hi);
            if (rc == DPDO_OK) maxlo = fmax(maxlo, lo), minhi = fmin(minhi, hi);
            run_close(&r);
        }
        CHECK_MSG(maxlo <= minhi, "delta %g: the intervals do not meet: largest lower %.9g > smallest upper %.9g",
                  dls[j], maxlo, minhi);
        run r;
        run_open(&r, "auto", DPDO_SAMPLING_POISSON, 0.99, 0, 0, 0, 8.0, 1000, 0);
        double ea = NAN;
        CHECK_EQ(dpdo_accountant_epsilon(r.a, -1, dls[j], &ea, NULL), DPDO_OK);
        printf("# auto at delta %g: %.6f (%s)\n", dls[j], ea, dpdo_accountant_source(r.a));
        CHECK_MSG(ea >= maxlo, "delta %g: auto %.9g below a proven lower end %.9g", dls[j], ea, maxlo);
        run_close(&r);
    }
}

/* ---- Poisson: dp_accounting's reference values -------------------------------------- */

/* Values of google/differential-privacy python/dp_accounting (PLDAccountant,
 * pessimistic connect-the-dots, PoissonSampledDpEvent(q, GaussianDpEvent(sigma))
 * composed T times, get_epsilon(delta)), run by bench/compare_dp_accounting.py. */
static void poisson_reference_values(void)
{
    struct {
        double q, sigma, h, delta, eps;
        int64_t T;
    } ref[] = {
        {0.01, 1.0, 1e-4, 1e-5, 6.1877449761406655, 10000},
        {0.01, 1.0, 1e-3, 1e-5, 6.190975837091363, 10000},
    };
    for (size_t i = 0; i < sizeof ref / sizeof *ref; i++) {
        run r;
        run_open(&r, "pld", DPDO_SAMPLING_POISSON, ref[i].q, 0, 0, 0, ref[i].sigma, ref[i].T, ref[i].h);
        double lo, hi;
        CHECK_EQ(dpdo_accountant_epsilon_bounds(r.a, -1, ref[i].delta, &lo, &hi), DPDO_OK);
        /* a proven upper bound (the FFT's rounding bounded, pld.c) sits above dp_accounting's
         * estimate, by at most 10 bins of the interval here */
        CHECK_MSG(hi >= ref[i].eps * (1 - 1e-9) && hi - ref[i].eps <= 10 * ref[i].h, "%.10g vs %.10g", hi, ref[i].eps);
        CHECK(lo < hi && lo > 0.9 * hi);
        run_close(&r);
        double er;
        run_open(&r, "rdp", DPDO_SAMPLING_POISSON, ref[i].q, 0, 0, 0, ref[i].sigma, ref[i].T, 0);
        CHECK_EQ(dpdo_accountant_epsilon(r.a, -1, ref[i].delta, &er, NULL), DPDO_OK);
        CHECK(er > hi); /* the tighter figure */
        run_close(&r);
    }
}

/* ---- discrete noise: pmf-based construction ------------------------------------------- */

typedef struct dg_ctx {
    double s2, lnorm; /* discrete Gaussian: sigma^2, log normaliser */
    double t;         /* discrete Laplace scale (0: Gaussian) */
} dg_ctx;

static double dg_logpmf(void *c, int64_t k)
{
    dg_ctx *x = c;
    if (x->t > 0) return -fabs((double)k) / x->t - x->lnorm;
    return -(double)k * (double)k / (2 * x->s2) - x->lnorm;
}

static double eps_of_pmfs(const dpdo__pld_pmf *m0, const dpdo__pld_pmf *m1, double T, double h, double delta)
{
    char err[DPDO__ERRMSG_LEN];
    dpdo__pld_work wk;
    memset(&wk, 0, sizeof wk);
    double e = 0.0;
    const dpdo__pld_pmf *ms[2] = {m0, m1};
    for (int d = 0; d < 2; d++) {
        dpdo__pld_dist dist;
        double lam = dpdo__pld_tilt_for(&ms[d], &T, 1, log(1.0 / delta));
        CHECK_EQ(dpdo__pld_compose_tilted(&ms[d], &T, 1, h, lam, &wk, &dist, err), DPDO_OK);
        double v = dpdo__pld_eps_upper(&dist, delta);
        if (v > e) e = v;
        dpdo__pld_dist_free(&dist);
    }
    dpdo__pld_work_free(&wk);
    return e;
}

/* A discrete Gaussian with sigma = 40 grid units and sensitivity 40 units is
 * within a hair of the continuous Gaussian with mu = 1 (Canonne-Kamath-Steinke:
 * the difference is ~e^{-2 pi^2 sigma^2}); a discrete Laplace with t = 25 and
 * shift 25 is close to the continuous Laplace with lambda = 1; both
 * directions of Poisson(0.05) too. The pmfs carry total mass 1. */
static void discrete_pmf_construction(void)
{
    char err[DPDO__ERRMSG_LEN];
    const double h = 1e-4;
    for (int lap = 0; lap < 2; lap++) {
        dg_ctx c = {1600.0, 0.0, lap ? 25.0 : 0.0};
        int64_t K = lap ? 1500 : 600, shift = lap ? 25 : 40;
        double z = 0.0;
        for (int64_t k = -K; k <= K; k++) z += exp(dg_logpmf(&c, k));
        c.lnorm = log(z);
        for (int samp = 0; samp < 2; samp++) {
            double q = samp ? 0.05 : 1.0;
            dpdo__pld_pmf m0, m1;
            CHECK_EQ(dpdo__pld_from_logpmf(dg_logpmf, &c, -K, K, shift, q, 0, h, &m0, err), DPDO_OK);
            CHECK_EQ(dpdo__pld_from_logpmf(dg_logpmf, &c, -K, K, shift, q, 1, h, &m1, err), DPDO_OK);
            double tot = m0.inf;
            for (int64_t i = 0; i < m0.n; i++) tot += m0.p[i];
            CHECK_NEAR(tot, 1.0, 1e-12);
            /* the continuous counterpart through the event path */
            dpdo__event_desc ev;
            memset(&ev, 0, sizeof ev);
            ev.mech = lap ? DPDO_MECH_LAPLACE : DPDO_MECH_GAUSSIAN;
            ev.samp.kind = samp ? DPDO_SAMPLING_POISSON : DPDO_SAMPLING_NONE;
            ev.samp.q = q;
            ev.sens = 1.0;
            ev.noise = 1.0;
            dpdo__pld_pmf c0, c1;
            CHECK_EQ(dpdo__pld_event(&ev, 0, h, 0, &c0, err), DPDO_OK);
            CHECK_EQ(dpdo__pld_event(&ev, samp ? 1 : 0, h, 0, &c1, err), DPDO_OK);
            const double Ts[] = {1, 50};
            for (int t = 0; t < 2; t++) {
                double ed = eps_of_pmfs(&m0, &m1, Ts[t], h, 1e-6), ec = eps_of_pmfs(&c0, &c1, Ts[t], h, 1e-6);
                double tol = lap ? 0.03 : 2e-3;
                CHECK_MSG(fabs(ed - ec) <= tol * ec + 2e-3, "lap %d q %g T %g: discrete %g continuous %g", lap, q,
                          Ts[t], ed, ec);
            }
            dpdo__pld_pmf_free(&m0);
            dpdo__pld_pmf_free(&m1);
            dpdo__pld_pmf_free(&c0);
            dpdo__pld_pmf_free(&c1);
        }
    }
    dpdo__pld_pmf m;
    dg_ctx c = {4.0, 0.0, 0.0};
    CHECK_EQ(dpdo__pld_from_logpmf(dg_logpmf, &c, 5, 2, 1, 1.0, 0, h, &m, err), DPDO_E_INVAL);
    CHECK_EQ(dpdo__pld_from_logpmf(dg_logpmf, &c, -5, 5, 1, 0.0, 0, h, &m, err), DPDO_E_INVAL);
}

/* ---- auto -------------------------------------------------------------------------- */

static double eps_of(const char *type, int kind, double q, int64_t n, int64_t m, int lap, double s, int64_t T,
                     double delta, const char **src)
{
    run r;
    run_open(&r, type, kind, q, n, m, lap, s, T, 0);
    double e = NAN;
    int rc = dpdo_accountant_epsilon(r.a, -1, delta, &e, NULL);
    if (rc) e = INFINITY;
    static char buf[16];
    if (src) {
        snprintf(buf, sizeof buf, "%s", dpdo_accountant_source(r.a));
        *src = buf;
    }
    run_close(&r);
    return e;
}

/* auto is the minimum of the valid accountants, names its source, and for
 * Laplace and every sampling kind never exceeds rdp */
static void auto_is_the_minimum(void)
{
    struct {
        int kind, lap;
        double q, s;
        int64_t T;
    } c[] = {
        {DPDO_SAMPLING_NONE, 0, 1, 5, 100},        {DPDO_SAMPLING_POISSON, 0, 0.01, 1, 1000},
        {DPDO_SAMPLING_POISSON, 0, 0.01, 20, 10},  {DPDO_SAMPLING_WOR, 0, 0.01, 1, 1000},
        {DPDO_SAMPLING_WOR, 0, 0.01, 30, 1000},    {DPDO_SAMPLING_POISSON, 1, 0.05, 2, 200},
        {DPDO_SAMPLING_NONE, 1, 1, 10, 30},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        const char *src;
        int64_t n = 60000, m = (int64_t)(c[i].q * 60000);
        double ea = eps_of("auto", c[i].kind, c[i].q, n, m, c[i].lap, c[i].s, c[i].T, 1e-5, &src);
        double er = eps_of("rdp", c[i].kind, c[i].q, n, m, c[i].lap, c[i].s, c[i].T, 1e-5, NULL);
        double ep = eps_of("pld", c[i].kind, c[i].q, n, m, c[i].lap, c[i].s, c[i].T, 1e-5, NULL);
        double ee = eps_of("exact", c[i].kind, c[i].q, n, m, c[i].lap, c[i].s, c[i].T, 1e-5, NULL);
        double mn = fmin(er, fmin(ep, ee));
        CHECK_MSG(ea == mn, "case %zu: auto %g, min %g (rdp %g pld %g exact %g)", i, ea, mn, er, ep, ee);
        const char *want = ea == ee ? "exact" : ea == ep ? "pld" : "rdp";
        CHECK_MSG(strcmp(src, want) == 0, "case %zu: source %s, want %s", i, src, want);
    }
    /* delta(eps) is the minimum too */
    run r;
    run_open(&r, "auto", DPDO_SAMPLING_POISSON, 0.01, 0, 0, 0, 1.0, 1000, 0);
    double d, dr, dp;
    CHECK_EQ(dpdo_accountant_delta(r.a, -1, 1.0, &d), DPDO_OK);
    run_close(&r);
    run_open(&r, "rdp", DPDO_SAMPLING_POISSON, 0.01, 0, 0, 0, 1.0, 1000, 0);
    CHECK_EQ(dpdo_accountant_delta(r.a, -1, 1.0, &dr), DPDO_OK);
    run_close(&r);
    run_open(&r, "pld", DPDO_SAMPLING_POISSON, 0.01, 0, 0, 0, 1.0, 1000, 0);
    CHECK_EQ(dpdo_accountant_delta(r.a, -1, 1.0, &dp), DPDO_OK);
    run_close(&r);
    CHECK(d == fmin(dr, dp) && dp < dr);
}

/* auto's pld composes at most 2^17 bins; the Chernoff window that decides the
 * bins must follow the release count monotonically. A 9-point lambda grid gave
 * a window of 131,075 bins at T = 3500 (rdp's 1.74 reported, pld 0.644) but
 * 89,165 at T = 4700: auto jumped to rdp for T in 3500..4096 and back. */
static void auto_window_monotone(void)
{
    static const int64_t T[] = {3000, 3499, 3500, 3800, 4096, 4700, 6000};
    double prev = 0.0;
    for (size_t i = 0; i < sizeof T / sizeof *T; i++) {
        const char *src;
        double ea = eps_of("auto", DPDO_SAMPLING_WOR, 0, 1500, 1, 0, 0.5025, T[i], 0.01, &src);
        double ep = eps_of("pld", DPDO_SAMPLING_WOR, 0, 1500, 1, 0, 0.5025, T[i], 0.01, NULL);
        double er = eps_of("rdp", DPDO_SAMPLING_WOR, 0, 1500, 1, 0, 0.5025, T[i], 0.01, NULL);
        /* auto's window (2^17 bins) may take a smaller tilt than pld's (pld.c): a slightly looser
         * proven bound, never rdp's */
        CHECK_MSG(ea >= ep && ea - ep <= 1e-3 * ep && strcmp(src, "pld") == 0, "T = %lld: auto %g (%s), pld %g",
                  (long long)T[i], ea, src, ep);
        CHECK_MSG(ep < 0.5 * er, "T = %lld: pld %g not well below rdp %g", (long long)T[i], ep, er);
        CHECK_MSG(ea > prev, "T = %lld: auto %g not above %g at fewer releases", (long long)T[i], ea, prev);
        prev = ea;
    }
}

/* calibration with pld and auto meets the target, is tighter than rdp's, and
 * the budget guard under auto stops exactly where calibrate_steps says */
static void calibration_and_guard(void)
{
    dpdo_sampling *s;
    dpdo_sampling_create(&s);
    dpdo_sampling_set_wor(s, 60000, 600);
    dpdo_ledger *l;
    dpdo_ledger_create(&l, 3);
    double sig[3];
    const char *ty[] = {"rdp", "pld", "auto"};
    for (int i = 0; i < 3; i++) {
        dpdo_accountant *a;
        CHECK_EQ(dpdo_accountant_create(&a, dpdo_accountant_type_find(ty[i]), NULL, l, NULL), DPDO_OK);
        CHECK_EQ(dpdo_accountant_calibrate_sigma(a, s, 1.0, 1000, 1.0, 1e-5, &sig[i]), DPDO_OK);
        dpdo_accountant_destroy(a);
    }
    CHECK_REL(sig[0], 2.7076, 1e-3); /* dp_accounting's RDP figure (issue 16) */
    CHECK_MSG(sig[1] < sig[0] && sig[1] > 0.5 * sig[0], "pld %g rdp %g", sig[1], sig[0]);
    CHECK_EQ(sig[2], fmin(sig[0], sig[1]));
    /* the calibrated sigma meets the target under pld */
    dpdo_event *ev;
    dpdo_event_create(&ev);
    dpdo_event_set_gaussian(ev, s, 1.0, sig[1]);
    dpdo_ledger_charge(l, ev, 1000, NULL, -1);
    dpdo_accountant *a;
    dpdo_accountant_create(&a, dpdo_accountant_type_find("pld"), NULL, l, NULL);
    double e;
    CHECK_EQ(dpdo_accountant_epsilon(a, -1, 1e-5, &e, NULL), DPDO_OK);
    CHECK(e <= 1.0 && e > 1.0 - 1e-6);
    dpdo_accountant_destroy(a);
    dpdo_ledger_reset(l);
    /* guard under auto (Poisson, 3 nodes, node 1 charged every other round) */
    dpdo_sampling_set_poisson(s, 0.02);
    dpdo_event_set_gaussian(ev, s, 1.0, 1.5);
    CHECK_EQ(dpdo_accountant_create(&a, dpdo_accountant_type_find("auto"), NULL, l, NULL), DPDO_OK);
    double steps;
    CHECK_EQ(dpdo_accountant_calibrate_steps(a, s, 1.0, 1.5, 0.8, 1e-5, &steps), DPDO_OK);
    CHECK_EQ(dpdo_accountant_set_budget(a, 0.8, 1e-5), DPDO_OK);
    int64_t all[3] = {0, 1, 2};
    int64_t t = 0;
    for (;; t++) {
        int32_t ex;
        CHECK_EQ(dpdo_accountant_would_exceed(a, ev, 1, all, 3, &ex, NULL), DPDO_OK);
        if (ex) break;
        CHECK_EQ(dpdo_ledger_charge(l, ev, 1, all, 3), DPDO_OK);
        if (t > 100000) break;
    }
    CHECK_EQ(t, (int64_t)steps);
    CHECK_EQ(dpdo_accountant_epsilon(a, -1, 1e-5, &e, NULL), DPDO_OK);
    CHECK(e <= 0.8);
    dpdo_accountant_destroy(a);
    dpdo_event_destroy(ev);
    dpdo_ledger_destroy(l);
    dpdo_sampling_destroy(s);
}


/* the auto guard's decisions (with its look-ahead and safe table) equal a
 * full auto evaluation of the same hypothetical ledger, round by round, for
 * nodes charged unevenly (node 2 every round, node 0 every other, node 1
 * every third) */
static void guard_matches_full_evaluation(void)
{
    dpdo_sampling *s;
    dpdo_sampling_create(&s);
    dpdo_sampling_set_poisson(s, 0.05);
    dpdo_event *ev;
    dpdo_event_create(&ev);
    dpdo_event_set_gaussian(ev, s, 1.0, 1.0);
    dpdo_ledger *l;
    dpdo_ledger_create(&l, 3);
    dpdo_accountant *g, *f;
    dpdo_accountant_create(&g, dpdo_accountant_type_find("auto"), NULL, l, NULL);
    dpdo_accountant_create(&f, dpdo_accountant_type_find("auto"), NULL, l, NULL);
    const double budget = 2.0;
    dpdo_accountant_set_budget(g, budget, 1e-5);
    int stops = 0, used_pld = 0;
    for (int t = 0; t < 400; t++) {
        int64_t act[3];
        int64_t na = 0;
        if (t % 2 == 0) act[na++] = 0;
        if (t % 3 == 0) act[na++] = 1;
        act[na++] = 2;
        int32_t ex;
        double ea, ef;
        CHECK_EQ(dpdo_accountant_would_exceed(g, ev, 1, act, na, &ex, &ea), DPDO_OK);
        if (strcmp(dpdo_accountant_source(g), "pld") == 0) used_pld = 1;
        CHECK_EQ(dpdo__accountant_epsilon_sel(f, act, na, &ev->d, 1, 1e-5, &ef, NULL), DPDO_OK);
        CHECK_MSG(ex == (ef > budget), "round %d: guard %d (eps_after %.10g), full evaluation %.10g", t, ex, ea, ef);
        CHECK(ea >= ef * (1 - 1e-12));
        if (ex) {
            stops++;
            /* a stopped round: the nodes that would exceed sit out, the others go on */
            int64_t keep[3], nk = 0;
            for (int64_t i = 0; i < na; i++) {
                CHECK_EQ(dpdo__accountant_epsilon_sel(f, &act[i], 1, &ev->d, 1, 1e-5, &ef, NULL), DPDO_OK);
                if (ef <= budget) keep[nk++] = act[i];
            }
            if (nk) dpdo_ledger_charge(l, ev, 1, keep, nk);
            if (nk == 0 && na == 3) break;
            continue;
        }
        dpdo_ledger_charge(l, ev, 1, act, na);
    }
    CHECK(stops > 0 && used_pld);
    dpdo_accountant_destroy(g);
    dpdo_accountant_destroy(f);
    dpdo_ledger_destroy(l);
    dpdo_event_destroy(ev);
    dpdo_sampling_destroy(s);
}

/* per-node queries and heterogeneous ledgers: pld of a ledger = pld of the
 * same releases charged as counts; nodes differ */
static void per_node_and_heterogeneous(void)
{
    dpdo_sampling *s;
    dpdo_sampling_create(&s);
    dpdo_sampling_set_poisson(s, 0.01);
    dpdo_event *e1, *e2;
    dpdo_event_create(&e1);
    dpdo_event_create(&e2);
    dpdo_event_set_gaussian(e1, s, 1.0, 1.0);
    dpdo_event_set_laplace(e2, NULL, 1.0, 20.0);
    dpdo_ledger *l;
    dpdo_ledger_create(&l, 2);
    int64_t n0 = 0;
    dpdo_ledger_charge(l, e1, 500, NULL, -1);
    dpdo_ledger_charge(l, e2, 10, &n0, 1);
    dpdo_accountant *a;
    CHECK_EQ(dpdo_accountant_create(&a, dpdo_accountant_type_find("pld"), NULL, l, NULL), DPDO_OK);
    double w, x0, x1, lo, hi;
    CHECK_EQ(dpdo_accountant_epsilon(a, -1, 1e-5, &w, NULL), DPDO_OK);
    CHECK_EQ(dpdo_accountant_epsilon(a, 0, 1e-5, &x0, NULL), DPDO_OK);
    CHECK_EQ(dpdo_accountant_epsilon(a, 1, 1e-5, &x1, NULL), DPDO_OK);
    CHECK(x0 > x1 && w == x0);
    CHECK_EQ(dpdo_accountant_epsilon_bounds(a, -1, 1e-5, &lo, &hi), DPDO_OK);
    CHECK(hi == w && lo <= hi && lo > 0.9 * hi);
    /* adding the Laplace releases costs at most their pure epsilon 10 * 1/20 */
    CHECK(x0 - x1 <= 0.5 + 1e-9 && x0 - x1 > 0);
    dpdo_accountant_destroy(a);
    dpdo_ledger_destroy(l);
    dpdo_event_destroy(e1);
    dpdo_event_destroy(e2);
    dpdo_sampling_destroy(s);
}

/* ---- the Gaussian-specific without-replacement RDP bound ------------------------------- */

/* reference values of dp_accounting's _compute_rdp_sample_wor_gaussian
 * (rdp_privacy_accountant.py), run by bench/compare_dp_accounting.py */
static void wor_rdp_reference(void)
{
    /* the new bound never exceeds Theorem 9 and agrees with dp_accounting */
    const double qs[] = {0.001, 0.01, 0.05, 0.2}, zs[] = {0.7, 1.0, 2.0, 5.0, 21.84, 100.0};
    const double as[] = {1.5, 2, 3, 4, 5, 6, 8, 10, 12.5, 16, 20, 32, 48, 63, 128, 256};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 6; j++)
            for (int k = 0; k < 16; k++) {
                double r27, r9 = dpdo__rdp_wor_gauss_thm9(qs[i], zs[j], as[k], NULL, 0);
                CHECK_EQ(dpdo_rdp_gaussian(DPDO_SAMPLING_WOR, qs[i], zs[j], as[k], &r27), DPDO_OK);
                CHECK_MSG(r27 <= r9 * (1 + 1e-12), "q %g z %g a %g: %g > thm9 %g", qs[i], zs[j], as[k], r27, r9);
                CHECK(r27 > 0);
            }
    double r;
    dpdo_rdp_gaussian(DPDO_SAMPLING_WOR, 0.01, 21.84, 20, &r);
    CHECK_REL(r, 8.4344451109148e-06, 1e-6);
    dpdo_rdp_gaussian(DPDO_SAMPLING_WOR, 0.05, 2.0, 8, &r);
    CHECK_REL(r, 0.012784276621227062, 1e-6);
    dpdo_rdp_gaussian(DPDO_SAMPLING_WOR, 0.2, 5.0, 12.5, &r);
    CHECK_REL(r, 0.042291044842422194, 1e-6);
    /* the calibration case: sigma within 2% of dp_accounting's 21.84 */
    dpdo_sampling *s;
    dpdo_sampling_create(&s);
    dpdo_sampling_set_wor(s, 60000, 600);
    dpdo_ledger *l;
    dpdo_ledger_create(&l, 1);
    dpdo_accountant *a;
    dpdo_accountant_create(&a, dpdo_accountant_type_find("rdp"), NULL, l, NULL);
    double sig;
    CHECK_EQ(dpdo_accountant_calibrate_sigma(a, s, 1.0, 1000, 0.1, 1e-5, &sig), DPDO_OK);
    CHECK_REL(sig, 21.84, 0.02);
    dpdo_accountant_destroy(a);
    dpdo_ledger_destroy(l);
    dpdo_sampling_destroy(s);
}

/* The forward differences D_l = E[(Y-1)^l] (Y the Gaussian likelihood
 * ratio) behind the bound, against quadrature: the even-order term of
 * log A at order 2 is exact: A_2 <= 1 + g^2 min(4 (e^{2c}-1), 2e^{2c}), and at
 * order 4 with z large the D_4 term is used: check A_4 against the formula
 * with D_4 computed by quadrature. */
static double d_quad(double z, int l)
{
    const int n = 200000;
    double lo = -40, hi = 40, dx = (hi - lo) / n, s = 0;
    for (int i = 0; i < n; i++) {
        double x = lo + (i + 0.5) * dx;
        s += npdf(x) * pow(expm1(x / z - 1 / (2 * z * z)), l);
    }
    return s * dx;
}

static void wor_forward_differences(void)
{
    const double zs[] = {3.0, 21.84, 300.0};
    for (int i = 0; i < 3; i++) {
        double z = zs[i], g = 0.01, c = 1 / (2 * z * z);
        double D4 = d_quad(z, 4), D2 = expm1(2 * c);
        /* alpha = 4: 1 + 6 g^2 min(4 D2, 2e^{2c}) + 4 g^3 min(4 sqrt(D2 D4), 2e^{6c}) + g^4 min(4 D4, 2e^{12c}) */
        double A = 1 + 6 * g * g * fmin(4 * D2, 2 * exp(2 * c)) + 4 * g * g * g * fmin(4 * sqrt(D2 * D4), 2 * exp(6 * c)) +
                   g * g * g * g * fmin(4 * D4, 2 * exp(12 * c));
        double r;
        dpdo_rdp_gaussian(DPDO_SAMPLING_WOR, g, z, 4, &r);
        CHECK_REL(r, log(A) / 3, 1e-7);
    }
    (void)Phi;
}

/* ---- bad input, options, out of memory ------------------------------------------------ */

static void bad_input(void)
{
    dpdo_ledger *l;
    dpdo_ledger_create(&l, 2);
    dpdo_accountant_options o;
    dpdo_accountant_options_init(&o, sizeof o);
    CHECK_EQ(o.pld_interval, DPDO_PLD_DEFAULT_INTERVAL);
    dpdo_accountant *a = NULL;
    o.pld_interval = 0;
    CHECK_EQ(dpdo_accountant_create(&a, dpdo_accountant_type_find("pld"), NULL, l, &o), DPDO_E_INVAL);
    o.pld_interval = 2;
    CHECK_EQ(dpdo_accountant_create(&a, dpdo_accountant_type_find("pld"), NULL, l, &o), DPDO_E_INVAL);
    o.pld_interval = NAN;
    CHECK_EQ(dpdo_accountant_create(&a, dpdo_accountant_type_find("auto"), NULL, l, &o), DPDO_E_INVAL);
    /* an options struct of the 0.1 size (no pld_interval) gets the default */
    dpdo_accountant_options o1;
    dpdo_accountant_options_init(&o1, offsetof(dpdo_accountant_options, pld_interval));
    CHECK_EQ(dpdo_accountant_create(&a, dpdo_accountant_type_find("pld"), NULL, l, &o1), DPDO_OK);
    double e, lo, hi;
    CHECK_EQ(dpdo_accountant_epsilon(a, -1, 1e-5, &e, NULL), DPDO_OK);
    CHECK_EQ(e, 0.0); /* empty ledger */
    CHECK_EQ(dpdo_accountant_epsilon_bounds(a, -1, 1e-5, NULL, &hi), DPDO_E_INVAL);
    CHECK_EQ(dpdo_accountant_epsilon_bounds(NULL, -1, 1e-5, &lo, &hi), DPDO_E_INVAL);
    CHECK_EQ(dpdo_accountant_epsilon_bounds(a, 5, 1e-5, &lo, &hi), DPDO_E_INVAL);
    /* tiny delta: pld declines, auto falls back to rdp */
    dpdo_event *ev;
    dpdo_event_create(&ev);
    dpdo_event_set_gaussian(ev, NULL, 1.0, 3.0);
    dpdo_ledger_charge(l, ev, 10, NULL, -1);
    CHECK_EQ(dpdo_accountant_epsilon(a, -1, 1e-20, &e, NULL), DPDO_E_UNSUPPORTED);
    CHECK_STR_CONTAINS(dpdo_accountant_errmsg(a), "use rdp");
    dpdo_accountant_destroy(a);
    CHECK_EQ(dpdo_accountant_create(&a, dpdo_accountant_type_find("auto"), NULL, l, NULL), DPDO_OK);
    CHECK_EQ(dpdo_accountant_epsilon(a, -1, 1e-20, &e, NULL), DPDO_OK);
    CHECK(isfinite(e) && e > 0);
    dpdo_accountant_destroy(a);
    /* a release too wide for the grid: pld declines with a message, auto uses rdp */
    dpdo_event_set_gaussian(ev, NULL, 1.0, 1e-4);
    dpdo_ledger_charge(l, ev, 1, NULL, -1);
    CHECK_EQ(dpdo_accountant_create(&a, dpdo_accountant_type_find("pld"), NULL, l, NULL), DPDO_OK);
    CHECK_EQ(dpdo_accountant_epsilon(a, -1, 1e-5, &e, NULL), DPDO_E_UNSUPPORTED);
    CHECK_STR_CONTAINS(dpdo_accountant_errmsg(a), "bins");
    dpdo_accountant_destroy(a);
    CHECK_EQ(dpdo_accountant_create(&a, dpdo_accountant_type_find("auto"), NULL, l, NULL), DPDO_OK);
    CHECK_EQ(dpdo_accountant_epsilon(a, -1, 1e-5, &e, NULL), DPDO_OK);
    CHECK_STR_CONTAINS(dpdo_accountant_source(a), "exact"); /* unsampled Gaussians only */
    CHECK_EQ(dpdo_accountant_source(NULL)[0], '\0');
    dpdo_accountant_destroy(a);
    dpdo_event_destroy(ev);
    dpdo_ledger_destroy(l);
}

static void oom(void)
{
    dpdo_sampling *s;
    dpdo_sampling_create(&s);
    dpdo_sampling_set_poisson(s, 0.02);
    dpdo_event *ev;
    dpdo_event_create(&ev);
    dpdo_ledger *l;
    dpdo_ledger_create(&l, 1);
    const char *ty[] = {"pld", "auto"};
    for (int t = 0; t < 2; t++) {
        int failed = 0;
        for (int k = 0; k < 30; k++) {
            dpdo_accountant *a = NULL;
            dpdo__fault_arm(k);
            int rc = dpdo_accountant_create(&a, dpdo_accountant_type_find(ty[t]), NULL, l, NULL);
            dpdo__fault_arm(-1);
            if (rc) {
                CHECK_EQ(rc, DPDO_E_NOMEM);
                CHECK(a == NULL);
                continue;
            }
            dpdo_event_set_gaussian(ev, s, 1.0, 1.0 + 0.01 * k);
            dpdo_ledger_reset(l);
            dpdo_ledger_charge(l, ev, 10, NULL, -1);
            double e, e2;
            dpdo__fault_arm(k % 12);
            rc = dpdo_accountant_epsilon(a, -1, 1e-5, &e, NULL);
            dpdo__fault_arm(-1);
            CHECK(rc == DPDO_OK || rc == DPDO_E_NOMEM);
            failed += rc == DPDO_E_NOMEM;
            CHECK_EQ(dpdo_accountant_epsilon(a, -1, 1e-5, &e2, NULL), DPDO_OK);
            if (rc == DPDO_OK) CHECK_EQ(e, e2);
            dpdo_accountant_destroy(a);
        }
        CHECK(failed > 0);
    }
    dpdo_ledger_destroy(l);
    dpdo_event_destroy(ev);
    dpdo_sampling_destroy(s);
}

#include <time.h>
static double h_now(void){struct timespec t;clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&t);return t.tv_sec+1e-9*t.tv_nsec;}
#undef RUN
#define RUN(f) do{double t0_=h_now();h_run(#f,f);if(getenv("PLD_TIMES"))printf("# %s %.2fs\n",#f,h_now()-t0_);}while(0)
/* ---- the fine lattice Gaussian (docs/privacy.md, "A PLD for the lattice Gaussian") ----------- */

/* The continuous Gaussian's hockey-stick at mu = Delta/sigma, any real eps. */
static double gauss_hs(double mu, double eps)
{
    double a = mu / 2 - eps / mu, b = -mu / 2 - eps / mu;
    return 0.5 * erfc(-a / sqrt(2.0)) - exp(eps) * 0.5 * erfc(-b / sqrt(2.0));
}

/* Exact hockey-stick of the 1-D discrete Gaussian N_Z(0, S^2) against its shift by v, by summation. */
static double dgauss_hs(double S, int v, double eps)
{
    int64_t R = (int64_t)(60 * S) + v + 10;
    double Z = 0, d = 0;
    for (int64_t y = -R; y <= R; y++) Z += exp(-(double)y * (double)y / (2 * S * S));
    for (int64_t y = -R; y <= R + v; y++) {
        double p = exp(-(double)(y - v) * (double)(y - v) / (2 * S * S)), q = exp(-(double)y * (double)y / (2 * S * S));
        double t = (p - exp(eps) * q) / Z;
        if (t > 0) d += t;
    }
    return d;
}

/* The bound e^h1 delta_G(eps - h1 - h2) + e^eps e^-L, one release, d = 1 (u = s2 = 1/S^2, the exact
 * d log(1 + theta_S)), is an upper bound of the exact hockey-stick for every eps on a grid; without
 * the shift the continuous figure is NOT one at small S (so the shift is needed and checked); and at
 * delta = 1e-5 its epsilon exceeds the exact one by about the shift h1 + h2 and no more. */
static void fine_shift_vs_exact(void)
{
    const double Ss[] = {1.5, 3, 10, 40};
    const int vs[] = {1, 2, 5, 20};
    int unshifted_fails = 0;
    for (size_t a = 0; a < sizeof Ss / sizeof *Ss; a++)
        for (size_t b = 0; b < sizeof vs / sizeof *vs; b++) {
            double S = Ss[a];
            int v = vs[b];
            if (v > 4 * S) continue;
            double theta = 0;
            for (int m = 1; m < 10; m++) theta += 2 * exp(-2 * M_PI * M_PI * S * S * m * m);
            double h1, h2, mu = v / S;
            /* the tail parameter as the accountant's delta query: L = eps + 40 */
#define FINE_BOUND(eps)                                                                             \
    (dpdo__pld_fine_shift(1, 1 / (S * S), 1 / (S * S), log1p(theta), (eps) + 40, &h1, &h2),       \
     exp(h1) * gauss_hs(mu, (eps) - h1 - h2) + exp(-40.0))
            for (double eps = 0; eps <= 8; eps += 0.125) {
                double dd = dgauss_hs(S, v, eps);
                double bound = FINE_BOUND(eps);
                CHECK_MSG(dd <= bound * (1 + 1e-9) + 1e-300, "S %g v %d eps %g: exact %.17g > bound %.17g", S, v, eps, dd,
                          bound);
                unshifted_fails += dd > gauss_hs(mu, eps) * (1 + 1e-9) + 1e-15;
            }
            /* tightness at delta = 1e-5: bisection on both */
            double target = 1e-5, lo = 0, hi = 60, blo = 0, bhi = 60;
            if (dgauss_hs(S, v, 0) <= target) continue;
            for (int it = 0; it < 60; it++) {
                double m = (lo + hi) / 2;
                if (dgauss_hs(S, v, m) > target) lo = m; else hi = m;
                double mb = (blo + bhi) / 2;
                if (FINE_BOUND(mb) > target) blo = mb; else bhi = mb;
            }
            double ratio = bhi / hi;
            printf("# fine shift, S %g, v %d: eps(1e-5) exact %.6g, bound %.6g (x %.5f), h1 + h2 = %.3g\n", S, v, hi, bhi,
                   ratio, h1 + h2);
            CHECK_MSG(ratio >= 1 - 1e-9, "S %g v %d: bound eps %g below the exact %g", S, v, bhi, hi);
            /* tight up to the stated shift: eps_bound - eps_exact <= 1.02 (h1 + h2) + 1e-3 (1 + eps); h1 + h2 is
             * about 100 / (24 S^2) here, and about 2.5e-7 per release on the engine's grid (1/S^2 <= 2^-24) */
            if (S >= 3)
                CHECK_MSG(bhi - hi <= 1.02 * (h1 + h2) + 1e-3 * (1 + hi), "S %g v %d: bound eps %g vs exact %g, shift %g", S, v, bhi,
                          hi, h1 + h2);
        }
    printf("# the unshifted continuous figure is below the exact discrete one at %d grid points\n", unshifted_fails);
    CHECK(unshifted_fails > 0);
}

/* A ledger of fine lattice Gaussian releases: pld's epsilon is the continuous Gaussian's plus a
 * small shift (within 1% at 1000 releases), and below rdp's. */
static void fine_ledger(void)
{
    const double T = 1000, z = 50, delta = 1e-2;
    double e[3];
    const int mech[3] = {DPDO_MECH_GAUSSIAN, DPDO_MECH_DISCRETE_GAUSSIAN_FINE, DPDO_MECH_DISCRETE_GAUSSIAN_FINE};
    const char *acc_name[3] = {"pld", "pld", "rdp"};
    for (int k = 0; k < 3; k++) {
        dpdo_ledger *l = NULL;
        dpdo_accountant *a = NULL;
        CHECK_EQ(dpdo_ledger_create(&l, 1), DPDO_OK);
        CHECK_EQ(dpdo_accountant_create(&a, dpdo_accountant_type_find(acc_name[k]), NULL, l, NULL), DPDO_OK);
        dpdo__event_desc d;
        char err[DPDO__ERRMSG_LEN];
        CHECK_EQ(dpdo__event_make(&d, mech[k], NULL, 1.0, z, err), DPDO_OK);
        CHECK_EQ(dpdo__ledger_charge(l, &d, (int64_t)T, NULL, -1), DPDO_OK);
        CHECK_EQ(dpdo_accountant_epsilon(a, 0, delta, &e[k], NULL), DPDO_OK);
        dpdo_accountant_destroy(a);
        dpdo_ledger_destroy(l);
    }
    printf("# %g releases at sigma/Delta %g, delta %g: pld continuous %.6g, pld fine lattice %.6g, rdp %.6g\n", T, z,
           delta, e[0], e[1], e[2]);
    CHECK(e[1] > e[0]);
    CHECK_MSG(e[1] < 1.01 * e[0], "fine %g vs continuous %g", e[1], e[0]);
    CHECK_MSG(e[1] < e[2], "fine %g vs rdp %g", e[1], e[2]);
}

int main(void)
{
    RUN(gaussian_interval_contains_exact);
    RUN(laplace_closed_form);
    RUN(wor_dominating_pair);
    RUN(wor_magnitudes);
    RUN(poisson_reference_values);
    RUN(pld_small_delta_exact);
    RUN(pld_intervals_agree);
    RUN(discrete_pmf_construction);
    RUN(auto_is_the_minimum);
    RUN(auto_window_monotone);
    RUN(calibration_and_guard);
    RUN(guard_matches_full_evaluation);
    RUN(per_node_and_heterogeneous);
    RUN(wor_rdp_reference);
    RUN(wor_forward_differences);
    RUN(fine_shift_vs_exact);
    RUN(fine_ledger);
    RUN(bad_input);
    RUN(oom);
    return h_finish();
}
