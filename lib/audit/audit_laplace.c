/* SPDX-License-Identifier: BSD-3-Clause */
/* The white box for Laplace releases (DPDO, CPGT; docs/privacy-audit.md, "White-box audit").
 *
 * Every coordinate of every noisy release is a feature, in draw order. Under the audit's problem a
 * release is a linear function of the earlier releases (what a white-box adversary already
 * knows), plus a constant that depends on the dataset (the canary's fresh contribution), plus
 * fresh Laplace noise, coordinate by coordinate. So the residual of a coordinate after its linear
 * prediction from the earlier releases is Laplace(m1, b) on D1 and Laplace(m0, b) on D0, and that
 * coordinate adds |m1 - m0| / b to the release's pure epsilon (the L1 privacy loss of a Laplace
 * release is the sum over its coordinates).
 *
 * The training runs fit the prediction (least squares on each dataset's centred runs, so the
 * datasets' constants stay in the residuals), choose the sign of each coordinate's shift, estimate
 * b per release, and keep the releases whose summed |shift| / b the training runs resolve. The
 * test runs bound, at 1 - conf in all: the summed (median on D1 - median on D0) / b_train over the
 * kept coordinates, from its mean over groups of runs less Student's t times its standard error
 * (the prediction's error included); and each kept release's b from above, by the chi-square law
 * of its residuals' absolute deviations. Their product is the lower bound (comments at each step
 * below). */
#include "../core/core_impl.h"
#include "audit_impl.h"
#include "dpdo/status.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* the median of v[n] (sorted in place) */
static double median_of(double *v, int64_t n)
{
    qsort(v, (size_t)n, sizeof *v, dpdo__cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* residuals out[r] = X[r][k] - sum_{j < s} beta[j] X[r][j], r in [r0, r1) */
static void residuals(const double *X, int64_t F, int64_t r0, int64_t r1, int64_t k, int64_t s,
                      const double *beta, double sign, double *out)
{
    for (int64_t r = r0; r < r1; r++) {
        const double *x = X + (size_t)r * (size_t)F;
        double v = x[k];
        for (int64_t j = 0; j < s; j++)
            v -= beta[j] * x[j];
        out[r - r0] = sign * v;
    }
}

/* the one-sided Student t quantile with nu degrees of freedom at tail a (Cornish-Fisher from the
 * normal one: below 1e-3 relative error for nu >= 4 at these levels) */
static double t_upper(double a, double nu)
{
    double z = dpdo__z_upper(a), z3 = z * z * z, z5 = z3 * z * z;
    return z + (z3 + z) / (4 * nu) + (5 * z5 + 16 * z3 + 3 * z) / (96 * nu * nu);
}

int dpdo__audit_laplace_lower(const double *X1, const double *X0, int64_t R, int64_t F,
                              const int64_t *rel, const int64_t *own, int64_t c, int64_t ntr,
                              double conf, double *eps, int64_t *kept, int64_t *releases)
{
    int64_t nte = R - ntr;
    *eps = 0, *kept = 0, *releases = 0;
    for (int64_t k = 0; k < F; k++)
        *releases += own[k] == c && (k == 0 || rel[k] != rel[k - 1]);
    if (F == 0 || ntr < 30 || nte < 100) return DPDO_OK;
    size_t FF = (size_t)F * (size_t)F, nmax = (size_t)(ntr > nte ? ntr : nte), nF = (size_t)F;
    /* per feature of node c (training split): sh its |shift| (median difference), sgn the
     * shift's sign, ad the absolute deviations from the two datasets' medians, vq the variance
     * that the fitted prediction's error adds to the shift */
    double *m1 = dpdo__calloc(nF, 8), *m0 = dpdo__calloc(nF, 8), *C = dpdo__calloc(FF, 8),
           *A = dpdo__alloc_array(FF, 8), *beta = dpdo__calloc(FF, 8), *sgn = dpdo__calloc(nF, 8),
           *r1 = dpdo__alloc_array(nmax, 8), *r0 = dpdo__alloc_array(nmax, 8),
           *T1 = dpdo__alloc_array(nF * (size_t)nte, 8),
           *T0 = dpdo__alloc_array(nF * (size_t)nte, 8), *sh = dpdo__calloc(nF, 8),
           *ad = dpdo__calloc(nF, 8), *vq = dpdo__calloc(nF, 8), *dx = dpdo__calloc(nF, 8),
           *kb = dpdo__calloc(nF, 8), *kv = dpdo__calloc(nF, 8), *y = dpdo__calloc(nF, 8),
           *est = NULL;
    /* start: the first feature of each feature's release; for the kept coordinates: kfirst the
     * first kept coordinate of their release, kb its training b, kv vq / kb^2 */
    int64_t *start = dpdo__calloc(nF, 8), *kfirst = dpdo__calloc(nF, 8);
    int rc = (!m1 || !m0 || !C || !A || !beta || !sgn || !r1 || !r0 || !T1 || !T0 || !sh || !ad ||
              !vq || !dx || !kb || !kv || !y || !start || !kfirst)
                 ? DPDO_E_NOMEM
                 : DPDO_OK;
    if (rc) goto out;
    /* each dataset's training means, and the pooled within-dataset cross products (lower part) */
    for (int side = 0; side < 2; side++) {
        const double *X = side ? X0 : X1;
        double *m = side ? m0 : m1;
        for (int64_t r = 0; r < ntr; r++)
            for (int64_t j = 0; j < F; j++)
                m[j] += X[(size_t)r * nF + (size_t)j] / (double)ntr;
        for (int64_t r = 0; r < ntr; r++) {
            const double *x = X + (size_t)r * nF;
            for (int64_t j = 0; j < F; j++) {
                double dj = x[j] - m[j];
                for (int64_t k = 0; k <= j; k++)
                    C[(size_t)j * nF + (size_t)k] += dj * (x[k] - m[k]);
            }
        }
    }
    for (int64_t k = 0; k < F; k++)
        start[k] = k > 0 && rel[k] == rel[k - 1] ? start[k - 1] : k;
    /* the training split: each of node c's coordinates predicted from the earlier releases (least
     * squares on the centred runs); the prediction's error adds sigma^2 dx' (X'X)^-1 dx to the
     * variance of the shift (dx = the datasets' mean difference of the predictors) */
    for (int64_t k = 0; k < F; k++) {
        if (own[k] != c) continue;
        int64_t s = start[k];
        double *bk = beta + (size_t)k * nF;
        int nn = (int)s, one = 1, info = 1;
        if (s > 0) {
            double tr = 0;
            for (int64_t j = 0; j < s; j++)
                tr += C[(size_t)j * nF + (size_t)j];
            double ridge = 1e-9 * (tr > 0 ? tr / (double)s : 1.0) + 1e-300;
            for (int64_t j = 0; j < s; j++) {
                for (int64_t i = 0; i <= j; i++)
                    A[(size_t)i * (size_t)s + (size_t)j] = A[(size_t)j * (size_t)s + (size_t)i] =
                        C[(size_t)j * nF + (size_t)i];
                A[(size_t)j * (size_t)s + (size_t)j] += ridge;
                bk[j] = C[(size_t)k * nF + (size_t)j]; /* j < s <= k: the lower part */
            }
            dposv_("L", &nn, &one, A, &nn, bk, &nn, &info, 1);
            if (info != 0) memset(bk, 0, (size_t)s * sizeof(double)); /* no prediction */
        }
        residuals(X1, F, 0, ntr, k, s, bk, 1.0, r1);
        residuals(X0, F, 0, ntr, k, s, bk, 1.0, r0);
        double a1 = 0, a0 = 0, v = 0, q = 0;
        for (int64_t r = 0; r < ntr; r++)
            a1 += r1[r] / (double)ntr, a0 += r0[r] / (double)ntr;
        for (int64_t r = 0; r < ntr; r++)
            v += (r1[r] - a1) * (r1[r] - a1) + (r0[r] - a0) * (r0[r] - a0);
        v /= (double)(2 * ntr - 2);
        if (s > 0 && info == 0) { /* A holds the Cholesky factor of X'X + ridge */
            int info2 = 0;
            for (int64_t j = 0; j < s; j++)
                dx[j] = y[j] = m1[j] - m0[j];
            dpotrs_("L", &nn, &one, A, &nn, y, &nn, &info2, 1);
            for (int64_t j = 0; j < s && info2 == 0; j++)
                q += dx[j] * y[j];
        }
        vq[k] = v * q;
        double md1 = median_of(r1, ntr), md0 = median_of(r0, ntr), d = 0;
        for (int64_t r = 0; r < ntr; r++)
            d += fabs(r1[r] - md1) + fabs(r0[r] - md0);
        ad[k] = d;
        sgn[k] = md1 >= md0 ? 1.0 : -1.0;
        sh[k] = fabs(md1 - md0);
    }
    /* a release is kept when the sum of its coordinates' |shift| / b exceeds what no shift gives
     * (each a |N(0, s^2)|, s = sqrt(2 / ntr): mean s sqrt(2/pi), variance s^2 (1 - 2/pi)) by 3
     * standard deviations; b = its coordinates' absolute deviations over their number less one
     * half per median (the sum about a sample median falls short by about b/2) */
    double sd0 = sqrt(2.0 / (double)ntr);
    for (int64_t k = 0; k < F; k++) {
        if (own[k] != c || start[k] != k) continue;
        int64_t e = k;
        double sum = 0, dev = 0;
        for (; e < F && rel[e] == rel[k]; e++)
            sum += sh[e], dev += ad[e];
        double nd = (double)(e - k), b = dev / (nd * (double)(2 * ntr - 1));
        if (!(b > 0 ? sum / b > sd0 * (nd * 0.7978845608 + 3.0 * sqrt(nd * 0.3633802276))
                    : sum > 0))
            continue;
        for (int64_t j = k; j < e; j++) {
            double *bj = beta + (size_t)j * nF;
            residuals(X1, F, ntr, R, j, k, bj, sgn[j], T1 + (size_t)*kept * (size_t)nte);
            residuals(X0, F, ntr, R, j, k, bj, sgn[j], T0 + (size_t)*kept * (size_t)nte);
            kfirst[*kept] = j == k ? *kept : kfirst[*kept - 1];
            kb[*kept] = b;
            kv[*kept] = b > 0 ? vq[j] / (b * b) : 0;
            (*kept)++;
        }
    }
    int64_t K = *kept;
    if (K == 0) goto out;
    /* the test split, three kinds of events at 1 - conf in all: (1) in G groups of runs, the
     * estimate sum over the kept coordinates of (median on D1 - median on D0) / b_train (each
     * group's median difference is unbiased for the shift, the residuals being symmetric about
     * their location): the groups' mean less Student's t times its standard error (with the
     * prediction's variance) at (1 - conf)/2; (2) for each kept release, b <= B, the chi-square
     * bound from the absolute deviations of its test residuals (2 sum |s - m| / b is chi-square
     * with 2N degrees of freedom for N Laplace samples), at (1 - conf)/2 split among them. On
     * all of them the summed |shift| / b is at least the bound of (1) times min b_train / B. */
    double alpha = 1 - conf, ratio = INFINITY;
    int64_t nkr = 0;
    for (int64_t f = 0; f < K; f++)
        nkr += kfirst[f] == f;
    for (int64_t f = 0; f < K; f++) {
        if (kfirst[f] != f) continue;
        double S = 0, shift = 0;
        int64_t e = f, N = 0;
        for (; e < K && kfirst[e] == f; e++)
            for (int side = 0; side < 2; side++) {
                double *v = side ? r0 : r1;
                memcpy(v, (side ? T0 : T1) + (size_t)e * (size_t)nte, (size_t)nte * sizeof(double));
                double m = median_of(v, nte);
                for (int64_t r = 0; r < nte; r++)
                    S += fabs(v[r] - m);
                shift += side ? -m : m;
                N += nte;
            }
        if (!(S > 0)) { /* a release without noise: infinite if it moves with the canary */
            if (shift > 0) {
                *eps = INFINITY;
                goto out;
            }
            continue;
        }
        double df = 2.0 * (double)N - (double)(e - f) * 2.0; /* one half per median */
        double B = 2 * S / dpdo__chi2_quantile(df, -dpdo__z_upper(alpha / 2 / (double)nkr));
        if (!(kb[f] > 0)) continue; /* no spread in training, some in the test: not bounded */
        if (kb[f] / B < ratio) ratio = kb[f] / B;
    }
    if (!(ratio < INFINITY)) goto out;
    int64_t G = nte / 250 < 5 ? 5 : nte / 250 > 30 ? 30 : nte / 250, ng = nte / G;
    est = dpdo__alloc_array((size_t)G, sizeof *est);
    if (!est) {
        rc = DPDO_E_NOMEM;
        goto out;
    }
    double vpred = 0;
    for (int64_t f = 0; f < K; f++)
        vpred += kb[f] > 0 ? kv[f] : 0;
    for (int64_t g = 0; g < G; g++) {
        double e = 0;
        for (int64_t f = 0; f < K; f++) {
            if (!(kb[f] > 0)) continue;
            double a[2];
            for (int side = 0; side < 2; side++) {
                double *v = side ? r0 : r1;
                memcpy(v, (side ? T0 : T1) + (size_t)f * (size_t)nte + (size_t)(g * ng),
                       (size_t)ng * sizeof(double));
                a[side] = median_of(v, ng);
            }
            e += (a[0] - a[1]) / kb[f];
        }
        est[g] = e;
    }
    double mean = 0, var = 0;
    for (int64_t g = 0; g < G; g++)
        mean += est[g] / (double)G;
    for (int64_t g = 0; g < G; g++)
        var += (est[g] - mean) * (est[g] - mean) / (double)(G - 1);
    double lo = mean - t_upper(alpha / 2, (double)(G - 1)) * sqrt(var / (double)G + vpred);
    *eps = lo > 0 ? lo * ratio : 0;
out:
    dpdo__free(m1), dpdo__free(m0), dpdo__free(C), dpdo__free(A), dpdo__free(beta), dpdo__free(sgn),
        dpdo__free(r1), dpdo__free(r0), dpdo__free(T1), dpdo__free(T0);
    dpdo__free(sh), dpdo__free(ad), dpdo__free(vq), dpdo__free(dx), dpdo__free(kb), dpdo__free(kv),
        dpdo__free(y), dpdo__free(est), dpdo__free(start), dpdo__free(kfirst);
    return rc;
}
