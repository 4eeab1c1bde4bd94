/* SPDX-License-Identifier: BSD-3-Clause */
/* train: the whole object model in one program (the example of libdpdo(3)).
 * 8 nodes on a ring each hold 1000 rows of synthetic data; DP-DDA trains an
 * L2-regularised logistic regression with noise calibrated by the accountant
 * to epsilon = 1 (delta = 1e-5) per sample; the program prints the objective
 * and the privacy the run really spent.
 *   cc train.c $(pkg-config --cflags --libs dpdo) */
#include <stdio.h>
#include <dpdo/dpdo.h>

#define NODES 8
#define DIM 20

int main(void)
{
    dpdo_dataset *ds = NULL;
    dpdo_shard *shards[NODES] = {0};
    dpdo_node *nodes[NODES] = {0};
    dpdo_loss *loss = NULL;
    dpdo_network *net = NULL;
    dpdo_regularizer *reg = NULL;
    dpdo_ledger *ledger = NULL;
    dpdo_accountant *acc = NULL;
    dpdo_algorithm *alg = NULL;
    const double lambda = 0.1;
    int rc, i;

    /* data: every fallible call returns a status; the handle's errmsg says why */
    dpdo_generate_options g;
    dpdo_generate_options_init(&g, sizeof g);
    g.n = NODES * 1000; g.d = DIM; g.seed = 7;
    if ((rc = dpdo_dataset_create(&ds)) != DPDO_OK) goto out;
    if ((rc = dpdo_dataset_generate(ds, "epsilon-like", &g)) != DPDO_OK) {
        fprintf(stderr, "generate: %s (%s)\n", dpdo_strerror(rc), dpdo_dataset_errmsg(ds));
        goto out;
    }
    if ((rc = dpdo_dataset_partition(ds, NODES, NULL, 1, shards)) != DPDO_OK) goto out;

    /* the model: a loss per node over its shard, a regularizer, the gossip graph */
    if ((rc = dpdo_loss_create(&loss, dpdo_loss_type_find("logistic"), NULL, DIM)) != DPDO_OK) goto out;
    for (i = 0; i < NODES; i++)
        if ((rc = dpdo_node_create(&nodes[i], shards[i], loss, 1.0)) != DPDO_OK) goto out;
    if ((rc = dpdo_regularizer_create(&reg, dpdo_regularizer_type_find("l2"), NULL, DIM, &lambda, 1)) != DPDO_OK)
        goto out;
    if ((rc = dpdo_network_create(&net)) != DPDO_OK || (rc = dpdo_network_set_ring(net, NODES)) != DPDO_OK) goto out;

    /* privacy: a ledger of every release per node and an accountant reading it */
    if ((rc = dpdo_ledger_create(&ledger, NODES)) != DPDO_OK) goto out;
    if ((rc = dpdo_accountant_create(&acc, dpdo_accountant_type_find(DPDO_ACCOUNTANT_DEFAULT), NULL, ledger, NULL)) != DPDO_OK) goto out;

    /* the algorithm: options (versioned by struct_size), setup, then run (or step) */
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.max_rounds = 5000;
    o.noise_mode = DPDO_NOISE_RIGOROUS;
    o.epsilon = 1.0; o.delta = 1e-5;
    if ((rc = dpdo_algorithm_create(&alg, dpdo_algorithm_type_find("dp-dda"))) != DPDO_OK) goto out;
    double F0 = 0, F = 0, eps = 0;
    if ((rc = dpdo_algorithm_setup(alg, nodes, NODES, net, reg, acc, &o)) != DPDO_OK ||
        (rc = dpdo_algorithm_objective(alg, DPDO_POINT_OUTPUT, DPDO_NODE_ALL, &F0)) != DPDO_OK ||
        (rc = dpdo_algorithm_run(alg, 0, NULL)) != DPDO_DONE) {
        fprintf(stderr, "dp-dda: %s (%s)\n", dpdo_strerror(rc), dpdo_algorithm_errmsg(alg));
        goto out;
    }
    dpdo_algorithm_objective(alg, DPDO_POINT_OUTPUT, DPDO_NODE_ALL, &F);
    dpdo_algorithm_privacy(alg, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eps, NULL, NULL);
    printf("%lld rounds: objective %.4f (%.4f at the start), epsilon spent %.3f (target 1) at delta 1e-5\n",
           (long long)dpdo_algorithm_round(alg), F, F0, eps);
    rc = DPDO_OK;
out:
    /* destroy in reverse order of borrowing: the algorithm borrows everything else */
    dpdo_algorithm_destroy(alg);
    dpdo_accountant_destroy(acc);
    dpdo_ledger_destroy(ledger);
    dpdo_network_destroy(net);
    dpdo_regularizer_destroy(reg);
    for (i = 0; i < NODES; i++) dpdo_node_destroy(nodes[i]);
    dpdo_loss_destroy(loss);
    for (i = 0; i < NODES; i++) dpdo_shard_destroy(shards[i]);
    dpdo_dataset_destroy(ds);
    return rc == DPDO_OK ? 0 : 1;
}
