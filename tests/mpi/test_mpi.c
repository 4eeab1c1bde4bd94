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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dpdo/dpdo.h>
#include <dpdo/mpi.h>
#include "engine/engine_impl.h" /* the types' test fixtures (dpdo__fixture) */
#include "../../examples/muffliato.h"

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

/* Types by name: the built-ins, and "muffliato", a user algorithm type (examples/muffliato.h) made
 * in main() */
static dpdo_algorithm_type *muff_type;
static muff_config muff_cfg = {MUFF_GD, 2, 1.0, 0};
static const dpdo_algorithm_type *find_type(const char *name)
{
    return strcmp(name, "muffliato") == 0 ? muff_type : dpdo_algorithm_type_find(name);
}

static const char *const NAMES[16] = {"x", "z", "s", "m", "xhat", "y", "g", "yhat", "wG",
                                      "lambda", "x0", "h", "xbar", "u", "xs", "v"};

/* Everything a run holds. */
typedef struct run_ctx {
    dpdo_node *node[N];
    dpdo_ledger *ledger;
    dpdo_accountant *acc;
    dpdo_algorithm *alg;
    dpdo_compressor *comp;
    dpdo_policy *pol;
    dpdo_solver *sv;
    dpdo_mpi *m;
} run_ctx;

static void teardown(run_ctx *x)
{
    dpdo_algorithm_destroy(x->alg);
    dpdo_mpi_destroy(x->m);
    dpdo_compressor_destroy(x->comp);
    dpdo_policy_destroy(x->pol);
    dpdo_solver_destroy(x->sv);
    dpdo_accountant_destroy(x->acc);
    dpdo_ledger_destroy(x->ledger);
    for (int i = 0; i < N; i++) dpdo_node_destroy(x->node[i]);
    memset(x, 0, sizeof *x);
}

/* Set up case c (over the ranks of comm when distributed) up to and including attach; seed:
 * options.seed. Returns 0, or -1 with why. */
static const int64_t *build_first; /* the layout of the next build (NULL: balanced blocks) */

static int build(const problem *p, const kase *c, int distributed, MPI_Comm comm, uint64_t seed, run_ctx *x, char *why)
{
    memset(x, 0, sizeof *x);
    int rc = -1;
    if (distributed && dpdo_mpi_create(&x->m, comm, N, build_first, NULL)) {
        snprintf(why, 200, "dpdo_mpi_create failed");
        goto done;
    }
    for (int i = 0; i < N; i++) {
        int here = !x->m || (i >= dpdo_mpi_first_node(x->m) && i < dpdo_mpi_end_node(x->m));
        int e = here ? dpdo_node_create(&x->node[i], p->shard[i], p->loss, 1.0)
                     : dpdo_node_create_remote(&x->node[i], p->loss, dpdo_shard_rows(p->shard[i]), 1.0);
        if (e) {
            snprintf(why, 200, "node %d: %s", i, dpdo_loss_errmsg(p->loss));
            goto done;
        }
    }
    if (dpdo_ledger_create(&x->ledger, N) || dpdo_accountant_create(&x->acc, dpdo_accountant_type_find("rdp"), NULL, x->ledger, NULL))
        goto done;
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE; /* bit-identical reruns */
    o.seed = seed;
    o.max_rounds = T;
    o.noise_mode = c->mode;
    o.epsilon = 2;
    o.delta = 1e-5;
    o.max_epsilon = INFINITY;
    if (c->mode == DPDO_NOISE_FIXED) o.sigma = 0.05;
    if (dpdo_algorithm_create(&x->alg, find_type(c->type))) {
        snprintf(why, 200, "unknown type %s", c->type);
        goto done;
    }
    if (dpdo_algorithm_setup(x->alg, x->node, N, p->net, c->noreg ? NULL : p->reg, x->acc, &o)) {
        snprintf(why, 200, "setup: %s", dpdo_algorithm_errmsg(x->alg));
        goto done;
    }
    for (int k = 0; k < 4 && c->ikey[k]; k++)
        if (dpdo_algorithm_set_int(x->alg, (int)c->ikey[k], c->ival[k])) {
            snprintf(why, 200, "set: %s", dpdo_algorithm_errmsg(x->alg));
            goto done;
        }
    for (int k = 0; k < 4 && c->dkey[k]; k++)
        if (dpdo_algorithm_set_double(x->alg, c->dkey[k], c->dval[k])) {
            snprintf(why, 200, "set: %s", dpdo_algorithm_errmsg(x->alg));
            goto done;
        }
    if (c->comp) {
        if (dpdo_compressor_create(&x->comp, dpdo_compressor_type_find(c->comp), NULL, D) ||
            (c->k && dpdo_compressor_set_k(x->comp, c->k)) || dpdo_algorithm_set_compressor(x->alg, x->comp)) {
            snprintf(why, 200, "compressor: %s", dpdo_algorithm_errmsg(x->alg));
            goto done;
        }
    }
    if (c->solver) {
        if (dpdo_solver_create(&x->sv, dpdo_solver_type_find(c->solver), NULL, D) || dpdo_solver_set(x->sv, "lambda_lo", 0.05) ||
            dpdo_solver_set(x->sv, "lambda_hi", 1.0) || dpdo_solver_set(x->sv, "step", 0.5) || dpdo_algorithm_set_solver(x->alg, x->sv)) {
            snprintf(why, 200, "solver: %s", dpdo_algorithm_errmsg(x->alg));
            goto done;
        }
    }
    if (c->policy) {
        if (dpdo_policy_create(&x->pol, dpdo_policy_type_find(c->policy), NULL, N, D + 2) ||
            dpdo_algorithm_set_policy(x->alg, x->pol)) {
            snprintf(why, 200, "policy: %s", dpdo_algorithm_errmsg(x->alg));
            goto done;
        }
    }
    if (c->secrets)
        for (int i = 0; i < N; i++)
            if ((!x->m || (i >= dpdo_mpi_first_node(x->m) && i < dpdo_mpi_end_node(x->m))) &&
                dpdo_algorithm_set_node_secret(x->alg, i, UINT64_C(0x5eed000000000000) + 7919u * (uint64_t)i)) {
                snprintf(why, 200, "secret: %s", dpdo_algorithm_errmsg(x->alg));
                goto done;
            }
    if (x->m && dpdo_mpi_attach(x->m, x->alg, p->net)) {
        snprintf(why, 200, "attach: %s", dpdo_mpi_errmsg(x->m));
        goto done;
    }
    rc = 0;
done:
    return rc;
}

/* A checkpoint in the middle of a run: after `at` rounds the run is saved to `path` (with `key`
 * when not NULL), torn down, set up again and resumed from the file. */
typedef struct ckpt_plan {
    int64_t at;
    const char *path;
    const unsigned char *key;
} ckpt_plan;

static int run_case_ck(const problem *p, const kase *c, int distributed, result *r, char *why, const ckpt_plan *cp)
{
    run_ctx x;
    int rc = -1;
    if (build(p, c, distributed, MPI_COMM_WORLD, 99, &x, why)) goto done;
    dpdo_algorithm *alg = x.alg;
    dpdo_mpi *m = x.m;
    dpdo_ledger *ledger = x.ledger;
    if (cp) {
        dpdo_checkpoint_options co;
        dpdo_checkpoint_options_init(&co, sizeof co);
        co.key = cp->key;
        int s = DPDO_ROUND;
        while (dpdo_algorithm_round(alg) < cp->at && (s = dpdo_algorithm_step(alg)) == DPDO_ROUND) {
        }
        if (s != DPDO_ROUND && s != DPDO_DONE) {
            snprintf(why, 200, "step before the save: %d %s", s, dpdo_algorithm_errmsg(alg));
            goto done;
        }
        if (dpdo_algorithm_save(alg, cp->path, &co)) {
            snprintf(why, 200, "save: %s", dpdo_algorithm_errmsg(alg));
            goto done;
        }
        teardown(&x); /* as if the processes had ended */
        if (build(p, c, distributed, MPI_COMM_WORLD, 99, &x, why)) goto done;
        alg = x.alg, m = x.m, ledger = x.ledger;
        if (dpdo_algorithm_load(alg, cp->path, &co)) {
            snprintf(why, 200, "load: %s", dpdo_algorithm_errmsg(alg));
            goto done;
        }
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
    teardown(&x);
    return rc;
}

static int run_case(const problem *p, const kase *c, int distributed, result *r, char *why)
{
    return run_case_ck(p, c, distributed, r, why, NULL);
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
    {.name = "muffliato (user type)", .type = "muffliato", .mode = DPDO_NOISE_RIGOROUS, .noreg = 1},
    {.name = "muffliato (user type) secrets", .type = "muffliato", .mode = DPDO_NOISE_RIGOROUS, .noreg = 1,
     .secrets = 1},
};

/* ---- checkpoints of distributed runs (issue 20) --------------------------------------------- */

static const kase *find_case(const char *name)
{
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++)
        if (strcmp(CASES[k].name, name) == 0) return &CASES[k];
    return NULL;
}

/* A case of CASES for type tn, or NULL. */
static const kase *find_type_case(const char *tn)
{
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++)
        if (strcmp(CASES[k].type, tn) == 0) return &CASES[k];
    return NULL;
}

/* The case of a registered type that CASES does not name, from its fixture (engine_impl.h):
 * rigorous noise unless it is a non-private baseline, its solver and parameters. */
static const kase *fixture_case(const dpdo_algorithm_type *t, kase *c)
{
    static const dpdo__fixture none = {0};
    const dpdo__fixture *f = t->vt->fixture ? t->vt->fixture : &none;
    memset(c, 0, sizeof *c);
    c->name = c->type = dpdo_algorithm_type_name(t);
    c->mode = f->nonprivate ? DPDO_NOISE_NONE : DPDO_NOISE_RIGOROUS;
    c->noreg = f->nonprivate;
    c->solver = f->nonprivate || !f->solver_private ? f->solver : f->solver_private;
    for (int k = 0, ni = 0, nd = 0; k < 4 && f->set[k].name; k++) {
        int key = dpdo_param_find(f->set[k].name);
        if (dpdo_param_type(key) == 0)
            c->ikey[ni] = key, c->ival[ni++] = (int64_t)f->set[k].value;
        else
            c->dkey[nd] = key, c->dval[nd++] = f->set[k].value;
    }
    return c;
}

/* Interrupt at a random round, save (every rank its part, rank 0 the manifest), tear everything
 * down, set up again and resume: the final state, outputs, ledger, counters and epsilon must be
 * byte-identical to the uninterrupted distributed run (itself bit-identical to one process). */
static void ck_resume(const problem *p, const char *dir, unsigned *rng)
{
    static const unsigned char KEY[32] = "host key of the MPI resume test";
    static const struct {
        const char *name;
        int encrypted;
    } R[] = {{"dp-dda matching", 0}, {"do-adp top-k", 0}, {"fed-plt", 0}, {"do-adp secrets", 0}, {"dp-dda secrets", 1}};
    static result ref, ck;
    for (size_t k = 0; k < sizeof R / sizeof R[0]; k++) {
        const kase *c = find_case(R[k].name);
        char why[256] = "", name[200], path[512];
        int ok = c && !run_case(p, c, 1, &ref, why);
        *rng = *rng * 1103515245u + 12345u;
        int64_t at = ok && ref.round > 1 ? 1 + (int64_t)((*rng >> 8) % (unsigned)(ref.round - 1)) : 1;
        snprintf(path, sizeof path, "%s/resume%zu", dir, k);
        ckpt_plan cp = {at, path, R[k].encrypted ? KEY : NULL};
        if (ok && run_case_ck(p, c, 1, &ck, why, &cp)) ok = 0;
        if (ok && !same(&ref, &ck, why)) ok = 0;
        snprintf(name, sizeof name,
                 "checkpoint %s%s: saved at round %lld of %lld on %d ranks, resumed on %d: byte-identical state, "
                 "outputs, ledger, counters",
                 R[k].name, R[k].encrypted ? " (encrypted)" : "", (long long)at, (long long)ref.round, nranks, nranks);
        report(ok, name, why);
    }
}

/* Load `path` into a fresh setup of c over comm: it must be refused with `code` and a message
 * containing `expect` on every rank, and leave the algorithm READY at round 0. */
static int ck_refused(const problem *p, const kase *c, MPI_Comm comm, uint64_t seed, const char *path, int code,
                      const char *expect, char *why)
{
    run_ctx x;
    int ok = 0;
    if (build(p, c, 1, comm, seed, &x, why)) goto done;
    int rc = dpdo_algorithm_load(x.alg, path, NULL);
    const char *msg = dpdo_algorithm_errmsg(x.alg);
    if (rc != code || !strstr(msg, expect)) {
        snprintf(why, 200, "rank %d: load gave %d '%.120s', expected %d with '%s'", rank, rc, msg, code, expect);
        goto done;
    }
    if (dpdo_algorithm_state(x.alg) != DPDO_ALG_READY || dpdo_algorithm_round(x.alg) != 0) {
        snprintf(why, 200, "rank %d: the refused load changed the algorithm", rank);
        goto done;
    }
    /* still usable: one round runs */
    if (dpdo_algorithm_step(x.alg) != DPDO_ROUND) {
        snprintf(why, 200, "rank %d: step after the refused load: %s", rank, dpdo_algorithm_errmsg(x.alg));
        goto done;
    }
    ok = 1;
done:
    teardown(&x);
    return ok;
}

/* Save case c's run after `at` rounds over all ranks to path. */
static int ck_save(const problem *p, const kase *c, int distributed, int64_t at, const char *path, char *why)
{
    run_ctx x;
    int ok = 0;
    if (build(p, c, distributed, MPI_COMM_WORLD, 99, &x, why)) goto done;
    while (dpdo_algorithm_round(x.alg) < at)
        if (dpdo_algorithm_step(x.alg) != DPDO_ROUND) {
            snprintf(why, 200, "step: %s", dpdo_algorithm_errmsg(x.alg));
            goto done;
        }
    if (dpdo_algorithm_save(x.alg, path, NULL)) {
        snprintf(why, 200, "save: %s", dpdo_algorithm_errmsg(x.alg));
        goto done;
    }
    ok = 1;
done:
    teardown(&x);
    return ok;
}

static int copy_file(const char *from, const char *to, long flip)
{
    FILE *f = fopen(from, "rb"), *g = f ? fopen(to, "wb") : NULL;
    int ok = f && g;
    long k = 0;
    for (int ch; ok && (ch = fgetc(f)) != EOF; k++) fputc(k == flip ? ch ^ 1 : ch, g);
    if (f) fclose(f);
    if (g) fclose(g);
    return ok;
}

static void ck_refusals(const problem *p, const char *dir)
{
    const kase *c = find_case("dp-dda matching");
    char why[256] = "", a[512], b[512], pa[600], pb[600], one[512];
    snprintf(a, sizeof a, "%s/setA", dir);
    snprintf(b, sizeof b, "%s/setB", dir);
    snprintf(one, sizeof one, "%s/oneprocess", dir);
    int ok = ck_save(p, c, 1, 7, a, why) && ck_save(p, c, 1, 11, b, why);
    if (rank == 0 && ok) ok = ck_save(p, c, 0, 7, one, why);
    report(ok, "checkpoint refusals: two file sets and a one-process file saved", why);
    if (!ok) return;
    /* another rank count: the set of all ranks loaded over each rank alone */
    why[0] = 0;
    ok = nranks < 2 || ck_refused(p, c, MPI_COMM_SELF, 99, a, DPDO_E_FORMAT, "written by a run over", why);
    report(ok, "checkpoint refused on another rank count (names both counts) on every rank, handle unchanged", why);
    /* another layout, the same rank count: node 0 on rank 0, every other node on the last rank */
    why[0] = 0;
    if (nranks >= 2) {
        int64_t first[65];
        for (int r = 0; r <= nranks && r <= 64; r++) first[r] = r == 0 ? 0 : r == nranks ? N : 1;
        build_first = nranks <= 64 ? first : NULL;
        ok = ck_refused(p, c, MPI_COMM_WORLD, 99, a, DPDO_E_FORMAT, "process of node 1 differs", why);
        build_first = NULL;
    } else {
        ok = 1;
    }
    report(ok, "checkpoint refused on another layout of the nodes over the ranks (names the node) on every rank", why);
    /* another configuration (seed) */
    why[0] = 0;
    ok = ck_refused(p, c, MPI_COMM_WORLD, 100, a, DPDO_E_FORMAT, "option seed differs", why);
    report(ok, "checkpoint refused with another configuration (names the option) on every rank", why);
    /* a one-process file on a distributed run, and a manifest in one process */
    why[0] = 0;
    ok = ck_refused(p, c, MPI_COMM_WORLD, 99, one, DPDO_E_FORMAT, "run in one process", why);
    if (ok && rank == 0) {
        run_ctx x;
        ok = build(p, c, 0, MPI_COMM_WORLD, 99, &x, why) == 0 && dpdo_algorithm_load(x.alg, a, NULL) == DPDO_E_UNSUPPORTED &&
             strstr(dpdo_algorithm_errmsg(x.alg), "manifest") && dpdo_algorithm_round(x.alg) == 0;
        if (!ok) snprintf(why, 200, "one process loading a manifest: %s", x.alg ? dpdo_algorithm_errmsg(x.alg) : "");
        teardown(&x);
    }
    report(ok, "checkpoint: a one-process file refused by a distributed run and a set's manifest by one process", why);
    /* the last rank's part: missing, from another save, edited */
    int last = nranks - 1;
    snprintf(pa, sizeof pa, "%s.p%d", a, last);
    snprintf(pb, sizeof pb, "%s.p%d", b, last);
    char keep[620];
    snprintf(keep, sizeof keep, "%s.keep", pa);
    why[0] = 0;
    if (rank == 0) ok = rename(pa, keep) == 0;
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    ok = ok && ck_refused(p, c, MPI_COMM_WORLD, 99, a, DPDO_E_IO, "cannot open", why);
    report(ok, "checkpoint refused on every rank when one rank's part is missing (names the file)", why);
    why[0] = 0;
    if (rank == 0) ok = copy_file(pb, pa, -1);
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    ok = ok && ck_refused(p, c, MPI_COMM_WORLD, 99, a, DPDO_E_FORMAT, "checksum differs", why);
    report(ok, "checkpoint refused on every rank when one rank's part comes from another save", why);
    why[0] = 0;
    if (rank == 0) ok = copy_file(keep, pa, 300);
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    ok = ok && ck_refused(p, c, MPI_COMM_WORLD, 99, a, DPDO_E_FORMAT, "checksum mismatch", why);
    report(ok, "checkpoint refused on every rank when one rank's part was edited", why);
    /* restored: the set loads again */
    why[0] = 0;
    if (rank == 0) ok = rename(keep, pa) == 0;
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (ok) {
        run_ctx x;
        ok = build(p, c, 1, MPI_COMM_WORLD, 99, &x, why) == 0 && dpdo_algorithm_load(x.alg, a, NULL) == DPDO_OK &&
             dpdo_algorithm_round(x.alg) == 7 && dpdo_algorithm_step(x.alg) == DPDO_ROUND;
        if (!ok) snprintf(why, 200, "rank %d: %s", rank, x.alg ? dpdo_algorithm_errmsg(x.alg) : "");
        teardown(&x);
    }
    report(ok, "checkpoint: the restored set loads and runs on", why);
}

static void checkpoint_tests(const problem *p)
{
    char dir[256] = "";
    if (rank == 0) {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/dpdo-mpi-ckpt-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(dir)) dir[0] = 0;
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (!dir[0]) {
        report(0, "checkpoint tests: a temporary directory", "mkdtemp failed");
        return;
    }
    unsigned seed = 0;
    if (rank == 0) {
        const char *s = getenv("DPDO_TEST_SEED");
        seed = s && *s ? (unsigned)strtoul(s, NULL, 10) : (unsigned)time(NULL) ^ (unsigned)getpid();
        printf("# checkpoint resume rounds drawn with DPDO_TEST_SEED=%u\n", seed);
    }
    MPI_Bcast(&seed, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
    ck_resume(p, dir, &seed);
    ck_refusals(p, dir);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) { /* clean up */
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) printf("# could not remove %s\n", dir);
    }
}

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
    if (dpdo_algorithm_type_define(&MUFF_VTABLE, &muff_cfg, &muff_type)) {
        if (rank == 0) printf("not ok 1 - the muffliato user type\n# summary: 0 passed, 1 failed\n");
        MPI_Finalize();
        return 1;
    }
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
    /* the cases above, then every registered type they do not name, set up by its fixture */
    size_t ncases = sizeof CASES / sizeof CASES[0];
    const dpdo_algorithm_type *t = NULL;
    for (size_t k = 0;; k++) {
        kase fc;
        const kase *c = k < ncases ? &CASES[k] : NULL;
        while (!c && (t = dpdo_algorithm_type_next(t)) != NULL)
            if (!find_type_case(dpdo_algorithm_type_name(t))) c = fixture_case(t, &fc);
        if (!c) break;
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
                 mo.timeout == 60 && mo.root == 0 && mo.spin == 5e-5;
        { /* the options rule (docs/abi.md): newer structs with a zero tail, older ones */
            struct {
                dpdo_mpi_options o;
                int64_t tail[2];
            } big;
            memset(&big, 0x55, sizeof big);
            ok &= dpdo_mpi_options_init(&big.o, sizeof big) == DPDO_OK && big.tail[0] == 0 && big.tail[1] == 0 &&
                  big.o.timeout == 60 && big.o.reserved[2] == 0 && big.o.spin == 5e-5;
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
        mo.spin = -1;
        ok &= dpdo_mpi_create(&m, MPI_COMM_WORLD, N, NULL, &mo) == DPDO_E_INVAL && m == NULL;
        mo.spin = NAN;
        ok &= dpdo_mpi_create(&m, MPI_COMM_WORLD, N, NULL, &mo) == DPDO_E_INVAL && m == NULL;
        { /* a 0.1 caller's options (no spin) are still accepted */
            dpdo_mpi_options old;
            size_t sz01 = offsetof(dpdo_mpi_options, spin);
            ok &= dpdo_mpi_options_init(&old, sz01) == DPDO_OK && old.struct_size == sz01;
            ok &= dpdo_mpi_create(&m, MPI_COMM_WORLD, N, NULL, &old) == DPDO_OK && m != NULL;
            dpdo_mpi_destroy(m);
            m = NULL;
        }
        dpdo_mpi_options_init(&mo, sizeof mo);
        ok &= dpdo_mpi_create(NULL, MPI_COMM_WORLD, N, NULL, NULL) == DPDO_E_INVAL;
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
    if (!only || strstr("checkpoint", only)) checkpoint_tests(&p); /* DPDO_MPI_TEST_ONLY=checkpoint */
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
