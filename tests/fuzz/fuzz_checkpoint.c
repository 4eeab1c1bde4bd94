/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target for the checkpoint reader (dpdo_algorithm_load's verification and parser,
 * lib/engine/checkpoint.c). The input is a checkpoint image; when it is long enough its
 * BLAKE2b trailer is recomputed, so that mutations reach the item parser instead of stopping
 * at the checksum. It is loaded into a small DP-WOR-SGD run with a DQN policy (the richest
 * private state: permutations, batches, replay rings). On success the run must continue for two
 * rounds without a memory error; on failure the status must be DPDO_E_FORMAT, DPDO_E_UNSUPPORTED
 * (an image flagged as a distributed run's manifest or part: include/dpdo/checkpoint.h) or
 * DPDO_E_NOMEM, and the handle must still be READY at round 0 with nothing charged. Corpus: tests/fuzz/corpus_checkpoint (written by
 * tests/test_checkpoint with DPDO_CKPT_CORPUS=dir). */
#include <sodium.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "dpdo/dpdo.h"
#include "dpdo/checkpoint.h"
#include "engine/engine_impl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { FN = 2, FQ = 8, FD = 3 };
static dpdo_dataset *g_ds;
static dpdo_shard *g_sh[FN];
static dpdo_loss *g_loss;
static dpdo_node *g_nodes[FN];
static dpdo_network *g_net;

static int fixture(void)
{
    if (g_net) return 0;
    double X[FN * FQ * FD], y[FN * FQ];
    for (int i = 0; i < FN * FQ; i++) {
        for (int k = 0; k < FD; k++) X[i * FD + k] = ((i * 7 + k * 3) % 11 - 5) / 10.0;
        y[i] = i % 3 ? 1 : -1;
    }
    if (dpdo_dataset_create(&g_ds) || dpdo_dataset_set_dense(g_ds, FN * FQ, FD, X, y, DPDO_COPY) ||
        dpdo_loss_create(&g_loss, dpdo_loss_type_find("logistic"), NULL, FD))
        return -1;
    for (int i = 0; i < FN; i++)
        if (dpdo_shard_create_range(&g_sh[i], g_ds, (int64_t)i * FQ, FQ) ||
            dpdo_node_create(&g_nodes[i], g_sh[i], g_loss, 1.0))
            return -1;
    if (dpdo_network_create(&g_net) || dpdo_network_set_complete(g_net, FN)) return -1;
    return sodium_init() < 0 ? -1 : 0;
}

static void make_run(dpdo_ledger **ledp, dpdo_accountant **accp, dpdo_algorithm **ap, dpdo_policy **polp)
{
    dpdo_ledger *led = NULL;
    dpdo_accountant *acc = NULL;
    dpdo_algorithm *a = NULL;
    dpdo_policy *pol = NULL;
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    o.seed = 3;
    o.max_rounds = 8;
    o.epsilon = 4;
    if (dpdo_ledger_create(&led, FN) ||
        dpdo_accountant_create(&acc, dpdo_accountant_type_find("rdp"), NULL, led, NULL) ||
        dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-wor-sgd")) ||
        dpdo_algorithm_setup(a, g_nodes, FN, g_net, NULL, acc, &o) ||
        dpdo_policy_create(&pol, dpdo_policy_type_find("dqn"), NULL, FN, FD + 2) ||
        dpdo_policy_set(pol, "replay", 16) || dpdo_policy_set(pol, "batch", 4) || dpdo_policy_set(pol, "hidden", 4) ||
        dpdo_algorithm_set_policy(a, pol)) {
#ifdef FUZZ_CKPT_GEN
        fprintf(stderr, "setup: %s\n", a ? dpdo_algorithm_errmsg(a) : "");
#endif
        abort();
    }
    *ledp = led, *accp = acc, *ap = a, *polp = pol;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fixture()) abort();
    unsigned char *img = malloc(size ? size : 1);
    if (!img) return 0;
    memcpy(img, data, size);
    if (size >= 48 + 32) crypto_generichash(img + size - 32, 32, img, size - 32, NULL, 0);
    dpdo_ledger *led;
    dpdo_accountant *acc;
    dpdo_algorithm *a;
    dpdo_policy *pol;
    make_run(&led, &acc, &a, &pol);
    int rc = dpdo__algorithm_load_image(a, img, size, NULL);
    if (rc == DPDO_OK) {
        int st = dpdo_algorithm_state(a);
        if (st != DPDO_ALG_RUNNING && st != DPDO_ALG_DONE) abort();
        for (int k = 0; k < 2; k++) (void)dpdo_algorithm_step(a);
    } else {
        if (rc != DPDO_E_FORMAT && rc != DPDO_E_UNSUPPORTED && rc != DPDO_E_NOMEM) abort();
        if (dpdo_algorithm_state(a) != DPDO_ALG_READY || dpdo_algorithm_round(a) != 0) abort();
        if (dpdo_ledger_charges(led, 0) != 0 || dpdo_ledger_charges(led, 1) != 0) abort();
    }
    dpdo_algorithm_destroy(a);
    dpdo_policy_destroy(pol);
    dpdo_accountant_destroy(acc);
    dpdo_ledger_destroy(led);
    free(img);
    return 0;
}

#ifdef FUZZ_CKPT_GEN
/* seed corpus: cc -DFUZZ_CKPT_GEN -Iinclude -Ilib tests/fuzz/fuzz_checkpoint.c build/libdpdo.a ... ;
 * ./a.out dir  (checkpoints after 1, 3 and 8 rounds) */
#include <stdio.h>
int main(int argc, char **argv)
{
    if (argc < 2 || fixture()) return 1;
    const int at[3] = {1, 3, 8};
    for (int k = 0; k < 3; k++) {
        dpdo_ledger *led;
        dpdo_accountant *acc;
        dpdo_algorithm *a;
        dpdo_policy *pol;
        make_run(&led, &acc, &a, &pol);
        dpdo_algorithm_run(a, at[k], NULL);
        char path[512];
        snprintf(path, sizeof path, "%s/round%d.ckpt", argv[1], at[k]);
        if (dpdo_algorithm_save(a, path, NULL)) fprintf(stderr, "%s\n", dpdo_algorithm_errmsg(a));
        dpdo_algorithm_destroy(a);
        dpdo_policy_destroy(pol);
        dpdo_accountant_destroy(acc);
        dpdo_ledger_destroy(led);
    }
    return 0;
}
#endif
