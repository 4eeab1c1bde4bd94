/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal privacy-layer interface: handle layouts, the sampling draw used by
 * the engine inside step(), ledger charging by descriptor, the budget guard,
 * and the numerical kernels (RDP curves, conversions, analytic Gaussian).
 * Never installed. */
#ifndef DPDO_PRIVACY_IMPL_H
#define DPDO_PRIVACY_IMPL_H

#include "../core/core_impl.h"
#include "dpdo/accountant.h"
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct dpdo__stream; /* lib/rng/rng_impl.h */

/* A validated sampling scheme (value type). kind DPDO_SAMPLING_*. */
typedef struct dpdo__sampling_desc {
    int32_t kind;
    double q;     /* Poisson rate; m/n for WOR; 1 for none */
    int64_t n, m; /* WOR only */
} dpdo__sampling_desc;

struct dpdo_sampling {
    uint32_t magic; /* DPDO__MAGIC_* while alive, 0 after destroy (core_impl.h) */
    dpdo__sampling_desc d;
    char errmsg[DPDO__ERRMSG_LEN];
};

/* One release: mechanism + sampling + sensitivity + noise (value type). */
typedef struct dpdo__event_desc {
    int32_t mech; /* DPDO_MECH_*; 0 = unset */
    dpdo__sampling_desc samp;
    double sens, noise;
} dpdo__event_desc;

/* An event row of a ledger (DPDO_EV_* fields, dpdo_ledger_events) as a description; shared by
 * the accountants (accountant.c, pld.c). */
static inline void dpdo__event_row_desc(const double *r, dpdo__event_desc *d)
{
    memset(d, 0, sizeof *d);
    d->mech = (int32_t)r[DPDO_EV_MECH];
    d->samp.kind = (int32_t)r[DPDO_EV_SAMPLING];
    d->samp.q = r[DPDO_EV_RATE];
    d->samp.n = (int64_t)r[DPDO_EV_N];
    d->samp.m = (int64_t)r[DPDO_EV_M];
    d->sens = r[DPDO_EV_SENS];
    d->noise = r[DPDO_EV_NOISE];
}

struct dpdo_event {
    uint32_t magic; /* DPDO__MAGIC_* while alive, 0 after destroy (core_impl.h) */
    dpdo__event_desc d;
    char errmsg[DPDO__ERRMSG_LEN];
};

/* Largest count a ledger cell holds (charges beyond it are refused; saved files beyond it are
 * malformed): 2^53, exact in the double arithmetic of the accountants. */
#define DPDO__LEDGER_COUNT_MAX ((int64_t)1 << 53)

struct dpdo_ledger {
    uint32_t magic; /* DPDO__MAGIC_* while alive, 0 after destroy (core_impl.h) */
    int64_t n_nodes;
    int64_t n_events, cap;
    dpdo__event_desc *ev;  /* [cap] distinct events, in order of first charge */
    int64_t *counts;       /* [cap * n_nodes]: counts[k * n_nodes + node] */
    int64_t borrowers;     /* accountants alive that read this ledger */
    int doomed;            /* destroyed while borrowed: freed by the last accountant */
    unsigned char key[64]; /* MAC key (dpdo_ledger_set_key), key_len bytes; 0 = none */
    size_t key_len;
    unsigned char run[16];     /* run identifier of an authenticated ledger (random at set_key, or
                                * adopted from the first file loaded into a pristine ledger) */
    uint64_t seq;              /* changes so far (charge, discharge, reset, load): saved as the
                                * sequence number; loading an older sequence of the same run is refused */
    unsigned char pin_run[16]; /* dpdo_ledger_set_min_sequence: loads must be of this run... */
    uint64_t pin_seq;          /* ...with at least this sequence */
    int pinned;
    dpdo__busy busy; /* taken by the public calls that return a status (DPDO__GUARDED) */
    char errmsg[DPDO__ERRMSG_LEN];
};

/* ---- engine-facing internal API ------------------------------------------- */

/* Draw one round's participants (see dpdo_sampling_draw) from an open stream.
 * out has room for n indices. Returns DPDO_OK, DPDO_E_INVAL (n mismatch for
 * WOR), or the stream's sticky status. Allocates nothing. */
int dpdo__sampling_draw(const dpdo__sampling_desc *d, struct dpdo__stream *st, int64_t n,
                        int64_t *out, int64_t *count);
/* Validate a descriptor; writes a message into err (may be NULL). */
int dpdo__sampling_check(const dpdo__sampling_desc *d, char *err);
/* Fill an event descriptor (validated). */
int dpdo__event_make(dpdo__event_desc *out, int mech, const dpdo__sampling_desc *samp, double sens,
                     double noise, char *err);
/* Charge by descriptor; nodes NULL with n_sel = -1 means all nodes. */
int dpdo__ledger_charge(dpdo_ledger *l, const dpdo__event_desc *ev, int64_t count,
                        const int64_t *nodes, int64_t n_sel);
/* Make room for `extra` new distinct events, so that charges of up to that
 * many new events cannot allocate or fail for lack of memory. */
int dpdo__ledger_reserve(dpdo_ledger *l, int64_t extra);
/* Exact inverse of dpdo__ledger_charge: the event must exist and each
 * selected node must hold at least `count` of it. Trailing event rows whose
 * counts all return to 0 are removed, so charge + discharge restores the
 * ledger exactly. Allocation-free; checks everything before changing anything. */
int dpdo__ledger_discharge(dpdo_ledger *l, const dpdo__event_desc *ev, int64_t count,
                           const int64_t *nodes, int64_t n_sel);
/* Count of event ev held by node (0 if the event is not in the ledger). */
int64_t dpdo__ledger_count(const dpdo_ledger *l, const dpdo__event_desc *ev, int64_t node);
/* Index of the event in the ledger (order of first charge), or -1. */
int64_t dpdo__ledger_find(const dpdo_ledger *l, const dpdo__event_desc *ev);
/* An accountant lets go of its ledger; frees a ledger destroyed while borrowed. */
void dpdo__ledger_release(dpdo_ledger *l);
/* The Gaussian mechanism (DPDO_MECH_GAUSSIAN, _DISCRETE_GAUSSIAN, _DISCRETE_GAUSSIAN_FINE; 0 =
 * GAUSSIAN) that dpdo_accountant_calibrate_sigma / _steps plan for, so that a secure run is
 * calibrated for the events it is charged with. Returns the previous one. Not thread-safe. */
int dpdo__accountant_calib_mech(dpdo_accountant *a, int mech);

/* The ledger an accountant reads. */
dpdo_ledger *dpdo__accountant_ledger(const dpdo_accountant *a);
/* Borrowing (core_impl.h, borrowed handles): an algorithm retains its accountant at setup and
 * releases it when it lets go; release frees an accountant destroyed while borrowed. */
void dpdo__accountant_retain(dpdo_accountant *a);
void dpdo__accountant_release(dpdo_accountant *a);
/* Smallest N with P(Binomial(T, p) > N) <= beta (exact tail; O(T) lgamma). */
double dpdo__binom_quantile(double T, double p, double beta);
/* Worst epsilon over the selected nodes (NULL/-1: all) at delta, optionally
 * with one hypothetical extra event (extra NULL: none) charged `count` times
 * to the selected nodes. */
int dpdo__accountant_epsilon_sel(dpdo_accountant *acc, const int64_t *nodes, int64_t n_sel,
                                 const dpdo__event_desc *extra, double extra_count, double delta,
                                 double *eps, double *order);

/* ---- numerical kernels (math.c); all return values, never fail -------------- */

double dpdo__log_add(double a, double b);
double dpdo__log_erfc(double x); /* log(erfc(x)), accurate for large x */
double dpdo__log_ndtr(double x); /* log(Phi(x)) */
/* RDP of the Poisson-subsampled Gaussian with noise multiplier z at order
 * alpha (> 1, may be +inf). logtab: NULL or log(k) for k = 0..logtab_n-1. */
double dpdo__rdp_poisson_gauss(double q, double z, double alpha, const double *logtab,
                               int64_t logtab_n);
/* Integer-order kernel (alpha an integer >= 2, 0 < q < 1): log A_alpha. */
double dpdo__log_a_int(double q, double z, int64_t alpha, const double *logtab, int64_t logtab_n);
/* Fractional-order kernel by the series; returns NaN if the series failed
 * (cancellation or no convergence), so the caller can fall back. */
double dpdo__log_a_frac(double q, double z, double alpha);
/* Per-(q, z) memo of the Poisson-Gaussian kernels: log A at the integer
 * orders k < DPDO__PG_NI, then 0.5 erfc((i - z0)/(sqrt2 z)) for the series
 * indices i < DPDO__PG_NE (alpha-independent), then log(expm1((k^2-k)/(2z^2)))
 * for k < DPDO__PG_NI (z only). NaN = not computed. A memo
 * belongs to ONE (q, z); reset it (dpdo__pg_memo_reset) when that changes.
 * Values through a memo are bit-identical to values without one. */
#define DPDO__PG_NI 66
#define DPDO__PG_NE 64
#define DPDO__PG_MEMO (2 * DPDO__PG_NI + DPDO__PG_NE) /* + log(expm1(c_k)) table, k < NI */
void dpdo__pg_memo_reset(double *memo);
double dpdo__rdp_poisson_gauss_m(double q, double z, double alpha, const double *logtab,
                                 int64_t logtab_n, double *memo);
/* The same value, unless the order is fractional and a rigorous lower bound
 * of its RDP (partial series + bound of the rest, see math.c) already exceeds
 * r_stop: then *pruned = 1 and that lower bound (> r_stop) is returned
 * instead (the order cannot matter). */
double dpdo__rdp_poisson_gauss_lb(double q, double z, double alpha, const double *logtab,
                                  int64_t logtab_n, double *memo, double r_stop, int *pruned);
/* dpdo__rdp_event with the memo for Poisson-Gaussian events (memo NULL or
 * ignored for other events). */
double dpdo__rdp_event_m(const dpdo__event_desc *ev, double alpha, const double *logtab,
                         int64_t logtab_n, double *memo);
/* Reference (slow) kernels, exactly as first implemented: used by the tests
 * to check that the fast kernels give the same values. */
double dpdo__log_a_int_ref(double q, double z, int64_t alpha, const double *logtab,
                           int64_t logtab_n);
double dpdo__log_a_frac_ref(double q, double z, double alpha);
double dpdo__rdp_poisson_gauss_ref(double q, double z, double alpha, const double *logtab,
                                   int64_t logtab_n);
/* Without-replacement subsampled Gaussian, gamma = m/n: the Gaussian-specific
 * bound (WBK 2019 Thm 27; convexity chord at fractional orders). The _m form
 * memoises the forward-difference table of the event in memo (DPDO__PG_MEMO
 * doubles, reset to NaN when the event changes; NULL: none); same values. */
double dpdo__rdp_wor_gauss(double gamma, double z, double alpha, const double *logtab,
                           int64_t logtab_n);
double dpdo__rdp_wor_gauss_m(double gamma, double z, double alpha, double *memo);
/* The general bound (WBK 2019 Thm 9) the library used before: tests only. */
double dpdo__rdp_wor_gauss_thm9(double gamma, double z, double alpha, const double *logtab,
                                int64_t logtab_n);
double dpdo__rdp_laplace(double lambda, double alpha);
/* RDP curve of one event at one order (dispatch on mechanism and sampling). */
double dpdo__rdp_event(const dpdo__event_desc *ev, double alpha, const double *logtab,
                       int64_t logtab_n);
/* Pure-DP epsilon of one Laplace event after amplification (inf for Gaussian). */
double dpdo__pure_eps_event(const dpdo__event_desc *ev);
/* epsilon at one order (non-decreasing in r); conversions over a curve (orders
 * > 1) return the epsilon/delta and write the optimal order. */
double dpdo__rdp_eps_one(double alpha, double r, double delta, int conv);
double dpdo__rdp_eps(const double *orders, const double *rdp, int64_t n, double delta, int conv,
                     double *order);
double dpdo__rdp_delta(const double *orders, const double *rdp, int64_t n, double eps, int conv,
                       double *order);
double dpdo__gauss_delta(double mu, double eps);
double dpdo__gauss_eps(double mu, double delta);
double dpdo__zcdp_eps(double rho, double delta, int conv);
double dpdo__zcdp_delta(double rho, double eps, int conv);

/* ---- privacy loss distributions (pld.c) ------------------------------------------- */

/* One release's discretised privacy loss: mass p[i] at (lo + i) h, i < n, and
 * mass inf at +infinity; trunc = P-mass whose rounding is not within one bin
 * (truncated tails; enters the lower bound). Owned p. */
typedef struct dpdo__pld_pmf {
    int64_t lo, n;
    double *p;
    double inf, trunc;
} dpdo__pld_pmf;
/* A composition: p[j] at (lo + j) h; inf: mass at +inf; tail_up: bound on the
 * mass above the window (added to delta); alias: 0 (the mass wrapped into the
 * window is in the per-bin bound below); steps: number of releases; trunc: sum of
 * counts x trunc. */
typedef struct dpdo__pld_dist {
    int64_t lo, n;
    double *p;
    double h, inf, tail_up, alias, steps, trunc;
    double fft_err; /* proven 2-norm bound on the tilted composition's rounding error */
    /* per bin j: |exact - p[j]| <= exp(lerr + K - lam (lo + j)) + rel p[j] (pld.c: the FFT's
     * rounding, tilted by e^(lam i) per release, and the mass wrapped into the window) */
    double lam, K, lerr, rel;
} dpdo__pld_dist;
/* FFT buffers and plans kept between compositions (zero-initialise). */
typedef struct dpdo__pld_work {
    int64_t N;
    int64_t max_n; /* largest composed window (0: the default 2^23) */
    double *r, *c, *acc;
    struct fftw_plan_s *fwd, *inv;
} dpdo__pld_work;
/* Connect-the-dots pmf of one event on the grid h Z: direction 0 = remove
 * (or the symmetric pair for unsampled and without-replacement events), 1 =
 * add (Poisson only). Gaussian and Laplace; other mechanisms
 * DPDO_E_UNSUPPORTED; so is a release wider than max_bins bins (0: 2^22). */
int dpdo__pld_event(const dpdo__event_desc *ev, int dir, double h, int64_t max_bins,
                    dpdo__pld_pmf *out, char *err);
/* Pmf-based pld of an integer-valued additive noise with log pmf logpmf(k)
 * on [kmin, kmax] (mass outside goes to +inf), integer shift (sensitivity in
 * grid units), Poisson rate q (1: none), direction 0 remove / 1 add: each
 * atom's P-mass split between its two grid neighbours keeping its P- and
 * Q-mass (connect the dots). */
int dpdo__pld_from_logpmf(double (*logpmf)(void *ctx, int64_t k), void *ctx, int64_t kmin,
                          int64_t kmax, int64_t shift, double q, int dir, double h,
                          dpdo__pld_pmf *out, char *err);
void dpdo__pld_pmf_free(dpdo__pld_pmf *m);
/* Compose pmfs pm[e] counts[e] times each (counts integers >= 1). */
int dpdo__pld_compose(const dpdo__pld_pmf *const *pm, const double *counts, int64_t k, double h,
                      dpdo__pld_work *wk, dpdo__pld_dist *out, char *err);
/* The same, each release's pmf tilted by e^(lam i) before the transforms (lam >= 0; 0: none), so
 * that the proven rounding bound of a bin j is relative to exp(K - lam j): small in the upper
 * tail where a small delta's epsilon lies. */
int dpdo__pld_compose_tilted(const dpdo__pld_pmf *const *pm, const double *counts, int64_t k,
                             double h, double lam, dpdo__pld_work *wk, dpdo__pld_dist *out,
                             char *err);
/* The tilt for a query at delta = e^-ltail: the Chernoff bound's optimal l at that tail. */
double dpdo__pld_tilt_for(const dpdo__pld_pmf *const *pm, const double *counts, int64_t k,
                          double ltail);
void dpdo__pld_dist_free(dpdo__pld_dist *d);
void dpdo__pld_work_free(dpdo__pld_work *wk);
/* Upper bound (pessimistic) and lower bound of epsilon at delta; upper delta at eps. */
double dpdo__pld_eps_upper(const dpdo__pld_dist *d, double delta);
/* The epsilon shift of n fine lattice Gaussian releases (pld.c, docs/privacy.md "A PLD for the
 * lattice Gaussian"): d/S^2 <= u, 1/S^2 <= s2, d log(1 + theta_S) <= dtheta, tail e^-L per
 * release; h1 = the e^h1 factor on delta, h1 + h2 the added epsilon. */
void dpdo__pld_fine_shift(double n, double u, double s2, double dtheta, double L, double *h1,
                          double *h2);
/* The constants both accountants of fine lattice Gaussians use (pld.c, accountant.c's exact
 * route): d / S^2 <= 2^-24 (and 1 / S^2 <= d / S^2); d log(1 + theta_S) <= 2^62 e^(-2 pi^2 2^24)
 * <= 1e-300 for S >= 2^12, d < 2^62; the share of delta spent on the tails. */
#define DPDO__PLD_FINE_U 0x1p-24
#define DPDO__PLD_FINE_DTHETA 1e-300
#define DPDO__PLD_FINE_DELTA_SHARE 1e-3
double dpdo__pld_eps_lower(const dpdo__pld_dist *d, double delta);
double dpdo__pld_delta_upper(const dpdo__pld_dist *d, double eps);

/* The pld accountant's state (event pmfs, the last composition, FFT work). */
typedef struct dpdo__pld_acc dpdo__pld_acc;
/* max_bins: the largest release and composed window in bins (0: 2^22 and 2^23) */
int dpdo__pld_acc_new(dpdo__pld_acc **out, double h, int64_t max_bins);
void dpdo__pld_acc_free(dpdo__pld_acc *a);
/* Over the charged rows of an accountant event table: epsilon upper and lower
 * bounds at delta (delta >= 1e-13, else DPDO_E_UNSUPPORTED); delta upper bound. */
int dpdo__pld_acc_eps(dpdo__pld_acc *a, const double *rows, int64_t n, double delta, double *hi,
                      double *lo, char *err);
int dpdo__pld_acc_delta(dpdo__pld_acc *a, const double *rows, int64_t n, double eps, double *delta,
                        char *err);

#endif /* DPDO_PRIVACY_IMPL_H */
