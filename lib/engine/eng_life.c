/* SPDX-License-Identifier: BSD-3-Clause */
/* The life cycle of an algorithm handle: create, setup, prepare, reset, destroy, and the
 * handle's simple getters. */
#include "../model/model_impl.h"
#include "dist_impl.h"
#include "eng_handle.h"
#include "par_impl.h"
#include <math.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

static void eng_free(dpdo__eng *e)
{
    if (!e) return;
    dpdo__par_free(e);
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
    dpdo__free(e->q);
    dpdo__free(e->plan.comp);
    dpdo__free(e->plan.is_comp);
    dpdo__free(e->plan.charge);
    dpdo__free(e->plan.cmark);
    dpdo__free(e->pv.released);
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
    dpdo__eng_plugin_release(e);
    if (e->net) dpdo__network_release(e->net);
    if (e->retained) { /* after every use of them above; frees a node/reg/acc destroyed while
                          borrowed */
        for (int64_t i = 0; i < e->n; i++)
            dpdo__node_release(e->nodes[i]);
        dpdo__reg_release(e->reg);
        dpdo__accountant_release(e->acc);
    }
    dpdo__free(e->nodes);
    dpdo__free(e);
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return x < y ? -1 : x > y;
}

static int alloc_eng(dpdo__eng *e)
{
    size_t n = (size_t)e->n, d = (size_t)e->d;
    e->q = dpdo__alloc_array(n, sizeof *e->q);
    e->plan.comp = dpdo__alloc_array(n, sizeof *e->plan.comp);
    e->plan.is_comp = dpdo__calloc(n, 1);
    e->plan.charge = dpdo__alloc_array(2 * n, sizeof *e->plan.charge);
    e->plan.cmark = dpdo__calloc(n, 1);
    e->pv.released = dpdo__calloc(n, sizeof *e->pv.released);
    e->comm = dpdo__calloc(n + 1, sizeof *e->comm);
    e->rcomm = dpdo__calloc(n + 1, sizeof *e->rcomm);
    e->last_active = dpdo__calloc(n, 1);
    e->tmp_a = dpdo__alloc_array(d, sizeof(double));
    e->tmp_b = dpdo__alloc_array(d, sizeof(double));
    e->tol_prev =
        dpdo__calloc(d, sizeof(double)); /* zero: checkpoints copy it before the first test */
    e->pv.node_ev = dpdo__calloc(n, sizeof *e->pv.node_ev);
    e->pv.allow = dpdo__alloc_array(n, sizeof *e->pv.allow);
    e->pv.used = dpdo__calloc(n, sizeof *e->pv.used);
    e->pv.planned = dpdo__calloc(n, sizeof *e->pv.planned);
    e->pv.ev = dpdo__calloc(n, sizeof *e->pv.ev);
    e->mask_list = dpdo__calloc(n, sizeof *e->mask_list);
    if (!e->mask_list || !e->pv.ev || !e->q || !e->plan.comp || !e->plan.is_comp ||
        !e->plan.charge || !e->plan.cmark || !e->pv.released || !e->comm || !e->rcomm ||
        !e->last_active || !e->tmp_a || !e->tmp_b || !e->tol_prev || !e->pv.node_ev ||
        !e->pv.allow || !e->pv.used || !e->pv.planned)
        return DPDO_E_NOMEM;
    for (size_t i = 0; i < n; i++)
        e->pv.allow[i] = INT64_MAX;
    return DPDO_OK;
}

int dpdo__algorithm_create_vt(dpdo_algorithm **out, const dpdo__alg_vt *vt)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (!vt) return DPDO_E_INVAL;
    if (!dpdo__param_fits(vt)) return DPDO_E_UNSUPPORTED; /* a table longer than the slots */
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
    /* a destroy while a call runs on the handle (another thread, or its callback) is refused:
     * the handle stays alive (leaks if never destroyed again) instead of being freed under it */
    if (dpdo__busy_enter(&a->busy, 1, a->errmsg, "dpdo_algorithm_destroy") != 1) return;
    DPDO__KILL(a);
    eng_free(a->e);
    dpdo__free(a);
}

DPDO_API const char *dpdo_algorithm_errmsg(const dpdo_algorithm *a)
{
    return !a                                     ? DPDO__NULL_TEXT("dpdo_algorithm_errmsg", "alg")
           : DPDO__LIVE(a, DPDO__MAGIC_ALGORITHM) ? a->errmsg
                                                  : DPDO__DEAD_TEXT("dpdo_algorithm_errmsg", "alg");
}
DPDO_API const char *dpdo_algorithm_name(const dpdo_algorithm *a)
{
    return a ? a->vt->name : "(null)";
}
DPDO_API int dpdo_algorithm_state(const dpdo_algorithm *a)
{
    return a ? a->state : -1;
}
DPDO_API int64_t dpdo_algorithm_nodes(const dpdo_algorithm *a)
{
    return a && a->e ? a->e->n : 0;
}
DPDO_API int64_t dpdo_algorithm_dim(const dpdo_algorithm *a)
{
    return a && a->e ? a->e->d : 0;
}
DPDO_API int64_t dpdo_algorithm_round(const dpdo_algorithm *a)
{
    return a && a->e ? (int64_t)a->e->round : 0;
}
DPDO_API int dpdo_algorithm_stop_reason(const dpdo_algorithm *a)
{
    return a ? a->stop : -1;
}

dpdo__eng *dpdo__algorithm_eng(dpdo_algorithm *a)
{
    return a ? a->e : NULL;
}

static int algorithm_setup_body(dpdo_algorithm *a, dpdo_node *const *nodes, int64_t n_nodes_in,
                                dpdo_network *net, dpdo_regularizer *reg, dpdo_accountant *acc,
                                const dpdo_algorithm_options *opts)
{
    if (!a) return DPDO_E_INVAL;
    if (a->state == DPDO_ALG_RUNNING)
        return dpdo__err(a->errmsg, DPDO_E_STATE,
                         "setup: the algorithm is running; call dpdo_algorithm_reset first");
    if (n_nodes_in < 1 || n_nodes_in >= ((int64_t)1 << 31))
        return dpdo__err(a->errmsg, DPDO_E_INVAL, "setup: n_nodes = %lld: must be in [1, 2^31)",
                         (long long)n_nodes_in);
    int32_t n_nodes = (int32_t)n_nodes_in;
    dpdo_algorithm_options o;
    int rc;
    dpdo_algorithm_options_init(&o, sizeof o);
    if ((rc = dpdo__options_accept(&o, sizeof o, offsetof(dpdo_algorithm_options, reserved), opts,
                                   "dpdo_algorithm_options", a->errmsg)))
        return rc;
    char err[DPDO__ERRMSG_LEN] = "";
    if ((rc = dpdo__eng_check_options(&o, err)) ||
        (rc = dpdo__eng_check_problem(a->vt, nodes, n_nodes, net, reg, acc, &o, err))) {
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
        for (int32_t i = 1; i < n_nodes; i++)
            dup |= tmp[i] == tmp[i - 1];
        dpdo__free(tmp);
        if (dup)
            return dpdo__err(a->errmsg, DPDO_E_INVAL, "setup: a node appears twice in nodes[]");
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
    for (int64_t i = 1; i < e->n; i++)
        e->qmin = e->q[i] < e->qmin ? e->q[i] : e->qmin;
    if (e->vt->priv_size && !(e->priv = dpdo__calloc(1, e->vt->priv_size))) goto nomem;
    if ((rc = dpdo_rng_create(&e->rng, dpdo_rng_type_find("philox4x32-10"), NULL, o.seed))) {
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
    if ((rc = dpdo__eng_plugin_defaults(e, err))) {
        if (rc == DPDO_E_NOMEM) goto nomem;
        goto fail;
    }
    dpdo__eng_opts_to_params(e);
    if (e->vt->defaults) e->vt->defaults(e);
    /* threads: the width is known before configure (algorithms size per-task workspaces) */
    if ((rc = dpdo__par_create(e, a->pool_run, a->pool_host, a->pool_width, err))) {
        if (rc == DPDO_E_NOMEM) goto nomem;
        goto fail;
    }
    if ((rc = e->vt->configure(e, e->priv))) {
        if (rc == DPDO_E_NOMEM) goto nomem;
        goto fail;
    }
    if ((rc = dpdo__eng_alloc_arena(e))) goto nomem;
    e->vt->init(e, e->priv);
    /* success: borrow the problem's handles, replace the previous setup */
    for (int64_t i = 0; i < e->n; i++)
        dpdo__node_retain(e->nodes[i]);
    if (reg) dpdo__reg_retain(reg);
    if (acc) dpdo__accountant_retain(acc);
    e->retained = 1;
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

/* delta against the data: releasing each record in the clear with probability delta is
 * (0, delta)-DP, so a delta >= 1/n (n records over all nodes) promises nothing about a record
 * (docs/privacy.md, "Choosing delta"). A note, not an error: the paper modes reproduce papers
 * whose delta is that large. */
static void eng_note_delta(dpdo__eng *e)
{
    int64_t n = 0;
    for (int64_t i = 0; i < e->n; i++)
        n += dpdo_node_samples(e->nodes[i]);
    if (n < 1 || !(e->o.delta * (double)n >= 1.0)) return;
    char buf[400];
    snprintf(buf, sizeof buf,
             "delta = %g >= 1/n = %.3g (n = %lld records over the nodes): releasing every record "
             "in the clear with probability delta meets such a guarantee; choose delta < 1/(10 n) "
             "= %.3g (docs/privacy.md, \"Choosing delta\")",
             e->o.delta, 1.0 / (double)n, (long long)n, 0.1 / (double)n);
    dpdo__eng_note(e, buf);
}

/* Clipping at the start point x = 0, over every row of the nodes hosted here: when most
 * per-sample gradients exceed CLIP_NOTE_FACTOR times the clip norm (options.clip, NaN =
 * lipschitz), they lose most of their length, each release carries little more than the
 * direction of their clipped mean, and the usual cause is unscaled features (docs/python.md,
 * "Diagnostics"). A clip near the typical gradient norm (even below the median, as adaptive
 * clipping chooses it) is not flagged. A note above one half; failures of the evaluation (e.g. a
 * user loss) only skip the note. No randomness is used: results unchanged. */
#define CLIP_NOTE_FACTOR 4.0
static void eng_note_clipping(dpdo__eng *e)
{
    double clip = DPDO__PD(e, DPDO_PARAM_CLIP);
    if (isnan(clip)) clip = e->o.lipschitz;
    if (!(clip > 0 && clip < INFINITY) || e->d < 1) return;
    double *x = dpdo__calloc(2 * (size_t)e->d, sizeof *x);
    if (!x) return;
    int64_t rows = 0, cut = 0;
    char err[DPDO__ERRMSG_LEN];
    for (int64_t i = 0; i < e->n; i++) {
        dpdo_node *nd = e->nodes[i];
        int64_t ncl = 0;
        if (!dpdo__eng_hosted(e, i) || !nd->shard || nd->loss->kind == DPDO_LOSS_KIND_MODEL)
            continue;
        if (dpdo__loss_eval_node(nd, x, NULL, 0, CLIP_NOTE_FACTOR * clip, NULL, x + e->d, &ncl,
                                 err) != DPDO_OK)
            continue;
        rows += dpdo_node_samples(nd);
        cut += ncl;
    }
    dpdo__free(x);
    if (rows < 1 || 2 * cut <= rows) return;
    char buf[400];
    snprintf(buf, sizeof buf,
             "clipping dominates: %.1f%% of the per-sample gradients at x = 0 exceed %g times "
             "the clip norm %g, so the releases carry little of the data beyond a clipped mean; "
             "scale the features (e.g. rows of norm <= 1) or raise clip/lipschitz (docs/python.md, "
             "\"Diagnostics\")",
             100.0 * (double)cut / (double)rows, CLIP_NOTE_FACTOR, clip);
    dpdo__eng_note(e, buf);
}

DPDO_API int dpdo_algorithm_setup(dpdo_algorithm *a, dpdo_node *const *nodes, int64_t n_nodes_in,
                                  dpdo_network *net, dpdo_regularizer *reg, dpdo_accountant *acc,
                                  const dpdo_algorithm_options *opts)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 1, "dpdo_algorithm_setup",
                  algorithm_setup_body(a, nodes, n_nodes_in, net, reg, acc, opts));
}

int dpdo__eng_prepare(dpdo_algorithm *a)
{
    dpdo__eng *e = a->e;
    char err[DPDO__ERRMSG_LEN] = "";
    e->err = err;
    e->plan.t = 0;
    int rc;
    /* secure rigorous runs: when the guard (which reads the events as charged) lets fewer releases
     * through than sigma was planned for, calibrate again from a slightly larger sigma
     * (eng_privacy.c, fit_charged); a few attempts at most, each a factor ~16 further */
    e->pv.calib_boost = 0;
retry:
    e->pv.notes[0] = 0;
    memset(e->pv.planned, 0, (size_t)e->n * sizeof *e->pv.planned);
    rc = dpdo__eng_plugin_derive(e);
    if (!rc) rc = e->vt->prepare(e, e->priv);
    if (!rc) dpdo__eng_secure_events(e);
    /* every event a private run can charge: positive finite sensitivity and noise; every node
     * mapped */
    for (int32_t k = 0; !rc && e->pv.private_run && k < e->pv.nev; k++)
        rc = DPDO__ENG_ASSERT(e, -1,
                              e->pv.ev[k].sens > 0 && e->pv.ev[k].sens < INFINITY &&
                                  e->pv.ev[k].noise > 0 && e->pv.ev[k].noise < INFINITY);
    for (int64_t i = 0; !rc && e->pv.private_run && e->pv.nev > 0 && i < e->n; i++)
        rc = DPDO__ENG_ASSERT(e, i, e->pv.node_ev[i] >= 0 && e->pv.node_ev[i] < e->pv.nev);
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
    if (!rc) rc = dpdo__eng_compute_guard(e);
    if (!rc && e->o.randomness == DPDO_RANDOMNESS_SECURE && e->pv.calib_boost < 4 &&
        dpdo__eng_guard_short(e)) {
        e->pv.calib_boost++;
        goto retry;
    }
    if (!rc) rc = dpdo__eng_draw_keys(e, err);
    if (!rc) rc = dpdo__par_prepare(e, err); /* how many threads the rounds use; starts them */
    if (!rc && e->pv.private_run && e->o.randomness == DPDO_RANDOMNESS_REPRODUCIBLE) {
        int64_t open_nodes = 0;
        for (int64_t i = 0; i < e->n; i++)
            open_nodes +=
                dpdo__eng_hosted(e, i) && !(e->key_src && e->key_src[i] != DPDO__KEY_NONE);
        if (open_nodes > 0)
            dpdo__eng_note(e,
                           "reproducible mode: nodes hosted here have no secret key, so their "
                           "private streams are "
                           "keyed by options.seed (Philox) and epsilon holds only against parties "
                           "who do not know "
                           "the seed; continuous double-precision noise, not floating-point safe");
        else
            dpdo__eng_note(
                e, "reproducible mode: private streams keyed by the host's node keys; continuous "
                   "double-precision noise, not floating-point safe");
    }
    if (!rc && e->pv.private_run) {
        eng_note_delta(e);
        eng_note_clipping(e);
    }
    if (!rc && e->ledger && e->pv.private_run && e->o.noise_mode == DPDO_NOISE_RIGOROUS) {
        int64_t held = 0;
        for (int64_t i = 0; i < e->n; i++)
            held += dpdo_ledger_charges(e->ledger, i);
        if (held > 0)
            dpdo__eng_note(e, "sigma calibrated on top of the charges already in the ledger (a "
                              "shared budget: later "
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

static int algorithm_prepare_body(dpdo_algorithm *a)
{
    if (!a) return DPDO_E_INVAL;
    if (a->state != DPDO_ALG_READY)
        return dpdo__err(a->errmsg, DPDO_E_STATE, "prepare: the algorithm is not READY (state %d)",
                         a->state);
    if (a->e->prepared) return DPDO_OK;
    return dpdo__eng_prepare(a);
}

DPDO_API int dpdo_algorithm_prepare(dpdo_algorithm *a)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 1, "dpdo_algorithm_prepare", algorithm_prepare_body(a));
}

static int algorithm_reset_body(dpdo_algorithm *a)
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
                if (dpdo__ledger_count(e->ledger, &e->pv.ev[k], i) <
                    e->pv.charged[(size_t)k * (size_t)e->n + (size_t)i])
                    lost = 1;
        for (int32_t k = e->pv.nev - 1; k >= 0;
             k--) /* last event first: trailing rows drop cleanly */
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
    int krc =
        e->prepared ? dpdo__eng_draw_keys(e, a->errmsg) : DPDO_OK; /* secure: a new run, new keys */
    e->vt->init(e, e->priv);
    a->state = DPDO_ALG_READY;
    a->stop = DPDO_STOP_NONE;
    if (krc) return krc;
    dpdo__err_clear(a->errmsg);
    if (lost)
        return dpdo__err(
            a->errmsg, DPDO_E_STATE,
            "reset: done, but the ledger no longer held all of this run's charges (was it reset or "
            "reloaded?); what it held was removed");
    return DPDO_OK;
}

DPDO_API int dpdo_algorithm_reset(dpdo_algorithm *a)
{
    DPDO__GUARDED(a, DPDO__MAGIC_ALGORITHM, 1, "dpdo_algorithm_reset", algorithm_reset_body(a));
}
