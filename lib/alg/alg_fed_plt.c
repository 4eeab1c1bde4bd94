/* SPDX-License-Identifier: BSD-3-Clause */
/* Fed-PLT: federated learning with partial participation and private local
 * training (Algorithm 1; docs/design/notes/fed-plt.md §2). A coordinator and N
 * agents; the engine's stages are
 *   stage 0 (coordinator): zbar = (1/N) sum_i z_i (node order),
 *                          y = prox_{(rho/N) h}(zbar); broadcast y to the active agents
 *   stage 1 (active agents): v = 2y - z_i; w = x_i (warm start);
 *                          N_e steps of the local solver on f_i + |w - v|^2/(2 rho);
 *                          x_i' = w; z_i' = z_i + 2(x_i' - y); upload z_i'
 * Inactive agents are untouched (no computation, no message, no charge).
 * Privacy (docs/algorithms/fed-plt.md): the rigorous accountant charges each
 * active agent N_e Gaussian releases (sensitivity gamma L / q_i, noise
 * sqrt(2 gamma) tau) per round -- the transcript threat model of docs/design/notes/fed-plt.md §4.7;
 * Proposition 4's final-model bound is reported beside it as the paper's
 * claim. */
#include "../engine/engine_impl.h"
#include "../engine/par_impl.h"
#include "../model/model_impl.h"
#include "../rng/rng_impl.h"
#include "../solver/solver_impl.h"
#include "dpdo/solver.h"
#include "fed_impl.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct fed {
    int bx, bz, by;
    int sxnew, sznew, synew, sv, szbar;
    double rho, gamma, tau, lam_lo;
    double sens_num; /* gamma L_eff: one noisy step's sensitivity times the shard size */
    int64_t ne, m;
    int sampler;
    double p;
    int dp_init;
    double *ws; /* tasks 1.. of the thread pool: v (d) and the solver's workspace (3d) */
} fed;

#define ROW(e, b, i) ((e)->blk[(b)].cur + (size_t)(i) * (size_t)(e)->d)
#define SROW(e, k, i) ((double *)(e)->scr[(k)] + (size_t)(i) * (size_t)(e)->d)

/* the default that depends on the node count (the others: the table PARAMS) */
static void defaults(dpdo__eng *e)
{
    DPDO__PI(e, DPDO_PARAM_FED_ACTIVE) = e->n;
}

static int configure(dpdo__eng *e, void *priv)
{
    fed *P = priv;
    int64_t n = e->n, d = e->d;
    P->bx = dpdo__eng_block(e, "x", n, d);
    P->bz = dpdo__eng_block(e, "z", n, d);
    P->by = dpdo__eng_block(e, "y", 1, d);
    size_t nd = (size_t)n * (size_t)d * sizeof(double);
    P->sxnew = dpdo__eng_scratch(e, nd);
    P->sznew = dpdo__eng_scratch(e, nd);
    P->synew = dpdo__eng_scratch(e, (size_t)d * sizeof(double));
    P->sv = dpdo__eng_scratch(e, (size_t)d * sizeof(double));
    P->szbar = dpdo__eng_scratch(e, (size_t)d * sizeof(double));
    /* tasks 1.. of the thread pool get their own v and solver workspace; task 0 (and a serial run)
     * uses the arena's row and the solver's buffer, exactly as before threads */
    int32_t extra = dpdo__par_slots(e) - 1;
    P->ws = extra > 0 ? dpdo__alloc_array((size_t)extra * 4, (size_t)d * sizeof(double)) : NULL;
    return extra == 0 || P->ws ? DPDO_OK : DPDO_E_NOMEM;
}

static void release(dpdo__eng *e, void *priv)
{
    (void)e;
    fed *P = priv;
    dpdo__free(P->ws);
    P->ws = NULL;
}

/* What the noise plan's callbacks need of prepare(): the run's constants. */
typedef struct fed_noise {
    fed *P;
    int64_t T;
    double lo, Leff, g2;
    int have_paper;
} fed_noise;

/* Prop. 4's inputs common to the calibration (PAPER) and the reported bound: tau and K given */
static int fed_paper_common(dpdo__eng *e, const fed_noise *fn, dpdo_paper *pp, double tau, double K)
{
    int rc;
    if ((rc = dpdo_paper_set(pp, "L", fn->Leff)) ||
        (rc = dpdo_paper_set(pp, "lambda_lo", fn->lo)) || (rc = dpdo_paper_set(pp, "tau", tau)) ||
        (rc = dpdo_paper_set(pp, "q", (double)e->qmin)) ||
        (rc = dpdo_paper_set(pp, "gamma", fn->P->gamma)) || (rc = dpdo_paper_set(pp, "K", K)) ||
        (rc = dpdo_paper_set(pp, "Ne", (double)fn->P->ne)) ||
        (rc = dpdo_paper_set(pp, "delta", e->o.delta)))
        return rc;
    return DPDO_OK;
}

/* The noise plan's callbacks; Fed-PLT's sigma is tau of eq. (13), each noisy step adding
 * N(0, 2 gamma tau^2). PAPER: Prop. 4 calibrated to (eps, delta) over K = T rounds. */
static int fed_paper_tau(dpdo__eng *e, void *priv, dpdo_paper *unused, double *tau)
{
    (void)unused;
    fed_noise *fn = priv;
    int rc;
    if (!fn->have_paper)
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: PAPER noise needs the solver's lambda_lo (Prop. 4)");
    if ((rc = dpdo_paper_create(&e->pv.paper, dpdo_paper_type_find("fed-plt-prop4"))))
        return dpdo__err(e->err, rc, "prepare: out of memory");
    dpdo_paper *pp = e->pv.paper;
    if ((rc = fed_paper_common(e, fn, pp, 1.0, (double)fn->T)) ||
        (rc = dpdo_paper_set(pp, "eps", e->o.epsilon)) || (rc = dpdo_paper_evaluate(pp)))
        return dpdo__err(e->err, rc, "prepare: paper bound: %s", dpdo_paper_errmsg(pp));
    double t2 = NAN;
    dpdo_paper_get(pp, "tau2_calibrated", &t2);
    *tau = sqrt(t2);
    return DPDO_OK;
}

/* RIGOROUS: the transcript accountant, calibrated for the noisy steps that can happen (per node:
 * the Binomial(T, pi_i) quantile of its active rounds, N_e steps each; or calib-steps) */
static int fed_rigorous_tau(dpdo__eng *e, void *priv, double *tau)
{
    fed_noise *fn = priv;
    fed *P = fn->P;
    int64_t n = e->n;
    double K = (double)DPDO__PI(e, DPDO_PARAM_CALIB_STEPS);
    if (K == 0) {
        if (P->sampler == DPDO_FED_SAMPLER_UNIFORM) {
            double pi = (double)P->m / (double)n;
            double *pv = dpdo__alloc_array((size_t)n, sizeof *pv);
            if (!pv) return dpdo__err(e->err, DPDO_E_NOMEM, "prepare: out of memory");
            for (int64_t i = 0; i < n; i++)
                pv[i] = pi;
            K = dpdo__eng_calib_counts(e, pv, pi) * (double)P->ne;
            dpdo__free(pv);
        } else {
            K = dpdo__eng_calib_counts(e, NULL, P->p) * (double)P->ne;
        }
        for (int64_t i = 0; i < n; i++)
            e->pv.planned[i] *= P->ne;
    } else {
        dpdo__eng_set_planned(e, K);
    }
    dpdo__sampling_desc none = {DPDO_SAMPLING_NONE, 1.0, 0, 0};
    double sig = 0;
    int rc = dpdo__eng_calibrate_sigma(e, &none, P->gamma * fn->Leff / (double)e->qmin, K, &sig);
    if (rc) return rc;
    *tau = sig / fn->g2;
    return DPDO_OK;
}

static int fed_check_tau(dpdo__eng *e, void *priv, double tau)
{
    (void)priv;
    if (!(tau >= 0 && isfinite(tau)))
        return dpdo__err(e->err, DPDO_E_NUMERIC, "prepare: tau = %g", tau);
    return DPDO_OK;
}

static int prepare(dpdo__eng *e, void *priv)
{
    fed *P = priv;
    int64_t n = e->n, T = DPDO__PI(e, DPDO_PARAM_MAX_ROUNDS);
    P->rho = DPDO__PD(e, DPDO_PARAM_FED_RHO);
    P->ne = DPDO__PI(e, DPDO_PARAM_FED_EPOCHS);
    P->sampler = (int)DPDO__PI(e, DPDO_PARAM_FED_SAMPLER);
    P->p = DPDO__PD(e, DPDO_PARAM_FED_P);
    P->m = DPDO__PI(e, DPDO_PARAM_FED_ACTIVE);
    P->dp_init = (int)DPDO__PI(e, DPDO_PARAM_FED_DP_INIT);
    if (P->sampler == DPDO_FED_SAMPLER_UNIFORM && P->m > n)
        return dpdo__err(e->err, DPDO_E_INVAL, "prepare: fed-active = %lld exceeds the %lld agents",
                         (long long)P->m, (long long)n);
    struct dpdo_solver *s = e->solver;
    /* full-batch local solvers: each local agent's transposed rows for the 8-lane logistic kernel
     * (lib/data/kernels_l8.c), built here once, not in step(); a cache, same bits without it */
    if (s->kind == DPDO__SOLVER_GD || s->kind == DPDO__SOLVER_AGD ||
        s->kind == DPDO__SOLVER_NOISY_GD)
        for (int64_t i = 0; i < n; i++)
            if (e->nodes[i] && dpdo__node_prepare_full(e->nodes[i]))
                return dpdo__err(e->err, DPDO_E_NOMEM, "prepare: out of memory");
    double lo = NAN, hi = NAN;
    dpdo_solver_get(s, "lambda_lo", &lo);
    dpdo_solver_get(s, "lambda_hi", &hi);
    P->lam_lo = lo;
    P->gamma = dpdo__solver_step(s, P->rho);
    /* the noise plan's callbacks read the run's constants here */
    fed_noise fn = {.P = P, .T = T, .lo = lo};
    dpdo__noise_plan np = {
        .paper_sigma = fed_paper_tau, .rigorous = fed_rigorous_tau, .check_sigma = fed_check_tau};
    e->pv.nev = 0;
    P->tau = 0;
    if (e->o.noise_mode == DPDO_NOISE_NONE) return dpdo__eng_noise_plan(e, &fn, &np, &P->tau);
    if (!dpdo__solver_is_noisy_gd(s))
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: a private run needs the \"noisy-gd\" local solver ("
                         "docs/design/notes/fed-plt.md §3.4), not \"%s\"",
                         dpdo_solver_name(s));
    if (!(P->gamma > 0 && isfinite(P->gamma)))
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: the solver's step is unknown: set its \"step\" or "
                         "\"lambda_lo\"/\"lambda_hi\"");
    /* sensitivity of one noisy step: gamma * L_eff / q_i (Assumption 3); clipping to C gives L_eff
     * = 2C */
    double L = e->o.lipschitz, clip = DPDO__PD(e, DPDO_PARAM_CLIP);
    double C = isnan(clip) ? L / 2 : clip;
    int trusted = clip == INFINITY;
    double Leff = trusted ? L : 2 * C;
    int rc = dpdo_solver_set(s, "clip", trusted ? 0.0 : C);
    if (rc) return dpdo__err(e->err, rc, "prepare: solver: %s", dpdo_solver_errmsg(s));
    double g2 = sqrt(2.0 * P->gamma);
    fn.Leff = Leff, fn.g2 = g2;
    /* paper object: Prop. 4 (final model, full participation) */
    fn.have_paper = lo > 0 && isfinite(lo);
    if (!fn.have_paper)
        dpdo__eng_note(
            e,
            "the solver's lambda_lo is unknown: no Proposition 4 bound and no DP initialisation");
    double tau = 0;
    if ((rc = dpdo__eng_noise_plan(e, &fn, &np, &tau))) return rc;
    /* test build: SIGMA_HALF makes the solver draw half the noise the accounting assumes */
    int half = DPDO__WEAKENED(e, DPDO__WEAKEN_SIGMA_HALF) ||
               (DPDO__WEAKENED(e, DPDO__WEAKEN_SECURE_SIGMA_HALF) &&
                e->o.randomness == DPDO_RANDOMNESS_SECURE); /* a private run: the grid path */
    if ((rc = dpdo_solver_set(s, "tau", half ? tau / 2 : tau)))
        return dpdo__err(e->err, rc, "prepare: solver: %s", dpdo_solver_errmsg(s));
    P->tau = tau;
    P->sens_num = P->gamma * Leff;
    e->pv.sens = P->gamma * Leff / (double)e->qmin;
    if (!e->pv.private_run) {
        dpdo_paper_destroy(e->pv.paper); /* PAPER's calibration object */
        e->pv.paper = NULL;
        return DPDO_OK;
    }
    if (fn.have_paper) {
        dpdo_paper_destroy(e->pv.paper); /* a fresh object: no calibration target */
        e->pv.paper = NULL;
        if ((rc = dpdo_paper_create(&e->pv.paper, dpdo_paper_type_find("fed-plt-prop4"))))
            return dpdo__err(e->err, rc, "prepare: out of memory");
        dpdo_paper *pp = e->pv.paper;
        if ((rc = fed_paper_common(e, &fn, pp, tau, 0.0)) ||
            (!isnan(hi) && (rc = dpdo_paper_set(pp, "lambda_hi", hi))) ||
            (rc = dpdo_paper_set(pp, "rho", P->rho)) || (rc = dpdo_paper_evaluate(pp)))
            return dpdo__err(e->err, rc, "prepare: paper bound: %s", dpdo_paper_errmsg(pp));
        if ((rc = dpdo__eng_paper_verdict(e, pp, "Proposition 4", "paper bound"))) return rc;
        dpdo__eng_note(e,
                       "paper bound (Prop. 4) covers the released final model only, assumes full "
                       "participation, and its "
                       "proof has gaps (docs/design/notes/fed-plt.md §4.8); the rigorous figure "
                       "accounts every message");
    }
    if (trusted) {
        /* clip = inf trusts the data: the sensitivity gamma L / q_i rests on per-sample gradients
         * of norm <= L/2 (they then differ by <= L); refuse data known to exceed that */
        int64_t bad = 0;
        double Li = 0;
        if (dpdo__eng_grad_exceeds(e, L / 2, 0, &bad, &Li))
            return dpdo__err(e->err, DPDO_E_INVAL,
                             "prepare: agent %lld: per-sample gradients reach %g > L/2 = %g "
                             "(lipschitz L = %g) and clip = inf turns clipping off; leave clip "
                             "unset (clipping at L/2), set a finite clip or raise lipschitz",
                             (long long)bad, Li, L / 2, L);
        dpdo__eng_note(e, "no clipping: the guarantee assumes per-sample gradient norms <= L/2");
    }
    /* events: N_e Gaussian releases per active round, one event per distinct shard size */
    for (int64_t i = 0; i < n; i++) {
        int32_t k;
        for (k = 0; k < e->pv.nev; k++)
            if (e->pv.ev[k].sens == P->gamma * Leff / (double)e->q[i]) break;
        if (k == e->pv.nev) {
            dpdo__sampling_desc sd = {DPDO_SAMPLING_NONE, 1.0, 0, 0};
            char err[DPDO__ERRMSG_LEN];
            if ((rc = dpdo__event_make(&e->pv.ev[k], DPDO_MECH_GAUSSIAN, &sd,
                                       P->gamma * Leff / (double)e->q[i], g2 * tau, err)))
                return dpdo__err(e->err, rc, "prepare: agent %lld: %s", (long long)i, err);
            e->pv.nev++;
        }
        e->pv.node_ev[i] = k;
    }
    if (P->dp_init && !fn.have_paper) P->dp_init = 0;
    return DPDO_OK;
}

static void init(dpdo__eng *e, void *priv)
{
    fed *P = priv;
    size_t d = (size_t)e->d;
    double sd = 0;
    if (e->prepared && e->pv.private_run && P->dp_init) sd = P->tau * sqrt(2.0 / P->lam_lo);
    for (int64_t i = 0; i < e->n; i++) {
        double *x = ROW(e, P->bx, i);
        memset(x, 0, d * sizeof(double));
        if (sd > 0) { /* x_i0 ~ N(0, 2 tau^2 / lambda_lo I), data independent (Prop. 4) */
            dpdo__stream st;
            dpdo__stream_open(&st, e->rng, (uint64_t)i, 0, DPDO_PURPOSE_INIT);
            dpdo__stream_add_normals(&st, sd, x, d);
            if (e->tap) e->tap(e->tap_user, i, x, d, -1.0); /* secret state, no release */
        }
        memcpy(ROW(e, P->bz, i), x,
               d * sizeof(double)); /* z_i0 = x_i0 (docs/design/notes/fed-plt.md §2.2) */
    }
    memset(ROW(e, P->by, 0), 0, d * sizeof(double));
}

static int plan(dpdo__eng *e, void *priv, dpdo__plan *p)
{
    fed *P = priv;
    int64_t n = e->n;
    if (e->inj_active || P->sampler != DPDO_FED_SAMPLER_UNIFORM) {
        dpdo__plan_bernoulli(e, p, P->p);
    } else {
        memset(p->is_comp, 0, (size_t)n);
        if (P->m == n)
            memset(p->is_comp, 1, (size_t)n);
        else {
            dpdo__stream st;
            dpdo__stream_open(&st, e->rng, DPDO__NET_GLOBAL_NODE, p->t, DPDO_PURPOSE_ACTIVATION);
            dpdo__stream_subset(&st, n, P->m, p->comp);
            for (int64_t c = 0; c < P->m; c++)
                p->is_comp[p->comp[c]] = 1;
        }
    }
    dpdo__plan_list(p, n); /* ascending */
    p->nstages = 2;
    p->stage[0].who = DPDO__RUN_COORD;
    p->stage[0].npat = 1;
    p->stage[0].pat[0] =
        (dpdo__xpat){.kind = DPDO__PAT_BCAST, .payload = DPDO__PAY_DENSE, .buf = e->scr[P->synew]};
    p->stage[1].who = DPDO__RUN_COMPUTING;
    p->stage[1].npat = 1;
    p->stage[1].pat[0] = (dpdo__xpat){
        .kind = DPDO__PAT_GATHER, .payload = DPDO__PAY_DENSE, .buf = e->scr[P->sznew], .ld = e->d};
    int64_t charged = P->ne; /* test build (STEP_UNCHARGED): one local step fewer */
    if (DPDO__WEAKENED(e, DPDO__WEAKEN_STEP_UNCHARGED) && charged > 1) charged--;
    if (dpdo__plan_charge_computing(e, p, charged)) return e->plan.charge_err;
    return DPDO_OK;
}

/* every noisy local step, to the engine's noise tap */
static void solver_tap(void *user, uint64_t node, const double *w, size_t n, double grid)
{
    dpdo__eng *e = user;
    e->tap(e->tap_user, (int64_t)node, w, n, grid);
}

static int local(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t stage, int64_t i)
{
    fed *P = priv;
    size_t d = (size_t)e->d;
    double *ynew = e->scr[P->synew];
    int rc;
    if (stage == 0) { /* coordinator: C1-C2 */
        double *zbar = e->scr[P->szbar];
        memcpy(zbar, ROW(e, P->bz, 0), d * sizeof(double));
        for (int64_t j = 1; j < e->n; j++) {
            const double *z = ROW(e, P->bz, j);
            for (size_t k = 0; k < d; k++)
                zbar[k] += z[k];
        }
        for (size_t k = 0; k < d; k++)
            zbar[k] /= (double)e->n;
        if (!e->reg) {
            memcpy(ynew, zbar, d * sizeof(double));
        } else if ((rc = dpdo_regularizer_prox(e->reg, zbar, e->d, P->rho / (double)e->n, ynew))) {
            return dpdo__eng_err(e, rc, -1, "coordinator prox: %s",
                                 dpdo_regularizer_errmsg(e->reg));
        }
        return DPDO_OK;
    }
    /* agent i: A2-A6 */
    const double *z = ROW(e, P->bz, i);
    int32_t slot = dpdo__par_slot(e, i);
    double *ws = slot ? P->ws + (size_t)(slot - 1) * 4 * d : NULL;
    double *v = ws ? ws : e->scr[P->sv], *w = SROW(e, P->sxnew, i), *zn = SROW(e, P->sznew, i);
    for (size_t k = 0; k < d; k++)
        v[k] = 2.0 * ynew[k] - z[k];
    memcpy(w, ROW(e, P->bx, i),
           d * sizeof(double)); /* warm start (mandatory, docs/design/notes/fed-plt.md §2.8) */
    char err[DPDO__ERRMSG_LEN] = "";
    /* secure private runs: grid noise with this agent's one-step sensitivity gamma L_eff / q_i */
    double gs = dpdo__eng_grid_noise(e) ? P->sens_num / (double)e->q[i] : 0.0;
    e->solver->tap = e->tap ? solver_tap : NULL; /* the engine's noise tap (the auditor) */
    e->solver->tap_user = e;
    rc = dpdo__solver_run_ws(e->solver, e->nodes[i], v, P->rho, P->ne, e->rng, (uint64_t)i, p->t,
                             gs, DPDO__GRID_ETA, w, ws ? ws + d : NULL, err);
    if (rc) return dpdo__eng_err(e, rc, i, "local solver: %s", err);
    for (size_t k = 0; k < d; k++)
        zn[k] = z[k] + 2.0 * (w[k] - ynew[k]);
    return DPDO_OK;
}

static int combine(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t stage, int64_t i)
{
    (void)e, (void)priv, (void)p, (void)stage, (void)i;
    return DPDO_OK; /* the coordinator stores the uploaded z_i at commit */
}

static int check(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    fed *P = priv;
    size_t d = (size_t)e->d;
    int rc = dpdo__eng_check_finite(e, -1, e->scr[P->synew], d, "coordinator: y", NULL);
    for (int64_t c = 0; c < p->ncomp && !rc; c++) {
        int64_t i = p->comp[c];
        if (!(rc = dpdo__eng_check_finite(e, i, SROW(e, P->sxnew, i), d, "x",
                                          "after local training")))
            rc = dpdo__eng_check_finite(e, i, SROW(e, P->sznew, i), d, "z", "after local training");
    }
    return rc;
}

static void commit(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    fed *P = priv;
    size_t d = (size_t)e->d;
    memcpy(ROW(e, P->by, 0), e->scr[P->synew], d * sizeof(double));
    for (int64_t c = 0; c < p->ncomp; c++) {
        int64_t i = p->comp[c];
        memcpy(ROW(e, P->bx, i), SROW(e, P->sxnew, i), d * sizeof(double));
        memcpy(ROW(e, P->bz, i), SROW(e, P->sznew, i), d * sizeof(double));
    }
}

static void output(const dpdo__eng *e, const void *priv, int64_t i, double *out)
{
    const fed *P = priv;
    memcpy(out, ROW(e, P->bx, i), (size_t)e->d * sizeof(double));
}

/* Fed-PLT's parameters (dpdo_param_*), shared with its baselines (fed_impl.h: by row) */
const dpdo__pdef dpdo__fed_plt_params[] = {
    {DPDO_PARAM_FED_RHO, "fed-rho", 1, 0x1p-1000, 1e300, 0,
     "Peaceman-Rachford parameter rho; default 1", .def = 1.0},
    {DPDO_PARAM_FED_EPOCHS, "fed-epochs", 0, 1, 2147483647.0, 0,
     "local steps N_e per round; default 5", .def = 5},
    {DPDO_PARAM_FED_SAMPLER, "fed-sampler", 0, DPDO_FED_SAMPLER_BERNOULLI, DPDO_FED_SAMPLER_UNIFORM,
     0, "participation sampler DPDO_FED_SAMPLER_*; default BERNOULLI (the baselines: UNIFORM)",
     .def = DPDO_FED_SAMPLER_BERNOULLI},
    {DPDO_PARAM_FED_P, "fed-p", 1, 0x1p-1000, 1, 0,
     "Bernoulli participation probability; default 1", .def = 1.0},
    {DPDO_PARAM_FED_ACTIVE, "fed-active", 0, 1, 2147483647.0, 0,
     "agents per round for the UNIFORM sampler, <= N; default N", .def = 1,
     .flags = DPDO__PF_NODES},
    {DPDO_PARAM_FED_DP_INIT, "fed-dp-init", 0, 0, 1, 0,
     "0/1: private runs draw the initial iterates at random (Prop. 4's hypothesis); default 1",
     .def = 1},
    {.name = NULL}};

/* the tests' setup: a local solver (noisy in private runs) */
static const dpdo__fixture FIXTURE = {.solver = "gd",
                                      .solver_private = "noisy-gd",
                                      .solver_step = 0.5,
                                      .notes = "lambda_hi",
                                      .noise_in_solver = 1};

const dpdo__alg_vt dpdo__vt_fed_plt = {
    .name = "fed-plt",
    .title = "Fed-PLT (Bastianello, Liu, Johansson): federated learning with partial participation "
             "and private "
             "local training, Algorithm 1",
    .priv_size = sizeof(fed),
    .fixture = &FIXTURE,
    .params = dpdo__fed_plt_params,
    .paper = "fed-plt-prop4",
    .paper_eps = "eps_star",
    .paper_delta = "delta",
    .paper_round = "K",
    .needs_net = 0,
    .uses_solver = 1,
    .accepts_mask = 1,
    .node_probs = 1,
    .distributable = 1,
    .parallel = 1,
    .init_gather = "z",
    .defaults = defaults,
    .configure = configure,
    .prepare = prepare,
    .init = init,
    .plan = plan,
    .local = local,
    .combine = combine,
    .check = check,
    .commit = commit,
    .output = output,
    .release = release,
};
