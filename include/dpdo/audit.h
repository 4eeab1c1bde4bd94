/* SPDX-License-Identifier: BSD-3-Clause */
/* Empirical privacy auditing: does an algorithm leak more than the library says?
 *
 * A privacy figure printed by a library is a claim. An audit runs the algorithm on two
 * neighbouring datasets, attacks the result, and turns the attack's success into a lower bound
 * on epsilon that holds with a stated confidence. If the lower bound exceeds the reported
 * epsilon, the claim is false: VIOLATION. See docs/privacy-audit.md.
 *
 * Two methods:
 *   DPDO_AUDIT_RELEASE  many runs on D1 (a canary row at the canary node) and D0 (the row
 *     replaced by its mirror image, or removed), each run with fresh secret keys; a linear
 *     score of the adversary's view (the messages the canary node sends, as a transport sees
 *     them, or the final model), fitted together with a threshold on a training split of the
 *     runs; the threshold test on the other split gives one-sided Clopper-Pearson bounds on
 *     TPR and FPR, and eps_lower = max(log((TPR_lo - delta)/FPR_hi), log((TNR_lo - delta)/FNR_hi))
 *     (Jagielski, Ullman, Oprea 2020; Nasr et al. 2021).
 *   DPDO_AUDIT_ONE_RUN  m canary rows at the canary node, each with an independent fair coin
 *     (its label +1 or -1), one run (plus one pilot run that only fixes the sign of the score);
 *     a score per canary from the transcript or the final model; guesses on the k highest and k
 *     lowest scores; the bound of Steinke, Nasr, Jagielski (NeurIPS 2023, "Privacy Auditing
 *     with One (1) Training Run") for approximate DP.
 *
 * The audit builds its own problem (synthetic data, a complete network, an l2 regularizer, an
 * accountant, "auto" unless options.accountant says otherwise) so that the canary is the worst case
 * the accounting has to cover: the canary's per-sample gradient is clipped at full norm and points
 * along a coordinate no other row uses. The algorithm's options and parameters are the caller's.
 *
 *   DPDO_AUDIT_WHITE_BOX (the default from 0.3 on)  the runs of RELEASE, and besides the transcript
 *     the auditor sees every noisy release of the canary node right after its draw (white
 *     box); the releases' projections on the canary direction are combined by a linear score
 *     fitted on the training runs (the within-class covariance removes what earlier releases
 *     predict, so the score's mean shift over its spread is the composed GDP mu of all
 *     releases, Nasr, Hayes, Steinke, Balle, Tramer, Jagielski, Carlini, Terzis, USENIX
 *     Security 2023, "Tight Auditing of Differentially Private Machine Learning"); a lower
 *     confidence bound on mu (normal and chi-square intervals on the test runs) gives
 *     eps_lower_white = the epsilon of mu_lower-GDP at delta. Laplace releases (DPDO, CPGT)
 *     are bounded coordinate by coordinate: each coordinate's residual after its prediction
 *     from the earlier releases gives |m1 - m0| / b, summed over the releases (basic
 *     composition of pure epsilons), a lower confidence bound from groups of test runs, composed
 *     by the audit's accountant as the ledger's Laplace events (mu_lower NaN). eps_lower is the
 *     larger of it and the transcript's threshold bound (the confidence split between them).
 *     A type with a Local/Global policy (DP-WOR-SGD) audited without options.policy is audited
 *     under the "random" policy at the first public seed (from options.seed of the algorithm)
 *     whose decisions give the nodes a Local pass before a Global one, when one exists. The
 *     Laplace white box and the policy set-up: Since 0.4.
 *
 * Every audit runs the algorithm on the path users take, options.path = SECURE (exact discrete
 * noise, fresh OS keys per run) unless asked otherwise; and with the canary at every node in
 * turn unless a node is named.
 *
 * Threads: one audit handle is used by one thread at a time. The statistics functions are
 * pure and thread-safe. Everything in this header: Since 0.2. */
#ifndef DPDO_AUDIT_H
#define DPDO_AUDIT_H

#include "algorithm.h"
#include "export.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ==== ADVANCED ZONE: the privacy auditor ==== */

typedef struct dpdo_audit dpdo_audit;

/* Pinned constants. Since 0.2. */
enum { DPDO_AUDIT_RELEASE = 0, DPDO_AUDIT_ONE_RUN = 1 }; /* options.method */
enum { DPDO_AUDIT_WHITE_BOX = 2 }; /* options.method, the default. Since 0.3. */
enum { DPDO_AUDIT_VIEW_TRANSCRIPT = 0, DPDO_AUDIT_VIEW_MODEL = 1 }; /* options.view */
enum { DPDO_AUDIT_REPLACE = 0, DPDO_AUDIT_REMOVE = 1 };             /* options.neighbour */
enum { DPDO_AUDIT_LOSS_LINEAR = 0, DPDO_AUDIT_LOSS_LOGISTIC = 1 };  /* options.loss */
enum {
    DPDO_AUDIT_CONSISTENT = 0, /* eps_lower <= the claimed epsilon */
    DPDO_AUDIT_VIOLATION = 1,  /* eps_lower > the claimed epsilon: the claim is false (with the
                                  stated confidence) */
    DPDO_AUDIT_NO_CLAIM = 2    /* nothing claimed (no paper bound for this algorithm) */
};

typedef struct dpdo_audit_options {
    size_t struct_size; /* sizeof(dpdo_audit_options) as compiled by the caller             0.2 */
    int32_t method;     /* DPDO_AUDIT_WHITE_BOX (default, 0.3), DPDO_AUDIT_RELEASE or
                           DPDO_AUDIT_ONE_RUN                                               0.2 */
    int32_t view;       /* DPDO_AUDIT_VIEW_TRANSCRIPT (default): every message the canary
                           node sends, as a transport carries it; or VIEW_MODEL: only the
                           averaged output after the last round                            0.2 */
    int32_t neighbour;  /* DPDO_AUDIT_REPLACE (default: the canary row's label flipped, the
                           worst case for replace-one) or DPDO_AUDIT_REMOVE (the row
                           absent from D0; needs rows >= 2)                                 0.2 */
    int32_t randomness; /* where each run's secret node keys come from:
                           DPDO_RANDOMNESS_SECURE (default): the operating system's entropy;
                           DPDO_RANDOMNESS_REPRODUCIBLE: derived from `seed` and the run
                           index (a replayable audit). The algorithms run with
                           options.randomness = REPRODUCIBLE and these keys as node
                           secrets, so every run has fresh private randomness while the
                           public randomness (activation, edges) is that of options.seed. 0.2 */
    int32_t loss;       /* DPDO_AUDIT_LOSS_LINEAR (default: l = -y <a, x>, gradient -y a,
                           the "gradient canary") or DPDO_AUDIT_LOSS_LOGISTIC            0.2 */
    int64_t runs;       /* RELEASE, WHITE_BOX: runs per dataset and node (>= 20; WHITE_BOX
                           >= 200); default 30000 (1000 before 0.3)                         0.2 */
    double train_fraction; /* RELEASE: share of the runs that fits the score and threshold,
                              in (0, 1); default 0.5                                          0.2 */
    double confidence;   /* of the lower bound, in (0, 1); default 0.95                      0.2 */
    int64_t canaries;    /* ONE_RUN: m in [2, 5000]; default 500 (the problem is dense:
                            nodes x m rows of m + 1 features)                                0.2 */
    int64_t guesses;     /* ONE_RUN: k guesses on each side (top k: +1, bottom k: -1),
                            1 <= 2k <= m; 0 (default) = the best of k in {m/100, m/50, m/20,
                            m/10, m/5, m/2} with the confidence split among them (Bonferroni) 0.2 */
    int64_t nodes;       /* n >= 2; default 2                                               0.2 */
    int64_t rows;        /* RELEASE: rows per node, >= 1 (>= 2 for REMOVE); default 1.
                            ONE_RUN: every node has `canaries` rows                          0.2 */
    int64_t dim;         /* RELEASE: features, >= 2 (the last is the canary's); default 4.
                            ONE_RUN: canaries + 1                                            0.2 */
    int64_t canary_node; /* node holding the canary; -1 (default) = the node that computes
                            in the most rounds under options.seed (the adversary's choice) 0.2 */
    double canary_norm;  /* norm of the canary row, >= 0; 0 (default) = options.lipschitz:
                            with the linear loss the canary's gradient then has norm L, the
                            largest any sample may have, so no clipping is needed; a larger
                            norm tests the clipping. RELEASE: the row is K (1,...,1)/sqrt(d)
                            (full norm also under a coordinate-wise clamp), ONE_RUN: K e_j   0.2 */
    double l2;           /* lambda of the l2 regularizer, >= 0 (0 = none); default 0.1     0.2 */
    uint64_t seed;       /* data, and the keys in REPRODUCIBLE mode; default 1              0.2 */
    const char
        *accountant;      /* accountant type of the runs' ledger (dpdo_accountant_type_find):
                             NULL (default) = "auto" (the tightest sound one; "rdp" before
                             0.3); "exact" is tight for unsampled Gaussian releases, also the
                             secure path's fine-grid discrete ones (from 0.3 on)             0.2 */
    const char *policy;   /* DP-WOR-SGD's Local/Global policy by name (dpdo_policy_type_find:
                             "periodic" alternates Local and Global steps); NULL (default) =
                             the algorithm's own; an algorithm without a policy refuses it 0.2 */
    int64_t max_features; /* RELEASE transcript: at most this many message coordinates per
                             run enter the score (the first ones); >= 1; default 64           0.2 */
    int32_t path;         /* the algorithm's own randomness mode, the path audited:
                             DPDO_RANDOMNESS_SECURE (0, default): the path users take (fresh
                             keys, exact discrete noise on the grid, secure charging);
                             DPDO_RANDOMNESS_REPRODUCIBLE: the seeded continuous-noise path.
                             `randomness` above says only where each run's keys come from   0.3 */
    int32_t single_node;  /* 0 (default): with canary_node = -1 the audit is made with the
                             canary at every node in turn (runs per node, the confidence split
                             among them) and reports the worst node; 1: one node only (the
                             adversary's choice). A canary_node >= 0 always audits that node 0.3 */
    int64_t reserved[3];  /* must be 0 (set by _init): room for later fields, docs/abi.md    0.2 */
} dpdo_audit_options;

/* Fill o with the defaults above; struct_size = struct_size. Returns DPDO_OK, DPDO_E_INVAL (o
 * NULL), DPDO_E_VERSION (struct_size < sizeof(size_t)); any older (smaller) or newer (larger)
 * struct_size is accepted (docs/abi.md, "Options structs"). Since 0.2. */
DPDO_API int dpdo_audit_options_init(dpdo_audit_options *o, size_t struct_size);

typedef struct dpdo_audit_result {
    size_t struct_size;     /* sizeof(dpdo_audit_result) as compiled by the caller          0.2 */
    int32_t verdict;        /* DPDO_AUDIT_*: eps_lower against eps_claimed (NO_CLAIM when the
                               accountant cannot account the run's events)                  0.2 */
    int32_t paper_verdict;  /* eps_lower_paper against eps_paper (NO_CLAIM without one)     0.2 */
    double eps_lower;       /* lower bound at `delta` with `confidence`; 0 = nothing shown 0.2 */
    double eps_lower_paper; /* lower bound at delta_paper (NaN without a paper figure)       0.2 */
    double confidence;      /* of both bounds                                                0.2 */
    double eps_claimed;     /* the library's rigorous epsilon of the canary node (the largest
                               over the runs; +inf when not private; NaN when the accountant
                               cannot account the events, e.g. Laplace with "exact")        0.2 */
    double delta;           /* options.delta of the algorithm: where eps_claimed holds       0.2 */
    double eps_paper;       /* the paper's figure (NaN if none)                              0.2 */
    double delta_paper;     /* the delta the paper's figure holds at (NaN if none)           0.2 */
    int32_t paper_valid;    /* 1: the paper's preconditions hold; 0: they do not; -1: none  0.2 */
    int32_t direction;      /* RELEASE: +1 guess D1 when score > threshold, -1 when <=      0.2 */
    int64_t canary_node;    /* the node that held the canary(ies)                            0.2 */
    int64_t runs;           /* algorithm runs made (both datasets, all splits; ONE_RUN: 2) 0.2 */
    int64_t test_runs;      /* RELEASE: runs per dataset in the test split                   0.2 */
    int64_t features;       /* RELEASE: coordinates of the view that enter the score        0.2 */
    int64_t rounds;         /* rounds per run (of the first run)                             0.2 */
    double threshold;       /* RELEASE: the chosen threshold                                 0.2 */
    double tpr, fpr;        /* RELEASE: point estimates on the test split                    0.2 */
    double sigma;           /* noise in use (DPDO_PARAM_SIGMA)                              0.2 */
    int64_t canaries, guesses, correct; /* ONE_RUN: m, guesses made (2k), right guesses      0.2 */
    /* Added in 0.3 (a caller compiled against 0.2 passes the shorter struct; it is filled up to
     * its struct_size) */
    int32_t path;           /* the path audited (options.path): DPDO_RANDOMNESS_SECURE or
                               _REPRODUCIBLE; the verdict holds for that path only          0.3 */
    int32_t keys;           /* where the runs' keys came from (options.randomness)          0.3 */
    double eps_lower_black; /* the threshold test's bound (RELEASE, and WHITE_BOX on the
                               transcript) at the canary node reported; NaN if none        0.3 */
    double eps_lower_white; /* WHITE_BOX: the composed per-release bound: the GDP mu_lower
                               at delta (Laplace releases: the composed pure epsilons, 0.4);
                               NaN when no release was seen or the Gaussian model does not
                               fit (the two classes' variances differ)                     0.3 */
    double mu_lower;        /* WHITE_BOX: lower confidence bound on the composed GDP mu of
                               the canary node's releases                                   0.3 */
    int64_t releases;       /* WHITE_BOX: noisy releases of the canary node per run          0.3 */
    int64_t nodes_audited;  /* canary positions audited (every node, or 1)                  0.3 */
} dpdo_audit_result;

/* Progress: called after every completed run (done of total); return non-zero to stop
 * (dpdo_audit_run then returns DPDO_E_CANCELED). Since 0.2. */
typedef int (*dpdo_audit_progress_fn)(int64_t done, int64_t total, void *user);

/* Allocate an empty audit. *out NULL on failure. DPDO_OK, DPDO_E_INVAL, DPDO_E_NOMEM. Since 0.2. */
DPDO_API int dpdo_audit_create(dpdo_audit **out);
/* Free; NULL is a no-op. Since 0.2. */
DPDO_API void dpdo_audit_destroy(dpdo_audit *a);
/* Message about the last failure; "" if none; "dpdo_audit_errmsg: a is NULL" for NULL.
 * Since 0.2. */
DPDO_API const char *dpdo_audit_errmsg(const dpdo_audit *a);

/* What to audit: `type` (static), the algorithm's options (copied; NULL = defaults; seed is the
 * public seed of every run, randomness is ignored, see dpdo_audit_options.randomness) and the
 * audit's options (copied, the accountant and policy names too (< 64 bytes); NULL = defaults).
 * Clears parameters set earlier. Validates the options (DPDO_E_INVAL with a message naming the
 * field). Returns DPDO_OK, DPDO_E_INVAL, DPDO_E_VERSION. Since 0.2. */
DPDO_API int dpdo_audit_setup(dpdo_audit *a, const dpdo_algorithm_type *type,
                              const dpdo_algorithm_options *alg_opts,
                              const dpdo_audit_options *opts);
/* An algorithm parameter (dpdo_algorithm_set_int/double key; int keys take the value rounded)
 * applied to every algorithm the audit creates; at most 32. Checked when the audit runs.
 * Returns DPDO_OK, DPDO_E_INVAL (NULL, not set up, unknown key, NaN, table full). Since 0.2. */
DPDO_API int dpdo_audit_set_param(dpdo_audit *a, int key, double value);
/* Progress callback (NULL = none); user is BORROWED. DPDO_OK or DPDO_E_INVAL. Since 0.2. */
DPDO_API int dpdo_audit_set_progress(dpdo_audit *a, dpdo_audit_progress_fn fn, void *user);

/* Run the audit and fill *res (res->struct_size must be set by the caller, as with options).
 * Runs the algorithm `runs` times on each dataset (RELEASE) or twice (ONE_RUN); allocates;
 * reads no clock. Returns DPDO_OK, DPDO_E_INVAL (not set up, bad result struct), DPDO_E_VERSION,
 * DPDO_E_CANCELED (the progress callback said stop), or the error of the algorithm's setup or
 * runs (the message names it: "audit: run 17 on D1: ..."). Since 0.2. */
DPDO_API int dpdo_audit_run(dpdo_audit *a, dpdo_audit_result *res);

/* "consistent", "VIOLATION", "no claim"; "(unknown)" otherwise. Thread-safe. Since 0.2. */
DPDO_API const char *dpdo_audit_verdict_name(int verdict);

/* ---- statistics (pure, thread-safe) --------------------------------------------------- */

/* One-sided exact Clopper-Pearson bounds for a binomial proportion from k successes out of n
 * (0 <= k <= n, n >= 1) at `confidence` in (0, 1): *lower = the p with P[Bin(n, p) >= k] =
 * 1 - confidence (0 when k = 0), *upper = the p with P[Bin(n, p) <= k] = 1 - confidence (1
 * when k = n). Either output may be NULL (not both). Computed with the regularized incomplete
 * beta function and a safeguarded Newton root finder. DPDO_OK or DPDO_E_INVAL. Since 0.2. */
DPDO_API int dpdo_audit_clopper_pearson(int64_t k, int64_t n, double confidence, double *lower,
                                        double *upper);
/* epsilon lower bound from a test that says "D1" for tp of n1 runs on D1 and fp of n0 runs on
 * D0: TPR_lo and FPR_hi one-sided Clopper-Pearson at 1 - (1 - confidence)/2 each (so both hold
 * with probability >= confidence), *eps = max(0, log((TPR_lo - delta)/FPR_hi),
 * log((1 - FPR_hi - delta)/(1 - TPR_lo))) (+inf when a denominator is 0). DPDO_OK or
 * DPDO_E_INVAL. Since 0.2. */
DPDO_API int dpdo_audit_epsilon_from_counts(int64_t tp, int64_t n1, int64_t fp, int64_t n0,
                                            double delta, double confidence, double *eps);
/* Choose a threshold test on scores s1[n1] (runs on D1) and s0[n0] (D0): the threshold among
 * 400 quantiles of the scores and the direction (+1: "D1" when score > threshold, -1: when <=)
 * that maximise the bound of dpdo_audit_epsilon_from_counts on these scores. Use it on a
 * training split only: the bound it reports (*eps, may be NULL) is biased upwards. Allocates.
 * DPDO_OK, DPDO_E_INVAL (NULL, NaN score), DPDO_E_NOMEM. Since 0.2. */
DPDO_API int dpdo_audit_choose_threshold(const double *s1, int64_t n1, const double *s0, int64_t n0,
                                         double delta, double confidence, double *threshold,
                                         int32_t *direction, double *eps);
/* The bound of a fixed threshold test on (test-split) scores; *tpr, *fpr (may be NULL) the
 * point estimates. DPDO_OK or DPDO_E_INVAL. Since 0.2. */
DPDO_API int dpdo_audit_epsilon_at_threshold(const double *s1, int64_t n1, const double *s0,
                                             int64_t n0, double threshold, int32_t direction,
                                             double delta, double confidence, double *eps,
                                             double *tpr, double *fpr);
/* The release audit's statistics on given scores: s1[runs] from runs on D1, s0[runs] on D0
 * (independent runs, in order). The first floor(train_fraction * runs) runs of each (at least
 * 15, at most runs - 5) are the training split: its first two thirds propose two threshold
 * tests (dpdo_audit_choose_threshold, and the best test under a normal model of each class's
 * scores at the test split's size), its last third keeps the better; the remaining runs (the
 * test split, used once) give *eps as dpdo_audit_epsilon_at_threshold. threshold, direction,
 * tpr, fpr may be NULL. Allocates. DPDO_OK, DPDO_E_INVAL (runs < 20, non-finite score, bad
 * fraction, delta, confidence), DPDO_E_NOMEM. Since 0.2. */
DPDO_API int dpdo_audit_bound_scores(const double *s1, const double *s0, int64_t runs,
                                     double train_fraction, double delta, double confidence,
                                     double *eps, double *threshold, int32_t *direction,
                                     double *tpr, double *fpr);
/* Steinke-Nasr-Jagielski lower bound: m canaries with fair coins, r guesses, v right: the
 * largest eps (bisection, 1e-15 relative) such that (eps, delta)-DP is rejected at level
 * 1 - confidence, i.e. P[Bin(r, e^eps/(1+e^eps)) >= v] + 2 m delta max_{1<=i<=v}
 * P[v-i <= Bin < v]/i < 1 - confidence; 0 when even eps = 0 is not rejected. 0 <= v <= r <= m.
 * Allocates r + 1 doubles. DPDO_OK, DPDO_E_INVAL, DPDO_E_NOMEM. Since 0.2. */
DPDO_API int dpdo_audit_one_run_epsilon(int64_t m, int64_t r, int64_t v, double delta,
                                        double confidence, double *eps);

/* The white-box audit's statistic: scores s1[n1] (runs on D1) and s0[n0] (D0), independent,
 * modelled as N(m1, v) and N(m0, v) (one linear score of Gaussian releases); *mu = a lower
 * confidence bound on the shift (m1 - m0) / sqrt(v), the GDP mu the scores show: each spread's
 * chi-square interval and the normal interval of the mean difference at the spreads' upper
 * ends, each at level 1 - (1 - confidence)/3; 0 when the difference is not positive; +inf when
 * neither class varies and m1 > m0; NaN when the two spreads' intervals do not overlap (the
 * equal-variance Gaussian model does not fit). n1, n0 >= 30. DPDO_OK or DPDO_E_INVAL (NULL,
 * too few, non-finite score, confidence outside (0, 1)). Pure, thread-safe. Since 0.3. */
DPDO_API int dpdo_audit_mu_lower(const double *s1, int64_t n1, const double *s0, int64_t n0,
                                 double confidence, double *mu);

/* The white-box statistic for Laplace releases (DPDO, CPGT): scores s1[n1] (runs on D1) and
 * s0[n0] (D0), independent, modelled as Laplace(m1, b) and Laplace(m0, b) (one linear score of
 * Laplace releases, whose privacy loss is at most |m1 - m0| / b: pure epsilon-DP); *eps = a
 * lower confidence bound on (m1 - m0) / b at level `confidence`, from three events each at level
 * 1 - (1 - confidence)/3: the distribution-free (order-statistic) interval of each class's
 * median, and the chi-square bound on b from the absolute deviations of both classes, taken at
 * the ends of the median intervals where they are largest (the chi-square quantile by the
 * Wilson-Hilferty cube, relative error below 1e-3 for these degrees of freedom). 0 when the
 * intervals do not show a positive shift; +inf when neither class varies and m1 > m0. n1, n0 >=
 * 30. Sorts copies: allocates n1 + n0 doubles. DPDO_OK, DPDO_E_INVAL (NULL, too few, non-finite
 * score, confidence outside (0, 1)), DPDO_E_NOMEM. Pure, thread-safe. Since 0.3. */
DPDO_API int dpdo_audit_eps_laplace_lower(const double *s1, int64_t n1, const double *s0,
                                          int64_t n0, double confidence, double *eps);

#ifdef __cplusplus
}
#endif
#endif /* DPDO_AUDIT_H */
