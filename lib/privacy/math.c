/* SPDX-License-Identifier: BSD-3-Clause */
/* Numerical kernels of the accountants: RDP curves of the (subsampled)
 * Gaussian and Laplace mechanisms, RDP/zCDP -> (eps, delta) conversions and
 * the analytic Gaussian mechanism. Everything works in log space where a
 * quantity can under- or overflow, and every function returns a value >= 0
 * (possibly +inf) for valid input: never NaN, never negative.
 *
 * References (formulas implemented from the papers):
 *  [MTZ19] Mironov, Talwar, Zhang. Renyi DP of the Sampled Gaussian Mechanism, 2019.
 *  [WBK19] Wang, Balle, Kasiviswanathan. Subsampled Renyi DP and analytical
 *          moments accountant, AISTATS 2019 (Theorem 9; Theorem 27, the
 *          Gaussian-specific bound, arXiv:1808.00087).
 *  [M17]   Mironov. Renyi differential privacy, CSF 2017 (Prop. 6, Laplace).
 *  [CKS20] Canonne, Kamath, Steinke. The discrete Gaussian for DP, 2020
 *          (Prop. 12; = Balle et al. 2020 Thm 21).
 *  [BW18]  Balle, Wang. Improving the Gaussian mechanism, ICML 2018 (Thm 8).
 *  [BS16]  Bun, Steinke. Concentrated DP, TCC 2016 (Prop. 1.3). */
#include "privacy_impl.h"
#include <float.h>
#include <math.h>

#define LOG_HALF (-0.69314718055994530942)
#define LOG_2 0.69314718055994530942
#define SQRT2 1.41421356237309504880
#define LOG_SQRT_PI 0.57236494292470008707
/* terms more than this far below the running maximum (in log) are dropped:
 * e^-44 ~ 8e-20 relative per term */
#define DROP 44.0

double dpdo__log_add(double a, double b)
{
    if (a == -INFINITY) return b;
    if (b == -INFINITY) return a;
    if (a == INFINITY || b == INFINITY) return INFINITY;
    double m = a > b ? a : b;
    return m + log1p(exp(-fabs(a - b)));
}

/* log(1 + e^x) without overflow */
static double softplus(double x)
{
    if (x > 36.0) return x + exp(-x);
    if (x < -36.0) return exp(x);
    return log1p(exp(x));
}

/* log(e^x - 1) for x > 0 */
static double log_expm1(double x)
{
    if (x > 40.0) return x + log1p(-exp(-x));
    return log(expm1(x));
}

double dpdo__log_erfc(double x)
{
    if (x < 25.0) return log(erfc(x));
    /* erfc(x) = e^{-x^2}/(x sqrt(pi)) (1 - 1/(2x^2) + 3/(2x^2)^2 - 15/(2x^2)^3 + 105/(2x^2)^4),
     * truncation error < 945/(2x^2)^5 < 1e-12 relative for x >= 25 */
    double r = 1.0 / (2.0 * x * x);
    double s = 1.0 - r * (1.0 - r * (3.0 - r * (15.0 - 105.0 * r)));
    return -x * x - log(x) - LOG_SQRT_PI + log(s);
}

double dpdo__log_ndtr(double x)
{
    return LOG_HALF + dpdo__log_erfc(-x / SQRT2);
}

static double logk(int64_t k, const double *logtab, int64_t n)
{
    return (logtab && k < n) ? logtab[k] : log((double)k);
}

/* log A_alpha for integer alpha >= 2 and 0 < q < 1 [MTZ19, Sec. 3.3]:
 *   A = E_{K ~ Bin(alpha, q)} exp((K^2 - K) / (2 z^2)).
 * The K = 0 and K = 1 terms are exactly 1, so
 *   A - 1 = sum_{k>=2} pmf(k) expm1((k^2 - k)/(2 z^2))
 * is a sum of positive terms: no cancellation even for q ~ 1e-6, where the
 * textbook sum of terms around 1 loses all digits. Summed in log space. */
double dpdo__log_a_int_ref(double q, double z, int64_t alpha, const double *logtab,
                           int64_t logtab_n)
{
    double inv2 = 1.0 / (2.0 * z * z);
    double lq = log(q), l1q = log1p(-q), lr = lq - l1q;
    double a = (double)alpha;
    /* log pmf(k) built incrementally: log C(alpha,k) + k lq + (alpha-k) l1q */
    double lpmf = a * l1q; /* k = 0 */
    /* two passes over the log terms (cheap additions): the first finds the
     * largest term M, the second sums exp(t - M) over the terms within e^-44
     * of it, so only the terms that matter cost an exp */
    double M = -INFINITY, acc = 0.0;
    for (int pass = 0; pass < 2; pass++) {
        lpmf = a * l1q;
        for (int64_t k = 1; k <= alpha; k++) {
            lpmf += logk(alpha - k + 1, logtab, logtab_n) - logk(k, logtab, logtab_n) + lr;
            if (k < 2) continue;
            double c = (double)(k * k - k) * inv2;
            double t = lpmf + (c > 40.0 ? c : log_expm1(c));
            if (pass == 0) {
                if (t > M) M = t;
            } else if (t > M - DROP) {
                acc += exp(t - M);
            }
        }
        if (M == -INFINITY || isnan(M)) break;
    }
    if (M == -INFINITY || !(acc > 0)) return 0.0;
    return softplus(M + log(acc));
}

/* Fractional alpha by the series of [MTZ19, Sec. 3.3]: A = A0 + A1 with
 * z0 = z^2 log(1/q - 1) + 1/2 and, for i = 0, 1, 2, ...,
 *   A0 += C(alpha,i) q^i (1-q)^(alpha-i) e^{(i^2-i)/(2z^2)} erfc((i - z0)/(sqrt2 z))/2
 *   A1 += C(alpha,i) q^(alpha-i) (1-q)^i e^{((alpha-i)^2-(alpha-i))/(2z^2)}
 *         erfc((z0 - (alpha-i))/(sqrt2 z))/2.
 * The coefficients C(alpha,i) change sign for i > alpha, so the terms are
 * summed SIGNED (positive and negative parts kept separately in log space,
 * never their absolute values).
 *
 * Truncation. Past i = alpha + 1 the terms alternate in sign and their
 * magnitudes decay only polynomially (~ i^-(alpha+2) e^{-z0^2/(2z^2)}), so
 * plain truncation at a tiny term needs up to ~10^3 terms for alpha near 1.
 * Once an upper bound of both terms of an index is below e^-18 times the
 * current A, the next 16 signed terms are summed with the Euler-van
 * Wijngaarden transform (repeated averaging of partial sums), and twice the
 * spread of the last two averaging levels is added as a truncation margin (if
 * the tail does not alternate: NaN). A rounding margin of 2^-50 (i+1)
 * sum|terms| is added too. Sums are kept in linear space relative to a moving
 * scale e^M (erfc evaluated directly unless it would underflow). Returns NaN
 * when the positive part does not dominate (cancellation) or the series has
 * not converged after 20000 indices; the caller then uses the
 * convexity upper bound. The tests compare against quadrature to 1e-7. */
#define TAIL_START 18.0
#define NTAIL 10
/* 0.5 erfc(x) e^{base - M}, computed in linear space when erfc does not
 * underflow */
static double half_erfc_scaled(double base, double x, double M)
{
    if (x < 25.0) return 0.5 * erfc(x) * exp(base - M);
    return exp(base - M + LOG_HALF + dpdo__log_erfc(x));
}
/* cheap upper bound of log(0.5 erfc(x)): erfc(x) <= min(2, e^{-x^2}) (x >= 0) */
static double log_half_erfc_ub(double x)
{
    return x <= 0.8 ? 0.0 : LOG_HALF - x * x;
}

/* Finish an alternating series whose last NTAIL terms are in tail[]: the
 * repeated averaging of partial sums (Euler transform) estimates the limit,
 * and the result carries a relative margin for rounding (2^-50 per term
 * magnitude) plus twice the last averaging step. Returns log A, or NaN when
 * the sum is not safely positive (the caller then uses the convexity bound). */
static double tail_finish(const double *tail, double pos, double neg, double sabs, double fi,
                          double M)
{
    double ps[NTAIL], acc = 0.0, prev = 0.0;
    for (int k = 0; k < NTAIL; k++)
        ps[k] = (acc += tail[k]);
    for (int lev = NTAIL - 1; lev > 0; lev--) {
        prev = ps[0];
        for (int k = 0; k < lev; k++)
            ps[k] = 0.5 * (ps[k] + ps[k + 1]);
    }
    double total = pos - neg + ps[0];
    if (!(total > 0) || !(pos > 2.0 * neg * DBL_EPSILON)) return NAN;
    double rel = ldexp(1.0, -50) * (fi + 1.0) * (sabs / total) + 2.0 * fabs(ps[0] - prev) / total;
    double la = M + log(total) + log1p(rel);
    return isfinite(la) ? la : NAN;
}

double dpdo__log_a_frac_ref(double q, double z, double alpha)
{
    double lq = log(q), l1q = log1p(-q);
    double z0 = z * z * (log(1.0 / q - 1.0)) + 0.5;
    double inv2 = 1.0 / (2.0 * z * z), sz = SQRT2 * z;
    double M = -INFINITY, pos = 0.0, neg = 0.0, sabs = 0.0; /* sums relative to e^M */
    double lcoef = 0.0;
    int sign = 1;
    int ntail = -1; /* >= 0 while collecting the tail */
    double tail[NTAIL];
    for (int64_t i = 0; i < 20000; i++) {
        double fi = (double)i, j = alpha - fi;
        double b0 = lcoef + fi * lq + j * l1q + (fi * fi - fi) * inv2;
        double b1 = lcoef + j * lq + fi * l1q + (j * j - j) * inv2;
        double x0 = (fi - z0) / sz, x1 = (z0 - j) / sz;
        double ub0 = b0 + log_half_erfc_ub(x0), ub1 = b1 + log_half_erfc_ub(x1);
        double ub = ub0 > ub1 ? ub0 : ub1; /* log of an upper bound of the term */
        if (isnan(ub)) return NAN;
        if (ub > M + 30.0) { /* rescale */
            if (M != -INFINITY) {
                double f = exp(M - ub);
                pos *= f;
                neg *= f;
                sabs *= f;
                for (int k = 0; k < ntail; k++)
                    tail[k] *= f;
            }
            M = ub;
        }
        double v = (ub0 > M - 60.0 ? half_erfc_scaled(b0, x0, M) : 0.0) +
                   (ub1 > M - 60.0 ? half_erfc_scaled(b1, x1, M) : 0.0);
        if (ntail >= 0) {
            tail[ntail] = sign > 0 ? v : -v;
            if (ntail > 0 && (tail[ntail] > 0) == (tail[ntail - 1] > 0) && tail[ntail] != 0.0) {
                return NAN; /* not alternating: the caller uses the convexity bound */
            } else if (++ntail == NTAIL) {
                return tail_finish(tail, pos, neg, sabs, fi, M);
            }
        } else {
            if (sign > 0)
                pos += v;
            else
                neg += v;
            sabs += v;
            double lA = M + log(pos - neg > 0 ? pos - neg : pos); /* current log A (approx.) */
            if (fi > alpha + 1.0 && ub < lA - TAIL_START) {
                ntail = 0;
            }
        }
        /* next coefficient: C(alpha,i+1) = C(alpha,i) (alpha - i)/(i + 1) */
        double f = alpha - fi;
        if (f == 0.0) break; /* integer alpha: the series ended */
        if (f < 0) sign = -sign;
        lcoef += log(fabs(f) / (fi + 1.0));
    }
    if (alpha == floor(alpha) && pos > neg) return M + log(pos - neg);
    return NAN;
}

/* ---- fast kernels (same values as the reference kernels above) -------------
 *
 * dpdo__log_a_int: the same terms, maximum and sum as dpdo__log_a_int_ref,
 * but for alpha <= 256 the log terms of the first pass are kept in a stack
 * buffer, so each term's log(expm1(c)) is evaluated once instead of twice.
 * Bit-identical to the reference. */
#define INT_BUF 256
/* wl: NULL or the memo's table of log(expm1(c_k)) (c_k = (k^2 - k)/(2z^2),
 * k < DPDO__PG_NI; NaN = not yet computed), which depends on z only */
static double log_a_int_w(double q, double z, int64_t alpha, const double *logtab, int64_t logtab_n,
                          double *wl)
{
    if (alpha > INT_BUF) return dpdo__log_a_int_ref(q, z, alpha, logtab, logtab_n);
    double inv2 = 1.0 / (2.0 * z * z);
    double lq = log(q), l1q = log1p(-q), lr = lq - l1q;
    double a = (double)alpha;
    double t[INT_BUF + 1];
    double lpmf = a * l1q, M = -INFINITY;
    for (int64_t k = 1; k <= alpha; k++) {
        lpmf += logk(alpha - k + 1, logtab, logtab_n) - logk(k, logtab, logtab_n) + lr;
        if (k < 2) continue;
        double w;
        if (wl && k < DPDO__PG_NI && !isnan(wl[k])) {
            w = wl[k];
        } else {
            double c = (double)(k * k - k) * inv2;
            w = c > 40.0 ? c : log_expm1(c);
            if (wl && k < DPDO__PG_NI) wl[k] = w;
        }
        t[k] = lpmf + w;
        if (t[k] > M) M = t[k];
    }
    if (M == -INFINITY || isnan(M)) return 0.0;
    double acc = 0.0;
    for (int64_t k = 2; k <= alpha; k++)
        if (t[k] > M - DROP) acc += exp(t[k] - M);
    if (!(acc > 0)) return 0.0;
    return softplus(M + log(acc));
}

double dpdo__log_a_int(double q, double z, int64_t alpha, const double *logtab, int64_t logtab_n)
{
    return log_a_int_w(q, z, alpha, logtab, logtab_n, NULL);
}

/* dpdo__log_a_frac_m: the series of dpdo__log_a_frac_ref with two savings
 * that leave every value bit-identical:
 *  - 0.5 erfc((i - z0)/(sqrt2 z)) does not depend on alpha, so it is kept in
 *    the caller's memo (h0[i], i < DPDO__PG_NE; NaN = not yet computed) and
 *    shared by all fractional orders of one (q, z);
 *  - the current log A (one log per index in the reference) is needed only
 *    for the tail test, which applies only once i > alpha + 1. */
static double half_erfc0(double x0, int64_t i, double *h0)
{
    if (!h0 || i >= DPDO__PG_NE) return 0.5 * erfc(x0);
    if (isnan(h0[i])) h0[i] = 0.5 * erfc(x0);
    return h0[i];
}

/* Early exit with a rigorous lower bound (la_stop < inf). For i >= n with
 * n > alpha, n >= z0 and n >= alpha - z0, both erfc arguments are >= 0 and
 * erfc(x) <= e^{-x^2} gives, with the identity 2 z0 - 1 = 2 z^2 log(1/q - 1),
 *   |term_i| <= |C(alpha,i)| (1-q)^alpha e^{-z0^2/(2z^2)} =: |C(alpha,i)| B.
 * For i > alpha, |C(alpha,i+1)/C(alpha,i)| = 1 - (alpha+1)/(i+1), so
 * |C(alpha,i)| <= |C(alpha,n)| ((n+1)/(i+1))^{alpha+1} and
 *   sum_{i>=n} |term_i| <= |C(alpha,n)| B (1 + (n+1)/alpha).
 * Hence A >= S_{n-1} - that bound (times 4 for the rounding of z0 and of the
 * exponents) - the rounding and dropped-term slack of the partial sum. If
 * log of this lower bound exceeds la_stop, the order cannot be optimal:
 * *stopped = 1 and the lower bound is returned. */
static double log_a_frac_m(double q, double z, double alpha, double *h0, double la_stop,
                           int *stopped)
{
    double lq = log(q), l1q = log1p(-q);
    double z0 = z * z * (log(1.0 / q - 1.0)) + 0.5;
    double inv2 = 1.0 / (2.0 * z * z), sz = SQRT2 * z;
    double M = -INFINITY, pos = 0.0, neg = 0.0, sabs = 0.0;
    double lcoef = 0.0;
    int sign = 1;
    int ntail = -1;
    double tail[NTAIL];
    double nlb = floor(alpha) + 1.0;
    if (z0 > nlb) nlb = ceil(z0);
    if (alpha - z0 > nlb) nlb = ceil(alpha - z0);
    if (!(la_stop < INFINITY)) nlb = INFINITY;
    for (int64_t i = 0; i < 20000; i++) {
        double fi = (double)i, j = alpha - fi;
        if (fi == nlb && M > -INFINITY) {
            double S = pos - neg;
            for (int k = 0; k < ntail; k++)
                S += tail[k];
            double lB = alpha * l1q - z0 * z0 * inv2;
            double tb = 4.0 * exp(lcoef + lB - M) * (1.0 + (fi + 1.0) / alpha);
            double slack = ldexp(1.0, -48) * (fi + 1.0) * sabs + 2.0 * (fi + 1.0) * exp(-60.0);
            double lbv = S - tb - slack;
            if (lbv > 0) {
                double la_lb = M + log(lbv);
                if (la_lb > la_stop) {
                    *stopped = 1;
                    return la_lb;
                }
            }
        }
        double b0 = lcoef + fi * lq + j * l1q + (fi * fi - fi) * inv2;
        double b1 = lcoef + j * lq + fi * l1q + (j * j - j) * inv2;
        double x0 = (fi - z0) / sz, x1 = (z0 - j) / sz;
        double ub0 = b0 + log_half_erfc_ub(x0), ub1 = b1 + log_half_erfc_ub(x1);
        double ub = ub0 > ub1 ? ub0 : ub1;
        if (isnan(ub)) return NAN;
        if (ub > M + 30.0) {
            if (M != -INFINITY) {
                double f = exp(M - ub);
                pos *= f;
                neg *= f;
                sabs *= f;
                for (int k = 0; k < ntail; k++)
                    tail[k] *= f;
            }
            M = ub;
        }
        double v0 = 0.0, v1 = 0.0;
        if (ub0 > M - 60.0)
            v0 = x0 < 25.0 ? half_erfc0(x0, i, h0) * exp(b0 - M)
                           : exp(b0 - M + LOG_HALF + dpdo__log_erfc(x0));
        if (ub1 > M - 60.0) v1 = half_erfc_scaled(b1, x1, M);
        double v = v0 + v1;
        if (ntail >= 0) {
            tail[ntail] = sign > 0 ? v : -v;
            if (ntail > 0 && (tail[ntail] > 0) == (tail[ntail - 1] > 0) && tail[ntail] != 0.0) {
                return NAN;
            } else if (++ntail == NTAIL) {
                return tail_finish(tail, pos, neg, sabs, fi, M);
            }
        } else {
            if (sign > 0)
                pos += v;
            else
                neg += v;
            sabs += v;
            if (fi > alpha + 1.0) {
                double lA = M + log(pos - neg > 0 ? pos - neg : pos);
                if (ub < lA - TAIL_START) ntail = 0;
            }
        }
        double f = alpha - fi;
        if (f == 0.0) break;
        if (f < 0) sign = -sign;
        lcoef += log(fabs(f) / (fi + 1.0));
    }
    if (alpha == floor(alpha) && pos > neg) return M + log(pos - neg);
    return NAN;
}

double dpdo__log_a_frac(double q, double z, double alpha)
{
    int stopped = 0;
    return log_a_frac_m(q, z, alpha, NULL, INFINITY, &stopped);
}

/* log A at an integer order, through the memo (la[k], k < DPDO__PG_NI) */
static double la_int_memo(double q, double z, int64_t k, const double *logtab, int64_t logtab_n,
                          double *memo)
{
    if (k < 2) return 0.0;
    if (!memo) return dpdo__log_a_int(q, z, k, logtab, logtab_n);
    double *wl = memo + DPDO__PG_NI + DPDO__PG_NE;
    if (k >= DPDO__PG_NI) return log_a_int_w(q, z, k, logtab, logtab_n, wl);
    if (isnan(memo[k])) memo[k] = log_a_int_w(q, z, k, logtab, logtab_n, wl);
    return memo[k];
}

void dpdo__pg_memo_reset(double *memo)
{
    for (int i = 0; i < DPDO__PG_MEMO; i++)
        memo[i] = NAN;
}

/* Convexity bound: log A_alpha is convex in alpha [M17, Cor. 2 via Hoelder],
 * so between the integers lo = floor(alpha) and lo + 1 the chord is an upper
 * bound; log A_1 = 0. */
static double log_a_interp(double alpha,
                           double (*la_int)(double, double, int64_t, const double *, int64_t),
                           double p, double z, const double *logtab, int64_t logtab_n)
{
    double lo = floor(alpha);
    double llo = lo < 2 ? 0.0 : la_int(p, z, (int64_t)lo, logtab, logtab_n);
    double lhi = la_int(p, z, (int64_t)lo + 1, logtab, logtab_n);
    return llo + (alpha - lo) * (lhi - llo);
}

static double clamp_rdp(double r, double cap)
{
    if (isnan(r) || r < 0) r = 0.0;
    return r < cap ? r : cap;
}

/* The reference path (tests only): the kernels exactly as first written. */
double dpdo__rdp_poisson_gauss_ref(double q, double z, double alpha, const double *logtab,
                                   int64_t logtab_n)
{
    if (!(q > 0)) return 0.0;
    if (alpha == INFINITY) return INFINITY;
    double full = alpha / (2.0 * z * z);
    if (!(full > 0)) return 0.0;
    if (q >= 1.0) return full;
    double la;
    if (alpha == floor(alpha) && alpha <= 1e6) {
        la = dpdo__log_a_int_ref(q, z, (int64_t)alpha, logtab, logtab_n);
    } else {
        la = alpha <= 256 ? dpdo__log_a_frac_ref(q, z, alpha) : NAN;
        double bound = alpha <= 1e6
                           ? log_a_interp(alpha, dpdo__log_a_int_ref, q, z, logtab, logtab_n)
                           : INFINITY;
        if (isnan(la) || la > bound) la = bound;
    }
    return clamp_rdp(la / (alpha - 1.0), full);
}

double dpdo__rdp_poisson_gauss_m(double q, double z, double alpha, const double *logtab,
                                 int64_t logtab_n, double *memo)
{
    int pruned = 0;
    return dpdo__rdp_poisson_gauss_lb(q, z, alpha, logtab, logtab_n, memo, INFINITY, &pruned);
}

double dpdo__rdp_poisson_gauss_lb(double q, double z, double alpha, const double *logtab,
                                  int64_t logtab_n, double *memo, double r_stop, int *pruned)
{
    *pruned = 0;
    if (!(q > 0)) return 0.0;
    if (alpha == INFINITY) return INFINITY;
    double full = alpha / (2.0 * z * z); /* unsampled Gaussian: an upper bound */
    if (!(full > 0)) return 0.0;         /* z = inf (sigma huge) */
    if (q >= 1.0) return full;
    double la;
    if (alpha == floor(alpha) && alpha <= 1e6) {
        la = la_int_memo(q, z, (int64_t)alpha, logtab, logtab_n, memo);
    } else {
        /* the series (near-exact, with its margins), capped by the convexity
         * chord (a valid upper bound; it wins when q is so small that the
         * series' rounding margin exceeds the chord's slack, or if the series
         * failed) */
        la = NAN;
        if (alpha <= 256) {
            double la_stop = r_stop < full ? r_stop * (alpha - 1.0) : INFINITY;
            la = log_a_frac_m(q, z, alpha, memo ? memo + DPDO__PG_NI : NULL, la_stop, pruned);
            if (*pruned) return la / (alpha - 1.0); /* a lower bound of the RDP */
        }
        double bound = INFINITY;
        if (alpha <= 1e6) {
            double lo = floor(alpha);
            double llo = la_int_memo(q, z, (int64_t)lo, logtab, logtab_n, memo);
            double lhi = la_int_memo(q, z, (int64_t)lo + 1, logtab, logtab_n, memo);
            bound = llo + (alpha - lo) * (lhi - llo); /* same chord as log_a_interp */
        }
        if (isnan(la) || la > bound) la = bound;
    }
    return clamp_rdp(la / (alpha - 1.0), full);
}

double dpdo__rdp_poisson_gauss(double q, double z, double alpha, const double *logtab,
                               int64_t logtab_n)
{
    return dpdo__rdp_poisson_gauss_m(q, z, alpha, logtab, logtab_n, NULL);
}

/* log A for the without-replacement subsampled Gaussian, integer alpha >= 2,
 * [WBK19, Thm 9] with eps(j) = j/(2 z^2) and eps(inf) = inf:
 *   A = 1 + g^2 C(a,2) min{4 (e^{eps(2)} - 1), 2 e^{eps(2)}}
 *         + sum_{j=3}^{a} g^j C(a,j) 2 e^{(j-1) eps(j)}. */
static double log_a_wor_int(double g, double z, int64_t alpha, const double *logtab,
                            int64_t logtab_n)
{
    double inv2 = 1.0 / (2.0 * z * z), lg = log(g), a = (double)alpha;
    double e2 = 2.0 * inv2;
    double lc = log(a) + log(a - 1.0) - LOG_2; /* log C(a,2) */
    double m2 = log_expm1(e2) + 2.0 * LOG_2;
    double m2b = e2 + LOG_2;
    double M = 2.0 * lg + lc + (m2 < m2b ? m2 : m2b), acc = 1.0;
    for (int64_t j = 3; j <= alpha; j++) {
        lc += logk(alpha - j + 1, logtab, logtab_n) - logk(j, logtab, logtab_n);
        double fj = (double)j;
        double t = fj * lg + lc + (fj - 1.0) * fj * inv2 + LOG_2;
        if (t > M) {
            acc = acc * exp(M - t) + 1.0;
            M = t;
        } else if (t > M - DROP) {
            acc += exp(t - M);
        }
    }
    return softplus(M + log(acc));
}

/* ---- without replacement: the Gaussian-specific bound [WBK19, Thm 27] -------------
 *
 * For the Gaussian, eps(j) = j/(2z^2) = c j, and the forward differences of
 * g(x) = e^{(x-1) eps(x)} = e^{c x (x-1)} at 0 enter the bound:
 *   A <= 1 + g^2 C(a,2) min{4 (e^{2c} - 1), 2 e^{2c}}
 *          + sum_{j=3}^{a} g^j C(a,j) min{4 sqrt(D_{2 floor(j/2)} D_{2 ceil(j/2)}), 2 e^{c j
 * (j-1)}}, D_l = Delta^l g(0) = sum_k (-1)^{l-k} C(l,k) e^{c k (k-1)}. With Y = e^{Z/z - 1/(2z^2)},
 * Z ~ N(0,1) (the likelihood ratio of N(1,z^2) to N(0,z^2)), E[Y^k] = e^{c k(k-1)}, so D_l = E[(Y -
 * 1)^l] >= 0 for even l. The alternating sum loses every digit when c l is small (D_l ~ (2c)^{l/2}
 * (l-1)!! while the terms are ~1), so each D_l is taken from the direct sum
 * only when its rounding error bound is below 1e-10 relative; otherwise from
 * the positive series: in the falling-factorial basis x^(2) x^(p) = x^(p+2) +
 * 2p x^(p+1) + p(p-1) x^(p), so with v(0,0) = 1 and
 *   v(m+1,p) = c p (p-1)/(m+1) [v(m,p-2) + 2 v(m,p-1) + v(m,p)]
 * D_l = sum_m v(m,l), all terms >= 0 (no cancellation); it is summed scaled
 * (see wor_fdiff) with a rigorous stop. A D_l that cannot be had accurately
 * (out of range, or over 100000 steps) is left out and its term uses the
 * other member of the min (always valid). D_l is used for l <= 256; beyond,
 * the plain term. */
#define WOR_LMAX 256
#define WOR_NH (WOR_LMAX / 2 + 1) /* even l = 0, 2, ..., 256 */

/* log D_l for even l <= lmax into ld[l/2] (NaN where not available) */
static void wor_fdiff(double c, int lmax, double *ld)
{
    double lc[WOR_LMAX + 1], lg[WOR_LMAX + 2];
    int need_series = 0, pmax = 0;
    for (int k = 1; k <= lmax + 1; k++)
        lg[k] = log((double)k);
    ld[0] = 0.0;
    for (int l = 2; l <= lmax; l += 2) {
        /* log C(l,k) incrementally */
        double M = -INFINITY, lck = 0.0;
        for (int k = 0; k <= l; k++) {
            if (k > 0) lck += lg[l - k + 1] - lg[k];
            lc[k] = lck + c * (double)k * (double)(k - 1);
            if (lc[k] > M) M = lc[k];
        }
        double s = 0.0, sabs = 0.0, xmax = 0.0;
        for (int k = 0; k <= l; k++) {
            double t = exp(lc[k] - M);
            s += ((l - k) & 1) ? -t : t;
            sabs += t;
            if (fabs(lc[k]) > xmax) xmax = fabs(lc[k]);
        }
        /* each term carries a relative error <= ~(|x| + l + 4) u, the sum (l+1) u more */
        double err = sabs * (xmax + 2.0 * l + 8.0) * 2.3e-16;
        if (s > 0 && err <= 1e-10 * s) {
            ld[l / 2] = M + log(s) + log1p(1e-10); /* rounded upwards */
        } else {
            ld[l / 2] = NAN;
            need_series = 1;
            pmax = l;
        }
    }
    if (!need_series || !(c > 0)) return;
    /* the series in linear space, scaled: w(m,p) = v(m,p) / K_p with
     * K_p = c^{p/2} p! / (p/2)! (the m = p/2 term for even p), so that
     *   w(m+1,p) = [ (p/2) w(m,p-2) + 2 sqrt(c) (p-1) G_p w(m,p-1) + c p (p-1) w(m,p) ] / (m+1),
     * G_p = Gamma(p/2 + 1) / Gamma(p/2 + 1/2); D_p = K_p sum_m w(m,p). With
     * B = pmax/2 + 2 sqrt(c) pmax max G + c pmax^2, every w(m+1,.) <= (B/(m+1))
     * max w(m,.), so once m + 1 >= 2B the rest of each sum is at most
     * max_p w(m,p): the sum stops when that is below 1e-17 of every needed sum. */
    double wa[WOR_LMAX + 1], wb[WOR_LMAX + 1], S[WOR_LMAX + 1], a1[WOR_LMAX + 1], a2[WOR_LMAX + 1];
    double *v = wa, *w = wb, sc = sqrt(c), gmax = 0.0;
    for (int p = 0; p <= pmax; p++) {
        double G = p >= 1 ? exp(dpdo__lgamma(p / 2.0 + 1.0) - dpdo__lgamma(p / 2.0 + 0.5)) : 0.0;
        if (G > gmax) gmax = G;
        a1[p] = 2.0 * sc * (double)(p - 1) * G;
        a2[p] = c * (double)p * (double)(p - 1);
        v[p] = p == 0 ? 1.0 : 0.0;
        S[p] = v[p];
    }
    double B = pmax / 2.0 + 2.0 * sc * pmax * gmax + c * (double)pmax * (double)pmax;
    int done = 0;
    for (int m = 0; m < 100000 && !done; m++) {
        double inv = 1.0 / (double)(m + 1), U = 0.0;
        w[0] = w[1] = 0.0;
        int ptop = 2 * (m + 1) < pmax ? 2 * (m + 1) : pmax;
        for (int p = 2; p <= pmax; p++) {
            if (p > ptop) {
                w[p] = 0.0;
                continue;
            }
            w[p] = (0.5 * p * v[p - 2] + a1[p] * v[p - 1] + a2[p] * v[p]) * inv;
            if (w[p] > U) U = w[p];
            S[p] += w[p];
        }
        if (!(U < 1e300)) return; /* out of range: these D_l stay unavailable (plain term) */
        double *t = v;
        v = w;
        w = t;
        if ((double)(m + 2) >= 2.0 * B && 2 * (m + 1) >= pmax) {
            done = 1;
            for (int l = 2; l <= pmax; l += 2)
                if (isnan(ld[l / 2]) && !(U < 1e-17 * S[l])) done = 0;
        }
    }
    if (!done) return;
    for (int l = 2; l <= pmax; l += 2)
        if (isnan(ld[l / 2]) && S[l] > 0)
            ld[l / 2] = (l / 2.0) * log(c) + dpdo__lgamma(l + 1.0) - dpdo__lgamma(l / 2.0 + 1.0) +
                        log(S[l]) +
                        log1p(1e-12); /* tail <= 1e-17 relative, rounding ~1e-13: upwards */
}

/* log A for integer alpha >= 2 (Thm 27), D table ld[] (may hold NaN) */
static double log_a_wor27(double g, double z, int64_t alpha, const double *ld)
{
    double c = 1.0 / (2.0 * z * z), lg = log(g), a = (double)alpha;
    double lc = log(a) + log(a - 1.0) - LOG_2; /* log C(a,2) */
    double m2 = log_expm1(2.0 * c) + 2.0 * LOG_2;
    double m2b = 2.0 * c + LOG_2;
    double M = 2.0 * lg + lc + (m2 < m2b ? m2 : m2b), acc = 1.0;
    for (int64_t j = 3; j <= alpha; j++) {
        lc += log((double)(alpha - j + 1)) - log((double)j);
        double fj = (double)j;
        double plain = (fj - 1.0) * fj * c + LOG_2, best = plain;
        if (j <= WOR_LMAX) {
            int lo = (int)(2 * (j / 2)), hi = (int)(2 * ((j + 1) / 2));
            if (hi <= WOR_LMAX && !isnan(ld[lo / 2]) && !isnan(ld[hi / 2])) {
                double f = 2.0 * LOG_2 + 0.5 * (ld[lo / 2] + ld[hi / 2]);
                if (f < best) best = f;
            }
        }
        double t = fj * lg + lc + best;
        if (t > M) {
            acc = acc * exp(M - t) + 1.0;
            M = t;
        } else if (t > M - DROP) {
            acc += exp(t - M);
        }
    }
    return softplus(M + log(acc));
}

/* D table for z, for orders up to alpha (memo: NULL, or the event's memo:
 * [0, WOR_NH) log D, [WOR_NH] the largest l computed) */
static const double *wor_table(double z, double alpha, double *memo, double *local)
{
    int need = alpha >= WOR_LMAX ? WOR_LMAX : (int)(2 * ceil(ceil(alpha) / 2.0));
    if (need < 2) need = 2;
    double c = 1.0 / (2.0 * z * z);
    if (memo) {
        if (!isnan(memo[WOR_NH]) && memo[WOR_NH] >= need) return memo;
        /* compute at least up to 64 at once, so most queries need one table */
        int l2 = need < 64 ? 64 : need;
        wor_fdiff(c, l2, memo);
        memo[WOR_NH] = l2;
        return memo;
    }
    wor_fdiff(c, need, local);
    return local;
}

double dpdo__rdp_wor_gauss_m(double g, double z, double alpha, double *memo)
{
    if (!(g > 0)) return 0.0;
    if (alpha == INFINITY) return INFINITY;
    double full = alpha / (2.0 * z * z);
    if (!(full > 0)) return 0.0;
    if (g >= 1.0) return full;
    if (alpha > 1e6) return full;
    double local[WOR_NH];
    double lo = floor(alpha);
    const double *ld = wor_table(z, lo == alpha ? alpha : lo + 1.0, memo, local);
    double la;
    if (alpha == lo) {
        la = log_a_wor27(g, z, (int64_t)alpha, ld);
    } else { /* convexity chord between floor and floor + 1 (log A_1 = 0) */
        double llo = lo < 2 ? 0.0 : log_a_wor27(g, z, (int64_t)lo, ld);
        double lhi = log_a_wor27(g, z, (int64_t)lo + 1, ld);
        la = llo + (alpha - lo) * (lhi - llo);
    }
    return clamp_rdp(la / (alpha - 1.0), full);
}

double dpdo__rdp_wor_gauss(double g, double z, double alpha, const double *logtab, int64_t logtab_n)
{
    (void)logtab;
    (void)logtab_n;
    return dpdo__rdp_wor_gauss_m(g, z, alpha, NULL);
}

/* the general bound [WBK19, Thm 9] (kept for comparison: the tests check the
 * Gaussian-specific bound never exceeds it) */
double dpdo__rdp_wor_gauss_thm9(double g, double z, double alpha, const double *logtab,
                                int64_t logtab_n)
{
    if (!(g > 0)) return 0.0;
    if (alpha == INFINITY) return INFINITY;
    double full = alpha / (2.0 * z * z);
    if (!(full > 0)) return 0.0;
    if (g >= 1.0) return full;
    double la;
    if (alpha > 1e6) return full;
    if (alpha == floor(alpha))
        la = log_a_wor_int(g, z, (int64_t)alpha, logtab, logtab_n);
    else
        la = log_a_interp(alpha, log_a_wor_int, g, z, logtab, logtab_n);
    return clamp_rdp(la / (alpha - 1.0), full);
}

/* [M17, Prop. 6]: for alpha > 1, with lambda = b / Delta,
 *   (1/(alpha-1)) log( alpha/(2alpha-1) e^{(alpha-1)/lambda}
 *                      + (alpha-1)/(2alpha-1) e^{-alpha/lambda} ). */
double dpdo__rdp_laplace(double lambda, double alpha)
{
    double eps = 1.0 / lambda;
    if (alpha == INFINITY) return eps;
    double t1 = log(alpha / (2.0 * alpha - 1.0)) + (alpha - 1.0) * eps;
    double t2 = log((alpha - 1.0) / (2.0 * alpha - 1.0)) - alpha * eps;
    return clamp_rdp(dpdo__log_add(t1, t2) / (alpha - 1.0), eps);
}

/* pure eps of a Laplace event after amplification by subsampling:
 * log(1 + g (e^eps - 1)) (Poisson: add/remove; WOR: replace-one, Balle,
 * Barthe, Gaboardi 2018). */
double dpdo__pure_eps_event(const dpdo__event_desc *ev)
{
    if (ev->mech != DPDO_MECH_LAPLACE && ev->mech != DPDO_MECH_DISCRETE_LAPLACE) return INFINITY;
    double e = ev->sens / ev->noise;
    if (ev->samp.kind == DPDO_SAMPLING_NONE || ev->samp.q >= 1.0) return e;
    double q = ev->samp.q;
    if (e > 30) return e + log(q + (1.0 - q) * exp(-e)); /* log(q e^e + 1 - q) */
    return log1p(q * expm1(e));
}

double dpdo__rdp_event_m(const dpdo__event_desc *ev, double alpha, const double *logtab,
                         int64_t logtab_n, double *memo)
{
    if (memo && ev->mech == DPDO_MECH_GAUSSIAN && ev->samp.kind == DPDO_SAMPLING_POISSON)
        return dpdo__rdp_poisson_gauss_m(ev->samp.q, ev->noise / ev->sens, alpha, logtab, logtab_n,
                                         memo);
    if (memo && ev->mech == DPDO_MECH_GAUSSIAN && ev->samp.kind == DPDO_SAMPLING_WOR)
        return dpdo__rdp_wor_gauss_m(ev->samp.q, ev->noise / ev->sens, alpha, memo);
    return dpdo__rdp_event(ev, alpha, logtab, logtab_n);
}

double dpdo__rdp_event(const dpdo__event_desc *ev, double alpha, const double *logtab,
                       int64_t logtab_n)
{
    if (ev->mech == DPDO_MECH_GAUSSIAN) {
        double z = ev->noise / ev->sens;
        switch (ev->samp.kind) {
        case DPDO_SAMPLING_POISSON:
            return dpdo__rdp_poisson_gauss(ev->samp.q, z, alpha, logtab, logtab_n);
        case DPDO_SAMPLING_WOR:
            return dpdo__rdp_wor_gauss(ev->samp.q, z, alpha, logtab, logtab_n);
        default: {
            if (alpha == INFINITY) return INFINITY;
            double r = alpha / (2.0 * z * z);
            return r > 0 ? r : 0.0;
        }
        }
    }
    if (ev->mech == DPDO_MECH_DISCRETE_GAUSSIAN || ev->mech == DPDO_MECH_DISCRETE_GAUSSIAN_FINE) {
        /* N_Z(0, s^2) on an integer query of L2 sensitivity D is (D^2/(2 s^2))-zCDP, i.e.
         * RDP(alpha)
         * <= alpha D^2/(2 s^2) [CKS20]. WOR: the Gaussian-specific bound [WBK19, Thm 27] is built
         * from the moments E_q[(p/q)^j] and the even-order ternary divergences E_q[((p - p')/q)^j]
         * of the mixture components; for discrete Gaussians centred on the integer lattice each
         * such moment is a lattice sum of a Gaussian whose centre is an integer combination of
         * the centres, which equals the continuous Gaussian's value exactly (a lattice sum is
         * invariant under integer shifts). The releases here are lattice-aligned (grid rounding),
         * so the continuous bound applies unchanged (docs/privacy.md section 11). Poisson: no
         * amplification is claimed (the order-fractional integral is continuous-specific). */
        double z = ev->noise / ev->sens;
        if (ev->samp.kind == DPDO_SAMPLING_WOR)
            return dpdo__rdp_wor_gauss(ev->samp.q, z, alpha, logtab, logtab_n);
        if (alpha == INFINITY) return INFINITY;
        double r = alpha / (2.0 * z * z);
        return r > 0 ? r : 0.0;
    }
    if (ev->mech == DPDO_MECH_DISCRETE_LAPLACE) {
        /* pure eps (amplified by subsampling) implies RDP(alpha) <= min(eps, alpha eps^2 / 2)
         * [BS16 Prop. 3.3]; the continuous Laplace's RDP curve is not claimed for the lattice */
        double e = dpdo__pure_eps_event(ev);
        double b = alpha * e * e / 2.0;
        return b < e ? b : e;
    }
    if (ev->mech == DPDO_MECH_LAPLACE) {
        if (ev->samp.kind == DPDO_SAMPLING_NONE || ev->samp.q >= 1.0)
            return dpdo__rdp_laplace(ev->noise / ev->sens, alpha);
        /* eps'-DP implies (alpha, min(eps', alpha eps'^2/2))-RDP (BS16 Prop. 3.3) */
        double e = dpdo__pure_eps_event(ev);
        double b = alpha * e * e / 2.0;
        return b < e ? b : e;
    }
    return INFINITY;
}

/* ---- conversions ---------------------------------------------------------- */

double dpdo__rdp_eps_one(double a, double r, double delta, int conv)
{
    if (r == INFINITY || isnan(r)) return INFINITY;
    if (a == INFINITY) return r;
    double e;
    if (conv == DPDO_CONVERSION_CLASSIC) {
        e = r - log(delta) / (a - 1.0);
    } else {
        /* KL <= D_alpha and TV <= sqrt(1 - e^{-KL}) (Bretagnolle-Huber): delta
         * >= that TV already gives (0, delta)-DP */
        if (delta * delta + expm1(-r) >= 0) return 0.0;
        e = r + log1p(-1.0 / a) - (log(delta) + log(a)) / (a - 1.0); /* [CKS20 Prop. 12] */
    }
    return e > 0 ? e : 0.0;
}

double dpdo__rdp_eps(const double *orders, const double *rdp, int64_t n, double delta, int conv,
                     double *order)
{
    double best = INFINITY, bo = NAN;
    for (int64_t i = 0; i < n; i++) {
        double e = dpdo__rdp_eps_one(orders[i], rdp[i], delta, conv);
        if (e < best) {
            best = e;
            bo = orders[i];
        }
    }
    if (order) *order = bo;
    return best;
}

static double logdelta_one(double a, double r, double eps, int conv)
{
    if (r == INFINITY || isnan(r)) return 0.0;
    if (a == INFINITY) return eps >= r ? -INFINITY : 0.0;
    double ld;
    if (conv == DPDO_CONVERSION_CLASSIC) {
        ld = (a - 1.0) * (r - eps);
    } else {
        ld = (a - 1.0) * (r - eps + log1p(-1.0 / a)) - log(a);
        double kl = r > 0 ? 0.5 * log(-expm1(-r)) : -INFINITY;
        if (kl < ld) ld = kl;
    }
    return ld < 0 ? ld : 0.0;
}

double dpdo__rdp_delta(const double *orders, const double *rdp, int64_t n, double eps, int conv,
                       double *order)
{
    double best = 0.0, bo = NAN;
    for (int64_t i = 0; i < n; i++) {
        double ld = logdelta_one(orders[i], rdp[i], eps, conv);
        if (ld < best || (isnan(bo) && ld <= best)) {
            best = ld;
            bo = orders[i];
        }
    }
    if (order) *order = bo;
    return exp(best);
}

/* ---- analytic Gaussian [BW18 Thm 8] ------------------------------------------ */

double dpdo__gauss_delta(double mu, double eps)
{
    if (!(mu > 0)) return 0.0;
    if (mu == INFINITY) return 1.0;
    double a = mu / 2.0 - eps / mu, b = -mu / 2.0 - eps / mu;
    double la = dpdo__log_ndtr(a), lb = eps + dpdo__log_ndtr(b);
    if (!(lb < la)) return 0.0;
    double d = exp(la + log1p(-exp(lb - la)));
    if (!(d >= 0)) return 0.0;
    return d < 1.0 ? d : 1.0;
}

double dpdo__gauss_eps(double mu, double delta)
{
    if (!(mu > 0)) return 0.0;
    if (mu == INFINITY) return INFINITY;
    if (dpdo__gauss_delta(mu, 0.0) <= delta) return 0.0;
    double lo = 0.0, hi = 1.0;
    while (dpdo__gauss_delta(mu, hi) > delta) {
        lo = hi;
        hi *= 2.0;
        if (hi > 1e12) return INFINITY;
    }
    for (int it = 0; it < 300 && hi - lo > 1e-15 * hi; it++) {
        double mid = 0.5 * (lo + hi);
        if (dpdo__gauss_delta(mu, mid) > delta)
            lo = mid;
        else
            hi = mid;
    }
    return hi; /* delta(hi) <= target: an upper bound on the exact epsilon */
}

/* ---- zCDP ------------------------------------------------------------------- */

/* minimise f(alpha) over alpha = 1 + e^u, u in [-30, 30], golden section */
static double golden(double (*f)(double, double, double), double p1, double p2)
{
    double lo = -30.0, hi = 30.0, g = 0.61803398874989484820;
    double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
    double f1 = f(1.0 + exp(x1), p1, p2), f2 = f(1.0 + exp(x2), p1, p2);
    for (int it = 0; it < 200; it++) {
        if (f1 < f2) {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - g * (hi - lo);
            f1 = f(1.0 + exp(x1), p1, p2);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + g * (hi - lo);
            f2 = f(1.0 + exp(x2), p1, p2);
        }
    }
    return f1 < f2 ? f1 : f2;
}

static double zcdp_eps_at(double a, double rho, double delta)
{
    return dpdo__rdp_eps_one(a, rho * a, delta, DPDO_CONVERSION_IMPROVED);
}

static double zcdp_ld_at(double a, double rho, double eps)
{
    return logdelta_one(a, rho * a, eps, DPDO_CONVERSION_IMPROVED);
}

double dpdo__zcdp_eps(double rho, double delta, int conv)
{
    if (!(rho > 0)) return 0.0;
    if (rho == INFINITY) return INFINITY;
    double classic = rho + 2.0 * sqrt(rho * log(1.0 / delta));
    if (conv == DPDO_CONVERSION_CLASSIC) return classic;
    double best = golden(zcdp_eps_at, rho, delta);
    return best < classic ? best : classic;
}

double dpdo__zcdp_delta(double rho, double eps, int conv)
{
    if (!(rho > 0)) return 0.0;
    if (rho == INFINITY) return 1.0;
    double lc = eps > rho ? -(eps - rho) * (eps - rho) / (4.0 * rho) : 0.0;
    if (conv == DPDO_CONVERSION_CLASSIC) return exp(lc);
    double l = golden(zcdp_ld_at, rho, eps);
    if (lc < l) l = lc;
    return exp(l < 0 ? l : 0.0);
}
