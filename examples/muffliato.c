/* SPDX-License-Identifier: BSD-3-Clause */
/* muffliato: Muffliato (Cyffers, Even, Bellet, Massoulie, arXiv 2206.05091) as a user algorithm
 * type (examples/muffliato.h), run on synthetic logistic-regression data. The engine certifies
 * the local-DP epsilon from the algorithm's declared releases; the program computes the paper's
 * pairwise network-DP figures eps_{u->v} from the gossip matrix's powers and prints them beside
 * it. --compare runs DP-DDA and DO-ADP at the same (epsilon, delta) on the same problem.
 * docs/muffliato.md. Builds against an installed libdpdo with pkg-config alone:
 *   cc muffliato.c $(pkg-config --cflags --libs dpdo) -lm     (-lm: its own sqrt and log)
 * Usage: muffliato [--mode gd|avg] [--nodes N] [--rows Q] [--dim D] [--graph ring|complete]
 *                  [--K K] [--rounds T] [--eps E] [--step S] [--seeds S] [--compare]
 *                  [--tune] [--baseline-batch B] [--reproducible]
 * --baseline-batch B: DP-DDA and DO-ADP sample B rows per round (default: their own batch);
 * Muffliato uses the whole shard. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dpdo/dpdo.h>
#include "muffliato.h"

typedef struct args {
    int mode, complete, compare, reproducible, tune;
    int64_t n, q, d, K, T, seeds, bbatch;
    double eps, delta, step, clip;
} args;

typedef struct problem {
    dpdo_dataset *ds;
    dpdo_shard **sh;
    dpdo_node **nd;
    dpdo_loss *loss;
    dpdo_network *net;
} problem;

static void problem_free(problem *p, int64_t n)
{
    dpdo_network_destroy(p->net);
    for (int64_t i = 0; p->nd && i < n; i++) dpdo_node_destroy(p->nd[i]);
    dpdo_loss_destroy(p->loss);
    for (int64_t i = 0; p->sh && i < n; i++) dpdo_shard_destroy(p->sh[i]);
    dpdo_dataset_destroy(p->ds);
    free(p->sh), free(p->nd);
}

static int problem_make(problem *p, const args *a)
{
    memset(p, 0, sizeof *p);
    p->sh = calloc((size_t)a->n, sizeof *p->sh);
    p->nd = calloc((size_t)a->n, sizeof *p->nd);
    if (!p->sh || !p->nd) return DPDO_E_NOMEM;
    dpdo_generate_options g;
    dpdo_generate_options_init(&g, sizeof g);
    g.n = a->n * a->q;
    g.d = a->d;
    g.seed = 7;
    int rc = dpdo_dataset_create(&p->ds);
    if (!rc) rc = dpdo_dataset_generate(p->ds, "epsilon-like", &g);
    if (!rc) rc = dpdo_dataset_partition(p->ds, a->n, NULL, 1, p->sh);
    if (!rc) rc = dpdo_loss_create(&p->loss, dpdo_loss_type_find("logistic"), NULL, a->d);
    for (int64_t i = 0; i < a->n && !rc; i++) rc = dpdo_node_create(&p->nd[i], p->sh[i], p->loss, 1.0);
    if (!rc) rc = dpdo_network_create(&p->net);
    if (!rc) rc = a->complete ? dpdo_network_set_complete(p->net, a->n) : dpdo_network_set_ring(p->net, a->n);
    return rc;
}

/* one run of `type` with the given seed; *F = objective at the averaged output, *err (averaging
 * mode) = mean over nodes of ||x_i - vbar||^2, *eps = the engine's local-DP epsilon, *sigma */
static int run_one(const problem *p, const args *a, const dpdo_algorithm_type *type, uint64_t seed,
                   double step, const double *vbar, double *F, double *err, double *eps, double *sigma)
{
    dpdo_ledger *led = NULL;
    dpdo_accountant *acc = NULL;
    dpdo_algorithm *alg = NULL;
    int rc = dpdo_ledger_create(&led, a->n);
    if (!rc) rc = dpdo_accountant_create(&acc, dpdo_accountant_type_find(DPDO_ACCOUNTANT_DEFAULT), NULL, led, NULL);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.max_rounds = a->mode == MUFF_AVERAGE && dpdo_algorithm_type_is_user(type) ? 1 : a->T;
    o.epsilon = a->eps;
    o.delta = a->delta;
    o.seed = seed;
    o.lipschitz = a->clip;
    o.randomness = a->reproducible ? DPDO_RANDOMNESS_REPRODUCIBLE : DPDO_RANDOMNESS_SECURE;
    if (!rc) rc = dpdo_algorithm_create(&alg, type);
    if (!rc) rc = dpdo_algorithm_setup(alg, p->nd, a->n, p->net, NULL, acc, &o);
    if (!rc && step > 0) rc = dpdo_algorithm_set_double(alg, DPDO_PARAM_STEP_SIZE, step);
    if (!rc && a->bbatch > 0 && !dpdo_algorithm_type_is_user(type))
        rc = dpdo_algorithm_set_int(alg, DPDO_PARAM_BATCH, a->bbatch);
    if (!rc) rc = dpdo_algorithm_run(alg, 0, NULL);
    if (rc == DPDO_DONE) rc = DPDO_OK;
    if (rc) fprintf(stderr, "muffliato: %s: %s: %s\n", dpdo_algorithm_type_name(type), dpdo_strerror(rc), alg ? dpdo_algorithm_errmsg(alg) : "");
    if (!rc) rc = dpdo_algorithm_objective(alg, DPDO_POINT_OUTPUT, DPDO_NODE_ALL, F);
    if (!rc) rc = dpdo_algorithm_privacy(alg, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, eps, NULL, NULL);
    if (!rc) rc = dpdo_algorithm_get_double(alg, DPDO_PARAM_SIGMA, sigma);
    *err = 0;
    if (!rc && vbar) {
        double *x = malloc((size_t)a->d * sizeof *x);
        for (int64_t i = 0; x && i < a->n && !rc; i++) {
            rc = dpdo_algorithm_get_output(alg, i, x, a->d);
            for (int64_t k = 0; k < a->d; k++) *err += (x[k] - vbar[k]) * (x[k] - vbar[k]) / (double)a->n;
        }
        if (!x) rc = DPDO_E_NOMEM;
        free(x);
    }
    dpdo_algorithm_destroy(alg);
    dpdo_accountant_destroy(acc);
    dpdo_ledger_destroy(led);
    return rc;
}

static void mean_se(const double *v, int64_t n, double *m, double *se)
{
    double s = 0, ss = 0;
    for (int64_t i = 0; i < n; i++) s += v[i];
    *m = s / (double)n;
    for (int64_t i = 0; i < n; i++) ss += (v[i] - *m) * (v[i] - *m);
    *se = n > 1 ? sqrt(ss / (double)(n - 1) / (double)n) : 0;
}

/* (epsilon, delta) of an RDP curve alpha -> alpha c: min over alpha > 1 of
 * alpha c + log(1/delta)/(alpha - 1) = c + 2 sqrt(c log(1/delta)) (at alpha = 1 + sqrt(log(1/delta)/c)) */
static double rdp_linear_to_dp(double c, double delta)
{
    return c + 2 * sqrt(c * log(1 / delta));
}

/* network-DP figures over all pairs u != v: min, median, max (at delta), with the RDP slope
 * c_{u->v} = eps_{u->v}(alpha) / alpha */
static int network_dp(const problem *p, const args *a, double Delta, double sigma, double out[3])
{
    int64_t n = a->n, m = 0;
    double *W = malloc((size_t)(n * n) * sizeof *W), *e = malloc((size_t)(n * n) * sizeof *e);
    unsigned char *adj = muff_adjacency(p->net);
    int rc = !W || !e || !adj ? DPDO_E_NOMEM : dpdo_network_get_weights(p->net, W, n * n);
    for (int64_t u = 0; u < n && !rc; u++)
        for (int64_t v = 0; v < n; v++) {
            if (u == v) continue;
            double r = a->mode == MUFF_AVERAGE ? muff_pndp_avg(W, adj, n, a->K, u, v, 1, Delta, sigma, 1)
                                               : muff_pndp_gd(W, adj, n, a->T, u, v, 1, Delta, sigma);
            e[m++] = rdp_linear_to_dp(r, a->delta);
        }
    for (int64_t i = 1; i < m; i++) /* insertion sort: n (n - 1) values */
        for (int64_t j = i; j > 0 && e[j - 1] > e[j]; j--) {
            double t = e[j];
            e[j] = e[j - 1];
            e[j - 1] = t;
        }
    if (!rc) out[0] = e[0], out[1] = e[m / 2], out[2] = e[m - 1];
    free(W), free(e), free(adj);
    return rc;
}

int main(int argc, char **argv)
{
    args a = {MUFF_GD, 0, 0, 0, 0, 16, 100, 10, 1, 50, 5, 0, 1.0, 1e-5, 0.5, 1.0};
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(s, "--compare")) a.compare = 1;
        else if (!strcmp(s, "--tune")) a.tune = 1;
        else if (!strcmp(s, "--reproducible")) a.reproducible = 1;
        else if (v && !strcmp(s, "--mode")) a.mode = strcmp(argv[++i], "avg") == 0 ? MUFF_AVERAGE : MUFF_GD;
        else if (v && !strcmp(s, "--graph")) a.complete = strcmp(argv[++i], "complete") == 0;
        else if (v && !strcmp(s, "--nodes")) a.n = atoll(argv[++i]);
        else if (v && !strcmp(s, "--rows")) a.q = atoll(argv[++i]);
        else if (v && !strcmp(s, "--dim")) a.d = atoll(argv[++i]);
        else if (v && !strcmp(s, "--K")) a.K = atoll(argv[++i]);
        else if (v && !strcmp(s, "--rounds")) a.T = atoll(argv[++i]);
        else if (v && !strcmp(s, "--seeds")) a.seeds = atoll(argv[++i]);
        else if (v && !strcmp(s, "--baseline-batch")) a.bbatch = atoll(argv[++i]);
        else if (v && !strcmp(s, "--eps")) a.eps = atof(argv[++i]);
        else if (v && !strcmp(s, "--step")) a.step = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--mode gd|avg] [--nodes N] [--rows Q] [--dim D] [--graph ring|complete] "
                            "[--K K] [--rounds T] [--eps E] [--step S] [--seeds S] [--compare] [--tune] [--baseline-batch B] [--reproducible]\n",
                    argv[0]);
            return 2;
        }
    }
    if (a.n < 2 || a.q < 2 || a.d < 1 || a.K < 1 || a.T < 1 || a.seeds < 1 || !(a.eps > 0)) {
        fprintf(stderr, "muffliato: bad arguments\n");
        return 2;
    }
    problem p;
    muff_config cfg = {a.mode, a.K, 1.0, 0};
    dpdo_algorithm_type *mt = NULL;
    double *F = calloc((size_t)a.seeds, sizeof *F), *E = calloc((size_t)a.seeds, sizeof *E), *vbar = NULL;
    int rc = F && E ? problem_make(&p, &a) : DPDO_E_NOMEM;
    if (!rc) rc = dpdo_algorithm_type_define(&MUFF_VTABLE, &cfg, &mt);
    if (!rc && a.mode == MUFF_AVERAGE) { /* the target: the average of the nodes' statistics */
        double *g = malloc((size_t)a.d * sizeof *g), *z = calloc((size_t)a.d, sizeof *z);
        vbar = calloc((size_t)a.d, sizeof *vbar);
        if (!g || !z || !vbar) rc = DPDO_E_NOMEM;
        for (int64_t i = 0; i < a.n && !rc; i++) {
            rc = dpdo_node_eval(p.nd[i], z, a.d, NULL, 0, a.clip, NULL, g, NULL);
            for (int64_t k = 0; k < a.d; k++) vbar[k] += g[k] / (double)a.n;
        }
        free(g), free(z);
    }
    if (rc) {
        fprintf(stderr, "muffliato: set-up failed: %s\n", dpdo_strerror(rc));
        return 1;
    }
    printf("# %s, %lld nodes on a %s, %lld rows each, d = %lld, K = %lld gossip steps, %lld %s, "
           "target (%g, %g), %s noise, %lld seeds\n",
           a.mode == MUFF_AVERAGE ? "averaging" : "GD (logistic)", (long long)a.n, a.complete ? "complete graph" : "ring",
           (long long)a.q, (long long)a.d, (long long)a.K, (long long)(a.mode == MUFF_AVERAGE ? 1 : a.T),
           a.mode == MUFF_AVERAGE ? "round" : "rounds", a.eps, a.delta, a.reproducible ? "reproducible" : "secure",
           (long long)a.seeds);
    const dpdo_algorithm_type *types[3] = {mt, dpdo_algorithm_type_find("dp-dda"), dpdo_algorithm_type_find("do-adp")};
    int ntypes = a.compare && a.mode == MUFF_GD ? 3 : 1;
    double sigma_m = 0, eps_m = 0;
    /* --tune: each type at every step of the grid, the best mean objective reported (tuned on
     * the evaluation seeds: optimistic for every type alike); else Muffliato at --step and the
     * others at their own default step */
    static const double grid[] = {0.01, 0.03, 0.1, 0.3, 1, 3};
    int ngrid = a.tune && a.mode == MUFF_GD ? (int)(sizeof grid / sizeof grid[0]) : 1;
    for (int t = 0; t < ntypes && !rc; t++) {
        double best = INFINITY, bF = 0, bsF = 0, bE = 0, bsE = 0, bstep = 0, eps = 0, sigma = 0;
        for (int gi = 0; gi < ngrid && !rc; gi++) {
            double step = ngrid > 1 ? grid[gi] : t == 0 ? a.step : 0, mF, sF, mE, sE;
            for (int64_t s = 0; s < a.seeds && !rc; s++)
                rc = run_one(&p, &a, types[t], 1000 + (uint64_t)s, step, vbar, &F[s], &E[s], &eps, &sigma);
            if (rc) break;
            mean_se(F, a.seeds, &mF, &sF);
            mean_se(E, a.seeds, &mE, &sE);
            if (ngrid > 1) printf("#   %s step %g: objective %.5f +- %.5f\n", dpdo_algorithm_type_name(types[t]), step, mF, sF);
            if (mF < best) best = mF, bF = mF, bsF = sF, bE = mE, bsE = sE, bstep = step;
        }
        if (rc) break;
        if (t == 0) sigma_m = sigma, eps_m = eps;
        if (a.mode == MUFF_AVERAGE)
            printf("%-10s local-DP eps %.4f (sigma %.4g): mean squared error to the average %.4g +- %.2g\n",
                   dpdo_algorithm_type_name(types[t]), eps, sigma, bE, bsE);
        else
            printf("%-10s local-DP eps %.4f (sigma %.4g, step %s%g): objective %.5f +- %.5f\n",
                   dpdo_algorithm_type_name(types[t]), eps, sigma, bstep > 0 ? "" : "default ", bstep, bF, bsF);
    }
    if (!rc) {
        double Delta = 2 * a.clip / (double)a.q, nd[3] = {0, 0, 0};
        if (a.mode == MUFF_GD && a.K != 1) {
            printf("network DP: the GD bound (Theorem 11) is stated for one gossip step per round: run with --K 1\n");
        } else if (!(rc = network_dp(&p, &a, Delta, sigma_m, nd))) {
            double rel = a.mode == MUFF_AVERAGE ? 1.0 : (double)a.T;
            double loc = rdp_linear_to_dp(rel * Delta * Delta / (2 * sigma_m * sigma_m), a.delta);
            printf("network DP eps_{u->v} at delta %g over all pairs u != v: min %.4f, median %.4f, max %.4f\n"
                   "  (Renyi bounds converted at their best order; the same conversion of the local-DP Renyi "
                   "curve gives %.4f, the engine's accountant %.4f)\n",
                   a.delta, nd[0], nd[1], nd[2], loc, eps_m);
        }
    }
    dpdo_algorithm_type_destroy(mt);
    problem_free(&p, a.n);
    free(F), free(E), free(vbar);
    return rc ? 1 : 0;
}
