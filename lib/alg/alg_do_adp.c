/* SPDX-License-Identifier: BSD-3-Clause */
/* DO-ADP: decentralized momentum SGD with random activation and compressed
 * (sparsified) difference messages (Algorithm 1; shared/spec/do-adp.md §2).
 * State per agent: x_i (private), m_i (momentum), xhat_i (public copy; one
 * shared replica per agent, spec §2.1 [R]). Round t, every agent i (phase A,
 * reading only round-t values):
 *   cons_i = gamma sum_j w_ij (xhat_j - xhat_i)
 *   active (Bernoulli(p), stream (i, t, ACTIVATION)):
 *     g = mean over B samples (stream (i, t, SAMPLE)) of the per-sample
 *         gradient clamped coordinate-wise to +-G/sqrt(d)
 *     m_i = g + N(0, sigma^2 I) (stream (i, t, NOISE)) + beta m_i
 *     x_i = x_i - alpha m_i + cons_i
 *     s_i = C(x_i - xhat_i)            (the compressor; k index/value pairs)
 *   inactive: m_i = beta m_i; x_i = x_i + cons_i; nothing sent
 * phase B (commit): xhat_j += s_j for every active j (every replica alike).
 * docs/algorithms/do-adp.md explains the privacy modes and caveats. */
#include "../engine/engine_impl.h"
#include "../engine/par_impl.h"
#include "../model/model_impl.h"
#include "../net/compress_impl.h"
#include "../rng/rng_impl.h"
#include "dpdo/compressor.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct adp {
    int bx, bm, bh;
    int sxnew, smnew, sres, sg, scnt, shg;
    double p, beta, gamma, alpha, G, cl, clip;
    int coord_clamp;
    int64_t B, kcap, idx_B;
    int64_t *sidx;             /* n x B sample indices */
    int64_t *midx;             /* n x kcap message indices */
    double *mval;              /* n x kcap message values */
    dpdo__sampling_desc *samp; /* n */
    double *ws;                /* tasks 1.. of the thread pool: res, g, hg (3d doubles) + d keys */
    unsigned char *bad;        /* n: local() wrote a non-finite x' or m' (outside the arena) */
} adp;

#define ROW(e, b, i) ((e)->blk[(b)].cur + (size_t)(i) * (size_t)(e)->d)
#define SROW(e, k, i) ((double *)(e)->scr[(k)] + (size_t)(i) * (size_t)(e)->d)

/* the finiteness test of x' and m', run by local() while the rows are in L1 (so it runs on the
 * node's thread, not in the serial check()) */
static unsigned char nonfinite_rows(const double *xn, const double *mn, size_t d)
{
    return dpdo__first_nonfinite(xn, d) < d || dpdo__first_nonfinite(mn, d) < d;
}

static const int32_t KEYS[] = {DPDO_PARAM_ADP_P, DPDO_PARAM_ADP_BETA, DPDO_PARAM_ADP_GAMMA, 0};

static void defaults(dpdo__eng *e)
{
    DPDO__PD(e, DPDO_PARAM_ADP_P) = 1.0;
    DPDO__PD(e, DPDO_PARAM_ADP_BETA) = 0.15;
    DPDO__PD(e, DPDO_PARAM_ADP_GAMMA) = 0.05;
}

static void release(dpdo__eng *e, void *priv)
{
    (void)e;
    adp *P = priv;
    dpdo__free(P->sidx);
    dpdo__free(P->midx);
    dpdo__free(P->mval);
    dpdo__free(P->samp);
    dpdo__free(P->ws);
    dpdo__free(P->bad);
    P->sidx = NULL, P->midx = NULL, P->mval = NULL, P->samp = NULL, P->ws = NULL, P->bad = NULL;
    P->idx_B = 0, P->kcap = 0;
}

static int configure(dpdo__eng *e, void *priv)
{
    adp *P = priv;
    int64_t n = e->n, d = e->d;
    P->bx = dpdo__eng_block(e, "x", n, d);
    P->bm = dpdo__eng_block(e, "m", n, d);
    P->bh = dpdo__eng_block(e, "xhat", n, d);
    size_t nd = (size_t)n * (size_t)d * sizeof(double);
    P->sxnew = dpdo__eng_scratch(e, nd);
    P->smnew = dpdo__eng_scratch(e, nd);
    P->sres = dpdo__eng_scratch(e, (size_t)d * sizeof(double));
    P->sg = dpdo__eng_scratch(e, (size_t)d * sizeof(double));
    P->scnt = dpdo__eng_scratch(e, (size_t)n * sizeof(int64_t));
    P->shg = dpdo__eng_scratch(e, (size_t)d * sizeof(double));
    P->samp = dpdo__calloc((size_t)n, sizeof *P->samp);
    /* tasks 1.. of the thread pool get their own res, g, hg and top-k keys; task 0 (and a serial
     * run) uses the arena's rows and the compressor's keys, exactly as before threads */
    int32_t extra = dpdo__par_slots(e) - 1;
    P->ws = extra > 0 ? dpdo__alloc_array((size_t)extra * 4, (size_t)d * sizeof(double)) : NULL;
    P->bad = dpdo__calloc((size_t)n, 1);
    return P->samp && P->bad && (extra == 0 || P->ws) ? DPDO_OK : DPDO_E_NOMEM;
}

/* The noise skeleton's callbacks (dpdo__eng_noise_plan). */
static int paper_set(dpdo__eng *e, void *priv, dpdo_paper *pp)
{
    adp *P = priv;
    double Gs = P->clip > 0 ? P->clip : P->G; /* l2 bound of one per-sample gradient */
    int rc;
    if ((rc = dpdo_paper_set(pp, "eps", e->o.epsilon)) ||
        (rc = dpdo_paper_set(pp, "delta0", e->o.delta)) || (rc = dpdo_paper_set(pp, "p", P->p)) ||
        (rc = dpdo_paper_set(pp, "k", (double)dpdo_compressor_k(e->comp))) ||
        (rc = dpdo_paper_set(pp, "d", (double)e->d)) ||
        (rc = dpdo_paper_set(pp, "q", (double)e->qmin)) || (rc = dpdo_paper_set(pp, "G", Gs)) ||
        (rc = dpdo_paper_set(pp, "T", (double)DPDO__PI(e, DPDO_PARAM_MAX_ROUNDS))))
        return rc;
    return DPDO_OK;
}

static int paper_sigma(dpdo__eng *e, void *priv, dpdo_paper *pp, double *sigma)
{
    dpdo_paper_get(pp, "sigma_paper", sigma);
    return DPDO_OK;
}

/* RIGOROUS: activation is observable and Top-k selection is data dependent, so neither p nor k/d
 * is claimed: Gaussian(WOR(B of q), 2G/B, sigma) per active round */
static int rigorous(dpdo__eng *e, void *priv, double *sigma)
{
    adp *P = priv;
    int64_t B = P->B, qmin = e->qmin;
    dpdo__sampling_desc sd = {DPDO_SAMPLING_WOR, (double)B / (double)qmin, qmin, B};
    double K = dpdo__eng_calib_counts(e, NULL, P->p); /* per node: Binomial(T, p_i) quantile */
    int rc = dpdo__eng_calibrate_sigma(e, &sd, e->pv.sens, K, sigma);
    if (rc) return rc;
    dpdo__eng_note_wor_floor(e, &sd, e->pv.sens, K, *sigma);
    return DPDO_OK;
}

static void noisy_notes(dpdo__eng *e, void *priv)
{
    adp *P = priv;
    if (dpdo_compressor_k(e->comp) < e->d)
        dpdo__eng_note(e, "the paper's k/d noise saving is not claimed by the rigorous figure (the "
                          "Top-k selection "
                          "depends on the data, spec do-adp §7 item 1)");
    if (P->p < 1)
        dpdo__eng_note(
            e,
            "activation treated as public: inactive agents send nothing, so no amplification by p "
            "(spec do-adp §7 item 19)");
}

static int prepare(dpdo__eng *e, void *priv)
{
    adp *P = priv;
    int64_t n = e->n, d = e->d;
    P->p = DPDO__PD(e, DPDO_PARAM_ADP_P);
    P->beta = DPDO__PD(e, DPDO_PARAM_ADP_BETA);
    P->gamma = DPDO__PD(e, DPDO_PARAM_ADP_GAMMA);
    double ss = DPDO__PD(e, DPDO_PARAM_STEP_SIZE);
    P->alpha = isnan(ss) ? 0.001 : ss;
    if (!(P->alpha >= 0))
        return dpdo__err(e->err, DPDO_E_INVAL, "prepare: step_size (alpha) = %g must be >= 0",
                         P->alpha);
    int64_t B = DPDO__PI(e, DPDO_PARAM_BATCH), qmin = e->qmin;
    if (B > qmin)
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: batch = %lld exceeds the smallest shard (%lld rows)",
                         (long long)B, (long long)qmin);
    P->B = B;
    if (e->reg) { /* h enters every per-sample gradient (spec §5.2: ||x||^2/(2q) inside l_i): it
                     must be smooth */
        char err[DPDO__ERRMSG_LEN] = "";
        double *t = e->scr[P->shg];
        memset(e->scr[P->sres], 0, (size_t)d * sizeof(double));
        int rc = dpdo__reg_grad(e->reg, e->scr[P->sres], t, err);
        if (rc)
            return dpdo__err(e->err, rc,
                             "prepare: the regularizer must be differentiable for DO-ADP: %s", err);
    }
    int64_t kcap = dpdo_compressor_capacity(e->comp);
    if (B != P->idx_B || kcap != P->kcap) {
        int64_t *si = dpdo__alloc_array((size_t)n * (size_t)B, sizeof *si);
        int64_t *mi = dpdo__calloc((size_t)n * (size_t)kcap, sizeof *mi);
        double *mv = dpdo__calloc((size_t)n * (size_t)kcap, sizeof *mv);
        if (!si || !mi || !mv) {
            dpdo__free(si), dpdo__free(mi), dpdo__free(mv);
            return dpdo__err(e->err, DPDO_E_NOMEM, "prepare: out of memory");
        }
        dpdo__free(P->sidx), dpdo__free(P->midx), dpdo__free(P->mval);
        P->sidx = si, P->midx = mi, P->mval = mv;
        P->idx_B = B, P->kcap = kcap;
    }
    /* per-sample gradient bound: coordinate clamp to G/sqrt(d) (spec §2.4 A5, [R]) by
     * default; +inf = no clipping (trusted); a finite clip = l2 per-sample clipping */
    P->G = e->o.lipschitz;
    double clip = DPDO__PD(e, DPDO_PARAM_CLIP);
    P->coord_clamp = isnan(clip);
    P->cl = P->G / sqrt((double)d);
    P->clip = isnan(clip) || clip == INFINITY ? 0.0 : clip;
    int trusted = clip == INFINITY;
    double Gs = P->clip > 0 ? P->clip : P->G; /* l2 bound of one per-sample gradient */
    e->pv.sens = 2.0 * Gs / (double)B;        /* replace-one, mean of B */
    static const dpdo__noise_plan NP = {.paper = "do-adp-thm1",
                                        .theorem = "Theorem 1",
                                        .invalid_note = "paper bound invalid",
                                        .paper_sigma_key = "sigma",
                                        .paper_set = paper_set,
                                        .paper_sigma = paper_sigma,
                                        .rigorous = rigorous,
                                        .notes = noisy_notes};
    double sigma = 0;
    int rc = dpdo__eng_noise_plan(e, P, &NP, &sigma);
    if (rc) return rc;
    if (e->pv.private_run && trusted) {
        /* clip = inf trusts the data: refuse when the per-sample gradient bound is known to exceed
         * G (as DP-DDA does); the regularizer's part is the same on neighbouring data */
        dpdo__eng_note(e, "no clipping: the guarantee assumes every per-sample gradient norm <= G");
        for (int64_t i = 0; i < n; i++) {
            double Li = 0;
            if (e->nodes[i]->loss->kind == DPDO_LOSS_KIND_BATCH)
                continue; /* no per-row bound to check */
            if (dpdo_node_lipschitz(e->nodes[i], INFINITY, &Li) == DPDO_OK &&
                Li > P->G * (1 + 1e-12))
                return dpdo__err(e->err, DPDO_E_INVAL,
                                 "prepare: node %lld: per-sample gradients reach %g > G = "
                                 "lipschitz = %g and clip = inf "
                                 "turns clipping off; set a finite clip, leave clip unset "
                                 "(coordinate clamp) or raise "
                                 "lipschitz",
                                 (long long)i, Li, P->G);
        }
    }
    return dpdo__eng_events_wor(e, B, e->pv.sens, sigma, P->samp);
}

static void init(dpdo__eng *e, void *priv)
{
    adp *P = priv;
    size_t nd = (size_t)e->n * (size_t)e->d * sizeof(double);
    memset(e->blk[P->bx].cur, 0, nd); /* x_0 = 0 (spec §2.3 [R]) */
    memset(e->blk[P->bm].cur, 0, nd);
    memset(e->blk[P->bh].cur, 0, nd);
}

static int plan(dpdo__eng *e, void *priv, dpdo__plan *p)
{
    adp *P = priv;
    dpdo__plan_bernoulli(e, p, P->p);
    dpdo__plan_list(p, e->n);
    p->nstages = 1;
    p->stage[0].who = DPDO__RUN_ALL;
    p->stage[0].npat = 1;
    /* the identity compressor sends dense vectors: no indices on the wire */
    int dense = strcmp(dpdo_compressor_name(e->comp), "identity") == 0;
    p->stage[0].pat[0] = (dpdo__xpat){.kind = DPDO__PAT_NET,
                                      .payload = dense ? DPDO__PAY_DENSE : DPDO__PAY_SPARSE,
                                      .kvar = dense ? NULL : (const int64_t *)e->scr[P->scnt],
                                      .buf = P->mval,
                                      .ibuf = P->midx,
                                      .kbuf = e->scr[P->scnt],
                                      .ld = P->kcap};
    if (dpdo__plan_charge_computing(e, p, 1)) return e->plan.charge_err;
    return DPDO_OK;
}

static int local(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t stage, int64_t i)
{
    (void)stage;
    adp *P = priv;
    size_t d = (size_t)e->d;
    const struct dpdo_network *net = e->net;
    const double *x = ROW(e, P->bx, i), *m = ROW(e, P->bm, i), *hi = ROW(e, P->bh, i);
    double *xn = SROW(e, P->sxnew, i), *mn = SROW(e, P->smnew, i);
    int64_t *cnt = e->scr[P->scnt];
    unsigned char *bad = P->bad;
    /* A2: cons_i = gamma sum_j w_ij (xhat_j - xhat_i), written into xn (the j = i term is 0) */
    memset(xn, 0, d * sizeof(double));
    for (int64_t q = net->rowptr[i]; q < net->rowptr[i + 1]; q++) {
        int64_t j = net->col[q];
        if (j == i) continue;
        const double *hj = ROW(e, P->bh, j);
        double w = net->val[q];
        for (size_t k = 0; k < d; k++)
            xn[k] += w * (hj[k] - hi[k]);
    }
    for (size_t k = 0; k < d; k++)
        xn[k] *= P->gamma;
    if (!p->is_comp[i]) { /* A12-A13 */
        for (size_t k = 0; k < d; k++) {
            mn[k] = P->beta * m[k];
            xn[k] += x[k];
        }
        bad[i] = nonfinite_rows(xn, mn, d);
        cnt[i] = 0;
        return DPDO_OK;
    }
    /* A4-A5: sample(s) and the clipped gradient, averaged */
    struct dpdo_node *nd = e->nodes[i];
    dpdo__stream st;
    int64_t *idx = P->sidx + (size_t)i * (size_t)P->B, got = 0;
    dpdo__stream_open(&st, e->rng, (uint64_t)i, p->t, DPDO_PURPOSE_SAMPLE);
    int rc = dpdo__sampling_draw(&P->samp[i], &st, e->q[i], idx, &got);
    if (rc)
        return dpdo__eng_err(e, rc, i, "drawing the sample failed (generator code %d)",
                             dpdo__stream_cb_code(&st));
    char err[DPDO__ERRMSG_LEN] = "";
    int32_t slot = dpdo__par_slot(e, i); /* this task's workspace */
    double *ws = slot ? P->ws + (size_t)(slot - 1) * 4 * d : NULL;
    double *g = ws ? ws + d : e->scr[P->sg], *hg = ws ? ws + 2 * d : e->scr[P->shg];
    if (e->reg && (rc = dpdo__reg_grad(e->reg, x, hg, err)))
        return dpdo__eng_err(e, rc, i, "regularizer: %s", err);
    memset(mn, 0, d * sizeof(double)); /* mn accumulates the mean gradient */
    if (P->coord_clamp) {              /* per-sample gradient (loss + h) clamped coordinate-wise */
        for (int64_t b = 0; b < got; b++) {
            rc = dpdo__loss_eval_into(nd->loss, nd->shard, x, idx + b, 1, 0.0, NULL, g, NULL,
                                      nd->scratch, err);
            if (rc) return dpdo__eng_err(e, rc, i, "%s", err);
            if (e->reg)
                for (size_t k = 0; k < d; k++)
                    g[k] += hg[k];
            /* inline clamp: the values of fmin(fmax(g, -cl), cl) (NaN -> -cl included), no call */
            const double cl = P->cl;
            for (size_t k = 0; k < d; k++) {
                double t = g[k] > -cl ? g[k] : -cl;
                mn[k] += t < cl ? t : cl;
            }
        }
        if (got > 1)
            for (size_t k = 0; k < d; k++)
                mn[k] /= (double)got;
    } else { /* l2 clipping of the loss part; h is the same on neighbouring data */
        rc = dpdo__loss_eval_into(nd->loss, nd->shard, x, idx, got, P->clip, NULL, mn, NULL,
                                  nd->scratch, err);
        if (rc) return dpdo__eng_err(e, rc, i, "%s", err);
        if (e->reg)
            for (size_t k = 0; k < d; k++)
                mn[k] += hg[k];
    }
    if (DPDO__WEAKENED(e, DPDO__WEAKEN_SENS_DOUBLE)) /* test build: twice the charged sensitivity */
        for (size_t k = 0; k < d; k++)
            mn[k] *= 2;
    dpdo__eng_probe(e, DPDO__PH_GRAD);
    /* A6-A8 */
    if (e->pv.sigma > 0) {
        dpdo__stream_open(&st, e->rng, (uint64_t)i, p->t, DPDO_PURPOSE_NOISE);
        if ((rc = dpdo__eng_noise_gauss(e, &st, i, e->pv.sigma, e->pv.sens, mn, d))) return rc;
    }
    dpdo__eng_probe(e, DPDO__PH_NOISE);
    for (size_t k = 0; k < d; k++) {
        mn[k] = mn[k] + P->beta * m[k];
        xn[k] = x[k] - P->alpha * mn[k] + xn[k];
    }
    bad[i] = nonfinite_rows(xn, mn, d);
    /* A9: s_i = C(x_i' - xhat_i) */
    double *res = ws ? ws : e->scr[P->sres];
    for (size_t k = 0; k < d; k++)
        res[k] = xn[k] - hi[k];
    rc = dpdo__compressor_apply_ws(
        e->comp, res, e->rng, (uint64_t)i, p->t, P->midx + (size_t)i * (size_t)P->kcap,
        P->mval + (size_t)i * (size_t)P->kcap, &cnt[i], ws ? (uint64_t *)(ws + 3 * d) : NULL, err);
    if (rc) return dpdo__eng_err(e, rc, i, "compressor: %s", err);
    dpdo__eng_probe(e, DPDO__PH_PRIMAL);
    return DPDO_OK;
}

static int combine(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t stage, int64_t i)
{
    (void)e, (void)priv, (void)p, (void)stage, (void)i;
    return DPDO_OK; /* phase B happens in commit: every replica of xhat_j adds s_j */
}

static int check(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    (void)p;
    adp *P = priv;
    size_t d = (size_t)e->d;
    const unsigned char *bad = P->bad;
    for (int64_t i = 0; i < e->n; i++) {
        /* local() found x' and m' finite (the same test, on its thread); rows of nodes hosted
         * elsewhere are scanned */
        if (!bad[i] && dpdo__eng_hosted(e, i)) continue;
        const double *x = SROW(e, P->sxnew, i), *m = SROW(e, P->smnew, i);
        size_t k;
        if ((k = dpdo__first_nonfinite(x, d)) < d)
            return dpdo__eng_err(e, DPDO_E_NUMERIC, i, "x[%zu] = %g after the update", k, x[k]);
        if ((k = dpdo__first_nonfinite(m, d)) < d)
            return dpdo__eng_err(e, DPDO_E_NUMERIC, i, "m[%zu] = %g after the update", k, m[k]);
    }
    return DPDO_OK;
}

/* commit per node j (dpdo__par_for: on the round's threads when the run is parallel): x_j, m_j
 * installed; B1 for an active j: its own replica row xhat_j += s_j (only j's message touches it) */
typedef struct commit_arg {
    dpdo__eng *e;
    adp *P;
    const dpdo__plan *p;
} commit_arg;

static void commit_node(void *arg, int64_t j)
{
    const commit_arg *a = arg;
    dpdo__eng *e = a->e;
    adp *P = a->P;
    size_t d = (size_t)e->d;
    memcpy(ROW(e, P->bx, j), SROW(e, P->sxnew, j), d * sizeof(double));
    memcpy(ROW(e, P->bm, j), SROW(e, P->smnew, j), d * sizeof(double));
    if (!a->p->is_comp[j]) return;
    const int64_t *cnt = e->scr[P->scnt];
    const struct dpdo_network *net = e->net;
    if (e->dist && !dpdo__eng_hosted(e, j)) { /* distributed: only replicas this process reads */
        int64_t q = net->rowptr[j];
        while (q < net->rowptr[j + 1] && !dpdo__eng_hosted(e, net->col[q]))
            q++;
        if (q == net->rowptr[j + 1]) return;
    }
    double *h = ROW(e, P->bh, j);
    const int64_t *ix = P->midx + (size_t)j * (size_t)P->kcap;
    const double *v = P->mval + (size_t)j * (size_t)P->kcap;
    for (int64_t q = 0; q < cnt[j]; q++)
        h[ix[q]] += v[q];
}

static void commit(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    commit_arg a = {e, priv, p};
    dpdo__par_for(e, e->n, commit_node, &a);
}

static void output(const dpdo__eng *e, const void *priv, int64_t i, double *out)
{
    const adp *P = priv;
    memcpy(out, ROW(e, P->bx, i), (size_t)e->d * sizeof(double));
}

const dpdo__alg_vt dpdo__vt_do_adp = {
    .name = "do-adp",
    .title = "DO-ADP: decentralized momentum SGD with random activation and sparsified messages, "
             "Algorithm 1",
    .priv_size = sizeof(adp),
    .keys = KEYS,
    .paper = "do-adp-thm1",
    .paper_eps = "eps_tilde",
    .paper_delta = "delta_tilde_lemma4",
    .paper_round = NULL, /* Theorem 1's claim for the planned horizon T (see docs) */
    .needs_net = 1,
    .uses_solver = 0,
    .uses_compressor = 1,
    .accepts_mask = 1,
    .node_probs = 1,
    .distributable = 1,
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
