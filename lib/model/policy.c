/* SPDX-License-Identifier: BSD-3-Clause */
/* Local/Global decision policies for DP-WOR-SGD (spec dp-wor-sgd.md §2.5)
 * and the deep-Q controller of Alg. 2 (spec §3): per node an online and a
 * target network (S -> H -> 2, identity activations), a FIFO replay memory,
 * the squared TD loss with a hand-written backprop (§3.4), bias-corrected
 * Adam, target sync every C training steps and linearly annealed
 * epsilon-greedy exploration (§3.5). Everything is allocated at create (and
 * at a structural set); decisions allocate nothing.
 *
 * The batched products (hidden layer of the mini-batch and of its next
 * states, and dW1 = dH^T X) are BLIS dgemm calls, the single-state forward
 * pass a dgemv: at B = 10, H = 128, S = 52 the mini-batch loss + backprop
 * takes ~20-30 us against 130-230 us for plain loops, which GCC does not
 * vectorise at -O2 (measured, docs/policy.md). Same machine and BLIS build -> same bits;
 * across CPUs the last bits may differ (BLIS picks its kernel at run time). */
#include "../rng/rng_impl.h"
#include "policy_impl.h"
#include <blis.h>
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

#define BUILTIN(nm)                                                                                \
    {                                                                                              \
        sizeof(dpdo_policy_type), nm, builtin_decide, builtin_finish, builtin_reset, NULL          \
    }
static const dpdo_policy_type builtin_types[DPDO__POLICY_NBUILTIN] = {
    BUILTIN("dqn"),    BUILTIN("always-global"), BUILTIN("always-local"),
    BUILTIN("random"), BUILTIN("periodic"),
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

/* ---- DQN storage ----------------------------------------------------------- */

/* Everything that depends on (H, R, B): swapped as a unit by a structural set. */
struct dqn_store {
    int64_t nparam;
    struct dpdo__dqn_agent *agents;
    double *arena, *grad, *hbuf, *ybuf, *xbuf, *qbuf;
    int32_t *abuf;
    int64_t *ibuf;
};

static void store_free(struct dqn_store *s)
{
    dpdo__free(s->ibuf);
    dpdo__free(s->xbuf);
    dpdo__free(s->qbuf);
    dpdo__free(s->abuf);
    dpdo__free(s->ybuf);
    dpdo__free(s->hbuf);
    dpdo__free(s->grad);
    dpdo__free(s->arena);
    dpdo__free(s->agents);
    memset(s, 0, sizeof *s);
}

/* Doubles per agent: 4P (theta, target, m, v) + R(2S+3) + S. 0 on overflow. */
static size_t agent_doubles(int64_t S, int64_t H, int64_t R, int64_t *nparam)
{
    size_t hs, p, e, mem, tot;
    if (!dpdo__mul_size((size_t)H, (size_t)S, &hs)) return 0;
    p = hs + 3 * (size_t)H + 2; /* H S + H + 2 H + 2 */
    if (p < hs) return 0;
    if (!dpdo__mul_size(p, 4, &tot)) return 0;
    if (!dpdo__mul_size((size_t)S, 2, &e)) return 0;
    e += 3;
    if (!dpdo__mul_size(e, (size_t)R, &mem)) return 0;
    if (tot + mem < tot) return 0;
    tot += mem;
    if (tot + (size_t)S < tot) return 0;
    tot += (size_t)S;
    *nparam = (int64_t)p;
    return tot;
}

static int store_alloc(struct dqn_store *s, int64_t n, int64_t S, int64_t H, int64_t R, int64_t B)
{
    memset(s, 0, sizeof *s);
    int64_t P = 0;
    size_t per = agent_doubles(S, H, R, &P), tot, hb, xb;
    if (!per || !dpdo__mul_size(per, (size_t)n, &tot) ||
        !dpdo__mul_size((size_t)B, (size_t)H, &hb) ||
        !dpdo__mul_size((size_t)B, 2 * (size_t)S, &xb))
        return DPDO_E_NOMEM;
    s->nparam = P;
    s->agents = dpdo__calloc((size_t)n, sizeof *s->agents);
    s->arena = dpdo__calloc(tot, sizeof(double));
    s->grad = dpdo__alloc_array((size_t)P, sizeof(double));
    s->hbuf = dpdo__alloc_array(hb, sizeof(double));
    s->ybuf = dpdo__alloc_array((size_t)B, sizeof(double));
    s->abuf = dpdo__alloc_array((size_t)B, sizeof(int32_t));
    s->xbuf = dpdo__alloc_array(xb, sizeof(double));
    s->qbuf = dpdo__alloc_array(2 * (size_t)B, sizeof(double));
    s->ibuf = dpdo__alloc_array((size_t)B, sizeof(int64_t));
    if (!s->agents || !s->arena || !s->grad || !s->hbuf || !s->ybuf || !s->abuf || !s->xbuf ||
        !s->qbuf || !s->ibuf) {
        store_free(s);
        return DPDO_E_NOMEM;
    }
    double *a = s->arena;
    for (int64_t i = 0; i < n; i++) {
        struct dpdo__dqn_agent *ag = &s->agents[i];
        ag->theta = a;
        ag->target = a + P;
        ag->m = a + 2 * P;
        ag->v = a + 3 * P;
        ag->mem = a + 4 * P;
        ag->prev_s = ag->mem + R * (2 * S + 3);
        a += per;
    }
    return DPDO_OK;
}

static void store_get(const struct dpdo_policy *p, struct dqn_store *s)
{
    s->nparam = p->nparam;
    s->agents = p->agents;
    s->arena = p->arena;
    s->grad = p->grad;
    s->hbuf = p->hbuf;
    s->ybuf = p->ybuf;
    s->abuf = p->abuf;
    s->xbuf = p->xbuf;
    s->qbuf = p->qbuf;
    s->ibuf = p->ibuf;
}

static void store_put(struct dpdo_policy *p, const struct dqn_store *s)
{
    p->nparam = s->nparam;
    p->agents = s->agents;
    p->arena = s->arena;
    p->grad = s->grad;
    p->hbuf = s->hbuf;
    p->ybuf = s->ybuf;
    p->abuf = s->abuf;
    p->xbuf = s->xbuf;
    p->qbuf = s->qbuf;
    p->ibuf = s->ibuf;
}

/* Xavier (Glorot) uniform, the TF1 xavier_initializer default (spec §3.2):
 * W1 entries (storage order: column-major H x S, i.e. input by input) then
 * W2 entries (row-major 2 x H), each
 * r (2u - 1) with u the next uniform of stream (node, 0, INIT) and
 * r = sqrt(6 / (fan_in + fan_out)); biases 0; target = online. */
static void agent_init(const struct dpdo_policy *p, struct dpdo__dqn_agent *ag, int64_t node,
                       const struct dpdo_rng *rng)
{
    const int64_t S = p->state_len, H = p->hidden, P = p->nparam;
    double *th = ag->theta;
    double *W1 = th, *b1 = th + H * S, *W2 = b1 + H, *b2 = W2 + 2 * H;
    dpdo__stream st;
    dpdo__stream_open(&st, rng, (uint64_t)node, 0, DPDO_PURPOSE_INIT);
    dpdo__stream_uniforms(&st, W1, (size_t)(H * S));
    dpdo__stream_uniforms(&st, W2, (size_t)(2 * H));
    const double r1 = sqrt(6.0 / (double)(S + H)), r2 = sqrt(6.0 / (double)(H + 2));
    for (int64_t i = 0; i < H * S; i++)
        W1[i] = r1 * (2.0 * W1[i] - 1.0);
    for (int64_t i = 0; i < 2 * H; i++)
        W2[i] = r2 * (2.0 * W2[i] - 1.0);
    memset(b1, 0, (size_t)H * sizeof *b1);
    b2[0] = b2[1] = 0.0;
    memcpy(ag->target, th, (size_t)P * sizeof *th);
    /* A failing custom rng leaves garbage-free but meaningless weights; the
     * caller checks the stream status. */
    ag->init = dpdo__stream_status(&st) == DPDO_OK;
}

/* Back to the state of a fresh create: everything zero, not initialised. */
static void agent_clear(const struct dpdo_policy *p, struct dpdo__dqn_agent *ag)
{
    const int64_t S = p->state_len, R = p->replay, P = p->nparam;
    size_t per = (size_t)(4 * P + R * (2 * S + 3) + S);
    memset(ag->theta, 0, per * sizeof(double));
    double *th = ag->theta;
    memset(ag, 0, sizeof *ag);
    ag->theta = th;
    ag->target = th + P;
    ag->m = th + 2 * P;
    ag->v = th + 3 * P;
    ag->mem = th + 4 * P;
    ag->prev_s = ag->mem + R * (2 * S + 3);
}

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
        struct dqn_store s;
        if (store_alloc(&s, n_nodes, state_len, p->hidden, p->replay, p->batch) != DPDO_OK) {
            dpdo__free(p);
            return DPDO_E_NOMEM;
        }
        store_put(p, &s);
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
    struct dqn_store s;
    store_get(p, &s);
    store_free(&s);
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
    struct dqn_store s, old;
    if (store_alloc(&s, p->n_nodes, p->state_len, H, R, B) != DPDO_OK)
        return dpdo__err(p->errmsg, DPDO_E_NOMEM, "%s = %lld: out of memory", nm, (long long)iv);
    store_get(p, &old);
    store_free(&old);
    store_put(p, &s);
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

/* ---- the network ------------------------------------------------------------ */

/* W1 is stored as the row-major S x H matrix W1^T (entry (i, c) of W1 at
 * c H + i), so the batched products below are plain row-major BLIS calls.
 * Sizes are >= 1 and validated at create/set, as BLIS aborts on bad ones. */
void dpdo__dqn_forward(const struct dpdo_policy *p, const double *theta, const double *s, double *h,
                       double *q)
{
    const int64_t S = p->state_len, H = p->hidden;
    const double *W1 = theta, *b1 = theta + H * S, *W2 = b1 + H, *b2 = W2 + 2 * H;
    double one = 1.0;
    memcpy(h, b1, (size_t)H * sizeof *h);
    /* h = b1 + (W1^T)^T s */
    bli_dgemv(BLIS_TRANSPOSE, BLIS_NO_CONJUGATE, (dim_t)S, (dim_t)H, &one, (double *)W1, (inc_t)H,
              1, (double *)s, 1, &one, h, 1);
    double q0 = 0.0, q1 = 0.0;
    for (int64_t i = 0; i < H; i++) {
        q0 += W2[i] * h[i];
        q1 += W2[H + i] * h[i];
    }
    q[0] = q0 + b2[0];
    q[1] = q1 + b2[1];
}

/* Hb[B x H] = 1 b1^T + X W1^T (one dgemm), Q[B x 2] = Hb W2^T + 1 b2^T. */
static void forward_batch(const struct dpdo_policy *p, const double *theta, int64_t B,
                          const double *X, double *Hb, double *Q)
{
    const int64_t S = p->state_len, H = p->hidden;
    const double *W1 = theta, *b1 = theta + H * S, *W2 = b1 + H, *b2 = W2 + 2 * H;
    double one = 1.0;
    for (int64_t j = 0; j < B; j++)
        memcpy(Hb + j * H, b1, (size_t)H * sizeof *Hb);
    bli_dgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, (dim_t)B, (dim_t)H, (dim_t)S, &one, (double *)X,
              (inc_t)S, 1, (double *)W1, (inc_t)H, 1, &one, Hb, (inc_t)H, 1);
    for (int64_t j = 0; j < B; j++) {
        const double *h = Hb + j * H;
        double q0 = 0.0, q1 = 0.0;
        for (int64_t i = 0; i < H; i++) {
            q0 += W2[i] * h[i];
            q1 += W2[H + i] * h[i];
        }
        Q[2 * j] = q0 + b2[0];
        Q[2 * j + 1] = q1 + b2[1];
    }
}

/* Spec §3.4 item 3: l = (1/B) sum_j (y_j - Q_j[a_j])^2;
 * dq_j[a_j] = -2 (y_j - Q_j[a_j]) / B (the other output gets no gradient);
 * dW2 += dq h^T, db2 += dq, dh = W2^T dq, dW1 += dh s^T, db1 += dh.
 * X[B x S] holds the states row by row; hbuf[B x H] and q[2 B] are scratch.
 * dW1^T = X^T dH is one dgemm over the batch. */
double dpdo__dqn_loss_grad(const struct dpdo_policy *p, const double *theta, int64_t B,
                           const double *X, const int32_t *a, const double *y, double *grad,
                           double *hbuf, double *q)
{
    const int64_t S = p->state_len, H = p->hidden, P = p->nparam;
    const double *W2 = theta + H * S + H;
    double *gW1 = grad, *gb1 = grad + H * S, *gW2 = gb1 + H, *gb2 = gW2 + 2 * H;
    forward_batch(p, theta, B, X, hbuf, q);
    memset(gb1, 0, (size_t)(P - H * S) * sizeof *grad);
    double loss = 0.0;
    for (int64_t j = 0; j < B; j++) {
        double *h = hbuf + j * H; /* the hidden layer, then (once dW2 has it) dh */
        const int32_t aj = a[j];
        const double diff = y[j] - q[2 * j + aj];
        loss += diff * diff;
        const double dq = -2.0 * diff / (double)B;
        double *gw2 = gW2 + aj * H;
        const double *w2 = W2 + aj * H;
        for (int64_t i = 0; i < H; i++)
            gw2[i] += dq * h[i];
        gb2[aj] += dq;
        for (int64_t i = 0; i < H; i++) {
            h[i] = w2[i] * dq;
            gb1[i] += h[i];
        }
    }
    double one = 1.0, zero = 0.0;
    bli_dgemm(BLIS_TRANSPOSE, BLIS_NO_TRANSPOSE, (dim_t)S, (dim_t)H, (dim_t)B, &one, (double *)X,
              (inc_t)S, 1, hbuf, (inc_t)H, 1, &zero, gW1, (inc_t)H, 1);
    return loss / (double)B;
}

/* Bias-corrected Adam (Kingma & Ba 2015, Alg. 1; spec §3.4 item 4):
 * m <- b1 m + (1-b1) g; v <- b2 v + (1-b2) g^2;
 * theta <- theta - lr (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps),
 * evaluated as theta - a m / (sqrt(v) + e) with a = lr sqrt(1-b2^t)/(1-b1^t)
 * and e = eps sqrt(1-b2^t) (the same value up to rounding; one square root
 * and one division per parameter instead of one and three). This is NOT
 * TF1's form, which adds eps to sqrt(v) unscaled (spec §3.4). */
void dpdo__dqn_adam(const struct dpdo_policy *p, double *theta, double *m, double *v,
                    const double *g, int64_t t)
{
    const int64_t P = p->nparam;
    const double b1 = p->beta1, b2 = p->beta2;
    const double c1 = 1.0 - pow(b1, (double)t), sc2 = sqrt(1.0 - pow(b2, (double)t));
    const double at = p->lr * sc2 / c1, et = p->eps * sc2;
    for (int64_t i = 0; i < P; i++) {
        const double gi = g[i];
        const double mi = b1 * m[i] + (1.0 - b1) * gi;
        const double vi = b2 * v[i] + (1.0 - b2) * (gi * gi);
        m[i] = mi;
        v[i] = vi;
        theta[i] -= at * mi / (sqrt(vi) + et);
    }
}

double dpdo__dqn_explore_p(const struct dpdo_policy *p, int64_t step)
{
    if (!((double)step < p->explore_steps)) return p->explore_min;
    return p->explore_start -
           (p->explore_start - p->explore_min) * ((double)step / p->explore_steps);
}

static double *entry_at(const struct dpdo_policy *p, const struct dpdo__dqn_agent *ag, int64_t i)
{
    const int64_t R = p->replay;
    int64_t phys = (ag->head + R - ag->count + i) % R;
    return ag->mem + phys * (2 * p->state_len + 3);
}

static void push(const struct dpdo_policy *p, struct dpdo__dqn_agent *ag, const double *s,
                 int32_t a, double r, const double *s2, int done)
{
    const int64_t S = p->state_len;
    double *e = ag->mem + ag->head * (2 * S + 3);
    memcpy(e, s, (size_t)S * sizeof *e);
    memcpy(e + S, s2, (size_t)S * sizeof *e);
    e[2 * S] = (double)a;
    e[2 * S + 1] = r;
    e[2 * S + 2] = done ? 1.0 : 0.0;
    ag->head = (ag->head + 1) % p->replay;
    if (ag->count < p->replay) ag->count++;
}

static int stream_failed(const dpdo__stream *st, const struct dpdo_policy *p, char *err)
{
    if (dpdo__stream_status(st) == DPDO_OK) return 0;
    dpdo__err(err, DPDO_E_CALLBACK, "policy '%s': rng callback returned %d", p->type->name,
              dpdo__stream_cb_code(st));
    return 1;
}

/* Spec §3.4: one training step on a uniform without-replacement mini-batch
 * of the memory, drawn from stream (node, round, EXPLORATION) at `block`. */
static int train(struct dpdo_policy *p, struct dpdo__dqn_agent *ag, int64_t node,
                 const struct dpdo_rng *rng, uint64_t round, uint64_t block, char *err)
{
    const int64_t S = p->state_len, B = p->batch, P = p->nparam;
    dpdo__stream st;
    dpdo__stream_open(&st, rng, (uint64_t)node, round, DPDO_PURPOSE_EXPLORATION);
    dpdo__stream_seek(&st, block);
    dpdo__stream_subset(&st, ag->count, B, p->ibuf);
    if (stream_failed(&st, p, err)) return DPDO_E_CALLBACK;
    double *X = p->xbuf, *X2 = p->xbuf + B * S;
    for (int64_t j = 0; j < B; j++) {
        const double *e = entry_at(p, ag, p->ibuf[j]);
        memcpy(X + j * S, e, (size_t)S * sizeof *X);
        memcpy(X2 + j * S, e + S, (size_t)S * sizeof *X);
        p->abuf[j] = (int32_t)e[2 * S];
    }
    /* (7): y = r if the episode terminates, else r + discount max_a' Q'(s', a') */
    forward_batch(p, ag->target, B, X2, p->hbuf, p->qbuf);
    for (int64_t j = 0; j < B; j++) {
        const double *e = entry_at(p, ag, p->ibuf[j]);
        const double r = e[2 * S + 1], q0 = p->qbuf[2 * j], q1 = p->qbuf[2 * j + 1];
        p->ybuf[j] = e[2 * S + 2] != 0.0 ? r : r + p->discount * (q1 > q0 ? q1 : q0);
    }
    dpdo__dqn_loss_grad(p, ag->theta, B, X, p->abuf, p->ybuf, p->grad, p->hbuf, p->qbuf);
    ag->trains++;
    dpdo__dqn_adam(p, ag->theta, ag->m, ag->v, p->grad, ag->trains);
    size_t bad = dpdo__first_nonfinite(ag->theta, (size_t)P);
    if (bad < (size_t)P) {
        ag->bad = 1;
        return dpdo__err(err, DPDO_E_NUMERIC,
                         "policy 'dqn', node %lld: weight %zu became %s in training step %lld "
                         "(diverged: lower \"lr\" or scale the state; reset to recover)",
                         (long long)node, bad, isnan(ag->theta[bad]) ? "NaN" : "Inf",
                         (long long)ag->trains);
    }
    if (ag->trains % p->target_period == 0)
        memcpy(ag->target, ag->theta, (size_t)P * sizeof *ag->theta);
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

static int need_rng(const struct dpdo_policy *p, int64_t node, const struct dpdo_rng *rng,
                    uint64_t round, char *err)
{
    if (!rng)
        return dpdo__err(err, DPDO_E_INVAL, "policy '%s' needs an rng (it is NULL)", p->type->name);
    return dpdo__stream_ids_check((uint64_t)node, round, DPDO_PURPOSE_EXPLORATION, err);
}

static int dqn_prepare(struct dpdo_policy *p, struct dpdo__dqn_agent *ag, int64_t node,
                       const struct dpdo_rng *rng, char *err)
{
    if (ag->bad)
        return dpdo__err(err, DPDO_E_NUMERIC,
                         "policy 'dqn', node %lld: the network diverged earlier; reset first",
                         (long long)node);
    if (!ag->init) {
        agent_init(p, ag, node, rng);
        if (!ag->init)
            return dpdo__err(err, DPDO_E_CALLBACK,
                             "policy 'dqn', node %lld: rng callback failed during "
                             "initialisation",
                             (long long)node);
    }
    return DPDO_OK;
}

/* Spec §3.6 POLICY_DQN: store the previous transition, train, act. */
static int dqn_decide(struct dpdo_policy *p, int64_t node, int64_t k, const double *state,
                      double reward, const struct dpdo_rng *rng, uint64_t round, int32_t *action,
                      char *err)
{
    struct dpdo__dqn_agent *ag = &p->agents[node];
    int rc = dqn_prepare(p, ag, node, rng, err);
    if (rc) return rc;
    if (k == 0)
        ag->has_prev = 0; /* episode start: an unfinished episode's pending step is dropped */
    if (ag->has_prev) push(p, ag, ag->prev_s, ag->prev_a, reward, state, 0);
    if (ag->count >= p->batch) {
        rc = train(p, ag, node, rng, round, DPDO__DQN_BLOCK_TRAIN, err);
        if (rc) return rc;
    }
    /* Spec §3.5: explore with probability p(j), uniformly random action;
     * else greedy on the updated online network, ties toward LOCAL. */
    dpdo__stream st;
    dpdo__stream_open(&st, rng, (uint64_t)node, round, DPDO_PURPOSE_EXPLORATION);
    const double u = dpdo__stream_uniform(&st);
    int32_t a;
    if (u < dpdo__dqn_explore_p(p, ag->steps)) {
        a = (int32_t)dpdo__stream_below(&st, 2);
    } else {
        double q[2];
        dpdo__dqn_forward(p, ag->theta, state, p->hbuf, q);
        if (!isfinite(q[0]) || !isfinite(q[1]))
            return dpdo__err(err, DPDO_E_NUMERIC,
                             "policy 'dqn', node %lld: Q-values (%g, %g) are not finite "
                             "(state too large?)",
                             (long long)node, q[0], q[1]);
        a = q[1] > q[0] ? DPDO_ACTION_GLOBAL : DPDO_ACTION_LOCAL;
    }
    if (stream_failed(&st, p, err)) return DPDO_E_CALLBACK;
    memcpy(ag->prev_s, state, (size_t)p->state_len * sizeof *state);
    ag->prev_a = a;
    ag->has_prev = 1;
    ag->steps++;
    *action = a;
    return DPDO_OK;
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
        rc = need_rng(p, node, rng, round, err);
        if (rc) return rc;
        dpdo__stream st;
        dpdo__stream_open(&st, rng, (uint64_t)node, round, DPDO_PURPOSE_EXPLORATION);
        int32_t a =
            dpdo__stream_bernoulli(&st, p->p_global) ? DPDO_ACTION_GLOBAL : DPDO_ACTION_LOCAL;
        if (stream_failed(&st, p, err)) return DPDO_E_CALLBACK;
        *action = a;
        return DPDO_OK;
    }
    case DPDO__POLICY_DQN:
        rc = need_rng(p, node, rng, round, err);
        if (rc) return rc;
        return dqn_decide(p, node, k, state, reward, rng, round, action, err);
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
    struct dpdo__dqn_agent *ag = &p->agents[node];
    if (!ag->has_prev) return DPDO_OK;
    const int64_t after = ag->count < p->replay ? ag->count + 1 : p->replay;
    const int trains = p->finish_train && after >= p->batch;
    if (trains) {
        rc = need_rng(p, node, rng, round, err);
        if (rc) return rc;
    }
    if (ag->bad)
        return dpdo__err(err, DPDO_E_NUMERIC,
                         "policy 'dqn', node %lld: the network diverged earlier; reset first",
                         (long long)node);
    /* Spec §3.6 FINISH_DQN: (s_last, a_last, r, s_last, done = 1). */
    push(p, ag, ag->prev_s, ag->prev_a, reward, ag->prev_s, 1);
    ag->has_prev = 0;
    if (trains) return train(p, ag, node, rng, round, DPDO__DQN_BLOCK_FINISH, err);
    return DPDO_OK;
}

void dpdo__policy_reset(struct dpdo_policy *p, const struct dpdo_rng *rng)
{
    p->pending_cb = 0;
    if (p->kind == DPDO__POLICY_USER) {
        if (HAS(p, reset)) p->pending_cb = p->type->reset(p->user);
        return;
    }
    if (p->kind != DPDO__POLICY_DQN) return;
    for (int64_t i = 0; i < p->n_nodes; i++) {
        agent_clear(p, &p->agents[i]);
        if (rng) agent_init(p, &p->agents[i], i, rng);
    }
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

/* ---- test access ------------------------------------------------------------- */

int64_t dpdo__dqn_nparams(const struct dpdo_policy *p)
{
    return p && p->kind == DPDO__POLICY_DQN ? p->nparam : 0;
}

struct dpdo__dqn_agent *dpdo__dqn_agent(struct dpdo_policy *p, int64_t node)
{
    if (!p || p->kind != DPDO__POLICY_DQN || node < 0 || node >= p->n_nodes) return NULL;
    return &p->agents[node];
}

double *dpdo__dqn_params(struct dpdo_policy *p, int64_t node, int which)
{
    struct dpdo__dqn_agent *ag = dpdo__dqn_agent(p, node);
    if (!ag) return NULL;
    switch (which) {
    case DPDO__DQN_ONLINE:
        return ag->theta;
    case DPDO__DQN_TARGET:
        return ag->target;
    case DPDO__DQN_ADAM_M:
        return ag->m;
    case DPDO__DQN_ADAM_V:
        return ag->v;
    default:
        return NULL;
    }
}

const double *dpdo__dqn_replay_entry(const struct dpdo_policy *p, int64_t node, int64_t i)
{
    if (!p || p->kind != DPDO__POLICY_DQN || node < 0 || node >= p->n_nodes) return NULL;
    const struct dpdo__dqn_agent *ag = &p->agents[node];
    if (i < 0 || i >= ag->count) return NULL;
    return entry_at(p, ag, i);
}
