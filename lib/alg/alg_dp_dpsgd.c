/* SPDX-License-Identifier: BSD-3-Clause */
/* DP-D-PSGD: decentralized parallel SGD (Lian, Zhang, Zhang, Hsieh, Zhang, Liu, NeurIPS 2017,
 * Algorithm 1 "D-PSGD") with the DP-SGD mechanism (Abadi et al., CCS 2016: per-sample l2
 * clipping and Gaussian noise) at every node. State per node: x_i. Round t (every node):
 *   g_i = mean over B rows of node i's shard (WOR sample, stream (i, t, SAMPLE)) of the per-sample
 *         loss gradient clipped to l2 norm C (clip; NaN = options.lipschitz)
 *   g~_i = g_i + N(0, sigma^2 I)                   (stream (i, t, NOISE); sensitivity 2C/B)
 *   y_i = x_i - eta_t (g~_i + grad h(x_i))         (sent to the graph neighbours)
 *   x_i' = (1 - mix) y_i + mix sum_j W_ij y_j      (W: the network's gossip matrix, i included)
 * with eta_t = step_size / t^step_power (defaults 0.1 and 0). Only y_i leaves the node; it is a
 * function of the noisy gradient and of earlier releases, so the run is T Gaussian releases per
 * node of a WOR(B of q_i) subsampled gradient. RIGOROUS calibrates sigma for them (the engine's
 * accountant); there is no paper bound (PAPER is refused). docs/algorithms/dp-dpsgd.md. */
#include "../engine/engine_impl.h"
#include "../engine/par_impl.h"
#include "../model/model_impl.h"
#include "../rng/rng_impl.h"
#include <math.h>
#include <string.h>

typedef struct dps {
    int bx, sy, sxn;           /* block x; scratch y (messages), x' (n x d each) */
    double eta0, epow, mix, C; /* step, its decay, mixing weight, clip */
    int64_t B, idx_B;
    int64_t *sidx;             /* n x B sample indices */
    dpdo__sampling_desc *samp; /* n */
    double *ws;                /* per thread slot: d doubles for grad h */
} dps;

#define ROW(e, b, i) ((e)->blk[(b)].cur + (size_t)(i) * (size_t)(e)->d)
#define SROW(e, k, i) ((double *)(e)->scr[(k)] + (size_t)(i) * (size_t)(e)->d)

enum { P_MIX = 0 }; /* rows of PARAMS */

static void release(dpdo__eng *e, void *priv)
{
    (void)e;
    dps *P = priv;
    dpdo__free(P->sidx), dpdo__free(P->samp), dpdo__free(P->ws);
    P->sidx = NULL, P->samp = NULL, P->ws = NULL, P->idx_B = 0;
}

static int configure(dpdo__eng *e, void *priv)
{
    dps *P = priv;
    int64_t n = e->n, d = e->d;
    P->bx = dpdo__eng_block(e, "x", n, d);
    size_t nd = (size_t)n * (size_t)d * sizeof(double);
    P->sy = dpdo__eng_scratch(e, nd);
    P->sxn = dpdo__eng_scratch(e, nd);
    P->samp = dpdo__calloc((size_t)n, sizeof *P->samp);
    P->ws = dpdo__alloc_array((size_t)dpdo__par_slots(e), (size_t)d * sizeof(double));
    return P->samp && P->ws ? DPDO_OK : DPDO_E_NOMEM;
}

/* The noise skeleton's callbacks (dpdo__eng_noise_plan): no paper bound; RIGOROUS calibrates
 * Gaussian(WOR(B of q), 2C/B, sigma) for T releases per node. */
static int paper_sigma(dpdo__eng *e, void *priv, dpdo_paper *pp, double *sigma)
{
    (void)priv, (void)pp, (void)sigma;
    return dpdo__err(e->err, DPDO_E_UNSUPPORTED,
                     "prepare: dp-dpsgd has no paper bound: use DPDO_NOISE_RIGOROUS or _FIXED");
}

static int rigorous(dpdo__eng *e, void *priv, double *sigma)
{
    dps *P = priv;
    int64_t qmin = e->qmin;
    dpdo__sampling_desc sd = {DPDO_SAMPLING_WOR, (double)P->B / (double)qmin, qmin, P->B};
    double K = dpdo__eng_calib_counts(e, NULL, 1.0); /* every node releases every round */
    int rc = dpdo__eng_calibrate_sigma(e, &sd, e->pv.sens, K, sigma);
    if (rc) return rc;
    dpdo__eng_note_wor_floor(e, &sd, e->pv.sens, K, *sigma);
    return DPDO_OK;
}

static int prepare(dpdo__eng *e, void *priv)
{
    dps *P = priv;
    int64_t n = e->n, d = e->d, B = DPDO__PI(e, DPDO_PARAM_BATCH);
    double ss = DPDO__PD(e, DPDO_PARAM_STEP_SIZE), sp = DPDO__PD(e, DPDO_PARAM_STEP_POWER);
    P->eta0 = isnan(ss) ? 0.1 : ss;
    P->epow = isnan(sp) ? 0.0 : sp;
    P->mix = DPDO__OWN_D(e, P_MIX);
    if (B > e->qmin)
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: batch = %lld exceeds the smallest shard (%lld rows)",
                         (long long)B, (long long)e->qmin);
    double clip = DPDO__PD(e, DPDO_PARAM_CLIP);
    P->C = isnan(clip) ? e->o.lipschitz : clip;
    if (e->o.noise_mode != DPDO_NOISE_NONE && P->C == INFINITY)
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: clip = inf: the DP-SGD mechanism needs a finite clip norm");
    if (e->reg) { /* grad h enters every step: h must be differentiable */
        char err[DPDO__ERRMSG_LEN] = "";
        double *x0 = SROW(e, P->sy, 0), *g = SROW(e, P->sxn, 0);
        memset(x0, 0, (size_t)d * sizeof(double));
        int rc = dpdo__reg_grad(e->reg, x0, g, err);
        if (rc)
            return dpdo__err(e->err, rc,
                             "prepare: the regularizer must be differentiable for dp-dpsgd: %s",
                             err);
    }
    if (B != P->idx_B) {
        int64_t *si = dpdo__alloc_array((size_t)n * (size_t)B, sizeof *si);
        if (!si) return dpdo__err(e->err, DPDO_E_NOMEM, "prepare: out of memory");
        dpdo__free(P->sidx);
        P->sidx = si, P->idx_B = B;
    }
    P->B = B;
    e->pv.sens = 2.0 * (P->C == INFINITY ? 0.0 : P->C) / (double)B; /* replace-one, mean of B */
    static const dpdo__noise_plan NP = {.paper_sigma = paper_sigma, .rigorous = rigorous};
    double sigma = 0;
    int rc = dpdo__eng_noise_plan(e, P, &NP, &sigma);
    if (rc) return rc;
    return dpdo__eng_events_wor(e, B, e->pv.sens, sigma, P->samp);
}

static void init(dpdo__eng *e, void *priv)
{
    dps *P = priv;
    memset(e->blk[P->bx].cur, 0, (size_t)e->n * (size_t)e->d * sizeof(double)); /* x_0 = 0 */
}

static int plan(dpdo__eng *e, void *priv, dpdo__plan *p)
{
    dps *P = priv;
    dpdo__plan_bernoulli(e, p, 1.0); /* every node, no draw */
    dpdo__plan_list(p, e->n);
    p->nstages = 1;
    p->stage[0].who = DPDO__RUN_COMPUTING;
    p->stage[0].npat = 1;
    p->stage[0].pat[0] = (dpdo__xpat){
        .kind = DPDO__PAT_NET, .payload = DPDO__PAY_DENSE, .buf = e->scr[P->sy], .ld = e->d};
    if (dpdo__plan_charge_computing(e, p, 1)) return e->plan.charge_err;
    return DPDO_OK;
}

/* y_i = x_i - eta_t (mean clipped gradient + noise + grad h(x_i)) */
static int local(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t stage, int64_t i)
{
    (void)stage;
    dps *P = priv;
    size_t d = (size_t)e->d;
    const double *x = ROW(e, P->bx, i);
    double *y = SROW(e, P->sy, i);
    struct dpdo_node *nd = e->nodes[i];
    dpdo__stream st;
    int64_t *idx = P->sidx + (size_t)i * (size_t)P->B, got = 0;
    dpdo__stream_open(&st, e->rng, (uint64_t)i, p->t, DPDO_PURPOSE_SAMPLE);
    int rc = dpdo__sampling_draw(&P->samp[i], &st, e->q[i], idx, &got);
    if (rc)
        return dpdo__eng_err(e, rc, i, "drawing the sample failed (generator code %d)",
                             dpdo__stream_cb_code(&st));
    char err[DPDO__ERRMSG_LEN] = "";
    memset(y, 0, d * sizeof(double));
    double C = P->C == INFINITY ? 0.0 : P->C; /* 0: no clipping (a run without noise) */
    rc = dpdo__loss_eval_into(nd->loss, nd->shard, x, idx, got, C, NULL, y, NULL, nd->scratch, err);
    if (rc) return dpdo__eng_err(e, rc, i, "%s", err);
    dpdo__eng_probe(e, DPDO__PH_GRAD);
    if (e->pv.sigma > 0) {
        dpdo__stream_open(&st, e->rng, (uint64_t)i, p->t, DPDO_PURPOSE_NOISE);
        if ((rc = dpdo__eng_noise_gauss(e, &st, i, e->pv.sigma, e->pv.sens, y, d))) return rc;
    }
    dpdo__eng_probe(e, DPDO__PH_NOISE);
    double *hg = P->ws + (size_t)dpdo__par_slot(e, i) * d;
    if (e->reg && (rc = dpdo__reg_grad(e->reg, x, hg, err)))
        return dpdo__eng_err(e, rc, i, "regularizer: %s", err);
    double eta = P->epow == 0 ? P->eta0 : P->eta0 / pow((double)p->t, P->epow);
    for (size_t k = 0; k < d; k++)
        y[k] = x[k] - eta * (e->reg ? y[k] + hg[k] : y[k]);
    return DPDO_OK;
}

/* x_i' = (1 - mix) y_i + mix sum_j W_ij y_j over i's closed neighbourhood (CSR order) */
static int combine(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t stage, int64_t i)
{
    (void)p, (void)stage;
    dps *P = priv;
    size_t d = (size_t)e->d;
    const struct dpdo_network *net = e->net;
    double *xn = SROW(e, P->sxn, i);
    memset(xn, 0, d * sizeof(double));
    for (int64_t q = net->rowptr[i]; q < net->rowptr[i + 1]; q++) {
        const double *yj = SROW(e, P->sy, net->col[q]), w = net->val[q];
        for (size_t k = 0; k < d; k++)
            xn[k] += w * yj[k];
    }
    if (P->mix != 1.0) {
        const double *yi = SROW(e, P->sy, i);
        for (size_t k = 0; k < d; k++)
            xn[k] = (1.0 - P->mix) * yi[k] + P->mix * xn[k];
    }
    dpdo__eng_probe(e, DPDO__PH_GOSSIP);
    return DPDO_OK;
}

static int check(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    (void)p;
    dps *P = priv;
    size_t d = (size_t)e->d, k;
    for (int64_t i = 0; i < e->n; i++) {
        if (!dpdo__eng_hosted(e, i)) continue;
        const double *xn = SROW(e, P->sxn, i);
        if ((k = dpdo__first_nonfinite(xn, d)) < d)
            return dpdo__eng_err(e, DPDO_E_NUMERIC, i, "x[%zu] = %g after the update", k, xn[k]);
    }
    return DPDO_OK;
}

static void commit(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    (void)p;
    dps *P = priv;
    memcpy(e->blk[P->bx].cur, e->scr[P->sxn], (size_t)e->n * (size_t)e->d * sizeof(double));
}

static void output(const dpdo__eng *e, const void *priv, int64_t i, double *out)
{
    const dps *P = priv;
    memcpy(out, ROW(e, P->bx, i), (size_t)e->d * sizeof(double));
}

/* DP-D-PSGD's parameters (keys assigned by the library: dpdo_param_find("dpsgd-mix")) */
static const dpdo__pdef PARAMS[] = {
    [P_MIX] = {0, "dpsgd-mix", 1, 0x1p-1000, 1, 0,
               "gossip weight: x_i = (1 - mix) y_i + mix sum_j W_ij y_j; default 1 (plain W)",
               .def = 1.0},
    {.name = NULL}};

/* the tests' setup: defaults; test_split_golden's hashes of its run (DPDO_GOLDEN_PRINT=1) */
static const dpdo__fixture FIXTURE = {
    .golden = {0xc4fa2de372d64d19ull, 0xc4fa2de372d64d19ull, 0x6a64eaf55bbfff68ull}};

const dpdo__alg_vt dpdo__vt_dp_dpsgd = {
    .name = "dp-dpsgd",
    .title = "DP-D-PSGD: decentralized parallel SGD (Lian et al. 2017) with per-node clipped "
             "gradients and Gaussian noise (DP-SGD)",
    .priv_size = sizeof(dps),
    .fixture = &FIXTURE,
    .params = PARAMS,
    .needs_net = 1,
    .distributable = 1,
    .parallel = 1,
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
