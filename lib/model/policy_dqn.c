/* SPDX-License-Identifier: BSD-3-Clause */
/* The deep-Q controller of DP-WOR-SGD's Algorithm 2 (the built-in policy "dqn", docs/policy.md):
 * per node an online and a target network (S -> H -> 2, identity activations), a FIFO replay
 * memory, the squared TD loss with a hand-written backprop, bias-corrected Adam, target sync
 * every C training steps and linearly annealed epsilon-greedy exploration. Everything is
 * allocated at create (and at a structural set); decisions allocate nothing. Its checkpoint
 * state is described by dpdo__dqn_state, the type's state hook.
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
#include <stdio.h>
#include <string.h>

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

/* Xavier (Glorot) uniform, the TF1 xavier_initializer default (docs/policy.md, "Network"):
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

/* docs/policy.md, "Training step", item 3: l = (1/B) sum_j (y_j - Q_j[a_j])^2;
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

/* Bias-corrected Adam (Kingma & Ba 2015, Alg. 1; docs/policy.md, "Training step"):
 * m <- b1 m + (1-b1) g; v <- b2 v + (1-b2) g^2;
 * theta <- theta - lr (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps),
 * evaluated as theta - a m / (sqrt(v) + e) with a = lr sqrt(1-b2^t)/(1-b1^t)
 * and e = eps sqrt(1-b2^t) (the same value up to rounding; one square root
 * and one division per parameter instead of one and three). This is NOT
 * TF1's form, which adds eps to sqrt(v) unscaled (docs/policy.md, "Training step"). */
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

/* docs/policy.md, "Training step": one training step on a uniform without-replacement mini-batch
 * of the memory, drawn from stream (node, round, EXPLORATION) at `block`. */
static int train(struct dpdo_policy *p, struct dpdo__dqn_agent *ag, int64_t node,
                 const struct dpdo_rng *rng, uint64_t round, uint64_t block, char *err)
{
    const int64_t S = p->state_len, B = p->batch, P = p->nparam;
    dpdo__stream st;
    dpdo__stream_open(&st, rng, (uint64_t)node, round, DPDO_PURPOSE_EXPLORATION);
    dpdo__stream_seek(&st, block);
    dpdo__stream_subset(&st, ag->count, B, p->ibuf);
    if (dpdo__policy_stream_failed(&st, p, err)) return DPDO_E_CALLBACK;
    double *X = p->xbuf, *X2 = p->xbuf + B * S;
    for (int64_t j = 0; j < B; j++) {
        const double *e = entry_at(p, ag, p->ibuf[j]);
        memcpy(X + j * S, e, (size_t)S * sizeof *X);
        memcpy(X2 + j * S, e + S, (size_t)S * sizeof *X);
        /* an action is stored as 0.0 or 1.0; read back as a test, not a cast, so that a replay
         * ring from a forged checkpoint (any double there) can never index outside q or W2 */
        p->abuf[j] = e[2 * S] != 0.0;
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

/* The DP-WOR-SGD paper, Alg. 2 (docs/policy.md, "Per-step order"): store the previous transition,
 * train, act. */
int dpdo__dqn_decide(struct dpdo_policy *p, int64_t node, int64_t k, const double *state,
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
    /* docs/policy.md, "Exploration": explore with probability p(j), uniformly random action;
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
    if (dpdo__policy_stream_failed(&st, p, err)) return DPDO_E_CALLBACK;
    memcpy(ag->prev_s, state, (size_t)p->state_len * sizeof *state);
    ag->prev_a = a;
    ag->has_prev = 1;
    ag->steps++;
    *action = a;
    return DPDO_OK;
}

/* Spec FINISH_DQN: the terminal transition of the node's episode, and a training step. */
int dpdo__dqn_finish(struct dpdo_policy *p, int64_t node, double reward, const struct dpdo_rng *rng,
                     uint64_t round, char *err)
{
    int rc;
    struct dpdo__dqn_agent *ag = &p->agents[node];
    if (!ag->has_prev) return DPDO_OK;
    const int64_t after = ag->count < p->replay ? ag->count + 1 : p->replay;
    const int trains = p->finish_train && after >= p->batch;
    if (trains) {
        rc = dpdo__policy_need_rng(p, node, rng, round, err);
        if (rc) return rc;
    }
    if (ag->bad)
        return dpdo__err(err, DPDO_E_NUMERIC,
                         "policy 'dqn', node %lld: the network diverged earlier; reset first",
                         (long long)node);
    /* docs/policy.md, "Per-step order", the episode's end: (s_last, a_last, r, s_last, done = 1).
     */
    push(p, ag, ag->prev_s, ag->prev_a, reward, ag->prev_s, 1);
    ag->has_prev = 0;
    if (trains) return train(p, ag, node, rng, round, DPDO__DQN_BLOCK_FINISH, err);
    return DPDO_OK;
}

void dpdo__dqn_reset(struct dpdo_policy *p, const struct dpdo_rng *rng)
{
    for (int64_t i = 0; i < p->n_nodes; i++) {
        agent_clear(p, &p->agents[i]);
        if (rng) agent_init(p, &p->agents[i], i, rng);
    }
}

int dpdo__dqn_store_new(struct dpdo_policy *p, int64_t H, int64_t R, int64_t B)
{
    struct dqn_store s, old;
    if (store_alloc(&s, p->n_nodes, p->state_len, H, R, B) != DPDO_OK) return DPDO_E_NOMEM;
    store_get(p, &old);
    store_free(&old);
    store_put(p, &s);
    return DPDO_OK;
}

void dpdo__dqn_store_free(struct dpdo_policy *p)
{
    struct dqn_store s;
    store_get(p, &s);
    store_free(&s);
    store_put(p, &(struct dqn_store){0});
}

/* The checkpoint state (dpdo_policy_type.state): the agents' arena (weights, target network,
 * Adam moments, replay ring, pending decision) and each agent's counters and flags. */
int dpdo__dqn_state(void *user, const dpdo_state_io *io)
{
    struct dpdo_policy *p = user;
    if (!p || p->kind != DPDO__POLICY_DQN || !p->agents) return 0;
    int64_t S = p->state_len, R = p->replay, P = p->nparam;
    int64_t per = 4 * P + R * (2 * S + 3) + S;
    io->f64(io->ctx, "dqn arena", p->arena, per * p->n_nodes);
    for (int64_t i = 0; i < p->n_nodes; i++) {
        struct dpdo__dqn_agent *ag = &p->agents[i];
        io->i64(io->ctx, "dqn head", &ag->head, 1, 0, R > 0 ? R - 1 : 0);
        io->i64(io->ctx, "dqn count", &ag->count, 1, 0, R);
        io->i64(io->ctx, "dqn steps", &ag->steps, 1, 0, INT64_MAX);
        io->i64(io->ctx, "dqn trains", &ag->trains, 1, 0, INT64_MAX);
        int32_t f[4] = {ag->prev_a, ag->has_prev, ag->init, ag->bad};
        int failed = io->i32(io->ctx, "dqn flags", f, 4);
        if (io->mode == DPDO_STATE_CHECK && !failed && ((uint32_t)f[0] > 1 || (uint32_t)f[1] > 1)) {
            char msg[DPDO__ERRMSG_LEN];
            snprintf(msg, sizeof msg, "item '%s': bad action or flag for agent %lld (%lld)",
                     "dqn flags", (long long)i, (long long)f[0]);
            io->fail(io->ctx, msg);
        }
        if (io->mode == DPDO_STATE_LOAD)
            ag->prev_a = f[0], ag->has_prev = f[1], ag->init = f[2], ag->bad = f[3];
    }
    return 0;
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
