/* SPDX-License-Identifier: BSD-3-Clause */
/* The public algorithm type (dpdo/algorithm_type.h) and Muffliato written on it
 * (examples/muffliato.h, docs/muffliato.md):
 *   - the local-DP epsilon the engine certifies equals an independent recomputation from the
 *     declared releases (T Gaussian releases of sensitivity Delta, noise sigma: mu-GDP with
 *     mu = sqrt(T) Delta / sigma, the closed form of Dong, Roth, Su 2019, Corollary 2.13)
 *   - the pairwise network-DP figures equal hand-computed values on a ring and a complete graph
 *     (derivations in docs/muffliato.md)
 *   - checkpoint/resume is bit-identical
 *   - the default audit finds no violation, and flags a declared sensitivity of half the true one
 *   - bad vtables and misuse get error codes */
#include "harness.h"
#include "dpdo/dpdo.h"
#include "../examples/muffliato.h"

#define N 6
#define D 5
#define Q 40

typedef struct prob {
    dpdo_dataset *ds;
    dpdo_shard *sh[N];
    dpdo_node *nd[N];
    dpdo_loss *loss;
    dpdo_network *net;
    dpdo_ledger *led;
    dpdo_accountant *acc;
} prob;

static int prob_make(prob *p, int complete, const char *acc)
{
    memset(p, 0, sizeof *p);
    dpdo_generate_options g;
    dpdo_generate_options_init(&g, sizeof g);
    g.n = N * Q;
    g.d = D;
    g.seed = 11;
    int rc = dpdo_dataset_create(&p->ds);
    if (!rc) rc = dpdo_dataset_generate(p->ds, "epsilon-like", &g);
    if (!rc) rc = dpdo_dataset_partition(p->ds, N, NULL, 1, p->sh);
    if (!rc) rc = dpdo_loss_create(&p->loss, dpdo_loss_type_find("logistic"), NULL, D);
    for (int i = 0; i < N && !rc; i++)
        rc = dpdo_node_create(&p->nd[i], p->sh[i], p->loss, 1.0);
    if (!rc) rc = dpdo_network_create(&p->net);
    if (!rc) rc = complete ? dpdo_network_set_complete(p->net, N) : dpdo_network_set_ring(p->net, N);
    if (!rc) rc = dpdo_ledger_create(&p->led, N);
    if (!rc) rc = dpdo_accountant_create(&p->acc, dpdo_accountant_type_find(acc), NULL, p->led, NULL);
    return rc;
}

static void prob_free(prob *p)
{
    dpdo_accountant_destroy(p->acc);
    dpdo_ledger_destroy(p->led);
    dpdo_network_destroy(p->net);
    for (int i = 0; i < N; i++) dpdo_node_destroy(p->nd[i]);
    dpdo_loss_destroy(p->loss);
    for (int i = 0; i < N; i++) dpdo_shard_destroy(p->sh[i]);
    dpdo_dataset_destroy(p->ds);
}

static muff_config CFG = {MUFF_GD, 2, 1.0, 0};

/* the tests' options: `rounds` rounds, C = lipschitz = 1, reproducible noise or the default */
static dpdo_algorithm_options opts(int64_t rounds, int reproducible)
{
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.max_rounds = rounds;
    o.lipschitz = 1.0;
    if (reproducible) o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    return o;
}

static int run_muff(prob *p, dpdo_algorithm_type *t, const dpdo_algorithm_options *o,
                    dpdo_algorithm **out)
{
    int rc = dpdo_algorithm_create(out, t);
    if (!rc) rc = dpdo_algorithm_setup(*out, p->nd, N, p->net, NULL, p->acc, o);
    if (!rc) rc = dpdo_algorithm_run(*out, 0, NULL);
    if (rc != DPDO_DONE) printf("# run: %s: %s\n", dpdo_strerror(rc), dpdo_algorithm_errmsg(*out));
    return rc == DPDO_DONE ? DPDO_OK : rc;
}

/* ---- the independent figure: mu-GDP of T Gaussian releases ------------------------------- */
static double Phi(double x)
{
    return 0.5 * erfc(-x / sqrt(2.0));
}
/* delta(eps) of mu-GDP (Dong, Roth, Su, Corollary 2.13) */
static double gdp_delta(double mu, double eps)
{
    return Phi(-eps / mu + mu / 2) - exp(eps) * Phi(-eps / mu - mu / 2);
}
static double gdp_eps(double mu, double delta)
{
    double lo = 0, hi = 1;
    while (gdp_delta(mu, hi) > delta) hi *= 2;
    for (int k = 0; k < 200; k++) {
        double m = 0.5 * (lo + hi);
        if (gdp_delta(mu, m) > delta) lo = m;
        else hi = m;
    }
    return hi;
}

static void test_local_dp_matches_declaration(void)
{
    prob p;
    CHECK_EQ(prob_make(&p, 0, "exact"), DPDO_OK);
    dpdo_algorithm_type *t = NULL;
    CHECK_EQ(dpdo_algorithm_type_define(&MUFF_VTABLE, &CFG, &t), DPDO_OK);
    CHECK(dpdo_algorithm_type_is_user(t));
    CHECK_EQ(strcmp(dpdo_algorithm_type_name(t), "muffliato"), 0);
    dpdo_algorithm_options o = opts(7, 1);
    o.noise_mode = DPDO_NOISE_FIXED;
    const double sigma = 0.2;
    o.sigma = sigma;
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, t), DPDO_OK);
    int rc = dpdo_algorithm_setup(a, p.nd, N, p.net, NULL, p.acc, &o);
    if (rc) printf("# setup: %s\n", dpdo_algorithm_errmsg(a));
    CHECK_EQ(rc, DPDO_OK);
    CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
    double eps = 0, delta = 0;
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eps, &delta, NULL), DPDO_OK);
    /* declared: one release per node and round of sensitivity 2 C / q (C = lipschitz = 1,
     * q = 40 rows per shard), FULL sampling, T = 7 rounds */
    double Delta = 2.0 * 1.0 / Q, mu = sqrt(7.0) * Delta / sigma;
    double ref = gdp_eps(mu, o.delta);
    printf("# engine eps %.12g, closed form %.12g (mu %.6g, delta %g)\n", eps, ref, mu, o.delta);
    CHECK_REL(eps, ref, 1e-6);
    dpdo_algorithm_destroy(a);
    /* RIGOROUS at epsilon 1: the calibrated sigma spends at most the target, and the closed
     * form at the engine's sigma agrees with the engine's figure */
    o.noise_mode = DPDO_NOISE_RIGOROUS;
    o.epsilon = 1.0;
    dpdo_ledger_reset(p.led);
    CHECK_EQ(run_muff(&p, t, &o, &a), DPDO_OK);
    double s2 = 0;
    CHECK_EQ(dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &s2), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eps, &delta, NULL), DPDO_OK);
    double ref2 = gdp_eps(sqrt(7.0) * Delta / s2, o.delta);
    printf("# rigorous: sigma %.6g, engine eps %.9g, closed form %.9g\n", s2, eps, ref2);
    CHECK(eps <= 1.0 + 1e-9);
    CHECK_REL(eps, ref2, 1e-6);
    dpdo_algorithm_destroy(a);
    dpdo_algorithm_type_destroy(t);
    prob_free(&p);
}

/* ---- network DP: hand-computed values (docs/muffliato.md, "Network DP: worked values") ---- */
static void test_network_dp_hand_values(void)
{
    const int64_t n = 7;
    dpdo_network *net = NULL;
    double W[49];
    unsigned char *adj;
    CHECK_EQ(dpdo_network_create(&net), DPDO_OK);
    /* complete graph, Metropolis W = J/n: neighbour u of v, K steps:
     *   k = 0: 1; k >= 1: (n - 1) neighbours w, (1/n)^2 / (1/n) = 1/n each -> (n-1)/n
     *   eps = alpha Delta^2 / (2 sigma^2) (1 + (K - 1)(n - 1)/n) */
    CHECK_EQ(dpdo_network_set_complete(net, n), DPDO_OK);
    CHECK_EQ(dpdo_network_get_weights(net, W, 49), DPDO_OK);
    CHECK_NEAR(W[0], 1.0 / 7, 1e-15);
    adj = muff_adjacency(net);
    CHECK(adj != NULL);
    CHECK_REL(muff_pndp_avg(W, adj, n, 1, 3, 0, 2, 1, 1, 0), 1.0, 1e-12);
    CHECK_REL(muff_pndp_avg(W, adj, n, 4, 3, 0, 2, 1, 1, 0), 1.0 + 3.0 * 6.0 / 7.0, 1e-12);
    /* alpha = 3, Delta = 0.5, sigma = 2: factor 3 * 0.25 / 8 */
    CHECK_REL(muff_pndp_avg(W, adj, n, 2, 5, 1, 3, 0.5, 2, 0), 3 * 0.25 / 8 * (1 + 6.0 / 7.0), 1e-12);
    /* capped at the one release's local figure (post-processing) */
    CHECK_REL(muff_pndp_avg(W, adj, n, 2, 5, 1, 3, 0.5, 2, 1), 3 * 0.25 / 8, 1e-12);
    /* GD, T rounds: every u is a neighbour of v, s = 0 gives T: capped at T (local DP) */
    CHECK_REL(muff_pndp_gd(W, adj, n, 5, 3, 0, 2, 1, 1), 5.0, 1e-12);
    free(adj);
    /* ring of 7, Metropolis W: 1/3 on the diagonal and the two neighbours; W^2: 1/3 (i = j),
     * 2/9 (distance 1), 1/9 (distance 2); column norms^2: ||W_w||^2 = 1/3, ||W^2_w||^2 = 19/81.
     * Averaging, alpha = 2, Delta = sigma = 1 (factor 1):
     *   u = v+1, K = 3: k=0: 1; k=1: w=v+1: (1/3)^2/(1/3) = 1/3, w=v-1: 0;
     *                   k=2: w=v+1: (1/3)^2/(19/81) = 9/19, w=v-1: (1/9)^2/(19/81) = 1/19
     *                   -> 1 + 1/3 + 10/19
     *   u = v+2, K = 2: k=1: w=v+1: 1/3 -> 1/3
     *   u = v+3, K = 3: k=2: w=v+1 (distance 2): 1/19, w=v-1 (distance 3 the other way): 0
     *                   -> 1/19 */
    CHECK_EQ(dpdo_network_set_ring(net, n), DPDO_OK);
    CHECK_EQ(dpdo_network_get_weights(net, W, 49), DPDO_OK);
    CHECK_NEAR(W[0], 1.0 / 3, 1e-15);
    adj = muff_adjacency(net);
    CHECK(adj != NULL);
    CHECK_REL(muff_pndp_avg(W, adj, n, 3, 1, 0, 2, 1, 1, 0), 1.0 + 1.0 / 3 + 10.0 / 19, 1e-12);
    CHECK_REL(muff_pndp_avg(W, adj, n, 2, 2, 0, 2, 1, 1, 0), 1.0 / 3, 1e-12);
    CHECK_REL(muff_pndp_avg(W, adj, n, 3, 3, 0, 2, 1, 1, 0), 1.0 / 19, 1e-12);
    CHECK_REL(muff_pndp_avg(W, adj, n, 3, 3, 0, 2, 1, 1, 1), 1.0 / 19, 1e-12); /* below the cap */
    CHECK_REL(muff_pndp_avg(W, adj, n, 3, 1, 0, 2, 1, 1, 1), 1.0, 1e-12);
    /* GD (Theorem 11, corrected), u = v+2, alpha = 2, Delta = sigma = 1:
     *   T = 2: s=1: (T-1) (W_{u,v+1} / ||W_{v+1}||^2) = 1 * (1/3)/(1/3) = 1 -> 1
     *   T = 3: s=1: 2 * 1; s=2: 1 * (W^2)_{u,v+1}/||W^2_{v+1}||^2 = (2/9)/(19/81) = 18/19
     *          (w=v-1 is at distance 3: 0) -> 2 + 18/19
     *   a neighbour u = v+1: s = 0 alone gives T: capped at T */
    CHECK_REL(muff_pndp_gd(W, adj, n, 2, 2, 0, 2, 1, 1), 1.0, 1e-12);
    CHECK_REL(muff_pndp_gd(W, adj, n, 3, 2, 0, 2, 1, 1), 2.0 + 18.0 / 19, 1e-12);
    CHECK_REL(muff_pndp_gd(W, adj, n, 3, 1, 0, 2, 1, 1), 3.0, 1e-12);
    free(adj);
    dpdo_network_destroy(net);
}

static int get_x(const dpdo_algorithm *a, double *x)
{
    int rc = DPDO_OK;
    for (int i = 0; i < N && !rc; i++) rc = dpdo_algorithm_get_state(a, "x", i, x + i * D, D);
    return rc;
}

/* ---- checkpoint/resume bit-identical ------------------------------------------------------ */
static void test_checkpoint_resume(void)
{
    prob p;
    CHECK_EQ(prob_make(&p, 0, "auto"), DPDO_OK);
    dpdo_algorithm_type *t = NULL;
    CHECK_EQ(dpdo_algorithm_type_define(&MUFF_VTABLE, &CFG, &t), DPDO_OK);
    dpdo_algorithm_options o = opts(8, 1);
    dpdo_algorithm *a = NULL, *b = NULL;
    CHECK_EQ(run_muff(&p, t, &o, &a), DPDO_OK);
    double xa[N * D], xb[N * D];
    CHECK_EQ(get_x(a, xa), DPDO_OK);
    /* the same run in two halves through a checkpoint file, into a fresh handle */
    char path[] = "/tmp/dpdo-muff-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    dpdo_ledger_reset(p.led);
    CHECK_EQ(dpdo_algorithm_create(&b, t), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(b, p.nd, N, p.net, NULL, p.acc, &o), DPDO_OK);
    for (int r = 0; r < 3; r++) CHECK_EQ(dpdo_algorithm_step(b), DPDO_ROUND);
    CHECK_EQ(dpdo_algorithm_save(b, path, NULL), DPDO_OK);
    dpdo_algorithm_destroy(b);
    dpdo_ledger_reset(p.led);
    CHECK_EQ(dpdo_algorithm_create(&b, t), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(b, p.nd, N, p.net, NULL, p.acc, &o), DPDO_OK);
    int rc = dpdo_algorithm_load(b, path, NULL);
    if (rc) printf("# load: %s\n", dpdo_algorithm_errmsg(b));
    CHECK_EQ(rc, DPDO_OK);
    CHECK_EQ(dpdo_algorithm_round(b), 3);
    CHECK_EQ(dpdo_algorithm_run(b, 0, NULL), DPDO_DONE);
    CHECK_EQ(get_x(b, xb), DPDO_OK);
    CHECK_EQ(memcmp(xa, xb, sizeof xa), 0);
    double ea = 0, eb = 0;
    dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &ea, NULL, NULL);
    dpdo_algorithm_privacy(b, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eb, NULL, NULL);
    CHECK_EQ(memcmp(&ea, &eb, sizeof ea), 0);
    /* on 3 threads: the same bits (local and combine run per node on the pool) */
    dpdo_algorithm *c3 = NULL;
    double xc[N * D];
    dpdo_ledger_reset(p.led);
    o.num_threads = 3;
    CHECK_EQ(run_muff(&p, t, &o, &c3), DPDO_OK);
    CHECK_EQ(get_x(c3, xc), DPDO_OK);
    CHECK_EQ(memcmp(xa, xc, sizeof xa), 0);
    dpdo_algorithm_destroy(c3);
    /* the models moved */
    double nrm = 0;
    for (int k = 0; k < N * D; k++) nrm += xa[k] * xa[k];
    CHECK(nrm > 0);
    remove(path);
    dpdo_algorithm_destroy(a);
    dpdo_algorithm_destroy(b);
    dpdo_algorithm_type_destroy(t);
    prob_free(&p);
}

/* ---- the default audit ------------------------------------------------------------------- */
static int audit(dpdo_algorithm_type *t, dpdo_audit_result *r)
{
    dpdo_algorithm_options ao;
    dpdo_algorithm_options_init(&ao, sizeof ao);
    ao.epsilon = 2; /* dpdo-audit's defaults */
    ao.max_rounds = 3;
    dpdo_audit_options o;
    dpdo_audit_options_init(&o, sizeof o);
    dpdo_audit *a = NULL;
    int rc = dpdo_audit_create(&a);
    if (!rc) rc = dpdo_audit_setup(a, t, &ao, &o);
    r->struct_size = sizeof *r;
    if (!rc) rc = dpdo_audit_run(a, r);
    if (rc) printf("# audit: %s\n", dpdo_audit_errmsg(a));
    else
        printf("# audit: claimed %.3f, lower %.3f (white %.3f), verdict %s\n", r->eps_claimed,
               r->eps_lower, r->eps_lower_white, dpdo_audit_verdict_name(r->verdict));
    dpdo_audit_destroy(a);
    return rc;
}

static void test_audit(void)
{
    if (getenv("DPDO_TEST_QUICK")) return;
    muff_config good = {MUFF_GD, 2, 1.0, 0}, bad = {MUFF_GD, 2, 0.5, 0};
    dpdo_algorithm_type *t = NULL;
    dpdo_audit_result r;
    CHECK_EQ(dpdo_algorithm_type_define(&MUFF_VTABLE, &good, &t), DPDO_OK);
    CHECK_EQ(audit(t, &r), DPDO_OK);
    CHECK_EQ(r.verdict, DPDO_AUDIT_CONSISTENT);
    dpdo_algorithm_type_destroy(t);
    /* planted: the declaration states half the true sensitivity */
    CHECK_EQ(dpdo_algorithm_type_define(&MUFF_VTABLE, &bad, &t), DPDO_OK);
    CHECK_EQ(audit(t, &r), DPDO_OK);
    CHECK_MSG(r.verdict == DPDO_AUDIT_VIOLATION, "half sensitivity not flagged (%g <= %g)",
              r.eps_lower, r.eps_claimed);
    dpdo_algorithm_type_destroy(t);
}

/* ---- WOR batches: the user type's calibration is the built-in's for the same declaration ----
 * DO-ADP with activation 1 and l2 clipping declares B-of-q WOR Gaussian releases of sensitivity
 * 2 G / B, one per round; Muffliato with batch B the same: RIGOROUS must give the same sigma. */
static void test_wor_matches_builtin(void)
{
    prob p;
    CHECK_EQ(prob_make(&p, 0, "rdp"), DPDO_OK);
    muff_config wor = {MUFF_GD, 1, 1.0, 8};
    dpdo_algorithm_type *t = NULL;
    CHECK_EQ(dpdo_algorithm_type_define(&MUFF_VTABLE, &wor, &t), DPDO_OK);
    dpdo_algorithm_options o = opts(10, 1);
    o.batch = 8;
    dpdo_algorithm *a = NULL, *b = NULL;
    CHECK_EQ(run_muff(&p, t, &o, &a), DPDO_OK);
    double sa = 0, sb = 0, ea = 0, eb = 0;
    CHECK_EQ(dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &sa), DPDO_OK);
    dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &ea, NULL, NULL);
    dpdo_ledger_reset(p.led);
    CHECK_EQ(dpdo_algorithm_create(&b, dpdo_algorithm_type_find("do-adp")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(b, p.nd, N, p.net, NULL, p.acc, &o), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_double(b, DPDO_PARAM_CLIP, 1.0), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_run(b, 0, NULL), DPDO_DONE);
    CHECK_EQ(dpdo_algorithm_get_double(b, DPDO_PARAM_SIGMA, &sb), DPDO_OK);
    dpdo_algorithm_privacy(b, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eb, NULL, NULL);
    printf("# WOR batch 8 of 40: user type sigma %.9g eps %.6f, do-adp sigma %.9g eps %.6f\n", sa, ea, sb, eb);
    CHECK(sa > 0);
    CHECK_EQ(sa, sb);
    CHECK_EQ(ea, eb);
    dpdo_algorithm_destroy(a);
    dpdo_algorithm_destroy(b);
    dpdo_algorithm_type_destroy(t);
    prob_free(&p);
}

/* ---- the plan callback: nodes switched off are neither computed nor charged ---------------- */
static int plan_skip0(dpdo_alg_ctx *ctx, void *state, void *user, unsigned char *active)
{
    (void)ctx, (void)state, (void)user;
    active[0] = 0;
    return 0;
}
static void test_plan_callback(void)
{
    prob p;
    CHECK_EQ(prob_make(&p, 0, "auto"), DPDO_OK);
    dpdo_algorithm_vtable v = MUFF_VTABLE;
    v.name = "muffliato-skip0";
    v.plan = plan_skip0;
    dpdo_algorithm_type *t = NULL;
    CHECK_EQ(dpdo_algorithm_type_define(&v, &CFG, &t), DPDO_OK);
    dpdo_algorithm_options o = opts(4, 0);
    dpdo_algorithm *a = NULL;
    CHECK_EQ(run_muff(&p, t, &o, &a), DPDO_OK);
    double e0 = -1, e1 = -1;
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, 0, &e0, NULL, NULL), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, 1, &e1, NULL, NULL), DPDO_OK);
    CHECK_EQ(e0, 0.0);
    CHECK(e1 > 0.5 && e1 <= 1.0 + 1e-9);
    int32_t act[N];
    CHECK_EQ(dpdo_algorithm_get_active(a, act, N), DPDO_OK);
    CHECK_EQ(act[0], 0);
    CHECK_EQ(act[1], 1);
    dpdo_algorithm_destroy(a);
    dpdo_algorithm_type_destroy(t);
    prob_free(&p);
}

/* ---- misuse -------------------------------------------------------------------------------- */
static int bad_release_local(dpdo_alg_ctx *ctx, void *state, void *user, int64_t i)
{
    (void)state, (void)user;
    double v[D] = {0};
    int rc = dpdo_alg_release(ctx, i, v, D);
    if (rc) return rc;
    return dpdo_alg_release(ctx, i, v, D); /* one more than declared */
}

static void test_misuse(void)
{
    dpdo_algorithm_type *t = (dpdo_algorithm_type *)1;
    CHECK_EQ(dpdo_algorithm_type_define(NULL, NULL, &t), DPDO_E_INVAL);
    CHECK(t == NULL);
    dpdo_algorithm_vtable v = MUFF_VTABLE;
    v.name = "dp-dda"; /* a built-in's name */
    CHECK_EQ(dpdo_algorithm_type_define(&v, &CFG, &t), DPDO_E_INVAL);
    v.name = "Bad Name";
    CHECK_EQ(dpdo_algorithm_type_define(&v, &CFG, &t), DPDO_E_INVAL);
    v = MUFF_VTABLE;
    v.local = NULL;
    CHECK_EQ(dpdo_algorithm_type_define(&v, &CFG, &t), DPDO_E_INVAL);
    v = MUFF_VTABLE;
    v.struct_size = 8;
    CHECK_EQ(dpdo_algorithm_type_define(&v, &CFG, &t), DPDO_E_VERSION);
    CHECK_EQ(dpdo_algorithm_type_is_user(dpdo_algorithm_type_find("dp-dda")), 0);
    dpdo_algorithm_type_destroy((dpdo_algorithm_type *)dpdo_algorithm_type_find("dp-dda")); /* no-op */
    CHECK(dpdo_algorithm_type_find("dp-dda") != NULL);
    CHECK_EQ(dpdo_alg_nodes(NULL), 0);
    CHECK(dpdo_alg_state(NULL, 0, 0) == NULL);
    /* a second release in a round declared with one: the round fails, the ledger is unchanged */
    prob p;
    CHECK_EQ(prob_make(&p, 0, "auto"), DPDO_OK);
    v = MUFF_VTABLE;
    v.name = "two-releases";
    v.local = bad_release_local;
    CHECK_EQ(dpdo_algorithm_type_define(&v, &CFG, &t), DPDO_OK);
    dpdo_algorithm_options o = opts(3, 0);
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, t), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(a, p.nd, N, p.net, NULL, p.acc, &o), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_E_STATE);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "more than the declared 1 releases");
    double eps = -1;
    dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eps, NULL, NULL);
    CHECK_EQ(eps, 0.0);
    /* PAPER noise: refused with a message */
    dpdo_algorithm_destroy(a);
    o.noise_mode = DPDO_NOISE_PAPER;
    CHECK_EQ(dpdo_algorithm_create(&a, t), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(a, p.nd, N, p.net, NULL, p.acc, &o), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_E_UNSUPPORTED);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "no paper calibration");
    dpdo_algorithm_destroy(a);
    dpdo_algorithm_type_destroy(t);
    prob_free(&p);
}

int main(void)
{
    RUN(test_local_dp_matches_declaration);
    RUN(test_network_dp_hand_values);
    RUN(test_checkpoint_resume);
    RUN(test_wor_matches_builtin);
    RUN(test_plan_callback);
    RUN(test_misuse);
    RUN(test_audit);
    return h_finish();
}
