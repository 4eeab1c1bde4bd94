/* SPDX-License-Identifier: BSD-3-Clause */
/* Replays the saved fuzzer inputs of the parser targets as a normal test:
 * tests/fuzz/corpus through the LIBSVM/CSV/IDX target (fuzz_parsers.c),
 * tests/fuzz/corpus_gzip through the gzip target, tests/fuzz/corpus_model
 * through the model-file target; every file and prefixes of it (truncated
 * inputs must fail cleanly). The command-line targets are replayed by
 * test_fuzz_replay_cli_*.c. `make fuzz` grows the corpora (docs/data.md). */
#include "harness.h"
#include "fuzz/replay.h"

#define LLVMFuzzerTestOneInput fuzz_parsers_one
#include "fuzz/fuzz_parsers.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_gzip_one
#include "fuzz/fuzz_gzip.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_model_one
#include "fuzz/fuzz_model.c"
#undef LLVMFuzzerTestOneInput

static void replay(const char *dir, fuzz_target fn, int min_files)
{
    /* under valgrind or a sanitizer (quick mode) the prefixes are skipped */
    int count = replay_dir(dir, fn, !h_quick());
    CHECK_MSG(count >= min_files, "%s: %d corpus files (run from the source root)", dir, count);
    printf("# %s: replayed %d files\n", dir, count);
}

static void test_replay_parsers(void) { replay("tests/fuzz/corpus", fuzz_parsers_one, 10); }
static void test_replay_gzip(void) { replay("tests/fuzz/corpus_gzip", fuzz_gzip_one, 4); }
static void test_replay_model(void) { replay("tests/fuzz/corpus_model", fuzz_model_one, 4); }

int main(void)
{
    RUN(test_replay_parsers);
    RUN(test_replay_gzip);
    RUN(test_replay_model);
    return h_finish();
}
