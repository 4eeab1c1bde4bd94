/* SPDX-License-Identifier: BSD-3-Clause */
/* Listing the parameters from C (dpdo_algorithm_type_param_next, dpdo_param_live,
 * dpdo_param_doc; issue 22): for every algorithm type the listed keys are exactly the keys
 * 1..999 that a set-up algorithm of that type accepts (dpdo_algorithm_get_*), each listed once,
 * common keys first, with a name, a type, a live flag and a doc line that agree with the other
 * dpdo_param_* facts, and a type-level default (dpdo_algorithm_type_param_default) equal to the
 * value the set-up algorithm starts with; the error cases (NULL type, a key not of the type,
 * unknown keys); dpdo_param_find gives every listed key back from its name. Keys the library
 * assigns (>= 65536, parameters of an algorithm without DPDO_PARAM_* constants) are checked like the
 * others. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "dpdo/dpdo.h"
#include "harness.h"
#include "fixture.h"

enum { N = 3, Q = 8, D = 3 };

typedef struct fx {
    double X[N * Q * D], Y[N * Q];
    dpdo_dataset *ds;
    dpdo_shard *sh[N];
    dpdo_loss *loss;
    dpdo_node *nodes[N];
    dpdo_network *net;
    dpdo_ledger *led;
    dpdo_accountant *acc;
} fx;

static void fx_make(fx *f)
{
    memset(f, 0, sizeof *f);
    for (int i = 0; i < N * Q; i++) {
        for (int k = 0; k < D; k++) f->X[i * D + k] = ((i * 7 + k * 3) % 11) / 11.0 - 0.5;
        f->Y[i] = i % 2 ? 1 : -1;
    }
    tfx_nodes_make(f->X, f->Y, N, Q, D, "logistic", &f->ds, &f->loss, f->sh, f->nodes);
    CHECK_EQ(dpdo_network_create(&f->net), DPDO_OK);
    CHECK_EQ(dpdo_network_set_complete(f->net, N), DPDO_OK);
    CHECK_EQ(dpdo_ledger_create(&f->led, N), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&f->acc, dpdo_accountant_type_find("rdp"), NULL, f->led, NULL), DPDO_OK);
}

static void fx_free(fx *f)
{
    dpdo_accountant_destroy(f->acc);
    dpdo_ledger_destroy(f->led);
    dpdo_network_destroy(f->net);
    tfx_nodes_free(N, f->ds, f->loss, f->sh, f->nodes);
}

/* the listing of one type agrees with what a set-up algorithm of that type accepts */
static int check_type(fx *f, const dpdo_algorithm_type *t, int *n_own)
{
    const char *tn = dpdo_algorithm_type_name(t);
    static char listed[1000];
    memset(listed, 0, sizeof listed);
    int n = 0, last_common = 1, common = 0;
    int autok[64], nauto = 0; /* keys the library assigned (>= 65536; reached by name) */
    for (int k = dpdo_algorithm_type_param_next(t, 0); k != 0; k = dpdo_algorithm_type_param_next(t, k)) {
        CHECK_MSG((k > 0 && k < 1000) || k >= 65536, "%s: key %d", tn, k);
        if (k <= 0 || (k >= 1000 && k < 65536) || nauto == 64) return 0;
        if (k >= 65536) {
            for (int j = 0; j < nauto; j++) CHECK_MSG(autok[j] != k, "%s: key %d listed twice", tn, k);
            autok[nauto++] = k;
        } else {
            CHECK_MSG(!listed[k], "%s: key %d listed twice", tn, k);
            listed[k] = 1;
        }
        n++;
        /* the name finds the key back */
        CHECK_MSG(dpdo_param_find(dpdo_param_name(k)) == k, "%s: dpdo_param_find(\"%s\") = %d, not %d", tn,
                  dpdo_param_name(k) ? dpdo_param_name(k) : "?", dpdo_param_find(dpdo_param_name(k)), k);
        if (k < 100) {
            CHECK_MSG(last_common, "%s: common key %d after an algorithm key", tn, k);
            common++;
        } else {
            last_common = 0;
        }
        const char *name = dpdo_param_name(k), *doc = dpdo_param_doc(k);
        CHECK_MSG(name && strlen(name) > 0, "%s: key %d has no name", tn, k);
        CHECK_MSG(doc && strlen(doc) > 10, "%s: key %d (%s) has no doc", tn, k, name ? name : "?");
        int ty = dpdo_param_type(k), live = dpdo_param_live(k);
        CHECK_MSG(ty == 0 || ty == 1, "%s: key %d type %d", tn, k, ty);
        CHECK_MSG(live == 0 || live == 1, "%s: key %d live %d", tn, k, live);
        double lo = NAN, hi = NAN;
        CHECK_EQ(dpdo_param_bounds(k, &lo, &hi), DPDO_OK);
        CHECK_MSG(lo <= hi, "%s: %s bounds [%g, %g]", tn, name, lo, hi);
    }
    CHECK_MSG(common == 11, "%s: %d common keys, expected the 11 of algorithm.h", tn, common);
    *n_own = n - common;
    /* every key the algorithm accepts is listed, and nothing else */
    dpdo_algorithm *a = NULL;
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    o.noise_mode = DPDO_NOISE_NONE;
    CHECK_EQ(dpdo_algorithm_create(&a, t), DPDO_OK);
    int rc = dpdo_algorithm_setup(a, f->nodes, N, f->net, NULL, f->acc, &o);
    CHECK_MSG(rc == DPDO_OK, "%s: setup: %s", tn, dpdo_algorithm_errmsg(a));
    int accepted = 0;
    for (int k = 1; k < 1000; k++) {
        int64_t iv;
        double dv;
        int g = dpdo_param_type(k) == 0 ? dpdo_algorithm_get_int(a, k, &iv) : dpdo_algorithm_get_double(a, k, &dv);
        int ok = g == DPDO_OK;
        accepted += ok;
        CHECK_MSG(ok == listed[k], "%s: key %d (%s): get gives %d but the listing %s it", tn, k,
                  dpdo_param_name(k) ? dpdo_param_name(k) : "unknown", g, listed[k] ? "has" : "lacks");
        if (!ok) CHECK_MSG(g == DPDO_E_UNSUPPORTED || dpdo_param_type(k) < 0, "%s: key %d: %d", tn, k, g);
    }
    for (int j = 0; j < nauto; j++) {
        int64_t iv;
        double dv;
        int k = autok[j];
        int g = dpdo_param_type(k) == 0 ? dpdo_algorithm_get_int(a, k, &iv) : dpdo_algorithm_get_double(a, k, &dv);
        CHECK_MSG(g == DPDO_OK, "%s: key %d (%s): get gives %d", tn, k, dpdo_param_name(k), g);
        accepted += g == DPDO_OK;
    }
    CHECK_EQ(accepted, n);
    /* the type-level default of every listed key is the value a fresh algorithm starts with */
    for (int k = dpdo_algorithm_type_param_next(t, 0); k > 0; k = dpdo_algorithm_type_param_next(t, k)) {
        double def = -7, cur;
        int64_t iv = 0;
        CHECK_EQ(dpdo_algorithm_type_param_default(t, k, N, &def), DPDO_OK);
        if (dpdo_param_type(k) == 0) {
            CHECK_EQ(dpdo_algorithm_get_int(a, k, &iv), DPDO_OK);
            cur = (double)iv;
        } else {
            CHECK_EQ(dpdo_algorithm_get_double(a, k, &cur), DPDO_OK);
        }
        CHECK_MSG(def == cur || (isnan(def) && isnan(cur)), "%s: %s: type-level default %.17g, instance %.17g", tn,
                  dpdo_param_name(k), def, cur);
    }
    /* a key of the listing that is not the type's: refused */
    for (int k = 100; k < 1000; k++)
        if (!listed[k] && dpdo_param_name(k)) {
            CHECK_EQ(dpdo_algorithm_type_param_next(t, k), DPDO_E_INVAL);
            break;
        }
    dpdo_algorithm_destroy(a);
    return n;
}

static void test_listing_matches_acceptance(void)
{
    fx f;
    fx_make(&f);
    int types = 0, total_own = 0, seen[1000] = {0};
    for (const dpdo_algorithm_type *t = dpdo_algorithm_type_next(NULL); t; t = dpdo_algorithm_type_next(t)) {
        int own = 0;
        int n = check_type(&f, t, &own);
        printf("# %-16s %2d keys (%d own)\n", dpdo_algorithm_type_name(t), n, own);
        total_own += own;
        for (int k = dpdo_algorithm_type_param_next(t, 0); k > 0; k = dpdo_algorithm_type_param_next(t, k))
            if (k < 1000) seen[k] = 1; /* keys the library assigns (>= 65536) are not pinned */
        types++;
    }
    CHECK(types >= 13); /* the 13 of 0.2 and any added since */
    CHECK(total_own > 0);
    /* every named key of algorithm.h is listed by at least one type */
    for (int k = 1; k < 1000; k++)
        if (dpdo_param_name(k)) CHECK_MSG(seen[k], "key %d (%s) is listed by no type", k, dpdo_param_name(k));
    fx_free(&f);
}

static void test_known_facts_and_errors(void)
{
    const dpdo_algorithm_type *dda = dpdo_algorithm_type_find("dp-dda");
    CHECK(dda != NULL);
    CHECK_EQ(dpdo_algorithm_type_param_next(NULL, 0), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_type_param_next(dda, 0), DPDO_PARAM_MAX_ROUNDS);
    CHECK_EQ(dpdo_algorithm_type_param_next(dda, 12345), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_type_param_next(dda, DPDO_PARAM_ADP_P), DPDO_E_INVAL); /* DO-ADP's, not DP-DDA's */
    /* the last key ends the listing */
    int last = 0;
    for (int k = dpdo_algorithm_type_param_next(dda, 0); k > 0; k = dpdo_algorithm_type_param_next(dda, k)) last = k;
    CHECK(last >= 100);
    CHECK_EQ(dpdo_algorithm_type_param_next(dda, last), 0);
    CHECK_EQ(dpdo_param_live(DPDO_PARAM_MAX_ROUNDS), 1);
    CHECK_EQ(dpdo_param_live(DPDO_PARAM_TOL), 1);
    CHECK_EQ(dpdo_param_live(DPDO_PARAM_DDA_ACTIVE), 0);
    CHECK_EQ(dpdo_param_live(0), -1);
    CHECK_EQ(dpdo_param_live(-5), -1);
    CHECK(dpdo_param_doc(0) == NULL);
    CHECK(dpdo_param_doc(104) == NULL); /* a gap in DP-DDA's range */
    CHECK(strstr(dpdo_param_doc(DPDO_PARAM_ADP_BETA), "0.15") != NULL);
    /* defaults without an instance: some depend on the number of nodes */
    double v = 0;
    const dpdo_algorithm_type *base = dpdo_algorithm_type_find("dp-dda-baseline");
    CHECK_EQ(dpdo_algorithm_type_param_default(dda, DPDO_PARAM_DDA_ACTIVE, 1, &v), DPDO_OK);
    CHECK(v == 1);
    CHECK_EQ(dpdo_algorithm_type_param_default(dda, DPDO_PARAM_DDA_ACTIVE, 10, &v), DPDO_OK);
    CHECK(v == 2);
    CHECK_EQ(dpdo_algorithm_type_param_default(base, DPDO_PARAM_DDA_ACTIVE, 10, &v), DPDO_OK);
    CHECK(v == 10);
    CHECK_EQ(dpdo_algorithm_type_param_default(dda, DPDO_PARAM_MAX_ROUNDS, 10, &v), DPDO_OK);
    CHECK(v == 1000);
    CHECK_EQ(dpdo_algorithm_type_param_default(dda, DPDO_PARAM_STEP_SIZE, 10, &v), DPDO_OK);
    CHECK(isnan(v));
    CHECK_EQ(dpdo_algorithm_type_param_default(dda, DPDO_PARAM_ADP_P, 10, &v), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_algorithm_type_param_default(dda, DPDO_PARAM_DDA_ACTIVE, 0, &v), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_type_param_default(NULL, DPDO_PARAM_DDA_ACTIVE, 4, &v), DPDO_E_INVAL);
    CHECK_EQ(dpdo_algorithm_type_param_default(dda, DPDO_PARAM_DDA_ACTIVE, 4, NULL), DPDO_E_INVAL);
    /* names to keys */
    CHECK_EQ(dpdo_param_find("dda-active"), DPDO_PARAM_DDA_ACTIVE);
    CHECK_EQ(dpdo_param_find("max-rounds"), DPDO_PARAM_MAX_ROUNDS);
    CHECK_EQ(dpdo_param_find("5gcs-local-step"), DPDO_PARAM_5GCS_LOCAL_STEP);
    CHECK_EQ(dpdo_param_find("no-such-parameter"), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_param_find(""), DPDO_E_UNSUPPORTED);
    CHECK_EQ(dpdo_param_find(NULL), DPDO_E_INVAL);
    /* DO-ADP lists its three own keys */
    const dpdo_algorithm_type *adp = dpdo_algorithm_type_find("do-adp");
    int own[3], n = 0;
    for (int k = dpdo_algorithm_type_param_next(adp, 0); k > 0; k = dpdo_algorithm_type_param_next(adp, k))
        if (k >= 100 && n < 3) own[n++] = k;
    CHECK_EQ(n, 3);
    if (n == 3) {
        CHECK_EQ(own[0], DPDO_PARAM_ADP_P);
        CHECK_EQ(own[1], DPDO_PARAM_ADP_BETA);
        CHECK_EQ(own[2], DPDO_PARAM_ADP_GAMMA);
    }
}

int main(void)
{
    RUN(test_listing_matches_acceptance);
    RUN(test_known_facts_and_errors);
    return h_finish();
}
