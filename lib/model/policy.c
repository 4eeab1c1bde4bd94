/* SPDX-License-Identifier: BSD-3-Clause */
/* Local/Global decision policies for DP-WOR-SGD (docs/policy.md): the type objects, the
 * handle (life cycle, parameters), the fixed built-ins (always-global, always-local, random,
 * periodic), user types and the checkpoint state hook. The deep-Q controller "dqn" is in
 * policy_dqn.c. */
#include "../rng/rng_impl.h"
#include "policy_impl.h"
#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- built-in type objects ----------------------------------------------- */

static int code_of(int rc)
{
    return rc == DPDO_OK ? 0 : (rc < 0 ? -rc : rc);
}

/* Built-ins are ordinary type objects whose `user` is the handle itself. */
static int builtin_decide(void *user, int64_t node, int64_t k, const double *state, int64_t len,
                          double reward, const dpdo_rng *rng, uint64_t round, int32_t *action)
{
    struct dpdo_policy *p = user;
    if (!p) return 1;
    return code_of(dpdo_policy_decide(p, node, k, state, len, reward, rng, round, action));
}

static int builtin_finish(void *user, int64_t node, double reward, const dpdo_rng *rng,
                          uint64_t round)
{
    struct dpdo_policy *p = user;
    if (!p) return 1;
    return code_of(dpdo_policy_finish(p, node, reward, rng, round));
}

static int builtin_reset(void *user)
{
    struct dpdo_policy *p = user;
    if (!p) return 1;
    dpdo__policy_reset(p, NULL);
    return 0;
}

#define BUILTIN(nm, st)                                                                            \
    {                                                                                              \
        sizeof(dpdo_policy_type), nm, builtin_decide, builtin_finish, builtin_reset, NULL, st      \
    }
static const dpdo_policy_type builtin_types[DPDO__POLICY_NBUILTIN] = {
    BUILTIN("dqn", dpdo__dqn_state), BUILTIN("always-global", NULL), BUILTIN("always-local", NULL),
    BUILTIN("random", NULL),         BUILTIN("periodic", NULL),
};
#undef BUILTIN

static int builtin_index(const dpdo_policy_type *t)
{
    return dpdo__table_index(builtin_types, sizeof builtin_types[0], DPDO__POLICY_NBUILTIN, t);
}

DPDO_API const dpdo_policy_type *dpdo_policy_type_find(const char *name)
{
    return dpdo__table_find(builtin_types, sizeof builtin_types[0], DPDO__POLICY_NBUILTIN, name);
}

DPDO_API const dpdo_policy_type *dpdo_policy_type_next(const dpdo_policy_type *prev)
{
    return dpdo__table_next(builtin_types, sizeof builtin_types[0], DPDO__POLICY_NBUILTIN, prev);
}

DPDO_API const char *dpdo_policy_type_name(const dpdo_policy_type *t)
{
    return t && t->name ? t->name : "(null)";
}

#define HAS(p, field)                                                                              \
    ((p)->tsize >= offsetof(dpdo_policy_type, field) + sizeof((p)->type->field) && (p)->type->field)

/* ---- life cycle ------------------------------------------------------------ */

static void set_defaults(struct dpdo_policy *p)
{
    p->p_global = 0.5;
    p->period = 2;
    p->hidden = 128;
    p->replay = 20;
    p->batch = 10;
    p->target_period = 10;
    p->lr = 0.01;
    p->discount = 0.99;
    p->explore_start = 1.0;
    p->explore_min = 0.1;
    p->explore_steps = 60.0;
    p->beta1 = 0.9;
    p->beta2 = 0.999;
    p->eps = 1e-8;
    p->finish_train = 1;
}

DPDO_API int dpdo_policy_create(dpdo_policy **out, const dpdo_policy_type *type, void *user,
                                int64_t n_nodes, int64_t state_len)
{
    if (!out) return DPDO_E_INVAL;
    *out = NULL;
    if (!type || n_nodes < 1 || (uint64_t)n_nodes >= DPDO__RNG_NODE_LIMIT || state_len < 0)
        return DPDO_E_INVAL;
    int kind = builtin_index(type);
    if (kind >= 0) {
        if (user) return DPDO_E_INVAL;
    } else {
        if (type->struct_size < offsetof(dpdo_policy_type, decide) + sizeof(type->decide))
            return DPDO_E_VERSION;
        if (!type->name || !type->name[0] || !type->decide) return DPDO_E_INVAL;
        if (type->decide == builtin_decide) return DPDO_E_INVAL; /* a copy of a built-in */
        kind = DPDO__POLICY_USER;
    }
    if (kind == DPDO__POLICY_DQN && state_len < 1) return DPDO_E_INVAL;
    struct dpdo_policy *p = dpdo__calloc(1, sizeof *p);
    if (!p) return DPDO_E_NOMEM;
    p->magic = DPDO__MAGIC_POLICY;
    p->type = type;
    p->kind = kind;
    p->user = kind == DPDO__POLICY_USER ? user : p;
    p->tsize = type->struct_size;
    p->n_nodes = n_nodes;
    p->state_len = state_len;
    set_defaults(p);
    if (kind == DPDO__POLICY_DQN) {
        if (dpdo__dqn_store_new(p, p->hidden, p->replay, p->batch) != DPDO_OK) {
            dpdo__free(p);
            return DPDO_E_NOMEM;
        }
    }
    *out = p;
    return DPDO_OK;
}

static void policy_free(dpdo_policy *p);

DPDO_API void dpdo_policy_destroy(dpdo_policy *p)
{
    if (!p || !DPDO__LIVE(p, DPDO__MAGIC_POLICY)) return; /* NULL or destroyed */
    DPDO__KILL(p);
    if (p->borrowers > 0) {
        p->doomed = 1; /* freed by the last borrowing algorithm */
        return;
    }
    policy_free(p);
}

void dpdo__policy_retain(struct dpdo_policy *p)
{
    p->borrowers++;
}

void dpdo__policy_release(struct dpdo_policy *p)
{
    if (p && --p->borrowers == 0 && p->doomed) policy_free(p);
}

static void policy_free(dpdo_policy *p)
{
    if (p->kind == DPDO__POLICY_USER && HAS(p, release)) p->type->release(p->user);
    dpdo__dqn_store_free(p);
    dpdo__free(p);
}

DPDO_API const char *dpdo_policy_errmsg(const dpdo_policy *p)
{
    return p ? p->errmsg : DPDO__NULL_TEXT("dpdo_policy_errmsg", "p");
}

DPDO_API const char *dpdo_policy_name(const dpdo_policy *p)
{
    return p ? p->type->name : "(null)";
}

/* ---- parameters ---------------------------------------------------------- */

enum { PK_DOUBLE, PK_INT, PK_STRUCT };
struct param_def {
    const char *name;
    int owner; /* DPDO__POLICY_* kind that has it */
    int form;  /* PK_* */
    size_t off;
};

#define PD(nm, own, form, field)                                                                   \
    {                                                                                              \
        nm, own, form, offsetof(struct dpdo_policy, field)                                         \
    }
static const struct param_def params[] = {
    PD("p_global", DPDO__POLICY_RANDOM, PK_DOUBLE, p_global),
    PD("period", DPDO__POLICY_PERIODIC, PK_INT, period),
    PD("hidden", DPDO__POLICY_DQN, PK_STRUCT, hidden),
    PD("replay", DPDO__POLICY_DQN, PK_STRUCT, replay),
    PD("batch", DPDO__POLICY_DQN, PK_STRUCT, batch),
    PD("lr", DPDO__POLICY_DQN, PK_DOUBLE, lr),
    PD("discount", DPDO__POLICY_DQN, PK_DOUBLE, discount),
    PD("target_period", DPDO__POLICY_DQN, PK_INT, target_period),
    PD("explore_start", DPDO__POLICY_DQN, PK_DOUBLE, explore_start),
    PD("explore_min", DPDO__POLICY_DQN, PK_DOUBLE, explore_min),
    PD("explore_steps", DPDO__POLICY_DQN, PK_DOUBLE, explore_steps),
    PD("adam_beta1", DPDO__POLICY_DQN, PK_DOUBLE, beta1),
    PD("adam_beta2", DPDO__POLICY_DQN, PK_DOUBLE, beta2),
    PD("adam_eps", DPDO__POLICY_DQN, PK_DOUBLE, eps),
    PD("finish_train", DPDO__POLICY_DQN, PK_INT, finish_train),
};
#undef PD
#define NPARAMS ((int)(sizeof params / sizeof params[0]))

static const struct param_def *param_find(const char *name)
{
    for (int i = 0; i < NPARAMS; i++)
        if (strcmp(params[i].name, name) == 0) return &params[i];
    return NULL;
}

static const char *kind_name(int kind)
{
    return kind >= 0 && kind < DPDO__POLICY_NBUILTIN ? builtin_types[kind].name : "user";
}

static int is_int_in(double v, double lo, double hi)
{
    return v >= lo && v <= hi && v == floor(v);
}

DPDO_API int dpdo_policy_set(dpdo_policy *p, const char *param, double value)
{
    if (!p) return DPDO_E_INVAL;
    if (!param) return dpdo__err(p->errmsg, DPDO_E_INVAL, "parameter name is NULL");
    const struct param_def *d = param_find(param);
    if (!d)
        return dpdo__err(p->errmsg, DPDO_E_INVAL,
                         "unknown parameter \"%s\" (p_global, period, hidden, replay, batch, lr, "
                         "discount, target_period, explore_start, explore_min, explore_steps, "
                         "adam_beta1, adam_beta2, adam_eps, finish_train)",
                         param);
    if (d->owner != p->kind)
        return dpdo__err(p->errmsg, DPDO_E_UNSUPPORTED,
                         "policy '%s' has no \"%s\" parameter (it belongs to '%s')", p->type->name,
                         param, kind_name(d->owner));
    const char *nm = d->name;
    int ok;
    const char *range;
    if (!strcmp(nm, "p_global") || !strcmp(nm, "discount") || !strcmp(nm, "explore_start") ||
        !strcmp(nm, "explore_min")) {
        ok = value >= 0.0 && value <= 1.0;
        range = "a number in [0, 1]";
    } else if (!strcmp(nm, "adam_beta1") || !strcmp(nm, "adam_beta2")) {
        ok = value >= 0.0 && value < 1.0;
        range = "a number in [0, 1)";
    } else if (!strcmp(nm, "lr") || !strcmp(nm, "explore_steps")) {
        ok = isfinite(value) && value >= 0.0;
        range = "finite and >= 0";
    } else if (!strcmp(nm, "adam_eps")) {
        ok = isfinite(value) && value > 0.0;
        range = "finite and > 0";
    } else if (!strcmp(nm, "period")) {
        ok = is_int_in(value, 1.0, 4611686018427387904.0);
        range = "an integer in [1, 2^62]";
    } else if (!strcmp(nm, "target_period")) {
        ok = is_int_in(value, 1.0, 4611686018427387904.0);
        range = "an integer in [1, 2^62]";
    } else if (!strcmp(nm, "finish_train")) {
        ok = value == 0.0 || value == 1.0;
        range = "0 or 1";
    } else if (!strcmp(nm, "batch")) {
        ok = is_int_in(value, 1.0, (double)p->replay);
        range = "an integer in [1, replay] (set \"replay\" first to raise it)";
    } else { /* hidden, replay */
        ok = is_int_in(value, 1.0, 1048576.0);
        range = "an integer in [1, 2^20]";
    }
    if (!ok) return dpdo__err(p->errmsg, DPDO_E_INVAL, "%s = %g must be %s", nm, value, range);
    if (!strcmp(nm, "replay") && value < (double)p->batch)
        return dpdo__err(p->errmsg, DPDO_E_INVAL,
                         "replay = %g must be >= batch = %lld (lower \"batch\" first)", value,
                         (long long)p->batch);
    char *field = (char *)p + d->off;
    if (d->form == PK_DOUBLE) {
        *(double *)(void *)field = value;
        return DPDO_OK;
    }
    if (!strcmp(nm, "finish_train")) {
        p->finish_train = (int32_t)value;
        return DPDO_OK;
    }
    int64_t iv = (int64_t)value;
    if (d->form == PK_INT) {
        *(int64_t *)(void *)field = iv;
        return DPDO_OK;
    }
    /* structural */
    if (*(int64_t *)(void *)field == iv) return DPDO_OK;
    int64_t H = p->hidden, R = p->replay, B = p->batch;
    if (!strcmp(nm, "hidden"))
        H = iv;
    else if (!strcmp(nm, "replay"))
        R = iv;
    else
        B = iv;
    if (dpdo__dqn_store_new(p, H, R, B) != DPDO_OK)
        return dpdo__err(p->errmsg, DPDO_E_NOMEM, "%s = %lld: out of memory", nm, (long long)iv);
    p->hidden = H;
    p->replay = R;
    p->batch = B;
    return DPDO_OK; /* the fresh store is zeroed: nothing learned, weights lazy */
}

DPDO_API int dpdo_policy_get(const dpdo_policy *p, const char *param, double *value)
{
    if (!p || !param || !value) return DPDO_E_INVAL;
    const struct param_def *d = param_find(param);
    if (!d) return DPDO_E_INVAL;
    if (d->owner != p->kind) return DPDO_E_UNSUPPORTED;
    const char *field = (const char *)p + d->off;
    if (!strcmp(d->name, "finish_train"))
        *value = (double)p->finish_train;
    else if (d->form == PK_DOUBLE)
        *value = *(const double *)(const void *)field;
    else
        *value = (double)*(const int64_t *)(const void *)field;
    return DPDO_OK;
}

/* ---- per-step entries -------------------------------------------------------- */

static int pending(struct dpdo_policy *p, char *err)
{
    if (!p->pending_cb) return DPDO_OK;
    int code = p->pending_cb;
    p->pending_cb = 0;
    return dpdo__err(err, DPDO_E_CALLBACK, "policy '%s': reset callback returned %d", p->type->name,
                     code);
}

static int check_node(const struct dpdo_policy *p, int64_t node, char *err)
{
    if (node < 0 || node >= p->n_nodes)
        return dpdo__err(err, DPDO_E_INVAL, "node %lld is outside [0, %lld)", (long long)node,
                         (long long)p->n_nodes);
    return DPDO_OK;
}

int dpdo__policy_decide(struct dpdo_policy *p, int64_t node, int64_t k, const double *state,
                        double reward, const struct dpdo_rng *rng, uint64_t round, int32_t *action,
                        char *err)
{
    int rc = check_node(p, node, err);
    if (rc) return rc;
    if (k < 0) return dpdo__err(err, DPDO_E_INVAL, "k = %lld must be >= 0", (long long)k);
    if (k > 0 && !isfinite(reward))
        return dpdo__err(err, DPDO_E_INVAL, "node %lld, k = %lld: reward %g is not finite",
                         (long long)node, (long long)k, reward);
    rc = pending(p, err);
    if (rc) return rc;
    switch (p->kind) {
    case DPDO__POLICY_ALWAYS_GLOBAL:
        *action = DPDO_ACTION_GLOBAL;
        return DPDO_OK;
    case DPDO__POLICY_ALWAYS_LOCAL:
        *action = DPDO_ACTION_LOCAL;
        return DPDO_OK;
    case DPDO__POLICY_PERIODIC:
        *action = k % p->period == p->period - 1 ? DPDO_ACTION_GLOBAL : DPDO_ACTION_LOCAL;
        return DPDO_OK;
    case DPDO__POLICY_RANDOM: {
        rc = dpdo__policy_need_rng(p, node, rng, round, err);
        if (rc) return rc;
        dpdo__stream st;
        dpdo__stream_open(&st, rng, (uint64_t)node, round, DPDO_PURPOSE_EXPLORATION);
        int32_t a =
            dpdo__stream_bernoulli(&st, p->p_global) ? DPDO_ACTION_GLOBAL : DPDO_ACTION_LOCAL;
        if (dpdo__policy_stream_failed(&st, p, err)) return DPDO_E_CALLBACK;
        *action = a;
        return DPDO_OK;
    }
    case DPDO__POLICY_DQN:
        rc = dpdo__policy_need_rng(p, node, rng, round, err);
        if (rc) return rc;
        return dpdo__dqn_decide(p, node, k, state, reward, rng, round, action, err);
    default: {
        int32_t a = -1;
        int cb = p->type->decide(p->user, node, k, state, p->state_len, reward, rng, round, &a);
        if (cb)
            return dpdo__err(err, DPDO_E_CALLBACK, "policy '%s': decide callback returned %d",
                             p->type->name, cb);
        if (a != DPDO_ACTION_LOCAL && a != DPDO_ACTION_GLOBAL)
            return dpdo__err(err, DPDO_E_CALLBACK,
                             "policy '%s': decide callback gave action %d (must be 0 = LOCAL "
                             "or 1 = GLOBAL)",
                             p->type->name, (int)a);
        *action = a;
        return DPDO_OK;
    }
    }
}

int dpdo__policy_reads_state(const struct dpdo_policy *p)
{
    return p->kind == DPDO__POLICY_DQN || p->kind == DPDO__POLICY_USER;
}

int dpdo__policy_finish(struct dpdo_policy *p, int64_t node, double reward,
                        const struct dpdo_rng *rng, uint64_t round, char *err)
{
    int rc = check_node(p, node, err);
    if (rc) return rc;
    if (!isfinite(reward))
        return dpdo__err(err, DPDO_E_INVAL, "node %lld: final reward %g is not finite",
                         (long long)node, reward);
    rc = pending(p, err);
    if (rc) return rc;
    if (p->kind == DPDO__POLICY_USER) {
        if (!HAS(p, finish)) return DPDO_OK;
        int cb = p->type->finish(p->user, node, reward, rng, round);
        if (cb)
            return dpdo__err(err, DPDO_E_CALLBACK, "policy '%s': finish callback returned %d",
                             p->type->name, cb);
        return DPDO_OK;
    }
    if (p->kind != DPDO__POLICY_DQN) return DPDO_OK;
    return dpdo__dqn_finish(p, node, reward, rng, round, err);
}

void dpdo__policy_reset(struct dpdo_policy *p, const struct dpdo_rng *rng)
{
    p->pending_cb = 0;
    if (p->kind == DPDO__POLICY_USER) {
        if (HAS(p, reset)) p->pending_cb = p->type->reset(p->user);
        return;
    }
    if (p->kind == DPDO__POLICY_DQN) dpdo__dqn_reset(p, rng);
}

/* ---- public per-step calls -------------------------------------------------- */

static int check_state(struct dpdo_policy *p, const double *state, int64_t len)
{
    if (len != p->state_len)
        return dpdo__err(p->errmsg, DPDO_E_INVAL, "len = %lld differs from state_len = %lld",
                         (long long)len, (long long)p->state_len);
    if (len > 0 && !state) return dpdo__err(p->errmsg, DPDO_E_INVAL, "state is NULL");
    size_t bad = len > 0 ? dpdo__first_nonfinite(state, (size_t)len) : 0;
    if (bad < (size_t)len)
        return dpdo__err(p->errmsg, DPDO_E_INVAL, "state[%zu] is %s", bad,
                         isnan(state[bad]) ? "NaN" : "Inf");
    return DPDO_OK;
}

DPDO_API int dpdo_policy_decide(dpdo_policy *p, int64_t node, int64_t k, const double *state,
                                int64_t len, double reward, const dpdo_rng *rng, uint64_t round,
                                int32_t *action)
{
    if (!p) return DPDO_E_INVAL;
    if (!action) return dpdo__err(p->errmsg, DPDO_E_INVAL, "action is NULL");
    int rc = check_state(p, state, len);
    if (rc) return rc;
    return dpdo__policy_decide(p, node, k, state, reward, rng, round, action, p->errmsg);
}

DPDO_API int dpdo_policy_finish(dpdo_policy *p, int64_t node, double reward, const dpdo_rng *rng,
                                uint64_t round)
{
    if (!p) return DPDO_E_INVAL;
    return dpdo__policy_finish(p, node, reward, rng, round, p->errmsg);
}

DPDO_API int dpdo_policy_reset(dpdo_policy *p, const dpdo_rng *rng)
{
    if (!p) return DPDO_E_INVAL;
    dpdo__policy_reset(p, rng);
    if (p->kind == DPDO__POLICY_DQN && rng) {
        for (int64_t i = 0; i < p->n_nodes; i++)
            if (!p->agents[i].init)
                return dpdo__err(p->errmsg, DPDO_E_CALLBACK,
                                 "policy 'dqn', node %lld: rng callback failed during "
                                 "initialisation",
                                 (long long)i);
    }
    return pending(p, p->errmsg);
}

DPDO_API int dpdo_policy_q_values(const dpdo_policy *p, int64_t node, const double *state,
                                  int64_t len, double *q)
{
    if (!p) return DPDO_E_INVAL;
    /* The message buffer is the handle's mutable scratch even through a
     * const handle (the handle itself is never const-allocated). */
    struct dpdo_policy *mp = (struct dpdo_policy *)(uintptr_t)p;
    if (!q) return dpdo__err(mp->errmsg, DPDO_E_INVAL, "q is NULL");
    if (p->kind != DPDO__POLICY_DQN)
        return dpdo__err(mp->errmsg, DPDO_E_UNSUPPORTED, "policy '%s' has no Q-values",
                         p->type->name);
    int rc = check_node(p, node, mp->errmsg);
    if (rc) return rc;
    rc = check_state(mp, state, len);
    if (rc) return rc;
    const struct dpdo__dqn_agent *ag = &p->agents[node];
    if (!ag->init)
        return dpdo__err(mp->errmsg, DPDO_E_STATE,
                         "policy 'dqn', node %lld: weights not initialised (reset with an rng "
                         "or decide first)",
                         (long long)node);
    double qq[2];
    dpdo__dqn_forward(p, ag->theta, state, p->hbuf, qq);
    q[0] = qq[0];
    q[1] = qq[1];
    return DPDO_OK;
}

/* ---- checkpoint state ----------------------------------------------------------- */

int dpdo__policy_can_save(const struct dpdo_policy *p)
{
    return p->kind != DPDO__POLICY_USER || HAS(p, state);
}

int dpdo__policy_describe(struct dpdo_policy *p, const dpdo_state_io *io, char *err)
{
    if (!HAS(p, state)) return DPDO_OK;
    int cb = p->type->state(p->user, io);
    if (cb)
        return dpdo__err(err, DPDO_E_CALLBACK, "policy '%s': state callback returned %d",
                         p->type->name, cb);
    return DPDO_OK;
}
