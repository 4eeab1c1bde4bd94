/* SPDX-License-Identifier: BSD-3-Clause */
/* Privacy charges cannot vanish (issue 22). A small test algorithm (one noisy release per
 * computing node and round, charged by its plan) misbehaves on purpose:
 *  - local() charges the same node twice in one round, or floods the charge list with 3n charges
 *    and ignores the refusals: the round fails with DPDO_E_STATE before anything is installed,
 *    and the ledger, the state and the round counter are as before it;
 *  - plan() charges one node twice and drops the status: the same;
 *  - a charge names an unknown event or a count of 0: refused;
 *  - a node releases noise without being charged: the test build's invariant check
 *    (DPDO__ASSERT) fails the round with a message naming the condition;
 *  - two charges overflow the ledger's counter: the ledger refuses the second, the first is taken
 *    back, and the round fails instead of releasing an uncharged round.
 * A well-behaved run charges exactly one release per node and round. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "dpdo/dpdo.h"
#include "engine/engine_impl.h"
#include "rng/rng_impl.h"
#include "harness.h"
#include "fixture.h"

enum { N = 3, Q = 6, D = 2 };

enum {
    M_OK = 0,
    M_LOCAL_TWICE,  /* local(): two charges for node 0, the second's status returned */
    M_LOCAL_FLOOD,  /* local(): 3n charges, every status ignored */
    M_PLAN_TWICE,   /* plan(): node 0 charged twice, status ignored */
    M_BAD_EVENT,    /* local(): a charge of event 7 (there is one event) */
    M_BAD_COUNT,    /* local(): a charge of 0 releases */
    M_NO_CHARGE,    /* plan() charges nobody but every computing node releases */
    M_OVERFLOW      /* plan and local charges of node 0 whose sum overflows the ledger's counter */
};

typedef struct tp {
    int mode;
    int bx, snew;
} tp;

static int configure(dpdo__eng *e, void *priv)
{
    tp *P = priv;
    P->bx = dpdo__eng_block(e, "x", e->n, e->d);
    P->snew = dpdo__eng_scratch(e, (size_t)(e->n * e->d) * sizeof(double));
    return DPDO_OK;
}

static int prepare(dpdo__eng *e, void *priv)
{
    e->pv.sigma = 1.0;
    e->pv.sens = 1.0;
    e->pv.private_run = 1;
    return dpdo__eng_events_wor(e, 1, 1.0, 1.0, NULL);
}

static void init(dpdo__eng *e, void *priv)
{
    tp *P = priv;
    memset(e->blk[P->bx].cur, 0, (size_t)(e->n * e->d) * sizeof(double));
}

static int plan(dpdo__eng *e, void *priv, dpdo__plan *p)
{
    tp *P = priv;
    dpdo__plan_bernoulli(e, p, 1.0);
    dpdo__plan_list(p, e->n);
    p->nstages = 1;
    p->stage[0].who = DPDO__RUN_COMPUTING;
    if (P->mode == M_NO_CHARGE) return DPDO_OK;
    if (P->mode == M_OVERFLOW) return dpdo__plan_add_charge(e, 0, 0, INT64_MAX / 2 + 1);
    int rc = dpdo__plan_charge_computing(e, p, 1);
    if (P->mode == M_PLAN_TWICE) (void)dpdo__plan_add_charge(e, 0, 0, 1); /* status dropped on purpose */
    return rc;
}

static int local(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t stage, int64_t i)
{
    tp *P = priv;
    double *row = (double *)e->scr[P->snew] + i * e->d;
    memset(row, 0, (size_t)e->d * sizeof(double));
    dpdo__stream st;
    dpdo__stream_open(&st, e->rng, (uint64_t)i, p->t, DPDO_PURPOSE_NOISE);
    int rc = dpdo__eng_noise_gauss(e, &st, i, e->pv.sigma, e->pv.sens, row, (size_t)e->d);
    if (rc) return rc;
    switch (P->mode) {
    case M_LOCAL_TWICE:
        if (i == 0) {
            if ((rc = dpdo__plan_add_charge(e, 0, 0, 1))) return rc;
            return dpdo__plan_add_charge(e, 0, 0, 1);
        }
        break;
    case M_LOCAL_FLOOD:
        for (int k = 0; k < 3 * N; k++) (void)dpdo__plan_add_charge(e, 0, k % N, 1);
        break;
    case M_BAD_EVENT: return dpdo__plan_add_charge(e, 7, i, 1);
    case M_BAD_COUNT: return dpdo__plan_add_charge(e, 0, i, 0);
    case M_OVERFLOW:
        if (i == 0) return dpdo__plan_add_charge(e, 0, 0, INT64_MAX / 2 + 1);
        break;
    default: break;
    }
    return DPDO_OK;
}

static int combine(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t stage, int64_t i) { return DPDO_OK; }
static int check(dpdo__eng *e, void *priv, const dpdo__plan *p) { return DPDO_OK; }

static void commit(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    tp *P = priv;
    double *x = e->blk[P->bx].cur;
    const double *nw = e->scr[P->snew];
    for (int64_t c = 0; c < p->ncomp; c++)
        for (int64_t k = 0; k < e->d; k++) x[p->comp[c] * e->d + k] += nw[p->comp[c] * e->d + k];
}

static void output(const dpdo__eng *e, const void *priv, int64_t i, double *x)
{
    const tp *P = priv;
    memcpy(x, e->blk[P->bx].cur + i * e->d, (size_t)e->d * sizeof(double));
}

static void release(dpdo__eng *e, void *priv) {}

static const dpdo__alg_vt VT_LOCAL = {.name = "charges-local", .title = "test", .priv_size = sizeof(tp),
                                      .local_charges = 1, .configure = configure,
                                      .prepare = prepare, .init = init, .plan = plan, .local = local,
                                      .combine = combine, .check = check, .commit = commit, .output = output,
                                      .release = release};
static const dpdo__alg_vt VT_PLAN = {.name = "charges-plan", .title = "test", .priv_size = sizeof(tp),
                                     .local_charges = 0, .configure = configure,
                                     .prepare = prepare, .init = init, .plan = plan, .local = local,
                                     .combine = combine, .check = check, .commit = commit, .output = output,
                                     .release = release};

typedef struct fx {
    double X[N * Q * D], Y[N * Q];
    dpdo_dataset *ds;
    dpdo_shard *sh[N];
    dpdo_loss *loss;
    dpdo_node *nodes[N];
    dpdo_ledger *led;
    dpdo_accountant *acc;
} fx;

static void fx_make(fx *f)
{
    memset(f, 0, sizeof *f);
    for (int i = 0; i < N * Q; i++) {
        f->X[i * D] = 0.3 * (i % 5) - 0.6, f->X[i * D + 1] = 0.1 * (i % 3);
        f->Y[i] = i % 2 ? 1 : -1;
    }
    tfx_nodes_make(f->X, f->Y, N, Q, D, "logistic", &f->ds, &f->loss, f->sh, f->nodes);
    CHECK_EQ(dpdo_ledger_create(&f->led, N), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&f->acc, dpdo_accountant_type_find("rdp"), NULL, f->led, NULL), DPDO_OK);
}

static void fx_free(fx *f)
{
    dpdo_accountant_destroy(f->acc);
    dpdo_ledger_destroy(f->led);
    tfx_nodes_free(N, f->ds, f->loss, f->sh, f->nodes);
}

static dpdo_algorithm *make(fx *f, const dpdo__alg_vt *vt, int mode)
{
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo__algorithm_create_vt(&a, vt), DPDO_OK);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    o.noise_mode = DPDO_NOISE_FIXED;
    o.sigma = 1.0;
    o.max_rounds = 3;
    int rc = dpdo_algorithm_setup(a, f->nodes, N, NULL, NULL, f->acc, &o);
    CHECK_MSG(rc == DPDO_OK, "setup: %s", dpdo_algorithm_errmsg(a));
    ((tp *)dpdo__algorithm_eng(a)->priv)->mode = mode;
    return a;
}

static int64_t total_charges(const fx *f)
{
    int64_t s = 0;
    for (int i = 0; i < N; i++) s += dpdo_ledger_charges(f->led, i);
    return s;
}

static void well_behaved(void)
{
    fx f;
    fx_make(&f);
    dpdo_algorithm *a = make(&f, &VT_PLAN, M_OK);
    int rc = dpdo_algorithm_run(a, 0, NULL);
    CHECK_MSG(rc == DPDO_DONE, "run: %d %s", rc, dpdo_algorithm_errmsg(a));
    for (int i = 0; i < N; i++) CHECK_EQ(dpdo_ledger_charges(f.led, i), 3);
    double x[D];
    CHECK_EQ(dpdo_algorithm_get_output(a, 0, x, D), DPDO_OK);
    CHECK(x[0] != 0 && isfinite(x[0])); /* the noise was added */
    dpdo_algorithm_destroy(a);
    fx_free(&f);
}

/* one round of a misbehaving mode fails with E_STATE and changes nothing */
static void refused(const dpdo__alg_vt *vt, int mode, const char *needle, int after_round)
{
    fx f;
    fx_make(&f);
    dpdo_algorithm *a = make(&f, vt, mode);
    tp *P = dpdo__algorithm_eng(a)->priv;
    if (after_round) { /* one good round first: the ledger holds its charges */
        P->mode = M_OK;
        CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
        P->mode = mode;
    }
    int64_t before = total_charges(&f);
    double x0[N * D], x1[N * D];
    for (int i = 0; i < N; i++) CHECK_EQ(dpdo_algorithm_get_output(a, i, x0 + i * D, D), DPDO_OK);
    int rc = dpdo_algorithm_step(a);
    CHECK_MSG(rc == DPDO_E_STATE || rc == DPDO_E_INVAL, "mode %d: step gave %d (%s)", mode, rc,
              dpdo_algorithm_errmsg(a));
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), needle);
    CHECK_EQ(dpdo_algorithm_state(a), DPDO_ALG_FAILED);
    CHECK_EQ(dpdo_algorithm_round(a), after_round);
    CHECK_EQ(total_charges(&f), before);
    for (int i = 0; i < N; i++) CHECK_EQ(dpdo_algorithm_get_output(a, i, x1 + i * D, D), DPDO_OK);
    CHECK(memcmp(x0, x1, sizeof x0) == 0);
    /* reset recovers, a good run charges again */
    CHECK_EQ(dpdo_algorithm_reset(a), DPDO_OK);
    CHECK_EQ(total_charges(&f), 0);
    P->mode = M_OK;
    CHECK_EQ(dpdo_algorithm_run(a, 0, NULL), DPDO_DONE);
    CHECK_EQ(total_charges(&f), 3 * N);
    dpdo_algorithm_destroy(a);
    fx_free(&f);
}

static void charge_list_cannot_overflow(void)
{
    refused(&VT_LOCAL, M_LOCAL_TWICE, "two charges for one node decided in one round", 0);
    refused(&VT_LOCAL, M_LOCAL_FLOOD, "two charges for one node decided in one round", 0);
    refused(&VT_LOCAL, M_LOCAL_FLOOD, "the round is not released", 1);
    refused(&VT_PLAN, M_PLAN_TWICE, "two charges for one node from one plan", 0);
}

static void bad_charges(void)
{
    refused(&VT_LOCAL, M_BAD_EVENT, "unknown event", 0);
    refused(&VT_LOCAL, M_BAD_COUNT, "fewer than one release", 1);
}

static void release_without_charge(void)
{
    /* the invariant checks are compiled into this (test) build */
    refused(&VT_PLAN, M_NO_CHARGE, "internal invariant violated: charged", 0);
}

static void ledger_failure_fails_the_round(void)
{
    refused(&VT_LOCAL, M_OVERFLOW, "privacy ledger: the charge failed", 0);
}

int main(void)
{
    RUN(well_behaved);
    RUN(charge_list_cannot_overflow);
    RUN(bad_charges);
    RUN(release_without_charge);
    RUN(ledger_failure_fails_the_round);
    return h_finish();
}
