/* SPDX-License-Identifier: BSD-3-Clause */
/* Secure randomness (issue 15, docs/privacy.md):
 *  - two default (SECURE) private runs of every private algorithm type differ in every
 *    coordinate of every node's iterate; two REPRODUCIBLE runs with one seed are bit-identical;
 *    SECURE runs with host keys on every node are bit-identical, and a different key on one node
 *    changes that node;
 *  - every coordinate of every message a secure DP-DDA run sends (read through the transport
 *    interface) is an integer below 2^52 times one power-of-two grid gamma >= sigma 2^-30; a
 *    reproducible run's messages are not on any such grid (so the check can fail);
 *  - the old attack: knowing the seed of a reproducible run, the round-1 noise is regenerated
 *    with the public RNG and the noiseless message recovered to within rounding; in the default
 *    mode the same subtraction leaves an error of the order of sigma in every coordinate;
 *  - secure events are charged as DPDO_MECH_DISCRETE_GAUSSIAN / _LAPLACE in the ledger text;
 *  - a 10^5-draw chi-square smoke test of the exact samplers against their exact PMFs (the
 *    10^7-draw version is in bench/bench_secure.c), and the grid release's exactness;
 *  - set_node_key's bad input, randomness_source and the privacy notes. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpdo/dpdo.h"
#include "dpdo/transport.h"
#include "engine/engine_impl.h"
#include "rng/rng_impl.h"
#include "core/core_impl.h"
#include "harness.h"
#include "fixture.h"
#include "alg_fixture.h"

static uint64_t tstate = 0x2545F4914F6CDD1Dull;
static double urand(void) { return h_urand(&tstate); }

enum { N = 4, Q = 40, D = 6 };

typedef struct fx {
    double X[N * Q * D], Y[N * Q];
    dpdo_dataset *ds;
    dpdo_shard *sh[N];
    dpdo_loss *loss;
    dpdo_node *nodes[N];
    dpdo_network *net;
    dpdo_regularizer *reg;
} fx;

static void fx_make(fx *f)
{
    memset(f, 0, sizeof *f);
    for (int i = 0; i < N * Q; i++) {
        double nn = 0;
        for (int k = 0; k < D; k++) {
            f->X[i * D + k] = urand() - 0.5;
            nn += f->X[i * D + k] * f->X[i * D + k];
        }
        for (int k = 0; k < D; k++) f->X[i * D + k] /= sqrt(nn) + 1e-3;
        f->Y[i] = urand() < 0.5 ? -1 : 1;
    }
    tfx_nodes_make(f->X, f->Y, N, Q, D, "logistic", &f->ds, &f->loss, f->sh, f->nodes);
    CHECK_EQ(dpdo_network_create(&f->net), DPDO_OK);
    CHECK_EQ(dpdo_network_set_complete(f->net, N), DPDO_OK);
    double lam = 0.01;
    CHECK_EQ(dpdo_regularizer_create(&f->reg, dpdo_regularizer_type_find("l2"), NULL, D, &lam, 1), DPDO_OK);
}

static void fx_free(fx *f)
{
    dpdo_regularizer_destroy(f->reg);
    dpdo_network_destroy(f->net);
    tfx_nodes_free(N, f->ds, f->loss, f->sh, f->nodes);
}

/* Every noisy release, through the test build's noise tap. */
typedef struct taps {
    double v[20000], grid[20000];
    int64_t n;
    int64_t bad_grid; /* secure draws whose values are not integers below 2^52 times their grid */
} taps;

static void tap_fn(void *user, int64_t node, const double *out, size_t n, double grid)
{
    (void)node;
    taps *t = user;
    for (size_t k = 0; k < n; k++) {
        if (grid > 0) {
            double m = out[k] / grid;
            t->bad_grid += !(m == rint(m) && fabs(m) < 0x1p52);
        }
        if (t->n < 20000) {
            t->v[t->n] = out[k];
            t->grid[t->n++] = grid;
        }
    }
}

typedef struct run_cfg {
    int randomness;
    int noise_mode;
    double sigma;
    int keys;       /* 0 none, 1 host keys on every node, 2: as 1 but node 2 gets another key */
    uint64_t seed;
    int64_t rounds;
} run_cfg;

/* Run `type` and write every node's iterate into x[N * D]; returns 1 if the run was private. */
static int run(fx *f, const char *type, const run_cfg *c, double *x, taps *tp)
{
    dpdo_ledger *led = NULL;
    dpdo_accountant *acc = NULL;
    CHECK_EQ(dpdo_ledger_create(&led, N), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&acc, dpdo_accountant_type_find("rdp"), NULL, led, NULL), DPDO_OK);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = c->randomness;
    o.noise_mode = c->noise_mode;
    o.sigma = c->sigma;
    o.seed = c->seed;
    o.max_rounds = c->rounds;
    o.epsilon = 2.0;
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find(type)), DPDO_OK);
    int rc = dpdo_algorithm_setup(a, f->nodes, N, f->net, tfx_alg_nonprivate(type) ? NULL : f->reg, acc, &o);
    CHECK_MSG(rc == DPDO_OK, "%s: setup: %s", type, dpdo_algorithm_errmsg(a));
    dpdo_solver *sol = NULL;
    tfx_alg_apply(a, type, c->noise_mode != DPDO_NOISE_NONE, D, &sol);
    if (tp) {
        memset(tp, 0, sizeof *tp);
        CHECK_EQ(dpdo__algorithm_set_noise_tap(a, tap_fn, tp), DPDO_OK);
    }
    if (c->keys)
        for (int i = 0; i < N; i++) {
            unsigned char k[32];
            for (int b = 0; b < 32; b++) k[b] = (unsigned char)(17 * i + b + (c->keys == 2 && i == 2 ? 101 : 0));
            CHECK_EQ(dpdo_algorithm_set_node_key(a, i, k), DPDO_OK);
        }
    int64_t steps = 0;
    rc = dpdo_algorithm_run(a, c->rounds, &steps);
    CHECK_MSG(rc >= 0, "%s: run: %s", type, dpdo_algorithm_errmsg(a));
    for (int i = 0; i < N; i++) {
        rc = dpdo_algorithm_get_iterate(a, i, x + i * D, D);
        if (rc == DPDO_E_INVAL) rc = dpdo_algorithm_get_iterate(a, DPDO_NODE_ALL, x + i * D, D); /* one model */
        CHECK_MSG(rc == DPDO_OK, "%s: iterate: %s", type, dpdo_algorithm_errmsg(a));
    }
    const char *notes = dpdo_algorithm_privacy_notes(a);
    int64_t charges = 0;
    for (int i = 0; i < N; i++) charges += dpdo_ledger_charges(led, i);
    int priv = strstr(notes, "noise disabled") == NULL && charges > 0;
    if (priv) {
        const char *src = dpdo_algorithm_randomness_source(a);
        if (c->randomness == DPDO_RANDOMNESS_SECURE) CHECK_MSG(strncmp(src, "secure:", 7) == 0, "%s: %s", type, src);
        else {
            CHECK_MSG(strncmp(src, "reproducible", 12) == 0, "%s: %s", type, src);
            CHECK_STR_CONTAINS(notes, "reproducible mode");
        }
    }
    dpdo_algorithm_destroy(a);
    dpdo_solver_destroy(sol);
    dpdo_accountant_destroy(acc);
    dpdo_ledger_destroy(led);
    return priv;
}

/* The largest power of two that divides x (inf for 0). */
static double granule(double x)
{
    if (x == 0) return INFINITY;
    int e;
    double m = frexp(fabs(x), &e);
    uint64_t M = (uint64_t)ldexp(m, 53); /* exact */
    return ldexp(1.0, e - 53 + __builtin_ctzll(M));
}

static void runs_differ_and_repeat(void)
{
    fx f;
    fx_make(&f);
    int nt = 0, nprivate = 0, npublic = 0;
    static taps ta, tb, tc, td;
    for (const dpdo_algorithm_type *t = dpdo_algorithm_type_next(NULL); t; t = dpdo_algorithm_type_next(t), nt++) {
        const char *name = dpdo_algorithm_type_name(t);
        double a[N * D], b[N * D], c[N * D], d[N * D];
        /* the Fed-PLT baselines are non-private (noise NONE): nothing secret, the run is replayable */
        if (tfx_alg_nonprivate(name)) { /* non-private baselines: prepare refuses noise */
            npublic++;
            continue;
        }
        run_cfg sec = {DPDO_RANDOMNESS_SECURE, DPDO_NOISE_RIGOROUS, NAN, 0, 7, 3};
        int priv = run(&f, name, &sec, a, &ta);
        run(&f, name, &sec, b, &tb);
        run_cfg rep = sec;
        rep.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
        run(&f, name, &rep, c, &tc);
        run(&f, name, &rep, d, &td);
        CHECK_MSG(memcmp(c, d, sizeof c) == 0, "%s: two reproducible runs differ", name);
        CHECK_MSG(tc.n == td.n && memcmp(tc.v, td.v, (size_t)tc.n * sizeof(double)) == 0,
                  "%s: two reproducible runs release different values", name);
        CHECK_MSG(priv, "%s: the run is not private", name);
        nprivate++;
        int fedplt = tfx_alg(name)->noise_in_solver; /* Fed-PLT: noise drawn inside the local solver */
        if (!fedplt) {
            /* every released coordinate differs; every one is on its grid */
            CHECK_MSG(ta.n > 0 && ta.n == tb.n, "%s: %lld / %lld released values", name, (long long)ta.n,
                      (long long)tb.n);
            if (tc.n != ta.n) tc.n = 0; /* DP-WOR-SGD's reproducible pass draw is not tapped */
            int64_t same = 0, same_rep = 0;
            for (int64_t k = 0; k < ta.n && k < tb.n; k++) same += ta.v[k] == tb.v[k];
            for (int64_t k = 0; k < ta.n && k < tc.n; k++) same_rep += ta.v[k] == tc.v[k];
            /* two independent discrete Gaussians with s = sigma / grid agree with probability about
             * 1 / (2 s sqrt(pi)) per value (s can be a few hundred when d is small): a handful of equal
             * values is chance, a replayable run would agree in all of them */
            CHECK_MSG(same * 50 <= ta.n, "%s: two secure runs release %lld equal values of %lld", name,
                      (long long)same, (long long)ta.n);
            CHECK_MSG(same_rep == 0, "%s: secure and reproducible release %lld equal values", name, (long long)same_rep);
            CHECK_MSG(ta.bad_grid == 0 && tb.bad_grid == 0, "%s: %lld values off their grid", name, (long long)ta.bad_grid);
            for (int64_t k = 0; k < ta.n; k++) CHECK(ta.grid[k] > 0 && (k >= tc.n || tc.grid[k] == 0));
        }
        int same = 0;
        for (int k = 0; k < N * D; k++) same += a[k] == b[k];
        if (fedplt) {
            CHECK_MSG(same == 0, "%s: two secure runs agree in %d of %d coordinates", name, same, N * D);
            /* its noise is drawn in the local solver on a power-of-two grid too (the grid here is about
             * 2^-10 gamma L_eff / (q sqrt(D)) ~ 2^-17): every coordinate of the final local models is a
             * multiple of 2^-30 or coarser; continuous noise leaves 53-bit mantissas (finer than 2^-40) */
            int coarse_sec = 0, coarse_rep = 0;
            for (int k = 0; k < N * D; k++) coarse_sec += granule(a[k]) >= 0x1p-30, coarse_rep += granule(c[k]) >= 0x1p-40;
            CHECK_MSG(coarse_sec == N * D, "%s: %d of %d secure coordinates off a grid", name, N * D - coarse_sec, N * D);
            CHECK_MSG(coarse_rep * 10 < N * D, "%s: %d of %d reproducible coordinates on a coarse grid", name, coarse_rep,
                      N * D);
        }
        /* host keys on every node: a secure run that is replayable by whoever holds the keys */
        run_cfg keyed = sec;
        keyed.keys = 1;
        run(&f, name, &keyed, a, &ta);
        run(&f, name, &keyed, b, &tb);
        CHECK_MSG(memcmp(a, b, sizeof a) == 0 && ta.n == tb.n && memcmp(ta.v, tb.v, (size_t)ta.n * 8) == 0,
                  "%s: secure runs with the same host keys differ", name);
    }
    CHECK(nt >= 13); /* every registered type */
    /* every type but the non-private baselines (the 0.2 set: dp-dda, dp-dda-baseline, do-adp,
     * dpdo, cpgt, dp-wor-sgd, dp-sgd-wr, fed-plt) */
    CHECK(nprivate >= 8 && nprivate + npublic == nt);
    /* a different key on node 2 changes DP-DDA's release of node 2 only (round 1) */
    double a[N * D], b[N * D];
    run_cfg k1 = {DPDO_RANDOMNESS_SECURE, DPDO_NOISE_FIXED, 0.5, 1, 3, 1};
    run_cfg k2 = k1;
    k2.keys = 2;
    run(&f, "dp-dda-baseline", &k1, a, &ta);
    run(&f, "dp-dda-baseline", &k2, b, &tb);
    CHECK_EQ(ta.n, tb.n);
    int diff = 0;
    for (int64_t k = 0; k < ta.n; k++) diff += ta.v[k] != tb.v[k];
    CHECK_MSG(diff == D, "%d values changed", diff);
    fx_free(&f);
}

/* ---- messages through a one-process transport ---------------------------------------------- */
typedef struct capture {
    double *v;
    int64_t n, cap;
    int64_t src[20000]; /* sender of each value */
    int64_t pos[20000]; /* its position in the sender's message */
} capture;

static int t_layout(void *u, int64_t n, int64_t *proc, int64_t *self)
{
    (void)u;
    for (int64_t i = 0; i <= n; i++) proc[i] = 0;
    *self = 0;
    return 0;
}
static int t_exchange(void *u, int status, const dpdo_message *msg, int64_t nmsg, int32_t *any_failed)
{
    capture *c = u;
    *any_failed = status != 0;
    for (int64_t m = 0; m < nmsg; m++) {
        if (msg[m].src < 0) continue;
        for (int32_t s = 0; s < msg[m].nseg; s++) {
            const double *p = msg[m].seg[s].data;
            for (int64_t k = 0; k < msg[m].seg[s].bytes / 8 && c->n < c->cap; k++) {
                c->src[c->n] = msg[m].src;
                c->pos[c->n] = k;
                c->v[c->n++] = p[k];
            }
        }
    }
    return 0;
}
static int t_agree(void *u, int *status, int64_t *node, char *msg, size_t len)
{
    (void)u, (void)status, (void)node, (void)msg, (void)len;
    return 0;
}
static int t_share(void *u, void *base, int64_t rb, int64_t n)
{
    (void)u, (void)base, (void)rb, (void)n;
    return 0;
}
static int t_sum(void *u, int64_t *v, int64_t count)
{
    (void)u, (void)v, (void)count;
    return 0;
}
static int t_bcast(void *u, int64_t from, void *buf, int64_t bytes)
{
    (void)u, (void)from, (void)buf, (void)bytes;
    return 0;
}
static int t_send(void *u, int64_t to, const void *buf, int64_t bytes)
{
    (void)u, (void)to, (void)buf, (void)bytes;
    return 0;
}
static int t_recv(void *u, int64_t from, void *buf, int64_t bytes)
{
    (void)u, (void)from, (void)buf, (void)bytes;
    return 0;
}
/* half of the nodes on another (imaginary) process */
static int t_layout_half(void *u, int64_t n, int64_t *proc, int64_t *self)
{
    (void)u;
    for (int64_t i = 0; i < n; i++) proc[i] = i < n / 2 ? 0 : 1;
    proc[n] = 0;
    *self = 0;
    return 0;
}
static const dpdo_transport_type half_type = {
    sizeof(dpdo_transport_type), "half", t_layout_half, t_exchange, t_agree, t_share, t_sum, t_bcast, t_send, t_recv,
    NULL,
};

static const dpdo_transport_type capture_type = {
    sizeof(dpdo_transport_type), "capture", t_layout, t_exchange, t_agree, t_share, t_sum, t_bcast, t_send, t_recv,
    NULL,
};

static void grid_ledger(void)
{
    fx f;
    fx_make(&f);
    /* secure DP-DDA and the DPDO baseline are charged as discrete mechanisms, reproducible as before */
    const char *types[] = {"dp-dda", "dpdo"};
    const char *want[2][2] = {{"event 5 ", "event 1 "}, {"event 4 ", "event 2 "}};
    double epsv[2][2];
    for (int t = 0; t < 2; t++)
        for (int mode = 0; mode < 2; mode++) {
            dpdo_ledger *led = NULL;
            dpdo_accountant *acc = NULL;
            CHECK_EQ(dpdo_ledger_create(&led, N), DPDO_OK);
            CHECK_EQ(dpdo_accountant_create(&acc, dpdo_accountant_type_find("rdp"), NULL, led, NULL), DPDO_OK);
            dpdo_algorithm_options o;
            dpdo_algorithm_options_init(&o, sizeof o);
            o.randomness = mode ? DPDO_RANDOMNESS_REPRODUCIBLE : DPDO_RANDOMNESS_SECURE;
            o.max_rounds = 3;
            dpdo_algorithm *a = NULL;
            CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find(types[t])), DPDO_OK);
            CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, N, f.net, f.reg, acc, &o), DPDO_OK);
            int64_t steps = 0;
            CHECK_MSG(dpdo_algorithm_run(a, 3, &steps) >= 0, "%s", dpdo_algorithm_errmsg(a));
            char text[8192];
            int64_t len = 0;
            CHECK_EQ(dpdo_ledger_save(led, text, sizeof text, &len), DPDO_OK);
            CHECK_MSG(strstr(text, want[t][mode]) != NULL, "%s mode %d: no '%s' in the ledger", types[t], mode,
                      want[t][mode]);
            double eps = 0;
            CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eps, NULL, NULL), DPDO_OK);
            epsv[t][mode] = eps;
            dpdo_algorithm_destroy(a);
            dpdo_accountant_destroy(acc);
            dpdo_ledger_destroy(led);
        }
    /* DP-DDA: the discrete event keeps the calibrated ratio sens/sigma, so the same epsilon */
    CHECK_MSG(fabs(epsv[0][0] / epsv[0][1] - 1) < 1e-9, "dp-dda: secure eps %g, reproducible %g", epsv[0][0], epsv[0][1]);
    /* DPDO: the same pure epsilon per round; RDP of the discrete Laplace from pure DP only (a little looser) */
    CHECK_MSG(epsv[1][0] >= epsv[1][1] && epsv[1][0] < 1.01 * epsv[1][1], "dpdo: secure eps %g, reproducible %g",
              epsv[1][0], epsv[1][1]);
    fx_free(&f);
}

/* ---- the old attack -------------------------------------------------------------------------- */
/* Round 1 of the DP-DDA baseline: node i sends z_i + a_1 (g_i + sigma xi_i) (z_i = 0 at round 1
 * here). An observer of the messages who knows the seed of a reproducible run regenerates xi_i
 * with the public Philox API (stream (i, 1, NOISE)): msg - msg_noiseless is then a_1 sigma xi_i to
 * rounding, i.e. the noise can be subtracted (expected and documented: reproducible mode protects
 * only against parties who do not know the seed). In the default mode the same guess explains
 * nothing: the residual is of the size of the difference itself. */
static double attack_residual(const capture *c0, const capture *c1, dpdo_rng *rng, double sigma)
{
    double sxy = 0, sxx = 0, dmax = 0;
    static double guess[20000], diff[20000];
    for (int64_t k = 0; k < c1->n; k++) {
        double z;
        CHECK_EQ(dpdo_rng_normal(rng, (uint64_t)c1->src[k], 1, DPDO_PURPOSE_NOISE, (uint64_t)c1->pos[k], &z, 1),
                 DPDO_OK);
        guess[k] = sigma * z;
        diff[k] = c1->v[k] - c0->v[k];
        sxy += guess[k] * diff[k];
        sxx += guess[k] * guess[k];
        dmax = fabs(diff[k]) > dmax ? fabs(diff[k]) : dmax;
    }
    double a1 = sxy / sxx, res = 0; /* the attacker's estimate of the public step a_1 */
    for (int64_t k = 0; k < c1->n; k++) {
        double r = fabs(diff[k] - a1 * guess[k]);
        res = r > res ? r : res;
    }
    return res / dmax;
}

static void old_attack(void)
{
    fx f;
    fx_make(&f);
    const double sigma = 0.8;
    static double msg[3][20000];
    static capture cap[3];
    for (int r = 0; r < 3; r++) { /* 0: noiseless (ground truth), 1: reproducible, 2: secure */
        dpdo_ledger *led = NULL;
        dpdo_accountant *acc = NULL;
        CHECK_EQ(dpdo_ledger_create(&led, N), DPDO_OK);
        CHECK_EQ(dpdo_accountant_create(&acc, dpdo_accountant_type_find("rdp"), NULL, led, NULL), DPDO_OK);
        dpdo_algorithm_options o;
        dpdo_algorithm_options_init(&o, sizeof o);
        o.seed = 99;
        o.randomness = r == 2 ? DPDO_RANDOMNESS_SECURE : DPDO_RANDOMNESS_REPRODUCIBLE;
        o.noise_mode = r == 0 ? DPDO_NOISE_NONE : DPDO_NOISE_FIXED;
        o.sigma = sigma;
        o.max_rounds = 1;
        dpdo_algorithm *a = NULL;
        CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-dda-baseline")), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, N, f.net, f.reg, acc, &o), DPDO_OK);
        memset(&cap[r], 0, sizeof cap[r]);
        cap[r].v = msg[r], cap[r].cap = 20000;
        CHECK_EQ(dpdo_algorithm_set_transport(a, &capture_type, &cap[r]), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
        dpdo_algorithm_destroy(a);
        dpdo_accountant_destroy(acc);
        dpdo_ledger_destroy(led);
    }
    CHECK(cap[0].n >= D);
    CHECK_EQ(cap[1].n, cap[0].n);
    CHECK_EQ(cap[2].n, cap[0].n);
    dpdo_rng *rng = NULL;
    CHECK_EQ(dpdo_rng_create(&rng, NULL, NULL, 99), DPDO_OK);
    double rep = attack_residual(&cap[0], &cap[1], rng, sigma);
    double sec = attack_residual(&cap[0], &cap[2], rng, sigma);
    printf("# attack residual / signal: reproducible %.3g, secure %.3g\n", rep, sec);
    CHECK_MSG(rep < 1e-9, "reproducible: the noise should be removable with the seed (residual %g)", rep);
    CHECK_MSG(sec > 0.2, "secure: the seed's noise explains the secure messages (residual %g)", sec);
    /* and two secure runs differ in every coordinate of every message */
    dpdo_rng_destroy(rng);
    fx_free(&f);
}

/* ---- samplers ----------------------------------------------------------------------------------- */
/* Chi-square of n draws against the exact PMF p(y) ~ w(y) on |y| <= R with the tails pooled. The
 * critical values are the chi-square 1 - 1e-6 quantiles (scipy.stats.chi2.ppf(1 - 1e-6, df)):
 * a correct sampler fails with probability 1e-6. */
static double chi2(const int64_t *y, int64_t n, double (*w)(double, double), double par, int R, int *df)
{
    double Z = 0;
    for (int v = -200000; v <= 200000; v++) Z += w(v, par);
    static int64_t cnt[2 * 64 + 3];
    memset(cnt, 0, sizeof cnt);
    for (int64_t k = 0; k < n; k++) {
        int64_t v = y[k];
        int b = v < -R ? 0 : v > R ? 2 * R + 2 : (int)(v + R + 1);
        cnt[b]++;
    }
    double x2 = 0, tail = 0;
    for (int v = -R; v <= R; v++) {
        double e = (double)n * w(v, par) / Z;
        x2 += ((double)cnt[v + R + 1] - e) * ((double)cnt[v + R + 1] - e) / e;
        tail += w(v, par) / Z;
    }
    double et = (double)n * (1 - tail) / 2;
    x2 += ((double)cnt[0] - et) * ((double)cnt[0] - et) / et;
    x2 += ((double)cnt[2 * R + 2] - et) * ((double)cnt[2 * R + 2] - et) / et;
    *df = 2 * R + 2;
    return x2;
}
static double w_gauss(double v, double s) { return exp(-v * v / (2 * s * s)); }
static double w_lap(double v, double t) { return exp(-fabs(v) / t); }

static void sampler_pmf_smoke(void)
{
    dpdo_rng *rng = NULL;
    CHECK_EQ(dpdo_rng_create(&rng, NULL, NULL, 5), DPDO_OK);
    unsigned char key[32];
    for (int b = 0; b < 32; b++) key[b] = (unsigned char)(b * 7 + 1);
    unsigned char has = 1;
    rng->keys = key, rng->has_key = &has, rng->nkeys = 1; /* a keyed (AES-256-CTR) stream */
    enum { M = 100000 };
    static int64_t y[M];
    const struct { int gauss; uint64_t P; int R; double crit; } cases[] = {
        {1, 3, 9, 65.42},  /* df 20 */
        {1, 7, 20, 100.69}, /* df 42 */
        {0, 2, 12, 75.55}, /* df 26 */
        {0, 5, 30, 129.95}, /* df 62 */
    };
    /* mode 0: the table sampler; 1: the same with the double band widened 2^44 times (test hook)
     * so that MPFR decides most comparisons (fewer draws: it is slow); 2: the previous all-integer
     * CKS sampler; 3: the previous lazy-comparison CKS sampler. All against the same exact PMF. */
    for (int mode = 0; mode < 4; mode++)
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        dpdo__stream st;
        dpdo__stream_open(&st, rng, 0, c + 1 + 10 * (size_t)mode, DPDO_PURPOSE_NOISE);
        CHECK(dpdo__stream_keyed(&st));
        int64_t Mm = mode == 1 ? 20000 : M;
        if (mode == 1) st.exact_widen = 47;
        int rc = mode == 2 ? (cases[c].gauss ? dpdo__stream_dgauss_cks(&st, cases[c].P, y, (size_t)Mm)
                                             : dpdo__stream_dlaplace_cks(&st, cases[c].P, y, (size_t)Mm))
                 : mode == 3 ? (cases[c].gauss ? dpdo__stream_dgauss_lazy(&st, cases[c].P, y, (size_t)Mm)
                                             : dpdo__stream_dlaplace_lazy(&st, cases[c].P, y, (size_t)Mm))
                           : (cases[c].gauss ? dpdo__stream_dgauss(&st, cases[c].P, y, (size_t)Mm)
                                             : dpdo__stream_dlaplace(&st, cases[c].P, y, (size_t)Mm));
        CHECK_EQ(rc, DPDO_OK);
        if (mode == 1) /* the fallback really decided many comparisons */
            CHECK_MSG(st.exact_slow * 3 > st.exact_cmp && st.exact_slow >= (uint64_t)Mm / 3,
                      "MPFR decided %llu of %llu", (unsigned long long)st.exact_slow, (unsigned long long)st.exact_cmp);
        if (mode == 0 || mode == 3) /* and normally (almost) never: about 2^-40 per comparison */
            CHECK_MSG(st.exact_slow <= 1, "MPFR decided %llu", (unsigned long long)st.exact_slow);
        if (mode == 0) /* the table sampler's acceptance rate is known exactly: L Z / (2^33 B) */
            CHECK_MSG(st.exact_cand >= (uint64_t)Mm && st.exact_acc == (uint64_t)Mm, "%llu of %llu",
                      (unsigned long long)st.exact_acc, (unsigned long long)st.exact_cand);
        int df;
        double x2 = chi2(y, Mm, cases[c].gauss ? w_gauss : w_lap, (double)cases[c].P, cases[c].R, &df);
        printf("# %s %s(%llu): chi2 = %.1f, df %d, critical %.1f (MPFR decided %llu of %llu comparisons)\n",
               mode == 0 ? "table" : mode == 1 ? "table-widened" : mode == 2 ? "cks-integer" : "cks-lazy", cases[c].gauss ? "dgauss" : "dlaplace",
               (unsigned long long)cases[c].P, x2, df, cases[c].crit, (unsigned long long)st.exact_slow,
               (unsigned long long)st.exact_cmp);
        CHECK_MSG(x2 < cases[c].crit, "chi2 %g >= %g", x2, cases[c].crit);
    }
    /* a large scale: mean and variance (sd of the variance estimate ~ sqrt(2/M) relative) */
    dpdo__stream st;
    dpdo__stream_open(&st, rng, 0, 50, DPDO_PURPOSE_NOISE);
    const uint64_t S = UINT64_C(1) << 20;
    CHECK_EQ(dpdo__stream_dgauss(&st, S, y, M), DPDO_OK);
    double m = 0, v = 0;
    for (int k = 0; k < M; k++) m += (double)y[k];
    m /= M;
    for (int k = 0; k < M; k++) v += ((double)y[k] - m) * ((double)y[k] - m);
    v /= M - 1;
    CHECK_MSG(fabs(m) < 5 * (double)S / sqrt(M), "mean %g", m);
    CHECK_MSG(fabs(v / ((double)S * S) - 1) < 5 * sqrt(2.0 / M), "variance ratio %g", v / ((double)S * S));
    /* the grid release: exact multiples, the rounding of the input to the nearest grid point */
    double x[1000], x0[1000];
    for (int k = 0; k < 1000; k++) x0[k] = x[k] = (urand() - 0.5) * 10;
    char err[DPDO__ERRMSG_LEN];
    const double g = 0x1p-20;
    CHECK_EQ(dpdo__grid_add_dgauss(&st, 1u << 12, g, x, 1000, err), DPDO_OK);
    double sse = 0;
    for (int k = 0; k < 1000; k++) {
        double q = x[k] / g;
        CHECK(q == rint(q));
        sse += (x[k] - x0[k]) * (x[k] - x0[k]);
    }
    double sd = sqrt(sse / 1000) / (g * 4096); /* ~ 1 */
    CHECK_MSG(sd > 0.9 && sd < 1.1, "noise sd %g grid steps of 4096", sd);
    /* bad input */
    CHECK_EQ(dpdo__grid_add_dgauss(&st, 1u << 12, 0.3, x, 10, err), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(err, "power of two");
    x[3] = NAN;
    CHECK_EQ(dpdo__grid_add_dgauss(&st, 1u << 12, g, x, 10, err), DPDO_E_NUMERIC);
    CHECK_STR_CONTAINS(err, "coordinate 3");
    x[3] = 0x1p40; /* 2^60 grid steps */
    CHECK_EQ(dpdo__grid_add_dlaplace(&st, 7, g, x, 10, err), DPDO_E_NUMERIC);
    CHECK_STR_CONTAINS(err, "2^52");
    double gm;
    uint64_t SS;
    CHECK_EQ(dpdo__grid_choose(1.0, 2.0, 100, DPDO__GRID_ETA, 0, &gm, &SS, err), DPDO_OK);
    CHECK(gm * 10 <= DPDO__GRID_ETA * 2.0 && gm * SS >= 1.0 * (1 + DPDO__GRID_ETA));
    CHECK_EQ(dpdo__grid_choose(1e9, 1e-9, 100, DPDO__GRID_ETA, 0, &gm, &SS, err), DPDO_E_UNSUPPORTED);
    rng->keys = NULL, rng->has_key = NULL, rng->nkeys = 0;
    dpdo_rng_destroy(rng);
}

/* A process draws keys only for the nodes it hosts; reset draws new ones; host keys stay. */
/* The table sampler accepts a candidate with probability L Z / (2^33 B) exactly (Z: the sum of the
 * unnormalised PMF over the integers; docs/privacy.md "The table sampler"): the count of
 * acceptances is binomial. |z| < 5 fails a correct sampler with probability 6e-7 per case. */
static void table_acceptance_rate(void)
{
    dpdo_rng *rng = NULL;
    CHECK_EQ(dpdo_rng_create(&rng, NULL, NULL, 6), DPDO_OK);
    const struct { int lap; uint64_t P; } cases[] = {{0, 3}, {0, 50}, {0, 4096}, {0, 183171}, {0, UINT64_C(1) << 31}, {1, 2}, {1, 1000}, {1, UINT64_C(1) << 30}};
    static int64_t y[200000];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        dpdo__stream st;
        dpdo__stream_open(&st, rng, 0, 100 + c, DPDO_PURPOSE_NOISE);
        uint64_t L, B;
        CHECK_EQ(dpdo__dtab_info(&st, cases[c].lap, cases[c].P, &L, &B), 0);
        CHECK_EQ(cases[c].lap ? dpdo__stream_dlaplace(&st, cases[c].P, y, 200000) : dpdo__stream_dgauss(&st, cases[c].P, y, 200000), DPDO_OK);
        double P = (double)cases[c].P;
        /* Z: sqrt(2 pi) S (the theta-function correction is below e^-170 for S >= 3); coth(1 / 2T) */
        double Z = cases[c].lap ? 1.0 / tanh(0.5 / P) : sqrt(2 * M_PI) * P;
        double pa = (double)L * Z / (0x1p33 * (double)B), nc = (double)st.exact_cand;
        double z = ((double)st.exact_acc - nc * pa) / sqrt(nc * pa * (1 - pa));
        printf("# table %s(%llu): accepted %llu of %llu, expected rate %.6f, z = %.2f\n", cases[c].lap ? "dlaplace" : "dgauss",
               (unsigned long long)cases[c].P, (unsigned long long)st.exact_acc, (unsigned long long)st.exact_cand, pa, z);
        CHECK(pa > 0.75 && pa < 1);
        CHECK_MSG(fabs(z) < 5, "acceptance z = %g", z);
    }
    /* the AVX-512 and the portable candidate kernels make the same (exact) decisions: the same
     * draws from the same keystream, and the same grid release */
    static int64_t y2[200000];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        dpdo__stream s1, s2;
        dpdo__stream_open(&s1, rng, 0, 300 + c, DPDO_PURPOSE_NOISE);
        dpdo__stream_open(&s2, rng, 0, 300 + c, DPDO_PURPOSE_NOISE);
        s2.exact_scalar = 1;
        CHECK_EQ(cases[c].lap ? dpdo__stream_dlaplace(&s1, cases[c].P, y, 20000) : dpdo__stream_dgauss(&s1, cases[c].P, y, 20000), DPDO_OK);
        CHECK_EQ(cases[c].lap ? dpdo__stream_dlaplace(&s2, cases[c].P, y2, 20000) : dpdo__stream_dgauss(&s2, cases[c].P, y2, 20000), DPDO_OK);
        CHECK(memcmp(y, y2, 20000 * sizeof y[0]) == 0);
    }
    double g1[1000], g2[1000];
    for (int k = 0; k < 1000; k++) g1[k] = g2[k] = (k - 500) * 0.37;
    char err[DPDO__ERRMSG_LEN];
    dpdo__stream s1, s2;
    dpdo__stream_open(&s1, rng, 0, 400, DPDO_PURPOSE_NOISE);
    dpdo__stream_open(&s2, rng, 0, 400, DPDO_PURPOSE_NOISE);
    s2.exact_scalar = 1;
    CHECK_EQ(dpdo__grid_add_dgauss(&s1, 5000, 0x1p-10, g1, 1000, err), DPDO_OK);
    CHECK_EQ(dpdo__grid_add_dgauss(&s2, 5000, 0x1p-10, g2, 1000, err), DPDO_OK);
    CHECK(memcmp(g1, g2, sizeof g1) == 0);
    dpdo_rng_destroy(rng);
}

static void keys_hosted_only(void)
{
    fx f;
    fx_make(&f);
    dpdo_ledger *led = NULL;
    dpdo_accountant *acc = NULL;
    CHECK_EQ(dpdo_ledger_create(&led, N), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&acc, dpdo_accountant_type_find("rdp"), NULL, led, NULL), DPDO_OK);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.max_rounds = 3;
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
    dpdo_node *nodes[N];
    for (int i = 0; i < N; i++) { /* this process holds the data of nodes 0 and 1 only */
        if (i < N / 2) nodes[i] = f.nodes[i];
        else CHECK_EQ(dpdo_node_create_remote(&nodes[i], f.loss, Q, 1.0), DPDO_OK);
    }
    CHECK_EQ(dpdo_algorithm_setup(a, nodes, N, f.net, f.reg, acc, &o), DPDO_OK);
    unsigned char k[32] = {9};
    CHECK_EQ(dpdo_algorithm_set_node_key(a, 1, k), DPDO_OK);
    static capture c;
    CHECK_MSG(dpdo_algorithm_set_transport(a, &half_type, &c) == DPDO_OK, "%s", dpdo_algorithm_errmsg(a));
    CHECK_EQ(dpdo__algorithm_key_source(a, 0), DPDO__KEY_ENTROPY);
    CHECK_EQ(dpdo__algorithm_key_source(a, 1), DPDO__KEY_HOST);
    CHECK_EQ(dpdo__algorithm_key_source(a, 2), DPDO__KEY_NONE); /* hosted elsewhere: no key here */
    CHECK_EQ(dpdo__algorithm_key_source(a, 3), DPDO__KEY_NONE);
    CHECK_STR_CONTAINS(dpdo_algorithm_randomness_source(a), "secure:");
    CHECK_EQ(dpdo_algorithm_reset(a), DPDO_OK);
    CHECK_EQ(dpdo__algorithm_key_source(a, 0), DPDO__KEY_ENTROPY);
    CHECK_EQ(dpdo__algorithm_key_source(a, 1), DPDO__KEY_HOST);
    CHECK_EQ(dpdo__algorithm_key_source(a, 2), DPDO__KEY_NONE);
    dpdo_algorithm_destroy(a);
    for (int i = N / 2; i < N; i++) dpdo_node_destroy(nodes[i]);
    dpdo_accountant_destroy(acc);
    dpdo_ledger_destroy(led);
    fx_free(&f);
}

static void key_api(void)
{
    fx f;
    fx_make(&f);
    unsigned char k[32] = {1};
    CHECK_EQ(dpdo_algorithm_set_node_key(NULL, 0, k), DPDO_E_INVAL);
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_node_key(a, 0, k), DPDO_E_STATE);
    CHECK_STR_CONTAINS(dpdo_algorithm_randomness_source(a), "");
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    CHECK_EQ(o.randomness, DPDO_RANDOMNESS_SECURE); /* the default */
    o.noise_mode = DPDO_NOISE_NONE;
    CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, N, f.net, f.reg, NULL, &o), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_node_key(a, 0, NULL), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "key is NULL");
    CHECK_EQ(dpdo_algorithm_set_node_key(a, N, k), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "node 4");
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
    CHECK_STR_CONTAINS(dpdo_algorithm_randomness_source(a), "not a private run");
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
    CHECK_EQ(dpdo_algorithm_set_node_key(a, 0, k), DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_reset(a), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_node_key(a, 0, k), DPDO_OK);
    dpdo_algorithm_destroy(a);
    fx_free(&f);
}

/* DP-DDA adds its continuous noise inside the pass that forms the message (issue 19): drawn
 * ahead of the gradient for d <= 4096 (the hinge gradient of its one sampled row formed in that
 * pass too), in chunks of 512 inside the pass above. A no-op tap forces
 * the old separate draw (dpdo__eng_noise_gauss, then z + a_t g); both must give the same bits for
 * every d around the two thresholds, odd d (the last chunk is odd) and both regularizers. */
static void nop_tap(void *user, int64_t node, const double *out, size_t n, double grid)
{
    (void)node, (void)out, (void)n, (void)grid;
    ++*(int64_t *)user;
}

static void fused_noise_bits(const char *type)
{
    static const int64_t DS[] = {7, 2000, 4096, 4097, 5001, 6144};
    enum { NN = 4, QQ = 6 };
    for (size_t c = 0; c < sizeof DS / sizeof DS[0]; c++)
        for (int l1 = 0; l1 < 2; l1++) {
            int64_t d = DS[c];
            double *X = malloc(sizeof(double) * (size_t)(NN * QQ * d)), Y[NN * QQ];
            uint64_t u = 77 + (uint64_t)d;
            for (int64_t k = 0; k < NN * QQ * d; k++)
                X[k] = (h_urand(&u) - 0.5) / sqrt((double)d);
            for (int k = 0; k < NN * QQ; k++)
                Y[k] = k % 3 ? 1.0 : -1.0;
            dpdo_dataset *ds;
            dpdo_loss *lo;
            dpdo_shard *sh[NN];
            dpdo_node *nodes[NN];
            tfx_nodes_make(X, Y, NN, QQ, d, "hinge", &ds, &lo, sh, nodes);
            dpdo_network *net;
            CHECK_EQ(dpdo_network_create(&net), DPDO_OK);
            CHECK_EQ(dpdo_network_set_complete(net, NN), DPDO_OK);
            dpdo_regularizer *reg;
            double lam = 1e-2;
            /* DO-ADP needs a smooth regularizer: its second variant has none (the fused pass
             * without h) */
            const int adp = strcmp(type, "dp-dda") != 0;
            if (adp && l1)
                reg = NULL;
            else
                CHECK_EQ(dpdo_regularizer_create(&reg, dpdo_regularizer_type_find(l1 ? "l1" : "l2"),
                                                 NULL, d, &lam, 1),
                         DPDO_OK);
            double *out[2];
            int64_t ntap[2] = {0, 0};
            for (int v = 0; v < 2; v++) {
                dpdo_algorithm_options o;
                dpdo_algorithm_options_init(&o, sizeof o);
                o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
                o.noise_mode = DPDO_NOISE_FIXED;
                o.sigma = 0.3;
                o.max_rounds = 5;
                o.max_epsilon = INFINITY;
                dpdo_ledger *led = NULL;
                dpdo_accountant *acc = NULL;
                CHECK_EQ(dpdo_ledger_create(&led, NN), DPDO_OK);
                CHECK_EQ(dpdo_accountant_create(&acc, dpdo_accountant_type_find("rdp"), NULL, led, NULL),
                         DPDO_OK);
                dpdo_algorithm *a = NULL;
                CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find(type)), DPDO_OK);
                /* DO-ADP: the l2 variant clips each sample in l2 (the pass that adds h and the
                 * noise), the other clamps coordinates (its default) */
                if (adp && !l1) o.clip = 1.0;
                int rs = dpdo_algorithm_setup(a, nodes, NN, net, reg, acc, &o);
                CHECK_MSG(rs == DPDO_OK, "setup: %s", dpdo_algorithm_errmsg(a));
                if (v) CHECK_EQ(dpdo__algorithm_set_noise_tap(a, nop_tap, &ntap[v]), DPDO_OK);
                int rc = dpdo_algorithm_run(a, 5, NULL);
                CHECK_MSG(rc >= 0, "d = %lld: %s", (long long)d, dpdo_algorithm_errmsg(a));
                out[v] = malloc(sizeof(double) * (size_t)(NN * d));
                for (int i = 0; i < NN; i++)
                    CHECK_EQ(dpdo_algorithm_get_output(a, i, out[v] + i * d, d), DPDO_OK);
                dpdo_algorithm_destroy(a);
                dpdo_accountant_destroy(acc);
                dpdo_ledger_destroy(led);
            }
            CHECK_MSG(strcmp(type, "dp-dda") ? ntap[1] > 0 : ntap[1] == 10,
                      "%s, d = %lld, %s: %lld noise draws on the unfused path", type, (long long)d,
                      l1 ? "l1" : "l2", (long long)ntap[1]);
            CHECK_MSG(memcmp(out[0], out[1], sizeof(double) * (size_t)(NN * d)) == 0,
                      "%s, d = %lld, %s: fused and separate noise differ", type, (long long)d,
                      l1 ? "l1" : "l2");
            free(out[0]), free(out[1]), free(X);
            dpdo_regularizer_destroy(reg);
            dpdo_network_destroy(net);
            tfx_nodes_free(NN, ds, lo, sh, nodes);
        }
}

static void dda_fused_noise_bits(void)
{
    fused_noise_bits("dp-dda");
}

/* DO-ADP draws its continuous noise ahead of the gradient and adds it with the regularizer's
 * gradient in one pass (issue 19): the same bits as the separate draw */
static void adp_fused_noise_bits(void)
{
    fused_noise_bits("do-adp");
}

/* The table cache beyond its 8 permanent slots (a noise scale that changes every round, as CPGT's
 * decaying Laplace noise): every draw equals the draw of a fresh generator (whose tables are built
 * from nothing), over two passes of 24 scales through the 4 replaced slots, and from two threads
 * drawing at once on one generator (a table replaced while the other thread draws from it). */
enum { CACHE_SCALES = 24, CACHE_N = 16 };
static dpdo_rng *cache_shared;
static double cache_want[2][CACHE_SCALES][CACHE_N];

static int cache_draw(const dpdo_rng *rng, int pass, int j, double *x)
{
    char err[DPDO__ERRMSG_LEN];
    dpdo__stream st;
    dpdo__stream_open(&st, rng, (uint64_t)j, (uint64_t)pass, DPDO_PURPOSE_NOISE);
    memset(x, 0, CACHE_N * sizeof *x);
    return j % 3 == 2 ? dpdo__grid_add_dgauss(&st, (1u << 12) + 5u * (unsigned)j, 0x1p-20, x, CACHE_N, err)
                      : dpdo__grid_add_dlaplace(&st, 900 + 37 * (uint64_t)j, 0x1p-20, x, CACHE_N, err);
}

static void *cache_thread(void *arg)
{
    const int pass = *(const int *)arg;
    int bad = 0;
    for (int rep = 0; rep < 3; rep++)
        for (int j = 0; j < CACHE_SCALES; j++) {
            int jj = pass ? CACHE_SCALES - 1 - j : j; /* the threads walk the scales in opposite orders */
            double x[CACHE_N];
            bad += cache_draw(cache_shared, pass, jj, x) != DPDO_OK ||
                   memcmp(x, cache_want[pass][jj], sizeof x) != 0;
        }
    return (void *)(intptr_t)bad;
}

static void table_cache_recent(void)
{
    for (int pass = 0; pass < 2; pass++)
        for (int j = 0; j < CACHE_SCALES; j++) {
            dpdo_rng *fresh;
            CHECK_EQ(dpdo_rng_create(&fresh, NULL, NULL, 11), DPDO_OK);
            CHECK_EQ(cache_draw(fresh, pass, j, cache_want[pass][j]), DPDO_OK);
            dpdo_rng_destroy(fresh);
        }
    CHECK_EQ(dpdo_rng_create(&cache_shared, NULL, NULL, 11), DPDO_OK);
    int same = 1;
    for (int pass = 0; pass < 2; pass++)
        for (int j = 0; j < CACHE_SCALES; j++) {
            double x[CACHE_N];
            CHECK_EQ(cache_draw(cache_shared, pass, j, x), DPDO_OK);
            same &= memcmp(x, cache_want[pass][j], sizeof x) == 0;
        }
    CHECK_MSG(same, "a draw through the replaced slots differs from a fresh generator's");
    pthread_t th[2];
    int passes[2] = {0, 1};
    for (int t = 0; t < 2; t++)
        CHECK_EQ(pthread_create(&th[t], NULL, cache_thread, &passes[t]), 0);
    for (int t = 0; t < 2; t++) {
        void *bad = NULL;
        pthread_join(th[t], &bad);
        CHECK_MSG(bad == NULL, "thread %d: %d draws differ", t, (int)(intptr_t)bad);
    }
    dpdo_rng_destroy(cache_shared);
}

int main(void)
{
    RUN(runs_differ_and_repeat);
    RUN(grid_ledger);
    RUN(old_attack);
    RUN(sampler_pmf_smoke);
    RUN(table_acceptance_rate);
    RUN(table_cache_recent);
    RUN(keys_hosted_only);
    RUN(key_api);
    RUN(dda_fused_noise_bits);
    RUN(adp_fused_noise_bits);
    return h_finish();
}
