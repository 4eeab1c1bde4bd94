/* SPDX-License-Identifier: BSD-3-Clause */
/* The policy type's state hook (dpdo_policy_type.state, Since 0.3): a user policy with the hook
 * is checkpointable -- a DP-WOR-SGD run saved mid-way and resumed on a fresh algorithm and a
 * fresh policy ends bit-identical to the uninterrupted run, with the policy's learned state
 * restored (without it the decisions after the load differ); a type without the hook is refused
 * (DPDO_E_UNSUPPORTED), a failing hook gives DPDO_E_CALLBACK, and io->fail in the CHECK pass
 * refuses the file (DPDO_E_FORMAT) before anything is installed. Before 0.3 every user policy
 * was refused. */
#include "dpdo/checkpoint.h"
#include "dpdo/dpdo.h"
#include "fixture.h"
#include "harness.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { N = 4, Q = 24, D = 5, T = 14 };

/* A policy that learns a little: per node a decision count and the sum of the rewards seen; it
 * goes GLOBAL when the count is 2 mod 3 or the reward sum is above the node's running mean. */
typedef struct learner {
    int64_t count[N];
    double score[N];
    int fail_state; /* the hook returns this when non-zero */
    int bad_check;  /* the hook calls io->fail in the CHECK pass */
} learner;

static int l_decide(void *user, int64_t node, int64_t k, const double *state, int64_t len,
                    double reward, const dpdo_rng *rng, uint64_t round, int32_t *action)
{
    (void)k, (void)state, (void)len, (void)rng, (void)round;
    learner *L = user;
    if (isfinite(reward)) L->score[node] += reward;
    int64_t c = L->count[node]++;
    *action = (c % 3 == 2 || L->score[node] > (double)c * 0.1) ? DPDO_ACTION_GLOBAL
                                                                : DPDO_ACTION_LOCAL;
    return 0;
}

static int l_state(void *user, const struct dpdo_state_io *io)
{
    learner *L = user;
    if (L->fail_state) return L->fail_state;
    io->i64(io->ctx, "learner counts", L->count, N, 0, INT64_MAX);
    if (io->f64(io->ctx, "learner scores", L->score, N)) return 0;
    if (L->bad_check && io->mode == DPDO_STATE_CHECK) io->fail(io->ctx, "learner: planted refusal");
    return 0;
}

static const dpdo_policy_type WITH_HOOK = {sizeof(dpdo_policy_type), "learner", l_decide, NULL,
                                           NULL, NULL, l_state};
static const dpdo_policy_type NO_HOOK = {sizeof(dpdo_policy_type), "learner-no-hook", l_decide,
                                         NULL, NULL, NULL, NULL};

static double X[N * Q * D], Y[N * Q];
static dpdo_dataset *ds;
static dpdo_loss *loss;
static dpdo_shard *sh[N];
static dpdo_node *nodes[N];
static dpdo_network *net;

static void fx_make(void)
{
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < N * Q; i++) {
        for (int k = 0; k < D; k++)
            X[i * D + k] = (h_urand(&s) * 2 - 1) / sqrt((double)D);
        Y[i] = h_urand(&s) < 0.5 ? -1 : 1;
    }
    tfx_nodes_make(X, Y, N, Q, D, "logistic", &ds, &loss, sh, nodes);
    CHECK_EQ(dpdo_network_create(&net), DPDO_OK);
    CHECK_EQ(dpdo_network_set_complete(net, N), DPDO_OK);
}

typedef struct run {
    dpdo_ledger *led;
    dpdo_accountant *acc;
    dpdo_policy *pol;
    dpdo_algorithm *a;
} run;

static void run_make(run *r, const dpdo_policy_type *t, learner *L)
{
    memset(r, 0, sizeof *r);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    o.seed = 20;
    o.max_rounds = T;
    o.epsilon = 4.0;
    o.batch = 2;
    o.step_size = 0.5;
    CHECK_EQ(dpdo_ledger_create(&r->led, N), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&r->acc, dpdo_accountant_type_find("rdp"), NULL, r->led, NULL),
             DPDO_OK);
    CHECK_EQ(dpdo_algorithm_create(&r->a, dpdo_algorithm_type_find("dp-wor-sgd")), DPDO_OK);
    int rc = dpdo_algorithm_setup(r->a, nodes, N, net, NULL, r->acc, &o);
    CHECK_MSG(rc == DPDO_OK, "setup: %s", dpdo_algorithm_errmsg(r->a));
    CHECK_EQ(dpdo_policy_create(&r->pol, t, L, N, D + 2), DPDO_OK);
    rc = dpdo_algorithm_set_policy(r->a, r->pol);
    CHECK_MSG(rc == DPDO_OK, "set_policy: %s", dpdo_algorithm_errmsg(r->a));
}

static void run_free(run *r)
{
    dpdo_algorithm_destroy(r->a);
    dpdo_policy_destroy(r->pol);
    dpdo_accountant_destroy(r->acc);
    dpdo_ledger_destroy(r->led);
}

/* up to n rounds (n < 0: to the end); the number run */
static int steps(run *r, int n)
{
    int i = 0;
    for (; n < 0 || i < n; i++) {
        int rc = dpdo_algorithm_step(r->a);
        if (rc == DPDO_DONE) break;
        CHECK_MSG(rc == DPDO_ROUND, "step: %d %s", rc, dpdo_algorithm_errmsg(r->a));
        if (rc != DPDO_ROUND) break;
    }
    return i;
}

static void outputs(run *r, double *x)
{
    for (int i = 0; i < N; i++)
        CHECK_EQ(dpdo_algorithm_get_output(r->a, i, x + i * D, D), DPDO_OK);
}

static char path[64];

static void test_user_policy_resumes_bit_identical(void)
{
    learner L0 = {0}, L1 = {0}, L2 = {0};
    run a, b, c;
    double xa[N * D], xc[N * D];
    run_make(&a, &WITH_HOOK, &L0); /* uninterrupted */
    const int R = steps(&a, -1), K = R / 2;
    CHECK_MSG(R >= 4, "only %d rounds", R);
    outputs(&a, xa);
    run_make(&b, &WITH_HOOK, &L1); /* saved at round K */
    steps(&b, K);
    int rc = dpdo_algorithm_save(b.a, path, NULL);
    CHECK_MSG(rc == DPDO_OK, "save: %s", dpdo_algorithm_errmsg(b.a));
    run_make(&c, &WITH_HOOK, &L2); /* a fresh policy: its state comes from the file */
    rc = dpdo_algorithm_load(c.a, path, NULL);
    CHECK_MSG(rc == DPDO_OK, "load: %s", dpdo_algorithm_errmsg(c.a));
    for (int i = 0; i < N; i++) {
        CHECK_EQ(L2.count[i], L1.count[i]);
        CHECK(memcmp(&L2.score[i], &L1.score[i], sizeof(double)) == 0);
    }
    CHECK_EQ(steps(&c, -1), R - K);
    outputs(&c, xc);
    CHECK(memcmp(xa, xc, sizeof xa) == 0);
    for (int i = 0; i < N; i++) {
        CHECK_EQ(L2.count[i], L0.count[i]);
        CHECK(memcmp(&L2.score[i], &L0.score[i], sizeof(double)) == 0);
    }
    /* without the restored state the run differs (the test can fail) */
    learner L3 = {0};
    run d;
    run_make(&d, &WITH_HOOK, &L3);
    steps(&d, R - K);
    CHECK(L3.count[0] != L0.count[0]);
    run_free(&a), run_free(&b), run_free(&c), run_free(&d);
}

static void test_refusals(void)
{
    learner L = {0};
    run r;
    run_make(&r, &NO_HOOK, &L);
    steps(&r, 2);
    CHECK_EQ(dpdo_algorithm_save(r.a, path, NULL), DPDO_E_UNSUPPORTED);
    CHECK(strstr(dpdo_algorithm_errmsg(r.a), "state hook") != NULL);
    run_free(&r);
    learner F = {.fail_state = 7};
    run_make(&r, &WITH_HOOK, &F);
    steps(&r, 2);
    CHECK_EQ(dpdo_algorithm_save(r.a, path, NULL), DPDO_E_CALLBACK);
    CHECK(strstr(dpdo_algorithm_errmsg(r.a), "state callback returned 7") != NULL);
    run_free(&r);
    learner G = {0}, B = {.bad_check = 1};
    run_make(&r, &WITH_HOOK, &G);
    steps(&r, 2);
    CHECK_EQ(dpdo_algorithm_save(r.a, path, NULL), DPDO_OK);
    run_free(&r);
    run_make(&r, &WITH_HOOK, &B);
    CHECK_EQ(dpdo_algorithm_load(r.a, path, NULL), DPDO_E_FORMAT);
    CHECK(strstr(dpdo_algorithm_errmsg(r.a), "planted refusal") != NULL);
    CHECK_EQ(B.count[0], 0); /* nothing installed */
    run_free(&r);
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/dpdo-test-pstate-%ld.ckpt", (long)getpid());
    fx_make();
    RUN(test_user_policy_resumes_bit_identical);
    RUN(test_refusals);
    unlink(path);
    dpdo_network_destroy(net);
    tfx_nodes_free(N, ds, loss, sh, nodes);
    return h_finish();
}
