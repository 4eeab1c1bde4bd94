/* SPDX-License-Identifier: BSD-3-Clause */
/* Privacy loss distributions (PLD): discretisation of one release's privacy
 * loss on the grid h Z, composition by FFT (FFTW), and (epsilon, delta)
 * queries with an upper and a lower bound. docs/privacy.md, "PLD accountant".
 *
 * Pairs. A release is described by a pair (P, Q) of output distributions
 * whose hockey-stick curve delta(eps) = sup_S P(S) - e^eps Q(S) dominates the
 * mechanism's:
 *  - Poisson(q), add/remove: "remove" P = (1-q) N(0) + q N(D), Q = N(0) and
 *    "add" P = N(0), Q = (1-q) N(0) + q N(D) (Gaussian; Laplace alike); the
 *    two directions are composed separately and the larger epsilon is
 *    reported (as dp_accounting does).
 *  - without replacement (m of n, g = m/n), replace-one: the symmetrisation S
 *    of the remove pair R with q = g: delta_S(eps) = delta_R(eps) for eps >= 0
 *    and 1 - e^eps + e^eps delta_R(-eps) for eps < 0 (derivation in the docs);
 *  - no sampling: the remove pair with q = 1 (symmetric).
 *
 * Discretisation (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022,
 * "Connect the dots"): the pair's delta at the grid points i h, i in
 * [lo, hi], determines a pmf on those points (second differences of delta in
 * e^eps) whose hockey-stick curve is the chord interpolation of the true
 * convex curve: an upper bound for every eps, and a dominating PLD. Each
 * atom of the true loss in (i h, (i+1) h) is split between the two ends so
 * that both its P- and its Q-mass are kept, so the discrete loss L' = L + U
 * with U in a bin of length h and 0 <= E[U | L] <= h^2/8 (Jensen): that gives
 * the lower bound below.
 *
 * Composition. For T = sum of counts releases, the window [a, b] of the sum
 * is chosen by Chernoff bounds (mass below a and above b each <= TAIL), the
 * pmfs are transformed once (real FFT of a fast size N >= b - a + 1), raised
 * elementwise to their counts by repeated squaring, multiplied, and
 * transformed back. Cyclic wrap-around adds the outside mass (<= 2 TAIL) to
 * some bins: an overestimate for delta; the upper tail's mass (<= TAIL) is
 * added to delta as if it were at +infinity; so
 *   delta_up(eps) = sum_{L_j > eps} p_j (1 - e^{eps - L_j}) + p_inf + TAIL.
 * Lower bound: with S' = S + sum U_i (independent, each in an interval of
 * length h, mean in [0, h^2/8]), Hoeffding gives P(S' - S > t) <= eta for
 * t = T h^2/8 + h sqrt(T log(1/eta) / 2); then delta_S(eps) >=
 * delta_S'(eps + t) - eta - (aliased mass) - (mass beyond the truncation of
 * one release, times T), so eps_low = eps_S'(delta + those) - t.
 * The floating-point error of the composition is bounded (dpdo__pld_compose_tilted;
 * docs/privacy.md, "PLD: a proven bound on the composition's rounding"): each release's pmf is
 * tilted by e^(lam i) towards the queried tail, the FFT's error is propagated stage by stage, and
 * every bin carries an error interval the queries read at its safe end. */
#include "privacy_impl.h"
#include <fftw3.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#define LOG_2 0.69314718055994530942
/* noise mass beyond the x-truncation of one Gaussian release (e^-50, as dp_accounting) */
#define X_TAIL_LOG (-50.0)
#define TAIL 1e-18           /* Chernoff tail of the composed sum, each side */
#define TILT_TAIL 1e-12      /* the tilted sum's upper tail (an error of the tilted bins) */
#define MAX_BINS (1LL << 22) /* one release (pld; auto: AUTO_MAX) */
#define MAX_FFT (1LL << 23)  /* composed window (pld; auto: AUTO_MAX) */

/* FFTW's planner is not thread-safe: plans are made and destroyed under this
 * lock (execution with new arrays is thread-safe). Synchronisation only: no
 * state of the library lives here. */
static pthread_mutex_t plan_lock = PTHREAD_MUTEX_INITIALIZER;

static double log_phi_bar(double x)
{
    return dpdo__log_ndtr(-x);
}

/* log(e^eps - (1 - q)) for e^eps > 1 - q */
static double lg_shift(double eps, double q)
{
    if (eps > 0) return eps + log1p(-(1.0 - q) * exp(-eps));
    return log(expm1(eps) + q);
}

/* exp(la) - exp(lb), >= 0 */
static double exp_diff(double la, double lb)
{
    if (!(lb < la)) return 0.0;
    if (la == -INFINITY) return 0.0;
    return exp(la) * -expm1(lb - la);
}

/* Gaussian, mu = D / sigma */
static double gauss_remove(double eps, double q, double mu)
{
    if (q < 1.0 && eps <= log1p(-q)) return -expm1(eps);
    double t = lg_shift(eps, q) - log(q);
    double a = t / mu + mu / 2.0;
    double la = log(q) + log_phi_bar(a - mu);
    double lb = lg_shift(eps, q) + log_phi_bar(a);
    return exp_diff(la, lb);
}

static double gauss_add(double eps, double q, double mu)
{
    if (q < 1.0 && eps >= -log1p(-q)) return 0.0;
    double t = lg_shift(-eps, q) - log(q);
    double a = t / mu + mu / 2.0;
    /* Phi(a) (1 - (1-q) e^eps) - q e^eps Phi(a - mu) */
    double c = q < 1.0 ? -expm1(eps + log1p(-q)) : 1.0;
    if (!(c > 0)) return 0.0;
    double la = log(c) + dpdo__log_ndtr(a);
    double lb = log(q) + eps + dpdo__log_ndtr(a - mu);
    return exp_diff(la, lb);
}

/* Laplace with d = D / b (unit scale); tails of Lap(0, 1) */
static double lap_sf(double t)
{
    return t >= 0 ? 0.5 * exp(-t) : 1.0 - 0.5 * exp(t);
}
static double lap_cdf(double t)
{
    return t <= 0 ? 0.5 * exp(t) : 1.0 - 0.5 * exp(-t);
}

static double lap_remove(double eps, double q, double d)
{
    double lmax = log1p(q * expm1(d)), lmin = log1p(q * expm1(-d));
    if (eps >= lmax) return 0.0;
    if (eps <= lmin) return -expm1(eps);
    double ls = lg_shift(eps, q) - log(q); /* in (-d, d) */
    double y = (ls + d) / 2.0;
    double v = q * lap_sf(y - d) - exp(lg_shift(eps, q)) * lap_sf(y);
    return v > 0 ? v : 0.0;
}

static double lap_add(double eps, double q, double d)
{
    double lmax = -log1p(q * expm1(-d)), lmin = -log1p(q * expm1(d));
    if (eps >= lmax) return 0.0;
    if (eps <= lmin) return -expm1(eps);
    double ls = lg_shift(-eps, q) - log(q);
    double y = (ls + d) / 2.0;
    double v = lap_cdf(y) - exp(eps) * ((1.0 - q) * lap_cdf(y) + q * lap_cdf(y - d));
    return v > 0 ? v : 0.0;
}

typedef struct pair {
    int mech; /* DPDO_MECH_GAUSSIAN / LAPLACE */
    int dir;  /* 0 remove, 1 add, 2 symmetrised remove */
    double q; /* sampling probability (1: none) */
    double s; /* mu = D/sigma (Gaussian) or D/b (Laplace) */
} pair;

static double pair_delta(const pair *pr, double eps)
{
    if (pr->dir == 2 && eps < 0) {
        pair r = *pr;
        r.dir = 0;
        double v = -expm1(eps) + exp(eps) * pair_delta(&r, -eps);
        return v < 1.0 ? v : 1.0;
    }
    double v;
    if (pr->mech == DPDO_MECH_GAUSSIAN)
        v = pr->dir == 1 ? gauss_add(eps, pr->q, pr->s) : gauss_remove(eps, pr->q, pr->s);
    else
        v = pr->dir == 1 ? lap_add(eps, pr->q, pr->s) : lap_remove(eps, pr->q, pr->s);
    return v < 1.0 ? (v > 0 ? v : 0.0) : 1.0;
}

/* the range of the loss that matters: [lo, hi] with the noise truncated at
 * mass e^-50 per side (Gaussian) or the exact range (Laplace) */
static void pair_range(const pair *pr, double *lo, double *hi)
{
    double q = pr->q, s = pr->s;
    if (pr->mech == DPDO_MECH_LAPLACE) {
        double a = log1p(q * expm1(s)), b = log1p(q * expm1(-s)); /* remove: [b, a] */
        if (pr->dir == 1) {
            *lo = -a;
            *hi = -b;
        } else if (pr->dir == 2) {
            *lo = -a;
            *hi = a;
        } else {
            *lo = b;
            *hi = a;
        }
        return;
    }
    /* x/sigma in [-z, z] (and [mu - z, mu + z] for the shifted part) */
    const double z = 9.9163; /* Phi_bar(9.9163) <= e^-50 */
    /* loss of the unsampled pair at x/sigma = y: mu y - mu^2/2 */
    double up = s * (s + z) - s * s / 2.0, dn = s * (-z) - s * s / 2.0;
    double rup = log1p(q * expm1(up)), rdn = log1p(q * expm1(dn));                    /* remove */
    double aup = -log1p(q * expm1(dn)), adn = -log1p(q * expm1(s * z - s * s / 2.0)); /* add */
    if (pr->dir == 1) {
        *lo = adn;
        *hi = aup;
    } else if (pr->dir == 2) {
        *lo = -rup;
        *hi = rup;
    } else {
        *lo = rdn;
        *hi = rup;
    }
}

void dpdo__pld_pmf_free(dpdo__pld_pmf *m)
{
    if (!m) return;
    dpdo__free(m->p);
    memset(m, 0, sizeof *m);
}

/* connect-the-dots pmf from delta at the grid points i = lo .. lo + n - 1 */
static int ctd_from_deltas(dpdo__pld_pmf *out, int64_t lo, int64_t n, const double *dl, double h)
{
    out->p = dpdo__alloc_array((size_t)n, sizeof *out->p);
    if (!out->p) return DPDO_E_NOMEM;
    out->lo = lo;
    out->n = n;
    if (n == 1) {
        out->p[0] = 1.0 - dl[0];
        out->inf = dl[0];
        return DPDO_OK;
    }
    double em1 = expm1(h), eh = exp(h);
    out->p[0] = (1.0 - dl[0]) + (dl[1] - dl[0]) / em1;
    for (int64_t i = 1; i < n - 1; i++)
        out->p[i] = ((dl[i + 1] - dl[i]) - eh * (dl[i] - dl[i - 1])) / em1;
    out->p[n - 1] = (dl[n - 1] - dl[n - 2]) / expm1(-h);
    for (int64_t i = 0; i < n; i++)
        if (!(out->p[i] > 0)) out->p[i] = 0.0; /* rounding (upwards) */
    out->inf = dl[n - 1];
    return DPDO_OK;
}

int dpdo__pld_event(const dpdo__event_desc *ev, int dir, double h, int64_t max_bins,
                    dpdo__pld_pmf *out, char *err)
{
    if (max_bins <= 0) max_bins = MAX_BINS;
    memset(out, 0, sizeof *out);
    /* the fine lattice Gaussian: the continuous Gaussian's PLD; the accountant adds its shift */
    int mech = ev->mech == DPDO_MECH_DISCRETE_GAUSSIAN_FINE ? DPDO_MECH_GAUSSIAN : ev->mech;
    if (mech != DPDO_MECH_GAUSSIAN && mech != DPDO_MECH_LAPLACE)
        return dpdo__err(
            err, DPDO_E_UNSUPPORTED,
            "pld accountant: mechanism %d has no PLD here (a discrete Gaussian without the "
            "fine-grid guarantee and the discrete Laplace are accounted by rdp)",
            (int)ev->mech);
    pair pr;
    pr.mech = mech;
    pr.s = ev->sens / ev->noise;
    int sampled = ev->samp.kind != DPDO_SAMPLING_NONE && ev->samp.q < 1.0;
    pr.q = sampled ? ev->samp.q : 1.0;
    if (!sampled)
        pr.dir = 0;
    else if (ev->samp.kind == DPDO_SAMPLING_WOR)
        pr.dir = 2;
    else
        pr.dir = dir;
    if (!(pr.s > 0) || !(pr.q > 0)) { /* no privacy loss: a point mass at 0 */
        out->p = dpdo__alloc_array(1, sizeof *out->p);
        if (!out->p) return DPDO_E_NOMEM;
        out->p[0] = 1.0;
        out->n = 1;
        return DPDO_OK;
    }
    if (!isfinite(pr.s))
        return dpdo__err(err, DPDO_E_UNSUPPORTED, "pld accountant: noise 0 (no privacy)");
    double elo, ehi;
    pair_range(&pr, &elo, &ehi);
    double flo = floor(elo / h), fhi = ceil(ehi / h);
    if (!(fhi - flo + 1 <= (double)max_bins))
        return dpdo__err(
            err, DPDO_E_UNSUPPORTED,
            "pld accountant: one release spans %.3g bins at interval %g (over %lld); use a "
            "coarser pld_interval or rdp",
            fhi - flo + 1, h, (long long)max_bins);
    int64_t lo = (int64_t)flo, n = (int64_t)(fhi - flo) + 1;
    double *dl = dpdo__alloc_array((size_t)n, sizeof *dl);
    if (!dl) return DPDO_E_NOMEM;
    for (int64_t i = 0; i < n; i++)
        dl[i] = pair_delta(&pr, (double)(lo + i) * h);
    int rc = ctd_from_deltas(out, lo, n, dl, h);
    dpdo__free(dl);
    if (rc) return rc;
    /* P-mass outside the truncated range (its split is not within one bin):
     * Gaussian e^-50 per side of each mixture component; Laplace none */
    out->trunc = pr.mech == DPDO_MECH_GAUSSIAN ? 4.0 * exp(X_TAIL_LOG) : 0.0;
    return DPDO_OK;
}

/* ---- discrete noise: pmf-based construction ------------------------------------ */

int dpdo__pld_from_logpmf(double (*logpmf)(void *ctx, int64_t k), void *ctx, int64_t kmin,
                          int64_t kmax, int64_t shift, double q, int dir, double h,
                          dpdo__pld_pmf *out, char *err)
{
    memset(out, 0, sizeof *out);
    if (shift < 0 || kmax < kmin || !(q > 0 && q <= 1) || !(h > 0) || dir < 0 || dir > 1)
        return dpdo__err(err, DPDO_E_INVAL, "pld: bad discrete pmf arguments");
    /* P, Q on x in [kmin, kmax + shift]; remove: P = (1-q) N + q N(. - shift), Q = N; add: swapped
     */
    double lmin = INFINITY, lmax = -INFINITY, pin = 0.0, inf = 0.0;
    for (int64_t x = kmin; x <= kmax + shift; x++) {
        double l0 = x <= kmax ? logpmf(ctx, x) : -INFINITY;
        double l1 = x - shift >= kmin ? logpmf(ctx, x - shift) : -INFINITY;
        double lm = q >= 1.0 ? l1 : dpdo__log_add(log1p(-q) + l0, log(q) + l1);
        double lp = dir == 0 ? lm : l0, lq = dir == 0 ? l0 : lm;
        if (lp == -INFINITY) continue;
        pin += exp(lp);
        if (lq == -INFINITY) {
            inf += exp(lp);
            continue;
        }
        double L = lp - lq;
        if (L < lmin) lmin = L;
        if (L > lmax) lmax = L;
    }
    if (lmin == INFINITY) lmin = lmax = 0.0;
    double flo = floor(lmin / h), fhi = ceil(lmax / h);
    if (!(fhi - flo + 1 <= (double)MAX_BINS))
        return dpdo__err(err, DPDO_E_UNSUPPORTED, "pld: discrete loss spans too many bins");
    int64_t lo = (int64_t)flo, n = (int64_t)(fhi - flo) + 1;
    out->p = dpdo__calloc((size_t)n, sizeof *out->p);
    if (!out->p) return DPDO_E_NOMEM;
    out->lo = lo;
    out->n = n;
    for (int64_t x = kmin; x <= kmax + shift; x++) {
        double l0 = x <= kmax ? logpmf(ctx, x) : -INFINITY;
        double l1 = x - shift >= kmin ? logpmf(ctx, x - shift) : -INFINITY;
        double lm = q >= 1.0 ? l1 : dpdo__log_add(log1p(-q) + l0, log(q) + l1);
        double lp = dir == 0 ? lm : l0, lq = dir == 0 ? l0 : lm;
        if (lp == -INFINITY || lq == -INFINITY) continue;
        double L = lp - lq, p = exp(lp);
        double fi = floor(L / h);
        int64_t i = (int64_t)fi - lo;
        if (i >= n - 1) i = n - 2;
        if (i < 0) i = 0;
        if (n == 1) {
            out->p[0] += p;
            continue;
        }
        /* split keeping the P-mass p and the Q-mass p e^-L:
         * b = p (e^{-a} - e^{-L}) / (e^{-a} - e^{-a-h}) at the upper end */
        double a = (double)(lo + i) * h;
        double fb = -expm1(a - L) / -expm1(-h); /* (1 - e^{a-L}) / (1 - e^{-h}) */
        if (fb < 0) fb = 0;
        if (fb > 1) fb = 1;
        out->p[i + 1] += p * fb;
        out->p[i] += p * (1.0 - fb);
    }
    /* the noise mass outside [kmin, kmax] (the pmf need not sum to 1 there) goes to +inf */
    out->inf = inf + (1.0 - pin > 0 ? 1.0 - pin : 0.0);
    return DPDO_OK;
}

/* ---- composition -------------------------------------------------------------- */

void dpdo__pld_dist_free(dpdo__pld_dist *d)
{
    if (!d) return;
    dpdo__free(d->p);
    memset(d, 0, sizeof *d);
}

/* FFT size: the smallest power of two >= n (FFTW plans these fastest) */
static int64_t fast_size(int64_t n)
{
    int64_t p = 2;
    while (p < n)
        p *= 2;
    return p;
}

/* log E[e^{lam i}] of a pmf (i the bin index), by incremental powers */
static double log_mgf(const dpdo__pld_pmf *m, double lam)
{
    int64_t ref = lam > 0 ? m->lo + m->n - 1 : m->lo;
    double f = exp(lam), s = 0.0;
    if (lam > 0) {
        double w = 1.0;
        for (int64_t i = m->n - 1; i >= 0; i--) {
            s += m->p[i] * w;
            w *= 1.0 / f;
        }
    } else {
        double w = 1.0;
        for (int64_t i = 0; i < m->n; i++) {
            s += m->p[i] * w;
            w *= f;
        }
    }
    return lam * (double)ref + log(s);
}

/* One side of the Chernoff window at l = l0 2^u (l0 < 0: the lower side): the bound
 * t = (K(l) + ltail) / l with K the cumulant generating function of the composition, returned
 * as sign(l0) t (smaller is a tighter edge); +inf when it overflows. */
static double chernoff_edge(const dpdo__pld_pmf *const *pm, const double *counts, int64_t k,
                            double l0, double u, double ltail, double base)
{
    double l = l0 * exp2(u), lm = 0.0;
    for (int64_t e = 0; e < k; e++) /* K(base + l): the tilted sum's cgf is K(base + l) - K(base) */
        lm += counts[e] * log_mgf(pm[e], base + l);
    double t = (lm + ltail) / l;
    return isfinite(t) ? (l0 > 0 ? t : -t) : INFINITY;
}

/* The best Chernoff edge on one side (sg = +1 upper, -1 lower) of the sum tilted by e^(base i):
 * min over l of sg (K(base + sg l) - K(base) + ltail) / l (+inf if none is finite), and the l
 * attaining it in *lbest. t(l) is unimodal in l > 0 (its derivative's numerator
 * l K'(l) - K(l) - ltail increases, since K'' >= 0), so a coarse grid in log l brackets the
 * minimum and a golden-section search on log l finds it: the window, hence the bins composed, is
 * monotone in the counts instead of following a grid's luck. */
static double chernoff_min(const dpdo__pld_pmf *const *pm, const double *counts, int64_t k, int sg,
                           double l0, double ltail, double base, double *lbest)
{
    double best = INFINITY, bu = 0.0;
    for (int j = -16; j <= 8; j++) { /* l = l0 2^j: 2^-16 .. 2^8 of the Gaussian choice */
        double t = chernoff_edge(pm, counts, k, sg * l0, j, ltail, base);
        if (t < best) best = t, bu = j;
    }
    *lbest = l0 * exp2(bu);
    if (!isfinite(best)) return best;
    double lo_u = bu - 1.0, hi_u = bu + 1.0, gr = 0.5 * (sqrt(5.0) - 1.0);
    double u1 = hi_u - gr * (hi_u - lo_u), u2 = lo_u + gr * (hi_u - lo_u);
    double f1 = chernoff_edge(pm, counts, k, sg * l0, u1, ltail, base);
    double f2 = chernoff_edge(pm, counts, k, sg * l0, u2, ltail, base);
    for (int it = 0; it < 24; it++) {
        if (f1 <= f2) {
            hi_u = u2, u2 = u1, f2 = f1;
            u1 = hi_u - gr * (hi_u - lo_u);
            f1 = chernoff_edge(pm, counts, k, sg * l0, u1, ltail, base);
        } else {
            lo_u = u1, u1 = u2, f1 = f2;
            u2 = lo_u + gr * (hi_u - lo_u);
            f2 = chernoff_edge(pm, counts, k, sg * l0, u2, ltail, base);
        }
    }
    double fm = fmin(f1, f2);
    if (fm < best) {
        best = fm;
        *lbest = l0 * exp2(f1 <= f2 ? u1 : u2);
    }
    return best;
}

/* the unit roundoff and gamma_n = n u / (1 - n u) (Higham, Accuracy and Stability of Numerical
 * Algorithms, 2nd ed., section 3.1) */
#define UROUND 0x1p-53
static double gam(double n)
{
    return n * UROUND / (1.0 - n * UROUND);
}
/* The FFT's normwise error factor: ||fl(F x) - F x||_2 <= rho ||F x||_2 for a length-N transform
 * whose log2 N butterfly stages each satisfy Higham's Theorem 24.2 (radix-2 Cooley-Tukey,
 * eta = mu + gamma_4 (sqrt 2 + mu), twiddles accurate to mu), with mu = 4u and a factor
 * FFT_SAFETY for FFTW's other radices and the r2c/c2r pre- and post-processing stage
 * (docs/privacy.md, "PLD: a proven bound on the composition's rounding"). */
#define FFT_SAFETY 4.0
static double fft_rho(int64_t N)
{
    double mu = 4.0 * UROUND, eta = mu + gam(4.0) * (sqrt(2.0) + mu);
    double l = log2((double)N) + 1.0, x = FFT_SAFETY * l * eta;
    return x / (1.0 - x);
}

int dpdo__pld_compose(const dpdo__pld_pmf *const *pm, const double *counts, int64_t k, double h,
                      dpdo__pld_work *wk, dpdo__pld_dist *out, char *err)
{
    return dpdo__pld_compose_tilted(pm, counts, k, h, 0.0, wk, out, err);
}

double dpdo__pld_tilt_for(const dpdo__pld_pmf *const *pm, const double *counts, int64_t k,
                          double ltail)
{
    double var = 0.0;
    for (int64_t e = 0; e < k; e++) {
        const dpdo__pld_pmf *m = pm[e];
        double s0 = 0, s1 = 0, s2 = 0;
        for (int64_t i = 0; i < m->n; i++) {
            double x = (double)i;
            s0 += m->p[i];
            s1 += m->p[i] * x;
            s2 += m->p[i] * x * x;
        }
        double mu = s0 > 0 ? s1 / s0 : 0.0;
        var += counts[e] * (s0 > 0 ? s2 / s0 - mu * mu : 0.0);
    }
    double sd = sqrt(var > 1.0 ? var : 1.0), l = 0.0;
    double t = chernoff_min(pm, counts, k, 1, sqrt(2.0 * ltail) / sd, ltail, 0.0, &l);
    return isfinite(t) && l > 0 && isfinite(l) ? l : 0.0;
}

int dpdo__pld_compose_tilted(const dpdo__pld_pmf *const *pm, const double *counts, int64_t k,
                             double h, double lam, dpdo__pld_work *wk, dpdo__pld_dist *out,
                             char *err)
{
    memset(out, 0, sizeof *out);
    out->h = h;
    if (!(lam >= 0) || !isfinite(lam)) lam = 0.0;
    double T = 0.0, rlo = 0.0, rhi = 0.0, var = 0.0, linf = 0.0, trunc = 0.0, K = 0.0;
    for (int64_t e = 0; e < k; e++) {
        const dpdo__pld_pmf *m = pm[e];
        double c = counts[e];
        T += c;
        rlo += c * (double)m->lo;
        rhi += c * (double)(m->lo + m->n - 1);
        double s0 = 0, s1 = 0, s2 = 0;
        for (int64_t i = 0; i < m->n; i++) {
            double x = (double)(m->lo + i);
            s0 += m->p[i];
            s1 += m->p[i] * x;
            s2 += m->p[i] * x * x;
        }
        double mu = s0 > 0 ? s1 / s0 : 0.0;
        var += c * (s0 > 0 ? s2 / s0 - mu * mu : 0.0);
        linf += c * log1p(-(m->inf < 1.0 ? m->inf : 1.0));
        trunc += c * m->trunc;
        if (lam > 0) K += c * log_mgf(m, lam);
    }
    if (!isfinite(K)) lam = 0.0, K = 0.0;
    out->inf = -expm1(linf);
    out->steps = T;
    out->trunc = trunc;
    /* Chernoff window around the mean: P(sum > b) <= TAIL and P(sum < a) <= TAIL (chernoff_min).
     * A tilted composition (lam > 0) computes c~_j = c_j e^(lam j - K) instead of c_j; b also keeps
     * the tilted mass above it below TILT_TAIL: wrapped into the window it costs e^(K - lam j)
     * times itself at bin j, in the per-bin bound (large only far below the tilt's centre). */
    double sd = sqrt(var > 1.0 ? var : 1.0);
    double ltail = log(1.0 / TAIL);
    double a = rlo, b = rhi, l0 = sqrt(2.0 * ltail) / sd, lb = 0.0;
    double tb = chernoff_min(pm, counts, k, 1, l0, ltail, 0.0, &lb);
    double ta = chernoff_min(pm, counts, k, -1, l0, ltail, 0.0, &lb);
    if (isfinite(tb) && tb < b) b = ceil(tb);
    if (isfinite(ta) && -ta > a) a = floor(-ta);
    double lt_out = -INFINITY; /* log of the tilted mass outside [a, b] (bound) */
    if (lam > 0) {
        double lt = log(1.0 / TILT_TAIL);
        double tt = chernoff_min(pm, counts, k, 1, l0, lt - K, lam, &lb);
        double bt = isfinite(tt) ? ceil(tt) : rhi;
        if (bt > rhi) bt = rhi;
        if (bt > b) b = bt;
        /* tilted mass above b <= TILT_TAIL when b < rhi; below a: <= e^(lam a - K) TAIL (both
         * enter every bin's bound, times e^(K - lam j)) */
        lt_out =
            dpdo__log_add(b < rhi ? -lt : -INFINITY, a > rlo ? lam * a - K - ltail : -INFINITY);
    } else {
        lt_out = dpdo__log_add(b < rhi ? -ltail : -INFINITY, a > rlo ? -ltail : -INFINITY);
    }
    if (b < a) b = a;
    double W = b - a + 1.0;
    int64_t maxw = wk->max_n > 0 ? wk->max_n : MAX_FFT;
    if (!(W <= (double)maxw) && lam > 0) /* the tilt widens the window: a smaller one */
        return dpdo__pld_compose_tilted(pm, counts, k, h, lam > 1e-3 ? 0.5 * lam : 0.0, wk, out,
                                        err);
    if (!(W <= (double)maxw))
        return dpdo__err(
            err, DPDO_E_UNSUPPORTED,
            "pld accountant: the composition spans %.3g bins at interval %g (over %lld); "
            "use a coarser pld_interval or rdp",
            W, h, (long long)maxw);
    int64_t w = (int64_t)W;
    int64_t N = fast_size(w);
    int64_t nc = N / 2 + 1;
    /* buffers and plans (kept in the work area between calls) */
    if (wk->N != N) {
        pthread_mutex_lock(&plan_lock);
        if (wk->fwd) fftw_destroy_plan((fftw_plan)wk->fwd);
        if (wk->inv) fftw_destroy_plan((fftw_plan)wk->inv);
        wk->fwd = wk->inv = NULL;
        pthread_mutex_unlock(&plan_lock);
        dpdo__free(wk->r);
        dpdo__free(wk->c);
        dpdo__free(wk->acc);
        wk->r = dpdo__alloc_array((size_t)N, sizeof *wk->r);
        wk->c = dpdo__alloc_array((size_t)nc * 2, sizeof *wk->c);
        wk->acc = dpdo__alloc_array((size_t)nc * 2, sizeof *wk->acc);
        wk->N = 0;
        if (!wk->r || !wk->c || !wk->acc)
            return dpdo__err(err, DPDO_E_NOMEM, "pld: out of memory for the FFT");
        pthread_mutex_lock(&plan_lock);
        wk->fwd = fftw_plan_dft_r2c_1d((int)N, wk->r, (fftw_complex *)wk->c,
                                       FFTW_ESTIMATE | FFTW_UNALIGNED);
        wk->inv = fftw_plan_dft_c2r_1d((int)N, (fftw_complex *)wk->c, wk->r,
                                       FFTW_ESTIMATE | FFTW_UNALIGNED);
        pthread_mutex_unlock(&plan_lock);
        if (!wk->fwd || !wk->inv)
            return dpdo__err(err, DPDO_E_NOMEM, "pld: FFTW could not plan size %lld", (long long)N);
        wk->N = N;
    }
    double *acc = wk->acc, *c = wk->c, *r = wk->r;
    for (int64_t i = 0; i < nc; i++) {
        acc[2 * i] = 1.0;
        acc[2 * i + 1] = 0.0;
    }
    /* error bookkeeping (docs/privacy.md, "PLD: a proven bound on the composition's rounding"):
     * in_err: relative error of the tilted entries; spec: sum_e c_e ||x_e||_2 (the transforms'
     * inputs); lg: log prod_e m_e^c_e, m_e >= |each computed coefficient of event e| */
    double rho = fft_rho(N), in_rel = 0.0, spec = 0.0, lg = 0.0, nmul = 0.0;
    for (int64_t e = 0; e < k; e++) {
        const dpdo__pld_pmf *m = pm[e];
        double ke = lam > 0 ? log_mgf(m, lam) : 0.0, l1 = 0.0, l2 = 0.0, amax = fabs(ke);
        memset(r, 0, (size_t)N * sizeof *r);
        for (int64_t i = 0; i < m->n; i++) {
            int64_t pos = (m->lo + i) % N;
            if (pos < 0) pos += N;
            double v = lam > 0 ? m->p[i] * exp(lam * (double)(m->lo + i) - ke) : m->p[i];
            if (lam > 0) amax = fmax(amax, fabs(lam * (double)(m->lo + i)) + fabs(ke));
            r[pos] += v;
        }
        for (int64_t i = 0; i < N; i++) {
            l1 += r[i];
            l2 += r[i] * r[i];
        }
        /* exp's argument rounded twice (product, difference), exp and the product once each;
         * an entry summed with up to n others (wrap of a release wider than N) */
        double rel = gam(4.0) * (amax + 1.0) + gam((double)m->n + 1.0);
        in_rel = fmax(in_rel, rel);
        l1 *= 1.0 + gam((double)N);
        l2 = sqrt(l2 * (1.0 + gam((double)N + 1.0))) * (1.0 + UROUND);
        double cnt = counts[e], beta = rho * sqrt((double)N) * l2;
        spec += cnt * l2;
        lg += cnt * log1p(l1 - 1.0 + beta);
        nmul += 2.0 * cnt + 1.0;
        fftw_execute_dft_r2c((fftw_plan)wk->fwd, r, (fftw_complex *)c);
        uint64_t cn = (uint64_t)cnt;
        for (int64_t i = 0; i < nc; i++) {
            double br = c[2 * i], bi = c[2 * i + 1], pr = 1.0, pi = 0.0;
            for (uint64_t t = cn; t; t >>= 1) {
                if (t & 1) {
                    double x = pr * br - pi * bi;
                    pi = pr * bi + pi * br;
                    pr = x;
                }
                if (t > 1) {
                    double x = br * br - bi * bi;
                    bi = 2.0 * br * bi;
                    br = x;
                }
            }
            double ar = acc[2 * i], ai = acc[2 * i + 1];
            acc[2 * i] = ar * pr - ai * pi;
            acc[2 * i + 1] = ar * pi + ai * pr;
        }
    }
    /* the full spectrum's 2-norm (Hermitian: the half counted twice but for 0 and N/2) */
    double s2 = 0.0;
    for (int64_t i = 0; i < nc; i++) {
        double v = acc[2 * i] * acc[2 * i] + acc[2 * i + 1] * acc[2 * i + 1];
        s2 += (i == 0 || 2 * i == N) ? v : 2.0 * v;
    }
    double snorm = sqrt(s2 * (1.0 + gam((double)N + 2.0))) * (1.0 + UROUND);
    memcpy(c, acc, (size_t)nc * 2 * sizeof *c);
    fftw_execute_dft_c2r((fftw_plan)wk->inv, (fftw_complex *)c, r);
    out->p = dpdo__alloc_array((size_t)w, sizeof *out->p);
    if (!out->p) return dpdo__err(err, DPDO_E_NOMEM, "pld: out of memory for the composed pmf");
    /* the 2-norm (hence the sup) of the tilted composition's error: the inputs' transform
     * errors powered and multiplied (sum_e c_e G rho sqrt(N) ||x_e||_2, over sqrt N for the
     * normalised inverse), the powers' and products' roundings (relative theta, complex
     * multiplication sqrt 2 gamma_2 each, <= 2 c_e + 1 of them per event), the inverse
     * transform (rho ||spectrum||_2 / sqrt N), the entries' relative error composed, and the
     * tilted mass wrapped into the window */
    double G = exp(lg) * (1.0 + gam(4.0 * (double)k + 4.0));
    double th = expm1(nmul * log1p(sqrt(2.0) * gam(2.0)));
    double rin = expm1(T * log1p(in_rel));
    double e2 = G * rho * spec + (th / (1.0 - th) * (1.0 + rho) + rho) * snorm / sqrt((double)N) +
                rin * (1.0 + rho);
    e2 *= 1.0 + gam(16.0);
    int64_t a0 = (int64_t)a;
    double maxv = 0.0;
    for (int64_t j = 0; j < w; j++) {
        int64_t pos = (a0 + j) % N;
        if (pos < 0) pos += N;
        double v = r[pos] / (double)N;
        if (lam > 0) v *= exp(K - lam * (double)(a0 + j));
        out->p[j] = v > 0 ? v : 0.0;
        maxv = fmax(maxv, out->p[j]);
    }
    out->lo = a0;
    out->n = w;
    out->lam = lam;
    out->K = K;
    /* per bin j: |c_j - p_j| <= exp(K - lam j) (e2 + tilted mass outside) + rel p_j, rel the
     * untilting's relative error (its exponent rounded, exp) */
    out->lerr = log(e2 + exp(lt_out)) + UROUND;
    out->rel = lam > 0 ? gam(6.0) * (fabs(K) + lam * fmax(fabs(a), fabs(b)) + 2.0) : 0.0;
    out->fft_err = e2;
    (void)maxv;
    out->tail_up = b < rhi ? TAIL : 0.0;
    out->alias = 0.0; /* in the per-bin bound */
    return DPDO_OK;
}

/* the bound on |c_j - p_j| at bin j (index into p) */
static double bin_err(const dpdo__pld_dist *d, int64_t j)
{
    double v = exp(d->lerr + d->K - d->lam * (double)(d->lo + j));
    return v + d->rel * d->p[j];
}

void dpdo__pld_work_free(dpdo__pld_work *wk)
{
    if (!wk) return;
    pthread_mutex_lock(&plan_lock);
    if (wk->fwd) fftw_destroy_plan((fftw_plan)wk->fwd);
    if (wk->inv) fftw_destroy_plan((fftw_plan)wk->inv);
    pthread_mutex_unlock(&plan_lock);
    dpdo__free(wk->r);
    dpdo__free(wk->c);
    dpdo__free(wk->acc);
    int64_t keep = wk->max_n;
    memset(wk, 0, sizeof *wk);
    wk->max_n = keep;
}

/* ---- queries -------------------------------------------------------------------- */

/* smallest eps with sum_{L_j > eps} p_j (1 - e^{eps - L_j}) + cst <= delta (may be
 * negative; -inf if every eps works, +inf if none) */
/* bin j's mass for the scans: side +1 the upper end of its error interval, -1 the lower (>= 0) */
static double bin_mass(const dpdo__pld_dist *d, int64_t j, int side)
{
    double v = d->p[j] + side * bin_err(d, j);
    return v > 0 ? v : 0.0;
}

/* smallest eps with sum_{L_j > eps} p_j (1 - e^{eps - L_j}) + cst <= delta, the p_j taken at the
 * `side` end of their error intervals (may be negative; -inf if every eps works, +inf if none).
 * Rounding: the scan's sums are rounded upwards for side +1 and downwards for side -1 by a
 * relative gamma_(n + 4) (ROUND_SCAN). */
static double eps_scan(const dpdo__pld_dist *d, double cst, double delta, int side)
{
    if (cst > delta) return INFINITY;
    double h = d->h, eh = exp(-h), A = 0.0, B = 0.0;
    double f = 1.0 + side * gam((double)d->n + 8.0);
    for (int64_t j = d->n - 1; j >= -1; j--) {
        double Lj = (double)(d->lo + j) * h;
        double Af = A * f, Bf = B / f;
        if (Af - Bf + cst > delta) return Lj + log((Af + cst - delta) / Bf);
        if (j < 0) break;
        double pj = bin_mass(d, j, side);
        A += pj;
        B = (B + pj) * eh;
    }
    A *= f, B /= f;
    if (A + cst - delta > 0 && B > 0) return (double)(d->lo - 1) * h + log((A + cst - delta) / B);
    return -INFINITY;
}

static double delta_sum(const dpdo__pld_dist *d, double eps)
{
    double s = 0.0, h = d->h;
    for (int64_t j = d->n - 1; j >= 0; j--) {
        double L = (double)(d->lo + j) * h;
        if (!(L > eps)) break;
        s += bin_mass(d, j, 1) * -expm1(eps - L);
    }
    return s * (1.0 + gam((double)d->n + 8.0));
}

double dpdo__pld_eps_upper(const dpdo__pld_dist *d, double delta)
{
    double e = eps_scan(d, d->inf + d->tail_up, delta, 1);
    return e > 0 ? e : 0.0;
}

double dpdo__pld_eps_lower(const dpdo__pld_dist *d, double delta)
{
    double best = 0.0, T = d->steps, h = d->h;
    static const double fr[] = {0.5, 0.1, 0.01, 1e-3, 1e-4};
    for (size_t i = 0; i < sizeof fr / sizeof *fr; i++) {
        double eta = fr[i] * delta;
        double t = T * h * h / 8.0 * (1.0 + h) + h * sqrt(T * log(1.0 / eta) / 2.0);
        double e = eps_scan(d, d->inf, delta + eta + d->alias + d->trunc, -1) - t;
        if (e > best) best = e;
    }
    return best;
}

double dpdo__pld_delta_upper(const dpdo__pld_dist *d, double eps)
{
    double v = delta_sum(d, eps) + d->inf + d->tail_up;
    return v < 1.0 ? v : 1.0;
}

/* ---- the fine lattice Gaussian: the shift of the continuous figure ------------------------ */

/* docs/privacy.md, "A PLD for the lattice Gaussian". For n releases of N_Z(0, S^2 I_d) on integer
 * centres, with d / S^2 <= u, 1 / S^2 <= s2, d log(1 + theta_S) <= dtheta and tail parameter L
 * (each release's rounded continuous Gaussian leaves the ball of radius
 * r = S sqrt(d + 2 sqrt(dL) + 2L) + sqrt(d)/2 with probability <= e^-L): h1 = n d/(24 S^2) and
 * h2 = n (r^2/(24 S^4) + d log(1 + theta_S)) bounded from u, s2, dtheta, L, rounded up. */
void dpdo__pld_fine_shift(double n, double u, double s2, double dtheta, double L, double *h1,
                          double *h2)
{
    double su = sqrt(u), ss = sqrt(s2);
    /* r^2 / S^4 <= u + 2 sqrt(L u s2) + 2 L s2 + u sqrt(s2) (1 + 2^(1/2) L^(1/4) + (2L)^(1/2)) + u
     * s2 / 4 */
    double r2 = u + 2.0 * sqrt(L) * su * ss + 2.0 * L * s2 +
                u * ss * (1.0 + sqrt(2.0) * pow(L, 0.25) + sqrt(2.0 * L)) + u * s2 / 4.0;
    const double up = 1.0 + 0x1p-40; /* the roundings above, generously */
    *h1 = n * u / 24.0 * up;
    *h2 = n * (r2 / 24.0 + dtheta) * up;
}

#define FINE_U DPDO__PLD_FINE_U /* privacy_impl.h */
#define FINE_DTHETA DPDO__PLD_FINE_DTHETA
#define FINE_DELTA_SHARE DPDO__PLD_FINE_DELTA_SHARE

/* ---- the accountant's state: per-event pmfs and the last composition ----------------- */

typedef struct pld_entry {
    dpdo__event_desc d;
    dpdo__pld_pmf pm[2];
    int have[2];
    uint64_t stamp;
} pld_entry;

struct dpdo__pld_acc {
    double h;
    int64_t max_bins; /* per release and per composition; 0: MAX_BINS / MAX_FFT */
    pld_entry **ent;  /* individually allocated: pointers into them stay valid */
    int64_t n_ent, cap_ent;
    uint64_t stamp;
    double *key; /* rows of the last composition */
    int64_t key_n;
    double key_ltail, key_x; /* its tilt target (acc_compose) */
    dpdo__pld_dist dist[2];
    int n_dist; /* 0: none cached */
    dpdo__pld_work wk;
    double fine_n; /* releases of DPDO_MECH_DISCRETE_GAUSSIAN_FINE in the last composition */
    const dpdo__pld_pmf **pms; /* scratch */
    double *cnt;
    int64_t scratch_cap;
};

int dpdo__pld_acc_new(dpdo__pld_acc **out, double h, int64_t max_bins)
{
    *out = dpdo__calloc(1, sizeof **out);
    if (!*out) return DPDO_E_NOMEM;
    (*out)->h = h;
    (*out)->max_bins = max_bins;
    (*out)->wk.max_n = max_bins;
    return DPDO_OK;
}

static void drop_dists(dpdo__pld_acc *a)
{
    dpdo__pld_dist_free(&a->dist[0]);
    dpdo__pld_dist_free(&a->dist[1]);
    a->n_dist = 0;
    a->key_n = 0;
}

void dpdo__pld_acc_free(dpdo__pld_acc *a)
{
    if (!a) return;
    for (int64_t i = 0; i < a->n_ent; i++) {
        dpdo__pld_pmf_free(&a->ent[i]->pm[0]);
        dpdo__pld_pmf_free(&a->ent[i]->pm[1]);
        dpdo__free(a->ent[i]);
    }
    dpdo__free(a->ent);
    drop_dists(a);
    dpdo__free(a->key);
    dpdo__pld_work_free(&a->wk);
    dpdo__free(a->pms);
    dpdo__free(a->cnt);
    dpdo__free(a);
}

static int same_ev(const dpdo__event_desc *a, const dpdo__event_desc *b)
{
    return a->mech == b->mech && a->samp.kind == b->samp.kind && a->samp.q == b->samp.q &&
           a->samp.n == b->samp.n && a->samp.m == b->samp.m && a->sens == b->sens &&
           a->noise == b->noise;
}

static int is_poisson(const dpdo__event_desc *d)
{
    return d->samp.kind == DPDO_SAMPLING_POISSON && d->samp.q < 1.0;
}

/* the cached pmf of an event in a direction */
static int get_pmf(dpdo__pld_acc *a, const dpdo__event_desc *d, int dir, const dpdo__pld_pmf **out,
                   char *err)
{
    if (!is_poisson(d)) dir = 0; /* symmetric pairs */
    pld_entry *e = NULL;
    for (int64_t i = 0; i < a->n_ent; i++)
        if (same_ev(&a->ent[i]->d, d)) {
            e = a->ent[i];
            break;
        }
    if (!e) {
        if (a->n_ent == a->cap_ent) {
            int64_t nc = a->cap_ent ? 2 * a->cap_ent : 8;
            pld_entry **ne = dpdo__calloc((size_t)nc, sizeof *ne);
            if (!ne) return dpdo__err(err, DPDO_E_NOMEM, "pld: out of memory for the event cache");
            if (a->n_ent) memcpy(ne, a->ent, (size_t)a->n_ent * sizeof *ne);
            dpdo__free(a->ent);
            a->ent = ne;
            a->cap_ent = nc;
        }
        e = dpdo__calloc(1, sizeof *e);
        if (!e) return dpdo__err(err, DPDO_E_NOMEM, "pld: out of memory for the event cache");
        e->d = *d;
        a->ent[a->n_ent++] = e;
    }
    e->stamp = a->stamp;
    if (!e->have[dir]) {
        int rc = dpdo__pld_event(d, dir, a->h, a->max_bins, &e->pm[dir], err);
        if (rc) return rc;
        e->have[dir] = 1;
    }
    *out = &e->pm[dir];
    return DPDO_OK;
}

/* keep the cache small: forget events not used by the last query once the
 * cache holds more than `keep` of them */
static void evict(dpdo__pld_acc *a, int64_t keep)
{
    if (a->n_ent <= keep) return;
    int64_t w = 0;
    for (int64_t i = 0; i < a->n_ent; i++) {
        if (a->ent[i]->stamp == a->stamp) {
            a->ent[w++] = a->ent[i];
        } else {
            dpdo__pld_pmf_free(&a->ent[i]->pm[0]);
            dpdo__pld_pmf_free(&a->ent[i]->pm[1]);
            dpdo__free(a->ent[i]);
        }
    }
    a->n_ent = w;
}

/* the tilt for a delta query at eps (x = eps / h bins): the l >= 0 minimising K(l) - l x, on a
 * grid of quarter octaves (any l gives a valid bound; this one makes it tight near x) */
static double tilt_at(const dpdo__pld_pmf *const *pm, const double *counts, int64_t k, double x)
{
    double best = 0.0, bl = 0.0;
    for (int j = -80; j <= 40; j++) {
        double l = exp2(0.25 * j), f = -l * x;
        for (int64_t e = 0; e < k; e++)
            f += counts[e] * log_mgf(pm[e], l);
        if (isfinite(f) && f < best) best = f, bl = l;
    }
    return bl;
}

/* compose the charged rows (cached: same rows and tilt target, same answer); tilted for a query at
 * delta = e^-ltail (ltail > 0) or at eps = x h (ltail <= 0) */
static int acc_compose(dpdo__pld_acc *a, const double *rows, int64_t n, double ltail, double x,
                       char *err)
{
    size_t cells = (size_t)n * DPDO_EV_FIELDS;
    if (a->n_dist && a->key_n == n && a->key_ltail == ltail && a->key_x == x &&
        memcmp(a->key, rows, cells * sizeof *rows) == 0)
        return DPDO_OK;
    drop_dists(a);
    if (n > a->scratch_cap) {
        dpdo__free(a->pms);
        dpdo__free(a->cnt);
        dpdo__free(a->key);
        a->scratch_cap = 0;
        a->pms = dpdo__alloc_array((size_t)n, sizeof *a->pms);
        a->cnt = dpdo__alloc_array((size_t)n, sizeof *a->cnt);
        a->key = dpdo__alloc_array(cells, sizeof *a->key);
        if (!a->pms || !a->cnt || !a->key)
            return dpdo__err(err, DPDO_E_NOMEM, "pld: out of memory");
        a->scratch_cap = n;
    }
    a->stamp++;
    int any_poisson = 0;
    int64_t k = 0, used = 0;
    a->fine_n = 0;
    for (int64_t i = 0; i < n; i++) {
        const double *r = rows + i * DPDO_EV_FIELDS;
        if (!(r[DPDO_EV_COUNT] > 0)) continue;
        dpdo__event_desc d;
        dpdo__event_row_desc(r, &d);
        any_poisson |= is_poisson(&d);
        if (d.mech == DPDO_MECH_DISCRETE_GAUSSIAN_FINE) a->fine_n += r[DPDO_EV_COUNT];
        used++;
    }
    int ndir = any_poisson ? 2 : 1;
    for (int dir = 0; dir < ndir; dir++) {
        k = 0;
        for (int64_t i = 0; i < n; i++) {
            const double *r = rows + i * DPDO_EV_FIELDS;
            if (!(r[DPDO_EV_COUNT] > 0)) continue;
            dpdo__event_desc d;
            dpdo__event_row_desc(r, &d);
            int rc = get_pmf(a, &d, dir, &a->pms[k], err);
            if (rc) return rc;
            a->cnt[k++] = r[DPDO_EV_COUNT];
        }
        double lam = ltail > 0 ? dpdo__pld_tilt_for(a->pms, a->cnt, k, ltail)
                               : tilt_at(a->pms, a->cnt, k, x);
        int rc = dpdo__pld_compose_tilted(a->pms, a->cnt, k, a->h, lam, &a->wk, &a->dist[dir], err);
        if (rc) {
            drop_dists(a);
            return rc;
        }
        a->n_dist = dir + 1;
    }
    evict(a, used + 4);
    memcpy(a->key, rows, cells * sizeof *rows);
    a->key_n = n;
    a->key_ltail = ltail;
    a->key_x = x;
    return DPDO_OK;
}

#define PLD_MIN_DELTA 1e-13

int dpdo__pld_acc_eps(dpdo__pld_acc *a, const double *rows, int64_t n, double delta, double *hi,
                      double *lo, char *err)
{
    if (delta < PLD_MIN_DELTA)
        return dpdo__err(
            err, DPDO_E_UNSUPPORTED,
            "pld accountant: delta = %g is below %g (its truncated tails are counted as "
            "delta); use rdp",
            delta, PLD_MIN_DELTA);
    /* the fine releases' count first (the tilt depends on delta_c) */
    int rc = acc_compose(a, rows, n, log(1.0 / delta), 0.0, err);
    if (rc) return rc;
    /* fine lattice Gaussians: the continuous composition at delta_c = (1 - share) delta e^-h1, then
     * eps = eps_c + h1 + h2 with L so large that the tails cost e^(eps) N e^-L <= share delta */
    double N = a->fine_n, h1 = 0.0, h2 = 0.0;
    double dc = delta;
    if (N > 0) {
        dpdo__pld_fine_shift(N, FINE_U, FINE_U, FINE_DTHETA, 1.0, &h1, &h2);
        dc = (1.0 - FINE_DELTA_SHARE) * delta * exp(-h1);
        if (dc < PLD_MIN_DELTA)
            return dpdo__err(err, DPDO_E_UNSUPPORTED, "pld accountant: delta = %g too small",
                             delta);
    }
    double h = 0.0, l = 0.0;
    for (int dir = 0; dir < a->n_dist; dir++) {
        double u = dpdo__pld_eps_upper(&a->dist[dir], dc);
        double v = dpdo__pld_eps_lower(&a->dist[dir], dc);
        if (u > h) h = u;
        if (v > l) l = v;
    }
    if (!isfinite(h))
        return dpdo__err(err, DPDO_E_UNSUPPORTED,
                         "pld accountant: no proven bound at delta = %g (the composition's "
                         "rounding and tails exceed it at interval %g); use rdp or a coarser "
                         "pld_interval",
                         delta, a->h);
    if (N > 0) {
        double base = log(N / (FINE_DELTA_SHARE * delta)) + h + h1, L = base;
        for (int it = 0; it < 50; it++) {
            dpdo__pld_fine_shift(N, FINE_U, FINE_U, FINE_DTHETA, L, &h1, &h2);
            if (L >= base + h2) break;
            L = base + h2 + 1e-9;
        }
        h += h1 + h2;
        l = l - h1 - h2 > 0 ? l - h1 - h2
                            : 0.0; /* the comparison's lower figure, not a certified one */
    }
    if (l > h) l = h;
    *hi = h;
    *lo = l;
    return DPDO_OK;
}

int dpdo__pld_acc_delta(dpdo__pld_acc *a, const double *rows, int64_t n, double eps, double *delta,
                        char *err)
{
    int rc = acc_compose(a, rows, n, 0.0, eps / a->h, err);
    if (rc) return rc;
    /* fine lattice Gaussians: delta(eps) <= e^h1 delta_c(eps - h1 - h2) + e^eps N e^-L, L = log N +
     * eps + 60 */
    double N = a->fine_n, h1 = 0.0, h2 = 0.0, L = 0.0, ec = eps;
    if (N > 0) {
        L = log(N) + (eps > 0 ? eps : 0.0) + 60.0;
        dpdo__pld_fine_shift(N, FINE_U, FINE_U, FINE_DTHETA, L, &h1, &h2);
        ec = eps - h1 - h2;
    }
    double d = 0.0;
    for (int dir = 0; dir < a->n_dist; dir++) {
        double u = dpdo__pld_delta_upper(&a->dist[dir], ec);
        if (u > d) d = u;
    }
    if (N > 0) d = exp(h1) * d + exp(eps + log(N) - L);
    *delta = d < 1.0 ? d : 1.0;
    return DPDO_OK;
}
