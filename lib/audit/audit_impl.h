/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal interface of the privacy auditor (lib/audit, the layer above lib/alg; nothing below
 * uses it). Statistics in stats.c, the audits in audit.c. See docs/privacy-audit.md. */
#ifndef DPDO_AUDIT_IMPL_H
#define DPDO_AUDIT_IMPL_H

#include "dpdo/audit.h"
#include <stdint.h>

/* Regularized incomplete beta I_x(a, b) (a, b > 0, x in [0, 1]): continued fraction (modified
 * Lentz) on the side where it converges, the symmetry I_x(a,b) = 1 - I_{1-x}(b,a) on the other.
 * Relative accuracy ~1e-14 for a, b up to 1e8. NaN for bad arguments. */
double dpdo__incbeta(double x, double a, double b);
/* Its inverse in x: the x in [0, 1] with I_x(a, b) = p (p in [0, 1]), by bisection in x
 * safeguarding Newton steps; accurate to a few ulps relative (also for x ~ 1e-300). */
double dpdo__incbeta_inv(double p, double a, double b);
/* P[Binomial(n, p) >= k] (0 <= k, n >= 0, p in [0, 1]) through I_p(k, n - k + 1). */
double dpdo__binom_sf(int64_t k, int64_t n, double p);
/* Steinke-Nasr-Jagielski p-value: probability that >= v of r guesses are right under
 * (eps, delta)-DP with m canaries (Theorem of their Section 5 / their Algorithm for approximate
 * DP): f(v) + 2 m delta max_{1<=i<=v} (f(v-i) - f(v)) / i, f(u) = P[Bin(r, e^eps/(1+e^eps)) >= u].
 * pmf: scratch of r + 1 doubles. */
double dpdo__one_run_pvalue(int64_t m, int64_t r, int64_t v, double eps, double delta, double *pmf);

/* The release audit's scores (audit_scores.c): LDA weights w[F] = (S + ridge)^-1 (mu1 - mu0) from
 * rows X1[n1 x F], X0[n0 x F] (DPDO_OK or DPDO_E_NOMEM / DPDO_E_NUMERIC); the scores sc[R] = X w;
 * the runs of R used for training at fraction frac; the best threshold test on held-out scores. */
int dpdo__audit_lda(const double *X1, int64_t n1, const double *X0, int64_t n0, int64_t F,
                    double *w);
void dpdo__audit_lda_scores(const double *X, int64_t R, int64_t F, const double *w, double *sc);
int64_t dpdo__audit_train_runs(int64_t R, double frac);

/* LAPACK (liblapack; the Fortran calling convention with hidden string lengths) */
extern void dposv_(const char *uplo, const int *n, const int *nrhs, double *a, const int *lda,
                   double *b, const int *ldb, int *info, size_t uplo_len);
extern void dpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a,
                    const int *lda, double *b, const int *ldb, int *info, size_t uplo_len);

/* qsort comparator of doubles, ascending (stats.c) */
int dpdo__cmp_double(const void *a, const void *b);
/* z with P[N(0,1) > z] = a, a in (0, 1/2] (stats.c) */
double dpdo__z_upper(double a);
/* the p-quantile of chi-square(df) (Wilson-Hilferty; z = the normal quantile of p; stats.c) */
double dpdo__chi2_quantile(double df, double z);

/* The white box for Laplace releases (audit_laplace.c): features X1, X0 (R runs x F, D1 and D0,
 * row-major, in draw order); feature k is a coordinate of release rel[k] (nondecreasing) of node
 * own[k]. The first ntr runs fit each of node c's coordinates on the earlier releases and keep
 * those whose shift they resolve (*kept of them); the rest give *eps, a lower bound at
 * confidence conf on the sum over the kept coordinates of |m1 - m0| / b (the pure epsilon of node
 * c's releases by basic composition, at least); *releases = node c's releases among the F
 * features. DPDO_OK or DPDO_E_NOMEM. */
int dpdo__audit_laplace_lower(const double *X1, const double *X0, int64_t R, int64_t F,
                              const int64_t *rel, const int64_t *own, int64_t c, int64_t ntr,
                              double conf, double *eps, int64_t *kept, int64_t *releases);

#ifdef DPDO_FAULT_INJECTION
/* Test build only: weaken the algorithms the audit creates (DPDO__WEAKEN_* bits of
 * lib/engine/engine_impl.h). DPDO_OK or DPDO_E_INVAL. */
int dpdo__audit_set_weaken(dpdo_audit *a, uint32_t bits);
/* Test build only: key every run through dpdo_algorithm_set_node_secret (which discards the
 * prepare, so every run calibrates again) instead of writing the keys the engine reads. */
int dpdo__audit_set_public_keys(dpdo_audit *a, int on);
#endif

#endif /* DPDO_AUDIT_IMPL_H */
