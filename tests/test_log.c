/* SPDX-License-Identifier: BSD-3-Clause */
/* The log callback (include/dpdo/log.h, docs/logging.md): a collecting callback on a private
 * DP-DDA run with three warning conditions (rows of norm 16 at clip 1: "clipping dominates";
 * delta = 0.01 >= 1/n with n = 400 rows; T = 40 below the minimum of DP-DDA's Theorem 1) receives
 *  - every privacy note, one message each, whose "; "-joined text equals
 *    dpdo_algorithm_privacy_notes (the polled set), the three warnings at DPDO_LOG_WARN and the
 *    others at DPDO_LOG_NOTE;
 *  - the calibration decision once, with the sigma the run uses (bit-equal to the sigma getter)
 *    and the accountant;
 *  - one summary when the run stops, with the stop reason, the rounds and the epsilon that
 *    dpdo_algorithm_privacy reports (bit-equal);
 *  - the message of a failed call at DPDO_LOG_ERROR;
 * only on the calling thread (two worker threads run the rounds); min_level filters; the run's
 * output is bit-identical with and without a callback. */
#include "dpdo/dpdo.h"
#include "fixture.h"
#include "harness.h"
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 4, Q = 100, D = 4, T = 40, MAXMSG = 64 };

typedef struct {
    int n;
    int level[MAXMSG];
    char topic[MAXMSG][16];
    char text[MAXMSG][1024];
    pthread_t owner;
    int foreign; /* messages from another thread */
} sink;

static void collect(void *user, int level, const char *topic, const char *message)
{
    sink *s = user;
    if (!pthread_equal(pthread_self(), s->owner)) s->foreign++;
    if (s->n >= MAXMSG) return;
    s->level[s->n] = level;
    snprintf(s->topic[s->n], sizeof s->topic[0], "%s", topic);
    snprintf(s->text[s->n], sizeof s->text[0], "%s", message);
    s->n++;
}

static int count_topic(const sink *s, const char *topic, int *last)
{
    int c = 0;
    for (int k = 0; k < s->n; k++)
        if (strcmp(s->topic[k], topic) == 0) {
            c++;
            if (last) *last = k;
        }
    return c;
}

typedef struct {
    double X[N * Q * D], Y[N * Q];
    dpdo_dataset *ds;
    dpdo_loss *loss;
    dpdo_shard *sh[N];
    dpdo_node *nodes[N];
    dpdo_network *net;
    dpdo_ledger *led;
    dpdo_accountant *acc;
    dpdo_algorithm *a;
} prob;

/* rows of norm 16 on one axis each (signs varying), labels +-1, on a ring; DP-DDA, rigorous */
static void prob_make(prob *p, int threads)
{
    for (int i = 0; i < N * Q; i++) {
        for (int k = 0; k < D; k++)
            p->X[i * D + k] = (k == i % D ? 16.0 : 0.0) * (i % 3 ? 1 : -1);
        p->Y[i] = i % 2 ? 1 : -1;
    }
    tfx_nodes_make(p->X, p->Y, N, Q, D, "logistic", &p->ds, &p->loss, p->sh, p->nodes);
    CHECK_EQ(dpdo_network_create(&p->net), DPDO_OK);
    CHECK_EQ(dpdo_network_set_ring(p->net, N), DPDO_OK);
    CHECK_EQ(dpdo_ledger_create(&p->led, N), DPDO_OK);
    CHECK_EQ(dpdo_accountant_create(&p->acc, dpdo_accountant_type_find(DPDO_ACCOUNTANT_DEFAULT),
                                    NULL, p->led, NULL),
             DPDO_OK);
    CHECK_EQ(dpdo_algorithm_create(&p->a, dpdo_algorithm_type_find("dp-dda")), DPDO_OK);
    dpdo_algorithm_options o;
    dpdo_algorithm_options_init(&o, sizeof o);
    o.delta = 0.01; /* >= 1/400 */
    o.max_rounds = T;
    o.randomness = DPDO_RANDOMNESS_REPRODUCIBLE;
    o.num_threads = threads;
    CHECK_EQ(dpdo_algorithm_setup(p->a, p->nodes, N, p->net, NULL, p->acc, &o), DPDO_OK);
}

static void prob_free(prob *p)
{
    dpdo_algorithm_destroy(p->a);
    dpdo_accountant_destroy(p->acc);
    dpdo_ledger_destroy(p->led);
    dpdo_network_destroy(p->net);
    tfx_nodes_free(N, p->ds, p->loss, p->sh, p->nodes);
}

/* the number after `key` in text, or NaN */
static double number_after(const char *text, const char *key)
{
    const char *at = strstr(text, key);
    return at ? strtod(at + strlen(key), NULL) : NAN;
}

static void notes_calibration_summary(void)
{
    static prob p;
    static sink s;
    memset(&s, 0, sizeof s);
    s.owner = pthread_self();
    prob_make(&p, 2);
    CHECK_EQ(dpdo_algorithm_set_log(p.a, collect, &s, DPDO_LOG_DEBUG), DPDO_OK);
    CHECK_MSG(dpdo_algorithm_prepare(p.a) == DPDO_OK, "%s", dpdo_algorithm_errmsg(p.a));

    /* the notes: the polled text, message by message */
    const char *polled = dpdo_algorithm_privacy_notes(p.a);
    char joined[8192] = "";
    int warns = 0, clip_warn = 0, delta_warn = 0, paper_warn = 0;
    for (int k = 0; k < s.n; k++) {
        if (strcmp(s.topic[k], "note") != 0) continue;
        if (joined[0]) strcat(joined, "; ");
        strcat(joined, s.text[k]);
        CHECK(s.level[k] == DPDO_LOG_NOTE || s.level[k] == DPDO_LOG_WARN);
        if (s.level[k] == DPDO_LOG_WARN) {
            warns++;
            clip_warn += strstr(s.text[k], "clipping dominates") == s.text[k];
            delta_warn += strstr(s.text[k], "delta = ") == s.text[k];
            paper_warn += strstr(s.text[k], "paper bound invalid: T = 40") == s.text[k];
        }
    }
    CHECK_MSG(strcmp(joined, polled) == 0, "log: %.200s\npolled: %.200s", joined, polled);
    CHECK_STR_CONTAINS(polled, "clipping dominates");
    CHECK_STR_CONTAINS(polled, ">= 1/n");
    CHECK_EQ(warns, 3);
    CHECK_EQ(clip_warn, 1);
    CHECK_EQ(delta_warn, 1);
    CHECK_EQ(paper_warn, 1);
    CHECK(count_topic(&s, "note", NULL) >= 3); /* the reproducible-mode note too */

    /* the calibration decision, once, after the notes */
    int cal = -1;
    CHECK_EQ(count_topic(&s, "calibration", &cal), 1);
    CHECK(cal == s.n - 1);
    CHECK_EQ(s.level[cal], DPDO_LOG_INFO);
    double sigma = NAN;
    CHECK_EQ(dpdo_algorithm_get_double(p.a, DPDO_PARAM_SIGMA, &sigma), DPDO_OK);
    CHECK(sigma > 0);
    CHECK_MSG(number_after(s.text[cal], "sigma = ") == sigma, "%s vs %.17g", s.text[cal], sigma);
    CHECK_STR_CONTAINS(s.text[cal], "accountant auto");
    CHECK_STR_CONTAINS(s.text[cal], "noise mode rigorous");
    int64_t planned = 0;
    CHECK_EQ(dpdo_algorithm_planned_releases(p.a, DPDO_NODE_ALL, &planned), DPDO_OK);
    char want[64];
    snprintf(want, sizeof want, "..%lld)", (long long)planned);
    CHECK_STR_CONTAINS(s.text[cal], want);

    /* the run: nothing more until it stops, then one summary */
    int before = s.n, rc;
    while ((rc = dpdo_algorithm_step(p.a)) == DPDO_ROUND)
        CHECK_EQ(s.n, before);
    CHECK_EQ(rc, DPDO_DONE);
    int sum = -1;
    CHECK_EQ(count_topic(&s, "summary", &sum), 1);
    CHECK_EQ(s.level[sum], DPDO_LOG_INFO);
    CHECK_STR_CONTAINS(s.text[sum], "stopped (max rounds) after 40 rounds");
    double eps = NAN, del = NAN;
    CHECK_EQ(dpdo_algorithm_privacy(p.a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eps, &del, NULL),
             DPDO_OK);
    CHECK(eps > 0 && eps <= 1.0 + 1e-9); /* the target epsilon 1, guarded */
    CHECK_MSG(number_after(s.text[sum], "epsilon = ") == eps, "%s vs %.17g", s.text[sum], eps);

    /* a failed call: its message at ERROR */
    CHECK_EQ(dpdo_algorithm_step(p.a), DPDO_E_STATE);
    CHECK_EQ(count_topic(&s, "error", &sum), 1);
    CHECK_EQ(s.level[sum], DPDO_LOG_ERROR);
    CHECK(strcmp(s.text[sum], dpdo_algorithm_errmsg(p.a)) == 0);
    CHECK_EQ(s.foreign, 0);
    CHECK_EQ(dpdo_algorithm_threads(p.a), 2);

    /* a reset run logs its own summary (the calibration stands) */
    CHECK_EQ(dpdo_algorithm_reset(p.a), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_run(p.a, 0, NULL), DPDO_DONE);
    CHECK_EQ(count_topic(&s, "summary", NULL), 2);
    CHECK_EQ(count_topic(&s, "calibration", NULL), 1);
    prob_free(&p);
}

static void min_level_and_identity(void)
{
    static prob p, q;
    static sink s;
    memset(&s, 0, sizeof s);
    s.owner = pthread_self();
    prob_make(&p, 1);
    prob_make(&q, 1);
    CHECK_EQ(dpdo_algorithm_set_log(p.a, collect, &s, DPDO_LOG_WARN), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_run(p.a, 0, NULL), DPDO_DONE); /* step prepares */
    CHECK_EQ(dpdo_algorithm_run(q.a, 0, NULL), DPDO_DONE);
    CHECK_EQ(s.n, 3); /* the three warnings; no notes, calibration or summary */
    for (int k = 0; k < s.n; k++)
        CHECK_EQ(s.level[k], DPDO_LOG_WARN);
    double xp[D], xq[D];
    CHECK_EQ(dpdo_algorithm_get_output(p.a, DPDO_NODE_ALL, xp, D), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_get_output(q.a, DPDO_NODE_ALL, xq, D), DPDO_OK);
    CHECK(memcmp(xp, xq, sizeof xp) == 0);
    /* removed: silent again */
    CHECK_EQ(dpdo_algorithm_set_log(p.a, NULL, NULL, 0), DPDO_OK);
    CHECK_EQ(dpdo_algorithm_step(p.a), DPDO_E_STATE);
    CHECK_EQ(s.n, 3);
    CHECK_EQ(dpdo_algorithm_set_log(NULL, collect, &s, 0), DPDO_E_INVAL);
    CHECK(strcmp(dpdo_log_level_name(DPDO_LOG_WARN), "warning") == 0);
    CHECK(strcmp(dpdo_log_level_name(7), "unknown") == 0);
    prob_free(&p);
    prob_free(&q);
}

int main(void)
{
    RUN(notes_calibration_summary);
    RUN(min_level_and_identity);
    return h_finish();
}
