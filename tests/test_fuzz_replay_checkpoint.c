/* SPDX-License-Identifier: BSD-3-Clause */
/* Replays tests/fuzz/corpus_checkpoint (inputs of the checkpoint fuzz target
 * tests/fuzz/fuzz_checkpoint.c: valid checkpoints of a DP-WOR-SGD run with a DQN policy and
 * their mutations), each also cut at 16 prefixes, as a normal test. */
#include "harness.h"
#include "fuzz/replay.h"

#define LLVMFuzzerTestOneInput fuzz_ckpt_one
#include "fuzz/fuzz_checkpoint.c"
#undef LLVMFuzzerTestOneInput

static void test_replay_checkpoint(void)
{
    int count = replay_dir("tests/fuzz/corpus_checkpoint", fuzz_ckpt_one, 1);
    CHECK_MSG(count >= 2, "tests/fuzz/corpus_checkpoint: %d corpus files (run from the source root)", count);
    printf("# replayed %d checkpoint images\n", count);
    /* the seeds are valid checkpoints of the target's run (else the fuzzer only meets refusals) */
    CHECK_EQ(fixture(), 0);
    dpdo_ledger *led;
    dpdo_accountant *acc;
    dpdo_algorithm *a;
    dpdo_policy *pol;
    make_run(&led, &acc, &a, &pol);
    /* A change of the library's calibration changes the fingerprint and makes the seeds stale:
     * that weakens the fuzzer (it then meets only refusals) but is no defect of the reader, so it
     * is reported, not failed. Regenerate with FUZZ_CKPT_GEN (tests/fuzz/fuzz_checkpoint.c). */
    int rc = dpdo_algorithm_load(a, "tests/fuzz/corpus_checkpoint/round3.ckpt", NULL);
    if (rc == DPDO_OK) {
        CHECK_EQ(dpdo_algorithm_round(a), 3);
        CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
    } else {
        CHECK_EQ(rc, DPDO_E_FORMAT);
        printf("# warning: the seed corpus is stale (%s): regenerate it with FUZZ_CKPT_GEN\n",
               dpdo_algorithm_errmsg(a));
    }
    dpdo_algorithm_destroy(a);
    dpdo_policy_destroy(pol);
    dpdo_accountant_destroy(acc);
    dpdo_ledger_destroy(led);
}

int main(void)
{
    RUN(test_replay_checkpoint);
    return h_finish();
}
