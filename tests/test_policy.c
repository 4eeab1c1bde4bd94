/* SPDX-License-Identifier: BSD-3-Clause */
/* Local/Global policies (spec dp-wor-sgd.md §2.5, §3, oracles 19-28): the
 * DQN's forward pass against a naive evaluation and its affinity; the
 * backprop against central finite differences; Adam against a hand-computed
 * two-step example; Xavier bounds and statistics; the exploration schedule
 * and the epsilon-greedy mixture; replay FIFO order and warm-up; the first
 * step and FINISH transitions; target sync; one whole training step against
 * a reference written here; determinism and bit-exact reset; learning on a
 * bandit; random/periodic/always-* policies; user types; bad input for every
 * public function; out-of-memory; no allocation per step. */
#include <stdint.h>
#include "dpdo/dpdo.h"
#include "dpdo/policy.h"
#include "core/core_impl.h"
#include "model/policy_impl.h"
#include "rng/rng_impl.h"
#include "harness.h"

static double urand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) * 0x1.0p-53;
}

static dpdo_policy *mk(const char *type, int64_t n, int64_t S)
{
    dpdo_policy *p = NULL;
    int rc = dpdo_policy_create(&p, dpdo_policy_type_find(type), NULL, n, S);
    CHECK_EQ(rc, DPDO_OK);
    return p;
}

static dpdo_rng *mkrng(uint64_t seed)
{
    dpdo_rng *r = NULL;
    CHECK_EQ(dpdo_rng_create(&r, NULL, NULL, seed), DPDO_OK);
    return r;
}

/* ---- type lookup --------------------------------------------------------------- */

static void test_types(void)
{
    const char *names[] = {"dqn", "always-global", "always-local", "random", "periodic"};
    const dpdo_policy_type *t = dpdo_policy_type_next(NULL);
    for (int i = 0; i < 5; i++) {
        CHECK(t != NULL);
        if (!t) return;
        CHECK(strcmp(dpdo_policy_type_name(t), names[i]) == 0);
        CHECK(dpdo_policy_type_find(names[i]) == t);
        t = dpdo_policy_type_next(t);
    }
    CHECK(t == NULL);
    CHECK(dpdo_policy_type_find("nope") == NULL);
    CHECK(dpdo_policy_type_find(NULL) == NULL);
    CHECK(strcmp(dpdo_policy_type_name(NULL), "(null)") == 0);
    dpdo_policy_type other = {sizeof other, "x", NULL, NULL, NULL, NULL, NULL};
    CHECK(dpdo_policy_type_next(&other) == NULL);
    CHECK_EQ(DPDO_ACTION_LOCAL, 0);
    CHECK_EQ(DPDO_ACTION_GLOBAL, 1);
}

/* ---- network shape and initialisation (oracle 19) ------------------------------ */

static void test_xavier(void)
{
    /* parameter counts (d+2)128 + 128 + 256 + 2 */
    dpdo_policy *p56 = mk("dqn", 1, 56);
    CHECK_EQ(dpdo__dqn_nparams(p56), 7554);
    dpdo_policy_destroy(p56);
    const int64_t S = 52, H = 128;
    dpdo_policy *p = mk("dqn", 3, S);
    CHECK_EQ(dpdo__dqn_nparams(p), 7042);
    dpdo_rng *rng = mkrng(7);
    CHECK_EQ(dpdo_policy_reset(p, rng), DPDO_OK);
    const double r1 = 0.182574185835055, r2 = 0.214834462211830; /* sqrt(6/180), sqrt(6/130) */
    CHECK_NEAR(sqrt(6.0 / 180.0), r1, 1e-14);
    for (int64_t node = 0; node < 3; node++) {
        double *th = dpdo__dqn_params(p, node, DPDO__DQN_ONLINE);
        double *tg = dpdo__dqn_params(p, node, DPDO__DQN_TARGET);
        double *m = dpdo__dqn_params(p, node, DPDO__DQN_ADAM_M);
        double *v = dpdo__dqn_params(p, node, DPDO__DQN_ADAM_V);
        double mx1 = 0, mx2 = 0, s1 = 0, ss1 = 0;
        int inside = 1, zero = 1;
        for (int64_t i = 0; i < H * S; i++) {
            inside &= fabs(th[i]) <= r1;
            mx1 = fmax(mx1, fabs(th[i]));
            s1 += th[i];
            ss1 += th[i] * th[i];
        }
        for (int64_t i = 0; i < 2 * H; i++) {
            double w = th[H * S + H + i];
            inside &= fabs(w) <= r2;
            mx2 = fmax(mx2, fabs(w));
        }
        for (int64_t i = 0; i < H; i++) zero &= th[H * S + i] == 0.0;
        zero &= th[H * S + 3 * H] == 0.0 && th[H * S + 3 * H + 1] == 0.0;
        CHECK(inside);
        CHECK(zero);
        CHECK(mx1 > 0.995 * r1); /* 6656 draws fill the interval */
        CHECK(mx2 > 0.95 * r2);  /* 256 draws */
        /* U(-r, r): mean 0, variance r^2/3; 4 SE bands */
        const double n = (double)(H * S), var = r1 * r1 / 3.0;
        CHECK_NEAR(s1 / n, 0.0, 4.0 * sqrt(var / n));
        CHECK_NEAR(ss1 / n, var, 4.0 * sqrt(4.0 / 45.0 * pow(r1, 4) / n));
        CHECK(memcmp(th, tg, 7042 * sizeof *th) == 0);
        int mv0 = 1;
        for (int64_t i = 0; i < 7042; i++) mv0 &= m[i] == 0.0 && v[i] == 0.0;
        CHECK(mv0);
    }
    /* nodes differ (stream (node, 0, INIT)) */
    CHECK(memcmp(dpdo__dqn_params(p, 0, 0), dpdo__dqn_params(p, 1, 0), 7042 * sizeof(double)));
    /* lazy initialisation at the first decide gives the same weights */
    dpdo_policy *q = mk("dqn", 3, S);
    double st[52] = {0};
    int32_t a;
    CHECK_EQ(dpdo_policy_q_values(q, 1, st, S, (double[2]){0}), DPDO_E_STATE);
    CHECK_EQ(dpdo_policy_decide(q, 1, 0, st, S, NAN, rng, 5, &a), DPDO_OK);
    CHECK(memcmp(dpdo__dqn_params(p, 1, 0), dpdo__dqn_params(q, 1, 0), 7042 * sizeof(double)) ==
          0);
    CHECK(!dpdo__dqn_agent(q, 0)->init);
    dpdo_policy_destroy(q);
    dpdo_policy_destroy(p);
    dpdo_rng_destroy(rng);
}

/* ---- forward pass (oracle 20) ---------------------------------------------- */

/* Naive Q: h = W1 s + b1; Q = W2 h + b2, written independently. */
static void naive_q(const double *th, int64_t S, int64_t H, const double *s, double *q)
{
    const double *W1 = th, *b1 = th + H * S, *W2 = th + H * S + H, *b2 = th + H * S + 3 * H;
    q[0] = b2[0];
    q[1] = b2[1];
    for (int64_t i = 0; i < H; i++) {
        double h = b1[i];
        for (int64_t c = 0; c < S; c++) h += W1[c * H + i] * s[c]; /* column-major */
        q[0] += W2[i] * h;
        q[1] += W2[H + i] * h;
    }
}

static void fill_random_theta(double *th, int64_t P, uint64_t *seed)
{
    for (int64_t i = 0; i < P; i++) th[i] = 0.4 * (2 * urand(seed) - 1);
}

static void test_forward(void)
{
    const int64_t S = 7, H = 16;
    dpdo_policy *p = mk("dqn", 1, S);
    CHECK_EQ(dpdo_policy_set(p, "hidden", (double)H), DPDO_OK);
    const int64_t P = dpdo__dqn_nparams(p);
    CHECK_EQ(P, H * S + 3 * H + 2);
    uint64_t seed = 99;
    double th[16 * 7 + 50], s1[7], s2[7], sm[7], h[16], q1[2], q2[2], qm[2], qn[2];
    fill_random_theta(th, P, &seed);
    for (int c = 0; c < S; c++) {
        s1[c] = 2 * urand(&seed) - 1;
        s2[c] = 3 * urand(&seed) - 1;
    }
    dpdo__dqn_forward(p, th, s1, h, q1);
    naive_q(th, S, H, s1, qn);
    CHECK_NEAR(q1[0], qn[0], 1e-12);
    CHECK_NEAR(q1[1], qn[1], 1e-12);
    dpdo__dqn_forward(p, th, s2, h, q2);
    const double al = 0.3;
    for (int c = 0; c < S; c++) sm[c] = al * s1[c] + (1 - al) * s2[c];
    dpdo__dqn_forward(p, th, sm, h, qm);
    CHECK_NEAR(qm[0], al * q1[0] + (1 - al) * q2[0], 1e-10);
    CHECK_NEAR(qm[1], al * q1[1] + (1 - al) * q2[1], 1e-10);
    /* tiny hand example: S = 1, H = 1: W1 = .5, b1 = .1, W2 = (1, -2), b2 = (.3, .2);
     * s = 2 -> h = 1.1, Q = (1.4, -2.0) */
    dpdo_policy *t = mk("dqn", 1, 1);
    CHECK_EQ(dpdo_policy_set(t, "hidden", 1), DPDO_OK);
    double tt[6] = {0.5, 0.1, 1.0, -2.0, 0.3, 0.2}, hh[1], qq[2];
    dpdo__dqn_forward(t, tt, (double[]){2.0}, hh, qq);
    CHECK_NEAR(hh[0], 1.1, 1e-15);
    CHECK_NEAR(qq[0], 1.4, 1e-15);
    CHECK_NEAR(qq[1], -2.0, 1e-15);
    dpdo_policy_destroy(t);
    dpdo_policy_destroy(p);
}

/* ---- backprop vs central differences (oracle 21) ------------------------------ */

static double naive_loss(const double *th, int64_t S, int64_t H, int64_t B, const double *s,
                         const int32_t *a, const double *y)
{
    double l = 0;
    for (int64_t j = 0; j < B; j++) {
        double q[2];
        naive_q(th, S, H, s + j * S, q);
        l += (y[j] - q[a[j]]) * (y[j] - q[a[j]]);
    }
    return l / (double)B;
}

static void fd_check(int64_t S, int64_t H, int64_t B, int64_t nprobe, uint64_t seed)
{
    dpdo_policy *p = mk("dqn", 1, S);
    CHECK_EQ(dpdo_policy_set(p, "hidden", (double)H), DPDO_OK);
    CHECK_EQ(dpdo_policy_set(p, "batch", (double)B), DPDO_OK);
    const int64_t P = dpdo__dqn_nparams(p);
    double *th = malloc((size_t)P * sizeof *th), *g = malloc((size_t)P * sizeof *g);
    double *s = malloc((size_t)(B * S) * sizeof *s), *y = malloc((size_t)B * sizeof *y);
    double *hb = malloc((size_t)(B * H) * sizeof *hb), *qb = malloc((size_t)(2 * B) * sizeof *qb);
    int32_t *a = malloc((size_t)B * sizeof *a);
    fill_random_theta(th, P, &seed);
    for (int64_t i = 0; i < B * S; i++) s[i] = 2 * urand(&seed) - 1;
    for (int64_t j = 0; j < B; j++) {
        y[j] = 3 * urand(&seed) - 1.5;
        a[j] = (int32_t)(j % 3 == 0); /* both actions present */
    }
    double l = dpdo__dqn_loss_grad(p, th, B, s, a, y, g, hb, qb);
    CHECK_REL(l, naive_loss(th, S, H, B, s, a, y), 1e-12);
    double worst = 0;
    int64_t worst_i = -1;
    const int64_t nt = nprobe >= P ? P : nprobe;
    for (int64_t t = 0; t < nt; t++) {
        int64_t i = nprobe >= P ? t : (int64_t)(urand(&seed) * (double)P);
        const double h = 1e-5, o = th[i];
        th[i] = o + h;
        double lp = naive_loss(th, S, H, B, s, a, y);
        th[i] = o - h;
        double lm = naive_loss(th, S, H, B, s, a, y);
        th[i] = o;
        double fd = (lp - lm) / (2 * h);
        double err = fabs(fd - g[i]) / fmax(fabs(g[i]), 1e-3);
        if (err > worst) {
            worst = err;
            worst_i = i;
        }
    }
    CHECK_MSG(worst < 1e-6, "S=%lld H=%lld: worst relative error %.3g at parameter %lld",
              (long long)S, (long long)H, worst, (long long)worst_i);
    free(th), free(g), free(s), free(y), free(hb), free(qb), free(a);
    dpdo_policy_destroy(p);
}

static void test_backprop_fd(void)
{
    fd_check(5, 6, 7, 1000000, 11);                     /* every parameter */
    fd_check(52, 128, 10, h_quick() ? 200 : 1500, 12); /* the paper's size, probed */
}

/* ---- Adam (oracle 22) ---------------------------------------------------------- */

static void test_adam(void)
{
    dpdo_policy *p = mk("dqn", 1, 1);
    CHECK_EQ(dpdo_policy_set(p, "hidden", 1), DPDO_OK);
    CHECK_EQ(dpdo__dqn_nparams(p), 6);
    /* first step: bias-corrected form gives exactly -lr g / (|g| + eps) */
    double th[6] = {1, 1, 1, 1, 1, 1}, m[6] = {0}, v[6] = {0};
    const double g[6] = {0.5, -3.0, 1e-6, 0.0, 1e-2, -7e4};
    dpdo__dqn_adam(p, th, m, v, g, 1);
    for (int i = 0; i < 6; i++) {
        double want = 1.0 - 0.01 * g[i] / (fabs(g[i]) + 1e-8);
        CHECK_REL(th[i], want, 1e-12);
    }
    CHECK(th[3] == 1.0); /* zero gradient: no move */
    CHECK_REL(1.0 - th[4], 0.01, 1e-6);
    /* hand computation, lr .01, b1 .9, b2 .999, eps 1e-8, theta 1, g = .5 then -.25:
     * step 1: m = .05, v = .00025, theta = 1 - .01 * .5/(.5 + 1e-8) = 0.9900000002;
     * step 2: m = .02, v = .00031225, mhat = .02/.19, vhat = .00031225/.001999,
     *         theta = 0.9873366298707846 */
    double t1[6] = {1, 0, 0, 0, 0, 0}, m1[6] = {0}, v1[6] = {0};
    dpdo__dqn_adam(p, t1, m1, v1, (double[6]){0.5}, 1);
    CHECK_REL(t1[0], 0.9900000002, 1e-13);
    CHECK_REL(m1[0], 0.05, 1e-15);
    CHECK_REL(v1[0], 0.00025, 1e-15);
    dpdo__dqn_adam(p, t1, m1, v1, (double[6]){-0.25}, 2);
    CHECK_REL(m1[0], 0.02, 1e-14);
    CHECK_REL(v1[0], 0.00031225, 1e-14);
    CHECK_REL(t1[0], 0.9873366298707846, 1e-13);
    /* lr = 0 freezes */
    CHECK_EQ(dpdo_policy_set(p, "lr", 0), DPDO_OK);
    double t2[6] = {2, 2, 2, 2, 2, 2}, m2[6] = {0}, v2[6] = {0};
    dpdo__dqn_adam(p, t2, m2, v2, g, 1);
    CHECK(t2[0] == 2 && t2[5] == 2);
    dpdo_policy_destroy(p);
}

/* ---- exploration (oracle 26) ----------------------------------------------------- */

static void test_exploration(void)
{
    dpdo_policy *p = mk("dqn", 1, 3);
    CHECK_EQ(dpdo_policy_set(p, "explore_steps", 60), DPDO_OK); /* 60000/(2*10*50) */
    CHECK(dpdo__dqn_explore_p(p, 0) == 1.0);
    CHECK_NEAR(dpdo__dqn_explore_p(p, 30), 0.55, 1e-15);
    CHECK_NEAR(dpdo__dqn_explore_p(p, 59), 1 - 0.9 * 59 / 60.0, 1e-15);
    CHECK(dpdo__dqn_explore_p(p, 60) == 0.1);
    CHECK(dpdo__dqn_explore_p(p, 1000) == 0.1);
    CHECK_EQ(dpdo_policy_set(p, "explore_steps", 0), DPDO_OK);
    CHECK(dpdo__dqn_explore_p(p, 0) == 0.1);
    /* p = 1: uniform random actions. k = 0 every time: no transition, no training. */
    CHECK_EQ(dpdo_policy_set(p, "explore_min", 1), DPDO_OK);
    dpdo_rng *rng = mkrng(3);
    const int N = h_quick() ? 20000 : 100000;
    double st[3] = {0.1, -0.2, 0};
    long glob = 0;
    for (int i = 0; i < N; i++) {
        int32_t a = -1;
        CHECK_EQ(dpdo_policy_decide(p, 0, 0, st, 3, NAN, rng, (uint64_t)i, &a), DPDO_OK);
        glob += a;
    }
    CHECK_EQ(dpdo__dqn_agent(p, 0)->trains, 0);
    CHECK_NEAR((double)glob / N, 0.5, 4 * sqrt(0.25 / N));
    /* epsilon-greedy mixture at p = 0.3: the non-greedy action has frequency 0.15 */
    CHECK_EQ(dpdo_policy_set(p, "explore_start", 0.3), DPDO_OK);
    CHECK_EQ(dpdo_policy_set(p, "explore_min", 0.3), DPDO_OK);
    double q[2];
    CHECK_EQ(dpdo_policy_q_values(p, 0, st, 3, q), DPDO_OK);
    int greedy = q[1] > q[0];
    CHECK(q[0] != q[1]);
    long other = 0;
    for (int i = 0; i < N; i++) {
        int32_t a = -1;
        CHECK_EQ(dpdo_policy_decide(p, 0, 0, st, 3, NAN, rng, (uint64_t)(N + i), &a), DPDO_OK);
        other += a != greedy;
    }
    CHECK_NEAR((double)other / N, 0.15, 4 * sqrt(0.15 * 0.85 / N));
    /* p = 0 with equal Q-values: ties go to LOCAL */
    CHECK_EQ(dpdo_policy_set(p, "explore_start", 0), DPDO_OK);
    CHECK_EQ(dpdo_policy_set(p, "explore_min", 0), DPDO_OK);
    double *th = dpdo__dqn_params(p, 0, DPDO__DQN_ONLINE);
    memset(th, 0, (size_t)dpdo__dqn_nparams(p) * sizeof *th);
    for (int i = 0; i < 50; i++) {
        int32_t a = -1;
        CHECK_EQ(dpdo_policy_decide(p, 0, 0, st, 3, NAN, rng, (uint64_t)i, &a), DPDO_OK);
        CHECK_EQ(a, DPDO_ACTION_LOCAL);
    }
    dpdo_policy_destroy(p);
    dpdo_rng_destroy(rng);
}

/* A replay ring loaded from a forged checkpoint (any double in an entry's action slot) must not
 * index outside the Q-values or the output layer in training: found by fuzz_checkpoint (a
 * heap-buffer-overflow in dpdo__dqn_loss_grad); an action is read as "nonzero = Global". */
static void test_forged_replay_action(void)
{
    const int64_t S = 3;
    dpdo_policy *p = mk("dqn", 1, S);
    dpdo_rng *rng = mkrng(9);
    struct dpdo__dqn_agent *ag = dpdo__dqn_agent(p, 0);
    int32_t a;
    for (int k = 0; k < 12; k++) {
        double st[3] = {0.1 * k, -0.2 * k, 0.5};
        CHECK_EQ(dpdo_policy_decide(p, 0, k, st, S, k ? -0.01 * k : NAN, rng, (uint64_t)k, &a), DPDO_OK);
    }
    const double hostile[4] = {1e9, -3.0, NAN, 2147483648.0};
    for (int64_t i = 0; i < ag->count; i++)
        ((double *)dpdo__dqn_replay_entry(p, 0, i))[2 * S] = hostile[i % 4];
    int64_t tr = ag->trains;
    double st[3] = {1.2, -2.4, 0.5};
    CHECK_EQ(dpdo_policy_decide(p, 0, 12, st, S, -0.12, rng, 12, &a), DPDO_OK);
    CHECK_EQ(ag->trains, tr + 1);
    CHECK(a == DPDO_ACTION_LOCAL || a == DPDO_ACTION_GLOBAL);
    dpdo_policy_destroy(p);
    dpdo_rng_destroy(rng);
}

/* ---- replay memory and transitions (oracles 23, 28) -------------------------------- */

static void test_replay(void)
{
    const int64_t S = 3;
    dpdo_policy *p = mk("dqn", 2, S);
    dpdo_rng *rng = mkrng(5);
    int32_t acts[30];
    struct dpdo__dqn_agent *ag = dpdo__dqn_agent(p, 1);
    for (int k = 0; k < 26; k++) {
        double st[3] = {(double)k, -(double)k, 0.5};
        double rew = k == 0 ? NAN : -0.01 * k; /* reward of decision k-1 */
        CHECK_EQ(dpdo_policy_decide(p, 1, k, st, S, rew, rng, (uint64_t)k, &acts[k]), DPDO_OK);
        int64_t pushes = k; /* the first step stores nothing */
        CHECK_EQ(ag->count, pushes < 20 ? pushes : 20);
        /* training only once the memory holds >= 10 */
        CHECK_EQ(ag->trains, k >= 10 ? k - 9 : 0);
        CHECK_EQ(ag->steps, k + 1);
    }
    /* 25 pushes: the last 20 in FIFO order, transitions (k-1 -> k) for k = 6..25 */
    for (int i = 0; i < 20; i++) {
        const double *e = dpdo__dqn_replay_entry(p, 1, i);
        int k = 6 + i;
        CHECK(e != NULL);
        if (!e) continue;
        CHECK(e[0] == k - 1 && e[1] == -(k - 1) && e[2] == 0.5);
        CHECK(e[3] == k && e[4] == -k && e[5] == 0.5);
        CHECK(e[6] == acts[k - 1]);
        CHECK(e[7] == -0.01 * k);
        CHECK(e[8] == 0.0);
    }
    CHECK(dpdo__dqn_replay_entry(p, 1, 20) == NULL);
    /* node 0 untouched */
    CHECK_EQ(dpdo__dqn_agent(p, 0)->count, 0);
    /* FINISH: exactly one done transition (s_last, a_last, r, s_last, 1) */
    CHECK_EQ(dpdo_policy_finish(p, 1, -0.75, rng, 100), DPDO_OK);
    CHECK_EQ(ag->count, 20);
    CHECK_EQ(ag->trains, 16 + 1);
    const double *e = dpdo__dqn_replay_entry(p, 1, 19);
    CHECK(e != NULL);
    if (!e) goto out;
    CHECK(e[0] == 25 && e[3] == 25 && e[1] == -25 && e[4] == -25);
    CHECK(e[6] == acts[25] && e[7] == -0.75 && e[8] == 1.0);
    CHECK(dpdo__dqn_replay_entry(p, 1, 18)[8] == 0.0);
    /* a second finish is a no-op */
    CHECK_EQ(dpdo_policy_finish(p, 1, -0.5, rng, 101), DPDO_OK);
    CHECK_EQ(ag->trains, 17);
    CHECK(dpdo__dqn_replay_entry(p, 1, 19)[7] == -0.75);
    /* next episode: k = 0 stores nothing; an unfinished episode's pending step
     * is dropped at the next k = 0 */
    double st[3] = {1, 2, 3};
    int32_t a;
    CHECK_EQ(dpdo_policy_decide(p, 1, 0, st, S, NAN, rng, 200, &a), DPDO_OK);
    CHECK(dpdo__dqn_replay_entry(p, 1, 19)[7] == -0.75);
    CHECK_EQ(dpdo_policy_decide(p, 1, 0, st, S, NAN, rng, 201, &a), DPDO_OK);
    CHECK(dpdo__dqn_replay_entry(p, 1, 19)[7] == -0.75);
    /* finish_train = 0: stores, does not train */
    CHECK_EQ(dpdo_policy_set(p, "finish_train", 0), DPDO_OK);
    int64_t tr = ag->trains;
    CHECK_EQ(dpdo_policy_finish(p, 1, -0.25, NULL, 0), DPDO_OK); /* no rng needed */
    CHECK_EQ(ag->trains, tr);
    CHECK(dpdo__dqn_replay_entry(p, 1, 19)[7] == -0.25);
    /* replay = batch = 1: every step trains on the newest transition */
    CHECK_EQ(dpdo_policy_set(p, "batch", 1), DPDO_OK);
    CHECK_EQ(dpdo_policy_set(p, "replay", 1), DPDO_OK);
    ag = dpdo__dqn_agent(p, 1);
    CHECK_EQ(ag->count, 0); /* structural set forgot everything */
    for (int k = 0; k < 4; k++) {
        double s2[3] = {(double)k, 0, 0};
        CHECK_EQ(dpdo_policy_decide(p, 1, k, s2, S, k ? -1.0 : NAN, rng, 300 + k, &a), DPDO_OK);
        CHECK_EQ(ag->count, k ? 1 : 0);
        CHECK_EQ(ag->trains, k);
        if (k) CHECK(dpdo__dqn_replay_entry(p, 1, 0)[3] == k);
    }
out:
    dpdo_policy_destroy(p);
    dpdo_rng_destroy(rng);
}

/* ---- target network (oracle 24) ------------------------------------------------- */

static void test_target(void)
{
    const int64_t S = 4;
    dpdo_policy *p = mk("dqn", 1, S);
    CHECK_EQ(dpdo_policy_set(p, "target_period", 3), DPDO_OK);
    const int64_t P = dpdo__dqn_nparams(p);
    dpdo_rng *rng = mkrng(9);
    CHECK_EQ(dpdo_policy_reset(p, rng), DPDO_OK);
    struct dpdo__dqn_agent *ag = dpdo__dqn_agent(p, 0);
    double *last = malloc((size_t)P * sizeof *last);
    memcpy(last, ag->target, (size_t)P * sizeof *last);
    uint64_t seed = 4;
    int syncs = 0;
    for (int k = 0; k < 45; k++) {
        double st[4];
        for (int c = 0; c < 4; c++) st[c] = 2 * urand(&seed) - 1;
        int32_t a;
        int64_t before = ag->trains;
        CHECK_EQ(dpdo_policy_decide(p, 0, k, st, S, k ? urand(&seed) : NAN, rng, (uint64_t)k, &a),
                 DPDO_OK);
        if (ag->trains > before && ag->trains % 3 == 0) {
            CHECK(memcmp(ag->target, ag->theta, (size_t)P * sizeof *last) == 0);
            memcpy(last, ag->target, (size_t)P * sizeof *last);
            syncs++;
        } else {
            CHECK(memcmp(ag->target, last, (size_t)P * sizeof *last) == 0);
            if (ag->trains % 3 != 0)
                CHECK(memcmp(ag->target, ag->theta, (size_t)P * sizeof *last) != 0);
        }
    }
    CHECK_EQ(ag->trains, 45 - 10);
    CHECK_EQ(syncs, 35 / 3);
    free(last);
    dpdo_policy_destroy(p);
    dpdo_rng_destroy(rng);
}

/* ---- one whole training step against a reference (oracles 21, 25) ------------------- */

static void test_train_reference(void)
{
    const int64_t S = 5, H = 8, B = 4, R = 6;
    dpdo_policy *p = mk("dqn", 1, S);
    CHECK_EQ(dpdo_policy_set(p, "hidden", (double)H), DPDO_OK);
    CHECK_EQ(dpdo_policy_set(p, "batch", (double)B), DPDO_OK);
    CHECK_EQ(dpdo_policy_set(p, "replay", (double)R), DPDO_OK);
    CHECK_EQ(dpdo_policy_set(p, "discount", 0.7), DPDO_OK);
    CHECK_EQ(dpdo_policy_set(p, "lr", 0.05), DPDO_OK);
    CHECK_EQ(dpdo_policy_set(p, "target_period", 1000), DPDO_OK);
    const int64_t P = dpdo__dqn_nparams(p);
    dpdo_rng *rng = mkrng(21);
    uint64_t seed = 77;
    struct dpdo__dqn_agent *ag = dpdo__dqn_agent(p, 0);
    double *th = malloc((size_t)P * sizeof *th), *tg = malloc((size_t)P * sizeof *tg);
    double *m = malloc((size_t)P * sizeof *m), *v = malloc((size_t)P * sizeof *v);
    double *g = malloc((size_t)P * sizeof *g);
    int step = 0;
    for (int ep = 0; ep < 3; ep++) {
        for (int k = 0; k < 5; k++, step++) {
            double st[5];
            for (int c = 0; c < S; c++) st[c] = 2 * urand(&seed) - 1;
            double rew = k ? 2 * urand(&seed) - 1 : NAN;
            /* snapshot, then predict the training step (if any) */
            int64_t count_after = ag->count + (ag->has_prev && k > 0 ? 1 : 0);
            if (count_after > R) count_after = R;
            const int trains = count_after >= B;
            int64_t t = ag->trains + 1;
            if (trains) {
                memcpy(th, ag->theta, (size_t)P * sizeof *th);
                memcpy(tg, ag->target, (size_t)P * sizeof *tg);
                memcpy(m, ag->m, (size_t)P * sizeof *m);
                memcpy(v, ag->v, (size_t)P * sizeof *v);
            }
            int32_t a;
            CHECK_EQ(dpdo_policy_decide(p, 0, k, st, S, rew, rng, (uint64_t)step, &a), DPDO_OK);
            if (!trains) continue;
            /* the mini-batch: the documented stream position */
            int64_t idx[4];
            dpdo__stream sm;
            dpdo__stream_open(&sm, rng, 0, (uint64_t)step, DPDO_PURPOSE_EXPLORATION);
            dpdo__stream_seek(&sm, DPDO__DQN_BLOCK_TRAIN);
            dpdo__stream_subset(&sm, count_after, B, idx);
            /* reference gradient: dL/dW2[a][i] = sum_j (-2/B) e_j h_j[i], ... */
            memset(g, 0, (size_t)P * sizeof *g);
            for (int j = 0; j < B; j++) {
                const double *e = dpdo__dqn_replay_entry(p, 0, idx[j]);
                const double *s0 = e, *s1 = e + S;
                int aj = (int)e[2 * S];
                double r = e[2 * S + 1], y;
                if (e[2 * S + 2] == 1.0) {
                    y = r;
                } else {
                    double qn[2];
                    naive_q(tg, S, H, s1, qn);
                    y = r + 0.7 * (qn[0] > qn[1] ? qn[0] : qn[1]);
                }
                double q[2];
                naive_q(th, S, H, s0, q);
                double coef = -2.0 * (y - q[aj]) / (double)B;
                for (int i = 0; i < H; i++) {
                    double hi = th[H * S + i];
                    for (int c = 0; c < S; c++) hi += th[c * H + i] * s0[c];
                    double w2 = th[H * S + H + aj * H + i];
                    g[H * S + H + aj * H + i] += coef * hi;
                    g[H * S + i] += coef * w2;
                    for (int c = 0; c < S; c++) g[c * H + i] += coef * w2 * s0[c];
                }
                g[H * S + 3 * H + aj] += coef;
            }
            double maxerr = 0;
            for (int64_t i = 0; i < P; i++) {
                double mi = 0.9 * m[i] + 0.1 * g[i];
                double vi = 0.999 * v[i] + 0.001 * g[i] * g[i];
                double want = th[i] - 0.05 * (mi / (1 - pow(0.9, (double)t))) /
                                          (sqrt(vi / (1 - pow(0.999, (double)t))) + 1e-8);
                maxerr = fmax(maxerr, fabs(ag->theta[i] - want) / fmax(fabs(want), 1e-3));
            }
            CHECK_MSG(maxerr < 1e-9, "step %d: max rel err %.3g", step, maxerr);
            CHECK_EQ(ag->trains, t);
        }
        CHECK_EQ(dpdo_policy_finish(p, 0, -0.5, rng, 1000 + ep), DPDO_OK);
    }
    CHECK(ag->trains >= 8);
    free(th), free(tg), free(m), free(v), free(g);
    dpdo_policy_destroy(p);
    dpdo_rng_destroy(rng);
}

/* ---- determinism and reset -------------------------------------------------------- */

/* Drive a policy through `n` steps of a synthetic episode sequence. */
static void drive(dpdo_policy *p, const dpdo_rng *rng, int64_t nodes, int64_t S, int n,
                  int32_t *acts)
{
    uint64_t seed = 1234;
    for (int t = 0; t < n; t++) {
        for (int64_t m = 0; m < nodes; m++) {
            int k = t % 40;
            double st[8];
            for (int c = 0; c < S; c++) st[c] = urand(&seed) - 0.5;
            int32_t a = -1;
            double rew = k ? -urand(&seed) : NAN;
            CHECK_EQ(dpdo_policy_decide(p, m, k, st, S, rew, rng, (uint64_t)t, &a), DPDO_OK);
            acts[t * nodes + m] = a;
            if (k == 39) CHECK_EQ(dpdo_policy_finish(p, m, -urand(&seed), rng, (uint64_t)t), 0);
        }
    }
}

static void test_determinism_reset(void)
{
    const int64_t S = 6, N = 3;
    const int T = 120;
    dpdo_rng *r1 = mkrng(42), *r2 = mkrng(42), *r3 = mkrng(43);
    dpdo_policy *a = mk("dqn", N, S), *b = mk("dqn", N, S), *c = mk("dqn", N, S);
    int32_t *x = malloc(sizeof(int32_t) * T * N), *y = malloc(sizeof(int32_t) * T * N),
            *z = malloc(sizeof(int32_t) * T * N);
    drive(a, r1, N, S, T, x);
    drive(b, r2, N, S, T, y);
    drive(c, r3, N, S, T, z);
    CHECK(memcmp(x, y, sizeof(int32_t) * T * N) == 0);
    CHECK(memcmp(x, z, sizeof(int32_t) * T * N) != 0);
    const int64_t P = dpdo__dqn_nparams(a);
    for (int64_t m = 0; m < N; m++)
        for (int w = 0; w < 4; w++)
            CHECK(memcmp(dpdo__dqn_params(a, m, w), dpdo__dqn_params(b, m, w),
                         (size_t)P * sizeof(double)) == 0);
    /* actions are not trivial */
    long g = 0;
    for (int i = 0; i < T * N; i++) g += x[i];
    CHECK(g > 10 && g < T * N - 10);
    /* reset restores a fresh handle bit for bit */
    dpdo_policy *f = mk("dqn", N, S);
    CHECK_EQ(dpdo_policy_reset(a, r1), DPDO_OK);
    CHECK_EQ(dpdo_policy_reset(f, r1), DPDO_OK);
    const size_t per = (size_t)(4 * P + 20 * (2 * S + 3) + S) * sizeof(double);
    for (int64_t m = 0; m < N; m++) {
        struct dpdo__dqn_agent *ga = dpdo__dqn_agent(a, m), *gf = dpdo__dqn_agent(f, m);
        CHECK(memcmp(ga->theta, gf->theta, per) == 0);
        CHECK(ga->head == gf->head && ga->count == 0 && ga->steps == 0 && ga->trains == 0 &&
              ga->has_prev == 0 && ga->prev_a == 0 && ga->init == 1 && ga->bad == 0);
    }
    drive(a, r1, N, S, T, y);
    CHECK(memcmp(x, y, sizeof(int32_t) * T * N) == 0);
    /* reset without rng: lazy init, same trajectory */
    CHECK_EQ(dpdo_policy_reset(a, NULL), DPDO_OK);
    CHECK(!dpdo__dqn_agent(a, 0)->init);
    drive(a, r1, N, S, T, y);
    CHECK(memcmp(x, y, sizeof(int32_t) * T * N) == 0);
    free(x), free(y), free(z);
    dpdo_policy_destroy(a), dpdo_policy_destroy(b), dpdo_policy_destroy(c),
        dpdo_policy_destroy(f);
    dpdo_rng_destroy(r1), dpdo_rng_destroy(r2), dpdo_rng_destroy(r3);
}

/* ---- learning sanity (a bandit whose better arm is fixed) -------------------------- */

static void bandit(int better, double discount, uint64_t rseed, int T)
{
    const int64_t S = 5; /* [x1, x2, x3, loss-like, previous action] */
    dpdo_policy *p = mk("dqn", 1, S);
    CHECK_EQ(dpdo_policy_set(p, "explore_steps", 100), DPDO_OK);
    CHECK_EQ(dpdo_policy_set(p, "discount", discount), DPDO_OK);
    dpdo_rng *rng = mkrng(rseed);
    uint64_t seed = rseed * 7 + 1;
    int32_t prev = 0;
    double rew = NAN;
    long good_late = 0;
    for (int t = 0; t < T; t++) {
        int k = t % 100;
        double st[5] = {urand(&seed) - 0.5, urand(&seed) - 0.5, urand(&seed) - 0.5,
                        0.5 + 0.2 * urand(&seed), (double)(k ? prev : 0)};
        int32_t a;
        CHECK_EQ(dpdo_policy_decide(p, 0, k, st, S, k ? rew : NAN, rng, (uint64_t)t, &a), 0);
        /* reward: better arm pays 1, the other 0, plus noise */
        rew = (a == better ? 1.0 : 0.0) + 0.1 * (urand(&seed) - 0.5);
        prev = a;
        if (k == 99) CHECK_EQ(dpdo_policy_finish(p, 0, rew, rng, (uint64_t)t), 0);
        if (t >= T - 100) good_late += a == better;
    }
    long greedy_good = 0;
    for (int i = 0; i < 200; i++) {
        double st[5] = {urand(&seed) - 0.5, urand(&seed) - 0.5, urand(&seed) - 0.5,
                        0.5 + 0.2 * urand(&seed), (double)(i & 1)};
        double q[2];
        CHECK_EQ(dpdo_policy_q_values(p, 0, st, S, q), DPDO_OK);
        greedy_good += (q[1] > q[0]) == (better == 1);
    }
    CHECK_MSG(greedy_good >= 190, "better=%d discount=%g: greedy picks it in %ld/200 states",
              better, discount, greedy_good);
    /* exploration 0.1 late: the better arm in >= ~90% of the last 100 steps */
    CHECK_MSG(good_late >= 85, "better=%d discount=%g: %ld/100 late steps", better, discount,
              good_late);
    dpdo_policy_destroy(p);
    dpdo_rng_destroy(rng);
}

static void test_learning(void)
{
    bandit(1, 0.0, 1, 400);
    bandit(0, 0.0, 2, 400);
    bandit(1, 0.5, 3, 400);
    bandit(0, 0.5, 4, 400);
    bandit(1, 0.01, 5, 400); /* the literal reading of the paper's gamma_DQ (spec E15) */
    bandit(0, 0.01, 6, 400);
    /* Not asserted: with discount 0.9 or 0.99 (the default) this linear DQN
     * does not learn the bandit within 3000 steps (docs/policy.md §6). */
}

/* ---- non-learned policies ------------------------------------------------------------- */

static void test_random(void)
{
    dpdo_policy *p = mk("random", 4, 0);
    double v;
    CHECK_EQ(dpdo_policy_get(p, "p_global", &v), DPDO_OK);
    CHECK(v == 0.5);
    CHECK_EQ(dpdo_policy_set(p, "p_global", 0.3), DPDO_OK);
    dpdo_rng *rng = mkrng(17);
    const int N = h_quick() ? 20000 : 100000;
    long cnt[4] = {0};
    for (int i = 0; i < N; i++)
        for (int m = 0; m < 4; m++) {
            int32_t a = -1;
            CHECK_EQ(dpdo_policy_decide(p, m, i % 50, NULL, 0, 0.0, rng, (uint64_t)i, &a), 0);
            cnt[m] += a;
        }
    double se = sqrt(0.3 * 0.7 / N);
    for (int m = 0; m < 4; m++) CHECK_NEAR((double)cnt[m] / N, 0.3, 4 * se);
    /* chi-square over the 4 nodes pooled into 2 cells x 4 (3+... df = 4) */
    double chi = 0;
    for (int m = 0; m < 4; m++) {
        double eg = 0.3 * N, el = 0.7 * N;
        chi += (cnt[m] - eg) * (cnt[m] - eg) / eg + ((N - cnt[m]) - el) * ((N - cnt[m]) - el) / el;
    }
    CHECK(chi < 18.47); /* chi2(4) at p = 0.001 */
    /* nodes are independent streams: the sequences differ */
    int32_t a0, a1;
    int diff = 0;
    for (int i = 0; i < 64; i++) {
        dpdo_policy_decide(p, 0, 1, NULL, 0, 0.0, rng, (uint64_t)i, &a0);
        dpdo_policy_decide(p, 1, 1, NULL, 0, 0.0, rng, (uint64_t)i, &a1);
        diff += a0 != a1;
    }
    CHECK(diff > 0);
    /* p = 0 and 1 are exact */
    CHECK_EQ(dpdo_policy_set(p, "p_global", 0), DPDO_OK);
    for (int i = 0; i < 200; i++) {
        dpdo_policy_decide(p, 0, 0, NULL, 0, NAN, rng, (uint64_t)i, &a0);
        CHECK_EQ(a0, 0);
    }
    CHECK_EQ(dpdo_policy_set(p, "p_global", 1), DPDO_OK);
    for (int i = 0; i < 200; i++) {
        dpdo_policy_decide(p, 0, 0, NULL, 0, NAN, rng, (uint64_t)i, &a0);
        CHECK_EQ(a0, 1);
    }
    CHECK_EQ(dpdo_policy_decide(p, 0, 0, NULL, 0, NAN, NULL, 0, &a0), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_policy_errmsg(p), "rng");
    CHECK_EQ(dpdo_policy_finish(p, 0, 0.0, NULL, 0), DPDO_OK);
    CHECK_EQ(dpdo_policy_reset(p, NULL), DPDO_OK);
    dpdo_policy_destroy(p);
    dpdo_rng_destroy(rng);
}

static void test_periodic_always(void)
{
    dpdo_policy *p = mk("periodic", 2, 3);
    double v;
    CHECK_EQ(dpdo_policy_get(p, "period", &v), DPDO_OK);
    CHECK(v == 2);
    CHECK_EQ(dpdo_policy_set(p, "period", 3), DPDO_OK);
    double st[3] = {0, 0, 0};
    for (int k = 0; k < 12; k++) {
        int32_t a = -1;
        CHECK_EQ(dpdo_policy_decide(p, 1, k, st, 3, 0.0, NULL, 0, &a), DPDO_OK);
        CHECK_EQ(a, (k == 2 || k == 5 || k == 8 || k == 11) ? 1 : 0); /* s = k+1 = 0 mod 3 */
    }
    CHECK_EQ(dpdo_policy_set(p, "period", 1), DPDO_OK);
    for (int k = 0; k < 5; k++) {
        int32_t a = -1;
        CHECK_EQ(dpdo_policy_decide(p, 0, k, st, 3, 0.0, NULL, 0, &a), DPDO_OK);
        CHECK_EQ(a, 1);
    }
    dpdo_policy_destroy(p);
    for (int g = 0; g < 2; g++) {
        p = mk(g ? "always-global" : "always-local", 3, 2);
        for (int k = 0; k < 20; k++) {
            int32_t a = -1;
            CHECK_EQ(dpdo_policy_decide(p, k % 3, k, (double[]){1, 2}, 2, k ? -1.0 : NAN, NULL,
                                        (uint64_t)k, &a),
                     DPDO_OK);
            CHECK_EQ(a, g);
        }
        CHECK_EQ(dpdo_policy_finish(p, 0, -1.0, NULL, 0), DPDO_OK);
        CHECK_EQ(dpdo_policy_reset(p, NULL), DPDO_OK);
        double q[2];
        CHECK_EQ(dpdo_policy_q_values(p, 0, (double[]){1, 2}, 2, q), DPDO_E_UNSUPPORTED);
        CHECK_EQ(dpdo_policy_set(p, "lr", 0.1), DPDO_E_UNSUPPORTED);
        CHECK_EQ(dpdo_policy_get(p, "p_global", &v), DPDO_E_UNSUPPORTED);
        dpdo_policy_destroy(p);
    }
}

/* ---- user types --------------------------------------------------------------------- */

struct upol {
    int decides, finishes, resets, released;
    int fail_decide, fail_finish, fail_reset, bad_action;
    double last_reward, last_state0;
    int64_t last_len, last_k;
};

static int u_decide(void *user, int64_t node, int64_t k, const double *state, int64_t len,
                    double reward, const dpdo_rng *rng, uint64_t round, int32_t *action)
{
    struct upol *u = user;
    (void)rng;
    (void)round;
    u->decides++;
    u->last_len = len;
    u->last_k = k;
    u->last_reward = reward;
    u->last_state0 = len ? state[0] : NAN;
    if (u->fail_decide) return u->fail_decide;
    *action = u->bad_action ? 7 : (int32_t)(node & 1);
    return 0;
}
static int u_finish(void *user, int64_t node, double reward, const dpdo_rng *rng, uint64_t r)
{
    struct upol *u = user;
    (void)node, (void)rng, (void)r;
    u->finishes++;
    u->last_reward = reward;
    return u->fail_finish;
}
static int u_reset(void *user)
{
    struct upol *u = user;
    u->resets++;
    return u->fail_reset;
}
static void u_release(void *user) { ((struct upol *)user)->released++; }

static void test_user(void)
{
    struct upol u = {0};
    dpdo_policy_type t = {sizeof t, "mine", u_decide, u_finish, u_reset, u_release, NULL};
    dpdo_policy *p = NULL;
    CHECK_EQ(dpdo_policy_create(&p, &t, &u, 2, 2), DPDO_OK);
    CHECK(strcmp(dpdo_policy_name(p), "mine") == 0);
    int32_t a = -1;
    CHECK_EQ(dpdo_policy_decide(p, 1, 3, (double[]){4.5, 1}, 2, -0.25, NULL, 9, &a), DPDO_OK);
    CHECK_EQ(a, 1);
    CHECK_EQ(u.decides, 1);
    CHECK_EQ(u.last_len, 2);
    CHECK_EQ(u.last_k, 3);
    CHECK(u.last_reward == -0.25 && u.last_state0 == 4.5);
    CHECK_EQ(dpdo_policy_finish(p, 1, -0.5, NULL, 9), DPDO_OK);
    CHECK_EQ(u.finishes, 1);
    CHECK_EQ(dpdo_policy_reset(p, NULL), DPDO_OK);
    CHECK_EQ(u.resets, 1);
    /* failures */
    u.fail_decide = 7;
    a = -1;
    CHECK_EQ(dpdo_policy_decide(p, 0, 0, (double[]){0, 0}, 2, NAN, NULL, 0, &a), DPDO_E_CALLBACK);
    CHECK_STR_CONTAINS(dpdo_policy_errmsg(p), "returned 7");
    CHECK_EQ(a, -1);
    u.fail_decide = 0;
    u.bad_action = 1;
    CHECK_EQ(dpdo_policy_decide(p, 0, 0, (double[]){0, 0}, 2, NAN, NULL, 0, &a), DPDO_E_CALLBACK);
    CHECK_STR_CONTAINS(dpdo_policy_errmsg(p), "action 7");
    CHECK_EQ(a, -1);
    u.bad_action = 0;
    u.fail_finish = -3;
    CHECK_EQ(dpdo_policy_finish(p, 0, 0.0, NULL, 0), DPDO_E_CALLBACK);
    CHECK_STR_CONTAINS(dpdo_policy_errmsg(p), "returned -3");
    u.fail_reset = 5;
    CHECK_EQ(dpdo_policy_reset(p, NULL), DPDO_E_CALLBACK);
    CHECK_STR_CONTAINS(dpdo_policy_errmsg(p), "returned 5");
    /* the internal reset cannot fail: the next decide reports it once */
    char err[DPDO__ERRMSG_LEN] = "";
    dpdo__policy_reset(p, NULL);
    CHECK_EQ(dpdo__policy_decide(p, 0, 0, (double[]){0, 0}, NAN, NULL, 0, &a, err),
             DPDO_E_CALLBACK);
    CHECK_STR_CONTAINS(err, "reset callback returned 5");
    CHECK_EQ(dpdo__policy_decide(p, 0, 0, (double[]){0, 0}, NAN, NULL, 0, &a, err), DPDO_OK);
    /* parameters: none */
    CHECK_EQ(dpdo_policy_set(p, "lr", 0.1), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_policy_set(p, "p_global", 0.1), DPDO_E_UNSUPPORTED);
    double v;
    CHECK_EQ(dpdo_policy_get(p, "period", &v), DPDO_E_UNSUPPORTED);
    dpdo_policy_destroy(p);
    CHECK_EQ(u.released, 1);
    /* minimal type: finish/reset/release absent */
    dpdo_policy_type t2 = {offsetof(dpdo_policy_type, finish), "min", u_decide, NULL, NULL, NULL, NULL};
    struct upol u2 = {0};
    CHECK_EQ(dpdo_policy_create(&p, &t2, &u2, 1, 0), DPDO_OK);
    CHECK_EQ(dpdo_policy_decide(p, 0, 0, NULL, 0, NAN, NULL, 0, &a), DPDO_OK);
    CHECK_EQ(dpdo_policy_finish(p, 0, 0.0, NULL, 0), DPDO_OK);
    CHECK_EQ(dpdo_policy_reset(p, NULL), DPDO_OK);
    dpdo_policy_destroy(p);
    /* a type whose struct_size cuts off finish: finish is not read */
    dpdo_policy_type t3 = {offsetof(dpdo_policy_type, finish), "cut", u_decide, u_finish, NULL,
                           NULL, NULL};
    struct upol u3 = {0};
    CHECK_EQ(dpdo_policy_create(&p, &t3, &u3, 1, 0), DPDO_OK);
    CHECK_EQ(dpdo_policy_finish(p, 0, 0.0, NULL, 0), DPDO_OK);
    CHECK_EQ(u3.finishes, 0);
    dpdo_policy_destroy(p);
    /* bad types */
    dpdo_policy_type bad = t;
    bad.struct_size = offsetof(dpdo_policy_type, decide);
    CHECK_EQ(dpdo_policy_create(&p, &bad, &u, 1, 0), DPDO_E_VERSION);
    CHECK(p == NULL);
    bad = t;
    bad.name = NULL;
    CHECK_EQ(dpdo_policy_create(&p, &bad, &u, 1, 0), DPDO_E_INVAL);
    bad.name = "";
    CHECK_EQ(dpdo_policy_create(&p, &bad, &u, 1, 0), DPDO_E_INVAL);
    bad = t;
    bad.decide = NULL;
    CHECK_EQ(dpdo_policy_create(&p, &bad, &u, 1, 0), DPDO_E_INVAL);
    bad = *dpdo_policy_type_find("random"); /* a copy of a built-in */
    CHECK_EQ(dpdo_policy_create(&p, &bad, NULL, 1, 0), DPDO_E_INVAL);
    CHECK_EQ(u.released, 1);
    /* a built-in's type object can be called like a user type, user = the handle */
    dpdo_policy *ag = mk("always-global", 1, 0);
    const dpdo_policy_type *bt = dpdo_policy_type_find("always-global");
    CHECK_EQ(bt->decide(ag, 0, 0, NULL, 0, NAN, NULL, 0, &a), 0);
    CHECK_EQ(a, 1);
    CHECK_EQ(bt->decide(ag, 5, 0, NULL, 0, NAN, NULL, 0, &a), -DPDO_E_INVAL);
    CHECK_EQ(bt->finish(ag, 0, 0.0, NULL, 0), 0);
    CHECK_EQ(bt->reset(ag), 0);
    dpdo_policy_destroy(ag);
}

/* ---- failing rng ------------------------------------------------------------------------ */

static int fail_blocks(void *user, const uint32_t key[4], const uint32_t ctr[4], uint64_t n,
                       uint32_t *out)
{
    (void)user, (void)key, (void)ctr;
    memset(out, 0, (size_t)(4 * n) * sizeof *out);
    return 13;
}

static void test_failing_rng(void)
{
    dpdo_rng_type ft = {sizeof ft, "failing", fail_blocks, NULL};
    dpdo_rng *fr = NULL;
    CHECK_EQ(dpdo_rng_create_custom(&fr, &ft, NULL, 1), DPDO_OK);
    dpdo_policy *p = mk("dqn", 1, 2);
    int32_t a = -1;
    CHECK_EQ(dpdo_policy_decide(p, 0, 0, (double[]){0, 0}, 2, NAN, fr, 0, &a), DPDO_E_CALLBACK);
    CHECK(a == -1);
    CHECK_EQ(dpdo_policy_reset(p, fr), DPDO_E_CALLBACK);
    dpdo_policy_destroy(p);
    p = mk("random", 1, 0);
    CHECK_EQ(dpdo_policy_decide(p, 0, 0, NULL, 0, NAN, fr, 0, &a), DPDO_E_CALLBACK);
    CHECK_STR_CONTAINS(dpdo_policy_errmsg(p), "13");
    CHECK(a == -1);
    dpdo_policy_destroy(p);
    dpdo_rng_destroy(fr);
}

/* ---- parameters -------------------------------------------------------------------------- */

static void test_params(void)
{
    dpdo_policy *p = mk("dqn", 2, 4);
    struct {
        const char *n;
        double v;
    } defs[] = {{"hidden", 128},      {"replay", 20},        {"batch", 10},
                {"lr", 0.01},         {"discount", 0.99},    {"target_period", 10},
                {"explore_start", 1}, {"explore_min", 0.1},  {"explore_steps", 60},
                {"adam_beta1", 0.9},  {"adam_beta2", 0.999}, {"adam_eps", 1e-8},
                {"finish_train", 1}};
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
        double v = -1;
        CHECK_EQ(dpdo_policy_get(p, defs[i].n, &v), DPDO_OK);
        CHECK_MSG(v == defs[i].v, "%s = %g", defs[i].n, v);
    }
    const struct {
        const char *n;
        double v;
    } bad[] = {{"hidden", 0},          {"hidden", 1.5},        {"hidden", 2e6},
               {"replay", 0},          {"replay", 5},          {"batch", 0},
               {"batch", 21},          {"batch", NAN},         {"lr", -1},
               {"lr", INFINITY},       {"discount", 1.5},      {"discount", NAN},
               {"target_period", 0},   {"target_period", 2.5}, {"explore_start", -0.1},
               {"explore_min", 2},     {"explore_steps", -1},  {"explore_steps", NAN},
               {"adam_beta1", 1},      {"adam_beta2", -0.1},   {"adam_eps", 0},
               {"adam_eps", INFINITY}, {"finish_train", 0.5},  {"nope", 1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = dpdo_policy_set(p, bad[i].n, bad[i].v);
        CHECK_MSG(rc == DPDO_E_INVAL, "%s = %g: %d", bad[i].n, bad[i].v, rc);
        CHECK(strlen(dpdo_policy_errmsg(p)) > 0);
    }
    CHECK_EQ(dpdo_policy_set(p, "p_global", 0.5), DPDO_E_UNSUPPORTED);
    CHECK_STR_CONTAINS(dpdo_policy_errmsg(p), "random");
    CHECK_EQ(dpdo_policy_set(p, "period", 3), DPDO_E_UNSUPPORTED);
    double v;
    CHECK_EQ(dpdo_policy_get(p, "nope", &v), DPDO_E_INVAL);
    /* unchanged after failures */
    CHECK_EQ(dpdo_policy_get(p, "batch", &v), DPDO_OK);
    CHECK(v == 10);
    /* structural set forgets; a non-structural one keeps the learned state */
    dpdo_rng *rng = mkrng(1);
    drive(p, rng, 2, 4, 30, (int32_t[60]){0});
    CHECK(dpdo__dqn_agent(p, 0)->trains > 0);
    CHECK_EQ(dpdo_policy_set(p, "lr", 0.02), DPDO_OK);
    CHECK(dpdo__dqn_agent(p, 0)->trains > 0);
    CHECK_EQ(dpdo_policy_set(p, "hidden", 128), DPDO_OK); /* same value: nothing */
    CHECK(dpdo__dqn_agent(p, 0)->trains > 0);
    CHECK_EQ(dpdo_policy_set(p, "hidden", 16), DPDO_OK);
    CHECK_EQ(dpdo__dqn_nparams(p), 16 * 4 + 3 * 16 + 2);
    CHECK(dpdo__dqn_agent(p, 0)->trains == 0 && !dpdo__dqn_agent(p, 0)->init);
    CHECK_EQ(dpdo_policy_set(p, "replay", 50), DPDO_OK);
    CHECK_EQ(dpdo_policy_set(p, "batch", 50), DPDO_OK);
    CHECK_EQ(dpdo_policy_set(p, "replay", 49), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_policy_errmsg(p), "batch");
    drive(p, rng, 2, 4, 60, (int32_t[120]){0});
    /* node 1: 39 pushes + 1 at finish (t = 39), then t = 41.. push: count 50 at t = 50 */
    CHECK_EQ(dpdo__dqn_agent(p, 1)->trains, 10);
    dpdo_policy_destroy(p);
    dpdo_rng_destroy(rng);
}

/* ---- bad input for every public function ----------------------------------------------- */

static void test_bad_input(void)
{
    const dpdo_policy_type *dq = dpdo_policy_type_find("dqn");
    dpdo_policy *p = (dpdo_policy *)1;
    CHECK_EQ(dpdo_policy_create(NULL, dq, NULL, 1, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_create(&p, NULL, NULL, 1, 3), DPDO_E_INVAL);
    CHECK(p == NULL);
    CHECK_EQ(dpdo_policy_create(&p, dq, NULL, 0, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_create(&p, dq, NULL, -1, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_create(&p, dq, NULL, INT64_C(1) << 32, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_create(&p, dq, NULL, 1, -1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_create(&p, dq, NULL, 1, 0), DPDO_E_INVAL); /* dqn needs a state */
    int dummy;
    CHECK_EQ(dpdo_policy_create(&p, dq, &dummy, 1, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_create(&p, dq, NULL, INT64_C(1) << 31, INT64_C(1) << 40),
             DPDO_E_NOMEM); /* overflow of the sizes */
    CHECK(p == NULL);
    dpdo_policy_destroy(NULL);
    CHECK(strcmp(dpdo_policy_errmsg(NULL), "dpdo_policy_errmsg: p is NULL") == 0);
    CHECK(strcmp(dpdo_policy_name(NULL), "(null)") == 0);
    double v, q[2], st[3] = {0, 0, 0};
    int32_t a = -1;
    CHECK_EQ(dpdo_policy_set(NULL, "lr", 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_get(NULL, "lr", &v), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_decide(NULL, 0, 0, st, 3, NAN, NULL, 0, &a), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_finish(NULL, 0, 0, NULL, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_reset(NULL, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_q_values(NULL, 0, st, 3, q), DPDO_E_INVAL);
    p = mk("dqn", 2, 3);
    CHECK(strcmp(dpdo_policy_errmsg(p), "") == 0);
    CHECK(strcmp(dpdo_policy_name(p), "dqn") == 0);
    dpdo_rng *rng = mkrng(2);
    CHECK_EQ(dpdo_policy_set(p, NULL, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_get(p, NULL, &v), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_get(p, "lr", NULL), DPDO_E_INVAL);
    /* decide */
    CHECK_EQ(dpdo_policy_decide(p, 0, 0, st, 3, NAN, rng, 0, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_decide(p, 2, 0, st, 3, NAN, rng, 0, &a), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_policy_errmsg(p), "node 2");
    CHECK_EQ(dpdo_policy_decide(p, -1, 0, st, 3, NAN, rng, 0, &a), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_decide(p, 0, -1, st, 3, NAN, rng, 0, &a), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_decide(p, 0, 0, st, 2, NAN, rng, 0, &a), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_policy_errmsg(p), "state_len");
    CHECK_EQ(dpdo_policy_decide(p, 0, 0, NULL, 3, NAN, rng, 0, &a), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_decide(p, 0, 0, (double[]){0, NAN, 0}, 3, NAN, rng, 0, &a),
             DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_policy_errmsg(p), "state[1]");
    CHECK_EQ(dpdo_policy_decide(p, 0, 0, (double[]){0, 0, INFINITY}, 3, NAN, rng, 0, &a),
             DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_decide(p, 0, 1, st, 3, NAN, rng, 0, &a), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_policy_errmsg(p), "reward");
    CHECK_EQ(dpdo_policy_decide(p, 0, 1, st, 3, INFINITY, rng, 0, &a), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_decide(p, 0, 0, st, 3, NAN, NULL, 0, &a), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_decide(p, 0, 0, st, 3, NAN, rng, UINT64_C(1) << 48, &a), DPDO_E_INVAL);
    CHECK_EQ(a, -1);
    CHECK_EQ(dpdo__dqn_agent(p, 0)->steps, 0); /* nothing happened */
    /* finish */
    CHECK_EQ(dpdo_policy_finish(p, 2, 0, rng, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_finish(p, 0, NAN, rng, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_finish(p, 0, 0, rng, 0), DPDO_OK); /* nothing pending */
    /* finish that would train needs an rng */
    CHECK_EQ(dpdo_policy_set(p, "batch", 1), DPDO_OK);
    CHECK_EQ(dpdo_policy_decide(p, 0, 0, st, 3, NAN, rng, 0, &a), DPDO_OK);
    CHECK_EQ(dpdo_policy_finish(p, 0, 0, NULL, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo__dqn_agent(p, 0)->count, 0);
    CHECK_EQ(dpdo_policy_finish(p, 0, 0, rng, UINT64_C(1) << 48), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_finish(p, 0, 0, rng, 0), DPDO_OK);
    CHECK_EQ(dpdo__dqn_agent(p, 0)->count, 1);
    /* q_values */
    CHECK_EQ(dpdo_policy_q_values(p, 0, st, 3, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_q_values(p, 5, st, 3, q), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_q_values(p, 0, st, 4, q), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_q_values(p, 0, NULL, 3, q), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_q_values(p, 0, (double[]){NAN, 0, 0}, 3, q), DPDO_E_INVAL);
    CHECK_EQ(dpdo_policy_q_values(p, 1, st, 3, q), DPDO_E_STATE);
    CHECK_EQ(dpdo_policy_q_values(p, 0, st, 3, q), DPDO_OK);
    /* divergence: a huge state blows the weights up -> E_NUMERIC, sticky until reset */
    CHECK_EQ(dpdo_policy_set(p, "lr", 1e300), DPDO_OK);
    double big[3] = {1e300, -1e300, 1e300};
    int rc = DPDO_OK;
    for (int k = 0; k < 5 && rc == DPDO_OK; k++)
        rc = dpdo_policy_decide(p, 0, k, big, 3, k ? 1e300 : NAN, rng, (uint64_t)k, &a);
    CHECK_EQ(rc, DPDO_E_NUMERIC);
    CHECK_EQ(dpdo_policy_decide(p, 0, 0, st, 3, NAN, rng, 9, &a), DPDO_E_NUMERIC);
    CHECK_EQ(dpdo_policy_reset(p, rng), DPDO_OK);
    CHECK_EQ(dpdo_policy_set(p, "lr", 0.01), DPDO_OK);
    CHECK_EQ(dpdo_policy_decide(p, 0, 0, st, 3, NAN, rng, 9, &a), DPDO_OK);
    dpdo_policy_destroy(p);
    dpdo_rng_destroy(rng);
}

/* ---- out of memory and no allocation per step ------------------------------------------- */

static void test_oom(void)
{
    for (const dpdo_policy_type *t = dpdo_policy_type_next(NULL); t;
         t = dpdo_policy_type_next(t)) {
        int ok = 0;
        for (long k = 0; k < 50 && !ok; k++) {
            dpdo_policy *p = (dpdo_policy *)1;
            dpdo__fault_arm(k);
            int rc = dpdo_policy_create(&p, t, NULL, 3, 5);
            dpdo__fault_arm(-1);
            if (rc == DPDO_OK) {
                ok = 1;
                if (strcmp(t->name, "dqn") == 0) {
                    for (long j = 0; j < 20; j++) {
                        dpdo__fault_arm(j);
                        int r2 = dpdo_policy_set(p, "hidden", 9);
                        dpdo__fault_arm(-1);
                        if (r2 == DPDO_OK) break;
                        CHECK_EQ(r2, DPDO_E_NOMEM);
                        double h;
                        dpdo_policy_get(p, "hidden", &h);
                        CHECK(h == 128);
                        CHECK_EQ(dpdo__dqn_nparams(p), 128 * 5 + 3 * 128 + 2);
                    }
                    double h;
                    dpdo_policy_get(p, "hidden", &h);
                    CHECK(h == 9);
                }
                dpdo_policy_destroy(p);
            } else {
                CHECK_EQ(rc, DPDO_E_NOMEM);
                CHECK(p == NULL);
            }
        }
        CHECK_MSG(ok, "%s: create never succeeded", t->name);
    }
    struct upol u = {0};
    dpdo_policy_type ut = {sizeof ut, "mine", u_decide, u_finish, u_reset, u_release, NULL};
    int ok = 0;
    for (long k = 0; k < 10 && !ok; k++) {
        dpdo_policy *p = NULL;
        dpdo__fault_arm(k);
        int rc = dpdo_policy_create(&p, &ut, &u, 2, 1);
        dpdo__fault_arm(-1);
        if (rc == DPDO_OK) {
            ok = 1;
            dpdo_policy_destroy(p);
        } else {
            CHECK_EQ(rc, DPDO_E_NOMEM);
            CHECK_EQ(u.released, 0);
        }
    }
    CHECK(ok);
    CHECK_EQ(u.released, 1);
}

static void test_no_alloc(void)
{
    dpdo_rng *rng = mkrng(8);
    for (const dpdo_policy_type *t = dpdo_policy_type_next(NULL); t;
         t = dpdo_policy_type_next(t)) {
        dpdo_policy *p = mk(t->name, 2, 6);
        char err[DPDO__ERRMSG_LEN];
        double st[6] = {0.1, 0.2, -0.3, 0.4, 0.5, 0};
        int bad = 0;
        dpdo__fault_arm(0);
        for (int k = 0; k < 30; k++) {
            int32_t a;
            st[5] = k & 1;
            bad |= dpdo__policy_decide(p, k & 1, k / 2, st, k >= 2 ? -0.5 : NAN, rng,
                                       (uint64_t)k, &a, err);
            bad |= dpdo_policy_decide(p, k & 1, k / 2, st, 6, -0.5, rng, (uint64_t)k + 100, &a);
        }
        bad |= dpdo__policy_finish(p, 0, -0.1, rng, 77, err);
        bad |= dpdo_policy_finish(p, 1, -0.1, rng, 78);
        dpdo__policy_reset(p, rng);
        bad |= dpdo_policy_reset(p, NULL);
        double q[2];
        if (strcmp(t->name, "dqn") == 0) {
            int32_t a;
            bad |= dpdo_policy_decide(p, 0, 0, st, 6, NAN, rng, 5, &a);
            bad |= dpdo_policy_q_values(p, 0, st, 6, q);
        }
        long n = dpdo__fault_allocs();
        dpdo__fault_arm(-1);
        CHECK_MSG(!bad, "%s: %s", t->name, dpdo_policy_errmsg(p));
        CHECK_MSG(n == 0, "%s: %ld allocations", t->name, n);
        if (strcmp(t->name, "dqn") == 0) CHECK(dpdo__dqn_agent(p, 1)->trains == 0);
        dpdo_policy_destroy(p);
    }
    dpdo_rng_destroy(rng);
}

int main(void)
{
    RUN(test_types);
    RUN(test_xavier);
    RUN(test_forward);
    RUN(test_backprop_fd);
    RUN(test_adam);
    RUN(test_exploration);
    RUN(test_replay);
    RUN(test_forged_replay_action);
    RUN(test_target);
    RUN(test_train_reference);
    RUN(test_determinism_reset);
    RUN(test_learning);
    RUN(test_random);
    RUN(test_periodic_always);
    RUN(test_user);
    RUN(test_failing_rng);
    RUN(test_params);
    RUN(test_bad_input);
    RUN(test_oom);
    RUN(test_no_alloc);
    return h_finish();
}
