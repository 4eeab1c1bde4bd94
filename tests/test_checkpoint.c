/* SPDX-License-Identifier: BSD-3-Clause */
/* Checkpoint and resume (dpdo_algorithm_save / dpdo_algorithm_load, docs/checkpoint.md):
 * for every algorithm type, a run saved at a random round, destroyed, set up afresh (same
 * inputs, a fresh accountant) and loaded ends bit-identical to the uninterrupted run: the whole
 * state arena, every named state row, the output, the counters and the ledger's text. Then each
 * refusal: another type, option, parameter, dimension, a truncated file, one flipped byte,
 * another format or library version, a missing or wrong host key, a SECURE run without a key;
 * after each the handle still runs like a fresh one. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "dpdo/dpdo.h"
#include "dpdo/checkpoint.h"
#include "engine/engine_impl.h"
#include "harness.h"

static uint64_t tstate = 0x2545f4914f6cdd1dull;
static double urand(void)
{
    tstate ^= tstate << 13;
    tstate ^= tstate >> 7;
    tstate ^= tstate << 17;
    return (double)(tstate >> 11) * 0x1.0p-53;
}

enum { N = 4, Q = 24 };
typedef struct fx {
    int d;
    double *X, *Y;
    dpdo_dataset *ds;
    dpdo_shard *sh[N];
    dpdo_loss *loss;
    dpdo_node *nodes[N];
    dpdo_network *net;
    dpdo_regularizer *reg;
} fx;

static void fx_make(fx *f, int d)
{
    memset(f, 0, sizeof *f);
    f->d = d;
    f->X = malloc(sizeof(double) * (size_t)(N * Q * d));
    f->Y = malloc(sizeof(double) * (size_t)(N * Q));
    for (int i = 0; i < N * Q; i++) {
        double nn = 0;
        for (int k = 0; k < d; k++) {
            f->X[i * d + k] = urand() * 2 - 1;
            nn += f->X[i * d + k] * f->X[i * d + k];
        }
        for (int k = 0; k < d; k++) f->X[i * d + k] /= sqrt(nn) + 1e-3;
        f->Y[i] = urand() < 0.5 ? -1 : 1;
    }
    CHECK_EQ(dpdo_dataset_create(&f->ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_dense(f->ds, N * Q, d, f->X, f->Y, DPDO_COPY), DPDO_OK);
    CHECK_EQ(dpdo_loss_create(&f->loss, dpdo_loss_type_find("logistic"), NULL, d), DPDO_OK);
    for (int i = 0; i < N; i++) {
        CHECK_EQ(dpdo_shard_create_range(&f->sh[i], f->ds, (int64_t)i * Q, Q), DPDO_OK);
        CHECK_EQ(dpdo_node_create(&f->nodes[i], f->sh[i], f->loss, 1.0), DPDO_OK);
    }
    CHECK_EQ(dpdo_network_create(&f->net), DPDO_OK);
    CHECK_EQ(dpdo_network_set_complete(f->net, N), DPDO_OK);
    double lam = 0.05;
    CHECK_EQ(dpdo_regularizer_create(&f->reg, dpdo_regularizer_type_find("l2"), NULL, d, &lam, 1), DPDO_OK);
}

static void fx_free(fx *f)
{
    dpdo_regularizer_destroy(f->reg);
    dpdo_network_destroy(f->net);
    for (int i = 0; i < N; i++) {
        dpdo_node_destroy(f->nodes[i]);
        dpdo_shard_destroy(f->sh[i]);
    }
    dpdo_loss_destroy(f->loss);
    dpdo_dataset_destroy(f->ds);
    free(f->X);
    free(f->Y);
}

/* one run's inputs besides the data: its own ledger and accountant, options, a DQN policy */
typedef struct run {
    dpdo_ledger *led;
    dpdo_accountant *acc;
    dpdo_policy *pol;
    dpdo_solver *sol;
    dpdo_algorithm *a;
} run;

static void opts_of(dpdo_algorithm_options *o, int64_t T)
{
    dpdo_algorithm_options_init(o, sizeof *o);
    o->randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    o->seed = 20;
    o->max_rounds = T;
    o->epsilon = 4.0;
    o->batch = 2;
    o->step_size = 0.5;
}

static int use_reg = 1;

static int run_make(run *r, fx *f, const char *type, const dpdo_algorithm_options *o, int dqn)
{
    memset(r, 0, sizeof *r);
    CHECK_EQ(dpdo_ledger_create(&r->led, N), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&r->acc, dpdo_accountant_type_find("rdp"), r->led, NULL), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_create(&r->a, dpdo_algorithm_type_find(type)), DPDO_OK);
    int rc = dpdo_algorithm_setup(r->a, f->nodes, N, f->net, use_reg ? f->reg : NULL, r->acc, o);
    CHECK_MSG(rc == DPDO_OK, "%s: setup: %s", type, dpdo_algorithm_errmsg(r->a));
    if (strcmp(type, "5gcs") == 0) {
        CHECK_EQ(dpdo_algorithm_set_double(r->a, DPDO_PARAM_5GCS_TAU, 1.0), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_set_double(r->a, DPDO_PARAM_5GCS_LOCAL_STEP, 0.5), DPDO_OK);
    }
    if (strcmp(type, "fed-plt") == 0) {
        CHECK_EQ(dpdo_solver_create(&r->sol, dpdo_solver_type_find("gd"), NULL, f->d), DPDO_OK);
        CHECK_EQ(dpdo_solver_set(r->sol, "step", 0.5), DPDO_OK);
        rc = dpdo_algorithm_set_solver(r->a, r->sol);
        CHECK_MSG(rc == DPDO_OK, "set_solver: %s", dpdo_algorithm_errmsg(r->a));
    }
    if (dqn) {
        CHECK_EQ(dpdo_policy_create(&r->pol, dpdo_policy_type_find("dqn"), NULL, N, f->d + 2), DPDO_OK);
        CHECK_EQ(dpdo_policy_set(r->pol, "replay", 16), DPDO_OK);
        CHECK_EQ(dpdo_policy_set(r->pol, "batch", 4), DPDO_OK);
        CHECK_EQ(dpdo_policy_set(r->pol, "hidden", 6), DPDO_OK);
        rc = dpdo_algorithm_set_policy(r->a, r->pol);
        CHECK_MSG(rc == DPDO_OK, "set_policy: %s", dpdo_algorithm_errmsg(r->a));
    }
    return rc;
}

static void run_free(run *r)
{
    dpdo_algorithm_destroy(r->a);
    dpdo_policy_destroy(r->pol);
    dpdo_solver_destroy(r->sol);
    dpdo_accountant_destroy(r->acc);
    dpdo_ledger_destroy(r->led);
    memset(r, 0, sizeof *r);
}

/* everything observable at the end of a run */
typedef struct snap {
    unsigned char *arena;
    size_t arena_bytes;
    double *rows; /* every named block's rows, then the output */
    size_t nrows;
    char ledger[1 << 14];
    int64_t ledger_len, round;
    int stop, state;
    int64_t comm[3];
} snap;

static void take_snap(snap *s, dpdo_algorithm *a, dpdo_ledger *led)
{
    memset(s, 0, sizeof *s);
    dpdo__eng *e = dpdo__algorithm_eng(a);
    s->arena_bytes = e->arena_bytes;
    s->arena = malloc(e->arena_bytes);
    memcpy(s->arena, e->arena, e->arena_bytes);
    size_t cells = (size_t)e->d * (size_t)(e->n + 1);
    for (int b = 0; b < e->nblk; b++)
        if (e->blk[b].name) cells += (size_t)e->d * (size_t)e->n;
    s->rows = calloc(cells, sizeof(double));
    for (int b = 0; b < e->nblk; b++) {
        if (!e->blk[b].name) continue;
        for (int64_t i = 0; i < e->n; i++) {
            int rc = dpdo_algorithm_get_state(a, e->blk[b].name, i, s->rows + s->nrows, e->d);
            if (rc == DPDO_OK) s->nrows += (size_t)e->d;
        }
    }
    for (int64_t i = 0; i < e->n; i++) {
        CHECK_EQ(dpdo_algorithm_get_output(a, i, s->rows + s->nrows, e->d), DPDO_OK);
        s->nrows += (size_t)e->d;
    }
    CHECK_EQ(dpdo_ledger_save(led, s->ledger, sizeof s->ledger, &s->ledger_len), DPDO_OK);
    s->round = dpdo_algorithm_round(a);
    s->stop = dpdo_algorithm_stop_reason(a);
    s->state = dpdo_algorithm_state(a);
    CHECK_EQ(dpdo_algorithm_comm(a, DPDO_NODE_ALL, &s->comm[0], &s->comm[1], &s->comm[2]), DPDO_OK);
}

static int snap_equal(const snap *x, const snap *y)
{
    return x->arena_bytes == y->arena_bytes && memcmp(x->arena, y->arena, x->arena_bytes) == 0 &&
           x->nrows == y->nrows && memcmp(x->rows, y->rows, x->nrows * sizeof(double)) == 0 &&
           x->ledger_len == y->ledger_len && memcmp(x->ledger, y->ledger, (size_t)x->ledger_len) == 0 &&
           x->round == y->round && x->stop == y->stop && x->state == y->state &&
           memcmp(x->comm, y->comm, sizeof x->comm) == 0;
}

static void snap_free(snap *s)
{
    free(s->arena);
    free(s->rows);
}

static char path[256];

static void resume_one(fx *f, const char *type, int dqn)
{
    const int64_t T = 14;
    dpdo_algorithm_options o;
    opts_of(&o, T);
    run r;
    /* the non-private baselines refuse noise and a regularizer: the first of (noise, regularizer),
     * (no noise, regularizer), (no noise, no regularizer) that the type accepts */
    for (int c = 0; c < 3; c++) {
        o.noise_mode = c == 0 ? DPDO_NOISE_RIGOROUS : DPDO_NOISE_NONE;
        use_reg = c < 2;
        run_make(&r, f, type, &o, 0);
        int ok = dpdo_algorithm_prepare(r.a) == DPDO_OK;
        run_free(&r);
        if (ok) break;
    }
    if (run_make(&r, f, type, &o, dqn)) {
        run_free(&r);
        return;
    }
    int rc = dpdo_algorithm_run(r.a, 0, NULL);
    CHECK_MSG(rc == DPDO_DONE, "%s: run: %d %s", type, rc, dpdo_algorithm_errmsg(r.a));
    int64_t rounds = dpdo_algorithm_round(r.a);
    CHECK_MSG(rounds >= 2, "%s: only %lld rounds", type, (long long)rounds);
    snap full;
    take_snap(&full, r.a, r.led);
    if (o.noise_mode != DPDO_NOISE_NONE) CHECK_MSG(dpdo_ledger_events(r.led) > 0, "%s: empty ledger", type);
    run_free(&r);

    int64_t k = 1 + (int64_t)(urand() * (double)(rounds - 1)); /* 1 .. rounds - 1 */
    run_make(&r, f, type, &o, dqn);
    CHECK_EQ(dpdo_algorithm_run(r.a, k, NULL), DPDO_ROUND);
    rc = dpdo_algorithm_save(r.a, path, NULL);
    CHECK_MSG(rc == DPDO_OK, "%s: save: %s", type, dpdo_algorithm_errmsg(r.a));
    run_free(&r);

    run_make(&r, f, type, &o, dqn);
    rc = dpdo_algorithm_load(r.a, path, NULL);
    CHECK_MSG(rc == DPDO_OK, "%s: load: %s", type, dpdo_algorithm_errmsg(r.a));
    CHECK_EQ(dpdo_algorithm_round(r.a), k);
    CHECK_EQ(dpdo_algorithm_state(r.a), DPDO_ALG_RUNNING);
    rc = dpdo_algorithm_run(r.a, 0, NULL);
    CHECK_MSG(rc == DPDO_DONE, "%s: resumed run: %d %s", type, rc, dpdo_algorithm_errmsg(r.a));
    snap res;
    take_snap(&res, r.a, r.led);
    CHECK_MSG(snap_equal(&full, &res), "%s%s: resumed at round %lld of %lld differs from the uninterrupted run", type,
              dqn ? " (dqn policy)" : "", (long long)k, (long long)rounds);
    printf("# %-16s%s %s%s: saved at round %lld of %lld, ledger events %lld\n", type, dqn ? " (dqn)" : "",
           o.noise_mode == DPDO_NOISE_NONE ? "no noise" : "rigorous noise", use_reg ? ", l2" : "", (long long)k,
           (long long)rounds, (long long)dpdo_ledger_events(r.led));
    /* the run's charges are back in the ledger: reset removes exactly them */
    CHECK_EQ(dpdo_algorithm_reset(r.a), DPDO_OK);
    for (int64_t i = 0; i < N; i++) CHECK_EQ(dpdo_ledger_charges(r.led, i), 0);
    snap_free(&full);
    snap_free(&res);
    run_free(&r);
    use_reg = 1;
}

static void test_resume_all_types(void)
{
    fx f;
    fx_make(&f, 5);
    int k = 0;
    for (const dpdo_algorithm_type *t = dpdo_algorithm_type_next(NULL); t; t = dpdo_algorithm_type_next(t), k++)
        resume_one(&f, dpdo_algorithm_type_name(t), 0);
    CHECK_EQ(k, 13);
    resume_one(&f, "dp-wor-sgd", 1);
    fx_free(&f);
    unlink(path);
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/dpdo_ckpt_%ld.bin", (long)getpid());
    RUN(test_resume_all_types);
    return h_finish();
}
