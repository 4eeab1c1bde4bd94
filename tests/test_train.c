/* SPDX-License-Identifier: BSD-3-Clause */
/* dpdo_train (include/dpdo/train.h) and the 0.3 additions to model files: bad input is refused
 * with a message naming it and the model unchanged; REPRODUCIBLE runs are bit-identical and
 * the privacy record is the accountant's; a partition by array equals the contiguous one; a
 * one-vs-rest model is exactly the K binary runs at (epsilon/K, delta/K) done one by one with
 * the sum recorded, predicts the argmax class and gives the dataset its labels back; save to a
 * buffer and parse back is bit-identical; the LIBLINEAR and CSV exports read back here give the
 * model's values. tests/python/test_train_cli.py checks accuracy against scikit-learn and the
 * export against LIBLINEAR's own predict. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "dpdo/dpdo.h"

static char tmpdir[256];
static const char *tpath(const char *name)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
    return buf;
}

static dpdo_dataset *binary_data(void)
{
    dpdo_dataset *ds = NULL;
    dpdo_dataset_create(&ds);
    dpdo_generate_options g;
    dpdo_generate_options_init(&g, sizeof g);
    g.n = 800;
    g.d = 10;
    g.seed = 11;
    CHECK_EQ(dpdo_dataset_generate(ds, "epsilon-like", &g), DPDO_OK);
    return ds;
}

enum { MN = 600, MD = 6, MK = 3 };
/* three classes around three directions, rows of norm <= 1 (a fixed LCG: no seed to pick) */
static dpdo_dataset *three_classes(int32_t *cls_out)
{
    static double X[MN * MD], y[MN];
    int32_t cls[MN];
    uint64_t s = 12345;
    for (int i = 0; i < MN; i++) {
        int c = i % MK;
        double nrm = 0;
        for (int j = 0; j < MD; j++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            double u = (double)(s >> 11) / 9007199254740992.0 - 0.5;
            X[i * MD + j] = (j == 2 * c ? 1.0 : 0.0) + u;
            nrm += X[i * MD + j] * X[i * MD + j];
        }
        for (int j = 0; j < MD; j++)
            X[i * MD + j] /= sqrt(nrm);
        y[i] = 1.0;
        cls[i] = 10 * c + 5; /* ids 5, 15, 25 */
        if (cls_out) cls_out[i] = cls[i];
    }
    dpdo_dataset *ds = NULL;
    dpdo_dataset_create(&ds);
    CHECK_EQ(dpdo_dataset_set_dense(ds, MN, MD, X, y, DPDO_COPY), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_classes(ds, cls, MN), DPDO_OK);
    return ds;
}

static void repro(dpdo_train_options *o, uint64_t seed)
{
    dpdo_train_options_init(o, sizeof *o);
    o->randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    o->seed = seed;
}

static int same_x(dpdo_model *a, dpdo_model *b)
{
    int64_t d = dpdo_model_dim(a);
    if (d != dpdo_model_dim(b) || d < 1) return 0;
    double *x = malloc((size_t)d * 2 * sizeof(double));
    int ok = dpdo_model_get_x(a, x, d) == DPDO_OK && dpdo_model_get_x(b, x + d, d) == DPDO_OK &&
             memcmp(x, x + d, (size_t)d * sizeof(double)) == 0;
    free(x);
    return ok;
}

static void expect_refused(dpdo_model *m, dpdo_dataset *ds, int64_t nodes, const char *alg,
                           double eps, double delta, const dpdo_train_options *o, int status,
                           const char *needle)
{
    int rc = dpdo_train(m, ds, nodes, alg, eps, delta, o);
    CHECK_MSG(rc == status, "status %d, expected %d (%s)", rc, status, dpdo_model_errmsg(m));
    CHECK_STR_CONTAINS(dpdo_model_errmsg(m), needle);
}

static void test_bad_input(void)
{
    dpdo_dataset *ds = binary_data();
    dpdo_model *m = NULL, *ref = NULL;
    dpdo_model_create(&m);
    dpdo_model_create(&ref);
    dpdo_train_options o;
    repro(&o, 1);
    CHECK_EQ(dpdo_train(NULL, ds, 4, "dp-dda", 1, 1e-5, &o), DPDO_E_INVAL);
    CHECK_EQ(dpdo_train(m, ds, 4, "dp-dda", 1, 1e-5, &o), DPDO_OK);
    CHECK_EQ(dpdo_train(ref, ds, 4, "dp-dda", 1, 1e-5, &o), DPDO_OK);
    expect_refused(m, NULL, 4, "dp-dda", 1, 1e-5, &o, DPDO_E_INVAL, "ds is NULL");
    expect_refused(m, ds, 4, "dp-ddx", 1, 1e-5, &o, DPDO_E_INVAL, "algorithm 'dp-ddx' is unknown");
    expect_refused(m, ds, 0, "dp-dda", 1, 1e-5, &o, DPDO_E_INVAL, "nodes = 0: must be in [1, 800]");
    expect_refused(m, ds, 801, "dp-dda", 1, 1e-5, &o, DPDO_E_INVAL, "nodes = 801");
    expect_refused(m, ds, 4, "dp-dda", -1, 1e-5, &o, DPDO_E_INVAL, "epsilon = -1");
    expect_refused(m, ds, 4, "dp-dda", NAN, 1e-5, &o, DPDO_E_INVAL, "epsilon = nan");
    expect_refused(m, ds, 4, "dp-dda", 1, 1, &o, DPDO_E_INVAL, "delta = 1: must be in (0, 1)");
    dpdo_train_options bad = o;
    bad.partition = DPDO_PARTITION_BY_ARRAY;
    expect_refused(m, ds, 4, "dp-dda", 1, 1e-5, &bad, DPDO_E_INVAL, "node_of_row is needed");
    int32_t *where = calloc(800, sizeof *where);
    for (int i = 0; i < 800; i++)
        where[i] = i % 3; /* node 3 gets nothing */
    bad.node_of_row = where;
    expect_refused(m, ds, 4, "dp-dda", 1, 1e-5, &bad, DPDO_E_INVAL, "node 3 has no rows");
    where[5] = 7;
    expect_refused(m, ds, 4, "dp-dda", 1, 1e-5, &bad, DPDO_E_INVAL, "node_of_row[5] = 7");
    free(where);
    bad = o;
    bad.loss = "no-such-loss";
    expect_refused(m, ds, 4, "dp-dda", 1, 1e-5, &bad, DPDO_E_INVAL, "loss 'no-such-loss'");
    bad = o;
    bad.reserved[0] = 1;
    expect_refused(m, ds, 4, "dp-dda", 1, 1e-5, &bad, DPDO_E_VERSION, "dpdo_train_options");
    /* labels other than +1/-1 without class ids */
    double X[4] = {1, 0, 0, 1}, y[2] = {1, 0.5};
    dpdo_dataset *odd = NULL;
    dpdo_dataset_create(&odd);
    dpdo_dataset_set_dense(odd, 2, 2, X, y, DPDO_COPY);
    expect_refused(m, odd, 1, "dp-dda", 1, 1e-5, &o, DPDO_E_INVAL,
                   "row 1 has label 0.5: labels must be +1/-1");
    dpdo_dataset_destroy(odd);
    /* every failure left the first model in place */
    CHECK(same_x(m, ref));
    dpdo_model_destroy(m);
    dpdo_model_destroy(ref);
    dpdo_dataset_destroy(ds);
}

static void test_reproducible_and_record(void)
{
    dpdo_dataset *ds = binary_data();
    dpdo_model *a = NULL, *b = NULL, *c = NULL;
    dpdo_model_create(&a);
    dpdo_model_create(&b);
    dpdo_model_create(&c);
    dpdo_train_options o;
    repro(&o, 5);
    CHECK_EQ(dpdo_train(a, ds, 4, "dp-dda", 1.0, 1e-5, &o), DPDO_OK);
    CHECK_EQ(dpdo_train(b, ds, 4, "dp-dda", 1.0, 1e-5, &o), DPDO_OK);
    o.seed = 6;
    CHECK_EQ(dpdo_train(c, ds, 4, "dp-dda", 1.0, 1e-5, &o), DPDO_OK);
    CHECK(same_x(a, b));
    CHECK(!same_x(a, c));
    double eps = 0, delta = 0;
    CHECK_EQ(dpdo_model_privacy(a, &eps, &delta), DPDO_OK);
    /* the accountant's rigorous figure: within the target, and the calibration spends nearly it */
    CHECK_MSG(eps <= 1.0 + 1e-9 && eps > 0.9, "epsilon %g", eps);
    CHECK(delta == 1e-5);
    CHECK_EQ(dpdo_model_nodes(a), 4);
    CHECK_EQ(dpdo_model_rounds(a), 200); /* the plan of DP-DDA */
    CHECK(strcmp(dpdo_model_text(a, "algorithm"), "dp-dda") == 0);
    CHECK(strcmp(dpdo_model_text(a, "composition"), "") == 0);
    CHECK(strcmp(dpdo_model_text(a, "accountant"), "none") != 0);
    int64_t k = -1;
    CHECK_EQ(dpdo_model_classes(a, NULL, 0, &k), DPDO_OK);
    CHECK_EQ(k, 0);
    /* DP-WOR-SGD's plan: 40 passes in full local batches (200 rows per node), one step each */
    CHECK_EQ(dpdo_train(c, ds, 4, "dp-wor-sgd", 1.0, 1e-5, &o), DPDO_OK);
    CHECK_EQ(dpdo_model_rounds(c), 40);
    /* explicit rounds and no noise */
    o.max_rounds = 17;
    CHECK_EQ(dpdo_train(c, ds, 3, "do-adp", INFINITY, 1e-5, &o), DPDO_OK);
    CHECK_EQ(dpdo_model_rounds(c), 17);
    CHECK_EQ(dpdo_model_privacy(c, &eps, &delta), DPDO_OK);
    CHECK(isinf(eps));
    dpdo_model_destroy(a);
    dpdo_model_destroy(b);
    dpdo_model_destroy(c);
    dpdo_dataset_destroy(ds);
}

static void test_partition_by_array(void)
{
    dpdo_dataset *ds = binary_data();
    dpdo_model *a = NULL, *b = NULL;
    dpdo_model_create(&a);
    dpdo_model_create(&b);
    dpdo_train_options o;
    repro(&o, 9);
    o.partition = DPDO_PARTITION_CONTIGUOUS;
    CHECK_EQ(dpdo_train(a, ds, 3, "dp-dda", 2.0, 1e-5, &o), DPDO_OK);
    /* 800 rows over 3 nodes: blocks of 267, 267, 266 */
    int32_t *where = malloc(800 * sizeof *where);
    for (int i = 0; i < 800; i++)
        where[i] = i < 267 ? 0 : i < 534 ? 1 : 2;
    o.partition = DPDO_PARTITION_BY_ARRAY;
    o.node_of_row = where;
    CHECK_EQ(dpdo_train(b, ds, 3, "dp-dda", 2.0, 1e-5, &o), DPDO_OK);
    CHECK(same_x(a, b));
    where[0] = 1; /* another partition, another model */
    CHECK_EQ(dpdo_train(b, ds, 3, "dp-dda", 2.0, 1e-5, &o), DPDO_OK);
    CHECK(!same_x(a, b));
    free(where);
    dpdo_model_destroy(a);
    dpdo_model_destroy(b);
    dpdo_dataset_destroy(ds);
}

static void test_one_vs_rest(void)
{
    int32_t cls[MN];
    dpdo_dataset *ds = three_classes(cls);
    dpdo_model *m = NULL, *bin = NULL;
    dpdo_model_create(&m);
    dpdo_model_create(&bin);
    dpdo_train_options o;
    repro(&o, 3);
    double before[MN], after[MN];
    dpdo_dataset_get_labels(ds, before, MN);
    CHECK_EQ(dpdo_train(m, ds, 4, "dp-dda", 3.0, 3e-5, &o), DPDO_OK);
    dpdo_dataset_get_labels(ds, after, MN);
    CHECK(memcmp(before, after, sizeof before) == 0); /* labels given back */
    int32_t ids[MK];
    int64_t K = 0;
    CHECK_EQ(dpdo_model_classes(m, ids, 2, &K), DPDO_E_INVAL); /* cap too small */
    CHECK_EQ(dpdo_model_classes(m, ids, MK, &K), DPDO_OK);
    CHECK_EQ(K, 3);
    CHECK(ids[0] == 5 && ids[1] == 15 && ids[2] == 25);
    CHECK(strcmp(dpdo_model_text(m, "composition"), "basic") == 0);
    /* each vector is the binary run of its class at (epsilon/3, delta/3), done here by hand on a
     * copy relabelled one-vs-rest; the record is the sum of the three runs' figures */
    double w[MK][MD], v[MD], eps_sum = 0, delta_sum = 0;
    for (int k = 0; k < MK; k++) {
        dpdo_dataset *c = three_classes(NULL);
        CHECK_EQ(dpdo_dataset_binarize(c, DPDO_BINARY_ONE_VS_REST, ids[k]), DPDO_OK);
        double lab[MN];
        dpdo_dataset_get_labels(c, lab, MN);
        dpdo_dataset *plain = NULL; /* no class ids: dpdo_train takes the labels as they are */
        dpdo_dataset_create(&plain);
        double X[MN * MD];
        for (int i = 0; i < MN; i++)
            dpdo_dataset_get_row(c, i, X + i * MD, MD);
        dpdo_dataset_set_dense(plain, MN, MD, X, lab, DPDO_COPY);
        CHECK_EQ(dpdo_train(bin, plain, 4, "dp-dda", 1.0, 1e-5, &o), DPDO_OK);
        CHECK_EQ(dpdo_model_get_x(bin, v, MD), DPDO_OK);
        CHECK_EQ(dpdo_model_get_class_x(m, k, w[k], MD), DPDO_OK);
        CHECK_MSG(memcmp(v, w[k], sizeof v) == 0, "class %d differs from its own binary run", k);
        double e, d;
        dpdo_model_privacy(bin, &e, &d);
        eps_sum += e;
        delta_sum += d;
        dpdo_dataset_destroy(plain);
        dpdo_dataset_destroy(c);
    }
    CHECK_EQ(dpdo_model_get_class_x(m, 3, v, MD), DPDO_E_INVAL);
    double e, d;
    dpdo_model_privacy(m, &e, &d);
    CHECK(e == eps_sum && d == delta_sum);
    CHECK(e <= 3.0 + 1e-9 && e > 2.7);
    /* predicted class = argmax of the three margins, computed here */
    double pred[MN], z[MK][MN];
    CHECK_EQ(dpdo_model_predict(m, ds, DPDO_PREDICT_LABEL, pred, MN), DPDO_OK);
    for (int k = 0; k < MK; k++)
        dpdo_dataset_margins(ds, w[k], MD, z[k], MN);
    int wrong = 0, right = 0;
    for (int i = 0; i < MN; i++) {
        int best = 0;
        for (int k = 1; k < MK; k++)
            if (z[k][i] > z[best][i]) best = k;
        wrong += pred[i] != (double)ids[best];
        right += pred[i] == (double)cls[i];
    }
    CHECK_EQ(wrong, 0);
    printf("# one-vs-rest, 3 classes, epsilon 3 (1 per class): training accuracy %.3f\n",
           right / (double)MN);
    CHECK(right > MN / 2); /* well separated classes: far above chance (1/3) */
    CHECK_EQ(dpdo_model_predict(m, ds, DPDO_PREDICT_MARGIN, pred, MN), DPDO_E_UNSUPPORTED);
    dpdo_model_destroy(bin);
    dpdo_model_destroy(m);
    dpdo_dataset_destroy(ds);
}

/* two class ids: one run, the larger id is +1, labels predicted as class ids; borrowed caller
 * arrays are never written (binarize gives the dataset its own label array) */
static void test_two_class_ids_borrowed(void)
{
    enum { N = 200, D = 4 };
    static double X[N * D], y[N], y0[N];
    int32_t cls[N];
    for (int i = 0; i < N; i++) {
        int c = i % 2;
        for (int j = 0; j < D; j++)
            X[i * D + j] = (j == 0 ? (c ? 0.5 : -0.5) : 0.0) + 0.1 * ((i * 7 + j * 3) % 5 - 2) / 2.0;
        y[i] = y0[i] = 7.0; /* not +1/-1: the class ids are what counts */
        cls[i] = c ? 8 : 3;
    }
    dpdo_dataset *ds = NULL;
    dpdo_model *m = NULL;
    dpdo_dataset_create(&ds);
    dpdo_model_create(&m);
    CHECK_EQ(dpdo_dataset_set_dense(ds, N, D, X, y, DPDO_BORROW), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_classes(ds, cls, N), DPDO_OK);
    dpdo_train_options o;
    repro(&o, 2);
    CHECK_EQ(dpdo_train(m, ds, 2, "dp-dda", INFINITY, 1e-5, &o), DPDO_OK);
    CHECK(memcmp(y, y0, sizeof y) == 0);
    double lab[N], pred[N], x[D];
    dpdo_dataset_get_labels(ds, lab, N);
    CHECK(memcmp(lab, y0, sizeof lab) == 0);
    int32_t ids[2];
    int64_t K = 0;
    CHECK_EQ(dpdo_model_classes(m, ids, 2, &K), DPDO_OK);
    CHECK(K == 2 && ids[0] == 3 && ids[1] == 8);
    CHECK(strcmp(dpdo_model_text(m, "composition"), "") == 0);
    CHECK_EQ(dpdo_model_get_x(m, x, D), DPDO_OK);
    CHECK(x[0] > 0); /* class 8 (+1) has the positive first feature */
    CHECK_EQ(dpdo_model_predict(m, ds, DPDO_PREDICT_LABEL, pred, N), DPDO_OK);
    int right = 0;
    for (int i = 0; i < N; i++) {
        CHECK(pred[i] == 3 || pred[i] == 8);
        right += pred[i] == cls[i];
    }
    CHECK_EQ(right, N); /* separable by the first feature, no noise */
    dpdo_model_destroy(m);
    dpdo_dataset_destroy(ds);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[1 << 16];
    *len = fread(buf, 1, sizeof buf - 1, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

static void test_buffer_round_trip(void)
{
    dpdo_dataset *ds = three_classes(NULL);
    dpdo_model *m = NULL, *l = NULL;
    dpdo_model_create(&m);
    dpdo_model_create(&l);
    int64_t len = -1;
    CHECK_EQ(dpdo_model_save_buffer(m, NULL, 0, &len), DPDO_E_STATE); /* empty */
    dpdo_train_options o;
    repro(&o, 4);
    CHECK_EQ(dpdo_train(m, ds, 2, "do-adp", 2.0, 1e-5, &o), DPDO_OK);
    CHECK_EQ(dpdo_model_save_buffer(m, NULL, 0, &len), DPDO_OK);
    CHECK(len > 100);
    char *buf = malloc((size_t)len + 1);
    CHECK_EQ(dpdo_model_save_buffer(m, buf, len, &len), DPDO_E_INVAL); /* no room for the NUL */
    CHECK_EQ(dpdo_model_save_buffer(m, buf, len + 1, &len), DPDO_OK);
    CHECK((int64_t)strlen(buf) == len);
    CHECK(strncmp(buf, "dpdo-model 2\n", 13) == 0);
    /* the same text as the file */
    CHECK_EQ(dpdo_model_save(m, tpath("m.model")), DPDO_OK);
    size_t flen = 0;
    char *file = slurp(tpath("m.model"), &flen);
    CHECK(file && flen == (size_t)len && memcmp(file, buf, flen) == 0);
    CHECK_EQ(dpdo_model_parse(l, buf, (size_t)len, "buffer"), DPDO_OK);
    CHECK_EQ(dpdo_model_integrity(l), DPDO_MODEL_INTEGRITY_CHECKSUM);
    for (int k = 0; k < MK; k++) {
        double a[MD], b[MD];
        dpdo_model_get_class_x(m, k, a, MD);
        dpdo_model_get_class_x(l, k, b, MD);
        CHECK(memcmp(a, b, sizeof a) == 0);
    }
    double e1, d1, e2, d2;
    dpdo_model_privacy(m, &e1, &d1);
    dpdo_model_privacy(l, &e2, &d2);
    CHECK(e1 == e2 && d1 == d2);
    CHECK_EQ(dpdo_model_nodes(l), 2);
    CHECK(strcmp(dpdo_model_text(l, "composition"), "basic") == 0);
    int64_t K = 0;
    dpdo_model_classes(l, NULL, 0, &K);
    CHECK_EQ(K, 3);
    /* an edited buffer is refused; a keyed buffer needs its key */
    char *bad = malloc((size_t)len + 1);
    memcpy(bad, buf, (size_t)len + 1);
    char *p = strstr(bad, "nodes 2");
    CHECK(p != NULL);
    if (p) p[6] = '3';
    CHECK_EQ(dpdo_model_parse(l, bad, (size_t)len, "edited"), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_model_errmsg(l), "checksum mismatch");
    /* format-2 keys in a format-1 file are unknown keys */
    memcpy(bad, buf, (size_t)len + 1);
    bad[11] = '1';
    char *tr = strstr(bad, "# checksum");
    CHECK(tr != NULL);
    if (tr) *tr = '\0';
    CHECK_EQ(dpdo_model_parse(l, bad, strlen(bad), "v1"), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_model_errmsg(l), "unknown key 'composition'");
    const unsigned char key[16] = "0123456789abcdef";
    dpdo_model_set_key(m, key, sizeof key);
    CHECK_EQ(dpdo_model_save_buffer(m, buf, len + 1, &len), DPDO_OK);
    CHECK(strstr(buf, "# mac blake2b-256 ") != NULL);
    dpdo_model *nokey = NULL;
    dpdo_model_create(&nokey);
    CHECK_EQ(dpdo_model_parse(nokey, buf, (size_t)len, "mac"), DPDO_E_FORMAT);
    dpdo_model_set_key(nokey, key, sizeof key);
    CHECK_EQ(dpdo_model_parse(nokey, buf, (size_t)len, "mac"), DPDO_OK);
    CHECK_EQ(dpdo_model_integrity(nokey), DPDO_MODEL_INTEGRITY_MAC);
    dpdo_model_destroy(nokey);
    /* a model without the new fields is still written as format 1 (0.2 readers load it) */
    double x[2] = {0.5, -1};
    dpdo_model_set(l, x, 2, "logistic", "elsewhere");
    CHECK_EQ(dpdo_model_save_buffer(l, buf, len + 1, &len), DPDO_OK);
    CHECK(strncmp(buf, "dpdo-model 1\n", 13) == 0);
    free(bad);
    free(buf);
    dpdo_model_destroy(m);
    dpdo_model_destroy(l);
    dpdo_dataset_destroy(ds);
}

/* read LIBLINEAR's model format back: header lines, then nr_feature lines of nr_w values */
static void check_liblinear(dpdo_model *m, const char *path, const char *labels, int nr_w)
{
    size_t len = 0;
    char *t = slurp(path, &len);
    CHECK(t != NULL);
    if (!t) return;
    char want[200];
    snprintf(want, sizeof want,
             "solver_type L2R_LR\nnr_class %d\nlabel %s\nnr_feature %d\nbias -1\nw\n",
             nr_w == 1 ? 2 : nr_w, labels, MD);
    CHECK_MSG(strncmp(t, want, strlen(want)) == 0, "header:\n%.200s", t);
    char *p = t + strlen(want);
    for (int j = 0; j < MD; j++) {
        for (int k = 0; k < nr_w; k++) {
            double v = strtod(p, &p), x[MD];
            dpdo_model_get_class_x(m, k, x, MD);
            CHECK_MSG(v == x[j], "feature %d class %d: %.17g vs %.17g", j, k, v, x[j]);
        }
        while (*p == ' ')
            p++;
        CHECK(*p == '\n');
        p++;
    }
    CHECK(*p == '\0');
}

static void test_export(void)
{
    dpdo_dataset *ds = three_classes(NULL);
    dpdo_model *m = NULL;
    dpdo_model_create(&m);
    dpdo_train_options o;
    repro(&o, 8);
    CHECK_EQ(dpdo_model_export(m, DPDO_MODEL_EXPORT_CSV, tpath("e.csv")), DPDO_E_STATE);
    CHECK_EQ(dpdo_train(m, ds, 3, "dp-dda", 3.0, 1e-5, &o), DPDO_OK);
    CHECK_EQ(dpdo_model_export(m, 7, tpath("e.csv")), DPDO_E_INVAL);
    CHECK_EQ(dpdo_model_export(m, DPDO_MODEL_EXPORT_LIBLINEAR, tpath("e3.ll")), DPDO_OK);
    check_liblinear(m, tpath("e3.ll"), "5 15 25", 3);
    CHECK_EQ(dpdo_model_export(m, DPDO_MODEL_EXPORT_CSV, tpath("e.csv")), DPDO_OK);
    size_t len = 0;
    char *t = slurp(tpath("e.csv"), &len);
    CHECK(t && strncmp(t, "label,w1,w2,w3,w4,w5,w6\n", 24) == 0);
    char *p = t ? t + 24 : NULL;
    for (int k = 0; p && k < MK; k++) {
        double x[MD];
        dpdo_model_get_class_x(m, k, x, MD);
        CHECK_EQ(strtol(p, &p, 10), 5 + 10 * k);
        for (int j = 0; j < MD; j++) {
            CHECK(*p == ',');
            CHECK(strtod(p + 1, &p) == x[j]);
        }
        CHECK(*p == '\n');
        p++;
    }
    /* a binary model: one vector, label "+1 -1" (LIBLINEAR: decision value > 0 is label[0]) */
    dpdo_dataset *b = binary_data();
    CHECK_EQ(dpdo_train(m, b, 2, "dp-dda", 1.0, 1e-5, &o), DPDO_OK);
    CHECK_EQ(dpdo_model_export(m, DPDO_MODEL_EXPORT_LIBLINEAR, tpath("e1.ll")), DPDO_OK);
    size_t l1;
    char *t1 = slurp(tpath("e1.ll"), &l1);
    CHECK(t1 && strstr(t1, "nr_class 2\nlabel 1 -1\nnr_feature 10\n") != NULL);
    /* the hinge loss is LIBLINEAR's L1-loss SVC; a loss LIBLINEAR has no classifier for is
     * refused */
    double x[3] = {1, 2, 3};
    dpdo_model_set(m, x, 3, "hinge", "elsewhere");
    CHECK_EQ(dpdo_model_export(m, DPDO_MODEL_EXPORT_LIBLINEAR, tpath("h.ll")), DPDO_OK);
    t1 = slurp(tpath("h.ll"), &l1);
    CHECK(t1 && strncmp(t1, "solver_type L2R_L1LOSS_SVC_DUAL\n", 32) == 0);
    dpdo_model_set(m, x, 3, "squared", "elsewhere");
    CHECK_EQ(dpdo_model_export(m, DPDO_MODEL_EXPORT_LIBLINEAR, tpath("s.ll")), DPDO_E_UNSUPPORTED);
    CHECK_STR_CONTAINS(dpdo_model_errmsg(m), "LIBLINEAR has no classifier for the loss 'squared'");
    dpdo_dataset_destroy(b);
    dpdo_model_destroy(m);
    dpdo_dataset_destroy(ds);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dpdo_train_XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    RUN(test_bad_input);
    RUN(test_reproducible_and_record);
    RUN(test_partition_by_array);
    RUN(test_one_vs_rest);
    RUN(test_two_class_ids_borrowed);
    RUN(test_buffer_round_trip);
    RUN(test_export);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) printf("# could not remove %s\n", tmpdir);
    return h_finish();
}
