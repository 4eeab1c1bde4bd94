/* SPDX-License-Identifier: BSD-3-Clause */
/* Distributed runs in one process, without MPI: remote nodes, per-node
 * secrets, and the transport interface driven by an in-memory transport of
 * P simulated processes that run in lock step (each "process" is a separate
 * algorithm handle; the transport moves bytes between their states).
 * The MPI tests (tests/mpi/test_mpi.c, `make check-mpi`) cover real processes.
 *  - remote nodes: sample count, dimension, evaluation refused with E_STATE;
 *  - secrets: a node's secret changes its noise and sample choice but not the
 *    public randomness (active sets); the same secrets reproduce a run;
 *    set_node_secret's bad input;
 *  - set_transport's bad input (missing callbacks, small struct_size, a
 *    layout that breaks the node blocks, not READY);
 *  - a simulated 2-process DP-DDA run (two threads, an in-memory transport)
 *    through the transport interface is bit-identical to the one-process
 *    run, ledger and counters included (the MPI test's check without MPI),
 *    and a transport error fails the round on both with its message. */
#include <math.h>
#include <pthread.h>
#include <string.h>
#include "dpdo/dpdo.h"
#include "core/core_impl.h"
#include "harness.h"

#define N 6
#define D 8

typedef struct fixture {
    dpdo_dataset *ds;
    dpdo_shard *sh[N];
    dpdo_loss *loss;
    dpdo_regularizer *reg;
    dpdo_network *net;
} fixture;

static void fx_make(fixture *f)
{
    memset(f, 0, sizeof *f);
    dpdo_generate_options g;
    dpdo_generate_options_init(&g, sizeof g);
    g.n = 40 * N, g.d = D, g.seed = 5;
    int64_t sizes[N];
    for (int i = 0; i < N; i++) sizes[i] = 40;
    CHECK_EQ(dpdo_dataset_create(&f->ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_generate(f->ds, "epsilon-like", &g), DPDO_OK);
    CHECK_EQ(dpdo_dataset_partition(f->ds, N, sizes, 1, f->sh), DPDO_OK);
    CHECK_EQ(dpdo_loss_create(&f->loss, dpdo_loss_type_find("logistic"), NULL, D), DPDO_OK);
    double lam = 0.1;
    CHECK_EQ(dpdo_regularizer_create(&f->reg, dpdo_regularizer_type_find("l2"), NULL, D, &lam, 1), DPDO_OK);
    CHECK_EQ(dpdo_network_create(&f->net), DPDO_OK);
    CHECK_EQ(dpdo_network_set_ring(f->net, N), DPDO_OK);
}

static void fx_free(fixture *f)
{
    for (int i = 0; i < N; i++) dpdo_shard_destroy(f->sh[i]);
    dpdo_dataset_destroy(f->ds);
    dpdo_loss_destroy(f->loss);
    dpdo_regularizer_destroy(f->reg);
    dpdo_network_destroy(f->net);
}

static void remote_nodes(void)
{
    fixture f;
    fx_make(&f);
    dpdo_node *r = NULL;
    CHECK_EQ(dpdo_node_create_remote(&r, f.loss, 0, 1.0), DPDO_E_INVAL);
    CHECK(r == NULL);
    CHECK_STR_CONTAINS(dpdo_loss_errmsg(f.loss), "samples >= 1");
    CHECK_EQ(dpdo_node_create_remote(&r, f.loss, 10, NAN), DPDO_E_INVAL);
    CHECK_EQ(dpdo_node_create_remote(&r, NULL, 10, 1.0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_node_create_remote(NULL, f.loss, 10, 1.0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_node_create_remote(&r, f.loss, 37, 2.0), DPDO_OK);
    CHECK_EQ(dpdo_node_samples(r), 37);
    CHECK_EQ(dpdo_node_dim(r), D);
    CHECK_EQ(dpdo_node_is_remote(r), 1);
    CHECK(dpdo_node_shard(r) == NULL);
    double x[D] = {0}, v = 0, L = 0;
    CHECK_EQ(dpdo_node_eval(r, x, D, NULL, 0, 0, &v, NULL, NULL), DPDO_E_STATE);
    CHECK_STR_CONTAINS(dpdo_node_errmsg(r), "remote");
    CHECK_EQ(dpdo_node_lipschitz(r, 1.0, &L), DPDO_E_STATE);
    dpdo_node *local = NULL;
    CHECK_EQ(dpdo_node_create(&local, f.sh[0], f.loss, 1.0), DPDO_OK);
    CHECK_EQ(dpdo_node_is_remote(local), 0);
    CHECK_EQ(dpdo_node_is_remote(NULL), 0);
    /* the objective helpers need every node's data */
    dpdo_node *nodes[N];
    for (int i = 0; i < N; i++) nodes[i] = i == 0 ? local : NULL;
    for (int i = 1; i < N; i++) CHECK_EQ(dpdo_node_create_remote(&nodes[i], f.loss, 40, 1.0), DPDO_OK);
    dpdo_algorithm *a = NULL;
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = DPDO_NOISE_NONE;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(a, nodes, N, f.net, f.reg, NULL, &o), DPDO_OK);
    double F = 0;
    CHECK_EQ(dpdo_algorithm_objective(a, DPDO_POINT_ITERATE, DPDO_NODE_ALL, &F), DPDO_E_UNSUPPORTED);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "remote");
    CHECK_EQ(dpdo_algorithm_hosts(a, 0), 1); /* without a transport this process computes everything */
    CHECK_EQ(dpdo_algorithm_hosts(a, N), 0);
    CHECK_EQ(dpdo_algorithm_share_state(a), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_share_state(NULL), DPDO_E_INVAL);
    dpdo_algorithm_destroy(a);
    for (int i = 0; i < N; i++) dpdo_node_destroy(nodes[i]);
    dpdo_node_destroy(r);
    fx_free(&f);
}

/* One DP-DDA run; secrets: 0 none, 1 node 2's secret = 11, 2 node 2's secret = 12. Writes the
 * final iterates and the active flags of every round. */
static void dda_run(fixture *f, int secrets, double *x, int32_t *act, int rounds)
{
    dpdo_node *nodes[N];
    for (int i = 0; i < N; i++) CHECK_EQ(dpdo_node_create(&nodes[i], f->sh[i], f->loss, 1.0), DPDO_OK);
    dpdo_ledger *led = NULL;
    dpdo_accountant *acc = NULL;
    CHECK_EQ(dpdo_ledger_create(&led, N), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&acc, dpdo_accountant_type_find("rdp"), NULL, led, NULL), DPDO_OK);
    dpdo_algorithm *a = NULL;
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = DPDO_NOISE_FIXED;
    o.sigma = 0.5;
    o.max_rounds = rounds;
    o.seed = 4;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(a, nodes, N, f->net, f->reg, acc, &o), DPDO_OK);
    if (secrets) CHECK_EQ(dpdo_algorithm_set_node_secret(a, 2, secrets == 1 ? 11 : 12), DPDO_OK);
    for (int t = 0; t < rounds; t++) {
        CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
        CHECK_EQ(dpdo_algorithm_get_active(a, act + t * N, N), DPDO_OK);
    }
    CHECK_EQ(dpdo_algorithm_get_state(a, "x", 2, x, D), DPDO_OK);
    dpdo_algorithm_destroy(a);
    dpdo_accountant_destroy(acc);
    dpdo_ledger_destroy(led);
    for (int i = 0; i < N; i++) dpdo_node_destroy(nodes[i]);
}

static void secrets(void)
{
    fixture f;
    fx_make(&f);
    enum { R = 30 };
    double x0[D], x1[D], x1b[D], x2[D];
    static int32_t a0[R * N], a1[R * N], a1b[R * N], a2[R * N];
    dda_run(&f, 0, x0, a0, R);
    dda_run(&f, 1, x1, a1, R);
    dda_run(&f, 1, x1b, a1b, R);
    dda_run(&f, 2, x2, a2, R);
    CHECK(memcmp(x1, x1b, sizeof x1) == 0);          /* same secret: same bytes */
    CHECK(memcmp(x0, x1, sizeof x0) != 0);           /* the secret changes node 2's noise */
    CHECK(memcmp(x1, x2, sizeof x1) != 0);           /* and different secrets differ */
    CHECK(memcmp(a0, a1, sizeof a0) == 0);           /* the active sets are public: unchanged */
    CHECK(memcmp(a0, a2, sizeof a0) == 0);
    int ran = 0;
    for (int k = 0; k < R * N; k++) ran += a0[k];
    CHECK(ran > 0);
    /* bad input */
    CHECK_EQ(dpdo_algorithm_set_node_secret(NULL, 0, 1), DPDO_E_INVAL);
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_node_secret(a, 0, 1), DPDO_E_STATE); /* EMPTY */
    dpdo_node *nodes[N];
    for (int i = 0; i < N; i++) CHECK_EQ(dpdo_node_create(&nodes[i], f.sh[i], f.loss, 1.0), DPDO_OK);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = DPDO_NOISE_NONE;
    o.max_rounds = 3;
    CHECK_EQ(dpdo_algorithm_setup(a, nodes, N, f.net, f.reg, NULL, &o), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_node_secret(a, -1, 1), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_set_node_secret(a, N, 1), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "node 6");
    CHECK_EQ(dpdo_algorithm_step(a), DPDO_ROUND);
    CHECK_EQ(dpdo_algorithm_set_node_secret(a, 0, 1), DPDO_E_STATE); /* after round 0 */
    CHECK_EQ(dpdo_algorithm_reset(a), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_node_secret(a, 0, 1), DPDO_OK);
    /* out of memory on the first secret */
    dpdo_algorithm *b = NULL;
    CHECK_EQ(dpdo_algorithm_create(&b, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(b, nodes, N, f.net, f.reg, NULL, &o), DPDO_OK);
    dpdo__fault_arm(0);
    int rc = dpdo_algorithm_set_node_secret(b, 0, 1);
    dpdo__fault_arm(-1);
    CHECK_EQ(rc, DPDO_E_NOMEM);
    CHECK_EQ(dpdo_algorithm_set_node_secret(b, 0, 1), DPDO_OK);
    dpdo_algorithm_destroy(b);
    dpdo_algorithm_destroy(a);
    for (int i = 0; i < N; i++) dpdo_node_destroy(nodes[i]);
    fx_free(&f);
}

/* ---- a simulated transport: P "processes" as threads of this process --------------------------
 * Each thread owns an algorithm handle with its own nodes (remote where it does not host). A
 * collective records each thread's arguments, waits at a barrier, lets thread 0 move the bytes,
 * and waits again. `fail_at`: the exchange call with that number fails on every thread
 * (DPDO_E_IO), after which every call fails at once, like a broken network. */
#define P 2
typedef struct sim sim;
typedef struct proc {
    sim *s;
    int id;
} proc;
struct sim {
    proc pr[P];
    int64_t first[P + 1];
    pthread_barrier_t bar;
    int fail_at, calls, broken;
    const dpdo_message *msg[P];
    int status[P];
    int64_t node[P];
    char *text[P];
    void *base[P];
    int64_t *vals[P];
    void *buf[P];
    int anyf;
    char err[128];
};

static int host(const sim *s, int64_t node)
{
    if (node < 0) return 0;
    for (int r = 0; r < P; r++)
        if (node < s->first[r + 1]) return r;
    return -1;
}

static int s_layout(void *u, int64_t n, int64_t *proc_of, int64_t *self)
{
    proc *p = u;
    for (int64_t i = 0; i < n; i++) proc_of[i] = host(p->s, i);
    proc_of[n] = 0;
    *self = p->id;
    return 0;
}

static void sync2(sim *s) { pthread_barrier_wait(&s->bar); }

static int s_exchange(void *u, int status, const dpdo_message *msg, int64_t nmsg, int32_t *any_failed)
{
    proc *p = u;
    sim *s = p->s;
    if (s->broken) return DPDO_E_IO;
    s->msg[p->id] = msg, s->status[p->id] = status;
    sync2(s);
    if (p->id == 0) {
        s->anyf = 0;
        for (int r = 0; r < P; r++) s->anyf |= s->status[r] != 0;
        if (s->fail_at > 0 && ++s->calls == s->fail_at) {
            snprintf(s->err, sizeof s->err, "simulated link failure");
            s->anyf = -1;
        }
        for (int64_t k = 0; k < nmsg && !s->anyf; k++) { /* the same list on every thread */
            int from = host(s, msg[k].src);
            for (int64_t j = 0; j < msg[k].ndst; j++) {
                int to = host(s, msg[k].dst[j]);
                if (to == from) continue;
                const dpdo_message *a = &s->msg[from][k], *b = &s->msg[to][k];
                for (int32_t g = 0; g < a->nseg; g++) memcpy(b->seg[g].data, a->seg[g].data, (size_t)a->seg[g].bytes);
            }
        }
    }
    sync2(s);
    int f = s->anyf;
    sync2(s); /* everyone has read anyf before thread 0 may change it again */
    if (f < 0) {
        s->broken = 1;
        return DPDO_E_IO;
    }
    *any_failed = f != 0;
    return 0;
}

static int s_agree(void *u, int *status, int64_t *node, char *msg, size_t len)
{
    proc *p = u;
    sim *s = p->s;
    if (s->broken) return DPDO_E_IO;
    s->status[p->id] = *status, s->node[p->id] = *node, s->text[p->id] = msg;
    sync2(s);
    int who = -1;
    for (int r = 0; r < P; r++)
        if (s->status[r] && (who < 0 || s->node[r] < s->node[who])) who = r;
    int st = who < 0 ? 0 : s->status[who];
    int64_t nd = who < 0 ? -1 : s->node[who];
    if (who >= 0 && who != p->id) memcpy(msg, s->text[who], len);
    sync2(s);
    *status = st;
    *node = nd;
    return 0;
}

static int s_share(void *u, void *base, int64_t row, int64_t n)
{
    proc *p = u;
    sim *s = p->s;
    if (s->broken) return DPDO_E_IO;
    s->base[p->id] = base;
    sync2(s);
    if (p->id == 0)
        for (int64_t i = 0; i < n; i++) {
            int h = host(s, i);
            for (int r = 0; r < P; r++)
                if (r != h) memcpy((char *)s->base[r] + i * row, (char *)s->base[h] + i * row, (size_t)row);
        }
    sync2(s);
    return 0;
}

static int s_sum(void *u, int64_t *v, int64_t count)
{
    proc *p = u;
    sim *s = p->s;
    if (s->broken) return DPDO_E_IO;
    s->vals[p->id] = v;
    sync2(s);
    if (p->id == 0)
        for (int64_t k = 0; k < count; k++) {
            int64_t t = 0;
            for (int r = 0; r < P; r++) t += s->vals[r][k];
            for (int r = 0; r < P; r++) s->vals[r][k] = t;
        }
    sync2(s);
    return 0;
}

static int s_bcast(void *u, int64_t from, void *buf, int64_t bytes)
{
    proc *p = u;
    sim *s = p->s;
    if (s->broken) return DPDO_E_IO;
    s->buf[p->id] = buf;
    sync2(s);
    if (p->id == 0)
        for (int r = 0; r < P; r++)
            if (r != from) memcpy(s->buf[r], s->buf[from], (size_t)bytes);
    sync2(s);
    return 0;
}

static int s_send(void *u, int64_t peer, const void *buf, int64_t bytes)
{
    (void)u, (void)peer, (void)buf, (void)bytes;
    return DPDO_E_UNSUPPORTED; /* DP-DDA never hands a turn on */
}
static int s_recv(void *u, int64_t peer, void *buf, int64_t bytes)
{
    (void)u, (void)peer, (void)buf, (void)bytes;
    return DPDO_E_UNSUPPORTED;
}
static const char *s_err(void *u) { return ((proc *)u)->s->err; }

static int bad_layout(void *u, int64_t n, int64_t *proc_of, int64_t *self)
{
    int kind = *(int *)u;
    if (kind == 0) return 5; /* not a DPDO_E_* code: reported as DPDO_E_CALLBACK */
    for (int64_t i = 0; i < n; i++) proc_of[i] = kind == 1 ? i % 2 : kind == 2 ? -1 : 0;
    proc_of[n] = 0;
    *self = kind == 3 ? -1 : 0;
    return 0;
}

static const dpdo_transport_type SIM = {sizeof(dpdo_transport_type), "sim", s_layout, s_exchange, s_agree, s_share,
                                        s_sum, s_bcast, s_send, s_recv, s_err};

typedef struct job {
    dpdo_algorithm *a;
    proc *pr;
    int rounds, rc_attach, rc_last, rc_share;
    int64_t steps;
} job;

static void *worker(void *arg)
{
    job *j = arg;
    j->rc_attach = dpdo_algorithm_set_transport(j->a, &SIM, j->pr);
    j->steps = 0;
    j->rc_last = DPDO_OK;
    while (!j->rc_attach && j->steps < j->rounds && (j->rc_last = dpdo_algorithm_step(j->a)) == DPDO_ROUND) j->steps++;
    j->rc_share = j->rc_attach || j->rc_last != DPDO_ROUND ? -1 : dpdo_algorithm_share_state(j->a);
    return NULL;
}

static void transport_sim(void)
{
    fixture f;
    fx_make(&f);
    dpdo_node *nodes[P + 1][N];
    dpdo_algorithm *a[P + 1];
    static sim s;
    memset(&s, 0, sizeof s);
    s.first[0] = 0, s.first[1] = 4, s.first[2] = N; /* unequal blocks */
    pthread_barrier_init(&s.bar, NULL, P);
    for (int r = 0; r < P; r++) s.pr[r] = (proc){&s, r};
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.noise_mode = DPDO_NOISE_FIXED;
    o.sigma = 0.2;
    o.max_rounds = 25;
    o.seed = 8;
    dpdo_ledger *led[P + 1];
    dpdo_accountant *acc[P + 1];
    for (int r = 0; r <= P; r++) { /* r == P: the one-process reference */
        for (int i = 0; i < N; i++) {
            int here = r == P || host(&s, i) == r;
            CHECK_EQ(here ? dpdo_node_create(&nodes[r][i], f.sh[i], f.loss, 1.0)
                          : dpdo_node_create_remote(&nodes[r][i], f.loss, 40, 1.0),
                     DPDO_OK);
        }
        CHECK_EQ(dpdo_ledger_create(&led[r], N), DPDO_OK);
        CHECK_EQ(dpdo_accountant_create(&acc[r], dpdo_accountant_type_find("rdp"), NULL, led[r], NULL), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_create(&a[r], dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_setup(a[r], nodes[r], N, f.net, f.reg, acc[r], &o), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_set_int(a[r], DPDO_PARAM_DDA_ACTIVE, 4), DPDO_OK);
    }
    /* bad input */
    dpdo_transport_type bad = SIM;
    CHECK_EQ(dpdo_algorithm_set_transport(NULL, &SIM, NULL), DPDO_E_INVAL);
    bad.struct_size = 8;
    CHECK_EQ(dpdo_algorithm_set_transport(a[0], &bad, &s.pr[0]), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a[0]), "struct_size");
    bad = SIM;
    bad.share = NULL;
    CHECK_EQ(dpdo_algorithm_set_transport(a[0], &bad, &s.pr[0]), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a[0]), "lacks a callback");
    /* layouts that cannot work */
    bad = SIM;
    bad.layout = bad_layout;
    int kind = 0;
    CHECK_EQ(dpdo_algorithm_set_transport(a[0], &bad, &kind), DPDO_E_CALLBACK);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a[0]), "layout failed (code 5)");
    kind = 1;
    CHECK_EQ(dpdo_algorithm_set_transport(a[0], &bad, &kind), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a[0]), "contiguous block");
    kind = 2;
    CHECK_EQ(dpdo_algorithm_set_transport(a[0], &bad, &kind), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a[0]), "for node 0");
    kind = 3;
    CHECK_EQ(dpdo_algorithm_set_transport(a[0], &bad, &kind), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a[0]), "this process");
    CHECK_EQ(dpdo_algorithm_hosts(a[0], 5), 1); /* still one process */
    /* out of memory while attaching */
    for (int k = 0; k < 3; k++) {
        dpdo__fault_arm(k);
        int rc = dpdo_algorithm_set_transport(a[0], &bad, &kind);
        dpdo__fault_arm(-1);
        CHECK_EQ(rc, DPDO_E_NOMEM);
    }
    /* the reference */
    CHECK_EQ(dpdo_algorithm_run(a[P], 0, NULL), DPDO_DONE);
    /* the two processes, each in its thread */
    pthread_t th[P];
    job jb[P];
    for (int r = 0; r < P; r++) {
        jb[r] = (job){.a = a[r], .pr = &s.pr[r], .rounds = 25};
        CHECK_EQ(pthread_create(&th[r], NULL, worker, &jb[r]), 0);
    }
    for (int r = 0; r < P; r++) pthread_join(th[r], NULL);
    for (int r = 0; r < P; r++) {
        CHECK_EQ(jb[r].rc_attach, DPDO_OK);
        CHECK_EQ(jb[r].steps, 25);
        CHECK_EQ(jb[r].rc_share, DPDO_OK);
    }
    CHECK_EQ(dpdo_algorithm_hosts(a[0], 3), 1);
    CHECK_EQ(dpdo_algorithm_hosts(a[0], 4), 0);
    CHECK_EQ(dpdo_algorithm_hosts(a[1], 4), 1);
    static const char *const names[] = {"z", "x", "s"};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < N; i++) {
            double want[D], got[D];
            CHECK_EQ(dpdo_algorithm_get_state(a[P], names[k], i, want, D), DPDO_OK);
            for (int r = 0; r < P; r++) {
                CHECK_EQ(dpdo_algorithm_get_state(a[r], names[k], i, got, D), DPDO_OK);
                CHECK_MSG(memcmp(want, got, sizeof want) == 0, "%s[%d] differs on process %d", names[k], i, r);
            }
        }
    for (int r = 0; r < P; r++) {
        char t0[4096], t1[4096];
        int64_t l0 = 0, l1 = 0;
        CHECK_EQ(dpdo_ledger_save(led[P], t0, sizeof t0, &l0), DPDO_OK);
        CHECK_EQ(dpdo_ledger_save(led[r], t1, sizeof t1, &l1), DPDO_OK);
        CHECK(l0 == l1 && memcmp(t0, t1, (size_t)l0) == 0);
        int64_t m0 = 0, m1 = 0;
        CHECK_EQ(dpdo_algorithm_comm(a[P], DPDO_NODE_ALL, &m0, NULL, NULL), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_comm(a[r], DPDO_NODE_ALL, &m1, NULL, NULL), DPDO_OK);
        CHECK(m0 == m1 && m0 > 0);
    }
    /* not READY: set_transport refuses */
    CHECK_EQ(dpdo_algorithm_set_transport(a[0], &SIM, &s.pr[0]), DPDO_E_STATE);
    /* a transport failure in round 2 fails the round on both, with the transport's message */
    for (int r = 0; r < P; r++) {
        CHECK_EQ(dpdo_algorithm_reset(a[r]), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_set_transport(a[r], NULL, NULL), DPDO_OK); /* detach */
    }
    s.fail_at = 2;
    for (int r = 0; r < P; r++) CHECK_EQ(pthread_create(&th[r], NULL, worker, &jb[r]), 0);
    for (int r = 0; r < P; r++) pthread_join(th[r], NULL);
    for (int r = 0; r < P; r++) {
        CHECK_EQ(jb[r].steps, 1);
        CHECK_EQ(jb[r].rc_last, DPDO_E_IO);
        CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a[r]), "simulated link failure");
        CHECK_EQ(dpdo_algorithm_state(a[r]), DPDO_ALG_FAILED);
        CHECK_EQ(dpdo_algorithm_round(a[r]), 1);
    }
    /* detached again: one process computing everything gives the reference bytes */
    CHECK_EQ(dpdo_algorithm_reset(a[0]), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_set_transport(a[0], NULL, NULL), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_hosts(a[0], 5), 1);
    pthread_barrier_destroy(&s.bar);
    for (int r = 0; r <= P; r++) {
        dpdo_algorithm_destroy(a[r]);
        dpdo_accountant_destroy(acc[r]);
        dpdo_ledger_destroy(led[r]);
        for (int i = 0; i < N; i++) dpdo_node_destroy(nodes[r][i]);
    }
    fx_free(&f);
}

int main(void)
{
    RUN(remote_nodes);
    RUN(secrets);
    RUN(transport_sim);
    return h_finish();
}
