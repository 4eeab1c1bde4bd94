/* SPDX-License-Identifier: BSD-3-Clause */
/* The noise plan and the prepare stage (docs/architecture.md, "Lifecycle: setup -> prepare ->
 * step"), over every registered algorithm type:
 *  - noise_plan_golden: everything prepare decides about privacy, per type, over the four noise
 *    modes x strict x two epsilons x two horizons x both randomness modes (prepare's status,
 *    sigma's bits, the rigorous and the paper epsilon and delta with their validity, the planned
 *    releases; for reproducible runs also every output bit and the epsilon after the run), reduced
 *    to a 64-bit FNV-1a hash and compared with the value recorded on the code before the
 *    privacy-critical switch of Fed-PLT, DP-SGD-WR, DPDO and CPGT moved into dpdo__eng_noise_plan
 *    (commit c4c89c7). Notes and message texts are not hashed (they may gain caveats or
 *    citations without a number changing). A type not in the table is run and its hash printed;
 *    DPDO_NOISE_GOLDEN_PRINT=1 prints the whole table.
 *  - prepare_explicit_is_implicit: dpdo_algorithm_prepare followed by the steps gives the same
 *    statuses, outputs and epsilon, bit for bit, as the steps alone (the first step prepares). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpdo/dpdo.h"
#include "harness.h"

enum { N = 4, Q = 20, D = 5 };

typedef struct {
    uint64_t h;
} fnv;
static void fnv_add(fnv *f, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) f->h = (f->h ^ b[i]) * 0x100000001b3ull;
}
static void fnv_i64(fnv *f, int64_t v) { fnv_add(f, &v, sizeof v); }
static void fnv_f64(fnv *f, double v) { fnv_add(f, &v, sizeof v); }

static double X[N * Q * D], Y[N * Q];
static dpdo_dataset *ds;
static dpdo_loss *loss;
static dpdo_shard *sh[N];
static dpdo_network *net;
static dpdo_regularizer *reg;

static void fixture(void)
{
    uint64_t s = 0x6a09e667f3bcc909ull;
    for (int i = 0; i < N * Q; i++) {
        double nn = 0;
        for (int k = 0; k < D; k++) {
            X[i * D + k] = h_urand(&s) * 2 - 1;
            nn += X[i * D + k] * X[i * D + k];
        }
        for (int k = 0; k < D; k++) X[i * D + k] /= sqrt(nn) + 1e-3; /* rows of norm < 1 */
        Y[i] = h_urand(&s) < 0.5 ? -1 : 1;
    }
    CHECK_EQ(dpdo_dataset_create(&ds), DPDO_OK);
    CHECK_EQ(dpdo_dataset_set_dense(ds, N * Q, D, X, Y, DPDO_COPY), DPDO_OK);
    CHECK_EQ(dpdo_loss_create(&loss, dpdo_loss_type_find("logistic"), NULL, D), DPDO_OK);
    for (int i = 0; i < N; i++) CHECK_EQ(dpdo_shard_create_range(&sh[i], ds, (int64_t)i * Q, Q), DPDO_OK);
    CHECK_EQ(dpdo_network_create(&net), DPDO_OK);
    CHECK_EQ(dpdo_network_set_complete(net, N), DPDO_OK);
    double lam = 0.05;
    CHECK_EQ(dpdo_regularizer_create(&reg, dpdo_regularizer_type_find("l2"), NULL, D, &lam, 1), DPDO_OK);
}

static void fixture_free(void)
{
    dpdo_regularizer_destroy(reg);
    dpdo_network_destroy(net);
    for (int i = 0; i < N; i++) dpdo_shard_destroy(sh[i]);
    dpdo_loss_destroy(loss);
    dpdo_dataset_destroy(ds);
}

typedef struct run {
    dpdo_node *nodes[N];
    dpdo_ledger *led;
    dpdo_accountant *acc;
    dpdo_solver *sol;
    dpdo_algorithm *a;
} run;

/* setup with the options; the types whose problem differs (the Fed baselines: no regularizer;
 * Fed-PLT: a noisy-gd solver with its strong-convexity bounds, so Proposition 4 applies) get it */
static int run_make(run *r, const dpdo_algorithm_type *t, const dpdo_algorithm_options *o)
{
    memset(r, 0, sizeof *r);
    const char *name = dpdo_algorithm_type_name(t);
    int fed_base = !strcmp(name, "fedpd") || !strcmp(name, "fedlin") || !strcmp(name, "tamuna") ||
                   !strcmp(name, "led") || !strcmp(name, "5gcs");
    for (int i = 0; i < N; i++) CHECK_EQ(dpdo_node_create(&r->nodes[i], sh[i], loss, 1.0), DPDO_OK);
    CHECK_EQ(dpdo_ledger_create(&r->led, N), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&r->acc, dpdo_accountant_type_find("rdp"), NULL, r->led, NULL), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_create(&r->a, t), DPDO_OK);
    int rc = dpdo_algorithm_setup(r->a, r->nodes, N, net, fed_base ? NULL : reg, r->acc, o);
    if (rc) return rc;
    if (!strcmp(name, "5gcs")) {
        CHECK_EQ(dpdo_algorithm_set_double(r->a, DPDO_PARAM_5GCS_TAU, 1.0), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_set_double(r->a, DPDO_PARAM_5GCS_LOCAL_STEP, 0.5), DPDO_OK);
    }
    if (!strcmp(name, "fed-plt")) {
        CHECK_EQ(dpdo_solver_create(&r->sol, dpdo_solver_type_find("noisy-gd"), NULL, D), DPDO_OK);
        CHECK_EQ(dpdo_solver_set(r->sol, "lambda_lo", 0.05), DPDO_OK);
        CHECK_EQ(dpdo_solver_set(r->sol, "lambda_hi", 1.0), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_set_solver(r->a, r->sol), DPDO_OK);
    }
    return DPDO_OK;
}

static void run_free(run *r)
{
    dpdo_algorithm_destroy(r->a);
    dpdo_solver_destroy(r->sol);
    dpdo_accountant_destroy(r->acc);
    dpdo_ledger_destroy(r->led);
    for (int i = 0; i < N; i++) dpdo_node_destroy(r->nodes[i]);
}

static void opts_of(dpdo_algorithm_options *o, int mode, int secure, int strict, double eps, int64_t T)
{
    dpdo_algorithm_options_init(o, sizeof *o);
    o->randomness = secure ? DPDO_RANDOMNESS_SECURE : DPDO_RANDOMNESS_REPRODUCIBLE;
    o->seed = 31;
    o->max_rounds = T;
    o->epsilon = eps;
    o->batch = 2;
    o->step_size = 0.5;
    o->noise_mode = mode;
    o->strict = strict;
    if (mode == DPDO_NOISE_FIXED) o->sigma = 1.3;
}

/* the privacy figures of a prepared (or finished) run */
static void hash_privacy(fnv *h, dpdo_algorithm *a)
{
    for (int kind = DPDO_PRIVACY_RIGOROUS; kind <= DPDO_PRIVACY_PAPER; kind++) {
        double eps = NAN, del = NAN;
        int32_t valid = -1;
        int rc = dpdo_algorithm_privacy(a, kind, DPDO_NODE_ALL, &eps, &del, &valid);
        fnv_i64(h, rc);
        if (!rc) fnv_f64(h, eps), fnv_f64(h, del), fnv_i64(h, valid);
    }
}

static void hash_outputs(fnv *h, dpdo_algorithm *a)
{
    double x[D];
    for (int64_t i = 0; i < N; i++) {
        int rc = dpdo_algorithm_get_output(a, i, x, D);
        fnv_i64(h, rc);
        if (!rc) fnv_add(h, x, sizeof x);
    }
}

static uint64_t type_hash(const dpdo_algorithm_type *t)
{
    static const int modes[] = {DPDO_NOISE_NONE, DPDO_NOISE_PAPER, DPDO_NOISE_RIGOROUS, DPDO_NOISE_FIXED};
    static const double epss[] = {4.0, 0.7};
    static const int64_t Ts[] = {6, 1};
    fnv h = {0xcbf29ce484222325ull};
    for (int mi = 0; mi < 4; mi++)
        for (int secure = 0; secure < 2; secure++)
            for (int strict = 0; strict < 2; strict++)
                for (int ei = 0; ei < 2; ei++)
                    for (int Ti = 0; Ti < 2; Ti++) {
                        dpdo_algorithm_options o;
                        opts_of(&o, modes[mi], secure, strict, epss[ei], Ts[Ti]);
                        run r;
                        int rc = run_make(&r, t, &o);
                        fnv_i64(&h, rc);
                        if (!rc) rc = dpdo_algorithm_prepare(r.a);
                        fnv_i64(&h, rc);
                        if (!rc) {
                            double sigma = NAN;
                            int64_t planned = -1;
                            fnv_i64(&h, dpdo_algorithm_get_double(r.a, DPDO_PARAM_SIGMA, &sigma));
                            fnv_f64(&h, sigma);
                            fnv_i64(&h, dpdo_algorithm_planned_releases(r.a, DPDO_NODE_ALL, &planned));
                            fnv_i64(&h, planned);
                            hash_privacy(&h, r.a);
                            if (!secure) { /* secure draws are not reproducible */
                                int s;
                                while ((s = dpdo_algorithm_step(r.a)) == DPDO_ROUND) continue;
                                fnv_i64(&h, s);
                                fnv_i64(&h, dpdo_algorithm_round(r.a));
                                fnv_i64(&h, dpdo_algorithm_stop_reason(r.a));
                                hash_outputs(&h, r.a);
                                hash_privacy(&h, r.a);
                            }
                        }
                        run_free(&r);
                    }
    return h.h;
}

/* Recorded on commit c4c89c7 (before the switch moved) with DPDO_NOISE_GOLDEN_PRINT=1. */
static const struct {
    const char *name;
    uint64_t h;
} GOLDEN[] = {
    {"dp-dda", 0x05be236a72ac1ddbull},
    {"dp-dda-baseline", 0x74bed38777757c7bull},
    {"fed-plt", 0xfe318e0f260c5ecdull},
    {"fedpd", 0x1abf033e23675a65ull},
    {"fedlin", 0x2af8f827ae56bfe5ull},
    {"tamuna", 0x596afde020c3c8c5ull},
    {"led", 0xde21100d79dd4385ull},
    {"5gcs", 0xbe670616262970e5ull},
    {"dp-wor-sgd", 0x84e862fcf7ce4d0aull},
    {"dp-sgd-wr", 0x408f5a145d1a8096ull},
    {"do-adp", 0x2b7f19acbe1fdfd9ull},
    {"dpdo", 0xae53b8a5e57f4dadull},
    {"cpgt", 0x7b66ebea48d2868dull},
};

static void noise_plan_golden(void)
{
    int print = getenv("DPDO_NOISE_GOLDEN_PRINT") != NULL, seen = 0;
    for (const dpdo_algorithm_type *t = dpdo_algorithm_type_next(NULL); t; t = dpdo_algorithm_type_next(t)) {
        const char *name = dpdo_algorithm_type_name(t);
        uint64_t h = type_hash(t);
        if (print) printf("    {\"%s\", 0x%016llxull},\n", name, (unsigned long long)h);
        size_t k = 0, n = sizeof GOLDEN / sizeof *GOLDEN;
        while (k < n && strcmp(GOLDEN[k].name, name)) k++;
        if (k == n) {
            printf("# %s: no recorded hash (a new type?): 0x%016llx\n", name, (unsigned long long)h);
            continue;
        }
        seen++;
        CHECK_MSG(h == GOLDEN[k].h, "%s: noise plan hash 0x%016llx, recorded 0x%016llx", name,
                  (unsigned long long)h, (unsigned long long)GOLDEN[k].h);
    }
    CHECK_EQ(seen, (int)(sizeof GOLDEN / sizeof *GOLDEN)); /* every recorded type still exists */
}

static void prepare_explicit_is_implicit(void)
{
    static const int modes[] = {DPDO_NOISE_NONE, DPDO_NOISE_PAPER, DPDO_NOISE_RIGOROUS};
    for (const dpdo_algorithm_type *t = dpdo_algorithm_type_next(NULL); t; t = dpdo_algorithm_type_next(t))
        for (int mi = 0; mi < 3; mi++) {
            fnv h[2] = {{0xcbf29ce484222325ull}, {0xcbf29ce484222325ull}};
            int first[2] = {0, 0};
            for (int explicit_ = 0; explicit_ < 2; explicit_++) {
                dpdo_algorithm_options o;
                opts_of(&o, modes[mi], 0, 0, 4.0, 6);
                run r;
                int rc = run_make(&r, t, &o);
                CHECK_EQ(rc, DPDO_OK);
                if (!rc) {
                    /* explicit: prepare's status (a refusal leaves the handle READY, and the
                     * steps then meet the same refusal) */
                    int s = explicit_ ? dpdo_algorithm_prepare(r.a) : DPDO_ROUND;
                    CHECK_EQ(dpdo_algorithm_state(r.a), DPDO_ALG_READY);
                    CHECK_EQ(dpdo_algorithm_round(r.a), 0);
                    int s1 = dpdo_algorithm_step(r.a);
                    first[explicit_] = explicit_ && s ? s : s1;
                    for (s = s1; s == DPDO_ROUND;) s = dpdo_algorithm_step(r.a);
                    fnv_i64(&h[explicit_], s);
                    fnv_i64(&h[explicit_], dpdo_algorithm_round(r.a));
                    hash_outputs(&h[explicit_], r.a);
                    hash_privacy(&h[explicit_], r.a);
                }
                run_free(&r);
            }
            CHECK_MSG(first[0] == first[1] && h[0].h == h[1].h,
                      "%s, noise mode %d: implicit prepare (first status %d, hash %016llx) differs "
                      "from explicit (%d, %016llx)",
                      dpdo_algorithm_type_name(t), modes[mi], first[0], (unsigned long long)h[0].h,
                      first[1], (unsigned long long)h[1].h);
        }
}

int main(void)
{
    fixture();
    RUN(noise_plan_golden);
    RUN(prepare_explicit_is_implicit);
    fixture_free();
    return h_finish();
}
