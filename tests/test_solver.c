/* SPDX-License-Identifier: BSD-3-Clause */
/* Local solvers (spec fed-plt.md §3): the exact prox of the squared loss
 * against an independent normal-equation solve; GD's linear rate chi^N
 * (bound and tightness along the extreme eigenvectors) and fixed point; GD
 * and AGD iterates against straightforward loops written here; the AGD
 * constants on the spec's 1-D example (paper constant violated, corrected
 * constant holds); noisy GD: tau = 0 is bitwise GD, the noise is the stream
 * (node, round, NOISE) consumed in step order, its law over many draws;
 * SGD: the batches are stream (node, round, SAMPLE) subsets, batch = q is
 * GD; determinism; user solver types; bad input for every public function;
 * out-of-memory; no allocation inside runs. */
#include <stdint.h>
#include "dpdo/dpdo.h"
#include "dpdo/solver.h"
#include "core/core_impl.h"
#include "solver/solver_impl.h"
#include "harness.h"

enum { Q = 40, D = 4 };
static double X[Q * D], Y[Q];

static double urand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) * 0x1.0p-53;
}

static void make_data(void)
{
    uint64_t s = 12345;
    const double colscale[D] = {1.6, 1.0, 0.7, 0.4}; /* spread the spectrum */
    for (int i = 0; i < Q; i++) {
        for (int j = 0; j < D; j++) X[i * D + j] = (2 * urand(&s) - 1) * colscale[j];
        Y[i] = (i % 3) ? 1.0 : -1.0;
    }
}

/* A problem: dataset + one shard of rows [first, first+q) + loss + node. */
struct prob {
    dpdo_dataset *ds;
    dpdo_shard *sh;
    dpdo_loss *loss;
    dpdo_node *node;
};

static int prob_make(struct prob *p, const double *Xd, const double *Yd, int64_t n, int64_t d,
                     const char *loss)
{
    memset(p, 0, sizeof *p);
    if (dpdo_dataset_create(&p->ds)) return -1;
    if (dpdo_dataset_set_dense(p->ds, n, d, Xd, Yd, DPDO_COPY)) return -1;
    if (dpdo_shard_create_range(&p->sh, p->ds, 0, n)) return -1;
    if (dpdo_loss_create(&p->loss, dpdo_loss_type_find(loss), NULL, d)) return -1;
    if (dpdo_node_create(&p->node, p->sh, p->loss, 1.0)) return -1;
    return 0;
}

static void prob_free(struct prob *p)
{
    dpdo_node_destroy(p->node);
    dpdo_loss_destroy(p->loss);
    dpdo_shard_destroy(p->sh);
    dpdo_dataset_destroy(p->ds);
}

/* ---- independent linear algebra for the squared loss --------------------- */

/* A = (1/q) X^T X, b = -(1/q) X^T y over the first q rows */
static void quad_Ab(double A[D][D], double b[D])
{
    for (int i = 0; i < D; i++) {
        b[i] = 0;
        for (int j = 0; j < D; j++) A[i][j] = 0;
    }
    for (int r = 0; r < Q; r++)
        for (int i = 0; i < D; i++) {
            b[i] -= Y[r] * X[r * D + i] / Q;
            for (int j = 0; j < D; j++) A[i][j] += X[r * D + i] * X[r * D + j] / Q;
        }
}

/* Gaussian elimination with partial pivoting: M x = r (M, r destroyed). */
static void gauss_solve(double M[D][D], double r[D], double x[D])
{
    for (int c = 0; c < D; c++) {
        int p = c;
        for (int i = c + 1; i < D; i++)
            if (fabs(M[i][c]) > fabs(M[p][c])) p = i;
        for (int j = 0; j < D; j++) {
            double t = M[c][j];
            M[c][j] = M[p][j];
            M[p][j] = t;
        }
        double t = r[c];
        r[c] = r[p];
        r[p] = t;
        for (int i = c + 1; i < D; i++) {
            double f = M[i][c] / M[c][c];
            for (int j = c; j < D; j++) M[i][j] -= f * M[c][j];
            r[i] -= f * r[c];
        }
    }
    for (int i = D - 1; i >= 0; i--) {
        double s = r[i];
        for (int j = i + 1; j < D; j++) s -= M[i][j] * x[j];
        x[i] = s / M[i][i];
    }
}

/* Cyclic Jacobi eigen-decomposition of symmetric S: eigenvalues ev, vectors as columns of V. */
static void jacobi_eig(const double S[D][D], double ev[D], double V[D][D])
{
    double a[D][D];
    memcpy(a, S, sizeof a);
    for (int i = 0; i < D; i++)
        for (int j = 0; j < D; j++) V[i][j] = i == j;
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0;
        for (int i = 0; i < D; i++)
            for (int j = i + 1; j < D; j++) off += a[i][j] * a[i][j];
        if (off < 1e-32) break;
        for (int p = 0; p < D; p++)
            for (int q = p + 1; q < D; q++) {
                if (a[p][q] == 0) continue;
                double th = (a[q][q] - a[p][p]) / (2 * a[p][q]);
                double t = (th >= 0 ? 1 : -1) / (fabs(th) + sqrt(th * th + 1));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < D; k++) {
                    double akp = a[k][p], akq = a[k][q];
                    a[k][p] = c * akp - s * akq;
                    a[k][q] = s * akp + c * akq;
                }
                for (int k = 0; k < D; k++) {
                    double apk = a[p][k], aqk = a[q][k];
                    a[p][k] = c * apk - s * aqk;
                    a[q][k] = s * apk + c * aqk;
                }
                for (int k = 0; k < D; k++) {
                    double vkp = V[k][p], vkq = V[k][q];
                    V[k][p] = c * vkp - s * vkq;
                    V[k][q] = s * vkp + c * vkq;
                }
            }
    }
    for (int i = 0; i < D; i++) ev[i] = a[i][i];
}

static double dist(const double *a, const double *b, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += (a[i] - b[i]) * (a[i] - b[i]);
    return sqrt(s);
}

static const double V0[D] = {0.3, -1.2, 0.8, 2.0}; /* the prox centre v */
static const double RHO = 1.5;

/* xhat = prox_{rho f}(v) by the normal equations (I + rho A) x = v - rho b */
static void xhat_indep(double xh[D])
{
    double A[D][D], b[D], M[D][D], r[D];
    quad_Ab(A, b);
    for (int i = 0; i < D; i++) {
        for (int j = 0; j < D; j++) M[i][j] = (i == j) + RHO * A[i][j];
        r[i] = V0[i] - RHO * b[i];
    }
    gauss_solve(M, r, xh);
}

static void spectrum(double *lo, double *hi, double ev[D], double V[D][D])
{
    double A[D][D], b[D];
    quad_Ab(A, b);
    jacobi_eig(A, ev, V);
    *lo = *hi = ev[0];
    for (int i = 1; i < D; i++) {
        if (ev[i] < *lo) *lo = ev[i];
        if (ev[i] > *hi) *hi = ev[i];
    }
}

/* ---- exact prox and GD -------------------------------------------------------- */

static void exact_quadratic_vs_normal_equations(void)
{
    struct prob p;
    CHECK(prob_make(&p, X, Y, Q, D, "squared") == 0);
    dpdo_solver *s = NULL;
    CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find("exact-quadratic"), NULL, D), DPDO_OK);
    double w[D] = {5, 5, 5, 5}, xh[D];
    CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, 3, NULL, 0, 0, w), DPDO_OK);
    xhat_indep(xh);
    for (int j = 0; j < D; j++) CHECK_NEAR(w[j], xh[j], 1e-13 * (1 + fabs(xh[j])));
    /* the optimality condition grad f(x) + (x - v)/rho = 0 via dpdo_node_eval */
    double g[D];
    CHECK_EQ(dpdo_node_eval(p.node, w, D, NULL, 0, 0.0, NULL, g, NULL), DPDO_OK);
    for (int j = 0; j < D; j++) CHECK_NEAR(g[j] + (w[j] - V0[j]) / RHO, 0.0, 1e-13);
    /* epochs are ignored, also 0; the warm start does not matter */
    double w2[D] = {-1, 0, 7, 1};
    CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, 0, NULL, 0, 0, w2), DPDO_OK);
    CHECK(memcmp(w, w2, sizeof w) == 0);
    double c = -1;
    CHECK_EQ(dpdo_solver_contraction(s, RHO, 5, &c), DPDO_OK);
    CHECK(c == 0.0);
    dpdo_solver_destroy(s);
    prob_free(&p);
}

static void gd_linear_rate(void)
{
    struct prob p;
    CHECK(prob_make(&p, X, Y, Q, D, "squared") == 0);
    double lo, hi, ev[D], V[D][D], xh[D], A[D][D], b[D];
    spectrum(&lo, &hi, ev, V);
    CHECK(hi / lo > 3); /* a non-trivial condition number */
    xhat_indep(xh);
    quad_Ab(A, b);
    dpdo_solver *s = NULL;
    CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find("gd"), NULL, D), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "lambda_lo", lo), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "lambda_hi", hi), DPDO_OK);
    const double mud = lo + 1 / RHO, Ld = hi + 1 / RHO;
    const double gstar = 2 / (hi + lo + 2 / RHO);
    CHECK_REL(dpdo__solver_step(s, RHO), gstar, 1e-15);
    const double chi = fmax(fabs(1 - gstar * mud), fabs(1 - gstar * Ld));
    CHECK_REL(chi, (hi - lo) / (hi + lo + 2 / RHO), 1e-12); /* chi* of spec §3.1 */
    const int Ns[] = {1, 2, 5, 10, 20};
    uint64_t sd = 7;
    for (int t = 0; t < 5; t++) {
        int N = Ns[t];
        double c;
        CHECK_EQ(dpdo_solver_contraction(s, RHO, N, &c), DPDO_OK);
        CHECK_REL(c, pow(chi, N), 1e-13);
        for (int rep = 0; rep < 20; rep++) {
            double w[D], w0[D], wi[D];
            for (int j = 0; j < D; j++) w0[j] = w[j] = wi[j] = xh[j] + 4 * (urand(&sd) - 0.5);
            CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, N, NULL, 0, 0, w), DPDO_OK);
            /* independent GD with the closed-form gradient A w + b */
            for (int l = 0; l < N; l++) {
                double g[D];
                for (int i = 0; i < D; i++) {
                    g[i] = b[i];
                    for (int j = 0; j < D; j++) g[i] += A[i][j] * wi[j];
                }
                for (int i = 0; i < D; i++) wi[i] -= gstar * (g[i] + (wi[i] - V0[i]) / RHO);
            }
            for (int j = 0; j < D; j++) CHECK_NEAR(w[j], wi[j], 1e-13);
            double r0 = dist(w0, xh, D), rN = dist(w, xh, D);
            CHECK_MSG(rN <= pow(chi, N) * r0 * (1 + 1e-9) + 1e-14,
                      "N=%d: %.17g > chi^N %.17g * %.17g", N, rN, pow(chi, N), r0);
        }
        /* tightness: along the extreme eigenvectors the ratio is exactly chi^N */
        for (int e = 0; e < D; e++) {
            if (ev[e] != lo && ev[e] != hi) continue;
            double w[D], w0[D];
            for (int j = 0; j < D; j++) w0[j] = w[j] = xh[j] + V[j][e];
            CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, N, NULL, 0, 0, w), DPDO_OK);
            CHECK_NEAR(dist(w, xh, D) / dist(w0, xh, D), pow(chi, N), 1e-8 * pow(chi, N) + 1e-13);
        }
    }
    /* a non-optimal explicit step: the rate chi(gamma)^N */
    CHECK_EQ(dpdo_solver_set(s, "step", 0.5 / Ld), DPDO_OK);
    double c, chi2 = fmax(fabs(1 - 0.5 / Ld * mud), fabs(1 - 0.5));
    CHECK_EQ(dpdo_solver_contraction(s, RHO, 3, &c), DPDO_OK);
    CHECK_REL(c, pow(chi2, 3), 1e-13);
    dpdo_solver_destroy(s);
    prob_free(&p);
}

static void gd_fixed_point(void)
{
    struct prob p;
    CHECK(prob_make(&p, X, Y, Q, D, "squared") == 0);
    double lo, hi, ev[D], V[D][D];
    spectrum(&lo, &hi, ev, V);
    dpdo_solver *ex = NULL;
    CHECK_EQ(dpdo_solver_create(&ex, dpdo_solver_type_find("exact-quadratic"), NULL, D), DPDO_OK);
    double xh[D] = {0};
    CHECK_EQ(dpdo_solver_run(ex, p.node, V0, D, RHO, 1, NULL, 0, 0, xh), DPDO_OK);
    const char *names[] = {"gd", "agd", "noisy-gd"};
    for (int t = 0; t < 3; t++) {
        dpdo_solver *s = NULL;
        CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find(names[t]), NULL, D), DPDO_OK);
        CHECK_EQ(dpdo_solver_set(s, "lambda_lo", lo), DPDO_OK);
        CHECK_EQ(dpdo_solver_set(s, "lambda_hi", hi), DPDO_OK);
        for (int N = 1; N <= 50; N *= 7) {
            double w[D];
            memcpy(w, xh, sizeof w);
            CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, N, NULL, 0, 0, w), DPDO_OK);
            CHECK_MSG(dist(w, xh, D) <= 1e-14, "%s N=%d: moved %.3g from xhat", names[t], N,
                      dist(w, xh, D));
        }
        dpdo_solver_destroy(s);
    }
    dpdo_solver_destroy(ex);
    prob_free(&p);
}

/* ---- AGD --------------------------------------------------------------------- */

static void agd_matches_independent_loop(void)
{
    struct prob p;
    CHECK(prob_make(&p, X, Y, Q, D, "squared") == 0);
    double lo, hi, ev[D], V[D][D], A[D][D], b[D];
    spectrum(&lo, &hi, ev, V);
    quad_Ab(A, b);
    dpdo_solver *s = NULL;
    CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find("agd"), NULL, D), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "lambda_lo", lo), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "lambda_hi", hi), DPDO_OK);
    const double mud = lo + 1 / RHO, Ld = hi + 1 / RHO;
    const double beta = (sqrt(Ld) - sqrt(mud)) / (sqrt(Ld) + sqrt(mud));
    CHECK_REL(dpdo__solver_step(s, RHO), 1 / Ld, 1e-15);
    double w[D] = {1, 2, -3, 0.5}, wi[D], u[D];
    memcpy(wi, w, sizeof w);
    memcpy(u, w, sizeof w);
    CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, 7, NULL, 0, 0, w), DPDO_OK);
    for (int l = 0; l < 7; l++) {
        double g[D], un[D];
        for (int i = 0; i < D; i++) {
            g[i] = b[i] + (wi[i] - V0[i]) / RHO;
            for (int j = 0; j < D; j++) g[i] += A[i][j] * wi[j];
        }
        for (int i = 0; i < D; i++) un[i] = wi[i] - g[i] / Ld;
        for (int i = 0; i < D; i++) {
            wi[i] = un[i] + beta * (un[i] - u[i]);
            u[i] = un[i];
        }
    }
    for (int j = 0; j < D; j++) CHECK_NEAR(w[j], wi[j], 1e-13);
    /* the output is the extrapolated w^{N_e}, not u^{N_e} */
    CHECK(dist(w, u, D) > 1e-6);
    /* unknown lambdas: agd refuses */
    CHECK_EQ(dpdo_solver_set(s, "lambda_lo", NAN), DPDO_OK);
    CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, 7, NULL, 0, 0, w), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_solver_errmsg(s), "lambda_lo");
    dpdo_solver_destroy(s);
    prob_free(&p);
}

/* Spec §3.2 / T25: f(w) = lam/2 w^2 with d's curvature lam + 1/rho in [1, 2]
 * (rho = 2, lam in [0.5, 1.5], lambda_lo = 0.5, lambda_hi = 1.5: mu_d = 1,
 * L_d = 2, kappa_d = 2), N_e = 5. Built from the squared loss with one
 * sample a = sqrt(lam), y = 0 and v = 0 (so prox = 0). */
static void agd_1d_constants(void)
{
    const double rho = 2.0;
    const int NE = 5, NGRID = 401;
    double worst = 0;
    double c = -1;
    for (int k = 0; k < NGRID; k++) {
        double lam = 0.5 + (double)k / (NGRID - 1);
        double a = sqrt(lam), y = 0.0;
        struct prob p;
        CHECK(prob_make(&p, &a, &y, 1, 1, "squared") == 0);
        dpdo_solver *s = NULL;
        CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find("agd"), NULL, 1), DPDO_OK);
        CHECK_EQ(dpdo_solver_set(s, "lambda_lo", 0.5), DPDO_OK);
        CHECK_EQ(dpdo_solver_set(s, "lambda_hi", 1.5), DPDO_OK);
        double v = 0.0, w = 1.0;
        CHECK_EQ(dpdo_solver_run(s, p.node, &v, 1, rho, NE, NULL, 0, 0, &w), DPDO_OK);
        if (fabs(w) > worst) worst = fabs(w);
        if (k == 0) CHECK_EQ(dpdo_solver_contraction(s, rho, NE, &c), DPDO_OK);
        dpdo_solver_destroy(s);
        prob_free(&p);
    }
    const double kappa = 2.0, za = 1 - 1 / sqrt(kappa);
    const double paper = (1 + kappa) * pow(za, NE);
    const double corrected = sqrt(1 + kappa) * pow(za, NE / 2.0);
    CHECK_NEAR(paper, 6.47e-3, 0.005e-3);
    CHECK_NEAR(corrected, 8.04e-2, 0.005e-2);
    CHECK_MSG(worst >= 6.6e-3 && worst <= 6.7e-3, "worst ratio %.6g", worst);
    CHECK_MSG(worst > paper, "the paper's constant %.6g should be violated (worst %.6g)", paper,
              worst);
    CHECK(worst <= corrected);
    CHECK_REL(c, corrected, 1e-13); /* the handle reports the corrected constant */
    /* kappa = 1: AGD is exact after one step, constant 0, no NaN */
    {
        double a = 1.0, y = 0.0;
        struct prob p;
        CHECK(prob_make(&p, &a, &y, 1, 1, "squared") == 0);
        dpdo_solver *s = NULL;
        CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find("agd"), NULL, 1), DPDO_OK);
        CHECK_EQ(dpdo_solver_set(s, "lambda_lo", 1.0), DPDO_OK);
        CHECK_EQ(dpdo_solver_set(s, "lambda_hi", 1.0), DPDO_OK);
        double v = 0.0, w = 3.0;
        CHECK_EQ(dpdo_solver_contraction(s, rho, 1, &c), DPDO_OK);
        CHECK(c == 0.0);
        CHECK_EQ(dpdo_solver_contraction(s, rho, 0, &c), DPDO_OK);
        CHECK(c == 1.0);
        CHECK_EQ(dpdo_solver_run(s, p.node, &v, 1, rho, 1, NULL, 0, 0, &w), DPDO_OK);
        CHECK_NEAR(w, 0.0, 1e-15);
        dpdo_solver_destroy(s);
        prob_free(&p);
    }
}

/* ---- noisy GD ------------------------------------------------------------------- */

static void noisy_tau0_is_gd_bitwise(void)
{
    struct prob p;
    CHECK(prob_make(&p, X, Y, Q, D, "logistic") == 0);
    dpdo_rng *rng = NULL;
    CHECK_EQ(dpdo_rng_create(&rng, NULL, NULL, 11), DPDO_OK);
    dpdo_solver *gd = NULL, *ng = NULL;
    CHECK_EQ(dpdo_solver_create(&gd, dpdo_solver_type_find("gd"), NULL, D), DPDO_OK);
    CHECK_EQ(dpdo_solver_create(&ng, dpdo_solver_type_find("noisy-gd"), NULL, D), DPDO_OK);
    const double clips[] = {0.0, 0.3};
    for (int t = 0; t < 2; t++) {
        CHECK_EQ(dpdo_solver_set(gd, "step", 0.37), DPDO_OK);
        CHECK_EQ(dpdo_solver_set(ng, "step", 0.37), DPDO_OK);
        CHECK_EQ(dpdo_solver_set(gd, "clip", clips[t]), DPDO_OK);
        CHECK_EQ(dpdo_solver_set(ng, "clip", clips[t]), DPDO_OK);
        CHECK_EQ(dpdo_solver_set(ng, "tau", 0.0), DPDO_OK);
        double a[D] = {0.1, 0.2, -0.3, 0.4}, b[D], c[D];
        memcpy(b, a, sizeof a);
        memcpy(c, a, sizeof a);
        CHECK_EQ(dpdo_solver_run(gd, p.node, V0, D, RHO, 9, NULL, 3, 4, a), DPDO_OK);
        CHECK_EQ(dpdo_solver_run(ng, p.node, V0, D, RHO, 9, rng, 3, 4, b), DPDO_OK);
        CHECK_EQ(dpdo_solver_run(ng, p.node, V0, D, RHO, 9, NULL, 3, 4, c), DPDO_OK); /* no draw */
        CHECK(memcmp(a, b, sizeof a) == 0);
        CHECK(memcmp(a, c, sizeof a) == 0);
        CHECK(dist(a, V0, D) > 0.1); /* it moved */
    }
    CHECK_EQ(dpdo_solver_dp_accountable(ng), 0);
    CHECK_EQ(dpdo_solver_set(ng, "tau", 0.5), DPDO_OK);
    CHECK_EQ(dpdo_solver_dp_accountable(ng), 1);
    CHECK_EQ(dpdo_solver_dp_accountable(gd), 0);
    CHECK_EQ(dpdo__solver_is_noisy_gd(ng), 1);
    CHECK_EQ(dpdo__solver_is_noisy_gd(gd), 0);
    /* tau > 0 needs the rng */
    double w[D] = {0};
    CHECK_EQ(dpdo_solver_run(ng, p.node, V0, D, RHO, 2, NULL, 0, 0, w), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_solver_errmsg(ng), "rng");
    dpdo_solver_destroy(gd);
    dpdo_solver_destroy(ng);
    dpdo_rng_destroy(rng);
    prob_free(&p);
}

/* The noise is stream (node, round, NOISE), normals [l*dim, (l+1)*dim) at
 * step l, added after the gradient step, also at the last step. */
static void noisy_stream_oracle(void)
{
    struct prob p;
    CHECK(prob_make(&p, X, Y, Q, D, "logistic") == 0);
    dpdo_rng *rng = NULL;
    CHECK_EQ(dpdo_rng_create(&rng, NULL, NULL, 2024), DPDO_OK);
    dpdo_solver *s = NULL;
    CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find("noisy-gd"), NULL, D), DPDO_OK);
    const double gamma = 0.25, tau = 0.7;
    CHECK_EQ(dpdo_solver_set(s, "step", gamma), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "tau", tau), DPDO_OK);
    const int NE = 3;
    double z[NE * D];
    CHECK_EQ(dpdo_rng_normal(rng, 5, 9, DPDO_PURPOSE_NOISE, 0, z, NE * D), DPDO_OK);
    double w[D] = {0.5, -0.5, 0.25, 1.0}, wi[D];
    memcpy(wi, w, sizeof w);
    CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, NE, rng, 5, 9, w), DPDO_OK);
    for (int l = 0; l < NE; l++) {
        double g[D];
        CHECK_EQ(dpdo_node_eval(p.node, wi, D, NULL, 0, 0.0, NULL, g, NULL), DPDO_OK);
        for (int j = 0; j < D; j++)
            wi[j] = wi[j] - gamma * (g[j] + (wi[j] - V0[j]) / RHO) + sqrt(2 * gamma) * tau * z[l * D + j];
    }
    for (int j = 0; j < D; j++) CHECK_NEAR(w[j], wi[j], 1e-14);
    /* odd dimension: normals of one Box-Muller pair straddle two steps */
    {
        struct prob p3;
        CHECK(prob_make(&p3, X, Y, Q, 3, "logistic") == 0);
        dpdo_solver *s3 = NULL;
        CHECK_EQ(dpdo_solver_create(&s3, dpdo_solver_type_find("noisy-gd"), NULL, 3), DPDO_OK);
        CHECK_EQ(dpdo_solver_set(s3, "step", gamma), DPDO_OK);
        CHECK_EQ(dpdo_solver_set(s3, "tau", tau), DPDO_OK);
        double z3[3 * 3], w3[3] = {0.1, 0.2, 0.3}, wj[3] = {0.1, 0.2, 0.3}, g3[3];
        for (int l = 0; l < 3; l++) /* offsets l*n, drawn separately */
            CHECK_EQ(dpdo_rng_normal(rng, 6, 1, DPDO_PURPOSE_NOISE, (uint64_t)(3 * l), z3 + 3 * l, 3), DPDO_OK);
        CHECK_EQ(dpdo_solver_run(s3, p3.node, V0, 3, RHO, 3, rng, 6, 1, w3), DPDO_OK);
        for (int l = 0; l < 3; l++) {
            CHECK_EQ(dpdo_node_eval(p3.node, wj, 3, NULL, 0, 0.0, NULL, g3, NULL), DPDO_OK);
            for (int j = 0; j < 3; j++)
                wj[j] = wj[j] - gamma * (g3[j] + (wj[j] - V0[j]) / RHO) + sqrt(2 * gamma) * tau * z3[l * 3 + j];
        }
        for (int j = 0; j < 3; j++) CHECK_NEAR(w3[j], wj[j], 1e-14);
        dpdo_solver_destroy(s3);
        prob_free(&p3);
    }
    /* the auto DP step 1/(lambda_hi + 1/rho) */
    CHECK_EQ(dpdo_solver_set(s, "step", NAN), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "lambda_hi", 0.8), DPDO_OK);
    CHECK_REL(dpdo__solver_step(s, RHO), 1 / (0.8 + 1 / RHO), 1e-15);
    dpdo_solver_destroy(s);
    dpdo_rng_destroy(rng);
    prob_free(&p);
}

/* A model-kind loss with f = 0 (zero gradient). */
static int zero_model(void *user, const double *x, int64_t dim, double *value, double *grad)
{
    (void)user;
    (void)x;
    *value = 0;
    if (grad)
        for (int64_t j = 0; j < dim; j++) grad[j] = 0;
    return 0;
}

static void noisy_noise_statistics(void)
{
    const int64_t dim = 500;
    const int rounds = h_quick() ? 40 : 200, NE = 6;
    const double gamma = 0.1, tau = 0.8, rho = 1e3;
    dpdo_loss_type zt = {sizeof zt, "zero", NULL, NULL, zero_model, NULL, NULL, NULL};
    dpdo_loss *l = NULL;
    dpdo_node *nd = NULL;
    CHECK_EQ(dpdo_loss_create(&l, &zt, NULL, dim), DPDO_OK);
    CHECK_EQ(dpdo_node_create(&nd, NULL, l, 1.0), DPDO_OK);
    dpdo_rng *rng = NULL;
    CHECK_EQ(dpdo_rng_create(&rng, NULL, NULL, 77), DPDO_OK);
    dpdo_solver *s = NULL;
    CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find("noisy-gd"), NULL, dim), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "step", gamma), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "tau", tau), DPDO_OK);
    double *v = calloc((size_t)dim, sizeof *v), *w = calloc((size_t)dim, sizeof *w);
    double sum = 0, sum2 = 0;
    long m = 0;
    for (int r = 0; r < rounds; r++) {
        for (int64_t j = 0; j < dim; j++) v[j] = w[j] = 0.5; /* w_0 = v: the prox part starts at 0 */
        CHECK_EQ(dpdo_solver_run(s, nd, v, dim, rho, NE, rng, 1, (uint64_t)r, w), DPDO_OK);
        for (int64_t j = 0; j < dim; j++) {
            double e = w[j] - 0.5;
            sum += e;
            sum2 += e * e;
            m++;
        }
    }
    /* w_{l+1} - v = c (w_l - v) + sqrt(2 gamma) tau g, c = 1 - gamma/rho:
     * Var(w_N - w_0) = 2 gamma tau^2 sum_{k<N} c^{2k} (~ N 2 gamma tau^2) */
    const double c = 1 - gamma / rho;
    double geo = 0;
    for (int k = 0; k < NE; k++) geo += pow(c, 2 * k);
    const double var = 2 * gamma * tau * tau * geo;
    CHECK_REL(var, NE * 2 * gamma * tau * tau, 1e-3);
    double mean = sum / m, svar = sum2 / m - mean * mean;
    double se_mean = sqrt(var / m), se_var = var * sqrt(2.0 / m);
    CHECK_MSG(fabs(mean) <= 4 * se_mean, "mean %.4g, 4 SE %.4g", mean, 4 * se_mean);
    CHECK_MSG(fabs(svar - var) <= 4 * se_var, "variance %.6g vs %.6g (4 SE %.3g)", svar, var,
              4 * se_var);
    /* and the variance is not that of N_e - 1 steps (noise at the last step too) */
    CHECK(fabs(svar - var * (NE - 1) / NE) > 4 * se_var);
    free(v);
    free(w);
    dpdo_solver_destroy(s);
    dpdo_rng_destroy(rng);
    dpdo_node_destroy(nd);
    dpdo_loss_destroy(l);
}

/* ---- SGD ---------------------------------------------------------------------- */

static void sgd_full_batch_is_gd(void)
{
    struct prob p;
    CHECK(prob_make(&p, X, Y, Q, D, "logistic") == 0);
    dpdo_rng *rng = NULL;
    CHECK_EQ(dpdo_rng_create(&rng, NULL, NULL, 5), DPDO_OK);
    dpdo_solver *gd = NULL, *sg = NULL;
    CHECK_EQ(dpdo_solver_create(&gd, dpdo_solver_type_find("gd"), NULL, D), DPDO_OK);
    CHECK_EQ(dpdo_solver_create(&sg, dpdo_solver_type_find("sgd"), NULL, D), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(gd, "step", 0.4), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(sg, "step", 0.4), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(sg, "batch", Q), DPDO_OK);
    double a[D] = {1, -1, 0.5, 0}, b[D];
    memcpy(b, a, sizeof a);
    CHECK_EQ(dpdo_solver_run(gd, p.node, V0, D, RHO, 10, NULL, 0, 0, a), DPDO_OK);
    CHECK_EQ(dpdo_solver_run(sg, p.node, V0, D, RHO, 10, rng, 0, 0, b), DPDO_OK);
    /* same rows in the same order: equal up to the summation path of the
     * loss kernel (index list vs shard range), i.e. rounding */
    for (int j = 0; j < D; j++) CHECK_NEAR(a[j], b[j], 1e-14);
    CHECK_EQ(dpdo_solver_set(sg, "batch", Q + 1), DPDO_OK);
    CHECK_EQ(dpdo_solver_run(sg, p.node, V0, D, RHO, 1, rng, 0, 0, b), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_solver_errmsg(sg), "batch");
    dpdo_solver_destroy(gd);
    dpdo_solver_destroy(sg);
    dpdo_rng_destroy(rng);
    prob_free(&p);
}

/* The batches are stream (node, round, SAMPLE) subsets, consumed in step
 * order: step 0 uses the subset dpdo_rng_subset gives from the stream start. */
static void sgd_stream_oracle(void)
{
    struct prob p;
    CHECK(prob_make(&p, X, Y, Q, D, "logistic") == 0);
    dpdo_rng *rng = NULL;
    CHECK_EQ(dpdo_rng_create(&rng, NULL, NULL, 99), DPDO_OK);
    dpdo_solver *s = NULL;
    CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find("sgd"), NULL, D), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "step", 0.3), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "batch", 6), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "clip", 0.5), DPDO_OK);
    int64_t idx[6];
    CHECK_EQ(dpdo_rng_subset(rng, 2, 8, DPDO_PURPOSE_SAMPLE, Q, 6, idx), DPDO_OK);
    double w[D] = {0.2, 0.1, -0.4, 0.3}, wi[D], g[D];
    memcpy(wi, w, sizeof w);
    CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, 1, rng, 2, 8, w), DPDO_OK);
    CHECK_EQ(dpdo_node_eval(p.node, wi, D, idx, 6, 0.5, NULL, g, NULL), DPDO_OK);
    for (int j = 0; j < D; j++) wi[j] -= 0.3 * (g[j] + (wi[j] - V0[j]) / RHO);
    for (int j = 0; j < D; j++) CHECK_NEAR(w[j], wi[j], 1e-15);
    /* with many steps, the average step tracks GD's (unbiased estimate) and
     * differs from it for a single run */
    double a[D] = {0}, b[D] = {0};
    dpdo_solver *gd = NULL;
    CHECK_EQ(dpdo_solver_create(&gd, dpdo_solver_type_find("gd"), NULL, D), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(gd, "step", 0.3), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(gd, "clip", 0.5), DPDO_OK);
    CHECK_EQ(dpdo_solver_run(gd, p.node, V0, D, RHO, 2, NULL, 0, 0, a), DPDO_OK);
    CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, 2, rng, 0, 0, b), DPDO_OK);
    CHECK(dist(a, b, D) > 1e-6);
    dpdo_solver_destroy(gd);
    dpdo_solver_destroy(s);
    dpdo_rng_destroy(rng);
    prob_free(&p);
}

static void determinism(void)
{
    struct prob p;
    CHECK(prob_make(&p, X, Y, Q, D, "logistic") == 0);
    dpdo_rng *r1 = NULL, *r2 = NULL;
    CHECK_EQ(dpdo_rng_create(&r1, NULL, NULL, 31337), DPDO_OK);
    CHECK_EQ(dpdo_rng_create(&r2, NULL, NULL, 31337), DPDO_OK);
    const char *names[] = {"sgd", "noisy-gd"};
    for (int t = 0; t < 2; t++) {
        dpdo_solver *s1 = NULL, *s2 = NULL;
        CHECK_EQ(dpdo_solver_create(&s1, dpdo_solver_type_find(names[t]), NULL, D), DPDO_OK);
        CHECK_EQ(dpdo_solver_create(&s2, dpdo_solver_type_find(names[t]), NULL, D), DPDO_OK);
        CHECK_EQ(dpdo_solver_set(s1, "lambda_hi", 1.0), DPDO_OK);
        CHECK_EQ(dpdo_solver_set(s2, "lambda_hi", 1.0), DPDO_OK);
        if (t == 0) {
            CHECK_EQ(dpdo_solver_set(s1, "batch", 5), DPDO_OK);
            CHECK_EQ(dpdo_solver_set(s2, "batch", 5), DPDO_OK);
        } else {
            CHECK_EQ(dpdo_solver_set(s1, "tau", 0.3), DPDO_OK);
            CHECK_EQ(dpdo_solver_set(s2, "tau", 0.3), DPDO_OK);
        }
        double a[D] = {0}, b[D] = {0}, c[D] = {0}, d[D] = {0};
        CHECK_EQ(dpdo_solver_run(s1, p.node, V0, D, RHO, 8, r1, 4, 10, a), DPDO_OK);
        CHECK_EQ(dpdo_solver_run(s2, p.node, V0, D, RHO, 8, r2, 4, 10, b), DPDO_OK);
        CHECK(memcmp(a, b, sizeof a) == 0);
        CHECK_EQ(dpdo_solver_run(s1, p.node, V0, D, RHO, 8, r1, 4, 11, c), DPDO_OK); /* other round */
        CHECK_EQ(dpdo_solver_run(s1, p.node, V0, D, RHO, 8, r1, 5, 10, d), DPDO_OK); /* other node */
        CHECK(memcmp(a, c, sizeof a) != 0);
        CHECK(memcmp(a, d, sizeof a) != 0);
        dpdo_solver_destroy(s1);
        dpdo_solver_destroy(s2);
    }
    dpdo_rng_destroy(r1);
    dpdo_rng_destroy(r2);
    prob_free(&p);
}

/* ---- user solver types --------------------------------------------------------- */

struct my_gd {
    double gamma;
    int fail;
    int released;
    double c;
};

static int my_gd_run(void *user, dpdo_node *node, const double *v, int64_t dim, double rho,
                     int64_t epochs, const dpdo_rng *rng, uint64_t node_id, uint64_t round,
                     double *w)
{
    struct my_gd *m = user;
    (void)rng;
    (void)node_id;
    (void)round;
    double g[64];
    if (dim > 64) return 99;
    for (int64_t l = 0; l < epochs; l++) {
        if (dpdo_node_eval(node, w, dim, NULL, 0, 0.0, NULL, g, NULL)) return 98;
        for (int64_t j = 0; j < dim; j++) w[j] = w[j] - m->gamma * (g[j] + (w[j] - v[j]) / rho);
        if (m->fail && l == 0) return m->fail; /* fail after writing into w */
    }
    return 0;
}

static int my_contraction(void *user, double rho, int64_t epochs, double lo, double hi, double *c)
{
    struct my_gd *m = user;
    (void)rho;
    (void)epochs;
    if (isnan(lo) || isnan(hi)) return 5;
    *c = m->c;
    return 0;
}

static void my_release(void *user) { ((struct my_gd *)user)->released++; }

static void user_solver_type(void)
{
    struct prob p;
    CHECK(prob_make(&p, X, Y, Q, D, "logistic") == 0);
    dpdo_solver_type t = {sizeof t, "my-gd", my_gd_run, my_contraction, my_release};
    struct my_gd m = {0.3, 0, 0, 0.25};
    dpdo_solver *s = NULL, *gd = NULL;
    CHECK_EQ(dpdo_solver_create(&s, &t, &m, D), DPDO_OK);
    CHECK_EQ(dpdo_solver_create(&gd, dpdo_solver_type_find("gd"), NULL, D), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(gd, "step", 0.3), DPDO_OK);
    CHECK(strcmp(dpdo_solver_name(s), "my-gd") == 0);
    CHECK(dpdo_solver_type_next(&t) == NULL); /* not a built-in */
    double a[D] = {0.1, 0.1, 0.1, 0.1}, b[D];
    memcpy(b, a, sizeof a);
    CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, 6, NULL, 0, 0, a), DPDO_OK);
    CHECK_EQ(dpdo_solver_run(gd, p.node, V0, D, RHO, 6, NULL, 0, 0, b), DPDO_OK);
    for (int j = 0; j < D; j++) CHECK_NEAR(a[j], b[j], 1e-15);
    /* the internal entry works the same */
    double e[D] = {0.1, 0.1, 0.1, 0.1};
    char err[256] = "";
    CHECK_EQ(dpdo__solver_run(s, p.node, V0, RHO, 6, NULL, 0, 0, e, err), DPDO_OK);
    CHECK(memcmp(a, e, sizeof a) == 0);
    CHECK(isnan(dpdo__solver_step(s, RHO)));
    /* a failing run: E_CALLBACK with the code, w unchanged */
    m.fail = 7;
    double w[D] = {1, 2, 3, 4}, w0[D] = {1, 2, 3, 4};
    CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, 3, NULL, 0, 0, w), DPDO_E_CALLBACK);
    CHECK_STR_CONTAINS(dpdo_solver_errmsg(s), "returned 7");
    CHECK_STR_CONTAINS(dpdo_solver_errmsg(s), "my-gd");
    CHECK(memcmp(w, w0, sizeof w) == 0);
    CHECK_EQ(dpdo__solver_run(s, p.node, V0, RHO, 3, NULL, 0, 0, w, err), DPDO_E_CALLBACK);
    CHECK_STR_CONTAINS(err, "returned 7");
    /* contraction through the callback (lambdas passed through) */
    double c = -1;
    CHECK_EQ(dpdo_solver_contraction(s, RHO, 3, &c), DPDO_E_CALLBACK); /* lambdas unknown -> 5 */
    CHECK_STR_CONTAINS(dpdo_solver_errmsg(s), "returned 5");
    CHECK_EQ(dpdo_solver_set(s, "lambda_lo", 0.1), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "lambda_hi", 2.0), DPDO_OK);
    CHECK_EQ(dpdo_solver_contraction(s, RHO, 3, &c), DPDO_OK);
    CHECK(c == 0.25);
    m.c = -1;
    CHECK_EQ(dpdo_solver_contraction(s, RHO, 3, &c), DPDO_E_NUMERIC);
    m.c = NAN;
    CHECK_EQ(dpdo_solver_contraction(s, RHO, 3, &c), DPDO_E_NUMERIC);
    CHECK_EQ(dpdo_solver_set(s, "tau", 1.0), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_solver_set(s, "step", 1.0), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_solver_dp_accountable(s), 0);
    CHECK_EQ(m.released, 0);
    dpdo_solver_destroy(s);
    CHECK_EQ(m.released, 1);
    /* a type without contraction and release (older, shorter struct_size) */
    dpdo_solver_type t2 = {offsetof(dpdo_solver_type, contraction), "short", my_gd_run,
                           my_contraction, my_release};
    m.fail = 0;
    CHECK_EQ(dpdo_solver_create(&s, &t2, &m, D), DPDO_OK);
    CHECK_EQ(dpdo_solver_contraction(s, RHO, 3, &c), DPDO_E_UNSUPPORTED);
    dpdo_solver_destroy(s);
    CHECK_EQ(m.released, 1); /* release not covered by struct_size: not called */
    /* a user solver producing NaN: E_NUMERIC, w unchanged */
    struct my_gd bad = {NAN, 0, 0, 0};
    CHECK_EQ(dpdo_solver_create(&s, &t, &bad, D), DPDO_OK);
    CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, 1, NULL, 0, 0, w), DPDO_E_NUMERIC);
    CHECK(memcmp(w, w0, sizeof w) == 0);
    dpdo_solver_destroy(s);
    dpdo_solver_destroy(gd);
    prob_free(&p);
}

/* ---- unsupported combinations, step checks ---------------------------------------- */

static int fail_rng(void *user, const uint32_t key[4], const uint32_t ctr[4], uint64_t nblocks,
                    uint32_t *out)
{
    (void)user;
    (void)key;
    (void)ctr;
    for (uint64_t k = 0; k < 4 * nblocks; k++) out[k] = 0x9e3779b9u * (uint32_t)(k + 1);
    return 13;
}

static void unsupported_and_steps(void)
{
    struct prob p;
    CHECK(prob_make(&p, X, Y, Q, D, "logistic") == 0);
    dpdo_solver *s = NULL;
    double w[D] = {0}, w0[D] = {0};
    /* exact-quadratic on a non-squared loss */
    CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find("exact-quadratic"), NULL, D), DPDO_OK);
    CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, 1, NULL, 0, 0, w), DPDO_E_UNSUPPORTED);
    CHECK_STR_CONTAINS(dpdo_solver_errmsg(s), "squared");
    CHECK_EQ(dpdo_solver_set(s, "step", 1.0), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_solver_set(s, "clip", 1.0), DPDO_E_UNSUPPORTED);
    CHECK(isnan(dpdo__solver_step(s, RHO)));
    dpdo_solver_destroy(s);
    /* gd: step checks against 2/L_d */
    CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find("gd"), NULL, D), DPDO_OK);
    CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, 1, NULL, 0, 0, w), DPDO_E_INVAL); /* auto, no lambda_hi */
    CHECK_STR_CONTAINS(dpdo_solver_errmsg(s), "lambda_hi");
    CHECK_EQ(dpdo_solver_set(s, "lambda_hi", 1.0), DPDO_OK);
    CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, 1, NULL, 0, 0, w), DPDO_OK); /* auto with lambda_lo = 0 */
    CHECK_REL(dpdo__solver_step(s, RHO), 2 / (1.0 + 2 / RHO), 1e-15);
    double Ld = 1.0 + 1 / RHO;
    CHECK_EQ(dpdo_solver_set(s, "step", 2 / Ld), DPDO_OK);
    memcpy(w, w0, sizeof w);
    CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, 1, NULL, 0, 0, w), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_solver_errmsg(s), "2/L_d");
    CHECK(memcmp(w, w0, sizeof w) == 0);
    double c;
    CHECK_EQ(dpdo_solver_set(s, "lambda_lo", 0.0), DPDO_OK);
    CHECK_EQ(dpdo_solver_contraction(s, RHO, 2, &c), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_set(s, "step", 1.99 / Ld), DPDO_OK);
    CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, 1, NULL, 0, 0, w), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "lambda_lo", 2.0), DPDO_OK); /* lambda_lo > lambda_hi */
    CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, 1, NULL, 0, 0, w), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_solver_errmsg(s), "lambda_lo");
    CHECK_EQ(dpdo_solver_contraction(s, RHO, 1, &c), DPDO_E_INVAL);
    /* unknown lambda_hi with an explicit step: no check possible, runs */
    CHECK_EQ(dpdo_solver_set(s, "lambda_hi", NAN), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "lambda_lo", NAN), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "step", 0.5), DPDO_OK);
    CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, 1, NULL, 0, 0, w), DPDO_OK);
    CHECK_EQ(dpdo_solver_contraction(s, RHO, 1, &c), DPDO_E_INVAL);
    /* a huge unchecked step diverges: E_NUMERIC, w unchanged */
    struct prob sq;
    CHECK(prob_make(&sq, X, Y, Q, D, "squared") == 0);
    CHECK_EQ(dpdo_solver_set(s, "step", 1e100), DPDO_OK);
    memcpy(w, w0, sizeof w);
    int rc = dpdo_solver_run(s, sq.node, V0, D, RHO, 50, NULL, 0, 0, w);
    CHECK_EQ(rc, DPDO_E_NUMERIC);
    CHECK(memcmp(w, w0, sizeof w) == 0);
    prob_free(&sq);
    /* epochs = 0: unchanged */
    CHECK_EQ(dpdo_solver_set(s, "step", 0.5), DPDO_OK);
    w[0] = 3;
    CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, 0, NULL, 0, 0, w), DPDO_OK);
    CHECK(w[0] == 3 && w[1] == 0);
    dpdo_solver_destroy(s);
    /* model-kind losses: no mini-batches, no clipping */
    dpdo_loss_type zt = {sizeof zt, "zero", NULL, NULL, zero_model, NULL, NULL, NULL};
    dpdo_loss *zl = NULL;
    dpdo_node *zn = NULL;
    CHECK_EQ(dpdo_loss_create(&zl, &zt, NULL, D), DPDO_OK);
    CHECK_EQ(dpdo_node_create(&zn, NULL, zl, 1.0), DPDO_OK);
    dpdo_rng *rng = NULL;
    CHECK_EQ(dpdo_rng_create(&rng, NULL, NULL, 1), DPDO_OK);
    CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find("sgd"), NULL, D), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "step", 0.5), DPDO_OK);
    CHECK_EQ(dpdo_solver_run(s, zn, V0, D, RHO, 1, rng, 0, 0, w), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, 1, NULL, 0, 0, w), DPDO_E_INVAL); /* no rng */
    CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, 1, rng, UINT64_C(1) << 32, 0, w),
             DPDO_E_INVAL); /* stream id */
    dpdo_solver_destroy(s);
    CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find("gd"), NULL, D), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "step", 0.5), DPDO_OK);
    CHECK_EQ(dpdo_solver_run(s, zn, V0, D, RHO, 1, NULL, 0, 0, w), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "clip", 1.0), DPDO_OK);
    CHECK_EQ(dpdo_solver_run(s, zn, V0, D, RHO, 1, NULL, 0, 0, w), DPDO_E_UNSUPPORTED);
    CHECK_STR_CONTAINS(dpdo_solver_errmsg(s), "clip");
    dpdo_solver_destroy(s);
    /* a failing custom rng: E_CALLBACK with its code, w unchanged */
    dpdo_rng_type ft = {sizeof ft, "failing", fail_rng, NULL};
    dpdo_rng *frng = NULL;
    CHECK_EQ(dpdo_rng_create_custom(&frng, &ft, NULL, 1), DPDO_OK);
    const char *rn[] = {"sgd", "noisy-gd"};
    for (int t = 0; t < 2; t++) {
        CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find(rn[t]), NULL, D), DPDO_OK);
        CHECK_EQ(dpdo_solver_set(s, "step", 0.5), DPDO_OK);
        if (t == 1) CHECK_EQ(dpdo_solver_set(s, "tau", 1.0), DPDO_OK);
        memcpy(w, w0, sizeof w);
        CHECK_EQ(dpdo_solver_run(s, p.node, V0, D, RHO, 2, frng, 0, 0, w), DPDO_E_CALLBACK);
        CHECK_STR_CONTAINS(dpdo_solver_errmsg(s), "13");
        CHECK(memcmp(w, w0, sizeof w) == 0);
        dpdo_solver_destroy(s);
    }
    dpdo_rng_destroy(frng);
    dpdo_rng_destroy(rng);
    dpdo_node_destroy(zn);
    dpdo_loss_destroy(zl);
    prob_free(&p);
}

/* ---- bad input ------------------------------------------------------------------- */

static void bad_input_types_create(void)
{
    CHECK(dpdo_solver_type_find(NULL) == NULL);
    CHECK(dpdo_solver_type_find("newton") == NULL);
    CHECK(strcmp(dpdo_solver_type_name(NULL), "(null)") == 0);
    const char *want[] = {"gd", "agd", "sgd", "noisy-gd", "exact-quadratic"};
    int k = 0;
    for (const dpdo_solver_type *t = dpdo_solver_type_next(NULL); t; t = dpdo_solver_type_next(t)) {
        CHECK(k < 5 && strcmp(dpdo_solver_type_name(t), want[k]) == 0);
        CHECK(dpdo_solver_type_find(want[k]) == t);
        k++;
    }
    CHECK_EQ(k, 5);
    dpdo_solver *s = (dpdo_solver *)&k;
    const dpdo_solver_type *gd = dpdo_solver_type_find("gd");
    CHECK_EQ(dpdo_solver_create(NULL, gd, NULL, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_create(&s, NULL, NULL, 3), DPDO_E_INVAL);
    CHECK(s == NULL);
    CHECK_EQ(dpdo_solver_create(&s, gd, NULL, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_create(&s, gd, NULL, -4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_create(&s, gd, &k, 3), DPDO_E_INVAL); /* user data on a built-in */
    CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find("exact-quadratic"), NULL,
                                (int64_t)INT32_MAX + 1),
             DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_create(&s, gd, NULL, INT64_MAX / 2), DPDO_E_NOMEM);
    CHECK(s == NULL);
    dpdo_solver_type t = {sizeof t, "u", my_gd_run, NULL, NULL};
    t.struct_size = offsetof(dpdo_solver_type, run);
    CHECK_EQ(dpdo_solver_create(&s, &t, NULL, 3), DPDO_E_VERSION);
    t.struct_size = sizeof t;
    t.name = NULL;
    CHECK_EQ(dpdo_solver_create(&s, &t, NULL, 3), DPDO_E_INVAL);
    t.name = "";
    CHECK_EQ(dpdo_solver_create(&s, &t, NULL, 3), DPDO_E_INVAL);
    t.name = "u";
    t.run = NULL;
    CHECK_EQ(dpdo_solver_create(&s, &t, NULL, 3), DPDO_E_INVAL);
    dpdo_solver_type copy = *gd; /* a copy of a built-in is not a user type */
    CHECK_EQ(dpdo_solver_create(&s, &copy, NULL, 3), DPDO_E_INVAL);
    CHECK(s == NULL);
    /* calling a built-in's run through the type object without a handle */
    double w[1] = {0}, v[1] = {0};
    CHECK(gd->run(NULL, NULL, v, 1, 1.0, 1, NULL, 0, 0, w) != 0);
    dpdo_solver_destroy(NULL);
    CHECK(strcmp(dpdo_solver_errmsg(NULL), "dpdo_solver_errmsg: s is NULL") == 0);
    CHECK(strcmp(dpdo_solver_name(NULL), "(null)") == 0);
    CHECK_EQ(dpdo_solver_dim(NULL), 0);
    CHECK_EQ(dpdo_solver_dp_accountable(NULL), 0);
    CHECK_EQ(dpdo_solver_create(&s, gd, NULL, 3), DPDO_OK);
    CHECK_EQ(dpdo_solver_dim(s), 3);
    CHECK(strcmp(dpdo_solver_name(s), "gd") == 0);
    CHECK(strcmp(dpdo_solver_errmsg(s), "") == 0);
    dpdo_solver_destroy(s);
}

static void bad_input_set_get(void)
{
    dpdo_solver *s = NULL;
    CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find("sgd"), NULL, 3), DPDO_OK);
    double v = 0;
    /* defaults */
    CHECK_EQ(dpdo_solver_get(s, "step", &v), DPDO_OK);
    CHECK(isnan(v));
    CHECK_EQ(dpdo_solver_get(s, "lambda_lo", &v), DPDO_OK);
    CHECK(isnan(v));
    CHECK_EQ(dpdo_solver_get(s, "lambda_hi", &v), DPDO_OK);
    CHECK(isnan(v));
    CHECK_EQ(dpdo_solver_get(s, "tau", &v), DPDO_OK);
    CHECK(v == 0);
    CHECK_EQ(dpdo_solver_get(s, "clip", &v), DPDO_OK);
    CHECK(v == 0);
    CHECK_EQ(dpdo_solver_get(s, "batch", &v), DPDO_OK);
    CHECK(v == 1);
    CHECK_EQ(dpdo_solver_set(NULL, "step", 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_set(s, NULL, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_set(s, "gamma", 1), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_solver_errmsg(s), "gamma");
    CHECK_EQ(dpdo_solver_set(s, "step", -1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_set(s, "step", 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_set(s, "step", INFINITY), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_set(s, "lambda_lo", INFINITY), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_set(s, "lambda_lo", -0.5), DPDO_OK); /* weakly convex allowed */
    CHECK_EQ(dpdo_solver_set(s, "lambda_hi", -1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_set(s, "lambda_hi", INFINITY), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_set(s, "clip", -1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_set(s, "clip", NAN), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_set(s, "batch", 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_set(s, "batch", 2.5), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_set(s, "batch", NAN), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_set(s, "batch", 1e12), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_set(s, "tau", 1), DPDO_E_UNSUPPORTED);
    CHECK_STR_CONTAINS(dpdo_solver_errmsg(s), "tau");
    CHECK_EQ(dpdo_solver_set(s, "batch", 17), DPDO_OK);
    CHECK_EQ(dpdo_solver_get(s, "batch", &v), DPDO_OK);
    CHECK(v == 17);
    CHECK_EQ(dpdo_solver_get(NULL, "step", &v), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_get(s, NULL, &v), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_get(s, "step", NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_get(s, "nope", &v), DPDO_E_INVAL);
    dpdo_solver_destroy(s);
    CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find("noisy-gd"), NULL, 3), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "tau", -0.1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_set(s, "tau", NAN), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_set(s, "tau", INFINITY), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_set(s, "batch", 2), DPDO_E_UNSUPPORTED);
    dpdo_solver_destroy(s);
    CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find("agd"), NULL, 3), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "step", 0.1), DPDO_E_UNSUPPORTED);
    CHECK_STR_CONTAINS(dpdo_solver_errmsg(s), "1/L_d");
    CHECK_EQ(dpdo_solver_set(s, "clip", 0.1), DPDO_E_UNSUPPORTED);
    dpdo_solver_destroy(s);
}

static void bad_input_run_contraction(void)
{
    struct prob p, p3;
    CHECK(prob_make(&p, X, Y, Q, D, "logistic") == 0);
    CHECK(prob_make(&p3, X, Y, Q, 3, "logistic") == 0); /* a 3-dim node (first 3*Q values) */
    dpdo_solver *s = NULL;
    CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find("gd"), NULL, D), DPDO_OK);
    CHECK_EQ(dpdo_solver_set(s, "lambda_hi", 2.0), DPDO_OK);
    double w[D] = {0}, v[D] = {0};
    CHECK_EQ(dpdo_solver_run(NULL, p.node, v, D, 1, 1, NULL, 0, 0, w), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_run(s, NULL, v, D, 1, 1, NULL, 0, 0, w), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_solver_errmsg(s), "node");
    CHECK_EQ(dpdo_solver_run(s, p.node, NULL, D, 1, 1, NULL, 0, 0, w), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_run(s, p.node, v, D, 1, 1, NULL, 0, 0, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_run(s, p.node, w, D, 1, 1, NULL, 0, 0, w), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_solver_errmsg(s), "alias");
    CHECK_EQ(dpdo_solver_run(s, p.node, v, 3, 1, 1, NULL, 0, 0, w), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_run(s, p3.node, v, D, 1, 1, NULL, 0, 0, w), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_solver_errmsg(s), "dimension");
    CHECK_EQ(dpdo_solver_run(s, p.node, v, D, 0, 1, NULL, 0, 0, w), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_run(s, p.node, v, D, -1, 1, NULL, 0, 0, w), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_run(s, p.node, v, D, NAN, 1, NULL, 0, 0, w), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_run(s, p.node, v, D, INFINITY, 1, NULL, 0, 0, w), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_solver_errmsg(s), "rho");
    CHECK_EQ(dpdo_solver_run(s, p.node, v, D, 1, -1, NULL, 0, 0, w), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_solver_errmsg(s), "epochs");
    v[2] = NAN;
    CHECK_EQ(dpdo_solver_run(s, p.node, v, D, 1, 1, NULL, 0, 0, w), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_solver_errmsg(s), "v[2] is NaN");
    v[2] = 0;
    w[1] = -INFINITY;
    CHECK_EQ(dpdo_solver_run(s, p.node, v, D, 1, 1, NULL, 0, 0, w), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_solver_errmsg(s), "w[1]");
    w[1] = 0;
    CHECK_EQ(dpdo_solver_run(s, p.node, v, D, 1, 1, NULL, 0, 0, w), DPDO_OK);
    double c;
    CHECK_EQ(dpdo_solver_contraction(NULL, 1, 1, &c), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_contraction(s, 1, 1, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_contraction(s, 0, 1, &c), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_contraction(s, NAN, 1, &c), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_contraction(s, 1, -1, &c), DPDO_E_INVAL);
    CHECK_EQ(dpdo_solver_contraction(s, 1, 1, &c), DPDO_E_INVAL); /* lambda_lo unknown */
    CHECK_STR_CONTAINS(dpdo_solver_errmsg(s), "lambda_lo");
    CHECK_EQ(dpdo_solver_set(s, "lambda_lo", 0.5), DPDO_OK);
    CHECK_EQ(dpdo_solver_contraction(s, 1, 0, &c), DPDO_OK);
    CHECK(c == 1.0);
    /* the built-in contraction callback agrees with the public call */
    double c2 = -1;
    CHECK_EQ(dpdo_solver_contraction(s, 1, 4, &c), DPDO_OK);
    CHECK_EQ(dpdo_solver_type_find("gd")->contraction(s, 1, 4, NAN, NAN, &c2), 0);
    CHECK(c == c2);
    dpdo_solver_destroy(s);
    prob_free(&p3);
    prob_free(&p);
}

/* ---- memory ---------------------------------------------------------------------- */

static void oom_create(void)
{
    for (const dpdo_solver_type *t = dpdo_solver_type_next(NULL); t; t = dpdo_solver_type_next(t)) {
        int ok = 0;
        for (long k = 0; k < 20 && !ok; k++) {
            dpdo_solver *s = (dpdo_solver *)&k;
            dpdo__fault_arm(k);
            int rc = dpdo_solver_create(&s, t, NULL, 5);
            dpdo__fault_arm(-1);
            if (rc == DPDO_OK) {
                ok = 1;
                CHECK(s != NULL);
                if (strcmp(t->name, "sgd") == 0) {
                    /* set("batch") reallocates: failure keeps the old buffer and value */
                    dpdo__fault_arm(0);
                    CHECK_EQ(dpdo_solver_set(s, "batch", 9), DPDO_E_NOMEM);
                    dpdo__fault_arm(-1);
                    double b;
                    CHECK_EQ(dpdo_solver_get(s, "batch", &b), DPDO_OK);
                    CHECK(b == 1);
                    CHECK_EQ(dpdo_solver_set(s, "batch", 9), DPDO_OK);
                }
                dpdo_solver_destroy(s);
            } else {
                CHECK_EQ(rc, DPDO_E_NOMEM);
                CHECK(s == NULL);
            }
        }
        CHECK_MSG(ok, "%s: create never succeeded", t->name);
    }
    /* user type: release must not run on a failed create */
    struct my_gd m = {0.1, 0, 0, 0};
    dpdo_solver_type ut = {sizeof ut, "u", my_gd_run, NULL, my_release};
    int ok = 0;
    for (long k = 0; k < 20 && !ok; k++) {
        dpdo_solver *s = NULL;
        dpdo__fault_arm(k);
        int rc = dpdo_solver_create(&s, &ut, &m, 5);
        dpdo__fault_arm(-1);
        if (rc == DPDO_OK) {
            ok = 1;
            dpdo_solver_destroy(s);
        } else {
            CHECK_EQ(rc, DPDO_E_NOMEM);
            CHECK_EQ(m.released, 0);
        }
    }
    CHECK(ok);
    CHECK_EQ(m.released, 1);
}

static void no_alloc_in_run(void)
{
    struct prob p, sq;
    CHECK(prob_make(&p, X, Y, Q, D, "logistic") == 0);
    CHECK(prob_make(&sq, X, Y, Q, D, "squared") == 0);
    dpdo_rng *rng = NULL;
    CHECK_EQ(dpdo_rng_create(&rng, NULL, NULL, 3), DPDO_OK);
    for (const dpdo_solver_type *t = dpdo_solver_type_next(NULL); t; t = dpdo_solver_type_next(t)) {
        dpdo_solver *s = NULL;
        CHECK_EQ(dpdo_solver_create(&s, t, NULL, D), DPDO_OK);
        dpdo_solver_set(s, "lambda_lo", 0.01);
        dpdo_solver_set(s, "lambda_hi", 3.0);
        dpdo_solver_set(s, "tau", 0.2);
        dpdo_solver_set(s, "batch", 7);
        dpdo_solver_set(s, "clip", 0.8);
        dpdo_node *nd = strcmp(t->name, "exact-quadratic") == 0 ? sq.node : p.node;
        double w[D] = {0.1, 0.2, 0.3, 0.4};
        char err[256];
        dpdo__fault_arm(0);
        int rc1 = dpdo_solver_run(s, nd, V0, D, RHO, 5, rng, 1, 2, w);
        int rc2 = dpdo__solver_run(s, nd, V0, RHO, 5, rng, 1, 3, w, err);
        long n = dpdo__fault_allocs();
        dpdo__fault_arm(-1);
        CHECK_MSG(rc1 == DPDO_OK && rc2 == DPDO_OK, "%s: %d %d %s", t->name, rc1, rc2,
                  dpdo_solver_errmsg(s));
        CHECK_MSG(n == 0, "%s: %ld allocations in run", t->name, n);
        dpdo_solver_destroy(s);
    }
    dpdo_rng_destroy(rng);
    prob_free(&sq);
    prob_free(&p);
}

int main(void)
{
    make_data();
    RUN(exact_quadratic_vs_normal_equations);
    RUN(gd_linear_rate);
    RUN(gd_fixed_point);
    RUN(agd_matches_independent_loop);
    RUN(agd_1d_constants);
    RUN(noisy_tau0_is_gd_bitwise);
    RUN(noisy_stream_oracle);
    RUN(noisy_noise_statistics);
    RUN(sgd_full_batch_is_gd);
    RUN(sgd_stream_oracle);
    RUN(determinism);
    RUN(user_solver_type);
    RUN(unsupported_and_steps);
    RUN(bad_input_types_create);
    RUN(bad_input_set_get);
    RUN(bad_input_run_contraction);
    RUN(oom_create);
    RUN(no_alloc_in_run);
    return h_finish();
}
