/* SPDX-License-Identifier: BSD-3-Clause */
/* Fed-PLT Monte Carlo throughput for the Table II configuration of
 * examples/fed_plt_tables.c (issue 7): N = 100 agents, n = 5, q_i = 250,
 * convex regularised logistic loss (eps_reg = 0.5, a batch-kind user loss),
 * full participation, N_e = 5, rho = 1, GD with gamma*, run until
 * ||sum_i grad f_i(xhat)||^2 <= 1e-5. One Monte Carlo run = fresh data
 * (generator "fedplt-logistic", s = 3), shards, nodes, the lambda_hi bound,
 * an algorithm set up and stepped to the criterion with the metric computed
 * after every round. Lines:
 *   fedplt_table2_runs_per_s      complete Monte Carlo runs per second
 *   fedplt_table2_rounds_per_s    dpdo_algorithm_step calls per second (rounds only)
 *   fedplt_table2_us_per_round    the same as microseconds per round, with the
 *                                 per-sample gradient rate it implies
 *   fedplt_table2_mean_rounds     rounds to the criterion (sanity: ~6)
 *   fedplt_table2_split           share of a run in step / metric / setup */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dpdo/dpdo.h"
#include "dpdo/solver.h"

enum { N = 100, D = 5, Q = 250, NE = 5 };
#define EPS_REG 0.5
#define CRIT 1e-5

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* the example's loss: mean over the agent's rows of log(1 + exp(-b a x)) + eps_reg ||x||^2/2 */
typedef struct lr {
    const double *X, *b;
    int64_t rows;
} lr;

static int lr_batch(void *user, const double *x, int64_t dim, const int64_t *rows, int64_t m, double *loss_sum,
                    double *grad_acc)
{
    lr *L = user;
    double lin = 0, prod = 1, logs = 0;
    for (int64_t k = 0; k < m; k++) {
        const double *a = L->X + rows[k] * dim;
        double b = L->b[rows[k]], m0 = 0, m1 = 0, m2 = 0, m3 = 0;
        int64_t j = 0;
        for (; j + 4 <= dim; j += 4)
            m0 += a[j] * x[j], m1 += a[j + 1] * x[j + 1], m2 += a[j + 2] * x[j + 2], m3 += a[j + 3] * x[j + 3];
        for (; j < dim; j++) m0 += a[j] * x[j];
        double t = -b * ((m0 + m1) + (m2 + m3)), e = exp(-fabs(t));
        lin += t > 0 ? t : 0;
        prod *= 1 + e;
        if (prod > 1e270) logs += log(prod), prod = 1;
        if (grad_acc) {
            double c = -b * (t >= 0 ? 1.0 : e) / (1 + e);
            for (j = 0; j < dim; j++) grad_acc[j] += c * a[j];
        }
    }
    double r = 0;
    for (int64_t j = 0; j < dim; j++) {
        r += 0.5 * x[j] * x[j];
        if (grad_acc) grad_acc[j] += (double)m * EPS_REG * x[j];
    }
    *loss_sum = lin + logs + log(prod) + (double)m * EPS_REG * r;
    L->rows += m;
    return 0;
}

static const dpdo_loss_type LT = {.struct_size = sizeof(dpdo_loss_type), .name = "bench-lr", .batch = lr_batch};

static void fail(const char *what, const char *msg)
{
    fprintf(stderr, "bench_fed_plt: %s: %s\n", what, msg);
    exit(1);
}

int main(void)
{
    static double X[N * Q * D], B[N * Q];
    lr user = {X, B, 0};
    dpdo_loss *loss = NULL;
    dpdo_dataset *ds = NULL;
    dpdo_solver *gd = NULL;
    if (dpdo_loss_create(&loss, &LT, &user, D) || dpdo_dataset_create(&ds) ||
        dpdo_solver_create(&gd, dpdo_solver_type_find("gd"), NULL, D))
        fail("create", "out of memory");
    dpdo_shard *sh[N] = {0};
    dpdo_node *nodes[N] = {0};
    double t_step = 0, t_metric = 0, t_setup = 0, t0 = now();
    int64_t rounds = 0, runs = 0;
    while (runs < 5 || (now() - t0 < 3.0 && runs < 200)) {
        double ts = now();
        for (int i = 0; i < N; i++) dpdo_node_destroy(nodes[i]), dpdo_shard_destroy(sh[i]);
        dpdo_generate_options go;
        dpdo_generate_options_init(&go, sizeof go);
        go.seed = (uint64_t)runs + 1, go.n = N * Q, go.d = D, go.scale = 3.0, go.n_agents = N;
        if (dpdo_dataset_generate(ds, "fedplt-logistic", &go)) fail("generate", dpdo_dataset_errmsg(ds));
        for (int64_t r = 0; r < N * Q; r++) dpdo_dataset_get_row(ds, r, X + r * D, D);
        dpdo_dataset_get_labels(ds, B, N * Q);
        double top = 0; /* lambda_hi = eps_reg + max_i lmax(A_i^T A_i / q) / 4, power iteration */
        for (int i = 0; i < N; i++) {
            if (dpdo_shard_create_range(&sh[i], ds, (int64_t)i * Q, Q) || dpdo_node_create(&nodes[i], sh[i], loss, 1))
                fail("node", dpdo_loss_errmsg(loss));
            double v[D], w[D], lam = 0;
            for (int j = 0; j < D; j++) v[j] = 1.0 / sqrt((double)D) * (1 + 0.01 * j);
            for (int it = 0; it < 60; it++) {
                memset(w, 0, sizeof w);
                for (int h = 0; h < Q; h++) {
                    const double *a = X + ((size_t)i * Q + h) * D;
                    double t = 0;
                    for (int j = 0; j < D; j++) t += a[j] * v[j];
                    for (int j = 0; j < D; j++) w[j] += t * a[j];
                }
                double nv = 0, nw = 0;
                for (int j = 0; j < D; j++) nv += v[j] * w[j], nw += w[j] * w[j];
                lam = nv / Q, nw = sqrt(nw);
                for (int j = 0; j < D; j++) v[j] = w[j] / nw;
            }
            top = fmax(top, lam);
        }
        dpdo_solver_set(gd, "lambda_lo", EPS_REG);
        dpdo_solver_set(gd, "lambda_hi", EPS_REG + top / 4);
        dpdo_algorithm_options o;
        dpdo_algorithm_options_init(&o, sizeof o);
        o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
        o.noise_mode = DPDO_NOISE_NONE, o.max_rounds = 1000, o.seed = (uint64_t)runs + 1;
        dpdo_algorithm *alg = NULL;
        if (dpdo_algorithm_create(&alg, dpdo_algorithm_type_find("fed-plt"))) fail("create", "fed-plt");
        if (dpdo_algorithm_setup(alg, nodes, N, NULL, NULL, NULL, &o) || dpdo_algorithm_set_solver(alg, gd) ||
            dpdo_algorithm_set_int(alg, DPDO_PARAM_FED_EPOCHS, NE) ||
            dpdo_algorithm_set_double(alg, DPDO_PARAM_FED_RHO, 1.0) || dpdo_algorithm_prepare(alg))
            fail("setup", dpdo_algorithm_errmsg(alg));
        t_setup += now() - ts;
        for (;;) {
            double a = now();
            int rc = dpdo_algorithm_step(alg);
            double b = now();
            t_step += b - a;
            if (rc != DPDO_ROUND) fail("step", dpdo_algorithm_errmsg(alg));
            rounds++;
            double xh[D], g[D] = {0}, gi[D], s2 = 0;
            dpdo_algorithm_get_output(alg, DPDO_NODE_ALL, xh, D);
            for (int i = 0; i < N; i++) {
                if (dpdo_node_eval(nodes[i], xh, D, NULL, 0, 0, NULL, gi, NULL)) fail("eval", dpdo_node_errmsg(nodes[i]));
                for (int j = 0; j < D; j++) g[j] += gi[j];
            }
            for (int j = 0; j < D; j++) s2 += g[j] * g[j];
            t_metric += now() - b;
            if (s2 <= CRIT) break;
        }
        dpdo_algorithm_destroy(alg);
        runs++;
    }
    double total = now() - t0;
    printf("fedplt_table2_runs_per_s %.2f\n", (double)runs / total);
    printf("fedplt_table2_rounds_per_s %.0f\n", (double)rounds / t_step);
    printf("fedplt_table2_us_per_round %.1f (%.3g per-sample gradients/s in the rounds: N q N_e per round)\n",
           t_step / (double)rounds * 1e6, (double)rounds * N * Q * NE / t_step);
    printf("fedplt_table2_mean_rounds %.2f over %lld runs\n", (double)rounds / (double)runs, (long long)runs);
    printf("fedplt_table2_split step %.0f%% metric %.0f%% setup %.0f%%\n", 100 * t_step / total,
           100 * t_metric / total, 100 * t_setup / total);
    for (int i = 0; i < N; i++) dpdo_node_destroy(nodes[i]), dpdo_shard_destroy(sh[i]);
    dpdo_solver_destroy(gd);
    dpdo_dataset_destroy(ds);
    dpdo_loss_destroy(loss);
    return 0;
}
