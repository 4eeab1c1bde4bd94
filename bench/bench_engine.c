/* SPDX-License-Identifier: BSD-3-Clause */
/* DP-DDA rounds per second (issue 5), with the time split into plan,
 * gradient, noise, exchange + gossip, primal map and commit from the engine's
 * phase probes, next to a lower bound from this machine's measured memory
 * bandwidth (triad) and Gaussian rate:
 *     bound = max(bytes / bandwidth, b * d / normals_rate)
 *     bytes = per computing node: 8d * (2 gradient (row + x) + 1 noise write
 *             + 2 message (z read, write) + 3 gossip (2 reads, 1 write)
 *             + 2 primal (read, write) + 4 commit (z, x copies) + 3 output flush)
 *           (dense rows; CSR rows count their non-zeros instead of d for the row)
 * Cases: epsilon-like dense n = 20, d = 2000 with b = 2 and b = 20;
 * rcv1-like CSR d = 47236 (density 0.16%), b = 2. Rigorous-free FIXED
 * noise (sigma = 1) so only the round is measured. One line per figure.
 * Also the cost of misuse detection (docs/abi.md "Misuse detection"): a step takes and
 * gives back the handle's busy state once (one compare-exchange, one store); its time per
 * pair is measured here and printed as a share of the b = 2 round (goal: <= 1 %). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dpdo/dpdo.h"
#include "core/core_impl.h"
#include "engine/engine_impl.h"
#include "rng/rng_impl.h"
#include "bench_common.h"

/* phase accounting: time since the previous probe goes to the phase that ends */
typedef struct probe_acc {
    double last, t[DPDO__PH_COUNT];
} probe_acc;

static void probe(void *user, int phase)
{
    probe_acc *p = user;
    double t = now();
    p->t[phase] += t - p->last;
    p->last = t;
}

/* seconds per dpdo__busy_enter + dpdo__busy_leave pair (what each public step adds) */
static double guard_pair_s(void)
{
    dpdo__busy b;
    memset(&b, 0, sizeof b);
    char err[DPDO__ERRMSG_LEN];
    double best = INFINITY;
    for (int r = 0; r < 5; r++) {
        const long reps = 2000000;
        double t0 = now();
        for (long k = 0; k < reps; k++) dpdo__busy_leave(&b, dpdo__busy_enter(&b, 1, err, "bench"));
        best = fmin(best, (now() - t0) / (double)reps);
    }
    return best;
}

static int run_case(const char *label, const char *kind, int64_t d, int32_t n, int64_t q, int64_t b, double bw,
                    double nrate)
{
    dpdo_dataset *ds = NULL;
    dpdo_generate_options go;
    dpdo_generate_options_init(&go, sizeof go);
    go.n = (int64_t)n * q;
    go.d = d;
    if (dpdo_dataset_create(&ds) || dpdo_dataset_generate(ds, kind, &go)) {
        fprintf(stderr, "generate %s failed: %s\n", kind, dpdo_dataset_errmsg(ds));
        return 1;
    }
    dpdo_loss *loss = NULL;
    dpdo_loss_create(&loss, dpdo_loss_type_find("hinge"), NULL, d);
    dpdo_shard **sh = calloc((size_t)n, sizeof *sh);
    dpdo_node **nodes = calloc((size_t)n, sizeof *nodes);
    for (int32_t i = 0; i < n; i++) {
        dpdo_shard_create_range(&sh[i], ds, (int64_t)i * q, q);
        dpdo_node_create(&nodes[i], sh[i], loss, 1.0);
    }
    dpdo_network *net = NULL;
    dpdo_network_create(&net);
    dpdo_network_set_complete(net, n);
    double lam = 5e-4;
    dpdo_regularizer *reg = NULL;
    dpdo_regularizer_create(&reg, dpdo_regularizer_type_find("l2"), NULL, d, &lam, 1);
    dpdo_ledger *led = NULL;
    dpdo_ledger_create(&led, n);
    dpdo_accountant *acc = NULL;
    dpdo_accountant_create(&acc, dpdo_accountant_type_find("rdp"), NULL, led, NULL);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = DPDO_NOISE_FIXED;
    o.sigma = 1.0;
    o.max_rounds = 1000000;
    o.max_epsilon = INFINITY;
    dpdo_algorithm *a = NULL;
    dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-dda"));
    int rc = dpdo_algorithm_setup(a, nodes, n, net, reg, acc, &o);
    if (!rc) rc = dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, b);
    if (!rc) rc = dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_SCHEDULE, DPDO_DDA_SCHEDULE_PAPER_L2);
    if (!rc) rc = dpdo_algorithm_prepare(a);
    if (rc) {
        fprintf(stderr, "%s: %s\n", label, dpdo_algorithm_errmsg(a));
        return 1;
    }
    /* warm up, then measure for >= 1 s */
    dpdo_algorithm_run(a, 50, NULL);
    probe_acc pa;
    memset(&pa, 0, sizeof pa);
    dpdo__algorithm_set_probe(a, probe, &pa);
    double t0 = now();
    pa.last = t0;
    int64_t rounds = 0;
    while (now() - t0 < 1.0) {
        for (int k = 0; k < 50; k++) dpdo_algorithm_step(a);
        rounds += 50;
    }
    double el = now() - t0;
    /* bound */
    double row_vals = strcmp(kind, "rcv1-like") == 0 ? 0.0016 * (double)d * 1.5 : (double)d; /* 12 B per CSR nz */
    double bytes = (double)b * 8.0 * ((double)d * (1 + 1 + 2 + 3 + 2 + 4 + 3) + row_vals);
    double bound = fmax(bytes / bw, (double)b * (double)d / nrate);
    double per = el / (double)rounds;
    printf("dda_%s_rounds_per_s %.0f\n", label, 1.0 / per);
    printf("dda_%s_us_per_round %.2f (bound %.2f us, ratio %.2f)\n", label, per * 1e6, bound * 1e6, per / bound);
    if (b == 2) {
        double g = guard_pair_s();
        printf("dda_%s_misuse_guard_ns %.2f (%.4f %% of a round; goal <= 1 %%)\n", label, g * 1e9,
               100.0 * g / per);
    }
    static const char *names[] = {"plan+guard", "gradient", "noise", "exchange", "gossip", "primal", "commit"};
    printf("dda_%s_split_us", label);
    for (int k = 0; k < DPDO__PH_COUNT; k++) {
        /* PH_PLAN accumulates the time between rounds (commit of the previous round, loop) */
        printf(" %s=%.2f", k == DPDO__PH_PLAN ? "commit+plan" : names[k], pa.t[k] / (double)rounds * 1e6);
    }
    printf("\n");
    dpdo_algorithm_destroy(a);
    dpdo_accountant_destroy(acc);
    dpdo_ledger_destroy(led);
    dpdo_regularizer_destroy(reg);
    dpdo_network_destroy(net);
    for (int32_t i = 0; i < n; i++) {
        dpdo_node_destroy(nodes[i]);
        dpdo_shard_destroy(sh[i]);
    }
    free(nodes), free(sh);
    dpdo_loss_destroy(loss);
    dpdo_dataset_destroy(ds);
    return 0;
}

int main(void)
{
    double bw = triad_bw(3), nr = normal_rate(3, 0.2);
    printf("machine_triad_GBps %.2f\n", bw / 1e9);
    printf("machine_normals_per_s %.3g\n", nr);
    int rc = 0;
    rc |= run_case("epsilon_n20_d2000_b2", "epsilon-like", 2000, 20, 500, 2, bw, nr);
    rc |= run_case("epsilon_n20_d2000_b20", "epsilon-like", 2000, 20, 500, 20, bw, nr);
    rc |= run_case("rcv1_n20_d47236_b2", "rcv1-like", 47236, 20, 500, 2, bw, nr);
    return rc;
}
