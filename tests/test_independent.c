/* SPDX-License-Identifier: BSD-3-Clause */
/* Independent handles in independent threads share no state: two threads each build their own
 * problem (dataset, loss, shards, nodes, network, ledger, accountant) and run DP-DDA (matching
 * on a ring: the edge-activation probabilities use log-gamma), DO-ADP, DP-WOR-SGD and Fed-PLT
 * (uniform sampler: the binomial quantile of the planned releases uses log-gamma) with the
 * default noise mode, so each prepare calibrates sigma with its accountant
 * (dpdo_accountant_calibrate_sigma). Every output, rigorous epsilon and round count must be
 * bit-identical to the same runs done one after the other on the main thread.
 *
 * Under ThreadSanitizer (`make check-tsan`) this is the test that would show a data race between
 * independent handles; C's lgamma wrote the global `signgam` from both threads before the
 * library called lgamma_r (lib/core/core.c, dpdo__lgamma). The log-gamma itself is checked
 * here too: dpdo__lgamma gives lgamma's bits, and the portable fallback used where the C library
 * has no lgamma_r agrees with it to 1e-14 (1 + |lgamma|). */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "dpdo/dpdo.h"
#include "dpdo/solver.h"
#include "core/core_impl.h"

enum { N = 6, Q = 50, D = 5, NTYPES = 4, ROUNDS = 40 };
static const char *const TYPES[NTYPES] = {"dp-dda", "do-adp", "dp-wor-sgd", "fed-plt"};

typedef struct outcome {
    int rc;             /* DPDO_OK, or the first failing call's status */
    char msg[256];      /* its message */
    double x[NTYPES][D]; /* the outputs */
    double eps[NTYPES];  /* rigorous epsilon of all nodes */
    double sigma[NTYPES];
    int64_t rounds[NTYPES];
} outcome;

typedef struct job {
    uint64_t seed; /* data and run seed */
    int reverse;   /* run the types last to first */
    outcome out;
} job;

#define TRY(call, h, errmsg)                                                                       \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != DPDO_OK && rc_ != DPDO_DONE) {                                                  \
            o->rc = rc_;                                                                           \
            snprintf(o->msg, sizeof o->msg, "%s: %s: %s", TYPES[t], #call, (h) ? errmsg(h) : "");   \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

/* one run of type t on the job's own problem; every handle is the thread's own */
static void run_type(job *j, int t, const double *X, const double *Y)
{
    outcome *o = &j->out;
    dpdo_dataset *ds = NULL;
    dpdo_loss *loss = NULL;
    dpdo_shard *sh[N] = {0};
    dpdo_node *nodes[N] = {0};
    dpdo_network *net = NULL;
    dpdo_ledger *led = NULL;
    dpdo_accountant *acc = NULL;
    dpdo_solver *sv = NULL;
    dpdo_compressor *comp = NULL;
    dpdo_regularizer *reg = NULL;
    dpdo_algorithm *a = NULL;
    int fed = strcmp(TYPES[t], "fed-plt") == 0, adp = strcmp(TYPES[t], "do-adp") == 0;
    TRY(dpdo_dataset_create(&ds), ds, dpdo_dataset_errmsg);
    TRY(dpdo_dataset_set_dense(ds, N * Q, D, X, Y, DPDO_COPY), ds, dpdo_dataset_errmsg);
    TRY(dpdo_loss_create(&loss, dpdo_loss_type_find("logistic"), NULL, D), loss, dpdo_loss_errmsg);
    for (int i = 0; i < N; i++) {
        TRY(dpdo_shard_create_range(&sh[i], ds, (int64_t)i * Q, Q), sh[i], dpdo_shard_errmsg);
        TRY(dpdo_node_create(&nodes[i], sh[i], loss, 1.0), nodes[i], dpdo_node_errmsg);
    }
    TRY(dpdo_network_create(&net), net, dpdo_network_errmsg);
    TRY(dpdo_network_set_ring(net, N), net, dpdo_network_errmsg);
    double lam = 1e-3;
    TRY(dpdo_regularizer_create(&reg, dpdo_regularizer_type_find("l2"), NULL, D, &lam, 1), reg,
        dpdo_regularizer_errmsg);
    TRY(dpdo_ledger_create(&led, N), led, dpdo_ledger_errmsg);
    TRY(dpdo_accountant_create(&acc, dpdo_accountant_type_find("rdp"), NULL, led, NULL), acc,
        dpdo_accountant_errmsg);
    TRY(dpdo_algorithm_create(&a, dpdo_algorithm_type_find(TYPES[t])), NULL, dpdo_algorithm_errmsg);
    dpdo_algorithm_options opt;
    dpdo_algorithm_options_init(&opt, sizeof opt);
    opt.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    opt.seed = j->seed;
    opt.max_rounds = ROUNDS;
    opt.epsilon = 2.0; /* the default noise mode, DPDO_NOISE_RIGOROUS: sigma calibrated in prepare */
    if (adp) opt.step_size = 0.01;
    TRY(dpdo_algorithm_setup(a, nodes, N, fed ? NULL : net, reg, acc, &opt), a, dpdo_algorithm_errmsg);
    if (adp) {
        TRY(dpdo_compressor_create(&comp, dpdo_compressor_type_find("top-k"), NULL, D), comp,
            dpdo_compressor_errmsg);
        TRY(dpdo_compressor_set_k(comp, 2), comp, dpdo_compressor_errmsg);
        TRY(dpdo_algorithm_set_compressor(a, comp), a, dpdo_algorithm_errmsg);
    }
    if (fed) {
        TRY(dpdo_solver_create(&sv, dpdo_solver_type_find("noisy-gd"), NULL, D), sv, dpdo_solver_errmsg);
        TRY(dpdo_solver_set(sv, "step", 0.4), sv, dpdo_solver_errmsg);
        TRY(dpdo_algorithm_set_solver(a, sv), a, dpdo_algorithm_errmsg);
        TRY(dpdo_algorithm_set_int(a, DPDO_PARAM_FED_EPOCHS, 2), a, dpdo_algorithm_errmsg);
        TRY(dpdo_algorithm_set_int(a, DPDO_PARAM_FED_SAMPLER, DPDO_FED_SAMPLER_UNIFORM), a, dpdo_algorithm_errmsg);
        TRY(dpdo_algorithm_set_int(a, DPDO_PARAM_FED_ACTIVE, 3), a, dpdo_algorithm_errmsg);
    }
    TRY(dpdo_algorithm_prepare(a), a, dpdo_algorithm_errmsg);
    TRY(dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &o->sigma[t]), a, dpdo_algorithm_errmsg);
    TRY(dpdo_algorithm_run(a, 0, &o->rounds[t]), a, dpdo_algorithm_errmsg);
    TRY(dpdo_algorithm_get_output(a, DPDO_NODE_ALL, o->x[t], D), a, dpdo_algorithm_errmsg);
    int32_t valid = 0;
    TRY(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &o->eps[t], NULL, &valid), a,
        dpdo_algorithm_errmsg);
done:
    dpdo_algorithm_destroy(a);
    dpdo_solver_destroy(sv);
    dpdo_compressor_destroy(comp);
    dpdo_accountant_destroy(acc);
    dpdo_ledger_destroy(led);
    dpdo_regularizer_destroy(reg);
    dpdo_network_destroy(net);
    for (int i = 0; i < N; i++) dpdo_node_destroy(nodes[i]), dpdo_shard_destroy(sh[i]);
    dpdo_loss_destroy(loss);
    dpdo_dataset_destroy(ds);
}

static void *job_main(void *arg)
{
    job *j = arg;
    static const double w[D] = {1.0, -0.5, 0.25, 0.0, 0.75};
    double X[N * Q * D], Y[N * Q];
    uint64_t st = j->seed;
    for (int i = 0; i < N * Q; i++) {
        double m = 0;
        for (int k = 0; k < D; k++) m += w[k] * (X[i * D + k] = 2.0 * h_urand(&st) - 1.0);
        Y[i] = m + 0.3 * (h_urand(&st) - 0.5) >= 0 ? 1 : -1;
    }
    memset(&j->out, 0, sizeof j->out);
    for (int k = 0; k < NTYPES && j->out.rc == DPDO_OK; k++) run_type(j, j->reverse ? NTYPES - 1 - k : k, X, Y);
    return NULL;
}

static void check_same(const outcome *a, const outcome *b, const char *what)
{
    CHECK_MSG(a->rc == DPDO_OK, "%s: %s", what, a->msg);
    CHECK_MSG(b->rc == DPDO_OK, "%s: %s", what, b->msg);
    for (int t = 0; t < NTYPES; t++) {
        CHECK_MSG(memcmp(a->x[t], b->x[t], sizeof a->x[t]) == 0, "%s: %s output differs", what, TYPES[t]);
        CHECK_MSG(memcmp(&a->eps[t], &b->eps[t], sizeof(double)) == 0, "%s: %s epsilon %.17g vs %.17g", what,
                  TYPES[t], a->eps[t], b->eps[t]);
        CHECK_MSG(memcmp(&a->sigma[t], &b->sigma[t], sizeof(double)) == 0, "%s: %s sigma %.17g vs %.17g", what,
                  TYPES[t], a->sigma[t], b->sigma[t]);
        CHECK_MSG(a->rounds[t] == b->rounds[t], "%s: %s rounds %lld vs %lld", what, TYPES[t],
                  (long long)a->rounds[t], (long long)b->rounds[t]);
    }
}

/* two threads, each with its own problem and handles, match the serial runs bit for bit */
static void test_two_threads_match_serial(void)
{
    job ser[2] = {{.seed = 0x9e3779b97f4a7c15ull, .reverse = 0}, {.seed = 0x2545f4914f6cdd1dull, .reverse = 1}};
    job par[2];
    memcpy(par, ser, sizeof par);
    job_main(&ser[0]);
    job_main(&ser[1]);
    for (int t = 0; t < NTYPES && ser[0].out.rc == DPDO_OK; t++) {
        printf("# %-10s sigma %.6g, %lld rounds, rigorous epsilon %.4f\n", TYPES[t], ser[0].out.sigma[t],
               (long long)ser[0].out.rounds[t], ser[0].out.eps[t]);
        CHECK_MSG(ser[0].out.sigma[t] > 0 && ser[0].out.eps[t] > 0 && ser[0].out.eps[t] <= 2.0 * (1 + 1e-9),
                  "%s: sigma %g, epsilon %g: not a calibrated private run", TYPES[t], ser[0].out.sigma[t],
                  ser[0].out.eps[t]);
        CHECK_MSG(ser[0].out.rounds[t] >= 1, "%s: no round", TYPES[t]);
    }
    pthread_t th[2];
    int started[2];
    for (int k = 0; k < 2; k++) started[k] = pthread_create(&th[k], NULL, job_main, &par[k]) == 0;
    for (int k = 0; k < 2; k++)
        if (started[k]) pthread_join(th[k], NULL);
        else job_main(&par[k]);
    CHECK(started[0] && started[1]);
    check_same(&ser[0].out, &par[0].out, "thread 1");
    check_same(&ser[1].out, &par[1].out, "thread 2");
    /* the two problems differ, so the comparison can tell them apart */
    CHECK(memcmp(ser[0].out.x, ser[1].out.x, sizeof ser[0].out.x) != 0);
}

/* dpdo__lgamma is lgamma bit for bit (lgamma_r on this C library); the portable fallback agrees
 * with it to 1e-14 (1 + |lgamma|) over (-200, 1e6], the poles give +inf, NaN stays NaN */
static void test_lgamma(void)
{
    int n = 0, bad_bits = 0, bad_portable = 0;
    double worst = 0, worst_x = 0;
    for (int k = -4000; k <= 60000; k++) {
        double x = k < 0 ? k / 20.0 + 0.013 : k <= 20000 ? k / 100.0 + 1e-3 : (k - 20000) * 25.0 + 0.37;
        double ref = lgamma(x), got = dpdo__lgamma(x), port = dpdo__lgamma_portable(x);
        n++;
        if (memcmp(&ref, &got, sizeof ref) != 0) bad_bits++;
        double err = fabs(port - ref) / (1 + fabs(ref));
        if (!(err <= 1e-14)) bad_portable++;
        if (err > worst) worst = err, worst_x = x;
    }
    const double xs[] = {1e-310, 1e-200, 0.5, 1, 2, 3, 170, 170.5, 171, 1e10, 1e300, -0.5, -170.5, -1e10 - 0.5};
    for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++) {
        double ref = lgamma(xs[k]), got = dpdo__lgamma(xs[k]), port = dpdo__lgamma_portable(xs[k]);
        n++;
        if (memcmp(&ref, &got, sizeof ref) != 0) bad_bits++;
        CHECK_MSG(fabs(port - ref) <= 1e-14 * (1 + fabs(ref)), "portable lgamma(%g) = %.17g, lgamma %.17g", xs[k],
                  port, ref);
    }
    printf("# %d points: %d not lgamma's bits; portable: %d beyond 1e-14, worst %.3g at x = %g\n", n, bad_bits,
           bad_portable, worst, worst_x);
    CHECK_EQ(bad_bits, 0);
    CHECK_EQ(bad_portable, 0);
    CHECK(isinf(dpdo__lgamma_portable(0.0)) && isinf(dpdo__lgamma_portable(-3.0)));
    CHECK(isinf(dpdo__lgamma(0.0)) && isinf(dpdo__lgamma(-3.0)));
    CHECK(isnan(dpdo__lgamma_portable(NAN)) && isinf(dpdo__lgamma_portable(INFINITY)));
}

int main(void)
{
    RUN(test_two_threads_match_serial);
    RUN(test_lgamma);
    return h_finish();
}
