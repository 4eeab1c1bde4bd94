/* SPDX-License-Identifier: BSD-3-Clause */
/* One way to set each setting (docs/api-zones.md): nine settings are both an options field and
 * a parameter key (max_rounds, step_size, step_power, tol, check_every, max_epsilon, batch,
 * sigma, clip). The options field is the one way; the key set before the run is a deprecated
 * alias that must give the same run. For each setting, a reproducible private DP-DDA run with
 * the field set and one with the default field and the key set after setup end in the same
 * round with the same stop reason, bit-identical outputs and the same epsilon; and the value
 * the key reads back is the field's. A control run with neither shows that each setting changes
 * the run. */
#include "dpdo/dpdo.h"
#include "fixture.h"
#include "harness.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { N = 4, Q = 60, D = 3 };

typedef struct {
    const char *name;
    int key;
    int is_int;
    double value;
} setting;

static const setting settings[] = {
    {"max_rounds", DPDO_PARAM_MAX_ROUNDS, 1, 17},
    {"step_size", DPDO_PARAM_STEP_SIZE, 0, 0.3},
    {"step_power", DPDO_PARAM_STEP_POWER, 0, 0.75},
    {"tol", DPDO_PARAM_TOL, 0, 0.05},
    {"check_every", DPDO_PARAM_CHECK_EVERY, 1, 3},
    {"max_epsilon", DPDO_PARAM_MAX_EPSILON, 0, 0.85},
    {"batch", DPDO_PARAM_BATCH, 1, 4},
    {"sigma", DPDO_PARAM_SIGMA, 0, 0.9},
    {"clip", DPDO_PARAM_CLIP, 0, 0.5},
};

static void set_field(dpdo_algorithm_options *o, int key, double v)
{
    switch (key) {
    case DPDO_PARAM_MAX_ROUNDS: o->max_rounds = (int64_t)v; break;
    case DPDO_PARAM_STEP_SIZE: o->step_size = v; break;
    case DPDO_PARAM_STEP_POWER: o->step_power = v; break;
    case DPDO_PARAM_TOL: o->tol = v; break;
    case DPDO_PARAM_CHECK_EVERY: o->check_every = (int64_t)v; break;
    case DPDO_PARAM_MAX_EPSILON: o->max_epsilon = v; break;
    case DPDO_PARAM_BATCH: o->batch = (int64_t)v; break;
    case DPDO_PARAM_SIGMA: o->sigma = v; break;
    case DPDO_PARAM_CLIP: o->clip = v; break;
    }
}

typedef struct {
    int64_t rounds;
    int stop;
    double out[D], eps, readback;
} result;

static double X[N * Q * D], Y[N * Q];

/* by_key: 0 the field, 1 the key, 2 neither (the default, for the control) */
static void run_once(const setting *s, int by_key, result *r)
{
    dpdo_dataset *ds;
    dpdo_loss *loss;
    dpdo_shard *sh[N];
    dpdo_node *nodes[N];
    tfx_nodes_make(X, Y, N, Q, D, "logistic", &ds, &loss, sh, nodes);
    dpdo_network *net;
    CHECK_EQ(dpdo_network_create(&net), DPDO_OK);
    CHECK_EQ(dpdo_network_set_ring(net, N), DPDO_OK);
    dpdo_ledger *led;
    dpdo_accountant *acc;
    CHECK_EQ(dpdo_ledger_create(&led, N), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&acc, dpdo_accountant_type_find("rdp"), NULL, led, NULL),
             DPDO_OK);
    dpdo_algorithm *a;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.max_rounds = 40;
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    o.seed = 7;
    if (s->key == DPDO_PARAM_SIGMA) o.noise_mode = DPDO_NOISE_FIXED;
    if (s->key == DPDO_PARAM_SIGMA && by_key) o.sigma = 0.1; /* FIXED needs one; the key wins */
    if (s->key == DPDO_PARAM_CHECK_EVERY) o.tol = 0.05;  /* so that check_every matters */
    if (by_key == 0) set_field(&o, s->key, s->value);
    CHECK_EQ(dpdo_algorithm_setup(a, nodes, N, net, NULL, acc, &o), DPDO_OK);
    if (by_key == 1) {
        int rc = s->is_int ? dpdo_algorithm_set_int(a, s->key, (int64_t)s->value)
                           : dpdo_algorithm_set_double(a, s->key, s->value);
        CHECK_MSG(rc == DPDO_OK, "%s: %s", s->name, dpdo_algorithm_errmsg(a));
    }
    if (s->is_int) {
        int64_t v = -1;
        CHECK_EQ(dpdo_algorithm_get_int(a, s->key, &v), DPDO_OK);
        r->readback = (double)v;
    } else if (s->key != DPDO_PARAM_SIGMA) { /* sigma reads back the sigma in use */
        CHECK_EQ(dpdo_algorithm_get_double(a, s->key, &r->readback), DPDO_OK);
    }
    int rc = dpdo_algorithm_run(a, 0, NULL);
    CHECK_MSG(rc == DPDO_DONE, "%s: %s", s->name, dpdo_algorithm_errmsg(a));
    r->rounds = dpdo_algorithm_round(a);
    r->stop = dpdo_algorithm_stop_reason(a);
    CHECK_EQ(dpdo_algorithm_get_output(a, DPDO_NODE_ALL, r->out, D), DPDO_OK);
    r->eps = NAN;
    CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &r->eps, NULL, NULL),
             DPDO_OK);
    if (s->key == DPDO_PARAM_SIGMA) CHECK_EQ(dpdo_algorithm_get_double(a, s->key, &r->readback), 0);
    dpdo_algorithm_destroy(a);
    dpdo_accountant_destroy(acc);
    dpdo_ledger_destroy(led);
    dpdo_network_destroy(net);
    tfx_nodes_free(N, ds, loss, sh, nodes);
}

static void field_and_key_agree(void)
{
    uint64_t st = 99;
    for (int i = 0; i < N * Q; i++) {
        for (int k = 0; k < D; k++)
            X[i * D + k] = (h_urand(&st) - 0.5) * 1.2;
        Y[i] = X[i * D] + 0.3 * X[i * D + 1] >= 0 ? 1 : -1;
    }
    for (size_t k = 0; k < sizeof settings / sizeof settings[0]; k++) {
        const setting *s = &settings[k];
        result f, p, c;
        memset(&f, 0, sizeof f);
        memset(&p, 0, sizeof p);
        memset(&c, 0, sizeof c);
        run_once(s, 0, &f);
        run_once(s, 1, &p);
        run_once(s, 2, &c); /* the control: the setting changes the run */
        CHECK_MSG(c.rounds != f.rounds || memcmp(c.out, f.out, sizeof f.out) != 0,
                  "%s: the setting changed nothing", s->name);
        CHECK_MSG(f.rounds == p.rounds && f.stop == p.stop, "%s: rounds %lld/%lld stop %d/%d",
                  s->name, (long long)f.rounds, (long long)p.rounds, f.stop, p.stop);
        CHECK_MSG(memcmp(f.out, p.out, sizeof f.out) == 0, "%s: outputs differ", s->name);
        CHECK_MSG(f.eps == p.eps, "%s: epsilon %.17g vs %.17g", s->name, f.eps, p.eps);
        CHECK_MSG(f.readback == s->value && p.readback == s->value, "%s: read back %g / %g",
                  s->name, f.readback, p.readback);
        printf("# %-11s = %-5g: %lld rounds, stop %d, epsilon %.6g (field and key identical)\n",
               s->name, s->value, (long long)f.rounds, f.stop, f.eps);
    }
}

int main(void)
{
    RUN(field_and_key_agree);
    return h_finish();
}
