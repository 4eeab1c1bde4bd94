/* SPDX-License-Identifier: BSD-3-Clause */
/* Golden hashes of reproducible runs of every algorithm type (issue 22, the engine split).
 *
 * For each of the 13 types, a few rounds on a small logistic problem with
 * options.randomness = DPDO_RANDOMNESS_REPRODUCIBLE and a fixed seed, three ways:
 *   one   - one process (the whole state arena, every named state row, the outputs, the ledger's
 *           text, the message counters, round/state/stop, sigma and epsilon);
 *   xp1   - the same run driven through the transport interface by a one-process transport
 *           (every node hosted: the distributed stage runner, its exchange/share/sum calls);
 *   xp2   - two simulated processes (threads of this process, an in-memory transport; remote
 *           nodes where a process does not host), state shared at the end.
 * Each is reduced to a 64-bit FNV-1a hash and compared with the value recorded on the code
 * before engine.c was split (commit da43f79). A refactoring of the engine must keep every
 * reproducible run bit-identical, so every hash must match. A deliberate change of the
 * numerics (a new kernel summation order, another default) changes them: run with
 * DPDO_GOLDEN_PRINT=1 to print the table, check that the change is intended, and paste it. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpdo/dpdo.h"
#include "engine/engine_impl.h"
#include "harness.h"
#include "alg_fixture.h"

enum { N = 4, Q = 20, D = 5, T = 6 };

/* ---- hashing ---------------------------------------------------------------------------------- */
typedef struct { uint64_t h; } fnv;
static void fnv_add(fnv *f, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) f->h = (f->h ^ b[i]) * 0x100000001b3ull;
}
static void fnv_i64(fnv *f, int64_t v) { fnv_add(f, &v, sizeof v); }
static void fnv_f64(fnv *f, double v) { fnv_add(f, &v, sizeof v); }

/* ---- fixture ------------------------------------------------------------------------------------ */
static uint64_t tstate = 0x6a09e667f3bcc909ull;
static double urand(void) { return h_urand(&tstate); }

typedef struct fx {
    double X[N * Q * D], Y[N * Q];
    dpdo_dataset *ds;
    dpdo_shard *sh[N];
    dpdo_loss *loss;
    dpdo_network *net;
    dpdo_regularizer *reg;
} fx;

static void fx_make(fx *f)
{
    memset(f, 0, sizeof *f);
    for (int i = 0; i < N * Q; i++) {
        double nn = 0;
        for (int k = 0; k < D; k++) {
            f->X[i * D + k] = urand() * 2 - 1;
            nn += f->X[i * D + k] * f->X[i * D + k];
        }
        for (int k = 0; k < D; k++) f->X[i * D + k] /= sqrt(nn) + 1e-3;
        f->Y[i] = urand() < 0.5 ? -1 : 1;
    }
    CHECK_EQ(dpdo_dataset_create(&f->ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_dense(f->ds, N * Q, D, f->X, f->Y, DPDO_COPY), DPDO_OK);
    CHECK_EQ(dpdo_loss_create(&f->loss, dpdo_loss_type_find("logistic"), NULL, D), DPDO_OK);
    for (int i = 0; i < N; i++) CHECK_EQ(dpdo_shard_create_range(&f->sh[i], f->ds, (int64_t)i * Q, Q), DPDO_OK);
    CHECK_EQ(dpdo_network_create(&f->net), DPDO_OK);
    CHECK_EQ(dpdo_network_set_complete(f->net, N), DPDO_OK);
    double lam = 0.05;
    CHECK_EQ(dpdo_regularizer_create(&f->reg, dpdo_regularizer_type_find("l2"), NULL, D, &lam, 1), DPDO_OK);
}

static void fx_free(fx *f)
{
    dpdo_regularizer_destroy(f->reg);
    dpdo_network_destroy(f->net);
    for (int i = 0; i < N; i++) dpdo_shard_destroy(f->sh[i]);
    dpdo_loss_destroy(f->loss);
    dpdo_dataset_destroy(f->ds);
}

/* one handle with its own nodes (remote where host_mask says so), ledger, accountant, solver */
typedef struct run {
    dpdo_node *nodes[N];
    dpdo_ledger *led;
    dpdo_accountant *acc;
    dpdo_solver *sol;
    dpdo_algorithm *a;
} run;

static void opts_of(dpdo_algorithm_options *o, int mode)
{
    dpdo_algorithm_options_init(o, sizeof *o);
    o->randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    o->seed = 31;
    o->max_rounds = T;
    o->epsilon = 4.0;
    o->batch = 2;
    o->step_size = 0.5;
    o->noise_mode = mode;
}

/* hosted(i) == 0: node i is remote in this handle */
static int run_make(run *r, fx *f, const char *type, const dpdo_algorithm_options *o, int use_reg, int proc)
{
    memset(r, 0, sizeof *r);
    for (int i = 0; i < N; i++) {
        int here = proc < 0 || (i < 2) == (proc == 0);
        CHECK_EQ(here ? dpdo_node_create(&r->nodes[i], f->sh[i], f->loss, 1.0)
                      : dpdo_node_create_remote(&r->nodes[i], f->loss, Q, 1.0),
                 DPDO_OK);
    }
    CHECK_EQ(dpdo_ledger_create(&r->led, N), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&r->acc, dpdo_accountant_type_find("rdp"), NULL, r->led, NULL), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_create(&r->a, dpdo_algorithm_type_find(type)), DPDO_OK);
    int rc = dpdo_algorithm_setup(r->a, r->nodes, N, f->net, use_reg ? f->reg : NULL, r->acc, o);
    if (rc) return rc;
    tfx_alg_apply(r->a, type, o->noise_mode != DPDO_NOISE_NONE, D, &r->sol);
    return DPDO_OK;
}

static void run_free(run *r)
{
    dpdo_algorithm_destroy(r->a);
    dpdo_solver_destroy(r->sol);
    dpdo_accountant_destroy(r->acc);
    dpdo_ledger_destroy(r->led);
    for (int i = 0; i < N; i++) dpdo_node_destroy(r->nodes[i]);
    memset(r, 0, sizeof *r);
}

/* everything observable after a run; arena: also the raw state arena (one process only) */
static void hash_run(fnv *h, run *r, int arena)
{
    dpdo_algorithm *a = r->a;
    dpdo__eng *e = dpdo__algorithm_eng(a);
    /* the arena as the copying commits leave it (DO-ADP swaps x with x' instead of copying:
     * put back, the bytes are exactly those of the copy; engine_impl.h, vt canonical) */
    if (arena && e->vt->canonical) e->vt->canonical(e, e->priv, 1);
    if (arena) fnv_add(h, e->arena, e->arena_bytes);
    double x[D];
    for (int b = 0; b < e->nblk; b++) {
        if (!e->blk[b].name) continue;
        for (int64_t i = 0; i < N; i++)
            if (dpdo_algorithm_get_state(a, e->blk[b].name, i, x, D) == DPDO_OK) fnv_add(h, x, sizeof x);
    }
    for (int64_t i = 0; i < N; i++) {
        CHECK_EQ(dpdo_algorithm_get_output(a, i, x, D), DPDO_OK);
        fnv_add(h, x, sizeof x);
    }
    CHECK_EQ(dpdo_algorithm_get_output(a, DPDO_NODE_ALL, x, D), DPDO_OK);
    fnv_add(h, x, sizeof x);
    static char led[1 << 15];
    int64_t len = 0;
    CHECK_EQ(dpdo_ledger_save(r->led, led, sizeof led, &len), DPDO_OK);
    fnv_add(h, led, (size_t)len);
    fnv_i64(h, dpdo_algorithm_round(a));
    fnv_i64(h, dpdo_algorithm_state(a));
    fnv_i64(h, dpdo_algorithm_stop_reason(a));
    for (int64_t i = -2; i < N; i++) { /* DPDO_NODE_ALL, the coordinator, each node */
        int64_t m = 0, s = 0, by = 0;
        int64_t node = i == -2 ? DPDO_NODE_ALL : i == -1 ? DPDO_NODE_COORDINATOR : i;
        CHECK_EQ(dpdo_algorithm_comm(a, node, &m, &s, &by), DPDO_OK);
        fnv_i64(h, m), fnv_i64(h, s), fnv_i64(h, by);
        fnv_i64(h, dpdo_ledger_charges(r->led, i < 0 ? 0 : i));
    }
    int32_t act[N];
    CHECK_EQ(dpdo_algorithm_get_active(a, act, N), DPDO_OK);
    fnv_add(h, act, sizeof act);
    double sigma = NAN, eps = NAN, del = NAN;
    (void)dpdo_algorithm_get_double(a, DPDO_PARAM_SIGMA, &sigma);
    fnv_f64(h, sigma);
    int rc = dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eps, &del, NULL);
    fnv_i64(h, rc);
    if (!rc) fnv_f64(h, eps), fnv_f64(h, del);
    /* not the privacy notes: text that may gain caveats without any number changing */
}

/* ---- transports: one process hosting everything, and two simulated processes -------------------- */
static int t1_layout(void *u, int64_t n, int64_t *proc_of, int64_t *self)
{
    for (int64_t i = 0; i <= n; i++) proc_of[i] = 0;
    *self = 0;
    return 0;
}
static int t1_exchange(void *u, int status, const dpdo_message *msg, int64_t nmsg, int32_t *any_failed)
{
    *any_failed = status != 0;
    return 0;
}
static int t1_agree(void *u, int *status, int64_t *node, char *msg, size_t len) { return 0; }
static int t1_share(void *u, void *base, int64_t row, int64_t n) { return 0; }
static int t1_sum(void *u, int64_t *v, int64_t count) { return 0; }
static int t1_bcast(void *u, int64_t from, void *buf, int64_t bytes) { return 0; }
static int t1_send(void *u, int64_t peer, const void *buf, int64_t bytes) { return DPDO_E_UNSUPPORTED; }
static int t1_recv(void *u, int64_t peer, void *buf, int64_t bytes) { return DPDO_E_UNSUPPORTED; }
static const char *t1_err(void *u) { return "one-process transport"; }
static const dpdo_transport_type ONE = {sizeof(dpdo_transport_type), "one", t1_layout, t1_exchange, t1_agree,
                                        t1_share, t1_sum, t1_bcast, t1_send, t1_recv, t1_err};

/* two "processes" as threads in lock step: process 0 hosts nodes 0, 1 and the coordinator,
 * process 1 nodes 2, 3. A collective publishes each thread's arguments, waits, lets thread 0
 * move the bytes, and waits again. */
typedef struct sim {
    pthread_barrier_t bar;
    const dpdo_message *msg[2];
    int status[2], anyf;
    int64_t node[2];
    char *text[2];
    void *ptr[2];
    int64_t *vals[2];
} sim;
typedef struct proc {
    sim *s;
    int id;
} proc;
static int host(int64_t node) { return node < 0 || node >= N ? 0 : node >= 2; }
static void sync2(sim *s) { pthread_barrier_wait(&s->bar); }

static int s_layout(void *u, int64_t n, int64_t *proc_of, int64_t *self)
{
    for (int64_t i = 0; i < n; i++) proc_of[i] = host(i);
    proc_of[n] = 0;
    *self = ((proc *)u)->id;
    return 0;
}
static int s_exchange(void *u, int status, const dpdo_message *msg, int64_t nmsg, int32_t *any_failed)
{
    proc *p = u;
    sim *s = p->s;
    s->msg[p->id] = msg, s->status[p->id] = status;
    sync2(s);
    if (p->id == 0) {
        s->anyf = s->status[0] || s->status[1];
        for (int64_t k = 0; k < nmsg && !s->anyf; k++) {
            int from = host(msg[k].src);
            for (int64_t j = 0; j < msg[k].ndst; j++) {
                int to = host(msg[k].dst[j]);
                if (to == from) continue;
                const dpdo_message *a = &s->msg[from][k], *b = &s->msg[to][k];
                for (int32_t g = 0; g < a->nseg; g++) memcpy(b->seg[g].data, a->seg[g].data, (size_t)a->seg[g].bytes);
            }
        }
    }
    sync2(s);
    *any_failed = s->anyf;
    sync2(s);
    return 0;
}
static int s_agree(void *u, int *status, int64_t *node, char *msg, size_t len)
{
    proc *p = u;
    sim *s = p->s;
    s->status[p->id] = *status, s->node[p->id] = *node, s->text[p->id] = msg;
    sync2(s);
    int who = -1;
    for (int r = 0; r < 2; r++)
        if (s->status[r] && (who < 0 || s->node[r] < s->node[who])) who = r;
    int st = who < 0 ? 0 : s->status[who];
    int64_t nd = who < 0 ? -1 : s->node[who];
    if (who >= 0 && who != p->id) memcpy(msg, s->text[who], len);
    sync2(s);
    *status = st, *node = nd;
    return 0;
}
static int s_share(void *u, void *base, int64_t row, int64_t n)
{
    proc *p = u;
    sim *s = p->s;
    s->ptr[p->id] = base;
    sync2(s);
    if (p->id == 0)
        for (int64_t i = 0; i < n; i++) {
            int h = host(i);
            memcpy((char *)s->ptr[1 - h] + i * row, (char *)s->ptr[h] + i * row, (size_t)row);
        }
    sync2(s);
    return 0;
}
static int s_sum(void *u, int64_t *v, int64_t count)
{
    proc *p = u;
    sim *s = p->s;
    s->vals[p->id] = v;
    sync2(s);
    if (p->id == 0)
        for (int64_t k = 0; k < count; k++) s->vals[0][k] = s->vals[1][k] = s->vals[0][k] + s->vals[1][k];
    sync2(s);
    return 0;
}
static int s_bcast(void *u, int64_t from, void *buf, int64_t bytes)
{
    proc *p = u;
    sim *s = p->s;
    s->ptr[p->id] = buf;
    sync2(s);
    if (p->id == 0) memcpy(s->ptr[1 - from], s->ptr[from], (size_t)bytes);
    sync2(s);
    return 0;
}
/* with two processes a send and its receive always meet */
static int s_send(void *u, int64_t peer, const void *buf, int64_t bytes)
{
    proc *p = u;
    p->s->ptr[p->id] = (void *)buf;
    sync2(p->s);
    sync2(p->s);
    return 0;
}
static int s_recv(void *u, int64_t peer, void *buf, int64_t bytes)
{
    proc *p = u;
    sync2(p->s);
    memcpy(buf, p->s->ptr[peer], (size_t)bytes);
    sync2(p->s);
    return 0;
}
static const char *s_err(void *u) { return "simulated"; }
static const dpdo_transport_type SIM = {sizeof(dpdo_transport_type), "sim2", s_layout, s_exchange, s_agree,
                                        s_share, s_sum, s_bcast, s_send, s_recv, s_err};

typedef struct job {
    run *r;
    proc pr;
    int rc_attach, rc_last, rc_share;
    int64_t steps;
} job;

static void *worker(void *arg)
{
    job *j = arg;
    j->rc_attach = dpdo_algorithm_set_transport(j->r->a, &SIM, &j->pr);
    j->rc_last = DPDO_OK;
    while (!j->rc_attach && (j->rc_last = dpdo_algorithm_step(j->r->a)) == DPDO_ROUND) j->steps++;
    j->rc_share = j->rc_attach ? -1 : dpdo_algorithm_share_state(j->r->a);
    return NULL;
}

/* ---- the golden table ----------------------------------------------------------------------------- */
typedef struct golden {
    const char *type;
    uint64_t one, xp1, xp2; /* 0: the mode does not apply (not distributable) */
} golden;

/* recorded on da43f79 (unsplit engine.c) with DPDO_GOLDEN_PRINT=1 (after the defaults change of
 * 5d04317, as main had it); re-recorded by issue 19 (perf2)
 * for its one deliberate change of the numerics: the built-in logistic loss now uses the in-house
 * branch-free exp/log1p (lib/data/vmath_impl.h, identical on every CPU) and, for rows of d <= 16
 * (this fixture: d = 5), the batch kernel's four interleaved gradient sums. With that change
 * reverted (libm exp/log1p, the per-sample path), every hash of main's table (f73c989) still
 * matched (threads plumbing, workspaces, the branch-free soft-threshold and clamp,
 * -fvect-cost-model=cheap change no bit).
 * DP-DDA's two one-process hashes were re-recorded by issue 19 (dda3) for a change of its round
 * scratch only: combine() no longer stores x_new for the built-in coordinate-wise maps (commit()
 * maps z_new again), so the raw arena these hashes include differs in that scratch row; the
 * observable hashes (the two-process column) are unchanged, and with the old x_new row written
 * back into the scratch the old hashes (0xcb4773aa3ec22257, 0xb1727f21763f89da) matched.
 * Re-recorded again by issue 19 (fed3): full-batch gradients of the built-in losses on rows of
 * d <= 16 are summed in 8 lanes (lane k: the samples h = k mod 8; lib/data/kernels_l8.c), which
 * changes the six full-batch types fed-plt, fedpd, fedlin, tamuna, led and 5gcs; every other row
 * is unchanged, and with that path compiled out (make CPPFLAGS=-DDPDO__NO_LOGIT8) the previous
 * table (fed-plt 0x2c0a04625f2fea21, fedpd 0x5e6898f4e24f958f, fedlin 0x785e8f756541bf20, tamuna
 * 0x7d82d4a45049e813, led 0xa1dfdf7b8d8601d3, 5gcs 0xab8bf43702c22a16 for one process, and the
 * one-process transport and two-process columns) matched in full.
 * Re-recorded again by issue 19 (fed4): the same 8-lane kernel now uses fused multiply-adds
 * (correctly rounded on every path: vfmadd on AVX2+FMA/AVX-512F, C99 fma() on scalar/SSE2): the
 * margins (fma(x_hj, w_j, m), when max row norm x max |w_j| <= 2^1015), its own exp
 * (lib/data/kernels_l8_exp.h: Cody-Waite with fma, degree-11 minimax polynomial with fma instead
 * of vmath_impl.h's degree-13 Taylor without) and the lane sums (fma(a_h, x_hj, G)). That
 * changes the same six full-batch types and nothing else; built with the switch that restores
 * the FMA-free arithmetic (make CPPFLAGS=-DDPDO__L8_NO_FMA) the previous table (fed-plt
 * 0x0286186090e74a11, fedpd 0xb3046d04599e8e54, fedlin 0xe4aef06d69564472, tamuna
 * 0xac87b78cbfcbcc10, led 0x10891af6ec124a4a, 5gcs 0xefde4ab96d05cb0d for one process, two
 * processes 0x0ed572c7b25f7e4d, 0xbb47bcac86bc560f, 0x8e17cf5e81f8e59b, 0x7c13f115c199ff57,
 * 0x0161944cf1e2719f, 0x5df6235f25c36d63) matched in full.
 * Re-recorded again by issue 19 (fed5): the kernel's exp is now table-driven (16 entries
 * 2^(j/16), degree-6 polynomial on |r| <= ln2/32, 10 multiplies instead of 15;
 * lib/data/kernels_l8_exp.h), clamps its argument at -708.39 instead of returning 0 below it, and
 * the lanes sum c_h x_hj with the scale applied once to each lane tree (fma(c_h, x_hj, G), then
 * scale * tree). That changes the same six full-batch types and nothing else. The other changes
 * of fed5 keep the bits: with the previous exp and lane sums put back, the new layout (blocks of
 * 32 samples, rows stored as -y_h x_h when every label is +-1, the lane tree in registers) gave
 * the previous hashes (fed-plt 0x6920444c19cd40a2, fedpd 0xb64a31c052776908, fedlin
 * 0xe2f6ed45c9f579a6, tamuna 0xe2f435537c554694, led 0x0f920a3cdc24af07, 5gcs
 * 0xa6d8518d73242131; two processes 0x721220bd8cdbf268, 0x402f56620e51ed8b, 0x59383e0062e04316,
 * 0xa147ffe1c09c6d9e, 0x6795844c59d31666, 0x689fc049115d9408) in full, and built with
 * -DDPDO__L8_NO_FMA every hash of the fed4 paragraph above still matches.
 * dp-wor-sgd's one-process hashes (which include the engine's arena) re-recorded by issue 19
 * (wor3), from 0xafd033f135897272: with a fixed policy (this fixture's) the step no longer
 * evaluates the losses that only the DQN or a user policy reads, so the policy-state scratch in the arena stays unwritten. No number changed: with that
 * skip disabled every hash matched (the fused long-row logistic kernel and the row prefetch
 * included), and the two-process hash, which has no arena, is the same. */
static const golden GOLD[] = {
    {"dp-dda", 0xb1cd2599b42b523dull, 0xb1cd2599b42b523dull, 0x28a62835ef69d50cull},
    {"dp-dda-baseline", 0x9e6358430ce9af5cull, 0x9e6358430ce9af5cull, 0x987bab3a65c89af3ull},
    {"fed-plt", 0x3b889174a00c195full, 0x3b889174a00c195full, 0xf1101a2803f5e089ull},
    {"fedpd", 0xce386ba58e7a8ac4ull, 0xce386ba58e7a8ac4ull, 0x721662bccd9d0bc8ull},
    {"fedlin", 0x23a8356f23e0c595ull, 0x23a8356f23e0c595ull, 0x1e5b3a6d9fae79e6ull},
    {"tamuna", 0xc32e0fcf7a062b5aull, 0xc32e0fcf7a062b5aull, 0xbda849bfa26f7569ull},
    {"led", 0xdb12774da091876bull, 0xdb12774da091876bull, 0x6158005192f1935cull},
    {"5gcs", 0x3a04598092036babull, 0x3a04598092036babull, 0x210cc01e767ef890ull},
    {"dp-wor-sgd", 0xc7bddc402ed9c153ull, 0xc7bddc402ed9c153ull, 0x818638edeed87c75ull},
    {"dp-sgd-wr", 0xdcd5f659dec8b7bcull, 0xdcd5f659dec8b7bcull, 0xa6a99eb3be0e6f20ull},
    {"do-adp", 0x658d81c777060a3eull, 0x658d81c777060a3eull, 0x0f2421a740eb6514ull},
    {"dpdo", 0x18993108a97d2865ull, 0x18993108a97d2865ull, 0xb8a2b62730393b01ull},
    {"cpgt", 0x51bebe66c5f22f57ull, 0x51bebe66c5f22f57ull, 0xec4af45bc06cc3dbull},
};

static int print_mode;

/* the table above, or the hashes a type records in its own fixture (dpdo__fixture.golden) */
static const golden *gold_of(const char *type)
{
    for (size_t k = 0; k < sizeof GOLD / sizeof GOLD[0]; k++)
        if (strcmp(GOLD[k].type, type) == 0) return &GOLD[k];
    static golden own;
    const dpdo__fixture *tf = tfx_alg(type);
    if (!tf->golden[0]) return NULL;
    own = (golden){type, tf->golden[0], tf->golden[1], tf->golden[2]};
    return &own;
}

/* the first of (rigorous noise, l2), (no noise, l2), (no noise, no regularizer) the type accepts */
static int pick_config(fx *f, const char *type, dpdo_algorithm_options *o, int *use_reg)
{
    for (int c = 0; c < 3; c++) {
        opts_of(o, c == 0 ? DPDO_NOISE_RIGOROUS : DPDO_NOISE_NONE);
        *use_reg = c < 2;
        run r;
        int rc = run_make(&r, f, type, o, *use_reg, -1);
        if (!rc) rc = dpdo_algorithm_prepare(r.a);
        run_free(&r);
        if (!rc) return c;
    }
    return -1;
}

static void golden_one(fx *f, const char *type)
{
    dpdo_algorithm_options o;
    int use_reg;
    int cfg = pick_config(f, type, &o, &use_reg);
    CHECK_MSG(cfg >= 0, "%s: no configuration runs", type);
    if (cfg < 0) return;
    uint64_t got[3] = {0, 0, 0};
    /* one process */
    run r;
    CHECK_EQ(run_make(&r, f, type, &o, use_reg, -1), DPDO_OK);
    int rc = dpdo_algorithm_run(r.a, 0, NULL);
    CHECK_MSG(rc == DPDO_DONE, "%s: run: %d %s", type, rc, dpdo_algorithm_errmsg(r.a));
    CHECK_MSG(dpdo_algorithm_round(r.a) >= 2, "%s: only %lld rounds", type, (long long)dpdo_algorithm_round(r.a));
    fnv h = {0xcbf29ce484222325ull};
    hash_run(&h, &r, 1);
    got[0] = h.h;
    int distributable = dpdo__algorithm_eng(r.a)->vt->distributable;
    run_free(&r);
    if (distributable) {
        /* one process through the transport interface */
        CHECK_EQ(run_make(&r, f, type, &o, use_reg, -1), DPDO_OK);
        rc = dpdo_algorithm_set_transport(r.a, &ONE, NULL);
        CHECK_MSG(rc == DPDO_OK, "%s: set_transport: %s", type, dpdo_algorithm_errmsg(r.a));
        rc = dpdo_algorithm_run(r.a, 0, NULL);
        CHECK_MSG(rc == DPDO_DONE, "%s: xp1 run: %d %s", type, rc, dpdo_algorithm_errmsg(r.a));
        CHECK_EQ(dpdo_algorithm_share_state(r.a), DPDO_OK);
        h.h = 0xcbf29ce484222325ull;
        hash_run(&h, &r, 1);
        got[1] = h.h;
        run_free(&r);
        /* two simulated processes: hash process 0's view (process 1's must be the same) */
        static sim s;
        memset(&s, 0, sizeof s);
        pthread_barrier_init(&s.bar, NULL, 2);
        run rr[2];
        job jb[2];
        pthread_t th[2];
        for (int p = 0; p < 2; p++) {
            CHECK_EQ(run_make(&rr[p], f, type, &o, use_reg, p), DPDO_OK);
            jb[p] = (job){.r = &rr[p], .pr = {&s, p}};
        }
        for (int p = 0; p < 2; p++) CHECK_EQ(pthread_create(&th[p], NULL, worker, &jb[p]), 0);
        for (int p = 0; p < 2; p++) pthread_join(th[p], NULL);
        uint64_t hp[2];
        for (int p = 0; p < 2; p++) {
            CHECK_MSG(jb[p].rc_attach == DPDO_OK && jb[p].rc_last == DPDO_DONE && jb[p].rc_share == DPDO_OK,
                      "%s: process %d: attach %d, last %d, share %d: %s", type, p, jb[p].rc_attach, jb[p].rc_last,
                      jb[p].rc_share, dpdo_algorithm_errmsg(rr[p].a));
            h.h = 0xcbf29ce484222325ull;
            fnv_i64(&h, jb[p].steps);
            hash_run(&h, &rr[p], 0);
            hp[p] = h.h;
        }
        /* the processes' notes differ (which nodes are hosted without a key), the rest must not */
        got[2] = hp[0];
        pthread_barrier_destroy(&s.bar);
        for (int p = 0; p < 2; p++) run_free(&rr[p]);
    }
    if (print_mode) {
        printf("    {\"%s\", 0x%016llxull, 0x%016llxull, 0x%016llxull},\n", type, (unsigned long long)got[0],
               (unsigned long long)got[1], (unsigned long long)got[2]);
        return;
    }
    const golden *g = gold_of(type);
    CHECK_MSG(g != NULL, "%s: no golden entry", type);
    if (!g) return;
    CHECK_MSG(got[0] == g->one, "%s: one-process run hash 0x%016llx, golden 0x%016llx", type,
              (unsigned long long)got[0], (unsigned long long)g->one);
    CHECK_MSG(got[1] == g->xp1, "%s: one-process transport run hash 0x%016llx, golden 0x%016llx", type,
              (unsigned long long)got[1], (unsigned long long)g->xp1);
    CHECK_MSG(got[2] == g->xp2, "%s: two-process run hash 0x%016llx, golden 0x%016llx", type,
              (unsigned long long)got[2], (unsigned long long)g->xp2);
}

static void golden_all_types(void)
{
    fx f;
    fx_make(&f);
    int k = 0;
    for (const dpdo_algorithm_type *t = dpdo_algorithm_type_next(NULL); t; t = dpdo_algorithm_type_next(t), k++)
        golden_one(&f, dpdo_algorithm_type_name(t));
    CHECK(k >= 13); /* every registered type */
    fx_free(&f);
}

int main(void)
{
    print_mode = getenv("DPDO_GOLDEN_PRINT") != NULL;
    RUN(golden_all_types);
    return h_finish();
}
