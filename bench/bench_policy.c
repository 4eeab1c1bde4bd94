/* SPDX-License-Identifier: BSD-3-Clause */
/* Local/Global policies: decisions per second of the DQN controller (spec
 * dp-wor-sgd.md §3) at the paper's sizes (state d+2 = 52 and 56, hidden
 * 128, replay 20, batch 10), split into the decision alone (warm-up, no
 * training) and the decision with its training step; the non-learned
 * policies for comparison; and the internal kernels (forward pass, batch
 * loss + backprop, Adam). CPU time, single-threaded BLIS recommended
 * (BLIS_NUM_THREADS=1). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "dpdo/dpdo.h"
#include "dpdo/policy.h"
#include "model/policy_impl.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(const char *what, const dpdo_policy *p)
{
    fprintf(stderr, "bench_policy: %s: %s\n", what, p ? dpdo_policy_errmsg(p) : "");
    return 1;
}

int main(void)
{
    dpdo_rng *rng = NULL;
    if (dpdo_rng_create(&rng, NULL, NULL, 1)) return fail("rng", NULL);
    const int64_t sizes[2] = {52, 56};
    printf("%-28s %6s %14s %12s\n", "case", "S", "decisions/s", "us/decision");
    for (int si = 0; si < 2; si++) {
        const int64_t S = sizes[si];
        double st[56];
        for (int64_t c = 0; c < S; c++) st[c] = 0.01 * (double)(c % 7) - 0.02;
        /* DQN: k = 0 every call -> no transition, no training (decision only) */
        dpdo_policy *p = NULL;
        if (dpdo_policy_create(&p, dpdo_policy_type_find("dqn"), NULL, 1, S))
            return fail("create", NULL);
        dpdo_policy_set(p, "explore_start", 0.1); /* mostly greedy: the forward pass runs */
        int32_t a;
        const int N0 = 200000;
        double t0 = now();
        for (int i = 0; i < N0; i++)
            if (dpdo_policy_decide(p, 0, 0, st, S, NAN, rng, (uint64_t)i, &a))
                return fail("decide", p);
        double t1 = now();
        printf("%-28s %6lld %14.0f %12.3f\n", "dqn decide (no training)", (long long)S,
               N0 / (t1 - t0), (t1 - t0) / N0 * 1e6);
        /* DQN with a training step at every decision (memory full) */
        const int N1 = 20000;
        t0 = now();
        for (int i = 0; i < N1; i++) {
            st[S - 1] = (double)a;
            if (dpdo_policy_decide(p, 0, 1 + i % 119, st, S, -0.5 - 1e-3 * (i % 13), rng,
                                   (uint64_t)(N0 + i), &a))
                return fail("decide", p);
        }
        t1 = now();
        printf("%-28s %6lld %14.0f %12.3f\n", "dqn decide + train step", (long long)S,
               N1 / (t1 - t0), (t1 - t0) / N1 * 1e6);
        /* kernels */
        const int64_t P = dpdo__dqn_nparams(p), B = 10, H = 128;
        double *th = dpdo__dqn_params(p, 0, DPDO__DQN_ONLINE);
        double *g = malloc((size_t)P * sizeof *g), *X = malloc((size_t)(B * S) * sizeof *X);
        double *hb = malloc((size_t)(B * H) * sizeof *hb), q[20], y[10], *m, *v;
        int32_t acts[10];
        m = calloc((size_t)P, sizeof *m);
        v = calloc((size_t)P, sizeof *v);
        for (int64_t i = 0; i < B * S; i++) X[i] = 0.01 * (double)(i % 11);
        for (int j = 0; j < B; j++) acts[j] = j & 1, y[j] = 0.1 * j;
        const int N2 = 20000;
        double sink = 0;
        t0 = now();
        for (int i = 0; i < N2; i++) {
            dpdo__dqn_forward(p, th, X + (i % B) * S, hb, q);
            sink += q[0];
        }
        t1 = now();
        printf("%-28s %6lld %14.0f %12.3f\n", "  kernel: forward (dgemv)", (long long)S,
               N2 / (t1 - t0), (t1 - t0) / N2 * 1e6);
        t0 = now();
        for (int i = 0; i < N2 / 4; i++) sink += dpdo__dqn_loss_grad(p, th, B, X, acts, y, g, hb, q);
        t1 = now();
        printf("%-28s %6lld %14.0f %12.3f\n", "  kernel: loss+backprop B=10", (long long)S,
               N2 / 4 / (t1 - t0), (t1 - t0) / (N2 / 4) * 1e6);
        double *th2 = malloc((size_t)P * sizeof *th2);
        memcpy(th2, th, (size_t)P * sizeof *th2);
        t0 = now();
        for (int i = 0; i < N2 / 4; i++) dpdo__dqn_adam(p, th2, m, v, g, i + 1);
        t1 = now();
        printf("%-28s %6lld %14.0f %12.3f\n", "  kernel: adam", (long long)S,
               N2 / 4 / (t1 - t0), (t1 - t0) / (N2 / 4) * 1e6);
        if (sink == 12345.678) printf("#\n");
        free(g), free(X), free(hb), free(m), free(v), free(th2);
        dpdo_policy_destroy(p);
    }
    const char *others[3] = {"random", "periodic", "always-global"};
    for (int o = 0; o < 3; o++) {
        dpdo_policy *p = NULL;
        if (dpdo_policy_create(&p, dpdo_policy_type_find(others[o]), NULL, 1, 52))
            return fail("create", NULL);
        double st[52] = {0};
        int32_t a;
        const int N = 2000000;
        double t0 = now();
        for (int i = 0; i < N; i++)
            if (dpdo_policy_decide(p, 0, i % 120, st, 52, -0.5, rng, (uint64_t)i, &a))
                return fail("decide", p);
        double t1 = now();
        printf("%-28s %6d %14.0f %12.3f\n", others[o], 52, N / (t1 - t0), (t1 - t0) / N * 1e6);
        dpdo_policy_destroy(p);
    }
    dpdo_rng_destroy(rng);
    return 0;
}
