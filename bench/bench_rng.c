/* SPDX-License-Identifier: BSD-3-Clause */
/* RNG throughput: normals/s of the dispatched (SIMD) kernel and of the
 * portable scalar kernel, add_normals (the noise kernel), and uniforms/s.
 * One line per figure, "name value"; each is the best of 3 runs of >= 0.3 s
 * of calls that fill a 16 Ki-value buffer (128 KB, the size of a typical
 * noise vector; cache-resident, so the generator is measured, not memory
 * bandwidth). Each call opens a fresh stream (round = call number). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dpdo/dpdo.h"
#include "dpdo/rng.h"
#include "rng/rng_impl.h"

enum { N = 1 << 14 };

static clockid_t clk = CLOCK_MONOTONIC;

static double now(void)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef int (*kfn)(dpdo__stream *, double *, size_t, int);

static int add_k(dpdo__stream *s, double *out, size_t n, int k)
{
    return dpdo__stream_add_normals_k(s, 1e-3, out, n, k);
}

/* values per second, best of 3 runs of at least min_s seconds each */
static double rate(const dpdo_rng *rng, kfn f, int kernel, double *buf, double min_s, int *used)
{
    double best = 0.0;
    uint64_t round = 0;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now(), t;
        long iters = 0;
        do {
            dpdo__stream s;
            dpdo__stream_open(&s, rng, 1, round++ & 0xFFFFFFFF, DPDO_PURPOSE_NOISE);
            *used = f(&s, buf, N, kernel);
            iters++;
            t = now() - t0;
        } while (t < min_s);
        double r = (double)iters * N / t;
        if (r > best) best = r;
    }
    return best;
}

int main(void)
{
    dpdo_rng *rng = NULL;
    if (dpdo_rng_create(&rng, NULL, NULL, 2024) != DPDO_OK) return 1;
    double *buf = calloc(N, sizeof *buf);
    if (!buf) return 1;
    int used;
    double r;
    r = rate(rng, dpdo__stream_normals_k, DPDO__RNG_KERNEL_AUTO, buf, 0.3, &used);
    printf("rng.normals_per_s %.3g  # kernel %s\n", r, dpdo__rng_kernel_name(used));
    r = rate(rng, add_k, DPDO__RNG_KERNEL_AUTO, buf, 0.3, &used);
    printf("rng.add_normals_per_s %.3g  # kernel %s\n", r, dpdo__rng_kernel_name(used));
    if (dpdo__rng_kernel_best() >= DPDO__RNG_KERNEL_AVX512) {
        r = rate(rng, dpdo__stream_normals_k, DPDO__RNG_KERNEL_AVX2, buf, 0.3, &used);
        printf("rng.normals_per_s.avx2 %.3g  # kernel %s\n", r, dpdo__rng_kernel_name(used));
    }
    r = rate(rng, dpdo__stream_normals_k, DPDO__RNG_KERNEL_SCALAR, buf, 0.3, &used);
    printf("rng.normals_per_s.scalar %.3g  # kernel %s\n", r, dpdo__rng_kernel_name(used));
    r = rate(rng, dpdo__stream_uniforms_k, DPDO__RNG_KERNEL_AUTO, buf, 0.3, &used);
    printf("rng.uniforms_per_s %.3g  # kernel %s\n", r, dpdo__rng_kernel_name(used));
    /* the same dispatched normals timed in thread CPU time: on a machine
     * shared with other jobs this excludes the time the thread was not
     * running (wall-clock figures above include it) */
    clk = CLOCK_THREAD_CPUTIME_ID;
    r = rate(rng, dpdo__stream_normals_k, DPDO__RNG_KERNEL_AUTO, buf, 0.3, &used);
    printf("rng.normals_per_cpu_s %.3g  # kernel %s, thread CPU time\n", r,
           dpdo__rng_kernel_name(used));
    r = rate(rng, add_k, DPDO__RNG_KERNEL_AUTO, buf, 0.3, &used);
    printf("rng.add_normals_per_cpu_s %.3g  # kernel %s, thread CPU time\n", r,
           dpdo__rng_kernel_name(used));
    if (dpdo__rng_kernel_best() >= DPDO__RNG_KERNEL_AVX512) {
        r = rate(rng, dpdo__stream_normals_k, DPDO__RNG_KERNEL_AVX2, buf, 0.3, &used);
        printf("rng.normals_per_cpu_s.avx2 %.3g  # kernel %s, thread CPU time\n", r,
               dpdo__rng_kernel_name(used));
    }
    r = rate(rng, dpdo__stream_normals_k, DPDO__RNG_KERNEL_SCALAR, buf, 0.3, &used);
    printf("rng.normals_per_cpu_s.scalar %.3g  # kernel %s, thread CPU time\n", r,
           dpdo__rng_kernel_name(used));
    free(buf);
    dpdo_rng_destroy(rng);
    return 0;
}
