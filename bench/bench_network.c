/* SPDX-License-Identifier: BSD-3-Clause */
/* Network benchmarks: one gossip round y = W x (n x d state, d = 2000) for
 * K_20 (sparse axpy path and dense BLIS dgemm path) and the circulant
 * n = 1000, k = 3 graph; one DP-DDA per-round matching gossip on K_20; the
 * spectral computation (dsyevd) for n = 1000 and 2000.
 * Output lines "net.<name> <value>". GB/s counts the state moved by one
 * round at the minimum: x read once and y written once, 2*n*d*8 bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "dpdo/dpdo.h"
#include "dpdo/network.h"
#include "net/net_impl.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int die(const char *what, int rc, dpdo_network *net)
{
    fprintf(stderr, "bench_network: %s failed: %s (%s)\n", what, dpdo_strerror(rc),
            net ? dpdo_network_errmsg(net) : "");
    exit(1);
}

/* best of 5 batches, each running for >= 0.05 s; returns seconds per call */
static double time_gossip(dpdo_network *net, const double *x, double *y, int64_t n, int64_t d)
{
    double best = 1e30;
    for (int b = 0; b < 5; b++) {
        long reps = 0;
        double t0 = now(), t1;
        do {
            int rc = dpdo_network_gossip(net, x, y, n, d);
            if (rc) die("gossip", rc, net);
            reps++;
            t1 = now();
        } while (t1 - t0 < 0.05);
        double per = (t1 - t0) / (double)reps;
        if (per < best) best = per;
    }
    return best;
}

static void report(const char *name, double sec, int64_t n, int64_t d)
{
    double bytes = 2.0 * (double)n * (double)d * 8.0;
    printf("net.%s_ms %.4f\n", name, sec * 1e3);
    printf("net.%s_gbps %.2f\n", name, bytes / sec / 1e9);
}

int main(void)
{
    const int64_t d = 2000;
    dpdo_network *net = NULL;
    int rc;
    if ((rc = dpdo_network_create(&net))) die("create", rc, NULL);

    /* K_20 */
    int64_t n = 20;
    double *x = malloc((size_t)(1000 * d) * sizeof(double));
    double *y = malloc((size_t)(1000 * d) * sizeof(double));
    if (!x || !y) return 1;
    for (int64_t t = 0; t < 1000 * d; t++) x[t] = (double)(t % 97) / 97.0 - 0.5;
    if ((rc = dpdo_network_set_complete(net, n))) die("set_complete", rc, net);
    if ((rc = dpdo_network_set_gossip_mode(net, DPDO_GOSSIP_SPARSE))) die("mode", rc, net);
    report("gossip_complete20_d2000_sparse", time_gossip(net, x, y, n, d), n, d);
    if ((rc = dpdo_network_set_gossip_mode(net, DPDO_GOSSIP_DENSE))) die("mode", rc, net);
    report("gossip_complete20_d2000_dense", time_gossip(net, x, y, n, d), n, d);
    if ((rc = dpdo_network_set_gossip_mode(net, DPDO_GOSSIP_AUTO))) die("mode", rc, net);
    report("gossip_complete20_d2000", time_gossip(net, x, y, n, d), n, d);
    printf("net.gossip_complete20_auto_dense %d\n", dpdo_network_gossip_path(net) == DPDO_GOSSIP_DENSE);

    /* one DP-DDA round on K_20: random matching of b = 2 (and 4) nodes */
    dpdo_rng *rng = NULL;
    if ((rc = dpdo_rng_create(&rng, NULL, NULL, 1))) die("rng", rc, NULL);
    dpdo__round r;
    char err[DPDO__ERRMSG_LEN];
    if ((rc = dpdo__round_init(&r, net, -1))) die("round_init", rc, NULL);
    for (int64_t b = 2; b <= 4; b += 2) {
        double best = 1e30;
        uint64_t t = 0;
        for (int batch = 0; batch < 5; batch++) {
            long reps = 0;
            double t0 = now(), t1;
            do {
                if ((rc = dpdo__round_draw(&r, net, rng, t++, DPDO_ROUND_MATCHING, b, 0, err)))
                    die(err, rc, NULL);
                dpdo__round_gossip(&r, x, y, d);
                reps++;
                t1 = now();
            } while (t1 - t0 < 0.05);
            if ((t1 - t0) / (double)reps < best) best = (t1 - t0) / (double)reps;
        }
        printf("net.round_matching_complete20_b%lld_d2000_ms %.5f\n", (long long)b, best * 1e3);
    }
    dpdo__round_free(&r);
    dpdo_rng_destroy(rng);

    /* circulant n = 1000, k = 3 */
    n = 1000;
    if ((rc = dpdo_network_set_circulant(net, n, 3))) die("set_circulant", rc, net);
    report("gossip_circulant1000_k3_d2000", time_gossip(net, x, y, n, d), n, d);

    /* spectra */
    int64_t sizes[2] = {1000, 2000};
    for (int s = 0; s < 2; s++) {
        if ((rc = dpdo_network_set_circulant(net, sizes[s], 3))) die("set_circulant", rc, net);
        double gap, t0 = now();
        if ((rc = dpdo_network_spectral_gap(net, &gap))) die("spectral_gap", rc, net);
        double t1 = now();
        printf("net.spectral_circulant%lld_ms %.1f\n", (long long)sizes[s], (t1 - t0) * 1e3);
        printf("net.spectral_circulant%lld_gap %.6g\n", (long long)sizes[s], gap);
    }
    dpdo_network_destroy(net);
    free(x);
    free(y);
    return 0;
}
