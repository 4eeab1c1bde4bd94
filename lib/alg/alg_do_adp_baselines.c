/* SPDX-License-Identifier: BSD-3-Clause */
/* DO-ADP's comparison baselines (docs/design/notes/do-adp.md §5.3, docs/design/notes/do-adp.md
 * §5.6; docs in docs/algorithms/do-adp-baselines.md). The third baseline, DP-DDA's "inactive nodes
 * still transmit" variant, lives in alg_dp_dda.c (DPDO_PARAM_DDA_ALL_TRANSMIT).
 *
 * "dpdo" (Huang, Mitra, Vaidya 2015), round t = 0, 1, ... (engine round t+1):
 *   local:   xi_i = x_i + Lap(b_t)^d, b_t = b0 pn^t   (stream (i, t+1, NOISE))
 *   combine: v_i = sum_{j in N_i u {i}} w_ij xi_j    (static W, own noisy term)
 *            x_i = Proj_{||x|| <= R}(v_i - gamma_t grad f_i(v_i))
 *            gamma_t = c qs^t or c/(t+1); grad: mean of `batch` sampled rows
 *            (stream (i, t+1, SAMPLE)), per-sample l2 clipping, or the full
 *            local gradient; plus the regularizer's gradient.
 *   privacy: the release at t >= 1 has l1 sensitivity sqrt(d) Delta2 gamma_{t-1}
 *            (Delta2 = 2 G / batch, or 2 G / q with the full gradient); pure
 *            eps_t = that / b_t, composed by summation. The ledger holds at
 *            most NLEV Laplace events: eps_t is charged as the smallest level
 *            of a geometric grid that is >= eps_t.
 *
 * "cpgt" (CPGT-like reconstruction, docs/design/notes/do-adp.md §5.6 [R]), round t:
 *   stage 0 local:   xt = x_i + Lap(bx_t)^d, yt = y_i + Lap(by_t)^d (one NOISE
 *                    stream: x first), qx = C(xt - xhat_i), qy = C(yt - yhat_i)
 *   stage 0 combine: xhat_i' = xhat_i + qx_i, yhat_i' = yhat_i + qy_i
 *   stage 1 local:   x_i' = x_i + gamma sum_j w_ij (xhat_j' - xhat_i') - eta y_i
 *                    g = grad at x_i' (stream (i, t+1, SAMPLE))
 *                    y_i' = y_i + gamma sum_j w_ij (yhat_j' - yhat_i') + g - gprev_i
 *   y_i(0) = gprev_i(0) = grad at x_0 = 0 with stream (i, 0, SAMPLE), formed
 *   in round 1 (the state rows read 0 before it).
 *   privacy: bx_t = lambda sqrt(d) Delta2 eta t, by_t = lambda sqrt(d) Delta2:
 *            every round is one Laplace release of l1 sensitivity 2/lambda at
 *            scale 1 (the pair rescaled); lambda = 2 T / eps. */
#include "../engine/engine_impl.h"
#include "../model/model_impl.h"
#include "../net/compress_impl.h"
#include "../rng/rng_impl.h"
#include "dpdo/compressor.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define ROW(e, b, i) ((e)->blk[(b)].cur + (size_t)(i) * (size_t)(e)->d)
#define SROW(e, k, i) ((double *)(e)->scr[(k)] + (size_t)(i) * (size_t)(e)->d)
#define NLEV 32 /* ledger levels of DPDO's per-round epsilon */

/* Gradient machinery shared by both: the sample draw, l2 clipping, the regularizer. */
typedef struct gradctx {
    int64_t B, idx_B, qmax, full;
    double clip;   /* 0 = no clipping */
    int64_t *sidx; /* n x B */
    int64_t *all;  /* 0..qmax-1 (full gradient) */
    dpdo__sampling_desc *samp;
} gradctx;

static void grad_release(gradctx *g)
{
    dpdo__free(g->sidx), dpdo__free(g->all), dpdo__free(g->samp);
    g->sidx = NULL, g->all = NULL, g->samp = NULL;
    g->idx_B = 0, g->qmax = 0;
}

/* Validates batch/regularizer, allocates, sets clip; *sens2 = l2 sensitivity of the gradient. */
static int grad_prepare(dpdo__eng *e, gradctx *g, int full, double *sens2, int *trusted,
                        int64_t *qmin_out)
{
    int64_t n = e->n, d = e->d, B = DPDO__PI(e, DPDO_PARAM_BATCH), qmin = e->q[0], qmax = e->q[0];
    for (int64_t i = 1; i < n; i++) {
        qmin = e->q[i] < qmin ? e->q[i] : qmin;
        qmax = e->q[i] > qmax ? e->q[i] : qmax;
    }
    if (B > qmin)
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: batch = %lld exceeds the smallest shard (%lld rows)",
                         (long long)B, (long long)qmin);
    if (e->reg) {
        char err[DPDO__ERRMSG_LEN] = "";
        double *z = dpdo__calloc((size_t)d * 2, sizeof(double));
        if (!z) return dpdo__err(e->err, DPDO_E_NOMEM, "prepare: out of memory");
        int rc = dpdo__reg_grad(e->reg, z, z + d, err);
        dpdo__free(z);
        if (rc)
            return dpdo__err(e->err, rc,
                             "prepare: the regularizer must be differentiable for %s: %s",
                             e->vt->name, err);
    }
    if (!g->samp && !(g->samp = dpdo__calloc((size_t)n, sizeof *g->samp)))
        return dpdo__err(e->err, DPDO_E_NOMEM, "prepare: out of memory");
    if (B != g->idx_B) {
        int64_t *si = dpdo__alloc_array((size_t)n * (size_t)B, sizeof *si);
        if (!si) return dpdo__err(e->err, DPDO_E_NOMEM, "prepare: out of memory");
        dpdo__free(g->sidx);
        g->sidx = si, g->idx_B = B;
    }
    if (full && qmax != g->qmax) {
        int64_t *al = dpdo__alloc_array((size_t)qmax, sizeof *al);
        if (!al) return dpdo__err(e->err, DPDO_E_NOMEM, "prepare: out of memory");
        for (int64_t k = 0; k < qmax; k++)
            al[k] = k;
        dpdo__free(g->all);
        g->all = al, g->qmax = qmax;
    }
    g->B = B, g->full = full;
    for (int64_t i = 0; i < n; i++)
        g->samp[i] =
            (dpdo__sampling_desc){DPDO_SAMPLING_WOR, (double)B / (double)e->q[i], e->q[i], B};
    double clip = DPDO__PD(e, DPDO_PARAM_CLIP), G = e->o.lipschitz;
    *trusted = clip == INFINITY;
    g->clip = *trusted ? 0.0 : (isnan(clip) ? G : clip);
    double Gs = *trusted ? G : g->clip;
    *sens2 = 2.0 * Gs / (double)(full ? qmin : B);
    *qmin_out = qmin;
    return DPDO_OK;
}

/* out = gradient of f_i (sampled mean or full) + h at x; stream (i, round, SAMPLE). */
static int grad_eval(dpdo__eng *e, gradctx *g, int64_t i, uint64_t round, const double *x,
                     double *out, double *hg)
{
    struct dpdo_node *nd = e->nodes[i];
    const int64_t *idx;
    int64_t got;
    int rc;
    if (g->full) {
        idx = g->all, got = e->q[i];
    } else {
        dpdo__stream st;
        int64_t *si = g->sidx + (size_t)i * (size_t)g->B;
        dpdo__stream_open(&st, e->rng, (uint64_t)i, round, DPDO_PURPOSE_SAMPLE);
        rc = dpdo__sampling_draw(&g->samp[i], &st, e->q[i], si, &got);
        if (rc)
            return dpdo__eng_err(e, rc, i, "drawing the sample failed (generator code %d)",
                                 dpdo__stream_cb_code(&st));
        idx = si;
    }
    char err[DPDO__ERRMSG_LEN] = "";
    rc = dpdo__loss_eval(nd->loss, nd->shard, x, idx, got, g->clip, NULL, out, NULL, nd->scratch,
                         err);
    if (rc) return dpdo__eng_err(e, rc, i, "%s", err);
    if (e->reg) {
        if ((rc = dpdo__reg_grad(e->reg, x, hg, err)))
            return dpdo__eng_err(e, rc, i, "regularizer: %s", err);
        for (int64_t k = 0; k < e->d; k++)
            out[k] += hg[k];
    }
    return DPDO_OK;
}

/* ==== DPDO ================================================================= */

static double huang_gamma(int sched, double c, double qs, uint64_t t)
{
    return sched == DPDO_DPDO_STEP_HARMONIC ? c / ((double)t + 1.0) : c * pow(qs, (double)t);
}

double dpdo__dpdo_b0_closed(double d, double sens2, double c, double eps, double pn, double qs)
{
    return sqrt(d) * sens2 * c / (eps * (pn - qs));
}

double dpdo__dpdo_b0_finite(double d, double sens2, double eps, int sched, double c, double qs,
                            double pn, int64_t T)
{
    double s = 0; /* summed smallest terms last would be better; the terms are O(1) relative */
    for (int64_t t = 1; t < T; t++)
        s += huang_gamma(sched, c, qs, (uint64_t)(t - 1)) / pow(pn, (double)t);
    return sqrt(d) * sens2 * s / eps;
}

typedef struct huang_st {
    int bx, smsg, sxnew, sg, shg;
    gradctx g;
    int sched;
    double c, qs, pn, R, b0, sens2, rd; /* rd = sqrt(d) sens2 */
    /* ledger levels: level k has per-round epsilon lev0 r^-k / b0 */
    int32_t nlev, evcap;
    double lev0, lr;  /* lev0 = max A_t, lr = log r */
    double cum, pend; /* pure epsilon charged, and this round's */
} huang_st;

static void huang_release(dpdo__eng *e, void *priv)
{
    (void)e;
    grad_release(&((huang_st *)priv)->g);
}

static int huang_configure(dpdo__eng *e, void *priv)
{
    huang_st *P = priv;
    int64_t n = e->n, d = e->d;
    size_t nd = (size_t)n * (size_t)d * sizeof(double);
    P->bx = dpdo__eng_block(e, "x", n, d);
    P->smsg = dpdo__eng_scratch(e, nd);
    P->sxnew = dpdo__eng_scratch(e, nd);
    P->sg = dpdo__eng_scratch(e, (size_t)d * sizeof(double));
    P->shg = dpdo__eng_scratch(e, (size_t)d * sizeof(double));
    P->evcap = (int32_t)n; /* the engine's e->pv.ev capacity */
    return DPDO_OK;
}

/* A_t = sqrt(d) Delta2 gamma_{t-1} / pn^t: b0 times the pure epsilon of the release at t >= 1. */
static double huang_A(const huang_st *P, uint64_t t)
{
    return P->rd * huang_gamma(P->sched, P->c, P->qs, t - 1) / pow(P->pn, (double)t);
}

static int32_t huang_level(const huang_st *P, double A)
{
    if (P->nlev <= 1) return 0;
    double k = floor(log(P->lev0 / A) / P->lr);
    int32_t lv = k < 0 ? 0 : k >= P->nlev - 1 ? P->nlev - 1 : (int32_t)k;
    while (lv > 0 && P->lev0 * exp(-P->lr * lv) < A)
        lv--; /* level value >= A despite rounding */
    return lv;
}

static double huang_levval(const huang_st *P, int32_t lv)
{
    return lv == 0 ? P->lev0 : P->lev0 * exp(-P->lr * lv);
}

/* The noise plan's callbacks: b0 of b_t = b0 pn^t. PAPER: pure eps over the run by basic
 * composition (closed form for the geometric steps, the finite sum otherwise); RIGOROUS: the
 * charged (level) epsilons of rounds 1..T-1 sum to eps. */
static int huang_paper_b0(dpdo__eng *e, void *priv, dpdo_paper *pp, double *b0)
{
    (void)pp;
    const huang_st *P = priv;
    double d = (double)e->d, eps = e->o.epsilon;
    *b0 = P->sched == DPDO_DPDO_STEP_GEOMETRIC
              ? dpdo__dpdo_b0_closed(d, P->sens2, P->c, eps, P->pn, P->qs)
              : dpdo__dpdo_b0_finite(d, P->sens2, eps, P->sched, P->c, P->qs, P->pn,
                                     DPDO__PI(e, DPDO_PARAM_MAX_ROUNDS));
    return DPDO_OK;
}

static int huang_rigorous_b0(dpdo__eng *e, void *priv, double *b0)
{
    const huang_st *P = priv;
    int64_t T = DPDO__PI(e, DPDO_PARAM_MAX_ROUNDS);
    double s = 0;
    for (int64_t t = 1; t < T; t++)
        s += huang_levval(P, huang_level(P, huang_A(P, (uint64_t)t)));
    *b0 = s / e->o.epsilon;
    dpdo__eng_set_planned(e, (double)(T > 1 ? T - 1 : 1)); /* every node releases in 1..T-1 */
    return DPDO_OK;
}

static int huang_check_b0(dpdo__eng *e, void *priv, double b0)
{
    (void)priv;
    if (!(b0 >= 0 && b0 < INFINITY))
        return dpdo__err(e->err, DPDO_E_INVAL, "prepare: the Laplace scale b0 = %g is not finite",
                         b0);
    return DPDO_OK;
}

static int huang_prepare(dpdo__eng *e, void *priv)
{
    huang_st *P = priv;
    int64_t n = e->n, d = e->d, T = DPDO__PI(e, DPDO_PARAM_MAX_ROUNDS);
    P->sched = (int)DPDO__PI(e, DPDO_PARAM_DPDO_SCHEDULE);
    P->qs = DPDO__PD(e, DPDO_PARAM_DPDO_STEP_DECAY);
    P->pn = DPDO__PD(e, DPDO_PARAM_DPDO_NOISE_DECAY);
    P->R = DPDO__PD(e, DPDO_PARAM_DPDO_RADIUS);
    double ss = DPDO__PD(e, DPDO_PARAM_STEP_SIZE);
    P->c = isnan(ss) ? 0.001 : ss;
    if (!(P->c > 0))
        return dpdo__err(e->err, DPDO_E_INVAL, "prepare: step_size (c) = %g must be > 0", P->c);
    int trusted;
    int64_t qmin;
    int rc = grad_prepare(e, &P->g, (int)DPDO__PI(e, DPDO_PARAM_DPDO_FULL_GRAD), &P->sens2,
                          &trusted, &qmin);
    if (rc) return rc;
    P->rd = sqrt((double)d) * P->sens2;
    int mode = e->o.noise_mode;
    if (mode != DPDO_NOISE_NONE && P->sched == DPDO_DPDO_STEP_GEOMETRIC && !(P->qs < P->pn))
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: dpdo-step-decay qs = %.17g must be < dpdo-noise-decay pn = "
                         "%.17g (the privacy "
                         "loss sum_t (qs/pn)^t must converge)",
                         P->qs, P->pn);
    /* the levels over the planned horizon (releases t = 1..T-1) */
    double amax = 0, amin = INFINITY;
    for (int64_t t = 1; t < T; t++) {
        double A = huang_A(P, (uint64_t)t);
        amax = A > amax ? A : amax;
        amin = A < amin ? A : amin;
    }
    if (mode != DPDO_NOISE_NONE && T > 1 && !(amax < INFINITY && amin > 0))
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: the per-round privacy loss overflows or vanishes over %lld "
                         "rounds (step or noise "
                         "decay too strong)",
                         (long long)T);
    P->lev0 = amax;
    P->lr = fmax(log(2.0) / 32.0, T > 2 ? log(amax / amin) / (NLEV - 1) : 1.0);
    P->nlev = T > 1 ? (int32_t)fmin(NLEV, floor(log(amax / amin) / P->lr) + 1) : 0;
    dpdo__noise_plan np = {.paper_sigma = huang_paper_b0,
                           .rigorous = huang_rigorous_b0,
                           .check_sigma = huang_check_b0,
                           .no_release = P->nlev == 0}; /* one round: nothing is charged */
    double b0 = 0;
    if ((rc = dpdo__eng_noise_plan(e, P, &np, &b0))) return rc;
    P->b0 = b0;
    e->pv.sens = P->rd * P->c;
    if (e->pv.private_run && trusted)
        dpdo__eng_note(e, "no clipping: the guarantee assumes every per-sample gradient norm <= G");
    if (mode != DPDO_NOISE_NONE) {
        char buf[200];
        if (P->sched == DPDO_DPDO_STEP_GEOMETRIC && b0 > 0) {
            snprintf(buf, sizeof buf,
                     "pure epsilon of the whole (infinite) run by basic composition: %.6g",
                     P->rd * P->c / (b0 * (P->pn - P->qs)));
            dpdo__eng_note(e, buf);
        }
        dpdo__eng_note(e, "the rigorous figure charges each round's pure epsilon rounded up to a "
                          "grid of at most 32 levels; "
                          "no amplification by the secret sample choice is claimed");
    }
    e->pv.nev = 0;
    if (!e->pv.private_run) return DPDO_OK;
    if (P->nlev > P->evcap) { /* more distinct events than the engine's per-node table holds */
        dpdo__event_desc *ev = dpdo__calloc((size_t)P->nlev, sizeof *ev);
        if (!ev) return dpdo__err(e->err, DPDO_E_NOMEM, "prepare: out of memory");
        dpdo__free(e->pv.ev);
        e->pv.ev = ev;
        P->evcap = P->nlev;
    }
    for (int32_t k = 0; k < P->nlev; k++) {
        char err[DPDO__ERRMSG_LEN];
        if ((rc = dpdo__event_make(&e->pv.ev[k], DPDO_MECH_LAPLACE, NULL, huang_levval(P, k), b0,
                                   err)))
            return dpdo__err(e->err, rc, "prepare: level %d: %s", (int)k, err);
    }
    e->pv.nev = P->nlev;
    /* plan() guards the summed pure epsilon (the engine's step guard is for Gaussian events) */
    for (int64_t i = 0; i < n; i++)
        e->pv.node_ev[i] = P->nlev - 1;
    return DPDO_OK;
}

static void huang_ser_priv(dpdo__eng *e, void *priv, dpdo__ser *s)
{
    (void)e;
    huang_st *P = priv;
    dpdo__ser_f64(s, "dpdo pure epsilon charged", &P->cum, 1);
}

static void huang_init(dpdo__eng *e, void *priv)
{
    huang_st *P = priv;
    memset(e->blk[P->bx].cur, 0, (size_t)e->n * (size_t)e->d * sizeof(double)); /* x_0 = 0 */
    P->cum = 0, P->pend = 0;
}

static int huang_plan(dpdo__eng *e, void *priv, dpdo__plan *p)
{
    huang_st *P = priv;
    int64_t n = e->n;
    memset(p->is_comp, 1, (size_t)n);
    for (int64_t i = 0; i < n; i++)
        p->comp[i] = i;
    p->ncomp = n;
    p->nstages = 1;
    p->stage[0].who = DPDO__RUN_COMPUTING;
    p->stage[0].npat = 1;
    p->stage[0].pat[0] = (dpdo__xpat){
        .kind = DPDO__PAT_NET, .payload = DPDO__PAY_DENSE, .buf = e->scr[P->smsg], .ld = e->d};
    p->ncharges = 0;
    P->pend = 0;
    uint64_t t = p->t - 1; /* the paper's round index; x(0) is public */
    if (e->pv.private_run && t >= 1) {
        double A = huang_A(P, t);
        if (!(A <= P->lev0 * (1 + 1e-12)))
            return dpdo__eng_err(
                e, DPDO_E_STATE, -1,
                "the per-round privacy loss exceeds the largest level calibrated for max-rounds at "
                "prepare (max-rounds grew); reset and prepare again");
        int32_t lv = huang_level(P, A);
        P->pend = huang_levval(P, lv) / P->b0;
        if (e->pv.guard_eps < INFINITY && P->cum + P->pend > e->pv.guard_eps * (1 + 1e-9))
            return DPDO__PLAN_BUDGET;
        for (int64_t i = 0; i < n; i++) {
            int rc = dpdo__plan_add_charge(e, lv, i, 1);
            if (rc) return rc;
        }
    }
    return DPDO_OK;
}

static int huang_local(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t stage, int64_t i)
{
    (void)stage;
    huang_st *P = priv;
    size_t d = (size_t)e->d;
    const double *x = ROW(e, P->bx, i);
    double *m = SROW(e, P->smsg, i);
    memcpy(m, x, d * sizeof(double));
    if (P->b0 > 0) { /* the noise plan leaves b0 = 0 unless noise is on */
        double b = P->b0 * pow(P->pn, (double)(p->t - 1));
        dpdo__stream st;
        dpdo__stream_open(&st, e->rng, (uint64_t)i, p->t, DPDO_PURPOSE_NOISE);
        /* L1 sensitivity consistent with this round's charge (pend = charged pure epsilon) */
        int rc = dpdo__eng_noise_laplace(e, &st, i, b, b * P->pend, m, d);
        if (rc) return rc;
    }
    dpdo__eng_probe(e, DPDO__PH_NOISE);
    return DPDO_OK;
}

static int huang_combine(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t stage, int64_t i)
{
    (void)stage;
    huang_st *P = priv;
    size_t d = (size_t)e->d;
    const struct dpdo_network *net = e->net;
    double *v = SROW(e, P->sxnew, i), *g = e->scr[P->sg];
    memset(v, 0, d * sizeof(double));
    for (int64_t q = net->rowptr[i]; q < net->rowptr[i + 1]; q++) {
        const double *mj = SROW(e, P->smsg, net->col[q]);
        double w = net->val[q];
        for (size_t k = 0; k < d; k++)
            v[k] += w * mj[k];
    }
    dpdo__eng_probe(e, DPDO__PH_GOSSIP);
    int rc = grad_eval(e, &P->g, i, p->t, v, g, e->scr[P->shg]);
    if (rc) return rc;
    dpdo__eng_probe(e, DPDO__PH_GRAD);
    double gam = huang_gamma(P->sched, P->c, P->qs, p->t - 1), nn = 0;
    for (size_t k = 0; k < d; k++) {
        v[k] -= gam * g[k];
        nn += v[k] * v[k];
    }
    if (P->R < INFINITY && nn > P->R * P->R) {
        double s = P->R / sqrt(nn);
        for (size_t k = 0; k < d; k++)
            v[k] *= s;
    }
    dpdo__eng_probe(e, DPDO__PH_PRIMAL);
    return DPDO_OK;
}

static int huang_check(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    (void)p;
    huang_st *P = priv;
    return dpdo__eng_check_rows(e, P->sxnew, NULL, e->n, "x", "after the update");
}

static void huang_commit(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    (void)p;
    huang_st *P = priv;
    memcpy(e->blk[P->bx].cur, e->scr[P->sxnew], (size_t)e->n * (size_t)e->d * sizeof(double));
    P->cum += P->pend;
    P->pend = 0;
}

static void x_output(const dpdo__eng *e, const void *priv, int64_t i, double *out)
{
    const int *bx = priv; /* both private structs start with the x block index */
    memcpy(out, ROW(e, *bx, i), (size_t)e->d * sizeof(double));
}

/* DPDO's parameters (dpdo_param_*) */
static const dpdo__pdef HUANG_PARAMS[] = {
    {DPDO_PARAM_DPDO_SCHEDULE, "dpdo-schedule", 0, DPDO_DPDO_STEP_GEOMETRIC,
     DPDO_DPDO_STEP_HARMONIC, 0, "step schedule DPDO_DPDO_STEP_*; default GEOMETRIC",
     .def = DPDO_DPDO_STEP_GEOMETRIC},
    {DPDO_PARAM_DPDO_STEP_DECAY, "dpdo-step-decay", 1, 0x1p-1000, 0.99999999999999989, 0,
     "qs in gamma_t = c qs^t; default 0.9999", .def = 0.9999},
    {DPDO_PARAM_DPDO_NOISE_DECAY, "dpdo-noise-decay", 1, 0x1p-1000, 1, 0,
     "pn in b_t = b0 pn^t; default 0.99999", .def = 0.99999},
    {DPDO_PARAM_DPDO_RADIUS, "dpdo-radius", 1, 0x1p-1000, INFINITY, 0,
     "radius R of the l2 ball X; inf = no projection; default 1", .def = 1.0},
    {DPDO_PARAM_DPDO_FULL_GRAD, "dpdo-full-grad", 0, 0, 1, 0,
     "0/1: full local gradient instead of batch sampled rows; default 0", .def = 0},
    {.name = NULL}};

const dpdo__alg_vt dpdo__vt_dpdo_huang = {
    .name = "dpdo",
    .title = "DPDO (Huang, Mitra, Vaidya 2015): distributed projected gradient with diminishing "
             "Laplace noise",
    .priv_size = sizeof(huang_st),
    .params = HUANG_PARAMS,
    .paper = NULL,
    .needs_net = 1,
    .distributable = 1,
    .configure = huang_configure,
    .prepare = huang_prepare,
    .init = huang_init,
    .ser_priv = huang_ser_priv,
    .plan = huang_plan,
    .local = huang_local,
    .combine = huang_combine,
    .check = huang_check,
    .commit = huang_commit,
    .output = x_output,
    .release = huang_release,
};

/* ==== CPGT-like ============================================================== */

typedef struct cpgt_st {
    int bx, by, bg, bxh, byh;
    int sxnew, synew, sgnew, sxh, syh, sres, sg, shg, scx, scy;
    gradctx g;
    double gamma, eta, lambda, rd;
    int64_t kcap;
    int64_t *mxi, *myi; /* n x kcap */
    double *mxv, *myv;  /* n x kcap */
} cpgt_st;

static void cpgt_release(dpdo__eng *e, void *priv)
{
    (void)e;
    cpgt_st *P = priv;
    grad_release(&P->g);
    dpdo__free(P->mxi), dpdo__free(P->myi), dpdo__free(P->mxv), dpdo__free(P->myv);
    P->mxi = P->myi = NULL, P->mxv = P->myv = NULL;
    P->kcap = 0;
}

static int cpgt_configure(dpdo__eng *e, void *priv)
{
    cpgt_st *P = priv;
    int64_t n = e->n, d = e->d;
    size_t nd = (size_t)n * (size_t)d * sizeof(double), dd = (size_t)d * sizeof(double);
    P->bx = dpdo__eng_block(e, "x", n, d);
    P->by = dpdo__eng_block(e, "y", n, d);
    P->bg = dpdo__eng_block(e, "g", n, d);
    P->bxh = dpdo__eng_block(e, "xhat", n, d);
    P->byh = dpdo__eng_block(e, "yhat", n, d);
    P->sxnew = dpdo__eng_scratch(e, nd);
    P->synew = dpdo__eng_scratch(e, nd);
    P->sgnew = dpdo__eng_scratch(e, nd);
    P->sxh = dpdo__eng_scratch(e, nd);
    P->syh = dpdo__eng_scratch(e, nd);
    P->sres = dpdo__eng_scratch(e, dd);
    P->sg = dpdo__eng_scratch(e, dd);
    P->shg = dpdo__eng_scratch(e, dd);
    P->scx = dpdo__eng_scratch(e, (size_t)n * sizeof(int64_t));
    P->scy = dpdo__eng_scratch(e, (size_t)n * sizeof(int64_t));
    return P->scy < 0 ? dpdo__err(e->err, DPDO_E_INVAL, "setup: too many state blocks") : DPDO_OK;
}

/* The noise plan's callbacks: lambda = 2 T / eps (PAPER and RIGOROUS: T Laplace releases of l1
 * sensitivity 2 / lambda at scale 1, basic composition), refused when not finite. */
static int cpgt_paper_lambda(dpdo__eng *e, void *priv, dpdo_paper *pp, double *lambda)
{
    (void)priv, (void)pp;
    *lambda = 2.0 * (double)DPDO__PI(e, DPDO_PARAM_MAX_ROUNDS) / e->o.epsilon;
    return DPDO_OK;
}

static int cpgt_rigorous_lambda(dpdo__eng *e, void *priv, double *lambda)
{
    cpgt_paper_lambda(e, priv, NULL, lambda);
    dpdo__eng_set_planned(e, (double)DPDO__PI(e, DPDO_PARAM_MAX_ROUNDS)); /* every node, round */
    return DPDO_OK;
}

static int cpgt_check_lambda(dpdo__eng *e, void *priv, double lambda)
{
    (void)priv;
    if (!(lambda < INFINITY))
        return dpdo__err(e->err, DPDO_E_INVAL, "prepare: the noise multiplier is not finite");
    return DPDO_OK;
}

static int cpgt_prepare(dpdo__eng *e, void *priv)
{
    cpgt_st *P = priv;
    int64_t n = e->n, d = e->d;
    P->gamma = DPDO__PD(e, DPDO_PARAM_CPGT_GAMMA);
    double ss = DPDO__PD(e, DPDO_PARAM_STEP_SIZE);
    P->eta = isnan(ss) ? 0.001 : ss;
    if (!(P->eta > 0))
        return dpdo__err(e->err, DPDO_E_INVAL, "prepare: step_size (eta) = %g must be > 0", P->eta);
    int trusted;
    int64_t qmin;
    double sens2;
    int rc = grad_prepare(e, &P->g, 0, &sens2, &trusted, &qmin);
    if (rc) return rc;
    P->rd = sqrt((double)d) * sens2;
    int64_t kcap = dpdo_compressor_capacity(e->comp);
    if (kcap != P->kcap) {
        int64_t *xi = dpdo__alloc_array((size_t)n * (size_t)kcap, sizeof *xi);
        int64_t *yi = dpdo__alloc_array((size_t)n * (size_t)kcap, sizeof *yi);
        double *xv = dpdo__alloc_array((size_t)n * (size_t)kcap, sizeof *xv);
        double *yv = dpdo__alloc_array((size_t)n * (size_t)kcap, sizeof *yv);
        if (!xi || !yi || !xv || !yv) {
            dpdo__free(xi), dpdo__free(yi), dpdo__free(xv), dpdo__free(yv);
            return dpdo__err(e->err, DPDO_E_NOMEM, "prepare: out of memory");
        }
        dpdo__free(P->mxi), dpdo__free(P->myi), dpdo__free(P->mxv), dpdo__free(P->myv);
        P->mxi = xi, P->myi = yi, P->mxv = xv, P->myv = yv, P->kcap = kcap;
    }
    static const dpdo__noise_plan NP = {.paper_sigma = cpgt_paper_lambda,
                                        .rigorous = cpgt_rigorous_lambda,
                                        .check_sigma = cpgt_check_lambda};
    int mode = e->o.noise_mode;
    double lambda = 0;
    if ((rc = dpdo__eng_noise_plan(e, P, &NP, &lambda))) return rc;
    P->lambda = lambda;
    e->pv.sens = 2.0;
    if (e->pv.private_run && trusted)
        dpdo__eng_note(e, "no clipping: the guarantee assumes every per-sample gradient norm <= G");
    if (mode != DPDO_NOISE_NONE)
        dpdo__eng_note(
            e, "CPGT-like reconstruction (docs/design/notes/do-adp.md §5.6 [R]): worst-case "
               "sensitivities 2G "
               "sqrt(d) (y) and "
               "2G sqrt(d) eta t (x), basic composition; not the published CPGT calibration");
    e->pv.nev = 0;
    return e->pv.private_run ? dpdo__eng_event_all(e, DPDO_MECH_LAPLACE, 2.0, lambda) : DPDO_OK;
}

static void cpgt_init(dpdo__eng *e, void *priv)
{
    cpgt_st *P = priv;
    size_t nd = (size_t)e->n * (size_t)e->d * sizeof(double);
    memset(e->blk[P->bx].cur, 0, nd);
    memset(e->blk[P->by].cur, 0, nd);
    memset(e->blk[P->bg].cur, 0, nd);
    memset(e->blk[P->bxh].cur, 0, nd);
    memset(e->blk[P->byh].cur, 0, nd);
}

static int cpgt_plan(dpdo__eng *e, void *priv, dpdo__plan *p)
{
    cpgt_st *P = priv;
    int64_t n = e->n;
    memset(p->is_comp, 1, (size_t)n);
    for (int64_t i = 0; i < n; i++)
        p->comp[i] = i;
    p->ncomp = n;
    p->nstages = 2;
    p->stage[0].who = DPDO__RUN_COMPUTING;
    p->stage[0].npat = 2;
    p->stage[0].pat[0] = (dpdo__xpat){.kind = DPDO__PAT_NET,
                                      .payload = DPDO__PAY_SPARSE,
                                      .kvar = (const int64_t *)e->scr[P->scx],
                                      .buf = P->mxv,
                                      .ibuf = P->mxi,
                                      .kbuf = e->scr[P->scx],
                                      .ld = P->kcap};
    p->stage[0].pat[1] = (dpdo__xpat){.kind = DPDO__PAT_NET,
                                      .payload = DPDO__PAY_SPARSE,
                                      .kvar = (const int64_t *)e->scr[P->scy],
                                      .buf = P->myv,
                                      .ibuf = P->myi,
                                      .kbuf = e->scr[P->scy],
                                      .ld = P->kcap};
    p->stage[1].who = DPDO__RUN_COMPUTING;
    p->stage[1].npat = 0;
    p->ncharges = 0;
    if (e->pv.private_run) { /* the summed pure epsilon after this round (the engine's guard is
                                Gaussian) */
        if (e->pv.guard_eps < INFINITY &&
            (double)p->t * 2.0 / P->lambda > e->pv.guard_eps * (1 + 1e-9))
            return DPDO__PLAN_BUDGET;
        for (int64_t i = 0; i < n; i++) {
            int rc = dpdo__plan_add_charge(e, 0, i, 1);
            if (rc) return rc;
        }
    }
    return DPDO_OK;
}

/* The round-1 values of y_i and gprev_i (= the gradient at x_0 with stream (i, 0, SAMPLE)) go to
 * the gnew row; afterwards the stored rows. */
static int cpgt_yg(dpdo__eng *e, cpgt_st *P, const dpdo__plan *p, int64_t i, const double **y,
                   const double **gp)
{
    if (p->t > 1) {
        *y = ROW(e, P->by, i), *gp = ROW(e, P->bg, i);
        return DPDO_OK;
    }
    double *g0 = SROW(e, P->sgnew, i);
    int rc = grad_eval(e, &P->g, i, 0, ROW(e, P->bx, i), g0, e->scr[P->shg]);
    *y = g0, *gp = g0;
    return rc;
}

static int cpgt_local(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t stage, int64_t i)
{
    cpgt_st *P = priv;
    size_t d = (size_t)e->d;
    const double *x = ROW(e, P->bx, i), *y, *gp;
    int rc;
    if (stage == 0) {
        if ((rc = cpgt_yg(e, P, p, i, &y, &gp))) return rc;
        double *res = e->scr[P->sres];
        char err[DPDO__ERRMSG_LEN] = "";
        dpdo__stream st;
        int noisy = P->lambda > 0; /* the noise plan leaves lambda = 0 unless noise is on */
        double t = (double)(p->t - 1), bx = P->lambda * P->rd * P->eta * t, by = P->lambda * P->rd;
        if (noisy) dpdo__stream_open(&st, e->rng, (uint64_t)i, p->t, DPDO_PURPOSE_NOISE);
        for (int v = 0; v < 2; v++) {
            const double *s = v ? y : x, *h = ROW(e, v ? P->byh : P->bxh, i);
            double b = v ? by : bx;
            for (size_t k = 0; k < d; k++)
                res[k] = s[k] - h[k];
            /* L1 sensitivity consistent with the charged event (sens / noise per release) */
            if (noisy && b > 0 &&
                (rc = dpdo__eng_noise_laplace(e, &st, i, b,
                                              b * e->pv.ev[0].sens / e->pv.ev[0].noise, res, d)))
                return rc;
            int64_t *cnt = e->scr[v ? P->scy : P->scx];
            int64_t *mi = (v ? P->myi : P->mxi) + (size_t)i * (size_t)P->kcap;
            double *mv = (v ? P->myv : P->mxv) + (size_t)i * (size_t)P->kcap;
            /* y's stream id is offset by n so that random compressors draw independently for x and
             * y */
            rc = dpdo__compressor_apply(e->comp, res, e->rng, (uint64_t)(v ? e->n + i : i), p->t,
                                        mi, mv, &cnt[i], err);
            if (rc) return dpdo__eng_err(e, rc, i, "compressor: %s", err);
        }
        dpdo__eng_probe(e, DPDO__PH_NOISE);
        return DPDO_OK;
    }
    /* stage 1: the updates over the new public copies */
    if ((rc = cpgt_yg(e, P, p, i, &y, &gp))) return rc;
    const struct dpdo_network *net = e->net;
    double *xn = SROW(e, P->sxnew, i), *yn = SROW(e, P->synew, i), *g = e->scr[P->sg];
    const double *hxi = SROW(e, P->sxh, i), *hyi = SROW(e, P->syh, i);
    memset(xn, 0, d * sizeof(double));
    memset(yn, 0, d * sizeof(double));
    for (int64_t q = net->rowptr[i]; q < net->rowptr[i + 1]; q++) {
        int64_t j = net->col[q];
        if (j == i) continue;
        const double *hxj = SROW(e, P->sxh, j), *hyj = SROW(e, P->syh, j);
        double w = net->val[q];
        for (size_t k = 0; k < d; k++) {
            xn[k] += w * (hxj[k] - hxi[k]);
            yn[k] += w * (hyj[k] - hyi[k]);
        }
    }
    dpdo__eng_probe(e, DPDO__PH_GOSSIP);
    for (size_t k = 0; k < d; k++)
        xn[k] = x[k] + P->gamma * xn[k] - P->eta * y[k];
    if ((rc = grad_eval(e, &P->g, i, p->t, xn, g, e->scr[P->shg]))) return rc;
    dpdo__eng_probe(e, DPDO__PH_GRAD);
    double *gn = SROW(e, P->sgnew, i); /* may alias gp in round 1: read gp first */
    for (size_t k = 0; k < d; k++) {
        yn[k] = y[k] + P->gamma * yn[k] + g[k] - gp[k];
        gn[k] = g[k];
    }
    dpdo__eng_probe(e, DPDO__PH_PRIMAL);
    return DPDO_OK;
}

/* Row j of the new public copies: the committed copy plus j's message (every holder adds the
 * same message, so the result is the same wherever it is computed). */
static void cpgt_copy_row(dpdo__eng *e, cpgt_st *P, int64_t j)
{
    size_t d = (size_t)e->d;
    for (int v = 0; v < 2; v++) {
        double *h = SROW(e, v ? P->syh : P->sxh, j);
        memcpy(h, ROW(e, v ? P->byh : P->bxh, j), d * sizeof(double));
        const int64_t *cnt = e->scr[v ? P->scy : P->scx];
        const int64_t *mi = (v ? P->myi : P->mxi) + (size_t)j * (size_t)P->kcap;
        const double *mv = (v ? P->myv : P->mxv) + (size_t)j * (size_t)P->kcap;
        for (int64_t q = 0; q < cnt[j]; q++)
            h[mi[q]] += mv[q];
    }
}

static int cpgt_combine(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t stage, int64_t i)
{
    (void)p;
    cpgt_st *P = priv;
    if (stage != 0) return DPDO_OK;
    cpgt_copy_row(e, P, i); /* own row */
    if (e->dist) { /* distributed: also the copies of neighbours hosted elsewhere (their messages
                      arrived) */
        const struct dpdo_network *net = e->net;
        for (int64_t q = net->rowptr[i]; q < net->rowptr[i + 1]; q++)
            if (!dpdo__eng_hosted(e, net->col[q])) cpgt_copy_row(e, P, net->col[q]);
    }
    return DPDO_OK;
}

static int cpgt_check(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    (void)p;
    cpgt_st *P = priv;
    static const char *const nm[] = {"x", "y", "xhat", "yhat"};
    const int sc[4] = {P->sxnew, P->synew, P->sxh, P->syh};
    for (int64_t i = 0; i < e->n; i++) /* node by node: the first bad node's first bad row */
        for (int v = 0; v < 4; v++) {
            int rc = dpdo__eng_check_rows(e, sc[v], &i, 1, nm[v], "after the update");
            if (rc) return rc;
        }
    return DPDO_OK;
}

static void cpgt_commit(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    (void)p;
    cpgt_st *P = priv;
    size_t nd = (size_t)e->n * (size_t)e->d * sizeof(double);
    memcpy(e->blk[P->bx].cur, e->scr[P->sxnew], nd);
    memcpy(e->blk[P->by].cur, e->scr[P->synew], nd);
    memcpy(e->blk[P->bg].cur, e->scr[P->sgnew], nd);
    memcpy(e->blk[P->bxh].cur, e->scr[P->sxh], nd);
    memcpy(e->blk[P->byh].cur, e->scr[P->syh], nd);
}

/* CPGT's parameters (dpdo_param_*) */
static const dpdo__pdef CPGT_PARAMS[] = {{DPDO_PARAM_CPGT_GAMMA, "cpgt-gamma", 1, 0x1p-1000, 1, 0,
                                          "CPGT-like consensus step; default 0.05", .def = 0.05},
                                         {.name = NULL}};

const dpdo__alg_vt dpdo__vt_cpgt = {
    .name = "cpgt",
    .title = "CPGT-like reconstruction (after Xie et al. 2023): Laplace-perturbed, compressed "
             "gradient tracking",
    .priv_size = sizeof(cpgt_st),
    .params = CPGT_PARAMS,
    .paper = NULL,
    .needs_net = 1,
    .distributable = 1,
    .uses_compressor = 1,
    .configure = cpgt_configure,
    .prepare = cpgt_prepare,
    .init = cpgt_init,
    .plan = cpgt_plan,
    .local = cpgt_local,
    .combine = cpgt_combine,
    .check = cpgt_check,
    .commit = cpgt_commit,
    .output = x_output,
    .release = cpgt_release,
};
