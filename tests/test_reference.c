/* SPDX-License-Identifier: BSD-3-Clause */
/* Reference solver: optimality checked independently (naive gradients,
 * normal equations, KKT conditions, closed forms, perturbations), the
 * certificate for every built-in loss/regularizer pair, the weighting
 * options with unequal node sizes, a model-kind user loss, bad input,
 * out-of-memory, and agreement with LIBLINEAR (liblinear-train -s 0 and -s 3,
 * C = 1/(lambda N), no bias) to 1e-6 relative. */
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include "dpdo/dpdo.h"
#include "dpdo/reference.h"
#include "core/core_impl.h"
#include "harness.h"

static uint64_t tstate = 0xdeadbeefcafef00dull;
static double urand(void) { return h_urand(&tstate); }
static double nrand(void) { return sqrt(-2.0 * log(urand() + 1e-300)) * cos(6.283185307179586 * urand()); }

enum { NMAX = 400, D = 10 };
static double X[NMAX * D], Y[NMAX];
static int NS = NMAX;

/* two Gaussian classes along a random direction, 10% label noise */
static void make_data(int n)
{
    NS = n;
    double dir[D];
    for (int j = 0; j < D; j++) dir[j] = nrand() / sqrt((double)D);
    for (int i = 0; i < n; i++) {
        double y = urand() < 0.5 ? -1.0 : 1.0;
        for (int j = 0; j < D; j++) X[i * D + j] = 0.8 * y * dir[j] + 0.5 * nrand();
        Y[i] = urand() < 0.1 ? -y : y;
    }
}

/* problem holder: dataset split into nn contiguous node shards of given sizes */
struct prob {
    dpdo_dataset *ds;
    dpdo_shard *sh[8];
    dpdo_loss *loss;
    dpdo_node *nodes[8];
    int nn;
    int64_t first[8], size[8];
};

static void prob_make(struct prob *p, const char *loss, int nn, const int64_t *sizes)
{
    memset(p, 0, sizeof *p);
    CHECK_EQ(dpdo_dataset_create(&p->ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_dense(p->ds, NS, D, X, Y, DPDO_COPY), DPDO_OK);
    CHECK_EQ(dpdo_loss_create(&p->loss, dpdo_loss_type_find(loss), NULL, D), DPDO_OK);
    p->nn = nn;
    int64_t off = 0;
    for (int i = 0; i < nn; i++) {
        p->first[i] = off;
        p->size[i] = sizes ? sizes[i] : NS / nn;
        CHECK_EQ(dpdo_shard_create_range(&p->sh[i], p->ds, off, p->size[i]), DPDO_OK);
        CHECK_EQ(dpdo_node_create(&p->nodes[i], p->sh[i], p->loss, 1.0 + i), DPDO_OK);
        off += p->size[i];
    }
}

static void prob_free(struct prob *p)
{
    for (int i = 0; i < p->nn; i++) {
        dpdo_node_destroy(p->nodes[i]);
        dpdo_shard_destroy(p->sh[i]);
    }
    dpdo_loss_destroy(p->loss);
    dpdo_dataset_destroy(p->ds);
}

static dpdo_regularizer *mkreg(const char *name, const double *params, int np)
{
    dpdo_regularizer *r = NULL;
    CHECK_EQ(dpdo_regularizer_create(&r, dpdo_regularizer_type_find(name), NULL, D, params, np),
             DPDO_OK);
    return r;
}

/* naive weighted gradient of the loss part: sum_i om_i (1/q_i) sum_k phi' a_k */
static double naive_fg(const struct prob *p, int which, const double *om, const double *x,
                       double *g)
{
    double f = 0;
    memset(g, 0, D * sizeof *g);
    for (int i = 0; i < p->nn; i++)
        for (int64_t r = p->first[i]; r < p->first[i] + p->size[i]; r++) {
            double m = 0;
            for (int j = 0; j < D; j++) m += X[r * D + j] * x[j];
            double z = Y[r] * m, v, d;
            if (which == 1) {
                v = log1p(exp(-z));
                d = -Y[r] / (1 + exp(z));
            } else if (which == 2) {
                v = 0.5 * (m - Y[r]) * (m - Y[r]);
                d = m - Y[r];
            } else {
                v = z < 1 ? 1 - z : 0;
                d = z < 1 ? -Y[r] : 0;
            }
            double c = om[i] / (double)p->size[i];
            f += c * v;
            for (int j = 0; j < D; j++) g[j] += c * d * X[r * D + j];
        }
    return f;
}

static void sample_weights(const struct prob *p, double *om)
{
    double t = 0;
    for (int i = 0; i < p->nn; i++) t += (double)p->size[i];
    for (int i = 0; i < p->nn; i++) om[i] = (double)p->size[i] / t;
}

static int solve(struct prob *p, dpdo_regularizer *reg, int weighting, double tol, double *x,
                 double *F, dpdo_reference **keep)
{
    dpdo_reference_options o;
    dpdo_reference_options_init(&o, sizeof o);
    o.weighting = weighting;
    o.tol = tol;
    dpdo_reference *ref = NULL;
    int rc = dpdo_reference_create(&ref, p->nodes, p->nn, reg, &o);
    CHECK_EQ(rc, DPDO_OK);
    if (rc) return rc;
    rc = dpdo_reference_solve(ref, x, D, F);
    if (keep) *keep = ref;
    else dpdo_reference_destroy(ref);
    return rc;
}

static void logistic_l2_gradient_zero(void)
{
    struct prob p;
    int64_t sizes[3] = {50, 150, 200};
    prob_make(&p, "logistic", 3, sizes);
    double lam[] = {0.01};
    dpdo_regularizer *r = mkreg("l2", lam, 1);
    double x[D], F, g[D], om[3];
    dpdo_reference *ref;
    CHECK_EQ(solve(&p, r, DPDO_WEIGHT_SAMPLES, 1e-10, x, &F, &ref), DPDO_OK);
    CHECK(strcmp(dpdo_reference_method(ref), "lbfgs") == 0);
    sample_weights(&p, om);
    double f = naive_fg(&p, 1, om, x, g), gn = 0, xx = 0;
    for (int j = 0; j < D; j++) g[j] += 0.01 * x[j], gn += g[j] * g[j], xx += x[j] * x[j];
    CHECK_MSG(sqrt(gn) <= 2e-10, "||grad F|| = %g", sqrt(gn));
    CHECK_NEAR(F, f + 0.005 * xx, 1e-13);
    double cert = dpdo_reference_certificate(ref);
    CHECK(cert >= 0 && cert <= 1e-10);
    CHECK(dpdo_reference_iterations(ref) > 0);
    /* deterministic: a second solve gives the same bytes */
    double x2[D], F2;
    CHECK_EQ(dpdo_reference_solve(ref, x2, D, &F2), DPDO_OK);
    CHECK(memcmp(x, x2, sizeof x) == 0 && F == F2);
    dpdo_reference_destroy(ref);
    dpdo_regularizer_destroy(r);
    prob_free(&p);
}

/* Gaussian elimination with partial pivoting (test-only, small systems) */
static void gauss(double *A, double *b, int n)
{
    for (int c = 0; c < n; c++) {
        int piv = c;
        for (int r = c + 1; r < n; r++)
            if (fabs(A[r * n + c]) > fabs(A[piv * n + c])) piv = r;
        for (int k = 0; k < n; k++) {
            double t = A[c * n + k];
            A[c * n + k] = A[piv * n + k];
            A[piv * n + k] = t;
        }
        double t = b[c];
        b[c] = b[piv];
        b[piv] = t;
        for (int r = c + 1; r < n; r++) {
            double f = A[r * n + c] / A[c * n + c];
            for (int k = c; k < n; k++) A[r * n + k] -= f * A[c * n + k];
            b[r] -= f * b[c];
        }
    }
    for (int c = n - 1; c >= 0; c--) {
        for (int k = c + 1; k < n; k++) b[c] -= A[c * n + k] * b[k];
        b[c] /= A[c * n + c];
    }
}

static void squared_normal_equations(void)
{
    struct prob p;
    prob_make(&p, "squared", 4, NULL);
    for (int withreg = 0; withreg < 2; withreg++) {
        double lam = withreg ? 0.3 : 0.0;
        double A[D * D] = {0}, b[D] = {0};
        for (int r = 0; r < NS; r++)
            for (int j = 0; j < D; j++) {
                b[j] += X[r * D + j] * Y[r] / NS;
                for (int k = 0; k < D; k++) A[j * D + k] += X[r * D + j] * X[r * D + k] / NS;
            }
        for (int j = 0; j < D; j++) A[j * D + j] += lam;
        gauss(A, b, D);
        dpdo_regularizer *r = withreg ? mkreg("l2", &lam, 1) : NULL;
        double x[D], F;
        dpdo_reference *ref;
        CHECK_EQ(solve(&p, r, DPDO_WEIGHT_SAMPLES, 1e-11, x, &F, &ref), DPDO_OK);
        for (int j = 0; j < D; j++) CHECK_NEAR(x[j], b[j], 1e-9);
        if (withreg) CHECK(dpdo_reference_certificate(ref) <= 1e-12);
        else CHECK(isnan(dpdo_reference_certificate(ref))); /* h = 0: uncertified */
        dpdo_reference_destroy(ref);
        dpdo_regularizer_destroy(r);
    }
    prob_free(&p);
}

static void logistic_l1_kkt(void)
{
    struct prob p;
    prob_make(&p, "logistic", 2, NULL);
    double lam = 0.05;
    dpdo_regularizer *r = mkreg("l1", &lam, 1);
    double x[D], F, g[D], om[2];
    dpdo_reference *ref;
    CHECK_EQ(solve(&p, r, DPDO_WEIGHT_SAMPLES, 1e-10, x, &F, &ref), DPDO_OK);
    CHECK(strcmp(dpdo_reference_method(ref), "fista") == 0);
    CHECK(dpdo_reference_certificate(ref) <= 1e-10 * fmax(1, F));
    sample_weights(&p, om);
    naive_fg(&p, 1, om, x, g);
    int zeros = 0;
    for (int j = 0; j < D; j++) {
        if (x[j] == 0.0) {
            zeros++;
            CHECK_MSG(fabs(g[j]) <= lam + 1e-6, "|g_%d| = %g > lambda", j, fabs(g[j]));
        } else
            CHECK_MSG(fabs(g[j] + lam * (x[j] > 0 ? 1 : -1)) <= 1e-4, "KKT residual %g",
                      g[j] + lam * (x[j] > 0 ? 1 : -1));
    }
    CHECK(zeros > 0 && zeros < D); /* a real sparsity pattern */
    dpdo_reference_destroy(ref);
    dpdo_regularizer_destroy(r);
    prob_free(&p);
}

/* every built-in loss x regularizer pair: status, certificate, local optimality */
static void all_pairs(void)
{
    const char *losses[] = {"hinge", "logistic", "squared"};
    const char *regs[] = {"none", "l2", "l1", "elastic-net", "l2-ball", "box", "fedplt-nonconvex"};
    double params[][2] = {{0, 0}, {0.05, 0}, {0.02, 0}, {0.02, 0.05}, {0.5, 0}, {-0.2, 0.3}, {0.05, 0}};
    int np[] = {0, 1, 1, 2, 1, 2, 1};
    int quick = h_quick();
    for (int a = 0; a < 3; a++) {
        struct prob p;
        prob_make(&p, losses[a], 2, NULL);
        for (int b = 0; b < 7; b++) {
            dpdo_regularizer *r = mkreg(regs[b], params[b], np[b]);
            int hinge = a == 0;
            int certified = b != 0 && b != 6;
            double tol = (hinge && b != 1) ? 1e-6 : 1e-9;
            if (hinge && b == 0 && quick) tol = 1e-4;
            double x[D], F;
            dpdo_reference *ref;
            /* hinge without l2: the default tolerance (0 = the method's, 1e-6) */
            int rc = solve(&p, r, DPDO_WEIGHT_SAMPLES, (hinge && b != 1 && !quick) ? 0.0 : tol, x, &F, &ref);
            double cert = dpdo_reference_certificate(ref);
            printf("# %-8s + %-16s %-14s %6lld iterations, F* = %.12f, certificate %.3g (tol %g)\n",
                   losses[a], regs[b], dpdo_reference_method(ref),
                   (long long)dpdo_reference_iterations(ref), F, cert, tol);
            if (certified) {
                CHECK_MSG(rc == DPDO_OK, "%s + %s: rc %d (%s)", losses[a], regs[b], rc,
                          dpdo_reference_errmsg(ref));
                CHECK_MSG(cert <= tol * fmax(1, F), "%s + %s: certificate %g", losses[a], regs[b], cert);
            } else {
                CHECK_MSG(isnan(cert), "%s + %s should be uncertified", losses[a], regs[b]);
                CHECK_MSG(rc == DPDO_OK || (hinge && rc == DPDO_E_NUMERIC), "%s + %s: rc %d (%s)",
                          losses[a], regs[b], rc, dpdo_reference_errmsg(ref));
            }
            for (int j = 0; j < D; j++) CHECK(isfinite(x[j]));
            double Fo;
            CHECK_EQ(dpdo_reference_objective(ref, x, D, &Fo), DPDO_OK);
            CHECK_NEAR(Fo, F, 1e-14 * fmax(1, fabs(F)));
            /* no nearby feasible point is better by more than the certificate */
            double slack = certified ? cert + 1e-12 : (hinge ? 1e-4 : 1e-9);
            for (int q = 0; q < 40; q++) {
                double xp[D], Fp;
                double sc = pow(10.0, -(q % 4)) * 0.1;
                for (int j = 0; j < D; j++) xp[j] = x[j] + sc * nrand();
                if (b == 4 || b == 5) { /* project onto the set */
                    double pr[D];
                    dpdo_regularizer_prox(r, xp, D, 1.0, pr);
                    memcpy(xp, pr, sizeof pr);
                }
                CHECK_EQ(dpdo_reference_objective(ref, xp, D, &Fp), DPDO_OK);
                CHECK_MSG(F <= Fp + slack, "%s + %s: perturbed point better: %.15g < %.15g",
                          losses[a], regs[b], Fp, F);
            }
            dpdo_reference_destroy(ref);
            dpdo_regularizer_destroy(r);
        }
        prob_free(&p);
    }
}

/* hinge + l1 is a linear program: the LP-vertex polish certifies it exactly */
static void hinge_l1_exact(void)
{
    struct prob p;
    int64_t sizes[3] = {100, 120, 180};
    prob_make(&p, "hinge", 3, sizes);
    double lam = 0.01;
    dpdo_regularizer *r = mkreg("l1", &lam, 1);
    double x[D], F;
    dpdo_reference *ref;
    CHECK_EQ(solve(&p, r, DPDO_WEIGHT_NODES, 1e-11, x, &F, &ref), DPDO_OK);
    double cert = dpdo_reference_certificate(ref);
    CHECK_MSG(cert <= 1e-11 * fmax(1, F), "certificate %g", cert);
    /* subgradient optimality, checked by the test: a dual s in [0,1]^N exists;
     * here only the primal side: no coordinate move improves F */
    for (int j = 0; j < D; j++)
        for (int sg = -1; sg <= 1; sg += 2) {
            double xp[D], Fp;
            memcpy(xp, x, sizeof x);
            xp[j] += sg * 1e-7;
            CHECK_EQ(dpdo_reference_objective(ref, xp, D, &Fp), DPDO_OK);
            CHECK_MSG(F <= Fp + cert + 1e-15, "coordinate %d: %.17g < %.17g", j, Fp, F);
        }
    dpdo_reference_destroy(ref);
    dpdo_regularizer_destroy(r);
    prob_free(&p);
}

/* hinge + elastic net ("dual-cd-ppa") against the exact optimum found by
 * enumeration on a tiny problem (d = 2, 7 samples): with l2 > 0 the
 * optimum minimises the strictly convex quadratic of its own piece, i.e. of
 * (sign pattern of x, samples at the kink y a.x = 1, samples with y a.x < 1),
 * over the affine set {x_j = 0 off the support, y_s a_s.x = 1 at the kinks};
 * so F* = min over every pattern's KKT point of the true F. Dense and CSR. */
enum { EN_N = 7 };
static double en_F(const double *A, const double *yv, const double *x, double l1, double l2)
{
    double f = 0;
    for (int s = 0; s < EN_N; s++) {
        double z = yv[s] * (A[2 * s] * x[0] + A[2 * s + 1] * x[1]);
        f += (z < 1 ? 1 - z : 0) / EN_N;
    }
    return f + l1 * (fabs(x[0]) + fabs(x[1])) + 0.5 * l2 * (x[0] * x[0] + x[1] * x[1]);
}

static double en_exact(const double *A, const double *yv, double l1, double l2, double *xbest)
{
    double best = INFINITY;
    for (int sg = 0; sg < 9; sg++) {
        int sig[2] = {sg % 3 - 1, sg / 3 - 1}; /* -1, 0, +1 */
        for (int k1 = -1; k1 < EN_N; k1++)
            for (int k2 = -1; k2 < EN_N; k2++) {
                if ((k1 < 0 && k2 >= 0) || (k2 >= 0 && k2 <= k1)) continue;
                int kk[2] = {k1, k2}, nk = (k1 >= 0) + (k2 >= 0);
                for (int act = 0; act < (1 << EN_N); act++) {
                    int bad = 0;
                    for (int q = 0; q < nk; q++) bad |= (act >> kk[q]) & 1;
                    if (bad) continue; /* kinks are not in the active set */
                    /* free coordinates F = {j: sig_j != 0}; g = l1 sig - sum_act c y a */
                    double g[2];
                    for (int j = 0; j < 2; j++) {
                        g[j] = l1 * sig[j];
                        for (int s = 0; s < EN_N; s++)
                            if ((act >> s) & 1) g[j] -= yv[s] * A[2 * s + j] / EN_N;
                        if (!sig[j]) g[j] = 0;
                    }
                    /* x = (-g + B^T mu) / l2 with B rows y_s a_s (free coords), B x = 1 */
                    double B[2][2] = {{0, 0}, {0, 0}}, mu[2] = {0, 0};
                    for (int q = 0; q < nk; q++)
                        for (int j = 0; j < 2; j++) B[q][j] = sig[j] ? yv[kk[q]] * A[2 * kk[q] + j] : 0;
                    if (nk == 1) {
                        double bb = B[0][0] * B[0][0] + B[0][1] * B[0][1];
                        if (bb < 1e-12) continue;
                        mu[0] = (l2 + B[0][0] * g[0] + B[0][1] * g[1]) / bb;
                    } else if (nk == 2) {
                        double M00 = B[0][0] * B[0][0] + B[0][1] * B[0][1];
                        double M01 = B[0][0] * B[1][0] + B[0][1] * B[1][1];
                        double M11 = B[1][0] * B[1][0] + B[1][1] * B[1][1];
                        double det = M00 * M11 - M01 * M01;
                        if (fabs(det) < 1e-12) continue;
                        double r0 = l2 + B[0][0] * g[0] + B[0][1] * g[1];
                        double r1 = l2 + B[1][0] * g[0] + B[1][1] * g[1];
                        mu[0] = (M11 * r0 - M01 * r1) / det;
                        mu[1] = (M00 * r1 - M01 * r0) / det;
                    }
                    double x[2];
                    for (int j = 0; j < 2; j++) x[j] = (-g[j] + B[0][j] * mu[0] + B[1][j] * mu[1]) / l2;
                    double F = en_F(A, yv, x, l1, l2);
                    if (F < best) {
                        best = F;
                        xbest[0] = x[0];
                        xbest[1] = x[1];
                    }
                }
            }
    }
    return best;
}

static void hinge_en_exact(void)
{
    static const double A[2 * EN_N] = {1.0, 0.2, 0.3, 1.1, -0.7, 0.4, 0.9, -0.5,
                                       -0.2, -1.0, 0.6, 0.6, 0.0, 0.0};
    static const double yv[EN_N] = {1, 1, -1, 1, -1, -1, 1};
    static const int64_t rp[EN_N + 1] = {0, 2, 4, 6, 8, 10, 12, 12};
    static const int32_t ci[12] = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1};
    const double pars[3][2] = {{0.02, 0.05}, {0.1, 0.01}, {0.0, 0.3}};
    for (int pi = 0; pi < 3; pi++)
        for (int csr = 0; csr < 2; csr++) {
            dpdo_dataset *ds = NULL;
            dpdo_shard *sh = NULL;
            dpdo_loss *lo = NULL;
            dpdo_node *nd = NULL;
            dpdo_regularizer *rg = NULL;
            dpdo_reference *ref = NULL;
            CHECK_EQ(dpdo_dataset_create(&ds), DPDO_OK);
            if (csr)
                CHECK_EQ(dpdo_dataset_set_csr(ds, EN_N, 2, rp, ci, A, yv, DPDO_COPY), DPDO_OK);
            else
                CHECK_EQ(dpdo_dataset_set_dense(ds, EN_N, 2, A, yv, DPDO_COPY), DPDO_OK);
            CHECK_EQ(dpdo_shard_create_range(&sh, ds, 0, EN_N), DPDO_OK);
            CHECK_EQ(dpdo_loss_create(&lo, dpdo_loss_type_find("hinge"), NULL, 2), DPDO_OK);
            CHECK_EQ(dpdo_node_create(&nd, sh, lo, 1.0), DPDO_OK);
            CHECK_EQ(dpdo_regularizer_create(&rg, dpdo_regularizer_type_find("elastic-net"), NULL,
                                             2, pars[pi], 2),
                     DPDO_OK);
            dpdo_reference_options o;
            dpdo_reference_options_init(&o, sizeof o);
            o.tol = 1e-12;
            CHECK_EQ(dpdo_reference_create(&ref, &nd, 1, rg, &o), DPDO_OK);
            double x[2], F, xe[2] = {NAN, NAN};
            CHECK_EQ(dpdo_reference_solve(ref, x, 2, &F), DPDO_OK);
            CHECK(strcmp(dpdo_reference_method(ref), "dual-cd-ppa") == 0);
            double cert = dpdo_reference_certificate(ref);
            double Fe = en_exact(A, yv, pars[pi][0], pars[pi][1], xe);
            printf("# hinge + en(%g, %g) %s: F = %.17g, exact %.17g, certificate %.3g\n",
                   pars[pi][0], pars[pi][1], csr ? "csr" : "dense", F, Fe, cert);
            CHECK_NEAR(F, en_F(A, yv, x, pars[pi][0], pars[pi][1]), 1e-15);
            CHECK_NEAR(F, Fe, 1e-11);
            CHECK_NEAR(x[0], xe[0], 1e-5);
            CHECK_NEAR(x[1], xe[1], 1e-5);
            /* the certificate is a true bound: F(x) - F_exact <= cert (+ rounding) */
            CHECK_MSG(F - Fe <= cert + 1e-15, "F - F* = %g > certificate %g", F - Fe, cert);
            CHECK(cert <= 1e-12);
            dpdo_reference_destroy(ref);
            dpdo_regularizer_destroy(rg);
            dpdo_node_destroy(nd);
            dpdo_loss_destroy(lo);
            dpdo_shard_destroy(sh);
            dpdo_dataset_destroy(ds);
        }
}

static void weighting_modes(void)
{
    struct prob p;
    int64_t sizes[3] = {30, 90, 280};
    prob_make(&p, "logistic", 3, sizes); /* node weights 1, 2, 3 */
    double lam = 0.02;
    dpdo_regularizer *r = mkreg("l2", &lam, 1);
    double oms[3][3];
    sample_weights(&p, oms[0]);
    for (int i = 0; i < 3; i++) oms[1][i] = 1.0 / 3, oms[2][i] = (1.0 + i) / 6.0;
    double xs[3][D];
    for (int w = 0; w < 3; w++) {
        double F, g[D], gn = 0, xx = 0;
        CHECK_EQ(solve(&p, r, w, 1e-10, xs[w], &F, NULL), DPDO_OK);
        double f = naive_fg(&p, 1, oms[w], xs[w], g);
        for (int j = 0; j < D; j++) g[j] += lam * xs[w][j], gn += g[j] * g[j], xx += xs[w][j] * xs[w][j];
        CHECK_MSG(sqrt(gn) <= 2e-10, "weighting %d: ||grad|| %g", w, sqrt(gn));
        CHECK_NEAR(F, f + 0.5 * lam * xx, 1e-13);
    }
    double dd = 0;
    for (int j = 0; j < D; j++) dd += fabs(xs[0][j] - xs[1][j]);
    CHECK(dd > 1e-3); /* unequal sizes: the two definitions really differ */
    dpdo_regularizer_destroy(r);
    prob_free(&p);
}

/* model-kind node: f(x) = 1/2 ||x - c||^2 with l1 -> x* = S_lambda(c) */
static int quad(void *user, const double *x, int64_t dim, double *v, double *g)
{
    const double *c = user;
    double s = 0;
    for (int64_t j = 0; j < dim; j++) {
        s += 0.5 * (x[j] - c[j]) * (x[j] - c[j]);
        if (g) g[j] = x[j] - c[j];
    }
    *v = s;
    return c[0] == 999.0 ? 5 : 0;
}
static const dpdo_loss_type quad_type = {sizeof(dpdo_loss_type), "quad", NULL, NULL, quad, NULL, NULL, NULL};

static void model_kind_node(void)
{
    double c[D];
    for (int j = 0; j < D; j++) c[j] = (j - 4.5) * 0.3;
    dpdo_loss *l = NULL;
    CHECK_EQ(dpdo_loss_create(&l, &quad_type, c, D), DPDO_OK);
    dpdo_node *n = NULL;
    CHECK_EQ(dpdo_node_create(&n, NULL, l, 1.0), DPDO_OK);
    double lam = 0.5;
    dpdo_regularizer *r = mkreg("l1", &lam, 1);
    dpdo_reference_options o;
    dpdo_reference_options_init(&o, sizeof o);
    dpdo_reference *ref = NULL;
    /* samples weighting needs samples */
    CHECK_EQ(dpdo_reference_create(&ref, &n, 1, r, &o), DPDO_E_INVAL);
    CHECK(ref == NULL);
    o.weighting = DPDO_WEIGHT_NODES;
    CHECK_EQ(dpdo_reference_create(&ref, &n, 1, r, &o), DPDO_OK);
    double x[D], F;
    CHECK_EQ(dpdo_reference_solve(ref, x, D, &F), DPDO_OK);
    for (int j = 0; j < D; j++) {
        double e = fabs(c[j]) > lam ? c[j] - (c[j] > 0 ? lam : -lam) : 0.0;
        CHECK_NEAR(x[j], e, 1e-9);
    }
    CHECK(isnan(dpdo_reference_certificate(ref)));
    /* a failing callback surfaces as E_CALLBACK */
    double c0 = c[0];
    c[0] = 999.0;
    CHECK_EQ(dpdo_reference_solve(ref, x, D, &F), DPDO_E_CALLBACK);
    CHECK_STR_CONTAINS(dpdo_reference_errmsg(ref), "returned 5");
    c[0] = c0;
    dpdo_reference_destroy(ref);
    dpdo_regularizer_destroy(r);
    dpdo_node_destroy(n);
    dpdo_loss_destroy(l);
}

/* ---- LIBLINEAR agreement ------------------------------------------------- */
static const char *find_liblinear(void)
{
    static const char *cands[] = {"/usr/bin/liblinear-train", "/usr/local/bin/liblinear-train"};
    for (int k = 0; k < 2; k++)
        if (access(cands[k], X_OK) == 0) return cands[k];
    return NULL;
}

/* train with liblinear and read w (sign fixed so that w scores label +1) */
static int liblinear_w(const char *bin, int solver, double C, const char *data, double *w)
{
    char model[128], cmd[600];
    snprintf(model, sizeof model, "%s.model", data);
    snprintf(cmd, sizeof cmd, "%s -s %d -c %.17g -e %s -B -1 -q %s %s > /dev/null 2>&1", bin, solver,
             C, solver == 0 ? "1e-10" : "1e-8", data, model);
    if (system(cmd) != 0) return -1;
    FILE *f = fopen(model, "r");
    if (!f) return -1;
    char line[256];
    int first_label = 1, nw = 0, inw = 0;
    while (fgets(line, sizeof line, f)) {
        if (!inw) {
            if (!strncmp(line, "label ", 6)) first_label = atoi(line + 6);
            if (!strncmp(line, "w", 1) && (line[1] == '\n' || line[1] == '\r')) inw = 1;
            continue;
        }
        if (nw < D) w[nw++] = strtod(line, NULL);
    }
    fclose(f);
    remove(model);
    if (nw != D) return -1;
    if (first_label != 1)
        for (int j = 0; j < D; j++) w[j] = -w[j];
    return 0;
}

static void liblinear_agreement(void)
{
    const char *bin = find_liblinear();
    if (!bin) {
        printf("# SKIP liblinear-train not installed\n");
        return;
    }
    /* the data file in LIBSVM format, written here */
    char path[64];
    snprintf(path, sizeof path, "/tmp/dpdo_ref_XXXXXX");
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    FILE *f = fdopen(fd, "w");
    for (int i = 0; i < NS; i++) {
        fprintf(f, "%+d", (int)Y[i]);
        for (int j = 0; j < D; j++)
            if (X[i * D + j] != 0.0) fprintf(f, " %d:%.17g", j + 1, X[i * D + j]);
        fputc('\n', f);
    }
    fclose(f);
    const char *losses[2] = {"logistic", "hinge"};
    const int solvers[2] = {0, 3};
    const double lams[2] = {0.01, 0.002};
    for (int k = 0; k < 2; k++) {
        for (int li = 0; li < 2; li++) {
            struct prob p;
            int64_t sizes[4] = {40, 60, 100, 200}; /* node split does not matter with SAMPLES */
            prob_make(&p, losses[k], 4, sizes);
            double lam = lams[li];
            dpdo_regularizer *r = mkreg("l2", &lam, 1);
            double x[D], F, wl[D], Fl;
            dpdo_reference *ref;
            CHECK_EQ(solve(&p, r, DPDO_WEIGHT_SAMPLES, 1e-12, x, &F, &ref), DPDO_OK);
            double C = 1.0 / (lam * NS);
            int rc = liblinear_w(bin, solvers[k], C, path, wl);
            CHECK_MSG(rc == 0, "liblinear-train -s %d failed", solvers[k]);
            if (rc == 0) {
                CHECK_EQ(dpdo_reference_objective(ref, wl, D, &Fl), DPDO_OK);
                printf("# %s lambda %g (C = %g): F(ours) = %.15g, F(liblinear) = %.15g, rel %.3g\n",
                       losses[k], lam, C, F, Fl, (Fl - F) / F);
                CHECK_MSG(F <= Fl * (1 + 1e-12), "ours %.17g > liblinear %.17g", F, Fl);
                CHECK_MSG(Fl <= F * (1 + 1e-6), "liblinear %.17g vs ours %.17g", Fl, F);
                double dx = 0, nx = 0;
                for (int j = 0; j < D; j++) dx += (x[j] - wl[j]) * (x[j] - wl[j]), nx += x[j] * x[j];
                CHECK_MSG(sqrt(dx) <= 1e-2 * sqrt(nx), "w differs: %g", sqrt(dx / nx));
            }
            dpdo_reference_destroy(ref);
            dpdo_regularizer_destroy(r);
            prob_free(&p);
        }
    }
    remove(path);
}

static void bad_input_and_oom(void)
{
    struct prob p;
    prob_make(&p, "logistic", 2, NULL);
    double lam = 0.1;
    dpdo_regularizer *r = mkreg("l2", &lam, 1), *r3 = NULL;
    CHECK_EQ(dpdo_regularizer_create(&r3, dpdo_regularizer_type_find("l2"), NULL, 3, &lam, 1), DPDO_OK);
    dpdo_reference *ref = (dpdo_reference *)1;
    dpdo_reference_options o;
    CHECK_EQ(dpdo_reference_options_init(NULL, sizeof o), DPDO_E_INVAL);
    CHECK_EQ(dpdo_reference_options_init(&o, 2), DPDO_E_VERSION);
    {   /* a newer, larger struct: the unknown tail is zeroed (docs/abi.md) */
        struct {
            dpdo_reference_options o;
            int64_t extra;
        } bigi;
        memset(&bigi, 0x55, sizeof bigi);
        CHECK_EQ(dpdo_reference_options_init(&bigi.o, sizeof bigi), DPDO_OK);
        CHECK_EQ(bigi.extra, 0);
    }
    CHECK_EQ(dpdo_reference_options_init(&o, sizeof o), DPDO_OK);
    CHECK(o.tol == 0.0 && o.weighting == DPDO_WEIGHT_SAMPLES);
    CHECK_EQ(dpdo_reference_create(NULL, p.nodes, 2, r, &o), DPDO_E_INVAL);
    CHECK_EQ(dpdo_reference_create(&ref, NULL, 2, r, &o), DPDO_E_INVAL);
    CHECK(ref == NULL);
    CHECK_EQ(dpdo_reference_create(&ref, p.nodes, 0, r, &o), DPDO_E_INVAL);
    dpdo_node *withnull[2] = {p.nodes[0], NULL};
    CHECK_EQ(dpdo_reference_create(&ref, withnull, 2, r, &o), DPDO_E_INVAL);
    CHECK_EQ(dpdo_reference_create(&ref, p.nodes, 2, r3, &o), DPDO_E_INVAL); /* dims differ */
    CHECK_STR_CONTAINS(dpdo_regularizer_errmsg(r3), "dimension 3");
    o.weighting = 7;
    CHECK_EQ(dpdo_reference_create(&ref, p.nodes, 2, r, &o), DPDO_E_INVAL);
    o.weighting = 0;
    o.tol = -1e-3;
    CHECK_EQ(dpdo_reference_create(&ref, p.nodes, 2, r, &o), DPDO_E_INVAL);
    o.tol = INFINITY;
    CHECK_EQ(dpdo_reference_create(&ref, p.nodes, 2, r, &o), DPDO_E_INVAL);
    o.tol = NAN;
    CHECK_EQ(dpdo_reference_create(&ref, p.nodes, 2, r, &o), DPDO_E_INVAL);
    o.tol = 1e-10;
    o.max_iter = 0;
    CHECK_EQ(dpdo_reference_create(&ref, p.nodes, 2, r, &o), DPDO_E_INVAL);
    o.max_iter = 1000;
    o.struct_size = 3;
    CHECK_EQ(dpdo_reference_create(&ref, p.nodes, 2, r, &o), DPDO_E_VERSION);
    o.struct_size = sizeof o;
    /* a node of another dimension */
    dpdo_loss *l3 = NULL;
    dpdo_node *n3 = NULL;
    CHECK_EQ(dpdo_loss_create(&l3, dpdo_loss_type_find("squared"), NULL, 3), DPDO_OK);
    dpdo_dataset *d3 = NULL;
    double X3[6] = {1, 2, 3, 4, 5, 6}, Y3[2] = {1, -1};
    dpdo_dataset_create(&d3);
    dpdo_dataset_set_dense(d3, 2, 3, X3, Y3, DPDO_COPY);
    dpdo_shard *s3 = NULL;
    dpdo_shard_create_range(&s3, d3, 0, 2);
    CHECK_EQ(dpdo_node_create(&n3, s3, l3, 1.0), DPDO_OK);
    dpdo_node *mixed[2] = {p.nodes[0], n3};
    CHECK_EQ(dpdo_reference_create(&ref, mixed, 2, NULL, &o), DPDO_E_INVAL);
    /* max_iter too small: E_NUMERIC, x and F still written, message says why */
    o.max_iter = 2;
    CHECK_EQ(dpdo_reference_create(&ref, p.nodes, 2, r, &o), DPDO_OK);
    double x[D], F = NAN;
    CHECK_EQ(dpdo_reference_solve(ref, x, D, &F), DPDO_E_NUMERIC);
    CHECK(isfinite(F));
    CHECK_STR_CONTAINS(dpdo_reference_errmsg(ref), "stopped after");
    CHECK_EQ(dpdo_reference_solve(ref, x, D + 1, &F), DPDO_E_INVAL);
    CHECK_EQ(dpdo_reference_solve(NULL, x, D, &F), DPDO_E_INVAL);
    CHECK_EQ(dpdo_reference_objective(NULL, x, D, &F), DPDO_E_INVAL);
    CHECK_EQ(dpdo_reference_objective(ref, NULL, D, &F), DPDO_E_INVAL);
    CHECK_EQ(dpdo_reference_objective(ref, x, D, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_reference_objective(ref, x, 3, &F), DPDO_E_INVAL);
    x[2] = NAN;
    CHECK_EQ(dpdo_reference_objective(ref, x, D, &F), DPDO_E_INVAL);
    dpdo_reference_destroy(ref);
    CHECK(strcmp(dpdo_reference_errmsg(NULL), "dpdo_reference_errmsg: ref is NULL") == 0);
    CHECK(isnan(dpdo_reference_certificate(NULL)));
    CHECK_EQ(dpdo_reference_iterations(NULL), 0);
    CHECK(strcmp(dpdo_reference_method(NULL), "(null)") == 0);
    dpdo_reference_destroy(NULL);
    /* OOM for every method's allocations (lbfgs and dual-cd) */
    dpdo_loss *lh = NULL;
    dpdo_node *nh[2] = {NULL, NULL};
    CHECK_EQ(dpdo_loss_create(&lh, dpdo_loss_type_find("hinge"), NULL, D), DPDO_OK);
    for (int i = 0; i < 2; i++) CHECK_EQ(dpdo_node_create(&nh[i], p.sh[i], lh, 1.0), DPDO_OK);
    o.max_iter = 1000;
    double l1lam = 0.01;
    dpdo_regularizer *rl1 = mkreg("l1", &l1lam, 1);
    const char *meth[3] = {"lbfgs", "dual-cd", "smoothed-fista"};
    for (int which = 0; which < 3; which++) {
        int ok = 0;
        for (long k = 0; k < 20 && !ok; k++) {
            ref = (dpdo_reference *)1;
            dpdo__fault_arm(k);
            int rc = dpdo_reference_create(&ref, which ? nh : p.nodes, 2, which == 2 ? rl1 : r, &o);
            dpdo__fault_arm(-1);
            if (rc == DPDO_OK) {
                ok = 1;
                CHECK(strcmp(dpdo_reference_method(ref), meth[which]) == 0);
                dpdo_reference_destroy(ref);
            } else {
                CHECK_EQ(rc, DPDO_E_NOMEM);
                CHECK(ref == NULL);
            }
        }
        CHECK(ok);
    }
    dpdo_regularizer_destroy(rl1);
    for (int i = 0; i < 2; i++) dpdo_node_destroy(nh[i]);
    dpdo_loss_destroy(lh);
    dpdo_node_destroy(n3);
    dpdo_shard_destroy(s3);
    dpdo_dataset_destroy(d3);
    dpdo_loss_destroy(l3);
    dpdo_regularizer_destroy(r);
    dpdo_regularizer_destroy(r3);
    prob_free(&p);
}

int main(void)
{
    make_data(NMAX);
    RUN(logistic_l2_gradient_zero);
    RUN(squared_normal_equations);
    RUN(logistic_l1_kkt);
    RUN(all_pairs);
    RUN(hinge_l1_exact);
    RUN(hinge_en_exact);
    RUN(weighting_modes);
    RUN(model_kind_node);
    RUN(liblinear_agreement);
    RUN(bad_input_and_oom);
    return h_finish();
}
