/* SPDX-License-Identifier: BSD-3-Clause */
/* Accountant type objects (rdp, exact, zcdp, pure), the accountant handle
 * (queries per node and worst case), the budget guard, calibration, and the
 * public formula functions. */
#include "privacy_impl.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { K_RDP = 1, K_EXACT = 2, K_ZCDP = 3, K_PURE = 4, K_PLD = 5, K_AUTO = 6 };

/* Built-in state: the RDP orders, a log table for the integer-order sums, and
 * a cache of per-event RDP vectors indexed like the ledger's event list (the
 * last slot also serves hypothetical events of calibration/would_exceed). */
typedef struct builtin {
    int kind;
    int32_t conv;
    int64_t n_orders;
    double *orders;
    double *logtab;
    int64_t logtab_n, logtab_fill; /* allocated / filled entries */
    int64_t cache_cap;
    dpdo__event_desc *keys;  /* [cache_cap]; mech 0 = empty */
    double *vals;            /* [cache_cap * n_orders] */
    double *tot;             /* [n_orders] */
    unsigned char *deferred; /* [n_orders] 1 = fractional order computed only when needed */
    double *convc;           /* [n_orders] epsilon = r + convc[o] at delta = conv_delta */
    double *loga, *l1ma;     /* [n_orders] log(a) and log1p(-1/a) of the orders */
    double conv_delta, kl_thr;
    int64_t *lower; /* [n_orders] largest non-deferred order <= this one, or -1 */
    struct cand {
        double lb;
        int64_t o;
    } * cands;     /* [n_orders] scratch */
    double *memo;  /* [cache_cap * DPDO__PG_MEMO] per-event kernel memo (Poisson Gaussian) */
    int64_t *perm; /* [n_orders] order indices sorted by increasing order */
    int64_t kmax;  /* largest integer order used as a convexity point (<= DPDO__PG_NI - 1) */
    double *bnd;   /* [cache_cap * 3 * n_orders] per event: lower bound, upper bound (convexity),
                    * lower bound from a stopped series (0 = none) */
    int64_t *bsig; /* [cache_cap] integer points the bounds were built from (-1 = none) */
    double *lbv, *ubv;  /* [n_orders] scratch: bounds of the composed RDP */
    dpdo__pld_acc *pld; /* pld and auto */
    double pld_h;       /* pld discretisation interval */
    double limit;       /* auto: an RDP answer <= limit is returned without the other accountants */
    int rdp_only;       /* auto: answer with rdp alone (first pass of calibration) */
    double last_lo;     /* lower bound of the last epsilon answer (0: none known) */
    double fine_n;      /* exact: fine lattice Gaussian releases in the last closed total */
    /* auto's guard: an event table (with counts) whose pld epsilon safe_eps is
     * within the limit: any table with the same events and counts <= these is
     * within it too (epsilon is non-decreasing in the counts); look: the
     * look-ahead (extra releases of the last row) tried next */
    double *safe_rows, *look_rows;
    int64_t safe_n, safe_cap;
    double safe_eps, look;
    const char *last_src; /* accountant that produced the last answer */
    char msg[DPDO__ERRMSG_LEN];
} builtin;

/* Branch and bound over the orders. Each order of the Poisson-subsampled
 * Gaussian costs a series (fractional) or O(alpha) terms (integer). An epsilon
 * query computes a geometric skeleton of the orders first (each >= 1.5x the
 * previous) and then another order only if its lower bound -- the composed
 * RDP at the next lower skeleton order (RDP is non-decreasing in alpha) pushed
 * through the conversion (non-decreasing in RDP) -- could beat the best
 * epsilon so far. This is exact pruning: the result equals the full minimum;
 * skipped orders stay uncomputed (NaN) in the cache until a query needs them. */

struct dpdo_accountant {
    uint32_t magic; /* DPDO__MAGIC_* while alive, 0 after destroy (core_impl.h) */
    const dpdo_accountant_type *type;
    void *user;
    int is_builtin;
    dpdo_ledger *ledger;
    int has_budget;
    double budget_eps, budget_delta;
    double last_lo;       /* worst-node lower bound of the last epsilon query */
    const char *last_src; /* accountant behind the last answer */
    double *rows;         /* [(rows_cap) * DPDO_EV_FIELDS] */
    int64_t rows_cap;
    int64_t borrowers; /* algorithms borrowing this accountant (core_impl.h, borrowed handles) */
    int doomed;        /* destroy requested while borrowed */
    int calib_mech;    /* the Gaussian mechanism calibrate_sigma/_steps plan for
                          (dpdo__accountant_calib_mech) */
    dpdo__busy busy;   /* taken by the queries, which write the caches (DPDO__GUARDED) */
    char errmsg[DPDO__ERRMSG_LEN];
};

int dpdo__accountant_calib_mech(dpdo_accountant *a, int mech)
{
    if (!a) return DPDO_MECH_GAUSSIAN;
    int old = a->calib_mech ? a->calib_mech : DPDO_MECH_GAUSSIAN;
    a->calib_mech = mech;
    return old;
}

static void desc_to_row(const dpdo__event_desc *d, double *r)
{
    r[DPDO_EV_MECH] = d->mech;
    r[DPDO_EV_SAMPLING] = d->samp.kind;
    r[DPDO_EV_RATE] = d->samp.q;
    r[DPDO_EV_N] = (double)d->samp.n;
    r[DPDO_EV_M] = (double)d->samp.m;
    r[DPDO_EV_SENS] = d->sens;
    r[DPDO_EV_NOISE] = d->noise;
}

static int same_desc(const dpdo__event_desc *a, const dpdo__event_desc *b)
{
    return a->mech == b->mech && a->samp.kind == b->samp.kind && a->samp.q == b->samp.q &&
           a->samp.n == b->samp.n && a->samp.m == b->samp.m && a->sens == b->sens &&
           a->noise == b->noise;
}

/* RDP vector of event row k (cached). NULL on allocation failure. */
static const double *rdp_vec(builtin *b, int64_t k, const double *row)
{
    if (k >= b->cache_cap) {
        int64_t nc = b->cache_cap ? b->cache_cap : 8;
        while (nc <= k)
            nc *= 2;
        size_t cells, mcells, bcells;
        if (!dpdo__mul_size((size_t)nc, (size_t)b->n_orders, &cells)) return NULL;
        if (!dpdo__mul_size((size_t)nc, (size_t)DPDO__PG_MEMO, &mcells)) return NULL;
        if (!dpdo__mul_size(cells, 3, &bcells)) return NULL;
        dpdo__event_desc *keys = dpdo__calloc((size_t)nc, sizeof *keys);
        double *vals = dpdo__alloc_array(cells, sizeof *vals);
        double *memo = dpdo__alloc_array(mcells, sizeof *memo);
        double *bnd = dpdo__alloc_array(bcells, sizeof *bnd);
        int64_t *bsig = dpdo__alloc_array((size_t)nc, sizeof *bsig);
        if (!keys || !vals || !memo || !bnd || !bsig) {
            dpdo__free(keys);
            dpdo__free(vals);
            dpdo__free(memo);
            dpdo__free(bnd);
            dpdo__free(bsig);
            return NULL;
        }
        if (b->cache_cap) {
            memcpy(keys, b->keys, (size_t)b->cache_cap * sizeof *keys);
            memcpy(vals, b->vals, (size_t)(b->cache_cap * b->n_orders) * sizeof *vals);
            memcpy(memo, b->memo, (size_t)(b->cache_cap * DPDO__PG_MEMO) * sizeof *memo);
            memcpy(bnd, b->bnd, (size_t)(b->cache_cap * 3 * b->n_orders) * sizeof *bnd);
            memcpy(bsig, b->bsig, (size_t)b->cache_cap * sizeof *bsig);
        }
        dpdo__free(b->keys);
        dpdo__free(b->vals);
        dpdo__free(b->memo);
        dpdo__free(b->bnd);
        dpdo__free(b->bsig);
        b->keys = keys;
        b->vals = vals;
        b->memo = memo;
        b->bnd = bnd;
        b->bsig = bsig;
        b->cache_cap = nc;
    }
    dpdo__event_desc d;
    dpdo__event_row_desc(row, &d);
    double *v = b->vals + k * b->n_orders;
    if (!same_desc(&b->keys[k], &d)) {
        /* values are computed lazily (NaN = not yet), on first use */
        for (int64_t o = 0; o < b->n_orders; o++)
            v[o] = NAN;
        dpdo__pg_memo_reset(b->memo + k * DPDO__PG_MEMO);
        double *bd = b->bnd + k * 3 * b->n_orders;
        for (int64_t o = 0; o < 3 * b->n_orders; o++)
            bd[o] = 0.0;
        b->bsig[k] = -1;
        b->keys[k] = d;
    }
    return v;
}

static double ev_rdp(builtin *b, int64_t k, double alpha)
{
    if (alpha + 1.0 >= (double)b->logtab_fill && b->logtab_fill < b->logtab_n) {
        for (int64_t i = b->logtab_fill; i < b->logtab_n; i++)
            b->logtab[i] = log((double)i);
        b->logtab_fill = b->logtab_n;
    }
    return dpdo__rdp_event_m(&b->keys[k], alpha, b->logtab, b->logtab_fill,
                             b->memo + k * DPDO__PG_MEMO);
}

/* composed RDP at order o over the charged rows (vectors already cached) */
static double tot_at(builtin *b, const double *ev, int64_t n, int64_t o)
{
    double t = 0.0;
    for (int64_t k = 0; k < n; k++) {
        double c = ev[k * DPDO_EV_FIELDS + DPDO_EV_COUNT];
        if (!(c > 0)) continue;
        double *v = b->vals + k * b->n_orders;
        if (isnan(v[o])) v[o] = ev_rdp(b, k, b->orders[o]);
        if (v[o] != 0.0) t += c * v[o];
    }
    return t;
}

static int cand_cmp(const void *x, const void *y)
{
    const struct cand *a = x, *c = y;
    return a->lb < c->lb ? -1 : a->lb > c->lb ? 1 : (a->o < c->o ? -1 : a->o > c->o);
}

static int any_charged(const double *ev, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        if (ev[k * DPDO_EV_FIELDS + DPDO_EV_COUNT] > 0) return 1;
    return 0;
}

static int rdp_prepare(builtin *b, const double *ev, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        const double *r = ev + k * DPDO_EV_FIELDS;
        if (!(r[DPDO_EV_COUNT] > 0)) continue;
        if (!rdp_vec(b, k, r))
            return dpdo__err(b->msg, DPDO_E_NOMEM, "out of memory in the RDP cache");
    }
    return DPDO_OK;
}

static int rdp_total(builtin *b, const double *ev, int64_t n)
{
    int rc = rdp_prepare(b, ev, n);
    if (rc) return rc;
    for (int64_t o = 0; o < b->n_orders; o++)
        b->tot[o] = tot_at(b, ev, n, o);
    return DPDO_OK;
}

/* the conversion at one order, with the delta-only parts cached per delta
 * (same formulas as dpdo__rdp_eps_one) */
static void conv_prepare(builtin *b, double delta)
{
    if (b->conv_delta == delta) return;
    double ld = log(delta);
    for (int64_t o = 0; o < b->n_orders; o++) {
        double a = b->orders[o];
        if (a == INFINITY)
            b->convc[o] = 0.0;
        else if (b->conv == DPDO_CONVERSION_CLASSIC)
            b->convc[o] = -ld / (a - 1.0);
        else /* log1p(-1/a) - (log(delta) + log(a)) / (a - 1), logs of the orders precomputed */
            b->convc[o] = b->l1ma[o] - (ld + b->loga[o]) / (a - 1.0);
    }
    /* improved: r <= -log(1 - delta^2) gives epsilon 0 (TV bound via KL) */
    b->kl_thr = b->conv == DPDO_CONVERSION_CLASSIC ? -1.0 : -log1p(-delta * delta);
    b->conv_delta = delta;
}

static double eps_at(const builtin *b, int64_t o, double r)
{
    if (r == INFINITY || isnan(r)) return INFINITY;
    if (r <= b->kl_thr) return 0.0;
    double e = r + b->convc[o];
    return e > 0 ? e : 0.0;
}

/* ---- branch and bound with convexity brackets ---------------------------------
 *
 * Used when every charged event is a Gaussian with Poisson sampling or no
 * sampling (the default case). For these the composed curve
 *   F(a) = (a - 1) r(a) = sum_e count_e log A_e(a)
 * is convex in a (each log A_e(a) = log E_{mu0}[(mu/mu0)^a] is a log moment
 * generating function: Hoelder), F(1) = 0, and F >= 0. At integer orders the
 * kernels are exact (to rounding); at every order the value a kernel returns
 * is >= the true value (series with upward margins, capped by the chord; the
 * clamp at a/(2z^2) never goes below the true value, which never exceeds it).
 * So from exact points at integers k1 < k2 (and the point (1, 0)):
 *   - for a > k2 (or a < k1), F(a) >= the line through (k1, F(k1)), (k2, F(k2))
 *     extended to a (convexity: slopes increase); the tightest such lines use
 *     the two known points nearest below a and the two nearest above a;
 *   - r(a) >= r(k) for every integer k <= a (Renyi divergence is
 *     non-decreasing in the order);
 *   - for k1 <= a <= k2 the value the kernel returns is <= the chord of F
 *     between k1 and k2 (it is capped by the chord between floor(a) and
 *     floor(a) + 1, which lies inside [k1, k2] and below the outer chord).
 * Lower bounds are reduced (upper bounds raised) by 1e-9 times the magnitudes
 * of the F values involved, times the extrapolation factor: many orders of
 * magnitude above the rounding of the kernels. The conversion is
 * non-decreasing in r, so an order whose lower bound converts to an epsilon
 * above the smallest upper bound (or computed epsilon) cannot be the optimum
 * and is never computed. Exact integer points are computed lazily: a fixed
 * skeleton first, then the neighbours (floor(a) - 1 .. floor(a) + 2) of every
 * order that is still a candidate; then the surviving orders are computed in
 * increasing order of their lower bound until the bound exceeds the best
 * epsilon. The result (epsilon and optimal order, ties to the lower index)
 * equals the minimum over all orders. */

#define BRK_SLACK 1e-9

static int convex_case(const double *ev, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        const double *r = ev + k * DPDO_EV_FIELDS;
        if (!(r[DPDO_EV_COUNT] > 0)) continue;
        if (r[DPDO_EV_MECH] != DPDO_MECH_GAUSSIAN) return 0;
        if (r[DPDO_EV_SAMPLING] != DPDO_SAMPLING_POISSON &&
            r[DPDO_EV_SAMPLING] != DPDO_SAMPLING_NONE)
            return 0;
    }
    return 1;
}

/* closed-form events: every order is cheap and exact */
static int closed_form(const dpdo__event_desc *d)
{
    return d->samp.kind != DPDO_SAMPLING_POISSON || !(d->samp.q > 0) || d->samp.q >= 1.0 ||
           !(d->noise / d->sens < INFINITY);
}

/* number of integer orders in [2, kmax] known exactly for event k */
static int64_t n_known(const builtin *b, int64_t k)
{
    const double *la = b->memo + k * DPDO__PG_MEMO;
    int64_t c = 0;
    for (int64_t i = 2; i <= b->kmax; i++)
        c += !isnan(la[i]);
    return c;
}

/* per-event bounds of the RDP at every order (count-independent, cached until
 * more integer orders of the event are known): lbr <= value <= ubr */
static void ev_bounds(builtin *b, int64_t k)
{
    int64_t no = b->n_orders;
    double *lbr = b->bnd + k * 3 * no, *ubr = lbr + no;
    if (closed_form(&b->keys[k])) {
        if (b->bsig[k] == 0) return;
        for (int64_t o = 0; o < no; o++)
            lbr[o] = ubr[o] = ev_rdp(b, k, b->orders[o]);
        b->bsig[k] = 0;
        return;
    }
    int64_t sig = n_known(b, k) + 1;
    if (b->bsig[k] == sig) return;
    b->bsig[k] = sig;
    const double *la = b->memo + k * DPDO__PG_MEMO;
    double kx[DPDO__PG_NI + 1], kf[DPDO__PG_NI + 1];
    int64_t nk = 0;
    kx[nk] = 1.0;
    kf[nk++] = 0.0;
    for (int64_t i = 2; i <= b->kmax; i++) {
        if (isnan(la[i])) continue;
        kx[nk] = (double)i;
        kf[nk++] = (double)(i - 1) * ev_rdp(b, k, (double)i);
    }
    /* r(a) >= KL(mu || mu0) >= 2 TV^2 (monotonicity in the order, Pinsker),
     * and TV((1-q) N(0,z^2) + q N(1,z^2), N(0,z^2)) = q erf(1/(2 sqrt2 z)) exactly:
     * a floor that matters below the first integer order */
    const dpdo__event_desc *d = &b->keys[k];
    double tv = d->samp.q * erf(1.0 / (2.0 * 1.41421356237309504880 * (d->noise / d->sens)));
    double kl_lb = 2.0 * tv * tv * (1.0 - BRK_SLACK);
    int64_t p = 0;
    for (int64_t i = 0; i < no; i++) {
        int64_t o = b->perm[i];
        double a = b->orders[o];
        if (a == INFINITY) {
            lbr[o] = ubr[o] = INFINITY;
            continue;
        }
        while (p + 1 < nk && kx[p + 1] <= a)
            p++;
        double lbf = 0.0, ubf = INFINITY;
        if (kx[p] == a) {
            lbf = ubf = kf[p];
        } else {
            if (p >= 1) { /* line through the two known points below, extended */
                double t = (a - kx[p]) / (kx[p] - kx[p - 1]);
                double v = kf[p] + t * (kf[p] - kf[p - 1]);
                v -= BRK_SLACK * (fabs(kf[p]) + fabs(kf[p - 1])) * (1.0 + t);
                if (v > lbf) lbf = v;
                double m = (a - 1.0) * (kf[p] / (kx[p] - 1.0)) * (1.0 - BRK_SLACK); /* monotone */
                if (m > lbf) lbf = m;
            }
            if (p + 2 < nk) { /* line through the two known points above, extended */
                double t = (kx[p + 1] - a) / (kx[p + 2] - kx[p + 1]);
                double v = kf[p + 1] - t * (kf[p + 2] - kf[p + 1]);
                v -= BRK_SLACK * (fabs(kf[p + 1]) + fabs(kf[p + 2])) * (1.0 + t);
                if (v > lbf) lbf = v;
            }
            if (p + 1 < nk) { /* chord */
                double t = (a - kx[p]) / (kx[p + 1] - kx[p]);
                ubf = kf[p] + t * (kf[p + 1] - kf[p]) + BRK_SLACK * (fabs(kf[p]) + fabs(kf[p + 1]));
            }
        }
        lbr[o] = lbf > 0 ? lbf / (a - 1.0) : 0.0;
        if (lbr[o] < kl_lb) lbr[o] = kl_lb;
        ubr[o] = ubf / (a - 1.0);
    }
}

/* composed epsilon bounds at every order; returns the smallest upper bound */
static double eps_bounds(builtin *b, const double *ev, int64_t n)
{
    int64_t no = b->n_orders;
    for (int64_t o = 0; o < no; o++)
        b->lbv[o] = b->ubv[o] = 0.0;
    for (int64_t k = 0; k < n; k++) {
        double c = ev[k * DPDO_EV_FIELDS + DPDO_EV_COUNT];
        if (!(c > 0)) continue;
        const double *lbr = b->bnd + k * 3 * no, *ubr = lbr + no, *slb = ubr + no;
        for (int64_t o = 0; o < no; o++) {
            double l = lbr[o] > slb[o] ? lbr[o] : slb[o];
            if (l != 0.0) b->lbv[o] += c * l;
            if (ubr[o] != 0.0) b->ubv[o] += c * ubr[o];
        }
    }
    double best_ub = INFINITY;
    for (int64_t o = 0; o < no; o++) {
        b->lbv[o] = eps_at(b, o, b->lbv[o]);
        b->ubv[o] = eps_at(b, o, b->ubv[o]);
        if (b->ubv[o] < best_ub) best_ub = b->ubv[o];
    }
    return best_ub;
}

static int is_cand(double lb, double best)
{
    return best == INFINITY || lb <= best * (1.0 + 1e-12);
}

/* the value at order o; for a ledger with ONE charged event (Poisson
 * Gaussian, fractional order) the kernel may stop early once a rigorous lower
 * bound of the RDP shows that epsilon(o) > lim (1 + 1e-12): then NaN, and the
 * lower bound is kept for later queries */
static double tot_at_lim(builtin *b, const double *ev, int64_t n, int64_t o, double lim)
{
    int64_t k1 = -1;
    for (int64_t k = 0; k < n; k++) {
        if (!(ev[k * DPDO_EV_FIELDS + DPDO_EV_COUNT] > 0)) continue;
        if (k1 >= 0) return tot_at(b, ev, n, o);
        k1 = k;
    }
    double a = b->orders[o];
    const dpdo__event_desc *d = &b->keys[k1];
    double *v = b->vals + k1 * b->n_orders;
    if (!isnan(v[o]) || lim == INFINITY || a == floor(a) || a == INFINITY || closed_form(d) ||
        a + 1.0 >= (double)b->logtab_fill)
        return tot_at(b, ev, n, o);
    double c = ev[k1 * DPDO_EV_FIELDS + DPDO_EV_COUNT];
    /* epsilon(o) = c r + convc[o] when c r > kl_thr, so c r > lim(1+1e-12) - convc[o]
     * (and c r > kl_thr) implies epsilon(o) > lim (1 + 1e-12) */
    double rs = (lim * (1.0 + 1e-12) - b->convc[o]) / c;
    double rk = b->kl_thr / c;
    if (rk > rs) rs = rk;
    rs = rs > 0 ? rs * (1.0 + 1e-9) : 0.0;
    int pruned = 0;
    double r =
        dpdo__rdp_poisson_gauss_lb(d->samp.q, d->noise / d->sens, a, b->logtab, b->logtab_fill,
                                   b->memo + k1 * DPDO__PG_MEMO, rs, &pruned);
    if (pruned) {
        double *slb = b->bnd + k1 * 3 * b->n_orders + 2 * b->n_orders;
        double l = r * (1.0 - BRK_SLACK);
        if (l > slb[o]) slb[o] = l;
        return NAN;
    }
    v[o] = r;
    return tot_at(b, ev, n, o);
}

static void rdp_epsilon_convex(builtin *b, const double *ev, int64_t n, double *eps, double *order)
{
    static const int skel[] = {2, 3, 4, 6, 9, 13, 19, 28};
    int64_t km = b->kmax;
    /* a new event (no bounds yet): the skeleton integers, then the integers
     * around the best of them (a guess of where the optimum is; it only saves
     * a second round of bounds below, the result never depends on it) */
    int fresh = 0;
    for (int64_t k = 0; k < n; k++)
        if (ev[k * DPDO_EV_FIELDS + DPDO_EV_COUNT] > 0 && !closed_form(&b->keys[k]) &&
            b->bsig[k] < 0)
            fresh = 1;
    if (fresh) {
        double kbest = INFINITY;
        int64_t kstar = 2;
        for (size_t i = 0; i < sizeof skel / sizeof *skel && skel[i] <= km; i++) {
            double t = 0.0;
            for (int64_t k = 0; k < n; k++) {
                double c = ev[k * DPDO_EV_FIELDS + DPDO_EV_COUNT];
                if (!(c > 0)) continue;
                double v = ev_rdp(b, k, skel[i]);
                if (v != 0.0) t += c * v;
            }
            double e = dpdo__rdp_eps_one((double)skel[i], t, b->conv_delta, b->conv);
            if (e < kbest) {
                kbest = e;
                kstar = skel[i];
            }
        }
        for (int64_t k = 0; k < n; k++) {
            if (!(ev[k * DPDO_EV_FIELDS + DPDO_EV_COUNT] > 0) || closed_form(&b->keys[k])) continue;
            for (int64_t i = kstar - 3; i <= kstar + 3; i++)
                if (i >= 2 && i <= km) (void)ev_rdp(b, k, (double)i);
        }
    }
    for (int64_t k = 0; k < n; k++)
        if (ev[k * DPDO_EV_FIELDS + DPDO_EV_COUNT] > 0) ev_bounds(b, k);
    double best_ub = eps_bounds(b, ev, n);
    /* exact integer neighbours floor(a)-1 .. floor(a)+2 of every candidate */
    int more = 0;
    for (int64_t o = 0; o < b->n_orders; o++) {
        double a = b->orders[o];
        if (!(a < (double)km) || !is_cand(b->lbv[o], best_ub)) continue;
        int64_t lo = (int64_t)floor(a);
        for (int64_t k = 0; k < n; k++) {
            if (!(ev[k * DPDO_EV_FIELDS + DPDO_EV_COUNT] > 0) || closed_form(&b->keys[k])) continue;
            const double *la = b->memo + k * DPDO__PG_MEMO;
            for (int64_t i = lo - 1; i <= lo + 2; i++)
                if (i >= 2 && i <= km && isnan(la[i])) {
                    (void)ev_rdp(b, k, (double)i);
                    more = 1;
                }
        }
    }
    if (more) {
        for (int64_t k = 0; k < n; k++)
            if (ev[k * DPDO_EV_FIELDS + DPDO_EV_COUNT] > 0) ev_bounds(b, k);
        best_ub = eps_bounds(b, ev, n);
    }
    int64_t nc = 0;
    for (int64_t o = 0; o < b->n_orders; o++) {
        if (!is_cand(b->lbv[o], best_ub)) continue;
        b->cands[nc].lb = b->lbv[o];
        b->cands[nc].o = o;
        nc++;
    }
    /* Visit the candidates in order of an ESTIMATE of their epsilon (a
     * heuristic only: it decides the order of work, never the result), so the
     * optimum usually comes first and the other candidates stop their series
     * early or are skipped by their bound. The estimate: for one charged
     * Poisson event, the cubic through log A at floor(a) - 1 .. floor(a) + 2;
     * otherwise the middle of the bracket. */
    int64_t k1 = -1, ncharged = 0;
    for (int64_t k = 0; k < n; k++)
        if (ev[k * DPDO_EV_FIELDS + DPDO_EV_COUNT] > 0) {
            k1 = k;
            ncharged++;
        }
    for (int64_t i = 0; i < nc; i++) {
        int64_t o = b->cands[i].o;
        double a = b->orders[o], est = 0.5 * (b->lbv[o] + b->ubv[o]);
        if (ncharged == 1 && !closed_form(&b->keys[k1]) && a < (double)km && a != floor(a)) {
            const double *la = b->memo + k1 * DPDO__PG_MEMO;
            int64_t lo = (int64_t)floor(a), x0 = lo - 1 < 1 ? 1 : lo - 1;
            double xs[4], ys[4];
            int np = 0;
            for (int64_t x = x0; x <= x0 + 3 && x <= km; x++) {
                double y = x == 1 ? 0.0 : la[x];
                if (isnan(y)) break;
                xs[np] = (double)x;
                ys[np++] = y;
            }
            if (np == 4) {
                double f = 0.0;
                for (int u = 0; u < 4; u++) {
                    double w = ys[u];
                    for (int v = 0; v < 4; v++)
                        if (v != u) w *= (a - xs[v]) / (xs[u] - xs[v]);
                    f += w;
                }
                double c = ev[k1 * DPDO_EV_FIELDS + DPDO_EV_COUNT];
                if (isfinite(f)) est = eps_at(b, o, c * (f / (a - 1.0)));
            }
        }
        b->cands[i].lb = est; /* sort key from here on; the bound stays in lbv */
    }
    double best = INFINITY;
    int64_t bo = -1;
    for (int64_t i = 0; i < nc; i++) {
        int64_t mi = i;
        for (int64_t j = i + 1; j < nc; j++)
            if (cand_cmp(&b->cands[j], &b->cands[mi]) < 0) mi = j;
        struct cand tmp = b->cands[i];
        b->cands[i] = b->cands[mi];
        b->cands[mi] = tmp;
        int64_t o = b->cands[i].o;
        double lim = best < best_ub ? best : best_ub;
        if (!is_cand(b->lbv[o], lim)) continue; /* cannot win */
        b->tot[o] = tot_at_lim(b, ev, n, o, lim);
        if (isnan(b->tot[o])) continue; /* proven above lim: cannot be the optimum */
        double e = eps_at(b, o, b->tot[o]);
        if (e < best || (e == best && bo >= 0 && o < bo)) {
            best = e;
            bo = o;
        }
    }
    *eps = best;
    *order = bo >= 0 ? b->orders[bo] : NAN;
}

/* min over orders of the converted epsilon, with exact pruning (see above) */
static int rdp_epsilon(builtin *b, const double *ev, int64_t n, double delta, double *eps,
                       double *order)
{
    int rc = rdp_prepare(b, ev, n);
    if (rc) return rc;
    conv_prepare(b, delta);
    if (convex_case(ev, n)) {
        rdp_epsilon_convex(b, ev, n, eps, order);
        return DPDO_OK;
    }
    double best = INFINITY;
    int64_t bo = -1;
    for (int64_t o = 0; o < b->n_orders; o++) {
        if (b->deferred[o]) continue;
        b->tot[o] = tot_at(b, ev, n, o);
        double e = eps_at(b, o, b->tot[o]);
        if (e < best || (e == best && bo >= 0 && o < bo)) {
            best = e;
            bo = o;
        }
    }
    int64_t nc = 0;
    for (int64_t o = 0; o < b->n_orders; o++) {
        if (!b->deferred[o]) continue;
        double lb = eps_at(b, o, b->lower[o] >= 0 ? b->tot[b->lower[o]] : 0.0);
        if (!(lb <= best * (1.0 + 1e-12)) && best != INFINITY) continue; /* cannot win */
        b->cands[nc].lb = lb;
        b->cands[nc].o = o;
        nc++;
    }
    qsort(b->cands, (size_t)nc, sizeof *b->cands, cand_cmp);
    for (int64_t i = 0; i < nc; i++) {
        if (b->cands[i].lb > best * (1.0 + 1e-12)) break; /* sorted: nothing later can win */
        int64_t o = b->cands[i].o;
        b->tot[o] = tot_at(b, ev, n, o);
        double e = eps_at(b, o, b->tot[o]);
        if (e < best || (e == best && (bo < 0 || o < bo))) {
            best = e;
            bo = o;
        }
    }
    *eps = best;
    *order = bo >= 0 ? b->orders[bo] : NAN;
    return DPDO_OK;
}

static const char *mech_name(double m)
{
    return m == DPDO_MECH_GAUSSIAN  ? "Gaussian"
           : m == DPDO_MECH_LAPLACE ? "Laplace"
           : m == DPDO_MECH_DISCRETE_GAUSSIAN || m == DPDO_MECH_DISCRETE_GAUSSIAN_FINE
               ? "discrete Gaussian"
               : "discrete Laplace";
}
static const char *samp_name(double s)
{
    return s == DPDO_SAMPLING_POISSON ? "Poisson-sampled"
           : s == DPDO_SAMPLING_WOR   ? "WOR-sampled"
                                      : "unsampled";
}

/* exact: mu^2; zcdp: rho; pure: eps. Reject what the accountant cannot do. */
static int closed_total(builtin *b, int kind, const double *ev, int64_t n, double *out)
{
    double s = 0.0;
    b->fine_n = 0.0;
    for (int64_t k = 0; k < n; k++) {
        const double *r = ev + k * DPDO_EV_FIELDS;
        double c = r[DPDO_EV_COUNT];
        if (!(c > 0)) continue;
        int gauss = r[DPDO_EV_MECH] == DPDO_MECH_GAUSSIAN ||
                    r[DPDO_EV_MECH] == DPDO_MECH_DISCRETE_GAUSSIAN ||
                    r[DPDO_EV_MECH] == DPDO_MECH_DISCRETE_GAUSSIAN_FINE;
        int sampled = r[DPDO_EV_SAMPLING] != DPDO_SAMPLING_NONE && r[DPDO_EV_RATE] < 1.0;
        double x = r[DPDO_EV_SENS] / r[DPDO_EV_NOISE];
        if (kind == K_PURE) {
            if (gauss)
                return dpdo__err(b->msg, DPDO_E_UNSUPPORTED,
                                 "pure-DP accountant: event %lld is Gaussian (no finite pure "
                                 "epsilon); use rdp, exact or zcdp",
                                 (long long)k);
            dpdo__event_desc d;
            dpdo__event_row_desc(r, &d);
            s += c * dpdo__pure_eps_event(&d);
            continue;
        }
        if (sampled)
            return dpdo__err(b->msg, DPDO_E_UNSUPPORTED,
                             "%s accountant: event %lld is a %s %s mechanism; only unsampled "
                             "events are supported (use rdp)",
                             kind == K_EXACT ? "exact" : "zcdp", (long long)k,
                             samp_name(r[DPDO_EV_SAMPLING]), mech_name(r[DPDO_EV_MECH]));
        if (kind == K_EXACT) {
            if (r[DPDO_EV_MECH] != DPDO_MECH_GAUSSIAN &&
                r[DPDO_EV_MECH] != DPDO_MECH_DISCRETE_GAUSSIAN_FINE)
                return dpdo__err(b->msg, DPDO_E_UNSUPPORTED,
                                 "exact accountant: event %lld is a %s mechanism; only "
                                 "(continuous) Gaussian events and the fine-grid discrete "
                                 "Gaussian of secure runs are supported (use rdp or zcdp)",
                                 (long long)k, mech_name(r[DPDO_EV_MECH]));
            if (r[DPDO_EV_MECH] == DPDO_MECH_DISCRETE_GAUSSIAN_FINE) b->fine_n += c;
            s += c * x * x; /* mu^2 of the composition */
        } else {
            s += gauss ? c * x * x / 2.0
                       : c * x * x / 2.0; /* Gaussian: D^2/(2s^2); Laplace eps-DP: eps^2/2 */
        }
    }
    *out = s;
    return DPDO_OK;
}

/* The exact route of the fine lattice Gaussian (secure runs): N releases of
 * DPDO_MECH_DISCRETE_GAUSSIAN_FINE (noise >= 2^12 sqrt(d) grid steps) composed with continuous
 * Gaussians of total mu. The fine lattice Gaussian's privacy curve is the continuous one shifted
 * (docs/privacy.md, "A PLD for the lattice Gaussian"): delta(eps) <= e^h1 delta_c(eps - h1 - h2)
 * + e^eps N e^-L, with h1, h2 from dpdo__pld_fine_shift at tail parameter L, and the pld
 * accountant's constants (privacy_impl.h). Without fine releases: the exact Gaussian. */
#define EXACT_FINE_U DPDO__PLD_FINE_U
#define EXACT_FINE_DTHETA DPDO__PLD_FINE_DTHETA
#define EXACT_FINE_SHARE DPDO__PLD_FINE_DELTA_SHARE
static double exact_eps(double mu, double N, double delta)
{
    if (!(N > 0)) return dpdo__gauss_eps(mu, delta);
    double h1 = 0.0, h2 = 0.0;
    dpdo__pld_fine_shift(N, EXACT_FINE_U, EXACT_FINE_U, EXACT_FINE_DTHETA, 1.0, &h1, &h2);
    double dc = (1.0 - EXACT_FINE_SHARE) * delta * exp(-h1);
    double e = dpdo__gauss_eps(mu, dc);
    /* L with e^(eps) N e^-L <= share delta at the final eps = e + h1 + h2 (h2 grows with L) */
    double base = log(N / (EXACT_FINE_SHARE * delta)) + e + h1, L = base;
    for (int it = 0; it < 50; it++) {
        dpdo__pld_fine_shift(N, EXACT_FINE_U, EXACT_FINE_U, EXACT_FINE_DTHETA, L, &h1, &h2);
        if (L >= base + h2) break;
        L = base + h2 + 1e-9;
    }
    return e + h1 + h2;
}
static double exact_delta(double mu, double N, double eps)
{
    if (!(N > 0)) return dpdo__gauss_delta(mu, eps);
    double h1 = 0.0, h2 = 0.0, L = log(N) + (eps > 0 ? eps : 0.0) + 60.0;
    dpdo__pld_fine_shift(N, EXACT_FINE_U, EXACT_FINE_U, EXACT_FINE_DTHETA, L, &h1, &h2);
    double d = exp(h1) * dpdo__gauss_delta(mu, eps - h1 - h2) + exp(eps + log(N) - L);
    return d < 1.0 ? d : 1.0;
}

/* auto: does the exact accountant apply (every charged event an unsampled continuous Gaussian)?
 * Fine lattice Gaussians go to pld as before 0.3: the engine's budget guard and its calibration
 * must meet the same accountant's figure (pld's is within 1e-3 of exact's). */
static int exact_applies(const double *ev, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        const double *r = ev + k * DPDO_EV_FIELDS;
        if (!(r[DPDO_EV_COUNT] > 0)) continue;
        if (r[DPDO_EV_MECH] != DPDO_MECH_GAUSSIAN) return 0;
        if (r[DPDO_EV_SAMPLING] != DPDO_SAMPLING_NONE && r[DPDO_EV_RATE] < 1.0) return 0;
    }
    return 1;
}

/* auto's guard (b->limit set, the hypothetical release in the last row): if
 * the table is covered by the safe table, the safe epsilon (<= limit) is
 * returned; else the componentwise maximum of the table and the safe table
 * (same events; else the table) plus `look` more of the growing row is tried once: if
 * its pld epsilon is within the limit it becomes the safe table and that
 * epsilon (an upper bound of this table's, as epsilon is non-decreasing in
 * the counts) is returned; if not, the look-ahead is quartered and 1 is
 * returned (compute this table as usual). rdp's *eps is kept when smaller. */
static int same_row_desc(const double *a, const double *b)
{
    for (int f = 0; f < DPDO_EV_COUNT; f++)
        if (a[f] != b[f]) return 0;
    return 1;
}

static int guard_lookahead(builtin *b, const double *ev_in, int64_t n, double delta, double *eps)
{
    size_t cells = (size_t)n * DPDO_EV_FIELDS;
    if (n > b->safe_cap) {
        dpdo__free(b->safe_rows);
        dpdo__free(b->look_rows);
        b->safe_cap = 0;
        b->safe_n = 0;
        b->safe_rows = dpdo__alloc_array(cells, sizeof *b->safe_rows);
        b->look_rows = dpdo__alloc_array(cells, sizeof *b->look_rows);
        if (!b->safe_rows || !b->look_rows)
            return dpdo__err(b->msg, DPDO_E_NOMEM, "out of memory in the guard");
        b->safe_cap = n;
    }
    /* canonical table: the hypothetical release (last row) merged into the
     * ledger's row of the same event, if any; x = the row that grows */
    double *ev = b->look_rows;
    memcpy(ev, ev_in, cells * sizeof *ev);
    int64_t x = n - 1;
    for (int64_t k = 0; k < n - 1; k++)
        if (same_row_desc(ev + k * DPDO_EV_FIELDS, ev + (n - 1) * DPDO_EV_FIELDS)) {
            ev[k * DPDO_EV_FIELDS + DPDO_EV_COUNT] += ev[(n - 1) * DPDO_EV_FIELDS + DPDO_EV_COUNT];
            ev[(n - 1) * DPDO_EV_FIELDS + DPDO_EV_COUNT] = 0.0;
            x = k;
            break;
        }
    if (b->safe_n == n) {
        int cov = 1;
        for (int64_t k = 0; k < n && cov; k++) {
            const double *r = ev + k * DPDO_EV_FIELDS, *sr = b->safe_rows + k * DPDO_EV_FIELDS;
            for (int f = 0; f < DPDO_EV_COUNT; f++)
                if (r[f] != sr[f]) cov = 0;
            if (r[DPDO_EV_COUNT] > sr[DPDO_EV_COUNT]) cov = 0;
        }
        if (cov) {
            if (b->safe_eps < *eps) {
                *eps = b->safe_eps;
                b->last_src = "pld";
            }
            return 0;
        }
    }
    if (!(ev[x * DPDO_EV_FIELDS + DPDO_EV_COUNT] > 0)) return 1;
    /* per-node tables of one guard query differ: try a table that covers
     * both this one and the safe one (componentwise maximum of the counts) */
    if (b->safe_n == n) {
        int same = 1;
        for (int64_t k = 0; k < n && same; k++)
            same = same_row_desc(ev + k * DPDO_EV_FIELDS, b->safe_rows + k * DPDO_EV_FIELDS);
        if (same)
            for (int64_t k = 0; k < n; k++) {
                double c = b->safe_rows[k * DPDO_EV_FIELDS + DPDO_EV_COUNT];
                if (c > ev[k * DPDO_EV_FIELDS + DPDO_EV_COUNT])
                    ev[k * DPDO_EV_FIELDS + DPDO_EV_COUNT] = c;
            }
    }
    double total = 0.0;
    for (int64_t k = 0; k < n; k++)
        total += ev[k * DPDO_EV_FIELDS + DPDO_EV_COUNT];
    if (!(b->look >= 1.0)) b->look = floor(total / 16.0) + 1.0;
    ev[x * DPDO_EV_FIELDS + DPDO_EV_COUNT] += b->look;
    double hi, lo;
    char m2[DPDO__ERRMSG_LEN] = "pld accountant: out of memory";
    int rc = dpdo__pld_acc_eps(b->pld, b->look_rows, n, delta, &hi, &lo, m2);
    if (rc == DPDO_E_NOMEM) return dpdo__err(b->msg, rc, "%s", m2);
    if (rc == DPDO_OK && hi <= b->limit) {
        memcpy(b->safe_rows, b->look_rows, cells * sizeof *ev);
        b->safe_n = n;
        b->safe_eps = hi;
        if (hi < *eps) {
            *eps = hi;
            b->last_src = "pld";
        }
        b->look *= 2.0;
        return 0;
    }
    b->look = floor(b->look / 4.0);
    if (b->look < 1.0) b->look = 1.0;
    return 1;
}

/* auto: the smallest epsilon among rdp, exact (when it applies) and pld (when
 * it supports every event and delta). Each is a valid upper bound, so their
 * minimum is. An accountant that cannot answer is skipped (out of memory is
 * an error). */
static int auto_epsilon(builtin *b, const double *ev, int64_t n, double delta, double *eps,
                        double *order)
{
    int rc = rdp_epsilon(b, ev, n, delta, eps, order);
    if (rc) return rc;
    b->last_src = "rdp";
    b->last_lo = 0.0;
    if (*eps <= b->limit || b->rdp_only) return DPDO_OK; /* the guard only needs to know it fits */
    if (exact_applies(ev, n)) {
        double s;
        if (closed_total(b, K_EXACT, ev, n, &s) == DPDO_OK) {
            double e = exact_eps(sqrt(s), b->fine_n, delta);
            if (e < *eps) {
                *eps = e;
                *order = NAN;
                b->last_src = "exact";
            }
            b->last_lo = b->fine_n > 0 ? 0.0 : e; /* exact: the tight value */
            return DPDO_OK;                       /* pld cannot beat the exact curve */
        }
    }
    double hi, lo;
    char m2[DPDO__ERRMSG_LEN] = "pld accountant: out of memory";
    if (b->limit > -INFINITY) { /* the guard: a look-ahead spares a composition per round */
        rc = guard_lookahead(b, ev, n, delta, eps);
        if (rc != 1) return rc; /* answered (0) or failed */
    }
    rc = dpdo__pld_acc_eps(b->pld, ev, n, delta, &hi, &lo, m2);
    if (rc == DPDO_E_NOMEM) return dpdo__err(b->msg, rc, "%s", m2);
    if (rc == DPDO_OK) {
        if (hi < *eps) {
            *eps = hi;
            *order = NAN;
            b->last_src = "pld";
        }
        b->last_lo = lo < *eps ? lo : *eps;
    }
    return DPDO_OK;
}

static int b_epsilon(void *user, const double *ev, int64_t n, double delta, double *eps,
                     double *order)
{
    builtin *b = user;
    *order = NAN;
    b->last_lo = 0.0;
    b->last_src = b->kind == K_RDP     ? "rdp"
                  : b->kind == K_EXACT ? "exact"
                  : b->kind == K_ZCDP  ? "zcdp"
                  : b->kind == K_PURE  ? "pure"
                  : b->kind == K_PLD   ? "pld"
                                       : "auto";
    if (!any_charged(ev, n)) {
        *eps = 0.0;
        return DPDO_OK;
    }
    if (b->kind == K_RDP) {
        return rdp_epsilon(b, ev, n, delta, eps, order);
    }
    if (b->kind == K_PLD) {
        double lo;
        int rc = dpdo__pld_acc_eps(b->pld, ev, n, delta, eps, &lo, b->msg);
        if (rc == DPDO_OK) b->last_lo = lo;
        return rc;
    }
    if (b->kind == K_AUTO) return auto_epsilon(b, ev, n, delta, eps, order);
    double s;
    int rc = closed_total(b, b->kind, ev, n, &s);
    if (rc) return rc;
    if (b->kind == K_EXACT) {
        *eps = exact_eps(sqrt(s), b->fine_n, delta);
        b->last_lo = b->fine_n > 0 ? 0.0 : *eps;
    } else if (b->kind == K_ZCDP) {
        *eps = dpdo__zcdp_eps(s, delta, b->conv);
    } else {
        *eps = s;
    }
    return DPDO_OK;
}

static int b_delta(void *user, const double *ev, int64_t n, double eps, double *delta)
{
    builtin *b = user;
    if (!any_charged(ev, n)) {
        *delta = 0.0;
        return DPDO_OK;
    }
    if (b->kind == K_RDP || b->kind == K_AUTO) {
        int rc = rdp_total(b, ev, n);
        if (rc) return rc;
        *delta = dpdo__rdp_delta(b->orders, b->tot, b->n_orders, eps, b->conv, NULL);
        b->last_src = "rdp";
        if (b->kind == K_RDP) return DPDO_OK;
        double s, d;
        if (exact_applies(ev, n) && closed_total(b, K_EXACT, ev, n, &s) == DPDO_OK) {
            d = exact_delta(sqrt(s), b->fine_n, eps);
            if (d < *delta) {
                *delta = d;
                b->last_src = "exact";
            }
            return DPDO_OK;
        }
        char m2[DPDO__ERRMSG_LEN] = "pld accountant: out of memory";
        rc = dpdo__pld_acc_delta(b->pld, ev, n, eps, &d, m2);
        if (rc == DPDO_E_NOMEM) return dpdo__err(b->msg, rc, "%s", m2);
        if (rc == DPDO_OK && d < *delta) {
            *delta = d;
            b->last_src = "pld";
        }
        return DPDO_OK;
    }
    if (b->kind == K_PLD) return dpdo__pld_acc_delta(b->pld, ev, n, eps, delta, b->msg);
    double s;
    int rc = closed_total(b, b->kind, ev, n, &s);
    if (rc) return rc;
    if (b->kind == K_EXACT)
        *delta = exact_delta(sqrt(s), b->fine_n, eps);
    else if (b->kind == K_ZCDP)
        *delta = dpdo__zcdp_delta(s, eps, b->conv);
    else
        *delta = eps >= s ? 0.0 : 1.0;
    return DPDO_OK;
}

static void b_release(void *user)
{
    builtin *b = user;
    if (!b) return;
    dpdo__free(b->orders);
    dpdo__free(b->logtab);
    dpdo__free(b->keys);
    dpdo__free(b->vals);
    dpdo__free(b->tot);
    dpdo__free(b->deferred);
    dpdo__free(b->convc);
    dpdo__free(b->lower);
    dpdo__free(b->cands);
    dpdo__free(b->memo);
    dpdo__free(b->perm);
    dpdo__free(b->lbv);
    dpdo__free(b->ubv);
    dpdo__free(b->bnd);
    dpdo__free(b->bsig);
    dpdo__free(b->loga);
    dpdo__free(b->l1ma);
    dpdo__pld_acc_free(b->pld);
    dpdo__free(b->safe_rows);
    dpdo__free(b->look_rows);
    dpdo__free(b);
}

static const dpdo_accountant_type TYPES[] = {
    {sizeof(dpdo_accountant_type), "rdp", b_epsilon, b_delta, b_release},
    {sizeof(dpdo_accountant_type), "exact", b_epsilon, b_delta, b_release},
    {sizeof(dpdo_accountant_type), "zcdp", b_epsilon, b_delta, b_release},
    {sizeof(dpdo_accountant_type), "pure", b_epsilon, b_delta, b_release},
    {sizeof(dpdo_accountant_type), "pld", b_epsilon, b_delta, b_release},
    {sizeof(dpdo_accountant_type), "auto", b_epsilon, b_delta, b_release},
};
#define N_TYPES ((int)(sizeof TYPES / sizeof TYPES[0]))

static int builtin_kind(const dpdo_accountant_type *t)
{
    for (int i = 0; i < N_TYPES; i++)
        if (t == &TYPES[i]) return i + 1;
    return 0;
}

const dpdo_accountant_type *dpdo_accountant_type_find(const char *name)
{
    if (!name) return NULL;
    for (int i = 0; i < N_TYPES; i++)
        if (strcmp(TYPES[i].name, name) == 0) return &TYPES[i];
    return NULL;
}

const dpdo_accountant_type *dpdo_accountant_type_next(const dpdo_accountant_type *prev)
{
    if (!prev) return &TYPES[0];
    int k = builtin_kind(prev);
    return (k > 0 && k < N_TYPES) ? &TYPES[k] : NULL;
}

const char *dpdo_accountant_type_name(const dpdo_accountant_type *t)
{
    return t && t->name ? t->name : "";
}

/* ---- options ------------------------------------------------------------------- */

#define N_DEFAULT_ORDERS 156

/* log(a) and log1p(-1/a) of the default orders (the values glibc's log and
 * log1p return, as exact hex floats: creating an accountant on the default
 * grid costs no logarithms) */
static const double DEFAULT_LOG_A[N_DEFAULT_ORDERS] = {
    0x1.8663f793c46ccp-4, 0x1.7565011e49675p-3, 0x1.0ca937be1b9dcp-2, 0x1.588c2d913348fp-2,
    0x1.9f323ecbf984cp-2, 0x1.e148a1a2726cfp-2, 0x1.0fae81914a991p-1, 0x1.2cf25fad8f1c4p-1,
    0x1.48a11293d785bp-1, 0x1.62e42fefa39efp-1, 0x1.7bdf362e9666ep-1, 0x1.93b0aee21c2c9p-1,
    0x1.aa73108717b69p-1, 0x1.c03d703735f8cp-1, 0x1.d5240f0e0e078p-1, 0x1.e938cbceb16ddp-1,
    0x1.fc8b7f138bdeap-1, 0x1.0795235c1ea1bp+0, 0x1.1090e20315212p+0, 0x1.193ea7aad030bp+0,
    0x1.21a3919b7ac89p+0, 0x1.29c440606e6abp+0, 0x1.31a4e7240c777p+0, 0x1.394958c0771cp+0,
    0x1.40b512eb53d6p+0,  0x1.47eb47ce995d9p+0, 0x1.4eeee650ae55p+0,  0x1.55c2a141bd925p+0,
    0x1.5c68f59a57181p+0, 0x1.62e42fefa39efp+0, 0x1.6936713b2ae7p+0,  0x1.6f61b30f1d02fp+0,
    0x1.7567cb4bf2df7p+0, 0x1.7b4a6f68dfe5cp+0, 0x1.810b375dce91ep+0, 0x1.86aba03b5daacp+0,
    0x1.8c2d0e7b73742p+0, 0x1.9190d0136ccbep+0, 0x1.96d81e4fa0a84p+0, 0x1.9c041f7ed8d33p+0,
    0x1.a115e873757d3p+0, 0x1.a60e7ddf2a866p+0, 0x1.aaeed58d9cf2ap+0, 0x1.afb7d78197bedp+0,
    0x1.b46a5ef8151ap+0,  0x1.b9073b53f0713p+0, 0x1.bd8f30f4bbf39p+0, 0x1.c202f9fae6f0ap+0,
    0x1.c66346fb1fbb8p+0, 0x1.cab0bfa2a2002p+0, 0x1.ceec034df0608p+0, 0x1.d315a9934c981p+0,
    0x1.d72e42c21b641p+0, 0x1.db365858403a3p+0, 0x1.df2e6d6e5fbaap+0, 0x1.e316ff1bde46ep+0,
    0x1.e6f084d359a8bp+0, 0x1.eabb70b848eb8p+0, 0x1.ee782fee5c0cp+0,  0x1.f2272ae325a57p+0,
    0x1.f5c8c5928b0f9p+0, 0x1.f95d5fc66b2d1p+0, 0x1.fce55551e156ep+0, 0x1.00307f2440124p+1,
    0x1.01e85798eb9a3p+1, 0x1.039a5c9cc7b0ep+1, 0x1.0546b52e30f62p+1, 0x1.06ed86c91473dp+1,
    0x1.088ef57aa0dd1p+1, 0x1.0a2b23f3bab73p+1, 0x1.0bc2339a4b1p+1,   0x1.0d5444997e5b4p+1,
    0x1.0ee175f1073eep+1, 0x1.1069e58377693p+1, 0x1.11edb023bf0fep+1, 0x1.136cf1a1e2577p+1,
    0x1.14e7c4d6f2a8ep+1, 0x1.165e43b058daap+1, 0x1.17d0873a7c0d7p+1, 0x1.193ea7aad030bp+1,
    0x1.1aa8bc6956467p+1, 0x1.1c0edc1997bd2p+1, 0x1.1d711ca3257cap+1, 0x1.1ecf9339a2a1dp+1,
    0x1.202a5464624b1p+1, 0x1.218174059f4dbp+1, 0x1.22d50561542dap+1, 0x1.24251b23b93bep+1,
    0x1.2571c7676e541p+1, 0x1.26bb1bbb55516p+1, 0x1.2801292821f4cp+1, 0x1.29440035a3a65p+1,
    0x1.2a83b0efcd2c2p+1, 0x1.2bc04aeb7e2afp+1, 0x1.2cf9dd4b12035p+1, 0x1.2e3076c2b7611p+1,
    0x1.2f64259c939a1p+1, 0x1.3094f7bcb4c72p+1, 0x1.31c2faa4d54f7p+1, 0x1.32ee3b77f374cp+1,
    0x1.3e116bcd39e7dp+1, 0x1.485042b318c51p+1, 0x1.51cca16d7bba7p+1, 0x1.5aa16394d481fp+1,
    0x1.62e42fefa39efp+1, 0x1.6aa6bc1fa7f7ap+1, 0x1.71f7b3a6b9186p+1, 0x1.78e360604b32cp+1,
    0x1.7f7427b73e391p+1, 0x1.85b2e946faeb1p+1, 0x1.8ba74773dc5c8p+1, 0x1.9157dfdd1b3fp+1,
    0x1.96ca77c922cf9p+1, 0x1.9c041f7ed8d33p+1, 0x1.a1094eaf01acdp+1, 0x1.a5ddfb803849p+1,
    0x1.aa85ad6964a23p+1, 0x1.af038cbcdfe1fp+1, 0x1.b35a6f90bd69bp+1, 0x1.b78ce48912b5ap+1,
    0x1.bb9d3beb8c86bp+1, 0x1.bf8d8f4d5b8d1p+1, 0x1.c35fc81b90df6p+1, 0x1.c715a530ff3c5p+1,
    0x1.cab0bfa2a2002p+1, 0x1.ce328ee3ac7bdp+1, 0x1.d19c6c5c341a8p+1, 0x1.d4ef968880dd6p+1,
    0x1.d82d33b32720dp+1, 0x1.db565458eac4ep+1, 0x1.de6bf542e3d2dp+1, 0x1.e16f01614ec11p+1,
    0x1.e460536fc5443p+1, 0x1.e740b76a3c9a4p+1, 0x1.ea10ebd90426cp+1, 0x1.ecd1a2f90f0b6p+1,
    0x1.ef8383c50bb75p+1, 0x1.f2272ae325a57p+1, 0x1.f4bd2b7ac1bafp+1, 0x1.f7460ff5100ffp+1,
    0x1.f9c25aaaea949p+1, 0x1.fc32868223cabp+1, 0x1.fe97077c2130cp+1, 0x1.0078259bafef3p+2,
    0x1.019f5cb2a6c5p+2,  0x1.02c15a1ad9a59p+2, 0x1.03de4c5c6464dp+2, 0x1.04f65f9c72979p+2,
    0x1.0609bdc65328bp+2, 0x1.07188eb126c0dp+2, 0x1.0822f8427dcebp+2, 0x1.09291e8e3181bp+2,
    0x1.3687a9f1af2b1p+2, 0x1.62e42fefa39efp+2, 0x1.8f40b5ed9812dp+2, 0x1.bb9d3beb8c86bp+2,
};
static const double DEFAULT_LOG1M_INV_A[N_DEFAULT_ORDERS] = {
    -0x1.32ee3b77f374bp+1, -0x1.cab0bfa2a2003p+0, -0x1.7761ddbb61596p+0, -0x1.40b512eb53d6p+0,
    -0x1.193ea7aad030ap+0, -0x1.f62f40794a7b8p-1, -0x1.c64c9ab854939p-1, -0x1.9f323ecbf984cp-1,
    -0x1.7e92e2d5ec087p-1, -0x1.62e42fefa39efp-1, -0x1.4b12b73c1dd94p-1, -0x1.36576e9a89d2ap-1,
    -0x1.241e74a809e7dp-1, -0x1.13f7596e9c545p-1, -0x1.058aefa811452p-1, -0x1.f128f5faf06ecp-2,
    -0x1.d9b9fb04828bp-2,  -0x1.c46fce155c4e7p-2, -0x1.b10162e4a5793p-2, -0x1.9f323ecbf984cp-2,
    -0x1.8ecfda10be548p-2, -0x1.7fafa3bd8151cp-2, -0x1.71ad7b8202708p-2, -0x1.64aa8293707e8p-2,
    -0x1.588c2d913348fp-2, -0x1.4d3b879d029acp-2, -0x1.42a49b1ba196ap-2, -0x1.38b5f7967bc28p-2,
    -0x1.2f604e5d07dbdp-2, -0x1.269621134db92p-2, -0x1.1e4b7e7ec079ep-2, -0x1.1675cababa60ep-2,
    -0x1.0f0b909f99ap-2,   -0x1.08045aa1a326ep-2, -0x1.015891c9eaef7p-2, -0x1.f602c3662269bp-3,
    -0x1.e9f1415628f92p-3, -0x1.de71768d79cc4p-3, -0x1.d37945aa4c81p-3,  -0x1.c8ff7c79a9a22p-3,
    -0x1.befbb9c254b18p-3, -0x1.b56656806c1bdp-3, -0x1.ac38520d5099ap-3, -0x1.a36b40c5bec85p-3,
    -0x1.9af93cd234412p-3, -0x1.92dcd8c496334p-3, -0x1.8b1113ca43fb6p-3, -0x1.83914f3bd1261p-3,
    -0x1.7c59455bf89a1p-3, -0x1.7565011e49676p-3, -0x1.6eb0d6d3d71abp-3, -0x1.68395da1108d2p-3,
    -0x1.61fb69a3f38b8p-3, -0x1.5bf406b543db2p-3, -0x1.562073b255055p-3, -0x1.507e1e3f6eadcp-3,
    -0x1.4b0a9ef4eda9p-3,  -0x1.45c3b5eb0fd6ep-3, -0x1.40a74799e283fp-3, -0x1.3bb35a041d2a9p-3,
    -0x1.36e61224d5783p-3, -0x1.323db198f4a84p-3, -0x1.2db8947e2f962p-3, -0x1.29552f81ff522p-3,
    -0x1.25120e1bbbcep-3,  -0x1.20edd0ed88d73p-3, -0x1.1ce72c48421cap-3, -0x1.18fce6ceffe0cp-3,
    -0x1.152dd8372d70ap-3, -0x1.1178e8227e47cp-3, -0x1.0ddd0d1058834p-3, -0x1.0a594b648c4b8p-3,
    -0x1.06ecb4816936dp-3, -0x1.039665f3756f8p-3, -0x1.005588ad375adp-3, -0x1.fa52a0a354d1bp-4,
    -0x1.f421f51836596p-4, -0x1.ee179ce88cda1p-4, -0x1.e83237fb660cep-4, -0x1.e27076e2af2e5p-4,
    -0x1.dcd119e166cefp-4, -0x1.d752f0032c3c6p-4, -0x1.d1f4d643c7b7fp-4, -0x1.ccb5b6c567133p-4,
    -0x1.c794881467654p-4, -0x1.c2904c779ec6ep-4, -0x1.bda8114c3098p-4,  -0x1.b8daee6c0c27fp-4,
    -0x1.b428059e48d3cp-4, -0x1.af8e8210a415ep-4, -0x1.ab0d97d975c9bp-4, -0x1.a6a483817d26ap-4,
    -0x1.a2528994f5f12p-4, -0x1.9e16f63b71247p-4, -0x1.99f11cd5f709p-4,  -0x1.95e057a3026c7p-4,
    -0x1.91e40767ed8ddp-4, -0x1.8dfb931f7168bp-4, -0x1.8a2667acdf6c7p-4, -0x1.8663f793c46c7p-4,
    -0x1.64660aa8ce626p-4, -0x1.47dadcbbdba83p-4, -0x1.2f8bd74c5eacfp-4, -0x1.1a9844eb18ef1p-4,
    -0x1.08598b59e3a07p-4, -0x1.f0a30c01162a6p-5, -0x1.d43de1c448325p-5, -0x1.baeb2e6486983p-5,
    -0x1.a431d5bcc1938p-5, -0x1.8fb063ef2c7e9p-5, -0x1.7d178b385c5a4p-5, -0x1.6c261a4fb8a21p-5,
    -0x1.5ca5fb01e422ap-5, -0x1.4e69ed6d80eaep-5, -0x1.414bcc0a36659p-5, -0x1.352b344da70c6p-5,
    -0x1.29ec7a4b164d8p-5, -0x1.1f77d4decfedep-5, -0x1.15b8b4f761f04p-5, -0x1.0c9d3e1552fc8p-5,
    -0x1.0415d89e74444p-5, -0x1.f829b0e783301p-6, -0x1.e91c671aa924cp-6, -0x1.daee8ab72e7e1p-6,
    -0x1.cd8d38d161e69p-6, -0x1.c0e7a0853dd83p-6, -0x1.b4eebc43cf583p-6, -0x1.a995162661705p-6,
    -0x1.9ece955321b6ap-6, -0x1.949052e1d2047p-6, -0x1.8ad074fc86f8bp-6, -0x1.81860f3577229p-6,
    -0x1.78a9073b4191ep-6, -0x1.7031fd3bab07dp-6, -0x1.681a3763c63c5p-6, -0x1.605b900572541p-6,
    -0x1.58f065fe55f13p-6, -0x1.51d38f0cf7169p-6, -0x1.4b004bce0abf2p-6, -0x1.44723d272a7f1p-6,
    -0x1.3e255aed424cp-6,  -0x1.3815eb9c9b10dp-6, -0x1.32407cfeb307ep-6, -0x1.2ca1dd9f56cdep-6,
    -0x1.273716f6d5cd2p-6, -0x1.21fd6832e0955p-6, -0x1.1cf2418abf466p-6, -0x1.1813400e32b71p-6,
    -0x1.135e29e091297p-6, -0x1.0ed0ead398194p-6, -0x1.0a6991570ddfdp-6, -0x1.06264bb3b3041p-6,
    -0x1.010157588de71p-7, -0x1.0080559588b35p-8, -0x1.0040155d5889ep-9, -0x1.0020055655889p-10,
};

int64_t dpdo_accountant_default_orders(double *out, int64_t cap)
{
    if (out) {
        int64_t n = 0;
        for (int i = 1; i <= 99 && n < cap; i++)
            out[n++] = 1.0 + i / 10.0;
        for (int i = 11; i <= 63 && n < cap; i++)
            out[n++] = i;
        for (int i = 128; i <= 1024 && n < cap; i *= 2)
            out[n++] = i;
    }
    return N_DEFAULT_ORDERS;
}

static void opts_defaults(dpdo_accountant_options *o)
{
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->conversion = DPDO_CONVERSION_IMPROVED;
    o->pld_interval = DPDO_PLD_DEFAULT_INTERVAL;
}

int dpdo_accountant_options_init(dpdo_accountant_options *o, size_t struct_size)
{
    dpdo_accountant_options d;
    opts_defaults(&d);
    return dpdo__options_init(o, struct_size, &d, sizeof d);
}

/* ---- handle --------------------------------------------------------------------- */

static int make_builtin(builtin **out, int kind, const dpdo_accountant_options *o, char *err)
{
    *out = NULL;
    int64_t n = o->orders ? o->n_orders : N_DEFAULT_ORDERS;
    if (o->orders) {
        if (n < 1 || n > 100000)
            return dpdo__err(err, DPDO_E_INVAL, "n_orders = %lld is not in [1, 100000]",
                             (long long)n);
        for (int64_t i = 0; i < n; i++) {
            double a = o->orders[i];
            if (!(a > 1.0) || (a > 1e6 && a != INFINITY))
                return dpdo__err(err, DPDO_E_INVAL, "orders[%lld] = %g must be in (1, 1e6] or +inf",
                                 (long long)i, a);
        }
    }
    if (o->conversion != DPDO_CONVERSION_IMPROVED && o->conversion != DPDO_CONVERSION_CLASSIC)
        return dpdo__err(err, DPDO_E_INVAL, "conversion = %d is not a DPDO_CONVERSION_* value",
                         (int)o->conversion);
    if (o->reserved0 != 0) return dpdo__err(err, DPDO_E_INVAL, "reserved0 must be 0");
    if (!(o->pld_interval >= 1e-6 && o->pld_interval <= 1.0))
        return dpdo__err(err, DPDO_E_INVAL, "pld_interval = %g is not in [1e-6, 1]",
                         o->pld_interval);
    builtin *b = dpdo__calloc(1, sizeof *b);
    if (!b) return DPDO_E_NOMEM;
    b->kind = kind;
    b->conv = o->conversion;
    b->pld_h = o->pld_interval;
    b->limit = -INFINITY;
    /* auto keeps pld to windows that compose in milliseconds (2^17 bins: a loss
     * range of 131 at the default interval); beyond, rdp answers alone */
    if ((kind == K_PLD || kind == K_AUTO) &&
        dpdo__pld_acc_new(&b->pld, b->pld_h, kind == K_AUTO ? (int64_t)1 << 17 : 0) != DPDO_OK) {
        dpdo__free(b);
        return DPDO_E_NOMEM;
    }
    b->n_orders = n;
    b->orders = dpdo__alloc_array((size_t)n, sizeof *b->orders);
    b->tot = dpdo__alloc_array((size_t)n, sizeof *b->tot);
    b->deferred = dpdo__alloc_array((size_t)n, 1);
    b->convc = dpdo__alloc_array((size_t)n, sizeof *b->convc);
    b->conv_delta = -1.0;
    b->lower = dpdo__alloc_array((size_t)n, sizeof *b->lower);
    b->cands = dpdo__alloc_array((size_t)n, sizeof *b->cands);
    b->perm = dpdo__alloc_array((size_t)n, sizeof *b->perm);
    b->loga = dpdo__alloc_array((size_t)n, sizeof *b->loga);
    b->l1ma = dpdo__alloc_array((size_t)n, sizeof *b->l1ma);
    b->lbv = dpdo__alloc_array((size_t)n, sizeof *b->lbv);
    b->ubv = dpdo__alloc_array((size_t)n, sizeof *b->ubv);
    if (!b->orders || !b->tot || !b->deferred || !b->convc || !b->lower || !b->cands || !b->perm ||
        !b->lbv || !b->ubv || !b->loga || !b->l1ma)
        goto nomem;
    if (o->orders) {
        memcpy(b->orders, o->orders, (size_t)n * sizeof *b->orders);
        for (int64_t i = 0; i < n; i++) {
            double a = b->orders[i];
            b->loga[i] = a == INFINITY ? INFINITY : log(a);
            b->l1ma[i] = a == INFINITY ? 0.0 : log1p(-1.0 / a);
        }
    } else {
        dpdo_accountant_default_orders(b->orders, n);
        memcpy(b->loga, DEFAULT_LOG_A, sizeof DEFAULT_LOG_A);
        memcpy(b->l1ma, DEFAULT_LOG1M_INV_A, sizeof DEFAULT_LOG1M_INV_A);
    }
    /* skeleton: in increasing order, an order is computed eagerly if it is at
     * least 1.5 times the previous eager one (or infinite); the others are
     * deferred. lower[o]: the largest eager order <= orders[o]. */
    for (int64_t i = 0; i < n; i++) {
        b->cands[i].lb = b->orders[i];
        b->cands[i].o = i;
    }
    int sorted = 1;
    for (int64_t i = 1; i < n && sorted; i++)
        sorted = cand_cmp(&b->cands[i - 1], &b->cands[i]) < 0;
    if (!sorted) qsort(b->cands, (size_t)n, sizeof *b->cands, cand_cmp);
    int64_t last = -1;
    double last_val = 0.0;
    for (int64_t i = 0; i < n; i++) {
        int64_t oi = b->cands[i].o;
        double a = b->orders[oi];
        int eager = a == INFINITY || last < 0 || a >= 1.5 * last_val;
        b->deferred[oi] = (unsigned char)!eager;
        if (eager) {
            last = oi;
            last_val = a;
        }
        b->lower[oi] = last == oi ? oi : last;
        b->perm[i] = oi;
    }
    double maxint = 2;
    for (int64_t i = 0; i < n; i++)
        if (b->orders[i] != INFINITY && ceil(b->orders[i]) > maxint) maxint = ceil(b->orders[i]);
    /* convexity points: integers up to ceil(max order) + 1, at most DPDO__PG_NI - 1 */
    b->kmax = maxint + 1 < DPDO__PG_NI - 1 ? (int64_t)maxint + 1 : DPDO__PG_NI - 1;
    b->logtab_n = (int64_t)(maxint < 4096 ? maxint : 4096) + 1;
    b->logtab = dpdo__alloc_array((size_t)b->logtab_n, sizeof *b->logtab);
    if (!b->logtab) goto nomem;
    /* the table is filled up to DPDO__PG_NI now and completely when an order
     * needs more (kernels compute log(k) themselves beyond logtab_fill: same values) */
    b->logtab[0] = -INFINITY;
    b->logtab_fill = b->logtab_n < DPDO__PG_NI + 1 ? b->logtab_n : DPDO__PG_NI + 1;
    for (int64_t k = 1; k < b->logtab_fill; k++)
        b->logtab[k] = log((double)k);
    *out = b;
    return DPDO_OK;
nomem:
    b_release(b);
    return DPDO_E_NOMEM;
}

static int acc_new(dpdo_accountant **out, const dpdo_accountant_type *type, void *user,
                   int is_builtin, dpdo_ledger *ledger)
{
    dpdo_accountant *a = dpdo__calloc(1, sizeof *a);
    if (!a) return DPDO_E_NOMEM;
    a->magic = DPDO__MAGIC_ACCOUNTANT;
    a->rows_cap = 8;
    a->rows = dpdo__calloc((size_t)a->rows_cap * DPDO_EV_FIELDS, sizeof *a->rows);
    if (!a->rows) {
        dpdo__free(a);
        return DPDO_E_NOMEM;
    }
    a->type = type;
    a->user = user;
    a->is_builtin = is_builtin;
    a->ledger = ledger;
    ledger->borrowers++;
    *out = a;
    return DPDO_OK;
}

static int create_custom(dpdo_accountant **out, const dpdo_accountant_type *type, void *user,
                         dpdo_ledger *ledger)
{
    if (type->struct_size < offsetof(dpdo_accountant_type, release) + sizeof(type->release))
        return dpdo__err(
            ledger->errmsg, DPDO_E_VERSION,
            "accountant type: struct_size = %zu does not cover the release field (%zu)",
            type->struct_size, offsetof(dpdo_accountant_type, release) + sizeof(type->release));
    if (!type->name || !type->epsilon)
        return dpdo__err(ledger->errmsg, DPDO_E_INVAL, "accountant type: name or epsilon is NULL");
    return acc_new(out, type, user, 0, ledger);
}

/* Failures of create leave their message on the borrowed ledger (no accountant exists). */
int dpdo_accountant_create(dpdo_accountant **out, const dpdo_accountant_type *type, void *user,
                           dpdo_ledger *ledger, const dpdo_accountant_options *opts)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (!ledger) return DPDO_E_INVAL;
    if (!type)
        return dpdo__err(ledger->errmsg, DPDO_E_INVAL,
                         "accountant type is NULL: choose one; the library's default is "
                         "dpdo_accountant_type_find(DPDO_ACCOUNTANT_DEFAULT), i.e. \"auto\" "
                         "(the smallest certified figure, docs/privacy.md)");
    dpdo_accountant_options o;
    opts_defaults(&o);
    int rc = dpdo__options_accept(&o, sizeof o, offsetof(dpdo_accountant_options, reserved), opts,
                                  "dpdo_accountant_options", ledger->errmsg);
    if (rc) return rc;
    int kind = builtin_kind(type);
    if (!kind) return create_custom(out, type, user, ledger);
    if (user)
        return dpdo__err(ledger->errmsg, DPDO_E_INVAL,
                         "accountant '%s' is built in: user must be NULL", type->name);
    builtin *b;
    rc = make_builtin(&b, kind, &o, ledger->errmsg);
    if (rc) return rc;
    rc = acc_new(out, type, b, 1, ledger);
    if (rc) b_release(b);
    return rc;
}

int dpdo_accountant_create_custom(dpdo_accountant **out, const dpdo_accountant_type *type,
                                  void *user, dpdo_ledger *ledger)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (!type || !ledger) return DPDO_E_INVAL;
    return create_custom(out, type, user, ledger);
}

static void acc_free(dpdo_accountant *a);

void dpdo_accountant_destroy(dpdo_accountant *a)
{
    if (!a || !DPDO__LIVE(a, DPDO__MAGIC_ACCOUNTANT)) return; /* NULL or destroyed */
    /* refused while a call runs on the handle (core_impl.h, dpdo__busy) */
    if (dpdo__busy_enter(&a->busy, 1, a->errmsg, "dpdo_accountant_destroy") != 1) return;
    DPDO__KILL(a);
    if (a->borrowers > 0) {
        a->doomed = 1; /* freed by the last borrowing algorithm */
        return;
    }
    acc_free(a);
}

void dpdo__accountant_retain(dpdo_accountant *a)
{
    a->borrowers++;
}

void dpdo__accountant_release(dpdo_accountant *a)
{
    if (a && --a->borrowers == 0 && a->doomed) acc_free(a);
}

static void acc_free(dpdo_accountant *a)
{
    if (a->type->release) a->type->release(a->user);
    if (a->ledger) dpdo__ledger_release(a->ledger);
    dpdo__free(a->rows);
    dpdo__free(a);
}

const char *dpdo_accountant_errmsg(const dpdo_accountant *a)
{
    return !a ? DPDO__NULL_TEXT("dpdo_accountant_errmsg", "acc")
           : DPDO__LIVE(a, DPDO__MAGIC_ACCOUNTANT)
               ? a->errmsg
               : DPDO__DEAD_TEXT("dpdo_accountant_errmsg", "acc");
}
const char *dpdo_accountant_name(const dpdo_accountant *a)
{
    return a ? dpdo_accountant_type_name(a->type) : "";
}

/* ---- queries -------------------------------------------------------------------- */

static int ensure_rows(dpdo_accountant *a, int64_t n)
{
    if (n <= a->rows_cap) return DPDO_OK;
    int64_t nc = a->rows_cap * 2;
    if (nc < n) nc = n;
    size_t cells;
    if (!dpdo__mul_size((size_t)nc, DPDO_EV_FIELDS, &cells))
        return dpdo__err(a->errmsg, DPDO_E_NOMEM, "event table too large");
    double *r = dpdo__calloc(cells, sizeof *r);
    if (!r) return dpdo__err(a->errmsg, DPDO_E_NOMEM, "out of memory for the event table");
    dpdo__free(a->rows);
    a->rows = r;
    a->rows_cap = nc;
    return DPDO_OK;
}

static int call_cb(dpdo_accountant *a, int want_delta, int64_t n, double x, double *out,
                   double *order)
{
    int rc;
    double ord = NAN;
    if (want_delta) {
        if (!a->type->delta)
            return dpdo__err(a->errmsg, DPDO_E_UNSUPPORTED, "accountant '%s' has no delta query",
                             a->type->name);
        rc = a->type->delta(a->user, a->rows, n, x, out);
    } else {
        rc = a->type->epsilon(a->user, a->rows, n, x, out, &ord);
    }
    if (order) *order = ord;
    if (rc == 0) {
        if (isnan(*out) || *out < 0)
            return dpdo__err(a->errmsg, DPDO_E_NUMERIC, "accountant '%s' returned %g",
                             a->type->name, *out);
        return DPDO_OK;
    }
    if (a->is_builtin) {
        builtin *b = a->user;
        return dpdo__err(a->errmsg, rc, "%s", b->msg);
    }
    return dpdo__err(a->errmsg, DPDO_E_CALLBACK, "accountant '%s' %s callback returned %d",
                     a->type->name, want_delta ? "delta" : "epsilon", rc);
}

/* the worst value over the selected nodes; extra: hypothetical event */
static int query_sel(dpdo_accountant *a, int want_delta, const int64_t *nodes, int64_t n_sel,
                     const dpdo__event_desc *extra, double extra_count, double x, double *out,
                     double *order)
{
    dpdo_ledger *l = a->ledger;
    int64_t K = l->n_events, N = l->n_nodes;
    int all = nodes == NULL;
    int64_t ns = all ? N : n_sel;
    if (!all && (n_sel < 1 || n_sel > N))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "n_sel = %lld is not in [1, %lld]",
                         (long long)n_sel, (long long)N);
    for (int64_t i = 0; !all && i < ns; i++)
        if (nodes[i] < 0 || nodes[i] >= N)
            return dpdo__err(a->errmsg, DPDO_E_INVAL, "node %lld is not in [0, %lld)",
                             (long long)nodes[i], (long long)N);
    int64_t nrow = K + (extra ? 1 : 0);
    int rc = ensure_rows(a, nrow + 1);
    if (rc) return rc;
    for (int64_t k = 0; k < K; k++)
        desc_to_row(&l->ev[k], a->rows + k * DPDO_EV_FIELDS);
    if (extra) {
        desc_to_row(extra, a->rows + K * DPDO_EV_FIELDS);
        a->rows[K * DPDO_EV_FIELDS + DPDO_EV_COUNT] = extra_count;
    }
    double worst = 0.0, wo = NAN, wlo = 0.0, plo = 0.0;
    const char *wsrc = a->type->name, *psrc = a->type->name;
    int64_t prev = -1;
    double pv = 0.0, po = NAN;
    for (int64_t i = 0; i < ns; i++) {
        int64_t node = all ? i : nodes[i];
        int same = prev >= 0;
        for (int64_t k = 0; k < K; k++) {
            int64_t c = l->counts[k * N + node];
            if (same && c != l->counts[k * N + prev]) same = 0;
            a->rows[k * DPDO_EV_FIELDS + DPDO_EV_COUNT] = (double)c;
        }
        double v, o = NAN;
        double lo = 0.0;
        const char *src = a->type->name;
        if (same) {
            v = pv;
            o = po;
            lo = plo;
            src = psrc;
        } else {
            rc = call_cb(a, want_delta, nrow, x, &v, &o);
            if (rc) return rc;
            if (a->is_builtin) {
                builtin *b = a->user;
                lo = b->last_lo;
                if (b->last_src) src = b->last_src;
            }
        }
        if (i == 0 || v > worst) {
            worst = v;
            wo = o;
            wsrc = src;
        }
        if (lo > wlo) wlo = lo; /* the worst node is at least the largest lower bound */
        prev = node;
        pv = v;
        po = o;
        plo = lo;
        psrc = src;
    }
    *out = worst;
    if (order) *order = wo;
    a->last_lo = want_delta ? 0.0 : (wlo < worst ? wlo : worst);
    a->last_src = wsrc;
    return DPDO_OK;
}

int dpdo__accountant_epsilon_sel(dpdo_accountant *a, const int64_t *nodes, int64_t n_sel,
                                 const dpdo__event_desc *extra, double extra_count, double delta,
                                 double *eps, double *order)
{
    return query_sel(a, 0, nodes, n_sel, extra, extra_count, delta, eps, order);
}

static int check_node(dpdo_accountant *a, int64_t node, int64_t *sel, const int64_t **nodes,
                      int64_t *n_sel)
{
    if (node == -1) {
        *nodes = NULL;
        *n_sel = -1;
        return DPDO_OK;
    }
    if (node < 0 || node >= a->ledger->n_nodes)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "node = %lld is not -1 or in [0, %lld)",
                         (long long)node, (long long)a->ledger->n_nodes);
    *sel = node;
    *nodes = sel;
    *n_sel = 1;
    return DPDO_OK;
}

static int accountant_epsilon_body(dpdo_accountant *a, int64_t node, double delta, double *eps,
                                   double *order)
{
    if (!a) return DPDO_E_INVAL;
    if (order) *order = NAN;
    if (!eps) return dpdo__err(a->errmsg, DPDO_E_INVAL, "eps is NULL");
    if (!(delta > 0 && delta < 1))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "delta = %g is not in (0, 1)", delta);
    int64_t sel;
    const int64_t *nodes = NULL;
    int64_t n_sel = -1;
    int rc = check_node(a, node, &sel, &nodes, &n_sel);
    if (rc) return rc;
    rc = query_sel(a, 0, nodes, n_sel, NULL, 0, delta, eps, order);
    if (!rc) dpdo__err_clear(a->errmsg);
    return rc;
}

int dpdo_accountant_epsilon(dpdo_accountant *a, int64_t node, double delta, double *eps,
                            double *order)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ACCOUNTANT, 1, "dpdo_accountant_epsilon",
                  accountant_epsilon_body(a, node, delta, eps, order));
}

static int accountant_epsilon_bounds_body(dpdo_accountant *a, int64_t node, double delta,
                                          double *eps_lo, double *eps_hi)
{
    if (!a) return DPDO_E_INVAL;
    if (!eps_lo || !eps_hi)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "eps_lo and eps_hi must not be NULL");
    double e;
    int rc = accountant_epsilon_body(a, node, delta, &e, NULL);
    if (rc) return rc;
    *eps_hi = e;
    *eps_lo = a->last_lo;
    return DPDO_OK;
}

int dpdo_accountant_epsilon_bounds(dpdo_accountant *a, int64_t node, double delta, double *eps_lo,
                                   double *eps_hi)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ACCOUNTANT, 1, "dpdo_accountant_epsilon_bounds",
                  accountant_epsilon_bounds_body(a, node, delta, eps_lo, eps_hi));
}

const char *dpdo_accountant_source(const dpdo_accountant *a)
{
    if (!a) return "";
    return a->last_src ? a->last_src : dpdo_accountant_type_name(a->type);
}

static int accountant_delta_body(dpdo_accountant *a, int64_t node, double eps, double *delta)
{
    if (!a) return DPDO_E_INVAL;
    if (!delta) return dpdo__err(a->errmsg, DPDO_E_INVAL, "delta is NULL");
    if (!(eps >= 0) || !isfinite(eps))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "eps = %g must be finite and >= 0", eps);
    int64_t sel;
    const int64_t *nodes = NULL;
    int64_t n_sel = -1;
    int rc = check_node(a, node, &sel, &nodes, &n_sel);
    if (rc) return rc;
    rc = query_sel(a, 1, nodes, n_sel, NULL, 0, eps, delta, NULL);
    if (!rc) dpdo__err_clear(a->errmsg);
    return rc;
}

int dpdo_accountant_delta(dpdo_accountant *a, int64_t node, double eps, double *delta)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ACCOUNTANT, 1, "dpdo_accountant_delta",
                  accountant_delta_body(a, node, eps, delta));
}

static int accountant_set_budget_body(dpdo_accountant *a, double max_epsilon, double delta)
{
    if (!a) return DPDO_E_INVAL;
    if (!(max_epsilon > 0) || !isfinite(max_epsilon))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "max_epsilon = %g must be finite and > 0",
                         max_epsilon);
    if (!(delta > 0 && delta < 1))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "delta = %g is not in (0, 1)", delta);
    a->has_budget = 1;
    a->budget_eps = max_epsilon;
    a->budget_delta = delta;
    dpdo__err_clear(a->errmsg);
    return DPDO_OK;
}

int dpdo_accountant_set_budget(dpdo_accountant *a, double max_epsilon, double delta)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ACCOUNTANT, 1, "dpdo_accountant_set_budget",
                  accountant_set_budget_body(a, max_epsilon, delta));
}

static int accountant_would_exceed_body(dpdo_accountant *a, const dpdo_event *ev, int64_t count,
                                        const int64_t *nodes, int64_t n_sel, int32_t *exceed,
                                        double *eps_after)
{
    if (!a) return DPDO_E_INVAL;
    if (!ev || !exceed) return dpdo__err(a->errmsg, DPDO_E_INVAL, "ev and exceed must not be NULL");
    if (!a->has_budget)
        return dpdo__err(a->errmsg, DPDO_E_STATE, "no budget set (dpdo_accountant_set_budget)");
    if (ev->d.mech == 0) return dpdo__err(a->errmsg, DPDO_E_INVAL, "event is not set");
    if (count < 1)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "count = %lld must be >= 1", (long long)count);
    if (!nodes && n_sel != -1)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "nodes is NULL but n_sel = %lld (use -1 for all)",
                         (long long)n_sel);
    double e;
    builtin *b = a->is_builtin ? a->user : NULL;
    if (b) b->limit = a->budget_eps; /* auto: an RDP figure within the budget settles it */
    int rc = query_sel(a, 0, nodes, n_sel, &ev->d, (double)count, a->budget_delta, &e, NULL);
    if (b) b->limit = -INFINITY;
    if (rc) return rc;
    *exceed = e > a->budget_eps;
    if (eps_after) *eps_after = e;
    dpdo__err_clear(a->errmsg);
    return DPDO_OK;
}

int dpdo_accountant_would_exceed(dpdo_accountant *a, const dpdo_event *ev, int64_t count,
                                 const int64_t *nodes, int64_t n_sel, int32_t *exceed,
                                 double *eps_after)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ACCOUNTANT, 1, "dpdo_accountant_would_exceed",
                  accountant_would_exceed_body(a, ev, count, nodes, n_sel, exceed, eps_after));
}

/* ---- calibration ---------------------------------------------------------------- */

static int cal_check(dpdo_accountant *a, const dpdo_sampling *s, double sens, double eps,
                     double delta)
{
    if (!(sens > 0) || !isfinite(sens))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "sensitivity = %g must be finite and > 0", sens);
    if (!(eps > 0) || !isfinite(eps))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "target epsilon = %g must be finite and > 0",
                         eps);
    if (!(delta > 0 && delta < 1))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "delta = %g is not in (0, 1)", delta);
    if (s) return dpdo__sampling_check(&s->d, a->errmsg);
    return DPDO_OK;
}

static int eps_with(dpdo_accountant *a, const dpdo_sampling *s, double sens, double sigma,
                    double steps, double delta, double *e)
{
    dpdo__event_desc d;
    int rc = dpdo__event_make(&d, a->calib_mech ? a->calib_mech : DPDO_MECH_GAUSSIAN,
                              s ? &s->d : NULL, sens, sigma, a->errmsg);
    if (rc) return rc;
    return query_sel(a, 0, NULL, -1, &d, steps, delta, e, NULL);
}

static int cal_refine(dpdo_accountant *a, const dpdo_sampling *s, double sens, double steps,
                      double eps, double delta, double lo, double elo, double hi, double ehi,
                      double *sigma);

static int accountant_calibrate_sigma_body(dpdo_accountant *a, const dpdo_sampling *s, double sens,
                                           double steps, double eps, double delta, double *sigma)
{
    if (!a) return DPDO_E_INVAL;
    if (!sigma) return dpdo__err(a->errmsg, DPDO_E_INVAL, "sigma is NULL");
    int rc = cal_check(a, s, sens, eps, delta);
    if (rc) return rc;
    if (!(steps >= 1) || steps > 1e15 || steps != floor(steps))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "steps = %g must be an integer in [1, 1e15]",
                         steps);
    const double smax = 1e12 * sens, smin = 1e-6 * sens;
    double e;
    builtin *b = a->is_builtin ? a->user : NULL;
    if (b && b->kind == K_AUTO && !b->rdp_only) {
        /* auto: rdp's sigma first (cheap); auto's is at most that. Then down by
         * factors of 1.5 to a bracket, and the refinement: the expensive pld
         * evaluations stay near the answer */
        double srdp;
        b->rdp_only = 1;
        rc = accountant_calibrate_sigma_body(a, s, sens, steps, eps, delta, &srdp);
        b->rdp_only = 0;
        if (rc) return rc;
        double hi = srdp, ehi, lo, elo;
        rc = eps_with(a, s, sens, hi, steps, delta, &ehi);
        if (rc) return rc;
        for (;;) {
            lo = hi / 1.5;
            if (lo < smin) { /* at the floor: hi is the smallest sigma checked to meet the target */
                *sigma = hi;
                dpdo__err_clear(a->errmsg);
                return DPDO_OK;
            }
            rc = eps_with(a, s, sens, lo, steps, delta, &elo);
            if (rc) return rc;
            if (elo > eps) break;
            hi = lo;
            ehi = elo;
        }
        return cal_refine(a, s, sens, steps, eps, delta, lo, elo, hi, ehi, sigma);
    }
    rc = eps_with(a, s, sens, smax, steps, delta, &e);
    if (rc) return rc;
    if (e > eps)
        return dpdo__err(
            a->errmsg, DPDO_E_NUMERIC,
            "target epsilon %g is unreachable: even sigma = %g gives epsilon %g at delta %g", eps,
            smax, e, delta);
    double hi = sens, lo, elo, ehi;
    rc = eps_with(a, s, sens, hi, steps, delta, &e);
    if (rc) return rc;
    if (e > eps) {
        do {
            lo = hi;
            elo = e;
            hi *= 4.0;
            if (hi > smax) hi = smax;
            rc = eps_with(a, s, sens, hi, steps, delta, &e);
            if (rc) return rc;
        } while (e > eps);
        ehi = e;
    } else {
        ehi = e;
        for (;;) {
            lo = hi / 4.0;
            if (lo < smin) { /* at the floor: hi is the smallest sigma checked to meet the target */
                *sigma = hi;
                dpdo__err_clear(a->errmsg);
                return DPDO_OK;
            }
            rc = eps_with(a, s, sens, lo, steps, delta, &e);
            if (rc) return rc;
            if (e > eps) break;
            hi = lo;
            ehi = e;
        }
        elo = e;
    }
    return cal_refine(a, s, sens, steps, eps, delta, lo, elo, hi, ehi, sigma);
}

int dpdo_accountant_calibrate_sigma(dpdo_accountant *a, const dpdo_sampling *s, double sens,
                                    double steps, double eps, double delta, double *sigma)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ACCOUNTANT, 1, "dpdo_accountant_calibrate_sigma",
                  accountant_calibrate_sigma_body(a, s, sens, steps, eps, delta, sigma));
}

/* invariant: eps(lo) > target >= eps(hi). Illinois (false position in log
 * sigma, the retained end's value halved when one side stays twice), with a
 * bisection step whenever two steps did not halve the bracket or a value is
 * not finite: few evaluations for the costly accountants */
static int cal_refine(dpdo_accountant *a, const dpdo_sampling *s, double sens, double steps,
                      double eps, double delta, double lo, double elo, double hi, double ehi,
                      double *sigma)
{
    int rc;
    double e;
    double fl = elo - eps, fh = ehi - eps, w0 = log(hi / lo);
    int side = 0, since = 0;
    for (int it = 0; it < 300 && hi / lo - 1.0 > 1e-11; it++) {
        double xl = log(lo), xh = log(hi), x;
        double w = xh - xl;
        if (since >= 2 || !isfinite(fl) || !isfinite(fh) || !(fl - fh > 0)) {
            x = 0.5 * (xl + xh);
            since = 0;
            w0 = w;
        } else {
            x = (xl * fh - xh * fl) / (fh - fl);
            double m = 1e-3 * w; /* stay strictly inside */
            if (!(x > xl + m)) x = xl + m;
            if (!(x < xh - m)) x = xh - m;
        }
        double mid = exp(x);
        if (!(mid > lo && mid < hi)) mid = sqrt(lo * hi);
        rc = eps_with(a, s, sens, mid, steps, delta, &e);
        if (rc) return rc;
        double f = e - eps;
        if (e > eps) {
            lo = mid;
            fl = f;
            if (side == -1) fh *= 0.5;
            side = -1;
        } else {
            hi = mid;
            fh = f;
            if (side == 1) fl *= 0.5;
            side = 1;
        }
        if (log(hi / lo) > 0.5 * w0)
            since++;
        else {
            since = 0;
            w0 = log(hi / lo);
        }
    }
    *sigma = hi;
    dpdo__err_clear(a->errmsg);
    return DPDO_OK;
}

static int accountant_calibrate_steps_body(dpdo_accountant *a, const dpdo_sampling *s, double sens,
                                           double sigma, double eps, double delta, double *steps)
{
    if (!a) return DPDO_E_INVAL;
    if (!steps) return dpdo__err(a->errmsg, DPDO_E_INVAL, "steps is NULL");
    int rc = cal_check(a, s, sens, eps, delta);
    if (rc) return rc;
    if (!(sigma > 0) || !isfinite(sigma))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "sigma = %g must be finite and > 0", sigma);
    double e;
    rc = eps_with(a, s, sens, sigma, 1, delta, &e);
    if (rc) return rc;
    if (e > eps) {
        *steps = 0;
        dpdo__err_clear(a->errmsg);
        return DPDO_OK;
    }
    double good = 1, bad = 2;
    for (;;) {
        if (bad > 1e15) bad = 1e15; /* the cap, checked like every other count */
        rc = eps_with(a, s, sens, sigma, bad, delta, &e);
        if (rc) return rc;
        if (e > eps) break;
        if (bad == 1e15) {
            *steps = 1e15;
            dpdo__err_clear(a->errmsg);
            return DPDO_OK;
        }
        good = bad;
        bad *= 2;
    }
    while (bad - good > 1) {
        double mid = floor((good + bad) / 2);
        rc = eps_with(a, s, sens, sigma, mid, delta, &e);
        if (rc) return rc;
        if (e > eps)
            bad = mid;
        else
            good = mid;
    }
    *steps = good;
    dpdo__err_clear(a->errmsg);
    return DPDO_OK;
}

int dpdo_accountant_calibrate_steps(dpdo_accountant *a, const dpdo_sampling *s, double sens,
                                    double sigma, double eps, double delta, double *steps)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ACCOUNTANT, 1, "dpdo_accountant_calibrate_steps",
                  accountant_calibrate_steps_body(a, s, sens, sigma, eps, delta, steps));
}

/* ---- formula functions ---------------------------------------------------------- */

static int bad_delta(double d)
{
    return !(d > 0 && d < 1);
}

int dpdo_rdp_gaussian(int kind, double rate, double z, double alpha, double *rdp)
{
    if (!rdp || !(z > 0) || !isfinite(z) || !(alpha > 1) || (alpha > 1e6 && alpha != INFINITY))
        return DPDO_E_INVAL;
    dpdo__event_desc d;
    memset(&d, 0, sizeof d);
    d.mech = DPDO_MECH_GAUSSIAN;
    d.samp.kind = kind;
    d.samp.q = kind == DPDO_SAMPLING_NONE ? 1.0 : rate;
    d.sens = 1.0;
    d.noise = z;
    if (kind == DPDO_SAMPLING_WOR) { /* only the ratio matters */
        if (!(rate > 0 && rate <= 1)) return DPDO_E_INVAL;
    } else if (kind != DPDO_SAMPLING_NONE && kind != DPDO_SAMPLING_POISSON) {
        return DPDO_E_INVAL;
    } else if (kind == DPDO_SAMPLING_POISSON && !(rate > 0 && rate <= 1)) {
        return DPDO_E_INVAL;
    }
    *rdp = dpdo__rdp_event(&d, alpha, NULL, 0);
    return DPDO_OK;
}

int dpdo_rdp_laplace(double lambda, double alpha, double *rdp)
{
    if (!rdp || !(lambda > 0) || !isfinite(lambda) || !(alpha > 1)) return DPDO_E_INVAL;
    *rdp = dpdo__rdp_laplace(lambda, alpha);
    return DPDO_OK;
}

static int check_curve(const double *orders, const double *rdp, int64_t n, int conv)
{
    if (!orders || !rdp || n < 1) return DPDO_E_INVAL;
    if (conv != DPDO_CONVERSION_IMPROVED && conv != DPDO_CONVERSION_CLASSIC) return DPDO_E_INVAL;
    for (int64_t i = 0; i < n; i++)
        if (!(orders[i] > 1) || !(rdp[i] >= 0)) return DPDO_E_INVAL;
    return DPDO_OK;
}

int dpdo_rdp_to_epsilon(const double *orders, const double *rdp, int64_t n, double delta, int conv,
                        double *eps, double *order)
{
    if (!eps || bad_delta(delta) || check_curve(orders, rdp, n, conv)) return DPDO_E_INVAL;
    *eps = dpdo__rdp_eps(orders, rdp, n, delta, conv, order);
    return DPDO_OK;
}

int dpdo_rdp_to_delta(const double *orders, const double *rdp, int64_t n, double eps, int conv,
                      double *delta, double *order)
{
    if (!delta || !(eps >= 0) || !isfinite(eps) || check_curve(orders, rdp, n, conv))
        return DPDO_E_INVAL;
    *delta = dpdo__rdp_delta(orders, rdp, n, eps, conv, order);
    return DPDO_OK;
}

int dpdo_gaussian_delta(double mu, double eps, double *delta)
{
    if (!delta || !(mu >= 0) || !isfinite(mu) || !(eps >= 0) || !isfinite(eps)) return DPDO_E_INVAL;
    *delta = dpdo__gauss_delta(mu, eps);
    return DPDO_OK;
}

int dpdo_gaussian_epsilon(double mu, double delta, double *eps)
{
    if (!eps || !(mu >= 0) || !isfinite(mu) || bad_delta(delta)) return DPDO_E_INVAL;
    *eps = dpdo__gauss_eps(mu, delta);
    return DPDO_OK;
}

int dpdo_zcdp_epsilon(double rho, double delta, int conv, double *eps)
{
    if (!eps || !(rho >= 0) || !isfinite(rho) || bad_delta(delta)) return DPDO_E_INVAL;
    if (conv != DPDO_CONVERSION_IMPROVED && conv != DPDO_CONVERSION_CLASSIC) return DPDO_E_INVAL;
    *eps = dpdo__zcdp_eps(rho, delta, conv);
    return DPDO_OK;
}

int dpdo_dp_amplify(double eps, double gamma, double *out)
{
    if (!out || !(eps >= 0) || !isfinite(eps) || !(gamma >= 0 && gamma <= 1)) return DPDO_E_INVAL;
    *out = eps > 30 ? eps + log(gamma + (1 - gamma) * exp(-eps)) : log1p(gamma * expm1(eps));
    if (gamma == 0) *out = 0;
    return DPDO_OK;
}

int dpdo_dp_gaussian_sigma(double eps, double delta, double *s)
{
    if (!s || !(eps > 0 && eps < 1) || bad_delta(delta)) return DPDO_E_INVAL;
    *s = sqrt(2.0 * log(1.25 / delta)) / eps;
    return DPDO_OK;
}

int dpdo_dp_advanced_composition(double k, double eps0, double dp, double *eps)
{
    if (!eps || !(k >= 1) || !isfinite(k) || !(eps0 >= 0) || !isfinite(eps0) || bad_delta(dp))
        return DPDO_E_INVAL;
    *eps = sqrt(2.0 * k * log(1.0 / dp)) * eps0 + k * eps0 * expm1(eps0);
    return DPDO_OK;
}

dpdo_ledger *dpdo__accountant_ledger(const dpdo_accountant *a)
{
    return a->ledger;
}
