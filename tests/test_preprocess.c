/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests of the fitted feature transforms (dpdo/preprocess.h): exact values
 * of scaling, centring and standardising; PCA against an independent
 * cyclic-Jacobi eigen-decomposition written here (long double); row
 * normalisation; the sign convention; order-of-fit errors; bad input for
 * every public function; out-of-memory loops; and Fashion-MNIST 784 -> 50
 * against reference numbers computed once with numpy (see
 * test_fashion_mnist for how). */
#include <math.h>
#include <stdint.h>
#include <time.h>
#include "harness.h"
#include "dpdo/dataset.h"
#include "dpdo/preprocess.h"
#include "dpdo/status.h"
#include "core/core_impl.h"

/* ---- helpers ---------------------------------------------------------------- */

static uint64_t rng_state = 88172645463325252ULL;
static double urand(void) /* xorshift64*, uniform in (0, 1) */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    uint64_t r = rng_state * 2685821657736338717ULL;
    return ((double)(r >> 11) + 0.5) / 9007199254740992.0;
}
static double nrand(void)
{
    return sqrt(-2.0 * log(urand())) * cos(6.283185307179586 * urand());
}

static dpdo_dataset *dense(int64_t n, int64_t d, const double *X)
{
    dpdo_dataset *ds = NULL;
    dpdo_dataset_create(&ds);
    double *y = malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++) y[i] = (i % 2) ? 1.0 : -1.0;
    int rc = dpdo_dataset_set_dense(ds, n, d, X, y, DPDO_COPY);
    if (rc) printf("# set_dense: %s\n", dpdo_dataset_errmsg(ds));
    free(y);
    return ds;
}

/* CSR copy of a dense matrix (zeros dropped) */
static dpdo_dataset *csr_of(int64_t n, int64_t d, const double *X)
{
    int64_t *rp = malloc((size_t)(n + 1) * sizeof(int64_t));
    int32_t *ci = malloc((size_t)(n * d) * sizeof(int32_t) + 4);
    double *v = malloc((size_t)(n * d) * sizeof(double) + 8);
    double *y = malloc((size_t)n * sizeof(double));
    int64_t nz = 0;
    rp[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t j = 0; j < d; j++)
            if (X[i * d + j] != 0.0) ci[nz] = (int32_t)j, v[nz++] = X[i * d + j];
        rp[i + 1] = nz;
        y[i] = (i % 2) ? 1.0 : -1.0;
    }
    dpdo_dataset *ds = NULL;
    dpdo_dataset_create(&ds);
    dpdo_dataset_set_csr(ds, n, d, rp, ci, v, y, DPDO_COPY);
    free(rp), free(ci), free(v), free(y);
    return ds;
}

static double *rows_of(dpdo_dataset *ds)
{
    int64_t n = dpdo_dataset_rows(ds), d = dpdo_dataset_features(ds);
    double *Y = malloc((size_t)(n * d) * sizeof(double) + 8);
    for (int64_t i = 0; i < n; i++) dpdo_dataset_get_row(ds, i, Y + i * d, d);
    return Y;
}

/* Cyclic Jacobi eigen-decomposition of the symmetric d x d matrix A (long
 * double, destroyed): eigenvalues into w, eigenvectors as columns of V
 * (V[j*d + c]), sorted by decreasing eigenvalue. */
static void jacobi(int d, long double *A, long double *w, long double *V)
{
    for (int i = 0; i < d; i++)
        for (int j = 0; j < d; j++) V[i * d + j] = i == j;
    for (int sweep = 0; sweep < 100; sweep++) {
        long double off = 0;
        for (int p = 0; p < d; p++)
            for (int q = p + 1; q < d; q++) off += A[p * d + q] * A[p * d + q];
        if (off < 1e-60L) break;
        for (int p = 0; p < d; p++)
            for (int q = p + 1; q < d; q++) {
                long double apq = A[p * d + q];
                if (apq == 0) continue;
                long double theta = (A[q * d + q] - A[p * d + p]) / (2 * apq);
                long double tt = (theta >= 0 ? 1 : -1) / (fabsl(theta) + sqrtl(theta * theta + 1));
                long double c = 1 / sqrtl(tt * tt + 1), s = tt * c;
                for (int k = 0; k < d; k++) { /* A <- A J (columns p, q) */
                    long double akp = A[k * d + p], akq = A[k * d + q];
                    A[k * d + p] = c * akp - s * akq;
                    A[k * d + q] = s * akp + c * akq;
                }
                for (int k = 0; k < d; k++) { /* A <- J^T A (rows p, q) */
                    long double apk = A[p * d + k], aqk = A[q * d + k];
                    A[p * d + k] = c * apk - s * aqk;
                    A[q * d + k] = s * apk + c * aqk;
                }
                for (int k = 0; k < d; k++) {
                    long double vkp = V[k * d + p], vkq = V[k * d + q];
                    V[k * d + p] = c * vkp - s * vkq;
                    V[k * d + q] = s * vkp + c * vkq;
                }
            }
    }
    for (int i = 0; i < d; i++) w[i] = A[i * d + i];
    for (int a = 0; a < d; a++) { /* selection sort, descending */
        int b = a;
        for (int c = a + 1; c < d; c++)
            if (w[c] > w[b]) b = c;
        if (b != a) {
            long double tw = w[a];
            w[a] = w[b], w[b] = tw;
            for (int k = 0; k < d; k++) {
                long double tv = V[k * d + a];
                V[k * d + a] = V[k * d + b], V[k * d + b] = tv;
            }
        }
    }
    for (int c = 0; c < d; c++) { /* sign: largest-|.| entry positive */
        int jm = 0;
        for (int j = 1; j < d; j++)
            if (fabsl(V[j * d + c]) > fabsl(V[jm * d + c])) jm = j;
        if (V[jm * d + c] < 0)
            for (int j = 0; j < d; j++) V[j * d + c] = -V[j * d + c];
    }
}

/* Independent reference for scale+centre+PCA: mean, covariance (1/n) in
 * long double, Jacobi. */
static void reference_pca(int n, int d, const double *X, double factor, long double *mean,
                          long double *w, long double *V, long double *trace)
{
    long double *C = calloc((size_t)(d * d), sizeof(long double));
    for (int j = 0; j < d; j++) {
        long double s = 0;
        for (int i = 0; i < n; i++) s += (long double)factor * X[i * d + j];
        mean[j] = s / n;
    }
    for (int i = 0; i < n; i++)
        for (int a = 0; a < d; a++)
            for (int b = 0; b < d; b++)
                C[a * d + b] += ((long double)factor * X[i * d + a] - mean[a]) *
                                ((long double)factor * X[i * d + b] - mean[b]) / n;
    *trace = 0;
    for (int a = 0; a < d; a++) *trace += C[a * d + a];
    jacobi(d, C, w, V);
    free(C);
}

/* n x d Gaussian data with standard deviations sd[] along a random
 * orthonormal basis, plus a mean offset. */
static double *make_rotated(int n, int d, const double *sd, double offset)
{
    double *Q = malloc((size_t)(d * d) * sizeof(double));
    for (int i = 0; i < d * d; i++) Q[i] = nrand();
    for (int a = 0; a < d; a++) { /* Gram-Schmidt on the rows */
        for (int b = 0; b < a; b++) {
            double dot = 0;
            for (int j = 0; j < d; j++) dot += Q[a * d + j] * Q[b * d + j];
            for (int j = 0; j < d; j++) Q[a * d + j] -= dot * Q[b * d + j];
        }
        double nr = 0;
        for (int j = 0; j < d; j++) nr += Q[a * d + j] * Q[a * d + j];
        for (int j = 0; j < d; j++) Q[a * d + j] /= sqrt(nr);
    }
    double *X = malloc((size_t)(n * d) * sizeof(double));
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < d; j++) X[i * d + j] = offset * (j + 1);
        for (int a = 0; a < d; a++) {
            double g = sd[a] * nrand();
            for (int j = 0; j < d; j++) X[i * d + j] += g * Q[a * d + j];
        }
    }
    free(Q);
    return X;
}

static dpdo_transform *new_t(void)
{
    dpdo_transform *t = NULL;
    dpdo_transform_create(&t);
    return t;
}

/* ---- tests ---------------------------------------------------------------- */

static void test_create_destroy(void)
{
    dpdo_transform *t = NULL;
    CHECK_EQ(dpdo_transform_create(&t), DPDO_OK);
    CHECK(t != NULL);
    CHECK(strcmp(dpdo_transform_errmsg(t), "") == 0);
    CHECK_EQ(dpdo_transform_output_dim(t), 0);
    dpdo_transform_destroy(t);
    dpdo_transform_destroy(NULL);
    CHECK_EQ(dpdo_transform_create(NULL), DPDO_E_INVAL);
    CHECK(strcmp(dpdo_transform_errmsg(NULL), "dpdo_transform_errmsg: t is NULL") == 0);
}

/* identity transform copies values, labels and classes */
static void test_identity(void)
{
    double X[6] = {1, -2, 3, 0, 5.5, -6};
    dpdo_dataset *in = dense(3, 2, X), *out = NULL;
    int32_t cls[3] = {7, 8, 9};
    dpdo_dataset_set_classes(in, cls, 3);
    dpdo_dataset_create(&out);
    dpdo_transform *t = new_t();
    CHECK_EQ(dpdo_transform_apply(t, in, out), DPDO_OK);
    CHECK_EQ(dpdo_dataset_rows(out), 3);
    CHECK_EQ(dpdo_dataset_features(out), 2);
    CHECK_EQ(dpdo_dataset_layout(out), DPDO_LAYOUT_DENSE);
    double *Y = rows_of(out);
    CHECK(memcmp(X, Y, sizeof X) == 0);
    double y[3];
    int32_t c[3];
    CHECK_EQ(dpdo_dataset_get_labels(out, y, 3), DPDO_OK);
    CHECK(y[0] == -1 && y[1] == 1 && y[2] == -1);
    CHECK_EQ(dpdo_dataset_get_classes(out, c, 3), DPDO_OK);
    CHECK(c[0] == 7 && c[1] == 8 && c[2] == 9);
    /* a filled out is refilled (loader semantics) */
    CHECK_EQ(dpdo_transform_fit_scale(t, 2.0), DPDO_OK);
    CHECK_EQ(dpdo_transform_apply(t, in, out), DPDO_OK);
    free(Y);
    Y = rows_of(out);
    for (int i = 0; i < 6; i++) CHECK(Y[i] == 2 * X[i]);
    free(Y);
    dpdo_transform_destroy(t);
    dpdo_dataset_destroy(in);
    dpdo_dataset_destroy(out);
}

static const double X43[12] = {1, 2, 3, /**/ 3, 2, 7, /**/ 5, 2, -1, /**/ 7, 2, 3};

static void test_scale_center_exact(void)
{
    dpdo_dataset *in = dense(4, 3, X43), *out = NULL;
    dpdo_dataset_create(&out);
    dpdo_transform *t = new_t();
    CHECK_EQ(dpdo_transform_fit_scale(t, 0.5), DPDO_OK);
    CHECK_EQ(dpdo_transform_output_dim(t), 0);
    CHECK_EQ(dpdo_transform_fit_center(t, in), DPDO_OK);
    CHECK_EQ(dpdo_transform_output_dim(t), 3);
    CHECK_EQ(dpdo_transform_apply(t, in, out), DPDO_OK);
    /* scaled columns: (0.5,1.5,2.5,3.5) mean 2; constant 1; (1.5,3.5,-0.5,1.5) mean 1.5 */
    const double want[12] = {-1.5, 0, 0, /**/ -0.5, 0, 2, /**/ 0.5, 0, -2, /**/ 1.5, 0, 0};
    double *Y = rows_of(out);
    for (int i = 0; i < 12; i++) CHECK_MSG(Y[i] == want[i], "entry %d: %.17g != %.17g", i, Y[i], want[i]);
    free(Y);
    /* applied to other data: the training statistics are used */
    double T[3] = {10, 4, 0};
    dpdo_dataset *in2 = dense(1, 3, T);
    CHECK_EQ(dpdo_transform_apply(t, in2, out), DPDO_OK);
    Y = rows_of(out);
    CHECK(Y[0] == 3.0 && Y[1] == 1.0 && Y[2] == -1.5);
    free(Y);
    /* a constant feature with an inexact mean still centres to exactly 0 */
    double Xc[7] = {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}; /* sum/7 != 0.1 in doubles */
    dpdo_dataset *c5 = dense(7, 1, Xc);
    dpdo_transform *t2 = new_t();
    CHECK_EQ(dpdo_transform_fit_center(t2, c5), DPDO_OK);
    CHECK_EQ(dpdo_transform_apply(t2, c5, out), DPDO_OK);
    Y = rows_of(out);
    for (int i = 0; i < 7; i++) CHECK(Y[i] == 0.0);
    free(Y);
    dpdo_transform_destroy(t2);
    dpdo_dataset_destroy(c5);
    dpdo_transform_destroy(t);
    dpdo_dataset_destroy(in);
    dpdo_dataset_destroy(in2);
    dpdo_dataset_destroy(out);
}

static void test_standardize_exact(void)
{
    dpdo_dataset *in = dense(4, 3, X43), *out = NULL;
    dpdo_dataset_create(&out);
    dpdo_transform *t = new_t();
    CHECK_EQ(dpdo_transform_fit_standardize(t, in), DPDO_OK);
    CHECK_EQ(dpdo_transform_apply(t, in, out), DPDO_OK);
    /* col 0: mean 4, population variance (9+1+1+9)/4 = 5; col 1 constant;
     * col 2: mean 3, variance (0+16+16+0)/4 = 8 */
    double *Y = rows_of(out);
    const double c0[4] = {-3, -1, 1, 3}, c2[4] = {0, 4, -4, 0};
    for (int i = 0; i < 4; i++) {
        CHECK(Y[i * 3 + 0] == c0[i] / sqrt(5.0));
        CHECK(Y[i * 3 + 1] == 0.0);
        CHECK(Y[i * 3 + 2] == c2[i] / sqrt(8.0));
    }
    free(Y);
    /* zero std -> divisor 1: the constant column (2) maps 5 to 3 */
    double T[3] = {4, 5, 3};
    dpdo_dataset *in2 = dense(1, 3, T);
    CHECK_EQ(dpdo_transform_apply(t, in2, out), DPDO_OK);
    Y = rows_of(out);
    CHECK(Y[0] == 0.0 && Y[1] == 3.0 && Y[2] == 0.0);
    free(Y);
    dpdo_transform_destroy(t);

    /* random data with scale: mean and std against long double, output
     * columns have mean 0 and population std 1 */
    int n = 300, d = 5;
    double *X = malloc((size_t)(n * d) * sizeof(double));
    for (int i = 0; i < n * d; i++) X[i] = 1000 + (i % d + 1) * 37 * nrand();
    dpdo_dataset *r = dense(n, d, X);
    t = new_t();
    CHECK_EQ(dpdo_transform_fit_scale(t, 1.0 / 3.0), DPDO_OK);
    CHECK_EQ(dpdo_transform_fit_standardize(t, r), DPDO_OK);
    CHECK_EQ(dpdo_transform_apply(t, r, out), DPDO_OK);
    Y = rows_of(out);
    for (int j = 0; j < d; j++) {
        long double m = 0, v = 0;
        for (int i = 0; i < n; i++) m += (long double)X[i * d + j] / 3;
        m /= n;
        for (int i = 0; i < n; i++) v += ((long double)X[i * d + j] / 3 - m) * ((long double)X[i * d + j] / 3 - m);
        long double s = sqrtl(v / n);
        double em = 0, ev = 0;
        for (int i = 0; i < n; i++) {
            double ref = (double)(((long double)X[i * d + j] / 3 - m) / s);
            CHECK_NEAR(Y[i * d + j], ref, 1e-11);
            em += Y[i * d + j];
            ev += Y[i * d + j] * Y[i * d + j];
        }
        CHECK_NEAR(em / n, 0, 1e-12);
        CHECK_NEAR(ev / n, 1, 1e-12);
    }
    free(Y);
    free(X);
    dpdo_transform_destroy(t);
    dpdo_dataset_destroy(r);
    dpdo_dataset_destroy(in);
    dpdo_dataset_destroy(in2);
    dpdo_dataset_destroy(out);
}

/* PCA against cyclic Jacobi: eigenvalues (explained-variance ratios), the
 * axes (componentwise, after the same sign convention), the subspace, and
 * the projections. */
static void check_pca_case(int n, int d, int k, const double *X, double factor)
{
    dpdo_dataset *in = dense(n, d, X), *out = NULL;
    dpdo_dataset_create(&out);
    dpdo_transform *t = new_t();
    if (factor != 1.0) CHECK_EQ(dpdo_transform_fit_scale(t, factor), DPDO_OK);
    CHECK_EQ(dpdo_transform_fit_center(t, in), DPDO_OK);
    CHECK_EQ(dpdo_transform_fit_pca(t, in, k), DPDO_OK);
    CHECK_EQ(dpdo_transform_output_dim(t), k);
    double ratio[16];
    CHECK_EQ(dpdo_transform_explained_variance(t, ratio, k), DPDO_OK);
    long double mean[16], w[16], V[256], tr;
    reference_pca(n, d, X, factor, mean, w, V, &tr);
    for (int c = 0; c < k; c++) CHECK_NEAR(ratio[c], (double)(w[c] / tr), 1e-13);
    CHECK_EQ(dpdo_transform_apply(t, in, out), DPDO_OK);
    CHECK_EQ(dpdo_dataset_features(out), k);
    double *Y = rows_of(out);
    double maxerr = 0, scale = 0;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < k; c++) {
            long double p = 0;
            for (int j = 0; j < d; j++) p += ((long double)factor * X[i * d + j] - mean[j]) * V[j * d + c];
            double e = fabs(Y[i * k + c] - (double)p);
            if (e > maxerr) maxerr = e;
            if (fabs((double)p) > scale) scale = fabs((double)p);
        }
    CHECK_MSG(maxerr <= 1e-11 * scale, "projection error %g (scale %g)", maxerr, scale);
    /* the projections match the Jacobi axes componentwise (same sign
     * convention), hence the subspace too; ||Y||_F^2 / n = sum of the top-k
     * eigenvalues */
    long double fro = 0, top = 0;
    for (int i = 0; i < n * k; i++) fro += (long double)Y[i] * Y[i];
    for (int c = 0; c < k; c++) top += w[c];
    CHECK_NEAR((double)(fro / n / top), 1.0, 1e-12);
    /* the output coordinates are uncorrelated with variances w_c */
    for (int a = 0; a < k; a++)
        for (int b = 0; b < k; b++) {
            long double s = 0;
            for (int i = 0; i < n; i++) s += (long double)Y[i * k + a] * Y[i * k + b];
            CHECK_NEAR((double)(s / n), a == b ? (double)w[a] : 0.0, 1e-11 * (double)w[0]);
        }
    free(Y);
    dpdo_transform_destroy(t);
    dpdo_dataset_destroy(in);
    dpdo_dataset_destroy(out);
}

static void test_pca_vs_jacobi(void)
{
    const double sd[8] = {5, 3, 2, 1.2, 0.7, 0.4, 0.2, 0.1};
    double *X = make_rotated(400, 6, sd, 3.0);
    check_pca_case(400, 6, 3, X, 1.0);
    check_pca_case(400, 6, 1, X, 1.0);
    check_pca_case(400, 6, 6, X, 1.0);
    free(X);
    X = make_rotated(700, 8, sd, -1.0);
    check_pca_case(700, 8, 5, X, 1.0);
    free(X);
    /* integer "pixels" in [0, 255] with correlations, scaled by 1/255 */
    int n = 500, d = 7;
    X = malloc((size_t)(n * d) * sizeof(double));
    for (int i = 0; i < n; i++) {
        double a = urand(), b = urand();
        for (int j = 0; j < d; j++) {
            double v = 255 * (0.6 * a * (j + 1) / d + 0.3 * b * (d - j) / d + 0.1 * urand());
            X[i * d + j] = floor(v);
        }
    }
    check_pca_case(n, d, 4, X, 1.0 / 255);
    free(X);
    /* explained-variance ratios of the full decomposition sum to 1 */
    X = make_rotated(100, 4, sd, 0.5);
    dpdo_dataset *in = dense(100, 4, X);
    dpdo_transform *t = new_t();
    CHECK_EQ(dpdo_transform_fit_center(t, in), DPDO_OK);
    CHECK_EQ(dpdo_transform_fit_pca(t, in, 4), DPDO_OK);
    double r[4], s = 0;
    CHECK_EQ(dpdo_transform_explained_variance(t, r, 4), DPDO_OK);
    for (int c = 0; c < 4; c++) s += r[c];
    CHECK_NEAR(s, 1.0, 1e-14);
    for (int c = 1; c < 4; c++) CHECK(r[c] <= r[c - 1]);
    /* a prefix of the ratios */
    double r2[2];
    CHECK_EQ(dpdo_transform_explained_variance(t, r2, 2), DPDO_OK);
    CHECK(r2[0] == r[0] && r2[1] == r[1]);
    dpdo_transform_destroy(t);
    dpdo_dataset_destroy(in);
    free(X);
}

/* The axes themselves, read back exactly: data made of +-pairs have a mean
 * of exactly 0, so applying the transform to the unit vectors e_j returns
 * row j of the projection matrix. Checks orthonormality, the sign
 * convention, agreement with Jacobi, determinism, and that negating the data
 * negates the projections exactly. */
static void test_sign_convention(void)
{
    const double sd[6] = {4, 2.5, 1.5, 1, 0.5, 0.25};
    int h = 150, d = 6, k = 4, n = 2 * h;
    double *H = make_rotated(h, d, sd, 0.0);
    double *X = malloc((size_t)(n * d) * sizeof(double));
    for (int i = 0; i < h; i++)
        for (int j = 0; j < d; j++) X[(2 * i) * d + j] = H[i * d + j], X[(2 * i + 1) * d + j] = -H[i * d + j];
    double E[36] = {0};
    for (int j = 0; j < d; j++) E[j * d + j] = 1;
    dpdo_dataset *in = dense(n, d, X), *eye = dense(d, d, E), *out = NULL, *out2 = NULL;
    dpdo_dataset_create(&out);
    dpdo_dataset_create(&out2);
    dpdo_transform *t = new_t(), *t2 = new_t();
    CHECK_EQ(dpdo_transform_fit_center(t, in), DPDO_OK);
    CHECK_EQ(dpdo_transform_fit_pca(t, in, k), DPDO_OK);
    CHECK_EQ(dpdo_transform_apply(t, eye, out), DPDO_OK);
    double *P = rows_of(out); /* d x k */
    long double mean[6], w[6], V[36], tr;
    reference_pca(n, d, X, 1.0, mean, w, V, &tr);
    for (int j = 0; j < d; j++) CHECK(mean[j] == 0);
    for (int c = 0; c < k; c++) {
        int jm = 0;
        for (int j = 1; j < d; j++)
            if (fabs(P[j * k + c]) > fabs(P[jm * k + c])) jm = j;
        CHECK_MSG(P[jm * k + c] > 0, "axis %d: largest entry %g is not positive", c, P[jm * k + c]);
        for (int j = 0; j < d; j++) CHECK_NEAR(P[j * k + c], (double)V[j * d + c], 1e-12);
        for (int c2 = 0; c2 < k; c2++) {
            double dot = 0;
            for (int j = 0; j < d; j++) dot += P[j * k + c] * P[j * k + c2];
            CHECK_NEAR(dot, c == c2 ? 1.0 : 0.0, 1e-14);
        }
    }
    /* determinism: a second fit gives identical bytes */
    CHECK_EQ(dpdo_transform_fit_center(t2, in), DPDO_OK);
    CHECK_EQ(dpdo_transform_fit_pca(t2, in, k), DPDO_OK);
    CHECK_EQ(dpdo_transform_apply(t2, eye, out2), DPDO_OK);
    double *P2 = rows_of(out2);
    CHECK(memcmp(P, P2, (size_t)(d * k) * sizeof(double)) == 0);
    free(P2);
    dpdo_transform_destroy(t2);
    /* negated data: same covariance, same axes with the same signs */
    double *Xn = malloc((size_t)(n * d) * sizeof(double));
    for (int i = 0; i < n * d; i++) Xn[i] = -X[i];
    dpdo_dataset *inn = dense(n, d, Xn);
    t2 = new_t();
    CHECK_EQ(dpdo_transform_fit_center(t2, inn), DPDO_OK);
    CHECK_EQ(dpdo_transform_fit_pca(t2, inn, k), DPDO_OK);
    CHECK_EQ(dpdo_transform_apply(t2, eye, out2), DPDO_OK);
    P2 = rows_of(out2);
    CHECK(memcmp(P, P2, (size_t)(d * k) * sizeof(double)) == 0);
    free(P2);
    /* ... so projections of the negated rows are exactly negated */
    CHECK_EQ(dpdo_transform_apply(t, in, out), DPDO_OK);
    CHECK_EQ(dpdo_transform_apply(t2, inn, out2), DPDO_OK);
    double *Y = rows_of(out), *Yn = rows_of(out2);
    int same = 1;
    for (int i = 0; i < n * k; i++) same &= Yn[i] == -Y[i];
    CHECK(same);
    free(Y), free(Yn), free(P), free(Xn), free(X), free(H);
    dpdo_transform_destroy(t);
    dpdo_transform_destroy(t2);
    dpdo_dataset_destroy(in);
    dpdo_dataset_destroy(inn);
    dpdo_dataset_destroy(eye);
    dpdo_dataset_destroy(out);
    dpdo_dataset_destroy(out2);
}

/* CSR input gives bitwise the same result as the same values stored dense */
static void test_csr_matches_dense(void)
{
    int n = 300, d = 9; /* > one block of rows would need n > 256: it is */
    double *X = malloc((size_t)(n * d) * sizeof(double));
    for (int i = 0; i < n * d; i++) X[i] = urand() < 0.6 ? 0.0 : floor(10 * urand()) - 3;
    dpdo_dataset *D = dense(n, d, X), *S = csr_of(n, d, X), *o1 = NULL, *o2 = NULL;
    CHECK_EQ(dpdo_dataset_layout(S), DPDO_LAYOUT_CSR);
    dpdo_dataset_create(&o1);
    dpdo_dataset_create(&o2);
    for (int mode = 0; mode < 3; mode++) {
        dpdo_transform *t1 = new_t(), *t2 = new_t();
        dpdo_transform_fit_scale(t1, 0.25);
        dpdo_transform_fit_scale(t2, 0.25);
        if (mode == 1) {
            CHECK_EQ(dpdo_transform_fit_standardize(t1, D), DPDO_OK);
            CHECK_EQ(dpdo_transform_fit_standardize(t2, S), DPDO_OK);
        } else if (mode == 2) {
            CHECK_EQ(dpdo_transform_fit_center(t1, D), DPDO_OK);
            CHECK_EQ(dpdo_transform_fit_center(t2, S), DPDO_OK);
            CHECK_EQ(dpdo_transform_fit_pca(t1, D, 4), DPDO_OK);
            CHECK_EQ(dpdo_transform_fit_pca(t2, S, 4), DPDO_OK);
            dpdo_transform_set_normalize_rows(t1, 1);
            dpdo_transform_set_normalize_rows(t2, 1);
        }
        CHECK_EQ(dpdo_transform_apply(t1, D, o1), DPDO_OK);
        CHECK_EQ(dpdo_transform_apply(t2, S, o2), DPDO_OK);
        double *Y1 = rows_of(o1), *Y2 = rows_of(o2);
        int64_t m = dpdo_dataset_rows(o1) * dpdo_dataset_features(o1);
        CHECK_EQ(dpdo_dataset_features(o1), dpdo_dataset_features(o2));
        CHECK_MSG(memcmp(Y1, Y2, (size_t)m * sizeof(double)) == 0, "mode %d: CSR and dense differ", mode);
        /* the dense-fitted transform applied to CSR input, too */
        CHECK_EQ(dpdo_transform_apply(t1, S, o2), DPDO_OK);
        free(Y2);
        Y2 = rows_of(o2);
        CHECK(memcmp(Y1, Y2, (size_t)m * sizeof(double)) == 0);
        free(Y1), free(Y2);
        dpdo_transform_destroy(t1);
        dpdo_transform_destroy(t2);
    }
    free(X);
    dpdo_dataset_destroy(D);
    dpdo_dataset_destroy(S);
    dpdo_dataset_destroy(o1);
    dpdo_dataset_destroy(o2);
}

static double norm_ld(const double *x, int64_t m) /* reference norm in long double */
{
    long double s = 0;
    for (int64_t j = 0; j < m; j++) s += (long double)x[j] * x[j];
    return (double)sqrtl(s);
}

static void test_normalize(void)
{
    int n = 8, d = 5;
    double X[40];
    for (int i = 0; i < n * d; i++) X[i] = nrand();
    for (int j = 0; j < d; j++) X[2 * d + j] = 0.0;               /* zero row */
    for (int j = 0; j < d; j++) X[3 * d + j] *= 1e300;            /* squares overflow */
    for (int j = 0; j < d; j++) X[4 * d + j] *= 1e-300;           /* squares underflow */
    for (int j = 0; j < d; j++) X[5 * d + j] = j == 2 ? -7.0 : 0; /* one entry */
    X[6 * d + 1] = 4.9e-324;                                      /* subnormal entry */
    dpdo_dataset *in = dense(n, d, X), *out = NULL;
    dpdo_dataset_create(&out);
    dpdo_transform *t = new_t();
    CHECK_EQ(dpdo_transform_set_normalize_rows(t, 1), DPDO_OK);
    CHECK_EQ(dpdo_transform_apply(t, in, out), DPDO_OK);
    double *Y = rows_of(out);
    for (int i = 0; i < n; i++) {
        double nr = norm_ld(Y + i * d, d);
        if (i == 2) {
            for (int j = 0; j < d; j++) CHECK(Y[i * d + j] == 0.0);
            continue;
        }
        CHECK_MSG(fabs(1 - nr) < 1e-15, "row %d: |1 - ||x||| = %g", i, fabs(1 - nr));
        /* same direction: x / ||x|| computed in long double */
        long double s = 0, mx = 0;
        for (int j = 0; j < d; j++) mx = fmaxl(mx, fabsl((long double)X[i * d + j]));
        for (int j = 0; j < d; j++) s += ((long double)X[i * d + j] / mx) * ((long double)X[i * d + j] / mx);
        for (int j = 0; j < d; j++)
            CHECK_NEAR(Y[i * d + j], (double)((long double)X[i * d + j] / mx / sqrtl(s)), 4e-16);
    }
    CHECK(Y[5 * d + 2] == -1.0);
    free(Y);
    /* off again: identity */
    CHECK_EQ(dpdo_transform_set_normalize_rows(t, 0), DPDO_OK);
    CHECK_EQ(dpdo_transform_apply(t, in, out), DPDO_OK);
    Y = rows_of(out);
    CHECK(memcmp(Y, X, sizeof X) == 0);
    free(Y);
    /* many random rows after a PCA: every norm within 1e-15 of 1 */
    int nn = 2000, dd = 20, kk = 12;
    double *R = malloc((size_t)(nn * dd) * sizeof(double));
    for (int i = 0; i < nn * dd; i++) R[i] = (i % dd + 1) * nrand() + 0.3;
    dpdo_dataset *rin = dense(nn, dd, R);
    dpdo_transform *t2 = new_t();
    CHECK_EQ(dpdo_transform_fit_center(t2, rin), DPDO_OK);
    CHECK_EQ(dpdo_transform_fit_pca(t2, rin, kk), DPDO_OK);
    CHECK_EQ(dpdo_transform_set_normalize_rows(t2, 1), DPDO_OK);
    CHECK_EQ(dpdo_transform_apply(t2, rin, out), DPDO_OK);
    Y = rows_of(out);
    double worst = 0;
    for (int i = 0; i < nn; i++) worst = fmax(worst, fabs(1 - norm_ld(Y + i * kk, kk)));
    CHECK_MSG(worst < 1e-15, "worst |1 - ||x||| = %g", worst);
    CHECK_NEAR(dpdo_dataset_max_row_norm(out), 1.0, 1e-15);
    free(Y), free(R);
    dpdo_transform_destroy(t2);
    dpdo_dataset_destroy(rin);
    dpdo_transform_destroy(t);
    dpdo_dataset_destroy(in);
    dpdo_dataset_destroy(out);
}

/* The Covertype pipeline on the covtype-like generator: z-score (constant
 * one-hot columns keep divisor 1 and become 0) then unit rows. */
static void test_covtype_pipeline(void)
{
    dpdo_generate_options g;
    dpdo_generate_options_init(&g, sizeof g);
    g.n = h_quick() ? 400 : 3000;
    g.seed = 5;
    dpdo_dataset *tr = NULL, *te = NULL, *out = NULL;
    dpdo_dataset_create(&tr);
    dpdo_dataset_create(&te);
    dpdo_dataset_create(&out);
    CHECK_EQ(dpdo_dataset_generate(tr, "covtype-like", &g), DPDO_OK);
    g.seed = 6;
    g.n = 500;
    CHECK_EQ(dpdo_dataset_generate(te, "covtype-like", &g), DPDO_OK);
    int64_t n = dpdo_dataset_rows(tr), d = dpdo_dataset_features(tr);
    CHECK_EQ(d, 54);
    dpdo_transform *t = new_t();
    CHECK_EQ(dpdo_transform_fit_standardize(t, tr), DPDO_OK);
    CHECK_EQ(dpdo_transform_apply(t, tr, out), DPDO_OK);
    double *X = rows_of(tr), *Y = rows_of(out);
    for (int64_t j = 0; j < d; j++) {
        double lo = X[j], hi = X[j], m = 0, v = 0;
        for (int64_t i = 0; i < n; i++) {
            lo = fmin(lo, X[i * d + j]), hi = fmax(hi, X[i * d + j]);
            m += Y[i * d + j];
            v += Y[i * d + j] * Y[i * d + j];
        }
        if (lo == hi) { /* constant column: exactly 0 */
            for (int64_t i = 0; i < n; i++) CHECK(Y[i * d + j] == 0.0);
        } else {
            CHECK_NEAR(m / (double)n, 0.0, 1e-12);
            CHECK_NEAR(v / (double)n, 1.0, 1e-12);
        }
    }
    free(X), free(Y);
    CHECK_EQ(dpdo_transform_set_normalize_rows(t, 1), DPDO_OK);
    CHECK_EQ(dpdo_transform_apply(t, te, out), DPDO_OK);
    CHECK_EQ(dpdo_dataset_features(out), 54);
    Y = rows_of(out);
    double worst = 0;
    for (int64_t i = 0; i < 500; i++) worst = fmax(worst, fabs(1 - norm_ld(Y + i * d, d)));
    CHECK_MSG(worst < 1e-15, "worst |1 - ||x||| = %g", worst);
    free(Y);
    dpdo_transform_destroy(t);
    dpdo_dataset_destroy(tr);
    dpdo_dataset_destroy(te);
    dpdo_dataset_destroy(out);
}

static void test_order_errors(void)
{
    dpdo_dataset *in = dense(4, 3, X43);
    dpdo_transform *t = new_t();
    double r[2];
    CHECK_EQ(dpdo_transform_explained_variance(t, r, 1), DPDO_E_STATE);
    CHECK_EQ(dpdo_transform_fit_pca(t, in, 2), DPDO_E_STATE);
    CHECK_STR_CONTAINS(dpdo_transform_errmsg(t), "centred first");
    CHECK_EQ(dpdo_transform_fit_scale(t, 2.0), DPDO_OK);
    CHECK_EQ(dpdo_transform_fit_scale(t, 3.0), DPDO_E_STATE);
    CHECK_STR_CONTAINS(dpdo_transform_errmsg(t), "fit_scale was already fitted");
    CHECK_EQ(dpdo_transform_fit_pca(t, in, 2), DPDO_E_STATE); /* scaled but not centred */
    CHECK_EQ(dpdo_transform_fit_center(t, in), DPDO_OK);
    CHECK(strcmp(dpdo_transform_errmsg(t), "") == 0);
    CHECK_EQ(dpdo_transform_fit_center(t, in), DPDO_E_STATE);
    CHECK_EQ(dpdo_transform_fit_standardize(t, in), DPDO_E_STATE);
    CHECK_STR_CONTAINS(dpdo_transform_errmsg(t), "fit_center was already fitted");
    CHECK_EQ(dpdo_transform_fit_scale(t, 2.0), DPDO_E_STATE);
    CHECK_EQ(dpdo_transform_output_dim(t), 3);
    CHECK_EQ(dpdo_transform_fit_pca(t, in, 2), DPDO_OK);
    CHECK_EQ(dpdo_transform_fit_pca(t, in, 2), DPDO_E_STATE);
    CHECK_STR_CONTAINS(dpdo_transform_errmsg(t), "fit_pca was already fitted");
    CHECK_EQ(dpdo_transform_fit_center(t, in), DPDO_E_STATE);
    CHECK_EQ(dpdo_transform_fit_scale(t, 1.0), DPDO_E_STATE);
    CHECK_EQ(dpdo_transform_output_dim(t), 2); /* unchanged by the failures */
    dpdo_transform_destroy(t);
    /* standardize, then center: E_STATE naming fit_standardize */
    t = new_t();
    CHECK_EQ(dpdo_transform_fit_standardize(t, in), DPDO_OK);
    CHECK_EQ(dpdo_transform_fit_center(t, in), DPDO_E_STATE);
    CHECK_STR_CONTAINS(dpdo_transform_errmsg(t), "fit_standardize was already fitted");
    CHECK_EQ(dpdo_transform_fit_pca(t, in, 1), DPDO_OK); /* PCA after standardising is fine */
    dpdo_transform_destroy(t);
    dpdo_dataset_destroy(in);
}

static void test_bad_input(void)
{
    dpdo_dataset *in = dense(4, 3, X43), *empty = NULL, *out = NULL;
    dpdo_dataset_create(&empty);
    dpdo_dataset_create(&out);
    dpdo_transform *t = new_t();
    /* NULL handles */
    CHECK_EQ(dpdo_transform_fit_scale(NULL, 1.0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_transform_fit_center(NULL, in), DPDO_E_INVAL);
    CHECK_EQ(dpdo_transform_fit_standardize(NULL, in), DPDO_E_INVAL);
    CHECK_EQ(dpdo_transform_fit_pca(NULL, in, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_transform_set_normalize_rows(NULL, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_transform_output_dim(NULL), 0);
    double r[3];
    CHECK_EQ(dpdo_transform_explained_variance(NULL, r, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_transform_apply(NULL, in, out), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(out), "transform is NULL");
    CHECK_EQ(dpdo_transform_apply(t, NULL, out), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(out), "input dataset is NULL");
    CHECK_EQ(dpdo_transform_apply(t, in, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_transform_apply(t, in, in), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(in), "out is the input");
    /* scale factor */
    CHECK_EQ(dpdo_transform_fit_scale(t, 0.0), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_transform_errmsg(t), "factor = 0");
    CHECK_EQ(dpdo_transform_fit_scale(t, NAN), DPDO_E_INVAL);
    CHECK_EQ(dpdo_transform_fit_scale(t, INFINITY), DPDO_E_INVAL);
    CHECK_EQ(dpdo_transform_fit_scale(t, -INFINITY), DPDO_E_INVAL);
    /* normalize flag */
    CHECK_EQ(dpdo_transform_set_normalize_rows(t, 2), DPDO_E_INVAL);
    CHECK_EQ(dpdo_transform_set_normalize_rows(t, -1), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_transform_errmsg(t), "use 0 or 1");
    /* NULL / empty training data */
    CHECK_EQ(dpdo_transform_fit_center(t, NULL), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_transform_errmsg(t), "train dataset is NULL");
    CHECK_EQ(dpdo_transform_fit_standardize(t, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_transform_fit_center(t, empty), DPDO_E_STATE);
    CHECK_STR_CONTAINS(dpdo_transform_errmsg(t), "empty");
    CHECK_EQ(dpdo_transform_fit_standardize(t, empty), DPDO_E_STATE);
    CHECK_EQ(dpdo_transform_apply(t, empty, out), DPDO_E_STATE);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(out), "input dataset is empty");
    CHECK_EQ(dpdo_transform_fit_center(t, in), DPDO_OK);
    CHECK_EQ(dpdo_transform_fit_pca(t, NULL, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_transform_fit_pca(t, empty, 1), DPDO_E_STATE);
    /* k out of range */
    CHECK_EQ(dpdo_transform_fit_pca(t, in, 0), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_transform_errmsg(t), "k = 0: need 1 <= k <= d = 3");
    CHECK_EQ(dpdo_transform_fit_pca(t, in, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_transform_fit_pca(t, in, -1), DPDO_E_INVAL);
    /* feature count mismatch */
    double X2[4] = {1, 2, 3, 4};
    dpdo_dataset *in2 = dense(2, 2, X2);
    CHECK_EQ(dpdo_transform_fit_pca(t, in2, 1), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_transform_errmsg(t), "train has 2 features but the transform was fitted on 3");
    CHECK_EQ(dpdo_transform_apply(t, in2, out), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(out), "input has 2 features");
    CHECK_EQ(dpdo_dataset_layout(out), DPDO_LAYOUT_EMPTY); /* failures leave out unchanged */
    /* explained variance */
    CHECK_EQ(dpdo_transform_fit_pca(t, in, 2), DPDO_OK);
    CHECK_EQ(dpdo_transform_explained_variance(t, NULL, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_transform_explained_variance(t, r, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_transform_explained_variance(t, r, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_transform_explained_variance(t, r, 2), DPDO_OK);
    /* out borrowed by a shard */
    dpdo_shard *sh = NULL;
    dpdo_dataset *busy = dense(2, 2, X2);
    CHECK_EQ(dpdo_shard_create_range(&sh, busy, 0, 1), DPDO_OK);
    CHECK_EQ(dpdo_transform_apply(t, in, busy), DPDO_E_STATE);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(busy), "borrowed");
    CHECK_EQ(dpdo_dataset_features(busy), 2);
    dpdo_shard_destroy(sh);
    dpdo_dataset_destroy(busy);
    dpdo_transform_destroy(t);

    /* zero total variance */
    double Xc[6] = {1, 2, 1, 2, 1, 2};
    dpdo_dataset *cst = dense(3, 2, Xc);
    t = new_t();
    CHECK_EQ(dpdo_transform_fit_center(t, cst), DPDO_OK);
    CHECK_EQ(dpdo_transform_fit_pca(t, cst, 1), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_transform_errmsg(t), "zero total variance");
    dpdo_transform_destroy(t);
    dpdo_dataset_destroy(cst);

    /* d too large for PCA (a cheap CSR 1 x 16385 dataset) */
    int64_t rp[2] = {0, 1};
    int32_t ci[1] = {5};
    double v[1] = {1.0}, y1[1] = {1};
    dpdo_dataset *wide = NULL;
    dpdo_dataset_create(&wide);
    CHECK_EQ(dpdo_dataset_set_csr(wide, 1, 16385, rp, ci, v, y1, DPDO_COPY), DPDO_OK);
    t = new_t();
    CHECK_EQ(dpdo_transform_fit_center(t, wide), DPDO_OK);
    CHECK_EQ(dpdo_transform_fit_pca(t, wide, 1), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_transform_errmsg(t), "exceeds 16384");
    dpdo_transform_destroy(t);
    dpdo_dataset_destroy(wide);

    /* NaN / Inf features: a borrowed array changed behind the dataset's back
     * (a contract violation the library must still report, not propagate) */
    double B[12];
    memcpy(B, X43, sizeof B);
    double yb[4] = {1, 1, -1, -1};
    dpdo_dataset *bor = NULL;
    dpdo_dataset_create(&bor);
    CHECK_EQ(dpdo_dataset_set_dense(bor, 4, 3, B, yb, DPDO_BORROW), DPDO_OK);
    dpdo_transform *tc = new_t(); /* fitted on clean data, used after the change */
    CHECK_EQ(dpdo_transform_fit_center(tc, bor), DPDO_OK);
    B[2 * 3 + 1] = NAN;
    t = new_t();
    CHECK_EQ(dpdo_transform_fit_center(t, bor), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_transform_errmsg(t), "row 2, column 1: value is NaN");
    CHECK_EQ(dpdo_transform_output_dim(t), 0);
    CHECK_EQ(dpdo_transform_fit_standardize(t, bor), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_transform_errmsg(t), "row 2, column 1: value is NaN");
    CHECK_EQ(dpdo_transform_fit_pca(tc, bor, 1), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_transform_errmsg(tc), "row 2, column 1: value is NaN");
    CHECK_EQ(dpdo_transform_apply(tc, bor, out), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(out), "row 2, column 1: value is NaN");
    B[2 * 3 + 1] = -INFINITY;
    CHECK_EQ(dpdo_transform_apply(t, bor, out), DPDO_E_INVAL); /* identity transform too */
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(out), "row 2, column 1: value is Inf");
    CHECK_EQ(dpdo_dataset_layout(out), DPDO_LAYOUT_EMPTY);
    dpdo_transform_destroy(tc);
    dpdo_transform_destroy(t);
    dpdo_dataset_destroy(bor);

    /* overflow of finite values: E_NUMERIC */
    double Xo[4] = {1e300, -1e300, 1e300, 2};
    dpdo_dataset *big = dense(2, 2, Xo);
    t = new_t();
    CHECK_EQ(dpdo_transform_fit_scale(t, 1e10), DPDO_OK);
    CHECK_EQ(dpdo_transform_apply(t, big, out), DPDO_E_NUMERIC);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(out), "overflows");
    CHECK_EQ(dpdo_transform_fit_center(t, big), DPDO_E_NUMERIC);
    dpdo_transform_destroy(t);
    double Xs[4] = {1.5e308, 1, 1.6e308, 2};
    dpdo_dataset *big2 = dense(2, 2, Xs);
    t = new_t();
    CHECK_EQ(dpdo_transform_fit_center(t, big2), DPDO_E_NUMERIC); /* sum overflows */
    dpdo_transform_destroy(t);
    double Xv[4] = {1e300, 1, -1e300, 2};
    dpdo_dataset *big3 = dense(2, 2, Xv);
    t = new_t();
    CHECK_EQ(dpdo_transform_fit_standardize(t, big3), DPDO_E_NUMERIC); /* squares overflow */
    CHECK_STR_CONTAINS(dpdo_transform_errmsg(t), "column 0");
    CHECK_EQ(dpdo_transform_fit_center(t, big3), DPDO_OK);
    CHECK_EQ(dpdo_transform_fit_pca(t, big3, 1), DPDO_E_NUMERIC); /* covariance overflows */
    dpdo_transform_destroy(t);
    dpdo_dataset_destroy(big);
    dpdo_dataset_destroy(big2);
    dpdo_dataset_destroy(big3);

    dpdo_dataset_destroy(in);
    dpdo_dataset_destroy(in2);
    dpdo_dataset_destroy(empty);
    dpdo_dataset_destroy(out);
}

/* ---- out of memory ---------------------------------------------------------- */

static void test_oom_create(void)
{
    int done = 0;
    for (long k = 0; k < 50 && !done; k++) {
        dpdo_transform *t = (dpdo_transform *)1;
        dpdo__fault_arm(k);
        int rc = dpdo_transform_create(&t);
        dpdo__fault_arm(-1);
        if (rc == DPDO_OK) {
            done = 1;
            CHECK(t != NULL);
            dpdo_transform_destroy(t);
        } else {
            CHECK_EQ(rc, DPDO_E_NOMEM);
            CHECK(t == NULL);
        }
    }
    CHECK(done);
}

/* step 0 = fit_center, 1 = fit_standardize, 2 = fit_pca, 3 = apply */
static void oom_step(int step, dpdo_dataset *in)
{
    int done = 0;
    long k;
    for (k = 0; k < 200 && !done; k++) {
        dpdo_transform *t = new_t();
        dpdo_dataset *out = NULL;
        dpdo_dataset_create(&out);
        dpdo_transform_fit_scale(t, 0.5);
        if (step >= 2) dpdo_transform_fit_center(t, in);
        if (step == 3) {
            dpdo_transform_fit_pca(t, in, 2);
            dpdo_transform_set_normalize_rows(t, 1);
        }
        int64_t dim0 = dpdo_transform_output_dim(t);
        dpdo__fault_arm(k);
        int rc = step == 0   ? dpdo_transform_fit_center(t, in)
                 : step == 1 ? dpdo_transform_fit_standardize(t, in)
                 : step == 2 ? dpdo_transform_fit_pca(t, in, 2)
                             : dpdo_transform_apply(t, in, out);
        int fired = dpdo__fault_fired();
        dpdo__fault_arm(-1);
        if (rc == DPDO_OK) {
            CHECK_MSG(!fired, "step %d: success although allocation %ld failed", step, k);
            done = 1;
            if (step == 3) CHECK_EQ(dpdo_dataset_features(out), 2);
        } else {
            CHECK_MSG(rc == DPDO_E_NOMEM, "step %d, k = %ld: rc %d", step, k, rc);
            CHECK_EQ(dpdo_transform_output_dim(t), dim0); /* unchanged */
            CHECK_EQ(dpdo_dataset_layout(out), DPDO_LAYOUT_EMPTY);
            if (step < 3) CHECK_STR_CONTAINS(dpdo_transform_errmsg(t), "out of memory");
            else CHECK_STR_CONTAINS(dpdo_dataset_errmsg(out), "out of memory");
            /* the transform is still usable after the failure */
            if (step == 2) CHECK_EQ(dpdo_transform_fit_pca(t, in, 2), DPDO_OK);
        }
        dpdo_transform_destroy(t);
        dpdo_dataset_destroy(out);
    }
    CHECK_MSG(done, "step %d never succeeded", step);
    CHECK_MSG(k > 1, "step %d: no allocation to fail", step);
}

static void test_oom_fit_apply(void)
{
    double X[5 * 4];
    for (int i = 0; i < 20; i++) X[i] = nrand();
    dpdo_dataset *in = dense(5, 4, X);
    int32_t c[5] = {0, 1, 2, 3, 4};
    dpdo_dataset_set_classes(in, c, 5);
    dpdo_dataset *s = csr_of(5, 4, X);
    for (int step = 0; step < 4; step++) {
        oom_step(step, in);
        oom_step(step, s);
    }
    dpdo_dataset_destroy(in);
    dpdo_dataset_destroy(s);
}

/* ---- Fashion-MNIST ------------------------------------------------------------
 * Reference numbers, computed once with /usr/bin/python3 + numpy 1.24 (not
 * at test time):
 *   X = uint8 train images (60000 x 784) / 255.0;  T = test images / 255.0
 *   mu = X.mean(0); C = (X-mu).T @ (X-mu) / 60000; w, V = np.linalg.eigh(C)
 *   (sorted descending; each column's largest-|.| entry made positive)
 *   ratio = w / trace(C);   P = (T - mu) @ V[:, :50];  Y = P / ||P||_row
 * The tolerances (1e-10 on ratios, 1e-8 on projected coordinates) allow for
 * the different summation orders (float64 throughout in both); the first
 * three eigenvalues are separated by > 15%, so their axes are well
 * conditioned. */
#define FMNIST "/usr/share/datasets/fashion-mnist/"
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void test_fashion_mnist(void)
{
    const char *ri = FMNIST "train-images-idx3-ubyte.gz", *rl = FMNIST "train-labels-idx1-ubyte.gz";
    const char *ti = FMNIST "t10k-images-idx3-ubyte.gz", *tl = FMNIST "t10k-labels-idx1-ubyte.gz";
    if (access(ri, R_OK) != 0 || access(ti, R_OK) != 0) {
        printf("# skipping: Fashion-MNIST not found in " FMNIST
               " (apt-get install dataset-fashion-mnist)\n");
        return;
    }
    if (h_quick()) {
        printf("# skipping the Fashion-MNIST PCA under DPDO_TEST_QUICK\n");
        return;
    }
    dpdo_load_options o;
    dpdo_load_options_init(&o, sizeof o);
    o.scale = DPDO_IDX_RAW; /* bytes 0..255; the transform scales */
    dpdo_dataset *train = NULL, *test = NULL, *out = NULL;
    dpdo_dataset_create(&train);
    dpdo_dataset_create(&test);
    dpdo_dataset_create(&out);
    double t0 = now();
    CHECK_EQ(dpdo_dataset_load_idx(train, ri, rl, &o), DPDO_OK);
    CHECK_EQ(dpdo_dataset_load_idx(test, ti, tl, &o), DPDO_OK);
    double t1 = now();
    CHECK_EQ(dpdo_dataset_rows(train), 60000);
    CHECK_EQ(dpdo_dataset_features(train), 784);
    dpdo_transform *t = new_t();
    CHECK_EQ(dpdo_transform_fit_scale(t, 1.0 / 255.0), DPDO_OK);
    CHECK_EQ(dpdo_transform_fit_center(t, train), DPDO_OK);
    double t2 = now();
    CHECK_EQ(dpdo_transform_fit_pca(t, train, 50), DPDO_OK);
    double t3 = now();
    CHECK_EQ(dpdo_transform_set_normalize_rows(t, 1), DPDO_OK);
    CHECK_EQ(dpdo_transform_output_dim(t), 50);
    double r[50], sum = 0;
    CHECK_EQ(dpdo_transform_explained_variance(t, r, 50), DPDO_OK);
    for (int c = 0; c < 50; c++) sum += r[c];
    printf("# Fashion-MNIST: explained-variance ratio of the top 50 components = %.15f\n", sum);
    printf("# first five: %.6f %.6f %.6f %.6f %.6f\n", r[0], r[1], r[2], r[3], r[4]);
    CHECK_NEAR(sum, 0.8626917002845214, 1e-10);
    CHECK_NEAR(r[0], 0.29039227921366034, 1e-10);
    CHECK_NEAR(r[1], 0.17755309978162215, 1e-10);
    CHECK_NEAR(r[2], 0.06019221983168946, 1e-10);
    CHECK_NEAR(r[3], 0.049574280037005695, 1e-10);
    CHECK_NEAR(r[4], 0.03847655147905925, 1e-10);
    CHECK_NEAR(r[49], 0.0015484629714236735, 1e-10);
    CHECK_EQ(dpdo_transform_apply(t, test, out), DPDO_OK);
    double t4 = now();
    CHECK_EQ(dpdo_dataset_rows(out), 10000);
    CHECK_EQ(dpdo_dataset_features(out), 50);
    CHECK_EQ(dpdo_dataset_has_classes(out), 1);
    double *Y = rows_of(out);
    double worst = 0;
    for (int i = 0; i < 10000; i++) worst = fmax(worst, fabs(1 - norm_ld(Y + i * 50, 50)));
    CHECK_MSG(worst < 1e-15, "worst |1 - ||x||| = %g", worst);
    const double y0[3] = {-0.784017371897047, 0.34547531205341137, -0.14172936724317514};
    const double y9999[3] = {-0.9380150840492396, 0.05869786722716812, 0.16395292395788158};
    for (int c = 0; c < 3; c++) {
        CHECK_NEAR(Y[c], y0[c], 1e-8);
        CHECK_NEAR(Y[9999 * 50 + c], y9999[c], 1e-8);
    }
    free(Y);
    printf("# times: load %.2f s, fit_center %.2f s, fit_pca(50) %.2f s, apply to 10000 rows %.3f s\n",
           t1 - t0, t2 - t1, t3 - t2, t4 - t3);
    double t5 = now();
    CHECK_EQ(dpdo_transform_apply(t, train, out), DPDO_OK);
    printf("# apply to the 60000 training rows: %.3f s\n", now() - t5);
    dpdo_transform_destroy(t);
    dpdo_dataset_destroy(train);
    dpdo_dataset_destroy(test);
    dpdo_dataset_destroy(out);
}

int main(void)
{
    RUN(test_create_destroy);
    RUN(test_identity);
    RUN(test_scale_center_exact);
    RUN(test_standardize_exact);
    RUN(test_pca_vs_jacobi);
    RUN(test_sign_convention);
    RUN(test_csr_matches_dense);
    RUN(test_normalize);
    RUN(test_covtype_pipeline);
    RUN(test_order_errors);
    RUN(test_bad_input);
    RUN(test_oom_create);
    RUN(test_oom_fit_apply);
    RUN(test_fashion_mnist);
    return h_finish();
}
