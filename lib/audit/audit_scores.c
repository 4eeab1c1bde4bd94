/* SPDX-License-Identifier: BSD-3-Clause */
/* The release audit's scores (audit.c): the LDA direction fitted on training runs, the scores of
 * the runs along it, and the threshold test on held-out scores (dpdo_audit_bound_scores). */
#include "../core/core_impl.h"
#include "audit_impl.h"
#include "dpdo/status.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* LDA weights w = (S + ridge)^-1 (mu1 - mu0) from training rows X1[n1 x F], X0[n0 x F] */
int dpdo__audit_lda(const double *X1, int64_t n1, const double *X0, int64_t n0, int64_t F,
                    double *w)
{
    double *mu1 = dpdo__calloc((size_t)F, sizeof(double)),
           *mu0 = dpdo__calloc((size_t)F, sizeof(double));
    double *S = dpdo__calloc((size_t)F * (size_t)F, sizeof(double));
    if (!mu1 || !mu0 || !S) {
        dpdo__free(mu1), dpdo__free(mu0), dpdo__free(S);
        return DPDO_E_NOMEM;
    }
    for (int64_t r = 0; r < n1; r++)
        for (int64_t j = 0; j < F; j++)
            mu1[j] += X1[r * F + j] / (double)n1;
    for (int64_t r = 0; r < n0; r++)
        for (int64_t j = 0; j < F; j++)
            mu0[j] += X0[r * F + j] / (double)n0;
    for (int side = 0; side < 2; side++) {
        const double *X = side ? X0 : X1, *mu = side ? mu0 : mu1;
        int64_t nr = side ? n0 : n1;
        for (int64_t r = 0; r < nr; r++)
            for (int64_t j = 0; j < F; j++) {
                double dj = X[r * F + j] - mu[j];
                for (int64_t k = 0; k <= j; k++)
                    S[j * F + k] += dj * (X[r * F + k] - mu[k]);
            }
    }
    double tr = 0;
    for (int64_t j = 0; j < F; j++)
        tr += S[j * F + j];
    double ridge = 1e-9 * (tr > 0 ? tr / (double)F : 1.0) + 1e-300;
    for (int64_t j = 0; j < F; j++) {
        S[j * F + j] += ridge;
        for (int64_t k = 0; k < j; k++)
            S[k * F + j] = S[j * F + k];
        w[j] = mu1[j] - mu0[j];
    }
    int nn = (int)F, one = 1, info = 0;
    dposv_("L", &nn, &one, S, &nn, w, &nn, &info, 1);
    int rc = DPDO_OK;
    if (info !=
        0) { /* not positive definite even with the ridge: fall back to the mean difference */
        for (int64_t j = 0; j < F; j++)
            w[j] = mu1[j] - mu0[j];
    }
    dpdo__free(mu1), dpdo__free(mu0), dpdo__free(S);
    return rc;
}

/* Threshold from a normal model of each class's scores (the LDA assumptions): the threshold and
 * direction whose Clopper-Pearson bound, evaluated at the counts the model expects in `ntest`
 * runs per dataset, is the largest. Smooth in the data, so it does not chase lucky counts in
 * the tails as the empirical choice can. */
static void model_threshold(const double *s1, int64_t n1, const double *s0, int64_t n0,
                            int64_t ntest, double delta, double conf, double *thr, int32_t *dir)
{
    double m1 = 0, m0 = 0, v1 = 0, v0 = 0;
    for (int64_t i = 0; i < n1; i++)
        m1 += s1[i] / (double)n1;
    for (int64_t i = 0; i < n0; i++)
        m0 += s0[i] / (double)n0;
    for (int64_t i = 0; i < n1; i++)
        v1 += (s1[i] - m1) * (s1[i] - m1) / (double)(n1 - 1);
    for (int64_t i = 0; i < n0; i++)
        v0 += (s0[i] - m0) * (s0[i] - m0) / (double)(n0 - 1);
    double sd1 = sqrt(v1) + 1e-300, sd0 = sqrt(v0) + 1e-300, sd = sd1 > sd0 ? sd1 : sd0;
    double lo = (m1 < m0 ? m1 : m0) - 9 * sd, hi = (m1 > m0 ? m1 : m0) + 9 * sd, best = -1;
    *thr = (m1 + m0) / 2, *dir = m1 >= m0 ? 1 : -1;
    const int G = 600;
    for (int g = 0; g <= G; g++) {
        double t = lo + (hi - lo) * g / G;
        double tpr = 0.5 * erfc((t - m1) / sd1 / sqrt(2.0)),
               fpr = 0.5 * erfc((t - m0) / sd0 / sqrt(2.0));
        for (int d = 0; d < 2; d++) {
            double p1 = d ? 1 - tpr : tpr, p0 = d ? 1 - fpr : fpr, e = 0;
            int64_t k1 = llround(p1 * (double)ntest), k0 = llround(p0 * (double)ntest);
            dpdo_audit_epsilon_from_counts(k1, ntest, k0, ntest, delta, conf, &e);
            if (e > best) best = e, *thr = t, *dir = d ? -1 : 1;
        }
    }
}

/* runs of each dataset in the training split (the rest is the test split) */
int64_t dpdo__audit_train_runs(int64_t R, double frac)
{
    int64_t ntr = (int64_t)floor(frac * (double)R);
    if (ntr < 15) ntr = 15;
    if (ntr > R - 5) ntr = R - 5;
    return ntr;
}

DPDO_API int dpdo_audit_bound_scores(const double *s1, const double *s0, int64_t runs,
                                     double train_fraction, double delta, double confidence,
                                     double *eps, double *threshold, int32_t *direction,
                                     double *tpr, double *fpr)
{
    if (!s1 || !s0 || runs < 20 || !(train_fraction > 0 && train_fraction < 1) ||
        !(delta >= 0 && delta < 1) || !(confidence > 0 && confidence < 1) || !eps)
        return DPDO_E_INVAL;
    for (int64_t i = 0; i < runs; i++)
        if (!isfinite(s1[i]) || !isfinite(s0[i])) return DPDO_E_INVAL;
    int64_t ntr = dpdo__audit_train_runs(runs, train_fraction), nte = runs - ntr,
            nfit = ntr - ntr / 3, nval = ntr - nfit;
    /* two candidate tests from the fitting part of the training runs (the empirical choice and
     * the normal model's); the validation part (the last third) picks one; the test split then
     * gives the bound */
    double thr = 0, thr_m = 0, ev = 0, evm = 0;
    int32_t dir = 1, dir_m = 1;
    int rc = dpdo_audit_choose_threshold(s1, nfit, s0, nfit, delta, confidence, &thr, &dir, NULL);
    if (rc) return rc;
    model_threshold(s1, nfit, s0, nfit, nte, delta, confidence, &thr_m, &dir_m);
    dpdo_audit_epsilon_at_threshold(s1 + nfit, nval, s0 + nfit, nval, thr, dir, delta, confidence,
                                    &ev, NULL, NULL);
    dpdo_audit_epsilon_at_threshold(s1 + nfit, nval, s0 + nfit, nval, thr_m, dir_m, delta,
                                    confidence, &evm, NULL, NULL);
    if (evm >= ev) thr = thr_m, dir = dir_m;
    if (threshold) *threshold = thr;
    if (direction) *direction = dir;
    return dpdo_audit_epsilon_at_threshold(s1 + ntr, nte, s0 + ntr, nte, thr, dir, delta,
                                           confidence, eps, tpr, fpr);
}

/* LDA score of rows X[R x F] with weights w into sc[R] */
void dpdo__audit_lda_scores(const double *X, int64_t R, int64_t F, const double *w, double *sc)
{
    for (int64_t r = 0; r < R; r++) {
        double v = 0;
        for (int64_t j = 0; j < F; j++)
            v += w[j] * X[r * F + j];
        sc[r] = v;
    }
}
