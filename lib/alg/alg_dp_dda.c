/* SPDX-License-Identifier: BSD-3-Clause */
/* DP-DDA: differentially private distributed dual averaging with node
 * subsampling (Algorithm 1; docs/design/notes/dp-dda.md), and its all-nodes
 * baseline [19] (docs/design/notes/dp-dda.md §6.6). docs/algorithms/dp-dda.md describes the
 * parameters, the privacy modes and the caveats.
 *
 * State per node i: z_i (dual), x_i (primal), s_i (output accumulator, lazy:
 * docs/design/notes/dp-dda.md §2.9) and last_t[i]. Round t:
 *   plan:    the computing set N(t) and W(t) from the public streams
 *   local:   i in N(t): sample B of q_i rows (i, t, SAMPLE), clipped mean
 *            subgradient g at x_i, zeta = g + N(0, sigma^2 I) (i, t, NOISE),
 *            msg_i = z_i + a_t zeta
 *   combine: znew_i = sum_j W(t)_ij msg_j (row order: as stored in W(t));
 *            xnew_i = argmin <znew_i, x> + iota A_{t+1} h(x) + gamma_{t+1}/2 |x|^2
 *   commit:  s_i += x_i (A_t - A_{last_t[i]}), last_t[i] = t, z_i, x_i = new
 * Nodes outside N(t) are untouched ("freeze", Alg. 1 line 12).
 *
 * DPDO_PARAM_DDA_ALL_TRANSMIT = 1 (DO-ADP's comparison variant,
 * docs/design/notes/do-adp.md §5.6): W is the network's static matrix; eta_j(t) = 1 for the active
 * set (BERNOULLI: Bern(p) per node from stream (j, t, ACTIVATION); otherwise a uniform dda-active
 * subset from stream (0, t, ACTIVATION)); every node sends msg_j = z_j + a_t eta_j zeta_j to its
 * neighbours and applies (5) and (6); only active nodes sample, draw noise and are charged. */
#include "../engine/engine_impl.h"
#include "../engine/par_impl.h"
#include "../model/model_impl.h"
#include "../rng/rng_impl.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct dda {
    int baseline;
    int bz, bx, bs;                     /* blocks */
    int sznew, sxnew, smsg, sx0, slast; /* scratch */
    dpdo__round r;
    int r_ok;
    /* resolved at prepare */
    int64_t b, count, B;
    int scheme, all_compute, a_power, all_transmit;
    int scm, scv; /* all-transmit: per-sender message counts (n + 1 each) */
    double p, iota, gamma0, gpow, clip;
    int64_t *idx; /* n x B sample indices (allocated at prepare) */
    int64_t idx_B;
    dpdo__sampling_desc *samp; /* n (allocated at configure) */
    int64_t *match;            /* 2n scratch for injected matchings */
    unsigned char
        *bad; /* n: combine()'s per-node finiteness flags for check() (outside the arena) */
} dda;

#define Z(e, P, i) ((e)->blk[(P)->bz].cur + (size_t)(i) * (size_t)(e)->d)
#define X(e, P, i) ((e)->blk[(P)->bx].cur + (size_t)(i) * (size_t)(e)->d)
#define S(e, P, i) ((e)->blk[(P)->bs].cur + (size_t)(i) * (size_t)(e)->d)
#define SCR(e, k) ((double *)(e)->scr[(k)])

/* A_t exactly (docs/design/notes/dp-dda.md §2.9): t or t(t+1)/2 in 64-bit integers. */
static double A_of(const dda *P, uint64_t t)
{
    if (P->a_power == 0) return (double)t;
    return (double)(t % 2 == 0 ? (t / 2) * (t + 1) : t * ((t + 1) / 2));
}

static double a_of(const dda *P, uint64_t t)
{
    return P->a_power == 0 ? 1.0 : (double)t;
}

static double gamma_of(const dda *P, uint64_t t)
{
    if (P->gpow == 0) return P->gamma0;
    if (P->gpow == 0.5) return P->gamma0 * sqrt((double)t);
    if (P->gpow == 1) return P->gamma0 * (double)t;
    return P->gamma0 * pow((double)t, P->gpow);
}

/* The primal map (docs/design/notes/dp-dda.md §2.6); reg NULL = no regularizer. */
static int da_map(dpdo__eng *e, const double *z, double kappa, double gamma, double *x)
{
    if (!e->reg) {
        for (int64_t k = 0; k < e->d; k++)
            x[k] = -z[k] / gamma;
        return DPDO_OK;
    }
    return dpdo_regularizer_da_map(e->reg, z, e->d, kappa, gamma, x);
}

/* the defaults that depend on the node count or differ for the baseline (the others: the
 * tables PARAMS / PARAMS_BASE) */
static void defaults(dpdo__eng *e, int baseline)
{
    DPDO__PI(e, DPDO_PARAM_DDA_ACTIVE) = baseline ? e->n : (e->n >= 2 ? 2 : 1);
    DPDO__PI(e, DPDO_PARAM_DDA_SCHEME) = e->n >= 2 ? DPDO_ROUND_MATCHING : DPDO_ROUND_AVERAGE;
    DPDO__PI(e, DPDO_PARAM_DDA_GOSSIP_COUNT) = baseline && e->n >= 2 ? 2 : 0;
}
static void defaults_alg(dpdo__eng *e)
{
    defaults(e, 0);
}
static void defaults_base(dpdo__eng *e)
{
    defaults(e, 1);
}

static void release(dpdo__eng *e, void *priv)
{
    (void)e;
    dda *P = priv;
    if (!P) return;
    if (P->r_ok) dpdo__round_free(&P->r);
    dpdo__free(P->idx);
    dpdo__free(P->samp);
    dpdo__free(P->match);
    dpdo__free(P->bad);
    P->r_ok = 0;
    P->idx = NULL;
    P->samp = NULL;
    P->match = NULL;
    P->bad = NULL;
}

static int configure_common(dpdo__eng *e, dda *P)
{
    int64_t n = e->n, d = e->d;
    P->bz = dpdo__eng_block(e, "z", n, d);
    P->bx = dpdo__eng_block(e, "x", n, d);
    P->bs = dpdo__eng_block(e, "s", n, d);
    size_t nd = (size_t)n * (size_t)d * sizeof(double);
    P->sznew = dpdo__eng_scratch(e, nd);
    P->sxnew = dpdo__eng_scratch(e, nd);
    P->smsg = dpdo__eng_scratch(e, nd);
    P->sx0 = dpdo__eng_scratch(e, (size_t)d * sizeof(double));
    P->slast = dpdo__eng_scratch(e, (size_t)n * sizeof(uint64_t));
    P->scm = dpdo__eng_scratch(e, (size_t)(n + 1) * sizeof(int64_t));
    P->scv = dpdo__eng_scratch(e, (size_t)(n + 1) * sizeof(int64_t));
    int rc = dpdo__round_init(&P->r, e->net, -1);
    if (rc) {
        dpdo__round_free(&P->r);
        return rc == DPDO_E_NOMEM
                   ? rc
                   : dpdo__err(e->err, rc, "setup: cannot build the round structure");
    }
    P->r_ok = 1;
    P->samp = dpdo__calloc((size_t)n, sizeof *P->samp);
    P->match = dpdo__calloc((size_t)n * 2, sizeof *P->match);
    P->bad = dpdo__calloc((size_t)n, 1);
    if (!P->samp || !P->match || !P->bad) return DPDO_E_NOMEM;
    return DPDO_OK;
}

static int resolve(dpdo__eng *e, dda *P);
static int da_map(dpdo__eng *e, const double *z, double kappa, double gamma, double *x);

static int configure(dpdo__eng *e, void *priv)
{
    dda *P = priv;
    P->baseline = e->vt->name[6] != 0; /* "dp-dda-baseline" */
    return configure_common(e, P);
}

/* The initial iterate x^(1) = argmin iota A_1 h + gamma_1/2 |x|^2 (docs/design/notes/dp-dda.md
 * §2.3) with the current parameters, so that getters at round 0 show it even before prepare;
 * prepare recomputes it (and reports an ill-posed map). */
static void initial_iterate(dpdo__eng *e, void *priv)
{
    dda *P = priv;
    double *x0 = e->scr[P->sx0];
    memset(x0, 0, (size_t)e->d * sizeof(double));
    char keep[DPDO__ERRMSG_LEN];
    memcpy(keep, e->err, sizeof keep);
    if (resolve(e, P) == DPDO_OK && (e->reg || gamma_of(P, 1) > 0))
        if (da_map(e, x0, P->iota * A_of(P, 1), gamma_of(P, 1), x0) != DPDO_OK)
            memset(x0, 0, (size_t)e->d * sizeof(double));
    memcpy(e->err, keep, sizeof keep);
}

/* Resolve the schedule preset, the scheme and iota; check they fit. */
static int resolve(dpdo__eng *e, dda *P)
{
    int64_t n = e->n;
    int sched = (int)DPDO__PI(e, DPDO_PARAM_DDA_SCHEDULE);
    if (sched == DPDO_DDA_SCHEDULE_AUTO) {
        double mu = 0;
        if (e->reg) dpdo_regularizer_modulus(e->reg, &mu);
        sched = mu > 0 ? DPDO_DDA_SCHEDULE_STRONG : DPDO_DDA_SCHEDULE_CONVEX;
    }
    static const struct {
        int ap;
        double g0, gp;
    } PRE[] = {{0, 0, 0}, {1, 0.0, 0.0}, {0, 1.0, 0.5}, {1, 20.0, 0.0}, {0, 0.01, 0.5}};
    P->a_power = PRE[sched].ap;
    P->gamma0 = PRE[sched].g0;
    P->gpow = PRE[sched].gp;
    double ss = DPDO__PD(e, DPDO_PARAM_STEP_SIZE), sp = DPDO__PD(e, DPDO_PARAM_STEP_POWER);
    if (!isnan(ss)) P->gamma0 = ss;
    if (!isnan(sp)) P->gpow = sp;
    if (P->a_power == 1 && DPDO__PI(e, DPDO_PARAM_MAX_ROUNDS) > 4294967295LL)
        return dpdo__err(
            e->err, DPDO_E_INVAL,
            "prepare: max-rounds = %lld with a_t = t: A_t would overflow (limit 2^32-1)",
            (long long)DPDO__PI(e, DPDO_PARAM_MAX_ROUNDS));
    P->b = DPDO__PI(e, DPDO_PARAM_DDA_ACTIVE);
    P->scheme = (int)DPDO__PI(e, DPDO_PARAM_DDA_SCHEME);
    P->all_compute = (int)DPDO__PI(e, DPDO_PARAM_DDA_ALL_COMPUTE);
    P->p = DPDO__PD(e, DPDO_PARAM_DDA_BERNOULLI_P);
    int64_t cnt = DPDO__PI(e, DPDO_PARAM_DDA_GOSSIP_COUNT);
    if (P->b > n)
        return dpdo__err(e->err, DPDO_E_INVAL, "prepare: dda-active = %lld exceeds the %lld nodes",
                         (long long)P->b, (long long)n);
    if (P->all_compute) P->b = n;
    P->all_transmit = (int)DPDO__PI(e, DPDO_PARAM_DDA_ALL_TRANSMIT);
    if (P->all_transmit) { /* static W; the scheme only says how eta is drawn */
        P->count = 0;
        P->iota = P->all_compute                      ? 1.0
                  : P->scheme == DPDO_ROUND_BERNOULLI ? P->p
                                                      : (double)P->b / (double)n;
        return DPDO_OK;
    }
    int64_t m = P->r.m;
    switch (P->scheme) {
    case DPDO_ROUND_ALL:
        if (!P->all_compute && P->b != n)
            return dpdo__err(e->err, DPDO_E_INVAL,
                             "prepare: scheme ALL makes every node active; set dda-active = n = "
                             "%lld or pick a sampled scheme",
                             (long long)n);
        P->count = n;
        break;
    case DPDO_ROUND_EDGES:
        P->count = cnt ? cnt : P->b / 2;
        if (P->count < 1 || P->count > m)
            return dpdo__err(e->err, DPDO_E_INVAL,
                             "prepare: scheme EDGES needs 1 <= edges <= %lld (got %lld)",
                             (long long)m, (long long)P->count);
        break;
    case DPDO_ROUND_MATCHING:
        P->count = cnt ? cnt : P->b;
        if (P->count % 2 != 0 || P->count < 2 || P->count > n)
            return dpdo__err(e->err, DPDO_E_INVAL,
                             "prepare: dda-active/gossip count = %lld: scheme MATCHING needs an "
                             "even count in [2, n]",
                             (long long)P->count);
        break;
    case DPDO_ROUND_AVERAGE:
    case DPDO_ROUND_INDUCED:
        P->count = cnt ? cnt : P->b;
        if (P->count < 1 || P->count > n)
            return dpdo__err(e->err, DPDO_E_INVAL, "prepare: gossip count = %lld must be in [1, n]",
                             (long long)P->count);
        break;
    case DPDO_ROUND_BERNOULLI:
        P->count = 0;
        break;
    default:
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: dda-scheme = %d is not a DPDO_ROUND_* value", P->scheme);
    }
    if (!P->all_compute && P->scheme != DPDO_ROUND_ALL && P->scheme != DPDO_ROUND_EDGES &&
        P->scheme != DPDO_ROUND_BERNOULLI && P->count != P->b)
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: gossip count %lld differs from dda-active %lld (only the "
                         "baseline may gossip on a "
                         "subset of its computing nodes)",
                         (long long)P->count, (long long)P->b);
    P->iota = P->all_compute                      ? 1.0
              : P->scheme == DPDO_ROUND_BERNOULLI ? P->p
                                                  : (double)P->b / (double)n;
    return DPDO_OK;
}

/* Probability that node i computes in a round, for every node (the automatic calibration count
 * plans for a high-probability bound on each node's releases, docs/design/notes/dp-dda.md §7;
 * docs/algorithms/ dp-dda.md "Calibration"). Exact for every scheme except a matching of more than
 * one pair on a non-complete graph (a random greedy matching), which is estimated from 20000 draws
 * at round ids outside the run (public randomness) and raised by four standard errors plus 4/R. */
static int activation_probs(dpdo__eng *e, dda *P, double *pi)
{
    int64_t n = e->n, m = P->r.m;
    for (int64_t i = 0; i < n; i++)
        pi[i] = 1.0;
    if (P->all_compute || P->scheme == DPDO_ROUND_ALL) return DPDO_OK;
    if (P->all_transmit || P->scheme == DPDO_ROUND_AVERAGE || P->scheme == DPDO_ROUND_INDUCED ||
        P->scheme == DPDO_ROUND_BERNOULLI) {
        double p = P->scheme == DPDO_ROUND_BERNOULLI ? P->p : (double)P->b / (double)n;
        for (int64_t i = 0; i < n; i++)
            pi[i] = p;
        return DPDO_OK;
    }
    int complete = m == n * (n - 1) / 2;
    if (P->scheme == DPDO_ROUND_MATCHING && complete) {
        for (int64_t i = 0; i < n; i++)
            pi[i] = (double)P->count / (double)n;
        return DPDO_OK;
    }
    /* degrees from the edge list */
    for (int64_t i = 0; i < n; i++)
        pi[i] = 0;
    for (int64_t k = 0; k < m; k++) {
        pi[e->net->edges[2 * k]] += 1;
        pi[e->net->edges[2 * k + 1]] += 1;
    }
    if (P->scheme == DPDO_ROUND_EDGES || (P->scheme == DPDO_ROUND_MATCHING && P->count == 2)) {
        double k = P->scheme == DPDO_ROUND_EDGES ? (double)P->count : 1.0, md = (double)m;
        for (int64_t i = 0; i < n;
             i++) { /* 1 - C(m - deg, k) / C(m, k): one of its edges is drawn */
            double dg = pi[i];
            if (md - dg < k) {
                pi[i] = 1.0;
                continue;
            }
            double l = dpdo__lgamma(md - dg + 1) - dpdo__lgamma(md - dg - k + 1) -
                       dpdo__lgamma(md + 1) + dpdo__lgamma(md - k + 1);
            pi[i] = -expm1(l);
        }
        return DPDO_OK;
    }
    if (P->scheme != DPDO_ROUND_MATCHING) {
        for (int64_t i = 0; i < n; i++)
            pi[i] = 1.0;
        return DPDO_OK;
    }
    /* random greedy matching of count/2 pairs on a general graph: Monte Carlo */
    double work = (double)(m + n);
    int64_t R = work > 0 ? (int64_t)(2e7 / work) : 20000;
    R = R > 20000 ? 20000 : R < 1000 ? 1000 : R;
    for (int64_t i = 0; i < n; i++)
        pi[i] = 0;
    char err[DPDO__ERRMSG_LEN] = "";
    for (int64_t t = 0; t < R; t++) {
        int rc = dpdo__round_sample_matching(&P->r, e->net, e->rng,
                                             (UINT64_C(1) << 62) + (uint64_t)t, P->count, err);
        if (rc) return dpdo__err(e->err, rc, "prepare: activation probabilities: %s", err);
        for (int64_t c = 0; c < P->r.nactive; c++)
            pi[P->r.active[c]] += 1;
    }
    for (int64_t i = 0; i < n; i++) {
        double ph = pi[i] / (double)R;
        ph += 4.0 * sqrt(ph * (1 - ph) / (double)R) + 4.0 / (double)R;
        pi[i] = ph > 1 ? 1.0 : ph;
    }
    return DPDO_OK;
}

/* The noise skeleton's callbacks (dpdo__eng_noise_plan). */
static int paper_set(dpdo__eng *e, void *priv, dpdo_paper *pp)
{
    dda *P = priv;
    int rc;
    double n = (double)e->n;
    if ((rc = dpdo_paper_set(pp, "eps", e->o.epsilon)) ||
        (rc = dpdo_paper_set(pp, "delta0", e->o.delta)) ||
        (rc = dpdo_paper_set(pp, "b", P->iota * n)) || (rc = dpdo_paper_set(pp, "n", n)) ||
        (rc = dpdo_paper_set(pp, "q", (double)e->qmin)) ||
        (rc = dpdo_paper_set(pp, "L", e->o.lipschitz)) ||
        (rc = dpdo_paper_set(pp, "T", (double)DPDO__PI(e, DPDO_PARAM_MAX_ROUNDS))) ||
        (rc = dpdo_paper_set(pp, "C", DPDO__PD(e, DPDO_PARAM_DDA_PAPER_C))))
        return rc;
    return DPDO_OK;
}

static int paper_sigma(dpdo__eng *e, void *priv, dpdo_paper *pp, double *sigma)
{
    dpdo_paper_get(pp, "sigma_thm", sigma);
    return DPDO_OK;
}

/* RIGOROUS: calibrate for the node with the smallest shard (largest sampling rate) */
static int rigorous(dpdo__eng *e, void *priv, double *sigma)
{
    dda *P = priv;
    int64_t B = P->B, qmin = e->qmin;
    dpdo__sampling_desc sd = {DPDO_SAMPLING_WOR, (double)B / (double)qmin, qmin, B};
    double *pi = dpdo__alloc_array((size_t)e->n, sizeof *pi), K = 0;
    if (!pi) return dpdo__err(e->err, DPDO_E_NOMEM, "prepare: out of memory");
    int rc = activation_probs(e, P, pi);
    if (!rc) K = dpdo__eng_calib_counts(e, pi, 1.0);
    dpdo__free(pi);
    if (rc || (rc = dpdo__eng_calibrate_sigma(e, &sd, e->pv.sens, K, sigma))) return rc;
    dpdo__eng_note_wor_floor(e, &sd, e->pv.sens, K, *sigma);
    return DPDO_OK;
}

static void noisy_notes(dpdo__eng *e, void *priv)
{
    if (((dda *)priv)->B > 1)
        dpdo__eng_note(e, "paper bound assumes one sample per round (batch > 1)");
}

static int prepare(dpdo__eng *e, void *priv)
{
    dda *P = priv;
    int rc = resolve(e, P);
    if (rc) return rc;
    int64_t n = e->n;
    /* primal map well posed at t = 1 (A_t, gamma_t non-decreasing cover every later round) */
    double *x0 = SCR(e, P->sx0);
    memset(x0, 0, (size_t)e->d * sizeof(double));
    double kap1 = P->iota * A_of(P, 1), g1 = gamma_of(P, 1);
    if (!e->reg && !(g1 > 0))
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: no regularizer and gamma_1 = %g: the DDA primal map is ill "
                         "posed (docs/design/notes/dp-dda.md §2.6); use step_size > 0",
                         g1);
    if ((rc = da_map(e, x0, kap1, g1, x0)))
        return dpdo__err(e->err, rc,
                         "prepare: %s with gamma_1 = %g, kappa_1 = %g: %s "
                         "(docs/design/notes/dp-dda.md §2.6); use step_size > 0",
                         e->reg ? dpdo_regularizer_name(e->reg) : "none", g1, kap1,
                         dpdo_regularizer_errmsg(e->reg));
    /* samples per round */
    int64_t B = DPDO__PI(e, DPDO_PARAM_BATCH), qmin = e->qmin;
    if (B > qmin)
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: batch = %lld exceeds the smallest shard (%lld rows)",
                         (long long)B, (long long)qmin);
    if (B != P->idx_B) {
        int64_t *ni = dpdo__alloc_array((size_t)n * (size_t)B, sizeof *ni);
        if (!ni) return dpdo__err(e->err, DPDO_E_NOMEM, "prepare: out of memory");
        dpdo__free(P->idx);
        P->idx = ni;
        P->idx_B = B;
    }
    P->B = B;
    /* clipping and sensitivity (replace-one: the mean of B clipped gradients moves by <= 2C/B) */
    double L = e->o.lipschitz, clip = DPDO__PD(e, DPDO_PARAM_CLIP);
    int batch_kind = 0;
    for (int64_t i = 0; i < n; i++)
        batch_kind |= e->nodes[i]->loss->kind == DPDO_LOSS_KIND_BATCH;
    int trusted = clip == INFINITY;
    P->clip = trusted ? 0.0 : (isnan(clip) ? L : clip);
    double C = trusted ? L : P->clip;
    e->pv.sens = 2.0 * C / (double)B;
    /* sigma and the paper bound (the engine's noise skeleton) */
    static const dpdo__noise_plan NP = {.paper = "dp-dda-thm1",
                                        .theorem = "Theorem 1",
                                        .invalid_note = "paper bound invalid",
                                        .paper_sigma_key = "sigma",
                                        .paper_set = paper_set,
                                        .paper_sigma = paper_sigma,
                                        .rigorous = rigorous,
                                        .notes = noisy_notes};
    double sigma = 0;
    if ((rc = dpdo__eng_noise_plan(e, P, &NP, &sigma))) return rc;
    if (e->pv.private_run && !P->all_compute && P->scheme != DPDO_ROUND_ALL)
        dpdo__eng_note(e, "active set treated as public: no amplification by node sampling is "
                          "claimed (docs/design/notes/dp-dda.md §7 item 4)");
    if (e->pv.private_run && trusted)
        dpdo__eng_note(e, "no clipping: the guarantee assumes every per-sample gradient norm <= L");
    int64_t bad = 0;
    double Li = 0;
    if (e->pv.private_run && trusted && !batch_kind && dpdo__eng_grad_exceeds(e, L, 0, &bad, &Li))
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: node %lld: per-sample gradients reach %g > L = %g without "
                         "clipping; clip or raise lipschitz",
                         (long long)bad, Li, L);
    if (P->all_transmit) {
        int64_t *cm = e->scr[P->scm], *cv = e->scr[P->scv];
        for (int64_t j = 0; j < n; j++) {
            cm[j] = e->net->rowptr[j + 1] - e->net->rowptr[j] - 1;
            cv[j] = cm[j] * e->d;
        }
        cm[n] = cv[n] = 0;
        if (e->pv.private_run)
            dpdo__eng_note(e,
                           "all-transmit variant: the activation is observable from the messages");
    }
    /* events: one per distinct shard size */
    return dpdo__eng_events_wor(e, B, e->pv.sens, sigma, P->samp);
}

static void init(dpdo__eng *e, void *priv)
{
    dda *P = priv;
    if (!e->prepared) initial_iterate(e, priv);
    size_t nd = (size_t)e->n * (size_t)e->d;
    memset(e->blk[P->bz].cur, 0, nd * sizeof(double));
    memset(e->blk[P->bs].cur, 0, nd * sizeof(double));
    memset(e->scr[P->slast], 0, (size_t)e->n * sizeof(uint64_t));
    const double *x0 = SCR(e, P->sx0);
    for (int64_t i = 0; i < e->n; i++)
        memcpy(X(e, P, i), x0, (size_t)e->d * sizeof(double));
}

/* DO-ADP's comparison variant: every node transmits, the active set adds gradients. */
static int plan_all_transmit(dpdo__eng *e, dda *P, dpdo__plan *p)
{
    int64_t n = e->n;
    memset(p->is_comp, 0, (size_t)n);
    if (e->inj_active) {
        for (int64_t c = 0; c < e->inj_b; c++)
            p->is_comp[e->inj_active[c]] = 1;
    } else if (P->all_compute) {
        memset(p->is_comp, 1, (size_t)n);
    } else if (P->scheme == DPDO_ROUND_BERNOULLI) {
        for (int64_t i = 0; i < n; i++) {
            dpdo__stream st;
            dpdo__stream_open(&st, e->rng, (uint64_t)i, p->t, DPDO_PURPOSE_ACTIVATION);
            p->is_comp[i] = (unsigned char)dpdo__stream_bernoulli(&st, P->p);
        }
    } else {
        dpdo__stream st;
        dpdo__stream_open(&st, e->rng, 0, p->t, DPDO_PURPOSE_ACTIVATION);
        dpdo__stream_subset(&st, n, P->b, p->comp);
        for (int64_t c = 0; c < P->b; c++)
            p->is_comp[p->comp[c]] = 1;
    }
    dpdo__plan_list(p, n);
    p->nstages = 1;
    p->stage[0].who = DPDO__RUN_ALL;
    p->stage[0].npat = 1;
    p->stage[0].pat[0] = (dpdo__xpat){.kind = DPDO__PAT_COUNTS,
                                      .cmsg = e->scr[P->scm],
                                      .cval = e->scr[P->scv],
                                      .buf = e->scr[P->smsg],
                                      .ld = e->d,
                                      .route = DPDO__ROUTE_NET_ALL};
    if (dpdo__plan_charge_computing(e, p, 1)) return e->plan.charge_err;
    return DPDO_OK;
}

static int plan(dpdo__eng *e, void *priv, dpdo__plan *p)
{
    dda *P = priv;
    dpdo__round *r = &P->r;
    char err[DPDO__ERRMSG_LEN] = "";
    int rc;
    if (P->all_transmit) return plan_all_transmit(e, P, p);
    if (e->inj_active) {
        int64_t b = e->inj_b;
        rc = dpdo__round_set_active(r, e->inj_active, b, err);
        if (!rc) {
            if (P->scheme == DPDO_ROUND_AVERAGE || P->scheme == DPDO_ROUND_BERNOULLI)
                dpdo__round_weights_average(r);
            else if (P->scheme == DPDO_ROUND_INDUCED)
                rc = dpdo__round_weights_induced(r, e->net, err);
            else if (P->scheme == DPDO_ROUND_MATCHING || P->scheme == DPDO_ROUND_EDGES) {
                for (int64_t k = 0; k + 1 < b; k += 2) {
                    P->match[k] = e->inj_active[k];
                    P->match[k + 1] = e->inj_active[k + 1];
                }
                rc = dpdo__round_set_edges(r, P->match, b / 2, err);
                if (!rc) rc = dpdo__round_weights_from_edges(r);
            } else
                rc = dpdo__round_draw(r, e->net, e->rng, p->t, DPDO_ROUND_ALL, 0, 0, err);
        }
    } else {
        rc = dpdo__round_draw(r, e->net, e->rng, p->t, P->scheme, P->count, P->p, err);
    }
    if (rc) return dpdo__eng_err(e, rc, -1, "gossip round: %s", err);
    memset(p->is_comp, 0, (size_t)e->n);
    if (P->all_compute) {
        for (int64_t i = 0; i < e->n; i++)
            p->comp[i] = i;
        p->ncomp = e->n;
        for (int64_t c = 0; c < p->ncomp; c++)
            p->is_comp[p->comp[c]] = 1;
    } else {
        /* The threads split this list into contiguous chunks. When every node computes, the
         * list is in ascending order, so that each node runs on the same core round after round
         * and its rows (z, x, s, the message) stay in that core's cache (docs/performance.md: 2
         * threads on DP-DDA b = n = 20, 84-89 -> 76-81 us per round); otherwise the computing nodes
         * go edge by edge (a matched pair side by side), then the isolated ones, so that a pair,
         * whose nodes read each other's messages, stays on one core. Each node's work does not
         * depend on the order (check() reports in ascending node order). */
        int64_t c = 0;
        if (r->nactive < e->n)
            for (int64_t q = 0; q < 2 * r->nedges; q++) {
                int64_t u = r->edges[q];
                if (r->is_active[u] && !p->is_comp[u]) p->is_comp[u] = 1, p->comp[c++] = u;
            }
        for (int64_t t = 0; t < r->nactive; t++) {
            int64_t u = r->active[t];
            if (!p->is_comp[u]) p->is_comp[u] = 1, p->comp[c++] = u;
        }
        p->ncomp = c;
    }
    p->nstages = 1;
    p->stage[0].who = DPDO__RUN_COMPUTING;
    p->stage[0].npat = 1;
    p->stage[0].pat[0] = (dpdo__xpat){.kind = DPDO__PAT_ROUND,
                                      .payload = DPDO__PAY_DENSE,
                                      .r = r,
                                      .buf = e->scr[P->smsg],
                                      .ld = e->d};
    if (dpdo__plan_charge_computing(e, p, 1)) return e->plan.charge_err;
    return DPDO_OK;
}

/* local(): messages of up to NZ_AHEAD coordinates draw their noise ahead of the gradient; longer
 * ones in chunks of NZ_CHUNK (even: every chunk but the last takes whole generator blocks) */
enum { NZ_AHEAD = 4096, NZ_CHUNK = 512 };

static int local(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t stage, int64_t i)
{
    (void)stage;
    dda *P = priv;
    size_t d = (size_t)e->d;
    double *msg = SCR(e, P->smsg) + (size_t)i * d;
    const double *z = Z(e, P, i);
    double at = a_of(P, p->t);
    if (P->all_transmit && !p->is_comp[i]) { /* eta_i = 0: z_i is sent unchanged */
        memcpy(msg, z, d * sizeof(double));
        return DPDO_OK;
    }
    if (e->inj_zeta) {
        const double *zeta = e->inj_zeta + (size_t)i * d;
        for (size_t k = 0; k < d; k++)
            msg[k] = z[k] + at * zeta[k];
        return DPDO_OK;
    }
    struct dpdo_node *nd = e->nodes[i];
    dpdo__stream st;
    int64_t *idx = P->idx + (size_t)i * (size_t)P->B, cnt = 0;
    dpdo__stream_open(&st, e->rng, (uint64_t)i, p->t, DPDO_PURPOSE_SAMPLE);
    int rc = dpdo__sampling_draw(&P->samp[i], &st, e->q[i], idx, &cnt);
    if (rc)
        return dpdo__eng_err(e, rc, i, "drawing the sample failed (generator code %d)",
                             dpdo__stream_cb_code(&st));
    /* Continuous noise is added in the pass that forms the message (dpdo__eng_noise_fused): for
     * short messages (up to NZ_AHEAD coordinates) it is drawn first, into the node's loss scratch
     * (dpdo__loss_eval_into leaves its first d doubles alone), while the sample rows come in from
     * memory; longer ones draw it in L1-sized chunks inside that pass. Secure
     * (grid) noise, which rounds the gradient, keeps the separate draw. All give the bits of
     * g -> g + noise -> z + a_t g. */
    double scale = NAN, *nz = nd->scratch;
    const int weak = DPDO__WEAKENED(e, DPDO__WEAKEN_SENS_DOUBLE);
    if (e->pv.sigma > 0 && !weak &&
        (rc = dpdo__eng_noise_gauss_fused(e, i, e->pv.sigma, e->pv.sens, &scale)))
        return rc;
    const int ahead = scale == scale && d <= NZ_AHEAD;
    /* one row of a linear loss: the normals go into the message row, and its gradient, the noise
     * and the message are one pass over it (below) */
    const int row1 = ahead && cnt == 1 && dpdo__loss_row1_ok(nd->loss, nd->shard);
    if (scale == scale) dpdo__stream_open(&st, e->rng, (uint64_t)i, p->t, DPDO_PURPOSE_NOISE);
    if (ahead) {
        /* the rows' cache hints spread over the draw (x and z: no gain) */
        dpdo__eng_normals_prefetching(&st, row1 ? msg : nz, d, nd->shard, idx, cnt);
        dpdo__eng_probe(e, DPDO__PH_NOISE); /* phase timing: the draw is noise time */
    }
    char err[DPDO__ERRMSG_LEN] = "";
    int64_t ncl = 0;
    if (row1) {
        /* its coefficient, then g = 0 + c row, the noise and the message in one pass (the bits
         * of the passes below) */
        double c;
        const double *row;
        rc = dpdo__loss_row1(nd->loss, nd->shard, X(e, P, i), idx[0], P->clip, &c, &row, err);
        if (rc < 0) return dpdo__eng_err(e, rc, i, "%s", err);
        dpdo__eng_probe(e, DPDO__PH_GRAD);
        if (!dpdo__eng_noise_affine_row(msg, z, at, scale, c, row, d))
            return dpdo__eng_err(e, dpdo__loss_err_grad(nd->loss, err), i, "%s", err);
        dpdo__eng_probe(e, DPDO__PH_NOISE);
        return dpdo__eng_noise_status(e, &st, i);
    }
    /* g is built in the message row, then turned into the message in place */
    rc = dpdo__loss_eval_into(nd->loss, nd->shard, X(e, P, i), idx, cnt, P->clip, NULL, msg, &ncl,
                              nd->scratch, err);
    if (rc) return dpdo__eng_err(e, rc, i, "%s", err);
    if (weak) /* test build: twice the charged sensitivity */
        for (size_t k = 0; k < d; k++)
            msg[k] *= 2;
    dpdo__eng_probe(e, DPDO__PH_GRAD);
    if (scale == scale) {
        if (ahead) {
            dpdo__eng_noise_affine(msg, z, at, scale, nz, d);
        } else {
            double buf[NZ_CHUNK];
            for (size_t k0 = 0; k0 < d; k0 += NZ_CHUNK) {
                size_t len = d - k0 < NZ_CHUNK ? d - k0 : NZ_CHUNK;
                dpdo__stream_normals(&st, buf, len);
                dpdo__eng_noise_affine(msg + k0, z + k0, at, scale, buf, len);
            }
        }
        dpdo__eng_probe(e, DPDO__PH_NOISE);
        return dpdo__eng_noise_status(e, &st, i);
    }
    if (e->pv.sigma > 0) {
        dpdo__stream_open(&st, e->rng, (uint64_t)i, p->t, DPDO_PURPOSE_NOISE);
        if ((rc = dpdo__eng_noise_gauss(e, &st, i, e->pv.sigma, e->pv.sens, msg, d))) return rc;
    }
    dpdo__eng_probe(e, DPDO__PH_NOISE);
    for (size_t k = 0; k < d; k++)
        msg[k] = z[k] + at * msg[k];
    return DPDO_OK;
}

/* combine() in blocks of CB coordinates that stay in L1: the block of z_new is summed from the
 * messages (the same order of additions per coordinate as whole-vector passes: bits unchanged),
 * mapped to x_new and tested for finiteness while it is in cache (docs/performance.md: the round
 * used to make 3 more passes over z_new and x_new: the regularizer's argument scan and check()'s
 * two). */
enum { CB = 256 };
typedef enum { SUM_ZERO, SUM_COPY, SUM_AVERAGE, SUM_WEIGHTED } sum_kind;

typedef struct cb_args {
    const double *msg;
    const int64_t *src;
    const double *wt;
    int64_t cnt;
    double inv;
    size_t d;
    int64_t i;
    sum_kind kind;
    const dpdo__reg_pmap *pm;
    double *zn;
} cb_args;

/* the block helpers are inlined into each COMBINE_BLOCKS / INSTALL_MAP instance so that they are
 * compiled for its target (AVX2 or the baseline) */
#define DDA_INLINE DPDO__ALWAYS_INLINE

/* 1 if some x[k] is Inf or NaN */
DDA_INLINE static inline int any_nonfinite(const double *x, size_t n)
{
    uint64_t acc = 0;
    for (size_t k = 0; k < n; k++)
        acc |= dpdo__nf_bits(x[k]);
    return (int)(acc >> 63);
}

/* zb += w_t x_t for the terms t0 .. cnt-1, term after term (coordinates k0 .. k0+len-1) */
DDA_INLINE static inline void add_terms(const cb_args *a, int64_t t0, size_t k0, size_t len,
                                        double *restrict zb)
{
    for (int64_t t = t0; t < a->cnt; t++) {
        const double *restrict xj = a->msg + (size_t)a->src[t] * a->d + k0;
        double w = a->wt[t];
        for (size_t k = 0; k < len; k++)
            zb[k] += w * xj[k];
    }
}

/* z_new of two terms, its map and both finiteness tests in one pass over a block: per coordinate
 * w0 x0 + w1 x1 (resp. (x0 + x1) / 2 as (x0 + x1) * inv), the operations of the general loops */
DDA_INLINE static inline int pair_block(const cb_args *a, size_t k0, size_t len,
                                        double *restrict zb)
{
    const size_t d = a->d;
    const double *restrict x0 = a->msg + (size_t)a->src[0] * d + k0;
    const double *restrict x1 = a->msg + (size_t)a->src[1] * d + k0;
    const double c = a->pm->c, tau = a->pm->tau, inv = a->inv;
    uint64_t acc = 0;
    if (a->kind == SUM_WEIGHTED) {
        const double w0 = a->wt[0], w1 = a->wt[1];
        if (a->pm->kind == DPDO__PMAP_SCALE)
            for (size_t k = 0; k < len; k++) {
                double v = w0 * x0[k] + w1 * x1[k];
                zb[k] = v;
                acc |= dpdo__nf_bits(v) | dpdo__nf_bits(v * c);
            }
        else
            for (size_t k = 0; k < len; k++) {
                double v = w0 * x0[k] + w1 * x1[k];
                zb[k] = v;
                acc |= dpdo__nf_bits(v) | dpdo__nf_bits(dpdo__soft(v, tau) * c);
            }
    } else {
        if (a->pm->kind == DPDO__PMAP_SCALE)
            for (size_t k = 0; k < len; k++) {
                double v = (x0[k] + x1[k]) * inv;
                zb[k] = v;
                acc |= dpdo__nf_bits(v) | dpdo__nf_bits(v * c);
            }
        else
            for (size_t k = 0; k < len; k++) {
                double v = (x0[k] + x1[k]) * inv;
                zb[k] = v;
                acc |= dpdo__nf_bits(v) | dpdo__nf_bits(dpdo__soft(v, tau) * c);
            }
    }
    return (int)(acc >> 63);
}

/* The blocks of combine(): z_new summed (the order of additions of whole-vector passes), and for
 * a coordinate-wise map x_new computed into an L1 buffer and both tested. Returns 1 if a value
 * is not finite. Compiled twice, for AVX2 and for the baseline: the same operations in the same
 * order (no FMA), so the same bits. */
#define COMBINE_BLOCKS(NAME, ATTR)                                                                 \
    ATTR static int NAME(const cb_args *a)                                                         \
    {                                                                                              \
        const size_t d = a->d;                                                                     \
        int bad = 0;                                                                               \
        const int pair = a->cnt == 2 && (a->kind == SUM_WEIGHTED || a->kind == SUM_AVERAGE) &&     \
                         (a->pm->kind == DPDO__PMAP_SCALE || a->pm->kind == DPDO__PMAP_SOFT);      \
        for (size_t k0 = 0; k0 < d; k0 += CB) {                                                    \
            size_t len = d - k0 < CB ? d - k0 : CB;                                                \
            double *restrict zb = a->zn + k0;                                                      \
            if (pair) { /* two terms (a matched pair, or b = 2): one pass */                       \
                bad |= pair_block(a, k0, len, zb);                                                 \
                continue;                                                                          \
            }                                                                                      \
            switch (a->kind) {                                                                     \
            case SUM_ZERO:                                                                         \
                memset(zb, 0, len * sizeof(double));                                               \
                add_terms(a, 0, k0, len, zb);                                                      \
                break;                                                                             \
            case SUM_COPY:                                                                         \
                memcpy(zb, a->msg + (size_t)a->i * d + k0, len * sizeof(double));                  \
                break;                                                                             \
            case SUM_AVERAGE:                                                                      \
                memcpy(zb, a->msg + (size_t)a->src[0] * d + k0, len * sizeof(double));             \
                for (int64_t t = 1; t < a->cnt; t++) {                                             \
                    const double *restrict xj = a->msg + (size_t)a->src[t] * d + k0;               \
                    for (size_t k = 0; k < len; k++)                                               \
                        zb[k] += xj[k];                                                            \
                }                                                                                  \
                for (size_t k = 0; k < len; k++)                                                   \
                    zb[k] *= a->inv;                                                               \
                break;                                                                             \
            case SUM_WEIGHTED: {                                                                   \
                const double *restrict x0 = a->msg + (size_t)a->src[0] * d + k0;                   \
                double w0 = a->wt[0];                                                              \
                for (size_t k = 0; k < len; k++)                                                   \
                    zb[k] = w0 * x0[k];                                                            \
                add_terms(a, 1, k0, len, zb);                                                      \
                break;                                                                             \
            }                                                                                      \
            }                                                                                      \
            if (a->pm->kind != DPDO__PMAP_NONE) { /* x_new is only tested; commit() maps again */  \
                double xb[CB];                                                                     \
                dpdo__reg_pmap_apply(a->pm, zb, xb, len);                                          \
                bad |= any_nonfinite(zb, len) | any_nonfinite(xb, len);                            \
            }                                                                                      \
        }                                                                                          \
        return bad;                                                                                \
    }

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DDA_AVX2 __attribute__((target("avx2")))
static int cpu_avx2(void)
{
    return __builtin_cpu_supports("avx2"); /* libgcc's CPU model, filled before main */
}
#else
#define DDA_AVX2
static int cpu_avx2(void)
{
    return 0;
}
#endif
COMBINE_BLOCKS(combine_blocks_avx2, DDA_AVX2)
COMBINE_BLOCKS(combine_blocks_base, )

static int combine(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t stage, int64_t i)
{
    (void)stage;
    dda *P = priv;
    const dpdo__round *r = &P->r;
    size_t d = (size_t)e->d;
    const double *msg = SCR(e, P->smsg);
    double *zn = SCR(e, P->sznew) + (size_t)i * d, *xn = SCR(e, P->sxnew) + (size_t)i * d;
    /* the terms of z_new: msg rows src[t] with weights (SUM_ZERO: 0 + sum w x; SUM_COPY: row i;
     * SUM_AVERAGE: (x_0 + x_1 + ...) / count; SUM_WEIGHTED: w_0 x_0 + w_1 x_1 + ...) */
    sum_kind kind;
    const int64_t *src = NULL;
    const double *wt = NULL;
    int64_t cnt = 0;
    double inv = 0.0;
    if (P->all_transmit) { /* (5) with the static W of the network (closed neighbourhood, CSR
                              order) */
        const struct dpdo_network *net = e->net;
        kind = SUM_ZERO;
        src = net->col + net->rowptr[i];
        wt = net->val + net->rowptr[i];
        cnt = net->rowptr[i + 1] - net->rowptr[i];
    } else if (!r->is_active[i]) {
        kind = SUM_COPY; /* isolated computing node */
    } else if (r->full_average) {
        kind = SUM_AVERAGE;
        src = r->active;
        cnt = r->nactive;
        inv = 1.0 / (double)r->nactive;
    } else {
        kind = SUM_WEIGHTED;
        int64_t b0 = r->wptr[r->pos[i]], b1 = r->wptr[r->pos[i] + 1];
        src = r->wcol + b0;
        wt = r->wval + b0;
        cnt = b1 - b0;
    }
    char err[DPDO__ERRMSG_LEN] = "";
    dpdo__reg_pmap pm;
    int rc = dpdo__reg_da_pointwise(e->reg, P->iota * A_of(P, p->t + 1), gamma_of(P, p->t + 1), &pm,
                                    err);
    if (rc) return dpdo__eng_err(e, rc, i, "primal map: %s", err);
    const cb_args ca = {msg, src, wt, cnt, inv, d, i, kind, &pm, zn};
    int bad = cpu_avx2() ? combine_blocks_avx2(&ca) : combine_blocks_base(&ca);
    dpdo__eng_probe(e, DPDO__PH_GOSSIP);
    if (pm.kind == DPDO__PMAP_NONE) { /* a map that is not coordinate-wise: whole vectors */
        if (dpdo__first_nonfinite(zn, d) < d) {
            bad = 1; /* check() names the coordinate */
        } else {
            rc = da_map(e, zn, P->iota * A_of(P, p->t + 1), gamma_of(P, p->t + 1), xn);
            if (rc)
                return dpdo__eng_err(e, rc, i, "primal map: %s", dpdo_regularizer_errmsg(e->reg));
            bad = dpdo__first_nonfinite(xn, d) < d;
        }
    }
    P->bad[i] = (unsigned char)bad;
    dpdo__eng_probe(e, DPDO__PH_PRIMAL);
    return DPDO_OK;
}

/* check() and commit() per node (dpdo__par_for: on the round's threads when it is parallel; each
 * call touches only node i's rows, so the bits do not depend on the split) */
typedef struct per_node {
    dpdo__eng *e;
    dda *P;
    const dpdo__plan *p;
    double At;
    dpdo__reg_pmap pm; /* the primal map of the round when it is coordinate-wise */
} per_node;

static int64_t node_of(const per_node *a, int64_t c)
{
    return a->P->all_transmit ? c : a->p->comp[c];
}

/* the round's primal map constants (combine() checked its arguments) */
static void round_map(const dpdo__eng *e, const dda *P, const dpdo__plan *p, dpdo__reg_pmap *pm)
{
    dpdo__reg_pmap_of(e->reg, P->iota * A_of(P, p->t + 1), gamma_of(P, p->t + 1), pm);
}

static int check(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    dda *P = priv;
    size_t d = (size_t)e->d;
    int64_t cnt = P->all_transmit ? e->n : p->ncomp;
    per_node a = {e, P, p, 0.0, {0}};
    round_map(e, P, p, &a.pm);
    /* combine() flagged its node (bad[i], written by every combine of the round; a process of a
     * distributed run sees flags of the nodes it hosts only, the others stay 0) */
    /* ascending node order (plan() lists the computing nodes pair by pair; r.active is sorted) */
    const int64_t *asc = P->all_transmit || P->all_compute ? NULL : P->r.active;
    for (int64_t c = 0; c < cnt; c++) {
        int64_t i = asc ? asc[c] : node_of(&a, c);
        if (!P->bad[i])
            continue; /* the message of the first flagged node in order, as a serial scan */
        const double *zn = SCR(e, P->sznew) + (size_t)i * d, *xn = SCR(e, P->sxnew) + (size_t)i * d;
        size_t k = dpdo__first_nonfinite(zn, d);
        if (k < d)
            return dpdo__eng_err(e, DPDO_E_NUMERIC, i, "z[%zu] = %g after the dual update", k,
                                 zn[k]);
        for (k = 0; k < d; k++) { /* x_new: kept, or the coordinate-wise map of z_new */
            double v = a.pm.kind == DPDO__PMAP_NONE ? xn[k] : dpdo__reg_pmap_one(&a.pm, zn[k]);
            if (!isfinite(v))
                return dpdo__eng_err(e, DPDO_E_NUMERIC, i, "x[%zu] = %g after the primal update", k,
                                     v);
        }
    }
    return DPDO_OK;
}

/* one pass: s += x w with the old x, then x = x_new, z = z_new (five distinct rows) */
static void install(double *restrict s, double *restrict x, double *restrict z,
                    const double *restrict xn, const double *restrict zn, double w, size_t d)
{
    for (size_t k = 0; k < d; k++) {
        s[k] += x[k] * w;
        x[k] = xn[k];
        z[k] = zn[k];
    }
}

/* the same with x_new = map(z_new) computed here (combine() did not store it), all in one pass;
 * compiled for AVX2 and the baseline (the operations of the coordinate-wise map, same bits) */
DDA_INLINE static inline double pmap_scale(double v, double c)
{
    return v * c; /* DPDO__PMAP_SCALE */
}
#define INSTALL_LOOP(MAPPED)                                                                       \
    for (size_t k = 0; k < d; k++) {                                                               \
        double v = zn[k];                                                                          \
        s[k] += x[k] * w;                                                                          \
        x[k] = MAPPED;                                                                             \
        z[k] = v;                                                                                  \
    }
#define INSTALL_MAP(NAME, ATTR)                                                                    \
    ATTR static void NAME(double *restrict s, double *restrict x, double *restrict z,              \
                          const dpdo__reg_pmap *pm, const double *restrict zn, double w, size_t d) \
    {                                                                                              \
        const double c = pm->c, tau = pm->tau;                                                     \
        switch (pm->kind) {                                                                        \
        case DPDO__PMAP_SCALE:                                                                     \
            INSTALL_LOOP(pmap_scale(v, c))                                                         \
            break;                                                                                 \
        case DPDO__PMAP_SOFT:                                                                      \
            INSTALL_LOOP(dpdo__soft(v, tau) * c)                                                   \
            break;                                                                                 \
        case DPDO__PMAP_DIV:                                                                       \
            INSTALL_LOOP(-v / c)                                                                   \
            break;                                                                                 \
        default:                                                                                   \
            break;                                                                                 \
        }                                                                                          \
    }
INSTALL_MAP(install_map_avx2, DDA_AVX2)
INSTALL_MAP(install_map_base, )

static void commit_node(void *arg, int64_t c)
{
    const per_node *a = arg;
    dpdo__eng *e = a->e;
    dda *P = a->P;
    size_t d = (size_t)e->d;
    uint64_t *last = e->scr[P->slast];
    int64_t i = node_of(a, c);
    double *s = S(e, P, i), *x = X(e, P, i), w = a->At - A_of(P, last[i]);
    const double *zn = SCR(e, P->sznew) + (size_t)i * d;
    if (a->pm.kind == DPDO__PMAP_NONE) /* combine() stored x_new (a map not coordinate-wise) */
        install(s, x, Z(e, P, i), SCR(e, P->sxnew) + (size_t)i * d, zn, w, d);
    else
        (cpu_avx2() ? install_map_avx2 : install_map_base)(s, x, Z(e, P, i), &a->pm, zn, w, d);
    last[i] = a->p->t;
}

static void commit(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    dda *P = priv;
    per_node a = {e, P, p, A_of(P, p->t), {0}};
    round_map(e, P, p, &a.pm);
    dpdo__par_for(e, P->all_transmit ? e->n : p->ncomp, commit_node, &a);
}

static void output(const dpdo__eng *e, const void *priv, int64_t i, double *out)
{
    const dda *P = priv;
    size_t d = (size_t)e->d;
    const double *x = X(e, P, i), *s = S(e, P, i);
    if (e->round == 0) {
        memcpy(out, x, d * sizeof(double));
        return;
    }
    const uint64_t *last = e->scr[P->slast];
    double AT = A_of(P, e->round), w = AT - A_of(P, last[i]);
    for (size_t k = 0; k < d; k++)
        out[k] = (s[k] + x[k] * w) / AT;
}

/* DP-DDA's parameters (dpdo_param_*); defaults() sets those that depend on n */
static const dpdo__pdef PARAMS[] = {
    {DPDO_PARAM_DDA_ACTIVE, "dda-active", 0, 1, 2147483647.0, 0,
     "nodes active per round b, <= n; default 2 (1 if n = 1; the baseline: n)", .def = 2,
     .flags = DPDO__PF_NODES},
    {DPDO_PARAM_DDA_SCHEME, "dda-scheme", 0, DPDO_ROUND_ALL, DPDO_ROUND_BERNOULLI, 0,
     "round scheme DPDO_ROUND_*; default MATCHING (AVERAGE if n = 1)", .def = DPDO_ROUND_MATCHING},
    {DPDO_PARAM_DDA_GOSSIP_COUNT, "dda-gossip-count", 0, 0, 2147483647.0, 0,
     "count for the round scheme; 0 (default) = b (the baseline: 2)", .def = 0},
    {DPDO_PARAM_DDA_BERNOULLI_P, "dda-bernoulli-p", 1, 0x1p-1000, 1, 0,
     "activation probability for DPDO_ROUND_BERNOULLI; default 0.1", .def = 0.1},
    {DPDO_PARAM_DDA_SCHEDULE, "dda-schedule", 0, DPDO_DDA_SCHEDULE_AUTO, DPDO_DDA_SCHEDULE_PAPER_L1,
     0, "schedule preset DPDO_DDA_SCHEDULE_*; default AUTO", .def = DPDO_DDA_SCHEDULE_AUTO},
    {DPDO_PARAM_DDA_PAPER_C, "dda-paper-c", 1, 0x1p-1000, 1e300, 0,
     "Theorem 1's constant: 32 (the paper, default) or 160 (consistent with its proof)",
     .def = 32.0},
    {DPDO_PARAM_DDA_ALL_COMPUTE, "dda-all-compute", 0, 0, 1, 0,
     "0/1: every node computes every round; default 0 (the baseline: 1)", .def = 0},
    {DPDO_PARAM_DDA_ALL_TRANSMIT, "dda-all-transmit", 0, 0, 1, 0,
     "0/1: DO-ADP's comparison variant (every node transmits every round); default 0", .def = 0},
    {.name = NULL}};

/* the baseline accepts DP-DDA's keys; every node computes */
static const dpdo__pdef PARAMS_BASE[] = {{.same_as = &PARAMS[0], .def = 2},
                                         {.same_as = &PARAMS[1], .def = DPDO_ROUND_MATCHING},
                                         {.same_as = &PARAMS[2], .def = 0},
                                         {.same_as = &PARAMS[3], .def = 0.1},
                                         {.same_as = &PARAMS[4], .def = DPDO_DDA_SCHEDULE_AUTO},
                                         {.same_as = &PARAMS[5], .def = 32.0},
                                         {.same_as = &PARAMS[6], .def = 1},
                                         {.same_as = &PARAMS[7], .def = 0},
                                         {.name = NULL}};

#define DDA_VT(NAME, TITLE, DEFAULTS, TABLE)                                                       \
    {                                                                                              \
        .name = NAME, .title = TITLE, .priv_size = sizeof(dda), .params = TABLE,                   \
        .paper = "dp-dda-thm1", .paper_eps = "eps_remark31", .paper_delta = "delta_tilde",         \
        .paper_round = "t", .needs_net = 1, .uses_solver = 0, .accepts_mask = 1,                   \
        .distributable = 1, .parallel = 1, .defaults = DEFAULTS, .configure = configure,           \
        .prepare = prepare, .init = init, .plan = plan, .local = local, .combine = combine,        \
        .check = check, .commit = commit, .output = output, .release = release                     \
    }

const dpdo__alg_vt dpdo__vt_dp_dda = DDA_VT("dp-dda",
                                            "DP-DDA (Liu, Johansson, Shi): private distributed "
                                            "dual averaging with node subsampling, Algorithm 1",
                                            defaults_alg, PARAMS);
const dpdo__alg_vt dpdo__vt_dp_dda_baseline =
    DDA_VT("dp-dda-baseline",
           "DP-DDA baseline [19]: Algorithm 1 with every node computing each round "
           "(docs/design/notes/dp-dda.md §6.6)",
           defaults_base, PARAMS_BASE);
