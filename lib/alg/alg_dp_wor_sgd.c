/* SPDX-License-Identifier: BSD-3-Clause */
/* DP-WOR-SGD: collaborative decentralized DP without-replacement SGD with a
 * Local/Global decision policy (Algorithm 1; docs/design/notes/dp-wor-sgd.md §2),
 * and the with-replacement DP-SGD baseline (docs/design/notes/dp-wor-sgd.md §6.4).
 *
 * Each node passes over its shard in mini-batches of b rows taken from a
 * permutation (stream (i, pass, SAMPLE)). At each node step the policy
 * (dpdo/policy.h) chooses
 *   Local:  wL <- wL - 2 eta grad f_D(wL)                       (no release)
 *   Global: fetch wG from its last updater; g = grad f_D(wG);
 *           wG <- (wG + wL)/2 - eta (g + N), N ~ N(0, (sigma_model/eta)^2 I);
 *           wL <- wG; holder <- i; version += 1                 (a release)
 * sigma_model = z * Delta, Delta = 2 L etabar / b (Lemma 4; etabar = the
 * largest step since the node's last Global step), z = the noise multiplier
 * of the noise mode (PAPER: Theorem 2's sqrt(2 ln(1.25/delta))/eps). f_D is
 * the mini-batch mean loss plus the regularizer h (smooth).
 * Schedule S2 (default): one round = every node with data left steps once,
 * in ascending order; a later node sees the wG already updated this round.
 * S1: one node per round, round robin over the nodes with data left.
 * Privacy (docs/algorithms/dp-wor-sgd.md): a window (the node's steps since
 * its last Global step) never crosses a pass boundary: at the end of a pass
 * that another pass follows, wL <- wG (public) and etabar <- 0. So each sample
 * of node i enters at most one window per pass, released by one Gaussian
 * mechanism with multiplier z, and the ledger gets one Gaussian(sens 1,
 * noise z) event per node per pass, at the node's first Global step of the
 * pass (a pass without a Global step releases none of its rows). */
#include "../engine/engine_impl.h"
#include "../model/model_impl.h"
#include "../model/policy_impl.h"
#include "../rng/rng_impl.h"
#include "dpdo/policy.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct wor {
    int bx, bg; /* blocks: local models "x" (n x d), global "wG" (1 x d) */
    int sxnew, sgnew, sgrad, stmp, sstate;
    /* committed per-node scalars and their round copies */
    int64_t *cursor, *pass, *steps, *prev_act, *charged_pass;
    double *etabar;
    int64_t *cursor_n, *pass_n, *steps_n, *prev_act_n, *charged_pass_n;
    double *etabar_n;
    int64_t *perm, *perm_off; /* permutation of each node's rows (sum q_i), offsets */
    int64_t *prev_batch;      /* n x b: the node's previous mini-batch (reward) */
    int64_t *batch;           /* b scratch */
    int64_t holder, version, holder_n, version_n;
    int64_t *cmsg, *cval; /* n + 1: messages and values sent this round */
    /* resolved at prepare */
    int64_t b, passes, K; /* K: steps per pass of the smallest node */
    int sched;
    double eta0, eta_pow, mu, cap, L, z, clip;
    int64_t rr; /* S1: next node in round-robin order */
} wor;

#define ROW(e, b_, i) ((e)->blk[(b_)].cur + (size_t)(i) * (size_t)(e)->d)
#define SROW(e, k, i) ((double *)(e)->scr[(k)] + (size_t)(i) * (size_t)(e)->d)

/* the batch follows the options' (the table PARAMS holds the other defaults) */
static void defaults(dpdo__eng *e)
{
    if (e->o.batch == 1) DPDO__PI(e, DPDO_PARAM_BATCH) = 1;
}

static void release(dpdo__eng *e, void *priv)
{
    (void)e;
    wor *P = priv;
    void *ptrs[] = {P->cursor,         P->pass,     P->steps,  P->prev_act, P->charged_pass,
                    P->etabar,         P->cursor_n, P->pass_n, P->steps_n,  P->prev_act_n,
                    P->charged_pass_n, P->etabar_n, P->perm,   P->perm_off, P->prev_batch,
                    P->batch,          P->cmsg,     P->cval};
    for (size_t k = 0; k < sizeof ptrs / sizeof ptrs[0]; k++)
        dpdo__free(ptrs[k]);
    memset(P, 0, sizeof *P);
}

static int configure(dpdo__eng *e, void *priv)
{
    wor *P = priv;
    int64_t n = e->n, d = e->d;
    e->tap_message = 1; /* the message is wG, not the noised gradient (engine_impl.h) */
    P->bx = dpdo__eng_block(e, "x", n, d);
    P->bg = dpdo__eng_block(e, "wG", 1, d);
    P->sxnew = dpdo__eng_scratch(e, (size_t)n * (size_t)d * sizeof(double));
    P->sgnew = dpdo__eng_scratch(e, (size_t)d * sizeof(double));
    P->sgrad = dpdo__eng_scratch(e, (size_t)d * sizeof(double));
    P->stmp = dpdo__eng_scratch(e, (size_t)d * sizeof(double));
    P->sstate = dpdo__eng_scratch(e, (size_t)(d + 2) * sizeof(double));
    size_t N = (size_t)n, tot = 0;
    for (int64_t i = 0; i < n; i++)
        tot += (size_t)e->q[i];
#define A(p, cnt) ((p) = dpdo__calloc((cnt), sizeof *(p)))
    if (!A(P->cursor, N) || !A(P->pass, N) || !A(P->steps, N) || !A(P->prev_act, N) ||
        !A(P->charged_pass, N) || !A(P->etabar, N) || !A(P->cursor_n, N) || !A(P->pass_n, N) ||
        !A(P->steps_n, N) || !A(P->prev_act_n, N) || !A(P->charged_pass_n, N) ||
        !A(P->etabar_n, N) || !A(P->perm, tot) || !A(P->perm_off, N + 1) || !A(P->cmsg, N + 1) ||
        !A(P->cval, N + 1))
        return DPDO_E_NOMEM;
#undef A
    for (int64_t i = 0; i < n; i++)
        P->perm_off[i + 1] = P->perm_off[i] + e->q[i];
    return DPDO_OK;
}

static double eta_at(const wor *P, int64_t s)
{
    double eta = P->eta_pow == 0     ? P->eta0
                 : P->eta_pow == 0.5 ? P->eta0 / sqrt((double)s)
                 : P->eta_pow == 1   ? P->eta0 / (double)s
                                     : P->eta0 * pow((double)s, -P->eta_pow);
    return P->cap > 0 && eta > P->cap ? P->cap : eta;
}

/* Without clipping the data must satisfy the per-sample gradient bound L (the sensitivity of
 * every release rests on it). When a node's rows exceed it: with may_clip (clip left unset) a
 * privacy note says that the run clips at L and the result is 1; otherwise the refusal (an error
 * code < 0 with its message). DPDO_OK when the bound holds. Shared by DP-WOR-SGD and DP-SGD-WR. */
static int check_data_bound(dpdo__eng *e, double L, int may_clip)
{
    int64_t i = 0;
    double Li = 0;
    if (!dpdo__eng_grad_exceeds(e, L, 1, &i, &Li)) return DPDO_OK;
    if (may_clip) {
        char buf[300];
        snprintf(buf, sizeof buf,
                 "clip = lipschitz = %g chosen: node %lld's per-sample gradients reach %g "
                 "without clipping "
                 "(set clip, or normalise the rows, to choose otherwise)",
                 L, (long long)i, Li);
        dpdo__eng_note(e, buf);
        return 1;
    }
    return dpdo__err(e->err, DPDO_E_INVAL,
                     "prepare: node %lld: per-sample gradients reach %g > L = %g (normalise the "
                     "rows to norm <= 1, raise lipschitz, or set clip)",
                     (long long)i, Li, L);
}

/* The noise skeleton's callbacks (dpdo__eng_noise_plan). */
static int wor_paper_set(dpdo__eng *e, void *priv, dpdo_paper *pp)
{
    wor *P = priv;
    int rc;
    if ((rc = dpdo_paper_set(pp, "eps", e->o.epsilon)) ||
        (rc = dpdo_paper_set(pp, "delta", e->o.delta)) || (rc = dpdo_paper_set(pp, "L", P->L)) ||
        (rc = dpdo_paper_set(pp, "b", (double)P->b)) ||
        (rc = dpdo_paper_set(pp, "eta", eta_at(P, 1))) || (rc = dpdo_paper_set(pp, "mu", P->mu)) ||
        (rc = dpdo_paper_set(pp, "passes", (double)P->passes)) ||
        (rc = dpdo_paper_set(pp, "allow_eps_gt1", e->o.strict ? 0.0 : 1.0)))
        return rc;
    return DPDO_OK;
}

static int wor_paper_sigma(dpdo__eng *e, void *priv, dpdo_paper *pp, double *z)
{
    double c = 0;
    dpdo_paper_get(pp, "c", &c);
    *z = c / e->o.epsilon; /* Theorem 2: sigma_model = c Delta / eps */
    return DPDO_OK;
}

/* RIGOROUS: one Gaussian release per sample per pass (Lemma 4), composed over passes */
static int wor_rigorous(dpdo__eng *e, void *priv, double *z)
{
    wor *P = priv;
    dpdo__sampling_desc none = {DPDO_SAMPLING_NONE, 1.0, 0, 0};
    int rc = dpdo__eng_calibrate_sigma(e, &none, 1.0, (double)P->passes, z);
    if (rc) return rc;
    dpdo__eng_set_planned(e, (double)P->passes); /* at most one charge per node per pass */
    return DPDO_OK;
}

static void wor_notes(dpdo__eng *e, void *priv)
{
    dpdo__eng_note(e, "the timing of Global steps (which node updates wG, when) is public and "
                      "chosen by a policy that reads "
                      "private losses; not covered (docs/design/notes/dp-wor-sgd.md §3.8)");
    dpdo__eng_note(e, "one-vs-all: each binary model trained on the same samples is a separate "
                      "release; share one "
                      "ledger across the models to compose them");
}

static int prepare(dpdo__eng *e, void *priv)
{
    wor *P = priv;
    int64_t n = e->n, d = e->d;
    P->sched = (int)DPDO__PI(e, DPDO_PARAM_WOR_SCHEDULE);
    P->passes = DPDO__PI(e, DPDO_PARAM_WOR_PASSES);
    P->b = DPDO__PI(e, DPDO_PARAM_BATCH);
    int64_t qmin = e->qmin;
    if (P->b > qmin)
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: batch = %lld exceeds the smallest shard (%lld rows)",
                         (long long)P->b, (long long)qmin);
    P->K = qmin / P->b;
    double ss = DPDO__PD(e, DPDO_PARAM_STEP_SIZE), sp = DPDO__PD(e, DPDO_PARAM_STEP_POWER);
    P->eta0 = isnan(ss) ? 0.1 : ss;
    P->eta_pow = isnan(sp) ? 0.0 : sp;
    if (!(P->eta0 > 0))
        return dpdo__err(e->err, DPDO_E_INVAL, "prepare: step_size (eta) = %g must be > 0",
                         P->eta0);
    double lam = 0;
    if (e->reg) {
        dpdo_regularizer_modulus(e->reg, &lam);
        if (lam < 0)
            return dpdo__err(e->err, DPDO_E_INVAL,
                             "prepare: the regularizer must be convex (Lemma 4 needs a convex f)");
    }
    double mu = DPDO__PD(e, DPDO_PARAM_WOR_SMOOTH);
    P->mu =
        isnan(mu)
            ? 1.0 + lam
            : mu; /* docs/design/notes/dp-wor-sgd.md §8 item 4: (L, mu) = (1, 1) at lambda = 0 */
    P->cap = DPDO__PI(e, DPDO_PARAM_WOR_ETA_CAP) ? 1.0 / (2.0 * P->mu) : 0.0;
    P->L = e->o.lipschitz;
    double clip = DPDO__PD(e, DPDO_PARAM_CLIP);
    int rc0;
    /* default (NaN): no clipping when the data satisfy L, else clipping at L (identical releases
     * whenever the bound holds, so the choice reveals nothing); +inf: no clipping, the data must */
    P->clip = isnan(clip) || clip == INFINITY ? 0.0 : clip;
    int mode = e->o.noise_mode;
    int private_mode = mode != DPDO_NOISE_NONE;
    double eta1 = eta_at(P, 1);
    if (private_mode && !(eta1 <= 1.0 / (2.0 * P->mu) * (1 + 1e-15)))
        return dpdo__err(
            e->err, DPDO_E_INVAL,
            "prepare: eta = %g exceeds 1/(2 mu) = %g, which Lemma 4 needs with DP on (set "
            "wor-eta-cap = 1 or a smaller step_size)",
            eta1, 1.0 / (2.0 * P->mu));
    if (private_mode && P->clip == 0 && (rc0 = check_data_bound(e, P->L, isnan(clip)))) {
        if (rc0 < 0) return rc0;
        P->clip = P->L; /* clip unset and the data exceed L: clip at L */
    }
    e->pv.nev = 0;
    static const dpdo__noise_plan NP = {.paper = "dp-wor-sgd-thm2",
                                        .theorem = "Theorem 2",
                                        .invalid_note = "paper bound",
                                        .paper_sigma_key = NULL,
                                        .paper_set = wor_paper_set,
                                        .paper_sigma = wor_paper_sigma,
                                        .rigorous = wor_rigorous,
                                        .notes = wor_notes};
    double z = 0; /* DP-WOR-SGD's sigma is the multiplier sigma_model / Delta */
    int rc1 = dpdo__eng_noise_plan(e, P, &NP, &z);
    if (rc1) return rc1;
    P->z = z;
    e->pv.sens = 1.0;
    if (e->pv.private_run && (rc1 = dpdo__eng_event_all(e, DPDO_MECH_GAUSSIAN, 1.0, z))) return rc1;
    /* buffers that depend on b */
    dpdo__free(P->prev_batch);
    dpdo__free(P->batch);
    P->prev_batch = dpdo__calloc((size_t)n * (size_t)P->b, sizeof *P->prev_batch);
    P->batch = dpdo__calloc((size_t)P->b, sizeof *P->batch);
    if (!P->prev_batch || !P->batch)
        return dpdo__err(e->err, DPDO_E_NOMEM, "prepare: out of memory");
    (void)d; /* the policy's shape was checked by dpdo_algorithm_set_policy */
    return DPDO_OK;
}

/* permutation of node i's rows for pass p */
static void draw_perm(dpdo__eng *e, wor *P, int64_t i, int64_t p)
{
    dpdo__stream st;
    dpdo__stream_open(&st, e->rng, (uint64_t)i, (uint64_t)p, DPDO_PURPOSE_SAMPLE);
    dpdo__stream_permutation(&st, e->q[i], P->perm + P->perm_off[i]);
}

static void init(dpdo__eng *e, void *priv)
{
    wor *P = priv;
    size_t nd = (size_t)e->n * (size_t)e->d * sizeof(double);
    memset(e->blk[P->bx].cur, 0,
           nd); /* data-independent starts (docs/design/notes/dp-wor-sgd.md §2.1) */
    memset(e->blk[P->bg].cur, 0, (size_t)e->d * sizeof(double));
    if (!P->cursor) return;
    size_t N = (size_t)e->n;
    memset(P->cursor, 0, N * sizeof(int64_t));
    memset(P->pass, 0, N * sizeof(int64_t));
    memset(P->steps, 0, N * sizeof(int64_t));
    memset(P->prev_act, 0, N * sizeof(int64_t));
    memset(P->charged_pass, 0xff, N * sizeof(int64_t)); /* -1: no charge yet */
    memset(P->etabar, 0, N * sizeof(double));
    P->holder = -1;
    P->version = 0;
    P->rr = 0;
    for (int64_t i = 0; i < e->n; i++)
        draw_perm(e, P, i, 0);
    if (e->policy) dpdo__policy_reset(e->policy, e->rng);
}

/* checkpoint: what carries over between rounds outside the arena (the *_n copies are round scratch)
 */
static void ser_priv(dpdo__eng *e, void *priv, dpdo__ser *s)
{
    wor *P = priv;
    int64_t n = e->n, qmax = 0;
    for (int64_t i = 0; i < n; i++)
        qmax = e->q[i] > qmax ? e->q[i] : qmax;
    dpdo__ser_idx(s, "wor cursor", P->cursor, n, 0, qmax);
    dpdo__ser_idx(s, "wor pass", P->pass, n, 0, INT64_MAX);
    dpdo__ser_idx(s, "wor steps", P->steps, n, 0, INT64_MAX);
    dpdo__ser_i64(s, "wor previous action", P->prev_act, n);
    dpdo__ser_idx(s, "wor charged pass", P->charged_pass, n, -1, INT64_MAX);
    dpdo__ser_f64(s, "wor eta bar", P->etabar, n);
    dpdo__ser_idx(s, "wor permutations", P->perm, P->perm_off[n], 0, qmax - 1);
    dpdo__ser_idx(s, "wor previous batches", P->prev_batch, n * P->b, 0, qmax - 1);
    dpdo__ser_idx(s, "wor holder", &P->holder, 1, -1, n - 1);
    dpdo__ser_idx(s, "wor version", &P->version, 1, 0, INT64_MAX);
    dpdo__ser_idx(s, "wor round-robin", &P->rr, 1, 0, n - 1);
}

static int has_data(const dpdo__eng *e, const wor *P, int64_t i)
{
    (void)e;
    return P->pass[i] < P->passes;
}

static int finished(dpdo__eng *e, void *priv)
{
    wor *P = priv;
    for (int64_t i = 0; i < e->n; i++)
        if (has_data(e, P, i)) return 0;
    return 1;
}

static int plan(dpdo__eng *e, void *priv, dpdo__plan *p)
{
    wor *P = priv;
    int64_t n = e->n;
    memset(p->is_comp, 0, (size_t)n);
    p->ncomp = 0;
    if (P->sched == DPDO_WOR_SYNCHRONOUS) {
        for (int64_t i = 0; i < n; i++)
            if (has_data(e, P, i)) p->comp[p->ncomp++] = i;
    } else {
        for (int64_t k = 0; k < n; k++) {
            int64_t i = (P->rr + k) % n;
            if (has_data(e, P, i)) {
                p->comp[p->ncomp++] = i;
                break;
            }
        }
    }
    /* budget: a node that would start a new pass beyond its allowance sits out */
    int64_t kept = 0;
    for (int64_t c = 0; c < p->ncomp; c++) {
        int64_t i = p->comp[c];
        if (e->pv.private_run && P->charged_pass[i] != P->pass[i] &&
            e->pv.used[i] >= e->pv.allow[i])
            continue;
        p->comp[kept++] = p->comp[c];
    }
    if (kept == 0 && p->ncomp > 0) return DPDO__PLAN_BUDGET;
    p->ncomp = kept;
    for (int64_t c = 0; c < p->ncomp; c++)
        p->is_comp[p->comp[c]] = 1;
    p->nstages = 1;
    p->stage[0].who =
        DPDO__RUN_COMPUTING; /* in ascending order: sequential within the round (S2) */
    p->stage[0].npat = 1;
    memset(P->cmsg, 0, (size_t)(n + 1) * sizeof(int64_t));
    memset(P->cval, 0, (size_t)(n + 1) * sizeof(int64_t));
    p->stage[0].pat[0] =
        (dpdo__xpat){.kind = DPDO__PAT_COUNTS, .cmsg = P->cmsg, .cval = P->cval, .local_counts = 1};
    /* distributed runs: the turn carries wG and its holder from process to process (the "fetch
     * wG from its last updater" message); the per-node pass bookkeeping is public */
    {
        dpdo__stage *st = &p->stage[0];
        st->seq = 1;
        st->nbaton = 3;
        st->baton[0] = (dpdo__piece){e->scr[P->sgnew], e->d * (int64_t)sizeof(double)};
        st->baton[1] = (dpdo__piece){&P->holder_n, sizeof P->holder_n};
        st->baton[2] = (dpdo__piece){&P->version_n, sizeof P->version_n};
        st->nshare = 6;
        st->share[0] = (dpdo__piece){P->cursor_n, 8};
        st->share[1] = (dpdo__piece){P->pass_n, 8};
        st->share[2] = (dpdo__piece){P->steps_n, 8};
        st->share[3] = (dpdo__piece){P->prev_act_n, 8};
        st->share[4] = (dpdo__piece){P->charged_pass_n, 8};
        st->share[5] = (dpdo__piece){P->etabar_n, 8};
    }
    p->ncharges = 0;
    /* round copies of the mutable scalars and of the global model */
    size_t N = (size_t)n;
    memcpy(P->cursor_n, P->cursor, N * sizeof(int64_t));
    memcpy(P->pass_n, P->pass, N * sizeof(int64_t));
    memcpy(P->steps_n, P->steps, N * sizeof(int64_t));
    memcpy(P->prev_act_n, P->prev_act, N * sizeof(int64_t));
    memcpy(P->charged_pass_n, P->charged_pass, N * sizeof(int64_t));
    memcpy(P->etabar_n, P->etabar, N * sizeof(double));
    memcpy(e->scr[P->sgnew], e->blk[P->bg].cur, (size_t)e->d * sizeof(double));
    P->holder_n = P->holder;
    P->version_n = P->version;
    return DPDO_OK;
}

/* f_D(w) and/or its gradient: mini-batch mean loss (clipped per sample when clip > 0) plus h */
static int fD(dpdo__eng *e, wor *P, int64_t i, const double *w, const int64_t *rows, double *val,
              double *grad, char *err)
{
    struct dpdo_node *nd = e->nodes[i];
    int rc = dpdo__loss_eval(nd->loss, nd->shard, w, rows, P->b, P->clip, val, grad, NULL,
                             nd->scratch, err);
    if (rc || !e->reg) return rc;
    if (val) {
        double h = 0;
        if ((rc = dpdo__reg_value(e->reg, w, &h, err))) return rc;
        *val += h;
    }
    if (grad) {
        double *t = e->scr[P->stmp];
        if ((rc = dpdo__reg_grad(e->reg, w, t, err))) return rc;
        for (int64_t k = 0; k < e->d; k++)
            grad[k] += t[k];
    }
    return DPDO_OK;
}

/* Prefetch the rows of the node step that follows node i's (docs/performance.md): the next
 * computing node of the round (S2; after the last one the round's first), the next node with data
 * in round-robin order (S1), when its data are in this process and its pass goes on (a new pass
 * draws its permutation at commit). A hint only: nothing read or written depends on it. */
static void prefetch_next(dpdo__eng *e, const wor *P, const dpdo__plan *p, int64_t i)
{
    int64_t j = -1;
    if (P->sched == DPDO_WOR_SYNCHRONOUS) {
        for (int64_t c = 0; c < p->ncomp && j < 0; c++)
            if (p->comp[c] == i) j = c + 1 < p->ncomp ? p->comp[c + 1] : p->comp[0];
    } else {
        for (int64_t k = 1; k <= e->n && j < 0; k++)
            if (has_data(e, P, (i + k) % e->n)) j = (i + k) % e->n;
    }
    if (j < 0 || !dpdo__eng_hosted(e, j) || !e->nodes[j]->shard) return;
    int64_t cur = P->cursor_n[j] + (j == i);
    if (cur >= e->q[j] / P->b) return;
    dpdo__shard_prefetch(e->nodes[j]->shard, P->perm + P->perm_off[j] + cur * P->b, P->b);
}

static int local(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t stage, int64_t i)
{
    (void)stage;
    wor *P = priv;
    size_t d = (size_t)e->d;
    double *wl = SROW(e, P->sxnew, i), *wg = e->scr[P->sgnew], *g = e->scr[P->sgrad];
    memcpy(wl, ROW(e, P->bx, i), d * sizeof(double));
    /* 1-2: the next mini-batch of the pass (a new pass draws a new permutation) */
    int64_t Ki = e->q[i] / P->b;
    if (P->cursor_n[i] >= Ki) return dpdo__eng_err(e, DPDO_E_STATE, i, "no data left in this pass");
    const int64_t *perm = P->perm + P->perm_off[i];
    int64_t *rows = P->batch;
    for (int64_t r = 0; r < P->b; r++)
        rows[r] = perm[P->cursor_n[i] * P->b + r];
    prefetch_next(e, P, p, i);
    /* 3: the step size and the privacy window */
    int64_t s = ++P->steps_n[i];
    double eta = eta_at(P, s);
    if (eta > P->etabar_n[i]) P->etabar_n[i] = eta;
    /* 4: the policy decides from [wL, f_D(wL), previous action], rewarded with -f_{D_prev}(wL).
     * A fixed policy (always-global/-local, periodic, random) reads neither: the two loss
     * evaluations (100 gathered rows) are skipped and it gets a zero reward (docs/performance.md).
     */
    char err[DPDO__ERRMSG_LEN] = "";
    const int sees = dpdo__policy_reads_state(e->policy);
    double f = 0, reward = sees ? NAN : 0.0;
    int rc;
    double *st = e->scr[P->sstate];
    if (sees) {
        if ((rc = fD(e, P, i, wl, rows, &f, NULL, err))) return dpdo__eng_err(e, rc, i, "%s", err);
        if (P->cursor_n[i] > 0) {
            rc = fD(e, P, i, wl, P->prev_batch + (size_t)i * (size_t)P->b, &reward, NULL, err);
            if (rc) return dpdo__eng_err(e, rc, i, "%s", err);
            reward = -reward;
        }
        memcpy(st, wl, d * sizeof(double));
        st[d] = f;
        st[d + 1] = (double)P->prev_act_n[i];
    }
    int32_t a = 0;
    rc = dpdo__policy_decide(e->policy, i, P->cursor_n[i], st, reward, e->rng, p->t, &a, err);
    if (rc) return dpdo__eng_err(e, rc, i, "policy: %s", err);
    if (a == DPDO_ACTION_LOCAL) { /* 5 */
        if ((rc = fD(e, P, i, wl, rows, NULL, g, err))) return dpdo__eng_err(e, rc, i, "%s", err);
        for (size_t c = 0; c < d; c++)
            wl[c] = wl[c] - 2.0 * eta * g[c];
    } else {                                        /* 6 */
        if (P->holder_n >= 0 && P->holder_n != i) { /* fetch wG from the last updater */
            P->cmsg[P->holder_n] += 1;
            P->cval[P->holder_n] += e->d;
        }
        if ((rc = fD(e, P, i, wg, rows, NULL, g, err))) return dpdo__eng_err(e, rc, i, "%s", err);
        if (e->pv.private_run) {
            double delta = 2.0 * P->L * P->etabar_n[i] / (double)P->b; /* Lemma 4 */
            double sgrad = P->z * delta / eta;                         /* std of N per coordinate */
            if (DPDO__WEAKENED(e, DPDO__WEAKEN_SENS_DOUBLE))           /* test build */
                for (size_t c = 0; c < d; c++)
                    g[c] *= 2;
            dpdo__stream ns;
            dpdo__stream_open(&ns, e->rng, (uint64_t)i, p->t, DPDO_PURPOSE_NOISE);
            double *t = e->scr[P->stmp];
            if (dpdo__eng_grid_noise(e)) {
                /* with tap_sent (the auditor) this draw is not tapped (tap_message): the tap
                 * sees the message, wG below */
                if ((rc = dpdo__eng_noise_gauss(e, &ns, i, sgrad, sgrad / P->z, g, d))) return rc;
            } else { /* reproducible: the original draw (normals, then one multiply-add each) */
                double sg = DPDO__WEAKENED(e, DPDO__WEAKEN_SIGMA_HALF) ? 0.5 * sgrad : sgrad;
                dpdo__stream_normals(&ns, t, d);
                if ((rc = dpdo__stream_status(&ns)))
                    return dpdo__eng_err(e, rc, i, "noise generator failed (code %d)",
                                         dpdo__stream_cb_code(&ns));
                for (size_t c = 0; c < d; c++)
                    g[c] += sg * t[c];
            }
            /* one charge per node per pass: at its first Global step of the pass */
            if (P->charged_pass_n[i] != P->pass_n[i]) {
                P->charged_pass_n[i] = P->pass_n[i];
                if ((rc = dpdo__plan_add_charge(e, 0, i, 1))) return rc;
            }
        }
        for (size_t c = 0; c < d; c++)
            wg[c] = 0.5 * (wg[c] + wl[c]) - eta * g[c];
        if (e->tap && e->tap_sent && e->pv.private_run) e->tap(e->tap_user, i, wg, d, 0.0);
        memcpy(wl, wg, d * sizeof(double));
        P->holder_n = i;
        P->version_n++;
        P->cmsg[i] += e->n - 1; /* announce (version, holder) to every other node */
        P->cval[i] += 2 * (e->n - 1);
        P->etabar_n[i] = 0;
    }
    P->prev_act_n[i] = a;
    memcpy(P->prev_batch + (size_t)i * (size_t)P->b, rows, (size_t)P->b * sizeof(int64_t));
    if (++P->cursor_n[i] == Ki) { /* the pass (the policy's episode) ends */
        double last = 0;
        if (sees && (rc = fD(e, P, i, wl, rows, &last, NULL, err)))
            return dpdo__eng_err(e, rc, i, "%s", err);
        if ((rc = dpdo__policy_finish(e->policy, i, -last, e->rng, p->t, err)))
            return dpdo__eng_err(e, rc, i, "policy: %s", err);
        P->cursor_n[i] = 0;
        P->pass_n[i]++;
        P->prev_act_n[i] = 0;
        /* the window closes at the pass boundary: wL restarts from the public wG and the window
         * bound from 0, so no release holds a row twice (the rows of an unreleased tail reach no
         * release). The old behaviour (no reset) is kept for the auditor's test build only. */
        if (P->pass_n[i] < P->passes && !DPDO__WEAKENED(e, DPDO__WEAKEN_WOR_PASS)) {
            memcpy(wl, wg, d * sizeof(double));
            P->etabar_n[i] = 0;
        }
    }
    return DPDO_OK;
}

static int check(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    wor *P = priv;
    int rc = dpdo__eng_check_finite(e, -1, e->scr[P->sgnew], (size_t)e->d, "wG", "after the round");
    return rc ? rc : dpdo__eng_check_rows(e, P->sxnew, p->comp, p->ncomp, "wL", "after the step");
}

static void commit(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    wor *P = priv;
    size_t d = (size_t)e->d, N = (size_t)e->n;
    for (int64_t c = 0; c < p->ncomp; c++) {
        int64_t i = p->comp[c];
        memcpy(ROW(e, P->bx, i), SROW(e, P->sxnew, i), d * sizeof(double));
        if (P->pass_n[i] != P->pass[i] && P->pass_n[i] < P->passes)
            draw_perm(e, P, i, P->pass_n[i]);
    }
    memcpy(e->blk[P->bg].cur, e->scr[P->sgnew], d * sizeof(double));
    memcpy(P->cursor, P->cursor_n, N * sizeof(int64_t));
    memcpy(P->pass, P->pass_n, N * sizeof(int64_t));
    memcpy(P->steps, P->steps_n, N * sizeof(int64_t));
    memcpy(P->prev_act, P->prev_act_n, N * sizeof(int64_t));
    memcpy(P->charged_pass, P->charged_pass_n, N * sizeof(int64_t));
    memcpy(P->etabar, P->etabar_n, N * sizeof(double));
    P->holder = P->holder_n;
    P->version = P->version_n;
    if (P->sched == DPDO_WOR_SEQUENTIAL && p->ncomp > 0) P->rr = (p->comp[0] + 1) % e->n;
}

static void output(const dpdo__eng *e, const void *priv, int64_t i, double *out)
{
    (void)i;
    const wor *P = priv;
    memcpy(out, e->blk[P->bg].cur, (size_t)e->d * sizeof(double)); /* the released global model */
}

static int paper_update(dpdo__eng *e, void *priv, dpdo_paper *pp)
{
    wor *P = priv;
    int64_t done = 0; /* passes that released something, worst node */
    for (int64_t i = 0; i < e->n; i++)
        done = e->pv.used[i] > done ? e->pv.used[i] : done;
    (void)P;
    return dpdo_paper_set(pp, "passes", done > 0 ? (double)done : 1.0);
}

/* DP-WOR-SGD's parameters (dpdo_param_*) */
static const dpdo__pdef PARAMS[] = {
    {DPDO_PARAM_WOR_SCHEDULE, "wor-schedule", 0, DPDO_WOR_SYNCHRONOUS, DPDO_WOR_SEQUENTIAL, 0,
     "who steps in a round, DPDO_WOR_*; default SYNCHRONOUS", .def = DPDO_WOR_SYNCHRONOUS},
    {DPDO_PARAM_WOR_PASSES, "wor-passes", 0, 1, 2147483647.0, 0,
     "passes over each node's data; default 1", .def = 1},
    {DPDO_PARAM_WOR_SMOOTH, "wor-smooth", 1, 0x1p-1000, 1e300, 0,
     "smoothness mu of the per-sample loss; NaN (default) = 1 + the regularizer's modulus",
     .def = NAN},
    {DPDO_PARAM_WOR_ETA_CAP, "wor-eta-cap", 0, 0, 1, 0,
     "0/1: cap the step at 1/(2 mu) (Lemma 4's condition); default 1", .def = 1},
    {.name = NULL}};

/* the tests' setup (both types): defaults; a private run notes the clip it took */
static const dpdo__fixture FIXTURE = {.notes_private = "clip = lipschitz"};

const dpdo__alg_vt dpdo__vt_dp_wor_sgd = {
    .name = "dp-wor-sgd",
    .title = "DP-WOR-SGD: collaborative decentralized DP without-replacement SGD with a "
             "Local/Global policy, "
             "Algorithm 1",
    .priv_size = sizeof(wor),
    .fixture = &FIXTURE,
    .params = PARAMS,
    .paper = "dp-wor-sgd-thm2",
    .paper_eps = "eps_total",
    .paper_delta = "delta_total",
    .paper_update = paper_update,
    .needs_net = 0,
    .uses_policy = 1,
    .distributable = 1,
    .local_charges = 1,
    .defaults = defaults,
    .configure = configure,
    .prepare = prepare,
    .init = init,
    .ser_priv = ser_priv,
    .plan = plan,
    .local = local,
    .check = check,
    .commit = commit,
    .output = output,
    .finished = finished,
    .release = release,
};

/* ==== baseline "dp-sgd-wr": DP-SGD with replacement (docs/design/notes/dp-wor-sgd.md §6.4)
 * =================== Each round a uniformly chosen node that is not depleted draws b distinct rows
 * among its rows used fewer than 5 times (stream (i, t, SAMPLE)) and updates the public model: wG
 * <- wG - eta_tau (grad f_B(wG) + N),  N ~ N(0, sigma^2 I), sigma = z * 2 L / b,  PAPER z = sqrt(2
 * ln(1.25 * 5 / delta)) / (eps / 5), eta_tau = step_size * tau^-step_power (default 1/sqrt(tau)). A
 * node is depleted when fewer than b of its rows remain eligible; the run ends when every node is.
 * Privacy: a row enters at most 5 releases; the ledger charges a node when the largest use count
 * among its rows grows. */

#define WR_USES 5

typedef struct wr {
    int bx, sgnew, sgrad, stmp;
    int32_t *uses;       /* sum q_i: times each row was used */
    int64_t *elig, *off; /* per node: rows still eligible (first nelig[i]), offsets */
    int64_t *nelig, *maxuse;
    int64_t *batch;       /* b rows chosen this round */
    int64_t node, tau, b; /* the round's node, the global step counter */
    int64_t nelig_new;    /* the node's eligible rows after this round (travels with the model) */
    double eta0, eta_pow, L, z, clip;
} wr;

static void wr_release(dpdo__eng *e, void *priv)
{
    (void)e;
    wr *P = priv;
    dpdo__free(P->uses), dpdo__free(P->elig), dpdo__free(P->off), dpdo__free(P->nelig),
        dpdo__free(P->maxuse);
    dpdo__free(P->batch);
    memset(P, 0, sizeof *P);
}

static int wr_configure(dpdo__eng *e, void *priv)
{
    wr *P = priv;
    int64_t n = e->n, d = e->d;
    P->bx =
        dpdo__eng_block(e, "x", 1, d); /* the public model: every node's iterate and the output */
    P->sgnew = dpdo__eng_scratch(e, (size_t)d * sizeof(double));
    P->sgrad = dpdo__eng_scratch(e, (size_t)d * sizeof(double));
    P->stmp = dpdo__eng_scratch(e, (size_t)d * sizeof(double));
    size_t tot = 0;
    for (int64_t i = 0; i < n; i++)
        tot += (size_t)e->q[i];
    P->uses = dpdo__calloc(tot, sizeof *P->uses);
    P->elig = dpdo__calloc(tot, sizeof *P->elig);
    P->off = dpdo__calloc((size_t)n + 1, sizeof *P->off);
    P->nelig = dpdo__calloc((size_t)n, sizeof *P->nelig);
    P->maxuse = dpdo__calloc((size_t)n, sizeof *P->maxuse);
    if (!P->uses || !P->elig || !P->off || !P->nelig || !P->maxuse) return DPDO_E_NOMEM;
    for (int64_t i = 0; i < n; i++)
        P->off[i + 1] = P->off[i] + e->q[i];
    return DPDO_OK;
}

/* PAPER: each release (eps/5, delta/5)-DP by the classical Gaussian bound, each row used at most
 * 5 times (strict runs refuse eps > 1, outside that bound's range) */
static int wr_paper_sigma(dpdo__eng *e, void *priv, dpdo_paper *pp, double *z)
{
    (void)priv, (void)pp;
    if (!(e->o.epsilon <= 1) && e->o.strict)
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: eps = %g > 1 is outside Thm 1's range (strict)", e->o.epsilon);
    *z = sqrt(2.0 * log(1.25 * WR_USES / e->o.delta)) / (e->o.epsilon / WR_USES);
    return DPDO_OK;
}

/* RIGOROUS: a row enters at most 5 releases of sensitivity 1 (in units of 2 L / b) */
static int wr_rigorous(dpdo__eng *e, void *priv, double *z)
{
    (void)priv;
    dpdo__sampling_desc none = {DPDO_SAMPLING_NONE, 1.0, 0, 0};
    int rc = dpdo__eng_calibrate_sigma(e, &none, 1.0, WR_USES, z);
    if (rc) return rc;
    dpdo__eng_set_planned(e, WR_USES); /* a row is used at most 5 times */
    return DPDO_OK;
}

static int wr_prepare(dpdo__eng *e, void *priv)
{
    wr *P = priv;
    P->b = DPDO__PI(e, DPDO_PARAM_BATCH);
    int64_t qmin = e->qmin;
    if (P->b > qmin)
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: batch = %lld exceeds the smallest shard (%lld rows)",
                         (long long)P->b, (long long)qmin);
    dpdo__free(P->batch);
    if (!(P->batch = dpdo__calloc((size_t)P->b, sizeof *P->batch)))
        return dpdo__err(e->err, DPDO_E_NOMEM, "prepare: out of memory");
    double ss = DPDO__PD(e, DPDO_PARAM_STEP_SIZE), sp = DPDO__PD(e, DPDO_PARAM_STEP_POWER);
    P->eta0 = isnan(ss) ? 1.0 : ss;
    P->eta_pow = isnan(sp) ? 0.5 : sp;
    P->L = e->o.lipschitz;
    double clip = DPDO__PD(e, DPDO_PARAM_CLIP);
    P->clip = isnan(clip) || clip == INFINITY ? 0.0 : clip;
    int mode = e->o.noise_mode;
    int rc0;
    if (mode != DPDO_NOISE_NONE && P->clip == 0 && (rc0 = check_data_bound(e, P->L, isnan(clip)))) {
        if (rc0 < 0) return rc0; /* found by the auditor: 0.1 trusted the data */
        P->clip = P->L;          /* clip unset and the data exceed L: clip at L */
    }
    static const dpdo__noise_plan NP = {.paper_sigma = wr_paper_sigma, .rigorous = wr_rigorous};
    double z = 0; /* the multiplier: sigma = z 2 L / b per release */
    e->pv.nev = 0;
    int rc = dpdo__eng_noise_plan(e, P, &NP, &z);
    if (rc) return rc;
    P->z = z;
    e->pv.sens = 1.0;
    if (e->pv.private_run) {
        if ((rc = dpdo__eng_event_all(e, DPDO_MECH_GAUSSIAN, 1.0, z))) return rc;
        dpdo__eng_note(e, "paper: each iteration (eps/5, delta/5)-DP, each row used at most 5 "
                          "times: (eps, delta) by basic "
                          "composition (docs/design/notes/dp-wor-sgd.md §6.4); no paper-bound "
                          "object, the rigorous "
                          "figure is the accountant's");
    }
    return DPDO_OK;
}

static void wr_ser_priv(dpdo__eng *e, void *priv, dpdo__ser *s)
{
    wr *P = priv;
    int64_t n = e->n, qmax = 0;
    for (int64_t i = 0; i < n; i++)
        qmax = e->q[i] > qmax ? e->q[i] : qmax;
    dpdo__ser_i32(s, "wr uses", P->uses, P->off[n]);
    dpdo__ser_idx(s, "wr eligible rows", P->elig, P->off[n], 0, qmax - 1);
    dpdo__ser_idx(s, "wr eligible counts", P->nelig, n, 0, qmax);
    dpdo__ser_idx(s, "wr max use", P->maxuse, n, 0, INT64_MAX);
    dpdo__ser_idx(s, "wr node", &P->node, 1, -1, n - 1);
    dpdo__ser_idx(s, "wr step counter", &P->tau, 1, 0, INT64_MAX);
}

static void wr_init(dpdo__eng *e, void *priv)
{
    wr *P = priv;
    memset(e->blk[P->bx].cur, 0, (size_t)e->d * sizeof(double));
    if (!P->uses) return;
    memset(P->uses, 0, (size_t)P->off[e->n] * sizeof *P->uses);
    for (int64_t i = 0; i < e->n; i++) {
        for (int64_t r = 0; r < e->q[i]; r++)
            P->elig[P->off[i] + r] = r;
        P->nelig[i] = e->q[i];
        P->maxuse[i] = 0;
    }
    P->tau = 0;
}

static int wr_finished(dpdo__eng *e, void *priv)
{
    wr *P = priv;
    for (int64_t i = 0; i < e->n; i++)
        if (P->nelig[i] >= P->b) return 0;
    return 1;
}

static int wr_plan(dpdo__eng *e, void *priv, dpdo__plan *p)
{
    wr *P = priv;
    int64_t live = 0;
    for (int64_t i = 0; i < e->n; i++)
        live += P->nelig[i] >= P->b;
    dpdo__stream st;
    dpdo__stream_open(&st, e->rng, DPDO__NET_GLOBAL_NODE, p->t, DPDO_PURPOSE_ACTIVATION);
    int64_t pick = (int64_t)dpdo__stream_below(&st, (uint64_t)live), node = -1;
    for (int64_t i = 0; i < e->n && node < 0; i++)
        if (P->nelig[i] >= P->b && pick-- == 0) node = i;
    P->node = node;
    memset(p->is_comp, 0, (size_t)e->n);
    p->is_comp[node] = 1;
    p->comp[0] = node;
    p->ncomp = 1;
    p->nstages = 1;
    p->stage[0].who = DPDO__RUN_COMPUTING;
    p->stage[0].npat =
        0; /* the model is public: nothing is sent point to point (broadcast not counted) */
    p->stage[0].seq = 1; /* distributed runs: the node's process sends the new model to all */
    p->stage[0].nbaton = 2;
    p->stage[0].baton[0] = (dpdo__piece){e->scr[P->sgnew], e->d * (int64_t)sizeof(double)};
    p->stage[0].baton[1] = (dpdo__piece){&P->nelig_new, sizeof P->nelig_new};
    p->ncharges = 0;
    return DPDO_OK;
}

static int wr_local(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t stage, int64_t i)
{
    (void)stage;
    wr *P = priv;
    size_t d = (size_t)e->d;
    /* b distinct eligible rows: partial Fisher-Yates on the eligible list */
    int64_t *E = P->elig + P->off[i], m = P->nelig[i];
    dpdo__stream st;
    dpdo__stream_open(&st, e->rng, (uint64_t)i, p->t, DPDO_PURPOSE_SAMPLE);
    for (int64_t r = 0; r < P->b; r++) {
        int64_t j = r + (int64_t)dpdo__stream_below(&st, (uint64_t)(m - r));
        int64_t t = E[r];
        E[r] = E[j];
        E[j] = t;
        P->batch[r] = E[r];
    }
    double *w = e->scr[P->sgnew], *g = e->scr[P->sgrad];
    memcpy(w, e->blk[P->bx].cur, d * sizeof(double));
    struct dpdo_node *nd = e->nodes[i];
    char err[DPDO__ERRMSG_LEN] = "";
    int rc = dpdo__loss_eval(nd->loss, nd->shard, w, P->batch, P->b, P->clip, NULL, g, NULL,
                             nd->scratch, err);
    if (!rc && e->reg) {
        double *t = e->scr[P->stmp];
        if (!(rc = dpdo__reg_grad(e->reg, w, t, err)))
            for (size_t c = 0; c < d; c++)
                g[c] += t[c];
    }
    if (rc) return dpdo__eng_err(e, rc, i, "%s", err);
    double tau = (double)(P->tau + 1);
    double eta = P->eta_pow == 0     ? P->eta0
                 : P->eta_pow == 0.5 ? P->eta0 / sqrt(tau)
                                     : P->eta0 * pow(tau, -P->eta_pow);
    if (e->pv.private_run) {
        double s = P->z * 2.0 * P->L / (double)P->b;
        if (DPDO__WEAKENED(e, DPDO__WEAKEN_SENS_DOUBLE)) /* test build */
            for (size_t c = 0; c < d; c++)
                g[c] *= 2;
        dpdo__stream ns;
        dpdo__stream_open(&ns, e->rng, (uint64_t)i, p->t, DPDO_PURPOSE_NOISE);
        if ((rc = dpdo__eng_noise_gauss(e, &ns, i, s, s / P->z, g, d))) return rc;
        /* a charge when this node's largest row use count grows */
        int64_t mx = P->maxuse[i];
        for (int64_t r = 0; r < P->b; r++)
            if (P->uses[P->off[i] + P->batch[r]] + 1 > mx)
                mx = P->uses[P->off[i] + P->batch[r]] + 1;
        if (mx > P->maxuse[i] && (rc = dpdo__plan_add_charge(e, 0, i, mx - P->maxuse[i])))
            return rc;
    }
    for (size_t c = 0; c < d; c++)
        w[c] -= eta * g[c];
    int64_t retire = 0; /* rows that reach WR_USES uses leave the eligible list at commit */
    for (int64_t r = 0; r < P->b; r++)
        retire += P->uses[P->off[i] + P->batch[r]] + 1 >= WR_USES;
    P->nelig_new = P->nelig[i] - retire;
    return DPDO_OK;
}

static int wr_check(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    (void)p;
    wr *P = priv;
    return dpdo__eng_check_finite(e, P->node, e->scr[P->sgnew], (size_t)e->d, "w",
                                  "after the step");
}

static void wr_commit(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    (void)p;
    wr *P = priv;
    int64_t i = P->node, *E = P->elig + P->off[i];
    memcpy(e->blk[P->bx].cur, e->scr[P->sgnew], (size_t)e->d * sizeof(double));
    if (!dpdo__eng_hosted(e, i)) { /* distributed: the row counts live with the node's data */
        P->nelig[i] = P->nelig_new;
        P->tau++;
        return;
    }
    for (int64_t r = P->b - 1; r >= 0; r--) { /* the batch is E[0..b-1]; retire rows used 5 times */
        int32_t *u = &P->uses[P->off[i] + E[r]];
        if (++*u > P->maxuse[i]) P->maxuse[i] = *u;
        if (*u >= WR_USES) {
            E[r] = E[P->nelig[i] - 1];
            P->nelig[i]--;
        }
    }
    P->tau++;
}

static void wr_output(const dpdo__eng *e, const void *priv, int64_t i, double *out)
{
    (void)i;
    const wr *P = priv;
    memcpy(out, e->blk[P->bx].cur, (size_t)e->d * sizeof(double));
}

const dpdo__alg_vt dpdo__vt_dp_sgd_wr = {
    .name = "dp-sgd-wr",
    .title = "DP-SGD with replacement (baseline of DP-WOR-SGD, after Hegedus & Jelasity): a random "
             "node updates the "
             "public model, rows used at most 5 times",
    .priv_size = sizeof(wr),
    .fixture = &FIXTURE,
    .needs_net = 0,
    .distributable = 1,
    .local_charges = 1,
    .configure = wr_configure,
    .prepare = wr_prepare,
    .init = wr_init,
    .ser_priv = wr_ser_priv,
    .plan = wr_plan,
    .local = wr_local,
    .check = wr_check,
    .commit = wr_commit,
    .output = wr_output,
    .finished = wr_finished,
    .release = wr_release,
};
