/* SPDX-License-Identifier: BSD-3-Clause */
/* Threads (issue 19): the per-node work of a round on 1, 2 and 4 library threads, and on a
 * host pool, gives bit-identical iterates, outputs, communication counters and ledgers for
 * DP-DDA, DO-ADP and Fed-PLT in REPRODUCIBLE mode; the threads are really used; a failing node
 * gives the serial run's status and message; step() allocates nothing after round 1 (counted
 * by the library's allocation counter with a host pool that runs the tasks on the calling
 * thread, in reverse order); the default stays serial with a user callback. */
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"
#include "dpdo/dpdo.h"
#include "dpdo/solver.h"
#include "core/core_impl.h"

enum { ALG_DDA, ALG_ADP, ALG_FED };
enum { N = 8, Q = 60 };

typedef struct prob {
    dpdo_dataset *ds;
    dpdo_loss *loss;
    dpdo_regularizer *reg;
    dpdo_network *net;
    dpdo_compressor *comp;
    dpdo_solver *solver;
    dpdo_shard *sh[N];
    dpdo_node *nodes[N];
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

static void prob_make(prob *p, int alg, int user_loss)
{
    memset(p, 0, sizeof *p);
    dpdo_generate_options go;
    dpdo_generate_options_init(&go, sizeof go);
    go.n = (int64_t)N * Q;
    go.seed = 11;
    if (alg == ALG_FED) {
        p->d = 5;
        go.d = 5, go.scale = 3.0, go.n_agents = N;
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
        CHECK(dpdo_loss_create(&p->loss, dpdo_loss_type_find(alg == ALG_DDA ? "hinge" : "logistic"), NULL, p->d) ==
              DPDO_OK);
    }
    for (int i = 0; i < N; i++) {
        CHECK(dpdo_shard_create_range(&p->sh[i], p->ds, (int64_t)i * Q, Q) == DPDO_OK);
        CHECK(dpdo_node_create(&p->nodes[i], p->sh[i], p->loss, 1.0) == DPDO_OK);
    }
    double lam = 1e-3;
    if (alg == ALG_DDA) /* L1: the soft-threshold map */
        CHECK(dpdo_regularizer_create(&p->reg, dpdo_regularizer_type_find("l1"), NULL, p->d, &lam, 1) == DPDO_OK);
    if (alg == ALG_ADP)
        CHECK(dpdo_regularizer_create(&p->reg, dpdo_regularizer_type_find("l2"), NULL, p->d, &lam, 1) == DPDO_OK);
    if (alg != ALG_FED) {
        CHECK(dpdo_network_create(&p->net) == DPDO_OK);
        CHECK((alg == ALG_DDA ? dpdo_network_set_complete(p->net, N) : dpdo_network_set_circulant(p->net, N, 2)) ==
              DPDO_OK);
    }
    if (alg == ALG_ADP) {
        CHECK(dpdo_compressor_create(&p->comp, dpdo_compressor_type_find("top-k"), NULL, p->d) == DPDO_OK);
        CHECK(dpdo_compressor_set_k(p->comp, 13) == DPDO_OK);
    }
    if (alg == ALG_FED) {
        CHECK(dpdo_solver_create(&p->solver, dpdo_solver_type_find("agd"), NULL, p->d) == DPDO_OK);
        CHECK(dpdo_solver_set(p->solver, "lambda_lo", 0.5) == DPDO_OK);
        CHECK(dpdo_solver_set(p->solver, "lambda_hi", 3.0) == DPDO_OK);
        CHECK(dpdo_solver_set(p->solver, "l2", 0.5) == DPDO_OK);
    }
    CHECK(dpdo_ledger_create(&p->led, N) == DPDO_OK);
    CHECK(dpdo_accountant_create(&p->acc, dpdo_accountant_type_find("rdp"), NULL, p->led, NULL) == DPDO_OK);
}

static void prob_free(prob *p)
{
    dpdo_accountant_destroy(p->acc);
    dpdo_ledger_destroy(p->led);
    for (int i = 0; i < N; i++) dpdo_node_destroy(p->nodes[i]), dpdo_shard_destroy(p->sh[i]);
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
    double iter[N][40], out[N][40];
    int64_t comm[N + 1][3];
    char ledger[1 << 16];
    int64_t ledger_len;
    int32_t threads;
    long allocs; /* allocations counted over rounds 2..R (host pool only) */
} result;

/* threads > 0: options.num_threads; threads < 0: the host pool of width -threads */
static void run(prob *p, int alg, int threads, int rounds, result *r)
{
    memset(r, 0, sizeof *r);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    o.seed = 5;
    o.max_rounds = 100000;
    o.max_epsilon = INFINITY;
    o.noise_mode = alg == ALG_FED ? DPDO_NOISE_NONE : DPDO_NOISE_FIXED;
    o.sigma = 0.3;
    o.num_threads = threads > 0 ? threads : 0;
    if (alg == ALG_ADP) o.step_size = 0.01;
    dpdo_algorithm *a = NULL;
    const char *type = alg == ALG_DDA ? "dp-dda" : alg == ALG_ADP ? "do-adp" : "fed-plt";
    CHECK(dpdo_algorithm_create(&a, dpdo_algorithm_type_find(type)) == DPDO_OK);
    if (threads < 0) CHECK(dpdo_algorithm_set_pool(a, serial_reverse, NULL, -threads) == DPDO_OK);
    int rc = dpdo_algorithm_setup(a, p->nodes, N, p->net, p->reg, alg == ALG_FED ? NULL : p->acc, &o);
    CHECK_MSG(rc == DPDO_OK, "setup: %s", dpdo_algorithm_errmsg(a));
    if (alg == ALG_DDA) CHECK(dpdo_algorithm_set_int(a, DPDO_PARAM_DDA_ACTIVE, 6) == DPDO_OK);
    if (alg == ALG_ADP) {
        CHECK(dpdo_algorithm_set_double(a, DPDO_PARAM_ADP_P, 0.7) == DPDO_OK);
        CHECK(dpdo_algorithm_set_compressor(a, p->comp) == DPDO_OK);
    }
    if (alg == ALG_FED) {
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
    for (int i = 0; i < N; i++) {
        CHECK(dpdo_algorithm_get_iterate(a, i, r->iter[i], p->d) == DPDO_OK);
        CHECK(dpdo_algorithm_get_output(a, i, r->out[i], p->d) == DPDO_OK);
        CHECK(dpdo_algorithm_comm(a, i, &r->comm[i][0], &r->comm[i][1], &r->comm[i][2]) == DPDO_OK);
    }
    if (alg == ALG_FED)
        CHECK(dpdo_algorithm_comm(a, DPDO_NODE_COORDINATOR, &r->comm[N][0], &r->comm[N][1], &r->comm[N][2]) ==
              DPDO_OK);
    else
        CHECK(dpdo_ledger_save(p->led, r->ledger, sizeof r->ledger, &r->ledger_len) == DPDO_OK);
    dpdo_algorithm_destroy(a);
    dpdo_ledger_reset(p->led);
}

static void same(const result *a, const result *b, const char *what)
{
    CHECK_MSG(memcmp(a->iter, b->iter, sizeof a->iter) == 0, "%s: iterates differ", what);
    CHECK_MSG(memcmp(a->out, b->out, sizeof a->out) == 0, "%s: outputs differ", what);
    CHECK_MSG(memcmp(a->comm, b->comm, sizeof a->comm) == 0, "%s: communication counters differ", what);
    CHECK_MSG(a->ledger_len == b->ledger_len && memcmp(a->ledger, b->ledger, (size_t)a->ledger_len) == 0,
              "%s: ledgers differ", what);
}

static result R1, R2, R4, RH;

static void bit_identical(int alg, int rounds)
{
    prob p;
    prob_make(&p, alg, 0);
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
    for (int i = 0; i < N; i++)
        for (int64_t k = 0; k < p.d; k++) mv += fabs(R1.iter[i][k]);
    CHECK(mv > 1e-3);
    CHECK(R1.comm[0][0] + R1.comm[1][0] + R1.comm[N][0] > 0);
    if (alg != ALG_FED) CHECK(R1.ledger_len > 0);
    prob_free(&p);
}

static void test_dp_dda(void) { bit_identical(ALG_DDA, 60); }
static void test_do_adp(void) { bit_identical(ALG_ADP, 40); }
static void test_fed_plt(void) { bit_identical(ALG_FED, 25); }

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
        CHECK(dpdo_algorithm_setup(a, p->nodes, N, p->net, p->reg, p->acc, &o) == DPDO_OK);
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
        CHECK_EQ(dpdo_algorithm_setup(a, pb.nodes, N, pb.net, pb.reg, pb.acc, &o), DPDO_E_INVAL);
        CHECK_MSG(strstr(dpdo_algorithm_errmsg(a), "DPDO_NUM_THREADS") != NULL, "%s", dpdo_algorithm_errmsg(a));
        o.num_threads = 300;
        CHECK_EQ(dpdo_algorithm_setup(a, pb.nodes, N, pb.net, pb.reg, pb.acc, &o), DPDO_E_INVAL);
        CHECK_MSG(strstr(dpdo_algorithm_errmsg(a), "num_threads") != NULL, "%s", dpdo_algorithm_errmsg(a));
        CHECK_EQ(dpdo_algorithm_set_pool(a, serial_reverse, NULL, 0), DPDO_E_INVAL);
        CHECK_EQ(dpdo_algorithm_set_pool(NULL, serial_reverse, NULL, 2), DPDO_E_INVAL);
        dpdo_algorithm_destroy(a);
    }
    unsetenv("DPDO_NUM_THREADS");
    prob_free(&pb);
    prob_free(&pu);
}

int main(void)
{
    unsetenv("DPDO_NUM_THREADS");
    RUN(test_dp_dda);
    RUN(test_do_adp);
    RUN(test_fed_plt);
    RUN(test_failure_message);
    RUN(test_default_and_env);
    return h_finish();
}
