/* SPDX-License-Identifier: BSD-3-Clause */
/* The API conventions of docs/abi.md, one test per rule:
 *  - options structs: every *_options_init and every function taking an options struct, with
 *    an older (smaller) struct, a newer (larger) one with a zero tail, a newer one with a
 *    non-zero tail, and a non-zero reserved word;
 *  - one NULL message: every dpdo_*_errmsg(NULL) gives "<function>: <arg> is NULL";
 *  - const-correct rng use: every draw through a const dpdo_rng * (this file is compiled with
 *    the qualifier and pointer-type diagnostics turned into errors, so a cast-free call that
 *    discards const does not build);
 *  - int64_t counts and the one create shape, checked against function pointer types (errors
 *    too);
 *  - destroying a borrowed handle is deferred until the borrower lets go (ASan and valgrind
 *    check that nothing is freed early or leaked). */
#if defined(__clang__)
#pragma clang diagnostic error "-Wincompatible-pointer-types-discards-qualifiers"
#pragma clang diagnostic error "-Wincompatible-pointer-types"
#pragma clang diagnostic error "-Wincompatible-function-pointer-types"
#elif defined(__GNUC__)
#pragma GCC diagnostic error "-Wdiscarded-qualifiers"
#pragma GCC diagnostic error "-Wincompatible-pointer-types"
#endif
#include <stddef.h>
#include <stdint.h>
#include "dpdo/dpdo.h"
#include "harness.h"

enum { N = 40, D = 3 };
static double X[N * D], Y[N];

static void make_data(void)
{
    uint64_t s = 7;
    for (int i = 0; i < N * D; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        X[i] = ((double)(s >> 11) * 0x1.0p-53 - 0.5);
    }
    for (int i = 0; i < N; i++) Y[i] = i % 3 ? 1.0 : -1.0;
}

static const char *tmp_file(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/dpdo_conv_%d.svm", (int)getpid());
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return path;
}

/* ---- options structs ---------------------------------------------------------------------- */

/* A caller struct of any size: the library's struct, then a tail a newer header might add. */
#define BIG(T)                                                                              \
    struct {                                                                                \
        T o;                                                                                \
        int64_t tail[3];                                                                    \
    }

/* reserved words left in an options struct (a release may turn some into fields: issue 19 took
 * half of dpdo_algorithm_options' first one for num_threads) */
#define NRES(o) (sizeof (o).reserved / sizeof (o).reserved[0])

/* *_options_init: older (only struct_size), older (a prefix), newer (zero tail written),
 * too small, NULL. `first` is a field right after struct_size whose default is `def`. */
#define CHECK_INIT(T, init, first, def)                                                     \
    do {                                                                                    \
        BIG(T) b;                                                                           \
        CHECK_EQ(init(NULL, sizeof(T)), DPDO_E_INVAL);                                      \
        CHECK_EQ(init(&b.o, sizeof(size_t) - 1), DPDO_E_VERSION);                           \
        memset(&b, 0x55, sizeof b);                                                         \
        CHECK_EQ(init(&b.o, sizeof(size_t)), DPDO_OK); /* the oldest possible layout */     \
        CHECK_EQ(b.o.struct_size, sizeof(size_t));                                          \
        CHECK(((unsigned char *)&b.o)[sizeof(size_t)] == 0x55); /* nothing beyond it */     \
        memset(&b, 0x55, sizeof b);                                                         \
        size_t pre = offsetof(T, first) + sizeof b.o.first;                                \
        CHECK_EQ(init(&b.o, pre), DPDO_OK); /* an older prefix */                           \
        CHECK(b.o.first == (def));                                                          \
        CHECK(((unsigned char *)&b.o)[pre] == 0x55);                                        \
        memset(&b, 0x55, sizeof b);                                                         \
        CHECK_EQ(init(&b.o, sizeof b), DPDO_OK); /* a newer, larger struct */               \
        CHECK_EQ(b.o.struct_size, sizeof b);                                                \
        CHECK(b.o.first == (def));                                                          \
        CHECK(b.tail[0] == 0 && b.tail[2] == 0);                                            \
        for (size_t r_ = 0; r_ < NRES(b.o); r_++) CHECK(b.o.reserved[r_] == 0);            \
    } while (0)

static void options_init_every_struct(void)
{
    CHECK_INIT(dpdo_load_options, dpdo_load_options_init, n_features, 0);
    CHECK_INIT(dpdo_generate_options, dpdo_generate_options_init, seed, 1);
    CHECK_INIT(dpdo_reference_options, dpdo_reference_options_init, weighting, DPDO_WEIGHT_SAMPLES);
    CHECK_INIT(dpdo_accountant_options, dpdo_accountant_options_init, orders, NULL);
    CHECK_INIT(dpdo_algorithm_options, dpdo_algorithm_options_init, seed, 0);
    CHECK_INIT(dpdo_checkpoint_options, dpdo_checkpoint_options_init, key, NULL);
    CHECK_INIT(dpdo_audit_options, dpdo_audit_options_init, method, DPDO_AUDIT_WHITE_BOX);
    CHECK_INIT(dpdo_train_options, dpdo_train_options_init, loss, NULL);
}

/* A function taking options: call(o) with the four caller structs. `set` changes a field so
 * that a difference between "read" and "defaulted" is visible where it matters; here only the
 * return codes and the message are checked, and each function's own tests check the values. */
#define CHECK_ACCEPT(T, init, call, errmsg, name)                                           \
    do {                                                                                    \
        BIG(T) b;                                                                           \
        memset(&b, 0, sizeof b);                                                            \
        init(&b.o, sizeof b.o);                                                             \
        T *o = &b.o;                                                                        \
        o->struct_size = sizeof(size_t); /* the oldest layout: every field defaulted */     \
        CHECK_EQ(call, DPDO_OK);                                                            \
        o->struct_size = sizeof b; /* newer, zero tail */                                   \
        CHECK_EQ(call, DPDO_OK);                                                            \
        b.tail[1] = 42; /* newer, a field this library does not know is set */              \
        CHECK_EQ(call, DPDO_E_VERSION);                                                     \
        CHECK_STR_CONTAINS(errmsg, name);                                                   \
        CHECK_STR_CONTAINS(errmsg, "is not zero");                                          \
        b.tail[1] = 0;                                                                      \
        o->reserved[NRES(*o) - 1] = 1; /* a reserved word is an unknown field too */        \
        CHECK_EQ(call, DPDO_E_VERSION);                                                     \
        o->reserved[NRES(*o) - 1] = 0;                                                      \
        o->struct_size = 4; /* _init forgotten */                                           \
        CHECK_EQ(call, DPDO_E_VERSION);                                                     \
        CHECK_STR_CONTAINS(errmsg, "struct_size = 4");                                      \
        o->struct_size = sizeof b.o;                                                        \
        CHECK_EQ(call, DPDO_OK);                                                            \
    } while (0)

static void options_accept_loaders_and_generate(void)
{
    dpdo_dataset *ds = NULL;
    CHECK_EQ(dpdo_dataset_create(&ds), DPDO_OK);
    const char *f = tmp_file("1 1:1 2:1\n-1 1:1\n");
    CHECK_ACCEPT(dpdo_load_options, dpdo_load_options_init, dpdo_dataset_load_libsvm(ds, f, o),
                 dpdo_dataset_errmsg(ds), "dpdo_load_options");
    CHECK_EQ(dpdo_dataset_rows(ds), 2);
    CHECK_ACCEPT(dpdo_generate_options, dpdo_generate_options_init,
                 dpdo_dataset_generate(ds, "epsilon-like", o), dpdo_dataset_errmsg(ds),
                 "dpdo_generate_options");
    CHECK_EQ(dpdo_dataset_rows(ds), 1000); /* the default n */
    {   /* an older struct that covers n: n is read, the rest defaulted */
        dpdo_generate_options g;
        dpdo_generate_options_init(&g, sizeof g);
        g.n = 17;
        g.d = 999;
        g.struct_size = offsetof(dpdo_generate_options, n) + sizeof g.n;
        CHECK_EQ(dpdo_dataset_generate(ds, "epsilon-like", &g), DPDO_OK);
        CHECK_EQ(dpdo_dataset_rows(ds), 17);
        CHECK_EQ(dpdo_dataset_features(ds), 100); /* d not covered: the default */
    }
    unlink(f);
    dpdo_dataset_destroy(ds);
}

typedef struct problem {
    dpdo_dataset *ds;
    dpdo_shard *sh[2];
    dpdo_loss *loss;
    dpdo_node *nodes[2];
    dpdo_network *net;
    dpdo_ledger *led;
    dpdo_accountant *acc;
    dpdo_regularizer *reg;
} problem;

static void problem_make(problem *p)
{
    memset(p, 0, sizeof *p);
    make_data();
    CHECK_EQ(dpdo_dataset_create(&p->ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_dense(p->ds, N, D, X, Y, DPDO_COPY), DPDO_OK);
    CHECK_EQ(dpdo_dataset_partition(p->ds, 2, NULL, 3, p->sh), DPDO_OK);
    CHECK_EQ(dpdo_loss_create(&p->loss, dpdo_loss_type_find("logistic"), NULL, D), DPDO_OK);
    for (int i = 0; i < 2; i++) CHECK_EQ(dpdo_node_create(&p->nodes[i], p->sh[i], p->loss, 1), DPDO_OK);
    CHECK_EQ(dpdo_network_create(&p->net), DPDO_OK);
    CHECK_EQ(dpdo_network_set_complete(p->net, 2), DPDO_OK);
    CHECK_EQ(dpdo_ledger_create(&p->led, 2), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&p->acc, dpdo_accountant_type_find("rdp"), NULL, p->led, NULL), DPDO_OK);
    double lam = 0.1;
    CHECK_EQ(dpdo_regularizer_create(&p->reg, dpdo_regularizer_type_find("l2"), NULL, D, &lam, 1), DPDO_OK);
}

static void problem_free(problem *p)
{
    dpdo_accountant_destroy(p->acc);
    dpdo_ledger_destroy(p->led);
    dpdo_network_destroy(p->net);
    for (int i = 0; i < 2; i++) dpdo_node_destroy(p->nodes[i]);
    dpdo_loss_destroy(p->loss);
    for (int i = 0; i < 2; i++) dpdo_shard_destroy(p->sh[i]);
    dpdo_dataset_destroy(p->ds);
    dpdo_regularizer_destroy(p->reg);
}

static void options_accept_reference_accountant(void)
{
    problem p;
    problem_make(&p);
    dpdo_reference *ref = NULL;
    /* reference_create has no handle yet: its message is left on node 0 */
    CHECK_ACCEPT(dpdo_reference_options, dpdo_reference_options_init,
                 (dpdo_reference_destroy(ref), ref = NULL, dpdo_reference_create(&ref, p.nodes, 2, p.reg, o)),
                 dpdo_node_errmsg(p.nodes[0]), "dpdo_reference_options");
    dpdo_reference_destroy(ref);
    dpdo_accountant *a = NULL;
    CHECK_ACCEPT(dpdo_accountant_options, dpdo_accountant_options_init,
                 (dpdo_accountant_destroy(a), a = NULL,
                  dpdo_accountant_create(&a, dpdo_accountant_type_find("rdp"), NULL, p.led, o)),
                 dpdo_ledger_errmsg(p.led), "dpdo_accountant_options");
    dpdo_accountant_destroy(a);
    problem_free(&p);
}

static void options_accept_algorithm_checkpoint_audit(void)
{
    problem p;
    problem_make(&p);
    dpdo_algorithm *alg = NULL;
    CHECK_EQ(dpdo_algorithm_create(&alg, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
    CHECK_ACCEPT(dpdo_algorithm_options, dpdo_algorithm_options_init,
                 dpdo_algorithm_setup(alg, p.nodes, 2, p.net, NULL, p.acc, o), dpdo_algorithm_errmsg(alg),
                 "dpdo_algorithm_options");
    /* a run to save: reproducible, a few rounds */
    dpdo_algorithm_options ao;
    dpdo_algorithm_options_init(&ao, sizeof ao);
    ao.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    ao.max_rounds = 5;
    CHECK_EQ(dpdo_algorithm_setup(alg, p.nodes, 2, p.net, NULL, p.acc, &ao), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_step(alg), DPDO_ROUND);
    char path[64];
    snprintf(path, sizeof path, "/tmp/dpdo_conv_%d.ckpt", (int)getpid());
    CHECK_ACCEPT(dpdo_checkpoint_options, dpdo_checkpoint_options_init, dpdo_algorithm_save(alg, path, o),
                 dpdo_algorithm_errmsg(alg), "dpdo_checkpoint_options");
    unlink(path);
    dpdo_algorithm_destroy(alg);

    dpdo_audit *au = NULL;
    CHECK_EQ(dpdo_audit_create(&au), DPDO_OK);
    const dpdo_algorithm_type *t = dpdo_algorithm_type_find("dp-dda");
    CHECK_ACCEPT(dpdo_audit_options, dpdo_audit_options_init, dpdo_audit_setup(au, t, NULL, o),
                 dpdo_audit_errmsg(au), "dpdo_audit_options");
    CHECK_ACCEPT(dpdo_algorithm_options, dpdo_algorithm_options_init, dpdo_audit_setup(au, t, o, NULL),
                 dpdo_audit_errmsg(au), "dpdo_algorithm_options");
    dpdo_audit_destroy(au);
    problem_free(&p);
}

/* ---- one NULL message ----------------------------------------------------------------------- */

#define CHECK_NULL_TEXT(fn, arg)                                                                \
    CHECK_MSG(strcmp(fn(NULL), #fn ": " arg " is NULL") == 0, "%s(NULL) = \"%s\"", #fn, fn(NULL))

static void null_errmsg_every_handle(void)
{
    CHECK_NULL_TEXT(dpdo_rng_errmsg, "rng");
    CHECK_NULL_TEXT(dpdo_dataset_errmsg, "ds");
    CHECK_NULL_TEXT(dpdo_shard_errmsg, "s");
    CHECK_NULL_TEXT(dpdo_transform_errmsg, "t");
    CHECK_NULL_TEXT(dpdo_loss_errmsg, "loss");
    CHECK_NULL_TEXT(dpdo_regularizer_errmsg, "reg");
    CHECK_NULL_TEXT(dpdo_node_errmsg, "node");
    CHECK_NULL_TEXT(dpdo_reference_errmsg, "ref");
    CHECK_NULL_TEXT(dpdo_network_errmsg, "net");
    CHECK_NULL_TEXT(dpdo_sampling_errmsg, "s");
    CHECK_NULL_TEXT(dpdo_event_errmsg, "ev");
    CHECK_NULL_TEXT(dpdo_ledger_errmsg, "l");
    CHECK_NULL_TEXT(dpdo_accountant_errmsg, "acc");
    CHECK_NULL_TEXT(dpdo_paper_errmsg, "p");
    CHECK_NULL_TEXT(dpdo_solver_errmsg, "s");
    CHECK_NULL_TEXT(dpdo_policy_errmsg, "p");
    CHECK_NULL_TEXT(dpdo_compressor_errmsg, "c");
    CHECK_NULL_TEXT(dpdo_algorithm_errmsg, "alg");
    CHECK_NULL_TEXT(dpdo_model_errmsg, "m");
    CHECK_NULL_TEXT(dpdo_audit_errmsg, "a");
}

/* ---- const-correct rng use ------------------------------------------------------------------ */

/* What a compressor/solver/policy callback holds: a const dpdo_rng *. Every draw compiles
 * without a cast (a qualifier warning is an error in this file). */
static int draw_all(const dpdo_rng *rng, double *u, int64_t *idx)
{
    int32_t b[4];
    int64_t g[4];
    int rc = dpdo_rng_uniform(rng, 1, 2, DPDO_PURPOSE_USER, 0, u, 4);
    rc |= dpdo_rng_normal(rng, 1, 2, DPDO_PURPOSE_USER + 1, 0, u + 4, 4);
    rc |= dpdo_rng_laplace(rng, 1, 2, DPDO_PURPOSE_USER + 2, 0, 1.0, u + 8, 4);
    rc |= dpdo_rng_bernoulli(rng, 1, 2, DPDO_PURPOSE_USER + 3, 0, 0.5, b, 4);
    rc |= dpdo_rng_geometric(rng, 1, 2, DPDO_PURPOSE_USER + 4, 0, 0.5, g, 4);
    rc |= dpdo_rng_subset(rng, 1, 2, DPDO_PURPOSE_USER + 5, 10, 4, idx);
    rc |= dpdo_rng_permutation(rng, 1, 2, DPDO_PURPOSE_USER + 6, 4, idx + 4);
    return rc;
}

static int compress_randk(void *user, const double *x, int64_t dim, int64_t k, const dpdo_rng *rng,
                          uint64_t node_id, uint64_t round, int64_t *idx, double *val, int64_t cap,
                          int64_t *count)
{
    (void)user;
    (void)cap;
    int rc = dpdo_rng_subset(rng, node_id, round, DPDO_PURPOSE_COMPRESSION, dim, k, idx); /* no cast */
    for (int64_t j = 0; j < k; j++) val[j] = x[idx[j]];
    *count = k;
    return rc;
}

static void const_rng_draws(void)
{
    dpdo_rng *r = NULL;
    CHECK_EQ(dpdo_rng_create(&r, NULL, NULL, 11), DPDO_OK);
    double u1[12], u2[12];
    int64_t i1[8], i2[8];
    CHECK_EQ(draw_all(r, u1, i1), DPDO_OK);
    CHECK_EQ(draw_all(r, u2, i2), DPDO_OK); /* a draw changes nothing: same values again */
    CHECK(memcmp(u1, u2, sizeof u1) == 0 && memcmp(i1, i2, sizeof i1) == 0);
    /* a user compressor drawing through its const rng gives the built-in rand-k */
    const dpdo_compressor_type ut = {.struct_size = sizeof ut, .name = "u-randk", .compress = compress_randk};
    dpdo_compressor *cu = NULL, *cb = NULL;
    CHECK_EQ(dpdo_compressor_create(&cu, &ut, NULL, 10), DPDO_OK);
    CHECK_EQ(dpdo_compressor_create(&cb, dpdo_compressor_type_find("rand-k"), NULL, 10), DPDO_OK);
    CHECK_EQ(dpdo_compressor_set_k(cu, 3), DPDO_OK);
    CHECK_EQ(dpdo_compressor_set_k(cb, 3), DPDO_OK);
    double x[10], vu[10], vb[10];
    int64_t iu[10], ib[10], nu = 0, nb = 0;
    for (int j = 0; j < 10; j++) x[j] = j + 1;
    CHECK_EQ(dpdo_compressor_apply(cu, x, 10, r, 4, 9, iu, vu, 10, &nu), DPDO_OK);
    CHECK_EQ(dpdo_compressor_apply(cb, x, 10, r, 4, 9, ib, vb, 10, &nb), DPDO_OK);
    CHECK_EQ(nu, 3);
    CHECK_EQ(nb, 3);
    CHECK(memcmp(iu, ib, 3 * sizeof *iu) == 0 && memcmp(vu, vb, 3 * sizeof *vu) == 0);
    dpdo_compressor_destroy(cu);
    dpdo_compressor_destroy(cb);
    dpdo_rng_destroy(r);
}

/* ---- signatures: int64_t counts, one create shape ------------------------------------------ */

static void signatures(void)
{
    /* assigning to these pointer types fails to compile (error pragmas above) if a signature
     * drifts back */
    int (*setup)(dpdo_algorithm *, dpdo_node *const *, int64_t, dpdo_network *, dpdo_regularizer *,
                 dpdo_accountant *, const dpdo_algorithm_options *) = dpdo_algorithm_setup;
    int (*refc)(dpdo_reference **, dpdo_node *const *, int64_t, dpdo_regularizer *,
                const dpdo_reference_options *) = dpdo_reference_create;
    int (*part)(dpdo_dataset *, int64_t, const int64_t *, uint64_t, dpdo_shard **) = dpdo_dataset_partition;
    int (*rngc)(dpdo_rng **, const dpdo_rng_type *, void *, uint64_t) = dpdo_rng_create;
    int (*accc)(dpdo_accountant **, const dpdo_accountant_type *, void *, dpdo_ledger *,
                const dpdo_accountant_options *) = dpdo_accountant_create;
    int (*lossc)(dpdo_loss **, const dpdo_loss_type *, void *, int64_t) = dpdo_loss_create;
    int (*draw)(const dpdo_rng *, uint64_t, uint64_t, uint32_t, uint64_t, double *, int64_t) =
        dpdo_rng_uniform;
    CHECK(setup && refc && part && rngc && accc && lossc && draw);
    /* counts beyond int32_t are refused with a message, not truncated */
    problem p;
    problem_make(&p);
    dpdo_algorithm *alg = NULL;
    CHECK_EQ(dpdo_algorithm_create(&alg, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(alg, p.nodes, ((int64_t)1 << 32) + 2, p.net, NULL, p.acc, NULL),
             DPDO_E_INVAL);
    dpdo_reference *ref = NULL;
    CHECK_EQ(dpdo_reference_create(&ref, p.nodes, ((int64_t)1 << 32) + 2, NULL, NULL), DPDO_E_INVAL);
    dpdo_algorithm_destroy(alg);
    problem_free(&p);
}

/* ---- destroying a borrowed handle ----------------------------------------------------------- */

static int released;
static int user_phi(void *user, double m, double y, double *l, double *dl)
{
    (void)user;
    *l = 0.5 * (m - y) * (m - y);
    *dl = m - y;
    return 0;
}
static void user_release(void *user)
{
    (void)user;
    released++;
}

static void borrowed_destroy_is_deferred(void)
{
    make_data();
    dpdo_dataset *ds = NULL;
    CHECK_EQ(dpdo_dataset_create(&ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_dense(ds, N, D, X, Y, DPDO_COPY), DPDO_OK);
    dpdo_shard *sh = NULL;
    CHECK_EQ(dpdo_shard_create_range(&sh, ds, 0, N), DPDO_OK);
    const dpdo_loss_type lt = {.struct_size = sizeof lt, .name = "sq", .phi = user_phi, .release = user_release};
    dpdo_loss *loss = NULL;
    released = 0;
    CHECK_EQ(dpdo_loss_create(&loss, &lt, &released, D), DPDO_OK);
    dpdo_node *node = NULL;
    CHECK_EQ(dpdo_node_create(&node, sh, loss, 1.0), DPDO_OK);
    double x[D] = {0.1, 0.2, 0.3}, v1, v2, g[D];
    CHECK_EQ(dpdo_node_eval(node, x, D, NULL, 0, 0, &v1, g, NULL), DPDO_OK);
    /* the caller destroys dataset, shard and loss while the node borrows them */
    dpdo_dataset_destroy(ds);
    dpdo_shard_destroy(sh);
    dpdo_loss_destroy(loss);
    CHECK_EQ(released, 0); /* deferred: the release callback has not run */
    CHECK_EQ(dpdo_node_eval(node, x, D, NULL, 0, 0, &v2, g, NULL), DPDO_OK);
    CHECK(v1 == v2);
    /* a reference solver borrows the node and a regularizer */
    double lam = 0.5;
    dpdo_regularizer *reg = NULL;
    CHECK_EQ(dpdo_regularizer_create(&reg, dpdo_regularizer_type_find("l2"), NULL, D, &lam, 1), DPDO_OK);
    dpdo_reference *ref = NULL;
    CHECK_EQ(dpdo_reference_create(&ref, &node, 1, reg, NULL), DPDO_OK);
    dpdo_node_destroy(node);
    dpdo_regularizer_destroy(reg);
    CHECK_EQ(released, 0);
    double xs[D], F = NAN;
    CHECK_EQ(dpdo_reference_solve(ref, xs, D, &F), DPDO_OK);
    CHECK(isfinite(F) && F > 0);
    dpdo_reference_destroy(ref); /* the last borrower: everything above is freed now */
    CHECK_EQ(released, 1);

    /* a ledger destroyed while an accountant reads it */
    dpdo_ledger *led = NULL;
    CHECK_EQ(dpdo_ledger_create(&led, 2), DPDO_OK);
    dpdo_accountant *acc = NULL;
    CHECK_EQ(dpdo_accountant_create(&acc, dpdo_accountant_type_find("rdp"), NULL, led, NULL), DPDO_OK);
    dpdo_event *ev = NULL;
    CHECK_EQ(dpdo_event_create(&ev), DPDO_OK);
    CHECK_EQ(dpdo_event_set_gaussian(ev, NULL, 1.0, 2.0), DPDO_OK);
    CHECK_EQ(dpdo_ledger_charge(led, ev, 3, NULL, -1), DPDO_OK);
    double e1 = NAN, e2 = NAN;
    CHECK_EQ(dpdo_accountant_epsilon(acc, -1, 1e-5, &e1, NULL), DPDO_OK);
    dpdo_ledger_destroy(led);
    CHECK_EQ(dpdo_accountant_epsilon(acc, -1, 1e-5, &e2, NULL), DPDO_OK);
    CHECK(e1 == e2 && e1 > 0);
    dpdo_accountant_destroy(acc);
    dpdo_event_destroy(ev);

    /* an algorithm borrows nodes, regularizer, accountant (and through it the ledger) and the
     * network: the caller destroys them all, the run goes on, destroying the algorithm frees */
    problem p;
    problem_make(&p);
    dpdo_algorithm *alg = NULL;
    CHECK_EQ(dpdo_algorithm_create(&alg, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    o.max_rounds = 4;
    CHECK_EQ(dpdo_algorithm_setup(alg, p.nodes, 2, p.net, p.reg, p.acc, &o), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_step(alg), DPDO_ROUND);
    problem_free(&p); /* every handle of the problem, while the algorithm borrows them */
    CHECK_EQ(dpdo_algorithm_step(alg), DPDO_ROUND);
    double eps = NAN;
    CHECK_EQ(dpdo_algorithm_privacy(alg, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eps, NULL, NULL), DPDO_OK);
    CHECK(eps > 0 && eps < 1.0 + 1e-9);
    double Fa = NAN;
    CHECK_EQ(dpdo_algorithm_objective(alg, DPDO_POINT_OUTPUT, DPDO_NODE_ALL, &Fa), DPDO_OK);
    CHECK(isfinite(Fa) && Fa > 0);
    dpdo_algorithm_destroy(alg); /* frees them (ASan/valgrind: no leak, no use after free) */

    /* the host's plug-ins (solver, compressor, policy) are borrowed the same way */
    static const struct {
        const char *alg;
        int kind;
    } plug[] = {{"do-adp", 1}, {"fed-plt", 0}, {"dp-wor-sgd", 2}};
    for (int k = 0; k < 3; k++) {
        problem_make(&p);
        CHECK_EQ(dpdo_algorithm_create(&alg, dpdo_algorithm_type_find(plug[k].alg)), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_setup(alg, p.nodes, 2, p.net, p.reg, p.acc, &o), DPDO_OK);
        if (plug[k].kind == 0) {
            dpdo_solver *s = NULL;
            CHECK_EQ(dpdo_solver_create(&s, dpdo_solver_type_find("gd"), NULL, D), DPDO_OK);
            CHECK_EQ(dpdo_algorithm_set_solver(alg, s), DPDO_OK);
            dpdo_solver_destroy(s);
        } else if (plug[k].kind == 1) {
            dpdo_compressor *c = NULL;
            CHECK_EQ(dpdo_compressor_create(&c, dpdo_compressor_type_find("top-k"), NULL, D), DPDO_OK);
            CHECK_EQ(dpdo_compressor_set_k(c, 2), DPDO_OK);
            CHECK_EQ(dpdo_algorithm_set_compressor(alg, c), DPDO_OK);
            dpdo_compressor_destroy(c);
            CHECK_EQ(dpdo_algorithm_step(alg), DPDO_ROUND); /* messages go through it */
            CHECK_EQ(dpdo_algorithm_step(alg), DPDO_ROUND);
        } else {
            dpdo_policy *pol = NULL;
            CHECK_EQ(dpdo_policy_create(&pol, dpdo_policy_type_find("periodic"), NULL, 2, D + 2), DPDO_OK);
            CHECK_EQ(dpdo_algorithm_set_policy(alg, pol), DPDO_OK);
            dpdo_policy_destroy(pol);
            CHECK_EQ(dpdo_algorithm_step(alg), DPDO_ROUND);
        }
        problem_free(&p);
        dpdo_algorithm_destroy(alg);
    }
}

/* dpdo_train (0.3): 40 rows, 2 nodes, no noise, 3 rounds */
static void options_accept_train(void)
{
    dpdo_dataset *ds = NULL;
    dpdo_model *m = NULL;
    dpdo_generate_options g;
    dpdo_generate_options_init(&g, sizeof g);
    g.n = 40;
    g.d = 3;
    CHECK_EQ(dpdo_dataset_create(&ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_generate(ds, "epsilon-like", &g), DPDO_OK);
    CHECK_EQ(dpdo_model_create(&m), DPDO_OK);
    CHECK_ACCEPT(dpdo_train_options, dpdo_train_options_init,
                 dpdo_train(m, ds, 2, "dp-dda", INFINITY, 1e-5, o), dpdo_model_errmsg(m),
                 "dpdo_train_options");
    dpdo_model_destroy(m);
    dpdo_dataset_destroy(ds);
}

int main(void)
{
    RUN(options_init_every_struct);
    RUN(options_accept_loaders_and_generate);
    RUN(options_accept_reference_accountant);
    RUN(options_accept_algorithm_checkpoint_audit);
    RUN(options_accept_train);
    RUN(null_errmsg_every_handle);
    RUN(const_rng_draws);
    RUN(signatures);
    RUN(borrowed_destroy_is_deferred);
    return h_finish();
}
