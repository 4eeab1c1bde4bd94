/* SPDX-License-Identifier: BSD-3-Clause */
/* Plug-ins: the local solver, the message compressor and the decision policy; the engine's
 * defaults and the host's own objects. */
#include "../model/policy_impl.h"
#include "../net/compress_impl.h"
#include "../solver/solver_impl.h"
#include "dpdo/compressor.h"
#include "dpdo/solver.h"
#include "eng_handle.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The three plug-in slots differ only in their type, default, dimension check and whether the
 * algorithm's round-0 state depends on the plug-in (the policy's does). */
enum { PLUG_SOLVER = 0, PLUG_COMPRESSOR = 1, PLUG_POLICY = 2, PLUG_COUNT };
static const struct {
    const char *setter, *noun, *lacks;
} PLUG[PLUG_COUNT] = {
    {"set_solver", "local solver", "has no local solver"},
    {"set_compressor", "compressor", "does not compress messages"},
    {"set_policy", "policy", "takes no decision policy"},
};

static int plug_used(const dpdo__eng *e, int k)
{
    return k == PLUG_SOLVER       ? e->vt->uses_solver
           : k == PLUG_COMPRESSOR ? e->vt->uses_compressor
                                  : e->vt->uses_policy;
}

static int *plug_own(dpdo__eng *e, int k)
{
    return k == PLUG_SOLVER ? &e->own_solver : k == PLUG_COMPRESSOR ? &e->own_comp : &e->own_policy;
}

/* Let go of the slot's object: destroy it if the engine owns it, else release the host's
 * (borrowed handles, core_impl.h: frees one the host destroyed meanwhile). The slot is left
 * dangling: refill it. */
static void plug_drop(dpdo__eng *e, int k)
{
    int own = *plug_own(e, k);
    if (k == PLUG_SOLVER) {
        if (!e->solver) return;
        if (own)
            dpdo_solver_destroy(e->solver);
        else
            dpdo__solver_release(e->solver);
    } else if (k == PLUG_COMPRESSOR) {
        if (!e->comp) return;
        if (own)
            dpdo_compressor_destroy(e->comp);
        else
            dpdo__compressor_release(e->comp);
    } else {
        if (!e->policy) return;
        if (own)
            dpdo_policy_destroy(e->policy);
        else
            dpdo__policy_release(e->policy);
    }
}

/* Install obj (not owned), or a new default (owned) when obj is NULL. */
static int plug_install(dpdo__eng *e, int k, void *obj)
{
    int own = obj == NULL, rc = DPDO_OK;
    if (k == PLUG_SOLVER) {
        dpdo_solver *s = obj;
        /* a private run's local steps must draw noise: the default is then "noisy-gd" */
        const char *def = e->o.noise_mode != DPDO_NOISE_NONE ? "noisy-gd" : "gd";
        if (!s)
            rc = dpdo_solver_create(&s, dpdo_solver_type_find(def), NULL, e->d);
        else
            dpdo__solver_retain(s);
        if (!rc) plug_drop(e, k), e->solver = s;
    } else if (k == PLUG_COMPRESSOR) {
        dpdo_compressor *c = obj;
        if (!c)
            rc = dpdo_compressor_create(&c, dpdo_compressor_type_find("identity"), NULL, e->d);
        else
            dpdo__compressor_retain(c);
        if (!rc) plug_drop(e, k), e->comp = c;
    } else {
        dpdo_policy *p = obj;
        if (!p)
            rc = dpdo_policy_create(&p, dpdo_policy_type_find("always-global"), NULL, e->n,
                                    e->d + 2);
        else
            dpdo__policy_retain(p);
        if (!rc) plug_drop(e, k), e->policy = p;
    }
    if (!rc) *plug_own(e, k) = own;
    return rc;
}

int dpdo__eng_plugin_defaults(dpdo__eng *e, char *err)
{
    static const char *const what[PLUG_COUNT] = {"default local solver", "default compressor",
                                                 "default policy"};
    for (int k = 0; k < PLUG_COUNT; k++) {
        if (!plug_used(e, k)) continue;
        int rc = plug_install(e, k, NULL);
        if (rc == DPDO_E_NOMEM) return rc;
        if (rc) return dpdo__err(err, rc, "setup: cannot create the %s", what[k]);
    }
    return DPDO_OK;
}

int dpdo__eng_plugin_derive(dpdo__eng *e)
{
    if (!e->solver || !e->own_solver) return DPDO_OK;
    double hi = NAN;
    if (dpdo_solver_get(e->solver, "lambda_hi", &hi)) return DPDO_OK;
    if (isnan(hi)) {
        double m = 0;
        for (int64_t i = 0; i < e->n; i++) {
            double s = NAN;
            if (dpdo_node_is_remote(e->nodes[i]))
                return DPDO_OK; /* processes would derive different values */
            if (dpdo_node_smoothness(e->nodes[i], INFINITY, &s) || !(s >= 0 && s < INFINITY))
                return DPDO_OK;
            m = s > m ? s : m;
        }
        if (!(m > 0)) return DPDO_OK;
        int rc = dpdo_solver_set(e->solver, "lambda_hi", m);
        if (rc)
            return dpdo__err(e->err, rc, "prepare: local solver: %s",
                             dpdo_solver_errmsg(e->solver));
        e->auto_lambda_hi = hi = m;
    }
    if (e->auto_lambda_hi > 0 && hi == e->auto_lambda_hi) {
        char buf[300];
        snprintf(buf, sizeof buf,
                 "local solver '%s': lambda_hi = %.4g derived from the data (the largest "
                 "per-sample smoothness "
                 "constant of the nodes' %s losses, e.g. max row norm^2/4 for logistic); set the "
                 "solver's "
                 "\"lambda_hi\" or \"step\" to override",
                 dpdo_solver_name(e->solver), hi, dpdo_loss_name(dpdo_node_loss(e->nodes[0])));
        dpdo__eng_note(e, buf);
    }
    return DPDO_OK;
}

void dpdo__eng_plugin_release(dpdo__eng *e)
{
    for (int k = 0; k < PLUG_COUNT; k++)
        plug_drop(e, k);
    e->own_solver = e->own_comp = e->own_policy = 0;
    e->solver = NULL;
    e->comp = NULL;
    e->policy = NULL;
}

/* The one setter: a handle, set up, of a type that uses the plug-in, at round 0, an object of
 * the right shape (dim_err: its message, or NULL); NULL obj = the engine's default again. */
static int set_plugin(dpdo_algorithm *a, int k, void *obj, const char *dim_err)
{
    const char *what = PLUG[k].setter;
    if (!a) return DPDO_E_INVAL;
    dpdo__eng *e = a->e;
    if (!e) return dpdo__err(a->errmsg, DPDO_E_STATE, "%s: the algorithm is EMPTY", what);
    if (!plug_used(e, k))
        return dpdo__err(a->errmsg, DPDO_E_UNSUPPORTED, "%s: %s %s", what, a->vt->name,
                         PLUG[k].lacks);
    if (a->state != DPDO_ALG_READY)
        return dpdo__err(a->errmsg, DPDO_E_STATE,
                         "%s: only at round 0 (READY); call dpdo_algorithm_reset", what);
    if (obj && dim_err) return dpdo__err(a->errmsg, DPDO_E_INVAL, "%s: %s", what, dim_err);
    if (!obj && *plug_own(e, k)) return DPDO_OK; /* the default is already in place */
    int rc = plug_install(e, k, obj);
    if (rc)
        return dpdo__err(a->errmsg, rc, "%s: cannot create the default %s", what,
                         k == PLUG_SOLVER ? "solver" : PLUG[k].noun);
    e->prepared = 0;
    if (k == PLUG_POLICY) e->vt->init(e, e->priv);
    return DPDO_OK;
}

static int algorithm_set_solver_body(dpdo_algorithm *a, dpdo_solver *solver)
{
    char m[160] = "";
    if (a && a->e && solver && dpdo_solver_dim(solver) != a->e->d)
        snprintf(m, sizeof m, "the solver's dimension %lld differs from %lld",
                 (long long)dpdo_solver_dim(solver), (long long)a->e->d);
    return set_plugin(a, PLUG_SOLVER, solver, m[0] ? m : NULL);
}

DPDO_API int dpdo_algorithm_set_solver(dpdo_algorithm *a, dpdo_solver *solver)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 1, "dpdo_algorithm_set_solver",
                  algorithm_set_solver_body(a, solver));
}

static int algorithm_set_compressor_body(dpdo_algorithm *a, dpdo_compressor *comp)
{
    char m[160] = "";
    if (a && a->e && comp && dpdo_compressor_dim(comp) != a->e->d)
        snprintf(m, sizeof m, "the compressor's dimension %lld differs from %lld",
                 (long long)dpdo_compressor_dim(comp), (long long)a->e->d);
    return set_plugin(a, PLUG_COMPRESSOR, comp, m[0] ? m : NULL);
}

DPDO_API int dpdo_algorithm_set_compressor(dpdo_algorithm *a, dpdo_compressor *comp)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 1, "dpdo_algorithm_set_compressor",
                  algorithm_set_compressor_body(a, comp));
}

static int algorithm_set_policy_body(dpdo_algorithm *a, dpdo_policy *policy)
{
    char m[200] = "";
    if (a && a->e && policy && (policy->n_nodes < a->e->n || policy->state_len != a->e->d + 2))
        snprintf(m, sizeof m,
                 "the policy was created for %lld nodes and states of %lld values; need >= %lld "
                 "nodes and d + 2 = "
                 "%lld",
                 (long long)policy->n_nodes, (long long)policy->state_len, (long long)a->e->n,
                 (long long)(a->e->d + 2));
    return set_plugin(a, PLUG_POLICY, policy, m[0] ? m : NULL);
}

DPDO_API int dpdo_algorithm_set_policy(dpdo_algorithm *a, dpdo_policy *policy)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 1, "dpdo_algorithm_set_policy",
                  algorithm_set_policy_body(a, policy));
}
