/* SPDX-License-Identifier: BSD-3-Clause */
/* The algorithm engine and DP-DDA, white box: spec dp-dda.md §8 oracles 16
 * (hand round), 17 (conservation of sum z), 18 (inactive rows bit-identical),
 * 19 (n = b = 1 is centralised RDA), 21 (lazy = eager output), the message
 * counters, the budget guard, reset and the ledger, no allocation after round
 * 1, a failing callback mid-round, and out-of-memory for every constructor. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "dpdo/dpdo.h"
#include "dpdo/algorithm.h"
#include "engine/engine_impl.h"
#include "core/core_impl.h"
#include "harness.h"

static uint64_t tstate = 0x9e3779b97f4a7c15ull;
static double urand(void) { return h_urand(&tstate); }
static double nrand(void) { return sqrt(-2.0 * log(urand() + 1e-300)) * cos(6.283185307179586 * urand()); }

/* ---- fixture: n nodes with q rows of dimension d each, row norms <= 1 ---- */
enum { NMAX = 32 };
typedef struct fx {
    int n, q, d;
    double *X, *Y;
    dpdo_dataset *ds;
    dpdo_shard *sh[NMAX];
    dpdo_loss *loss;
    dpdo_node *nodes[NMAX];
    dpdo_network *net;
    dpdo_regularizer *reg;
    dpdo_ledger *led;
    dpdo_accountant *acc;
} fx;

static void fx_make(fx *f, int n, int q, int d, const char *loss, dpdo_loss_type *ut, void *user,
                    const char *reg, double lam)
{
    memset(f, 0, sizeof *f);
    f->n = n, f->q = q, f->d = d;
    f->X = malloc(sizeof(double) * (size_t)(n * q * d));
    f->Y = malloc(sizeof(double) * (size_t)(n * q));
    for (int i = 0; i < n * q; i++) {
        double nn = 0;
        for (int k = 0; k < d; k++) {
            f->X[i * d + k] = nrand();
            nn += f->X[i * d + k] * f->X[i * d + k];
        }
        for (int k = 0; k < d; k++) f->X[i * d + k] /= sqrt(nn) + 1e-3;
        f->Y[i] = urand() < 0.5 ? -1 : 1;
    }
    CHECK_EQ(dpdo_dataset_create(&f->ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_dense(f->ds, n * q, d, f->X, f->Y, DPDO_COPY), DPDO_OK);
    if (ut) CHECK_EQ(dpdo_loss_create(&f->loss, ut, user, d), DPDO_OK);
    else CHECK_EQ(dpdo_loss_create(&f->loss, dpdo_loss_type_find(loss), NULL, d), DPDO_OK);
    for (int i = 0; i < n; i++) {
        CHECK_EQ(dpdo_shard_create_range(&f->sh[i], f->ds, (int64_t)i * q, q), DPDO_OK);
        CHECK_EQ(dpdo_node_create(&f->nodes[i], f->sh[i], f->loss, 1.0), DPDO_OK);
    }
    CHECK_EQ(dpdo_network_create(&f->net), DPDO_OK);
    CHECK_EQ(dpdo_network_set_complete(f->net, n), DPDO_OK);
    if (reg) CHECK_EQ(dpdo_regularizer_create(&f->reg, dpdo_regularizer_type_find(reg), NULL, d, &lam, 1), DPDO_OK);
    CHECK_EQ(dpdo_ledger_create(&f->led, n), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&f->acc, dpdo_accountant_type_find("rdp"), NULL, f->led, NULL), DPDO_OK);
}

static void fx_free(fx *f)
{
    dpdo_accountant_destroy(f->acc);
    dpdo_ledger_destroy(f->led);
    dpdo_regularizer_destroy(f->reg);
    dpdo_network_destroy(f->net);
    for (int i = 0; i < f->n; i++) {
        dpdo_node_destroy(f->nodes[i]);
        dpdo_shard_destroy(f->sh[i]);
    }
    dpdo_loss_destroy(f->loss);
    dpdo_dataset_destroy(f->ds);
    free(f->X);
    free(f->Y);
}

static dpdo_algorithm *mk(fx *f, const char *type, const dpdo_algorithm_options *o)
{
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find(type)), DPDO_OK);
    int rc = dpdo_algorithm_setup(a, f->nodes, f->n, f->net, f->reg, f->acc, o);
    CHECK_MSG(rc == DPDO_OK, "setup: %s", dpdo_algorithm_errmsg(a));
    return a;
}

static void opts(dpdo_algorithm_options *o, int mode, int64_t T)
{
    dpdo_algorithm_options_init(o, sizeof *o);
    o->randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o->noise_mode = mode;
    o->max_rounds = T;
}

/* ---- types and options ---------------------------------------------------- */

static void test_types(void)
{
    const dpdo_algorithm_type *t = dpdo_algorithm_type_find("dp-dda");
    CHECK(t != NULL);
    CHECK_STR_CONTAINS(dpdo_algorithm_type_name(t), "dp-dda");
    CHECK(dpdo_algorithm_type_find("dp-dda-baseline") != NULL);
    CHECK(dpdo_algorithm_type_find("nope") == NULL);
    CHECK(dpdo_algorithm_type_find(NULL) == NULL);
    int k = 0, seen = 0;
    for (const dpdo_algorithm_type *p = dpdo_algorithm_type_next(NULL); p; p = dpdo_algorithm_type_next(p), k++)
        seen += p == t;
    CHECK(k >= 13); /* the 13 of 0.2 and any added since */
    CHECK_EQ(seen, 1);
    CHECK(dpdo_algorithm_type_find("fed-plt") != NULL);
    int x;
    CHECK(dpdo_algorithm_type_next((const dpdo_algorithm_type *)&x) == NULL);
    CHECK_STR_CONTAINS(dpdo_algorithm_type_name(NULL), "(null)");
    CHECK_STR_CONTAINS(dpdo_algorithm_type_title(t), "Algorithm 1");
    CHECK_EQ(dpdo_param_type(DPDO_PARAM_DDA_ACTIVE), 0);
    CHECK_EQ(dpdo_param_type(DPDO_PARAM_TOL), 1);
    CHECK_EQ(dpdo_param_type(9999), -1);
    CHECK(dpdo_param_name(9999) == NULL);
    CHECK_STR_CONTAINS(dpdo_param_name(DPDO_PARAM_DDA_ACTIVE), "dda-active");
    double lo, hi;
    CHECK_EQ(dpdo_param_bounds(DPDO_PARAM_CALIB_TAIL, &lo, &hi), DPDO_OK);
    CHECK_NEAR(hi, 0.5, 0);
    CHECK_EQ(dpdo_param_bounds(-3, &lo, &hi), DPDO_E_INVAL);
}

static void test_options(void)
{
    dpdo_algorithm_options o;
    CHECK_EQ(dpdo_algorithm_options_init(NULL, sizeof o), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_options_init(&o, 4), DPDO_E_VERSION); /* smaller than struct_size itself */
    CHECK_EQ(dpdo_algorithm_options_init(&o, sizeof(size_t)), DPDO_OK); /* any older layout (docs/abi.md) */
    CHECK_EQ(dpdo_algorithm_options_init(&o, sizeof o), DPDO_OK);
    CHECK_EQ(o.max_rounds, 1000);
    CHECK_EQ(o.noise_mode, DPDO_NOISE_RIGOROUS);
    CHECK(isnan(o.clip) && isnan(o.sigma) && o.delta == 1e-5 && o.epsilon == 1.0);
    /* a caller compiled against a larger struct with a non-zero unknown tail */
    struct { dpdo_algorithm_options o; double extra; } big;
    CHECK_EQ(dpdo_algorithm_options_init(&big.o, sizeof big), DPDO_OK);
    CHECK(big.extra == 0);
    fx f;
    fx_make(&f, 4, 5, 3, "hinge", NULL, NULL, "l2", 0.1);
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
    big.extra = 1.0;
    CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, f.n, f.net, f.reg, f.acc, &big.o), DPDO_E_VERSION);
    big.extra = 0.0;
    CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, f.n, f.net, f.reg, f.acc, &big.o), DPDO_OK);
    /* every invalid field is named */
    struct { const char *field; void (*bad)(dpdo_algorithm_options *); } cases[] = {
        {"max_rounds", NULL}, {"delta", NULL}, {"epsilon", NULL}, {"lipschitz", NULL}, {"batch", NULL},
        {"clip", NULL},       {"tol", NULL},   {"noise_mode", NULL}, {"randomness", NULL}, {"weighting", NULL}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        dpdo_algorithm_options_init(&o, sizeof o);
        o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
        switch (c) {
        case 0: o.max_rounds = 0; break;
        case 1: o.delta = 1.0; break;
        case 2: o.epsilon = NAN; break;
        case 3: o.lipschitz = -1; break;
        case 4: o.batch = 0; break;
        case 5: o.clip = 0; break;
        case 6: o.tol = NAN; break;
        case 7: o.noise_mode = 9; break;
        case 8: o.randomness = 2; break;
        case 9: o.weighting = 7; break;
        }
        CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, f.n, f.net, f.reg, f.acc, &o), DPDO_E_INVAL);
        CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), cases[c].field);
        CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_READY); /* the earlier setup is intact */
    }
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = DPDO_NOISE_FIXED; /* sigma NaN */
    CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, f.n, f.net, f.reg, f.acc, &o), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "sigma");
    dpdo_algorithm_destroy(a);
    fx_free(&f);
}

/* ---- bad input to setup and the getters ------------------------------------ */

static void test_bad_setup(void)
{
    fx f, g;
    fx_make(&f, 4, 5, 3, "hinge", NULL, NULL, "l2", 0.1);
    fx_make(&g, 4, 5, 2, "hinge", NULL, NULL, "l2", 0.1);
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(NULL, dpdo_algorithm_type_find("dp-dda")), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_create(&a, NULL), DPDO_E_INVAL);
    CHECK(a == NULL);
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_EMPTY);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_E_STATE);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "EMPTY");
    CHECK_EQ(dpdo_algorithm_reset(a), DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_E_STATE);
    double x[3];
    CHECK_EQ(dpdo_algorithm_get_iterate(a, 0, x, 3), DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, 2), DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_setup(a, NULL, 4, f.net, f.reg, f.acc, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, 0, f.net, f.reg, f.acc, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, 3, f.net, f.reg, f.acc, NULL), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "network has 4 nodes");
    CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, 4, NULL, f.reg, f.acc, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, 4, f.net, g.reg, f.acc, NULL), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "regularizer's dimension 2");
    CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, 4, f.net, f.reg, NULL, NULL), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "accountant");
    dpdo_node *mixed[4] = {f.nodes[0], f.nodes[1], g.nodes[2], f.nodes[3]};
    CHECK_EQ(dpdo_algorithm_setup(a, mixed, 4, f.net, f.reg, f.acc, NULL), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "node 2: dimension 2");
    dpdo_node *dup[4] = {f.nodes[0], f.nodes[1], f.nodes[1], f.nodes[3]};
    CHECK_EQ(dpdo_algorithm_setup(a, dup, 4, f.net, f.reg, f.acc, NULL), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "twice");
    CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, 4, f.net, f.reg, f.acc, NULL), DPDO_OK);
    /* the network is locked while the algorithm lives */
    CHECK_EQ(dpdo_network_set_ring(f.net, 4), DPDO_E_STATE);
    /* getters */
    CHECK_EQ(dpdo_algorithm_get_iterate(a, 0, x, 2), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "dimension is 3");
    CHECK_EQ(dpdo_algorithm_get_iterate(a, 4, x, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_get_iterate(a, -5, x, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_get_output(a, 0, NULL, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_get_state(a, "w", 0, x, 3), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "z, x, s");
    CHECK_EQ(dpdo_algorithm_get_state(a, "z", DPDO_NODE_ALL, x, 3), DPDO_OK);
    int32_t fl[4];
    CHECK_EQ(dpdo_algorithm_get_active(a, fl, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_comm(a, 7, NULL, NULL, NULL), DPDO_E_INVAL);
    double eps;
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, 0, &eps, NULL, NULL), DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_privacy(a, 5, 0, &eps, NULL, NULL), DPDO_E_INVAL);
    /* parameters */
    CHECK_EQ(dpdo_algorithm_set_int(a, 9999, 1), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_DDA_ACTIVE, 2.0), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "set_int");
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_TOL, NAN), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_SIGMA, 1.0), DPDO_E_INVAL); /* not FIXED */
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, 3), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_E_INVAL); /* matching needs an even count */
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "even");
    CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_READY);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, 5), DPDO_E_INVAL); /* b > n */
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "exceeds the 4 nodes");
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_E_INVAL); /* still b = 3: matching needs an even count */
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, 2), DPDO_OK);
    int64_t v;
    CHECK_EQ(dpdo_algorithm_get_int(a, DPDO_PARAM_DDA_ACTIVE, &v), DPDO_OK);
    CHECK_EQ(v, 2);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_BATCH, 6), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "smallest shard");
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_BATCH, 2), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, 4), DPDO_E_STATE);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "after round 0");
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_TOL, 1e-3), DPDO_OK); /* live */
    CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, 4, f.net, f.reg, f.acc, NULL), DPDO_E_STATE);
    dpdo_algorithm_destroy(a);
    CHECK_EQ(dpdo_network_set_ring(f.net, 4), DPDO_OK); /* unlocked */
    dpdo_algorithm_destroy(NULL);
    CHECK_EQ(dpdo_algorithm_state(NULL), -1);
    fx_free(&f);
    fx_free(&g);
}

/* ---- a non-finite z_new or x_new fails the round and changes nothing ------------------- */
/* combine() tests z_new and x_new block by block while they are in cache (issue 19); check()
 * names the node and coordinate. Case 0: z_new overflows (messages of 1e308 averaged); case 1:
 * z_new is finite and the primal map overflows (l2 weight 1e-300 and the strong schedule's
 * gamma = 0: x = -z / (kappa lambda)). The state is unchanged after the failed round. */
static void test_nonfinite_round(void)
{
    for (int cs = 0; cs < 2; cs++) {
        fx f;
        fx_make(&f, 4, 3, 40, "hinge", NULL, NULL, "l2", cs == 1 ? 1e-300 : 1.0);
        dpdo_algorithm_options o;
        opts(&o, DPDO_NOISE_NONE, 10);
        dpdo_algorithm *a = mk(&f, "dp-dda", &o);
        CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_SCHEDULE, DPDO_DDA_SCHEDULE_STRONG),
                 DPDO_OK);
        static const int64_t act[] = {0, 1};
        double zeta[160] = {0}, z0[40], z1[40], x0[40];
        CHECK_EQ(dpdo__algorithm_inject_active(a, act, 2), DPDO_OK);
        CHECK_EQ(dpdo__algorithm_inject_zeta(a, zeta), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
        CHECK_EQ(dpdo_algorithm_get_state(a, "z", 1, z0, 40), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_get_iterate(a, 1, x0, 40), DPDO_OK);
        /* coordinate 37 (in the second block of 32 of the AVX2 scan, not the first) */
        zeta[40 + 37] = cs == 0 ? 1e308 : 1e10;
        zeta[37] = cs == 0 ? 1e308 : 1e10;
        CHECK_EQ(dpdo__algorithm_inject_active(a, act, 2), DPDO_OK);
        CHECK_EQ(dpdo__algorithm_inject_zeta(a, zeta), DPDO_OK);
        int rc = dpdo_algorithm_step(a);
        CHECK_MSG(rc == DPDO_E_NUMERIC, "case %d: rc %d (%s)", cs, rc, dpdo_algorithm_errmsg(a));
        CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), cs == 0 ? "z[37]" : "x[37]");
        CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a),
                           cs == 0 ? "after the dual update" : "after the primal update");
        CHECK_EQ(dpdo_algorithm_get_state(a, "z", 1, z1, 40), DPDO_OK);
        CHECK(memcmp(z0, z1, sizeof z0) == 0);
        CHECK_EQ(dpdo_algorithm_get_iterate(a, 1, z1, 40), DPDO_OK);
        CHECK(memcmp(x0, z1, sizeof x0) == 0);
        dpdo_algorithm_destroy(a);
        fx_free(&f);
    }
}

/* ---- the primal map that is not coordinate-wise takes the whole-vector path ------------------ */
/* combine() maps z_new block by block for the built-in coordinate-wise regularizers and leaves
 * x_new unstored (commit() maps again); other maps (box, ball, user) run on the whole vector and
 * x_new is stored and installed. A box of +-1e300 never clamps here, and its map computes
 * z * (-1 / gamma) like "none": both paths must give the same bits, round after round, on 1 and
 * 2 threads. */
static void test_generic_map_path(void)
{
    double out[2][2][4 * 3]; /* [threads - 1][none, box] */
    fx f;
    fx_make(&f, 4, 3, 3, "hinge", NULL, NULL, NULL, 0.0); /* one data set for every run */
    dpdo_regularizer *none = NULL, *box = NULL;
    double bx[2] = {-1e300, 1e300};
    CHECK_EQ(dpdo_regularizer_create(&none, dpdo_regularizer_type_find("none"), NULL, 3, NULL, 0),
             DPDO_OK);
    CHECK_EQ(dpdo_regularizer_create(&box, dpdo_regularizer_type_find("box"), NULL, 3, bx, 2),
             DPDO_OK);
    for (int th = 1; th <= 2; th++)
        for (int v = 0; v < 2; v++) {
            f.reg = v ? box : none;
            dpdo_algorithm_options o;
            opts(&o, DPDO_NOISE_FIXED, 30);
            o.sigma = 0.5;
            o.max_epsilon = INFINITY;
            o.num_threads = th;
            dpdo_algorithm *a = mk(&f, "dp-dda", &o);
            int rc = dpdo_algorithm_run(a, 30, NULL);
            CHECK_MSG(rc >= 0, "%s: %s", v ? "box" : "none", dpdo_algorithm_errmsg(a));
            CHECK_EQ(dpdo_algorithm_round(a), 30);
            for (int i = 0; i < 4; i++)
                CHECK_EQ(dpdo_algorithm_get_output(a, i, out[th - 1][v] + 3 * i, 3), DPDO_OK);
            dpdo_algorithm_destroy(a);
            dpdo_ledger_reset(f.led);
        }
    CHECK_MSG(memcmp(out[0][0], out[0][1], sizeof out[0][0]) == 0, "box and none differ");
    CHECK_MSG(memcmp(out[0][1], out[1][1], sizeof out[0][1]) == 0, "box: 1 and 2 threads differ");
    CHECK_MSG(memcmp(out[0][0], out[1][0], sizeof out[0][0]) == 0, "none: 1 and 2 threads differ");
    f.reg = NULL;
    dpdo_regularizer_destroy(none);
    dpdo_regularizer_destroy(box);
    fx_free(&f);
}

/* ---- oracle 16: one hand-computed round ------------------------------------------- */

static void test_hand_round(void)
{
    fx f;
    fx_make(&f, 4, 3, 2, "hinge", NULL, NULL, "l2", 1.0);
    dpdo_algorithm_options o;
    opts(&o, DPDO_NOISE_NONE, 10);
    dpdo_algorithm *a = mk(&f, "dp-dda", &o);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_SCHEDULE, DPDO_DDA_SCHEDULE_STRONG), DPDO_OK);
    static const int64_t act1[] = {0, 1}, act2[] = {2, 3};
    double zeta[8] = {1, 0, 0, 2, 0, 0, 0, 0}, zero[8] = {0};
    CHECK_EQ(dpdo__algorithm_inject_active(a, act1, 2), DPDO_OK);
    CHECK_EQ(dpdo__algorithm_inject_zeta(a, zeta), DPDO_OK);
    double x[2];
    CHECK_EQ(dpdo_algorithm_get_iterate(a, 0, x, 2), DPDO_OK);
    CHECK(x[0] == 0 && x[1] == 0);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
    for (int i = 0; i < 4; i++) {
        double z[2];
        dpdo_algorithm_get_state(a, "z", i, z, 2);
        dpdo_algorithm_get_iterate(a, i, x, 2);
        if (i < 2) {
            CHECK_NEAR(z[0], 0.5, 1e-15);
            CHECK_NEAR(z[1], 1.0, 1e-15);
            CHECK_NEAR(x[0], -1.0 / 3, 1e-15);
            CHECK_NEAR(x[1], -2.0 / 3, 1e-15);
        } else {
            CHECK(z[0] == 0 && z[1] == 0 && x[0] == 0 && x[1] == 0);
        }
    }
    CHECK_EQ(dpdo__algorithm_inject_active(a, act2, 2), DPDO_OK);
    CHECK_EQ(dpdo__algorithm_inject_zeta(a, zero), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
    CHECK_EQ(dpdo_algorithm_get_output(a, 0, x, 2), DPDO_OK);
    CHECK_NEAR(x[0], -2.0 / 9, 1e-15);
    CHECK_NEAR(x[1], -4.0 / 9, 1e-15);
    int32_t fl[4];
    CHECK_EQ(dpdo_algorithm_get_active(a, fl, 4), DPDO_OK);
    CHECK(fl[0] == 0 && fl[1] == 0 && fl[2] == 1 && fl[3] == 1);
    /* counters: a matched pair sends 2 messages of d values */
    int64_t m, s, b;
    CHECK_EQ(dpdo_algorithm_comm(a, DPDO_NODE_ALL, &m, &s, &b), DPDO_OK);
    CHECK_EQ(m, 4);
    CHECK_EQ(s, 8);
    CHECK_EQ(b, 64);
    CHECK_EQ(dpdo_algorithm_comm(a, 0, &m, NULL, NULL), DPDO_OK);
    CHECK_EQ(m, 1);
    double eps;
    int32_t valid = 7;
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eps, NULL, &valid), DPDO_OK);
    CHECK(isinf(eps) && valid == 0);
    CHECK_STR_CONTAINS(dpdo_algorithm_privacy_notes(a), "not private");
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_PAPER, DPDO_NODE_ALL, &eps, NULL, NULL), DPDO_E_UNSUPPORTED);
    dpdo_algorithm_destroy(a);
    fx_free(&f);
}

/* ---- oracles 17, 18: conservation and frozen inactive rows; counters -------- */

static void test_conservation(void)
{
    enum { N = 8, D = 5 };
    fx f;
    fx_make(&f, N, 6, D, "hinge", NULL, NULL, NULL, 0);
    double en[2] = {0.01, 0.02};
    CHECK_EQ(dpdo_regularizer_create(&f.reg, dpdo_regularizer_type_find("elastic-net"), NULL, D, en, 2), DPDO_OK);
    dpdo_algorithm_options o;
    opts(&o, DPDO_NOISE_FIXED, 300);
    o.sigma = 0.7;
    o.max_epsilon = INFINITY;
    dpdo_algorithm *a = mk(&f, "dp-dda", &o);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, 4), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_SCHEDULE, DPDO_DDA_SCHEDULE_STRONG), DPDO_OK);
    static double zeta[N * D], z0[N * D], z1[N * D], x0[N * D], x1[N * D];
    int bad_cons = 0, bad_frozen = 0;
    for (int t = 1; t <= 200; t++) {
        for (int k = 0; k < N * D; k++) zeta[k] = nrand() * (t % 3 ? 1.0 : 1e3);
        for (int i = 0; i < N; i++) {
            dpdo_algorithm_get_state(a, "z", i, z0 + i * D, D);
            dpdo_algorithm_get_iterate(a, i, x0 + i * D, D);
        }
        if (t % 2) dpdo__algorithm_inject_zeta(a, zeta);
        CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
        int32_t fl[N];
        dpdo_algorithm_get_active(a, fl, N);
        int nact = 0;
        for (int i = 0; i < N; i++) {
            nact += fl[i];
            dpdo_algorithm_get_state(a, "z", i, z1 + i * D, D);
            dpdo_algorithm_get_iterate(a, i, x1 + i * D, D);
            if (!fl[i]) bad_frozen += memcmp(z0 + i * D, z1 + i * D, sizeof(double) * D) != 0 ||
                                      memcmp(x0 + i * D, x1 + i * D, sizeof(double) * D) != 0;
        }
        CHECK_EQ(nact, 4);
        if (bad_frozen) {
            for (int i = 0; i < N; i++) fprintf(stderr, "# t=%d node %d fl %d z0 %g z1 %g x0 %g x1 %g\n", t, i, fl[i], z0[i*D], z1[i*D], x0[i*D], x1[i*D]);
            break;
        }
        if (t % 2) { /* sum z grows by a_t sum over active zeta exactly (up to rounding) */
            for (int k = 0; k < D; k++) {
                double before = 0, after = 0, add = 0, scale = 0;
                for (int i = 0; i < N; i++) {
                    before += z0[i * D + k];
                    after += z1[i * D + k];
                    if (fl[i]) add += (double)t * zeta[i * D + k];
                    scale += fabs(z1[i * D + k]) + fabs((double)t * zeta[i * D + k]);
                }
                if (fabs(after - before - add) > 1e-12 * scale) bad_cons++;
            }
        }
    }
    CHECK_EQ(bad_cons, 0);
    CHECK_EQ(bad_frozen, 0);
    int64_t m, s, b;
    dpdo_algorithm_comm(a, DPDO_NODE_ALL, &m, &s, &b);
    CHECK_EQ(m, 4 * 200);
    CHECK_EQ(s, 4 * 200 * D);
    CHECK_EQ(b, 32 * 200 * D);
    /* every computing node was charged once per round it computed */
    int64_t tot = 0;
    for (int i = 0; i < N; i++) tot += dpdo_ledger_charges(f.led, i);
    CHECK_EQ(tot, 4 * 200);
    dpdo_algorithm_destroy(a);
    fx_free(&f);
}

/* ---- oracle 19: n = b = 1 is centralised regularised dual averaging ----------- */

static void test_centralised(void)
{
    enum { D = 4, Q = 7, T = 60 };
    fx f;
    fx_make(&f, 1, Q, D, "hinge", NULL, NULL, "l2", 0.3);
    dpdo_algorithm_options o;
    opts(&o, DPDO_NOISE_NONE, T);
    o.batch = Q; /* the whole shard: a deterministic subgradient */
    o.step_size = 2.0;
    o.step_power = 0.5;
    dpdo_algorithm *a = mk(&f, "dp-dda", &o);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_SCHEDULE, DPDO_DDA_SCHEDULE_CONVEX), DPDO_OK);
    /* reference: z += g(x); x = -z / (A_{t+1} lambda + gamma_{t+1}), A_t = t */
    double z[D] = {0}, x[D] = {0}, s[D] = {0}, got[D];
    double worst = 0;
    for (int t = 1; t <= T; t++) {
        double g[D] = {0};
        for (int r = 0; r < Q; r++) {
            const double *c = f.X + r * D;
            double m = 0;
            for (int k = 0; k < D; k++) m += c[k] * x[k];
            if (f.Y[r] * m < 1)
                for (int k = 0; k < D; k++) g[k] -= f.Y[r] * c[k] / Q;
        }
        for (int k = 0; k < D; k++) {
            s[k] += x[k];
            z[k] += g[k];
            x[k] = -z[k] / ((t + 1) * 0.3 + 2.0 * sqrt(t + 1.0));
        }
        CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
        dpdo_algorithm_get_iterate(a, 0, got, D);
        for (int k = 0; k < D; k++) worst = fmax(worst, fabs(got[k] - x[k]) / (fabs(x[k]) + 1e-300));
    }
    CHECK(worst < 1e-12);
    dpdo_algorithm_get_output(a, 0, got, D);
    for (int k = 0; k < D; k++) CHECK_REL(got[k], s[k] / T, 1e-12);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_DONE);
    CHECK_EQ(dpdo_algorithm_stop_reason(a), DPDO_STOP_MAX_ROUNDS);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_E_STATE);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "max rounds");
    dpdo_algorithm_destroy(a);
    fx_free(&f);
}

/* ---- oracle 19b: iota = 1 with full averaging keeps every node identical ---- */

static void test_full_average(void)
{
    enum { N = 5, D = 3 };
    fx f;
    fx_make(&f, N, 8, D, "hinge", NULL, NULL, "l1", 0.05);
    dpdo_algorithm_options o;
    opts(&o, DPDO_NOISE_FIXED, 40);
    o.sigma = 0.5;
    o.max_epsilon = INFINITY;
    dpdo_algorithm *a = mk(&f, "dp-dda", &o);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, N), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_SCHEME, DPDO_ROUND_AVERAGE), DPDO_OK);
    int bad = 0;
    for (int t = 0; t < 40; t++) {
        CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
        double z0[D], x0[D], zi[D], xi[D];
        dpdo_algorithm_get_state(a, "z", 0, z0, D);
        dpdo_algorithm_get_iterate(a, 0, x0, D);
        for (int i = 1; i < N; i++) {
            dpdo_algorithm_get_state(a, "z", i, zi, D);
            dpdo_algorithm_get_iterate(a, i, xi, D);
            bad += memcmp(z0, zi, sizeof z0) != 0 || memcmp(x0, xi, sizeof x0) != 0;
        }
        /* x = -S_{kappa lambda}(z) / gamma_{t+1}, kappa = A_{t+1} (iota = 1), a_t = 1, gamma_t = sqrt(t) */
        double kap = (double)(t + 2) * 0.05, g = sqrt((double)(t + 2));
        for (int k = 0; k < D; k++) {
            double want = -copysign(fmax(fabs(z0[k]) - kap, 0.0), z0[k]) / g;
            if (fabs(x0[k] - want) > 1e-15 * (1 + fabs(want))) bad++;
        }
    }
    CHECK_EQ(bad, 0);
    dpdo_algorithm_destroy(a);
    fx_free(&f);
}

/* ---- the tolerance stop ------------------------------------------------------ */

static void test_tolerance(void)
{
    fx f;
    fx_make(&f, 4, 10, 3, "logistic", NULL, NULL, "l2", 0.5);
    dpdo_algorithm_options o;
    opts(&o, DPDO_NOISE_NONE, 100000);
    o.tol = 1e-4;
    o.check_every = 10;
    dpdo_algorithm *a = mk(&f, "dp-dda", &o);
    int64_t steps = 0;
    CHECK_EQ(dpdo_algorithm_run(a, 0, &steps), DPDO_DONE);
    CHECK_EQ(dpdo_algorithm_stop_reason(a), DPDO_STOP_TOLERANCE);
    CHECK(steps > 10 && steps < 100000 && steps % 10 == 0);
    /* the last test really met the tolerance: outputs 10 rounds apart differ by <= tol */
    double x1[3], x2[3];
    dpdo_algorithm_get_output(a, DPDO_NODE_ALL, x2, 3);
    CHECK_EQ(dpdo_algorithm_reset(a), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_run(a, steps - 10, NULL), DPDO_ROUND);
    dpdo_algorithm_get_output(a, DPDO_NODE_ALL, x1, 3);
    double dn = 0, xn = 0;
    for (int k = 0; k < 3; k++) dn += (x2[k] - x1[k]) * (x2[k] - x1[k]), xn += x2[k] * x2[k];
    CHECK(sqrt(dn) <= 1e-4 * fmax(1, sqrt(xn)));
    dpdo_algorithm_destroy(a);
    fx_free(&f);
}

/* ---- progress callback and clean cancel ------------------------------------ */

typedef struct prog_log {
    int calls, stop_at_call;
    int64_t rounds[64];
    double eps[64], obj[64];
} prog_log;

static int on_progress(const dpdo_progress *p, void *user)
{
    prog_log *l = user;
    if (l->calls < 64) {
        l->rounds[l->calls] = p->round;
        l->eps[l->calls] = p->epsilon;
        l->obj[l->calls] = p->objective;
    }
    l->calls++;
    return l->stop_at_call > 0 && l->calls == l->stop_at_call;
}

static void test_progress_cancel(void)
{
    fx f;
    fx_make(&f, 4, 10, 3, "logistic", NULL, NULL, "l2", 0.5);
    dpdo_algorithm_options o;
    opts(&o, DPDO_NOISE_RIGOROUS, 50);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    dpdo_algorithm *a = mk(&f, "dp-dda", &o);
    /* bad arguments */
    CHECK_EQ(dpdo_algorithm_set_progress(NULL, on_progress, NULL, 1, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_progress(a, on_progress, NULL, 0, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_progress(a, on_progress, NULL, 1, 64), DPDO_E_INVAL);
    prog_log l;
    memset(&l, 0, sizeof l);
    l.stop_at_call = 3;
    CHECK_EQ(dpdo_algorithm_set_progress(a, on_progress, &l, 7, DPDO_PROGRESS_EPSILON | DPDO_PROGRESS_OBJECTIVE),
             DPDO_OK);
    int64_t steps = -1;
    /* stops after the third report, at round 21, with the run intact */
    CHECK_EQ(dpdo_algorithm_run(a, 0, &steps), DPDO_E_CANCELED);
    CHECK_EQ(steps, 21);
    CHECK_EQ(dpdo_algorithm_round(a), 21);
    CHECK_EQ(l.calls, 3);
    CHECK_EQ(l.rounds[0], 7);
    CHECK_EQ(l.rounds[2], 21);
    CHECK(l.eps[0] > 0 && l.eps[1] > l.eps[0] && l.eps[2] > l.eps[1] && l.eps[2] <= 1.0);
    CHECK(isfinite(l.obj[0]) && isfinite(l.obj[2]));
    CHECK(strstr(dpdo_algorithm_errmsg(a), "progress") != NULL);
    CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_RUNNING);
    /* continue to the end: the result is bit-identical to an uninterrupted run */
    l.stop_at_call = 0;
    CHECK_EQ(dpdo_algorithm_run(a, 0, &steps), DPDO_DONE);
    CHECK_EQ(steps, 29);
    CHECK_EQ(l.rounds[l.calls - 1 < 63 ? l.calls - 1 : 63], 50); /* the final report */
    double xa[3], xb[3];
    CHECK_EQ(dpdo_algorithm_get_output(a, DPDO_NODE_ALL, xa, 3), DPDO_OK);
    /* NULL unregisters; the same run uninterrupted (reset keeps the streams) is bit-identical */
    CHECK_EQ(dpdo_algorithm_set_progress(a, NULL, NULL, 1, 0), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_reset(a), DPDO_OK);
    int before = l.calls;
    CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
    CHECK_EQ(l.calls, before);
    CHECK_EQ(dpdo_algorithm_get_output(a, DPDO_NODE_ALL, xb, 3), DPDO_OK);
    CHECK(memcmp(xa, xb, sizeof xa) == 0);
    dpdo_algorithm_destroy(a);
    fx_free(&f);
}

/* Under the "auto" accountant the rigorous figure names the member that produced it. */
static void test_auto_source(void)
{
    fx f;
    fx_make(&f, 4, 200, 3, "logistic", NULL, NULL, "l2", 0.5);
    dpdo_accountant *au = NULL;
    CHECK_EQ(dpdo_accountant_create(&au, dpdo_accountant_type_find("auto"), NULL, f.led, NULL), DPDO_OK);
    dpdo_algorithm_options o;
    opts(&o, DPDO_NOISE_RIGOROUS, 20000); /* default randomness: SECURE, discrete grid noise */
    o.delta = 1e-2; /* where PLD and RDP differ most, as in the DP-DDA demo */
    o.randomness = DPDO_RANDOMNESS_SECURE;
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, f.n, f.net, f.reg, au, &o), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
    double eps = NAN;
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eps, NULL, NULL), DPDO_OK);
    /* the fine lattice Gaussian events are charged through the continuous PLD plus a proven shift
     * (docs/privacy.md): the calibration and the guard plan with the same figure, so the run ends
     * at, not above, the target */
    CHECK_MSG(eps > 0.5 && eps <= 1.0 * (1 + 1e-9), "eps %.6g for a target of 1 (stop reason %d)", eps,
              dpdo_algorithm_stop_reason(a));
    const char *src = dpdo_algorithm_privacy_source(a, DPDO_PRIVACY_RIGOROUS);
    double sg = NAN;
    dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &sg);
    printf("# auto accountant, secure DP-DDA: sigma %.6g, eps %.6g by %s, rounds %lld\n", sg, eps, src,
           (long long)dpdo_algorithm_round(a));
    CHECK_EQ(dpdo_algorithm_round(a), 20000); /* calibrated with the guard's figure: no early stop */
    CHECK_MSG(strcmp(src, "pld") == 0, "source '%s' (the fine lattice Gaussian is charged by pld)", src);
    /* the figure is that member's own answer over the same ledger */
    dpdo_accountant *m = NULL;
    CHECK_EQ(dpdo_accountant_create(&m, dpdo_accountant_type_find(src), NULL, f.led, NULL), DPDO_OK);
    double em = NAN;
    CHECK_EQ(dpdo_accountant_epsilon(m, DPDO_NODE_ALL, o.delta, &em, NULL), DPDO_OK);
    CHECK_NEAR(em, eps, 1e-12 * eps);
    dpdo_accountant_destroy(m);
    dpdo_algorithm_destroy(a);
    /* secure runs pay (almost) the continuous Gaussian's PLD sigma, not RDP's (4.70 before) */
    dpdo_ledger_reset(f.led);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, f.n, f.net, f.reg, au, &o), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
    double sr = NAN;
    dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &sr);
    printf("# the same, reproducible (continuous Gaussian, pld): sigma %.6g; secure / reproducible %.6f\n", sr, sg / sr);
    CHECK_MSG(sg >= sr && sg <= 1.01 * sr, "secure sigma %g vs reproducible %g", sg, sr);
    dpdo_algorithm_destroy(a);
    dpdo_accountant_destroy(au);
    fx_free(&f);
}

/* ---- oracle 21: lazy output equals the eager sum; no allocation after round 1 -- */

static void test_lazy_and_alloc(void)
{
    enum { N = 6, D = 3 };
    int T = h_quick() ? 500 : 4000;
    fx f;
    fx_make(&f, N, 10, D, "logistic", NULL, NULL, "l2", 0.05);
    dpdo_algorithm_options o;
    opts(&o, DPDO_NOISE_FIXED, T);
    o.sigma = 0.3;
    dpdo_algorithm *a = mk(&f, "dp-dda", &o);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_SCHEDULE, DPDO_DDA_SCHEDULE_PAPER_L2), DPDO_OK);
    static double eager[N * D], xi[D];
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
    for (int i = 0; i < N; i++) { /* round 1 used x^(1) = 0 */
    }
    dpdo__fault_arm(0);
    for (int t = 2; t <= T; t++) {
        for (int i = 0; i < N; i++) {
            dpdo_algorithm_get_iterate(a, i, xi, D);
            for (int k = 0; k < D; k++) eager[i * D + k] += (double)t * xi[k];
        }
        if (dpdo_algorithm_step(a) != DPDO_ROUND) break;
    }
    long allocs = dpdo__fault_allocs();
    dpdo__fault_arm(-1);
    CHECK_EQ(allocs, 0);
    double AT = (double)T * (T + 1) / 2, worst = 0;
    for (int i = 0; i < N; i++) {
        dpdo_algorithm_get_output(a, i, xi, D);
        for (int k = 0; k < D; k++)
            worst = fmax(worst, fabs(xi[k] - eager[i * D + k] / AT) / (fabs(eager[i * D + k] / AT) + 1e-300));
    }
    CHECK(worst < 1e-12);
    dpdo_algorithm_destroy(a);
    fx_free(&f);
}

/* ---- a failing user loss mid-round leaves everything as after the last round --- */

typedef struct failer { int64_t calls, fail_at; } failer;
static int fail_phi(void *user, double m, double y, double *l, double *dl)
{
    failer *F = user;
    if (++F->calls == F->fail_at) return 7;
    double s = y * m;
    *l = s < 1 ? 1 - s : 0;
    *dl = s < 1 ? -y : 0;
    if (F->fail_at < 0 && F->calls == -F->fail_at) *dl = NAN;
    return 0;
}

typedef struct snap {
    double z[64], x[64], s[64];
    int64_t comm[3];
    char ledger[4096];
    int64_t ledlen;
} snap;

static void take(dpdo_algorithm *a, dpdo_ledger *l, snap *s, int n, int d)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < n; i++) {
        dpdo_algorithm_get_state(a, "z", i, s->z + i * d, d);
        dpdo_algorithm_get_state(a, "x", i, s->x + i * d, d);
        dpdo_algorithm_get_state(a, "s", i, s->s + i * d, d);
    }
    dpdo_algorithm_comm(a, DPDO_NODE_ALL, &s->comm[0], &s->comm[1], &s->comm[2]);
    CHECK_EQ(dpdo_ledger_save(l, s->ledger, sizeof s->ledger, &s->ledlen), DPDO_OK);
}

static void test_callback_failure(void)
{
    enum { N = 4, D = 3 };
    for (int nan_case = 0; nan_case < 2; nan_case++) {
        failer F = {0, 0};
        dpdo_loss_type ut = {sizeof ut, "failer", fail_phi, NULL, NULL, NULL, NULL, NULL};
        fx f;
        fx_make(&f, N, 5, D, NULL, &ut, &F, "l2", 0.1);
        dpdo_algorithm_options o;
        opts(&o, DPDO_NOISE_FIXED, 50);
        o.sigma = 1.0;
        o.seed = 42;
        dpdo_algorithm *a = mk(&f, "dp-dda", &o);
        snap s4, s5, r4;
        CHECK_EQ(dpdo_algorithm_run(a, 4, NULL), DPDO_ROUND);
        take(a, f.led, &s4, N, D);
        F.fail_at = nan_case ? -(F.calls + 1) : F.calls + 1;
        int rc = dpdo_algorithm_step(a);
        CHECK_EQ(rc, nan_case ? DPDO_E_NUMERIC : DPDO_E_CALLBACK);
        CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "round 5, node");
        if (!nan_case) CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "7");
        CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_FAILED);
        CHECK_EQ(dpdo_algorithm_round(a), 4);
        take(a, f.led, &s5, N, D);
        CHECK(memcmp(&s4, &s5, sizeof s4) == 0);
        CHECK_EQ(dpdo_algorithm_step(a), DPDO_E_STATE);
        F.fail_at = 0;
        CHECK_EQ(dpdo_algorithm_reset(a), DPDO_OK);
        int64_t steps = 0;
        CHECK_EQ(dpdo_algorithm_run(a, 4, &steps), DPDO_ROUND);
        CHECK_EQ(steps, 4);
        take(a, f.led, &r4, N, D);
        CHECK(memcmp(&s4, &r4, sizeof s4) == 0);
        dpdo_algorithm_destroy(a);
        fx_free(&f);
    }
}

/* ---- the budget guard and reset of the ledger --------------------------------- */

static void test_guard_and_reset(void)
{
    enum { N = 6, D = 3 };
    fx f;
    fx_make(&f, N, 20, D, "hinge", NULL, NULL, "l2", 0.1);
    char before[4096];
    int64_t blen;
    CHECK_EQ(dpdo_ledger_save(f.led, before, sizeof before, &blen), DPDO_OK);
    dpdo_algorithm_options o;
    opts(&o, DPDO_NOISE_FIXED, 100000);
    o.sigma = 10.0;
    o.max_epsilon = 1.0;
    o.delta = 1e-5;
    dpdo_algorithm *a = mk(&f, "dp-dda", &o);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, 2), DPDO_OK);
    int rc;
    int64_t rounds = 0;
    double last_ok = 0;
    while ((rc = dpdo_algorithm_step(a)) == DPDO_ROUND) {
        rounds++;
        if (rounds % 50 == 0)
            CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &last_ok, NULL, NULL), DPDO_OK);
    }
    CHECK_EQ(rc, DPDO_DONE);
    CHECK_EQ(dpdo_algorithm_stop_reason(a), DPDO_STOP_BUDGET);
    CHECK_MSG(rounds > 10 && rounds < 100000, "rounds = %lld, eps = %g", (long long)rounds, last_ok);
    double eps;
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eps, NULL, NULL), DPDO_OK);
    CHECK(eps <= 1.0);
    CHECK(eps > 0.9);
    /* the most charged node cannot take one more release */
    int64_t worst = 0;
    for (int i = 0; i < N; i++) worst = dpdo_ledger_charges(f.led, i) > dpdo_ledger_charges(f.led, worst) ? i : worst;
    dpdo_sampling *s;
    dpdo_event *ev;
    dpdo_sampling_create(&s);
    dpdo_sampling_set_wor(s, 20, 1);
    dpdo_event_create(&ev);
    CHECK_EQ(dpdo_event_set_gaussian(ev, s, 2.0, 10.0), DPDO_OK);
    CHECK_EQ(dpdo_accountant_set_budget(f.acc, 1.0, 1e-5), DPDO_OK);
    int32_t ex = 0;
    CHECK_EQ(dpdo_accountant_would_exceed(f.acc, ev, 1, &worst, 1, &ex, NULL), DPDO_OK);
    CHECK_EQ(ex, 1);
    dpdo_event_destroy(ev);
    dpdo_sampling_destroy(s);
    /* reset removes exactly this run's charges */
    CHECK_EQ(dpdo_algorithm_reset(a), DPDO_OK);
    char after[4096];
    int64_t alen;
    CHECK_EQ(dpdo_ledger_save(f.led, after, sizeof after, &alen), DPDO_OK);
    for (int i = 0; i < N; i++) CHECK_EQ(dpdo_ledger_charges(f.led, i), 0);
    CHECK_EQ(alen, blen);
    CHECK(memcmp(before, after, (size_t)blen) == 0);
    /* the rerun stops at the same round */
    int64_t again = 0;
    CHECK_EQ(dpdo_algorithm_run(a, 0, &again), DPDO_DONE);
    CHECK_EQ(again, rounds);
    dpdo_algorithm_destroy(a);
    fx_free(&f);
}

/* ---- paper and rigorous noise at prepare (oracle 1 through the engine) ------ */

static void test_noise_modes(void)
{
    enum { N = 20 };
    fx f;
    fx_make(&f, N, 1000, 2, "hinge", NULL, NULL, "l2", 0.1);
    dpdo_algorithm_options o;
    opts(&o, DPDO_NOISE_PAPER, 1250000);
    o.epsilon = 0.1;
    o.delta = 1e-4;
    dpdo_algorithm *a = mk(&f, "dp-dda", &o);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
    double sig;
    CHECK_EQ(dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &sig), DPDO_OK);
    CHECK_REL(sig, 19.90325356, 1e-9);
    int32_t valid = 0;
    double eps, dl;
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_PAPER, DPDO_NODE_ALL, &eps, &dl, &valid), DPDO_OK);
    CHECK_EQ(valid, 1);
    CHECK_EQ(eps, 0.0); /* round 0 */
    CHECK_STR_CONTAINS(dpdo_algorithm_privacy_source(a, DPDO_PRIVACY_PAPER), "dp-dda-thm1");
    CHECK_STR_CONTAINS(dpdo_algorithm_privacy_source(a, DPDO_PRIVACY_RIGOROUS), "rdp");
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_MAX_ROUNDS, 2000000), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, 4), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
    dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &sig);
    CHECK_REL(sig, 50.35169127, 1e-9);
    dpdo_algorithm_destroy(a);
    a = mk(&f, "dp-dda-baseline", &o);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_MAX_ROUNDS, 2000000), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
    dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &sig);
    CHECK_REL(sig, 251.7584563, 1e-9);
    dpdo_algorithm_destroy(a);
    /* rigorous: the calibrated sigma meets the target for K releases, and barely */
    opts(&o, DPDO_NOISE_RIGOROUS, 20000);
    o.epsilon = 1.0;
    o.delta = 1e-5;
    a = mk(&f, "dp-dda", &o);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
    dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &sig);
    CHECK(sig > 0 && isfinite(sig));
    CHECK_STR_CONTAINS(dpdo_algorithm_privacy_notes(a), "public");
    {
        dpdo_sampling *s;
        dpdo_sampling_create(&s);
        dpdo_sampling_set_wor(s, 1000, 1);
        double K;
        CHECK_EQ(dpdo_accountant_calibrate_steps(f.acc, s, 2.0, sig, 1.0, 1e-5, &K), DPDO_OK);
        /* K is the (1 - 1e-6) quantile of Binomial(20000, 0.1): between the mean and T */
        CHECK(K >= 2000 && K < 20000);
        double K2;
        CHECK_EQ(dpdo_accountant_calibrate_steps(f.acc, s, 2.0, sig * (1 - 1e-6), 1.0, 1e-5, &K2), DPDO_OK);
        CHECK(K2 <= K);
        dpdo_sampling_destroy(s);
    }
    CHECK_EQ(dpdo_algorithm_run(a, 300, NULL), DPDO_ROUND);
    double e0, eall, emax = 0;
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eall, NULL, NULL), DPDO_OK);
    for (int i = 0; i < N; i++) {
        CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, i, &e0, NULL, NULL), DPDO_OK);
        emax = fmax(emax, e0);
    }
    CHECK_REL(eall, emax, 1e-12);
    CHECK(eall < 1.0);
    dpdo_algorithm_destroy(a);
    /* strict mode refuses the paper's T < T_min */
    opts(&o, DPDO_NOISE_PAPER, 1000);
    o.epsilon = 0.8;
    o.delta = 0.01;
    o.strict = 1;
    dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-dda"));
    CHECK_EQ(dpdo_algorithm_setup(a, f.nodes, N, f.net, f.reg, f.acc, &o), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "T_min");
    dpdo_algorithm_destroy(a);
    fx_free(&f);
}

/* ---- out of memory: create, setup, prepare ------------------------------------ */

static void test_oom(void)
{
    fx f;
    fx_make(&f, 4, 5, 3, "hinge", NULL, NULL, "l2", 0.1);
    dpdo_algorithm_options o;
    opts(&o, DPDO_NOISE_RIGOROUS, 100);
    int done = 0;
    for (long k = 0; k < 500 && !done; k++) {
        dpdo_algorithm *a = NULL;
        dpdo__fault_arm(k);
        int rc = dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-dda"));
        if (rc == DPDO_OK) rc = dpdo_algorithm_setup(a, f.nodes, 4, f.net, f.reg, f.acc, &o);
        if (rc == DPDO_OK) rc = dpdo_algorithm_prepare(a);
        if (rc == DPDO_OK) rc = dpdo_algorithm_step(a) == DPDO_ROUND ? DPDO_OK : -99;
        int fired = dpdo__fault_fired();
        dpdo__fault_arm(-1);
        if (!fired) {
            CHECK_EQ(rc, DPDO_OK);
            done = 1;
        } else {
            CHECK_MSG(rc == DPDO_E_NOMEM, "k = %ld: rc = %d (%s)", k, rc, dpdo_algorithm_errmsg(a));
            if (a) CHECK(dpdo_algorithm_state(a) != DPDO_ALG_RUNNING);
        }
        dpdo_algorithm_destroy(a);
    }
    CHECK(done);
    /* the network is unlocked again after every failed setup */
    CHECK_EQ(dpdo_network_set_complete(f.net, 4), DPDO_OK);
    fx_free(&f);
}

int main(void)
{
    RUN(test_types);
    RUN(test_options);
    RUN(test_bad_setup);
    RUN(test_hand_round);
    RUN(test_nonfinite_round);
    RUN(test_generic_map_path);
    RUN(test_conservation);
    RUN(test_centralised);
    RUN(test_full_average);
    RUN(test_tolerance);
    RUN(test_progress_cancel);
    RUN(test_auto_source);
    RUN(test_lazy_and_alloc);
    RUN(test_callback_failure);
    RUN(test_guard_and_reset);
    RUN(test_noise_modes);
    RUN(test_oom);
    return h_finish();
}
