/* SPDX-License-Identifier: BSD-3-Clause */
/* The algorithm engine: life cycle, parameters, one round, privacy plumbing,
 * counters and copy-out getters. See engine_impl.h for the round contract and
 * docs/architecture.md ("Engine") for the design. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include "engine_impl.h"
#include "../core/pool_impl.h"
#include "../rng/rng_impl.h"
#include "../model/model_impl.h"
#include "dpdo/solver.h"
#include "../model/policy_impl.h"
#include "dpdo/compressor.h"
#include "dpdo/checkpoint.h"


struct dpdo_algorithm {
    uint32_t magic; /* DPDO__MAGIC_* while alive, 0 after destroy (core_impl.h) */
    const dpdo__alg_vt *vt;
    int state, stop;
    dpdo__eng *e; /* NULL while EMPTY */
    dpdo_progress_fn progress;  /* dpdo_algorithm_set_progress; NULL = none */
    void *progress_user;
    int64_t progress_every;
    int32_t progress_flags;
    char errmsg[DPDO__ERRMSG_LEN];
};

/* ---- registry ------------------------------------------------------------ */

static const dpdo_algorithm_type TYPES[] = {{&dpdo__vt_dp_dda}, {&dpdo__vt_dp_dda_baseline}, {&dpdo__vt_fed_plt},
                                             {&dpdo__vt_fedpd},  {&dpdo__vt_fedlin},           {&dpdo__vt_tamuna},
                                             {&dpdo__vt_led},    {&dpdo__vt_5gcs},             {&dpdo__vt_dp_wor_sgd},
                                             {&dpdo__vt_dp_sgd_wr},    {&dpdo__vt_do_adp},
                                             {&dpdo__vt_dpdo_huang},   {&dpdo__vt_cpgt}};
#define NTYPES ((int)(sizeof TYPES / sizeof TYPES[0]))

DPDO_API const dpdo_algorithm_type *dpdo_algorithm_type_find(const char *name)
{
    if (!name) return NULL;
    for (int i = 0; i < NTYPES; i++)
        if (strcmp(TYPES[i].vt->name, name) == 0) return &TYPES[i];
    return NULL;
}

DPDO_API const dpdo_algorithm_type *dpdo_algorithm_type_next(const dpdo_algorithm_type *prev)
{
    if (!prev) return &TYPES[0];
    for (int i = 0; i + 1 < NTYPES; i++)
        if (prev == &TYPES[i]) return &TYPES[i + 1];
    return NULL;
}

DPDO_API const char *dpdo_algorithm_type_name(const dpdo_algorithm_type *t)
{
    return t ? t->vt->name : "(null)";
}

DPDO_API const char *dpdo_algorithm_type_title(const dpdo_algorithm_type *t)
{
    return t ? t->vt->title : "(null)";
}

/* ---- options --------------------------------------------------------------- */

#define OPTS_V01 (offsetof(dpdo_algorithm_options, randomness) + sizeof(int32_t))

DPDO_API int dpdo_algorithm_options_init(dpdo_algorithm_options *o, size_t struct_size)
{
    if (!o) return DPDO_E_INVAL;
    if (struct_size < OPTS_V01) return DPDO_E_VERSION;
    dpdo_algorithm_options d;
    memset(&d, 0, sizeof d);
    d.struct_size = struct_size < sizeof d ? struct_size : sizeof d;
    d.seed = 0;
    d.max_rounds = 1000;
    d.step_size = NAN;
    d.step_power = NAN;
    d.noise_mode = DPDO_NOISE_RIGOROUS;
    d.strict = 0;
    d.epsilon = 1.0;
    d.delta = 1e-5;
    d.max_epsilon = 0.0;
    d.sigma = NAN;
    d.lipschitz = 1.0;
    d.clip = NAN;
    d.batch = 1;
    d.tol = 0.0;
    d.check_every = 1;
    d.weighting = -1;
    d.randomness = DPDO_RANDOMNESS_SECURE;
    d.num_threads = 0;
    if (struct_size > sizeof d) memset((char *)o + sizeof d, 0, struct_size - sizeof d);
    memcpy(o, &d, sizeof d < struct_size ? sizeof d : struct_size);
    o->struct_size = struct_size;
    return DPDO_OK;
}

static int check_options(const dpdo_algorithm_options *o, char *err)
{
#define BAD(...) return dpdo__err(err, DPDO_E_INVAL, "setup: " __VA_ARGS__)
    if (!(o->max_rounds >= 1 && o->max_rounds <= 281474976710655LL))
        BAD("options.max_rounds = %lld: must be in [1, 2^48-1]", (long long)o->max_rounds);
    if (!isnan(o->step_size) && !(o->step_size >= 0 && o->step_size <= 1e300))
        BAD("options.step_size = %g: must be NaN (preset) or in [0, 1e300]", o->step_size);
    if (!isnan(o->step_power) && !(o->step_power >= 0 && o->step_power <= 4))
        BAD("options.step_power = %g: must be NaN (preset) or in [0, 4]", o->step_power);
    if (o->noise_mode < DPDO_NOISE_NONE || o->noise_mode > DPDO_NOISE_FIXED)
        BAD("options.noise_mode = %d: not a DPDO_NOISE_* value", (int)o->noise_mode);
    if (o->strict != 0 && o->strict != 1) BAD("options.strict = %d: must be 0 or 1", (int)o->strict);
    if (!(o->epsilon > 0 && o->epsilon < INFINITY))
        BAD("options.epsilon = %g: must be finite and > 0", o->epsilon);
    if (!(o->delta > 0 && o->delta < 1)) BAD("options.delta = %g: must be in (0, 1)", o->delta);
    if (!(o->max_epsilon >= 0)) BAD("options.max_epsilon = %g: must be >= 0 (+inf = off)", o->max_epsilon);
    if (o->noise_mode == DPDO_NOISE_FIXED && !(o->sigma >= 0 && o->sigma <= 1e300))
        BAD("options.sigma = %g: DPDO_NOISE_FIXED needs a finite sigma >= 0", o->sigma);
    if (!(o->lipschitz > 0 && o->lipschitz < INFINITY))
        BAD("options.lipschitz = %g: must be finite and > 0", o->lipschitz);
    if (!isnan(o->clip) && !(o->clip > 0))
        BAD("options.clip = %g: must be > 0, +inf (no clipping) or NaN (= lipschitz)", o->clip);
    if (o->batch < 1) BAD("options.batch = %lld: must be >= 1", (long long)o->batch);
    if (!(o->tol >= 0 && o->tol < INFINITY)) BAD("options.tol = %g: must be finite and >= 0", o->tol);
    if (o->check_every < 1) BAD("options.check_every = %lld: must be >= 1", (long long)o->check_every);
    if (o->weighting < -1 || o->weighting > DPDO_WEIGHT_NODE_WEIGHTS)
        BAD("options.weighting = %d: must be -1 or a DPDO_WEIGHT_* value", (int)o->weighting);
    if (o->randomness != DPDO_RANDOMNESS_SECURE && o->randomness != DPDO_RANDOMNESS_REPRODUCIBLE)
        BAD("options.randomness = %d: must be DPDO_RANDOMNESS_SECURE (0) or DPDO_RANDOMNESS_REPRODUCIBLE (1)",
            (int)o->randomness);
    if (o->num_threads < 0 || o->num_threads > DPDO__MAX_THREADS)
        BAD("options.num_threads = %d: must be in [0, %d] (0 = DPDO_NUM_THREADS or 1)", (int)o->num_threads,
            DPDO__MAX_THREADS);
    return DPDO_OK;
#undef BAD
}

/* ---- engine helpers for algorithms -------------------------------------------- */

int dpdo__eng_block(dpdo__eng *e, const char *name, int64_t rows, int64_t cols)
{
    if (e->nblk >= DPDO__MAX_BLOCKS) return -1;
    dpdo__block *b = &e->blk[e->nblk];
    b->name = name;
    b->rows = rows;
    b->cols = cols;
    b->cur = NULL;
    return e->nblk++;
}

int dpdo__eng_scratch(dpdo__eng *e, size_t bytes)
{
    if (e->nscr >= DPDO__MAX_SCRATCH) return -1;
    e->scr_bytes[e->nscr] = bytes;
    e->scr[e->nscr] = NULL;
    return e->nscr++;
}

int dpdo__eng_err(dpdo__eng *e, int status, int64_t node, const char *fmt, ...)
{
    char msg[DPDO__ERRMSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (node >= 0)
        return dpdo__err(e->err, status, "round %llu, node %lld: %s", (unsigned long long)e->plan.t,
                         (long long)node, msg);
    return dpdo__err(e->err, status, "round %llu: %s", (unsigned long long)e->plan.t, msg);
}

/* ---- engine object ------------------------------------------------------------ */

static void eng_free(dpdo__eng *e)
{
    if (!e) return;
    if (e->priv && e->vt->release) e->vt->release(e, e->priv);
    dpdo__free(e->priv);
    dpdo_paper_destroy(e->pv.paper);
    dpdo__free(e->pv.ev);
    dpdo__free(e->pv.node_ev);
    dpdo__free(e->pv.allow);
    dpdo__free(e->pv.used);
    dpdo__free(e->pv.planned);
    dpdo__free(e->pv.charged);
    dpdo__free_aligned(e->arena);
    dpdo__free(e->nodes);
    dpdo__free(e->q);
    dpdo__free(e->plan.comp);
    dpdo__free(e->plan.is_comp);
    dpdo__free(e->plan.charge);
    dpdo__free(e->comm);
    dpdo__free(e->rcomm);
    dpdo__free(e->last_active);
    dpdo__free(e->mask_list);
    dpdo__free(e->node_p);
    dpdo__free(e->tmp_a);
    dpdo__free(e->tmp_b);
    dpdo__free(e->tol_prev);
    dpdo_reference_destroy(e->ref);
    dpdo__dist_detach(e);
    if (e->key) sodium_memzero(e->key, 32 * (size_t)e->n);
    dpdo__free(e->key);
    dpdo__free(e->key_src);
    dpdo_rng_destroy(e->rng);
    if (e->own_solver) dpdo_solver_destroy(e->solver);
    if (e->own_policy) dpdo_policy_destroy(e->policy);
    if (e->own_comp) dpdo_compressor_destroy(e->comp);
    if (e->net) dpdo__network_release(e->net);
    dpdo__free(e);
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return x < y ? -1 : x > y;
}

/* Everything independent of the algorithm: nodes, network, regularizer,
 * accountant. Writes the message into err. */
static int check_problem(const dpdo__alg_vt *vt, dpdo_node *const *nodes, int32_t n,
                         dpdo_network *net, dpdo_regularizer *reg, dpdo_accountant *acc,
                         const dpdo_algorithm_options *o, char *err)
{
    if (!nodes) return dpdo__err(err, DPDO_E_INVAL, "setup: nodes is NULL");
    if (n < 1) return dpdo__err(err, DPDO_E_INVAL, "setup: n_nodes = %d: must be >= 1", (int)n);
    int64_t d = 0;
    for (int32_t i = 0; i < n; i++) {
        const struct dpdo_node *nd = nodes[i];
        if (!nd) return dpdo__err(err, DPDO_E_INVAL, "setup: node %d is NULL", (int)i);
        if (i == 0) d = nd->dim;
        if (nd->dim != d)
            return dpdo__err(err, DPDO_E_INVAL, "setup: node %d: dimension %lld differs from node 0's %lld",
                             (int)i, (long long)nd->dim, (long long)d);
        if (nd->loss->kind == DPDO_LOSS_KIND_MODEL || (!nd->shard && nd->remote_rows < 1))
            return dpdo__err(err, DPDO_E_INVAL,
                             "setup: node %d: %s needs a sample-kind loss (phi or batch) with a shard: "
                             "a model-kind loss has no samples to draw or account for",
                             (int)i, vt->name);
        if (dpdo_node_samples(nd) < 1)
            return dpdo__err(err, DPDO_E_INVAL, "setup: node %d: the shard is empty", (int)i);
    }
    if (!net && vt->needs_net)
        return dpdo__err(err, DPDO_E_INVAL, "setup: %s needs a network (net is NULL)", vt->name);
    if (net && dpdo_network_nodes(net) != n)
        return dpdo__err(err, DPDO_E_INVAL, "setup: the network has %lld nodes, but %d nodes were given",
                         (long long)dpdo_network_nodes(net), (int)n);
    if (reg && reg->dim != d)
        return dpdo__err(err, DPDO_E_INVAL, "setup: the regularizer's dimension %lld differs from the nodes' %lld",
                         (long long)reg->dim, (long long)d);
    if (!acc && o->noise_mode != DPDO_NOISE_NONE)
        return dpdo__err(err, DPDO_E_INVAL,
                         "setup: acc is NULL: a noisy run (noise_mode %d) needs an accountant", (int)o->noise_mode);
    if (acc && dpdo_ledger_nodes(dpdo__accountant_ledger(acc)) != n)
        return dpdo__err(err, DPDO_E_INVAL, "setup: the accountant's ledger has %lld nodes, but %d nodes were given",
                         (long long)dpdo_ledger_nodes(dpdo__accountant_ledger(acc)), (int)n);
    return DPDO_OK;
}

static int alloc_eng(dpdo__eng *e)
{
    size_t n = (size_t)e->n, d = (size_t)e->d;
    e->q = dpdo__alloc_array(n, sizeof *e->q);
    e->plan.comp = dpdo__alloc_array(n, sizeof *e->plan.comp);
    e->plan.is_comp = dpdo__calloc(n, 1);
    e->plan.charge = dpdo__alloc_array(n, sizeof *e->plan.charge);
    e->comm = dpdo__calloc(n + 1, sizeof *e->comm);
    e->rcomm = dpdo__calloc(n + 1, sizeof *e->rcomm);
    e->last_active = dpdo__calloc(n, 1);
    e->tmp_a = dpdo__alloc_array(d, sizeof(double));
    e->tmp_b = dpdo__alloc_array(d, sizeof(double));
    e->tol_prev = dpdo__calloc(d, sizeof(double)); /* zero: checkpoints copy it before the first test */
    e->pv.node_ev = dpdo__calloc(n, sizeof *e->pv.node_ev);
    e->pv.allow = dpdo__alloc_array(n, sizeof *e->pv.allow);
    e->pv.used = dpdo__calloc(n, sizeof *e->pv.used);
    e->pv.planned = dpdo__calloc(n, sizeof *e->pv.planned);
    e->pv.ev = dpdo__calloc(n, sizeof *e->pv.ev);
    e->mask_list = dpdo__calloc(n, sizeof *e->mask_list);
    if (!e->mask_list || !e->pv.ev || !e->q || !e->plan.comp || !e->plan.is_comp || !e->plan.charge || !e->comm || !e->rcomm ||
        !e->last_active || !e->tmp_a || !e->tmp_b || !e->tol_prev || !e->pv.node_ev || !e->pv.allow ||
        !e->pv.used || !e->pv.planned)
        return DPDO_E_NOMEM;
    for (size_t i = 0; i < n; i++) e->pv.allow[i] = INT64_MAX;
    return DPDO_OK;
}

static int alloc_arena(dpdo__eng *e)
{
    size_t total = 0, off[DPDO__MAX_BLOCKS + DPDO__MAX_SCRATCH];
    int k = 0;
    for (int i = 0; i < e->nblk; i++, k++) {
        size_t cells, bytes;
        if (!dpdo__mul_size((size_t)e->blk[i].rows, (size_t)e->blk[i].cols, &cells) ||
            !dpdo__mul_size(cells, sizeof(double), &bytes) || bytes > SIZE_MAX / 2 - total)
            return DPDO_E_NOMEM;
        off[k] = total;
        total += (bytes + 63) & ~(size_t)63;
    }
    for (int i = 0; i < e->nscr; i++, k++) {
        if (e->scr_bytes[i] > SIZE_MAX / 2 - total) return DPDO_E_NOMEM;
        off[k] = total;
        total += (e->scr_bytes[i] + 63) & ~(size_t)63;
    }
    if (total == 0) total = 64;
    e->arena = dpdo__alloc_aligned(total);
    if (!e->arena) return DPDO_E_NOMEM;
    e->arena_bytes = total;
    memset(e->arena, 0, total);
    k = 0;
    for (int i = 0; i < e->nblk; i++, k++) e->blk[i].cur = (double *)((char *)e->arena + off[k]);
    for (int i = 0; i < e->nscr; i++, k++) e->scr[i] = (char *)e->arena + off[k];
    return DPDO_OK;
}

static void opts_to_params(dpdo__eng *e)
{
    const dpdo_algorithm_options *o = &e->o;
    DPDO__PI(e, DPDO_PARAM_MAX_ROUNDS) = o->max_rounds;
    DPDO__PD(e, DPDO_PARAM_STEP_SIZE) = o->step_size;
    DPDO__PD(e, DPDO_PARAM_STEP_POWER) = o->step_power;
    DPDO__PD(e, DPDO_PARAM_TOL) = o->tol;
    DPDO__PI(e, DPDO_PARAM_CHECK_EVERY) = o->check_every;
    DPDO__PD(e, DPDO_PARAM_MAX_EPSILON) = o->max_epsilon;
    DPDO__PI(e, DPDO_PARAM_BATCH) = o->batch;
    DPDO__PD(e, DPDO_PARAM_SIGMA) = o->noise_mode == DPDO_NOISE_FIXED ? o->sigma : NAN;
    DPDO__PD(e, DPDO_PARAM_CLIP) = o->clip;
    DPDO__PI(e, DPDO_PARAM_CALIB_STEPS) = 0;
    DPDO__PD(e, DPDO_PARAM_CALIB_TAIL) = 1e-6;
}

/* ---- public life cycle ---------------------------------------------------------- */

int dpdo__algorithm_create_vt(dpdo_algorithm **out, const dpdo__alg_vt *vt)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (!vt) return DPDO_E_INVAL;
    dpdo_algorithm *a = dpdo__calloc(1, sizeof *a);
    if (!a) return DPDO_E_NOMEM;
    a->magic = DPDO__MAGIC_ALGORITHM;
    a->vt = vt;
    a->state = DPDO_ALG_EMPTY;
    *out = a;
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_create(dpdo_algorithm **out, const dpdo_algorithm_type *type)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (!type) return DPDO_E_INVAL;
    return dpdo__algorithm_create_vt(out, type->vt);
}

DPDO_API void dpdo_algorithm_destroy(dpdo_algorithm *a)
{
    if (!a || !DPDO__LIVE(a, DPDO__MAGIC_ALGORITHM)) return; /* NULL or destroyed */
    DPDO__KILL(a);
    eng_free(a->e);
    dpdo__free(a);
}

DPDO_API const char *dpdo_algorithm_errmsg(const dpdo_algorithm *a)
{
    return !a ? "(null)" : DPDO__LIVE(a, DPDO__MAGIC_ALGORITHM) ? a->errmsg : "(destroyed handle)";
}
DPDO_API const char *dpdo_algorithm_name(const dpdo_algorithm *a) { return a ? a->vt->name : "(null)"; }
DPDO_API int dpdo_algorithm_state(const dpdo_algorithm *a) { return a ? a->state : -1; }
DPDO_API int64_t dpdo_algorithm_nodes(const dpdo_algorithm *a) { return a && a->e ? a->e->n : 0; }
DPDO_API int64_t dpdo_algorithm_dim(const dpdo_algorithm *a) { return a && a->e ? a->e->d : 0; }
DPDO_API int64_t dpdo_algorithm_round(const dpdo_algorithm *a) { return a && a->e ? (int64_t)a->e->round : 0; }
DPDO_API int dpdo_algorithm_stop_reason(const dpdo_algorithm *a) { return a ? a->stop : -1; }

dpdo__eng *dpdo__algorithm_eng(dpdo_algorithm *a) { return a ? a->e : NULL; }

DPDO_API int dpdo_algorithm_setup(dpdo_algorithm *a, dpdo_node *const *nodes, int32_t n_nodes,
                                  dpdo_network *net, dpdo_regularizer *reg, dpdo_accountant *acc,
                                  const dpdo_algorithm_options *opts)
{
    if (!a) return DPDO_E_INVAL;
    if (a->state == DPDO_ALG_RUNNING)
        return dpdo__err(a->errmsg, DPDO_E_STATE, "setup: the algorithm is running; call dpdo_algorithm_reset first");
    dpdo_algorithm_options o;
    int rc;
    if (opts) {
        dpdo_algorithm_options_init(&o, sizeof o);
        if ((rc = dpdo__opts_copy(&o, sizeof o, opts, a->errmsg))) return rc;
        if (opts->struct_size < OPTS_V01)
            return dpdo__err(a->errmsg, DPDO_E_VERSION, "setup: options.struct_size = %zu is smaller than 0.1's %zu",
                             opts->struct_size, (size_t)OPTS_V01);
    } else {
        dpdo_algorithm_options_init(&o, sizeof o);
    }
    char err[DPDO__ERRMSG_LEN] = "";
    if ((rc = check_options(&o, err)) || (rc = check_problem(a->vt, nodes, n_nodes, net, reg, acc, &o, err))) {
        memcpy(a->errmsg, err, sizeof err);
        return rc;
    }
    /* distinct nodes */
    {
        struct dpdo_node **tmp = dpdo__alloc_array((size_t)n_nodes, sizeof *tmp);
        if (!tmp) return dpdo__err(a->errmsg, DPDO_E_NOMEM, "setup: out of memory");
        memcpy(tmp, nodes, (size_t)n_nodes * sizeof *tmp);
        qsort(tmp, (size_t)n_nodes, sizeof *tmp, cmp_ptr);
        int dup = 0;
        for (int32_t i = 1; i < n_nodes; i++) dup |= tmp[i] == tmp[i - 1];
        dpdo__free(tmp);
        if (dup) return dpdo__err(a->errmsg, DPDO_E_INVAL, "setup: a node appears twice in nodes[]");
    }
    dpdo__eng *e = dpdo__calloc(1, sizeof *e);
    if (!e) return dpdo__err(a->errmsg, DPDO_E_NOMEM, "setup: out of memory");
    e->vt = a->vt;
    e->err = err;
    e->o = o;
    e->n = n_nodes;
    e->d = nodes[0]->dim;
    e->reg = reg;
    e->acc = acc;
    e->ledger = acc ? dpdo__accountant_ledger(acc) : NULL;
    e->pv.sigma = NAN;
    if ((rc = alloc_eng(e))) goto nomem;
    e->nodes = dpdo__alloc_array((size_t)n_nodes, sizeof *e->nodes);
    if (!e->nodes) goto nomem;
    memcpy(e->nodes, nodes, (size_t)n_nodes * sizeof *e->nodes);
    int any_remote = 0;
    for (int64_t i = 0; i < e->n; i++) {
        e->q[i] = dpdo_node_samples(e->nodes[i]);
        any_remote |= e->nodes[i]->remote_rows > 0;
    }
    e->qmin = e->q[0];
    for (int64_t i = 1; i < e->n; i++) e->qmin = e->q[i] < e->qmin ? e->q[i] : e->qmin;
    if (e->vt->priv_size && !(e->priv = dpdo__calloc(1, e->vt->priv_size))) goto nomem;
    if ((rc = dpdo_rng_create(&e->rng, dpdo_rng_type_find("philox4x32-10"), o.seed))) {
        if (rc == DPDO_E_NOMEM) goto nomem;
        dpdo__err(err, rc, "setup: cannot create the RNG");
        goto fail;
    }
    if (!any_remote) { /* the objective helpers need every node's data */
        dpdo_reference_options ro;
        dpdo_reference_options_init(&ro, sizeof ro);
        ro.weighting = o.weighting >= 0 ? o.weighting : DPDO_WEIGHT_NODES;
        rc = dpdo_reference_create(&e->ref, nodes, n_nodes, reg, &ro);
        if (rc == DPDO_E_NOMEM) goto nomem;
        if (rc) {
            dpdo__err(err, rc, "setup: objective helper: %s", "invalid problem");
            goto fail;
        }
    }
    e->net = net;
    if (net) dpdo__network_retain(net);
    if (e->vt->uses_solver) {
        rc = dpdo_solver_create(&e->solver, dpdo_solver_type_find("gd"), NULL, e->d);
        if (rc == DPDO_E_NOMEM) goto nomem;
        if (rc) {
            dpdo__err(err, rc, "setup: cannot create the default local solver");
            goto fail;
        }
        e->own_solver = 1;
    }
    if (e->vt->uses_policy) {
        rc = dpdo_policy_create(&e->policy, dpdo_policy_type_find("always-global"), NULL, e->n, e->d + 2);
        if (rc == DPDO_E_NOMEM) goto nomem;
        if (rc) {
            dpdo__err(err, rc, "setup: cannot create the default policy");
            goto fail;
        }
        e->own_policy = 1;
    }
    if (e->vt->uses_compressor) {
        rc = dpdo_compressor_create(&e->comp, dpdo_compressor_type_find("identity"), NULL, e->d);
        if (rc == DPDO_E_NOMEM) goto nomem;
        if (rc) {
            dpdo__err(err, rc, "setup: cannot create the default compressor");
            goto fail;
        }
        e->own_comp = 1;
    }
    opts_to_params(e);
    if (e->vt->defaults) e->vt->defaults(e);
    if ((rc = e->vt->configure(e, e->priv))) {
        if (rc == DPDO_E_NOMEM) goto nomem;
        goto fail;
    }
    if ((rc = alloc_arena(e))) goto nomem;
    e->vt->init(e, e->priv);
    /* success: replace the previous setup */
    eng_free(a->e);
    a->e = e;
    e->err = a->errmsg;
    a->state = DPDO_ALG_READY;
    a->stop = DPDO_STOP_NONE;
    dpdo__err_clear(a->errmsg);
    return DPDO_OK;
nomem:
    dpdo__err(err, DPDO_E_NOMEM, "setup: out of memory");
    rc = DPDO_E_NOMEM;
fail:
    eng_free(e);
    memcpy(a->errmsg, err, sizeof err);
    return rc;
}

/* A public sampling object for an internal descriptor (the accountant's calibration takes one). */
static int sampling_of(const dpdo__sampling_desc *sd, dpdo_sampling **out)
{
    int rc = dpdo_sampling_create(out);
    if (rc) return rc;
    if (sd->kind == DPDO_SAMPLING_WOR) rc = dpdo_sampling_set_wor(*out, sd->n, sd->m);
    else if (sd->kind == DPDO_SAMPLING_POISSON) rc = dpdo_sampling_set_poisson(*out, sd->q);
    else rc = dpdo_sampling_set_none(*out);
    if (rc) {
        dpdo_sampling_destroy(*out);
        *out = NULL;
    }
    return rc;
}

void dpdo__eng_note(dpdo__eng *e, const char *s)
{
    size_t len = strlen(e->pv.notes);
    static const char more[] = "; (more notes did not fit)";
    if (len + 3 + strlen(s) + sizeof more >= sizeof e->pv.notes) { /* never drop a caveat silently */
        if (!strstr(e->pv.notes, more) && len + sizeof more < sizeof e->pv.notes) strcat(e->pv.notes, more);
        return;
    }
    if (len) strcat(e->pv.notes, "; ");
    strcat(e->pv.notes, s);
}

void dpdo__plan_bernoulli(const dpdo__eng *e, dpdo__plan *p, double prob)
{
    memset(p->is_comp, 0, (size_t)e->n);
    if (e->inj_active) {
        for (int64_t c = 0; c < e->inj_b; c++) p->is_comp[e->inj_active[c]] = 1;
        return;
    }
    for (int64_t i = 0; i < e->n; i++) {
        double pi = e->node_p ? e->node_p[i] : prob;
        if (pi >= 1) {
            p->is_comp[i] = 1;
            continue;
        }
        dpdo__stream st;
        dpdo__stream_open(&st, e->rng, (uint64_t)i, p->t, DPDO_PURPOSE_ACTIVATION);
        p->is_comp[i] = dpdo__stream_uniform(&st) < pi;
    }
}

void dpdo__plan_list(dpdo__plan *p, int64_t n)
{
    p->ncomp = 0;
    for (int64_t i = 0; i < n; i++)
        if (p->is_comp[i]) p->comp[p->ncomp++] = i;
}

void dpdo__plan_charge_computing(const dpdo__eng *e, dpdo__plan *p, int64_t count)
{
    p->ncharges = 0;
    if (!e->pv.private_run) return;
    for (int64_t c = 0; c < p->ncomp; c++) {
        int64_t i = p->comp[c];
        p->charge[p->ncharges++] = (dpdo__charge){e->pv.node_ev[i], i, count};
    }
}

double dpdo__eng_calib_count(const dpdo__eng *e, double pmax)
{
    double K = (double)e->pi[dpdo__param_slot(DPDO_PARAM_CALIB_STEPS)];
    if (K > 0) return K;
    double T = (double)e->pi[dpdo__param_slot(DPDO_PARAM_MAX_ROUNDS)];
    K = pmax >= 1 ? T : dpdo__binom_quantile(T, pmax, e->pd[dpdo__param_slot(DPDO_PARAM_CALIB_TAIL)]);
    return K < 1 ? 1 : K;
}

double dpdo__eng_calib_counts(dpdo__eng *e, const double *pi, double pdef)
{
    double K = (double)e->pi[dpdo__param_slot(DPDO_PARAM_CALIB_STEPS)], Kmax = 0;
    for (int64_t i = 0; i < e->n; i++) {
        double p = pi ? pi[i] : e->node_p ? e->node_p[i] : pdef;
        double Ki = K > 0 ? K : dpdo__eng_calib_count(e, p > 1 ? 1.0 : p);
        e->pv.planned[i] = Ki >= 9.2e18 ? INT64_MAX : (int64_t)ceil(Ki);
        Kmax = Ki > Kmax ? Ki : Kmax;
    }
    return Kmax < 1 ? 1 : Kmax;
}

void dpdo__eng_set_planned(dpdo__eng *e, double count)
{
    for (int64_t i = 0; i < e->n; i++) e->pv.planned[i] = count >= 9.2e18 ? INT64_MAX : (int64_t)ceil(count);
}

void dpdo__eng_note_wor_floor(dpdo__eng *e, const dpdo__sampling_desc *sd, double sens, double releases,
                              double sigma)
{
    if (sd->kind != DPDO_SAMPLING_WOR || !(sd->q < 1) || !(sigma > 0)) return;
    dpdo_sampling *s = NULL;
    if (dpdo_sampling_create(&s) || dpdo_sampling_set_poisson(s, sd->q)) {
        dpdo_sampling_destroy(s);
        return;
    }
    double sp = 0;
    /* the accountant's calibration may fail for the Poisson twin (unreachable): then say nothing */
    int rc = dpdo_accountant_calibrate_sigma(e->acc, s, sens, releases, e->o.epsilon, e->o.delta, &sp);
    dpdo_sampling_destroy(s);
    if (rc || !(sp > 0) || !(sigma > 4 * sp)) return;
    char buf[400];
    snprintf(buf, sizeof buf,
             "accounting floor: the without-replacement bound gives little or no amplification for batch %lld of "
             "%lld rows over %.0f releases, so it, not the sensitivity, sets sigma = %.4g (%.1fx the Poisson-sampled "
             "figure at the same rate); a smaller batch, more rows per node or fewer releases lowers it",
             (long long)sd->m, (long long)sd->n, releases, sigma, sigma / sp);
    dpdo__eng_note(e, buf);
}

double dpdo__eng_node_pmax(const dpdo__eng *e, double p)
{
    if (!e->node_p) return p;
    double m = 0;
    for (int64_t i = 0; i < e->n; i++) m = e->node_p[i] > m ? e->node_p[i] : m;
    return m;
}

/* The accountant that calibrates sigma and the guard. Secure runs whose noise comes from the grid
 * samplers are charged as discrete mechanisms (secure_events), which the PLD accountant declines
 * and "auto" therefore answers with RDP: calibrating them with a PLD figure of the continuous
 * Gaussian would plan less noise than the charged events allow and end above the target. They are
 * calibrated with RDP on the same ledger instead (the RDP of the lattice-aligned discrete Gaussian
 * equals the continuous one's, docs/privacy.md section 11). *tmp is set when one was made (destroy it). */
static dpdo_accountant *calib_accountant(dpdo__eng *e, dpdo_accountant **tmp)
{
    *tmp = NULL;
    const char *name = dpdo_accountant_name(e->acc);
    /* at calibration time pv.private_run is not yet known: test the grid-noise condition without it */
    int grid = e->o.randomness == DPDO_RANDOMNESS_SECURE && !e->vt->uses_solver;
    if (!grid || !e->ledger || (strcmp(name, "auto") != 0 && strcmp(name, "pld") != 0))
        return e->acc;
    if (dpdo_accountant_create(tmp, dpdo_accountant_type_find("rdp"), e->ledger, NULL) != DPDO_OK) {
        *tmp = NULL;
        return e->acc;
    }
    return *tmp;
}

int dpdo__eng_calibrate_sigma(dpdo__eng *e, const dpdo__sampling_desc *sd, double sens, double releases,
                              double *sigma)
{
    dpdo_sampling *s = NULL;
    int rc = sampling_of(sd, &s);
    if (rc) return dpdo__err(e->err, rc, "prepare: cannot build the sampling for the calibration");
    dpdo_accountant *tmp = NULL, *acc = calib_accountant(e, &tmp);
    rc = dpdo_accountant_calibrate_sigma(acc, s, sens, releases, e->o.epsilon, e->o.delta, sigma);
    dpdo_sampling_destroy(s);
    if (rc) rc = dpdo__err(e->err, rc, "prepare: calibrating the noise for %g releases per node: %s", releases,
                           dpdo_accountant_errmsg(acc));
    dpdo_accountant_destroy(tmp);
    if (rc) return rc;
    return DPDO_OK;
}

int dpdo__eng_events_wor(dpdo__eng *e, int64_t B, double sens, double sigma, dpdo__sampling_desc *samp)
{
    e->pv.nev = 0;
    for (int64_t i = 0; i < e->n; i++) {
        dpdo__sampling_desc sd = {DPDO_SAMPLING_WOR, (double)B / (double)e->q[i], e->q[i], B};
        if (samp) samp[i] = sd;
        if (!e->pv.private_run) continue;
        int32_t k = 0;
        while (k < e->pv.nev && e->pv.ev[k].samp.n != e->q[i]) k++;
        if (k == e->pv.nev) {
            char err[DPDO__ERRMSG_LEN];
            int rc = dpdo__event_make(&e->pv.ev[k], DPDO_MECH_GAUSSIAN, &sd, sens, sigma, err);
            if (rc) return dpdo__err(e->err, rc, "prepare: node %lld: %s", (long long)i, err);
            e->pv.nev++;
        }
        e->pv.node_ev[i] = k;
    }
    return DPDO_OK;
}

/* Budget allowances per node (number of releases the guard lets through). */
static int compute_guard(dpdo__eng *e)
{
    dpdo__priv_state *pv = &e->pv;
    double g = DPDO__PD(e, DPDO_PARAM_MAX_EPSILON);
    if (g == 0) g = e->o.noise_mode == DPDO_NOISE_RIGOROUS ? e->o.epsilon : INFINITY;
    pv->guard_eps = pv->private_run ? g : INFINITY;
    for (int64_t i = 0; i < e->n; i++) pv->allow[i] = INT64_MAX;
    if (!(pv->guard_eps < INFINITY)) return DPDO_OK;
    for (int32_t k = 0; k < pv->nev; k++) {
        /* the step calibration is Gaussian; algorithms with Laplace events (dpdo, cpgt) guard
         * the summed pure epsilon themselves in plan() against pv->guard_eps */
        if (pv->ev[k].mech != DPDO_MECH_GAUSSIAN && pv->ev[k].mech != DPDO_MECH_DISCRETE_GAUSSIAN) continue;
        dpdo_sampling *s = NULL;
        /* the discrete Gaussian is charged without Poisson amplification (math.c): plan the same */
        dpdo__sampling_desc none = {DPDO_SAMPLING_NONE, 1.0, 0, 0};
        int disc_poisson = pv->ev[k].mech == DPDO_MECH_DISCRETE_GAUSSIAN && pv->ev[k].samp.kind == DPDO_SAMPLING_POISSON;
        int rc = sampling_of(disc_poisson ? &none : &pv->ev[k].samp, &s);
        if (rc) return dpdo__err(e->err, rc, "prepare: budget guard: cannot build the sampling");
        double steps = 0;
        dpdo_accountant *tmp = NULL, *acc = pv->ev[k].mech == DPDO_MECH_DISCRETE_GAUSSIAN ? calib_accountant(e, &tmp) : e->acc;
        rc = dpdo_accountant_calibrate_steps(acc, s, pv->ev[k].sens, pv->ev[k].noise, pv->guard_eps,
                                                 e->o.delta, &steps);
        dpdo_sampling_destroy(s);
        if (rc) rc = dpdo__err(e->err, rc, "prepare: budget guard: %s", dpdo_accountant_errmsg(acc));
        dpdo_accountant_destroy(tmp);
        if (rc) return rc;
        int64_t allow = steps >= 4e18 ? INT64_MAX : (int64_t)steps;
        for (int64_t i = 0; i < e->n; i++)
            if (pv->node_ev[i] == k) pv->allow[i] = allow;
    }
    return DPDO_OK;
}

#ifdef DPDO_FAULT_INJECTION
#define TAP(e, node, out, n, g) \
    do { \
        if ((e)->tap) (e)->tap((e)->tap_user, node, out, n, g); \
    } while (0)
#else
#define TAP(e, node, out, n, g) ((void)0)
#endif

int dpdo__eng_grid_noise(const dpdo__eng *e) { return DPDO__SECURE(e) && !e->vt->uses_solver; }

/* The one noise path of both mechanisms: reproducible runs add continuous draws from the seeded
 * stream; secure runs add exact discrete draws on a grid (l1 = 1: discrete Laplace, rounding
 * measured in L1). `scale` is sigma or the Laplace scale b. */
static int add_noise(dpdo__eng *e, dpdo__stream *st, int64_t node, double scale, double sens, double *out, size_t n,
                     int l1)
{
    double s = DPDO__WEAKENED(e, DPDO__WEAKEN_SIGMA_HALF) ? 0.5 * scale : scale;
    int rc;
    if (!dpdo__eng_grid_noise(e)) {
        if (l1)
            for (size_t k = 0; k < n; k++) out[k] += dpdo__stream_laplace(st, s);
        else
            dpdo__stream_add_normals(st, s, out, n);
        TAP(e, node, out, n, 0.0);
    } else if (n > 0) {
        char err[DPDO__ERRMSG_LEN];
        double g;
        uint64_t S;
        if ((rc = dpdo__grid_choose(s, sens > 0 ? sens : s, n, DPDO__GRID_ETA, l1, &g, &S, err)) ||
            (rc = l1 ? dpdo__grid_add_dlaplace(st, S, g, out, n, err) : dpdo__grid_add_dgauss(st, S, g, out, n, err)))
            return dpdo__eng_err(e, rc, node, "secure noise: %s", err);
        TAP(e, node, out, n, g);
    }
    if ((rc = dpdo__stream_status(st)))
        return dpdo__eng_err(e, rc, node, "noise generator failed (code %d)", dpdo__stream_cb_code(st));
    return DPDO_OK;
}

int dpdo__eng_noise_gauss(dpdo__eng *e, dpdo__stream *st, int64_t node, double sigma, double sens, double *out,
                          size_t n)
{
    return add_noise(e, st, node, sigma, sens, out, n, 0);
}

int dpdo__eng_noise_laplace(dpdo__eng *e, dpdo__stream *st, int64_t node, double b, double sens, double *out,
                            size_t n)
{
    return add_noise(e, st, node, b, sens, out, n, 1);
}

/* Secure private runs whose noise is drawn by the grid samplers are charged as the discrete
 * mechanisms: sensitivity and noise both scaled by (1 + eta), which bounds the rounded release's
 * sensitivity (sens + gamma sqrt(d) <= (1 + eta) sens) and its noise (gamma S >= (1 + eta) sigma)
 * in every draw (dpdo__grid_choose), so the charged ratio is never below the real one. */
static void secure_events(dpdo__eng *e)
{
    if (!dpdo__eng_grid_noise(e)) return;
    for (int32_t k = 0; k < e->pv.nev; k++) {
        dpdo__event_desc *ev = &e->pv.ev[k];
        if (ev->mech != DPDO_MECH_GAUSSIAN && ev->mech != DPDO_MECH_LAPLACE) continue;
        ev->mech = ev->mech == DPDO_MECH_GAUSSIAN ? DPDO_MECH_DISCRETE_GAUSSIAN : DPDO_MECH_DISCRETE_LAPLACE;
        ev->sens *= 1.0 + DPDO__GRID_ETA;
        ev->noise *= 1.0 + DPDO__GRID_ETA;
    }
}

/* Secure private runs: every hosted node without a host key gets a fresh 256-bit key from the
 * operating system's entropy (libsodium randombytes_buf); keys of earlier runs are replaced
 * (docs/privacy.md: reset draws new keys). Reproducible or non-private runs drop drawn keys. */
static int draw_keys(dpdo__eng *e, char *err)
{
    int want = DPDO__SECURE(e);
    if (!want && !e->key) return DPDO_OK;
    if (want && sodium_init() < 0)
        return dpdo__err(err, DPDO_E_UNSUPPORTED,
                         "prepare: secure randomness: libsodium cannot be initialised (no system entropy?); "
                         "set options.randomness = DPDO_RANDOMNESS_REPRODUCIBLE to run without it");
    if (want && !e->key) {
        unsigned char *k = dpdo__calloc((size_t)e->n, 32), *src = dpdo__calloc((size_t)e->n, 1);
        if (!k || !src) {
            dpdo__free(k), dpdo__free(src);
            return dpdo__err(err, DPDO_E_NOMEM, "prepare: out of memory (node keys)");
        }
        e->key = k, e->key_src = src;
        e->rng->keys = k, e->rng->has_key = src, e->rng->nkeys = e->n;
    }
    int any = 0;
    for (int64_t i = 0; i < e->n; i++) {
        unsigned char *k = e->key + 32 * (size_t)i;
        if (e->key_src[i] == DPDO__KEY_HOST) {
            any = 1;
            continue;
        }
        if (want && dpdo__eng_hosted(e, i)) {
            randombytes_buf(k, 32);
            e->key_src[i] = DPDO__KEY_ENTROPY;
            any = 1;
        } else if (e->key_src[i] == DPDO__KEY_ENTROPY) {
            sodium_memzero(k, 32);
            e->key_src[i] = DPDO__KEY_NONE;
        }
    }
    e->keyed = any;
    return DPDO_OK;
}

static int do_prepare(dpdo_algorithm *a)
{
    dpdo__eng *e = a->e;
    char err[DPDO__ERRMSG_LEN] = "";
    e->err = err;
    e->plan.t = 0;
    e->pv.notes[0] = 0;
    memset(e->pv.planned, 0, (size_t)e->n * sizeof *e->pv.planned);
    int rc = e->vt->prepare(e, e->priv);
    if (!rc) secure_events(e);
    if (!rc && (!e->pv.private_run || e->o.noise_mode != DPDO_NOISE_RIGOROUS))
        memset(e->pv.planned, 0, (size_t)e->n * sizeof *e->pv.planned); /* no rigorous plan */
    if (!rc && e->ledger && e->pv.nev > 0) {
        rc = dpdo__ledger_reserve(e->ledger, e->pv.nev);
        if (rc) dpdo__err(err, rc, "prepare: ledger: %s", dpdo_ledger_errmsg(e->ledger));
    }
    if (!rc && e->pv.nev > 0) {
        /* prepare only runs at round 0, when no charges are outstanding */
        dpdo__free(e->pv.charged);
        e->pv.charged = dpdo__calloc((size_t)e->n * (size_t)e->pv.nev, sizeof *e->pv.charged);
        if (!e->pv.charged) rc = dpdo__err(err, DPDO_E_NOMEM, "prepare: out of memory");
    }
    if (!rc) rc = compute_guard(e);
    if (!rc) rc = draw_keys(e, err);
    if (!rc && DPDO__SECURE(e) && e->vt->uses_solver)
        dpdo__eng_note(e, "secure mode: private streams keyed per node, but the noise is drawn inside the local solver "
                          "as continuous double-precision normals (not floating-point safe; charged as Gaussian)");
    if (!rc && e->pv.private_run && e->o.randomness == DPDO_RANDOMNESS_REPRODUCIBLE) {
        int64_t open_nodes = 0;
        for (int64_t i = 0; i < e->n; i++)
            open_nodes += dpdo__eng_hosted(e, i) && !(e->key_src && e->key_src[i] != DPDO__KEY_NONE);
        if (open_nodes > 0)
            dpdo__eng_note(e, "reproducible mode: nodes hosted here have no secret key, so their private streams are "
                              "keyed by options.seed (Philox) and epsilon holds only against parties who do not know "
                              "the seed; continuous double-precision noise, not floating-point safe");
        else
            dpdo__eng_note(e, "reproducible mode: private streams keyed by the host's node keys; continuous "
                              "double-precision noise, not floating-point safe");
    }
    if (!rc && e->ledger && e->pv.private_run && e->o.noise_mode == DPDO_NOISE_RIGOROUS) {
        int64_t held = 0;
        for (int64_t i = 0; i < e->n; i++) held += dpdo_ledger_charges(e->ledger, i);
        if (held > 0)
            dpdo__eng_note(e, "sigma calibrated on top of the charges already in the ledger (a shared budget: later "
                              "runs get more noise)");
    }
    e->err = a->errmsg;
    if (rc) {
        memcpy(a->errmsg, err, sizeof err);
        e->prepared = 0;
        return rc;
    }
    e->prepared = 1;
    e->vt->init(e, e->priv);
    dpdo__err_clear(a->errmsg);
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_prepare(dpdo_algorithm *a)
{
    if (!a) return DPDO_E_INVAL;
    if (a->state != DPDO_ALG_READY)
        return dpdo__err(a->errmsg, DPDO_E_STATE, "prepare: the algorithm is not READY (state %d)", a->state);
    if (a->e->prepared) return DPDO_OK;
    return do_prepare(a);
}

/* ---- parameters ------------------------------------------------------------------ */

static int key_accepted(const dpdo__alg_vt *vt, int key)
{
    if (key >= 1 && key < 100) return dpdo__param_slot(key) >= 0;
    for (const int32_t *k = vt->keys; k && *k; k++)
        if (*k == key) return 1;
    return 0;
}

static int set_common(dpdo_algorithm *a, int key, int type, double v, int64_t iv)
{
    if (!a) return DPDO_E_INVAL;
    if (!a->e || a->state == DPDO_ALG_DONE || a->state == DPDO_ALG_FAILED)
        return dpdo__err(a->errmsg, DPDO_E_STATE, "set: key %d: the algorithm is %s", key,
                         !a->e ? "EMPTY (call dpdo_algorithm_setup)" : "finished (call dpdo_algorithm_reset)");
    int s = dpdo__param_slot(key);
    if (s < 0 || !key_accepted(a->vt, key))
        return dpdo__err(a->errmsg, DPDO_E_UNSUPPORTED, "set: key %d is not a parameter of %s", key, a->vt->name);
    const char *name = dpdo_param_name(key);
    if (dpdo_param_type(key) != type)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "set: key %d (%s) is %s; use dpdo_algorithm_set_%s", key, name,
                         type ? "an integer" : "a double", type ? "int" : "double");
    double lo, hi;
    dpdo_param_bounds(key, &lo, &hi);
    if (type == 0) v = (double)iv;
    int nan_ok = key == DPDO_PARAM_CLIP || key == DPDO_PARAM_STEP_SIZE || key == DPDO_PARAM_STEP_POWER;
    if (!(isnan(v) && nan_ok) && !(v >= lo && v <= hi))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "set: %s = %g is outside [%g, %g]", name, v, lo, hi);
    dpdo__eng *e = a->e;
    if ((key == DPDO_PARAM_DDA_ACTIVE || key == DPDO_PARAM_FED_ACTIVE) && iv > e->n)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "set: %s = %lld exceeds the %lld nodes", name, (long long)iv,
                         (long long)e->n);
    if (key == DPDO_PARAM_BATCH && iv > e->qmin)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "set: batch = %lld exceeds the smallest shard (%lld rows)",
                         (long long)iv, (long long)e->qmin);
    if (key == DPDO_PARAM_SIGMA && e->o.noise_mode != DPDO_NOISE_FIXED)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "set: sigma can only be set with DPDO_NOISE_FIXED");
    if (a->state == DPDO_ALG_RUNNING) {
        if (!dpdo__param_live(key))
            return dpdo__err(a->errmsg, DPDO_E_STATE,
                             "set: %s cannot change after round 0; call dpdo_algorithm_reset first", name);
        if (key == DPDO_PARAM_MAX_ROUNDS &&
            (iv < DPDO__PI(e, key) || (e->o.noise_mode == DPDO_NOISE_PAPER && iv != DPDO__PI(e, key))))
            return dpdo__err(a->errmsg, DPDO_E_STATE,
                             "set: max-rounds may only grow while running, and not with DPDO_NOISE_PAPER "
                             "(sigma depends on T)");
        if (key == DPDO_PARAM_MAX_EPSILON) {
            double cur = e->pv.guard_eps;
            if (!(v > 0 && v <= cur))
                return dpdo__err(a->errmsg, DPDO_E_STATE,
                                 "set: max-epsilon may only be lowered while running (now %g)", cur);
        }
    }
    if (type == 0) e->pi[s] = iv;
    else e->pd[s] = v;
    if (a->state == DPDO_ALG_READY && !dpdo__param_live(key)) e->prepared = 0;
    if (key == DPDO_PARAM_MAX_EPSILON && e->prepared) {
        int rc = compute_guard(e);
        if (rc) return rc;
    }
    if (key == DPDO_PARAM_MAX_ROUNDS && a->state == DPDO_ALG_READY && e->o.noise_mode != DPDO_NOISE_NONE)
        e->prepared = 0; /* sigma and the paper bound depend on T */
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_set_int(dpdo_algorithm *a, int key, int64_t value)
{
    return set_common(a, key, 0, 0, value);
}

DPDO_API int dpdo_algorithm_set_double(dpdo_algorithm *a, int key, double value)
{
    return set_common(a, key, 1, value, 0);
}

static int get_common(const dpdo_algorithm *a, int key, int type, void *out)
{
    if (!a || !out) return DPDO_E_INVAL;
    dpdo_algorithm *m = (dpdo_algorithm *)a; /* message buffer only */
    if (!a->e) return dpdo__err(m->errmsg, DPDO_E_STATE, "get: the algorithm is EMPTY");
    int s = dpdo__param_slot(key);
    if (s < 0 || !key_accepted(a->vt, key))
        return dpdo__err(m->errmsg, DPDO_E_UNSUPPORTED, "get: key %d is not a parameter of %s", key, a->vt->name);
    if (dpdo_param_type(key) != type)
        return dpdo__err(m->errmsg, DPDO_E_INVAL, "get: key %d (%s) is %s", key, dpdo_param_name(key),
                         type ? "an integer" : "a double");
    if (key == DPDO_PARAM_SIGMA) {
        *(double *)out = a->e->prepared ? a->e->pv.sigma : NAN;
        return DPDO_OK;
    }
    if (type == 0) *(int64_t *)out = a->e->pi[s];
    else *(double *)out = a->e->pd[s];
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_get_int(const dpdo_algorithm *a, int key, int64_t *value)
{
    return get_common(a, key, 0, value);
}

DPDO_API int dpdo_algorithm_get_double(const dpdo_algorithm *a, int key, double *value)
{
    return get_common(a, key, 1, value);
}

/* ---- one round ------------------------------------------------------------------ */

/* Per-sender counts of the round from its message patterns. */
static void count_round(dpdo__eng *e, const dpdo__plan *p)
{
    memset(e->rcomm, 0, (size_t)(e->n + 1) * sizeof *e->rcomm);
    for (int32_t s = 0; s < p->nstages; s++) {
        const dpdo__stage *st = &p->stage[s];
        for (int32_t k = 0; k < st->npat; k++) {
            const dpdo__xpat *pt = &st->pat[k];
            int64_t ib = e->d < 2147483648LL ? 4 : 8;
            for (int64_t c = 0; c < p->ncomp; c++) {
                int64_t j = p->comp[c], msgs = 0;
                int64_t kk = pt->kvar ? pt->kvar[j] : pt->k;
                int64_t vals = pt->payload == DPDO__PAY_SPARSE ? kk : e->d;
                int64_t bytes = 8 * vals + (pt->payload == DPDO__PAY_SPARSE ? ib * kk : 0);
                if (pt->kind == DPDO__PAT_ROUND) {
                    const dpdo__round *r = pt->r;
                    if (r->is_active[j]) {
                        if (r->full_average) msgs = r->nactive - 1;
                        else msgs = r->wptr[r->pos[j] + 1] - r->wptr[r->pos[j]] - 1;
                    }
                } else if (pt->kind == DPDO__PAT_NET) {
                    msgs = e->net->rowptr[j + 1] - e->net->rowptr[j] - 1;
                } else if (pt->kind == DPDO__PAT_GATHER) {
                    msgs = 1;
                } else if (pt->kind == DPDO__PAT_COUNTS) {
                    continue; /* counted below, per sender */
                } else if (pt->kind == DPDO__PAT_BCAST) { /* sent by the coordinator (row n) */
                    e->rcomm[e->n][0] += 1;
                    e->rcomm[e->n][1] += vals;
                    e->rcomm[e->n][2] += bytes;
                    continue;
                }
                e->rcomm[j][0] += msgs;
                e->rcomm[j][1] += msgs * vals;
                e->rcomm[j][2] += msgs * bytes;
            }
            if (pt->kind == DPDO__PAT_COUNTS)
                for (int64_t j = 0; j <= e->n; j++) {
                    e->rcomm[j][0] += pt->cmsg[j];
                    e->rcomm[j][1] += pt->cval[j];
                    e->rcomm[j][2] += 8 * pt->cval[j];
                }
        }
    }
}

static int64_t output_all(const dpdo__eng *e, double *x);

static int tolerance_test(dpdo_algorithm *a)
{
    dpdo__eng *e = a->e;
    double tol = DPDO__PD(e, DPDO_PARAM_TOL);
    int64_t c = DPDO__PI(e, DPDO_PARAM_CHECK_EVERY);
    if (!(tol > 0) || e->round % (uint64_t)c != 0) return DPDO_OK;
    int rc;
    if (e->xt && (rc = dpdo__dist_share_state(e))) return rc; /* the average needs every node's row */
    output_all(e, e->tmp_b);
    if (e->round != (uint64_t)c) {
        double dn = 0, xn = 0;
        for (int64_t k = 0; k < e->d; k++) {
            double t = e->tmp_b[k] - e->tol_prev[k];
            dn += t * t;
            xn += e->tmp_b[k] * e->tmp_b[k];
        }
        if (sqrt(dn) <= tol * fmax(1.0, sqrt(xn))) e->tol_met = 1;
    }
    memcpy(e->tol_prev, e->tmp_b, (size_t)e->d * sizeof(double));
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_step(dpdo_algorithm *a)
{
    if (!a || !DPDO__LIVE(a, DPDO__MAGIC_ALGORITHM)) return DPDO_E_INVAL; /* NULL or destroyed */
    if (!a->e) return dpdo__err(a->errmsg, DPDO_E_STATE, "step: the algorithm is EMPTY; call dpdo_algorithm_setup");
    if (a->state == DPDO_ALG_DONE || a->state == DPDO_ALG_FAILED) {
        static const char *const why[] = {"none", "max rounds", "budget", "tolerance", "passes complete"};
        if (a->state == DPDO_ALG_DONE)
            return dpdo__err(a->errmsg, DPDO_E_STATE, "step: the run is done (stop reason: %s); call dpdo_algorithm_reset",
                             why[a->stop]);
        return dpdo__err(a->errmsg, DPDO_E_STATE, "step: a round failed; call dpdo_algorithm_reset");
    }
    dpdo__eng *e = a->e;
    int rc;
    if (a->state == DPDO_ALG_READY) {
        if (!e->prepared && (rc = do_prepare(a))) return rc;
        a->state = DPDO_ALG_RUNNING;
    }
    if (e->round >= (uint64_t)DPDO__PI(e, DPDO_PARAM_MAX_ROUNDS)) {
        a->state = DPDO_ALG_DONE;
        a->stop = DPDO_STOP_MAX_ROUNDS;
        return DPDO_DONE;
    }
    if (e->tol_met) {
        a->state = DPDO_ALG_DONE;
        a->stop = DPDO_STOP_TOLERANCE;
        return DPDO_DONE;
    }
    if (e->vt->finished && e->vt->finished(e, e->priv)) {
        a->state = DPDO_ALG_DONE;
        a->stop = DPDO_STOP_PASSES;
        return DPDO_DONE;
    }
    /* distributed with node secrets: the coordinator cannot compute the nodes' secret initial
     * rows, so they are uploaded before round 1 */
    if (e->xt && e->round == 0 && e->keyed && e->vt->init_gather && (rc = dpdo__dist_init_gather(e)))
        goto failed;
    dpdo__plan *p = &e->plan;
    p->t = e->round + 1;
    p->ncomp = 0;
    p->nstages = 0;
    memset(p->stage, 0, sizeof p->stage);
    p->ncharges = 0;
    dpdo__eng_probe(e, DPDO__PH_PLAN);
    if ((rc = e->vt->plan(e, e->priv, p)) == DPDO__PLAN_BUDGET) {
        a->state = DPDO_ALG_DONE;
        a->stop = DPDO_STOP_BUDGET;
        e->inj_active = NULL;
        e->inj_zeta = NULL;
        return DPDO_DONE;
    }
    if (rc) goto failed;
    /* guard: nothing has been computed or released yet */
    for (int64_t c = 0; c < p->ncharges; c++) {
        const dpdo__charge *ch = &p->charge[c];
        if (e->pv.used[ch->node] > e->pv.allow[ch->node] - ch->count) {
            a->state = DPDO_ALG_DONE;
            a->stop = DPDO_STOP_BUDGET;
            e->inj_active = NULL;
            e->inj_zeta = NULL;
            return DPDO_DONE;
        }
    }
    if (e->xt) { /* distributed: hosted nodes only, the transport moves the messages (dist.c) */
        int64_t fail_node = -1;
        rc = dpdo__dist_stages(e, p, &fail_node);
        if (!rc) rc = e->vt->check(e, e->priv, p);
        if (!rc) count_round(e, p);
        rc = dpdo__dist_agree(e, rc, fail_node);
    } else { /* one process: receivers read the senders' rows where they were written */
        for (int32_t s = 0; s < p->nstages && !rc; s++) {
            int who = p->stage[s].who;
            int64_t cnt = who == DPDO__RUN_COORD ? 1 : who == DPDO__RUN_ALL ? e->n : p->ncomp;
#define WHO(c) (who == DPDO__RUN_COORD ? DPDO_NODE_COORDINATOR : who == DPDO__RUN_ALL ? (c) : p->comp[c])
            for (int64_t c = 0; c < cnt && !rc; c++) rc = e->vt->local(e, e->priv, p, s, WHO(c));
            dpdo__eng_probe(e, DPDO__PH_EXCHANGE);
            for (int64_t c = 0; c < cnt && !rc; c++) rc = e->vt->combine(e, e->priv, p, s, WHO(c));
#undef WHO
        }
        if (!rc) rc = e->vt->check(e, e->priv, p);
        if (!rc) count_round(e, p); /* after local(): sparse messages may have data-independent varying sizes */
    }
    if (rc) goto failed;
    dpdo__eng_probe(e, DPDO__PH_COMMIT);
    e->vt->commit(e, e->priv, p);
    /* privacy: capacity was reserved at prepare, so the charges cannot fail */
    for (int64_t c = 0; c < p->ncharges; c++) {
        const dpdo__charge *ch = &p->charge[c];
        if (dpdo__ledger_charge(e->ledger, &e->pv.ev[ch->ev], ch->count, &ch->node, 1) == DPDO_OK) {
            e->pv.used[ch->node] += ch->count;
            e->pv.charged[(size_t)ch->ev * (size_t)e->n + (size_t)ch->node] += ch->count;
        }
    }
    for (int64_t i = 0; i <= e->n; i++)
        for (int k = 0; k < 3; k++) e->comm[i][k] += e->rcomm[i][k];
    memcpy(e->last_active, p->is_comp, (size_t)e->n);
    e->round = p->t;
    if ((rc = tolerance_test(a))) goto failed;
    e->inj_active = NULL;
    e->inj_zeta = NULL;
    return DPDO_ROUND;
failed:
    a->state = DPDO_ALG_FAILED;
    e->inj_active = NULL;
    e->inj_zeta = NULL;
    return rc;
}

DPDO_API int dpdo_algorithm_set_progress(dpdo_algorithm *a, dpdo_progress_fn fn, void *user, int64_t every,
                                         int32_t flags)
{
    if (!a) return DPDO_E_INVAL;
    if (every < 1) return dpdo__err(a->errmsg, DPDO_E_INVAL, "set_progress: every = %lld: must be >= 1", (long long)every);
    if (flags & ~(int32_t)(DPDO_PROGRESS_EPSILON | DPDO_PROGRESS_OBJECTIVE))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "set_progress: flags = %d: unknown DPDO_PROGRESS_* bits", (int)flags);
    a->progress = fn;
    a->progress_user = user;
    a->progress_every = every;
    a->progress_flags = flags;
    return DPDO_OK;
}

#ifdef DPDO_FAULT_INJECTION
int dpdo__algorithm_set_weaken(dpdo_algorithm *a, uint32_t bits)
{
    if (!a || bits & ~(DPDO__WEAKEN_SIGMA_HALF | DPDO__WEAKEN_SENS_DOUBLE | DPDO__WEAKEN_WOR_PASS)) return DPDO_E_INVAL;
    if (!a->e) return DPDO_E_STATE;
    a->e->weaken = bits;
    return DPDO_OK;
}

int dpdo__algorithm_key_source(const dpdo_algorithm *a, int64_t node)
{
    if (!a || !a->e || node < 0 || node >= a->e->n) return -1;
    return a->e->key_src ? a->e->key_src[node] : DPDO__KEY_NONE;
}

int dpdo__algorithm_set_noise_tap(dpdo_algorithm *a,
                                  void (*tap)(void *user, int64_t node, const double *out, size_t n, double grid),
                                  void *user)
{
    if (!a) return DPDO_E_INVAL;
    if (!a->e) return DPDO_E_STATE;
    a->e->tap = tap;
    a->e->tap_user = user;
    return DPDO_OK;
}
#endif

/* Fill a progress report and call the host; returns the callback's answer (0 = go on). */
static int report_progress(dpdo_algorithm *a, int64_t steps, int status)
{
    dpdo_progress p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.round = dpdo_algorithm_round(a);
    p.max_rounds = a->e ? a->e->o.max_rounds : 0;
    p.steps = steps;
    p.status = status;
    p.stop_reason = a->stop;
    p.epsilon = NAN;
    p.delta = a->e ? a->e->o.delta : NAN;
    p.objective = NAN;
    if (status >= 0 && a->e) {
        /* getters may fail (e.g. a non-private run has no accountant): the field stays NaN */
        if ((a->progress_flags & DPDO_PROGRESS_EPSILON) && a->e->pv.private_run) {
            double eps = NAN, del = NAN;
            if (dpdo_algorithm_privacy(a, DPDO_PRIVACY_RIGOROUS, DPDO_NODE_ALL, &eps, &del, NULL) == DPDO_OK) {
                p.epsilon = eps;
                p.delta = del;
            }
        }
        if (a->progress_flags & DPDO_PROGRESS_OBJECTIVE) {
            double F = NAN;
            if (dpdo_algorithm_objective(a, DPDO_POINT_OUTPUT, DPDO_NODE_ALL, &F) == DPDO_OK) p.objective = F;
        }
    }
    return a->progress(&p, a->progress_user);
}

DPDO_API int dpdo_algorithm_run(dpdo_algorithm *a, int64_t max_steps, int64_t *steps)
{
    int64_t k = 0;
    int rc = DPDO_E_INVAL;
    if (steps) *steps = 0;
    if (!a || !DPDO__LIVE(a, DPDO__MAGIC_ALGORITHM)) return rc; /* NULL or destroyed */
    for (;;) {
        if (max_steps > 0 && k >= max_steps) break;
        rc = dpdo_algorithm_step(a);
        if (rc != DPDO_ROUND) break;
        k++;
        int last = max_steps > 0 && k >= max_steps;
        if (a->progress && !last && k % a->progress_every == 0 && report_progress(a, k, rc)) {
            rc = dpdo__err(a->errmsg, DPDO_E_CANCELED, "run: stopped by the progress callback after round %lld",
                           (long long)dpdo_algorithm_round(a));
            if (steps) *steps = k;
            return rc;
        }
    }
    if (steps) *steps = k;
    /* the final report: after DONE, after max_steps, after a failure; its answer is ignored
     * (nothing more would run anyway) */
    if (a->progress && (k > 0 || rc != DPDO_ROUND)) (void)report_progress(a, k, rc);
    return rc;
}

DPDO_API int dpdo_algorithm_reset(dpdo_algorithm *a)
{
    if (!a) return DPDO_E_INVAL;
    dpdo__eng *e = a->e;
    if (!e) return dpdo__err(a->errmsg, DPDO_E_STATE, "reset: the algorithm is EMPTY");
    /* remove exactly this run's charges; if the ledger no longer holds them all (someone reset or
     * reloaded it), remove what is there, reset anyway, and report E_STATE */
    int lost = 0;
    if (e->pv.charged && e->ledger) {
        for (int32_t k = 0; k < e->pv.nev; k++)
            for (int64_t i = 0; i < e->n; i++)
                if (dpdo__ledger_count(e->ledger, &e->pv.ev[k], i) < e->pv.charged[(size_t)k * (size_t)e->n + (size_t)i])
                    lost = 1;
        for (int32_t k = e->pv.nev - 1; k >= 0; k--) /* last event first: trailing rows drop cleanly */
            for (int64_t i = 0; i < e->n; i++) {
                int64_t *c = &e->pv.charged[(size_t)k * (size_t)e->n + (size_t)i];
                if (*c == 0) continue;
                int64_t held = dpdo__ledger_count(e->ledger, &e->pv.ev[k], i);
                int64_t take = held < *c ? held : *c;
                if (take > 0) dpdo__ledger_discharge(e->ledger, &e->pv.ev[k], take, &i, 1);
                *c = 0;
            }
    }
    memset(e->pv.used, 0, (size_t)e->n * sizeof *e->pv.used);
    memset(e->comm, 0, (size_t)(e->n + 1) * sizeof *e->comm);
    memset(e->last_active, 0, (size_t)e->n);
    e->round = 0;
    e->tol_met = 0;
    e->plan.t = 0;
    e->inj_active = NULL;
    e->inj_zeta = NULL;
    int krc = e->prepared ? draw_keys(e, a->errmsg) : DPDO_OK; /* secure: a new run, new keys */
    e->vt->init(e, e->priv);
    a->state = DPDO_ALG_READY;
    a->stop = DPDO_STOP_NONE;
    if (krc) return krc;
    dpdo__err_clear(a->errmsg);
    if (lost)
        return dpdo__err(a->errmsg, DPDO_E_STATE,
                         "reset: done, but the ledger no longer held all of this run's charges (was it reset or "
                         "reloaded?); what it held was removed");
    return DPDO_OK;
}

/* ---- getters ------------------------------------------------------------------------ */

static int getter_check(const dpdo_algorithm *a, int64_t node, const double *x, int64_t dim, const char *what)
{
    if (!a) return DPDO_E_INVAL;
    char *msg = ((dpdo_algorithm *)a)->errmsg;
    if (!a->e) return dpdo__err(msg, DPDO_E_STATE, "%s: the algorithm is EMPTY", what);
    if (!x) return dpdo__err(msg, DPDO_E_INVAL, "%s: the output buffer is NULL", what);
    if (dim != a->e->d)
        return dpdo__err(msg, DPDO_E_INVAL, "%s: dim = %lld, the algorithm's dimension is %lld", what,
                         (long long)dim, (long long)a->e->d);
    if (node != DPDO_NODE_ALL && (node < 0 || node >= a->e->n))
        return dpdo__err(msg, DPDO_E_INVAL, "%s: node %lld is not in [0, %lld) or DPDO_NODE_ALL", what,
                         (long long)node, (long long)a->e->n);
    return DPDO_OK;
}

static const dpdo__block *find_block(const dpdo__eng *e, const char *name)
{
    for (int i = 0; i < e->nblk; i++)
        if (e->blk[i].name && strcmp(e->blk[i].name, name) == 0) return &e->blk[i];
    return NULL;
}

static void row_or_mean(const dpdo__block *b, int64_t node, double *x)
{
    size_t d = (size_t)b->cols;
    if (b->rows == 1) node = 0; /* a single public model: every node's iterate */
    if (node >= 0) {
        memcpy(x, b->cur + (size_t)node * d, d * sizeof(double));
        return;
    }
    memcpy(x, b->cur, d * sizeof(double));
    for (int64_t i = 1; i < b->rows; i++) {
        const double *r = b->cur + (size_t)i * d;
        for (size_t k = 0; k < d; k++) x[k] += r[k];
    }
    for (size_t k = 0; k < d; k++) x[k] /= (double)b->rows;
}

DPDO_API int dpdo_algorithm_get_state(const dpdo_algorithm *a, const char *name, int64_t node, double *x,
                                      int64_t dim)
{
    const dpdo__block *b = a && a->e && name ? find_block(a->e, name) : NULL;
    int one = b && b->rows == 1; /* a coordinator (global) row */
    int rc = getter_check(a, one ? DPDO_NODE_ALL : node, x, dim, "get_state");
    if (rc) return rc;
    if (!b || b->cols != a->e->d) {
        char list[128] = "";
        for (int i = 0; i < a->e->nblk; i++)
            if (a->e->blk[i].name && a->e->blk[i].cols == a->e->d) {
                strncat(list, list[0] ? ", " : "", sizeof list - strlen(list) - 1);
                strncat(list, a->e->blk[i].name, sizeof list - strlen(list) - 1);
            }
        return dpdo__err(((dpdo_algorithm *)a)->errmsg, DPDO_E_INVAL, "get_state: no state named \"%s\" in %s (names: %s)",
                         name ? name : "(null)", a->vt->name, list);
    }
    if (one) {
        if (node != DPDO_NODE_ALL && node != DPDO_NODE_COORDINATOR)
            return dpdo__err(((dpdo_algorithm *)a)->errmsg, DPDO_E_INVAL,
                             "get_state: \"%s\" is the coordinator's; use node DPDO_NODE_COORDINATOR", name);
        memcpy(x, b->cur, (size_t)b->cols * sizeof(double));
        return DPDO_OK;
    }
    row_or_mean(b, node, x);
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_get_iterate(const dpdo_algorithm *a, int64_t node, double *x, int64_t dim)
{
    int rc = getter_check(a, node, x, dim, "get_iterate");
    if (rc) return rc;
    row_or_mean(find_block(a->e, "x"), node, x);
    return DPDO_OK;
}

static int64_t output_all(const dpdo__eng *e, double *x)
{
    size_t d = (size_t)e->d;
    e->vt->output(e, e->priv, 0, x);
    for (int64_t i = 1; i < e->n; i++) {
        e->vt->output(e, e->priv, i, e->tmp_a);
        for (size_t k = 0; k < d; k++) x[k] += e->tmp_a[k];
    }
    for (size_t k = 0; k < d; k++) x[k] /= (double)e->n;
    return e->n;
}

DPDO_API int dpdo_algorithm_get_output(const dpdo_algorithm *a, int64_t node, double *x, int64_t dim)
{
    int rc = getter_check(a, node, x, dim, "get_output");
    if (rc) return rc;
    if (node >= 0) a->e->vt->output(a->e, a->e->priv, node, x);
    else output_all(a->e, x);
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_get_active(const dpdo_algorithm *a, int32_t *flags, int64_t n)
{
    if (!a) return DPDO_E_INVAL;
    if (!a->e) return dpdo__err(((dpdo_algorithm *)a)->errmsg, DPDO_E_STATE, "get_active: the algorithm is EMPTY");
    if (!flags || n != a->e->n)
        return dpdo__err(((dpdo_algorithm *)a)->errmsg, DPDO_E_INVAL, "get_active: need flags[%lld] (got %s, n = %lld)",
                         (long long)a->e->n, flags ? "a buffer" : "NULL", (long long)n);
    for (int64_t i = 0; i < n; i++) flags[i] = a->e->last_active[i];
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_comm(const dpdo_algorithm *a, int64_t node, int64_t *messages, int64_t *scalars,
                                 int64_t *bytes)
{
    if (!a) return DPDO_E_INVAL;
    if (!a->e) return dpdo__err(((dpdo_algorithm *)a)->errmsg, DPDO_E_STATE, "comm: the algorithm is EMPTY");
    const dpdo__eng *e = a->e;
    int64_t v[3] = {0, 0, 0};
    if (node == DPDO_NODE_ALL) {
        for (int64_t i = 0; i <= e->n; i++)
            for (int k = 0; k < 3; k++) v[k] += e->comm[i][k];
    } else if (node == DPDO_NODE_COORDINATOR) {
        for (int k = 0; k < 3; k++) v[k] = e->comm[e->n][k];
    } else if (node >= 0 && node < e->n) {
        for (int k = 0; k < 3; k++) v[k] = e->comm[node][k];
    } else {
        return dpdo__err(((dpdo_algorithm *)a)->errmsg, DPDO_E_INVAL,
                         "comm: node %lld is not in [0, %lld), DPDO_NODE_ALL or DPDO_NODE_COORDINATOR",
                         (long long)node, (long long)e->n);
    }
    if (messages) *messages = v[0];
    if (scalars) *scalars = v[1];
    if (bytes) *bytes = v[2];
    return DPDO_OK;
}

/* ---- privacy ------------------------------------------------------------------------- */

DPDO_API int dpdo_algorithm_planned_releases(dpdo_algorithm *a, int64_t node, int64_t *count)
{
    if (!a || !count) return DPDO_E_INVAL;
    dpdo__eng *e = a->e;
    if (!e) return dpdo__err(a->errmsg, DPDO_E_STATE, "planned releases: the algorithm is EMPTY");
    if (node != DPDO_NODE_ALL && (node < 0 || node >= e->n))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "planned releases: node %lld is not in [0, %lld) or DPDO_NODE_ALL",
                         (long long)node, (long long)e->n);
    if (!e->prepared)
        return dpdo__err(a->errmsg, DPDO_E_STATE, "planned releases: not prepared yet (call dpdo_algorithm_prepare)");
    int64_t c = 0;
    for (int64_t i = 0; i < e->n; i++)
        if (node == DPDO_NODE_ALL || node == i) c = e->pv.planned[i] > c ? e->pv.planned[i] : c;
    if (c == 0)
        return dpdo__err(a->errmsg, DPDO_E_UNSUPPORTED,
                         "planned releases: sigma was not calibrated by the accountant (noise mode %d%s)",
                         e->o.noise_mode, e->pv.private_run ? "" : ", no noise");
    *count = c;
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_privacy(dpdo_algorithm *a, int kind, int64_t node, double *eps, double *delta,
                                    int32_t *valid)
{
    if (!a || !eps) return DPDO_E_INVAL;
    dpdo__eng *e = a->e;
    if (!e) return dpdo__err(a->errmsg, DPDO_E_STATE, "privacy: the algorithm is EMPTY");
    if (kind != DPDO_PRIVACY_RIGOROUS && kind != DPDO_PRIVACY_PAPER)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "privacy: kind %d is not a DPDO_PRIVACY_* value", kind);
    if (node != DPDO_NODE_ALL && (node < 0 || node >= e->n))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "privacy: node %lld is not in [0, %lld) or DPDO_NODE_ALL",
                         (long long)node, (long long)e->n);
    if (!e->prepared)
        return dpdo__err(a->errmsg, DPDO_E_STATE, "privacy: not prepared yet (call dpdo_algorithm_prepare or step)");
    if (kind == DPDO_PRIVACY_RIGOROUS) {
        if (delta) *delta = e->o.delta;
        if (!e->pv.private_run) {
            *eps = INFINITY;
            if (valid) *valid = 0;
            return DPDO_OK;
        }
        int rc = dpdo_accountant_epsilon(e->acc, node, e->o.delta, eps, NULL);
        if (rc) return dpdo__err(a->errmsg, rc, "privacy: %s", dpdo_accountant_errmsg(e->acc));
        if (valid) *valid = 1;
        return DPDO_OK;
    }
    if (!e->pv.paper)
        return dpdo__err(a->errmsg, DPDO_E_UNSUPPORTED, "privacy: no paper bound for this run (%s)",
                         e->pv.private_run ? "the algorithm has none" : "noise disabled");
    int rc = e->vt->paper_update ? e->vt->paper_update(e, e->priv, e->pv.paper)
             : e->vt->paper_round ? dpdo_paper_set(e->pv.paper, e->vt->paper_round, (double)e->round)
                                  : DPDO_OK;
    if (!rc) rc = dpdo_paper_evaluate(e->pv.paper);
    double v = NAN, dl = NAN;
    if (!rc) rc = dpdo_paper_get(e->pv.paper, e->vt->paper_eps, &v);
    if (!rc) rc = dpdo_paper_get(e->pv.paper, e->vt->paper_delta, &dl);
    if (rc) return dpdo__err(a->errmsg, rc, "privacy: paper bound: %s", dpdo_paper_errmsg(e->pv.paper));
    *eps = v;
    if (delta) *delta = dl;
    if (valid) *valid = dpdo_paper_valid(e->pv.paper);
    return DPDO_OK;
}

DPDO_API const char *dpdo_algorithm_privacy_source(const dpdo_algorithm *a, int kind)
{
    if (!a || !a->e) return "";
    if (kind == DPDO_PRIVACY_RIGOROUS) {
        if (!a->e->acc) return "";
        /* "auto" answers with its best member: name the one behind the latest figure */
        const char *src = dpdo_accountant_source(a->e->acc);
        return src && src[0] ? src : dpdo_accountant_name(a->e->acc);
    }
    if (kind == DPDO_PRIVACY_PAPER) return a->e->pv.paper && a->vt->paper ? a->vt->paper : "";
    return "";
}

DPDO_API const char *dpdo_algorithm_privacy_notes(const dpdo_algorithm *a)
{
    return a && a->e ? a->e->pv.notes : "";
}

/* ---- objective helpers ------------------------------------------------------------------- */

static int objective_of(dpdo_algorithm *a, const double *x, double *F)
{
    if (!a->e->ref)
        return dpdo__err(a->errmsg, DPDO_E_UNSUPPORTED,
                         "objective: some nodes are remote (their data is on other processes): evaluate each "
                         "process's nodes with dpdo_node_eval and add the parts");
    int rc = dpdo_reference_objective(a->e->ref, x, a->e->d, F);
    if (rc) return dpdo__err(a->errmsg, rc, "objective: %s", dpdo_reference_errmsg(a->e->ref));
    if (isnan(*F)) return dpdo__err(a->errmsg, DPDO_E_NUMERIC, "objective: the value is NaN");
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_objective(dpdo_algorithm *a, int point, int64_t node, double *F)
{
    if (!a || !F) return DPDO_E_INVAL;
    if (!a->e) return dpdo__err(a->errmsg, DPDO_E_STATE, "objective: the algorithm is EMPTY");
    if (point != DPDO_POINT_ITERATE && point != DPDO_POINT_OUTPUT)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "objective: point %d is not a DPDO_POINT_* value", point);
    double *x = a->e->tmp_b;
    int rc = point == DPDO_POINT_ITERATE ? dpdo_algorithm_get_iterate(a, node, x, a->e->d)
                                         : dpdo_algorithm_get_output(a, node, x, a->e->d);
    if (rc) return rc;
    return objective_of(a, x, F);
}

DPDO_API int dpdo_algorithm_suboptimality(dpdo_algorithm *a, int point, int64_t node, double fstar, double *gap)
{
    if (!a || !gap) return DPDO_E_INVAL;
    if (!isfinite(fstar)) return dpdo__err(a->errmsg, DPDO_E_INVAL, "suboptimality: fstar = %g is not finite", fstar);
    double F;
    int rc = dpdo_algorithm_objective(a, point, node, &F);
    if (rc) return rc;
    *gap = F - fstar;
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_objective_at(dpdo_algorithm *a, const double *x, int64_t dim, double *F)
{
    if (!a || !F) return DPDO_E_INVAL;
    int rc = getter_check(a, 0, x, dim, "objective_at");
    if (rc) return rc;
    if (!dpdo__all_finite(x, (size_t)dim))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "objective_at: x[%zu] is not finite",
                         dpdo__first_nonfinite(x, (size_t)dim));
    return objective_of(a, x, F);
}

/* ---- local solver ------------------------------------------------------------------------- */

/* The common checks of the plug-in setters: a handle, set up, of a type that uses the plug-in
 * (`lacks` completes "<type> ..." otherwise), at round 0. */
static int plugin_check(dpdo_algorithm *a, int used, const char *what, const char *lacks)
{
    if (!a) return DPDO_E_INVAL;
    if (!a->e) return dpdo__err(a->errmsg, DPDO_E_STATE, "%s: the algorithm is EMPTY", what);
    if (!used) return dpdo__err(a->errmsg, DPDO_E_UNSUPPORTED, "%s: %s %s", what, a->vt->name, lacks);
    if (a->state != DPDO_ALG_READY)
        return dpdo__err(a->errmsg, DPDO_E_STATE, "%s: only at round 0 (READY); call dpdo_algorithm_reset", what);
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_set_solver(dpdo_algorithm *a, dpdo_solver *solver)
{
    int rc0 = plugin_check(a, a && a->e && a->e->vt->uses_solver, "set_solver", "has no local solver");
    if (rc0) return rc0;
    dpdo__eng *e = a->e;
    if (solver && dpdo_solver_dim(solver) != e->d)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "set_solver: the solver's dimension %lld differs from %lld",
                         (long long)dpdo_solver_dim(solver), (long long)e->d);
    if (!solver) {
        if (e->own_solver) return DPDO_OK;
        dpdo_solver *s = NULL;
        int rc = dpdo_solver_create(&s, dpdo_solver_type_find("gd"), NULL, e->d);
        if (rc) return dpdo__err(a->errmsg, rc, "set_solver: cannot create the default solver");
        e->solver = s;
        e->own_solver = 1;
    } else {
        if (e->own_solver) dpdo_solver_destroy(e->solver);
        e->solver = solver;
        e->own_solver = 0;
    }
    e->prepared = 0;
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_set_compressor(dpdo_algorithm *a, dpdo_compressor *comp)
{
    int rc0 = plugin_check(a, a && a->e && a->e->vt->uses_compressor, "set_compressor", "does not compress messages");
    if (rc0) return rc0;
    dpdo__eng *e = a->e;
    if (comp && dpdo_compressor_dim(comp) != e->d)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "set_compressor: the compressor's dimension %lld differs from %lld",
                         (long long)dpdo_compressor_dim(comp), (long long)e->d);
    if (!comp) {
        if (e->own_comp) return DPDO_OK;
        dpdo_compressor *c = NULL;
        int rc = dpdo_compressor_create(&c, dpdo_compressor_type_find("identity"), NULL, e->d);
        if (rc) return dpdo__err(a->errmsg, rc, "set_compressor: cannot create the default compressor");
        e->comp = c;
        e->own_comp = 1;
    } else {
        if (e->own_comp) dpdo_compressor_destroy(e->comp);
        e->comp = comp;
        e->own_comp = 0;
    }
    e->prepared = 0;
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_set_policy(dpdo_algorithm *a, dpdo_policy *policy)
{
    int rc0 = plugin_check(a, a && a->e && a->e->vt->uses_policy, "set_policy", "takes no decision policy");
    if (rc0) return rc0;
    dpdo__eng *e = a->e;
    if (policy && (policy->n_nodes < e->n || policy->state_len != e->d + 2))
        return dpdo__err(a->errmsg, DPDO_E_INVAL,
                         "set_policy: the policy was created for %lld nodes and states of %lld values; need >= %lld "
                         "nodes and d + 2 = %lld",
                         (long long)policy->n_nodes, (long long)policy->state_len, (long long)e->n,
                         (long long)(e->d + 2));
    if (!policy) {
        if (e->own_policy) return DPDO_OK;
        dpdo_policy *p = NULL;
        int rc = dpdo_policy_create(&p, dpdo_policy_type_find("always-global"), NULL, e->n, e->d + 2);
        if (rc) return dpdo__err(a->errmsg, rc, "set_policy: cannot create the default policy");
        e->policy = p;
        e->own_policy = 1;
    } else {
        if (e->own_policy) dpdo_policy_destroy(e->policy);
        e->policy = policy;
        e->own_policy = 0;
    }
    e->prepared = 0;
    e->vt->init(e, e->priv);
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_set_next_active(dpdo_algorithm *a, const int32_t *flags, int64_t n)
{
    if (!a) return DPDO_E_INVAL;
    dpdo__eng *e = a->e;
    if (!e) return dpdo__err(a->errmsg, DPDO_E_STATE, "set_next_active: the algorithm is EMPTY");
    if (!e->vt->accepts_mask)
        return dpdo__err(a->errmsg, DPDO_E_UNSUPPORTED, "set_next_active: %s chooses its own computing nodes",
                         a->vt->name);
    if (a->state == DPDO_ALG_DONE || a->state == DPDO_ALG_FAILED)
        return dpdo__err(a->errmsg, DPDO_E_STATE, "set_next_active: the run is over; call dpdo_algorithm_reset");
    if (!flags) {
        e->inj_active = NULL;
        return DPDO_OK;
    }
    if (n != e->n)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "set_next_active: n = %lld, the algorithm has %lld nodes",
                         (long long)n, (long long)e->n);
    int64_t b = 0;
    for (int64_t i = 0; i < n; i++) {
        if (flags[i] != 0 && flags[i] != 1)
            return dpdo__err(a->errmsg, DPDO_E_INVAL, "set_next_active: flags[%lld] = %d: must be 0 or 1", (long long)i,
                             (int)flags[i]);
        if (flags[i]) e->mask_list[b++] = i;
    }
    if (b == 0) return dpdo__err(a->errmsg, DPDO_E_INVAL, "set_next_active: no node is active");
    e->inj_active = e->mask_list;
    e->inj_b = b;
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_set_node_probabilities(dpdo_algorithm *a, const double *p, int64_t n)
{
    if (!a) return DPDO_E_INVAL;
    dpdo__eng *e = a->e;
    if (!e) return dpdo__err(a->errmsg, DPDO_E_STATE, "set_node_probabilities: the algorithm is EMPTY");
    if (!e->vt->node_probs)
        return dpdo__err(a->errmsg, DPDO_E_UNSUPPORTED, "set_node_probabilities: %s has no per-node activation",
                         a->vt->name);
    if (a->state != DPDO_ALG_READY)
        return dpdo__err(a->errmsg, DPDO_E_STATE, "set_node_probabilities: only at round 0 (READY)");
    if (!p) {
        dpdo__free(e->node_p);
        e->node_p = NULL;
        e->prepared = 0;
        return DPDO_OK;
    }
    if (n != e->n)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "set_node_probabilities: n = %lld, the algorithm has %lld nodes",
                         (long long)n, (long long)e->n);
    for (int64_t i = 0; i < n; i++)
        if (!(p[i] > 0 && p[i] <= 1))
            return dpdo__err(a->errmsg, DPDO_E_INVAL, "set_node_probabilities: p[%lld] = %g is not in (0, 1]",
                             (long long)i, p[i]);
    if (!e->node_p && !(e->node_p = dpdo__alloc_array((size_t)n, sizeof *e->node_p)))
        return dpdo__err(a->errmsg, DPDO_E_NOMEM, "set_node_probabilities: out of memory");
    memcpy(e->node_p, p, (size_t)n * sizeof *p);
    e->prepared = 0;
    return DPDO_OK;
}

/* ---- injection and probes (tests, benches) ------------------------------------------------- */

int dpdo__algorithm_inject_active(dpdo_algorithm *a, const int64_t *nodes, int64_t b)
{
    if (!a || !a->e || b < 0 || b > a->e->n || (b > 0 && !nodes)) return DPDO_E_INVAL;
    for (int64_t i = 0; i < b; i++)
        if (nodes[i] < 0 || nodes[i] >= a->e->n || (i > 0 && nodes[i] <= nodes[i - 1])) return DPDO_E_INVAL;
    a->e->inj_active = b ? nodes : NULL;
    a->e->inj_b = b;
    return DPDO_OK;
}

int dpdo__algorithm_inject_zeta(dpdo_algorithm *a, const double *zeta)
{
    if (!a || !a->e) return DPDO_E_INVAL;
    a->e->inj_zeta = zeta;
    return DPDO_OK;
}

void dpdo__algorithm_set_probe(dpdo_algorithm *a, dpdo__probe_fn fn, void *user)
{
    if (!a || !a->e) return;
    a->e->probe = fn;
    a->e->probe_user = user;
}

/* ---- distributed runs (dpdo/transport.h; the mechanics are in dist.c) ----------------------- */

DPDO_API int dpdo_algorithm_set_transport(dpdo_algorithm *a, const dpdo_transport_type *t, void *user)
{
    if (!a) return DPDO_E_INVAL;
    dpdo__eng *e = a->e;
    if (!e) return dpdo__err(a->errmsg, DPDO_E_STATE, "set_transport: the algorithm is EMPTY");
    if (a->state != DPDO_ALG_READY || e->round != 0)
        return dpdo__err(a->errmsg, DPDO_E_STATE, "set_transport: only at round 0 (READY); call reset first");
    if (!t) {
        dpdo__dist_detach(e);
        return DPDO_OK;
    }
    if (t->struct_size < sizeof(dpdo_transport_type))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "set_transport: struct_size %zu is smaller than %zu",
                         t->struct_size, sizeof(dpdo_transport_type));
    if (!t->layout || !t->exchange || !t->agree || !t->share || !t->sum || !t->bcast || !t->send || !t->recv)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "set_transport: type '%s' lacks a callback",
                         t->name ? t->name : "(unnamed)");
    if (!e->vt->distributable)
        return dpdo__err(a->errmsg, DPDO_E_UNSUPPORTED, "set_transport: %s cannot run over a transport yet",
                         e->vt->name);
    int rc = dpdo__dist_attach(e, t, user);
    if (rc) return rc;
    /* prepare everywhere and agree: a configuration error on one process fails all */
    /* always (re)prepare once attached: keys are drawn only for the nodes this process hosts (a
     * prepare before attach drew them for every node; those of other processes are wiped) */
    int st = do_prepare(a);
    int64_t node = -1;
    char msg[DPDO__ERRMSG_LEN];
    memcpy(msg, a->errmsg, sizeof msg);
    int xr = t->agree(user, &st, &node, msg, sizeof msg);
    if (xr) {
        dpdo__dist_detach(e);
        return dpdo__err(a->errmsg, xr, "set_transport: '%s': agree failed (code %d)", t->name, xr);
    }
    if (st) {
        msg[sizeof msg - 1] = 0;
        dpdo__dist_detach(e);
        memcpy(a->errmsg, msg, sizeof msg);
        return st;
    }
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_share_state(dpdo_algorithm *a)
{
    if (!a) return DPDO_E_INVAL;
    if (!a->e) return dpdo__err(a->errmsg, DPDO_E_STATE, "share_state: the algorithm is EMPTY");
    if (!a->e->xt) return DPDO_OK;
    return dpdo__dist_share_state(a->e);
}

DPDO_API int dpdo_algorithm_hosts(const dpdo_algorithm *a, int64_t node)
{
    if (!a || !a->e || node < 0 || node >= a->e->n) return 0;
    return dpdo__eng_hosted(a->e, node);
}

int dpdo__eng_keys_alloc(dpdo__eng *e)
{
    if (e->key) return DPDO_OK;
    unsigned char *k = dpdo__calloc((size_t)e->n, 32), *src = dpdo__calloc((size_t)e->n, 1);
    if (!k || !src) {
        dpdo__free(k), dpdo__free(src);
        return dpdo__err(e->err, DPDO_E_NOMEM, "out of memory (node keys)");
    }
    e->key = k, e->key_src = src;
    e->rng->keys = k, e->rng->has_key = src, e->rng->nkeys = e->n;
    return DPDO_OK;
}

static int set_key(dpdo_algorithm *a, int64_t node, const unsigned char *key, const char *what)
{
    if (!a) return DPDO_E_INVAL;
    dpdo__eng *e = a->e;
    if (!e) return dpdo__err(a->errmsg, DPDO_E_STATE, "%s: the algorithm is EMPTY", what);
    if (a->state != DPDO_ALG_READY || e->round != 0)
        return dpdo__err(a->errmsg, DPDO_E_STATE, "%s: only at round 0 (READY)", what);
    if (node < 0 || node >= e->n)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "%s: node %lld is not in [0, %lld)", what, (long long)node,
                         (long long)e->n);
    if (!key) return dpdo__err(a->errmsg, DPDO_E_INVAL, "%s: key is NULL", what);
    if (!e->key) {
        unsigned char *k = dpdo__calloc((size_t)e->n, 32), *src = dpdo__calloc((size_t)e->n, 1);
        if (!k || !src) {
            dpdo__free(k), dpdo__free(src);
            return dpdo__err(a->errmsg, DPDO_E_NOMEM, "%s: out of memory", what);
        }
        e->key = k, e->key_src = src;
        e->rng->keys = k, e->rng->has_key = src, e->rng->nkeys = e->n;
    }
    memcpy(e->key + 32 * (size_t)node, key, 32);
    e->key_src[node] = DPDO__KEY_HOST;
    e->keyed = 1;
    e->prepared = 0; /* initial values drawn from the node's streams (prepare re-runs init) */
    e->vt->init(e, e->priv);
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_set_node_key(dpdo_algorithm *a, int64_t node, const unsigned char key[32])
{
    return set_key(a, node, key, "set_node_key");
}

void dpdo__node_secret_key(uint64_t secret, unsigned char key[32])
{
    static const char label[] = "libdpdo node secret v1";
    unsigned char in[sizeof label - 1 + 8];
    memcpy(in, label, sizeof label - 1);
    for (int b = 0; b < 8; b++) in[sizeof label - 1 + b] = (unsigned char)(secret >> (8 * b));
    crypto_generichash(key, 32, in, sizeof in, NULL, 0);
}

DPDO_API int dpdo_algorithm_set_node_secret(dpdo_algorithm *a, int64_t node, uint64_t secret)
{
    /* the 64-bit secret becomes a 256-bit key: BLAKE2b-256 of a fixed label and the secret's 8
     * little-endian bytes (docs/rng.md); no more secret than its 64 bits */
    unsigned char key[32];
    if (sodium_init() < 0) return dpdo__err(a ? a->errmsg : NULL, DPDO_E_UNSUPPORTED, "set_node_secret: libsodium cannot be initialised");
    dpdo__node_secret_key(secret, key);
    int rc = set_key(a, node, key, "set_node_secret");
    sodium_memzero(key, sizeof key);
    return rc;
}

DPDO_API const char *dpdo_algorithm_randomness_source(const dpdo_algorithm *a)
{
    if (!a || !a->e) return "";
    const dpdo__eng *e = a->e;
    if (e->o.randomness == DPDO_RANDOMNESS_SECURE) {
        if (!e->prepared || !e->pv.private_run)
            return e->keyed ? "secure (not a private run): private streams under the host's node keys (chacha20-ietf)"
                            : "secure (not a private run): nothing secret to draw; streams keyed by options.seed "
                              "(philox4x32-10)";
        if (e->vt->uses_solver)
            return "secure: private streams chacha20-ietf under per-node 256-bit keys (OS entropy or the host's); "
                   "noise drawn inside the local solver as continuous doubles (not floating-point safe); public "
                   "streams philox4x32-10 under options.seed";
        return "secure: private streams chacha20-ietf under per-node 256-bit keys (OS entropy or the host's); "
               "noise exact discrete on a power-of-two grid; public streams philox4x32-10 under options.seed";
    }
    return e->keyed ? "reproducible: private streams chacha20-ietf under the host's node keys where set, else "
                      "philox4x32-10 under options.seed; continuous double-precision noise (not floating-point safe)"
                    : "reproducible: every stream philox4x32-10 under options.seed; continuous double-precision "
                      "noise (not floating-point safe); epsilon holds only against parties who do not know the seed";
}

/* ---- checkpoints (lib/engine/checkpoint.c) ------------------------------------------ */

static int prepare_cb(void *arg)
{
    dpdo_algorithm *a = arg;
    return a->e->prepared ? DPDO_OK : do_prepare(a);
}

DPDO_API int dpdo_algorithm_save(dpdo_algorithm *a, const char *path, const dpdo_checkpoint_options *opts)
{
    if (!a || !DPDO__LIVE(a, DPDO__MAGIC_ALGORITHM)) return DPDO_E_INVAL;
    if (!path) return dpdo__err(a->errmsg, DPDO_E_INVAL, "save: path is NULL");
    if (!a->e) return dpdo__err(a->errmsg, DPDO_E_STATE, "save: the algorithm is EMPTY");
    return dpdo__ckpt_save(a->e, a->state, a->stop, path, opts);
}

static int load_common(dpdo_algorithm *a, const char *path, const unsigned char *image, size_t size,
                       const dpdo_checkpoint_options *opts)
{
    if (!a->e) return dpdo__err(a->errmsg, DPDO_E_STATE, "load: the algorithm is EMPTY; call dpdo_algorithm_setup");
    int state = a->state, stop = a->stop;
    int rc = dpdo__ckpt_load(a->e, &state, &stop, path, image, size, opts, prepare_cb, a);
    if (rc) return rc;
    a->state = state;
    a->stop = stop;
    dpdo__err_clear(a->errmsg);
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_load(dpdo_algorithm *a, const char *path, const dpdo_checkpoint_options *opts)
{
    if (!a || !DPDO__LIVE(a, DPDO__MAGIC_ALGORITHM)) return DPDO_E_INVAL;
    if (!path) return dpdo__err(a->errmsg, DPDO_E_INVAL, "load: path is NULL");
    return load_common(a, path, NULL, 0, opts);
}

int dpdo__algorithm_load_image(dpdo_algorithm *a, const unsigned char *image, size_t size,
                               const dpdo_checkpoint_options *opts)
{
    if (!a || !DPDO__LIVE(a, DPDO__MAGIC_ALGORITHM) || !image) return DPDO_E_INVAL;
    return load_common(a, NULL, image, size, opts);
}
