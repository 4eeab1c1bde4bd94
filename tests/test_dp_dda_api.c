/* SPDX-License-Identifier: BSD-3-Clause */
/* DP-DDA through the public algorithm API (include/dpdo/algorithm.h), as a
 * black box: types and options, the state machine (step after DONE, reset),
 * determinism (two handles, same seed -> identical bytes; reset reproduces
 * the run and restores the ledger text; run() = a loop of step()), the budget
 * guard (checked against an unguarded twin run), bad input for setup, every
 * options field, parameters and getters, a user loss callback failing in
 * the middle of round 5 (E_CALLBACK) or returning a NaN gradient (E_NUMERIC)
 * with the state left exactly as after round 4, the communication counters
 * of random matchings, the objective helpers against a direct computation,
 * and the paper-mode noise oracles 1, 2 and 5 of spec dp-dda.md §8 (values
 * recomputed here from (T1a) and compared with the spec's digits). */
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include "dpdo/dpdo.h"
#include "dpdo/algorithm.h"
#include "dpdo/reference.h"
#include "harness.h"

/* ---- test-side random numbers --------------------------------------------- */
static uint64_t ts = 0x9e3779b97f4a7c15ull;
static double urand(void)
{
    ts ^= ts << 13;
    ts ^= ts >> 7;
    ts ^= ts << 17;
    return ((double)(ts >> 11) + 0.5) * 0x1.0p-53;
}
static double nrand(void) { return sqrt(-2.0 * log(urand())) * cos(6.283185307179586 * urand()); }

/* ---- a controllable user loss: hinge, with failure injection ----------------- */
typedef struct {
    int fail;    /* non-zero: the phi callback returns this code */
    int nan;     /* non-zero: the derivative is NaN */
    int64_t calls;
} ctl;

static int ctl_phi(void *u, double m, double y, double *l, double *dl)
{
    ctl *c = u;
    c->calls++;
    if (c->fail) return c->fail;
    double z = y * m;
    *l = z < 1 ? 1 - z : 0;
    *dl = c->nan ? NAN : (z < 1 ? -y : 0);
    return 0;
}
static int ctl_bounds(void *u, double mb, double yb, double *d1, double *d2)
{
    (void)u, (void)mb;
    *d1 = yb;
    *d2 = INFINITY;
    return 0;
}
static const dpdo_loss_type ctl_type = {sizeof(dpdo_loss_type), "ctl-hinge", ctl_phi, NULL, NULL,
                                        ctl_bounds, NULL, NULL};

static int model_fn(void *u, const double *x, int64_t dim, double *v, double *g)
{
    (void)u;
    *v = 0;
    for (int64_t j = 0; j < dim; j++) {
        *v += x[j] * x[j];
        if (g) g[j] = 2 * x[j];
    }
    return 0;
}
static const dpdo_loss_type model_type = {sizeof(dpdo_loss_type), "model", NULL, NULL, model_fn,
                                          NULL, NULL, NULL};

/* ---- problem: n nodes x q rows x d features, unit rows, labels +-1 ---------- */
enum { NMAX = 20, DMAX = 8 };

typedef struct {
    int n;
    int64_t q, d;
    double *X, *Y;
    dpdo_dataset *ds;
    dpdo_shard *sh[NMAX];
    dpdo_loss *loss[NMAX]; /* shared built-in hinge in [0], or one ctl loss per node */
    ctl c[NMAX];
    int per_node;
    dpdo_node *nodes[NMAX];
    dpdo_regularizer *reg;
} prob;

typedef struct { /* per-run context: network, ledger, accountant */
    dpdo_network *net;
    dpdo_ledger *led;
    dpdo_accountant *acc;
} ctx;

static void prob_make(prob *p, int n, int64_t q, int64_t d, int per_node, double lambda)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->q = q;
    p->d = d;
    p->per_node = per_node;
    int64_t N = (int64_t)n * q;
    p->X = malloc((size_t)(N * d) * sizeof(double));
    p->Y = malloc((size_t)N * sizeof(double));
    for (int64_t r = 0; r < N; r++) {
        double nn = 0;
        for (int64_t j = 0; j < d; j++) {
            p->X[r * d + j] = nrand() + (j == 0 ? 0.7 : 0.0);
            nn += p->X[r * d + j] * p->X[r * d + j];
        }
        nn = sqrt(nn);
        for (int64_t j = 0; j < d; j++) p->X[r * d + j] /= nn;
        p->Y[r] = urand() < 0.6 ? 1.0 : -1.0;
    }
    CHECK_EQ(dpdo_dataset_create(&p->ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_dense(p->ds, N, d, p->X, p->Y, DPDO_BORROW), DPDO_OK);
    if (!per_node) CHECK_EQ(dpdo_loss_create(&p->loss[0], dpdo_loss_type_find("hinge"), NULL, d), DPDO_OK);
    for (int i = 0; i < n; i++) {
        CHECK_EQ(dpdo_shard_create_range(&p->sh[i], p->ds, i * q, q), DPDO_OK);
        if (per_node) CHECK_EQ(dpdo_loss_create(&p->loss[i], &ctl_type, &p->c[i], d), DPDO_OK);
        CHECK_EQ(dpdo_node_create(&p->nodes[i], p->sh[i], p->loss[per_node ? i : 0], 1.0), DPDO_OK);
    }
    if (lambda > 0)
        CHECK_EQ(dpdo_regularizer_create(&p->reg, dpdo_regularizer_type_find("l2"), NULL, d,
                                         &lambda, 1),
                 DPDO_OK);
}

static void prob_free(prob *p)
{
    for (int i = 0; i < p->n; i++) {
        dpdo_node_destroy(p->nodes[i]);
        dpdo_shard_destroy(p->sh[i]);
        dpdo_loss_destroy(p->loss[i]);
    }
    dpdo_regularizer_destroy(p->reg);
    dpdo_dataset_destroy(p->ds);
    free(p->X);
    free(p->Y);
}

static void ctx_make(ctx *c, int n)
{
    memset(c, 0, sizeof *c);
    CHECK_EQ(dpdo_network_create(&c->net), DPDO_OK);
    CHECK_EQ(dpdo_network_set_complete(c->net, n), DPDO_OK);
    CHECK_EQ(dpdo_ledger_create(&c->led, n), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&c->acc, dpdo_accountant_type_find("rdp"), NULL, c->led, NULL),
             DPDO_OK);
}

static void ctx_free(ctx *c)
{
    dpdo_accountant_destroy(c->acc);
    dpdo_ledger_destroy(c->led);
    dpdo_network_destroy(c->net);
}

static void fixed_opts(dpdo_algorithm_options *o, uint64_t seed, int64_t T, double sigma)
{
    dpdo_algorithm_options_init(o, sizeof *o);
    o->randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o->seed = seed;
    o->max_rounds = T;
    o->noise_mode = DPDO_NOISE_FIXED;
    o->sigma = sigma;
}

static dpdo_algorithm *mk(const char *type, prob *p, ctx *c, const dpdo_algorithm_options *o,
                          int b)
{
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find(type)), DPDO_OK);
    if (!a) return NULL;
    int rc = dpdo_algorithm_setup(a, p->nodes, p->n, c->net, p->reg, c->acc, o);
    CHECK_MSG(rc == DPDO_OK, "setup: rc %d: %s", rc, dpdo_algorithm_errmsg(a));
    if (rc) {
        dpdo_algorithm_destroy(a);
        return NULL;
    }
    if (b > 0) CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, b), DPDO_OK);
    return a;
}

static char *ledger_text(dpdo_ledger *l, int64_t *len)
{
    int64_t n = 0;
    CHECK_EQ(dpdo_ledger_save(l, NULL, 0, &n), DPDO_OK);
    char *buf = calloc((size_t)n + 1, 1);
    CHECK_EQ(dpdo_ledger_save(l, buf, n + 1, &n), DPDO_OK);
    if (len) *len = n;
    return buf;
}

/* ---- snapshots of everything a round changes ---------------------------------- */
typedef struct {
    double z[NMAX * DMAX], x[NMAX * DMAX], s[NMAX * DMAX], out[NMAX * DMAX];
    double itall[DMAX], outall[DMAX], eps[NMAX + 1];
    int64_t comm[(NMAX + 1) * 3];
    int32_t act[NMAX];
    int64_t round;
    int state;
    char *ledger;
} snap;

static void snap_take(dpdo_algorithm *a, const prob *p, ctx *c, snap *s, int with_eps)
{
    memset(s, 0, sizeof *s);
    int64_t d = p->d;
    for (int i = 0; i < p->n; i++) {
        CHECK_EQ(dpdo_algorithm_get_state(a, "z", i, s->z + i * d, d), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_get_state(a, "x", i, s->x + i * d, d), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_get_state(a, "s", i, s->s + i * d, d), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_get_output(a, i, s->out + i * d, d), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_comm(a, i, &s->comm[3 * i], &s->comm[3 * i + 1],
                                     &s->comm[3 * i + 2]),
                 DPDO_OK);
        if (with_eps)
            CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, i, &s->eps[i], NULL, NULL),
                     DPDO_OK);
    }
    CHECK_EQ(dpdo_algorithm_get_iterate(a, DPDO_NODE_ALL, s->itall, d), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_get_output(a, DPDO_NODE_ALL, s->outall, d), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_comm(a, DPDO_NODE_ALL, &s->comm[3 * p->n], &s->comm[3 * p->n + 1],
                                 &s->comm[3 * p->n + 2]),
             DPDO_OK);
    if (with_eps)
        CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &s->eps[p->n],
                                        NULL, NULL),
                 DPDO_OK);
    CHECK_EQ(dpdo_algorithm_get_active(a, s->act, p->n), DPDO_OK);
    s->round = dpdo_algorithm_round(a);
    s->state = dpdo_algorithm_state(a);
    s->ledger = c ? ledger_text(c->led, NULL) : NULL;
}

static void snap_free(snap *s)
{
    free(s->ledger);
    s->ledger = NULL;
}

/* 0 if equal; else a bit mask of what differs */
static int snap_diff(const snap *a, const snap *b, int with_state)
{
    int m = 0;
    if (memcmp(a->z, b->z, sizeof a->z)) m |= 1;
    if (memcmp(a->x, b->x, sizeof a->x)) m |= 2;
    if (memcmp(a->s, b->s, sizeof a->s)) m |= 4;
    if (memcmp(a->out, b->out, sizeof a->out)) m |= 8;
    if (memcmp(a->itall, b->itall, sizeof a->itall) || memcmp(a->outall, b->outall, sizeof a->outall))
        m |= 16;
    if (memcmp(a->comm, b->comm, sizeof a->comm)) m |= 32;
    if (memcmp(a->eps, b->eps, sizeof a->eps)) m |= 64;
    if (memcmp(a->act, b->act, sizeof a->act)) m |= 128;
    if (a->round != b->round) m |= 256;
    if (with_state && a->state != b->state) m |= 512;
    if ((a->ledger || b->ledger) && (!a->ledger || !b->ledger || strcmp(a->ledger, b->ledger)))
        m |= 1024;
    return m;
}

static int steps(dpdo_algorithm *a, int64_t k)
{
    for (int64_t t = 0; t < k; t++) {
        int rc = dpdo_algorithm_step(a);
        if (rc != DPDO_ROUND) {
            CHECK_MSG(0, "step %lld: rc %d: %s", (long long)t, rc, dpdo_algorithm_errmsg(a));
            return rc;
        }
    }
    return DPDO_ROUND;
}

/* ========================================================================== */

static void types_and_options(void)
{
    const dpdo_algorithm_type *t = dpdo_algorithm_type_find("dp-dda");
    const dpdo_algorithm_type *tb = dpdo_algorithm_type_find("dp-dda-baseline");
    CHECK(t != NULL && tb != NULL && t != tb);
    CHECK(dpdo_algorithm_type_find("nope") == NULL);
    CHECK(dpdo_algorithm_type_find(NULL) == NULL);
    CHECK(strcmp(dpdo_algorithm_type_name(t), "dp-dda") == 0);
    CHECK(strcmp(dpdo_algorithm_type_name(tb), "dp-dda-baseline") == 0);
    CHECK(strcmp(dpdo_algorithm_type_name(NULL), "(null)") == 0);
    CHECK(strcmp(dpdo_algorithm_type_title(NULL), "(null)") == 0);
    CHECK(strlen(dpdo_algorithm_type_title(t)) > 0);
    int seen = 0, k = 0;
    for (const dpdo_algorithm_type *u = dpdo_algorithm_type_next(NULL); u && k < 100;
         u = dpdo_algorithm_type_next(u), k++) {
        seen |= (u == t) | (u == tb) << 1;
        CHECK(dpdo_algorithm_type_find(dpdo_algorithm_type_name(u)) == u);
    }
    CHECK(k < 100);
    CHECK_EQ(seen, 3);
    CHECK(dpdo_algorithm_type_next((const dpdo_algorithm_type *)&seen) == NULL);

    dpdo_algorithm_options o;
    memset(&o, 0xab, sizeof o);
    CHECK_EQ(dpdo_algorithm_options_init(&o, sizeof o), DPDO_OK);
    CHECK_EQ(o.struct_size, sizeof o);
    CHECK_EQ(o.seed, 0);
    CHECK_EQ(o.max_rounds, 1000);
    CHECK(isnan(o.step_size) && isnan(o.step_power));
    CHECK_EQ(o.noise_mode, DPDO_NOISE_RIGOROUS);
    CHECK_EQ(o.strict, 0);
    CHECK(o.epsilon == 1.0 && o.delta == 1e-5 && o.max_epsilon == 0.0);
    CHECK(isnan(o.sigma) && o.lipschitz == 1.0 && isnan(o.clip));
    CHECK_EQ(o.batch, 1);
    CHECK(o.tol == 0.0);
    CHECK_EQ(o.check_every, 1);
    CHECK_EQ(o.weighting, -1);
    CHECK_EQ(o.randomness, DPDO_RANDOMNESS_SECURE);
    CHECK_EQ(dpdo_algorithm_options_init(NULL, sizeof o), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_options_init(&o, 4), DPDO_E_VERSION); /* any size >= sizeof(size_t) is a layout */

    /* parameter metadata */
    CHECK_EQ(dpdo_param_type(DPDO_PARAM_DDA_ACTIVE), 0);
    CHECK_EQ(dpdo_param_type(DPDO_PARAM_SIGMA), 1);
    CHECK_EQ(dpdo_param_type(DPDO_PARAM_MAX_ROUNDS), 0);
    CHECK_EQ(dpdo_param_type(9999), -1);
    CHECK(dpdo_param_name(DPDO_PARAM_DDA_ACTIVE) &&
          strcmp(dpdo_param_name(DPDO_PARAM_DDA_ACTIVE), "dda-active") == 0);
    CHECK(dpdo_param_name(9999) == NULL);
    double lo = -1, hi = -1;
    CHECK_EQ(dpdo_param_bounds(DPDO_PARAM_STEP_POWER, &lo, &hi), DPDO_OK);
    CHECK(lo == 0 && hi == 4);
    CHECK_EQ(dpdo_param_bounds(DPDO_PARAM_MAX_ROUNDS, &lo, &hi), DPDO_OK);
    CHECK(lo == 1 && hi == 281474976710655.0);
    CHECK_EQ(dpdo_param_bounds(9999, &lo, &hi), DPDO_E_INVAL);
}

static void empty_handle_and_nulls(void)
{
    dpdo_algorithm *a = (dpdo_algorithm *)&a;
    CHECK_EQ(dpdo_algorithm_create(&a, NULL), DPDO_E_INVAL);
    CHECK(a == NULL);
    CHECK_EQ(dpdo_algorithm_create(NULL, dpdo_algorithm_type_find("dp-dda")), DPDO_E_INVAL);
    dpdo_algorithm_destroy(NULL);
    CHECK(strcmp(dpdo_algorithm_errmsg(NULL), "dpdo_algorithm_errmsg: alg is NULL") == 0);
    CHECK(strcmp(dpdo_algorithm_name(NULL), "(null)") == 0);
    CHECK_EQ(dpdo_algorithm_state(NULL), -1);
    CHECK_EQ(dpdo_algorithm_nodes(NULL), 0);
    CHECK_EQ(dpdo_algorithm_dim(NULL), 0);
    CHECK_EQ(dpdo_algorithm_round(NULL), 0);
    CHECK_EQ(dpdo_algorithm_stop_reason(NULL), -1);
    CHECK_EQ(dpdo_algorithm_step(NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_reset(NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_prepare(NULL), DPDO_E_INVAL);
    CHECK(dpdo_algorithm_privacy_notes(NULL) != NULL);
    CHECK(dpdo_algorithm_privacy_source(NULL, 0) != NULL);

    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_EMPTY);
    CHECK(strcmp(dpdo_algorithm_name(a), "dp-dda") == 0);
    CHECK(strcmp(dpdo_algorithm_errmsg(a), "") == 0);
    CHECK_EQ(dpdo_algorithm_nodes(a), 0);
    CHECK_EQ(dpdo_algorithm_dim(a), 0);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_reset(a), DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_E_STATE);
    int64_t st = -1;
    CHECK_EQ(dpdo_algorithm_run(a, 5, &st), DPDO_E_STATE);
    CHECK_EQ(st, 0);
    double x[2];
    int64_t v;
    int32_t f[2];
    CHECK_EQ(dpdo_algorithm_get_iterate(a, 0, x, 2), DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_get_output(a, 0, x, 2), DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_get_state(a, "z", 0, x, 2), DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_get_active(a, f, 2), DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_comm(a, 0, &v, NULL, NULL), DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, 2), DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_get_int(a, DPDO_PARAM_DDA_ACTIVE, &v), DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, 0, x, NULL, NULL), DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_objective_at(a, x, 2, x), DPDO_E_STATE);
    dpdo_algorithm_destroy(a);
}

static void setup_bad_input(void)
{
    prob p;
    prob_make(&p, 4, 5, 3, 0, 0.1);
    ctx c;
    ctx_make(&c, 4);
    dpdo_algorithm_options o;
    fixed_opts(&o, 1, 50, 0.5);
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
#define BAD(rc_, call_)                                                                    \
    do {                                                                                   \
        int r_ = (call_);                                                                  \
        CHECK_MSG(r_ == (rc_), "%s: rc %d, expected %d", #call_, r_, rc_);                 \
        CHECK_MSG(strlen(dpdo_algorithm_errmsg(a)) > 0, "%s: empty message", #call_);     \
        CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_EMPTY);                                 \
    } while (0)
    CHECK_EQ(dpdo_algorithm_setup(NULL, p.nodes, 4, c.net, p.reg, c.acc, &o), DPDO_E_INVAL);
    BAD(DPDO_E_INVAL, dpdo_algorithm_setup(a, NULL, 4, c.net, p.reg, c.acc, &o));
    BAD(DPDO_E_INVAL, dpdo_algorithm_setup(a, p.nodes, 0, c.net, p.reg, c.acc, &o));
    BAD(DPDO_E_INVAL, dpdo_algorithm_setup(a, p.nodes, -1, c.net, p.reg, c.acc, &o));
    BAD(DPDO_E_INVAL, dpdo_algorithm_setup(a, p.nodes, 3, c.net, p.reg, c.acc, &o)); /* net has 4 */
    BAD(DPDO_E_INVAL, dpdo_algorithm_setup(a, p.nodes, 4, NULL, p.reg, c.acc, &o));
    /* acc NULL is allowed only without noise */
    BAD(DPDO_E_INVAL, dpdo_algorithm_setup(a, p.nodes, 4, c.net, p.reg, NULL, &o));
    /* a NULL node, a duplicate node */
    dpdo_node *nd[4] = {p.nodes[0], p.nodes[1], NULL, p.nodes[3]};
    BAD(DPDO_E_INVAL, dpdo_algorithm_setup(a, nd, 4, c.net, p.reg, c.acc, &o));
    nd[2] = p.nodes[1];
    BAD(DPDO_E_INVAL, dpdo_algorithm_setup(a, nd, 4, c.net, p.reg, c.acc, &o));
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "node");
    /* regularizer of another dimension */
    dpdo_regularizer *r4 = NULL;
    double lam = 0.1;
    CHECK_EQ(dpdo_regularizer_create(&r4, dpdo_regularizer_type_find("l2"), NULL, 4, &lam, 1),
             DPDO_OK);
    BAD(DPDO_E_INVAL, dpdo_algorithm_setup(a, p.nodes, 4, c.net, r4, c.acc, &o));
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "dimension");
    dpdo_regularizer_destroy(r4);
    /* a node of another dimension */
    prob p4;
    prob_make(&p4, 1, 5, 4, 0, 0);
    nd[2] = p4.nodes[0];
    BAD(DPDO_E_INVAL, dpdo_algorithm_setup(a, nd, 4, c.net, p.reg, c.acc, &o));
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "node 2");
    /* a model-kind loss has no samples */
    dpdo_loss *ml = NULL;
    dpdo_node *mn = NULL;
    CHECK_EQ(dpdo_loss_create(&ml, &model_type, NULL, 3), DPDO_OK);
    CHECK_EQ(dpdo_node_create(&mn, NULL, ml, 1.0), DPDO_OK);
    nd[2] = mn;
    BAD(DPDO_E_INVAL, dpdo_algorithm_setup(a, nd, 4, c.net, p.reg, c.acc, &o));
    /* a ledger over the wrong number of nodes */
    dpdo_ledger *l5 = NULL;
    dpdo_accountant *a5 = NULL;
    CHECK_EQ(dpdo_ledger_create(&l5, 5), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&a5, dpdo_accountant_type_find("rdp"), NULL, l5, NULL), DPDO_OK);
    BAD(DPDO_E_INVAL, dpdo_algorithm_setup(a, p.nodes, 4, c.net, p.reg, a5, &o));
    /* options struct versions (docs/abi.md): too small; larger with a non-zero tail; zero tail is fine */
    struct {
        dpdo_algorithm_options o;
        char tail[16];
    } big;
    memset(&big, 0, sizeof big);
    big.o = o;
    big.o.struct_size = 4; /* smaller than struct_size itself: _init was not called */
    BAD(DPDO_E_VERSION, dpdo_algorithm_setup(a, p.nodes, 4, c.net, p.reg, c.acc, &big.o));
    big.o.struct_size = sizeof big;
    big.tail[3] = 1;
    BAD(DPDO_E_VERSION, dpdo_algorithm_setup(a, p.nodes, 4, c.net, p.reg, c.acc, &big.o));
    big.tail[3] = 0;
    CHECK_EQ(dpdo_algorithm_setup(a, p.nodes, 4, c.net, p.reg, c.acc, &big.o), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_READY);
    /* a failed re-setup leaves the previous one intact */
    CHECK_EQ(dpdo_algorithm_setup(a, nd, 4, c.net, p.reg, c.acc, &o), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_READY);
    CHECK_EQ(dpdo_algorithm_nodes(a), 4);
    CHECK_EQ(dpdo_algorithm_dim(a), 3);
    /* NULL opts = defaults (RIGOROUS, needs the accountant): fine */
    CHECK_EQ(dpdo_algorithm_setup(a, p.nodes, 4, c.net, p.reg, c.acc, NULL), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(a, p.nodes, 4, c.net, p.reg, c.acc, &o), DPDO_OK);
    /* the network is locked while the algorithm lives */
    CHECK_EQ(dpdo_network_set_ring(c.net, 4), DPDO_E_STATE);
    /* re-setup while RUNNING: E_STATE */
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
    CHECK_EQ(dpdo_algorithm_setup(a, p.nodes, 4, c.net, p.reg, c.acc, &o), DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_RUNNING);
    dpdo_algorithm_destroy(a);
    CHECK_EQ(dpdo_network_set_ring(c.net, 4), DPDO_OK); /* unlocked again */
    dpdo_accountant_destroy(a5);
    dpdo_ledger_destroy(l5);
    dpdo_node_destroy(mn);
    dpdo_loss_destroy(ml);
    prob_free(&p4);
    ctx_free(&c);
    prob_free(&p);
#undef BAD
}

/* every options field set to an invalid value: E_INVAL at setup, message names it */
static void options_each_field_invalid(void)
{
    prob p;
    prob_make(&p, 4, 5, 3, 0, 0.1);
    ctx c;
    ctx_make(&c, 4);
    struct {
        const char *field;
        int which;
        double v;
    } cases[] = {
        {"max_rounds", 0, 0},       {"max_rounds", 0, -5},         {"max_rounds", 0, 281474976710656.0},
        {"step_size", 1, -1},       {"step_size", 1, INFINITY},    {"step_power", 2, -1},
        {"step_power", 2, 5},       {"step_power", 2, INFINITY},   {"noise_mode", 3, 4},
        {"noise_mode", 3, -1},      {"strict", 4, 2},              {"strict", 4, -1},
        {"epsilon", 5, 0},          {"epsilon", 5, -1},            {"epsilon", 5, NAN},
        {"delta", 6, 0},            {"delta", 6, 1},               {"delta", 6, NAN},
        {"delta", 6, -0.5},         {"max_epsilon", 7, -1},        {"max_epsilon", 7, NAN},
        {"sigma", 8, -1},           {"sigma", 8, INFINITY},        {"sigma", 8, NAN},
        {"lipschitz", 9, 0},        {"lipschitz", 9, -1},          {"lipschitz", 9, NAN},
        {"lipschitz", 9, INFINITY}, {"clip", 10, 0},               {"clip", 10, -1},
        {"batch", 11, 0},           {"batch", 11, -3},             {"tol", 12, -1},
        {"tol", 12, NAN},           {"check_every", 13, 0},        {"check_every", 13, -1},
        {"weighting", 14, 3},       {"weighting", 14, -2},         {"randomness", 15, 2},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        dpdo_algorithm_options o;
        fixed_opts(&o, 1, 50, 0.5);
        double v = cases[k].v;
        switch (cases[k].which) {
        case 0: o.max_rounds = (int64_t)v; break;
        case 1: o.step_size = v; break;
        case 2: o.step_power = v; break;
        case 3: o.noise_mode = (int32_t)v; break;
        case 4: o.strict = (int32_t)v; break;
        case 5: o.epsilon = v; o.noise_mode = DPDO_NOISE_RIGOROUS; break;
        case 6: o.delta = v; o.noise_mode = DPDO_NOISE_RIGOROUS; break;
        case 7: o.max_epsilon = v; break;
        case 8: o.sigma = v; break; /* FIXED mode */
        case 9: o.lipschitz = v; break;
        case 10: o.clip = v; break;
        case 11: o.batch = (int64_t)v; break;
        case 12: o.tol = v; break;
        case 13: o.check_every = (int64_t)v; break;
        case 14: o.weighting = (int32_t)v; break;
        case 15: o.randomness = (int32_t)v; break;
        }
        dpdo_algorithm *a = NULL;
        CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
        int rc = dpdo_algorithm_setup(a, p.nodes, 4, c.net, p.reg, c.acc, &o);
        CHECK_MSG(rc == DPDO_E_INVAL, "options.%s = %g: setup rc %d (expected E_INVAL)",
                  cases[k].field, v, rc);
        CHECK_MSG(strstr(dpdo_algorithm_errmsg(a), cases[k].field) != NULL,
                  "options.%s = %g: message \"%s\" does not name the field", cases[k].field, v,
                  dpdo_algorithm_errmsg(a));
        CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_EMPTY);
        dpdo_algorithm_destroy(a);
    }
    /* the valid extremes are accepted */
    dpdo_algorithm_options o;
    fixed_opts(&o, UINT64_MAX, 281474976710655LL, 0.0); /* sigma 0 is allowed in FIXED */
    o.clip = INFINITY;
    o.max_epsilon = INFINITY;
    o.weighting = DPDO_WEIGHT_SAMPLES;
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(a, p.nodes, 4, c.net, p.reg, c.acc, &o), DPDO_OK);
    dpdo_algorithm_destroy(a);
    ctx_free(&c);
    prob_free(&p);
}

static void params_keys(void)
{
    prob p;
    prob_make(&p, 4, 5, 3, 0, 0.1);
    ctx c;
    ctx_make(&c, 4);
    dpdo_algorithm_options o;
    fixed_opts(&o, 3, 100, 0.5);
    dpdo_algorithm *a = mk("dp-dda", &p, &c, &o, 0);
    if (!a) goto out;
    int64_t v = -1;
    double dv = 0;
    CHECK_EQ(dpdo_algorithm_get_int(a, DPDO_PARAM_DDA_ACTIVE, &v), DPDO_OK);
    CHECK_EQ(v, 2); /* default */
    CHECK_EQ(dpdo_algorithm_get_int(a, DPDO_PARAM_MAX_ROUNDS, &v), DPDO_OK);
    CHECK_EQ(v, 100);
    CHECK_EQ(dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &dv), DPDO_OK);
    CHECK(isnan(dv)); /* before prepare */
    /* unknown keys */
    CHECK_EQ(dpdo_algorithm_set_int(a, 9999, 1), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_algorithm_set_double(a, 9999, 1), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_algorithm_get_int(a, 9999, &v), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_algorithm_set_int(a, 0, 1), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_algorithm_set_int(a, -7, 1), DPDO_E_UNSUPPORTED);
    /* wrong setter/getter type */
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_DDA_ACTIVE, 2.0), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "dda-active");
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_STEP_SIZE, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_get_double(a, DPDO_PARAM_DDA_ACTIVE, &dv), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_get_int(a, DPDO_PARAM_SIGMA, &v), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_get_int(a, DPDO_PARAM_DDA_ACTIVE, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_int(NULL, DPDO_PARAM_DDA_ACTIVE, 2), DPDO_E_INVAL);
    /* out of bounds: rejected, the old value stays */
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, 4), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, 0), DPDO_E_INVAL);
    /* b > n (header: "b in [1, n]") must be refused by the setter, not only later */
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, 5), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_get_int(a, DPDO_PARAM_DDA_ACTIVE, &v), DPDO_OK);
    CHECK_EQ(v, 4);
    dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, 4); /* keep the rest independent */
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, (int64_t)1 << 40), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_STEP_SIZE, -1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_STEP_SIZE, INFINITY), DPDO_E_INVAL);
    /* NaN = the schedule preset's value (as options.step_size) */
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_STEP_SIZE, NAN), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_STEP_POWER, 5), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_TOL, -1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_TOL, NAN), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_MAX_ROUNDS, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_BATCH, 6), DPDO_E_INVAL); /* q = 5 */
    dpdo_algorithm_set_int(a, DPDO_PARAM_BATCH, 1);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_BATCH, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_SCHEDULE, 99), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_DDA_BERNOULLI_P, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_DDA_BERNOULLI_P, 1.5), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_SIGMA, -1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_SIGMA, 7.5), DPDO_OK); /* FIXED mode */
    CHECK_EQ(dpdo_algorithm_get_double(a, DPDO_PARAM_STEP_SIZE, &dv), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &dv), DPDO_OK);
    CHECK(dv == 7.5);
    /* a frozen key in READY discards the prepare: still settable */
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_SIGMA, 5.0), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &dv), DPDO_OK);
    CHECK(dv == 5.0);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
    /* RUNNING: frozen keys refuse, live keys follow their rules */
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, 2), DPDO_E_STATE);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "dda-active");
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_STEP_SIZE, 2), DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_SIGMA, 1), DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_SCHEDULE, DPDO_DDA_SCHEDULE_CONVEX),
             DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_BATCH, 2), DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_MAX_ROUNDS, 150), DPDO_OK); /* grow */
    CHECK(dpdo_algorithm_set_int(a, DPDO_PARAM_MAX_ROUNDS, 120) != DPDO_OK); /* shrink */
    CHECK_EQ(dpdo_algorithm_get_int(a, DPDO_PARAM_MAX_ROUNDS, &v), DPDO_OK);
    CHECK_EQ(v, 150);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_TOL, 1e-9), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_CHECK_EVERY, 3), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_double(a, DPDO_PARAM_MAX_EPSILON, 50), DPDO_OK); /* lower (from off) */
    CHECK(dpdo_algorithm_set_double(a, DPDO_PARAM_MAX_EPSILON, 60) != DPDO_OK); /* raise */
    CHECK_EQ(dpdo_algorithm_get_double(a, DPDO_PARAM_MAX_EPSILON, &dv), DPDO_OK);
    CHECK(dv == 50);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
    /* parameters survive reset */
    CHECK_EQ(dpdo_algorithm_reset(a), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_get_int(a, DPDO_PARAM_DDA_ACTIVE, &v), DPDO_OK);
    CHECK_EQ(v, 4);
    CHECK_EQ(dpdo_algorithm_get_int(a, DPDO_PARAM_MAX_ROUNDS, &v), DPDO_OK);
    CHECK_EQ(v, 150);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, 2), DPDO_OK); /* READY again */
    dpdo_algorithm_destroy(a);
out:
    ctx_free(&c);
    prob_free(&p);
}

static void determinism_two_handles(void)
{
    prob p;
    prob_make(&p, 6, 8, 4, 0, 0.05);
    ctx c1, c2, c3;
    ctx_make(&c1, 6);
    ctx_make(&c2, 6);
    ctx_make(&c3, 6);
    dpdo_algorithm_options o;
    fixed_opts(&o, 12345, 1000, 0.5);
    dpdo_algorithm *a = mk("dp-dda", &p, &c1, &o, 2), *b = mk("dp-dda", &p, &c2, &o, 2);
    o.seed = 12346;
    dpdo_algorithm *d = mk("dp-dda", &p, &c3, &o, 2);
    if (!a || !b || !d) goto out;
    steps(a, 200);
    steps(b, 200);
    steps(d, 200);
    snap sa, sb, sd;
    snap_take(a, &p, &c1, &sa, 1);
    snap_take(b, &p, &c2, &sb, 1);
    snap_take(d, &p, &c3, &sd, 1);
    int m = snap_diff(&sa, &sb, 1);
    CHECK_MSG(m == 0, "same seed, different bytes (mask %#x)", m);
    CHECK(sa.round == 200);
    CHECK(isfinite(sa.eps[p.n]) && sa.eps[p.n] > 0);
    m = snap_diff(&sa, &sd, 1);
    CHECK_MSG((m & 1) && (m & 16), "different seed gives the same iterates (mask %#x)", m);
    snap_free(&sa);
    snap_free(&sb);
    snap_free(&sd);
out:
    dpdo_algorithm_destroy(a);
    dpdo_algorithm_destroy(b);
    dpdo_algorithm_destroy(d);
    ctx_free(&c1);
    ctx_free(&c2);
    ctx_free(&c3);
    prob_free(&p);
}

static void reset_reproduces_and_restores_ledger(void)
{
    prob p;
    prob_make(&p, 6, 8, 4, 0, 0.05);
    ctx c;
    ctx_make(&c, 6);
    /* someone else's earlier charge stays in the ledger */
    dpdo_event *ev = NULL;
    CHECK_EQ(dpdo_event_create(&ev), DPDO_OK);
    CHECK_EQ(dpdo_event_set_gaussian(ev, NULL, 1.0, 3.0), DPDO_OK);
    int64_t n0 = 0;
    CHECK_EQ(dpdo_ledger_charge(c.led, ev, 5, &n0, 1), DPDO_OK);
    dpdo_algorithm_options o;
    fixed_opts(&o, 777, 1000, 0.7);
    dpdo_algorithm *a = mk("dp-dda", &p, &c, &o, 4);
    if (!a) goto out;
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
    snap s0, s1, s0b, s1b;
    snap_take(a, &p, &c, &s0, 1);
    CHECK(s0.round == 0 && s0.state == DPDO_ALG_READY);
    for (int j = 0; j < p.n * p.d; j++) CHECK(s0.out[j] == 0.0 && s0.x[j] == 0.0 && s0.z[j] == 0.0);
    steps(a, 150);
    snap_take(a, &p, &c, &s1, 1);
    CHECK(strcmp(s0.ledger, s1.ledger) != 0); /* the run charged */
    CHECK_EQ(dpdo_algorithm_reset(a), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_READY);
    CHECK_EQ(dpdo_algorithm_round(a), 0);
    CHECK_EQ(dpdo_algorithm_stop_reason(a), DPDO_STOP_NONE);
    snap_take(a, &p, &c, &s0b, 1);
    int m = snap_diff(&s0, &s0b, 1);
    CHECK_MSG(m == 0, "reset state differs from round 0 (mask %#x)", m);
    CHECK_MSG(strcmp(s0.ledger, s0b.ledger) == 0, "ledger after reset:\n%.200s\nbefore:\n%.200s",
              s0b.ledger, s0.ledger);
    steps(a, 150);
    snap_take(a, &p, &c, &s1b, 1);
    m = snap_diff(&s1, &s1b, 1);
    CHECK_MSG(m == 0, "rerun after reset differs (mask %#x)", m);
    /* someone resets the ledger under the algorithm: reset refuses */
    CHECK_EQ(dpdo_ledger_reset(c.led), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_reset(a), DPDO_E_STATE);
    snap_free(&s0);
    snap_free(&s1);
    snap_free(&s0b);
    snap_free(&s1b);
out:
    dpdo_algorithm_destroy(a);
    dpdo_event_destroy(ev);
    ctx_free(&c);
    prob_free(&p);
}

static void run_equals_step_loop(void)
{
    prob p;
    prob_make(&p, 4, 6, 3, 0, 0.1);
    ctx c1, c2;
    ctx_make(&c1, 4);
    ctx_make(&c2, 4);
    dpdo_algorithm_options o;
    fixed_opts(&o, 99, 60, 0.3);
    dpdo_algorithm *a = mk("dp-dda", &p, &c1, &o, 2), *b = mk("dp-dda", &p, &c2, &o, 2);
    if (!a || !b) goto out;
    int64_t st = -1;
    CHECK_EQ(dpdo_algorithm_run(a, 25, &st), DPDO_ROUND);
    CHECK_EQ(st, 25);
    CHECK_EQ(dpdo_algorithm_round(a), 25);
    CHECK_EQ(dpdo_algorithm_run(a, 0, &st), DPDO_DONE);
    CHECK_EQ(st, 35);
    CHECK_EQ(dpdo_algorithm_stop_reason(a), DPDO_STOP_MAX_ROUNDS);
    int rc, k = 0;
    while ((rc = dpdo_algorithm_step(b)) == DPDO_ROUND) k++;
    CHECK_EQ(rc, DPDO_DONE);
    CHECK_EQ(k, 60);
    snap sa, sb;
    snap_take(a, &p, &c1, &sa, 1);
    snap_take(b, &p, &c2, &sb, 1);
    int m = snap_diff(&sa, &sb, 1);
    CHECK_MSG(m == 0, "run() and the step loop differ (mask %#x)", m);
    snap_free(&sa);
    snap_free(&sb);
    CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_E_STATE);
out:
    dpdo_algorithm_destroy(a);
    dpdo_algorithm_destroy(b);
    ctx_free(&c1);
    ctx_free(&c2);
    prob_free(&p);
}

static void done_state_machine(void)
{
    prob p;
    prob_make(&p, 4, 6, 3, 0, 0.1);
    ctx c;
    ctx_make(&c, 4);
    dpdo_algorithm_options o;
    fixed_opts(&o, 5, 10, 0.3);
    dpdo_algorithm *a = mk("dp-dda", &p, &c, &o, 2);
    if (!a) goto out;
    CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_READY);
    CHECK_EQ(dpdo_algorithm_stop_reason(a), DPDO_STOP_NONE);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
    CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_RUNNING);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_E_STATE);
    steps(a, 9);
    CHECK_EQ(dpdo_algorithm_round(a), 10);
    CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_RUNNING);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_DONE);
    CHECK_EQ(dpdo_algorithm_round(a), 10); /* DONE ran no round */
    CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_DONE);
    CHECK_EQ(dpdo_algorithm_stop_reason(a), DPDO_STOP_MAX_ROUNDS);
    snap s1, s2;
    snap_take(a, &p, &c, &s1, 1);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_E_STATE);
    CHECK(strlen(dpdo_algorithm_errmsg(a)) > 0);
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_MAX_ROUNDS, 20), DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_E_STATE);
    snap_take(a, &p, &c, &s2, 1);
    CHECK_EQ(snap_diff(&s1, &s2, 1), 0); /* refusals change nothing, getters still work */
    snap_free(&s1);
    snap_free(&s2);
    CHECK_EQ(dpdo_algorithm_reset(a), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_READY);
    CHECK_EQ(dpdo_algorithm_stop_reason(a), DPDO_STOP_NONE);
    CHECK_EQ(dpdo_algorithm_round(a), 0);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
    /* reset from RUNNING also works */
    CHECK_EQ(dpdo_algorithm_reset(a), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_READY);
out:
    dpdo_algorithm_destroy(a);
    ctx_free(&c);
    prob_free(&p);
}

/* budget guard: RIGOROUS, max_epsilon < epsilon; compared with an unguarded twin */
static void budget_guard(void)
{
    prob p;
    prob_make(&p, 4, 10, 3, 0, 0.1);
    ctx c1, c2;
    ctx_make(&c1, 4);
    ctx_make(&c2, 4);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.seed = 2024;
    o.max_rounds = 3000;
    o.noise_mode = DPDO_NOISE_RIGOROUS;
    o.epsilon = 2.0;
    o.delta = 1e-5;
    o.max_epsilon = 0.8;
    dpdo_algorithm *a = mk("dp-dda", &p, &c1, &o, 2);
    o.max_epsilon = INFINITY;
    dpdo_algorithm *b = mk("dp-dda", &p, &c2, &o, 2);
    if (!a || !b) goto out;
    int rc;
    int64_t k = 0;
    while ((rc = dpdo_algorithm_step(a)) == DPDO_ROUND) k++;
    CHECK_MSG(rc == DPDO_DONE, "rc %d: %s", rc, dpdo_algorithm_errmsg(a));
    CHECK_EQ(dpdo_algorithm_stop_reason(a), DPDO_STOP_BUDGET);
    CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_DONE);
    CHECK(k > 0 && k < 3000);
    CHECK_EQ(dpdo_algorithm_round(a), k);
    double ea = NAN, eb = NAN, eb1 = NAN, sa = NAN, sb = NAN;
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &ea, NULL, NULL),
             DPDO_OK);
    CHECK_MSG(ea <= 0.8, "epsilon after the last round %.17g > max_epsilon 0.8", ea);
    CHECK_STR_CONTAINS(dpdo_algorithm_privacy_source(a, DPDO_PRIVACY_RIGOROUS), "rdp");
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_E_STATE);
    /* the twin without a guard: same sigma, same draws; one more round exceeds 0.8 */
    CHECK_EQ(dpdo_algorithm_prepare(b), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &sa), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_get_double(b, DPDO_PARAM_SIGMA, &sb), DPDO_OK);
    CHECK(sa == sb && sa > 0);
    steps(b, k);
    CHECK_EQ(dpdo_algorithm_privacy(b, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eb, NULL, NULL),
             DPDO_OK);
    CHECK(eb == ea);
    CHECK_EQ(dpdo_algorithm_step(b), DPDO_ROUND);
    CHECK_EQ(dpdo_algorithm_privacy(b, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eb1, NULL, NULL),
             DPDO_OK);
    CHECK_MSG(eb1 > 0.8, "the guard stopped early: round %lld would give %.17g <= 0.8",
              (long long)k + 1, eb1);
    printf("# budget guard: sigma %.6g, stopped after %lld rounds at eps %.6f; next round %.6f\n",
           sa, (long long)k, ea, eb1);
    /* after reset the guarded run reaches the same round again */
    CHECK_EQ(dpdo_algorithm_reset(a), DPDO_OK);
    int64_t k2 = 0;
    while ((rc = dpdo_algorithm_step(a)) == DPDO_ROUND) k2++;
    CHECK_EQ(k2, k);
    CHECK_EQ(dpdo_algorithm_stop_reason(a), DPDO_STOP_BUDGET);
out:
    dpdo_algorithm_destroy(a);
    dpdo_algorithm_destroy(b);
    ctx_free(&c1);
    ctx_free(&c2);
    prob_free(&p);
}

static void getters_bad_sizes(void)
{
    prob p;
    prob_make(&p, 4, 6, 3, 0, 0.1);
    ctx c;
    ctx_make(&c, 4);
    dpdo_algorithm_options o;
    fixed_opts(&o, 5, 10, 0.3);
    dpdo_algorithm *a = mk("dp-dda", &p, &c, &o, 2);
    if (!a) goto out;
    steps(a, 3);
    double x[8], F;
    int32_t f[8];
    int64_t m, s, b;
    CHECK_EQ(dpdo_algorithm_get_iterate(a, 0, x, 3), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_get_iterate(a, 0, x, 4), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "dim");
    CHECK_EQ(dpdo_algorithm_get_iterate(a, 0, x, 2), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_get_iterate(a, 4, x, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_get_iterate(a, -3, x, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_get_iterate(a, 0, NULL, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_get_iterate(NULL, 0, x, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_get_output(a, 0, x, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_get_output(a, 4, x, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_get_output(a, DPDO_NODE_COORDINATOR, x, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_get_state(a, "z", 0, x, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_get_state(a, "z", 7, x, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_get_state(a, "w", 0, x, 3), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "z"); /* lists the names */
    CHECK_EQ(dpdo_algorithm_get_state(a, NULL, 0, x, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_get_active(a, f, 3), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_get_active(a, f, 5), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_get_active(a, NULL, 4), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_comm(a, 4, &m, &s, &b), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_comm(a, -5, &m, &s, &b), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_comm(a, DPDO_NODE_ALL, NULL, NULL, NULL), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_privacy(a, 7, DPDO_NODE_ALL, &F, NULL, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, 4, &F, NULL, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, 0, NULL, NULL, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_objective(a, 7, DPDO_NODE_ALL, &F), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_objective(a, DPDO_POINT_OUTPUT, 4, &F), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_objective(a, DPDO_POINT_OUTPUT, 0, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_suboptimality(a, DPDO_POINT_OUTPUT, 0, NAN, &F), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_suboptimality(a, DPDO_POINT_OUTPUT, 0, INFINITY, &F), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_objective_at(a, x, 4, &F), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_objective_at(a, NULL, 3, &F), DPDO_E_INVAL);
    x[0] = x[1] = x[2] = 0;
    x[1] = NAN;
    int rc = dpdo_algorithm_objective_at(a, x, 3, &F);
    CHECK_MSG(rc == DPDO_E_INVAL || rc == DPDO_E_NUMERIC, "NaN point: rc %d", rc);
    /* none of this changed the run */
    CHECK_EQ(dpdo_algorithm_round(a), 3);
    CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_RUNNING);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
out:
    dpdo_algorithm_destroy(a);
    ctx_free(&c);
    prob_free(&p);
}

/* a user loss failing (code 7) or returning a NaN gradient in round 5 at node 2 */
static void failing_round(int nan_mode)
{
    prob p;
    prob_make(&p, 4, 6, 3, 1, 0.1);
    ctx c;
    ctx_make(&c, 4);
    dpdo_algorithm_options o;
    fixed_opts(&o, 31, 100, 0.4);
    o.clip = INFINITY; /* the NaN must reach the engine, not a clipping norm */
    dpdo_algorithm *a = mk("dp-dda", &p, &c, &o, 4); /* b = n: node 2 computes every round */
    if (!a) goto out;
    steps(a, 4);
    snap s4, sf, s4b;
    snap_take(a, &p, &c, &s4, 1);
    int64_t calls_before = p.c[0].calls + p.c[1].calls + p.c[3].calls;
    if (nan_mode) p.c[2].nan = 1;
    else p.c[2].fail = 7;
    int rc = dpdo_algorithm_step(a);
    const char *msg = dpdo_algorithm_errmsg(a);
    CHECK_EQ(rc, nan_mode ? DPDO_E_NUMERIC : DPDO_E_CALLBACK);
    CHECK_STR_CONTAINS(msg, "round 5");
    CHECK_STR_CONTAINS(msg, "node 2");
    if (!nan_mode) CHECK_STR_CONTAINS(msg, "7");
    printf("# %s: \"%s\"\n", nan_mode ? "NaN gradient" : "callback failure", msg);
    CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_FAILED);
    CHECK_EQ(dpdo_algorithm_round(a), 4);
    (void)calls_before;
    snap_take(a, &p, &c, &sf, 1);
    int m = snap_diff(&s4, &sf, 0);
    CHECK_MSG(m == 0, "state after the failed round differs from round 4 (mask %#x)", m);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_E_STATE);
    CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_FAILED);
    /* the objective helpers meet the same callback: reported, nothing changes */
    if (!nan_mode) {
        double F = 0;
        CHECK_EQ(dpdo_algorithm_objective(a, DPDO_POINT_OUTPUT, DPDO_NODE_ALL, &F), DPDO_E_CALLBACK);
        snap sg;
        snap_take(a, &p, &c, &sg, 1);
        CHECK_EQ(snap_diff(&sf, &sg, 1), 0);
        snap_free(&sg);
    }
    p.c[2].nan = p.c[2].fail = 0;
    CHECK_EQ(dpdo_algorithm_reset(a), DPDO_OK);
    steps(a, 4);
    snap_take(a, &p, &c, &s4b, 1);
    m = snap_diff(&s4, &s4b, 1);
    CHECK_MSG(m == 0, "rerun to round 4 after reset differs (mask %#x)", m);
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
    CHECK_EQ(dpdo_algorithm_round(a), 5);
    snap_free(&s4);
    snap_free(&sf);
    snap_free(&s4b);
out:
    dpdo_algorithm_destroy(a);
    ctx_free(&c);
    prob_free(&p);
}
static void callback_failure_round5(void) { failing_round(0); }
static void nan_gradient_round5(void) { failing_round(1); }

/* communication counters: MATCHING with b = 4 sends 4 messages of d values per round */
static void comm_counters_matching(void)
{
    prob p;
    prob_make(&p, 6, 5, 7, 0, 0.1);
    ctx c;
    ctx_make(&c, 6);
    dpdo_algorithm_options o;
    fixed_opts(&o, 8, 1000, 0.3);
    dpdo_algorithm *a = mk("dp-dda", &p, &c, &o, 4);
    if (!a) goto out;
    const int64_t R = 50, d = 7;
    int64_t cnt[6] = {0};
    int32_t act[6];
    CHECK_EQ(dpdo_algorithm_get_active(a, act, 6), DPDO_OK);
    for (int i = 0; i < 6; i++) CHECK_EQ(act[i], 0); /* round 0 */
    for (int64_t t = 0; t < R; t++) {
        if (dpdo_algorithm_step(a) != DPDO_ROUND) break;
        CHECK_EQ(dpdo_algorithm_get_active(a, act, 6), DPDO_OK);
        int na = 0;
        for (int i = 0; i < 6; i++) na += act[i], cnt[i] += act[i];
        CHECK_EQ(na, 4);
    }
    int64_t m, s, b, sm = 0, ss = 0, sb = 0;
    CHECK_EQ(dpdo_algorithm_comm(a, DPDO_NODE_ALL, &m, &s, &b), DPDO_OK);
    CHECK_EQ(m, 4 * R);
    CHECK_EQ(s, 4 * d * R);
    CHECK_EQ(b, 32 * d * R);
    for (int i = 0; i < 6; i++) {
        CHECK_EQ(dpdo_algorithm_comm(a, i, &m, &s, &b), DPDO_OK);
        CHECK_EQ(m, cnt[i]);
        CHECK_EQ(s, d * cnt[i]);
        CHECK_EQ(b, 8 * d * cnt[i]);
        sm += m, ss += s, sb += b;
    }
    CHECK_EQ(sm, 4 * R);
    CHECK_EQ(ss, 4 * d * R);
    CHECK_EQ(sb, 32 * d * R);
    /* privacy plumbing: node i was charged once per active round with a Gaussian release of
     * sensitivity 2L on one of its q = 5 samples (WOR(5, 1); the active set is public); its
     * rigorous epsilon equals a fresh accountant's over exactly those charges */
    dpdo_sampling *smp = NULL;
    dpdo_event *ev = NULL;
    dpdo_ledger *l2 = NULL;
    dpdo_accountant *a2 = NULL;
    CHECK_EQ(dpdo_sampling_create(&smp), DPDO_OK);
    CHECK_EQ(dpdo_sampling_set_wor(smp, 5, 1), DPDO_OK);
    CHECK_EQ(dpdo_event_create(&ev), DPDO_OK);
    CHECK_EQ(dpdo_event_set_gaussian(ev, smp, 2.0, 0.3), DPDO_OK);
    CHECK_EQ(dpdo_ledger_create(&l2, 6), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&a2, dpdo_accountant_type_find("rdp"), NULL, l2, NULL), DPDO_OK);
    double worst = 0;
    for (int64_t i = 0; i < 6; i++) {
        CHECK_EQ(dpdo_ledger_charges(c.led, i), cnt[i]);
        if (cnt[i] > 0) CHECK_EQ(dpdo_ledger_charge(l2, ev, cnt[i], &i, 1), DPDO_OK);
        double e1 = NAN, e2 = NAN, dl = NAN;
        CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, i, &e1, &dl, NULL), DPDO_OK);
        CHECK_EQ(dpdo_accountant_epsilon(a2, i, 1e-5, &e2, NULL), DPDO_OK);
        CHECK_REL(e1, e2, 1e-12);
        CHECK(dl == 1e-5); /* the options' delta */
        if (e2 > worst) worst = e2;
    }
    double ew = NAN;
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &ew, NULL, NULL), DPDO_OK);
    CHECK_REL(ew, worst, 1e-12);
    dpdo_accountant_destroy(a2);
    dpdo_ledger_destroy(l2);
    dpdo_event_destroy(ev);
    dpdo_sampling_destroy(smp);
    /* reset zeroes them */
    CHECK_EQ(dpdo_algorithm_reset(a), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_comm(a, DPDO_NODE_ALL, &m, &s, &b), DPDO_OK);
    CHECK(m == 0 && s == 0 && b == 0);
out:
    dpdo_algorithm_destroy(a);
    ctx_free(&c);
    prob_free(&p);
}

/* the baseline [19]: every node active and computing every round, charged every round */
static void baseline_all_nodes(void)
{
    prob p;
    prob_make(&p, 4, 5, 3, 0, 0.1);
    ctx c;
    ctx_make(&c, 4);
    dpdo_algorithm_options o;
    fixed_opts(&o, 4, 100, 0.8);
    dpdo_algorithm *a = mk("dp-dda-baseline", &p, &c, &o, 0);
    if (!a) goto out;
    CHECK(strcmp(dpdo_algorithm_name(a), "dp-dda-baseline") == 0);
    int64_t b = 0;
    CHECK_EQ(dpdo_algorithm_get_int(a, DPDO_PARAM_DDA_ACTIVE, &b), DPDO_OK);
    CHECK_EQ(b, 4);
    int32_t act[4];
    for (int t = 0; t < 10; t++) {
        CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
        CHECK_EQ(dpdo_algorithm_get_active(a, act, 4), DPDO_OK);
        for (int i = 0; i < 4; i++) CHECK_EQ(act[i], 1);
    }
    for (int i = 0; i < 4; i++) CHECK_EQ(dpdo_ledger_charges(c.led, i), 10);
out:
    dpdo_algorithm_destroy(a);
    ctx_free(&c);
    prob_free(&p);
}

/* objective helpers against a direct computation: F = (1/n) sum_i mean hinge + lambda/2 ||x||^2 */
static double direct_F(const prob *p, const double *x, double lambda)
{
    double F = 0;
    for (int i = 0; i < p->n; i++) {
        double fi = 0;
        for (int64_t k = 0; k < p->q; k++) {
            int64_t r = i * p->q + k;
            double mg = 0;
            for (int64_t j = 0; j < p->d; j++) mg += p->X[r * p->d + j] * x[j];
            double z = p->Y[r] * mg;
            fi += z < 1 ? 1 - z : 0;
        }
        F += fi / (double)p->q / p->n;
    }
    double xx = 0;
    for (int64_t j = 0; j < p->d; j++) xx += x[j] * x[j];
    return F + 0.5 * lambda * xx;
}

static void objective_helpers(void)
{
    const double lam = 0.1;
    prob p;
    prob_make(&p, 4, 9, 3, 0, lam);
    ctx c;
    ctx_make(&c, 4);
    dpdo_algorithm_options o;
    fixed_opts(&o, 17, 100, 0.2);
    dpdo_algorithm *a = mk("dp-dda", &p, &c, &o, 2);
    if (!a) goto out;
    CHECK_EQ(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_SCHEDULE, DPDO_DDA_SCHEDULE_PAPER_L2), DPDO_OK);
    steps(a, 30);
    double x[3], F, g;
    for (int i = -1; i < 4; i++) {
        CHECK_EQ(dpdo_algorithm_get_iterate(a, i, x, 3), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_objective(a, DPDO_POINT_ITERATE, i, &F), DPDO_OK);
        CHECK_NEAR(F, direct_F(&p, x, lam), 1e-13);
        CHECK_EQ(dpdo_algorithm_get_output(a, i, x, 3), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_objective(a, DPDO_POINT_OUTPUT, i, &F), DPDO_OK);
        CHECK_NEAR(F, direct_F(&p, x, lam), 1e-13);
        CHECK_EQ(dpdo_algorithm_suboptimality(a, DPDO_POINT_OUTPUT, i, 0.25, &g), DPDO_OK);
        CHECK_NEAR(g, direct_F(&p, x, lam) - 0.25, 1e-13);
    }
    double y[3] = {0.3, -1.2, 2.0};
    CHECK_EQ(dpdo_algorithm_objective_at(a, y, 3, &F), DPDO_OK);
    CHECK_NEAR(F, direct_F(&p, y, lam), 1e-13);
    /* the output average is the mean of the node outputs */
    double avg[3] = {0, 0, 0}, all[3];
    for (int i = 0; i < 4; i++) {
        CHECK_EQ(dpdo_algorithm_get_output(a, i, x, 3), DPDO_OK);
        for (int j = 0; j < 3; j++) avg[j] += x[j] / 4;
    }
    CHECK_EQ(dpdo_algorithm_get_output(a, DPDO_NODE_ALL, all, 3), DPDO_OK);
    for (int j = 0; j < 3; j++) CHECK_NEAR(all[j], avg[j], 1e-14 * (1 + fabs(avg[j])));
    CHECK_EQ(dpdo_algorithm_round(a), 30); /* unchanged */
out:
    dpdo_algorithm_destroy(a);
    ctx_free(&c);
    prob_free(&p);
}

/* ---- paper noise (Theorem 1, T1a): spec §8 oracles 1, 2 and 5 ------------------- */
static double t1a(double eps, double d0, double T, int b, int n, double q, double L)
{
    double iota = (double)b / n;
    return sqrt(32.0 * iota * iota * L * L * T * log(2.0 / d0) / (q * q * eps * eps));
}

static double paper_sigma(prob *p, const char *type, int b, double eps, double d0, int64_t T,
                          int strict, int *prc, int32_t *valid, char *notes, size_t nl)
{
    ctx c;
    ctx_make(&c, p->n);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = DPDO_NOISE_PAPER;
    o.epsilon = eps;
    o.delta = d0;
    o.max_rounds = T;
    o.lipschitz = 1.0;
    o.strict = strict;
    double s = NAN;
    dpdo_algorithm *a = mk(type, p, &c, &o, b);
    if (a) {
        int rc = dpdo_algorithm_prepare(a);
        if (prc) *prc = rc;
        if (rc == DPDO_OK) {
            CHECK_EQ(dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &s), DPDO_OK);
            double e = NAN, dl = NAN;
            if (valid)
                CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_PAPER, DPDO_NODE_ALL, &e, &dl,
                                                valid),
                         DPDO_OK);
            CHECK_STR_CONTAINS(dpdo_algorithm_privacy_source(a, DPDO_PRIVACY_PAPER),
                               "dp-dda-thm1");
            /* MAX_ROUNDS in READY after prepare: sigma must follow T (or the change be refused) */
            if (!strict && T == 1250000 && b == 2 &&
                dpdo_algorithm_set_int(a, DPDO_PARAM_MAX_ROUNDS, 2000000) == DPDO_OK) {
                double s2 = NAN;
                CHECK_EQ(dpdo_algorithm_prepare(a), DPDO_OK);
                CHECK_EQ(dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &s2), DPDO_OK);
                CHECK_REL(s2, 25.17584563, 1e-9);
            }
        } else {
            CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_READY);
        }
        if (notes) snprintf(notes, nl, "%s | %s", dpdo_algorithm_privacy_notes(a),
                            dpdo_algorithm_errmsg(a));
        CHECK_EQ(dpdo_algorithm_round(a), 0);
        dpdo_algorithm_destroy(a);
    }
    ctx_free(&c);
    return s;
}

static void paper_sigma_oracle1(void)
{
    prob p;
    prob_make(&p, 20, 1000, 2, 0, 0); /* q = 1000 per node, d = 2, unit rows */
    int32_t valid = -1;
    char notes[512];
    int rc = -99;
    double s = paper_sigma(&p, "dp-dda", 2, 0.1, 1e-4, 1250000, 0, &rc, &valid, notes,
                           sizeof notes);
    CHECK_REL(s, 19.90325356, 1e-9);
    CHECK_REL(s, t1a(0.1, 1e-4, 1250000, 2, 20, 1000, 1), 1e-12);
    CHECK_REL(s, sqrt(40 * log(2e4)), 1e-12); /* at T = T_min: sigma^2 = 40 L^2 log(2/d0) */
    /* oracle 2: T = T_min = 1,250,000 is accepted */
    CHECK_EQ(valid, 1);
    CHECK_MSG(strstr(notes, "T_min") == NULL, "T = T_min flagged: %.300s", notes);
    s = paper_sigma(&p, "dp-dda", 2, 0.1, 1e-4, 2000000, 0, NULL, NULL, NULL, 0);
    CHECK_REL(s, 25.17584563, 1e-9);
    s = paper_sigma(&p, "dp-dda", 4, 0.1, 1e-4, 2000000, 0, NULL, &valid, NULL, 0);
    CHECK_REL(s, 50.35169127, 1e-9);
    CHECK_REL(s, t1a(0.1, 1e-4, 2000000, 4, 20, 1000, 1), 1e-12);
    CHECK_EQ(valid, 1); /* T_min = 312,500 */
    s = paper_sigma(&p, "dp-dda-baseline", 0, 0.1, 1e-4, 2000000, 0, NULL, NULL, NULL, 0);
    CHECK_REL(s, 251.7584563, 1e-9);
    /* oracle 2 at b = 4 and b = 20: T = T_min exactly is accepted */
    s = paper_sigma(&p, "dp-dda", 4, 0.1, 1e-4, 312500, 1, &rc, &valid, NULL, 0);
    CHECK_EQ(rc, DPDO_OK);
    CHECK_EQ(valid, 1);
    s = paper_sigma(&p, "dp-dda-baseline", 0, 0.1, 1e-4, 12500, 1, &rc, &valid, NULL, 0);
    CHECK_EQ(rc, DPDO_OK);
    CHECK_EQ(valid, 1);
    CHECK_REL(s, sqrt(40 * log(2e4)), 1e-12);
    /* one round below T_min is flagged, and refused with strict = 1 */
    s = paper_sigma(&p, "dp-dda", 4, 0.1, 1e-4, 312499, 1, &rc, NULL, notes, sizeof notes);
    CHECK_EQ(rc, DPDO_E_INVAL);
    CHECK_STR_CONTAINS(notes, "T_min");
    prob_free(&p);
}

static void paper_oracle5_validity(void)
{
    prob p;
    prob_make(&p, 20, 20000, 2, 0, 0); /* epsilon-like sizes: q = 20000 per node */
    int32_t valid = -1;
    char notes[600];
    int rc = -99;
    double s = paper_sigma(&p, "dp-dda", 2, 0.8, 0.01, 600000, 0, &rc, &valid, notes,
                           sizeof notes);
    CHECK_EQ(rc, DPDO_OK);
    CHECK_REL(s, 0.06303759, 1e-7);
    CHECK_REL(s, t1a(0.8, 0.01, 600000, 2, 20, 20000, 1), 1e-12);
    CHECK_EQ(valid, 0);
    CHECK_STR_CONTAINS(notes, "T_min");
    printf("# oracle 5 notes: %.400s\n", notes);
    s = paper_sigma(&p, "dp-dda", 2, 0.8, 0.01, 600000, 1, &rc, NULL, notes, sizeof notes);
    CHECK_EQ(rc, DPDO_E_INVAL);
    CHECK_STR_CONTAINS(notes, "T_min");
    prob_free(&p);
}

/* the paper's running bound (Remark 3.1): eps(t) = sqrt(3t/(5T)) eps + t/(5T) eps^2;
 * spec §8 oracle 7: 0.747677 at t = T for eps = 0.8 */
static void paper_running_bound(void)
{
    prob p;
    prob_make(&p, 4, 5, 2, 0, 0.1);
    ctx c;
    ctx_make(&c, 4);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = DPDO_NOISE_PAPER;
    o.epsilon = 0.8;
    o.delta = 0.01;
    o.max_rounds = 100;
    dpdo_algorithm *a = mk("dp-dda", &p, &c, &o, 2);
    if (!a) goto out;
    double e = NAN;
    int32_t valid = -1;
    for (int t = 1; t <= 100; t++) {
        CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
        if (t == 25 || t == 100) {
            CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_PAPER, DPDO_NODE_ALL, &e, NULL, &valid),
                     DPDO_OK);
            double want = sqrt(3.0 * t / 500.0) * 0.8 + t / 500.0 * 0.64;
            CHECK_REL(e, want, 1e-12);
            CHECK_EQ(valid, 1); /* T_min = 5 q^2 eps^2 / (4 iota^2) = 80 <= T = 100 */
            double e2 = NAN;
            CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_PAPER, 2, &e2, NULL, NULL), DPDO_OK);
            CHECK(e2 == e); /* the same for every node */
        }
    }
    CHECK_REL(e, 0.747677, 1e-6);
    /* MAX_ROUNDS cannot change while running in PAPER mode (sigma depends on T) */
    CHECK(dpdo_algorithm_set_int(a, DPDO_PARAM_MAX_ROUNDS, 200) != DPDO_OK);
out:
    dpdo_algorithm_destroy(a);
    ctx_free(&c);
    prob_free(&p);
}

int main(void)
{
    if (!dpdo_algorithm_type_find("dp-dda")) {
        printf("not ok - dp-dda algorithm type not found\n");
        h_failed++;
        return h_finish();
    }
    RUN(types_and_options);
    RUN(empty_handle_and_nulls);
    RUN(setup_bad_input);
    RUN(options_each_field_invalid);
    RUN(params_keys);
    RUN(determinism_two_handles);
    RUN(reset_reproduces_and_restores_ledger);
    RUN(run_equals_step_loop);
    RUN(done_state_machine);
    RUN(budget_guard);
    RUN(getters_bad_sizes);
    RUN(callback_failure_round5);
    RUN(nan_gradient_round5);
    RUN(comm_counters_matching);
    RUN(baseline_all_nodes);
    RUN(objective_helpers);
    RUN(paper_sigma_oracle1);
    RUN(paper_oracle5_validity);
    RUN(paper_running_bound);
    return h_finish();
}
