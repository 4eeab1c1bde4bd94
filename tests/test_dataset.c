/* SPDX-License-Identifier: BSD-3-Clause */
/* Tests of the data layer: datasets from arrays, loaders (LIBSVM, CSV, IDX,
 * gzip), generators, shards and partitions, kernels, out-of-memory paths
 * and bad input for every public function. */
#include <math.h>
#include <stdint.h>
#include <zlib.h>
#include "harness.h"
#include "dpdo/dataset.h"
#include "dpdo/status.h"
#include "data/data_impl.h"
#include "data/vmath_impl.h"
#include "data/kernels_l8_exp.h"

/* ---- helpers ------------------------------------------------------------ */
static char tmpbufs[64][64];
static int ntmp;

static const char *tmp_text(const char *text)
{
    char *b = tmpbufs[ntmp++ % 64];
    return h_tmpfile(b, ".txt", text, strlen(text));
}

static const char *tmp_bytes(const void *data, size_t len, const char *suffix)
{
    char *b = tmpbufs[ntmp++ % 64];
    return h_tmpfile(b, suffix, data, len);
}

/* gzip `len` bytes into a file (name without .gz: detection is by magic) */
static const char *tmp_gz(const void *data, size_t len)
{
    char *b = tmpbufs[ntmp++ % 64];
    if (!h_tmpfile(b, ".dat", "", 0)) return NULL;
    gzFile g = gzopen(b, "wb");
    if (!g) return NULL;
    gzwrite(g, data, (unsigned)len);
    gzclose(g);
    return b;
}

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long s = ftell(f);
    fclose(f);
    return s;
}

static void truncate_file(const char *path, long keep)
{
    FILE *f = fopen(path, "rb");
    char *buf = malloc((size_t)keep);
    size_t got = fread(buf, 1, (size_t)keep, f);
    fclose(f);
    f = fopen(path, "wb");
    fwrite(buf, 1, got, f);
    fclose(f);
    free(buf);
}

static double naive_logistic(const void *ctx, double m, double y, double *loss)
{
    (void)ctx;
    double z = -y * m;
    *loss = z > 0 ? z + log1p(exp(-z)) : log1p(exp(z));
    double s = 1.0 / (1.0 + exp(-z)); /* sigmoid(-y m) */
    return -y * s;
}

/* logistic, but 0 for rows whose label index pattern hits every third call
 * (stateless: uses the margin's bits) */
static double phi_zero3(const void *ctx, double m, double y, double *loss)
{
    double c = naive_logistic(ctx, m, y, loss);
    uint64_t b;
    memcpy(&b, &m, sizeof b);
    return (b >> 7) % 3 == 0 ? 0.0 : c;
}

static dpdo_dataset *new_ds(void)
{
    dpdo_dataset *ds = NULL;
    if (dpdo_dataset_create(&ds) != DPDO_OK) return NULL;
    return ds;
}

/* ---- arrays ------------------------------------------------------------- */
static void test_create_destroy(void)
{
    dpdo_dataset *ds = NULL;
    CHECK_EQ(dpdo_dataset_create(NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_create(&ds), DPDO_OK);
    CHECK(ds != NULL);
    CHECK_EQ(dpdo_dataset_rows(ds), 0);
    CHECK_EQ(dpdo_dataset_features(ds), 0);
    CHECK_EQ(dpdo_dataset_layout(ds), DPDO_LAYOUT_EMPTY);
    CHECK_EQ(dpdo_dataset_nnz(ds), 0);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "");
    dpdo_dataset_destroy(ds);
    dpdo_dataset_destroy(NULL);
    CHECK_EQ(dpdo_dataset_rows(NULL), 0);
    CHECK_EQ(dpdo_dataset_features(NULL), 0);
    CHECK_EQ(dpdo_dataset_layout(NULL), DPDO_LAYOUT_EMPTY);
    CHECK_EQ(dpdo_dataset_nnz(NULL), 0);
    CHECK_EQ(dpdo_dataset_max_row_norm(NULL), 0.0);
    CHECK_EQ(dpdo_dataset_has_classes(NULL), 0);
    CHECK(dpdo_dataset_errmsg(NULL) != NULL);
}

static const double X23[6] = {1, 2, 2, 0, -3, 4};
static const double Y2[2] = {1, -1};

static void test_set_dense(void)
{
    dpdo_dataset *ds = new_ds();
    CHECK_EQ(dpdo_dataset_set_dense(ds, 2, 3, X23, Y2, DPDO_COPY), DPDO_OK);
    CHECK_EQ(dpdo_dataset_rows(ds), 2);
    CHECK_EQ(dpdo_dataset_features(ds), 3);
    CHECK_EQ(dpdo_dataset_layout(ds), DPDO_LAYOUT_DENSE);
    CHECK_EQ(dpdo_dataset_nnz(ds), 6);
    CHECK_NEAR(dpdo_dataset_max_row_norm(ds), 5.0, 0);
    double r[3], nrm, yy[2];
    CHECK_EQ(dpdo_dataset_get_row(ds, 1, r, 3), DPDO_OK);
    CHECK(r[0] == 0 && r[1] == -3 && r[2] == 4);
    CHECK_EQ(dpdo_dataset_get_row_norm(ds, 0, &nrm), DPDO_OK);
    CHECK_NEAR(nrm, 3.0, 0);
    CHECK_EQ(dpdo_dataset_get_labels(ds, yy, 2), DPDO_OK);
    CHECK(yy[0] == 1 && yy[1] == -1);
    /* copy mode really copies */
    struct dpdo_dataset *in = ds;
    CHECK(in->X != X23);
    /* borrow mode keeps the pointer */
    CHECK_EQ(dpdo_dataset_set_dense(ds, 2, 3, X23, Y2, DPDO_BORROW), DPDO_OK);
    CHECK(in->X == X23 && in->y == Y2);
    /* bad input, previous content kept */
    double Xn[6] = {1, 2, 3, 4, NAN, 6};
    CHECK_EQ(dpdo_dataset_set_dense(ds, 2, 3, Xn, Y2, DPDO_COPY), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "row 1, column 1: value is NaN");
    Xn[4] = INFINITY;
    CHECK_EQ(dpdo_dataset_set_dense(ds, 2, 3, Xn, Y2, DPDO_COPY), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "row 1, column 1: value is Inf");
    double yb[2] = {1, NAN};
    CHECK_EQ(dpdo_dataset_set_dense(ds, 2, 3, X23, yb, DPDO_COPY), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "label of row 1 is NaN");
    CHECK_EQ(dpdo_dataset_set_dense(ds, 0, 3, X23, Y2, DPDO_COPY), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_set_dense(ds, 2, 0, X23, Y2, DPDO_COPY), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_set_dense(ds, 2, 3, NULL, Y2, DPDO_COPY), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_set_dense(ds, 2, 3, X23, NULL, DPDO_COPY), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_set_dense(ds, 2, 3, X23, Y2, 7), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_set_dense(ds, INT64_MAX / 2, 5, X23, Y2, DPDO_BORROW), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_set_dense(NULL, 2, 3, X23, Y2, DPDO_COPY), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_rows(ds), 2);
    CHECK(in->X == X23);
    /* accessor errors */
    CHECK_EQ(dpdo_dataset_get_row(ds, 2, r, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_get_row(ds, -1, r, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_get_row(ds, 0, r, 2), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_get_row(ds, 0, NULL, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_get_row(NULL, 0, r, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_get_row_norm(ds, 5, &nrm), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_get_row_norm(ds, 0, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_get_row_norm(NULL, 0, &nrm), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_get_labels(ds, yy, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_get_labels(ds, NULL, 2), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_get_labels(NULL, yy, 2), DPDO_E_INVAL);
    int32_t cl[2];
    CHECK_EQ(dpdo_dataset_get_classes(ds, cl, 2), DPDO_E_STATE);
    CHECK_EQ(dpdo_dataset_get_classes(NULL, cl, 2), DPDO_E_INVAL);
    dpdo_dataset_destroy(ds);
    /* empty dataset */
    ds = new_ds();
    CHECK_EQ(dpdo_dataset_get_row(ds, 0, r, 3), DPDO_E_STATE);
    CHECK_EQ(dpdo_dataset_get_labels(ds, yy, 2), DPDO_E_STATE);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "empty");
    dpdo_dataset_destroy(ds);
}

/* 3 x 5 sparse example: row0 {0:1, 3:2}, row1 {}, row2 {1:-1, 2:0.5, 4:3} */
static const int64_t RP[4] = {0, 2, 2, 5};
static const int32_t CI[5] = {0, 3, 1, 2, 4};
static const double VA[5] = {1, 2, -1, 0.5, 3};
static const double Y3[3] = {1, -1, 1};

static void test_set_csr(void)
{
    dpdo_dataset *ds = new_ds();
    CHECK_EQ(dpdo_dataset_set_csr(ds, 3, 5, RP, CI, VA, Y3, DPDO_COPY), DPDO_OK);
    CHECK_EQ(dpdo_dataset_layout(ds), DPDO_LAYOUT_CSR);
    CHECK_EQ(dpdo_dataset_nnz(ds), 5);
    CHECK_NEAR(dpdo_dataset_max_row_norm(ds), sqrt(1 + 0.25 + 9), 1e-15);
    double r[5];
    CHECK_EQ(dpdo_dataset_get_row(ds, 2, r, 5), DPDO_OK);
    CHECK(r[0] == 0 && r[1] == -1 && r[2] == 0.5 && r[3] == 0 && r[4] == 3);
    CHECK_EQ(dpdo_dataset_get_row(ds, 1, r, 5), DPDO_OK);
    CHECK(r[0] == 0 && r[4] == 0);
    /* validation */
    int32_t ci[5];
    memcpy(ci, CI, sizeof ci);
    ci[4] = 2; /* row 2: 1, 2, 2 duplicate */
    CHECK_EQ(dpdo_dataset_set_csr(ds, 3, 5, RP, ci, VA, Y3, DPDO_COPY), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "row 2: column indices not strictly increasing (2 after 2)");
    ci[4] = 5;
    CHECK_EQ(dpdo_dataset_set_csr(ds, 3, 5, RP, ci, VA, Y3, DPDO_COPY), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "row 2: column index 5 out of range [0, 5)");
    ci[4] = -1;
    CHECK_EQ(dpdo_dataset_set_csr(ds, 3, 5, RP, ci, VA, Y3, DPDO_COPY), DPDO_E_INVAL);
    int64_t rp[4] = {0, 3, 2, 5};
    CHECK_EQ(dpdo_dataset_set_csr(ds, 3, 5, rp, CI, VA, Y3, DPDO_COPY), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "rowptr decreases at row 1");
    int64_t rp2[4] = {1, 2, 2, 5};
    CHECK_EQ(dpdo_dataset_set_csr(ds, 3, 5, rp2, CI, VA, Y3, DPDO_COPY), DPDO_E_INVAL);
    double va[5] = {1, 2, -1, NAN, 3};
    CHECK_EQ(dpdo_dataset_set_csr(ds, 3, 5, RP, CI, va, Y3, DPDO_COPY), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "row 2, column 2: value is NaN");
    CHECK_EQ(dpdo_dataset_set_csr(ds, 3, 5, NULL, CI, VA, Y3, DPDO_COPY), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_set_csr(ds, 3, 5, RP, NULL, VA, Y3, DPDO_COPY), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_set_csr(ds, 3, 5, RP, CI, NULL, Y3, DPDO_COPY), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_set_csr(ds, 3, 5, RP, CI, VA, NULL, DPDO_COPY), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_set_csr(ds, 3, (int64_t)INT32_MAX + 1, RP, CI, VA, Y3, DPDO_COPY), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_set_csr(ds, 0, 5, RP, CI, VA, Y3, DPDO_COPY), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_set_csr(ds, 3, 5, RP, CI, VA, Y3, -1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_set_csr(NULL, 3, 5, RP, CI, VA, Y3, DPDO_COPY), DPDO_E_INVAL);
    /* unchanged */
    CHECK_EQ(dpdo_dataset_layout(ds), DPDO_LAYOUT_CSR);
    CHECK_EQ(dpdo_dataset_nnz(ds), 5);
    /* all-empty rows with NULL arrays */
    int64_t rz[3] = {0, 0, 0};
    CHECK_EQ(dpdo_dataset_set_csr(ds, 2, 4, rz, NULL, NULL, Y2, DPDO_COPY), DPDO_OK);
    CHECK_EQ(dpdo_dataset_nnz(ds), 0);
    CHECK_EQ(dpdo_dataset_set_csr(ds, 3, 5, RP, CI, VA, Y3, DPDO_BORROW), DPDO_OK);
    CHECK(((struct dpdo_dataset *)ds)->val == VA);
    dpdo_dataset_destroy(ds);
}

static void test_classes_binarize(void)
{
    dpdo_dataset *ds = new_ds();
    double X[5] = {1, 2, 3, 4, 5}, y[5] = {0, 0, 0, 0, 0};
    int32_t cls[5] = {0, 3, 4, 3, 7};
    CHECK_EQ(dpdo_dataset_binarize(ds, DPDO_BINARY_EVEN_ODD, 0), DPDO_E_STATE);
    CHECK_EQ(dpdo_dataset_set_classes(ds, cls, 5), DPDO_E_STATE);
    CHECK_EQ(dpdo_dataset_set_dense(ds, 5, 1, X, y, DPDO_BORROW), DPDO_OK);
    CHECK_EQ(dpdo_dataset_binarize(ds, DPDO_BINARY_EVEN_ODD, 0), DPDO_E_STATE);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "no class ids");
    CHECK_EQ(dpdo_dataset_set_classes(ds, cls, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_set_classes(ds, NULL, 5), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_set_classes(NULL, cls, 5), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_set_classes(ds, cls, 5), DPDO_OK);
    CHECK_EQ(dpdo_dataset_has_classes(ds), 1);
    CHECK_EQ(dpdo_dataset_binarize(ds, 5, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_binarize(NULL, 0, 0), DPDO_E_INVAL);
    double out[5];
    CHECK_EQ(dpdo_dataset_binarize(ds, DPDO_BINARY_ONE_VS_REST, 3), DPDO_OK);
    dpdo_dataset_get_labels(ds, out, 5);
    CHECK(out[0] == -1 && out[1] == 1 && out[2] == -1 && out[3] == 1 && out[4] == -1);
    CHECK(y[1] == 0); /* borrowed labels untouched */
    CHECK_EQ(dpdo_dataset_binarize(ds, DPDO_BINARY_EVEN_ODD, 0), DPDO_OK);
    dpdo_dataset_get_labels(ds, out, 5);
    CHECK(out[0] == 1 && out[1] == -1 && out[2] == 1 && out[3] == -1 && out[4] == -1);
    int32_t c2[5];
    CHECK_EQ(dpdo_dataset_get_classes(ds, c2, 5), DPDO_OK);
    CHECK(memcmp(c2, cls, sizeof cls) == 0);
    dpdo_dataset_destroy(ds);
}

/* ---- shards ------------------------------------------------------------- */
static void test_shards(void)
{
    dpdo_dataset *ds = new_ds();
    dpdo_shard *s = NULL, *s2 = NULL;
    int64_t rows[3] = {2, 0, 2};
    CHECK_EQ(dpdo_shard_create(&s, ds, rows, 3), DPDO_E_STATE);
    CHECK(s == NULL);
    CHECK_EQ(dpdo_dataset_set_csr(ds, 3, 5, RP, CI, VA, Y3, DPDO_COPY), DPDO_OK);
    CHECK_EQ(dpdo_shard_create(NULL, ds, rows, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_shard_create(&s, NULL, rows, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_shard_create(&s, ds, NULL, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_shard_create(&s, ds, rows, 0), DPDO_E_INVAL);
    rows[1] = 3;
    CHECK_EQ(dpdo_shard_create(&s, ds, rows, 3), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "rows[1] = 3 out of range [0, 3)");
    rows[1] = 0;
    CHECK_EQ(dpdo_shard_create(&s, ds, rows, 3), DPDO_OK);
    CHECK_EQ(dpdo_shard_rows(s), 3);
    CHECK_EQ(dpdo_shard_row_index(s, 1), 0);
    CHECK_EQ(dpdo_shard_row_index(s, 3), -1);
    CHECK_EQ(dpdo_shard_row_index(NULL, 0), -1);
    CHECK_EQ(dpdo_shard_rows(NULL), 0);
    CHECK(dpdo_shard_errmsg(NULL) != NULL);
    CHECK_EQ(dpdo_shard_create_range(&s2, ds, 1, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_shard_create_range(&s2, ds, -1, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_shard_create_range(&s2, ds, 0, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_shard_create_range(NULL, ds, 0, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_shard_create_range(&s2, NULL, 0, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_shard_create_range(&s2, ds, 1, 2), DPDO_OK);
    int64_t got[3];
    CHECK_EQ(dpdo_shard_get_rows(s2, got, 2), DPDO_OK);
    CHECK(got[0] == 1 && got[1] == 2);
    CHECK_EQ(dpdo_shard_get_rows(s2, got, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_shard_get_rows(s2, NULL, 2), DPDO_E_INVAL);
    CHECK_EQ(dpdo_shard_get_rows(NULL, got, 2), DPDO_E_INVAL);
    /* margins through shards */
    double w[5] = {1, 10, 100, 1000, 10000}, m[3];
    CHECK_EQ(dpdo_shard_margins(s, w, 5, m, 3), DPDO_OK);
    CHECK(m[0] == -10 + 50 + 30000 && m[1] == 1 + 2000 && m[2] == m[0]);
    CHECK_EQ(dpdo_shard_margins(s2, w, 5, m, 2), DPDO_OK);
    CHECK(m[0] == 0 && m[1] == 29990 + 50);
    CHECK_EQ(dpdo_shard_margins(s, w, 4, m, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_shard_margins(s, w, 5, m, 2), DPDO_E_INVAL);
    CHECK_EQ(dpdo_shard_margins(s, NULL, 5, m, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_shard_margins(NULL, w, 5, m, 3), DPDO_E_INVAL);
    w[2] = NAN;
    CHECK_EQ(dpdo_shard_margins(s, w, 5, m, 3), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_shard_errmsg(s), "w[2] is NaN");
    w[2] = 100;
    /* refill and relabel refused while borrowed */
    CHECK_EQ(dpdo_dataset_set_dense(ds, 2, 3, X23, Y2, DPDO_COPY), DPDO_E_STATE);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "borrowed by 2 shard(s)");
    CHECK_EQ(dpdo_dataset_generate(ds, "epsilon-like", NULL), DPDO_E_STATE);
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, "/nonexistent", NULL), DPDO_E_STATE);
    CHECK_EQ(dpdo_dataset_layout(ds), DPDO_LAYOUT_CSR);
    /* deferred destroy: shards keep working */
    dpdo_shard_destroy(s2);
    dpdo_dataset_destroy(ds);
    CHECK_EQ(dpdo_shard_margins(s, w, 5, m, 3), DPDO_OK);
    CHECK(m[1] == 2001);
    dpdo_shard_destroy(s); /* frees the dataset (ASan/valgrind check) */
    dpdo_shard_destroy(NULL);
}

static void test_partition(void)
{
    const int64_t n = h_quick() ? 103 : 1003;
    dpdo_dataset *ds = new_ds();
    dpdo_generate_options go;
    dpdo_generate_options_init(&go, sizeof go);
    go.n = n;
    go.d = 3;
    CHECK_EQ(dpdo_dataset_generate(ds, "epsilon-like", &go), DPDO_OK);
    dpdo_shard *sh[7], *sh2[7];
    CHECK_EQ(dpdo_dataset_partition(ds, 7, NULL, 42, sh), DPDO_OK);
    char *seen = calloc((size_t)n, 1);
    int64_t tot = 0;
    for (int k = 0; k < 7; k++) {
        int64_t m = dpdo_shard_rows(sh[k]);
        CHECK(m == n / 7 || m == n / 7 + 1);
        tot += m;
        for (int64_t i = 0; i < m; i++) {
            int64_t r = dpdo_shard_row_index(sh[k], i);
            CHECK(r >= 0 && r < n);
            CHECK(!seen[r]);
            seen[r] = 1;
            if (i) CHECK(r > dpdo_shard_row_index(sh[k], i - 1));
        }
    }
    CHECK_EQ(tot, n);
    /* determinism */
    CHECK_EQ(dpdo_dataset_partition(ds, 7, NULL, 42, sh2), DPDO_OK);
    int same = 1, differ = 0;
    for (int k = 0; k < 7; k++)
        for (int64_t i = 0; i < dpdo_shard_rows(sh[k]); i++)
            same &= dpdo_shard_row_index(sh[k], i) == dpdo_shard_row_index(sh2[k], i);
    CHECK(same);
    for (int k = 0; k < 7; k++) dpdo_shard_destroy(sh2[k]);
    CHECK_EQ(dpdo_dataset_partition(ds, 7, NULL, 43, sh2), DPDO_OK);
    for (int k = 0; k < 7; k++)
        for (int64_t i = 0; i < dpdo_shard_rows(sh[k]) && i < dpdo_shard_rows(sh2[k]); i++)
            differ |= dpdo_shard_row_index(sh[k], i) != dpdo_shard_row_index(sh2[k], i);
    CHECK(differ);
    for (int k = 0; k < 7; k++) {
        dpdo_shard_destroy(sh[k]);
        dpdo_shard_destroy(sh2[k]);
    }
    /* given sizes: leftover rows dropped */
    int64_t sizes[3] = {10, 20, 30};
    CHECK_EQ(dpdo_dataset_partition(ds, 3, sizes, 1, sh), DPDO_OK);
    memset(seen, 0, (size_t)n);
    for (int k = 0; k < 3; k++) {
        CHECK_EQ(dpdo_shard_rows(sh[k]), sizes[k]);
        for (int64_t i = 0; i < sizes[k]; i++) {
            int64_t r = dpdo_shard_row_index(sh[k], i);
            CHECK(!seen[r]);
            seen[r] = 1;
        }
        dpdo_shard_destroy(sh[k]);
    }
    /* bad input: shards_out all NULL */
    sizes[2] = n;
    sh[0] = sh[1] = sh[2] = (dpdo_shard *)1;
    CHECK_EQ(dpdo_dataset_partition(ds, 3, sizes, 1, sh), DPDO_E_INVAL);
    CHECK(sh[0] == NULL && sh[1] == NULL && sh[2] == NULL);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "sizes sum to more than");
    sizes[2] = 0;
    CHECK_EQ(dpdo_dataset_partition(ds, 3, sizes, 1, sh), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_partition(ds, 0, NULL, 1, sh), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_partition(ds, (int32_t)n + 1, NULL, 1, NULL), DPDO_E_INVAL);
    dpdo_shard **big = calloc((size_t)n + 1, sizeof *big);
    CHECK_EQ(dpdo_dataset_partition(ds, (int32_t)n + 1, NULL, 1, big), DPDO_E_INVAL);
    free(big);
    CHECK_EQ(dpdo_dataset_partition(NULL, 3, NULL, 1, sh), DPDO_E_INVAL);
    dpdo_dataset *e = new_ds();
    CHECK_EQ(dpdo_dataset_partition(e, 3, NULL, 1, sh), DPDO_E_STATE);
    dpdo_dataset_destroy(e);
    free(seen);
    dpdo_dataset_destroy(ds);
}

/* ---- kernels ------------------------------------------------------------- */
/* random-ish sparse matrix (about 30% dense) stored both ways */
static void make_pair(int64_t n, int64_t d, dpdo_dataset **dense, dpdo_dataset **csr)
{
    double *X = calloc((size_t)(n * d), sizeof(double)), *y = malloc((size_t)n * sizeof(double));
    int64_t *rp = malloc((size_t)(n + 1) * sizeof(int64_t));
    int32_t *ci = malloc((size_t)(n * d) * sizeof(int32_t));
    double *va = malloc((size_t)(n * d) * sizeof(double));
    uint64_t st = 12345;
    int64_t nz = 0;
    rp[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t j = 0; j < d; j++) {
            st = st * 6364136223846793005ULL + 1442695040888963407ULL;
            double u = (double)(st >> 11) / 9007199254740992.0;
            if (u < 0.3) {
                X[i * d + j] = (u - 0.15) * 20 * (1 + (double)(i % 5));
                ci[nz] = (int32_t)j;
                va[nz++] = X[i * d + j];
            }
        }
        rp[i + 1] = nz;
        y[i] = (i % 3) ? 1.0 : -1.0;
    }
    *dense = new_ds();
    *csr = new_ds();
    dpdo_dataset_set_dense(*dense, n, d, X, y, DPDO_COPY);
    dpdo_dataset_set_csr(*csr, n, d, rp, ci, va, y, DPDO_COPY);
    free(X);
    free(y);
    free(rp);
    free(ci);
    free(va);
}

static void test_kernels(void)
{
    const int64_t n = 57, d = 37;
    dpdo_dataset *D, *S;
    make_pair(n, d, &D, &S);
    double w[37], X[57 * 37], y[57];
    for (int64_t j = 0; j < d; j++) w[j] = sin((double)j) * 0.3;
    for (int64_t i = 0; i < n; i++) dpdo_dataset_get_row(D, i, X + i * d, d);
    dpdo_dataset_get_labels(D, y, n);
    /* naive margins */
    double mref[57], mD[57], mS[57];
    for (int64_t i = 0; i < n; i++) {
        long double s = 0;
        for (int64_t j = 0; j < d; j++) s += (long double)X[i * d + j] * w[j];
        mref[i] = (double)s;
    }
    CHECK_EQ(dpdo_dataset_margins(D, w, d, mD, n), DPDO_OK);
    CHECK_EQ(dpdo_dataset_margins(S, w, d, mS, n), DPDO_OK);
    for (int64_t i = 0; i < n; i++) {
        CHECK_NEAR(mD[i], mref[i], 1e-12 * (1 + fabs(mref[i])));
        CHECK_NEAR(mS[i], mref[i], 1e-12 * (1 + fabs(mref[i])));
        CHECK_NEAR(dpdo__row_dot(D, i, w), mD[i], 0);
    }
    /* fused gradient vs naive, full and mini-batch, with and without clipping */
    const int64_t idx[6] = {5, 0, 56, 5, 17, 33};
    for (int pass = 0; pass < 4; pass++) {
        const int64_t *rows = pass & 1 ? idx : NULL;
        int64_t m = pass & 1 ? 6 : n;
        double clip = pass & 2 ? 0.7 : 0.0;
        double gref[37] = {0}, gD[37], gS[37], lref = 0, lD, lS;
        int64_t cref = 0, cD, cS;
        for (int64_t k = 0; k < m; k++) {
            int64_t r = rows ? rows[k] : k;
            double loss, c = naive_logistic(NULL, mref[r], y[r], &loss);
            double nr = 0;
            for (int64_t j = 0; j < d; j++) nr += X[r * d + j] * X[r * d + j];
            nr = sqrt(nr);
            if (clip > 0 && fabs(c) * nr > clip) {
                c = c / (fabs(c) * nr) * clip;
                cref++;
            }
            lref += loss;
            for (int64_t j = 0; j < d; j++) gref[j] += 0.5 * c * X[r * d + j];
        }
        for (int64_t j = 0; j < d; j++) gD[j] = gS[j] = 1.0; /* accumulates */
        dpdo__lin_grad(D, rows, m, w, naive_logistic, NULL, clip, 0.5, gD, &lD, &cD);
        dpdo__lin_grad(S, rows, m, w, naive_logistic, NULL, clip, 0.5, gS, &lS, &cS);
        for (int64_t j = 0; j < d; j++) {
            CHECK_NEAR(gD[j], gref[j] + 1.0, 1e-12 * (1 + fabs(gref[j])));
            CHECK_NEAR(gS[j], gD[j], 1e-12 * (1 + fabs(gD[j])));
        }
        CHECK_NEAR(lD, lref, 1e-12 * lref);
        CHECK_NEAR(lS, lref, 1e-12 * lref);
        CHECK_EQ(cD, cref);
        CHECK_EQ(cS, cref);
        if (clip > 0) CHECK(cref > 0 && cref < m);
    }
    /* bit-identical to a row-by-row loop over the public row kernels (the
     * fused kernel may use a blocked AVX2 path; order must not change),
     * including rows whose coefficient is 0 (phi_zero3 returns 0 for every
     * third row) */
    const int64_t idx2[21] = {3, 9, 0, 56, 55, 12, 12, 40, 7, 8, 30, 31, 2, 1, 50, 44, 43, 20, 19, 5, 6};
    for (int pass = 0; pass < 6; pass++) {
        dpdo__phi_fn phi = pass & 1 ? phi_zero3 : naive_logistic;
        const int64_t *rows = pass >= 4 ? idx2 : pass & 2 ? idx : NULL;
        int64_t m = pass >= 4 ? 21 : pass & 2 ? 6 : n;
        double g1[37], g2[37];
        for (int64_t j = 0; j < d; j++) g1[j] = g2[j] = -0.0;
        dpdo__lin_grad(D, rows, m, w, phi, NULL, 0.0, 0.25, g1, NULL, NULL);
        for (int64_t k = 0; k < m; k++) {
            int64_t r = rows ? rows[k] : k;
            double loss, c = phi(NULL, dpdo__row_dot(D, r, w), y[r], &loss);
            if (0.25 * c != 0.0) dpdo__row_axpy(D, r, 0.25 * c, g2);
        }
        CHECK_MSG(memcmp(g1, g2, sizeof g1) == 0, "pass %d: fused gradient differs from the row loop", pass);
    }
    /* NULL loss/nclipped outputs allowed */
    double g[37] = {0};
    dpdo__lin_grad(D, NULL, n, w, naive_logistic, NULL, 0.0, 1.0, g, NULL, NULL);
    /* axpy */
    double a1[37] = {0}, a2[37] = {0};
    dpdo__row_axpy(D, 3, 2.0, a1);
    dpdo__row_axpy(S, 3, 2.0, a2);
    for (int64_t j = 0; j < d; j++) CHECK(a1[j] == 2.0 * X[3 * d + j] && a2[j] == a1[j]);
    /* gemv */
    double xn[57], out1[37], out2[37], yv[57];
    for (int64_t i = 0; i < n; i++) xn[i] = cos((double)i);
    for (int t = 0; t < 2; t++) {
        dpdo_dataset *ds = t ? S : D;
        for (int64_t j = 0; j < d; j++) out1[j] = 1.0;
        CHECK_EQ(dpdo_dataset_gemv(ds, 1, 2.0, xn, n, 3.0, out1, d), DPDO_OK);
        for (int64_t j = 0; j < d; j++) {
            double s = 0;
            for (int64_t i = 0; i < n; i++) s += X[i * d + j] * xn[i];
            CHECK_NEAR(out1[j], 2 * s + 3, 1e-12 * (1 + fabs(s)));
        }
        for (int64_t i = 0; i < n; i++) yv[i] = NAN;
        CHECK_EQ(dpdo_dataset_gemv(ds, 0, -1.0, w, d, 0.0, yv, n), DPDO_OK);
        for (int64_t i = 0; i < n; i++) CHECK_NEAR(yv[i], -mref[i], 1e-12 * (1 + fabs(mref[i])));
    }
    CHECK_EQ(dpdo_dataset_gemv(D, 2, 1, w, d, 0, yv, n), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_gemv(D, 0, 1, w, d - 1, 0, yv, n), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_gemv(D, 1, 1, w, d, 0, out2, d), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_gemv(D, 0, NAN, w, d, 0, yv, n), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_gemv(D, 0, 1, NULL, d, 0, yv, n), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_gemv(D, 0, 1, w, d, 0, NULL, n), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_gemv(NULL, 0, 1, w, d, 0, yv, n), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_margins(D, w, d + 1, mD, n), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_margins(D, NULL, d, mD, n), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_margins(NULL, w, d, mD, n), DPDO_E_INVAL);
    w[0] = INFINITY;
    CHECK_EQ(dpdo_dataset_margins(D, w, d, mD, n), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_gemv(D, 0, 1, w, d, 0, yv, n), DPDO_E_INVAL);
    dpdo_dataset *e = new_ds();
    CHECK_EQ(dpdo_dataset_margins(e, w, d, mD, n), DPDO_E_STATE);
    CHECK_EQ(dpdo_dataset_gemv(e, 0, 1, w, d, 0, yv, n), DPDO_E_STATE);
    dpdo_dataset_destroy(e);
    dpdo_dataset_destroy(D);
    dpdo_dataset_destroy(S);
}

/* clipping bound: |c| * ||x|| <= clip for every sample, checked through a
 * phi that records the gradient contribution of each row */
static void test_clip_bound(void)
{
    dpdo_dataset *ds = new_ds();
    dpdo_generate_options go;
    dpdo_generate_options_init(&go, sizeof go);
    go.n = 300;
    go.d = 20;
    go.normalize_rows = 0;
    CHECK_EQ(dpdo_dataset_generate(ds, "fedplt-logistic", &go), DPDO_OK);
    double w[20];
    for (int j = 0; j < 20; j++) w[j] = 0.37 * (j % 7) - 1;
    for (int i = 0; i < 300; i++) {
        for (double clip = 1e-3; clip < 100; clip *= 3.7) {
            double g[20] = {0};
            int64_t r = i, ncl = 0;
            dpdo__lin_grad(ds, &r, 1, w, naive_logistic, NULL, clip, 1.0, g, NULL, &ncl);
            double s = 0;
            for (int j = 0; j < 20; j++) s += g[j] * g[j];
            /* the norm of the rank-one update computed in floating point */
            CHECK_MSG(sqrt(s) <= clip * (1 + 1e-14), "row %d clip %g: norm %.17g", i, clip, sqrt(s));
        }
    }
    dpdo_dataset_destroy(ds);
}

/* ---- number parser ----------------------------------------------------------- */
static void test_parse_double(void)
{
    static const char *fixed[] = {
        "0", "-0", "+0.0", "1", "-1", "3.14159", ".5", "5.", "1e10", "1E-10", "2.2250738585072014e-308",
        "4.9406564584124654e-324", "1.7976931348623157e308", "9007199254740993", "9007199254740992",
        "0.1", "0.30000000000000004", "123456789012345678901234567890", "1e22", "1e23", "1e-22",
        "8.589973e9", "2.4703282292062327e-324", "2.4703282292062328e-324", "1e-400", "0.000001",
        "000000000000000000000000000001.5", "1.00000000000000011102230246251565404236316680908203125",
        "1.00000000000000011102230246251565404236316680908203124", "7.038531e-26", "1e+5", "-.25e-2"};
    int bad = 0;
    for (size_t k = 0; k < sizeof fixed / sizeof *fixed; k++) {
        const char *s = fixed[k];
        double a, b = strtod(s, NULL);
        const char *e = dpdo__parse_double(s, s + strlen(s), &a);
        if (!e || *e || memcmp(&a, &b, sizeof a) != 0) {
            bad++;
            CHECK_MSG(0, "'%s': %.17g vs strtod %.17g", s, a, b);
        }
    }
    /* random inputs: digits, point, exponent; compared bitwise to strtod */
    uint64_t st = 99;
    const long N = h_quick() ? 100000 : 2000000;
    char buf[80];
    for (long t = 0; t < N; t++) {
        st = st * 6364136223846793005ULL + 1442695040888963407ULL;
        uint64_t r = st >> 16;
        int nd = 1 + (int)(r % 25);
        r /= 25;
        int pos = 0;
        if (r & 1) buf[pos++] = '-';
        r >>= 1;
        int point = (int)(r % (nd + 2));
        r /= (uint64_t)(nd + 2);
        for (int i = 0; i < nd; i++) {
            if (i == point) buf[pos++] = '.';
            st = st * 6364136223846793005ULL + 1442695040888963407ULL;
            buf[pos++] = (char)('0' + (st >> 33) % 10);
        }
        if (r & 1) {
            r >>= 1;
            pos += snprintf(buf + pos, 12, "e%d", (int)(r % 700) - 350);
        }
        buf[pos] = 0;
        double a, b = strtod(buf, NULL);
        const char *e = dpdo__parse_double(buf, buf + pos, &a);
        if (!e || *e || memcmp(&a, &b, sizeof a) != 0) {
            if (bad++ < 10) CHECK_MSG(0, "'%s': %.17g vs strtod %.17g", buf, a, b);
        }
    }
    CHECK_EQ(bad, 0);
    /* not numbers */
    static const char *nots[] = {"", "-", "+", ".", "e5", "nan", "inf", "-.e1", "x1"};
    for (size_t k = 0; k < sizeof nots / sizeof *nots; k++) {
        double a;
        CHECK(dpdo__parse_double(nots[k], nots[k] + strlen(nots[k]), &a) == NULL);
    }
    double a;
    const char *s = "12e+";
    CHECK(dpdo__parse_double(s, s + 4, &a) == s + 2 && a == 12);
}

/* ---- LIBSVM --------------------------------------------------------------------- */
static void test_libsvm_good(void)
{
    const char *f = tmp_text("# a comment line\n"
                             "+1 1:0.5 3:-2 # trailing comment\n"
                             "\n"
                             "-1 qid:3 2:1e-3\r\n"
                             "  1\t4:7   \n"
                             "-1 1:1 2:2 3:3 4:4");
    dpdo_dataset *ds = new_ds();
    dpdo_load_options o;
    CHECK_EQ(dpdo_load_options_init(&o, sizeof o), DPDO_OK);
    o.layout = DPDO_LAYOUT_CSR;
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, f, &o), DPDO_OK);
    CHECK_EQ(dpdo_dataset_rows(ds), 4);
    CHECK_EQ(dpdo_dataset_features(ds), 4);
    CHECK_EQ(dpdo_dataset_layout(ds), DPDO_LAYOUT_CSR);
    CHECK_EQ(dpdo_dataset_nnz(ds), 8);
    double r[4], y[4];
    dpdo_dataset_get_row(ds, 0, r, 4);
    CHECK(r[0] == 0.5 && r[1] == 0 && r[2] == -2 && r[3] == 0);
    dpdo_dataset_get_row(ds, 1, r, 4);
    CHECK(r[1] == 1e-3);
    dpdo_dataset_get_labels(ds, y, 4);
    CHECK(y[0] == 1 && y[1] == -1 && y[2] == 1 && y[3] == -1);
    CHECK_EQ(dpdo_dataset_has_classes(ds), 1);
    /* auto layout: 8 of 16 entries -> dense at threshold 0.25 */
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, f, NULL), DPDO_OK);
    CHECK_EQ(dpdo_dataset_layout(ds), DPDO_LAYOUT_DENSE);
    dpdo_dataset_get_row(ds, 3, r, 4);
    CHECK(r[0] == 1 && r[3] == 4);
    o.layout = DPDO_LAYOUT_AUTO;
    o.dense_threshold = 0.9;
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, f, &o), DPDO_OK);
    CHECK_EQ(dpdo_dataset_layout(ds), DPDO_LAYOUT_CSR);
    /* forced dimension */
    o.n_features = 10;
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, f, &o), DPDO_OK);
    CHECK_EQ(dpdo_dataset_features(ds), 10);
    /* label maps */
    const char *g = tmp_text("0 1:1\n1 1:2\n0 2:1\n");
    dpdo_load_options_init(&o, sizeof o);
    o.label_map = DPDO_LABEL_BINARY;
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, g, &o), DPDO_OK);
    dpdo_dataset_get_labels(ds, y, 3);
    CHECK(y[0] == -1 && y[1] == 1 && y[2] == -1);
    const char *h = tmp_text("3 1:1\n7 1:2\n3 2:1\n2.5 1:1\n");
    o.label_map = DPDO_LABEL_POSITIVE;
    o.positive_label = 3;
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, h, &o), DPDO_OK);
    dpdo_dataset_get_labels(ds, y, 4);
    CHECK(y[0] == 1 && y[1] == -1 && y[2] == 1 && y[3] == -1);
    CHECK_EQ(dpdo_dataset_has_classes(ds), 0); /* 2.5 is not integral */
    o.label_map = DPDO_LABEL_RAW;
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, h, &o), DPDO_OK);
    dpdo_dataset_get_labels(ds, y, 4);
    CHECK(y[0] == 3 && y[1] == 7 && y[3] == 2.5);
    dpdo_dataset_destroy(ds);
}

struct bad_case {
    const char *text;
    const char *msg;
};

static void test_libsvm_bad(void)
{
    static const struct bad_case cases[] = {
        {"1 1:1\n-1 2:1\n1 3:1\n1 0:5\n", "line 4, column 3: feature index 0 is not allowed (indices start at 1)"},
        {"1 1:1 3:2 2:5\n", "line 1, column 11: feature index 2 is not greater than the previous index 3"},
        {"1 1:1 1:2\n", "line 1, column 7: feature index 1 is not greater than the previous index 1"},
        {"1:1 2:3\n", "line 1, column 1: missing label"},
        {"abc 1:1\n", "line 1, column 1: bad label 'abc'"},
        {"1 1:1\n1 x:2\n", "line 2, column 3: bad token 'x:2' (expected index:value)"},
        {"1 1:1 2:abc\n", "line 1, column 9: bad value 'abc'"},
        {"1 1:1 2:\n", "line 1, column 9: missing value after '2:'"},
        {"1 1:1 3:", "line 1, column 9: missing value after '3:'"},
        {"1 1:1 7\n", "line 1, column 7: bad token '7' (expected index:value)"},
        {"1 1:1 99999999999:1\n", "line 1, column 7: feature index '99999999999:1' overflows"},
        {"1 1:1 2:1e999\n", "line 1, column 9: value '1e999' is out of range"},
        {"1 1:1 2:0.5x\n", "line 1, column 9: bad value '0.5x'"},
        {"nan 1:1\n", "bad label 'nan'"},
        {"\n\n# only comments\n", "no samples found"},
        {"", "no samples found"},
        {"1\n-1\n", "no feature indices"},
    };
    dpdo_dataset *ds = new_ds();
    CHECK_EQ(dpdo_dataset_set_dense(ds, 2, 3, X23, Y2, DPDO_COPY), DPDO_OK);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const char *f = tmp_text(cases[k].text);
        int rc = dpdo_dataset_load_libsvm(ds, f, NULL);
        CHECK_MSG(rc == DPDO_E_FORMAT, "case %zu: rc %d", k, rc);
        CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), cases[k].msg);
        CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), f); /* names the file */
        /* nothing half-loaded */
        CHECK_EQ(dpdo_dataset_rows(ds), 2);
        CHECK_EQ(dpdo_dataset_layout(ds), DPDO_LAYOUT_DENSE);
    }
    dpdo_load_options o;
    dpdo_load_options_init(&o, sizeof o);
    o.n_features = 3;
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, tmp_text("1 1:1\n1 4:1\n"), &o), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "line 2, column 3: feature index 4 exceeds n_features = 3");
    dpdo_load_options_init(&o, sizeof o);
    o.reject_qid = 1;
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, tmp_text("1 qid:2 1:1\n"), &o), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "line 1, column 3: 'qid:' is not supported");
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, tmp_text("1 qid:x 1:1\n"), NULL), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "bad qid");
    o.reject_qid = 0;
    o.label_map = DPDO_LABEL_BINARY;
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, tmp_text("1 1:1\n2 1:1\n"), &o), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "line 2, column 1: label 2 is not binary");
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, tmp_text("1 1:1\n0 1:1\n-1 1:1\n"), &o), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "line 3, column 1: labels mix 0 and -1");
    /* IO and argument errors */
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, "/nonexistent/x.svm", NULL), DPDO_E_IO);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "cannot open '/nonexistent/x.svm': no such file");
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, "/tmp", NULL), DPDO_E_IO);
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, NULL, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_load_libsvm(NULL, "x", NULL), DPDO_E_INVAL);
    dpdo_load_options_init(&o, sizeof o);
    o.layout = 9;
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, "x", &o), DPDO_E_INVAL);
    dpdo_load_options_init(&o, sizeof o);
    o.dense_threshold = NAN;
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, "x", &o), DPDO_E_INVAL);
    dpdo_load_options_init(&o, sizeof o);
    o.n_features = -1;
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, "x", &o), DPDO_E_INVAL);
    dpdo_load_options_init(&o, sizeof o);
    o.label_map = 3;
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, "x", &o), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_rows(ds), 2);
    dpdo_dataset_destroy(ds);
}

static void test_options_versioning(void)
{
    dpdo_load_options o;
    CHECK_EQ(dpdo_load_options_init(NULL, sizeof o), DPDO_E_INVAL);
    CHECK_EQ(dpdo_load_options_init(&o, 2), DPDO_E_VERSION);
    {   /* a newer, larger struct: the unknown tail is zeroed (docs/abi.md) */
        struct {
            dpdo_load_options o;
            int64_t extra;
        } bigi;
        memset(&bigi, 0x55, sizeof bigi);
        CHECK_EQ(dpdo_load_options_init(&bigi.o, sizeof bigi), DPDO_OK);
        CHECK_EQ(bigi.extra, 0);
        CHECK_EQ(bigi.o.struct_size, sizeof bigi);
    }
    /* an older, shorter struct: fields beyond it take defaults */
    memset(&o, 0x55, sizeof o);
    CHECK_EQ(dpdo_load_options_init(&o, offsetof(dpdo_load_options, layout)), DPDO_OK);
    CHECK_EQ(o.struct_size, offsetof(dpdo_load_options, layout));
    dpdo_dataset *ds = new_ds();
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, tmp_text("1 1:1 2:1\n-1 1:1\n"), &o), DPDO_OK);
    CHECK_EQ(dpdo_dataset_layout(ds), DPDO_LAYOUT_DENSE);
    /* a newer, longer struct with a non-zero unknown tail */
    struct {
        dpdo_load_options o;
        int64_t extra;
    } big;
    memset(&big, 0, sizeof big);
    dpdo_load_options_init(&big.o, sizeof big.o);
    big.o.struct_size = sizeof big;
    big.extra = 1;
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, "x", &big.o), DPDO_E_VERSION);
    big.extra = 0;
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, tmp_text("1 1:1\n"), &big.o), DPDO_OK);
    dpdo_generate_options g;
    CHECK_EQ(dpdo_generate_options_init(NULL, sizeof g), DPDO_E_INVAL);
    CHECK_EQ(dpdo_generate_options_init(&g, 1), DPDO_E_VERSION);
    {
        struct {
            dpdo_generate_options g;
            char extra[3];
        } bigg;
        memset(&bigg, 0x55, sizeof bigg);
        CHECK_EQ(dpdo_generate_options_init(&bigg.g, sizeof bigg), DPDO_OK);
        CHECK(bigg.extra[0] == 0 && bigg.extra[2] == 0);
    }
    CHECK_EQ(dpdo_generate_options_init(&g, sizeof g), DPDO_OK);
    CHECK_EQ(g.n, 1000);
    dpdo_dataset_destroy(ds);
}

static void test_libsvm_gzip(void)
{
    const char *text = "1 1:0.25 2:-1\n-1 3:2\n1 1:1 3:1\n";
    const char *f = tmp_gz(text, strlen(text));
    dpdo_dataset *ds = new_ds();
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, f, NULL), DPDO_OK);
    CHECK_EQ(dpdo_dataset_rows(ds), 3);
    CHECK_EQ(dpdo_dataset_features(ds), 3);
    double r[3];
    dpdo_dataset_get_row(ds, 0, r, 3);
    CHECK(r[0] == 0.25 && r[1] == -1 && r[2] == 0);
    /* errors inside gzip still name line and column */
    const char *bad = "1 1:1\n1 2:1 1:1\n";
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, tmp_gz(bad, strlen(bad)), NULL), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "line 2, column 7");
    /* truncated gzip */
    long sz = file_size(f);
    truncate_file(f, sz - 6);
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, f, NULL), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "truncated gzip");
    CHECK_EQ(dpdo_dataset_rows(ds), 3);
    /* corrupt gzip */
    unsigned char junk[40] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff, 0xff, 0xff, 0xff, 0xfe};
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, tmp_bytes(junk, sizeof junk, ".gz"), NULL), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "gzip");
    /* two concatenated members (cat a.gz b.gz) */
    char *b1 = tmpbufs[ntmp++ % 64];
    h_tmpfile(b1, ".gz", "", 0);
    const char *p1 = tmp_gz("1 1:1\n", 6), *p2 = tmp_gz("-1 2:1\n", 7);
    FILE *out = fopen(b1, "wb");
    for (int k = 0; k < 2; k++) {
        FILE *in = fopen(k ? p2 : p1, "rb");
        int ch;
        while ((ch = fgetc(in)) != EOF) fputc(ch, out);
        fclose(in);
    }
    fclose(out);
    CHECK_EQ(dpdo_dataset_load_libsvm(ds, b1, NULL), DPDO_OK);
    CHECK_EQ(dpdo_dataset_rows(ds), 2);
    dpdo_dataset_destroy(ds);
}

static void check_same(dpdo_dataset *a, dpdo_dataset *b)
{
    int64_t n = dpdo_dataset_rows(a), d = dpdo_dataset_features(a);
    CHECK_EQ(dpdo_dataset_rows(b), n);
    CHECK_EQ(dpdo_dataset_features(b), d);
    double *ra = malloc((size_t)d * sizeof(double)), *rb = malloc((size_t)d * sizeof(double));
    double *ya = malloc((size_t)n * sizeof(double)), *yb = malloc((size_t)n * sizeof(double));
    int diff = 0;
    for (int64_t i = 0; i < n; i++) {
        dpdo_dataset_get_row(a, i, ra, d);
        dpdo_dataset_get_row(b, i, rb, d);
        diff += memcmp(ra, rb, (size_t)d * sizeof(double)) != 0;
    }
    dpdo_dataset_get_labels(a, ya, n);
    dpdo_dataset_get_labels(b, yb, n);
    CHECK_EQ(diff, 0);
    CHECK(memcmp(ya, yb, (size_t)n * sizeof(double)) == 0);
    free(ra);
    free(rb);
    free(ya);
    free(yb);
}

static void test_roundtrip(void)
{
    dpdo_dataset *a = new_ds(), *b = new_ds();
    dpdo_generate_options go;
    dpdo_generate_options_init(&go, sizeof go);
    go.n = 200;
    go.d = 500;
    go.density = 0.02;
    CHECK_EQ(dpdo_dataset_generate(a, "rcv1-like", &go), DPDO_OK);
    char *path = tmpbufs[ntmp++ % 64];
    h_tmpfile(path, ".svm", "", 0);
    CHECK_EQ(dpdo_dataset_save_libsvm(a, path), DPDO_OK);
    dpdo_load_options o;
    dpdo_load_options_init(&o, sizeof o);
    o.n_features = 500; /* the last columns may be unused */
    o.layout = DPDO_LAYOUT_CSR;
    CHECK_EQ(dpdo_dataset_load_libsvm(b, path, &o), DPDO_OK);
    check_same(a, b);
    CHECK_EQ(dpdo_dataset_nnz(b), dpdo_dataset_nnz(a));
    CHECK_NEAR(dpdo_dataset_max_row_norm(b), dpdo_dataset_max_row_norm(a), 0);
    go.d = 30;
    CHECK_EQ(dpdo_dataset_generate(a, "epsilon-like", &go), DPDO_OK);
    CHECK_EQ(dpdo_dataset_save_libsvm(a, path), DPDO_OK);
    CHECK_EQ(dpdo_dataset_load_libsvm(b, path, NULL), DPDO_OK);
    CHECK_EQ(dpdo_dataset_layout(b), DPDO_LAYOUT_DENSE);
    check_same(a, b);
    dpdo_dataset *e = new_ds();
    CHECK_EQ(dpdo_dataset_save_libsvm(e, path), DPDO_E_STATE);
    CHECK_EQ(dpdo_dataset_save_libsvm(a, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_save_libsvm(NULL, path), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_save_libsvm(a, "/nonexistent/dir/f"), DPDO_E_IO);
    dpdo_dataset_destroy(e);
    dpdo_dataset_destroy(a);
    dpdo_dataset_destroy(b);
}

/* ---- CSV ------------------------------------------------------------------------ */
static void test_csv(void)
{
    dpdo_dataset *ds = new_ds();
    dpdo_load_options o;
    dpdo_load_options_init(&o, sizeof o);
    o.header = 1;
    o.label_column = -1;
    const char *f = tmp_text("a,b,label\n1.5, 2 ,1\n\n-3,4e1,0\r\n5,6,1");
    CHECK_EQ(dpdo_dataset_load_csv(ds, f, &o), DPDO_OK);
    CHECK_EQ(dpdo_dataset_rows(ds), 3);
    CHECK_EQ(dpdo_dataset_features(ds), 2);
    double r[2], y[3];
    dpdo_dataset_get_row(ds, 1, r, 2);
    CHECK(r[0] == -3 && r[1] == 40);
    dpdo_dataset_get_labels(ds, y, 3);
    CHECK(y[0] == 1 && y[1] == 0 && y[2] == 1);
    o.label_map = DPDO_LABEL_BINARY;
    CHECK_EQ(dpdo_dataset_load_csv(ds, f, &o), DPDO_OK);
    dpdo_dataset_get_labels(ds, y, 3);
    CHECK(y[1] == -1);
    /* label first, semicolons */
    dpdo_load_options_init(&o, sizeof o);
    o.delimiter = ';';
    CHECK_EQ(dpdo_dataset_load_csv(ds, tmp_text("7;1;2;3\n8;4;5;6\n"), &o), DPDO_OK);
    CHECK_EQ(dpdo_dataset_features(ds), 3);
    dpdo_dataset_get_row(ds, 1, r, 2); /* wrong d */
    double r3[3];
    dpdo_dataset_get_row(ds, 1, r3, 3);
    CHECK(r3[0] == 4 && r3[2] == 6);
    int32_t c[2];
    CHECK_EQ(dpdo_dataset_get_classes(ds, c, 2), DPDO_OK);
    CHECK(c[0] == 7 && c[1] == 8);
    /* middle label column */
    o.label_column = 1;
    CHECK_EQ(dpdo_dataset_load_csv(ds, tmp_text("7;1;2;3\n8;4;5;6\n"), &o), DPDO_OK);
    dpdo_dataset_get_row(ds, 0, r3, 3);
    CHECK(r3[0] == 7 && r3[1] == 2 && r3[2] == 3);
    dpdo_dataset_get_labels(ds, y, 2);
    CHECK(y[0] == 1 && y[1] == 4);
    /* bad files */
    static const struct bad_case cases[] = {
        {"1,2,3\n4,5\n", "line 2, column 4: too few fields: 2 (expected 3)"},
        {"1,2,3\n4,5,6,7\n", "line 2, column 7: too many fields (expected 3)"},
        {"1,2,3\n4,,6\n", "line 2, column 3: empty field 2"},
        {"1,2,3\n4,x,6\n", "line 2, column 3: bad number 'x,6' in field 2"},
        {"1,2,3\n4,5 5,6\n", "line 2, column 3: bad number"},
        {"1,2,1e999\n", "line 1, column 5: value in field 3 is out of range"},
        {"1\n2\n", "need a label and at least one feature"},
        {"", "no samples found"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        int rc = dpdo_dataset_load_csv(ds, tmp_text(cases[k].text), NULL);
        CHECK_MSG(rc == DPDO_E_FORMAT, "case %zu: rc %d", k, rc);
        CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), cases[k].msg);
        CHECK_EQ(dpdo_dataset_rows(ds), 2);
    }
    dpdo_load_options_init(&o, sizeof o);
    o.label_column = 5;
    CHECK_EQ(dpdo_dataset_load_csv(ds, tmp_text("1,2\n"), &o), DPDO_E_INVAL);
    o.label_column = 0;
    o.layout = DPDO_LAYOUT_CSR;
    CHECK_EQ(dpdo_dataset_load_csv(ds, tmp_text("1,2\n"), &o), DPDO_E_UNSUPPORTED);
    o.layout = 0;
    o.delimiter = '.';
    CHECK_EQ(dpdo_dataset_load_csv(ds, tmp_text("1,2\n"), &o), DPDO_E_INVAL);
    o.delimiter = ',';
    o.n_features = 3;
    CHECK_EQ(dpdo_dataset_load_csv(ds, tmp_text("1,2\n"), &o), DPDO_E_FORMAT);
    CHECK_EQ(dpdo_dataset_load_csv(ds, "/nonexistent.csv", NULL), DPDO_E_IO);
    CHECK_EQ(dpdo_dataset_load_csv(ds, NULL, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_load_csv(NULL, "x", NULL), DPDO_E_INVAL);
    /* gzip CSV */
    const char *t = "1,0.5\n-1,0.25\n";
    CHECK_EQ(dpdo_dataset_load_csv(ds, tmp_gz(t, strlen(t)), NULL), DPDO_OK);
    CHECK_EQ(dpdo_dataset_rows(ds), 2);
    dpdo_dataset_destroy(ds);
}

/* ---- IDX ------------------------------------------------------------------------ */
static size_t make_idx(unsigned char *img, unsigned char *lab, int n, int rows, int cols, size_t *llen)
{
    unsigned char hdr[16] = {0, 0, 8, 3, 0, 0, 0, (unsigned char)n, 0, 0, 0, (unsigned char)rows,
                             0, 0, 0, (unsigned char)cols};
    memcpy(img, hdr, 16);
    for (int k = 0; k < n * rows * cols; k++) img[16 + k] = (unsigned char)(k * 37 % 256);
    unsigned char lh[8] = {0, 0, 8, 1, 0, 0, 0, (unsigned char)n};
    memcpy(lab, lh, 8);
    for (int k = 0; k < n; k++) lab[8 + k] = (unsigned char)(k % 10);
    *llen = 8 + (size_t)n;
    return 16 + (size_t)(n * rows * cols);
}

static void test_idx_small(void)
{
    unsigned char img[16 + 5 * 6], lab[8 + 5];
    size_t ll, il = make_idx(img, lab, 5, 2, 3, &ll);
    const char *fi = tmp_bytes(img, il, ".idx"), *fl = tmp_bytes(lab, ll, ".idx");
    dpdo_dataset *ds = new_ds();
    CHECK_EQ(dpdo_dataset_load_idx(ds, fi, fl, NULL), DPDO_OK);
    CHECK_EQ(dpdo_dataset_rows(ds), 5);
    CHECK_EQ(dpdo_dataset_features(ds), 6);
    double r[6], y[5];
    dpdo_dataset_get_row(ds, 1, r, 6);
    for (int j = 0; j < 6; j++) CHECK(r[j] == (double)((6 + j) * 37 % 256) / 255.0);
    dpdo_dataset_get_labels(ds, y, 5);
    CHECK(y[3] == 3);
    dpdo_load_options o;
    dpdo_load_options_init(&o, sizeof o);
    o.scale = DPDO_IDX_ROW_NORMALIZE;
    CHECK_EQ(dpdo_dataset_load_idx(ds, tmp_gz(img, il), tmp_gz(lab, ll), &o), DPDO_OK);
    CHECK_NEAR(dpdo_dataset_max_row_norm(ds), 1.0, 1e-15);
    o.scale = DPDO_IDX_RAW;
    CHECK_EQ(dpdo_dataset_load_idx(ds, fi, fl, &o), DPDO_OK);
    dpdo_dataset_get_row(ds, 0, r, 6);
    CHECK(r[1] == 37);
    o.scale = DPDO_IDX_UNIT;
    o.label_map = DPDO_LABEL_POSITIVE;
    o.positive_label = 2;
    CHECK_EQ(dpdo_dataset_load_idx(ds, fi, fl, &o), DPDO_OK);
    dpdo_dataset_get_labels(ds, y, 5);
    CHECK(y[2] == 1 && y[1] == -1);
    /* malformed */
    unsigned char bad[sizeof img];
    memcpy(bad, img, il);
    bad[3] = 4;
    CHECK_EQ(dpdo_dataset_load_idx(ds, tmp_bytes(bad, il, ".i"), fl, NULL), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "byte 0: bad IDX magic");
    CHECK_EQ(dpdo_dataset_load_idx(ds, tmp_bytes(img, il - 1, ".i"), fl, NULL), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "size mismatch");
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "(truncated)");
    CHECK_EQ(dpdo_dataset_load_idx(ds, tmp_bytes(img, 10, ".i"), fl, NULL), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "truncated IDX header");
    CHECK_EQ(dpdo_dataset_load_idx(ds, fl, fl, NULL), DPDO_E_FORMAT);
    CHECK_EQ(dpdo_dataset_load_idx(ds, fi, fi, NULL), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "00 00 08 01");
    unsigned char lab2[sizeof lab];
    memcpy(lab2, lab, ll);
    lab2[7] = 4;
    CHECK_EQ(dpdo_dataset_load_idx(ds, fi, tmp_bytes(lab2, ll - 1, ".l"), NULL), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "4 labels but");
    CHECK_EQ(dpdo_dataset_load_idx(ds, fi, tmp_bytes(lab, ll - 1, ".l"), NULL), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "size mismatch");
    /* truncated gzip */
    const char *gz = tmp_gz(img, il);
    truncate_file(gz, file_size(gz) - 3);
    CHECK_EQ(dpdo_dataset_load_idx(ds, gz, fl, NULL), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "truncated gzip");
    o.label_map = DPDO_LABEL_BINARY;
    CHECK_EQ(dpdo_dataset_load_idx(ds, fi, fl, &o), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(ds), "label 2 is not binary");
    dpdo_load_options_init(&o, sizeof o);
    o.scale = 7;
    CHECK_EQ(dpdo_dataset_load_idx(ds, fi, fl, &o), DPDO_E_INVAL);
    o.scale = 0;
    o.layout = DPDO_LAYOUT_CSR;
    CHECK_EQ(dpdo_dataset_load_idx(ds, fi, fl, &o), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_dataset_load_idx(ds, "/nonexistent", fl, NULL), DPDO_E_IO);
    CHECK_EQ(dpdo_dataset_load_idx(ds, fi, "/nonexistent", NULL), DPDO_E_IO);
    CHECK_EQ(dpdo_dataset_load_idx(ds, NULL, fl, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_load_idx(ds, fi, NULL, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_load_idx(NULL, fi, fl, NULL), DPDO_E_INVAL);
    /* unchanged after all failures */
    CHECK_EQ(dpdo_dataset_rows(ds), 5);
    dpdo_dataset_get_labels(ds, y, 5);
    CHECK(y[2] == 1 && y[1] == -1);
    dpdo_dataset_destroy(ds);
}

#define FMNIST "/usr/share/datasets/fashion-mnist/"
static void test_fashion_mnist(void)
{
    const char *ti = FMNIST "t10k-images-idx3-ubyte.gz", *tl = FMNIST "t10k-labels-idx1-ubyte.gz";
    const char *ri = FMNIST "train-images-idx3-ubyte.gz", *rl = FMNIST "train-labels-idx1-ubyte.gz";
    if (access(ti, R_OK) != 0 || access(ri, R_OK) != 0) {
        printf("# skipping: Fashion-MNIST not found in " FMNIST "\n");
        return;
    }
    dpdo_dataset *ds = new_ds();
    CHECK_EQ(dpdo_dataset_load_idx(ds, ti, tl, NULL), DPDO_OK);
    CHECK_EQ(dpdo_dataset_rows(ds), 10000);
    CHECK_EQ(dpdo_dataset_features(ds), 784);
    int32_t *c = malloc(60000 * sizeof(int32_t));
    CHECK_EQ(dpdo_dataset_get_classes(ds, c, 10000), DPDO_OK);
    int cnt[10] = {0}, out = 0;
    for (int i = 0; i < 10000; i++) {
        if (c[i] < 0 || c[i] > 9) out++;
        else cnt[c[i]]++;
    }
    CHECK_EQ(out, 0);
    for (int k = 0; k < 10; k++) CHECK_EQ(cnt[k], 1000); /* the test set is balanced */
    double mx = dpdo_dataset_max_row_norm(ds);
    CHECK(mx > 1 && mx <= 28.0);
    double r[784];
    dpdo_dataset_get_row(ds, 0, r, 784);
    double lo = 1, hi = 0;
    for (int j = 0; j < 784; j++) {
        if (r[j] < lo) lo = r[j];
        if (r[j] > hi) hi = r[j];
    }
    CHECK(lo >= 0 && hi <= 1 && hi > 0.5);
    CHECK_EQ(dpdo_dataset_binarize(ds, DPDO_BINARY_EVEN_ODD, 0), DPDO_OK);
    double *y = malloc(60000 * sizeof(double));
    dpdo_dataset_get_labels(ds, y, 10000);
    double s = 0;
    for (int i = 0; i < 10000; i++) s += y[i];
    CHECK_NEAR(s, 0, 0);
    if (!h_quick()) {
        CHECK_EQ(dpdo_dataset_load_idx(ds, ri, rl, NULL), DPDO_OK);
        CHECK_EQ(dpdo_dataset_rows(ds), 60000);
        CHECK_EQ(dpdo_dataset_features(ds), 784);
        CHECK_EQ(dpdo_dataset_get_classes(ds, c, 60000), DPDO_OK);
        int cnt2[10] = {0};
        for (int i = 0; i < 60000; i++) cnt2[c[i] >= 0 && c[i] < 10 ? c[i] : 0] += c[i] >= 0 && c[i] < 10;
        for (int k = 0; k < 10; k++) CHECK_EQ(cnt2[k], 6000);
        CHECK(dpdo_dataset_max_row_norm(ds) <= 28.0);
    }
    free(c);
    free(y);
    dpdo_dataset_destroy(ds);
}

/* ---- generators ------------------------------------------------------------------ */
static int same_bytes(dpdo_dataset *a, dpdo_dataset *b)
{
    struct dpdo_dataset *x = a, *y = b;
    if (x->n != y->n || x->d != y->d || x->layout != y->layout) return 0;
    if (memcmp(x->y, y->y, (size_t)x->n * sizeof(double))) return 0;
    if (x->layout == DPDO__DS_DENSE)
        return memcmp(x->X, y->X, (size_t)(x->n * x->d) * sizeof(double)) == 0;
    if (memcmp(x->rowptr, y->rowptr, (size_t)(x->n + 1) * sizeof(int64_t))) return 0;
    return memcmp(x->colidx, y->colidx, (size_t)x->nnz * 4) == 0 &&
           memcmp(x->val, y->val, (size_t)x->nnz * 8) == 0;
}

static void test_generators(void)
{
    dpdo_generate_options go;
    dpdo_generate_options_init(&go, sizeof go);
    go.n = h_quick() ? 400 : 4000;
    go.d = 50;
    dpdo_dataset *a = new_ds(), *b = new_ds();
    for (int k = 0; dpdo_dataset_generator_name(k); k++) {
        const char *kind = dpdo_dataset_generator_name(k);
        go.seed = 7;
        CHECK_EQ(dpdo_dataset_generate(a, kind, &go), DPDO_OK);
        CHECK_EQ(dpdo_dataset_generate(b, kind, &go), DPDO_OK);
        CHECK_MSG(same_bytes(a, b), "%s: same seed, different bytes", kind);
        go.seed = 8;
        CHECK_EQ(dpdo_dataset_generate(b, kind, &go), DPDO_OK);
        CHECK_MSG(!same_bytes(a, b), "%s: different seeds, same bytes", kind);
        CHECK_EQ(dpdo_dataset_rows(a), go.n);
        CHECK_EQ(dpdo_dataset_features(a), k == 3 ? 54 : 50);
        struct dpdo_dataset *A = a;
        double pos = 0;
        int labels_ok = 1;
        for (int64_t i = 0; i < go.n; i++) {
            labels_ok &= A->y[i] == 1 || A->y[i] == -1;
            pos += A->y[i] > 0;
        }
        CHECK(labels_ok);
        double frac = pos / (double)go.n;
        if (k == 3) CHECK_MSG(frac > 0.2 && frac < 0.8, "%s: +1 fraction %g", kind, frac);
        else CHECK_MSG(fabs(frac - 0.5) < 0.06, "%s: +1 fraction %g", kind, frac);
        if (k <= 1) { /* unit rows */
            double worst = 0;
            for (int64_t i = 0; i < go.n; i++) worst = fmax(worst, fabs(A->row_norm[i] - 1));
            CHECK_MSG(worst < 1e-14, "%s: row norm off by %g", kind, worst);
        }
    }
    /* rcv1-like: density and skew */
    go.n = h_quick() ? 500 : 3000;
    go.d = 2000;
    go.density = 0.01;
    go.seed = 3;
    CHECK_EQ(dpdo_dataset_generate(a, "rcv1-like", &go), DPDO_OK);
    struct dpdo_dataset *A = a;
    CHECK_EQ(A->layout, DPDO__DS_CSR);
    double dens = (double)A->nnz / ((double)go.n * 2000);
    CHECK_MSG(fabs(dens - 0.01) < 0.001, "density %g", dens);
    int64_t *freq = calloc(2000, sizeof(int64_t));
    int neg = 0;
    for (int64_t k = 0; k < A->nnz; k++) {
        freq[A->colidx[k]]++;
        neg += A->val[k] <= 0;
    }
    CHECK_EQ(neg, 0);
    int64_t mx = 0, used = 0;
    for (int j = 0; j < 2000; j++) {
        mx = freq[j] > mx ? freq[j] : mx;
        used += freq[j] > 0;
    }
    /* Zipf(1) over 2000: the top feature has probability 1/H_2000 = 0.12 per
     * draw, ~ present in most rows; a uniform choice would give 1% */
    CHECK_MSG((double)mx / (double)go.n > 0.5, "top feature in %g of rows", (double)mx / (double)go.n);
    CHECK_MSG(used > 1000, "only %lld of 2000 features used", (long long)used);
    free(freq);
    /* fedplt: feature variance s^2, shift, independent labels */
    dpdo_generate_options_init(&go, sizeof go);
    go.n = h_quick() ? 2000 : 20000;
    go.d = 10;
    go.scale = 3.0;
    CHECK_EQ(dpdo_dataset_generate(a, "fedplt-logistic", &go), DPDO_OK);
    double s2 = 0, s1 = 0;
    for (int64_t i = 0; i < go.n * 10; i++) {
        s1 += A->X[i];
        s2 += A->X[i] * A->X[i];
    }
    double var = s2 / (double)(go.n * 10);
    CHECK_MSG(fabs(var - 9.0) < 0.5, "variance %g", var);
    CHECK_MSG(fabs(s1 / (double)(go.n * 10)) < 0.1, "mean %g", s1 / (double)(go.n * 10));
    go.n_agents = 4;
    go.shift_scale = 5.0;
    go.scale = 1.0;
    CHECK_EQ(dpdo_dataset_generate(a, "fedplt-logistic", &go), DPDO_OK);
    /* agent 0's mean vector differs from agent 3's by ~ N(0, 2*25) per coordinate */
    double m0 = 0, m3 = 0;
    int64_t q = go.n / 4;
    for (int64_t i = 0; i < q; i++) {
        m0 += A->X[i * 10];
        m3 += A->X[(3 * q + i) * 10];
    }
    m0 /= (double)q;
    m3 /= (double)q;
    /* within-agent spread is 1: the agent means are far apart relative to 1/sqrt(q) */
    CHECK(fabs(m0 - m3) > 0.05);
    double v0 = 0;
    for (int64_t i = 0; i < q; i++) v0 += (A->X[i * 10] - m0) * (A->X[i * 10] - m0);
    CHECK_MSG(fabs(v0 / (double)q - 1.0) < 0.15, "within-agent variance %g", v0 / (double)q);
    /* logistic labels: P(b = 1) = sigmoid(a . x_true): E[b * (a . x_true)] > 0;
     * with independent labels it is ~ 0. Estimate x_true ~ E[b a]. */
    dpdo_generate_options_init(&go, sizeof go);
    go.n = h_quick() ? 2000 : 20000;
    go.d = 5;
    CHECK_EQ(dpdo_dataset_generate(a, "fedplt-logistic", &go), DPDO_OK);
    double ba[5] = {0};
    for (int64_t i = 0; i < go.n; i++)
        for (int j = 0; j < 5; j++) ba[j] += A->y[i] * A->X[i * 5 + j];
    double nba = 0;
    for (int j = 0; j < 5; j++) nba += ba[j] * ba[j];
    nba = sqrt(nba) / (double)go.n;
    CHECK_MSG(nba > 0.3, "|E[b a]| = %g", nba);
    go.independent_labels = 1;
    CHECK_EQ(dpdo_dataset_generate(a, "fedplt-logistic", &go), DPDO_OK);
    memset(ba, 0, sizeof ba);
    for (int64_t i = 0; i < go.n; i++)
        for (int j = 0; j < 5; j++) ba[j] += A->y[i] * A->X[i * 5 + j];
    nba = 0;
    for (int j = 0; j < 5; j++) nba += ba[j] * ba[j];
    nba = sqrt(nba) / (double)go.n;
    CHECK_MSG(nba < 0.1, "independent: |E[b a]| = %g", nba);
    /* covtype-like structure: 10 continuous in [0,1], exactly one 1 in 10..13 and in 14..53 */
    dpdo_generate_options_init(&go, sizeof go);
    go.n = 500;
    CHECK_EQ(dpdo_dataset_generate(a, "covtype-like", &go), DPDO_OK);
    int ok = 1;
    for (int64_t i = 0; i < go.n; i++) {
        const double *x = A->X + i * 54;
        double w = 0, s = 0;
        for (int j = 0; j < 10; j++) ok &= x[j] >= 0 && x[j] <= 1;
        for (int j = 10; j < 14; j++) w += x[j];
        for (int j = 14; j < 54; j++) s += x[j];
        ok &= w == 1 && s == 1 && A->cls[i] >= 1 && A->cls[i] <= 7;
        ok &= (A->cls[i] == 2) == (A->y[i] == 1);
    }
    CHECK(ok);
    /* errors */
    CHECK_EQ(dpdo_dataset_generate(a, "mnist-like", NULL), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_dataset_errmsg(a), "unknown generator 'mnist-like' (valid: epsilon-like, rcv1-like, fedplt-logistic, covtype-like)");
    CHECK_EQ(dpdo_dataset_generate(a, NULL, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_generate(NULL, "epsilon-like", NULL), DPDO_E_INVAL);
    dpdo_generate_options_init(&go, sizeof go);
    go.n = 0;
    CHECK_EQ(dpdo_dataset_generate(a, "epsilon-like", &go), DPDO_E_INVAL);
    go.n = 10;
    go.d = 0;
    CHECK_EQ(dpdo_dataset_generate(a, "epsilon-like", &go), DPDO_E_INVAL);
    go.d = 10;
    go.density = 0;
    CHECK_EQ(dpdo_dataset_generate(a, "rcv1-like", &go), DPDO_E_INVAL);
    go.density = 0.1;
    go.label_noise = 1.5;
    CHECK_EQ(dpdo_dataset_generate(a, "epsilon-like", &go), DPDO_E_INVAL);
    go.label_noise = 0;
    go.scale = -1;
    CHECK_EQ(dpdo_dataset_generate(a, "fedplt-logistic", &go), DPDO_E_INVAL);
    go.scale = 1;
    go.n_agents = 11;
    CHECK_EQ(dpdo_dataset_generate(a, "fedplt-logistic", &go), DPDO_E_INVAL);
    go.n_agents = 1;
    go.normalize_rows = 2;
    CHECK_EQ(dpdo_dataset_generate(a, "fedplt-logistic", &go), DPDO_E_INVAL);
    go.normalize_rows = -1;
    go.n = INT64_MAX / 4;
    CHECK_EQ(dpdo_dataset_generate(a, "epsilon-like", &go), DPDO_E_INVAL);
    CHECK_EQ(dpdo_dataset_rows(a), 500); /* unchanged */
    CHECK(dpdo_dataset_generator_name(-1) == NULL);
    CHECK(dpdo_dataset_generator_name(4) == NULL);
    dpdo_dataset_destroy(a);
    dpdo_dataset_destroy(b);
}

/* ---- out of memory --------------------------------------------------------------- */
typedef int (*fill_fn)(dpdo_dataset *ds, const void *arg);

static int fill_dense(dpdo_dataset *ds, const void *arg) { (void)arg; return dpdo_dataset_set_dense(ds, 2, 3, X23, Y2, DPDO_COPY); }
static int fill_csr(dpdo_dataset *ds, const void *arg) { (void)arg; return dpdo_dataset_set_csr(ds, 3, 5, RP, CI, VA, Y3, DPDO_COPY); }
static int fill_libsvm(dpdo_dataset *ds, const void *arg) { return dpdo_dataset_load_libsvm(ds, arg, NULL); }
static int fill_libsvm_csr(dpdo_dataset *ds, const void *arg)
{
    dpdo_load_options o;
    dpdo_load_options_init(&o, sizeof o);
    o.layout = DPDO_LAYOUT_CSR;
    return dpdo_dataset_load_libsvm(ds, arg, &o);
}
static int fill_csv(dpdo_dataset *ds, const void *arg) { return dpdo_dataset_load_csv(ds, arg, NULL); }
static const char *idx_i, *idx_l;
static int fill_idx(dpdo_dataset *ds, const void *arg) { (void)arg; return dpdo_dataset_load_idx(ds, idx_i, idx_l, NULL); }
static int fill_gen(dpdo_dataset *ds, const void *arg)
{
    dpdo_generate_options go;
    dpdo_generate_options_init(&go, sizeof go);
    go.n = 30;
    go.d = 40;
    go.density = 0.1;
    return dpdo_dataset_generate(ds, arg, &go);
}
static int fill_binarize(dpdo_dataset *ds, const void *arg) { (void)arg; return dpdo_dataset_binarize(ds, DPDO_BINARY_EVEN_ODD, 0); }
static int fill_classes(dpdo_dataset *ds, const void *arg)
{
    (void)arg;
    int32_t c[2] = {4, 5};
    return dpdo_dataset_set_classes(ds, c, 2);
}

static void oom_fill(const char *what, fill_fn fn, const void *arg)
{
    dpdo_dataset *ds = new_ds();
    int32_t c0[2] = {1, 2};
    /* prior content to check "unchanged": 2 x 3 with classes */
    dpdo_dataset_set_dense(ds, 2, 3, X23, Y2, DPDO_COPY);
    dpdo_dataset_set_classes(ds, c0, 2);
    int done = 0;
    for (long k = 0; k < 1000 && !done; k++) {
        dpdo__fault_arm(k);
        int rc = fn(ds, arg);
        int fired = dpdo__fault_fired();
        dpdo__fault_arm(-1);
        if (rc == DPDO_OK) {
            CHECK_MSG(!fired, "%s: success although allocation %ld failed", what, k);
            done = 1;
        } else {
            CHECK_MSG(rc == DPDO_E_NOMEM, "%s: k = %ld: rc %d (%s)", what, k, rc, dpdo_dataset_errmsg(ds));
            CHECK_EQ(dpdo_dataset_rows(ds), 2);
            CHECK_EQ(dpdo_dataset_features(ds), 3);
            int32_t cc[2];
            CHECK_EQ(dpdo_dataset_get_classes(ds, cc, 2), DPDO_OK);
            CHECK(cc[0] == 1);
            double y[2];
            dpdo_dataset_get_labels(ds, y, 2);
            CHECK(y[0] == 1 && y[1] == -1);
        }
    }
    CHECK_MSG(done, "%s never succeeded", what);
    dpdo_dataset_destroy(ds);
}

static void test_oom(void)
{
    /* create */
    int done = 0;
    for (long k = 0; k < 10 && !done; k++) {
        dpdo_dataset *ds = (dpdo_dataset *)1;
        dpdo__fault_arm(k);
        int rc = dpdo_dataset_create(&ds);
        dpdo__fault_arm(-1);
        if (rc == DPDO_OK) done = 1;
        else CHECK(rc == DPDO_E_NOMEM && ds == NULL);
        dpdo_dataset_destroy(ds);
    }
    CHECK(done);
    oom_fill("set_dense", fill_dense, NULL);
    oom_fill("set_csr", fill_csr, NULL);
    const char *svm = "1 1:1 2:2\n-1 3:1\n1 1:0.5\n1 2:1\n";
    oom_fill("libsvm", fill_libsvm, tmp_text(svm));
    oom_fill("libsvm csr", fill_libsvm_csr, tmp_text(svm));
    oom_fill("libsvm gz", fill_libsvm, tmp_gz(svm, strlen(svm)));
    oom_fill("csv", fill_csv, tmp_text("1,2,3\n0,4,5\n"));
    unsigned char img[16 + 5 * 6], lab[8 + 5];
    size_t ll, il = make_idx(img, lab, 5, 2, 3, &ll);
    idx_i = tmp_gz(img, il);
    idx_l = tmp_bytes(lab, ll, ".l");
    oom_fill("idx", fill_idx, NULL);
    for (int k = 0; dpdo_dataset_generator_name(k); k++)
        oom_fill(dpdo_dataset_generator_name(k), fill_gen, dpdo_dataset_generator_name(k));
    oom_fill("binarize", fill_binarize, NULL);
    oom_fill("set_classes", fill_classes, NULL);
    /* shards and partitions */
    dpdo_dataset *ds = new_ds();
    fill_gen(ds, "epsilon-like");
    int64_t rows[2] = {1, 2};
    done = 0;
    for (long k = 0; k < 20 && !done; k++) {
        dpdo_shard *s = (dpdo_shard *)1;
        dpdo__fault_arm(k);
        int rc = dpdo_shard_create(&s, ds, rows, 2);
        dpdo__fault_arm(-1);
        if (rc == DPDO_OK) done = 1;
        else CHECK(rc == DPDO_E_NOMEM && s == NULL);
        dpdo_shard_destroy(s);
        CHECK_EQ(((struct dpdo_dataset *)ds)->refs, 0);
    }
    CHECK(done);
    done = 0;
    for (long k = 0; k < 20 && !done; k++) {
        dpdo_shard *s = (dpdo_shard *)1;
        dpdo__fault_arm(k);
        int rc = dpdo_shard_create_range(&s, ds, 1, 2);
        dpdo__fault_arm(-1);
        if (rc == DPDO_OK) done = 1;
        else CHECK(rc == DPDO_E_NOMEM && s == NULL);
        dpdo_shard_destroy(s);
    }
    CHECK(done);
    done = 0;
    for (long k = 0; k < 50 && !done; k++) {
        dpdo_shard *sh[4];
        dpdo__fault_arm(k);
        int rc = dpdo_dataset_partition(ds, 4, NULL, 5, sh);
        dpdo__fault_arm(-1);
        if (rc == DPDO_OK) {
            done = 1;
            for (int j = 0; j < 4; j++) dpdo_shard_destroy(sh[j]);
        } else {
            CHECK_EQ(rc, DPDO_E_NOMEM);
            for (int j = 0; j < 4; j++) CHECK(sh[j] == NULL);
            CHECK_EQ(((struct dpdo_dataset *)ds)->refs, 0);
        }
    }
    CHECK(done);
    dpdo_dataset_destroy(ds);
}

/* ---- the 8-lane full-batch kernel of the built-in losses (kernels_l8.c) ------------------------ */
/* Plain C model of its order: per sample the margin from 0 over j in order (m = fma(x_hj, w_j, m)),
 * the coefficient of the loss (logistic: the kernel's fma exp of kernels_l8_exp.h,
 * c = -y ((s >= 0 ? 1 : e) / (1 + e)); hinge; squared), clipped; lane h mod 8 accumulates
 * fma(c, x_hj, G) (and the loss) in order of h; lanes combined as ((0+4)+(1+5))+((2+6)+(3+7)),
 * times scale. C99 fma() is correctly rounded (IEEE 754), so this model is the
 * kernel's exact result on every path. Built with -DDPDO__L8_NO_FMA: the FMA-free kernel (two
 * roundings, vmath_impl.h's exp, a = scale c accumulated). */
#ifndef DPDO__L8_NO_FMA
#define L8M_ON 1
#define L8M_LATE 1 /* G sums c x; scale times each lane tree */
#define L8M_FMA(a, b, c) fma(a, b, c)
#define L8M_EXP(x) dpdo__l8_exp_neg(x)
#else
#define L8M_ON 0
#define L8M_LATE 0 /* G sums (scale c) x */
#define L8M_FMA(a, b, c) ((a) * (b) + (c))
#define L8M_EXP(x) dpdo__exp_neg(x)
#endif
static void l8_model(int kind, const double *X, const double *y, const double *norm,
                     const int64_t *rows, int64_t q, int64_t d, const double *w, double clip,
                     double scale, double *grad, double *loss, int64_t *ncl, int mfma)
{
    double G[16][8] = {{0}}, L[8] = {0};
    *ncl = 0;
    for (int64_t h = 0; h < q; h++) {
        const double *x = X + rows[h] * d;
        double m = 0.0;
        for (int64_t j = 0; j < d; j++) m = mfma ? L8M_FMA(x[j], w[j], m) : m + x[j] * w[j];
        double s = -y[rows[h]] * m, c, l;
        if (kind == DPDO__L8_LOGISTIC) { /* lib/model/loss.c's phi functions, written out */
            double e = L8M_EXP(s < 0 ? s : -s);
            c = -y[rows[h]] * ((s >= 0 ? 1.0 : e) / (1.0 + e));
            l = (s > 0 ? s : 0.0) + dpdo__log1p01(e);
        } else if (kind == DPDO__L8_HINGE) {
            double z = 1.0 - y[rows[h]] * m;
            c = z > 0.0 ? -y[rows[h]] : 0.0;
            l = z > 0.0 ? z : 0.0;
        } else {
            double r = m - y[rows[h]];
            c = r;
            l = 0.5 * r * r;
        }
        if (clip > 0.0 && fabs(c) * norm[rows[h]] > clip) {
            double cc = clip / norm[rows[h]];
            while (cc * norm[rows[h]] > clip) cc = nextafter(cc, 0.0);
            c = c < 0 ? -cc : cc;
            ++*ncl;
        }
        for (int64_t j = 0; j < d; j++) G[j][h % 8] = L8M_FMA(L8M_LATE ? c : scale * c, x[j], G[j][h % 8]);
        L[h % 8] += l;
    }
    for (int64_t j = 0; j < d; j++) {
        const double t = ((G[j][0] + G[j][4]) + (G[j][1] + G[j][5])) + ((G[j][2] + G[j][6]) + (G[j][3] + G[j][7]));
        grad[j] += L8M_LATE ? scale * t : t;
    }
    *loss = ((L[0] + L[4]) + (L[1] + L[5])) + ((L[2] + L[6]) + (L[3] + L[7]));
}

static int same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

static int l8_path_available(int path)
{
#if defined(__x86_64__)
    if (path == 3) return __builtin_cpu_supports("avx512f");
#ifndef DPDO__L8_NO_FMA
    if (path == 2) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    if (path == 2) return __builtin_cpu_supports("avx2");
#endif
#else
    if (path >= 2) return 0;
#endif
    return 1;
}

static void test_logit8_paths(void)
{
    uint64_t st = 0x8a5cd789635d2dffull;
    static const int64_t QS[] = {1, 7, 8, 9, 63, 250, 253};
    static const int64_t DS[] = {1, 3, 5, 8, 9, 16};
    static const double WS[] = {0.7, 40.0, 2500.0}; /* margins ~1, ~40, ~1500 (exp -> 0) */
    int checked = 0, clipped_cases = 0, underflow = 0;
    for (size_t iq = 0; iq < sizeof QS / sizeof *QS; iq++)
        for (size_t id = 0; id < sizeof DS / sizeof *DS; id++)
            for (size_t iw = 0; iw < sizeof WS / sizeof *WS; iw++) {
                const int64_t q = QS[iq], d = DS[id], n = q + 5;
                double *X = malloc((size_t)(n * d) * sizeof *X), *y = malloc((size_t)n * sizeof *y);
                for (int64_t k = 0; k < n * d; k++) X[k] = 2 * h_urand(&st) - 1;
                for (int64_t k = 0; k < n; k++) y[k] = h_urand(&st) < 0.5 ? -1.0 : 1.0;
                /* |w| ~ 40: some labels +-0.5 (the copy then keeps x_h itself, px = 0) */
                if (iw == 1)
                    for (int64_t k = 0; k < n; k += 3) y[k] *= 0.5;
                double w[16], norm[300];
                for (int64_t j = 0; j < d; j++) w[j] = WS[iw] * (2 * h_urand(&st) - 1) / sqrt((double)d);
                dpdo_dataset *ds = NULL;
                CHECK_EQ(dpdo_dataset_create(&ds), DPDO_OK);
                CHECK_EQ(dpdo_dataset_set_dense(ds, n, d, X, y, DPDO_COPY), DPDO_OK);
                for (int64_t k = 0; k < n; k++) norm[k] = ds->row_norm[k];
                /* a permuted shard of q rows (skips some) and the contiguous range [5, 5 + q) */
                int64_t rows[300], range[300];
                for (int64_t k = 0; k < q; k++) rows[k] = (k * 7 + 3) % n, range[k] = 5 + k;
                for (int64_t k = 0; k < q; k++)
                    for (int64_t u = 0; u < k; u++) if (rows[u] == rows[k]) rows[k] = (rows[k] + 1) % n, u = -1;
                dpdo_shard *sh[2] = {NULL, NULL};
                CHECK_EQ(dpdo_shard_create(&sh[0], ds, rows, q), DPDO_OK);
                CHECK_EQ(dpdo_shard_create_range(&sh[1], ds, 5, q), DPDO_OK);
                for (int s = 0; s < 2; s++) {
                    const int64_t *rl = s ? range : rows;
                    struct dpdo__tcopy *tc = NULL;
                    CHECK_EQ(dpdo__tcopy_build(sh[s], &tc), DPDO_OK);
                    CHECK(tc != NULL && tc->q == q && tc->qp % DPDO__L8_PAD == 0 && tc->qp >= q && tc->qp < q + DPDO__L8_PAD);
                    /* rows stored as -y_h x_h exactly when every label of the shard is +-1 */
                    int pm1 = 1;
                    for (int64_t k = 0; k < q; k++) pm1 &= fabs(y[rl[k]]) == 1.0;
                    CHECK_EQ(tc->px, pm1);
                    if (q >= 3) CHECK_EQ(tc->px, iw != 1);
                    for (int kc = 0; kc < 6; kc++) {
                        const int kind = kc / 2, cl = kc % 2;
                        const double clip = cl ? 0.05 : 0.0, scale = 1.0 / (double)q;
                        double gm[16] = {0}, lm = 0;
                        int64_t nm = 0;
                        /* margins with fma: max row norm 1.7 times |w| <= 2500 */
                        CHECK_EQ(dpdo__l8_margin_fma(ds, w), L8M_ON);
                        l8_model(kind, X, y, norm, rl, q, d, w, clip, scale, gm, &lm, &nm, L8M_ON);
                        clipped_cases += nm > 0;
                        for (int path = 0; path <= 3; path++) {
                            if (!l8_path_available(path)) {
                                double g[16] = {0};
                                CHECK_EQ(dpdo__lin_grad_full8(ds, sh[s]->rows, sh[s]->first, q, NULL, kind, w, clip, scale, g, NULL, NULL, path), 0);
                                continue;
                            }
                            for (int usetc = 0; usetc < 2; usetc++) {
                                double g[16] = {0}, l = -1;
                                int64_t nc = -1;
                                CHECK_EQ(dpdo__lin_grad_full8(ds, sh[s]->rows, sh[s]->first, q, usetc ? tc : NULL, kind, w, clip, scale, g, &l, &nc, path), 1);
                                int ok = same_bits(l, lm) && nc == nm;
                                for (int64_t j = 0; j < d; j++) ok &= same_bits(g[j], gm[j]);
                                CHECK_MSG(ok, "kind %d q %lld d %lld |w| %g shard %d clip %g path %d tc %d: grad[0] %a model %a, loss %a model %a, clipped %lld model %lld",
                                          kind, (long long)q, (long long)d, WS[iw], s, clip, path, usetc, g[0], gm[0], l, lm, (long long)nc, (long long)nm);
                                /* without the loss: the same gradient bits */
                                double g2[16] = {0};
                                dpdo__lin_grad_full8(ds, sh[s]->rows, sh[s]->first, q, usetc ? tc : NULL, kind, w, clip, scale, g2, NULL, NULL, path);
                                for (int64_t j = 0; j < d; j++) CHECK(same_bits(g2[j], gm[j]));
                                checked++;
                            }
                        }
                        /* long-double reference of the mean gradient (no clipping), relative to
                         * the sum of the magnitudes of its terms; plus 1e-300 absolute: exp(x) is 0
                         * below x = -708.39 by design (the exact value is below 2.3e-308) */
                        if (!cl && kind != DPDO__L8_HINGE) { /* hinge: c is a step at y m = 1 */
                            long double ref[16] = {0}, mag[16] = {0};
                            for (int64_t h = 0; h < q; h++) {
                                const double *x = X + rl[h] * d;
                                long double m = 0;
                                for (int64_t j = 0; j < d; j++) m += (long double)x[j] * w[j];
                                long double sv = -y[rl[h]] * m;
                                long double sig = sv >= 0 ? 1.0L / (1.0L + expl(-sv)) : expl(sv) / (1.0L + expl(sv));
                                underflow += kind == DPDO__L8_LOGISTIC && sv < -708.4L;
                                long double c = kind == DPDO__L8_LOGISTIC ? -y[rl[h]] * sig : m - y[rl[h]];
                                for (int64_t j = 0; j < d; j++) {
                                    ref[j] += c * x[j] / (long double)q;
                                    mag[j] += fabsl(c * x[j]) / (long double)q;
                                }
                            }
                            /* mag > 0 (the check is not vacuous) where long double has its own
                             * range: valgrind computes it as double, where exp(-1500) is 0 */
                            volatile long double xm = -1500.0L; /* not folded at compile time */
                            const int ldr = expl(xm) > 0;
                            for (int64_t j = 0; j < d; j++)
                                CHECK_MSG(fabsl(gm[j] - ref[j]) <= 1e-12L * mag[j] + 1e-300L && (mag[j] > 0 || !ldr),
                                          "kind %d q %lld d %lld j %lld: %.17g vs long double %.17Lg (mag %Lg)",
                                          kind, (long long)q, (long long)d, (long long)j, gm[j], ref[j], mag[j]);
                        }
                    }
                    dpdo__tcopy_free(tc);
                }
                dpdo_shard_destroy(sh[0]);
                dpdo_shard_destroy(sh[1]);
                dpdo_dataset_destroy(ds);
                free(X);
                free(y);
            }
    CHECK(checked > 500);
    CHECK(clipped_cases > 20); /* the clip case clips some samples */
    CHECK(underflow > 100);    /* margins in exp's underflow region were exercised */

    /* a dataset whose largest row (not in the shard) times |w| exceeds 2^1015: the margins are
     * computed without fma (two roundings, the overflow behaviour of before) on every path */
    {
        enum { Q = 253, D = 5, N = Q + 5 };
        double *X = malloc(N * D * sizeof *X), y[N], w[D], norm[N];
        for (int k = 0; k < N * D; k++) X[k] = 2 * h_urand(&st) - 1;
        for (int k = 0; k < N; k++) y[k] = h_urand(&st) < 0.5 ? -1.0 : 1.0;
        for (int j = 0; j < D; j++) X[j] = 1e307, w[j] = 3.0 * (2 * h_urand(&st) - 1);
        dpdo_dataset *ds = NULL;
        CHECK_EQ(dpdo_dataset_create(&ds), DPDO_OK);
        CHECK_EQ(dpdo_dataset_set_dense(ds, N, D, X, y, DPDO_COPY), DPDO_OK);
        for (int k = 0; k < N; k++) norm[k] = ds->row_norm[k];
        CHECK_EQ(dpdo__l8_margin_fma(ds, w), 0);
        dpdo_shard *sh = NULL;
        CHECK_EQ(dpdo_shard_create_range(&sh, ds, 5, Q), DPDO_OK);
        struct dpdo__tcopy *tc = NULL;
        CHECK_EQ(dpdo__tcopy_build(sh, &tc), DPDO_OK);
        int64_t range[Q];
        for (int k = 0; k < Q; k++) range[k] = 5 + k;
        double gm[D] = {0}, gf[D] = {0}, lm = 0, lf = 0;
        int64_t nm = 0, nf = 0;
        l8_model(DPDO__L8_LOGISTIC, X, y, norm, range, Q, D, w, 0.0, 1.0 / Q, gm, &lm, &nm, 0);
        l8_model(DPDO__L8_LOGISTIC, X, y, norm, range, Q, D, w, 0.0, 1.0 / Q, gf, &lf, &nf, 1);
        CHECK(!L8M_ON || memcmp(gm, gf, sizeof gm) != 0); /* the two margins do differ here */
        for (int path = 0; path <= 3; path++) {
            if (!l8_path_available(path)) continue;
            for (int usetc = 0; usetc < 2; usetc++) {
                double g[D] = {0}, l = 0;
                CHECK_EQ(dpdo__lin_grad_full8(ds, NULL, 5, Q, usetc ? tc : NULL, DPDO__L8_LOGISTIC, w, 0.0, 1.0 / Q, g, &l, NULL, path), 1);
                CHECK_MSG(memcmp(g, gm, sizeof g) == 0 && same_bits(l, lm), "no-fma margins: path %d tc %d", path, usetc);
            }
        }
        dpdo__tcopy_free(tc);
        dpdo_shard_destroy(sh);
        dpdo_dataset_destroy(ds);
        free(X);
    }
    /* NaN: a sample whose margin is Inf - Inf makes every gradient entry and the loss NaN on every
     * path, as the 4-lane kernel does (dpdo_loss_eval then reports DPDO_E_NUMERIC) */
    {
        enum { Q = 11, D = 3 };
        double X[Q * D], y[Q];
        for (int k = 0; k < Q * D; k++) X[k] = 2 * h_urand(&st) - 1;
        for (int k = 0; k < Q; k++) y[k] = k & 1 ? 1.0 : -1.0;
        X[4 * D + 0] = 1e300, X[4 * D + 1] = -1e300, X[4 * D + 2] = 0.0;
        const double w[D] = {1e10, 1e10, 0.5};
        dpdo_dataset *ds = NULL;
        CHECK_EQ(dpdo_dataset_create(&ds), DPDO_OK);
        CHECK_EQ(dpdo_dataset_set_dense(ds, Q, D, X, y, DPDO_COPY), DPDO_OK);
        dpdo_shard *sh = NULL;
        CHECK_EQ(dpdo_shard_create_range(&sh, ds, 0, Q), DPDO_OK);
        struct dpdo__tcopy *tc = NULL;
        CHECK_EQ(dpdo__tcopy_build(sh, &tc), DPDO_OK);
        double g4[D] = {0}, l4 = 0;
        CHECK_EQ(dpdo__lin_grad_logistic(ds, NULL, Q, w, 0.0, 1.0, g4, &l4, NULL), 1);
        CHECK(isnan(g4[0]) && isnan(g4[1]) && isnan(g4[2]) && isnan(l4));
        for (int path = 0; path <= 3; path++) {
            if (!l8_path_available(path)) continue;
            for (int usetc = 0; usetc < 2; usetc++) {
                double g[D] = {0}, l = 0;
                CHECK_EQ(dpdo__lin_grad_full8(ds, NULL, 0, Q, usetc ? tc : NULL, DPDO__L8_LOGISTIC, w, 0.0, 1.0, g, &l, NULL, path), 1);
                CHECK_MSG(isnan(g[0]) && isnan(g[1]) && isnan(g[2]) && isnan(l), "path %d tc %d", path, usetc);
            }
        }
        dpdo__tcopy_free(tc);
        dpdo_shard_destroy(sh);
        dpdo_dataset_destroy(ds);
    }
    /* layouts the kernel does not take: d > 16, CSR */
    {
        double X[17] = {0}, y[1] = {1};
        dpdo_dataset *ds = NULL;
        CHECK_EQ(dpdo_dataset_create(&ds), DPDO_OK);
        CHECK_EQ(dpdo_dataset_set_dense(ds, 1, 17, X, y, DPDO_COPY), DPDO_OK);
        double g[17] = {0};
        CHECK_EQ(dpdo__lin_grad_full8(ds, NULL, 0, 1, NULL, DPDO__L8_LOGISTIC, X, 0.0, 1.0, g, NULL, NULL, -1), 0);
        CHECK_EQ(dpdo__full8_applies(ds), 0);
        dpdo_shard *sh = NULL;
        CHECK_EQ(dpdo_shard_create_range(&sh, ds, 0, 1), DPDO_OK);
        struct dpdo__tcopy *tc = (struct dpdo__tcopy *)1;
        CHECK_EQ(dpdo__tcopy_build(sh, &tc), DPDO_OK);
        CHECK(tc == NULL);
        dpdo_shard_destroy(sh);
        dpdo_dataset_destroy(ds);
    }
}

int main(void)
{
    RUN(test_create_destroy);
    RUN(test_set_dense);
    RUN(test_set_csr);
    RUN(test_classes_binarize);
    RUN(test_shards);
    RUN(test_partition);
    RUN(test_kernels);
    RUN(test_clip_bound);
    RUN(test_logit8_paths);
    RUN(test_parse_double);
    RUN(test_libsvm_good);
    RUN(test_libsvm_bad);
    RUN(test_options_versioning);
    RUN(test_libsvm_gzip);
    RUN(test_roundtrip);
    RUN(test_csv);
    RUN(test_idx_small);
    RUN(test_fashion_mnist);
    RUN(test_generators);
    RUN(test_oom);
    for (int k = 0; k < ntmp && k < 64; k++) unlink(tmpbufs[k]);
    return h_finish();
}
