/* SPDX-License-Identifier: BSD-3-Clause */
/* What a run says about its own usefulness (docs/privacy.md "Which accountant" and "Choosing
 * delta", docs/python.md "Diagnostics"):
 *  - a NULL accountant type, and a NULL accountant for a noisy run, are refused with a message
 *    naming DPDO_ACCOUNTANT_DEFAULT ("auto");
 *  - options.delta >= 1/n (n rows over all nodes) leaves a privacy note naming 1/n; a delta below
 *    it leaves none;
 *  - rows whose per-sample gradients at x = 0 mostly exceed the clip norm leave the note
 *    "clipping dominates" with the fraction (logistic: |phi'(0)| ||a|| = ||a|| / 2, so rows of
 *    norm 4 are all clipped at clip 1, rows of norm 1 none). */
#include "dpdo/dpdo.h"
#include "fixture.h"
#include "harness.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { N = 4, Q = 100, D = 4 };

/* the problem: rows of norm `norm` (each on one axis, signs varying), labels +-1, on a ring */
typedef struct {
    double X[N * Q * D], Y[N * Q];
    dpdo_dataset *ds;
    dpdo_loss *loss;
    dpdo_shard *sh[N];
    dpdo_node *nodes[N];
    dpdo_network *net;
} prob;

static void prob_make(prob *p, double norm)
{
    for (int i = 0; i < N * Q; i++) {
        for (int k = 0; k < D; k++)
            p->X[i * D + k] = (k == i % D ? norm : 0.0) * (i % 3 ? 1 : -1);
        p->Y[i] = i % 2 ? 1 : -1;
    }
    tfx_nodes_make(p->X, p->Y, N, Q, D, "logistic", &p->ds, &p->loss, p->sh, p->nodes);
    CHECK_EQ(dpdo_network_create(&p->net), DPDO_OK);
    CHECK_EQ(dpdo_network_set_ring(p->net, N), DPDO_OK);
}

static void prob_free(prob *p)
{
    dpdo_network_destroy(p->net);
    tfx_nodes_free(N, p->ds, p->loss, p->sh, p->nodes);
}

/* the notes of a prepared private DP-DDA run over rows of norm `norm` at `delta` */
static void notes_of(double norm, double delta, char *out, size_t cap)
{
    static prob p;
    prob_make(&p, norm);
    dpdo_ledger *led;
    dpdo_accountant *acc;
    CHECK_EQ(dpdo_ledger_create(&led, N), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&acc, dpdo_accountant_type_find(DPDO_ACCOUNTANT_DEFAULT), NULL,
                                    led, NULL),
             DPDO_OK);
    CHECK(strcmp(dpdo_accountant_name(acc), "auto") == 0);
    dpdo_algorithm *a;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.delta = delta;
    o.max_rounds = 50;
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    CHECK_EQ(dpdo_algorithm_setup(a, p.nodes, N, p.net, NULL, acc, &o), DPDO_OK);
    CHECK_MSG(dpdo_algorithm_prepare(a) == DPDO_OK, "prepare: %s", dpdo_algorithm_errmsg(a));
    snprintf(out, cap, "%s", dpdo_algorithm_privacy_notes(a));
    dpdo_algorithm_destroy(a);
    dpdo_accountant_destroy(acc);
    dpdo_ledger_destroy(led);
    prob_free(&p);
}

static void no_implicit_accountant(void)
{
    dpdo_ledger *led;
    dpdo_accountant *acc = (dpdo_accountant *)&led;
    CHECK_EQ(dpdo_ledger_create(&led, N), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&acc, NULL, NULL, led, NULL), DPDO_E_INVAL);
    CHECK(acc == NULL);
    CHECK_STR_CONTAINS(dpdo_ledger_errmsg(led), "DPDO_ACCOUNTANT_DEFAULT");
    CHECK(strcmp(DPDO_ACCOUNTANT_DEFAULT, "auto") == 0);
    dpdo_ledger_destroy(led);

    static prob p;
    prob_make(&p, 1.0);
    dpdo_algorithm *a;
    CHECK_EQ(dpdo_algorithm_create(&a, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_setup(a, p.nodes, N, p.net, NULL, NULL, NULL), DPDO_E_INVAL);
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "needs an accountant");
    CHECK_STR_CONTAINS(dpdo_algorithm_errmsg(a), "DPDO_ACCOUNTANT_DEFAULT");
    dpdo_algorithm_destroy(a);
    prob_free(&p);
}

static void delta_against_the_rows(void)
{
    char notes[2048];
    notes_of(1.0, 0.01, notes, sizeof notes); /* n = 400: 1/n = 0.0025 */
    CHECK_STR_CONTAINS(notes, "delta = 0.01 >= 1/n = 0.0025 (n = 400 records");
    CHECK_STR_CONTAINS(notes, "choose delta < 1/(10 n) = 0.00025");
    notes_of(1.0, 1.0 / 400, notes, sizeof notes); /* exactly 1/n: still a note */
    CHECK_STR_CONTAINS(notes, ">= 1/n");
    notes_of(1.0, 0.99 / 400, notes, sizeof notes);
    CHECK_MSG(!strstr(notes, ">= 1/n"), "a note below 1/n: %.400s", notes);
}

static void clipping_at_the_start(void)
{
    char notes[2048];
    notes_of(16.0, 1e-6, notes, sizeof notes); /* ||a|| / 2 = 8 > 4 x clip 1 for every row */
    CHECK_STR_CONTAINS(notes, "clipping dominates: 100.0% of the per-sample gradients at x = 0 "
                              "exceed 4 times the clip norm 1");
    /* ||a|| / 2 = 2: every gradient is clipped, but keeps half its length (a clip below the
     * typical norm, as adaptive clipping picks it): no note */
    notes_of(4.0, 1e-6, notes, sizeof notes);
    CHECK_MSG(!strstr(notes, "clipping dominates"), "%.400s", notes);
    notes_of(1.0, 1e-6, notes, sizeof notes); /* ||a|| / 2 = 0.5 <= 1: no note */
    CHECK_MSG(!strstr(notes, "clipping dominates"), "%.400s", notes);
    CHECK_MSG(!strstr(notes, ">= 1/n"), "%.400s", notes);
}

int main(void)
{
    RUN(no_implicit_accountant);
    RUN(delta_against_the_rows);
    RUN(clipping_at_the_start);
    return h_finish();
}
