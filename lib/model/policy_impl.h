/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal layout of Local/Global policies and the entry points the engine
 * calls every node step (DP-WOR-SGD; docs/policy.md). policy.c holds the
 * generic handle and the fixed built-ins, policy_dqn.c the deep-Q controller.
 * Never installed. */
#ifndef DPDO_POLICY_IMPL_H
#define DPDO_POLICY_IMPL_H

#include "../core/core_impl.h"
#include "../rng/rng_impl.h"
#include "dpdo/policy.h"
#include <stddef.h>
#include <stdint.h>

struct dpdo_rng;

enum {
    DPDO__POLICY_USER = -1,
    DPDO__POLICY_DQN = 0,
    DPDO__POLICY_ALWAYS_GLOBAL,
    DPDO__POLICY_ALWAYS_LOCAL,
    DPDO__POLICY_RANDOM,
    DPDO__POLICY_PERIODIC,
    DPDO__POLICY_NBUILTIN
};

/* Stream layout of one decision (stream (node, round, EXPLORATION)): the
 * exploration draws start at block 0; the replay mini-batch of a training
 * step inside decide starts at block DPDO__DQN_BLOCK_TRAIN, the one inside
 * finish at DPDO__DQN_BLOCK_FINISH. */
#define DPDO__DQN_BLOCK_TRAIN 16
#define DPDO__DQN_BLOCK_FINISH 32

/* One DQN agent (one node). Arrays point into the policy's arena. */
struct dpdo__dqn_agent {
    double *theta;  /* online parameters [W1 (H x S, column-major: entry (i, c) at c H + i) |
                     * b1 (H) | W2 (2 x H, row-major) | b2 (2)] */
    double *target; /* target network, same layout */
    double *m, *v;  /* Adam moments */
    double *mem;    /* replay ring: R entries of E = 2S + 3 doubles [s | s' | a | r | done] */
    double *prev_s; /* state of the pending decision (S) */
    int64_t head;   /* next ring slot to write */
    int64_t count;  /* transitions held (<= R) */
    int64_t steps;  /* decisions since reset (exploration schedule) */
    int64_t trains; /* training steps since reset (Adam t, target sync) */
    int32_t prev_a; /* action of the pending decision */
    int32_t has_prev;
    int32_t init; /* weights initialised */
    int32_t bad;  /* non-finite weights seen: decisions fail until reset */
};

struct dpdo_policy {
    uint32_t magic; /* DPDO__MAGIC_* while alive, 0 after destroy (core_impl.h) */
    const dpdo_policy_type *type;
    int kind;     /* DPDO__POLICY_* */
    void *user;   /* user types: the caller's pointer; built-ins: this handle */
    size_t tsize; /* the type's struct_size */
    int64_t n_nodes, state_len;
    /* parameters */
    double p_global;
    int64_t period;
    int64_t hidden, replay, batch, target_period;
    double lr, discount, explore_start, explore_min, explore_steps;
    double beta1, beta2, eps;
    int32_t finish_train;
    int pending_cb; /* non-zero: a user reset callback failed in dpdo__policy_reset */
    /* dqn storage, allocated at create and at a structural set */
    int64_t nparam;                 /* P = H S + H + 2 H + 2 */
    struct dpdo__dqn_agent *agents; /* n_nodes */
    double *arena;                  /* every agent's arrays */
    double *grad;                   /* P: training gradient (shared scratch) */
    double *hbuf;                   /* batch x H: hidden activations of the batch */
    double *ybuf;                   /* batch: targets */
    int32_t *abuf;                  /* batch: actions */
    double *xbuf;                   /* 2 x batch x S: the batch's states, next states */
    double *qbuf;                   /* batch x 2: Q-values */
    int64_t *ibuf;                  /* batch: replay indices */
    int64_t borrowers;              /* algorithms borrowing it (core_impl.h, borrowed handles) */
    int doomed;                     /* destroy requested while borrowed */
    char errmsg[DPDO__ERRMSG_LEN];
};
void dpdo__policy_retain(struct dpdo_policy *p);
void dpdo__policy_release(struct dpdo_policy *p);

/* The engine's per-step entries: like the public calls without the O(len)
 * argument checks that the engine guarantees (state has state_len finite
 * entries); the O(1) checks (node range, k >= 0, finite reward at k > 0,
 * rng present when needed, round < 2^48) still run. Allocate nothing.
 * Message into err (DPDO__ERRMSG_LEN bytes, may be NULL). */
int dpdo__policy_decide(struct dpdo_policy *p, int64_t node, int64_t k, const double *state,
                        double reward, const struct dpdo_rng *rng, uint64_t round, int32_t *action,
                        char *err);
int dpdo__policy_finish(struct dpdo_policy *p, int64_t node, double reward,
                        const struct dpdo_rng *rng, uint64_t round, char *err);
/* 1 when decide/finish read the state and the rewards (the DQN and user policies), 0 for the
 * fixed built-ins (always-global, always-local, periodic, random), whose choices depend on k
 * and the exploration stream only: DP-WOR-SGD then skips the loss evaluations that would only
 * feed them, and hands them a zero reward. */
int dpdo__policy_reads_state(const struct dpdo_policy *p);
/* Back to the initial state (see dpdo_policy_reset). Cannot fail: a failing
 * user reset callback is reported by the next decide/finish (E_CALLBACK). */
void dpdo__policy_reset(struct dpdo_policy *p, const struct dpdo_rng *rng);

/* The checkpoint state (dpdo_policy_type.state): 1 when the policy can be saved (a built-in,
 * or a user type with a state hook); describe runs the hook (nothing for a policy without
 * state), a failing user hook gives DPDO_E_CALLBACK with its message in err. */
int dpdo__policy_can_save(const struct dpdo_policy *p);
int dpdo__policy_describe(struct dpdo_policy *p, const dpdo_state_io *io, char *err);

/* Shared by the policies that draw: the rng is present and the stream ids are valid. */
static inline int dpdo__policy_need_rng(const struct dpdo_policy *p, int64_t node,
                                        const struct dpdo_rng *rng, uint64_t round, char *err)
{
    if (!rng)
        return dpdo__err(err, DPDO_E_INVAL, "policy '%s' needs an rng (it is NULL)", p->type->name);
    return dpdo__stream_ids_check((uint64_t)node, round, DPDO_PURPOSE_EXPLORATION, err);
}
/* 1 (message in err) when the stream's rng callback failed */
static inline int dpdo__policy_stream_failed(const dpdo__stream *st, const struct dpdo_policy *p,
                                             char *err)
{
    if (dpdo__stream_status(st) == DPDO_OK) return 0;
    dpdo__err(err, DPDO_E_CALLBACK, "policy '%s': rng callback returned %d", p->type->name,
              dpdo__stream_cb_code(st));
    return 1;
}

/* ---- the DQN (policy_dqn.c) ---------------------------------------------- */
/* A fresh (zeroed) store for (H, R, B) replacing the current one: DPDO_E_NOMEM leaves it. */
int dpdo__dqn_store_new(struct dpdo_policy *p, int64_t H, int64_t R, int64_t B);
void dpdo__dqn_store_free(struct dpdo_policy *p);
/* decide / finish / reset of the "dqn" kind, after the generic checks (policy.c) */
int dpdo__dqn_decide(struct dpdo_policy *p, int64_t node, int64_t k, const double *state,
                     double reward, const struct dpdo_rng *rng, uint64_t round, int32_t *action,
                     char *err);
int dpdo__dqn_finish(struct dpdo_policy *p, int64_t node, double reward, const struct dpdo_rng *rng,
                     uint64_t round, char *err);
void dpdo__dqn_reset(struct dpdo_policy *p, const struct dpdo_rng *rng);
/* the "dqn" type's state hook (user = the handle) */
int dpdo__dqn_state(void *user, const dpdo_state_io *io);

/* ---- DQN internals, exposed for the tests ------------------------------- */
enum { DPDO__DQN_ONLINE = 0, DPDO__DQN_TARGET, DPDO__DQN_ADAM_M, DPDO__DQN_ADAM_V };
/* Parameter count P of one network (0 if not dqn). */
int64_t dpdo__dqn_nparams(const struct dpdo_policy *p);
/* Node's parameter array `which` (DPDO__DQN_*), P doubles; NULL if not dqn. */
double *dpdo__dqn_params(struct dpdo_policy *p, int64_t node, int which);
/* Agent record of `node` (NULL if not dqn). */
struct dpdo__dqn_agent *dpdo__dqn_agent(struct dpdo_policy *p, int64_t node);
/* Replay entry i (0 = oldest) of node, E = 2S+3 doubles [s | s' | a | r | done]. */
const double *dpdo__dqn_replay_entry(const struct dpdo_policy *p, int64_t node, int64_t i);
/* The exploration probability after `step` decisions. */
double dpdo__dqn_explore_p(const struct dpdo_policy *p, int64_t step);
/* q[2] = Q(s; theta); h (H doubles) receives the hidden layer. */
void dpdo__dqn_forward(const struct dpdo_policy *p, const double *theta, const double *s, double *h,
                       double *q);
/* Squared TD loss (1/B) sum_j (y_j - Q(s_j; theta)[a_j])^2 and its gradient
 * grad[P] (docs/policy.md, "Training step"); X[B x S] the states row by row; scratch
 * hbuf[B x H] and q[2 B]. */
double dpdo__dqn_loss_grad(const struct dpdo_policy *p, const double *theta, int64_t B,
                           const double *X, const int32_t *a, const double *y, double *grad,
                           double *hbuf, double *q);
/* One bias-corrected Adam step number t (1-based) on theta with gradient g. */
void dpdo__dqn_adam(const struct dpdo_policy *p, double *theta, double *m, double *v,
                    const double *g, int64_t t);

#endif /* DPDO_POLICY_IMPL_H */
