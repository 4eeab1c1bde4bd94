/* SPDX-License-Identifier: BSD-3-Clause */
/* dp_gd_demo: private federated gradient descent assembled by hand from libdpdo's
 * building blocks (data, loss, ledger, accountant; no algorithm engine). `make demo`
 * runs examples/dp_dda_svm.c instead (scripts/demo.sh); this one is built by
 * `make examples` (part of `make check`) and run as build/examples/dp_gd_demo.
 *
 *   20 nodes each hold a shard of an epsilon-like data set (dense, unit rows).
 *   Every round each node releases its mean logistic-loss gradient with every
 *   per-sample gradient clipped to norm C, plus Gaussian noise N(0, sigma^2 I).
 *   A coordinator averages the releases and takes a gradient step on
 *   F(x) = mean loss + (lambda/2)||x||^2.
 *
 * Privacy: replacing one sample of node i changes its release by at most
 * 2C/q_i (q_i = its sample count), so each round is a Gaussian mechanism with
 * that sensitivity. sigma is calibrated with the exact (analytic) Gaussian
 * composition accountant so that every node is (eps, delta)-DP after T rounds;
 * the ledger is charged every round and the spent epsilon is printed.
 *
 * Usage: dp_gd_demo [rounds] [epsilon]      (defaults 100 and 1.0) */
#define EX_PROG "dp_gd_demo"
#include "common.h" /* TRY, the examples' shared scaffolding */

#define NODES 20

int main(int argc, char **argv)
{
    int64_t rounds = argc > 1 ? atoll(argv[1]) : 100;
    double target_eps = argc > 2 ? atof(argv[2]) : 1.0;
    const double delta = 1e-5, clip = 1.0, lambda = 1e-3, step = 1.0;
    const int64_t n = 20000, d = 100;
    if (rounds < 1 || !(target_eps > 0)) {
        fprintf(stderr, "usage: dp_gd_demo [rounds >= 1] [epsilon > 0]\n");
        return 2;
    }
    /* Every handle and buffer starts NULL, so that `fail:` can release them all. */
    int status = 1;
    dpdo_dataset *ds = NULL;
    dpdo_shard *shards[NODES] = {NULL};
    dpdo_node *nodes[NODES] = {NULL};
    dpdo_loss *loss = NULL;
    dpdo_regularizer *reg = NULL;
    dpdo_reference *ref = NULL;
    dpdo_ledger *ledger = NULL;
    dpdo_accountant *acc = NULL;
    dpdo_event *ev = NULL;
    dpdo_rng *rng = NULL;
    double *xstar = NULL, *x = NULL, *avg = NULL, *gi = NULL, *noise = NULL, *margins = NULL, *y = NULL;

    /* 1. Data: generate, then split into one private shard per node. */
    TRY(dpdo_dataset_create(&ds), "out of memory");
    dpdo_generate_options g;
    dpdo_generate_options_init(&g, sizeof g);
    g.n = n;
    g.d = d;
    g.seed = 42;
    TRY(dpdo_dataset_generate(ds, "epsilon-like", &g), dpdo_dataset_errmsg(ds));
    TRY(dpdo_dataset_partition(ds, NODES, NULL, 7, shards), dpdo_dataset_errmsg(ds));

    /* 2. Problem: logistic loss on every node, L2 regularizer. */
    TRY(dpdo_loss_create(&loss, dpdo_loss_type_find("logistic"), NULL, d), "loss");
    TRY(dpdo_regularizer_create(&reg, dpdo_regularizer_type_find("l2"), NULL, d, &lambda, 1),
        "regularizer");
    for (int i = 0; i < NODES; i++) TRY(dpdo_node_create(&nodes[i], shards[i], loss, 1.0), "node");

    /* 3. Ground truth F* from the reference solver. */
    TRY(dpdo_reference_create(&ref, nodes, NODES, reg, NULL), "reference");
    double fstar;
    if (!(xstar = malloc(sizeof(double) * d))) goto fail;
    TRY(dpdo_reference_solve(ref, xstar, d, &fstar), dpdo_reference_errmsg(ref));
    fprintf(stderr, "reference solver (%s): F* = %.10f\n", dpdo_reference_method(ref), fstar);

    /* 4. Privacy: a ledger over the nodes and the library's default accountant ("auto": for
     *    these unsampled Gaussian releases its figure is the exact one); calibrate sigma for
     *    the worst node (the one with the fewest samples). */
    TRY(dpdo_ledger_create(&ledger, NODES), "ledger");
    TRY(dpdo_accountant_create(&acc, dpdo_accountant_type_find(DPDO_ACCOUNTANT_DEFAULT), NULL, ledger, NULL),
        "acc");
    TRY(dpdo_event_create(&ev), "event");
    int64_t qmin = n;
    for (int i = 0; i < NODES; i++)
        if (dpdo_node_samples(nodes[i]) < qmin) qmin = dpdo_node_samples(nodes[i]);
    double sens = 2.0 * clip / (double)qmin, sigma;
    TRY(dpdo_accountant_calibrate_sigma(acc, NULL, sens, (double)rounds, target_eps, delta, &sigma),
        dpdo_accountant_errmsg(acc));
    TRY(dpdo_event_set_gaussian(ev, NULL, sens, sigma), dpdo_event_errmsg(ev));
    fprintf(stderr, "noise: sigma = %.6g per coordinate (sensitivity %.3g) for (%.3g, %.0e)-DP "
                    "after %lld rounds\n", sigma, sens, target_eps, delta, (long long)rounds);

    /* 5. Train twice from x = 0: without noise (the best this budget of rounds
     *    can do) and privately (the ledger is charged only in the private run). */
    TRY(dpdo_rng_create(&rng, NULL, NULL, 2024), "rng");
    x = malloc(sizeof(double) * d), avg = malloc(sizeof(double) * d);
    gi = malloc(sizeof(double) * d), noise = malloc(sizeof(double) * d);
    if (!x || !avg || !gi || !noise) goto fail;
    double F = 0, F_nonprivate = 0, eps = 0;
    for (int private_run = 0; private_run <= 1; private_run++) {
        double s = private_run ? sigma : 0.0;
        for (int64_t j = 0; j < d; j++) x[j] = 0;
        for (int64_t t = 0; t < rounds; t++) {
            for (int64_t j = 0; j < d; j++) avg[j] = 0;
            for (int i = 0; i < NODES; i++) {
                TRY(dpdo_node_eval(nodes[i], x, d, NULL, 0, clip, NULL, gi, NULL),
                    dpdo_node_errmsg(nodes[i]));
                /* noise from stream (node i, round t, NOISE): reproducible */
                TRY(dpdo_rng_normal(rng, (uint64_t)i, (uint64_t)t, DPDO_PURPOSE_NOISE, 0, noise, d),
                    dpdo_rng_errmsg(rng));
                for (int64_t j = 0; j < d; j++) avg[j] += (gi[j] + s * noise[j]) / NODES;
            }
            if (private_run) /* every node's data was released once more */
                TRY(dpdo_ledger_charge(ledger, ev, 1, NULL, -1), dpdo_ledger_errmsg(ledger));
            for (int64_t j = 0; j < d; j++) x[j] -= step * (avg[j] + lambda * x[j]);

            TRY(dpdo_reference_objective(ref, x, d, &F), dpdo_reference_errmsg(ref));
            if (private_run)
                TRY(dpdo_accountant_epsilon(acc, -1, delta, &eps, NULL), dpdo_accountant_errmsg(acc));
            if (private_run && ((t + 1) % 10 == 0 || t + 1 == rounds))
                fprintf(stderr, "round %4lld  F - F* = %.3e  epsilon spent = %.4f\n",
                        (long long)(t + 1), F - fstar, eps);
        }
        if (!private_run) {
            F_nonprivate = F;
            fprintf(stderr, "non-private run: F - F* = %.3e after %lld rounds\n", F - fstar,
                    (long long)rounds);
        }
    }

    /* 6. Result: training accuracy of the private model. */
    margins = malloc(sizeof(double) * n), y = malloc(sizeof(double) * n);
    if (!margins || !y) goto fail;
    TRY(dpdo_dataset_margins(ds, x, d, margins, n), dpdo_dataset_errmsg(ds));
    TRY(dpdo_dataset_get_labels(ds, y, n), dpdo_dataset_errmsg(ds));
    int64_t correct = 0;
    for (int64_t k = 0; k < n; k++) correct += (margins[k] * y[k] > 0);
    printf("result: %d nodes, %lld rounds, (%.3g, %.0e)-DP per sample (exact Gaussian "
           "composition, spent %.4f)\n", NODES, (long long)rounds, target_eps, delta, eps);
    printf("result: suboptimality F - F* = %.4e (non-private %.4e), training accuracy %.2f%%\n",
           F - fstar, F_nonprivate - fstar, 100.0 * (double)correct / (double)n);
    status = 0;

fail: /* TRY jumps here on an error; a finished run arrives with status 0 */
    free(margins); free(y); free(x); free(avg); free(gi); free(noise); free(xstar);
    dpdo_rng_destroy(rng);
    dpdo_event_destroy(ev);
    dpdo_accountant_destroy(acc);
    dpdo_ledger_destroy(ledger);
    dpdo_reference_destroy(ref);
    for (int i = 0; i < NODES; i++) dpdo_node_destroy(nodes[i]);
    for (int i = 0; i < NODES; i++) dpdo_shard_destroy(shards[i]);
    dpdo_regularizer_destroy(reg);
    dpdo_loss_destroy(loss);
    dpdo_dataset_destroy(ds);
    return status;
}
