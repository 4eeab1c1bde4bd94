/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target for the command line of tools/dpdo-predict (see
 * cli_args.h): the input is the argument list. The paths it names are
 * whatever the fuzzer writes (mostly missing files, sometimes /dev/null or
 * /dev/zero from the corpus), so this exercises argument parsing and the
 * refusal paths. A status outside {0, 1, 2} or any sanitizer report is a
 * finding. Corpus: tests/fuzz/corpus_predict_cli. */
#include "cli_args.h"

int dpdo_predict_main(int argc, char **argv);
#define main dpdo_predict_main
#undef stderr
#define stderr (fuzz_tool_stderr()) /* the tool's messages only: fd 2 stays visible */
#include "../../tools/dpdo-predict.c"
#undef stderr
#define stderr stderr
#undef main

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int rc = fuzz_run_main(dpdo_predict_main, "dpdo-predict", data, size);
    if (rc < 0 || rc > 2) abort();
    return 0;
}
