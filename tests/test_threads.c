/* SPDX-License-Identifier: BSD-3-Clause */
/* Threads (issue 19): the per-node work of a round on 1, 2 and 4 library threads, and on a
 * host pool, gives bit-identical iterates, outputs, communication counters and ledgers in
 * REPRODUCIBLE mode for every type that may run parallel (lib/engine/par.c,
 * checked_algorithm): DP-DDA with b = 20 computing nodes, the DP-DDA baseline (every node
 * computes), DO-ADP (top-k compressor, p = 0.8) and Fed-PLT with N = 100 agents (noisy-gd with
 * noise drawn inside the agents' local solvers, and agd with the ridge term); the threads are
 * really used; a failing node gives the serial run's status and message; step() allocates
 * nothing after round 1 (counted by the library's allocation counter with a host pool that runs
 * the tasks on the calling thread, in reverse order); the default stays serial with a user
 * callback.
 *
 * Why the comparison can fail: every run draws its noise per node from seeded streams, so a
 * thread that used another node's stream, a workspace shared by two tasks, a reduction whose
 * order depends on the split, or a lost or doubled message count changes some compared bit.
 * test_comparison_detects checks the comparison itself: one ulp in one coordinate, a changed
 * counter and a run with another seed are all reported as different. */
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"
#include "dpdo/dpdo.h"
#include "dpdo/solver.h"
#include "core/core_impl.h"
#include "fixture.h"
#include "alg_fixture.h"

enum { ALG_DDA, ALG_BASE, ALG_ADP, ALG_FED, ALG_FED_AGD };
enum { N = 8, Q = 60, NMAX = 100, DMAX = 40 }; /* N, Q: the user-loss problem */

typedef struct prob {
    int64_t n, q; /* nodes, rows per node */
    dpdo_dataset *ds;
    dpdo_loss *loss;
    dpdo_regularizer *reg;
    dpdo_network *net;
    dpdo_compressor *comp;
    dpdo_solver *solver;
    dpdo_shard *sh[NMAX];
    dpdo_node *nodes[NMAX];
    dpdo_ledger *led;
    dpdo_accountant *acc;
    int64_t d;
} prob;

/* a user batch loss (logistic, pure, so thread-safe) that fails on rows of nodes 3 and 6 from
 * round `fail_after` on: the serial run reports node 3 */
typedef struct bad_user {
    const double *X, *y;
    int64_t d;
    int armed;
} bad_user;

static int bad_batch(void *user, const double *x, int64_t dim, const int64_t *rows, int64_t m, double *ls,
                     double *g)
{
    const bad_user *u = user;
    double s = 0;
    for (int64_t k = 0; k < m; k++) {
        int64_t node = rows[k] / Q;
        if (u->armed && (node == 3 || node == 6)) return 17 + (int)node;
        const double *a = u->X + rows[k] * dim;
        double mg = 0;
        for (int64_t j = 0; j < dim; j++) mg += a[j] * x[j];
        double t = -u->y[rows[k]] * mg, e = exp(-fabs(t)), c = -u->y[rows[k]] * (t >= 0 ? 1 : e) / (1 + e);
        s += (t > 0 ? t : 0) + log1p(e);
        if (g)
            for (int64_t j = 0; j < dim; j++) g[j] += c * a[j];
    }
    *ls = s;
    return 0;
}
static const dpdo_loss_type BAD = {.struct_size = sizeof(dpdo_loss_type), .name = "test-bad", .batch = bad_batch};
static double BX[N * Q * 40], BY[N * Q];
static bad_user BU = {BX, BY, 40, 0};

static int is_fed(int alg) { return alg == ALG_FED || alg == ALG_FED_AGD; }

/* DP-DDA and its baseline: 24 nodes, d = 40, complete graph; DO-ADP: 20 nodes, d = 40, circulant;
 * Fed-PLT: 100 agents of 12 rows, d = 5 (the N = 100, n = 5); user loss: 8 nodes of 60 */
static void prob_make(prob *p, int alg, int user_loss)
{
    memset(p, 0, sizeof *p);
    p->n = user_loss ? N : is_fed(alg) ? 100 : alg == ALG_ADP ? 20 : 24;
    p->q = user_loss ? Q : is_fed(alg) ? 12 : 30;
    dpdo_generate_options go;
    dpdo_generate_options_init(&go, sizeof go);
    go.n = p->n * p->q;
    go.seed = 11;
    if (is_fed(alg)) {
        p->d = 5;
        go.d = 5, go.scale = 3.0, go.n_agents = p->n;
        CHECK(dpdo_dataset_create(&p->ds) == DPDO_OK);
        CHECK(dpdo_dataset_generate(p->ds, "fedplt-logistic", &go) == DPDO_OK);
    } else {
        p->d = 40;
        go.d = 40, go.normalize_rows = 1;
        CHECK(dpdo_dataset_create(&p->ds) == DPDO_OK);
        CHECK(dpdo_dataset_generate(p->ds, "epsilon-like", &go) == DPDO_OK);
    }
    if (user_loss) {
        for (int64_t r = 0; r < N * Q; r++) dpdo_dataset_get_row(p->ds, r, BX + r * 40, 40);
        dpdo_dataset_get_labels(p->ds, BY, N * Q);
        CHECK(dpdo_loss_create(&p->loss, &BAD, &BU, p->d) == DPDO_OK);
    } else {
        CHECK(dpdo_loss_create(&p->loss, dpdo_loss_type_find(alg == ALG_DDA || alg == ALG_BASE ? "hinge" : "logistic"),
                                NULL, p->d) == DPDO_OK);
    }
    for (int64_t i = 0; i < p->n; i++) {
        CHECK(dpdo_shard_create_range(&p->sh[i], p->ds, i * p->q, p->q) == DPDO_OK);
        CHECK(dpdo_node_create(&p->nodes[i], p->sh[i], p->loss, 1.0) == DPDO_OK);
    }
    double lam = 1e-3;
    if (alg == ALG_DDA || alg == ALG_BASE) /* L1: the soft-threshold map */
        CHECK(dpdo_regularizer_create(&p->reg, dpdo_regularizer_type_find("l1"), NULL, p->d, &lam, 1) == DPDO_OK);
    if (alg == ALG_ADP)
        CHECK(dpdo_regularizer_create(&p->reg, dpdo_regularizer_type_find("l2"), NULL, p->d, &lam, 1) == DPDO_OK);
    if (!is_fed(alg)) {
        CHECK(dpdo_network_create(&p->net) == DPDO_OK);
        CHECK((alg == ALG_ADP ? dpdo_network_set_circulant(p->net, p->n, 2) : dpdo_network_set_complete(p->net, p->n)) ==
              DPDO_OK);
    }
    if (alg == ALG_ADP) {
        CHECK(dpdo_compressor_create(&p->comp, dpdo_compressor_type_find("top-k"), NULL, p->d) == DPDO_OK);
        CHECK(dpdo_compressor_set_k(p->comp, 13) == DPDO_OK);
    }
    if (is_fed(alg)) { /* noisy-gd: each agent draws its noise inside its local solver */
        CHECK(dpdo_solver_create(&p->solver, dpdo_solver_type_find(alg == ALG_FED ? "noisy-gd" : "agd"), NULL, p->d) ==
              DPDO_OK);
        CHECK(dpdo_solver_set(p->solver, "lambda_lo", 0.5) == DPDO_OK);
        CHECK(dpdo_solver_set(p->solver, "lambda_hi", 3.0) == DPDO_OK);
        CHECK(dpdo_solver_set(p->solver, "l2", 0.5) == DPDO_OK);
    }
    CHECK(dpdo_ledger_create(&p->led, p->n) == DPDO_OK);
    CHECK(dpdo_accountant_create(&p->acc, dpdo_accountant_type_find("rdp"), NULL, p->led, NULL) == DPDO_OK);
}

static void prob_free(prob *p)
{
    dpdo_accountant_destroy(p->acc);
    dpdo_ledger_destroy(p->led);
    for (int64_t i = 0; i < p->n; i++) dpdo_node_destroy(p->nodes[i]), dpdo_shard_destroy(p->sh[i]);
    dpdo_solver_destroy(p->solver);
    dpdo_compressor_destroy(p->comp);
    dpdo_network_destroy(p->net);
    dpdo_regularizer_destroy(p->reg);
    dpdo_loss_destroy(p->loss);
    dpdo_dataset_destroy(p->ds);
}

/* a host pool that runs the tasks on the calling thread, last task first */
static int host_calls, host_max_tasks;
static void serial_reverse(void *host, int32_t ntasks, dpdo_task_fn task, void *arg)
{
    (void)host;
    host_calls++;
    if (ntasks > host_max_tasks) host_max_tasks = ntasks;
    for (int32_t k = ntasks - 1; k >= 0; k--) task(arg, k);
}

typedef struct result {
    double iter[NMAX][DMAX], out[NMAX][DMAX];
    int64_t comm[NMAX + 1][3];
    char ledger[1 << 16];
    int64_t ledger_len;
    int32_t threads;
    long allocs; /* allocations counted over rounds 2..R (host pool only) */
} result;

/* threads > 0: options.num_threads; threads < 0: the host pool of width -threads */
static void run_seed(prob *p, int alg, int threads, int rounds, uint64_t seed, result *r)
{
    memset(r, 0, sizeof *r);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    o.seed = seed;
    o.max_rounds = 100000;
    o.max_epsilon = INFINITY;
    o.noise_mode = alg == ALG_FED_AGD ? DPDO_NOISE_NONE : DPDO_NOISE_FIXED;
    o.sigma = alg == ALG_FED ? 0.05 : 0.3;
    o.num_threads = threads > 0 ? threads : 0;
    if (alg == ALG_ADP) o.step_size = 0.01;
    dpdo_algorithm *a = NULL;
    const char *type = alg == ALG_DDA    ? "dp-dda"
                       : alg == ALG_BASE ? "dp-dda-baseline"
                       : alg == ALG_ADP  ? "do-adp"
                                         : "fed-plt";
    CHECK(dpdo_algorithm_create(&a, dpdo_algorithm_type_find(type)) == DPDO_OK);
    if (threads < 0) CHECK(dpdo_algorithm_set_pool(a, serial_reverse, NULL, -threads) == DPDO_OK);
    int rc = dpdo_algorithm_setup(a, p->nodes, p->n, p->net, p->reg, p->acc, &o);
    CHECK_MSG(rc == DPDO_OK, "setup: %s", dpdo_algorithm_errmsg(a));
    if (alg == ALG_DDA) CHECK(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, 20) == DPDO_OK); /* b = 20 */
    if (alg == ALG_ADP) {
        CHECK(dpdo_algorithm_set_double(a, DPDO_PARAM_ADP_P, 0.8) == DPDO_OK);
        CHECK(dpdo_algorithm_set_compressor(a, p->comp) == DPDO_OK);
    }
    if (is_fed(alg)) {
        CHECK(dpdo_algorithm_set_solver(a, p->solver) == DPDO_OK);
        CHECK(dpdo_algorithm_set_double(a, DPDO_PARAM_FED_P, 0.7) == DPDO_OK);
    }
    rc = dpdo_algorithm_prepare(a);
    CHECK_MSG(rc == DPDO_OK, "prepare: %s", dpdo_algorithm_errmsg(a));
    r->threads = dpdo_algorithm_threads(a);
    CHECK(dpdo_algorithm_step(a) == DPDO_ROUND);
    if (threads < 0) dpdo__fault_arm(1L << 40); /* count, never fail */
    for (int t = 1; t < rounds; t++) CHECK(dpdo_algorithm_step(a) == DPDO_ROUND);
    if (threads < 0) {
        r->allocs = dpdo__fault_allocs();
        dpdo__fault_arm(-1);
    }
    for (int64_t i = 0; i < p->n; i++) {
        CHECK(dpdo_algorithm_get_iterate(a, i, r->iter[i], p->d) == DPDO_OK);
        CHECK(dpdo_algorithm_get_output(a, i, r->out[i], p->d) == DPDO_OK);
        CHECK(dpdo_algorithm_comm(a, i, &r->comm[i][0], &r->comm[i][1], &r->comm[i][2]) == DPDO_OK);
    }
    if (is_fed(alg))
        CHECK(dpdo_algorithm_comm(a, DPDO_NODE_COORDINATOR, &r->comm[NMAX][0], &r->comm[NMAX][1], &r->comm[NMAX][2]) ==
              DPDO_OK);
    CHECK(dpdo_ledger_save(p->led, r->ledger, sizeof r->ledger, &r->ledger_len) == DPDO_OK);
    dpdo_algorithm_destroy(a);
    dpdo_ledger_reset(p->led);
}

static void run(prob *p, int alg, int threads, int rounds, result *r) { run_seed(p, alg, threads, rounds, 5, r); }

/* which of the compared parts differ (bit 0 iterates, 1 outputs, 2 counters, 3 ledger) */
static int differs(const result *a, const result *b)
{
    int m = 0;
    if (memcmp(a->iter, b->iter, sizeof a->iter)) m |= 1;
    if (memcmp(a->out, b->out, sizeof a->out)) m |= 2;
    if (memcmp(a->comm, b->comm, sizeof a->comm)) m |= 4;
    if (a->ledger_len != b->ledger_len || memcmp(a->ledger, b->ledger, (size_t)a->ledger_len)) m |= 8;
    return m;
}

static void same(const result *a, const result *b, const char *what)
{
    int m = differs(a, b);
    CHECK_MSG(m == 0, "%s:%s%s%s%s differ", what, m & 1 ? " iterates" : "", m & 2 ? " outputs" : "",
              m & 4 ? " communication counters" : "", m & 8 ? " ledgers" : "");
}

static result R1, R2, R4, RH, RX;

static void bit_identical(int alg, int rounds)
{
    prob p;
    prob_make(&p, alg, 0);
    CHECK(p.n <= NMAX && p.d <= DMAX);
    run(&p, alg, 1, rounds, &R1);
    run(&p, alg, 2, rounds, &R2);
    run(&p, alg, 4, rounds, &R4);
    host_calls = host_max_tasks = 0;
    run(&p, alg, -3, rounds, &RH);
    CHECK_EQ(R1.threads, 1);
    CHECK_EQ(R2.threads, 2); /* the runs really used the threads */
    CHECK_EQ(R4.threads, 4);
    CHECK_EQ(RH.threads, 3);
    CHECK(host_calls >= rounds); /* the host pool ran the work */
    CHECK_EQ(host_max_tasks, 3);
    same(&R1, &R2, "1 vs 2 threads");
    same(&R1, &R4, "1 vs 4 threads");
    same(&R1, &RH, "1 thread vs host pool");
    CHECK_EQ(RH.allocs, 0); /* no allocation in step() after round 1 */
    /* the runs did something: iterates moved, messages were counted */
    double mv = 0;
    int64_t moved = 0;
    for (int64_t i = 0; i < p.n; i++) {
        double ni = 0;
        for (int64_t k = 0; k < p.d; k++) ni += fabs(R1.iter[i][k]);
        mv += ni;
        moved += ni > 0;
    }
    CHECK(mv > 1e-3);
    CHECK_MSG(moved >= p.n * 9 / 10, "%lld of %lld nodes moved", (long long)moved, (long long)p.n);
    CHECK(R1.comm[0][0] + R1.comm[1][0] + R1.comm[NMAX][0] > 0);
    if (alg != ALG_FED_AGD) { /* noisy runs: charged, and the noise streams reach the compared bits */
        CHECK(R1.ledger_len > 0);
        run_seed(&p, alg, 2, rounds, 6, &RX);
        CHECK_MSG(differs(&R1, &RX) & 1, "another seed gave the same iterates");
    }
    prob_free(&p);
}

static void test_dp_dda_b20(void) { bit_identical(ALG_DDA, 40); }
static void test_dp_dda_baseline(void) { bit_identical(ALG_BASE, 15); }
static void test_do_adp(void) { bit_identical(ALG_ADP, 40); }
static void test_fed_plt_n100(void) { bit_identical(ALG_FED, 8); }
static void test_fed_plt_agd(void) { bit_identical(ALG_FED_AGD, 8); }

/* the comparison reports one ulp in one coordinate, a counter off by one and a ledger byte */
static void test_comparison_detects(void)
{
    static result A, B;
    memset(&A, 0, sizeof A);
    A.iter[57][3] = 0.1, A.out[99][39] = -2.5, A.comm[NMAX][2] = 4000, A.ledger_len = 10;
    memcpy(A.ledger, "0123456789", 10);
    B = A;
    CHECK_EQ(differs(&A, &B), 0);
    B.iter[57][3] = nextafter(B.iter[57][3], 1.0);
    CHECK_EQ(differs(&A, &B), 1);
    B = A;
    B.out[99][39] = nextafter(B.out[99][39], 0.0);
    CHECK_EQ(differs(&A, &B), 2);
    B = A;
    B.comm[NMAX][2]++;
    CHECK_EQ(differs(&A, &B), 4);
    B = A;
    B.ledger[9] ^= 1;
    CHECK_EQ(differs(&A, &B), 8);
}

/* a failing node: the same status and message as the serial run (the first failing node in
 * order, node 3), whichever thread saw which failure first */
static void test_failure_message(void)
{
    prob p;
    prob_make(&p, ALG_ADP, 1);
    char msg[3][256];
    int st[3];
    int threads[3] = {1, 4, 2};
    for (int v = 0; v < 3; v++) {
        dpdo_algorithm_options o;
        dpdo_algorithm_options_init(&o, sizeof o);
        o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
        o.noise_mode = DPDO_NOISE_FIXED, o.sigma = 0.1, o.max_epsilon = INFINITY, o.step_size = 0.01;
        o.num_threads = threads[v]; /* explicit: the host vouches for its (pure) callback */
        dpdo_algorithm *a = NULL;
        CHECK(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("do-adp")) == DPDO_OK);
        CHECK(dpdo_algorithm_setup(a, p.nodes, N, p.net, p.reg, p.acc, &o) == DPDO_OK);
        CHECK(dpdo_algorithm_prepare(a) == DPDO_OK);
        CHECK_EQ(dpdo_algorithm_threads(a), threads[v]);
        BU.armed = 0;
        CHECK(dpdo_algorithm_step(a) == DPDO_ROUND);
        BU.armed = 1;
        st[v] = dpdo_algorithm_step(a);
        BU.armed = 0;
        snprintf(msg[v], sizeof msg[v], "%s", dpdo_algorithm_errmsg(a));
        dpdo_algorithm_destroy(a);
        dpdo_ledger_reset(p.led);
    }
    CHECK_EQ(st[0], DPDO_E_CALLBACK);
    CHECK_MSG(strstr(msg[0], "node 3") != NULL, "serial message: %s", msg[0]);
    CHECK_MSG(strstr(msg[0], "returned 20") != NULL, "serial message: %s", msg[0]);
    for (int v = 1; v < 3; v++) {
        CHECK_EQ(st[v], st[0]);
        CHECK_MSG(strcmp(msg[v], msg[0]) == 0, "%d threads: \"%s\" vs serial \"%s\"", threads[v], msg[v], msg[0]);
    }
    prob_free(&p);
}

/* DO-ADP's finiteness test runs inside local() (fused into the loop that writes x' and m'): a
 * diverging run fails at the same round, with the same status and message, on 1 and 2 threads */
static void test_nonfinite_detected(void)
{
    prob p;
    prob_make(&p, ALG_ADP, 0);
    char msg[2][160];
    int st[2];
    int64_t at[2];
    for (int v = 0; v < 2; v++) {
        dpdo_algorithm_options o;
        dpdo_algorithm_options_init(&o, sizeof o);
        o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
        o.noise_mode = DPDO_NOISE_FIXED, o.sigma = 1e300, o.max_epsilon = INFINITY;
        o.step_size = 1e10; /* alpha m overflows to Inf in the first active round */
        o.num_threads = v + 1;
        dpdo_algorithm *a = NULL;
        CHECK(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("do-adp")) == DPDO_OK);
        int rc = dpdo_algorithm_setup(a, p.nodes, p.n, p.net, p.reg, p.acc, &o);
        CHECK_MSG(rc == DPDO_OK, "setup: %s", dpdo_algorithm_errmsg(a));
        CHECK(dpdo_algorithm_set_compressor(a, p.comp) == DPDO_OK);
        CHECK(dpdo_algorithm_prepare(a) == DPDO_OK);
        CHECK_EQ(dpdo_algorithm_threads(a), v + 1);
        while ((st[v] = dpdo_algorithm_step(a)) == DPDO_ROUND && dpdo_algorithm_round(a) < 50) {
        }
        at[v] = dpdo_algorithm_round(a);
        snprintf(msg[v], sizeof msg[v], "%s", dpdo_algorithm_errmsg(a));
        dpdo_algorithm_destroy(a);
        dpdo_ledger_reset(p.led);
    }
    CHECK_EQ(st[0], DPDO_E_NUMERIC);
    CHECK_MSG(strstr(msg[0], "after the update") != NULL, "%s", msg[0]);
    CHECK_EQ(st[1], st[0]);
    CHECK_EQ(at[1], at[0]);
    CHECK_MSG(strcmp(msg[0], msg[1]) == 0, "\"%s\" vs \"%s\"", msg[0], msg[1]);
    prob_free(&p);
}

/* the default (num_threads = 0) takes DPDO_NUM_THREADS, but stays serial with a user loss;
 * a malformed value is an error that names the variable */
static void test_default_and_env(void)
{
    prob pb, pu;
    prob_make(&pb, ALG_ADP, 0);
    prob_make(&pu, ALG_ADP, 1);
    setenv("DPDO_NUM_THREADS", "3", 1);
    for (int v = 0; v < 2; v++) {
        prob *p = v ? &pu : &pb;
        dpdo_algorithm_options o;
        dpdo_algorithm_options_init(&o, sizeof o);
        CHECK_EQ(o.num_threads, 0);
        o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
        o.noise_mode = DPDO_NOISE_NONE, o.step_size = 0.01;
        dpdo_algorithm *a = NULL;
        CHECK(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("do-adp")) == DPDO_OK);
        CHECK(dpdo_algorithm_setup(a, p->nodes, p->n, p->net, p->reg, p->acc, &o) == DPDO_OK);
        CHECK_EQ(dpdo_algorithm_threads(a), 1); /* before prepare */
        CHECK(dpdo_algorithm_prepare(a) == DPDO_OK);
        CHECK_EQ(dpdo_algorithm_threads(a), v ? 1 : 3);
        dpdo_algorithm_destroy(a);
    }
    setenv("DPDO_NUM_THREADS", "two", 1);
    {
        dpdo_algorithm_options o;
        dpdo_algorithm_options_init(&o, sizeof o);
        o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
        o.noise_mode = DPDO_NOISE_NONE;
        dpdo_algorithm *a = NULL;
        CHECK(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("do-adp")) == DPDO_OK);
        CHECK_EQ(dpdo_algorithm_setup(a, pb.nodes, pb.n, pb.net, pb.reg, pb.acc, &o), DPDO_E_INVAL);
        CHECK_MSG(strstr(dpdo_algorithm_errmsg(a), "DPDO_NUM_THREADS") != NULL, "%s", dpdo_algorithm_errmsg(a));
        o.num_threads = 300;
        CHECK_EQ(dpdo_algorithm_setup(a, pb.nodes, pb.n, pb.net, pb.reg, pb.acc, &o), DPDO_E_INVAL);
        CHECK_MSG(strstr(dpdo_algorithm_errmsg(a), "num_threads") != NULL, "%s", dpdo_algorithm_errmsg(a));
        CHECK_EQ(dpdo_algorithm_set_pool(a, serial_reverse, NULL, 0), DPDO_E_INVAL);
        CHECK_EQ(dpdo_algorithm_set_pool(NULL, serial_reverse, NULL, 2), DPDO_E_INVAL);
        dpdo_algorithm_destroy(a);
    }
    unsetenv("DPDO_NUM_THREADS");
    prob_free(&pb);
    prob_free(&pu);
}

/* Every registered type, set up by its fixture (tests/alg_fixture.h) on 8 nodes of a ring:
 * 4 library threads give the serial run's outputs, counters and ledger bit for bit, and a type
 * whose vtable says its per-node work may run in parallel really gets the threads. */
static void test_every_type(void)
{
    enum { TN = 8, TQ = 24, TD = 6 };
    static double X[TN * TQ * TD], Y[TN * TQ];
    uint64_t st = 0x853c49e6748fea9bull;
    for (int k = 0; k < TN * TQ * TD; k++) X[k] = (h_urand(&st) - 0.5) / 2.0;
    for (int k = 0; k < TN * TQ; k++) Y[k] = h_urand(&st) < 0.5 ? -1.0 : 1.0;
    dpdo_dataset *ds;
    dpdo_loss *lo;
    dpdo_shard *sh[TN];
    dpdo_node *nodes[TN];
    tfx_nodes_make(X, Y, TN, TQ, TD, "logistic", &ds, &lo, sh, nodes);
    dpdo_network *net;
    CHECK(dpdo_network_create(&net) == DPDO_OK);
    CHECK(dpdo_network_set_ring(net, TN) == DPDO_OK);
    dpdo_regularizer *reg;
    double lam = 0.05;
    CHECK(dpdo_regularizer_create(&reg, dpdo_regularizer_type_find("l2"), NULL, TD, &lam, 1) == DPDO_OK);
    int ntypes = 0, nparallel = 0;
    for (const dpdo_algorithm_type *t = dpdo_algorithm_type_next(NULL); t; t = dpdo_algorithm_type_next(t), ntypes++) {
        const char *tn = dpdo_algorithm_type_name(t);
        int pub = tfx_alg_nonprivate(tn), used = 0;
        double out[2][TN][TD];
        int64_t comm[2][3];
        static char led_txt[2][1 << 14];
        int64_t led_len[2] = {0, 0};
        for (int v = 0; v < 2; v++) {
            dpdo_ledger *led;
            dpdo_accountant *acc;
            CHECK(dpdo_ledger_create(&led, TN) == DPDO_OK);
            CHECK(dpdo_accountant_create(&acc, dpdo_accountant_type_find("rdp"), NULL, led, NULL) == DPDO_OK);
            dpdo_algorithm_options o;
            dpdo_algorithm_options_init(&o, sizeof o);
            o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
            o.seed = 3;
            o.max_rounds = 6;
            o.max_epsilon = INFINITY;
            o.noise_mode = pub ? DPDO_NOISE_NONE : DPDO_NOISE_FIXED;
            o.sigma = 0.3;
            o.num_threads = v ? 4 : 1;
            dpdo_algorithm *a;
            dpdo_solver *sol = NULL;
            CHECK(dpdo_algorithm_create(&a, t) == DPDO_OK);
            int rc = dpdo_algorithm_setup(a, nodes, TN, net, pub ? NULL : reg, acc, &o);
            CHECK_MSG(rc == DPDO_OK, "%s: setup: %s", tn, dpdo_algorithm_errmsg(a));
            tfx_alg_apply(a, tn, !pub, TD, &sol);
            rc = dpdo_algorithm_run(a, 0, NULL);
            CHECK_MSG(rc == DPDO_DONE, "%s (%d threads): run: %d %s", tn, (int)o.num_threads, rc,
                      dpdo_algorithm_errmsg(a));
            if (v) used = dpdo_algorithm_threads(a);
            for (int i = 0; i < TN; i++) CHECK(dpdo_algorithm_get_output(a, i, out[v][i], TD) == DPDO_OK);
            CHECK(dpdo_algorithm_comm(a, DPDO_NODE_ALL, &comm[v][0], &comm[v][1], &comm[v][2]) == DPDO_OK);
            CHECK(dpdo_ledger_save(led, led_txt[v], sizeof led_txt[v], &led_len[v]) == DPDO_OK);
            dpdo_algorithm_destroy(a);
            dpdo_solver_destroy(sol);
            dpdo_accountant_destroy(acc);
            dpdo_ledger_destroy(led);
        }
        CHECK_MSG(memcmp(out[0], out[1], sizeof out[0]) == 0 && memcmp(comm[0], comm[1], sizeof comm[0]) == 0 &&
                      led_len[0] == led_len[1] && memcmp(led_txt[0], led_txt[1], (size_t)led_len[0]) == 0,
                  "%s: 4 threads differ from the serial run", tn);
        if (t->vt->parallel && !t->vt->uses_solver) CHECK_MSG(used > 1, "%s: %d threads used", tn, used);
        nparallel += used > 1;
        printf("# %-16s %s, %d thread%s: bit-identical to serial\n", tn, pub ? "no noise" : "fixed noise", used > 1 ? used : 1,
               used > 1 ? "s" : "");
    }
    CHECK(ntypes >= 13 && nparallel >= 3);
    dpdo_regularizer_destroy(reg);
    dpdo_network_destroy(net);
    tfx_nodes_free(TN, ds, lo, sh, nodes);
}

int main(void)
{
    unsetenv("DPDO_NUM_THREADS");
    RUN(test_comparison_detects);
    RUN(test_dp_dda_b20);
    RUN(test_dp_dda_baseline);
    RUN(test_do_adp);
    RUN(test_fed_plt_n100);
    RUN(test_fed_plt_agd);
    RUN(test_failure_message);
    RUN(test_nonfinite_detected);
    RUN(test_default_and_env);
    RUN(test_every_type);
    return h_finish();
}
