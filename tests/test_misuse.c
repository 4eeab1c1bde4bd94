/* SPDX-License-Identifier: BSD-3-Clause */
/* Misuse detection (docs/abi.md "Misuse detection"): one handle driven by two threads at once,
 * or re-entered from one of its own callbacks, gets DPDO_E_MISUSE and nothing is done -- never a
 * crash, never a silently corrupted run.
 *
 * Overlap is forced, not hoped for: a user loss (the logistic phi) blocks inside the first
 * thread's call until the second thread's call has returned, so each of the 20 trials of
 * step + step, run + run, run + reset and step + destroy really overlaps; the second call must
 * return DPDO_E_MISUSE every time, and the first call's run must then be bit-identical to an
 * undisturbed one. Free races (no gate: two threads hammering step, a ledger's charge, an
 * accountant's query) may or may not overlap; every call must return its normal status or
 * DPDO_E_MISUSE, and the final state must equal a serial run of exactly the calls that
 * succeeded (so a lost or doubled update, or a call that did half its work, fails the test).
 * Before the busy state, step + step crashed (both threads ran the implicit prepare) and
 * run + reset returned wrong outputs. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "dpdo/dpdo.h"

enum { N = 4, Q = 12, D = 3, TRIALS = 20, T = 6 };

/* the gate: while armed, the first loss evaluation marks `inside` and waits for `release` */
typedef struct gate {
    atomic_int armed, inside, release;
} gate;

static int gate_phi(void *user, double m, double y, double *loss, double *dloss)
{
    gate *g = user;
    int one = 1;
    if (atomic_load(&g->armed) && atomic_compare_exchange_strong(&g->armed, &one, 0)) {
        atomic_store(&g->inside, 1);
        for (long k = 0; !atomic_load(&g->release) && k < 20000000; k++) { /* <= ~20 s */
            struct timespec ts = {0, 1000};
            nanosleep(&ts, NULL);
        }
    }
    double t = -y * m;
    *loss = t > 0 ? t + log1p(exp(-t)) : log1p(exp(t));
    *dloss = -y / (1 + exp(y * m));
    return 0;
}

static int gate_bounds(void *user, double mb, double lb, double *d1, double *d2)
{
    (void)user, (void)mb;
    *d1 = lb;
    *d2 = lb * lb / 4;
    return 0;
}

static const dpdo_loss_type GATE = {.struct_size = sizeof(dpdo_loss_type),
                                    .name = "test-gate",
                                    .phi = gate_phi,
                                    .phi_bounds = gate_bounds};

typedef struct fx {
    double X[N * Q * D], Y[N * Q];
    gate g;
    dpdo_dataset *ds;
    dpdo_loss *loss;
    dpdo_shard *sh[N];
    dpdo_node *nodes[N];
    dpdo_network *net;
    dpdo_regularizer *reg;
} fx;

static void fx_make(fx *f)
{
    memset(f, 0, sizeof *f);
    uint64_t s = 7;
    for (int i = 0; i < N * Q; i++) {
        for (int k = 0; k < D; k++) f->X[i * D + k] = h_urand(&s) - 0.5;
        f->Y[i] = h_urand(&s) < 0.5 ? -1 : 1;
    }
    CHECK_EQ(dpdo_dataset_create(&f->ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_dense(f->ds, N * Q, D, f->X, f->Y, DPDO_COPY), DPDO_OK);
    CHECK_EQ(dpdo_loss_create(&f->loss, &GATE, &f->g, D), DPDO_OK);
    for (int i = 0; i < N; i++) {
        CHECK_EQ(dpdo_shard_create_range(&f->sh[i], f->ds, (int64_t)i * Q, Q), DPDO_OK);
        CHECK_EQ(dpdo_node_create(&f->nodes[i], f->sh[i], f->loss, 1.0), DPDO_OK);
    }
    CHECK_EQ(dpdo_network_create(&f->net), DPDO_OK);
    CHECK_EQ(dpdo_network_set_complete(f->net, N), DPDO_OK);
    double lam = 0.5;
    CHECK_EQ(dpdo_regularizer_create(&f->reg, dpdo_regularizer_type_find("l2"), NULL, D, &lam, 1),
             DPDO_OK);
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
}

/* a private, reproducible DP-DDA run of T rounds with its own ledger and accountant */
typedef struct run {
    dpdo_algorithm *a;
    dpdo_ledger *led;
    dpdo_accountant *acc;
} run;

static void run_make(run *r, fx *f)
{
    CHECK_EQ(dpdo_ledger_create(&r->led, N), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&r->acc, dpdo_accountant_type_find("rdp"), NULL, r->led, NULL),
             DPDO_OK);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    o.noise_mode = DPDO_NOISE_RIGOROUS;
    o.max_rounds = T;
    CHECK_EQ(dpdo_algorithm_create(&r->a, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
    int rc = dpdo_algorithm_setup(r->a, f->nodes, N, f->net, f->reg, r->acc, &o);
    CHECK_MSG(rc == DPDO_OK, "setup: %s", dpdo_algorithm_errmsg(r->a));
}

static void run_free(run *r)
{
    dpdo_algorithm_destroy(r->a);
    dpdo_accountant_destroy(r->acc);
    dpdo_ledger_destroy(r->led);
}

/* the output after k rounds of an undisturbed run */
static void reference(fx *f, int64_t k, double *x)
{
    run r;
    run_make(&r, f);
    int64_t steps = 0;
    int rc = dpdo_algorithm_run(r.a, k, &steps);
    CHECK(rc == DPDO_ROUND || rc == DPDO_DONE);
    CHECK_EQ(steps, k);
    CHECK_EQ(dpdo_algorithm_get_output(r.a, DPDO_NODE_ALL, x, D), DPDO_OK);
    run_free(&r);
}

/* ---- forced overlap ---------------------------------------------------------------------- */

enum { OP_STEP, OP_RUN, OP_RESET, OP_DESTROY, OP_SET, OP_GET };

typedef struct job {
    run *r;
    int op;
    int rc;
    int64_t steps;
} job;

static int do_op(run *r, int op, int64_t *steps)
{
    switch (op) {
    case OP_STEP: return dpdo_algorithm_step(r->a);
    case OP_RUN: return dpdo_algorithm_run(r->a, 0, steps);
    case OP_RESET: return dpdo_algorithm_reset(r->a);
    case OP_DESTROY: dpdo_algorithm_destroy(r->a); return DPDO_OK;
    case OP_SET: return dpdo_algorithm_set_double(r->a, DPDO_PARAM_SIGMA, 2.0);
    default: {
        double x[D];
        return dpdo_algorithm_get_output(r->a, DPDO_NODE_ALL, x, D);
    }
    }
}

static void *job_main(void *arg)
{
    job *j = arg;
    j->rc = do_op(j->r, j->op, &j->steps);
    return NULL;
}

/* first `op1` in a thread, blocked inside its loss; then `op2` from this thread: misuse */
static int overlap_once(fx *f, int op1, int op2, double *x_after, int64_t *round_after)
{
    run r;
    run_make(&r, f);
    atomic_store(&f->g.inside, 0);
    atomic_store(&f->g.release, 0);
    atomic_store(&f->g.armed, 1);
    job j = {&r, op1, 0, 0};
    pthread_t th;
    CHECK_EQ(pthread_create(&th, NULL, job_main, &j), 0);
    for (long k = 0; !atomic_load(&f->g.inside) && k < 20000000; k++) {
        struct timespec ts = {0, 1000};
        nanosleep(&ts, NULL);
    }
    int inside = atomic_load(&f->g.inside);
    int64_t st = 0;
    int rc2 = do_op(&r, op2, &st);
    atomic_store(&f->g.release, 1);
    pthread_join(th, NULL);
    CHECK(inside);
    CHECK_MSG(j.rc >= 0, "first call: %d %s", j.rc, dpdo_algorithm_errmsg(r.a));
    *round_after = dpdo_algorithm_round(r.a);
    CHECK_EQ(dpdo_algorithm_get_output(r.a, DPDO_NODE_ALL, x_after, D), DPDO_OK);
    run_free(&r); /* also proves that a refused destroy left the handle alive */
    return rc2;
}

static void test_forced_overlap(void)
{
    fx f;
    fx_make(&f);
    double x1[D], xT[D];
    reference(&f, 1, x1);
    reference(&f, T, xT);
    static const struct {
        int op1, op2;
        const char *name;
    } cases[] = {{OP_STEP, OP_STEP, "step + step"}, {OP_RUN, OP_RUN, "run + run"},
                 {OP_RUN, OP_RESET, "run + reset"}, {OP_STEP, OP_DESTROY, "step + destroy"},
                 {OP_RUN, OP_SET, "run + set_double"}, {OP_STEP, OP_GET, "step + get_output"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int misuse = 0, right = 0;
        for (int t = 0; t < TRIALS; t++) {
            double x[D];
            int64_t round = -1;
            int rc = overlap_once(&f, cases[c].op1, cases[c].op2, x, &round);
            misuse += rc == DPDO_E_MISUSE || cases[c].op2 == OP_DESTROY;
            const double *want = cases[c].op1 == OP_STEP ? x1 : xT;
            right += round == (cases[c].op1 == OP_STEP ? 1 : T) && memcmp(x, want, sizeof x) == 0;
        }
        CHECK_MSG(misuse == TRIALS, "%s: %d of %d second calls got DPDO_E_MISUSE", cases[c].name,
                  misuse, TRIALS);
        CHECK_MSG(right == TRIALS, "%s: %d of %d first calls ended bit-identical to an undisturbed run",
                  cases[c].name, right, TRIALS);
    }
    fx_free(&f);
}

/* ---- free races -------------------------------------------------------------------------- */

/* one of two threads calling `call` on the same handle `n` times once *go is set, counting the
 * calls that returned ok_code, DPDO_E_MISUSE and anything else */
typedef struct racer {
    int (*call)(void *obj);
    void *obj;
    int n, ok_code;
    int ok, misuse, other;
    atomic_int *go;
} racer;

static void *racer_main(void *arg)
{
    racer *z = arg;
    while (!atomic_load(z->go)) {
    }
    for (int k = 0; k < z->n; k++) {
        int rc = z->call(z->obj);
        if (rc == z->ok_code) z->ok++;
        else if (rc == DPDO_E_MISUSE) z->misuse++;
        else z->other++;
    }
    return NULL;
}

/* two racers on obj, started together; z[0..1] hold their counts */
static void race2(racer z[2], int (*call)(void *), void *obj, int n, int ok_code)
{
    atomic_int go = 0;
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        z[i] = (racer){call, obj, n, ok_code, 0, 0, 0, &go};
        CHECK_EQ(pthread_create(&th[i], NULL, racer_main, &z[i]), 0);
    }
    atomic_store(&go, 1);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
}

static int step_call(void *obj)
{
    return dpdo_algorithm_step(((run *)obj)->a);
}

static void test_free_race_step(void)
{
    fx f;
    fx_make(&f);
    double ref[T + 1][D];
    for (int k = 1; k <= T; k++) reference(&f, k, ref[k]);
    int misuse_total = 0;
    for (int t = 0; t < TRIALS; t++) {
        run r;
        run_make(&r, &f);
        racer z[2];
        race2(z, step_call, &r, 3, DPDO_ROUND);
        int ok = z[0].ok + z[1].ok;
        misuse_total += z[0].misuse + z[1].misuse;
        CHECK_EQ(z[0].other + z[1].other, 0);
        CHECK_EQ(z[0].ok + z[0].misuse + z[1].ok + z[1].misuse, 6);
        CHECK_EQ(dpdo_algorithm_round(r.a), ok);
        if (ok < 1) continue;
        double x[D];
        CHECK_EQ(dpdo_algorithm_get_output(r.a, DPDO_NODE_ALL, x, D), DPDO_OK);
        CHECK_MSG(memcmp(x, ref[ok], sizeof x) == 0, "trial %d: %d successful steps, output differs", t,
                  ok);
        run_free(&r);
    }
    printf("    free race step + step: %d of %d calls refused with DPDO_E_MISUSE\n", misuse_total,
           TRIALS * 6);
    fx_free(&f);
}

typedef struct charge_args {
    dpdo_ledger *l;
    dpdo_event *ev;
} charge_args;

static int charge_call(void *obj)
{
    const charge_args *c = obj;
    int64_t node = 1;
    return dpdo_ledger_charge(c->l, c->ev, 1, &node, 1);
}

static void test_free_race_ledger(void)
{
    dpdo_sampling *s = NULL;
    dpdo_event *ev = NULL;
    CHECK_EQ(dpdo_sampling_create(&s), DPDO_OK);
    CHECK_EQ(dpdo_sampling_set_none(s), DPDO_OK);
    CHECK_EQ(dpdo_event_create(&ev), DPDO_OK);
    CHECK_EQ(dpdo_event_set_gaussian(ev, s, 1.0, 2.0), DPDO_OK);
    int misuse_total = 0;
    for (int t = 0; t < TRIALS; t++) {
        dpdo_ledger *l = NULL;
        CHECK_EQ(dpdo_ledger_create(&l, 3), DPDO_OK);
        charge_args c = {l, ev};
        racer z[2];
        race2(z, charge_call, &c, 50000, DPDO_OK);
        CHECK_EQ(z[0].other + z[1].other, 0);
        misuse_total += z[0].misuse + z[1].misuse;
        /* every accepted charge is in the ledger, every refused one is not */
        CHECK_EQ(dpdo_ledger_charges(l, 1), z[0].ok + z[1].ok);
        dpdo_ledger_destroy(l);
    }
    printf("    free race ledger charge x2: %d of %d calls refused with DPDO_E_MISUSE\n",
           misuse_total, TRIALS * 100000);
    dpdo_event_destroy(ev);
    dpdo_sampling_destroy(s);
}

/* ---- re-entry from a callback on the same thread ------------------------------------------ */

typedef struct reentry {
    dpdo_algorithm *a;
    int calls, step_rc, reset_rc, set_rc, get_rc, save_rc, priv_rc;
    char step_msg[256];
    const char *ckpt;
} reentry;

static int reenter(const dpdo_progress *p, void *user)
{
    (void)p;
    reentry *e = user;
    if (e->calls++) return 0;
    double x[D], eps, del;
    e->step_rc = dpdo_algorithm_step(e->a);
    snprintf(e->step_msg, sizeof e->step_msg, "%s", dpdo_algorithm_errmsg(e->a));
    e->reset_rc = dpdo_algorithm_reset(e->a);
    e->set_rc = dpdo_algorithm_set_int(e->a, DPDO_PARAM_MAX_ROUNDS, 3);
    dpdo_algorithm_destroy(e->a); /* refused: the run goes on */
    e->get_rc = dpdo_algorithm_get_output(e->a, DPDO_NODE_ALL, x, D);
    e->priv_rc = dpdo_algorithm_privacy(e->a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eps, &del, NULL);
    e->save_rc = dpdo_algorithm_save(e->a, e->ckpt, NULL);
    return 0;
}

static void test_callback_reentry(void)
{
    fx f;
    fx_make(&f);
    double xT[D], x[D];
    reference(&f, T, xT);
    run r;
    run_make(&r, &f);
    char path[256];
    h_tmpfile(path, ".ckpt", "", 0);
    reentry e = {.a = r.a, .ckpt = path};
    CHECK_EQ(dpdo_algorithm_set_progress(r.a, reenter, &e, 1, 0), DPDO_OK);
    int64_t steps = 0;
    CHECK_EQ(dpdo_algorithm_run(r.a, 0, &steps), DPDO_DONE);
    CHECK_EQ(steps, T);
    CHECK_EQ(e.step_rc, DPDO_E_MISUSE);
    CHECK_STR_CONTAINS(e.step_msg, "dpdo_algorithm_step: called while dpdo_algorithm_run runs");
    CHECK_EQ(e.reset_rc, DPDO_E_MISUSE);
    CHECK_EQ(e.set_rc, DPDO_E_MISUSE);
    CHECK_EQ(e.get_rc, DPDO_OK);  /* read-only calls are allowed from a callback */
    CHECK_EQ(e.priv_rc, DPDO_OK);
    CHECK_EQ(e.save_rc, DPDO_OK); /* a checkpoint from the progress callback */
    CHECK_EQ(dpdo_algorithm_get_output(r.a, DPDO_NODE_ALL, x, D), DPDO_OK);
    CHECK(memcmp(x, xT, sizeof x) == 0); /* the refused calls changed nothing */
    /* the checkpoint written after round 1 resumes to the same end */
    CHECK_EQ(dpdo_algorithm_set_progress(r.a, NULL, NULL, 1, 0), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_reset(r.a), DPDO_OK);
    /* anti-rollback: the host recorded round 2 as its latest save; the round-1 file is refused */
    dpdo_checkpoint_options co;
    dpdo_checkpoint_options_init(&co, sizeof co);
    co.min_round = 2;
    CHECK_EQ(dpdo_algorithm_load(r.a, path, &co), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(r.a), "stale checkpoint: round 1 is older than min_round 2");
    CHECK_EQ(dpdo_algorithm_round(r.a), 0);
    co.min_round = 1;
    int rc = dpdo_algorithm_load(r.a, path, &co);
    CHECK_MSG(rc == DPDO_OK, "load: %s", dpdo_algorithm_errmsg(r.a));
    CHECK_EQ(dpdo_algorithm_round(r.a), 1);
    CHECK_EQ(dpdo_algorithm_run(r.a, 0, &steps), DPDO_DONE);
    CHECK_EQ(dpdo_algorithm_get_output(r.a, DPDO_NODE_ALL, x, D), DPDO_OK);
    CHECK(memcmp(x, xT, sizeof x) == 0);
    remove(path);
    run_free(&r);
    fx_free(&f);
}

/* anti-rollback of ledgers across restarts: the host keeps (run, sequence) of its latest save */
static void test_ledger_rollback(void)
{
    static const unsigned char key[32] = "ledger-key-0123456789abcdefghij";
    dpdo_sampling *s = NULL;
    dpdo_event *ev = NULL;
    CHECK_EQ(dpdo_sampling_create(&s), DPDO_OK);
    CHECK_EQ(dpdo_sampling_set_none(s), DPDO_OK);
    CHECK_EQ(dpdo_event_create(&ev), DPDO_OK);
    CHECK_EQ(dpdo_event_set_gaussian(ev, s, 1.0, 2.0), DPDO_OK);
    dpdo_ledger *l = NULL;
    CHECK_EQ(dpdo_ledger_create(&l, 2), DPDO_OK);
    uint64_t seq = 0;
    unsigned char rid[16];
    CHECK_EQ(dpdo_ledger_sequence(l, rid, &seq), DPDO_E_STATE); /* no key */
    CHECK_EQ(dpdo_ledger_set_key(l, key, sizeof key), DPDO_OK);
    int64_t node = 0;
    char old[4096], cur[4096];
    int64_t nold = 0, ncur = 0;
    CHECK_EQ(dpdo_ledger_charge(l, ev, 1, &node, 1), DPDO_OK);
    CHECK_EQ(dpdo_ledger_save(l, old, sizeof old, &nold), DPDO_OK);
    CHECK_EQ(dpdo_ledger_charge(l, ev, 3, &node, 1), DPDO_OK);
    CHECK_EQ(dpdo_ledger_save(l, cur, sizeof cur, &ncur), DPDO_OK);
    CHECK_EQ(dpdo_ledger_sequence(l, rid, &seq), DPDO_OK);
    CHECK_EQ(seq, 2);
    dpdo_ledger_destroy(l);
    /* a restart: a fresh ledger would adopt the older file (0.2 behaviour) ... */
    CHECK_EQ(dpdo_ledger_create(&l, 2), DPDO_OK);
    CHECK_EQ(dpdo_ledger_set_key(l, key, sizeof key), DPDO_OK);
    CHECK_EQ(dpdo_ledger_load(l, old, nold), DPDO_OK);
    CHECK_EQ(dpdo_ledger_charges(l, 0), 1);
    dpdo_ledger_destroy(l);
    /* ... unless the host pins what it recorded */
    CHECK_EQ(dpdo_ledger_create(&l, 2), DPDO_OK);
    CHECK_EQ(dpdo_ledger_set_key(l, key, sizeof key), DPDO_OK);
    CHECK_EQ(dpdo_ledger_set_min_sequence(l, rid, seq), DPDO_OK);
    CHECK_EQ(dpdo_ledger_load(l, old, nold), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_ledger_errmsg(l), "stale ledger");
    CHECK_EQ(dpdo_ledger_charges(l, 0), 0);
    CHECK_EQ(dpdo_ledger_load(l, cur, ncur), DPDO_OK);
    CHECK_EQ(dpdo_ledger_charges(l, 0), 4);
    unsigned char other[16] = {1};
    CHECK_EQ(dpdo_ledger_set_min_sequence(l, other, 0), DPDO_OK);
    CHECK_EQ(dpdo_ledger_load(l, cur, ncur), DPDO_E_FORMAT);
    CHECK_STR_CONTAINS(dpdo_ledger_errmsg(l), "foreign ledger");
    dpdo_ledger_destroy(l);
    dpdo_event_destroy(ev);
    dpdo_sampling_destroy(s);
}

int main(void)
{
    RUN(test_forced_overlap);
    RUN(test_free_race_step);
    RUN(test_free_race_ledger);
    RUN(test_callback_reentry);
    RUN(test_ledger_rollback);
    return h_finish();
}
