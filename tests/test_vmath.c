/* SPDX-License-Identifier: BSD-3-Clause */
/* The built-in logistic loss's exp/log1p (lib/data/vmath_impl.h) against the C library in
 * long double, at their documented bounds (exp <= 1.5 ulp, log1p <= 3 ulp), and the batch
 * kernels against the per-sample path: long dense rows and CSR rows give the per-sample path's
 * bits exactly; short dense rows (d <= 16) give the documented four-partial-sum order exactly,
 * with coefficients equal to dpdo__phi_logistic's, and the same loss value. */
#include <stdint.h>

#include "harness.h"
#include "dpdo/dpdo.h"
#include "data/data_impl.h"
#include "data/vmath_impl.h"
#include "data/kernels_l8_exp.h"
#include "model/model_impl.h"

static double ulps(double a, long double ref)
{
    double r = (double)ref;
    double u = nextafter(r, INFINITY) - r;
    if (u == 0 || !isfinite(u)) u = 4.9406564584124654e-324;
    return (double)(fabsl((long double)a - ref) / u);
}

/* The references' own error, in ulps of the double result: 0 where long double has its 64-bit
 * significand; 1 where it is computed as double (valgrind emulates x87 arithmetic in double, so
 * expl and log1pl are then themselves only about double-accurate). The documented bounds are
 * checked as they stand on real hardware (make check); under such an emulation they are checked
 * with this slack added. Detected at run time (volatile: not folded by the compiler). */
static double ref_slack(void)
{
    volatile long double one = 1.0L, tiny = 0x1p-60L;
    static int said;
    const int wide = one + tiny != one;
    if (!wide && !said++)
        printf("# long double has no extra precision here (an emulator?): ulp bounds + 1\n");
    return wide ? 0.0 : 1.0;
}

static uint64_t st = 88172645463325252ull;
static double unif(void) /* xorshift64, (0, 1) */
{
    st ^= st << 13, st ^= st >> 7, st ^= st << 17;
    return ((double)(st >> 11) + 0.5) * 0x1p-53;
}

static void test_exp_log1p_bounds(void)
{
    int quick = getenv("DPDO_TEST_QUICK") != NULL;
    long n = quick ? 200000 : 2000000;
    double me = 0, ml = 0;
    for (long i = 0; i < n; i++) {
        double x = i % 3 == 0 ? -708.39 * unif() : i % 3 == 1 ? -40.0 * unif() : -unif();
        double u = ulps(dpdo__exp_neg(x), expl((long double)x));
        if (u > me) me = u;
        double e = i % 2 ? unif() : exp(-50.0 * unif());
        double v = ulps(dpdo__log1p01(e), log1pl((long double)e));
        if (v > ml) ml = v;
    }
    CHECK_MSG(me <= 1.5 + ref_slack(), "exp: %.3f ulp", me);
    CHECK_MSG(ml <= 3.0 + ref_slack(), "log1p: %.3f ulp", ml);
    CHECK(me > 0.3); /* the sweep really measured something (a correctly rounded exp is not claimed) */
    /* edges */
    CHECK(dpdo__exp_neg(0.0) == 1.0);
    CHECK(dpdo__exp_neg(-0.0) == 1.0);
    CHECK(dpdo__exp_neg(-708.5) == 0.0);
    CHECK(dpdo__exp_neg(-INFINITY) == 0.0);
    CHECK(isnan(dpdo__exp_neg(NAN)));
    CHECK(dpdo__log1p01(0.0) == 0.0);
    CHECK(ulps(dpdo__log1p01(1.0), log1pl(1.0L)) <= 3.0 + ref_slack());
    CHECK(ulps(dpdo__exp_neg(-708.0), expl(-708.0L)) <= 1.5 + ref_slack());
}

/* The 8-lane kernel's table-driven FMA exp (kernels_l8_exp.h) against expl over 10^7 points (10^6
 * with DPDO_TEST_QUICK): a third uniform on [-708.39, 0], a third on [-40, 0], a third on
 * [-ln2/32, 0] (the polynomial's own range, k = 0). Bound 1.65 ulp (kernels_l8_exp.h: the table
 * entry's rounding and the polynomial's and p's errors, 1.13 x 2^-53 relative, are up to 1.13 ulp,
 * plus 0.5 ulp the final fma; the 2^k scale is exact: results stay >= 2^-1022 down to the clamp
 * at -708.39). Below -708.39 the argument is clamped: the result is exp(-708.39) ~ 2.27e-308
 * there, an absolute error below 2.3e-308. */
static void test_l8_exp_bounds(void)
{
    const long n = getenv("DPDO_TEST_QUICK") != NULL ? 1000000 : 10000000;
    double mx[3] = {0, 0, 0};
    for (long i = 0; i < n; i++) {
        const int part = (int)(i % 3);
        const double x = part == 0 ? -708.39 * unif() : part == 1 ? -40.0 * unif() : -0.021660849392498290 * unif();
        const double u = ulps(dpdo__l8_exp_neg(x), expl((long double)x));
        if (u > mx[part]) mx[part] = u;
    }
    if (getenv("DPDO_TEST_VERBOSE"))
        printf("l8 exp: max %.4f / %.4f / %.4f ulp on [-708.39, 0] / [-40, 0] / [-ln2/32, 0]\n", mx[0], mx[1], mx[2]);
    for (int k = 0; k < 3; k++) {
        CHECK_MSG(mx[k] <= 1.65 + ref_slack(), "l8 exp part %d: %.3f ulp", k, mx[k]);
        CHECK(mx[k] > 0.3); /* measured something: not claimed correctly rounded */
    }
    CHECK(dpdo__l8_exp_neg(-708.39) >= 0x1p-1022); /* the smallest result is normal */
    CHECK(ulps(dpdo__l8_exp_neg(-708.39), expl((long double)-708.39)) <= 1.65 + ref_slack());
    CHECK(dpdo__l8_exp_neg(0.0) == 1.0);
    CHECK(dpdo__l8_exp_neg(-0.0) == 1.0);
    /* the clamp: exp(-708.39) below it, a positive normal number (never 0, Inf or NaN) */
    const double emin = dpdo__l8_exp_neg(-708.39);
    CHECK(emin > 0x1p-1022 && emin < 0x1.2p-1022);
    CHECK(dpdo__l8_exp_neg(-708.4) == emin);
    CHECK(dpdo__l8_exp_neg(-1e300) == emin);
    CHECK(dpdo__l8_exp_neg(-INFINITY) == emin);
    CHECK(dpdo__l8_exp_neg(nextafter(-708.39, 0.0)) >= emin); /* monotone across the clamp */
    CHECK(isnan(dpdo__l8_exp_neg(NAN)));
    CHECK(dpdo__l8_exp_neg(-0x1p-60) == 1.0);
    CHECK(ulps(dpdo__l8_exp_neg(-1.0), expl(-1.0L)) <= 1.65 + ref_slack());
    /* every table entry (x = -j ln2 / 16, k = -j) and a step across each entry boundary */
    for (int j = 0; j <= 64; j++) {
        const long double xl = -(long double)j * 0.693147180559945309417232121458176568L / 16;
        CHECK_MSG(ulps(dpdo__l8_exp_neg((double)xl), expl((long double)(double)xl)) <= 1.65 + ref_slack(), "j %d", j);
        const double xb = (double)(xl - 0.693147180559945309417232121458176568L / 32);
        CHECK_MSG(ulps(dpdo__l8_exp_neg(xb), expl((long double)xb)) <= 1.65 + ref_slack(), "boundary %d", j);
        CHECK(dpdo__l8_exp_neg(nextafter(xb, 0.0)) >= dpdo__l8_exp_neg(xb));
    }
}

/* dataset with n rows of d features (dense or CSR), labels +-1 */
static dpdo_dataset *make(const char *kind, int64_t n, int64_t d, uint64_t seed)
{
    dpdo_dataset *ds = NULL;
    dpdo_generate_options go;
    dpdo_generate_options_init(&go, sizeof go);
    go.n = n, go.d = d, go.seed = seed;
    if (!strcmp(kind, "rcv1-like")) go.density = 0.05;
    CHECK(dpdo_dataset_create(&ds) == DPDO_OK);
    CHECK(dpdo_dataset_generate(ds, kind, &go) == DPDO_OK);
    return ds;
}

static void same_as_per_sample(const char *kind, int64_t d, double clip)
{
    enum { M = 300 };
    dpdo_dataset *ds = make(kind, 2 * M, d, 3);
    int64_t rows[M];
    for (int k = 0; k < M; k++) rows[k] = (k * 7) % (2 * M);
    double *w = calloc((size_t)d, sizeof *w), *g1 = calloc((size_t)d, sizeof *g1), *g2 = calloc((size_t)d, sizeof *g2);
    for (int64_t j = 0; j < d; j++) w[j] = 3.0 * (unif() - 0.5);
    double l1 = 0, l2 = 0;
    int64_t n1 = 0, n2 = 0;
    dpdo__lin_grad(ds, rows, M, w, dpdo__phi_logistic, NULL, clip, 1.0 / M, g1, &l1, &n1);
    CHECK(dpdo__lin_grad_logistic(ds, rows, M, w, clip, 1.0 / M, g2, &l2, &n2) == 1);
    CHECK_MSG(memcmp(g1, g2, (size_t)d * sizeof *g1) == 0, "%s d=%lld: gradients differ", kind, (long long)d);
    CHECK_MSG(l1 == l2, "%s d=%lld: loss %.17g vs %.17g", kind, (long long)d, l1, l2);
    CHECK_EQ(n1, n2);
    if (clip > 0) CHECK(n1 > 0); /* clipping really happened */
    double nrm = 0;
    for (int64_t j = 0; j < d; j++) nrm += g1[j] * g1[j];
    CHECK(nrm > 1e-12);
    free(w), free(g1), free(g2);
    dpdo_dataset_destroy(ds);
}

static void test_long_rows_bitwise(void)
{
    same_as_per_sample("epsilon-like", 50, 0.0);
    same_as_per_sample("epsilon-like", 2000, 0.0);
    same_as_per_sample("epsilon-like", 50, 0.05);
    same_as_per_sample("rcv1-like", 500, 0.0);
}

/* The fused long-row kernels (dpdo__logit_long: AVX-512F blocks of 8 rows with a transposed
 * reduction, AVX2 blocks of 4) against the per-sample path, bit for bit: batch sizes around the
 * block widths, repeated rows, clipping, loss values or not, scale 0 (a value-only call), a model
 * so large that many coefficients are exactly 0 (those rows are skipped), a gradient that starts
 * at -0.0 (a skipped row must not turn it into +0.0). */
static void test_long_rows_fused(void)
{
    static const int64_t DS[] = {17, 23, 50, 64, 71};
    static const int64_t MS[] = {1, 2, 7, 8, 9, 15, 50, 63};
    int ran[3] = {0, 0, 0}, zeros = 0;
    for (int isa = 1; isa <= 2; isa++)
        for (size_t a = 0; a < sizeof DS / sizeof DS[0]; a++) {
            int64_t d = DS[a];
            dpdo_dataset *ds = make("epsilon-like", 97, d, 11 + (uint64_t)d);
            double w[71], g1[71], g2[71];
            int64_t rows[63];
            for (int64_t k = 0; k < 63; k++) rows[k] = (k * 31 + d) % 97;
            rows[5] = rows[3]; /* a repeated row */
            for (int pass = 0; pass < 8; pass++) {
                double big = pass & 4 ? 3000.0 : 3.0, clip = pass & 1 ? 0.05 : 0.0;
                for (int64_t j = 0; j < d; j++) w[j] = big * (unif() - 0.5);
                for (size_t b = 0; b < sizeof MS / sizeof MS[0]; b++) {
                    int64_t m = MS[b];
                    double sc = pass & 2 ? 0.0 : 1.0 / (double)m, l1 = 0, l2 = 0;
                    double *lp = pass == 3 ? NULL : &l2;
                    int64_t n1 = 0, n2 = 0;
                    for (int64_t j = 0; j < d; j++) g1[j] = g2[j] = -0.0;
                    dpdo__lin_grad(ds, rows, m, w, dpdo__phi_logistic, NULL, clip, sc, g1, &l1, &n1);
                    int ok = dpdo__logit_long(ds, rows, m, w, clip, sc, g2, lp, &n2, isa);
                    if (!ok) continue; /* the CPU lacks this instruction set */
                    ran[isa]++;
                    CHECK_MSG(memcmp(g1, g2, (size_t)d * sizeof *g1) == 0,
                              "isa %d d=%lld m=%lld pass %d: gradients differ", isa, (long long)d,
                              (long long)m, pass);
                    if (lp) CHECK_MSG(l1 == l2, "isa %d d=%lld m=%lld: loss %.17g vs %.17g", isa, (long long)d,
                                      (long long)m, l1, l2);
                    CHECK_EQ(n1, n2);
                    for (int64_t k = 0; k < m; k++) {
                        double l, c = dpdo__phi_logistic(NULL, dpdo__row_dot(ds, rows[k], w),
                                                         ds->y[rows[k]], &l);
                        zeros += c == 0.0;
                    }
                }
            }
            dpdo_dataset_destroy(ds);
        }
    CHECK(ran[1] > 0); /* the AVX2 kernel runs on every CPU the library's fused path serves */
    CHECK(zeros > 0);  /* the skip of zero coefficients was exercised */
    if (!__builtin_cpu_supports("avx512f")) printf("# AVX-512F kernel not tested: the CPU lacks it\n");
}

/* d <= 16: coefficient per row = dpdo__phi_logistic's; lane t = row index mod 4 summed in order,
 * then (G0 + G1) + (G2 + G3); loss summed in row order */
static void test_short_rows_order(void)
{
    for (int64_t d = 1; d <= 16; d += 3) {
        enum { M = 250 };
        dpdo_dataset *ds = make("epsilon-like", M, d, 5 + (uint64_t)d);
        int64_t rows[M];
        for (int k = 0; k < M; k++) rows[k] = k;
        double w[16], g[16] = {0}, G[16][4], ref[16] = {0}, loss = 0, lref = 0, x[16];
        memset(G, 0, sizeof G);
        for (int64_t j = 0; j < d; j++) w[j] = 4.0 * (unif() - 0.5);
        double sc = 1.0 / M, y[M];
        dpdo_dataset_get_labels(ds, y, M);
        for (int k = 0; k < M; k++) {
            dpdo_dataset_get_row(ds, k, x, d);
            double m = 0;
            for (int64_t j = 0; j < d; j++) m += x[j] * w[j];
            double l;
            double c = dpdo__phi_logistic(NULL, m, y[k], &l);
            lref += l;
            for (int64_t j = 0; j < d; j++) G[j][k % 4] += (sc * c) * x[j];
        }
        for (int64_t j = 0; j < d; j++) ref[j] = (G[j][0] + G[j][1]) + (G[j][2] + G[j][3]);
        int64_t ncl = 0;
        CHECK(dpdo__lin_grad_logistic(ds, rows, M, w, 0.0, sc, g, &loss, &ncl) == 1);
        CHECK_MSG(memcmp(g, ref, (size_t)d * sizeof *g) == 0, "d=%lld: gradient not in the documented order",
                  (long long)d);
        CHECK_MSG(loss == lref, "d=%lld: loss %.17g vs %.17g", (long long)d, loss, lref);
        double g0[16] = {0};
        CHECK(dpdo__lin_grad_logistic(ds, rows, M, w, 0.0, sc, g0, NULL, NULL) == 1); /* no loss values */
        CHECK(memcmp(g0, g, (size_t)d * sizeof *g) == 0);
        dpdo_dataset_destroy(ds);
    }
}

int main(void)
{
    RUN(test_exp_log1p_bounds);
    RUN(test_l8_exp_bounds);
    RUN(test_long_rows_bitwise);
    RUN(test_long_rows_fused);
    RUN(test_short_rows_order);
    return h_finish();
}
