/* SPDX-License-Identifier: BSD-3-Clause */
/* The budget guard (dpdo_accountant_set_budget, dpdo_accountant_would_exceed) and the
 * calibration of sigma and of the number of steps against a target (epsilon, delta), over
 * any accountant's queries (accountant.c). */
#include "accountant_impl.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    dpdo__acc_base *b = dpdo__acc_builtin(a);
    if (b) b->limit = a->budget_eps; /* auto: an RDP figure within the budget settles it */
    int rc = dpdo__acc_query(a, 0, nodes, n_sel, &ev->d, (double)count, a->budget_delta, &e, NULL);
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
    return dpdo__acc_query(a, 0, NULL, -1, &d, steps, delta, e, NULL);
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
    dpdo__acc_base *b = dpdo__acc_builtin(a);
    if (b && b->kind->two_pass_calibration && !b->rdp_only) {
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
