/* SPDX-License-Identifier: BSD-3-Clause */
/* Distributed runs over MPI are bit-identical to one-process runs.
 * Run with: mpiexec -n K build/tests/mpi/test_mpi   (K = 1, 2, 4, ...)
 * For every algorithm type: rank 0 runs the problem in one process (all
 * data), then all ranks run it distributed (each rank holds only its nodes'
 * shards; the others are remote nodes), share the state and rank 0 compares
 * every state row, every output, the ledger text, the counters and the
 * privacy figures byte for byte. Also: a configuration error on one rank
 * fails attach on all, a failing node's error reaches every rank, and a
 * vanished peer gives DPDO_E_IO within the timeout instead of a hang
 * (DPDO_MPI_TEST_VANISH=1). Rank 0 prints TAP lines and
 * "# summary: N passed, M failed". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dpdo/dpdo.h>
#include <dpdo/mpi.h>

#define N 8
#define D 12
#define T 40

static int rank, nranks, passed, failed;

static void report(int ok, const char *name, const char *why)
{
    /* every rank's verdict counts: rank 0 reports the worst */
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0) {
        if (all) printf("ok %d - %s\n", passed + failed + 1, name);
        else printf("not ok %d - %s%s%s\n", passed + failed + 1, name, why && *why ? ": " : "", why ? why : "");
        fflush(stdout);
    }
    if (all) passed++;
    else failed++;
}

typedef struct problem {
    dpdo_dataset *ds;
    dpdo_shard *shard[N];
    dpdo_loss *loss;
    dpdo_regularizer *reg;
    dpdo_network *net;
} problem;

static int make_problem(problem *p)
{
    memset(p, 0, sizeof *p);
    dpdo_generate_options g;
    dpdo_generate_options_init(&g, sizeof g);
    int64_t sizes[N], tot = 0;
    for (int i = 0; i < N; i++) tot += sizes[i] = 30 + 3 * i; /* unequal shards */
    g.n = tot;
    g.d = D;
    g.seed = 7;
    if (dpdo_dataset_create(&p->ds) || dpdo_dataset_generate(p->ds, "epsilon-like", &g)) return -1;
    if (dpdo_dataset_partition(p->ds, N, sizes, 3, p->shard)) return -1;
    if (dpdo_loss_create(&p->loss, dpdo_loss_type_find("logistic"), NULL, D)) return -1;
    double lam = 0.05;
    if (dpdo_regularizer_create(&p->reg, dpdo_regularizer_type_find("l2"), NULL, D, &lam, 1)) return -1;
    if (dpdo_network_create(&p->net) || dpdo_network_set_circulant(p->net, N, 2)) return -1;
    return 0;
}

typedef struct kase {
    const char *name, *type;
    int mode;          /* noise mode */
    int64_t ikey[4], ival[4];
    int dkey[4];
    double dval[4];
    const char *comp;  /* compressor type or NULL */
    int64_t k;
    const char *policy;
    const char *solver; /* local solver type (lambda_lo 0.05, lambda_hi 1, step 0.5) or NULL */
    int noreg;          /* 1: no regularizer (the Fed-PLT baselines) */
    int secrets;        /* 1: per-node secret keys (each rank sets its own nodes') */
} kase;

/* Everything a run leaves, gathered on rank 0. */
typedef struct result {
    double state[16][N][D], out[N][D];
    int have[16];
    char ledger[8192];
    int64_t ledger_len, comm[N + 2][3], round;
    double eps;
    int stop;
} result;

static const char *const NAMES[16] = {"x", "z", "s", "m", "xhat", "y", "g", "yhat", "wG",
                                      "lambda", "x0", "h", "xbar", "u", "xs", "v"};

static int run_case(const problem *p, const kase *c, int distributed, result *r, char *why)
{
    dpdo_node *node[N] = {0};
    dpdo_ledger *ledger = NULL;
    dpdo_accountant *acc = NULL;
    dpdo_algorithm *alg = NULL;
    dpdo_compressor *comp = NULL;
    dpdo_policy *pol = NULL;
    dpdo_solver *sv = NULL;
    dpdo_mpi *m = NULL;
    int rc = -1;
    if (distributed && dpdo_mpi_create(&m, MPI_COMM_WORLD, N, NULL, NULL)) {
        snprintf(why, 200, "dpdo_mpi_create failed");
        goto done;
    }
    for (int i = 0; i < N; i++) {
        int here = !m || (i >= dpdo_mpi_first_node(m) && i < dpdo_mpi_end_node(m));
        int e = here ? dpdo_node_create(&node[i], p->shard[i], p->loss, 1.0)
                     : dpdo_node_create_remote(&node[i], p->loss, dpdo_shard_rows(p->shard[i]), 1.0);
        if (e) {
            snprintf(why, 200, "node %d: %s", i, dpdo_loss_errmsg(p->loss));
            goto done;
        }
    }
    if (dpdo_ledger_create(&ledger, N) || dpdo_accountant_create(&acc, dpdo_accountant_type_find("rdp"), NULL, ledger, NULL))
        goto done;
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.seed = 99;
    o.max_rounds = T;
    o.noise_mode = c->mode;
    o.epsilon = 2;
    o.delta = 1e-5;
    o.max_epsilon = INFINITY;
    if (c->mode == DPDO_NOISE_FIXED) o.sigma = 0.05;
    if (dpdo_algorithm_create(&alg, dpdo_algorithm_type_find(c->type))) {
        snprintf(why, 200, "unknown type %s", c->type);
        goto done;
    }
    if (dpdo_algorithm_setup(alg, node, N, p->net, c->noreg ? NULL : p->reg, acc, &o)) {
        snprintf(why, 200, "setup: %s", dpdo_algorithm_errmsg(alg));
        goto done;
    }
    for (int k = 0; k < 4 && c->ikey[k]; k++)
        if (dpdo_algorithm_set_int(alg, (int)c->ikey[k], c->ival[k])) {
            snprintf(why, 200, "set: %s", dpdo_algorithm_errmsg(alg));
            goto done;
        }
    for (int k = 0; k < 4 && c->dkey[k]; k++)
        if (dpdo_algorithm_set_double(alg, c->dkey[k], c->dval[k])) {
            snprintf(why, 200, "set: %s", dpdo_algorithm_errmsg(alg));
            goto done;
        }
    if (c->comp) {
        if (dpdo_compressor_create(&comp, dpdo_compressor_type_find(c->comp), NULL, D) ||
            (c->k && dpdo_compressor_set_k(comp, c->k)) || dpdo_algorithm_set_compressor(alg, comp)) {
            snprintf(why, 200, "compressor: %s", dpdo_algorithm_errmsg(alg));
            goto done;
        }
    }
    if (c->solver) {
        if (dpdo_solver_create(&sv, dpdo_solver_type_find(c->solver), NULL, D) || dpdo_solver_set(sv, "lambda_lo", 0.05) ||
            dpdo_solver_set(sv, "lambda_hi", 1.0) || dpdo_solver_set(sv, "step", 0.5) || dpdo_algorithm_set_solver(alg, sv)) {
            snprintf(why, 200, "solver: %s", dpdo_algorithm_errmsg(alg));
            goto done;
        }
    }
    if (c->policy) {
        if (dpdo_policy_create(&pol, dpdo_policy_type_find(c->policy), NULL, N, D + 2) ||
            dpdo_algorithm_set_policy(alg, pol)) {
            snprintf(why, 200, "policy: %s", dpdo_algorithm_errmsg(alg));
            goto done;
        }
    }
    if (c->secrets)
        for (int i = 0; i < N; i++)
            if ((!m || (i >= dpdo_mpi_first_node(m) && i < dpdo_mpi_end_node(m))) &&
                dpdo_algorithm_set_node_secret(alg, i, UINT64_C(0x5eed000000000000) + 7919u * (uint64_t)i)) {
                snprintf(why, 200, "secret: %s", dpdo_algorithm_errmsg(alg));
                goto done;
            }
    if (m && dpdo_mpi_attach(m, alg, p->net)) {
        snprintf(why, 200, "attach: %s", dpdo_mpi_errmsg(m));
        goto done;
    }
    int s;
    while ((s = dpdo_algorithm_step(alg)) == DPDO_ROUND) {
    }
    if (s != DPDO_DONE) {
        snprintf(why, 200, "step: %d %s", s, dpdo_algorithm_errmsg(alg));
        goto done;
    }
    if (dpdo_algorithm_share_state(alg)) {
        snprintf(why, 200, "share_state: %s", dpdo_algorithm_errmsg(alg));
        goto done;
    }
    memset(r, 0, sizeof *r);
    for (int b = 0; b < 16; b++) {
        r->have[b] = 1;
        for (int i = 0; i < N; i++)
            if (dpdo_algorithm_get_state(alg, NAMES[b], i, r->state[b][i], D)) r->have[b] = 0;
    }
    for (int i = 0; i < N; i++) dpdo_algorithm_get_output(alg, i, r->out[i], D);
    dpdo_ledger_save(ledger, r->ledger, sizeof r->ledger, &r->ledger_len);
    for (int i = 0; i < N; i++) dpdo_algorithm_comm(alg, i, &r->comm[i][0], &r->comm[i][1], &r->comm[i][2]);
    dpdo_algorithm_comm(alg, DPDO_NODE_COORDINATOR, &r->comm[N][0], &r->comm[N][1], &r->comm[N][2]);
    r->round = dpdo_algorithm_round(alg);
    r->stop = dpdo_algorithm_stop_reason(alg);
    if (m && c->mode != DPDO_NOISE_NONE) { /* the notes say whether the noise is secret */
        int warned = strstr(dpdo_algorithm_privacy_notes(alg), "no secret key") != NULL;
        if (warned != !c->secrets) {
            snprintf(why, 200, "privacy notes: secret-key warning %s", warned ? "given with secrets" : "missing");
            goto done;
        }
    }
    r->eps = NAN;
    if (c->mode != DPDO_NOISE_NONE) dpdo_algorithm_privacy(alg, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &r->eps, NULL, NULL);
    rc = 0;
done:
    dpdo_algorithm_destroy(alg);
    dpdo_mpi_destroy(m);
    dpdo_compressor_destroy(comp);
    dpdo_policy_destroy(pol);
    dpdo_solver_destroy(sv);
    dpdo_accountant_destroy(acc);
    dpdo_ledger_destroy(ledger);
    for (int i = 0; i < N; i++) dpdo_node_destroy(node[i]);
    return rc;
}

static int same(const result *a, const result *b, char *why)
{
    for (int k = 0; k < 16; k++) {
        if (a->have[k] != b->have[k]) return snprintf(why, 200, "state %s present in one run only", NAMES[k]), 0;
        if (a->have[k] && memcmp(a->state[k], b->state[k], sizeof a->state[k])) {
            for (int i = 0; i < N; i++)
                for (int j = 0; j < D; j++)
                    if (memcmp(&a->state[k][i][j], &b->state[k][i][j], sizeof(double)))
                        return snprintf(why, 200, "state %s[%d][%d]: %.17g vs %.17g", NAMES[k], i, j,
                                        a->state[k][i][j], b->state[k][i][j]),
                               0;
        }
    }
    if (memcmp(a->out, b->out, sizeof a->out)) return snprintf(why, 200, "outputs differ"), 0;
    if (a->ledger_len != b->ledger_len || memcmp(a->ledger, b->ledger, (size_t)a->ledger_len))
        return snprintf(why, 200, "ledgers differ"), 0;
    if (memcmp(a->comm, b->comm, sizeof a->comm)) return snprintf(why, 200, "counters differ"), 0;
    if (a->round != b->round || a->stop != b->stop) return snprintf(why, 200, "rounds differ"), 0;
    if (memcmp(&a->eps, &b->eps, sizeof a->eps)) return snprintf(why, 200, "epsilon %.17g vs %.17g", a->eps, b->eps), 0;
    return 1;
}

#define I2(k1, v1, k2, v2) .ikey = {k1, k2}, .ival = {v1, v2}
static const kase CASES[] = {
    {.name = "dp-dda matching", .type = "dp-dda", .mode = DPDO_NOISE_RIGOROUS, I2(DPDO_PARAM_DDA_ACTIVE, 4, 0, 0)},
    {.name = "dp-dda average", .type = "dp-dda", .mode = DPDO_NOISE_RIGOROUS,
     I2(DPDO_PARAM_DDA_ACTIVE, 5, DPDO_PARAM_DDA_SCHEME, DPDO_ROUND_AVERAGE)},
    {.name = "dp-dda all-transmit", .type = "dp-dda", .mode = DPDO_NOISE_FIXED,
     I2(DPDO_PARAM_DDA_ALL_TRANSMIT, 1, DPDO_PARAM_DDA_SCHEME, DPDO_ROUND_BERNOULLI),
     .dkey = {DPDO_PARAM_DDA_BERNOULLI_P}, .dval = {0.5}},
    {.name = "dp-dda-baseline", .type = "dp-dda-baseline", .mode = DPDO_NOISE_RIGOROUS},
    {.name = "fed-plt", .type = "fed-plt", .mode = DPDO_NOISE_RIGOROUS, I2(DPDO_PARAM_FED_EPOCHS, 3, 0, 0),
     .dkey = {DPDO_PARAM_FED_P}, .dval = {0.6}, .solver = "noisy-gd"},
    {.name = "fed-plt uniform", .type = "fed-plt", .mode = DPDO_NOISE_NONE,
     I2(DPDO_PARAM_FED_SAMPLER, DPDO_FED_SAMPLER_UNIFORM, DPDO_PARAM_FED_ACTIVE, 3), .solver = "gd"},
    {.name = "fedpd", .type = "fedpd", .mode = DPDO_NOISE_NONE, .noreg = 1, .solver = "gd"},
    {.name = "fedlin", .type = "fedlin", .mode = DPDO_NOISE_NONE, .noreg = 1, .solver = "gd"},
    {.name = "tamuna", .type = "tamuna", .mode = DPDO_NOISE_NONE, I2(DPDO_PARAM_FED_ACTIVE, 5, 0, 0), .noreg = 1,
     .solver = "gd"},
    {.name = "led", .type = "led", .mode = DPDO_NOISE_NONE, .noreg = 1, .solver = "gd"},
    {.name = "5gcs", .type = "5gcs", .mode = DPDO_NOISE_NONE, I2(DPDO_PARAM_FED_ACTIVE, 5, 0, 0), .noreg = 1,
     .solver = "gd"},
    {.name = "do-adp top-k", .type = "do-adp", .mode = DPDO_NOISE_RIGOROUS, .dkey = {DPDO_PARAM_ADP_P}, .dval = {0.7},
     .comp = "top-k", .k = 4},
    {.name = "do-adp dense", .type = "do-adp", .mode = DPDO_NOISE_FIXED, .dkey = {DPDO_PARAM_ADP_P}, .dval = {0.5}},
    {.name = "dpdo", .type = "dpdo", .mode = DPDO_NOISE_RIGOROUS},
    {.name = "cpgt rand-k", .type = "cpgt", .mode = DPDO_NOISE_RIGOROUS, .comp = "rand-k", .k = 5},
    {.name = "dp-wor-sgd dqn", .type = "dp-wor-sgd", .mode = DPDO_NOISE_RIGOROUS, I2(DPDO_PARAM_WOR_PASSES, 2, 0, 0),
     .policy = "dqn"},
    {.name = "dp-wor-sgd sequential", .type = "dp-wor-sgd", .mode = DPDO_NOISE_RIGOROUS,
     I2(DPDO_PARAM_WOR_SCHEDULE, DPDO_WOR_SEQUENTIAL, 0, 0)},
    {.name = "dp-sgd-wr", .type = "dp-sgd-wr", .mode = DPDO_NOISE_RIGOROUS},
    {.name = "dp-dda tolerance stop", .type = "dp-dda", .mode = DPDO_NOISE_NONE, I2(DPDO_PARAM_CHECK_EVERY, 3, 0, 0),
     .dkey = {DPDO_PARAM_TOL}, .dval = {0.3}},
    {.name = "dp-dda secrets", .type = "dp-dda", .mode = DPDO_NOISE_RIGOROUS, I2(DPDO_PARAM_DDA_ACTIVE, 4, 0, 0), .secrets = 1},
    {.name = "fed-plt dp-init secrets", .type = "fed-plt", .mode = DPDO_NOISE_RIGOROUS,
     I2(DPDO_PARAM_FED_EPOCHS, 2, DPDO_PARAM_FED_DP_INIT, 1), .dkey = {DPDO_PARAM_FED_P}, .dval = {0.6},
     .solver = "noisy-gd", .secrets = 1},
    {.name = "do-adp secrets", .type = "do-adp", .mode = DPDO_NOISE_RIGOROUS, .dkey = {DPDO_PARAM_ADP_P}, .dval = {0.7},
     .comp = "top-k", .k = 4, .secrets = 1},
    {.name = "dp-wor-sgd dqn secrets", .type = "dp-wor-sgd", .mode = DPDO_NOISE_RIGOROUS,
     I2(DPDO_PARAM_WOR_PASSES, 2, 0, 0), .policy = "dqn", .secrets = 1},
    {.name = "dp-sgd-wr secrets", .type = "dp-sgd-wr", .mode = DPDO_NOISE_RIGOROUS, .secrets = 1},
};

/* A loss that fails on every sample: node 5's. */
static int phi_fail(void *user, double margin, double label, double *loss, double *dloss)
{
    (void)user, (void)margin, (void)label, (void)loss, (void)dloss;
    return 7;
}

/* Failures. kind 0: node 5's loss callback fails in round 1; every rank must get DPDO_E_CALLBACK
 * and the one-process message. kind 1: only the last rank's prepare fails (it sets clip = inf
 * with L below its data's gradient norms); attach must fail on every rank with that message.
 * kind 2: the last rank stops taking part; the others must get DPDO_E_IO within the timeout. */
static int failure(const problem *p, int kind, char *why)
{
    static const dpdo_loss_type bad_type = {.struct_size = sizeof(dpdo_loss_type), .name = "fails", .phi = phi_fail};
    dpdo_loss *bad = NULL;
    dpdo_node *node[N] = {0};
    dpdo_algorithm *alg = NULL, *one = NULL;
    dpdo_mpi *m = NULL;
    int ok = 0;
    dpdo_mpi_options mo;
    dpdo_mpi_options_init(&mo, sizeof mo);
    mo.timeout = 2.0;
    if (dpdo_loss_create(&bad, &bad_type, NULL, D) || dpdo_mpi_create(&m, MPI_COMM_WORLD, N, NULL, &mo)) goto done;
    for (int pass = 0; pass < 2; pass++) { /* pass 0: one process (rank 0 only); pass 1: distributed */
        if (pass == 0 && (kind != 0 || rank != 0)) continue;
        for (int i = 0; i < N; i++) {
            dpdo_node_destroy(node[i]);
            node[i] = NULL;
            dpdo_loss *l = kind == 0 && i == 5 ? bad : p->loss;
            int here = pass == 0 || (i >= dpdo_mpi_first_node(m) && i < dpdo_mpi_end_node(m));
            if (here ? dpdo_node_create(&node[i], p->shard[i], l, 1.0) : dpdo_node_create_remote(&node[i], l, 40, 1.0))
                goto done;
        }
        dpdo_algorithm_options o;
        dpdo_algorithm_options_init(&o, sizeof o);
        o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
        o.noise_mode = DPDO_NOISE_NONE;
        o.max_rounds = 5;
        dpdo_algorithm **a = pass ? &alg : &one;
        if (dpdo_algorithm_create(a, dpdo_algorithm_type_find("dp-dda-baseline")) ||
            dpdo_algorithm_setup(*a, node, N, p->net, p->reg, NULL, &o))
            goto done;
        if (pass == 0) { /* the reference message */
            if (dpdo_algorithm_step(one) != DPDO_E_CALLBACK) goto done;
            continue;
        }
        if (kind == 1 && rank == nranks - 1) {
            o.noise_mode = DPDO_NOISE_FIXED; /* only this rank: a private run with L = 0.01 and no clipping */
            o.sigma = 1;
            o.lipschitz = 0.01;
            o.clip = INFINITY;
            dpdo_ledger *led = NULL;
            dpdo_accountant *acc = NULL;
            dpdo_ledger_create(&led, N);
            dpdo_accountant_create(&acc, dpdo_accountant_type_find("rdp"), NULL, led, NULL);
            int rc = dpdo_algorithm_setup(alg, node, N, p->net, p->reg, acc, &o);
            int arc = rc ? rc : dpdo_mpi_attach(m, alg, p->net);
            ok = arc == DPDO_E_INVAL && strstr(dpdo_algorithm_errmsg(alg), "per-sample gradients") != NULL;
            if (!ok) snprintf(why, 200, "last rank: attach gave %d: %s", arc, dpdo_algorithm_errmsg(alg));
            dpdo_algorithm_destroy(alg);
            alg = NULL;
            dpdo_accountant_destroy(acc);
            dpdo_ledger_destroy(led);
            goto done;
        }
        int arc = dpdo_mpi_attach(m, alg, p->net);
        if (kind == 2 && !arc) { /* two rounds together, then the last rank stops taking part */
            if (dpdo_algorithm_step(alg) != DPDO_ROUND || dpdo_algorithm_step(alg) != DPDO_ROUND) {
                snprintf(why, 200, "rank %d: the first rounds failed: %s", rank, dpdo_algorithm_errmsg(alg));
                goto done;
            }
            if (rank == nranks - 1) {
                ok = 1;
                goto done;
            }
        }
        if (kind == 1) {
            ok = arc == DPDO_E_INVAL && strstr(dpdo_algorithm_errmsg(alg), "per-sample gradients") != NULL;
            if (!ok) snprintf(why, 200, "rank %d: attach gave %d: %s", rank, arc, dpdo_algorithm_errmsg(alg));
            goto done;
        }
        if (kind == 2) {
            double t0 = MPI_Wtime();
            int rc = arc ? arc : dpdo_algorithm_step(alg);
            double waited = MPI_Wtime() - t0;
            char msg[256];
            snprintf(msg, sizeof msg, "%s", dpdo_algorithm_errmsg(alg));
            if (rc == DPDO_E_IO) rc = dpdo_algorithm_step(alg) == DPDO_E_STATE ? rc : -999; /* FAILED: E_STATE */
            ok = rc == DPDO_E_IO && waited < 10 && dpdo_algorithm_state(alg) == DPDO_ALG_FAILED;
            snprintf(why, 200, "rank %d: step gave %d after %.2f s: %s", rank, rc, waited, msg + (strlen(msg) > 150 ? strlen(msg) - 150 : 0));
            goto done;
        }
        int rc = arc ? arc : dpdo_algorithm_step(alg);
        char ref[256] = "";
        if (rank == 0) snprintf(ref, sizeof ref, "%s", dpdo_algorithm_errmsg(one));
        MPI_Bcast(ref, sizeof ref, MPI_CHAR, 0, MPI_COMM_WORLD);
        ok = rc == DPDO_E_CALLBACK && strcmp(dpdo_algorithm_errmsg(alg), ref) == 0 && strstr(ref, "node 5") &&
             dpdo_algorithm_state(alg) == DPDO_ALG_FAILED && dpdo_algorithm_step(alg) == DPDO_E_STATE;
        if (!ok) snprintf(why, 200, "rank %d: step gave %d '%.80s', one process '%.80s'", rank, rc, dpdo_algorithm_errmsg(alg), ref);
    }
done:
    dpdo_algorithm_destroy(alg);
    dpdo_algorithm_destroy(one);
    if (kind != 2) dpdo_mpi_destroy(m); /* a broken handle's communicator has pending operations */
    for (int i = 0; i < N; i++) dpdo_node_destroy(node[i]);
    dpdo_loss_destroy(bad);
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (rank == 0) printf("# test_mpi with %d ranks\n", nranks);
    problem p;
    if (make_problem(&p)) {
        if (rank == 0) printf("not ok 1 - problem setup\n# summary: 0 passed, 1 failed\n");
        MPI_Finalize();
        return 1;
    }
    static result ref, dist;
    const char *only = getenv("DPDO_MPI_TEST_ONLY");
    if (getenv("DPDO_MPI_TEST_VANISH")) { /* a separate run: afterwards the processes are out of step */
        char why[256] = "";
        int ok = failure(&p, 2, why);
        fflush(stdout);
        if (rank != 0) sleep(8); /* the vanished rank comes back after the others gave up */
        if (rank == 0) {
            printf("%s 1 - a rank that stops taking part gives DPDO_E_IO on the others within the timeout (2 s)%s%s\n",
                   ok ? "ok" : "not ok", ok ? "" : ": ", ok ? "" : why);
            printf("# %s\n# summary: %d passed, %d failed\n", why, ok, !ok);
            fflush(stdout);
            sleep(1); /* let mpiexec forward the output */
        }
        MPI_Abort(MPI_COMM_WORLD, ok ? 0 : 1); /* the only way out of a broken run */
    }
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        const kase *c = &CASES[k];
        if (only && !strstr(c->name, only)) continue;
        char why[256] = "", name[128];
        int ok = 1;
        if (rank == 0 && run_case(&p, c, 0, &ref, why)) ok = 0;
        MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (ok && run_case(&p, c, 1, &dist, why)) ok = 0;
        if (ok && rank == 0 && !same(&ref, &dist, why)) ok = 0;
        snprintf(name, sizeof name, "%s: %d ranks bit-identical to one process (%lld rounds, stop reason %d)", c->name,
                 nranks, (long long)ref.round, ref.stop);
        report(ok, name, why);
    }
    if (!only) { /* bad input of the MPI handle */
        dpdo_mpi *m = NULL;
        dpdo_mpi_options mo;
        int64_t first_bad[64];
        for (int r = 0; r <= nranks && r < 64; r++) first_bad[r] = r == nranks ? N - 1 : 0;
        int ok = dpdo_mpi_options_init(NULL, sizeof mo) == DPDO_E_INVAL &&
                 dpdo_mpi_options_init(&mo, 4) == DPDO_E_VERSION && dpdo_mpi_options_init(&mo, sizeof mo) == DPDO_OK &&
                 mo.timeout == 60 && mo.root == 0;
        { /* the options rule (docs/abi.md): newer structs with a zero tail, older ones */
            struct {
                dpdo_mpi_options o;
                int64_t tail[2];
            } big;
            memset(&big, 0x55, sizeof big);
            ok &= dpdo_mpi_options_init(&big.o, sizeof big) == DPDO_OK && big.tail[0] == 0 && big.tail[1] == 0 &&
                  big.o.timeout == 60 && big.o.reserved[3] == 0;
            big.tail[1] = 7; /* a field of a newer release this library does not know */
            ok &= dpdo_mpi_create(&m, MPI_COMM_WORLD, N, NULL, &big.o) == DPDO_E_VERSION && m == NULL;
            big.tail[1] = 0;
            big.o.reserved[2] = 1;
            ok &= dpdo_mpi_create(&m, MPI_COMM_WORLD, N, NULL, &big.o) == DPDO_E_VERSION && m == NULL;
            big.o.reserved[2] = 0;
            big.o.struct_size = sizeof(size_t); /* the oldest layout: all defaults (collective create) */
            ok &= dpdo_mpi_create(&m, MPI_COMM_WORLD, N, NULL, &big.o) == DPDO_OK;
            dpdo_mpi_destroy(m);
            m = NULL;
        }
        ok &= dpdo_mpi_create(&m, MPI_COMM_WORLD, 0, NULL, NULL) == DPDO_E_INVAL && m == NULL;
        ok &= dpdo_mpi_create(&m, MPI_COMM_WORLD, N, first_bad, NULL) == DPDO_E_INVAL && m == NULL;
        mo.timeout = 0;
        ok &= dpdo_mpi_create(&m, MPI_COMM_WORLD, N, NULL, &mo) == DPDO_E_INVAL;
        mo.timeout = 1, mo.root = nranks;
        ok &= dpdo_mpi_create(&m, MPI_COMM_WORLD, N, NULL, &mo) == DPDO_E_INVAL;
        ok &= dpdo_mpi_rank(NULL) == -1 && dpdo_mpi_size(NULL) == -1 && strcmp(dpdo_mpi_errmsg(NULL), "dpdo_mpi_errmsg: m is NULL") == 0;
        ok &= dpdo_mpi_traffic(NULL, NULL, NULL, NULL) == DPDO_E_INVAL && dpdo_mpi_attach(NULL, NULL, NULL) == DPDO_E_INVAL;
        dpdo_mpi_destroy(NULL);
        /* a handle for 2N nodes cannot carry a run of N */
        ok &= dpdo_mpi_create(&m, MPI_COMM_WORLD, 2 * N, NULL, NULL) == DPDO_OK;
        ok &= dpdo_mpi_size(m) == nranks && dpdo_mpi_rank(m) == rank;
        dpdo_algorithm *alg = NULL;
        dpdo_node *nd[N];
        for (int i = 0; i < N; i++) dpdo_node_create(&nd[i], p.shard[i], p.loss, 1.0);
        dpdo_algorithm_create(&alg, dpdo_algorithm_type_find("dp-dda"));
        dpdo_algorithm_options o;
        dpdo_algorithm_options_init(&o, sizeof o);
        o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
        o.noise_mode = DPDO_NOISE_NONE;
        dpdo_algorithm_setup(alg, nd, N, p.net, p.reg, NULL, &o);
        ok &= dpdo_mpi_attach(m, alg, p.net) == DPDO_E_INVAL && strstr(dpdo_mpi_errmsg(m), "nodes") != NULL;
        dpdo_algorithm_destroy(alg);
        for (int i = 0; i < N; i++) dpdo_node_destroy(nd[i]);
        dpdo_mpi_destroy(m);
        report(ok, "libdpdo_mpi: bad input gives DPDO_E_INVAL / E_VERSION and a message", "");
    }
    if (!only) {
        char why[256] = "";
        int ok = failure(&p, 0, why);
        report(ok, "a node's failing loss callback fails the round on every rank with the one-process message", why);
        why[0] = 0;
        ok = nranks < 2 || failure(&p, 1, why);
        report(ok, "a configuration error found by one rank fails attach on every rank with its message", why);
    }
    for (int i = 0; i < N; i++) dpdo_shard_destroy(p.shard[i]);
    dpdo_dataset_destroy(p.ds);
    dpdo_loss_destroy(p.loss);
    dpdo_regularizer_destroy(p.reg);
    dpdo_network_destroy(p.net);
    if (rank == 0) printf("# summary: %d passed, %d failed\n", passed, failed);
    MPI_Finalize();
    return failed ? 1 : 0;
}
