/* SPDX-License-Identifier: BSD-3-Clause */
/* The rdp accountant: the composed RDP curve over a grid of orders (per-event vectors cached,
 * computed lazily) and the order search that converts it to (epsilon, delta) -- a branch and
 * bound that equals the full minimum over the orders. auto holds the same state
 * (accountant_auto.c). */
#include "accountant_impl.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Branch and bound over the orders. Each order of the Poisson-subsampled
 * Gaussian costs a series (fractional) or O(alpha) terms (integer). An epsilon
 * query computes a geometric skeleton of the orders first (each >= 1.5x the
 * previous) and then another order only if its lower bound -- the composed
 * RDP at the next lower skeleton order (RDP is non-decreasing in alpha) pushed
 * through the conversion (non-decreasing in RDP) -- could beat the best
 * epsilon so far. This is exact pruning: the result equals the full minimum;
 * skipped orders stay uncomputed (NaN) in the cache until a query needs them. */

static int same_desc(const dpdo__event_desc *a, const dpdo__event_desc *b)
{
    return a->mech == b->mech && a->samp.kind == b->samp.kind && a->samp.q == b->samp.q &&
           a->samp.n == b->samp.n && a->samp.m == b->samp.m && a->sens == b->sens &&
           a->noise == b->noise;
}

/* RDP vector of event row k (cached). NULL on allocation failure. */
static const double *rdp_vec(dpdo__rdp_acc *b, int64_t k, const double *row)
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

static double ev_rdp(dpdo__rdp_acc *b, int64_t k, double alpha)
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
static double tot_at(dpdo__rdp_acc *b, const double *ev, int64_t n, int64_t o)
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
    const struct dpdo__rdp_cand *a = x, *c = y;
    return a->lb < c->lb ? -1 : a->lb > c->lb ? 1 : (a->o < c->o ? -1 : a->o > c->o);
}

static int rdp_prepare(dpdo__rdp_acc *b, const double *ev, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        const double *r = ev + k * DPDO_EV_FIELDS;
        if (!(r[DPDO_EV_COUNT] > 0)) continue;
        if (!rdp_vec(b, k, r))
            return dpdo__err(b->msg, DPDO_E_NOMEM, "out of memory in the RDP cache");
    }
    return DPDO_OK;
}

static int rdp_total(dpdo__rdp_acc *b, const double *ev, int64_t n)
{
    int rc = rdp_prepare(b, ev, n);
    if (rc) return rc;
    for (int64_t o = 0; o < b->n_orders; o++)
        b->tot[o] = tot_at(b, ev, n, o);
    return DPDO_OK;
}

/* the conversion at one order, with the delta-only parts cached per delta
 * (same formulas as dpdo__rdp_eps_one) */
static void conv_prepare(dpdo__rdp_acc *b, double delta)
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

static double eps_at(const dpdo__rdp_acc *b, int64_t o, double r)
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
static int64_t n_known(const dpdo__rdp_acc *b, int64_t k)
{
    const double *la = b->memo + k * DPDO__PG_MEMO;
    int64_t c = 0;
    for (int64_t i = 2; i <= b->kmax; i++)
        c += !isnan(la[i]);
    return c;
}

/* per-event bounds of the RDP at every order (count-independent, cached until
 * more integer orders of the event are known): lbr <= value <= ubr */
static void ev_bounds(dpdo__rdp_acc *b, int64_t k)
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
static double eps_bounds(dpdo__rdp_acc *b, const double *ev, int64_t n)
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
static double tot_at_lim(dpdo__rdp_acc *b, const double *ev, int64_t n, int64_t o, double lim)
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

static void rdp_epsilon_convex(dpdo__rdp_acc *b, const double *ev, int64_t n, double *eps,
                               double *order)
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
        struct dpdo__rdp_cand tmp = b->cands[i];
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
int dpdo__rdp_acc_epsilon(dpdo__rdp_acc *b, const double *ev, int64_t n, double delta, double *eps,
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

/* ---- state ---------------------------------------------------------------------- */

void dpdo__rdp_acc_fini(dpdo__rdp_acc *b)
{
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
    memset(b, 0, sizeof *b);
}

int dpdo__rdp_acc_init(dpdo__rdp_acc *b, const dpdo_accountant_options *o, char *msg)
{
    memset(b, 0, sizeof *b);
    int64_t n = o->orders ? o->n_orders : N_DEFAULT_ORDERS;
    b->msg = msg;
    b->conv = o->conversion;
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
    return DPDO_OK;
nomem:
    dpdo__rdp_acc_fini(b);
    return DPDO_E_NOMEM;
}

int dpdo__rdp_acc_delta(dpdo__rdp_acc *b, const double *ev, int64_t n, double eps, double *delta)
{
    int rc = rdp_total(b, ev, n);
    if (rc) return rc;
    *delta = dpdo__rdp_delta(b->orders, b->tot, b->n_orders, eps, b->conv, NULL);
    return DPDO_OK;
}

/* ---- the rdp kind --------------------------------------------------------------- */

typedef struct {
    dpdo__acc_base base;
    dpdo__rdp_acc rdp;
} rdp_state;

static int k_make(dpdo__acc_base **out, const dpdo_accountant_options *o)
{
    rdp_state *s = dpdo__calloc(1, sizeof *s);
    if (!s) return DPDO_E_NOMEM;
    if (dpdo__rdp_acc_init(&s->rdp, o, s->base.msg) != DPDO_OK) {
        dpdo__free(s);
        return DPDO_E_NOMEM;
    }
    *out = &s->base;
    return DPDO_OK;
}

static int k_epsilon(dpdo__acc_base *b, const double *ev, int64_t n, double delta, double *eps,
                     double *order)
{
    return dpdo__rdp_acc_epsilon(&((rdp_state *)b)->rdp, ev, n, delta, eps, order);
}

static int k_delta(dpdo__acc_base *b, const double *ev, int64_t n, double eps, double *delta)
{
    b->last_src = "rdp";
    return dpdo__rdp_acc_delta(&((rdp_state *)b)->rdp, ev, n, eps, delta);
}

static void k_release(dpdo__acc_base *b)
{
    dpdo__rdp_acc_fini(&((rdp_state *)b)->rdp);
    dpdo__free(b);
}

const dpdo__acc_kind dpdo__acc_rdp = {"rdp", k_make, k_epsilon, k_delta, k_release, 0};
