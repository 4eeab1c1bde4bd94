/* The program that wrote ckpt-0.2-*.bin with libdpdo 0.2.0 (checkpoint format 1, parameters by
 * slot position); test_checkpoint.c (test_legacy_checkpoints) loads them. Kept for provenance:
 *   cc -Iinclude -Ilib -Itests tests/data/gen_ckpt_02.c -Lbuild/lib -ldpdo -lm && ./a.out tests/data */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpdo/dpdo.h"
#include "dpdo/checkpoint.h"
#include "harness.h"
#include "fixture.h"
enum { N = 4, Q = 24, D = 5 };
int main(int argc, char **argv)
{
    uint64_t st = 0x9e3779b97f4a7c15ull;
    static double X[N * Q * D], Y[N * Q];
    for (int i = 0; i < N * Q; i++) {
        double nn = 0;
        for (int k = 0; k < D; k++) { X[i * D + k] = h_urand(&st) * 2 - 1; nn += X[i * D + k] * X[i * D + k]; }
        for (int k = 0; k < D; k++) X[i * D + k] /= sqrt(nn) + 1e-3;
        Y[i] = h_urand(&st) < 0.5 ? -1 : 1;
    }
    dpdo_dataset *ds; dpdo_loss *lo; dpdo_shard *sh[N]; dpdo_node *nodes[N]; dpdo_network *net; dpdo_regularizer *reg;
    tfx_nodes_make(X, Y, N, Q, D, "logistic", &ds, &lo, sh, nodes);
    dpdo_network_create(&net); dpdo_network_set_complete(net, N);
    double lam = 0.05;
    dpdo_regularizer_create(&reg, dpdo_regularizer_type_find("l2"), NULL, D, &lam, 1);
    for (int w = 0; w < 2; w++) {
        const char *type = w == 0 ? "dp-dda" : "5gcs";
        dpdo_algorithm_options o;
        dpdo_algorithm_options_init(&o, sizeof o);
        o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; o.seed = 20; o.max_rounds = 10; o.epsilon = 4.0; o.batch = 2; o.step_size = 0.5;
        if (w == 1) o.noise_mode = DPDO_NOISE_NONE;
        dpdo_ledger *led; dpdo_accountant *acc; dpdo_algorithm *a;
        dpdo_ledger_create(&led, N);
        dpdo_accountant_create(&acc, dpdo_accountant_type_find("rdp"), NULL, led, NULL);
        dpdo_algorithm_create(&a, dpdo_algorithm_type_find(type));
        int rc = dpdo_algorithm_setup(a, nodes, N, w == 0 ? net : NULL, w == 0 ? reg : NULL, acc, &o);
        if (rc) { printf("setup %s: %s\n", type, dpdo_algorithm_errmsg(a)); return 1; }
        if (w == 0) {
            rc |= dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, 4);
            rc |= dpdo_algorithm_set_double(a, DPDO_PARAM_DDA_PAPER_C, 160.0);
        } else {
            rc |= dpdo_algorithm_set_double(a, DPDO_PARAM_5GCS_TAU, 1.0);
            rc |= dpdo_algorithm_set_double(a, DPDO_PARAM_5GCS_LOCAL_STEP, 0.5);
            rc |= dpdo_algorithm_set_int(a, DPDO_PARAM_FED_EPOCHS, 3);
        }
        { int r2 = dpdo_algorithm_run(a, 4, NULL); if (r2 != DPDO_ROUND) printf("run %d %s\n", r2, dpdo_algorithm_errmsg(a)); }
        rc |= dpdo_algorithm_set_int(a, DPDO_PARAM_MAX_ROUNDS, 12);
        char p[256];
        snprintf(p, sizeof p, "%s/ckpt-0.2-%s.bin", argv[1], type);
        rc |= dpdo_algorithm_save(a, p, NULL);
        printf("%s: rc %d %s\n", type, rc, dpdo_algorithm_errmsg(a));
        dpdo_algorithm_destroy(a); dpdo_accountant_destroy(acc); dpdo_ledger_destroy(led);
    }
    return 0;
}
