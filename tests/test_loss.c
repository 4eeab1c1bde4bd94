/* SPDX-License-Identifier: BSD-3-Clause */
/* Losses: phi values against closed forms (logistic at margins of +-1000),
 * gradients against central differences and a naive loop over the test's
 * own copy of the data (dense and CSR), mini-batch = mean of per-sample,
 * clipping (every clipped per-sample gradient within the bound, counts),
 * Lipschitz/smoothness constants, user losses of all three kinds, failing
 * callbacks, release, bad input, out-of-memory. */
#include <float.h>
#include <stdint.h>
#include "dpdo/dpdo.h"
#include "dpdo/loss.h"
#include "core/core_impl.h"
#include "harness.h"

static uint64_t tstate = 0x1234567887654321ull;
static double urand(void) { return h_urand(&tstate); }
static double nrand(void) { return sqrt(-2.0 * log(urand() + 1e-300)) * cos(6.283185307179586 * urand()); }

/* the test's own data: n x d dense X (row-major, about half the entries 0), labels +-1 */
enum { N = 60, D = 7 };
static double X[N * D], Y[N];

static void make_data(void)
{
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < D; j++) X[i * D + j] = urand() < 0.5 ? 0.0 : nrand();
        Y[i] = urand() < 0.5 ? -1.0 : 1.0;
    }
    X[5 * D + 0] = 3.0; /* make sure some rows are long */
}

static dpdo_dataset *dense_ds(void)
{
    dpdo_dataset *ds = NULL;
    CHECK_EQ(dpdo_dataset_create(&ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_dense(ds, N, D, X, Y, DPDO_COPY), DPDO_OK);
    return ds;
}

/* the CSR data set of the dense n x d rows Xd (rp, ci, va: room for n + 1 and n d entries) */
static dpdo_dataset *csr_of(const double *Xd, const double *Yd, int n, int d, int64_t *rp,
                            int32_t *ci, double *va)
{
    int64_t k = 0;
    for (int i = 0; i < n; i++) {
        rp[i] = k;
        for (int j = 0; j < d; j++)
            if (Xd[i * d + j] != 0.0) ci[k] = j, va[k] = Xd[i * d + j], k++;
    }
    rp[n] = k;
    dpdo_dataset *ds = NULL;
    CHECK_EQ(dpdo_dataset_create(&ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_csr(ds, n, d, rp, ci, va, Yd, DPDO_COPY), DPDO_OK);
    return ds;
}

static dpdo_dataset *csr_ds(void)
{
    static int64_t rp[N + 1];
    static int32_t ci[N * D];
    static double va[N * D];
    return csr_of(X, Y, N, D, rp, ci, va);
}

/* independent scalar losses */
static double ref_phi(int which, double m, double y, double *d)
{
    double z = y * m;
    if (which == 0) {
        *d = z < 1 ? -y : 0.0;
        return z < 1 ? 1 - z : 0.0;
    }
    if (which == 1) {
        /* log(1+exp(-z)) via long double where safe */
        long double e = expl(-(long double)z);
        *d = (double)(-y * e / (1 + e));
        if (z < -700) *d = -y;
        return z < -700 ? -z : (double)log1pl(e);
    }
    *d = m - y;
    return 0.5 * (m - y) * (m - y);
}

static dpdo_loss *mkloss(const char *name)
{
    dpdo_loss *l = NULL;
    CHECK_EQ(dpdo_loss_create(&l, dpdo_loss_type_find(name), NULL, D), DPDO_OK);
    return l;
}

static const char *names[3] = {"hinge", "logistic", "squared"};

static void types_listed(void)
{
    int k = 0;
    for (const dpdo_loss_type *t = dpdo_loss_type_next(NULL); t; t = dpdo_loss_type_next(t), k++) {
        CHECK(k < 3);
        if (k < 3) {
            CHECK(strcmp(dpdo_loss_type_name(t), names[k]) == 0);
            CHECK(dpdo_loss_type_find(names[k]) == t);
        }
    }
    CHECK_EQ(k, 3);
    CHECK(dpdo_loss_type_find("svm") == NULL);
    CHECK(dpdo_loss_type_find(NULL) == NULL);
}

static void phi_values(void)
{
    for (int w = 0; w < 3; w++) {
        dpdo_loss *l = mkloss(names[w]);
        CHECK_EQ(dpdo_loss_kind(l), DPDO_LOSS_KIND_PHI);
        for (int k = 0; k < 200; k++) {
            double m = 6 * nrand(), y = k % 2 ? 1.0 : -1.0, v, dv, rd;
            CHECK_EQ(dpdo_loss_phi(l, m, y, &v, &dv), DPDO_OK);
            double rv = ref_phi(w, m, y, &rd);
            CHECK_NEAR(v, rv, 1e-14 * (1 + fabs(rv)));
            CHECK_NEAR(dv, rd, 1e-14 * (1 + fabs(rd)));
        }
        dpdo_loss_destroy(l);
    }
    /* hinge kink: derivative 0 exactly at y m = 1, -y just below */
    dpdo_loss *h = mkloss("hinge");
    double v, dv;
    dpdo_loss_phi(h, 1.0, 1.0, &v, &dv);
    CHECK(v == 0.0 && dv == 0.0);
    dpdo_loss_phi(h, -1.0, -1.0, &v, &dv);
    CHECK(v == 0.0 && dv == 0.0);
    dpdo_loss_phi(h, nextafter(1.0, 0.0), 1.0, &v, &dv);
    CHECK(v > 0.0 && dv == -1.0);
    dpdo_loss_destroy(h);
    /* logistic at +-1000: finite, correct asymptotics */
    dpdo_loss *lg = mkloss("logistic");
    CHECK_EQ(dpdo_loss_phi(lg, -1000.0, 1.0, &v, &dv), DPDO_OK);
    CHECK(v == 1000.0);  /* log(1+e^1000) = 1000 + log1p(e^-1000) */
    CHECK(dv == -1.0);
    CHECK_EQ(dpdo_loss_phi(lg, 1000.0, 1.0, &v, &dv), DPDO_OK);
    CHECK(v >= 0.0 && v < 1e-300); /* e^-1000 underflows */
    CHECK(dv <= 0.0 && dv > -1e-300);
    CHECK_EQ(dpdo_loss_phi(lg, 1000.0, -1.0, &v, &dv), DPDO_OK);
    CHECK(v == 1000.0 && dv == 1.0);
    CHECK_EQ(dpdo_loss_phi(lg, 40.0, 1.0, &v, &dv), DPDO_OK);
    CHECK_REL(v, exp(-40.0), 1e-14); /* log1p(e^-40) ~ e^-40 */
    CHECK_REL(dv, -exp(-40.0) / (1 + exp(-40.0)), 1e-14);
    CHECK_EQ(dpdo_loss_phi(lg, 0.0, 1.0, &v, &dv), DPDO_OK);
    CHECK_REL(v, log(2.0), 1e-15);
    CHECK(dv == -0.5);
    CHECK_EQ(dpdo_loss_phi(lg, 1e300, 1.0, &v, &dv), DPDO_OK);
    CHECK(v == 0.0);
    dpdo_loss_destroy(lg);
}

/* naive full-shard mean value and gradient over the test's own arrays */
static double naive(int w, const double *x, const int64_t *rows, int64_t m, double clip,
                    double *g, int64_t *ncl)
{
    double s = 0;
    if (g) memset(g, 0, D * sizeof *g);
    int64_t c = 0;
    for (int64_t k = 0; k < m; k++) {
        int64_t r = rows[k];
        double mg = 0, nr = 0;
        for (int j = 0; j < D; j++) mg += X[r * D + j] * x[j], nr += X[r * D + j] * X[r * D + j];
        nr = sqrt(nr);
        double d, v = ref_phi(w, mg, Y[r], &d);
        s += v;
        if (clip > 0 && fabs(d) * nr > clip) {
            d = d * clip / (fabs(d) * nr);
            c++;
        }
        if (g)
            for (int j = 0; j < D; j++) g[j] += d * X[r * D + j] / m;
    }
    if (ncl) *ncl = c;
    return s / m;
}

static void shard_matches_naive_and_fd(void)
{
    dpdo_dataset *dss[2] = {dense_ds(), csr_ds()};
    for (int lay = 0; lay < 2; lay++) {
        /* shard: every row but the first 3, in a scrambled order */
        int64_t rows[N - 3];
        for (int k = 0; k < N - 3; k++) rows[k] = 3 + (k * 17) % (N - 3);
        dpdo_shard *sh = NULL;
        CHECK_EQ(dpdo_shard_create(&sh, dss[lay], rows, N - 3), DPDO_OK);
        for (int w = 0; w < 3; w++) {
            dpdo_loss *l = mkloss(names[w]);
            for (int rep = 0; rep < 4; rep++) {
                double x[D], g[D], gn[D], v;
                for (int j = 0; j < D; j++) x[j] = 0.7 * nrand();
                int64_t ncl = -1;
                CHECK_EQ(dpdo_loss_eval(l, sh, x, D, NULL, 0, 0.0, &v, g, &ncl), DPDO_OK);
                CHECK_EQ(ncl, 0);
                double vn = naive(w, x, rows, N - 3, 0.0, gn, NULL);
                CHECK_NEAR(v, vn, 1e-13 * (1 + fabs(vn)));
                for (int j = 0; j < D; j++) CHECK_NEAR(g[j], gn[j], 1e-13);
                /* central differences (skip hinge points close to a kink) */
                int near_kink = 0;
                for (int k = 0; k < N - 3 && w == 0; k++) {
                    double mg = 0;
                    for (int j = 0; j < D; j++) mg += X[rows[k] * D + j] * x[j];
                    if (fabs(1 - Y[rows[k]] * mg) < 1e-4) near_kink = 1;
                }
                if (near_kink) continue;
                for (int j = 0; j < D; j++) {
                    double xp[D], fp, fm, hs = 1e-6;
                    memcpy(xp, x, sizeof x);
                    xp[j] += hs;
                    dpdo_loss_eval(l, sh, xp, D, NULL, 0, 0.0, &fp, NULL, NULL);
                    xp[j] -= 2 * hs;
                    dpdo_loss_eval(l, sh, xp, D, NULL, 0, 0.0, &fm, NULL, NULL);
                    CHECK_MSG(fabs((fp - fm) / (2 * hs) - g[j]) < 1e-7, "%s layout %d: fd %g vs %g",
                              names[w], lay, (fp - fm) / (2 * hs), g[j]);
                }
            }
            dpdo_loss_destroy(l);
        }
        dpdo_shard_destroy(sh);
        /* a range shard gives the same as the explicit index list */
        dpdo_shard *a = NULL, *b = NULL;
        int64_t rr[20];
        for (int k = 0; k < 20; k++) rr[k] = 10 + k;
        CHECK_EQ(dpdo_shard_create_range(&a, dss[lay], 10, 20), DPDO_OK);
        CHECK_EQ(dpdo_shard_create(&b, dss[lay], rr, 20), DPDO_OK);
        dpdo_loss *l = mkloss("logistic");
        double x[D], ga[D], gb[D], va, vb;
        for (int j = 0; j < D; j++) x[j] = nrand();
        dpdo_loss_eval(l, a, x, D, NULL, 0, 0.0, &va, ga, NULL);
        dpdo_loss_eval(l, b, x, D, NULL, 0, 0.0, &vb, gb, NULL);
        CHECK(va == vb);
        CHECK(memcmp(ga, gb, sizeof ga) == 0);
        dpdo_loss_destroy(l);
        dpdo_shard_destroy(a);
        dpdo_shard_destroy(b);
        dpdo_dataset_destroy(dss[lay]);
    }
}

static void minibatch_and_clipping(void)
{
    dpdo_dataset *ds = dense_ds();
    dpdo_shard *sh = NULL;
    CHECK_EQ(dpdo_shard_create_range(&sh, ds, 0, N), DPDO_OK);
    for (int w = 0; w < 3; w++) {
        dpdo_loss *l = mkloss(names[w]);
        double x[D];
        for (int j = 0; j < D; j++) x[j] = 1.5 * nrand();
        int64_t idx[12] = {3, 5, 5, 0, 59, 17, 22, 5, 40, 41, 8, 9}; /* repeats allowed */
        double clips[] = {0.0, 0.3, 1.0, 1e9};
        for (int c = 0; c < 4; c++) {
            double clip = clips[c];
            double vb, gb[D], gsum[D] = {0}, vsum = 0;
            int64_t nb = -1, nsum = 0;
            CHECK_EQ(dpdo_loss_eval(l, sh, x, D, idx, 12, clip, &vb, gb, &nb), DPDO_OK);
            for (int k = 0; k < 12; k++) {
                double v1, g1[D];
                int64_t n1;
                CHECK_EQ(dpdo_loss_eval(l, sh, x, D, &idx[k], 1, clip, &v1, g1, &n1), DPDO_OK);
                double nr = 0;
                for (int j = 0; j < D; j++) gsum[j] += g1[j] / 12, nr += g1[j] * g1[j];
                if (clip > 0) CHECK_MSG(sqrt(nr) <= clip, "clipped norm %.17g > %g", sqrt(nr), clip);
                vsum += v1 / 12;
                nsum += n1;
            }
            CHECK_NEAR(vb, vsum, 1e-13 * (1 + fabs(vsum)));
            for (int j = 0; j < D; j++) CHECK_NEAR(gb[j], gsum[j], 1e-13);
            CHECK_EQ(nb, nsum);
            /* naive clipped mean and count */
            double gn[D];
            int64_t nn;
            naive(w, x, idx, 12, clip, gn, &nn);
            CHECK_EQ(nb, nn);
            for (int j = 0; j < D; j++) CHECK_NEAR(gb[j], gn[j], 1e-12);
            if (c == 1) CHECK(nb > 0); /* the bound 0.3 really clips something */
            if (c == 3) CHECK_EQ(nb, 0);
        }
        /* full shard with clipping: every row's clipped gradient within the bound */
        double g[D];
        int64_t ncl;
        CHECK_EQ(dpdo_loss_eval(l, sh, x, D, NULL, 0, 0.5, NULL, g, &ncl), DPDO_OK);
        int64_t all[N];
        for (int k = 0; k < N; k++) all[k] = k;
        int64_t nn;
        double gn[D];
        naive(w, x, all, N, 0.5, gn, &nn);
        CHECK_EQ(ncl, nn);
        for (int j = 0; j < D; j++) CHECK_NEAR(g[j], gn[j], 1e-12);
        /* clip = +Inf is no clipping */
        double gi[D], g0[D];
        dpdo_loss_eval(l, sh, x, D, NULL, 0, INFINITY, NULL, gi, &ncl);
        dpdo_loss_eval(l, sh, x, D, NULL, 0, 0.0, NULL, g0, NULL);
        CHECK(memcmp(gi, g0, sizeof gi) == 0);
        CHECK_EQ(ncl, 0);
        dpdo_loss_destroy(l);
    }
    dpdo_shard_destroy(sh);
    dpdo_dataset_destroy(ds);
}

static void constants_from_data(void)
{
    dpdo_dataset *ds = dense_ds();
    dpdo_shard *sh = NULL;
    CHECK_EQ(dpdo_shard_create_range(&sh, ds, 10, 30), DPDO_OK);
    double R = 0;
    for (int i = 10; i < 40; i++) {
        double s = 0;
        for (int j = 0; j < D; j++) s += X[i * D + j] * X[i * D + j];
        R = fmax(R, sqrt(s));
    }
    double L, S;
    dpdo_loss *h = mkloss("hinge"), *lg = mkloss("logistic"), *sq = mkloss("squared");
    CHECK_EQ(dpdo_loss_lipschitz(h, sh, INFINITY, &L), DPDO_OK);
    CHECK_REL(L, R, 1e-15);
    CHECK_EQ(dpdo_loss_smoothness(h, sh, 1.0, &S), DPDO_OK);
    CHECK(isinf(S));
    CHECK_EQ(dpdo_loss_lipschitz(lg, sh, INFINITY, &L), DPDO_OK);
    CHECK_REL(L, R, 1e-15);
    CHECK_EQ(dpdo_loss_smoothness(lg, sh, INFINITY, &S), DPDO_OK);
    CHECK_REL(S, R * R / 4, 1e-15);
    CHECK_EQ(dpdo_loss_lipschitz(sq, sh, 2.0, &L), DPDO_OK);
    CHECK_REL(L, (2.0 * R + 1.0) * R, 1e-15);
    CHECK_EQ(dpdo_loss_lipschitz(sq, sh, INFINITY, &L), DPDO_OK);
    CHECK(isinf(L));
    CHECK_EQ(dpdo_loss_smoothness(sq, sh, INFINITY, &S), DPDO_OK);
    CHECK_REL(S, R * R, 1e-15);
    /* the bound holds for per-sample gradients at random points (logistic; squared in the ball) */
    for (int rep = 0; rep < 50; rep++) {
        double x[D], g[D], nx = 0;
        for (int j = 0; j < D; j++) x[j] = 3 * nrand(), nx += x[j] * x[j];
        for (int j = 0; j < D; j++) x[j] *= 2.0 / sqrt(nx) * urand();
        for (int64_t k = 0; k < 30; k++) {
            double ng = 0;
            dpdo_loss_eval(lg, sh, x, D, &k, 1, 0.0, NULL, g, NULL);
            for (int j = 0; j < D; j++) ng += g[j] * g[j];
            CHECK(sqrt(ng) <= R * (1 + 1e-15));
            dpdo_loss_eval(sq, sh, x, D, &k, 1, 0.0, NULL, g, NULL);
            ng = 0;
            for (int j = 0; j < D; j++) ng += g[j] * g[j];
            CHECK(sqrt(ng) <= (2.0 * R + 1.0) * R * (1 + 1e-15));
        }
    }
    dpdo_loss_destroy(h);
    dpdo_loss_destroy(lg);
    dpdo_loss_destroy(sq);
    dpdo_shard_destroy(sh);
    dpdo_dataset_destroy(ds);
}

/* ---- user losses ----------------------------------------------------------- */
struct uphi {
    int fail, releases, calls;
};
static int my_logistic(void *user, double m, double y, double *l, double *d)
{
    struct uphi *u = user;
    u->calls++;
    if (u->fail && u->calls >= u->fail) return 7;
    double s = -y * m;
    *l = (s > 0 ? s : 0) + log1p(exp(-fabs(s)));
    *d = -y * (s >= 0 ? 1 / (1 + exp(-s)) : exp(s) / (1 + exp(s)));
    return 0;
}
static int my_bounds(void *user, double mb, double yb, double *d1, double *d2)
{
    (void)user;
    (void)mb;
    *d1 = yb;
    *d2 = yb * yb / 4;
    return 0;
}
static void my_release(void *user) { ((struct uphi *)user)->releases++; }
static const dpdo_loss_type user_logistic = {sizeof(dpdo_loss_type), "my-logistic", my_logistic,
                                             NULL, NULL, my_bounds, NULL, my_release};

/* batch kind: squared loss of an affine model x = (w, b) of dimension D+1 */
struct ubatch {
    int fail, releases;
};
static int my_batch(void *user, const double *x, int64_t dim, const int64_t *rows, int64_t m,
                    double *loss_sum, double *grad_acc)
{
    struct ubatch *u = user;
    if (u->fail) return u->fail;
    if (dim != D + 1) return 99;
    double s = 0;
    for (int64_t k = 0; k < m; k++) {
        int64_t r = rows[k];
        double mg = x[D];
        for (int j = 0; j < D; j++) mg += X[r * D + j] * x[j];
        double res = mg - Y[r];
        s += 0.5 * res * res;
        if (grad_acc) {
            for (int j = 0; j < D; j++) grad_acc[j] += res * X[r * D + j];
            grad_acc[D] += res;
        }
    }
    *loss_sum = s;
    return 0;
}
static void my_brelease(void *user) { ((struct ubatch *)user)->releases++; }
static const dpdo_loss_type user_batch = {sizeof(dpdo_loss_type), "affine-squared", NULL, my_batch,
                                          NULL, NULL, NULL, my_brelease};

/* model kind: the Rosenbrock function (nonconvex) */
static int rosen(void *user, const double *x, int64_t dim, double *v, double *g)
{
    int *fail = user;
    if (*fail) return *fail;
    (void)dim;
    double a = 1 - x[0], b = x[1] - x[0] * x[0];
    *v = a * a + 100 * b * b;
    if (g) {
        g[0] = -2 * a - 400 * x[0] * b;
        g[1] = 200 * b;
    }
    return 0;
}
static int rosen_consts(void *user, double *l, double *s)
{
    (void)user;
    *l = INFINITY;
    *s = INFINITY;
    return 0;
}
static const dpdo_loss_type user_model = {sizeof(dpdo_loss_type), "rosenbrock", NULL, NULL, rosen,
                                          NULL, rosen_consts, NULL};

/* One sampled row (idx of length 1; DP-DDA's and DO-ADP's batch of 1) takes a one-pass kernel
 * (zeroing, gradient and finiteness test together): bit for bit the general path, which a shard
 * of that one row with idx NULL still takes (d = 37: not the 8-lane short-row kernel). Rows
 * with zeros and both signs of the coefficient: 0 + (-0) must stay +0. Dense and CSR, hinge,
 * squared, a user phi, with and without clipping; an overflowing gradient is E_NUMERIC on both. */
static void one_row_same_bits(void)
{
    enum { R = 12, DL = 37 };
    static double Xl[R * DL], Yl[R];
    static int64_t rp[R + 1];
    static int32_t ci[R * DL];
    static double va[R * DL];
    for (int i = 0; i < R; i++) {
        for (int j = 0; j < DL; j++) {
            double v = urand() < 0.4 ? 0.0 : nrand();
            if (i == R - 1 && j % 3 == 0) v = 1e300; /* the overflow row */
            Xl[i * DL + j] = v;
        }
        Yl[i] = i % 2 ? 1.0 : -1.0;
    }
    dpdo_dataset *dss[2] = {NULL, NULL};
    CHECK_EQ(dpdo_dataset_create(&dss[0]), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_dense(dss[0], R, DL, Xl, Yl, DPDO_COPY), DPDO_OK);
    dss[1] = csr_of(Xl, Yl, R, DL, rp, ci, va);
    struct uphi u = {0, 0, 0};
    dpdo_loss *ls[3] = {NULL, NULL, NULL};
    CHECK_EQ(dpdo_loss_create(&ls[0], dpdo_loss_type_find("hinge"), NULL, DL), DPDO_OK);
    CHECK_EQ(dpdo_loss_create(&ls[1], dpdo_loss_type_find("squared"), NULL, DL), DPDO_OK);
    CHECK_EQ(dpdo_loss_create(&ls[2], &user_logistic, &u, DL), DPDO_OK);
    int negzero_rows = 0, numeric = 0;
    for (int di = 0; di < 2; di++) {
        dpdo_shard *all = NULL;
        CHECK_EQ(dpdo_shard_create_range(&all, dss[di], 0, R), DPDO_OK);
        for (int li = 0; li < 3; li++)
            for (int c = 0; c < 3; c++) {
                double clip = c == 0 ? 0.0 : c == 1 ? 0.3 : INFINITY;
                for (int64_t r = 0; r < R; r++) {
                    dpdo_shard *one = NULL;
                    CHECK_EQ(dpdo_shard_create_range(&one, dss[di], r, 1), DPDO_OK);
                    double x[DL], g1[DL], g2[DL], v1 = 0, v2 = 0;
                    for (int j = 0; j < DL; j++) x[j] = (r % 3 == 0 ? 0.05 : 1.0) * nrand();
                    int64_t n1 = -1, n2 = -2;
                    memset(g1, 0x55, sizeof g1);
                    memset(g2, 0x55, sizeof g2);
                    int rc1 = dpdo_loss_eval(ls[li], all, x, DL, &r, 1, clip, &v1, g1, &n1);
                    int rc2 = dpdo_loss_eval(ls[li], one, x, DL, NULL, 0, clip, &v2, g2, &n2);
                    CHECK_EQ(rc1, rc2);
                    if (rc1 == DPDO_OK) {
                        CHECK(memcmp(g1, g2, sizeof g1) == 0);
                        CHECK(memcmp(&v1, &v2, sizeof v1) == 0);
                        CHECK_EQ(n1, n2);
                        int negz = 0, negcoef = 0;
                        for (int j = 0; j < DL; j++) {
                            negz |= g1[j] == 0.0 && signbit(g1[j]);
                            if (Xl[r * DL + j] != 0.0 && g1[j] != 0.0 && g1[j] / Xl[r * DL + j] < 0)
                                negcoef = 1;
                        }
                        CHECK(!negz); /* 0 + (-0) = +0 */
                        negzero_rows += negcoef; /* a negative coefficient times 0 is -0 */
                    } else {
                        CHECK_EQ(rc1, DPDO_E_NUMERIC);
                        numeric++;
                    }
                    dpdo_shard_destroy(one);
                }
            }
        dpdo_shard_destroy(all);
    }
    CHECK(negzero_rows > 10); /* the sign-of-zero case was exercised */
    CHECK(numeric > 0);       /* and the non-finite gradient */
    for (int li = 0; li < 3; li++) dpdo_loss_destroy(ls[li]);
    dpdo_dataset_destroy(dss[0]);
    dpdo_dataset_destroy(dss[1]);
}

static void user_phi_kind(void)
{
    dpdo_dataset *ds = csr_ds();
    dpdo_shard *sh = NULL;
    CHECK_EQ(dpdo_shard_create_range(&sh, ds, 0, N), DPDO_OK);
    struct uphi u = {0, 0, 0};
    dpdo_loss *ul = NULL, *bl = mkloss("logistic");
    CHECK_EQ(dpdo_loss_create(&ul, &user_logistic, &u, D), DPDO_OK);
    double x[D], g1[D], g2[D], v1, v2;
    for (int j = 0; j < D; j++) x[j] = nrand();
    int64_t c1, c2;
    CHECK_EQ(dpdo_loss_eval(ul, sh, x, D, NULL, 0, 0.4, &v1, g1, &c1), DPDO_OK);
    CHECK_EQ(dpdo_loss_eval(bl, sh, x, D, NULL, 0, 0.4, &v2, g2, &c2), DPDO_OK);
    CHECK_NEAR(v1, v2, 1e-15);
    for (int j = 0; j < D; j++) CHECK_NEAR(g1[j], g2[j], 1e-15);
    CHECK_EQ(c1, c2);
    double L;
    CHECK_EQ(dpdo_loss_smoothness(ul, sh, 1.0, &L), DPDO_OK);
    double L2;
    dpdo_loss_smoothness(bl, sh, 1.0, &L2);
    CHECK(L == L2);
    /* failure in the 5th call: E_CALLBACK, code quoted, outputs untouched */
    u.calls = 0;
    u.fail = 5;
    double keep[D], vk = 123.0;
    for (int j = 0; j < D; j++) keep[j] = g1[j] = 42.0;
    CHECK_EQ(dpdo_loss_eval(ul, sh, x, D, NULL, 0, 0.0, &vk, g1, NULL), DPDO_E_CALLBACK);
    CHECK_STR_CONTAINS(dpdo_loss_errmsg(ul), "returned 7");
    CHECK_STR_CONTAINS(dpdo_loss_errmsg(ul), "my-logistic");
    CHECK(vk == 123.0);
    CHECK(memcmp(keep, g1, sizeof keep) == 0);
    CHECK_EQ(dpdo_loss_phi(ul, 0.3, 1.0, &vk, NULL), DPDO_E_CALLBACK);
    u.fail = 0;
    CHECK_EQ(dpdo_loss_eval(ul, sh, x, D, NULL, 0, 0.0, &v1, g1, NULL), DPDO_OK);
    CHECK_NEAR(v1, v2, 1e-15);
    CHECK_EQ(u.releases, 0);
    dpdo_loss_destroy(ul);
    CHECK_EQ(u.releases, 1);
    dpdo_loss_destroy(bl);
    CHECK(dpdo_loss_type_next(&user_logistic) == NULL); /* not a built-in */
    /* phi type without bounds: constants unsupported */
    dpdo_loss_type nb = user_logistic;
    nb.phi_bounds = NULL;
    nb.release = NULL;
    CHECK_EQ(dpdo_loss_create(&ul, &nb, &u, D), DPDO_OK);
    CHECK_EQ(dpdo_loss_lipschitz(ul, sh, 1.0, &L), DPDO_E_UNSUPPORTED);
    dpdo_loss_destroy(ul);
    CHECK_EQ(u.releases, 1);
    dpdo_shard_destroy(sh);
    dpdo_dataset_destroy(ds);
}

static void user_batch_kind(void)
{
    dpdo_dataset *ds = dense_ds();
    dpdo_shard *sh = NULL;
    CHECK_EQ(dpdo_shard_create_range(&sh, ds, 0, N), DPDO_OK);
    struct ubatch u = {0, 0};
    dpdo_loss *l = NULL;
    CHECK_EQ(dpdo_loss_create(&l, &user_batch, &u, D + 1), DPDO_OK); /* dim != features */
    CHECK_EQ(dpdo_loss_kind(l), DPDO_LOSS_KIND_BATCH);
    double x[D + 1], g[D + 1], v;
    for (int j = 0; j <= D; j++) x[j] = 0.5 * nrand();
    CHECK_EQ(dpdo_loss_eval(l, sh, x, D + 1, NULL, 0, 0.0, &v, g, NULL), DPDO_OK);
    /* value against the built-in squared loss with b folded into the labels */
    double vn = 0;
    for (int i = 0; i < N; i++) {
        double mg = x[D];
        for (int j = 0; j < D; j++) mg += X[i * D + j] * x[j];
        vn += 0.5 * (mg - Y[i]) * (mg - Y[i]) / N;
    }
    CHECK_NEAR(v, vn, 1e-13);
    for (int j = 0; j <= D; j++) {
        double xp[D + 1], fp, fm;
        memcpy(xp, x, sizeof x);
        xp[j] += 1e-6;
        dpdo_loss_eval(l, sh, xp, D + 1, NULL, 0, 0.0, &fp, NULL, NULL);
        xp[j] -= 2e-6;
        dpdo_loss_eval(l, sh, xp, D + 1, NULL, 0, 0.0, &fm, NULL, NULL);
        CHECK_NEAR((fp - fm) / 2e-6, g[j], 1e-7);
    }
    /* clipping per sample (the callback is called with m = 1) */
    int64_t idx[5] = {1, 2, 3, 5, 8}, ncl;
    double gc[D + 1], gs[D + 1] = {0};
    CHECK_EQ(dpdo_loss_eval(l, sh, x, D + 1, idx, 5, 0.2, NULL, gc, &ncl), DPDO_OK);
    int64_t nsum = 0;
    for (int k = 0; k < 5; k++) {
        double g1[D + 1], nr = 0;
        int64_t n1;
        dpdo_loss_eval(l, sh, x, D + 1, &idx[k], 1, 0.2, NULL, g1, &n1);
        for (int j = 0; j <= D; j++) nr += g1[j] * g1[j], gs[j] += g1[j] / 5;
        CHECK(sqrt(nr) <= 0.2);
        nsum += n1;
    }
    CHECK_EQ(ncl, nsum);
    CHECK(ncl > 0);
    for (int j = 0; j <= D; j++) CHECK_NEAR(gc[j], gs[j], 1e-14);
    double L;
    CHECK_EQ(dpdo_loss_lipschitz(l, sh, 1.0, &L), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_loss_lipschitz(l, NULL, 1.0, &L), DPDO_E_UNSUPPORTED);
    /* failing batch callback */
    u.fail = -12;
    double keep = 5.0;
    CHECK_EQ(dpdo_loss_eval(l, sh, x, D + 1, NULL, 0, 0.0, &keep, g, NULL), DPDO_E_CALLBACK);
    CHECK_STR_CONTAINS(dpdo_loss_errmsg(l), "returned -12");
    CHECK(keep == 5.0);
    CHECK_EQ(dpdo_loss_eval(l, sh, x, D + 1, idx, 2, 1.0, &keep, g, NULL), DPDO_E_CALLBACK);
    CHECK_STR_CONTAINS(dpdo_loss_errmsg(l), "dataset row 1");
    u.fail = 0;
    dpdo_loss_destroy(l);
    CHECK_EQ(u.releases, 1);
    dpdo_shard_destroy(sh);
    dpdo_dataset_destroy(ds);
}

static void user_model_kind(void)
{
    int fail = 0;
    dpdo_loss *l = NULL;
    CHECK_EQ(dpdo_loss_create(&l, &user_model, &fail, 2), DPDO_OK);
    CHECK_EQ(dpdo_loss_kind(l), DPDO_LOSS_KIND_MODEL);
    double x[2] = {-1.2, 1.0}, g[2], v;
    CHECK_EQ(dpdo_loss_eval(l, NULL, x, 2, NULL, 0, 0.0, &v, g, NULL), DPDO_OK);
    CHECK_NEAR(v, 24.2, 1e-12);
    for (int j = 0; j < 2; j++) {
        double xp[2] = {x[0], x[1]}, fp, fm;
        xp[j] += 1e-6;
        dpdo_loss_eval(l, NULL, xp, 2, NULL, 0, 0.0, &fp, NULL, NULL);
        xp[j] -= 2e-6;
        dpdo_loss_eval(l, NULL, xp, 2, NULL, 0, 0.0, &fm, NULL, NULL);
        CHECK_NEAR((fp - fm) / 2e-6, g[j], 1e-5);
    }
    int64_t idx[1] = {0};
    CHECK_EQ(dpdo_loss_eval(l, NULL, x, 2, idx, 1, 0.0, &v, g, NULL), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_loss_eval(l, NULL, x, 2, NULL, 0, 1.0, &v, g, NULL), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_loss_phi(l, 0.0, 1.0, &v, NULL), DPDO_E_UNSUPPORTED);
    double L, S;
    CHECK_EQ(dpdo_loss_lipschitz(l, NULL, 1.0, &L), DPDO_OK);
    CHECK_EQ(dpdo_loss_smoothness(l, NULL, 1.0, &S), DPDO_OK);
    CHECK(isinf(L) && isinf(S));
    fail = 3;
    CHECK_EQ(dpdo_loss_eval(l, NULL, x, 2, NULL, 0, 0.0, &v, g, NULL), DPDO_E_CALLBACK);
    CHECK_STR_CONTAINS(dpdo_loss_errmsg(l), "model callback returned 3");
    dpdo_loss_destroy(l);
}

static void bad_input(void)
{
    dpdo_dataset *ds = dense_ds();
    dpdo_shard *sh = NULL;
    CHECK_EQ(dpdo_shard_create_range(&sh, ds, 0, 10), DPDO_OK);
    dpdo_loss *l = (dpdo_loss *)1;
    const dpdo_loss_type *lg = dpdo_loss_type_find("logistic");
    int dummy;
    CHECK_EQ(dpdo_loss_create(NULL, lg, NULL, D), DPDO_E_INVAL);
    CHECK_EQ(dpdo_loss_create(&l, NULL, NULL, D), DPDO_E_INVAL);
    CHECK(l == NULL);
    CHECK_EQ(dpdo_loss_create(&l, lg, NULL, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_loss_create(&l, lg, &dummy, D), DPDO_E_INVAL);
    dpdo_loss_type two = user_logistic;
    two.batch = my_batch; /* two kinds */
    CHECK_EQ(dpdo_loss_create(&l, &two, NULL, D), DPDO_E_INVAL);
    dpdo_loss_type none = user_logistic;
    none.phi = NULL;
    CHECK_EQ(dpdo_loss_create(&l, &none, NULL, D), DPDO_E_INVAL);
    dpdo_loss_type noname = user_logistic;
    noname.name = NULL;
    CHECK_EQ(dpdo_loss_create(&l, &noname, NULL, D), DPDO_E_INVAL);
    dpdo_loss_type old = user_logistic;
    old.struct_size = 16;
    CHECK_EQ(dpdo_loss_create(&l, &old, NULL, D), DPDO_E_VERSION);
    CHECK(l == NULL);

    l = mkloss("squared");
    double x[D] = {0}, g[D], v, xn[D] = {0};
    xn[3] = NAN;
    int64_t bad_idx[2] = {0, 10}, neg_idx[1] = {-1}, ok_idx[1] = {2};
    CHECK_EQ(dpdo_loss_eval(NULL, sh, x, D, NULL, 0, 0, &v, g, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_loss_eval(l, NULL, x, D, NULL, 0, 0, &v, g, NULL), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_loss_errmsg(l), "shard is NULL");
    CHECK_EQ(dpdo_loss_eval(l, sh, NULL, D, NULL, 0, 0, &v, g, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_loss_eval(l, sh, x, D - 1, NULL, 0, 0, &v, g, NULL), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_loss_errmsg(l), "dimension");
    CHECK_EQ(dpdo_loss_eval(l, sh, xn, D, NULL, 0, 0, &v, g, NULL), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_loss_errmsg(l), "x[3] is NaN");
    CHECK_EQ(dpdo_loss_eval(l, sh, x, D, bad_idx, 2, 0, &v, g, NULL), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_loss_errmsg(l), "idx[1] = 10");
    CHECK_EQ(dpdo_loss_eval(l, sh, x, D, neg_idx, 1, 0, &v, g, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_loss_eval(l, sh, x, D, ok_idx, 0, 0, &v, g, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_loss_eval(l, sh, x, D, NULL, 3, 0, &v, g, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_loss_eval(l, sh, x, D, NULL, 0, -1.0, &v, g, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_loss_eval(l, sh, x, D, NULL, 0, NAN, &v, g, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_loss_eval(l, sh, x, D, NULL, 0, 0, NULL, NULL, NULL), DPDO_OK);
    /* a loss whose dimension differs from the shard's features */
    dpdo_loss *l3 = NULL;
    CHECK_EQ(dpdo_loss_create(&l3, dpdo_loss_type_find("hinge"), NULL, 3), DPDO_OK);
    CHECK_EQ(dpdo_loss_eval(l3, sh, x, 3, NULL, 0, 0, &v, g, NULL), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_loss_errmsg(l3), "features");
    dpdo_loss_destroy(l3);
    /* huge x: non-finite loss is E_NUMERIC */
    double xh[D];
    for (int j = 0; j < D; j++) xh[j] = 1e200;
    CHECK_EQ(dpdo_loss_eval(l, sh, xh, D, NULL, 0, 0, &v, g, NULL), DPDO_E_NUMERIC);
    /* phi */
    CHECK_EQ(dpdo_loss_phi(NULL, 0, 1, &v, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_loss_phi(l, NAN, 1, &v, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_loss_phi(l, 0, INFINITY, &v, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_loss_phi(l, 1e200, -1e200, &v, NULL), DPDO_E_NUMERIC);
    /* constants */
    double L;
    CHECK_EQ(dpdo_loss_lipschitz(NULL, sh, 1, &L), DPDO_E_INVAL);
    CHECK_EQ(dpdo_loss_lipschitz(l, sh, 1, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_loss_lipschitz(l, NULL, 1, &L), DPDO_E_INVAL);
    CHECK_EQ(dpdo_loss_lipschitz(l, sh, 0, &L), DPDO_E_INVAL);
    CHECK_EQ(dpdo_loss_lipschitz(l, sh, NAN, &L), DPDO_E_INVAL);
    CHECK_EQ(dpdo_loss_smoothness(NULL, sh, 1, &L), DPDO_E_INVAL);
    CHECK_EQ(dpdo_loss_smoothness(l, sh, -1, &L), DPDO_E_INVAL);
    CHECK_EQ(dpdo_loss_smoothness(l, sh, 1, NULL), DPDO_E_INVAL);
    /* accessors */
    CHECK(strcmp(dpdo_loss_errmsg(NULL), "dpdo_loss_errmsg: loss is NULL") == 0);
    CHECK(strcmp(dpdo_loss_name(NULL), "(null)") == 0);
    CHECK(strcmp(dpdo_loss_name(l), "squared") == 0);
    CHECK_EQ(dpdo_loss_dim(NULL), 0);
    CHECK_EQ(dpdo_loss_dim(l), D);
    CHECK_EQ(dpdo_loss_kind(NULL), -1);
    CHECK(strcmp(dpdo_loss_type_name(NULL), "(null)") == 0);
    dpdo_loss_destroy(l);
    dpdo_loss_destroy(NULL);
    dpdo_shard_destroy(sh);
    dpdo_dataset_destroy(ds);
}

static void oom_create(void)
{
    struct uphi u = {0, 0, 0};
    for (int which = 0; which < 2; which++) {
        int ok = 0;
        for (long f = 0; f < 10 && !ok; f++) {
            dpdo_loss *l = (dpdo_loss *)1;
            dpdo__fault_arm(f);
            int rc = which == 0 ? dpdo_loss_create(&l, dpdo_loss_type_find("hinge"), NULL, 100)
                                : dpdo_loss_create(&l, &user_logistic, &u, 100);
            dpdo__fault_arm(-1);
            if (rc == DPDO_OK) {
                ok = 1;
                CHECK(f >= 2); /* two allocations */
                dpdo_loss_destroy(l);
            } else {
                CHECK_EQ(rc, DPDO_E_NOMEM);
                CHECK(l == NULL);
            }
        }
        CHECK(ok);
    }
    CHECK_EQ(u.releases, 1); /* only the successful create's destroy released */
}

int main(void)
{
    make_data();
    RUN(types_listed);
    RUN(phi_values);
    RUN(shard_matches_naive_and_fd);
    RUN(minibatch_and_clipping);
    RUN(constants_from_data);
    RUN(user_phi_kind);
    RUN(one_row_same_bits);
    RUN(user_batch_kind);
    RUN(user_model_kind);
    RUN(bad_input);
    RUN(oom_create);
    return h_finish();
}
