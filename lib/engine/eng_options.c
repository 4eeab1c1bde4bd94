/* SPDX-License-Identifier: BSD-3-Clause */
/* Options and parameters: dpdo_algorithm_options_init, the validation of options and of the
 * problem handed to setup, the options' parameter slots, and dpdo_algorithm_set_* / get_*. */
#include "../core/pool_impl.h"
#include "../model/model_impl.h"
#include "eng_handle.h"
#include <math.h>
#include <string.h>

DPDO_API int dpdo_algorithm_options_init(dpdo_algorithm_options *o, size_t struct_size)
{
    dpdo_algorithm_options d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
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
    return dpdo__options_init(o, struct_size, &d, sizeof d);
}

int dpdo__eng_check_options(const dpdo_algorithm_options *o, char *err)
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
    if (o->strict != 0 && o->strict != 1)
        BAD("options.strict = %d: must be 0 or 1", (int)o->strict);
    if (!(o->epsilon > 0 && o->epsilon < INFINITY))
        BAD("options.epsilon = %g: must be finite and > 0", o->epsilon);
    if (!(o->delta > 0 && o->delta < 1)) BAD("options.delta = %g: must be in (0, 1)", o->delta);
    if (!(o->max_epsilon >= 0))
        BAD("options.max_epsilon = %g: must be >= 0 (+inf = off)", o->max_epsilon);
    if (o->noise_mode == DPDO_NOISE_FIXED && !(o->sigma >= 0 && o->sigma <= 1e300))
        BAD("options.sigma = %g: DPDO_NOISE_FIXED needs a finite sigma >= 0", o->sigma);
    if (!(o->lipschitz > 0 && o->lipschitz < INFINITY))
        BAD("options.lipschitz = %g: must be finite and > 0", o->lipschitz);
    if (!isnan(o->clip) && !(o->clip > 0))
        BAD("options.clip = %g: must be > 0, +inf (no clipping) or NaN (= lipschitz)", o->clip);
    if (o->batch < 1) BAD("options.batch = %lld: must be >= 1", (long long)o->batch);
    if (!(o->tol >= 0 && o->tol < INFINITY))
        BAD("options.tol = %g: must be finite and >= 0", o->tol);
    if (o->check_every < 1)
        BAD("options.check_every = %lld: must be >= 1", (long long)o->check_every);
    if (o->weighting < -1 || o->weighting > DPDO_WEIGHT_NODE_WEIGHTS)
        BAD("options.weighting = %d: must be -1 or a DPDO_WEIGHT_* value", (int)o->weighting);
    if (o->randomness != DPDO_RANDOMNESS_SECURE && o->randomness != DPDO_RANDOMNESS_REPRODUCIBLE)
        BAD("options.randomness = %d: must be DPDO_RANDOMNESS_SECURE (0) or "
            "DPDO_RANDOMNESS_REPRODUCIBLE (1)",
            (int)o->randomness);
    if (o->num_threads < 0 || o->num_threads > DPDO__MAX_THREADS)
        BAD("options.num_threads = %d: must be in [0, %d] (0 = DPDO_NUM_THREADS or 1)",
            (int)o->num_threads, DPDO__MAX_THREADS);
    if (o->reserved32 != 0) BAD("options.reserved32 = %d: must be 0", (int)o->reserved32);
    return DPDO_OK;
#undef BAD
}

/* Everything independent of the algorithm: nodes, network, regularizer,
 * accountant. Writes the message into err. */
int dpdo__eng_check_problem(const dpdo__alg_vt *vt, dpdo_node *const *nodes, int32_t n,
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
            return dpdo__err(err, DPDO_E_INVAL,
                             "setup: node %d: dimension %lld differs from node 0's %lld", (int)i,
                             (long long)nd->dim, (long long)d);
        if (nd->loss->kind == DPDO_LOSS_KIND_MODEL || (!nd->shard && nd->remote_rows < 1))
            return dpdo__err(
                err, DPDO_E_INVAL,
                "setup: node %d: %s needs a sample-kind loss (phi or batch) with a shard: "
                "a model-kind loss has no samples to draw or account for",
                (int)i, vt->name);
        if (dpdo_node_samples(nd) < 1)
            return dpdo__err(err, DPDO_E_INVAL, "setup: node %d: the shard is empty", (int)i);
    }
    if (!net && vt->needs_net)
        return dpdo__err(err, DPDO_E_INVAL, "setup: %s needs a network (net is NULL)", vt->name);
    if (net && dpdo_network_nodes(net) != n)
        return dpdo__err(err, DPDO_E_INVAL,
                         "setup: the network has %lld nodes, but %d nodes were given",
                         (long long)dpdo_network_nodes(net), (int)n);
    if (reg && reg->dim != d)
        return dpdo__err(err, DPDO_E_INVAL,
                         "setup: the regularizer's dimension %lld differs from the nodes' %lld",
                         (long long)reg->dim, (long long)d);
    if (!acc && o->noise_mode != DPDO_NOISE_NONE)
        return dpdo__err(err, DPDO_E_INVAL,
                         "setup: acc is NULL: a noisy run (noise_mode %d) needs an accountant; "
                         "choose one: the library's default is "
                         "dpdo_accountant_type_find(DPDO_ACCOUNTANT_DEFAULT) (\"auto\", "
                         "docs/privacy.md)",
                         (int)o->noise_mode);
    if (acc && dpdo_ledger_nodes(dpdo__accountant_ledger(acc)) != n)
        return dpdo__err(err, DPDO_E_INVAL,
                         "setup: the accountant's ledger has %lld nodes, but %d nodes were given",
                         (long long)dpdo_ledger_nodes(dpdo__accountant_ledger(acc)), (int)n);
    return DPDO_OK;
}

void dpdo__eng_opts_to_params(dpdo__eng *e)
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
    dpdo__param_table_defaults(e);
}

static int set_common(dpdo_algorithm *a, int key, int type, double v, int64_t iv)
{
    if (!a) return DPDO_E_INVAL;
    if (!a->e || a->state == DPDO_ALG_DONE || a->state == DPDO_ALG_FAILED)
        return dpdo__err(a->errmsg, DPDO_E_STATE, "set: key %d: the algorithm is %s", key,
                         !a->e ? "EMPTY (call dpdo_algorithm_setup)"
                               : "finished (call dpdo_algorithm_reset)");
    int s = dpdo__param_slot(a->vt, key);
    if (s < 0)
        return dpdo__err(a->errmsg, DPDO_E_UNSUPPORTED, "set: key %d is not a parameter of %s", key,
                         a->vt->name);
    const dpdo__pdef *def = dpdo__param_at(a->vt, s, NULL);
    const char *name = def->name;
    if (def->type != type)
        return dpdo__err(a->errmsg, DPDO_E_INVAL,
                         "set: key %d (%s) is %s; use dpdo_algorithm_set_%s", key, name,
                         type ? "an integer" : "a double", type ? "int" : "double");
    double lo = def->lo, hi = def->hi;
    if (type == 0) v = (double)iv;
    int nan_ok = (def->flags & DPDO__PF_NAN) != 0;
    if (!(isnan(v) && nan_ok) && !(v >= lo && v <= hi))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "set: %s = %g is outside [%g, %g]", name, v, lo,
                         hi);
    dpdo__eng *e = a->e;
    if ((def->flags & DPDO__PF_NODES) && iv > e->n)
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "set: %s = %lld exceeds the %lld nodes", name,
                         (long long)iv, (long long)e->n);
    if (key == DPDO_PARAM_BATCH && iv > e->qmin)
        return dpdo__err(a->errmsg, DPDO_E_INVAL,
                         "set: batch = %lld exceeds the smallest shard (%lld rows)", (long long)iv,
                         (long long)e->qmin);
    if (key == DPDO_PARAM_SIGMA && e->o.noise_mode != DPDO_NOISE_FIXED)
        return dpdo__err(a->errmsg, DPDO_E_INVAL,
                         "set: sigma can only be set with DPDO_NOISE_FIXED");
    if (a->state == DPDO_ALG_RUNNING) {
        if (!def->live)
            return dpdo__err(a->errmsg, DPDO_E_STATE,
                             "set: %s cannot change after round 0; call dpdo_algorithm_reset first",
                             name);
        if (key == DPDO_PARAM_MAX_ROUNDS &&
            (iv < DPDO__PI(e, key) ||
             (e->o.noise_mode == DPDO_NOISE_PAPER && iv != DPDO__PI(e, key))))
            return dpdo__err(
                a->errmsg, DPDO_E_STATE,
                "set: max-rounds may only grow while running, and not with DPDO_NOISE_PAPER "
                "(sigma depends on T)");
        if (key == DPDO_PARAM_MAX_EPSILON) {
            double cur = e->pv.guard_eps;
            if (!(v > 0 && v <= cur))
                return dpdo__err(a->errmsg, DPDO_E_STATE,
                                 "set: max-epsilon may only be lowered while running (now %g)",
                                 cur);
        }
    }
    if (type == 0)
        e->pi[s] = iv;
    else
        e->pd[s] = v;
    if (a->state == DPDO_ALG_READY && !def->live) e->prepared = 0;
    if (key == DPDO_PARAM_MAX_EPSILON && e->prepared) {
        int rc = dpdo__eng_compute_guard(e);
        if (rc) return rc;
    }
    if (key == DPDO_PARAM_MAX_ROUNDS && a->state == DPDO_ALG_READY &&
        e->o.noise_mode != DPDO_NOISE_NONE)
        e->prepared = 0; /* sigma and the paper bound depend on T */
    return DPDO_OK;
}

static int algorithm_set_int_body(dpdo_algorithm *a, int key, int64_t value)
{
    return set_common(a, key, 0, 0, value);
}

DPDO_API int dpdo_algorithm_set_int(dpdo_algorithm *a, int key, int64_t value)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 1, "dpdo_algorithm_set_int",
                  algorithm_set_int_body(a, key, value));
}

static int algorithm_set_double_body(dpdo_algorithm *a, int key, double value)
{
    return set_common(a, key, 1, value, 0);
}

DPDO_API int dpdo_algorithm_set_double(dpdo_algorithm *a, int key, double value)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 1, "dpdo_algorithm_set_double",
                  algorithm_set_double_body(a, key, value));
}

static int get_common(const dpdo_algorithm *a, int key, int type, void *out)
{
    if (!a || !out) return DPDO_E_INVAL;
    dpdo_algorithm *m = (dpdo_algorithm *)a; /* message buffer only */
    if (!a->e) return dpdo__err(m->errmsg, DPDO_E_STATE, "get: the algorithm is EMPTY");
    int s = dpdo__param_slot(a->vt, key);
    if (s < 0)
        return dpdo__err(m->errmsg, DPDO_E_UNSUPPORTED, "get: key %d is not a parameter of %s", key,
                         a->vt->name);
    const dpdo__pdef *def = dpdo__param_at(a->vt, s, NULL);
    if (def->type != type)
        return dpdo__err(m->errmsg, DPDO_E_INVAL, "get: key %d (%s) is %s", key, def->name,
                         type ? "an integer" : "a double");
    if (key == DPDO_PARAM_SIGMA) {
        *(double *)out = a->e->prepared ? a->e->pv.sigma : NAN;
        return DPDO_OK;
    }
    if (type == 0)
        *(int64_t *)out = a->e->pi[s];
    else
        *(double *)out = a->e->pd[s];
    return DPDO_OK;
}

static int algorithm_get_int_body(const dpdo_algorithm *a, int key, int64_t *value)
{
    return get_common(a, key, 0, value);
}

DPDO_API int dpdo_algorithm_get_int(const dpdo_algorithm *a, int key, int64_t *value)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 0, "dpdo_algorithm_get_int",
                  algorithm_get_int_body(a, key, value));
}

static int algorithm_get_double_body(const dpdo_algorithm *a, int key, double *value)
{
    return get_common(a, key, 1, value);
}

DPDO_API int dpdo_algorithm_get_double(const dpdo_algorithm *a, int key, double *value)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 0, "dpdo_algorithm_get_double",
                  algorithm_get_double_body(a, key, value));
}
