/* SPDX-License-Identifier: BSD-3-Clause */
/* Replays tests/fuzz/corpus_privacy_cli (saved inputs of the command-line fuzz
 * target tests/fuzz/fuzz_privacy_cli.c: argument lists for dpdo-privacy) through
 * the tool's own main, as a normal test. */
#include "harness.h"
#include "fuzz/replay.h"

#define LLVMFuzzerTestOneInput fuzz_cli_one
#include "fuzz/fuzz_privacy_cli.c"
#undef LLVMFuzzerTestOneInput

static void test_replay_cli(void)
{
    int count = replay_dir("tests/fuzz/corpus_privacy_cli", fuzz_cli_one, 0);
    CHECK_MSG(count >= 4, "tests/fuzz/corpus_privacy_cli: %d corpus files (run from the source root)", count);
    printf("# replayed %d argument lists\n", count);
}

int main(void)
{
    RUN(test_replay_cli);
    return h_finish();
}
