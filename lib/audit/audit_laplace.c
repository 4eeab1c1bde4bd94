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
 * datasets' constants stay in the residuals), choose the sign of the shift and keep the
 * coordinates whose shift the training runs resolve; the test runs give, for each kept
 * coordinate, dpdo_audit_eps_laplace_lower at the confidence split among them (Bonferroni), and
 * the coordinates' bounds add up per release. */
#include "../core/core_impl.h"
#include "audit_impl.h"
#include "dpdo/status.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

extern void dposv_(const char *uplo, const int *n, const int *nrhs, double *a, const int *lda,
                   double *b, const int *ldb, int *info, size_t uplo_len);

static int cmp_dbl(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* the median of v[n] (sorted in place) */
static double median_of(double *v, int64_t n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_dbl);
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
    size_t FF = (size_t)F * (size_t)F, nmax = (size_t)(ntr > nte ? ntr : nte);
    double *m1 = dpdo__calloc((size_t)F, sizeof(double)), *m0 = dpdo__calloc((size_t)F, 8),
           *C = dpdo__calloc(FF, sizeof(double)), *A = dpdo__alloc_array(FF, sizeof(double)),
           *beta = dpdo__calloc(FF, sizeof(double)), *sgn = dpdo__calloc((size_t)F, 8),
           *r1 = dpdo__alloc_array(nmax, 8), *r0 = dpdo__alloc_array(nmax, 8),
           *T1 = dpdo__alloc_array((size_t)F * (size_t)nte, 8),
           *T0 = dpdo__alloc_array((size_t)F * (size_t)nte, 8), *md = dpdo__calloc((size_t)F, 8),
           *bsum = dpdo__calloc((size_t)F, 8), *est = NULL;
    /* start: the first feature of each feature's release; krel, kfirst: the release of each kept
     * coordinate and the first kept coordinate of that release */
    int64_t *start = dpdo__calloc((size_t)F, sizeof(int64_t)), *nb = dpdo__calloc((size_t)F, 8),
            *krel = dpdo__calloc((size_t)F, 8), *kfirst = dpdo__calloc((size_t)F, 8);
    int rc = (!m1 || !m0 || !C || !A || !beta || !sgn || !r1 || !r0 || !T1 || !T0 || !md || !bsum ||
              !start || !nb || !krel || !kfirst)
                 ? DPDO_E_NOMEM
                 : DPDO_OK;
    if (rc) goto out;
    /* each dataset's training means, and the pooled within-dataset cross products (lower part) */
    for (int side = 0; side < 2; side++) {
        const double *X = side ? X0 : X1;
        double *m = side ? m0 : m1;
        for (int64_t r = 0; r < ntr; r++)
            for (int64_t j = 0; j < F; j++)
                m[j] += X[(size_t)r * (size_t)F + (size_t)j] / (double)ntr;
        for (int64_t r = 0; r < ntr; r++) {
            const double *x = X + (size_t)r * (size_t)F;
            for (int64_t j = 0; j < F; j++) {
                double dj = x[j] - m[j];
                for (int64_t k = 0; k <= j; k++)
                    C[(size_t)j * (size_t)F + (size_t)k] += dj * (x[k] - m[k]);
            }
        }
    }
    for (int64_t k = 0; k < F; k++)
        start[k] = k > 0 && rel[k] == rel[k - 1] ? start[k - 1] : k;
    /* the training split: the prediction of each of node c's coordinates from the earlier
     * releases, the sign of its shift and the shift over b (md); the median difference of
     * Laplace samples has a standard error of about b sqrt(2 / ntr) */
    for (int64_t k = 0; k < F; k++) {
        if (own[k] != c) continue;
        int64_t s = start[k];
        double *bk = beta + (size_t)k * (size_t)F;
        if (s > 0) {
            double tr = 0;
            for (int64_t j = 0; j < s; j++)
                tr += C[(size_t)j * (size_t)F + (size_t)j];
            double ridge = 1e-9 * (tr > 0 ? tr / (double)s : 1.0) + 1e-300;
            for (int64_t j = 0; j < s; j++) {
                for (int64_t i = 0; i <= j; i++)
                    A[(size_t)i * (size_t)s + (size_t)j] = A[(size_t)j * (size_t)s + (size_t)i] =
                        C[(size_t)j * (size_t)F + (size_t)i];
                A[(size_t)j * (size_t)s + (size_t)j] += ridge;
                bk[j] = C[(size_t)k * (size_t)F + (size_t)j]; /* j < s <= k: the lower part */
            }
            int nn = (int)s, one = 1, info = 0;
            dposv_("L", &nn, &one, A, &nn, bk, &nn, &info, 1);
            if (info != 0) memset(bk, 0, (size_t)s * sizeof(double)); /* no prediction */
        }
        residuals(X1, F, 0, ntr, k, s, bk, 1.0, r1);
        residuals(X0, F, 0, ntr, k, s, bk, 1.0, r0);
        double md1 = median_of(r1, ntr), md0 = median_of(r0, ntr), b = 0;
        for (int64_t r = 0; r < ntr; r++)
            b += (fabs(r1[r] - md1) + fabs(r0[r] - md0)) / (double)(2 * ntr);
        sgn[k] = md1 >= md0 ? 1.0 : -1.0;
        md[k] = b > 0 ? fabs(md1 - md0) / b : md1 != md0 ? INFINITY : 0;
    }
    /* a release is kept when the sum of its coordinates' |shift| / b exceeds what no shift gives
     * (each a |N(0, s^2)|, s = sqrt(2 / ntr): mean s sqrt(2/pi), variance s^2 (1 - 2/pi)) by 3
     * standard deviations; its coordinates are then bounded on the test split */
    double sd0 = sqrt(2.0 / (double)ntr);
    for (int64_t k = 0; k < F; k++) {
        if (own[k] != c || start[k] != k) continue;
        int64_t e = k;
        double sum = 0;
        for (; e < F && rel[e] == rel[k]; e++)
            sum += md[e];
        double nd = (double)(e - k);
        if (!(sum > sd0 * (nd * 0.7978845608 + 3.0 * sqrt(nd * 0.3633802276)))) continue;
        for (int64_t j = k; j < e; j++) {
            double *bj = beta + (size_t)j * (size_t)F;
            residuals(X1, F, ntr, R, j, k, bj, sgn[j], T1 + (size_t)*kept * (size_t)nte);
            residuals(X0, F, ntr, R, j, k, bj, sgn[j], T0 + (size_t)*kept * (size_t)nte);
            krel[*kept] = rel[k];
            kfirst[*kept] = j == k ? *kept : kfirst[*kept - 1];
            (*kept)++;
        }
    }
    /* the test split in G groups of runs: in each, the estimate sum over the kept coordinates of
     * (median on D1 - median on D0) / b, b = the mean absolute deviation from the medians over
     * the release's kept coordinates and both datasets (a Laplace law's median is its location:
     * each group's median difference is unbiased for the shift, its samples being symmetric);
     * the groups' mean minus Student's t times its standard error bounds the sum at conf */
    int64_t K = *kept, G = nte / 250 < 5 ? 5 : nte / 250 > 30 ? 30 : nte / 250, ng = nte / G;
    if (K == 0) goto out;
    est = dpdo__alloc_array((size_t)G, sizeof *est);
    if (!est) {
        rc = DPDO_E_NOMEM;
        goto out;
    }
    int inf = 0;
    for (int64_t g = 0; g < G; g++) {
        for (int64_t f = 0; f < K; f++)
            bsum[f] = 0, nb[f] = 0;
        for (int64_t f = 0; f < K; f++) {
            double a[2];
            for (int side = 0; side < 2; side++) {
                double *v = side ? r0 : r1;
                memcpy(v, (side ? T0 : T1) + (size_t)f * (size_t)nte + (size_t)(g * ng),
                       (size_t)ng * sizeof(double));
                a[side] = median_of(v, ng);
                for (int64_t r = 0; r < ng; r++) /* the release's deviations, at its first */
                    bsum[kfirst[f]] += fabs(v[r] - a[side]);
                nb[kfirst[f]] += ng;
            }
            md[f] = a[0] - a[1];
        }
        double e = 0;
        for (int64_t f = 0; f < K; f++) {
            int64_t q = kfirst[f];
            double b = bsum[q] / (double)(nb[q] - nb[q] / ng); /* one per median fitted */
            if (b > 0)
                e += md[f] / b;
            else if (md[f] > 0)
                inf = 1;
        }
        est[g] = e;
    }
    if (inf) {
        *eps = INFINITY;
        goto out;
    }
    double mean = 0, var = 0;
    for (int64_t g = 0; g < G; g++)
        mean += est[g] / (double)G;
    for (int64_t g = 0; g < G; g++)
        var += (est[g] - mean) * (est[g] - mean) / (double)(G - 1);
    double lo = mean - t_upper(1 - conf, (double)(G - 1)) * sqrt(var / (double)G);
    *eps = lo > 0 ? lo : 0;
out:
    dpdo__free(m1), dpdo__free(m0), dpdo__free(C), dpdo__free(A), dpdo__free(beta), dpdo__free(sgn),
        dpdo__free(r1), dpdo__free(r0), dpdo__free(T1), dpdo__free(T0), dpdo__free(md),
        dpdo__free(bsum), dpdo__free(est), dpdo__free(start), dpdo__free(nb);
    dpdo__free(krel), dpdo__free(kfirst);
    return rc;
}
