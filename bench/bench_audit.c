/* SPDX-License-Identifier: BSD-3-Clause */
/* The privacy audit table of docs/privacy-audit.md (issue 17):
 *  1. every algorithm type in a small configuration chosen so that the canary's release is
 *     observable and epsilon is meaningful (2 nodes, the canary node holds only the canary, one
 *     sample per release, target epsilon 4 at delta 1e-5 with the "rdp" accountant, 3 rounds;
 *     Fed-PLT one local step per round, DP-WOR-SGD one pass): the claimed epsilon (rigorous and
 *     the paper's), the 95% lower bound of the release audit (transcript view), runs, time;
 *     then one-run audits (1000 canaries) of some of them;
 *  2. DP-DDA in PAPER mode below Theorem 1's T_min (200 nodes, one round, epsilon 0.5);
 *  3. tightness: the plain Gaussian mechanism (one release, worst-case pair) at true epsilon
 *     1, 2, 4, 8 (delta 1e-5) with 10^4 .. 10^6 runs per dataset, the bound beside what the
 *     statistics allow at that size (the best Clopper-Pearson bound from the exact TPR/FPR of
 *     every threshold at the test split's size).
 * DPDO_AUDIT_RUNS overrides the runs per dataset of part 1 (default 100000). The weakened
 * mechanisms (VIOLATION) need the test build: tests/test_audit.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dpdo/dpdo.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct cfg {
    const char *alg;
    int noise;    /* DPDO_NOISE_* */
    int64_t T;
    int key;      /* one extra parameter, or 0 */
    double val;
} cfg;

static const cfg table[] = {
    {"dp-dda", DPDO_NOISE_RIGOROUS, 3, 0, 0},
    {"dp-dda-baseline", DPDO_NOISE_RIGOROUS, 3, 0, 0},
    {"fed-plt", DPDO_NOISE_RIGOROUS, 3, DPDO_PARAM_FED_EPOCHS, 1},
    {"fedpd", DPDO_NOISE_NONE, 3, 0, 0}, /* the Fed-PLT baselines are not private and take no h */
    {"fedlin", DPDO_NOISE_NONE, 3, 0, 0},
    {"tamuna", DPDO_NOISE_NONE, 3, 0, 0},
    {"led", DPDO_NOISE_NONE, 3, 0, 0},
    {"5gcs", DPDO_NOISE_NONE, 3, 0, 0},
    {"do-adp", DPDO_NOISE_RIGOROUS, 3, 0, 0},
    {"dpdo", DPDO_NOISE_RIGOROUS, 3, 0, 0},
    {"cpgt", DPDO_NOISE_RIGOROUS, 3, 0, 0},
    {"dp-wor-sgd", DPDO_NOISE_RIGOROUS, 3, 0, 0},
    {"dp-sgd-wr", DPDO_NOISE_RIGOROUS, 3, 0, 0},
};

static int audit(const cfg *c, int method, int64_t runs, double eps, int64_t nodes, dpdo_audit_result *r,
                 double *secs)
{
    dpdo_algorithm_options ao;
    dpdo_algorithm_options_init(&ao, sizeof ao);
    ao.epsilon = eps;
    ao.max_rounds = c->T;
    ao.noise_mode = c->noise;
    dpdo_audit_options o;
    dpdo_audit_options_init(&o, sizeof o);
    o.method = method;
    o.runs = runs;
    o.canaries = 1000;
    o.nodes = nodes;
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    if (method != DPDO_AUDIT_WHITE_BOX) { /* the 0.2 set-up: the adversary's node, "rdp" */
        o.single_node = 1;
        o.accountant = "rdp";
    }
    if (c->noise == DPDO_NOISE_NONE) o.l2 = 0; /* the Fed-PLT baselines solve min sum f_i, h = 0 */
    dpdo_audit *a = NULL;
    int rc = dpdo_audit_create(&a);
    if (!rc) rc = dpdo_audit_setup(a, dpdo_algorithm_type_find(c->alg), &ao, &o);
    if (!rc && c->key) rc = dpdo_audit_set_param(a, c->key, c->val);
    /* DO-ADP's default coordinate clamp shrinks a one-coordinate canary: l2 clipping for one-run */
    if (!rc && method == DPDO_AUDIT_ONE_RUN && strcmp(c->alg, "do-adp") == 0)
        rc = dpdo_audit_set_param(a, DPDO_PARAM_CLIP, 1.0);
    r->struct_size = sizeof *r;
    double t0 = now();
    if (!rc) rc = dpdo_audit_run(a, r);
    *secs = now() - t0;
    if (rc) fprintf(stderr, "%s: %s\n", c->alg, dpdo_audit_errmsg(a));
    dpdo_audit_destroy(a);
    return rc;
}

static void fmt_eps(char *b, size_t n, double e)
{
    if (isnan(e)) snprintf(b, n, "-");
    else if (isinf(e)) snprintf(b, n, "inf");
    else snprintf(b, n, "%.3f", e);
}

static double phibar(double x)
{
    return 0.5 * erfc(x / sqrt(2.0));
}

/* the best bound the statistics allow with n test runs per dataset: exact rates of every
 * threshold of N(mu, 1) against N(0, 1), expected counts, Clopper-Pearson */
static double stat_limit(double mu, int64_t n, double delta)
{
    double best = 0;
    for (int g = 0; g <= 4000; g++) {
        double t = -6 + (mu + 14) * g / 4000.0, e = 0;
        int64_t k1 = llround(phibar(t - mu) * (double)n), k0 = llround(phibar(t) * (double)n);
        dpdo_audit_epsilon_from_counts(k1, n, k0, n, delta, 0.95, &e);
        if (e > best) best = e;
        dpdo_audit_epsilon_from_counts(n - k1, n, n - k0, n, delta, 0.95, &e);
        if (e > best) best = e;
    }
    return best;
}

/* the same DP-DDA run without the auditor: reset + 3 rounds, public API, for the speed column */
static double plain_us_per_run(int64_t runs)
{
    double X[8] = {0.5, 0.5, 0.5, 0.5, 0.3, -0.2, 0.1, 0}, y[2] = {1, -1}, lam = 0.1;
    dpdo_dataset *ds = NULL;
    dpdo_shard *sh[2] = {NULL, NULL};
    dpdo_loss *loss = NULL;
    dpdo_node *nd[2] = {NULL, NULL};
    dpdo_network *net = NULL;
    dpdo_regularizer *reg = NULL;
    dpdo_ledger *led = NULL;
    dpdo_accountant *acc = NULL;
    dpdo_algorithm *alg = NULL;
    double us = NAN;
    dpdo_algorithm_options ao;
    dpdo_algorithm_options_init(&ao, sizeof ao);
    ao.epsilon = 4;
    ao.max_rounds = 3;
    ao.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    if (dpdo_dataset_create(&ds) || dpdo_dataset_set_dense(ds, 2, 4, X, y, DPDO_COPY) ||
        dpdo_loss_create(&loss, dpdo_loss_type_find("logistic"), NULL, 4) || dpdo_shard_create_range(&sh[0], ds, 0, 1) ||
        dpdo_shard_create_range(&sh[1], ds, 1, 1) || dpdo_node_create(&nd[0], sh[0], loss, 1) ||
        dpdo_node_create(&nd[1], sh[1], loss, 1) || dpdo_network_create(&net) || dpdo_network_set_complete(net, 2) ||
        dpdo_regularizer_create(&reg, dpdo_regularizer_type_find("l2"), NULL, 4, &lam, 1) ||
        dpdo_ledger_create(&led, 2) || dpdo_accountant_create(&acc, dpdo_accountant_type_find("rdp"), NULL, led, NULL) ||
        dpdo_algorithm_create(&alg, dpdo_algorithm_type_find("dp-dda")) ||
        dpdo_algorithm_setup(alg, nd, 2, net, reg, acc, &ao) || dpdo_algorithm_prepare(alg))
        goto out;
    double t0 = now();
    for (int64_t r = 0; r < runs; r++) {
        dpdo_algorithm_reset(alg);
        dpdo_algorithm_run(alg, 0, NULL);
    }
    us = 1e6 * (now() - t0) / (double)runs;
out:
    dpdo_algorithm_destroy(alg);
    dpdo_accountant_destroy(acc);
    dpdo_ledger_destroy(led);
    dpdo_regularizer_destroy(reg);
    dpdo_network_destroy(net);
    dpdo_node_destroy(nd[0]), dpdo_node_destroy(nd[1]);
    dpdo_shard_destroy(sh[0]), dpdo_shard_destroy(sh[1]);
    dpdo_loss_destroy(loss);
    dpdo_dataset_destroy(ds);
    return us;
}

int main(void)
{
    int64_t runs = getenv("DPDO_AUDIT_RUNS") ? atoll(getenv("DPDO_AUDIT_RUNS")) : 100000;
    if (runs < 20) runs = 20;
    int fails = 0;
    printf("# 1. release audit, transcript view, 95%% confidence, %lld runs per dataset\n", (long long)runs);
    printf("| algorithm | noise | rounds | claimed eps (rigorous) | claimed eps (paper) at delta | eps_lower | verdict | "
           "runs | time (s) | us/run |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t k = 0; k < sizeof table / sizeof *table; k++) {
        dpdo_audit_result r;
        double secs;
        if (audit(&table[k], DPDO_AUDIT_RELEASE, runs, 4.0, 2, &r, &secs)) {
            fails++;
            continue;
        }
        char ce[32], pe[64], el[32];
        fmt_eps(ce, sizeof ce, r.eps_claimed);
        if (isnan(r.eps_paper)) snprintf(pe, sizeof pe, "-");
        else snprintf(pe, sizeof pe, "%.3g at %.3g%s", r.eps_paper, r.delta_paper, r.paper_valid ? "" : " (invalid)");
        fmt_eps(el, sizeof el, r.eps_lower);
        printf("| %s | %s | %lld | %s | %s | %s | %s | %lld | %.2f | %.2f |\n", table[k].alg,
               table[k].noise == DPDO_NOISE_NONE ? "none" : "rigorous", (long long)r.rounds, ce, pe, el,
               dpdo_audit_verdict_name(r.verdict), (long long)r.runs, secs, 1e6 * secs / (double)r.runs);
        if (r.verdict == DPDO_AUDIT_VIOLATION) fails++;
    }
    printf("\n# 1b. white-box audit (the default: every release, composed GDP mu, every node, auto "
           "accountant), secure path, 95%% confidence, %lld runs per dataset and node\n", (long long)(runs / 10));
    printf("| algorithm | rounds | releases | claimed eps | white box | threshold test | lower / claimed | verdict "
           "| time (s) |\n|---|---|---|---|---|---|---|---|---|\n");
    for (size_t k = 0; k < sizeof table / sizeof *table; k++) {
        dpdo_audit_result r;
        double secs;
        if (table[k].noise == DPDO_NOISE_NONE) continue; /* nothing to compose */
        if (audit(&table[k], DPDO_AUDIT_WHITE_BOX, runs / 10 < 200 ? 200 : runs / 10, 4.0, 2, &r, &secs)) {
            fails++;
            continue;
        }
        char ce[32], ew[32], eb[32];
        fmt_eps(ce, sizeof ce, r.eps_claimed);
        fmt_eps(ew, sizeof ew, r.eps_lower_white);
        fmt_eps(eb, sizeof eb, r.eps_lower_black);
        printf("| %s | %lld | %lld | %s | %s | %s | %.3f | %s | %.2f |\n", table[k].alg, (long long)r.rounds,
               (long long)r.releases, ce, ew, eb, r.eps_lower / r.eps_claimed, dpdo_audit_verdict_name(r.verdict),
               secs);
        if (r.verdict == DPDO_AUDIT_VIOLATION) fails++;
    }
    printf("\nspeed reference: the same DP-DDA run (2 nodes, 3 rounds) without the auditor, reset + run: %.2f us "
           "per run\n", plain_us_per_run(runs));
    printf("\n# one-run audits (1000 canaries at one node, full batch, one audited run + one pilot)\n");
    printf("| algorithm | claimed eps (rigorous) | eps_lower | right / guesses | verdict | time (s) |\n"
           "|---|---|---|---|---|---|\n");
    const char *one[] = {"dp-dda", "dp-dda-baseline", "do-adp", "dp-wor-sgd", "dp-sgd-wr", "dpdo"};
    for (size_t k = 0; k < sizeof one / sizeof *one; k++) {
        cfg c = {one[k], DPDO_NOISE_RIGOROUS, 3, 0, 0};
        dpdo_audit_result r;
        double secs;
        if (audit(&c, DPDO_AUDIT_ONE_RUN, 100, 4.0, 2, &r, &secs)) {
            fails++;
            continue;
        }
        char ce[32], el[32];
        fmt_eps(ce, sizeof ce, r.eps_claimed);
        fmt_eps(el, sizeof el, r.eps_lower);
        printf("| %s | %s | %s | %lld / %lld | %s | %.2f |\n", one[k], ce, el, (long long)r.correct,
               (long long)r.guesses, dpdo_audit_verdict_name(r.verdict), secs);
        if (r.verdict == DPDO_AUDIT_VIOLATION) fails++;
    }

    printf("\n# 2. DP-DDA, PAPER noise (Theorem 1) below T_min: 200 nodes, 1 round, eps 0.5, delta0 1e-5\n");
    {
        cfg c = {"dp-dda", DPDO_NOISE_PAPER, 1, 0, 0};
        dpdo_audit_result r;
        double secs;
        if (audit(&c, DPDO_AUDIT_RELEASE, 20000, 0.5, 200, &r, &secs)) {
            fails++;
        } else {
            printf("paper: eps %.4f at delta %.4f (preconditions %s); audit at that delta: eps_lower %.3f -> %s\n",
                   r.eps_paper, r.delta_paper, r.paper_valid ? "hold" : "violated", r.eps_lower_paper,
                   dpdo_audit_verdict_name(r.paper_verdict));
            printf("rigorous: eps %.3f at delta %g; audit eps_lower %.3f -> %s (canary node %lld, %lld runs, %.2f s)\n",
                   r.eps_claimed, r.delta, r.eps_lower, dpdo_audit_verdict_name(r.verdict), (long long)r.canary_node,
                   (long long)r.runs, secs);
            if (r.paper_verdict != DPDO_AUDIT_VIOLATION || r.verdict != DPDO_AUDIT_CONSISTENT) fails++;
        }
    }

    printf("\n# 3. tightness: Gaussian mechanism, one release, worst-case pair, delta 1e-5, 95%%\n");
    printf("| true eps | mu = Delta/sigma | runs per dataset | test runs | eps_lower | statistics allow | "
           "eps_lower / true | time (s) |\n|---|---|---|---|---|---|---|---|\n");
    const double epss[] = {1, 2, 4, 8};
    const int64_t sizes[] = {10000, 100000, 1000000};
    int64_t nmax = 1000000;
    double *s1 = malloc((size_t)nmax * sizeof *s1), *s0 = malloc((size_t)nmax * sizeof *s0);
    dpdo_rng *rng = NULL;
    if (!s1 || !s0 || dpdo_rng_create(&rng, NULL, NULL, 20261124) != DPDO_OK) return 1;
    for (int i = 0; i < 4; i++) {
        /* mu with exactly this (eps, delta): the analytic Gaussian mechanism, inverted by bisection */
        double lo = 1e-3, hi = 50;
        for (int it = 0; it < 200; it++) {
            double mid = (lo + hi) / 2, e = 0;
            dpdo_gaussian_epsilon(mid, 1e-5, &e);
            if (e < epss[i]) lo = mid;
            else hi = mid;
        }
        double mu = (lo + hi) / 2;
        for (int j = 0; j < 3; j++) {
            int64_t n = sizes[j];
            double t0 = now();
            dpdo_rng_normal(rng, 2 * (uint64_t)i, (uint64_t)j, 0, 0, s0, n);
            dpdo_rng_normal(rng, 2 * (uint64_t)i + 1, (uint64_t)j, 0, 0, s1, n);
            for (int64_t k = 0; k < n; k++) s1[k] += mu;
            double e = 0;
            dpdo_audit_bound_scores(s1, s0, n, 0.5, 1e-5, 0.95, &e, NULL, NULL, NULL, NULL);
            double secs = now() - t0, lim = stat_limit(mu, n - n / 2, 1e-5);
            printf("| %g | %.4f | %lld | %lld | %.3f | %.3f | %.2f | %.2f |\n", epss[i], mu, (long long)n,
                   (long long)(n - n / 2), e, lim, e / epss[i], secs);
            if (n == 1000000 && (epss[i] == 1 || epss[i] == 4) && !(e >= 0.5 * epss[i])) fails++;
            if (e > epss[i]) fails++;
        }
    }
    dpdo_rng_destroy(rng);
    free(s1), free(s0);
    if (fails) printf("bench_audit: %d failures\n", fails);
    return fails ? 1 : 0;
}
