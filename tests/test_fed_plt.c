/* SPDX-License-Identifier: BSD-3-Clause */
/* Fed-PLT on the engine: spec fed-plt.md §9 T1 (coordinator prox), T2
 * (reflection identity), T3 (inactive agents untouched, no charge), T4
 * (fixed-point invariance), T5 (exactness on quadratics: no client drift,
 * full and Bernoulli participation), T13 (noisy GD with tau = 0 = GD),
 * T15/T19 (worked privacy example through PAPER calibration), T16 (the
 * paper's epsilon is non-decreasing in N_e), T21 (the rigorous transcript
 * total is >= the final-model bound); and the iterates against an
 * independent implementation of the update equations written here. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "dpdo/dpdo.h"
#include "dpdo/solver.h"
#include "engine/engine_impl.h"
#include "core/core_impl.h"
#include "harness.h"

static uint64_t tstate = 0x2545f4914f6cdd1dull;
static double urand(void) { return h_urand(&tstate); }
static double nrand(void) { return sqrt(-2.0 * log(urand() + 1e-300)) * cos(6.283185307179586 * urand()); }

extern void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w,
                   double *work, const int *lwork, int *info);
extern void dposv_(const char *uplo, const int *n, const int *nrhs, double *a, const int *lda, double *b,
                   const int *ldb, int *info);

enum { NMAX = 12, DMAX = 5, QMAX = 40 };
typedef struct fx {
    int n, q, d;
    double X[NMAX * QMAX * DMAX], Y[NMAX * QMAX];
    dpdo_dataset *ds;
    dpdo_shard *sh[NMAX];
    dpdo_loss *loss;
    dpdo_node *nodes[NMAX];
    dpdo_ledger *led;
    dpdo_accountant *acc;
    double lo, hi;      /* eigenvalue range of the local Hessians (squared loss) */
    double xstar[DMAX]; /* minimiser of sum_i f_i (squared loss) */
} fx;

/* squared loss f_i = (1/q) sum 1/2 (a.x - y)^2: A_i = (1/q) sum a a^T, c_i = (1/q) sum y a */
static void fx_make(fx *f, int n, int q, int d, const char *loss)
{
    memset(f, 0, sizeof *f);
    f->n = n, f->q = q, f->d = d;
    for (int i = 0; i < n * q; i++) {
        for (int k = 0; k < d; k++) f->X[i * d + k] = nrand() * (1.0 + 0.3 * k);
        f->Y[i] = nrand();
        if (strcmp(loss, "logistic") == 0) f->Y[i] = f->Y[i] < 0 ? -1 : 1;
    }
    CHECK_EQ(dpdo_dataset_create(&f->ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_dense(f->ds, n * q, d, f->X, f->Y, DPDO_COPY), DPDO_OK);
    CHECK_EQ(dpdo_loss_create(&f->loss, dpdo_loss_type_find(loss), NULL, d), DPDO_OK);
    for (int i = 0; i < n; i++) {
        CHECK_EQ(dpdo_shard_create_range(&f->sh[i], f->ds, (int64_t)i * q, q), DPDO_OK);
        CHECK_EQ(dpdo_node_create(&f->nodes[i], f->sh[i], f->loss, 1.0), DPDO_OK);
    }
    CHECK_EQ(dpdo_ledger_create(&f->led, n), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&f->acc, dpdo_accountant_type_find("rdp"), NULL, f->led, NULL), DPDO_OK);
    /* Hessian spectra and x* */
    double S[DMAX * DMAX] = {0}, c[DMAX] = {0};
    f->lo = INFINITY, f->hi = 0;
    for (int i = 0; i < n; i++) {
        double A[DMAX * DMAX] = {0};
        for (int r = 0; r < q; r++) {
            const double *a = f->X + (i * q + r) * d;
            for (int j = 0; j < d; j++) {
                for (int k = 0; k < d; k++) A[j * d + k] += a[j] * a[k] / q;
                c[j] += f->Y[i * q + r] * a[j] / q;
            }
        }
        for (int k = 0; k < d * d; k++) S[k] += A[k];
        double w[DMAX], work[64];
        int nn = d, lw = 64, info;
        dsyev_("N", "U", &nn, A, &nn, w, work, &lw, &info);
        f->lo = fmin(f->lo, w[0]);
        f->hi = fmax(f->hi, w[d - 1]);
    }
    int nn = d, one = 1, info;
    memcpy(f->xstar, c, sizeof c);
    dposv_("U", &nn, &one, S, &nn, f->xstar, &nn, &info);
    CHECK_EQ(info, 0);
}

static void fx_free(fx *f)
{
    dpdo_accountant_destroy(f->acc);
    dpdo_ledger_destroy(f->led);
    for (int i = 0; i < f->n; i++) {
        dpdo_node_destroy(f->nodes[i]);
        dpdo_shard_destroy(f->sh[i]);
    }
    dpdo_loss_destroy(f->loss);
    dpdo_dataset_destroy(f->ds);
}

/* lipschitz: L of Assumption 3 (NaN: the options' default) */
static dpdo_algorithm *mk_L(fx *f, dpdo_regularizer *reg, int mode, int64_t T, double sigma, double lipschitz)
{
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = mode;
    o.max_rounds = T;
    o.sigma = sigma;
    if (!isnan(lipschitz)) o.lipschitz = lipschitz;
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("fed-plt")), DPDO_OK);
    int rc = dpdo_algorithm_setup(a, f->nodes, f->n, NULL, reg, f->acc, &o);
    CHECK_MSG(rc == DPDO_OK, "setup: %s", dpdo_algorithm_errmsg(a));
    return a;
}

static dpdo_algorithm *mk(fx *f, dpdo_regularizer *reg, int mode, int64_t T, double sigma)
{
    return mk_L(f, reg, mode, T, sigma, NAN);
}

static dpdo_solver *mksolver(const char *type, int d, double lo, double hi)
{
    dpdo_solver *s = NULL;
    CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find(type), NULL, d), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "lambda_lo", lo), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "lambda_hi", hi), DPDO_OK);
    return s;
}

/* ---- T1, T2, T3: coordinator prox, reflection identity, inactive agents ---- */

static void test_round_structure(void)
{
    enum { N = 6, D = 3 };
    fx f;
    fx_make(&f, N, 10, D, "squared");
    const char *regs[] = {NULL, "l1", "l2"};
    for (int r = 0; r < 3; r++) {
        dpdo_regularizer *reg = NULL;
        double mu = 0.7;
        if (regs[r]) CHECK_EQ(dpdo_regularizer_create(&reg, dpdo_regularizer_type_find(regs[r]), NULL, D, &mu, 1), DPDO_OK);
        dpdo_algorithm *a = mk(&f, reg, DPDO_NOISE_NONE, 100, NAN);
        dpdo_solver *s = mksolver("gd", D, f.lo, f.hi);
        CHECK_EQ(dpdo_algorithm_set_solver(a, s), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_FED_P, 0.5), DPDO_OK);
        double rho = 1.3;
        CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_FED_RHO, rho), DPDO_OK);
        int bad_prox = 0, bad_refl = 0, bad_inactive = 0, active_total = 0;
        for (int t = 0; t < 30; t++) {
            double z0[N * D], x0[N * D], z1[N * D], x1[N * D], y[D], zbar[D] = {0};
            for (int i = 0; i < N; i++) {
                dpdo_algorithm_get_state(a, "z", i, z0 + i * D, D);
                dpdo_algorithm_get_iterate(a, i, x0 + i * D, D);
                for (int k = 0; k < D; k++) zbar[k] += z0[i * D + k] / N;
            }
            int64_t ch0[N];
            for (int i = 0; i < N; i++) ch0[i] = dpdo_ledger_charges(f.led, i);
            CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
            CHECK_EQ(dpdo_algorithm_get_state(a, "y", DPDO_NODE_COORDINATOR, y, D), DPDO_OK);
            for (int k = 0; k < D; k++) {
                double want = zbar[k];
                if (r == 1) want = copysign(fmax(fabs(zbar[k]) - rho * mu / N, 0), zbar[k]);
                if (r == 2) want = zbar[k] / (1 + rho * mu / N);
                if (fabs(y[k] - want) > 1e-15 * (1 + fabs(want))) bad_prox++;
            }
            int32_t fl[N];
            dpdo_algorithm_get_active(a, fl, N);
            for (int i = 0; i < N; i++) {
                dpdo_algorithm_get_state(a, "z", i, z1 + i * D, D);
                dpdo_algorithm_get_iterate(a, i, x1 + i * D, D);
                active_total += fl[i];
                if (!fl[i]) {
                    bad_inactive += memcmp(z0 + i * D, z1 + i * D, sizeof(double) * D) != 0;
                    bad_inactive += memcmp(x0 + i * D, x1 + i * D, sizeof(double) * D) != 0;
                }
                bad_inactive += dpdo_ledger_charges(f.led, i) != ch0[i]; /* NONE: never charged */
                if (fl[i]) /* z' = 2 x' - v, v = 2 y - z */
                    for (int k = 0; k < D; k++) {
                        double v = 2 * y[k] - z0[i * D + k];
                        if (fabs(z1[i * D + k] - (2 * x1[i * D + k] - v)) > 1e-14 * (1 + fabs(z1[i * D + k]))) bad_refl++;
                    }
            }
        }
        CHECK_EQ(bad_prox, 0);
        CHECK_EQ(bad_refl, 0);
        CHECK_EQ(bad_inactive, 0);
        CHECK(active_total > 30 && active_total < 150); /* about half of 180 */
        /* counters: one downlink and one uplink of D values per active agent per round */
        int64_t m, sc, coord;
        dpdo_algorithm_comm(a, DPDO_NODE_ALL, &m, &sc, NULL);
        dpdo_algorithm_comm(a, DPDO_NODE_COORDINATOR, &coord, NULL, NULL);
        CHECK_EQ(m, 2 * active_total);
        CHECK_EQ(coord, active_total);
        CHECK_EQ(sc, 2 * active_total * D);
        dpdo_algorithm_destroy(a);
        dpdo_solver_destroy(s);
        dpdo_regularizer_destroy(reg);
    }
    fx_free(&f);
}

/* ---- T5: exactness on quadratics (no client drift) -------------------------- */

static double max_err(dpdo_algorithm *a, const fx *f)
{
    double worst = 0, x[DMAX];
    for (int i = 0; i < f->n; i++) {
        dpdo_algorithm_get_iterate(a, i, x, f->d);
        double e = 0;
        for (int k = 0; k < f->d; k++) e += (x[k] - f->xstar[k]) * (x[k] - f->xstar[k]);
        worst = fmax(worst, sqrt(e));
    }
    return worst;
}

static void test_exactness(void)
{
    enum { N = 8, D = 4 };
    fx f;
    fx_make(&f, N, 20, D, "squared");
    const int ne[] = {1, 2, 5};
    const double rho[] = {0.5, 1, 2};
    for (int a_ = 0; a_ < 3; a_++)
        for (int b_ = 0; b_ < 3; b_++) {
            dpdo_algorithm *a = mk(&f, NULL, DPDO_NOISE_NONE, 500, NAN);
            dpdo_solver *s = mksolver("gd", D, f.lo, f.hi);
            dpdo_algorithm_set_solver(a, s);
            dpdo_algorithm_set_int(a, DPDO_PARAM_FED_EPOCHS, ne[a_]);
            dpdo_algorithm_set_double(a, DPDO_PARAM_FED_RHO, rho[b_]);
            CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
            double err = max_err(a, &f);
            CHECK_MSG(err < 1e-10, "N_e = %d, rho = %g: error %g", ne[a_], rho[b_], err);
            dpdo_algorithm_destroy(a);
            dpdo_solver_destroy(s);
        }
    /* Bernoulli participation p = 0.5 and AGD */
    for (int agd = 0; agd < 2; agd++) {
        dpdo_algorithm *a = mk(&f, NULL, DPDO_NOISE_NONE, 2000, NAN);
        dpdo_solver *s = mksolver(agd ? "agd" : "gd", D, f.lo, f.hi);
        dpdo_algorithm_set_solver(a, s);
        dpdo_algorithm_set_double(a, DPDO_PARAM_FED_P, 0.5);
        CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
        double err = max_err(a, &f);
        CHECK_MSG(err < 1e-8, "%s, p = 0.5: error %g", agd ? "agd" : "gd", err);
        dpdo_algorithm_destroy(a);
        dpdo_solver_destroy(s);
    }
    fx_free(&f);
}

/* ---- T4: fixed-point invariance ----------------------------------------------- */

static void test_fixed_point(void)
{
    enum { N = 5, D = 3 };
    fx f;
    fx_make(&f, N, 15, D, "squared");
    const int ne[] = {1, 5, 20};
    for (int c = 0; c < 3; c++) {
        dpdo_algorithm *a = mk(&f, NULL, DPDO_NOISE_NONE, 10, NAN);
        dpdo_solver *s = mksolver(c == 1 ? "agd" : "gd", D, f.lo, f.hi);
        dpdo_algorithm_set_solver(a, s);
        dpdo_algorithm_set_int(a, DPDO_PARAM_FED_EPOCHS, ne[c]);
        dpdo_algorithm_set_double(a, DPDO_PARAM_FED_P, 0.6);
        double rho = 0.8;
        dpdo_algorithm_set_double(a, DPDO_PARAM_FED_RHO, rho);
        CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
        /* write x_i = x*, z_i = x* - rho grad f_i(x*) into the state (white box) */
        dpdo__eng *e = dpdo__algorithm_eng(a);
        double *X = NULL, *Z = NULL;
        for (int b = 0; b < e->nblk; b++) {
            if (strcmp(e->blk[b].name, "x") == 0) X = e->blk[b].cur;
            if (strcmp(e->blk[b].name, "z") == 0) Z = e->blk[b].cur;
        }
        for (int i = 0; i < N; i++) {
            double g[D];
            CHECK_EQ(dpdo_node_eval(f.nodes[i], f.xstar, D, NULL, 0, 0, NULL, g, NULL), DPDO_OK);
            for (int k = 0; k < D; k++) {
                X[i * D + k] = f.xstar[k];
                Z[i * D + k] = f.xstar[k] - rho * g[k];
            }
        }
        double x0[N * D], z0[N * D];
        memcpy(x0, X, sizeof x0);
        memcpy(z0, Z, sizeof z0);
        CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
        double worst = 0;
        for (int k = 0; k < N * D; k++) worst = fmax(worst, fmax(fabs(X[k] - x0[k]), fabs(Z[k] - z0[k])));
        CHECK_MSG(worst < 1e-11, "N_e = %d: moved by %g", ne[c], worst);
        dpdo_algorithm_destroy(a);
        dpdo_solver_destroy(s);
    }
    fx_free(&f);
}

/* ---- the iterates against an independent implementation of §2.3 ------------- */

static void test_independent(void)
{
    enum { N = 7, D = 4, Q = 12, T = 60, NE = 3 };
    fx f;
    fx_make(&f, N, Q, D, "logistic");
    double lam = 0.3;
    dpdo_regularizer *reg = NULL;
    CHECK_EQ(dpdo_regularizer_create(&reg, dpdo_regularizer_type_find("l1"), NULL, D, &lam, 1), DPDO_OK);
    dpdo_algorithm *a = mk(&f, reg, DPDO_NOISE_NONE, T, NAN);
    dpdo_solver *s = NULL;
    CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find("gd"), NULL, D), DPDO_OK);
    const double gamma = 0.4, rho = 0.9;
    CHECK_EQ(dpdo_solver_set(s, "step", gamma), DPDO_OK);
    dpdo_algorithm_set_solver(a, s);
    dpdo_algorithm_set_int(a, DPDO_PARAM_FED_EPOCHS, NE);
    dpdo_algorithm_set_double(a, DPDO_PARAM_FED_RHO, rho);
    dpdo_algorithm_set_int(a, DPDO_PARAM_FED_SAMPLER, DPDO_FED_SAMPLER_UNIFORM);
    dpdo_algorithm_set_int(a, DPDO_PARAM_FED_ACTIVE, 4);
    double x[N][D] = {{0}}, z[N][D] = {{0}}, worst = 0;
    for (int t = 0; t < T; t++) {
        CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
        int32_t fl[N];
        dpdo_algorithm_get_active(a, fl, N);
        int nact = 0;
        double zbar[D] = {0}, y[D];
        for (int i = 0; i < N; i++)
            for (int k = 0; k < D; k++) zbar[k] += z[i][k] / N;
        for (int k = 0; k < D; k++) y[k] = copysign(fmax(fabs(zbar[k]) - rho * lam / N, 0), zbar[k]);
        for (int i = 0; i < N; i++) {
            if (!fl[i]) continue;
            nact++;
            double v[D], w[D];
            for (int k = 0; k < D; k++) v[k] = 2 * y[k] - z[i][k], w[k] = x[i][k];
            for (int l = 0; l < NE; l++) {
                double g[D] = {0};
                for (int r = 0; r < Q; r++) { /* logistic: d/dm log(1 + e^{-ym}) = -y sigma(-ym) */
                    const double *c = f.X + (i * Q + r) * D;
                    double yy = f.Y[i * Q + r], m = 0;
                    for (int k = 0; k < D; k++) m += c[k] * w[k];
                    double sg = 1 / (1 + exp(yy * m));
                    for (int k = 0; k < D; k++) g[k] += -yy * sg * c[k] / Q;
                }
                for (int k = 0; k < D; k++) w[k] -= gamma * (g[k] + (w[k] - v[k]) / rho);
            }
            for (int k = 0; k < D; k++) {
                x[i][k] = w[k];
                z[i][k] += 2 * (w[k] - y[k]);
            }
        }
        CHECK_EQ(nact, 4);
        for (int i = 0; i < N; i++) {
            double xi[D], zi[D];
            dpdo_algorithm_get_iterate(a, i, xi, D);
            dpdo_algorithm_get_state(a, "z", i, zi, D);
            for (int k = 0; k < D; k++)
                worst = fmax(worst, fmax(fabs(xi[k] - x[i][k]) / (1 + fabs(x[i][k])),
                                         fabs(zi[k] - z[i][k]) / (1 + fabs(z[i][k]))));
        }
    }
    CHECK_MSG(worst < 1e-12, "worst relative difference %g", worst);
    dpdo_algorithm_destroy(a);
    dpdo_solver_destroy(s);
    dpdo_regularizer_destroy(reg);
    fx_free(&f);
}

/* ---- privacy: T13, T15/T19, T16, T21 ------------------------------------------------ */

static void test_privacy(void)
{
    enum { N = 4, D = 2, Q = 250 };
    static fx f;
    /* 4 agents with q = 250 rows of unit-norm features (L = 2 B with B = 1) */
    memset(&f, 0, sizeof f);
    f.n = N, f.q = Q, f.d = D;
    static double X[N * Q * D], Y[N * Q];
    for (int i = 0; i < N * Q; i++) {
        double a0 = nrand(), a1 = nrand(), nn = sqrt(a0 * a0 + a1 * a1) + 1e-9;
        X[2 * i] = a0 / nn, X[2 * i + 1] = a1 / nn;
        Y[i] = urand() < 0.5 ? -1 : 1;
    }
    CHECK_EQ(dpdo_dataset_create(&f.ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_dense(f.ds, N * Q, D, X, Y, DPDO_COPY), DPDO_OK);
    CHECK_EQ(dpdo_loss_create(&f.loss, dpdo_loss_type_find("logistic"), NULL, D), DPDO_OK);
    for (int i = 0; i < N; i++) {
        CHECK_EQ(dpdo_shard_create_range(&f.sh[i], f.ds, (int64_t)i * Q, Q), DPDO_OK);
        CHECK_EQ(dpdo_node_create(&f.nodes[i], f.sh[i], f.loss, 1.0), DPDO_OK);
    }
    CHECK_EQ(dpdo_ledger_create(&f.led, N), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&f.acc, dpdo_accountant_type_find("rdp"), NULL, f.led, NULL), DPDO_OK);
    /* T15/T19 through PAPER calibration: L = 2, lambda_lo = 0.5, q = 250, gamma = 0.5,
     * K = 10, N_e = 5, target eps* = 0.07683002502 at delta = 1e-5 -> tau^2 = 1 */
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = DPDO_NOISE_PAPER;
    o.max_rounds = 10;
    o.epsilon = 0.07683002502;
    o.delta = 1e-5;
    o.lipschitz = 2.0;
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("fed-plt")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, N, NULL, NULL, f.acc, &o), DPDO_OK);
    dpdo_solver *s = mksolver("noisy-gd", D, 0.5, 0.75);
    CHECK_EQ(dpdo_solver_set(s, "step", 0.5), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_solver(a, s), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
    double tau;
    CHECK_EQ(dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &tau), DPDO_OK);
    CHECK_REL(tau * tau, 1.0, 1e-6);
    double clip;
    dpdo_solver_get(s, "clip", &clip);
    CHECK_NEAR(clip, 1.0, 0); /* L/2 */
    CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
    double ep, er, dl;
    int32_t valid;
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_PAPER, DPDO_NODE_ALL, &ep, &dl, &valid), DPDO_OK);
    CHECK_REL(ep, 0.0768300, 1e-5);
    CHECK_NEAR(dl, 1e-5, 0);
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &er, NULL, NULL), DPDO_OK);
    CHECK(er >= ep); /* T21: every message accounted costs at least the final-model claim */
    for (int i = 0; i < N; i++) CHECK_EQ(dpdo_ledger_charges(f.led, i), 50);
    CHECK_STR_CONTAINS(dpdo_algorithm_privacy_notes(a), "final model");
    dpdo_algorithm_destroy(a);
    /* T16: the paper's epsilon after K rounds is non-decreasing in N_e (fixed tau = 1) */
    double prev = 0;
    const int nes[] = {1, 2, 5, 8, 10, 20};
    const double want[] = {9.132739e-4, 1.174931e-3, 1.277529e-3, 1.279942e-3, 1.279995e-3, 1.280000e-3};
    for (int c = 0; c < 6; c++) {
        dpdo_ledger_reset(f.led);
        o.noise_mode = DPDO_NOISE_FIXED;
        o.sigma = 1.0;
        o.max_epsilon = INFINITY;
        CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("fed-plt")), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, N, NULL, NULL, f.acc, &o), DPDO_OK);
        dpdo_algorithm_set_solver(a, s);
        dpdo_algorithm_set_int(a, DPDO_PARAM_FED_EPOCHS, nes[c]);
        CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
        double e10;
        CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_PAPER, DPDO_NODE_ALL, &ep, NULL, NULL), DPDO_OK);
        CHECK(ep >= prev);
        prev = ep;
        /* the RDP at alpha = 10 (the table of spec §4.6) from the same object */
        dpdo_paper *pp = dpdo__algorithm_eng(a)->pv.paper;
        CHECK_EQ(dpdo_paper_get(pp, "rdp", &e10), DPDO_OK);
        CHECK_REL(e10, want[c], 1e-6);
        dpdo_algorithm_destroy(a);
    }
    dpdo_solver_destroy(s);
    /* T13: noisy-gd with tau = 0 (FIXED sigma = 0) is bit-identical to gd (NONE) */
    double xa[D], xb[D];
    for (int c = 0; c < 2; c++) {
        dpdo_ledger_reset(f.led);
        o.noise_mode = c ? DPDO_NOISE_FIXED : DPDO_NOISE_NONE;
        o.sigma = 0.0;
        o.max_rounds = 25;
        CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("fed-plt")), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, N, NULL, NULL, f.acc, &o), DPDO_OK);
        s = mksolver(c ? "noisy-gd" : "gd", D, 0.5, 0.75);
        CHECK_EQ(dpdo_solver_set(s, "step", 0.5), DPDO_OK);
        dpdo_algorithm_set_solver(a, s);
        dpdo_algorithm_set_double(a, DPDO_PARAM_CLIP, INFINITY);
        CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
        dpdo_algorithm_get_output(a, DPDO_NODE_ALL, c ? xb : xa, D);
        dpdo_algorithm_destroy(a);
        dpdo_solver_destroy(s);
    }
    CHECK(memcmp(xa, xb, sizeof xa) == 0);
    /* a private run needs noisy-gd: the default solver is then noisy-gd (issue 22), a host's plain
     * gd is refused */
    o.noise_mode = DPDO_NOISE_RIGOROUS;
    o.epsilon = 1.0;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("fed-plt")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, N, NULL, NULL, f.acc, &o), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
    CHECK_STR_CONTAINS(dpdo_algorithm_privacy_notes(a), "local solver 'noisy-gd': lambda_hi = ");
    s = mksolver("gd", D, 0.5, 0.75);
    CHECK_EQ(dpdo_algorithm_set_solver(a, s), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "noisy-gd");
    CHECK_EQ(dpdo_algorithm_set_solver(a, NULL), DPDO_OK);
    dpdo_solver_destroy(s);
    /* rigorous calibration: the run ends within the target */
    s = mksolver("noisy-gd", D, 0.5, 0.75);
    dpdo_algorithm_set_solver(a, s);
    CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
    CHECK_EQ(dpdo_algorithm_stop_reason(a), DPDO_STOP_MAX_ROUNDS);
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &er, NULL, NULL), DPDO_OK);
    CHECK(er <= 1.0 && er > 0.99);
    dpdo_algorithm_destroy(a);
    dpdo_solver_destroy(s);
    /* set_solver misuse */
    CHECK_EQ(dpdo_algorithm_set_solver(NULL, NULL), DPDO_E_INVAL);
    fx_free(&f);
}

/* ---- no allocation inside step() after round 1 (noisy GD, Bernoulli participation) ------ */

static void test_no_alloc(void)
{
    enum { N = 5, D = 3 };
    fx f;
    fx_make(&f, N, 12, D, "logistic");
    /* clip = inf below: L/2 must cover the rows' per-sample gradients (norms of a few units) */
    dpdo_algorithm *a = mk_L(&f, NULL, DPDO_NOISE_FIXED, 200, 0.3, 100.0);
    dpdo_solver *s = mksolver("noisy-gd", D, 0.1, 2.0);
    CHECK_EQ(dpdo_algorithm_set_solver(a, s), DPDO_OK);
    dpdo_algorithm_set_double(a, DPDO_PARAM_FED_P, 0.5);
    dpdo_algorithm_set_double(a, DPDO_PARAM_CLIP, INFINITY);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
    dpdo__fault_arm(0);
    int rc = DPDO_ROUND;
    for (int t = 0; t < 150 && rc == DPDO_ROUND; t++) rc = dpdo_algorithm_step(a);
    long allocs = dpdo__fault_allocs();
    dpdo__fault_arm(-1);
    CHECK_EQ(rc, DPDO_ROUND);
    CHECK_EQ(allocs, 0);
    dpdo_algorithm_destroy(a);
    dpdo_solver_destroy(s);
    fx_free(&f);
}

/* ---- clip = inf trusts the data: checked against lipschitz, as DP-DDA and DO-ADP do --------- */

static void test_trusted_lipschitz(void)
{
    enum { N = 3, D = 3 };
    fx f;
    fx_make(&f, N, 12, D, "logistic");
    /* the per-sample gradient bound of each agent's rows, and the first agent's */
    double reach[N], worst = 0;
    for (int i = 0; i < N; i++) {
        CHECK_EQ(dpdo_node_lipschitz(f.nodes[i], INFINITY, &reach[i]), DPDO_OK);
        worst = fmax(worst, reach[i]);
    }
    CHECK(reach[0] > 0.005);
    const int modes[] = {DPDO_NOISE_RIGOROUS, DPDO_NOISE_FIXED};
    for (int m = 0; m < 2; m++) {
        /* L = 0.01: Assumption 3 needs gradient norms <= L/2 = 0.005; refused, both numbers named */
        dpdo_algorithm *a = mk_L(&f, NULL, modes[m], 20, 0.5, 0.01);
        dpdo_solver *s = mksolver("noisy-gd", D, f.lo, f.hi);
        CHECK_EQ(dpdo_algorithm_set_solver(a, s), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_CLIP, INFINITY), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_E_INVAL);
        char want[160];
        snprintf(want, sizeof want, "agent 0: per-sample gradients reach %g > L/2 = 0.005 (lipschitz L = 0.01)",
                 reach[0]);
        CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), want);
        /* clip unset: clipping at L/2, accepted */
        CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_CLIP, NAN), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
        dpdo_algorithm_destroy(a);
        /* L/2 just above the data's bound: accepted with clip = inf; just below: refused */
        for (int below = 0; below < 2; below++) {
            double L = 2.0 * worst * (below ? 1 - 1e-9 : 1 + 1e-9);
            a = mk_L(&f, NULL, modes[m], 20, 0.5, L);
            CHECK_EQ(dpdo_algorithm_set_solver(a, s), DPDO_OK);
            CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_CLIP, INFINITY), DPDO_OK);
            int rc = dpdo_algorithm_prepare(a);
            CHECK_MSG(rc == (below ? DPDO_E_INVAL : DPDO_OK), "L = %.17g: %d %s", L, rc, dpdo_algorithm_errmsg(a));
            if (!below) CHECK_STR_CONTAINS(dpdo_algorithm_privacy_notes(a), "no clipping");
            dpdo_algorithm_destroy(a);
        }
        dpdo_solver_destroy(s);
    }
    /* not private (no noise): nothing to check */
    dpdo_algorithm *a = mk_L(&f, NULL, DPDO_NOISE_NONE, 20, NAN, 0.01);
    dpdo_solver *s = mksolver("gd", D, f.lo, f.hi);
    CHECK_EQ(dpdo_algorithm_set_solver(a, s), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_CLIP, INFINITY), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
    dpdo_algorithm_destroy(a);
    dpdo_solver_destroy(s);
    fx_free(&f);
}

/* ---- participation chosen per agent and by the host --------------------------------------- */

static void test_participation(void)
{
    enum { N = 4, D = 2, T = 800 };
    fx f;
    fx_make(&f, N, 10, D, "squared");
    dpdo_algorithm *a = mk(&f, NULL, DPDO_NOISE_NONE, T, NAN);
    dpdo_solver *s = mksolver("gd", D, f.lo, f.hi);
    dpdo_algorithm_set_solver(a, s);
    const double p[N] = {0.2, 0.5, 0.9, 1.0};
    CHECK_EQ(dpdo_algorithm_set_node_probabilities(a, p, N), DPDO_OK);
    const double bad[N] = {0.2, 0.0, 0.9, 1.0};
    CHECK_EQ(dpdo_algorithm_set_node_probabilities(a, bad, N), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_node_probabilities(a, p, N - 1), DPDO_E_INVAL);
    int cnt[N] = {0};
    for (int t = 0; t < T; t++) {
        if (t == 10) { /* the host overrides one round */
            const int32_t mask[N] = {1, 0, 0, 1};
            CHECK_EQ(dpdo_algorithm_set_next_active(a, mask, N), DPDO_OK);
        }
        CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
        int32_t fl[N];
        dpdo_algorithm_get_active(a, fl, N);
        if (t == 10) CHECK(fl[0] == 1 && fl[1] == 0 && fl[2] == 0 && fl[3] == 1);
        else
            for (int i = 0; i < N; i++) cnt[i] += fl[i];
    }
    for (int i = 0; i < N; i++) {
        double se = sqrt(p[i] * (1 - p[i]) / (T - 1)) + 1e-12;
        CHECK_MSG(fabs(cnt[i] / (double)(T - 1) - p[i]) <= 4 * se, "agent %d: %g vs %g", i, cnt[i] / (double)(T - 1), p[i]);
    }
    const int32_t none[N] = {0, 0, 0, 0}, two[N] = {2, 0, 0, 1};
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_DONE);
    CHECK_EQ(dpdo_algorithm_set_next_active(a, none, N), DPDO_E_STATE); /* DONE now */
    CHECK_EQ(dpdo_algorithm_reset(a), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_next_active(a, none, N), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_next_active(a, two, N), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_next_active(NULL, two, N), DPDO_E_INVAL);
    dpdo_algorithm_destroy(a);
    dpdo_solver_destroy(s);
    /* algorithms that choose their own nodes refuse */
    dpdo_algorithm *b = NULL;
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = DPDO_NOISE_NONE;
    CHECK_EQ(dpdo_algorithm_create(&b, dpdo_algorithm_type_find("fedpd")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(b, f.nodes, N, NULL, NULL, NULL, &o), DPDO_OK);
    const int32_t all[N] = {1, 1, 1, 1};
    CHECK_EQ(dpdo_algorithm_set_next_active(b, all, N), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_algorithm_set_node_probabilities(b, p, N), DPDO_E_UNSUPPORTED);
    dpdo_algorithm_destroy(b);
    fx_free(&f);
}

/* ---- T22-T24: the rate constants of §5 ---------------------------------------------------- */

static void test_rate_constants(void)
{
    double o[8];
    double chi5 = pow(1.0 / 3.0, 5); /* GD with gamma* = 1/3 on lambda in [1, 3], rho = 1 */
    CHECK_EQ(dpdo_fedplt_rate(1, 3, 1, chi5, 0, 1.0, o, 8), DPDO_OK);
    CHECK_NEAR(o[0], 0.0041152, 1e-7);
    CHECK_NEAR(o[1], 0.5020576, 1e-7);
    CHECK_NEAR(o[2], 0.0082305, 1e-7);
    CHECK_NEAR(o[3], 0.5041152, 1e-7);
    CHECK_REL(o[4], 0.7115268, 1e-7);
    CHECK_REL(o[5], 0.5122473, 1e-7);
    CHECK_NEAR(o[6], 0.5, 1e-15);
    CHECK_NEAR(o[7], 0.7115268, 1e-7); /* p_lo = 1: sigma = ||S|| */
    CHECK_EQ(dpdo_fedplt_rate(1, 3, 1, chi5, 0, 0.5, o, 8), DPDO_OK);
    CHECK_REL(o[7], 0.8678336, 1e-7);
    double nu;
    CHECK_EQ(dpdo_fedplt_noise_error(0.1, 5, 100, 1.0 / 3.0, 1.0 / 3.0, 5, &nu), DPDO_OK);
    CHECK_REL(nu, 6.0985238, 1e-7);
    CHECK_EQ(dpdo_fedplt_rate(1, 3, 1, chi5, 0, 1.0, o, 8), DPDO_OK);
    CHECK_REL(nu / (1 - o[4]), 21.14069, 1e-6);
    CHECK_EQ(dpdo_fedplt_rate(1, 3, 1, chi5, 0, 0.5, o, 8), DPDO_OK);
    CHECK_REL(nu / (1 - o[7]), 46.14277, 1e-6);
    /* sigma decreases as participation grows */
    double prev = 2;
    for (double p = 0.1; p <= 1.0001; p += 0.1) {
        CHECK_EQ(dpdo_fedplt_rate(1, 3, 1, chi5, 0, p, o, 8), DPDO_OK);
        CHECK(o[7] < prev);
        prev = o[7];
    }
    /* the paper's and the corrected coupling agree at rho = 1 and differ elsewhere */
    double q[8];
    CHECK_EQ(dpdo_fedplt_rate(0.5, 2, 0.1, 0.2, 1, 1, q, 8), DPDO_OK);
    CHECK_EQ(dpdo_fedplt_rate(0.5, 2, 0.1, 0.2, 0, 1, o, 8), DPDO_OK);
    CHECK_REL(q[1] / (1 + 0.2), 1 / (0.5 + 10.0), 1e-15);
    CHECK_REL(o[1] / (1 + 0.2), 1 / (1 + 0.05), 1e-15); /* 0.952381: what T22's quadratic attains */
    /* sr(S) < 1 exactly when (1 - zeta)(1 - a) > 4 a c, on a grid */
    int bad = 0;
    for (double lo = 0.1; lo < 3; lo *= 1.7)
        for (double rho = 0.05; rho < 20; rho *= 2.3)
            for (double a = 0; a < 1; a += 0.07) {
                CHECK_EQ(dpdo_fedplt_rate(lo, 3 * lo, rho, a, 0, 1, o, 8), DPDO_OK);
                double c = 1 / (1 + rho * lo), lhs = (1 - o[6]) * (1 - a), rhs = 4 * a * c;
                if (fabs(lhs - rhs) > 1e-9 && ((o[5] < 1) != (lhs > rhs))) bad++;
            }
    CHECK_EQ(bad, 0);
    CHECK_EQ(dpdo_fedplt_rate(0, 3, 1, 0.1, 0, 1, o, 8), DPDO_E_INVAL);
    CHECK_EQ(dpdo_fedplt_rate(1, 3, 1, 0.1, 2, 1, o, 8), DPDO_E_INVAL);
    CHECK_EQ(dpdo_fedplt_rate(1, 3, 1, 0.1, 0, 1, o, 7), DPDO_E_INVAL);
    CHECK_EQ(dpdo_fedplt_noise_error(0.1, 5, 100, 0.3, 1.0, 5, &nu), DPDO_E_INVAL);
}

int main(void)
{
    RUN(test_round_structure);
    RUN(test_exactness);
    RUN(test_fixed_point);
    RUN(test_independent);
    RUN(test_privacy);
    RUN(test_no_alloc);
    RUN(test_trusted_lipschitz);
    RUN(test_participation);
    RUN(test_rate_constants);
    return h_finish();
}
