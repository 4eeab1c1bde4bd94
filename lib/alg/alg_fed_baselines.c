/* SPDX-License-Identifier: BSD-3-Clause */
/* The five Fed-PLT baselines (docs/design/notes/fed-plt.md §7) on the engine:
 * FedPD, FedLin, TAMUNA, LED (federated star) and 5GCS. All solve
 * min_x sum_i f_i(x) with h = 0, are non-private (DPDO_NOISE_NONE only) and
 * run full-shard gradients of f_i (the node's mean loss). Sources, the
 * equations and what was verified against the original papers/code are in
 * docs/algorithms/fed-baselines.md.
 *
 * Stages (who, message pattern) per round:
 *   fedpd   agents: N_e local steps, lambda, centre candidate (GATHER);
 *           coordinator: average, broadcast the centre (BCAST)
 *   fedlin  coordinator: x^ (BCAST); agents: g_i = grad f_i(x^) (GATHER);
 *           coordinator: gbar (BCAST); agents: N_e corrected steps (GATHER),
 *           the coordinator averages in combine
 *   tamuna  [cohort c < N: coordinator: xbar (BCAST)]; cohort: L_r steps
 *           (GATHER); coordinator: xbar' (BCAST), cohort updates h_i
 *   led     agents: N_e steps (GATHER); coordinator: average (BCAST)
 *   5gcs    coordinator: x^ (BCAST); cohort: N_e inner steps on psi_i, upload
 *           Delta u_i (GATHER); coordinator: v, x (no message) */
#include "../engine/engine_impl.h"
#include "../model/model_impl.h"
#include "../rng/rng_impl.h"
#include "../solver/solver_impl.h"
#include "dpdo/solver.h"
#include "fed_impl.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { M_FEDPD = 0, M_FEDLIN, M_TAMUNA, M_LED, M_5GCS };

typedef struct fb {
    int method;
    /* blocks */
    int bx, b2, bc, bv; /* x (agents), second per-agent state, coordinator state, 5gcs v */
    /* scratch */
    int sa, sb, sc; /* n x d each */
    int sd, se, sf; /* d each */
    /* resolved parameters */
    int64_t ne, m;
    double step, eta, beta, tau, mu, lstep, p, lo, hi;
    int use_solver; /* 5gcs: a user-set solver runs the inner problem */
    int64_t L;      /* tamuna: local steps this round */
} fb;

#define ROW(e, b, i) ((e)->blk[(b)].cur + (size_t)(i) * (size_t)(e)->d)
#define CROW(e, b) ((e)->blk[(b)].cur)
#define SROW(e, k, i) ((double *)(e)->scr[(k)] + (size_t)(i) * (size_t)(e)->d)
#define SVEC(e, k) ((double *)(e)->scr[(k)])

/* ---- shared pieces -------------------------------------------------------------- */

/* the default that depends on the node count (the others: the tables above the vtables) */
static void defaults_common(dpdo__eng *e)
{
    DPDO__PI(e, DPDO_PARAM_FED_ACTIVE) = e->n;
}

/* grad f_i(x) over the whole shard, no clipping; allocates nothing */
static int gradf(dpdo__eng *e, int64_t i, const double *x, double *g)
{
    struct dpdo_node *nd = e->nodes[i];
    char err[DPDO__ERRMSG_LEN] = "";
    int rc = dpdo__loss_eval_node(nd, x, NULL, 0, 0.0, NULL, g, NULL, err);
    if (rc) return dpdo__eng_err(e, rc, i, "gradient: %s", err);
    return DPDO_OK;
}

static void mean_rows(const dpdo__eng *e, int k, const dpdo__plan *p, double *out)
{
    size_t d = (size_t)e->d;
    memcpy(out, SROW(e, k, p->comp[0]), d * sizeof(double));
    for (int64_t c = 1; c < p->ncomp; c++) {
        const double *r = SROW(e, k, p->comp[c]);
        for (size_t j = 0; j < d; j++)
            out[j] += r[j];
    }
    for (size_t j = 0; j < d; j++)
        out[j] /= (double)p->ncomp;
}

static int configure(dpdo__eng *e, void *priv, int method)
{
    fb *P = priv;
    int64_t n = e->n, d = e->d;
    size_t nd = (size_t)n * (size_t)d * sizeof(double), dd = (size_t)d * sizeof(double);
    P->method = method;
    P->bx = dpdo__eng_block(e, "x", n, d);
    P->b2 = P->bc = P->bv = -1;
    switch (method) {
    case M_FEDPD:
        P->b2 = dpdo__eng_block(e, "lambda", n, d);
        P->bc = dpdo__eng_block(e, "x0", 1, d);
        break;
    case M_FEDLIN:
        P->bc = dpdo__eng_block(e, "xhat", 1, d);
        break;
    case M_TAMUNA:
        P->b2 = dpdo__eng_block(e, "h", n, d);
        P->bc = dpdo__eng_block(e, "xbar", 1, d);
        break;
    case M_LED:
        P->b2 = dpdo__eng_block(e, "y", n, d);
        break;
    default:
        P->b2 = dpdo__eng_block(e, "u", n, d);
        P->bc = dpdo__eng_block(e, "xs", 1, d);
        P->bv = dpdo__eng_block(e, "v", 1, d);
        break;
    }
    P->sa = dpdo__eng_scratch(e, nd);
    P->sb = dpdo__eng_scratch(e, nd);
    P->sc = dpdo__eng_scratch(e, nd);
    P->sd = dpdo__eng_scratch(e, dd);
    P->se = dpdo__eng_scratch(e, dd);
    P->sf = dpdo__eng_scratch(e, dd);
    if (P->bx < 0 || P->sf < 0)
        return dpdo__err(e->err, DPDO_E_INVAL, "setup: engine tables are full");
    return DPDO_OK;
}

static int cfg_fedpd(dpdo__eng *e, void *priv)
{
    return configure(e, priv, M_FEDPD);
}
static int cfg_fedlin(dpdo__eng *e, void *priv)
{
    return configure(e, priv, M_FEDLIN);
}
static int cfg_tamuna(dpdo__eng *e, void *priv)
{
    return configure(e, priv, M_TAMUNA);
}
static int cfg_led(dpdo__eng *e, void *priv)
{
    return configure(e, priv, M_LED);
}
static int cfg_5gcs(dpdo__eng *e, void *priv)
{
    return configure(e, priv, M_5GCS);
}

static int positive(double v)
{
    return v > 0 && v <= 1e300;
}

static int prepare(dpdo__eng *e, void *priv)
{
    fb *P = priv;
    const char *name = e->vt->name;
    int64_t n = e->n;
    e->pv.private_run = 0;
    e->pv.sigma = 0;
    e->pv.nev = 0; /* the notes were reset by the engine (they may hold its derived constants) */
    dpdo_paper_destroy(e->pv.paper);
    e->pv.paper = NULL;
    if (e->o.noise_mode != DPDO_NOISE_NONE)
        return dpdo__err(e->err, DPDO_E_UNSUPPORTED,
                         "prepare: %s is a non-private baseline (docs/design/notes/fed-plt.md §7): "
                         "use noise_mode "
                         "DPDO_NOISE_NONE, not %d",
                         name, (int)e->o.noise_mode);
    if (e->reg)
        return dpdo__err(e->err, DPDO_E_UNSUPPORTED,
                         "prepare: %s solves min sum_i f_i with h = 0 "
                         "(docs/design/notes/fed-plt.md §7): a regularizer "
                         "is not supported",
                         name);
    P->ne = DPDO__PI(e, DPDO_PARAM_FED_EPOCHS);
    int sampler = (int)DPDO__PI(e, DPDO_PARAM_FED_SAMPLER);
    double pp = DPDO__PD(e, DPDO_PARAM_FED_P);
    int64_t m = DPDO__PI(e, DPDO_PARAM_FED_ACTIVE);
    if (sampler == DPDO_FED_SAMPLER_UNIFORM && m > n)
        return dpdo__err(e->err, DPDO_E_INVAL, "prepare: fed-active = %lld exceeds the %lld agents",
                         (long long)m, (long long)n);
    int cohort_ok = P->method == M_TAMUNA || P->method == M_5GCS;
    if (sampler == DPDO_FED_SAMPLER_BERNOULLI && pp < 1)
        return dpdo__err(
            e->err, DPDO_E_INVAL,
            "prepare: %s: Bernoulli participation (fed-p = %g) is not supported; %s", name, pp,
            cohort_ok ? "use DPDO_FED_SAMPLER_UNIFORM with fed-active = the cohort size"
                      : "it runs with full participation only");
    if (sampler == DPDO_FED_SAMPLER_UNIFORM && m < n && !cohort_ok)
        return dpdo__err(
            e->err, DPDO_E_INVAL,
            "prepare: %s runs with full participation only (docs/design/notes/fed-plt.md §7), but "
            "fed-active = %lld < "
            "%lld agents",
            name, (long long)m, (long long)n);
    P->m = sampler == DPDO_FED_SAMPLER_UNIFORM ? m : n;
    double lo = NAN, hi = NAN;
    dpdo_solver_get(e->solver, "lambda_lo", &lo);
    dpdo_solver_get(e->solver, "lambda_hi", &hi);
    P->lo = lo, P->hi = hi;
    int have_hi = hi > 0 && isfinite(hi);
    double lo0 = lo >= 0 && isfinite(lo) ? lo : 0.0;
    double step = DPDO__PD(e, DPDO_PARAM_STEP_SIZE);
    double ne = (double)P->ne;
    P->use_solver = 0;
    switch (P->method) {
    case M_FEDPD:
        P->eta = DPDO__PD(e, DPDO_PARAM_FEDPD_ETA);
        if (isnan(step) && have_hi) step = 2.0 / (lo0 + hi + 2.0 / P->eta);
        break;
    case M_FEDLIN:
    case M_LED:
        if (isnan(step) && have_hi) step = 1.0 / (ne * hi);
        if (P->method == M_LED) {
            P->beta = DPDO__PD(e, DPDO_PARAM_LED_BETA);
            if (isnan(P->beta)) P->beta = 1.0 / (2.0 * ne);
        }
        break;
    case M_TAMUNA:
        if (isnan(step) && have_hi) step = 1.0 / hi;
        P->p = 1.0 / ne;
        P->eta = DPDO__PD(e, DPDO_PARAM_TAMUNA_ETA);
        if (isnan(P->eta)) P->eta = P->p; /* eta_max = p without compression (s = c) */
        break;
    default: {
        P->mu = DPDO__PD(e, DPDO_PARAM_5GCS_MU);
        if (isnan(P->mu)) P->mu = lo0;
        if (have_hi && P->mu > hi)
            return dpdo__err(e->err, DPDO_E_INVAL, "prepare: 5gcs: mu = %g exceeds lambda_hi = %g",
                             P->mu, hi);
        P->tau = DPDO__PD(e, DPDO_PARAM_5GCS_TAU);
        if (isnan(P->tau) && have_hi) {
            double t = sqrt(P->mu * (hi - P->mu));
            P->tau = t > 0 ? t : hi;
        }
        if (!positive(P->tau))
            return dpdo__err(e->err, DPDO_E_INVAL,
                             "prepare: 5gcs: the dual step tau is unknown: set DPDO_PARAM_5GCS_TAU "
                             "or the solver's "
                             "\"lambda_hi\"");
        if (isnan(step)) step = 1.0 / (2.0 * P->tau * (double)n);
        P->lstep = DPDO__PD(e, DPDO_PARAM_5GCS_LOCAL_STEP);
        /* a user-set solver runs psi_i = f_i + |y - c|^2/(2 rho) + const, rho = 1/(tau - mu): needs
         * tau > mu */
        P->use_solver = !e->own_solver && P->tau > P->mu;
        if (!e->own_solver && !P->use_solver)
            dpdo__eng_note(
                e,
                "5gcs: tau <= mu, so the built-in inner GD runs psi_i instead of the user solver");
        if (!P->use_solver && isnan(P->lstep) && have_hi)
            P->lstep = 2.0 / (lo0 + hi - 2.0 * P->mu + 2.0 * P->tau);
        if (!P->use_solver && !positive(P->lstep))
            return dpdo__err(
                e->err, DPDO_E_INVAL,
                "prepare: 5gcs: the inner step is unknown: set DPDO_PARAM_5GCS_LOCAL_STEP or the "
                "solver's \"lambda_hi\"");
        if (P->use_solver) {
            char err[DPDO__ERRMSG_LEN] = "";
            for (int64_t i = 0; i < n; i++) {
                int rc = dpdo__solver_check(e->solver, e->nodes[i], 1.0 / (P->tau - P->mu), err);
                if (rc)
                    return dpdo__err(e->err, rc, "prepare: 5gcs: local solver, agent %lld: %s",
                                     (long long)i, err);
            }
        }
        break;
    }
    }
    if (!positive(step))
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: %s: the step size is unknown or not > 0 (%g): set "
                         "DPDO_PARAM_STEP_SIZE or the "
                         "solver's \"lambda_hi\"",
                         name, step);
    P->step = step;
    /* full-batch gradients: each local agent's transposed rows for the 8-lane logistic kernel
     * (lib/data/kernels_l8.c), built here once; a cache, the same bits without it */
    for (int64_t i = 0; i < n; i++)
        if (e->nodes[i] && dpdo__node_prepare_full(e->nodes[i]))
            return dpdo__err(e->err, DPDO_E_NOMEM, "prepare: out of memory");
    dpdo__eng_note(e, "noise disabled: not private");
    return DPDO_OK;
}

static void init(dpdo__eng *e, void *priv)
{
    fb *P = priv;
    size_t nd = (size_t)e->n * (size_t)e->d * sizeof(double), dd = (size_t)e->d * sizeof(double);
    memset(CROW(e, P->bx), 0, nd);
    if (P->b2 >= 0) memset(CROW(e, P->b2), 0, nd);
    if (P->bc >= 0) memset(CROW(e, P->bc), 0, dd);
    if (P->bv >= 0) memset(CROW(e, P->bv), 0, dd);
}

/* buf: what moves in a distributed run: GATHER, the agents' rows (n x d); BCAST, the
 * coordinator's vector */
static void set_stage(const dpdo__eng *e, dpdo__plan *p, int s, int who, int kind, void *buf)
{
    p->stage[s].who = who;
    p->stage[s].npat = kind ? 1 : 0;
    if (kind)
        p->stage[s].pat[0] =
            (dpdo__xpat){.kind = kind, .payload = DPDO__PAY_DENSE, .buf = buf, .ld = e->d};
}

static int plan(dpdo__eng *e, void *priv, dpdo__plan *p)
{
    fb *P = priv;
    int64_t n = e->n;
    memset(p->is_comp, 0, (size_t)n);
    if (e->inj_active && (P->method == M_TAMUNA || P->method == M_5GCS)) {
        for (int64_t c = 0; c < e->inj_b; c++)
            p->is_comp[e->inj_active[c]] = 1;
    } else if (P->m >= n) {
        memset(p->is_comp, 1, (size_t)n);
    } else {
        dpdo__stream st;
        dpdo__stream_open(&st, e->rng, DPDO__NET_GLOBAL_NODE, p->t, DPDO_PURPOSE_ACTIVATION);
        dpdo__stream_subset(&st, n, P->m, p->comp);
        for (int64_t c = 0; c < P->m; c++)
            p->is_comp[p->comp[c]] = 1;
    }
    dpdo__plan_list(p, n);
    if (p->ncomp == 0) return dpdo__eng_err(e, DPDO_E_INVAL, -1, "empty cohort");
    p->ncharges = 0;
    switch (P->method) {
    case M_FEDPD:
    case M_LED:
        p->nstages = 2;
        set_stage(e, p, 0, DPDO__RUN_COMPUTING, DPDO__PAT_GATHER,
                  e->scr[P->method == M_FEDPD ? P->sc : P->sa]);
        set_stage(e, p, 1, DPDO__RUN_COORD, DPDO__PAT_BCAST, e->scr[P->sd]);
        break;
    case M_FEDLIN:
        p->nstages = 4;
        set_stage(e, p, 0, DPDO__RUN_COORD, DPDO__PAT_BCAST, CROW(e, P->bc));
        set_stage(e, p, 1, DPDO__RUN_COMPUTING, DPDO__PAT_GATHER, e->scr[P->sa]);
        set_stage(e, p, 2, DPDO__RUN_COORD, DPDO__PAT_BCAST, e->scr[P->sd]);
        set_stage(e, p, 3, DPDO__RUN_COMPUTING, DPDO__PAT_GATHER, e->scr[P->sb]);
        break;
    case M_TAMUNA: {
        /* L_r ~ Geom(p) on {1, 2, ...}, common to the cohort (docs/design/notes/fed-plt.md §6.4
         * [choice]) */
        dpdo__stream st;
        dpdo__stream_open(&st, e->rng, DPDO__NET_GLOBAL_NODE, p->t, DPDO_PURPOSE_USER + 1);
        uint64_t g = dpdo__stream_geometric(&st, P->p);
        P->L = g >= (uint64_t)INT64_MAX - 1 ? INT64_MAX : (int64_t)g + 1;
        int s = 0;
        if (p->ncomp < n) /* xbar_r to the new cohort */
            set_stage(e, p, s++, DPDO__RUN_COORD, DPDO__PAT_BCAST, CROW(e, P->bc));
        set_stage(e, p, s++, DPDO__RUN_COMPUTING, DPDO__PAT_GATHER, e->scr[P->sa]);
        set_stage(e, p, s++, DPDO__RUN_COORD, DPDO__PAT_BCAST,
                  e->scr[P->sd]); /* xbar_{r+1} to the cohort */
        p->nstages = s;
        break;
    }
    default:
        p->nstages = 3;
        set_stage(e, p, 0, DPDO__RUN_COORD, DPDO__PAT_BCAST, e->scr[P->sd]);
        set_stage(e, p, 1, DPDO__RUN_COMPUTING, DPDO__PAT_GATHER, e->scr[P->sb]);
        set_stage(e, p, 2, DPDO__RUN_COORD, 0, NULL);
        break;
    }
    return DPDO_OK;
}

/* ---- FedPD (docs/design/notes/fed-plt.md §7.1)
 * ------------------------------------------------------------ blocks x, lambda, x0 (coordinator
 * centre); scratch sa = x', sb = lambda', sc = candidates, sd = x0', se = gradient */
static int local_fedpd(dpdo__eng *e, fb *P, const dpdo__plan *p, int32_t s, int64_t i)
{
    size_t d = (size_t)e->d;
    if (s == 1) {
        mean_rows(e, P->sc, p, SVEC(e, P->sd));
        return DPDO_OK;
    }
    const double *x0 = CROW(e, P->bc), *lam = ROW(e, P->b2, i);
    double *w = SROW(e, P->sa, i), *ln = SROW(e, P->sb, i), *cand = SROW(e, P->sc, i),
           *g = SVEC(e, P->se);
    double a = P->step, ie = 1.0 / P->eta;
    memcpy(w, ROW(e, P->bx, i), d * sizeof(double));
    for (int64_t l = 0; l < P->ne; l++) {
        int rc = gradf(e, i, w, g);
        if (rc) return rc;
        for (size_t k = 0; k < d; k++)
            w[k] -= a * (g[k] + lam[k] + (w[k] - x0[k]) * ie);
    }
    for (size_t k = 0; k < d; k++) {
        ln[k] = lam[k] + (w[k] - x0[k]) * ie;
        cand[k] = w[k] + P->eta * ln[k];
    }
    return DPDO_OK;
}

/* ---- FedLin (docs/design/notes/fed-plt.md §7.2)
 * ------------------------------------------------------------- blocks x (last local models), xhat;
 * scratch sa = g_i, sb = w_i, sd = gbar, se = xhat', sf = gradient */
static int local_fedlin(dpdo__eng *e, fb *P, const dpdo__plan *p, int32_t s, int64_t i)
{
    size_t d = (size_t)e->d;
    const double *xh = CROW(e, P->bc);
    if (s == 0) return DPDO_OK; /* broadcast of xhat */
    if (s == 1) return gradf(e, i, xh, SROW(e, P->sa, i));
    if (s == 2) {
        mean_rows(e, P->sa, p, SVEC(e, P->sd));
        return DPDO_OK;
    }
    const double *gi = SROW(e, P->sa, i), *gb = SVEC(e, P->sd);
    double *w = SROW(e, P->sb, i), *g = SVEC(e, P->sf), a = P->step;
    memcpy(w, xh, d * sizeof(double));
    for (int64_t l = 0; l < P->ne; l++) {
        const double *gw = gi; /* the first local gradient, at w = xhat, is g_i (same bytes) */
        if (l > 0) {
            int rc = gradf(e, i, w, g);
            if (rc) return rc;
            gw = g;
        }
        for (size_t k = 0; k < d; k++)
            w[k] -= a * (gw[k] - gi[k] + gb[k]);
    }
    return DPDO_OK;
}

/* ---- TAMUNA (docs/design/notes/fed-plt.md §7.3, no compression)
 * ----------------------------------------------- blocks x (last local models), h, xbar; scratch sa
 * = w_i, sb = h_i', sd = xbar' */
static int local_tamuna(dpdo__eng *e, fb *P, const dpdo__plan *p, int32_t s, int64_t i)
{
    size_t d = (size_t)e->d;
    if (i == DPDO_NODE_COORDINATOR) {
        if (s == p->nstages - 1) mean_rows(e, P->sa, p, SVEC(e, P->sd));
        return DPDO_OK;
    }
    const double *h = ROW(e, P->b2, i);
    double *w = SROW(e, P->sa, i), *g = SVEC(e, P->se), a = P->step;
    memcpy(w, CROW(e, P->bc), d * sizeof(double));
    for (int64_t l = 0; l < P->L; l++) {
        int rc = gradf(e, i, w, g);
        if (rc) return rc;
        for (size_t k = 0; k < d; k++)
            w[k] -= a * (g[k] - h[k]);
    }
    return DPDO_OK;
}

/* ---- LED (docs/design/notes/fed-plt.md §7.4, W = 11^T / N)
 * ---------------------------------------------------- blocks x, y; scratch sa = phi_i, sb = y_i',
 * sd = phibar, se = gradient */
static int local_led(dpdo__eng *e, fb *P, const dpdo__plan *p, int32_t s, int64_t i)
{
    size_t d = (size_t)e->d;
    if (s == 1) {
        mean_rows(e, P->sa, p, SVEC(e, P->sd));
        return DPDO_OK;
    }
    const double *y = ROW(e, P->b2, i);
    double *phi = SROW(e, P->sa, i), *g = SVEC(e, P->se), a = P->step, b = P->beta;
    memcpy(phi, ROW(e, P->bx, i), d * sizeof(double));
    for (int64_t l = 0; l < P->ne; l++) {
        int rc = gradf(e, i, phi, g);
        if (rc) return rc;
        for (size_t k = 0; k < d; k++)
            phi[k] -= a * g[k] + b * y[k];
    }
    return DPDO_OK;
}

/* ---- 5GCS (docs/design/notes/fed-plt.md §7.5)
 * ------------------------------------------------------------------ blocks x (last local y_i), u,
 * xs (server x), v; scratch sa = y_i, sb = u_i', sc = solver centre rows, sd = xhat, se = v', sf =
 * x' */
static void xhat_of(const dpdo__eng *e, const fb *P, double *out)
{
    const double *x = CROW(e, P->bc), *v = CROW(e, P->bv);
    double den = 1.0 + P->step * (double)e->n * P->mu;
    for (int64_t k = 0; k < e->d; k++)
        out[k] = (x[k] - P->step * v[k]) / den;
}

static int local_5gcs(dpdo__eng *e, fb *P, const dpdo__plan *p, int32_t s, int64_t i)
{
    size_t d = (size_t)e->d;
    const double *xh = SVEC(e, P->sd);
    if (s == 0) {
        xhat_of(e, P, SVEC(e, P->sd));
        return DPDO_OK;
    }
    if (s == 2) { /* v' = v + sum Delta_i, x' = xhat - gamma (N/C) sum Delta_i */
        double *vn = SVEC(e, P->se), *xn = SVEC(e, P->sf);
        const double *v = CROW(e, P->bv);
        memset(xn, 0, d * sizeof(double));
        for (int64_t c = 0; c < p->ncomp; c++) {
            int64_t j = p->comp[c];
            const double *un = SROW(e, P->sb, j), *u = ROW(e, P->b2, j);
            for (size_t k = 0; k < d; k++)
                xn[k] += un[k] - u[k];
        }
        double sc = P->step * (double)e->n / (double)p->ncomp;
        for (size_t k = 0; k < d; k++) {
            vn[k] = v[k] + xn[k];
            xn[k] = xh[k] - sc * xn[k];
        }
        return DPDO_OK;
    }
    const double *u = ROW(e, P->b2, i);
    double *y = SROW(e, P->sa, i), *un = SROW(e, P->sb, i), *g = SROW(e, P->sc, i);
    double tau = P->tau, mu = P->mu;
    memcpy(y, xh, d * sizeof(double)); /* y^0 = xhat [choice] */
    int rc;
    if (P->use_solver) {
        /* psi_i(y) = f_i(y) + |y - c|^2 / (2 rho) + const, rho = 1/(tau - mu), c = (tau xhat +
         * u_i)/(tau - mu) */
        double r = tau - mu;
        for (size_t k = 0; k < d; k++)
            g[k] = (tau * xh[k] + u[k]) / r;
        char err[DPDO__ERRMSG_LEN] = "";
        rc = dpdo__solver_run(e->solver, e->nodes[i], g, 1.0 / r, P->ne, e->rng, (uint64_t)i, p->t,
                              y, err);
        if (rc) return dpdo__eng_err(e, rc, i, "local solver: %s", err);
    } else {
        double a = P->lstep;
        for (int64_t l = 0; l < P->ne; l++) {
            if ((rc = gradf(e, i, y, g))) return rc;
            for (size_t k = 0; k < d; k++)
                y[k] -= a * (g[k] - mu * y[k] + tau * (y[k] - xh[k]) - u[k]);
        }
    }
    if ((rc = gradf(e, i, y, g))) return rc; /* u_i' = grad F_i(y) = grad f_i(y) - mu y */
    for (size_t k = 0; k < d; k++)
        un[k] = g[k] - mu * y[k];
    return DPDO_OK;
}

/* ---- dispatch ------------------------------------------------------------------------------ */

static int local(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t s, int64_t i)
{
    fb *P = priv;
    switch (P->method) {
    case M_FEDPD:
        return local_fedpd(e, P, p, s, i);
    case M_FEDLIN:
        return local_fedlin(e, P, p, s, i);
    case M_TAMUNA:
        return local_tamuna(e, P, p, s, i);
    case M_LED:
        return local_led(e, P, p, s, i);
    default:
        return local_5gcs(e, P, p, s, i);
    }
}

static int combine(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t s, int64_t i)
{
    fb *P = priv;
    size_t d = (size_t)e->d;
    if (P->method == M_TAMUNA && s == p->nstages - 1) {
        /* the cohort receives xbar' and updates h_i += (eta/gamma)(xbar' - w_i) */
        const double *xb = SVEC(e, P->sd);
        double r = P->eta / P->step;
        for (int64_t c = 0; c < p->ncomp; c++) {
            int64_t j = p->comp[c];
            const double *h = ROW(e, P->b2, j), *w = SROW(e, P->sa, j);
            double *hn = SROW(e, P->sb, j);
            for (size_t k = 0; k < d; k++)
                hn[k] = h[k] + r * (xb[k] - w[k]);
        }
    } else if (P->method == M_LED && s == 1) {
        const double *pb = SVEC(e, P->sd);
        for (int64_t c = 0; c < p->ncomp; c++) {
            int64_t j = p->comp[c];
            const double *y = ROW(e, P->b2, j), *phi = SROW(e, P->sa, j);
            double *yn = SROW(e, P->sb, j);
            for (size_t k = 0; k < d; k++)
                yn[k] = y[k] + phi[k] - pb[k];
        }
    }
    return DPDO_OK;
}

/* a diverged row: the message suggests the usual cause */
#define DIVERGED "(diverged? try a smaller step)"

static int check(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    fb *P = priv;
    size_t d = (size_t)e->d;
    int rc;
    static const char *const rows_a[] = {"x", "g", "w", "phi", "y"};
    static const char *const rows_b[] = {"lambda", "w", "h", "y", "u"};
    static const char *const vec[] = {"x0", "xhat", "xbar", "phibar", "xs"};
    int m = P->method;
    /* FedLin: the coordinator averages the uploads of the last stage here, after the gather (in a
     * distributed run only the coordinator's process holds them all; elsewhere the value is
     * replaced by the next round's broadcast) */
    if (m == M_FEDLIN) mean_rows(e, P->sb, p, SVEC(e, P->se));
    for (int64_t c = 0; c < p->ncomp; c++) {
        int64_t i = p->comp[c];
        if ((rc = dpdo__eng_check_finite(e, i, SROW(e, P->sa, i), d, rows_a[m], DIVERGED)))
            return rc;
        if ((rc = dpdo__eng_check_finite(e, i, SROW(e, P->sb, i), d, rows_b[m], DIVERGED)))
            return rc;
    }
    const double *cv = m == M_FEDLIN ? SVEC(e, P->se)
                       : m == M_5GCS ? SVEC(e, P->sf)
                                     : SVEC(e, P->sd);
    if ((rc = dpdo__eng_check_finite(e, -1, cv, d, vec[m], DIVERGED))) return rc;
    if (m == M_5GCS && (rc = dpdo__eng_check_finite(e, -1, SVEC(e, P->se), d, "v", DIVERGED)))
        return rc;
    return DPDO_OK;
}

static void commit(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    fb *P = priv;
    size_t d = (size_t)e->d, dd = d * sizeof(double);
    for (int64_t c = 0; c < p->ncomp; c++) {
        int64_t i = p->comp[c];
        switch (P->method) {
        case M_FEDPD:
            memcpy(ROW(e, P->bx, i), SROW(e, P->sa, i), dd);
            memcpy(ROW(e, P->b2, i), SROW(e, P->sb, i), dd);
            break;
        case M_FEDLIN:
            memcpy(ROW(e, P->bx, i), SROW(e, P->sb, i), dd);
            break;
        case M_TAMUNA:
            memcpy(ROW(e, P->bx, i), SROW(e, P->sa, i), dd);
            memcpy(ROW(e, P->b2, i), SROW(e, P->sb, i), dd);
            break;
        case M_LED:
            memcpy(ROW(e, P->bx, i), SVEC(e, P->sd), dd); /* x_i = phibar */
            memcpy(ROW(e, P->b2, i), SROW(e, P->sb, i), dd);
            break;
        default:
            memcpy(ROW(e, P->bx, i), SROW(e, P->sa, i), dd);
            memcpy(ROW(e, P->b2, i), SROW(e, P->sb, i), dd);
            break;
        }
    }
    switch (P->method) {
    case M_FEDPD:
    case M_TAMUNA:
        memcpy(CROW(e, P->bc), SVEC(e, P->sd), dd);
        break;
    case M_FEDLIN:
        memcpy(CROW(e, P->bc), SVEC(e, P->se), dd);
        break;
    case M_5GCS:
        memcpy(CROW(e, P->bc), SVEC(e, P->sf), dd);
        memcpy(CROW(e, P->bv), SVEC(e, P->se), dd);
        break;
    default:
        break;
    }
}

/* FedPD and LED: the agent's x_i; FedLin, TAMUNA: the coordinator's model;
 * 5GCS: xhat = (x - gamma v)/(1 + gamma N mu), the point it sends out. */
static void output(const dpdo__eng *e, const void *priv, int64_t i, double *out)
{
    const fb *P = priv;
    size_t dd = (size_t)e->d * sizeof(double);
    switch (P->method) {
    case M_FEDLIN:
    case M_TAMUNA:
        memcpy(out, CROW(e, P->bc), dd);
        break;
    case M_5GCS:
        if (e->prepared) {
            xhat_of(e, P, out);
            break;
        }
        memcpy(out, CROW(e, P->bc), dd);
        break;
    default:
        memcpy(out, ROW(e, P->bx, i), dd);
        break;
    }
}

/* The baselines accept Fed-PLT's epochs, sampler, p and active count (its rows, fed_impl.h) with
 * the UNIFORM sampler, and their own. */
/* clang-format off */
#define FED_SHARED                                                                                 \
    {.same_as = &dpdo__fed_plt_params[DPDO__FEDP_EPOCHS], .def = 5},                               \
    {.same_as = &dpdo__fed_plt_params[DPDO__FEDP_SAMPLER], .def = DPDO_FED_SAMPLER_UNIFORM},       \
    {.same_as = &dpdo__fed_plt_params[DPDO__FEDP_P], .def = 1.0},                                  \
    {.same_as = &dpdo__fed_plt_params[DPDO__FEDP_ACTIVE], .def = 1}
/* clang-format on */

/* FedPD */
static const dpdo__pdef PARAMS_FEDPD[] = {FED_SHARED,
                                          {DPDO_PARAM_FEDPD_ETA, "fedpd-eta", 1, 0x1p-1000, 1e300,
                                           0, "FedPD penalty/dual scale eta; default 1",
                                           .def = 1.0},
                                          {.name = NULL}};

/* FedLin */
static const dpdo__pdef PARAMS_FEDLIN[] = {FED_SHARED, {.name = NULL}};

/* TAMUNA */
static const dpdo__pdef PARAMS_TAMUNA[] = {FED_SHARED,
                                           {DPDO_PARAM_TAMUNA_ETA, "tamuna-eta", 1, 0x1p-1000, 1, 0,
                                            "TAMUNA control-variate step; NaN (default) = 1/N_e",
                                            .def = NAN},
                                           {.name = NULL}};

/* LED */
static const dpdo__pdef PARAMS_LED[] = {FED_SHARED,
                                        {DPDO_PARAM_LED_BETA, "led-beta", 1, 0x1p-1000, 1e300, 0,
                                         "LED dual step; NaN (default) = 1/(2 N_e)", .def = NAN},
                                        {.name = NULL}};

/* 5GCS */
static const dpdo__pdef PARAMS_5GCS[] = {
    FED_SHARED,
    {DPDO_PARAM_5GCS_TAU, "5gcs-tau", 1, 0x1p-1000, 1e300, 0,
     "5GCS dual step tau; NaN (default) = derived from the solver's constants", .def = NAN},
    {DPDO_PARAM_5GCS_MU, "5gcs-mu", 1, 0, 1e300, 0,
     "5GCS splitting modulus mu; NaN (default) = the solver's lambda_lo (0 if unknown)",
     .def = NAN},
    {DPDO_PARAM_5GCS_LOCAL_STEP, "5gcs-local-step", 1, 0x1p-1000, 1e300, 0,
     "5GCS inner gradient step; NaN (default) = derived from the solver's constants", .def = NAN},
    {.name = NULL}};

/* the tests' setup: non-private; 5GCS with its two steps set (its derived defaults need the
 * solver's constants) */
static const dpdo__fixture FIXTURE = {.nonprivate = 1, .notes = "lambda_hi"};
static const dpdo__fixture FIXTURE_5GCS = {
    .nonprivate = 1, .notes = "lambda_hi", .set = {{"5gcs-tau", 1.0}, {"5gcs-local-step", 0.5}}};

#define VT(sym, nm, ttl, kk, dflt, cfg, fx)                                                        \
    const dpdo__alg_vt sym = {                                                                     \
        .name = nm,                                                                                \
        .title = ttl,                                                                              \
        .priv_size = sizeof(fb),                                                                   \
        .fixture = fx,                                                                             \
        .params = kk,                                                                              \
        .paper = NULL,                                                                             \
        .needs_net = 0,                                                                            \
        .uses_solver = 1,                                                                          \
        .distributable = 1,                                                                        \
        .defaults = dflt,                                                                          \
        .configure = cfg,                                                                          \
        .prepare = prepare,                                                                        \
        .init = init,                                                                              \
        .plan = plan,                                                                              \
        .local = local,                                                                            \
        .combine = combine,                                                                        \
        .check = check,                                                                            \
        .commit = commit,                                                                          \
        .output = output,                                                                          \
        .release = NULL,                                                                           \
    }

VT(dpdo__vt_fedpd, "fedpd",
   "FedPD (Zhang, Hong, Dhople, Yin, Liu): federated primal-dual, Algorithm 1 with GD oracle",
   PARAMS_FEDPD, defaults_common, cfg_fedpd, &FIXTURE);
VT(dpdo__vt_fedlin, "fedlin",
   "FedLin (Mitra, Jaafar, Pappas, Hassani): gradient-corrected local steps", PARAMS_FEDLIN,
   defaults_common, cfg_fedlin, &FIXTURE);
VT(dpdo__vt_tamuna, "tamuna",
   "TAMUNA (Condat, Agarsky, Malinovsky, Richtarik): local training with client sampling, no "
   "compression",
   PARAMS_TAMUNA, defaults_common, cfg_tamuna, &FIXTURE);
VT(dpdo__vt_led, "led", "LED (Alghunaim): local exact-diffusion on the federated star", PARAMS_LED,
   defaults_common, cfg_led, &FIXTURE);
VT(dpdo__vt_5gcs, "5gcs",
   "5GCS (Grudzien, Malinovsky, Richtarik): local training with client sampling", PARAMS_5GCS,
   defaults_common, cfg_5gcs, &FIXTURE_5GCS);
