/* SPDX-License-Identifier: BSD-3-Clause */
/* User algorithm types (dpdo/algorithm_type.h): a public vtable adapted to the engine's internal
 * one. The adapter owns the privacy side: it turns the declaration into sigma (the noise modes
 * through dpdo__eng_noise_plan), events and charges, draws every release's noise through
 * dpdo__eng_noise_gauss (grid noise on secure runs, the auditor's tap) and keeps the state
 * transactional (the user writes a next-state copy that commit installs). See
 * docs/writing-an-algorithm.md. */
#include "../rng/rng_impl.h"
#include "dpdo/algorithm_type.h"
#include "engine_impl.h"
#include <math.h>
#include <stdalign.h>
#include <stdio.h>
#include <string.h>

#define UA_MAX_BLOCKS 4
#define UA_NAME 32

enum { PH_NONE = 0, PH_CONFIGURE, PH_INIT, PH_PLAN, PH_ROUND };

/* The type object: `pub` first (its vt points at `vt`), so the engine's vt pointer leads back
 * here (ua_type_of). */
typedef struct ua_type {
    dpdo_algorithm_type pub;
    dpdo__alg_vt vt;
    dpdo_algorithm_vtable uvt;
    void *user;
    uint64_t magic;
    char name[UA_NAME];
    char title[160];
} ua_type;
#define UA_MAGIC 0x5553455254595045ull /* "USERTYPE" */

typedef struct ua {
    int32_t phase;
    int32_t nblk;
    int blk[UA_MAX_BLOCKS];  /* engine block index */
    int next[UA_MAX_BLOCKS]; /* scratch index of the next state */
    char bname[UA_MAX_BLOCKS][UA_NAME];
    dpdo_release_decl decl;
    dpdo__sampling_desc *samp; /* n */
    double *rel;               /* n x per_round x dim: this round's releases */
    int64_t *nrel;             /* n: releases so far this round */
    dpdo__stream *st;          /* n: each node's NOISE stream of the round */
    unsigned char *was;        /* n: the engine's activation draw (plan callback check) */
    size_t state_off;          /* offset of the user state in the priv block */
} ua;

static const ua_type *ua_type_of(const dpdo__eng *e)
{
    return (const ua_type *)((const char *)e->vt - offsetof(ua_type, vt));
}
static ua *ua_of(const dpdo__eng *e)
{
    return (ua *)e->priv;
}
static void *ua_state(const dpdo__eng *e)
{
    ua *U = ua_of(e);
    return ua_type_of(e)->uvt.state_size ? (char *)e->priv + U->state_off : NULL;
}
#define UT(e) ua_type_of(e)
#define CTX(e) ((dpdo_alg_ctx *)(e))
#define ENG(c) ((dpdo__eng *)(c))

static int cb_fail(dpdo__eng *e, int64_t node, const char *what, int code)
{
    /* a status an accessor returned with its message (dpdo_alg_release, ...): passed on */
    if (code < 0 && code >= DPDO_E_MISUSE && e->err[0]) return code;
    return dpdo__eng_err(e, DPDO_E_CALLBACK, node, "%s callback of '%s' returned %d", what,
                         UT(e)->name, code);
}

static void u_release(dpdo__eng *e, void *priv)
{
    ua *U = priv;
    const ua_type *T = UT(e);
    if (T->uvt.release) T->uvt.release(ua_state(e), T->user);
    dpdo__free(U->samp), dpdo__free(U->rel), dpdo__free(U->nrel), dpdo__free(U->st);
    dpdo__free(U->was);
    U->samp = NULL, U->rel = NULL, U->nrel = NULL, U->st = NULL, U->was = NULL;
}

static int u_configure(dpdo__eng *e, void *priv)
{
    ua *U = priv;
    const ua_type *T = UT(e);
    if (T->uvt.needs_network && !e->net)
        return dpdo__err(e->err, DPDO_E_INVAL, "setup: '%s' needs a network", T->name);
    U->state_off = (sizeof(ua) + 63) / 64 * 64;
    U->samp = dpdo__calloc((size_t)e->n, sizeof *U->samp);
    U->nrel = dpdo__calloc((size_t)e->n, sizeof *U->nrel);
    U->st = dpdo__calloc((size_t)e->n, sizeof *U->st);
    U->was = dpdo__calloc((size_t)e->n, 1);
    if (!U->samp || !U->nrel || !U->st || !U->was) return DPDO_E_NOMEM;
    U->phase = PH_CONFIGURE;
    int rc = T->uvt.configure ? T->uvt.configure(CTX(e), ua_state(e), T->user) : 0;
    U->phase = PH_NONE;
    if (rc == DPDO_E_NOMEM) return rc;
    if (rc) {
        if (!e->err[0]) cb_fail(e, -1, "configure", rc);
        return DPDO_E_CALLBACK;
    }
    for (int32_t k = 0; k < U->nblk; k++) {
        const dpdo__block *b = &e->blk[U->blk[k]];
        int s = dpdo__eng_scratch(e, (size_t)b->rows * (size_t)b->cols * sizeof(double));
        if (s < 0) return DPDO_E_NOMEM;
        U->next[k] = s;
    }
    return DPDO_OK;
}

static int u_rigorous(dpdo__eng *e, void *priv, double *sigma)
{
    ua *U = priv;
    const dpdo_release_decl *D = &U->decl;
    dpdo__sampling_desc sd = {DPDO_SAMPLING_NONE, 1.0, 0, 0};
    if (D->sampling == DPDO_RELEASE_WOR)
        sd = (dpdo__sampling_desc){DPDO_SAMPLING_WOR, (double)D->batch / (double)e->qmin, e->qmin,
                                   D->batch};
    double K = dpdo__eng_calib_counts(e, NULL, D->participation) * (double)D->per_round;
    for (int64_t i = 0; i < e->n; i++)
        if (e->pv.planned[i] < INT64_MAX / D->per_round) e->pv.planned[i] *= D->per_round;
    int rc = dpdo__eng_calibrate_sigma(e, &sd, D->sensitivity, K, sigma);
    if (!rc) dpdo__eng_note_wor_floor(e, &sd, D->sensitivity, K, *sigma);
    return rc;
}

static int u_prepare(dpdo__eng *e, void *priv)
{
    ua *U = priv;
    const ua_type *T = UT(e);
    dpdo_release_decl *D = &U->decl;
    *D = (dpdo_release_decl){.struct_size = sizeof *D,
                             .mechanism = DPDO_RELEASE_GAUSSIAN,
                             .sampling = DPDO_RELEASE_FULL,
                             .batch = 0,
                             .sensitivity = NAN,
                             .dim = e->d,
                             .per_round = 1,
                             .participation = 1.0};
    int rc = T->uvt.declare(CTX(e), ua_state(e), T->user, D);
    if (rc) return e->err[0] ? DPDO_E_CALLBACK : cb_fail(e, -1, "declare", rc);
    if (D->mechanism != DPDO_RELEASE_GAUSSIAN)
        return dpdo__err(e->err, DPDO_E_UNSUPPORTED,
                         "prepare: '%s' declares mechanism %d; only DPDO_RELEASE_GAUSSIAN is "
                         "supported",
                         T->name, (int)D->mechanism);
    if (D->sampling != DPDO_RELEASE_FULL && D->sampling != DPDO_RELEASE_WOR)
        return dpdo__err(e->err, DPDO_E_INVAL, "prepare: '%s' declares sampling %d", T->name,
                         (int)D->sampling);
    if (D->sampling == DPDO_RELEASE_WOR && !(D->batch >= 1 && D->batch <= e->qmin))
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: '%s' declares batch %lld; it must lie in [1, %lld] (the "
                         "smallest shard)",
                         T->name, (long long)D->batch, (long long)e->qmin);
    if (!(D->sensitivity > 0 && D->sensitivity < INFINITY))
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: '%s' declares sensitivity %g; it must be finite and > 0",
                         T->name, D->sensitivity);
    if (!(D->dim >= 1 && D->dim <= ((int64_t)1 << 40)) ||
        !(D->per_round >= 1 && D->per_round <= 1024))
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: '%s' declares dim %lld and per_round %lld; need dim >= 1 and "
                         "1 <= per_round <= 1024",
                         T->name, (long long)D->dim, (long long)D->per_round);
    if (!(D->participation > 0 && D->participation <= 1))
        return dpdo__err(e->err, DPDO_E_INVAL,
                         "prepare: '%s' declares participation %g; it must lie in (0, 1]", T->name,
                         D->participation);
    if (e->o.noise_mode == DPDO_NOISE_PAPER)
        return dpdo__err(e->err, DPDO_E_UNSUPPORTED,
                         "prepare: '%s' has no paper calibration; use DPDO_NOISE_RIGOROUS, "
                         "FIXED or NONE",
                         T->name);
    dpdo__free(U->rel);
    U->rel =
        dpdo__alloc_array((size_t)e->n * (size_t)D->per_round, (size_t)D->dim * sizeof(double));
    if (!U->rel) return dpdo__err(e->err, DPDO_E_NOMEM, "prepare: out of memory");
    e->pv.sens = D->sensitivity;
    static const dpdo__noise_plan NP = {.rigorous = u_rigorous};
    double sigma = 0;
    if ((rc = dpdo__eng_noise_plan(e, U, &NP, &sigma))) return rc;
    if (D->sampling == DPDO_RELEASE_WOR)
        return dpdo__eng_events_wor(e, D->batch, D->sensitivity, sigma, U->samp);
    e->pv.nev = 0;
    if (!e->pv.private_run) return DPDO_OK;
    dpdo__sampling_desc none = {DPDO_SAMPLING_NONE, 1.0, 0, 0};
    char err[DPDO__ERRMSG_LEN];
    if ((rc =
             dpdo__event_make(&e->pv.ev[0], DPDO_MECH_GAUSSIAN, &none, D->sensitivity, sigma, err)))
        return dpdo__err(e->err, rc, "prepare: %s", err);
    e->pv.nev = 1;
    for (int64_t i = 0; i < e->n; i++)
        e->pv.node_ev[i] = 0;
    return DPDO_OK;
}

static void u_init(dpdo__eng *e, void *priv)
{
    ua *U = priv;
    const ua_type *T = UT(e);
    for (int32_t k = 0; k < U->nblk; k++) {
        const dpdo__block *b = &e->blk[U->blk[k]];
        memset(b->cur, 0, (size_t)b->rows * (size_t)b->cols * sizeof(double));
    }
    U->phase = PH_INIT;
    T->uvt.init(CTX(e), ua_state(e), T->user);
    U->phase = PH_NONE;
}

static int u_plan(dpdo__eng *e, void *priv, dpdo__plan *p)
{
    ua *U = priv;
    const ua_type *T = UT(e);
    e->err[0] = 0; /* cb_fail: a message now is this round's */
    dpdo__plan_bernoulli(e, p, U->decl.participation);
    if (T->uvt.plan) {
        unsigned char *was = U->was;
        memcpy(was, p->is_comp, (size_t)e->n);
        U->phase = PH_PLAN;
        int rc = T->uvt.plan(CTX(e), ua_state(e), T->user, p->is_comp);
        U->phase = PH_NONE;
        int64_t bad = -1;
        for (int64_t i = 0; i < e->n && bad < 0; i++)
            if (p->is_comp[i] && !was[i]) bad = i;
        if (rc) return cb_fail(e, -1, "plan", rc);
        if (bad >= 0)
            return dpdo__eng_err(e, DPDO_E_STATE, bad,
                                 "plan callback of '%s' activated a node the engine's draw left "
                                 "inactive",
                                 T->name);
    }
    dpdo__plan_list(p, e->n);
    /* stage 0: local (the releases) and combine. What moves in a distributed run: the releases
     * (every process gets every node's, so combine may read any node's) and, as the transcript,
     * node j's release as its message to its neighbours when it is one model-sized vector.
     * Stage 1 (distributed runs only) shares the next-state rows combine wrote, so that every
     * process holds every node's state for the next round. */
    const dpdo_release_decl *D = &U->decl;
    dpdo__stage *s0 = &p->stage[0];
    p->nstages = e->dist ? 2 : 1;
    s0->who = DPDO__RUN_ALL;
    if (e->net) {
        int dense = D->dim == e->d && D->per_round == 1;
        s0->npat = 1;
        s0->pat[0] = (dpdo__xpat){.kind = DPDO__PAT_NET,
                                  .payload = DPDO__PAY_DENSE,
                                  .buf = dense ? U->rel : NULL,
                                  .ld = dense ? e->d : 0};
    }
    s0->nshare = 2;
    s0->share[0] = (dpdo__piece){U->rel, D->per_round * D->dim * (int64_t)sizeof(double)};
    s0->share[1] = (dpdo__piece){U->nrel, (int64_t)sizeof *U->nrel};
    dpdo__stage *s1 = &p->stage[1];
    s1->who = DPDO__RUN_ALL;
    for (int32_t k = 0; k < U->nblk; k++) {
        const dpdo__block *b = &e->blk[U->blk[k]];
        if (b->rows == e->n)
            s1->share[s1->nshare++] =
                (dpdo__piece){e->scr[U->next[k]], b->cols * (int64_t)sizeof(double)};
    }
    for (int32_t k = 0; k < U->nblk; k++) { /* the next state starts as the current one */
        const dpdo__block *b = &e->blk[U->blk[k]];
        memcpy(e->scr[U->next[k]], b->cur, (size_t)b->rows * (size_t)b->cols * sizeof(double));
    }
    memset(U->nrel, 0, (size_t)e->n * sizeof *U->nrel);
    U->phase = PH_ROUND;
    if (dpdo__plan_charge_computing(e, p, U->decl.per_round)) return e->plan.charge_err;
    return DPDO_OK;
}

static int u_local(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t stage, int64_t i)
{
    (void)priv, (void)p;
    const ua_type *T = UT(e);
    if (stage) return DPDO_OK; /* the state-sharing stage */
    int rc = T->uvt.local(CTX(e), ua_state(e), T->user, i);
    if (rc) return cb_fail(e, i, "local", rc);
    return DPDO_OK;
}

static int u_combine(dpdo__eng *e, void *priv, const dpdo__plan *p, int32_t stage, int64_t i)
{
    (void)priv, (void)p;
    const ua_type *T = UT(e);
    if (!T->uvt.combine || stage) return DPDO_OK;
    int rc = T->uvt.combine(CTX(e), ua_state(e), T->user, i);
    if (rc) return cb_fail(e, i, "combine", rc);
    return DPDO_OK;
}

static int u_check(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    (void)p;
    ua *U = priv;
    U->phase = PH_NONE; /* the round's callbacks are over */
    for (int32_t k = 0; k < U->nblk; k++) {
        const dpdo__block *b = &e->blk[U->blk[k]];
        size_t len = (size_t)b->rows * (size_t)b->cols, j;
        const double *x = e->scr[U->next[k]];
        if ((j = dpdo__first_nonfinite(x, len)) < len)
            return dpdo__eng_err(e, DPDO_E_NUMERIC, (int64_t)(j / (size_t)b->cols),
                                 "%s[%zu] = %g after the update", U->bname[k], j % (size_t)b->cols,
                                 x[j]);
    }
    return DPDO_OK;
}

static void u_commit(dpdo__eng *e, void *priv, const dpdo__plan *p)
{
    (void)p;
    ua *U = priv;
    U->phase = PH_NONE;
    for (int32_t k = 0; k < U->nblk; k++) {
        const dpdo__block *b = &e->blk[U->blk[k]];
        memcpy(b->cur, e->scr[U->next[k]], (size_t)b->rows * (size_t)b->cols * sizeof(double));
    }
}

static void u_output(const dpdo__eng *e, const void *priv, int64_t i, double *x)
{
    (void)priv;
    const ua_type *T = UT(e);
    T->uvt.output((const dpdo_alg_ctx *)e, ua_state(e), T->user, i, x);
}

/* ---- the type object -------------------------------------------------------------------- */

static int name_ok(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9') || s[n] == '-'))
            return 0;
    return n >= 1 && n < UA_NAME;
}

DPDO_API int dpdo_algorithm_type_define(const dpdo_algorithm_vtable *vt, void *user,
                                        dpdo_algorithm_type **out)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (!vt) return DPDO_E_INVAL;
    if (vt->struct_size < offsetof(dpdo_algorithm_vtable, release)) return DPDO_E_VERSION;
    dpdo_algorithm_vtable u;
    memset(&u, 0, sizeof u);
    memcpy(&u, vt, vt->struct_size < sizeof u ? vt->struct_size : sizeof u);
    if (!u.name || !name_ok(u.name) || dpdo_algorithm_type_find(u.name) || !u.declare || !u.init ||
        !u.local || !u.output || u.state_size > ((size_t)1 << 40))
        return DPDO_E_INVAL;
    ua_type *t = dpdo__calloc(1, sizeof *t);
    if (!t) return DPDO_E_NOMEM;
    t->magic = UA_MAGIC;
    t->uvt = u;
    t->user = user;
    snprintf(t->name, sizeof t->name, "%s", u.name);
    snprintf(t->title, sizeof t->title, "%s", u.title ? u.title : u.name);
    t->uvt.name = t->name;
    t->uvt.title = t->title;
    t->vt = (dpdo__alg_vt){.name = t->name,
                           .title = t->title,
                           .priv_size = (sizeof(ua) + 63) / 64 * 64 + u.state_size,
                           .needs_net = u.needs_network != 0,
                           .distributable = 1,
                           .configure = u_configure,
                           .prepare = u_prepare,
                           .init = u_init,
                           .plan = u_plan,
                           .local = u_local,
                           .combine = u_combine,
                           .check = u_check,
                           .commit = u_commit,
                           .output = u_output,
                           .release = u_release};
    t->pub.vt = &t->vt;
    *out = &t->pub;
    return DPDO_OK;
}

static ua_type *user_type(const dpdo_algorithm_type *t)
{
    if (!t || !t->vt || t->vt->release != u_release) return NULL;
    ua_type *u = (ua_type *)((char *)t - offsetof(ua_type, pub));
    return u->magic == UA_MAGIC ? u : NULL;
}

DPDO_API void dpdo_algorithm_type_destroy(dpdo_algorithm_type *t)
{
    ua_type *u = user_type(t);
    if (!u) return;
    u->magic = 0;
    dpdo__free(u);
}

DPDO_API int dpdo_algorithm_type_is_user(const dpdo_algorithm_type *t)
{
    return user_type(t) != NULL;
}

/* ---- accessors -------------------------------------------------------------------------- */

DPDO_API int64_t dpdo_alg_nodes(const dpdo_alg_ctx *c)
{
    return c ? ENG(c)->n : 0;
}

DPDO_API int64_t dpdo_alg_dim(const dpdo_alg_ctx *c)
{
    return c ? ENG(c)->d : 0;
}

DPDO_API uint64_t dpdo_alg_round(const dpdo_alg_ctx *c)
{
    if (!c) return 0;
    const dpdo__eng *e = ENG(c);
    int ph = ua_of(e)->phase;
    return ph == PH_PLAN || ph == PH_ROUND ? e->plan.t : e->round;
}

DPDO_API dpdo_node *dpdo_alg_node(const dpdo_alg_ctx *c, int64_t i)
{
    return c && i >= 0 && i < ENG(c)->n ? ENG(c)->nodes[i] : NULL;
}

DPDO_API dpdo_network *dpdo_alg_network(const dpdo_alg_ctx *c)
{
    return c ? ENG(c)->net : NULL;
}

DPDO_API const dpdo_algorithm_options *dpdo_alg_options(const dpdo_alg_ctx *c)
{
    return c ? &ENG(c)->o : NULL;
}

DPDO_API int dpdo_alg_param(const dpdo_alg_ctx *c, int key, double *value)
{
    if (!c || !value) return DPDO_E_INVAL;
    const dpdo__eng *e = ENG(c);
    int s = dpdo__param_slot(e->vt, key);
    const dpdo__pdef *def = dpdo__param_def(e->vt, key);
    if (s < 0 || !def) return DPDO_E_INVAL;
    *value = def->type ? e->pd[s] : (double)e->pi[s];
    return DPDO_OK;
}

DPDO_API int dpdo_alg_block(dpdo_alg_ctx *c, const char *name, int64_t rows, int64_t cols)
{
    if (!c || !name || !name[0] || strlen(name) >= UA_NAME) return DPDO_E_INVAL;
    dpdo__eng *e = ENG(c);
    ua *U = ua_of(e);
    if (U->phase != PH_CONFIGURE) return DPDO_E_STATE;
    if (U->nblk >= UA_MAX_BLOCKS) return DPDO_E_INVAL;
    if (!(rows >= 1 && cols >= 1 && rows <= ((int64_t)1 << 31) && cols <= ((int64_t)1 << 31)))
        return DPDO_E_INVAL;
    for (int32_t k = 0; k < U->nblk; k++)
        if (strcmp(U->bname[k], name) == 0) return DPDO_E_INVAL;
    snprintf(U->bname[U->nblk], UA_NAME, "%s", name);
    int b = dpdo__eng_block(e, U->bname[U->nblk], rows, cols);
    if (b < 0) return DPDO_E_INVAL;
    U->blk[U->nblk] = b;
    U->next[U->nblk] = -1;
    return U->nblk++;
}

static int blk_ok(const dpdo__eng *e, int k, int64_t row)
{
    const ua *U = ua_of(e);
    return k >= 0 && k < U->nblk && row >= 0 && row < e->blk[U->blk[k]].rows;
}

DPDO_API const double *dpdo_alg_state(const dpdo_alg_ctx *c, int k, int64_t row)
{
    if (!c || !blk_ok(ENG(c), k, row)) return NULL;
    const dpdo__eng *e = ENG(c);
    const dpdo__block *b = &e->blk[ua_of(e)->blk[k]];
    return b->cur + (size_t)row * (size_t)b->cols;
}

DPDO_API double *dpdo_alg_next(dpdo_alg_ctx *c, int k, int64_t row)
{
    if (!c || !blk_ok(ENG(c), k, row)) return NULL;
    dpdo__eng *e = ENG(c);
    ua *U = ua_of(e);
    const dpdo__block *b = &e->blk[U->blk[k]];
    size_t off = (size_t)row * (size_t)b->cols;
    if (U->phase == PH_INIT) return b->cur + off;
    if (U->phase == PH_ROUND) return (double *)e->scr[U->next[k]] + off;
    return NULL;
}

DPDO_API int dpdo_alg_active(const dpdo_alg_ctx *c, int64_t node)
{
    if (!c) return 0;
    const dpdo__eng *e = ENG(c);
    int ph = ua_of(e)->phase;
    return (ph == PH_PLAN || ph == PH_ROUND) && node >= 0 && node < e->n && e->plan.is_comp[node];
}

DPDO_API int dpdo_alg_sample(dpdo_alg_ctx *c, int64_t node, int64_t *idx, int64_t cap,
                             int64_t *count)
{
    if (!c || !idx || !count) return DPDO_E_INVAL;
    dpdo__eng *e = ENG(c);
    ua *U = ua_of(e);
    if (U->phase != PH_ROUND || U->decl.sampling != DPDO_RELEASE_WOR || node < 0 || node >= e->n ||
        !e->plan.is_comp[node])
        return dpdo__eng_err(e, DPDO_E_STATE, node,
                             "dpdo_alg_sample: only in local, for an active node of a WOR "
                             "declaration");
    if (cap < U->decl.batch)
        return dpdo__eng_err(e, DPDO_E_INVAL, node, "dpdo_alg_sample: cap %lld < batch %lld",
                             (long long)cap, (long long)U->decl.batch);
    dpdo__stream st;
    dpdo__stream_open(&st, e->rng, (uint64_t)node, e->plan.t, DPDO_PURPOSE_SAMPLE);
    int rc = dpdo__sampling_draw(&U->samp[node], &st, e->q[node], idx, count);
    if (rc)
        return dpdo__eng_err(e, rc, node, "drawing the sample failed (generator code %d)",
                             dpdo__stream_cb_code(&st));
    return DPDO_OK;
}

DPDO_API int dpdo_alg_release(dpdo_alg_ctx *c, int64_t node, double *vec, int64_t dim)
{
    if (!c) return DPDO_E_INVAL;
    dpdo__eng *e = ENG(c);
    ua *U = ua_of(e);
    const dpdo_release_decl *D = &U->decl;
    if (!vec || dim != D->dim)
        return dpdo__eng_err(e, DPDO_E_INVAL, node,
                             "dpdo_alg_release: vec is NULL or dim %lld differs from the "
                             "declared %lld",
                             (long long)dim, (long long)D->dim);
    if (U->phase != PH_ROUND || node < 0 || node >= e->n || !e->plan.is_comp[node] ||
        !e->plan.in_local)
        return dpdo__eng_err(e, DPDO_E_STATE, node,
                             "dpdo_alg_release: only in local, for an active node");
    int64_t k = U->nrel[node];
    if (k >= D->per_round)
        return dpdo__eng_err(e, DPDO_E_STATE, node,
                             "dpdo_alg_release: more than the declared %lld releases this round",
                             (long long)D->per_round);
    if (e->pv.sigma > 0) {
        if (k == 0)
            dpdo__stream_open(&U->st[node], e->rng, (uint64_t)node, e->plan.t, DPDO_PURPOSE_NOISE);
        int rc = dpdo__eng_noise_gauss(e, &U->st[node], node, e->pv.sigma, D->sensitivity, vec,
                                       (size_t)dim);
        if (rc) return rc;
    }
    memcpy(U->rel + ((size_t)node * (size_t)D->per_round + (size_t)k) * (size_t)dim, vec,
           (size_t)dim * sizeof(double));
    U->nrel[node] = k + 1;
    return DPDO_OK;
}

DPDO_API const double *dpdo_alg_released(const dpdo_alg_ctx *c, int64_t node, int64_t k)
{
    if (!c) return NULL;
    const dpdo__eng *e = ENG(c);
    const ua *U = ua_of(e);
    if (U->phase != PH_ROUND || node < 0 || node >= e->n || k < 0 || k >= U->nrel[node])
        return NULL;
    return U->rel + ((size_t)node * (size_t)U->decl.per_round + (size_t)k) * (size_t)U->decl.dim;
}

DPDO_API double dpdo_alg_sigma(const dpdo_alg_ctx *c)
{
    if (!c) return 0;
    double s = ENG(c)->pv.sigma;
    return s > 0 ? s : 0;
}
