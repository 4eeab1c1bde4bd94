/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target for the command line of tools/dpdo-privacy: the input is
 * the argument list (NUL- or newline-separated, see cli_args.h); the tool's
 * own main runs on it. Exit statuses 0, 1 and 2 are all fine; a crash, a
 * sanitizer report, a leak or a status outside {0, 1, 2} is a finding.
 * Corpus: tests/fuzz/corpus_privacy_cli. */
#include "cli_args.h"

/* The tool parses and checks every argument as given, then computes at a bounded size (16
 * releases, privacy-loss interval >= 0.05, <= 16 orders): a calibration at the sizes of the
 * corpus costs 1-10 s under ASan + UBSan, which would hold 10^6 executions to weeks; the full
 * sizes are run by tests/test_tools.c and the accountant tests. */
#define DPDO_PRIVACY_FUZZ_WORK_CAP 16

int dpdo_privacy_main(int argc, char **argv);
#define main dpdo_privacy_main
#undef stderr
#define stderr (fuzz_tool_stderr()) /* the tool's messages only: fd 2 stays visible */
#include "../../tools/dpdo-privacy.c"
#undef stderr
#define stderr stderr
#undef main

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int rc = fuzz_run_main(dpdo_privacy_main, "dpdo-privacy", data, size);
    if (rc < 0 || rc > 2) abort();
    return 0;
}
