/* SPDX-License-Identifier: BSD-3-Clause */
/* Checkpoint and resume (dpdo_algorithm_save / dpdo_algorithm_load, docs/checkpoint.md):
 * for every algorithm type, a run saved at a random round, destroyed, set up afresh (same
 * inputs, a fresh accountant) and loaded ends bit-identical to the uninterrupted run: the whole
 * state arena, every named state row, the output, the counters and the ledger's text. Then each
 * refusal: another type, option, parameter, dimension, a truncated file, one flipped byte,
 * another format or library version, a missing or wrong host key, a SECURE run without a key;
 * after each the handle still runs like a fresh one. */
#define _GNU_SOURCE /* memmem */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "dpdo/dpdo.h"
#include "dpdo/checkpoint.h"
#include "engine/engine_impl.h"
#include "model/policy_impl.h"
#include "harness.h"
#include "fixture.h"
#include "alg_fixture.h"

static uint64_t tstate = 0x2545f4914f6cdd1dull;
static double urand(void) { return h_urand(&tstate); }

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

static void fx_make_st(fx *f, int d, uint64_t *st)
{
    memset(f, 0, sizeof *f);
    f->d = d;
    f->X = malloc(sizeof(double) * (size_t)(N * Q * d));
    f->Y = malloc(sizeof(double) * (size_t)(N * Q));
    for (int i = 0; i < N * Q; i++) {
        double nn = 0;
        for (int k = 0; k < d; k++) {
            f->X[i * d + k] = h_urand(st) * 2 - 1;
            nn += f->X[i * d + k] * f->X[i * d + k];
        }
        for (int k = 0; k < d; k++) f->X[i * d + k] /= sqrt(nn) + 1e-3;
        f->Y[i] = h_urand(st) < 0.5 ? -1 : 1;
    }
    tfx_nodes_make(f->X, f->Y, N, Q, d, "logistic", &f->ds, &f->loss, f->sh, f->nodes);
    CHECK_EQ(dpdo_network_create(&f->net), DPDO_OK);
    CHECK_EQ(dpdo_network_set_complete(f->net, N), DPDO_OK);
    double lam = 0.05;
    CHECK_EQ(dpdo_regularizer_create(&f->reg, dpdo_regularizer_type_find("l2"), NULL, d, &lam, 1), DPDO_OK);
}

static void fx_make(fx *f, int d)
{
    fx_make_st(f, d, &tstate);
}

static void fx_free(fx *f)
{
    dpdo_regularizer_destroy(f->reg);
    dpdo_network_destroy(f->net);
    tfx_nodes_free(N, f->ds, f->loss, f->sh, f->nodes);
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
    CHECK_EQ(dpdo_accountant_create(&r->acc, dpdo_accountant_type_find("rdp"), NULL, r->led, NULL), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_create(&r->a, dpdo_algorithm_type_find(type)), DPDO_OK);
    int rc = dpdo_algorithm_setup(r->a, f->nodes, N, f->net, use_reg ? f->reg : NULL, r->acc, o);
    CHECK_MSG(rc == DPDO_OK, "%s: setup: %s", type, dpdo_algorithm_errmsg(r->a));
    if (rc == DPDO_OK) tfx_alg_apply(r->a, type, o->noise_mode != DPDO_NOISE_NONE, f->d, &r->sol);
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
    double *pol; /* the DQN agents' weights, moments, replay rings, then their counters */
    size_t npol;
} snap;

static void take_snap(snap *s, dpdo_algorithm *a, dpdo_ledger *led, dpdo_policy *p)
{
    memset(s, 0, sizeof *s);
    if (p) {
        int64_t S = p->state_len, R = p->replay, P = p->nparam, per = 4 * P + R * (2 * S + 3) + S;
        s->npol = (size_t)(per * p->n_nodes + 8 * p->n_nodes);
        s->pol = calloc(s->npol, sizeof(double));
        memcpy(s->pol, p->arena, (size_t)(per * p->n_nodes) * sizeof(double));
        double *t = s->pol + per * p->n_nodes;
        for (int64_t i = 0; i < p->n_nodes; i++) {
            const struct dpdo__dqn_agent *ag = &p->agents[i];
            double v[8] = {(double)ag->head, (double)ag->count, (double)ag->steps, (double)ag->trains,
                           ag->prev_a, ag->has_prev, ag->init, ag->bad};
            memcpy(t + 8 * i, v, sizeof v);
        }
    }
    dpdo__eng *e = dpdo__algorithm_eng(a);
    /* DO-ADP swaps x with x' instead of copying: the arena in the copying layout (the same
     * bytes; a save puts it so too, so a resumed run and the reference agree byte for byte) */
    if (e->vt->canonical) e->vt->canonical(e, e->priv, 1);
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
           memcmp(x->comm, y->comm, sizeof x->comm) == 0 && x->npol == y->npol &&
           (x->npol == 0 || memcmp(x->pol, y->pol, x->npol * sizeof(double)) == 0);
}

static void snap_free(snap *s)
{
    free(s->arena);
    free(s->rows);
    free(s->pol);
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
        if (!ok && getenv("CKPT_VERBOSE")) printf("# %s: %s\n", type, dpdo_algorithm_errmsg(r.a));
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
    take_snap(&full, r.a, r.led, r.pol);
    if (dqn) CHECK(full.pol && full.pol[full.npol - 5] > 0); /* the agents trained */
    if (o.noise_mode != DPDO_NOISE_NONE) CHECK_MSG(dpdo_ledger_events(r.led) > 0, "%s: empty ledger", type);
    run_free(&r);

    int64_t k = 1 + (int64_t)(urand() * (double)(rounds - 1)); /* 1 .. rounds - 1 */
    if (dqn) k = rounds / 2; /* the agents hold transitions and trained weights */
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
    take_snap(&res, r.a, r.led, r.pol);
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
    CHECK(k >= 13); /* every registered type, whatever their number */
    resume_one(&f, "dp-wor-sgd", 1);
    fx_free(&f);
    unlink(path);
}

static int load_fails(dpdo_algorithm *a, const char *file, const dpdo_checkpoint_options *co, int want,
                      const char *needle)
{
    int rc = dpdo_algorithm_load(a, file, co);
    const char *m = dpdo_algorithm_errmsg(a);
    int ok = rc == want && strstr(m, needle) != NULL && dpdo_algorithm_round(a) == 0 &&
             dpdo_algorithm_state(a) == DPDO_ALG_READY;
    if (!ok) printf("#   load gave %d '%s'; wanted %d with '%s'\n", rc, m, want, needle);
    return ok;
}

static unsigned char *slurp(const char *file, long *len)
{
    FILE *fp = fopen(file, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    *len = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)*len + 1);
    if (fread(b, 1, (size_t)*len, fp) != (size_t)*len) *len = -1;
    fclose(fp);
    return b;
}

static void spit(const char *file, const unsigned char *b, long len)
{
    FILE *fp = fopen(file, "wb");
    fwrite(b, 1, (size_t)len, fp);
    fclose(fp);
}

static void test_refusals(void)
{
    fx f, f6;
    fx_make(&f, 5);
    fx_make(&f6, 6);
    dpdo_algorithm_options o;
    opts_of(&o, 10);
    char bad[300];
    snprintf(bad, sizeof bad, "%s.bad", path);
    /* the reference: uninterrupted */
    run r;
    run_make(&r, &f, "dp-dda", &o, 0);
    CHECK_EQ(dpdo_algorithm_run(r.a, 0, NULL), DPDO_DONE);
    snap full;
    take_snap(&full, r.a, r.led, NULL);
    run_free(&r);
    /* the file: saved at round 4 */
    run_make(&r, &f, "dp-dda", &o, 0);
    CHECK_EQ(dpdo_algorithm_save(r.a, path, NULL), DPDO_E_STATE); /* READY: nothing to save */
    CHECK_EQ(dpdo_algorithm_run(r.a, 4, NULL), DPDO_ROUND);
    CHECK_EQ(dpdo_algorithm_save(r.a, path, NULL), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_load(r.a, path, NULL), DPDO_E_STATE); /* not READY at round 0 */
    CHECK(strstr(dpdo_algorithm_errmsg(r.a), "READY at round 0") != NULL);
    CHECK_EQ(dpdo_algorithm_save(NULL, path, NULL), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_save(r.a, NULL, NULL), DPDO_E_INVAL);
    run_free(&r);

    /* another type, option, parameter, dimension */
    run_make(&r, &f, "dp-dda-baseline", &o, 0);
    CHECK(load_fails(r.a, path, NULL, DPDO_E_FORMAT, "algorithm type differs: 'dp-dda' in the file, 'dp-dda-baseline'"));
    run_free(&r);
    dpdo_algorithm_options o2 = o;
    o2.seed = 21;
    run_make(&r, &f, "dp-dda", &o2, 0);
    CHECK(load_fails(r.a, path, NULL, DPDO_E_FORMAT, "option seed differs: 20 in the file, 21"));
    run_free(&r);
    o2 = o;
    o2.epsilon = 3.0;
    run_make(&r, &f, "dp-dda", &o2, 0);
    CHECK(load_fails(r.a, path, NULL, DPDO_E_FORMAT, "option epsilon differs"));
    run_free(&r);
    run_make(&r, &f, "dp-dda", &o, 0);
    int64_t act = 0;
    CHECK_EQ(dpdo_algorithm_get_int(r.a, DPDO_PARAM_DDA_ACTIVE, &act), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_int(r.a, DPDO_PARAM_DDA_ACTIVE, act == 2 ? 3 : 2), DPDO_OK);
    CHECK(load_fails(r.a, path, NULL, DPDO_E_FORMAT, "parameter dda-active differs"));
    run_free(&r);
    run_make(&r, &f6, "dp-dda", &o, 0);
    CHECK(load_fails(r.a, path, NULL, DPDO_E_FORMAT, "dimension differs: 5 in the file, 6"));
    run_free(&r);

    /* damaged files, all tried on one handle, which then resumes from the good file exactly */
    run_make(&r, &f, "dp-dda", &o, 0);
    long len = 0;
    unsigned char *b = slurp(path, &len);
    CHECK(b && len > 200);
    spit(bad, b, len - 7);
    CHECK(load_fails(r.a, bad, NULL, DPDO_E_FORMAT, "truncated"));
    spit(bad, b, 30);
    CHECK(load_fails(r.a, bad, NULL, DPDO_E_FORMAT, "truncated"));
    for (int t = 0; t < 3; t++) { /* one flipped byte: in the payload, the arena, the checksum */
        long at = t == 0 ? 100 : t == 1 ? len / 2 : len - 3;
        b[at] ^= 0x10;
        spit(bad, b, len);
        b[at] ^= 0x10;
        CHECK(load_fails(r.a, bad, NULL, DPDO_E_FORMAT, "checksum mismatch"));
    }
    b[8] ^= 4; /* format version */
    spit(bad, b, len);
    b[8] ^= 4;
    CHECK(load_fails(r.a, bad, NULL, DPDO_E_FORMAT, "checkpoint format 6"));
    unsigned char keep[16];
    memcpy(keep, b + 24, 16);
    memset(b + 24, 0, 16);
    memcpy(b + 24, "0.0.9", 5); /* library version */
    spit(bad, b, len);
    memcpy(b + 24, keep, 16);
    CHECK(load_fails(r.a, bad, NULL, DPDO_E_FORMAT, "written by libdpdo 0.0.9"));
    b[8] = 1; /* format 1 is libdpdo 0.2's: only from a 0.2 release */
    memset(b + 24, 0, 16);
    memcpy(b + 24, "0.1.9", 5);
    spit(bad, b, len);
    memcpy(b + 24, keep, 16);
    b[8] = DPDO_CHECKPOINT_FORMAT;
    CHECK(load_fails(r.a, bad, NULL, DPDO_E_FORMAT, "format 1 from libdpdo 0.2"));
    spit(bad, (const unsigned char *)"# not a checkpoint\n", 19);
    CHECK(load_fails(r.a, bad, NULL, DPDO_E_FORMAT, "not a libdpdo checkpoint"));
    CHECK(load_fails(r.a, "/nonexistent/dir/x.ckpt", NULL, DPDO_E_IO, "cannot open"));
    CHECK(load_fails(r.a, "/dev/zero", NULL, DPDO_E_FORMAT, "not a libdpdo checkpoint"));
    unsigned char key[DPDO_CHECKPOINT_KEY_BYTES];
    for (int i = 0; i < DPDO_CHECKPOINT_KEY_BYTES; i++) key[i] = (unsigned char)(7 * i + 1);
    dpdo_checkpoint_options co;
    CHECK_EQ(dpdo_checkpoint_options_init(&co, sizeof co), DPDO_OK);
    co.key = key;
    CHECK(load_fails(r.a, path, &co, DPDO_E_FORMAT, "not encrypted but a host key was given"));
    for (int i = 0; i < N; i++) CHECK_EQ(dpdo_ledger_charges(r.led, i), 0); /* nothing charged by refusals */
    CHECK_EQ(dpdo_algorithm_load(r.a, path, NULL), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_run(r.a, 0, NULL), DPDO_DONE);
    snap res;
    take_snap(&res, r.a, r.led, NULL);
    CHECK(snap_equal(&full, &res));
    snap_free(&res);
    run_free(&r);
    free(b);

    /* host node keys in a plain file: recorded as flags only; the host sets them again */
    unsigned char nk[32];
    memset(nk, 0x5a, sizeof nk);
    run_make(&r, &f, "dp-dda", &o, 0);
    CHECK_EQ(dpdo_algorithm_set_node_key(r.a, 1, nk), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_run(r.a, 0, NULL), DPDO_DONE);
    snap keyed;
    take_snap(&keyed, r.a, r.led, NULL);
    run_free(&r);
    run_make(&r, &f, "dp-dda", &o, 0);
    CHECK_EQ(dpdo_algorithm_set_node_key(r.a, 1, nk), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_run(r.a, 5, NULL), DPDO_ROUND);
    CHECK_EQ(dpdo_algorithm_save(r.a, path, NULL), DPDO_OK);
    run_free(&r);
    b = slurp(path, &len);
    CHECK(b && memmem(b, (size_t)len, nk, sizeof nk) == NULL); /* the key is not in the file */
    free(b);
    run_make(&r, &f, "dp-dda", &o, 0);
    CHECK(load_fails(r.a, path, NULL, DPDO_E_FORMAT, "node 1 has a host key (dpdo_algorithm_set_node_key) differs"));
    CHECK_EQ(dpdo_algorithm_set_node_key(r.a, 1, nk), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_load(r.a, path, NULL), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_run(r.a, 0, NULL), DPDO_DONE);
    take_snap(&res, r.a, r.led, NULL);
    CHECK(snap_equal(&keyed, &res));
    snap_free(&res);
    snap_free(&keyed);
    run_free(&r);

    /* SECURE randomness (keys from the OS entropy): only with a host key; the encrypted file
     * carries the node keys, so the resumed run equals the saving run continued */
    o2 = o;
    o2.randomness = DPDO_RANDOMNESS_SECURE;
    run_make(&r, &f, "dp-dda", &o2, 0);
    CHECK_EQ(dpdo_algorithm_run(r.a, 3, NULL), DPDO_ROUND);
    CHECK_EQ(dpdo_algorithm_save(r.a, path, NULL), DPDO_E_STATE);
    CHECK(strstr(dpdo_algorithm_errmsg(r.a), "options.key") != NULL);
    CHECK_EQ(dpdo_algorithm_save(r.a, path, &co), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_run(r.a, 0, NULL), DPDO_DONE);
    snap cont;
    take_snap(&cont, r.a, r.led, NULL);
    unsigned char ek[32];
    dpdo__eng *re = dpdo__algorithm_eng(r.a);
    CHECK(re->key != NULL);
    if (re->key) memcpy(ek, re->key, 32);
    run_free(&r);
    run_make(&r, &f, "dp-dda", &o2, 0);
    CHECK(load_fails(r.a, path, NULL, DPDO_E_FORMAT, "is encrypted: set options.key"));
    key[5] ^= 1;
    CHECK(load_fails(r.a, path, &co, DPDO_E_FORMAT, "authentication failed"));
    key[5] ^= 1;
    b = slurp(path, &len);
    CHECK(b && memmem(b, (size_t)len, "option seed", 11) == NULL); /* the payload is not in plain */
    CHECK(b && memmem(b, (size_t)len, ek, 32) == NULL);           /* nor the node keys */
    free(b);
    CHECK_EQ(dpdo_algorithm_load(r.a, path, &co), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_round(r.a), 3);
    CHECK_EQ(dpdo_algorithm_run(r.a, 0, NULL), DPDO_DONE);
    take_snap(&res, r.a, r.led, NULL);
    CHECK(snap_equal(&cont, &res));
    snap_free(&res);
    /* without the keys (a fresh SECURE run loading nothing) the same rounds give other values */
    run_free(&r);
    run_make(&r, &f, "dp-dda", &o2, 0);
    CHECK_EQ(dpdo_algorithm_run(r.a, 0, NULL), DPDO_DONE);
    take_snap(&res, r.a, r.led, NULL);
    CHECK(!snap_equal(&cont, &res));
    snap_free(&res);
    snap_free(&cont);
    run_free(&r);

    snap_free(&full);
    fx_free(&f);
    fx_free(&f6);
    unlink(path);
    unlink(bad);
}

/* live parameters changed during the run: max-rounds (grown) and max-epsilon (lowered: the run
 * then stops for the budget) come from the file with the guard's allowances */
static void live_one(const char *type)
{
    fx f;
    fx_make(&f, 4);
    dpdo_algorithm_options o;
    opts_of(&o, 10);
    run r;
    run_make(&r, &f, type, &o, 0);
    CHECK_EQ(dpdo_algorithm_run(r.a, 4, NULL), DPDO_ROUND);
    CHECK_EQ(dpdo_algorithm_set_int(r.a, DPDO_PARAM_MAX_ROUNDS, 13), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_double(r.a, DPDO_PARAM_MAX_EPSILON, 3.9), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_save(r.a, path, NULL), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_run(r.a, 0, NULL), DPDO_DONE);
    snap full, res;
    take_snap(&full, r.a, r.led, NULL);
    CHECK_MSG(full.round > 4 && full.round < 13 && full.stop == DPDO_STOP_BUDGET, "%s: round %lld, stop %d", type,
              (long long)full.round, full.stop);
    run_free(&r);
    run_make(&r, &f, type, &o, 0);
    int rc = dpdo_algorithm_load(r.a, path, NULL);
    CHECK_MSG(rc == DPDO_OK, "load: %s", dpdo_algorithm_errmsg(r.a));
    int64_t T = 0;
    CHECK_EQ(dpdo_algorithm_get_int(r.a, DPDO_PARAM_MAX_ROUNDS, &T), DPDO_OK);
    CHECK_EQ(T, 13);
    double me = 0;
    CHECK_EQ(dpdo_algorithm_get_double(r.a, DPDO_PARAM_MAX_EPSILON, &me), DPDO_OK);
    CHECK(me == 3.9);
    CHECK_EQ(dpdo_algorithm_run(r.a, 0, NULL), DPDO_DONE);
    take_snap(&res, r.a, r.led, NULL);
    CHECK_MSG(snap_equal(&full, &res), "rounds %lld / %lld, stop %d / %d, ledger %lld / %lld", (long long)full.round,
              (long long)res.round, full.stop, res.stop, (long long)full.ledger_len, (long long)res.ledger_len);
    snap_free(&full);
    snap_free(&res);
    run_free(&r);
    fx_free(&f);
    unlink(path);
}

static void test_live_parameters(void)
{
    live_one("dp-dda");
    live_one("dpdo"); /* its pure-epsilon guard lives in the algorithm's private state */
}

/* Checkpoints written by libdpdo 0.2.0 (format 1: every parameter of every type in 48 slots by
 * position; tests/data/gen_ckpt_02.c wrote them, saved at round 4 after max-rounds was raised to
 * 12): they load, the parameters land in this library's slots by key (frozen ones compared, the
 * live max-rounds taken from the file), and the resumed run ends bit-identical to an uninterrupted
 * run of this library. */
/* The generator's setup of `type` (dp-dda on the network with l2, 5gcs without either); all = 0
 * leaves one frozen parameter at its default (dda-paper-c; 5gcs: fed-epochs) */
static void legacy_make(run *r, fx *f, const char *type, const dpdo_algorithm_options *o, int all)
{
    const int fed = strcmp(type, "dp-dda") != 0;
    memset(r, 0, sizeof *r);
    CHECK_EQ(dpdo_ledger_create(&r->led, N), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&r->acc, dpdo_accountant_type_find("rdp"), NULL, r->led, NULL), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_create(&r->a, dpdo_algorithm_type_find(type)), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(r->a, f->nodes, N, fed ? NULL : f->net, fed ? NULL : f->reg, r->acc, o), DPDO_OK);
    if (!fed) {
        CHECK_EQ(dpdo_algorithm_set_int(r->a, DPDO_PARAM_DDA_ACTIVE, 4), DPDO_OK);
        if (all) CHECK_EQ(dpdo_algorithm_set_double(r->a, DPDO_PARAM_DDA_PAPER_C, 160.0), DPDO_OK);
    } else {
        CHECK_EQ(dpdo_algorithm_set_double(r->a, dpdo_param_find("5gcs-tau"), 1.0), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_set_double(r->a, dpdo_param_find("5gcs-local-step"), 0.5), DPDO_OK);
        if (all) CHECK_EQ(dpdo_algorithm_set_int(r->a, dpdo_param_find("fed-epochs"), 3), DPDO_OK);
    }
}

static void legacy_one(const char *type)
{
    uint64_t st = 0x9e3779b97f4a7c15ull; /* the generator's data */
    fx f;
    fx_make_st(&f, 5, &st);
    const int fed = strcmp(type, "dp-dda") != 0;
    dpdo_algorithm_options o;
    opts_of(&o, 10);
    if (fed) o.noise_mode = DPDO_NOISE_NONE;
    char file[512];
    const char *dir = getenv("DPDO_TEST_DATA") ? getenv("DPDO_TEST_DATA") : "tests/data";
    snprintf(file, sizeof file, "%.400s/ckpt-0.2-%s.bin", dir, type);
    snap ref, res;
    for (int v = 0; v < 2; v++) {
        run r;
        legacy_make(&r, &f, type, &o, 1);
        if (v == 0) { /* uninterrupted */
            CHECK_EQ(dpdo_algorithm_run(r.a, 4, NULL), DPDO_ROUND);
            CHECK_EQ(dpdo_algorithm_set_int(r.a, DPDO_PARAM_MAX_ROUNDS, 12), DPDO_OK);
        } else {
            int rc = dpdo_algorithm_load(r.a, file, NULL);
            CHECK_MSG(rc == DPDO_OK, "%s: load %.200s: %s", type, file, dpdo_algorithm_errmsg(r.a));
            CHECK_EQ(dpdo_algorithm_round(r.a), 4);
            int64_t T = 0;
            CHECK_EQ(dpdo_algorithm_get_int(r.a, DPDO_PARAM_MAX_ROUNDS, &T), DPDO_OK);
            CHECK_EQ(T, 12);
        }
        CHECK_EQ(dpdo_algorithm_run(r.a, 0, NULL), DPDO_DONE);
        take_snap(v ? &res : &ref, r.a, r.led, NULL);
        run_free(&r);
    }
    CHECK_MSG(ref.round > 4 && snap_equal(&ref, &res), "%s: the 0.2 checkpoint resumed differs (rounds %lld / %lld)",
              type, (long long)ref.round, (long long)res.round);
    printf("# %s: 0.2.0 checkpoint at round 4 resumed to round %lld (stop %d), bit-identical\n", type, (long long)res.round,
           res.stop);
    /* a frozen parameter that differs from the file's is refused by name */
    run r;
    legacy_make(&r, &f, type, &o, 0);
    CHECK(load_fails(r.a, file, NULL, DPDO_E_FORMAT, fed ? "parameter fed-epochs differs" : "parameter dda-paper-c differs"));
    run_free(&r);
    snap_free(&ref);
    snap_free(&res);
    fx_free(&f);
}

static void test_legacy_checkpoints(void)
{
    legacy_one("dp-dda");
    legacy_one("5gcs");
}

int main(void)
{
    snprintf(path, sizeof path, "/tmp/dpdo_ckpt_%ld.bin", (long)getpid());
    const char *seed = getenv("DPDO_TEST_SEED"); /* vary the interruption rounds */
    if (seed) tstate ^= strtoull(seed, NULL, 0) * 0x9e3779b97f4a7c15ull;
    RUN(test_resume_all_types);
    RUN(test_refusals);
    RUN(test_live_parameters);
    RUN(test_legacy_checkpoints);
    return h_finish();
}
