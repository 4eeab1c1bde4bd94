/* SPDX-License-Identifier: BSD-3-Clause */
/* Defaults that just work (issue 22): every algorithm type is created with only its required
 * arguments (nodes, the network, an accountant, default options; the non-private baselines also
 * need noise_mode = DPDO_NOISE_NONE, which they ask for by name) on a small valid problem whose
 * rows are NOT normalised (per-sample gradients exceed the default lipschitz = 1), and run to the
 * end with dpdo_algorithm_run, twice:
 *  - default options (a private run, secure randomness): it must end DONE after at least one
 *    round with a finite output and a rigorous epsilon <= the target 1; where the engine derived
 *    a constant (the local solver's lambda_hi, a clipping bound) the privacy notes must say so.
 *    Its objective is not checked: at epsilon = 1 on 1,600 rows the noise of some algorithms'
 *    preset steps dominates, and secure noise differs from run to run;
 *  - the same with noise_mode = DPDO_NOISE_NONE: the derived step sizes must make progress, the
 *    output's objective at least 2% below F(0) = log 2 (all reach far below it). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "dpdo/dpdo.h"
#include "harness.h"
#include "fixture.h"
#include "alg_fixture.h"

enum { N = 4, Q = 400, D = 5 };

static uint64_t tstate = 0x243f6a8885a308d3ull;
static double urand(void) { return h_urand(&tstate); }

typedef struct fx {
    double X[N * Q * D], Y[N * Q];
    dpdo_dataset *ds;
    dpdo_shard *sh[N];
    dpdo_loss *loss;
    dpdo_node *nodes[N];
    dpdo_network *net;
} fx;

/* a separable problem with a margin: y = sign(w* . x), x uniform in [-1.5, 1.5]^D (row norms up
 * to 3.4, so the default lipschitz = 1 does not hold without clipping) */
static void fx_make(fx *f)
{
    memset(f, 0, sizeof *f);
    static const double w[D] = {1.0, -0.5, 0.25, 0.0, 0.75};
    for (int i = 0; i < N * Q; i++) {
        double m = 0;
        for (int k = 0; k < D; k++) {
            f->X[i * D + k] = 3.0 * urand() - 1.5;
            m += w[k] * f->X[i * D + k];
        }
        f->Y[i] = m >= 0 ? 1 : -1;
    }
    tfx_nodes_make(f->X, f->Y, N, Q, D, "logistic", &f->ds, &f->loss, f->sh, f->nodes);
    CHECK_EQ(dpdo_network_create(&f->net), DPDO_OK);
    CHECK_EQ(dpdo_network_set_ring(f->net, N), DPDO_OK);
}

static void fx_free(fx *f)
{
    dpdo_network_destroy(f->net);
    tfx_nodes_free(N, f->ds, f->loss, f->sh, f->nodes);
}

/* one run with the defaults (none = 0) or noise_mode NONE; returns 1 when the type refused a
 * private run as a non-private baseline */
static int run_one(fx *f, const dpdo_algorithm_type *t, int none)
{
    const char *name = dpdo_algorithm_type_name(t);
    dpdo_ledger *led = NULL;
    dpdo_accountant *acc = NULL;
    dpdo_algorithm *a = NULL;
    CHECK_EQ(dpdo_ledger_create(&led, N), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&acc, dpdo_accountant_type_find("auto"), NULL, led, NULL), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_create(&a, t), DPDO_OK);
    dpdo_algorithm_options o, *op = NULL;
    if (none) {
        dpdo_algorithm_options_init(&o, sizeof o);
        o.noise_mode = DPDO_NOISE_NONE;
        op = &o;
    }
    int rc = dpdo_algorithm_setup(a, f->nodes, N, f->net, NULL, acc, op);
    CHECK_MSG(rc == DPDO_OK, "%s: setup: %s", name, dpdo_algorithm_errmsg(a));
    int64_t steps = 0;
    if (!rc) rc = dpdo_algorithm_run(a, 0, &steps);
    int baseline = !none && rc == DPDO_E_UNSUPPORTED && strstr(dpdo_algorithm_errmsg(a), "non-private baseline") &&
                   strstr(dpdo_algorithm_errmsg(a), "DPDO_NOISE_NONE");
    if (!baseline) {
        CHECK_MSG(rc == DPDO_DONE, "%s%s: run: %d %s", name, none ? " (no noise)" : "", rc, dpdo_algorithm_errmsg(a));
        CHECK_MSG(steps >= 1, "%s: %lld rounds", name, (long long)steps);
        double x[D], F = NAN, F0 = NAN, z[D] = {0};
        CHECK_EQ(dpdo_algorithm_get_output(a, DPDO_NODE_ALL, x, D), DPDO_OK);
        int finite = 1;
        for (int k = 0; k < D; k++) finite &= isfinite(x[k]) != 0;
        CHECK_MSG(finite, "%s: the output is not finite", name);
        CHECK_EQ(dpdo_algorithm_objective(a, DPDO_POINT_OUTPUT, DPDO_NODE_ALL, &F), DPDO_OK);
        CHECK_EQ(dpdo_algorithm_objective_at(a, z, D, &F0), DPDO_OK);
        CHECK_MSG(isfinite(F), "%s: F(output) = %g", name, F);
        if (none)
            CHECK_MSG(F < 0.98 * F0, "%s (no noise): F(output) = %g is not below F(0) = %g by 2%% (%lld rounds)", name,
                      F, F0, (long long)steps);
        const char *notes = dpdo_algorithm_privacy_notes(a);
        if (!none) {
            double eps = NAN;
            int32_t valid = 0;
            CHECK_EQ(dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eps, NULL, &valid), DPDO_OK);
            CHECK_MSG(valid && eps > 0 && eps <= 1.0 * (1 + 1e-9), "%s: epsilon %g (valid %d)", name, eps, (int)valid);
        }
        const dpdo__fixture *tf = tfx_alg(name); /* what the type's notes must say */
        if (tf->notes) CHECK_STR_CONTAINS(notes, tf->notes);
        if (!none && tf->notes_private) CHECK_STR_CONTAINS(notes, tf->notes_private);
        printf("# %-16s %s %5lld rounds, F = %.4f (F(0) = %.4f)%s%.160s\n", name, none ? "no noise" : "private ",
               (long long)steps, F, F0, notes[0] ? "; notes: " : "", notes);
    }
    dpdo_algorithm_destroy(a);
    dpdo_accountant_destroy(acc);
    dpdo_ledger_destroy(led);
    return baseline;
}

static void every_type_with_defaults(void)
{
    fx f;
    fx_make(&f);
    int k = 0, baselines = 0;
    for (const dpdo_algorithm_type *t = dpdo_algorithm_type_next(NULL); t; t = dpdo_algorithm_type_next(t), k++) {
        baselines += run_one(&f, t, 0);
        run_one(&f, t, 1);
    }
    CHECK(k >= 13); /* every registered type */
    /* the non-private baselines refuse the default (private) run: those their fixtures name (in
     * 0.2: fedpd, fedlin, tamuna, led, 5gcs) */
    int nonprivate = 0;
    for (const dpdo_algorithm_type *t = dpdo_algorithm_type_next(NULL); t; t = dpdo_algorithm_type_next(t))
        nonprivate += tfx_alg_nonprivate(dpdo_algorithm_type_name(t));
    CHECK_EQ(nonprivate, 5);
    CHECK_EQ(baselines, nonprivate);
    fx_free(&f);
}

int main(void)
{
    RUN(every_type_with_defaults);
    return h_finish();
}
