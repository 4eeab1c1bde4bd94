/* SPDX-License-Identifier: BSD-3-Clause */
/* Nodes: shard + loss + weight; different sample counts; node evaluation
 * equals a naive loop over the node's own rows; mini-batches over local
 * indices; clipping; dimension and label checks; shared losses; callbacks;
 * bad input; out-of-memory. */
#include <stdint.h>
#include "dpdo/dpdo.h"
#include "dpdo/node.h"
#include "core/core_impl.h"
#include "model/model_impl.h"
#include <string.h>
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

/* The transposed copy (dpdo__node_prepare_full, built by Fed-PLT's prepare) is a cache: node
 * evaluation gives the same bits with and without it (value, gradient, clipped count; full batch
 * and a mini-batch; logistic and hinge), and a second prepare keeps the first copy. */
static void full_batch_copy(void)
{
    dpdo_dataset *ds = NULL;
    CHECK_EQ(dpdo_dataset_create(&ds), DPDO_OK);
    double Yb[N];
    for (int i = 0; i < N; i++) Yb[i] = Y[i] > 0 ? 1.0 : -1.0;
    CHECK_EQ(dpdo_dataset_set_dense(ds, N, D, X, Yb, DPDO_COPY), DPDO_OK);
    const int64_t rows[] = {3, 17, 4, 40, 41, 0, 9, 22, 33, 12, 7};
    dpdo_shard *sh = NULL;
    CHECK_EQ(dpdo_shard_create(&sh, ds, rows, 11), DPDO_OK);
    dpdo_loss *l = NULL, *hl = NULL;
    CHECK_EQ(dpdo_loss_create(&l, dpdo_loss_type_find("logistic"), NULL, D), DPDO_OK);
    CHECK_EQ(dpdo_loss_create(&hl, dpdo_loss_type_find("hinge"), NULL, D), DPDO_OK);
    dpdo_node *a = NULL, *b = NULL, *h = NULL;
    CHECK_EQ(dpdo_node_create(&a, sh, l, 1.0), DPDO_OK);
    CHECK_EQ(dpdo_node_create(&b, sh, l, 1.0), DPDO_OK);
    CHECK_EQ(dpdo_node_create(&h, sh, hl, 1.0), DPDO_OK);
    CHECK_EQ(dpdo__node_prepare_full(a), DPDO_OK);
    struct dpdo__tcopy *tc = atomic_load(&a->tcopy);
    CHECK(tc != NULL && tc->q == 11 && tc->d == D);
    CHECK_EQ(dpdo__node_prepare_full(a), DPDO_OK);
    CHECK(atomic_load(&a->tcopy) == tc);
    CHECK_EQ(dpdo__node_prepare_full(h), DPDO_OK); /* every built-in loss gets one */
    CHECK(atomic_load(&h->tcopy) != NULL && atomic_load(&h->tcopy) != tc);
    CHECK(atomic_load(&b->tcopy) == NULL);
    const double w[D] = {0.3, -1.2, 0.05, 2.0};
    const int64_t idx[] = {1, 5, 5, 10};
    for (int mb = 0; mb < 2; mb++)
        for (int cl = 0; cl < 2; cl++) {
            double va = 0, vb = 0, vl = 0, ga[D], gb[D], gl[D];
            int64_t ca = -1, cb = -1, cc = -1;
            const double clip = cl ? 0.3 : 0.0;
            CHECK_EQ(dpdo_node_eval(a, w, D, mb ? idx : NULL, mb ? 4 : 0, clip, &va, ga, &ca), DPDO_OK);
            CHECK_EQ(dpdo_node_eval(b, w, D, mb ? idx : NULL, mb ? 4 : 0, clip, &vb, gb, &cb), DPDO_OK);
            CHECK_EQ(dpdo_loss_eval(l, sh, w, D, mb ? idx : NULL, mb ? 4 : 0, clip, &vl, gl, &cc), DPDO_OK);
            CHECK(memcmp(&va, &vb, sizeof va) == 0 && memcmp(&va, &vl, sizeof va) == 0);
            CHECK(memcmp(ga, gb, sizeof ga) == 0 && memcmp(ga, gl, sizeof ga) == 0);
            CHECK(ca == cb && ca == cc);
            CHECK(!cl || ca > 0); /* the clip bound is active */
            CHECK_EQ(dpdo_node_eval(h, w, D, mb ? idx : NULL, mb ? 4 : 0, clip, &va, ga, &ca), DPDO_OK);
            CHECK_EQ(dpdo_loss_eval(hl, sh, w, D, mb ? idx : NULL, mb ? 4 : 0, clip, &vl, gl, &cc), DPDO_OK);
            CHECK(memcmp(&va, &vl, sizeof va) == 0 && memcmp(ga, gl, sizeof ga) == 0 && ca == cc);
        }
    dpdo_node_destroy(a);
    dpdo_node_destroy(b);
    dpdo_node_destroy(h);
    dpdo_loss_destroy(l);
    dpdo_loss_destroy(hl);
    dpdo_shard_destroy(sh);
    dpdo_dataset_destroy(ds);
}

int main(void)
{
    make_data();
    RUN(nodes_with_different_sizes);
    RUN(checks_and_errors);
    RUN(full_batch_copy);
    return h_finish();
}
