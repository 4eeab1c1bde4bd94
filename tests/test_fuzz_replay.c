/* SPDX-License-Identifier: BSD-3-Clause */
/* Replays every saved fuzzer input in tests/fuzz/corpus/ through the
 * LIBSVM/CSV/IDX parsers (the same entry point as the libFuzzer target).
 * A crash, sanitizer report or broken invariant (the target aborts) fails
 * the test. */
#include <dirent.h>
#include "harness.h"
#include "fuzz/fuzz_parsers.c"

static void test_replay_corpus(void)
{
    const char *dir = "tests/fuzz/corpus";
    DIR *d = opendir(dir);
    CHECK_MSG(d != NULL, "cannot open %s (run from the source root)", dir);
    if (!d) return;
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        unsigned char *buf = malloc(1 << 20);
        size_t n = fread(buf, 1, 1 << 20, f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, n);
        /* every prefix too: truncated inputs must fail cleanly */
        if (!h_quick() || count < 20)
            for (size_t k = 0; k < n; k += 1 + n / 16) LLVMFuzzerTestOneInput(buf, k);
        free(buf);
        count++;
    }
    closedir(d);
    CHECK_MSG(count >= 10, "only %d corpus files", count);
    printf("# replayed %d corpus files\n", count);
}

int main(void)
{
    RUN(test_replay_corpus);
    return h_finish();
}
