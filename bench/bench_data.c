/* SPDX-License-Identifier: BSD-3-Clause */
/* Data-layer benchmark: STREAM-like triad bandwidth, dense and sparse
 * full-gradient throughput of the fused kernel (GB/s of matrix data read),
 * and LIBSVM parse speed. One run prints "data.<name> <value>" lines.
 * Environment: DPDO_BENCH_SMALL=1 shrinks everything (smoke test);
 * DPDO_BENCH_DENSE_N overrides the dense row count (default 100000). */
#include <blis.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "dpdo/dataset.h"
#include "dpdo/status.h"
#include "data/data_impl.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double logistic_phi(const void *ctx, double m, double y, double *loss)
{
    (void)ctx;
    double z = -y * m;
    *loss = z > 0 ? z + log1p(exp(-z)) : log1p(exp(z));
    return -y / (1.0 + exp(-z));
}

static double triad(size_t n, int reps)
{
    double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double)),
           *c = malloc(n * sizeof(double));
    if (!a || !b || !c) return 0;
    for (size_t i = 0; i < n; i++) {
        a[i] = 0;
        b[i] = 1.0 + (double)(i & 7);
        c[i] = 2.0;
    }
    double best = 1e30, s = 3.0;
    for (int r = 0; r < reps; r++) {
        double t = now();
        for (size_t i = 0; i < n; i++) a[i] = b[i] + s * c[i];
        t = now() - t;
        if (t < best) best = t;
    }
    volatile double sink = a[n / 2];
    (void)sink;
    free(a);
    free(b);
    free(c);
    return 24.0 * (double)n / best / 1e9;
}

/* best-of-reps time of one full gradient pass */
static double grad_time(dpdo_dataset *ds, const double *w, double *g, int reps)
{
    double best = 1e30;
    int64_t n = dpdo_dataset_rows(ds), d = dpdo_dataset_features(ds);
    for (int r = 0; r < reps; r++) {
        memset(g, 0, (size_t)d * sizeof(double));
        double loss;
        int64_t ncl;
        double t = now();
        dpdo__lin_grad(ds, NULL, n, w, logistic_phi, NULL, 0.0, 1.0 / (double)n, g, &loss, &ncl);
        t = now() - t;
        if (t < best) best = t;
    }
    return best;
}

/* the same gradient with BLIS level-1 calls per row (ddotv + daxpyv) */
static double grad_time_blis1(dpdo_dataset *ds, const double *w, double *g, int reps)
{
    struct dpdo_dataset *D = ds;
    double best = 1e30;
    dim_t d = (dim_t)D->d;
    for (int r = 0; r < reps; r++) {
        memset(g, 0, (size_t)d * sizeof(double));
        double t = now();
        for (int64_t i = 0; i < D->n; i++) {
            double m, loss;
            double *x = (double *)(D->X + (size_t)i * (size_t)d);
            bli_ddotv(BLIS_NO_CONJUGATE, BLIS_NO_CONJUGATE, d, x, 1, (double *)w, 1, &m);
            double c = logistic_phi(NULL, m, D->y[i], &loss) / (double)D->n;
            bli_daxpyv(BLIS_NO_CONJUGATE, d, &c, x, 1, g, 1);
        }
        t = now() - t;
        if (t < best) best = t;
    }
    return best;
}

/* two passes with BLIS dgemv on row blocks: margins = X_b w, then
 * g += X_b^T c. Blocks of B rows stay in L2 between the two calls. */
static double grad_time_gemv(dpdo_dataset *ds, const double *w, double *g, int reps, int64_t B)
{
    struct dpdo_dataset *D = ds;
    double best = 1e30;
    double *m = malloc((size_t)B * sizeof(double));
    dim_t d = (dim_t)D->d;
    for (int r = 0; r < reps; r++) {
        memset(g, 0, (size_t)d * sizeof(double));
        double t = now();
        for (int64_t i0 = 0; i0 < D->n; i0 += B) {
            dim_t nb = (dim_t)(D->n - i0 < B ? D->n - i0 : B);
            double one = 1.0, zero = 0.0;
            double *Xb = (double *)(D->X + (size_t)i0 * (size_t)d);
            bli_dgemv(BLIS_NO_TRANSPOSE, BLIS_NO_CONJUGATE, nb, d, &one, Xb, d, 1, (double *)w, 1,
                      &zero, m, 1);
            for (dim_t k = 0; k < nb; k++) {
                double loss;
                m[k] = logistic_phi(NULL, m[k], D->y[i0 + k], &loss) / (double)D->n;
            }
            bli_dgemv(BLIS_TRANSPOSE, BLIS_NO_CONJUGATE, nb, d, &one, Xb, d, 1, m, 1, &one, g, 1);
        }
        t = now() - t;
        if (t < best) best = t;
    }
    free(m);
    return best;
}

int main(void)
{
    const char *sm = getenv("DPDO_BENCH_SMALL");
    int small = sm && *sm && *sm != '0';
    const char *dn = getenv("DPDO_BENCH_DENSE_N");

    /* 1. triad over 3 x 160 MB (>> any cache) */
    size_t tn = small ? (size_t)1 << 20 : (size_t)20 << 20;
    double tri = triad(tn, small ? 3 : 10);
    printf("data.triad_start_GBps %.2f\n", tri);
    fflush(stdout);

    /* 2. dense full gradient, epsilon-like */
    dpdo_dataset *ds = NULL;
    dpdo_dataset_create(&ds);
    dpdo_generate_options go;
    dpdo_generate_options_init(&go, sizeof go);
    go.n = small ? 2000 : (dn ? atoll(dn) : 100000);
    go.d = 2000;
    go.seed = 1;
    double t0 = now();
    int rc = dpdo_dataset_generate(ds, "epsilon-like", &go);
    if (rc) {
        fprintf(stderr, "generate: %s\n", dpdo_dataset_errmsg(ds));
        return 1;
    }
    printf("data.dense_generate_s %.2f  # epsilon-like %lld x %lld\n", now() - t0,
           (long long)go.n, (long long)go.d);
    double *w = malloc(2000 * sizeof(double)), *g = malloc(2000 * sizeof(double));
    for (int j = 0; j < 2000; j++) w[j] = 0.01 * sin((double)j);
    double bytes = (double)go.n * (double)go.d * 8.0;
    /* interleave the variants so that load from other processes hits all alike */
    double tf = 1e30, tb1 = 1e30, tg32 = 1e30, tg1k = 1e30, t;
    for (int r = 0; r < (small ? 2 : 4); r++) {
        t = grad_time(ds, w, g, 1);
        tf = t < tf ? t : tf;
        t = grad_time_blis1(ds, w, g, 1);
        tb1 = t < tb1 ? t : tb1;
        t = grad_time_gemv(ds, w, g, 1, 32);
        tg32 = t < tg32 ? t : tg32;
        t = grad_time_gemv(ds, w, g, 1, 1024);
        tg1k = t < tg1k ? t : tg1k;
    }
    double gbs = bytes / tf / 1e9;
    printf("data.dense_rows %lld\n", (long long)go.n);
    printf("data.dense_grad_GBps %.2f\n", gbs);
    printf("data.dense_grad_blis_dotv_axpyv_GBps %.2f\n", bytes / tb1 / 1e9);
    printf("data.dense_grad_blis_gemv_block32_GBps %.2f\n", bytes / tg32 / 1e9);
    printf("data.dense_grad_blis_gemv_block1024_GBps %.2f\n", bytes / tg1k / 1e9);
    fflush(stdout);

    /* 3. LIBSVM parse: write the epsilon-like rows with 6 significant digits
     * (like the distributed epsilon file) until ~100 MB */
    const char *path = "/tmp/dpdo_bench_epsilon.svm";
    FILE *f = fopen(path, "wb");
    struct dpdo_dataset *D = ds;
    double target = small ? 4e6 : 100e6;
    int64_t rows = 0;
    long fsize = 0;
    if (f) {
        for (int64_t i = 0; i < D->n && fsize < target; i++, rows++) {
            fsize += fprintf(f, "%s", D->y[i] > 0 ? "+1" : "-1");
            for (int64_t j = 0; j < D->d; j++)
                fsize += fprintf(f, " %lld:%.6g", (long long)j + 1, D->X[i * D->d + j]);
            fsize += fprintf(f, "\n");
        }
        fclose(f);
    }
    dpdo_dataset_destroy(ds);
    dpdo_dataset *ps = NULL;
    dpdo_dataset_create(&ps);
    double best = 1e30;
    for (int r = 0; r < (small ? 2 : 3); r++) {
        t = now();
        rc = dpdo_dataset_load_libsvm(ps, path, NULL);
        t = now() - t;
        if (rc) {
            fprintf(stderr, "load: %s\n", dpdo_dataset_errmsg(ps));
            return 1;
        }
        if (t < best) best = t;
    }
    printf("data.libsvm_file_MB %.1f  # %lld rows x 2000, %%.6g values\n", (double)fsize / 1e6,
           (long long)rows);
    printf("data.libsvm_parse_MBps %.1f\n", (double)fsize / best / 1e6);
    /* parse only (file image already in memory) */
    char *buf;
    size_t len;
    char err[256];
    if (dpdo__read_file(path, DPDO__READ_ANY, NULL, &buf, &len, err) == 0) {
        best = 1e30;
        for (int r = 0; r < (small ? 2 : 3); r++) {
            t = now();
            dpdo__parse_libsvm(ps, path, buf, len, NULL);
            t = now() - t;
            if (t < best) best = t;
        }
        printf("data.libsvm_parse_inmemory_MBps %.1f\n", (double)len / best / 1e6);
        dpdo__free(buf);
    }
    remove(path);
    dpdo_dataset_destroy(ps);
    fflush(stdout);

    /* 4. sparse rcv1-like full gradient */
    dpdo_dataset *sp = NULL;
    dpdo_dataset_create(&sp);
    dpdo_generate_options_init(&go, sizeof go);
    go.n = small ? 5000 : 200000;
    go.d = 47236;
    go.density = 0.0016;
    t0 = now();
    rc = dpdo_dataset_generate(sp, "rcv1-like", &go);
    if (rc) {
        fprintf(stderr, "generate: %s\n", dpdo_dataset_errmsg(sp));
        return 1;
    }
    printf("data.sparse_generate_s %.2f  # rcv1-like %lld x %lld, nnz %lld\n", now() - t0,
           (long long)go.n, (long long)go.d, (long long)dpdo_dataset_nnz(sp));
    double *ws = malloc(47236 * sizeof(double)), *gs = malloc(47236 * sizeof(double));
    for (int j = 0; j < 47236; j++) ws[j] = 0.01 * sin((double)j);
    int64_t nnz = dpdo_dataset_nnz(sp);
    double sbytes = (double)nnz * 12.0 + (double)(go.n + 1) * 8.0;
    t = grad_time(sp, ws, gs, small ? 2 : 5);
    printf("data.sparse_grad_GBps %.2f\n", sbytes / t / 1e9);
    printf("data.sparse_grad_Mnnz_per_s %.1f\n", (double)nnz / t / 1e6);
    dpdo_dataset_destroy(sp);
    /* the machine is shared: measure the triad again and keep the best */
    double tri2 = triad(tn, small ? 3 : 10);
    if (tri2 > tri) tri = tri2;
    printf("data.triad_GBps %.2f\n", tri);
    printf("data.dense_grad_vs_triad %.2f\n", gbs / tri);
    free(w);
    free(g);
    free(ws);
    free(gs);
    return 0;
}
