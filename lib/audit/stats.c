/* SPDX-License-Identifier: BSD-3-Clause */
/* Statistics of the privacy auditor: the regularized incomplete beta function and its inverse
 * (Clopper-Pearson bounds), epsilon lower bounds from a distinguisher's counts (Jagielski et al.
 * 2020, Nasr et al. 2021) and from a one-run audit (Steinke, Nasr, Jagielski 2023). Pure
 * functions, no allocation except the one-run scratch. */
#include "../core/core_impl.h"
#include "audit_impl.h"
#include "dpdo/status.h"
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* continued fraction of I_x(a, b) (modified Lentz), for x < (a + 1) / (a + b + 2) */
static double betacf(double x, double a, double b)
{
    const double tiny = 1e-300, eps = 1e-16;
    double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap;
    if (fabs(d) < tiny) d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m < 1000000; m++) {
        double m2 = 2.0 * m, aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1 + aa * d;
        if (fabs(d) < tiny) d = tiny;
        c = 1 + aa / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        if (fabs(d) < tiny) d = tiny;
        c = 1 + aa / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < eps) break;
    }
    return h;
}

/* log of x^a (1-x)^b / (a B(a, b)) */
static double log_front(double x, double a, double b)
{
    return dpdo__lgamma(a + b) - dpdo__lgamma(a) - dpdo__lgamma(b) + a * log(x) + b * log1p(-x) -
           log(a);
}

double dpdo__incbeta(double x, double a, double b)
{
    if (!(a > 0) || !(b > 0) || !(x >= 0) || !(x <= 1) || !isfinite(a) || !isfinite(b)) return NAN;
    if (x == 0) return 0;
    if (x == 1) return 1;
    if (x < (a + 1) / (a + b + 2)) return exp(log_front(x, a, b)) * betacf(x, a, b);
    return 1 - exp(log_front(1 - x, b, a)) * betacf(1 - x, b, a);
}

/* log of the density x^(a-1) (1-x)^(b-1) / B(a, b) */
static double log_pdf(double x, double a, double b)
{
    return dpdo__lgamma(a + b) - dpdo__lgamma(a) - dpdo__lgamma(b) + (a - 1) * log(x) +
           (b - 1) * log1p(-x);
}

double dpdo__incbeta_inv(double p, double a, double b)
{
    if (!(a > 0) || !(b > 0) || !(p >= 0) || !(p <= 1) || !isfinite(a) || !isfinite(b)) return NAN;
    if (p == 0) return 0;
    if (p == 1) return 1;
    /* invariant: I(lo) <= p <= I(hi) */
    double lo = 0, hi = 1, x = a / (a + b);
    for (int it = 0; it < 2000; it++) {
        double f = dpdo__incbeta(x, a, b) - p;
        if (f == 0) return x;
        if (f < 0)
            lo = x;
        else
            hi = x;
        if (hi - lo <= 4 * DBL_EPSILON * hi || hi - lo < DBL_MIN) break;
        /* Newton step, kept when it lands strictly inside the bracket and shrinks it enough */
        double dens = exp(log_pdf(x, a, b)), nx = x - f / dens;
        int ok = dens > 0 && isfinite(nx) && nx > lo && nx < hi;
        if (ok && it % 4 != 3) { /* every fourth step bisects, so the bracket always shrinks */
            x = nx;
        } else if (lo > 0 && hi / lo > 16) {
            x = sqrt(lo * hi); /* geometric bisection: tiny quantiles in few steps */
        } else if (lo == 0) {
            x = hi > 1e-300 ? hi * 1e-3 : hi / 2;
        } else {
            x = lo + (hi - lo) / 2;
        }
        if (x <= lo || x >= hi) x = lo + (hi - lo) / 2;
        if (x <= lo || x >= hi) break;
    }
    return lo + (hi - lo) / 2;
}

double dpdo__binom_sf(int64_t k, int64_t n, double p)
{
    if (k <= 0) return 1;
    if (k > n) return 0;
    return dpdo__incbeta(p, (double)k, (double)(n - k + 1));
}

DPDO_API int dpdo_audit_clopper_pearson(int64_t k, int64_t n, double confidence, double *lower,
                                        double *upper)
{
    if (n < 1 || k < 0 || k > n || !(confidence > 0 && confidence < 1) || (!lower && !upper))
        return DPDO_E_INVAL;
    double alpha = 1 - confidence;
    /* lower: the p with P[Bin(n, p) >= k] = alpha; upper: the p with P[Bin(n, p) <= k] = alpha */
    if (lower) *lower = k == 0 ? 0.0 : dpdo__incbeta_inv(alpha, (double)k, (double)(n - k + 1));
    if (upper)
        *upper = k == n ? 1.0 : dpdo__incbeta_inv(1 - alpha, (double)(k + 1), (double)(n - k));
    return DPDO_OK;
}

/* epsilon implied by TPR >= tl, FPR <= fu (both ways), at delta; 0 if none */
static double eps_from_rates(double tl, double fu, double delta)
{
    double e = 0;
    if (tl - delta > 0 && fu < 1) { /* TPR <= e^eps FPR + delta */
        double v = fu > 0 ? log((tl - delta) / fu) : INFINITY;
        if (v > e) e = v;
    }
    double tnl = 1 - fu, fnu = 1 - tl; /* TNR <= e^eps FNR + delta */
    if (tnl - delta > 0) {
        double v = fnu > 0 ? log((tnl - delta) / fnu) : INFINITY;
        if (v > e) e = v;
    }
    return e;
}

DPDO_API int dpdo_audit_epsilon_from_counts(int64_t tp, int64_t n1, int64_t fp, int64_t n0,
                                            double delta, double confidence, double *eps)
{
    if (!eps || n1 < 1 || n0 < 1 || tp < 0 || tp > n1 || fp < 0 || fp > n0 ||
        !(delta >= 0 && delta < 1) || !(confidence > 0 && confidence < 1))
        return DPDO_E_INVAL;
    /* each one-sided bound at 1 - alpha/2: both hold together with probability >= 1 - alpha */
    double c2 = 1 - (1 - confidence) / 2, tl, fu;
    dpdo_audit_clopper_pearson(tp, n1, c2, &tl, NULL);
    dpdo_audit_clopper_pearson(fp, n0, c2, NULL, &fu);
    *eps = eps_from_rates(tl, fu, delta);
    return DPDO_OK;
}

int dpdo__cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* count of v[0..n) (sorted) that are > t */
static int64_t count_above(const double *v, int64_t n, double t)
{
    int64_t lo = 0, hi = n; /* first index with v > t */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (v[mid] > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return n - lo;
}

DPDO_API int dpdo_audit_choose_threshold(const double *s1, int64_t n1, const double *s0, int64_t n0,
                                         double delta, double confidence, double *threshold,
                                         int32_t *direction, double *eps)
{
    if (!s1 || !s0 || n1 < 1 || n0 < 1 || !threshold || !direction || !(delta >= 0 && delta < 1) ||
        !(confidence > 0 && confidence < 1))
        return DPDO_E_INVAL;
    for (int64_t i = 0; i < n1; i++)
        if (isnan(s1[i])) return DPDO_E_INVAL;
    for (int64_t i = 0; i < n0; i++)
        if (isnan(s0[i])) return DPDO_E_INVAL;
    double *a = dpdo__alloc_array((size_t)n1, sizeof *a),
           *b = dpdo__alloc_array((size_t)n0, sizeof *b);
    if (!a || !b) {
        dpdo__free(a), dpdo__free(b);
        return DPDO_E_NOMEM;
    }
    for (int64_t i = 0; i < n1; i++)
        a[i] = s1[i];
    for (int64_t i = 0; i < n0; i++)
        b[i] = s0[i];
    qsort(a, (size_t)n1, sizeof *a, dpdo__cmp_double);
    qsort(b, (size_t)n0, sizeof *b, dpdo__cmp_double);
    /* candidates: order statistics of both samples, a linear grid of 100 and a geometric grid
     * towards each end (ratio 1.15: the tails, where the large epsilons are) */
    double best = -1, bt = 0;
    int32_t bd = 1;
    for (int side = 0; side < 2; side++) {
        const double *v = side ? b : a;
        int64_t nv = side ? n0 : n1;
        for (int grid = 0; grid < 3; grid++) {
            double k = grid == 0 ? 0 : 1;
            for (int64_t c = 0;; c++) {
                int64_t idx;
                if (grid == 0) {
                    if (c >= 100) break;
                    idx = (int64_t)((double)c / 99.0 * (double)(nv - 1));
                } else {
                    if (k > (double)nv / 2) break;
                    idx = grid == 1 ? (int64_t)k - 1 : nv - (int64_t)k;
                    k = floor(k * 1.15) > k ? floor(k * 1.15) : k + 1;
                }
                double t = v[idx];
                for (int off = -1; off <= 0; off++) { /* just above and at the order statistic */
                    double tt = off ? nextafter(t, -INFINITY) : t;
                    int64_t tp = count_above(a, n1, tt), fp = count_above(b, n0, tt);
                    double ea, eb;
                    /* direction +1: guess "dataset 1" when score > t; -1: when score <= t */
                    dpdo_audit_epsilon_from_counts(tp, n1, fp, n0, delta, confidence, &ea);
                    dpdo_audit_epsilon_from_counts(n1 - tp, n1, n0 - fp, n0, delta, confidence,
                                                   &eb);
                    if (ea > best) best = ea, bt = tt, bd = 1;
                    if (eb > best) best = eb, bt = tt, bd = -1;
                }
            }
        }
    }
    dpdo__free(a), dpdo__free(b);
    *threshold = bt;
    *direction = bd;
    if (eps) *eps = best;
    return DPDO_OK;
}

DPDO_API int dpdo_audit_epsilon_at_threshold(const double *s1, int64_t n1, const double *s0,
                                             int64_t n0, double threshold, int32_t direction,
                                             double delta, double confidence, double *eps,
                                             double *tpr, double *fpr)
{
    if (!s1 || !s0 || n1 < 1 || n0 < 1 || !eps || (direction != 1 && direction != -1) ||
        isnan(threshold))
        return DPDO_E_INVAL;
    int64_t tp = 0, fp = 0;
    for (int64_t i = 0; i < n1; i++)
        tp += direction > 0 ? s1[i] > threshold : s1[i] <= threshold;
    for (int64_t i = 0; i < n0; i++)
        fp += direction > 0 ? s0[i] > threshold : s0[i] <= threshold;
    if (tpr) *tpr = (double)tp / (double)n1;
    if (fpr) *fpr = (double)fp / (double)n0;
    return dpdo_audit_epsilon_from_counts(tp, n1, fp, n0, delta, confidence, eps);
}

double dpdo__one_run_pvalue(int64_t m, int64_t r, int64_t v, double eps, double delta, double *pmf)
{
    if (v <= 0) return 1;
    double q = 1 / (1 + exp(-eps)), lq = log(q), lr = log1p(-q);
    double lgr = dpdo__lgamma((double)r + 1);
    for (int64_t j = 0; j <= r; j++)
        pmf[j] = exp(lgr - dpdo__lgamma((double)j + 1) - dpdo__lgamma((double)(r - j) + 1) +
                     (double)j * lq + (double)(r - j) * lr);
    double beta = 0; /* f(v) = P[Bin >= v] */
    for (int64_t j = r; j >= v; j--)
        beta += pmf[j];
    double alpha = 0, sum = 0; /* max_i P[v - i <= Bin < v] / i */
    for (int64_t i = 1; i <= v; i++) {
        sum += pmf[v - i];
        if (sum > (double)i * alpha) alpha = sum / (double)i;
    }
    double pv = beta + alpha * delta * 2.0 * (double)m;
    return pv < 1 ? pv : 1;
}

DPDO_API int dpdo_audit_one_run_epsilon(int64_t m, int64_t r, int64_t v, double delta,
                                        double confidence, double *eps)
{
    if (!eps || m < 1 || r < 0 || r > m || v < 0 || v > r || !(delta >= 0 && delta < 1) ||
        !(confidence > 0 && confidence < 1))
        return DPDO_E_INVAL;
    *eps = 0;
    if (r == 0 || v == 0) return DPDO_OK;
    double *pmf = dpdo__alloc_array((size_t)r + 1, sizeof *pmf);
    if (!pmf) return DPDO_E_NOMEM;
    double alpha = 1 - confidence, lo = 0, hi = 1;
    if (dpdo__one_run_pvalue(m, r, v, 0, delta, pmf) >= alpha) { /* not even eps = 0 is rejected */
        dpdo__free(pmf);
        return DPDO_OK;
    }
    while (dpdo__one_run_pvalue(m, r, v, hi, delta, pmf) < alpha && hi < 1e3)
        lo = hi, hi *= 2;
    for (int it = 0; it < 60; it++) { /* invariant: p(lo) < alpha <= p(hi) */
        double mid = (lo + hi) / 2;
        if (dpdo__one_run_pvalue(m, r, v, mid, delta, pmf) < alpha)
            lo = mid;
        else
            hi = mid;
    }
    dpdo__free(pmf);
    *eps = lo;
    return DPDO_OK;
}

/* ---- the white-box bound: a lower confidence bound on a Gaussian shift ------------------ */

/* z with P[N(0,1) > z] = a, a in (0, 1/2]: bisection on erfc (60 halvings of [0, 40]) */
double dpdo__z_upper(double a)
{
    double lo = 0, hi = 40;
    for (int it = 0; it < 80; it++) {
        double mid = 0.5 * (lo + hi);
        if (0.5 * erfc(mid / sqrt(2.0)) > a)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

/* the p-quantile of chi-square(df) from the Wilson-Hilferty cube (relative error below 1e-3 of
 * the quantile for df >= 30 at the levels used here); z = the normal quantile of p */
double dpdo__chi2_quantile(double df, double z)
{
    double c = 2.0 / (9.0 * df), t = 1 - c + z * sqrt(c);
    return t > 0 ? df * t * t * t : 0;
}

static void mean_var(const double *s, int64_t n, double *m, double *v)
{
    double a = 0, b = 0;
    for (int64_t i = 0; i < n; i++)
        a += s[i];
    a /= (double)n;
    for (int64_t i = 0; i < n; i++)
        b += (s[i] - a) * (s[i] - a);
    *m = a, *v = b / (double)(n - 1);
}

/* the white-box statistics' input: two classes of at least 30 finite scores, confidence in (0, 1)
 */
static int white_box_input(const double *s1, int64_t n1, const double *s0, int64_t n0,
                           double confidence)
{
    if (!s1 || !s0 || n1 < 30 || n0 < 30 || !(confidence > 0 && confidence < 1)) return 0;
    for (int64_t i = 0; i < n1; i++)
        if (!isfinite(s1[i])) return 0;
    for (int64_t i = 0; i < n0; i++)
        if (!isfinite(s0[i])) return 0;
    return 1;
}

DPDO_API int dpdo_audit_mu_lower(const double *s1, int64_t n1, const double *s0, int64_t n0,
                                 double confidence, double *mu)
{
    if (!mu || !white_box_input(s1, n1, s0, n0, confidence)) return DPDO_E_INVAL;
    double m1, v1, m0, v0;
    mean_var(s1, n1, &m1, &v1);
    mean_var(s0, n0, &m0, &v0);
    if (v1 == 0 && v0 == 0) { /* no noise at all: the shift is seen exactly */
        *mu = m1 > m0 ? INFINITY : 0;
        return DPDO_OK;
    }
    /* three intervals, each at level 1 - (1 - confidence)/3: the two spreads (chi-square) and
     * the mean difference at the spreads' upper ends (normal) */
    double a = (1 - confidence) / 3, z = dpdo__z_upper(a);
    double df1 = (double)(n1 - 1), df0 = (double)(n0 - 1);
    double s1h = sqrt(v1 * df1 / dpdo__chi2_quantile(df1, -z)),
           s0h = sqrt(v0 * df0 / dpdo__chi2_quantile(df0, -z));
    double s1l = sqrt(v1 * df1 / dpdo__chi2_quantile(df1, z)),
           s0l = sqrt(v0 * df0 / dpdo__chi2_quantile(df0, z));
    if (s1l > s0h || s0l > s1h) { /* the spreads differ: no common Gaussian, no GDP figure */
        *mu = NAN;
        return DPDO_OK;
    }
    double dlo = (m1 - m0) - z * sqrt(s1h * s1h / (double)n1 + s0h * s0h / (double)n0);
    double s = s1h > s0h ? s1h : s0h;
    *mu = dlo > 0 ? dlo / s : 0;
    return DPDO_OK;
}

/* ---- the white-box bound for Laplace releases ----------------------------------------------- */

/* The rank c of the distribution-free interval [v(c), v(n+1-c)] (1-based order statistics) of
 * the median of n values at level 1 - a: the largest c in [1, (n+1)/2] with
 * P[Bin(n, 1/2) <= c - 1] = P[Bin(n, 1/2) >= n - c + 1] <= a/2 (bisection: increasing in c);
 * 0 when even c = 1 misses the level */
static int64_t median_rank(int64_t n, double a)
{
    int64_t lo = 0, hi = (n + 1) / 2;
    while (lo < hi) {
        int64_t c = lo + (hi - lo + 1) / 2;
        if (dpdo__binom_sf(n - c + 1, n, 0.5) <= a / 2)
            lo = c;
        else
            hi = c - 1;
    }
    return lo;
}

/* the largest of sum |v_i - m| over m in [lo, hi] (convex in m: at an end) */
static double abs_dev_max(const double *v, int64_t n, double lo, double hi)
{
    double a = 0, b = 0;
    for (int64_t i = 0; i < n; i++)
        a += fabs(v[i] - lo), b += fabs(v[i] - hi);
    return a > b ? a : b;
}

DPDO_API int dpdo_audit_eps_laplace_lower(const double *s1, int64_t n1, const double *s0,
                                          int64_t n0, double confidence, double *eps)
{
    if (!eps || !white_box_input(s1, n1, s0, n0, confidence)) return DPDO_E_INVAL;
    double *v1 = dpdo__alloc_array((size_t)n1, sizeof *v1),
           *v0 = dpdo__alloc_array((size_t)n0, sizeof *v0);
    if (!v1 || !v0) {
        dpdo__free(v1), dpdo__free(v0);
        return DPDO_E_NOMEM;
    }
    memcpy(v1, s1, (size_t)n1 * sizeof *v1);
    memcpy(v0, s0, (size_t)n0 * sizeof *v0);
    qsort(v1, (size_t)n1, sizeof *v1, dpdo__cmp_double);
    qsort(v0, (size_t)n0, sizeof *v0, dpdo__cmp_double);
    /* three events, each missed with probability at most a = (1 - confidence)/3: m1 in its
     * median interval [l1, u1], m0 in [l0, u0] (a Laplace law's median is its location), and
     * 2 S/b >= the a-quantile of chi-square(2 (n1 + n0)), S = the sum of |s - m| over both
     * classes (each |s - m| is exponential with mean b). On all three, S <= the largest sum over
     * the intervals, so b <= 2 S_max / q and m1 - m0 >= l1 - u0. */
    double a = (1 - confidence) / 3;
    int64_t c1 = median_rank(n1, a), c0 = median_rank(n0, a);
    *eps = 0;
    if (c1 > 0 && c0 > 0) {
        double l1 = v1[c1 - 1], u1 = v1[n1 - c1], l0 = v0[c0 - 1], u0 = v0[n0 - c0];
        double s = abs_dev_max(v1, n1, l1, u1) + abs_dev_max(v0, n0, l0, u0), d = l1 - u0;
        double q = dpdo__chi2_quantile(2.0 * (double)(n1 + n0), -dpdo__z_upper(a));
        if (d > 0) *eps = s > 0 ? d * q / (2 * s) : INFINITY;
    }
    dpdo__free(v1), dpdo__free(v0);
    return DPDO_OK;
}
