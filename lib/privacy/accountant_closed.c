/* SPDX-License-Identifier: BSD-3-Clause */
/* The closed-form accountants of unsampled compositions: exact (the Gaussian's exact privacy
 * curve, mu-GDP, with the fine lattice Gaussian's shift), zcdp (rho-zCDP) and pure (pure
 * epsilon-DP). auto uses exact's form (accountant_auto.c). */
#include "accountant_impl.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { K_EXACT = 2, K_ZCDP = 3, K_PURE = 4 };

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
static int closed_total(int kind, const double *ev, int64_t n, double *out, double *fine_n,
                        char *msg)
{
    double s = 0.0;
    *fine_n = 0.0;
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
                return dpdo__err(msg, DPDO_E_UNSUPPORTED,
                                 "pure-DP accountant: event %lld is Gaussian (no finite pure "
                                 "epsilon); use rdp, exact or zcdp",
                                 (long long)k);
            dpdo__event_desc d;
            dpdo__event_row_desc(r, &d);
            s += c * dpdo__pure_eps_event(&d);
            continue;
        }
        if (sampled)
            return dpdo__err(msg, DPDO_E_UNSUPPORTED,
                             "%s accountant: event %lld is a %s %s mechanism; only unsampled "
                             "events are supported (use rdp)",
                             kind == K_EXACT ? "exact" : "zcdp", (long long)k,
                             samp_name(r[DPDO_EV_SAMPLING]), mech_name(r[DPDO_EV_MECH]));
        if (kind == K_EXACT) {
            if (r[DPDO_EV_MECH] != DPDO_MECH_GAUSSIAN &&
                r[DPDO_EV_MECH] != DPDO_MECH_DISCRETE_GAUSSIAN_FINE)
                return dpdo__err(msg, DPDO_E_UNSUPPORTED,
                                 "exact accountant: event %lld is a %s mechanism; only "
                                 "(continuous) Gaussian events and the fine-grid discrete "
                                 "Gaussian of secure runs are supported (use rdp or zcdp)",
                                 (long long)k, mech_name(r[DPDO_EV_MECH]));
            if (r[DPDO_EV_MECH] == DPDO_MECH_DISCRETE_GAUSSIAN_FINE) *fine_n += c;
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
double dpdo__acc_exact_eps(double mu, double N, double delta)
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
double dpdo__acc_exact_delta(double mu, double N, double eps)
{
    if (!(N > 0)) return dpdo__gauss_delta(mu, eps);
    double h1 = 0.0, h2 = 0.0, L = log(N) + (eps > 0 ? eps : 0.0) + 60.0;
    dpdo__pld_fine_shift(N, EXACT_FINE_U, EXACT_FINE_U, EXACT_FINE_DTHETA, L, &h1, &h2);
    double d = exp(h1) * dpdo__gauss_delta(mu, eps - h1 - h2) + exp(eps + log(N) - L);
    return d < 1.0 ? d : 1.0;
}

int dpdo__acc_exact_total(const double *ev, int64_t n, double *mu2, double *fine_n, char *msg)
{
    return closed_total(K_EXACT, ev, n, mu2, fine_n, msg);
}

/* ---- the kinds: exact, zcdp, pure ------------------------------------------------ */

typedef struct {
    dpdo__acc_base base;
    int32_t conv;
    double fine_n; /* exact: fine lattice Gaussian releases in the last closed total */
} closed_state;

static int closed_make(dpdo__acc_base **out, const dpdo_accountant_options *o)
{
    closed_state *s = dpdo__calloc(1, sizeof *s);
    if (!s) return DPDO_E_NOMEM;
    s->conv = o->conversion;
    *out = &s->base;
    return DPDO_OK;
}

static int exact_epsilon(dpdo__acc_base *b, const double *ev, int64_t n, double delta, double *eps,
                         double *order)
{
    (void)order;
    closed_state *c = (closed_state *)b;
    double s;
    int rc = closed_total(K_EXACT, ev, n, &s, &c->fine_n, b->msg);
    if (rc) return rc;
    *eps = dpdo__acc_exact_eps(sqrt(s), c->fine_n, delta);
    b->last_lo = c->fine_n > 0 ? 0.0 : *eps; /* exact: the tight value */
    return DPDO_OK;
}

static int exact_delta(dpdo__acc_base *b, const double *ev, int64_t n, double eps, double *delta)
{
    closed_state *c = (closed_state *)b;
    double s;
    int rc = closed_total(K_EXACT, ev, n, &s, &c->fine_n, b->msg);
    if (rc) return rc;
    *delta = dpdo__acc_exact_delta(sqrt(s), c->fine_n, eps);
    return DPDO_OK;
}

static int zcdp_epsilon(dpdo__acc_base *b, const double *ev, int64_t n, double delta, double *eps,
                        double *order)
{
    (void)order;
    closed_state *c = (closed_state *)b;
    double rho;
    int rc = closed_total(K_ZCDP, ev, n, &rho, &c->fine_n, b->msg);
    if (rc) return rc;
    *eps = dpdo__zcdp_eps(rho, delta, c->conv);
    return DPDO_OK;
}

static int zcdp_delta(dpdo__acc_base *b, const double *ev, int64_t n, double eps, double *delta)
{
    closed_state *c = (closed_state *)b;
    double rho;
    int rc = closed_total(K_ZCDP, ev, n, &rho, &c->fine_n, b->msg);
    if (rc) return rc;
    *delta = dpdo__zcdp_delta(rho, eps, c->conv);
    return DPDO_OK;
}

static int pure_epsilon(dpdo__acc_base *b, const double *ev, int64_t n, double delta, double *eps,
                        double *order)
{
    (void)delta;
    (void)order;
    closed_state *c = (closed_state *)b;
    return closed_total(K_PURE, ev, n, eps, &c->fine_n, b->msg);
}

static int pure_delta(dpdo__acc_base *b, const double *ev, int64_t n, double eps, double *delta)
{
    closed_state *c = (closed_state *)b;
    double s;
    int rc = closed_total(K_PURE, ev, n, &s, &c->fine_n, b->msg);
    if (rc) return rc;
    *delta = eps >= s ? 0.0 : 1.0;
    return DPDO_OK;
}

static void closed_release(dpdo__acc_base *b)
{
    dpdo__free(b);
}

const dpdo__acc_kind dpdo__acc_exact = {"exact",     closed_make,    exact_epsilon,
                                        exact_delta, closed_release, 0};
const dpdo__acc_kind dpdo__acc_zcdp = {"zcdp",     closed_make,    zcdp_epsilon,
                                       zcdp_delta, closed_release, 0};
const dpdo__acc_kind dpdo__acc_pure = {"pure",     closed_make,    pure_epsilon,
                                       pure_delta, closed_release, 0};
