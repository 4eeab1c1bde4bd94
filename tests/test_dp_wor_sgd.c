/* SPDX-License-Identifier: BSD-3-Clause */
/* DP-WOR-SGD on the engine: spec dp-wor-sgd.md §8 items 5 (Examples A and B
 * of §2.6 through the engine), 6 (a pass partitions the rows), 8 (after a
 * Global step wL = wG, holder, fetch counting), 9 (always-local is plain SGD
 * with step 2 eta, no release), 10 (M = 1, always-global, no noise is plain
 * SGD; with noise the iterate moves by exactly -sigma_model z), 11 (the
 * Global gradient is taken at the fetched wG), 12 (S2: a later node sees wG
 * updated earlier in the round), 13 (Theorem 2's constant c and sigma), 17
 * (validation), the ledger (one charge per node per pass), determinism with
 * the DQN policy, and bad input. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "dpdo/dpdo.h"
#include "engine/engine_impl.h"
#include "rng/rng_impl.h"
#include "core/core_impl.h"
#include "harness.h"

static uint64_t tstate = 0x1f83d9abfb41bd6bull;
static double urand(void) { return h_urand(&tstate); }
static double nrand(void) { return sqrt(-2.0 * log(urand() + 1e-300)) * cos(6.283185307179586 * urand()); }

/* a scripted policy: actions[k] for every decision, in order */
typedef struct script { const int32_t *a; int n, next; } script;
static int scripted(void *user, int64_t node, int64_t k, const double *s, int64_t len, double r, const dpdo_rng *rng,
                    uint64_t round, int32_t *action)
{
    (void)node, (void)k, (void)s, (void)len, (void)r, (void)rng, (void)round;
    script *S = user;
    *action = S->a[S->next % S->n];
    S->next++;
    return 0;
}
static const dpdo_policy_type SCRIPT = {sizeof(dpdo_policy_type), "script", scripted, NULL, NULL, NULL, NULL};

enum { NMAX = 8, DMAX = 6, QMAX = 200 };
typedef struct fx {
    int n, q, d;
    double X[NMAX * QMAX * DMAX], Y[NMAX * QMAX];
    dpdo_dataset *ds;
    dpdo_shard *sh[NMAX];
    dpdo_loss *loss;
    dpdo_node *nodes[NMAX];
    dpdo_regularizer *reg;
    dpdo_ledger *led;
    dpdo_accountant *acc;
} fx;

static void fx_data(fx *f, int n, int q, int d, const double *X, const double *Y, double lam)
{
    memset(f, 0, sizeof *f);
    f->n = n, f->q = q, f->d = d;
    if (X) {
        memcpy(f->X, X, sizeof(double) * (size_t)(n * q * d));
        memcpy(f->Y, Y, sizeof(double) * (size_t)(n * q));
    } else {
        for (int i = 0; i < n * q; i++) {
            double nn = 0;
            for (int k = 0; k < d; k++) {
                double v = nrand();
                f->X[i * d + k] = v;
                nn += v * v;
            }
            for (int k = 0; k < d; k++) f->X[i * d + k] /= sqrt(nn);
            f->Y[i] = f->X[i * d] + 0.3 * nrand() > 0 ? 1 : -1;
        }
    }
    CHECK_EQ(dpdo_dataset_create(&f->ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_dense(f->ds, n * q, d, f->X, f->Y, DPDO_COPY), DPDO_OK);
    CHECK_EQ(dpdo_loss_create(&f->loss, dpdo_loss_type_find("logistic"), NULL, d), DPDO_OK);
    for (int i = 0; i < n; i++) {
        CHECK_EQ(dpdo_shard_create_range(&f->sh[i], f->ds, (int64_t)i * q, q), DPDO_OK);
        CHECK_EQ(dpdo_node_create(&f->nodes[i], f->sh[i], f->loss, 1.0), DPDO_OK);
    }
    if (lam > 0) CHECK_EQ(dpdo_regularizer_create(&f->reg, dpdo_regularizer_type_find("l2"), NULL, d, &lam, 1), DPDO_OK);
    CHECK_EQ(dpdo_ledger_create(&f->led, n), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&f->acc, dpdo_accountant_type_find("rdp"), NULL, f->led, NULL), DPDO_OK);
}

static void fx_free(fx *f)
{
    dpdo_accountant_destroy(f->acc);
    dpdo_ledger_destroy(f->led);
    dpdo_regularizer_destroy(f->reg);
    for (int i = 0; i < f->n; i++) {
        dpdo_node_destroy(f->nodes[i]);
        dpdo_shard_destroy(f->sh[i]);
    }
    dpdo_loss_destroy(f->loss);
    dpdo_dataset_destroy(f->ds);
}

static dpdo_algorithm *mk(fx *f, int mode, int64_t b, double eta, dpdo_policy *pol)
{
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = mode;
    o.max_rounds = 1000000;
    o.batch = b;
    o.step_size = eta;
    o.epsilon = 0.5;
    o.delta = 1e-5;
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-wor-sgd")), DPDO_OK);
    int rc = dpdo_algorithm_setup(a, f->nodes, f->n, NULL, f->reg, f->acc, &o);
    CHECK_MSG(rc == DPDO_OK, "setup: %s", dpdo_algorithm_errmsg(a));
    if (pol) CHECK_EQ(dpdo_algorithm_set_policy(a, pol), DPDO_OK);
    rc = dpdo_algorithm_prepare(a);
    CHECK_MSG(rc == DPDO_OK, "prepare: %s", dpdo_algorithm_errmsg(a));
    return a;
}

static double *blockp(dpdo_algorithm *a, const char *name)
{
    dpdo__eng *e = dpdo__algorithm_eng(a);
    for (int b = 0; b < e->nblk; b++)
        if (strcmp(e->blk[b].name, name) == 0) return e->blk[b].cur;
    return NULL;
}

static dpdo_policy *mkscript(script *S, int n, int d)
{
    dpdo_policy *p = NULL;
    CHECK_EQ(dpdo_policy_create(&p, &SCRIPT, S, n, d + 2), DPDO_OK);
    return p;
}

/* ---- item 5: Examples A and B ------------------------------------------------------ */

static void test_examples(void)
{
    const int32_t LOC[] = {DPDO_ACTION_LOCAL}, GLO[] = {DPDO_ACTION_GLOBAL};
    /* Example A: d = 2, b = 1, lambda = 0, eta = 0.1 */
    {
        double X[] = {0.6, 0.8}, Y[] = {1};
        for (int g = 0; g < 2; g++) {
            fx f;
            fx_data(&f, 1, 1, 2, X, Y, 0);
            script S = {g ? GLO : LOC, 1, 0};
            dpdo_policy *pol = mkscript(&S, 1, 2);
            dpdo_algorithm *a = mk(&f, DPDO_NOISE_NONE, 1, 0.1, pol);
            double *wl = blockp(a, "x"), *wg = blockp(a, "wG");
            wl[0] = 0.2, wl[1] = -0.4, wg[0] = 0, wg[1] = 0;
            CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
            if (!g) {
                CHECK_NEAR(wl[0], 0.265980080, 1e-9);
                CHECK_NEAR(wl[1], -0.312026560, 1e-9);
                CHECK(wg[0] == 0 && wg[1] == 0);
            } else {
                CHECK_NEAR(wg[0], 0.13, 1e-12);
                CHECK_NEAR(wg[1], -0.16, 1e-12);
                CHECK(memcmp(wl, wg, 2 * sizeof(double)) == 0); /* item 8 */
            }
            CHECK_EQ(dpdo_algorithm_step(a), DPDO_DONE); /* one row, one pass */
            CHECK_EQ(dpdo_algorithm_stop_reason(a), DPDO_STOP_PASSES);
            dpdo_algorithm_destroy(a);
            dpdo_policy_destroy(pol);
            fx_free(&f);
        }
    }
    /* Example B: b = 2, lambda = 0.01 */
    {
        double X[] = {0.6, 0.8, 1, 0}, Y[] = {1, -1};
        for (int g = 0; g < 2; g++) {
            fx f;
            fx_data(&f, 1, 2, 2, X, Y, 0.01);
            script S = {g ? GLO : LOC, 1, 0};
            dpdo_policy *pol = mkscript(&S, 1, 2);
            dpdo_algorithm *a = mk(&f, DPDO_NOISE_NONE, 2, 0.1, pol);
            double *wl = blockp(a, "x"), *wg = blockp(a, "wG");
            wl[0] = 0.2, wl[1] = -0.4, wg[0] = 0.05, wg[1] = 0.1;
            CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
            if (!g) {
                CHECK_NEAR(wl[0], 0.177606640, 1e-9);
                CHECK_NEAR(wl[1], -0.355213280, 1e-9);
            } else { /* item 11: the gradient is at the fetched wG, not at the average */
                CHECK_NEAR(wg[0], 0.113500961, 1e-9);
                CHECK_NEAR(wg[1], -0.131198892, 1e-9);
            }
            dpdo_algorithm_destroy(a);
            dpdo_policy_destroy(pol);
            fx_free(&f);
        }
    }
}

/* ---- items 6, 9: always-local is plain SGD with step 2 eta over a partition --------- */

static void test_always_local(void)
{
    enum { N = 3, Q = 40, D = 4, B = 5 };
    static fx f;
    fx_data(&f, N, Q, D, NULL, NULL, 0.02);
    dpdo_policy *pol = NULL;
    CHECK_EQ(dpdo_policy_create(&pol, dpdo_policy_type_find("always-local"), NULL, N, D + 2), DPDO_OK);
    dpdo_algorithm *a = mk(&f, DPDO_NOISE_PAPER, B, 0.1, pol);
    dpdo__eng *e = dpdo__algorithm_eng(a);
    /* reference: the same permutation, plain SGD with step 2 eta */
    double w[N][D] = {{0}};
    int seen[N][Q] = {{0}};
    for (int i = 0; i < N; i++) {
        int64_t perm[Q];
        dpdo__stream st;
        dpdo__stream_open(&st, e->rng, (uint64_t)i, 0, DPDO_PURPOSE_SAMPLE);
        dpdo__stream_permutation(&st, Q, perm);
        for (int k = 0; k < Q / B; k++) {
            double g[D];
            for (int c = 0; c < D; c++) g[c] = 0.02 * w[i][c];
            for (int r = 0; r < B; r++) {
                int64_t row = perm[k * B + r];
                seen[i][row]++;
                const double *x = f.X + (i * Q + row) * D;
                double y = f.Y[i * Q + row], m = 0;
                for (int c = 0; c < D; c++) m += x[c] * w[i][c];
                double s = -y / (1 + exp(y * m));
                for (int c = 0; c < D; c++) g[c] += s * x[c] / B;
            }
            for (int c = 0; c < D; c++) w[i][c] -= 2 * 0.1 * g[c];
        }
    }
    int64_t rounds = 0;
    CHECK_EQ(dpdo_algorithm_run(a, 0, &rounds), DPDO_DONE);
    CHECK_EQ(rounds, Q / B); /* S2: every node steps once per round */
    double worst = 0, wi[D];
    for (int i = 0; i < N; i++) {
        dpdo_algorithm_get_iterate(a, i, wi, D);
        for (int c = 0; c < D; c++) worst = fmax(worst, fabs(wi[c] - w[i][c]));
        for (int r = 0; r < Q; r++) CHECK_EQ(seen[i][r], 1); /* item 6: a partition */
    }
    CHECK(worst < 1e-14);
    double wg[D];
    dpdo_algorithm_get_output(a, DPDO_NODE_ALL, wg, D);
    for (int c = 0; c < D; c++) CHECK(wg[c] == 0);
    for (int i = 0; i < N; i++) CHECK_EQ(dpdo_ledger_charges(f.led, i), 0);
    int64_t m;
    dpdo_algorithm_comm(a, DPDO_NODE_ALL, &m, NULL, NULL);
    CHECK_EQ(m, 0);
    dpdo_algorithm_destroy(a);
    dpdo_policy_destroy(pol);
    fx_free(&f);
}

/* ---- items 10, 13: M = 1 always-global is (noisy) mini-batch SGD --------------------- */

static void test_single_node_sgd(void)
{
    enum { Q = 30, D = 3, B = 3 };
    static fx f;
    fx_data(&f, 1, Q, D, NULL, NULL, 0);
    dpdo_algorithm *clean = mk(&f, DPDO_NOISE_NONE, B, 0.1, NULL);
    dpdo_algorithm *noisy = mk(&f, DPDO_NOISE_PAPER, B, 0.1, NULL);
    double z;
    CHECK_EQ(dpdo_algorithm_get_double(noisy, DPDO_PARAM_SIGMA, &z), DPDO_OK);
    double c = sqrt(2 * log(1.25 / 1e-5));
    CHECK_REL(z, c / 0.5, 1e-14);
    /* one step each: the difference is exactly -sigma_model * normals(node 0, round 1, NOISE) */
    CHECK_EQ(dpdo_algorithm_step(clean), DPDO_ROUND);
    CHECK_EQ(dpdo_algorithm_step(noisy), DPDO_ROUND);
    double w1[D], w2[D], nz[D];
    dpdo_algorithm_get_output(clean, 0, w1, D);
    dpdo_algorithm_get_output(noisy, 0, w2, D);
    dpdo__stream st;
    dpdo__stream_open(&st, dpdo__algorithm_eng(noisy)->rng, 0, 1, DPDO_PURPOSE_NOISE);
    dpdo__stream_normals(&st, nz, D);
    double smodel = z * 2.0 * 1.0 * 0.1 / B; /* z * Delta, Delta = 2 L eta / b */
    for (int k = 0; k < D; k++) CHECK_NEAR(w2[k] - w1[k], -smodel * nz[k], 1e-13);
    /* the rest of the clean run equals mini-batch SGD with step eta (item 10) */
    dpdo__eng *e = dpdo__algorithm_eng(clean);
    int64_t perm[Q];
    dpdo__stream_open(&st, e->rng, 0, 0, DPDO_PURPOSE_SAMPLE);
    dpdo__stream_permutation(&st, Q, perm);
    double w[D] = {0};
    for (int k = 0; k < Q / B; k++) {
        double g[D] = {0};
        for (int r = 0; r < B; r++) {
            const double *x = f.X + perm[k * B + r] * D;
            double y = f.Y[perm[k * B + r]], m = 0;
            for (int cc = 0; cc < D; cc++) m += x[cc] * w[cc];
            double s = -y / (1 + exp(y * m));
            for (int cc = 0; cc < D; cc++) g[cc] += s * x[cc] / B;
        }
        for (int cc = 0; cc < D; cc++) w[cc] -= 0.1 * g[cc];
    }
    CHECK_EQ(dpdo_algorithm_run(clean, 0, NULL), DPDO_DONE);
    dpdo_algorithm_get_output(clean, 0, w1, D);
    for (int k = 0; k < D; k++) CHECK_NEAR(w1[k], w[k], 1e-14);
    /* one charge for the pass, whatever the number of Global steps */
    CHECK_EQ(dpdo_algorithm_run(noisy, 0, NULL), DPDO_DONE);
    CHECK_EQ(dpdo_ledger_charges(f.led, 0), 1);
    double ep, er;
    CHECK_EQ(dpdo_algorithm_privacy(noisy, DPDO_PRIVACY_PAPER, DPDO_NODE_ALL, &ep, NULL, NULL), DPDO_OK);
    CHECK_NEAR(ep, 0.5, 1e-15);
    CHECK_EQ(dpdo_algorithm_privacy(noisy, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &er, NULL, NULL), DPDO_OK);
    CHECK(er > 0 && er <= 0.5); /* the RDP analysis of the same Gaussian is tighter than Theorem 1 */
    dpdo_algorithm_destroy(clean);
    dpdo_algorithm_destroy(noisy);
    fx_free(&f);
}

/* ---- items 8, 12: S2 order, fetches, the holder --------------------------------------- */

static void test_round_order(void)
{
    enum { N = 3, Q = 4, D = 2, B = 2 };
    static fx f;
    fx_data(&f, N, Q, D, NULL, NULL, 0);
    dpdo_policy *pol = NULL;
    CHECK_EQ(dpdo_policy_create(&pol, dpdo_policy_type_find("always-global"), NULL, N, D + 2), DPDO_OK);
    dpdo_algorithm *a = mk(&f, DPDO_NOISE_NONE, B, 0.1, pol);
    dpdo__eng *e = dpdo__algorithm_eng(a);
    /* reference: nodes 0, 1, 2 in order, each Global on the wG left by the previous one */
    double wg[D] = {0}, wl[N][D] = {{0}};
    for (int t = 0; t < Q / B; t++)
        for (int i = 0; i < N; i++) {
            int64_t perm[Q];
            dpdo__stream st;
            dpdo__stream_open(&st, e->rng, (uint64_t)i, 0, DPDO_PURPOSE_SAMPLE);
            dpdo__stream_permutation(&st, Q, perm);
            double g[D] = {0};
            for (int r = 0; r < B; r++) {
                int64_t row = perm[t * B + r];
                const double *x = f.X + (i * Q + row) * D;
                double y = f.Y[i * Q + row], m = 0;
                for (int c = 0; c < D; c++) m += x[c] * wg[c];
                double s = -y / (1 + exp(y * m));
                for (int c = 0; c < D; c++) g[c] += s * x[c] / B;
            }
            for (int c = 0; c < D; c++) {
                wg[c] = 0.5 * (wg[c] + wl[i][c]) - 0.1 * g[c];
                wl[i][c] = wg[c];
            }
        }
    CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
    double got[D];
    dpdo_algorithm_get_output(a, DPDO_NODE_ALL, got, D);
    for (int c = 0; c < D; c++) CHECK_NEAR(got[c], wg[c], 1e-15);
    /* fetches: every Global step except the very first and those by the holder itself:
     * 6 steps, first has no holder, the rest fetch from a different node -> 5 fetches of D values;
     * announcements: 6 x (N - 1) messages of 2 values */
    int64_t m, s;
    dpdo_algorithm_comm(a, DPDO_NODE_ALL, &m, &s, NULL);
    CHECK_EQ(m, 5 + 6 * (N - 1));
    CHECK_EQ(s, 5 * D + 6 * 2 * (N - 1));
    dpdo_algorithm_destroy(a);
    dpdo_policy_destroy(pol);
    fx_free(&f);
}

/* ---- determinism with the DQN, reset, validation ------------------------------------------ */

static void test_dqn_and_misuse(void)
{
    enum { N = 4, Q = 60, D = 5, B = 3 };
    static fx f;
    fx_data(&f, N, Q, D, NULL, NULL, 0.01);
    double out[2][D];
    int64_t msgs[2];
    for (int r = 0; r < 2; r++) {
        dpdo_ledger_reset(f.led);
        dpdo_policy *pol = NULL;
        CHECK_EQ(dpdo_policy_create(&pol, dpdo_policy_type_find("dqn"), NULL, N, D + 2), DPDO_OK);
        CHECK_EQ(dpdo_policy_set(pol, "explore_steps", (double)Q / (2 * B)), DPDO_OK);
        dpdo_algorithm *a = mk(&f, DPDO_NOISE_PAPER, B, 0.1, pol);
        CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
        dpdo_algorithm_get_output(a, DPDO_NODE_ALL, out[r], D);
        dpdo_algorithm_comm(a, DPDO_NODE_ALL, &msgs[r], NULL, NULL);
        if (r == 1) { /* reset reproduces the run, the learned policy included */
            double again[D];
            int64_t m2;
            CHECK_EQ(dpdo_algorithm_reset(a), DPDO_OK);
            CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
            dpdo_algorithm_get_output(a, DPDO_NODE_ALL, again, D);
            dpdo_algorithm_comm(a, DPDO_NODE_ALL, &m2, NULL, NULL);
            CHECK(memcmp(again, out[1], sizeof again) == 0);
            CHECK_EQ(m2, msgs[1]);
        }
        dpdo_algorithm_destroy(a);
        dpdo_policy_destroy(pol);
    }
    CHECK(memcmp(out[0], out[1], sizeof out[0]) == 0);
    CHECK_EQ(msgs[0], msgs[1]);
    /* validation (item 17) */
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = DPDO_NOISE_PAPER;
    o.batch = B;
    o.step_size = 0.6; /* > 1/(2 mu) = 0.495 */
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-wor-sgd")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, N, NULL, f.reg, f.acc, &o), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_WOR_ETA_CAP, 0), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "1/(2 mu)");
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_WOR_ETA_CAP, 1), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK); /* capped at 1/(2 mu) */
    dpdo_policy *small = NULL;
    CHECK_EQ(dpdo_policy_create(&small, dpdo_policy_type_find("dqn"), NULL, N, D), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_policy(a, small), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "d + 2");
    CHECK_EQ(dpdo_algorithm_set_solver(a, NULL), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_WOR_SCHEDULE, 7), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_WOR_PASSES, 0), DPDO_E_INVAL);
    /* S1: one node per round, round robin; two passes */
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_WOR_SCHEDULE, DPDO_WOR_SEQUENTIAL), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_WOR_PASSES, 2), DPDO_OK);
    dpdo_ledger_reset(f.led);
    int64_t rounds;
    CHECK_EQ(dpdo_algorithm_run(a, 0, &rounds), DPDO_DONE);
    CHECK_EQ(rounds, 2 * N * (Q / B));
    for (int i = 0; i < N; i++) CHECK_EQ(dpdo_ledger_charges(f.led, i), 2);
    double ep;
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_PAPER, DPDO_NODE_ALL, &ep, NULL, NULL), DPDO_OK);
    CHECK_NEAR(ep, 2 * 1.0, 1e-15); /* basic composition of two passes at eps = 1 */
    dpdo_algorithm_destroy(a);
    dpdo_policy_destroy(small);
    fx_free(&f);
}

/* ---- the with-replacement baseline (spec §6.4, item 18) ------------------------------------ */

static void test_wr_baseline(void)
{
    enum { N = 3, Q = 40, D = 4, B = 4 };
    static fx f;
    fx_data(&f, N, Q, D, NULL, NULL, 0);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = DPDO_NOISE_PAPER;
    o.max_rounds = 1000000;
    o.batch = B;
    o.epsilon = 1.0;
    o.delta = 1e-5;
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-sgd-wr")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, N, NULL, NULL, f.acc, &o), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
    double z;
    dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &z);
    /* sigma_grad = sqrt(2 ln(1.25 * 5 / delta)) * 2 L / (b eps / 5) */
    CHECK_REL(z * 2.0 / B, sqrt(2 * log(6.25 / 1e-5)) * 2.0 / (B * 0.2), 1e-14);
    int64_t rounds = 0;
    CHECK_EQ(dpdo_algorithm_run(a, 0, &rounds), DPDO_DONE);
    CHECK_EQ(dpdo_algorithm_stop_reason(a), DPDO_STOP_PASSES);
    /* every row is used at most 5 times, and a node stops when fewer than b rows are eligible */
    CHECK(rounds <= 5 * N * Q / B);
    CHECK(rounds >= 5 * N * (Q - B) / B);
    for (int i = 0; i < N; i++) CHECK_EQ(dpdo_ledger_charges(f.led, i), 5); /* the largest use count */
    double er;
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &er, NULL, NULL), DPDO_OK);
    CHECK(er < 1.0); /* 5 Gaussian releases at (eps/5, delta/5) each compose to less than eps under RDP */
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_PAPER, DPDO_NODE_ALL, &er, NULL, NULL), DPDO_E_UNSUPPORTED);
    dpdo_algorithm_destroy(a);
    fx_free(&f);
}


/* Without clipping, DP-SGD-WR refuses data whose per-sample gradients exceed L (found by the
 * privacy auditor: 0.1 accepted them and reported an epsilon the releases did not satisfy). */
static void test_wr_unbounded_refused(void)
{
    enum { N = 2, Q = 20, D = 3 };
    static fx f;
    static double X[N * Q * D], Y[N * Q];
    for (int i = 0; i < N * Q; i++) {
        for (int k = 0; k < D; k++) X[i * D + k] = k == i % D ? (i == 7 ? 3.0 : 1.0) : 0.0; /* row 7: norm 3 */
        Y[i] = i % 2 ? 1 : -1;
    }
    fx_data(&f, N, Q, D, X, Y, 0);
    for (int c = 0; c < 5; c++) {
        dpdo_algorithm_options o;
        dpdo_algorithm_options_init(&o, sizeof o);
        o.noise_mode = c == 3 ? DPDO_NOISE_NONE : DPDO_NOISE_RIGOROUS;
        if (c == 4) o.clip = INFINITY; /* "trust the data": refused, the data exceed L */
        o.max_rounds = 100;
        o.batch = 2;
        if (c == 1) o.clip = 1.0;      /* clipping makes the data irrelevant */
        if (c == 2) o.lipschitz = 3.0; /* an honest L covers it */
        dpdo_algorithm *a = NULL;
        CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-sgd-wr")), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, N, NULL, NULL, c == 3 ? NULL : f.acc, &o), DPDO_OK);
        int rc = dpdo_algorithm_prepare(a);
        if (c == 4) {
            CHECK_EQ(rc, DPDO_E_INVAL);
            CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "per-sample gradients reach 3");
        } else if (c == 0) { /* clip unset: the run clips at L and says so (issue 22) */
            CHECK_MSG(rc == DPDO_OK, "case %d: %s", c, dpdo_algorithm_errmsg(a));
            CHECK_STR_CONTAINS(dpdo_algorithm_privacy_notes(a), "clip = lipschitz = 1 chosen");
            CHECK_STR_CONTAINS(dpdo_algorithm_privacy_notes(a), "reach 3");
        } else {
            CHECK_MSG(rc == DPDO_OK, "case %d: %s", c, dpdo_algorithm_errmsg(a));
        }
        dpdo_algorithm_destroy(a);
    }
    fx_free(&f);
}

/* ---- no allocation inside step() after round 1, with the DQN ------------------------------ */

static void test_no_alloc(void)
{
    enum { N = 4, Q = 90, D = 5, B = 3 };
    static fx f;
    fx_data(&f, N, Q, D, NULL, NULL, 0.01);
    dpdo_policy *pol = NULL;
    CHECK_EQ(dpdo_policy_create(&pol, dpdo_policy_type_find("dqn"), NULL, N, D + 2), DPDO_OK);
    dpdo_algorithm *a = mk(&f, DPDO_NOISE_PAPER, B, 0.1, pol);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
    dpdo__fault_arm(0);
    int rc = DPDO_ROUND, t = 0;
    while ((rc = dpdo_algorithm_step(a)) == DPDO_ROUND) t++;
    long allocs = dpdo__fault_allocs();
    dpdo__fault_arm(-1);
    CHECK_EQ(rc, DPDO_DONE);
    CHECK_EQ(t, Q / B - 1);
    CHECK_EQ(allocs, 0);
    dpdo_algorithm_destroy(a);
    dpdo_policy_destroy(pol);
    fx_free(&f);
}

/* ---- item 16: Lemma 4 on neighbouring datasets; item 13's constant ------------------------ */

static void lemma4_run(const double *X, const double *Y, double lam, double power, double *wg)
{
    enum { Q = 20, D = 3, B = 4 };
    static const int32_t acts[] = {DPDO_ACTION_LOCAL, DPDO_ACTION_LOCAL, DPDO_ACTION_LOCAL, DPDO_ACTION_LOCAL,
                                   DPDO_ACTION_GLOBAL};
    static fx f;
    fx_data(&f, 1, Q, D, X, Y, lam);
    script S = {acts, 5, 0};
    dpdo_policy *pol = mkscript(&S, 1, D);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = DPDO_NOISE_NONE;
    o.batch = B;
    o.step_size = 0.3;
    o.step_power = power;
    o.seed = 99; /* the same permutation for both datasets */
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-wor-sgd")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, 1, NULL, f.reg, NULL, &o), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_policy(a, pol), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
    dpdo_algorithm_get_output(a, 0, wg, D);
    dpdo_algorithm_destroy(a);
    dpdo_policy_destroy(pol);
    fx_free(&f);
}

static void test_lemma4(void)
{
    enum { Q = 20, D = 3, B = 4 };
    double X[Q * D], Y[Q], X2[Q * D], Y2[Q];
    for (int i = 0; i < Q; i++) {
        double nn = 0;
        for (int k = 0; k < D; k++) {
            X[i * D + k] = nrand();
            nn += X[i * D + k] * X[i * D + k];
        }
        for (int k = 0; k < D; k++) X[i * D + k] /= sqrt(nn);
        Y[i] = urand() < 0.5 ? -1 : 1;
    }
    int over = 0;
    double worst_ratio = 0;
    for (int variant = 0; variant < 4; variant++) {
        double lam = variant & 1 ? 0.05 : 0, power = variant & 2 ? 0.5 : 0;
        double w1[D], w2[D];
        lemma4_run(X, Y, lam, power, w1);
        for (int r = 0; r < Q; r++) { /* the replaced row lands in some batch of the pass */
            memcpy(X2, X, sizeof X);
            memcpy(Y2, Y, sizeof Y);
            for (int k = 0; k < D; k++) X2[r * D + k] = -X[r * D + k]; /* a worst-case-like neighbour */
            lemma4_run(X2, Y2, lam, power, w2);
            double dn = 0;
            for (int k = 0; k < D; k++) dn += (w1[k] - w2[k]) * (w1[k] - w2[k]);
            double bound = 2.0 * 1.0 * 0.3 / B; /* 2 L max eta / b: eta_1 = 0.3 is the largest */
            if (sqrt(dn) > bound + 1e-12) over++;
            worst_ratio = fmax(worst_ratio, sqrt(dn) / bound);
        }
    }
    CHECK_EQ(over, 0);
    fprintf(stderr, "# Lemma 4: largest distance / (2 L max eta / b) over 80 neighbours: %.3f\n", worst_ratio);
    CHECK(worst_ratio > 0.05); /* the bound is within an order of magnitude of what happens */
    /* item 13: c(delta = 1/60000^2) through PAPER noise */
    static fx f;
    fx_data(&f, 1, 8, 2, NULL, NULL, 0);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = DPDO_NOISE_PAPER;
    o.batch = 2;
    o.epsilon = 1.0;
    o.delta = 1.0 / (60000.0 * 60000.0);
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-wor-sgd")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, 1, NULL, NULL, f.acc, &o), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
    double z;
    dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &z);
    CHECK_REL(z, 6.667434774142554, 1e-12);
    CHECK_STR_CONTAINS(dpdo_algorithm_privacy_notes(a), "edge");
    dpdo_algorithm_destroy(a);
    fx_free(&f);
}

/* ---- multi-pass sensitivity: no release moves by more than the charged Delta ------------------
 * Two reproducible runs on neighbouring datasets (one row of node 0 replaced) with the same seed,
 * the same data-independent action script and noise off (the noise streams would be identical and
 * cancel). Every Global release before the first one that differs is identical, so the first
 * differing release is compared under the same public history: exactly what the charged
 * Delta = 2 L etabar / b (Lemma 4) bounds. The "linear" loss phi(m, y) = -y m has per-sample
 * gradients of norm exactly L = 1 (rows of norm 1) and the neighbour (-x, y) attains the bound,
 * so a row counted twice in one release shows as 2 Delta. Logistic data are checked too. */

static int lin_phi(void *user, double m, double y, double *loss, double *dloss)
{
    (void)user;
    if (loss) *loss = -y * m;
    if (dloss) *dloss = -y;
    return 0;
}
static int lin_bounds(void *user, double mb, double yb, double *d1, double *d2)
{
    (void)user, (void)mb;
    *d1 = yb;
    *d2 = 0;
    return 0;
}
static const dpdo_loss_type LINEAR = {sizeof(dpdo_loss_type), "linear", lin_phi, NULL, NULL, lin_bounds, NULL, NULL};

/* per-node action scripts: act[i][k] = node i's action at its k-th step (0-based, all passes) */
enum { SN = 2, SQ = 20, SD = 3, SB = 4, SK = SQ / SB, SSTEPS = 3 * SK };
typedef struct sscript { int32_t act[SN][SSTEPS]; int64_t k[SN]; } sscript;
static int sscripted(void *user, int64_t node, int64_t k, const double *s, int64_t len, double r,
                     const dpdo_rng *rng, uint64_t round, int32_t *action)
{
    (void)k, (void)s, (void)len, (void)r, (void)rng, (void)round;
    sscript *S = user;
    *action = S->act[node][S->k[node]++ % SSTEPS];
    return 0;
}
static const dpdo_policy_type SSCRIPT = {sizeof(dpdo_policy_type), "sscript", sscripted, NULL, NULL, NULL, NULL};

/* One run under schedule S1 (round t: node (t-1) % SN takes its step (t-1) / SN, so a round holds
 * at most one Global step). rel[r] = wG after the r-th Global step; returns their count. */
static int64_t sens_run(const double *X, const double *Y, int linear, int passes, uint64_t seed,
                        const sscript *S0, uint32_t weaken, double *rel)
{
    static fx f;
    memset(&f, 0, sizeof f);
    f.n = SN, f.q = SQ, f.d = SD;
    CHECK_EQ(dpdo_dataset_create(&f.ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_dense(f.ds, SN * SQ, SD, X, Y, DPDO_COPY), DPDO_OK);
    CHECK_EQ(dpdo_loss_create(&f.loss, linear ? &LINEAR : dpdo_loss_type_find("logistic"), NULL, SD), DPDO_OK);
    for (int i = 0; i < SN; i++) {
        CHECK_EQ(dpdo_shard_create_range(&f.sh[i], f.ds, (int64_t)i * SQ, SQ), DPDO_OK);
        CHECK_EQ(dpdo_node_create(&f.nodes[i], f.sh[i], f.loss, 1.0), DPDO_OK);
    }
    sscript S = *S0;
    dpdo_policy *pol = NULL;
    CHECK_EQ(dpdo_policy_create(&pol, &SSCRIPT, &S, SN, SD + 2), DPDO_OK);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.noise_mode = DPDO_NOISE_NONE;
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    o.batch = SB;
    o.step_size = 0.3;
    o.step_power = 0;
    o.seed = seed;
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-wor-sgd")), DPDO_OK);
    int rc = dpdo_algorithm_setup(a, f.nodes, SN, NULL, NULL, NULL, &o);
    CHECK_MSG(rc == DPDO_OK, "setup: %s", dpdo_algorithm_errmsg(a));
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_WOR_PASSES, passes), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_WOR_SCHEDULE, DPDO_WOR_SEQUENTIAL), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_policy(a, pol), DPDO_OK);
    CHECK_EQ(dpdo__algorithm_set_weaken(a, weaken), DPDO_OK);
    rc = dpdo_algorithm_prepare(a);
    CHECK_MSG(rc == DPDO_OK, "prepare: %s", dpdo_algorithm_errmsg(a));
    int64_t nrel = 0, t = 0;
    while ((rc = dpdo_algorithm_step(a)) == DPDO_ROUND) {
        int64_t node = t % SN, k = t / SN;
        t++;
        if (S0->act[node][k] != DPDO_ACTION_GLOBAL) continue;
        CHECK_EQ(dpdo_algorithm_get_output(a, 0, rel + (size_t)nrel * SD, SD), DPDO_OK);
        nrel++;
    }
    CHECK_EQ(rc, DPDO_DONE);
    CHECK_EQ(t, (int64_t)SN * SK * passes);
    dpdo_algorithm_destroy(a);
    dpdo_policy_destroy(pol);
    fx_free(&f);
    return nrel;
}

/* Over seeds, scripts and replaced rows: the largest first-difference / Delta; *viol = cases
 * above Delta (relative 1e-9 for rounding). */
static double sens_sweep(int linear, int passes, uint32_t weaken, int seeds, int *viol, int *cases)
{
    static double X[SN * SQ * SD], Y[SN * SQ], X2[SN * SQ * SD], r1[SSTEPS * SN * SD], r2[SSTEPS * SN * SD];
    const double Delta = 2.0 * 1.0 * 0.3 / SB;
    double worst = 0;
    *viol = 0, *cases = 0;
    for (int sd = 0; sd < seeds; sd++) {
        for (int i = 0; i < SN * SQ; i++) {
            double nn = 0;
            for (int k = 0; k < SD; k++) {
                X[i * SD + k] = nrand();
                nn += X[i * SD + k] * X[i * SD + k];
            }
            for (int k = 0; k < SD; k++) X[i * SD + k] /= sqrt(nn);
            Y[i] = urand() < 0.5 ? -1 : 1;
        }
        sscript S;
        memset(&S, 0, sizeof S);
        for (int i = 0; i < SN; i++)
            for (int k = 0; k < SSTEPS; k++) {
                /* seed 0: a pass (the second) without any Global step; others: random */
                int g = sd == 0 ? (k < SK ? k == 2 : k < 2 * SK ? 0 : k % SK >= 1 && k % 2 == 1) : urand() < 0.35;
                S.act[i][k] = g ? DPDO_ACTION_GLOBAL : DPDO_ACTION_LOCAL;
            }
        uint64_t seed = 1000 + (uint64_t)sd;
        int64_t n1 = sens_run(X, Y, linear, passes, seed, &S, weaken, r1);
        for (int row = 0; row < SQ; row++) { /* node 0's rows */
            memcpy(X2, X, sizeof X);
            for (int k = 0; k < SD; k++) X2[row * SD + k] = -X[row * SD + k];
            int64_t n2 = sens_run(X2, Y, linear, passes, seed, &S, weaken, r2);
            CHECK_EQ(n1, n2);
            for (int64_t r = 0; r < n1; r++) {
                double dn = 0;
                for (int k = 0; k < SD; k++) dn += (r1[r * SD + k] - r2[r * SD + k]) * (r1[r * SD + k] - r2[r * SD + k]);
                if (dn == 0) continue;
                double ratio = sqrt(dn) / Delta; /* the first release that moved */
                worst = fmax(worst, ratio);
                *viol += ratio > 1 + 1e-9;
                (*cases)++;
                break;
            }
        }
    }
    return worst;
}

static void test_multipass_sensitivity(void)
{
    for (int passes = 2; passes <= 3; passes++)
        for (int linear = 1; linear >= 0; linear--) {
            int viol = 0, cases = 0;
            double w = sens_sweep(linear, passes, 0, 12, &viol, &cases);
            fprintf(stderr, "# passes %d, %s loss: %d neighbours, largest first release move %.4f Delta, %d above Delta\n",
                    passes, linear ? "linear" : "logistic", cases, w, viol);
            CHECK_EQ(viol, 0);
            CHECK(cases >= 12 * SQ / 2);
            if (linear) CHECK(w > 0.999); /* the bound is attained: the test can see a doubled row */
            else CHECK(w > 0.2);
        }
}

/* The old behaviour (no reset at a pass boundary; test build only) fails the same test. */
static void test_multipass_sensitivity_old(void)
{
    for (int passes = 2; passes <= 3; passes++) {
        int viol = 0, cases = 0;
        double w = sens_sweep(1, passes, DPDO__WEAKEN_WOR_PASS, 12, &viol, &cases);
        fprintf(stderr, "# OLD code, passes %d, linear loss: %d neighbours, largest first release move %.4f Delta, "
                "%d above Delta\n", passes, cases, w, viol);
        CHECK(viol > 0);
        CHECK(w > 1.9); /* a row counted twice (or three times) in one release */
        viol = 0;
        w = sens_sweep(0, passes, DPDO__WEAKEN_WOR_PASS, 12, &viol, &cases);
        fprintf(stderr, "# OLD code, passes %d, logistic loss: %d neighbours, largest first release move %.4f Delta, "
                "%d above Delta\n", passes, cases, w, viol);
    }
}

int main(void)
{
    RUN(test_examples);
    RUN(test_always_local);
    RUN(test_single_node_sgd);
    RUN(test_round_order);
    RUN(test_dqn_and_misuse);
    RUN(test_wr_baseline);
    RUN(test_wr_unbounded_refused);
    RUN(test_no_alloc);
    RUN(test_lemma4);
    RUN(test_multipass_sensitivity);
    RUN(test_multipass_sensitivity_old);
    return h_finish();
}
