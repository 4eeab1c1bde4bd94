/* SPDX-License-Identifier: BSD-3-Clause */
/* DP-WOR-SGD mini-batch node steps per second (issue 8), with and without the
 * deep-Q Local/Global controller: M = 10 nodes, d = 50 (the Fashion-MNIST /
 * MNIST size after PCA), b = 50, q = 6000 rows per node (120 node steps per
 * pass, the paper's V-A scale), logistic loss, Theorem 2 noise (PAPER mode,
 * eps = 1, delta = 1e-5). A run is one pass of every node (1200 node steps);
 * runs are repeated (reset between them: the DQN starts again from its Xavier
 * initialisation, as in a fresh experiment) for >= 1 s per case.
 *
 * Cases: "always-global" (the paper's DP-Fully collaborative: a Global step,
 * i.e. gradient + noise + averaging, at every node step), "always-local"
 * (gradient only), "dqn" (Algorithm 2: state loss + reward loss + one Adam
 * training step on a mini-batch of 10 transitions of the (d+2)-128-2 network
 * + the decision, at every node step), and the with-replacement baseline
 * "dp-sgd-wr" (one node, b rows, noise per round). One line per figure:
 *     wor_<case>_steps_per_s       node steps per second
 *     wor_<case>_us_per_step       microseconds per node step
 *     wor_dqn_overhead_us_per_step dqn minus always-global, per step
 * Rigorous-free: the Theorem 2 sigma needs no accountant calibration, and the
 * one ledger charge per node per pass is negligible. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dpdo/dpdo.h"

enum { M = 10, D = 50, B = 50, Q = 6000 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct setup {
    dpdo_dataset *ds;
    dpdo_loss *loss;
    dpdo_shard *sh[M];
    dpdo_node *nodes[M];
    dpdo_regularizer *reg;
    dpdo_ledger *led;
    dpdo_accountant *acc;
} setup;

static int setup_init(setup *s)
{
    memset(s, 0, sizeof *s);
    dpdo_generate_options go;
    dpdo_generate_options_init(&go, sizeof go);
    go.n = (int64_t)M * Q;
    go.d = D;
    go.normalize_rows = 1;
    if (dpdo_dataset_create(&s->ds) || dpdo_dataset_generate(s->ds, "epsilon-like", &go)) {
        fprintf(stderr, "generate: %s\n", dpdo_dataset_errmsg(s->ds));
        return 1;
    }
    if (dpdo_loss_create(&s->loss, dpdo_loss_type_find("logistic"), NULL, D)) return 1;
    for (int i = 0; i < M; i++)
        if (dpdo_shard_create_range(&s->sh[i], s->ds, (int64_t)i * Q, Q) ||
            dpdo_node_create(&s->nodes[i], s->sh[i], s->loss, 1.0))
            return 1;
    double lam = 1e-4;
    if (dpdo_regularizer_create(&s->reg, dpdo_regularizer_type_find("l2"), NULL, D, &lam, 1)) return 1;
    if (dpdo_ledger_create(&s->led, M) ||
        dpdo_accountant_create(&s->acc, dpdo_accountant_type_find("rdp"), NULL, s->led, NULL))
        return 1;
    return 0;
}

static void setup_free(setup *s)
{
    dpdo_accountant_destroy(s->acc);
    dpdo_ledger_destroy(s->led);
    dpdo_regularizer_destroy(s->reg);
    for (int i = 0; i < M; i++) {
        dpdo_node_destroy(s->nodes[i]);
        dpdo_shard_destroy(s->sh[i]);
    }
    dpdo_loss_destroy(s->loss);
    dpdo_dataset_destroy(s->ds);
}

/* Node steps per second of `type` with `policy` ("" for the baseline). */
static double run_case(setup *s, const char *type, const char *policy)
{
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = DPDO_NOISE_PAPER;
    o.max_rounds = 1000000;
    o.batch = B;
    o.step_size = 0.1;
    o.epsilon = 1.0;
    o.delta = 1e-5;
    o.seed = 7;
    dpdo_algorithm *a = NULL;
    dpdo_policy *pol = NULL;
    double rate = -1;
    if (dpdo_algorithm_create(&a, dpdo_algorithm_type_find(type)) ||
        dpdo_algorithm_setup(a, s->nodes, M, NULL, s->reg, s->acc, &o)) {
        fprintf(stderr, "%s: %s\n", type, dpdo_algorithm_errmsg(a));
        goto out;
    }
    if (*policy) {
        if (dpdo_policy_create(&pol, dpdo_policy_type_find(policy), NULL, M, D + 2)) goto out;
        if (!strcmp(policy, "dqn") && dpdo_policy_set(pol, "explore_steps", (double)Q / (2.0 * B))) goto out;
        if (dpdo_algorithm_set_policy(a, pol)) {
            fprintf(stderr, "%s: %s\n", policy, dpdo_algorithm_errmsg(a));
            goto out;
        }
    }
    if (dpdo_algorithm_prepare(a)) {
        fprintf(stderr, "%s/%s: %s\n", type, policy, dpdo_algorithm_errmsg(a));
        goto out;
    }
    /* one warm-up run, then whole runs (reset between) for >= 1 s */
    int64_t rounds = 0, steps = 0;
    int is_wor = !strcmp(type, "dp-wor-sgd");
    if (dpdo_algorithm_run(a, 0, &rounds) != DPDO_DONE) {
        fprintf(stderr, "%s/%s: %s\n", type, policy, dpdo_algorithm_errmsg(a));
        goto out;
    }
    double t0 = now(), el;
    do {
        if (dpdo_algorithm_reset(a) || dpdo_algorithm_run(a, 0, &rounds) != DPDO_DONE) {
            fprintf(stderr, "%s/%s: %s\n", type, policy, dpdo_algorithm_errmsg(a));
            goto out;
        }
        steps += is_wor ? rounds * M : rounds; /* S2: every node steps once per round */
        el = now() - t0;
    } while (el < 1.0);
    rate = (double)steps / el;
out:
    dpdo_algorithm_destroy(a);
    dpdo_policy_destroy(pol);
    dpdo_ledger_reset(s->led);
    return rate;
}

int main(void)
{
    setup s;
    if (setup_init(&s)) return 1;
    static const struct {
        const char *label, *type, *policy;
    } CASES[] = {{"always_global", "dp-wor-sgd", "always-global"},
                 {"always_local", "dp-wor-sgd", "always-local"},
                 {"dqn", "dp-wor-sgd", "dqn"},
                 {"sgd_wr", "dp-sgd-wr", ""}};
    double rate[4];
    int rc = 0;
    printf("wor_setup M=%d d=%d b=%d q=%d steps_per_pass=%d\n", M, D, B, Q, M * (Q / B));
    for (int k = 0; k < 4; k++) {
        rate[k] = run_case(&s, CASES[k].type, CASES[k].policy);
        if (rate[k] <= 0) {
            rc = 1;
            continue;
        }
        printf("wor_%s_steps_per_s %.0f\n", CASES[k].label, rate[k]);
        printf("wor_%s_us_per_step %.2f\n", CASES[k].label, 1e6 / rate[k]);
    }
    if (rate[0] > 0 && rate[2] > 0) {
        printf("wor_dqn_overhead_us_per_step %.2f\n", 1e6 / rate[2] - 1e6 / rate[0]);
        printf("wor_dqn_slowdown %.2f\n", rate[0] / rate[2]);
    }
    setup_free(&s);
    return rc;
}
