/* SPDX-License-Identifier: BSD-3-Clause */
/* Corpus replay for the tests (tests/test_fuzz_replay*.c): feed every file of
 * a corpus directory, and prefixes of it (truncated inputs must fail
 * cleanly), through a fuzz target's entry point. A crash, sanitizer report
 * or broken invariant (the targets abort) fails the test. */
#ifndef DPDO_FUZZ_REPLAY_H
#define DPDO_FUZZ_REPLAY_H
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*fuzz_target)(const uint8_t *data, size_t size);

/* Returns the number of files replayed (-1 if dir cannot be opened). */
static int replay_dir(const char *dir, fuzz_target fn, int prefixes)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int count = 0;
    struct dirent *e;
    unsigned char *buf = malloc(1 << 20);
    while (buf && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        size_t n = fread(buf, 1, 1 << 20, f);
        fclose(f);
        clock_t t0 = clock();
        fn(buf, n);
        if (prefixes)
            for (size_t k = 0; k < n; k += 1 + n / 16) fn(buf, k);
        if (getenv("DPDO_REPLAY_TIMES")) /* the CPU seconds of each input, to find the slow ones */
            printf("# cpu %s %.3f\n", e->d_name, (double)(clock() - t0) / CLOCKS_PER_SEC);
        count++;
    }
    free(buf);
    closedir(d);
    return count;
}
#endif
