/* SPDX-License-Identifier: BSD-3-Clause */
/* Issue 19 (Fed-PLT): ns per sample of the 8-lane full-batch logistic gradient
 * (dpdo__lin_grad_full8, lib/data/kernels_l8.c) on each instruction-set path this CPU has, on
 * the shape of the Fed-PLT bench round (q = 250 samples of d = 5 per call, transposed copy, the
 * gradient only): best of 7 windows of 0.2 s, one thread. Path 0 scalar, 1 SSE2 vectors, 2 AVX2
 * (+FMA), 3 AVX-512F. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "data/data_impl.h"
#include "dpdo/dpdo.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(void)
{
    enum { Q = 250, D = 5 };
    static double X[Q * D], y[Q];
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int k = 0; k < Q * D; k++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        X[k] = (double)(s >> 11) * 0x1p-53 * 2.0 - 1.0;
    }
    for (int k = 0; k < Q; k++)
        y[k] = k % 3 ? 1.0 : -1.0;
    dpdo_dataset *ds = NULL;
    dpdo_shard *sh = NULL;
    struct dpdo__tcopy *tc = NULL;
    if (dpdo_dataset_create(&ds) || dpdo_dataset_set_dense(ds, Q, D, X, y, DPDO_COPY) ||
        dpdo_shard_create_range(&sh, ds, 0, Q) || dpdo__tcopy_build(sh, &tc) || !tc) {
        fprintf(stderr, "bench_l8: setup failed\n");
        return 1;
    }
    const double w[D] = {0.3, -1.2, 0.8, 2.0, -0.5};
    double g[D] = {0};
    for (int path = 0; path <= 3; path++) {
        if (!dpdo__lin_grad_full8(ds, NULL, 0, Q, tc, DPDO__L8_LOGISTIC, w, 0.0, 1.0 / Q, g, NULL,
                                  NULL, path)) {
            printf("l8_logistic_q250_d5 path %d: not on this CPU\n", path);
            continue;
        }
        double best = 1e30;
        for (int rep = 0; rep < 7; rep++) {
            long calls = 0;
            const double t0 = now();
            double t;
            do {
                for (int k = 0; k < 64; k++)
                    dpdo__lin_grad_full8(ds, NULL, 0, Q, tc, DPDO__L8_LOGISTIC, w, 0.0, 1.0 / Q, g,
                                         NULL, NULL, path);
                calls += 64;
                t = now() - t0;
            } while (t < 0.2);
            const double ns = 1e9 * t / ((double)calls * Q);
            best = ns < best ? ns : best;
        }
        printf("l8_logistic_q250_d5 path %d: %.3f ns/sample (best of 7)\n", path, best);
    }
    printf("(checksum %g)\n", g[0] + g[1] + g[2] + g[3] + g[4]);
    dpdo__tcopy_free(tc);
    dpdo_shard_destroy(sh);
    dpdo_dataset_destroy(ds);
    return 0;
}
