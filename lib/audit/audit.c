/* SPDX-License-Identifier: BSD-3-Clause */
/* The privacy auditor (dpdo/audit.h, docs/privacy-audit.md): the layer above lib/alg. It builds
 * a problem with a canary, runs an algorithm many times (or once with many canaries) through a
 * one-process transport that records what the canary node sends, scores the view, and turns the
 * attack's success into an epsilon lower bound (stats.c). Engine internals are used for two
 * things only: fresh node keys between runs without a new prepare (the keys the engine reads
 * when it opens a private stream), and the test-build weakening hooks. */
#include "../core/core_impl.h"
#include "../engine/engine_impl.h"
#include "audit_impl.h"
#include "dpdo/dataset.h"
#include "dpdo/loss.h"
#include "dpdo/network.h"
#include "dpdo/node.h"
#include "dpdo/policy.h"
#include "dpdo/regularizer.h"
#include "dpdo/status.h"
#include "dpdo/transport.h"
#include <math.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARAMS 32

struct dpdo_audit {
    char err[DPDO__ERRMSG_LEN];
    int set_up;
    const dpdo_algorithm_type *type;
    dpdo_algorithm_options ao;
    dpdo_audit_options o;
    char acc_name[64], pol_name[64]; /* copies of o.accountant, o.policy */
    int32_t nparam;
    int32_t pkey[MAX_PARAMS];
    double pval[MAX_PARAMS];
    dpdo_audit_progress_fn fn;
    void *user;
    uint32_t weaken;
    int public_keys; /* test build: key each run through dpdo_algorithm_set_node_secret (re-prepare)
                      */
};

/* ---- the canary loss: l(x; a, y) = -y <a, x> (phi kind), gradient -y a ---------------------- */

static int lin_phi(void *user, double m, double y, double *loss, double *dloss)
{
    (void)user;
    *loss = -y * m;
    *dloss = -y;
    return 0;
}
static int lin_bounds(void *user, double mb, double lb, double *d1, double *d2)
{
    (void)user, (void)mb;
    *d1 = lb;
    *d2 = 0;
    return 0;
}
static const dpdo_loss_type linear_loss = {.struct_size = sizeof(dpdo_loss_type),
                                           .name = "audit-linear",
                                           .phi = lin_phi,
                                           .phi_bounds = lin_bounds};

/* ---- options ----------------------------------------------------------------------------- */

DPDO_API int dpdo_audit_options_init(dpdo_audit_options *out, size_t struct_size)
{
    dpdo_audit_options d, *o = &d;
    memset(o, 0, sizeof d);
    o->struct_size = sizeof d;
    o->method = DPDO_AUDIT_WHITE_BOX;
    o->view = DPDO_AUDIT_VIEW_TRANSCRIPT;
    o->neighbour = DPDO_AUDIT_REPLACE;
    o->randomness = DPDO_RANDOMNESS_SECURE;
    o->loss = DPDO_AUDIT_LOSS_LINEAR;
    o->runs = 30000;
    o->train_fraction = 0.5;
    o->confidence = 0.95;
    o->canaries = 500;
    o->guesses = 0;
    o->nodes = 2;
    o->rows = 1;
    o->dim = 4;
    o->canary_node = -1;
    o->canary_norm = 0;
    o->l2 = 0.1;
    o->seed = 1;
    o->max_features = 64;
    return dpdo__options_init(out, struct_size, &d, sizeof d);
}

DPDO_API int dpdo_audit_create(dpdo_audit **out)
{
    if (!out) return DPDO_E_INVAL;
    *out = dpdo__calloc(1, sizeof **out);
    return *out ? DPDO_OK : DPDO_E_NOMEM;
}

DPDO_API void dpdo_audit_destroy(dpdo_audit *a)
{
    dpdo__free(a);
}

DPDO_API const char *dpdo_audit_errmsg(const dpdo_audit *a)
{
    return a ? a->err : DPDO__NULL_TEXT("dpdo_audit_errmsg", "a");
}

DPDO_API const char *dpdo_audit_verdict_name(int v)
{
    return v == DPDO_AUDIT_CONSISTENT  ? "consistent"
           : v == DPDO_AUDIT_VIOLATION ? "VIOLATION"
           : v == DPDO_AUDIT_NO_CLAIM  ? "no claim"
                                       : "(unknown)";
}

static int check_options(const dpdo_audit_options *o, char *err)
{
#define BAD(...) return dpdo__err(err, DPDO_E_INVAL, "audit setup: " __VA_ARGS__)
    if (o->method != DPDO_AUDIT_RELEASE && o->method != DPDO_AUDIT_ONE_RUN &&
        o->method != DPDO_AUDIT_WHITE_BOX)
        BAD("method %d is unknown", o->method);
    if (o->path != DPDO_RANDOMNESS_SECURE && o->path != DPDO_RANDOMNESS_REPRODUCIBLE)
        BAD("path %d is unknown (DPDO_RANDOMNESS_SECURE or _REPRODUCIBLE)", o->path);
    if (o->single_node != 0 && o->single_node != 1)
        BAD("single_node = %d must be 0 or 1", o->single_node);
    if (o->method == DPDO_AUDIT_WHITE_BOX && o->runs < 200)
        BAD("runs = %lld: the white-box audit needs >= 200", (long long)o->runs);
    if (o->view != DPDO_AUDIT_VIEW_TRANSCRIPT && o->view != DPDO_AUDIT_VIEW_MODEL)
        BAD("view %d is unknown", o->view);
    if (o->neighbour != DPDO_AUDIT_REPLACE && o->neighbour != DPDO_AUDIT_REMOVE)
        BAD("neighbour %d is unknown", o->neighbour);
    if (o->randomness != DPDO_RANDOMNESS_SECURE && o->randomness != DPDO_RANDOMNESS_REPRODUCIBLE)
        BAD("randomness %d is unknown", o->randomness);
    if (o->loss != DPDO_AUDIT_LOSS_LINEAR && o->loss != DPDO_AUDIT_LOSS_LOGISTIC)
        BAD("loss %d is unknown", o->loss);
    if (o->runs < 20 || o->runs > ((int64_t)1 << 40))
        BAD("runs = %lld must be in [20, 2^40]", (long long)o->runs);
    if (!(o->train_fraction > 0 && o->train_fraction < 1))
        BAD("train_fraction = %g must be in (0, 1)", o->train_fraction);
    if (!(o->confidence > 0 && o->confidence < 1))
        BAD("confidence = %g must be in (0, 1)", o->confidence);
    if (o->canaries < 2 || o->canaries > 5000)
        BAD("canaries = %lld must be in [2, 5000]", (long long)o->canaries);
    if (o->guesses < 0 || 2 * o->guesses > o->canaries)
        BAD("guesses = %lld: need 0 <= 2 guesses <= canaries = %lld", (long long)o->guesses,
            (long long)o->canaries);
    if (o->nodes < 2 || o->nodes > 100000)
        BAD("nodes = %lld must be in [2, 100000]", (long long)o->nodes);
    if (o->rows < 1 || o->rows > 1000000)
        BAD("rows = %lld must be in [1, 10^6]", (long long)o->rows);
    if (o->neighbour == DPDO_AUDIT_REMOVE && o->rows < 2) BAD("neighbour REMOVE needs rows >= 2");
    if (o->neighbour == DPDO_AUDIT_REMOVE && o->method == DPDO_AUDIT_ONE_RUN)
        BAD("the one-run audit flips canary labels (REPLACE); REMOVE is for the release audit");
    if (o->dim < 2 || o->dim > 1000000) BAD("dim = %lld must be in [2, 10^6]", (long long)o->dim);
    if (o->canary_node < -1 || o->canary_node >= o->nodes)
        BAD("canary_node = %lld is not -1 or in [0, %lld)", (long long)o->canary_node,
            (long long)o->nodes);
    if (!(o->canary_norm >= 0 && isfinite(o->canary_norm)))
        BAD("canary_norm = %g must be finite and >= 0", o->canary_norm);
    if (!(o->l2 >= 0 && isfinite(o->l2))) BAD("l2 = %g must be finite and >= 0", o->l2);
    if (o->accountant && !dpdo_accountant_type_find(o->accountant))
        BAD("accountant '%s' is unknown", o->accountant);
    if (o->policy && !dpdo_policy_type_find(o->policy)) BAD("policy '%s' is unknown", o->policy);
    if (o->max_features < 1 || o->max_features > 4096)
        BAD("max_features = %lld must be in [1, 4096]", (long long)o->max_features);
#undef BAD
    return DPDO_OK;
}

DPDO_API int dpdo_audit_setup(dpdo_audit *a, const dpdo_algorithm_type *type,
                              const dpdo_algorithm_options *alg_opts,
                              const dpdo_audit_options *opts)
{
    if (!a) return DPDO_E_INVAL;
    if (!type) return dpdo__err(a->err, DPDO_E_INVAL, "audit setup: no algorithm type");
    dpdo_algorithm_options ao;
    dpdo_algorithm_options_init(&ao, sizeof ao);
    int rc;
    if ((rc = dpdo__options_accept(&ao, sizeof ao, offsetof(dpdo_algorithm_options, reserved),
                                   alg_opts, "dpdo_algorithm_options", a->err)))
        return rc;
    dpdo_audit_options o;
    dpdo_audit_options_init(&o, sizeof o);
    if ((rc = dpdo__options_accept(&o, sizeof o, offsetof(dpdo_audit_options, reserved), opts,
                                   "dpdo_audit_options", a->err)))
        return rc;
    if ((rc = check_options(&o, a->err))) return rc;
    if ((o.accountant && strlen(o.accountant) >= sizeof a->acc_name) ||
        (o.policy && strlen(o.policy) >= sizeof a->pol_name))
        return dpdo__err(a->err, DPDO_E_INVAL, "audit setup: accountant or policy name too long");
    a->type = type;
    a->ao = ao;
    a->o = o;
    if (o.accountant) a->o.accountant = strcpy(a->acc_name, o.accountant);
    if (o.policy) a->o.policy = strcpy(a->pol_name, o.policy);
    a->nparam = 0;
    a->set_up = 1;
    dpdo__err_clear(a->err);
    return DPDO_OK;
}

DPDO_API int dpdo_audit_set_param(dpdo_audit *a, int key, double value)
{
    if (!a) return DPDO_E_INVAL;
    if (!a->set_up)
        return dpdo__err(a->err, DPDO_E_INVAL, "set_param: call dpdo_audit_setup first");
    if (dpdo_param_type(key) < 0)
        return dpdo__err(a->err, DPDO_E_INVAL, "set_param: unknown key %d", key);
    if (isnan(value))
        return dpdo__err(a->err, DPDO_E_INVAL, "set_param: %s: NaN", dpdo_param_name(key));
    for (int32_t k = 0; k < a->nparam; k++)
        if (a->pkey[k] == key) {
            a->pval[k] = value;
            return DPDO_OK;
        }
    if (a->nparam == MAX_PARAMS)
        return dpdo__err(a->err, DPDO_E_INVAL, "set_param: more than %d parameters", MAX_PARAMS);
    a->pkey[a->nparam] = key;
    a->pval[a->nparam++] = value;
    return DPDO_OK;
}

DPDO_API int dpdo_audit_set_progress(dpdo_audit *a, dpdo_audit_progress_fn fn, void *user)
{
    if (!a) return DPDO_E_INVAL;
    a->fn = fn;
    a->user = user;
    return DPDO_OK;
}

#ifdef DPDO_FAULT_INJECTION
int dpdo__audit_set_public_keys(dpdo_audit *a, int on)
{
    if (!a) return DPDO_E_INVAL;
    a->public_keys = on != 0;
    return DPDO_OK;
}

int dpdo__audit_set_weaken(dpdo_audit *a, uint32_t bits)
{
    if (!a || bits & ~DPDO__WEAKEN_ALL) return DPDO_E_INVAL;
    a->weaken = bits;
    return DPDO_OK;
}
#endif

/* ---- the probe: a one-process transport that records the canary node's messages -------- */

typedef struct probe {
    int64_t n, d, node; /* canary node */
    const dpdo__eng *e; /* to know the last computing node of a sequential stage */
    int record;
    /* RELEASE: the run's features (values at coordinate cc of each message), up to cap */
    int64_t cc, nf, cap;
    double *f;
    double *u; /* RELEASE: the canary's direction (d values, unit norm) */
    /* ONE_RUN: per coordinate 0..m-1: sum over messages and the last message's value */
    int64_t m;
    double *sum, *last;
    int64_t nmsg; /* messages seen this run */
    /* WHITE_BOX: every node's noisy releases right after the draw, projected on u, in the order
     * of the draws (up to cap; the other nodes' releases let the score remove what they feed
     * into the canary node's, as an adversary who sees every release can), and how many of the
     * canary node's there were */
    double *tf;
    int64_t ntf, nrel;
    /* Laplace releases (DPDO, CPGT; lap = 1, -1 until the first draw): every coordinate is a
     * feature of tf, with its release's index (trel) and node (town); ntap releases so far */
    int lap;
    int64_t *trel, *town, ntap;
    int64_t *nrn; /* WHITE_BOX: releases of each node so far (the policy set-up's choice) */
} probe;

/* The white box's Gaussian model fits Gaussian releases only: a Laplace release (DPDO, CPGT) has
 * a bounded privacy loss that no mean shift over a spread describes; those are audited
 * coordinate by coordinate (audit_laplace.c) */
static int gaussian_only(const dpdo__eng *e)
{
    for (int32_t k = 0; k < e->pv.nev; k++)
        if (e->pv.ev[k].mech == DPDO_MECH_LAPLACE || e->pv.ev[k].mech == DPDO_MECH_DISCRETE_LAPLACE)
            return 0;
    return 1;
}

/* the engine's noise tap: every noisy release of every node (lib/engine/eng_privacy.c) */
static void probe_tap(void *user, int64_t node, const double *out, size_t n, double grid)
{
    probe *pr = user;
    if (!pr->record || !pr->tf) return;
    pr->nrel += node == pr->node && grid >= 0;
    if (grid >= 0 && node >= 0 && node < pr->n) pr->nrn[node]++;
    if (pr->lap < 0) pr->lap = !gaussian_only(pr->e);
    if (pr->lap) { /* every coordinate */
        for (size_t j = 0; j < n && pr->ntf < pr->cap; j++, pr->ntf++)
            pr->tf[pr->ntf] = out[j], pr->trel[pr->ntf] = pr->ntap, pr->town[pr->ntf] = node;
        pr->ntap++;
        return;
    }
    if (pr->ntf < pr->cap) {
        double x = 0;
        for (int64_t j = 0; j < pr->d && j < (int64_t)n; j++)
            x += out[j] * pr->u[j];
        pr->tf[pr->ntf] = x;
    }
    pr->ntf++;
}

/* one message of the canary node: dense (idx NULL: d values) or sparse (k index/value pairs) */
static void probe_take(probe *pr, const double *v, const int64_t *idx, int64_t k)
{
    pr->nmsg++;
    if (pr->m > 0) {
        if (!idx) {
            for (int64_t j = 0; j < pr->m; j++)
                pr->sum[j] += v[j], pr->last[j] = v[j];
        } else {
            for (int64_t j = 0; j < pr->m; j++)
                pr->last[j] = 0;
            for (int64_t t = 0; t < k; t++)
                if (idx[t] >= 0 && idx[t] < pr->m) pr->sum[idx[t]] += v[t], pr->last[idx[t]] = v[t];
        }
        return;
    }
    if (pr->nf >= pr->cap) return;
    double x = 0;
    if (!idx) {
        for (int64_t j = 0; j < pr->d; j++)
            x += v[j] * pr->u[j];
    } else {
        for (int64_t t = 0; t < k; t++)
            if (idx[t] >= 0 && idx[t] < pr->d) x += v[t] * pr->u[idx[t]];
    }
    pr->f[pr->nf++] = x;
}

static int pr_layout(void *user, int64_t n, int64_t *proc, int64_t *self)
{
    (void)user;
    for (int64_t i = 0; i <= n; i++)
        proc[i] = 0;
    *self = 0;
    return 0;
}

static int pr_exchange(void *user, int status, const dpdo_message *msg, int64_t nmsg,
                       int32_t *any_failed)
{
    probe *pr = user;
    *any_failed = status != 0;
    if (status || !pr->record) return 0;
    for (int64_t k = 0; k < nmsg; k++) {
        const dpdo_message *m = &msg[k];
        if (m->src != pr->node) continue;
        if (m->nseg == 1 && m->seg[0].bytes == pr->d * 8) {
            probe_take(pr, m->seg[0].data, NULL, 0);
        } else if (m->nseg == 3) { /* sparse: count, indices, values */
            int64_t cnt;
            memcpy(&cnt, m->seg[0].data, 8);
            probe_take(pr, m->seg[2].data, m->seg[1].data, cnt);
        }
    }
    return 0;
}

static int pr_agree(void *user, int *status, int64_t *node, char *msg, size_t len)
{
    (void)user, (void)status, (void)node, (void)msg, (void)len;
    return 0;
}
static int pr_share(void *user, void *base, int64_t row_bytes, int64_t n)
{
    (void)user, (void)base, (void)row_bytes, (void)n;
    return 0;
}
static int pr_sum(void *user, int64_t *v, int64_t count)
{
    (void)user, (void)v, (void)count;
    return 0;
}
/* A sequential stage (DP-WOR-SGD) hands a baton from node to node; in one process only the
 * last holder's baton is broadcast: 16 bytes of status, then the model the stage hands on. It
 * is what the last computing node sends, so it is recorded when that node is the canary. */
static int pr_bcast(void *user, int64_t from, void *buf, int64_t bytes)
{
    probe *pr = user;
    (void)from;
    const dpdo__plan *p = &pr->e->plan;
    if (pr->record && p->ncomp > 0 && p->comp[p->ncomp - 1] == pr->node && bytes >= 16 + 8 * pr->d)
        probe_take(pr, (const double *)((const char *)buf + 16), NULL, 0);
    return 0;
}
static int pr_send(void *user, int64_t to, const void *buf, int64_t bytes)
{
    (void)user, (void)to, (void)buf, (void)bytes;
    return 0;
}
static int pr_recv(void *user, int64_t from, void *buf, int64_t bytes)
{
    (void)user, (void)from, (void)buf, (void)bytes;
    return 0;
}

static const dpdo_transport_type probe_type = {.struct_size = sizeof(dpdo_transport_type),
                                               .name = "audit-probe",
                                               .layout = pr_layout,
                                               .exchange = pr_exchange,
                                               .agree = pr_agree,
                                               .share = pr_share,
                                               .sum = pr_sum,
                                               .bcast = pr_bcast,
                                               .send = pr_send,
                                               .recv = pr_recv};

/* ---- a world: one dataset (D1 or D0) with its nodes, network, accountant, algorithm ------- */

typedef struct world {
    dpdo_dataset *ds;
    dpdo_shard **sh;
    dpdo_loss *loss;
    dpdo_node **nd;
    dpdo_network *net;
    dpdo_regularizer *reg;
    dpdo_ledger *led;
    dpdo_accountant *acc;
    dpdo_solver *solver;
    dpdo_policy *policy;
    dpdo_algorithm *alg;
    dpdo__eng *e;
    probe pr;
    int64_t n;
} world;

static void world_free(world *w)
{
    dpdo_algorithm_destroy(w->alg);
    dpdo_solver_destroy(w->solver);
    dpdo_policy_destroy(w->policy);
    dpdo_accountant_destroy(w->acc);
    dpdo_ledger_destroy(w->led);
    dpdo_regularizer_destroy(w->reg);
    dpdo_network_destroy(w->net);
    for (int64_t i = 0; w->nd && i < w->n; i++)
        dpdo_node_destroy(w->nd[i]);
    for (int64_t i = 0; w->sh && i < w->n; i++)
        dpdo_shard_destroy(w->sh[i]);
    dpdo_loss_destroy(w->loss);
    dpdo_dataset_destroy(w->ds);
    dpdo__free(w->nd), dpdo__free(w->sh);
    dpdo__free(w->pr.f), dpdo__free(w->pr.u), dpdo__free(w->pr.sum), dpdo__free(w->pr.last);
    dpdo__free(w->pr.tf), dpdo__free(w->pr.trel), dpdo__free(w->pr.town), dpdo__free(w->pr.nrn);
    memset(w, 0, sizeof *w);
}

/* splitmix64: the audit's own deterministic stream (data, reproducible keys) */
static uint64_t mix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double unif(uint64_t *s)
{
    return ((double)(mix64(s) >> 11) + 0.5) * 0x1.0p-53;
}
static double gauss(uint64_t *s)
{
    return sqrt(-2 * log(unif(s))) * cos(6.283185307179586 * unif(s));
}

/* The data of a world. Release audit: n nodes x q rows, d features; benign rows use features
 * 0..d-2 (norm <= 0.9, labels +-1); the canary is row 0 of node c: K (1, ..., 1)/sqrt(d), label
 * +1 (D1) or -1 (D0, REPLACE), or absent (D0, REMOVE). One-run audit: d = m + 1; node c holds
 * the m canaries K e_j with labels coins[j] (K = canary_norm, or L); every other node m benign rows
 * on feature m. */
static int build_data(const dpdo_audit *a, int64_t c, int which, const int8_t *coins, double **Xo,
                      double **yo, int64_t **rowso, int64_t *Nout, int64_t *d_out)
{
    const dpdo_audit_options *o = &a->o;
    int one = o->method == DPDO_AUDIT_ONE_RUN;
    int64_t n = o->nodes, q = one ? o->canaries : o->rows, d = one ? o->canaries + 1 : o->dim;
    int64_t N = n * q;
    double *X = dpdo__calloc((size_t)N * (size_t)d, sizeof *X),
           *y = dpdo__calloc((size_t)N, sizeof *y);
    int64_t *rows =
        dpdo__calloc((size_t)n + 1, sizeof *rows); /* first row of each node; rows[n] = N used */
    if (!X || !y || !rows) {
        dpdo__free(X), dpdo__free(y), dpdo__free(rows);
        return DPDO_E_NOMEM;
    }
    uint64_t s = o->seed ^ 0x5EEDA0D17ull;
    double K = o->canary_norm > 0 ? o->canary_norm : a->ao.lipschitz;
    int64_t r = 0;
    for (int64_t i = 0; i < n; i++) {
        rows[i] = r;
        for (int64_t k = 0; k < q; k++) {
            double *x = X + (size_t)r * (size_t)d;
            if (i == c && one) {
                x[k] = K;
                y[r++] = coins[k];
                continue;
            }
            if (i == c && k == 0) {
                if (which == 0 && o->neighbour == DPDO_AUDIT_REMOVE)
                    continue; /* the row is absent */
                for (int64_t j = 0; j < d; j++)
                    x[j] = K / sqrt((double)d);
                y[r++] = which ? 1.0 : -1.0;
                continue;
            }
            /* benign: the same in both worlds (the stream does not depend on `which`) */
            double nrm = 0;
            int64_t f0 = one ? d - 1 : 0, f1 = one ? d : d - 1;
            for (int64_t j = f0; j < f1; j++)
                x[j] = gauss(&s), nrm += x[j] * x[j];
            double sc = 0.9 * unif(&s) / sqrt(nrm > 0 ? nrm : 1);
            for (int64_t j = f0; j < f1; j++)
                x[j] *= sc;
            y[r++] = unif(&s) < 0.5 ? -1.0 : 1.0;
        }
    }
    rows[n] = r;
    *Xo = X, *yo = y, *rowso = rows, *Nout = r, *d_out = d;
    return DPDO_OK;
}

static int apply_params(dpdo_audit *a, dpdo_algorithm *alg, int one)
{
    int rc;
    for (int32_t k = 0; k < a->nparam; k++) {
        int key = a->pkey[k];
        rc = dpdo_param_type(key) == 0
                 ? dpdo_algorithm_set_int(alg, key, (int64_t)llround(a->pval[k]))
                 : dpdo_algorithm_set_double(alg, key, a->pval[k]);
        if (rc)
            return dpdo__err(a->err, rc, "audit: parameter %s: %s", dpdo_param_name(key),
                             dpdo_algorithm_errmsg(alg));
    }
    (void)one;
    return DPDO_OK;
}

/* the secure path with OS keys: the engine draws fresh keys at every reset */
static int os_keys(const dpdo_audit *a)
{
    return a->o.path == DPDO_RANDOMNESS_SECURE && a->o.randomness == DPDO_RANDOMNESS_SECURE &&
           !a->public_keys;
}

static int world_make(dpdo_audit *a, world *w, int64_t c, int which, const int8_t *coins)
{
    const dpdo_audit_options *o = &a->o;
    int one = o->method == DPDO_AUDIT_ONE_RUN;
    int64_t n = o->nodes, N, d;
    double *X = NULL, *y = NULL;
    int64_t *rows = NULL;
    memset(w, 0, sizeof *w);
    w->n = n;
    int rc = build_data(a, c, which, coins, &X, &y, &rows, &N, &d);
    if (rc) return dpdo__err(a->err, rc, "audit: out of memory");
    w->sh = dpdo__calloc((size_t)n, sizeof *w->sh);
    w->nd = dpdo__calloc((size_t)n, sizeof *w->nd);
    if (!w->sh || !w->nd) {
        rc = dpdo__err(a->err, DPDO_E_NOMEM, "audit: out of memory");
        goto out;
    }
    const char *what = "dataset";
    if ((rc = dpdo_dataset_create(&w->ds)) ||
        (rc = dpdo_dataset_set_dense(w->ds, N, d, X, y, DPDO_COPY)))
        goto fail;
    what = "loss";
    rc = o->loss == DPDO_AUDIT_LOSS_LINEAR
             ? dpdo_loss_create(&w->loss, &linear_loss, NULL, d)
             : dpdo_loss_create(&w->loss, dpdo_loss_type_find("logistic"), NULL, d);
    if (rc) goto fail;
    what = "nodes";
    for (int64_t i = 0; i < n; i++)
        if ((rc = dpdo_shard_create_range(&w->sh[i], w->ds, rows[i], rows[i + 1] - rows[i])) ||
            (rc = dpdo_node_create(&w->nd[i], w->sh[i], w->loss, 1.0)))
            goto fail;
    what = "network";
    if ((rc = dpdo_network_create(&w->net)) || (rc = dpdo_network_set_complete(w->net, n)))
        goto fail;
    what = "regularizer";
    if (o->l2 > 0 && (rc = dpdo_regularizer_create(&w->reg, dpdo_regularizer_type_find("l2"), NULL,
                                                   d, &o->l2, 1)))
        goto fail;
    what = "accountant";
    if ((rc = dpdo_ledger_create(&w->led, n)) ||
        (rc = dpdo_accountant_create(
             &w->acc, dpdo_accountant_type_find(o->accountant ? o->accountant : "auto"), NULL,
             w->led, NULL)))
        goto fail;
    dpdo_algorithm_options ao = a->ao;
    ao.randomness = o->path; /* the path audited; keys: next_keys */
    if (one && ao.batch == 1) ao.batch = o->canaries;
    if ((rc = dpdo_algorithm_create(&w->alg, a->type))) {
        rc = dpdo__err(a->err, rc, "audit: out of memory");
        goto out;
    }
    if ((rc = dpdo_algorithm_setup(w->alg, w->nd, (int32_t)n, w->net, w->reg,
                                   ao.noise_mode == DPDO_NOISE_NONE ? NULL : w->acc, &ao))) {
        dpdo__err(a->err, rc, "audit: %s", dpdo_algorithm_errmsg(w->alg));
        goto out;
    }
    /* a private run of an algorithm with a local solver needs the noisy one (Fed-PLT) */
    if (dpdo__algorithm_eng(w->alg)->vt->uses_solver) {
        const char *sn = ao.noise_mode != DPDO_NOISE_NONE ? "noisy-gd" : "gd";
        if ((rc = dpdo_solver_create(&w->solver, dpdo_solver_type_find(sn), NULL, d)) ||
            (rc = dpdo_solver_set(w->solver, "lambda_lo", o->l2 > 0 ? o->l2 : 0.1)) ||
            (rc = dpdo_solver_set(w->solver, "lambda_hi", (o->l2 > 0 ? o->l2 : 0.1) + 1.0)) ||
            (rc = dpdo_algorithm_set_solver(w->alg, w->solver))) {
            dpdo__err(a->err, rc, "audit: the %s solver: %s", sn,
                      w->solver ? dpdo_algorithm_errmsg(w->alg) : "out of memory");
            goto out;
        }
    }
    if (o->policy) {
        if (!dpdo__algorithm_eng(w->alg)->vt->uses_policy) {
            rc = dpdo__err(a->err, DPDO_E_UNSUPPORTED, "audit: %s takes no policy ('%s')",
                           dpdo_algorithm_name(w->alg), o->policy);
            goto out;
        }
        if ((rc = dpdo_policy_create(&w->policy, dpdo_policy_type_find(o->policy), NULL, n,
                                     d + 2)) ||
            (rc = dpdo_algorithm_set_policy(w->alg, w->policy))) {
            dpdo__err(a->err, rc, "audit: policy '%s': %s", o->policy,
                      w->policy ? dpdo_algorithm_errmsg(w->alg) : "could not be created");
            goto out;
        }
    }
    if ((rc = apply_params(a, w->alg, one))) goto out;
    /* host keys, rewritten before every run (next_keys), unless the engine's own fresh OS keys
     * of the secure path are used */
    for (int64_t i = 0; i < n && !os_keys(a); i++)
        if ((rc = dpdo_algorithm_set_node_secret(w->alg, i, 0))) {
            dpdo__err(a->err, rc, "audit: %s", dpdo_algorithm_errmsg(w->alg));
            goto out;
        }
#ifdef DPDO_FAULT_INJECTION
    if (a->weaken) dpdo__algorithm_set_weaken(w->alg, a->weaken);
#endif
    w->e = dpdo__algorithm_eng(w->alg);
    w->pr.n = n, w->pr.d = d, w->pr.node = c, w->pr.e = w->e;
    w->pr.cc = d - 1;
    if (one) {
        w->pr.m = o->canaries;
        w->pr.sum = dpdo__calloc((size_t)o->canaries, sizeof(double));
        w->pr.last = dpdo__calloc((size_t)o->canaries, sizeof(double));
        if (!w->pr.sum || !w->pr.last) {
            rc = dpdo__err(a->err, DPDO_E_NOMEM, "audit: out of memory");
            goto out;
        }
    } else {
        w->pr.cap = o->max_features;
        w->pr.f = dpdo__calloc((size_t)o->max_features, sizeof(double));
        if (o->method == DPDO_AUDIT_WHITE_BOX) {
            w->pr.tf = dpdo__calloc((size_t)o->max_features, sizeof(double));
            w->pr.trel = dpdo__calloc((size_t)o->max_features, sizeof(int64_t));
            w->pr.town = dpdo__calloc((size_t)o->max_features, sizeof(int64_t));
            w->pr.nrn = dpdo__calloc((size_t)n, sizeof(int64_t));
            w->pr.lap = -1;
            if (!w->pr.tf || !w->pr.trel || !w->pr.town || !w->pr.nrn) {
                rc = dpdo__err(a->err, DPDO_E_NOMEM, "audit: out of memory");
                goto out;
            }
            dpdo__algorithm_set_noise_tap(w->alg, probe_tap, &w->pr);
            dpdo__algorithm_eng(w->alg)->tap_sent = 1; /* what is sent (DP-WOR-SGD's wG) */
        }
        w->pr.u = dpdo__alloc_array((size_t)d, sizeof(double));
        if (w->pr.u)
            for (int64_t j = 0; j < d; j++)
                w->pr.u[j] = 1 / sqrt((double)d);
        if (!w->pr.f || !w->pr.u) {
            rc = dpdo__err(a->err, DPDO_E_NOMEM, "audit: out of memory");
            goto out;
        }
    }
    if ((rc = dpdo_algorithm_set_transport(w->alg, &probe_type, &w->pr))) {
        dpdo__err(a->err, rc, "audit: %s", dpdo_algorithm_errmsg(w->alg));
        goto out;
    }
    goto out;
fail:
    dpdo__err(a->err, rc, "audit: building the problem (%s) failed", what);
out:
    dpdo__free(X), dpdo__free(y), dpdo__free(rows);
    return rc;
}

/* Fresh private randomness for the next run: new node keys, back to round 0. The secure path
 * with OS keys only resets (the engine draws fresh keys from the OS at every reset, as in every
 * user's run); otherwise the keys are written where the engine reads them when it opens a
 * private stream (e->key, key_src = DPDO__KEY_HOST), so no new prepare is needed. */
static int next_keys(const dpdo_audit *a, world *w, uint64_t *ks)
{
    if (os_keys(a)) return dpdo_algorithm_reset(w->alg);
    if (a->public_keys) { /* the slow public path, for the test that the fast one equals it */
        int rc = dpdo_algorithm_reset(w->alg);
        for (int64_t i = 0; i < w->n && !rc; i++) {
            uint64_t k;
            if (a->o.randomness == DPDO_RANDOMNESS_SECURE)
                randombytes_buf(&k, sizeof k);
            else
                k = mix64(ks);
            rc = dpdo_algorithm_set_node_secret(w->alg, i, k);
        }
        return rc;
    }
    /* the engine's 256-bit node keys (e->key, 32 bytes per node; key_src = DPDO__KEY_HOST since the
     * set_node_secret of the setup) */
    if (a->o.randomness == DPDO_RANDOMNESS_SECURE) /* one request to the OS per run */
        randombytes_buf(w->e->key, 32 * (size_t)w->n);
    else
        for (int64_t i = 0; i < w->n; i++) /* the key set_node_secret(mix64) would set */
            dpdo__node_secret_key(mix64(ks), w->e->key + 32 * (size_t)i);
    return dpdo_algorithm_reset(w->alg);
}

/* One run: reset with fresh keys, step to the end; the probe records. counts[n] (may be NULL):
 * rounds in which each node computed. */
static int one_run(dpdo_audit *a, world *w, uint64_t *ks, int64_t *counts, int64_t *rounds,
                   const char *tag, int64_t run)
{
    w->pr.nf = 0;
    w->pr.nmsg = 0;
    w->pr.ntf = 0;
    w->pr.nrel = 0;
    w->pr.ntap = 0;
    if (w->pr.m > 0) {
        memset(w->pr.sum, 0, (size_t)w->pr.m * sizeof(double));
        memset(w->pr.last, 0, (size_t)w->pr.m * sizeof(double));
    }
    w->pr.record = 1; /* from the reset on: the white box sees secret initial states too */
    int rc = next_keys(a, w, ks);
    if (rc) {
        w->pr.record = 0;
        return dpdo__err(a->err, rc, "audit: run %lld on %s: %s", (long long)run, tag,
                         dpdo_algorithm_errmsg(w->alg));
    }
    int64_t t = 0;
    int32_t *act = counts ? dpdo__alloc_array((size_t)w->n, sizeof *act) : NULL;
    if (counts && !act) return dpdo__err(a->err, DPDO_E_NOMEM, "audit: out of memory");
    while ((rc = dpdo_algorithm_step(w->alg)) == DPDO_ROUND) {
        t++;
        if (act && dpdo_algorithm_get_active(w->alg, act, w->n) == DPDO_OK)
            for (int64_t i = 0; i < w->n; i++)
                counts[i] += act[i];
    }
    dpdo__free(act);
    w->pr.record = 0;
    if (rc != DPDO_DONE)
        return dpdo__err(a->err, rc < 0 ? rc : DPDO_E_STATE, "audit: run %lld on %s: %s",
                         (long long)run, tag, dpdo_algorithm_errmsg(w->alg));
    if (rounds) *rounds = t;
    return DPDO_OK;
}

static int report(dpdo_audit *a, int64_t done, int64_t total)
{
    if (a->fn && a->fn(done, total, a->user))
        return dpdo__err(a->err, DPDO_E_CANCELED, "audit: canceled after %lld of %lld runs",
                         (long long)done, (long long)total);
    return DPDO_OK;
}

/* the claims of a finished run for node c */
static void claims(world *w, int64_t c, dpdo_audit_result *r)
{
    double eps = INFINITY, dl = NAN;
    if (dpdo_algorithm_privacy(w->alg, DPDO_PRIVACY_RIGOROUS, c, &eps, &dl, NULL) == DPDO_OK) {
        if (!(r->eps_claimed >= eps)) r->eps_claimed = eps;
    }
    int32_t valid = 0;
    double pe = NAN, pd = NAN;
    if (dpdo_algorithm_privacy(w->alg, DPDO_PRIVACY_PAPER, c, &pe, &pd, &valid) == DPDO_OK) {
        if (isnan(r->eps_paper) || pe > r->eps_paper) r->eps_paper = pe, r->delta_paper = pd;
        r->paper_valid = valid;
    }
    double s = NAN;
    if (dpdo_algorithm_get_double(w->alg, DPDO_PARAM_SIGMA, &s) == DPDO_OK) r->sigma = s;
}

/* the adversary's choice of canary node: the one computing in the most rounds (ties: the last) */
static int choose_node(dpdo_audit *a, int64_t *c, int64_t *rounds)
{
    if (a->o.canary_node >= 0) {
        *c = a->o.canary_node;
        return DPDO_OK;
    }
    world w;
    int8_t *coins = NULL;
    int one = a->o.method == DPDO_AUDIT_ONE_RUN;
    if (one) {
        coins = dpdo__alloc_array((size_t)a->o.canaries, sizeof *coins);
        if (!coins) return dpdo__err(a->err, DPDO_E_NOMEM, "audit: out of memory");
        for (int64_t j = 0; j < a->o.canaries; j++)
            coins[j] = 1;
    }
    int rc = world_make(a, &w, 0, 1, coins);
    dpdo__free(coins);
    int64_t *cnt = dpdo__calloc((size_t)a->o.nodes, sizeof *cnt);
    uint64_t ks = a->o.seed ^ 0xC0FFEEull;
    if (!rc && !cnt) rc = dpdo__err(a->err, DPDO_E_NOMEM, "audit: out of memory");
    if (!rc) rc = one_run(a, &w, &ks, cnt, rounds, "the node choice", 0);
    if (!rc) {
        int64_t best = 0;
        for (int64_t i = 0; i < a->o.nodes; i++)
            if (cnt[i] >= cnt[best]) best = i;
        *c = best;
    }
    dpdo__free(cnt);
    world_free(&w);
    return rc;
}

/* The public Local/Global decisions of one run under the audit's set-up: *ok = the nodes that
 * take a Local step (compute in a round without a release) before a Global one (a release) */
static int local_then_global(dpdo_audit *a, int64_t *ok)
{
    world w;
    int64_t n = a->o.nodes;
    uint64_t ks = a->o.seed ^ 0xC0FFEEull;
    int rc = world_make(a, &w, 0, 1, NULL);
    int64_t *prev = dpdo__calloc((size_t)n, sizeof *prev);
    unsigned char *st = dpdo__calloc((size_t)n, 1); /* 1: a Local step seen, 2: then a Global */
    int32_t *act = dpdo__calloc((size_t)n, sizeof *act);
    if (!rc && (!prev || !st || !act)) rc = dpdo__err(a->err, DPDO_E_NOMEM, "audit: out of memory");
    if (!rc && !(rc = next_keys(a, &w, &ks))) {
        w.pr.record = 1;
        while ((rc = dpdo_algorithm_step(w.alg)) == DPDO_ROUND) {
            if (dpdo_algorithm_get_active(w.alg, act, n) != DPDO_OK) continue;
            for (int64_t i = 0; i < n; i++) {
                if (!act[i]) continue;
                if (w.pr.nrn[i] > prev[i] && st[i] == 1) st[i] = 2;
                if (w.pr.nrn[i] == prev[i] && st[i] == 0) st[i] = 1;
                prev[i] = w.pr.nrn[i];
            }
        }
        rc = rc == DPDO_DONE ? DPDO_OK
                             : dpdo__err(a->err, rc < 0 ? rc : DPDO_E_STATE, "audit: %s",
                                         dpdo_algorithm_errmsg(w.alg));
    }
    *ok = 0;
    for (int64_t i = 0; !rc && i < n; i++)
        *ok += st[i] == 2;
    dpdo__free(prev), dpdo__free(st), dpdo__free(act);
    world_free(&w);
    return rc;
}

/* A type whose releases follow a Local/Global policy (DP-WOR-SGD), audited without a named
 * policy: its accounting must cover rows of a Local pass that could reach a later Global release
 * (the window closes at a pass boundary), which the default policy (always Global) never
 * exercises. The white-box audit then takes the "random" policy with the first public seed of
 * options.seed, + 1, ..., + 15 under which every node (else the most nodes) takes a Local pass
 * before a Global one, read from the public decisions of one run; nothing changes when no seed
 * gives one (a single pass). */
static int choose_policy_setup(dpdo_audit *a)
{
    if (a->o.policy || a->o.method != DPDO_AUDIT_WHITE_BOX) return DPDO_OK;
    world w;
    int rc = world_make(a, &w, 0, 1, NULL);
    int uses = !rc && dpdo__algorithm_eng(w.alg)->vt->uses_policy;
    world_free(&w);
    if (rc || !uses) return rc;
    uint64_t seed0 = a->ao.seed, best_seed = seed0;
    int64_t best = 0;
    a->o.policy = strcpy(a->pol_name, "random");
    for (uint64_t j = 0; j < 16 && !rc && best < a->o.nodes; j++) {
        int64_t ok = 0;
        a->ao.seed = seed0 + j;
        if (!(rc = local_then_global(a, &ok)) && ok > best) best = ok, best_seed = a->ao.seed;
    }
    if (rc || best == 0) a->o.policy = NULL; /* the default policy, as asked */
    a->ao.seed = rc || best == 0 ? seed0 : best_seed;
    return rc;
}

/* ---- release audit ----------------------------------------------------------------------- */

/* The white-box bound of one node from the per-run release features tf[2][R x Fw]: LDA weights
 * on the training runs, mu_lower on the test runs, eps at delta. */
static int white_bound(dpdo_audit *a, double *const tf[2], int64_t R, int64_t Fw, double conf,
                       dpdo_audit_result *res)
{
    int64_t ntr = dpdo__audit_train_runs(R, a->o.train_fraction), nte = R - ntr;
    double *w = dpdo__calloc((size_t)Fw, sizeof *w), *sc1 = dpdo__alloc_array((size_t)R, 8),
           *sc0 = dpdo__alloc_array((size_t)R, 8);
    int rc = (!w || !sc1 || !sc0) ? DPDO_E_NOMEM : DPDO_OK;
    if (!rc) rc = dpdo__audit_lda(tf[1], ntr, tf[0], ntr, Fw, w);
    if (!rc) {
        dpdo__audit_lda_scores(tf[1], R, Fw, w, sc1);
        dpdo__audit_lda_scores(tf[0], R, Fw, w, sc0);
        double mu = NAN;
        if (nte >= 30 &&
            dpdo_audit_mu_lower(sc1 + ntr, nte, sc0 + ntr, nte, conf, &mu) == DPDO_OK &&
            !isnan(mu)) {
            double e = INFINITY;
            if (mu < INFINITY) dpdo_gaussian_epsilon(mu, res->delta, &e);
            res->mu_lower = mu, res->eps_lower_white = e;
        }
    }
    dpdo__free(w), dpdo__free(sc1), dpdo__free(sc0);
    return rc ? dpdo__err(a->err, rc, "audit: out of memory") : DPDO_OK;
}

/* The Laplace white box of node c (audit_laplace.c): a lower bound L on the summed pure epsilon
 * of the canary node's k releases, composed by the audit's accountant as the ledger's Laplace
 * events are (the same mechanism: discrete on the secure path) with L split evenly among the k
 * releases; eps at delta. For the pure (sum) and rdp (a sum over the releases of RDP curves that
 * are convex in epsilon, log-sum-exps of linear functions) compositions the even split gives
 * the smallest figure of all splits with that sum, so it bounds the figure of the true
 * per-release epsilons from below. */
static int laplace_white_bound(dpdo_audit *a, const world *w, double *const tf[2], int64_t R,
                               int64_t Fw, int64_t c, double conf, dpdo_audit_result *res)
{
    const probe *pr = &w->pr;
    int64_t kept = 0, k = 0;
    double L = 0, e = 0;
    int rc = dpdo__audit_laplace_lower(tf[1], tf[0], R, Fw, pr->trel, pr->town, c,
                                       dpdo__audit_train_runs(R, a->o.train_fraction), conf, &L,
                                       &kept, &k);
    if (rc) return dpdo__err(a->err, rc, "audit: out of memory");
    int disc = 0;
    for (int32_t q = 0; q < w->e->pv.nev; q++)
        disc |= w->e->pv.ev[q].mech == DPDO_MECH_DISCRETE_LAPLACE;
    dpdo_ledger *led = NULL;
    dpdo_accountant *acc = NULL;
    dpdo_event *ev = NULL;
    if (!(L < INFINITY)) {
        e = INFINITY;
    } else if (L > 0 && k > 0) {
        if (!(rc = dpdo_ledger_create(&led, 1)) && !(rc = dpdo_event_create(&ev)))
            rc = dpdo_accountant_create(
                &acc, dpdo_accountant_type_find(a->o.accountant ? a->o.accountant : "auto"), NULL,
                led, NULL);
        if (!rc)
            rc = disc ? dpdo_event_set_discrete_laplace(ev, NULL, L / (double)k, 1.0)
                      : dpdo_event_set_laplace(ev, NULL, L / (double)k, 1.0);
        if (!rc) rc = dpdo_ledger_charge(led, ev, k, NULL, -1);
        if (!rc) rc = dpdo_accountant_epsilon(acc, 0, res->delta, &e, NULL);
    }
    if (rc)
        rc = dpdo__err(a->err, rc, "audit: composing the Laplace bounds: %s",
                       acc ? dpdo_accountant_errmsg(acc) : "out of memory");
    else
        res->eps_lower_white = e;
    dpdo_accountant_destroy(acc), dpdo_ledger_destroy(led), dpdo_event_destroy(ev);
    return rc;
}

/* The release (and white-box) audit with the canary at node c; both bounds at confidence conf
 * each. Fills res's per-node fields; eps_lower = the larger bound. */
static int release_audit(dpdo_audit *a, dpdo_audit_result *res, int64_t c, double conf, int *silent)
{
    const dpdo_audit_options *o = &a->o;
    int64_t R = o->runs;
    int rc = DPDO_OK;
    int white = o->method == DPDO_AUDIT_WHITE_BOX;
    res->canary_node = c;
    world w[2];
    memset(w, 0, sizeof w);
    /* features per run: 1 (the model view) or the first run's message count (at most
     * max_features); allocated after the first run, R x F per dataset; white box: Fw releases */
    int64_t F = o->view == DPDO_AUDIT_VIEW_MODEL ? 1 : 0, Fw = 0;
    double *feat[2] = {NULL, NULL}, *tf[2] = {NULL, NULL}, *xo = NULL, *wts = NULL,
           *sc[2] = {NULL, NULL};
    for (int which = 1; which >= 0 && !rc; which--)
        rc = world_make(a, &w[which], c, which, NULL);
    if (rc) goto out;
    xo = dpdo__calloc((size_t)w[1].pr.d, sizeof *xo);
    if (!xo) {
        rc = dpdo__err(a->err, DPDO_E_NOMEM, "audit: out of memory");
        goto out;
    }
    uint64_t ks[2] = {o->seed ^ 0xD0D0ull ^ ((uint64_t)c << 32),
                      o->seed ^ 0xD1D1ull ^ ((uint64_t)c << 32)};
    for (int64_t r = 0; r < R && !rc; r++) {
        for (int which = 1; which >= 0 && !rc; which--) {
            world *W = &w[which];
            int64_t t = 0;
            if ((rc = one_run(a, W, &ks[which], NULL, &t, which ? "D1" : "D0", r))) break;
            if (r == 0 && which == 1) {
                res->rounds = t;
                res->releases = W->pr.nrel;
                Fw = !W->pr.nrel ? 0 : W->pr.ntf < W->pr.cap ? W->pr.ntf : W->pr.cap;
                if (!F && !(F = W->pr.nf) && !Fw) {
                    *silent = 1; /* nothing to see at this node (its caller may skip it) */
                    rc = dpdo__err(
                        a->err, DPDO_E_UNSUPPORTED,
                        "audit: node %lld sent no message a transport carries; use the model view",
                        (long long)c);
                    break;
                }
                if (!F) F = 1; /* nothing sent: the white box alone (the feature stays 0) */
                feat[0] = dpdo__calloc((size_t)R * (size_t)F, sizeof(double));
                feat[1] = dpdo__calloc((size_t)R * (size_t)F, sizeof(double));
                if (Fw) {
                    tf[0] = dpdo__calloc((size_t)R * (size_t)Fw, sizeof(double));
                    tf[1] = dpdo__calloc((size_t)R * (size_t)Fw, sizeof(double));
                }
                if (!feat[0] || !feat[1] || (Fw && (!tf[0] || !tf[1]))) {
                    rc = dpdo__err(a->err, DPDO_E_NOMEM,
                                   "audit: out of memory (%lld runs x %lld features)", (long long)R,
                                   (long long)(F + Fw));
                    break;
                }
            }
            if (r == 0 || r == R - 1) claims(W, c, res);
            double *row = feat[which] + (size_t)r * (size_t)F;
            if (o->view == DPDO_AUDIT_VIEW_MODEL) {
                if ((rc = dpdo_algorithm_get_output(W->alg, DPDO_NODE_ALL, xo, W->pr.d))) {
                    dpdo__err(a->err, rc, "audit: %s", dpdo_algorithm_errmsg(W->alg));
                    break;
                }
                for (int64_t j = 0; j < W->pr.d; j++)
                    row[0] += xo[j] * W->pr.u[j];
            } else {
                memcpy(row, W->pr.f, (size_t)(W->pr.nf < F ? W->pr.nf : F) * sizeof(double));
            }
            if (Fw)
                memcpy(tf[which] + (size_t)r * (size_t)Fw, W->pr.tf,
                       (size_t)(W->pr.ntf < Fw ? W->pr.ntf : Fw) * sizeof(double));
        }
        if (!rc) rc = report(a, 2 * (r + 1), 2 * R);
    }
    if (rc) goto out;
    res->features = F;
    /* the split: the first ntr runs of each dataset fit the score and the threshold */
    int64_t ntr = dpdo__audit_train_runs(R, o->train_fraction);
    int64_t nte = R - ntr;
    wts = dpdo__calloc((size_t)F, sizeof *wts);
    sc[0] = dpdo__alloc_array((size_t)R, sizeof(double));
    sc[1] = dpdo__alloc_array((size_t)R, sizeof(double));
    if (!wts || !sc[0] || !sc[1]) {
        rc = dpdo__err(a->err, DPDO_E_NOMEM, "audit: out of memory");
        goto out;
    }
    if (F == 1)
        wts[0] = 1;
    else if ((rc = dpdo__audit_lda(feat[1], ntr - ntr / 3, feat[0], ntr - ntr / 3, F, wts)))
        rc = dpdo__err(a->err, rc, "audit: out of memory");
    for (int s = 0; s < 2 && !rc; s++)
        dpdo__audit_lda_scores(feat[s], R, F, wts, sc[s]);
    if (rc) goto out;
    double thr = 0;
    int32_t dir = 1;
    if ((rc = dpdo_audit_bound_scores(sc[1], sc[0], R, o->train_fraction, res->delta, conf,
                                      &res->eps_lower, &thr, &dir, &res->tpr, &res->fpr))) {
        dpdo__err(a->err, rc, "audit: bound: %s",
                  rc == DPDO_E_NOMEM ? "out of memory" : "non-finite scores");
        goto out;
    }
    res->eps_lower_black = res->eps_lower;
    res->threshold = thr;
    res->direction = dir;
    res->test_runs = nte;
    if (!isnan(res->delta_paper) && res->delta_paper < 1)
        rc = dpdo_audit_epsilon_at_threshold(sc[1] + ntr, nte, sc[0] + ntr, nte, thr, dir,
                                             res->delta_paper, conf, &res->eps_lower_paper, NULL,
                                             NULL);
    else if (!isnan(res->delta_paper))
        res->eps_lower_paper = 0; /* a figure at delta >= 1 claims nothing */
    if (rc) {
        dpdo__err(a->err, rc, "audit: bound failed");
        goto out;
    }
    if (white && Fw &&
        (rc = w[1].pr.lap > 0 ? laplace_white_bound(a, &w[1], tf, R, Fw, c, conf, res)
                              : white_bound(a, tf, R, Fw, conf, res)))
        goto out;
    if (res->eps_lower_white > res->eps_lower) res->eps_lower = res->eps_lower_white;
    res->runs = 2 * R;
out:
    world_free(&w[0]), world_free(&w[1]);
    dpdo__free(feat[0]), dpdo__free(feat[1]), dpdo__free(tf[0]), dpdo__free(tf[1]), dpdo__free(xo),
        dpdo__free(wts), dpdo__free(sc[0]), dpdo__free(sc[1]);
    return rc;
}

/* ---- one-run audit ----------------------------------------------------------------------- */

/* guesses: the k highest scores guess +1, the k lowest -1; right answers */
typedef struct scored {
    double s;
    int8_t coin;
} scored;
static int cmp_scored(const void *x, const void *y)
{
    double a = ((const scored *)x)->s, b = ((const scored *)y)->s;
    return (a > b) - (a < b);
}
static int64_t correct_guesses(const scored *v, int64_t m, int64_t k)
{
    int64_t right = 0;
    for (int64_t t = 0; t < k; t++)
        right += v[m - 1 - t].coin > 0, right += v[t].coin < 0;
    return right;
}

static int one_run_audit(dpdo_audit *a, dpdo_audit_result *res)
{
    const dpdo_audit_options *o = &a->o;
    int64_t m = o->canaries, c = 0, rounds = 0;
    int rc = choose_node(a, &c, &rounds);
    if (rc) return rc;
    res->canary_node = c;
    res->canaries = m;
    int8_t *coins = dpdo__alloc_array((size_t)m, sizeof *coins);
    scored *v = dpdo__alloc_array((size_t)m, sizeof *v);
    double *xo = dpdo__alloc_array((size_t)m + 1, sizeof *xo);
    world w;
    memset(&w, 0, sizeof w);
    if (!coins || !v || !xo) {
        rc = dpdo__err(a->err, DPDO_E_NOMEM, "audit: out of memory");
        goto out;
    }
    uint64_t cs = o->seed ^ 0xC01115ull, ks = o->seed ^ 0x0E0E0Eull;
    /* two runs with independent coins and keys: the pilot fixes the score (sum or last
     * message, or the model) and its sign; the audited run is scored with that choice only */
    int choice = 0, sign = 1;
    for (int pass = 0; pass < 2 && !rc; pass++) {
        for (int64_t j = 0; j < m; j++) {
            uint64_t b;
            if (o->randomness == DPDO_RANDOMNESS_SECURE)
                randombytes_buf(&b, sizeof b);
            else
                b = mix64(&cs);
            coins[j] = (b >> 63) ? 1 : -1;
        }
        world_free(&w);
        if ((rc = world_make(a, &w, c, 1, coins))) break;
        int64_t t = 0;
        if ((rc = one_run(a, &w, &ks, NULL, &t, pass ? "the audited run" : "the pilot run", pass)))
            break;
        if (pass == 1) {
            res->rounds = t;
            claims(&w, c, res);
        }
        const double *cand[3] = {w.pr.sum, w.pr.last, NULL};
        if (o->view == DPDO_AUDIT_VIEW_MODEL || w.pr.nmsg == 0) {
            if ((rc = dpdo_algorithm_get_output(w.alg, DPDO_NODE_ALL, xo, m + 1))) {
                dpdo__err(a->err, rc, "audit: %s", dpdo_algorithm_errmsg(w.alg));
                break;
            }
            cand[0] = xo, cand[1] = NULL;
        }
        if (pass ==
            0) { /* the pilot: pick the candidate score and sign with the largest correlation */
            double best = -1;
            for (int k = 0; k < 2 && cand[k]; k++) {
                double sx = 0, sxx = 0, sxy = 0;
                for (int64_t j = 0; j < m; j++)
                    sx += cand[k][j], sxx += cand[k][j] * cand[k][j], sxy += cand[k][j] * coins[j];
                double var = sxx / (double)m - (sx / (double)m) * (sx / (double)m);
                double corr = var > 0 ? (sxy / (double)m) / sqrt(var) : 0;
                if (fabs(corr) > best) best = fabs(corr), choice = k, sign = corr >= 0 ? 1 : -1;
            }
        } else {
            const double *sv = cand[choice] ? cand[choice] : cand[0];
            for (int64_t j = 0; j < m; j++)
                v[j] = (scored){sign * sv[j], coins[j]};
        }
        if ((rc = report(a, pass + 1, 2))) break;
    }
    if (rc) goto out;
    qsort(v, (size_t)m, sizeof *v, cmp_scored);
    int64_t grid[6] = {m / 100, m / 50, m / 20, m / 10, m / 5, m / 2}, ng = 0, ks_[6];
    if (o->guesses > 0)
        ks_[ng++] = o->guesses;
    else
        for (int g = 0; g < 6; g++) {
            int64_t k = grid[g] < 1 ? 1 : grid[g];
            int dup = 0;
            for (int h = 0; h < ng; h++)
                dup |= ks_[h] == k;
            if (!dup) ks_[ng++] = k;
        }
    double conf = 1 - (1 - o->confidence) / (double)ng; /* Bonferroni over the k tried */
    res->eps_lower = 0;
    res->eps_lower_paper = isnan(res->delta_paper) ? NAN : 0;
    for (int h = 0; h < ng && !rc; h++) {
        int64_t k = ks_[h], right = correct_guesses(v, m, k);
        double e = 0, ep = 0;
        if ((rc = dpdo_audit_one_run_epsilon(m, 2 * k, right, res->delta, conf, &e))) break;
        if (e >= res->eps_lower) res->eps_lower = e, res->guesses = 2 * k, res->correct = right;
        if (!isnan(res->delta_paper) && res->delta_paper < 1) {
            if ((rc = dpdo_audit_one_run_epsilon(m, 2 * k, right, res->delta_paper, conf, &ep)))
                break;
            if (ep > res->eps_lower_paper) res->eps_lower_paper = ep;
        }
    }
    if (rc) dpdo__err(a->err, rc, "audit: bound failed");
    res->runs = 2;
out:
    world_free(&w);
    dpdo__free(coins), dpdo__free(v), dpdo__free(xo);
    return rc;
}

/* The release and white-box audits: the canary at every node in turn (or at one), the
 * confidence split among the nodes and, for the white box, between its two bounds; the worst
 * node's figures. */
static int release_nodes(dpdo_audit *a, dpdo_audit_result *res)
{
    const dpdo_audit_options *o = &a->o;
    int64_t c = o->canary_node, rounds = 0, K = 1;
    int rc = DPDO_OK;
    if (c < 0 && o->single_node) {
        if ((rc = choose_node(a, &c, &rounds))) return rc;
    } else if (c < 0) {
        K = o->nodes;
    }
    double conf = 1 - (1 - o->confidence) / (double)K;
    if (o->method == DPDO_AUDIT_WHITE_BOX) conf = 1 - (1 - conf) / 2;
    dpdo_audit_result best = *res;
    int64_t runs = 0, seen = 0;
    for (int64_t k = 0; k < K && !rc; k++) {
        dpdo_audit_result r = *res;
        int silent = 0;
        rc = release_audit(a, &r, K > 1 ? k : c, conf, &silent);
        if (rc && silent && K > 1 && (k + 1 < K || seen)) { /* a node that never releases */
            rc = DPDO_OK;
            runs += 1; /* the one run that showed it */
            continue;
        }
        if (rc) break;
        runs += r.runs;
        if (seen++ == 0) best = r;
        /* the worst node: the largest bound beyond its claim (then the largest bound) */
        double m = r.eps_lower - r.eps_claimed, mb = best.eps_lower - best.eps_claimed;
        if (m > mb || (isnan(mb) && r.eps_lower > best.eps_lower)) best = r;
    }
    if (rc) return rc;
    *res = best;
    res->runs = runs;
    res->nodes_audited = K;
    return DPDO_OK;
}

DPDO_API int dpdo_audit_run(dpdo_audit *a, dpdo_audit_result *out)
{
    if (!a) return DPDO_E_INVAL;
    if (!a->set_up)
        return dpdo__err(a->err, DPDO_E_INVAL, "audit run: call dpdo_audit_setup first");
    if (!out) return dpdo__err(a->err, DPDO_E_INVAL, "audit run: NULL result");
    /* a caller compiled against 0.2 passes the struct up to `correct`; it gets those fields */
    size_t old = offsetof(dpdo_audit_result, path);
    if (out->struct_size < old)
        return dpdo__err(a->err, DPDO_E_VERSION,
                         "audit run: result struct_size %zu < %zu (built against an older "
                         "libdpdo?)",
                         out->struct_size, old);
    if (a->o.randomness == DPDO_RANDOMNESS_SECURE && sodium_init() < 0)
        return dpdo__err(a->err, DPDO_E_UNSUPPORTED,
                         "audit run: libsodium could not be initialised (no entropy)");
    size_t sz = out->struct_size;
    dpdo_audit_result full, *res = &full;
    memset(res, 0, sizeof full);
    res->struct_size = sz;
    res->confidence = a->o.confidence;
    res->delta = a->ao.delta;
    res->eps_claimed = NAN;
    res->eps_paper = res->delta_paper = res->eps_lower_paper = res->sigma = NAN;
    res->paper_valid = -1;
    res->threshold = res->tpr = res->fpr = NAN;
    res->path = a->o.path;
    res->keys = a->o.randomness;
    res->eps_lower_black = res->eps_lower_white = res->mu_lower = NAN;
    res->nodes_audited = 1;
    const char *pol = a->o.policy;
    uint64_t seed = a->ao.seed;
    int rc = a->o.method == DPDO_AUDIT_ONE_RUN ? one_run_audit(a, res) : choose_policy_setup(a);
    if (!rc && a->o.method != DPDO_AUDIT_ONE_RUN) rc = release_nodes(a, res);
    a->o.policy = pol, a->ao.seed = seed; /* the set-up as given, for the next run */
    if (rc) return rc;
    const double slack = 1e-9; /* rounding of the claimed figure */
    if (isnan(res->eps_claimed))
        res->verdict = DPDO_AUDIT_NO_CLAIM; /* the accountant gave no figure */
    else
        res->verdict = res->eps_lower > res->eps_claimed * (1 + slack) ? DPDO_AUDIT_VIOLATION
                                                                       : DPDO_AUDIT_CONSISTENT;
    if (isnan(res->eps_paper))
        res->paper_verdict = DPDO_AUDIT_NO_CLAIM;
    else
        res->paper_verdict = res->eps_lower_paper > res->eps_paper * (1 + slack)
                                 ? DPDO_AUDIT_VIOLATION
                                 : DPDO_AUDIT_CONSISTENT;
    memcpy(out, res, sz < sizeof full ? sz : sizeof full);
    if (sz > sizeof full) memset((char *)out + sizeof full, 0, sz - sizeof full);
    out->struct_size = sz;
    dpdo__err_clear(a->err);
    return DPDO_OK;
}
