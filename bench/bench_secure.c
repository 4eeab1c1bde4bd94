/* SPDX-License-Identifier: BSD-3-Clause */
/* Secure noise (docs/privacy.md "The table sampler"):
 *  1. draws per second on one core: the exact discrete Gaussian on a grid (AES-256-CTR keyed
 *     stream, the secure mode's draw) at sigma = 2^20 and at 183172 = ceil(2^12 sqrt 2000) grid
 *     steps (DP-DDA's regime at d = 2000), the exact discrete Laplace, the fast continuous sampler
 *     (Philox + SIMD Box-Muller, reproducible mode), and NumPy's Generator.standard_normal
 *     (PCG64) timed by /usr/bin/python3 in the same run; and what bounds the secure rate: cipher
 *     bytes per draw, candidates per draw (measured), the AES-256-CTR and libsodium ChaCha20
 *     keystream rates alone, cycles per draw in the sampler and in the cipher;
 *  2. the exact samplers' PMF: chi-square of 10^7 draws against the exact PMF of N_Z(0, s^2)
 *     (s = 3, 50) and of the discrete Laplace (t = 4), tails pooled, at significance 1e-6
 *     (critical values scipy.stats.chi2.ppf(1 - 1e-6, df));
 *  3. DP-DDA rounds per second, epsilon-like n = 20, d = 2000, b = 20 active, FIXED sigma = 1:
 *     secure (grid discrete Gaussian, AES keys) vs reproducible (Philox, Box-Muller).
 * Times are CPU time (the bench machine is shared). One "name value unit" line per figure. DPDO_BENCH_QUICK=1 cuts the sizes by 10. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <openssl/evp.h>
#include <sodium.h>

#include "dpdo/dpdo.h"
#include "engine/engine_impl.h"
#include "rng/rng_impl.h"

/* CPU time of the process: the machine these figures come from is shared, and a draw rate "per
 * core" is draws per CPU-second (every timed section here is single-threaded). */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static unsigned char KEY[32];
static unsigned char HAS = 1;

static void keyed(dpdo_rng *rng)
{
    for (int b = 0; b < 32; b++) KEY[b] = (unsigned char)(3 * b + 11);
    rng->keys = KEY, rng->has_key = &HAS, rng->nkeys = 1;
}

/* ---- 1. rates ------------------------------------------------------------------------------ */

/* lazy comparisons decided by the MPFR fallback / slow comparisons, candidates / accepted, per
 * sampler [dlaplace, dgauss] */
static unsigned long long slow_n[2], cmp_n[2], cand_n[2], acc_n[2];

static double rate_grid(dpdo_rng *rng, int gauss, uint64_t P, size_t n, double *bytes_per_draw)
{
    double *x = calloc(n, sizeof *x);
    char err[DPDO__ERRMSG_LEN];
    double best = 0;
    for (int r = 0; r < 3; r++) {
        dpdo__stream s;
        dpdo__stream_open(&s, rng, 0, (uint64_t)r + 1, DPDO_PURPOSE_NOISE);
        double t0 = now();
        int rc = gauss ? dpdo__grid_add_dgauss(&s, P, 0x1p-20, x, n, err) : dpdo__grid_add_dlaplace(&s, P, 0x1p-20, x, n, err);
        double t = now() - t0;
        if (rc) {
            fprintf(stderr, "grid draw failed: %s\n", err);
            exit(1);
        }
        if ((double)n / t > best) best = (double)n / t;
        *bytes_per_draw = 16.0 * (double)s.ctr[0] / (double)n; /* blocks of 16 bytes consumed */
        slow_n[gauss] += s.exact_slow, cmp_n[gauss] += s.exact_cmp;
        cand_n[gauss] += s.exact_cand, acc_n[gauss] += s.exact_acc;
        memset(x, 0, n * sizeof *x);
    }
    free(x);
    return best;
}

static double rate_fast(dpdo_rng *rng, size_t n)
{
    double *x = calloc(n, sizeof *x), best = 0;
    for (int r = 0; r < 3; r++) {
        dpdo__stream s;
        dpdo__stream_open(&s, rng, 0, (uint64_t)r + 1, DPDO_PURPOSE_NOISE);
        double t0 = now();
        dpdo__stream_add_normals(&s, 1.0, x, n);
        double t = now() - t0;
        if ((double)n / t > best) best = (double)n / t;
    }
    volatile double sink = x[n / 2];
    (void)sink;
    free(x);
    return best;
}

/* the engine's call shape: one grid release of d = 2000 coordinates per (node, round) stream */
static double rate_grid_calls(dpdo_rng *rng, uint64_t P, int calls)
{
    double x[2000] = {0};
    char err[DPDO__ERRMSG_LEN];
    double best = 0;
    for (int r = 0; r < 3; r++) {
        double t0 = now();
        for (int c = 0; c < calls; c++) {
            dpdo__stream s;
            dpdo__stream_open(&s, rng, (uint64_t)c % 20, (uint64_t)(r * calls + c) / 20 + 1, DPDO_PURPOSE_NOISE);
            if (dpdo__grid_add_dgauss(&s, P, 0x1p-20, x, 2000, err)) {
                fprintf(stderr, "grid draw failed: %s\n", err);
                exit(1);
            }
        }
        double t = now() - t0;
        if (2000.0 * calls / t > best) best = 2000.0 * calls / t;
    }
    return best;
}

static double aes_bytes_rate(void)
{
    size_t n = (size_t)1 << 24;
    unsigned char *b = calloc(n, 1), iv[16] = {0};
    double best = 0;
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    EVP_EncryptInit_ex(c, EVP_aes_256_ctr(), NULL, KEY, iv);
    for (int r = 0; r < 3; r++) {
        int len;
        double t0 = now();
        EVP_EncryptUpdate(c, b, &len, b, (int)n);
        double t = now() - t0;
        if ((double)n / t > best) best = (double)n / t;
    }
    EVP_CIPHER_CTX_free(c);
    free(b);
    return best;
}

/* The time-stamp counter's rate (rdtsc against wall time): cycles per draw are printed in its
 * (nominal) cycles per CPU-second */
static double cycles_per_s(void)
{
#if defined(__x86_64__)
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    unsigned long long c0 = __builtin_ia32_rdtsc();
    volatile double s = 0;
    for (int i = 0; i < 50000000; i++) s += 1.0;
    unsigned long long c1 = __builtin_ia32_rdtsc();
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (double)(c1 - c0) / ((double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec));
#else
    return NAN;
#endif
}

static double chacha_bytes_rate(void)
{
    size_t n = (size_t)1 << 24;
    unsigned char *b = calloc(n, 1), nonce[12] = {0};
    double best = 0;
    for (int r = 0; r < 3; r++) {
        double t0 = now();
        crypto_stream_chacha20_ietf_xor_ic(b, b, n, nonce, 0, KEY);
        double t = now() - t0;
        if ((double)n / t > best) best = (double)n / t;
    }
    free(b);
    return best;
}

static double numpy_rate(size_t n)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import numpy as np, time\n"
             "g = np.random.default_rng(1); b = 0\n"
             "for r in range(3):\n"
             "    t = time.process_time(); g.standard_normal(%zu); t = time.process_time() - t; b = max(b, %zu / t)\n"
             "print(b)\" 2>/dev/null",
             n, n);
    FILE *p = popen(cmd, "r");
    if (!p) return NAN;
    double v = NAN;
    if (fscanf(p, "%lf", &v) != 1) v = NAN;
    pclose(p);
    return v;
}

/* ---- 2. PMF ------------------------------------------------------------------------------------ */
static int pmf_case(dpdo_rng *rng, int gauss, uint64_t P, int R, double crit, size_t n)
{
    int64_t *y = malloc(n * sizeof *y);
    dpdo__stream s;
    dpdo__stream_open(&s, rng, 0, 1000 + P, DPDO_PURPOSE_NOISE);
    int rc = gauss ? dpdo__stream_dgauss(&s, P, y, n) : dpdo__stream_dlaplace(&s, P, y, n);
    if (rc) {
        fprintf(stderr, "sampler failed\n");
        free(y);
        return 1;
    }
    /* bins: |y| <= R one each (R chosen so every expected count is >= 5 at 10^7), tails pooled */
    double Z = 0, sp = (double)P;
    long long lim = (long long)(60 * sp) + 100;
    for (long long v = -lim; v <= lim; v++) Z += gauss ? exp(-(double)v * v / (2 * sp * sp)) : exp(-fabs((double)v) / sp);
    long long *cnt = calloc((size_t)(2 * R + 3), sizeof *cnt);
    for (size_t k = 0; k < n; k++) {
        int64_t v = y[k];
        cnt[v < -R ? 0 : v > R ? 2 * R + 2 : v + R + 1]++;
    }
    double x2 = 0, in = 0;
    for (int v = -R; v <= R; v++) {
        double p = (gauss ? exp(-(double)v * v / (2 * sp * sp)) : exp(-fabs((double)v) / sp)) / Z;
        in += p;
        double e = (double)n * p, o = (double)cnt[v + R + 1];
        x2 += (o - e) * (o - e) / e;
    }
    double et = (double)n * (1 - in) / 2;
    x2 += ((double)cnt[0] - et) * ((double)cnt[0] - et) / et;
    x2 += ((double)cnt[2 * R + 2] - et) * ((double)cnt[2 * R + 2] - et) / et;
    int df = 2 * R + 2;
    printf("secure_pmf_%s_%llu_chi2 %.1f (df %d, %zu draws, critical %.1f at 1e-6: %s)\n", gauss ? "dgauss" : "dlaplace",
           (unsigned long long)P, x2, df, n, crit, x2 < crit ? "pass" : "FAIL");
    free(cnt);
    free(y);
    return !(x2 < crit);
}

/* The large-scale tail: s = 2^20 grid steps (the secure releases' regime, where the geometric's
 * 32-bit first pass, the exp-free bounds and the double band decide), n draws binned by half
 * standard deviations on [-Ts/2, Ts/2) plus the two tails beyond (T = 9: |y| >= 4.5 s, expected
 * 34 per tail at 10^7), every bin's probability summed exactly from the PMF. Chi-square at 1e-6. */
static int pmf_tail(dpdo_rng *rng, size_t n, int T, double crit)
{
    const int64_t S = INT64_C(1) << 20, h = S / 2;
    int64_t *y = malloc(n * sizeof *y);
    dpdo__stream s;
    dpdo__stream_open(&s, rng, 0, 7777, DPDO_PURPOSE_NOISE);
    if (!y || dpdo__stream_dgauss(&s, (uint64_t)S, y, n)) {
        fprintf(stderr, "sampler failed\n");
        free(y);
        return 1;
    }
    int nb = 2 * T + 2; /* bin 0: y < -T h; bins 1..2T: [k h, (k+1) h), k = -T..T-1; bin 2T+1: y >= T h */
    long long cnt[64] = {0};
    double pr[64] = {0};
    for (size_t k = 0; k < n; k++) {
        int64_t v = y[k];
        int b = v < -T * h ? 0 : v >= T * h ? nb - 1 : (int)((v + T * h) / h) + 1;
        cnt[b]++;
    }
    double Z = 0;
    const double ss = 2.0 * (double)S * (double)S;
    for (int64_t v = -40 * S; v <= 40 * S; v++) {
        double w = exp(-(double)v * (double)v / ss);
        int b = v < -T * h ? 0 : v >= T * h ? nb - 1 : (int)((v + T * h) / h) + 1;
        pr[b] += w;
        Z += w;
    }
    double x2 = 0, tail_e = 0;
    long long tail_o = 0;
    for (int b = 0; b < nb; b++) {
        double e = (double)n * pr[b] / Z;
        x2 += ((double)cnt[b] - e) * ((double)cnt[b] - e) / e;
        if (b == 0 || b == nb - 1) tail_e += e, tail_o += cnt[b];
    }
    printf("secure_pmf_dgauss_2^20_tail_chi2 %.1f (df %d, %zu draws, half-sd bins, tails |y| >= %.1f s: %lld observed, "
           "%.1f expected; critical %.1f at 1e-6: %s)\n",
           x2, nb - 1, n, T / 2.0, tail_o, tail_e, crit, x2 < crit ? "pass" : "FAIL");
    free(y);
    return !(x2 < crit);
}

/* ---- 3. DP-DDA rounds ---------------------------------------------------------------------------- */
static double dda_rounds(int randomness, int rounds)
{
    const int32_t n = 20;
    const int64_t d = 2000, q = 500;
    dpdo_dataset *ds = NULL;
    dpdo_generate_options go;
    dpdo_generate_options_init(&go, sizeof go);
    go.n = (int64_t)n * q;
    go.d = d;
    if (dpdo_dataset_create(&ds) || dpdo_dataset_generate(ds, "epsilon-like", &go)) return NAN;
    dpdo_loss *loss = NULL;
    dpdo_loss_create(&loss, dpdo_loss_type_find("hinge"), NULL, d);
    dpdo_shard *sh[20];
    dpdo_node *nodes[20];
    for (int32_t i = 0; i < n; i++) {
        dpdo_shard_create_range(&sh[i], ds, (int64_t)i * q, q);
        dpdo_node_create(&nodes[i], sh[i], loss, 1.0);
    }
    dpdo_network *net = NULL;
    dpdo_network_create(&net);
    dpdo_network_set_complete(net, n);
    double lam = 1e-3;
    dpdo_regularizer *reg = NULL;
    dpdo_regularizer_create(&reg, dpdo_regularizer_type_find("l2"), NULL, d, &lam, 1);
    dpdo_ledger *led = NULL;
    dpdo_ledger_create(&led, n);
    dpdo_accountant *acc = NULL;
    dpdo_accountant_create(&acc, dpdo_accountant_type_find("rdp"), NULL, led, NULL);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = randomness;
    o.noise_mode = DPDO_NOISE_FIXED;
    o.sigma = 1.0;
    o.max_rounds = 1000000;
    o.max_epsilon = INFINITY;
    dpdo_algorithm *a = NULL;
    dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-dda"));
    int rc = dpdo_algorithm_setup(a, nodes, n, net, reg, acc, &o);
    if (!rc) rc = dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, 20);
    if (!rc) rc = dpdo_algorithm_prepare(a);
    double best = NAN;
    if (!rc) {
        dpdo_algorithm_run(a, 20, NULL); /* warm up */
        best = 0;
        for (int r = 0; r < 3; r++) {
            double t0 = now();
            for (int k = 0; k < rounds; k++) dpdo_algorithm_step(a);
            double t = now() - t0;
            best = fmax(best, rounds / t);
        }
    } else {
        fprintf(stderr, "dp-dda: %s\n", dpdo_algorithm_errmsg(a));
    }
    dpdo_algorithm_destroy(a);
    dpdo_accountant_destroy(acc);
    dpdo_ledger_destroy(led);
    dpdo_regularizer_destroy(reg);
    dpdo_network_destroy(net);
    for (int32_t i = 0; i < n; i++) {
        dpdo_node_destroy(nodes[i]);
        dpdo_shard_destroy(sh[i]);
    }
    dpdo_loss_destroy(loss);
    dpdo_dataset_destroy(ds);
    return best;
}

int main(void)
{
    int quick = getenv("DPDO_BENCH_QUICK") != NULL;
    if (sodium_init() < 0) return 1;
    dpdo_rng *rng = NULL;
    dpdo_rng_create(&rng, NULL, NULL, 1);
    keyed(rng);
    size_t n = quick ? 1000000 : 10000000;
    double bpd_g, bpd_l;
    double rg = rate_grid(rng, 1, UINT64_C(1) << 20, n, &bpd_g);
    double rl = rate_grid(rng, 0, UINT64_C(1) << 20, n, &bpd_l);
    double rc = rate_grid_calls(rng, 183172, quick ? 500 : 5000);
    rng->keys = NULL, rng->has_key = NULL, rng->nkeys = 0;
    double rf = rate_fast(rng, n);
    keyed(rng);
    double rn = numpy_rate(n);
    double cc = chacha_bytes_rate(), ca = aes_bytes_rate(), hz = cycles_per_s();
    double cpd = (double)cand_n[1] / (double)acc_n[1];
    printf("secure_dgauss_draws_per_s %.3g (exact discrete Gaussian on a grid, sigma = 2^20 steps, AES-256-CTR keyed, 1 core)\n", rg);
    printf("secure_dgauss_dda_calls_draws_per_s %.3g (the engine's shape: grid releases of d = 2000 at S = 183172 = "
           "ceil(2^12 sqrt 2000), one (node, round) stream each: key schedule and table lookup per call)\n", rc);
    printf("secure_dlaplace_draws_per_s %.3g (exact discrete Laplace, t = 2^20 steps)\n", rl);
    printf("fast_normal_draws_per_s %.3g (Philox + SIMD Box-Muller, reproducible mode, kernel %s)\n", rf,
           dpdo__rng_kernel_name(dpdo__rng_kernel_best()));
    printf("numpy_standard_normal_draws_per_s %.3g (NumPy default_rng PCG64 ziggurat, /usr/bin/python3)\n", rn);
    printf("secure_over_numpy_draws %.2f (goal >= 4, must >= 1.5); secure_over_reproducible_draws %.2f\n", rg / rn, rg / rf);
    printf("secure_bound_cipher_bytes_per_draw %.2f (dgauss), %.2f (dlaplace)\n", bpd_g, bpd_l);
    printf("secure_bound_candidates_per_dgauss %.4f (measured: %llu candidates for %llu draws; exact expectation "
           "2^33 B / (L Z))\n", cpd, cand_n[1], acc_n[1]);
    printf("secure_bound_aes256ctr_bytes_per_s %.3g (keystream alone: %.3g draws/s at %.2f bytes per draw; libsodium "
           "ChaCha20 %.3g bytes/s)\n", ca, ca / bpd_g, bpd_g, cc);
    printf("secure_bound_cycles_per_draw %.1f in all (at %.2f GHz), of which the cipher %.1f (%.2f bytes at %.3g B/s), "
           "the candidate kernel + grid rounding %.1f\n", hz / rg, hz / 1e9, hz * bpd_g / ca, bpd_g, ca,
           hz / rg - hz * bpd_g / ca);
    printf("secure_fallback_mpfr %llu of %llu slow comparisons (dgauss), %llu of %llu (dlaplace)\n", slow_n[1],
           cmp_n[1], slow_n[0], cmp_n[0]);
    printf("secure_goal %s: >= 2.5e8 draws/s goal, >= 1.2e8 required; what bounds it: %.1f cycles per draw, %.1f "
           "of them the AES keystream (%.2f bytes per draw), the rest the candidate kernel (8 candidates per AVX-512 "
           "vector: 2 gathers, the degree-5 bound, a compress-store) and the grid rounding\n",
           rg >= 2.5e8 ? "met" : rg >= 1.2e8 ? "required met, goal not" : "NOT MET", hz / rg, hz * bpd_g / ca, bpd_g);
    int bad = 0;
    size_t m = quick ? 1000000 : 10000000;
    bad |= pmf_case(rng, 1, 3, 14, 82.04, m);    /* df 30 */
    bad |= pmf_case(rng, 1, 50, 200, 551.45, m); /* df 402 */
    bad |= pmf_case(rng, 0, 4, 40, 157.82, m);   /* df 82 */
    bad |= quick ? pmf_tail(rng, m, 8, 58.65) : pmf_tail(rng, m, 9, 63.68); /* df 17 / 19 */
    rng->keys = NULL, rng->has_key = NULL, rng->nkeys = 0;
    dpdo_rng_destroy(rng);
    int rounds = quick ? 50 : 300;
    double rs = dda_rounds(DPDO_RANDOMNESS_SECURE, rounds), rr = dda_rounds(DPDO_RANDOMNESS_REPRODUCIBLE, rounds);
    printf("dpdda_b20_rounds_per_s_secure %.1f\n", rs);
    printf("dpdda_b20_rounds_per_s_reproducible %.1f\n", rr);
    printf("dpdda_b20_secure_over_reproducible_time %.2f (goal <= 1.5, must <= 3.5)\n", rr / rs);
    /* where the secure round's extra time goes: 20 messages of d = 2000 grid draws per round */
    double extra = 1.0 / rs - 1.0 / rr, samp = 20.0 * 2000.0 / rg;
    printf("dpdda_b20_secure_extra_ms_per_round %.3f, of which the exact sampler %.3f (40000 draws at %.3g/s); the "
           "rest (keys, stream setup, grid rounding) %.3f: the round is bound by the sampler; within 1.5x needs "
           ">= %.3g draws/s\n",
           1e3 * extra, 1e3 * samp, rg, 1e3 * (extra - samp), 40000.0 / (0.5 / rr));
    return bad;
}
