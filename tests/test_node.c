/* SPDX-License-Identifier: BSD-3-Clause */
/* Nodes: shard + loss + weight; different sample counts; node evaluation
 * equals a naive loop over the node's own rows; mini-batches over local
 * indices; clipping; dimension and label checks; shared losses; callbacks;
 * bad input; out-of-memory. */
#include <stdint.h>
#include "dpdo/dpdo.h"
#include "dpdo/node.h"
#include "core/core_impl.h"
#include "harness.h"

enum { N = 50, D = 4 };
static double X[N * D], Y[N];

static void make_data(void)
{
    uint64_t s = 99;
    for (int i = 0; i < N * D; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        X[i] = ((double)(s >> 11) * 0x1.0p-53 - 0.5) * 4;
    }
    for (int i = 0; i < N; i++) Y[i] = (i * 7) % 3 ? 1.0 : -1.0;
}

static double logistic_naive(const double *x, int64_t first, int64_t m, double *g)
{
    double v = 0;
    memset(g, 0, D * sizeof *g);
    for (int64_t r = first; r < first + m; r++) {
        double mg = 0;
        for (int j = 0; j < D; j++) mg += X[r * D + j] * x[j];
        double z = -Y[r] * mg;
        v += log1p(exp(z));
        double d = -Y[r] / (1 + exp(-z));
        for (int j = 0; j < D; j++) g[j] += d * X[r * D + j] / m;
    }
    return v / m;
}

static void nodes_with_different_sizes(void)
{
    dpdo_dataset *ds = NULL;
    CHECK_EQ(dpdo_dataset_create(&ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_dense(ds, N, D, X, Y, DPDO_COPY), DPDO_OK);
    dpdo_shard *a = NULL, *b = NULL;
    CHECK_EQ(dpdo_shard_create_range(&a, ds, 0, 12), DPDO_OK);
    CHECK_EQ(dpdo_shard_create_range(&b, ds, 12, 38), DPDO_OK);
    dpdo_loss *l = NULL;
    CHECK_EQ(dpdo_loss_create(&l, dpdo_loss_type_find("logistic"), NULL, D), DPDO_OK);
    dpdo_node *na = NULL, *nb = NULL;
    CHECK_EQ(dpdo_node_create(&na, a, l, 1.0), DPDO_OK); /* both share one loss */
    CHECK_EQ(dpdo_node_create(&nb, b, l, 2.5), DPDO_OK);
    CHECK_EQ(dpdo_node_samples(na), 12);
    CHECK_EQ(dpdo_node_samples(nb), 38);
    CHECK_EQ(dpdo_node_dim(na), D);
    CHECK(dpdo_node_weight(nb) == 2.5);
    CHECK(dpdo_node_shard(na) == a && dpdo_node_loss(nb) == l);
    double x[D] = {0.3, -0.2, 1.0, 0.5}, g[D], gn[D], v;
    CHECK_EQ(dpdo_node_eval(na, x, D, NULL, 0, 0.0, &v, g, NULL), DPDO_OK);
    double vn = logistic_naive(x, 0, 12, gn);
    CHECK_NEAR(v, vn, 1e-14);
    for (int j = 0; j < D; j++) CHECK_NEAR(g[j], gn[j], 1e-14);
    CHECK_EQ(dpdo_node_eval(nb, x, D, NULL, 0, 0.0, &v, g, NULL), DPDO_OK);
    vn = logistic_naive(x, 12, 38, gn);
    CHECK_NEAR(v, vn, 1e-14);
    for (int j = 0; j < D; j++) CHECK_NEAR(g[j], gn[j], 1e-14);
    /* local mini-batch indices refer to the node's own rows: local 0 of b is row 12 */
    int64_t idx[3] = {0, 1, 2};
    CHECK_EQ(dpdo_node_eval(nb, x, D, idx, 3, 0.0, &v, g, NULL), DPDO_OK);
    vn = logistic_naive(x, 12, 3, gn);
    CHECK_NEAR(v, vn, 1e-14);
    /* clipping through the node */
    int64_t ncl;
    CHECK_EQ(dpdo_node_eval(nb, x, D, NULL, 0, 0.1, &v, g, &ncl), DPDO_OK);
    CHECK(ncl > 0 && ncl <= 38);
    double ng = 0;
    for (int j = 0; j < D; j++) ng += g[j] * g[j];
    CHECK(sqrt(ng) <= 0.1); /* a mean of vectors of norm <= 0.1 */
    /* local index beyond this node's rows is rejected (and named) */
    int64_t far[1] = {12};
    CHECK_EQ(dpdo_node_eval(na, x, D, far, 1, 0.0, &v, g, NULL), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_node_errmsg(na), "idx[0] = 12");
    /* constants */
    double L, S, R = 0;
    for (int r = 0; r < 12; r++) {
        double s = 0;
        for (int j = 0; j < D; j++) s += X[r * D + j] * X[r * D + j];
        R = fmax(R, sqrt(s));
    }
    CHECK_EQ(dpdo_node_lipschitz(na, INFINITY, &L), DPDO_OK);
    CHECK_REL(L, R, 1e-15);
    CHECK_EQ(dpdo_node_smoothness(na, INFINITY, &S), DPDO_OK);
    CHECK_REL(S, R * R / 4, 1e-15);
    dpdo_node_destroy(na);
    dpdo_node_destroy(nb);
    dpdo_loss_destroy(l);
    dpdo_shard_destroy(a);
    dpdo_shard_destroy(b);
    dpdo_dataset_destroy(ds);
}

static int fail_model(void *user, const double *x, int64_t dim, double *v, double *g)
{
    (void)x;
    (void)dim;
    (void)g;
    *v = 0;
    return *(int *)user;
}
static const dpdo_loss_type model_t = {sizeof(dpdo_loss_type), "fails", NULL, NULL, fail_model,
                                       NULL, NULL, NULL};

static void checks_and_errors(void)
{
    dpdo_dataset *ds = NULL;
    CHECK_EQ(dpdo_dataset_create(&ds), DPDO_OK);
    double y3[N];
    memcpy(y3, Y, sizeof Y);
    y3[7] = 0.0; /* not a binary label */
    CHECK_EQ(dpdo_dataset_set_dense(ds, N, D, X, y3, DPDO_COPY), DPDO_OK);
    dpdo_shard *s = NULL;
    CHECK_EQ(dpdo_shard_create_range(&s, ds, 0, 20), DPDO_OK);
    dpdo_loss *h = NULL, *sq = NULL, *wrong = NULL, *mdl = NULL;
    CHECK_EQ(dpdo_loss_create(&h, dpdo_loss_type_find("hinge"), NULL, D), DPDO_OK);
    CHECK_EQ(dpdo_loss_create(&sq, dpdo_loss_type_find("squared"), NULL, D), DPDO_OK);
    CHECK_EQ(dpdo_loss_create(&wrong, dpdo_loss_type_find("squared"), NULL, D + 1), DPDO_OK);
    int code = 0;
    CHECK_EQ(dpdo_loss_create(&mdl, &model_t, &code, 3), DPDO_OK);
    dpdo_node *n = (dpdo_node *)1;
    CHECK_EQ(dpdo_node_create(&n, s, h, 1.0), DPDO_E_INVAL); /* label 0 with hinge */
    CHECK(n == NULL);
    CHECK_STR_CONTAINS(dpdo_loss_errmsg(h), "row 7");
    CHECK_EQ(dpdo_node_create(&n, s, sq, 1.0), DPDO_OK); /* squared accepts any label */
    dpdo_node_destroy(n);
    CHECK_EQ(dpdo_node_create(&n, s, wrong, 1.0), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_loss_errmsg(wrong), "features");
    CHECK_EQ(dpdo_node_create(&n, NULL, sq, 1.0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_node_create(&n, s, sq, 0.0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_node_create(&n, s, sq, -1.0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_node_create(&n, s, sq, NAN), DPDO_E_INVAL);
    CHECK_EQ(dpdo_node_create(&n, s, sq, INFINITY), DPDO_E_INVAL);
    CHECK_EQ(dpdo_node_create(&n, s, NULL, 1.0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_node_create(NULL, s, sq, 1.0), DPDO_E_INVAL);
    /* model-kind loss without data */
    CHECK_EQ(dpdo_node_create(&n, NULL, mdl, 1.0), DPDO_OK);
    CHECK_EQ(dpdo_node_samples(n), 0);
    CHECK_EQ(dpdo_node_dim(n), 3);
    double x[3] = {0, 0, 0}, v, g[3];
    CHECK_EQ(dpdo_node_eval(n, x, 3, NULL, 0, 0.0, &v, g, NULL), DPDO_OK);
    code = 17;
    CHECK_EQ(dpdo_node_eval(n, x, 3, NULL, 0, 0.0, &v, g, NULL), DPDO_E_CALLBACK);
    CHECK_STR_CONTAINS(dpdo_node_errmsg(n), "returned 17");
    CHECK_EQ(dpdo_node_eval(n, x, 2, NULL, 0, 0.0, &v, g, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_node_eval(n, NULL, 3, NULL, 0, 0.0, &v, g, NULL), DPDO_E_INVAL);
    x[1] = NAN;
    CHECK_EQ(dpdo_node_eval(n, x, 3, NULL, 0, 0.0, &v, g, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_node_eval(NULL, x, 3, NULL, 0, 0.0, &v, g, NULL), DPDO_E_INVAL);
    double L;
    CHECK_EQ(dpdo_node_lipschitz(n, 1.0, &L), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_node_lipschitz(NULL, 1.0, &L), DPDO_E_INVAL);
    CHECK_EQ(dpdo_node_lipschitz(n, 1.0, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_node_smoothness(NULL, 1.0, &L), DPDO_E_INVAL);
    CHECK_EQ(dpdo_node_smoothness(n, 0.0, &L), DPDO_E_INVAL);
    dpdo_node_destroy(n);
    CHECK(strcmp(dpdo_node_errmsg(NULL), "dpdo_node_errmsg: node is NULL") == 0);
    CHECK_EQ(dpdo_node_samples(NULL), 0);
    CHECK_EQ(dpdo_node_dim(NULL), 0);
    CHECK(dpdo_node_weight(NULL) == 0.0);
    CHECK(dpdo_node_shard(NULL) == NULL && dpdo_node_loss(NULL) == NULL);
    dpdo_node_destroy(NULL);
    /* OOM: two allocations */
    int ok = 0;
    for (long f = 0; f < 10 && !ok; f++) {
        n = (dpdo_node *)1;
        dpdo__fault_arm(f);
        int rc = dpdo_node_create(&n, s, sq, 1.0);
        dpdo__fault_arm(-1);
        if (rc == DPDO_OK) {
            ok = 1;
            CHECK_EQ(f, 2);
            dpdo_node_destroy(n);
        } else {
            CHECK_EQ(rc, DPDO_E_NOMEM);
            CHECK(n == NULL);
        }
    }
    CHECK(ok);
    dpdo_loss_destroy(h);
    dpdo_loss_destroy(sq);
    dpdo_loss_destroy(wrong);
    dpdo_loss_destroy(mdl);
    dpdo_shard_destroy(s);
    dpdo_dataset_destroy(ds);
}

int main(void)
{
    make_data();
    RUN(nodes_with_different_sizes);
    RUN(checks_and_errors);
    return h_finish();
}
