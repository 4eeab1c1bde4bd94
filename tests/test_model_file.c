/* SPDX-License-Identifier: BSD-3-Clause */
/* Model files (include/dpdo/model_file.h, docs/model.md): a tiny DP-DDA run
 * with the logistic loss in REPRODUCIBLE mode is saved, loaded in a fresh
 * handle, and must give x bit-identical to dpdo_algorithm_get_output and
 * predictions identical to margins computed here from that vector (an
 * independent dot product over dpdo_dataset_get_row); every field survives
 * the round trip; hostile or broken files are refused with a message naming
 * the problem and the handle unchanged. */
#include <stdint.h>
#include <sys/wait.h>
#include <zlib.h>
#include "harness.h"
#include "dpdo/dpdo.h"
#include "dpdo/algorithm.h"
#include "dpdo/model_file.h"

enum { NODES = 4, Q = 25, D = 5 };

static char tmpdir[256];
static const char *tpath(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

typedef struct {
    dpdo_dataset *ds;
    dpdo_shard *sh[NODES];
    dpdo_loss *loss;
    dpdo_regularizer *reg;
    dpdo_node *nodes[NODES];
    dpdo_network *net;
    dpdo_ledger *led;
    dpdo_accountant *acc;
    dpdo_algorithm *alg;
} run;

static void run_make(run *r, const char *loss, uint64_t seed)
{
    memset(r, 0, sizeof *r);
    dpdo_generate_options g;
    dpdo_generate_options_init(&g, sizeof g);
    g.seed = seed;
    g.n = NODES * Q;
    g.d = D;
    CHECK_EQ(dpdo_dataset_create(&r->ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_generate(r->ds, "epsilon-like", &g), DPDO_OK);
    CHECK_EQ(dpdo_loss_create(&r->loss, dpdo_loss_type_find(loss), NULL, D), DPDO_OK);
    double lam = 0.01;
    CHECK_EQ(dpdo_regularizer_create(&r->reg, dpdo_regularizer_type_find("l2"), NULL, D, &lam, 1),
             DPDO_OK);
    for (int i = 0; i < NODES; i++) {
        CHECK_EQ(dpdo_shard_create_range(&r->sh[i], r->ds, i * Q, Q), DPDO_OK);
        CHECK_EQ(dpdo_node_create(&r->nodes[i], r->sh[i], r->loss, 1.0), DPDO_OK);
    }
    CHECK_EQ(dpdo_network_create(&r->net), DPDO_OK);
    CHECK_EQ(dpdo_network_set_complete(r->net, NODES), DPDO_OK);
    CHECK_EQ(dpdo_ledger_create(&r->led, NODES), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&r->acc, dpdo_accountant_type_find("rdp"), NULL, r->led, NULL),
             DPDO_OK);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.seed = seed;
    o.max_rounds = 40;
    o.epsilon = 2.0;
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    CHECK_EQ(dpdo_algorithm_create(&r->alg, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
    int rc = dpdo_algorithm_setup(r->alg, r->nodes, NODES, r->net, r->reg, r->acc, &o);
    CHECK_MSG(rc == DPDO_OK, "setup: %s", dpdo_algorithm_errmsg(r->alg));
    rc = dpdo_algorithm_run(r->alg, 0, NULL);
    CHECK_MSG(rc == DPDO_DONE, "run: %d %s", rc, dpdo_algorithm_errmsg(r->alg));
}

static void run_free(run *r)
{
    dpdo_algorithm_destroy(r->alg);
    dpdo_accountant_destroy(r->acc);
    dpdo_ledger_destroy(r->led);
    dpdo_network_destroy(r->net);
    for (int i = 0; i < NODES; i++) {
        dpdo_node_destroy(r->nodes[i]);
        dpdo_shard_destroy(r->sh[i]);
    }
    dpdo_regularizer_destroy(r->reg);
    dpdo_loss_destroy(r->loss);
    dpdo_dataset_destroy(r->ds);
}

static int same_bits(const double *a, const double *b, int64_t n)
{
    return memcmp(a, b, (size_t)n * sizeof(double)) == 0;
}

static void test_round_trip_and_predict(void)
{
    run r;
    run_make(&r, "logistic", 11);
    double x[D];
    CHECK_EQ(dpdo_algorithm_get_output(r.alg, DPDO_NODE_ALL, x, D), DPDO_OK);
    double nx = 0;
    for (int j = 0; j < D; j++) nx += x[j] * x[j];
    CHECK_MSG(nx > 1e-6, "the run learned nothing (||x||^2 = %g)", nx);
    double eps = 0, delta = 0;
    CHECK_EQ(dpdo_algorithm_privacy(r.alg, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eps, &delta, NULL),
             DPDO_OK);

    dpdo_model *m = NULL;
    CHECK_EQ(dpdo_model_create(&m), DPDO_OK);
    CHECK_EQ(dpdo_model_save(m, tpath("a.model")), DPDO_E_STATE); /* empty */
    CHECK_EQ(dpdo_model_from_algorithm(m, r.alg), DPDO_OK);
    CHECK_EQ(dpdo_model_save(m, tpath("a.model")), DPDO_OK);
    dpdo_model_destroy(m);

    /* a fresh handle reads everything back */
    dpdo_model *l = NULL;
    CHECK_EQ(dpdo_model_create(&l), DPDO_OK);
    CHECK_EQ(dpdo_model_load(l, tpath("a.model")), DPDO_OK);
    CHECK_EQ(dpdo_model_dim(l), D);
    CHECK_EQ(dpdo_model_rounds(l), 40);
    double y[D];
    CHECK_EQ(dpdo_model_get_x(l, y, D), DPDO_OK);
    CHECK(same_bits(x, y, D));
    CHECK(strcmp(dpdo_model_text(l, "loss"), "logistic") == 0);
    CHECK(strcmp(dpdo_model_text(l, "algorithm"), "dp-dda") == 0);
    CHECK(strcmp(dpdo_model_text(l, "regularizer"), "l2") == 0);
    CHECK(strcmp(dpdo_model_text(l, "accountant"), "rdp") == 0);
    CHECK(strcmp(dpdo_model_text(l, "library"), dpdo_version_string()) == 0);
    double p0 = -1, e2 = 0, d2 = 0;
    CHECK_EQ(dpdo_model_regularizer_params(l, &p0, NULL), DPDO_OK);
    CHECK(p0 == 0.01);
    CHECK_EQ(dpdo_model_privacy(l, &e2, &d2), DPDO_OK);
    CHECK(e2 == eps && d2 == delta);
    CHECK(eps > 0.1 && eps < 10);

    /* predictions: identical to the margins computed from x here */
    int64_t n = dpdo_dataset_rows(r.ds);
    double *mg = malloc((size_t)n * sizeof *mg), *lab = malloc((size_t)n * sizeof *lab),
           *pr = malloc((size_t)n * sizeof *pr), *yy = malloc((size_t)n * sizeof *yy);
    CHECK_EQ(dpdo_model_predict(l, r.ds, DPDO_PREDICT_MARGIN, mg, n), DPDO_OK);
    CHECK_EQ(dpdo_model_predict(l, r.ds, DPDO_PREDICT_LABEL, lab, n), DPDO_OK);
    CHECK_EQ(dpdo_model_predict(l, r.ds, DPDO_PREDICT_PROBABILITY, pr, n), DPDO_OK);
    dpdo_dataset_get_labels(r.ds, yy, n);
    int bad_m = 0, bad_l = 0, bad_p = 0, correct = 0;
    for (int64_t i = 0; i < n; i++) {
        double row[D], z = 0;
        dpdo_dataset_get_row(r.ds, i, row, D);
        for (int j = 0; j < D; j++) z += row[j] * x[j];
        if (fabs(mg[i] - z) > 1e-15 * (1 + fabs(z))) bad_m++;
        if (lab[i] != (mg[i] >= 0 ? 1.0 : -1.0)) bad_l++;
        if (fabs(pr[i] - 1 / (1 + exp(-mg[i]))) > 1e-15 || !(pr[i] >= 0 && pr[i] <= 1)) bad_p++;
        correct += lab[i] == yy[i];
    }
    CHECK_EQ(bad_m, 0);
    CHECK_EQ(bad_l, 0);
    CHECK_EQ(bad_p, 0);
    /* the model is better than chance on its training data (two Gaussian
     * classes at separation 1.5 and 5% label noise) */
    CHECK_MSG(correct > n * 6 / 10, "accuracy %d / %lld", correct, (long long)n);
    /* the model from the algorithm predicts the same bytes as the loaded one */
    dpdo_model *direct = NULL;
    dpdo_model_create(&direct);
    dpdo_model_from_algorithm(direct, r.alg);
    double *mg2 = malloc((size_t)n * sizeof *mg2);
    CHECK_EQ(dpdo_model_predict(direct, r.ds, DPDO_PREDICT_MARGIN, mg2, n), DPDO_OK);
    CHECK(same_bits(mg, mg2, n));
    dpdo_model_destroy(direct);

    /* a dataset with fewer features is fine; more is refused */
    double X3[3] = {1, 2, 3}, y3[1] = {1};
    dpdo_dataset *small = NULL;
    dpdo_dataset_create(&small);
    dpdo_dataset_set_dense(small, 1, 3, X3, y3, DPDO_COPY);
    double z1;
    CHECK_EQ(dpdo_model_predict(l, small, DPDO_PREDICT_MARGIN, &z1, 1), DPDO_OK);
    CHECK(fabs(z1 - (x[0] + 2 * x[1] + 3 * x[2])) <= 1e-15 * (1 + fabs(z1)));
    double X9[9] = {0};
    dpdo_dataset_set_dense(small, 1, 9, X9, y3, DPDO_COPY);
    CHECK_EQ(dpdo_model_predict(l, small, DPDO_PREDICT_MARGIN, &z1, 1), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_model_errmsg(l), "9 features, the model only 5");
    CHECK_EQ(dpdo_model_predict(l, small, 7, &z1, 1), DPDO_E_INVAL);
    dpdo_dataset_destroy(small);

    /* gzip-compressed model files load too */
    FILE *in = fopen(tpath("a.model"), "rb");
    gzFile out = gzopen(tpath("a.model.gz"), "wb");
    char buf[4096];
    size_t k;
    while (in && (k = fread(buf, 1, sizeof buf, in)) > 0) gzwrite(out, buf, (unsigned)k);
    if (in) fclose(in);
    gzclose(out);
    dpdo_model *gz = NULL;
    dpdo_model_create(&gz);
    CHECK_EQ(dpdo_model_load(gz, tpath("a.model.gz")), DPDO_OK);
    CHECK_EQ(dpdo_model_get_x(gz, y, D), DPDO_OK);
    CHECK(same_bits(x, y, D));
    dpdo_model_destroy(gz);

    free(mg);
    free(mg2);
    free(lab);
    free(pr);
    free(yy);
    dpdo_model_destroy(l);
    run_free(&r);
}

static void test_hinge_has_no_probabilities(void)
{
    run r;
    run_make(&r, "hinge", 3);
    dpdo_model *m = NULL;
    dpdo_model_create(&m);
    CHECK_EQ(dpdo_model_from_algorithm(m, r.alg), DPDO_OK);
    int64_t n = dpdo_dataset_rows(r.ds);
    double *p = malloc((size_t)n * sizeof *p);
    CHECK_EQ(dpdo_model_predict(m, r.ds, DPDO_PREDICT_PROBABILITY, p, n), DPDO_E_UNSUPPORTED);
    CHECK_STR_CONTAINS(dpdo_model_errmsg(m), "logistic");
    CHECK_EQ(dpdo_model_predict(m, r.ds, DPDO_PREDICT_LABEL, p, n), DPDO_OK);
    free(p);
    dpdo_model_destroy(m);
    run_free(&r);
}

static void test_set_and_text_round_trip(void)
{
    dpdo_model *m = NULL;
    dpdo_model_create(&m);
    double x[3] = {0.1, -1e-300, 123456789.123456789};
    CHECK_EQ(dpdo_model_set(m, x, 3, "logistic", "my-trainer"), DPDO_OK);
    CHECK_EQ(dpdo_model_set(m, x, 3, "bad name", "t"), DPDO_E_INVAL);
    double nanx[1] = {NAN};
    CHECK_EQ(dpdo_model_set(m, nanx, 1, "l", "t"), DPDO_E_INVAL);
    CHECK_EQ(dpdo_model_save(m, tpath("s.model")), DPDO_OK);
    dpdo_model *l = NULL;
    dpdo_model_create(&l);
    CHECK_EQ(dpdo_model_load(l, tpath("s.model")), DPDO_OK);
    double y[3], e = 0, d = -1;
    CHECK_EQ(dpdo_model_get_x(l, y, 3), DPDO_OK);
    CHECK(same_bits(x, y, 3));
    CHECK_EQ(dpdo_model_privacy(l, &e, &d), DPDO_OK);
    CHECK(isinf(e) && e > 0 && d == 0);
    CHECK(strcmp(dpdo_model_text(l, "algorithm"), "my-trainer") == 0);
    CHECK(strcmp(dpdo_model_text(l, "regularizer"), "none") == 0);
    CHECK(strcmp(dpdo_model_text(l, "nothing"), "") == 0);
    dpdo_model_destroy(l);
    dpdo_model_destroy(m);
}

/* ---- hostile and broken files ------------------------------------------------------ */
static const char GOOD[] = "dpdo-model 1\n"
                           "library 0.2.0\nalgorithm dp-dda\nloss logistic\n"
                           "regularizer l2 0.01 0\nrounds 10\nepsilon 1.5\ndelta 1e-05\n"
                           "accountant rdp\ndim 2\nx\n0.5\n-0.25\nend\n";

static void expect_refused(dpdo_model *m, const char *text, const char *needle)
{
    int rc = dpdo_model_parse(m, text, strlen(text), "t.model");
    CHECK_MSG(rc == DPDO_E_FORMAT, "accepted or wrong status %d for: %.60s", rc, text);
    CHECK_STR_CONTAINS(dpdo_model_errmsg(m), needle);
    /* the handle still holds the good model */
    double y[2] = {0, 0};
    CHECK_EQ(dpdo_model_get_x(m, y, 2), DPDO_OK);
    CHECK(y[0] == 0.5 && y[1] == -0.25);
}

static char *edit(const char *from, const char *to)
{
    static char buf[1024];
    const char *p = strstr(GOOD, from);
    if (!p) return strcpy(buf, GOOD);
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(p - GOOD), GOOD, to, p + strlen(from));
    return buf;
}

static void test_hostile_files(void)
{
    dpdo_model *m = NULL;
    dpdo_model_create(&m);
    CHECK_EQ(dpdo_model_parse(m, GOOD, strlen(GOOD), "t.model"), DPDO_OK);
    expect_refused(m, "", "empty model file");
    expect_refused(m, "hello\n", "line 1: not a dpdo model file");
    expect_refused(m, edit("dpdo-model 1", "dpdo-model 7"), "format version 7 is newer");
    expect_refused(m, edit("dpdo-model 1", "dpdo-model x"), "bad format version");
    expect_refused(m, edit("rounds 10", "rounds 10\nrounds 11"), "line 7: key 'rounds' repeated");
    expect_refused(m, edit("rounds 10\n", ""), "key 'rounds' missing");
    expect_refused(m, edit("rounds 10", "colour blue"), "unknown key 'colour'");
    expect_refused(m, edit("rounds 10", "rounds -3"), "rounds: an integer");
    expect_refused(m, edit("rounds 10", "rounds 1e300"), "rounds: an integer");
    expect_refused(m, edit("epsilon 1.5", "epsilon nan"), "epsilon");
    expect_refused(m, edit("delta 1e-05", "delta 1"), "delta: a number in [0, 1)");
    expect_refused(m, edit("loss logistic", "loss"), "loss: a name");
    expect_refused(m, edit("loss logistic", "loss log$istic"), "not allowed in a name");
    expect_refused(m, edit("regularizer l2 0.01 0", "regularizer l2 0.01"), "parameter 2");
    expect_refused(m, edit("dim 2", "dim 0"), "dim: an integer in [1, 67108864]");
    expect_refused(m, edit("dim 2", "dim 100000000"), "dim: an integer in [1, 67108864]");
    /* a dimension the file cannot hold: refused before allocating 512 MB */
    expect_refused(m, edit("dim 2", "dim 67108864"), "cannot hold that many values");
    expect_refused(m, edit("dim 2", "dim 3"), "value 3: 'end' is not a finite number");
    expect_refused(m, edit("-0.25\nend\n", ""), "truncated: 1 of 2 values");
    expect_refused(m, edit("dim 2", "dim 1"), "'end' expected after the 1 values");
    expect_refused(m, edit("-0.25", "inf"), "value 2: 'inf' is not a finite number");
    expect_refused(m, edit("-0.25", "1e999"), "value 2");
    expect_refused(m, edit("-0.25", "0x10"), "value 2");
    expect_refused(m, edit("end\n", "end\nmore\n"), "text after 'end'");
    expect_refused(m, edit("end\n", ""), "'end' expected");
    expect_refused(m, edit("dim 2", "dim 2 extra"), "dim: unexpected 'extra'");
    /* NUL bytes */
    char withnul[sizeof GOOD];
    memcpy(withnul, GOOD, sizeof GOOD);
    withnul[20] = '\0';
    CHECK_EQ(dpdo_model_parse(m, withnul, sizeof GOOD - 1, "t.model"), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_model_errmsg(m), "NUL byte");
    /* comments, blank lines and CRLF are fine */
    const char *crlf = "# saved by hand\r\ndpdo-model 1\r\n\r\nlibrary 0.2.0\r\nalgorithm a\r\nloss l\r\n"
                       "regularizer none 0 0\r\nrounds 0\r\nepsilon inf\r\ndelta 0\r\naccountant none\r\n"
                       "dim 1\r\nx\r\n# the value\r\n  7 \r\nend\r\n";
    CHECK_EQ(dpdo_model_parse(m, crlf, strlen(crlf), "crlf"), DPDO_OK);
    CHECK_EQ(dpdo_model_dim(m), 1);
    /* files: missing, /dev/zero */
    CHECK_EQ(dpdo_model_load(m, tpath("missing.model")), DPDO_E_IO);
    CHECK_EQ(dpdo_model_load(m, "/dev/zero"), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_model_errmsg(m), "NUL byte");
    CHECK_EQ(dpdo_model_dim(m), 1);
    /* NULL handling */
    CHECK_EQ(dpdo_model_load(NULL, "x"), DPDO_E_INVAL);
    CHECK(strcmp(dpdo_model_errmsg(NULL), "dpdo_model_errmsg: m is NULL") == 0);
    CHECK_EQ(dpdo_model_dim(NULL), 0);
    dpdo_model_destroy(m);
}

/* ---- the dpdo-predict tool (run as a separate process) ------------------------------ */
static int run_tool(const char *args, char *out, size_t cap)
{
    return h_run_tool("dpdo-predict", args, out, cap);
}

static void test_predict_cli(void)
{
    run r;
    run_make(&r, "logistic", 5);
    dpdo_model *m = NULL;
    dpdo_model_create(&m);
    CHECK_EQ(dpdo_model_from_algorithm(m, r.alg), DPDO_OK);
    CHECK_EQ(dpdo_model_save(m, tpath("c.model")), DPDO_OK);
    CHECK_EQ(dpdo_dataset_save_libsvm(r.ds, tpath("c.svm")), DPDO_OK);
    int64_t n = dpdo_dataset_rows(r.ds);
    double *p = malloc((size_t)n * sizeof *p), *lab = malloc((size_t)n * sizeof *lab),
           *yy = malloc((size_t)n * sizeof *yy);
    CHECK_EQ(dpdo_model_predict(m, r.ds, DPDO_PREDICT_PROBABILITY, p, n), DPDO_OK);
    CHECK_EQ(dpdo_model_predict(m, r.ds, DPDO_PREDICT_LABEL, lab, n), DPDO_OK);
    dpdo_dataset_get_labels(r.ds, yy, n);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) k += lab[i] == yy[i];
    static char out[1 << 16];
    char args[1200];
    snprintf(args, sizeof args, "--model %s --data %s --output probability", tpath("c.model"),
             tpath("c.svm"));
    CHECK_EQ(run_tool(args, out, sizeof out), 0);
    /* the printed probabilities are the library's, digit for digit (%.17g) */
    const char *s = out;
    int64_t i = 0, same = 0;
    while (*s) { /* stdout and stderr interleave: take the lines that are numbers */
        const char *nl = strchr(s, '\n');
        char *e;
        double v = strtod(s, &e);
        if (e != s && *e == '\n' && i < n) same += v == p[i++];
        s = nl ? nl + 1 : s + strlen(s);
    }
    CHECK_EQ(same, n);
    char acc[64];
    snprintf(acc, sizeof acc, "(%lld of %lld)", (long long)k, (long long)n);
    CHECK_STR_CONTAINS(out, acc);
    CHECK_STR_CONTAINS(out, "model: dp-dda, loss logistic, 40 rounds");
    /* labels; --help; errors */
    snprintf(args, sizeof args, "--model %s --data %s --quiet", tpath("c.model"), tpath("c.svm"));
    CHECK_EQ(run_tool(args, out, sizeof out), 0);
    CHECK(strstr(out, "+1\n") == NULL);
    CHECK_EQ(run_tool("--help", out, sizeof out), 0);
    CHECK_STR_CONTAINS(out, "usage: dpdo-predict");
    CHECK_EQ(run_tool("--model", out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "option --model needs a value");
    CHECK_EQ(run_tool("--data x.svm", out, sizeof out), 2);
    CHECK_STR_CONTAINS(out, "--model FILE is required");
    snprintf(args, sizeof args, "--model %s --data %s --output odds", tpath("c.model"), tpath("c.svm"));
    CHECK_EQ(run_tool(args, out, sizeof out), 2);
    snprintf(args, sizeof args, "--model /dev/zero --data %s", tpath("c.svm"));
    CHECK_EQ(run_tool(args, out, sizeof out), 1);
    CHECK_STR_CONTAINS(out, "NUL byte");
    /* a data file with a feature beyond the model's dimension */
    FILE *f = fopen(tpath("wide.svm"), "w");
    fputs("1 1:0.5 9:1\n", f);
    fclose(f);
    snprintf(args, sizeof args, "--model %s --data %s", tpath("c.model"), tpath("wide.svm"));
    CHECK_EQ(run_tool(args, out, sizeof out), 1);
    CHECK_STR_CONTAINS(out, "has 9 features, more than the 5 features of the model");
    CHECK(strstr(out, "max_features") == NULL); /* the model's dimension, not a load option */
    free(p);
    free(lab);
    free(yy);
    dpdo_model_destroy(m);
    run_free(&r);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dpdo_model_XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    RUN(test_round_trip_and_predict);
    RUN(test_hinge_has_no_probabilities);
    RUN(test_set_and_text_round_trip);
    RUN(test_hostile_files);
    RUN(test_predict_cli);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) printf("# could not remove %s\n", tmpdir);
    return h_finish();
}
