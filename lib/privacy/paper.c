/* SPDX-License-Identifier: BSD-3-Clause */
/* The papers' own privacy bounds, coded exactly as the papers state them
 * (the papers' theorems; derivations they lack in docs/derivations.md), with every
 * precondition of the theorem checked and reported. These are formula
 * objects: they take the theorem's parameters, not events, and they are
 * labelled "paper bound" wherever they are printed. The rigorous numbers come
 * from the accountants (accountant.c). */
#include "privacy_impl.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAXP 16
#define MAXO 32

struct dpdo_paper_type {
    const char *name, *title;
    const char *const *params;
    const double *defaults; /* NaN = required or "not given" */
    int n_params;
    const char *const *outputs;
    int n_outputs;
    int (*eval)(dpdo_paper *p);
};

struct dpdo_paper {
    uint32_t magic; /* DPDO__MAGIC_* while alive, 0 after destroy (core_impl.h) */
    const dpdo_paper_type *t;
    double par[MAXP];
    double out[MAXO];
    int evaluated, valid;
    char viol[1024];
    char errmsg[DPDO__ERRMSG_LEN];
};

static void violate(dpdo_paper *p, const char *fmt, ...) DPDO__PRINTF(2, 3);
#include <stdarg.h>
static void violate(dpdo_paper *p, const char *fmt, ...)
{
    size_t n = strlen(p->viol);
    if (n + 3 >= sizeof p->viol) return;
    if (n) {
        strcpy(p->viol + n, "; ");
        n += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->viol + n, sizeof p->viol - n, fmt, ap);
    va_end(ap);
    p->valid = 0;
}

static int need(dpdo_paper *p, int i)
{
    if (isnan(p->par[i]))
        return dpdo__err(p->errmsg, DPDO_E_INVAL, "%s: parameter '%s' is required", p->t->name,
                         p->t->params[i]);
    return DPDO_OK;
}

static int positive(dpdo_paper *p, int i)
{
    int rc = need(p, i);
    if (rc) return rc;
    if (!(p->par[i] > 0))
        return dpdo__err(p->errmsg, DPDO_E_INVAL, "%s: parameter '%s' = %g must be > 0", p->t->name,
                         p->t->params[i], p->par[i]);
    return DPDO_OK;
}

#define TOL                                                                                        \
    (1.0 - 1e-12) /* relative tolerance for ">= minimum" checks (docs/derivations.md, 1)           \
                   */

/* ---- DP-DDA Theorem 1 (the DP-DDA paper) ------------------------------------------- */

enum { D_EPS, D_DELTA0, D_B, D_N, D_Q, D_L, D_T, D_C, D_SIGMA, D_DPRIME, D_EXACT, D_TRUN };
static const char *const dda_params[] = {"eps", "delta0", "b",     "n",         "q",         "L",
                                         "T",   "C",      "sigma", "delta_hat", "exact_amp", "t"};
static const double dda_defaults[] = {NAN, NAN, NAN, NAN, NAN, 1.0, NAN, 32.0, NAN, 0.0, 0.0, NAN};
enum {
    DO_SIGMA_THM,
    DO_TMIN,
    DO_SIGMA,
    DO_EPS_T,
    DO_EPS_T_AMP,
    DO_S,
    DO_DPRIME,
    DO_EPS_TILDE,
    DO_DELTA_TILDE,
    DO_DELTA_PRINTED,
    DO_KOV1,
    DO_KOV2,
    DO_REMARK31,
    DO_CLAIM,
    DO_VALID
};
static const char *const dda_outputs[] = {
    "sigma_thm", "T_min",       "sigma_used",   "eps_t",       "eps_t_amp",
    "S",         "delta_prime", "eps_tilde",    "delta_tilde", "delta_tilde_printed",
    "eps_kov1",  "eps_kov2",    "eps_remark31", "claim_holds", "valid"};

static int eval_dda(dpdo_paper *p)
{
    const double *x = p->par;
    double *o = p->out;
    int rc;
    if ((rc = positive(p, D_EPS)) || (rc = positive(p, D_DELTA0)) || (rc = positive(p, D_B)) ||
        (rc = positive(p, D_N)) || (rc = positive(p, D_Q)) || (rc = positive(p, D_L)) ||
        (rc = positive(p, D_T)) || (rc = positive(p, D_C)))
        return rc;
    if (!isnan(x[D_SIGMA]) && !(x[D_SIGMA] > 0))
        return dpdo__err(p->errmsg, DPDO_E_INVAL, "dp-dda-thm1: sigma must be > 0");
    if (x[D_DPRIME] < 0 || x[D_DPRIME] > 1)
        return dpdo__err(p->errmsg, DPDO_E_INVAL,
                         "dp-dda-thm1: delta_hat must be 0 (paper choice: sqrt(S)) or in (0,1]");
    double eps = x[D_EPS], d0 = x[D_DELTA0], b = x[D_B], n = x[D_N], q = x[D_Q], L = x[D_L],
           T = x[D_T];
    double iota = b / n;
    /* evaluation order as in docs/derivations.md, 1 (matters at the last bit) */
    o[DO_SIGMA_THM] = sqrt(x[D_C] * iota * iota * L * L * T * log(2.0 / d0) / (q * q * eps * eps));
    o[DO_TMIN] = 5.0 * q * q * eps * eps / (4.0 * iota * iota);
    double sigma = isnan(x[D_SIGMA]) ? o[DO_SIGMA_THM] : x[D_SIGMA];
    o[DO_SIGMA] = sigma;
    double et = 2.0 * L * sqrt(2.0 * log(2.0 / d0)) / sigma; /* Lemma 4.1 with Delta = 2L */
    o[DO_EPS_T] = et;
    double ea = x[D_EXACT] != 0 ? log1p(iota / q * expm1(et)) : 2.0 * iota * et / q; /* Lemma 4.2 */
    o[DO_EPS_T_AMP] = ea;
    double S = T * ea * ea;
    o[DO_S] = S;
    double dp = x[D_DPRIME] > 0 ? x[D_DPRIME] : sqrt(S);
    o[DO_DPRIME] = dp;
    o[DO_EPS_TILDE] = sqrt(2.0 * S * log(M_E + sqrt(S) / dp)) + S; /* Lemma 4.3 */
    o[DO_DELTA_TILDE] = 1.0 - (1.0 - dp) * exp(T * log1p(-iota * d0 / q));
    o[DO_DELTA_PRINTED] = 1.0 - (1.0 - dp) * exp(T * log1p(-iota * d0));
    double tanhsum = T * ea * tanh(ea / 2.0);
    o[DO_KOV1] = tanhsum + sqrt(2.0 * S * log(M_E + sqrt(S) / dp));
    o[DO_KOV2] = tanhsum + sqrt(2.0 * S * log(1.0 / dp));
    double t = isnan(x[D_TRUN]) ? T : x[D_TRUN];
    o[DO_REMARK31] = sqrt(3.0 * t / (5.0 * T)) * eps + t / (5.0 * T) * eps * eps;
    o[DO_CLAIM] = o[DO_EPS_TILDE] <= eps;
    /* preconditions of Theorem 1 and of the lemmas its proof uses */
    if (!(eps <= 1)) violate(p, "eps = %g is outside (0, 1]", eps);
    if (!(d0 <= 1)) violate(p, "delta0 = %g is outside (0, 1]", d0);
    if (b != floor(b) || n != floor(n) || b < 1 || b > n)
        violate(p, "b = %g, n = %g: need integers 1 <= b <= n", b, n);
    if (!(q >= 1) || q != floor(q)) violate(p, "q = %g must be an integer >= 1", q);
    if (!(T >= o[DO_TMIN] * TOL))
        violate(p, "T = %.10g is below the theorem's minimum T_min = %.10g (T1b)", T, o[DO_TMIN]);
    if (!isnan(x[D_SIGMA]) && !(sigma >= o[DO_SIGMA_THM] * TOL))
        violate(p, "sigma = %g is below the theorem's sigma = %g (T1a)", sigma, o[DO_SIGMA_THM]);
    if (!(ea <= 0.9)) violate(p, "per-round eps'_t = %g exceeds 0.9 (Lemma 4.3)", ea);
    if (x[D_EXACT] == 0 && !(et <= 1.2564))
        violate(p, "eps_t = %g > 1.256: e^x - 1 <= 2x fails (linearised Lemma 4.2)", et);
    if (!(et < 1)) violate(p, "eps_t = %g >= 1: Gaussian mechanism lemma 4.1 needs eps_t < 1", et);
    /* relative tolerance: at eps = 1 with constant 32, S = eps^2 = 1 and sqrt(S) can round above 1
     */
    if (!(dp > 0 && dp <= 1.0 + 1e-12))
        violate(p, "delta' = %.10g is outside (0, 1] (Lemma 4.3)", dp);
    return DPDO_OK;
}

/* ---- DO-ADP Theorem 1 (the DO-ADP paper) ---------------------------------------------- */

enum { A_EPS, A_DELTA0, A_P, A_K, A_D, A_Q, A_G, A_T, A_SIGMA, A_DHAT, A_EXACT, A_OBS, A_BETA };
static const char *const adp_params[] = {"eps",       "delta0",   "p",        "k",     "d",
                                         "q",         "G",        "T",        "sigma", "delta_hat",
                                         "exact_amp", "observed", "beta_tail"};
static const double adp_defaults[] = {NAN, NAN, NAN, NAN, NAN, NAN, 1.0,
                                      NAN, NAN, 0.0, 0.0, 0.0, 1e-6};
enum {
    AO_KD,
    AO_SIG2MIN,
    AO_SIGPAPER,
    AO_SIGSAFE,
    AO_TMIN,
    AO_EPSMAX,
    AO_SIGMA,
    AO_EPS_T,
    AO_EPS_T_AMP,
    AO_S,
    AO_DPRIME,
    AO_EPS_TILDE,
    AO_DT_PAPER,
    AO_DT_LEMMA4,
    AO_TCOND,
    AO_DOK,
    AO_NSTAR,
    AO_NSTAR_B,
    AO_SIG2CONS,
    AO_SENS,
    AO_CLAIM,
    AO_VALID
};
static const char *const adp_outputs[] = {"kd",
                                          "sigma2_min",
                                          "sigma_paper",
                                          "sigma_safe",
                                          "T_min",
                                          "eps_max",
                                          "sigma_used",
                                          "eps_t",
                                          "eps_t_amp",
                                          "S",
                                          "delta_prime",
                                          "eps_tilde",
                                          "delta_tilde_paper",
                                          "delta_tilde_lemma4",
                                          "t_cond_ok",
                                          "delta_ok",
                                          "N_star",
                                          "N_star_bernstein",
                                          "sigma2_conservative",
                                          "sensitivity",
                                          "claim_holds",
                                          "valid"};

/* smallest N with P(Binomial(T, p) > N) <= beta, exact tail summed in log space */
double dpdo__binom_quantile(double T, double p, double beta)
{
    if (p >= 1.0) return T;
    double lb = log(beta), lp = log(p), l1p = log1p(-p), lgT = dpdo__lgamma(T + 1.0);
    double tail = -INFINITY; /* P(X > N) for the current N */
    /* Start where the upper tail is negligible: by Bernstein's inequality
     * P(X - pT >= t) <= exp(-t^2 / (2 (T p (1 - p) + t / 3))) <= beta e^-60 for the t below, so the
     * terms above N0 cannot move the answer; the scan is then O(sqrt(T)) instead of O(T). */
    double L = -lb + 60.0, v = T * p * (1.0 - p);
    double t = L / 3.0 + sqrt(L * L / 9.0 + 2.0 * v * L);
    double N0 = floor(T * p + t) + 1.0;
    if (!(N0 < T)) N0 = T;
    for (double N = N0; N > 0; N--) {
        double lpmf =
            lgT - dpdo__lgamma(N + 1.0) - dpdo__lgamma(T - N + 1.0) + N * lp + (T - N) * l1p;
        double nt = dpdo__log_add(tail, lpmf); /* = P(X > N - 1) */
        if (nt > lb) return N;
        tail = nt;
    }
    return 0;
}

static int eval_adp(dpdo_paper *p)
{
    const double *x = p->par;
    double *o = p->out;
    int rc;
    if ((rc = positive(p, A_EPS)) || (rc = positive(p, A_DELTA0)) || (rc = positive(p, A_P)) ||
        (rc = positive(p, A_K)) || (rc = positive(p, A_D)) || (rc = positive(p, A_Q)) ||
        (rc = positive(p, A_G)) || (rc = positive(p, A_T)))
        return rc;
    if (!isnan(x[A_SIGMA]) && !(x[A_SIGMA] > 0))
        return dpdo__err(p->errmsg, DPDO_E_INVAL, "do-adp-thm1: sigma must be > 0");
    if (x[A_DHAT] < 0)
        return dpdo__err(p->errmsg, DPDO_E_INVAL,
                         "do-adp-thm1: delta_hat must be >= 0 (0 = paper choice)");
    if (!(x[A_BETA] > 0 && x[A_BETA] < 1))
        return dpdo__err(p->errmsg, DPDO_E_INVAL, "do-adp-thm1: beta_tail must be in (0,1)");
    if (x[A_P] > 1)
        return dpdo__err(p->errmsg, DPDO_E_INVAL, "do-adp-thm1: p = %g is not a probability",
                         x[A_P]);
    if (x[A_T] > 1e9)
        return dpdo__err(p->errmsg, DPDO_E_INVAL, "do-adp-thm1: T = %g too large (max 1e9)",
                         x[A_T]);
    double eps = x[A_EPS], d0 = x[A_DELTA0], pp = x[A_P], q = x[A_Q], G = x[A_G], T = x[A_T];
    double kd = x[A_K] / x[A_D];
    o[AO_KD] = kd;
    o[AO_SIG2MIN] =
        160.0 * kd * pp * pp * T * log(1.25 / d0) * G * G / (q * q * eps * eps); /* (7) */
    o[AO_SIGPAPER] = sqrt(o[AO_SIG2MIN]);
    double floor2 = 40.0 * kd * log(1.25 / d0) * G * G;
    o[AO_SIGSAFE] = sqrt(o[AO_SIG2MIN] > floor2 ? o[AO_SIG2MIN] : floor2);
    o[AO_TMIN] = q * q * eps * eps / (4.0 * pp * pp);
    o[AO_EPSMAX] = 2.0 * pp * sqrt(T) / q;
    o[AO_SENS] = 2.0 * G * sqrt(kd); /* (6) */
    double lt = log(1.0 / x[A_BETA]);
    o[AO_NSTAR] = dpdo__binom_quantile(T, pp, x[A_BETA]);
    o[AO_NSTAR_B] = ceil(pp * T + sqrt(2.0 * pp * (1.0 - pp) * T * lt) + 2.0 / 3.0 * lt);
    o[AO_SIG2CONS] = 160.0 * o[AO_NSTAR] * log(1.25 / d0) * G * G / (q * q * eps * eps);
    double sigma = isnan(x[A_SIGMA]) ? o[AO_SIGPAPER] : x[A_SIGMA];
    o[AO_SIGMA] = sigma;
    /* observed-activation mode (docs/derivations.md, 2): p := 1, T := N_star, delta += beta_tail */
    int obs = x[A_OBS] != 0;
    double pe = obs ? 1.0 : pp, Te = obs ? o[AO_NSTAR] : T;
    double et = 2.0 * sqrt(2.0 * kd * log(1.25 / d0)) * G / sigma;
    double ea = x[A_EXACT] != 0 ? log1p(pe * expm1(et) / q) : 2.0 * pe * et / q;
    double S = Te * ea * ea;
    double dp = x[A_DHAT] > 0 ? x[A_DHAT] : sqrt(S);
    o[AO_EPS_T] = et;
    o[AO_EPS_T_AMP] = ea;
    o[AO_S] = S;
    o[AO_DPRIME] = dp;
    o[AO_EPS_TILDE] = sqrt(2.0 * S * log(M_E + sqrt(S) / dp)) + S;
    o[AO_DT_PAPER] = 1.0 - (1.0 - dp) * exp(Te * log1p(-pe * d0));
    o[AO_DT_LEMMA4] = 1.0 - (1.0 - dp) * exp(Te * log1p(-pe * d0 / q)) + (obs ? x[A_BETA] : 0.0);
    o[AO_TCOND] = (et * et <= 0.2 + 1e-12) && (ea <= 0.9);
    o[AO_DOK] =
        dp > 0 && dp <= 1.0 + 1e-12; /* Lemma 5 needs delta_hat in (0,1]; rounding tolerance */
    o[AO_CLAIM] = o[AO_EPS_TILDE] <= eps;
    if (!(eps <= 1)) violate(p, "eps = %g is outside (0, 1]", eps);
    if (!(d0 <= 1)) violate(p, "delta0 = %g is outside (0, 1]", d0);
    if (!(pp >= 0.5)) violate(p, "p = %g is below 1/2", pp);
    if (!(x[A_K] >= 1 && x[A_K] <= x[A_D]))
        violate(p, "k = %g, d = %g: need 1 <= k <= d", x[A_K], x[A_D]);
    if (!(T >= o[AO_TMIN] * TOL))
        violate(p, "T = %.10g is below the theorem's minimum T_min = %.10g", T, o[AO_TMIN]);
    if (!isnan(x[A_SIGMA]) && !(sigma >= o[AO_SIGPAPER] * TOL))
        violate(p, "sigma = %g is below the theorem's sigma = %g (7)", sigma, o[AO_SIGPAPER]);
    if (!(et * et <= 0.2 + 1e-12)) violate(p, "eps_t^2 = %g exceeds 1/5 (8)", et * et);
    if (!(ea <= 0.9)) violate(p, "per-round eps'_t = %g exceeds 0.9 (Lemma 5)", ea);
    if (!o[AO_DOK])
        violate(
            p, "delta' = %g is outside (0, 1] (Lemma 5): eps_tilde and delta_tilde are meaningless",
            dp);
    return DPDO_OK;
}

/* ---- DP-WOR-SGD Theorem 2 (the DP-WOR-SGD paper, Lemma 4) ------------------------------ */

enum { W_EPS, W_DELTA, W_L, W_B, W_ETA, W_MU, W_PASSES, W_MODELS, W_ALLOW };
static const char *const wor_params[] = {"eps",    "delta",        "L", "b", "eta", "mu", "passes",
                                         "models", "allow_eps_gt1"};
static const double wor_defaults[] = {NAN, NAN, 1.0, NAN, NAN, NAN, 1.0, 1.0, 0.0};
enum { WO_C, WO_SENS, WO_SIGMODEL, WO_SIGGRAD, WO_EPSTOT, WO_DELTOT, WO_EPSRIG, WO_VALID };
static const char *const wor_outputs[] = {"c",         "sensitivity", "sigma_model",  "sigma_grad",
                                          "eps_total", "delta_total", "eps_rigorous", "valid"};

static int eval_wor(dpdo_paper *p)
{
    const double *x = p->par;
    double *o = p->out;
    int rc;
    if ((rc = positive(p, W_EPS)) || (rc = positive(p, W_DELTA)) || (rc = positive(p, W_L)) ||
        (rc = positive(p, W_B)) || (rc = positive(p, W_ETA)) || (rc = positive(p, W_PASSES)) ||
        (rc = positive(p, W_MODELS)))
        return rc;
    if (x[W_DELTA] >= 1)
        return dpdo__err(p->errmsg, DPDO_E_INVAL, "dp-wor-sgd-thm2: delta = %g must be in (0, 1)",
                         x[W_DELTA]);
    if (x[W_EPS] > 1 && x[W_ALLOW] == 0)
        return dpdo__err(p->errmsg, DPDO_E_INVAL,
                         "dp-wor-sgd-thm2: eps = %g > 1 is outside Thm 1's range (set "
                         "allow_eps_gt1 = 1 to override)",
                         x[W_EPS]);
    double eps = x[W_EPS], delta = x[W_DELTA];
    o[WO_C] = sqrt(2.0 * log(1.25 / delta));
    o[WO_SENS] = 2.0 * x[W_ETA] * x[W_L] / x[W_B]; /* Lemma 4 (8) */
    o[WO_SIGMODEL] = o[WO_C] * o[WO_SENS] / eps;
    o[WO_SIGGRAD] = o[WO_SIGMODEL] / x[W_ETA];
    double k = x[W_PASSES] * x[W_MODELS];
    o[WO_EPSTOT] =
        k * eps; /* basic composition over passes and one-vs-all models (docs/derivations.md, 3) */
    o[WO_DELTOT] = k * delta;
    /* rigorous: each sample enters one release per pass and model; the exact
     * analytic-Gaussian epsilon of those k releases at delta_total */
    double mu = sqrt(k) * o[WO_SENS] / o[WO_SIGMODEL];
    o[WO_EPSRIG] = o[WO_DELTOT] < 1 ? dpdo__gauss_eps(mu, o[WO_DELTOT]) : 0.0;
    if (eps >= 1)
        violate(p,
                eps == 1 ? "eps = 1 is at the edge of Thm 1's stated range eps in (0, 1)"
                         : "eps = %g is outside Thm 1's range (0, 1) (override set)",
                eps);
    if (!isnan(x[W_MU]) && !(x[W_ETA] <= 1.0 / (2.0 * x[W_MU])))
        violate(p, "eta = %g exceeds 1/(2 mu) = %g (Lemma 4)", x[W_ETA], 1.0 / (2.0 * x[W_MU]));
    if (x[W_B] != floor(x[W_B])) violate(p, "b = %g is not an integer", x[W_B]);
    if (o[WO_DELTOT] >= 1) violate(p, "delta_total = %g >= 1: no guarantee", o[WO_DELTOT]);
    return DPDO_OK;
}

/* ---- Fed-PLT Proposition 4 (the Fed-PLT paper, Sec. VI) -------------------------------- */

enum { F_L, F_LAM, F_TAU, F_Q, F_GAMMA, F_K, F_NE, F_ALPHA, F_DELTA, F_LHI, F_RHO, F_EPS };
static const char *const fed_params[] = {"L",  "lambda_lo", "tau",   "q",         "gamma", "K",
                                         "Ne", "alpha",     "delta", "lambda_hi", "rho",   "eps"};
static const double fed_defaults[] = {NAN, NAN, NAN, NAN, NAN, NAN, NAN, 10.0, NAN, NAN, NAN, NAN};
enum {
    FO_T,
    FO_EPSINF,
    FO_RDP,
    FO_ADP,
    FO_A,
    FO_ASTAR,
    FO_EPSSTAR,
    FO_TAU2,
    FO_NAIVE_RDP,
    FO_NAIVE_A,
    FO_NAIVE_EPS,
    FO_NAIVE_EXACT,
    FO_ROUND,
    FO_VALID
};
static const char *const fed_outputs[] = {"T",
                                          "eps_inf",
                                          "rdp",
                                          "adp_at_alpha",
                                          "A",
                                          "alpha_star",
                                          "eps_star",
                                          "tau2_calibrated",
                                          "naive_rdp",
                                          "naive_A",
                                          "naive_eps_star",
                                          "naive_eps_exact",
                                          "transcript_round",
                                          "valid"};

static int eval_fed(dpdo_paper *p)
{
    const double *x = p->par;
    double *o = p->out;
    int rc;
    if ((rc = positive(p, F_L)) || (rc = positive(p, F_LAM)) || (rc = positive(p, F_TAU)) ||
        (rc = positive(p, F_Q)) || (rc = positive(p, F_GAMMA)) || (rc = need(p, F_K)) ||
        (rc = need(p, F_NE)))
        return rc;
    if (!(x[F_K] >= 0) || !(x[F_NE] >= 0))
        return dpdo__err(p->errmsg, DPDO_E_INVAL, "fed-plt-prop4: K and Ne must be >= 0");
    if (!(x[F_ALPHA] > 1))
        return dpdo__err(p->errmsg, DPDO_E_INVAL, "fed-plt-prop4: alpha must be > 1");
    if (!isnan(x[F_DELTA]) && !(x[F_DELTA] > 0 && x[F_DELTA] < 1))
        return dpdo__err(p->errmsg, DPDO_E_INVAL, "fed-plt-prop4: delta must be in (0, 1)");
    double L = x[F_L], lam = x[F_LAM], tau = x[F_TAU], q = x[F_Q], g = x[F_GAMMA], al = x[F_ALPHA];
    double T = x[F_K] * x[F_NE];
    double a = lam * g / 2.0;
    o[FO_T] = T;
    o[FO_EPSINF] = al * L * L / (lam * tau * tau * q * q);
    o[FO_RDP] = o[FO_EPSINF] * -expm1(-a * T); /* Prop. 4 */
    o[FO_A] = o[FO_RDP] / al;
    o[FO_NAIVE_A] = g * L * L * T /
                    (4.0 * tau * tau * q * q); /* Gaussian composition (docs/derivations.md, 4) */
    o[FO_NAIVE_RDP] = al * o[FO_NAIVE_A];
    double ne = x[F_NE];
    double r1 = al * g * L * L * ne / (4.0 * tau * tau * q * q),
           r2 = o[FO_EPSINF] * -expm1(-a * ne);
    o[FO_ROUND] = r1 < r2 ? r1 : r2;
    for (int i = FO_ADP; i <= FO_NAIVE_EXACT; i++)
        if (i != FO_A && i != FO_NAIVE_RDP && i != FO_NAIVE_A) o[i] = NAN;
    if (!isnan(x[F_DELTA])) {
        double l = log(1.0 / x[F_DELTA]);
        o[FO_ADP] = o[FO_RDP] + l / (al - 1.0); /* Lemma 5 */
        o[FO_ASTAR] = o[FO_A] > 0 ? 1.0 + sqrt(l / o[FO_A]) : INFINITY;
        o[FO_EPSSTAR] = o[FO_A] + 2.0 * sqrt(o[FO_A] * l);
        o[FO_NAIVE_EPS] = o[FO_NAIVE_A] + 2.0 * sqrt(o[FO_NAIVE_A] * l);
        /* the same Gaussian composition, exactly: mu = L sqrt(T gamma / 2) / (q tau) */
        o[FO_NAIVE_EXACT] = dpdo__gauss_eps(L * sqrt(T * g / 2.0) / (q * tau), x[F_DELTA]);
        if (!isnan(x[F_EPS])) {
            if (!(x[F_EPS] > 0))
                return dpdo__err(p->errmsg, DPDO_E_INVAL, "fed-plt-prop4: eps must be > 0");
            double r = sqrt(l + x[F_EPS]) - sqrt(l);
            o[FO_TAU2] = L * L * -expm1(-a * T) /
                         (lam * q * q * r * r); /* the inverse (docs/derivations.md, 4) */
        }
    }
    if (!isnan(x[F_LHI]) && !isnan(x[F_RHO])) {
        double beta = x[F_LHI] + 1.0 / x[F_RHO];
        if (!(g < 2.0 / beta))
            violate(p, "gamma = %g >= 2/(lambda_hi + 1/rho) = %g (Prop. 4)", g, 2.0 / beta);
        else if (!(g <=
                   1.0 / beta * (1.0 + 1e-12))) /* the DP preset gamma = 1/beta itself is allowed */
            violate(p,
                    "gamma = %g >= 1/(lambda_hi + 1/rho) = %g: the step-size hypothesis of [23, "
                    "Thm 2] is unverified (docs/derivations.md)",
                    g, 1.0 / beta);
    } else {
        violate(p,
                "lambda_hi and rho not given: the step-size condition of Prop. 4 was not checked");
    }
    if (!(lam > 0)) violate(p, "lambda_lo must be > 0 (strong convexity)");
    return DPDO_OK;
}

static const dpdo_paper_type PAPERS[] = {
    {"dp-dda-thm1",
     "DP-DDA (Liu, Johansson, Shi), Theorem 1: noise rule (T1a), horizon (T1b), "
     "advanced-composition accountant",
     dda_params, dda_defaults, 12, dda_outputs, 15, eval_dda},
    {"do-adp-thm1",
     "DO-ADP (Huo et al.), Theorem 1: noise rule (7), T-condition, Lemma 4/5 accountant, "
     "observed-activation mode",
     adp_params, adp_defaults, 13, adp_outputs, 22, eval_adp},
    {"dp-wor-sgd-thm2",
     "DP-WOR-SGD (Jin, He, Dai), Theorem 2 with Lemma 4 sensitivity; per-pass (eps, delta)",
     wor_params, wor_defaults, 9, wor_outputs, 8, eval_wor},
    {"fed-plt-prop4",
     "Fed-PLT (Bastianello, Liu, Johansson), Proposition 4 (claimed final-model RDP; proof has "
     "gaps)",
     fed_params, fed_defaults, 12, fed_outputs, 14, eval_fed},
};
#define N_PAPERS ((int)(sizeof PAPERS / sizeof PAPERS[0]))

const dpdo_paper_type *dpdo_paper_type_find(const char *name)
{
    if (!name) return NULL;
    for (int i = 0; i < N_PAPERS; i++)
        if (strcmp(PAPERS[i].name, name) == 0) return &PAPERS[i];
    return NULL;
}

const dpdo_paper_type *dpdo_paper_type_next(const dpdo_paper_type *prev)
{
    if (!prev) return &PAPERS[0];
    for (int i = 0; i + 1 < N_PAPERS; i++)
        if (prev == &PAPERS[i]) return &PAPERS[i + 1];
    return NULL;
}

const char *dpdo_paper_type_name(const dpdo_paper_type *t)
{
    return t ? t->name : "";
}
const char *dpdo_paper_type_title(const dpdo_paper_type *t)
{
    return t ? t->title : "";
}
const char *dpdo_paper_type_param(const dpdo_paper_type *t, int i)
{
    return t && i >= 0 && i < t->n_params ? t->params[i] : NULL;
}
const char *dpdo_paper_type_output(const dpdo_paper_type *t, int i)
{
    return t && i >= 0 && i < t->n_outputs ? t->outputs[i] : NULL;
}

int dpdo_paper_create(dpdo_paper **out, const dpdo_paper_type *type)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    int ok = 0;
    for (int i = 0; i < N_PAPERS; i++)
        ok |= type == &PAPERS[i];
    if (!ok) return DPDO_E_INVAL;
    dpdo_paper *p = dpdo__calloc(1, sizeof *p);
    if (!p) return DPDO_E_NOMEM;
    p->magic = DPDO__MAGIC_PAPER;
    p->t = type;
    for (int i = 0; i < type->n_params; i++)
        p->par[i] = type->defaults[i];
    p->valid = -1;
    *out = p;
    return DPDO_OK;
}

void dpdo_paper_destroy(dpdo_paper *p)
{
    if (!p || !DPDO__LIVE(p, DPDO__MAGIC_PAPER)) return; /* NULL or destroyed */
    DPDO__KILL(p);
    dpdo__free(p);
}
const char *dpdo_paper_errmsg(const dpdo_paper *p)
{
    return p ? p->errmsg : DPDO__NULL_TEXT("dpdo_paper_errmsg", "p");
}
int dpdo_paper_valid(const dpdo_paper *p)
{
    return p && p->evaluated ? p->valid : -1;
}
const char *dpdo_paper_violations(const dpdo_paper *p)
{
    return p ? p->viol : "";
}

static int find_name(const char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0) return i;
    return -1;
}

int dpdo_paper_set(dpdo_paper *p, const char *name, double value)
{
    if (!p) return DPDO_E_INVAL;
    if (!name) return dpdo__err(p->errmsg, DPDO_E_INVAL, "name is NULL");
    int i = find_name(p->t->params, p->t->n_params, name);
    if (i < 0)
        return dpdo__err(p->errmsg, DPDO_E_INVAL, "%s has no parameter '%s'", p->t->name, name);
    if (!isfinite(value))
        return dpdo__err(p->errmsg, DPDO_E_INVAL, "%s: parameter '%s' = %g is not finite",
                         p->t->name, name, value);
    p->par[i] = value;
    p->evaluated = 0;
    p->valid = -1;
    dpdo__err_clear(p->errmsg);
    return DPDO_OK;
}

int dpdo_paper_evaluate(dpdo_paper *p)
{
    if (!p) return DPDO_E_INVAL;
    p->evaluated = 0;
    p->valid = 1;
    p->viol[0] = '\0';
    for (int i = 0; i < MAXO; i++)
        p->out[i] = NAN;
    int rc = p->t->eval(p);
    if (rc) {
        p->valid = -1;
        p->viol[0] = '\0';
        return rc;
    }
    p->out[p->t->n_outputs - 1] = p->valid; /* "valid" is always the last output */
    p->evaluated = 1;
    dpdo__err_clear(p->errmsg);
    return DPDO_OK;
}

int dpdo_paper_get(const dpdo_paper *p, const char *name, double *value)
{
    if (!p) return DPDO_E_INVAL;
    dpdo_paper *pm = (dpdo_paper *)p;
    if (!name || !value)
        return dpdo__err(pm->errmsg, DPDO_E_INVAL, "name and value must not be NULL");
    int i = find_name(p->t->params, p->t->n_params, name);
    if (i >= 0) {
        *value = p->par[i];
        return DPDO_OK;
    }
    i = find_name(p->t->outputs, p->t->n_outputs, name);
    if (i < 0)
        return dpdo__err(pm->errmsg, DPDO_E_INVAL, "%s has no output or parameter '%s'", p->t->name,
                         name);
    if (!p->evaluated) return dpdo__err(pm->errmsg, DPDO_E_STATE, "call dpdo_paper_evaluate first");
    *value = p->out[i];
    return DPDO_OK;
}
