/* SPDX-License-Identifier: BSD-3-Clause */
/* Calibration to the releases that happen (issue 16): DP-DDA on a ring of n = 10 nodes with
 * the library defaults (RIGOROUS, epsilon = 1, delta = 1e-5, T = 1000 rounds, a random matching
 * of 2 nodes per round, batch 1), l2-regularised logistic regression on unit-norm rows.
 * For each seed the same problem runs twice:
 *   "every round" calib-steps = T: sigma planned as if every node computed in every round
 *                 (the library's calibration before 0.2 on a non-complete graph);
 *   "planned"     the automatic count: a high-probability bound on each node's releases under
 *                 the activation scheme and graph (dpdo_algorithm_planned_releases).
 * Printed: sigma, the planned count, the largest count a node was charged, epsilon spent / target
 * (worst node), and the final suboptimality gap F(x~) - F* of the averaged output (F* from
 * dpdo_reference_solve), mean and standard error over seeds. Also batch 1 vs 5 (the WOR floor).
 * Usage: bench_calibration [seeds [rounds]] (defaults 20, 1000). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpdo/dpdo.h"

enum { N = 10, Q = 200, D = 10 };

static uint64_t ts = 0x2545f4914f6cdd1dull;
static double urand(void)
{
    ts ^= ts << 13;
    ts ^= ts >> 7;
    ts ^= ts << 17;
    return (double)(ts >> 11) * 0x1.0p-53;
}
static double nrand(void) { return sqrt(-2.0 * log(urand() + 1e-300)) * cos(6.283185307179586 * urand()); }

#define TRY(x, msg)                                                                                  \
    do {                                                                                             \
        int rc_ = (x);                                                                               \
        if (rc_ < 0) {                                                                               \
            fprintf(stderr, "%s:%d: %s (%d): %s\n", __FILE__, __LINE__, #x, rc_, msg);               \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)

typedef struct res {
    double sigma, eps, gap;
    int64_t planned, maxused, rounds;
} res;

static double X[N * Q * D], Y[N * Q];

static res run(dpdo_node **nodes, dpdo_regularizer *reg, double fstar, uint64_t seed, int every_round, int64_t B,
               int64_t T, int verbose)
{
    res r;
    memset(&r, 0, sizeof r);
    dpdo_network *net = NULL;
    dpdo_ledger *led = NULL;
    dpdo_accountant *acc = NULL;
    dpdo_algorithm *a = NULL;
    TRY(dpdo_network_create(&net), "network");
    TRY(dpdo_network_set_ring(net, N), "ring");
    TRY(dpdo_ledger_create(&led, N), "ledger");
    TRY(dpdo_accountant_create(&acc, dpdo_accountant_type_find("rdp"), NULL, led, NULL), "accountant");
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.seed = seed;
    o.max_rounds = T;
    o.batch = B;
    o.lipschitz = 1.0;
    TRY(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-dda")), "create");
    TRY(dpdo_algorithm_setup(a, nodes, N, net, reg, acc, &o), dpdo_algorithm_errmsg(a));
    if (every_round) TRY(dpdo_algorithm_set_int(a, DPDO_PARAM_CALIB_STEPS, T), dpdo_algorithm_errmsg(a));
    TRY(dpdo_algorithm_prepare(a), dpdo_algorithm_errmsg(a));
    TRY(dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &r.sigma), dpdo_algorithm_errmsg(a));
    TRY(dpdo_algorithm_planned_releases(a, DPDO_NODE_ALL, &r.planned), dpdo_algorithm_errmsg(a));
    if (verbose) printf("#   notes: %s\n", dpdo_algorithm_privacy_notes(a));
    TRY(dpdo_algorithm_run(a, 0, NULL), dpdo_algorithm_errmsg(a));
    r.rounds = dpdo_algorithm_round(a);
    TRY(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &r.eps, NULL, NULL), dpdo_algorithm_errmsg(a));
    for (int i = 0; i < N; i++) {
        int64_t c = dpdo_ledger_charges(led, i);
        r.maxused = c > r.maxused ? c : r.maxused;
    }
    TRY(dpdo_algorithm_suboptimality(a, DPDO_POINT_OUTPUT, DPDO_NODE_ALL, fstar, &r.gap), dpdo_algorithm_errmsg(a));
    dpdo_algorithm_destroy(a);
    dpdo_network_destroy(net);
    dpdo_accountant_destroy(acc);
    dpdo_ledger_destroy(led);
    return r;
}

int main(int argc, char **argv)
{
    int seeds = argc > 1 ? atoi(argv[1]) : 20;
    if (seeds < 2) seeds = 2;
    const int64_t T = argc > 2 && atoll(argv[2]) > 0 ? atoll(argv[2]) : 1000;
    /* data: unit-norm rows, labels from a planted direction with 10% flips */
    double wstar[D];
    for (int k = 0; k < D; k++) wstar[k] = nrand();
    for (int i = 0; i < N * Q; i++) {
        double nn = 0, m = 0;
        for (int k = 0; k < D; k++) {
            X[i * D + k] = nrand();
            nn += X[i * D + k] * X[i * D + k];
        }
        for (int k = 0; k < D; k++) {
            X[i * D + k] /= sqrt(nn);
            m += X[i * D + k] * wstar[k];
        }
        Y[i] = (m > 0) != (urand() < 0.1) ? 1 : -1;
    }
    dpdo_dataset *ds = NULL;
    dpdo_loss *loss = NULL;
    dpdo_shard *sh[N];
    dpdo_node *nodes[N];
    dpdo_regularizer *reg = NULL;
    double lam = 0.01;
    TRY(dpdo_dataset_create(&ds), "dataset");
    TRY(dpdo_dataset_set_dense(ds, N * Q, D, X, Y, DPDO_COPY), "dataset");
    TRY(dpdo_loss_create(&loss, dpdo_loss_type_find("logistic"), NULL, D), "loss");
    for (int i = 0; i < N; i++) {
        TRY(dpdo_shard_create_range(&sh[i], ds, (int64_t)i * Q, Q), "shard");
        TRY(dpdo_node_create(&nodes[i], sh[i], loss, 1.0), "node");
    }
    TRY(dpdo_regularizer_create(&reg, dpdo_regularizer_type_find("l2"), NULL, D, &lam, 1), "l2");
    dpdo_reference *ref = NULL;
    double fstar = 0, xs[D];
    TRY(dpdo_reference_create(&ref, nodes, N, reg, NULL), "reference");
    TRY(dpdo_reference_solve(ref, xs, D, &fstar), dpdo_reference_errmsg(ref));
    dpdo_reference_destroy(ref);

    printf("# DP-DDA, ring n = %d, q = %d rows per node, d = %d, logistic + l2 (%g), T = %lld, eps = 1, "
           "delta = 1e-5, matching of 2, %d seeds; F* = %.6f\n",
           N, Q, D, lam, (long long)T, seeds, fstar);
    printf("# %-13s %5s %10s %8s %8s %8s %10s %10s %10s %10s\n", "calibration", "batch", "sigma", "planned",
           "max_used", "rounds", "eps_mean", "eps_max", "gap_mean", "gap_se");
    for (int64_t B = 1; B <= 5; B += 4)
        for (int every = 1; every >= 0; every--) {
            double se = 0, emax = 0, g = 0, g2 = 0;
            res r0;
            memset(&r0, 0, sizeof r0);
            int64_t mu = 0, rmin = T;
            for (int s = 0; s < seeds; s++) {
                res r = run(nodes, reg, fstar, 1 + (uint64_t)s, every, B, T, s == 0);
                if (s == 0) r0 = r;
                se += r.eps;
                emax = fmax(emax, r.eps);
                g += r.gap;
                g2 += r.gap * r.gap;
                mu = r.maxused > mu ? r.maxused : mu;
                rmin = r.rounds < rmin ? r.rounds : rmin;
            }
            double gm = g / seeds, gse = sqrt(fmax(0, g2 / seeds - gm * gm) / (seeds - 1));
            printf("  %-13s %5lld %10.4g %8lld %8lld %8lld %10.4f %10.4f %10.4g %10.2g\n",
                   every ? "every-round" : "planned", (long long)B, r0.sigma, (long long)r0.planned, (long long)mu,
                   (long long)rmin, se / seeds, emax, gm, gse);
        }
    for (int i = 0; i < N; i++) {
        dpdo_node_destroy(nodes[i]);
        dpdo_shard_destroy(sh[i]);
    }
    dpdo_regularizer_destroy(reg);
    dpdo_loss_destroy(loss);
    dpdo_dataset_destroy(ds);
    return 0;
}
