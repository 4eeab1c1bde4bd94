/* SPDX-License-Identifier: BSD-3-Clause */
/* DO-ADP's baselines on the engine (spec do-adp.md §5.6, T-9):
 *  - DPDO's Laplace calibration (T-9 closed form, finite horizon -> closed
 *    form), the b0 the engine uses in PAPER and RIGOROUS modes, the rigorous
 *    pure epsilon after the planned horizon equal to the target;
 *  - DPDO with noise off equals an update written here (W from the network,
 *    gradients from dpdo_node_eval, l2-ball projection) to 1e-12, and converges
 *    on a strongly convex problem; with noise, Laplace noise of scale b_t;
 *  - CPGT-like: the tracking invariant sum_i y_i = sum_i g_i every round (also
 *    with Top-k), convergence with k = d and noise off, two sparse messages per
 *    agent and neighbour;
 *  - DP-DDA's all-transmit variant: 100 % communication, only active nodes add
 *    zeta, (5) with the static W checked per node, conservation of sum z,
 *    charges = active rounds;
 *  - determinism, bad input, out-of-memory in prepare. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "dpdo/dpdo.h"
#include "dpdo/compressor.h"
#include "engine/engine_impl.h"
#include "core/core_impl.h"
#include "harness.h"

static uint64_t tstate = 0x9e3779b97f4a7c15ull;
static double urand(void) { return h_urand(&tstate); }
static double nrand(void) { return sqrt(-2.0 * log(urand() + 1e-300)) * cos(6.283185307179586 * urand()); }

enum { NMAX = 20, DMAX = 24, QMAX = 40 };
typedef struct fx {
    int n, q, d;
    double X[NMAX * QMAX * DMAX], Y[NMAX * QMAX];
    dpdo_dataset *ds;
    dpdo_shard *sh[NMAX];
    dpdo_loss *loss;
    dpdo_node *nodes[NMAX];
    dpdo_network *net;
    dpdo_regularizer *reg;
    dpdo_ledger *led;
    dpdo_accountant *acc;
    double W[NMAX * NMAX];
} fx;

static void fx_make(fx *f, int n, int q, int d, const char *acc, double lam)
{
    memset(f, 0, sizeof *f);
    f->n = n, f->q = q, f->d = d;
    for (int i = 0; i < n * q; i++) {
        double nn = 0;
        for (int k = 0; k < d; k++) {
            double v = nrand();
            f->X[i * d + k] = v;
            nn += v * v;
        }
        for (int k = 0; k < d; k++) f->X[i * d + k] /= sqrt(nn);
        f->Y[i] = urand() < 0.5 ? -1 : 1;
    }
    CHECK_EQ(dpdo_dataset_create(&f->ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_dense(f->ds, n * q, d, f->X, f->Y, DPDO_COPY), DPDO_OK);
    CHECK_EQ(dpdo_loss_create(&f->loss, dpdo_loss_type_find("logistic"), NULL, d), DPDO_OK);
    for (int i = 0; i < n; i++) {
        CHECK_EQ(dpdo_shard_create_range(&f->sh[i], f->ds, (int64_t)i * q, q), DPDO_OK);
        CHECK_EQ(dpdo_node_create(&f->nodes[i], f->sh[i], f->loss, 1.0), DPDO_OK);
    }
    CHECK_EQ(dpdo_network_create(&f->net), DPDO_OK);
    if (n == 1) CHECK_EQ(dpdo_network_set_complete(f->net, 1), DPDO_OK);
    else CHECK_EQ(dpdo_network_set_circulant(f->net, n, n >= 8 ? 3 : 1), DPDO_OK);
    CHECK_EQ(dpdo_network_get_weights(f->net, f->W, (int64_t)n * n), DPDO_OK);
    if (lam > 0) CHECK_EQ(dpdo_regularizer_create(&f->reg, dpdo_regularizer_type_find("l2"), NULL, d, &lam, 1), DPDO_OK);
    CHECK_EQ(dpdo_ledger_create(&f->led, n), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&f->acc, dpdo_accountant_type_find(acc), NULL, f->led, NULL), DPDO_OK);
}

static void fx_free(fx *f)
{
    dpdo_accountant_destroy(f->acc);
    dpdo_ledger_destroy(f->led);
    dpdo_regularizer_destroy(f->reg);
    dpdo_network_destroy(f->net);
    for (int i = 0; i < f->n; i++) {
        dpdo_node_destroy(f->nodes[i]);
        dpdo_shard_destroy(f->sh[i]);
    }
    dpdo_loss_destroy(f->loss);
    dpdo_dataset_destroy(f->ds);
}

static dpdo_algorithm *mk(fx *f, const char *type, int mode, int64_t T, double step, double sigma)
{
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = mode;
    o.max_rounds = T;
    o.sigma = sigma;
    o.step_size = step;
    o.epsilon = 0.5;
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find(type)), DPDO_OK);
    int rc = dpdo_algorithm_setup(a, f->nodes, f->n, f->net, f->reg, f->acc, &o);
    CHECK_MSG(rc == DPDO_OK, "setup: %s", dpdo_algorithm_errmsg(a));
    return a;
}

static double fstar_of(fx *f, double *xs)
{
    dpdo_reference *ref = NULL;
    double F = NAN;
    CHECK_EQ(dpdo_reference_create(&ref, f->nodes, f->n, f->reg, NULL), DPDO_OK);
    CHECK_EQ(dpdo_reference_solve(ref, xs, f->d, &F), DPDO_OK);
    dpdo_reference_destroy(ref);
    return F;
}

/* ---- T-9 -------------------------------------------------------------------------- */

static void test_calibration(void)
{
    /* T-9: 2 sqrt(d) G c / (eps (pn - qs)) */
    CHECK_REL(dpdo__dpdo_b0_closed(2000, 2.0, 0.001, 0.01, 0.5 + 1e-5, 0.5), 894427.191, 1e-9);
    CHECK_REL(dpdo__dpdo_b0_closed(2000, 2.0, 0.001, 0.01, 0.5 + 9e-5, 0.5), 99380.7990, 1e-9);
    /* finite horizon -> closed form (geometric), and closed forms of short horizons */
    double cf = dpdo__dpdo_b0_closed(10, 2.0, 0.01, 0.1, 0.999, 0.99);
    CHECK_REL(dpdo__dpdo_b0_finite(10, 2.0, 0.1, DPDO_DPDO_STEP_GEOMETRIC, 0.01, 0.99, 0.999, 40000), cf, 1e-9);
    double T3 = sqrt(10.0) * 2.0 / 0.1 * (0.01 / 0.999 + 0.01 * 0.99 / (0.999 * 0.999));
    CHECK_REL(dpdo__dpdo_b0_finite(10, 2.0, 0.1, DPDO_DPDO_STEP_GEOMETRIC, 0.01, 0.99, 0.999, 3), T3, 1e-14);
    double H3 = sqrt(10.0) * 2.0 / 0.1 * (0.01 / 1.0 + 0.01 / 2.0);
    CHECK_REL(dpdo__dpdo_b0_finite(10, 2.0, 0.1, DPDO_DPDO_STEP_HARMONIC, 0.01, 0.5, 1.0, 3), H3, 1e-14);
    CHECK_EQ(dpdo__dpdo_b0_finite(10, 2.0, 0.1, DPDO_DPDO_STEP_HARMONIC, 0.01, 0.5, 1.0, 1), 0.0);

    /* through the engine: PAPER b0 = the closed form with G = lipschitz = 1, batch 1 */
    static fx f;
    fx_make(&f, 4, 10, 6, "pure", 0);
    dpdo_algorithm *a = mk(&f, "dpdo", DPDO_NOISE_PAPER, 50, 0.002, NAN);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_DPDO_STEP_DECAY, 0.99), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_DPDO_NOISE_DECAY, 0.995), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
    double b0 = NAN;
    CHECK_EQ(dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &b0), DPDO_OK);
    CHECK_REL(b0, 2 * sqrt(6.0) * 0.002 / (0.5 * (0.995 - 0.99)), 1e-12);
    double eps;
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_PAPER, DPDO_NODE_ALL, &eps, NULL, NULL), DPDO_E_UNSUPPORTED);
    CHECK_STR_CONTAINS(dpdo_algorithm_privacy_notes(a), "pure epsilon of the whole (infinite) run");
    /* the run charges less than the infinite-horizon eps */
    CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eps, NULL, NULL), DPDO_OK);
    double exact = 0; /* sum over t = 1..49 of sqrt(d) 2 c qs^(t-1) / (b0 pn^t) */
    for (int t = 1; t < 50; t++) exact += sqrt(6.0) * 2 * 0.002 * pow(0.99, t - 1) / (b0 * pow(0.995, t));
    CHECK(eps >= exact * (1 - 1e-12) && eps <= exact * pow(2.0, 1.0 / 32) * (1 + 1e-12) && eps < 0.5);
    dpdo_algorithm_destroy(a);
    CHECK_EQ(dpdo_ledger_reset(f.led), DPDO_OK);

    /* RIGOROUS (harmonic): the charged pure eps after T rounds equals the target; b0 within the
     * level grid of the exact finite-horizon value; the guard stops at T */
    a = mk(&f, "dpdo", DPDO_NOISE_RIGOROUS, 300, 0.002, NAN);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DPDO_SCHEDULE, DPDO_DPDO_STEP_HARMONIC), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_DPDO_NOISE_DECAY, 1.0), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &b0), DPDO_OK);
    double bf = dpdo__dpdo_b0_finite(6, 2.0, 0.5, DPDO_DPDO_STEP_HARMONIC, 0.002, 0.9999, 1.0, 300);
    double r = pow(300.0 / 1.0, 1.0 / 31); /* grid ratio: A_1/A_299 = 299 */
    CHECK(b0 >= bf * (1 - 1e-12) && b0 <= bf * r);
    CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
    CHECK_EQ(dpdo_algorithm_round(a), 300);
    CHECK_EQ(dpdo_algorithm_stop_reason(a), DPDO_STOP_MAX_ROUNDS);
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eps, NULL, NULL), DPDO_OK);
    CHECK_REL(eps, 0.5, 1e-9);
    CHECK_EQ(dpdo_ledger_charges(f.led, 2), 299); /* round 1 releases the public x_0 */
    /* growing the horizon: the guard stops the next round */
    CHECK_EQ(dpdo_algorithm_reset(a), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_run(a, 300, NULL), DPDO_ROUND);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_MAX_ROUNDS, 400), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_DONE);
    CHECK_EQ(dpdo_algorithm_stop_reason(a), DPDO_STOP_BUDGET);
    dpdo_algorithm_destroy(a);
    CHECK_EQ(dpdo_ledger_reset(f.led), DPDO_OK);

    /* CPGT-like: lambda = 2T/eps, every round one Laplace release of eps/T */
    a = mk(&f, "cpgt", DPDO_NOISE_RIGOROUS, 40, 0.01, NAN);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &b0), DPDO_OK);
    CHECK_REL(b0, 2 * 40 / 0.5, 1e-15);
    CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, 1, &eps, NULL, NULL), DPDO_OK);
    CHECK_REL(eps, 0.5, 1e-12);
    CHECK_STR_CONTAINS(dpdo_algorithm_privacy_notes(a), "CPGT-like");
    dpdo_algorithm_destroy(a);
    fx_free(&f);
}

/* ---- DPDO mechanics ---------------------------------------------------------------- */

static void proj(double *v, int d, double R)
{
    double nn = 0;
    for (int k = 0; k < d; k++) nn += v[k] * v[k];
    if (nn > R * R)
        for (int k = 0; k < d; k++) v[k] *= R / sqrt(nn);
}

static void test_dpdo_reference(void)
{
    enum { N = 8, D = 5, Q = 12 };
    static fx f;
    fx_make(&f, N, Q, D, "rdp", 0.05);
    double c = 0.8, qs = 0.97, R = 0.04;
    dpdo_algorithm *a = mk(&f, "dpdo", DPDO_NOISE_NONE, 400, c, NAN);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DPDO_FULL_GRAD, 1), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_DPDO_STEP_DECAY, qs), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_DPDO_RADIUS, R), DPDO_OK);
    static double x[N * D], v[N * D], g[D], got[D];
    memset(x, 0, sizeof x);
    double worst = 0;
    int projected = 0;
    for (int t = 0; t < 6; t++) {
        CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
        for (int i = 0; i < N; i++) {
            for (int k = 0; k < D; k++) {
                v[i * D + k] = 0;
                for (int j = 0; j < N; j++) v[i * D + k] += f.W[i * N + j] * x[j * D + k];
            }
        }
        for (int i = 0; i < N; i++) {
            CHECK_EQ(dpdo_node_eval(f.nodes[i], v + i * D, D, NULL, 0, 0.0, NULL, g, NULL), DPDO_OK);
            double nn = 0;
            for (int k = 0; k < D; k++) {
                v[i * D + k] -= c * pow(qs, t) * (g[k] + 0.05 * v[i * D + k]);
                nn += v[i * D + k] * v[i * D + k];
            }
            projected += nn > R * R;
            proj(v + i * D, D, R);
        }
        memcpy(x, v, sizeof x);
        for (int i = 0; i < N; i++) {
            dpdo_algorithm_get_iterate(a, i, got, D);
            for (int k = 0; k < D; k++) worst = fmax(worst, fabs(got[k] - x[i * D + k]));
        }
    }
    CHECK_MSG(worst < 1e-12, "DPDO vs reference: %g", worst);
    CHECK(projected > 0); /* the projection was exercised */
    /* convergence on the strongly convex problem (R large, slowly decaying step) */
    dpdo_algorithm_destroy(a);
    a = mk(&f, "dpdo", DPDO_NOISE_NONE, 3000, 1.0, NAN);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DPDO_FULL_GRAD, 1), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_DPDO_STEP_DECAY, 0.999), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_DPDO_RADIUS, INFINITY), DPDO_OK);
    double xs[D], fs = fstar_of(&f, xs), F0, F1;
    CHECK_EQ(dpdo_algorithm_objective(a, DPDO_POINT_ITERATE, DPDO_NODE_ALL, &F0), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
    CHECK_EQ(dpdo_algorithm_objective(a, DPDO_POINT_ITERATE, DPDO_NODE_ALL, &F1), DPDO_OK);
    CHECK_MSG(F1 - fs < 1e-6 * (F0 - fs), "DPDO gap %g of %g", F1 - fs, F0 - fs);
    /* counters: dense, every agent to every neighbour each round */
    int64_t msgs, vals;
    CHECK_EQ(dpdo_algorithm_comm(a, DPDO_NODE_ALL, &msgs, &vals, NULL), DPDO_OK);
    CHECK_EQ(msgs, 3000LL * N * 6);
    CHECK_EQ(vals, 3000LL * N * 6 * D);
    dpdo_algorithm_destroy(a);

    /* noise: with c tiny, x_i(1) ~ W xi(0): xi(0) = 0 + Lap(b0); check the Laplace scale of the
     * messages through x after one round with R = inf: Var(sum_j w_ij L_j) = 2 b0^2 sum_j w_ij^2 */
    double s2 = 0, sw = 0;
    int cnt = 0;
    for (int rep = 0; rep < 500; rep++) {
        dpdo_algorithm_options o;
        dpdo_algorithm_options_init(&o, sizeof o);
        o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
        o.noise_mode = DPDO_NOISE_FIXED, o.sigma = 2.0, o.max_rounds = 1, o.step_size = 1e-300;
        o.seed = (uint64_t)rep;
        CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dpdo")), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, N, f.net, f.reg, f.acc, &o), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_DPDO_RADIUS, INFINITY), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
        for (int i = 0; i < N; i++) {
            dpdo_algorithm_get_iterate(a, i, got, D);
            for (int k = 0; k < D; k++) s2 += got[k] * got[k], cnt++;
        }
        dpdo_algorithm_destroy(a);
    }
    for (int j = 0; j < N; j++) sw += f.W[j] * f.W[j];
    CHECK_REL(s2 / cnt, 2 * 4.0 * sw, 0.1); /* ~4 SE (Laplace kurtosis, neighbour correlation) */
    fx_free(&f);
}

/* ---- CPGT-like ------------------------------------------------------------------- */

static void sums(dpdo_algorithm *a, const char *nm, int n, int d, double *s)
{
    double r[DMAX];
    memset(s, 0, (size_t)d * sizeof(double));
    for (int i = 0; i < n; i++) {
        dpdo_algorithm_get_state(a, nm, i, r, d);
        for (int k = 0; k < d; k++) s[k] += r[k];
    }
}

static void test_cpgt(void)
{
    enum { N = 10, D = 8, Q = 15, K = 3 };
    static fx f;
    fx_make(&f, N, Q, D, "rdp", 0.05);
    /* invariant with Top-k (noise off, sampled gradients) */
    dpdo_compressor *c = NULL;
    CHECK_EQ(dpdo_compressor_create(&c, dpdo_compressor_type_find("top-k"), NULL, D), DPDO_OK);
    CHECK_EQ(dpdo_compressor_set_k(c, K), DPDO_OK);
    dpdo_algorithm *a = mk(&f, "cpgt", DPDO_NOISE_NONE, 200, 0.2, NAN);
    CHECK_EQ(dpdo_algorithm_set_compressor(a, c), DPDO_OK);
    double sy[D], sg[D], worst = 0;
    for (int t = 0; t < 200; t++) {
        CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
        sums(a, "y", N, D, sy);
        sums(a, "g", N, D, sg);
        for (int k = 0; k < D; k++) worst = fmax(worst, fabs(sy[k] - sg[k]));
    }
    CHECK_MSG(worst < 1e-12, "sum y - sum g = %g", worst);
    int64_t msgs, vals, bytes;
    CHECK_EQ(dpdo_algorithm_comm(a, 3, &msgs, &vals, &bytes), DPDO_OK);
    CHECK_EQ(msgs, 200LL * 2 * 6);
    CHECK_EQ(vals, 200LL * 2 * 6 * K);
    CHECK_EQ(bytes, 200LL * 2 * 6 * K * 12);
    dpdo_algorithm_destroy(a);
    dpdo_compressor_destroy(c);

    /* convergence with k = d, noise off, full local batches, gamma = 1: exact gradient tracking */
    dpdo_algorithm_options o;
    a = mk(&f, "cpgt", DPDO_NOISE_NONE, 1500, 0.5, NAN);
    (void)o;
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_BATCH, Q), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_CPGT_GAMMA, 1.0), DPDO_OK);
    double xs[D], fs = fstar_of(&f, xs), F0, F1, xb[D];
    CHECK_EQ(dpdo_algorithm_objective(a, DPDO_POINT_ITERATE, DPDO_NODE_ALL, &F0), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
    CHECK_EQ(dpdo_algorithm_objective(a, DPDO_POINT_ITERATE, DPDO_NODE_ALL, &F1), DPDO_OK);
    CHECK_MSG(F1 - fs < 1e-10, "CPGT gap %g (initial %g)", F1 - fs, F0 - fs);
    double e = 0;
    for (int i = 0; i < N; i++) { /* every agent at x* (exact tracking: no neighbourhood) */
        dpdo_algorithm_get_iterate(a, i, xb, D);
        for (int k = 0; k < D; k++) e = fmax(e, fabs(xb[k] - xs[k]));
    }
    CHECK_MSG(e < 1e-6, "CPGT agents off x* by %g", e);
    dpdo_algorithm_destroy(a);
    fx_free(&f);
}

/* ---- DP-DDA all-transmit ----------------------------------------------------------------- */

static void test_dda_all_transmit(void)
{
    enum { N = 20, D = 4, Q = 10, T = 400 };
    static fx f;
    fx_make(&f, N, Q, D, "rdp", 0.01);
    dpdo_algorithm *a = mk(&f, "dp-dda", DPDO_NOISE_FIXED, T, NAN, 0.5);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ALL_TRANSMIT, 1), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_SCHEME, DPDO_ROUND_BERNOULLI), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_DDA_BERNOULLI_P, 0.24), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_MAX_EPSILON, INFINITY), DPDO_OK);
    static double z0[N * D], z1[N * D], zeta[N * D];
    int32_t fl[N];
    int64_t act[N] = {0}, tot = 0;
    double worst = 0, cons = 0;
    for (int t = 1; t <= T; t++) {
        for (int i = 0; i < N; i++) dpdo_algorithm_get_state(a, "z", i, z0 + i * D, D);
        int inj = t % 3 == 0;
        if (inj) {
            for (int k = 0; k < N * D; k++) zeta[k] = nrand();
            CHECK_EQ(dpdo__algorithm_inject_zeta(a, zeta), DPDO_OK);
        }
        CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
        dpdo_algorithm_get_active(a, fl, N);
        for (int i = 0; i < N; i++) dpdo_algorithm_get_state(a, "z", i, z1 + i * D, D);
        for (int i = 0; i < N; i++) act[i] += fl[i], tot += fl[i];
        if (!inj) continue;
        double at = t; /* strongly convex preset: a_t = t */
        for (int i = 0; i < N; i++)
            for (int k = 0; k < D; k++) {
                double ref = 0;
                for (int j = 0; j < N; j++) ref += f.W[i * N + j] * (z0[j * D + k] + (fl[j] ? at * zeta[j * D + k] : 0));
                worst = fmax(worst, fabs(z1[i * D + k] - ref) / fmax(1, fabs(ref)));
            }
        for (int k = 0; k < D; k++) { /* conservation of sum z */
            double s0 = 0, s1 = 0;
            for (int i = 0; i < N; i++) s0 += z0[i * D + k] + (fl[i] ? at * zeta[i * D + k] : 0), s1 += z1[i * D + k];
            cons = fmax(cons, fabs(s1 - s0) / fmax(1, fabs(s0)));
        }
    }
    CHECK_MSG(worst < 1e-12, "all-transmit (5) error %g", worst);
    CHECK_MSG(cons < 1e-12, "sum z not conserved: %g", cons);
    double frac = (double)tot / (N * T), se = sqrt(0.24 * 0.76 / (N * T));
    CHECK_MSG(fabs(frac - 0.24) < 4 * se, "active fraction %g", frac);
    for (int i = 0; i < N; i++) CHECK_EQ(dpdo_ledger_charges(f.led, i), act[i]);
    int64_t msgs, vals;
    CHECK_EQ(dpdo_algorithm_comm(a, DPDO_NODE_ALL, &msgs, &vals, NULL), DPDO_OK);
    CHECK_EQ(msgs, (int64_t)T * N * 6); /* 100 %: every node, every neighbour, every round */
    CHECK_EQ(vals, (int64_t)T * N * 6 * D);
    CHECK_EQ(dpdo_algorithm_comm(a, 7, &msgs, NULL, NULL), DPDO_OK);
    CHECK_EQ(msgs, (int64_t)T * 6);
    dpdo_algorithm_destroy(a);
    /* inactive nodes add nothing: one round with nobody active keeps sum z and gives z = W z */
    a = mk(&f, "dp-dda", DPDO_NOISE_NONE, 10, NAN, NAN);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ALL_TRANSMIT, 1), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, 5), DPDO_OK); /* uniform 5 of 20 */
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
    dpdo_algorithm_get_active(a, fl, N);
    int na = 0;
    for (int i = 0; i < N; i++) na += fl[i];
    CHECK_EQ(na, 5);
    for (int i = 0; i < N; i++) dpdo_algorithm_get_state(a, "z", i, z0 + i * D, D);
    int64_t one = 0;
    CHECK_EQ(dpdo__algorithm_inject_active(a, &one, 1), DPDO_OK);
    memset(zeta, 0, sizeof zeta);
    CHECK_EQ(dpdo__algorithm_inject_zeta(a, zeta), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
    worst = 0;
    for (int i = 0; i < N; i++) {
        dpdo_algorithm_get_state(a, "z", i, z1 + i * D, D);
        for (int k = 0; k < D; k++) {
            double ref = 0;
            for (int j = 0; j < N; j++) ref += f.W[i * N + j] * z0[j * D + k];
            worst = fmax(worst, fabs(z1[i * D + k] - ref));
        }
    }
    CHECK(worst < 1e-12);
    dpdo_algorithm_destroy(a);
    fx_free(&f);
}

/* ---- determinism, bad input, out of memory ------------------------------------------------ */

static void run_bytes(fx *f, const char *type, uint64_t seed, double *out, int n, int d)
{
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = DPDO_NOISE_FIXED, o.sigma = 0.3, o.max_rounds = 30, o.seed = seed, o.step_size = 0.1;
    o.max_epsilon = INFINITY;
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find(type)), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(a, f->nodes, f->n, f->net, f->reg, f->acc, &o), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
    for (int i = 0; i < n; i++) dpdo_algorithm_get_iterate(a, i, out + i * d, d);
    dpdo_algorithm_destroy(a);
}

static void test_determinism_and_bad_input(void)
{
    enum { N = 6, D = 5, Q = 8 };
    static fx f;
    fx_make(&f, N, Q, D, "rdp", 0.05);
    const char *types[] = {"dpdo", "cpgt"};
    for (int k = 0; k < 2; k++) {
        static double a1[N * D], a2[N * D], a3[N * D];
        run_bytes(&f, types[k], 7, a1, N, D);
        run_bytes(&f, types[k], 7, a2, N, D);
        run_bytes(&f, types[k], 8, a3, N, D);
        CHECK(memcmp(a1, a2, sizeof a1) == 0);
        CHECK(memcmp(a1, a3, sizeof a1) != 0);
    }
    dpdo_algorithm *a = mk(&f, "dpdo", DPDO_NOISE_RIGOROUS, 20, 0.01, NAN);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_DPDO_STEP_DECAY, 1.0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_DPDO_STEP_DECAY, 0.0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_DPDO_NOISE_DECAY, 1.5), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_DPDO_RADIUS, 0.0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_DPDO_RADIUS, NAN), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DPDO_FULL_GRAD, 2), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DPDO_SCHEDULE, 2), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_CPGT_GAMMA, 0.5), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ALL_TRANSMIT, 1), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_algorithm_set_compressor(a, NULL), DPDO_E_UNSUPPORTED);
    /* qs >= pn in a noisy mode */
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_DPDO_STEP_DECAY, 0.999), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_DPDO_NOISE_DECAY, 0.99), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "must be < dpdo-noise-decay");
    CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_READY);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_DPDO_NOISE_DECAY, 0.9995), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
    dpdo_algorithm_destroy(a);
    a = mk(&f, "cpgt", DPDO_NOISE_NONE, 20, 0.01, NAN);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_CPGT_GAMMA, 0.0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_CPGT_GAMMA, 1.5), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_DPDO_RADIUS, 1.0), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_BATCH, Q + 1), DPDO_E_INVAL);
    double eps;
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eps, NULL, NULL), DPDO_OK);
    CHECK(eps == INFINITY);
    CHECK_STR_CONTAINS(dpdo_algorithm_privacy_notes(a), "not private");
    dpdo_algorithm_destroy(a);
    a = mk(&f, "dp-dda", DPDO_NOISE_NONE, 20, NAN, NAN);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ALL_TRANSMIT, 2), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ALL_TRANSMIT, -1), DPDO_E_INVAL);
    int64_t v = 5;
    CHECK_EQ(dpdo_algorithm_get_int(a, DPDO_PARAM_DDA_ALL_TRANSMIT, &v), DPDO_OK);
    CHECK_EQ(v, 0);
    CHECK_STR_CONTAINS(dpdo_param_name(DPDO_PARAM_DDA_ALL_TRANSMIT), "dda-all-transmit");
    CHECK_STR_CONTAINS(dpdo_param_name(DPDO_PARAM_DPDO_STEP_DECAY), "dpdo-step-decay");
    dpdo_algorithm_destroy(a);
    CHECK_STR_CONTAINS(dpdo_algorithm_type_title(dpdo_algorithm_type_find("cpgt")), "CPGT-like");

    /* out of memory in prepare (including DPDO's larger event table: n = 6 < 32 levels) */
    for (int t = 0; t < 2; t++) {
        int ok = 0;
        for (int k = 0; k < 200 && !ok; k++) {
            a = mk(&f, types[t], DPDO_NOISE_RIGOROUS, 500, 0.01, NAN);
            if (t == 0) dpdo_algorithm_set_int(a, DPDO_PARAM_DPDO_SCHEDULE, DPDO_DPDO_STEP_HARMONIC);
            dpdo__fault_arm(k);
            int rc = dpdo_algorithm_prepare(a);
            dpdo__fault_arm(-1);
            CHECK(rc == DPDO_OK || rc == DPDO_E_NOMEM);
            if (rc == DPDO_OK) {
                ok = 1;
                CHECK_EQ(dpdo_algorithm_run(a, 5, NULL), DPDO_ROUND);
            } else {
                CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_READY);
            }
            dpdo_algorithm_destroy(a);
            dpdo_ledger_reset(f.led);
        }
        CHECK(ok);
    }
    fx_free(&f);
}

int main(void)
{
    RUN(test_calibration);
    RUN(test_dpdo_reference);
    RUN(test_cpgt);
    RUN(test_dda_all_transmit);
    RUN(test_determinism_and_bad_input);
    return h_finish();
}
