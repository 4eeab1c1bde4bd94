/* SPDX-License-Identifier: BSD-3-Clause */
/* DO-ADP rounds per second and bytes on the wire (issue 6, "Must show").
 * Case "fig2": the paper's Figure 2 configuration -- n = 20 agents on the
 * circulant graph (i ~ i +- 1, 2, 3), epsilon-like dense data with d = 2000,
 * q = 1000 samples per agent, logistic loss + ||x||^2/(2q), p = 0.8, top-k
 * with k/d = 0.3, Theorem 1's noise (eps = 0.01, delta_0 = 0.01, G = 1, T = 6q).
 * Case "uncompressed": the same with p = 1 and k = d (identity messages), the
 * baseline of the paper's utilisation metric (the default "identity"
 * compressor: dense messages, no indices).
 * Bytes per round come from dpdo_algorithm_comm (payload: 8 per value plus 4
 * per index for sparse messages, summed over every sender/receiver pair).
 * Rounds per second of wall time and of process CPU time (the machine is
 * shared, so wall time may include waiting). One line per figure, "name value". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dpdo/dpdo.h"

enum { N = 20, D = 2000, Q = 1000 };

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double now(void) { return clock_s(CLOCK_MONOTONIC); }
/* CPU time of this process: on a shared machine wall time includes waiting */
static double cpu_now(void) { return clock_s(CLOCK_PROCESS_CPUTIME_ID); }

typedef struct result {
    double rounds_per_s, rounds_per_cpu_s, bytes_per_round, values_per_round, util;
} result;

/* Build the problem once per case (cheap next to the measurement), run up to
 * T = 6q rounds or 1.5 s, whichever comes first, after 20 warm-up rounds. */
static int run_case(const char *label, dpdo_node **nodes, dpdo_regularizer *reg, double p, int64_t k,
                    result *r)
{
    int status = 1;
    dpdo_network *net = NULL;
    dpdo_ledger *led = NULL;
    dpdo_accountant *acc = NULL;
    dpdo_compressor *comp = NULL;
    dpdo_algorithm *a = NULL;
    dpdo_algorithm_options o;
    const char *what = "setup";
    int rc;
    if ((rc = dpdo_network_create(&net)) || (rc = dpdo_network_set_circulant(net, N, 3)) ||
        (rc = dpdo_ledger_create(&led, N)) ||
        (rc = dpdo_accountant_create(&acc, dpdo_accountant_type_find("rdp"), NULL, led, NULL)) ||
        (rc = dpdo_compressor_create(&comp, dpdo_compressor_type_find("top-k"), NULL, D)) ||
        (rc = dpdo_compressor_set_k(comp, k)) || (rc = dpdo_algorithm_options_init(&o, sizeof o))) {
        fprintf(stderr, "%s: %s: %s\n", label, what, dpdo_strerror(rc));
        goto done;
    }
    o.noise_mode = DPDO_NOISE_PAPER;
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.epsilon = 0.01;
    o.delta = 0.01;
    o.lipschitz = 1.0;
    o.step_size = 0.001;
    o.max_rounds = 6 * Q;
    if ((rc = dpdo_algorithm_create(&a, dpdo_algorithm_type_find("do-adp"))) ||
        (rc = dpdo_algorithm_setup(a, nodes, N, net, reg, acc, &o)) ||
        (rc = dpdo_algorithm_set_double(a, DPDO_PARAM_ADP_P, p)) ||
        (k < D && (rc = dpdo_algorithm_set_compressor(a, comp))) || /* k = d: default identity */
        (rc = dpdo_algorithm_prepare(a)) ||
        (rc = dpdo_algorithm_run(a, 20, NULL)) < 0) {
        fprintf(stderr, "%s: %s: %s\n", label, dpdo_strerror(rc), dpdo_algorithm_errmsg(a));
        goto done;
    }
    int64_t sc0, by0, sc1, by1, r0 = dpdo_algorithm_round(a);
    if ((rc = dpdo_algorithm_comm(a, DPDO_NODE_ALL, NULL, &sc0, &by0))) goto done;
    double t0 = now(), c0 = cpu_now(), el = 0;
    while (el < 1.5 && dpdo_algorithm_round(a) < o.max_rounds) {
        if ((rc = dpdo_algorithm_run(a, 10, NULL)) < 0) {
            fprintf(stderr, "%s: %s\n", label, dpdo_algorithm_errmsg(a));
            goto done;
        }
        el = now() - t0;
    }
    int64_t rounds = dpdo_algorithm_round(a) - r0;
    if ((rc = dpdo_algorithm_comm(a, DPDO_NODE_ALL, NULL, &sc1, &by1))) goto done;
    r->rounds_per_s = (double)rounds / el;
    r->rounds_per_cpu_s = (double)rounds / (cpu_now() - c0);
    r->bytes_per_round = (double)(by1 - by0) / (double)rounds;
    r->values_per_round = (double)(sc1 - sc0) / (double)rounds;
    r->util = r->values_per_round / (2.0 * (double)dpdo_network_edge_count(net) * D);
    status = 0;
done:
    dpdo_algorithm_destroy(a);
    dpdo_compressor_destroy(comp);
    dpdo_accountant_destroy(acc);
    dpdo_ledger_destroy(led);
    dpdo_network_destroy(net);
    return status;
}

int main(void)
{
    int status = 1;
    dpdo_dataset *ds = NULL;
    dpdo_loss *loss = NULL;
    dpdo_regularizer *reg = NULL;
    dpdo_shard *sh[N] = {0};
    dpdo_node *nodes[N] = {0};
    dpdo_generate_options go;
    const double lambda = 1.0 / Q; /* ||x||^2/(2q) inside each per-sample loss */
    int rc;
    if ((rc = dpdo_generate_options_init(&go, sizeof go))) goto done;
    go.n = (int64_t)N * Q;
    go.d = D;
    if ((rc = dpdo_dataset_create(&ds)) || (rc = dpdo_dataset_generate(ds, "epsilon-like", &go)) ||
        (rc = dpdo_loss_create(&loss, dpdo_loss_type_find("logistic"), NULL, D)) ||
        (rc = dpdo_regularizer_create(&reg, dpdo_regularizer_type_find("l2"), NULL, D, &lambda, 1))) {
        fprintf(stderr, "bench_do_adp: problem: %s %s\n", dpdo_strerror(rc), dpdo_dataset_errmsg(ds));
        goto done;
    }
    for (int i = 0; i < N; i++)
        if ((rc = dpdo_shard_create_range(&sh[i], ds, (int64_t)i * Q, Q)) ||
            (rc = dpdo_node_create(&nodes[i], sh[i], loss, 1.0))) {
            fprintf(stderr, "bench_do_adp: node %d: %s\n", i, dpdo_strerror(rc));
            goto done;
        }
    result fig2, full;
    if (run_case("fig2", nodes, reg, 0.8, (int64_t)(0.3 * D), &fig2) ||
        run_case("uncompressed", nodes, reg, 1.0, D, &full))
        goto done;
    printf("adp_fig2_rounds_per_s %.0f\n", fig2.rounds_per_s);
    printf("adp_fig2_us_per_round %.1f\n", 1e6 / fig2.rounds_per_s);
    printf("adp_fig2_rounds_per_cpu_s %.0f\n", fig2.rounds_per_cpu_s);
    printf("adp_fig2_bytes_per_round %.0f\n", fig2.bytes_per_round);
    printf("adp_fig2_utilisation %.4f (p k/d = 0.24)\n", fig2.util);
    printf("adp_uncompressed_rounds_per_s %.0f\n", full.rounds_per_s);
    printf("adp_uncompressed_rounds_per_cpu_s %.0f\n", full.rounds_per_cpu_s);
    printf("adp_uncompressed_bytes_per_round %.0f\n", full.bytes_per_round);
    printf("adp_uncompressed_utilisation %.4f (p k/d = 1)\n", full.util);
    /* values: ~0.24; bytes: the 4-byte index per value makes a sparse value cost 12 B, not 8 */
    printf("adp_fig2_bytes_ratio %.4f (values ratio %.4f)\n", fig2.bytes_per_round / full.bytes_per_round,
           fig2.values_per_round / full.values_per_round);
    status = 0;
done:
    for (int i = 0; i < N; i++) dpdo_node_destroy(nodes[i]), dpdo_shard_destroy(sh[i]);
    dpdo_regularizer_destroy(reg);
    dpdo_loss_destroy(loss);
    dpdo_dataset_destroy(ds);
    return status;
}
