/* Shared pieces of the benches that measure the machine beside libdpdo: clocks and the
 * machine limits (memory bandwidth, Gaussian rate) that floors are computed from.
 * Include after <math.h>, <stdlib.h>, <time.h>, "dpdo/dpdo.h" and "rng/rng_impl.h". */
#ifndef DPDO_BENCH_COMMON_H
#define DPDO_BENCH_COMMON_H

/* wall clock, seconds */
static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* process CPU time (all threads), seconds */
static inline double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* STREAM-like triad c = a + 1.5 b over 3 x 128 MB, bytes/s: best of `reps` */
static inline double triad_bw(int reps)
{
    size_t n = (size_t)1 << 24;
    double *a = malloc(n * 8), *b = malloc(n * 8), *c = malloc(n * 8), best = 0;
    if (!a || !b || !c) {
        free(a), free(b), free(c);
        return NAN;
    }
    for (size_t i = 0; i < n; i++) a[i] = 1, b[i] = 2, c[i] = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        for (size_t i = 0; i < n; i++) c[i] = a[i] + 1.5 * b[i];
        best = fmax(best, 3.0 * 8.0 * (double)n / (now() - t0));
    }
    volatile double sink = c[n / 2];
    (void)sink;
    free(a), free(b), free(c);
    return best;
}

/* the library's reproducible Gaussian stream (Philox + SIMD Box-Muller), normals/s: best of
 * `reps` windows of `window` seconds */
static inline double normal_rate(int reps, double window)
{
    dpdo_rng *rng;
    if (dpdo_rng_create(&rng, NULL, NULL, 1) != DPDO_OK) return NAN;
    size_t n = 1 << 14;
    double *buf = calloc(n, 8), best = 0;
    if (!buf) {
        dpdo_rng_destroy(rng);
        return NAN;
    }
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        long it = 0;
        while (now() - t0 < window) {
            dpdo__stream s;
            dpdo__stream_open(&s, rng, 1, (uint64_t)it++, DPDO_PURPOSE_NOISE);
            dpdo__stream_add_normals(&s, 1.0, buf, n);
        }
        best = fmax(best, (double)it * (double)n / (now() - t0));
    }
    free(buf);
    dpdo_rng_destroy(rng);
    return best;
}

#endif
